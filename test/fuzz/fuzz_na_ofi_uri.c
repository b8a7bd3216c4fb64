/*
 * libFuzzer target: na/ofi's URI lookup (the text after "ofi+tcp://" and
 * "ofi+shm://"). The input is the whole URI; the first byte picks the
 * class (even: tcp, odd: shm). Lookup must refuse or accept without
 * reading past the string; an accepted address must print back as a URI
 * that looks up to the same address.
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
    opal_na_class_t *cls = fuzz_na_ofi_class(data[0] & 1);
    if (NULL == cls) {
        return 0;
    }
    char *uri = malloc(size);
    memcpy(uri, data + 1, size - 1);
    uri[size - 1] = '\0';
    opal_na_addr_t *a = NULL;
    if (OPAL_SUCCESS == opal_na_addr_lookup(cls, uri, &a)) {
        char back[1024];
        size_t n = sizeof(back);
        opal_na_addr_t *b = NULL;
        if (OPAL_SUCCESS != opal_na_addr_to_string(cls, back, &n, a) ||
            OPAL_SUCCESS != opal_na_addr_lookup(cls, back, &b) || !opal_na_addr_cmp(cls, a, b)) {
            abort();
        }
        opal_na_addr_free(cls, b);
        opal_na_addr_free(cls, a);
    }
    free(uri);
    return 0;
}
