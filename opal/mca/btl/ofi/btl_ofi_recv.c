/*
 * Receives: buffers kept posted, messages delivered in each peer's order.
 *
 * With FI_MULTI_RECV a few large buffers take many messages each; the
 * provider releases a buffer (FI_MULTI_RECV on a completion) once less
 * than btl_max_send_size is left in it, and it is posted again as soon as
 * none of its messages is held. Without it, each buffer takes one message
 * of up to btl_max_send_size bytes.
 *
 * rxm (libfabric 1.17) gets single receives by default: it releases a
 * multi-receive buffer once its space is handed out, while rendezvous
 * messages placed in it may still be read into it (rxm_post_mrecv pairs
 * waiting messages with the buffer's front and releases it at once;
 * rxm_finish_recv releases after the last small message). Posted again,
 * the buffer would take new messages where old ones are still landing,
 * and after a peer's death reads that fail leave buffers never released.
 *
 * Everything a message carries is checked before use: the sender's rank
 * (inside the job), its sequence number (not one already delivered), its
 * length (at most btl_max_send_size). A message that fails is dropped
 * with a report naming the sender; it never reaches a callback.
 *
 * In the sequence header mode every message on the wire is seq_hdr bytes
 * longer than what upper layers sent: buffers are sized for that, and the
 * header is read and stripped before a message is delivered or held.
 */
#include "opal/util/opal_fault.h"
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/ofi/btl_ofi.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

static void held_construct(mca_btl_ofi_held_t *held)
{
    held->seq = 0;
    held->tag = 0;
    held->data = NULL;
    held->len = 0;
    held->buf = NULL;
}

OBJ_CLASS_INSTANCE(mca_btl_ofi_held_t, opal_free_list_item_t, held_construct, NULL);

/* Posts one buffer; caller holds the lock. Returns 0 (posted, or to be
 * posted by progress when the queue is full) or libfabric's error. */
static ssize_t post(mca_btl_ofi_module_t *module, mca_btl_ofi_recv_buf_t *buf)
{
    ssize_t rc;
    if (module->multi_recv) {
        struct iovec iov = {.iov_base = buf->base, .iov_len = buf->size};
        void *desc = buf->desc;
        struct fi_msg msg = {
            .msg_iov = &iov,
            .desc = &desc,
            .iov_count = 1,
            .addr = FI_ADDR_UNSPEC,
            .context = &buf->ctx.fi,
        };
        rc = fi_recvmsg(module->ofi.ep, &msg, FI_MULTI_RECV);
    } else {
        rc = fi_recv(module->ofi.ep, buf->base, buf->size, buf->desc, FI_ADDR_UNSPEC, &buf->ctx.fi);
    }
    if (OPAL_LIKELY(0 == rc)) {
        buf->posted = true;
        buf->returned = false;
        module->recv_post_failures = 0;
        return 0;
    }
    if (-FI_EAGAIN == rc) {
        /* The receive queue is full for now: progress posts it later. */
        module->repost_pending = true;
        return 0;
    }
    return rc;
}

static void post_or_retire(mca_btl_ofi_module_t *module, mca_btl_ofi_recv_buf_t *buf);

static void maybe_repost(mca_btl_ofi_module_t *module, mca_btl_ofi_recv_buf_t *buf)
{
    if (buf->returned && !buf->posted && !buf->retired && !buf->spare && 0 == buf->held &&
        NULL != module->ofi.ep) {
        post_or_retire(module, buf);
    }
}

/* A spare to take a retired buffer's place, or NULL. */
static mca_btl_ofi_recv_buf_t *take_spare(mca_btl_ofi_module_t *module)
{
    for (size_t i = 0; i < module->recv_buf_count; ++i) {
        mca_btl_ofi_recv_buf_t *spare = &module->recv_bufs[i];
        if (spare->spare) {
            spare->spare = false;
            return spare;
        }
    }
    return NULL;
}

/* buf may still be the provider's: it is set aside until a release says
 * otherwise (mca_btl_ofi_recv_complete), and a spare is posted instead. */
