/*
 * Outputs larger than one message, and the bulk calls of rpc.h.
 *
 * The server encodes such an output aside, exposes it with a read-only
 * bulk handle and replies with OPAL_RPC_HDR_F_BULK and the payload u64
 * size, u64 seal, u32 handle length, the serialized handle (as inputs go,
 * see rpc_base_bulk.c). It holds the bytes until the client says it is
 * done with them: the client pulls them on the request's context, then
 * the seal after them (rpc_base_internal.h: a server whose hold ran out
 * first broke it, and the pull fails rather than hand over freed
 * memory), decodes them, completes the request, and sends the engine's
 * one-way release
 * (OPAL_RPC_RELEASE_OPCODE, the request's id) whatever the pull's outcome
 * (Mercury's ack of extra output data). A client that never releases (it
 * died, or the release was lost) costs the server the bytes until the
 * failure detector says so (opal_rpc_peer_failed), rpc_base_timeout
 * seconds pass, or the context goes.
 *
 * Exactly once: while its output is pulled a request stays in flight, so
 * a timeout, an abort or the peer's failure may complete it first; the
 * pull is then canceled from the progress thread (before the request's
 * callback runs), and its own completion finds the request completed and
 * only releases. The pull holds a reference on the request, and the
 * context's na context outlives it (bulk_pending).
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/na/base/base.h"
#include "opal/mca/rpc/base/rpc_base_internal.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_fault.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_timer.h"

/* Outputs larger than this are refused (by the server and the client). */
#define RPC_BULK_OUT_MAX ((uint64_t) 1 << 30)

typedef struct rpc_held_t {
    struct rpc_held_t *next;
    opal_na_addr_t *addr; /* the client (a reference) */
    uint8_t peer_ctx;
    uint64_t id;
    uint64_t deadline_ns; /* 0: none */
    opal_bulk_t *bulk;
    uint8_t *buf; /* size bytes, then the seal */
    size_t size;
} rpc_held_t;

typedef struct rpc_out_pull_t {
    opal_rpc_request_t *req; /* a reference */
    opal_bulk_t *remote;
    opal_bulk_t *local;
    opal_bulk_op_t *op;
    uint8_t *buf; /* size bytes, then the seal's */
    size_t size;
    uint64_t seal;
    bool seal_read;   /* the bytes came, and the seal's transfer started */
    bool seal_broken; /* the seal came, and it was not the announced one */
    uint8_t server_ctx;
    /* The rpc_bulk_pull_hold fault site kept the finished pull (its
     * outcome in held_ret) until the request completes otherwise. */
    bool held;
    int held_ret;
} rpc_out_pull_t;

/* ------------------------------------------------------ rpc.h's calls */

opal_bulk_class_t *opal_rpc_bulk_class(void)
{
    return opal_rpc_engine.bulk;
}

uint8_t opal_rpc_req_source_ctx(const opal_rpc_request_t *req)
{
    return req->peer_ctx;
}

int opal_rpc_bulk_transfer(opal_rpc_request_t *req, opal_bulk_op_type_t op, opal_bulk_t *remote,
                           size_t remote_offset, opal_bulk_t *local, size_t local_offset,
                           size_t size, opal_bulk_cb_t cb, void *arg, opal_bulk_op_t **op_out)
{
    opal_rpc_engine_t *e = &opal_rpc_engine;
    if (NULL == req || NULL == remote || NULL == local) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (NULL == e->bulk || NULL == req->ctx->na_ctx) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    /* A bound handle names its owner (it may have come through others:
     * a corpc's parent, a server that forwarded it); otherwise req->addr
     * is the peer (NULL: this process, whose handles bulk copies between
     * without the network). */
    opal_na_addr_t *owner = opal_bulk_get_addr(remote);
    if (NULL != owner) {
        return opal_bulk_transfer(e->bulk, req->ctx->na_ctx, cb, arg, op, owner,
                                  opal_bulk_get_context_id(remote), remote, remote_offset, local,
                                  local_offset, size, op_out);
    }
    return opal_bulk_transfer(e->bulk, req->ctx->na_ctx, cb, arg, op, req->addr, req->peer_ctx,
                              remote, remote_offset, local, local_offset, size, op_out);
}

