/*
 * opal_perf's protocol over the btl.
 *
 * A message of the current size travels one of three ways, chosen by the
 * sender from its modules for the peer:
 *   eager  size <= the send module's eager limit: one active message
 *          (sendi; when that is busy, the descriptor it offers or
 *          alloc + send). The receiver copies the payload into rbuf.
 *   rndv   larger, when both sides have a module with GET for each other
 *          (the same component, checked at start-up) and the size is at
 *          least its btl_min_rdma_pipeline_size: the sender sends a
 *          request holding the address of sbuf, the size and its
 *          registration handle; the receiver gets the data into rbuf in
 *          pieces of at most get_piece bytes, then sends a FIN. The
 *          sender's message is complete at the FIN.
 *   frag   otherwise: fragments of at most max_send_size bytes
 *          (prepare_src + send), copied into rbuf in order (a module
 *          delivers a peer's messages in order, so fragments need no
 *          header).
 * Buffers are registered once, for the whole run.
 *
 * The active-message callbacks only copy what outlives them (payloads,
 * requests) and bump counters; the wait loops do the rest: serving
 * requests (gets, FINs) happens in perf_wait, never inside a callback, so
 * nothing nests when a module calls back from inside a send (btl/self).
 *
 * Everything a message from the peer says is checked against what this
 * side expects (size, handle length) before use.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/base/base.h"
#include "opal/runtime/opal_proc.h"
#include "tools/opal_perf/opal_perf.h"
#include "opal/util/opal_error.h"

/* Tags from the users' range, one per kind of message, so that a
 * callback knows what it got without a header. */
enum {
    TAG_DATA = MCA_BTL_TAG_USER_MIN, /* an eager message */
    TAG_FRAG,                        /* a fragment */
    TAG_RNDV,                        /* a rendezvous request */
    TAG_FIN,                         /* a rendezvous is complete */
    TAG_ACK,                         /* bw / rate: the window arrived */
    TAG_SYNC,                        /* barrier, start-up check */
    TAG_END,
};

typedef struct rndv_hdr_t {
    uint64_t addr;
    uint64_t size;
    uint32_t handle_size;
    uint32_t reserved;
} rndv_hdr_t;

enum { SYNC_HELLO = 1, SYNC_BARRIER = 2 };
#define SYNC_MAGIC 0x6f706655u /* "opfU" */

typedef struct sync_msg_t {
    uint32_t magic;
    uint32_t kind;
    int32_t status;
    uint32_t handle_size;
    uint64_t digest;
    uint64_t eager_limit;
    char rdma_component[64]; /* "" when this side has no get module */
} sync_msg_t;

/* ------------------------------------------------------------- failures */

void perf_fail(perf_t *p, const char *fmt, ...)
{
    if (p->failed) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->failure, sizeof(p->failure), fmt, ap);
    va_end(ap);
    p->failed = true;
}

static void on_btl_error(mca_btl_base_module_t *btl, int32_t flags, const opal_proc_t *errproc,
                         const char *info);
static perf_t *error_target; /* the btl's error callback has no cbdata */

static void on_btl_error(mca_btl_base_module_t *btl, int32_t flags, const opal_proc_t *errproc,
                         const char *info)
{
    /* A peer that finalized is not a failure (the other rank of a job
     * may finish first). */
    if (NULL == error_target || 0 != (flags & MCA_BTL_ERROR_FLAGS_PEER_CLOSED)) {
        return;
    }
    perf_fail(error_target, "btl %s: %s%s%s", btl->btl_component->btl_version.mca_component_name,
              NULL != errproc ? opal_proc_name_string(&errproc->proc_name) : "",
              NULL != errproc ? ": " : "", NULL != info ? info : "error");
}

/* Bytes of a received message, over its segments. */
static size_t received_bytes(const mca_btl_base_receive_descriptor_t *desc)
{
    size_t len = 0;
    for (size_t i = 0; i < desc->des_segment_count; ++i) {
        len += desc->des_segments[i].seg_len;
    }
    return len;
}

static void copy_segments(unsigned char *dst, const mca_btl_base_receive_descriptor_t *desc)
{
    for (size_t i = 0; i < desc->des_segment_count; ++i) {
        size_t len = desc->des_segments[i].seg_len;
        memcpy(dst, desc->des_segments[i].seg_addr, len);
        dst += len;
    }
}

