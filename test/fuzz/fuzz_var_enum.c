/* Fuzz target: the values of enumeration and flag-set variables
 * (mca_base_var_enum_parse), as they come from files, the environment and
 * --mca. The first byte picks the enumerator; the rest is the text. A
 * value that parses must print back to text that parses to it again. */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/util/opal_error.h"
#include "test/fuzz/fuzz.h"

static const mca_base_var_enum_value_t levels[] = {
    {0, "none"}, {1, "error"}, {5, "warn"}, {10, "info"}, {-3, "negative"}, {0, NULL},
};
static const mca_base_var_enum_value_t flags[] = {
    {0x1, "send"}, {0x2, "put"}, {0x4, "get"}, {0x6, "rdma"}, {0x80, "atomics"}, {0, NULL},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    bool is_flag = data[0] & 1;
    mca_base_var_enum_t *e = NULL;
    int rc = is_flag ? mca_base_var_enum_create_flag("fuzz_flags", flags, &e)
                     : mca_base_var_enum_create("fuzz_levels", levels, &e);
    if (OPAL_SUCCESS != rc) {
        abort();
    }
    char *text = malloc(size);
    if (NULL == text) {
        OBJ_RELEASE(e);
        return 0;
    }
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    int value = 0;
    char *error = NULL;
    rc = mca_base_var_enum_parse(e, text, &value, &error);
    if (OPAL_SUCCESS == rc) {
        char *back = NULL;
        if (OPAL_SUCCESS != mca_base_var_enum_to_string(e, value, &back)) {
            abort();
        }
        int again = ~value;
        char *error2 = NULL;
        /* An empty flag set prints as "" (which parses to 0 again). */
        if (OPAL_SUCCESS != mca_base_var_enum_parse(e, back, &again, &error2) || again != value) {
            abort();
        }
        free(error2);
        free(back);
    } else if (OPAL_ERR_BAD_VALUE != rc || NULL == error) {
        abort();
    }
    free(error);
    free(text);
    OBJ_RELEASE(e);
    return 0;
}
