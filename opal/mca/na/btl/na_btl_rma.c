/*
 * na/btl's memory handles and put / get. A handle covers one or more
 * segments; registering it registers every segment with every RDMA module
 * the BTLs opened (one registration handle per module and segment), and
 * its serialized form carries those handles by the module's component
 * name, so that a peer uses the one of the module that reaches this
 * process. A transfer is cut into one BTL put / get per piece that stays
 * inside one segment on both sides and within the module's limits.
 *
 * Completion: op->outstanding counts the pieces the BTL holds plus one
 * while pieces are still to be issued; whoever drops it to zero claims
 * and completes the op (BTL callbacks may run inside btl_put itself).
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/base/base.h"
#include "opal/mca/na/btl/na_btl.h"
#include "opal/util/opal_cursor.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

static const char *module_name(const mca_btl_base_module_t *btl)
{
    return btl->btl_component->btl_version.mca_component_name;
}

/* ------------------------------------------------------------- handles */

int na_btl_mem_handle_create_segments(opal_na_class_t *cls, const opal_na_segment_t *segments,
                                      size_t count, unsigned long flags, opal_na_mem_handle_t **mh)
{
    (void) cls;
    if (count > NA_BTL_MAX_SEGMENTS) {
        opal_output(0, "na/btl: a memory handle of %zu segments (at most %d)", count,
                    NA_BTL_MAX_SEGMENTS);
        return OPAL_ERR_BAD_PARAM;
    }
    opal_na_mem_handle_t *h = calloc(1, sizeof(*h));
    if (NULL == h) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    h->segments = malloc(count * sizeof(*h->segments));
    if (NULL == h->segments) {
        free(h);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    size_t total = 0;
    for (size_t i = 0; i < count; ++i) {
        if ((NULL == segments[i].base && 0 != segments[i].len) || total + segments[i].len < total) {
            opal_output(0, "na/btl: segment %zu of a memory handle is %s", i,
                        NULL == segments[i].base ? "NULL" : "too large");
            free(h->segments);
            free(h);
            return OPAL_ERR_BAD_PARAM;
        }
        h->segments[i] = segments[i];
        total += segments[i].len;
    }
    h->flags = flags;
    h->count = count;
    h->total = total;
    *mh = h;
    return OPAL_SUCCESS;
}

int na_btl_mem_handle_create(opal_na_class_t *cls, void *buf, size_t size, unsigned long flags,
                             opal_na_mem_handle_t **mh)
{
    const opal_na_segment_t seg = {.base = buf, .len = size};
    return na_btl_mem_handle_create_segments(cls, &seg, 1, flags, mh);
}

size_t na_btl_mem_handle_get_max_segments(const opal_na_class_t *cls)
{
    (void) cls;
    return NA_BTL_MAX_SEGMENTS;
}

size_t na_btl_mem_handle_get_size(opal_na_class_t *cls, opal_na_mem_handle_t *mh)
{
    (void) cls;
    return mh->total;
}

static void mods_release(opal_na_mem_handle_t *mh)
{
    for (int m = 0; m < mh->nmods; ++m) {
        na_btl_mh_mod_t *mod = &mh->mods[m];
        if (NULL != mod->regs) {
            for (size_t i = 0; i < mh->count; ++i) {
                if (NULL != mod->regs[i]) {
                    (void) mod->btl->btl_deregister_mem(mod->btl, mod->regs[i]);
                }
            }
        }
        free(mod->regs);
        free(mod->bytes);
    }
    memset(mh->mods, 0, sizeof(mh->mods));
    mh->nmods = 0;
}

void na_btl_mem_handle_free(opal_na_class_t *cls, opal_na_mem_handle_t *mh)
{
    (void) cls;
    mods_release(mh);
    free(mh->segments);
    free(mh);
}

int na_btl_mem_register(opal_na_class_t *cls, opal_na_mem_handle_t *mh)
{
    (void) cls;
    if (mh->remote) {
        opal_output(0, "na/btl: registering a remote memory handle (one that was deserialized)");
        return OPAL_ERR_BAD_PARAM;
    }
    if (mh->registered) {
        return OPAL_SUCCESS;
    }
    uint32_t access = MCA_BTL_REG_FLAG_LOCAL_READ | MCA_BTL_REG_FLAG_LOCAL_WRITE;
    if (mh->flags & OPAL_NA_MEM_READ_ONLY) {
        access |= MCA_BTL_REG_FLAG_REMOTE_READ;
    }
    if (mh->flags & OPAL_NA_MEM_WRITE_ONLY) {
        access |= MCA_BTL_REG_FLAG_REMOTE_WRITE;
    }
    int rc = OPAL_SUCCESS;
    mca_btl_base_selected_module_t *sm;
    OPAL_LIST_FOREACH (sm, &mca_btl_base_modules_initialized, mca_btl_base_selected_module_t) {
        mca_btl_base_module_t *btl = sm->btl_module;
        if (0 == (btl->btl_flags & MCA_BTL_FLAGS_RDMA) || mh->nmods == MCA_BTL_BASE_MUX_MAX) {
            continue;
        }
        na_btl_mh_mod_t *mod = &mh->mods[mh->nmods++];
        snprintf(mod->name, sizeof(mod->name), "%.*s", (int) sizeof(mod->name) - 1,
                 module_name(btl));
        mod->btl = btl;
        mod->handle_size = btl->btl_registration_handle_size;
        if (0 == mod->handle_size || NULL == btl->btl_register_mem) {
            mod->handle_size = 0;
            continue;
        }
        mod->regs = calloc(mh->count, sizeof(*mod->regs));
        if (NULL == mod->regs) {
            rc = OPAL_ERR_OUT_OF_RESOURCE;
            break;
        }
        for (size_t i = 0; i < mh->count; ++i) {
            mod->regs[i] =
                btl->btl_register_mem(btl, NULL, mh->segments[i].base, mh->segments[i].len, access);
            if (NULL == mod->regs[i]) {
                opal_output(0, "na/btl: %s could not register segment %zu (%zu bytes)", mod->name,
                            i, mh->segments[i].len);
                rc = OPAL_ERR_OUT_OF_RESOURCE;
                break;
            }
        }
        if (OPAL_SUCCESS != rc) {
            break;
        }
    }
    if (OPAL_SUCCESS != rc) {
        mods_release(mh);
        return rc;
    }
    mh->registered = true;
    return OPAL_SUCCESS;
}

int na_btl_mem_deregister(opal_na_class_t *cls, opal_na_mem_handle_t *mh)
{
    (void) cls;
    if (!mh->remote && mh->registered) {
        mods_release(mh);
        mh->registered = false;
    }
    return OPAL_SUCCESS;
}

size_t na_btl_mem_handle_get_serialize_size(opal_na_class_t *cls, opal_na_mem_handle_t *mh)
{
    (void) cls;
    size_t n = 1 + 4 + 16 * mh->count + 1;
    for (int m = 0; m < mh->nmods; ++m) {
        n += 2 + strlen(mh->mods[m].name) + 4 + mh->count * mh->mods[m].handle_size;
    }
    return n;
}

int na_btl_mem_handle_serialize(opal_na_class_t *cls, void *buf, size_t size,
                                opal_na_mem_handle_t *mh)
{
    (void) cls;
    if (!mh->registered && !mh->remote) {
        opal_output(0, "na/btl: serializing a memory handle that is not registered (call "
                       "opal_na_mem_register first: peers need its registrations)");
        return OPAL_ERR_BAD_PARAM;
    }
    opal_cursor_t c;
    opal_cursor_init_write(&c, buf, size);
    opal_cursor_put_u8(&c, (uint8_t) mh->flags);
    opal_cursor_put_u32(&c, (uint32_t) mh->count);
    for (size_t i = 0; i < mh->count; ++i) {
        opal_cursor_put_u64(&c, (uint64_t) (uintptr_t) mh->segments[i].base);
        opal_cursor_put_u64(&c, (uint64_t) mh->segments[i].len);
    }
    opal_cursor_put_u8(&c, (uint8_t) mh->nmods);
    for (int m = 0; m < mh->nmods; ++m) {
        const na_btl_mh_mod_t *mod = &mh->mods[m];
        opal_cursor_put_string(&c, mod->name);
        opal_cursor_put_u32(&c, (uint32_t) mod->handle_size);
        for (size_t i = 0; i < mh->count && 0 != mod->handle_size; ++i) {
            opal_cursor_put_bytes(&c,
                                  mh->remote ? (const void *) (mod->bytes + i * mod->handle_size)
                                             : (const void *) mod->regs[i],
                                  mod->handle_size);
        }
    }
    return opal_cursor_done(&c) ? OPAL_SUCCESS : OPAL_ERR_TRUNCATED;
}

int na_btl_mem_handle_deserialize(opal_na_class_t *cls, opal_na_mem_handle_t **mh, const void *buf,
                                  size_t size)
{
    (void) cls;
    na_btl_mh_wire_t *w = malloc(sizeof(*w));
    if (NULL == w) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    char why[NA_BTL_WHY_MAX];
    int rc = na_btl_mh_decode(buf, size, w, why);
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "na/btl: cannot deserialize a memory handle: %s", why);
        free(w);
        return rc;
    }
    opal_na_mem_handle_t *h = calloc(1, sizeof(*h));
    if (NULL == h || NULL == (h->segments = malloc(w->count * sizeof(*h->segments)))) {
        free(h);
        free(w);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    h->remote = true;
    h->registered = true;
    h->flags = w->flags;
    h->count = w->count;
    h->total = (size_t) w->total;
    for (uint32_t i = 0; i < w->count; ++i) {
        uint64_t base, len;
        na_btl_mh_wire_segment(w, i, &base, &len);
        h->segments[i].base = (void *) (uintptr_t) base;
        h->segments[i].len = (size_t) len;
    }
    for (uint8_t m = 0; m < w->nmods && OPAL_SUCCESS == rc; ++m) {
        na_btl_mh_mod_t *mod = &h->mods[h->nmods++];
        memcpy(mod->name, w->mods[m].name, sizeof(mod->name));
        mod->handle_size = w->mods[m].handle_size;
        size_t n = h->count * mod->handle_size;
        if (0 != n) {
            mod->bytes = malloc(n);
            if (NULL == mod->bytes) {
                rc = OPAL_ERR_OUT_OF_RESOURCE;
            } else {
                memcpy(mod->bytes, w->mods[m].handles, n);
            }
        }
    }
    free(w);
    if (OPAL_SUCCESS != rc) {
        na_btl_mem_handle_free(cls, h);
        return rc;
    }
    *mh = h;
    return OPAL_SUCCESS;
}

