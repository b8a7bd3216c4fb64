/* mcatest/regdecline: declines at register, with a reason, as a component
 * does that can never run on this machine. */
#include "opal/opal_config.h"

#include "opal/mca/base/mca_base_framework.h"
#include "opal/util/opal_error.h"
#include "test/mca/mcatest/mcatest.h"

static int regdecline_register(void);

/* Must never run after a declined register. */
static int regdecline_open(void)
{
    return OPAL_ERROR;
}

OPAL_DECLSPEC const mca_mcatest_base_component_t mca_mcatest_regdecline_component = {
    .base_version =
        {
            MCA_MCATEST_BASE_VERSION,
            MCA_BASE_COMPONENT_NAME("regdecline", 1, 0, 0),
            .mca_register_component_params = regdecline_register,
            .mca_open_component = regdecline_open,
        },
};

static int regdecline_register(void)
{
    mca_base_component_decline(&mca_mcatest_regdecline_component.base_version,
                               "no %s device on this machine", "mcatest");
    return OPAL_ERR_NOT_AVAILABLE;
}
