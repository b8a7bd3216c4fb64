/*
 * btl/sm's lifecycle: variables (register), init (segment, descriptors,
 * publication through the modex) and close.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/btl/sm/btl_sm.h"
#include "opal/util/opal_output.h"
#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_rte.h"

/* Shared put / get (btl_sm_rdma_split.c): from 64 KiB, in halves. With
 * 64 transfers in flight (rpc-bw), halves beat 4, 8 and 16 slices at
 * every size from 64 KiB to 4 MiB here: the requester moves on to the
 * next transfer while the peer copies the second half of the last. */
#define SPLIT_MIN_DEFAULT   ((size_t) 64 << 10)
#define SPLIT_PARTS_DEFAULT 2u

static int sm_register(void);
static int sm_open(void);
static int sm_close(void);
static mca_btl_base_module_t **sm_init(int *num_btls, bool enable_progress_threads,
                                       bool enable_mpi_threads);

const mca_btl_base_component_t mca_btl_sm_component = {
    .btl_version =
        {
            MCA_BTL_BASE_VERSION,
            MCA_BASE_COMPONENT_NAME("sm", 1, 0, 0),
            .mca_open_component = sm_open,
            .mca_close_component = sm_close,
            .mca_register_component_params = sm_register,
        },
    .btl_init = sm_init,
    .btl_progress = mca_btl_sm_component_progress,
};

mca_btl_sm_params_t mca_btl_sm_params = {.output = -1};

static const mca_base_var_enum_value_t single_copy_values[] = {
    {SM_SINGLE_COPY_CMA, "cma"},
    {SM_SINGLE_COPY_NONE, "none"},
    {0, NULL},
};

static const mca_base_var_enum_value_t fault_values[] = {
    {SM_FAULT_NONE, "none"},           {SM_FAULT_FIFO_ENTRY, "fifo_entry"},
    {SM_FAULT_FRAG_LEN, "frag_len"},   {SM_FAULT_FBOX_SIZE, "fbox_size"},
    {SM_FAULT_FBOX_TYPE, "fbox_type"}, {SM_FAULT_FIFO_TAIL, "fifo_tail"},
    {SM_FAULT_SPLIT, "split"},         {0, NULL},
};

static int reg_uint(const char *name, const char *description, mca_base_var_info_lvl_t level,
                    unsigned *storage, unsigned value)
{
    *storage = value;
    int index = mca_base_component_var_register(
        &mca_btl_sm_component.btl_version, name, description, MCA_BASE_VAR_TYPE_UNSIGNED_INT, NULL,
        MCA_BASE_VAR_FLAG_NONE, level, MCA_BASE_VAR_SCOPE_LOCAL, storage);
    return index < 0 ? index : OPAL_SUCCESS;
}

static int reg_size(const char *name, const char *description, mca_base_var_info_lvl_t level,
                    size_t *storage, size_t value)
{
    *storage = value;
    int index = mca_base_component_var_register(
        &mca_btl_sm_component.btl_version, name, description, MCA_BASE_VAR_TYPE_SIZE_T, NULL,
        MCA_BASE_VAR_FLAG_NONE, level, MCA_BASE_VAR_SCOPE_LOCAL, storage);
    return index < 0 ? index : OPAL_SUCCESS;
}

static int reg_enum(const char *name, const char *description,
                    const mca_base_var_enum_value_t *values, uint32_t flags,
                    mca_base_var_info_lvl_t level, int *storage, int value)
{
    mca_base_var_enum_t *enumerator = NULL;
    int rc = mca_base_var_enum_create(name, values, &enumerator);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    *storage = value;
    int index = mca_base_component_var_register(&mca_btl_sm_component.btl_version, name,
                                                description, MCA_BASE_VAR_TYPE_INT, enumerator,
                                                flags, level, MCA_BASE_VAR_SCOPE_LOCAL, storage);
    OBJ_RELEASE(enumerator);
    return index < 0 ? index : OPAL_SUCCESS;
}

