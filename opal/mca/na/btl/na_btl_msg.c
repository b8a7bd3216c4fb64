/*
 * na/btl's messages: sends as one active message (header + payload, sendi
 * when it fits), receives matched in the tag's callback, messages no
 * receive waits for kept per context, cancel, and a failed peer's
 * receives failed.
 *
 * The send path allocates nothing: the header is on the stack and the
 * multiplexer copies header and payload into the BTL at once. Only a send
 * the BTL has no room for waits (linked through its op) and is retried
 * from poll, in order.
 */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/base/base.h"
#include "opal/mca/na/btl/na_btl.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_timeline.h"

bool na_btl_queue_remove(na_btl_queue_t *q, na_btl_op_t *op)
{
    na_btl_op_t *prev = NULL;
    for (na_btl_op_t *o = q->head; NULL != o; prev = o, o = o->next) {
        if (o == op) {
            na_btl_queue_unlink(q, prev, o);
            return true;
        }
    }
    return false;
}

void na_btl_op_finish(na_btl_class_t *nb, na_btl_op_t *op, int ret)
{
    opal_na_addr_t *addr = op->addr;
    op->addr = NULL;
    if (NULL != addr) {
        na_btl_addr_free(nb->cls, addr);
    }
    na_btl_context_t *nctx = op->super.context->plugin;
    (void) opal_thread_fetch_sub_u32(&nctx->pending, 1, memory_order_relaxed);
    (void) opal_thread_fetch_add_u64(&nb->completions, 1, memory_order_relaxed);
    opal_na_base_op_complete(&op->super, ret);
}

/* Claims op (the exactly-once guard) and finishes it with ret, or as
 * canceled when it was marked; false when someone else had claimed it. */
static bool claim_and_finish(na_btl_class_t *nb, na_btl_op_t *op, int ret)
{
    bool canceled;
    if (!opal_na_base_op_claim(&op->super, &canceled)) {
        return false;
    }
    na_btl_op_finish(nb, op, canceled ? OPAL_ERR_CANCELED : ret);
    return true;
}

/* ------------------------------------------------------------ contexts */

int na_btl_context_create(opal_na_class_t *cls, opal_na_context_t *ctx)
{
    (void) cls;
    na_btl_context_t *nctx = calloc(1, sizeof(*nctx));
    if (NULL == nctx) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    atomic_init(&nctx->pending, 0);
    ctx->plugin = nctx;
    return OPAL_SUCCESS;
}

static void early_drain(na_btl_class_t *nb, na_btl_early_queue_t *q)
{
    na_btl_early_t *e = q->head;
    while (NULL != e) {
        na_btl_early_t *next = e->next;
        na_btl_addr_free(nb->cls, e->source);
        free(e);
        e = next;
    }
    q->head = q->tail = NULL;
}

int na_btl_context_destroy(opal_na_class_t *cls, opal_na_context_t *ctx)
{
    na_btl_class_t *nb = cls->plugin;
    na_btl_context_t *nctx = ctx->plugin;
    uint32_t pending = atomic_load_explicit(&nctx->pending, memory_order_acquire);
    if (0 != pending) {
        opal_output_verbose(1, opal_na_base_output,
                            "na/btl: context %u has %u operation(s) pending: cancel them and "
                            "trigger their callbacks first",
                            ctx->id, pending);
        return OPAL_ERR_RESOURCE_BUSY;
    }
    OPAL_THREAD_LOCK(&nb->lock);
    early_drain(nb, &nctx->early_unexpected);
    early_drain(nb, &nctx->early_expected);
    OPAL_THREAD_UNLOCK(&nb->lock);
    free(nctx);
    ctx->plugin = NULL;
    return OPAL_SUCCESS;
}

/* --------------------------------------------------------------- sends */

