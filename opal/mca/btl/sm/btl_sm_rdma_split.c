/*
 * btl/sm: a large put or get shared between the two processes.
 *
 * One CMA call copies with one core, and one core's copy is slower than
 * the memory allows (pages are pinned and copied one at a time). The
 * peer of a large put / get often has nothing better to do: it waits in
 * progress for the reply that follows the transfer. So the requester
 * cuts the transfer into slices and posts an SM_MSG_SPLIT fragment
 * describing it (btl_sm_layout.h); then both processes claim slices with
 * a fetch-and-add on the fragment's counter and copy what they claimed,
 * the requester with process_vm_readv / writev on the owner, the owner
 * the other way round on the requester. The requester claims its slices
 * at its next progress call, not in the put / get call: the owner, which
 * sees the message at once, may take more meanwhile, and the requester's
 * slices of all the transfers posted since go in one CMA call of many
 * iovecs (as btl_sm_rdma.c gathers small ones). Nothing waits for the
 * owner: if it never looks, the requester claims every slice itself; if
 * it took some, the operation completes from the requester's progress
 * once the owner has counted them finished.
 *
 * The owner checks the request against its own registry (index, cookie,
 * range, access) before it copies anything: it only ever moves its own
 * registered memory, as the requester's CMA would. A slice the owner
 * could not copy is marked in the failed mask and copied again by the
 * requester; a malformed message drops the requester as a faulty peer.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <stdlib.h>
#include <sys/uio.h>

#if defined(HAVE_VALGRIND_MEMCHECK_H)
#include <valgrind/memcheck.h>
#endif

#include "opal/mca/btl/sm/btl_sm.h"

/* The owner writes the slices it takes of a get into our memory with its
 * own process_vm_writev, a system call memcheck does not see here: under
 * valgrind those bytes would read as uninitialised. */
#if defined(HAVE_VALGRIND_MEMCHECK_H)
#define SPLIT_MEM_DEFINED(addr, len) ((void) VALGRIND_MAKE_MEM_DEFINED((addr), (len)))
#else
#define SPLIT_MEM_DEFINED(addr, len) ((void) 0)
#endif

/* The requester's private side of a shared operation. */
typedef struct sm_split_op_t {
    opal_free_list_item_t super; /* on split_pending while the owner copies */
    mca_btl_sm_endpoint_t *ep;
    mca_btl_sm_frag_t *frag; /* holds the message, SM_FRAG_USER until the end */
    sm_split_msg_t *msg;
    bool is_get;
    void *local;
    uint64_t remote;
    size_t size;
    uint64_t slice;
    uint32_t slices;
    uint32_t owner_slices; /* claimed by the owner: done when helped reaches it */
    int rc;                /* the requester's own copies */
    int err;               /* errno of a refused CMA */
    mca_btl_base_registration_handle_t *local_handle;
    mca_btl_base_registration_handle_t remote_handle; /* copied: the fallback needs it */
    mca_btl_base_rdma_completion_fn_t cbfunc;
    void *cbcontext, *cbdata;
} sm_split_op_t;

OBJ_CLASS_INSTANCE(sm_split_op_t, opal_free_list_item_t, NULL, NULL);

int mca_btl_sm_split_init(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    OBJ_CONSTRUCT(&sm->split_list, opal_free_list_t);
    OBJ_CONSTRUCT(&sm->split_pending, opal_list_t);
    OBJ_CONSTRUCT(&sm->split_fresh, opal_list_t);
    atomic_store_explicit(&sm->split_waiting, 0, memory_order_relaxed);
    atomic_store_explicit(&sm->split_fresh_count, 0, memory_order_relaxed);
    atomic_store_explicit(&sm->split_slices_own, 0, memory_order_relaxed);
    atomic_store_explicit(&sm->split_calls, 0, memory_order_relaxed);
    sm->split_offered = sm->split_slices_helped = 0;
    atomic_store_explicit(&sm->split_slices_served, 0, memory_order_relaxed);
    return opal_free_list_init(&sm->split_list, sizeof(sm_split_op_t), 0, OBJ_CLASS(sm_split_op_t),
                               0, 0, 8, 0, 32, NULL, NULL, NULL);
}

