/*
 * Active-message sends: descriptors (alloc, prepare_src, free), send,
 * sendi, and their completions.
 *
 * A message of at most inject_size bytes goes by fi_injectdata: the
 * provider copies it at once and reports no completion, so send returns 1
 * and sendi is done. Larger ones are posted with the frag as context and
 * stay on their endpoint's outstanding list until the CQ reports them.
 *
 * In the sequence header mode (module->seq_hdr != 0) every frag's buffer
 * keeps seq_hdr bytes in front of segments[0]; the sequence number goes
 * there when the message is sent, and what goes on the wire starts there.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <string.h>

#include "opal/mca/btl/ofi/btl_ofi.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

static void frag_construct(mca_btl_ofi_frag_t *frag)
{
    frag->base.des_segments = frag->segments;
    frag->base.des_segment_count = 1;
    frag->ctx.kind = MCA_BTL_OFI_CTX_SEND;
    frag->ctx.magic = MCA_BTL_OFI_CTX_MAGIC;
    frag->endpoint = NULL;
    frag->list = NULL;
    frag->desc = NULL;
    frag->state = 0;
}

OBJ_CLASS_INSTANCE(mca_btl_ofi_frag_t, mca_btl_base_descriptor_t, frag_construct, NULL);

static inline mca_btl_ofi_frag_t *frag_get(const mca_btl_ofi_module_t *module,
                                           opal_free_list_t *list, mca_btl_ofi_endpoint_t *ep)
{
    mca_btl_ofi_frag_t *frag = (mca_btl_ofi_frag_t *) opal_free_list_get(list);
    if (OPAL_UNLIKELY(NULL == frag)) {
        return NULL;
    }
    frag->list = list;
    frag->endpoint = ep;
    frag->state = 0;
    const opal_common_ofi_mr_t *mr = frag->base.super.registration;
    frag->desc = NULL != mr ? mr->desc : NULL;
    frag->base.des_segment_count = 1;
    frag->base.des_cbfunc = NULL;
    frag->base.des_cbdata = NULL;
    frag->base.des_context = NULL;
    frag->segments[0].seg_addr = (uint8_t *) frag->base.super.ptr + module->seq_hdr;
    frag->segments[0].seg_len = 0;
    return frag;
}

/* The remote CQ data of the next message to ep; in the sequence header
 * mode its sequence number goes in the seq_hdr bytes at hdr instead. */
static inline uint64_t stamp(const mca_btl_ofi_module_t *module, const mca_btl_ofi_endpoint_t *ep,
                             mca_btl_base_tag_t tag, uint8_t *hdr)
{
    if (OPAL_LIKELY(0 == module->seq_hdr)) {
        return mca_btl_ofi_data_make(tag, module->my_rank, ep->send_seq);
    }
    mca_btl_ofi_seq_hdr_write(hdr, ep->send_seq);
    return mca_btl_ofi_data_make(tag, module->my_rank, 0);
}

/* Where frag's message starts on the wire (its sequence header, if any). */
static inline uint8_t *frag_wire(const mca_btl_ofi_module_t *module, const mca_btl_ofi_frag_t *frag)
{
    return (uint8_t *) frag->segments[0].seg_addr - module->seq_hdr;
}

void mca_btl_ofi_frag_release(mca_btl_ofi_frag_t *frag)
{
    opal_free_list_return(frag->list, &frag->base.super);
}

mca_btl_base_descriptor_t *mca_btl_ofi_alloc(mca_btl_base_module_t *btl,
                                             struct mca_btl_base_endpoint_t *endpoint,
                                             uint8_t order, size_t size, uint32_t flags)
{
    (void) order;
    mca_btl_ofi_module_t *module = mca_btl_ofi_module(btl);
    opal_free_list_t *list = size <= btl->btl_eager_limit     ? &module->eager_frags
                             : size <= btl->btl_max_send_size ? &module->max_frags
                                                              : NULL;
    if (OPAL_UNLIKELY(NULL == list)) {
        return NULL;
    }
    mca_btl_ofi_frag_t *frag = frag_get(module, list, endpoint);
    if (OPAL_UNLIKELY(NULL == frag)) {
        return NULL;
    }
    frag->segments[0].seg_len = size;
    frag->base.des_flags = flags;
    return &frag->base;
}

