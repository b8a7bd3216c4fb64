/*
 * btl/tcp's lifecycle: register (its variables and the standard ones),
 * open, init (decide whether to run, listen, publish the address),
 * progress, close.
 */
#include "opal/opal_config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/btl/tcp/btl_tcp.h"
#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

static int tcp_register(void);
static int tcp_open(void);
static int tcp_close(void);
static mca_btl_base_module_t **tcp_init(int *num_btls, bool enable_progress_threads,
                                        bool enable_mpi_threads);
static int tcp_progress(void);

mca_btl_tcp_component_t mca_btl_tcp_component = {
    .super =
        {
            .btl_version =
                {
                    MCA_BTL_BASE_VERSION,
                    MCA_BASE_COMPONENT_NAME("tcp", 1, 0, 0),
                    .mca_register_component_params = tcp_register,
                    .mca_open_component = tcp_open,
                    .mca_close_component = tcp_close,
                },
            .btl_init = tcp_init,
            .btl_progress = tcp_progress,
        },
};

mca_btl_tcp_module_t mca_btl_tcp_module_template;

/* prepare_src always copies: no SEND_INPLACE. */
#define TCP_CAPABILITIES                                                                           \
    (MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_SENDI | MCA_BTL_FLAGS_PUT | MCA_BTL_FLAGS_GET)

static int register_own(const char *name, const char *description, mca_base_var_type_t type,
                        int level, void *storage)
{
    int index = mca_base_component_var_register(&mca_btl_tcp_component.super.btl_version, name,
                                                description, type, NULL, MCA_BASE_VAR_FLAG_NONE,
                                                level, MCA_BASE_VAR_SCOPE_LOCAL, storage);
    return index < 0 ? index : OPAL_SUCCESS;
}