void mca_btl_sm_split_fini(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    /* Finalize drained progress: what is left belongs to peers that never
     * finished their slices, and is dropped with its endpoints. */
    while (NULL != opal_list_remove_first(&sm->split_pending)) {
    }
    while (NULL != opal_list_remove_first(&sm->split_fresh)) {
    }
    SM_VERBOSE(10,
               "btl sm: shared put/get: %" PRIu64 " offered to peers, %" PRIu64
               " slices of them copied by peers, %" PRIu64 " slices of peers' copied here, %" PRIu64
               " slices of ours in %" PRIu64 " CMA calls",
               sm->split_offered, sm->split_slices_helped,
               (uint64_t) atomic_load_explicit(&sm->split_slices_served, memory_order_relaxed),
               (uint64_t) atomic_load_explicit(&sm->split_slices_own, memory_order_relaxed),
               (uint64_t) atomic_load_explicit(&sm->split_calls, memory_order_relaxed));
    OBJ_DESTRUCT(&sm->split_pending);
    OBJ_DESTRUCT(&sm->split_fresh);
    OBJ_DESTRUCT(&sm->split_list);
}

/* The bytes of slice i. */
static size_t slice_length(uint64_t length, uint64_t slice, uint32_t i)
{
    uint64_t offset = (uint64_t) i * slice;
    return (size_t) (length - offset < slice ? length - offset : slice);
}

/* Ends op: the owner's failed slices again, the fragment back, the
 * callback. Lock not held. */
static int finish(sm_split_op_t *op)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    mca_btl_sm_endpoint_t *ep = op->ep;
    int rc = op->rc;
    if (SM_EP_CONNECTED != atomic_load_explicit(&ep->state, memory_order_relaxed)) {
        rc = OPAL_ERR_UNREACH;
    }
    /* Acquire pairs with the owner's release increment of helped: its
     * failed bits, set before, are visible. */
    (void) atomic_load_explicit(&op->msg->helped, memory_order_acquire);
    uint64_t failed = atomic_load_explicit(&op->msg->failed, memory_order_relaxed);
    if (op->slices < 64) {
        failed &= (UINT64_C(1) << op->slices) - 1;
    }
    for (uint32_t i = 0; OPAL_SUCCESS == rc && 0 != failed; ++i, failed >>= 1) {
        if (failed & 1) {
            uint64_t offset = (uint64_t) i * op->slice;
            rc = mca_btl_sm_cma_copy(ep, (uint8_t *) op->local + offset, op->remote + offset,
                                     slice_length(op->size, op->slice, i), op->is_get);
            op->err = errno;
        }
    }
    uint64_t helped = op->owner_slices;
    if (op->is_get && 0 != helped) {
        SPLIT_MEM_DEFINED(op->local, op->size);
    }
    SM_LOCK();
    sm->split_slices_helped += helped;
    mca_btl_sm_frag_t *frag = op->frag;
    frag->flags &= ~SM_FRAG_USER;
    if (0 == (frag->flags & SM_FRAG_INFLIGHT)) {
        mca_btl_sm_frag_return(frag);
    }
    SM_UNLOCK();
    if (OPAL_ERR_NOT_SUPPORTED == rc) {
        /* CMA was refused: the whole transfer again, through the
         * emulation (copying a slice twice is harmless). */
        rc = mca_btl_sm_rdma_fallback(ep, op->err, op->is_get, op->local, op->remote,
                                      op->local_handle, &op->remote_handle, op->size, op->cbfunc,
                                      op->cbcontext, op->cbdata);
        if (OPAL_SUCCESS == rc) {
            opal_free_list_return(&sm->split_list, &op->super);
            return OPAL_SUCCESS;
        }
    }
    if (NULL != op->cbfunc) {
        op->cbfunc(&sm->super, ep, op->local, op->local_handle, op->cbcontext, op->cbdata, rc);
    }
    opal_free_list_return(&sm->split_list, &op->super);
    return OPAL_SUCCESS;
}

