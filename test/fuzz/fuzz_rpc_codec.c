/*
 * Fuzz target: a generated decoder (every field kind, structs nested in
 * pointers and arrays: test/rpc/rpc_test_types.h). Whatever the bytes,
 * decoding succeeds or refuses without reading past the buffer or
 * leaking; an accepted value re-encodes to exactly the bytes given.
 */
#include "opal/opal_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/opal_error.h"
#include "test/rpc/rpc_test_types.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    every_t e;
    if (OPAL_SUCCESS != opal_rpc_codec_decode(&every_codec, data, size, &e)) {
        return 0;
    }
    size_t n = every_size(&e);
    uint8_t *again = malloc(n + 1);
    opal_cursor_t c;
    opal_cursor_init_write(&c, again, n);
    every_encode(&c, &e);
    /* Doubles and bools travel bit for bit: the bytes must match. */
    if (n != size || !opal_cursor_done(&c) || 0 != memcmp(again, data, n)) {
        abort();
    }
    free(again);
    every_free(&e);
    return 0;
}
