/*
 * Fuzz target: collective RPC's forward and reply as a member receives
 * them, and the collective group creation's input and output
 * (rpc_base_corpc.h): the generated decoders, then the check of what
 * a decoded forward means against groups of a few sizes. Whatever the
 * bytes, decoding reads nothing past the buffer, a forward the check
 * accepts has its root and exclusions in range, and nothing leaks.
 */
#include "opal/opal_config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/rpc/base/rpc_base_corpc.h"
#include "opal/util/opal_error.h"
#include "test/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rpc_corpc_in_t in;
    if (OPAL_SUCCESS == opal_rpc_codec_decode(&rpc_corpc_in_codec, data, size, &in)) {
        static const uint32_t sizes[] = {1, 2, 8, 1000};
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
            char why[256];
            if (OPAL_SUCCESS == opal_rpc_base_corpc_check(&in, sizes[i], why, sizeof(why))) {
                if (in.root >= sizes[i] || NULL == in.tree || !isfinite(in.budget) ||
                    in.budget < 0) {
                    abort();
                }
                for (uint32_t j = 0; j < in.excluded.count; ++j) {
                    if (in.excluded.elems[j] >= sizes[i] || in.excluded.elems[j] == in.root) {
                        abort();
                    }
                }
            }
        }
        rpc_corpc_in_free(&in);
    }
    rpc_corpc_out_t out;
    if (OPAL_SUCCESS == opal_rpc_codec_decode(&rpc_corpc_out_codec, data, size, &out)) {
        rpc_corpc_out_free(&out);
    }
    rpc_group_create_in_t gin;
    if (OPAL_SUCCESS == opal_rpc_codec_decode(&rpc_group_create_in_codec, data, size, &gin)) {
        rpc_group_create_in_free(&gin);
    }
    rpc_group_create_out_t gout;
    if (OPAL_SUCCESS == opal_rpc_codec_decode(&rpc_group_create_out_codec, data, size, &gout)) {
        rpc_group_create_out_free(&gout);
    }
    return 0;
}
