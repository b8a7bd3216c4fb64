/*
 * opal_lifo_t: a lock-free, ABA-safe stack of opal_list_item_t.
 *
 * Items are linked through opal_list_next. An item is in at most one
 * container at a time; the lifo does not retain or release its items, and
 * destructing a lifo that still holds items leaves them alone.
 *
 *   opal_lifo_push(&lifo, &item->super);          thread-safe
 *   item = (my_item_t *) opal_lifo_pop(&lifo);    thread-safe, NULL when empty
 *   opal_lifo_push_st / opal_lifo_pop_st          one thread only, no atomics
 *
 * How it stays correct (Treiber's stack with a counted head):
 *
 * - The head is a {top item, pop counter} pair updated as one 128-bit
 *   value. Push needs only a pointer compare-and-swap on the top half: it
 *   links item->next = top and installs item if top is still the top. Even
 *   if top left and came back in between (ABA), top *is* the current top
 *   when the swap succeeds, so linking the new item above it is right.
 *
 * - Pop reads {top, n}, then next = top->next, and swaps {top, n} for
 *   {next, n + 1}. The danger is ABA: between the reads and the swap, top
 *   is popped, other items come and go, and top is pushed back with a
 *   different next. Every pop increments the counter, and top can only
 *   leave the stack by a pop, so a successful swap on {top, n} proves no
 *   pop happened in between: top stayed on the stack the whole time and
 *   its next (written before it was pushed) was stable.
 *
 * - The two halves are read separately (relaxed would tear harmlessly, but
 *   the counter is read with acquire *before* the top): with that order, if
 *   the swap succeeds on counter n, the counter was n from before the top
 *   was read until the swap, so only pushes happened in that window, and a
 *   push never makes an item the top again without a pop. Hence the next
 *   we read belongs to the top we swap out. Reading the top first would let
 *   a weakly ordered CPU read top->next from an older life of the item.
 *
 * - Memory order: push swaps with release so that whoever pops the item
 *   sees everything written to it before the push (pairs with the acquire
 *   load of the top and the acquire of the pop's 128-bit swap); it is in
 *   fact sequentially consistent, for the free list's waiter handshake. A
 *   failed pop swap returns the current pair atomically, so the retry
 *   needs no further reads.
 *
 * - Under ThreadSanitizer the 128-bit swap is emulated under a lock inside
 *   the sanitizer, which a 64-bit swap on one half would bypass, so there
 *   push swaps the whole pair too (keeping the counter).
 *
 * - Reading top->next races with the owner of an item popped in between
 *   pushing it elsewhere (which writes next). The value is discarded when
 *   the swap fails, and all accesses to opal_list_next made by the lifo and
 *   fifo are atomic, so ThreadSanitizer sees no race. The cost of this: an
 *   item's memory must stay readable while other threads may still pop
 *   from a container it was in (items are type-stable, as in a free list),
 *   and a popped item must not be linked into an opal_list_t while other
 *   threads pop concurrently from the lifo it came from if the program is
 *   checked with ThreadSanitizer (opal_list writes next non-atomically).
 *
 * Without a 128-bit compare-and-swap (OPAL_HAVE_ATOMIC_CAS_128 == 0, or
 * configure --disable-cas128), push is unchanged and pop runs under a
 * mutex: with one popper at a time no item can leave and come back during
 * a pop, so the counter is not needed.
 */
#ifndef OPAL_CLASS_OPAL_LIFO_H
#define OPAL_CLASS_OPAL_LIFO_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/class/opal_list.h"
#include "opal/class/opal_object.h"
#include "opal/threads/opal_atomic.h"
#include "opal/threads/opal_mutex.h"

/* A pointer and a counter that change together (the head of a lifo or
 * fifo). The halves are atomic 64-bit values so they can be read one at a
 * time without a data race; the 128-bit view is only ever compared and
 * swapped. */
typedef union opal_counted_pointer_t {
    struct {
        _Atomic(opal_list_item_t *) item;
        opal_atomic_uint64_t counter;
    } data;
#if OPAL_HAVE_ATOMIC_CAS_128
    opal_int128_t value;
#endif
} opal_counted_pointer_t;

#if OPAL_HAVE_ATOMIC_CAS_128
_Static_assert(sizeof(void *) == 8 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "opal_counted_pointer_t packs a 64-bit pointer in the low half");
_Static_assert(sizeof(opal_counted_pointer_t) == 16, "the counted pointer is one 128-bit value");

static inline opal_int128_t opal_counted_pointer_pack(opal_list_item_t *item, uint64_t counter)
{
    return ((opal_int128_t) counter << 64) | (opal_int128_t) (uintptr_t) item;
}

static inline opal_list_item_t *opal_counted_pointer_item(opal_int128_t value)
{
    return (opal_list_item_t *) (uintptr_t) (uint64_t) value;
}

static inline uint64_t opal_counted_pointer_counter(opal_int128_t value)
{
    return (uint64_t) (value >> 64);
}
#endif

/* The link of an item, read and written atomically: a concurrent pop may
 * read the link of an item that its owner is pushing elsewhere. */
static inline opal_list_item_t *opal_lifo_link_load(opal_list_item_t *item, int order)
{
    return __atomic_load_n(&item->opal_list_next, order);
}

static inline void opal_lifo_link_store(opal_list_item_t *item, opal_list_item_t *next, int order)
{
    __atomic_store_n(&item->opal_list_next, next, order);
}

