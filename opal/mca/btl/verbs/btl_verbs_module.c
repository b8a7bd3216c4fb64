/*
 * The module: its verbs resources (PD, completion channel and CQ, SRQ,
 * one RC QP per peer rank), progress, device events and finalize
 * (connections and peers: btl_verbs_endpoint.c).
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "opal/mca/btl/verbs/btl_verbs.h"
#include "opal/runtime/opal_progress.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_memhooks.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_timer.h"

/* CQ entries read per ibv_poll_cq, and polls per progress call at most. */
#define POLL_BATCH  16
#define POLL_ROUNDS 4

/* ------------------------------------------------------------ classes */

static void frag_construct(mca_btl_verbs_frag_t *frag)
{
    frag->base.des_segments = &frag->segment;
    frag->base.des_segment_count = 1;
    frag->kind = MCA_BTL_VERBS_WR_SEND;
    frag->endpoint = NULL;
    frag->lkey = 0;
    frag->posted = false;
}
OBJ_CLASS_INSTANCE(mca_btl_verbs_frag_t, mca_btl_base_descriptor_t, frag_construct, NULL);

static void rdma_op_construct(mca_btl_verbs_rdma_op_t *op)
{
    op->kind = MCA_BTL_VERBS_WR_RDMA;
}
OBJ_CLASS_INSTANCE(mca_btl_verbs_rdma_op_t, opal_free_list_item_t, rdma_op_construct, NULL);

/* ------------------------------------------------------ free-list hooks */

