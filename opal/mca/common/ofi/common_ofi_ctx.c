/*
 * The libfabric objects of one component on the chosen provider: fabric,
 * domain, completion queue (with a wait fd when the provider has one),
 * address vector and one endpoint.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "opal/mca/common/ofi/common_ofi.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

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
