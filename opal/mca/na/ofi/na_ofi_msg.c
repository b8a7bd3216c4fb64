/*
 * Messages. Unexpected ones are untagged and carry a header (the user's
 * tag, the destination context, the sender's address) that the receiver
 * reads from its pre-posted buffers; expected ones are tagged and posted
 * straight into the user's buffer, the provider matching source and tag.
 * Small messages are injected (no completion to wait for): the operation
 * completes at once.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/na/ofi/na_ofi.h"
#include <rdma/fi_tagged.h>

#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

static void op_begin(opal_na_context_t *ctx, na_ofi_op_t *o, na_ofi_addr_t *addr)
{
    o->fictx.kind = NA_OFI_FICTX_OP;
    o->fictx.owner = o;
    /* The operation holds the peer until it completes: the caller may
     * free its address at once. */
    o->addr = addr;
    if (NULL != addr) {
        na_ofi_addr_ref(addr);
        atomic_store_explicit(&addr->talked, true, memory_order_relaxed);
    }
    o->listed = false;
    o->rma_error = OPAL_SUCCESS;
    atomic_fetch_add_explicit(&((na_ofi_context_t *) ctx->plugin)->pending, 1,
                              memory_order_relaxed);
}

/* Undoes op_begin when the provider refused the operation. */
static void op_unbegin(opal_na_class_t *cls, opal_na_context_t *ctx, na_ofi_op_t *o)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    OPAL_THREAD_LOCK(&oc->lock);
    opal_common_ofi_mr_deregister(&o->tmp_mr);
    if (NULL != o->addr) {
        na_ofi_addr_release(oc, o->addr);
        o->addr = NULL;
    }
    OPAL_THREAD_UNLOCK(&oc->lock);
    atomic_fetch_sub_explicit(&((na_ofi_context_t *) ctx->plugin)->pending, 1,
                              memory_order_relaxed);
}

/* The descriptor of a user buffer: its message buffer's registration,
 * or one made for this operation when the provider needs one. */
static int local_desc(na_ofi_class_t *oc, na_ofi_op_t *o, const void *buf, size_t size,
                      void *plugin_data, void **desc)
{
    *desc = NULL;
    if (!opal_common_ofi_needs_local_mr(&oc->ofi) || 0 == size) {
        return OPAL_SUCCESS;
    }
    if (NULL != plugin_data) {
        *desc = ((opal_common_ofi_mr_t *) plugin_data)->desc;
        return OPAL_SUCCESS;
    }
    int rc =
        opal_common_ofi_mr_register(&oc->ofi, (void *) buf, size, FI_SEND | FI_RECV, &o->tmp_mr);
    *desc = o->tmp_mr.desc;
    return rc;
}

static int send_error(na_ofi_class_t *oc, const char *what, na_ofi_addr_t *a, ssize_t rc)
{
    char peer[NA_OFI_ADDR_TEXT_MAX];
    opal_common_ofi_error("na/ofi", &oc->ofi, what, na_ofi_addr_name(oc, a, peer), rc);
    return na_ofi_fi_error((int) -rc);
}

/* Writes the unexpected header and the payload into out. */
static size_t write_unexpected(na_ofi_class_t *oc, uint8_t *out, size_t room, const void *buf,
                               size_t size, uint8_t dest_id, uint8_t src_id, opal_na_tag_t tag)
{
    const na_ofi_uhdr_t hdr = {.tag = tag,
                               .dest_id = dest_id,
                               .src_id = src_id,
                               .addrlen = (uint16_t) oc->self->addrlen,
                               .addr = oc->self->addr};
    size_t n = na_ofi_uhdr_encode(&hdr, out, room);
    if (0 == n || room - n < size) {
        return 0;
    }
    if (0 != size) {
        memcpy(out + n, buf, size);
    }
    return n + size;
}

static uint64_t expected_tag(uint8_t src_id, uint8_t dest_id, opal_na_tag_t tag)
{
    return NA_OFI_TAG_EXPECTED | ((uint64_t) src_id << NA_OFI_TAG_SRC_SHIFT) |
           ((uint64_t) dest_id << NA_OFI_TAG_DEST_SHIFT) | tag;
}

