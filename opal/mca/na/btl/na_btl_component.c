/*
 * na/btl's component and class lifecycle: which info strings it serves,
 * opening the BTLs (and, outside a job, the standalone runtime), the
 * limits it advertises, progress, and the BTLs' error callback.
 */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/base/base.h"
#include "opal/mca/na/btl/na_btl.h"
#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_progress.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_timer.h"

na_btl_class_t *mca_na_btl_active = NULL;

static bool btl_check_protocol(const opal_na_info_t *info)
{
    return 0 == strcmp(info->class_name, "btl") && NULL == info->protocol_name;
}

/* ------------------------------------------------------------- limits */

static size_t btl_max_unexpected(const opal_na_class_t *cls)
{
    return ((const na_btl_class_t *) cls->plugin)->max_unexpected;
}

static size_t btl_max_expected(const opal_na_class_t *cls)
{
    return ((const na_btl_class_t *) cls->plugin)->max_expected;
}

static opal_na_tag_t btl_max_tag(const opal_na_class_t *cls)
{
    (void) cls;
    return UINT32_MAX;
}

/* The largest payload every send module takes in one message: a message
 * goes to whichever module reaches its peer, so the smallest one bounds
 * what na/btl can promise. */
static size_t smallest_send_limit(void)
{
    size_t limit = SIZE_MAX;
    mca_btl_base_selected_module_t *sm;
    OPAL_LIST_FOREACH (sm, &mca_btl_base_modules_initialized, mca_btl_base_selected_module_t) {
        const mca_btl_base_module_t *btl = sm->btl_module;
        if (0 != (btl->btl_flags & MCA_BTL_FLAGS_SEND) && btl->btl_max_send_size < limit) {
            limit = btl->btl_max_send_size;
        }
    }
    return SIZE_MAX == limit || limit < NA_BTL_HDR_SIZE ? 0 : limit - NA_BTL_HDR_SIZE;
}

/* ----------------------------------------------------------- failures */

/* The BTLs' error callback (progress thread): a peer that died, or that
 * finalized (its BTLs delivered what it sent first), fails what waits for
 * it, and the class's user hears it is gone. Only a death marks the
 * address failed for good: a process that finalized may open na again. */
static void btl_error_cb(struct mca_btl_base_module_t *btl, int32_t flags,
                         const opal_proc_t *errproc, const char *info)
{
    (void) btl;
    na_btl_class_t *nb = mca_na_btl_active;
    const bool closed = 0 != (flags & MCA_BTL_ERROR_FLAGS_PEER_CLOSED);
    if (NULL == nb || NULL == errproc ||
        (!closed && 0 == (flags & MCA_BTL_ERROR_FLAGS_PEER_FAILED))) {
        return;
    }
    if (NULL == info) {
        info = closed ? "a peer finalized" : "a peer failed";
    }
    opal_output_verbose(closed ? 10 : 1, opal_na_base_output,
                        "na/btl: %s: failing what waits for rank %u", info,
                        errproc->proc_name.vpid);
    OPAL_THREAD_LOCK(&nb->lock);
    opal_na_addr_t *addr = na_btl_addr_for_rank(nb, errproc->proc_name.vpid);
    OPAL_THREAD_UNLOCK(&nb->lock);
    if (NULL != addr) {
        if (!closed) {
            atomic_store_explicit(&addr->failed, true, memory_order_release);
        }
        na_btl_msg_peer_failed(nb, addr);
        opal_na_base_peer_gone(nb->cls, addr, closed, info);
        na_btl_addr_free(nb->cls, addr);
    }
    if (nb->own_runtime) {
        na_btl_rte_forget(errproc->proc_name.vpid);
    }
}

/* ---------------------------------------------------------- lifecycle */

