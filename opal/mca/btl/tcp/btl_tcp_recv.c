/*
 * btl/tcp's receive side and progress: bytes from a connection into the
 * endpoint's buffer, frames checked and handled (active messages
 * dispatched in place, put / get requests served, replies matched), the
 * data of puts and gets straight into its destination; and one progress
 * pass over the epoll set.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "opal/mca/btl/tcp/btl_tcp.h"
#include "opal/util/opal_error.h"

static void protocol_error(mca_btl_tcp_endpoint_t *ep, const char *why)
{
    char what[256];
    snprintf(what, sizeof(what), "it sent a malformed frame: %s", why);
    mca_btl_tcp_peer_failed(ep, what);
}

/* The end of a put's or get's data. */
static void data_done(mca_btl_tcp_endpoint_t *ep)
{
    ep->rstate = MCA_BTL_TCP_RECV_HDR;
    if (ep->rdest_is_get) {
        mca_btl_tcp_rdma_op_t *op = ep->rop;
        ep->rop = NULL;
        mca_btl_tcp_rdma_complete(ep, op, MCA_BTL_TCP_STATUS_OK);
    } else {
        (void) mca_btl_tcp_ack_put(ep, ep->rput_id, ep->rput_status);
    }
}

/* Handles the complete frames in the buffer, until one is incomplete or
 * a put's or get's data begins. Returns the frames handled. */
static int handle_frames(mca_btl_tcp_endpoint_t *ep)
{
    mca_btl_tcp_module_t *module = ep->module;
    size_t max_rdma = module->super.btl_put_limit > module->super.btl_get_limit
                          ? module->super.btl_put_limit
                          : module->super.btl_get_limit;
    int events = 0;
    char why[192];
    while (MCA_BTL_TCP_EP_CONNECTED == ep->state && MCA_BTL_TCP_RECV_HDR == ep->rstate &&
           ep->rtail - ep->rhead >= MCA_BTL_TCP_FRAME_HDR) {
        const uint8_t *p = ep->rbuf + ep->rhead;
        size_t avail = ep->rtail - ep->rhead;
        mca_btl_tcp_frame_t f;
        mca_btl_tcp_frame_unpack(p, &f);
        if (OPAL_SUCCESS != mca_btl_tcp_frame_check(&f, module->super.btl_max_send_size, max_rdma,
                                                    why, sizeof(why))) {
            protocol_error(ep, why);
            return events;
        }
        switch (f.type) {
            case MCA_BTL_TCP_FRAME_AM: {
                if (avail < MCA_BTL_TCP_FRAME_HDR + (size_t) f.len) {
                    return events;
                }
                mca_btl_base_segment_t seg = {.seg_addr = (void *) (p + MCA_BTL_TCP_FRAME_HDR),
                                              .seg_len = f.len};
                mca_btl_base_receive_descriptor_t desc = {
                    .endpoint = ep,
                    .proc = ep->proc,
                    .des_segments = &seg,
                    .des_segment_count = 1,
                    .tag = f.tag,
                };
                ep->rhead += MCA_BTL_TCP_FRAME_HDR + f.len;
                mca_btl_base_am_dispatch(&module->super, &desc);
                ++events;
                break;
            }
            case MCA_BTL_TCP_FRAME_PUT:
            case MCA_BTL_TCP_FRAME_GET: {
                if (avail < MCA_BTL_TCP_FRAME_HDR + MCA_BTL_TCP_RDMA_TARGET) {
                    return events;
                }
                mca_btl_tcp_target_t t;
                mca_btl_tcp_target_unpack(p + MCA_BTL_TCP_FRAME_HDR, &t);
                /* Each direction against its own limit. */
                size_t limit = MCA_BTL_TCP_FRAME_GET == f.type ? module->super.btl_get_limit
                                                               : module->super.btl_put_limit;
                if (OPAL_SUCCESS != mca_btl_tcp_target_check(&f, &t, limit, why, sizeof(why))) {
                    protocol_error(ep, why);
                    return events;
                }
                ep->rhead += MCA_BTL_TCP_FRAME_HDR + MCA_BTL_TCP_RDMA_TARGET;
                ++events;
                if (MCA_BTL_TCP_FRAME_GET == f.type) {
                    (void) mca_btl_tcp_serve_get(ep, f.id, &t);
                    break;
                }
                ep->rput_id = f.id;
                ep->rput_status = (uint16_t) mca_btl_tcp_accept_put(ep, &t);
                ep->rdest_is_get = false;
                ep->rleft = (size_t) t.length;
                if (MCA_BTL_TCP_STATUS_OK == ep->rput_status) {
                    ep->rstate = MCA_BTL_TCP_RECV_DATA;
                    ep->rdest = (uint8_t *) (uintptr_t) t.address;
                } else {
                    ep->rstate = MCA_BTL_TCP_RECV_SINK;
                    ep->rdest = NULL;
                }
                if (0 == ep->rleft) {
                    data_done(ep);
                }
                break;
            }
            case MCA_BTL_TCP_FRAME_PUT_ACK:
            case MCA_BTL_TCP_FRAME_GET_DATA: {
                mca_btl_tcp_rdma_op_t *op = mca_btl_tcp_reply_match(ep, &f, why, sizeof(why));
                if (NULL == op) {
                    protocol_error(ep, why);
                    return events;
                }
                ep->rhead += MCA_BTL_TCP_FRAME_HDR;
                ++events;
                if (MCA_BTL_TCP_FRAME_PUT_ACK == f.type || MCA_BTL_TCP_STATUS_OK != f.status) {
                    mca_btl_tcp_rdma_complete(ep, op, f.status);
                    break;
                }
                ep->rdest_is_get = true;
                ep->rop = op;
                ep->rdest = op->local_address;
                ep->rleft = f.len;
                ep->rstate = MCA_BTL_TCP_RECV_DATA;
                if (0 == ep->rleft) {
                    data_done(ep);
                }
                break;
            }
            case MCA_BTL_TCP_FRAME_BYE:
                ep->rhead += MCA_BTL_TCP_FRAME_HDR;
                ep->said_bye = true;
                ++events;
                break;
        }
    }
    return events;
}

