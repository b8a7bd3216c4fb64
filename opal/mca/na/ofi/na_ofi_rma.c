/*
 * Memory handles and put / get. A handle is a list of segments, each its
 * own registration; a transfer walks the local and remote lists together
 * and issues one fi_write / fi_read per piece where they meet, at most
 * NA_OFI_RMA_WINDOW in flight (each piece has its own fi_context in the
 * operation, so nothing is allocated per transfer).
 *
 * Serialized handle (inside the base's blob header), little-endian:
 *   u8 access flags (OPAL_NA_MEM_*), u32 segment count (1..1024), then
 *   per segment u64 address, u64 length, u64 key.
 */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/na/ofi/na_ofi.h"
#include "opal/util/opal_cursor.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

#define SEG_WIRE_SIZE 24
#define MH_WIRE_FIXED 5

static int mh_alloc(size_t count, bool remote, na_ofi_mh_t **out)
{
    na_ofi_mh_t *mh = calloc(1, sizeof(*mh));
    if (NULL == mh) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    mh->count = count;
    mh->remote = remote;
    if (1 == count) {
        mh->segs = &mh->seg1;
        mh->mrs = &mh->mr1;
    } else {
        mh->segs = calloc(count, sizeof(*mh->segs));
        mh->mrs = remote ? NULL : calloc(count, sizeof(*mh->mrs));
        if (NULL == mh->segs || (!remote && NULL == mh->mrs)) {
            free(mh->segs);
            free(mh->mrs);
            free(mh);
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    *out = mh;
    return OPAL_SUCCESS;
}

int na_ofi_mem_handle_create_segments(opal_na_class_t *cls, const opal_na_segment_t *segments,
                                      size_t count, unsigned long flags, opal_na_mem_handle_t **out)
{
    (void) cls;
    na_ofi_mh_t *mh;
    int rc = mh_alloc(count, false, &mh);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    mh->flags = flags;
    for (size_t i = 0; i < count; ++i) {
        if (NULL == segments[i].base && 0 != segments[i].len) {
            na_ofi_mem_handle_free(cls, (opal_na_mem_handle_t *) mh);
            opal_output(0, "na/ofi: memory handle segment %zu has no memory", i);
            return OPAL_ERR_BAD_PARAM;
        }
        mh->segs[i].base = (uint64_t) (uintptr_t) segments[i].base;
        mh->segs[i].len = segments[i].len;
        mh->total += segments[i].len;
    }
    *out = (opal_na_mem_handle_t *) mh;
    return OPAL_SUCCESS;
}

int na_ofi_mem_handle_create(opal_na_class_t *cls, void *buf, size_t size, unsigned long flags,
                             opal_na_mem_handle_t **mh)
{
    opal_na_segment_t seg = {.base = buf, .len = size};
    return na_ofi_mem_handle_create_segments(cls, &seg, 1, flags, mh);
}

size_t na_ofi_mem_handle_get_max_segments(const opal_na_class_t *cls)
{
    (void) cls;
    return NA_OFI_MAX_SEGMENTS;
}

void na_ofi_mem_handle_free(opal_na_class_t *cls, opal_na_mem_handle_t *handle)
{
    na_ofi_mh_t *mh = (na_ofi_mh_t *) handle;
    if (mh->registered) {
        (void) na_ofi_mem_deregister(cls, handle);
    }
    if (mh->segs != &mh->seg1) {
        free(mh->segs);
        free(mh->mrs);
    }
    free(mh);
}

size_t na_ofi_mem_handle_get_size(opal_na_class_t *cls, opal_na_mem_handle_t *mh)
{
    (void) cls;
    return (size_t) ((na_ofi_mh_t *) mh)->total;
}

int na_ofi_mem_register(opal_na_class_t *cls, opal_na_mem_handle_t *handle)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    na_ofi_mh_t *mh = (na_ofi_mh_t *) handle;
    if (mh->remote || mh->registered) {
        return mh->remote ? OPAL_ERR_BAD_PARAM : OPAL_SUCCESS;
    }
    uint64_t access = FI_READ | FI_WRITE | FI_SEND | FI_RECV;
    access |= (mh->flags & OPAL_NA_MEM_READ_ONLY) ? FI_REMOTE_READ : 0;
    access |= (mh->flags & OPAL_NA_MEM_WRITE_ONLY) ? FI_REMOTE_WRITE : 0;
    int rc = OPAL_SUCCESS;
    OPAL_THREAD_LOCK(&oc->lock);
    for (size_t i = 0; i < mh->count && OPAL_SUCCESS == rc; ++i) {
        if (0 == mh->segs[i].len) {
            continue;
        }
        rc = opal_common_ofi_mr_register(&oc->ofi, (void *) (uintptr_t) mh->segs[i].base,
                                         mh->segs[i].len, access, &mh->mrs[i]);
        mh->segs[i].key = mh->mrs[i].key;
    }
    OPAL_THREAD_UNLOCK(&oc->lock);
    mh->registered = true;
    if (OPAL_SUCCESS != rc) {
        (void) na_ofi_mem_deregister(cls, handle);
    }
    return rc;
}

int na_ofi_mem_deregister(opal_na_class_t *cls, opal_na_mem_handle_t *handle)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    na_ofi_mh_t *mh = (na_ofi_mh_t *) handle;
    if (mh->remote || !mh->registered) {
        return OPAL_SUCCESS;
    }
    OPAL_THREAD_LOCK(&oc->lock);
    for (size_t i = 0; i < mh->count; ++i) {
        opal_common_ofi_mr_deregister(&mh->mrs[i]);
        mh->segs[i].key = 0;
    }
    OPAL_THREAD_UNLOCK(&oc->lock);
    mh->registered = false;
    return OPAL_SUCCESS;
}

