/*
 * btl/verbs's lifecycle: register (its variables and the standard ones),
 * open, init (choose a device port and GID, create the module, publish
 * its record), progress, close.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/btl/verbs/btl_verbs.h"
#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_argv.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

static int verbs_register(void);
static int verbs_open(void);
static int verbs_close(void);
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
                      "Comma-separated devices or device:port to use (rxe0, mlx5_0:1); the "
                      "first active port they allow is used. Exclusive with btl_verbs_if_exclude",
                      MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_3, &c->if_include);
    if (OPAL_SUCCESS == rc) {
        c->if_exclude = NULL;
        rc = register_own("if_exclude", "Comma-separated devices or device:port never to use",
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
    mca_btl_verbs_component.module = NULL;
    mca_btl_verbs_component.modules[0] = NULL;
    return OPAL_SUCCESS;
}

static int verbs_close(void)
{
    if (NULL != mca_btl_verbs_component.module) {
        (void) mca_btl_verbs_finalize(&mca_btl_verbs_component.module->super);
    }
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
    struct ibv_context *chosen = NULL;
    uint8_t chosen_port = 0;
    struct ibv_port_attr chosen_attr;
    int gid_index = 0;
    char why[256] = "";
    for (int d = 0; d < ndev && NULL == chosen; ++d) {
        const char *name = ibv_get_device_name(devices[d]);
        struct ibv_context *ctx = ibv_open_device(devices[d]);
        if (NULL == ctx) {
            snprintf(why, sizeof(why), "%s: ibv_open_device: %s", name, strerror(errno));
            continue;
        }
        struct ibv_device_attr dattr;
        if (0 != ibv_query_device(ctx, &dattr)) {
            snprintf(why, sizeof(why), "%s: ibv_query_device failed", name);
            ibv_close_device(ctx);
            continue;
        }
        for (unsigned p = 1; p <= dattr.phys_port_cnt && NULL == chosen; ++p) {
            if (NULL != c->if_include && '\0' != c->if_include[0] &&
                !listed(c->if_include, name, p)) {
                snprintf(why, sizeof(why), "%s:%u is not in btl_verbs_if_include", name, p);
                continue;
            }
            if (NULL != c->if_exclude && listed(c->if_exclude, name, p)) {
                snprintf(why, sizeof(why), "%s:%u is in btl_verbs_if_exclude", name, p);
                continue;
            }
            struct ibv_port_attr pa;
            if (0 != ibv_query_port(ctx, (uint8_t) p, &pa)) {
                snprintf(why, sizeof(why), "%s:%u: ibv_query_port failed", name, p);
                continue;
            }
            if (IBV_PORT_ACTIVE != pa.state) {
                snprintf(why, sizeof(why), "%s:%u is not active (%s)", name, p,
                         ibv_port_state_str(pa.state));
                continue;
            }
            int g = 0;
            if (IBV_LINK_LAYER_ETHERNET == pa.link_layer) {
                char gwhy[200];
                g = choose_gid(ctx, (uint8_t) p, &pa, gwhy, sizeof(gwhy));
                if (g < 0) {
                    snprintf(why, sizeof(why), "%s:%u: %s", name, p, gwhy);
                    continue;
                }
            }
            chosen = ctx;
            chosen_port = (uint8_t) p;
            chosen_attr = pa;
            gid_index = g;
        }
        if (NULL == chosen) {
            ibv_close_device(ctx);
        }
    }
    ibv_free_device_list(devices);
    if (NULL == chosen) {
        decline("no usable port: %s", why[0] ? why : "no active port");
        return NULL;
    }

    mca_btl_base_module_t *tmpl = &mca_btl_verbs_module_template.super;
    int rc = mca_btl_base_param_verify(tmpl, VERBS_CAPABILITIES);
    if (OPAL_SUCCESS != rc) {
        ibv_close_device(chosen);
        decline("its variables are inconsistent: %s", opal_strerror(rc));
        return NULL;
    }
    mca_btl_verbs_module_t *module = NULL;
    char *mwhy = NULL;
    rc = mca_btl_verbs_module_create(chosen, chosen_port, gid_index, &chosen_attr, &module, &mwhy);
    if (OPAL_SUCCESS != rc) {
        decline("%s", NULL != mwhy ? mwhy : opal_strerror(rc));
        free(mwhy);
        return NULL;
    }
    if (opal_rte_installed()) {
        rc = mca_btl_verbs_module_publish(module);
        if (OPAL_SUCCESS != rc) {
            (void) mca_btl_verbs_finalize(&module->super);
            decline("publishing its queue pairs failed: %s", opal_strerror(rc));
            return NULL;
        }
    }
    char gid[64];
    mca_btl_verbs_gid_string(module->addr.gid, gid, sizeof(gid));
    snprintf(module->transport, sizeof(module->transport), "%s:%u", module->dev_name,
             (unsigned) module->port);
    module->super.btl_transport = module->transport;
    opal_output_verbose(10, mca_btl_base_output,
                        "verbs: %s port %u (%s), GID %d %s, LID %u, MTU %d: eager %zu, max send "
                        "%zu, inline %u, %u credits per peer, SRQ %zu, CQ %zu",
                        module->dev_name, (unsigned) module->port,
                        IBV_LINK_LAYER_ETHERNET == chosen_attr.link_layer ? "Ethernet"
                                                                          : "InfiniBand",
                        gid_index, gid, (unsigned) module->addr.lid, 128 << module->addr.mtu,
                        module->super.btl_eager_limit, module->super.btl_max_send_size,
                        module->inline_max, module->credits, module->srq_size, module->cq_size);
    c->module = module;
    c->modules[0] = &module->super;
    *num_btls = 1;
    return c->modules;
}

static int verbs_progress(void)
{
    mca_btl_verbs_module_t *module = mca_btl_verbs_component.module;
    return NULL != module ? mca_btl_verbs_module_progress(module) : 0;
}
