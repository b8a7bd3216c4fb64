/* Fuzz target: btl/sm's receive FIFO when a peer scribbled on its slots
 * and tail (shared memory). The first byte picks the number of slots (2 to
 * 256); then the tail word, then the slots. The consumer pops, repairs
 * (sm_fifo_check) and pops again, a producer pushes: nothing may touch
 * memory outside the slots, loop forever, or pop an empty value. */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/sm/btl_sm_fifo.h"
#include "test/fuzz/fuzz.h"

static void drain(sm_fifo_t *fifo, uint32_t nslots)
{
    uint64_t value;
    for (uint32_t n = 0; n < 2 * nslots && sm_fifo_pop(fifo, &value); ++n) {
        if (0 == value || value > SM_FIFO_VALUE_MASK) {
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 + sizeof(uint64_t)) {
        return 0;
    }
    uint32_t nslots = UINT32_C(2) << (data[0] % 8);
    opal_atomic_uint64_t *slots = calloc(nslots, sizeof(*slots));
    opal_atomic_uint64_t *tail = malloc(sizeof(*tail));
    if (NULL == slots || NULL == tail) {
        free(slots);
        free(tail);
        return 0;
    }
    mca_btl_sm_fifo_format(slots, tail, nslots);
    uint64_t word;
    memcpy(&word, data + 1, sizeof(word));
    atomic_store(tail, word);
    const uint8_t *rest = data + 1 + sizeof(word);
    size_t left = size - 1 - sizeof(word);
    for (uint32_t i = 0; i < nslots && left >= sizeof(word); ++i) {
        memcpy(&word, rest, sizeof(word));
        atomic_store(&slots[i], word);
        rest += sizeof(word);
        left -= sizeof(word);
    }
    sm_fifo_t consumer, producer;
    sm_fifo_attach(&consumer, slots, tail, nslots);
    sm_fifo_attach(&producer, slots, tail, nslots);
    drain(&consumer, nslots);
    bool tail_reset = false;
    uint32_t skipped = mca_btl_sm_fifo_check(&consumer, &tail_reset);
    if (skipped > nslots) {
        abort();
    }
    drain(&consumer, nslots);
    for (uint32_t i = 0; i < nslots + 2; ++i) {
        (void) sm_fifo_push(&producer, i + 1);
    }
    drain(&consumer, nslots);
    free(slots);
    free(tail);
    return 0;
}
