/*
 * opal_fifo_t: a first-in first-out queue of opal_list_item_t, safe for
 * many producers and many consumers, ABA-safe.
 *
 * Items are linked through opal_list_next. An item is in at most one
 * container at a time; the fifo does not retain or release its items.
 *
 *   opal_fifo_push(&fifo, &item->super);        thread-safe
 *   item = (my_item_t *) opal_fifo_pop(&fifo);  thread-safe, NULL when empty
 *   opal_fifo_push_st / opal_fifo_pop_st        one thread only, no atomics
 *
 * How it stays correct:
 *
 * - Producers own the tail. A push sets item->next = NULL, exchanges the
 *   tail for item and then links the previous tail to item, or, when the
 *   previous tail was NULL (the fifo was empty), stores item as the head.
 *   Push never loops: the exchange orders producers. Between the exchange
 *   and the link the item is not yet reachable; consumers see the queue
 *   end at the previous tail until the link is written.
 *
 * - Consumers own the head, a {first item, pop counter} pair. A pop reads
 *   {first, n} (counter first, as in opal_lifo.h), reads next = first->next
 *   and swaps {first, n} for {next, n + 1} in one 128-bit compare-and-swap.
 *   Every pop bumps the counter, so the swap succeeds only if no other pop
 *   happened in between, and first cannot have left and come back (ABA).
 *
 * - The head's pointer half is also written by plain stores, but only while
 *   it is NULL (the fifo empty or being fixed up, see below) and at most
 *   once per counter value. No consumer swaps on a NULL head, so a store
 *   never races with a successful swap, and within one counter value the
 *   head changes at most from NULL to an item: the argument above holds.
 *
 * - When next is NULL the consumer swaps the head to {NULL, n + 1}, taking
 *   the last item, and then swaps the tail from that item to NULL. If that
 *   fails, a producer has already exchanged the tail and is about to link
 *   item->next: the consumer waits for the link and stores it as the head
 *   (opal_fifo_pop_finish). While it waits, other consumers see the fifo
 *   empty; a producer stalled between its two steps delays the queue
 *   behind it (the same trade-off as Open MPI's fifo).
 *
 * - Memory order: the tail exchange is acq_rel, so a producer's link store
 *   is ordered after the previous producer's item->next = NULL. Link and
 *   head stores are release, paired with the consumers' acquire loads of
 *   the head and of next, so a popped item's contents are visible to the
 *   consumer that pops it. The consumer's tail swap is acq_rel: it orders
 *   the head = NULL before the tail = NULL that lets a producer store the
 *   head again.
 *
 * Items must stay readable while other threads may still pop (see
 * opal_lifo.h). Without a 128-bit compare-and-swap (OPAL_HAVE_ATOMIC_CAS_128
 * == 0, configure --disable-cas128) push is unchanged and pops run one at a
 * time under a mutex, which makes the counter unnecessary.
 */
#ifndef OPAL_CLASS_OPAL_FIFO_H
#define OPAL_CLASS_OPAL_FIFO_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>

#include "opal/class/opal_lifo.h"
#include "opal/class/opal_list.h"
#include "opal/class/opal_object.h"
#include "opal/threads/opal_atomic.h"
#include "opal/threads/opal_mutex.h"

typedef struct opal_fifo_t {
    opal_object_t super;
    /* Consumers' side: the oldest linked item (NULL when empty). */
    opal_counted_pointer_t opal_fifo_head;
    /* Keeps the producers' tail off the consumers' cache line. */
    char opal_fifo_pad[OPAL_CACHE_LINE_SIZE - sizeof(opal_counted_pointer_t)];
    /* Producers' side: the newest item (NULL when empty). */
    _Atomic(opal_list_item_t *) opal_fifo_tail;
#if !OPAL_HAVE_ATOMIC_CAS_128
    opal_mutex_t opal_fifo_pop_lock;
#endif
} opal_fifo_t;
OBJ_CLASS_DECLARATION(opal_fifo_t);

/* True when no item can be popped now (a snapshot; it is also true for a
 * moment while a pop of the last item waits for a concurrent push). */
static inline bool opal_fifo_is_empty(opal_fifo_t *fifo)
{
    return NULL == atomic_load_explicit(&fifo->opal_fifo_head.data.item, memory_order_relaxed);
}

/* Completes the pop of the last linked item when a push raced with it:
 * waits for the producer's link and makes it the head. */
OPAL_DECLSPEC void opal_fifo_pop_finish(opal_fifo_t *fifo, opal_list_item_t *item);

/* Appends item (thread-safe, wait-free). Returns the previous tail, NULL
 * when the fifo was empty. */
