#include "opal/opal_config.h"

#include <stdarg.h>
#include <stdio.h>

#include "opal/util/opal_error.h"

struct error_entry {
    int code;
    const char *name;
    const char *message;
};

static const struct error_entry error_table[] = {
#define OPAL_ERROR_ENTRY(name, value, message) {(value), #name, (message)},
    OPAL_ERROR_TABLE(OPAL_ERROR_ENTRY)
#undef OPAL_ERROR_ENTRY
};

static const struct error_entry *find_entry(int code)
{
    /* Codes are 0, -1, -2, ... in table order, so the index is -code; the
     * check keeps that true if the table ever gains a gap. */
    size_t n = sizeof(error_table) / sizeof(error_table[0]);
    /* code > -n before -code: a code from a peer may be INT_MIN, whose
     * negation overflows. */
    if (code <= 0 && code > -(int) n && error_table[-code].code == code) {
        return &error_table[-code];
    }
    for (size_t i = 0; i < n; ++i) {
        if (error_table[i].code == code) {
            return &error_table[i];
        }
    }
    return NULL;
}

const char *opal_strerror(int code)
{
    static _Thread_local char unknown[48];
    const struct error_entry *entry = find_entry(code);
    if (NULL != entry) {
        return entry->message;
    }
    snprintf(unknown, sizeof(unknown), "Unknown error code %d", code);
    return unknown;
}

const char *opal_strerror_name(int code)
{
    const struct error_entry *entry = find_entry(code);
    return NULL == entry ? NULL : entry->name;
}

int opal_error_why(int code, char *why, size_t size, const char *format, ...)
{
    if (NULL != why && size > 0) {
        va_list ap;
        va_start(ap, format);
        (void) vsnprintf(why, size, format, ap);
        va_end(ap);
    }
    return code;
}
