/*
 * The end of a component's lifecycle: close (release what open took),
 * then deregister its variables, then unload its plugin -- in that order,
 * since the variables' storage lives in the plugin.
 */
#include "opal/opal_config.h"

#include <stdlib.h>

#include "opal/mca/base/mca_base_component_repository.h"
#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/base/mca_base_framework_internal.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

static void close_component(mca_base_framework_t *framework, mca_base_component_list_item_t *item)
{
    if (!item->cli_opened) {
        return;
    }
    mca_base_close_component_fn_t hook = item->cli_component->mca_close_component;
    if (NULL != hook) {
        int rc = hook();
        if (OPAL_SUCCESS != rc) {
            opal_output(framework->framework_output, "%s: close failed: %s",
                        item->cli_component->mca_component_name, opal_strerror(rc));
        }
    }
    item->cli_opened = false;
    item->cli_module = NULL;
    item->cli_priority = 0;
    opal_output_verbose(MCA_BASE_VERBOSE_INFO, framework->framework_output, "closed %s",
                        item->cli_component->mca_component_name);
}

/* Deregisters the component's variables and drops its plugin; item must
 * already be out of the framework's list. Releases item. */
static void unload(mca_base_framework_t *framework, mca_base_component_list_item_t *item)
{
    const mca_base_component_t *component = item->cli_component;
    close_component(framework, item);
    (void) mca_base_var_deregister_component(
        framework->framework_project, framework->framework_name, component->mca_component_name);
    /* A reason given but never taken must not outlive the plugin: another
     * one could be loaded at the same address. */
    free(mca_base_component_take_decline(component));
    if (NULL != item->cli_plugin) {
        mca_base_component_repository_release(item->cli_plugin);
        OBJ_RELEASE(item->cli_plugin);
    }
    OBJ_RELEASE(item);
}

void mca_base_framework_remove(mca_base_framework_t *framework,
                               mca_base_component_list_item_t *item,
                               mca_base_component_stage_t stage, int level, const char *reason)
{
    /* Recorded first: the name and path go with the plugin. */
    mca_base_framework_record(framework, item->cli_component->mca_component_name, item->cli_path,
                              stage, level, reason);
    opal_list_remove_item(&framework->framework_components, &item->super);
    unload(framework, item);
}

void mca_base_framework_drop_component(mca_base_framework_t *framework,
                                       mca_base_component_list_item_t *item,
                                       mca_base_component_stage_t stage, const char *reason)
{
    mca_base_framework_remove(framework, item, stage, MCA_BASE_VERBOSE_COMPONENT, reason);
}

void mca_base_framework_components_close(mca_base_framework_t *framework)
{
    /* Reverse order of opening, so that a component opened after another
     * (and perhaps using it) is closed first. */
    mca_base_component_list_item_t *item;
    OPAL_LIST_FOREACH_REV (item, &framework->framework_components, mca_base_component_list_item_t) {
        close_component(framework, item);
    }
}

void mca_base_framework_components_release(mca_base_framework_t *framework)
{
    mca_base_framework_components_close(framework);
    opal_list_item_t *li;
    while (NULL != (li = opal_list_remove_last(&framework->framework_components))) {
        unload(framework, (mca_base_component_list_item_t *) li);
    }
}
