/*
 * Start-up and shut-down of the run-time environment.
 *
 * orte_init starts opal's utility layer, opens the ess framework, picks the
 * component that matches how the process was started (mcarun: env; a PMIx
 * launcher such as srun --mpi=pmix, prterun or Open MPI's mpirun: pmix;
 * alone: singleton; or the one named by the "ess" MCA variable), fills
 * orte_process_info, installs opal's modex / fence / abort hooks
 * (opal_rte.h) and describes the job's processes to opal (opal_proc.h).
 * orte_finalize undoes it in reverse order. Both count, like
 * opal_init_util: only the first init and the last finalize do the work.
 * Call them from one thread.
 */
#ifndef ORTE_RUNTIME_ORTE_INIT_H
#define ORTE_RUNTIME_ORTE_INIT_H

#include "opal/opal_config.h"

#include <stdbool.h>

#include "opal/mca/base/mca_base_framework.h"
#include "orte/runtime/orte_globals.h"

/* Starts the run-time environment (argc/argv may be NULL). Returns
 * OPAL_SUCCESS, or the error of the step that failed after printing what
 * went wrong and undoing the steps before it. */
OPAL_DECLSPEC int orte_init(int *argc, char ***argv);

/* Drops one orte_init; the last one says goodbye to the launcher, removes
 * what orte created and finalizes opal's utility layer.
 * OPAL_ERR_NOT_INITIALIZED without a matching orte_init. */
OPAL_DECLSPEC int orte_finalize(void);

/* True between the first orte_init and the last orte_finalize. */
OPAL_DECLSPEC bool orte_initialized(void);

/* Stops the whole job with status after printing message (through the
 * launcher when there is one). Returns only when that failed; without
 * orte_init it prints the message and returns OPAL_ERR_NOT_INITIALIZED. */
OPAL_DECLSPEC int orte_abort(int status, const char *message);

/* Every framework of project orte in this build, NULL-terminated (what
 * opal_info lists). */
OPAL_DECLSPEC extern mca_base_framework_t *orte_frameworks[];

#endif /* ORTE_RUNTIME_ORTE_INIT_H */
