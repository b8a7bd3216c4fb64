/*
 * btl/tcp's put and get: the request side (a PUT with its data, a GET),
 * and the owner's side (serving a GET, acknowledging a PUT), with the
 * replies matched to their requests in order.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <string.h>

#include "opal/mca/btl/tcp/btl_tcp.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

/* Whether a put's or get's data of size bytes goes by splice. */
static bool splice_wanted(size_t size)
{
    const mca_btl_tcp_component_t *c = &mca_btl_tcp_component;
    return c->splice_ok && 0 != c->splice_min && size >= c->splice_min;
}

static int rdma_start(mca_btl_base_module_t *btl, mca_btl_tcp_endpoint_t *ep, bool is_get,
                      void *local_address, uint64_t remote_address,
                      mca_btl_base_registration_handle_t *local_handle,
                      mca_btl_base_registration_handle_t *remote_handle, size_t size,
                      mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    mca_btl_tcp_module_t *module = mca_btl_tcp_module(btl);
    size_t limit = is_get ? btl->btl_get_limit : btl->btl_put_limit;
    if (NULL == remote_handle || NULL == cbfunc || size > limit ||
        remote_address < remote_handle->base || size > remote_handle->size ||
        remote_address - remote_handle->base > remote_handle->size - size) {
        return OPAL_ERR_BAD_PARAM;
    }
    OPAL_THREAD_LOCK(&module->lock);
    if (MCA_BTL_TCP_EP_GONE == ep->state) {
        OPAL_THREAD_UNLOCK(&module->lock);
        return OPAL_ERR_UNREACH;
    }
    if (MCA_BTL_TCP_EP_CLOSED == ep->state) {
        int rc = mca_btl_tcp_endpoint_connect(ep);
        if (OPAL_SUCCESS != rc) {
            OPAL_THREAD_UNLOCK(&module->lock);
            return rc;
        }
    }
    mca_btl_tcp_rdma_op_t *op = (mca_btl_tcp_rdma_op_t *) opal_free_list_get(&module->rdma_ops);
    if (NULL == op) {
        OPAL_THREAD_UNLOCK(&module->lock);
        return OPAL_ERR_RESOURCE_BUSY;
    }
    op->endpoint = ep;
    op->id = ep->next_id++;
    op->is_get = is_get;
    op->local_address = local_address;
    op->size = size;
    op->local_handle = local_handle;
    op->cbfunc = cbfunc;
    op->cbcontext = cbcontext;
    op->cbdata = cbdata;
    mca_btl_tcp_frame_t f = {
        .len = (uint32_t) (MCA_BTL_TCP_RDMA_TARGET + (is_get ? 0 : size)),
        .type = is_get ? MCA_BTL_TCP_FRAME_GET : MCA_BTL_TCP_FRAME_PUT,
        .id = op->id,
    };
    mca_btl_tcp_target_t t = {.address = remote_address, .key = remote_handle->key, .length = size};
    mca_btl_tcp_frame_pack(&f, op->out.hdr);
    mca_btl_tcp_target_pack(&t, op->out.hdr + MCA_BTL_TCP_FRAME_HDR);
    op->out.kind = MCA_BTL_TCP_OUT_RDMA;
    op->out.iov[0].iov_base = op->out.hdr;
    op->out.iov[0].iov_len = MCA_BTL_TCP_FRAME_HDR + MCA_BTL_TCP_RDMA_TARGET;
    op->out.iovcnt = 1;
    op->out.splice = -1;
    if (!is_get && size > 0) {
        op->out.iov[1].iov_base = local_address;
        op->out.iov[1].iov_len = size;
        op->out.iovcnt = 2;
        op->out.splice = splice_wanted(size) ? 1 : -1;
    }
    /* On the waiting list before it can go out: a failure found while
     * writing it completes it from there. */
    opal_list_append(&ep->waiting, &op->super.super);
    ++module->rdma_outstanding;
    mca_btl_tcp_enqueue(ep, &op->out);
    OPAL_THREAD_UNLOCK(&module->lock);
    return OPAL_SUCCESS;
}

int mca_btl_tcp_put(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, uint64_t remote_address,
                    mca_btl_base_registration_handle_t *local_handle,
                    mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                    int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata)
{
    (void) flags;
    (void) order;
    return rdma_start(btl, endpoint, false, local_address, remote_address, local_handle,
                      remote_handle, size, cbfunc, cbcontext, cbdata);
}

int mca_btl_tcp_get(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, uint64_t remote_address,
                    mca_btl_base_registration_handle_t *local_handle,
                    mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                    int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata)
{
    (void) flags;
    (void) order;
    return rdma_start(btl, endpoint, true, local_address, remote_address, local_handle,
                      remote_handle, size, cbfunc, cbcontext, cbdata);
}

/* Queues a reply frame: a PUT_ACK, or GET_DATA with length bytes at data
 * (NULL for a refusal). */