/* ------------------------------------------------------------ transfers */

/* The segment holding byte offset of mh, and where in it. */
static void seg_at(const opal_na_mem_handle_t *mh, size_t offset, size_t *index, size_t *within)
{
    size_t i = 0;
    while (i + 1 < mh->count && offset >= mh->segments[i].len) {
        offset -= mh->segments[i].len;
        ++i;
    }
    *index = i;
    *within = offset;
}

/* The registration of segment i of mh with module mod (NULL when the
 * module needs none). */
static mca_btl_base_registration_handle_t *reg_of(const opal_na_mem_handle_t *mh, int mod, size_t i)
{
    const na_btl_mh_mod_t *m = &mh->mods[mod];
    if (0 == m->handle_size) {
        return NULL;
    }
    if (mh->remote) {
        return (mca_btl_base_registration_handle_t *) (void *) (m->bytes + i * m->handle_size);
    }
    return m->regs[i];
}

/* The module of mh named name, or -1. */
static int find_mod(const opal_na_mem_handle_t *mh, const char *name)
{
    for (int m = 0; m < mh->nmods; ++m) {
        if (0 == strcmp(mh->mods[m].name, name)) {
            return m;
        }
    }
    return -1;
}

static void rma_release(na_btl_op_t *o)
{
    if (1 == atomic_fetch_sub_explicit(&o->outstanding, 1, memory_order_acq_rel)) {
        na_btl_class_t *nb = o->cls->plugin;
        bool canceled;
        if (opal_na_base_op_claim(&o->super, &canceled)) {
            int status = atomic_load_explicit(&o->status, memory_order_acquire);
            na_btl_op_finish(nb, o, canceled ? OPAL_ERR_CANCELED : status);
        }
    }
}

