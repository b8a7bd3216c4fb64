/*
 * na/ofi's component: its variables, which info strings it claims, and
 * opening and closing a class (the provider, its endpoint, the receive
 * buffers for unexpected messages), its contexts and operation ids.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/na/base/base.h"
#include "opal/mca/base/mca_base_pvar.h"
#include "opal/mca/na/ofi/na_ofi.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_timer.h"

static int ofi_register(void);
static bool ofi_check_protocol(const opal_na_info_t *info);
static int ofi_initialize(opal_na_class_t *cls, const opal_na_info_t *info, bool listen);
static int ofi_finalize(opal_na_class_t *cls);
static int ofi_context_create(opal_na_class_t *cls, opal_na_context_t *ctx);
static int ofi_context_destroy(opal_na_class_t *cls, opal_na_context_t *ctx);
static void ofi_op_fini(opal_na_class_t *cls, opal_na_op_id_t *op);
static size_t ofi_max_unexpected(const opal_na_class_t *cls);
static size_t ofi_max_expected(const opal_na_class_t *cls);
static opal_na_tag_t ofi_max_tag(const opal_na_class_t *cls);
static int ofi_cleanup(void);

static const opal_na_class_ops_t ofi_ops = {
    .name = "ofi",
    .op_size = sizeof(na_ofi_op_t),
    .initialize = ofi_initialize,
    .finalize = ofi_finalize,
    .context_create = ofi_context_create,
    .context_destroy = ofi_context_destroy,
    .op_fini = ofi_op_fini,
    .addr_lookup = na_ofi_addr_lookup,
    .addr_self = na_ofi_addr_self,
    .addr_dup = na_ofi_addr_dup,
    .addr_free = na_ofi_addr_free,
    .addr_cmp = na_ofi_addr_cmp,
    .addr_is_self = na_ofi_addr_is_self,
    .addr_to_string = na_ofi_addr_to_string,
    .addr_get_serialize_size = na_ofi_addr_get_serialize_size,
    .addr_serialize = na_ofi_addr_serialize,
    .addr_deserialize = na_ofi_addr_deserialize,
    .msg_get_max_unexpected_size = ofi_max_unexpected,
    .msg_get_max_expected_size = ofi_max_expected,
    .msg_get_max_tag = ofi_max_tag,
    .msg_buf_alloc = na_ofi_msg_buf_alloc,
    .msg_buf_free = na_ofi_msg_buf_free,
    .msg_send_unexpected = na_ofi_msg_send_unexpected,
    .msg_inject_unexpected = na_ofi_msg_inject_unexpected,
    .msg_recv_unexpected = na_ofi_msg_recv_unexpected,
    .msg_send_expected = na_ofi_msg_send_expected,
    .msg_recv_expected = na_ofi_msg_recv_expected,
    .mem_handle_create = na_ofi_mem_handle_create,
    .mem_handle_create_segments = na_ofi_mem_handle_create_segments,
    .mem_handle_get_max_segments = na_ofi_mem_handle_get_max_segments,
    .mem_handle_free = na_ofi_mem_handle_free,
    .mem_handle_get_size = na_ofi_mem_handle_get_size,
    .mem_register = na_ofi_mem_register,
    .mem_deregister = na_ofi_mem_deregister,
    .mem_handle_get_serialize_size = na_ofi_mem_handle_get_serialize_size,
    .mem_handle_serialize = na_ofi_mem_handle_serialize,
    .mem_handle_deserialize = na_ofi_mem_handle_deserialize,
    .put = na_ofi_put,
    .get = na_ofi_get,
    .poll_get_fd = na_ofi_poll_get_fd,
    .poll_try_wait = na_ofi_poll_try_wait,
    .poll = na_ofi_poll,
    .cancel = na_ofi_cancel,
    .cleanup = ofi_cleanup,
};

opal_na_ofi_component_t mca_na_ofi_component = {
    .super =
        {
            .na_version =
                {
                    OPAL_NA_BASE_VERSION,
                    MCA_BASE_COMPONENT_NAME("ofi", 1, 0, 0),
                    .mca_register_component_params = ofi_register,
                    /* libfabric's providers do not survive being unmapped
                     * (see btl/ofi and opal_common_ofi_load). */
                    .mca_component_flags = MCA_BASE_COMPONENT_FLAG_ALWAYS_LOADED,
                },
            .na_protocols = "ofi+<tcp|net|shm|udp|verbs>[://host[:port]]",
            .na_check_protocol = ofi_check_protocol,
            .na_ops = &ofi_ops,
        },
};

