/*
 * Contexts: each has its own na context (posted unexpected receives), a
 * completion list, a deadline heap and its progress. Incoming requests are
 * dispatched to their handler here, replies matched to their request by
 * id, and messages to this process delivered without the network.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opal/mca/na/base/base.h"
#include "opal/mca/rpc/base/rpc_base_internal.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_fault.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_timer.h"
#include "opal/util/opal_timeline.h"

typedef struct rpc_recv_slot_t {
    opal_rpc_context_t *ctx;
    void *buf;
    void *plugin_data;
    opal_na_op_id_t *op;
    bool posted;
    struct rpc_recv_slot_t *repost_next; /* on the context's repost list */
} rpc_recv_slot_t;

/* A reply the rpc_reply_delay fault site holds. */
typedef struct rpc_delayed_t {
    struct rpc_delayed_t *next;
    uint64_t due_ns;
    opal_na_addr_t *addr; /* a reference; NULL: this process */
    uint8_t ctx_idx;
    uint8_t *buf;
    size_t len;
} rpc_delayed_t;

/* The context the calling thread progresses (opal_rpc_base_in_progress).
 * initial-exec: read and written twice per progress call, and libopal is
 * loaded with the program, never dlopen'd (the default model calls
 * __tls_get_addr each time). */
static _Thread_local opal_rpc_context_t *progressing __attribute__((tls_model("initial-exec")));

bool opal_rpc_base_in_progress(opal_rpc_context_t *ctx)
{
    return progressing == ctx;
}

void opal_rpc_base_wake(opal_rpc_context_t *ctx)
{
    RPC_CTX_LOCK(ctx);
    if (ctx->waiting) {
        opal_condition_signal(&ctx->cond);
    }
    RPC_CTX_UNLOCK(ctx);
}

static void recv_post(rpc_recv_slot_t *slot);

static void recv_done(const opal_na_cb_info_t *info)
{
    OPAL_TIMELINE(rpc_recv);
    rpc_recv_slot_t *slot = info->arg;
    opal_rpc_context_t *ctx = slot->ctx;
    slot->posted = false;
    if (OPAL_SUCCESS == info->ret) {
        opal_rpc_base_deliver(ctx, slot->buf, info->info.recv_unexpected.actual_size,
                              info->info.recv_unexpected.source);
    } else if (OPAL_ERR_CANCELED != info->ret) {
        opal_output_verbose(1, opal_rpc_base_output, "rpc: context %u: a receive failed: %s",
                            ctx->idx, opal_strerror(info->ret));
    }
    if (!ctx->closing) {
        /* Posted again when the next progress round starts: a client's
         * next request, sent once this round's completions have run,
         * does not wait for the receive its reply freed (the context
         * keeps rpc_base_recv_posted receives, so one fewer for a while
         * loses nothing). */
        slot->repost_next = ctx->repost;
        ctx->repost = slot;
    }
}

static void recv_post(rpc_recv_slot_t *slot)
{
    opal_rpc_context_t *ctx = slot->ctx;
    int rc =
        opal_na_msg_recv_unexpected(opal_rpc_engine.na, ctx->na_ctx, recv_done, slot, slot->buf,
                                    opal_rpc_engine.eager_size, slot->plugin_data, slot->op);
    slot->posted = OPAL_SUCCESS == rc;
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "rpc: context %u: could not post a receive: %s", ctx->idx,
                    opal_strerror(rc));
    }
}

static void send_done(const opal_na_cb_info_t *info)
{
    opal_rpc_base_send_t *s = info->arg;
    opal_rpc_request_t *req = s->req;
    if (NULL != req) {
        if (OPAL_SUCCESS != info->ret) {
            char why[96];
            snprintf(why, sizeof(why), "sending the request failed: %s", opal_strerror(info->ret));
            (void) opal_rpc_base_complete(req, info->ret, strdup(why));
        } else if (!req->expects_reply) {
            (void) opal_rpc_base_complete(req, OPAL_SUCCESS, NULL);
        }
        opal_rpc_req_decref(req);
    }
    (void) opal_thread_fetch_add_32(&s->ctx->sends_pending, -1, memory_order_relaxed);
    opal_rpc_base_block_free(s->buf);
    opal_rpc_base_send_put(s, opal_rpc_engine.na);
}

