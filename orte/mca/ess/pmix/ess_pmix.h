/*
 * ess/pmix: a process started by a PMIx launcher (Open MPI's mpirun,
 * Slurm's srun --mpi=pmix, PRRTE's prterun). The job comes from PMIx_Get
 * of the job's and this process's attributes; the modex is PMIx_Put /
 * Commit / Fence / Get.
 */
#ifndef ORTE_MCA_ESS_PMIX_ESS_PMIX_H
#define ORTE_MCA_ESS_PMIX_ESS_PMIX_H

#include "opal/opal_config.h"

#include <stdbool.h>

#include "orte/mca/ess/ess.h"

OPAL_DECLSPEC extern const orte_ess_base_component_t mca_ess_pmix_component;

/* The module the component's query returns. */
extern orte_ess_base_module_t mca_ess_pmix_module;

/* ess_pmix_register_cleanup: whether to ask the PMIx server to remove the
 * session directory when this process ends, however it ends: 1 always, 0
 * never, -1 (the default) when the server is Slurm's (namespaces
 * "slurm.pmix.*"). Set at register, read at init. */
extern int mca_ess_pmix_register_cleanup;

/* True when the environment names a PMIx server for this process. */
bool mca_ess_pmix_detected(void);

#endif /* ORTE_MCA_ESS_PMIX_ESS_PMIX_H */
