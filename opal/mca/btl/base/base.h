/*
 * The btl framework base: the framework, the standard variables of every
 * component, the active-message table, and selection of the modules.
 *
 * A program uses the btl like this (after orte_init, which describes the
 * job to opal_proc):
 *
 *   mca_btl_base_am_register(tag, callback, cbdata);
 *   mca_btl_base_init(false, false);          opens, inits every component
 *   mca_btl_base_add_procs(procs, n);         per-peer module ranking
 *   peer = mca_btl_base_peer_get(rank);       base/btl_base_mux.h
 *   ... send, put, get through peer's modules; opal_progress() ...
 *   mca_btl_base_finalize();
 */
#ifndef OPAL_MCA_BTL_BASE_BASE_H
#define OPAL_MCA_BTL_BASE_BASE_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/class/opal_list.h"
#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/btl/btl.h"

OPAL_DECLSPEC extern mca_base_framework_t opal_btl_base_framework;

/* ---------------------------------------------------- active messages */

typedef struct mca_btl_base_am_entry_t {
    mca_btl_base_am_fn_t cbfunc;
    void *cbdata;
} mca_btl_base_am_entry_t;

/* Indexed by tag; an entry with a NULL cbfunc has no owner. Components
 * read it on every received message (mca_btl_base_am_dispatch). */
OPAL_DECLSPEC extern mca_btl_base_am_entry_t mca_btl_base_am_table[256];

/* Makes cbfunc the receiver of messages with tag. OPAL_ERR_EXISTS when the
 * tag has a callback already, OPAL_ERR_BAD_PARAM for a NULL cbfunc. Tags
 * are shared by every module; register before mca_btl_base_add_procs so
 * that no message arrives for a tag nobody listens to. */
OPAL_DECLSPEC int mca_btl_base_am_register(mca_btl_base_tag_t tag, mca_btl_base_am_fn_t cbfunc,
                                           void *cbdata);

/* Removes tag's callback (OPAL_ERR_NOT_FOUND when there is none). */
OPAL_DECLSPEC int mca_btl_base_am_deregister(mca_btl_base_tag_t tag);

/* Counts, per tag, messages that arrived with no callback registered; the
 * first one per tag is reported at verbosity 0 naming tag and sender. */
OPAL_DECLSPEC void mca_btl_base_am_unclaimed(struct mca_btl_base_module_t *btl,
                                             const mca_btl_base_receive_descriptor_t *desc);

/* How many messages with tag arrived with no callback registered since
 * mca_btl_base_init (counted by mca_btl_base_am_unclaimed). */
OPAL_DECLSPEC uint64_t mca_btl_base_am_unclaimed_count(mca_btl_base_tag_t tag);

/* What a component calls for each received message: desc->cbdata is
 * filled here. */
static inline void mca_btl_base_am_dispatch(struct mca_btl_base_module_t *btl,
                                            mca_btl_base_receive_descriptor_t *desc)
{
    const mca_btl_base_am_entry_t *entry = &mca_btl_base_am_table[desc->tag];
    if (OPAL_LIKELY(NULL != entry->cbfunc)) {
        desc->cbdata = entry->cbdata;
        entry->cbfunc(btl, desc);
    } else {
        mca_btl_base_am_unclaimed(btl, desc);
    }
}

/* ------------------------------------------------------------ variables */

/* Registers the standard variables of a component, bound to the fields
 * of module (its default module, whose values its real modules copy):
 * btl_<comp>_eager_limit, _max_send_size, _rdma_pipeline_send_length,
 * _rdma_pipeline_frag_size, _min_rdma_pipeline_size, _put_limit,
 * _get_limit, _exclusivity, _latency, _bandwidth, _flags. Call from the
 * component's register hook after setting module's defaults. */
OPAL_DECLSPEC int mca_btl_base_param_register(const mca_base_component_t *component,
                                              mca_btl_base_module_t *module);

/* Checks what the variables made of module, with a warning naming the
 * variable and where its value came from for what it changes: flags the
 * component cannot honour (not in capabilities, the flags it supports)
 * are cleared; an eager limit above the max send size is lowered to it;
 * an rdma pipeline fragment above the put / get limit is lowered to it.
 * Put / get limits and the fragment size of 0 (no limit) become SIZE_MAX,
 * alignments of 0 become 1. OPAL_ERR_BAD_VALUE (after saying why) when a
 * module that sends has a max send size of 0. Call from btl_init before
 * copying the defaults into a real module. */
