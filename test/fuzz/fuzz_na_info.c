/*
 * Fuzz target: na info strings ("<class>[+<protocol>][://<host>]"), as a
 * user or a configuration file gives them to opal_na_initialize. Every
 * input either parses into non-empty parts made of allowed characters, or
 * is refused with OPAL_ERR_BAD_PARAM; nothing is read past the string.
 */
#include "opal/opal_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/na/base/base.h"
#include "opal/util/opal_error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (NULL == text) {
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    opal_na_info_t info;
    char *storage = NULL;
    int rc = opal_na_info_parse(text, &info, &storage);
    if (OPAL_SUCCESS == rc) {
        /* A parsed string has a class, and whatever else it has is not
         * empty. */
        if (NULL == info.class_name || '\0' == info.class_name[0]
            || (NULL != info.protocol_name && '\0' == info.protocol_name[0])
            || (NULL != info.host_name && '\0' == info.host_name[0])) {
            abort();
        }
    } else if (OPAL_ERR_BAD_PARAM != rc || NULL != storage) {
        abort();
    }
    free(storage);
    free(text);
    return 0;
}