static void retire(mca_btl_ofi_module_t *module, mca_btl_ofi_recv_buf_t *buf, const char *why)
{
    buf->retired = true;
    buf->posted = false;
    ++module->recv_retired;
    mca_btl_ofi_recv_buf_t *spare = take_spare(module);
    if (NULL == spare) {
        opal_output(0,
                    "btl/ofi (%s): a receive buffer was set aside (%s) and no spare is left "
                    "until the provider gives one back",
                    module->ofi.prov_name, why);
        return;
    }
    opal_output_verbose(10, mca_btl_base_output, "ofi: %s: a receive buffer was set aside: %s",
                        module->ofi.prov_name, why);
    maybe_repost(module, spare);
}

/* Posts a multi-receive buffer. The provider may refuse it having taken
 * part of it already: rxm (libfabric 1.17, rxm_post_mrecv) first pairs the
 * buffer's front with each waiting unexpected message, and when handling
 * one fails (a rendezvous from a peer whose connection is gone:
 * rxm_handle_rndv finds no connection, -FI_EOTHER) it returns the error
 * after queueing the buffer's release. Posted again before that release
 * is read, the buffer would be the provider's twice. So a refused buffer
 * is retired like one with a failed message, and the release brings it
 * back. */
static void post_or_retire(mca_btl_ofi_module_t *module, mca_btl_ofi_recv_buf_t *buf)
{
    ssize_t rc = post(module, buf);
    if (OPAL_LIKELY(0 == rc)) {
        return;
    }
    if (!module->multi_recv) {
        /* A single receive the provider refused is not its (rxm pairs it
         * with a waiting message first, as above, and gives up on both):
         * progress tries again, which also gets the next waiting message
         * out of the way. */
        module->repost_pending = true;
        if (++module->recv_post_failures == MCA_BTL_OFI_POST_FAILURES_REPORTED) {
            opal_common_ofi_error("btl/ofi", &module->ofi,
                                  "posting a receive buffer (failing again and again)", NULL, rc);
        } else {
            opal_output_verbose(10, mca_btl_base_output,
                                "ofi: %s: posting a receive buffer failed (tried again): %s",
                                module->ofi.prov_name, fi_strerror((int) -rc));
        }
        return;
    }
    char why[160];
    snprintf(why, sizeof(why), "posting it failed: %s", fi_strerror((int) -rc));
    retire(module, buf, why);
}

