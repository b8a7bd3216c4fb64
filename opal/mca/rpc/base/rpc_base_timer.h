/*
 * Deadlines of a context's requests, in entries embedded in the requests.
 * Requests mostly share one timeout, so their deadlines mostly come in
 * order: such an entry joins a FIFO list (in and out in O(1), touching
 * only its neighbours). One earlier than the list's last goes to a binary
 * min-heap, where it knows its slot so it leaves in O(log n) when its
 * request completes another way. The earliest deadline is the list's head
 * or the heap's top. Not thread-safe: the context's lock guards it.
 */
#ifndef OPAL_MCA_RPC_BASE_RPC_BASE_TIMER_H
#define OPAL_MCA_RPC_BASE_RPC_BASE_TIMER_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OPAL_RPC_TIMER_NONE SIZE_MAX
#define OPAL_RPC_TIMER_LIST (SIZE_MAX - 1)

typedef struct opal_rpc_timer_entry_t {
    uint64_t deadline_ns; /* opal_timer_ns() units */
    /* OPAL_RPC_TIMER_NONE while in neither, OPAL_RPC_TIMER_LIST in the
     * list, else the heap slot. */
    size_t slot;
    struct opal_rpc_timer_entry_t *prev, *next; /* in the list */
} opal_rpc_timer_entry_t;

typedef struct opal_rpc_timer_heap_t {
    opal_rpc_timer_entry_t *head, *tail; /* the list, earliest first */
    opal_rpc_timer_entry_t **entries;    /* the heap */
    size_t count;
    size_t capacity;
} opal_rpc_timer_heap_t;

OPAL_DECLSPEC void opal_rpc_timer_heap_init(opal_rpc_timer_heap_t *h);
OPAL_DECLSPEC void opal_rpc_timer_heap_fini(opal_rpc_timer_heap_t *h);
/* Adds e (in neither) with its deadline set: OPAL_SUCCESS or
 * OPAL_ERR_OUT_OF_RESOURCE. */
OPAL_DECLSPEC int opal_rpc_timer_heap_push(opal_rpc_timer_heap_t *h, opal_rpc_timer_entry_t *e);
/* Removes e if it is in h (true) or does nothing (false). */
OPAL_DECLSPEC bool opal_rpc_timer_heap_remove(opal_rpc_timer_heap_t *h, opal_rpc_timer_entry_t *e);
/* The earliest entry, or NULL. */
static inline opal_rpc_timer_entry_t *opal_rpc_timer_heap_top(const opal_rpc_timer_heap_t *h)
{
    opal_rpc_timer_entry_t *top = 0 == h->count ? NULL : h->entries[0];
    if (NULL == top || (NULL != h->head && h->head->deadline_ns <= top->deadline_ns)) {
        return h->head;
    }
    return top;
}

#endif /* OPAL_MCA_RPC_BASE_RPC_BASE_TIMER_H */
