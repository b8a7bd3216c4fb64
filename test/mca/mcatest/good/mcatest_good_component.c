/* mcatest/good: registers its priority, allocates in open what close
 * frees, returns a module at its priority, and logs every hook so that
 * the tests can check their order. */
#include "opal/opal_config.h"

#include <stdlib.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/util/opal_error.h"
#include "test/mca/mcatest/mcatest.h"

static int good_register(void);
static int good_open(void);
static int good_query(mca_base_module_t **module, int *priority);
static int good_close(void);

OPAL_DECLSPEC const mca_mcatest_base_component_t mca_mcatest_good_component = {
    .base_version =
        {
            MCA_MCATEST_BASE_VERSION,
            MCA_BASE_COMPONENT_NAME("good", 1, 0, 0),
            .mca_register_component_params = good_register,
            .mca_open_component = good_open,
            .mca_query_component = good_query,
            .mca_close_component = good_close,
        },
};

static int priority;
static int open_count;
static char lifecycle[128];
/* Taken by open, released by close: a missed close shows as a leak. */
static void *open_buffer;

static int good_whoami(void)
{
    return MCATEST_WHOAMI_GOOD;
}

static int good_open_count(void)
{
    return open_count;
}

static const char *good_lifecycle(void)
{
    return lifecycle;
}

static mca_mcatest_base_module_t good_module = {
    .mcatest_whoami = good_whoami,
    .mcatest_open_count = good_open_count,
    .mcatest_lifecycle = good_lifecycle,
};

static int good_register(void)
{
    lifecycle[0] = '\0';
    mcatest_log(lifecycle, sizeof(lifecycle), "register");
    priority = 50;
    int index = mca_base_component_var_register(
        &mca_mcatest_good_component.base_version, "priority", "Priority of mcatest/good",
        MCA_BASE_VAR_TYPE_INT, NULL, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_9,
        MCA_BASE_VAR_SCOPE_LOCAL, &priority);
    return index < 0 ? index : OPAL_SUCCESS;
}

static int good_open(void)
{
    mcatest_log(lifecycle, sizeof(lifecycle), "open");
    open_buffer = malloc(64);
    if (NULL == open_buffer) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    ++open_count;
    return OPAL_SUCCESS;
}

static int good_query(mca_base_module_t **module, int *prio)
{
    mcatest_log(lifecycle, sizeof(lifecycle), "query");
    *module = &good_module.super;
    *prio = priority;
    return OPAL_SUCCESS;
}

static int good_close(void)
{
    mcatest_log(lifecycle, sizeof(lifecycle), "close");
    free(open_buffer);
    open_buffer = NULL;
    return OPAL_SUCCESS;
}
