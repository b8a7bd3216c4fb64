/*
 * btl/ofi's lifecycle: register (its variables, the standard ones and
 * common/ofi's), open, init (choose a provider, open it, publish the
 * address), progress, close.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/btl/ofi/btl_ofi.h"
#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

/* An internal boolean for tests (not shown by opal_info below level 9). */
static int register_internal(const char *name, const char *description, bool *storage)
{
    int index = mca_base_component_var_register(
        &mca_btl_ofi_component.super.btl_version, name, description, MCA_BASE_VAR_TYPE_BOOL, NULL,
        MCA_BASE_VAR_FLAG_INTERNAL, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_LOCAL, storage);
    return index < 0 ? index : OPAL_SUCCESS;
}

static int ofi_register(void);
/* Whether the user gave btl_ofi_<name> a value. */
static bool user_set(const char *name)
{
    const mca_base_var_t *var = NULL;
    int index = mca_base_var_find(NULL, "btl", "ofi", name);
    return index >= 0 && OPAL_SUCCESS == mca_base_var_get(index, &var) &&
           MCA_BASE_VAR_SOURCE_DEFAULT != var->mbv_source;
}

/* Lowers the largest message to cap bytes unless the user chose it, and
 * the eager limit and RDMA pipeline sizes that must not exceed it (the
 * size from which the upper layer gets instead only when lower_min_rdma). */
static void cap_message_size(mca_btl_base_module_t *tmpl, size_t cap, bool lower_min_rdma)
{
    if (tmpl->btl_max_send_size > cap && !user_set("max_send_size")) {
        tmpl->btl_max_send_size = cap;
    }
    if (tmpl->btl_eager_limit > tmpl->btl_max_send_size && !user_set("eager_limit")) {
        tmpl->btl_eager_limit = tmpl->btl_max_send_size;
    }
    if (tmpl->btl_rdma_pipeline_send_length > tmpl->btl_max_send_size &&
        !user_set("rdma_pipeline_send_length")) {
        tmpl->btl_rdma_pipeline_send_length = tmpl->btl_max_send_size;
    }
    if (lower_min_rdma && tmpl->btl_min_rdma_pipeline_size > tmpl->btl_max_send_size &&
        !user_set("min_rdma_pipeline_size")) {
        tmpl->btl_min_rdma_pipeline_size = tmpl->btl_max_send_size;
    }
}

/* rxm (libfabric 1.17) sends a message larger than its eager size in
 * segments or by its own rendezvous, and it crashes when a buffer posted
 * later matches such a message from a peer that has died (in fi_recv;
 * the killed-peer case, every run over verbs, most in the sequence
 * header mode over tcp). So by default nothing larger than its eager
 * size goes as one message: larger data goes in fragments, or by a get
 * from the upper layer where there is RMA. The eager size is
 * FI_OFI_RXM_BUFFER_SIZE (16384 unless set) less rxm's own header,
 * bounded here with room to spare. Values the user gave stay. */
static void rxm_limits(mca_btl_base_module_t *tmpl, bool has_get)
{
    size_t buffer = 16384;
    const char *env = getenv("FI_OFI_RXM_BUFFER_SIZE");
    if (NULL != env) {
        char *end = NULL;
        unsigned long long v = strtoull(env, &end, 10);
        if (end != env && '\0' == *end && v > 1024) {
            buffer = (size_t) v;
        }
    }
    cap_message_size(tmpl, buffer - 512, has_get);
}

/* shm sends a message larger than its inject size by having the receiver
 * read it from the sender with process_vm_readv (CMA), which costs about
 * 2 us before the first byte here; one of its inject size is copied
 * through shared memory by both sides at once. Fragments of the inject
 * size carried 16 KiB in 2.0 us against 4.7 us as one message, and 64 KiB
 * in 7.5 us against 8.5 us (opal_perf latency, sent in place). So by
 * default shm's messages are at most its inject size. A get with
 * FI_DELIVERY_COMPLETE is copied by both processes too, and beat the
 * fragments from 16 KiB up (1.6 us against 1.9; 64 KiB in 2.8 us): the
 * upper layer gets from there (btl_ofi_min_rdma_pipeline_size) when gets
 * ask for it. Values the user gave stay. */