static int sm_register(void)
{
    mca_btl_sm_params_t *c = &mca_btl_sm_params;
    mca_btl_base_module_t *m = &mca_btl_sm.super;

    m->btl_eager_limit = 4 * 1024;
    /* Large messages below btl_min_rdma_pipeline_size go as max_send_size
     * fragments: both processes copy at once (the sender in, the receiver
     * out), which measured 1.2x to 4x faster than one CMA copy (one process
     * copying, pages pinned per call) from 64 KiB to 32 MiB between two
     * cores here; 64 KiB fragments beat 32 KiB ones. Beyond, where
     * memory bandwidth rules, the single copy halves the traffic. */
    m->btl_max_send_size = 64 * 1024;
    m->btl_rdma_pipeline_send_length = 4 * 1024;
    m->btl_rdma_pipeline_frag_size = (size_t) 1 << 30;
    m->btl_min_rdma_pipeline_size = (size_t) 64 << 20;
    m->btl_put_limit = (size_t) 1 << 30;
    m->btl_get_limit = (size_t) 1 << 30;
    m->btl_put_alignment = 1;
    m->btl_get_alignment = 1;
    m->btl_registration_handle_size = sizeof(mca_btl_base_registration_handle_t);
    /* Below self (which alone reaches this process), above networks. */
    m->btl_exclusivity = MCA_BTL_EXCLUSIVITY_HIGH - 1;
    m->btl_latency = 1;
    m->btl_bandwidth = 40000;
    /* RDMA_WHOLE: a large put / get is shared between the two processes
     * (btl_sm_rdma_split.c) or pipelined through fragments (without CMA);
     * bulk's 512 KiB chunks on top of it cost 10-20% of a 4 MiB pull. */
    m->btl_flags = MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_SENDI | MCA_BTL_FLAGS_PUT |
                   MCA_BTL_FLAGS_GET | MCA_BTL_FLAGS_RDMA_WHOLE;
    int rc = mca_btl_base_param_register(&mca_btl_sm_component.btl_version, m);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }

    bool ok = OPAL_SUCCESS == (rc = reg_uint("fifo_size",
                                             "Slots in each process's receive FIFO (a power of "
                                             "two): references to fragments in flight to it",
                                             OPAL_INFO_LVL_5, &c->fifo_size, 1024));
    ok = ok && OPAL_SUCCESS == (rc = reg_uint("eager_frags",
                                              "Fragments of btl_sm_eager_limit bytes in each "
                                              "process's segment",
                                              OPAL_INFO_LVL_5, &c->eager_frags, 256));
    ok = ok && OPAL_SUCCESS == (rc = reg_uint("max_frags",
                                              "Fragments of btl_sm_max_send_size bytes in each "
                                              "process's segment",
                                              OPAL_INFO_LVL_5, &c->max_frags, 64));
    ok = ok && OPAL_SUCCESS == (rc = reg_uint("frags_per_peer",
                                              "Most fragments in flight to one peer: a slow "
                                              "receiver holds no more of the sender's memory",
                                              OPAL_INFO_LVL_5, &c->frags_per_peer, 128));
    ok = ok && OPAL_SUCCESS == (rc = reg_uint("fbox_size",
                                              "Bytes of each fast box ring (a power of two, at "
                                              "least 256); messages up to a quarter of it go "
                                              "inline",
                                              OPAL_INFO_LVL_5, &c->fbox_size, 4096));
    ok = ok && OPAL_SUCCESS == (rc = reg_uint("fbox_max",
                                              "Fast boxes a process sets up to peers (and "
                                              "accepts from them)",
                                              OPAL_INFO_LVL_5, &c->fbox_max, 32));
    ok = ok && OPAL_SUCCESS == (rc = reg_uint("fbox_threshold",
                                              "Messages to a peer before its fast box is set up",
                                              OPAL_INFO_LVL_5, &c->fbox_threshold, 16));
    ok = ok &&
         OPAL_SUCCESS == (rc = reg_enum("single_copy_mechanism",
                                        "How put and get move data: cma (one copy with "
                                        "process_vm_readv/writev; falls back by itself "
                                        "where not permitted) or none (pipelined copies "
                                        "through shared memory)",
                                        single_copy_values, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_3,
                                        &c->single_copy_mechanism, SM_SINGLE_COPY_CMA));
    c->blocking = false;
    if (ok) {
        int index = mca_base_component_var_register(
            &mca_btl_sm_component.btl_version, "blocking",
            "Idle processes sleep in opal_progress_wait until a peer posts to them (an eventfd "
            "per process) instead of spinning",
            MCA_BASE_VAR_TYPE_BOOL, NULL, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_4,
            MCA_BASE_VAR_SCOPE_LOCAL, &c->blocking);
        rc = index < 0 ? index : OPAL_SUCCESS;
        ok = OPAL_SUCCESS == rc;
    }
    ok = ok && OPAL_SUCCESS == (rc = reg_uint("liveness_interval",
                                              "Milliseconds between checks that peers are "
                                              "still running",
                                              OPAL_INFO_LVL_6, &c->liveness_ms, 50));
    ok = ok && OPAL_SUCCESS == (rc = reg_uint("rdma_ops",
                                              "Put/get operations a process may have in flight "
                                              "when they go through shared memory",
                                              OPAL_INFO_LVL_6, &c->rdma_ops, 256));
    ok = ok && OPAL_SUCCESS == (rc = reg_size("split_min",
                                              "Put/get through CMA of at least this many bytes "
                                              "are shared with the peer: it copies slices of "
                                              "them from its progress while this process "
                                              "copies the rest, so both cores copy (0: never)",
                                              OPAL_INFO_LVL_5, &c->split_min, SPLIT_MIN_DEFAULT));
    ok = ok &&
         OPAL_SUCCESS == (rc = reg_uint("split_parts",
                                        "Slices a shared put/get is cut into (2 to 64): "
                                        "each process claims the next one left",
                                        OPAL_INFO_LVL_6, &c->split_parts, SPLIT_PARTS_DEFAULT));
    ok = ok && OPAL_SUCCESS == (rc = reg_uint("cma_batch",
                                              "Put/get through CMA below btl_sm_split_min wait "
                                              "for the next progress call, and those to one "
                                              "peer in one direction go in one system call, at "
                                              "most this many (1 to 64; 1: each is copied at "
                                              "once, inside the put/get call)",
                                              OPAL_INFO_LVL_6, &c->cma_batch, SM_CMA_BATCH_MAX));
    ok = ok && OPAL_SUCCESS == (rc = reg_enum("fault_inject",
                                              "Tests only: write garbage where a peer reads, "
                                              "once, after btl_sm_fault_after messages to it",
                                              fault_values, MCA_BASE_VAR_FLAG_INTERNAL,
                                              OPAL_INFO_LVL_9, &c->fault_inject, SM_FAULT_NONE));
    ok = ok && OPAL_SUCCESS == (rc = reg_uint("fault_after",
                                              "Tests only: messages to a peer before "
                                              "btl_sm_fault_inject strikes",
                                              OPAL_INFO_LVL_9, &c->fault_after, 20));
    return rc;
}