/* The protocols of info strings and the providers they stand for. */
static const struct {
    const char *protocol;
    const char *provider;
} protocols[] = {
    {"tcp", "tcp;ofi_rxm"},
    {"shm", "shm"},
    {"udp", "udp;ofi_rxd"},
    {"verbs", "verbs;ofi_rxm"},
    /* libfabric's native TCP RDM provider (called "tcp" from 1.18 on, what
     * Mercury's ofi+tcp takes there); left out of the common search by the
     * default ofi_provider_exclude, taken when named. */
    {"net", "net"},
};
#define NPROTOCOLS (sizeof(protocols) / sizeof(protocols[0]))

static int register_int(const char *name, const char *description, int *storage)
{
    int index = mca_base_component_var_register(
        &mca_na_ofi_component.super.na_version, name, description, MCA_BASE_VAR_TYPE_INT, NULL,
        MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_LOCAL, storage);
    return index < 0 ? index : OPAL_SUCCESS;
}

static int ofi_register(void)
{
    opal_na_ofi_component_t *c = &mca_na_ofi_component;
    int rc = opal_common_ofi_register(&c->super.na_version);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    c->max_unexpected_size = 4096;
    c->max_expected_size = 4096;
    c->rbuf_count = 8;
    c->rbuf_size = 256 * 1024;
    c->multi_recv = -1;
    c->addr_cache = 1024;
    c->finalize_timeout_ms = 1000;
    if (OPAL_SUCCESS != (rc = register_int("max_unexpected_size",
                                           "Largest unexpected message by default (a class "
                                           "may ask for more, up to 64 KiB)",
                                           &c->max_unexpected_size)) ||
        OPAL_SUCCESS != (rc = register_int("max_expected_size",
                                           "Largest expected message by default (a class may "
                                           "ask for more, up to the provider's limit)",
                                           &c->max_expected_size)) ||
        OPAL_SUCCESS !=
            (rc = register_int("recv_buffers", "Receive buffers posted for unexpected messages",
                               &c->rbuf_count)) ||
        OPAL_SUCCESS != (rc = register_int("recv_buffer_size",
                                           "Bytes of each multi-receive buffer (without "
                                           "multi-receive, each holds one message)",
                                           &c->rbuf_size)) ||
        OPAL_SUCCESS != (rc = register_int("multi_recv",
                                           "Multi-receive buffers for unexpected messages "
                                           "when the provider has FI_MULTI_RECV: 1 yes, 0 no, "
                                           "-1 yes except with shm (costly there)",
                                           &c->multi_recv)) ||
        OPAL_SUCCESS != (rc = register_int("addr_cache",
                                           "Peer addresses no one holds any more that a class "
                                           "keeps (with their AV entries) for peers that talk "
                                           "again; past that, the oldest leave the AV "
                                           "(fi_av_remove). 0: each leaves when its last "
                                           "reference goes",
                                           &c->addr_cache)) ||
        OPAL_SUCCESS != (rc = register_int("finalize_timeout",
                                           "Milliseconds a class that closes waits for its "
                                           "goodbyes to the peers it exchanged messages with "
                                           "to complete. 0: it says none (its peers then learn "
                                           "of its end only from their own timeouts)",
                                           &c->finalize_timeout_ms))) {
        return rc;
    }
    if (c->addr_cache < 0) {
        opal_output(0, "na/ofi: na_ofi_addr_cache %d is negative: 0 is used", c->addr_cache);
        c->addr_cache = 0;
    }
    if (c->finalize_timeout_ms < 0) {
        opal_output(0, "na/ofi: na_ofi_finalize_timeout %d is negative: 0 is used (no goodbyes)",
                    c->finalize_timeout_ms);
        c->finalize_timeout_ms = 0;
    }
    rc = mca_base_component_pvar_register(
        &c->super.na_version, "addresses",
        "Peer address objects the na/ofi classes hold, in use or idle (each with its AV entry)",
        MCA_BASE_PVAR_CLASS_LEVEL, MCA_BASE_VAR_TYPE_UINT64_T, OPAL_INFO_LVL_5,
        MCA_BASE_PVAR_FLAG_NONE, &c->addresses, NULL, NULL);
    if (rc >= 0) {
        rc = mca_base_component_pvar_register(
            &c->super.na_version, "addresses_evicted",
            "Idle peer addresses dropped from the AV past na_ofi_addr_cache",
            MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UINT64_T, OPAL_INFO_LVL_5,
            MCA_BASE_PVAR_FLAG_NONE, &c->addresses_evicted, NULL, NULL);
    }
    if (rc >= 0) {
        rc = mca_base_component_pvar_register(
            &c->super.na_version, "messages_dropped",
            "Unexpected messages dropped on arrival: a header that does not decode (short, an "
            "address length or a tag out of range), a sender's address the provider does not "
            "take, or no memory to keep one",
            MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UINT64_T, OPAL_INFO_LVL_5,
            MCA_BASE_PVAR_FLAG_NONE, &c->messages_dropped, NULL, NULL);
    }
    return rc < 0 ? rc : OPAL_SUCCESS;
}

