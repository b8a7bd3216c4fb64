/*
 * bulk/rdma's lifecycle: register its variables; nothing to open or close
 * (per-class and per-transfer state is the engine's, bulk_rdma_module.c).
 */
#include "opal/opal_config.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/bulk/rdma/bulk_rdma.h"
#include "opal/util/opal_error.h"

static int rdma_register(void);

const opal_bulk_base_component_t mca_bulk_rdma_component = {
    .bulk_version =
        {
            OPAL_BULK_BASE_VERSION,
            MCA_BASE_COMPONENT_NAME("rdma", 1, 0, 0),
            .mca_register_component_params = rdma_register,
        },
    .bulk_engine = &mca_bulk_rdma_engine,
};

mca_bulk_rdma_vars_t mca_bulk_rdma_vars;

static int rdma_register(void)
{
    mca_bulk_rdma_vars.chunk_size = 512 * 1024;
    int index = mca_base_component_var_register(
        &mca_bulk_rdma_component.bulk_version, "chunk_size",
        "Largest na put / get one bulk transfer issues at once; larger transfers are "
        "pipelined in chunks of this size (0: one operation per piece of the handles). "
        "Left at its default, it does not apply to peers whose na class advises against "
        "cutting (na/btl over btl/sm, which shares a large get between both processes)",
        MCA_BASE_VAR_TYPE_SIZE_T, NULL, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_5,
        MCA_BASE_VAR_SCOPE_ALL, &mca_bulk_rdma_vars.chunk_size);
    if (index < 0) {
        return index;
    }
    const mca_base_var_t *var = NULL;
    mca_bulk_rdma_vars.chunk_size_chosen = OPAL_SUCCESS == mca_base_var_get(index, &var) &&
                                           MCA_BASE_VAR_SOURCE_DEFAULT != var->mbv_source;
    mca_bulk_rdma_vars.window = 8;
    index = mca_base_component_var_register(
        &mca_bulk_rdma_component.bulk_version, "window",
        "Most na put / get operations one bulk transfer has in flight (1 to 64)",
        MCA_BASE_VAR_TYPE_UNSIGNED_INT, NULL, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_5,
        MCA_BASE_VAR_SCOPE_ALL, &mca_bulk_rdma_vars.window);
    return index < 0 ? index : OPAL_SUCCESS;
}