#define SHM_MIN_GET_SIZE 16384
static void shm_limits(mca_btl_base_module_t *tmpl, size_t inject_size, bool get_dc)
{
    if (inject_size >= 1024) {
        cap_message_size(tmpl, inject_size, false);
    }
    if (get_dc && tmpl->btl_min_rdma_pipeline_size > SHM_MIN_GET_SIZE &&
        !user_set("min_rdma_pipeline_size")) {
        tmpl->btl_min_rdma_pipeline_size = SHM_MIN_GET_SIZE;
    }
}

/* What mcarun hands every rank: the prefix of the shared-memory files it
 * removes when the job ends (orte/util/orte_launcher_env.h; opal does
 * not include orte). */
#define OFI_SHM_PREFIX_ENV "OPAL_ORTE_SHM_PREFIX"

/* The name of this process's shm endpoint (its /dev/shm file) under the
 * launcher's prefix, so that the launcher removes it when the process
 * dies before libfabric could; NULL without a usable prefix (the
 * provider's own name then, whose stale files common/ofi sweeps). */
static const char *shm_name(const opal_proc_job_info_t *job, char *name, size_t size)
{
    const char *prefix = getenv(OFI_SHM_PREFIX_ENV);
    if (NULL == job || NULL == prefix || '\0' == prefix[0] || NULL != strchr(prefix, '/') ||
        strlen(prefix) > 64) {
        return NULL;
    }
    int n = snprintf(name, size, "%sofi_shm.%" PRIu32, prefix, job->my_name.vpid);
    return n > 0 && (size_t) n < size ? name : NULL;
}

static int ofi_open(void);
static int ofi_close(void);
static mca_btl_base_module_t **ofi_init(int *num_btls, bool enable_progress_threads,
                                        bool enable_mpi_threads);
static int ofi_progress(void);

mca_btl_ofi_component_t mca_btl_ofi_component = {
    .super =
        {
            .btl_version =
                {
                    MCA_BTL_BASE_VERSION,
                    MCA_BASE_COMPONENT_NAME("ofi", 1, 0, 0),
                    .mca_register_component_params = ofi_register,
                    .mca_open_component = ofi_open,
                    .mca_close_component = ofi_close,
                    /* libfabric's providers install memory hooks and
                     * threads that do not survive being unmapped and
                     * mapped again within one process (libfabric itself
                     * is pinned, see opal_common_ofi_load). */
                    .mca_component_flags = MCA_BASE_COMPONENT_FLAG_ALWAYS_LOADED,
                },
            .btl_init = ofi_init,
            .btl_progress = ofi_progress,
        },
};

mca_btl_ofi_module_t mca_btl_ofi_module_template;

/* What every provider can do through this component; the provider's own
 * limits narrow it at init (no FI_RMA: no put / get). */
#define OFI_CAPABILITIES                                                                           \
    (MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_SENDI | MCA_BTL_FLAGS_PUT | MCA_BTL_FLAGS_GET |            \
     MCA_BTL_FLAGS_SEND_INPLACE)

static int register_own(const char *name, const char *description, mca_base_var_type_t type,
                        int level, void *storage)
{
    int index = mca_base_component_var_register(&mca_btl_ofi_component.super.btl_version, name,
                                                description, type, NULL, MCA_BASE_VAR_FLAG_NONE,
                                                level, MCA_BASE_VAR_SCOPE_LOCAL, storage);
    return index < 0 ? index : OPAL_SUCCESS;
}

