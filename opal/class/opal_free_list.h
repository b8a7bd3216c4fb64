/*
 * opal_free_list_t: a pool of constructed objects, so that hot paths never
 * allocate. Items are carved from aligned slabs and constructed once, when
 * their slab is allocated; get and return only move them on and off a lock-
 * free lifo. Each item may carry a payload buffer (e.g. a message buffer)
 * from a second slab with its own size and alignment, and each slab may be
 * registered (e.g. with a NIC) through a hook called once per slab.
 *
 *   opal_free_list_t fl;
 *   OBJ_CONSTRUCT(&fl, opal_free_list_t);
 *   rc = opal_free_list_init(&fl, sizeof(my_frag_t), 64, OBJ_CLASS(my_frag_t),
 *                            4096, 4096, 32, 1024, 32, NULL, NULL, NULL);
 *   my_frag_t *frag = (my_frag_t *) opal_free_list_get(&fl);   NULL at the max
 *   ... frag->super.ptr is its 4 KiB payload ...
 *   opal_free_list_return(&fl, &frag->super);
 *   OBJ_DESTRUCT(&fl);                        every item must be back
 *
 * Variants. The _st functions use no atomic read-modify-write and must only
 * be used while a single thread touches the list; the _mt functions are
 * always thread-safe; the plain get / return / wait choose by
 * opal_using_threads(), like OPAL_THREAD_LOCK, so a program that has not
 * declared threads pays for no atomics. Growing is serialised by a mutex
 * (in the _mt path) and happens outside the fast path.
 *
 * Item lifetime: an item is constructed (OBJ_CONSTRUCT_FROM_CLASS with the
 * list's class) when its slab is allocated and destructed when the free
 * list is destructed; get and return do not run constructors. The item's
 * registration and ptr fields are set after its constructor has run.
 */
#ifndef OPAL_CLASS_OPAL_FREE_LIST_H
#define OPAL_CLASS_OPAL_FREE_LIST_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/class/opal_lifo.h"
#include "opal/class/opal_list.h"
#include "opal/class/opal_object.h"
#include "opal/runtime/opal_progress.h"
#include "opal/threads/opal_atomic.h"
#include "opal/threads/opal_mutex.h"

/* The base class of every free-list item. */
typedef struct opal_free_list_item_t {
    opal_list_item_t super;
    /* What the registration hook returned for the slab this item's memory
     * came from (its payload slab when it has a payload); NULL without a
     * hook. */
    void *registration;
    /* This item's payload buffer; NULL when the list has no payloads. */
    void *ptr;
} opal_free_list_item_t;
OBJ_CLASS_DECLARATION(opal_free_list_item_t);

/* Called once per new slab with its base and size (the payload slab when
 * the list has payloads, else the item slab). Stores what the items should
 * record in *registration; returns OPAL_SUCCESS, or an error that makes the
 * growth fail (the slab is freed, the error is returned by the grow). */
typedef int (*opal_free_list_register_fn_t)(void *base, size_t size, void *context,
                                            void **registration);

/* Called once per slab when the free list is destructed, with what the
 * register hook returned for it. */
typedef void (*opal_free_list_deregister_fn_t)(void *base, size_t size, void *context,
                                               void *registration);

typedef struct opal_free_list_t {
    /* The free items. */
    opal_lifo_t super;
    /* Items allocated so far, and the limit (SIZE_MAX when unlimited).
     * Written under fl_lock (or by the single thread of the _st path). */
    opal_atomic_size_t fl_num_allocated;
    size_t fl_max_to_alloc;
    size_t fl_num_per_alloc;
    /* Threads sleeping in opal_free_list_wait (see opal_free_list_return_mt). */
    opal_atomic_size_t fl_num_waiting;
    opal_class_t *fl_item_class;
    /* Distance between items / payloads in their slabs (the sizes rounded
     * up to the alignments), and the alignments. */
    size_t fl_item_stride;
    size_t fl_item_alignment;
    size_t fl_payload_stride;
    size_t fl_payload_alignment;
    opal_free_list_register_fn_t fl_register;
    opal_free_list_deregister_fn_t fl_deregister;
    void *fl_context;
    /* The slabs, oldest first (private to opal_free_list.c). */
    opal_list_t fl_slabs;
    /* Serialises growth; with fl_condition, lets waiters sleep. */
    opal_mutex_t fl_lock;
    opal_condition_t fl_condition;
} opal_free_list_t;
OBJ_CLASS_DECLARATION(opal_free_list_t);

/*
 * Sets up a constructed free list and allocates num_initial items.
 *
 *   item_size          bytes per item; 0 means item_class's size. Must be
 *                      at least the class size.
 *   item_alignment     power of two (0: default); items are aligned to at
 *                      least alignof(max_align_t).
 *   item_class         opal_free_list_item_t or a class derived from it.
 *   payload_size       bytes of payload per item (0: no payloads).
 *   payload_alignment  power of two (0: default), at least sizeof(void *).
 *   num_initial        items allocated now (one slab).
 *   max                the most items ever allocated (0: unlimited).
 *   increment          items per slab when the list grows (> 0).
 *   reg_fn, dereg_fn   optional slab hooks (dereg_fn needs reg_fn); context
 *                      is passed to both.
 *
 * Returns OPAL_SUCCESS; OPAL_ERR_BAD_PARAM for a bad parameter (or a list
 * already initialised); the error of the first growth otherwise (the list
 * is then usable but empty, and must still be destructed).
 */
