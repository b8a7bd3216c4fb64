/*
 * ess (environment-specific services): how a process learns who it is and
 * who its peers are, and how it exchanges data with them, for each way of
 * being started:
 *
 *   env        started by mcarun: the launcher's variables and its socket
 *   pmix       started by a PMIx launcher (srun --mpi=pmix, prterun, Open
 *              MPI's mpirun): PMIx_Get, PMIx_Put / Commit / Fence
 *   singleton  started alone: rank 0 of 1, the modex talks to itself
 *
 * A single-select framework: each component's query returns its module
 * only when it recognises its environment, at its priority (the variable
 * ess_<component>_priority); the highest wins. "--mca ess singleton"
 * forces one.
 *
 * The module's life: ess_init (fills orte_process_info) -> the modex,
 * fence and abort hooks, which orte_init installs into opal as they are
 * -> ess_finalize.
 */
#ifndef ORTE_MCA_ESS_ESS_H
#define ORTE_MCA_ESS_ESS_H

#include "opal/opal_config.h"

#include "opal/mca/mca.h"
#include "opal/runtime/opal_rte.h"
#include "orte/runtime/orte_globals.h"

#define ORTE_ESS_API_MAJOR 1
#define ORTE_ESS_API_MINOR 0

typedef struct orte_ess_base_module_t {
    mca_base_module_t super;
    /* Connects to the environment and fills every field of info except
     * ess_name. The session directory exists when it returns. Returns
     * OPAL_SUCCESS or an error after printing why. */
    int (*ess_init)(orte_process_info_t *info);
    /* Leaves the environment: tells the launcher this process finalized,
     * releases everything ess_init took. */
    int (*ess_finalize)(void);
    /* The modex, fence and abort, with the semantics of opal_rte.h; valid
     * between ess_init and ess_finalize. rte_modex_get of a key the peer
     * will never publish returns OPAL_ERR_NOT_FOUND when the component can
     * tell, and OPAL_ERR_TIMEOUT (with a message naming the peer and the
     * key) when the wait ends. */
    opal_rte_hooks_t ess_rte;
} orte_ess_base_module_t;

typedef struct orte_ess_base_component_t {
    mca_base_component_t base_version;
} orte_ess_base_component_t;

#define ORTE_ESS_BASE_VERSION                                                                      \
    MCA_BASE_VERSION_FOR_PROJECT("orte", OPAL_MAJOR_VERSION, OPAL_MINOR_VERSION,                   \
                                 OPAL_RELEASE_VERSION, "ess", ORTE_ESS_API_MAJOR,                  \
                                 ORTE_ESS_API_MINOR, 0)

#endif /* ORTE_MCA_ESS_ESS_H */
