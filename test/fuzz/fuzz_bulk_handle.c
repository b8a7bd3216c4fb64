/*
 * libFuzzer target: the bulk handle deserializer (opal_bulk_deserialize)
 * over the bulk tests' in-process na class, whose address and memory
 * handle blobs go through the na base's checked headers. Whatever the
 * bytes, deserialize must refuse them or give a handle that serializes
 * back to exactly the same bytes (inline bytes included), and nothing
 * may read past the input (ASan) or leak.
 *
 * Built with test/bulk/bulk_fake_na.c and libopal; the engines' plugins
 * are found through OPAL_MCA_mca_base_component_path (FUZZ_PLUGIN_DIRS
 * when the build defines it). Corpus: test/fuzz/corpus/bulk_handle/.
 */
#include "opal/opal_config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/bulk/bulk.h"
#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "test/bulk/bulk_fake_na.h"

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
        fprintf(stderr, "fuzz_bulk_handle: cannot set up a bulk class\n");
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (NULL == bc) {
        fuzz_init();
    }
    opal_bulk_t *h = NULL;
    if (OPAL_SUCCESS != opal_bulk_deserialize(bc, &h, data, size)) {
        if (NULL != h) {
            abort(); /* a refusal must not hand out a handle */
        }
        return 0;
    }
    size_t n = opal_bulk_get_serialize_size(h, OPAL_BULK_EAGER);
    uint8_t *again = malloc(0 == n ? 1 : n);
    if (NULL == again || n != size ||
        OPAL_SUCCESS != opal_bulk_serialize(again, n, OPAL_BULK_EAGER, h) ||
        0 != memcmp(again, data, size)) {
        abort(); /* accepted bytes must be what the handle writes back */
    }
    free(again);
    (void) opal_bulk_free(h);
    return 0;
}
