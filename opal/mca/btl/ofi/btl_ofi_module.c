/*
 * The module: its creation on an opened provider, the peers it reaches,
 * progress (the completion queue, the wait fd or timer) and finalize.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "opal/mca/btl/ofi/btl_ofi.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_pid.h"
#include "opal/util/opal_timer.h"

/* CQ entries read per fi_cq_read, and reads per progress call at most. */
#define POLL_BATCH  16
#define POLL_ROUNDS 4

/* ------------------------------------------------------ free-list hooks */

/* Registers a payload slab when the provider needs local buffers
 * registered (FI_MR_LOCAL); the items record the registration. Remote
 * read too: rxm's rendezvous lets the receiver read a large message from
 * the sender's buffer under the descriptor given with the send. */
static int slab_register(void *base, size_t size, void *context, void **registration)
{
    mca_btl_ofi_module_t *module = context;
    opal_common_ofi_mr_t *mr = malloc(sizeof(*mr));
    if (NULL == mr) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    int rc = opal_common_ofi_mr_register(&module->ofi, base, size,
                                         FI_SEND | FI_RECV | FI_READ | FI_WRITE, mr);
    if (OPAL_SUCCESS != rc) {
        free(mr);
        return rc;
    }
    *registration = mr;
    return OPAL_SUCCESS;
}

static void slab_deregister(void *base, size_t size, void *context, void *registration)
{
    (void) base;
    (void) size;
    (void) context;
    opal_common_ofi_mr_deregister(registration);
    free(registration);
}

static int frag_list_init(mca_btl_ofi_module_t *module, opal_free_list_t *list, size_t payload,
                          size_t initial, size_t max)
{
    bool reg = opal_common_ofi_needs_local_mr(&module->ofi);
    OBJ_CONSTRUCT(list, opal_free_list_t);
    return opal_free_list_init(list, sizeof(mca_btl_ofi_frag_t), OPAL_CACHE_LINE_SIZE,
                               OBJ_CLASS(mca_btl_ofi_frag_t), payload, OPAL_CACHE_LINE_SIZE,
                               initial, max, initial, reg ? slab_register : NULL,
                               reg ? slab_deregister : NULL, module);
}

/* ---------------------------------------------------------- progress */

static void handle_entry(mca_btl_ofi_module_t *module, const struct fi_cq_data_entry *entry)
{
    mca_btl_ofi_context_t *ctx = entry->op_context;
    switch (ctx->kind) {
        case MCA_BTL_OFI_CTX_SEND:
            (void) mca_btl_ofi_send_complete(
                module, MCA_BTL_OFI_CONTAINER(ctx, mca_btl_ofi_frag_t, ctx), OPAL_SUCCESS);
            break;
        case MCA_BTL_OFI_CTX_RECV:
            mca_btl_ofi_recv_complete(module, entry);
            break;
        case MCA_BTL_OFI_CTX_RDMA:
            mca_btl_ofi_rdma_complete(
                module, MCA_BTL_OFI_CONTAINER(ctx, mca_btl_ofi_rdma_op_t, ctx), OPAL_SUCCESS);
            break;
    }
}

/* An operation failed: the CQ's error entry says which and why. */
static void handle_error(mca_btl_ofi_module_t *module)
{
    struct fi_cq_err_entry entry;
    char text[256];
    if (OPAL_SUCCESS != opal_common_ofi_cq_readerr(&module->ofi, &entry, text, sizeof(text))) {
        return;
    }
    mca_btl_ofi_context_t *ctx = entry.op_context;
    bool recv_buf = NULL != ctx && (void *) ctx >= (void *) module->recv_bufs &&
                    (void *) ctx < (void *) (module->recv_bufs + module->recv_buf_count);
    if (NULL == ctx || (!recv_buf && MCA_BTL_OFI_CTX_MAGIC != ctx->magic)) {
        /* Not an operation of ours: the provider's own (a connection it
         * lost); what it meant for ours, it reports on ours. */
        opal_output_verbose(10, mca_btl_base_output, "ofi: %s: an internal operation failed: %s",
                            module->ofi.prov_name, text);
        return;
    }
    char what[320];
    switch (ctx->kind) {
        case MCA_BTL_OFI_CTX_SEND: {
            mca_btl_ofi_frag_t *frag = MCA_BTL_OFI_CONTAINER(ctx, mca_btl_ofi_frag_t, ctx);
            snprintf(what, sizeof(what), "a send to it failed: %s", text);
            mca_btl_ofi_peer_failed(module, frag->endpoint, what);
            (void) mca_btl_ofi_send_complete(module, frag, OPAL_ERR_UNREACH);
            break;
        }
        case MCA_BTL_OFI_CTX_RDMA: {
            mca_btl_ofi_rdma_op_t *op = MCA_BTL_OFI_CONTAINER(ctx, mca_btl_ofi_rdma_op_t, ctx);
            snprintf(what, sizeof(what), "an RDMA operation to it failed: %s", text);
            mca_btl_ofi_peer_failed(module, op->endpoint, what);
            mca_btl_ofi_rdma_complete(module, op, OPAL_ERR_UNREACH);
            break;
        }
        case MCA_BTL_OFI_CTX_RECV:
            mca_btl_ofi_recv_error(module, &entry, text);
            break;
    }
}

