/*
 * Fuzz target: na/ofi's unexpected message header decoder (na_ofi_wire.c),
 * run on every unexpected message a peer sends. A header that decodes
 * lies inside the input, has a user's tag or is a goodbye with nothing
 * after it, and encodes back to the same bytes; a refusal
 * says why, and an address it still names lies inside the input.
 */
#include "opal/opal_config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/na/ofi/na_ofi_wire.h"
#include "opal/util/opal_error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of exactly the input's size, so reads past it are caught. */
    uint8_t *msg = malloc(size + 1);
    memcpy(msg, data, size);
    na_ofi_uhdr_t h;
    size_t hdr = 0;
    char why[NA_OFI_WHY_MAX] = "";
    int rc = na_ofi_uhdr_decode(msg, size, &h, &hdr, why);
    if (NULL != h.addr && (h.addr < msg || h.addr + h.addrlen > msg + size)) {
        abort();
    }
    if (OPAL_SUCCESS == rc) {
        uint8_t out[NA_OFI_UHDR_MAX];
        /* A tag past the max decodes only as an empty goodbye. */
        bool bye = NA_OFI_TAG_BYE == h.tag && hdr == size;
        if (hdr > size || (h.tag > NA_OFI_MAX_TAG && !bye) ||
            na_ofi_uhdr_encode(&h, out, sizeof(out)) != hdr || 0 != memcmp(out, msg, hdr)) {
            abort();
        }
    } else if (OPAL_ERR_BAD_PARAM != rc || '\0' == why[0]) {
        abort();
    }
    free(msg);
    return 0;
}
