/*
 * btl/sm's receive side and progress: polls the fast boxes peers set up
 * to this process and its FIFO, checks what it reads, and hands active
 * messages to their callbacks. Everything read from a peer's segment (or
 * from the FIFO, which every peer writes) is checked before use; a peer
 * whose data is impossible is dropped with a reason naming it.
 */
#include "opal/opal_config.h"

#include <string.h>

#include "opal/mca/btl/sm/btl_sm.h"
#include "opal/util/opal_timer.h"
#include "opal/util/opal_timeline.h"

/* Messages taken from one source per pass, so that one busy peer cannot
 * starve the others. */
#define SM_POLL_BATCH 32
/* The clock is read every this many passes (plus one) for the liveness
 * checks. */
#define SM_SLOW_PATH_MASK 0x3ffu

static inline void deliver(mca_btl_sm_endpoint_t *ep, uint8_t tag, const uint8_t *payload,
                           uint32_t len)
{
    mca_btl_base_segment_t segment = {.seg_addr = (void *) (uintptr_t) payload, .seg_len = len};
    mca_btl_base_receive_descriptor_t desc = {.endpoint = ep,
                                              .proc = ep->proc,
                                              .des_segments = &segment,
                                              .des_segment_count = 1,
                                              .tag = tag,
                                              .cbdata = NULL};
    mca_btl_base_am_dispatch(&mca_btl_sm.super, &desc);
}

/* SM_MSG_FBOX_SETUP: the peer sends through one of its fast boxes from
 * now on. */
static bool fbox_accept(mca_btl_sm_endpoint_t *ep, const uint8_t *payload, uint32_t len)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    if (sizeof(sm_fbox_setup_t) != len || ep->fbox_in_on) {
        mca_btl_sm_endpoint_drop(ep, SM_EP_FAILED,
                                 "rank %u sent a malformed fast-box setup (%u bytes%s)", ep->rank,
                                 len, ep->fbox_in_on ? ", a second one" : "");
        return false;
    }
    const sm_fbox_setup_t *setup = (const sm_fbox_setup_t *) (const void *) payload;
    uint32_t index = SM_READ_ONCE(setup->fbox_index);
    if (index >= ep->layout.fbox_count || sm->fbox_in_count >= sm->job_size) {
        mca_btl_sm_endpoint_drop(ep, SM_EP_FAILED, "rank %u set up fast box %u; its segment has %u",
                                 ep->rank, index, ep->layout.fbox_count);
        return false;
    }
    uint8_t *box =
        ep->seg_base + ep->layout.fbox_offset + (uint64_t) index * ep->layout.fbox_stride;
    sm_fbox_in_attach(&ep->fbox_in, box, ep->layout.fbox_stride - SM_FBOX_CTL_SIZE);
    ep->fbox_in_on = true;
    ep->fbox_in_busy = false;
    atomic_store_explicit(&ep->fbox_in_awaited, false, memory_order_relaxed);
    sm->fbox_in_eps[sm->fbox_in_count++] = ep;
    SM_VERBOSE(30, "btl sm: rank %u sends through its fast box %u from now on", ep->rank, index);
    return true;
}

/* A fragment of ep's segment was posted to us: checks and handles it,
 * then marks it done. False when ep was dropped. */
