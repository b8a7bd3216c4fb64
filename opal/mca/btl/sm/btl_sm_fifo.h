/*
 * btl/sm's receive FIFO: a bounded, lock-free, multi-producer
 * single-consumer queue of 40-bit values in the receiver's segment.
 *
 * Each slot is one 64-bit word: the position it is ready for (low 24
 * bits of it) in the top 24 bits, the value in the low 40 (0: empty).
 * Slot i starts ready for position i. A producer fills position p with a
 * single compare-and-swap of slot p % n from "empty, ready for p" to
 * "p, value", then moves the shared tail from p to p + 1 (any producer
 * that finds slot p filled helps move it). Publishing is that one CAS, so
 * a producer that dies at any instant leaves either nothing or a
 * complete entry behind, never a hole the consumer would wait on forever.
 * The consumer keeps its head privately; it takes slot head % n when it
 * holds "head, value" and frees it as "empty, ready for head + n".
 *
 * Producers and the consumer touch only the slots and the tail; both are
 * in shared memory a faulty peer may scribble on. Nothing here reads or
 * writes outside the slot array whatever the words hold; a scribbled
 * slot or tail can only make pushes fail as full or pops return a bad
 * value, which the caller checks (sm_fifo_check finds and skips a slot
 * that can never become ready).
 */
#ifndef OPAL_MCA_BTL_SM_BTL_SM_FIFO_H
#define OPAL_MCA_BTL_SM_BTL_SM_FIFO_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stdint.h>

#include "opal/threads/opal_atomic.h"
#include "opal/util/opal_error.h"

#define SM_FIFO_SEQ_SHIFT  40
#define SM_FIFO_SEQ_MASK   ((UINT64_C(1) << 24) - 1)
#define SM_FIFO_VALUE_MASK ((UINT64_C(1) << SM_FIFO_SEQ_SHIFT) - 1)
/* Positions are compared modulo 2^24: a ring must be smaller than half. */
#define SM_FIFO_MAX_SLOTS (UINT32_C(1) << 22)
/* A push gives up (busy) after this many tries under contention or when
 * the tail is nonsense. */
#define SM_FIFO_PUSH_TRIES 64

/* One process's view of a FIFO (the consumer's or a producer's). */
typedef struct sm_fifo_t {
    opal_atomic_uint64_t *slots;
    opal_atomic_uint64_t *tail;
    uint64_t mask; /* slots - 1 */
    /* The consumer's next position (unused by producers). */
    uint64_t head;
} sm_fifo_t;

static inline uint64_t sm_fifo_slot_word(uint64_t position, uint64_t value)
{
    return ((position & SM_FIFO_SEQ_MASK) << SM_FIFO_SEQ_SHIFT) | value;
}

/* How far the slot's position is ahead of position, modulo 2^24 as a
 * signed number: 0 ready for it, < 0 still a lap behind (full). */
static inline int32_t sm_fifo_seq_diff(uint64_t word, uint64_t position)
{
    uint32_t d = (uint32_t) ((word >> SM_FIFO_SEQ_SHIFT) - (position & SM_FIFO_SEQ_MASK));
    return (int32_t) (d << 8) >> 8;
}

/* Writes an empty FIFO of nslots (a power of two, at most
 * SM_FIFO_MAX_SLOTS) into slots and tail; done by the owner before any
 * peer can see the segment. */
void mca_btl_sm_fifo_format(opal_atomic_uint64_t *slots, opal_atomic_uint64_t *tail,
                            uint32_t nslots);

/* Sets up a view of a formatted FIFO (head 0). */
static inline void sm_fifo_attach(sm_fifo_t *fifo, opal_atomic_uint64_t *slots,
                                  opal_atomic_uint64_t *tail, uint32_t nslots)
{
    fifo->slots = slots;
    fifo->tail = tail;
    fifo->mask = nslots - 1;
    fifo->head = 0;
}

/* Appends value (1 .. SM_FIFO_VALUE_MASK). OPAL_SUCCESS, or
 * OPAL_ERR_RESOURCE_BUSY when the FIFO is full (or too contended, or its
 * tail is scribbled). Release: what the producer wrote before the push is
 * visible to the consumer that pops the value. */
static inline int sm_fifo_push(sm_fifo_t *fifo, uint64_t value)
{
    for (int tries = 0; tries < SM_FIFO_PUSH_TRIES; ++tries) {
        /* Relaxed: the tail is only a hint of where to try; the slot's
         * CAS decides. */
        uint64_t pos = atomic_load_explicit(fifo->tail, memory_order_relaxed);
        opal_atomic_uint64_t *slot = &fifo->slots[pos & fifo->mask];
        uint64_t word = atomic_load_explicit(slot, memory_order_relaxed);
        int32_t diff = sm_fifo_seq_diff(word, pos);
        if (OPAL_LIKELY(0 == diff)) {
            if (0 == (word & SM_FIFO_VALUE_MASK)) {
                /* Release pairs with the consumer's acquire load of the
                 * slot: the fragment written before is visible there. */
                if (atomic_compare_exchange_strong_explicit(
                        slot, &word, sm_fifo_slot_word(pos, value), memory_order_release,
                        memory_order_relaxed)) {
                    uint64_t expected = pos;
                    /* Release pairs with sm_fifo_check's acquire load of
                     * the tail: a tail past p means slot p is filled. */
                    atomic_compare_exchange_strong_explicit(
                        fifo->tail, &expected, pos + 1, memory_order_release, memory_order_relaxed);
                    return OPAL_SUCCESS;
                }
                continue;
            }
            /* Filled by a producer that has not moved the tail yet. */
            uint64_t expected = pos;
            atomic_compare_exchange_strong_explicit(fifo->tail, &expected, pos + 1,
                                                    memory_order_release, memory_order_relaxed);
        } else if (diff < 0) {
            /* The slot still holds the entry one lap back: full. */
            return OPAL_ERR_RESOURCE_BUSY;
        }
        /* diff > 0: the tail we read is stale; read it again. */
    }
    return OPAL_ERR_RESOURCE_BUSY;
}

/* Takes the next value; false when the FIFO is empty. Acquire: what its
 * producer wrote before pushing is visible. Consumer only. */
static inline bool sm_fifo_pop(sm_fifo_t *fifo, uint64_t *value)
{
    opal_atomic_uint64_t *slot = &fifo->slots[fifo->head & fifo->mask];
    /* Acquire pairs with the producer's release CAS. */
    uint64_t word = atomic_load_explicit(slot, memory_order_acquire);
    if (sm_fifo_slot_word(fifo->head, 0) != (word & ~SM_FIFO_VALUE_MASK) ||
        0 == (word & SM_FIFO_VALUE_MASK)) {
        return false;
    }
    *value = word & SM_FIFO_VALUE_MASK;
    /* Relaxed: the value was copied out; the slot's memory holds nothing
     * else the producer could overwrite. */
    atomic_store_explicit(slot, sm_fifo_slot_word(fifo->head + fifo->mask + 1, 0),
                          memory_order_relaxed);
    ++fifo->head;
    return true;
}

/* The consumer's slow-path repair, for a FIFO that looks empty: returns
 * the number of slots it had to skip (a scribbled slot the tail has
 * passed, which no producer will ever fill) and sets *tail_reset when the
 * tail was nonsense and was put back at the head. Consumer only. */
uint32_t mca_btl_sm_fifo_check(sm_fifo_t *fifo, bool *tail_reset);

#endif /* OPAL_MCA_BTL_SM_BTL_SM_FIFO_H */
