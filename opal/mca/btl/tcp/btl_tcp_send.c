/*
 * btl/tcp's active messages: descriptors (alloc, prepare_src, free), send
 * and sendi, written at once when the connection is up and nothing waits
 * ahead, queued otherwise.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "opal/mca/btl/tcp/btl_tcp.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

/* A descriptor whose payload holds size bytes, its segment set to size. */
static mca_btl_tcp_frag_t *frag_get(mca_btl_tcp_module_t *module, size_t size)
{
    /* Payloads have room for a frame header more than the limits (a
     * sendi's unwritten rest, header included). */
    opal_free_list_t *list = size <= module->super.btl_eager_limit + MCA_BTL_TCP_FRAME_HDR
                                 ? &module->eager_frags
                                 : &module->max_frags;
    mca_btl_tcp_frag_t *frag = (mca_btl_tcp_frag_t *) opal_free_list_get(list);
    if (NULL == frag) {
        return NULL;
    }
    frag->list = list;
    frag->segment.seg_addr = frag->base.super.ptr;
    frag->segment.seg_len = size;
    frag->base.des_segments = &frag->segment;
    frag->base.des_segment_count = 1;
    frag->base.des_cbfunc = NULL;
    frag->base.des_cbdata = NULL;
    frag->base.des_context = NULL;
    frag->queued = false;
    frag->endpoint = NULL;
    return frag;
}

static void frag_release(mca_btl_tcp_frag_t *frag)
{
    opal_free_list_return(frag->list, &frag->base.super);
}

mca_btl_base_descriptor_t *mca_btl_tcp_alloc(mca_btl_base_module_t *btl,
                                             struct mca_btl_base_endpoint_t *endpoint,
                                             uint8_t order, size_t size, uint32_t flags)
{
    (void) endpoint;
    (void) order;
    mca_btl_tcp_module_t *module = mca_btl_tcp_module(btl);
    if (size > btl->btl_max_send_size) {
        return NULL;
    }
    mca_btl_tcp_frag_t *frag = frag_get(module, size);
    if (NULL == frag) {
        return NULL;
    }
    frag->base.des_flags = flags;
    return &frag->base;
}

int mca_btl_tcp_free(mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des)
{
    (void) btl;
    frag_release((mca_btl_tcp_frag_t *) des);
    return OPAL_SUCCESS;
}

mca_btl_base_descriptor_t *mca_btl_tcp_prepare_src(mca_btl_base_module_t *btl,
                                                   struct mca_btl_base_endpoint_t *endpoint,
                                                   const void *data, uint8_t order, size_t reserve,
                                                   size_t *size, uint32_t flags)
{
    (void) endpoint;
    (void) order;
    mca_btl_tcp_module_t *module = mca_btl_tcp_module(btl);
    if (reserve > btl->btl_max_send_size) {
        return NULL;
    }
    if (*size > btl->btl_max_send_size - reserve) {
        *size = btl->btl_max_send_size - reserve;
    }
    mca_btl_tcp_frag_t *frag = frag_get(module, reserve + *size);
    if (NULL == frag) {
        return NULL;
    }
    if (*size > 0) {
        memcpy((char *) frag->segment.seg_addr + reserve, data, *size);
    }
    frag->base.des_flags = flags;
    return &frag->base;
}

/* Writes out's pieces from the first one not yet written up to end
 * (excluded); returns the bytes written, 0 when the socket is full, or -1
 * with errno. */
static ssize_t write_pieces(int fd, mca_btl_tcp_out_t *out, int end)
{
    struct msghdr msg = {.msg_iov = out->iov + out->first,
                         .msg_iovlen = (size_t) (end - out->first)};
    ssize_t n = sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) {
        return EAGAIN == errno || EWOULDBLOCK == errno || EINTR == errno ? 0 : -1;
    }
    size_t left = (size_t) n;
    while (out->first < out->iovcnt && left >= out->iov[out->first].iov_len) {
        left -= out->iov[out->first].iov_len;
        out->iov[out->first].iov_len = 0;
        ++out->first;
    }
    if (left > 0) {
        out->iov[out->first].iov_base = (char *) out->iov[out->first].iov_base + left;
        out->iov[out->first].iov_len -= left;
    }
    return n;
}