static const char *sender_name(const mca_btl_base_receive_descriptor_t *desc)
{
    return NULL != desc->proc ? opal_proc_name_string(&desc->proc->proc_name) : "the peer";
}

/* ------------------------------------------------------------ callbacks */

static void on_data(mca_btl_base_module_t *btl, const mca_btl_base_receive_descriptor_t *desc)
{
    (void) btl;
    perf_t *p = desc->cbdata;
    size_t len = OPAL_LIKELY(1 == desc->des_segment_count) ? desc->des_segments[0].seg_len
                                                           : received_bytes(desc);
    if (OPAL_UNLIKELY(len != p->cur_size)) {
        perf_fail(p, "%s sent a message of %zu bytes while %zu were expected", sender_name(desc),
                  len, p->cur_size);
        return;
    }
    if (OPAL_LIKELY(1 == desc->des_segment_count)) {
        memcpy(p->rbuf, desc->des_segments[0].seg_addr, len);
    } else {
        copy_segments(p->rbuf, desc);
    }
    ++p->rx_msgs;
}

static void on_frag(mca_btl_base_module_t *btl, const mca_btl_base_receive_descriptor_t *desc)
{
    (void) btl;
    perf_t *p = desc->cbdata;
    size_t len = received_bytes(desc);
    if (OPAL_UNLIKELY(0 == len || len > p->cur_size - p->rx_frag_off)) {
        perf_fail(p, "%s sent a fragment of %zu bytes at offset %zu of a message of %zu bytes",
                  sender_name(desc), len, p->rx_frag_off, p->cur_size);
        return;
    }
    copy_segments(p->rbuf + p->rx_frag_off, desc);
    p->rx_frag_off += len;
    if (p->rx_frag_off == p->cur_size) {
        p->rx_frag_off = 0;
        ++p->rx_msgs;
    }
}

static void on_rndv(mca_btl_base_module_t *btl, const mca_btl_base_receive_descriptor_t *desc)
{
    (void) btl;
    perf_t *p = desc->cbdata;
    rndv_hdr_t hdr;
    size_t len = received_bytes(desc);
    if (OPAL_UNLIKELY(1 != desc->des_segment_count || len < sizeof(hdr))) {
        perf_fail(p, "%s sent a rendezvous request of %zu bytes in %zu segments", sender_name(desc),
                  len, desc->des_segment_count);
        return;
    }
    memcpy(&hdr, desc->des_segments[0].seg_addr, sizeof(hdr));
    if (OPAL_UNLIKELY(NULL == p->rdma_btl || hdr.size != p->cur_size ||
                      hdr.handle_size != p->handle_size || len != sizeof(hdr) + hdr.handle_size)) {
        perf_fail(p,
                  "%s sent a rendezvous request for %" PRIu64 " bytes with a handle of %" PRIu32
                  " bytes (message of %zu); expected %zu bytes with a handle of %zu%s",
                  sender_name(desc), hdr.size, hdr.handle_size, len, p->cur_size, p->handle_size,
                  NULL == p->rdma_btl ? " (no get module here)" : "");
        return;
    }
    if (OPAL_UNLIKELY(p->rndv_tail - p->rndv_head > p->rndv_mask)) {
        perf_fail(p, "%s has more rendezvous requests outstanding than the window allows",
                  sender_name(desc));
        return;
    }
    perf_rndv_t *r = &p->rndv[p->rndv_tail & p->rndv_mask];
    r->remote_addr = hdr.addr;
    r->size = (size_t) hdr.size;
    r->issued = 0;
    r->done = 0;
    memcpy(r->handle, (const unsigned char *) desc->des_segments[0].seg_addr + sizeof(hdr),
           hdr.handle_size);
    ++p->rndv_tail;
}

static void on_fin(mca_btl_base_module_t *btl, const mca_btl_base_receive_descriptor_t *desc)
{
    (void) btl;
    perf_t *p = desc->cbdata;
    if (OPAL_UNLIKELY(p->rx_fin >= p->tx_rndv)) {
        perf_fail(p, "%s finished a rendezvous that was never requested", sender_name(desc));
        return;
    }
    ++p->rx_fin;
}

static void on_ack(mca_btl_base_module_t *btl, const mca_btl_base_receive_descriptor_t *desc)
{
    (void) btl;
    perf_t *p = desc->cbdata;
    ++p->rx_ack;
}

