/*
 * mcatest: a framework that exists only for the tests of the MCA base. Its
 * components exercise every path: two good ones with priorities (good,
 * other), one built against another MCA version (badversion), one with an
 * undefined symbol (undefsym, plugin only), one whose open fails
 * (openfail), one whose register declines (regdecline), one with a
 * variable of every type (alltypes).
 */
#ifndef OPAL_TEST_MCA_MCATEST_MCATEST_H
#define OPAL_TEST_MCA_MCATEST_MCATEST_H

#include "opal/opal_config.h"

#include <stdio.h>
#include <string.h>

#include "opal/mca/mca.h"

#define MCATEST_API_MAJOR 1
#define MCATEST_API_MINOR 0

/* What mcatest_whoami returns, per component. */
enum {
    MCATEST_WHOAMI_GOOD = 1,
    MCATEST_WHOAMI_OTHER = 2,
    MCATEST_WHOAMI_ALLTYPES = 3,
    MCATEST_WHOAMI_OPENFAIL = 4,
};

typedef struct mca_mcatest_base_module_t {
    mca_base_module_t super;
    /* Returns a value that identifies the component that made the module. */
    int (*mcatest_whoami)(void);
    /* How many times the component's open ran in this copy of its code: a
     * plugin that was unloaded and loaded again starts from 0, a built-in
     * component keeps counting. */
    int (*mcatest_open_count)(void);
    /* The hooks the component ran since its last register, in order
     * ("register,open,query,close"); NULL for components that do not keep
     * it. Stays callable after close for built-in components only. */
    const char *(*mcatest_lifecycle)(void);
} mca_mcatest_base_module_t;

typedef struct mca_mcatest_base_component_t {
    mca_base_component_t base_version;
} mca_mcatest_base_component_t;

/* Appends event to a component's lifecycle log ("register,open"). */
static inline void mcatest_log(char *log, size_t size, const char *event)
{
    size_t used = strlen(log);
    snprintf(log + used, size - used, "%s%s", 0 == used ? "" : ",", event);
}

#define MCA_MCATEST_BASE_VERSION                                                                   \
    MCA_BASE_VERSION_FOR_PROJECT("test", OPAL_MAJOR_VERSION, OPAL_MINOR_VERSION,                   \
                                 OPAL_RELEASE_VERSION, "mcatest", MCATEST_API_MAJOR,               \
                                 MCATEST_API_MINOR, 0)

#endif /* OPAL_TEST_MCA_MCATEST_MCATEST_H */