static const char *provider_of(const char *protocol)
{
    for (size_t i = 0; NULL != protocol && i < NPROTOCOLS; ++i) {
        if (0 == strcmp(protocol, protocols[i].protocol)) {
            return protocols[i].provider;
        }
    }
    return NULL;
}

static bool ofi_check_protocol(const opal_na_info_t *info)
{
    return 0 == strcmp(info->class_name, "ofi") && NULL != provider_of(info->protocol_name);
}

static size_t ofi_max_unexpected(const opal_na_class_t *cls)
{
    return na_ofi_class(cls)->max_unexpected;
}

static size_t ofi_max_expected(const opal_na_class_t *cls)
{
    return na_ofi_class(cls)->max_expected;
}

static opal_na_tag_t ofi_max_tag(const opal_na_class_t *cls)
{
    (void) cls;
    return NA_OFI_MAX_TAG;
}

/* Splits "host[:port]" / "[v6]:port" into node and service (in buf). */
static int split_host(const char *host, char *buf, size_t size, const char **node,
                      const char **service)
{
    *node = NULL;
    *service = NULL;
    if (NULL == host) {
        return OPAL_SUCCESS;
    }
    if (strlen(host) >= size) {
        return OPAL_ERR_BAD_PARAM;
    }
    strcpy(buf, host);
    char *colon;
    if ('[' == buf[0]) {
        char *end = strchr(buf, ']');
        if (NULL == end || (end[1] != '\0' && end[1] != ':')) {
            return OPAL_ERR_BAD_PARAM;
        }
        *end = '\0';
        *node = buf + 1;
        colon = ':' == end[1] ? end + 1 : NULL;
    } else {
        colon = strrchr(buf, ':');
        if (NULL != colon && colon != strchr(buf, ':')) {
            colon = NULL; /* a bare IPv6 address */
        }
        *node = buf;
    }
    if (NULL != colon) {
        *colon = '\0';
        *service = colon + 1;
        if ('\0' == **service || strspn(*service, "0123456789") != strlen(*service) ||
            atoi(*service) > 65535) {
            return OPAL_ERR_BAD_PARAM;
        }
    }
    if ('\0' == **node) {
        *node = NULL;
    }
    return OPAL_SUCCESS;
}

static void rbufs_free(na_ofi_class_t *oc)
{
    for (size_t i = 0; NULL != oc->rbufs && i < oc->nrbufs; ++i) {
        opal_common_ofi_mr_deregister(&oc->rbufs[i].mr);
        free(oc->rbufs[i].mem);
    }
    free(oc->rbufs);
    oc->rbufs = NULL;
}

/* Allocates, registers and posts the receive buffers of unexpected
 * messages. */
