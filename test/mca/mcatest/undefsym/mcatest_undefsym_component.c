/* mcatest/undefsym: its open hook is a function defined nowhere. The
 * component struct holds the function's address, a relocation the dynamic
 * linker must resolve when the plugin is loaded (not lazily at the first
 * call), so loading fails with "undefined symbol:
 * mcatest_undefsym_missing_function". */
#include "opal/opal_config.h"

#include "test/mca/mcatest/mcatest.h"

int mcatest_undefsym_missing_function(void);

OPAL_DECLSPEC const mca_mcatest_base_component_t mca_mcatest_undefsym_component = {
    .base_version =
        {
            MCA_MCATEST_BASE_VERSION,
            MCA_BASE_COMPONENT_NAME("undefsym", 1, 0, 0),
            .mca_open_component = mcatest_undefsym_missing_function,
        },
};