int opal_rpc_base_transmit(opal_rpc_context_t *ctx, opal_na_addr_t *addr, uint8_t ctx_idx,
                           uint8_t *buf, size_t len, opal_rpc_request_t *req)
{
    OPAL_TIMELINE(rpc_transmit);
    opal_rpc_engine_t *e = &opal_rpc_engine;
    int rc;
    if (NULL == addr) {
        /* This process: the message goes on the target context's list. */
        rpc_msg_t *m = malloc(sizeof(*m));
        if (NULL == m) {
            rc = OPAL_ERR_OUT_OF_RESOURCE;
            goto fail;
        }
        m->next = NULL;
        m->data = buf;
        m->len = len;
        opal_mutex_lock(&e->lock);
        opal_rpc_context_t *dst = e->contexts[ctx_idx];
        if (NULL == dst) {
            opal_mutex_unlock(&e->lock);
            free(m);
            rc = OPAL_ERR_UNREACH;
            goto fail;
        }
        opal_mutex_lock(&dst->lock);
        if (NULL == dst->in_tail) {
            dst->in_head = m;
        } else {
            dst->in_tail->next = m;
        }
        dst->in_tail = m;
        atomic_store_explicit(&dst->in_ready, true, memory_order_relaxed);
        if (dst->waiting) {
            opal_condition_signal(&dst->cond);
        }
        opal_mutex_unlock(&dst->lock);
        opal_mutex_unlock(&e->lock);
        if (NULL != req && !req->expects_reply) {
            (void) opal_rpc_base_complete(req, OPAL_SUCCESS, NULL);
        }
        return OPAL_SUCCESS;
    }
    /* A message the transport takes at once needs no operation, and so no
     * completion to queue, trigger and run: about 300 instructions less
     * per message (callgrind), after it left, so CPU time more than
     * latency. */
    rc = opal_na_msg_inject_unexpected(e->na, ctx->na_ctx, buf, len, addr, ctx_idx, 0);
    if (OPAL_SUCCESS == rc) {
        opal_rpc_base_block_free(buf);
        if (NULL != req && !req->expects_reply) {
            (void) opal_rpc_base_complete(req, OPAL_SUCCESS, NULL);
        }
        return OPAL_SUCCESS;
    }
    if (OPAL_ERR_RESOURCE_BUSY != rc && OPAL_ERR_NOT_SUPPORTED != rc) {
        goto fail;
    }
    opal_rpc_base_send_t *s = opal_rpc_base_send_get();
    if (NULL != s && NULL == s->op) {
        s->op = opal_na_op_create(e->na);
    }
    if (NULL == s || NULL == s->op) {
        if (NULL != s) {
            opal_rpc_base_send_put(s, e->na);
        }
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto fail;
    }
    s->ctx = ctx;
    s->req = req;
    s->buf = buf;
    if (NULL != req) {
        opal_rpc_req_addref(req);
    }
    (void) opal_thread_fetch_add_32(&ctx->sends_pending, 1, memory_order_relaxed);
    rc = opal_na_msg_send_unexpected(e->na, ctx->na_ctx, send_done, s, buf, len, NULL, addr,
                                     ctx_idx, 0, s->op);
    if (OPAL_SUCCESS != rc) {
        (void) opal_thread_fetch_add_32(&ctx->sends_pending, -1, memory_order_relaxed);
        if (NULL != req) {
            opal_rpc_req_decref(req);
        }
        opal_rpc_base_send_put(s, e->na);
        goto fail;
    }
    return OPAL_SUCCESS;
fail:
    opal_rpc_base_block_free(buf);
    if (NULL != req) {
        char why[96];
        snprintf(why, sizeof(why), "could not send to context %u: %s", ctx_idx, opal_strerror(rc));
        (void) opal_rpc_base_complete(req, rc, strdup(why));
    }
    return rc;
}

/* The sender's URI for messages (or "this process"). */
static void source_name(opal_na_addr_t *source, char *buf, size_t size)
{
    opal_na_addr_name(opal_rpc_engine.na, source, buf, size, "this process");
}

void opal_rpc_base_error_reply(opal_rpc_context_t *ctx, const opal_rpc_hdr_t *in,
                               opal_na_addr_t *source, int status, const char *why)
{
    opal_rpc_hdr_t hdr = {.type = OPAL_RPC_HDR_REPLY,
                          .flags = OPAL_RPC_HDR_F_ERROR,
                          .opcode = in->opcode,
                          .id = in->id,
                          .src_ctx = ctx->idx,
                          .dst_ctx = in->src_ctx,
                          .status = status};
    uint8_t *buf = NULL;
    size_t len = 0;
    if (OPAL_SUCCESS ==
        opal_rpc_base_build(&hdr, NULL, NULL, why, opal_rpc_base_limit(source), &buf, &len)) {
        (void) opal_rpc_base_transmit(ctx, source, in->src_ctx, buf, len, NULL);
    }
}