static bool out_finished(const mca_btl_tcp_out_t *out)
{
    return out->first >= out->iovcnt;
}

/* The endpoint's pipe for splicing, made on first use (1 MiB when the
 * system allows it). */
static bool pipe_ready(mca_btl_tcp_endpoint_t *ep)
{
    if (ep->pipe[0] >= 0) {
        return true;
    }
    if (0 != pipe2(ep->pipe, O_NONBLOCK | O_CLOEXEC)) {
        ep->pipe[0] = ep->pipe[1] = -1;
        return false;
    }
    (void) fcntl(ep->pipe[1], F_SETPIPE_SZ, 1 << 20);
    return true;
}

/* Moves a data piece to the socket through the endpoint's pipe: the
 * kernel takes references to the pages (vmsplice) and hands them to TCP
 * (splice), so this process does not copy them; the peer's read is the
 * only copy. Bytes in the pipe belong to the head of the queue and go
 * out before anything else. Returns bytes given to the socket, or -1
 * with errno (nothing of the piece is in the pipe then when vmsplice
 * itself failed: *fallback says the piece may still go by sendmsg). */
static ssize_t splice_piece(mca_btl_tcp_endpoint_t *ep, struct iovec *piece, bool *fallback)
{
    ssize_t total = 0;
    *fallback = false;
    for (;;) {
        if (0 == ep->pipe_pending) {
            if (0 == piece->iov_len) {
                return total;
            }
            if (!pipe_ready(ep)) {
                *fallback = true;
                return -1;
            }
            ssize_t m = vmsplice(ep->pipe[1], piece, 1, SPLICE_F_NONBLOCK);
            if (m <= 0) {
                *fallback = true;
                return -1;
            }
            piece->iov_base = (char *) piece->iov_base + m;
            piece->iov_len -= (size_t) m;
            ep->pipe_pending = (size_t) m;
        }
        ssize_t n = splice(ep->pipe[0], NULL, ep->poll.fd, NULL, ep->pipe_pending,
                           SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n < 0) {
            return EAGAIN == errno || EWOULDBLOCK == errno || EINTR == errno ? total : -1;
        }
        ep->pipe_pending -= (size_t) n;
        total += n;
        if (ep->pipe_pending > 0) {
            return total; /* the socket is full */
        }
    }
}

/* Writes out as far as the socket takes it: returns the bytes written, 0
 * when the socket is full, or -1 with errno. A piece marked for splicing
 * (out->splice) goes through the pipe. */
static ssize_t write_out_ep(mca_btl_tcp_endpoint_t *ep, mca_btl_tcp_out_t *out)
{
    int fd = ep->poll.fd;
    if (out->splice < 0 || !mca_btl_tcp_component.splice_ok) {
        return write_pieces(fd, out, out->iovcnt);
    }
    ssize_t total = 0;
    if (out->first < out->splice) {
        ssize_t n = write_pieces(fd, out, out->splice);
        if (n <= 0 || out->first < out->splice) {
            return n;
        }
        total = n;
    }
    bool fallback = false;
    ssize_t n = splice_piece(ep, &out->iov[out->splice], &fallback);
    if (n < 0 && fallback) {
        /* Memory vmsplice cannot take: sendmsg for this and every later
         * transfer (said once). */
        if (mca_btl_tcp_component.splice_ok) {
            opal_output_verbose(10, mca_btl_base_output,
                                "btl/tcp: vmsplice failed (%s): put / get data is written instead",
                                strerror(errno));
        }
        mca_btl_tcp_component.splice_ok = false;
        out->splice = -1;
        n = write_pieces(fd, out, out->iovcnt);
        return n < 0 ? n : total + n;
    }
    if (n < 0) {
        return -1;
    }
    total += n;
    if (0 == out->iov[out->splice].iov_len && 0 == ep->pipe_pending) {
        out->iov[out->splice].iov_len = 0;
        out->first = out->splice + 1;
        if (out->first < out->iovcnt) {
            ssize_t m = write_pieces(fd, out, out->iovcnt);
            return m < 0 ? m : total + m;
        }
    }
    return total;
}

