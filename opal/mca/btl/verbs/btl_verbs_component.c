/*
 * btl/verbs's lifecycle: register (its variables and the standard ones),
 * open, init (find the ports the include / exclude lists allow and their
 * GIDs, create a module per port, nearest to the binding first, publish
 * one record of them all), progress, close.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/btl/verbs/btl_verbs.h"
#include "opal/mca/btl/verbs/btl_verbs_near.h"
#include "opal/runtime/opal_device_near.h"
#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_argv.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_pid.h"

static int verbs_register(void);
static int verbs_open(void);
static int verbs_close(void);
/* A port init may use. */
static mca_btl_base_module_t **verbs_init(int *num_btls, bool enable_progress_threads,
                                          bool enable_mpi_threads);

static int verbs_progress(void);

mca_btl_verbs_component_t mca_btl_verbs_component = {
    .super =
        {
            .btl_version =
                {
                    MCA_BTL_BASE_VERSION,
                    MCA_BASE_COMPONENT_NAME("verbs", 1, 0, 0),
                    .mca_register_component_params = verbs_register,
                    .mca_open_component = verbs_open,
                    .mca_close_component = verbs_close,
                },
            .btl_init = verbs_init,
            .btl_progress = verbs_progress,
        },
};

mca_btl_verbs_module_t mca_btl_verbs_module_template;

#define VERBS_CAPABILITIES                                                                         \
    (MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_SENDI | MCA_BTL_FLAGS_PUT | MCA_BTL_FLAGS_GET)

static int register_own(const char *name, const char *description, mca_base_var_type_t type,
                        int level, void *storage)
{
    int index = mca_base_component_var_register(&mca_btl_verbs_component.super.btl_version, name,
                                                description, type, NULL, MCA_BASE_VAR_FLAG_NONE,
                                                level, MCA_BASE_VAR_SCOPE_LOCAL, storage);
    return index < 0 ? index : OPAL_SUCCESS;
}