/* The owner has finished every slice it claimed (or is gone). */
static bool owner_done(const sm_split_op_t *op)
{
    /* Acquire pairs with the owner's release increment: its copies are
     * complete before we report the operation done. */
    uint32_t helped = atomic_load_explicit(&op->msg->helped, memory_order_acquire);
    return helped >= op->owner_slices ||
           SM_EP_CONNECTED != atomic_load_explicit(&op->ep->state, memory_order_relaxed);
}

int mca_btl_sm_split_start(mca_btl_sm_endpoint_t *ep, bool is_get, void *local_address,
                           uint64_t remote_address,
                           mca_btl_base_registration_handle_t *local_handle,
                           const mca_btl_base_registration_handle_t *remote_handle, size_t size,
                           mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    /* btl_sm_split_parts slices of whole pages (the last one shorter). */
    uint64_t parts = mca_btl_sm_params.split_parts;
    uint64_t slice = ((size + parts - 1) / parts + 4095) & ~(uint64_t) 4095;
    uint64_t slices = (size + slice - 1) / slice;
    if (slices < 2) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    SM_LOCK();
    sm_split_op_t *op = (sm_split_op_t *) opal_free_list_get(&sm->split_list);
    mca_btl_sm_frag_t *frag = NULL == op || !opal_list_is_empty(&ep->pending)
                                  ? NULL
                                  : mca_btl_sm_frag_get(ep, sizeof(sm_split_msg_t));
    if (NULL == frag) {
        if (NULL != op) {
            opal_free_list_return(&sm->split_list, &op->super);
        }
        SM_UNLOCK();
        return OPAL_ERR_NOT_AVAILABLE;
    }
    sm_split_msg_t *msg = (sm_split_msg_t *) (void *) frag->payload;
    atomic_store_explicit(&msg->next, 0, memory_order_relaxed);
    atomic_store_explicit(&msg->helped, 0, memory_order_relaxed);
    atomic_store_explicit(&msg->failed, 0, memory_order_relaxed);
    msg->slices = (uint32_t) slices;
    msg->is_get = is_get;
    msg->slice = slice;
    msg->length = size;
    msg->address = (uint64_t) (uintptr_t) local_address;
    msg->reg_address = remote_address;
    msg->reg_cookie = remote_handle->cookie;
    msg->reg_index = remote_handle->index;
    msg->reserved = 0;
    frag->hdr->len = sizeof(*msg);
    frag->hdr->tag = 0;
    frag->hdr->type = SM_MSG_SPLIT;
    frag->flags = SM_FRAG_USER;
    /* The post is a release: the owner sees the message whole. */
    int rc = mca_btl_sm_post_frag(ep, frag);
    if (OPAL_SUCCESS != rc) {
        frag->flags = 0;
        mca_btl_sm_frag_return(frag);
        opal_free_list_return(&sm->split_list, &op->super);
        SM_UNLOCK();
        return OPAL_ERR_UNREACH == rc ? rc : OPAL_ERR_NOT_AVAILABLE;
    }
    ++sm->split_offered;
    SM_UNLOCK();

    *op = (sm_split_op_t){.super = op->super,
                          .ep = ep,
                          .frag = frag,
                          .msg = msg,
                          .is_get = is_get,
                          .local = local_address,
                          .remote = remote_address,
                          .size = size,
                          .slice = slice,
                          .slices = (uint32_t) slices,
                          .rc = OPAL_SUCCESS,
                          .local_handle = local_handle,
                          .remote_handle = *remote_handle,
                          .cbfunc = cbfunc,
                          .cbcontext = cbcontext,
                          .cbdata = cbdata};
    /* Our slices wait for the next progress call (claim_fresh): the owner
     * may take some meanwhile, and ours of several transfers go in one
     * CMA call. */
    SM_LOCK();
    opal_list_append(&sm->split_fresh, &op->super.super);
    atomic_fetch_add_explicit(&sm->split_fresh_count, 1, memory_order_relaxed);
    SM_UNLOCK();
    return OPAL_SUCCESS;
}

/* A slice of ours in a common CMA call. */
typedef struct split_piece_t {
    sm_split_op_t *op;
    uint32_t slice;
} split_piece_t;

/* Copies n slices of one peer and direction in one CMA call; those it
 * did not cover whole, alone (their operation keeps the first error). */
