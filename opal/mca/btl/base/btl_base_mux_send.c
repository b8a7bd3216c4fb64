/*
 * Copying sends over a peer's best module: what an upper layer calls when
 * it wants its bytes gone and its buffer back, without caring which of
 * sendi, alloc or prepare_src the module prefers.
 */
#include "opal/opal_config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "opal/class/opal_list.h"
#include "opal/mca/btl/base/base.h"
#include "opal/mca/btl/base/btl_base_internal.h"
#include "opal/threads/opal_mutex.h"
#include "opal/util/opal_error.h"

/* Bounce buffers for modules that send in place (prepare_src may point at
 * the data until the send completes): a copying send must give the caller
 * its buffer back at once, and waiting for the completion instead would
 * spin forever when the caller is itself a callback run by opal_progress,
 * which does not nest. Buffers are allocated while warming up, then
 * reused; bounce_lock guards the list when threads are in use. */
typedef struct {
    opal_list_item_t super;
    size_t size;
    unsigned char *data;
} bounce_t;

static void bounce_construct(bounce_t *b)
{
    b->size = 0;
    b->data = NULL;
}

static void bounce_destruct(bounce_t *b)
{
    free(b->data);
}

static OBJ_CLASS_INSTANCE(bounce_t, opal_list_item_t, bounce_construct, bounce_destruct);

static opal_list_t bounces;
static opal_mutex_t bounce_lock;
static bool bounces_ready = false;

/* A buffer of at least size bytes, or NULL when memory runs out. */
static bounce_t *bounce_get(size_t size)
{
    if (!bounces_ready) {
        OBJ_CONSTRUCT(&bounces, opal_list_t);
        OBJ_CONSTRUCT(&bounce_lock, opal_mutex_t);
        bounces_ready = true;
    }
    OPAL_THREAD_LOCK(&bounce_lock);
    bounce_t *b = (bounce_t *) opal_list_remove_first(&bounces);
    OPAL_THREAD_UNLOCK(&bounce_lock);
    if (NULL == b) {
        b = OBJ_NEW(bounce_t);
        if (NULL == b) {
            return NULL;
        }
    }
    if (b->size < size) {
        unsigned char *bigger = realloc(b->data, size);
        if (NULL == bigger) {
            OBJ_RELEASE(b);
            return NULL;
        }
        b->data = bigger;
        b->size = size;
    }
    return b;
}

static void bounce_put(bounce_t *b)
{
    OPAL_THREAD_LOCK(&bounce_lock);
    opal_list_prepend(&bounces, &b->super);
    OPAL_THREAD_UNLOCK(&bounce_lock);
}

static void bounce_done(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                        struct mca_btl_base_descriptor_t *des, int status)
{
    bounce_put(des->des_cbdata);
}

void mca_btl_base_mux_send_release(void)
{
    if (bounces_ready) {
        OPAL_LIST_DESTRUCT(&bounces);
        OBJ_DESTRUCT(&bounce_lock);
        bounces_ready = false;
    }
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
     * header. A module that may point at the data instead gets a copy of
     * it, given back when the send completes. */
    bool inplace = 0 != (btl->btl_flags & MCA_BTL_FLAGS_SEND_INPLACE);
    bounce_t *bounce = NULL;
    if (inplace && 0 < size) {
        bounce = bounce_get(size);
        if (NULL == bounce) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        memcpy(bounce->data, data, size);
        data = bounce->data;
    }
    size_t packed = size;
    uint32_t flags = NULL != bounce
                         ? MCA_BTL_DES_FLAGS_BTL_OWNERSHIP | MCA_BTL_DES_SEND_ALWAYS_CALLBACK
                         : MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
    mca_btl_base_descriptor_t *des =
        btl->btl_prepare_src(btl, endpoint, data, MCA_BTL_NO_ORDER, header_size, &packed, flags);
    int rc = OPAL_SUCCESS;
    if (NULL == des) {
        rc = OPAL_ERR_RESOURCE_BUSY;
    } else if (packed != size) {
        (void) btl->btl_free(btl, des);
        rc = OPAL_ERR_BAD_PARAM;
    }
    if (OPAL_SUCCESS != rc) {
        if (NULL != bounce) {
            bounce_put(bounce);
        }
        return rc;
    }
    if (0 < header_size) {
        memcpy(des->des_segments[0].seg_addr, header, header_size);
    }
    if (NULL != bounce) {
        des->des_cbfunc = bounce_done;
        des->des_cbdata = bounce;
    }
    rc = send_des(btl, endpoint, des, tag);
    if (OPAL_SUCCESS != rc && NULL != bounce) {
        /* Not sent: the callback will not run. */
        bounce_put(bounce);
    }
    return rc;
}

int mca_btl_base_mux_send_copy(mca_btl_base_peer_t *peer, mca_btl_base_tag_t tag, const void *data,
                               size_t size)
{
    return mca_btl_base_mux_send_hdr(peer, tag, NULL, 0, data, size);
}