OPAL_DECLSPEC int opal_free_list_init(opal_free_list_t *fl, size_t item_size, size_t item_alignment,
                                      opal_class_t *item_class, size_t payload_size,
                                      size_t payload_alignment, size_t num_initial, size_t max,
                                      size_t increment, opal_free_list_register_fn_t reg_fn,
                                      opal_free_list_deregister_fn_t dereg_fn, void *context);

/* Adds one slab of up to count (> 0) items, fewer near the maximum.
 * Thread-safe. Returns OPAL_SUCCESS, OPAL_ERR_TEMP_OUT_OF_RESOURCE at the
 * maximum, OPAL_ERR_OUT_OF_RESOURCE when memory runs out, the register
 * hook's error, or OPAL_ERR_BAD_PARAM (count 0, list not initialised); on
 * error nothing was added. */
OPAL_DECLSPEC int opal_free_list_grow(opal_free_list_t *fl, size_t count);

/* Slow paths of get when the lifo is empty: grow by the increment and
 * return one of the new items, or NULL at the maximum or on failure. The
 * _mt one takes fl_lock. Called by the inline functions below. */
OPAL_DECLSPEC opal_free_list_item_t *opal_free_list_get_grow_st(opal_free_list_t *fl);
OPAL_DECLSPEC opal_free_list_item_t *opal_free_list_get_grow_mt(opal_free_list_t *fl);

/* Wakes one thread sleeping in opal_free_list_wait (called by return). */
OPAL_DECLSPEC void opal_free_list_wake(opal_free_list_t *fl);

/* Sleeps until an item is returned or OPAL_FREE_LIST_SLEEP_NS passes,
 * unless the list has an item already (the wait loop's blocking step). */
OPAL_DECLSPEC void opal_free_list_sleep(opal_free_list_t *fl);

/* How long a waiting thread sleeps before driving progress again. */
#define OPAL_FREE_LIST_SLEEP_NS 1000000u

/* Items allocated so far (all of them, out or free). */
static inline size_t opal_free_list_num_allocated(opal_free_list_t *fl)
{
    return atomic_load_explicit(&fl->fl_num_allocated, memory_order_relaxed);
}

/* Takes a free item, growing the list when it is empty. Returns NULL when
 * the maximum is reached and every item is out (or growth failed). The
 * caller owns the item until it returns it. One thread only. */
static inline opal_free_list_item_t *opal_free_list_get_st(opal_free_list_t *fl)
{
    opal_free_list_item_t *item = (opal_free_list_item_t *) opal_lifo_pop_st(&fl->super);
    if (OPAL_UNLIKELY(NULL == item)) {
        item = opal_free_list_get_grow_st(fl);
    }
    return item;
}

/* The same, thread-safe. */
static inline opal_free_list_item_t *opal_free_list_get_mt(opal_free_list_t *fl)
{
    opal_free_list_item_t *item = (opal_free_list_item_t *) opal_lifo_pop(&fl->super);
    if (OPAL_UNLIKELY(NULL == item)) {
        item = opal_free_list_get_grow_mt(fl);
    }
    return item;
}

/* The same, thread-safe when opal_using_threads(). */
static inline opal_free_list_item_t *opal_free_list_get(opal_free_list_t *fl)
{
    return opal_using_threads() ? opal_free_list_get_mt(fl) : opal_free_list_get_st(fl);
}

/* Gives an item back (it must have come from this list). One thread only. */
static inline void opal_free_list_return_st(opal_free_list_t *fl, opal_free_list_item_t *item)
{
    opal_lifo_push_st(&fl->super, &item->super);
}

/* The same, thread-safe; wakes a thread sleeping in opal_free_list_wait.
 * The push is sequentially consistent (see opal_lifo_push) and so is the
 * read of fl_num_waiting; the sleeper increments fl_num_waiting and then
 * looks at the lifo, both sequentially consistent: either it sees this
 * item or this thread sees it waiting, so no wake-up is lost. */
static inline void opal_free_list_return_mt(opal_free_list_t *fl, opal_free_list_item_t *item)
{
    opal_lifo_push(&fl->super, &item->super);
    if (OPAL_UNLIKELY(0 < atomic_load_explicit(&fl->fl_num_waiting, memory_order_seq_cst))) {
        opal_free_list_wake(fl);
    }
}

/* The same, thread-safe when opal_using_threads(). */
static inline void opal_free_list_return(opal_free_list_t *fl, opal_free_list_item_t *item)
{
    if (opal_using_threads()) {
        opal_free_list_return_mt(fl, item);
    } else {
        opal_free_list_return_st(fl, item);
    }
}

/*
 * Takes a free item, waiting for one to come back when the list is at its
 * maximum. Never returns NULL. Items come back from completions, so the
 * wait drives opal_progress(); with threads, when progress found nothing
 * to do, it sleeps until another thread returns an item (at most
 * OPAL_FREE_LIST_SLEEP_NS before progressing again). A single-threaded
 * program whose progress never returns an item waits forever.
 */
static inline opal_free_list_item_t *opal_free_list_wait(opal_free_list_t *fl)
{
    opal_free_list_item_t *item;
    if (!opal_using_threads()) {
        while (NULL == (item = opal_free_list_get_st(fl))) {
            (void) opal_progress();
        }
        return item;
    }
    while (NULL == (item = opal_free_list_get_mt(fl))) {
        if (0 == opal_progress()) {
            opal_free_list_sleep(fl);
        }
    }
    return item;
}

#endif /* OPAL_CLASS_OPAL_FREE_LIST_H */
