/*
 * sched/fifo lifecycle: one variable, nothing to probe; it runs
 * everywhere with the highest priority, which makes it the default.
 */
#include "opal/opal_config.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/sched/fifo/sched_fifo.h"
#include "opal/util/opal_error.h"

unsigned int mca_sched_fifo_batch = 4096;

static int fifo_register(void)
{
    mca_sched_fifo_batch = 4096;
    int rc = mca_base_component_var_register(
        &mca_sched_fifo_component.sched_version, "batch",
        "Ready tasks one progress call runs at most (0: until the queue is empty)",
        MCA_BASE_VAR_TYPE_UNSIGNED_INT, NULL, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_LOCAL,
        &mca_sched_fifo_batch);
    return rc < 0 ? rc : OPAL_SUCCESS;
}

static int fifo_query(mca_base_module_t **module, int *priority)
{
    *module = (mca_base_module_t *) &mca_sched_fifo_module;
    *priority = 50;
    return OPAL_SUCCESS;
}

OPAL_DECLSPEC const mca_sched_base_component_t mca_sched_fifo_component = {
    .sched_version =
        {
            MCA_SCHED_BASE_VERSION_1_0_0,
            MCA_BASE_COMPONENT_NAME("fifo", 1, 0, 0),
            .mca_query_component = fifo_query,
            .mca_register_component_params = fifo_register,
        },
};
