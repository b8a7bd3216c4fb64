/*
 * opal_rcache_t: registrations in an interval tree, unheld ones on an LRU
 * list. An entry is in exactly one of three states: in the tree and held
 * (on no list), in the tree and unheld (on lru), or invalidated while
 * held (out of the tree, on invalid until its last release).
 *
 * Watching (opal_rcache_watch): the memory hook only appends the released
 * range to rc->pending; apply_pending, at the top of every public call
 * and so under the caller's lock, turns the recorded ranges into
 * invalidations. The hook may run inside deregister_fn (called from
 * apply_pending itself), which is why it never touches the tree.
 */
#include "opal/class/opal_rcache.h"

#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "opal/util/opal_error.h"
#include "opal/util/opal_memhooks.h"

static void entry_construct(opal_rcache_entry_t *e)
{
    e->base = NULL;
    e->size = 0;
    e->reg = NULL;
    e->access = 0;
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
    rc->register_access_fn = NULL;
    rc->deregister_fn = NULL;
    rc->ctx = NULL;
    rc->watching = false;
    atomic_flag_clear(&rc->pending_lock);
    atomic_init(&rc->pending_any, false);
    atomic_init(&rc->pending_lost, false);
    rc->pending_overflow = false;
    rc->npending = 0;
    atomic_init(&rc->span_lo, UINTPTR_MAX);
    atomic_init(&rc->span_hi, 0);
    rc->hits = rc->misses = rc->evictions = rc->invalidations = rc->released = 0;
}

static void entry_drop(opal_rcache_t *rc, opal_rcache_entry_t *e)
{
    rc->deregister_fn(rc->ctx, e->reg);
    rc->pinned -= e->size;
    OBJ_RELEASE(e);
    if (0 == rc->pinned) {
        /* Empty: releases anywhere are of no interest until the next
         * registration widens the span again. */
        atomic_store_explicit(&rc->span_hi, 0, memory_order_relaxed);
        atomic_store_explicit(&rc->span_lo, UINTPTR_MAX, memory_order_relaxed);
    }
}

/* The memory hook: any thread, maybe inside malloc or inside this cache's
 * deregister_fn with the caller's lock held. Records, never acts. */
OPAL_MEMHOOKS_CALLBACK static void released(void *base, size_t size, void *ctx)
{
    opal_rcache_t *rc = ctx;
    uintptr_t lo = (uintptr_t) base;
    uintptr_t hi = lo + size < lo ? UINTPTR_MAX : lo + size;
    /* Acquire pairs with the release store in acquire_access, made before
     * register_fn: a registration this thread may know of is inside the
     * span read here. */
    if (hi <= atomic_load_explicit(&rc->span_lo, memory_order_acquire) ||
        lo >= atomic_load_explicit(&rc->span_hi, memory_order_acquire)) {
        return;
    }
    /* Held only for a few stores or a copy, never across a system call;
     * but its holder may be this very thread, interrupted by a signal
     * whose handler unmaps: so give up after a while and have the next
     * call invalidate everything. */
    for (unsigned spins = 0;
         atomic_flag_test_and_set_explicit(&rc->pending_lock, memory_order_acquire); spins++) {
        if (spins >= 4096) {
            atomic_store_explicit(&rc->pending_lost, true, memory_order_release);
            return;
        }
        if (63 == spins % 64) {
            sched_yield();
        }
    }
    if (rc->npending < OPAL_RCACHE_PENDING_MAX) {
        rc->pending[rc->npending].lo = lo;
        rc->pending[rc->npending].hi = hi;
        rc->npending++;
    } else {
        rc->pending_overflow = true;
    }
    atomic_store_explicit(&rc->pending_any, true, memory_order_release);
    atomic_flag_clear_explicit(&rc->pending_lock, memory_order_release);
}

#define ENTRY_OF(n)                                                                                \
    ((opal_rcache_entry_t *) (void *) ((char *) (n) -offsetof(opal_rcache_entry_t, node)))