/* A piece is done (any thread that progresses the BTL). */
static void rma_piece_done(struct mca_btl_base_module_t *btl,
                           struct mca_btl_base_endpoint_t *endpoint, void *local_address,
                           mca_btl_base_registration_handle_t *local_handle, void *context,
                           void *cbdata, int status)
{
    (void) btl;
    (void) endpoint;
    (void) local_address;
    (void) local_handle;
    (void) cbdata;
    na_btl_op_t *o = context;
    if (OPAL_SUCCESS != status) {
        /* As a refusal in the call: a peer known dead is named so (btl/sm
         * finds it gone when the pieces it gathered are copied). */
        if (OPAL_ERR_UNREACH == status &&
            atomic_load_explicit(&o->addr->failed, memory_order_acquire)) {
            status = OPAL_ERR_PEER_FAILED;
        }
        int expected = OPAL_SUCCESS;
        atomic_compare_exchange_strong_explicit(&o->status, &expected, status, memory_order_acq_rel,
                                                memory_order_relaxed);
    }
    rma_release(o);
}

/* Issues o's pieces until done, an error, or OPAL_ERR_RESOURCE_BUSY. */
static int rma_issue(na_btl_op_t *o)
{
    mca_btl_base_module_t *btl = o->btl;
    size_t limit = o->is_get ? btl->btl_get_limit : btl->btl_put_limit;
    if (0 == limit) {
        limit = SIZE_MAX;
    }
    if (0 != btl->btl_rdma_pipeline_frag_size && btl->btl_rdma_pipeline_frag_size < limit) {
        limit = btl->btl_rdma_pipeline_frag_size;
    }
    while (o->remaining > 0) {
        if (OPAL_NA_OP_PENDING != atomic_load_explicit(&o->super.state, memory_order_acquire)) {
            return OPAL_ERR_CANCELED;
        }
        size_t li, lw, ri, rw;
        seg_at(o->local_mh, o->local_offset, &li, &lw);
        seg_at(o->remote_mh, o->remote_offset, &ri, &rw);
        size_t piece = o->remaining;
        size_t lleft = o->local_mh->segments[li].len - lw;
        size_t rleft = o->remote_mh->segments[ri].len - rw;
        piece = piece < lleft ? piece : lleft;
        piece = piece < rleft ? piece : rleft;
        piece = piece < limit ? piece : limit;
        if (0 == piece) {
            /* seg_at steps over empty segments, and the base checked the
             * range against both handles: only a handle changed under
             * the transfer gets here. */
            return OPAL_ERR_BAD_PARAM;
        }
        void *laddr = (uint8_t *) o->local_mh->segments[li].base + lw;
        uint64_t raddr = (uint64_t) (uintptr_t) o->remote_mh->segments[ri].base + rw;
        mca_btl_base_registration_handle_t *lreg =
            o->local_mod < 0 ? NULL : reg_of(o->local_mh, o->local_mod, li);
        mca_btl_base_registration_handle_t *rreg =
            o->remote_mod < 0 ? NULL : reg_of(o->remote_mh, o->remote_mod, ri);
        atomic_fetch_add_explicit(&o->outstanding, 1, memory_order_relaxed);
        int rc = o->is_get ? btl->btl_get(btl, o->endpoint, laddr, raddr, lreg, rreg, piece, 0,
                                          MCA_BTL_NO_ORDER, rma_piece_done, o, NULL)
                           : btl->btl_put(btl, o->endpoint, laddr, raddr, lreg, rreg, piece, 0,
                                          MCA_BTL_NO_ORDER, rma_piece_done, o, NULL);
        if (OPAL_SUCCESS != rc) {
            atomic_fetch_sub_explicit(&o->outstanding, 1, memory_order_relaxed);
            return rc;
        }
        o->local_offset += piece;
        o->remote_offset += piece;
        o->remaining -= piece;
    }
    return OPAL_SUCCESS;
}