static int verbs_register(void)
{
    mca_btl_verbs_component_t *c = &mca_btl_verbs_component;
    mca_btl_base_module_t *m = &mca_btl_verbs_module_template.super;
    memset(&mca_btl_verbs_module_template, 0, sizeof(mca_btl_verbs_module_template));
    m->btl_component = &c->super;
    /* Every receive buffer holds btl_max_send_size bytes; clamped at init
     * to the device's max_msg_sz. */
    m->btl_eager_limit = 12 * 1024;
    m->btl_max_send_size = 12 * 1024;
    m->btl_rdma_pipeline_send_length = 12 * 1024;
    m->btl_rdma_pipeline_frag_size = 4 * 1024 * 1024;
    m->btl_min_rdma_pipeline_size = 64 * 1024;
    m->btl_put_limit = (size_t) 1 << 30;
    m->btl_get_limit = (size_t) 1 << 30;
    m->btl_put_alignment = 1;
    m->btl_get_alignment = 1;
    m->btl_exclusivity = MCA_BTL_EXCLUSIVITY_DEFAULT + 1;
    /* Below btl/ofi's 10: where both reach a peer, verbs goes first. */
    m->btl_latency = 5;
    m->btl_bandwidth = 20000;
    m->btl_flags = VERBS_CAPABILITIES;
    int rc = mca_btl_base_param_register(&c->super.btl_version, m);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    c->if_include = NULL;
    rc = register_own("if_include",
                      "Comma-separated devices or device:port to use (rxe0, mlx5_0:1); every "
                      "active port they allow is used, one module each. An entry that names no "
                      "device or port here is an error. Exclusive with btl_verbs_if_exclude",
                      MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_3, &c->if_include);
    if (OPAL_SUCCESS == rc) {
        c->if_exclude = NULL;
        rc =
            register_own("if_exclude",
                         "Comma-separated devices or device:port never to use (an entry that names "
                         "no device or port here is warned about)",
                         MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_3, &c->if_exclude);
    }
    if (OPAL_SUCCESS == rc) {
        c->gid_index = -1;
        rc = register_own(
            "gid_index", "GID table index of the port to use (-1: the first of btl_verbs_gid_type)",
            MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_4, &c->gid_index);
    }
    if (OPAL_SUCCESS == rc) {
        c->gid_type = (char *) "roce-v2-ipv4"; /* copied at registration */
        rc = register_own("gid_type",
                          "On RoCE, the kind of GID chosen when btl_verbs_gid_index is -1: "
                          "roce-v2-ipv4 (RoCE v2 over an IPv4 address, routable), roce-v2, "
                          "roce-v1, or any (the first usable entry). InfiniBand ports use GID 0",
                          MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_4, &c->gid_type);
    }
    if (OPAL_SUCCESS == rc) {
        c->credits = 32;
        rc = register_own("credits",
                          "Messages a peer may have in this process's receive buffers at once "
                          "(the shared receive queue holds credits + 1 per peer, bounded by "
                          "btl_verbs_srq_max and the device)",
                          MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_5, &c->credits);
    }
    if (OPAL_SUCCESS == rc) {
        c->srq_max = 4096;
        rc = register_own("srq_max", "Receive buffers in the shared receive queue at most",
                          MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_5, &c->srq_max);
    }
    if (OPAL_SUCCESS == rc) {
        c->sq_depth = 64;
        rc = register_own("sq_depth", "Work requests outstanding per queue pair",
                          MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_5, &c->sq_depth);
    }
    if (OPAL_SUCCESS == rc) {
        c->inline_size = 128;
        rc = register_own("inline_size",
                          "Bytes a message may have to be sent inline (copied into the work "
                          "request; 0: never), as far as the device allows",
                          MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_5, &c->inline_size);
    }
    if (OPAL_SUCCESS == rc) {
        c->max_qps = 1024;
        rc = register_own("max_peers",
                          "Largest job btl/verbs runs in (it creates a queue pair per rank at "
                          "init)",
                          MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_5, &c->max_qps);
    }
    if (OPAL_SUCCESS == rc) {
        c->rcache_limit = (size_t) 1 << 30;
        rc = register_own("rcache_limit",
                          "Bytes of memory registrations kept pinned at most (registrations "
                          "nobody uses are dropped, least recently used first; 0: no limit)",
                          MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_4, &c->rcache_limit);
    }
    if (OPAL_SUCCESS == rc) {
        c->free_list_max = 1024;
        rc = register_own("free_list_max", "Most send descriptors and RDMA operations in flight",
                          MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_6, &c->free_list_max);
    }
    if (OPAL_SUCCESS == rc) {
        c->timeout = 14;
        rc = register_own("timeout",
                          "RC local ACK timeout, as the exponent t of 4.096 us * 2^t (14: 67 ms)",
                          MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_6, &c->timeout);
    }
    if (OPAL_SUCCESS == rc) {
        c->retry_cnt = 7;
        rc = register_own("retry_count",
                          "RC retransmissions before a peer is declared unreachable (0..7)",
                          MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_6, &c->retry_cnt);
    }
    if (OPAL_SUCCESS == rc) {
        c->finalize_timeout_ms = 5000;
        rc = register_own("finalize_timeout",
                          "Most milliseconds finalize waits for sends in flight to complete",
                          MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_6, &c->finalize_timeout_ms);
    }
    return rc;
}

static int verbs_open(void)
{
    mca_btl_verbs_component_t *c = &mca_btl_verbs_component;
    c->num_modules = 0;
    memset(c->module, 0, sizeof(c->module));
    memset(c->modules, 0, sizeof(c->modules));
    memset(&c->own, 0, sizeof(c->own));
    return OPAL_SUCCESS;
}

static int verbs_close(void)
{
    mca_btl_verbs_component_t *c = &mca_btl_verbs_component;
    for (unsigned i = 0; i < c->num_modules; ++i) {
        if (NULL != c->module[i]) {
            (void) mca_btl_verbs_finalize(&c->module[i]->super);
        }
    }
    c->num_modules = 0;
    return OPAL_SUCCESS;
}

/* Declines with the reason, which peers read in place of a record. */
static void decline(const char *format, ...) OPAL_PRINTF_LIKE(1, 2);
static void decline(const char *format, ...)
{
    char reason[256];
    va_list ap;
    va_start(ap, format);
    (void) vsnprintf(reason, sizeof(reason), format, ap);
    va_end(ap);
    mca_base_component_decline(&mca_btl_verbs_component.super.btl_version, "%s", reason);
    void *blob = NULL;
    size_t size = 0;
    if (opal_rte_installed() &&
        OPAL_SUCCESS == mca_btl_verbs_modex_pack_declined(reason, &blob, &size)) {
        if (OPAL_SUCCESS ==
            opal_modex_send(MCA_BTL_VERBS_MODEX_KEY, blob, size, OPAL_MODEX_SCOPE_GLOBAL)) {
            (void) opal_modex_commit();
        }
        free(blob);
    }
}

