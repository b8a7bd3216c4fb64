/*
 * btl/sm's put and get: memory registrations (a handle a peer can use:
 * owner's pid and region bounds, plus an index and a random cookie that
 * let the owner find its own registration again) and single copies
 * through CMA, process_vm_readv / process_vm_writev, straight between
 * the two processes' memory.
 *
 * Below btl_sm_split_min a put or get is not copied in the call: it
 * waits for the next progress call with the others to the same peer in
 * the same direction, and they go in one process_vm_readv / writev of
 * several iovecs. A CMA call costs about as much to set up as it takes
 * to copy 16 KiB (the peer's mm looked up and checked, its pages pinned
 * a batch at a time): 64 reads of 8 KiB went 2.5x faster in one call than
 * in 64, of 64 KiB 1.2x (docs/btl-sm.md).
 *
 * Where CMA is not allowed (ptrace restrictions, containers: EPERM) the
 * operation, and every later one to that peer, goes through the
 * emulation (btl_sm_rdma_emu.c), with one notice at verbosity;
 * btl_sm_single_copy_mechanism=none forces it.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "opal/mca/btl/sm/btl_sm.h"

OBJ_CLASS_INSTANCE(sm_registration_t, opal_free_list_item_t, NULL, NULL);

/* A put / get gathered for one CMA call with others. */
typedef struct sm_cma_op_t {
    void *local;
    uint64_t remote;
    size_t size;
    mca_btl_base_registration_handle_t *local_handle;
    const mca_btl_base_registration_handle_t *remote_handle;
    mca_btl_base_rdma_completion_fn_t cbfunc;
    void *cbcontext;
    void *cbdata;
} sm_cma_op_t;

/* What waits for the next flush (under the lock): one peer, one
 * direction. */
static struct {
    mca_btl_sm_endpoint_t *ep;
    bool is_get;
    uint32_t count;
    sm_cma_op_t ops[SM_CMA_BATCH_MAX];
} batch;

/* xorshift64*: cookies need only be unguessable by accident, not by an
 * adversary (a hostile local peer can read our memory through CMA
 * anyway). */
static uint64_t next_cookie(void)
{
    uint64_t x = mca_btl_sm.cookie_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    mca_btl_sm.cookie_state = x;
    return x * UINT64_C(0x2545f4914f6cdd1d);
}

int mca_btl_sm_rdma_init(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    sm->cookie_state = sm->nonce | 1;
    sm->reg_by_index = NULL;
    sm->reg_free_index = NULL;
    sm->reg_count = sm->reg_capacity = sm->reg_free_count = 0;
    batch.count = 0;
    batch.ep = NULL;
    atomic_store_explicit(&sm->cma_batched, 0, memory_order_relaxed);
    sm->cma_gathered = sm->cma_calls = 0;
    OBJ_CONSTRUCT(&sm->reg_list, opal_free_list_t);
    /* Constructs what mca_btl_sm_rdma_fini destructs, even on failure. */
    int rc = mca_btl_sm_emu_init();
    int split_rc = mca_btl_sm_split_init();
    rc = OPAL_SUCCESS != rc ? rc : split_rc;
    sm->rdma_ready = true;
    if (OPAL_SUCCESS == rc) {
        rc = opal_free_list_init(&sm->reg_list, sizeof(sm_registration_t), 0,
                                 OBJ_CLASS(sm_registration_t), 0, 0, 16, 0, 16, NULL, NULL, NULL);
    }
    return rc;
}

void mca_btl_sm_rdma_fini(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    if (!sm->rdma_ready) {
        return;
    }
    /* Gathered put / get are owed their callbacks. */
    (void) mca_btl_sm_cma_flush();
    SM_VERBOSE(10, "btl sm: gathered put/get: %" PRIu64 " in %" PRIu64 " CMA calls",
               sm->cma_gathered, sm->cma_calls);
    sm->rdma_ready = false;
    mca_btl_sm_split_fini();
    mca_btl_sm_emu_fini();
    for (uint32_t i = 0; i < sm->reg_count; ++i) {
        if (NULL != sm->reg_by_index[i]) {
            opal_free_list_return_st(&sm->reg_list, &sm->reg_by_index[i]->super);
        }
    }
    OBJ_DESTRUCT(&sm->reg_list);
    free(sm->reg_by_index);
    free(sm->reg_free_index);
    sm->reg_by_index = NULL;
    sm->reg_free_index = NULL;
    sm->reg_count = sm->reg_capacity = sm->reg_free_count = 0;
}

/* A free registry index (lock held): reused ones first, so that the
 * table grows only to the most registrations ever held at once. */
