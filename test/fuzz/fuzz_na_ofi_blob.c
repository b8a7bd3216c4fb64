/*
 * libFuzzer target: the na base's blob header and na/ofi's serialized
 * addresses and memory handles. The first byte picks what the rest is
 * read as (bit 0: address or memory handle; bit 1: tcp or shm class).
 * Deserialization must refuse or accept without reading past the input;
 * an accepted blob must serialize back to the same bytes.
 */
#include "opal/opal_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/na/base/base.h"
#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "test/fuzz/fuzz_na_ofi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (0 == size) {
        return 0;
    }
    opal_na_class_t *cls = fuzz_na_ofi_class((data[0] >> 1) & 1);
    if (NULL == cls) {
        return 0;
    }
    /* A copy of exactly the input's size, so reads past it are caught. */
    size_t n = size - 1;
    uint8_t *blob = malloc(n + 1);
    memcpy(blob, data + 1, n);
    uint8_t *again = malloc(n + 1);
    if (data[0] & 1) {
        opal_na_mem_handle_t *mh = NULL;
        if (OPAL_SUCCESS == opal_na_mem_handle_deserialize(cls, &mh, blob, n)) {
            if (opal_na_mem_handle_get_serialize_size(cls, mh) != n ||
                OPAL_SUCCESS != opal_na_mem_handle_serialize(cls, again, n, mh) ||
                0 != memcmp(again, blob, n)) {
                abort();
            }
            opal_na_mem_handle_free(cls, mh);
        }
    } else {
        opal_na_addr_t *a = NULL;
        if (OPAL_SUCCESS == opal_na_addr_deserialize(cls, &a, blob, n)) {
            opal_na_addr_free(cls, a);
        }
    }
    free(again);
    free(blob);
    return 0;
}
