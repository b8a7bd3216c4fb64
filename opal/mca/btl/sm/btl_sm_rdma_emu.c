/*
 * btl/sm's put and get without CMA: a pipelined copy through fragments,
 * served by the peer's progress.
 *
 *   get   the requester sends GET_REQ (which registration, where, how
 *         much); the owner checks it against its own registry and streams
 *         GET_RESP chunks (or one with an error status); the requester
 *         copies each into place and completes after the last.
 *   put   the requester streams PUT_DATA chunks; the owner checks each
 *         against its registry and copies it in; after the last one it
 *         answers PUT_ACK with a status, on which the requester completes.
 *
 * Chunks fill max fragments and several are in flight at once (bounded
 * by btl_sm_frags_per_peer), so the two copies overlap. Requests are
 * named by a slot of a fixed table and its generation, so a stale or
 * forged answer finds nothing and is ignored; a malformed message drops
 * the peer. Outgoing work waits on the endpoint's streams, in order.
 */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/sm/btl_sm.h"

enum {
    SM_OP_GET = 1,   /* requester of a get */
    SM_OP_PUT = 2,   /* requester of a put */
    SM_OP_SERVE = 3, /* owner answering a get */
    SM_OP_ACK = 4,   /* owner answering a put */
};

typedef struct sm_rdma_op_t {
    opal_free_list_item_t super; /* on its endpoint's streams */
    int kind;
    bool active; /* requester ops: the slot is taken */
    bool queued; /* on ep->streams */
    bool request_sent;
    uint32_t index, gen;
    mca_btl_sm_endpoint_t *ep;
    /* Requester: local memory and the peer's region. */
    uint8_t *local;
    uint64_t size;
    uint64_t progress; /* bytes received (get) or sent (put) */
    uint64_t remote_address;
    uint32_t reg_index;
    uint64_t reg_cookie;
    mca_btl_base_registration_handle_t *local_handle;
    mca_btl_base_rdma_completion_fn_t cbfunc;
    void *cbcontext, *cbdata;
    /* Owner: what it answers. */
    const uint8_t *src;
    uint32_t req_index, req_gen;
    uint32_t status;
} sm_rdma_op_t;

static void op_construct(sm_rdma_op_t *op)
{
    op->kind = 0;
    op->active = false;
    op->queued = false;
    op->gen = 0;
}

OBJ_CLASS_INSTANCE(sm_rdma_op_t, opal_free_list_item_t, op_construct, NULL);

/* Statuses travel as the negated OPAL_ERR_*; anything else is an error. */
static uint32_t rc_to_status(int rc)
{
    return (uint32_t) (-rc);
}

static int status_to_rc(uint32_t status)
{
    if (0 == status) {
        return OPAL_SUCCESS;
    }
    return status <= (uint32_t) (-OPAL_ERR_SILENT) ? -(int) status : OPAL_ERROR;
}

int mca_btl_sm_emu_init(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    uint32_t n = mca_btl_sm_params.rdma_ops;
    OBJ_CONSTRUCT(&sm->serve_list, opal_free_list_t);
    sm->ops = calloc(n, sizeof(*sm->ops));
    sm->op_free = calloc(n, sizeof(*sm->op_free));
    if (NULL == sm->ops || NULL == sm->op_free) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t i = 0; i < n; ++i) {
        OBJ_CONSTRUCT(&sm->ops[i], sm_rdma_op_t);
        sm->ops[i].index = i;
        sm->op_free[i] = n - 1 - i;
    }
    sm->op_free_count = n;
    sm->ops_active = 0;
    return opal_free_list_init(&sm->serve_list, sizeof(sm_rdma_op_t), 0, OBJ_CLASS(sm_rdma_op_t), 0,
                               0, 8, 0, 32, NULL, NULL, NULL);
}

