/*
 * Inputs larger than one message: the client encodes them aside and sends
 * a read-only bulk handle over the bytes instead (the message's payload is
 * u64 size, u64 seal, u32 handle length, the serialized handle; the
 * header carries OPAL_RPC_HDR_F_BULK); the server pulls them into its own
 * buffer, then the seal after them (rpc_base_internal.h), and dispatches
 * as if they had come in the message. The user-visible API does not
 * change. The client's bytes live until the request completes.
 *
 * A one-way request has no reply to say the pull is over, so the server
 * acknowledges such an input once it pulled it: an empty reply (status
 * OPAL_SUCCESS) naming the request's id, or the error reply of a failed
 * pull. The client keeps the request in flight (its id table, its
 * deadline, its credit) until then; the ack completes it and lets the
 * exposure go. The ack says the bytes arrived, not that the handler ran.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/rpc/base/rpc_base_internal.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_fault.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_timer.h"

/* Inputs larger than this are refused (by the client and the server). */
#define RPC_BULK_MAX ((uint64_t) 1 << 30)

/* ------------------------------------------------------------- seals */

static _Atomic uint64_t seal_count;

uint64_t opal_rpc_base_seal_make(uint8_t *buf, size_t size)
{
    /* Unlike this process's other seals (the count) and, but for a
     * chance of 2^-64, anything else (the pid and the clock), mixed
     * (splitmix64's finalizer) so that it looks like none of the zeros
     * and small numbers freed memory holds. */
    uint64_t z = atomic_fetch_add_explicit(&seal_count, 1, memory_order_relaxed) +
                 ((uint64_t) getpid() << 40) + opal_timer_ns();
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    z ^= z >> 31;
    z = 0 == z ? 1 : z;
    for (int i = 0; i < OPAL_RPC_SEAL_SIZE; ++i) {
        buf[size + (size_t) i] = (uint8_t) (z >> (8 * i));
    }
    return z;
}

void opal_rpc_base_seal_break(uint8_t *buf, size_t size)
{
    /* volatile: stores to memory about to be freed are otherwise dead
     * to the compiler, and the peer's read of them is the point. */
    volatile uint8_t *seal = buf + size;
    for (int i = 0; i < OPAL_RPC_SEAL_SIZE; ++i) {
        seal[i] = 0;
    }
}

bool opal_rpc_base_seal_intact(const uint8_t *buf, size_t size, uint64_t seal)
{
    uint64_t v = 0;
    for (int i = OPAL_RPC_SEAL_SIZE - 1; i >= 0; --i) {
        v = (v << 8) | buf[size + (size_t) i];
    }
    return v == seal;
}

/* ------------------------------------------------------------ client */

int opal_rpc_base_bulk_request(opal_rpc_request_t *req, opal_rpc_hdr_t *hdr, uint8_t **buf,
                               size_t *len)
{
    opal_rpc_engine_t *e = &opal_rpc_engine;
    size_t size = req->op->in->size(req->input);
    if (size > RPC_BULK_MAX) {
        return OPAL_ERR_VALUE_OUT_OF_BOUNDS;
    }
    req->in_bulk_buf = malloc(size + OPAL_RPC_SEAL_SIZE);
    if (NULL == req->in_bulk_buf) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    req->in_bulk_size = size;
    opal_cursor_t c;
    opal_cursor_init_write(&c, req->in_bulk_buf, size);
    req->op->in->encode(&c, req->input);
    if (!opal_cursor_done(&c)) {
        return OPAL_ERR_FATAL;
    }
    uint64_t seal = opal_rpc_base_seal_make(req->in_bulk_buf, size);
    void *bufs[1] = {req->in_bulk_buf};
    size_t exposed = size + OPAL_RPC_SEAL_SIZE;
    int rc = opal_bulk_create(e->bulk, 1, bufs, &exposed, OPAL_BULK_READ_ONLY, &req->in_bulk);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    size_t hsize = opal_bulk_get_serialize_size(req->in_bulk, 0);
    size_t payload = OPAL_RPC_BULK_DESC_SIZE(hsize);
    size_t total = OPAL_RPC_HDR_SIZE + payload;
    if (total > e->eager_size) {
        return OPAL_ERR_VALUE_OUT_OF_BOUNDS;
    }
    uint8_t *b = opal_rpc_base_block_alloc(total, false);
    if (NULL == b) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    hdr->flags |= OPAL_RPC_HDR_F_BULK;
    hdr->payload_len = (uint32_t) payload;
    opal_rpc_base_hdr_write(hdr, b);
    opal_cursor_init_write(&c, b + OPAL_RPC_HDR_SIZE, payload);
    opal_cursor_put_u64(&c, size);
    opal_cursor_put_u64(&c, seal);
    opal_cursor_put_u32(&c, (uint32_t) hsize);
    uint8_t *h = opal_cursor_take(&c, hsize);
    rc = NULL == h && hsize > 0 ? OPAL_ERR_FATAL : opal_bulk_serialize(h, hsize, 0, req->in_bulk);
    if (OPAL_SUCCESS != rc || !opal_cursor_done(&c)) {
        opal_rpc_base_block_free(b);
        return OPAL_SUCCESS != rc ? rc : OPAL_ERR_FATAL;
    }
    *buf = b;
    *len = total;
    return OPAL_SUCCESS;
}