static int sm_open(void)
{
    mca_btl_sm_params.output = mca_btl_base_output;
    return OPAL_SUCCESS;
}

static int sm_close(void)
{
    return OPAL_SUCCESS;
}

static bool is_pow2(unsigned v)
{
    return 0 != v && 0 == (v & (v - 1));
}

/* The variables' values, checked together; the reason names the first
 * bad one. */
static const char *check_variables(void)
{
    const mca_btl_sm_params_t *c = &mca_btl_sm_params;
    const mca_btl_base_module_t *m = &mca_btl_sm.super;
    static char why[200];
    if (!is_pow2(c->fifo_size) || c->fifo_size < 2 || c->fifo_size > SM_FIFO_MAX_SLOTS) {
        snprintf(why, sizeof(why), "btl_sm_fifo_size %u is not a power of two in 2..%u",
                 c->fifo_size, (unsigned) SM_FIFO_MAX_SLOTS);
    } else if (0 == c->eager_frags || 0 == c->max_frags ||
               (uint64_t) c->eager_frags + c->max_frags > SM_MAX_FRAGS - 1) {
        snprintf(why, sizeof(why),
                 "btl_sm_eager_frags %u and btl_sm_max_frags %u must be at least 1 and "
                 "together below %u",
                 c->eager_frags, c->max_frags, (unsigned) SM_MAX_FRAGS);
    } else if (0 == c->frags_per_peer) {
        snprintf(why, sizeof(why), "btl_sm_frags_per_peer must be at least 1");
    } else if (!is_pow2(c->fbox_size) || c->fbox_size < SM_FBOX_MIN_SIZE ||
               c->fbox_size > (1u << 20)) {
        snprintf(why, sizeof(why), "btl_sm_fbox_size %u is not a power of two in %u..%u",
                 c->fbox_size, SM_FBOX_MIN_SIZE, 1u << 20);
    } else if (c->fbox_max > SM_MAX_FRAGS || 0 == c->fbox_threshold) {
        snprintf(why, sizeof(why), "btl_sm_fbox_max %u or btl_sm_fbox_threshold %u out of range",
                 c->fbox_max, c->fbox_threshold);
    } else if (c->split_parts < 2 || c->split_parts > SM_SPLIT_MAX_SLICES) {
        snprintf(why, sizeof(why), "btl_sm_split_parts %u is not in 2..%u", c->split_parts,
                 (unsigned) SM_SPLIT_MAX_SLICES);
    } else if (c->cma_batch < 1 || c->cma_batch > SM_CMA_BATCH_MAX) {
        snprintf(why, sizeof(why), "btl_sm_cma_batch %u is not in 1..%u", c->cma_batch,
                 (unsigned) SM_CMA_BATCH_MAX);
    } else if (0 == c->rdma_ops || 0 == c->liveness_ms) {
        snprintf(why, sizeof(why), "btl_sm_rdma_ops and btl_sm_liveness_interval must be > 0");
    } else if (m->btl_max_send_size < 1024 || m->btl_max_send_size > ((size_t) 1 << 29) ||
               m->btl_eager_limit > m->btl_max_send_size) {
        snprintf(why, sizeof(why),
                 "btl_sm_max_send_size %zu must be in 1024..%zu and at least btl_sm_eager_limit "
                 "%zu",
                 m->btl_max_send_size, (size_t) 1 << 29, m->btl_eager_limit);
    } else {
        return NULL;
    }
    return why;
}