static int tcp_register(void)
{
    mca_btl_tcp_component_t *c = &mca_btl_tcp_component;
    mca_btl_base_module_t *m = &mca_btl_tcp_module_template.super;
    memset(&mca_btl_tcp_module_template, 0, sizeof(mca_btl_tcp_module_template));
    m->btl_component = &c->super;
    m->btl_eager_limit = 64 * 1024;
    m->btl_max_send_size = 256 * 1024;
    m->btl_rdma_pipeline_send_length = 256 * 1024;
    m->btl_rdma_pipeline_frag_size = 4 * 1024 * 1024;
    m->btl_min_rdma_pipeline_size = 256 * 1024;
    m->btl_put_limit = (size_t) 1 << 30;
    m->btl_get_limit = (size_t) 1 << 30;
    m->btl_put_alignment = 1;
    m->btl_get_alignment = 1;
    /* Below ofi's: where both reach a peer, libfabric's provider is the
     * one the user installed for it. */
    m->btl_exclusivity = MCA_BTL_EXCLUSIVITY_DEFAULT - 1;
    m->btl_latency = 20;
    m->btl_bandwidth = 10000;
    m->btl_flags = TCP_CAPABILITIES;
    int rc = mca_btl_base_param_register(&c->super.btl_version, m);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    c->if_include = NULL;
    rc = register_own("if_include",
                      "Comma-separated interface names whose addresses are published "
                      "(default: every interface that is up, loopback only when there is no "
                      "other); a peer on this node is tried on the loopback first",
                      MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_4, &c->if_include);
    if (OPAL_SUCCESS == rc) {
        c->address_family = "any";
        rc = register_own("address_family",
                          "Which addresses are published and connected to: any (IPv4 and IPv6, "
                          "IPv4 first), ipv4, or ipv6. IPv6 link-local addresses are never "
                          "published (they name no host without an interface)",
                          MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_4, &c->address_family);
    }
    if (OPAL_SUCCESS == rc) {
        c->port_min = 0;
        rc = register_own("port_min",
                          "First TCP port to listen on (0: one the kernel picks); with "
                          "btl_tcp_port_range, the ports tried in turn",
                          MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_4, &c->port_min);
    }
    if (OPAL_SUCCESS == rc) {
        c->port_range = 64;
        rc = register_own("port_range", "Ports tried from btl_tcp_port_min (when it is not 0)",
                          MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_4, &c->port_range);
    }
    if (OPAL_SUCCESS == rc) {
        c->sndbuf = 0;
        rc = register_own("sndbuf",
                          "SO_SNDBUF of every connection in bytes (0: the kernel's; at least "
                          "65536 otherwise)",
                          MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_5, &c->sndbuf);
    }
    if (OPAL_SUCCESS == rc) {
        c->rcvbuf = 0;
        rc = register_own("rcvbuf",
                          "SO_RCVBUF of every connection in bytes (0: the kernel's; at least "
                          "65536 otherwise)",
                          MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_5, &c->rcvbuf);
    }
    if (OPAL_SUCCESS == rc) {
        c->max_queued = 16 * 1024 * 1024;
        rc = register_own("max_queued",
                          "Bytes of active messages queued to one peer (its socket full, or its "
                          "connection not up yet) past which a send is refused as busy",
                          MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_5, &c->max_queued);
    }
    if (OPAL_SUCCESS == rc) {
        c->connect_timeout_ms = 10000;
        rc = register_own("connect_timeout",
                          "Milliseconds a connection (connect and handshake) may take before "
                          "the peer is reported unreachable",
                          MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_5, &c->connect_timeout_ms);
    }
    if (OPAL_SUCCESS == rc) {
        c->liveness_interval_ms = 100;
        rc =
            register_own("liveness_interval",
                         "Milliseconds between checks that the peers sharing this process's "
                         "pid space (the same kernel boot and pid namespace) still run: a peer "
                         "whose process exited is reported to the error callback, connected "
                         "or not (0: never check)",
                         MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_5, &c->liveness_interval_ms);
    }
    if (OPAL_SUCCESS == rc) {
        c->free_list_max = 1024;
        rc = register_own("free_list_max",
                          "Most send descriptors of each size, and put / get operations, in flight",
                          MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_6, &c->free_list_max);
    }
    if (OPAL_SUCCESS == rc) {
        c->splice_min = 0;
        rc = register_own("splice_min",
                          "Put / get data from this many bytes goes to the socket by vmsplice and "
                          "splice (the kernel references the pages instead of copying them; the "
                          "memory must stay unchanged until the transfer completes, as for any "
                          "RDMA); 0: always copied by sendmsg",
                          MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_5, &c->splice_min);
    }
    if (OPAL_SUCCESS == rc) {
        c->recv_budget = 8 * 1024 * 1024;
        rc = register_own("recv_budget",
                          "Most bytes one progress pass reads from one connection before the "
                          "other connections' turn (what it read is handled before the pass "
                          "ends; the rest waits in the socket for the next pass)",
                          MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_6, &c->recv_budget);
    }
    if (OPAL_SUCCESS == rc) {
        c->epoll_interval = 16;
        rc = register_own("epoll_interval",
                          "While exactly one connection is up, progress reads its socket "
                          "directly and asks epoll about the rest (new connections, timers, "
                          "a full socket's room) only every this many calls: a message costs "
                          "one system call less on each side. 1: epoll on every call",
                          MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_6, &c->epoll_interval);
    }
    if (OPAL_SUCCESS == rc) {
        c->finalize_timeout_ms = 5000;
        rc = register_own("finalize_timeout",
                          "Most milliseconds finalize waits for what is queued to live peers to "
                          "go out before it closes the connections",
                          MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_6, &c->finalize_timeout_ms);
    }
    if (OPAL_SUCCESS == rc) {
        c->keepalive_time = 60;
        rc = register_own("keepalive_time",
                          "Seconds a connection may stay idle before the kernel probes the peer "
                          "(TCP keepalive); a peer that answers no probe is reported failed, so "
                          "a host that died silently is found even when nothing is sent to it. "
                          "0: no keepalive",
                          MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_5, &c->keepalive_time);
    }
    if (OPAL_SUCCESS == rc) {
        c->keepalive_intvl = 5;
        rc = register_own("keepalive_intvl", "Seconds between keepalive probes (1 to 32767)",
                          MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_5, &c->keepalive_intvl);
    }
    if (OPAL_SUCCESS == rc) {
        c->keepalive_probes = 6;
        rc = register_own("keepalive_probes",
                          "Unanswered keepalive probes after which the peer is reported failed "
                          "(1 to 127)",
                          MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_5, &c->keepalive_probes);
    }
    if (OPAL_SUCCESS == rc) {
        c->user_timeout_ms = 0;
        rc = register_own("user_timeout",
                          "Milliseconds data sent to a peer may stay unacknowledged before the "
                          "peer is reported failed (TCP_USER_TIMEOUT; with keepalive on, it also "
                          "ends the probing). 0: the kernel's retransmission limit, about 15 "
                          "minutes. Set it above the longest time a peer may go without "
                          "reading: some kernels also apply it to a peer whose window stays shut",
                          MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_5, &c->user_timeout_ms);
    }
    return rc;
}