int opal_rpc_base_delay_reply(opal_rpc_context_t *ctx, opal_na_addr_t *addr, uint8_t ctx_idx,
                              uint8_t *buf, size_t len, uint64_t ms)
{
    rpc_delayed_t *d = calloc(1, sizeof(*d));
    if (NULL == d ||
        (NULL != addr && OPAL_SUCCESS != opal_na_addr_dup(opal_rpc_engine.na, addr, &d->addr))) {
        free(d);
        opal_rpc_base_block_free(buf);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    d->due_ns = opal_timer_ns() + ms * 1000000;
    d->ctx_idx = ctx_idx;
    d->buf = buf;
    d->len = len;
    RPC_CTX_LOCK(ctx);
    rpc_delayed_t **pp = &ctx->delayed;
    while (NULL != *pp) {
        pp = &(*pp)->next;
    }
    *pp = d;
    RPC_CTX_UNLOCK(ctx);
    opal_rpc_base_wake(ctx);
    return OPAL_SUCCESS;
}

unsigned int opal_rpc_base_delayed_flush(opal_rpc_context_t *ctx, bool all)
{
    rpc_delayed_t *due = NULL, **tail = &due;
    uint64_t now = opal_timer_ns(), next = UINT64_MAX;
    RPC_CTX_LOCK(ctx);
    rpc_delayed_t **pp = &ctx->delayed;
    while (NULL != *pp) {
        rpc_delayed_t *d = *pp;
        if (all || d->due_ns <= now) {
            *pp = d->next;
            d->next = NULL;
            *tail = d;
            tail = &d->next;
        } else {
            next = d->due_ns < next ? d->due_ns : next;
            pp = &d->next;
        }
    }
    RPC_CTX_UNLOCK(ctx);
    while (NULL != due) {
        rpc_delayed_t *d = due;
        due = d->next;
        (void) opal_rpc_base_transmit(ctx, d->addr, d->ctx_idx, d->buf, d->len, NULL);
        opal_rpc_addr_free(d->addr);
        free(d);
    }
    if (UINT64_MAX == next) {
        return UINT32_MAX;
    }
    uint64_t ms = (next - now + 999999) / 1000000;
    return ms > UINT32_MAX ? UINT32_MAX : (unsigned int) ms;
}

/* refused: why the request's clock was refused (rpc_hlc.h), or NULL. */
static void deliver_request(opal_rpc_context_t *ctx, const opal_rpc_hdr_t *hdr,
                            const uint8_t *payload, opal_na_addr_t *source, const char *refused)
{
    const opal_rpc_op_t *op = NULL;
    bool oneway = 0 != (hdr->flags & OPAL_RPC_HDR_F_ONEWAY);
    char why[256];
    if (OPAL_RPC_OPCODE_BASE(hdr->opcode) < OPAL_RPC_BASE_RESERVED &&
        OPAL_FAULT(rpc_request_drop)) {
        goto drop;
    }
    int rc = OPAL_ERR_HLC_SYNC;
    if (NULL != refused) {
        snprintf(why, sizeof(why), "%s", refused);
    } else {
        rc = opal_rpc_base_proto_lookup(hdr->opcode, &op, why, sizeof(why));
    }
    if (OPAL_SUCCESS == rc && oneway != (0 != (op->flags & OPAL_RPC_OP_ONEWAY))) {
        snprintf(why, sizeof(why), "opcode 0x%08x is %sone-way here", hdr->opcode,
                 oneway ? "not " : "");
        rc = OPAL_ERR_PROTOCOL;
    }
    if (OPAL_SUCCESS != rc) {
        /* A one-way input by bulk is acknowledged: its sender waits. */
        if (!oneway || 0 != (hdr->flags & OPAL_RPC_HDR_F_BULK)) {
            size_t n = strlen(why);
            snprintf(why + n, sizeof(why) - n, " at context %u", ctx->idx);
            opal_rpc_base_error_reply(ctx, hdr, source, rc, why);
        }
        goto drop;
    }
    if (0 != (hdr->flags & OPAL_RPC_HDR_F_BULK)) {
        opal_rpc_base_bulk_pull(ctx, hdr, op, payload, source);
        return;
    }
    opal_rpc_base_dispatch(ctx, hdr, op, payload, hdr->payload_len, source);
    return;
drop:
    opal_rpc_addr_free(source);
}

/* The task of one request: its argument area holds the request and the
 * engine's reference on it, dropped once the handler returned. */
static void handler_run(void *arg)
{
    opal_rpc_request_t *req = arg;
    OPAL_TIMELINE(rpc_handler);
    req->op->handler(req);
    opal_rpc_req_decref(req);
}

static int handler_task(opal_sched_task_t *task)
{
    handler_run(*(opal_rpc_request_t **) opal_sched_task_arg(task, sizeof(opal_rpc_request_t *)));
    return OPAL_SUCCESS;
}

/* Hands req (and the engine's reference) to ctx's scheduler at its
 * operation's priority. A policy that refuses it (prio's admission bound)
 * gets the client a "busy" error reply instead of an unbounded queue. */
static void handler_schedule(opal_rpc_context_t *ctx, const opal_rpc_op_t *op,
                             opal_rpc_request_t *req, bool oneway)
{
    opal_sched_task_t *task = NULL;
    int rc = opal_sched_task_create(ctx->sched, handler_task, OPAL_SCHED_TASK_AUTO, &task);
    if (OPAL_SUCCESS == rc) {
        *(opal_rpc_request_t **) opal_sched_task_arg(task, sizeof(req)) = req;
        rc = opal_sched_task_set_priority(task, op->priority < 0 ? 0 : op->priority, 0);
    }
    if (OPAL_SUCCESS == rc) {
        rc = opal_sched_task_schedule(task, 0);
        if (OPAL_SUCCESS == rc) {
            return; /* the task owns the request's reference now */
        }
    }
    if (NULL != task) {
        opal_sched_task_release(task);
    }
    char why[160];
    snprintf(why, sizeof(why), "context %u cannot run opcode 0x%08x now (sched %s: %s)", ctx->idx,
             req->opcode, opal_sched_policy_name(), opal_strerror(rc));
    opal_output_verbose(1, opal_rpc_base_output, "rpc: %s", why);
    if (!oneway) {
        (void) opal_rpc_reply_error(
            req, OPAL_ERR_RESOURCE_BUSY == rc ? rc : OPAL_ERR_OUT_OF_RESOURCE, why);
    }
    opal_rpc_req_decref(req);
}

void opal_rpc_base_dispatch(opal_rpc_context_t *ctx, const opal_rpc_hdr_t *hdr,
                            const opal_rpc_op_t *op, const uint8_t *payload, size_t len,
                            opal_na_addr_t *source)
{
    bool oneway = 0 != (hdr->flags & OPAL_RPC_HDR_F_ONEWAY);
    char why[256], name[128];
    int rc = OPAL_SUCCESS;
    opal_rpc_request_t *req = opal_rpc_base_req_alloc(op);
    if (NULL == req) {
        opal_rpc_addr_free(source);
        return;
    }
    atomic_init(&req->refcount, 1);
    atomic_init(&req->replied, oneway);
    (void) opal_thread_fetch_add_32(&ctx->server_requests, 1, memory_order_relaxed);
    req->server = true;
    req->ctx = ctx;
    req->opcode = hdr->opcode;
    req->addr = source;
    req->peer_ctx = hdr->src_ctx;
    req->id = hdr->id;
    req->timer.slot = OPAL_RPC_TIMER_NONE;
    if (NULL != op->in) {
        rc = opal_rpc_codec_decode_with(op->in, opal_rpc_engine.bulk, payload, len, req->input);
        req->input_decoded = OPAL_SUCCESS == rc;
    } else if (0 != len) {
        rc = OPAL_ERR_PROTOCOL;
    }
    if (OPAL_SUCCESS != rc) {
        source_name(source, name, sizeof(name));
        snprintf(why, sizeof(why),
                 "input of opcode 0x%08x (%zu bytes) from %s does not decode as %s", hdr->opcode,
                 len, name, NULL == op->in ? "no arguments" : op->in->name);
        opal_output_verbose(1, opal_rpc_base_output, "rpc: %s", why);
        if (!oneway) {
            (void) opal_rpc_reply_error(req, OPAL_ERR_PROTOCOL, why);
        }
        opal_rpc_req_decref(req);
        return;
    }
    (void) opal_thread_fetch_add_u64(&ctx->handled, 1, memory_order_relaxed);
    if (NULL == ctx->sched || 0 != (op->flags & OPAL_RPC_OP_INLINE)) {
        handler_run(req);
        return;
    }
    /* fifo with nothing scheduled: the task would run next, in this
     * thread's progress; run the handler as that pass would, without the
     * task. */
    if (opal_sched_run_now(ctx->sched, handler_run, req)) {
        return;
    }
    handler_schedule(ctx, op, req, oneway);
}

/* Slots of a context's table of requests in flight (a power of two). */
#define RPC_INFLIGHT_SLOTS 1024

int opal_rpc_base_inflight_set(opal_rpc_context_t *ctx, opal_rpc_request_t *req)
{
    opal_rpc_request_t **slot = &ctx->inflight_slots[req->id & ctx->inflight_mask];
    if (NULL == *slot) {
        *slot = req;
        return OPAL_SUCCESS;
    }
    /* An older request still waits on this slot: the rare case. */
    int rc = opal_hash_table_set_value_uint64(&ctx->inflight, req->id, req);
    if (OPAL_SUCCESS == rc) {
        ++ctx->inflight_overflow;
    }
    return rc;
}

opal_rpc_request_t *opal_rpc_base_inflight_get(opal_rpc_context_t *ctx, uint64_t id)
{
    opal_rpc_request_t *req = ctx->inflight_slots[id & ctx->inflight_mask];
    if (NULL != req && req->id == id) {
        return req;
    }
    void *found = NULL;
    if (0 != ctx->inflight_overflow) {
        (void) opal_hash_table_get_value_uint64(&ctx->inflight, id, &found);
    }
    return found;
}

void opal_rpc_base_inflight_remove(opal_rpc_context_t *ctx, opal_rpc_request_t *req)
{
    opal_rpc_request_t **slot = &ctx->inflight_slots[req->id & ctx->inflight_mask];
    if (*slot == req) {
        *slot = NULL;
    } else if (0 != ctx->inflight_overflow &&
               OPAL_SUCCESS == opal_hash_table_remove_value_uint64(&ctx->inflight, req->id)) {
        --ctx->inflight_overflow;
    }
}

/* refused: why the reply's clock was refused (rpc_hlc.h), or NULL. */
static void deliver_reply(opal_rpc_context_t *ctx, const opal_rpc_hdr_t *hdr,
                          const uint8_t *payload, const char *refused)
{
    RPC_CTX_LOCK(ctx);
    opal_rpc_request_t *req = opal_rpc_base_inflight_get(ctx, hdr->id);
    if (NULL == req || req->opcode != hdr->opcode) {
        ++ctx->stats.late_replies;
        RPC_CTX_UNLOCK(ctx);
        return;
    }
    opal_rpc_req_addref(req);
    RPC_CTX_UNLOCK(ctx);
    int status = hdr->status;
    char *reason = NULL;
    if (NULL != refused) {
        /* Its output is not read: what the peer did happened, by its
         * clock, too far in this process's future to be ordered. */
        status = OPAL_ERR_HLC_SYNC;
        reason = strdup(refused);
    } else if (0 != (hdr->flags & OPAL_RPC_HDR_F_BULK) &&
               0 == (hdr->flags & OPAL_RPC_HDR_F_ERROR)) {
        if (NULL != req->out_pull) {
            /* A second reply while the first one's output is pulled. */
            RPC_CTX_LOCK(ctx);
            ++ctx->stats.late_replies;
            RPC_CTX_UNLOCK(ctx);
            opal_rpc_req_decref(req);
            return;
        }
        status = opal_rpc_base_bulk_output_pull(ctx, req, hdr, payload, &reason);
        if (OPAL_SUCCESS == status) {
            opal_rpc_req_decref(req); /* the pull holds its own reference */
            return;
        }
    } else if (0 != (hdr->flags & OPAL_RPC_HDR_F_ERROR)) {
        opal_cursor_t c;
        opal_cursor_init_read(&c, payload, hdr->payload_len);
        opal_rpc_codec_get_string(&c, &reason);
        if (!opal_cursor_done(&c)) {
            free(reason);
            reason = strdup("an error reply whose reason does not decode");
        }
    } else if (NULL != req->op->out && !req->output_decoded &&
               0 == (req->op->flags & OPAL_RPC_OP_ONEWAY)) {
        /* (A one-way request's ack carries nothing.) */
        int rc = opal_rpc_codec_decode_with(req->op->out, opal_rpc_engine.bulk, payload,
                                            hdr->payload_len, req->output);
        req->output_decoded = OPAL_SUCCESS == rc;
        if (OPAL_SUCCESS != rc) {
            char why[160];
            snprintf(why, sizeof(why), "output of opcode 0x%08x (%u bytes) does not decode as %s",
                     hdr->opcode, hdr->payload_len, req->op->out->name);
            status = rc;
            reason = strdup(why);
        }
    }
    if (!opal_rpc_base_complete(req, status, reason)) {
        RPC_CTX_LOCK(ctx);
        ++ctx->stats.late_replies;
        RPC_CTX_UNLOCK(ctx);
    }
    opal_rpc_req_decref(req);
}

void opal_rpc_base_deliver(opal_rpc_context_t *ctx, const uint8_t *buf, size_t len,
                           opal_na_addr_t *source)
{
    opal_rpc_hdr_t hdr;
    const char *why = NULL;
    if (OPAL_SUCCESS != opal_rpc_hdr_decode(&hdr, buf, len, &why) || hdr.dst_ctx != ctx->idx) {
        char name[128];
        source_name(source, name, sizeof(name));
        opal_output_verbose(1, opal_rpc_base_output,
                            "rpc: context %u: dropped a message of %zu bytes from %s: %s", ctx->idx,
                            len, name, NULL == why ? "for another context" : why);
        RPC_CTX_LOCK(ctx);
        ++ctx->stats.bad_messages;
        RPC_CTX_UNLOCK(ctx);
        opal_rpc_addr_free(source);
        return;
    }
    /* The sender's clock: this process's moves past it before anything
     * the message starts, or the message is refused (rpc_hlc.h). */
    uint64_t ahead = 0;
    char refused[256];
    bool clock_ok = OPAL_SUCCESS == opal_rpc_base_hlc_recv(hdr.hlc, &ahead);
    if (!clock_ok) {
        char name[128];
        source_name(source, name, sizeof(name));
        snprintf(refused, sizeof(refused),
                 "the clock of %s is %.3f s ahead of this process's, past the HLC epsilon of "
                 "%.3f s (rpc_base_hlc_epsilon)",
                 name, (double) ahead / 1e9, (double) opal_rpc_hlc_epsilon_get() / 1e9);
        opal_output_verbose(1, opal_rpc_base_output, "rpc: refused a %s of opcode 0x%08x: %s",
                            OPAL_RPC_HDR_REQUEST == hdr.type ? "request" : "reply", hdr.opcode,
                            refused);
        RPC_CTX_LOCK(ctx);
        ++ctx->stats.clock_refused;
        RPC_CTX_UNLOCK(ctx);
    }
    if (OPAL_RPC_HDR_REQUEST == hdr.type) {
        deliver_request(ctx, &hdr, buf + OPAL_RPC_HDR_SIZE, source, clock_ok ? NULL : refused);
    } else {
        opal_rpc_addr_free(source);
        deliver_reply(ctx, &hdr, buf + OPAL_RPC_HDR_SIZE, clock_ok ? NULL : refused);
    }
}

unsigned int opal_rpc_base_expire(opal_rpc_context_t *ctx)
{
    for (;;) {
        RPC_CTX_LOCK(ctx);
        opal_rpc_timer_entry_t *top = opal_rpc_timer_heap_top(&ctx->timers);
        if (NULL == top) {
            /* No deadline (a server's usual case): no clock read. */
            RPC_CTX_UNLOCK(ctx);
            return UINT32_MAX;
        }
        /* The coarse clock lags the fine one by less than the slack: a
         * deadline past coarse + slack is not due yet, and this round
         * reads no fine clock. The wait it returns ends before the
         * deadline. */
        uint64_t coarse = opal_timer_coarse_ns() + opal_rpc_engine.coarse_slack_ns;
        if (top->deadline_ns > coarse) {
            uint64_t ms = (top->deadline_ns - coarse + 999999) / 1000000;
            RPC_CTX_UNLOCK(ctx);
            return ms > UINT32_MAX ? UINT32_MAX : (unsigned int) ms;
        }
        uint64_t now = opal_timer_ns();
        if (top->deadline_ns > now) {
            uint64_t ms = (top->deadline_ns - now + 999999) / 1000000;
            RPC_CTX_UNLOCK(ctx);
            return ms > UINT32_MAX ? UINT32_MAX : (unsigned int) ms;
        }
        (void) opal_rpc_timer_heap_remove(&ctx->timers, top);
        opal_rpc_request_t *req =
            (opal_rpc_request_t *) (void *) ((char *) top - offsetof(opal_rpc_request_t, timer));
        /* Alive: completing it is what would let it go, and only this
         * thread runs its callback. */
        RPC_CTX_UNLOCK(ctx);
        char why[96];
        snprintf(why, sizeof(why), "no reply within %g s", req->timeout);
        if (opal_rpc_base_complete(req, OPAL_ERR_TIMEOUT, strdup(why))) {
            RPC_CTX_LOCK(ctx);
            ++ctx->stats.timeouts;
            RPC_CTX_UNLOCK(ctx);
        }
    }
}

static unsigned int gone_progress(opal_rpc_context_t *ctx);

/* Posts again the receives the previous round completed. */
static inline void repost(opal_rpc_context_t *ctx)
{
    while (NULL != ctx->repost) {
        rpc_recv_slot_t *slot = ctx->repost;
        ctx->repost = slot->repost_next;
        if (!ctx->closing) {
            recv_post(slot);
        }
    }
}

/* One round: loopback deliveries, the network, deadlines (when timers),
 * completions (polled: the network was just polled, by a wait that
 * returned early). Returns how many things happened. */
static unsigned int progress_once(opal_rpc_context_t *ctx, unsigned int *next_ms, bool timers,
                                  bool polled)
{
    unsigned int events = 0;
    rpc_msg_t *m = NULL;
    repost(ctx);
    if (atomic_load_explicit(&ctx->in_ready, memory_order_relaxed)) {
        RPC_CTX_LOCK(ctx);
        m = ctx->in_head;
        ctx->in_head = ctx->in_tail = NULL;
        atomic_store_explicit(&ctx->in_ready, false, memory_order_relaxed);
        RPC_CTX_UNLOCK(ctx);
    }
    while (NULL != m) {
        rpc_msg_t *next = m->next;
        opal_rpc_base_deliver(ctx, m->data, m->len, NULL);
        opal_rpc_base_block_free(m->data);
        free(m);
        m = next;
        ++events;
    }
    if (NULL != ctx->na_ctx) {
        unsigned int count = 0;
        /* A wait that just returned with completions has polled: another
         * poll first would put one more system call (tcp's) between the
         * message and its handler. */
        if (!polled || !opal_na_trigger_pending(ctx->na_ctx)) {
            (void) opal_na_poll(opal_rpc_engine.na, ctx->na_ctx, NULL);
        }
        (void) opal_na_trigger(ctx->na_ctx, 0, &count);
        events += count;
    }
    if (NULL != ctx->sched) {
        /* Handlers queued by fifo and prio run here (pool's on workers). */
        int ran = opal_sched_progress(ctx->sched);
        events += ran > 0 ? (unsigned int) ran : 0;
    }
    if (OPAL_UNLIKELY(atomic_load_explicit(&ctx->gone_ready, memory_order_relaxed))) {
        events += gone_progress(ctx);
    }
    if (timers) {
        *next_ms = opal_rpc_base_expire(ctx);
        opal_rpc_base_bulk_held_expire(ctx);
#if OPAL_ENABLE_FAULT_INJECTION
        /* After the deadlines: a reply held past one arrives late. */
        if (atomic_load_explicit(&opal_fault_active, memory_order_relaxed)) {
            unsigned int ms = opal_rpc_base_delayed_flush(ctx, false);
            *next_ms = ms < *next_ms ? ms : *next_ms;
        }
#endif
    }
    opal_rpc_request_t *done = NULL;
    if (atomic_load_explicit(&ctx->done_ready, memory_order_relaxed)) {
        RPC_CTX_LOCK(ctx);
        done = ctx->done_head;
        ctx->done_head = ctx->done_tail = NULL;
        atomic_store_explicit(&ctx->done_ready, false, memory_order_relaxed);
        RPC_CTX_UNLOCK(ctx);
    }
    while (NULL != done) {
        opal_rpc_request_t *next = done->next;
        if (NULL != done->out_pull) {
            /* Completed otherwise while its output was pulled. */
            opal_rpc_base_bulk_output_cancel(done);
        }
        if (NULL != done->in_bulk) {
            opal_rpc_base_bulk_input_release(done);
        }
        done->callback_ran = true;
        if (NULL != done->cb) {
            OPAL_TIMELINE(rpc_complete);
            done->cb(done, done->status, done->cb_arg);
        }
        RPC_CTX_LOCK(ctx);
        ++ctx->stats.completed;
        RPC_CTX_UNLOCK(ctx);
        opal_rpc_req_decref(done);
        done = next;
        ++events;
    }
    return events;
}

int opal_rpc_progress(opal_rpc_context_t *ctx, unsigned int timeout_ms)
{
    opal_rpc_context_t *outer = progressing;
    unsigned int events = 0, next_ms = 0;
    uint64_t deadline = 0;
    progressing = ctx;
    if (0 == timeout_ms) {
        /* A spinning caller: reading the clock for the deadlines on every
         * round cost a third of a null RPC's time (clock_gettime in a
         * perf profile); every 16th round delays a timeout by microseconds. */
        events = progress_once(ctx, &next_ms, 0 == (++ctx->rounds & 15), false);
        progressing = outer;
        return events > 0 ? OPAL_SUCCESS : OPAL_ERR_TIMEOUT;
    }
    bool polled = false;
    for (;;) {
        events = progress_once(ctx, &next_ms, true, polled);
        polled = false;
        if (events > 0) {
            break;
        }
        /* The wait counts from the first idle round: a call that finds
         * work at once reads no clock. */
        uint64_t now = opal_timer_ns();
        if (0 == deadline) {
            deadline = now + (uint64_t) timeout_ms * 1000000;
        } else if (now >= deadline) {
            break;
        }
        uint64_t left_ms = (deadline - now + 999999) / 1000000;
        unsigned int wait = (unsigned int) (left_ms < next_ms ? left_ms : next_ms);
        if (NULL != ctx->na_ctx) {
            /* Loopback and other threads' completions do not wake the na
             * fd: wait in short slices. */
            polled = OPAL_SUCCESS == opal_na_poll_wait(opal_rpc_engine.na, ctx->na_ctx,
                                                       wait < 5 ? wait : 5, NULL);
        } else {
            /* Always locked: the condition wait needs the mutex held. */
            opal_mutex_lock(&ctx->lock);
            if (NULL == ctx->in_head && NULL == ctx->done_head) {
                ctx->waiting = true;
                (void) opal_condition_timedwait(&ctx->cond, &ctx->lock,
                                                now + (uint64_t) wait * 1000000);
                ctx->waiting = false;
            }
            opal_mutex_unlock(&ctx->lock);
        }
    }
    progressing = outer;
    return events > 0 ? OPAL_SUCCESS : OPAL_ERR_TIMEOUT;
}

int opal_rpc_progress_cond(opal_rpc_context_t *ctx, unsigned int timeout_ms,
                           bool (*cond)(void *arg), void *arg)
{
    uint64_t deadline = opal_timer_ns() + (uint64_t) timeout_ms * 1000000;
    while (!cond(arg)) {
        uint64_t now = opal_timer_ns();
        if (0 != timeout_ms && now >= deadline) {
            return OPAL_ERR_TIMEOUT;
        }
        unsigned int slice = 0 == timeout_ms ? 100 : (unsigned int) ((deadline - now) / 1000000);
        (void) opal_rpc_progress(ctx, slice > 100 ? 100 : slice);
    }
    return OPAL_SUCCESS;
}

int opal_rpc_context_create(uint8_t idx, opal_rpc_context_t **ctxp)
{
    opal_rpc_engine_t *e = &opal_rpc_engine;
    int rc = OPAL_SUCCESS;
    if (0 == e->refcount) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    if (OPAL_NA_CONTEXT_ID_BULK == idx || NULL == ctxp) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_rpc_context_t *ctx = calloc(1, sizeof(*ctx));
    if (NULL == ctx) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    ctx->idx = idx;
    atomic_init(&ctx->next_id, 1);
    atomic_init(&ctx->handled, 0);
    OBJ_CONSTRUCT(&ctx->lock, opal_mutex_t);
    OBJ_CONSTRUCT(&ctx->cond, opal_condition_t);
    OBJ_CONSTRUCT(&ctx->inflight, opal_hash_table_t);
    opal_rpc_timer_heap_init(&ctx->timers);
    rc = opal_hash_table_init(&ctx->inflight, 64);
    ctx->inflight_mask = RPC_INFLIGHT_SLOTS - 1;
    ctx->inflight_slots = calloc(RPC_INFLIGHT_SLOTS, sizeof(*ctx->inflight_slots));
    if (OPAL_SUCCESS == rc && NULL == ctx->inflight_slots) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (OPAL_SUCCESS == rc && e->sched_open) {
        rc = opal_sched_create(&ctx->sched);
    }
    if (OPAL_SUCCESS != rc) {
        goto fail;
    }
    opal_mutex_lock(&e->lock);
    if (NULL != e->contexts[idx]) {
        opal_mutex_unlock(&e->lock);
        rc = OPAL_ERR_EXISTS;
        goto fail;
    }
    e->contexts[idx] = ctx;
    opal_mutex_unlock(&e->lock);
    if (NULL != e->na) {
        rc = opal_na_context_create(e->na, idx, &ctx->na_ctx);
        if (OPAL_SUCCESS != rc) {
            goto fail_table;
        }
        ctx->slots = calloc((size_t) opal_rpc_base_vars.recv_posted, sizeof(*ctx->slots));
        if (NULL == ctx->slots) {
            rc = OPAL_ERR_OUT_OF_RESOURCE;
            goto fail_table;
        }
        for (int i = 0; i < opal_rpc_base_vars.recv_posted; ++i) {
            rpc_recv_slot_t *slot = &ctx->slots[i];
            slot->ctx = ctx;
            slot->buf = opal_na_msg_buf_alloc(e->na, e->eager_size, &slot->plugin_data);
            slot->op = opal_na_op_create(e->na);
            ctx->slot_count = i + 1;
            if (NULL == slot->buf || NULL == slot->op) {
                rc = OPAL_ERR_OUT_OF_RESOURCE;
                goto fail_table;
            }
            recv_post(slot);
            if (!slot->posted) {
                rc = OPAL_ERR_FATAL;
                goto fail_table;
            }
        }
    }
    *ctxp = ctx;
    return OPAL_SUCCESS;
fail_table:
    (void) opal_rpc_context_destroy(ctx);
    return rc;
fail:
    if (NULL != ctx->sched) {
        (void) opal_sched_destroy(&ctx->sched);
    }
    opal_rpc_timer_heap_fini(&ctx->timers);
    free(ctx->inflight_slots);
    OBJ_DESTRUCT(&ctx->inflight);
    OBJ_DESTRUCT(&ctx->cond);
    OBJ_DESTRUCT(&ctx->lock);
    free(ctx);
    return rc;
}

/* Withdraws ctx's receives and waits for its sends (bounded). */
static void na_drain(opal_rpc_context_t *ctx)
{
    opal_rpc_engine_t *e = &opal_rpc_engine;
    ctx->closing = true;
    for (int i = 0; i < ctx->slot_count; ++i) {
        if (ctx->slots[i].posted) {
            (void) opal_na_cancel(e->na, ctx->na_ctx, ctx->slots[i].op);
        }
    }
    uint64_t deadline = opal_timer_ns() + 10ull * 1000000000ull;
    for (;;) {
        bool busy = atomic_load_explicit(&ctx->sends_pending, memory_order_relaxed) > 0 ||
                    atomic_load_explicit(&ctx->bulk_pending, memory_order_relaxed) > 0;
        for (int i = 0; i < ctx->slot_count; ++i) {
            busy = busy || ctx->slots[i].posted;
        }
        if (!busy || opal_timer_ns() > deadline) {
            break;
        }
        (void) opal_na_poll_wait(e->na, ctx->na_ctx, 10, NULL);
        (void) opal_na_trigger(ctx->na_ctx, 0, NULL);
    }
    for (int i = 0; i < ctx->slot_count; ++i) {
        if (NULL != ctx->slots[i].buf) {
            opal_na_msg_buf_free(e->na, ctx->slots[i].buf, ctx->slots[i].plugin_data);
        }
        if (NULL != ctx->slots[i].op) {
            (void) opal_na_op_destroy(e->na, ctx->slots[i].op);
        }
    }
    free(ctx->slots);
    ctx->slots = NULL;
    ctx->repost = NULL;
}

/* Lets the handlers ctx's scheduler accepted run before ctx goes (with
 * pool they may still be queued on a worker after their client was
 * answered or gave up); bounded, as a handler may block. A handler that
 * keeps its request still makes the destroy refuse. */
static void handlers_drain(opal_rpc_context_t *ctx)
{
    if (NULL == ctx->sched) {
        return;
    }
    uint64_t deadline = opal_timer_ns() + 10ull * 1000000000ull;
    while (!opal_sched_check_complete(ctx->sched) && opal_timer_ns() < deadline) {
        if (0 == opal_sched_progress(ctx->sched)) {
            const struct timespec pause = {0, 100000};
            (void) nanosleep(&pause, NULL);
        }
    }
}

int opal_rpc_context_destroy(opal_rpc_context_t *ctx)
{
    opal_rpc_engine_t *e = &opal_rpc_engine;
    if (NULL == ctx) {
        return OPAL_ERR_BAD_PARAM;
    }
    handlers_drain(ctx);
    RPC_CTX_LOCK(ctx);
    bool busy = ctx->live_requests > 0 || NULL != ctx->done_head ||
                atomic_load_explicit(&ctx->server_requests, memory_order_acquire) > 0;
    RPC_CTX_UNLOCK(ctx);
    if (busy) {
        opal_output(0,
                    "rpc: context %u still has requests (%zu not completed, %d held by "
                    "handlers)",
                    ctx->idx, ctx->live_requests,
                    atomic_load_explicit(&ctx->server_requests, memory_order_relaxed));
        return OPAL_ERR_RESOURCE_BUSY;
    }
    opal_rpc_base_bulk_held_drop(ctx, NULL, true);
    /* Replies still held by the rpc_reply_delay site leave now. */
    (void) opal_rpc_base_delayed_flush(ctx, true);
    if (NULL != ctx->na_ctx) {
        na_drain(ctx);
        (void) opal_na_context_destroy(e->na, ctx->na_ctx);
    } else if (NULL != ctx->slots) {
        free(ctx->slots);
    }
    opal_mutex_lock(&e->lock);
    if (e->contexts[ctx->idx] == ctx) {
        e->contexts[ctx->idx] = NULL;
    }
    opal_mutex_unlock(&e->lock);
    while (NULL != ctx->in_head) {
        rpc_msg_t *m = ctx->in_head;
        ctx->in_head = m->next;
        opal_rpc_base_block_free(m->data);
        free(m);
    }
    while (NULL != ctx->targets) {
        rpc_target_t *t = ctx->targets;
        ctx->targets = t->next;
        opal_rpc_addr_free(t->addr);
        free(t);
    }
    if (NULL != ctx->sched) {
        /* Nothing is queued (no request is held); a worker may still be
         * returning from a handler: destroy waits for it. */
        (void) opal_sched_destroy(&ctx->sched);
    }
    /* Notices of peers gone that came while it closed (out of the
     * engine's table now: no more come). */
    opal_rpc_base_gone_clear(ctx);
    opal_rpc_timer_heap_fini(&ctx->timers);
    free(ctx->inflight_slots);
    OBJ_DESTRUCT(&ctx->inflight);
    OBJ_DESTRUCT(&ctx->cond);
    OBJ_DESTRUCT(&ctx->lock);
    free(ctx);
    return OPAL_SUCCESS;
}

uint8_t opal_rpc_context_idx(const opal_rpc_context_t *ctx)
{
    return ctx->idx;
}

void opal_rpc_context_stats(opal_rpc_context_t *ctx, opal_rpc_stats_t *stats)
{
    RPC_CTX_LOCK(ctx);
    *stats = ctx->stats;
    RPC_CTX_UNLOCK(ctx);
    stats->handled = atomic_load_explicit(&ctx->handled, memory_order_relaxed);
}

/* Completes ctx's requests to addr (NULL: this process) with
 * OPAL_ERR_PEER_FAILED and reason, and lets go of what ctx holds for it. */
static void fail_requests_to(opal_rpc_context_t *ctx, opal_na_addr_t *addr, const char *reason)
{
    opal_na_class_t *na = opal_rpc_engine.na;
    size_t n = 0, cap = 0;
    opal_rpc_request_t **victims = NULL;
    if (NULL != addr && NULL != na && opal_na_addr_is_self(na, addr)) {
        addr = NULL;
    }
    RPC_CTX_LOCK(ctx);
    for (opal_rpc_request_t *r = ctx->live; NULL != r; r = r->live_next) {
        bool match = r->addr == addr ||
                     (NULL != r->addr && NULL != addr && opal_na_addr_cmp(na, r->addr, addr));
        if (!match) {
            continue;
        }
        if (n == cap) {
            cap = 0 == cap ? 16 : 2 * cap;
            opal_rpc_request_t **grown = realloc(victims, cap * sizeof(*grown));
            if (NULL == grown) {
                break;
            }
            victims = grown;
        }
        opal_rpc_req_addref(r);
        victims[n++] = r;
    }
    RPC_CTX_UNLOCK(ctx);
    if (NULL != addr) {
        opal_rpc_base_bulk_held_drop(ctx, addr, false);
    }
    for (size_t i = 0; i < n; ++i) {
        (void) opal_rpc_base_complete(victims[i], OPAL_ERR_PEER_FAILED, strdup(reason));
        opal_rpc_req_decref(victims[i]);
    }
    free(victims);
}

int opal_rpc_peer_failed(opal_rpc_context_t *ctx, opal_na_addr_t *addr)
{
    if (NULL == ctx) {
        return OPAL_ERR_BAD_PARAM;
    }
    fail_requests_to(ctx, addr, "the peer failed");
    return OPAL_SUCCESS;
}

/* A peer na said is gone, waiting for a context's progress. */
typedef struct rpc_gone_t {
    struct rpc_gone_t *next;
    opal_na_addr_t *addr; /* a reference */
    char *reason;
} rpc_gone_t;

void opal_rpc_base_peer_gone(opal_na_class_t *cls, opal_na_addr_t *addr, bool finalized,
                             const char *why, void *arg)
{
    (void) arg;
    opal_rpc_engine_t *e = &opal_rpc_engine;
    char reason[320];
    snprintf(reason, sizeof(reason), "the peer %s (%s)", finalized ? "finalized" : "failed",
             NULL != why ? why : "said by the network");
    opal_output_verbose(10, opal_rpc_base_output, "rpc: %s: failing the requests to it", reason);
    /* Queued for each context's own progress: its requests complete in
     * the thread that progresses it, and the caller (a transport's
     * progress) may hold its own locks. */
    opal_mutex_lock(&e->lock);
    for (int i = 0; i < 256; ++i) {
        opal_rpc_context_t *ctx = e->contexts[i];
        if (NULL == ctx) {
            continue;
        }
        rpc_gone_t *g = malloc(sizeof(*g));
        char *copy = strdup(reason);
        if (NULL == g || NULL == copy || OPAL_SUCCESS != opal_na_addr_dup(cls, addr, &g->addr)) {
            /* Out of memory: its requests time out as before. */
            free(g);
            free(copy);
            continue;
        }
        g->reason = copy;
        RPC_CTX_LOCK(ctx);
        g->next = ctx->gone;
        ctx->gone = g;
        atomic_store_explicit(&ctx->gone_ready, true, memory_order_relaxed);
        RPC_CTX_UNLOCK(ctx);
    }
    opal_mutex_unlock(&e->lock);
}

/* Takes ctx's gone notices; returns the list (newest first). */
static rpc_gone_t *gone_take(opal_rpc_context_t *ctx)
{
    RPC_CTX_LOCK(ctx);
    rpc_gone_t *g = ctx->gone;
    ctx->gone = NULL;
    atomic_store_explicit(&ctx->gone_ready, false, memory_order_relaxed);
    RPC_CTX_UNLOCK(ctx);
    return g;
}

static void gone_free(rpc_gone_t *g)
{
    opal_rpc_addr_free(g->addr);
    free(g->reason);
    free(g);
}

/* Fails the requests to the peers na said are gone. */
static unsigned int gone_progress(opal_rpc_context_t *ctx)
{
    unsigned int events = 0;
    for (rpc_gone_t *g = gone_take(ctx), *next; NULL != g; g = next) {
        next = g->next;
        fail_requests_to(ctx, g->addr, g->reason);
        gone_free(g);
        ++events;
    }
    return events;
}

void opal_rpc_base_gone_clear(opal_rpc_context_t *ctx)
{
    for (rpc_gone_t *g = gone_take(ctx), *next; NULL != g; g = next) {
        next = g->next;
        gone_free(g);
    }
}