static int rbufs_post(na_ofi_class_t *oc)
{
    opal_na_ofi_component_t *c = &mca_na_ofi_component;
    size_t msg = NA_OFI_UHDR_MAX + oc->max_unexpected;
    size_t count = c->rbuf_count < 1 ? 1 : (size_t) c->rbuf_count;
    size_t size = msg;
    if (oc->multi_recv) {
        size = c->rbuf_size > 0 ? (size_t) c->rbuf_size : 0;
        if (size < 4 * msg) {
            size = 4 * msg;
        }
    } else {
        /* One message each: more of them. */
        count *= 8;
    }
    oc->rbufs = calloc(count, sizeof(*oc->rbufs));
    if (NULL == oc->rbufs) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    oc->nrbufs = count;
    for (size_t i = 0; i < count; ++i) {
        na_ofi_rbuf_t *rb = &oc->rbufs[i];
        rb->fictx.kind = NA_OFI_FICTX_RBUF;
        rb->fictx.owner = rb;
        rb->size = size;
        rb->mem = malloc(size);
        if (NULL == rb->mem) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        if (opal_common_ofi_needs_local_mr(&oc->ofi)) {
            int rc = opal_common_ofi_mr_register(&oc->ofi, rb->mem, size, FI_RECV, &rb->mr);
            if (OPAL_SUCCESS != rc) {
                return rc;
            }
        }
        int rc = na_ofi_rbuf_repost(oc, rb);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    return OPAL_SUCCESS;
}

/* opal_na_cleanup: the shm provider's files of processes that are gone
 * (common_ofi.h: opal_common_ofi_shm_sweep). */
static int ofi_cleanup(void)
{
    return opal_common_ofi_shm_sweep(opal_na_base_output);
}

static int ofi_initialize(opal_na_class_t *cls, const opal_na_info_t *info, bool listen)
{
    (void) listen;
    opal_na_ofi_component_t *c = &mca_na_ofi_component;
    const char *provider = provider_of(info->protocol_name);
    char hostbuf[256];
    const char *node = NULL, *service = NULL;
    bool is_shm = 0 == strcmp(provider, "shm");
    if (!is_shm &&
        OPAL_SUCCESS != split_host(info->host_name, hostbuf, sizeof(hostbuf), &node, &service)) {
        opal_output(0, "na/ofi: \"%s\" is not a host[:port] to listen on (port 0 to 65535)",
                    info->host_name);
        return OPAL_ERR_BAD_PARAM;
    }
    na_ofi_class_t *oc = calloc(1, sizeof(*oc));
    if (NULL == oc) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    OBJ_CONSTRUCT(&oc->lock, opal_mutex_t);
    oc->protocol = cls->protocol;
    cls->plugin = oc;

    opal_common_ofi_want_t want = {
        .ep_type = FI_EP_RDM,
        .caps_required = FI_MSG | FI_TAGGED | FI_DIRECTED_RECV,
        .caps_desired = FI_RMA | (0 != c->multi_recv ? FI_MULTI_RECV : 0),
        .msg_order = FI_ORDER_SAS,
        .threading = FI_THREAD_DOMAIN,
        .prov_name = provider,
        .node = node,
        .service = service,
    };
    struct fi_info *fi = NULL;
    char *why = NULL;
    int rc = opal_common_ofi_choose(&want, opal_na_base_output, &fi, &why);
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "na/ofi: no %s provider for \"ofi+%s%s%s\": %s", provider,
                    info->protocol_name, NULL != info->host_name ? "://" : "",
                    NULL != info->host_name ? info->host_name : "",
                    NULL != why ? why : opal_strerror(rc));
        goto out;
    }
    oc->multi_recv =
        0 != (fi->caps & FI_MULTI_RECV) && (1 == c->multi_recv || (-1 == c->multi_recv && !is_shm));
    oc->has_rma = 0 != (fi->caps & FI_RMA);
    if (!oc->has_rma) {
        /* opal_na_has_rma() says so and bulk uses its copy engine. */
        static opal_na_class_ops_t no_rma;
        no_rma = ofi_ops;
        no_rma.put = NULL;
        no_rma.get = NULL;
        cls->ops = &no_rma;
    }
    size_t max_msg = fi->ep_attr->max_msg_size;
    const opal_na_init_info_t *init = info->init;
    size_t want_unexp = NULL != init && 0 != init->max_unexpected_size
                            ? init->max_unexpected_size
                            : (size_t) (c->max_unexpected_size > 0 ? c->max_unexpected_size : 0);
    size_t want_exp = NULL != init && 0 != init->max_expected_size
                          ? init->max_expected_size
                          : (size_t) (c->max_expected_size > 0 ? c->max_expected_size : 0);
    oc->max_unexpected = want_unexp > 65536 ? 65536 : want_unexp;
    if (oc->max_unexpected + NA_OFI_UHDR_MAX > max_msg) {
        oc->max_unexpected = max_msg - NA_OFI_UHDR_MAX;
    }
    oc->max_expected = want_exp > max_msg ? max_msg : want_exp;
    oc->inject_size = fi->tx_attr->inject_size;
    if (oc->inject_size > sizeof(oc->scratch)) {
        oc->inject_size = sizeof(oc->scratch);
    }
    char shm_name[128];
    if (is_shm && NULL != info->host_name) {
        snprintf(shm_name, sizeof(shm_name), "%s", info->host_name);
    }
    opal_common_ofi_ctx_attr_t attr = {
        .cq_format = FI_CQ_FORMAT_TAGGED,
        .cq_size = 4096,
        /* A class that busy-polls never sleeps on the fd: without one the
         * provider does not signal it on every completion. */
        .want_wait_fd = NULL == init || !init->busy_wait,
        .av_type = FI_AV_TABLE,
        .min_multi_recv = oc->multi_recv ? NA_OFI_UHDR_MAX + oc->max_unexpected : 0,
        .shm_ep_name = is_shm && NULL != info->host_name ? shm_name : NULL,
        .output = opal_na_base_output,
    };
    rc = opal_common_ofi_ctx_open(&oc->ofi, fi, &attr, &why);
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "na/ofi: opening %s failed: %s", provider,
                    NULL != why ? why : opal_strerror(rc));
        goto out;
    }
    if (FI_ADDR_STR == oc->ofi.info->addr_format) {
        const char *scheme = strstr((const char *) oc->ofi.addr, "://");
        size_t n = NULL == scheme ? 0 : (size_t) (scheme - (const char *) oc->ofi.addr) + 3;
        if (n >= sizeof(oc->str_scheme)) {
            n = 0;
        }
        memcpy(oc->str_scheme, oc->ofi.addr, n);
        oc->str_scheme[n] = '\0';
    }
    rc = na_ofi_addr_get(oc, oc->ofi.addr, oc->ofi.addrlen, &oc->self);
    if (OPAL_SUCCESS != rc) {
        goto out;
    }
    oc->self->self = true;
    rc = rbufs_post(oc);
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "na/ofi: posting receive buffers on %s failed: %s", provider,
                    opal_strerror(rc));
        goto out;
    }
    opal_output_verbose(10, opal_na_base_output,
                        "na/ofi: %s on %s: unexpected %zu, expected %zu, inject %zu, %s, %s, "
                        "wait fd %d",
                        oc->ofi.prov_name, oc->ofi.info->domain_attr->name, oc->max_unexpected,
                        oc->max_expected, oc->inject_size,
                        oc->multi_recv ? "multi-receive" : "one message per buffer",
                        oc->has_rma ? "RMA" : "no RMA", oc->ofi.cq_fd);
