/*
 * Starting and stopping the MCA base: the variable system, the base's own
 * variables and the component repository.
 *
 *   mca_base_component_path               where plugins are looked for: a
 *       colon list of directories, "~" is $HOME; default
 *       "$pkglibdir:~/.opal/components".
 *   mca_base_component_show_load_errors   which plugin load failures are
 *       printed: "all" (default), "none", or a comma list of framework or
 *       framework/component names, all of them prefixed by "^" to mean
 *       "every failure except these".
 *   mca_base_verbose                      verbosity of the base itself
 *       (path scanning, duplicate plugins).
 *
 * Frameworks call mca_base_open() when they register and mca_base_close()
 * when they close, so a program only needs it to read these variables
 * before any framework is used.
 */
#ifndef OPAL_MCA_BASE_MCA_BASE_OPEN_H
#define OPAL_MCA_BASE_MCA_BASE_OPEN_H

#include "opal/opal_config.h"

/* Starts the variable system, registers the variables above and starts the
 * repository (lt_dlinit). Counted: only the first call does the work.
 * Returns OPAL_SUCCESS or the error of the step that failed (undone). */
OPAL_DECLSPEC int mca_base_open(void);

/* Drops one mca_base_open(); the last one finalizes the repository
 * (lt_dlexit), deregisters the variables above and finalizes the variable
 * system. Returns OPAL_ERR_NOT_INITIALIZED without a matching open. */
OPAL_DECLSPEC int mca_base_close(void);

/* Current values of the variables above (owned by the variable system;
 * valid while the MCA base is open). */
OPAL_DECLSPEC extern char *mca_base_component_path;
OPAL_DECLSPEC extern char *mca_base_component_show_load_errors;
OPAL_DECLSPEC extern int mca_base_verbose;

/* Output stream of the base ("mca: base: " prefix, mca_base_verbose); -1
 * while closed. */
OPAL_DECLSPEC extern int mca_base_output;

#endif /* OPAL_MCA_BASE_MCA_BASE_OPEN_H */