/* Whether "dev" or "dev:port" is in the comma-separated list. */
static bool listed(const char *list, const char *dev, unsigned port)
{
    char **items = opal_argv_split(list, ',');
    bool found = false;
    char with_port[96];
    snprintf(with_port, sizeof(with_port), "%s:%u", dev, port);
    for (int i = 0; NULL != items && NULL != items[i] && !found; ++i) {
        found = 0 == strcmp(items[i], dev) || 0 == strcmp(items[i], with_port);
    }
    opal_argv_free(items);
    return found;
}

/* The first entry of list (btl_verbs_if_<which>) that names no device or
 * port here, said in why; false when every one does. */
static bool names_nothing(const char *which, const char *list, struct ibv_device **devices,
                          int ndev, const uint8_t *nports, char *why, size_t why_size)
{
    char **items = opal_argv_split(list, ',');
    bool bad = false;
    for (int i = 0; NULL != items && NULL != items[i] && !bad; ++i) {
        bool found = false;
        for (int d = 0; d < ndev && !found; ++d) {
            const char *name = ibv_get_device_name(devices[d]);
            for (unsigned p = 1; p <= nports[d] && !found; ++p) {
                found = listed(items[i], name, p);
            }
        }
        if (!found) {
            char names[160] = "";
            size_t len = 0;
            for (int d = 0; d < ndev && len < sizeof(names); ++d) {
                int n = snprintf(names + len, sizeof(names) - len, "%s%s (%u port%s)",
                                 0 == d ? "" : ", ", ibv_get_device_name(devices[d]),
                                 (unsigned) nports[d], 1 == nports[d] ? "" : "s");
                len += n > 0 ? (size_t) n : 0;
            }
            snprintf(why, why_size,
                     "btl_verbs_if_%s names \"%s\", which is no device or device:port here "
                     "(devices: %s)",
                     which, items[i], names);
            bad = true;
        }
    }
    opal_argv_free(items);
    return bad;
}

/* The GID index to use on an Ethernet (RoCE) port, or -1 with why. */
static int choose_gid(struct ibv_context *ctx, uint8_t port, const struct ibv_port_attr *pa,
                      char *why, size_t why_size)
{
    const mca_btl_verbs_component_t *c = &mca_btl_verbs_component;
    if (c->gid_index >= 0) {
        if (c->gid_index >= pa->gid_tbl_len) {
            snprintf(why, why_size, "btl_verbs_gid_index %d is outside the GID table (%d entries)",
                     c->gid_index, pa->gid_tbl_len);
            return -1;
        }
        return c->gid_index;
    }
    const char *want = NULL != c->gid_type ? c->gid_type : "roce-v2-ipv4";
    bool any = 0 == strcmp(want, "any");
    bool v2 = 0 == strncmp(want, "roce-v2", 7);
    bool ipv4_only = 0 == strcmp(want, "roce-v2-ipv4");
    if (!any && !v2 && 0 != strcmp(want, "roce-v1")) {
        snprintf(why, why_size,
                 "btl_verbs_gid_type \"%s\" is not one of roce-v2-ipv4, roce-v2, roce-v1, any",
                 want);
        return -1;
    }
    static const uint8_t zero[16];
    for (int i = 0; i < pa->gid_tbl_len; ++i) {
        struct ibv_gid_entry entry;
        if (0 != ibv_query_gid_ex(ctx, port, (uint32_t) i, &entry, 0)) {
            continue; /* an empty slot */
        }
        if (0 == memcmp(entry.gid.raw, zero, sizeof(zero))) {
            continue;
        }
        if (any) {
            return i;
        }
        bool is_v2 = IBV_GID_TYPE_ROCE_V2 == entry.gid_type;
        if (v2 != is_v2) {
            continue;
        }
        if (ipv4_only && !mca_btl_verbs_gid_is_ipv4(entry.gid.raw)) {
            continue;
        }
        return i;
    }
    snprintf(why, why_size,
             "no GID of type %s on the port (btl_verbs_gid_type, btl_verbs_gid_index)", want);
    return -1;
}

