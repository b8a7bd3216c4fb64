/*
 * What one mca_btl_base_add_procs call learned from the modules it asked
 * (not installed): per module, why it does not reach each new proc, so
 * that a peer no module reaches can be reported with every reason.
 */
#ifndef OPAL_MCA_BTL_BASE_BTL_BASE_MUX_INTERNAL_H
#define OPAL_MCA_BTL_BASE_BTL_BASE_MUX_INTERNAL_H

#include "opal/opal_config.h"

#include <stddef.h>

#include "opal/mca/btl/base/btl_base_mux.h"

typedef struct mca_btl_base_mux_attempts_t mca_btl_base_mux_attempts_t;

/* Room for the answers of any number of modules about nprocs procs;
 * NULL when out of memory. */
mca_btl_base_mux_attempts_t *mca_btl_base_mux_attempts_new(size_t nprocs);
void mca_btl_base_mux_attempts_free(mca_btl_base_mux_attempts_t *attempts);

/* Adds btl; returns its index, or OPAL_ERR_OUT_OF_RESOURCE. */
int mca_btl_base_mux_attempt_add(mca_btl_base_mux_attempts_t *attempts, mca_btl_base_module_t *btl);

/* The reasons array (nprocs entries, zeroed) handed to btl's add_procs. */
mca_btl_base_reason_t *mca_btl_base_mux_attempt_reasons(mca_btl_base_mux_attempts_t *attempts,
                                                        int index);

/* Records that the module's add_procs failed with rc (it then reaches
 * none of the procs). */
void mca_btl_base_mux_attempt_failed(mca_btl_base_mux_attempts_t *attempts, int index, int rc);

/* Records why the base does not use the module for proc i although it
 * reaches it. */
void mca_btl_base_mux_attempt_note(mca_btl_base_mux_attempts_t *attempts, int index, size_t i,
                                   const char *text);

/* Prints the error for the peers among peers[0..n) that no module
 * reaches (send_count 0): each peer, every module tried and why not, and
 * every component that did not run and why. */
void mca_btl_base_mux_report_unreachable(const mca_btl_base_mux_attempts_t *attempts, size_t n,
                                         mca_btl_base_peer_t *const *peers);

#endif /* OPAL_MCA_BTL_BASE_BTL_BASE_MUX_INTERNAL_H */
