/*
 * Selection: query every opened component; a single-select framework keeps
 * the highest priority (ties go to the name that sorts first), a
 * multi-select one keeps every component that returned a module. Whatever
 * is not kept is closed, unloaded and recorded with why.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/base/mca_base_framework_internal.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

/* Orders by priority, highest first, then by name. */
static int compare(const mca_base_component_list_item_t *a, const mca_base_component_list_item_t *b)
{
    if (a->cli_priority != b->cli_priority) {
        return a->cli_priority > b->cli_priority ? -1 : 1;
    }
    return strcmp(a->cli_component->mca_component_name, b->cli_component->mca_component_name);
}

static int compare_items(opal_list_item_t **a, opal_list_item_t **b)
{
    return compare((const mca_base_component_list_item_t *) *a,
                   (const mca_base_component_list_item_t *) *b);
}

/* Queries every opened component; those that decline, fail or return no
 * module are removed. The others keep their module and priority. */
static void query_all(mca_base_framework_t *framework)
{
    mca_base_component_list_item_t *item, *next;
    OPAL_LIST_FOREACH_SAFE (item, next, &framework->framework_components,
                            mca_base_component_list_item_t) {
        mca_base_query_component_fn_t query = item->cli_component->mca_query_component;
        if (!item->cli_opened || NULL == query) {
            mca_base_framework_remove(framework, item, MCA_BASE_COMPONENT_STAGE_QUERY,
                                      MCA_BASE_VERBOSE_COMPONENT,
                                      item->cli_opened ? "has no query function" : "not open");
            continue;
        }
        mca_base_module_t *module = NULL;
        int priority = 0;
        int rc = query(&module, &priority);
        if (!mca_base_framework_hook_result(framework, item, MCA_BASE_COMPONENT_STAGE_QUERY, rc)) {
            continue;
        }
        if (NULL == module) {
            mca_base_framework_remove(framework, item, MCA_BASE_COMPONENT_STAGE_QUERY,
                                      MCA_BASE_VERBOSE_COMPONENT, "query returned no module");
            continue;
        }
        item->cli_module = module;
        item->cli_priority = priority;
        opal_output_verbose(MCA_BASE_VERBOSE_INFO, framework->framework_output, "%s: priority %d",
                            item->cli_component->mca_component_name, priority);
    }
}

int mca_base_select(mca_base_framework_t *framework, mca_base_module_t **best_module,
                    const mca_base_component_t **best_component, int *best_priority)
{
    if (!mca_base_framework_is_open(framework)) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    query_all(framework);

    mca_base_component_list_item_t *best = NULL, *item, *next;
    OPAL_LIST_FOREACH (item, &framework->framework_components, mca_base_component_list_item_t) {
        if (NULL == best || compare(item, best) < 0) {
            best = item;
        }
    }
    OPAL_LIST_FOREACH_SAFE (item, next, &framework->framework_components,
                            mca_base_component_list_item_t) {
        if (item == best) {
            continue;
        }
        char *reason = NULL;
        if (asprintf(&reason, "priority %d %s %d of %s", item->cli_priority,
                     item->cli_priority < best->cli_priority ? "<" : "=", best->cli_priority,
                     best->cli_component->mca_component_name) < 0) {
            reason = NULL;
        }
        mca_base_framework_remove(framework, item, MCA_BASE_COMPONENT_STAGE_PRIORITY,
                                  MCA_BASE_VERBOSE_COMPONENT, reason);
        free(reason);
    }
    if (NULL == best) {
        opal_output_verbose(MCA_BASE_VERBOSE_COMPONENT, framework->framework_output,
                            "no component selected");
        return OPAL_ERR_NOT_FOUND;
    }
    opal_output_verbose(MCA_BASE_VERBOSE_COMPONENT, framework->framework_output,
                        "selected %s (priority %d)", best->cli_component->mca_component_name,
                        best->cli_priority);
    if (NULL != best_module) {
        *best_module = best->cli_module;
    }
    if (NULL != best_component) {
        *best_component = best->cli_component;
    }
    if (NULL != best_priority) {
        *best_priority = best->cli_priority;
    }
    return OPAL_SUCCESS;
}

int mca_base_select_all(mca_base_framework_t *framework, int *selected)
{
    if (NULL != selected) {
        *selected = 0;
    }
    if (!mca_base_framework_is_open(framework)) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    query_all(framework);
    opal_list_sort(&framework->framework_components, compare_items);
    size_t count = opal_list_get_size(&framework->framework_components);
    mca_base_component_list_item_t *item;
    OPAL_LIST_FOREACH (item, &framework->framework_components, mca_base_component_list_item_t) {
        opal_output_verbose(MCA_BASE_VERBOSE_COMPONENT, framework->framework_output,
                            "selected %s (priority %d)", item->cli_component->mca_component_name,
                            item->cli_priority);
    }
    if (NULL != selected) {
        *selected = (int) count;
    }
    return 0 == count ? OPAL_ERR_NOT_FOUND : OPAL_SUCCESS;
}

int mca_base_framework_select(mca_base_framework_t *framework, int *selected)
{
    if (NULL != selected) {
        *selected = 0;
    }
    if (!mca_base_framework_is_open(framework)) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    if (NULL != framework->framework_select) {
        int kept = 0;
        int rc = framework->framework_select(&kept);
        if (NULL != selected) {
            *selected = kept;
        }
        return rc;
    }
    if (0 != (framework->framework_flags & MCA_BASE_FRAMEWORK_FLAG_MULTI_SELECT)) {
        return mca_base_select_all(framework, selected);
    }
    int rc = mca_base_select(framework, NULL, NULL, NULL);
    if (NULL != selected && OPAL_SUCCESS == rc) {
        *selected = 1;
    }
    return rc;
}