int mca_btl_ofi_recv_post_all(mca_btl_ofi_module_t *module)
{
    const mca_btl_ofi_component_t *c = &mca_btl_ofi_component;
    size_t max_send = module->super.btl_max_send_size + module->seq_hdr;
    size_t size, count;
    if (module->multi_recv) {
        size = c->recv_buffer_size;
        if (0 == size) {
            size = 4 * max_send > (size_t) 1 << 20 ? 4 * max_send : (size_t) 1 << 20;
        }
        /* A buffer must take at least two messages to be worth it. */
        if (size < 2 * max_send) {
            size = 2 * max_send;
        }
        count = (0 != c->recv_buffers ? c->recv_buffers : 4) + MCA_BTL_OFI_SPARE_RECV_BUFS;
    } else {
        size = max_send > 0 ? max_send : 1;
        count = 0 != c->recv_buffers ? c->recv_buffers : 16;
    }
    /* Whole cache lines per buffer. */
    size = (size + OPAL_CACHE_LINE_SIZE - 1) & ~(size_t) (OPAL_CACHE_LINE_SIZE - 1);
    if (0 != posix_memalign((void **) &module->recv_mem, 4096, size * count)) {
        module->recv_mem = NULL;
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    module->recv_bufs = calloc(count, sizeof(*module->recv_bufs));
    if (NULL == module->recv_bufs) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    module->recv_buf_count = count;
    void *desc = NULL;
    if (opal_common_ofi_needs_local_mr(&module->ofi)) {
        /* Local read and write and remote write too: a rendezvous may
         * move a large message into the buffer by RMA. */
        int rc = opal_common_ofi_mr_register(&module->ofi, module->recv_mem, size * count,
                                             FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_WRITE,
                                             &module->recv_mr);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
        desc = module->recv_mr.desc;
    }
    for (size_t i = 0; i < count; ++i) {
        mca_btl_ofi_recv_buf_t *buf = &module->recv_bufs[i];
        buf->ctx.kind = MCA_BTL_OFI_CTX_RECV;
        buf->ctx.magic = MCA_BTL_OFI_CTX_MAGIC;
        buf->base = module->recv_mem + i * size;
        buf->size = size;
        buf->desc = desc;
        buf->returned = true;
        if (module->multi_recv && i + MCA_BTL_OFI_SPARE_RECV_BUFS >= count) {
            buf->spare = true;
            continue;
        }
        ssize_t rc = post(module, buf);
        if (0 != rc) {
            opal_common_ofi_error("btl/ofi", &module->ofi, "posting a receive buffer", NULL, rc);
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    return OPAL_SUCCESS;
}

void mca_btl_ofi_recv_repost(mca_btl_ofi_module_t *module)
{
    module->repost_pending = false;
    for (size_t i = 0; i < module->recv_buf_count; ++i) {
        maybe_repost(module, &module->recv_bufs[i]);
    }
}

void mca_btl_ofi_recv_release(mca_btl_ofi_module_t *module)
{
    opal_common_ofi_mr_deregister(&module->recv_mr);
    free(module->recv_bufs);
    module->recv_bufs = NULL;
    module->recv_buf_count = 0;
    free(module->recv_mem);
    module->recv_mem = NULL;
}

static inline void deliver(mca_btl_ofi_module_t *module, mca_btl_ofi_endpoint_t *ep,
                           mca_btl_base_tag_t tag, uint8_t *data, size_t len)
{
    if (OPAL_UNLIKELY(MCA_BTL_OFI_TAG_BYE == tag)) {
        /* In its turn: everything the peer sent was delivered. */
        mca_btl_ofi_peer_closed(module, ep);
        return;
    }
    mca_btl_base_segment_t seg = {.seg_addr = data, .seg_len = len};
    mca_btl_base_receive_descriptor_t desc = {
        .endpoint = ep,
        .proc = ep->proc,
        .des_segments = &seg,
        .des_segment_count = 1,
        .tag = tag,
    };
    mca_btl_base_am_dispatch(&module->super, &desc);
}

/* Delivers the held messages whose turn has come. */
static void deliver_held(mca_btl_ofi_module_t *module, mca_btl_ofi_endpoint_t *ep)
{
    while (!opal_list_is_empty(&ep->held) && !ep->failed) {
        mca_btl_ofi_held_t *held = (mca_btl_ofi_held_t *) opal_list_get_first(&ep->held);
        if (held->seq != ep->recv_seq) {
            return;
        }
        opal_list_remove_item(&ep->held, &held->super.super);
        ++ep->recv_seq;
        deliver(module, ep, held->tag, held->data, held->len);
        mca_btl_ofi_recv_buf_t *buf = held->buf;
        opal_free_list_return(&module->held, &held->super);
        --buf->held;
        maybe_repost(module, buf);
    }
}

/* Keeps an early message where it landed until its predecessors came;
 * the list stays sorted by sequence number. */
static void hold(mca_btl_ofi_module_t *module, mca_btl_ofi_endpoint_t *ep, uint32_t seq,
                 mca_btl_base_tag_t tag, uint8_t *data, size_t len, mca_btl_ofi_recv_buf_t *buf)
{
    mca_btl_ofi_held_t *held = (mca_btl_ofi_held_t *) opal_free_list_get(&module->held);
    if (OPAL_UNLIKELY(NULL == held)) {
        opal_output(0, "btl/ofi (%s): no memory to hold an early message from %s: dropped",
                    module->ofi.prov_name, mca_btl_ofi_peer_name(ep));
        return;
    }
    held->seq = seq;
    held->tag = tag;
    held->data = data;
    held->len = len;
    held->buf = buf;
    ++buf->held;
    mca_btl_ofi_held_t *next;
    OPAL_LIST_FOREACH (next, &ep->held, mca_btl_ofi_held_t) {
        if ((int32_t) (seq - next->seq) < 0) {
            opal_list_insert_pos(&ep->held, &next->super.super, &held->super.super);
            return;
        }
    }
    opal_list_append(&ep->held, &held->super.super);
}

void mca_btl_ofi_recv_drop_held(mca_btl_ofi_module_t *module, mca_btl_ofi_endpoint_t *ep)
{
    opal_list_item_t *item;
    while (NULL != (item = opal_list_remove_first(&ep->held))) {
        mca_btl_ofi_held_t *held = (mca_btl_ofi_held_t *) item;
        mca_btl_ofi_recv_buf_t *buf = held->buf;
        opal_free_list_return(&module->held, &held->super);
        --buf->held;
        maybe_repost(module, buf);
    }
}

/* One message: checked, then delivered or held. */
static void message(mca_btl_ofi_module_t *module, mca_btl_ofi_recv_buf_t *buf,
                    const struct fi_cq_data_entry *entry, uint8_t *data)
{
    mca_btl_base_tag_t tag = (mca_btl_base_tag_t) (entry->data & 0xffu);
    uint32_t rank =
        (uint32_t) ((entry->data >> MCA_BTL_OFI_DATA_TAG_BITS) & (MCA_BTL_OFI_MAX_RANKS - 1));
    uint32_t seq = (uint32_t) (entry->data >> 32);
    size_t len = entry->len;
    /* This process never sends to itself over ofi (btl/self does). */
    if (OPAL_UNLIKELY(0 == (entry->flags & FI_REMOTE_CQ_DATA) || rank >= module->job_size ||
                      rank == module->my_rank)) {
        if (!module->reported_stray) {
            module->reported_stray = true;
            opal_output(0,
                        "btl/ofi (%s): dropped a message of %zu bytes %s (this job has %u "
                        "processes); further ones are dropped silently",
                        module->ofi.prov_name, entry->len,
                        0 == (entry->flags & FI_REMOTE_CQ_DATA) ? "without a sender"
                                                                : "from outside this job",
                        module->job_size);
        }
        return;
    }
    mca_btl_ofi_endpoint_t *ep = module->endpoints[rank];
    if (OPAL_UNLIKELY(NULL == ep)) {
        /* A peer that added this process before this process added it. */
        mca_btl_base_reason_t why = {.text = ""};
        ep = mca_btl_ofi_endpoint_get(module, rank, &why);
        if (NULL == ep) {
            opal_output(0, "btl/ofi (%s): dropped a message from rank %u: %s",
                        module->ofi.prov_name, rank, why.text);
            return;
        }
    }
    if (OPAL_UNLIKELY(ep->failed)) {
        return;
    }
    /* Faults: a message lost, or one a broken peer sent too long. */
    if (OPAL_FAULT(ofi_recv_drop)) {
        return;
    }
    if (OPAL_FAULT(ofi_recv_corrupt)) {
        len = module->super.btl_max_send_size + module->seq_hdr + 1;
    }
    if (OPAL_UNLIKELY(0 != module->seq_hdr)) {
        if (OPAL_UNLIKELY(len < module->seq_hdr)) {
            opal_output(0,
                        "btl/ofi (%s): %s sent a message of %zu bytes, too short for its "
                        "%zu-byte sequence header: dropped",
                        module->ofi.prov_name, mca_btl_ofi_peer_name(ep), len, module->seq_hdr);
            return;
        }
        seq = mca_btl_ofi_seq_hdr_read(data);
        data += module->seq_hdr;
        len -= module->seq_hdr;
    }
    if (OPAL_UNLIKELY(len > module->super.btl_max_send_size)) {
        opal_output(0,
                    "btl/ofi (%s): %s sent a message of %zu bytes, more than the %zu allowed: "
                    "dropped",
                    module->ofi.prov_name, mca_btl_ofi_peer_name(ep), len,
                    module->super.btl_max_send_size);
        return;
    }
    if (OPAL_LIKELY(seq == ep->recv_seq)) {
        ++ep->recv_seq;
        deliver(module, ep, tag, data, len);
        if (OPAL_UNLIKELY(!opal_list_is_empty(&ep->held))) {
            deliver_held(module, ep);
        }
    } else if ((int32_t) (seq - ep->recv_seq) > 0) {
        hold(module, ep, seq, tag, data, len, buf);
    } else {
        opal_output(0,
                    "btl/ofi (%s): %s sent message number %u again (next expected: %u): "
                    "dropped",
                    module->ofi.prov_name, mca_btl_ofi_peer_name(ep), seq, ep->recv_seq);
    }
}

/* A retired buffer's release came (a normal completion: definite). It
 * is posted again if fewer than the planned buffers are in service, and
 * is a spare otherwise, so that spares are there for the next retired
 * buffer. */
static void recover(mca_btl_ofi_module_t *module, mca_btl_ofi_recv_buf_t *buf)
{
    size_t in_service = 0;
    for (size_t i = 0; i < module->recv_buf_count; ++i) {
        const mca_btl_ofi_recv_buf_t *other = &module->recv_bufs[i];
        in_service += !other->spare && !other->retired;
    }
    buf->retired = false;
    ++module->recv_recovered;
    buf->spare = in_service >= module->recv_buf_count - MCA_BTL_OFI_SPARE_RECV_BUFS;
}

/* Whether a completion releases its multi-receive buffer. FI_MULTI_RECV
 * alone does not say so: rxm (libfabric 1.17) sets it on the completion
 * of a rendezvous message that leaves room in the buffer, then releases
 * the buffer with a completion of its own. Taking the first for a release
 * would post the buffer a second time while the provider still has it.
 * A release is a completion without data, or one after which less than
 * the minimum (FI_OPT_MIN_MULTI_RECV) is left. */
static inline bool released(const mca_btl_ofi_module_t *module, const mca_btl_ofi_recv_buf_t *buf,
                            const struct fi_cq_data_entry *entry)
{
    if (0 == (entry->flags & FI_MULTI_RECV)) {
        return false;
    }
    if (0 == entry->len || NULL == entry->buf) {
        return true;
    }
    const uint8_t *end = (const uint8_t *) entry->buf + entry->len;
    return end < buf->base || end > buf->base + buf->size ||
           (size_t) (buf->base + buf->size - end) <
               module->super.btl_max_send_size + module->seq_hdr;
}

void mca_btl_ofi_recv_complete(mca_btl_ofi_module_t *module, const struct fi_cq_data_entry *entry)
{
    mca_btl_ofi_recv_buf_t *buf =
        MCA_BTL_OFI_CONTAINER(entry->op_context, mca_btl_ofi_recv_buf_t, ctx);
    /* A multi-receive buffer's release may come alone (no message). */
    if (0 != (entry->flags & (FI_REMOTE_CQ_DATA)) || 0 != entry->len) {
        uint8_t *data = module->multi_recv ? entry->buf : buf->base;
        if (OPAL_UNLIKELY(NULL == data || data < buf->base ||
                          data + entry->len > buf->base + buf->size)) {
            opal_output(0,
                        "btl/ofi (%s): a message of %zu bytes was placed outside its "
                        "receive buffer: dropped",
                        module->ofi.prov_name, entry->len);
        } else {
            message(module, buf, entry, data);
        }
    }
    if (!module->multi_recv || released(module, buf, entry)) {
        buf->posted = false;
        buf->returned = true;
        if (OPAL_UNLIKELY(buf->retired)) {
            recover(module, buf);
        }
        maybe_repost(module, buf);
    }
}

void mca_btl_ofi_recv_error(mca_btl_ofi_module_t *module, const struct fi_cq_err_entry *entry,
                            const char *text)
{
    mca_btl_ofi_recv_buf_t *buf =
        MCA_BTL_OFI_CONTAINER(entry->op_context, mca_btl_ofi_recv_buf_t, ctx);
    if (FI_ECANCELED == entry->err) {
        /* The endpoint is closing. */
        buf->posted = false;
        return;
    }
    if (0 != (entry->flags & FI_REMOTE_CQ_DATA)) {
        uint32_t rank =
            (uint32_t) ((entry->data >> MCA_BTL_OFI_DATA_TAG_BITS) & (MCA_BTL_OFI_MAX_RANKS - 1));
        opal_output(0,
                    "btl/ofi (%s): a message from rank %u (%zu bytes, %zu more than fitted) "
                    "could not be received: %s",
                    module->ofi.prov_name, rank, entry->len, entry->olen, text);
    } else {
        opal_output(0, "btl/ofi (%s): a receive failed: %s", module->ofi.prov_name, text);
    }
    /* A single-message buffer is used up by its failed message. Whether
     * a multi-receive buffer is: an error entry's flags describe the
     * operation (FI_MULTI_RECV included), so the provider may have
     * released the buffer or may still fill it. Posting it again while
     * the provider has it breaks the provider; not posting it again after
     * a release loses it. So it is retired (until a normal completion
     * releases it for sure), and a spare takes its place. */
    if (!module->multi_recv) {
        buf->posted = false;
        buf->returned = true;
        maybe_repost(module, buf);
        return;
    }
    if (!buf->retired) {
        retire(module, buf, "one of its messages failed");
    }
}