static void on_sync(mca_btl_base_module_t *btl, const mca_btl_base_receive_descriptor_t *desc)
{
    (void) btl;
    perf_t *p = desc->cbdata;
    sync_msg_t msg;
    if (1 != desc->des_segment_count || sizeof(msg) != desc->des_segments[0].seg_len) {
        perf_fail(p, "%s sent a control message of %zu bytes (expected %zu)", sender_name(desc),
                  received_bytes(desc), sizeof(msg));
        return;
    }
    memcpy(&msg, desc->des_segments[0].seg_addr, sizeof(msg));
    if (SYNC_MAGIC != msg.magic || (SYNC_HELLO != msg.kind && SYNC_BARRIER != msg.kind)) {
        perf_fail(p, "%s sent a malformed control message (magic %#" PRIx32 ", kind %" PRIu32 ")",
                  sender_name(desc), msg.magic, msg.kind);
        return;
    }
    if (SYNC_HELLO == msg.kind) {
        /* Kept for perf_proto_init, which decides once both hellos are in
         * (this one may arrive while the modules are still being chosen). */
        p->peer_digest = msg.digest;
        p->peer_handle_size = msg.handle_size;
        memcpy(p->peer_rdma_component, msg.rdma_component, sizeof(p->peer_rdma_component));
        p->peer_rdma_component[sizeof(p->peer_rdma_component) - 1] = '\0';
        ++p->rx_hello;
    } else {
        ++p->rx_sync;
    }
    if (msg.status < p->peer_status) {
        p->peer_status = msg.status;
    }
}

static const mca_btl_base_am_fn_t callbacks[TAG_END - TAG_DATA] = {
    on_data, on_frag, on_rndv, on_fin, on_ack, on_sync,
};

/* ---------------------------------------------------------------- sends */

/* One active message of header + payload (<= eager limit). */
static int send_eager(perf_t *p, mca_btl_base_tag_t tag, const void *header, size_t header_size,
                      const void *payload, size_t payload_size)
{
    mca_btl_base_module_t *btl = p->send_btl;
    for (;;) {
        mca_btl_base_descriptor_t *des = NULL;
        if (OPAL_LIKELY(NULL != btl->btl_sendi)) {
            int rc = btl->btl_sendi(btl, p->send_ep, header, header_size, payload, payload_size,
                                    MCA_BTL_NO_ORDER, MCA_BTL_DES_FLAGS_BTL_OWNERSHIP, tag, &des);
            if (OPAL_LIKELY(OPAL_SUCCESS == rc)) {
                return OPAL_SUCCESS;
            }
            if (OPAL_ERR_RESOURCE_BUSY != rc) {
                perf_fail(p, "sendi of %zu bytes failed: %s", header_size + payload_size,
                          opal_strerror(rc));
                return rc;
            }
        }
        if (NULL == des) {
            des = btl->btl_alloc(btl, p->send_ep, MCA_BTL_NO_ORDER, header_size + payload_size,
                                 MCA_BTL_DES_FLAGS_BTL_OWNERSHIP);
        }
        if (NULL == des) {
            perf_poll(p);
            if (OPAL_UNLIKELY(p->failed)) {
                return OPAL_ERROR;
            }
            continue;
        }
        unsigned char *dst = des->des_segments[0].seg_addr;
        if (header_size > 0) {
            memcpy(dst, header, header_size);
        }
        if (payload_size > 0) {
            memcpy(dst + header_size, payload, payload_size);
        }
        des->des_segments[0].seg_len = header_size + payload_size;
        des->des_flags |= MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
        des->des_cbfunc = NULL;
        int rc;
        while (OPAL_ERR_RESOURCE_BUSY == (rc = btl->btl_send(btl, p->send_ep, des, tag))) {
            perf_poll(p);
            if (OPAL_UNLIKELY(p->failed)) {
                (void) btl->btl_free(btl, des);
                return OPAL_ERROR;
            }
        }
        if (rc < 0) {
            (void) btl->btl_free(btl, des);
            perf_fail(p, "send of %zu bytes failed: %s", header_size + payload_size,
                      opal_strerror(rc));
        }
        return rc < 0 ? rc : OPAL_SUCCESS;
    }
}

