/*
 * Finding a framework's components: the static table, the plugins of the
 * repository, and the errors a selection that names the wrong components
 * gets (the selection variable itself is parsed in mca_base_selection.c).
 */
#include "opal/opal_config.h"

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
    mca_base_selection_error(
        framework, selection->sel_exclude ? "selection-unknown-excluded" : "selection-unknown", bad,
        NULL != exist ? exist : "", NULL != failed ? failed : "");
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
    mca_base_selection_error(framework, "selection-unknown", NULL != joined ? joined : "",
                             NULL != exist ? exist : "", NULL != failed ? failed : "");
    free(failed);
    free(exist);
    free(joined);
    opal_argv_free(bad);
    return OPAL_ERR_BAD_VALUE;
}