static int registry_index(uint32_t *index)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    if (0 != sm->reg_free_count) {
        *index = sm->reg_free_index[--sm->reg_free_count];
        return OPAL_SUCCESS;
    }
    if (sm->reg_count == sm->reg_capacity) {
        uint32_t capacity = 0 == sm->reg_capacity ? 64 : 2 * sm->reg_capacity;
        sm_registration_t **table = realloc(sm->reg_by_index, capacity * sizeof(*table));
        if (NULL == table) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        sm->reg_by_index = table;
        uint32_t *free_index = realloc(sm->reg_free_index, capacity * sizeof(*free_index));
        if (NULL == free_index) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        sm->reg_free_index = free_index;
        sm->reg_capacity = capacity;
    }
    *index = sm->reg_count++;
    return OPAL_SUCCESS;
}

mca_btl_base_registration_handle_t *mca_btl_sm_register_mem(mca_btl_base_module_t *btl,
                                                            mca_btl_base_endpoint_t *endpoint,
                                                            void *base, size_t size, uint32_t flags)
{
    (void) btl;
    (void) endpoint;
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    if ((NULL == base && 0 != size) || 0 == (flags & MCA_BTL_REG_FLAG_ACCESS_ANY)) {
        return NULL;
    }
    SM_LOCK();
    sm_registration_t *reg = (sm_registration_t *) opal_free_list_get(&sm->reg_list);
    uint32_t index = 0;
    if (NULL != reg && OPAL_SUCCESS != registry_index(&index)) {
        opal_free_list_return(&sm->reg_list, &reg->super);
        reg = NULL;
    }
    if (NULL == reg) {
        SM_UNLOCK();
        opal_output(0, "btl sm: out of memory registering %zu bytes", size);
        return NULL;
    }
    sm->reg_by_index[index] = reg;
    reg->in_use = true;
    reg->handle.base = (uint64_t) (uintptr_t) base;
    reg->handle.length = size;
    reg->handle.owner_rank = sm->my_rank;
    reg->handle.owner_pid = (int32_t) sm->my_pid;
    reg->handle.flags = flags & MCA_BTL_REG_FLAG_ACCESS_ANY;
    reg->handle.index = index;
    reg->handle.cookie = next_cookie();
    SM_UNLOCK();
    return &reg->handle;
}

int mca_btl_sm_deregister_mem(mca_btl_base_module_t *btl,
                              mca_btl_base_registration_handle_t *handle)
{
    (void) btl;
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    if (NULL == handle) {
        return OPAL_ERR_BAD_PARAM;
    }
    sm_registration_t *reg = SM_CONTAINER_OF(handle, sm_registration_t, handle);
    SM_LOCK();
    uint32_t index = handle->index;
    if (index >= sm->reg_count || sm->reg_by_index[index] != reg || !reg->in_use) {
        SM_UNLOCK();
        return OPAL_ERR_BAD_PARAM;
    }
    sm->reg_by_index[index] = NULL;
    reg->in_use = false;
    reg->handle.cookie = 0;
    sm->reg_free_index[sm->reg_free_count++] = index;
    opal_free_list_return(&sm->reg_list, &reg->super);
    SM_UNLOCK();
    return OPAL_SUCCESS;
}

/* [address, address + length) inside [base, base + region), without
 * overflowing. */
static bool within(uint64_t address, uint64_t length, uint64_t base, uint64_t region)
{
    return address >= base && length <= region && address - base <= region - length;
}

const mca_btl_base_registration_handle_t *
mca_btl_sm_registration_find(uint32_t index, uint64_t cookie, uint64_t address, uint64_t length,
                             uint32_t access)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    if (index >= sm->reg_count || NULL == sm->reg_by_index[index]) {
        return NULL;
    }
    const mca_btl_base_registration_handle_t *h = &sm->reg_by_index[index]->handle;
    if (h->cookie != cookie || access != (h->flags & access) ||
        !within(address, length, h->base, h->length)) {
        return NULL;
    }
    return h;
}

int mca_btl_sm_handle_check(const mca_btl_sm_endpoint_t *ep,
                            const mca_btl_base_registration_handle_t *handle, uint64_t address,
                            size_t size, uint32_t access)
{
    if (NULL == handle || handle->owner_rank != ep->rank ||
        handle->owner_pid != (int32_t) ep->pid || access != (handle->flags & access) ||
        !within(address, size, handle->base, handle->length)) {
        return OPAL_ERR_BAD_PARAM;
    }
    return OPAL_SUCCESS;
}