static int send_frags(perf_t *p)
{
    mca_btl_base_module_t *btl = p->send_btl;
    size_t off = 0;
    while (off < p->cur_size) {
        size_t len = p->cur_size - off;
        if (len > p->frag_size) {
            len = p->frag_size;
        }
        mca_btl_base_descriptor_t *des =
            btl->btl_prepare_src(btl, p->send_ep, p->sbuf + off, MCA_BTL_NO_ORDER, 0, &len,
                                 MCA_BTL_DES_FLAGS_BTL_OWNERSHIP);
        if (NULL == des) {
            perf_poll(p);
            if (OPAL_UNLIKELY(p->failed)) {
                return OPAL_ERROR;
            }
            continue;
        }
        if (0 == len) {
            (void) btl->btl_free(btl, des);
            perf_fail(p, "prepare_src took none of %zu bytes", p->cur_size - off);
            return OPAL_ERROR;
        }
        des->des_cbfunc = NULL;
        int rc;
        while (OPAL_ERR_RESOURCE_BUSY == (rc = btl->btl_send(btl, p->send_ep, des, TAG_FRAG))) {
            perf_poll(p);
            if (OPAL_UNLIKELY(p->failed)) {
                (void) btl->btl_free(btl, des);
                return OPAL_ERROR;
            }
        }
        if (rc < 0) {
            (void) btl->btl_free(btl, des);
            perf_fail(p, "send of a fragment of %zu bytes failed: %s", len, opal_strerror(rc));
            return rc;
        }
        off += len;
    }
    return OPAL_SUCCESS;
}

static int send_rndv(perf_t *p)
{
    rndv_hdr_t hdr = {
        .addr = (uint64_t) (uintptr_t) p->sbuf,
        .size = p->cur_size,
        .handle_size = (uint32_t) p->handle_size,
    };
    ++p->tx_rndv;
    return send_eager(p, TAG_RNDV, &hdr, sizeof(hdr), p->sreg, p->handle_size);
}

int perf_send(perf_t *p)
{
    switch (p->cur_proto) {
        case PERF_PROTO_EAGER:
            return send_eager(p, TAG_DATA, NULL, 0, p->sbuf, p->cur_size);
        case PERF_PROTO_RNDV:
            return send_rndv(p);
        case PERF_PROTO_FRAG:
            break;
    }
    return send_frags(p);
}

int perf_send_ack(perf_t *p)
{
    return send_eager(p, TAG_ACK, NULL, 0, NULL, 0);
}

/* ------------------------------------------------------ serving requests */

static void on_get_done(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                        void *local_address, mca_btl_base_registration_handle_t *local_handle,
                        void *context, void *cbdata, int status)
{
    (void) btl;
    (void) endpoint;
    (void) local_handle;
    perf_t *p = cbdata;
    perf_rndv_t *r = context;
    if (OPAL_UNLIKELY(OPAL_SUCCESS != status)) {
        perf_fail(p, "get of the peer's data into %p failed: %s", local_address,
                  opal_strerror(status));
        return;
    }
    /* Pieces are issued in order and all but the last are get_piece
     * bytes, so the completed byte count follows from the piece. */
    size_t piece = r->size - r->done < p->get_piece ? r->size - r->done : p->get_piece;
    r->done += piece;
}

/* Starts the gets of every request received (as many as the module takes
 * now), and finishes the oldest ones whose data is in. */
static void serve_requests(perf_t *p)
{
    mca_btl_base_module_t *btl = p->rdma_btl;
    size_t align = btl->btl_get_alignment > 1 ? btl->btl_get_alignment : 1;
    for (uint64_t i = p->rndv_head; i != p->rndv_tail; ++i) {
        perf_rndv_t *r = &p->rndv[i & p->rndv_mask];
        while (r->issued < r->size) {
            size_t len = r->size - r->issued;
            if (len > p->get_piece) {
                len = p->get_piece;
            }
            /* The buffers have room for the rounding (perf_proto_init). */
            size_t xfer = (len + align - 1) / align * align;
            int rc = btl->btl_get(btl, p->rdma_ep, p->rbuf + r->issued, r->remote_addr + r->issued,
                                  p->rreg, (mca_btl_base_registration_handle_t *) r->handle, xfer,
                                  0, MCA_BTL_NO_ORDER, on_get_done, r, p);
            if (OPAL_ERR_RESOURCE_BUSY == rc) {
                return;
            }
            if (OPAL_SUCCESS != rc) {
                perf_fail(p, "get of %zu bytes from %#" PRIx64 " failed: %s", xfer,
                          r->remote_addr + r->issued, opal_strerror(rc));
                return;
            }
            r->issued += len;
        }
    }
    while (p->rndv_head != p->rndv_tail) {
        perf_rndv_t *r = &p->rndv[p->rndv_head & p->rndv_mask];
        if (r->done < r->size) {
            return;
        }
        ++p->rndv_head;
        ++p->rx_msgs;
        if (OPAL_SUCCESS != send_eager(p, TAG_FIN, NULL, 0, NULL, 0)) {
            return;
        }
    }
}