size_t na_ofi_mem_handle_get_serialize_size(opal_na_class_t *cls, opal_na_mem_handle_t *mh)
{
    (void) cls;
    return MH_WIRE_FIXED + SEG_WIRE_SIZE * ((na_ofi_mh_t *) mh)->count;
}

int na_ofi_mem_handle_serialize(opal_na_class_t *cls, void *buf, size_t size,
                                opal_na_mem_handle_t *handle)
{
    (void) cls;
    na_ofi_mh_t *mh = (na_ofi_mh_t *) handle;
    if (!mh->remote && !mh->registered) {
        opal_output(0, "na/ofi: serializing a memory handle that is not registered");
        return OPAL_ERR_BAD_PARAM;
    }
    opal_cursor_t c;
    opal_cursor_init_write(&c, buf, size);
    opal_cursor_put_u8(&c, (uint8_t) mh->flags);
    opal_cursor_put_u32(&c, (uint32_t) mh->count);
    for (size_t i = 0; i < mh->count; ++i) {
        opal_cursor_put_u64(&c, mh->segs[i].base);
        opal_cursor_put_u64(&c, mh->segs[i].len);
        opal_cursor_put_u64(&c, mh->segs[i].key);
    }
    return opal_cursor_ok(&c) ? OPAL_SUCCESS : OPAL_ERR_TRUNCATED;
}

int na_ofi_mem_handle_deserialize(opal_na_class_t *cls, opal_na_mem_handle_t **out, const void *buf,
                                  size_t size)
{
    (void) cls;
    opal_cursor_t c;
    opal_cursor_init_read(&c, buf, size);
    uint8_t flags = opal_cursor_get_u8(&c);
    uint32_t count = opal_cursor_get_u32(&c);
    const char *bad = NULL;
    if (!opal_cursor_ok(&c)) {
        bad = "truncated before its segment count";
    } else if (0 == flags || 0 != (flags & ~OPAL_NA_MEM_READ_WRITE)) {
        bad = "its access flags are not read-only, write-only or read-write";
    } else if (0 == count || count > NA_OFI_MAX_SEGMENTS) {
        bad = "its segment count is 0 or above 1024";
    } else if (size - MH_WIRE_FIXED != (size_t) count * SEG_WIRE_SIZE) {
        bad = "its size does not match its segment count";
    }
    if (NULL != bad) {
        opal_output(0, "na/ofi: a serialized memory handle of %zu bytes is refused: %s", size, bad);
        return OPAL_ERR_BAD_PARAM;
    }
    na_ofi_mh_t *mh;
    int rc = mh_alloc(count, true, &mh);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    mh->flags = flags;
    for (uint32_t i = 0; i < count; ++i) {
        mh->segs[i].base = opal_cursor_get_u64(&c);
        mh->segs[i].len = opal_cursor_get_u64(&c);
        mh->segs[i].key = opal_cursor_get_u64(&c);
        if (mh->segs[i].len > UINT64_MAX - mh->total ||
            mh->segs[i].len > UINT64_MAX - mh->segs[i].base ||
            mh->total + mh->segs[i].len > SIZE_MAX) {
            opal_output(0,
                        "na/ofi: a serialized memory handle is refused: segment %u's length "
                        "overflows",
                        i);
            na_ofi_mem_handle_free(cls, (opal_na_mem_handle_t *) mh);
            return OPAL_ERR_BAD_PARAM;
        }
        mh->total += mh->segs[i].len;
    }
    *out = (opal_na_mem_handle_t *) mh;
    return OPAL_SUCCESS;
}

