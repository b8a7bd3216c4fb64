#include "opal/opal_config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/opal_error.h"
#include "opal/util/opal_keyval.h"
#include "opal/util/opal_output.h"

/* What one parse needs to report and deliver. */
typedef struct parser_t {
    const char *source;
    opal_keyval_pair_fn_t pair_fn;
    opal_keyval_error_fn_t error_fn;
    void *ctx;
    int nerrors;
} parser_t;

const char *opal_keyval_error_what(opal_keyval_error_kind_t kind)
{
    switch (kind) {
#define OPAL_KEYVAL_ERROR_CASE(k, what)                                                            \
    case k:                                                                                        \
        return what;
        OPAL_KEYVAL_ERROR_TABLE(OPAL_KEYVAL_ERROR_CASE)
#undef OPAL_KEYVAL_ERROR_CASE
    }
    return "unknown";
}

static bool is_blank(char c)
{
    return ' ' == c || '\t' == c || '\r' == c || '\f' == c || '\v' == c;
}

static bool is_key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || '_' == c ||
           '.' == c || '-' == c;
}

/* Writes s into a message with control and non-ASCII bytes as \xNN, so a
 * binary file cannot garble the terminal that shows the error. */
static void put_escaped(FILE *out, const char *s)
{
    for (; '\0' != *s; ++s) {
        unsigned char c = (unsigned char) *s;
        if (c < 0x20 || c >= 0x7f) {
            fprintf(out, "\\x%02x", c);
        } else {
            fputc(c, out);
        }
    }
}

static void default_error_fn(const opal_keyval_error_t *error, void *ctx)
{
    (void) ctx;
    opal_output(0, "%s", error->message);
}

/* Reports an error. The message is "source:lineno: what" followed by
 * detail, where each %s in detail_fmt is replaced (escaped) by an element of
 * args, and %S by args inserted verbatim. */
static void report(parser_t *p, opal_keyval_error_kind_t kind, int lineno, const char *detail_fmt,
                   const char *const *args)
{
    ++p->nerrors;
    char *message = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&message, &len);
    if (NULL != out) {
        put_escaped(out, p->source);
        if (lineno > 0) {
            fprintf(out, ":%d", lineno);
        }
        fputs(": ", out);
        for (const char *f = detail_fmt; '\0' != *f; ++f) {
            if ('%' == f[0] && ('s' == f[1] || 'S' == f[1])) {
                if ('s' == f[1]) {
                    put_escaped(out, *args++);
                } else {
                    fputs(*args++, out);
                }
                ++f;
            } else {
                fputc(*f, out);
            }
        }
        if (0 != fclose(out)) {
            free(message);
            message = NULL;
        }
    }
    opal_keyval_error_t error = {.kind = kind,
                                 .source = p->source,
                                 .lineno = lineno,
                                 .message =
                                     NULL != message ? message : opal_keyval_error_what(kind)};
    (NULL != p->error_fn ? p->error_fn : default_error_fn)(&error, p->ctx);
    free(message);
}

static char *trim_right(char *start, char *end)
{
    while (end > start && is_blank(end[-1])) {
        --end;
    }
    *end = '\0';
    return start;
}

/* Parses the quoted value starting at the quote v[0], unquoting it in
 * place. Returns the position after the closing quote, or NULL when the
 * quote is not closed. */
static char *unquote(char *v)
{
    char quote = v[0];
    char *w = v, *r = v + 1;
    for (;;) {
        if ('\0' == *r) {
            return NULL;
        }
        if (quote == *r) {
            *w = '\0';
            return r + 1;
        }
        if ('"' == quote && '\\' == r[0] && ('"' == r[1] || '\\' == r[1])) {
            ++r;
        }
        *w++ = *r++;
    }
}

/* Parses one line (NUL-terminated, writable). Returns OPAL_SUCCESS or the
 * pair callback's error. Syntax errors are reported and counted. */
