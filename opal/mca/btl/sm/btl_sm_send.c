/*
 * btl/sm's send side: posting fragments (FIFO or fast box), immediate
 * sends, setting up fast boxes, and retrying what had to wait.
 *
 * Order per peer: before the fast box exists everything goes through the
 * peer's FIFO; the fast-box setup is itself a FIFO message, and from then
 * on everything goes through the box (small messages inline, the others
 * as fragment references). The receiver handles its FIFO in order, so it
 * starts reading the box exactly where the FIFO messages end. A send that
 * finds no room waits on the endpoint's pending list, and later sends
 * queue behind it (sendi answers busy while anything waits).
 */
#include "opal/opal_config.h"

#include <string.h>

#include "opal/mca/btl/sm/btl_sm.h"
#include "opal/util/opal_timeline.h"

/* Inline fast-box messages are at most this share of the ring. */
#define SM_FBOX_INLINE_SHARE 4

static inline uint32_t fbox_inline_limit(void)
{
    uint32_t limit = mca_btl_sm_params.fbox_size / SM_FBOX_INLINE_SHARE;
    return limit > UINT16_MAX ? UINT16_MAX : limit;
}

/* The receiver's published start in our fast box is impossible: it is
 * scribbling on our segment. */
static void fbox_corrupt(mca_btl_sm_endpoint_t *ep)
{
    mca_btl_sm_endpoint_drop(
        ep, SM_EP_FAILED, "rank %u wrote an impossible read position into its fast box", ep->rank);
}

/* Test-only faults (btl_sm_fault_inject): write garbage where the peer
 * reads, once, after fault_after messages. Returns true when the message
 * was replaced by the fault. */
static bool inject_fault(mca_btl_sm_endpoint_t *ep, mca_btl_sm_frag_t *frag)
{
    const mca_btl_sm_params_t *c = &mca_btl_sm_params;
    if (OPAL_LIKELY(SM_FAULT_NONE == c->fault_inject) || ep->faults_sent++ != c->fault_after) {
        return false;
    }
    switch (c->fault_inject) {
        case SM_FAULT_FIFO_ENTRY:
            (void) sm_fifo_push(&ep->fifo, sm_fifo_entry(mca_btl_sm.my_rank, SM_MAX_FRAGS - 2));
            return false;
        case SM_FAULT_FRAG_LEN:
            SM_WRITE_ONCE(frag->hdr->len, frag->capacity + 4096);
            return false;
        case SM_FAULT_SPLIT:
            if (frag->capacity >= sizeof(sm_split_msg_t)) {
                sm_split_msg_t *msg = (sm_split_msg_t *) (void *) frag->payload;
                memset(msg, 0, sizeof(*msg));
                msg->slices = 1;
                msg->slice = msg->length = 4096;
                SM_WRITE_ONCE(frag->hdr->len, (uint32_t) sizeof(*msg));
                SM_WRITE_ONCE(frag->hdr->type, (uint8_t) SM_MSG_SPLIT);
            }
            return false;
        case SM_FAULT_FIFO_TAIL:
            atomic_store_explicit(&ep->seg_hdr->fifo_tail, UINT64_C(0xdeadbeefdeadbeef),
                                  memory_order_relaxed);
            return false;
        case SM_FAULT_FBOX_SIZE:
        case SM_FAULT_FBOX_TYPE:
            if (ep->fbox_out_on) {
                uint32_t pos = sm_fbox_reserve(&ep->fbox_out, 0);
                if (pos < SM_FBOX_FULL) {
                    sm_fbox_hdr_t bad = {
                        .data = {.seq = ep->fbox_out.seq,
                                 .size = SM_FAULT_FBOX_SIZE == c->fault_inject ? UINT16_MAX : 0,
                                 .tag = 0,
                                 .type = SM_FAULT_FBOX_SIZE == c->fault_inject ? SM_MSG_AM : 0x7f}};
                    atomic_store_explicit(sm_fbox_word(ep->fbox_out.ring, pos), bad.word,
                                          memory_order_release);
                    ep->fbox_out.seq = sm_fbox_next_seq(ep->fbox_out.seq);
                    ep->fbox_out.end += sm_fbox_need(0);
                }
            } else {
                --ep->faults_sent; /* wait for the fast box */
            }
            return false;
        default:
            return false;
    }
}