/* Sends op's message now; OPAL_ERR_RESOURCE_BUSY when the BTL has no room. */
static int send_now(na_btl_class_t *nb, mca_btl_base_peer_t *peer, mca_btl_base_tag_t btl_tag,
                    uint8_t source_id, const void *buf, size_t size, uint8_t dest_id,
                    opal_na_tag_t tag)
{
    (void) nb;
    uint8_t hdr[NA_BTL_HDR_SIZE];
    const na_btl_hdr_t h = {.dest_id = dest_id, .source_id = source_id, .tag = tag};
    na_btl_hdr_encode(&h, hdr);
    return mca_btl_base_mux_send_hdr(peer, btl_tag, hdr, sizeof(hdr), buf, size);
}

/* Sends the message now: OPAL_SUCCESS, OPAL_ERR_RESOURCE_BUSY when the BTL
 * has no room or sends wait for room before it (messages keep their
 * order), or the error (OPAL_ERR_PEER_FAILED for a peer known dead). */
static int send_direct(na_btl_class_t *nb, opal_na_context_t *ctx, mca_btl_base_tag_t btl_tag,
                       const void *buf, size_t size, opal_na_addr_t *dest, uint8_t dest_id,
                       opal_na_tag_t tag)
{
    mca_btl_base_peer_t *peer;
    int rc = na_btl_addr_peer(nb, dest, &peer);
    if (OPAL_UNLIKELY(OPAL_SUCCESS != rc)) {
        return rc;
    }
    if (OPAL_UNLIKELY(NULL != nb->pending_sends.head)) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    rc = send_now(nb, peer, btl_tag, ctx->id, buf, size, dest_id, tag);
    if (OPAL_UNLIKELY(OPAL_SUCCESS != rc && OPAL_ERR_RESOURCE_BUSY != rc) &&
        atomic_load_explicit(&dest->failed, memory_order_acquire)) {
        rc = OPAL_ERR_PEER_FAILED;
    }
    return rc;
}

static int send_msg(opal_na_class_t *cls, opal_na_context_t *ctx, mca_btl_base_tag_t btl_tag,
                    const void *buf, size_t size, opal_na_addr_t *dest, uint8_t dest_id,
                    opal_na_tag_t tag, opal_na_op_id_t *op)
{
    na_btl_class_t *nb = cls->plugin;
    na_btl_op_t *o = (na_btl_op_t *) op;
    int rc = send_direct(nb, ctx, btl_tag, buf, size, dest, dest_id, tag);
    if (OPAL_LIKELY(OPAL_SUCCESS == rc)) {
        /* Sent and completed here: never counted as pending (two locked
         * instructions saved on every send). */
        bool canceled;
        if (opal_na_base_op_claim(&o->super, &canceled)) {
            (void) opal_thread_fetch_add_u64(&nb->completions, 1, memory_order_relaxed);
            opal_na_base_op_complete(&o->super, canceled ? OPAL_ERR_CANCELED : OPAL_SUCCESS);
        }
        return OPAL_SUCCESS;
    }
    if (OPAL_ERR_RESOURCE_BUSY != rc) {
        return rc;
    }
    na_btl_context_t *nctx = ctx->plugin;
    (void) opal_thread_fetch_add_u32(&nctx->pending, 1, memory_order_relaxed);
    o->cls = cls;
    o->buf = (void *) buf;
    o->size = size;
    o->remote_id = dest_id;
    o->tag = tag;
    o->btl_tag = btl_tag;
    (void) na_btl_addr_dup(cls, dest, &o->addr);
    OPAL_THREAD_LOCK(&nb->lock);
    na_btl_queue_push(&nb->pending_sends, o);
    OPAL_THREAD_UNLOCK(&nb->lock);
    return OPAL_SUCCESS;
}

int na_btl_send_unexpected(opal_na_class_t *cls, opal_na_context_t *ctx, const void *buf,
                           size_t size, void *plugin_data, opal_na_addr_t *dest, uint8_t dest_id,
                           opal_na_tag_t tag, opal_na_op_id_t *op)
{
    (void) plugin_data;
    return send_msg(cls, ctx, NA_BTL_TAG_UNEXPECTED, buf, size, dest, dest_id, tag, op);
}

