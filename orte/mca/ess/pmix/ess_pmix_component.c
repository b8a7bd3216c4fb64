/*
 * ess/pmix: runs when the launcher left a PMIx server's address in the
 * environment (PMIX_RANK and PMIX_NAMESPACE, or a PMIX_SERVER_URI*), at a
 * priority below ess/env: a process mcarun started from inside a PMIx job
 * belongs to mcarun's job.
 */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/util/opal_error.h"
#include "orte/mca/ess/pmix/ess_pmix.h"

extern char **environ;

static int pmix_register(void);
static int pmix_query(mca_base_module_t **module, int *priority);

const orte_ess_base_component_t mca_ess_pmix_component = {
    .base_version =
        {
            ORTE_ESS_BASE_VERSION,
            MCA_BASE_COMPONENT_NAME("pmix", 1, 0, 0),
            .mca_register_component_params = pmix_register,
            .mca_query_component = pmix_query,
            /* libpmix keeps state (threads, handlers, allocations it frees
             * only at exit) past PMIx_Finalize: never unmap it. */
            .mca_component_flags = MCA_BASE_COMPONENT_FLAG_ALWAYS_LOADED,
        },
};

static int priority;
int mca_ess_pmix_register_cleanup;

static int pmix_register(void)
{
    priority = 50;
    int index = mca_base_component_var_register(
        &mca_ess_pmix_component.base_version, "priority",
        "Priority of ess/pmix (a process started by a PMIx launcher)", MCA_BASE_VAR_TYPE_INT, NULL,
        MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_LOCAL, &priority);
    if (index < 0) {
        return index;
    }
    mca_ess_pmix_register_cleanup = -1;
    index = mca_base_component_var_register(
        &mca_ess_pmix_component.base_version, "register_cleanup",
        "Ask the PMIx server to remove the session directory when the process ends, even "
        "killed: 1 always, 0 never, -1 when the server is Slurm's (Open MPI 4.1's mpirun "
        "crashes at the end of a job that registered one and aborted)",
        MCA_BASE_VAR_TYPE_INT, NULL, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_5,
        MCA_BASE_VAR_SCOPE_LOCAL, &mca_ess_pmix_register_cleanup);
    return index < 0 ? index : OPAL_SUCCESS;
}

bool mca_ess_pmix_detected(void)
{
    if (NULL != getenv("PMIX_RANK") && NULL != getenv("PMIX_NAMESPACE")) {
        return true;
    }
    for (char **env = environ; NULL != env && NULL != *env; ++env) {
        if (0 == strncmp(*env, "PMIX_SERVER_URI", strlen("PMIX_SERVER_URI"))) {
            return true;
        }
    }
    return false;
}

static int pmix_query(mca_base_module_t **module, int *prio)
{
    if (!mca_ess_pmix_detected()) {
        mca_base_component_decline(&mca_ess_pmix_component.base_version,
                                   "not started by a PMIx launcher (no PMIX_RANK / "
                                   "PMIX_NAMESPACE / PMIX_SERVER_URI* in the environment)");
        return OPAL_ERR_NOT_AVAILABLE;
    }
    *module = &mca_ess_pmix_module.super;
    *prio = priority;
    return OPAL_SUCCESS;
}