out:
    free(why);
    if (OPAL_SUCCESS != rc) {
        (void) ofi_finalize(cls);
    }
    return rc;
}

/* Whether the goodbye is said over this provider. Not over verbs: rxm
 * over verbs (libfabric 1.17) crashed in fi_close after being polled while
 * its peers disconnected (btl/ofi's quiesce says the same). */
static bool says_goodbye(const na_ofi_class_t *oc)
{
    return NULL != oc->ofi.ep && NULL != oc->self &&
           !opal_common_ofi_provider_listed("verbs", oc->ofi.prov_name, NULL);
}

/* Whether a is an shm endpoint of this process (another class): libfabric
 * 1.17's shm crashes sending to one that closed, which the peer may have
 * done before this class (it unmaps the region this process's classes
 * share). Two classes in one process are tests; they hear no goodbye. */
static bool own_shm_peer(const na_ofi_class_t *oc, const na_ofi_addr_t *a)
{
    if (FI_ADDR_STR != oc->ofi.info->addr_format || 0 == a->addrlen ||
        '\0' != a->addr[a->addrlen - 1]) {
        return false;
    }
    const char *name = (const char *) a->addr;
    const char *scheme = strstr(name, "://");
    return getpid() == opal_common_ofi_shm_name_pid(NULL != scheme ? scheme + 3 : name);
}