int mca_btl_sm_cma_copy(const mca_btl_sm_endpoint_t *ep, void *local, uint64_t remote, size_t size,
                        bool is_get)
{
    size_t done = 0;
    while (done < size) {
        struct iovec liov = {.iov_base = (char *) local + done, .iov_len = size - done};
        struct iovec riov = {.iov_base = (void *) (uintptr_t) (remote + done),
                             .iov_len = size - done};
        ssize_t n = is_get ? process_vm_readv(ep->pid, &liov, 1, &riov, 1, 0)
                           : process_vm_writev(ep->pid, &liov, 1, &riov, 1, 0);
        if (n > 0) {
            done += (size_t) n;
            continue;
        }
        int err = n < 0 ? errno : EFAULT;
        switch (err) {
            case EINTR:
                continue;
            case EPERM:
            case EACCES:
            case ENOSYS:
                return OPAL_ERR_NOT_SUPPORTED;
            case ESRCH:
                return OPAL_ERR_UNREACH;
            case EFAULT:
                return OPAL_ERR_BAD_PARAM;
            default:
                return OPAL_ERROR;
        }
    }
    return OPAL_SUCCESS;
}

/* ------------------------------------------------ gathered CMA copies */

uint32_t mca_btl_sm_cma_copyv(const mca_btl_sm_endpoint_t *ep, bool is_get,
                              const struct iovec *local, const struct iovec *remote, uint32_t n)
{
    ssize_t got = -1;
    if (SM_EP_CONNECTED == atomic_load(&ep->state)) {
        do {
            got = is_get ? process_vm_readv(ep->pid, local, n, remote, n, 0)
                         : process_vm_writev(ep->pid, local, n, remote, n, 0);
        } while (got < 0 && EINTR == errno);
    }
    /* A short count stops at an iovec that could not be copied. */
    size_t left = got > 0 ? (size_t) got : 0;
    uint32_t whole = 0;
    while (whole < n && local[whole].iov_len <= left) {
        left -= local[whole++].iov_len;
    }
    return whole;
}

/* Ends one gathered operation that the common call did not cover whole:
 * copied again alone, which names its own error (a peer gone, a range
 * no longer mapped) or turns to the emulation where CMA is refused. */
static void cma_one(mca_btl_sm_endpoint_t *ep, bool is_get, const sm_cma_op_t *op)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    int rc = SM_EP_CONNECTED == atomic_load(&ep->state)
                 ? mca_btl_sm_cma_copy(ep, op->local, op->remote, op->size, is_get)
                 : OPAL_ERR_UNREACH;
    if (OPAL_ERR_NOT_SUPPORTED == rc) {
        rc = mca_btl_sm_rdma_fallback(ep, errno, is_get, op->local, op->remote, op->local_handle,
                                      op->remote_handle, op->size, op->cbfunc, op->cbcontext,
                                      op->cbdata);
        if (OPAL_SUCCESS == rc) {
            return; /* the emulation calls back */
        }
    }
    if (NULL != op->cbfunc) {
        op->cbfunc(&sm->super, ep, op->local, op->local_handle, op->cbcontext, op->cbdata, rc);
    }
}

int mca_btl_sm_cma_flush(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    sm_cma_op_t ops[SM_CMA_BATCH_MAX];
    struct iovec liov[SM_CMA_BATCH_MAX], riov[SM_CMA_BATCH_MAX];
    SM_LOCK();
    uint32_t count = batch.count;
    mca_btl_sm_endpoint_t *ep = batch.ep;
    bool is_get = batch.is_get;
    memcpy(ops, batch.ops, count * sizeof(ops[0]));
    batch.count = 0;
    batch.ep = NULL;
    atomic_store_explicit(&sm->cma_batched, 0, memory_order_relaxed);
    sm->cma_calls += 0 != count;
    SM_UNLOCK();
    if (0 == count) {
        return 0;
    }
    for (uint32_t i = 0; i < count; ++i) {
        liov[i] = (struct iovec){.iov_base = ops[i].local, .iov_len = ops[i].size};
        riov[i] =
            (struct iovec){.iov_base = (void *) (uintptr_t) ops[i].remote, .iov_len = ops[i].size};
    }
    /* The operations the call covered whole are done, the rest go alone. */
    uint32_t whole = mca_btl_sm_cma_copyv(ep, is_get, liov, riov, count);
    for (uint32_t i = 0; i < count; ++i) {
        if (i < whole) {
            if (NULL != ops[i].cbfunc) {
                ops[i].cbfunc(&sm->super, ep, ops[i].local, ops[i].local_handle, ops[i].cbcontext,
                              ops[i].cbdata, OPAL_SUCCESS);
            }
        } else {
            cma_one(ep, is_get, &ops[i]);
        }
    }
    return (int) count;
}

/* Adds one operation to the gathered ones, after a flush when they go
 * elsewhere or are as many as btl_sm_cma_batch. */
