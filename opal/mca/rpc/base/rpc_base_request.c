/*
 * Requests: create, send (with credits and a deadline), abort, the
 * exactly-once completion, reference counts, and the server's replies.
 */
#include "opal/opal_config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/na/base/base.h"
#include "opal/mca/rpc/base/rpc_base_internal.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_fault.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_timer.h"
#include "opal/util/opal_timeline.h"

size_t opal_rpc_base_limit(opal_na_addr_t *addr)
{
    return NULL == addr ? OPAL_RPC_HDR_SIZE + (size_t) UINT32_MAX : opal_rpc_engine.eager_size;
}

int opal_rpc_base_build(const opal_rpc_hdr_t *hdr, const opal_rpc_codec_t *codec, const void *args,
                        const char *reason, size_t limit, uint8_t **buf, size_t *len)
{
    size_t payload = NULL != reason ? 4 + strlen(reason) : NULL != codec ? codec->size(args) : 0;
    size_t total = OPAL_RPC_HDR_SIZE + payload;
    if (total > limit || payload > UINT32_MAX) {
        return OPAL_ERR_VALUE_OUT_OF_BOUNDS;
    }
    uint8_t *b = opal_rpc_base_block_alloc(total, false);
    if (NULL == b) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    opal_rpc_hdr_t h = *hdr;
    h.payload_len = (uint32_t) payload;
    opal_rpc_base_hdr_write(&h, b);
    opal_cursor_t c;
    opal_cursor_init_write(&c, b + OPAL_RPC_HDR_SIZE, payload);
    if (NULL != reason) {
        opal_rpc_codec_put_string(&c, reason);
    } else if (NULL != codec) {
        codec->encode(&c, args);
    }
    if (!opal_cursor_done(&c)) {
        /* size() and encode() disagree: a codec bug, never the peer's. */
        opal_rpc_base_block_free(b);
        return OPAL_ERR_FATAL;
    }
    *buf = b;
    *len = total;
    return OPAL_SUCCESS;
}

/* req's peer becomes ep's: a reference of the address, none for this
 * process. */