int opal_rpc_bulk_bind(opal_rpc_context_t *ctx, opal_bulk_t *handle)
{
    if (NULL == ctx || NULL == handle) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (NULL == opal_rpc_engine.bulk || NULL == ctx->na_ctx) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    return opal_bulk_bind(handle, ctx->na_ctx);
}

/* ------------------------------------------------------------- server */

static void held_free(rpc_held_t *h)
{
    if (NULL != h->buf) {
        opal_rpc_base_seal_break(h->buf, h->size);
    }
    (void) opal_bulk_free(h->bulk);
    free(h->buf);
    opal_rpc_addr_free(h->addr);
    free(h);
}

int opal_rpc_base_bulk_reply(opal_rpc_request_t *req, opal_rpc_hdr_t *hdr, uint8_t **buf,
                             size_t *len)
{
    opal_rpc_engine_t *e = &opal_rpc_engine;
    opal_rpc_context_t *ctx = req->ctx;
    size_t size = req->op->out->size(req->output);
    uint8_t *b = NULL;
    int rc;
    if (size > RPC_BULK_OUT_MAX) {
        return OPAL_ERR_VALUE_OUT_OF_BOUNDS;
    }
    rpc_held_t *h = calloc(1, sizeof(*h));
    if (NULL == h || NULL == (h->buf = malloc(size + OPAL_RPC_SEAL_SIZE))) {
        free(h);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    h->size = size;
    opal_cursor_t c;
    opal_cursor_init_write(&c, h->buf, size);
    req->op->out->encode(&c, req->output);
    uint64_t seal = opal_rpc_base_seal_make(h->buf, size);
    void *bufs[1] = {h->buf};
    size_t exposed = size + OPAL_RPC_SEAL_SIZE;
    rc = opal_cursor_done(&c) ? OPAL_SUCCESS : OPAL_ERR_FATAL;
    if (OPAL_SUCCESS == rc) {
        rc = opal_bulk_create(e->bulk, 1, bufs, &exposed, OPAL_BULK_READ_ONLY, &h->bulk);
    }
    if (OPAL_SUCCESS == rc) {
        rc = opal_na_addr_dup(e->na, req->addr, &h->addr);
    }
    size_t hsize = 0, payload = 0, total = 0;
    if (OPAL_SUCCESS == rc) {
        /* Not eager: the bytes are larger than a message by definition. */
        hsize = opal_bulk_get_serialize_size(h->bulk, 0);
        payload = OPAL_RPC_BULK_DESC_SIZE(hsize);
        total = OPAL_RPC_HDR_SIZE + payload;
        rc = total > e->eager_size ? OPAL_ERR_VALUE_OUT_OF_BOUNDS : OPAL_SUCCESS;
    }
    if (OPAL_SUCCESS == rc && NULL == (b = opal_rpc_base_block_alloc(total, false))) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (OPAL_SUCCESS == rc) {
        hdr->flags |= OPAL_RPC_HDR_F_BULK;
        hdr->payload_len = (uint32_t) payload;
        opal_rpc_base_hdr_write(hdr, b);
        opal_cursor_init_write(&c, b + OPAL_RPC_HDR_SIZE, payload);
        opal_cursor_put_u64(&c, size);
        opal_cursor_put_u64(&c, seal);
        opal_cursor_put_u32(&c, (uint32_t) hsize);
        uint8_t *at = opal_cursor_take(&c, hsize);
        rc = NULL == at ? OPAL_ERR_FATAL : opal_bulk_serialize(at, hsize, 0, h->bulk);
        if (OPAL_SUCCESS == rc && !opal_cursor_done(&c)) {
            rc = OPAL_ERR_FATAL;
        }
    }
    if (OPAL_SUCCESS != rc) {
        opal_rpc_base_block_free(b);
        held_free(h);
        return rc;
    }
    h->peer_ctx = req->peer_ctx;
    h->id = req->id;
    if (opal_rpc_base_vars.timeout > 0) {
        h->deadline_ns = opal_timer_ns() + (uint64_t) (opal_rpc_base_vars.timeout * 1e9);
    }
    RPC_CTX_LOCK(ctx);
    h->next = ctx->held;
    ctx->held = h;
    ++ctx->stats.bulk_outputs;
    ++ctx->stats.bulk_outputs_held;
    RPC_CTX_UNLOCK(ctx);
    *buf = b;
    *len = total;
    return OPAL_SUCCESS;
}

/* Unlinks the entries match() selects onto a list, under ctx->lock, and
 * frees them after. */
static void held_remove(opal_rpc_context_t *ctx, bool (*match)(const rpc_held_t *, const void *),
                        const void *key)
{
    rpc_held_t *gone = NULL;
    RPC_CTX_LOCK(ctx);
    rpc_held_t **pp = &ctx->held;
    while (NULL != *pp) {
        rpc_held_t *h = *pp;
        if (match(h, key)) {
            *pp = h->next;
            h->next = gone;
            gone = h;
            --ctx->stats.bulk_outputs_held;
        } else {
            pp = &h->next;
        }
    }
    RPC_CTX_UNLOCK(ctx);
    while (NULL != gone) {
        rpc_held_t *next = gone->next;
        held_free(gone);
        gone = next;
    }
}

typedef struct {
    opal_na_addr_t *addr;
    uint8_t peer_ctx;
    uint64_t id;
    bool all;
    uint64_t now;
} held_key_t;

static bool same_addr(const rpc_held_t *h, const held_key_t *k)
{
    return NULL != k->addr && opal_na_addr_cmp(opal_rpc_engine.na, h->addr, k->addr);
}

static bool match_one(const rpc_held_t *h, const void *key)
{
    const held_key_t *k = key;
    return h->id == k->id && h->peer_ctx == k->peer_ctx && same_addr(h, k);
}

static bool match_peer(const rpc_held_t *h, const void *key)
{
    const held_key_t *k = key;
    return k->all || same_addr(h, k);
}

static bool match_expired(const rpc_held_t *h, const void *key)
{
    const held_key_t *k = key;
    return 0 != h->deadline_ns && h->deadline_ns <= k->now;
}

void opal_rpc_base_bulk_held_release(opal_rpc_context_t *ctx, opal_na_addr_t *addr,
                                     uint8_t peer_ctx, uint64_t id)
{
    held_key_t k = {.addr = addr, .peer_ctx = peer_ctx, .id = id};
    held_remove(ctx, match_one, &k);
}

void opal_rpc_base_bulk_held_drop(opal_rpc_context_t *ctx, opal_na_addr_t *addr, bool all)
{
    held_key_t k = {.addr = addr, .all = all};
    held_remove(ctx, match_peer, &k);
}

void opal_rpc_base_bulk_held_expire(opal_rpc_context_t *ctx)
{
    RPC_CTX_LOCK(ctx);
    bool any = NULL != ctx->held;
    RPC_CTX_UNLOCK(ctx);
    if (any) {
        held_key_t k = {.now = opal_timer_ns()};
        held_remove(ctx, match_expired, &k);
    }
}

void opal_rpc_base_bulk_release_handler(opal_rpc_request_t *req)
{
    const rpc_release_in_t *in = opal_rpc_req_input(req);
    if (NULL != req->addr) {
        opal_rpc_base_bulk_held_release(req->ctx, req->addr, req->peer_ctx, in->id);
    }
}

/* ------------------------------------------------------------- client */

/* Tells the server that the output of request id is no longer needed. */
static void release_send(opal_rpc_context_t *ctx, opal_na_addr_t *server, uint8_t server_ctx,
                         uint64_t id)
{
    opal_rpc_hdr_t hdr = {.type = OPAL_RPC_HDR_REQUEST,
                          .flags = OPAL_RPC_HDR_F_ONEWAY,
                          .opcode = OPAL_RPC_RELEASE_OPCODE,
                          .src_ctx = ctx->idx,
                          .dst_ctx = server_ctx};
    rpc_release_in_t in = {.id = id};
    uint8_t *buf = NULL;
    size_t len = 0;
    if (NULL == server ||
        OPAL_SUCCESS != opal_rpc_base_build(&hdr, &rpc_release_in_codec, &in, NULL,
                                            opal_rpc_base_limit(server), &buf, &len)) {
        return;
    }
    (void) opal_rpc_base_transmit(ctx, server, server_ctx, buf, len, NULL);
}

static void out_pull_free(rpc_out_pull_t *p)
{
    if (NULL != p->remote) {
        (void) opal_bulk_free(p->remote);
    }
    if (NULL != p->local) {
        (void) opal_bulk_free(p->local);
    }
    free(p->buf);
    free(p);
}

/* The pull of p ended with ret: completes its request unless something
 * else did (then the data is dropped and counted), and releases. */
static void out_pull_finish(rpc_out_pull_t *p, int ret)
{
    opal_rpc_request_t *req = p->req;
    opal_rpc_context_t *ctx = req->ctx;
    int status = ret;
    char *reason = NULL;
    req->out_pull = NULL;
    RPC_CTX_LOCK(ctx);
    bool live = RPC_REQ_INFLIGHT == req->state;
    RPC_CTX_UNLOCK(ctx);
    if (live && OPAL_SUCCESS == status && NULL != req->op->out && !req->output_decoded) {
        /* Only this thread completes it with its output: the callback
         * runs from this context's progress, after this returns. */
        status = opal_rpc_codec_decode_with(req->op->out, opal_rpc_engine.bulk, p->buf, p->size,
                                            req->output);
        req->output_decoded = OPAL_SUCCESS == status;
    }
    if (live && OPAL_SUCCESS != status) {
        char why[192];
        if (p->seal_broken) {
            snprintf(why, sizeof(why),
                     "the %zu-byte output of opcode 0x%08x was let go by the server before it was "
                     "pulled (its seal is broken: its hold ran out)",
                     p->size, req->opcode);
        } else if (OPAL_SUCCESS != ret) {
            snprintf(why, sizeof(why), "pulling the %zu-byte output of opcode 0x%08x failed: %s",
                     p->size, req->opcode, opal_strerror(ret));
        } else {
            snprintf(why, sizeof(why),
                     "output of opcode 0x%08x (%zu bytes, by bulk) does not decode as %s",
                     req->opcode, p->size, req->op->out->name);
        }
        reason = strdup(why);
    }
    if (!opal_rpc_base_complete(req, status, reason) && OPAL_ERR_CANCELED != ret) {
        RPC_CTX_LOCK(ctx);
        ++ctx->stats.late_replies;
        RPC_CTX_UNLOCK(ctx);
    }
    release_send(ctx, req->addr, p->server_ctx, req->id);
    atomic_fetch_sub_explicit(&ctx->bulk_pending, 1, memory_order_relaxed);
    out_pull_free(p);
    opal_rpc_req_decref(req);
}

static void out_pull_done(const opal_bulk_cb_info_t *info)
{
    rpc_out_pull_t *p = info->arg;
    int ret = info->ret;
    if (OPAL_SUCCESS == ret && !p->seal_read) {
        /* The bytes are here: now the seal, read after all of them. */
        p->seal_read = true;
        opal_rpc_request_t *req = p->req;
        ret = opal_bulk_transfer(opal_rpc_engine.bulk, req->ctx->na_ctx, out_pull_done, p,
                                 OPAL_BULK_PULL, req->addr, p->server_ctx, p->remote, p->size,
                                 p->local, p->size, OPAL_RPC_SEAL_SIZE, &p->op);
        if (OPAL_SUCCESS == ret) {
            return;
        }
        p->op = NULL;
    } else if (OPAL_SUCCESS == ret && !opal_rpc_base_seal_intact(p->buf, p->size, p->seal)) {
        p->seal_broken = true;
        ret = OPAL_ERR_COMM_FAILURE;
        opal_rpc_context_t *ctx = p->req->ctx;
        RPC_CTX_LOCK(ctx);
        ++ctx->stats.bulk_seals_broken;
        RPC_CTX_UNLOCK(ctx);
    }
    if (OPAL_SUCCESS == ret && OPAL_FAULT(rpc_bulk_pull_hold)) {
        /* As if the bytes were still coming: the timeout, an abort or the
         * peer's failure ends it (opal_rpc_base_bulk_output_cancel). The
         * transfer is over: its op is not to be canceled any more. */
        p->held = true;
        p->held_ret = ret;
        p->op = NULL;
        return;
    }
    out_pull_finish(p, ret);
}

int opal_rpc_base_bulk_output_pull(opal_rpc_context_t *ctx, opal_rpc_request_t *req,
                                   const opal_rpc_hdr_t *hdr, const uint8_t *payload, char **reason)
{
    opal_rpc_engine_t *e = &opal_rpc_engine;
    char why[192];
    int rc = OPAL_ERR_PROTOCOL;
    opal_rpc_bulk_desc_t desc;
    bool parsed = OPAL_SUCCESS == opal_rpc_bulk_desc_decode(&desc, payload, hdr->payload_len);
    rpc_out_pull_t *p = NULL;
    if (!parsed || NULL == e->bulk || NULL == req->addr || NULL == req->op->out ||
        desc.size > RPC_BULK_OUT_MAX) {
        snprintf(why, sizeof(why), "a reply to opcode 0x%08x with its output by bulk: %s",
                 hdr->opcode,
                 !parsed                        ? "malformed bulk descriptor"
                 : desc.size > RPC_BULK_OUT_MAX ? "output above 1 GiB"
                 : NULL == req->op->out         ? "but the operation has no output"
                                                : "but no bulk here");
        goto fail;
    }
    p = calloc(1, sizeof(*p));
    if (NULL == p) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        snprintf(why, sizeof(why), "no memory to pull the output of opcode 0x%08x", hdr->opcode);
        goto fail;
    }
    p->size = (size_t) desc.size;
    p->seal = desc.seal;
    p->server_ctx = hdr->src_ctx;
    rc = opal_bulk_deserialize(e->bulk, &p->remote, desc.handle, desc.handle_len);
    if (OPAL_SUCCESS != rc) {
        snprintf(why, sizeof(why), "the bulk handle of opcode 0x%08x's output does not deserialize",
                 hdr->opcode);
        goto fail;
    }
    if (opal_bulk_get_size(p->remote) < p->size + OPAL_RPC_SEAL_SIZE) {
        rc = OPAL_ERR_PROTOCOL;
        snprintf(why, sizeof(why),
                 "the bulk handle of opcode 0x%08x's output covers %zu bytes, not its %zu and a "
                 "seal",
                 hdr->opcode, opal_bulk_get_size(p->remote), p->size);
        goto fail;
    }
    size_t local_size = p->size + OPAL_RPC_SEAL_SIZE;
    p->buf = malloc(local_size);
    void *bufs[1] = {p->buf};
    rc = NULL == p->buf
             ? OPAL_ERR_OUT_OF_RESOURCE
             : opal_bulk_create(e->bulk, 1, bufs, &local_size, OPAL_BULK_WRITE_ONLY, &p->local);
    if (OPAL_SUCCESS == rc && OPAL_FAULT(rpc_bulk_pull_delay)) {
        /* A client stalled between the reply and its pull. */
        usleep((useconds_t) opal_fault_arg(OPAL_FAULT_SITE_rpc_bulk_pull_delay) * 1000u);
    }
    if (OPAL_SUCCESS == rc) {
        opal_rpc_req_addref(req);
        p->req = req;
        req->out_pull = p;
        atomic_fetch_add_explicit(&ctx->bulk_pending, 1, memory_order_relaxed);
        rc = opal_bulk_transfer(e->bulk, ctx->na_ctx, out_pull_done, p, OPAL_BULK_PULL, req->addr,
                                hdr->src_ctx, p->remote, 0, p->local, 0, p->size, &p->op);
        if (OPAL_SUCCESS == rc) {
            RPC_CTX_LOCK(ctx);
            ++ctx->stats.bulk_outputs;
            RPC_CTX_UNLOCK(ctx);
            return OPAL_SUCCESS;
        }
        atomic_fetch_sub_explicit(&ctx->bulk_pending, 1, memory_order_relaxed);
        req->out_pull = NULL;
        p->req = NULL;
        opal_rpc_req_decref(req);
    }
    snprintf(why, sizeof(why), "cannot pull the %zu-byte output of opcode 0x%08x: %s", p->size,
             hdr->opcode, opal_strerror(rc));
fail:
    opal_output_verbose(1, opal_rpc_base_output, "rpc: %s", why);
    if (NULL != p) {
        out_pull_free(p);
    }
    /* The server holds the bytes until told. */
    release_send(ctx, req->addr, hdr->src_ctx, req->id);
    *reason = strdup(why);
    return OPAL_SUCCESS == rc ? OPAL_ERR_PROTOCOL : rc;
}

void opal_rpc_base_bulk_output_cancel(opal_rpc_request_t *req)
{
    rpc_out_pull_t *p = req->out_pull;
    if (NULL != p && p->held) {
        /* The data that came meanwhile is late now. */
        out_pull_finish(p, p->held_ret);
    } else if (NULL != p && NULL != p->op) {
        (void) opal_bulk_cancel(p->op);
    }
}
