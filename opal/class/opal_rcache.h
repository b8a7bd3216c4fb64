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
 * What it cannot see: memory freed and mapped again at the same address
 * behind its back. Whoever unmaps registered memory calls invalidate
 * first; otherwise a later acquire may return the old registration.
 *
 * Not thread-safe: callers that share a cache lock around it.
 */
#ifndef OPAL_CLASS_OPAL_RCACHE_H
#define OPAL_CLASS_OPAL_RCACHE_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/class/opal_interval_tree.h"
#include "opal/class/opal_list.h"
#include "opal/class/opal_object.h"

/* Registers [base, base + size) (page aligned) and stores the
 * registration in *reg; OPAL_SUCCESS or an error (nothing registered). */
typedef int (*opal_rcache_register_fn_t)(void *ctx, void *base, size_t size, void **reg);
/* Deregisters what register_fn returned. */
typedef void (*opal_rcache_deregister_fn_t)(void *ctx, void *reg);

typedef struct opal_rcache_entry_t {
    /* On the LRU list while nobody holds it. */
    opal_list_item_t super;
    opal_interval_tree_node_t node;
    /* The registered range: page-aligned, covering what was asked. */
    void *base;
    size_t size;
    /* What register_fn returned. */
    void *reg;
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
    opal_rcache_deregister_fn_t deregister_fn;
    void *ctx;
    /* Counters (tools, tests). */
    uint64_t hits;
    uint64_t misses;
    uint64_t evictions;
    uint64_t invalidations;
} opal_rcache_t;
OBJ_CLASS_DECLARATION(opal_rcache_t);

/* Sets the callbacks and the pinned-memory limit (bytes, 0: none).
 * OPAL_ERR_BAD_PARAM without both callbacks. */
OPAL_DECLSPEC int opal_rcache_init(opal_rcache_t *rc, size_t limit,
                                   opal_rcache_register_fn_t register_fn,
                                   opal_rcache_deregister_fn_t deregister_fn, void *ctx);

/* An entry whose range covers [base, base + size), held by the caller:
 * one from the cache, or a new registration (after evicting unheld
 * entries, least recently used first, while the limit would be passed).
 * OPAL_ERR_BAD_PARAM for size 0 or a range that wraps;
 * OPAL_ERR_OUT_OF_RESOURCE when the limit cannot be kept even after
 * evicting every unheld entry; register_fn's error otherwise. */
OPAL_DECLSPEC int opal_rcache_acquire(opal_rcache_t *rc, void *base, size_t size,
                                      opal_rcache_entry_t **entry);

/* Drops the caller's hold on entry (it stays cached unless invalidated). */
OPAL_DECLSPEC void opal_rcache_release(opal_rcache_t *rc, opal_rcache_entry_t *entry);

/* Forgets every registration overlapping [base, base + size): unheld ones
 * are deregistered now, held ones at their last release. Returns how
 * many entries were taken out. */
OPAL_DECLSPEC size_t opal_rcache_invalidate(opal_rcache_t *rc, void *base, size_t size);

/* Deregisters every entry nobody holds. Returns how many. */
OPAL_DECLSPEC size_t opal_rcache_flush(opal_rcache_t *rc);

#endif /* OPAL_CLASS_OPAL_RCACHE_H */