/* Whether a is a live peer this class spoke with that did not say
 * goodbye itself (class lock held). */
static bool owed_goodbye(const na_ofi_class_t *oc, na_ofi_addr_t *a)
{
    return !a->self && !a->said_bye && atomic_load_explicit(&a->talked, memory_order_relaxed) &&
           !atomic_load_explicit(&a->failed, memory_order_relaxed) && !own_shm_peer(oc, a);
}

/* One goodbye in flight: its context (whose owner is the record) and
 * where it stands. */
typedef struct bye_t {
    na_ofi_fictx_t ctx;
    na_ofi_addr_t *peer;
    bool posted;
    bool done;
} bye_t;

/* Counts a CQ entry's context when it is a goodbye not yet counted. */
static void bye_completed(void *op_context, size_t *completed)
{
    na_ofi_fictx_t *fc = op_context;
    if (NULL != fc && NA_OFI_FICTX_BYE == fc->kind && !((bye_t *) fc->owner)->done) {
        ((bye_t *) fc->owner)->done = true;
        ++*completed;
    }
}

/* Before the endpoint closes: every live peer this class exchanged
 * messages or RMA with gets a goodbye (a header of tag NA_OFI_TAG_BYE and
 * nothing else), posted after everything the class sent it, so that the
 * peer's peer-gone hook hears that this process finalized instead of
 * waiting for timeouts. Finalize then reads the CQ until every goodbye
 * completed, for at most na_ofi_finalize_timeout ms (0: no goodbyes), and
 * drops whatever else it finds there (the contexts are gone, and the
 * receive buffers go next). */
static void say_goodbye(na_ofi_class_t *oc)
{
    const int wait_ms = mca_na_ofi_component.finalize_timeout_ms;
    if (wait_ms <= 0 || !says_goodbye(oc)) {
        return;
    }
    size_t n = 0;
    for (size_t b = 0; b < NA_OFI_ADDR_BUCKETS; ++b) {
        for (na_ofi_addr_t *a = oc->buckets[b]; NULL != a; a = a->hash_next) {
            n += owed_goodbye(oc, a);
        }
    }
    if (0 == n) {
        return;
    }
    na_ofi_uhdr_t hdr = {
        .tag = NA_OFI_TAG_BYE, .addrlen = (uint16_t) oc->self->addrlen, .addr = oc->self->addr};
    uint8_t *msg = malloc(NA_OFI_UHDR_MAX);
    bye_t *byes = calloc(n, sizeof(*byes));
    opal_common_ofi_mr_t mr = {0};
    size_t len = NULL == msg ? 0 : na_ofi_uhdr_encode(&hdr, msg, NA_OFI_UHDR_MAX);
    if (0 == len || NULL == byes ||
        (opal_common_ofi_needs_local_mr(&oc->ofi) &&
         OPAL_SUCCESS != opal_common_ofi_mr_register(&oc->ofi, msg, len, FI_SEND, &mr))) {
        opal_output_verbose(1, opal_na_base_output,
                            "na/ofi (%s): finalize: no memory for the goodbyes: peers will not "
                            "hear that this process finalized",
                            oc->ofi.prov_name);
        goto out;
    }
    size_t k = 0;
    for (size_t b = 0; b < NA_OFI_ADDR_BUCKETS; ++b) {
        for (na_ofi_addr_t *a = oc->buckets[b]; NULL != a && k < n; a = a->hash_next) {
            if (owed_goodbye(oc, a)) {
                byes[k].ctx.kind = NA_OFI_FICTX_BYE;
                byes[k].ctx.owner = &byes[k];
                byes[k++].peer = a;
            }
        }
    }
    const uint64_t deadline = opal_timer_ns() + (uint64_t) wait_ms * 1000000u;
    size_t posted = 0, completed = 0;
    while (completed < n && opal_timer_ns() < deadline) {
        for (bye_t *y = byes; y < byes + n; ++y) {
            if (y->posted) {
                continue;
            }
            ssize_t rc = fi_send(oc->ofi.ep, msg, len, mr.desc, y->peer->fi_addr, &y->ctx.fi);
            if (0 == rc) {
                y->posted = true;
                ++posted;
            } else if (-FI_EAGAIN != rc) {
                /* Unreachable already: nothing to wait for. */
                y->posted = y->done = true;
                ++completed;
            }
        }
        struct fi_cq_tagged_entry e[16];
        ssize_t got = fi_cq_read(oc->ofi.cq, e, 16);
        for (ssize_t i = 0; i < got; ++i) {
            bye_completed(e[i].op_context, &completed);
        }
        struct fi_cq_err_entry err;
        char text[256];
        if (-FI_EAVAIL == got &&
            OPAL_SUCCESS == opal_common_ofi_cq_readerr(&oc->ofi, &err, text, sizeof(text))) {
            bye_completed(err.op_context, &completed);
        }
    }
    if (completed < n) {
        opal_output_verbose(1, opal_na_base_output,
                            "na/ofi (%s): finalize: %zu of %zu goodbyes (%zu posted) did not "
                            "complete within %d ms",
                            oc->ofi.prov_name, n - completed, n, posted, wait_ms);
    }
out:
    opal_common_ofi_mr_deregister(&mr);
    free(byes);
    free(msg);
}

