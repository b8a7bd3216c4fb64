/*
 * Active messages: descriptors, sends with immediate data (inline when
 * small), credits, and the receive side (SRQ buffers, dispatch, repost).
 */
#include "opal/opal_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/verbs/btl_verbs.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_timer.h"

/* ------------------------------------------------------------- receive */

int mca_btl_verbs_recv_post(mca_btl_verbs_module_t *module, size_t count)
{
    module->recv_all = calloc(count, sizeof(*module->recv_all));
    if (NULL == module->recv_all) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < count; ++i) {
        mca_btl_verbs_frag_t *frag =
            (mca_btl_verbs_frag_t *) opal_free_list_get(&module->recv_frags);
        if (NULL == frag) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        frag->kind = MCA_BTL_VERBS_WR_RECV;
        frag->lkey = ((struct ibv_mr *) frag->base.super.registration)->lkey;
        struct ibv_sge sge = {
            .addr = (uintptr_t) frag->base.super.ptr,
            .length = (uint32_t) module->super.btl_max_send_size,
            .lkey = frag->lkey,
        };
        struct ibv_recv_wr wr = {.wr_id = (uintptr_t) &frag->kind, .sg_list = &sge, .num_sge = 1};
        struct ibv_recv_wr *bad = NULL;
        if (0 != ibv_post_srq_recv(module->srq, &wr, &bad)) {
            opal_free_list_return(&module->recv_frags, &frag->base.super);
            return OPAL_ERROR;
        }
        frag->posted = true;
        module->recv_all[i] = frag;
    }
    return OPAL_SUCCESS;
}

static void repost(mca_btl_verbs_module_t *module, mca_btl_verbs_frag_t *frag)
{
    struct ibv_sge sge = {
        .addr = (uintptr_t) frag->base.super.ptr,
        .length = (uint32_t) module->super.btl_max_send_size,
        .lkey = frag->lkey,
    };
    struct ibv_recv_wr wr = {.wr_id = (uintptr_t) &frag->kind, .sg_list = &sge, .num_sge = 1};
    struct ibv_recv_wr *bad = NULL;
    if (0 != ibv_post_srq_recv(module->srq, &wr, &bad)) {
        /* The SRQ is broken (the device went away): the buffer waits in
         * the list; the async event reports the device. */
        opal_output_verbose(1, mca_btl_base_output, "btl/verbs (%s): reposting a receive: %s",
                            module->transport, strerror(errno));
        frag->posted = false;
        opal_free_list_return(&module->recv_frags, &frag->base.super);
    }
}

void mca_btl_verbs_handle_recv(mca_btl_verbs_module_t *module, const struct ibv_wc *wc)
{
    mca_btl_verbs_frag_t *frag =
        (mca_btl_verbs_frag_t *) (void *) ((char *) (uintptr_t) wc->wr_id -
                                           offsetof(mca_btl_verbs_frag_t, kind));
    if (IBV_WC_SUCCESS != wc->status) {
        /* SRQ buffers are flushed only when the SRQ goes (finalize). */
        if (!module->finalizing) {
            opal_output_verbose(1, mca_btl_base_output, "btl/verbs (%s): a receive failed: %s",
                                module->transport, ibv_wc_status_str(wc->status));
        }
        frag->posted = false;
        opal_free_list_return(&module->recv_frags, &frag->base.super);
        return;
    }
    void *value = NULL;
    if (OPAL_SUCCESS != opal_hash_table_get_value_uint32(&module->qpn_to_ep, wc->qp_num, &value) ||
        0 == (wc->wc_flags & IBV_WC_WITH_IMM)) {
        opal_output_verbose(1, mca_btl_base_output,
                            "btl/verbs (%s): dropped a message on unknown QP 0x%x",
                            module->transport, wc->qp_num);
        repost(module, frag);
        return;
    }
    mca_btl_verbs_endpoint_t *ep = value;
    MCA_BTL_VERBS_MEM_DEFINED(frag->base.super.ptr, wc->byte_len);
    uint32_t imm = ntohl(wc->imm_data);
    mca_btl_base_tag_t tag = (mca_btl_base_tag_t) (imm & 0xffu);
    ep->send_credits += imm >> MCA_BTL_VERBS_IMM_TAG_BITS;
    if (MCA_BTL_VERBS_TAG_CREDITS != tag) {
        mca_btl_base_segment_t segment = {.seg_addr = frag->base.super.ptr,
                                          .seg_len = wc->byte_len};
        mca_btl_base_receive_descriptor_t desc = {
            .endpoint = ep,
            .proc = ep->proc,
            .des_segments = &segment,
            .des_segment_count = 1,
            .tag = tag,
        };
        if (MCA_BTL_VERBS_EP_FAILED != ep->state) {
            mca_btl_base_am_dispatch(&module->super, &desc);
        }
        ep->credits_owed++;
    }
    repost(module, frag);
    if (MCA_BTL_VERBS_EP_READY == ep->state) {
        mca_btl_verbs_credits_check(module, ep);
    }
}

