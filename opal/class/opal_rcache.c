/*
 * opal_rcache_t: registrations in an interval tree, unheld ones on an LRU
 * list. An entry is in exactly one of three states: in the tree and held
 * (on no list), in the tree and unheld (on lru), or invalidated while
 * held (out of the tree, on invalid until its last release).
 */
#include "opal/class/opal_rcache.h"

#include <unistd.h>

#include "opal/util/opal_error.h"

static void entry_construct(opal_rcache_entry_t *e)
{
    e->base = NULL;
    e->size = 0;
    e->reg = NULL;
    e->refcount = 0;
    e->invalid = false;
}

OBJ_CLASS_INSTANCE(opal_rcache_entry_t, opal_list_item_t, entry_construct, NULL);

static void rcache_construct(opal_rcache_t *rc)
{
    OBJ_CONSTRUCT(&rc->tree, opal_interval_tree_t);
    OBJ_CONSTRUCT(&rc->lru, opal_list_t);
    OBJ_CONSTRUCT(&rc->invalid, opal_list_t);
    rc->limit = 0;
    rc->pinned = 0;
    long page = sysconf(_SC_PAGESIZE);
    rc->page_size = page > 0 ? (size_t) page : 4096;
    rc->register_fn = NULL;
    rc->deregister_fn = NULL;
    rc->ctx = NULL;
    rc->hits = rc->misses = rc->evictions = rc->invalidations = 0;
}

static void entry_drop(opal_rcache_t *rc, opal_rcache_entry_t *e)
{
    rc->deregister_fn(rc->ctx, e->reg);
    rc->pinned -= e->size;
    OBJ_RELEASE(e);
}

#define ENTRY_OF(n)                                                                                \
    ((opal_rcache_entry_t *) (void *) ((char *) (n) -offsetof(opal_rcache_entry_t, node)))

static void rcache_destruct(opal_rcache_t *rc)
{
    /* Held entries left at the end are the holder's leak; their
     * registrations go with the cache all the same. */
    opal_interval_tree_node_t *n;
    while (NULL != (n = opal_interval_tree_first_overlap(&rc->tree, 0, UINT64_MAX))) {
        opal_rcache_entry_t *e = ENTRY_OF(n);
        opal_interval_tree_remove(&rc->tree, n);
        if (0 == e->refcount) {
            opal_list_remove_item(&rc->lru, &e->super);
        }
        entry_drop(rc, e);
    }
    opal_list_item_t *it;
    while (NULL != (it = opal_list_remove_first(&rc->invalid))) {
        entry_drop(rc, (opal_rcache_entry_t *) it);
    }
    OBJ_DESTRUCT(&rc->invalid);
    OBJ_DESTRUCT(&rc->lru);
    OBJ_DESTRUCT(&rc->tree);
}

OBJ_CLASS_INSTANCE(opal_rcache_t, opal_object_t, rcache_construct, rcache_destruct);

int opal_rcache_init(opal_rcache_t *rc, size_t limit, opal_rcache_register_fn_t register_fn,
                     opal_rcache_deregister_fn_t deregister_fn, void *ctx)
{
    if (NULL == register_fn || NULL == deregister_fn) {
        return OPAL_ERR_BAD_PARAM;
    }
    rc->limit = limit;
    rc->register_fn = register_fn;
    rc->deregister_fn = deregister_fn;
    rc->ctx = ctx;
    return OPAL_SUCCESS;
}

static bool evict_one(opal_rcache_t *rc)
{
    opal_rcache_entry_t *e = (opal_rcache_entry_t *) opal_list_remove_first(&rc->lru);
    if (NULL == e) {
        return false;
    }
    opal_interval_tree_remove(&rc->tree, &e->node);
    rc->evictions++;
    entry_drop(rc, e);
    return true;
}

int opal_rcache_acquire(opal_rcache_t *rc, void *base, size_t size, opal_rcache_entry_t **entry)
{
    uintptr_t start = (uintptr_t) base;
    if (0 == size || start + size < start || NULL == rc->register_fn) {
        return OPAL_ERR_BAD_PARAM;
    }
    uintptr_t lo = start & ~(uintptr_t) (rc->page_size - 1);
    uintptr_t hi = (start + size + rc->page_size - 1) & ~(uintptr_t) (rc->page_size - 1);
    if (hi < start + size) {
        /* The last page ends at the top of the address space. */
        hi = UINTPTR_MAX & ~(uintptr_t) (rc->page_size - 1);
        if (hi < start + size) {
            return OPAL_ERR_BAD_PARAM;
        }
    }

    opal_interval_tree_node_t *n =
        opal_interval_tree_find_containing(&rc->tree, start, start + size);
    if (n) {
        opal_rcache_entry_t *e = ENTRY_OF(n);
        if (0 == e->refcount++) {
            opal_list_remove_item(&rc->lru, &e->super);
        }
        rc->hits++;
        *entry = e;
        return OPAL_SUCCESS;
    }

    size_t need = hi - lo;
    if (rc->limit && need > rc->limit) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    while (rc->limit && rc->pinned + need > rc->limit) {
        if (!evict_one(rc)) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    opal_rcache_entry_t *e = OBJ_NEW(opal_rcache_entry_t);
    if (NULL == e) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    int rc_reg = rc->register_fn(rc->ctx, (void *) lo, need, &e->reg);
    /* Pinning may fail for the memory the cache already holds (the
     * locked-memory limit): give the unheld back and try once more. */
    if (OPAL_SUCCESS != rc_reg && opal_rcache_flush(rc) > 0) {
        rc_reg = rc->register_fn(rc->ctx, (void *) lo, need, &e->reg);
    }
    if (OPAL_SUCCESS != rc_reg) {
        OBJ_RELEASE(e);
        return rc_reg;
    }
    e->base = (void *) lo;
    e->size = need;
    e->refcount = 1;
    e->node.low = lo;
    e->node.high = hi;
    opal_interval_tree_insert(&rc->tree, &e->node);
    rc->pinned += need;
    rc->misses++;
    *entry = e;
    return OPAL_SUCCESS;
}

void opal_rcache_release(opal_rcache_t *rc, opal_rcache_entry_t *e)
{
    if (0 == e->refcount || --e->refcount > 0) {
        return;
    }
    if (e->invalid) {
        opal_list_remove_item(&rc->invalid, &e->super);
        entry_drop(rc, e);
        return;
    }
    opal_list_append(&rc->lru, &e->super);
}

size_t opal_rcache_invalidate(opal_rcache_t *rc, void *base, size_t size)
{
    uintptr_t lo = (uintptr_t) base;
    uintptr_t hi = lo + size < lo ? UINTPTR_MAX : lo + size;
    size_t count = 0;
    opal_interval_tree_node_t *n;
    while (NULL != (n = opal_interval_tree_first_overlap(&rc->tree, lo, hi))) {
        opal_rcache_entry_t *e = ENTRY_OF(n);
        opal_interval_tree_remove(&rc->tree, n);
        rc->invalidations++;
        count++;
        if (0 == e->refcount) {
            opal_list_remove_item(&rc->lru, &e->super);
            entry_drop(rc, e);
        } else {
            e->invalid = true;
            opal_list_append(&rc->invalid, &e->super);
        }
    }
    return count;
}

size_t opal_rcache_flush(opal_rcache_t *rc)
{
    size_t count = 0;
    while (evict_one(rc)) {
        count++;
    }
    return count;
}