/* Issues what it can; queues the rest, or ends the op on an error. */
static void rma_continue(na_btl_class_t *nb, na_btl_op_t *o, bool queued)
{
    int rc = rma_issue(o);
    if (OPAL_ERR_RESOURCE_BUSY == rc) {
        if (!queued) {
            OPAL_THREAD_LOCK(&nb->lock);
            na_btl_queue_push(&nb->pending_rma, o);
            OPAL_THREAD_UNLOCK(&nb->lock);
        }
        return;
    }
    if (queued) {
        OPAL_THREAD_LOCK(&nb->lock);
        (void) na_btl_queue_remove(&nb->pending_rma, o);
        OPAL_THREAD_UNLOCK(&nb->lock);
    }
    if (OPAL_SUCCESS != rc && OPAL_ERR_CANCELED != rc) {
        if (OPAL_ERR_UNREACH == rc &&
            atomic_load_explicit(&o->addr->failed, memory_order_acquire)) {
            rc = OPAL_ERR_PEER_FAILED;
        }
        int expected = OPAL_SUCCESS;
        atomic_compare_exchange_strong_explicit(&o->status, &expected, rc, memory_order_acq_rel,
                                                memory_order_relaxed);
    }
    /* Everything is issued (or will not be): drop the issuing count. */
    rma_release(o);
}