/* -------------------------------------------------------------- credits */

static bool sq_room(const mca_btl_verbs_module_t *module, const mca_btl_verbs_endpoint_t *ep)
{
    return ep->sq_posted < module->sq_depth && module->sq_pending < module->sq_pending_max;
}

/* The credits to give back with a message now (taken from what is owed). */
static uint32_t take_owed(mca_btl_verbs_endpoint_t *ep)
{
    uint32_t n = ep->credits_owed < MCA_BTL_VERBS_IMM_CREDIT_MAX ? ep->credits_owed
                                                                 : MCA_BTL_VERBS_IMM_CREDIT_MAX;
    ep->credits_owed -= n;
    return n;
}

void mca_btl_verbs_credits_check(mca_btl_verbs_module_t *module, mca_btl_verbs_endpoint_t *ep)
{
    if (ep->credit_msg_posted || ep->credits_owed < (module->credits + 1) / 2 ||
        !sq_room(module, ep)) {
        return;
    }
    uint32_t n = take_owed(ep);
    struct ibv_send_wr wr = {
        .wr_id = (uintptr_t) &ep->credit_kind,
        .sg_list = NULL,
        .num_sge = 0,
        .opcode = IBV_WR_SEND_WITH_IMM,
        .send_flags = IBV_SEND_SIGNALED,
        .imm_data = htonl(mca_btl_verbs_imm_make(MCA_BTL_VERBS_TAG_CREDITS, n)),
    };
    struct ibv_send_wr *bad = NULL;
    if (0 != ibv_post_send(ep->qp, &wr, &bad)) {
        ep->credits_owed += n;
        return;
    }
    ep->credit_msg_posted = true;
    ep->sq_posted++;
    module->sq_pending++;
}

/* Posts a liveness probe to ep (see probe_posted in btl_verbs.h). */
static void probe(mca_btl_verbs_module_t *module, mca_btl_verbs_endpoint_t *ep)
{
    uint64_t now = opal_timer_ns();
    if (ep->probe_posted || now < ep->probe_next_ns || !sq_room(module, ep)) {
        return;
    }
    struct ibv_send_wr wr = {
        .wr_id = (uintptr_t) &ep->probe_kind,
        .num_sge = 0,
        .opcode = IBV_WR_RDMA_WRITE,
        .send_flags = IBV_SEND_SIGNALED,
    };
    struct ibv_send_wr *bad = NULL;
    int err = ibv_post_send(ep->qp, &wr, &bad);
    opal_output_verbose(20, mca_btl_base_output, "verbs: out of credits to %s: probe %s",
                        mca_btl_verbs_peer_name(ep), 0 == err ? "posted" : strerror(err));
    if (0 == err) {
        ep->probe_posted = true;
        ep->probe_next_ns = now + 1000000000u;
        ep->sq_posted++;
        module->sq_pending++;
    }
}

/* ---------------------------------------------------------- descriptors */

static mca_btl_verbs_frag_t *frag_get(mca_btl_verbs_module_t *module, mca_btl_verbs_endpoint_t *ep,
                                      size_t size, uint32_t flags)
{
    mca_btl_verbs_frag_t *frag = (mca_btl_verbs_frag_t *) opal_free_list_get(&module->send_frags);
    if (OPAL_UNLIKELY(NULL == frag)) {
        return NULL;
    }
    frag->kind = MCA_BTL_VERBS_WR_SEND;
    frag->endpoint = ep;
    frag->lkey = ((struct ibv_mr *) frag->base.super.registration)->lkey;
    frag->segment.seg_addr = frag->base.super.ptr;
    frag->segment.seg_len = size;
    frag->base.des_segments = &frag->segment;
    frag->base.des_segment_count = 1;
    frag->base.des_flags = flags;
    frag->base.des_cbfunc = NULL;
    frag->base.des_cbdata = NULL;
    frag->base.des_context = NULL;
    frag->posted = false;
    return frag;
}