/* Writes an item that never splices (active messages, handshakes). */
static ssize_t write_out(int fd, mca_btl_tcp_out_t *out)
{
    return write_pieces(fd, out, out->iovcnt);
}

/* Advances out past left written bytes (what is left of them). */
static void consume(mca_btl_tcp_out_t *out, size_t *left)
{
    while (out->first < out->iovcnt && *left >= out->iov[out->first].iov_len) {
        *left -= out->iov[out->first].iov_len;
        out->iov[out->first].iov_len = 0;
        ++out->first;
    }
    if (*left > 0 && out->first < out->iovcnt) {
        out->iov[out->first].iov_base = (char *) out->iov[out->first].iov_base + *left;
        out->iov[out->first].iov_len -= *left;
        *left = 0;
    }
}

/* Pieces one sendmsg gathers from consecutive queued items. */
#define GATHER_MAX 64

/* Writes the queued items from the head on, up to the first one that
 * splices, with one sendmsg: many replies queued in one pass (16 RPCs in
 * flight) cost one system call instead of one each. */
static ssize_t write_gathered(mca_btl_tcp_endpoint_t *ep)
{
    struct iovec iov[GATHER_MAX];
    int n = 0;
    for (mca_btl_tcp_out_t *out = ep->sendq.head; NULL != out && n < GATHER_MAX; out = out->next) {
        if (out->splice >= 0 && mca_btl_tcp_component.splice_ok) {
            break;
        }
        for (int i = out->first; i < out->iovcnt && n < GATHER_MAX; ++i) {
            iov[n++] = out->iov[i];
        }
    }
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t) n};
    ssize_t w = sendmsg(ep->poll.fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (w < 0) {
        return EAGAIN == errno || EWOULDBLOCK == errno || EINTR == errno ? 0 : -1;
    }
    size_t left = (size_t) w;
    for (mca_btl_tcp_out_t *out = ep->sendq.head; NULL != out && left > 0; out = out->next) {
        consume(out, &left);
    }
    return w;
}

int mca_btl_tcp_flush_queue(mca_btl_tcp_endpoint_t *ep)
{
    if (MCA_BTL_TCP_EP_CONNECTED != ep->state) {
        return MCA_BTL_TCP_EP_GONE == ep->state ? OPAL_ERR_UNREACH : OPAL_SUCCESS;
    }
    mca_btl_tcp_out_t *out;
    while (NULL != (out = ep->sendq.head)) {
        bool gather = NULL != out->next && (out->splice < 0 || !mca_btl_tcp_component.splice_ok);
        ssize_t n = gather ? write_gathered(ep) : write_out_ep(ep, out);
        if (n < 0) {
            mca_btl_tcp_io_failed(ep, "writing to", errno);
            return OPAL_ERR_UNREACH;
        }
        /* Every item the write finished completes, in order. */
        while (NULL != (out = ep->sendq.head) && out_finished(out)) {
            ep->sendq.head = out->next;
            if (NULL == ep->sendq.head) {
                ep->sendq.tail = NULL;
            }
            mca_btl_tcp_out_done(ep, out);
            if (MCA_BTL_TCP_EP_CONNECTED != ep->state) {
                return OPAL_ERR_UNREACH;
            }
        }
        if (NULL != out && (0 == n || !gather)) {
            /* The socket is full. */
            mca_btl_tcp_want_out(ep, true);
            return OPAL_SUCCESS;
        }
    }
    ep->queued_bytes = 0;
    mca_btl_tcp_want_out(ep, false);
    return OPAL_SUCCESS;
}

static size_t out_bytes(const mca_btl_tcp_out_t *out)
{
    size_t n = 0;
    for (int i = out->first; i < out->iovcnt; ++i) {
        n += out->iov[i].iov_len;
    }
    return n;
}

