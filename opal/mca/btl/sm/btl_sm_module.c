/*
 * btl/sm's module: its operation table, reachability (add_procs /
 * del_procs), the error callback, flush and finalize.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/sm/btl_sm.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/opal_timer.h"

/* How long finalize waits for peers to make room for accepted sends. */
#define SM_DRAIN_TIMEOUT_NS (UINT64_C(10) * 1000000000u)

static int sm_add_procs(mca_btl_base_module_t *btl, size_t nprocs, opal_proc_t **procs,
                        mca_btl_base_endpoint_t **endpoints, opal_bitmap_t *reachable,
                        mca_btl_base_reason_t *reasons);
static int sm_del_procs(mca_btl_base_module_t *btl, size_t nprocs, opal_proc_t **procs,
                        mca_btl_base_endpoint_t **endpoints);
static int sm_finalize(mca_btl_base_module_t *btl);
static int sm_register_error(mca_btl_base_module_t *btl, mca_btl_base_module_error_cb_fn_t cbfunc);
static int sm_flush(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *endpoint);
static void sm_dump(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *endpoint, char *buf,
                    size_t size);

mca_btl_sm_module_t mca_btl_sm = {
    .super =
        {
            .btl_component = &mca_btl_sm_component,
            .btl_add_procs = sm_add_procs,
            .btl_del_procs = sm_del_procs,
            .btl_finalize = sm_finalize,
            .btl_register_error = sm_register_error,
            .btl_alloc = mca_btl_sm_alloc,
            .btl_free = mca_btl_sm_free,
            .btl_prepare_src = mca_btl_sm_prepare_src,
            .btl_send = mca_btl_sm_send,
            .btl_sendi = mca_btl_sm_sendi,
            .btl_put = mca_btl_sm_put,
            .btl_get = mca_btl_sm_get,
            .btl_register_mem = mca_btl_sm_register_mem,
            .btl_deregister_mem = mca_btl_sm_deregister_mem,
            .btl_flush = sm_flush,
            .btl_dump = sm_dump,
        },
    .wake_fd = -1,
};

static void set_reason(mca_btl_base_reason_t *reasons, size_t i, const char *text)
{
    if (NULL != reasons) {
        snprintf(reasons[i].text, sizeof(reasons[i].text), "%s", text);
    }
}

