/*
 * The first half of a component's lifecycle: register (variables only),
 * then open. A component that cannot run here declines with
 * mca_base_component_decline() and OPAL_ERR_NOT_AVAILABLE: it is removed
 * quietly, its reason printed at <fw>_base_verbose and kept. Any other
 * error is printed and the component removed too.
 */
#include "opal/opal_config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/class/opal_list.h"
#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/base/mca_base_framework_internal.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

/* Reasons given to mca_base_component_decline() and not yet taken by the
 * base after the hook returned. Frameworks are driven from one thread. */
typedef struct {
    opal_list_item_t super;
    const mca_base_component_t *pd_component;
    char *pd_reason;
} pending_decline_t;

static void pending_construct(pending_decline_t *pd)
{
    pd->pd_component = NULL;
    pd->pd_reason = NULL;
}

static void pending_destruct(pending_decline_t *pd)
{
    free(pd->pd_reason);
}

static OBJ_CLASS_INSTANCE(pending_decline_t, opal_list_item_t, pending_construct, pending_destruct);

static opal_list_t pending_declines;
static bool pending_ready = false;

static pending_decline_t *find_pending(const mca_base_component_t *component)
{
    pending_decline_t *pd;
    OPAL_LIST_FOREACH (pd, &pending_declines, pending_decline_t) {
        if (pd->pd_component == component) {
            return pd;
        }
    }
    return NULL;
}

void mca_base_component_decline(const mca_base_component_t *component, const char *format, ...)
{
    char *reason = NULL;
    va_list ap;
    va_start(ap, format);
    int n = vasprintf(&reason, format, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    if (!pending_ready) {
        OBJ_CONSTRUCT(&pending_declines, opal_list_t);
        pending_ready = true;
    }
    /* The last reason given wins. */
    pending_decline_t *pd = find_pending(component);
    if (NULL == pd) {
        pd = OBJ_NEW(pending_decline_t);
        if (NULL == pd) {
            free(reason);
            return;
        }
        pd->pd_component = component;
        opal_list_append(&pending_declines, &pd->super);
    }
    free(pd->pd_reason);
    pd->pd_reason = reason;
}

char *mca_base_component_take_decline(const mca_base_component_t *component)
{
    if (!pending_ready) {
        return NULL;
    }
    pending_decline_t *pd = find_pending(component);
    if (NULL == pd) {
        return NULL;
    }
    char *reason = pd->pd_reason;
    pd->pd_reason = NULL;
    opal_list_remove_item(&pending_declines, &pd->super);
    OBJ_RELEASE(pd);
    return reason;
}

void mca_base_component_clear_declines(void)
{
    if (pending_ready) {
        OPAL_LIST_DESTRUCT(&pending_declines);
        pending_ready = false;
    }
}

bool mca_base_framework_hook_result(mca_base_framework_t *framework,
                                    mca_base_component_list_item_t *item,
                                    mca_base_component_stage_t stage, int rc)
{
    char *reason = mca_base_component_take_decline(item->cli_component);
    if (OPAL_SUCCESS == rc) {
        free(reason);
        return true;
    }
    int level = MCA_BASE_VERBOSE_COMPONENT;
    if (OPAL_ERR_NOT_AVAILABLE != rc) {
        free(reason);
        reason = NULL;
        if (asprintf(&reason, "%s failed: %s", mca_base_component_stage_name(stage),
                     opal_strerror(rc)) < 0) {
            reason = NULL;
        }
        level = 0;
    } else if (NULL == reason) {
        reason = strdup("declined (no reason given)");
    }
    mca_base_framework_remove(framework, item, stage, level, reason);
    free(reason);
    return false;
}

int mca_base_framework_components_register(mca_base_framework_t *framework,
                                           mca_base_register_flag_t flags)
{
    int rc = mca_base_framework_find_components(framework, flags);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    mca_base_component_list_item_t *item, *next;
    OPAL_LIST_FOREACH_SAFE (item, next, &framework->framework_components,
                            mca_base_component_list_item_t) {
        mca_base_register_component_params_fn_t hook =
            item->cli_component->mca_register_component_params;
        if (NULL != hook && mca_base_framework_hook_result(
                                framework, item, MCA_BASE_COMPONENT_STAGE_REGISTER, hook())) {
            opal_output_verbose(MCA_BASE_VERBOSE_INFO, framework->framework_output, "registered %s",
                                item->cli_component->mca_component_name);
        }
    }
    return OPAL_SUCCESS;
}

/* Removes the registered components the selection now leaves out (it may
 * have changed since register, or register took everything for
 * opal_info). */
static int apply_selection(mca_base_framework_t *framework)
{
    mca_base_selection_t selection;
    int rc = mca_base_selection_parse(framework, &selection);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = mca_base_framework_check_open_selection(framework, &selection);
    if (OPAL_SUCCESS == rc) {
        char *reason = mca_base_selection_reason(framework, &selection);
        mca_base_component_list_item_t *item, *next;
        OPAL_LIST_FOREACH_SAFE (item, next, &framework->framework_components,
                                mca_base_component_list_item_t) {
            if (!mca_base_selection_wants(&selection, item->cli_component->mca_component_name)) {
                mca_base_framework_remove(framework, item, MCA_BASE_COMPONENT_STAGE_EXCLUDED,
                                          MCA_BASE_VERBOSE_COMPONENT, reason);
            }
        }
        free(reason);
    }
    mca_base_selection_free(&selection);
    return rc;
}

int mca_base_framework_components_open(mca_base_framework_t *framework, mca_base_open_flag_t flags)
{
    if (0 == (flags & MCA_BASE_OPEN_FIND_COMPONENTS)) {
        int rc = apply_selection(framework);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    mca_base_component_list_item_t *item, *next;
    OPAL_LIST_FOREACH_SAFE (item, next, &framework->framework_components,
                            mca_base_component_list_item_t) {
        if (item->cli_opened) {
            continue;
        }
        mca_base_open_component_fn_t hook = item->cli_component->mca_open_component;
        if (NULL == hook || mca_base_framework_hook_result(framework, item,
                                                           MCA_BASE_COMPONENT_STAGE_OPEN, hook())) {
            item->cli_opened = true;
            opal_output_verbose(MCA_BASE_VERBOSE_INFO, framework->framework_output, "opened %s",
                                item->cli_component->mca_component_name);
        }
    }
    return OPAL_SUCCESS;
}