/* The kernel's bounds for the keepalive settings (TCP_KEEPIDLE and
 * TCP_KEEPINTVL up to 32767 s, TCP_KEEPCNT up to 127): a value outside
 * them is said and replaced by the nearest bound. */
static void check_keepalive(void)
{
    mca_btl_tcp_component_t *c = &mca_btl_tcp_component;
    const struct {
        const char *name;
        unsigned *value;
        unsigned min, max;
    } bounds[] = {
        {"btl_tcp_keepalive_time", &c->keepalive_time, 0, 32767},
        {"btl_tcp_keepalive_intvl", &c->keepalive_intvl, 1, 32767},
        {"btl_tcp_keepalive_probes", &c->keepalive_probes, 1, 127},
    };
    for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); ++i) {
        unsigned v = *bounds[i].value;
        unsigned used = v < bounds[i].min ? bounds[i].min : v > bounds[i].max ? bounds[i].max : v;
        if (used != v) {
            opal_output(0, "btl/tcp: %s %u is outside %u..%u (the kernel's bounds): %u used",
                        bounds[i].name, v, bounds[i].min, bounds[i].max, used);
            *bounds[i].value = used;
        }
    }
}

static int tcp_open(void)
{
    mca_btl_tcp_component.splice_ok = true;
    mca_btl_tcp_component.module = NULL;
    mca_btl_tcp_component.modules[0] = NULL;
    return OPAL_SUCCESS;
}

static int tcp_close(void)
{
    if (NULL != mca_btl_tcp_component.module) {
        (void) mca_btl_tcp_finalize(&mca_btl_tcp_component.module->super);
    }
    return OPAL_SUCCESS;
}

static int publish(const mca_btl_tcp_addr_t *addr)
{
    void *blob = NULL;
    size_t size = 0;
    int rc = mca_btl_tcp_addr_pack(addr, &blob, &size);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = opal_modex_send(MCA_BTL_TCP_MODEX_KEY, blob, size, OPAL_MODEX_SCOPE_GLOBAL);
    free(blob);
    return OPAL_SUCCESS == rc ? opal_modex_commit() : rc;
}

/* Declines with the reason, which peers read in place of an address. */
static void decline(const char *format, ...) OPAL_PRINTF_LIKE(1, 2);
static void decline(const char *format, ...)
{
    mca_btl_tcp_addr_t addr;
    memset(&addr, 0, sizeof(addr));
    va_list ap;
    va_start(ap, format);
    (void) vsnprintf(addr.declined, sizeof(addr.declined), format, ap);
    va_end(ap);
    mca_base_component_decline(&mca_btl_tcp_component.super.btl_version, "%s", addr.declined);
    if (opal_rte_installed()) {
        (void) publish(&addr);
    }
}

