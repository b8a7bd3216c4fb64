/*
 * Copying sends over a peer's best module: what an upper layer calls when
 * it wants its bytes gone and its buffer back, without caring which of
 * sendi, alloc or prepare_src the module prefers.
 */
#include "opal/opal_config.h"

#include <stdbool.h>
#include <string.h>

#include "opal/mca/btl/base/base.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/opal_error.h"

/* Completion of a send whose data the module may still read (prepare_src
 * on a SEND_INPLACE module): the caller waits for it. */
typedef struct {
    volatile bool done;
    int status;
} wait_t;

static void wait_cb(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    struct mca_btl_base_descriptor_t *des, int status)
{
    wait_t *w = des->des_cbdata;
    w->status = status;
    w->done = true;
}

/* Sends des; the caller's descriptor goes back to the module when the
 * send did not start. */
static int send_des(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag)
{
    int rc = btl->btl_send(btl, endpoint, des, tag);
    if (rc < 0) {
        (void) btl->btl_free(btl, des);
        return rc;
    }
    return OPAL_SUCCESS;
}

int mca_btl_base_mux_send_hdr(mca_btl_base_peer_t *peer, mca_btl_base_tag_t tag, const void *header,
                              size_t header_size, const void *data, size_t size)
{
    if (NULL == peer || 0 == peer->send_count) {
        return OPAL_ERR_UNREACH;
    }
    mca_btl_base_module_t *btl = peer->send[0].btl;
    struct mca_btl_base_endpoint_t *endpoint = peer->send[0].endpoint;
    size_t total = header_size + size;
    if (total < size || total > btl->btl_max_send_size) {
        return OPAL_ERR_BAD_PARAM;
    }

    if (NULL != btl->btl_sendi && 0 != (btl->btl_flags & MCA_BTL_FLAGS_SENDI) &&
        total <= btl->btl_eager_limit) {
        int rc = btl->btl_sendi(btl, endpoint, header, header_size, data, size, MCA_BTL_NO_ORDER,
                                MCA_BTL_DES_FLAGS_BTL_OWNERSHIP, tag, NULL);
        if (OPAL_ERR_RESOURCE_BUSY != rc) {
            return rc;
        }
        /* Busy for an immediate send (a full fast path) need not mean
         * busy for a descriptor: try one. */
    }

    if (total <= btl->btl_eager_limit && NULL != btl->btl_alloc) {
        mca_btl_base_descriptor_t *des =
            btl->btl_alloc(btl, endpoint, MCA_BTL_NO_ORDER, total, MCA_BTL_DES_FLAGS_BTL_OWNERSHIP);
        if (NULL == des) {
            return OPAL_ERR_RESOURCE_BUSY;
        }
        unsigned char *dst = des->des_segments[0].seg_addr;
        if (0 < header_size) {
            memcpy(dst, header, header_size);
        }
        if (0 < size) {
            memcpy(dst + header_size, data, size);
        }
        des->des_segments[0].seg_len = total;
        return send_des(btl, endpoint, des, tag);
    }

    /* Larger than the eager limit: the module packs after room for the
     * header. A module that may point at the data instead is waited for,
     * since the caller gets its buffer back on return. */
    bool inplace = 0 != (btl->btl_flags & MCA_BTL_FLAGS_SEND_INPLACE);
    size_t packed = size;
    uint32_t flags = inplace ? MCA_BTL_DES_FLAGS_BTL_OWNERSHIP | MCA_BTL_DES_SEND_ALWAYS_CALLBACK
                             : MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
    mca_btl_base_descriptor_t *des =
        btl->btl_prepare_src(btl, endpoint, data, MCA_BTL_NO_ORDER, header_size, &packed, flags);
    if (NULL == des) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    if (packed != size) {
        (void) btl->btl_free(btl, des);
        return OPAL_ERR_BAD_PARAM;
    }
    if (0 < header_size) {
        memcpy(des->des_segments[0].seg_addr, header, header_size);
    }
    if (!inplace) {
        return send_des(btl, endpoint, des, tag);
    }
    wait_t w = {.done = false, .status = OPAL_SUCCESS};
    des->des_cbfunc = wait_cb;
    des->des_cbdata = &w;
    int rc = send_des(btl, endpoint, des, tag);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    while (!w.done) {
        opal_progress();
    }
    return w.status;
}

int mca_btl_base_mux_send_copy(mca_btl_base_peer_t *peer, mca_btl_base_tag_t tag, const void *data,
                               size_t size)
{
    return mca_btl_base_mux_send_hdr(peer, tag, NULL, 0, data, size);
}
