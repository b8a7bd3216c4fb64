/*
 * Finding a framework's components: the selection variable, the static
 * table, the plugins of the repository, and the errors a selection that
 * names the wrong components gets.
 */
#include "opal/opal_config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_component_repository.h"
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
static void selection_error(const mca_base_framework_t *framework, const char *topic,
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
                selection_error(framework, "selection-mixed", "", "", "");
                opal_argv_free(names);
                return OPAL_ERR_BAD_VALUE;
            }
            /* "^a,^b" is still an exclude list (but "^^a" names "^a"). */
            if (i > 0) {
                memmove(names[i], names[i] + 1, strlen(names[i]));
            }
        }
        if (!is_component_name(names[i])) {
            selection_error(framework, "selection-bad-name", names[i], "", "");
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

static bool is_static(const mca_base_framework_t *framework, const char *name)
{
    const mca_base_component_t *const *table = framework->framework_static_components;
    for (int i = 0; NULL != table && NULL != table[i]; ++i) {
        if (0 ==
            strncmp(table[i]->mca_component_name, name, sizeof(table[i]->mca_component_name))) {
            return true;
        }
    }
    return false;
}

static bool uses_plugins(const mca_base_framework_t *framework, mca_base_register_flag_t flags)
{
    return 0 == (flags & MCA_BASE_REGISTER_STATIC_ONLY) &&
           0 == (framework->framework_flags & MCA_BASE_FRAMEWORK_FLAG_NO_DSO);
}

static mca_base_component_list_item_t *find_item(mca_base_framework_t *framework, const char *name)
{
    mca_base_component_list_item_t *item;
    OPAL_LIST_FOREACH (item, &framework->framework_components, mca_base_component_list_item_t) {
        if (0 == strcmp(item->cli_component->mca_component_name, name)) {
            return item;
        }
    }
    return NULL;
}

/* One line per component of the framework this process knows of,
 * "  good (built in)" or "  other (plugin /path)". Caller frees. */
static char *existing_names(mca_base_framework_t *framework, mca_base_register_flag_t flags)
{
    char **names = NULL;
    char *entry = NULL;
    const mca_base_component_t *const *table = framework->framework_static_components;
    for (int i = 0; NULL != table && NULL != table[i]; ++i) {
        if (asprintf(&entry, "  %.*s (built in)", (int) sizeof(table[i]->mca_component_name),
                     table[i]->mca_component_name) >= 0) {
            (void) opal_argv_append_nosize(&names, entry);
            free(entry);
        }
    }
    const opal_list_t *plugins =
        uses_plugins(framework, flags)
            ? mca_base_component_repository_plugins(framework->framework_name)
            : NULL;
    if (NULL != plugins) {
        mca_base_component_repository_item_t *plugin;
        OPAL_LIST_FOREACH (plugin, plugins, mca_base_component_repository_item_t) {
            if (!is_static(framework, plugin->ri_component) &&
                asprintf(&entry, "  %s (plugin %s)", plugin->ri_component, plugin->ri_path) >= 0) {
                (void) opal_argv_append_nosize(&names, entry);
                free(entry);
            }
        }
    }
    char *joined = NULL != names ? opal_argv_join(names, '\n') : strdup("  none");
    opal_argv_free(names);
    return joined;
}

/* One line per load or version failure of the framework, "  name (file):
 * why". Caller frees. */
static char *failed_names(mca_base_framework_t *framework)
{
    char **lines = NULL;
    char *line = NULL;
    mca_base_component_failure_t *failure;
    OPAL_LIST_FOREACH (failure, &framework->framework_failures, mca_base_component_failure_t) {
        if (MCA_BASE_COMPONENT_STAGE_LOAD != failure->cf_stage &&
            MCA_BASE_COMPONENT_STAGE_VERSION != failure->cf_stage) {
            continue;
        }
        if (asprintf(&line, "  %s (%s): %s", failure->cf_component,
                     NULL != failure->cf_path ? failure->cf_path : "built in",
                     failure->cf_reason) >= 0) {
            (void) opal_argv_append_nosize(&lines, line);
            free(line);
        }
    }
    char *joined = NULL != lines ? opal_argv_join(lines, '\n') : strdup("  none");
    opal_argv_free(lines);
    return joined;
}

/* Tries every plugin of the framework that was not loaded, so that the
 * error message can say which of them fail and why; each is released at
 * once. */
static void probe_unloaded_plugins(mca_base_framework_t *framework)
{
    const opal_list_t *plugins = mca_base_component_repository_plugins(framework->framework_name);
    if (NULL == plugins) {
        return;
    }
    mca_base_component_repository_item_t *plugin;
    OPAL_LIST_FOREACH (plugin, plugins, mca_base_component_repository_item_t) {
        if (is_static(framework, plugin->ri_component) ||
            NULL != find_item(framework, plugin->ri_component)) {
            continue;
        }
        const mca_base_component_t *component = NULL;
        const mca_base_component_failure_t *failure = NULL;
        int rc = mca_base_component_repository_load(plugin, framework, false, &component, &failure);
        if (OPAL_SUCCESS == rc) {
            mca_base_component_repository_release(plugin);
        } else if (NULL != failure) {
            mca_base_framework_record(framework, plugin->ri_component, plugin->ri_path,
                                      failure->cf_stage, MCA_BASE_VERBOSE_COMPONENT,
                                      failure->cf_reason);
        }
    }
}

/* Names of the selection that are not usable components: for an include
 * list, those not found (or that failed to load); for an exclude list,
 * those that name nothing. NULL when all are fine. Caller frees. */
static char *bad_names(mca_base_framework_t *framework, const mca_base_selection_t *selection,
                       mca_base_register_flag_t flags)
{
    char **bad = NULL;
    for (int i = 0; NULL != selection->sel_names && NULL != selection->sel_names[i]; ++i) {
        const char *name = selection->sel_names[i];
        bool ok;
        if (selection->sel_exclude) {
            ok = is_static(framework, name) ||
                 (uses_plugins(framework, flags) &&
                  NULL != mca_base_component_repository_find(framework->framework_name, name));
        } else {
            ok = NULL != find_item(framework, name);
        }
        if (!ok) {
            (void) opal_argv_append_unique_nosize(&bad, name);
        }
    }
    char *joined = NULL != bad ? opal_argv_join(bad, ',') : NULL;
    opal_argv_free(bad);
    return joined;
}

/* Reports the names of the selection that are not usable components, with
 * what exists and what failed to load; OPAL_ERR_BAD_VALUE when there are
 * any. */
static int check_names(mca_base_framework_t *framework, const mca_base_selection_t *selection,
                       mca_base_register_flag_t flags)
{
    char *bad = bad_names(framework, selection, flags);
    if (NULL == bad) {
        return OPAL_SUCCESS;
    }
    if (!selection->sel_exclude && uses_plugins(framework, flags)) {
        probe_unloaded_plugins(framework);
    }
    char *exist = existing_names(framework, flags);
    char *failed = failed_names(framework);
    selection_error(framework,
                    selection->sel_exclude ? "selection-unknown-excluded" : "selection-unknown",
                    bad, NULL != exist ? exist : "", NULL != failed ? failed : "");
    free(failed);
    free(exist);
    free(bad);
    return OPAL_ERR_BAD_VALUE;
}

static int add_item(mca_base_framework_t *framework, const mca_base_component_t *component,
                    mca_base_component_repository_item_t *plugin)
{
    mca_base_component_list_item_t *item = OBJ_NEW(mca_base_component_list_item_t);
    if (NULL == item) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    item->cli_component = component;
    if (NULL != plugin) {
        item->cli_path = strdup(plugin->ri_path);
        if (NULL == item->cli_path) {
            OBJ_RELEASE(item);
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        /* The item outlives a rescan of the path while we hold it. */
        OBJ_RETAIN(plugin);
        item->cli_plugin = plugin;
    }
    opal_list_append(&framework->framework_components, &item->super);
    return OPAL_SUCCESS;
}

static void exclude(mca_base_framework_t *framework, const mca_base_selection_t *selection,
                    const char *name, const char *path)
{
    char *reason = mca_base_selection_reason(framework, selection);
    mca_base_framework_record(framework, name, path, MCA_BASE_COMPONENT_STAGE_EXCLUDED,
                              MCA_BASE_VERBOSE_COMPONENT, reason);
    free(reason);
}

static int find_static(mca_base_framework_t *framework, const mca_base_selection_t *selection)
{
    const mca_base_component_t *const *table = framework->framework_static_components;
    for (int i = 0; NULL != table && NULL != table[i]; ++i) {
        const mca_base_component_t *c = table[i];
        char name[sizeof(c->mca_component_name) + 1];
        snprintf(name, sizeof(name), "%.*s", (int) sizeof(c->mca_component_name),
                 c->mca_component_name);
        if (NULL != find_item(framework, name)) {
            continue;
        }
        if (!mca_base_selection_wants(selection, name)) {
            exclude(framework, selection, name, NULL);
            continue;
        }
        char *reason = NULL;
        int rc = mca_base_component_check_version(c, framework, NULL, &reason);
        if (OPAL_ERR_VERSION_MISMATCH == rc) {
            /* Printed like a plugin's load failure. */
            if (mca_base_component_show_load_error(framework->framework_name, name)) {
                opal_output(0, "mca: cannot use built-in component %s/%s: %s",
                            framework->framework_name, name, reason);
            }
            mca_base_framework_record(framework, name, NULL, MCA_BASE_COMPONENT_STAGE_VERSION,
                                      MCA_BASE_VERBOSE_COMPONENT, reason);
            free(reason);
            continue;
        }
        if (OPAL_SUCCESS == rc) {
            rc = add_item(framework, c, NULL);
        }
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    return OPAL_SUCCESS;
}

static int find_plugins(mca_base_framework_t *framework, const mca_base_selection_t *selection)
{
    const opal_list_t *plugins = mca_base_component_repository_plugins(framework->framework_name);
    if (NULL == plugins) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    mca_base_component_repository_item_t *plugin;
    OPAL_LIST_FOREACH (plugin, plugins, mca_base_component_repository_item_t) {
        if (is_static(framework, plugin->ri_component)) {
            opal_output_verbose(MCA_BASE_VERBOSE_COMPONENT, framework->framework_output,
                                "ignoring plugin %s: %s is built in", plugin->ri_path,
                                plugin->ri_component);
            continue;
        }
        if (!mca_base_selection_wants(selection, plugin->ri_component)) {
            exclude(framework, selection, plugin->ri_component, plugin->ri_path);
            continue;
        }
        const mca_base_component_t *component = NULL;
        const mca_base_component_failure_t *failure = NULL;
        int rc = mca_base_component_repository_load(plugin, framework, true, &component, &failure);
        if (OPAL_SUCCESS == rc) {
            rc = add_item(framework, component, plugin);
            if (OPAL_SUCCESS != rc) {
                mca_base_component_repository_release(plugin);
                return rc;
            }
        } else if (NULL != failure) {
            /* Already printed as mca_base_component_show_load_errors says. */
            mca_base_framework_record(framework, plugin->ri_component, plugin->ri_path,
                                      failure->cf_stage, MCA_BASE_VERBOSE_COMPONENT,
                                      failure->cf_reason);
        } else if (OPAL_ERR_OUT_OF_RESOURCE == rc) {
            return rc;
        }
    }
    return OPAL_SUCCESS;
}

int mca_base_framework_find_components(mca_base_framework_t *framework,
                                       mca_base_register_flag_t flags)
{
    mca_base_selection_t selection = {.sel_names = NULL};
    mca_base_selection_t *applied = NULL;
    int rc;

    if (0 == (flags & MCA_BASE_REGISTER_ALL)) {
        rc = mca_base_selection_parse(framework, &selection);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
        applied = &selection;
        /* Excluding a name that is nowhere is a typo: refuse it before
         * anything is loaded. */
        if (selection.sel_exclude) {
            rc = check_names(framework, applied, flags);
            if (OPAL_SUCCESS != rc) {
                goto out;
            }
        }
    }
    rc = find_static(framework, applied);
    if (OPAL_SUCCESS == rc && uses_plugins(framework, flags)) {
        rc = find_plugins(framework, applied);
    }
    if (OPAL_SUCCESS == rc && NULL != applied && !applied->sel_exclude) {
        rc = check_names(framework, applied, flags);
    }
out:
    if (OPAL_SUCCESS != rc) {
        mca_base_framework_components_release(framework);
    }
    mca_base_selection_free(&selection);
    return rc;
}

int mca_base_framework_check_open_selection(mca_base_framework_t *framework,
                                            const mca_base_selection_t *selection)
{
    if (NULL == selection->sel_names || selection->sel_exclude) {
        return OPAL_SUCCESS;
    }
    /* An included name must be registered, or be known to have failed or
     * declined (its reason is in framework_failures). */
    char **bad = NULL;
    for (int i = 0; NULL != selection->sel_names[i]; ++i) {
        const char *name = selection->sel_names[i];
        bool known = NULL != find_item(framework, name);
        mca_base_component_failure_t *failure;
        OPAL_LIST_FOREACH (failure, &framework->framework_failures, mca_base_component_failure_t) {
            known = known || (0 == strcmp(failure->cf_component, name) &&
                              MCA_BASE_COMPONENT_STAGE_EXCLUDED != failure->cf_stage);
        }
        if (!known) {
            (void) opal_argv_append_unique_nosize(&bad, name);
        }
    }
    if (NULL == bad) {
        return OPAL_SUCCESS;
    }
    char *joined = opal_argv_join(bad, ',');
    char *exist = existing_names(framework, MCA_BASE_REGISTER_DEFAULT);
    char *failed = failed_names(framework);
    selection_error(framework, "selection-unknown", NULL != joined ? joined : "",
                    NULL != exist ? exist : "", NULL != failed ? failed : "");
    free(failed);
    free(exist);
    free(joined);
    opal_argv_free(bad);
    return OPAL_ERR_BAD_VALUE;
}