void mca_btl_tcp_enqueue(mca_btl_tcp_endpoint_t *ep, mca_btl_tcp_out_t *out)
{
    out->next = NULL;
    out->first = 0;
    if (NULL == ep->sendq.head && MCA_BTL_TCP_EP_CONNECTED == ep->state && !ep->in_recv) {
        ssize_t n = write_out_ep(ep, out);
        if (n >= 0 && out_finished(out)) {
            mca_btl_tcp_out_done(ep, out);
            return;
        }
        if (n < 0) {
            ep->sendq.head = ep->sendq.tail = out;
            mca_btl_tcp_io_failed(ep, "writing to", errno);
            return;
        }
    }
    if (NULL == ep->sendq.tail) {
        ep->sendq.head = out;
    } else {
        ep->sendq.tail->next = out;
    }
    ep->sendq.tail = out;
    ep->queued_bytes += out_bytes(out);
    if (MCA_BTL_TCP_EP_CONNECTED == ep->state && !ep->in_recv) {
        mca_btl_tcp_want_out(ep, true);
    }
}

/* Fills out's header and pieces for an active message. */
static void am_out(mca_btl_tcp_out_t *out, mca_btl_base_tag_t tag, const void *a, size_t alen,
                   const void *b, size_t blen)
{
    mca_btl_tcp_frame_t f = {
        .len = (uint32_t) (alen + blen), .type = MCA_BTL_TCP_FRAME_AM, .tag = tag};
    mca_btl_tcp_frame_pack(&f, out->hdr);
    out->iov[0].iov_base = out->hdr;
    out->iov[0].iov_len = MCA_BTL_TCP_FRAME_HDR;
    out->iovcnt = 1;
    out->splice = -1;
    if (alen > 0) {
        out->iov[out->iovcnt].iov_base = (void *) a;
        out->iov[out->iovcnt++].iov_len = alen;
    }
    if (blen > 0) {
        out->iov[out->iovcnt].iov_base = (void *) b;
        out->iov[out->iovcnt++].iov_len = blen;
    }
}

/* Puts out, alone, at the head of ep's empty queue: the rest of a frame
 * already begun on the wire, to be written before anything else. */
static void queue_first(mca_btl_tcp_endpoint_t *ep, mca_btl_tcp_out_t *out)
{
    out->next = NULL;
    ep->sendq.head = ep->sendq.tail = out;
    ep->queued_bytes += out_bytes(out);
    mca_btl_tcp_want_out(ep, true);
}

/* Copies what is left of src (a frame a sendi wrote in part) to dst and
 * makes held a one-piece item of kind over it, never spliced. */
static void hold_rest(const mca_btl_tcp_out_t *src, uint8_t *dst, mca_btl_tcp_out_t *held,
                      mca_btl_tcp_out_kind_t kind)
{
    size_t at = 0;
    for (int i = src->first; i < src->iovcnt; ++i) {
        memcpy(dst + at, src->iov[i].iov_base, src->iov[i].iov_len);
        at += src->iov[i].iov_len;
    }
    held->kind = kind;
    held->iov[0].iov_base = dst;
    held->iov[0].iov_len = at;
    held->iovcnt = 1;
    held->first = 0;
    held->splice = -1;
}

/* Whether a send to ep must be refused now: the peer is gone (UNREACH),
 * or too much waits for it already (busy). */
static int admit(mca_btl_tcp_endpoint_t *ep)
{
    if (MCA_BTL_TCP_EP_GONE == ep->state) {
        return OPAL_ERR_UNREACH;
    }
    if (ep->queued_bytes > mca_btl_tcp_component.max_queued) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    if (MCA_BTL_TCP_EP_CLOSED == ep->state) {
        return mca_btl_tcp_endpoint_connect(ep);
    }
    return OPAL_SUCCESS;
}