static void rcache_destruct(opal_rcache_t *rc)
{
    if (rc->watching) {
        /* Returns once no hook is inside released() for this cache. */
        opal_memhooks_unsubscribe(released, rc);
        rc->watching = false;
    }
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

/* One of register_fn / register_access_fn is set, the other NULL. */
static int rcache_init(opal_rcache_t *rc, size_t limit, opal_rcache_register_fn_t register_fn,
                       opal_rcache_register_access_fn_t register_access_fn,
                       opal_rcache_deregister_fn_t deregister_fn, void *ctx)
{
    if ((NULL == register_fn && NULL == register_access_fn) || NULL == deregister_fn) {
        return OPAL_ERR_BAD_PARAM;
    }
    rc->limit = limit;
    rc->register_fn = register_fn;
    rc->register_access_fn = register_access_fn;
    rc->deregister_fn = deregister_fn;
    rc->ctx = ctx;
    return OPAL_SUCCESS;
}

int opal_rcache_init(opal_rcache_t *rc, size_t limit, opal_rcache_register_fn_t register_fn,
                     opal_rcache_deregister_fn_t deregister_fn, void *ctx)
{
    return rcache_init(rc, limit, register_fn, NULL, deregister_fn, ctx);
}

int opal_rcache_init_access(opal_rcache_t *rc, size_t limit,
                            opal_rcache_register_access_fn_t register_fn,
                            opal_rcache_deregister_fn_t deregister_fn, void *ctx)
{
    return rcache_init(rc, limit, NULL, register_fn, deregister_fn, ctx);
}

int opal_rcache_watch(opal_rcache_t *rc)
{
    if (rc->watching) {
        return OPAL_SUCCESS;
    }
    int ret = opal_memhooks_subscribe(released, rc);
    if (OPAL_SUCCESS == ret) {
        rc->watching = true;
    }
    return ret;
}

static size_t invalidate_range(opal_rcache_t *rc, uintptr_t lo, uintptr_t hi);

/* Applies the ranges the hook recorded. Each round empties the table
 * first, so releases made by deregister_fn meanwhile land in a fresh one;
 * what is left after a few rounds waits for the next call. */
static void apply_pending(opal_rcache_t *rc)
{
    if (!rc->watching) {
        return;
    }
    if (!opal_memhooks_active()) {
        /* Another patcher wrote over the hooks: releases may have gone
         * unseen and will. Forget everything and stop claiming to watch
         * (the user can tell: rc->watching). */
        opal_memhooks_unsubscribe(released, rc);
        rc->watching = false;
        invalidate_range(rc, 0, UINTPTR_MAX);
        return;
    }
    for (int round = 0; round < 4; round++) {
        /* pending_lost is read on its own: a hook that gave up sets it
         * outside the lock, so pending_any may have been cleared since. */
        if (!atomic_load_explicit(&rc->pending_any, memory_order_acquire) &&
            !atomic_load_explicit(&rc->pending_lost, memory_order_acquire)) {
            return;
        }
        struct {
            uintptr_t lo, hi;
        } got[OPAL_RCACHE_PENDING_MAX];
        while (atomic_flag_test_and_set_explicit(&rc->pending_lock, memory_order_acquire)) {
        }
        unsigned n = rc->npending;
        bool overflow = rc->pending_overflow ||
                        atomic_exchange_explicit(&rc->pending_lost, false, memory_order_relaxed);
        memcpy(got, rc->pending, n * sizeof(got[0]));
        rc->npending = 0;
        rc->pending_overflow = false;
        atomic_store_explicit(&rc->pending_any, false, memory_order_relaxed);
        atomic_flag_clear_explicit(&rc->pending_lock, memory_order_release);

        rc->released += n;
        if (overflow) {
            rc->released++;
            invalidate_range(rc, 0, UINTPTR_MAX);
            continue;
        }
        for (unsigned i = 0; i < n; i++) {
            invalidate_range(rc, got[i].lo, got[i].hi);
        }
    }
}

static int register_range(opal_rcache_t *rc, void *base, size_t size, unsigned access, void **reg)
{
    /* Widen the span before registering (release pairs with the hook's
     * acquire): a release of these pages from now on is recorded. */
    uintptr_t lo = (uintptr_t) base, hi = lo + size;
    if (lo < atomic_load_explicit(&rc->span_lo, memory_order_relaxed)) {
        atomic_store_explicit(&rc->span_lo, lo, memory_order_release);
    }
    if (hi > atomic_load_explicit(&rc->span_hi, memory_order_relaxed)) {
        atomic_store_explicit(&rc->span_hi, hi, memory_order_release);
    }
    return NULL != rc->register_access_fn ? rc->register_access_fn(rc->ctx, base, size, access, reg)
                                          : rc->register_fn(rc->ctx, base, size, reg);
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

typedef struct rights_search_t {
    uintptr_t lo, hi;
    unsigned access;
    opal_rcache_entry_t *found;  /* contains the range with every right */
    opal_rcache_entry_t *weaker; /* contains the range, fewer rights */
} rights_search_t;

static int find_with_rights(opal_interval_tree_node_t *n, void *ctx)
{
    rights_search_t *q = ctx;
    if (n->low > q->lo || n->high < q->hi) {
        return 0;
    }
    opal_rcache_entry_t *e = ENTRY_OF(n);
    if ((e->access & q->access) == q->access) {
        q->found = e;
        return 1;
    }
    if (NULL == q->weaker) {
        q->weaker = e;
    }
    return 0;
}

static void take_out(opal_rcache_t *rc, opal_rcache_entry_t *e)
{
    opal_interval_tree_remove(&rc->tree, &e->node);
    rc->invalidations++;
    if (0 == e->refcount) {
        opal_list_remove_item(&rc->lru, &e->super);
        entry_drop(rc, e);
    } else {
        e->invalid = true;
        opal_list_append(&rc->invalid, &e->super);
    }
}

int opal_rcache_acquire(opal_rcache_t *rc, void *base, size_t size, opal_rcache_entry_t **entry)
{
    return opal_rcache_acquire_access(rc, base, size, 0, entry);
}

int opal_rcache_acquire_access(opal_rcache_t *rc, void *base, size_t size, unsigned access,
                               opal_rcache_entry_t **entry)
{
    uintptr_t start = (uintptr_t) base;
    if (0 == size || start + size < start ||
        (NULL == rc->register_fn && NULL == rc->register_access_fn) ||
        (0 != access && NULL == rc->register_access_fn)) {
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
    /* Releases recorded since the last call first: a range unmapped and
     * mapped again must miss. */
    apply_pending(rc);

    rights_search_t q = {.lo = start, .hi = start + size, .access = access};
    opal_interval_tree_visit_overlaps(&rc->tree, start, start + size, find_with_rights, &q);
    if (q.found) {
        opal_rcache_entry_t *e = q.found;
        if (0 == e->refcount++) {
            opal_list_remove_item(&rc->lru, &e->super);
        }
        rc->hits++;
        *entry = e;
        return OPAL_SUCCESS;
    }
    if (q.weaker) {
        /* Widen: the weaker entry's range and rights too, so that it can
         * go and this one serves both kinds of caller. */
        access |= q.weaker->access;
        lo = lo < q.weaker->node.low ? lo : (uintptr_t) q.weaker->node.low;
        hi = hi > q.weaker->node.high ? hi : (uintptr_t) q.weaker->node.high;
    }

    size_t need = hi - lo;
    if (rc->limit && need > rc->limit) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    /* Evicting may drop the weaker entry (unheld, on lru): forget it. */
    while (rc->limit && rc->pinned + need > rc->limit) {
        opal_rcache_entry_t *victim = (opal_rcache_entry_t *) opal_list_get_first(&rc->lru);
        if (opal_list_is_empty(&rc->lru)) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        if (victim == q.weaker) {
            q.weaker = NULL;
        }
        evict_one(rc);
    }
    opal_rcache_entry_t *e = OBJ_NEW(opal_rcache_entry_t);
    if (NULL == e) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    int rc_reg = register_range(rc, (void *) lo, need, access, &e->reg);
    /* Pinning may fail for the memory the cache already holds (the
     * locked-memory limit): give the unheld back and try once more. */
    if (OPAL_SUCCESS != rc_reg) {
        if (NULL != q.weaker && 0 == q.weaker->refcount) {
            q.weaker = NULL; /* flushed with the rest */
        }
        if (opal_rcache_flush(rc) > 0) {
            rc_reg = register_range(rc, (void *) lo, need, access, &e->reg);
        }
    }
    if (OPAL_SUCCESS != rc_reg) {
        OBJ_RELEASE(e);
        return rc_reg;
    }
    e->base = (void *) lo;
    e->size = need;
    e->access = access;
    e->refcount = 1;
    e->node.low = lo;
    e->node.high = hi;
    opal_interval_tree_insert(&rc->tree, &e->node);
    rc->pinned += need;
    rc->misses++;
    /* After counting the new one in: pinned never passes through 0 here,
     * which would reset the span. */
    if (NULL != q.weaker) {
        take_out(rc, q.weaker);
    }
    *entry = e;
    return OPAL_SUCCESS;
}

void opal_rcache_release(opal_rcache_t *rc, opal_rcache_entry_t *e)
{
    apply_pending(rc);
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

static size_t invalidate_range(opal_rcache_t *rc, uintptr_t lo, uintptr_t hi)
{
    size_t count = 0;
    opal_interval_tree_node_t *n;
    while (NULL != (n = opal_interval_tree_first_overlap(&rc->tree, lo, hi))) {
        take_out(rc, ENTRY_OF(n));
        count++;
    }
    return count;
}

size_t opal_rcache_invalidate(opal_rcache_t *rc, void *base, size_t size)
{
    apply_pending(rc);
    uintptr_t lo = (uintptr_t) base;
    return invalidate_range(rc, lo, lo + size < lo ? UINTPTR_MAX : lo + size);
}

size_t opal_rcache_flush(opal_rcache_t *rc)
{
    apply_pending(rc);
    size_t count = 0;
    while (evict_one(rc)) {
        count++;
    }
    return count;
}