/* Reads into the buffer's free end (moving what is unread to the front
 * first when the rest of a frame would not fit). Returns bytes read, 0
 * when there is nothing now, -1 after the peer was found gone; *drained
 * when the socket has nothing more. */
static ssize_t fill(mca_btl_tcp_endpoint_t *ep, bool *drained)
{
    *drained = false;
    if (ep->rhead == ep->rtail) {
        ep->rhead = ep->rtail = 0;
    } else if (ep->rbuf_size - ep->rtail < ep->rbuf_size / 4 || ep->rtail == ep->rbuf_size) {
        memmove(ep->rbuf, ep->rbuf + ep->rhead, ep->rtail - ep->rhead);
        ep->rtail -= ep->rhead;
        ep->rhead = 0;
    }
    size_t room = ep->rbuf_size - ep->rtail;
    if (0 == ep->rtail && !opal_list_is_empty(&ep->waiting) &&
        ((mca_btl_tcp_rdma_op_t *) opal_list_get_first(&ep->waiting))->is_get) {
        /* A get's data is due: its header alone, so that the data after it
         * goes from the socket straight into place instead of through
         * the buffer (a 16-byte read costs less than copying 64 KiB). */
        room = MCA_BTL_TCP_FRAME_HDR;
    }
    ssize_t n = recv(ep->poll.fd, ep->rbuf + ep->rtail, room, MSG_DONTWAIT);
    if (n > 0) {
        ep->rtail += (size_t) n;
        /* Less than it had room for: the socket is empty now, and asking
         * again would only cost a system call that finds nothing. */
        *drained = (size_t) n < room;
        return n;
    }
    if (n < 0 && (EAGAIN == errno || EWOULDBLOCK == errno || EINTR == errno)) {
        return 0;
    }
    if (0 == n) {
        mca_btl_tcp_peer_failed(ep, "its connection ended");
    } else {
        mca_btl_tcp_io_failed(ep, "reading from", errno);
    }
    return -1;
}