static int ofi_finalize(opal_na_class_t *cls)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    if (NULL == oc) {
        return OPAL_SUCCESS;
    }
    OPAL_THREAD_LOCK(&oc->lock);
    say_goodbye(oc);
    na_ofi_gone_drop(oc);
    OPAL_THREAD_UNLOCK(&oc->lock);
    /* The endpoint first: it stops using the receive buffers. */
    opal_common_ofi_ctx_close(&oc->ofi);
    rbufs_free(oc);
    while (NULL != oc->kept_free) {
        na_ofi_kept_t *k = oc->kept_free;
        oc->kept_free = k->next;
        free(k);
    }
    na_ofi_addr_table_free(oc);
    OBJ_DESTRUCT(&oc->lock);
    free(oc);
    cls->plugin = NULL;
    return OPAL_SUCCESS;
}

static int ofi_context_create(opal_na_class_t *cls, opal_na_context_t *ctx)
{
    (void) cls;
    na_ofi_context_t *c = calloc(1, sizeof(*c));
    if (NULL == c) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    atomic_init(&c->pending, 0);
    ctx->plugin = c;
    return OPAL_SUCCESS;
}

static int ofi_context_destroy(opal_na_class_t *cls, opal_na_context_t *ctx)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    na_ofi_context_t *c = ctx->plugin;
    if (0 != atomic_load_explicit(&c->pending, memory_order_acquire)) {
        opal_output_verbose(1, opal_na_base_output,
                            "na/ofi: context %u has operations pending: cancel them first",
                            ctx->id);
        return OPAL_ERR_RESOURCE_BUSY;
    }
    OPAL_THREAD_LOCK(&oc->lock);
    /* Kept messages nobody will receive now. */
    while (NULL != c->kept_head) {
        na_ofi_kept_t *k = c->kept_head;
        c->kept_head = k->next;
        na_ofi_addr_release(oc, k->source);
        k->rbuf->held--;
        (void) na_ofi_rbuf_repost(oc, k->rbuf);
        k->next = oc->kept_free;
        oc->kept_free = k;
    }
    /* Under the lock: a message for this context found by another
     * thread's progress from now on is one for a context that is gone. */
    ctx->plugin = NULL;
    OPAL_THREAD_UNLOCK(&oc->lock);
    free(c);
    return OPAL_SUCCESS;
}

static void ofi_op_fini(opal_na_class_t *cls, opal_na_op_id_t *op)
{
    na_ofi_op_t *o = (na_ofi_op_t *) op;
    na_ofi_class_t *oc = na_ofi_class(cls);
    /* Every call on the domain is made under the class lock. */
    OPAL_THREAD_LOCK(&oc->lock);
    opal_common_ofi_mr_deregister(&o->staging_mr);
    OPAL_THREAD_UNLOCK(&oc->lock);
    free(o->staging);
}
