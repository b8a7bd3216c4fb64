/*
 * Start-up and shut-down of the utility layer: the class system, output
 * streams, show_help and the progress engine. Both calls count: every
 * opal_init_util() is matched by one opal_finalize_util(), and only the
 * last finalize tears down.
 */
#ifndef OPAL_RUNTIME_OPAL_INIT_H
#define OPAL_RUNTIME_OPAL_INIT_H

#include "opal/opal_config.h"

#include <stdbool.h>

/* Initialises the utility layer (first call) or counts one more user.
 * argc/argv may be NULL; they are not modified today. Returns OPAL_SUCCESS
 * or the error of the piece that failed to start (after undoing the
 * others). */
OPAL_DECLSPEC int opal_init_util(int *argc, char ***argv);

/* Drops one user; the last one closes the progress engine, show_help and
 * output, and finalizes the class system (objects released later still
 * destruct correctly). OPAL_ERR_NOT_INITIALIZED without a matching init. */
OPAL_DECLSPEC int opal_finalize_util(void);

/* True between the first opal_init_util() and the last opal_finalize_util(). */
OPAL_DECLSPEC bool opal_util_initialized(void);

#endif /* OPAL_RUNTIME_OPAL_INIT_H */
