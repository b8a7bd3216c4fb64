/*
 * Deadlines of a context's requests: a binary min-heap of entries embedded
 * in the requests, each knowing its slot so it leaves in O(log n) when its
 * request completes another way. Not thread-safe: the context's lock
 * guards it.
 */
#ifndef OPAL_MCA_RPC_BASE_RPC_BASE_TIMER_H
#define OPAL_MCA_RPC_BASE_RPC_BASE_TIMER_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OPAL_RPC_TIMER_NONE SIZE_MAX

typedef struct opal_rpc_timer_entry_t {
    uint64_t deadline_ns; /* opal_timer_ns() units */
    size_t slot;          /* OPAL_RPC_TIMER_NONE while not in a heap */
} opal_rpc_timer_entry_t;

typedef struct opal_rpc_timer_heap_t {
    opal_rpc_timer_entry_t **entries;
    size_t count;
    size_t capacity;
} opal_rpc_timer_heap_t;

OPAL_DECLSPEC void opal_rpc_timer_heap_init(opal_rpc_timer_heap_t *h);
OPAL_DECLSPEC void opal_rpc_timer_heap_fini(opal_rpc_timer_heap_t *h);
/* Adds e (not in a heap) with its deadline set: OPAL_SUCCESS or
 * OPAL_ERR_OUT_OF_RESOURCE. */
OPAL_DECLSPEC int opal_rpc_timer_heap_push(opal_rpc_timer_heap_t *h, opal_rpc_timer_entry_t *e);
/* Removes e if it is in h (true) or does nothing (false). */
OPAL_DECLSPEC bool opal_rpc_timer_heap_remove(opal_rpc_timer_heap_t *h, opal_rpc_timer_entry_t *e);
/* The earliest entry, or NULL. */
static inline opal_rpc_timer_entry_t *opal_rpc_timer_heap_top(const opal_rpc_timer_heap_t *h)
{
    return 0 == h->count ? NULL : h->entries[0];
}

#endif /* OPAL_MCA_RPC_BASE_RPC_BASE_TIMER_H */