/* The op's staging buffer for unexpected sends, made once per op id. */
static int staging(na_ofi_class_t *oc, na_ofi_op_t *o)
{
    if (NULL != o->staging) {
        return OPAL_SUCCESS;
    }
    o->staging = malloc(NA_OFI_UHDR_MAX + oc->max_unexpected);
    if (NULL == o->staging) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (opal_common_ofi_needs_local_mr(&oc->ofi) &&
        OPAL_SUCCESS != opal_common_ofi_mr_register(&oc->ofi, o->staging,
                                                    NA_OFI_UHDR_MAX + oc->max_unexpected, FI_SEND,
                                                    &o->staging_mr)) {
        free(o->staging);
        o->staging = NULL;
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    return OPAL_SUCCESS;
}

ssize_t na_ofi_post(opal_na_class_t *cls, na_ofi_op_t *o)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    switch (o->post) {
        case NA_OFI_POST_SEND:
            return fi_send(oc->ofi.ep, o->staging, o->len, o->staging_mr.desc, o->addr->fi_addr,
                           &o->fictx);
        case NA_OFI_POST_TSEND:
            return fi_tsend(oc->ofi.ep, o->sbuf, o->len, o->desc, o->addr->fi_addr, o->fi_tag,
                            &o->fictx);
        case NA_OFI_POST_TRECV:
            return fi_trecv(oc->ofi.ep, o->buf, o->size, o->desc, o->addr->fi_addr, o->fi_tag, 0,
                            &o->fictx);
        default:
            return na_ofi_rma_issue(cls, o);
    }
}

/* Whether o must wait behind operations already queued for its peer. */
static bool peer_queued(const na_ofi_class_t *oc, const na_ofi_op_t *o)
{
    return NULL != o->addr ? 0 != o->addr->retry_queued : NULL != oc->retry_head;
}

static void enqueue(na_ofi_class_t *oc, na_ofi_op_t *o)
{
    o->queued = true;
    if (NULL != o->addr) {
        o->addr->retry_queued++;
    }
    o->retry_next = NULL;
    if (NULL == oc->retry_tail) {
        oc->retry_head = o;
    } else {
        oc->retry_tail->retry_next = o;
    }
    oc->retry_tail = o;
}

ssize_t na_ofi_start(opal_na_class_t *cls, na_ofi_op_t *o)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    ssize_t rc = !peer_queued(oc, o) ? na_ofi_post(cls, o) : -FI_EAGAIN;
    if (-FI_EAGAIN == rc) {
        /* The provider has no room now (rxm before its connection is
         * up, a full queue): posted again from progress. */
        enqueue(oc, o);
        rc = 0;
    }
    return rc;
}

void na_ofi_retry_drain(opal_na_class_t *cls)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    if (NULL == oc->retry_head) {
        return;
    }
    /* Once an operation to a peer finds no room, the peer's later ones
     * wait for the next pass; other peers' go on. */
    const uint64_t pass = ++oc->retry_pass;
    na_ofi_op_t *prev = NULL, *o = oc->retry_head;
    while (NULL != o) {
        na_ofi_op_t *next = o->retry_next;
        if (NULL != o->addr && pass == o->addr->retry_blocked_pass) {
            prev = o;
            o = next;
            continue;
        }
        bool canceled =
            OPAL_NA_OP_CANCELING == atomic_load_explicit(&o->super.state, memory_order_acquire);
        /* A receive whose peer failed meanwhile is not posted at all. */
        bool failed = NA_OFI_POST_TRECV == o->post && OPAL_SUCCESS != o->rma_error;
        ssize_t rc = (canceled || failed) && NA_OFI_POST_RMA != o->post ? -FI_ECANCELED
                                                                        : na_ofi_post(cls, o);
        if (-FI_EAGAIN == rc) {
            if (NULL == o->addr) {
                return;
            }
            o->addr->retry_blocked_pass = pass;
            prev = o;
            o = next;
            continue;
        }
        if (NULL == prev) {
            oc->retry_head = next;
        } else {
            prev->retry_next = next;
        }
        if (oc->retry_tail == o) {
            oc->retry_tail = prev;
        }
        if (NULL != o->addr) {
            o->addr->retry_queued--;
        }
        o->queued = false;
        if (NA_OFI_POST_RMA == o->post) {
            if (0 != rc && OPAL_SUCCESS == o->rma_error) {
                o->rma_error = na_ofi_fi_error((int) -rc);
            }
            if (0 == o->inflight && (0 == o->left || OPAL_SUCCESS != o->rma_error)) {
                na_ofi_op_done(cls, o, o->rma_error);
            }
        } else if (0 != rc) {
            na_ofi_op_done(cls, o, failed ? o->rma_error : na_ofi_fi_error((int) -rc));
        }
        o = next;
    }
}

