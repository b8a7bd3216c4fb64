/* Fuzz target: the MCA parameter-file parser (opal_keyval_parse_string),
 * which reads files users and administrators write. Every pair it delivers
 * must have a valid key; every error a message naming the source. */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/util/opal_error.h"
#include "opal/util/opal_keyval.h"
#include "test/fuzz/fuzz.h"

static int check_pair(const char *key, const char *value, const char *source, int lineno, void *ctx)
{
    (void) source;
    ++*(int *) ctx;
    if ('\0' == key[0] || lineno < 1 || NULL == value) {
        abort();
    }
    for (const char *p = key; '\0' != *p; ++p) {
        if (NULL ==
            strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", *p)) {
            abort();
        }
    }
    return OPAL_SUCCESS;
}

static void check_error(const opal_keyval_error_t *error, void *ctx)
{
    (void) ctx;
    if (NULL == error->message || NULL == strstr(error->message, "fuzz.conf")) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (NULL == text) {
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    int pairs = 0;
    int rc = opal_keyval_parse_string(text, "fuzz.conf", check_pair, check_error, &pairs);
    if (OPAL_SUCCESS != rc && OPAL_ERR_PARSE != rc && OPAL_ERR_OUT_OF_RESOURCE != rc) {
        abort();
    }
    free(text);
    return 0;
}
