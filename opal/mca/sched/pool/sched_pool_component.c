/*
 * sched/pool lifecycle: the number of workers and where they are bound.
 */
#include "opal/opal_config.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/sched/pool/sched_pool.h"
#include "opal/util/opal_error.h"

sched_pool_config_t mca_sched_pool_config;

static int pool_register(void)
{
    const mca_base_component_t *c = &mca_sched_pool_component.sched_version;
    static const mca_base_var_enum_value_t binds[] = {
        {SCHED_POOL_BIND_NONE, "none"},
        {SCHED_POOL_BIND_CORE, "core"},
        {SCHED_POOL_BIND_NUMA, "numa"},
        {0, NULL},
    };
    mca_sched_pool_config.workers = 0;
    mca_sched_pool_config.bind = SCHED_POOL_BIND_CORE;
    int rc = mca_base_component_var_register(
        c, "workers", "Worker threads per scheduler (0: one per core of the process's binding)",
        MCA_BASE_VAR_TYPE_UNSIGNED_INT, NULL, 0, OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_LOCAL,
        &mca_sched_pool_config.workers);
    if (rc < 0) {
        return rc;
    }
    mca_base_var_enum_t *enumerator = NULL;
    rc = mca_base_var_enum_create("sched_pool_bind", binds, &enumerator);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = mca_base_component_var_register(
        c, "bind",
        "Where workers are bound: none, core (worker i on the i-th core of the process's "
        "binding, round robin) or numa (every worker on the NUMA nodes of that binding)",
        MCA_BASE_VAR_TYPE_INT, enumerator, 0, OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_LOCAL,
        &mca_sched_pool_config.bind);
    OBJ_RELEASE(enumerator);
    return rc < 0 ? rc : OPAL_SUCCESS;
}

static int pool_query(mca_base_module_t **module, int *priority)
{
    *module = (mca_base_module_t *) &mca_sched_pool_module;
    *priority = 10;
    return OPAL_SUCCESS;
}

OPAL_DECLSPEC const mca_sched_base_component_t mca_sched_pool_component = {
    .sched_version =
        {
            MCA_SCHED_BASE_VERSION_1_0_0,
            MCA_BASE_COMPONENT_NAME("pool", 1, 0, 0),
            .mca_register_component_params = pool_register,
            .mca_query_component = pool_query,
        },
};