static void copy_pieces(const split_piece_t *pieces, uint32_t n)
{
    struct iovec liov[SM_CMA_BATCH_MAX], riov[SM_CMA_BATCH_MAX];
    for (uint32_t k = 0; k < n; ++k) {
        const sm_split_op_t *op = pieces[k].op;
        uint64_t offset = (uint64_t) pieces[k].slice * op->slice;
        size_t len = slice_length(op->size, op->slice, pieces[k].slice);
        liov[k] = (struct iovec){.iov_base = (uint8_t *) op->local + offset, .iov_len = len};
        riov[k] =
            (struct iovec){.iov_base = (void *) (uintptr_t) (op->remote + offset), .iov_len = len};
    }
    const mca_btl_sm_endpoint_t *ep = pieces[0].op->ep;
    bool is_get = pieces[0].op->is_get;
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    atomic_fetch_add_explicit(&sm->split_slices_own, n, memory_order_relaxed);
    atomic_fetch_add_explicit(&sm->split_calls, 1, memory_order_relaxed);
    uint32_t whole = mca_btl_sm_cma_copyv(ep, is_get, liov, riov, n);
    for (uint32_t k = whole; k < n; ++k) {
        sm_split_op_t *op = pieces[k].op;
        if (OPAL_SUCCESS != op->rc) {
            continue;
        }
        int rc =
            SM_EP_CONNECTED == atomic_load(&ep->state)
                ? mca_btl_sm_cma_copy(ep, liov[k].iov_base, (uint64_t) (uintptr_t) riov[k].iov_base,
                                      liov[k].iov_len, is_get)
                : OPAL_ERR_UNREACH;
        if (OPAL_SUCCESS != rc) {
            op->rc = rc;
            op->err = errno;
        }
    }
}

/* Claims and copies our slices of the transfers posted since the last
 * call, then ends those the owner is not copying for. */
static int claim_fresh(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    sm_split_op_t *ops[SM_CMA_BATCH_MAX];
    split_piece_t pieces[SM_CMA_BATCH_MAX];
    uint32_t n = 0, k = 0;
    opal_list_item_t *item;
    SM_LOCK();
    while (n < SM_CMA_BATCH_MAX && NULL != (item = opal_list_remove_first(&sm->split_fresh))) {
        ops[n++] = (sm_split_op_t *) item;
        atomic_fetch_sub_explicit(&sm->split_fresh_count, 1, memory_order_relaxed);
    }
    SM_UNLOCK();
    for (uint32_t j = 0; j < n; ++j) {
        sm_split_op_t *op = ops[j];
        if (0 != k && (pieces[0].op->ep != op->ep || pieces[0].op->is_get != op->is_get)) {
            copy_pieces(pieces, k);
            k = 0;
        }
        /* Relaxed claims: a slice is copied by whoever claimed it, and
         * the data itself is ordered by the helped counter. */
        uint32_t claimed = 0, i;
        while ((i = atomic_fetch_add_explicit(&op->msg->next, 1, memory_order_relaxed)) <
               op->slices) {
            ++claimed;
            if (SM_CMA_BATCH_MAX == k) {
                copy_pieces(pieces, k);
                k = 0;
            }
            pieces[k++] = (split_piece_t){.op = op, .slice = i};
        }
        /* Every claim below the end that was not ours is the owner's. */
        op->owner_slices = op->slices - claimed;
    }
    if (0 != k) {
        copy_pieces(pieces, k);
    }
    for (uint32_t j = 0; j < n; ++j) {
        sm_split_op_t *op = ops[j];
        if (owner_done(op)) {
            (void) finish(op);
            continue;
        }
        SM_LOCK();
        opal_list_append(&sm->split_pending, &op->super.super);
        atomic_fetch_add_explicit(&sm->split_waiting, 1, memory_order_relaxed);
        SM_UNLOCK();
    }
    return (int) n;
}

