/*
 * btl/self's operations. Every send is delivered before it returns (a
 * direct call of the tag's callback); put and get are copies.
 */
#include "opal/opal_config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "opal/mca/btl/base/base.h"
#include "opal/mca/btl/self/btl_self.h"
#include "opal/runtime/opal_proc.h"
#include "opal/util/opal_error.h"

struct mca_btl_base_endpoint_t mca_btl_self_endpoint = {.proc = NULL};

static bool is_me(const opal_proc_t *proc, const opal_proc_t *me)
{
    return NULL != me && (proc == me || (proc->proc_name.jobid == me->proc_name.jobid &&
                                         proc->proc_name.vpid == me->proc_name.vpid));
}

static int self_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs, opal_proc_t **procs,
                          struct mca_btl_base_endpoint_t **endpoints, opal_bitmap_t *reachable,
                          mca_btl_base_reason_t *reasons)
{
    opal_proc_t *me = opal_proc_local_get();
    for (size_t i = 0; i < nprocs; ++i) {
        if (is_me(procs[i], me)) {
            int rc = opal_bitmap_set_bit(reachable, (int) i);
            if (OPAL_SUCCESS != rc) {
                return rc;
            }
            mca_btl_self_endpoint.proc = me;
            endpoints[i] = &mca_btl_self_endpoint;
        } else if (NULL != reasons) {
            snprintf(reasons[i].text, sizeof(reasons[i].text), "not this process");
        }
    }
    return OPAL_SUCCESS;
}

static int self_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs, opal_proc_t **procs,
                          struct mca_btl_base_endpoint_t **endpoints)
{
    return OPAL_SUCCESS;
}

static int self_finalize(struct mca_btl_base_module_t *btl)
{
    mca_btl_self_endpoint.proc = NULL;
    mca_btl_self.error_cb = NULL;
    return OPAL_SUCCESS;
}

static int self_register_error(struct mca_btl_base_module_t *btl,
                               mca_btl_base_module_error_cb_fn_t cbfunc)
{
    /* Kept for form: a process does not lose itself. */
    mca_btl_self.error_cb = cbfunc;
    return OPAL_SUCCESS;
}

static mca_btl_base_descriptor_t *self_alloc(struct mca_btl_base_module_t *btl,
                                             struct mca_btl_base_endpoint_t *endpoint,
                                             uint8_t order, size_t size, uint32_t flags)
{
    mca_btl_self_frag_t *frag = mca_btl_self_frag_get(size);
    if (OPAL_UNLIKELY(NULL == frag)) {
        return NULL;
    }
    frag->base.des_flags = flags;
    return &frag->base;
}

static int self_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des)
{
    mca_btl_self_frag_return((mca_btl_self_frag_t *) des);
    return OPAL_SUCCESS;
}

static mca_btl_base_descriptor_t *self_prepare_src(struct mca_btl_base_module_t *btl,
                                                   struct mca_btl_base_endpoint_t *endpoint,
                                                   const void *data, uint8_t order, size_t reserve,
                                                   size_t *size, uint32_t flags)
{
    if (OPAL_UNLIKELY(reserve > btl->btl_max_send_size)) {
        return NULL;
    }
    if (*size > btl->btl_max_send_size - reserve) {
        *size = btl->btl_max_send_size - reserve;
    }
    mca_btl_self_frag_t *frag = mca_btl_self_frag_get(reserve + *size);
    if (OPAL_UNLIKELY(NULL == frag)) {
        return NULL;
    }
    if (0 < *size) {
        memcpy((unsigned char *) frag->segment.seg_addr + reserve, data, *size);
    }
    frag->base.des_flags = flags;
    return &frag->base;
}

/* The upcall: the tag's callback sees the bytes before the send returns. */
static void deliver(struct mca_btl_base_module_t *btl, const mca_btl_base_segment_t *segments,
                    size_t count, mca_btl_base_tag_t tag)
{
    mca_btl_base_receive_descriptor_t desc = {
        .endpoint = &mca_btl_self_endpoint,
        .proc = mca_btl_self_endpoint.proc,
        .des_segments = segments,
        .des_segment_count = count,
        .tag = tag,
        .cbdata = NULL,
    };
    mca_btl_base_am_dispatch(btl, &desc);
}

