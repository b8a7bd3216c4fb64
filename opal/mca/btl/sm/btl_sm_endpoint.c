/*
 * btl/sm's peers: deciding whether a peer is reachable (same node, same
 * /dev/shm, same pid namespace), mapping its segment, watching that it
 * is alive, and dropping it when it finalizes, dies or misbehaves.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "opal/mca/btl/sm/btl_sm.h"
#include "opal/runtime/opal_progress.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_pid.h"

#if defined(HAVE_VALGRIND_VALGRIND_H)
#include <valgrind/valgrind.h>
#define SM_UNDER_VALGRIND() RUNNING_ON_VALGRIND
#else
#define SM_UNDER_VALGRIND() 0
#endif

static void endpoint_construct(mca_btl_sm_endpoint_t *ep)
{
    ep->proc = NULL;
    ep->rank = 0;
    ep->pid = 0;
    ep->pidfd = -1;
    atomic_init(&ep->state, SM_EP_FAILED);
    ep->dropped = false;
    ep->reason[0] = '\0';
    ep->added = false;
    ep->seg_name[0] = '\0';
    ep->seg_base = NULL;
    ep->seg_size = 0;
    ep->seg_hdr = NULL;
    memset(&ep->layout, 0, sizeof(ep->layout));
    ep->frag_count = 0;
    memset(&ep->fifo, 0, sizeof(ep->fifo));
    memset(&ep->fbox_out, 0, sizeof(ep->fbox_out));
    ep->fbox_out_on = false;
    ep->fifo_sends = 0;
    ep->held = 0;
    OBJ_CONSTRUCT(&ep->inflight, opal_list_t);
    OBJ_CONSTRUCT(&ep->pending, opal_list_t);
    OBJ_CONSTRUCT(&ep->streams, opal_list_t);
    OBJ_CONSTRUCT(&ep->work_link, opal_list_item_t);
    ep->on_work = false;
    ep->faults_sent = 0;
    memset(&ep->fbox_in, 0, sizeof(ep->fbox_in));
    ep->fbox_in_on = false;
    ep->fbox_in_busy = false;
    atomic_init(&ep->fbox_in_awaited, false);
    ep->cma = false;
    ep->wake_fd = -1;
}

static void endpoint_destruct(mca_btl_sm_endpoint_t *ep)
{
    mca_btl_sm_segment_detach(ep);
    if (ep->pidfd >= 0) {
        close(ep->pidfd);
    }
    if (ep->wake_fd >= 0) {
        close(ep->wake_fd);
    }
    OBJ_DESTRUCT(&ep->inflight);
    OBJ_DESTRUCT(&ep->pending);
    OBJ_DESTRUCT(&ep->streams);
    OBJ_DESTRUCT(&ep->work_link);
    if (NULL != ep->proc) {
        OBJ_RELEASE(ep->proc);
    }
}

OBJ_CLASS_INSTANCE(mca_btl_base_endpoint_t, opal_list_item_t, endpoint_construct,
                   endpoint_destruct);

/* A pidfd for pid, or -1 (then liveness falls back to kill(pid, 0), and
 * blocking mode to spinning). Valgrind (3.19) does not know the pidfd
 * system calls and warns about each: under it they are not tried. */
static int pidfd_open_compat(pid_t pid)
{
#if defined(SYS_pidfd_open)
    if (SM_UNDER_VALGRIND()) {
        errno = ENOSYS;
        return -1;
    }
    return (int) syscall(SYS_pidfd_open, pid, 0);
#else
    (void) pid;
    errno = ENOSYS;
    return -1;
#endif
}

