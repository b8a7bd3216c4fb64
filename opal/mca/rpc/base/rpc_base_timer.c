/*
 * Deadlines: a FIFO list in front of a binary min-heap (rpc_base_timer.h).
 */
#include "opal/opal_config.h"

#include <stdlib.h>

#include "opal/mca/rpc/base/rpc_base_timer.h"
#include "opal/util/opal_error.h"

void opal_rpc_timer_heap_init(opal_rpc_timer_heap_t *h)
{
    h->head = h->tail = NULL;
    h->entries = NULL;
    h->count = 0;
    h->capacity = 0;
}

void opal_rpc_timer_heap_fini(opal_rpc_timer_heap_t *h)
{
    for (size_t i = 0; i < h->count; ++i) {
        h->entries[i]->slot = OPAL_RPC_TIMER_NONE;
    }
    for (opal_rpc_timer_entry_t *e = h->head; NULL != e; e = e->next) {
        e->slot = OPAL_RPC_TIMER_NONE;
    }
    free(h->entries);
    opal_rpc_timer_heap_init(h);
}

static void place(opal_rpc_timer_heap_t *h, size_t i, opal_rpc_timer_entry_t *e)
{
    h->entries[i] = e;
    e->slot = i;
}

static void sift_up(opal_rpc_timer_heap_t *h, size_t i)
{
    opal_rpc_timer_entry_t *e = h->entries[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (h->entries[parent]->deadline_ns <= e->deadline_ns) {
            break;
        }
        place(h, i, h->entries[parent]);
        i = parent;
    }
    place(h, i, e);
}

static void sift_down(opal_rpc_timer_heap_t *h, size_t i)
{
    opal_rpc_timer_entry_t *e = h->entries[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= h->count) {
            break;
        }
        if (child + 1 < h->count &&
            h->entries[child + 1]->deadline_ns < h->entries[child]->deadline_ns) {
            ++child;
        }
        if (e->deadline_ns <= h->entries[child]->deadline_ns) {
            break;
        }
        place(h, i, h->entries[child]);
        i = child;
    }
    place(h, i, e);
}

int opal_rpc_timer_heap_push(opal_rpc_timer_heap_t *h, opal_rpc_timer_entry_t *e)
{
    if (NULL == h->tail || h->tail->deadline_ns <= e->deadline_ns) {
        e->prev = h->tail;
        e->next = NULL;
        if (NULL == h->tail) {
            h->head = e;
        } else {
            h->tail->next = e;
        }
        h->tail = e;
        e->slot = OPAL_RPC_TIMER_LIST;
        return OPAL_SUCCESS;
    }
    if (h->count == h->capacity) {
        size_t capacity = 0 == h->capacity ? 64 : 2 * h->capacity;
        opal_rpc_timer_entry_t **entries = realloc(h->entries, capacity * sizeof(*entries));
        if (NULL == entries) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        h->entries = entries;
        h->capacity = capacity;
    }
    h->entries[h->count] = e;
    e->slot = h->count++;
    sift_up(h, e->slot);
    return OPAL_SUCCESS;
}

bool opal_rpc_timer_heap_remove(opal_rpc_timer_heap_t *h, opal_rpc_timer_entry_t *e)
{
    if (OPAL_RPC_TIMER_LIST == e->slot) {
        if (NULL == e->prev ? h->head != e : e->prev->next != e) {
            return false; /* not in this list */
        }
        if (NULL == e->prev) {
            h->head = e->next;
        } else {
            e->prev->next = e->next;
        }
        if (NULL == e->next) {
            h->tail = e->prev;
        } else {
            e->next->prev = e->prev;
        }
        e->prev = e->next = NULL;
        e->slot = OPAL_RPC_TIMER_NONE;
        return true;
    }
    size_t i = e->slot;
    if (OPAL_RPC_TIMER_NONE == i || i >= h->count || h->entries[i] != e) {
        return false;
    }
    e->slot = OPAL_RPC_TIMER_NONE;
    opal_rpc_timer_entry_t *last = h->entries[--h->count];
    if (last != e) {
        place(h, i, last);
        /* The moved entry may belong above or below slot i. */
        sift_up(h, i);
        sift_down(h, last->slot);
    }
    return true;
}
