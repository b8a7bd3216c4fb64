/*
 * mca_base_component_show_load_errors: which plugin load failures are
 * printed. "all", "none", or a comma list of "fw" and "fw/comp" entries,
 * the whole list negated by a leading '^' ("^btl,na/ofi": everything but
 * btl and na/ofi; "^btl,^na/ofi" says the same). The value is parsed again
 * whenever it changes; a value that does not parse is reported once and
 * treated as "all", so that no failure goes unseen because of a typo.
 */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_component_repository.h"
#include "opal/mca/base/mca_base_framework_internal.h"
#include "opal/mca/base/mca_base_open.h"
#include "opal/util/opal_argv.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

typedef enum { SHOW_ALL, SHOW_NONE, SHOW_LISTED } show_mode_t;

/* The value last parsed and what it says; NULL value: not parsed yet. */
static char *parsed_value = NULL;
static show_mode_t parsed_mode = SHOW_ALL;
static bool parsed_negated = false;
static char **parsed_entries = NULL;

static void forget(void)
{
    free(parsed_value);
    parsed_value = NULL;
    opal_argv_free(parsed_entries);
    parsed_entries = NULL;
    parsed_mode = SHOW_ALL;
    parsed_negated = false;
}

/* Checks one entry: "fw" or "fw/comp", neither part empty, no '^' (it may
 * only start the list), a framework name without '_'. Returns NULL or a
 * static description of what is wrong. */
static const char *check_entry(const char *entry)
{
    if ('\0' == entry[0]) {
        return "an empty entry";
    }
    if (NULL != strchr(entry, '^')) {
        return "'^' in a list that does not start with it (it negates the whole list)";
    }
    if (0 == strcmp(entry, "all") || 0 == strcmp(entry, "none")) {
        return "\"all\" or \"none\" inside a list";
    }
    const char *slash = strchr(entry, '/');
    if (NULL != slash && (slash == entry || '\0' == slash[1] || NULL != strchr(slash + 1, '/'))) {
        return "an entry that is not framework or framework/component";
    }
    const char *underscore = strchr(entry, '_');
    if (NULL != underscore && (NULL == slash || underscore < slash)) {
        return "a framework name with '_' (framework names have none)";
    }
    return NULL;
}

/* Parses value; on error returns OPAL_ERR_BAD_VALUE and *what says why. */
static int parse(const char *value, const char **what)
{
    forget();
    parsed_value = strdup(value);
    if (NULL == parsed_value) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (0 == strcmp(value, "all")) {
        return OPAL_SUCCESS;
    }
    if (0 == strcmp(value, "none") || '\0' == value[0]) {
        parsed_mode = SHOW_NONE;
        return OPAL_SUCCESS;
    }
    parsed_negated = '^' == value[0];
    char **entries = opal_argv_split_with_empty(value + (parsed_negated ? 1 : 0), ',');
    if (NULL == entries) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (int i = 0; NULL != entries[i]; ++i) {
        /* "^a,^b" negates like "^a,b" (as the selection variables read). */
        if (parsed_negated && i > 0 && '^' == entries[i][0]) {
            memmove(entries[i], entries[i] + 1, strlen(entries[i]));
        }
        *what = check_entry(entries[i]);
        if (NULL != *what) {
            opal_argv_free(entries);
            parsed_negated = false;
            return OPAL_ERR_BAD_VALUE;
        }
    }
    parsed_entries = entries;
    parsed_mode = SHOW_LISTED;
    return OPAL_SUCCESS;
}

static bool listed(const char *framework, const char *component)
{
    size_t fwlen = strlen(framework);
    for (int i = 0; NULL != parsed_entries[i]; ++i) {
        const char *e = parsed_entries[i];
        if (0 == strcmp(e, framework)) {
            return true;
        }
        if (0 == strncmp(e, framework, fwlen) && '/' == e[fwlen] &&
            0 == strcmp(e + fwlen + 1, component)) {
            return true;
        }
    }
    return false;
}

bool mca_base_component_show_load_error(const char *framework, const char *component)
{
    const char *value =
        NULL != mca_base_component_show_load_errors ? mca_base_component_show_load_errors : "all";
    if (NULL == parsed_value || 0 != strcmp(parsed_value, value)) {
        const char *what = NULL;
        int rc = parse(value, &what);
        if (OPAL_ERR_BAD_VALUE == rc) {
            opal_output(0,
                        "mca: mca_base_component_show_load_errors=\"%s\" holds %s; expected "
                        "all, none, or a list of framework or framework/component names "
                        "optionally starting with ^ (showing all load errors)",
                        value, what);
        } else if (OPAL_SUCCESS != rc) {
            forget();
            return true;
        }
    }
    switch (parsed_mode) {
        case SHOW_NONE:
            return false;
        case SHOW_LISTED:
            return parsed_negated != listed(framework, component);
        case SHOW_ALL:
        default:
            return true;
    }
}

void mca_base_load_errors_finalize(void)
{
    forget();
}