/* Moves the buffered part of a put's or get's data into its destination
 * (or discards it); completes the transfer when that was the rest. */
static void take_buffered(mca_btl_tcp_endpoint_t *ep)
{
    size_t avail = ep->rtail - ep->rhead;
    size_t take = avail < ep->rleft ? avail : ep->rleft;
    if (MCA_BTL_TCP_RECV_DATA == ep->rstate) {
        memcpy(ep->rdest, ep->rbuf + ep->rhead, take);
        ep->rdest += take;
    }
    ep->rhead += take;
    ep->rleft -= take;
    if (0 == ep->rleft) {
        data_done(ep);
    }
}

/* Reads the rest of a put's or get's data from the socket straight into
 * its destination (or discards it); the buffer is empty. Returns bytes
 * read, 0 when there is nothing now, -1 after the peer was found gone;
 * *drained when the socket has nothing more. */
static ssize_t read_data(mca_btl_tcp_endpoint_t *ep, bool *drained)
{
    size_t want;
    ssize_t n;
    if (MCA_BTL_TCP_RECV_DATA == ep->rstate) {
        want = ep->rleft;
        n = recv(ep->poll.fd, ep->rdest, want, MSG_DONTWAIT);
    } else {
        ep->rhead = ep->rtail = 0;
        want = ep->rleft < ep->rbuf_size ? ep->rleft : ep->rbuf_size;
        n = recv(ep->poll.fd, ep->rbuf, want, MSG_DONTWAIT);
    }
    if (n < 0 && (EAGAIN == errno || EWOULDBLOCK == errno || EINTR == errno)) {
        *drained = true;
        return 0;
    }
    if (n <= 0) {
        if (0 == n) {
            mca_btl_tcp_peer_failed(ep, "its connection ended in the middle of a transfer");
        } else {
            mca_btl_tcp_io_failed(ep, "reading from", errno);
        }
        return -1;
    }
    *drained = (size_t) n < want;
    if (MCA_BTL_TCP_RECV_DATA == ep->rstate) {
        ep->rdest += n;
    }
    ep->rleft -= (size_t) n;
    if (0 == ep->rleft) {
        data_done(ep);
    }
    return n;
}

int mca_btl_tcp_recv(mca_btl_tcp_endpoint_t *ep)
{
    if (ep->in_recv) {
        return 0;
    }
    ep->in_recv = true;
    int events = 0;
    size_t budget = mca_btl_tcp_component.recv_budget;
    /* What is buffered is always handled, the bytes of the read that
     * spent the budget included: the socket may hold nothing more, and
     * then nothing would call this pass again for them. The socket is
     * read only while it may have more (a read that filled less than it
     * asked for found it empty) and the budget lasts; what it still
     * holds keeps it readable for the next pass. drained: no more
     * reads in this pass. */
    bool drained = false;
    while (MCA_BTL_TCP_EP_CONNECTED == ep->state) {
        ssize_t n;
        if (MCA_BTL_TCP_RECV_HDR != ep->rstate) {
            if (ep->rtail > ep->rhead) {
                take_buffered(ep);
                continue;
            }
            if (drained) {
                break;
            }
            n = read_data(ep, &drained);
        } else {
            events += handle_frames(ep);
            if (MCA_BTL_TCP_RECV_HDR != ep->rstate || MCA_BTL_TCP_EP_CONNECTED != ep->state) {
                continue;
            }
            if (drained) {
                break;
            }
            n = fill(ep, &drained);
        }
        if (n < 0) {
            break;
        }
        if (0 == n || (size_t) n >= budget) {
            drained = true;
        } else {
            budget -= (size_t) n;
        }
    }
    ep->in_recv = false;
    if (MCA_BTL_TCP_EP_GONE == ep->state) {
        mca_btl_tcp_release_rbuf(ep);
        return events;
    }
    /* What the frames' callbacks sent meanwhile was held back (corked) to
     * go out now in one write. */
    if (NULL != ep->sendq.head && MCA_BTL_TCP_EP_CONNECTED == ep->state) {
        (void) mca_btl_tcp_flush_queue(ep);
    }
    return events;
}