static int ofi_register(void)
{
    mca_btl_ofi_component_t *c = &mca_btl_ofi_component;
    int rc = opal_common_ofi_register(&c->super.btl_version);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }

    mca_btl_base_module_t *m = &mca_btl_ofi_module_template.super;
    memset(&mca_btl_ofi_module_template, 0, sizeof(mca_btl_ofi_module_template));
    m->btl_component = &c->super;
    /* Clamped at init to what the provider allows (max_msg_size). */
    m->btl_eager_limit = 16 * 1024;
    m->btl_max_send_size = 256 * 1024;
    m->btl_rdma_pipeline_send_length = 256 * 1024;
    m->btl_rdma_pipeline_frag_size = 4 * 1024 * 1024;
    m->btl_min_rdma_pipeline_size = 256 * 1024;
    m->btl_put_limit = (size_t) 1 << 30;
    m->btl_get_limit = (size_t) 1 << 30;
    m->btl_put_alignment = 1;
    m->btl_get_alignment = 1;
    m->btl_exclusivity = MCA_BTL_EXCLUSIVITY_DEFAULT;
    m->btl_latency = 10;
    m->btl_bandwidth = 10000;
    m->btl_flags = OFI_CAPABILITIES;
    rc = mca_btl_base_param_register(&c->super.btl_version, m);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }

    c->multi_recv = -1;
    rc = register_own("multi_recv",
                      "Receive into multi-receive buffers when the provider has FI_MULTI_RECV: 1 "
                      "yes, 0 no (one message per posted buffer), -1 yes except with shm, whose "
                      "multi-receive path costs a few hundred nanoseconds per message, and with "
                      "ofi_rxm (libfabric 1.17), which lets a message land inside a rendezvous "
                      "message of another sender in the same buffer",
                      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, &c->multi_recv);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    c->get_delivery_complete = -1;
    rc = register_own("get_delivery_complete",
                      "Ask for FI_DELIVERY_COMPLETE on gets: 1 yes, 0 no, -1 with shm only, "
                      "whose gets then go by its segmented copy through shared memory, done by "
                      "both processes at once (the peer copies out while it polls), instead "
                      "of by CMA in the getting process alone: 1 MiB in 37 us against 75 here. "
                      "Such a get completes only while the peer polls",
                      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, &c->get_delivery_complete);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    c->inject_batch = -1;
    rc = register_own("inject_batch",
                      "Most messages injected (sent without a completion) in a row to one peer "
                      "before one is sent with a completion, which bounds what a peer that does "
                      "not read can pile up (0: no limit, for providers that bound injects "
                      "themselves; -1: 0 for shm and udp;ofi_rxd, 64 for the others)",
                      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_6, &c->inject_batch);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    c->force_mr_local = false;
    rc =
        register_internal("force_mr_local",
                          "Register every local buffer and pass its descriptor, as a provider "
                          "demanding FI_MR_LOCAL needs, whatever the provider demands (for testing "
                          "that path on providers that do not demand it)",
                          &c->force_mr_local);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    c->force_seq_header = false;
    rc =
        register_internal("force_seq_header",
                          "Carry each message's sequence number in a 4-byte header in front of its "
                          "payload, as for a provider with only 4 bytes of remote CQ data (rxm "
                          "over verbs), whatever the provider offers (for testing that path on "
                          "providers that do not need it)",
                          &c->force_seq_header);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    c->recv_buffer_size = 0;
    rc = register_own("recv_buffer_size",
                      "Bytes of each multi-receive buffer (0: four times btl_ofi_max_send_size, "
                      "at least 1 MiB); without FI_MULTI_RECV each buffer holds one message of "
                      "btl_ofi_max_send_size bytes",
                      MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_5, &c->recv_buffer_size);
    if (OPAL_SUCCESS == rc) {
        c->recv_buffers = 0;
        rc = register_own("recv_buffers",
                          "Receive buffers kept posted (0: 4 multi-receive buffers, or 16 "
                          "single-message buffers without FI_MULTI_RECV)",
                          MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_5, &c->recv_buffers);
    }
    if (OPAL_SUCCESS == rc) {
        c->cq_size = 0;
        rc = register_own("cq_size", "Entries of the completion queue (0: the provider's default)",
                          MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_6, &c->cq_size);
    }
    if (OPAL_SUCCESS == rc) {
        c->wait_fd = true;
        rc = register_own("wait_fd",
                          "Give the completion queue a wait fd (when the provider has one) so "
                          "that an idle process sleeps in opal_progress_wait until a message "
                          "comes; false saves the provider's signalling on every completion (a "
                          "few microseconds with tcp;ofi_rxm) and polls on a timer instead",
                          MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_4, &c->wait_fd);
    }
    if (OPAL_SUCCESS == rc) {
        c->poll_interval_us = 1000;
        rc = register_own("poll_interval",
                          "Microseconds between polls of the completion queue while the process "
                          "sleeps in opal_progress_wait, when there is no wait fd",
                          MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_5, &c->poll_interval_us);
    }
    if (OPAL_SUCCESS == rc) {
        c->liveness_interval_ms = 100;
        rc =
            register_own("liveness_interval",
                         "Milliseconds between checks that the peers on this node still run "
                         "(a dead peer is reported to the error callback; 0: never check)",
                         MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_5, &c->liveness_interval_ms);
    }
    if (OPAL_SUCCESS == rc) {
        c->free_list_max = 1024;
        rc = register_own("free_list_max",
                          "Most send descriptors of each size, and RDMA operations, in flight",
                          MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_6, &c->free_list_max);
    }
    if (OPAL_SUCCESS == rc) {
        c->finalize_timeout_ms = 5000;
        rc = register_own(
            "finalize_timeout",
            "Most milliseconds finalize waits for the sends in flight to live peers to "
            "complete (not over verbs) before it closes the endpoint (what is left "
            "is called back with an error)",
            MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_6, &c->finalize_timeout_ms);
    }
    return rc;
}