static int set_target(opal_rpc_request_t *req, const opal_rpc_endpoint_t *ep)
{
    opal_na_addr_t *addr = NULL;
    if (NULL != ep->addr && NULL != opal_rpc_engine.na &&
        !opal_na_addr_is_self(opal_rpc_engine.na, ep->addr)) {
        int rc = opal_na_addr_dup(opal_rpc_engine.na, ep->addr, &addr);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    opal_rpc_addr_free(req->addr);
    req->addr = addr;
    req->peer_ctx = ep->ctx_idx;
    return OPAL_SUCCESS;
}

/* Frees what decoding the output allocated inside it (the struct lives
 * in the request's block). */
static void output_release(opal_rpc_request_t *req)
{
    if (NULL != req->output && req->output_decoded) {
        req->op->out->free(req->output);
        req->output_decoded = false;
    }
}

int opal_rpc_req_create(opal_rpc_context_t *ctx, const opal_rpc_endpoint_t *ep, uint32_t opcode,
                        opal_rpc_request_t **reqp)
{
    const opal_rpc_op_t *op = NULL;
    char why[160];
    if (NULL == ctx || NULL == ep || NULL == reqp) {
        return OPAL_ERR_BAD_PARAM;
    }
    int rc = opal_rpc_base_proto_lookup(opcode, &op, why, sizeof(why));
    if (OPAL_SUCCESS != rc) {
        opal_output_verbose(1, opal_rpc_base_output, "rpc: request create: %s here", why);
        return OPAL_ERR_NOT_FOUND;
    }
    opal_rpc_request_t *req = opal_rpc_base_req_alloc(op);
    if (NULL == req) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    atomic_init(&req->refcount, 1);
    atomic_init(&req->replied, false);
    req->ctx = ctx;
    req->opcode = opcode;
    req->peer_ctx = ep->ctx_idx;
    req->timeout = opal_rpc_base_vars.timeout;
    req->timer.slot = OPAL_RPC_TIMER_NONE;
    req->state = RPC_REQ_CREATED;
    rc = set_target(req, ep);
    if (OPAL_SUCCESS != rc) {
        opal_rpc_base_req_destroy(req);
        return rc;
    }
    *reqp = req;
    return OPAL_SUCCESS;
}

/* Where the input and output structs start in a request's block: after
 * the request, each aligned for any type. */
static size_t args_align(size_t n)
{
    const size_t a = _Alignof(max_align_t);
    return (n + a - 1) / a * a;
}

opal_rpc_request_t *opal_rpc_base_req_alloc(const opal_rpc_op_t *op)
{
    /* One block for the request and its argument structs, from the
     * engine's cache: a null RPC made ten malloc / free calls per side,
     * half of its instructions (callgrind, docs/rpc.md). */
    size_t in = NULL != op->in ? args_align(op->in->struct_size) : 0;
    size_t out = NULL != op->out ? args_align(op->out->struct_size) : 0;
    size_t head = args_align(sizeof(opal_rpc_request_t));
    char *block = opal_rpc_base_block_alloc(head + in + out, true);
    if (NULL == block) {
        return NULL;
    }
    opal_rpc_request_t *req = (opal_rpc_request_t *) (void *) block;
    req->op = op;
    req->input = NULL != op->in ? block + head : NULL;
    req->output = NULL != op->out ? block + head + in : NULL;
    return req;
}

void *opal_rpc_req_input(opal_rpc_request_t *req)
{
    return req->input;
}

void *opal_rpc_req_output(opal_rpc_request_t *req)
{
    return req->output;
}

uint32_t opal_rpc_req_opcode(const opal_rpc_request_t *req)
{
    return req->opcode;
}

opal_rpc_context_t *opal_rpc_req_context(const opal_rpc_request_t *req)
{
    return req->ctx;
}

const char *opal_rpc_req_error_reason(const opal_rpc_request_t *req)
{
    return req->error_reason;
}

opal_na_addr_t *opal_rpc_req_source(const opal_rpc_request_t *req)
{
    return req->addr;
}

int opal_rpc_req_reset(opal_rpc_request_t *req, const opal_rpc_endpoint_t *ep)
{
    if (NULL == req || req->server) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_rpc_context_t *ctx = req->ctx;
    RPC_CTX_LOCK(ctx);
    int state = req->state;
    bool ran = req->callback_ran;
    RPC_CTX_UNLOCK(ctx);
    if (RPC_REQ_CREATED != state && (RPC_REQ_COMPLETED != state || !ran)) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    if (NULL != ep) {
        int rc = set_target(req, ep);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    if (RPC_REQ_CREATED == state) {
        return OPAL_SUCCESS;
    }
    /* What the last round left (completion took the timer, the credit,
     * the live list and a bulk input already). */
    output_release(req);
    if (NULL != req->output) {
        memset(req->output, 0, req->op->out->struct_size);
    }
    free(req->error_reason);
    req->error_reason = NULL;
    req->status = OPAL_SUCCESS;
    req->cb = NULL;
    req->cb_arg = NULL;
    req->target = NULL;
    req->next = NULL;
    req->callback_ran = false;
    RPC_CTX_LOCK(ctx);
    req->state = RPC_REQ_CREATED;
    RPC_CTX_UNLOCK(ctx);
    return OPAL_SUCCESS;
}

int opal_rpc_req_set_timeout(opal_rpc_request_t *req, double seconds)
{
    if (NULL == req || seconds < 0 || RPC_REQ_CREATED != req->state || req->server) {
        return OPAL_ERR_BAD_PARAM;
    }
    req->timeout = seconds;
    return OPAL_SUCCESS;
}

void opal_rpc_req_addref(opal_rpc_request_t *req)
{
    /* relaxed: whoever hands the request over publishes it otherwise. */
    int32_t old = opal_thread_fetch_add_32(&req->refcount, 1, memory_order_relaxed);
    if (old <= 0 || old == INT32_MAX) {
        opal_output(0, "rpc: request reference count %d on addref", (int) old);
        abort();
    }
}

void opal_rpc_req_decref(opal_rpc_request_t *req)
{
    /* acq_rel: the last holder sees every write the others made. */
    int32_t old = opal_thread_fetch_add_32(&req->refcount, -1, memory_order_acq_rel);
    if (old <= 0) {
        opal_output(0, "rpc: request reference count %d on decref", (int) old);
        abort();
    }
    if (1 == old) {
        opal_rpc_base_req_destroy(req);
    }
}

void opal_rpc_base_req_destroy(opal_rpc_request_t *req)
{
    if (req->server) {
        (void) opal_thread_fetch_add_32(&req->ctx->server_requests, -1, memory_order_release);
    }
    /* The structs live in the request's block; what decoding allocated
     * inside them goes with the codec's free. */
    if (NULL != req->input && req->input_decoded) {
        req->op->in->free(req->input);
    }
    output_release(req);
    free(req->error_reason);
    opal_rpc_base_block_free(req->pending_buf);
    if (NULL != req->in_bulk) {
        (void) opal_bulk_free(req->in_bulk);
    }
    if (NULL != req->in_bulk_buf) {
        opal_rpc_base_seal_break(req->in_bulk_buf, req->in_bulk_size);
        free(req->in_bulk_buf);
    }
    opal_rpc_addr_free(req->addr);
    opal_rpc_base_block_free(req);
}

/* The credit account of (addr, idx), created on first use. Under ctx->lock. */
static rpc_target_t *target_get(opal_rpc_context_t *ctx, opal_na_addr_t *addr, uint8_t idx)
{
    opal_na_class_t *na = opal_rpc_engine.na;
    for (rpc_target_t *t = ctx->targets; NULL != t; t = t->next) {
        if (t->ctx_idx == idx && (t->addr == addr || (NULL != t->addr && NULL != addr &&
                                                      opal_na_addr_cmp(na, t->addr, addr)))) {
            return t;
        }
    }
    rpc_target_t *t = calloc(1, sizeof(*t));
    if (NULL == t) {
        return NULL;
    }
    if (NULL != addr && OPAL_SUCCESS != opal_na_addr_dup(na, addr, &t->addr)) {
        free(t);
        return NULL;
    }
    t->ctx_idx = idx;
    t->next = ctx->targets;
    ctx->targets = t;
    return t;
}

int opal_rpc_req_send(opal_rpc_request_t *req, opal_rpc_complete_cb_t cb, void *arg)
{
    OPAL_TIMELINE(rpc_send);
    if (NULL == req || req->server || RPC_REQ_CREATED != req->state) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_rpc_context_t *ctx = req->ctx;
    bool oneway = 0 != (req->op->flags & OPAL_RPC_OP_ONEWAY);
    uint8_t *buf = NULL;
    size_t len = 0;
    int rc;
    req->cb = cb;
    req->cb_arg = arg;

    req->id = opal_thread_fetch_add_u64(&ctx->next_id, 1, memory_order_relaxed);

    opal_rpc_hdr_t hdr = {.type = OPAL_RPC_HDR_REQUEST,
                          .flags = oneway ? OPAL_RPC_HDR_F_ONEWAY : 0,
                          .opcode = req->opcode,
                          .id = req->id,
                          .src_ctx = ctx->idx,
                          .dst_ctx = req->peer_ctx};
    rc = opal_rpc_base_build(&hdr, req->op->in, req->input, NULL, opal_rpc_base_limit(req->addr),
                             &buf, &len);
    if (OPAL_ERR_VALUE_OUT_OF_BOUNDS == rc && NULL != opal_rpc_engine.bulk) {
        rc = opal_rpc_base_bulk_request(req, &hdr, &buf, &len);
    }
    if (OPAL_SUCCESS != rc) {
        if (OPAL_ERR_VALUE_OUT_OF_BOUNDS == rc) {
            opal_output(0, "rpc: input of opcode 0x%08x is larger than the eager size %zu",
                        req->opcode, opal_rpc_engine.eager_size);
        }
        goto out_drop;
    }
    /* A one-way input by bulk waits for the server's ack: the exposure
     * may go only once the server has pulled it. */
    req->expects_reply = !oneway || NULL != req->in_bulk;

    bool start = false;
    RPC_CTX_LOCK(ctx);
    rpc_target_t *t = target_get(ctx, req->addr, req->peer_ctx);
    if (NULL == t) {
        RPC_CTX_UNLOCK(ctx);
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto out_drop;
    }
    if (opal_rpc_base_vars.credits > 0 && t->inflight >= opal_rpc_base_vars.credits) {
        if (t->queued >= opal_rpc_base_vars.credit_queue) {
            RPC_CTX_UNLOCK(ctx);
            rc = OPAL_ERR_RESOURCE_BUSY;
            goto out_drop;
        }
        req->state = RPC_REQ_QUEUED;
        req->pending_buf = buf;
        req->pending_len = len;
        buf = NULL;
        req->next = NULL;
        if (NULL == t->queue_tail) {
            t->queue_head = req;
        } else {
            t->queue_tail->next = req;
        }
        t->queue_tail = req;
        ++t->queued;
        ++ctx->stats.queued;
    } else {
        req->state = RPC_REQ_INFLIGHT;
        req->holds_credit = true;
        ++t->inflight;
        start = true;
        /* Kept through transmit: an abort from another thread may
         * complete the request and run its callback meanwhile. */
        opal_rpc_req_addref(req);
    }
    req->target = t;
    if (req->expects_reply) {
        (void) opal_rpc_base_inflight_set(ctx, req);
    }
    if (NULL != req->in_bulk) {
        ++ctx->stats.bulk_inputs;
        ++ctx->stats.bulk_inputs_held;
    }
    if (req->timeout > 0) {
        uint64_t span = (uint64_t) (req->timeout * 1e9);
        req->timer.deadline_ns =
            req->timeout >= OPAL_RPC_COARSE_MIN_S
                ? opal_timer_coarse_ns() + span + opal_rpc_engine.coarse_slack_ns
                : opal_timer_ns() + span;
        (void) opal_rpc_timer_heap_push(&ctx->timers, &req->timer);
    }
    req->live_prev = NULL;
    req->live_next = ctx->live;
    if (NULL != ctx->live) {
        ctx->live->live_prev = req;
    }
    ctx->live = req;
    ++ctx->live_requests;
    ++ctx->stats.sent;
    RPC_CTX_UNLOCK(ctx);
    /* The caller's reference is now the engine's, until the callback ran. */
    if (start) {
        (void) opal_rpc_base_transmit(ctx, req->addr, req->peer_ctx, buf, len, req);
        opal_rpc_req_decref(req);
    }
    return OPAL_SUCCESS;
out_drop:
    opal_rpc_base_block_free(buf);
    opal_rpc_req_decref(req);
    return rc;
}

/* Removes req from its target's credit queue. Under ctx->lock. */
static void target_unqueue(rpc_target_t *t, opal_rpc_request_t *req)
{
    opal_rpc_request_t **pp = &t->queue_head, *prev = NULL;
    while (NULL != *pp && *pp != req) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (NULL == *pp) {
        return;
    }
    *pp = req->next;
    if (t->queue_tail == req) {
        t->queue_tail = prev;
    }
    req->next = NULL;
    --t->queued;
}

bool opal_rpc_base_complete(opal_rpc_request_t *req, int status, char *reason)
{
    opal_rpc_context_t *ctx = req->ctx;
    opal_rpc_request_t *next = NULL;
    uint8_t *next_buf = NULL;
    size_t next_len = 0;

    RPC_CTX_LOCK(ctx);
    if (RPC_REQ_QUEUED != req->state && RPC_REQ_INFLIGHT != req->state) {
        RPC_CTX_UNLOCK(ctx);
        free(reason);
        return false;
    }
    int was = req->state;
    req->state = RPC_REQ_COMPLETED;
    req->status = status;
    req->error_reason = reason;
    if (req->expects_reply) {
        opal_rpc_base_inflight_remove(ctx, req);
    }
    (void) opal_rpc_timer_heap_remove(&ctx->timers, &req->timer);
    rpc_target_t *t = req->target;
    if (RPC_REQ_QUEUED == was) {
        target_unqueue(t, req);
        opal_rpc_base_block_free(req->pending_buf);
        req->pending_buf = NULL;
    }
    if (req->holds_credit) {
        req->holds_credit = false;
        --t->inflight;
        next = t->queue_head;
        if (NULL != next) {
            target_unqueue(t, next);
            next->state = RPC_REQ_INFLIGHT;
            next->holds_credit = true;
            ++t->inflight;
            next_buf = next->pending_buf;
            next_len = next->pending_len;
            next->pending_buf = NULL;
            /* Alive until its callback: transmit takes its own reference. */
            opal_rpc_req_addref(next);
        }
    }
    if (NULL != req->live_prev) {
        req->live_prev->live_next = req->live_next;
    } else {
        ctx->live = req->live_next;
    }
    if (NULL != req->live_next) {
        req->live_next->live_prev = req->live_prev;
    }
    req->live_prev = req->live_next = NULL;
    --ctx->live_requests;
    req->next = NULL;
    if (NULL == ctx->done_tail) {
        ctx->done_head = req;
    } else {
        ctx->done_tail->next = req;
    }
    ctx->done_tail = req;
    atomic_store_explicit(&ctx->done_ready, true, memory_order_relaxed);
    /* opal_rpc_base_wake's signal, under the lock already held. */
    if (ctx->waiting) {
        opal_condition_signal(&ctx->cond);
    }
    RPC_CTX_UNLOCK(ctx);
    if (NULL != next) {
        (void) opal_rpc_base_transmit(ctx, next->addr, next->peer_ctx, next_buf, next_len, next);
        opal_rpc_req_decref(next);
    }
    return true;
}

int opal_rpc_base_req_complete_local(opal_rpc_request_t *req, int status, opal_rpc_complete_cb_t cb,
                                     void *arg)
{
    if (NULL == req || req->server || RPC_REQ_CREATED != req->state) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_rpc_context_t *ctx = req->ctx;
    req->cb = cb;
    req->cb_arg = arg;
    RPC_CTX_LOCK(ctx);
    req->state = RPC_REQ_COMPLETED;
    req->status = status;
    req->next = NULL;
    if (NULL == ctx->done_tail) {
        ctx->done_head = req;
    } else {
        ctx->done_tail->next = req;
    }
    ctx->done_tail = req;
    /* The idle round's hint, as opal_rpc_base_complete sets it. */
    atomic_store_explicit(&ctx->done_ready, true, memory_order_relaxed);
    if (ctx->waiting) {
        opal_condition_signal(&ctx->cond);
    }
    RPC_CTX_UNLOCK(ctx);
    return OPAL_SUCCESS;
}

int opal_rpc_req_abort(opal_rpc_request_t *req)
{
    if (NULL == req || req->server) {
        return OPAL_ERR_BAD_PARAM;
    }
    (void) opal_rpc_base_complete(req, OPAL_ERR_CANCELED, NULL);
    return OPAL_SUCCESS;
}

static int reply(opal_rpc_request_t *req, int status, const char *reason)
{
    if (NULL == req || !req->server) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (opal_thread_exchange_bool(&req->replied, true, memory_order_acq_rel)) {
        return 0 != (req->op->flags & OPAL_RPC_OP_ONEWAY) ? OPAL_ERR_BAD_PARAM : OPAL_ERR_EXISTS;
    }
    opal_rpc_hdr_t hdr = {.type = OPAL_RPC_HDR_REPLY,
                          .flags = OPAL_SUCCESS == status ? 0 : OPAL_RPC_HDR_F_ERROR,
                          .opcode = req->opcode,
                          .id = req->id,
                          .src_ctx = req->ctx->idx,
                          .dst_ctx = req->peer_ctx,
                          .status = status};
    uint8_t *buf = NULL;
    size_t len = 0;
    size_t limit = opal_rpc_base_limit(req->addr);
    int rc = opal_rpc_base_build(&hdr, OPAL_SUCCESS == status ? req->op->out : NULL, req->output,
                                 reason, limit, &buf, &len);
    bool by_bulk = false;
    if (OPAL_ERR_VALUE_OUT_OF_BOUNDS == rc && OPAL_SUCCESS == status &&
        NULL != opal_rpc_engine.bulk && NULL != req->addr) {
        /* Too large for one message: exposed by bulk, pulled by the client. */
        rc = opal_rpc_base_bulk_reply(req, &hdr, &buf, &len);
        by_bulk = OPAL_SUCCESS == rc;
    }
    if (OPAL_SUCCESS != rc && OPAL_SUCCESS == status) {
        /* The client hears why instead of waiting for its timeout. */
        char why[192];
        snprintf(why, sizeof(why), "output of opcode 0x%08x (%zu bytes) %s", req->opcode,
                 NULL == req->op->out ? (size_t) 0 : req->op->out->size(req->output),
                 OPAL_ERR_VALUE_OUT_OF_BOUNDS == rc
                     ? "is larger than the eager size and cannot go by bulk"
                     : "cannot be sent");
        int err = rc;
        hdr.flags = OPAL_RPC_HDR_F_ERROR;
        hdr.status = err;
        rc = opal_rpc_base_build(&hdr, NULL, NULL, why, limit, &buf, &len);
        if (OPAL_SUCCESS == rc) {
            rc = opal_rpc_base_transmit(req->ctx, req->addr, req->peer_ctx, buf, len, NULL);
        }
        return OPAL_SUCCESS == rc ? err : rc;
    }
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if (OPAL_FAULT(rpc_reply_drop)) {
        /* Lost on the way: an output by bulk stays held until it expires. */
        opal_rpc_base_block_free(buf);
        return OPAL_SUCCESS;
    }
    if (OPAL_FAULT(rpc_reply_delay)) {
        rc = opal_rpc_base_delay_reply(req->ctx, req->addr, req->peer_ctx, buf, len,
                                       opal_fault_arg(OPAL_FAULT_SITE_rpc_reply_delay));
    } else {
        rc = opal_rpc_base_transmit(req->ctx, req->addr, req->peer_ctx, buf, len, NULL);
    }
    if (OPAL_SUCCESS != rc && by_bulk) {
        /* No reply left: no client will release what was exposed. */
        opal_rpc_base_bulk_held_release(req->ctx, req->addr, req->peer_ctx, req->id);
    }
    return rc;
}

int opal_rpc_reply_send(opal_rpc_request_t *req)
{
    OPAL_TIMELINE(rpc_reply);
    return reply(req, OPAL_SUCCESS, NULL);
}

int opal_rpc_reply_error(opal_rpc_request_t *req, int status, const char *reason)
{
    if (status >= 0) {
        return OPAL_ERR_BAD_PARAM;
    }
    return reply(req, status, NULL == reason ? "" : reason);
}
