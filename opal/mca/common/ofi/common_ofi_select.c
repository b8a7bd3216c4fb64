/*
 * Choosing the provider and domain: fi_getinfo for what the component
 * wants, each provider with as many of the desired capabilities as it
 * has, then the ofi_* lists, then the order.
 */
#include "opal/opal_config.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/common/ofi/common_ofi.h"
#include "opal/runtime/opal_proc.h"
#include "opal/util/opal_argv.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

uint32_t opal_common_ofi_api_version(void)
{
    uint32_t built = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);
    uint32_t running = fi_version();
    return running < built ? running : built;
}

/* ---------------------------------------------------------------- lists */

/* The items of a comma list, blanks around them dropped, empty ones
 * skipped; NULL for an empty list. */
static char **list_items(const char *list)
{
    if (NULL == list) {
        return NULL;
    }
    char **items = opal_argv_split(list, ',');
    char **kept = NULL;
    for (int i = 0; NULL != items && NULL != items[i]; ++i) {
        char *item = items[i];
        item += strspn(item, " \t");
        size_t len = strlen(item);
        while (len > 0 && (' ' == item[len - 1] || '\t' == item[len - 1])) {
            item[--len] = '\0';
        }
        if (len > 0) {
            (void) opal_argv_append_nosize(&kept, item);
        }
    }
    opal_argv_free(items);
    return kept;
}

/* Whether item names prov_name: the whole name, or one of its layers. */
static bool provider_matches(const char *item, const char *prov_name)
{
    if (0 == strcmp(item, prov_name)) {
        return true;
    }
    size_t len = strlen(item);
    for (const char *layer = prov_name; NULL != layer;) {
        const char *end = strchr(layer, ';');
        size_t layer_len = NULL != end ? (size_t) (end - layer) : strlen(layer);
        if (layer_len == len && 0 == strncmp(layer, item, len)) {
            return true;
        }
        layer = NULL != end ? end + 1 : NULL;
    }
    return false;
}

bool opal_common_ofi_provider_listed(const char *list, const char *prov_name, int *index)
{
    char **items = list_items(list);
    bool found = false;
    for (int i = 0; NULL != items && NULL != items[i]; ++i) {
        if (provider_matches(items[i], prov_name)) {
            found = true;
            if (NULL != index) {
                *index = i;
            }
            break;
        }
    }
    opal_argv_free(items);
    return found;
}

/* The address bytes of a sockaddr and their length (4 or 16), or NULL. */
static const uint8_t *ip_bytes(const struct sockaddr *sa, size_t len, size_t *bytes, int *family)
{
    if (AF_INET == sa->sa_family && len >= sizeof(struct sockaddr_in)) {
        *bytes = 4;
        *family = AF_INET;
        return (const uint8_t *) &((const struct sockaddr_in *) (const void *) sa)->sin_addr;
    }
    if (AF_INET6 == sa->sa_family && len >= sizeof(struct sockaddr_in6)) {
        *bytes = 16;
        *family = AF_INET6;
        return (const uint8_t *) &((const struct sockaddr_in6 *) (const void *) sa)->sin6_addr;
    }
    return NULL;
}

/* Whether addr (bytes of family) is inside subnet "a.b.c.d/n" or "x::y/n". */
static bool in_subnet(const char *subnet, int family, const uint8_t *addr, size_t bytes)
{
    const char *slash = strchr(subnet, '/');
    char net_text[64];
    if (NULL == slash || (size_t) (slash - subnet) >= sizeof(net_text)) {
        return false;
    }
    memcpy(net_text, subnet, (size_t) (slash - subnet));
    net_text[slash - subnet] = '\0';
    char *end = NULL;
    long prefix = strtol(slash + 1, &end, 10);
    uint8_t net[16];
    if (end == slash + 1 || '\0' != *end || prefix < 0 || prefix > (long) (bytes * 8) ||
        1 != inet_pton(family, net_text, net)) {
        return false;
    }
    for (long bit = 0; bit < prefix; ++bit) {
        uint8_t mask = (uint8_t) (0x80u >> (bit % 8));
        if ((addr[bit / 8] & mask) != (net[bit / 8] & mask)) {
            return false;
        }
    }
    return true;
}