static int rma_start(opal_na_class_t *cls, opal_na_context_t *ctx, bool is_get,
                     opal_na_mem_handle_t *local_mh, size_t local_offset,
                     opal_na_mem_handle_t *remote_mh, size_t remote_offset, size_t length,
                     opal_na_addr_t *remote_addr, opal_na_op_id_t *op)
{
    na_btl_class_t *nb = cls->plugin;
    na_btl_op_t *o = (na_btl_op_t *) op;
    const char *kind = is_get ? "get" : "put";
    unsigned long need = is_get ? OPAL_NA_MEM_READ_ONLY : OPAL_NA_MEM_WRITE_ONLY;
    if (0 == (remote_mh->flags & need)) {
        opal_output(0, "na/btl: a %s %s a remote handle that is %s", kind, is_get ? "from" : "into",
                    is_get ? "write-only" : "read-only");
        return OPAL_ERR_PERM;
    }
    mca_btl_base_peer_t *peer;
    int rc = na_btl_addr_peer(nb, remote_addr, &peer);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if (0 == peer->rdma_count) {
        opal_output(0, "na/btl: no BTL that reaches rank %u does put / get", remote_addr->rank);
        return OPAL_ERR_NOT_SUPPORTED;
    }
    mca_btl_base_module_t *btl = peer->rdma[0].btl;
    const char *name = module_name(btl);
    int lmod = local_mh->remote ? -1 : find_mod(local_mh, name);
    int rmod = find_mod(remote_mh, name);
    if (0 != btl->btl_registration_handle_size &&
        (lmod < 0 || rmod < 0 || 0 == local_mh->mods[lmod].handle_size ||
         0 == remote_mh->mods[rmod].handle_size)) {
        opal_output(0,
                    "na/btl: a %s to rank %u goes over %s, and the %s handle is not "
                    "registered with it%s",
                    kind, remote_addr->rank, name, lmod < 0 ? "local" : "remote",
                    lmod < 0 && !local_mh->remote ? " (call opal_na_mem_register)" : "");
        return OPAL_ERR_BAD_PARAM;
    }
    o->cls = cls;
    o->is_get = is_get;
    o->local_mh = local_mh;
    o->remote_mh = remote_mh;
    o->local_offset = local_offset;
    o->remote_offset = remote_offset;
    o->remaining = length;
    o->btl = btl;
    o->endpoint = peer->rdma[0].endpoint;
    o->local_mod = lmod;
    o->remote_mod = rmod;
    atomic_store_explicit(&o->status, OPAL_SUCCESS, memory_order_relaxed);
    /* The issuing count: held until every piece was given to the BTL. */
    atomic_store_explicit(&o->outstanding, 1, memory_order_relaxed);
    (void) na_btl_addr_dup(cls, remote_addr, &o->addr);
    (void) opal_thread_fetch_add_u32(&((na_btl_context_t *) ctx->plugin)->pending, 1,
                                     memory_order_relaxed);
    rma_continue(nb, o, false);
    return OPAL_SUCCESS;
}