void mca_btl_sm_emu_fini(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    if (NULL != sm->ops && NULL != sm->op_free) {
        for (uint32_t i = 0; i < mca_btl_sm_params.rdma_ops; ++i) {
            OBJ_DESTRUCT(&sm->ops[i]);
        }
    }
    free(sm->ops);
    free(sm->op_free);
    sm->ops = NULL;
    sm->op_free = NULL;
    /* Serve ops still queued belong to endpoints being released. */
    mca_btl_sm_endpoint_t *ep;
    OPAL_LIST_FOREACH (ep, &sm->endpoints, mca_btl_sm_endpoint_t) {
        opal_list_item_t *item;
        while (NULL != (item = opal_list_remove_first(&ep->streams))) {
            sm_rdma_op_t *op = (sm_rdma_op_t *) item;
            op->queued = false;
            if (SM_OP_SERVE == op->kind || SM_OP_ACK == op->kind) {
                opal_free_list_return_st(&sm->serve_list, &op->super);
            }
        }
    }
    OBJ_DESTRUCT(&sm->serve_list);
}

static void queue(mca_btl_sm_endpoint_t *ep, sm_rdma_op_t *op)
{
    op->queued = true;
    opal_list_append(&ep->streams, &op->super.super);
    mca_btl_sm_endpoint_add_work(ep);
}

/* Completes a requester op (lock held, dropped around the callback). */
static void complete(sm_rdma_op_t *op, int rc)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    if (op->queued) {
        opal_list_remove_item(&op->ep->streams, &op->super.super);
        op->queued = false;
    }
    op->active = false;
    --sm->ops_active;
    sm->op_free[sm->op_free_count++] = op->index;
    mca_btl_base_rdma_completion_fn_t cbfunc = op->cbfunc;
    if (NULL != cbfunc) {
        SM_UNLOCK();
        cbfunc(&sm->super, op->ep, op->local, op->local_handle, op->cbcontext, op->cbdata, rc);
        SM_LOCK();
    }
}

int mca_btl_sm_emu_start(mca_btl_sm_endpoint_t *ep, bool is_get, void *local_address,
                         uint64_t remote_address, mca_btl_base_registration_handle_t *local_handle,
                         const mca_btl_base_registration_handle_t *remote_handle, size_t size,
                         mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    if (0 == sm->op_free_count) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    sm_rdma_op_t *op = &sm->ops[sm->op_free[--sm->op_free_count]];
    ++sm->ops_active;
    ++op->gen;
    op->kind = is_get ? SM_OP_GET : SM_OP_PUT;
    op->active = true;
    op->request_sent = false;
    op->ep = ep;
    op->local = local_address;
    op->size = size;
    op->progress = 0;
    op->remote_address = remote_address;
    op->reg_index = remote_handle->index;
    op->reg_cookie = remote_handle->cookie;
    op->local_handle = local_handle;
    op->cbfunc = cbfunc;
    op->cbcontext = cbcontext;
    op->cbdata = cbdata;
    queue(ep, op);
    mca_btl_sm_emu_push(ep);
    return OPAL_SUCCESS;
}

/* Posts one message of type with msg then data bytes; false when there
 * is no fragment or no room now. */
static bool post(mca_btl_sm_endpoint_t *ep, uint8_t type, const sm_rdma_msg_t *msg,
                 const uint8_t *data, size_t data_len)
{
    mca_btl_sm_frag_t *frag = mca_btl_sm_frag_get(ep, sizeof(*msg) + data_len);
    if (NULL == frag) {
        return false;
    }
    memcpy(frag->payload, msg, sizeof(*msg));
    if (0 != data_len) {
        memcpy(frag->payload + sizeof(*msg), data, data_len);
    }
    frag->hdr->len = (uint32_t) (sizeof(*msg) + data_len);
    frag->hdr->tag = 0;
    frag->hdr->type = type;
    if (OPAL_SUCCESS != mca_btl_sm_post_frag(ep, frag)) {
        mca_btl_sm_frag_return(frag);
        return false;
    }
    return true;
}