typedef struct {
    int device; /* index in the device list */
    char name[MCA_BTL_VERBS_MODEX_NAME_MAX];
    uint8_t port;
    int gid_index;
    struct ibv_port_attr attr;
} candidate_t;

static int candidate_compare(const void *a, const void *b)
{
    const candidate_t *x = a, *y = b;
    int rc = strcmp(x->name, y->name);
    return 0 != rc ? rc : (int) x->port - (int) y->port;
}

/* Appends "dev:port: what" to the reasons of the ports not used. */
static void skip(char *why, size_t why_size, const char *format, ...) OPAL_PRINTF_LIKE(3, 4);
static void skip(char *why, size_t why_size, const char *format, ...)
{
    size_t len = strlen(why);
    if (len > 0 && len + 2 < why_size) {
        memcpy(why + len, "; ", 3);
        len += 2;
    }
    va_list ap;
    va_start(ap, format);
    (void) vsnprintf(why + len, why_size - len, format, ap);
    va_end(ap);
}

/* The ports of the devices that btl_verbs_if_include / _exclude allow,
 * active and with a usable GID, sorted by device name and port number;
 * *count of them, or -1 after declining. */
static int find_ports(struct ibv_device **devices, int ndev, candidate_t *cands, char *why,
                      size_t why_size)
{
    mca_btl_verbs_component_t *c = &mca_btl_verbs_component;
    bool include = NULL != c->if_include && '\0' != c->if_include[0];
    bool exclude = NULL != c->if_exclude && '\0' != c->if_exclude[0];
    uint8_t *nports = calloc((size_t) ndev, 1);
    struct ibv_context **ctxs = calloc((size_t) ndev, sizeof(*ctxs));
    if (NULL == nports || NULL == ctxs) {
        free(nports);
        free(ctxs);
        decline("out of memory");
        return -1;
    }
    for (int d = 0; d < ndev; ++d) {
        const char *name = ibv_get_device_name(devices[d]);
        ctxs[d] = ibv_open_device(devices[d]);
        struct ibv_device_attr dattr;
        if (NULL == ctxs[d]) {
            skip(why, why_size, "%s: ibv_open_device: %s", name, strerror(errno));
        } else if (0 != ibv_query_device(ctxs[d], &dattr)) {
            skip(why, why_size, "%s: ibv_query_device failed", name);
        } else {
            nports[d] = dattr.phys_port_cnt;
        }
    }
    int count = -1;
    char bad[384];
    if (include &&
        names_nothing("include", c->if_include, devices, ndev, nports, bad, sizeof(bad))) {
        /* A typo would otherwise select the other ports, or none without
         * saying why. */
        decline("%s", bad);
        goto out;
    }
    if (exclude &&
        names_nothing("exclude", c->if_exclude, devices, ndev, nports, bad, sizeof(bad))) {
        /* Excluding a device some nodes lack is no reason to stop. */
        opal_output(0, "btl/verbs: %s: ignored", bad);
    }
    count = 0;
    for (int d = 0; d < ndev; ++d) {
        const char *name = ibv_get_device_name(devices[d]);
        for (unsigned p = 1; NULL != ctxs[d] && p <= nports[d]; ++p) {
            if (include && !listed(c->if_include, name, p)) {
                skip(why, why_size, "%s:%u is not in btl_verbs_if_include", name, p);
                continue;
            }
            if (exclude && listed(c->if_exclude, name, p)) {
                skip(why, why_size, "%s:%u is in btl_verbs_if_exclude", name, p);
                continue;
            }
            struct ibv_port_attr pa;
            if (0 != ibv_query_port(ctxs[d], (uint8_t) p, &pa)) {
                skip(why, why_size, "%s:%u: ibv_query_port failed", name, p);
                continue;
            }
            if (IBV_PORT_ACTIVE != pa.state) {
                skip(why, why_size, "%s:%u is not active (%s)", name, p,
                     ibv_port_state_str(pa.state));
                continue;
            }
            int g = 0;
            if (IBV_LINK_LAYER_ETHERNET == pa.link_layer) {
                char gwhy[200];
                g = choose_gid(ctxs[d], (uint8_t) p, &pa, gwhy, sizeof(gwhy));
                if (g < 0) {
                    skip(why, why_size, "%s:%u: %s", name, p, gwhy);
                    continue;
                }
            }
            if (count == MCA_BTL_VERBS_MODEX_PORTS_MAX) {
                skip(why, why_size, "%s:%u: more than %d ports", name, p,
                     MCA_BTL_VERBS_MODEX_PORTS_MAX);
                continue;
            }
            candidate_t *cand = &cands[count++];
            cand->device = d;
            snprintf(cand->name, sizeof(cand->name), "%s", name);
            cand->port = (uint8_t) p;
            cand->gid_index = g;
            cand->attr = pa;
        }
    }
    qsort(cands, (size_t) count, sizeof(*cands), candidate_compare);
out:
    for (int d = 0; d < ndev; ++d) {
        if (NULL != ctxs[d]) {
            ibv_close_device(ctxs[d]);
        }
    }
    free(ctxs);
    free(nports);
    return count;
}