int mca_btl_tcp_send(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag)
{
    mca_btl_tcp_module_t *module = mca_btl_tcp_module(btl);
    mca_btl_tcp_frag_t *frag = (mca_btl_tcp_frag_t *) des;
    OPAL_THREAD_LOCK(&module->lock);
    int rc = admit(endpoint);
    if (OPAL_SUCCESS != rc) {
        OPAL_THREAD_UNLOCK(&module->lock);
        return rc;
    }
    frag->endpoint = endpoint;
    frag->queued = true;
    am_out(&frag->out, tag, frag->segment.seg_addr, frag->segment.seg_len, NULL, 0);
    frag->out.kind = MCA_BTL_TCP_OUT_FRAG;
    /* Written at once (and completed inside) or queued. */
    bool immediate = NULL == endpoint->sendq.head && MCA_BTL_TCP_EP_CONNECTED == endpoint->state &&
                     !endpoint->in_recv;
    frag->queued = !immediate;
    if (immediate) {
        frag->out.next = NULL;
        frag->out.first = 0;
        ssize_t n = write_out(endpoint->poll.fd, &frag->out);
        if (n >= 0 && out_finished(&frag->out)) {
            /* Done now: 1, no callback (unless asked for), and the
             * descriptor goes back when the module owns it. */
            if (0 != (des->des_flags & MCA_BTL_DES_SEND_ALWAYS_CALLBACK) &&
                NULL != des->des_cbfunc) {
                des->des_cbfunc(btl, endpoint, des, OPAL_SUCCESS);
            }
            if (0 != (des->des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP)) {
                frag_release(frag);
            }
            OPAL_THREAD_UNLOCK(&module->lock);
            return 1;
        }
        frag->queued = true;
        if (n < 0) {
            frag->queued = false;
            mca_btl_tcp_io_failed(endpoint, "writing to", errno);
            OPAL_THREAD_UNLOCK(&module->lock);
            return OPAL_ERR_UNREACH;
        }
        /* Part of it went: the rest waits at the head of the queue. */
        queue_first(endpoint, &frag->out);
    } else {
        mca_btl_tcp_enqueue(endpoint, &frag->out);
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    return OPAL_SUCCESS;
}

int mca_btl_tcp_sendi(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      const void *header, size_t header_size, const void *payload,
                      size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                      mca_btl_base_descriptor_t **descriptor)
{
    (void) order;
    mca_btl_tcp_module_t *module = mca_btl_tcp_module(btl);
    size_t total = header_size + payload_size;
    if (NULL != descriptor) {
        *descriptor = NULL;
    }
    if (total > btl->btl_eager_limit) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    OPAL_THREAD_LOCK(&module->lock);
    int rc = admit(endpoint);
    if (OPAL_SUCCESS != rc) {
        OPAL_THREAD_UNLOCK(&module->lock);
        return OPAL_ERR_UNREACH == rc ? rc : OPAL_ERR_RESOURCE_BUSY;
    }
    if (NULL == endpoint->sendq.head && MCA_BTL_TCP_EP_CONNECTED == endpoint->state &&
        !endpoint->in_recv) {
        /* The common case: straight from the caller's bytes. */
        mca_btl_tcp_out_t out;
        am_out(&out, tag, header, header_size, payload, payload_size);
        out.first = 0;
        ssize_t n = write_out(endpoint->poll.fd, &out);
        if (n >= 0 && out_finished(&out)) {
            OPAL_THREAD_UNLOCK(&module->lock);
            return OPAL_SUCCESS;
        }
        if (n < 0) {
            mca_btl_tcp_io_failed(endpoint, "writing to", errno);
            OPAL_THREAD_UNLOCK(&module->lock);
            return OPAL_ERR_UNREACH;
        }
        if (n > 0) {
            /* Part of the frame is on the wire: the rest must follow
             * before anything else, so it is copied and queued now. */
            size_t rest = out_bytes(&out);
            mca_btl_tcp_frag_t *frag = frag_get(module, rest);
            if (NULL != frag) {
                hold_rest(&out, frag->base.super.ptr, &frag->out, MCA_BTL_TCP_OUT_FRAG);
                frag->base.des_flags = MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
                frag->endpoint = endpoint;
                frag->queued = true;
                queue_first(endpoint, &frag->out);
                OPAL_THREAD_UNLOCK(&module->lock);
                return OPAL_SUCCESS;
            }
            /* Every descriptor is taken (btl_tcp_free_list_max): the rest
             * goes to memory of its own, freed when written. Waiting here
             * for the socket to take it would never end if the peer did
             * the same. */
            mca_btl_tcp_out_t *held = malloc(sizeof(*held) + rest);
            if (NULL == held) {
                /* Part of the frame is on the wire and the rest has
                 * nowhere to go: the connection cannot continue. */
                char why[96];
                snprintf(why, sizeof(why), "no memory for the %zu bytes left of a message", rest);
                mca_btl_tcp_peer_failed(endpoint, why);
                OPAL_THREAD_UNLOCK(&module->lock);
                return OPAL_ERR_UNREACH;
            }
            hold_rest(&out, (uint8_t *) (held + 1), held, MCA_BTL_TCP_OUT_HEAP);
            queue_first(endpoint, held);
            OPAL_THREAD_UNLOCK(&module->lock);
            return OPAL_SUCCESS;
        }
    }
    /* Behind others, or no connection yet: copied into a descriptor and
     * queued (the caller's bytes are free when this returns). */
    mca_btl_tcp_frag_t *frag = frag_get(module, total);
    if (NULL == frag) {
        OPAL_THREAD_UNLOCK(&module->lock);
        return OPAL_ERR_RESOURCE_BUSY;
    }
    if (header_size > 0) {
        memcpy(frag->segment.seg_addr, header, header_size);
    }
    if (payload_size > 0) {
        memcpy((char *) frag->segment.seg_addr + header_size, payload, payload_size);
    }
    frag->base.des_flags = flags | MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
    frag->base.des_flags &= ~(uint32_t) MCA_BTL_DES_SEND_ALWAYS_CALLBACK;
    frag->endpoint = endpoint;
    frag->queued = true;
    am_out(&frag->out, tag, frag->segment.seg_addr, total, NULL, 0);
    frag->out.kind = MCA_BTL_TCP_OUT_FRAG;
    mca_btl_tcp_enqueue(endpoint, &frag->out);
    OPAL_THREAD_UNLOCK(&module->lock);
    return OPAL_SUCCESS;
}

void mca_btl_tcp_out_done(mca_btl_tcp_endpoint_t *ep, mca_btl_tcp_out_t *out)
{
    mca_btl_tcp_module_t *module = ep->module;
    switch (out->kind) {
        case MCA_BTL_TCP_OUT_FRAG: {
            mca_btl_tcp_frag_t *frag = MCA_BTL_TCP_CONTAINER(out, mca_btl_tcp_frag_t, out);
            frag->queued = false;
            if (NULL != frag->base.des_cbfunc) {
                frag->base.des_cbfunc(&module->super, ep, &frag->base, OPAL_SUCCESS);
            }
            if (0 != (frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP)) {
                frag_release(frag);
            }
            break;
        }
        case MCA_BTL_TCP_OUT_RDMA:
            /* The request is out; the operation completes on its reply. */
            break;
        case MCA_BTL_TCP_OUT_REPLY:
        case MCA_BTL_TCP_OUT_CTRL: {
            mca_btl_tcp_reply_t *reply = MCA_BTL_TCP_CONTAINER(out, mca_btl_tcp_reply_t, out);
            opal_free_list_return(&module->replies, &reply->super);
            break;
        }
        case MCA_BTL_TCP_OUT_HEAP:
            free(out);
            break;
    }
}

void mca_btl_tcp_out_abandon(mca_btl_tcp_endpoint_t *ep, mca_btl_tcp_out_t *out, int status)
{
    mca_btl_tcp_module_t *module = ep->module;
    switch (out->kind) {
        case MCA_BTL_TCP_OUT_FRAG: {
            mca_btl_tcp_frag_t *frag = MCA_BTL_TCP_CONTAINER(out, mca_btl_tcp_frag_t, out);
            frag->queued = false;
            if (NULL != frag->base.des_cbfunc) {
                frag->base.des_cbfunc(&module->super, ep, &frag->base, status);
            }
            if (0 != (frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP)) {
                frag_release(frag);
            }
            break;
        }
        case MCA_BTL_TCP_OUT_RDMA:
            /* On the waiting list too: completed from there. */
            break;
        case MCA_BTL_TCP_OUT_REPLY:
        case MCA_BTL_TCP_OUT_CTRL: {
            mca_btl_tcp_reply_t *reply = MCA_BTL_TCP_CONTAINER(out, mca_btl_tcp_reply_t, out);
            opal_free_list_return(&module->replies, &reply->super);
            break;
        }
        case MCA_BTL_TCP_OUT_HEAP:
            free(out);
            break;
    }
}
