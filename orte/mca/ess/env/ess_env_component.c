/*
 * ess/env: runs when mcarun started this process (its environment names
 * the launcher's socket), at the highest priority: mcarun is always the
 * launcher nearest to the process.
 */
#include "opal/opal_config.h"

#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/util/opal_error.h"
#include "orte/mca/ess/env/ess_env.h"
#include "orte/util/orte_launcher_client.h"

static int env_register(void);
static int env_query(mca_base_module_t **module, int *priority);

const orte_ess_base_component_t mca_ess_env_component = {
    .base_version =
        {
            ORTE_ESS_BASE_VERSION,
            MCA_BASE_COMPONENT_NAME("env", 1, 0, 0),
            .mca_register_component_params = env_register,
            .mca_query_component = env_query,
        },
};

static int priority;

static int env_register(void)
{
    priority = 100;
    int index = mca_base_component_var_register(
        &mca_ess_env_component.base_version, "priority",
        "Priority of ess/env (a process started by mcarun)", MCA_BASE_VAR_TYPE_INT, NULL,
        MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_LOCAL, &priority);
    return index < 0 ? index : OPAL_SUCCESS;
}

static int env_query(mca_base_module_t **module, int *prio)
{
    if (!orte_launcher_client_detected()) {
        mca_base_component_decline(&mca_ess_env_component.base_version,
                                   "not started by mcarun (no launcher socket in the "
                                   "environment)");
        return OPAL_ERR_NOT_AVAILABLE;
    }
    *module = &mca_ess_env_module.super;
    *prio = priority;
    return OPAL_SUCCESS;
}