/* send_msg without the operation: the message goes now or not at all. */
int na_btl_inject_unexpected(opal_na_class_t *cls, opal_na_context_t *ctx, const void *buf,
                             size_t size, opal_na_addr_t *dest, uint8_t dest_id, opal_na_tag_t tag)
{
    return send_direct(cls->plugin, ctx, NA_BTL_TAG_UNEXPECTED, buf, size, dest, dest_id, tag);
}

int na_btl_send_expected(opal_na_class_t *cls, opal_na_context_t *ctx, const void *buf, size_t size,
                         void *plugin_data, opal_na_addr_t *dest, uint8_t dest_id,
                         opal_na_tag_t tag, opal_na_op_id_t *op)
{
    (void) plugin_data;
    return send_msg(cls, ctx, NA_BTL_TAG_EXPECTED, buf, size, dest, dest_id, tag, op);
}

int na_btl_msg_progress(na_btl_class_t *nb)
{
    int moved = 0;
    OPAL_THREAD_LOCK(&nb->lock);
    na_btl_op_t *o;
    while (NULL != (o = nb->pending_sends.head)) {
        int rc = send_now(nb, atomic_load_explicit(&o->addr->peer, memory_order_acquire),
                          o->btl_tag, o->super.context->id, o->buf, o->size, o->remote_id, o->tag);
        if (OPAL_ERR_RESOURCE_BUSY == rc) {
            break;
        }
        na_btl_queue_unlink(&nb->pending_sends, NULL, o);
        if (OPAL_SUCCESS != rc && atomic_load_explicit(&o->addr->failed, memory_order_acquire)) {
            rc = OPAL_ERR_PEER_FAILED;
        }
        (void) claim_and_finish(nb, o, rc);
        ++moved;
    }
    OPAL_THREAD_UNLOCK(&nb->lock);
    return moved;
}

/* ------------------------------------------------------------ receives */

/* Copies up to n bytes of a received message's payload (after the header)
 * to dst. */
static void copy_payload(const mca_btl_base_receive_descriptor_t *desc, void *dst, size_t n)
{
    size_t skip = NA_BTL_HDR_SIZE;
    uint8_t *out = dst;
    for (size_t i = 0; i < desc->des_segment_count && n > 0; ++i) {
        const uint8_t *p = desc->des_segments[i].seg_addr;
        size_t len = (size_t) desc->des_segments[i].seg_len;
        if (skip >= len) {
            skip -= len;
            continue;
        }
        p += skip;
        len -= skip;
        skip = 0;
        size_t take = len < n ? len : n;
        memcpy(out, p, take);
        out += take;
        n -= take;
    }
}

/* Copies a message's first bytes into o's buffer: from a descriptor
 * (desc) or from a kept copy (data). */
static void fill(na_btl_op_t *o, size_t size, const mca_btl_base_receive_descriptor_t *desc,
                 const uint8_t *data)
{
    size_t n = size < o->size ? size : o->size;
    if (NULL != desc) {
        copy_payload(desc, o->buf, n);
    } else if (NULL != data && n > 0) {
        memcpy(o->buf, data, n);
    }
}

/* Completes a posted unexpected receive that fill() filled; the claim is
 * won. */
static void deliver_unexpected(na_btl_class_t *nb, na_btl_op_t *o, uint32_t rank, opal_na_tag_t tag,
                               size_t size)
{
    int ret = size > o->size ? OPAL_ERR_TRUNCATED : OPAL_SUCCESS;
    o->super.cb_info.info.recv_unexpected.actual_size = size;
    o->super.cb_info.info.recv_unexpected.tag = tag;
    o->super.cb_info.info.recv_unexpected.source =
        OPAL_SUCCESS == ret ? na_btl_addr_for_rank(nb, rank) : NULL;
    if (OPAL_SUCCESS == ret && NULL == o->super.cb_info.info.recv_unexpected.source) {
        ret = OPAL_ERR_OUT_OF_RESOURCE;
    }
    na_btl_op_finish(nb, o, ret);
}

