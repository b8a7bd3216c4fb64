/*
 * Bulk handles: creation over segments (bulk allocating the ones given
 * as NULL), registration with the na class, the class's table of local
 * handles by key, access, bind, and the range walk every copy shares.
 */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/bulk/base/base.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

/* Registers h's memory: one na handle over every segment when the class
 * allows that many, else one per segment. */
static int handle_register(opal_bulk_t *h)
{
    opal_na_class_t *na = h->bc->na_class;
    bool one = 1 == h->count || opal_na_mem_handle_get_max_segments(na) >= h->count;
    h->mh_count = one ? 1 : h->count;
    h->mhs = calloc(h->mh_count, sizeof(*h->mhs));
    if (NULL == h->mhs) {
        h->mh_count = 0;
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    int rc = OPAL_SUCCESS;
    for (uint32_t i = 0; i < h->mh_count && OPAL_SUCCESS == rc; ++i) {
        rc = one ? opal_na_mem_handle_create_segments(na, h->segs, h->count, h->flags, &h->mhs[i])
                 : opal_na_mem_handle_create(na, h->segs[i].base, h->segs[i].len, h->flags,
                                             &h->mhs[i]);
        if (OPAL_SUCCESS == rc) {
            rc = opal_na_mem_register(na, h->mhs[i]);
            if (OPAL_SUCCESS != rc) {
                opal_na_mem_handle_free(na, h->mhs[i]);
                h->mhs[i] = NULL;
            }
        }
    }
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "bulk: cannot register a handle of %u segment(s), %zu bytes with %s: %s",
                    h->count, h->size, opal_na_get_protocol(na), opal_strerror(rc));
        return rc;
    }
    h->registered = true;
    return OPAL_SUCCESS;
}

static void handle_destroy(opal_bulk_t *h)
{
    opal_bulk_class_t *bc = h->bc;
    opal_na_class_t *na = bc->na_class;
    if (h->local) {
        pthread_mutex_lock(&bc->lock);
        (void) opal_hash_table_remove_value_uint64(&bc->handles, h->key);
        pthread_mutex_unlock(&bc->lock);
    }
    for (uint32_t i = 0; i < h->mh_count; ++i) {
        if (NULL != h->mhs[i]) {
            if (h->registered) {
                (void) opal_na_mem_deregister(na, h->mhs[i]);
            }
            opal_na_mem_handle_free(na, h->mhs[i]);
        }
    }
    free(h->mhs);
    opal_na_addr_free(na, h->addr);
    if (h->segs != &h->seg1) {
        free(h->segs);
    }
    free(h->owned);
    free(h->eager);
    free(h);
}

/* A handle struct with room for count segments (not in the table yet). */
opal_bulk_t *opal_bulk_base_handle_alloc(opal_bulk_class_t *bc, uint32_t count)
{
    opal_bulk_t *h = calloc(1, sizeof(*h));
    if (NULL == h) {
        return NULL;
    }
    h->bc = bc;
    atomic_init(&h->refcount, 1);
    h->count = count;
    h->segs = 1 == count ? &h->seg1 : calloc(count, sizeof(*h->segs));
    if (NULL == h->segs) {
        free(h);
        return NULL;
    }
    return h;
}

/* Frees a handle that never got its first reference out. */
void opal_bulk_base_handle_discard(opal_bulk_t *h)
{
    handle_destroy(h);
}