/* Send and receive payload slabs are registered once, whole. */
static int slab_register(void *base, size_t size, void *context, void **registration)
{
    mca_btl_verbs_module_t *module = context;
    struct ibv_mr *mr = ibv_reg_mr(module->pd, base, size, IBV_ACCESS_LOCAL_WRITE);
    if (NULL == mr) {
        opal_output_verbose(1, mca_btl_base_output, "verbs: %s: registering %zu bytes: %s",
                            module->dev_name, size, strerror(errno));
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    *registration = mr;
    return OPAL_SUCCESS;
}

static void slab_deregister(void *base, size_t size, void *context, void *registration)
{
    (void) base;
    (void) size;
    (void) context;
    (void) ibv_dereg_mr(registration);
}

static int frag_list_init(mca_btl_verbs_module_t *module, opal_free_list_t *list, size_t initial,
                          size_t max)
{
    return opal_free_list_init(list, sizeof(mca_btl_verbs_frag_t), OPAL_CACHE_LINE_SIZE,
                               OBJ_CLASS(mca_btl_verbs_frag_t), module->super.btl_max_send_size,
                               OPAL_CACHE_LINE_SIZE, initial, max, initial > 0 ? initial : 16,
                               slab_register, slab_deregister, module);
}

/* ------------------------------------------------------------ errors */

/* The module's port or device broke: every peer reached through it is
 * reported (with what, naming the device and port) and nothing is posted
 * here any more; the process and the other modules go on. */
static void module_failed(mca_btl_verbs_module_t *module, const char *what)
{
    if (module->fatal) {
        return;
    }
    module->fatal = true;
    opal_output_verbose(1, mca_btl_base_output, "btl/verbs (%s): %s: no longer used",
                        module->transport, what);
    for (uint32_t r = 0; NULL != module->endpoints && r < module->job_size; ++r) {
        mca_btl_verbs_endpoint_t *ep = module->endpoints[r];
        if (NULL == ep) {
            continue;
        }
        if (MCA_BTL_VERBS_EP_CLOSED == ep->state && NULL == ep->proc) {
            /* Never connected nor added: nobody to tell. */
            ep->state = MCA_BTL_VERBS_EP_FAILED;
            continue;
        }
        mca_btl_verbs_peer_failed(module, ep, what);
    }
}

/* ------------------------------------------------------------ progress */

static int async_ready(int fd, uint32_t epoll_events, void *context);

static mca_btl_verbs_endpoint_t *ep_of_kind(mca_btl_verbs_wr_kind_t *kind)
{
    if (MCA_BTL_VERBS_WR_PROBE == *kind) {
        return (
            mca_btl_verbs_endpoint_t *) (void *) ((char *) kind -
                                                  offsetof(mca_btl_verbs_endpoint_t, probe_kind));
    }
    if (MCA_BTL_VERBS_WR_CREDITS == *kind) {
        return (
            mca_btl_verbs_endpoint_t *) (void *) ((char *) kind -
                                                  offsetof(mca_btl_verbs_endpoint_t, credit_kind));
    }
    return (mca_btl_verbs_endpoint_t *) (void *) ((char *) kind -
                                                  offsetof(mca_btl_verbs_endpoint_t, inline_kind));
}

static void handle_wc(mca_btl_verbs_module_t *module, const struct ibv_wc *wc)
{
    mca_btl_verbs_wr_kind_t *kind = (mca_btl_verbs_wr_kind_t *) (uintptr_t) wc->wr_id;
    int status = IBV_WC_SUCCESS == wc->status ? OPAL_SUCCESS : OPAL_ERR_UNREACH;
    mca_btl_verbs_endpoint_t *ep = NULL;
    char what[160];
    snprintf(what, sizeof(what), "completion in error: %s (vendor error 0x%x)",
             ibv_wc_status_str(wc->status), wc->vendor_err);

    switch (*kind) {
        case MCA_BTL_VERBS_WR_RECV:
            mca_btl_verbs_handle_recv(module, wc);
            return;
        case MCA_BTL_VERBS_WR_SEND: {
            mca_btl_verbs_frag_t *frag =
                (mca_btl_verbs_frag_t *) (void *) ((char *) kind -
                                                   offsetof(mca_btl_verbs_frag_t, kind));
            ep = frag->endpoint;
            ep->sq_posted--;
            module->sq_pending--;
            if (OPAL_SUCCESS != status) {
                mca_btl_verbs_peer_failed(module, ep, what);
            }
            mca_btl_verbs_send_complete(module, frag, status);
            break;
        }
        case MCA_BTL_VERBS_WR_RDMA: {
            mca_btl_verbs_rdma_op_t *op =
                (mca_btl_verbs_rdma_op_t *) (void *) ((char *) kind -
                                                      offsetof(mca_btl_verbs_rdma_op_t, kind));
            ep = op->endpoint;
            ep->sq_posted--;
            ep->rdma_posted--;
            module->sq_pending--;
            module->rdma_posted--;
            if (OPAL_SUCCESS != status) {
                mca_btl_verbs_peer_failed(module, ep, what);
            }
            mca_btl_verbs_rdma_complete(module, op, status);
            break;
        }
        case MCA_BTL_VERBS_WR_CREDITS:
        case MCA_BTL_VERBS_WR_INLINE:
        case MCA_BTL_VERBS_WR_PROBE:
            ep = ep_of_kind(kind);
            if (MCA_BTL_VERBS_WR_CREDITS == *kind) {
                ep->credit_msg_posted = false;
            } else if (MCA_BTL_VERBS_WR_PROBE == *kind) {
                ep->probe_posted = false;
                opal_output_verbose(20, mca_btl_base_output, "verbs: probe of %s: %s",
                                    mca_btl_verbs_peer_name(ep), ibv_wc_status_str(wc->status));
            }
            ep->sq_posted--;
            module->sq_pending--;
            if (OPAL_SUCCESS != status) {
                mca_btl_verbs_peer_failed(module, ep, what);
            }
            break;
    }
    if (NULL != ep && MCA_BTL_VERBS_EP_READY == ep->state) {
        mca_btl_verbs_credits_check(module, ep);
    }
}

int mca_btl_verbs_module_progress(mca_btl_verbs_module_t *module)
{
    struct ibv_wc wc[POLL_BATCH];
    int events = 0;
    OPAL_THREAD_LOCK(&module->lock);
    for (int round = 0; round < POLL_ROUNDS; ++round) {
        int n = ibv_poll_cq(module->cq, POLL_BATCH, wc);
        if (n < 0) {
            module_failed(module, "ibv_poll_cq failed: the completion queue is broken");
            break;
        }
        for (int i = 0; i < n; ++i) {
            handle_wc(module, &wc[i]);
        }
        events += n;
        if (n < POLL_BATCH) {
            break;
        }
    }
    if (OPAL_UNLIKELY(0 == (++module->progress_calls & 1023u))) {
        mca_btl_verbs_liveness_check(module, false);
        /* opal_progress() alone never runs the fd callbacks (only
         * opal_progress_wait does): a busy-polling process must still
         * hear of a port going down. */
        if (module->async_fd >= 0) {
            (void) async_ready(module->async_fd, 0, module);
        }
    }
    if (OPAL_UNLIKELY(module->connect_timer_fd >= 0) &&
        opal_timer_ns() >= module->next_connect_ns) {
        mca_btl_verbs_connect_pending(module);
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    return events;
}

/* The completion channel fired: take the event (every one must be
 * acknowledged before the CQ can be destroyed), then poll. */
static int channel_ready(int fd, uint32_t epoll_events, void *context)
{
    (void) fd;
    (void) epoll_events;
    mca_btl_verbs_module_t *module = context;
    struct ibv_cq *cq;
    void *cq_context;
    OPAL_THREAD_LOCK(&module->lock);
    while (0 == ibv_get_cq_event(module->channel, &cq, &cq_context)) {
        ibv_ack_cq_events(cq, 1);
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    return mca_btl_verbs_module_progress(module);
}

/* Before opal_progress_wait sleeps: ask for an event on the next
 * completion, then look once more, since one may have come between the
 * last poll and the request (it would raise no event). */
static int channel_arm(int fd, void *context)
{
    (void) fd;
    mca_btl_verbs_module_t *module = context;
    OPAL_THREAD_LOCK(&module->lock);
    int rc = ibv_req_notify_cq(module->cq, 0);
    OPAL_THREAD_UNLOCK(&module->lock);
    if (0 != rc) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    return mca_btl_verbs_module_progress(module) > 0 ? OPAL_ERR_RESOURCE_BUSY : OPAL_SUCCESS;
}

/* Whether the module's GID index still holds the GID it published. */
static bool gid_still_ours(mca_btl_verbs_module_t *module)
{
    union ibv_gid gid;
    return 0 == ibv_query_gid(module->ctx, module->port, module->gid_index, &gid) &&
           0 == memcmp(gid.raw, module->addr.gid, 16);
}

/* Asynchronous events: a QP in error names its peer; this module's port
 * going down, its GID going away or its device dying breaks the module. */
static int async_ready(int fd, uint32_t epoll_events, void *context)
{
    (void) fd;
    (void) epoll_events;
    mca_btl_verbs_module_t *module = context;
    struct ibv_async_event event;
    int events = 0;
    OPAL_THREAD_LOCK(&module->lock);
    while (0 == ibv_get_async_event(module->ctx, &event)) {
        ++events;
        char what[160];
        switch (event.event_type) {
            case IBV_EVENT_QP_FATAL:
            case IBV_EVENT_QP_REQ_ERR:
            case IBV_EVENT_QP_ACCESS_ERR: {
                void *value = NULL;
                if (OPAL_SUCCESS == opal_hash_table_get_value_uint32(
                                        &module->qpn_to_ep, event.element.qp->qp_num, &value)) {
                    snprintf(what, sizeof(what), "queue pair in error: %s",
                             ibv_event_type_str(event.event_type));
                    mca_btl_verbs_peer_failed(module, value, what);
                }
                break;
            }
            case IBV_EVENT_PORT_ERR:
                /* Every context of the device hears of every port. */
                if (event.element.port_num == module->port) {
                    snprintf(what, sizeof(what), "port %s:%u went down (%s)", module->dev_name,
                             (unsigned) module->port, ibv_event_type_str(event.event_type));
                    module_failed(module, what);
                }
                break;
            case IBV_EVENT_GID_CHANGE:
                /* The address this port published is what peers reach
                 * it at: gone (its IP address removed, its net device
                 * deleted, which is all soft-RoCE reports when the
                 * device goes away) or moved, the port is lost. */
                if (event.element.port_num == module->port && !gid_still_ours(module)) {
                    char gid[64];
                    mca_btl_verbs_gid_string(module->addr.gid, gid, sizeof(gid));
                    snprintf(what, sizeof(what), "GID %s of port %s:%u is gone (%s)", gid,
                             module->dev_name, (unsigned) module->port,
                             ibv_event_type_str(event.event_type));
                    module_failed(module, what);
                }
                break;
            case IBV_EVENT_DEVICE_FATAL:
                snprintf(what, sizeof(what), "device %s failed (%s)", module->dev_name,
                         ibv_event_type_str(event.event_type));
                module_failed(module, what);
                break;
            default:
                opal_output_verbose(10, mca_btl_base_output, "verbs: %s: async event %s",
                                    module->transport, ibv_event_type_str(event.event_type));
                break;
        }
        ibv_ack_async_event(&event);
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    return events;
}

static int set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    return flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 ? OPAL_ERR_IN_ERRNO
                                                                   : OPAL_SUCCESS;
}

/* ------------------------------------------------------------ creation */

/* btl_dump: the QP's state, the credits each way, and the work requests
 * whose completion is not yet seen. */
static void verbs_dump(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                       char *buf, size_t size)
{
    mca_btl_verbs_module_t *module = mca_btl_verbs_module(btl);
    mca_btl_verbs_endpoint_t *ep = endpoint;
    OPAL_THREAD_LOCK(&module->lock);
    const char *state = MCA_BTL_VERBS_EP_READY == ep->state    ? "ready"
                        : MCA_BTL_VERBS_EP_CLOSED == ep->state ? "closed"
                                                               : "failed";
    snprintf(buf, size,
             "%s (qp %u); send credits %" PRIu32 " of %" PRIu32 ", owed to the peer %" PRIu32
             "%s; work requests not completed %" PRIu32 " (put / get %" PRIu32 ")%s; module: "
             "%zu of %zu send-side work requests in flight",
             state, NULL == ep->qp ? 0u : (unsigned) ep->qp->qp_num, ep->send_credits,
             module->credits, ep->credits_owed,
             ep->credit_msg_posted ? " (a credit message in flight)" : "", ep->sq_posted,
             ep->rdma_posted, ep->probe_posted ? "; a liveness probe in flight" : "",
             module->sq_pending, module->sq_pending_max);
    OPAL_THREAD_UNLOCK(&module->lock);
}

static int register_error(mca_btl_base_module_t *btl, mca_btl_base_module_error_cb_fn_t cbfunc)
{
    mca_btl_verbs_module(btl)->error_cb = cbfunc;
    return OPAL_SUCCESS;
}

/* The IPv4 prefix length of the network of a RoCE GID that is an IPv4
 * address, from its net device's addresses; 0 when unknown. */
static uint8_t gid_prefix(struct ibv_context *ctx, uint8_t port, int gid_index, const uint8_t *gid)
{
    struct ibv_gid_entry entry;
    if (!mca_btl_verbs_gid_is_ipv4(gid) ||
        0 != ibv_query_gid_ex(ctx, port, (uint32_t) gid_index, &entry, 0)) {
        return 0;
    }
    struct ifaddrs *list = NULL;
    if (0 != getifaddrs(&list)) {
        return 0;
    }
    uint8_t bits = 0;
    for (struct ifaddrs *ifa = list; NULL != ifa; ifa = ifa->ifa_next) {
        if (NULL == ifa->ifa_addr || NULL == ifa->ifa_netmask ||
            AF_INET != ifa->ifa_addr->sa_family ||
            if_nametoindex(ifa->ifa_name) != entry.ndev_ifindex) {
            continue;
        }
        const struct sockaddr_in *a = (const struct sockaddr_in *) (void *) ifa->ifa_addr;
        const struct sockaddr_in *m = (const struct sockaddr_in *) (void *) ifa->ifa_netmask;
        if (0 == memcmp(&a->sin_addr.s_addr, gid + 12, 4)) {
            bits = (uint8_t) __builtin_popcount(m->sin_addr.s_addr);
            break;
        }
    }
    freeifaddrs(list);
    return bits;
}

static uint32_t random_psn(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t x = (uint64_t) getpid() * 0x9e3779b97f4a7c15ull ^ (uint64_t) ts.tv_nsec;
    x ^= x >> 29;
    return (uint32_t) (x & 0xffffffu);
}

#define FAIL(code, ...)                                                                            \
    do {                                                                                           \
        rc = (code);                                                                               \
        if (asprintf(why, __VA_ARGS__) < 0) {                                                      \
            *why = NULL;                                                                           \
        }                                                                                          \
        goto fail;                                                                                 \
    } while (0)

int mca_btl_verbs_module_create(struct ibv_context *ctx, uint8_t port, int gid_index,
                                const struct ibv_port_attr *port_attr, mca_btl_verbs_module_t **out,
                                char **why)
{
    const mca_btl_verbs_component_t *c = &mca_btl_verbs_component;
    int rc = OPAL_ERR_OUT_OF_RESOURCE;
    *why = NULL;
    mca_btl_verbs_module_t *module = calloc(1, sizeof(*module));
    if (NULL == module) {
        ibv_close_device(ctx);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    module->super = mca_btl_verbs_module_template.super;
    module->ctx = ctx;
    module->port = port;
    module->gid_index = gid_index;
    module->port_attr = *port_attr;
    module->channel_fd = -1;
    module->async_fd = -1;
    module->connect_timer_fd = -1;
    snprintf(module->dev_name, sizeof(module->dev_name), "%s", ibv_get_device_name(ctx->device));
    snprintf(module->transport, sizeof(module->transport), "%s:%u", module->dev_name,
             (unsigned) port);
    OBJ_CONSTRUCT(&module->lock, opal_recursive_mutex_t);
    OBJ_CONSTRUCT(&module->send_frags, opal_free_list_t);
    OBJ_CONSTRUCT(&module->recv_frags, opal_free_list_t);
    OBJ_CONSTRUCT(&module->rdma_ops, opal_free_list_t);
    OBJ_CONSTRUCT(&module->qpn_to_ep, opal_hash_table_t);
    module->lists_constructed = true;

    mca_btl_base_module_t *btl = &module->super;
    btl->btl_add_procs = mca_btl_verbs_add_procs;
    btl->btl_del_procs = mca_btl_verbs_del_procs;
    btl->btl_finalize = mca_btl_verbs_finalize;
    btl->btl_register_error = register_error;
    btl->btl_dump = verbs_dump;
    btl->btl_alloc = mca_btl_verbs_alloc;
    btl->btl_free = mca_btl_verbs_free;
    btl->btl_prepare_src = mca_btl_verbs_prepare_src;
    btl->btl_send = mca_btl_verbs_send;
    btl->btl_sendi = 0 != (btl->btl_flags & MCA_BTL_FLAGS_SENDI) ? mca_btl_verbs_sendi : NULL;
    btl->btl_put = 0 != (btl->btl_flags & MCA_BTL_FLAGS_PUT) ? mca_btl_verbs_put : NULL;
    btl->btl_get = 0 != (btl->btl_flags & MCA_BTL_FLAGS_GET) ? mca_btl_verbs_get : NULL;
    btl->btl_register_mem = mca_btl_verbs_register_mem;
    btl->btl_deregister_mem = mca_btl_verbs_deregister_mem;
    btl->btl_flush = mca_btl_verbs_flush;
    btl->btl_registration_handle_size = sizeof(mca_btl_base_registration_handle_t);

    struct ibv_device_attr dattr;
    if (0 != ibv_query_device(ctx, &dattr)) {
        FAIL(OPAL_ERROR, "%s: ibv_query_device failed", module->dev_name);
    }
    /* Messages and RDMA within the port's limit. */
    if (btl->btl_max_send_size > port_attr->max_msg_sz) {
        btl->btl_max_send_size = port_attr->max_msg_sz;
    }
    if (btl->btl_eager_limit > btl->btl_max_send_size) {
        btl->btl_eager_limit = btl->btl_max_send_size;
    }
    if (btl->btl_put_limit > port_attr->max_msg_sz) {
        btl->btl_put_limit = port_attr->max_msg_sz;
    }
    if (btl->btl_get_limit > port_attr->max_msg_sz) {
        btl->btl_get_limit = port_attr->max_msg_sz;
    }
    module->rd_atom = (uint8_t) (dattr.max_qp_rd_atom < 16 ? dattr.max_qp_rd_atom : 16);

    const opal_proc_job_info_t *job = opal_proc_job_info();
    module->job_size = NULL != job ? job->size : 1;
    module->my_rank = NULL != job ? job->my_name.vpid : 0;
    uint32_t npeers = module->job_size > 1 ? module->job_size - 1 : 1;

    /* Receive buffers: credits + 1 per peer, within the device and
     * btl_verbs_srq_max; fewer credits when they do not fit. */
    size_t srq_cap = (size_t) dattr.max_srq_wr;
    if (srq_cap > c->srq_max) {
        srq_cap = c->srq_max;
    }
    uint32_t credits = c->credits > 0 ? c->credits : 1;
    if ((size_t) npeers * (credits + 1) > srq_cap) {
        credits = (uint32_t) (srq_cap / npeers) - 1;
    }
    if (srq_cap / npeers < 3) {
        FAIL(OPAL_ERR_NOT_SUPPORTED,
             "%u peers need at least %u receive buffers, the shared receive queue holds %zu "
             "(btl_verbs_srq_max, the device's max_srq_wr)",
             npeers, 3 * npeers, srq_cap);
    }
    module->credits = credits;
    module->srq_size = (size_t) npeers * (credits + 1);
    module->sq_depth =
        c->sq_depth < (unsigned) dattr.max_qp_wr ? c->sq_depth : (uint32_t) dattr.max_qp_wr;
    if (module->sq_depth < 4) {
        module->sq_depth = 4;
    }
    size_t cq_want = module->srq_size + (size_t) npeers * module->sq_depth;
    module->cq_size = cq_want < (size_t) dattr.max_cqe ? cq_want : (size_t) dattr.max_cqe;
    if (module->cq_size <= module->srq_size + 4) {
        FAIL(OPAL_ERR_NOT_SUPPORTED, "the device's CQ (%d entries) is too small for %zu buffers",
             dattr.max_cqe, module->srq_size);
    }
    module->sq_pending_max = module->cq_size - module->srq_size;

    module->pd = ibv_alloc_pd(ctx);
    if (NULL == module->pd) {
        FAIL(OPAL_ERR_OUT_OF_RESOURCE, "%s: ibv_alloc_pd: %s", module->dev_name, strerror(errno));
    }
    module->channel = ibv_create_comp_channel(ctx);
    if (NULL == module->channel || OPAL_SUCCESS != set_nonblocking(module->channel->fd) ||
        OPAL_SUCCESS != set_nonblocking(ctx->async_fd)) {
        FAIL(OPAL_ERR_OUT_OF_RESOURCE, "%s: completion channel: %s", module->dev_name,
             strerror(errno));
    }
    module->cq = ibv_create_cq(ctx, (int) module->cq_size, module, module->channel, 0);
    if (NULL == module->cq) {
        FAIL(OPAL_ERR_OUT_OF_RESOURCE, "%s: ibv_create_cq(%zu): %s", module->dev_name,
             module->cq_size, strerror(errno));
    }
    struct ibv_srq_init_attr srq_attr = {
        .attr = {.max_wr = (uint32_t) module->srq_size, .max_sge = 1},
    };
    module->srq = ibv_create_srq(module->pd, &srq_attr);
    if (NULL == module->srq) {
        FAIL(OPAL_ERR_OUT_OF_RESOURCE, "%s: ibv_create_srq(%zu): %s", module->dev_name,
             module->srq_size, strerror(errno));
    }

    size_t max_frags = c->free_list_max > 16 ? c->free_list_max : 16;
    rc = frag_list_init(module, &module->send_frags, 16, max_frags);
    if (OPAL_SUCCESS == rc) {
        rc = frag_list_init(module, &module->recv_frags, module->srq_size, module->srq_size);
    }
    if (OPAL_SUCCESS == rc) {
        rc = opal_free_list_init(&module->rdma_ops, sizeof(mca_btl_verbs_rdma_op_t),
                                 OPAL_CACHE_LINE_SIZE, OBJ_CLASS(mca_btl_verbs_rdma_op_t), 0, 0, 16,
                                 max_frags, 16, NULL, NULL, NULL);
    }
    if (OPAL_SUCCESS != rc) {
        FAIL(rc, "%s: registered buffers: %s", module->dev_name, opal_strerror(rc));
    }
    rc = mca_btl_verbs_recv_post(module, module->srq_size);
    if (OPAL_SUCCESS != rc) {
        FAIL(rc, "%s: posting %zu receive buffers failed", module->dev_name, module->srq_size);
    }

    /* The port's address. */
    module->addr.link_layer = IBV_LINK_LAYER_ETHERNET == port_attr->link_layer
                                  ? MCA_BTL_VERBS_LINK_ETHERNET
                                  : MCA_BTL_VERBS_LINK_IB;
    module->addr.mtu = (uint8_t) port_attr->active_mtu;
    module->addr.lid = port_attr->lid;
    union ibv_gid gid;
    if (0 != ibv_query_gid(ctx, port, gid_index, &gid)) {
        FAIL(OPAL_ERROR, "%s: ibv_query_gid(%d) failed", module->dev_name, gid_index);
    }
    memcpy(module->addr.gid, gid.raw, 16);
    snprintf(module->addr.name, sizeof(module->addr.name), "%s", module->dev_name);
    module->addr.port = port;
    if (MCA_BTL_VERBS_LINK_ETHERNET == module->addr.link_layer) {
        module->addr.prefix = gid_prefix(ctx, port, gid_index, module->addr.gid);
    }
    module->addr.psn = random_psn();

    /* One RC QP per peer rank, in RESET until connected. */
    rc = opal_hash_table_init(&module->qpn_to_ep, module->job_size);
    module->endpoints = calloc(module->job_size, sizeof(*module->endpoints));
    if (OPAL_SUCCESS != rc || NULL == module->endpoints) {
        FAIL(OPAL_ERR_OUT_OF_RESOURCE, "out of memory");
    }
    module->inline_max = c->inline_size;
    for (uint32_t r = 0; r < module->job_size && module->job_size > 1; ++r) {
        if (r == module->my_rank) {
            continue;
        }
        mca_btl_verbs_endpoint_t *ep = calloc(1, sizeof(*ep));
        if (NULL == ep) {
            FAIL(OPAL_ERR_OUT_OF_RESOURCE, "out of memory");
        }
        module->endpoints[r] = ep;
        ep->module = module;
        ep->rank = r;
        ep->state = MCA_BTL_VERBS_EP_CLOSED;
        ep->credit_kind = MCA_BTL_VERBS_WR_CREDITS;
        ep->inline_kind = MCA_BTL_VERBS_WR_INLINE;
        ep->probe_kind = MCA_BTL_VERBS_WR_PROBE;
        struct ibv_qp_init_attr qp_attr = {
            .send_cq = module->cq,
            .recv_cq = module->cq,
            .srq = module->srq,
            .cap = {.max_send_wr = module->sq_depth,
                    .max_send_sge = 2,
                    .max_inline_data = c->inline_size},
            .qp_type = IBV_QPT_RC,
        };
        ep->qp = ibv_create_qp(module->pd, &qp_attr);
        if (NULL == ep->qp) {
            FAIL(OPAL_ERR_OUT_OF_RESOURCE, "%s: ibv_create_qp for rank %u: %s", module->dev_name, r,
                 strerror(errno));
        }
        if (qp_attr.cap.max_inline_data < module->inline_max) {
            module->inline_max = qp_attr.cap.max_inline_data;
        }
        rc = opal_hash_table_set_value_uint32(&module->qpn_to_ep, ep->qp->qp_num, ep);
        if (OPAL_SUCCESS != rc) {
            FAIL(rc, "out of memory");
        }
    }

    OBJ_CONSTRUCT(&module->rcache, opal_rcache_t);
    module->rcache_constructed = true;
    rc = opal_rcache_init_access(&module->rcache, c->rcache_limit, mca_btl_verbs_rcache_register,
                                 mca_btl_verbs_rcache_deregister, module);
    if (OPAL_SUCCESS != rc) {
        FAIL(rc, "registration cache: %s", opal_strerror(rc));
    }
    /* Under valgrind or a sanitizer a freed block's pages can go away
     * unseen, and a cached registration would then point at old pages
     * (seen: an RDMA read into a new 1 MiB buffer at an old one's address
     * left it zeros under valgrind). */
    const char *unseen = opal_memhooks_free_unseen();
    if (NULL != unseen) {
        opal_output_verbose(1, mca_btl_base_output,
                            "btl/verbs (%s): %s: registrations are not kept past their deregister",
                            module->transport, unseen);
    } else if (OPAL_SUCCESS != opal_rcache_watch(&module->rcache)) {
        opal_output_verbose(1, mca_btl_base_output,
                            "btl/verbs (%s): no memory release hooks (%s): registrations are not "
                            "kept past their deregister",
                            module->transport, opal_memhooks_why());
    }

    rc = opal_progress_fd_register_armed(module->channel->fd, channel_ready, channel_arm, module);
    if (OPAL_SUCCESS != rc) {
        FAIL(rc, "cannot watch the completion channel: %s", opal_strerror(rc));
    }
    module->channel_fd = module->channel->fd;
    rc = opal_progress_fd_register(ctx->async_fd, async_ready, module);
    if (OPAL_SUCCESS != rc) {
        FAIL(rc, "cannot watch the device's events: %s", opal_strerror(rc));
    }
    module->async_fd = ctx->async_fd;
    if (module->job_size > 1 && NULL != job) {
        rc = mca_btl_verbs_connect_timer_open(module);
        if (OPAL_SUCCESS != rc) {
            FAIL(rc, "cannot start the connection timer: %s", opal_strerror(rc));
        }
    }
    *out = module;
    return OPAL_SUCCESS;
fail:
    (void) mca_btl_verbs_finalize(&module->super);
    return rc;
}

uint32_t *mca_btl_verbs_module_qpns(mca_btl_verbs_module_t *module)
{
    uint32_t *qpns = calloc(module->job_size, sizeof(*qpns));
    for (uint32_t r = 0; NULL != qpns && r < module->job_size; ++r) {
        if (NULL != module->endpoints[r]) {
            qpns[r] = module->endpoints[r]->qp->qp_num;
        }
    }
    return qpns;
}

/* ------------------------------------------------------------ finalize */

/* Waits (polling) until the sends in flight complete or the finalize
 * timeout passes, so that the last messages to live peers are not cut
 * off by destroying their QPs. */
static void drain(mca_btl_verbs_module_t *module)
{
    uint64_t deadline =
        opal_timer_ns() + (uint64_t) mca_btl_verbs_component.finalize_timeout_ms * 1000000u;
    while (module->sq_pending > 0 && opal_timer_ns() < deadline && !module->fatal) {
        (void) mca_btl_verbs_module_progress(module);
    }
    if (module->sq_pending > 0) {
        opal_output_verbose(1, mca_btl_base_output,
                            "btl/verbs (%s): finalize: %zu sends still in flight after %u ms",
                            module->transport, module->sq_pending,
                            mca_btl_verbs_component.finalize_timeout_ms);
        /* What is left goes back with errors: a QP in the error state
         * flushes its work requests. */
        for (uint32_t r = 0; r < module->job_size; ++r) {
            mca_btl_verbs_endpoint_t *ep = module->endpoints[r];
            if (NULL != ep && ep->sq_posted > 0) {
                struct ibv_qp_attr attr = {.qp_state = IBV_QPS_ERR};
                (void) ibv_modify_qp(ep->qp, &attr, IBV_QP_STATE);
            }
        }
        deadline = opal_timer_ns() + 1000000000u;
        while (module->sq_pending > 0 && opal_timer_ns() < deadline) {
            (void) mca_btl_verbs_module_progress(module);
        }
    }
}

int mca_btl_verbs_finalize(mca_btl_base_module_t *btl)
{
    mca_btl_verbs_module_t *module = mca_btl_verbs_module(btl);
    module->finalizing = true;
    if (module->channel_fd >= 0) {
        (void) opal_progress_fd_unregister(module->channel_fd);
        module->channel_fd = -1;
    }
    if (module->async_fd >= 0) {
        (void) opal_progress_fd_unregister(module->async_fd);
        module->async_fd = -1;
    }
    if (module->connect_timer_fd >= 0) {
        (void) opal_progress_fd_unregister(module->connect_timer_fd);
        close(module->connect_timer_fd);
        module->connect_timer_fd = -1;
    }
    if (NULL != module->cq) {
        drain(module);
    }
    for (uint32_t r = 0; NULL != module->endpoints && r < module->job_size; ++r) {
        mca_btl_verbs_endpoint_t *ep = module->endpoints[r];
        if (NULL == ep) {
            continue;
        }
        if (NULL != ep->qp) {
            (void) ibv_destroy_qp(ep->qp);
        }
        if (NULL != ep->proc) {
            OBJ_RELEASE(ep->proc);
        }
        free(ep);
    }
    free(module->endpoints);
    module->endpoints = NULL;
    if (module->rcache_constructed) {
        OBJ_DESTRUCT(&module->rcache);
    }
    if (NULL != module->srq) {
        (void) ibv_destroy_srq(module->srq);
    }
    /* The SRQ is gone: its buffers are the module's again. */
    for (size_t i = 0; NULL != module->recv_all && i < module->srq_size; ++i) {
        mca_btl_verbs_frag_t *frag = module->recv_all[i];
        if (NULL != frag && frag->posted) {
            frag->posted = false;
            opal_free_list_return(&module->recv_frags, &frag->base.super);
        }
    }
    free(module->recv_all);
    module->recv_all = NULL;
    if (NULL != module->cq) {
        (void) ibv_destroy_cq(module->cq);
    }
    if (NULL != module->channel) {
        (void) ibv_destroy_comp_channel(module->channel);
    }
    if (module->lists_constructed) {
        /* The slabs' memory regions go with the lists, before the PD. */
        OBJ_DESTRUCT(&module->send_frags);
        OBJ_DESTRUCT(&module->recv_frags);
        OBJ_DESTRUCT(&module->rdma_ops);
        OBJ_DESTRUCT(&module->qpn_to_ep);
        OBJ_DESTRUCT(&module->lock);
    }
    if (NULL != module->pd) {
        (void) ibv_dealloc_pd(module->pd);
    }
    if (NULL != module->ctx) {
        (void) ibv_close_device(module->ctx);
    }
    for (unsigned i = 0; i < mca_btl_verbs_component.num_modules; ++i) {
        if (mca_btl_verbs_component.module[i] == module) {
            mca_btl_verbs_component.module[i] = NULL;
            mca_btl_verbs_component.modules[i] = NULL;
        }
    }
    free(module);
    return OPAL_SUCCESS;
}