static void deliver_expected(na_btl_class_t *nb, na_btl_op_t *o, size_t size)
{
    o->super.cb_info.info.recv_expected.actual_size = size;
    na_btl_op_finish(nb, o, size > o->size ? OPAL_ERR_TRUNCATED : OPAL_SUCCESS);
}

/* Keeps a message no receive waits for (class lock held). */
static void keep_early(na_btl_class_t *nb, na_btl_early_queue_t *q, uint32_t rank,
                       uint8_t source_id, opal_na_tag_t tag, size_t size,
                       const mca_btl_base_receive_descriptor_t *desc)
{
    na_btl_early_t *e = malloc(sizeof(*e) + size);
    opal_na_addr_t *source = NULL == e ? NULL : na_btl_addr_for_rank(nb, rank);
    if (NULL == source) {
        free(e);
        if (0 == nb->dropped++) {
            opal_output(0,
                        "na/btl: out of memory keeping a %zu-byte message from rank %u: "
                        "dropped (further drops are only counted)",
                        size, rank);
        }
        return;
    }
    e->next = NULL;
    e->source = source;
    e->source_id = source_id;
    e->tag = tag;
    e->size = size;
    copy_payload(desc, e->data, size);
    if (NULL == q->tail) {
        q->head = e;
    } else {
        q->tail->next = e;
    }
    q->tail = e;
}

/* The active-message callback of both tags (progress). */
static void recv_cb(struct mca_btl_base_module_t *btl,
                    const mca_btl_base_receive_descriptor_t *desc)
{
    OPAL_TIMELINE(na_recv);
    (void) btl;
    na_btl_class_t *nb = desc->cbdata;
    size_t total = 0;
    for (size_t i = 0; i < desc->des_segment_count; ++i) {
        total += (size_t) desc->des_segments[i].seg_len;
    }
    na_btl_hdr_t hdr;
    char why[NA_BTL_WHY_MAX];
    if (OPAL_UNLIKELY(NULL == desc->proc)) {
        if (0 == nb->dropped++) {
            opal_output(0, "na/btl: dropped a message whose sender the BTL did not name (further "
                           "drops are only counted)");
        }
        return;
    }
    uint32_t rank = desc->proc->proc_name.vpid;
    const mca_btl_base_segment_t *seg0 = desc->des_segments;
    if (OPAL_UNLIKELY(0 == desc->des_segment_count ||
                      OPAL_SUCCESS !=
                          na_btl_hdr_decode(seg0->seg_addr, (size_t) seg0->seg_len, &hdr, why))) {
        if (0 == nb->dropped++) {
            opal_output(0,
                        "na/btl: dropped a message from rank %u: %s (further drops are "
                        "only counted)",
                        rank, 0 == desc->des_segment_count ? "it is empty" : why);
        }
        return;
    }
    size_t size = total - NA_BTL_HDR_SIZE;
    opal_na_context_t *ctx = opal_na_base_context_get(nb->cls, hdr.dest_id);
    if (OPAL_UNLIKELY(NULL == ctx)) {
        opal_na_base_unknown_context(nb->cls, hdr.dest_id);
        return;
    }
    na_btl_context_t *nctx = ctx->plugin;
    OPAL_THREAD_LOCK(&nb->lock);
    if (NA_BTL_TAG_UNEXPECTED == desc->tag) {
        na_btl_op_t *o;
        while (NULL != (o = nctx->posted_unexpected.head)) {
            na_btl_queue_unlink(&nctx->posted_unexpected, NULL, o);
            bool canceled;
            if (!opal_na_base_op_claim(&o->super, &canceled)) {
                continue;
            }
            if (canceled) {
                na_btl_op_finish(nb, o, OPAL_ERR_CANCELED);
                continue;
            }
            fill(o, size, desc, NULL);
            deliver_unexpected(nb, o, rank, hdr.tag, size);
            goto out;
        }
        keep_early(nb, &nctx->early_unexpected, rank, hdr.source_id, hdr.tag, size, desc);
    } else {
        na_btl_op_t *prev = NULL, *o = nctx->posted_expected.head;
        while (NULL != o) {
            na_btl_op_t *next = o->next;
            if (o->addr->rank != rank || o->remote_id != hdr.source_id || o->tag != hdr.tag) {
                prev = o;
                o = next;
                continue;
            }
            na_btl_queue_unlink(&nctx->posted_expected, prev, o);
            bool canceled;
            if (opal_na_base_op_claim(&o->super, &canceled)) {
                if (!canceled) {
                    fill(o, size, desc, NULL);
                    deliver_expected(nb, o, size);
                    goto out;
                }
                na_btl_op_finish(nb, o, OPAL_ERR_CANCELED);
            }
            o = next;
        }
        keep_early(nb, &nctx->early_expected, rank, hdr.source_id, hdr.tag, size, desc);
    }
out:
    OPAL_THREAD_UNLOCK(&nb->lock);
}

