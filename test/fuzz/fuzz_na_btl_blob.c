/*
 * Fuzz target: na/btl's deserializers of what peers send inside RPC
 * arguments (na_btl_wire.c): the first byte picks an address blob (even)
 * or a memory handle (odd), the rest is the blob. Whatever decodes is
 * within its buffer: segments are read back one by one.
 */
#include "opal/opal_config.h"

#include <stdint.h>
#include <stdlib.h>

#include "opal/mca/na/btl/na_btl_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (0 == size) {
        return 0;
    }
    char why[NA_BTL_WHY_MAX];
    if (0 == (data[0] & 1)) {
        uint32_t jobid, rank;
        const uint8_t *card;
        size_t card_size;
        if (0 == na_btl_addr_blob_decode(data + 1, size - 1, &jobid, &rank, &card, &card_size,
                                         why) &&
            NULL != card && (card < data + 1 || card + card_size > data + size)) {
            abort();
        }
        return 0;
    }
    na_btl_mh_wire_t *mh = malloc(sizeof(*mh));
    if (NULL != mh && 0 == na_btl_mh_decode(data + 1, size - 1, mh, why)) {
        uint64_t total = 0;
        for (uint32_t i = 0; i < mh->count; ++i) {
            uint64_t base, len;
            na_btl_mh_wire_segment(mh, i, &base, &len);
            total += len;
        }
        if (total != mh->total) {
            abort();
        }
    }
    free(mh);
    return 0;
}