int opal_bulk_create(opal_bulk_class_t *bc, uint32_t count, void *const *bufs, const size_t *sizes,
                     unsigned int flags, opal_bulk_t **handle)
{
    if (NULL == handle) {
        return OPAL_ERR_BAD_PARAM;
    }
    *handle = NULL;
    if (NULL == bc || NULL == sizes || 0 == count || count > OPAL_BULK_MAX_SEGMENTS) {
        opal_output(0, "bulk: create needs a bulk class and 1 to %u segment sizes (got %u)",
                    OPAL_BULK_MAX_SEGMENTS, count);
        return OPAL_ERR_BAD_PARAM;
    }
    if (0 == flags || 0 != (flags & ~(unsigned int) OPAL_BULK_READ_WRITE)) {
        opal_output(0,
                    "bulk: handle access flags 0x%x are not OPAL_BULK_READ_ONLY, WRITE_ONLY or "
                    "READ_WRITE",
                    flags);
        return OPAL_ERR_BAD_PARAM;
    }
    opal_bulk_t *h = opal_bulk_base_handle_alloc(bc, count);
    if (NULL == h) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    h->local = true;
    h->flags = flags;
    h->instance = bc->instance;
    int rc = OPAL_SUCCESS;
    size_t to_allocate = 0;
    for (uint32_t i = 0; i < count; ++i) {
        if (sizes[i] > SIZE_MAX - h->size) {
            opal_output(0, "bulk: create: the segments' sizes add up past SIZE_MAX");
            rc = OPAL_ERR_BAD_PARAM;
            goto out;
        }
        h->size += sizes[i];
        if (NULL == bufs || NULL == bufs[i]) {
            to_allocate += sizes[i];
        }
    }
    if (to_allocate > 0) {
        h->owned = calloc(1, to_allocate);
        if (NULL == h->owned) {
            rc = OPAL_ERR_OUT_OF_RESOURCE;
            goto out;
        }
    }
    char *next = h->owned;
    for (uint32_t i = 0; i < count; ++i) {
        h->segs[i].len = sizes[i];
        if (NULL == bufs || NULL == bufs[i]) {
            h->segs[i].base = next;
            next += sizes[i];
        } else {
            h->segs[i].base = bufs[i];
        }
    }
    if (bc->register_memory) {
        rc = handle_register(h);
        if (OPAL_SUCCESS != rc) {
            goto out;
        }
    }
    pthread_mutex_lock(&bc->lock);
    h->key = bc->next_key++;
    rc = opal_hash_table_set_value_uint64(&bc->handles, h->key, h);
    pthread_mutex_unlock(&bc->lock);
out:
    if (OPAL_SUCCESS != rc) {
        /* Removing a key that is not in the table (0 is never one) is
         * harmless. */
        handle_destroy(h);
        return rc;
    }
    *handle = h;
    return OPAL_SUCCESS;
}

int opal_bulk_free(opal_bulk_t *handle)
{
    if (NULL == handle) {
        return OPAL_SUCCESS;
    }
    int32_t before = atomic_fetch_sub_explicit(&handle->refcount, 1, memory_order_acq_rel);
    if (before <= 0) {
        opal_output(0, "bulk: a handle freed more often than it was referenced");
        return OPAL_ERR_BAD_PARAM;
    }
    if (1 == before) {
        handle_destroy(handle);
    }
    return OPAL_SUCCESS;
}

int opal_bulk_ref_incr(opal_bulk_t *handle)
{
    if (NULL == handle) {
        return OPAL_ERR_BAD_PARAM;
    }
    int32_t before = atomic_fetch_add_explicit(&handle->refcount, 1, memory_order_relaxed);
    if (before <= 0 || INT32_MAX == before) {
        opal_output(0, "bulk: a reference to a handle that was freed (or too many)");
        atomic_fetch_sub_explicit(&handle->refcount, 1, memory_order_relaxed);
        return OPAL_ERR_BAD_PARAM;
    }
    return OPAL_SUCCESS;
}

size_t opal_bulk_get_size(const opal_bulk_t *handle)
{
    return NULL == handle ? 0 : handle->size;
}

uint32_t opal_bulk_get_segment_count(const opal_bulk_t *handle)
{
    return NULL == handle ? 0 : handle->count;
}

unsigned int opal_bulk_get_flags(const opal_bulk_t *handle)
{
    return NULL == handle ? 0 : handle->flags;
}

int opal_bulk_access(opal_bulk_t *handle, size_t offset, size_t size, uint32_t max_count,
                     void **bufs, size_t *sizes, uint32_t *actual_count)
{
    if (NULL == handle || NULL == actual_count ||
        (max_count > 0 && (NULL == bufs || NULL == sizes))) {
        return OPAL_ERR_BAD_PARAM;
    }
    *actual_count = 0;
    if (!handle->local) {
        opal_output(0, "bulk: access to a handle of another process (deserialized): its memory "
                       "is not here");
        return OPAL_ERR_BAD_PARAM;
    }
    if (offset > handle->size || size > handle->size - offset) {
        opal_output(0, "bulk: access to %zu bytes at offset %zu of a handle of %zu bytes", size,
                    offset, handle->size);
        return OPAL_ERR_BAD_PARAM;
    }
    /* Walk the handle's segments against one region as long as the range. */
    opal_na_segment_t whole = {.base = NULL, .len = size};
    opal_bulk_walk_t w;
    opal_bulk_walk_init(&w, handle->segs, handle->count, offset, &whole, 1, 0, size);
    opal_bulk_piece_t p;
    uint32_t n = 0;
    while (n < max_count && opal_bulk_walk_next(&w, SIZE_MAX, &p)) {
        bufs[n] = (char *) handle->segs[p.a_idx].base + p.a_off;
        sizes[n] = p.len;
        ++n;
    }
    *actual_count = n;
    return OPAL_SUCCESS;
}