typedef struct opal_lifo_t {
    opal_object_t super;
    /* top == NULL when empty. */
    opal_counted_pointer_t opal_lifo_head;
#if !OPAL_HAVE_ATOMIC_CAS_128
    /* Serialises pops (see the header comment). */
    opal_mutex_t opal_lifo_pop_lock;
#endif
} opal_lifo_t;
OBJ_CLASS_DECLARATION(opal_lifo_t);

/* True when the lifo holds no item (a snapshot: may be stale at once when
 * other threads push or pop). */
static inline bool opal_lifo_is_empty(opal_lifo_t *lifo)
{
    return NULL == atomic_load_explicit(&lifo->opal_lifo_head.data.item, memory_order_relaxed);
}

/* Pushes item (thread-safe, lock-free, sequentially consistent). Returns
 * the previous top, NULL when the lifo was empty. */
static inline opal_list_item_t *opal_lifo_push(opal_lifo_t *lifo, opal_list_item_t *item)
{
    OPAL_OBJ_CHECK_LIVE(item, "opal_lifo_push");
    opal_counted_pointer_t *head = &lifo->opal_lifo_head;
#if OPAL_HAVE_ATOMIC_CAS_128 && defined(OPAL_ATOMIC_TSAN)
    /* ThreadSanitizer emulates the 128-bit swap under its own lock, which a
     * plain 64-bit swap on one half would bypass; swap both halves here. */
    opal_int128_t expected =
        opal_counted_pointer_pack(atomic_load_explicit(&head->data.item, memory_order_relaxed),
                                  atomic_load_explicit(&head->data.counter, memory_order_relaxed));
    opal_list_item_t *top;
    do {
        top = opal_counted_pointer_item(expected);
        opal_lifo_link_store(item, top, __ATOMIC_RELAXED);
    } while (!opal_atomic_compare_exchange_strong_128(
        &head->value, &expected,
        opal_counted_pointer_pack(item, opal_counted_pointer_counter(expected))));
    return top;
#else
    opal_list_item_t *top = atomic_load_explicit(&head->data.item, memory_order_relaxed);
    do {
        opal_lifo_link_store(item, top, __ATOMIC_RELAXED);
        /* Release publishes item->next and the item's contents to the
         * popper's acquire. Sequentially consistent rather than release
         * because opal_free_list_return_mt pairs this store with a waiter's
         * load (a store-load order); on x86 the locked instruction is the
         * same, elsewhere the difference is small. On failure top receives
         * the current top. */
    } while (!atomic_compare_exchange_weak_explicit(&head->data.item, &top, item,
                                                    memory_order_seq_cst, memory_order_relaxed));
    return top;
#endif
}

/* Pops the top item (thread-safe; lock-free with a 128-bit swap, under a
 * mutex without). Returns NULL when the lifo is empty. */
static inline opal_list_item_t *opal_lifo_pop(opal_lifo_t *lifo)
{
    opal_counted_pointer_t *head = &lifo->opal_lifo_head;
#if OPAL_HAVE_ATOMIC_CAS_128
    /* Counter first, with acquire, then the top: see the header comment. */
    uint64_t counter = atomic_load_explicit(&head->data.counter, memory_order_acquire);
    opal_list_item_t *item = atomic_load_explicit(&head->data.item, memory_order_acquire);
    while (NULL != item) {
        opal_list_item_t *next = opal_lifo_link_load(item, __ATOMIC_RELAXED);
        opal_int128_t expected = opal_counted_pointer_pack(item, counter);
        if (opal_atomic_compare_exchange_strong_128(&head->value, &expected,
                                                    opal_counted_pointer_pack(next, counter + 1))) {
            break;
        }
        item = opal_counted_pointer_item(expected);
        counter = opal_counted_pointer_counter(expected);
    }
    return item;
#else
    opal_mutex_lock(&lifo->opal_lifo_pop_lock);
    /* Acquire pairs with the pusher's release. Only pushes run beside us,
     * and they change the top only by swapping, so one swap settles it. */
    opal_list_item_t *item = atomic_load_explicit(&head->data.item, memory_order_acquire);
    while (NULL != item) {
        opal_list_item_t *next = opal_lifo_link_load(item, __ATOMIC_RELAXED);
        if (atomic_compare_exchange_weak_explicit(&head->data.item, &item, next,
                                                  memory_order_acquire, memory_order_acquire)) {
            break;
        }
    }
    opal_mutex_unlock(&lifo->opal_lifo_pop_lock);
    return item;
#endif
}

/* Single-threaded push: no atomic read-modify-write, for a lifo that only
 * one thread touches (the free list's fast path without threads). Returns
 * the previous top. */
static inline opal_list_item_t *opal_lifo_push_st(opal_lifo_t *lifo, opal_list_item_t *item)
{
    OPAL_OBJ_CHECK_LIVE(item, "opal_lifo_push_st");
    opal_counted_pointer_t *head = &lifo->opal_lifo_head;
    opal_list_item_t *top = atomic_load_explicit(&head->data.item, memory_order_relaxed);
    item->opal_list_next = top;
    atomic_store_explicit(&head->data.item, item, memory_order_relaxed);
    return top;
}

/* Single-threaded pop; NULL when empty. */
static inline opal_list_item_t *opal_lifo_pop_st(opal_lifo_t *lifo)
{
    opal_counted_pointer_t *head = &lifo->opal_lifo_head;
    opal_list_item_t *item = atomic_load_explicit(&head->data.item, memory_order_relaxed);
    if (NULL != item) {
        atomic_store_explicit(&head->data.item, item->opal_list_next, memory_order_relaxed);
    }
    return item;
}

#endif /* OPAL_CLASS_OPAL_LIFO_H */