static mca_btl_base_module_t **tcp_init(int *num_btls, bool enable_progress_threads,
                                        bool enable_mpi_threads)
{
    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    *num_btls = 0;
    if (!mca_btl_base_require_job(&mca_btl_tcp_component.super.btl_version)) {
        return NULL;
    }
    /* Asked for by name it runs; otherwise only where nothing else would
     * reach the job: ranks on other nodes and no btl/ofi. Sockets cost
     * every process a listening port and a thread of connections that sm
     * and ofi do not need. */
    const opal_proc_job_info_t *job = opal_proc_job_info();
    if (!mca_base_framework_names_component(&opal_btl_base_framework, "tcp")) {
        if (job->local_size >= job->size) {
            decline("all %u rank(s) of the job are on this node: btl/tcp stands aside unless the "
                    "btl selection names it (--mca btl self,tcp)",
                    (unsigned) job->size);
            return NULL;
        }
        if (mca_btl_base_component_opened("ofi")) {
            decline("btl/ofi reaches the other nodes: btl/tcp stands aside unless the btl "
                    "selection names it (--mca btl self,sm,tcp)");
            return NULL;
        }
    }
    mca_btl_base_module_t *tmpl = &mca_btl_tcp_module_template.super;
    int rc = mca_btl_base_param_verify(tmpl, TCP_CAPABILITIES);
    if (OPAL_SUCCESS != rc) {
        decline("its variables are inconsistent: %s", opal_strerror(rc));
        return NULL;
    }
    if (tmpl->btl_max_send_size > UINT32_MAX / 2 || tmpl->btl_put_limit > UINT32_MAX / 2 ||
        tmpl->btl_get_limit > UINT32_MAX / 2) {
        /* A frame's length is 32 bits. */
        if (tmpl->btl_max_send_size > UINT32_MAX / 2) {
            tmpl->btl_max_send_size = UINT32_MAX / 2;
        }
        if (tmpl->btl_eager_limit > tmpl->btl_max_send_size) {
            tmpl->btl_eager_limit = tmpl->btl_max_send_size;
        }
        if (tmpl->btl_put_limit > UINT32_MAX / 2) {
            tmpl->btl_put_limit = UINT32_MAX / 2;
        }
        if (tmpl->btl_get_limit > UINT32_MAX / 2) {
            tmpl->btl_get_limit = UINT32_MAX / 2;
        }
    }
    /* Socket buffers smaller than a loopback segment (64 KiB) stall TCP
     * itself: the receiver's window stays shut with data queued. */
    size_t *bufs[] = {&mca_btl_tcp_component.sndbuf, &mca_btl_tcp_component.rcvbuf};
    const char *names[] = {"btl_tcp_sndbuf", "btl_tcp_rcvbuf"};
    for (int i = 0; i < 2; ++i) {
        if (0 != *bufs[i] && *bufs[i] < MCA_BTL_TCP_MIN_SOCKBUF) {
            opal_output(0,
                        "btl/tcp: %s %zu is below %d bytes, which TCP needs not to stall: %d used",
                        names[i], *bufs[i], MCA_BTL_TCP_MIN_SOCKBUF, MCA_BTL_TCP_MIN_SOCKBUF);
            *bufs[i] = MCA_BTL_TCP_MIN_SOCKBUF;
        }
    }
    check_keepalive();
    const char *family = mca_btl_tcp_component.address_family;
    if (NULL == family || '\0' == family[0] || 0 == strcmp(family, "any")) {
        mca_btl_tcp_component.family = MCA_BTL_TCP_FAMILY_ANY;
    } else if (0 == strcmp(family, "ipv4")) {
        mca_btl_tcp_component.family = MCA_BTL_TCP_FAMILY_IPV4;
    } else if (0 == strcmp(family, "ipv6")) {
        mca_btl_tcp_component.family = MCA_BTL_TCP_FAMILY_IPV6;
    } else {
        opal_output(0, "btl/tcp: btl_tcp_address_family '%s' is none of any, ipv4, ipv6", family);
        decline("btl_tcp_address_family '%s' is none of any, ipv4, ipv6", family);
        return NULL;
    }
    mca_btl_tcp_module_t *module = NULL;
    char *why = NULL;
    mca_btl_tcp_addr_t addr;
    rc = mca_btl_tcp_module_create(&module, &why);
    if (OPAL_SUCCESS != rc) {
        decline("%s", NULL != why ? why : opal_strerror(rc));
        free(why);
        return NULL;
    }
    rc = mca_btl_tcp_module_address(module, &addr, &why);
    if (OPAL_SUCCESS == rc) {
        rc = publish(&addr);
        if (OPAL_SUCCESS != rc && NULL == why) {
            if (asprintf(&why, "publishing its address failed: %s", opal_strerror(rc)) < 0) {
                why = NULL;
            }
        }
    }
    if (OPAL_SUCCESS != rc) {
        (void) mca_btl_tcp_finalize(&module->super);
        decline("%s", NULL != why ? why : opal_strerror(rc));
        free(why);
        return NULL;
    }
    opal_output_verbose(10, mca_btl_base_output,
                        "tcp: listening on port %u, %u address(es) published, eager %zu, max send "
                        "%zu",
                        (unsigned) module->port, addr.count, module->super.btl_eager_limit,
                        module->super.btl_max_send_size);
    mca_btl_tcp_component.module = module;
    mca_btl_tcp_component.modules[0] = &module->super;
    *num_btls = 1;
    return mca_btl_tcp_component.modules;
}

static int tcp_progress(void)
{
    mca_btl_tcp_module_t *module = mca_btl_tcp_component.module;
    return NULL != module ? mca_btl_tcp_module_progress(module) : 0;
}