/* Reads and checks what rank published. */
static int modex_fetch(uint32_t rank, sm_modex_t *modex, char *why, size_t why_size)
{
    void *value = NULL;
    size_t size = 0;
    const opal_proc_job_info_t *job = opal_proc_job_info();
    int rc = opal_modex_recv(rank, SM_MODEX_KEY, &value, &size,
                             NULL != job ? job->lookup_timeout_ns : OPAL_MODEX_WAIT_FOREVER);
    if (OPAL_SUCCESS != rc) {
        snprintf(why, why_size, "peer published no sm segment (sm is not running there: %s)",
                 opal_strerror(rc));
        return OPAL_ERR_UNREACH;
    }
    rc = mca_btl_sm_modex_check(value, size, modex, why, why_size);
    free(value);
    return rc;
}

mca_btl_sm_endpoint_t *mca_btl_sm_endpoint_get(uint32_t rank, opal_proc_t *proc, char *why,
                                               size_t why_size)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    if (rank >= sm->job_size) {
        snprintf(why, why_size, "rank %u is outside the job of %u", rank, sm->job_size);
        return NULL;
    }
    if (NULL != sm->ep_by_rank[rank]) {
        return sm->ep_by_rank[rank];
    }
    if (rank == sm->my_rank) {
        snprintf(why, why_size, "this process itself (btl self reaches it)");
        return NULL;
    }
    if (NULL == proc) {
        int rc = opal_proc_for_rank(rank, &proc);
        if (OPAL_SUCCESS != rc) {
            snprintf(why, why_size, "peer's process information is unavailable: %s",
                     opal_strerror(rc));
            return NULL;
        }
    }
    if (!(proc->proc_locality & OPAL_PROC_ON_NODE)) {
        snprintf(why, why_size, "peer is on another node");
        return NULL;
    }
    sm_modex_t modex;
    if (OPAL_SUCCESS != modex_fetch(rank, &modex, why, why_size)) {
        return NULL;
    }
    const char *mismatch = mca_btl_sm_identity_compare(&sm->identity, &modex.identity);
    if (NULL != mismatch) {
        snprintf(why, why_size, "%s", mismatch);
        return NULL;
    }
    mca_btl_sm_endpoint_t *ep = OBJ_NEW(mca_btl_base_endpoint_t);
    if (NULL == ep) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    OBJ_RETAIN(proc);
    ep->proc = proc;
    ep->rank = rank;
    ep->pid = (pid_t) modex.pid;
    if (OPAL_SUCCESS != mca_btl_sm_segment_attach(ep, &modex, why, why_size)) {
        OBJ_RELEASE(ep);
        return NULL;
    }
    ep->pidfd = pidfd_open_compat(ep->pid);
    if (ep->pidfd < 0 && ESRCH == errno) {
        snprintf(why, why_size, "peer (pid %d) is no longer running", (int) ep->pid);
        OBJ_RELEASE(ep);
        return NULL;
    }
    ep->cma = SM_SINGLE_COPY_CMA == mca_btl_sm_params.single_copy_mechanism;
    atomic_store(&ep->state, SM_EP_CONNECTED);
    if (mca_btl_sm_params.blocking) {
        mca_btl_sm_wake_connect(ep, modex.wake_fd);
    }
    sm->ep_by_rank[rank] = ep;
    opal_list_append(&sm->endpoints, &ep->super);
    SM_VERBOSE(20, "btl sm: rank %u (pid %d) reached through /dev/shm%s", rank, (int) ep->pid,
               ep->seg_name);
    return ep;
}

void mca_btl_sm_endpoint_drop(mca_btl_sm_endpoint_t *ep, int state, const char *format, ...)
{
    /* CONNECTED -> CLOSED or FAILED, and CLOSED -> FAILED (a peer that
     * finalized is still read from until it is gone, and may misbehave
     * meanwhile); nothing else. */
    int current = atomic_load(&ep->state);
    do {
        if (SM_EP_FAILED == current || current == state ||
            (SM_EP_CLOSED == current && SM_EP_FAILED != state)) {
            return;
        }
    } while (!atomic_compare_exchange_strong(&ep->state, &current, state));
    va_list ap;
    va_start(ap, format);
    vsnprintf(ep->reason, sizeof(ep->reason), format, ap);
    va_end(ap);
    ep->dropped = false;
    /* Release pairs with progress's acquire load: the reason is there. */
    atomic_store_explicit(&mca_btl_sm.drops_pending, true, memory_order_release);
}

