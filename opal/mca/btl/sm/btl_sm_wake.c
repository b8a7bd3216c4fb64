/*
 * btl/sm's blocking mode (btl_sm_blocking): an idle process sleeps in
 * opal_progress_wait until a peer posts to it.
 *
 * Each process has an eventfd registered with the progress engine, with
 * an arm hook the engine calls just before it would sleep. Each peer gets
 * its own copy of the eventfd with pidfd_getfd (which needs the same
 * permission as CMA). The handshake is the classic store-fence-load on
 * both sides, so that no post is missed:
 *   receiver, arming:  armed = 1; fence; anything in its FIFO or fast
 *                      boxes? then do not sleep
 *   sender:            publish the message; fence; if armed, clear it and
 *                      write the receiver's eventfd
 * Either the receiver's look finds the message, or the sender finds the
 * flag and wakes it. A busy loop of opal_progress() never arms, so it
 * pays nothing. A process sleeps only once every local peer has tried to
 * get its eventfd (a count in its segment, bumped after the try) and none
 * failed; until then, and for good when one failed (it says so in the
 * segment), the arm hook refuses the sleep: opal_progress_wait spins,
 * with a notice at verbosity.
 *
 * Without blocking mode the eventfd is registered too and kept readable,
 * so that a caller of opal_progress_wait spins through sm instead of
 * sleeping through its messages. Peers' pidfds are watched in blocking
 * mode so that a peer's death wakes a sleeper.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "opal/mca/btl/sm/btl_sm.h"
#include "opal/runtime/opal_progress.h"

static void wake_write(int fd)
{
    uint64_t one = 1;
    /* EAGAIN only when the counter is about to overflow: already awake. */
    while (write(fd, &one, sizeof(one)) < 0 && EINTR == errno) {
    }
}

static int wake_cb(int fd, uint32_t events, void *context)
{
    (void) events;
    (void) context;
    if (mca_btl_sm.wake_sleep_ok) {
        uint64_t value;
        while (read(fd, &value, sizeof(value)) < 0 && EINTR == errno) {
        }
    }
    /* After a refused arm the engine does not progress by itself. */
    return mca_btl_sm_component_progress();
}

static int pidfd_cb(int fd, uint32_t events, void *context)
{
    (void) fd;
    (void) events;
    (void) context;
    return mca_btl_sm_endpoint_check_peers();
}

/* Connects to every local peer not reached yet, taking its eventfd and
 * counting this process ready in its segment. A peer counts itself ready
 * in ours only once it connected to us, and endpoints are made lazily (at
 * the first send or receive), so in a job where not everyone talks to
 * everyone (a tree of RPCs) nobody would ever sleep. Each process does
 * it at its first idle moment; a peer that never idles and never sends
 * to us keeps us spinning, as before. */
static void connect_local_peers(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    sm->wake_peers_connected = true;
    for (uint32_t rank = 0; rank < sm->job_size; ++rank) {
        if (rank == sm->my_rank || NULL != sm->ep_by_rank[rank] || sm->rank_unreachable[rank]) {
            continue;
        }
        opal_proc_t *proc = NULL;
        if (OPAL_SUCCESS != opal_proc_for_rank(rank, &proc) ||
            !(proc->proc_locality & OPAL_PROC_ON_NODE)) {
            continue;
        }
        char why[MCA_BTL_BASE_REASON_MAX];
        SM_LOCK();
        mca_btl_sm_endpoint_t *ep = mca_btl_sm_endpoint_get(rank, proc, why, sizeof(why));
        SM_UNLOCK();
        if (NULL == ep) {
            SM_VERBOSE(10, "btl sm: blocking mode cannot connect to rank %u: %s", rank, why);
        }
    }
}

/* Whether this process may sleep now; decided once for good. */
static bool sleep_allowed(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    if (OPAL_LIKELY(sm->wake_sleep_ok) || sm->wake_never_sleep) {
        return sm->wake_sleep_ok;
    }
    if (!sm->wake_peers_connected) {
        connect_local_peers();
    }
    sm_seg_header_t *hdr = sm->seg_hdr;
    /* Acquire pairs with the peers' release increments. */
    uint32_t ready = atomic_load_explicit(&hdr->wake_ready, memory_order_acquire);
    if (0 != atomic_load_explicit(&hdr->wake_unreachable, memory_order_relaxed)) {
        sm->wake_never_sleep = true;
        SM_VERBOSE(1, "btl sm: a peer cannot wake rank %u: it spins instead of sleeping",
                   sm->my_rank);
        return false;
    }
    /* The eventfd is still readable from init: the next wait drains it
     * (wake_cb) and progresses, then sleeps. */
    sm->wake_sleep_ok = ready + 1 >= sm->local_size;
    return sm->wake_sleep_ok;
}

