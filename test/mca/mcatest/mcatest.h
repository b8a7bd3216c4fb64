/*
 * mcatest: a framework that exists only for the tests of the MCA base. Its
 * components exercise every path: a good one, one built against another MCA
 * version, one with an undefined symbol, one whose open fails, one whose
 * register declines, one with a variable of every type.
 */
#ifndef OPAL_TEST_MCA_MCATEST_MCATEST_H
#define OPAL_TEST_MCA_MCATEST_MCATEST_H

#include "opal/opal_config.h"

#include "opal/mca/mca.h"

#define MCATEST_API_MAJOR 1
#define MCATEST_API_MINOR 0

typedef struct mca_mcatest_base_module_t {
    mca_base_module_t super;
    /* Returns a value that identifies the component that made the module. */
    int (*mcatest_whoami)(void);
} mca_mcatest_base_module_t;

typedef struct mca_mcatest_base_component_t {
    mca_base_component_t base_version;
} mca_mcatest_base_component_t;

#define MCA_MCATEST_BASE_VERSION                                                         \
    MCA_BASE_VERSION_FOR_PROJECT("test", OPAL_MAJOR_VERSION, OPAL_MINOR_VERSION,         \
                                 OPAL_RELEASE_VERSION, "mcatest", MCATEST_API_MAJOR,     \
                                 MCATEST_API_MINOR, 0)

#endif /* OPAL_TEST_MCA_MCATEST_MCATEST_H */