void mca_btl_sm_endpoint_add_work(mca_btl_sm_endpoint_t *ep)
{
    if (!ep->on_work) {
        opal_list_append(&mca_btl_sm.work_eps, &ep->work_link);
        ep->on_work = true;
    }
}

/* Completes what waited on ep's send side (lock held, dropped around
 * callbacks). */
static void fail_pending(mca_btl_sm_endpoint_t *ep)
{
    mca_btl_sm_frag_reclaim(ep);
    opal_list_item_t *item;
    while (NULL != (item = opal_list_remove_first(&ep->pending))) {
        mca_btl_sm_frag_t *frag = (mca_btl_sm_frag_t *) item;
        frag->flags &= ~SM_FRAG_PENDING;
        if (frag->flags & SM_FRAG_CALLBACK) {
            frag->flags &= ~SM_FRAG_CALLBACK;
            SM_UNLOCK();
            frag->base.des_cbfunc(&mca_btl_sm.super, ep, &frag->base, OPAL_ERR_UNREACH);
            SM_LOCK();
        }
        if (!(frag->flags & SM_FRAG_USER)) {
            mca_btl_sm_frag_return(frag);
        }
    }
}

static void stop_polling(mca_btl_sm_endpoint_t *ep)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    for (uint32_t i = 0; i < sm->fbox_in_count; ++i) {
        if (sm->fbox_in_eps[i] == ep) {
            sm->fbox_in_eps[i] = sm->fbox_in_eps[--sm->fbox_in_count];
            break;
        }
    }
}

/* True when ep's process has exited. */
static bool process_exited(const mca_btl_sm_endpoint_t *ep)
{
    if (ep->pidfd >= 0) {
        /* A pidfd is readable once its process has exited. */
        struct pollfd pfd = {.fd = ep->pidfd, .events = POLLIN, .revents = 0};
        return 1 == poll(&pfd, 1, 0);
    }
    return opal_pid_exited(ep->pid);
}

/* Gives back what a dropped peer held here, once it was reported (lock
 * held): a server that outlives thousands of clients must not keep a
 * descriptor, a mapping and a polled fast box for each. Its segment is
 * unmapped and its descriptors closed; our fast box to it and the credit
 * its box to us took are reused when it can no longer touch them (it
 * finalized or exited; a peer dropped for scribbling that still runs
 * keeps them). The endpoint itself stays (the multiplexer points at it):
 * sends to it fail as unreachable. */
static void retire(mca_btl_sm_endpoint_t *ep, int state)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    stop_polling(ep);
    const bool gone = SM_EP_CLOSED == state || process_exited(ep);
    if (gone && ep->fbox_out_on) {
        sm->fbox_out_free[sm->fbox_out_free_count++] = ep->fbox_out_index;
        ep->fbox_out_on = false;
    }
    if (gone && ep->fbox_in_on && NULL != sm->seg_hdr) {
        /* Relaxed: a count, as where peers take it. */
        atomic_fetch_add_explicit(&sm->seg_hdr->fbox_in_available, 1, memory_order_relaxed);
    }
    ep->fbox_in_on = false;
    if (ep->pidfd >= 0) {
        close(ep->pidfd);
        ep->pidfd = -1;
    }
    if (ep->wake_fd >= 0) {
        close(ep->wake_fd);
        ep->wake_fd = -1;
    }
    mca_btl_sm_segment_detach(ep);
}

