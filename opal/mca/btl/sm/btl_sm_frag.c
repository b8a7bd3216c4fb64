/*
 * btl/sm's descriptors: one per fragment of this process's segment, kept
 * in two free lists (eager and max), bound to their fragment once at init.
 * A descriptor goes back to its list when nobody needs it any more: not
 * held by the caller (alloc / prepare_src until send with BTL_OWNERSHIP,
 * or free), not in flight (the receiver has not marked it done), not
 * waiting to be posted, not in its completion callback.
 */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/sm/btl_sm.h"

/* Set while the descriptor is on its free list. */
#define SM_FRAG_FREE 0x100
/* Set while its completion callback runs (btl_free inside it must not
 * return it: the reclaim that called back does). */
#define SM_FRAG_IN_CALLBACK 0x200

static void frag_construct(mca_btl_sm_frag_t *frag)
{
    frag->base.des_segments = &frag->segment;
    frag->base.des_segment_count = 1;
    frag->hdr = NULL;
    frag->payload = NULL;
    frag->index = 0;
    frag->capacity = 0;
    frag->list = NULL;
    frag->endpoint = NULL;
    frag->flags = SM_FRAG_FREE;
}

OBJ_CLASS_INSTANCE(mca_btl_sm_frag_t, mca_btl_base_descriptor_t, frag_construct, NULL);

/* Takes every item of list out once, binds item k to fragment first + k,
 * and puts them back. */
static int bind_list(opal_free_list_t *list, uint32_t first, uint32_t count, uint64_t offset,
                     uint32_t stride)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    for (uint32_t k = 0; k < count; ++k) {
        mca_btl_sm_frag_t *frag = (mca_btl_sm_frag_t *) opal_free_list_get_st(list);
        if (NULL == frag) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        uint8_t *base = sm->seg_base + offset + (uint64_t) k * stride;
        frag->hdr = (sm_frag_hdr_t *) (void *) base;
        frag->payload = base + SM_FRAG_HDR_SIZE;
        frag->capacity = stride - SM_FRAG_HDR_SIZE;
        frag->index = first + k;
        frag->list = list;
        sm->frag_by_index[first + k] = frag;
    }
    for (uint32_t k = 0; k < count; ++k) {
        mca_btl_sm_frag_t *frag = sm->frag_by_index[first + k];
        frag->flags = SM_FRAG_FREE;
        opal_free_list_return_st(list, &frag->base.super);
    }
    return OPAL_SUCCESS;
}

int mca_btl_sm_frags_init(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    const sm_layout_t *l = &sm->seg_hdr->layout;
    sm->frag_count = l->eager_count + l->max_count;
    sm->eager_payload = l->eager_stride - SM_FRAG_HDR_SIZE;
    sm->max_payload = l->max_stride - SM_FRAG_HDR_SIZE;
    sm->frag_by_index = calloc(sm->frag_count, sizeof(*sm->frag_by_index));
    if (NULL == sm->frag_by_index) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    OBJ_CONSTRUCT(&sm->eager_list, opal_free_list_t);
    OBJ_CONSTRUCT(&sm->max_list, opal_free_list_t);
    int rc = opal_free_list_init(&sm->eager_list, sizeof(mca_btl_sm_frag_t), 0,
                                 OBJ_CLASS(mca_btl_sm_frag_t), 0, 0, l->eager_count, l->eager_count,
                                 l->eager_count, NULL, NULL, NULL);
    if (OPAL_SUCCESS == rc) {
        rc = opal_free_list_init(&sm->max_list, sizeof(mca_btl_sm_frag_t), 0,
                                 OBJ_CLASS(mca_btl_sm_frag_t), 0, 0, l->max_count, l->max_count,
                                 l->max_count, NULL, NULL, NULL);
    }
    if (OPAL_SUCCESS == rc) {
        rc = bind_list(&sm->eager_list, 0, l->eager_count, l->frag_offset, l->eager_stride);
    }
    if (OPAL_SUCCESS == rc) {
        rc = bind_list(&sm->max_list, l->eager_count, l->max_count,
                       l->frag_offset + (uint64_t) l->eager_count * l->eager_stride, l->max_stride);
    }
    return rc;
}

void mca_btl_sm_frags_fini(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    if (NULL == sm->frag_by_index) {
        return;
    }
    /* Whatever is still out (in flight to a peer that never answered, or
     * never freed by its caller) goes back so the lists can be destructed. */
    for (uint32_t i = 0; i < sm->frag_count; ++i) {
        mca_btl_sm_frag_t *frag = sm->frag_by_index[i];
        if (NULL != frag && !(frag->flags & SM_FRAG_FREE)) {
            frag->flags = SM_FRAG_FREE;
            frag->endpoint = NULL;
            opal_free_list_return_st(frag->list, &frag->base.super);
        }
    }
    OBJ_DESTRUCT(&sm->eager_list);
    OBJ_DESTRUCT(&sm->max_list);
    free(sm->frag_by_index);
    sm->frag_by_index = NULL;
}

static mca_btl_sm_frag_t *frag_take(opal_free_list_t *list)
{
    return (mca_btl_sm_frag_t *) opal_free_list_get(list);
}

