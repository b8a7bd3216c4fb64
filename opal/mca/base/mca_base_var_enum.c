/*
 * Enumerations and flag sets: the names a variable of type int accepts.
 */
#include "opal/opal_config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/util/opal_error.h"

static void enum_construct(mca_base_var_enum_t *e)
{
    e->enum_name = NULL;
    e->enum_is_flag = false;
    e->enum_value_count = 0;
    e->enum_values = NULL;
}

static void enum_destruct(mca_base_var_enum_t *e)
{
    for (int i = 0; i < e->enum_value_count; ++i) {
        free((char *) e->enum_values[i].string);
    }
    free(e->enum_values);
    free(e->enum_name);
}

OBJ_CLASS_INSTANCE(mca_base_var_enum_t, opal_object_t, enum_construct, enum_destruct);

/* Names are what users type: non-empty, printable, no separators (a comma
 * would split a flag list, whitespace would be trimmed away). */
static bool valid_enum_name(const char *s)
{
    if ('\0' == *s) {
        return false;
    }
    for (; '\0' != *s; ++s) {
        if (!isgraph((unsigned char) *s) || ',' == *s) {
            return false;
        }
    }
    return true;
}

static int enum_create(const char *name, const mca_base_var_enum_value_t *values, bool is_flag,
                       mca_base_var_enum_t **enumerator)
{
    if (NULL == name || NULL == values || NULL == enumerator) {
        return OPAL_ERR_BAD_PARAM;
    }
    *enumerator = NULL;
    int count = 0;
    for (; NULL != values[count].string; ++count) {
        if (!valid_enum_name(values[count].string) || (is_flag && 0 == values[count].value)) {
            return OPAL_ERR_BAD_PARAM;
        }
        for (int j = 0; j < count; ++j) {
            if (0 == strcasecmp(values[j].string, values[count].string)) {
                return OPAL_ERR_BAD_PARAM;
            }
        }
    }

    mca_base_var_enum_t *e = OBJ_NEW(mca_base_var_enum_t);
    if (NULL == e) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    e->enum_is_flag = is_flag;
    e->enum_name = strdup(name);
    e->enum_values = calloc((size_t) count + 1, sizeof(*e->enum_values));
    if (NULL == e->enum_name || NULL == e->enum_values) {
        goto oom;
    }
    for (int i = 0; i < count; ++i) {
        e->enum_values[i].value = values[i].value;
        e->enum_values[i].string = strdup(values[i].string);
        if (NULL == e->enum_values[i].string) {
            goto oom;
        }
        /* Counted as copied so the destructor frees exactly these. */
        e->enum_value_count = i + 1;
    }
    *enumerator = e;
    return OPAL_SUCCESS;

oom:
    OBJ_RELEASE(e);
    return OPAL_ERR_OUT_OF_RESOURCE;
}

int mca_base_var_enum_create(const char *name, const mca_base_var_enum_value_t *values,
                             mca_base_var_enum_t **enumerator)
{
    return enum_create(name, values, false, enumerator);
}

int mca_base_var_enum_create_flag(const char *name, const mca_base_var_enum_value_t *flags,
                                  mca_base_var_enum_t **enumerator)
{
    return enum_create(name, flags, true, enumerator);
}

/* A whole token as an int: decimal or 0x hex, optionally signed. */
static bool parse_int_token(const char *s, int *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 0 == strncasecmp(s, "0x", 2) ? 16 : 10);
    if (end == s || '\0' != *end || 0 != errno || v < INT_MIN || v > INT_MAX ||
        isspace((unsigned char) *s)) {
        return false;
    }
    *out = (int) v;
    return true;
}

static const mca_base_var_enum_value_t *find_name(const mca_base_var_enum_t *e, const char *s)
{
    for (int i = 0; i < e->enum_value_count; ++i) {
        if (0 == strcasecmp(e->enum_values[i].string, s)) {
            return &e->enum_values[i];
        }
    }
    return NULL;
}

static unsigned int all_flag_bits(const mca_base_var_enum_t *e)
{
    unsigned int bits = 0;
    for (int i = 0; i < e->enum_value_count; ++i) {
        bits |= (unsigned int) e->enum_values[i].value;
    }
    return bits;
}

/* "self (0), sm (1)" for an enumeration, "a, b, c" for a flag set. */
static char *accepted_names(const mca_base_var_enum_t *e)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (NULL == out) {
        return NULL;
    }
    for (int i = 0; i < e->enum_value_count; ++i) {
        fprintf(out, "%s%s", 0 == i ? "" : ", ", e->enum_values[i].string);
        if (!e->enum_is_flag) {
            fprintf(out, " (%d)", e->enum_values[i].value);
        }
    }
    if (0 != fclose(out)) {
        free(buf);
        return NULL;
    }
    return buf;
}