int mca_btl_sm_split_progress(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    int fresh = 0;
    while (0 != atomic_load_explicit(&sm->split_fresh_count, memory_order_relaxed)) {
        fresh += claim_fresh();
    }
    opal_list_t done;
    OBJ_CONSTRUCT(&done, opal_list_t);
    SM_LOCK();
    sm_split_op_t *op, *next;
    OPAL_LIST_FOREACH_SAFE (op, next, &sm->split_pending, sm_split_op_t) {
        if (owner_done(op)) {
            opal_list_remove_item(&sm->split_pending, &op->super.super);
            atomic_fetch_sub_explicit(&sm->split_waiting, 1, memory_order_relaxed);
            opal_list_append(&done, &op->super.super);
        }
    }
    SM_UNLOCK();
    int events = fresh;
    opal_list_item_t *item;
    while (NULL != (item = opal_list_remove_first(&done))) {
        finish((sm_split_op_t *) item);
        ++events;
    }
    OBJ_DESTRUCT(&done);
    return events;
}

bool mca_btl_sm_split_busy(const mca_btl_sm_endpoint_t *ep)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    if (0 == atomic_load_explicit(&sm->split_waiting, memory_order_relaxed) &&
        0 == atomic_load_explicit(&sm->split_fresh_count, memory_order_relaxed)) {
        return false;
    }
    bool busy = false;
    SM_LOCK();
    sm_split_op_t *op;
    OPAL_LIST_FOREACH (op, &sm->split_fresh, sm_split_op_t) {
        if (NULL == ep || op->ep == ep) {
            busy = true;
            break;
        }
    }
    OPAL_LIST_FOREACH (op, &sm->split_pending, sm_split_op_t) {
        if (NULL == ep || op->ep == ep) {
            busy = true;
            break;
        }
    }
    SM_UNLOCK();
    return busy;
}

int mca_btl_sm_split_serve(mca_btl_sm_endpoint_t *ep, sm_split_msg_t *msg, size_t len, char *why,
                           size_t why_size)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    sm_split_req_t req;
    int rc = mca_btl_sm_split_check(msg, len, &req, why, why_size);
    if (OPAL_SUCCESS != rc || !ep->cma) {
        return rc;
    }
    /* The requester's get reads our memory; its put writes it. */
    uint32_t access = req.is_get ? MCA_BTL_REG_FLAG_REMOTE_READ : MCA_BTL_REG_FLAG_REMOTE_WRITE;
    SM_LOCK();
    const mca_btl_base_registration_handle_t *reg = mca_btl_sm_registration_find(
        req.reg_index, req.reg_cookie, req.reg_address, req.length, access);
    SM_UNLOCK();
    if (NULL == reg) {
        /* Not a region of ours it may use: it copies everything itself,
         * and its own CMA answers for the range. */
        SM_VERBOSE(20,
                   "btl sm: rank %u offered a %s of %" PRIu64 " bytes at 0x%" PRIx64
                   " outside this process's registrations; not shared",
                   ep->rank, req.is_get ? "get" : "put", req.length, req.reg_address);
        return OPAL_SUCCESS;
    }
    uint32_t i;
    uint64_t served = 0;
    while ((i = atomic_fetch_add_explicit(&msg->next, 1, memory_order_relaxed)) < req.slices) {
        uint64_t offset = (uint64_t) i * req.slice;
        /* Its get: we write our memory into its; its put: we read its
         * memory into ours. */
        rc = mca_btl_sm_cma_copy(ep, (void *) (uintptr_t) (req.reg_address + offset),
                                 req.address + offset, slice_length(req.length, req.slice, i),
                                 !req.is_get);
        if (OPAL_SUCCESS != rc) {
            if (OPAL_ERR_NOT_SUPPORTED == rc) {
                ep->cma = false;
            }
            /* The bit before the count (release): the requester copies
             * this slice again. */
            atomic_fetch_or_explicit(&msg->failed, UINT64_C(1) << i, memory_order_relaxed);
            atomic_fetch_add_explicit(&msg->helped, 1, memory_order_release);
            break;
        }
        ++served;
        /* Release pairs with the requester's acquire: the copy is done. */
        atomic_fetch_add_explicit(&msg->helped, 1, memory_order_release);
    }
    atomic_fetch_add_explicit(&sm->split_slices_served, served, memory_order_relaxed);
    return OPAL_SUCCESS;
}
