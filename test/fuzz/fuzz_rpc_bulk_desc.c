/*
 * Fuzz target: the descriptor of an rpc input or output by bulk (size,
 * seal, handle length, handle). Whatever the bytes, decoding returns
 * OPAL_SUCCESS or OPAL_ERR_PROTOCOL, reads nothing past the buffer, and an
 * accepted descriptor took every byte, its handle inside them.
 */
#include "opal/opal_config.h"

#include <stdint.h>
#include <stdlib.h>

#include "opal/mca/rpc/base/rpc_base_header.h"
#include "opal/util/opal_error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    opal_rpc_bulk_desc_t desc;
    int rc = opal_rpc_bulk_desc_decode(&desc, data, size);
    if (OPAL_SUCCESS == rc) {
        const uint8_t *h = desc.handle;
        if (OPAL_RPC_BULK_DESC_SIZE(desc.handle_len) != size ||
            (desc.handle_len > 0 && (h < data || h + desc.handle_len != data + size))) {
            abort();
        }
        /* Touch the handle: the sanitizers see a read past the bytes. */
        volatile uint8_t sum = 0;
        for (uint32_t i = 0; i < desc.handle_len; ++i) {
            sum = (uint8_t) (sum + h[i]);
        }
        (void) sum;
    } else if (OPAL_ERR_PROTOCOL != rc) {
        abort();
    }
    return 0;
}
