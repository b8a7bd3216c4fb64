/*
 * RDMA: memory registration, put (fi_write), get (fi_read), flush.
 *
 * A registration handle is {key, base, size}: what a peer needs to name
 * bytes of the region (common/ofi turns base and an address into what the
 * provider wants: the address itself under FI_MR_VIRT_ADDR, an offset
 * otherwise). Addresses outside a region are refused here, before the
 * provider sees them.
 *
 * A put asks for delivery completion when the provider accepts it, so
 * that a completed put (and a flush) means the data is at the target.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/ofi/btl_ofi.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

static void op_construct(mca_btl_ofi_rdma_op_t *op)
{
    op->ctx.kind = MCA_BTL_OFI_CTX_RDMA;
    op->ctx.magic = MCA_BTL_OFI_CTX_MAGIC;
    op->endpoint = NULL;
    op->state = 0;
}

OBJ_CLASS_INSTANCE(mca_btl_ofi_rdma_op_t, opal_free_list_item_t, op_construct, NULL);

mca_btl_base_registration_handle_t *
mca_btl_ofi_register_mem(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                         void *base, size_t size, uint32_t flags)
{
    (void) endpoint;
    mca_btl_ofi_module_t *module = mca_btl_ofi_module(btl);
    uint64_t access = 0;
    if (0 != (flags & MCA_BTL_REG_FLAG_LOCAL_READ)) {
        access |= FI_WRITE; /* the source of a put */
    }
    if (0 != (flags & MCA_BTL_REG_FLAG_LOCAL_WRITE)) {
        access |= FI_READ; /* the target of a get */
    }
    if (0 != (flags & MCA_BTL_REG_FLAG_REMOTE_READ)) {
        access |= FI_REMOTE_READ;
    }
    if (0 != (flags & MCA_BTL_REG_FLAG_REMOTE_WRITE)) {
        access |= FI_REMOTE_WRITE;
    }
    if (0 == access) {
        access = FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    }
    mca_btl_ofi_reg_t *reg = malloc(sizeof(*reg));
    if (NULL == reg) {
        return NULL;
    }
    OPAL_THREAD_LOCK(&module->lock);
    int rc = opal_common_ofi_mr_register(&module->ofi, base, size, access, &reg->mr);
    OPAL_THREAD_UNLOCK(&module->lock);
    if (OPAL_SUCCESS != rc) {
        free(reg);
        return NULL;
    }
    reg->handle.key = reg->mr.key;
    reg->handle.base = (uint64_t) (uintptr_t) base;
    reg->handle.size = size;
    return &reg->handle;
}

int mca_btl_ofi_deregister_mem(mca_btl_base_module_t *btl,
                               mca_btl_base_registration_handle_t *handle)
{
    mca_btl_ofi_module_t *module = mca_btl_ofi_module(btl);
    mca_btl_ofi_reg_t *reg = (mca_btl_ofi_reg_t *) handle;
    OPAL_THREAD_LOCK(&module->lock);
    opal_common_ofi_mr_deregister(&reg->mr);
    OPAL_THREAD_UNLOCK(&module->lock);
    free(reg);
    return OPAL_SUCCESS;
}

/* Whether [addr, addr + size) lies inside the handle's region. */
static bool in_region(const mca_btl_base_registration_handle_t *handle, uint64_t addr, size_t size)
{
    return addr >= handle->base && size <= handle->size &&
           addr - handle->base <= handle->size - size;
}

typedef enum { RDMA_PUT, RDMA_GET } rdma_dir_t;