static uint64_t make_nonce(void)
{
    uint64_t nonce = 0;
    if (sizeof(nonce) != getrandom(&nonce, sizeof(nonce), GRND_NONBLOCK)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        nonce = ((uint64_t) ts.tv_nsec << 20) ^ (uint64_t) ts.tv_sec ^ (uint64_t) getpid();
    }
    return nonce;
}

static int publish(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    sm_modex_t modex;
    memset(&modex, 0, sizeof(modex));
    modex.magic = SM_MODEX_MAGIC;
    modex.version = SM_LAYOUT_VERSION;
    size_t name_len = strlen(sm->seg_name);
    if (name_len >= sizeof(modex.seg_name)) {
        /* A truncated name would make peers open another segment. */
        opal_output(0, "btl sm: segment name %s is longer than the %zu bytes peers accept",
                    sm->seg_name, sizeof(modex.seg_name) - 1);
        return OPAL_ERR_BAD_PARAM;
    }
    memcpy(modex.seg_name, sm->seg_name, name_len + 1);
    modex.seg_size = sm->seg_size;
    modex.nonce = sm->nonce;
    modex.pid = (int32_t) sm->my_pid;
    modex.wake_fd = mca_btl_sm_params.blocking ? sm->wake_fd : -1;
    modex.identity = sm->identity;
    int rc = opal_modex_send(SM_MODEX_KEY, &modex, sizeof(modex), OPAL_MODEX_SCOPE_LOCAL);
    if (OPAL_SUCCESS == rc) {
        rc = opal_modex_commit();
    }
    return rc;
}