/* ------------------------------------------------------------------ RMA */

/* The segment of mh holding byte off, and the offset into it. */
static size_t seg_at(const na_ofi_mh_t *mh, size_t off, size_t *in)
{
    size_t i = 0;
    while (i + 1 < mh->count && off >= mh->segs[i].len) {
        off -= mh->segs[i].len;
        ++i;
    }
    *in = off;
    return i;
}

/* Pieces until the window is full or nothing is left; -FI_EAGAIN when
 * the provider had no room for the next one. */
ssize_t na_ofi_rma_issue(opal_na_class_t *cls, na_ofi_op_t *o)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    na_ofi_addr_t *peer = o->addr;
    size_t max = oc->ofi.info->ep_attr->max_msg_size;
    ssize_t rc = 0;
    while (o->left > 0 && o->inflight < NA_OFI_RMA_WINDOW && OPAL_SUCCESS == o->rma_error) {
        size_t lin, rin;
        size_t li = seg_at(o->local, o->loff, &lin);
        size_t ri = seg_at(o->remote, o->roff, &rin);
        const na_ofi_seg_t *ls = &o->local->segs[li];
        const na_ofi_seg_t *rs = &o->remote->segs[ri];
        size_t len = o->left;
        if (len > ls->len - lin) {
            len = (size_t) (ls->len - lin);
        }
        if (len > rs->len - rin) {
            len = (size_t) (rs->len - rin);
        }
        if (len > max) {
            len = max;
        }
        na_ofi_piece_t *p = NULL;
        for (int i = 0; i < NA_OFI_RMA_WINDOW; ++i) {
            if (NULL == o->pieces[i].fictx.owner) {
                p = &o->pieces[i];
                break;
            }
        }
        p->fictx.kind = NA_OFI_FICTX_PIECE;
        p->fictx.owner = o;
        p->len = len;
        void *lbuf = (void *) (uintptr_t) (ls->base + lin);
        void *desc = o->local->registered ? o->local->mrs[li].desc : NULL;
        uint64_t raddr = opal_common_ofi_rma_addr(&oc->ofi, rs->base, rs->base + rin);
        o->inflight++;
        if (o->is_put) {
            rc = fi_write(oc->ofi.ep, lbuf, len, desc, peer->fi_addr, raddr, rs->key, &p->fictx);
        } else {
            rc = fi_read(oc->ofi.ep, lbuf, len, desc, peer->fi_addr, raddr, rs->key, &p->fictx);
        }
        if (0 != rc) {
            o->inflight--;
            p->fictx.owner = NULL;
            break;
        }
        o->loff += len;
        o->roff += len;
        o->left -= len;
    }
    return rc;
}

void na_ofi_rma_piece_done(opal_na_class_t *cls, na_ofi_op_t *o, int err)
{
    o->inflight--;
    if (0 != err && OPAL_SUCCESS == o->rma_error) {
        o->rma_error = na_ofi_fi_error(err);
    }
    if (o->queued) {
        /* Waiting for room: the retry queue carries on with it. */
        return;
    }
    if (OPAL_SUCCESS == o->rma_error && o->left > 0) {
        ssize_t rc = na_ofi_start(cls, o);
        if (0 != rc) {
            o->rma_error = na_ofi_fi_error((int) -rc);
        }
    }
    if (!o->queued && 0 == o->inflight && (0 == o->left || OPAL_SUCCESS != o->rma_error)) {
        na_ofi_op_done(cls, o, o->rma_error);
    }
}

