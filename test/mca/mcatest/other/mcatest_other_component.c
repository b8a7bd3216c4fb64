/* mcatest/other: a second good component with its own priority (below
 * good's by default), and a variable that makes it decline in open or
 * query, with a reason. */
#include "opal/opal_config.h"

#include <string.h>

#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/util/opal_error.h"
#include "test/mca/mcatest/mcatest.h"

static int other_register(void);
static int other_open(void);
static int other_query(mca_base_module_t **module, int *priority);

OPAL_DECLSPEC const mca_mcatest_base_component_t mca_mcatest_other_component = {
    .base_version =
        {
            MCA_MCATEST_BASE_VERSION,
            MCA_BASE_COMPONENT_NAME("other", 1, 0, 0),
            .mca_register_component_params = other_register,
            .mca_open_component = other_open,
            .mca_query_component = other_query,
        },
};

static int priority;
/* "open" or "query": the hook that declines; anything else: none. */
static char *decline_in;
static int open_count;

static int other_whoami(void)
{
    return MCATEST_WHOAMI_OTHER;
}

static int other_open_count(void)
{
    return open_count;
}

static mca_mcatest_base_module_t other_module = {
    .mcatest_whoami = other_whoami,
    .mcatest_open_count = other_open_count,
};

static int other_register(void)
{
    const mca_base_component_t *self = &mca_mcatest_other_component.base_version;
    priority = 30;
    int index = mca_base_component_var_register(
        self, "priority", "Priority of mcatest/other", MCA_BASE_VAR_TYPE_INT, NULL,
        MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_LOCAL, &priority);
    if (index < 0) {
        return index;
    }
    decline_in = NULL;
    index = mca_base_component_var_register(self, "decline_in",
                                            "Hook in which mcatest/other declines (open, query)",
                                            MCA_BASE_VAR_TYPE_STRING, NULL, MCA_BASE_VAR_FLAG_NONE,
                                            OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_LOCAL, &decline_in);
    return index < 0 ? index : OPAL_SUCCESS;
}

static bool declines_in(const char *hook)
{
    return NULL != decline_in && 0 == strcmp(decline_in, hook);
}

static int other_open(void)
{
    if (declines_in("open")) {
        mca_base_component_decline(&mca_mcatest_other_component.base_version,
                                   "told to decline in %s", "open");
        return OPAL_ERR_NOT_AVAILABLE;
    }
    ++open_count;
    return OPAL_SUCCESS;
}

static int other_query(mca_base_module_t **module, int *prio)
{
    if (declines_in("query")) {
        mca_base_component_decline(&mca_mcatest_other_component.base_version,
                                   "told to decline in %s", "query");
        return OPAL_ERR_NOT_AVAILABLE;
    }
    *module = &other_module.super;
    *prio = priority;
    return OPAL_SUCCESS;
}