int mca_btl_ofi_module_progress(mca_btl_ofi_module_t *module)
{
    struct fi_cq_data_entry entries[POLL_BATCH];
    int events = 0;
    OPAL_THREAD_LOCK(&module->lock);
    if (OPAL_UNLIKELY(module->repost_pending)) {
        mca_btl_ofi_recv_repost(module);
    }
    for (int round = 0; round < POLL_ROUNDS; ++round) {
        ssize_t n = fi_cq_read(module->ofi.cq, entries, POLL_BATCH);
        if (n > 0) {
            for (ssize_t i = 0; i < n; ++i) {
                handle_entry(module, &entries[i]);
            }
            events += (int) n;
            if (n < POLL_BATCH) {
                break;
            }
        } else if (-FI_EAVAIL == n) {
            handle_error(module);
            ++events;
        } else {
            if (OPAL_UNLIKELY(-FI_EAGAIN != n)) {
                opal_common_ofi_error("btl/ofi", &module->ofi, "fi_cq_read", NULL, n);
            }
            break;
        }
    }
    /* Peers on this node are checked every so often while polling (the
     * timer covers a process that sleeps). */
    if (OPAL_UNLIKELY(0 == (++module->progress_calls & 1023u))) {
        mca_btl_ofi_liveness_check(module);
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    return events;
}

/* The CQ's wait fd fired (or its arming found work waiting). */
static int wait_fd_ready(int fd, uint32_t epoll_events, void *context)
{
    (void) fd;
    (void) epoll_events;
    return mca_btl_ofi_module_progress(context);
}

/* Before opal_progress_wait sleeps on the CQ's fd: libfabric signals the
 * fd only after fi_trywait said it is safe to block (it also drives the
 * provider's own connection and socket progress into the fd). Busy
 * polling never pays for it. */
static int wait_fd_arm(int fd, void *context)
{
    (void) fd;
    mca_btl_ofi_module_t *module = context;
    OPAL_THREAD_LOCK(&module->lock);
    int rc = opal_common_ofi_cq_trywait(&module->ofi);
    OPAL_THREAD_UNLOCK(&module->lock);
    return rc;
}

/* The timer fired: without a wait fd it stands in for one (progress);
 * either way it is when the local peers' liveness is checked. */
static int timer_ready(int fd, uint32_t epoll_events, void *context)
{
    (void) epoll_events;
    mca_btl_ofi_module_t *module = context;
    uint64_t expirations;
    ssize_t n = read(fd, &expirations, sizeof(expirations));
    (void) n;
    int events = 0;
    if (module->wait_fd_is_timer) {
        events = mca_btl_ofi_module_progress(module);
    }
    OPAL_THREAD_LOCK(&module->lock);
    mca_btl_ofi_liveness_check(module);
    OPAL_THREAD_UNLOCK(&module->lock);
    return events;
}

/* A periodic timer fd, registered with the progress engine. */
static int timer_open(mca_btl_ofi_module_t *module, uint64_t period_ns)
{
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (fd < 0) {
        return OPAL_ERR_IN_ERRNO;
    }
    struct itimerspec spec = {
        .it_interval = {.tv_sec = (time_t) (period_ns / 1000000000u),
                        .tv_nsec = (long) (period_ns % 1000000000u)},
    };
    spec.it_value = spec.it_interval;
    int rc = OPAL_SUCCESS;
    if (0 != timerfd_settime(fd, 0, &spec, NULL)) {
        rc = OPAL_ERR_IN_ERRNO;
    } else {
        rc = opal_progress_fd_register(fd, timer_ready, module);
    }
    if (OPAL_SUCCESS != rc) {
        close(fd);
        return rc;
    }
    module->timer_fd = fd;
    return OPAL_SUCCESS;
}

/* Hooks the module into opal_progress_wait: the CQ's wait fd when there
 * is one, and a timer (polling the CQ when there is no fd; checking the
 * local peers' liveness either way). */
static int wait_setup(mca_btl_ofi_module_t *module, char **why)
{
    const mca_btl_ofi_component_t *c = &mca_btl_ofi_component;
    int rc = OPAL_SUCCESS;
    module->wait_fd_is_timer = module->ofi.cq_fd < 0;
    if (!module->wait_fd_is_timer) {
        rc = opal_progress_fd_register_armed(module->ofi.cq_fd, wait_fd_ready, wait_fd_arm, module);
        if (OPAL_SUCCESS != rc) {
            goto fail;
        }
        module->wait_fd = module->ofi.cq_fd;
    } else {
        opal_output_verbose(20, mca_btl_base_output,
                            "ofi: %s: no wait fd (%s): a sleeping process polls every %u us",
                            module->ofi.prov_name, module->ofi.no_wait_fd_why, c->poll_interval_us);
    }
    uint64_t period_ns = 0;
    if (module->wait_fd_is_timer) {
        period_ns = (uint64_t) (c->poll_interval_us > 0 ? c->poll_interval_us : 1) * 1000u;
    } else if (c->liveness_interval_ms > 0) {
        period_ns = (uint64_t) c->liveness_interval_ms * 1000000u;
    }
    if (0 != period_ns) {
        rc = timer_open(module, period_ns);
        if (OPAL_SUCCESS != rc) {
            goto fail;
        }
    }
    return OPAL_SUCCESS;
fail:
    if (asprintf(why, "cannot watch its completions for opal_progress_wait: %s",
                 opal_strerror(rc)) < 0) {
        *why = NULL;
    }
    return rc;
}

static void wait_teardown(mca_btl_ofi_module_t *module)
{
    if (module->wait_fd >= 0) {
        (void) opal_progress_fd_unregister(module->wait_fd);
        module->wait_fd = -1;
    }
    if (module->timer_fd >= 0) {
        (void) opal_progress_fd_unregister(module->timer_fd);
        close(module->timer_fd);
        module->timer_fd = -1;
    }
}

/* ------------------------------------------------------------ creation */

/* btl_dump: the endpoint's sequence numbers each way, what waits for an
 * earlier message, and what the provider still owes a completion for. */
static void ofi_dump(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     char *buf, size_t size)
{
    mca_btl_ofi_module_t *module = mca_btl_ofi_module(btl);
    mca_btl_ofi_endpoint_t *ep = endpoint;
    OPAL_THREAD_LOCK(&module->lock);
    snprintf(buf, size,
             "%s; sent %" PRIu32 ", next expected %" PRIu32 ", held out of order %zu; posted "
             "sends not completed %u, injected since %u; outstanding %zu (put / get %zu)%s",
             ep->failed  ? "failed"
             : ep->added ? "added"
                         : "not added",
             ep->send_seq, ep->recv_seq, opal_list_get_size(&ep->held), ep->posted, ep->injected,
             opal_list_get_size(&ep->outstanding), ep->rdma_outstanding,
             module->repost_pending ? "; receive buffers wait to be posted again" : "");
    OPAL_THREAD_UNLOCK(&module->lock);
}

static int register_error(mca_btl_base_module_t *btl, mca_btl_base_module_error_cb_fn_t cbfunc)
{
    mca_btl_ofi_module(btl)->error_cb = cbfunc;
    return OPAL_SUCCESS;
}

int mca_btl_ofi_module_create(opal_common_ofi_ctx_t *ofi, mca_btl_ofi_module_t **out, char **why)
{
    const mca_btl_ofi_component_t *c = &mca_btl_ofi_component;
    int rc = OPAL_ERR_OUT_OF_RESOURCE;
    *why = NULL;
    mca_btl_ofi_module_t *module = calloc(1, sizeof(*module));
    if (NULL == module) {
        opal_common_ofi_ctx_close(ofi);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    module->super = mca_btl_ofi_module_template.super;
    module->ofi = *ofi;
    module->wait_fd = -1;
    module->timer_fd = -1;
    OBJ_CONSTRUCT(&module->lock, opal_recursive_mutex_t);
    OBJ_CONSTRUCT(&module->eager_frags, opal_free_list_t);
    OBJ_CONSTRUCT(&module->max_frags, opal_free_list_t);
    OBJ_CONSTRUCT(&module->rdma_ops, opal_free_list_t);
    OBJ_CONSTRUCT(&module->held, opal_free_list_t);
    OBJ_CONSTRUCT(&module->abandoned, opal_list_t);
    module->lists_constructed = true;

    mca_btl_base_module_t *btl = &module->super;
    btl->btl_add_procs = mca_btl_ofi_add_procs;
    btl->btl_del_procs = mca_btl_ofi_del_procs;
    btl->btl_finalize = mca_btl_ofi_finalize;
    btl->btl_register_error = register_error;
    btl->btl_dump = ofi_dump;
    btl->btl_alloc = mca_btl_ofi_alloc;
    btl->btl_free = mca_btl_ofi_free;
    btl->btl_prepare_src = mca_btl_ofi_prepare_src;
    btl->btl_send = mca_btl_ofi_send;
    btl->btl_sendi = 0 != (btl->btl_flags & MCA_BTL_FLAGS_SENDI) ? mca_btl_ofi_sendi : NULL;
    module->has_rma = 0 != (btl->btl_flags & MCA_BTL_FLAGS_RDMA);
    if (module->has_rma) {
        btl->btl_put = 0 != (btl->btl_flags & MCA_BTL_FLAGS_PUT) ? mca_btl_ofi_put : NULL;
        btl->btl_get = 0 != (btl->btl_flags & MCA_BTL_FLAGS_GET) ? mca_btl_ofi_get : NULL;
        btl->btl_register_mem = mca_btl_ofi_register_mem;
        btl->btl_deregister_mem = mca_btl_ofi_deregister_mem;
        btl->btl_flush = mca_btl_ofi_flush;
        btl->btl_registration_handle_size = sizeof(mca_btl_base_registration_handle_t);
        module->put_delivery_complete = true;
        module->get_delivery_complete = mca_btl_ofi_component.use_get_delivery_complete;
    } else {
        btl->btl_put_limit = 0;
        btl->btl_get_limit = 0;
        btl->btl_registration_handle_size = 0;
    }

    const opal_proc_job_info_t *job = opal_proc_job_info();
    module->my_rank = NULL != job ? job->my_name.vpid : 0;
    module->pid_space = opal_pid_space();
    module->job_size = NULL != job ? job->size : 1;
    module->endpoints = calloc(module->job_size, sizeof(*module->endpoints));
    /* The template's limits are the provider's (what goes on the wire);
     * upper layers get them less the sequence header. */
    module->seq_hdr = c->use_seq_hdr ? MCA_BTL_OFI_SEQ_HDR_SIZE : 0;
    if (btl->btl_eager_limit <= module->seq_hdr || btl->btl_max_send_size <= module->seq_hdr) {
        if (asprintf(why,
                     "%s: btl_ofi_eager_limit (%zu) and btl_ofi_max_send_size (%zu) must be "
                     "more than the %zu-byte sequence header this provider needs",
                     module->ofi.prov_name, btl->btl_eager_limit, btl->btl_max_send_size,
                     module->seq_hdr) < 0) {
            *why = NULL;
        }
        rc = OPAL_ERR_BAD_PARAM;
        goto fail;
    }
    btl->btl_eager_limit -= module->seq_hdr;
    btl->btl_max_send_size -= module->seq_hdr;
    module->inject_size = module->ofi.info->tx_attr->inject_size;
    if (module->inject_size > btl->btl_eager_limit + module->seq_hdr) {
        module->inject_size = btl->btl_eager_limit + module->seq_hdr;
    }
    if (module->inject_size > MCA_BTL_OFI_INJECT_MAX) {
        module->inject_size = MCA_BTL_OFI_INJECT_MAX;
    }
    module->multi_recv = c->use_multi_recv;
    if (c->inject_batch >= 0) {
        module->inject_batch = (unsigned) c->inject_batch;
    } else {
        /* See MCA_BTL_OFI_INJECT_BATCH. */
        bool bounds_injects =
            opal_common_ofi_provider_listed("shm,ofi_rxd", module->ofi.prov_name, NULL);
        module->inject_batch = bounds_injects ? 0 : MCA_BTL_OFI_INJECT_BATCH;
    }

    size_t max = c->free_list_max > 0 ? c->free_list_max : 1;
    rc = OPAL_ERR_OUT_OF_RESOURCE;
    if (NULL == module->endpoints ||
        OPAL_SUCCESS != frag_list_init(module, &module->eager_frags,
                                       btl->btl_eager_limit + module->seq_hdr, 32, max) ||
        OPAL_SUCCESS != frag_list_init(module, &module->max_frags,
                                       btl->btl_max_send_size + module->seq_hdr, 4,
                                       max / 16 > 4 ? max / 16 : 4) ||
        OPAL_SUCCESS != opal_free_list_init(&module->rdma_ops, sizeof(mca_btl_ofi_rdma_op_t),
                                            OPAL_CACHE_LINE_SIZE, OBJ_CLASS(mca_btl_ofi_rdma_op_t),
                                            0, 0, 32, max, 32, NULL, NULL, NULL) ||
        OPAL_SUCCESS != opal_free_list_init(&module->held, sizeof(mca_btl_ofi_held_t), 0,
                                            OBJ_CLASS(mca_btl_ofi_held_t), 0, 0, 16, 0, 16, NULL,
                                            NULL, NULL)) {
        if (asprintf(why, "%s: cannot allocate its descriptors", module->ofi.prov_name) < 0) {
            *why = NULL;
        }
        goto fail;
    }
    rc = mca_btl_ofi_recv_post_all(module);
    if (OPAL_SUCCESS != rc) {
        if (asprintf(why, "%s: cannot post its receive buffers: %s", module->ofi.prov_name,
                     opal_strerror(rc)) < 0) {
            *why = NULL;
        }
        goto fail;
    }
    rc = wait_setup(module, why);
    if (OPAL_SUCCESS != rc) {
        goto fail;
    }
    *out = module;
    return OPAL_SUCCESS;

fail:
    (void) mca_btl_ofi_finalize(&module->super);
    return OPAL_SUCCESS != rc ? rc : OPAL_ERR_OUT_OF_RESOURCE;
}

/* -------------------------------------------------------------- procs */

/* add_procs' step for one peer: its endpoint, now in the caller's use. */
static struct mca_btl_base_endpoint_t *add_rank(void *module, uint32_t rank,
                                                mca_btl_base_reason_t *why)
{
    mca_btl_ofi_endpoint_t *ep = mca_btl_ofi_endpoint_get(module, rank, why);
    if (NULL != ep) {
        ep->added = true;
    }
    return ep;
}

int mca_btl_ofi_add_procs(mca_btl_base_module_t *btl, size_t nprocs, opal_proc_t **procs,
                          struct mca_btl_base_endpoint_t **endpoints, opal_bitmap_t *reachable,
                          mca_btl_base_reason_t *reasons)
{
    mca_btl_ofi_module_t *module = mca_btl_ofi_module(btl);
    OPAL_THREAD_LOCK(&module->lock);
    int rc = mca_btl_base_add_procs_by_rank(module, module->my_rank, nprocs, procs, endpoints,
                                            reachable, reasons, add_rank);
    OPAL_THREAD_UNLOCK(&module->lock);
    return rc;
}

int mca_btl_ofi_del_procs(mca_btl_base_module_t *btl, size_t nprocs, opal_proc_t **procs,
                          struct mca_btl_base_endpoint_t **endpoints)
{
    (void) procs;
    mca_btl_ofi_module_t *module = mca_btl_ofi_module(btl);
    OPAL_THREAD_LOCK(&module->lock);
    /* The endpoint stays (its sequence numbers must go on if the peer is
     * added again); only the caller's use of it ends. */
    for (size_t i = 0; i < nprocs; ++i) {
        if (NULL != endpoints && NULL != endpoints[i]) {
            endpoints[i]->added = false;
        }
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    return OPAL_SUCCESS;
}

/* Whether this process owes ep its goodbye: it lives, and the two have
 * exchanged messages (a peer this process never spoke with is not told:
 * in a large job that would be a connection to every rank at finalize). */
static bool bye_due(const mca_btl_ofi_endpoint_t *ep)
{
    return !ep->failed && !ep->bye_sent && (0 != ep->send_seq || 0 != ep->recv_seq);
}

/* Whether some send or RDMA operation to a live peer is still owed a
 * completion, or a peer still needs its goodbye (then *bye_pending). */
static bool quiescing(mca_btl_ofi_module_t *module, bool *bye_pending)
{
    bool busy = false;
    *bye_pending = false;
    for (uint32_t r = 0; NULL != module->endpoints && r < module->job_size; ++r) {
        mca_btl_ofi_endpoint_t *ep = module->endpoints[r];
        if (NULL == ep || ep->failed) {
            continue;
        }
        if (bye_due(ep)) {
            *bye_pending = true;
            busy = true;
        } else if (!opal_list_is_empty(&ep->outstanding)) {
            busy = true;
        }
    }
    return busy;
}

/* Before the endpoint closes. An inject is done for this process as soon
 * as the provider copied it, but the provider may still hold it: rxd over
 * udp until the peer acknowledges (it retransmits only while this process
 * polls), tcp until the socket takes it. Closing at once would lose what
 * the peer has not got yet (a barrier's last message, say). So every
 * peer this process exchanged messages with gets a goodbye, posted with a
 * completion after everything else (the peer then knows this process
 * finalized rather than died), and the CQ is polled until every send to a
 * live peer completed, for at most btl_ofi_finalize_timeout. */
static void quiesce(mca_btl_ofi_module_t *module)
{
    /* Not over verbs: an inject is on the queue pair once posted, and
     * polling rxm over verbs (libfabric 1.17) while the peers disconnect
     * makes its fi_close crash afterwards (the soft-RoCE guest's cases,
     * every run). Peers over verbs therefore hear no goodbye and take
     * this process's exit for a failure. tcp needs it: its injects may
     * wait in the provider for the socket (without it, survivors of the
     * killed case waited for a finished peer's barrier message). */
    if (NULL == module->ofi.ep || NULL == module->endpoints ||
        opal_common_ofi_provider_listed("verbs", module->ofi.prov_name, NULL)) {
        return;
    }
    uint64_t deadline =
        opal_timer_ns() + (uint64_t) mca_btl_ofi_component.finalize_timeout_ms * 1000000u;
    bool bye_pending;
    OPAL_THREAD_LOCK(&module->lock);
    while (quiescing(module, &bye_pending)) {
        if (opal_timer_ns() >= deadline) {
            opal_output_verbose(1, mca_btl_base_output,
                                "btl/ofi (%s): finalize: sends still in flight after %u ms",
                                module->ofi.prov_name, mca_btl_ofi_component.finalize_timeout_ms);
            break;
        }
        for (uint32_t r = 0; bye_pending && r < module->job_size; ++r) {
            mca_btl_ofi_endpoint_t *ep = module->endpoints[r];
            if (NULL != ep && bye_due(ep)) {
                /* Busy: tried again after polling. */
                (void) mca_btl_ofi_send_bye(module, ep);
            }
        }
        (void) mca_btl_ofi_module_progress(module);
    }
    OPAL_THREAD_UNLOCK(&module->lock);
}

int mca_btl_ofi_finalize(mca_btl_base_module_t *btl)
{
    mca_btl_ofi_module_t *module = mca_btl_ofi_module(btl);
    if (mca_btl_ofi_component.module == module) {
        mca_btl_ofi_component.module = NULL;
        mca_btl_ofi_component.modules[0] = NULL;
    }
    module->finalizing = true;
    if (0 != module->recv_retired) {
        opal_output_verbose(10, mca_btl_base_output,
                            "ofi: %s: %zu receive buffers were set aside, %zu came back",
                            module->ofi.prov_name, module->recv_retired, module->recv_recovered);
    }
    quiesce(module);
    wait_teardown(module);
    /* Closing the endpoint cancels the posted receives and drops what is
     * in flight: the provider owns no buffer after it. */
    if (NULL != module->ofi.ep) {
        int rc = fi_close(&module->ofi.ep->fid);
        if (0 != rc) {
            opal_common_ofi_error("btl/ofi", &module->ofi, "closing the endpoint", NULL, rc);
        }
        module->ofi.ep = NULL;
    }
    if (NULL != module->endpoints) {
        mca_btl_ofi_endpoints_release(module);
        free(module->endpoints);
    }
    mca_btl_ofi_recv_release(module);
    if (module->lists_constructed) {
        OBJ_DESTRUCT(&module->abandoned);
        OBJ_DESTRUCT(&module->held);
        OBJ_DESTRUCT(&module->rdma_ops);
        OBJ_DESTRUCT(&module->max_frags);
        OBJ_DESTRUCT(&module->eager_frags);
    }
    opal_common_ofi_ctx_close(&module->ofi);
    OBJ_DESTRUCT(&module->lock);
    free(module);
    return OPAL_SUCCESS;
}