int perf_wait(perf_t *p, const uint64_t *counter, uint64_t target)
{
    while (*counter < target) {
        perf_poll(p);
        if (p->rndv_head != p->rndv_tail) {
            serve_requests(p);
        }
        if (OPAL_UNLIKELY(p->failed)) {
            return OPAL_ERROR;
        }
    }
    return OPAL_SUCCESS;
}

int perf_wait_sends(perf_t *p)
{
    return perf_wait(p, &p->rx_fin, p->tx_rndv);
}

/* ------------------------------------------------------------- barriers */

static int send_sync(perf_t *p, uint32_t kind, int status, uint64_t digest)
{
    sync_msg_t msg = {
        .magic = SYNC_MAGIC,
        .kind = kind,
        .status = status,
        .handle_size = (uint32_t) p->handle_size,
        .digest = digest,
        .eager_limit = p->eager_limit,
    };
    if (NULL != p->rdma_btl) {
        snprintf(msg.rdma_component, sizeof(msg.rdma_component), "%s",
                 p->rdma_btl->btl_component->btl_version.mca_component_name);
    }
    return send_eager(p, TAG_SYNC, NULL, 0, &msg, sizeof(msg));
}

int perf_sync(perf_t *p, int status)
{
    if (p->loopback) {
        return status;
    }
    /* The peer's barrier n answers this side's barrier n, whenever it
     * arrives (possibly before this one is sent). */
    uint64_t target = ++p->tx_sync;
    int rc = send_sync(p, SYNC_BARRIER, status, 0);
    if (OPAL_SUCCESS == rc) {
        rc = perf_wait(p, &p->rx_sync, target);
    }
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    return status < p->peer_status ? status : p->peer_status;
}

/* ------------------------------------------------------------ the sizes */

perf_proto_t perf_proto_for_size(const perf_t *p, size_t size)
{
    if (size <= p->eager_limit) {
        return PERF_PROTO_EAGER;
    }
    /* The module's btl_min_rdma_pipeline_size says below which size its
     * RDMA does not pay (set-up cost against copies through messages). */
    return NULL != p->rdma_btl && size >= p->rdma_btl->btl_min_rdma_pipeline_size ? PERF_PROTO_RNDV
                                                                                  : PERF_PROTO_FRAG;
}

const char *perf_proto_name(perf_proto_t proto)
{
    static const char *const names[] = {
        [PERF_PROTO_EAGER] = "eager",
        [PERF_PROTO_RNDV] = "get",
        [PERF_PROTO_FRAG] = "frag",
    };
    return names[proto];
}

void perf_proto_set_size(perf_t *p, size_t size)
{
    p->cur_size = size;
    p->cur_proto = perf_proto_for_size(p, size);
    p->rx_frag_off = 0;
}

/* ------------------------------------------------------- start-up help */

int perf_proto_register_tags(perf_t *p)
{
    for (int tag = TAG_DATA; tag < TAG_END; ++tag) {
        int rc = mca_btl_base_am_register((mca_btl_base_tag_t) tag, callbacks[tag - TAG_DATA], p);
        if (OPAL_SUCCESS != rc) {
            for (int t = TAG_DATA; t < tag; ++t) {
                (void) mca_btl_base_am_deregister((mca_btl_base_tag_t) t);
            }
            fprintf(stderr, "opal_perf: rank %" PRIu32 ": cannot take btl tag %d: %s\n", p->rank,
                    tag, opal_strerror(rc));
            return rc;
        }
    }
    return OPAL_SUCCESS;
}

void perf_proto_deregister_tags(void)
{
    for (int tag = TAG_DATA; tag < TAG_END; ++tag) {
        (void) mca_btl_base_am_deregister((mca_btl_base_tag_t) tag);
    }
}

void perf_proto_watch_errors(perf_t *p)
{
    error_target = p;
    (void) mca_btl_base_register_error_cb(NULL != p ? on_btl_error : NULL);
}

int perf_send_hello(perf_t *p, uint64_t digest)
{
    return send_sync(p, SYNC_HELLO, OPAL_SUCCESS, digest);
}

size_t perf_rndv_request_size(size_t handle_size)
{
    return sizeof(rndv_hdr_t) + handle_size;
}
