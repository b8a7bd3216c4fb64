/*
 * opal_rcache_t: a registration cache. Registering memory with a NIC
 * (pinning it, getting keys) is slow, and upper layers register the same
 * buffers again and again; the cache keeps registrations, keyed by their
 * page-aligned address range in an interval tree, so that registering a
 * range inside one already registered is a lookup.
 *
 *   opal_rcache_t rc;
 *   OBJ_CONSTRUCT(&rc, opal_rcache_t);
 *   opal_rcache_init(&rc, limit, my_register, my_deregister, my_ctx);
 *   opal_rcache_entry_t *e;
 *   opal_rcache_acquire(&rc, buf, len, &e);      (e->reg: my_register's)
 *   ... use e->reg ...
 *   opal_rcache_release(&rc, e);                 (kept, now evictable)
 *   opal_rcache_invalidate(&rc, buf, len);       (the memory goes away)
 *   OBJ_DESTRUCT(&rc);                           (deregisters the rest)
 *
 * Entries are counted: acquire takes a reference, release drops it; an
 * entry nobody holds stays registered on a least-recently-used list and
 * is deregistered when pinned memory would pass the limit, or when its
 * range is invalidated. Invalidating a range that is still held takes the
 * entry out of the tree at once (no new acquire finds it) and deregisters
 * it at its last release.
 *
 * Memory freed and mapped again at the same address: after
 * opal_rcache_watch the cache hears of every range the process gives back
 * to the kernel (opal_memhooks: munmap, free() of a large block, heap
 * trimming, madvise DONTNEED, ...) and invalidates the registrations it
 * overlaps. The hook can fire in any thread, inside malloc, or inside
 * this cache's own deregister_fn while the caller holds its lock, so it
 * only records the range (a bounded table under a spin flag; when it
 * overflows, everything is invalidated); every call below applies what
 * was recorded first, under the caller's lock. An acquire after the
 * release therefore never returns the old registration. Should another
 * patcher write over the hooks later, the next call notices, invalidates
 * everything and clears rc->watching. Without watch
 * (or where opal_memhooks_subscribe is refused) whoever unmaps registered
 * memory calls invalidate first.
 *
 * Access rights: opal_rcache_init_access gives register_fn the rights an
 * acquire asks for (an opaque bit set, e.g. IBV_ACCESS_*). A cached entry
 * serves an acquire only if it has every bit asked; otherwise the cache
 * widens: it registers the union of both rights over the union of both
 * ranges and invalidates the narrower entry, so the rights of a range only
 * grow and one entry keeps serving every caller.
 *
 * Not thread-safe: callers that share a cache lock around it (the memory
 * hook needs no lock from them).
 */
#ifndef OPAL_CLASS_OPAL_RCACHE_H
#define OPAL_CLASS_OPAL_RCACHE_H

#include "opal/opal_config.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/class/opal_interval_tree.h"
#include "opal/class/opal_list.h"
#include "opal/class/opal_object.h"

/* Registers [base, base + size) (page aligned) and stores the
 * registration in *reg; OPAL_SUCCESS or an error (nothing registered). */
typedef int (*opal_rcache_register_fn_t)(void *ctx, void *base, size_t size, void **reg);
/* The same, for the access rights asked (opal_rcache_init_access). */
typedef int (*opal_rcache_register_access_fn_t)(void *ctx, void *base, size_t size, unsigned access,
                                                void **reg);
/* Deregisters what register_fn returned. */
typedef void (*opal_rcache_deregister_fn_t)(void *ctx, void *reg);

/* Released ranges a watching cache records between two calls before it
 * gives up and invalidates everything. */
#define OPAL_RCACHE_PENDING_MAX 64

typedef struct opal_rcache_entry_t {
    /* On the LRU list while nobody holds it. */
    opal_list_item_t super;
    opal_interval_tree_node_t node;
    /* The registered range: page-aligned, covering what was asked. */
    void *base;
    size_t size;
    /* What register_fn returned. */
    void *reg;
    /* The rights it was registered with (0 without init_access). */
    unsigned access;
    unsigned refcount;
    /* Out of the tree (invalidated while held): deregistered at the last
     * release. */
    bool invalid;
} opal_rcache_entry_t;
OBJ_CLASS_DECLARATION(opal_rcache_entry_t);