static int sm_add_procs(mca_btl_base_module_t *btl, size_t nprocs, opal_proc_t **procs,
                        mca_btl_base_endpoint_t **endpoints, opal_bitmap_t *reachable,
                        mca_btl_base_reason_t *reasons)
{
    (void) btl;
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    for (size_t i = 0; i < nprocs; ++i) {
        opal_proc_t *proc = procs[i];
        char why[MCA_BTL_BASE_REASON_MAX];
        if (proc->proc_name.jobid != sm->jobid) {
            set_reason(reasons, i, "peer is in another job");
            continue;
        }
        SM_LOCK();
        mca_btl_sm_endpoint_t *ep =
            mca_btl_sm_endpoint_get(proc->proc_name.vpid, proc, why, sizeof(why));
        if (NULL != ep && SM_EP_CONNECTED != ep->state) {
            snprintf(why, sizeof(why), "peer was dropped: %.*s",
                     (int) (sizeof(why) - sizeof("peer was dropped: ")), ep->reason);
            ep = NULL;
        }
        if (NULL != ep) {
            ep->added = true;
        }
        SM_UNLOCK();
        if (NULL == ep) {
            set_reason(reasons, i, why);
            SM_VERBOSE(10, "btl sm: does not reach rank %u: %s", proc->proc_name.vpid, why);
            continue;
        }
        endpoints[i] = ep;
        int rc = opal_bitmap_set_bit(reachable, (int) i);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    return OPAL_SUCCESS;
}

static int sm_del_procs(mca_btl_base_module_t *btl, size_t nprocs, opal_proc_t **procs,
                        mca_btl_base_endpoint_t **endpoints)
{
    (void) btl;
    (void) procs;
    /* The connection stays until finalize: the peer may still be sending,
     * and adding the proc again returns the same endpoint. */
    SM_LOCK();
    for (size_t i = 0; NULL != endpoints && i < nprocs; ++i) {
        if (NULL != endpoints[i]) {
            endpoints[i]->added = false;
        }
    }
    SM_UNLOCK();
    return OPAL_SUCCESS;
}

static int sm_register_error(mca_btl_base_module_t *btl, mca_btl_base_module_error_cb_fn_t cbfunc)
{
    (void) btl;
    mca_btl_sm.error_cb = cbfunc;
    return OPAL_SUCCESS;
}

static int sm_flush(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *endpoint)
{
    (void) btl;
    (void) mca_btl_sm_cma_flush();
    int rc = mca_btl_sm_emu_flush(endpoint);
    while (OPAL_SUCCESS == rc && mca_btl_sm_split_busy(endpoint)) {
        opal_progress();
    }
    return rc;
}

static void sm_dump(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *endpoint, char *buf,
                    size_t size)
{
    (void) btl;
    mca_btl_sm_endpoint_t *ep = endpoint;
    int state = ep->state;
    const char *what = SM_EP_CONNECTED == state ? "connected"
                       : SM_EP_CLOSED == state  ? "closed"
                       : SM_EP_FAILED == state  ? "failed"
                                                : "?";
    SM_LOCK();
    char box[64] = "none";
    if (ep->fbox_out_on) {
        snprintf(box, sizeof(box), "%" PRIu32 " of %" PRIu32 " bytes unread as last seen",
                 ep->fbox_out.end - ep->fbox_out.start, ep->fbox_out.size);
    }
    snprintf(buf, size,
             "%s; %" PRIu32 " fragments held, %zu in flight, %zu waiting for room, %zu put / get "
             "streams; fast box out: %s, in: %s",
             what, ep->held, opal_list_get_size(&ep->inflight), opal_list_get_size(&ep->pending),
             opal_list_get_size(&ep->streams), box, ep->fbox_in_on ? "on" : "none");
    SM_UNLOCK();
}

/* Sends that were accepted but wait for room (pending descriptors, put /
 * get streams) still go out before the segment closes: the caller was
 * told they would. Bounded: peers that die are dropped by progress, and
 * one that stays alive but never reads is given up on. */
static void drain(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    const uint64_t deadline = opal_timer_ns() + SM_DRAIN_TIMEOUT_NS;
    for (;;) {
        bool waiting = false;
        mca_btl_sm_endpoint_t *ep;
        SM_LOCK();
        OPAL_LIST_FOREACH (ep, &sm->endpoints, mca_btl_sm_endpoint_t) {
            if (SM_EP_CONNECTED == ep->state &&
                (!opal_list_is_empty(&ep->pending) || !opal_list_is_empty(&ep->streams))) {
                waiting = true;
                break;
            }
        }
        SM_UNLOCK();
        /* Shared put / get whose peer still copies: their callbacks are
         * owed too. */
        if (!waiting && !mca_btl_sm_split_busy(NULL) &&
            0 == atomic_load_explicit(&sm->cma_batched, memory_order_relaxed)) {
            return;
        }
        if (opal_timer_ns() > deadline) {
            /* Lost: said, naming who did not read them. */
            SM_LOCK();
            OPAL_LIST_FOREACH (ep, &sm->endpoints, mca_btl_sm_endpoint_t) {
                size_t queued = opal_list_get_size(&ep->pending);
                if (SM_EP_CONNECTED == ep->state && 0 != queued) {
                    opal_output(0,
                                "btl sm: finalize gave up on %zu send%s to rank %u, which made "
                                "no room for %s in %u s",
                                queued, 1 == queued ? "" : "s", ep->rank,
                                1 == queued ? "it" : "them",
                                (unsigned) (SM_DRAIN_TIMEOUT_NS / 1000000000u));
                }
            }
            SM_UNLOCK();
            SM_VERBOSE(1, "btl sm: finalize gave up on what peers did not make room for");
            return;
        }
        mca_btl_sm_component_progress();
    }
}

static int sm_finalize(mca_btl_base_module_t *btl)
{
    (void) btl;
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    if (!sm->initialized) {
        return OPAL_SUCCESS;
    }
    if (NULL != sm->seg_hdr) {
        drain();
    }
    /* Peers see CLOSED before anything else goes: our exit that follows
     * is not a failure to them. */
    if (NULL != sm->seg_hdr) {
        atomic_store_explicit(&sm->seg_hdr->state, SM_SEG_STATE_CLOSED, memory_order_release);
    }
    mca_btl_sm_wake_fini();
    mca_btl_sm_endpoint_t *ep;
    if (mca_btl_sm_params.blocking) {
        OPAL_LIST_FOREACH (ep, &sm->endpoints, mca_btl_sm_endpoint_t) {
            if (ep->pidfd >= 0 && !ep->dropped) {
                (void) opal_progress_fd_unregister(ep->pidfd);
            }
        }
    }
    mca_btl_sm_rdma_fini();
    opal_list_item_t *item;
    while (NULL != (item = opal_list_remove_first(&sm->work_eps))) {
        mca_btl_sm_endpoint_t *owner = SM_CONTAINER_OF(item, mca_btl_sm_endpoint_t, work_link);
        owner->on_work = false;
    }
    OPAL_LIST_FOREACH (ep, &sm->endpoints, mca_btl_sm_endpoint_t) {
        /* The descriptors are taken back by mca_btl_sm_frags_fini. */
        while (NULL != opal_list_remove_first(&ep->inflight)) {
        }
        while (NULL != opal_list_remove_first(&ep->pending)) {
        }
    }
    while (NULL != (item = opal_list_remove_first(&sm->endpoints))) {
        OBJ_RELEASE(item);
    }
    while (NULL != (item = opal_list_remove_first(&sm->retired_eps))) {
        OBJ_RELEASE(item);
    }
    mca_btl_sm_frags_fini();
    mca_btl_sm_segment_destroy();
    free(sm->ep_by_rank);
    free(sm->fbox_in_eps);
    free(sm->rank_unreachable);
    free(sm->fbox_out_free);
    sm->fbox_out_free = NULL;
    sm->fbox_out_free_count = 0;
    sm->ep_by_rank = NULL;
    sm->fbox_in_eps = NULL;
    sm->rank_unreachable = NULL;
    sm->fbox_in_count = 0;
    sm->inflight_total = 0;
    OBJ_DESTRUCT(&sm->endpoints);
    OBJ_DESTRUCT(&sm->retired_eps);
    OBJ_DESTRUCT(&sm->work_eps);
    OBJ_DESTRUCT(&sm->lock);
    sm->error_cb = NULL;
    sm->initialized = false;
    return OPAL_SUCCESS;
}