bool opal_common_ofi_if_listed(const char *list, const void *sockaddr, size_t len)
{
    size_t bytes = 0;
    int family = 0;
    const uint8_t *addr = ip_bytes(sockaddr, len, &bytes, &family);
    if (NULL == addr) {
        return false;
    }
    char **items = list_items(list);
    struct ifaddrs *ifs = NULL;
    bool found = false;
    for (int i = 0; !found && NULL != items && NULL != items[i]; ++i) {
        if (NULL != strchr(items[i], '/')) {
            found = in_subnet(items[i], family, addr, bytes);
            continue;
        }
        if (NULL == ifs && 0 != getifaddrs(&ifs)) {
            ifs = NULL;
            break;
        }
        for (struct ifaddrs *ifa = ifs; !found && NULL != ifa; ifa = ifa->ifa_next) {
            size_t if_bytes = 0;
            int if_family = 0;
            const uint8_t *if_addr =
                NULL != ifa->ifa_addr
                    ? ip_bytes(ifa->ifa_addr,
                               AF_INET6 == ifa->ifa_addr->sa_family ? sizeof(struct sockaddr_in6)
                                                                    : sizeof(struct sockaddr_in),
                               &if_bytes, &if_family)
                    : NULL;
            found = NULL != if_addr && 0 == strcmp(ifa->ifa_name, items[i]) &&
                    if_family == family && 0 == memcmp(if_addr, addr, bytes);
        }
    }
    if (NULL != ifs) {
        freeifaddrs(ifs);
    }
    opal_argv_free(items);
    return found;
}

/* -------------------------------------------------------------- getinfo */

/* Sizes libfabric's universe to the job. rxm (libfabric 1.17) opens each
 * core completion queue with FI_UNIVERSE_SIZE (default 256) times its
 * queue depths: over rxe that passes the device's limit (max_cqe 32767)
 * and fi_enable fails with -FI_EINVAL. Nothing a caller passes changes
 * that: rxm reads only the global universe size, which libfabric takes
 * from the environment once, when it initialises (the first fi_getinfo
 * of the process); the AV's count sizes the AV alone. So the job's size
 * goes in the environment before the first fi_getinfo, unless the user
 * set FI_UNIVERSE_SIZE (theirs wins) or libfabric was initialised
 * before (then it has no effect, and the user's setting is the way). */
static void size_universe(int output)
{
    const opal_proc_job_info_t *job = opal_proc_job_info();
    if (NULL == job || 0 == job->size || NULL != getenv("FI_UNIVERSE_SIZE")) {
        return;
    }
    char value[16];
    snprintf(value, sizeof(value), "%u", (unsigned) job->size);
    if (0 == setenv("FI_UNIVERSE_SIZE", value, 0)) {
        opal_output_verbose(20, output, "ofi: FI_UNIVERSE_SIZE=%s (the job's size)", value);
    }
}

static struct fi_info *make_hints(const opal_common_ofi_want_t *want, uint64_t caps)
{
    struct fi_info *hints = fi_dupinfo(NULL);
    if (NULL == hints) {
        return NULL;
    }
    hints->ep_attr->type = want->ep_type;
    hints->caps = caps;
    /* Every operation's context starts with a struct fi_context2, so both
     * context modes are fine. */
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    /* Every registration mode this code handles (common_ofi_mr.c): the
     * provider returns those it demands. FI_MR_RAW (keys wider than 64
     * bits), FI_MR_MMU_NOTIFY, FI_MR_RMA_EVENT and FI_MR_HMEM are not
     * offered, so a provider that needs them is not returned. */
    hints->domain_attr->mr_mode =
        FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED | FI_MR_ENDPOINT;
    hints->domain_attr->threading = want->threading;
    hints->tx_attr->msg_order = want->msg_order;
    hints->rx_attr->msg_order = want->msg_order;
    if (NULL != want->prov_name) {
        hints->fabric_attr->prov_name = strdup(want->prov_name);
        if (NULL == hints->fabric_attr->prov_name) {
            fi_freeinfo(hints);
            return NULL;
        }
    }
    return hints;
}

/* What identifies one choice in the lists fi_getinfo returns for
 * different capabilities. */
static bool same_choice(const struct fi_info *a, const struct fi_info *b)
{
    return 0 == strcmp(a->fabric_attr->prov_name, b->fabric_attr->prov_name) &&
           0 == strcmp(a->fabric_attr->name, b->fabric_attr->name) &&
           0 == strcmp(a->domain_attr->name, b->domain_attr->name) &&
           a->addr_format == b->addr_format;
}

/* Candidates sort by (include_index, group, nic_rank, order): the
 * include list's order, then libfabric's order of the providers (group:
 * where the provider first appeared), then NIC locality among one
 * provider's domains, then libfabric's order. */
typedef struct {
    struct fi_info *info; /* points into one of the lists */
    int include_index;
    size_t group;
    int nic_rank;
    size_t order;
} candidate_t;