int mca_btl_sm_endpoint_process_drops(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    int events = 0;
    atomic_store_explicit(&sm->drops_pending, false, memory_order_relaxed);
    /* Under the lock, dropped around callbacks: another thread may add
     * endpoints meanwhile (at the end of the list; only this loop removes
     * one, the one it stands on, once the lock is back). */
    SM_LOCK();
    opal_list_item_t *next;
    for (opal_list_item_t *item = opal_list_get_first(&sm->endpoints);
         item != opal_list_get_end(&sm->endpoints); item = next) {
        next = opal_list_get_next(item);
        mca_btl_sm_endpoint_t *ep = (mca_btl_sm_endpoint_t *) item;
        int state = atomic_load(&ep->state);
        if (SM_EP_CONNECTED == state || ep->dropped) {
            continue;
        }
        ep->dropped = true;
        ++events;
        if (SM_EP_FAILED == state) {
            /* A closed peer is still read from: what it sent before
             * finalizing is delivered. A failed one is not. */
            stop_polling(ep);
        } else {
            /* ... and delivered now, before anyone hears it is gone: it
             * stored CLOSED after its last message. */
            SM_UNLOCK();
            mca_btl_sm_recv_drain(ep);
            SM_LOCK();
            /* What it sent last may have been malformed: then it is
             * reported failed, for that, not finalized. */
            state = atomic_load(&ep->state);
            ep->dropped = true;
        }
        fail_pending(ep);
        SM_UNLOCK();
        mca_btl_sm_emu_fail(ep, OPAL_ERR_UNREACH);
        if (ep->pidfd >= 0 && mca_btl_sm_params.blocking) {
            /* Its exit would keep the pidfd readable: stop watching. */
            (void) opal_progress_fd_unregister(ep->pidfd);
        }
        char info[MCA_BTL_BASE_REASON_MAX + 8];
        snprintf(info, sizeof(info), "sm: %s", ep->reason);
        if (SM_EP_CLOSED == state) {
            SM_VERBOSE(20, "btl %s", info);
            if (NULL != sm->error_cb) {
                sm->error_cb(&sm->super, MCA_BTL_ERROR_FLAGS_PEER_CLOSED, ep->proc, info);
            }
        } else {
            SM_VERBOSE(1, "btl %s", info);
            if (NULL != sm->error_cb) {
                sm->error_cb(&sm->super, MCA_BTL_ERROR_FLAGS_PEER_FAILED, ep->proc, info);
            } else {
                opal_output(0, "btl %s", info);
            }
        }
        SM_LOCK();
        retire(ep, state);
        next = opal_list_get_next(item);
        opal_list_remove_item(&sm->endpoints, item);
        opal_list_append(&sm->retired_eps, item);
    }
    SM_UNLOCK();
    return events;
}

int mca_btl_sm_endpoint_check_peers(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    int events = 0;
    mca_btl_sm_endpoint_t *ep;
    SM_LOCK();
    OPAL_LIST_FOREACH (ep, &sm->endpoints, mca_btl_sm_endpoint_t) {
        if (SM_EP_CONNECTED != atomic_load(&ep->state)) {
            continue;
        }
        const bool dead = process_exited(ep);
        /* Read after the pid: a peer stores CLOSED before it exits, so a
         * dead peer that finalized is seen as closed. Acquire pairs with
         * its release store. */
        uint32_t state = atomic_load_explicit(&ep->seg_hdr->state, memory_order_acquire);
        if (SM_SEG_STATE_CLOSED == state) {
            mca_btl_sm_endpoint_drop(ep, SM_EP_CLOSED, "rank %u finalized", ep->rank);
            ++events;
        } else if (dead) {
            mca_btl_sm_endpoint_drop(ep, SM_EP_FAILED, "rank %u (pid %d) exited without finalizing",
                                     ep->rank, (int) ep->pid);
            ++events;
        } else if (SM_SEG_STATE_ALIVE != state) {
            mca_btl_sm_endpoint_drop(ep, SM_EP_FAILED,
                                     "rank %u's segment header was overwritten (state %u)",
                                     ep->rank, state);
            ++events;
        }
    }
    SM_UNLOCK();
    return events;
}
