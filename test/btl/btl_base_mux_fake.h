/*
 * Fake btl components and modules for the base's unit tests: what each
 * module reaches, why not the others, its rank (exclusivity, latency,
 * bandwidth) and flags are set by the test; every call is counted, every
 * endpoint accounted for, every message sent recorded.
 */
#ifndef OPAL_TEST_BTL_BTL_BASE_MUX_FAKE_H
#define OPAL_TEST_BTL_BTL_BASE_MUX_FAKE_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stdint.h>

#include "opal/mca/btl/base/base.h"

#define FAKE_MAX_MODULES 10

typedef struct fake_module_t {
    mca_btl_base_module_t super;
    /* Ranks reached (bit r), and what add_procs says for the others. */
    uint64_t reach;
    const char *why;
    /* add_procs fails with this (OPAL_SUCCESS: it works). */
    int add_rc;

    int add_calls, del_calls, del_procs_seen, finalized;
    int live_endpoints;
    mca_btl_base_module_error_cb_fn_t error_cb;

    /* Sends: sendi answers busy this many times first. */
    int sendi_busy;
    /* alloc returns NULL (no descriptor free). */
    bool alloc_empty;
    int sent;
    int via; /* 1 sendi, 2 alloc, 3 prepare_src */
    mca_btl_base_tag_t last_tag;
    unsigned char last[1024];
    size_t last_len;
    /* On an in-place module, prepare_src keeps a pointer to the data; the
     * send is recorded and completes only at the next progress, reading
     * the data then. */
    mca_btl_base_descriptor_t *pending;
    mca_btl_base_tag_t pending_tag;
    const void *inplace_data;
    size_t inplace_reserve;
    mca_btl_base_descriptor_t des;
    mca_btl_base_segment_t seg;
    unsigned char buffer[1024];
} fake_module_t;

/* The components: alpha and beta return the modules the test set for
 * them, nope declines ("no fake device here"). */
extern mca_btl_base_component_t fake_alpha_component, fake_beta_component, fake_nope_component;

/* Progress calls per component since the last reset. */
extern int fake_alpha_progress_calls, fake_beta_progress_calls;

/* Forgets every configured module; then fake_module() configures one more
 * for component (alpha or beta): exclusivity, latency, bandwidth, flags,
 * the ranks it reaches. */
void fake_reset(void);
fake_module_t *fake_module(mca_btl_base_component_t *component, uint32_t exclusivity,
                           uint32_t latency, uint32_t bandwidth, uint32_t flags, uint64_t reach);

/* Opens the btl framework, adds the fake components to it (after any real
 * one found) and runs mca_btl_base_init; returns its result. */
int fake_init(void);

/* The module of component at index i of mca_btl_base_modules_initialized,
 * or NULL. */
mca_btl_base_module_t *fake_initialized(int i);

/* Every module configured since fake_reset. */
int fake_module_count(void);
fake_module_t *fake_module_at(int i);

#endif /* OPAL_TEST_BTL_BTL_BASE_MUX_FAKE_H */
