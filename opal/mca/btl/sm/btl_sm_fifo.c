/*
 * btl/sm's receive FIFO: formatting and the consumer's repair path (the
 * fast paths are inline in btl_sm_fifo.h).
 */
#include "opal/opal_config.h"

#include "opal/mca/btl/sm/btl_sm_fifo.h"

void mca_btl_sm_fifo_format(opal_atomic_uint64_t *slots, opal_atomic_uint64_t *tail,
                            uint32_t nslots)
{
    for (uint32_t i = 0; i < nslots; ++i) {
        atomic_store_explicit(&slots[i], sm_fifo_slot_word(i, 0), memory_order_relaxed);
    }
    atomic_store_explicit(tail, 0, memory_order_relaxed);
}

uint32_t mca_btl_sm_fifo_check(sm_fifo_t *fifo, bool *tail_reset)
{
    uint32_t skipped = 0;
    *tail_reset = false;
    while (skipped <= fifo->mask) {
        /* Acquire pairs with the producers' release moves of the tail:
         * a tail past head means slot head was filled before. */
        uint64_t tail = atomic_load_explicit(fifo->tail, memory_order_acquire);
        uint64_t ahead = tail - fifo->head;
        if (0 == ahead) {
            break;
        }
        if (ahead > fifo->mask + 1) {
            /* Producers never fill more than a lap past the head: the
             * tail was scribbled. Back at the head, producers that find
             * filled slots move it on again. */
            atomic_compare_exchange_strong_explicit(fifo->tail, &tail, fifo->head,
                                                    memory_order_relaxed, memory_order_relaxed);
            *tail_reset = true;
            break;
        }
        opal_atomic_uint64_t *slot = &fifo->slots[fifo->head & fifo->mask];
        uint64_t word = atomic_load_explicit(slot, memory_order_acquire);
        if (sm_fifo_slot_word(fifo->head, 0) == (word & ~SM_FIFO_VALUE_MASK) &&
            0 != (word & SM_FIFO_VALUE_MASK)) {
            /* A real entry: the caller pops it. */
            break;
        }
        /* The tail passed a slot that does not hold its entry: it was
         * scribbled, and no producer will fill it now. A CAS, not a store:
         * a late producer may still fill it, and then it is kept. */
        if (atomic_compare_exchange_strong_explicit(
                slot, &word, sm_fifo_slot_word(fifo->head + fifo->mask + 1, 0),
                memory_order_relaxed, memory_order_relaxed)) {
            ++fifo->head;
            ++skipped;
        }
    }
    return skipped;
}