typedef struct rpc_pull_t {
    opal_rpc_context_t *ctx;
    opal_rpc_hdr_t hdr;
    const opal_rpc_op_t *op;
    opal_na_addr_t *source;
    opal_bulk_t *remote;
    opal_bulk_t *local;
    uint8_t *buf; /* size bytes, then the seal's */
    size_t size;
    uint64_t seal;
    bool seal_read; /* the bytes came, and the seal's transfer started */
} rpc_pull_t;

static void pull_free(rpc_pull_t *p)
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

/* Server: tells the sender of a one-way input by bulk that it was pulled
 * (an empty reply), so that it may let the exposure go. */
static void input_ack(opal_rpc_context_t *ctx, const opal_rpc_hdr_t *in, opal_na_addr_t *source)
{
    opal_rpc_hdr_t hdr = {.type = OPAL_RPC_HDR_REPLY,
                          .opcode = in->opcode,
                          .id = in->id,
                          .src_ctx = ctx->idx,
                          .dst_ctx = in->src_ctx};
    uint8_t *buf = NULL;
    size_t len = 0;
    if (OPAL_SUCCESS ==
        opal_rpc_base_build(&hdr, NULL, NULL, NULL, opal_rpc_base_limit(source), &buf, &len)) {
        (void) opal_rpc_base_transmit(ctx, source, in->src_ctx, buf, len, NULL);
    }
}

void opal_rpc_base_bulk_input_release(opal_rpc_request_t *req)
{
    opal_rpc_context_t *ctx = req->ctx;
    opal_rpc_base_seal_break(req->in_bulk_buf, req->in_bulk_size);
    (void) opal_bulk_free(req->in_bulk);
    req->in_bulk = NULL;
    free(req->in_bulk_buf);
    req->in_bulk_buf = NULL;
    RPC_CTX_LOCK(ctx);
    --ctx->stats.bulk_inputs_held;
    RPC_CTX_UNLOCK(ctx);
}

static void pull_done(const opal_bulk_cb_info_t *info)
{
    rpc_pull_t *p = info->arg;
    int ret = info->ret;
    if (OPAL_SUCCESS == ret && !p->seal_read) {
        /* The bytes are here: now the seal, read after all of them. */
        p->seal_read = true;
        ret = opal_bulk_transfer(opal_rpc_engine.bulk, p->ctx->na_ctx, pull_done, p, OPAL_BULK_PULL,
                                 p->source, p->hdr.src_ctx, p->remote, p->size, p->local, p->size,
                                 OPAL_RPC_SEAL_SIZE, NULL);
        if (OPAL_SUCCESS == ret) {
            return;
        }
    }
    atomic_fetch_sub_explicit(&p->ctx->bulk_pending, 1, memory_order_relaxed);
    if (OPAL_SUCCESS == ret && !opal_rpc_base_seal_intact(p->buf, p->size, p->seal)) {
        char why[192];
        snprintf(why, sizeof(why),
                 "the %zu-byte input of opcode 0x%08x was let go by its sender before it was "
                 "pulled (its seal is broken): not run",
                 p->size, p->hdr.opcode);
        opal_output_verbose(1, opal_rpc_base_output, "rpc: %s", why);
        opal_mutex_lock(&p->ctx->lock);
        ++p->ctx->stats.bulk_seals_broken;
        opal_mutex_unlock(&p->ctx->lock);
        opal_rpc_base_error_reply(p->ctx, &p->hdr, p->source, OPAL_ERR_COMM_FAILURE, why);
        opal_rpc_addr_free(p->source);
    } else if (OPAL_SUCCESS == ret) {
        if (0 != (p->hdr.flags & OPAL_RPC_HDR_F_ONEWAY)) {
            input_ack(p->ctx, &p->hdr, p->source);
        }
        opal_rpc_base_dispatch(p->ctx, &p->hdr, p->op, p->buf, p->size, p->source);
    } else {
        char why[160];
        snprintf(why, sizeof(why), "pulling the %zu-byte input of opcode 0x%08x failed: %s",
                 p->size, p->hdr.opcode, opal_strerror(ret));
        opal_rpc_base_error_reply(p->ctx, &p->hdr, p->source, ret, why);
        opal_rpc_addr_free(p->source);
    }
    pull_free(p);
}

