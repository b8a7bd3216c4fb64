/*
 * Fuzz target: the rpc wire header decoder. Whatever the bytes, decoding
 * returns OPAL_SUCCESS or OPAL_ERR_PROTOCOL with a reason, reads nothing
 * past the buffer, and an accepted header re-encodes to the same bytes.
 */
#include "opal/opal_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/rpc/base/rpc_base_header.h"
#include "opal/util/opal_error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    opal_rpc_hdr_t hdr;
    const char *why = NULL;
    int rc = opal_rpc_hdr_decode(&hdr, data, size, &why);
    if (OPAL_SUCCESS == rc) {
        uint8_t again[OPAL_RPC_HDR_SIZE];
        if (OPAL_SUCCESS != opal_rpc_hdr_encode(&hdr, again, sizeof(again)) ||
            0 != memcmp(again, data, sizeof(again))) {
            abort();
        }
    } else if (OPAL_ERR_PROTOCOL != rc || NULL == why) {
        abort();
    }
    return 0;
}
