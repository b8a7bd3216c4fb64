/*
 * Frameworks: register -> open -> (select) -> close, reference counted.
 * This file holds the framework's own state (its variables, its output
 * stream, the counts); mca_base_components_*.c drive its components.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/base/mca_base_framework_internal.h"
#include "opal/mca/base/mca_base_log.h"
#include "opal/mca/base/mca_base_open.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

/* The frameworks of project opal, as configure found them. */
#include "opal/mca/base/opal_frameworks.h"

static void list_item_construct(mca_base_component_list_item_t *item)
{
    item->cli_component = NULL;
    item->cli_path = NULL;
    item->cli_plugin = NULL;
    item->cli_opened = false;
    item->cli_module = NULL;
    item->cli_priority = 0;
}

static void list_item_destruct(mca_base_component_list_item_t *item)
{
    free(item->cli_path);
}

OBJ_CLASS_INSTANCE(mca_base_component_list_item_t, opal_list_item_t, list_item_construct,
                   list_item_destruct);

static void failure_construct(mca_base_component_failure_t *failure)
{
    failure->cf_framework = NULL;
    failure->cf_component = NULL;
    failure->cf_path = NULL;
    failure->cf_stage = MCA_BASE_COMPONENT_STAGE_LOAD;
    failure->cf_reason = NULL;
}

static void failure_destruct(mca_base_component_failure_t *failure)
{
    free(failure->cf_framework);
    free(failure->cf_component);
    free(failure->cf_path);
    free(failure->cf_reason);
}

OBJ_CLASS_INSTANCE(mca_base_component_failure_t, opal_list_item_t, failure_construct,
                   failure_destruct);

const char *mca_base_component_stage_name(mca_base_component_stage_t stage)
{
    switch (stage) {
#define MCA_BASE_COMPONENT_STAGE_CASE(name, str)                                                   \
    case name:                                                                                     \
        return str;
        MCA_BASE_COMPONENT_STAGE_TABLE(MCA_BASE_COMPONENT_STAGE_CASE)
#undef MCA_BASE_COMPONENT_STAGE_CASE
    }
    return "unknown stage";
}

mca_base_component_failure_t *mca_base_failure_new(const char *framework, const char *component,
                                                   const char *path,
                                                   mca_base_component_stage_t stage,
                                                   const char *reason)
{
    mca_base_component_failure_t *failure = OBJ_NEW(mca_base_component_failure_t);
    if (NULL == failure) {
        return NULL;
    }
    failure->cf_framework = strdup(framework);
    failure->cf_component = strdup(component);
    failure->cf_path = NULL != path ? strdup(path) : NULL;
    failure->cf_stage = stage;
    failure->cf_reason = strdup(NULL != reason ? reason : "no reason given");
    if (NULL == failure->cf_framework || NULL == failure->cf_component ||
        (NULL != path && NULL == failure->cf_path) || NULL == failure->cf_reason) {
        OBJ_RELEASE(failure);
        return NULL;
    }
    return failure;
}

void mca_base_framework_record(mca_base_framework_t *framework, const char *component,
                               const char *path, mca_base_component_stage_t stage, int level,
                               const char *reason)
{
    mca_base_component_failure_t *failure =
        mca_base_failure_new(framework->framework_name, component, path, stage, reason);
    if (NULL != failure) {
        opal_list_append(&framework->framework_failures, &failure->super);
    }
    /* Its variables may be set (in a file, the environment) although it
     * never registered them here: not a typo to report. */
    char *prefix = NULL;
    if (asprintf(&prefix, "%s_%s", framework->framework_name, component) >= 0) {
        (void) mca_base_var_declare_prefix(prefix);
        free(prefix);
    }
    opal_output_verbose(level, framework->framework_output, "%s not used (%s): %s", component,
                        mca_base_component_stage_name(stage),
                        NULL != reason ? reason : "no reason given");
}

bool mca_base_framework_is_registered(const mca_base_framework_t *framework)
{
    return 0 != (framework->framework_state & MCA_BASE_FRAMEWORK_STATE_REGISTERED);
}

bool mca_base_framework_is_open(const mca_base_framework_t *framework)
{
    return 0 != (framework->framework_state & MCA_BASE_FRAMEWORK_STATE_OPEN);
}

/* The selection variable "<fw>" and "<fw>_base_verbose", then the stream
 * the framework reports on, prefixed with its name. */
static int register_framework_vars(mca_base_framework_t *framework)
{
    const char *project = framework->framework_project;
    const char *name = framework->framework_name;
    char *description = NULL;

    framework->framework_selection = NULL;
    if (asprintf(&description,
                 "Which %s components may be used: an include list (a,b) or an exclude list "
                 "(^a,b); unset: all of them",
                 name) < 0) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    int index =
        mca_base_var_register(project, name, NULL, NULL, description, MCA_BASE_VAR_TYPE_STRING,
                              NULL, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_2, MCA_BASE_VAR_SCOPE_ALL,
                              &framework->framework_selection);
    free(description);
    if (index < 0) {
        return index;
    }
    framework->framework_selection_var = index;

    framework->framework_verbose = 0;
    if (asprintf(&description,
                 "Verbosity of the %s framework: 10 says why each component is not used, 40 "
                 "shows each step (errors are printed at any level)",
                 name) < 0) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    index =
        mca_base_var_register(project, name, "base", "verbose", description, MCA_BASE_VAR_TYPE_INT,
                              NULL, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_3,
                              MCA_BASE_VAR_SCOPE_LOCAL, &framework->framework_verbose);
    free(description);
    if (index < 0) {
        return index;
    }

    char *prefix = NULL;
    if (asprintf(&prefix, "%s: ", name) < 0) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    framework->framework_output = mca_base_log_open(name, prefix, framework->framework_verbose);
    free(prefix);
    return framework->framework_output < 0 ? framework->framework_output : OPAL_SUCCESS;
}

