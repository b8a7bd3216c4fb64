/*
 * Fuzz target: na/btl's message header decoder (na_btl_wire.c), run on
 * every active message a peer sends; a header that decodes encodes back
 * to the same bytes.
 */
#include "opal/opal_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/na/btl/na_btl_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    na_btl_hdr_t hdr;
    char why[NA_BTL_WHY_MAX];
    if (0 == na_btl_hdr_decode(data, size, &hdr, why)) {
        uint8_t out[NA_BTL_HDR_SIZE];
        na_btl_hdr_encode(&hdr, out);
        if (size < NA_BTL_HDR_SIZE || 0 != memcmp(out, data, NA_BTL_HDR_SIZE)) {
            abort();
        }
    }
    return 0;
}