/* The inject branch of na_ofi_msg_send_unexpected alone: fi_inject
 * copies the message, so nothing is left to complete. */
int na_ofi_msg_inject_unexpected(opal_na_class_t *cls, opal_na_context_t *ctx, const void *buf,
                                 size_t size, opal_na_addr_t *dest, uint8_t dest_id,
                                 opal_na_tag_t tag)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    na_ofi_addr_t *a = (na_ofi_addr_t *) dest;
    if (NA_OFI_UHDR_FIXED + oc->self->addrlen + size > oc->inject_size) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    atomic_store_explicit(&a->talked, true, memory_order_relaxed);
    ssize_t rc = -FI_EAGAIN;
    OPAL_THREAD_LOCK(&oc->lock);
    /* Sends waiting to be retried to this peer go first. */
    if (0 == a->retry_queued) {
        size_t n = write_unexpected(oc, oc->scratch, sizeof(oc->scratch), buf, size, dest_id,
                                    ctx->id, tag);
        rc = fi_inject(oc->ofi.ep, oc->scratch, n, a->fi_addr);
    }
    OPAL_THREAD_UNLOCK(&oc->lock);
    if (0 == rc) {
        return OPAL_SUCCESS;
    }
    if (-FI_EAGAIN == rc) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    return send_error(oc, "sending an unexpected message to", a, rc);
}

int na_ofi_msg_send_unexpected(opal_na_class_t *cls, opal_na_context_t *ctx, const void *buf,
                               size_t size, void *plugin_data, opal_na_addr_t *dest,
                               uint8_t dest_id, opal_na_tag_t tag, opal_na_op_id_t *op)
{
    (void) plugin_data;
    na_ofi_class_t *oc = na_ofi_class(cls);
    na_ofi_op_t *o = (na_ofi_op_t *) op;
    na_ofi_addr_t *a = (na_ofi_addr_t *) dest;
    size_t total = NA_OFI_UHDR_FIXED + oc->self->addrlen + size;
    ssize_t rc = -FI_EAGAIN;
    op_begin(ctx, o, a);
    o->post = NA_OFI_POST_SEND;
    OPAL_THREAD_LOCK(&oc->lock);
    if (total <= oc->inject_size && 0 == a->retry_queued) {
        size_t n = write_unexpected(oc, oc->scratch, sizeof(oc->scratch), buf, size, dest_id,
                                    ctx->id, tag);
        rc = fi_inject(oc->ofi.ep, oc->scratch, n, a->fi_addr);
        if (0 == rc) {
            na_ofi_op_done(cls, o, OPAL_SUCCESS);
        }
    }
    if (-FI_EAGAIN == rc) {
        if (OPAL_SUCCESS != staging(oc, o)) {
            rc = -FI_ENOMEM;
        } else {
            o->len = write_unexpected(oc, o->staging, NA_OFI_UHDR_MAX + oc->max_unexpected, buf,
                                      size, dest_id, ctx->id, tag);
            rc = na_ofi_start(cls, o);
        }
    }
    OPAL_THREAD_UNLOCK(&oc->lock);
    if (0 != rc) {
        op_unbegin(cls, ctx, o);
        return send_error(oc, "sending an unexpected message to", a, rc);
    }
    return OPAL_SUCCESS;
}