void opal_rpc_base_bulk_pull(opal_rpc_context_t *ctx, const opal_rpc_hdr_t *hdr,
                             const opal_rpc_op_t *op, const uint8_t *payload,
                             opal_na_addr_t *source)
{
    opal_rpc_engine_t *e = &opal_rpc_engine;
    char why[192];
    int rc = OPAL_ERR_PROTOCOL;
    rpc_pull_t *p = calloc(1, sizeof(*p));
    if (NULL == p) {
        opal_rpc_addr_free(source);
        return;
    }
    p->ctx = ctx;
    p->hdr = *hdr;
    p->op = op;
    p->source = source;
    opal_rpc_bulk_desc_t desc;
    bool parsed = OPAL_SUCCESS == opal_rpc_bulk_desc_decode(&desc, payload, hdr->payload_len);
    if (!parsed || NULL == e->bulk || NULL == source || desc.size > RPC_BULK_MAX) {
        snprintf(why, sizeof(why), "opcode 0x%08x: %s", hdr->opcode,
                 NULL == e->bulk || NULL == source ? "input by bulk but no bulk here"
                 : !parsed                         ? "malformed bulk descriptor"
                                                   : "input by bulk above 1 GiB");
        goto fail;
    }
    p->size = (size_t) desc.size;
    p->seal = desc.seal;
    rc = opal_bulk_deserialize(e->bulk, &p->remote, desc.handle, desc.handle_len);
    if (OPAL_SUCCESS != rc) {
        snprintf(why, sizeof(why), "opcode 0x%08x: the input's bulk handle does not deserialize",
                 hdr->opcode);
        goto fail;
    }
    if (opal_bulk_get_size(p->remote) < p->size + OPAL_RPC_SEAL_SIZE) {
        rc = OPAL_ERR_PROTOCOL;
        snprintf(why, sizeof(why),
                 "opcode 0x%08x: the input's bulk handle covers %zu bytes, not its %zu and a seal",
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
        /* A server stalled between the request and its pull. */
        usleep((useconds_t) opal_fault_arg(OPAL_FAULT_SITE_rpc_bulk_pull_delay) * 1000u);
    }
    if (OPAL_SUCCESS == rc) {
        atomic_fetch_add_explicit(&ctx->bulk_pending, 1, memory_order_relaxed);
        rc = opal_bulk_transfer(e->bulk, ctx->na_ctx, pull_done, p, OPAL_BULK_PULL, source,
                                hdr->src_ctx, p->remote, 0, p->local, 0, p->size, NULL);
    }
    if (OPAL_SUCCESS == rc) {
        return;
    }
    if (NULL != p->local) {
        atomic_fetch_sub_explicit(&ctx->bulk_pending, 1, memory_order_relaxed);
    }
    snprintf(why, sizeof(why), "opcode 0x%08x: cannot pull the %zu-byte input: %s", hdr->opcode,
             p->size, opal_strerror(rc));
fail:
    opal_output_verbose(1, opal_rpc_base_output, "rpc: %s", why);
    opal_rpc_base_error_reply(ctx, hdr, source, rc, why);
    opal_rpc_addr_free(source);
    p->source = NULL;
    pull_free(p);
}