/* Sends what op can send now; true when it has nothing left to send. */
static bool push_op(mca_btl_sm_endpoint_t *ep, sm_rdma_op_t *op)
{
    const size_t chunk_max = mca_btl_sm.max_payload - sizeof(sm_rdma_msg_t);
    sm_rdma_msg_t msg;
    memset(&msg, 0, sizeof(msg));
    switch (op->kind) {
        case SM_OP_GET:
            msg.req_index = op->index;
            msg.req_gen = op->gen;
            msg.reg_index = op->reg_index;
            msg.reg_cookie = op->reg_cookie;
            msg.address = op->remote_address;
            msg.length = op->size;
            return op->request_sent || (op->request_sent = post(ep, SM_MSG_GET_REQ, &msg, NULL, 0));
        case SM_OP_PUT:
        case SM_OP_SERVE:
            msg.req_index = SM_OP_PUT == op->kind ? op->index : op->req_index;
            msg.req_gen = SM_OP_PUT == op->kind ? op->gen : op->req_gen;
            msg.reg_index = op->reg_index;
            msg.reg_cookie = op->reg_cookie;
            msg.address = op->remote_address;
            msg.status = op->status;
            msg.length = op->size;
            /* One message at least (an empty transfer or an error status). */
            while (op->progress < op->size || !op->request_sent) {
                size_t chunk = op->size - op->progress;
                chunk = chunk > chunk_max ? chunk_max : chunk;
                const uint8_t *from = SM_OP_PUT == op->kind ? op->local : op->src;
                msg.offset = op->progress;
                if (!post(ep, SM_OP_PUT == op->kind ? SM_MSG_PUT_DATA : SM_MSG_GET_RESP, &msg,
                          0 != chunk ? from + op->progress : NULL, chunk)) {
                    return false;
                }
                op->progress += chunk;
                op->request_sent = true;
            }
            return true;
        case SM_OP_ACK:
            msg.req_index = op->req_index;
            msg.req_gen = op->req_gen;
            msg.status = op->status;
            return post(ep, SM_MSG_PUT_ACK, &msg, NULL, 0);
        default:
            return true;
    }
}

int mca_btl_sm_emu_push(mca_btl_sm_endpoint_t *ep)
{
    int events = 0;
    while (SM_EP_CONNECTED == ep->state && !opal_list_is_empty(&ep->streams)) {
        sm_rdma_op_t *op = (sm_rdma_op_t *) opal_list_get_first(&ep->streams);
        if (!push_op(ep, op)) {
            break;
        }
        opal_list_remove_first(&ep->streams);
        op->queued = false;
        if (SM_OP_SERVE == op->kind || SM_OP_ACK == op->kind) {
            opal_free_list_return(&mca_btl_sm.serve_list, &op->super);
        }
        ++events;
    }
    return events;
}

static sm_rdma_op_t *find_op(const mca_btl_sm_endpoint_t *ep, uint32_t index, uint32_t gen,
                             int kind)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    if (index >= mca_btl_sm_params.rdma_ops) {
        return NULL;
    }
    sm_rdma_op_t *op = &sm->ops[index];
    return op->active && op->gen == gen && op->kind == kind && op->ep == ep ? op : NULL;
}

/* An owner's answer, queued on ep (lock held). */
static void answer(mca_btl_sm_endpoint_t *ep, int kind, const sm_rdma_msg_t *msg,
                   const uint8_t *src, uint64_t size, int rc)
{
    sm_rdma_op_t *op = (sm_rdma_op_t *) opal_free_list_get(&mca_btl_sm.serve_list);
    if (NULL == op) {
        opal_output(0, "btl sm: out of memory answering rank %u's put/get", ep->rank);
        return;
    }
    op->kind = kind;
    op->ep = ep;
    op->req_index = msg->req_index;
    op->req_gen = msg->req_gen;
    op->status = rc_to_status(rc);
    op->src = src;
    op->size = OPAL_SUCCESS == rc ? size : 0;
    op->progress = 0;
    op->request_sent = false;
    op->reg_index = 0;
    op->reg_cookie = 0;
    op->remote_address = 0;
    queue(ep, op);
    mca_btl_sm_emu_push(ep);
}