/* Hands a kept or arrived message to the receive o; lock held. */
static void deliver(opal_na_class_t *cls, na_ofi_op_t *o, const uint8_t *data, size_t len,
                    na_ofi_addr_t *source, opal_na_tag_t tag)
{
    size_t n = len < o->size ? len : o->size;
    if (n > 0) {
        memcpy(o->buf, data, n);
    }
    o->super.cb_info.info.recv_unexpected.actual_size = n;
    o->super.cb_info.info.recv_unexpected.tag = tag;
    bool canceled = false;
    if (!opal_na_base_op_claim(&o->super, &canceled)) {
        na_ofi_addr_release(na_ofi_class(cls), source);
        return;
    }
    if (canceled) {
        na_ofi_addr_release(na_ofi_class(cls), source);
        na_ofi_op_finish(cls, o, OPAL_ERR_CANCELED);
        return;
    }
    if (len > o->size) {
        /* The callback gets a source only with OPAL_SUCCESS (na.h). */
        na_ofi_addr_release(na_ofi_class(cls), source);
        na_ofi_op_finish(cls, o, OPAL_ERR_TRUNCATED);
        return;
    }
    o->super.cb_info.info.recv_unexpected.source = (opal_na_addr_t *) source;
    na_ofi_op_finish(cls, o, OPAL_SUCCESS);
}

int na_ofi_msg_recv_unexpected(opal_na_class_t *cls, opal_na_context_t *ctx, void *buf, size_t size,
                               void *plugin_data, opal_na_op_id_t *op)
{
    (void) plugin_data;
    na_ofi_class_t *oc = na_ofi_class(cls);
    na_ofi_context_t *c = ctx->plugin;
    na_ofi_op_t *o = (na_ofi_op_t *) op;
    op_begin(ctx, o, NULL);
    o->buf = buf;
    o->size = size;
    OPAL_THREAD_LOCK(&oc->lock);
    na_ofi_kept_t *k = c->kept_head;
    if (NULL != k) {
        c->kept_head = k->next;
        if (NULL == c->kept_head) {
            c->kept_tail = NULL;
        }
        deliver(cls, o, k->data, k->len, k->source, k->tag);
        k->rbuf->held--;
        (void) na_ofi_rbuf_repost(oc, k->rbuf);
        k->next = oc->kept_free;
        oc->kept_free = k;
    } else {
        o->next = NULL;
        o->prev = c->recv_tail;
        if (NULL == c->recv_tail) {
            c->recv_head = o;
        } else {
            c->recv_tail->next = o;
        }
        c->recv_tail = o;
        o->listed = true;
    }
    OPAL_THREAD_UNLOCK(&oc->lock);
    return OPAL_SUCCESS;
}

/* Counts a dropped unexpected message: true for the class's first (the
 * one that is reported). */
static bool first_drop(na_ofi_class_t *oc)
{
    atomic_fetch_add_explicit(&mca_na_ofi_component.messages_dropped, 1, memory_order_relaxed);
    return 0 == oc->dropped++;
}