static int self_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag)
{
    deliver(btl, des->des_segments, des->des_segment_count, tag);
    /* Read before the callback, which may give des back. */
    uint32_t flags = des->des_flags;
    if (0 != (flags & MCA_BTL_DES_SEND_ALWAYS_CALLBACK) && NULL != des->des_cbfunc) {
        des->des_cbfunc(btl, endpoint, des, OPAL_SUCCESS);
    }
    if (0 != (flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP)) {
        mca_btl_self_frag_return((mca_btl_self_frag_t *) des);
    }
    return 1;
}

static int self_sendi(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      const void *header, size_t header_size, const void *payload,
                      size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                      mca_btl_base_descriptor_t **descriptor)
{
    size_t total = header_size + payload_size;
    if (OPAL_UNLIKELY(total > btl->btl_eager_limit)) {
        if (NULL != descriptor) {
            *descriptor = NULL;
        }
        return OPAL_ERR_RESOURCE_BUSY;
    }
    if (0 == header_size || 0 == payload_size) {
        /* One piece: delivered from the caller's memory, nothing copied. */
        mca_btl_base_segment_t segment = {
            .seg_addr = (void *) (uintptr_t) (0 == header_size ? payload : header),
            .seg_len = total,
        };
        deliver(btl, &segment, 1, tag);
        return OPAL_SUCCESS;
    }
    /* Header and payload arrive as one contiguous message. */
    mca_btl_self_frag_t *frag = mca_btl_self_frag_get(total);
    if (OPAL_UNLIKELY(NULL == frag)) {
        if (NULL != descriptor) {
            *descriptor = NULL;
        }
        return OPAL_ERR_RESOURCE_BUSY;
    }
    memcpy(frag->segment.seg_addr, header, header_size);
    memcpy((unsigned char *) frag->segment.seg_addr + header_size, payload, payload_size);
    deliver(btl, &frag->segment, 1, tag);
    mca_btl_self_frag_return(frag);
    return OPAL_SUCCESS;
}

/* Every address of this process is reachable: registration is not
 * needed (handle size 0) and an RDMA operation is a copy. */
static int self_put(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, uint64_t remote_address,
                    mca_btl_base_registration_handle_t *local_handle,
                    mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                    int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata)
{
    if (0 < size) {
        memmove((void *) (uintptr_t) remote_address, local_address, size);
    }
    if (NULL != cbfunc) {
        cbfunc(btl, endpoint, local_address, local_handle, cbcontext, cbdata, OPAL_SUCCESS);
    }
    return OPAL_SUCCESS;
}

static int self_get(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, uint64_t remote_address,
                    mca_btl_base_registration_handle_t *local_handle,
                    mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                    int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata)
{
    if (0 < size) {
        memmove(local_address, (const void *) (uintptr_t) remote_address, size);
    }
    if (NULL != cbfunc) {
        cbfunc(btl, endpoint, local_address, local_handle, cbcontext, cbdata, OPAL_SUCCESS);
    }
    return OPAL_SUCCESS;
}

static int self_flush(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint)
{
    /* Every put and get completed inside its call. */
    return OPAL_SUCCESS;
}

mca_btl_base_module_t mca_btl_self_module = {
    .btl_component = &mca_btl_self_component,
    .btl_add_procs = self_add_procs,
    .btl_del_procs = self_del_procs,
    .btl_finalize = self_finalize,
    .btl_register_error = self_register_error,
    .btl_alloc = self_alloc,
    .btl_free = self_free,
    .btl_prepare_src = self_prepare_src,
    .btl_send = self_send,
    .btl_sendi = self_sendi,
    .btl_put = self_put,
    .btl_get = self_get,
    .btl_register_mem = NULL,
    .btl_deregister_mem = NULL,
    .btl_flush = self_flush,
};