/* ------------------------------------------------------------ progress */

/* Passes between checks of connection and handshake deadlines (and of
 * the watched peers, when due). */
#define TIMEOUT_CHECK_INTERVAL 1024

/* Counts a progress call; every TIMEOUT_CHECK_INTERVAL of them checks the
 * timers (mca_btl_tcp_timers). */
static void count_call(mca_btl_tcp_module_t *module)
{
    if (++module->progress_calls >= TIMEOUT_CHECK_INTERVAL) {
        module->progress_calls = 0;
        mca_btl_tcp_timers(module);
    }
}

/* The connected endpoint when there is exactly one, found after it was
 * forgotten (another connection came and went). */
static mca_btl_tcp_endpoint_t *find_sole(mca_btl_tcp_module_t *module)
{
    for (mca_btl_tcp_endpoint_t *ep = module->ep_list; NULL != ep; ep = ep->next_ep) {
        if (MCA_BTL_TCP_EP_CONNECTED == ep->state) {
            return ep;
        }
    }
    return NULL;
}

int mca_btl_tcp_module_progress(mca_btl_tcp_module_t *module)
{
    OPAL_THREAD_LOCK(&module->lock);
    mca_btl_tcp_endpoint_t *ep = module->sole;
    /* With one connection, epoll would only say that its socket is
     * readable, one system call more per message. What only epoll sees
     * (a new connection, the timer, room in a full socket: sends are
     * queued) is asked for every epoll_interval calls. */
    if (NULL != ep && NULL == ep->sendq.head &&
        ++module->direct_calls < mca_btl_tcp_component.epoll_interval) {
        int events = mca_btl_tcp_recv(ep);
        count_call(module);
        OPAL_THREAD_UNLOCK(&module->lock);
        return events;
    }
    int events = mca_btl_tcp_module_poll(module);
    OPAL_THREAD_UNLOCK(&module->lock);
    return events;
}

int mca_btl_tcp_module_poll(mca_btl_tcp_module_t *module)
{
    struct epoll_event evs[16];
    OPAL_THREAD_LOCK(&module->lock);
    module->direct_calls = 0;
    int events = 0;
    int n = epoll_wait(module->epfd, evs, (int) (sizeof(evs) / sizeof(evs[0])), 0);
    for (int i = 0; i < n; ++i) {
        mca_btl_tcp_pollable_t *p = evs[i].data.ptr;
        switch (p->kind) {
            case MCA_BTL_TCP_POLL_LISTEN:
                events += mca_btl_tcp_accept(module);
                break;
            case MCA_BTL_TCP_POLL_INCOMING:
                events += mca_btl_tcp_incoming_ready(module, p);
                break;
            case MCA_BTL_TCP_POLL_ENDPOINT:
                events += mca_btl_tcp_endpoint_ready((mca_btl_tcp_endpoint_t *) (void *) p,
                                                     evs[i].events);
                break;
            case MCA_BTL_TCP_POLL_TIMER: {
                uint64_t expirations;
                if (read(p->fd, &expirations, sizeof(expirations)) > 0) {
                    /* Fired: it is disarmed until the check arms it again. */
                    module->timer_due_ns = 0;
                    module->progress_calls = 0;
                    mca_btl_tcp_timers(module);
                    ++events;
                }
                break;
            }
        }
    }
    count_call(module);
    if (1 == module->connected_count && NULL == module->sole) {
        module->sole = find_sole(module);
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    return events;
}