/* Sets up a fast box to ep once it has had enough FIFO messages: takes
 * one of the peer's fast-box credits and one of our boxes, and announces
 * it through the FIFO. Any failure leaves things as they were (retried
 * after the next message). */
static void fbox_setup(mca_btl_sm_endpoint_t *ep)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    if (0 == sm->fbox_out_free_count && sm->fbox_out_used >= sm->seg_hdr->layout.fbox_count) {
        return;
    }
    /* Relaxed: the credit is a count; the box itself is announced by the
     * FIFO push below, which orders everything. */
    if (atomic_fetch_sub_explicit(&ep->seg_hdr->fbox_in_available, 1, memory_order_relaxed) <= 0) {
        atomic_fetch_add_explicit(&ep->seg_hdr->fbox_in_available, 1, memory_order_relaxed);
        ep->fifo_sends = 0; /* ask again after another threshold */
        return;
    }
    mca_btl_sm_frag_t *frag = mca_btl_sm_frag_get(ep, sizeof(sm_fbox_setup_t));
    if (NULL == frag) {
        atomic_fetch_add_explicit(&ep->seg_hdr->fbox_in_available, 1, memory_order_relaxed);
        return;
    }
    const sm_layout_t *l = &sm->seg_hdr->layout;
    const bool reuse = 0 != sm->fbox_out_free_count;
    uint32_t index = reuse ? sm->fbox_out_free[sm->fbox_out_free_count - 1] : sm->fbox_out_used;
    void *box = sm->seg_base + l->fbox_offset + (uint64_t) index * l->fbox_stride;
    sm_fbox_out_t out;
    mca_btl_sm_fbox_format(&out, box, l->fbox_stride - SM_FBOX_CTL_SIZE);
    sm_fbox_setup_t setup = {.fbox_index = index, .reserved = 0};
    memcpy(frag->payload, &setup, sizeof(setup));
    frag->hdr->len = sizeof(setup);
    frag->hdr->tag = 0;
    frag->hdr->type = SM_MSG_FBOX_SETUP;
    atomic_store_explicit(&frag->hdr->done, 0, memory_order_relaxed);
    if (OPAL_SUCCESS != sm_fifo_push(&ep->fifo, sm_fifo_entry(sm->my_rank, frag->index))) {
        mca_btl_sm_frag_return(frag);
        atomic_fetch_add_explicit(&ep->seg_hdr->fbox_in_available, 1, memory_order_relaxed);
        return;
    }
    frag->flags |= SM_FRAG_INFLIGHT;
    opal_list_append(&ep->inflight, &frag->base.super.super);
    ++sm->inflight_total;
    mca_btl_sm_endpoint_add_work(ep);
    if (reuse) {
        --sm->fbox_out_free_count;
    } else {
        ++sm->fbox_out_used;
    }
    ep->fbox_out = out;
    ep->fbox_out_index = index;
    ep->fbox_out_on = true;
    SM_VERBOSE(30, "btl sm: fast box %u set up to rank %u", index, ep->rank);
}