void na_ofi_msg_arrived(opal_na_class_t *cls, na_ofi_rbuf_t *rbuf, const uint8_t *data, size_t len)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    na_ofi_uhdr_t uh;
    size_t hdr = 0;
    char why[NA_OFI_WHY_MAX];
    na_ofi_addr_t *source = NULL;
    int rc = na_ofi_uhdr_decode(data, len, &uh, &hdr, why);
    /* The sender is named when its address is one, even if the rest of
     * the header is refused. */
    char addr_why[NA_OFI_WHY_MAX];
    bool named =
        NULL != uh.addr && OPAL_SUCCESS == opal_common_ofi_addr_check(&oc->ofi, uh.addr, uh.addrlen,
                                                                      addr_why, sizeof(addr_why));
    if (OPAL_SUCCESS == rc && !named) {
        rc = OPAL_ERR_BAD_PARAM;
        snprintf(why, sizeof(why), "%s", addr_why);
    }
    if (OPAL_SUCCESS == rc) {
        rc = na_ofi_addr_get(oc, uh.addr, uh.addrlen, &source);
        if (OPAL_SUCCESS != rc) {
            snprintf(why, sizeof(why), "its sender's address was not taken: %s", opal_strerror(rc));
        }
    }
    if (OPAL_SUCCESS != rc) {
        if (first_drop(oc)) {
            char text[NA_OFI_ADDR_MAX * 2 + 8], peer[sizeof(text) + 32];
            size_t n = sizeof(text);
            snprintf(peer, sizeof(peer), "a sender it does not name");
            if (named && OPAL_SUCCESS == na_ofi_addr_format(oc, uh.addr, uh.addrlen, text, &n)) {
                snprintf(peer, sizeof(peer), "%s://%s", cls->protocol, text);
            }
            opal_output(0,
                        "na/ofi (%s): dropped an unexpected message of %zu bytes from %s: %s; "
                        "further ones are only counted",
                        oc->ofi.prov_name, len, peer, why);
        }
        return;
    }
    atomic_store_explicit(&source->talked, true, memory_order_relaxed);
    if (NA_OFI_TAG_BYE == uh.tag) {
        na_ofi_peer_closed(cls, source);
        na_ofi_addr_release(oc, source);
        return;
    }
    /* A process that said goodbye at this address opened na again. */
    source->said_bye = false;
    const uint8_t dest_id = uh.dest_id;
    const opal_na_tag_t tag = uh.tag;
    opal_na_context_t *ctx = opal_na_base_context_get(cls, dest_id);
    if (NULL == ctx || NULL == ctx->plugin) {
        opal_na_base_unknown_context(cls, dest_id);
        na_ofi_addr_release(na_ofi_class(cls), source);
        return;
    }
    na_ofi_context_t *pc = ctx->plugin;
    na_ofi_op_t *o = pc->recv_head;
    if (NULL != o) {
        pc->recv_head = o->next;
        if (NULL == pc->recv_head) {
            pc->recv_tail = NULL;
        } else {
            pc->recv_head->prev = NULL;
        }
        o->listed = false;
        deliver(cls, o, data + hdr, len - hdr, source, tag);
        return;
    }
    na_ofi_kept_t *k = oc->kept_free;
    if (NULL != k) {
        oc->kept_free = k->next;
    } else if (NULL == (k = malloc(sizeof(*k)))) {
        /* Out of memory keeping a message nobody asked for yet. */
        if (first_drop(oc)) {
            opal_output(0, "na/ofi: out of memory keeping an unexpected message: dropped");
        }
        na_ofi_addr_release(na_ofi_class(cls), source);
        return;
    }
    k->next = NULL;
    k->rbuf = rbuf;
    k->data = data + hdr;
    k->len = len - hdr;
    k->source = source;
    k->tag = tag;
    rbuf->held++;
    if (NULL == pc->kept_tail) {
        pc->kept_head = k;
    } else {
        pc->kept_tail->next = k;
    }
    pc->kept_tail = k;
}

int na_ofi_rbuf_repost(na_ofi_class_t *oc, na_ofi_rbuf_t *rb)
{
    if (rb->posted || rb->held > 0 || NULL == oc->ofi.ep) {
        return OPAL_SUCCESS;
    }
    ssize_t rc;
    if (oc->multi_recv) {
        struct iovec iov = {.iov_base = rb->mem, .iov_len = rb->size};
        void *desc = rb->mr.desc;
        struct fi_msg msg = {
            .msg_iov = &iov,
            .desc = &desc,
            .iov_count = 1,
            .addr = FI_ADDR_UNSPEC,
            .context = &rb->fictx,
        };
        rc = fi_recvmsg(oc->ofi.ep, &msg, FI_MULTI_RECV);
    } else {
        rc = fi_recv(oc->ofi.ep, rb->mem, rb->size, rb->mr.desc, FI_ADDR_UNSPEC, &rb->fictx);
    }
    if (0 != rc) {
        opal_common_ofi_error("na/ofi", &oc->ofi, "posting a receive buffer", NULL, rc);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    rb->posted = true;
    return OPAL_SUCCESS;
}

int na_ofi_msg_send_expected(opal_na_class_t *cls, opal_na_context_t *ctx, const void *buf,
                             size_t size, void *plugin_data, opal_na_addr_t *dest, uint8_t dest_id,
                             opal_na_tag_t tag, opal_na_op_id_t *op)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    na_ofi_op_t *o = (na_ofi_op_t *) op;
    na_ofi_addr_t *a = (na_ofi_addr_t *) dest;
    ssize_t rc = -FI_EAGAIN;
    op_begin(ctx, o, a);
    o->post = NA_OFI_POST_TSEND;
    o->fi_tag = expected_tag(ctx->id, dest_id, tag);
    o->sbuf = buf;
    o->len = size;
    OPAL_THREAD_LOCK(&oc->lock);
    if (size <= oc->inject_size && 0 == a->retry_queued) {
        rc = fi_tinject(oc->ofi.ep, buf, size, a->fi_addr, o->fi_tag);
        if (0 == rc) {
            na_ofi_op_done(cls, o, OPAL_SUCCESS);
        }
    }
    if (-FI_EAGAIN == rc) {
        rc = OPAL_SUCCESS == local_desc(oc, o, buf, size, plugin_data, &o->desc) ? 0 : -FI_ENOMEM;
        if (0 == rc) {
            rc = na_ofi_start(cls, o);
        }
    }
    OPAL_THREAD_UNLOCK(&oc->lock);
    if (0 != rc) {
        op_unbegin(cls, ctx, o);
        return send_error(oc, "sending an expected message to", a, rc);
    }
    return OPAL_SUCCESS;
}