/* Publishes the record of every module's port (c->own). */
static int publish(void)
{
    mca_btl_verbs_component_t *c = &mca_btl_verbs_component;
    const uint32_t *qpns[MCA_BTL_VERBS_MODEX_PORTS_MAX] = {NULL};
    uint32_t *owned[MCA_BTL_VERBS_MODEX_PORTS_MAX] = {NULL};
    int rc = OPAL_SUCCESS;
    for (unsigned i = 0; i < c->num_modules && OPAL_SUCCESS == rc; ++i) {
        mca_btl_verbs_module_t *module = c->module[i];
        owned[i] = mca_btl_verbs_module_qpns(module);
        qpns[module->record_index] = owned[i];
        rc = NULL == owned[i] ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;
    }
    void *blob = NULL;
    size_t size = 0;
    if (OPAL_SUCCESS == rc) {
        rc = mca_btl_verbs_modex_pack(&c->own, qpns, &blob, &size);
    }
    for (unsigned i = 0; i < c->num_modules; ++i) {
        free(owned[i]);
    }
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = opal_modex_send(MCA_BTL_VERBS_MODEX_KEY, blob, size, OPAL_MODEX_SCOPE_GLOBAL);
    free(blob);
    return OPAL_SUCCESS == rc ? opal_modex_commit() : rc;
}