/* Why providers were left out: each distinct reason once, with the
 * providers it applies to ("not in ofi_provider_include=x
 * (tcp;ofi_rxm,shm)"), so that the message stays short. */
typedef struct {
    char **why;       /* distinct reasons */
    char **providers; /* providers[i]: comma list for why[i] */
} reasons_t;

static void add_reason(reasons_t *r, const struct fi_info *info, const char *format, ...)
    OPAL_PRINTF_LIKE(3, 4);
static void add_reason(reasons_t *r, const struct fi_info *info, const char *format, ...)
{
    char *why = NULL;
    va_list ap;
    va_start(ap, format);
    int n = vasprintf(&why, format, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    const char *prov = info->fabric_attr->prov_name;
    int i = 0;
    while (NULL != r->why && NULL != r->why[i] && 0 != strcmp(r->why[i], why)) {
        ++i;
    }
    if (NULL == r->why || NULL == r->why[i]) {
        if (OPAL_SUCCESS != opal_argv_append_nosize(&r->why, why) ||
            OPAL_SUCCESS != opal_argv_append_nosize(&r->providers, prov)) {
            free(why);
            return;
        }
    } else {
        char **names = opal_argv_split(r->providers[i], ',');
        bool seen = false;
        for (int k = 0; NULL != names && NULL != names[k]; ++k) {
            seen = seen || 0 == strcmp(names[k], prov);
        }
        opal_argv_free(names);
        char *joined = NULL;
        if (!seen && asprintf(&joined, "%s,%s", r->providers[i], prov) >= 0) {
            free(r->providers[i]);
            r->providers[i] = joined;
        }
    }
    free(why);
}

/* "why (p1,p2); why2 (p3)" (caller frees), or NULL. */
static char *reasons_text(const reasons_t *r)
{
    char *text = NULL;
    for (int i = 0; NULL != r->why && NULL != r->why[i]; ++i) {
        char *next = NULL;
        if (asprintf(&next, "%s%s%s (%s)", NULL != text ? text : "", NULL != text ? "; " : "",
                     r->why[i], r->providers[i]) < 0) {
            break;
        }
        free(text);
        text = next;
    }
    return text;
}

/* Whether ofi_provider_exclude still has its default value (no file,
 * environment or command line set it). */
static bool exclude_is_default(void)
{
    const mca_base_var_t *var = NULL;
    int index = mca_base_var_find("opal", "ofi", NULL, "provider_exclude");
    return index >= 0 && OPAL_SUCCESS == mca_base_var_get(index, &var) &&
           MCA_BASE_VAR_SOURCE_DEFAULT == var->mbv_source;
}

/* Whether info can be used; when not, *reasons gets why. values are the
 * ofi_* variables' current values (NULL: unset); exclude_default says
 * whether ofi_provider_exclude's is its default. */
static bool usable(const opal_common_ofi_want_t *want, const struct fi_info *info,
                   char *const values[4], bool exclude_default, reasons_t *reasons)
{
    const char *prov = info->fabric_attr->prov_name;
    if (NULL != values[0] && !opal_common_ofi_provider_listed(values[0], prov, NULL)) {
        add_reason(reasons, info, "not in ofi_provider_include=%s", values[0]);
        return false;
    }
    /* The default exclude list keeps the net provider out of a search over
     * every provider; a component that names net itself (na/ofi's
     * "ofi+net") gets it, unless the user set the list. */
    bool named = NULL != want->prov_name && 0 == strcmp(want->prov_name, prov);
    if (NULL != values[1] && !(named && exclude_default) &&
        opal_common_ofi_provider_listed(values[1], prov, NULL)) {
        add_reason(reasons, info, "excluded by ofi_provider_exclude=%s", values[1]);
        return false;
    }
    if (info->domain_attr->cq_data_size < want->cq_data_size) {
        add_reason(reasons, info, "carries only %zu bytes of remote CQ data (%zu needed)",
                   info->domain_attr->cq_data_size, want->cq_data_size);
        return false;
    }
    if ((info->tx_attr->msg_order & want->msg_order) != want->msg_order) {
        add_reason(reasons, info, "does not keep messages in order (FI_ORDER_SAS)");
        return false;
    }
    if (NULL != values[2] &&
        !opal_common_ofi_provider_listed(values[2], info->domain_attr->name, NULL)) {
        add_reason(reasons, info, "domain not in ofi_domain_include=%s", values[2]);
        return false;
    }
    if (NULL != values[3] && NULL != info->src_addr &&
        (FI_SOCKADDR_IN == info->addr_format || FI_SOCKADDR_IN6 == info->addr_format ||
         FI_SOCKADDR == info->addr_format) &&
        !opal_common_ofi_if_listed(values[3], info->src_addr, info->src_addrlen)) {
        add_reason(reasons, info, "address not on ofi_if_include=%s", values[3]);
        return false;
    }
    return true;
}

/* fi_getinfo for every subset of the desired capabilities, richest first;
 * lists[count - 1] is the one with the required capabilities only. */
#define MAX_DESIRED_BITS 3
static int get_lists(const opal_common_ofi_want_t *want, struct fi_info **lists, size_t *count,
                     char **why)
{
    uint64_t bits[MAX_DESIRED_BITS];
    size_t nbits = 0;
    for (uint64_t rest = want->caps_desired; 0 != rest && nbits < MAX_DESIRED_BITS;
         rest &= rest - 1) {
        bits[nbits++] = rest & (~rest + 1);
    }
    size_t subsets = (size_t) 1 << nbits;
    int last_rc = 0;
    /* Subset s drops the bits set in s: s = 0 keeps them all. */
    for (size_t s = 0; s < subsets; ++s) {
        uint64_t caps = want->caps_required;
        for (size_t b = 0; b < nbits; ++b) {
            if (0 == (s & ((size_t) 1 << b))) {
                caps |= bits[b];
            }
        }
        struct fi_info *hints = make_hints(want, caps);
        if (NULL == hints) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        lists[s] = NULL;
        bool source = NULL != want->node || NULL != want->service;
        int rc = fi_getinfo(opal_common_ofi_api_version(), want->node, want->service,
                            source ? FI_SOURCE : 0, hints, &lists[s]);
        fi_freeinfo(hints);
        if (0 != rc) {
            lists[s] = NULL;
            last_rc = rc;
        }
    }
    *count = subsets;
    if (NULL == lists[subsets - 1]) {
        if (asprintf(why,
                     "libfabric %u.%u has no provider for reliable datagram endpoints with "
                     "messages here (fi_getinfo: %s)",
                     FI_MAJOR(fi_version()), FI_MINOR(fi_version()), fi_strerror(-last_rc)) < 0) {
            *why = NULL;
        }
        return OPAL_ERR_NOT_AVAILABLE;
    }
    return OPAL_SUCCESS;
}

/* The PCI address of info's NIC as hwloc writes it, in buf; NULL if none. */
static const char *pci_busid(const struct fi_info *info, char *buf, size_t size)
{
    if (NULL == info->nic || NULL == info->nic->bus_attr ||
        FI_BUS_PCI != info->nic->bus_attr->bus_type) {
        return NULL;
    }
    const struct fi_pci_attr *pci = &info->nic->bus_attr->attr.pci;
    snprintf(buf, size, "%04x:%02x:%02x.%x", pci->domain_id, pci->bus_id, pci->device_id,
             pci->function_id);
    return buf;
}

/* Among the candidates of the first one's provider, the nearest NIC to
 * this process's binding (stable otherwise). */
static void rank_nics(candidate_t *cands, size_t n, int output)
{
    char *cpuset = NULL;
    if (n < 2 || OPAL_SUCCESS != opal_proc_get_binding(&cpuset) || NULL == cpuset) {
        return;
    }
    const char *prov = cands[0].info->fabric_attr->prov_name;
    size_t same = 0;
    while (same < n && 0 == strcmp(cands[same].info->fabric_attr->prov_name, prov)) {
        ++same;
    }
    const char **domains = calloc(same, sizeof(*domains));
    const char **busids = calloc(same, sizeof(*busids));
    char(*busbuf)[32] = calloc(same, sizeof(*busbuf));
    int *rank = calloc(same, sizeof(*rank));
    if (NULL != domains && NULL != busids && NULL != busbuf && NULL != rank) {
        for (size_t i = 0; i < same; ++i) {
            domains[i] = cands[i].info->domain_attr->name;
            busids[i] = pci_busid(cands[i].info, busbuf[i], sizeof(busbuf[i]));
        }
        if (OPAL_SUCCESS == opal_common_ofi_nic_rank(NULL, cpuset, same, domains, busids, rank)) {
            for (size_t i = 0; i < same; ++i) {
                cands[i].nic_rank = rank[i];
                opal_output_verbose(30, output, "ofi: %s domain %s: NIC %s binding %s", prov,
                                    domains[i],
                                    0 == rank[i]   ? "near"
                                    : 1 == rank[i] ? "of unknown locality to"
                                                   : "away from",
                                    cpuset);
            }
        }
    }
    free(rank);
    free(busbuf);
    free(busids);
    free(domains);
    free(cpuset);
}

static int compare_candidates(const void *pa, const void *pb)
{
    const candidate_t *a = pa, *b = pb;
    if (a->include_index != b->include_index) {
        return a->include_index < b->include_index ? -1 : 1;
    }
    if (a->group != b->group) {
        return a->group < b->group ? -1 : 1;
    }
    if (a->nic_rank != b->nic_rank) {
        return a->nic_rank < b->nic_rank ? -1 : 1;
    }
    return a->order < b->order ? -1 : (a->order > b->order ? 1 : 0);
}

int opal_common_ofi_choose(const opal_common_ofi_want_t *want, int output, struct fi_info **info,
                           char **why)
{
    static const char *const names[4] = {"provider_include", "provider_exclude", "domain_include",
                                         "if_include"};
    struct fi_info *lists[1 << MAX_DESIRED_BITS] = {NULL};
    char *values[4] = {NULL};
    reasons_t reasons = {NULL, NULL};
    candidate_t *cands = NULL;
    size_t nlists = 0, ncands = 0;
    *info = NULL;
    *why = NULL;

    /* The first moment libfabric is needed (common_ofi_lib.c). */
    const char *load_why = NULL;
    if (OPAL_SUCCESS != opal_common_ofi_load(&load_why)) {
        if (asprintf(why, "libfabric could not be loaded: %s", load_why) < 0) {
            *why = NULL;
        }
        return OPAL_ERR_NOT_AVAILABLE;
    }
    for (int i = 0; i < 4; ++i) {
        values[i] = opal_common_ofi_var_value(names[i]);
    }
    const bool exclude_default = exclude_is_default();
    size_universe(output);
    int rc = get_lists(want, lists, &nlists, why);
    if (OPAL_SUCCESS != rc) {
        goto out;
    }
    size_t total = 0;
    for (struct fi_info *p = lists[nlists - 1]; NULL != p; p = p->next) {
        ++total;
    }
    cands = calloc(total, sizeof(*cands));
    if (NULL == cands) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    /* The list with the required capabilities only has every provider, in
     * libfabric's order; each is replaced by its richest variant. */
    for (struct fi_info *p = lists[nlists - 1]; NULL != p; p = p->next) {
        struct fi_info *best = p;
        for (size_t l = 0; l + 1 < nlists && best == p; ++l) {
            for (struct fi_info *q = lists[l]; NULL != q; q = q->next) {
                if (same_choice(p, q)) {
                    best = q;
                    break;
                }
            }
        }
        bool dup = false;
        for (size_t c = 0; c < ncands && !dup; ++c) {
            dup = same_choice(cands[c].info, best);
        }
        if (dup || !usable(want, best, values, exclude_default, &reasons)) {
            continue;
        }
        int index = 0;
        if (NULL != values[0]) {
            (void) opal_common_ofi_provider_listed(values[0], best->fabric_attr->prov_name, &index);
        }
        opal_output_verbose(20, output, "ofi: candidate %s, fabric %s, domain %s",
                            best->fabric_attr->prov_name, best->fabric_attr->name,
                            best->domain_attr->name);
        size_t group = ncands;
        for (size_t c = 0; c < ncands; ++c) {
            if (0 == strcmp(cands[c].info->fabric_attr->prov_name, best->fabric_attr->prov_name)) {
                group = cands[c].group;
                break;
            }
        }
        cands[ncands] = (candidate_t){
            .info = best, .include_index = index, .group = group, .nic_rank = 1, .order = ncands};
        ++ncands;
    }
    if (0 == ncands) {
        char *list = reasons_text(&reasons);
        if (asprintf(why, "no libfabric provider fits (%s)", NULL != list ? list : "none") < 0) {
            *why = NULL;
        }
        free(list);
        rc = OPAL_ERR_NOT_AVAILABLE;
        goto out;
    }
    qsort(cands, ncands, sizeof(*cands), compare_candidates);
    rank_nics(cands, ncands, output);
    qsort(cands, ncands, sizeof(*cands), compare_candidates);
    *info = fi_dupinfo(cands[0].info);
    if (NULL == *info) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    (*info)->next = NULL;
    opal_output_verbose(10, output, "ofi: using %s, fabric %s, domain %s",
                        (*info)->fabric_attr->prov_name, (*info)->fabric_attr->name,
                        (*info)->domain_attr->name);
    rc = OPAL_SUCCESS;

out:
    free(cands);
    opal_argv_free(reasons.why);
    opal_argv_free(reasons.providers);
    for (size_t l = 0; l < nlists; ++l) {
        if (NULL != lists[l]) {
            fi_freeinfo(lists[l]);
        }
    }
    for (int i = 0; i < 4; ++i) {
        free(values[i]);
    }
    return rc;
}