int na_ofi_msg_recv_expected(opal_na_class_t *cls, opal_na_context_t *ctx, void *buf, size_t size,
                             void *plugin_data, opal_na_addr_t *source, uint8_t source_id,
                             opal_na_tag_t tag, opal_na_op_id_t *op)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    na_ofi_op_t *o = (na_ofi_op_t *) op;
    na_ofi_addr_t *a = (na_ofi_addr_t *) source;
    op_begin(ctx, o, a);
    o->post = NA_OFI_POST_TRECV;
    o->fi_tag = expected_tag(source_id, ctx->id, tag);
    o->buf = buf;
    o->size = size;
    OPAL_THREAD_LOCK(&oc->lock);
    if (atomic_load_explicit(&a->failed, memory_order_relaxed)) {
        /* Nothing will ever come from it. */
        na_ofi_op_done(cls, o, OPAL_ERR_PEER_FAILED);
        OPAL_THREAD_UNLOCK(&oc->lock);
        return OPAL_SUCCESS;
    }
    ssize_t rc =
        OPAL_SUCCESS == local_desc(oc, o, buf, size, plugin_data, &o->desc) ? 0 : -FI_ENOMEM;
    if (0 == rc) {
        /* Listed first: a completion found by a retry's progress
         * unlinks it. */
        o->prev = NULL;
        o->next = oc->exp_head;
        if (NULL != oc->exp_head) {
            oc->exp_head->prev = o;
        }
        oc->exp_head = o;
        o->listed = true;
        rc = na_ofi_start(cls, o);
        if (0 != rc) {
            if (NULL != o->prev) {
                o->prev->next = o->next;
            } else {
                oc->exp_head = o->next;
            }
            if (NULL != o->next) {
                o->next->prev = o->prev;
            }
            o->listed = false;
        }
    }
    OPAL_THREAD_UNLOCK(&oc->lock);
    if (0 != rc) {
        op_unbegin(cls, ctx, o);
        return send_error(oc, "posting an expected receive from", a, rc);
    }
    return OPAL_SUCCESS;
}

void *na_ofi_msg_buf_alloc(opal_na_class_t *cls, size_t size, void **plugin_data)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    *plugin_data = NULL;
    void *buf = malloc(0 == size ? 1 : size);
    if (NULL == buf || !opal_common_ofi_needs_local_mr(&oc->ofi)) {
        return buf;
    }
    opal_common_ofi_mr_t *mr = malloc(sizeof(*mr));
    OPAL_THREAD_LOCK(&oc->lock);
    int rc = NULL == mr ? OPAL_ERR_OUT_OF_RESOURCE
                        : opal_common_ofi_mr_register(&oc->ofi, buf, 0 == size ? 1 : size,
                                                      FI_SEND | FI_RECV, mr);
    OPAL_THREAD_UNLOCK(&oc->lock);
    if (OPAL_SUCCESS != rc) {
        free(mr);
        free(buf);
        return NULL;
    }
    *plugin_data = mr;
    return buf;
}

void na_ofi_msg_buf_free(opal_na_class_t *cls, void *buf, void *plugin_data)
{
    (void) cls;
    if (NULL != plugin_data) {
        opal_common_ofi_mr_deregister(plugin_data);
        free(plugin_data);
    }
    free(buf);
}
