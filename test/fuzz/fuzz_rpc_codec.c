/*
 * Fuzz target: the generated decoders (every field kind, structs nested in
 * pointers and arrays, and bulk handles: test/rpc/rpc_test_types.h). The
 * bytes are decoded as every_t and as carrier_t (BULK and ARRAY_BULK
 * fields, deserialized with a bulk class over the bulk tests' in-process
 * na class). Whatever the bytes, decoding succeeds or refuses without
 * reading past the buffer or leaking; an accepted value re-encodes to
 * exactly the bytes given. Corpus: test/fuzz/corpus/rpc_codec/ (carrier_*
 * are carrier_t encodings).
 */
#include "opal/opal_config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "test/bulk/bulk_fake_na.h"
#include "test/rpc/rpc_test_types.h"

static opal_bulk_class_t *bc;

static void fuzz_init(void)
{
#ifdef FUZZ_PLUGIN_DIRS
    setenv("OPAL_MCA_mca_base_component_path", FUZZ_PLUGIN_DIRS, 0);
#endif
    fake_na_opts_t opts = {.rma = true, .max_segments = 16};
    opal_na_class_t *na = NULL;
    if (OPAL_SUCCESS != opal_init_util(NULL, NULL) || NULL == (na = fake_na_open(&opts)) ||
        OPAL_SUCCESS != opal_bulk_init(na, &bc)) {
        fprintf(stderr, "fuzz_rpc_codec: cannot set up a bulk class\n");
        abort();
    }
}

/* Decodes data as codec and checks that it re-encodes to the same bytes
 * (doubles, bools and handles travel bit for bit). */
static void decode_as(const opal_rpc_codec_t *codec, const uint8_t *data, size_t size)
{
    void *s = malloc(codec->struct_size);
    if (NULL == s) {
        abort();
    }
    if (OPAL_SUCCESS != opal_rpc_codec_decode_with(codec, bc, data, size, s)) {
        free(s);
        return;
    }
    size_t n = codec->size(s);
    uint8_t *again = malloc(n + 1);
    opal_cursor_t c;
    opal_cursor_init_write(&c, again, n);
    codec->encode(&c, s);
    if (n != size || !opal_cursor_done(&c) || 0 != memcmp(again, data, n)) {
        abort();
    }
    free(again);
    codec->free(s);
    free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (NULL == bc) {
        fuzz_init();
    }
    decode_as(&every_codec, data, size);
    decode_as(&carrier_codec, data, size);
    return 0;
}
