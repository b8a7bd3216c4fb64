/*
 * Memory registration under every mode a provider may demand:
 *
 *   FI_MR_LOCAL      local buffers of sends, receives and RMA need the
 *                    registration's descriptor (kept in desc);
 *   FI_MR_VIRT_ADDR  peers name remote bytes by virtual address, else by
 *                    offset into the region (opal_common_ofi_rma_addr);
 *   FI_MR_PROV_KEY   the provider picks the key (fi_mr_key), else we ask
 *                    for one that is unique in the domain;
 *   FI_MR_ALLOCATED  only allocated memory is registered (every caller
 *                    registers its own buffers, never a range it does not
 *                    own);
 *   FI_MR_ENDPOINT   the region is bound to the endpoint and enabled
 *                    before use.
 */
#include "opal/opal_config.h"

#include <string.h>

#include "opal/mca/common/ofi/common_ofi.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

int opal_common_ofi_mr_register(opal_common_ofi_ctx_t *ctx, void *base, size_t size,
                                uint64_t access, opal_common_ofi_mr_t *mr)
{
    memset(mr, 0, sizeof(*mr));
    uint64_t requested = 0;
    if (0 == (ctx->mr_mode & FI_MR_PROV_KEY)) {
        requested = (uint64_t) opal_atomic_fetch_add_64_relaxed(&ctx->next_key, 1);
    }
    const char *step = "fi_mr_reg";
    int rc = fi_mr_reg(ctx->domain, base, size, access, 0, requested, 0, &mr->mr, NULL);
    if (0 == rc && 0 != (ctx->mr_mode & FI_MR_ENDPOINT)) {
        step = "fi_mr_bind";
        rc = fi_mr_bind(mr->mr, &ctx->ep->fid, 0);
        if (0 == rc) {
            step = "fi_mr_enable";
            rc = fi_mr_enable(mr->mr);
        }
    }
    if (0 != rc) {
        opal_output(0, "ofi (%s): %s of %zu bytes at %p failed: %s", ctx->prov_name, step, size,
                    base, fi_strerror(-rc));
        opal_common_ofi_mr_deregister(mr);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    mr->desc = fi_mr_desc(mr->mr);
    mr->key = fi_mr_key(mr->mr);
    if (FI_KEY_NOTAVAIL == mr->key) {
        /* A raw key (FI_MR_RAW) was never offered in the hints. */
        opal_output(0, "ofi (%s): registration of %zu bytes has no 64-bit key", ctx->prov_name,
                    size);
        opal_common_ofi_mr_deregister(mr);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    return OPAL_SUCCESS;
}

void opal_common_ofi_mr_deregister(opal_common_ofi_mr_t *mr)
{
    if (NULL != mr->mr) {
        int rc = fi_close(&mr->mr->fid);
        if (0 != rc) {
            opal_output(0, "ofi: releasing a memory registration failed: %s", fi_strerror(-rc));
        }
    }
    memset(mr, 0, sizeof(*mr));
}