int opal_bulk_bind(opal_bulk_t *handle, opal_na_context_t *ctx)
{
    if (NULL == handle || NULL == ctx || ctx->na_class != handle->bc->na_class) {
        opal_output(0, "bulk: bind needs a handle and a context of its na class");
        return OPAL_ERR_BAD_PARAM;
    }
    if (!handle->local) {
        opal_output(0, "bulk: bind of a handle of another process: only its origin binds it");
        return OPAL_ERR_BAD_PARAM;
    }
    opal_na_addr_t *self = NULL;
    int rc = opal_na_addr_self(handle->bc->na_class, &self);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    opal_na_addr_free(handle->bc->na_class, handle->addr);
    handle->addr = self;
    handle->ctx_id = ctx->id;
    return OPAL_SUCCESS;
}

opal_na_addr_t *opal_bulk_get_addr(const opal_bulk_t *handle)
{
    return NULL == handle ? NULL : handle->addr;
}

uint8_t opal_bulk_get_context_id(const opal_bulk_t *handle)
{
    return NULL == handle ? 0 : handle->ctx_id;
}

opal_bulk_t *opal_bulk_base_handle_lookup(opal_bulk_class_t *bc, uint64_t key)
{
    void *value = NULL;
    pthread_mutex_lock(&bc->lock);
    if (OPAL_SUCCESS == opal_hash_table_get_value_uint64(&bc->handles, key, &value)) {
        /* Under the lock: handle_destroy removes it from the table under
         * the same lock before freeing, so a handle found here is alive;
         * the reference keeps it so. A handle whose count already hit 0
         * is being destroyed: not found. */
        opal_bulk_t *h = value;
        int32_t n = atomic_load_explicit(&h->refcount, memory_order_acquire);
        while (n > 0 && !atomic_compare_exchange_weak_explicit(
                            &h->refcount, &n, n + 1, memory_order_acq_rel, memory_order_acquire)) {
        }
        if (n <= 0) {
            value = NULL;
        }
    } else {
        value = NULL;
    }
    pthread_mutex_unlock(&bc->lock);
    return value;
}

const opal_na_segment_t *opal_bulk_base_mh_regions(const opal_bulk_t *h, opal_na_segment_t *one)
{
    if (h->mh_count == h->count) {
        return h->segs;
    }
    one->base = NULL;
    one->len = h->size;
    return one;
}

/* ------------------------------------------------------------ range walk */

/* Moves (*idx, *off) forward to the region holding offset off, skipping
 * empty regions. */
static void walk_seek(const opal_na_segment_t *r, uint32_t count, uint32_t *idx, size_t *off)
{
    while (*idx < count && *off >= r[*idx].len) {
        *off -= r[*idx].len;
        ++*idx;
    }
}

void opal_bulk_walk_init(opal_bulk_walk_t *w, const opal_na_segment_t *a, uint32_t a_count,
                         size_t a_offset, const opal_na_segment_t *b, uint32_t b_count,
                         size_t b_offset, size_t len)
{
    w->a = a;
    w->a_count = a_count;
    w->a_idx = 0;
    w->a_off = a_offset;
    w->b = b;
    w->b_count = b_count;
    w->b_idx = 0;
    w->b_off = b_offset;
    w->left = len;
    walk_seek(a, a_count, &w->a_idx, &w->a_off);
    walk_seek(b, b_count, &w->b_idx, &w->b_off);
}

bool opal_bulk_walk_next(opal_bulk_walk_t *w, size_t max, opal_bulk_piece_t *p)
{
    if (0 == w->left || w->a_idx >= w->a_count || w->b_idx >= w->b_count) {
        return false;
    }
    size_t n = w->left;
    size_t a_room = w->a[w->a_idx].len - w->a_off;
    size_t b_room = w->b[w->b_idx].len - w->b_off;
    n = n < a_room ? n : a_room;
    n = n < b_room ? n : b_room;
    n = n < max ? n : max;
    p->a_idx = w->a_idx;
    p->a_off = w->a_off;
    p->b_idx = w->b_idx;
    p->b_off = w->b_off;
    p->len = n;
    w->left -= n;
    w->a_off += n;
    w->b_off += n;
    walk_seek(w->a, w->a_count, &w->a_idx, &w->a_off);
    walk_seek(w->b, w->b_count, &w->b_idx, &w->b_off);
    return true;
}

void opal_bulk_base_copy_flat(opal_bulk_t *h, size_t offset, void *flat, size_t len, bool to_handle)
{
    opal_na_segment_t whole = {.base = flat, .len = len};
    opal_bulk_walk_t w;
    opal_bulk_walk_init(&w, h->segs, h->count, offset, &whole, 1, 0, len);
    opal_bulk_piece_t p;
    while (opal_bulk_walk_next(&w, SIZE_MAX, &p)) {
        char *mem = (char *) h->segs[p.a_idx].base + p.a_off;
        char *buf = (char *) flat + p.b_off;
        if (to_handle) {
            memcpy(mem, buf, p.len);
        } else {
            memcpy(buf, mem, p.len);
        }
    }
}
