/*
 * Progress and completion: reading the endpoint's CQ, finishing the
 * operations it names (exactly once, through the base's claim), failing
 * what waits on a peer found dead, and cancel.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/na/ofi/na_ofi.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

int na_ofi_fi_error(int fi_err)
{
    switch (fi_err) {
        case 0:
            return OPAL_SUCCESS;
        case FI_ECANCELED:
            return OPAL_ERR_CANCELED;
        case FI_ETRUNC:
        case FI_ETOOSMALL:
        case FI_EMSGSIZE:
            return OPAL_ERR_TRUNCATED;
        case FI_ENOMEM:
            return OPAL_ERR_OUT_OF_RESOURCE;
        case FI_EINVAL:
            return OPAL_ERR_BAD_PARAM;
        case FI_EAGAIN:
            return OPAL_ERR_TEMP_OUT_OF_RESOURCE;
        case FI_ECONNREFUSED:
        case FI_ECONNRESET:
        case FI_ECONNABORTED:
        case FI_ENOTCONN:
        case FI_EHOSTUNREACH:
        case FI_ENETUNREACH:
        case FI_ENETDOWN:
        case FI_ETIMEDOUT:
        case FI_EIO:
        case FI_ESHUTDOWN:
        case FI_EADDRNOTAVAIL:
            /* The peer is gone or cannot be reached. */
            return OPAL_ERR_PEER_FAILED;
        default:
            return OPAL_ERROR;
    }
}

void na_ofi_op_finish(opal_na_class_t *cls, na_ofi_op_t *o, int ret)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    if (o->listed) {
        /* A posted expected receive (unexpected ones are unlinked by
         * whoever takes them off their context's list). */
        if (OPAL_NA_CB_RECV_EXPECTED == o->super.cb_info.type) {
            if (NULL != o->prev) {
                o->prev->next = o->next;
            } else {
                oc->exp_head = o->next;
            }
            if (NULL != o->next) {
                o->next->prev = o->prev;
            }
        }
        o->listed = false;
    }
    opal_common_ofi_mr_deregister(&o->tmp_mr);
    if (NULL != o->addr) {
        na_ofi_addr_release(oc, o->addr);
        o->addr = NULL;
    }
    opal_na_context_t *ctx = o->super.context;
    atomic_fetch_sub_explicit(&((na_ofi_context_t *) ctx->plugin)->pending, 1,
                              memory_order_relaxed);
    opal_na_base_op_complete(&o->super, ret);
}

void na_ofi_op_done(opal_na_class_t *cls, na_ofi_op_t *o, int ret)
{
    bool canceled = false;
    if (opal_na_base_op_claim(&o->super, &canceled)) {
        na_ofi_op_finish(cls, o, canceled ? OPAL_ERR_CANCELED : ret);
    }
}

/* Withdraws peer's posted expected receives from the provider; each
 * completes (as canceled by the provider) with the peer's failure, read
 * from rma_error. */
static void withdraw_receives(na_ofi_class_t *oc, na_ofi_addr_t *peer)
{
    for (na_ofi_op_t *o = oc->exp_head; NULL != o; o = o->next) {
        if (o->addr == peer && OPAL_SUCCESS == o->rma_error) {
            o->rma_error = OPAL_ERR_PEER_FAILED;
            (void) fi_cancel(&oc->ofi.ep->fid, &o->fictx);
        }
    }
}

void na_ofi_peer_failed(opal_na_class_t *cls, na_ofi_addr_t *peer, const char *why)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    if (NULL == peer || peer->self) {
        return;
    }
    if (!atomic_exchange_explicit(&peer->failed, true, memory_order_relaxed)) {
        char text[NA_OFI_ADDR_TEXT_MAX];
        opal_output_verbose(1, opal_na_base_output,
                            "na/ofi (%s): peer %s failed (%s): its pending receives fail too",
                            oc->ofi.prov_name, na_ofi_addr_name(oc, peer, text), why);
        oc->ofi.peer_lost = true;
    }
    withdraw_receives(oc, peer);
}

void na_ofi_peer_closed(opal_na_class_t *cls, na_ofi_addr_t *peer)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    if (peer->self) {
        return;
    }
    withdraw_receives(oc, peer);
    peer->said_bye = true;
    if (!peer->gone_listed) {
        peer->gone_listed = true;
        na_ofi_addr_ref(peer);
        peer->gone_next = oc->gone_head;
        oc->gone_head = peer;
    }
}

/* Tells the peer-gone hook of every peer that said goodbye (without the
 * class lock: the hook may start or cancel operations). */