static bool handle_frag(mca_btl_sm_endpoint_t *ep, uint32_t index, const char *via)
{
    const sm_layout_t *l = &ep->layout;
    if (OPAL_UNLIKELY(index >= ep->frag_count)) {
        mca_btl_sm_endpoint_drop(ep, SM_EP_FAILED,
                                 "rank %u posted fragment %u through its %s; it has %u", ep->rank,
                                 index, via, ep->frag_count);
        return false;
    }
    uint64_t offset;
    uint32_t capacity;
    if (index < l->eager_count) {
        offset = l->frag_offset + (uint64_t) index * l->eager_stride;
        capacity = l->eager_stride - SM_FRAG_HDR_SIZE;
    } else {
        offset = l->frag_offset + (uint64_t) l->eager_count * l->eager_stride +
                 (uint64_t) (index - l->eager_count) * l->max_stride;
        capacity = l->max_stride - SM_FRAG_HDR_SIZE;
    }
    sm_frag_hdr_t *hdr = (sm_frag_hdr_t *) (void *) (ep->seg_base + offset);
    const uint32_t len = SM_READ_ONCE(hdr->len);
    const uint8_t type = SM_READ_ONCE(hdr->type);
    const uint8_t tag = SM_READ_ONCE(hdr->tag);
    if (OPAL_UNLIKELY(len > capacity)) {
        mca_btl_sm_endpoint_drop(ep, SM_EP_FAILED,
                                 "rank %u posted fragment %u claiming %u bytes; it holds %u",
                                 ep->rank, index, len, capacity);
        return false;
    }
    const uint8_t *payload = (const uint8_t *) hdr + SM_FRAG_HDR_SIZE;
    switch (type) {
        case SM_MSG_AM:
            deliver(ep, tag, payload, len);
            break;
        case SM_MSG_FBOX_SETUP:
            if (!fbox_accept(ep, payload, len)) {
                return false;
            }
            break;
        case SM_MSG_GET_REQ:
        case SM_MSG_GET_RESP:
        case SM_MSG_PUT_DATA:
        case SM_MSG_PUT_ACK:
            if (OPAL_SUCCESS != mca_btl_sm_emu_handle(ep, type, payload, len)) {
                mca_btl_sm_endpoint_drop(ep, SM_EP_FAILED,
                                         "rank %u sent a malformed put/get message (type %u, %u "
                                         "bytes)",
                                         ep->rank, type, len);
                return false;
            }
            break;
        case SM_MSG_SPLIT: {
            char why[96];
            if (OPAL_SUCCESS != mca_btl_sm_split_serve(ep, (sm_split_msg_t *) (uintptr_t) payload,
                                                       len, why, sizeof(why))) {
                mca_btl_sm_endpoint_drop(
                    ep, SM_EP_FAILED, "rank %u sent a malformed shared put/get: %s", ep->rank, why);
                return false;
            }
            break;
        }
        default:
            mca_btl_sm_endpoint_drop(ep, SM_EP_FAILED,
                                     "rank %u posted fragment %u of unknown type %u", ep->rank,
                                     index, type);
            return false;
    }
    /* Release pairs with the sender's acquire in reclaim: our reads of
     * the fragment are done before it may write it again. */
    atomic_store_explicit(&hdr->done, SM_FRAG_DONE, memory_order_release);
    return SM_EP_FAILED != ep->state;
}