int mca_btl_ofi_free(mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des)
{
    mca_btl_ofi_module_t *module = mca_btl_ofi_module(btl);
    mca_btl_ofi_frag_t *frag = (mca_btl_ofi_frag_t *) des;
    OPAL_THREAD_LOCK(&module->lock);
    if (OPAL_UNLIKELY(0 != (frag->state & MCA_BTL_OFI_OP_POSTED))) {
        /* Its peer failed and the caller had its error; the provider
         * still holds the buffer and gives it back later. */
        frag->state |= MCA_BTL_OFI_OP_FREED;
    } else {
        mca_btl_ofi_frag_release(frag);
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    return OPAL_SUCCESS;
}

mca_btl_base_descriptor_t *mca_btl_ofi_prepare_src(mca_btl_base_module_t *btl,
                                                   struct mca_btl_base_endpoint_t *endpoint,
                                                   const void *data, uint8_t order, size_t reserve,
                                                   size_t *size, uint32_t flags)
{
    (void) order;
    mca_btl_ofi_module_t *module = mca_btl_ofi_module(btl);
    size_t want = *size;
    if (OPAL_UNLIKELY(reserve >= btl->btl_max_send_size)) {
        return NULL;
    }
    if (want > btl->btl_max_send_size - reserve) {
        want = btl->btl_max_send_size - reserve;
    }
    mca_btl_ofi_frag_t *frag;
    if (reserve + want <= btl->btl_eager_limit &&
        (0 == (btl->btl_flags & MCA_BTL_FLAGS_SEND_INPLACE) || 0 != reserve ||
         0 != module->seq_hdr || want > module->inject_size)) {
        frag = frag_get(module, &module->eager_frags, endpoint);
        if (OPAL_UNLIKELY(NULL == frag)) {
            return NULL;
        }
        memcpy((char *) frag->segments[0].seg_addr + reserve, data, want);
        frag->segments[0].seg_len = reserve + want;
    } else if (0 != (btl->btl_flags & MCA_BTL_FLAGS_SEND_INPLACE) &&
               reserve <= btl->btl_eager_limit) {
        /* The caller's header in a small frag, its data where it is: one
         * message of two pieces (fi_sendmsg). */
        frag = frag_get(module, &module->eager_frags, endpoint);
        if (OPAL_UNLIKELY(NULL == frag)) {
            return NULL;
        }
        frag->segments[0].seg_len = reserve;
        frag->segments[1].seg_addr = (void *) (uintptr_t) data;
        frag->segments[1].seg_len = want;
        frag->base.des_segment_count = 2;
    } else {
        frag = frag_get(module, &module->max_frags, endpoint);
        if (OPAL_UNLIKELY(NULL == frag)) {
            return NULL;
        }
        memcpy((char *) frag->segments[0].seg_addr + reserve, data, want);
        frag->segments[0].seg_len = reserve + want;
    }
    frag->base.des_flags = flags;
    *size = want;
    return &frag->base;
}

/* A send the provider refused for a reason other than being busy: the
 * peer is unreachable from now on. */
static int send_failed(mca_btl_ofi_module_t *module, mca_btl_ofi_endpoint_t *ep, const char *op,
                       ssize_t rc)
{
    char what[160];
    snprintf(what, sizeof(what), "%s to it failed: %s", op, fi_strerror((int) -rc));
    mca_btl_ofi_peer_failed(module, ep, what);
    return OPAL_ERR_UNREACH;
}

/* Whether a message of len bytes to ep may be injected now. */
static inline bool may_inject(const mca_btl_ofi_module_t *module, const mca_btl_ofi_endpoint_t *ep,
                              size_t len)
{
    return len <= module->inject_size &&
           (0 == module->inject_batch || ep->injected < module->inject_batch);
}

/* Posts frag (with a completion); caller holds the lock. -FI_EAGAIN when
 * the peer has MCA_BTL_OFI_MAX_POSTED sends outstanding already. */
static ssize_t post(mca_btl_ofi_module_t *module, mca_btl_ofi_endpoint_t *ep,
                    mca_btl_ofi_frag_t *frag, uint64_t data)
{
    if (OPAL_UNLIKELY(ep->posted >= MCA_BTL_OFI_MAX_POSTED)) {
        return -FI_EAGAIN;
    }
    ssize_t rc;
    mca_btl_base_segment_t *seg = frag->segments;
    uint8_t *wire = frag_wire(module, frag);
    size_t wire_len = seg[0].seg_len + module->seq_hdr;
    if (1 == frag->base.des_segment_count) {
        rc = fi_senddata(module->ofi.ep, wire, wire_len, frag->desc, data, ep->fi_addr,
                         &frag->ctx.fi);
    } else {
        struct iovec iov[2];
        void *desc[2] = {frag->desc, NULL};
        size_t count = 0, first = 0 == wire_len ? 1 : 0;
        for (size_t i = first; i < 2; ++i) {
            iov[count].iov_base = 0 == i ? wire : seg[i].seg_addr;
            iov[count].iov_len = 0 == i ? wire_len : seg[i].seg_len;
            desc[count] = 0 == i ? frag->desc : NULL;
            ++count;
        }
        struct fi_msg msg = {
            .msg_iov = iov,
            .desc = desc,
            .iov_count = count,
            .addr = ep->fi_addr,
            .context = &frag->ctx.fi,
            .data = data,
        };
        rc = fi_sendmsg(module->ofi.ep, &msg, FI_REMOTE_CQ_DATA | FI_COMPLETION);
    }
    if (OPAL_LIKELY(0 == rc)) {
        ++ep->send_seq;
        ++ep->posted;
        ep->injected = 0;
        frag->state = MCA_BTL_OFI_OP_POSTED;
        frag->endpoint = ep;
        opal_list_append(&ep->outstanding, &frag->base.super.super);
    }
    return rc;
}

int mca_btl_ofi_send(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                     mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag)
{
    mca_btl_ofi_module_t *module = mca_btl_ofi_module(btl);
    mca_btl_ofi_frag_t *frag = (mca_btl_ofi_frag_t *) des;
    OPAL_THREAD_LOCK(&module->lock);
    if (OPAL_UNLIKELY(ep->failed)) {
        OPAL_THREAD_UNLOCK(&module->lock);
        return OPAL_ERR_UNREACH;
    }
    uint8_t *wire = frag_wire(module, frag);
    size_t wire_len = frag->segments[0].seg_len + module->seq_hdr;
    uint64_t data = stamp(module, ep, tag, wire);
    ssize_t rc;
    /* One piece may be injected: the frag's own buffer, or the caller's
     * data in place when nothing goes in front of it. */
    const void *out = wire;
    bool one_piece = 1 == des->des_segment_count;
    if (!one_piece && 0 == wire_len) {
        out = frag->segments[1].seg_addr;
        wire_len = frag->segments[1].seg_len;
        one_piece = true;
    }
    if (one_piece && may_inject(module, ep, wire_len)) {
        rc = fi_injectdata(module->ofi.ep, out, wire_len, data, ep->fi_addr);
        if (OPAL_LIKELY(0 == rc)) {
            ++ep->send_seq;
            ++ep->injected;
            OPAL_THREAD_UNLOCK(&module->lock);
            if (0 != (des->des_flags & MCA_BTL_DES_SEND_ALWAYS_CALLBACK) &&
                NULL != des->des_cbfunc) {
                des->des_cbfunc(btl, ep, des, OPAL_SUCCESS);
            }
            if (0 != (des->des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP)) {
                mca_btl_ofi_frag_release(frag);
            }
            return 1;
        }
    } else {
        rc = post(module, ep, frag, data);
        if (OPAL_LIKELY(0 == rc)) {
            OPAL_THREAD_UNLOCK(&module->lock);
            return OPAL_SUCCESS;
        }
    }
    int ret =
        -FI_EAGAIN == rc ? OPAL_ERR_RESOURCE_BUSY : send_failed(module, ep, "fi_senddata", rc);
    OPAL_THREAD_UNLOCK(&module->lock);
    return ret;
}

int mca_btl_ofi_sendi(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                      const void *header, size_t header_size, const void *payload,
                      size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                      mca_btl_base_descriptor_t **descriptor)
{
    (void) order;
    mca_btl_ofi_module_t *module = mca_btl_ofi_module(btl);
    size_t total = header_size + payload_size;
    if (NULL != descriptor) {
        *descriptor = NULL;
    }
    if (OPAL_UNLIKELY(total > btl->btl_eager_limit)) {
        return OPAL_ERR_BAD_PARAM;
    }
    ssize_t rc;
    mca_btl_ofi_frag_t *frag = NULL;
    OPAL_THREAD_LOCK(&module->lock);
    if (OPAL_UNLIKELY(ep->failed)) {
        OPAL_THREAD_UNLOCK(&module->lock);
        return OPAL_ERR_UNREACH;
    }
    const size_t hdr = module->seq_hdr;
    if (may_inject(module, ep, hdr + total)) {
        /* One piece without a sequence header goes as it is; otherwise
         * the pieces are joined on the stack (inject_size is at most
         * MCA_BTL_OFI_INJECT_MAX). */
        uint8_t buf[MCA_BTL_OFI_INJECT_MAX];
        const void *out = 0 != hdr            ? buf
                          : 0 == header_size  ? payload
                          : 0 == payload_size ? header
                                              : buf;
        if (buf == out) {
            if (header_size > 0) {
                memcpy(buf + hdr, header, header_size);
            }
            if (payload_size > 0) {
                memcpy(buf + hdr + header_size, payload, payload_size);
            }
        }
        uint64_t data = stamp(module, ep, tag, buf);
        rc = fi_injectdata(module->ofi.ep, out, hdr + total, data, ep->fi_addr);
        if (OPAL_LIKELY(0 == rc)) {
            ++ep->send_seq;
            ++ep->injected;
            OPAL_THREAD_UNLOCK(&module->lock);
            return OPAL_SUCCESS;
        }
    } else {
        frag = frag_get(module, &module->eager_frags, ep);
        if (OPAL_UNLIKELY(NULL == frag)) {
            OPAL_THREAD_UNLOCK(&module->lock);
            return OPAL_ERR_RESOURCE_BUSY;
        }
        char *out = frag->segments[0].seg_addr;
        if (header_size > 0) {
            memcpy(out, header, header_size);
        }
        if (payload_size > 0) {
            memcpy(out + header_size, payload, payload_size);
        }
        frag->segments[0].seg_len = total;
        frag->base.des_flags = flags | MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
        rc = post(module, ep, frag, stamp(module, ep, tag, frag_wire(module, frag)));
        if (OPAL_LIKELY(0 == rc)) {
            OPAL_THREAD_UNLOCK(&module->lock);
            return OPAL_SUCCESS;
        }
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    if (-FI_EAGAIN != rc) {
        if (NULL != frag) {
            mca_btl_ofi_frag_release(frag);
        }
        OPAL_THREAD_LOCK(&module->lock);
        int ret = send_failed(module, ep, "fi_senddata", rc);
        OPAL_THREAD_UNLOCK(&module->lock);
        return ret;
    }
    /* Busy: offer the caller the message in a descriptor to send later. */
    if (NULL != descriptor) {
        if (NULL == frag) {
            frag = frag_get(module, &module->eager_frags, ep);
            if (NULL != frag) {
                char *out = frag->segments[0].seg_addr;
                if (header_size > 0) {
                    memcpy(out, header, header_size);
                }
                if (payload_size > 0) {
                    memcpy(out + header_size, payload, payload_size);
                }
                frag->segments[0].seg_len = total;
            }
        }
        if (NULL != frag) {
            frag->base.des_flags = flags;
            *descriptor = &frag->base;
            frag = NULL;
        }
    }
    if (NULL != frag) {
        mca_btl_ofi_frag_release(frag);
    }
    return OPAL_ERR_RESOURCE_BUSY;
}

int mca_btl_ofi_send_bye(mca_btl_ofi_module_t *module, mca_btl_ofi_endpoint_t *ep)
{
    if (ep->failed) {
        return OPAL_ERR_UNREACH;
    }
    mca_btl_ofi_frag_t *frag = frag_get(module, &module->eager_frags, ep);
    if (OPAL_UNLIKELY(NULL == frag)) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    frag->base.des_flags = MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
    ssize_t rc =
        post(module, ep, frag, stamp(module, ep, MCA_BTL_OFI_TAG_BYE, frag_wire(module, frag)));
    if (OPAL_LIKELY(0 == rc)) {
        ep->bye_sent = true;
        return OPAL_SUCCESS;
    }
    mca_btl_ofi_frag_release(frag);
    return -FI_EAGAIN == rc ? OPAL_ERR_RESOURCE_BUSY : send_failed(module, ep, "fi_senddata", rc);
}

int mca_btl_ofi_send_complete(mca_btl_ofi_module_t *module, mca_btl_ofi_frag_t *frag, int status)
{
    if (OPAL_UNLIKELY(0 != (frag->state & MCA_BTL_OFI_OP_ABANDONED))) {
        /* Called back already when its peer failed: only the memory is
         * left, and it is the caller's unless it freed it or gave it to
         * the module. */
        bool release = 0 != (frag->state & MCA_BTL_OFI_OP_FREED) ||
                       0 != (frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP);
        opal_list_remove_item(&module->abandoned, &frag->base.super.super);
        frag->state = 0;
        if (release) {
            mca_btl_ofi_frag_release(frag);
        }
        return OPAL_SUCCESS;
    }
    opal_list_remove_item(&frag->endpoint->outstanding, &frag->base.super.super);
    --frag->endpoint->posted;
    frag->state = 0;
    if (NULL != frag->base.des_cbfunc) {
        frag->base.des_cbfunc(&module->super, frag->endpoint, &frag->base, status);
    }
    if (0 != (frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP)) {
        mca_btl_ofi_frag_release(frag);
    }
    return OPAL_SUCCESS;
}
