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

/* Timeouts from this many seconds on (the default rpc_base_timeout is
 * 60) are measured on the coarse clock (opal_timer_coarse_ns): sending a
 * request then reads no fine clock, which was 40 ns of a null RPC's
 * critical path in this project's VM. Their deadlines get the engine's
 * slack added, so that they do not expire early even when the coarse
 * clock lags by many ticks (6.8 ms against a 4 ms tick was seen here), at
 * the price of expiring up to that slack late: 0.1 s of 10 s or more.
 * Shorter timeouts keep the fine clock. */
#define OPAL_RPC_COARSE_MIN_S 10.0

/* The slack for a coarse clock with a tick of res_ns: 100 ms, or two ticks
 * if that is more. */
static inline uint64_t opal_rpc_coarse_slack_ns(uint64_t res_ns)
{
    return 2 * res_ns < 100000000u ? 100000000u : 2 * res_ns;
}

#define OPAL_RPC_TIMER_NONE SIZE_MAX
#define OPAL_RPC_TIMER_LIST (SIZE_MAX - 1)

typedef struct opal_rpc_timer_entry_t {
    uint64_t deadline_ns; /* opal_timer_ns() units (CLOCK_MONOTONIC) */
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