static int btl_initialize(opal_na_class_t *cls, const opal_na_info_t *info, bool listen)
{
    (void) listen;
    if (NULL != info->host_name) {
        opal_output(0,
                    "na/btl: \"btl://%s\": na/btl listens wherever its BTLs do, it takes no "
                    "host",
                    info->host_name);
        return OPAL_ERR_BAD_PARAM;
    }
    if (NULL != mca_na_btl_active) {
        opal_output(0, "na/btl: a class is open already (the BTL tags are the process's: one "
                       "na/btl class per process)");
        return OPAL_ERR_EXISTS;
    }
    na_btl_class_t *nb = calloc(1, sizeof(*nb));
    if (NULL == nb) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    OBJ_CONSTRUCT(&nb->lock, opal_mutex_t);
    nb->cls = cls;
    bool btl_up = false, msg_up = false;
    int rc = OPAL_SUCCESS;
    if (NULL == opal_proc_job_info()) {
        rc = na_btl_rte_install(&nb->own_runtime);
        if (OPAL_SUCCESS != rc) {
            goto out;
        }
    }
    rc = na_btl_msg_init(nb);
    if (OPAL_SUCCESS != rc) {
        goto out;
    }
    msg_up = true;
    rc = mca_btl_base_init(false, opal_using_threads());
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "na/btl: no BTL could be opened: %s", opal_strerror(rc));
        goto out;
    }
    btl_up = true;
    (void) mca_btl_base_register_error_cb(btl_error_cb);
    const opal_proc_job_info_t *job = opal_proc_job_info();
    nb->jobid = job->my_name.jobid;
    nb->my_rank = job->my_name.vpid;
    if (nb->own_runtime) {
        /* The BTLs published their addresses in btl_init: that is the
         * card this process's URI carries. */
        rc = na_btl_rte_card(&nb->card, &nb->card_size);
        if (OPAL_SUCCESS != rc) {
            goto out;
        }
    }
    size_t limit = smallest_send_limit();
    if (0 == limit) {
        opal_output(0, "na/btl: no BTL that was opened sends messages");
        rc = OPAL_ERR_NOT_AVAILABLE;
        goto out;
    }
    nb->max_unexpected = limit;
    nb->max_expected = limit;
    if (0 != info->init->max_unexpected_size && info->init->max_unexpected_size < limit) {
        nb->max_unexpected = info->init->max_unexpected_size;
    }
    if (0 != info->init->max_expected_size && info->init->max_expected_size < limit) {
        nb->max_expected = info->init->max_expected_size;
    }
    OPAL_THREAD_LOCK(&nb->lock);
    nb->self = na_btl_addr_for_rank(nb, nb->my_rank);
    OPAL_THREAD_UNLOCK(&nb->lock);
    if (NULL == nb->self) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    cls->plugin = nb;
    mca_na_btl_active = nb;
    opal_output_verbose(MCA_BASE_VERBOSE_COMPONENT, opal_na_base_output,
                        "na/btl: rank %u of job %u%s; messages up to %zu bytes", nb->my_rank,
                        nb->jobid, nb->own_runtime ? " (the node's standalone job)" : "",
                        nb->max_unexpected);
    return OPAL_SUCCESS;
out:
    na_btl_addr_table_free(nb);
    if (msg_up) {
        na_btl_msg_fini(nb);
    }
    if (btl_up) {
        (void) mca_btl_base_finalize();
    }
    if (nb->own_runtime) {
        na_btl_rte_uninstall();
    }
    free(nb->card);
    OBJ_DESTRUCT(&nb->lock);
    free(nb);
    return rc;
}

static int btl_finalize(opal_na_class_t *cls)
{
    na_btl_class_t *nb = cls->plugin;
    mca_na_btl_active = NULL;
    na_btl_msg_fini(nb);
    /* Peers go before the BTLs close: their endpoints belong to them. */
    na_btl_addr_table_free(nb);
    (void) mca_btl_base_finalize();
    if (nb->own_runtime) {
        na_btl_rte_uninstall();
    }
    free(nb->card);
    OBJ_DESTRUCT(&nb->lock);
    free(nb);
    cls->plugin = NULL;
    return OPAL_SUCCESS;
}

/* ----------------------------------------------------------- progress */

enum { WAIT_CLOCK_EVERY = 8 };

static int btl_poll(opal_na_class_t *cls, opal_na_context_t *ctx, unsigned int *count)
{
    (void) ctx;
    na_btl_class_t *nb = cls->plugin;
    uint64_t before = atomic_load_explicit(&nb->completions, memory_order_relaxed);
    opal_progress();
    if (NULL != nb->pending_sends.head) {
        (void) na_btl_msg_progress(nb);
    }
    if (NULL != nb->pending_rma.head) {
        (void) na_btl_rma_progress(nb);
    }
    *count = (unsigned int) (atomic_load_explicit(&nb->completions, memory_order_relaxed) - before);
    return OPAL_SUCCESS;
}

/* Blocks through the progress engine, after na_base_wait_spin_us of
 * polling. The clock is read only once a poll found nothing (a busy
 * server's clock reads were a tenth of its time), and then every
 * WAIT_CLOCK_EVERY idle polls: a deadline is noticed that many polls late
 * at most, never early. opal_progress_wait sleeps on the fds the BTLs registered
 * (btl/ofi's completion channel, btl/verbs' one, btl/sm's eventfd) until
 * one fires or the slice ends. btl/sm sleeps only
 * in its blocking mode (btl_sm_blocking, which every local process of the
 * job must share); otherwise its eventfd stays readable and this spins
 * through epoll, as the base's spin would. A busy_wait class, or one with
 * sends or RMA queued for resources, never sleeps. */