static int rma(opal_na_class_t *cls, opal_na_context_t *ctx, bool is_put, na_ofi_mh_t *local,
               size_t local_offset, na_ofi_mh_t *remote, size_t remote_offset, size_t length,
               na_ofi_addr_t *peer, na_ofi_op_t *o)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    unsigned long need = is_put ? OPAL_NA_MEM_WRITE_ONLY : OPAL_NA_MEM_READ_ONLY;
    if (0 == (remote->flags & need)) {
        opal_output(0, "na/ofi: %s %s a memory handle that is %s", is_put ? "put" : "get",
                    is_put ? "into" : "from", is_put ? "read-only" : "write-only");
        return OPAL_ERR_PERM;
    }
    if (local->remote || (!remote->remote && !remote->registered) ||
        (opal_common_ofi_needs_local_mr(&oc->ofi) && !local->registered && 0 != length)) {
        opal_output(0,
                    "na/ofi: %s with a %s handle that is not registered (or a remote handle "
                    "given as the local one)",
                    is_put ? "put" : "get", local->registered ? "remote" : "local");
        return OPAL_ERR_BAD_PARAM;
    }
    o->fictx.kind = NA_OFI_FICTX_OP;
    o->fictx.owner = o;
    o->addr = peer;
    na_ofi_addr_ref(peer);
    atomic_store_explicit(&peer->talked, true, memory_order_relaxed);
    o->listed = false;
    o->local = local;
    o->remote = remote;
    o->loff = local_offset;
    o->roff = remote_offset;
    o->left = length;
    o->inflight = 0;
    o->rma_error = OPAL_SUCCESS;
    o->is_put = is_put;
    for (int i = 0; i < NA_OFI_RMA_WINDOW; ++i) {
        o->pieces[i].fictx.owner = NULL;
    }
    atomic_fetch_add_explicit(&((na_ofi_context_t *) ctx->plugin)->pending, 1,
                              memory_order_relaxed);
    OPAL_THREAD_LOCK(&oc->lock);
    o->post = NA_OFI_POST_RMA;
    o->queued = false;
    ssize_t rc = na_ofi_start(cls, o);
    int ret = OPAL_SUCCESS;
    if (0 != rc && 0 == o->inflight && length == o->left) {
        /* Nothing started: refused now. */
        atomic_fetch_sub_explicit(&((na_ofi_context_t *) ctx->plugin)->pending, 1,
                                  memory_order_relaxed);
        na_ofi_addr_release(oc, peer);
        o->addr = NULL;
        opal_common_ofi_error("na/ofi", &oc->ofi, is_put ? "fi_write" : "fi_read", NULL, rc);
        ret = na_ofi_fi_error((int) -rc);
    } else {
        if (0 != rc && OPAL_SUCCESS == o->rma_error) {
            o->rma_error = na_ofi_fi_error((int) -rc);
        }
        if (!o->queued && 0 == o->inflight && (0 == o->left || OPAL_SUCCESS != o->rma_error)) {
            na_ofi_op_done(cls, o, o->rma_error);
        }
    }
    OPAL_THREAD_UNLOCK(&oc->lock);
    return ret;
}

int na_ofi_put(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_mem_handle_t *local_mh,
               size_t local_offset, opal_na_mem_handle_t *remote_mh, size_t remote_offset,
               size_t length, opal_na_addr_t *remote_addr, uint8_t remote_id, opal_na_op_id_t *op)
{
    (void) remote_id;
    return rma(cls, ctx, true, (na_ofi_mh_t *) local_mh, local_offset, (na_ofi_mh_t *) remote_mh,
               remote_offset, length, (na_ofi_addr_t *) remote_addr, (na_ofi_op_t *) op);
}

int na_ofi_get(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_mem_handle_t *local_mh,
               size_t local_offset, opal_na_mem_handle_t *remote_mh, size_t remote_offset,
               size_t length, opal_na_addr_t *remote_addr, uint8_t remote_id, opal_na_op_id_t *op)
{
    (void) remote_id;
    return rma(cls, ctx, false, (na_ofi_mh_t *) local_mh, local_offset, (na_ofi_mh_t *) remote_mh,
               remote_offset, length, (na_ofi_addr_t *) remote_addr, (na_ofi_op_t *) op);
}