int na_btl_recv_unexpected(opal_na_class_t *cls, opal_na_context_t *ctx, void *buf, size_t size,
                           void *plugin_data, opal_na_op_id_t *op)
{
    (void) plugin_data;
    na_btl_class_t *nb = cls->plugin;
    na_btl_context_t *nctx = ctx->plugin;
    na_btl_op_t *o = (na_btl_op_t *) op;
    o->cls = cls;
    o->buf = buf;
    o->size = size;
    o->addr = NULL;
    (void) opal_thread_fetch_add_u32(&nctx->pending, 1, memory_order_relaxed);
    OPAL_THREAD_LOCK(&nb->lock);
    na_btl_early_t *e = nctx->early_unexpected.head;
    if (NULL != e) {
        nctx->early_unexpected.head = e->next;
        if (NULL == e->next) {
            nctx->early_unexpected.tail = NULL;
        }
        if (opal_na_base_op_claim(&o->super, NULL)) {
            fill(o, e->size, NULL, e->data);
            deliver_unexpected(nb, o, e->source->rank, e->tag, e->size);
        }
        na_btl_addr_free(cls, e->source);
        free(e);
    } else {
        na_btl_queue_push(&nctx->posted_unexpected, o);
    }
    OPAL_THREAD_UNLOCK(&nb->lock);
    return OPAL_SUCCESS;
}

int na_btl_recv_expected(opal_na_class_t *cls, opal_na_context_t *ctx, void *buf, size_t size,
                         void *plugin_data, opal_na_addr_t *source, uint8_t source_id,
                         opal_na_tag_t tag, opal_na_op_id_t *op)
{
    (void) plugin_data;
    na_btl_class_t *nb = cls->plugin;
    na_btl_context_t *nctx = ctx->plugin;
    na_btl_op_t *o = (na_btl_op_t *) op;
    o->cls = cls;
    o->buf = buf;
    o->size = size;
    o->remote_id = source_id;
    o->tag = tag;
    o->addr = NULL;
    int rc = OPAL_SUCCESS;
    OPAL_THREAD_LOCK(&nb->lock);
    na_btl_early_t *prev = NULL, *e;
    for (e = nctx->early_expected.head; NULL != e; prev = e, e = e->next) {
        if (e->source == source && e->source_id == source_id && e->tag == tag) {
            break;
        }
    }
    if (NULL != e) {
        if (NULL == prev) {
            nctx->early_expected.head = e->next;
        } else {
            prev->next = e->next;
        }
        if (nctx->early_expected.tail == e) {
            nctx->early_expected.tail = prev;
        }
        (void) opal_thread_fetch_add_u32(&nctx->pending, 1, memory_order_relaxed);
        if (opal_na_base_op_claim(&o->super, NULL)) {
            fill(o, e->size, NULL, e->data);
            deliver_expected(nb, o, e->size);
        }
        na_btl_addr_free(cls, e->source);
        free(e);
    } else if (atomic_load_explicit(&source->failed, memory_order_acquire)) {
        rc = OPAL_ERR_PEER_FAILED;
    } else {
        (void) opal_thread_fetch_add_u32(&nctx->pending, 1, memory_order_relaxed);
        (void) na_btl_addr_dup(cls, source, &o->addr);
        na_btl_queue_push(&nctx->posted_expected, o);
    }
    OPAL_THREAD_UNLOCK(&nb->lock);
    return rc;
}