/* Undoes register: every component goes (closed, deregistered, unloaded),
 * then the framework's own variables and stream. */
static void unregister(mca_base_framework_t *framework)
{
    mca_base_framework_components_release(framework);
    (void) mca_base_var_deregister_component(framework->framework_project,
                                             framework->framework_name, NULL);
    framework->framework_selection_var = -1;
    if (framework->framework_output > 0) {
        opal_output_close(framework->framework_output);
    }
    framework->framework_output = -1;
    OPAL_LIST_DESTRUCT(&framework->framework_components);
    OPAL_LIST_DESTRUCT(&framework->framework_failures);
    framework->framework_state = 0;
    framework->framework_register_refcnt = 0;
    (void) mca_base_close();
}

int mca_base_framework_register(mca_base_framework_t *framework, mca_base_register_flag_t flags)
{
    if (framework->framework_register_refcnt++ > 0) {
        return OPAL_SUCCESS;
    }
    int rc = mca_base_open();
    if (OPAL_SUCCESS != rc) {
        framework->framework_register_refcnt = 0;
        return rc;
    }
    OBJ_CONSTRUCT(&framework->framework_components, opal_list_t);
    OBJ_CONSTRUCT(&framework->framework_failures, opal_list_t);
    framework->framework_output = -1;
    framework->framework_selection_var = -1;
    framework->framework_open_refcnt = 0;
    framework->framework_state = MCA_BASE_FRAMEWORK_STATE_REGISTERED;

    /* Frameworks outside opal_frameworks[] (tests, other projects') are
     * known to the unknown-name check from here on. */
    (void) mca_base_var_declare_prefix(framework->framework_name);
    rc = register_framework_vars(framework);
    if (OPAL_SUCCESS == rc && NULL != framework->framework_register) {
        rc = framework->framework_register(flags);
    }
    if (OPAL_SUCCESS == rc) {
        rc = mca_base_framework_components_register(framework, flags);
    }
    /* Every variable of the framework and of its components that loaded
     * exists now: a name under its prefix that matches none is a typo
     * (an error with mca_base_unknown_params=error). */
    if (OPAL_SUCCESS == rc) {
        rc = mca_base_var_check_unknown_under(framework->framework_name);
    }
    if (OPAL_SUCCESS != rc) {
        unregister(framework);
        return rc;
    }
    opal_output_verbose(MCA_BASE_VERBOSE_INFO, framework->framework_output,
                        "registered %zu component(s)",
                        opal_list_get_size(&framework->framework_components));
    return OPAL_SUCCESS;
}

int mca_base_framework_open(mca_base_framework_t *framework, mca_base_open_flag_t flags)
{
    /* Opening for opal_info (FIND_COMPONENTS) registers everything too. */
    int rc = mca_base_framework_register(framework, (flags & MCA_BASE_OPEN_FIND_COMPONENTS)
                                                        ? MCA_BASE_REGISTER_ALL
                                                        : MCA_BASE_REGISTER_DEFAULT);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if (framework->framework_open_refcnt++ > 0) {
        return OPAL_SUCCESS;
    }
    /* The verbosity may have been set since the stream was opened. */
    opal_output_set_verbosity(
        framework->framework_output,
        mca_base_log_verbosity(framework->framework_name, framework->framework_verbose));
    rc = mca_base_framework_components_open(framework, flags);
    if (OPAL_SUCCESS == rc) {
        framework->framework_state |= MCA_BASE_FRAMEWORK_STATE_OPEN;
        if (NULL != framework->framework_open) {
            rc = framework->framework_open(flags);
            if (OPAL_SUCCESS != rc) {
                framework->framework_state &= ~(uint32_t) MCA_BASE_FRAMEWORK_STATE_OPEN;
                mca_base_framework_components_close(framework);
            }
        }
    }
    if (OPAL_SUCCESS != rc) {
        framework->framework_open_refcnt = 0;
        (void) mca_base_framework_close(framework);
        return rc;
    }
    opal_output_verbose(MCA_BASE_VERBOSE_INFO, framework->framework_output,
                        "opened %zu component(s)",
                        opal_list_get_size(&framework->framework_components));
    return OPAL_SUCCESS;
}

int mca_base_framework_close(mca_base_framework_t *framework)
{
    if (framework->framework_register_refcnt <= 0) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    int rc = OPAL_SUCCESS;
    if (framework->framework_open_refcnt > 0 && 0 == --framework->framework_open_refcnt) {
        if (NULL != framework->framework_close) {
            rc = framework->framework_close();
        }
        mca_base_framework_components_close(framework);
        framework->framework_state &= ~(uint32_t) MCA_BASE_FRAMEWORK_STATE_OPEN;
    }
    if (0 == --framework->framework_register_refcnt) {
        unregister(framework);
    }
    return rc;
}