static int parse_line(parser_t *p, char *line, int lineno)
{
    char *s = line;
    while (is_blank(*s)) {
        ++s;
    }
    if ('\0' == *s || '#' == *s) {
        return OPAL_SUCCESS;
    }

    char *eq = strchr(s, '=');
    char *hash = strchr(s, '#');
    if (NULL == eq || (NULL != hash && hash < eq)) {
        const char *args[] = {trim_right(s, NULL != hash ? hash : s + strlen(s))};
        report(p, OPAL_KEYVAL_ERR_MISSING_EQUALS, lineno, "missing '=' after the key in \"%s\"",
               args);
        return OPAL_SUCCESS;
    }
    char *key = trim_right(s, eq);
    if ('\0' == *key) {
        report(p, OPAL_KEYVAL_ERR_EMPTY_KEY, lineno, "empty key before '='", NULL);
        return OPAL_SUCCESS;
    }
    for (const char *k = key; '\0' != *k; ++k) {
        if (!is_key_char(*k)) {
            char bad[2] = {*k, '\0'};
            const char *args[] = {bad, key};
            report(p, OPAL_KEYVAL_ERR_BAD_KEY, lineno,
                   "invalid character '%s' in key \"%s\" (keys use letters, digits, '_', '.' "
                   "and '-')",
                   args);
            return OPAL_SUCCESS;
        }
    }

    char *value = eq + 1;
    while (is_blank(*value)) {
        ++value;
    }
    if ('"' == *value || '\'' == *value) {
        char quote = *value;
        char *rest = unquote(value);
        if (NULL == rest) {
            const char *args[] = {'"' == quote ? "double" : "single", key};
            report(p, OPAL_KEYVAL_ERR_UNTERMINATED_QUOTE, lineno,
                   "unterminated %S quote in the value of \"%s\"", args);
            return OPAL_SUCCESS;
        }
        while (is_blank(*rest)) {
            ++rest;
        }
        if ('\0' != *rest && '#' != *rest) {
            const char *args[] = {trim_right(rest, rest + strlen(rest)), key};
            report(p, OPAL_KEYVAL_ERR_TRAILING_TEXT, lineno,
                   "unexpected text \"%s\" after the closing quote in the value of \"%s\"", args);
            return OPAL_SUCCESS;
        }
    } else {
        /* end[-1] is in the line even at the value's start: it is '=' or
         * the blank after it, so "k=#v" keeps its '#' and "k = #c" is a
         * comment. */
        char *end = value;
        while ('\0' != *end && !('#' == *end && is_blank(end[-1]))) {
            ++end;
        }
        trim_right(value, end);
    }
    return p->pair_fn(key, value, p->source, lineno, p->ctx);
}

/* Parses buf[0, len), which it may modify; buf[len] is '\0'. */
static int parse_buffer(parser_t *p, char *buf, size_t len)
{
    int lineno = 0;
    char *line = buf, *end = buf + len;
    while (line < end) {
        ++lineno;
        char *nl = memchr(line, '\n', (size_t) (end - line));
        char *line_end = NULL == nl ? end : nl;
        *line_end = '\0';
        if (strlen(line) != (size_t) (line_end - line)) {
            report(p, OPAL_KEYVAL_ERR_NUL_BYTE, lineno, "NUL byte in the line", NULL);
        } else {
            int rc = parse_line(p, line, lineno);
            if (OPAL_SUCCESS != rc) {
                return rc;
            }
        }
        line = line_end + 1;
    }
    return 0 == p->nerrors ? OPAL_SUCCESS : OPAL_ERR_PARSE;
}

int opal_keyval_parse_string(const char *buffer, const char *source, opal_keyval_pair_fn_t pair_fn,
                             opal_keyval_error_fn_t error_fn, void *ctx)
{
    if (NULL == buffer || NULL == source || NULL == pair_fn) {
        return OPAL_ERR_BAD_PARAM;
    }
    char *copy = strdup(buffer);
    if (NULL == copy) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    parser_t p = {.source = source, .pair_fn = pair_fn, .error_fn = error_fn, .ctx = ctx};
    int rc = parse_buffer(&p, copy, strlen(copy));
    free(copy);
    return rc;
}

static int errno_to_opal(int err)
{
    switch (err) {
        case ENOENT:
        case ENOTDIR:
            return OPAL_ERR_NOT_FOUND;
        case EACCES:
        case EPERM:
            return OPAL_ERR_PERM;
        case ENOMEM:
            return OPAL_ERR_OUT_OF_RESOURCE;
        default:
            return OPAL_ERR_IN_ERRNO;
    }
}

/* Reads all of fp into *buf (malloc'd, NUL-terminated) and its length into
 * *len. Returns 0 or an errno value. */
static int slurp(FILE *fp, char **buf, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *data = malloc(cap);
    if (NULL == data) {
        return ENOMEM;
    }
    for (;;) {
        if (cap - n < 2) {
            char *grown = realloc(data, cap * 2);
            if (NULL == grown) {
                free(data);
                return ENOMEM;
            }
            data = grown;
            cap *= 2;
        }
        size_t got = fread(data + n, 1, cap - n - 1, fp);
        n += got;
        if (0 == got) {
            break;
        }
    }
    if (ferror(fp)) {
        int err = 0 != errno ? errno : EIO;
        free(data);
        return err;
    }
    data[n] = '\0';
    *buf = data;
    *len = n;
    return 0;
}

int opal_keyval_parse(const char *filename, opal_keyval_pair_fn_t pair_fn,
                      opal_keyval_error_fn_t error_fn, void *ctx)
{
    if (NULL == filename || NULL == pair_fn) {
        return OPAL_ERR_BAD_PARAM;
    }
    parser_t p = {.source = filename, .pair_fn = pair_fn, .error_fn = error_fn, .ctx = ctx};
    char *buf = NULL;
    size_t len = 0;
    int err = 0;
    errno = 0;
    FILE *fp = fopen(filename, "r");
    if (NULL == fp) {
        err = errno;
    } else {
        err = slurp(fp, &buf, &len);
        fclose(fp);
    }
    if (0 != err) {
        const char *args[] = {strerror(err)};
        report(&p, OPAL_KEYVAL_ERR_UNREADABLE, 0, "cannot read the file: %S", args);
        return errno_to_opal(err);
    }
    int rc = parse_buffer(&p, buf, len);
    free(buf);
    return rc;
}