static int btl_poll_wait(opal_na_class_t *cls, opal_na_context_t *ctx, unsigned int timeout_ms,
                         unsigned int *count)
{
    na_btl_class_t *nb = cls->plugin;
    uint64_t before = atomic_load_explicit(&nb->completions, memory_order_relaxed);
    uint64_t deadline = 0, spin_until = 0;
    int rc = OPAL_SUCCESS;
    for (unsigned int idle = 0;; ++idle) {
        unsigned int n = 0;
        rc = btl_poll(cls, ctx, &n);
        uint64_t done = atomic_load_explicit(&nb->completions, memory_order_relaxed) - before;
        if (OPAL_SUCCESS != rc || done > 0) {
            *count = (unsigned int) done;
            return rc;
        }
        if (0 != idle % WAIT_CLOCK_EVERY) {
            continue;
        }
        uint64_t now = opal_timer_ns();
        if (0 == idle) {
            deadline = now + (uint64_t) timeout_ms * 1000000u;
            spin_until = now + (uint64_t) opal_na_base_wait_spin_us * 1000u;
        }
        if (now >= deadline) {
            *count = 0;
            return OPAL_ERR_TIMEOUT;
        }
        if (cls->init_info.busy_wait || now < spin_until || NULL != nb->pending_sends.head ||
            NULL != nb->pending_rma.head) {
            continue;
        }
        int waited = opal_progress_wait((int64_t) (deadline - now));
        if (waited < 0) {
            *count = 0;
            return waited;
        }
    }
}

/* ------------------------------------------------------------ the table */

const opal_na_class_ops_t mca_na_btl_ops = {
    .name = "btl",
    .op_size = sizeof(na_btl_op_t),
    .initialize = btl_initialize,
    .finalize = btl_finalize,
    .cleanup = na_btl_cleanup,
    .context_create = na_btl_context_create,
    .context_destroy = na_btl_context_destroy,
    .addr_lookup = na_btl_addr_lookup,
    .addr_self = na_btl_addr_self,
    .addr_dup = na_btl_addr_dup,
    .addr_free = na_btl_addr_free,
    .addr_cmp = na_btl_addr_cmp,
    .addr_is_self = na_btl_addr_is_self,
    .addr_to_string = na_btl_addr_to_string,
    .addr_get_serialize_size = na_btl_addr_get_serialize_size,
    .addr_serialize = na_btl_addr_serialize,
    .addr_deserialize = na_btl_addr_deserialize,
    .msg_get_max_unexpected_size = btl_max_unexpected,
    .msg_get_max_expected_size = btl_max_expected,
    .msg_get_max_tag = btl_max_tag,
    .msg_send_unexpected = na_btl_send_unexpected,
    .msg_recv_unexpected = na_btl_recv_unexpected,
    .msg_send_expected = na_btl_send_expected,
    .msg_recv_expected = na_btl_recv_expected,
    .msg_inject_unexpected = na_btl_inject_unexpected,
    .mem_handle_create = na_btl_mem_handle_create,
    .mem_handle_create_segments = na_btl_mem_handle_create_segments,
    .mem_handle_get_max_segments = na_btl_mem_handle_get_max_segments,
    .mem_handle_free = na_btl_mem_handle_free,
    .mem_handle_get_size = na_btl_mem_handle_get_size,
    .mem_register = na_btl_mem_register,
    .mem_deregister = na_btl_mem_deregister,
    .mem_handle_get_serialize_size = na_btl_mem_handle_get_serialize_size,
    .mem_handle_serialize = na_btl_mem_handle_serialize,
    .mem_handle_deserialize = na_btl_mem_handle_deserialize,
    .put = na_btl_put,
    .get = na_btl_get,
    .rma_piece_max = na_btl_rma_piece_max,
    .poll = btl_poll,
    .poll_wait = btl_poll_wait,
    .cancel = na_btl_cancel,
};

const opal_na_base_component_t mca_na_btl_component = {
    .na_version =
        {
            OPAL_NA_BASE_VERSION,
            MCA_BASE_COMPONENT_NAME("btl", 1, 0, 0),
        },
    .na_protocols = "btl (over the BTLs: self, sm, ofi; peers by rank in a job or by business "
                    "card outside one)",
    .na_check_protocol = btl_check_protocol,
    .na_ops = &mca_na_btl_ops,
};