mca_btl_sm_frag_t *mca_btl_sm_frag_get(mca_btl_sm_endpoint_t *ep, size_t size)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    if (NULL != ep && ep->held >= mca_btl_sm_params.frags_per_peer) {
        /* This peer holds its share: it must read before we send more. */
        mca_btl_sm_frag_reclaim(ep);
        if (ep->held >= mca_btl_sm_params.frags_per_peer) {
            return NULL;
        }
    }
    mca_btl_sm_frag_t *frag = NULL;
    bool eager = size <= sm->eager_payload;
    if (eager) {
        frag = frag_take(&sm->eager_list);
    }
    if (NULL == frag && size <= sm->max_payload) {
        frag = frag_take(&sm->max_list);
    }
    if (NULL == frag && NULL != ep && 0 != ep->held) {
        /* Out of fragments: take back what this peer is done with. */
        if (0 < mca_btl_sm_frag_reclaim(ep)) {
            frag = frag_take(eager ? &sm->eager_list : &sm->max_list);
        }
    }
    if (NULL == frag) {
        return NULL;
    }
    frag->flags = 0;
    frag->endpoint = ep;
    frag->base.des_flags = 0;
    frag->base.des_cbfunc = NULL;
    frag->base.des_cbdata = NULL;
    frag->base.des_context = NULL;
    frag->segment.seg_addr = frag->payload;
    frag->segment.seg_len = 0;
    if (NULL != ep) {
        ++ep->held;
    }
    return frag;
}

void mca_btl_sm_frag_return(mca_btl_sm_frag_t *frag)
{
    if (NULL != frag->endpoint) {
        --frag->endpoint->held;
        frag->endpoint = NULL;
    }
    frag->flags = SM_FRAG_FREE;
    opal_free_list_return(frag->list, &frag->base.super);
}

int mca_btl_sm_frag_reclaim(mca_btl_sm_endpoint_t *ep)
{
    int count = 0;
    while (!opal_list_is_empty(&ep->inflight)) {
        mca_btl_sm_frag_t *frag = (mca_btl_sm_frag_t *) opal_list_get_first(&ep->inflight);
        /* Acquire pairs with the receiver's release store of done: its
         * reads of the fragment are over before we write it again. The
         * receiver handles one sender's fragments in order, so the first
         * not done ends the scan. */
        if (SM_FRAG_DONE != atomic_load_explicit(&frag->hdr->done, memory_order_acquire) &&
            SM_EP_CONNECTED == ep->state) {
            break;
        }
        opal_list_remove_first(&ep->inflight);
        frag->flags &= ~SM_FRAG_INFLIGHT;
        --mca_btl_sm.inflight_total;
        ++count;
        if (frag->flags & SM_FRAG_CALLBACK) {
            frag->flags = (frag->flags & ~SM_FRAG_CALLBACK) | SM_FRAG_IN_CALLBACK;
            int status = SM_EP_CONNECTED == ep->state ? OPAL_SUCCESS : OPAL_ERR_UNREACH;
            SM_UNLOCK();
            frag->base.des_cbfunc(&mca_btl_sm.super, ep, &frag->base, status);
            SM_LOCK();
            frag->flags &= ~SM_FRAG_IN_CALLBACK;
        }
        if (!(frag->flags & SM_FRAG_USER)) {
            mca_btl_sm_frag_return(frag);
        }
    }
    return count;
}

/* ---------------------------------------------------------- module ops */

mca_btl_base_descriptor_t *mca_btl_sm_alloc(mca_btl_base_module_t *btl,
                                            mca_btl_base_endpoint_t *endpoint, uint8_t order,
                                            size_t size, uint32_t flags)
{
    (void) btl;
    (void) order;
    if (size > mca_btl_sm.max_payload) {
        return NULL;
    }
    SM_LOCK();
    mca_btl_sm_frag_t *frag = mca_btl_sm_frag_get(endpoint, size);
    SM_UNLOCK();
    if (NULL == frag) {
        return NULL;
    }
    frag->flags = SM_FRAG_USER;
    frag->segment.seg_len = size;
    frag->base.des_flags = flags;
    return &frag->base;
}

int mca_btl_sm_free(mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des)
{
    (void) btl;
    mca_btl_sm_frag_t *frag = (mca_btl_sm_frag_t *) des;
    if (NULL == frag || (frag->flags & SM_FRAG_FREE) || !(frag->flags & SM_FRAG_USER)) {
        return OPAL_ERR_BAD_PARAM;
    }
    SM_LOCK();
    frag->flags &= ~SM_FRAG_USER;
    /* In flight or calling back: the receiver's done (reclaim) returns it. */
    if (0 == (frag->flags &
              (SM_FRAG_INFLIGHT | SM_FRAG_PENDING | SM_FRAG_CALLBACK | SM_FRAG_IN_CALLBACK))) {
        mca_btl_sm_frag_return(frag);
    }
    SM_UNLOCK();
    return OPAL_SUCCESS;
}

mca_btl_base_descriptor_t *mca_btl_sm_prepare_src(mca_btl_base_module_t *btl,
                                                  mca_btl_base_endpoint_t *endpoint,
                                                  const void *data, uint8_t order, size_t reserve,
                                                  size_t *size, uint32_t flags)
{
    (void) btl;
    (void) order;
    if (reserve > mca_btl_sm.max_payload) {
        return NULL;
    }
    size_t length = *size;
    if (length > mca_btl_sm.max_payload - reserve) {
        length = mca_btl_sm.max_payload - reserve;
    }
    SM_LOCK();
    mca_btl_sm_frag_t *frag = mca_btl_sm_frag_get(endpoint, reserve + length);
    SM_UNLOCK();
    if (NULL == frag) {
        return NULL;
    }
    if (0 != length) {
        memcpy(frag->payload + reserve, data, length);
    }
    frag->flags = SM_FRAG_USER;
    frag->segment.seg_len = reserve + length;
    frag->base.des_flags = flags;
    *size = length;
    return &frag->base;
}