mca_btl_base_descriptor_t *mca_btl_verbs_alloc(mca_btl_base_module_t *btl,
                                               struct mca_btl_base_endpoint_t *endpoint,
                                               uint8_t order, size_t size, uint32_t flags)
{
    (void) order;
    if (OPAL_UNLIKELY(size > btl->btl_max_send_size)) {
        return NULL;
    }
    mca_btl_verbs_module_t *module = mca_btl_verbs_module(btl);
    OPAL_THREAD_LOCK(&module->lock);
    mca_btl_verbs_frag_t *frag = frag_get(module, endpoint, size, flags);
    OPAL_THREAD_UNLOCK(&module->lock);
    return NULL != frag ? &frag->base : NULL;
}

int mca_btl_verbs_free(mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des)
{
    mca_btl_verbs_module_t *module = mca_btl_verbs_module(btl);
    opal_free_list_return(&module->send_frags, &des->super);
    return OPAL_SUCCESS;
}

mca_btl_base_descriptor_t *mca_btl_verbs_prepare_src(mca_btl_base_module_t *btl,
                                                     struct mca_btl_base_endpoint_t *endpoint,
                                                     const void *data, uint8_t order,
                                                     size_t reserve, size_t *size, uint32_t flags)
{
    (void) order;
    if (OPAL_UNLIKELY(reserve > btl->btl_max_send_size)) {
        return NULL;
    }
    if (*size > btl->btl_max_send_size - reserve) {
        *size = btl->btl_max_send_size - reserve;
    }
    mca_btl_base_descriptor_t *des = mca_btl_verbs_alloc(btl, endpoint, 0, reserve + *size, flags);
    if (NULL != des && *size > 0) {
        memcpy((unsigned char *) des->des_segments[0].seg_addr + reserve, data, *size);
    }
    return des;
}

void mca_btl_verbs_send_complete(mca_btl_verbs_module_t *module, mca_btl_verbs_frag_t *frag,
                                 int status)
{
    frag->posted = false;
    /* Read before the callback, which may give the descriptor back. */
    uint32_t flags = frag->base.des_flags;
    if (NULL != frag->base.des_cbfunc) {
        frag->base.des_cbfunc(&module->super, frag->endpoint, &frag->base, status);
    }
    if (0 != (flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP)) {
        opal_free_list_return(&module->send_frags, &frag->base.super);
    }
}

/* ---------------------------------------------------------------- sends */

/* Whether a message may go to ep now: OPAL_SUCCESS, BUSY (no credit or
 * no room: try after progress) or UNREACH. Brings the QP up at the first
 * send when add_procs did not. */
static int can_send(mca_btl_verbs_module_t *module, mca_btl_verbs_endpoint_t *ep)
{
    if (OPAL_UNLIKELY(MCA_BTL_VERBS_EP_READY != ep->state)) {
        if (module->fatal || OPAL_SUCCESS != mca_btl_verbs_endpoint_connect(
                                                 module, ep, OPAL_MODEX_WAIT_FOREVER, NULL)) {
            return OPAL_ERR_UNREACH;
        }
    }
    if (0 == ep->send_credits) {
        probe(module, ep);
        mca_btl_verbs_liveness_check(module, false);
        return MCA_BTL_VERBS_EP_FAILED == ep->state ? OPAL_ERR_UNREACH : OPAL_ERR_RESOURCE_BUSY;
    }
    if (!sq_room(module, ep)) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    return OPAL_SUCCESS;
}

static int post_send(mca_btl_verbs_module_t *module, mca_btl_verbs_endpoint_t *ep, uint64_t wr_id,
                     struct ibv_sge *sge, int num_sge, size_t len, mca_btl_base_tag_t tag)
{
    uint32_t credits = take_owed(ep);
    struct ibv_send_wr wr = {
        .wr_id = wr_id,
        .sg_list = sge,
        .num_sge = num_sge,
        .opcode = IBV_WR_SEND_WITH_IMM,
        .send_flags = IBV_SEND_SIGNALED | (len <= module->inline_max ? IBV_SEND_INLINE : 0),
        .imm_data = htonl(mca_btl_verbs_imm_make(tag, credits)),
    };
    struct ibv_send_wr *bad = NULL;
    int err = ibv_post_send(ep->qp, &wr, &bad);
    if (OPAL_UNLIKELY(0 != err)) {
        ep->credits_owed += credits;
        return ENOMEM == err ? OPAL_ERR_RESOURCE_BUSY : OPAL_ERR_UNREACH;
    }
    ep->send_credits--;
    ep->sq_posted++;
    module->sq_pending++;
    return OPAL_SUCCESS;
}

