/*
 * The libfabric objects of one component on the chosen provider: fabric,
 * domain, completion queue (with a wait fd when the provider has one),
 * address vector and one endpoint.
 */
#include "opal/opal_config.h"

#include <dirent.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "opal/mca/common/ofi/common_ofi.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_shm_sweep.h"

pid_t opal_common_ofi_shm_name_pid(const char *name)
{
    unsigned long pid = 0;
    int fields = 1, digits = 0;
    for (const char *c = name; '\0' != *c; ++c) {
        if (*c >= '0' && *c <= '9') {
            if (1 == fields && (pid = pid * 10 + (unsigned long) (*c - '0')) > 4194304) {
                return 0;
            }
            ++digits;
        } else if (':' == *c && digits > 0 && fields < 3) {
            ++fields;
            digits = 0;
        } else {
            return 0;
        }
    }
    return 3 == fields && digits > 0 ? (pid_t) pid : 0;
}

static pid_t provider_name_pid(const char *name, void *arg)
{
    (void) arg;
    return opal_common_ofi_shm_name_pid(name);
}

int opal_common_ofi_shm_sweep(int output)
{
    return opal_shm_sweep(provider_name_pid, NULL, true, "ofi shm", output);
}

/* *why = "<step> on <provider>: <error>". */
static int failed(opal_common_ofi_ctx_t *ctx, const char *step, int fi_rc, char **why)
{
    if (asprintf(why, "%s on %s failed: %s", step, ctx->prov_name, fi_strerror(-fi_rc)) < 0) {
        *why = NULL;
    }
    opal_common_ofi_ctx_close(ctx);
    return OPAL_ERR_NOT_AVAILABLE;
}

/* Opens the CQ with a wait fd when asked and the provider has one, else
 * without a wait object (then no_wait_fd_why says why). */
static int open_cq(opal_common_ofi_ctx_t *ctx, const opal_common_ofi_ctx_attr_t *attr)
{
    struct fi_cq_attr cq_attr = {
        .size = attr->cq_size,
        .format = attr->cq_format,
        .wait_obj = FI_WAIT_NONE,
    };
    if (attr->want_wait_fd) {
        cq_attr.wait_obj = FI_WAIT_FD;
        int rc = fi_cq_open(ctx->domain, &cq_attr, &ctx->cq, NULL);
        if (0 == rc) {
            rc = fi_control(&ctx->cq->fid, FI_GETWAIT, &ctx->cq_fd);
            if (0 == rc && ctx->cq_fd >= 0) {
                return 0;
            }
            /* The CQ would pay for signalling a wait object nobody can
             * sleep on: open it again without one. */
            (void) fi_close(&ctx->cq->fid);
            ctx->cq = NULL;
            ctx->cq_fd = -1;
            snprintf(ctx->no_wait_fd_why, sizeof(ctx->no_wait_fd_why),
                     "its CQ has no wait fd to hand out (FI_GETWAIT: %s)", fi_strerror(-rc));
        } else {
            snprintf(ctx->no_wait_fd_why, sizeof(ctx->no_wait_fd_why),
                     "it has no CQ with a wait fd (FI_WAIT_FD: %s)", fi_strerror(-rc));
        }
        cq_attr.wait_obj = FI_WAIT_NONE;
    } else {
        snprintf(ctx->no_wait_fd_why, sizeof(ctx->no_wait_fd_why), "no wait fd was asked for");
    }
    return fi_cq_open(ctx->domain, &cq_attr, &ctx->cq, NULL);
}

/* Whether the socket address a is the same as b (family, port, address). */
static bool same_sockaddr(const struct sockaddr_storage *a, const void *b, size_t blen)
{
    if (AF_INET == a->ss_family && blen >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *x = (const struct sockaddr_in *) a, *y = b;
        return AF_INET == y->sin_family && x->sin_port == y->sin_port &&
               x->sin_addr.s_addr == y->sin_addr.s_addr;
    }
    if (AF_INET6 == a->ss_family && blen >= sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *x = (const struct sockaddr_in6 *) a, *y = b;
        return AF_INET6 == y->sin6_family && x->sin6_port == y->sin6_port &&
               0 == memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr));
    }
    return false;
}

/* The udp provider's datagram socket: the socket of this process bound to
 * the endpoint's address (fi_getname gives udp's, also under ofi_rxd), or
 * -1. libfabric has no call that hands it out. */