static void gone_notify(opal_na_class_t *cls)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    for (;;) {
        OPAL_THREAD_LOCK(&oc->lock);
        na_ofi_addr_t *a = oc->gone_head;
        if (NULL != a) {
            oc->gone_head = a->gone_next;
            a->gone_listed = false;
        }
        OPAL_THREAD_UNLOCK(&oc->lock);
        if (NULL == a) {
            return;
        }
        char text[NA_OFI_ADDR_TEXT_MAX], why[NA_OFI_ADDR_TEXT_MAX + 64];
        snprintf(why, sizeof(why), "na/ofi (%s): %s finalized", oc->ofi.prov_name,
                 na_ofi_addr_name(oc, a, text));
        opal_output_verbose(10, opal_na_base_output, "%s", why);
        opal_na_base_peer_gone(cls, (opal_na_addr_t *) a, true, why);
        OPAL_THREAD_LOCK(&oc->lock);
        na_ofi_addr_release(oc, a);
        OPAL_THREAD_UNLOCK(&oc->lock);
    }
}

void na_ofi_gone_drop(na_ofi_class_t *oc)
{
    while (NULL != oc->gone_head) {
        na_ofi_addr_t *a = oc->gone_head;
        oc->gone_head = a->gone_next;
        a->gone_listed = false;
        na_ofi_addr_release(oc, a);
    }
}

static void handle_rbuf(opal_na_class_t *cls, na_ofi_rbuf_t *rb, const struct fi_cq_tagged_entry *e)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    if (e->len > 0) {
        const uint8_t *data = oc->multi_recv ? (const uint8_t *) e->buf : rb->mem;
        na_ofi_msg_arrived(cls, rb, data, e->len);
    }
    if (!oc->multi_recv || 0 != (e->flags & FI_MULTI_RECV)) {
        rb->posted = false;
        (void) na_ofi_rbuf_repost(oc, rb);
    }
}

static void handle_entry(opal_na_class_t *cls, const struct fi_cq_tagged_entry *e)
{
    na_ofi_fictx_t *fc = e->op_context;
    if (NULL == fc) {
        return;
    }
    switch (fc->kind) {
        case NA_OFI_FICTX_RBUF:
            handle_rbuf(cls, fc->owner, e);
            break;
        case NA_OFI_FICTX_BYE:
            /* Only finalize posts goodbyes, and reads their completions. */
            break;
        case NA_OFI_FICTX_PIECE: {
            na_ofi_op_t *o = fc->owner;
            fc->owner = NULL;
            na_ofi_rma_piece_done(cls, o, 0);
            break;
        }
        default: {
            na_ofi_op_t *o = fc->owner;
            if (OPAL_NA_CB_RECV_EXPECTED == o->super.cb_info.type) {
                o->super.cb_info.info.recv_expected.actual_size = e->len;
            }
            /* Matched before a withdrawal for its peer's failure took. */
            na_ofi_op_done(cls, o, OPAL_SUCCESS);
            break;
        }
    }
}

static void handle_error(opal_na_class_t *cls)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    struct fi_cq_err_entry err;
    char text[256];
    if (OPAL_SUCCESS != opal_common_ofi_cq_readerr(&oc->ofi, &err, text, sizeof(text)) ||
        NULL == err.op_context) {
        return;
    }
    na_ofi_fictx_t *fc = err.op_context;
    /* shm (libfabric 1.17) reports some errors negated (-FI_ETRUNC). */
    if (err.err < 0) {
        err.err = -err.err;
    }
    int ret = na_ofi_fi_error(err.err);
    switch (fc->kind) {
        case NA_OFI_FICTX_BYE:
            break;
        case NA_OFI_FICTX_RBUF: {
            na_ofi_rbuf_t *rb = fc->owner;
            rb->posted = false;
            if (FI_ECANCELED != err.err) {
                opal_output_verbose(1, opal_na_base_output,
                                    "na/ofi (%s): a receive buffer completed with an error: %s",
                                    oc->ofi.prov_name, text);
                (void) na_ofi_rbuf_repost(oc, rb);
            }
            break;
        }
        case NA_OFI_FICTX_PIECE: {
            na_ofi_op_t *o = fc->owner;
            fc->owner = NULL;
            if (OPAL_ERR_PEER_FAILED == ret) {
                na_ofi_peer_failed(cls, o->addr, text);
            }
            na_ofi_rma_piece_done(cls, o, 0 == err.err ? FI_EIO : err.err);
            break;
        }
        default: {
            na_ofi_op_t *o = fc->owner;
            if (OPAL_NA_CB_RECV_EXPECTED == o->super.cb_info.type) {
                /* A message that overflowed the receive (shm reports it
                 * with another code than FI_ETRUNC) is truncated. */
                if (err.olen > 0 && OPAL_ERR_CANCELED != ret) {
                    ret = OPAL_ERR_TRUNCATED;
                }
                o->super.cb_info.info.recv_expected.actual_size =
                    OPAL_ERR_TRUNCATED == ret ? o->size : err.len;
            }
            opal_output_verbose(10, opal_na_base_output,
                                "na/ofi (%s): an operation completed with error %d (olen %zu): %s",
                                oc->ofi.prov_name, err.err, err.olen, text);
            if (OPAL_ERR_CANCELED == ret && OPAL_SUCCESS != o->rma_error) {
                /* Withdrawn because its peer failed. */
                ret = o->rma_error;
            } else if (OPAL_ERR_PEER_FAILED == ret) {
                opal_output_verbose(1, opal_na_base_output, "na/ofi (%s): an operation failed: %s",
                                    oc->ofi.prov_name, text);
                na_ofi_peer_failed(cls, o->addr, text);
            }
            na_ofi_op_done(cls, o, ret);
            break;
        }
    }
}

