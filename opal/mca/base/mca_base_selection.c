/*
 * A framework's selection variable ("self,sm", "^ofi"): parsing it, asking
 * whether it lets a component run, and the errors a bad value gets. Kept
 * apart from finding the components so that its fuzz target
 * (test/fuzz/fuzz_selection.c) compiles it alone.
 */
#include "opal/opal_config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_framework_internal.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/util/opal_argv.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_show_help.h"

#define HELP_FILE "help-mca-base.txt"

/* Where the selection variable's value came from, for messages:
 * "environment (OPAL_MCA_btl)", "file /etc/x.conf:3". Caller frees. */
static char *selection_source(const mca_base_framework_t *framework)
{
    char *text = NULL;
    if (OPAL_SUCCESS != mca_base_var_source_string(framework->framework_selection_var, &text)) {
        return strdup("unknown source");
    }
    return text;
}

/* Prints a help topic whose arguments are the framework name (twice), the
 * selection value, where it was set, then the extras. The text is printed
 * every time (not once per process like opal_show_help) since each
 * framework and each bad value deserves its own message. */
void mca_base_selection_error(const mca_base_framework_t *framework, const char *topic,
                              const char *extra1, const char *extra2, const char *extra3)
{
    char *source = selection_source(framework);
    const char *value =
        NULL != framework->framework_selection ? framework->framework_selection : "";
    char *text = opal_show_help_string(HELP_FILE, topic, true, framework->framework_name,
                                       framework->framework_name, value,
                                       NULL != source ? source : "", extra1, extra2, extra3);
    if (NULL != text) {
        opal_output(0, "%s", text);
    }
    free(text);
    free(source);
}

/* Drops the blanks around a name ("a, b" lists "b"). */
static void trim(char *name)
{
    size_t len = strlen(name), start = 0;
    while (start < len && isspace((unsigned char) name[start])) {
        ++start;
    }
    while (len > start && isspace((unsigned char) name[len - 1])) {
        --len;
    }
    memmove(name, name + start, len - start);
    name[len - start] = '\0';
}

/* Component names are letters, digits and '_' (they are parts of file,
 * symbol and variable names). */
static bool is_component_name(const char *name)
{
    if ('\0' == name[0]) {
        return false;
    }
    for (; '\0' != *name; ++name) {
        if (!isalnum((unsigned char) *name) && '_' != *name) {
            return false;
        }
    }
    return true;
}

int mca_base_selection_parse(mca_base_framework_t *framework, mca_base_selection_t *selection)
{
    const char *value =
        NULL != framework->framework_selection ? framework->framework_selection : "";
    selection->sel_value = value;
    selection->sel_exclude = false;
    selection->sel_names = NULL;
    if ('\0' == value[0]) {
        return OPAL_SUCCESS;
    }
    selection->sel_exclude = '^' == value[0];
    char **names = opal_argv_split_with_empty(value + (selection->sel_exclude ? 1 : 0), ',');
    if (NULL == names) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (int i = 0; NULL != names[i]; ++i) {
        trim(names[i]);
        if ('^' == names[i][0]) {
            /* "a,^b" mixes the two kinds of list. */
            if (!selection->sel_exclude) {
                mca_base_selection_error(framework, "selection-mixed", "", "", "");
                opal_argv_free(names);
                return OPAL_ERR_BAD_VALUE;
            }
            /* "^a,^b" is still an exclude list (but "^^a" names "^a"). */
            if (i > 0) {
                memmove(names[i], names[i] + 1, strlen(names[i]));
            }
        }
        if (!is_component_name(names[i])) {
            mca_base_selection_error(framework, "selection-bad-name", names[i], "", "");
            opal_argv_free(names);
            return OPAL_ERR_BAD_VALUE;
        }
    }
    selection->sel_names = names;
    return OPAL_SUCCESS;
}

void mca_base_selection_free(mca_base_selection_t *selection)
{
    opal_argv_free(selection->sel_names);
    selection->sel_names = NULL;
}

static bool listed(char **names, const char *name)
{
    for (int i = 0; NULL != names && NULL != names[i]; ++i) {
        if (0 == strcmp(names[i], name)) {
            return true;
        }
    }
    return false;
}

bool mca_base_selection_wants(const mca_base_selection_t *selection, const char *name)
{
    if (NULL == selection || NULL == selection->sel_names) {
        return true;
    }
    return selection->sel_exclude != listed(selection->sel_names, name);
}

bool mca_base_framework_names_component(mca_base_framework_t *framework, const char *name)
{
    /* Parsed quietly from the value: a bad value was reported when the
     * framework opened. */
    const char *value =
        NULL != framework->framework_selection ? framework->framework_selection : "";
    if ('\0' == value[0] || '^' == value[0]) {
        return false;
    }
    char **names = opal_argv_split(value, ',');
    bool named = false;
    for (int i = 0; NULL != names && NULL != names[i]; ++i) {
        trim(names[i]);
        named = named || 0 == strcmp(names[i], name);
    }
    opal_argv_free(names);
    return named;
}

char *mca_base_selection_reason(const mca_base_framework_t *framework,
                                const mca_base_selection_t *selection)
{
    char *reason = NULL;
    if (asprintf(&reason, "%s by %s=%s", selection->sel_exclude ? "excluded" : "not included",
                 framework->framework_name, selection->sel_value) < 0) {
        return NULL;
    }
    return reason;
}