static int udp_socket(const opal_common_ofi_ctx_t *ctx)
{
    DIR *dir = opendir("/proc/self/fd");
    if (NULL == dir) {
        return -1;
    }
    int found = -1;
    struct dirent *e;
    while (-1 == found && NULL != (e = readdir(dir))) {
        char *end = NULL;
        long fd = strtol(e->d_name, &end, 10);
        struct stat st;
        int type = 0;
        socklen_t len = sizeof(type);
        struct sockaddr_storage sa;
        socklen_t salen = sizeof(sa);
        if ('\0' != *end || end == e->d_name || fd < 0 || fd == dirfd(dir) ||
            0 != fstat((int) fd, &st) || !S_ISSOCK(st.st_mode) ||
            0 != getsockopt((int) fd, SOL_SOCKET, SO_TYPE, &type, &len) || SOCK_DGRAM != type ||
            0 != getsockname((int) fd, (struct sockaddr *) &sa, &salen)) {
            continue;
        }
        if (same_sockaddr(&sa, ctx->addr, ctx->addrlen)) {
            found = (int) fd;
        }
    }
    closedir(dir);
    return found;
}

/* Gives the udp provider's socket a receive buffer of ofi_udp_socket_buffer
 * bytes. With the kernel's default (208 KiB here) the btl test suite over
 * udp;ofi_rxd had about 50000 datagrams dropped per run (while a process
 * was not polling), each retransmitted by rxd after a timeout; with 4 MiB,
 * none. Nothing fails when this cannot be done: it is said at verbosity. */
static void udp_socket_buffer(const opal_common_ofi_ctx_t *ctx, int output)
{
    size_t want = opal_common_ofi_var_size("udp_socket_buffer", OPAL_COMMON_OFI_UDP_SOCKET_BUFFER);
    if (0 == want) {
        return;
    }
    int fd = udp_socket(ctx);
    if (fd < 0) {
        opal_output_verbose(10, output, "ofi (%s): the udp socket of this endpoint was not found",
                            ctx->prov_name);
        return;
    }
    int size = want > (size_t) (INT_MAX / 2) ? INT_MAX / 2 : (int) want;
    int before = 0, after = 0;
    socklen_t len = sizeof(before);
    (void) getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &before, &len);
    /* Above net.core.rmem_max only with CAP_NET_ADMIN. */
    if (0 != setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size))) {
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
    }
    len = sizeof(after);
    (void) getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &after, &len);
    /* The kernel reports twice what was set (its bookkeeping included). */
    opal_output_verbose(10, output,
                        "ofi (%s): udp socket receive buffer %d bytes (was %d; asked for %zu)",
                        ctx->prov_name, after / 2, before / 2, want);
}

int opal_common_ofi_ctx_open(opal_common_ofi_ctx_t *ctx, struct fi_info *info,
                             const opal_common_ofi_ctx_attr_t *attr, char **why)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->cq_fd = -1;
    ctx->info = info;
    ctx->prov_name = info->fabric_attr->prov_name;
    ctx->mr_mode = info->domain_attr->mr_mode;
    /* Keys of our own start above 0, which some providers reserve. */
    ctx->next_key = 1;
    *why = NULL;

    int rc = fi_fabric(info->fabric_attr, &ctx->fabric, NULL);
    if (0 != rc) {
        return failed(ctx, "fi_fabric", rc, why);
    }
    rc = fi_domain(ctx->fabric, info, &ctx->domain, NULL);
    if (0 != rc) {
        return failed(ctx, "fi_domain", rc, why);
    }
    rc = open_cq(ctx, attr);
    if (0 != rc) {
        return failed(ctx, "fi_cq_open", rc, why);
    }
    struct fi_av_attr av_attr = {
        .type =
            FI_AV_UNSPEC != info->domain_attr->av_type ? info->domain_attr->av_type : attr->av_type,
    };
    rc = fi_av_open(ctx->domain, &av_attr, &ctx->av, NULL);
    if (0 != rc) {
        return failed(ctx, "fi_av_open", rc, why);
    }
    rc = fi_endpoint(ctx->domain, info, &ctx->ep, NULL);
    if (0 != rc) {
        return failed(ctx, "fi_endpoint", rc, why);
    }
    rc = fi_ep_bind(ctx->ep, &ctx->av->fid, 0);
    if (0 != rc) {
        return failed(ctx, "fi_ep_bind (address vector)", rc, why);
    }
    rc = fi_ep_bind(ctx->ep, &ctx->cq->fid, FI_TRANSMIT | FI_RECV);
    if (0 != rc) {
        return failed(ctx, "fi_ep_bind (completion queue)", rc, why);
    }
    if (NULL == attr->shm_ep_name && 0 == strcmp(ctx->prov_name, "shm")) {
        /* Before fi_enable, which creates the file. */
        (void) opal_common_ofi_shm_sweep(attr->output);
    }
    if (NULL != attr->shm_ep_name && 0 == strcmp(ctx->prov_name, "shm")) {
        /* Before fi_enable, which creates the file. Only a process of an
         * earlier job with this job id and rank, which died before its
         * launcher could clean up, can have left one. */
        char path[256];
        int n = snprintf(path, sizeof(path), "/%s", attr->shm_ep_name);
        if (n > 0 && (size_t) n < sizeof(path)) {
            (void) shm_unlink(path);
        }
        /* shm's string addresses carry its scheme; the file is named
         * without it. */
        char addr[256];
        n = snprintf(addr, sizeof(addr), "fi_shm://%s", attr->shm_ep_name);
        if (n < 0 || (size_t) n >= sizeof(addr)) {
            return failed(ctx, "fi_setname (name too long)", -FI_EINVAL, why);
        }
        rc = fi_setname(&ctx->ep->fid, addr, (size_t) n + 1);
        if (0 != rc) {
            return failed(ctx, "fi_setname", rc, why);
        }
    }
    rc = fi_enable(ctx->ep);
    if (0 != rc) {
        return failed(ctx, "fi_enable", rc, why);
    }
    /* After fi_enable: shm (libfabric 1.17) crashes when it is set before,
     * and no receive has been posted yet. */
    if (0 != attr->min_multi_recv && 0 != (info->caps & FI_MULTI_RECV)) {
        size_t min = attr->min_multi_recv;
        rc = fi_setopt(&ctx->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min, sizeof(min));
        if (0 != rc) {
            return failed(ctx, "fi_setopt (FI_OPT_MIN_MULTI_RECV)", rc, why);
        }
    }
    ctx->addrlen = sizeof(ctx->addr);
    rc = fi_getname(&ctx->ep->fid, ctx->addr, &ctx->addrlen);
    if (0 != rc) {
        return failed(ctx, "fi_getname", rc, why);
    }
    if (opal_common_ofi_provider_listed("udp", ctx->prov_name, NULL)) {
        udp_socket_buffer(ctx, attr->output);
    }
    return OPAL_SUCCESS;
}

