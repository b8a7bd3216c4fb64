/* mcatest/openfail: registers, then its open fails with a real error (not
 * a decline); the base must report it, never query or close it, and
 * drop its variables. */
#include "opal/opal_config.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/util/opal_error.h"
#include "test/mca/mcatest/mcatest.h"

static int openfail_register(void);
static int openfail_open(void);
static int openfail_query(mca_base_module_t **module, int *priority);
static int openfail_close(void);

OPAL_DECLSPEC const mca_mcatest_base_component_t mca_mcatest_openfail_component = {
    .base_version =
        {
            MCA_MCATEST_BASE_VERSION,
            MCA_BASE_COMPONENT_NAME("openfail", 1, 0, 0),
            .mca_register_component_params = openfail_register,
            .mca_open_component = openfail_open,
            .mca_query_component = openfail_query,
            .mca_close_component = openfail_close,
        },
};

static int attempts;

static int openfail_register(void)
{
    attempts = 0;
    int index = mca_base_component_var_register(
        &mca_mcatest_openfail_component.base_version, "attempts",
        "How often mcatest/openfail tried to open", MCA_BASE_VAR_TYPE_INT, NULL,
        MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_LOCAL, &attempts);
    return index < 0 ? index : OPAL_SUCCESS;
}

static int openfail_open(void)
{
    ++attempts;
    return OPAL_ERR_OUT_OF_RESOURCE;
}

/* Neither may run: a component whose open failed is gone. */
static int openfail_query(mca_base_module_t **module, int *priority)
{
    return OPAL_ERROR;
}

static int openfail_close(void)
{
    return OPAL_ERROR;
}