static void set_error(const mca_base_var_enum_t *e, char **error, const char *what)
{
    if (NULL == error) {
        return;
    }
    char *names = accepted_names(e);
    int rc;
    if (e->enum_is_flag) {
        rc = asprintf(error,
                      "%s; expected a comma-separated list of %s (or a number made of their bits)",
                      what, NULL != names ? names : "?");
    } else {
        rc = asprintf(error, "%s; expected one of %s", what, NULL != names ? names : "?");
    }
    if (rc < 0) {
        *error = NULL;
    }
    free(names);
}

/* Copies s without leading and trailing whitespace; NULL when out of memory. */
static char *trimmed(const char *s, size_t n)
{
    while (n > 0 && isspace((unsigned char) *s)) {
        ++s;
        --n;
    }
    while (n > 0 && isspace((unsigned char) s[n - 1])) {
        --n;
    }
    return strndup(s, n);
}

static int parse_flags(const mca_base_var_enum_t *e, const char *text, int *value, char **error)
{
    unsigned int bits = 0, allowed = all_flag_bits(e);
    const char *p = text;
    int rc = OPAL_SUCCESS;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t n = NULL != comma ? (size_t) (comma - p) : strlen(p);
        char *tok = trimmed(p, n);
        if (NULL == tok) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        const mca_base_var_enum_value_t *v = find_name(e, tok);
        int num;
        char *what = NULL;
        if (NULL != v) {
            bits |= (unsigned int) v->value;
        } else if ('\0' == *tok) {
            /* "" alone means no flag; an empty item inside a list is a typo. */
            if (NULL != comma || p != text) {
                what = strdup("empty name in the list");
            }
        } else if (parse_int_token(tok, &num) && 0 == ((unsigned int) num & ~allowed)) {
            bits |= (unsigned int) num;
        } else if (asprintf(&what, "unknown flag \"%s\"", tok) < 0) {
            what = NULL;
            rc = OPAL_ERR_OUT_OF_RESOURCE;
        }
        free(tok);
        if (NULL != what || OPAL_SUCCESS != rc) {
            if (OPAL_SUCCESS == rc) {
                set_error(e, error, what);
                rc = OPAL_ERR_BAD_VALUE;
            }
            free(what);
            return rc;
        }
        if (NULL == comma) {
            break;
        }
        p = comma + 1;
    }
    *value = (int) bits;
    return OPAL_SUCCESS;
}

int mca_base_var_enum_parse(const mca_base_var_enum_t *enumerator, const char *text, int *value,
                            char **error)
{
    if (NULL != error) {
        *error = NULL;
    }
    if (NULL == enumerator || NULL == text || NULL == value) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (enumerator->enum_is_flag) {
        return parse_flags(enumerator, text, value, error);
    }

    char *tok = trimmed(text, strlen(text));
    if (NULL == tok) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    const mca_base_var_enum_value_t *v = find_name(enumerator, tok);
    int num, rc = OPAL_SUCCESS;
    if (NULL != v) {
        *value = v->value;
        goto out;
    }
    if (parse_int_token(tok, &num)) {
        for (int i = 0; i < enumerator->enum_value_count; ++i) {
            if (enumerator->enum_values[i].value == num) {
                *value = num;
                goto out;
            }
        }
    }
    char *what = NULL;
    if (asprintf(&what, "\"%s\" is not a name or value of %s", tok, enumerator->enum_name) < 0) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    set_error(enumerator, error, what);
    free(what);
    rc = OPAL_ERR_BAD_VALUE;

out:
    free(tok);
    return rc;
}

/* A flag set's value as names: each flag (or mask of flags) whose bits are
 * all set and not all named yet, in table order; bits no flag names are
 * appended as a hex number. */
static int flags_to_string(const mca_base_var_enum_t *e, int value, char **text)
{
    unsigned int want = (unsigned int) value, named = 0;
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (NULL == out) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    bool first = true;
    for (int i = 0; i < e->enum_value_count; ++i) {
        unsigned int f = (unsigned int) e->enum_values[i].value;
        if (f == (want & f) && 0 != (f & ~named)) {
            fprintf(out, "%s%s", first ? "" : ",", e->enum_values[i].string);
            named |= f;
            first = false;
        }
    }
    if (0 != (want & ~named)) {
        fprintf(out, "%s0x%x", first ? "" : ",", want & ~named);
    }
    if (0 != fclose(out)) {
        free(buf);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    *text = buf;
    return OPAL_SUCCESS;
}

int mca_base_var_enum_to_string(const mca_base_var_enum_t *enumerator, int value, char **text)
{
    if (NULL == enumerator || NULL == text) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (enumerator->enum_is_flag) {
        return flags_to_string(enumerator, value, text);
    }
    for (int i = 0; i < enumerator->enum_value_count; ++i) {
        if (enumerator->enum_values[i].value == value) {
            *text = strdup(enumerator->enum_values[i].string);
            return NULL != *text ? OPAL_SUCCESS : OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    /* A default outside the table still has to print as something. */
    if (asprintf(text, "%d", value) < 0) {
        *text = NULL;
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    return OPAL_SUCCESS;
}
