/*
 * What the files of the btl base share (not installed): the framework's
 * selection and close hooks, and the pieces of init / finalize each file
 * owns.
 */
#ifndef OPAL_MCA_BTL_BASE_BTL_BASE_INTERNAL_H
#define OPAL_MCA_BTL_BASE_BTL_BASE_INTERNAL_H

#include "opal/opal_config.h"

#include <stdbool.h>

#include "opal/mca/btl/base/base.h"

/* btl_base_verbose's stream, or stream 0 while the framework is not
 * registered: for warnings and errors that must not be lost. */
static inline int mca_btl_base_err_stream(void)
{
    return mca_btl_base_output >= 0 ? mca_btl_base_output : 0;
}

/* The framework's select hook (mca_base_framework_select_fn_t): calls
 * every opened component's btl_init with the thread flags last given to
 * mca_btl_base_init (false, false for opal_info), keeps the modules in
 * mca_btl_base_modules_initialized and registers the components'
 * progress functions; components that return no module are dropped with
 * their reason. Runs once per open of the framework. */
int mca_btl_base_select(int *selected);

/* Undoes mca_btl_base_select: unregisters progress, finalizes every
 * module and empties mca_btl_base_modules_initialized (the close hook). */
void mca_btl_base_release_modules(void);

/* The thread flags mca_btl_base_select passes to btl_init. */
void mca_btl_base_set_thread_flags(bool enable_progress_threads, bool enable_mpi_threads);

/* Forgets every peer (each module's del_procs first) and frees the peer
 * table. */
void mca_btl_base_mux_release(void);

/* Frees the bounce buffers of copying sends over in-place modules (those
 * still out belong to sends that never completed). */
void mca_btl_base_mux_send_release(void);

/* Resets the counts of unclaimed messages (each tag's first one is
 * reported again). */
void mca_btl_base_am_reset_unclaimed(void);

/* What the framework recorded for the components that did not run, one
 * line per component: "<indent>ofi: not included by btl=self,sm" (the
 * stage named unless it is the selection or btl_init), lines joined by
 * newlines, no newline at the end; "<indent>(none)" when every component
 * ran. Caller frees; NULL when out of memory. */
char *mca_btl_base_failures_string(const char *indent);

/* Prints mca_btl_base_failures_string(indent) on stream output. */
void mca_btl_base_print_failures(int output, const char *indent);

/* True between the first mca_btl_base_init and the last finalize. */
bool mca_btl_base_initialized(void);

#endif /* OPAL_MCA_BTL_BASE_BTL_BASE_INTERNAL_H */