static int reply(mca_btl_tcp_endpoint_t *ep, uint8_t type, uint64_t id, unsigned status, void *data,
                 size_t length)
{
    mca_btl_tcp_module_t *module = ep->module;
    mca_btl_tcp_reply_t *r = (mca_btl_tcp_reply_t *) opal_free_list_get(&module->replies);
    if (NULL == r) {
        mca_btl_tcp_peer_failed(ep, "out of memory for the reply to its put / get");
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    mca_btl_tcp_frame_t f = {
        .len = (uint32_t) length, .type = type, .status = (uint16_t) status, .id = id};
    mca_btl_tcp_frame_pack(&f, r->out.hdr);
    r->out.kind = MCA_BTL_TCP_OUT_REPLY;
    r->out.iov[0].iov_base = r->out.hdr;
    r->out.iov[0].iov_len = MCA_BTL_TCP_FRAME_HDR;
    r->out.iovcnt = 1;
    r->out.splice = -1;
    if (length > 0) {
        r->out.iov[1].iov_base = data;
        r->out.iov[1].iov_len = length;
        r->out.iovcnt = 2;
        r->out.splice = splice_wanted(length) ? 1 : -1;
    }
    mca_btl_tcp_enqueue(ep, &r->out);
    return OPAL_SUCCESS;
}

static void refused(const mca_btl_tcp_endpoint_t *ep, const char *what,
                    const mca_btl_tcp_target_t *t, unsigned status)
{
    opal_output_verbose(10, mca_btl_base_output,
                        "btl/tcp: %s's %s of %llu bytes at 0x%llx refused: %s",
                        mca_btl_tcp_peer_name(ep), what, (unsigned long long) t->length,
                        (unsigned long long) t->address, mca_btl_tcp_status_string(status));
}

int mca_btl_tcp_serve_get(mca_btl_tcp_endpoint_t *ep, uint64_t id, const mca_btl_tcp_target_t *t)
{
    unsigned status = mca_btl_tcp_reg_check(ep->module, t, false);
    if (MCA_BTL_TCP_STATUS_OK != status) {
        refused(ep, "get", t, status);
        return reply(ep, MCA_BTL_TCP_FRAME_GET_DATA, id, status, NULL, 0);
    }
    return reply(ep, MCA_BTL_TCP_FRAME_GET_DATA, id, MCA_BTL_TCP_STATUS_OK,
                 (void *) (uintptr_t) t->address, (size_t) t->length);
}

unsigned mca_btl_tcp_accept_put(mca_btl_tcp_endpoint_t *ep, const mca_btl_tcp_target_t *t)
{
    unsigned status = mca_btl_tcp_reg_check(ep->module, t, true);
    if (MCA_BTL_TCP_STATUS_OK != status) {
        refused(ep, "put", t, status);
    }
    return status;
}

int mca_btl_tcp_ack_put(mca_btl_tcp_endpoint_t *ep, uint64_t id, unsigned status)
{
    return reply(ep, MCA_BTL_TCP_FRAME_PUT_ACK, id, status, NULL, 0);
}

/* The status of a reply as the operation's result. */
static int reply_status(unsigned status)
{
    switch (status) {
        case MCA_BTL_TCP_STATUS_OK:
            return OPAL_SUCCESS;
        case MCA_BTL_TCP_STATUS_ACCESS:
            return OPAL_ERR_PERM;
        default:
            return OPAL_ERR_BAD_PARAM;
    }
}

mca_btl_tcp_rdma_op_t *mca_btl_tcp_reply_match(mca_btl_tcp_endpoint_t *ep,
                                               const mca_btl_tcp_frame_t *f, char *why,
                                               size_t why_size)
{
    bool is_get = MCA_BTL_TCP_FRAME_GET_DATA == f->type;
    mca_btl_tcp_rdma_op_t *op = (mca_btl_tcp_rdma_op_t *) opal_list_get_first(&ep->waiting);
    if (opal_list_is_empty(&ep->waiting)) {
        snprintf(why, why_size, "a %s reply (id %llu) to no request", is_get ? "get" : "put",
                 (unsigned long long) f->id);
        return NULL;
    }
    if (op->is_get != is_get || op->id != f->id) {
        snprintf(why, why_size, "a %s reply with id %llu where the %s with id %llu was due",
                 is_get ? "get" : "put", (unsigned long long) f->id, op->is_get ? "get" : "put",
                 (unsigned long long) op->id);
        return NULL;
    }
    if (is_get && MCA_BTL_TCP_STATUS_OK == f->status && f->len != op->size) {
        snprintf(why, why_size, "%u bytes for a get of %zu", (unsigned) f->len, op->size);
        return NULL;
    }
    return op;
}

void mca_btl_tcp_rdma_complete(mca_btl_tcp_endpoint_t *ep, mca_btl_tcp_rdma_op_t *op,
                               unsigned status)
{
    mca_btl_tcp_module_t *module = ep->module;
    opal_list_remove_item(&ep->waiting, &op->super.super);
    --module->rdma_outstanding;
    if (MCA_BTL_TCP_STATUS_OK != status) {
        opal_output_verbose(10, mca_btl_base_output, "btl/tcp: %s refused a %s of %zu bytes: %s",
                            mca_btl_tcp_peer_name(ep), op->is_get ? "get" : "put", op->size,
                            mca_btl_tcp_status_string(status));
    }
    op->cbfunc(&module->super, ep, op->local_address, op->local_handle, op->cbcontext, op->cbdata,
               reply_status(status));
    opal_free_list_return(&module->rdma_ops, &op->super);
}