typedef struct opal_rcache_t {
    opal_object_t super;
    opal_interval_tree_t tree;
    /* Entries nobody holds, least recently released first. */
    opal_list_t lru;
    /* Entries invalidated while held, until their last release. */
    opal_list_t invalid;
    size_t limit;  /* bytes pinned at most (0: no limit) */
    size_t pinned; /* bytes registered now, held or not */
    size_t page_size;
    opal_rcache_register_fn_t register_fn;
    opal_rcache_register_access_fn_t register_access_fn;
    opal_rcache_deregister_fn_t deregister_fn;
    void *ctx;
    /* opal_rcache_watch: subscribed to opal_memhooks. Released ranges
     * wait in pending (under pending_lock, a spin flag the hook takes
     * from any thread) until the next call applies them. */
    bool watching;
    atomic_flag pending_lock;
    atomic_bool pending_any;
    /* A hook could not take pending_lock in time (a signal handler that
     * unmaps, interrupting its own thread's holder): invalidate all. */
    atomic_bool pending_lost;
    bool pending_overflow;
    unsigned npending;
    struct {
        uintptr_t lo, hi;
    } pending[OPAL_RCACHE_PENDING_MAX];
    /* The hull of every range registered since the cache was last empty:
     * a release outside it is not recorded. */
    atomic_uintptr_t span_lo, span_hi;
    /* Counters (tools, tests). */
    uint64_t hits;
    uint64_t misses;
    uint64_t evictions;
    uint64_t invalidations;
    uint64_t released; /* ranges the memory hook reported */
} opal_rcache_t;
OBJ_CLASS_DECLARATION(opal_rcache_t);

/* Sets the callbacks and the pinned-memory limit (bytes, 0: none).
 * OPAL_ERR_BAD_PARAM without both callbacks. */
OPAL_DECLSPEC int opal_rcache_init(opal_rcache_t *rc, size_t limit,
                                   opal_rcache_register_fn_t register_fn,
                                   opal_rcache_deregister_fn_t deregister_fn, void *ctx);

/* The same with a register function that is told the access rights each
 * acquire asks for (opal_rcache_acquire_access). */
OPAL_DECLSPEC int opal_rcache_init_access(opal_rcache_t *rc, size_t limit,
                                          opal_rcache_register_access_fn_t register_fn,
                                          opal_rcache_deregister_fn_t deregister_fn, void *ctx);

/* Subscribes the cache to opal_memhooks: memory given back to the kernel
 * invalidates the registrations it overlaps (see above). OPAL_SUCCESS
 * (also when already watching), or opal_memhooks_subscribe's error
 * (OPAL_ERR_NOT_SUPPORTED: opal_memhooks_why() says why; the cache works
 * as without watch). The cache unsubscribes when destructed. */
OPAL_DECLSPEC int opal_rcache_watch(opal_rcache_t *rc);

/* An entry whose range covers [base, base + size), held by the caller:
 * one from the cache, or a new registration (after evicting unheld
 * entries, least recently used first, while the limit would be passed).
 * OPAL_ERR_BAD_PARAM for size 0 or a range that wraps;
 * OPAL_ERR_OUT_OF_RESOURCE when the limit cannot be kept even after
 * evicting every unheld entry; register_fn's error otherwise. */
OPAL_DECLSPEC int opal_rcache_acquire(opal_rcache_t *rc, void *base, size_t size,
                                      opal_rcache_entry_t **entry);

/* acquire, for an entry whose rights include every bit of access (a miss
 * because a cached entry has fewer rights widens it, see above). With
 * plain opal_rcache_init, access must be 0. */
OPAL_DECLSPEC int opal_rcache_acquire_access(opal_rcache_t *rc, void *base, size_t size,
                                             unsigned access, opal_rcache_entry_t **entry);

/* Drops the caller's hold on entry (it stays cached unless invalidated). */
OPAL_DECLSPEC void opal_rcache_release(opal_rcache_t *rc, opal_rcache_entry_t *entry);

/* Forgets every registration overlapping [base, base + size): unheld ones
 * are deregistered now, held ones at their last release. Returns how
 * many entries were taken out. */
OPAL_DECLSPEC size_t opal_rcache_invalidate(opal_rcache_t *rc, void *base, size_t size);

/* Deregisters every entry nobody holds. Returns how many. */
OPAL_DECLSPEC size_t opal_rcache_flush(opal_rcache_t *rc);

#endif /* OPAL_CLASS_OPAL_RCACHE_H */