int na_ofi_progress(opal_na_class_t *cls, unsigned int *count)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    struct fi_cq_tagged_entry entries[16];
    unsigned int done = 0;
    for (int rounds = 0; rounds < 64; ++rounds) {
        ssize_t n = fi_cq_read(oc->ofi.cq, entries, 16);
        if (-FI_EAGAIN == n) {
            break;
        }
        if (-FI_EAVAIL == n) {
            handle_error(cls);
            ++done;
            continue;
        }
        if (n < 0) {
            opal_common_ofi_error("na/ofi", &oc->ofi, "fi_cq_read", NULL, n);
            return OPAL_ERROR;
        }
        for (ssize_t i = 0; i < n; ++i) {
            handle_entry(cls, &entries[i]);
        }
        done += (unsigned int) n;
        if (n < 16) {
            break;
        }
    }
    na_ofi_retry_drain(cls);
    if (NULL != count) {
        *count += done;
    }
    return OPAL_SUCCESS;
}

int na_ofi_poll(opal_na_class_t *cls, opal_na_context_t *ctx, unsigned int *count)
{
    (void) ctx;
    na_ofi_class_t *oc = na_ofi_class(cls);
    *count = 0;
    OPAL_THREAD_LOCK(&oc->lock);
    int rc = na_ofi_progress(cls, count);
    bool gone = NULL != oc->gone_head;
    OPAL_THREAD_UNLOCK(&oc->lock);
    if (OPAL_UNLIKELY(gone)) {
        gone_notify(cls);
    }
    return rc;
}

int na_ofi_poll_get_fd(opal_na_class_t *cls, opal_na_context_t *ctx)
{
    (void) ctx;
    return na_ofi_class(cls)->ofi.cq_fd;
}

bool na_ofi_poll_try_wait(opal_na_class_t *cls, opal_na_context_t *ctx)
{
    (void) ctx;
    na_ofi_class_t *oc = na_ofi_class(cls);
    if (oc->ofi.cq_fd < 0) {
        return false;
    }
    OPAL_THREAD_LOCK(&oc->lock);
    bool ok = OPAL_SUCCESS == opal_common_ofi_cq_trywait(&oc->ofi);
    OPAL_THREAD_UNLOCK(&oc->lock);
    return ok;
}

int na_ofi_cancel(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_op_id_t *op)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    na_ofi_op_t *o = (na_ofi_op_t *) op;
    (void) ctx;
    OPAL_THREAD_LOCK(&oc->lock);
    if (!opal_na_base_op_cancel_mark(op)) {
        OPAL_THREAD_UNLOCK(&oc->lock);
        return OPAL_SUCCESS;
    }
    switch (op->cb_info.type) {
        case OPAL_NA_CB_RECV_UNEXPECTED:
            if (o->listed) {
                na_ofi_context_t *c = op->context->plugin;
                if (NULL != o->prev) {
                    o->prev->next = o->next;
                } else {
                    c->recv_head = o->next;
                }
                if (NULL != o->next) {
                    o->next->prev = o->prev;
                } else {
                    c->recv_tail = o->prev;
                }
                o->listed = false;
                na_ofi_op_done(cls, o, OPAL_ERR_CANCELED);
            }
            break;
        case OPAL_NA_CB_RECV_EXPECTED:
            /* The provider completes it (canceled, or matched already). */
            (void) fi_cancel(&oc->ofi.ep->fid, &o->fictx);
            break;
        default:
            /* Sends and RMA cannot be withdrawn: they complete as canceled
             * once the provider lets go of their buffers. */
            break;
    }
    OPAL_THREAD_UNLOCK(&oc->lock);
    return OPAL_SUCCESS;
}