int mca_btl_sm_emu_handle(mca_btl_sm_endpoint_t *ep, uint8_t type, const uint8_t *payload,
                          size_t len)
{
    if (len < sizeof(sm_rdma_msg_t)) {
        return OPAL_ERR_PROTOCOL;
    }
    /* Each field once, into a private copy: the peer may rewrite its
     * fragment while we look. */
    const sm_rdma_msg_t *shared = (const sm_rdma_msg_t *) (const void *) payload;
    sm_rdma_msg_t m = {.req_index = SM_READ_ONCE(shared->req_index),
                       .req_gen = SM_READ_ONCE(shared->req_gen),
                       .reg_index = SM_READ_ONCE(shared->reg_index),
                       .status = SM_READ_ONCE(shared->status),
                       .reg_cookie = SM_READ_ONCE(shared->reg_cookie),
                       .address = SM_READ_ONCE(shared->address),
                       .offset = SM_READ_ONCE(shared->offset),
                       .length = SM_READ_ONCE(shared->length)};
    const uint8_t *data = payload + sizeof(m);
    const size_t data_len = len - sizeof(m);
    int rc = OPAL_SUCCESS;
    SM_LOCK();
    switch (type) {
        case SM_MSG_GET_REQ: {
            if (0 != data_len) {
                rc = OPAL_ERR_PROTOCOL;
                break;
            }
            const mca_btl_base_registration_handle_t *h = mca_btl_sm_registration_find(
                m.reg_index, m.reg_cookie, m.address, m.length, MCA_BTL_REG_FLAG_REMOTE_READ);
            answer(ep, SM_OP_SERVE, &m, (const uint8_t *) (uintptr_t) m.address, m.length,
                   NULL != h ? OPAL_SUCCESS : OPAL_ERR_BAD_PARAM);
            break;
        }
        case SM_MSG_GET_RESP: {
            sm_rdma_op_t *op = find_op(ep, m.req_index, m.req_gen, SM_OP_GET);
            if (NULL == op) {
                break; /* an answer to something already completed */
            }
            if (0 != m.status) {
                complete(op, status_to_rc(m.status));
            } else if (m.offset != op->progress || m.length != op->size ||
                       data_len > op->size - op->progress) {
                rc = OPAL_ERR_PROTOCOL;
            } else {
                if (0 != data_len) {
                    memcpy(op->local + m.offset, data, data_len);
                }
                op->progress += data_len;
                if (op->progress == op->size) {
                    complete(op, OPAL_SUCCESS);
                }
            }
            break;
        }
        case SM_MSG_PUT_DATA: {
            if (m.offset > m.length || data_len > m.length - m.offset) {
                rc = OPAL_ERR_PROTOCOL;
                break;
            }
            const mca_btl_base_registration_handle_t *h = mca_btl_sm_registration_find(
                m.reg_index, m.reg_cookie, m.address, m.length, MCA_BTL_REG_FLAG_REMOTE_WRITE);
            if (NULL != h && 0 != data_len) {
                memcpy((uint8_t *) (uintptr_t) (m.address + m.offset), data, data_len);
            }
            if (m.offset + data_len == m.length) {
                answer(ep, SM_OP_ACK, &m, NULL, 0, NULL != h ? OPAL_SUCCESS : OPAL_ERR_BAD_PARAM);
            }
            break;
        }
        case SM_MSG_PUT_ACK: {
            sm_rdma_op_t *op = find_op(ep, m.req_index, m.req_gen, SM_OP_PUT);
            if (NULL != op) {
                complete(op, status_to_rc(m.status));
            }
            break;
        }
        default:
            rc = OPAL_ERR_PROTOCOL;
            break;
    }
    SM_UNLOCK();
    return rc;
}

void mca_btl_sm_emu_fail(mca_btl_sm_endpoint_t *ep, int status)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    SM_LOCK();
    for (uint32_t i = 0; NULL != sm->ops && i < mca_btl_sm_params.rdma_ops; ++i) {
        sm_rdma_op_t *op = &sm->ops[i];
        if (op->active && op->ep == ep) {
            complete(op, status);
        }
    }
    opal_list_item_t *item;
    while (NULL != (item = opal_list_remove_first(&ep->streams))) {
        sm_rdma_op_t *op = (sm_rdma_op_t *) item;
        op->queued = false;
        opal_free_list_return(&sm->serve_list, &op->super);
    }
    SM_UNLOCK();
}

int mca_btl_sm_emu_flush(mca_btl_sm_endpoint_t *ep)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    for (;;) {
        bool busy = false;
        SM_LOCK();
        for (uint32_t i = 0; !busy && 0 != sm->ops_active && i < mca_btl_sm_params.rdma_ops; ++i) {
            busy = sm->ops[i].active && (NULL == ep || sm->ops[i].ep == ep);
        }
        SM_UNLOCK();
        if (!busy) {
            return OPAL_SUCCESS;
        }
        opal_progress();
    }
}