static int ofi_open(void)
{
    mca_btl_ofi_component.module = NULL;
    mca_btl_ofi_component.modules[0] = NULL;
    return OPAL_SUCCESS;
}

static int ofi_close(void)
{
    /* The base finalizes modules before closing; this only covers an init
     * whose module the base never took. */
    if (NULL != mca_btl_ofi_component.module) {
        (void) mca_btl_ofi_finalize(&mca_btl_ofi_component.module->super);
    }
    return OPAL_SUCCESS;
}

/* Publishes blob under the modex key and commits it, so that peers read
 * it without waiting for a fence. */
static int publish(void *blob, size_t size)
{
    int rc = opal_modex_send(MCA_BTL_OFI_MODEX_KEY, blob, size, OPAL_MODEX_SCOPE_GLOBAL);
    free(blob);
    return OPAL_SUCCESS == rc ? opal_modex_commit() : rc;
}

/* Declines with the reason, which peers read in place of an address:
 * they say why this process cannot be reached instead of waiting for it. */
static void decline(const char *format, ...) OPAL_PRINTF_LIKE(1, 2);
static void decline(const char *format, ...)
{
    char reason[256];
    va_list ap;
    va_start(ap, format);
    (void) vsnprintf(reason, sizeof(reason), format, ap);
    va_end(ap);
    mca_base_component_decline(&mca_btl_ofi_component.super.btl_version, "%s", reason);
    void *blob = NULL;
    size_t size = 0;
    if (opal_rte_installed() &&
        OPAL_SUCCESS == opal_common_ofi_declined_pack(reason, &blob, &size)) {
        (void) publish(blob, size);
    }
}