/* Closes one object, saying so when the provider refuses (a leak, not a
 * reason to stop closing the others). */
static void close_fid(opal_common_ofi_ctx_t *ctx, struct fid *fid, const char *what)
{
    if (NULL == fid) {
        return;
    }
    int rc = fi_close(fid);
    if (0 != rc) {
        opal_output_verbose(-FI_EBUSY == rc && ctx->peer_lost ? 10 : 0, 0,
                            "ofi (%s): closing the %s failed: %s%s",
                            NULL != ctx->prov_name ? ctx->prov_name : "?", what, fi_strerror(-rc),
                            -FI_EBUSY == rc && ctx->peer_lost ? " (a peer died mid-transfer)" : "");
    }
}

void opal_common_ofi_ctx_close(opal_common_ofi_ctx_t *ctx)
{
    /* Endpoint before what it is bound to, domain before fabric. */
    close_fid(ctx, NULL != ctx->ep ? &ctx->ep->fid : NULL, "endpoint");
    close_fid(ctx, NULL != ctx->av ? &ctx->av->fid : NULL, "address vector");
    close_fid(ctx, NULL != ctx->cq ? &ctx->cq->fid : NULL, "completion queue");
    close_fid(ctx, NULL != ctx->domain ? &ctx->domain->fid : NULL, "domain");
    close_fid(ctx, NULL != ctx->fabric ? &ctx->fabric->fid : NULL, "fabric");
    if (NULL != ctx->info) {
        fi_freeinfo(ctx->info);
    }
    memset(ctx, 0, sizeof(*ctx));
    ctx->cq_fd = -1;
}

int opal_common_ofi_cq_trywait(opal_common_ofi_ctx_t *ctx)
{
    struct fid *fids[1] = {&ctx->cq->fid};
    return 0 == fi_trywait(ctx->fabric, fids, 1) ? OPAL_SUCCESS : OPAL_ERR_RESOURCE_BUSY;
}

int opal_common_ofi_cq_readerr(opal_common_ofi_ctx_t *ctx, struct fi_cq_err_entry *entry,
                               char *text, size_t size)
{
    /* err_data_size 0: the provider's own buffer is returned in err_data,
     * valid until the next call. */
    memset(entry, 0, sizeof(*entry));
    ssize_t n = fi_cq_readerr(ctx->cq, entry, 0);
    if (1 != n) {
        snprintf(text, size, "no error entry (fi_cq_readerr: %s)",
                 n < 0 ? fi_strerror((int) -n) : "empty");
        return OPAL_ERR_NOT_FOUND;
    }
    const char *detail = fi_cq_strerror(ctx->cq, entry->prov_errno, entry->err_data, NULL, 0);
    if (NULL != detail && '\0' != detail[0] && 0 != entry->prov_errno) {
        snprintf(text, size, "%s (%s: %s)", fi_strerror(entry->err), ctx->prov_name, detail);
    } else {
        snprintf(text, size, "%s", fi_strerror(entry->err));
    }
    return OPAL_SUCCESS;
}

void opal_common_ofi_error(const char *who, const opal_common_ofi_ctx_t *ctx, const char *op,
                           const char *peer, ssize_t rc)
{
    opal_output(0, "%s (%s): %s%s%s: %s", who, ctx->prov_name, op, NULL != peer ? " " : "",
                NULL != peer ? peer : "", fi_strerror((int) (rc < 0 ? -rc : rc)));
}