static int rdma(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep, rdma_dir_t dir,
                void *local_address, uint64_t remote_address,
                mca_btl_base_registration_handle_t *local_handle,
                mca_btl_base_registration_handle_t *remote_handle, size_t size,
                mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    mca_btl_ofi_module_t *module = mca_btl_ofi_module(btl);
    if (OPAL_UNLIKELY(NULL == remote_handle || NULL == cbfunc ||
                      !in_region(remote_handle, remote_address, size) ||
                      (NULL != local_handle &&
                       !in_region(local_handle, (uint64_t) (uintptr_t) local_address, size)) ||
                      (NULL == local_handle && opal_common_ofi_needs_local_mr(&module->ofi)))) {
        return OPAL_ERR_BAD_PARAM;
    }
    void *desc = NULL != local_handle ? ((mca_btl_ofi_reg_t *) local_handle)->mr.desc : NULL;
    mca_btl_ofi_rdma_op_t *op = (mca_btl_ofi_rdma_op_t *) opal_free_list_get(&module->rdma_ops);
    if (OPAL_UNLIKELY(NULL == op)) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    op->endpoint = ep;
    op->local_address = local_address;
    op->local_handle = local_handle;
    op->cbfunc = cbfunc;
    op->cbcontext = cbcontext;
    op->cbdata = cbdata;
    op->state = 0;

    OPAL_THREAD_LOCK(&module->lock);
    if (OPAL_UNLIKELY(ep->failed)) {
        OPAL_THREAD_UNLOCK(&module->lock);
        opal_free_list_return(&module->rdma_ops, &op->super);
        return OPAL_ERR_UNREACH;
    }
    uint64_t raddr = opal_common_ofi_rma_addr(&module->ofi, remote_handle->base, remote_address);
    /* With FI_DELIVERY_COMPLETE while the provider takes it (a put is
     * then complete at the target; a get over shm goes by its copy
     * through shared memory), else without. */
    bool *dc = RDMA_GET == dir ? &module->get_delivery_complete : &module->put_delivery_complete;
    ssize_t rc = -FI_EBADFLAGS;
    if (*dc) {
        struct iovec iov = {.iov_base = local_address, .iov_len = size};
        struct fi_rma_iov rma = {.addr = raddr, .len = size, .key = remote_handle->key};
        struct fi_msg_rma msg = {
            .msg_iov = &iov,
            .desc = &desc,
            .iov_count = 1,
            .addr = ep->fi_addr,
            .rma_iov = &rma,
            .rma_iov_count = 1,
            .context = &op->ctx.fi,
        };
        const uint64_t flags = FI_DELIVERY_COMPLETE | FI_COMPLETION;
        rc = RDMA_GET == dir ? fi_readmsg(module->ofi.ep, &msg, flags)
                             : fi_writemsg(module->ofi.ep, &msg, flags);
        if (-FI_EBADFLAGS == rc || -FI_ENOSYS == rc || -FI_EOPNOTSUPP == rc) {
            opal_output_verbose(10, mca_btl_base_output,
                                "ofi: %s: %s without delivery completion (%s)",
                                module->ofi.prov_name, RDMA_GET == dir ? "gets" : "puts",
                                fi_strerror((int) -rc));
            *dc = false;
        }
    }
    if (!*dc) {
        rc = RDMA_GET == dir ? fi_read(module->ofi.ep, local_address, size, desc, ep->fi_addr,
                                       raddr, remote_handle->key, &op->ctx.fi)
                             : fi_write(module->ofi.ep, local_address, size, desc, ep->fi_addr,
                                        raddr, remote_handle->key, &op->ctx.fi);
    }
    if (OPAL_LIKELY(0 == rc)) {
        op->state = MCA_BTL_OFI_OP_POSTED;
        opal_list_append(&ep->outstanding, &op->super.super);
        ++ep->rdma_outstanding;
        ++module->rdma_outstanding;
        OPAL_THREAD_UNLOCK(&module->lock);
        return OPAL_SUCCESS;
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    opal_free_list_return(&module->rdma_ops, &op->super);
    if (-FI_EAGAIN == rc) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    char peer[96];
    snprintf(peer, sizeof(peer), "%s", mca_btl_ofi_peer_name(ep));
    opal_common_ofi_error("btl/ofi", &module->ofi, RDMA_GET == dir ? "fi_read from" : "fi_write to",
                          peer, rc);
    return OPAL_ERROR;
}

int mca_btl_ofi_put(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, uint64_t remote_address,
                    mca_btl_base_registration_handle_t *local_handle,
                    mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                    int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata)
{
    (void) flags;
    (void) order;
    return rdma(btl, endpoint, RDMA_PUT, local_address, remote_address, local_handle, remote_handle,
                size, cbfunc, cbcontext, cbdata);
}

int mca_btl_ofi_get(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, uint64_t remote_address,
                    mca_btl_base_registration_handle_t *local_handle,
                    mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                    int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata)
{
    (void) flags;
    (void) order;
    return rdma(btl, endpoint, RDMA_GET, local_address, remote_address, local_handle, remote_handle,
                size, cbfunc, cbcontext, cbdata);
}

void mca_btl_ofi_rdma_complete(mca_btl_ofi_module_t *module, mca_btl_ofi_rdma_op_t *op, int status)
{
    if (OPAL_UNLIKELY(0 != (op->state & MCA_BTL_OFI_OP_ABANDONED))) {
        /* Called back when its peer failed. */
        opal_list_remove_item(&module->abandoned, &op->super.super);
        op->state = 0;
        opal_free_list_return(&module->rdma_ops, &op->super);
        return;
    }
    mca_btl_ofi_endpoint_t *ep = op->endpoint;
    opal_list_remove_item(&ep->outstanding, &op->super.super);
    --ep->rdma_outstanding;
    --module->rdma_outstanding;
    /* Copied out so that the callback may start another operation with
     * this one's descriptor. */
    mca_btl_base_rdma_completion_fn_t cbfunc = op->cbfunc;
    void *local_address = op->local_address;
    mca_btl_base_registration_handle_t *local_handle = op->local_handle;
    void *cbcontext = op->cbcontext, *cbdata = op->cbdata;
    op->state = 0;
    opal_free_list_return(&module->rdma_ops, &op->super);
    cbfunc(&module->super, ep, local_address, local_handle, cbcontext, cbdata, status);
}

int mca_btl_ofi_flush(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint)
{
    mca_btl_ofi_module_t *module = mca_btl_ofi_module(btl);
    for (;;) {
        OPAL_THREAD_LOCK(&module->lock);
        bool failed = NULL != endpoint && endpoint->failed;
        size_t left = NULL != endpoint ? endpoint->rdma_outstanding : module->rdma_outstanding;
        OPAL_THREAD_UNLOCK(&module->lock);
        if (failed) {
            return OPAL_ERR_UNREACH;
        }
        if (0 == left) {
            return OPAL_SUCCESS;
        }
        /* Our own CQ directly: a flush from inside a callback cannot count
         * on opal_progress, which does not nest. */
        (void) mca_btl_ofi_module_progress(module);
    }
}