int mca_btl_verbs_send(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                       mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag)
{
    mca_btl_verbs_module_t *module = mca_btl_verbs_module(btl);
    mca_btl_verbs_frag_t *frag = (mca_btl_verbs_frag_t *) des;
    OPAL_THREAD_LOCK(&module->lock);
    int rc = can_send(module, endpoint);
    if (OPAL_SUCCESS == rc) {
        frag->endpoint = endpoint;
        struct ibv_sge sge = {
            .addr = (uintptr_t) frag->segment.seg_addr,
            .length = (uint32_t) frag->segment.seg_len,
            .lkey = frag->lkey,
        };
        rc = post_send(module, endpoint, (uintptr_t) &frag->kind, &sge,
                       0 == frag->segment.seg_len ? 0 : 1, frag->segment.seg_len, tag);
        if (OPAL_SUCCESS == rc) {
            frag->posted = true;
        }
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    return rc;
}

/* header then payload into frag's buffer; either may be NULL when its
 * size is 0 (memcpy must not be given NULL, even for 0 bytes). */
static void copy_in(mca_btl_verbs_frag_t *frag, const void *header, size_t header_size,
                    const void *payload, size_t payload_size)
{
    if (header_size > 0) {
        memcpy(frag->segment.seg_addr, header, header_size);
    }
    if (payload_size > 0) {
        memcpy((unsigned char *) frag->segment.seg_addr + header_size, payload, payload_size);
    }
}

int mca_btl_verbs_sendi(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                        const void *header, size_t header_size, const void *payload,
                        size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                        mca_btl_base_descriptor_t **descriptor)
{
    (void) order;
    mca_btl_verbs_module_t *module = mca_btl_verbs_module(btl);
    size_t total = header_size + payload_size;
    if (NULL != descriptor) {
        *descriptor = NULL;
    }
    if (OPAL_UNLIKELY(total > btl->btl_eager_limit)) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    OPAL_THREAD_LOCK(&module->lock);
    int rc = can_send(module, endpoint);
    if (OPAL_SUCCESS != rc) {
        if (OPAL_ERR_RESOURCE_BUSY == rc && NULL != descriptor) {
            mca_btl_verbs_frag_t *frag = frag_get(module, endpoint, total, flags);
            if (NULL != frag) {
                copy_in(frag, header, header_size, payload, payload_size);
                *descriptor = &frag->base;
            }
        }
        OPAL_THREAD_UNLOCK(&module->lock);
        return rc;
    }
    if (total <= module->inline_max) {
        /* Copied into the work request as it is posted: the caller's
         * memory needs no registration and is free on return. */
        struct ibv_sge sge[2];
        int n = 0;
        if (header_size > 0) {
            sge[n++] =
                (struct ibv_sge){.addr = (uintptr_t) header, .length = (uint32_t) header_size};
        }
        if (payload_size > 0) {
            sge[n++] =
                (struct ibv_sge){.addr = (uintptr_t) payload, .length = (uint32_t) payload_size};
        }
        rc = post_send(module, endpoint, (uintptr_t) &endpoint->inline_kind, sge, n, total, tag);
    } else {
        mca_btl_verbs_frag_t *frag =
            frag_get(module, endpoint, total, MCA_BTL_DES_FLAGS_BTL_OWNERSHIP);
        if (NULL == frag) {
            rc = OPAL_ERR_RESOURCE_BUSY;
        } else {
            copy_in(frag, header, header_size, payload, payload_size);
            struct ibv_sge sge = {.addr = (uintptr_t) frag->segment.seg_addr,
                                  .length = (uint32_t) total,
                                  .lkey = frag->lkey};
            rc = post_send(module, endpoint, (uintptr_t) &frag->kind, &sge, 1, total, tag);
            if (OPAL_SUCCESS != rc) {
                opal_free_list_return(&module->send_frags, &frag->base.super);
            } else {
                frag->posted = true;
            }
        }
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    return rc;
}