int mca_btl_sm_post_frag(mca_btl_sm_endpoint_t *ep, mca_btl_sm_frag_t *frag)
{
    if (OPAL_UNLIKELY(NULL == ep->seg_hdr)) {
        /* Retired since the caller looked at its state: its segment is
         * no longer mapped here. */
        return OPAL_ERR_UNREACH;
    }
    /* Relaxed: the FIFO push or fast-box commit below is a release. */
    atomic_store_explicit(&frag->hdr->done, 0, memory_order_relaxed);
    inject_fault(ep, frag);
    if (ep->fbox_out_on) {
        uint32_t pos = sm_fbox_reserve(&ep->fbox_out, sizeof(uint32_t));
        if (OPAL_UNLIKELY(pos >= SM_FBOX_FULL)) {
            if (SM_FBOX_CORRUPT == pos) {
                fbox_corrupt(ep);
                return OPAL_ERR_UNREACH;
            }
            return OPAL_ERR_RESOURCE_BUSY;
        }
        uint32_t index = frag->index;
        memcpy(ep->fbox_out.ring + pos + SM_FBOX_HDR_SIZE, &index, sizeof(index));
        sm_fbox_commit(&ep->fbox_out, pos, sizeof(index), 0, SM_MSG_FRAG);
        atomic_store_explicit(&ep->fbox_in_awaited, true, memory_order_relaxed);
        OPAL_TIMELINE(sm_sent);
    } else {
        if (OPAL_SUCCESS !=
            sm_fifo_push(&ep->fifo, sm_fifo_entry(mca_btl_sm.my_rank, frag->index))) {
            return OPAL_ERR_RESOURCE_BUSY;
        }
        OPAL_TIMELINE(sm_sent);
        if (++ep->fifo_sends >= mca_btl_sm_params.fbox_threshold) {
            fbox_setup(ep);
        }
    }
    frag->flags |= SM_FRAG_INFLIGHT;
    opal_list_append(&ep->inflight, &frag->base.super.super);
    ++mca_btl_sm.inflight_total;
    mca_btl_sm_endpoint_add_work(ep);
    sm_wake_peer(ep);
    return OPAL_SUCCESS;
}

int mca_btl_sm_send(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep,
                    mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag)
{
    (void) btl;
    mca_btl_sm_frag_t *frag = (mca_btl_sm_frag_t *) des;
    if (OPAL_UNLIKELY(SM_EP_CONNECTED != ep->state)) {
        return OPAL_ERR_UNREACH;
    }
    if (OPAL_FAULT(btl_send)) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (OPAL_UNLIKELY(frag->segment.seg_len > frag->capacity || !(frag->flags & SM_FRAG_USER) ||
                      (NULL != frag->endpoint && frag->endpoint != ep))) {
        return OPAL_ERR_BAD_PARAM;
    }
    frag->hdr->len = (uint32_t) frag->segment.seg_len;
    frag->hdr->tag = tag;
    frag->hdr->type = SM_MSG_AM;
    const bool ownership = 0 != (des->des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP);
    const bool always = 0 != (des->des_flags & MCA_BTL_DES_SEND_ALWAYS_CALLBACK);

    SM_LOCK();
    if (NULL == frag->endpoint) {
        /* alloc without an endpoint: count it against this peer now. */
        frag->endpoint = ep;
        ++ep->held;
    }
    int rc =
        opal_list_is_empty(&ep->pending) ? mca_btl_sm_post_frag(ep, frag) : OPAL_ERR_RESOURCE_BUSY;
    if (OPAL_ERR_UNREACH == rc) {
        SM_UNLOCK();
        return rc;
    }
    if (OPAL_SUCCESS == rc) {
        if (ownership) {
            frag->flags &= ~SM_FRAG_USER;
        }
        if (NULL != des->des_cbfunc && (always || !ownership)) {
            /* The callback tells the caller the fragment can be reused:
             * once the receiver is done with it (reclaim). */
            frag->flags |= SM_FRAG_CALLBACK;
            rc = OPAL_SUCCESS;
        } else {
            rc = ownership ? 1 : OPAL_SUCCESS;
        }
        SM_UNLOCK();
        return rc;
    }
    /* No room now: wait behind the others; progress posts it. */
    frag->flags |= SM_FRAG_PENDING;
    if (ownership) {
        frag->flags &= ~SM_FRAG_USER;
    }
    if (NULL != des->des_cbfunc) {
        frag->flags |= SM_FRAG_CALLBACK;
    }
    opal_list_append(&ep->pending, &frag->base.super.super);
    mca_btl_sm_endpoint_add_work(ep);
    SM_UNLOCK();
    return OPAL_SUCCESS;
}