/* Put / get to a peer go over its first RDMA module: one that says a
 * call of any size moves fastest whole (btl/sm) is not to be cut. */
size_t na_btl_rma_piece_max(opal_na_class_t *cls, opal_na_addr_t *remote_addr)
{
    mca_btl_base_peer_t *peer;
    if (OPAL_SUCCESS != na_btl_addr_peer(cls->plugin, remote_addr, &peer) ||
        0 == peer->rdma_count) {
        return 0;
    }
    return 0 != (peer->rdma[0].btl->btl_flags & MCA_BTL_FLAGS_RDMA_WHOLE) ? SIZE_MAX : 0;
}

int na_btl_put(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_mem_handle_t *local_mh,
               size_t local_offset, opal_na_mem_handle_t *remote_mh, size_t remote_offset,
               size_t length, opal_na_addr_t *remote_addr, uint8_t remote_id, opal_na_op_id_t *op)
{
    (void) remote_id;
    return rma_start(cls, ctx, false, local_mh, local_offset, remote_mh, remote_offset, length,
                     remote_addr, op);
}

int na_btl_get(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_mem_handle_t *local_mh,
               size_t local_offset, opal_na_mem_handle_t *remote_mh, size_t remote_offset,
               size_t length, opal_na_addr_t *remote_addr, uint8_t remote_id, opal_na_op_id_t *op)
{
    (void) remote_id;
    return rma_start(cls, ctx, true, local_mh, local_offset, remote_mh, remote_offset, length,
                     remote_addr, op);
}

int na_btl_rma_progress(na_btl_class_t *nb)
{
    int moved = 0;
    for (;;) {
        OPAL_THREAD_LOCK(&nb->lock);
        na_btl_op_t *o = nb->pending_rma.head;
        OPAL_THREAD_UNLOCK(&nb->lock);
        if (NULL == o) {
            break;
        }
        size_t before = o->remaining;
        rma_continue(nb, o, true);
        OPAL_THREAD_LOCK(&nb->lock);
        bool stuck = nb->pending_rma.head == o && o->remaining == before;
        OPAL_THREAD_UNLOCK(&nb->lock);
        if (stuck) {
            break;
        }
        ++moved;
    }
    return moved;
}

bool na_btl_rma_cancel(na_btl_class_t *nb, na_btl_op_t *o)
{
    OPAL_THREAD_LOCK(&nb->lock);
    bool waiting = &nb->pending_rma == o->queue && na_btl_queue_remove(&nb->pending_rma, o);
    OPAL_THREAD_UNLOCK(&nb->lock);
    if (waiting) {
        /* Nothing more will be issued; the pieces with the BTL (if any)
         * finish first, then the claim reports the cancel. */
        rma_release(o);
    }
    return waiting;
}

void na_btl_rma_peer_failed(na_btl_class_t *nb, opal_na_addr_t *addr)
{
    for (;;) {
        OPAL_THREAD_LOCK(&nb->lock);
        na_btl_op_t *found = NULL;
        for (na_btl_op_t *o = nb->pending_rma.head; NULL != o; o = o->next) {
            if (o->addr == addr) {
                found = o;
                break;
            }
        }
        if (NULL != found) {
            (void) na_btl_queue_remove(&nb->pending_rma, found);
        }
        OPAL_THREAD_UNLOCK(&nb->lock);
        if (NULL == found) {
            return;
        }
        int expected = OPAL_SUCCESS;
        atomic_compare_exchange_strong_explicit(&found->status, &expected, OPAL_ERR_PEER_FAILED,
                                                memory_order_acq_rel, memory_order_relaxed);
        rma_release(found);
    }
}
