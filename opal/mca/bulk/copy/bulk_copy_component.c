/*
 * bulk/copy's lifecycle: register its variables; nothing to open or close
 * (per-class state is the engine's, bulk_copy_module.c).
 */
#include "opal/opal_config.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/bulk/copy/bulk_copy.h"
#include "opal/util/opal_error.h"

static int copy_register(void);

const opal_bulk_base_component_t mca_bulk_copy_component = {
    .bulk_version =
        {
            OPAL_BULK_BASE_VERSION,
            MCA_BASE_COMPONENT_NAME("copy", 1, 0, 0),
            .mca_register_component_params = copy_register,
        },
    .bulk_engine = &mca_bulk_copy_engine,
};

mca_bulk_copy_vars_t mca_bulk_copy_vars;

static int register_uint(const char *name, const char *description, unsigned int *storage,
                         unsigned int value)
{
    *storage = value;
    int index = mca_base_component_var_register(
        &mca_bulk_copy_component.bulk_version, name, description, MCA_BASE_VAR_TYPE_UNSIGNED_INT,
        NULL, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL, storage);
    return index < 0 ? index : OPAL_SUCCESS;
}

static int copy_register(void)
{
    mca_bulk_copy_vars.frag_size = 64 * 1024;
    int index = mca_base_component_var_register(
        &mca_bulk_copy_component.bulk_version, "frag_size",
        "Largest payload of one copy-engine message (also bounded by the na class's message "
        "limits)",
        MCA_BASE_VAR_TYPE_SIZE_T, NULL, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_5,
        MCA_BASE_VAR_SCOPE_ALL, &mca_bulk_copy_vars.frag_size);
    if (index < 0) {
        return index;
    }
    int rc = register_uint("window", "Most fragments one copy transfer has in flight (1 to 64)",
                           &mca_bulk_copy_vars.window, 8);
    if (OPAL_SUCCESS == rc) {
        rc = register_uint("service_recvs",
                           "Receives the bulk service keeps posted for peers' copy requests "
                           "(1 to 256)",
                           &mca_bulk_copy_vars.service_recvs, 16);
    }
    return rc;
}