/* The engine's arm hook: OPAL_SUCCESS when it may sleep (a post will
 * write the eventfd), OPAL_ERR_RESOURCE_BUSY when not (work is waiting,
 * or a peer could not wake us). */
static int wake_arm(int fd, void *context)
{
    (void) fd;
    (void) context;
    sm_seg_header_t *hdr = mca_btl_sm.seg_hdr;
    if (!sleep_allowed() ||
        0 != atomic_load_explicit(&mca_btl_sm.cma_batched, memory_order_relaxed) ||
        0 != atomic_load_explicit(&mca_btl_sm.split_fresh_count, memory_order_relaxed)) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    atomic_store_explicit(&hdr->wake_armed, 1, memory_order_relaxed);
    /* Pairs with the sender's fence between its post and its load of
     * wake_armed. */
    atomic_thread_fence(memory_order_seq_cst);
    return mca_btl_sm_recv_pending() ? OPAL_ERR_RESOURCE_BUSY : OPAL_SUCCESS;
}

int mca_btl_sm_wake_init(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    sm->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (sm->wake_fd < 0) {
        opal_output(0, "btl sm: cannot create an eventfd: %s", strerror(errno));
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    sm->wake_sleep_ok = false;
    int rc;
    if (mca_btl_sm_params.blocking) {
        rc = opal_progress_fd_register_armed(sm->wake_fd, wake_cb, wake_arm, NULL);
    } else {
        /* Always readable: opal_progress_wait never sleeps through a
         * message. */
        wake_write(sm->wake_fd);
        rc = opal_progress_fd_register(sm->wake_fd, wake_cb, NULL);
    }
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "btl sm: cannot watch its eventfd: %s", opal_strerror(rc));
        close(sm->wake_fd);
        sm->wake_fd = -1;
        return rc;
    }
    sm->wake_registered = true;
    return OPAL_SUCCESS;
}

void mca_btl_sm_wake_fini(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    if (sm->wake_registered) {
        (void) opal_progress_fd_unregister(sm->wake_fd);
        sm->wake_registered = false;
    }
    if (sm->wake_fd >= 0) {
        close(sm->wake_fd);
        sm->wake_fd = -1;
    }
}

void mca_btl_sm_wake_connect(mca_btl_sm_endpoint_t *ep, int32_t peer_fd)
{
    int err = EBADF;
    if (peer_fd >= 0 && ep->pidfd >= 0) {
#if defined(SYS_pidfd_getfd)
        ep->wake_fd = (int) syscall(SYS_pidfd_getfd, ep->pidfd, peer_fd, 0);
        err = errno;
#else
        err = ENOSYS;
#endif
    }
    if (ep->wake_fd < 0) {
        atomic_store_explicit(&ep->seg_hdr->wake_unreachable, 1, memory_order_relaxed);
        SM_VERBOSE(1, "btl sm: cannot get rank %u's eventfd (%s): it will spin instead of sleeping",
                   ep->rank, strerror(err));
    }
    /* Release pairs with the owner's acquire load in arm: the failure
     * above is visible before the count says we tried. */
    atomic_fetch_add_explicit(&ep->seg_hdr->wake_ready, 1, memory_order_release);
    if (ep->pidfd >= 0) {
        (void) opal_progress_fd_register(ep->pidfd, pidfd_cb, NULL);
    }
}

void mca_btl_sm_wake_disarm(void)
{
    sm_seg_header_t *hdr = mca_btl_sm.seg_hdr;
    if (0 != atomic_load_explicit(&hdr->wake_armed, memory_order_relaxed)) {
        atomic_store_explicit(&hdr->wake_armed, 0, memory_order_relaxed);
    }
}

void mca_btl_sm_wake_peer_slow(mca_btl_sm_endpoint_t *ep)
{
    if (ep->wake_fd < 0) {
        return;
    }
    /* Pairs with the receiver's fence between arming and looking. */
    atomic_thread_fence(memory_order_seq_cst);
    if (0 != atomic_load_explicit(&ep->seg_hdr->wake_armed, memory_order_relaxed) &&
        1 == atomic_exchange_explicit(&ep->seg_hdr->wake_armed, 0, memory_order_relaxed)) {
        wake_write(ep->wake_fd);
    }
}