static mca_btl_base_module_t **ofi_init(int *num_btls, bool enable_progress_threads,
                                        bool enable_mpi_threads)
{
    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    *num_btls = 0;
    const opal_proc_job_info_t *job = opal_proc_job_info();
    if (NULL != job && job->size > MCA_BTL_OFI_MAX_RANKS) {
        decline("jobs of more than %u processes are not supported (this one has %u)",
                (unsigned) MCA_BTL_OFI_MAX_RANKS, (unsigned) job->size);
        return NULL;
    }

    /* On one node, sm and self reach every peer faster; loading libfabric
     * and opening a provider would only cost each rank a few hundred
     * milliseconds at start (common_ofi_lib.c). Asked for by name, or with
     * sm left out (btl=^sm, or a build without it), it runs. */
    if (NULL != job && job->local_size >= job->size && mca_btl_base_component_opened("sm") &&
        !mca_base_framework_names_component(&opal_btl_base_framework, "ofi")) {
        decline("all %u rank(s) of the job are on this node, where sm reaches them: btl/ofi "
                "stands aside unless the btl selection names it (--mca btl self,sm,ofi)",
                (unsigned) job->size);
        return NULL;
    }

    /* Every call on the domain is serialised by the module (its lock when
     * threads are in use), so the provider need not lock. The tag and the
     * sender's rank need 4 bytes of remote CQ data; the sequence number
     * takes 4 more, or a header in the payload when the provider has
     * fewer (MCA_BTL_OFI_SEQ_HDR_SIZE). */
    opal_common_ofi_want_t want = {
        .ep_type = FI_EP_RDM,
        .caps_required = FI_MSG,
        .caps_desired = FI_RMA | (0 != mca_btl_ofi_component.multi_recv ? FI_MULTI_RECV : 0),
        .msg_order = FI_ORDER_SAS,
        .cq_data_size = MCA_BTL_OFI_CQ_DATA_MIN,
        .threading = FI_THREAD_DOMAIN,
    };
    struct fi_info *info = NULL;
    char *why = NULL;
    int rc = opal_common_ofi_choose(&want, mca_btl_base_output, &info, &why);
    if (OPAL_SUCCESS != rc) {
        decline("%s", NULL != why ? why : opal_strerror(rc));
        free(why);
        return NULL;
    }

    /* The limits as the variables and the provider allow them. */
    mca_btl_base_module_t *tmpl = &mca_btl_ofi_module_template.super;
    uint32_t caps = OFI_CAPABILITIES;
    if (0 == (info->caps & FI_RMA)) {
        caps &= ~(uint32_t) MCA_BTL_FLAGS_RDMA;
    }
    bool mr_local =
        0 != (info->domain_attr->mr_mode & FI_MR_LOCAL) || mca_btl_ofi_component.force_mr_local;
    if (mr_local || info->tx_attr->iov_limit < 2) {
        /* Sending the caller's memory in place would need it registered. */
        caps &= ~(uint32_t) MCA_BTL_FLAGS_SEND_INPLACE;
    }
    if (OFI_CAPABILITIES == tmpl->btl_flags) {
        /* Still the default: what this provider cannot do goes quietly
         * (a user's explicit request for it is warned about below). */
        tmpl->btl_flags &= caps;
    }
    mca_btl_ofi_component.use_seq_hdr = mca_btl_ofi_component.force_seq_header ||
                                        info->domain_attr->cq_data_size < sizeof(uint64_t);
    size_t max_msg = info->ep_attr->max_msg_size;
    if (tmpl->btl_max_send_size > max_msg) {
        tmpl->btl_max_send_size = max_msg;
    }
    if (tmpl->btl_eager_limit > max_msg) {
        tmpl->btl_eager_limit = max_msg;
    }
    if (tmpl->btl_put_limit > max_msg) {
        tmpl->btl_put_limit = max_msg;
    }
    if (tmpl->btl_get_limit > max_msg) {
        tmpl->btl_get_limit = max_msg;
    }
    if (opal_common_ofi_provider_listed("ofi_rxm", info->fabric_attr->prov_name, NULL)) {
        rxm_limits(tmpl, 0 != (caps & MCA_BTL_FLAGS_GET));
    }
    bool is_shm = opal_common_ofi_provider_listed("shm", info->fabric_attr->prov_name, NULL);
    mca_btl_ofi_component.use_get_delivery_complete =
        0 != (caps & MCA_BTL_FLAGS_GET) &&
        (1 == mca_btl_ofi_component.get_delivery_complete ||
         (-1 == mca_btl_ofi_component.get_delivery_complete && is_shm));
    if (is_shm) {
        shm_limits(tmpl, info->tx_attr->inject_size,
                   mca_btl_ofi_component.use_get_delivery_complete);
    }
    rc = mca_btl_base_param_verify(tmpl, caps);
    if (OPAL_SUCCESS != rc) {
        fi_freeinfo(info);
        decline("its variables are inconsistent: %s", opal_strerror(rc));
        return NULL;
    }

    mca_btl_ofi_component.use_multi_recv =
        0 != (info->caps & FI_MULTI_RECV) &&
        (1 == mca_btl_ofi_component.multi_recv ||
         (-1 == mca_btl_ofi_component.multi_recv &&
          !opal_common_ofi_provider_listed("shm,ofi_rxm", info->fabric_attr->prov_name, NULL)));
    char shm_ep_name[128];
    opal_common_ofi_ctx_t ofi;
    opal_common_ofi_ctx_attr_t attr = {
        .shm_ep_name = shm_name(job, shm_ep_name, sizeof(shm_ep_name)),
        .cq_format = FI_CQ_FORMAT_DATA,
        .cq_size = mca_btl_ofi_component.cq_size,
        .want_wait_fd = mca_btl_ofi_component.wait_fd,
        .av_type = FI_AV_TABLE,
        .min_multi_recv = mca_btl_ofi_component.use_multi_recv ? tmpl->btl_max_send_size : 0,
        .output = mca_btl_base_output,
    };
    rc = opal_common_ofi_ctx_open(&ofi, info, &attr, &why);
    if (OPAL_SUCCESS != rc) {
        decline("provider failed to initialise: %s", NULL != why ? why : opal_strerror(rc));
        free(why);
        return NULL;
    }
    if (mca_btl_ofi_component.force_mr_local) {
        /* Only this component's behaviour changes: the provider was not
         * told, so it does not start using the descriptors itself. */
        ofi.mr_mode |= FI_MR_LOCAL;
    }
    mca_btl_ofi_module_t *module = NULL;
    rc = mca_btl_ofi_module_create(&ofi, &module, &why);
    if (OPAL_SUCCESS != rc) {
        decline("%s", NULL != why ? why : opal_strerror(rc));
        free(why);
        return NULL;
    }

    /* Without a run-time environment (opal_info) there is nobody to tell
     * the address to, and nobody to reach. */
    if (opal_rte_installed()) {
        void *blob = NULL;
        size_t size = 0;
        rc = opal_common_ofi_addr_pack(&module->ofi, &blob, &size);
        if (OPAL_SUCCESS == rc) {
            rc = publish(blob, size);
        }
        if (OPAL_SUCCESS != rc) {
            (void) mca_btl_ofi_finalize(&module->super);
            decline("publishing its address failed: %s", opal_strerror(rc));
            return NULL;
        }
    }
    opal_output_verbose(10, mca_btl_base_output,
                        "ofi: %s on %s (%s): eager %zu, max send %zu, inject %zu, %s, %s, %s, %s",
                        module->ofi.prov_name, module->ofi.info->domain_attr->name,
                        module->ofi.info->fabric_attr->name, module->super.btl_eager_limit,
                        module->super.btl_max_send_size, module->inject_size,
                        module->multi_recv ? "multi-receive" : "one message per receive",
                        !module->has_rma                ? "no RMA"
                        : module->get_delivery_complete ? "RMA (gets with delivery completion)"
                                                        : "RMA",
                        module->wait_fd_is_timer ? "polled on a timer" : "wait fd",
                        0 != module->seq_hdr ? "sequence header in the payload"
                                             : "sequence in the CQ data");
    snprintf(module->transport, sizeof(module->transport), "%s, %s", module->ofi.prov_name,
             module->ofi.info->domain_attr->name);
    module->super.btl_transport = module->transport;
    mca_btl_ofi_component.module = module;
    mca_btl_ofi_component.modules[0] = &module->super;
    *num_btls = 1;
    return mca_btl_ofi_component.modules;
}

static int ofi_progress(void)
{
    mca_btl_ofi_module_t *module = mca_btl_ofi_component.module;
    return NULL != module ? mca_btl_ofi_module_progress(module) : 0;
}
