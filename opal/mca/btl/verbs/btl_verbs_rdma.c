/*
 * RDMA: put as RDMA write, get as RDMA read, with the peer's rkey and
 * address from its registration handle; registrations through the
 * module's registration cache, which memory release hooks keep true
 * (opal_rcache_watch) and which registers with the rights asked.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/verbs/btl_verbs.h"
#include "opal/runtime/opal_progress.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

/* ------------------------------------------------------- registrations */

/* The IBV access bits btl_register_mem's flags ask for. The device wants
 * local write wherever remote write is allowed; a local read needs no
 * bit (every MR allows it). access is the cache's key: an entry serves a
 * request whose bits it all has (opal_rcache_acquire_access). */
static unsigned access_of(uint32_t flags)
{
    unsigned access = 0;
    if (0 != (flags & MCA_BTL_REG_FLAG_LOCAL_WRITE)) {
        access |= IBV_ACCESS_LOCAL_WRITE;
    }
    if (0 != (flags & MCA_BTL_REG_FLAG_REMOTE_READ)) {
        access |= IBV_ACCESS_REMOTE_READ;
    }
    if (0 != (flags & MCA_BTL_REG_FLAG_REMOTE_WRITE)) {
        access |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
    }
    return access;
}

int mca_btl_verbs_rcache_register(void *ctx, void *base, size_t size, unsigned access, void **reg)
{
    mca_btl_verbs_module_t *module = ctx;
    struct ibv_mr *mr = ibv_reg_mr(module->pd, base, size, (int) access);
    if (NULL == mr) {
        opal_output_verbose(1, mca_btl_base_output,
                            "btl/verbs (%s): ibv_reg_mr of %zu bytes at %p (access 0x%x): %s",
                            module->transport, size, base, access, strerror(errno));
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    *reg = mr;
    return OPAL_SUCCESS;
}

void mca_btl_verbs_rcache_deregister(void *ctx, void *reg)
{
    (void) ctx;
    (void) ibv_dereg_mr(reg);
}

mca_btl_base_registration_handle_t *
mca_btl_verbs_register_mem(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                           void *base, size_t size, uint32_t flags)
{
    (void) endpoint;
    mca_btl_verbs_module_t *module = mca_btl_verbs_module(btl);
    mca_btl_verbs_reg_t *reg = malloc(sizeof(*reg));
    if (NULL == reg) {
        return NULL;
    }
    OPAL_THREAD_LOCK(&module->lock);
    int rc = opal_rcache_acquire_access(&module->rcache, base, size > 0 ? size : 1,
                                        access_of(flags), &reg->entry);
    OPAL_THREAD_UNLOCK(&module->lock);
    if (OPAL_SUCCESS != rc) {
        opal_output_verbose(
            1, mca_btl_base_output, "btl/verbs (%s): registering %zu bytes at %p failed: %s%s",
            module->transport, size, base, opal_strerror(rc),
            OPAL_ERR_OUT_OF_RESOURCE == rc ? " (btl_verbs_rcache_limit, or the locked-memory limit)"
                                           : "");
        free(reg);
        return NULL;
    }
    struct ibv_mr *mr = reg->entry->reg;
    reg->handle.base = (uint64_t) (uintptr_t) reg->entry->base;
    reg->handle.size = reg->entry->size;
    reg->handle.rkey = mr->rkey;
    reg->handle.lkey = mr->lkey;
    return &reg->handle;
}

int mca_btl_verbs_deregister_mem(mca_btl_base_module_t *btl,
                                 mca_btl_base_registration_handle_t *handle)
{
    mca_btl_verbs_module_t *module = mca_btl_verbs_module(btl);
    mca_btl_verbs_reg_t *reg = (mca_btl_verbs_reg_t *) handle;
    if (NULL == reg) {
        return OPAL_ERR_BAD_PARAM;
    }
    OPAL_THREAD_LOCK(&module->lock);
    opal_rcache_entry_t *e = reg->entry;
    void *e_base = e->base;
    size_t e_size = e->size;
    opal_rcache_release(&module->rcache, e);
    if (!module->rcache.watching) {
        /* Nothing tells the cache when this memory is freed: keep no
         * registration past its last deregister. */
        opal_rcache_invalidate(&module->rcache, e_base, e_size);
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    free(reg);
    return OPAL_SUCCESS;
}

/* ----------------------------------------------------------------- RDMA */

void mca_btl_verbs_rdma_complete(mca_btl_verbs_module_t *module, mca_btl_verbs_rdma_op_t *op,
                                 int status)
{
    mca_btl_base_rdma_completion_fn_t cbfunc = op->cbfunc;
    mca_btl_verbs_endpoint_t *ep = op->endpoint;
    void *local_address = op->local_address;
    if (op->get && OPAL_SUCCESS == status) {
        MCA_BTL_VERBS_MEM_DEFINED(local_address, op->size);
    }
    mca_btl_base_registration_handle_t *local_handle = op->local_handle;
    void *cbcontext = op->cbcontext, *cbdata = op->cbdata;
    opal_free_list_return(&module->rdma_ops, &op->super);
    if (NULL != cbfunc) {
        cbfunc(&module->super, ep, local_address, local_handle, cbcontext, cbdata, status);
    }
}

static bool inside(uint64_t addr, size_t size, const mca_btl_base_registration_handle_t *h)
{
    return addr >= h->base && size <= h->size && addr - h->base <= h->size - size;
}

static int rdma_post(mca_btl_base_module_t *btl, mca_btl_verbs_endpoint_t *ep,
                     enum ibv_wr_opcode opcode, void *local_address, uint64_t remote_address,
                     mca_btl_base_registration_handle_t *local_handle,
                     mca_btl_base_registration_handle_t *remote_handle, size_t size,
                     mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    mca_btl_verbs_module_t *module = mca_btl_verbs_module(btl);
    if (NULL == local_handle || NULL == remote_handle ||
        !inside((uint64_t) (uintptr_t) local_address, size, local_handle) ||
        !inside(remote_address, size, remote_handle) ||
        size > (IBV_WR_RDMA_WRITE == opcode ? btl->btl_put_limit : btl->btl_get_limit)) {
        return OPAL_ERR_BAD_PARAM;
    }
    OPAL_THREAD_LOCK(&module->lock);
    int rc = OPAL_SUCCESS;
    if (OPAL_UNLIKELY(MCA_BTL_VERBS_EP_READY != ep->state) &&
        (module->fatal || OPAL_SUCCESS != mca_btl_verbs_endpoint_connect(
                                              module, ep, OPAL_MODEX_WAIT_FOREVER, NULL))) {
        rc = OPAL_ERR_UNREACH;
        goto out;
    }
    if (ep->sq_posted >= module->sq_depth || module->sq_pending >= module->sq_pending_max) {
        rc = OPAL_ERR_RESOURCE_BUSY;
        goto out;
    }
    mca_btl_verbs_rdma_op_t *op = (mca_btl_verbs_rdma_op_t *) opal_free_list_get(&module->rdma_ops);
    if (NULL == op) {
        rc = OPAL_ERR_RESOURCE_BUSY;
        goto out;
    }
    op->kind = MCA_BTL_VERBS_WR_RDMA;
    op->endpoint = ep;
    op->local_address = local_address;
    op->size = size;
    op->get = IBV_WR_RDMA_READ == opcode;
    op->local_handle = local_handle;
    op->cbfunc = cbfunc;
    op->cbcontext = cbcontext;
    op->cbdata = cbdata;
    struct ibv_sge sge = {
        .addr = (uintptr_t) local_address,
        .length = (uint32_t) size,
        .lkey = local_handle->lkey,
    };
    struct ibv_send_wr wr = {
        .wr_id = (uintptr_t) &op->kind,
        .sg_list = &sge,
        .num_sge = size > 0 ? 1 : 0,
        .opcode = opcode,
        .send_flags = IBV_SEND_SIGNALED,
        .wr.rdma = {.remote_addr = remote_address, .rkey = remote_handle->rkey},
    };
    if (IBV_WR_RDMA_WRITE == opcode && size <= module->inline_max) {
        wr.send_flags |= IBV_SEND_INLINE;
    }
    struct ibv_send_wr *bad = NULL;
    int err = ibv_post_send(ep->qp, &wr, &bad);
    if (0 != err) {
        opal_free_list_return(&module->rdma_ops, &op->super);
        rc = ENOMEM == err ? OPAL_ERR_RESOURCE_BUSY : OPAL_ERR_UNREACH;
        goto out;
    }
    ep->sq_posted++;
    ep->rdma_posted++;
    module->sq_pending++;
    module->rdma_posted++;
out:
    OPAL_THREAD_UNLOCK(&module->lock);
    return rc;
}

int mca_btl_verbs_put(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      void *local_address, uint64_t remote_address,
                      mca_btl_base_registration_handle_t *local_handle,
                      mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                      int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                      void *cbdata)
{
    (void) flags;
    (void) order;
    return rdma_post(btl, endpoint, IBV_WR_RDMA_WRITE, local_address, remote_address, local_handle,
                     remote_handle, size, cbfunc, cbcontext, cbdata);
}

int mca_btl_verbs_get(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      void *local_address, uint64_t remote_address,
                      mca_btl_base_registration_handle_t *local_handle,
                      mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                      int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                      void *cbdata)
{
    (void) flags;
    (void) order;
    return rdma_post(btl, endpoint, IBV_WR_RDMA_READ, local_address, remote_address, local_handle,
                     remote_handle, size, cbfunc, cbcontext, cbdata);
}

int mca_btl_verbs_flush(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint)
{
    mca_btl_verbs_module_t *module = mca_btl_verbs_module(btl);
    while (NULL != endpoint ? endpoint->rdma_posted > 0 : module->rdma_posted > 0) {
        if (module->fatal) {
            return OPAL_ERR_UNREACH;
        }
        opal_progress();
    }
    return OPAL_SUCCESS;
}
