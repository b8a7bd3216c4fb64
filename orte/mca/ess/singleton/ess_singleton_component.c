/*
 * ess/singleton: always able to run, at the lowest priority, so that a
 * process started without any launcher still initialises.
 */
#include "opal/opal_config.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/util/opal_error.h"
#include "orte/mca/ess/singleton/ess_singleton.h"

static int singleton_register(void);
static int singleton_query(mca_base_module_t **module, int *priority);

const orte_ess_base_component_t mca_ess_singleton_component = {
    .base_version =
        {
            ORTE_ESS_BASE_VERSION,
            MCA_BASE_COMPONENT_NAME("singleton", 1, 0, 0),
            .mca_register_component_params = singleton_register,
            .mca_query_component = singleton_query,
        },
};

static int priority;

static int singleton_register(void)
{
    priority = 1;
    int index = mca_base_component_var_register(
        &mca_ess_singleton_component.base_version, "priority",
        "Priority of ess/singleton (a process started alone; it always matches)",
        MCA_BASE_VAR_TYPE_INT, NULL, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_9,
        MCA_BASE_VAR_SCOPE_LOCAL, &priority);
    return index < 0 ? index : OPAL_SUCCESS;
}

static int singleton_query(mca_base_module_t **module, int *prio)
{
    *module = &mca_ess_singleton_module.super;
    *prio = priority;
    return OPAL_SUCCESS;
}