OPAL_DECLSPEC int mca_btl_base_param_verify(mca_btl_base_module_t *module, uint32_t capabilities);

/* For a component's btl_init that needs the job (its peers, the session
 * directory, the modex): true when opal_proc describes a job; otherwise
 * declines for component, saying that there is no job (opal_info, or a
 * program that did not call orte_init), and returns false. */
OPAL_DECLSPEC bool mca_btl_base_require_job(const mca_base_component_t *component);

/* True when the btl component called name was opened (is in the
 * framework's list): for a component that steps aside for another. */
OPAL_DECLSPEC bool mca_btl_base_component_opened(const char *name);

/* Writes why a peer cannot be reached into *why (nothing when why is
 * NULL), cut at the reason's size. */
OPAL_DECLSPEC void mca_btl_base_reason_set(mca_btl_base_reason_t *why, const char *format, ...)
    OPAL_PRINTF_LIKE(2, 3);

/* The add_procs loop of a btl that reaches peers by rank: procs[i] that is
 * this process (my_rank) is left to btl/self, with that reason; for every
 * other, add(module, rank, why) returns the endpoint (marked as added by
 * the caller's own flag) or NULL with why filled, and the endpoint goes
 * into endpoints[i] and reachable, or the reason into reasons[i] (when
 * reasons is not NULL). The caller holds its module's lock. */
typedef struct mca_btl_base_endpoint_t *(*mca_btl_base_add_rank_fn_t)(void *module, uint32_t rank,
                                                                      mca_btl_base_reason_t *why);
OPAL_DECLSPEC int
mca_btl_base_add_procs_by_rank(void *module, uint32_t my_rank, size_t nprocs, opal_proc_t **procs,
                               struct mca_btl_base_endpoint_t **endpoints, opal_bitmap_t *reachable,
                               mca_btl_base_reason_t *reasons, mca_btl_base_add_rank_fn_t add);

/* btl_base_verbose's stream (opal_output); -1 before register. */
#define mca_btl_base_output (opal_btl_base_framework.framework_output)

/* ------------------------------------------------------------ selection */

/* A module kept by mca_btl_base_init. */
typedef struct mca_btl_base_selected_module_t {
    opal_list_item_t super;
    mca_btl_base_component_t *btl_component;
    mca_btl_base_module_t *btl_module;
} mca_btl_base_selected_module_t;
OBJ_CLASS_DECLARATION(mca_btl_base_selected_module_t);

/* mca_btl_base_selected_module_t, in the order components were opened,
 * filled by mca_btl_base_init. */
OPAL_DECLSPEC extern opal_list_t mca_btl_base_modules_initialized;

/* The btl_transport of the first initialised module of component (a
 * string owned by the module: valid while it is), or NULL when it has
 * none or no module initialised. */
OPAL_DECLSPEC const char *mca_btl_base_transport(const char *component);

/* Opens the framework (the "btl" variable picks the components), calls
 * every component's btl_init and keeps the modules they return, and
 * registers the components' progress functions. A component that returns
 * no module is closed with its reason recorded (opal_info --selected and
 * btl_base_verbose show it). OPAL_ERR_NOT_FOUND, after saying why each
 * component did not run, when no module at all is left. */
OPAL_DECLSPEC int mca_btl_base_init(bool enable_progress_threads, bool enable_mpi_threads);

/* Installs the error callback of every module (NULL removes them);
 * OPAL_ERR_NOT_INITIALIZED before mca_btl_base_init. */
OPAL_DECLSPEC int mca_btl_base_register_error_cb(mca_btl_base_module_error_cb_fn_t cbfunc);

/* Releases every peer, finalizes every module, unregisters progress and
 * closes the framework. Safe to call when not initialised. */
OPAL_DECLSPEC int mca_btl_base_finalize(void);

#include "opal/mca/btl/base/btl_base_mux.h"

#endif /* OPAL_MCA_BTL_BASE_BASE_H */