static inline opal_list_item_t *opal_fifo_push(opal_fifo_t *fifo, opal_list_item_t *item)
{
    OPAL_OBJ_CHECK_LIVE(item, "opal_fifo_push");
    opal_lifo_link_store(item, NULL, __ATOMIC_RELAXED);
    opal_list_item_t *prev =
        atomic_exchange_explicit(&fifo->opal_fifo_tail, item, memory_order_acq_rel);
    if (NULL == prev) {
        /* The fifo was empty: the head is NULL and no one else writes it
         * until this store (pairs with the consumers' acquire). */
        atomic_store_explicit(&fifo->opal_fifo_head.data.item, item, memory_order_release);
    } else {
        /* prev cannot be handed out before this link exists: a consumer
         * that takes it as the last item waits for this store. */
        opal_lifo_link_store(prev, item, __ATOMIC_RELEASE);
    }
    return prev;
}

/* Removes the oldest item (thread-safe; lock-free with a 128-bit swap,
 * under a mutex without). Returns NULL when the fifo is empty. */
static inline opal_list_item_t *opal_fifo_pop(opal_fifo_t *fifo)
{
    opal_counted_pointer_t *head = &fifo->opal_fifo_head;
    opal_list_item_t *next = NULL;
#if OPAL_HAVE_ATOMIC_CAS_128
    uint64_t counter = atomic_load_explicit(&head->data.counter, memory_order_acquire);
    opal_list_item_t *item = atomic_load_explicit(&head->data.item, memory_order_acquire);
    while (NULL != item) {
        next = opal_lifo_link_load(item, __ATOMIC_ACQUIRE);
        opal_int128_t expected = opal_counted_pointer_pack(item, counter);
        if (opal_atomic_compare_exchange_strong_128(&head->value, &expected,
                                                    opal_counted_pointer_pack(next, counter + 1))) {
            break;
        }
        item = opal_counted_pointer_item(expected);
        counter = opal_counted_pointer_counter(expected);
    }
#else
    opal_mutex_lock(&fifo->opal_fifo_pop_lock);
    /* With pops serialised, a non-NULL head changes only here: producers
     * store the head only while it is NULL. */
    opal_list_item_t *item = atomic_load_explicit(&head->data.item, memory_order_acquire);
    if (NULL != item) {
        next = opal_lifo_link_load(item, __ATOMIC_ACQUIRE);
        atomic_store_explicit(&head->data.item, next, memory_order_release);
    }
#endif
    if (NULL != item && NULL == next) {
        /* We took the last linked item; the head is NULL. Clear the tail
         * unless a producer has moved it past item already. */
        opal_list_item_t *last = item;
        if (!atomic_compare_exchange_strong_explicit(&fifo->opal_fifo_tail, &last, NULL,
                                                     memory_order_acq_rel, memory_order_acquire)) {
            opal_fifo_pop_finish(fifo, item);
        }
    }
#if !OPAL_HAVE_ATOMIC_CAS_128
    opal_mutex_unlock(&fifo->opal_fifo_pop_lock);
#endif
    return item;
}

/* Single-threaded append: no atomic read-modify-write. Returns the
 * previous tail. */
static inline opal_list_item_t *opal_fifo_push_st(opal_fifo_t *fifo, opal_list_item_t *item)
{
    OPAL_OBJ_CHECK_LIVE(item, "opal_fifo_push_st");
    item->opal_list_next = NULL;
    opal_list_item_t *prev = atomic_load_explicit(&fifo->opal_fifo_tail, memory_order_relaxed);
    atomic_store_explicit(&fifo->opal_fifo_tail, item, memory_order_relaxed);
    if (NULL == prev) {
        atomic_store_explicit(&fifo->opal_fifo_head.data.item, item, memory_order_relaxed);
    } else {
        prev->opal_list_next = item;
    }
    return prev;
}

/* Single-threaded pop; NULL when empty. */
static inline opal_list_item_t *opal_fifo_pop_st(opal_fifo_t *fifo)
{
    opal_list_item_t *item =
        atomic_load_explicit(&fifo->opal_fifo_head.data.item, memory_order_relaxed);
    if (NULL != item) {
        opal_list_item_t *next = item->opal_list_next;
        atomic_store_explicit(&fifo->opal_fifo_head.data.item, next, memory_order_relaxed);
        if (NULL == next) {
            atomic_store_explicit(&fifo->opal_fifo_tail, NULL, memory_order_relaxed);
        }
    }
    return item;
}

#endif /* OPAL_CLASS_OPAL_FIFO_H */
