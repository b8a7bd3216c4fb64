/* mcatest/good: registers one variable, opens, and returns a module at the
 * priority its variable says. */
#include "opal/opal_config.h"

#include "opal/util/opal_error.h"
#include "test/mca/mcatest/mcatest.h"

static int good_whoami(void)
{
    return 1;
}

static mca_mcatest_base_module_t good_module = {.mcatest_whoami = good_whoami};

static int good_query(mca_base_module_t **module, int *priority)
{
    *module = &good_module.super;
    *priority = 50;
    return OPAL_SUCCESS;
}

OPAL_DECLSPEC const mca_mcatest_base_component_t mca_mcatest_good_component = {
    .base_version = {
        MCA_MCATEST_BASE_VERSION,
        MCA_BASE_COMPONENT_NAME("good", 1, 0, 0),
        .mca_query_component = good_query,
    },
};