static mca_btl_base_module_t **sm_init(int *num_btls, bool enable_progress_threads,
                                       bool enable_mpi_threads)
{
    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    static mca_btl_base_module_t *modules[1];
    const mca_base_component_t *self = &mca_btl_sm_component.btl_version;
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    *num_btls = 0;

    if (!mca_btl_base_require_job(self)) {
        return NULL;
    }
    const opal_proc_job_info_t *job = opal_proc_job_info();
    if (job->local_size < 2) {
        mca_base_component_decline(self, "no other process of this job on this node");
        return NULL;
    }
    if (job->size > SM_FIFO_MAX_RANK) {
        mca_base_component_decline(self, "a job of %u processes is more than sm names (%u)",
                                   job->size, (unsigned) SM_FIFO_MAX_RANK);
        return NULL;
    }
    int rc = mca_btl_base_param_verify(&sm->super, MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_SENDI |
                                                       MCA_BTL_FLAGS_PUT | MCA_BTL_FLAGS_GET |
                                                       MCA_BTL_FLAGS_RDMA_WHOLE);
    const char *bad = OPAL_SUCCESS == rc ? check_variables() : "bad standard variables";
    if (NULL != bad) {
        opal_output(0, "btl sm: %s", bad);
        mca_base_component_decline(self, "%s", bad);
        return NULL;
    }

    sm->my_rank = job->my_name.vpid;
    sm->jobid = job->my_name.jobid;
    sm->job_size = job->size;
    sm->local_size = job->local_size;
    sm->my_pid = getpid();
    sm->nonce = make_nonce();
    sm->error_cb = NULL;
    sm->fbox_out_used = 0;
    sm->fbox_out_free_count = 0;
    sm->fbox_in_count = 0;
    sm->inflight_total = 0;
    sm->poll_count = 0;
    sm->next_liveness_ns = 0;
    sm->cma_notice_given = false;
    sm->wake_never_sleep = false;
    atomic_store(&sm->drops_pending, false);
    mca_btl_sm_identity_get(&sm->identity);
    OBJ_CONSTRUCT(&sm->lock, opal_mutex_t);
    OBJ_CONSTRUCT(&sm->endpoints, opal_list_t);
    OBJ_CONSTRUCT(&sm->retired_eps, opal_list_t);
    OBJ_CONSTRUCT(&sm->work_eps, opal_list_t);
    /* finalize undoes whatever got this far. */
    sm->initialized = true;
    sm->ep_by_rank = calloc(sm->job_size, sizeof(*sm->ep_by_rank));
    sm->fbox_in_eps = calloc(sm->job_size, sizeof(*sm->fbox_in_eps));
    sm->rank_unreachable = calloc(sm->job_size, 1);
    sm->fbox_out_free = calloc(mca_btl_sm_params.fbox_max + 1, sizeof(*sm->fbox_out_free));
    if (NULL == sm->ep_by_rank || NULL == sm->fbox_in_eps || NULL == sm->rank_unreachable ||
        NULL == sm->fbox_out_free) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto fail;
    }
    if (SM_SINGLE_COPY_CMA == mca_btl_sm_params.single_copy_mechanism) {
        /* Under Yama's ptrace_scope 1 only ancestors may read our memory;
         * our peers are siblings. Without Yama this fails harmlessly. */
        (void) prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    }
    rc = mca_btl_sm_segment_create();
    if (OPAL_SUCCESS == rc) {
        rc = mca_btl_sm_frags_init();
    }
    if (OPAL_SUCCESS == rc) {
        rc = mca_btl_sm_rdma_init();
    }
    if (OPAL_SUCCESS == rc) {
        rc = mca_btl_sm_wake_init();
    }
    if (OPAL_SUCCESS == rc) {
        rc = publish();
    }
    if (OPAL_SUCCESS != rc) {
        goto fail;
    }
    modules[0] = &sm->super;
    *num_btls = 1;
    return modules;

fail:
    sm->super.btl_finalize(&sm->super);
    mca_base_component_decline(self, "cannot set up its shared memory: %s", opal_strerror(rc));
    return NULL;
}