/* -------------------------------------------------------- peer failure */

/* Fails the ops of q waiting on addr (class lock held). */
static void fail_queue(na_btl_class_t *nb, na_btl_queue_t *q, opal_na_addr_t *addr)
{
    na_btl_op_t *prev = NULL, *o = q->head;
    while (NULL != o) {
        na_btl_op_t *next = o->next;
        if (o->addr == addr) {
            na_btl_queue_unlink(q, prev, o);
            (void) claim_and_finish(nb, o, OPAL_ERR_PEER_FAILED);
        } else {
            prev = o;
        }
        o = next;
    }
}

void na_btl_msg_peer_failed(na_btl_class_t *nb, opal_na_addr_t *addr)
{
    OPAL_THREAD_LOCK(&nb->lock);
    for (int id = 0; id < 256; ++id) {
        opal_na_context_t *ctx = opal_na_base_context_get(nb->cls, (uint8_t) id);
        if (NULL != ctx && NULL != ctx->plugin) {
            fail_queue(nb, &((na_btl_context_t *) ctx->plugin)->posted_expected, addr);
        }
    }
    fail_queue(nb, &nb->pending_sends, addr);
    OPAL_THREAD_UNLOCK(&nb->lock);
    na_btl_rma_peer_failed(nb, addr);
}

/* -------------------------------------------------------------- cancel */

int na_btl_cancel(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_op_id_t *op)
{
    (void) ctx;
    na_btl_class_t *nb = cls->plugin;
    na_btl_op_t *o = (na_btl_op_t *) op;
    if (!opal_na_base_op_cancel_mark(op)) {
        return OPAL_SUCCESS;
    }
    if (OPAL_NA_CB_PUT == op->cb_info.type || OPAL_NA_CB_GET == op->cb_info.type) {
        (void) na_btl_rma_cancel(nb, o);
        return OPAL_SUCCESS;
    }
    OPAL_THREAD_LOCK(&nb->lock);
    bool removed = NULL != o->queue && na_btl_queue_remove(o->queue, o);
    if (removed) {
        (void) claim_and_finish(nb, o, OPAL_ERR_CANCELED);
    }
    OPAL_THREAD_UNLOCK(&nb->lock);
    /* Not in a queue: it is being completed, and that completion sees the
     * mark and reports it canceled. */
    return OPAL_SUCCESS;
}

/* ------------------------------------------------------------ lifecycle */

int na_btl_msg_init(na_btl_class_t *nb)
{
    int rc = mca_btl_base_am_register(NA_BTL_TAG_UNEXPECTED, recv_cb, nb);
    if (OPAL_SUCCESS == rc) {
        rc = mca_btl_base_am_register(NA_BTL_TAG_EXPECTED, recv_cb, nb);
        if (OPAL_SUCCESS != rc) {
            (void) mca_btl_base_am_deregister(NA_BTL_TAG_UNEXPECTED);
        }
    }
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "na/btl: BTL tags 0x%x and 0x%x have another owner: %s",
                    NA_BTL_TAG_UNEXPECTED, NA_BTL_TAG_EXPECTED, opal_strerror(rc));
    }
    return rc;
}

void na_btl_msg_fini(na_btl_class_t *nb)
{
    (void) nb;
    (void) mca_btl_base_am_deregister(NA_BTL_TAG_UNEXPECTED);
    (void) mca_btl_base_am_deregister(NA_BTL_TAG_EXPECTED);
}