static mca_btl_base_module_t **verbs_init(int *num_btls, bool enable_progress_threads,
                                          bool enable_mpi_threads)
{
    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    mca_btl_verbs_component_t *c = &mca_btl_verbs_component;
    *num_btls = 0;
    if (NULL != c->if_include && '\0' != c->if_include[0] && NULL != c->if_exclude &&
        '\0' != c->if_exclude[0]) {
        decline("btl_verbs_if_include and btl_verbs_if_exclude are both set: give one");
        return NULL;
    }
    const opal_proc_job_info_t *job = opal_proc_job_info();
    if (NULL != job && job->size > c->max_qps) {
        decline("the job has %u ranks, more than btl_verbs_max_peers (%u)", (unsigned) job->size,
                c->max_qps);
        return NULL;
    }
    mca_btl_base_module_t *tmpl = &mca_btl_verbs_module_template.super;
    int rc = mca_btl_base_param_verify(tmpl, VERBS_CAPABILITIES);
    if (OPAL_SUCCESS != rc) {
        decline("its variables are inconsistent: %s", opal_strerror(rc));
        return NULL;
    }

    int ndev = 0;
    struct ibv_device **devices = ibv_get_device_list(&ndev);
    if (NULL == devices || 0 == ndev) {
        decline("no RDMA device (ibv_get_device_list: %s)",
                NULL == devices ? strerror(errno) : "none");
        if (NULL != devices) {
            ibv_free_device_list(devices);
        }
        return NULL;
    }
    candidate_t cands[MCA_BTL_VERBS_MODEX_PORTS_MAX];
    char why[512] = "";
    int count = find_ports(devices, ndev, cands, why, sizeof(why));
    if (0 == count) {
        decline("no usable port: %s", why[0] ? why : "no active port");
    }
    if (count <= 0) {
        ibv_free_device_list(devices);
        return NULL;
    }

    /* Nearest to the binding first; equal ones by name and port. */
    const char *names[MCA_BTL_VERBS_MODEX_PORTS_MAX];
    int near[MCA_BTL_VERBS_MODEX_PORTS_MAX];
    size_t order[MCA_BTL_VERBS_MODEX_PORTS_MAX];
    for (int i = 0; i < count; ++i) {
        names[i] = cands[i].name;
    }
    char *cpuset = NULL;
    if (count > 1 && OPAL_SUCCESS == opal_proc_get_binding(&cpuset) && NULL != cpuset) {
        (void) mca_btl_verbs_near_rank(NULL, cpuset, (size_t) count, names, near);
    } else {
        for (int i = 0; i < count; ++i) {
            near[i] = 1;
        }
    }
    opal_device_near_order((size_t) count, near, order);

    memset(&c->own, 0, sizeof(c->own));
    c->own.pid = (uint32_t) getpid();
    c->own.pid_space = opal_pid_space();
    c->own.count = NULL != job ? job->size : 1;
    c->num_modules = 0;
    why[0] = '\0';
    for (int k = 0; k < count; ++k) {
        const candidate_t *cand = &cands[order[k]];
        struct ibv_context *ctx = ibv_open_device(devices[cand->device]);
        if (NULL == ctx) {
            skip(why, sizeof(why), "%s: ibv_open_device: %s", cand->name, strerror(errno));
            continue;
        }
        mca_btl_verbs_module_t *module = NULL;
        char *mwhy = NULL;
        rc = mca_btl_verbs_module_create(ctx, cand->port, cand->gid_index, &cand->attr, &module,
                                         &mwhy);
        if (OPAL_SUCCESS != rc) {
            skip(why, sizeof(why), "%s:%u: %s", cand->name, (unsigned) cand->port,
                 NULL != mwhy ? mwhy : opal_strerror(rc));
            free(mwhy);
            continue;
        }
        char gid[64];
        mca_btl_verbs_gid_string(module->addr.gid, gid, sizeof(gid));
        module->super.btl_transport = module->transport;
        opal_output_verbose(
            10, mca_btl_base_output,
            "verbs: %s port %u (%s, %s), GID %d %s/%u, LID %u, MTU %d: eager %zu, max send "
            "%zu, inline %u, %u credits per peer, SRQ %zu, CQ %zu",
            module->dev_name, (unsigned) module->port,
            IBV_LINK_LAYER_ETHERNET == cand->attr.link_layer ? "Ethernet" : "InfiniBand",
            0 == near[order[k]]   ? "near the binding"
            : 2 == near[order[k]] ? "away from the binding"
                                  : "locality unknown",
            cand->gid_index, gid, (unsigned) module->addr.prefix, (unsigned) module->addr.lid,
            128 << module->addr.mtu, module->super.btl_eager_limit, module->super.btl_max_send_size,
            module->inline_max, module->credits, module->srq_size, module->cq_size);
        c->module[c->num_modules] = module;
        c->modules[c->num_modules] = &module->super;
        c->num_modules++;
    }
    ibv_free_device_list(devices);
    free(cpuset);
    if (0 == c->num_modules) {
        decline("no port could be used: %s", why);
        return NULL;
    }
    if (why[0]) {
        opal_output_verbose(1, mca_btl_base_output, "verbs: ports not used: %s", why);
    }
    /* The record lists the ports by name and port number, whatever their
     * order here: both ends pair them the same way. */
    unsigned index = 0;
    for (int i = 0; i < count; ++i) {
        for (unsigned m = 0; m < c->num_modules; ++m) {
            mca_btl_verbs_module_t *module = c->module[m];
            if (0 == strcmp(module->dev_name, cands[i].name) && module->port == cands[i].port) {
                module->record_index = index;
                c->own.ports[index++] = module->addr;
            }
        }
    }
    c->own.nports = (uint8_t) index;
    if (opal_rte_installed()) {
        rc = publish();
        if (OPAL_SUCCESS != rc) {
            verbs_close();
            decline("publishing its queue pairs failed: %s", opal_strerror(rc));
            return NULL;
        }
    }
    *num_btls = (int) c->num_modules;
    return c->modules;
}

static int verbs_progress(void)
{
    mca_btl_verbs_component_t *c = &mca_btl_verbs_component;
    int events = 0;
    for (unsigned i = 0; i < c->num_modules; ++i) {
        if (NULL != c->module[i]) {
            events += mca_btl_verbs_module_progress(c->module[i]);
        }
    }
    return events;
}