static int poll_fbox(mca_btl_sm_endpoint_t *ep)
{
    if (OPAL_UNLIKELY(SM_EP_FAILED == ep->state)) {
        return 0;
    }
    int count = 0;
    sm_fbox_msg_t msg;
    /* After a look that found nothing, one message. The next header lies
     * past it, often in a line the sender has just written (the word it
     * zeroes past each message), and reading that line now would put a
     * cross-core miss (80-100 ns in a timeline of an RPC ping-pong)
     * between this message and its handling, which sends the answer a
     * ping-pong waits for; the next round reads it after the answer left.
     * A look that found messages takes a whole batch: a stream is drained
     * as before, from its second round on. */
    const int batch = ep->fbox_in_busy ? SM_POLL_BATCH : 1;
    while (count < batch) {
        int rc = sm_fbox_peek(&ep->fbox_in, &msg);
        if (OPAL_LIKELY(0 == rc)) {
            if (atomic_load_explicit(&ep->fbox_in_awaited, memory_order_relaxed)) {
                sm_fbox_watch_ahead(&ep->fbox_in);
            }
            break;
        }
        if (OPAL_UNLIKELY(rc < 0)) {
            mca_btl_sm_endpoint_drop(ep, SM_EP_FAILED,
                                     "rank %u's fast box holds an impossible header at byte %u",
                                     ep->rank, ep->fbox_in.start & (ep->fbox_in.size - 1));
            break;
        }
        OPAL_TIMELINE(sm_arrived);
        /* Only our private position moves; the sender may overwrite the
         * message once we publish, after the loop. */
        sm_fbox_consume(&ep->fbox_in, &msg);
        ++count;
        if (1 == count) {
            atomic_store_explicit(&ep->fbox_in_awaited, false, memory_order_relaxed);
        }
        /* Faults: a message lost, or one a broken peer wrote. */
        if (OPAL_FAULT(sm_recv_corrupt)) {
            msg.type = SM_MSG_TYPE_MAX + 1;
        }
        if (SM_MSG_AM == msg.type && OPAL_FAULT(sm_recv_drop)) {
            continue;
        }
        if (OPAL_LIKELY(SM_MSG_AM == msg.type)) {
            deliver(ep, msg.tag, msg.payload, msg.size);
        } else if (SM_MSG_FRAG == msg.type && sizeof(uint32_t) == msg.size) {
            uint32_t index = SM_READ_ONCE(*(const uint32_t *) (const void *) msg.payload);
            if (!handle_frag(ep, index, "fast box")) {
                break;
            }
        } else {
            mca_btl_sm_endpoint_drop(ep, SM_EP_FAILED,
                                     "rank %u's fast box holds a message of unknown type %u",
                                     ep->rank, msg.type);
            break;
        }
        if (OPAL_UNLIKELY(SM_EP_FAILED == ep->state)) {
            break;
        }
    }
    ep->fbox_in_busy = count > 0;
    if (count) {
        sm_fbox_publish(&ep->fbox_in);
    }
    return count;
}

/* The endpoint of the rank a FIFO entry names, created on first contact
 * from a peer that has not been added here yet. */
static mca_btl_sm_endpoint_t *fifo_sender(uint32_t rank)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    if (OPAL_UNLIKELY(rank >= sm->job_size)) {
        opal_output(0,
                    "btl sm: an entry of this process's FIFO names rank %u, outside the job "
                    "of %u (a peer scribbled on it); ignored",
                    rank, sm->job_size);
        return NULL;
    }
    mca_btl_sm_endpoint_t *ep = sm->ep_by_rank[rank];
    if (OPAL_LIKELY(NULL != ep) || sm->rank_unreachable[rank]) {
        return ep;
    }
    char why[MCA_BTL_BASE_REASON_MAX];
    SM_LOCK();
    ep = mca_btl_sm_endpoint_get(rank, NULL, why, sizeof(why));
    SM_UNLOCK();
    if (NULL == ep) {
        sm->rank_unreachable[rank] = 1;
        opal_output(0,
                    "btl sm: an entry of this process's FIFO names rank %u, which sm cannot "
                    "reach (%s); ignored",
                    rank, why);
    }
    return ep;
}

static int poll_fifo(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    int count = 0;
    uint64_t entry;
    while (count < SM_POLL_BATCH && sm_fifo_pop(&sm->fifo, &entry)) {
        OPAL_TIMELINE(sm_arrived);
        ++count;
        uint32_t rank, index;
        sm_fifo_entry_decode(entry, &rank, &index);
        mca_btl_sm_endpoint_t *ep = fifo_sender(rank);
        if (OPAL_UNLIKELY(NULL == ep || SM_EP_FAILED == ep->state || NULL == ep->seg_base)) {
            /* (NULL seg_base: retired, its segment no longer mapped.) */
            continue;
        }
        if (OPAL_UNLIKELY(ep->fbox_in_on)) {
            mca_btl_sm_endpoint_drop(ep, SM_EP_FAILED,
                                     "rank %u wrote into this process's FIFO after setting up "
                                     "its fast box",
                                     rank);
            continue;
        }
        handle_frag(ep, index, "FIFO");
    }
    return count;
}