int mca_btl_sm_sendi(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *ep, const void *header,
                     size_t header_size, const void *payload, size_t payload_size, uint8_t order,
                     uint32_t flags, mca_btl_base_tag_t tag, mca_btl_base_descriptor_t **descriptor)
{
    (void) btl;
    (void) order;
    (void) flags;
    const size_t total = header_size + payload_size;
    if (NULL != descriptor) {
        *descriptor = NULL;
    }
    if (OPAL_UNLIKELY(SM_EP_CONNECTED != ep->state)) {
        return OPAL_ERR_UNREACH;
    }
    if (OPAL_FAULT(btl_sendi)) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (OPAL_UNLIKELY(total > mca_btl_sm.super.btl_eager_limit)) {
        return OPAL_ERR_BAD_PARAM;
    }
    SM_LOCK();
    if (OPAL_UNLIKELY(!opal_list_is_empty(&ep->pending))) {
        SM_UNLOCK();
        return OPAL_ERR_RESOURCE_BUSY;
    }
    if (OPAL_LIKELY(ep->fbox_out_on) && total <= fbox_inline_limit() &&
        OPAL_LIKELY(SM_FAULT_NONE == mca_btl_sm_params.fault_inject)) {
        uint32_t pos = sm_fbox_reserve(&ep->fbox_out, (uint32_t) total);
        if (OPAL_UNLIKELY(pos >= SM_FBOX_FULL)) {
            SM_UNLOCK();
            if (SM_FBOX_CORRUPT == pos) {
                fbox_corrupt(ep);
                return OPAL_ERR_UNREACH;
            }
            return OPAL_ERR_RESOURCE_BUSY;
        }
        sm_fbox_fill(&ep->fbox_out, pos, header, header_size, payload, payload_size);
        sm_fbox_commit(&ep->fbox_out, pos, (uint32_t) total, tag, SM_MSG_AM);
        atomic_store_explicit(&ep->fbox_in_awaited, true, memory_order_relaxed);
        OPAL_TIMELINE(sm_sent);
        sm_wake_peer(ep);
        SM_UNLOCK();
        return OPAL_SUCCESS;
    }
    mca_btl_sm_frag_t *frag = mca_btl_sm_frag_get(ep, total);
    if (OPAL_UNLIKELY(NULL == frag)) {
        SM_UNLOCK();
        return OPAL_ERR_RESOURCE_BUSY;
    }
    if (0 != header_size) {
        memcpy(frag->payload, header, header_size);
    }
    if (0 != payload_size) {
        memcpy(frag->payload + header_size, payload, payload_size);
    }
    frag->hdr->len = (uint32_t) total;
    frag->hdr->tag = tag;
    frag->hdr->type = SM_MSG_AM;
    int rc = mca_btl_sm_post_frag(ep, frag);
    if (OPAL_SUCCESS != rc) {
        mca_btl_sm_frag_return(frag);
    }
    SM_UNLOCK();
    return rc;
}

int mca_btl_sm_send_progress(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    int events = 0;
    SM_LOCK();
    opal_list_item_t *item = opal_list_get_first(&sm->work_eps);
    while (item != opal_list_get_end(&sm->work_eps)) {
        mca_btl_sm_endpoint_t *ep = SM_CONTAINER_OF(item, mca_btl_sm_endpoint_t, work_link);
        events += mca_btl_sm_frag_reclaim(ep);
        while (SM_EP_CONNECTED == ep->state && !opal_list_is_empty(&ep->pending)) {
            /* Off the pending list before posting puts it on inflight. */
            mca_btl_sm_frag_t *frag = (mca_btl_sm_frag_t *) opal_list_remove_first(&ep->pending);
            if (OPAL_SUCCESS != mca_btl_sm_post_frag(ep, frag)) {
                opal_list_prepend(&ep->pending, &frag->base.super.super);
                break;
            }
            frag->flags &= ~SM_FRAG_PENDING;
            ++events;
        }
        if (SM_EP_CONNECTED == ep->state && !opal_list_is_empty(&ep->streams)) {
            events += mca_btl_sm_emu_push(ep);
        }
        opal_list_item_t *next = opal_list_get_next(item);
        if (opal_list_is_empty(&ep->inflight) && opal_list_is_empty(&ep->pending) &&
            opal_list_is_empty(&ep->streams)) {
            opal_list_remove_item(&sm->work_eps, item);
            ep->on_work = false;
        }
        item = next;
    }
    SM_UNLOCK();
    return events;
}
