/*
 * Fuzz target: an incast variable request and its answer as a member
 * receives them (rpc_base_iv.h): the generated decoders, then the check
 * of what a decoded request means for each operation and a few limits.
 * Whatever the bytes, decoding reads nothing past the buffer, a request
 * the check accepts has a group name, a key within the limit and a value
 * only where one belongs, and nothing leaks.
 */
#include "opal/opal_config.h"

#include <stdint.h>
#include <stdlib.h>

#include "opal/mca/rpc/base/rpc_base_iv.h"
#include "opal/util/opal_error.h"
#include "test/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rpc_iv_in_t in;
    if (OPAL_SUCCESS == opal_rpc_codec_decode(&rpc_iv_in_codec, data, size, &in)) {
        static const uint32_t limits[] = {1, 16, 1024};
        for (uint32_t index = 0; index < IV_OP_COUNT + 1; ++index) {
            for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); ++i) {
                char why[256];
                if (OPAL_SUCCESS ==
                    opal_rpc_base_iv_check(&in, index, limits[i], limits[i], why, sizeof(why))) {
                    if (NULL == in.group || 0 == in.key.len || in.key.len > limits[i] ||
                        in.value.len > (IV_OP_UPDATE == index ? limits[i] : 0)) {
                        abort();
                    }
                }
            }
        }
        rpc_iv_in_free(&in);
    }
    rpc_iv_out_t out;
    if (OPAL_SUCCESS == opal_rpc_codec_decode(&rpc_iv_out_codec, data, size, &out)) {
        rpc_iv_out_free(&out);
    }
    return 0;
}