static void cma_gather(mca_btl_sm_endpoint_t *ep, bool is_get, const sm_cma_op_t *op)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    for (;;) {
        SM_LOCK();
        if (0 == batch.count || (batch.ep == ep && batch.is_get == is_get &&
                                 batch.count < mca_btl_sm_params.cma_batch)) {
            break;
        }
        SM_UNLOCK();
        (void) mca_btl_sm_cma_flush();
    }
    batch.ep = ep;
    batch.is_get = is_get;
    batch.ops[batch.count++] = *op;
    ++sm->cma_gathered;
    atomic_store_explicit(&sm->cma_batched, batch.count, memory_order_relaxed);
    SM_UNLOCK();
}

static int rdma(mca_btl_sm_endpoint_t *ep, bool is_get, void *local_address,
                uint64_t remote_address, mca_btl_base_registration_handle_t *local_handle,
                mca_btl_base_registration_handle_t *remote_handle, size_t size,
                mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    if (OPAL_UNLIKELY(SM_EP_CONNECTED != ep->state)) {
        return OPAL_ERR_UNREACH;
    }
    uint32_t access = is_get ? MCA_BTL_REG_FLAG_REMOTE_READ : MCA_BTL_REG_FLAG_REMOTE_WRITE;
    int rc = mca_btl_sm_handle_check(ep, remote_handle, remote_address, size, access);
    if (OPAL_SUCCESS != rc || (NULL == local_address && 0 != size)) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (OPAL_LIKELY(ep->cma)) {
        if (0 != mca_btl_sm_params.split_min && size >= mca_btl_sm_params.split_min) {
            rc = mca_btl_sm_split_start(ep, is_get, local_address, remote_address, local_handle,
                                        remote_handle, size, cbfunc, cbcontext, cbdata);
            if (OPAL_ERR_NOT_AVAILABLE != rc) {
                return rc;
            }
        }
        if (mca_btl_sm_params.cma_batch > 1) {
            sm_cma_op_t op = {.local = local_address,
                              .remote = remote_address,
                              .size = size,
                              .local_handle = local_handle,
                              .remote_handle = remote_handle,
                              .cbfunc = cbfunc,
                              .cbcontext = cbcontext,
                              .cbdata = cbdata};
            cma_gather(ep, is_get, &op);
            return OPAL_SUCCESS;
        }
        rc = mca_btl_sm_cma_copy(ep, local_address, remote_address, size, is_get);
        if (OPAL_LIKELY(OPAL_SUCCESS == rc)) {
            if (NULL != cbfunc) {
                cbfunc(&sm->super, ep, local_address, local_handle, cbcontext, cbdata,
                       OPAL_SUCCESS);
            }
            return OPAL_SUCCESS;
        }
        if (OPAL_ERR_NOT_SUPPORTED != rc) {
            return rc;
        }
        return mca_btl_sm_rdma_fallback(ep, errno, is_get, local_address, remote_address,
                                        local_handle, remote_handle, size, cbfunc, cbcontext,
                                        cbdata);
    }
    SM_LOCK();
    rc = mca_btl_sm_emu_start(ep, is_get, local_address, remote_address, local_handle,
                              remote_handle, size, cbfunc, cbcontext, cbdata);
    SM_UNLOCK();
    return rc;
}

int mca_btl_sm_rdma_fallback(mca_btl_sm_endpoint_t *ep, int err, bool is_get, void *local_address,
                             uint64_t remote_address,
                             mca_btl_base_registration_handle_t *local_handle,
                             const mca_btl_base_registration_handle_t *remote_handle, size_t size,
                             mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                             void *cbdata)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    ep->cma = false;
    if (!sm->cma_notice_given) {
        sm->cma_notice_given = true;
        SM_VERBOSE(1,
                   "btl sm: CMA is not permitted here (%s with rank %u): put/get go "
                   "through shared memory instead",
                   strerror(err), ep->rank);
    }
    SM_LOCK();
    int rc = mca_btl_sm_emu_start(ep, is_get, local_address, remote_address, local_handle,
                                  remote_handle, size, cbfunc, cbcontext, cbdata);
    SM_UNLOCK();
    return rc;
}

int mca_btl_sm_put(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *endpoint,
                   void *local_address, uint64_t remote_address,
                   mca_btl_base_registration_handle_t *local_handle,
                   mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                   int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                   void *cbdata)
{
    (void) btl;
    (void) flags;
    (void) order;
    if (OPAL_FAULT(btl_put)) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    return rdma(endpoint, false, local_address, remote_address, local_handle, remote_handle, size,
                cbfunc, cbcontext, cbdata);
}

int mca_btl_sm_get(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *endpoint,
                   void *local_address, uint64_t remote_address,
                   mca_btl_base_registration_handle_t *local_handle,
                   mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                   int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                   void *cbdata)
{
    (void) btl;
    (void) flags;
    (void) order;
    if (OPAL_FAULT(btl_get)) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    return rdma(endpoint, true, local_address, remote_address, local_handle, remote_handle, size,
                cbfunc, cbcontext, cbdata);
}