/* Every SM_SLOW_PATH_MASK + 1 passes: peers' liveness at
 * btl_sm_liveness_interval, and this FIFO's sanity. */
static int slow_path(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    uint64_t now = opal_timer_ns();
    if (now < sm->next_liveness_ns) {
        return 0;
    }
    sm->next_liveness_ns = now + (uint64_t) mca_btl_sm_params.liveness_ms * 1000000u;
    bool tail_reset = false;
    uint32_t skipped = mca_btl_sm_fifo_check(&sm->fifo, &tail_reset);
    if (OPAL_UNLIKELY(0 != skipped || tail_reset)) {
        opal_output(0, "btl sm: rank %u's FIFO was scribbled on by a peer (%u slot%s skipped%s)",
                    sm->my_rank, skipped, 1 == skipped ? "" : "s",
                    tail_reset ? ", tail reset" : "");
    }
    return mca_btl_sm_endpoint_check_peers();
}

static inline int poll_all(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    int events = 0;
    for (uint32_t i = 0; i < sm->fbox_in_count; ++i) {
        events += poll_fbox(sm->fbox_in_eps[i]);
    }
    return events + poll_fifo();
}

/* Passes of mca_btl_sm_recv_drain: a peer that finalized wrote at most
 * a fast box and its share of the FIFO; one that keeps writing is broken
 * and gets no more. */
#define SM_DRAIN_PASSES 64

void mca_btl_sm_recv_drain(mca_btl_sm_endpoint_t *ep)
{
    for (int pass = 0; pass < SM_DRAIN_PASSES; ++pass) {
        int count = ep->fbox_in_on ? poll_fbox(ep) : 0;
        count += poll_fifo();
        if (0 == count) {
            return;
        }
    }
}

bool mca_btl_sm_recv_pending(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    sm_fbox_msg_t msg;
    for (uint32_t i = 0; i < sm->fbox_in_count; ++i) {
        mca_btl_sm_endpoint_t *ep = sm->fbox_in_eps[i];
        if (SM_EP_FAILED != ep->state && 0 != sm_fbox_peek(&ep->fbox_in, &msg)) {
            return true;
        }
    }
    /* Acquire pairs with the producers' release CAS, as in a pop. */
    uint64_t word =
        atomic_load_explicit(&sm->fifo.slots[sm->fifo.head & sm->fifo.mask], memory_order_acquire);
    return sm_fifo_slot_word(sm->fifo.head, 0) == (word & ~SM_FIFO_VALUE_MASK) &&
           0 != (word & SM_FIFO_VALUE_MASK);
}

int mca_btl_sm_component_progress(void)
{
    mca_btl_sm_module_t *sm = &mca_btl_sm;
    int events = 0;
    /* Gathered put / get first: their caller is waiting for them. */
    if (0 != atomic_load_explicit(&sm->cma_batched, memory_order_relaxed)) {
        events += mca_btl_sm_cma_flush();
    }
    events += poll_all();
    if (!opal_list_is_empty(&sm->work_eps)) {
        events += mca_btl_sm_send_progress();
    }
    /* One load in an idle round: shared put / get are rare. */
    if (OPAL_UNLIKELY(0 != atomic_load_explicit(&sm->split_waiting, memory_order_relaxed) ||
                      0 != atomic_load_explicit(&sm->split_fresh_count, memory_order_relaxed))) {
        events += mca_btl_sm_split_progress();
    }
    if (OPAL_UNLIKELY(0 == (++sm->poll_count & SM_SLOW_PATH_MASK))) {
        events += slow_path();
    }
    if (OPAL_UNLIKELY(atomic_load_explicit(&sm->drops_pending, memory_order_acquire))) {
        events += mca_btl_sm_endpoint_process_drops();
    }
    if (OPAL_UNLIKELY(mca_btl_sm_params.blocking) && 0 != events) {
        mca_btl_sm_wake_disarm();
    }
    return events;
}
