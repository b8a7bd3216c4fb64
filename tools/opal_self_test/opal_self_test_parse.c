/*
 * The --endpoint and --message-size lists (opal_self_test_parse.h). Both
 * are read by hand, one character at a time with the position known, so
 * that an error can say exactly what is wrong; nothing is allocated until
 * the whole value is known good (and its size bounded).
 */
#include "opal/opal_config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/opal_error.h"
#include "tools/opal_self_test/opal_self_test_parse.h"

#define SIZE_OPT     "--message-size"
#define ENDPOINT_OPT "--endpoint"

/* Values are quoted in messages up to this many characters. */
#define QUOTE_MAX 80

static void quote(const char *text, char *buf, size_t len)
{
    size_t n = strlen(text);
    snprintf(buf, len, "%.*s%s", QUOTE_MAX, text, n > QUOTE_MAX ? "..." : "");
}

/* Reads digits at *p into *v (at most max); false on no digit or too large. */
static bool read_number(const char **p, uint64_t max, uint64_t *v)
{
    const char *s = *p;
    uint64_t n = 0;
    if (!isdigit((unsigned char) *s)) {
        return false;
    }
    while (isdigit((unsigned char) *s)) {
        n = n * 10 + (uint64_t) (*s - '0');
        if (n > max) {
            return false;
        }
        ++s;
    }
    *v = n;
    *p = s;
    return true;
}

/* ------------------------------------------------------- message sizes */

static bool is_space(char c)
{
    return ' ' == c || '\t' == c || '\n' == c || '\r' == c;
}

/* One size token at *p (up to a separator): [bi]?digits[kmg]?. */
static int read_size(const char **p, uint64_t *size, bool *bulk, const char *text, char *err,
                     size_t errlen)
{
    const char *s = *p;
    const char *start = s;
    char q[QUOTE_MAX + 4];
    quote(text, q, sizeof(q));
    *bulk = false;
    if ('b' == *s || 'B' == *s) {
        *bulk = true;
        ++s;
    } else if ('i' == *s || 'I' == *s) {
        ++s;
    }
    uint64_t n = 0;
    if (!read_number(&s, ST_MAX_SIZE, &n)) {
        if (isdigit((unsigned char) *s)) {
            snprintf(err, errlen, "%s '%s': a size at offset %zu is above 1 GiB", SIZE_OPT, q,
                     (size_t) (start - text));
        } else {
            snprintf(err, errlen,
                     "%s '%s': expected a size (digits, 'b' before them for bulk) at offset %zu, "
                     "found '%c'",
                     SIZE_OPT, q, (size_t) (s - text), '\0' == *s ? ' ' : *s);
        }
        return OPAL_ERR_BAD_PARAM;
    }
    uint64_t unit = 1;
    switch (*s) {
        case 'k':
        case 'K':
            unit = 1024;
            ++s;
            break;
        case 'm':
        case 'M':
            unit = 1024 * 1024;
            ++s;
            break;
        case 'g':
        case 'G':
            unit = 1024 * 1024 * 1024;
            ++s;
            break;
        default:
            break;
    }
    if ('\0' != *s && !is_space(*s) && ',' != *s && ')' != *s) {
        snprintf(err, errlen, "%s '%s': unexpected '%c' at offset %zu in a size", SIZE_OPT, q, *s,
                 (size_t) (s - text));
        return OPAL_ERR_BAD_PARAM;
    }
    if (n > ST_MAX_SIZE / unit) {
        snprintf(err, errlen, "%s '%s': the size at offset %zu is above 1 GiB", SIZE_OPT, q,
                 (size_t) (start - text));
        return OPAL_ERR_BAD_PARAM;
    }
    if (*bulk && 0 == n) {
        snprintf(err, errlen, "%s '%s': a bulk size (offset %zu) must be at least 1 byte", SIZE_OPT,
                 q, (size_t) (start - text));
        return OPAL_ERR_BAD_PARAM;
    }
    *size = n * unit;
    *p = s;
    return OPAL_SUCCESS;
}

/* One pair at *p, ending at end_char (')' or ','/'\0'). */
static int read_pair(const char **p, bool parens, st_size_t *out, const char *text, char *err,
                     size_t errlen)
{
    const char *s = *p;
    uint64_t sizes[2] = {0, 0};
    bool bulk[2] = {false, false};
    int n = 0;
    char q[QUOTE_MAX + 4];
    quote(text, q, sizeof(q));
    for (;;) {
        while (is_space(*s) || (parens && ',' == *s)) {
            ++s;
        }
        if ((parens && ')' == *s) || (!parens && (',' == *s || '\0' == *s))) {
            break;
        }
        if ('\0' == *s) {
            snprintf(err, errlen, "%s '%s': a '(' is not closed", SIZE_OPT, q);
            return OPAL_ERR_BAD_PARAM;
        }
        if (!parens && ')' == *s) {
            snprintf(err, errlen, "%s '%s': a ')' at offset %zu closes no '('", SIZE_OPT, q,
                     (size_t) (s - text));
            return OPAL_ERR_BAD_PARAM;
        }
        if (n == 2) {
            snprintf(err, errlen,
                     "%s '%s': a third size at offset %zu (a pair is input and output)", SIZE_OPT,
                     q, (size_t) (s - text));
            return OPAL_ERR_BAD_PARAM;
        }
        int rc = read_size(&s, &sizes[n], &bulk[n], text, err, errlen);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
        ++n;
    }
    if (0 == n) {
        snprintf(err, errlen, "%s '%s': an empty pair at offset %zu", SIZE_OPT, q,
                 (size_t) (s - text));
        return OPAL_ERR_BAD_PARAM;
    }
    if (1 == n) {
        sizes[1] = sizes[0];
        bulk[1] = bulk[0];
    }
    out->in_size = sizes[0];
    out->in_bulk = bulk[0];
    out->out_size = sizes[1];
    out->out_bulk = bulk[1];
    *p = s;
    return OPAL_SUCCESS;
}

int st_parse_message_sizes(const char *text, st_size_t **sizes, size_t *count, char *err,
                           size_t errlen)
{
    st_size_t pairs[ST_MAX_SIZES];
    size_t n = 0;
    bool parens = NULL != strchr(text, '(');
    const char *s = text;
    char q[QUOTE_MAX + 4];
    quote(text, q, sizeof(q));
    for (;;) {
        while (is_space(*s) || (parens && ',' == *s)) {
            ++s;
        }
        if ('\0' == *s) {
            break;
        }
        if (n == ST_MAX_SIZES) {
            snprintf(err, errlen, "%s '%s': more than %d pairs", SIZE_OPT, q, ST_MAX_SIZES);
            return OPAL_ERR_BAD_PARAM;
        }
        if (parens) {
            if ('(' != *s) {
                snprintf(err, errlen, "%s '%s': expected '(' at offset %zu, found '%c'", SIZE_OPT,
                         q, (size_t) (s - text), *s);
                return OPAL_ERR_BAD_PARAM;
            }
            ++s;
        }
        int rc = read_pair(&s, parens, &pairs[n], text, err, errlen);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
        ++n;
        if ('\0' != *s) {
            ++s; /* the ')' or ',' that ended the pair */
        } else if (!parens) {
            break;
        }
    }
    if (0 == n) {
        snprintf(err, errlen, "%s '%s': no sizes (e.g. '(0 0) (b1048576 0)')", SIZE_OPT, q);
        return OPAL_ERR_BAD_PARAM;
    }
    st_size_t *copy = malloc(n * sizeof(*copy));
    if (NULL == copy) {
        snprintf(err, errlen, "%s: out of memory", SIZE_OPT);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    memcpy(copy, pairs, n * sizeof(*copy));
    free(*sizes);
    *sizes = copy;
    *count = n;
    return OPAL_SUCCESS;
}

static void size_text(uint64_t size, bool bulk, char *buf, size_t len)
{
    snprintf(buf, len, "%s%llu", bulk ? "b" : "", (unsigned long long) size);
}

void st_size_label(const st_size_t *s, char *buf, size_t len)
{
    char in[32], out[32];
    size_text(s->in_size, s->in_bulk, in, sizeof(in));
    size_text(s->out_size, s->out_bulk, out, sizeof(out));
    snprintf(buf, len, "(%s %s)", in, out);
}

/* ----------------------------------------------------------- endpoints */

/* A list of N or N-M at *p up to stop (':' or '\0'): calls add(lo, hi)
 * for each item after checking all; *total counts the values. */
typedef struct {
    uint64_t lo, hi;
} range_t;

static int read_ranges(const char *s, const char *end, uint64_t max, const char *what,
                       const char *text, range_t **out, size_t *nout, uint64_t *total, char *err,
                       size_t errlen)
{
    char q[QUOTE_MAX + 4];
    quote(text, q, sizeof(q));
    size_t cap = 0, n = 0;
    range_t *r = NULL;
    *total = 0;
    if (s == end) {
        snprintf(err, errlen, "%s '%s': no %s (ranks:contexts, e.g. 0-3:0 or 1,3:0-1)",
                 ENDPOINT_OPT, q, what);
        return OPAL_ERR_BAD_PARAM;
    }
    while (s < end) {
        uint64_t lo, hi;
        const char *at = s;
        if (!read_number(&s, max, &lo)) {
            if (isdigit((unsigned char) *s)) {
                snprintf(err, errlen, "%s '%s': %s at offset %zu is above %llu", ENDPOINT_OPT, q,
                         what, (size_t) (at - text), (unsigned long long) max);
            } else {
                snprintf(err, errlen,
                         "%s '%s': expected a number (%s) at offset %zu, found '%c' "
                         "(ranks:contexts, e.g. 0-3:0 or 1,3:0-1)",
                         ENDPOINT_OPT, q, what, (size_t) (s - text), s < end ? *s : ' ');
            }
            free(r);
            return OPAL_ERR_BAD_PARAM;
        }
        hi = lo;
        if (s < end && '-' == *s) {
            ++s;
            if (!read_number(&s, max, &hi)) {
                snprintf(err, errlen, "%s '%s': a range of %s at offset %zu has no valid end",
                         ENDPOINT_OPT, q, what, (size_t) (at - text));
                free(r);
                return OPAL_ERR_BAD_PARAM;
            }
            if (hi < lo) {
                snprintf(err, errlen, "%s '%s': the range %llu-%llu of %s is backwards",
                         ENDPOINT_OPT, q, (unsigned long long) lo, (unsigned long long) hi, what);
                free(r);
                return OPAL_ERR_BAD_PARAM;
            }
        }
        if (s < end && ',' != *s) {
            snprintf(err, errlen, "%s '%s': unexpected '%c' at offset %zu in the %s", ENDPOINT_OPT,
                     q, *s, (size_t) (s - text), what);
            free(r);
            return OPAL_ERR_BAD_PARAM;
        }
        if (s < end) {
            ++s;
            if (s == end) {
                snprintf(err, errlen, "%s '%s': the list of %s ends with ','", ENDPOINT_OPT, q,
                         what);
                free(r);
                return OPAL_ERR_BAD_PARAM;
            }
        }
        *total += hi - lo + 1;
        if (*total > ST_MAX_ENDPOINTS) {
            snprintf(err, errlen, "%s '%s': more than %u %s", ENDPOINT_OPT, q, ST_MAX_ENDPOINTS,
                     what);
            free(r);
            return OPAL_ERR_BAD_PARAM;
        }
        if (n == cap) {
            cap = 0 == cap ? 8 : 2 * cap;
            range_t *grown = realloc(r, cap * sizeof(*r));
            if (NULL == grown) {
                free(r);
                snprintf(err, errlen, "%s: out of memory", ENDPOINT_OPT);
                return OPAL_ERR_OUT_OF_RESOURCE;
            }
            r = grown;
        }
        r[n].lo = lo;
        r[n].hi = hi;
        ++n;
    }
    *out = r;
    *nout = n;
    return OPAL_SUCCESS;
}

static int cmp_endpoint(const void *a, const void *b)
{
    const st_endpoint_t *x = a, *y = b;
    if (x->rank != y->rank) {
        return x->rank < y->rank ? -1 : 1;
    }
    return (x->ctx > y->ctx) - (x->ctx < y->ctx);
}

int st_parse_endpoints(const char *text, st_endpoint_t **eps, size_t *count, char *err,
                       size_t errlen)
{
    char q[QUOTE_MAX + 4];
    quote(text, q, sizeof(q));
    const char *colon = strchr(text, ':');
    if (NULL == colon || NULL != strchr(colon + 1, ':')) {
        snprintf(err, errlen,
                 "%s '%s': expected ranks:contexts with one ':' (e.g. 0-3:0 or 1,3:0-1)",
                 ENDPOINT_OPT, q);
        return OPAL_ERR_BAD_PARAM;
    }
    range_t *ranks = NULL, *ctxs = NULL;
    size_t nranks = 0, nctxs = 0;
    uint64_t total_ranks = 0, total_ctxs = 0;
    int rc = read_ranges(text, colon, UINT32_MAX - 1, "ranks", text, &ranks, &nranks, &total_ranks,
                         err, errlen);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = read_ranges(colon + 1, colon + 1 + strlen(colon + 1), ST_MAX_CONTEXT, "contexts", text,
                     &ctxs, &nctxs, &total_ctxs, err, errlen);
    if (OPAL_SUCCESS != rc) {
        free(ranks);
        return rc;
    }
    uint64_t added = total_ranks * total_ctxs;
    if (added + *count > ST_MAX_ENDPOINTS) {
        snprintf(err, errlen, "%s '%s': more than %u endpoints in all", ENDPOINT_OPT, q,
                 ST_MAX_ENDPOINTS);
        free(ranks);
        free(ctxs);
        return OPAL_ERR_BAD_PARAM;
    }
    st_endpoint_t *all = realloc(*eps, (size_t) (added + *count) * sizeof(*all));
    if (NULL == all) {
        free(ranks);
        free(ctxs);
        snprintf(err, errlen, "%s: out of memory", ENDPOINT_OPT);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    size_t n = *count;
    for (size_t i = 0; i < nranks; ++i) {
        for (uint64_t r = ranks[i].lo; r <= ranks[i].hi; ++r) {
            for (size_t j = 0; j < nctxs; ++j) {
                for (uint64_t c = ctxs[j].lo; c <= ctxs[j].hi; ++c) {
                    all[n].rank = (uint32_t) r;
                    all[n].ctx = (uint8_t) c;
                    ++n;
                }
            }
        }
    }
    free(ranks);
    free(ctxs);
    qsort(all, n, sizeof(*all), cmp_endpoint);
    size_t unique = 0;
    for (size_t i = 0; i < n; ++i) {
        if (0 == unique || 0 != cmp_endpoint(&all[unique - 1], &all[i])) {
            all[unique++] = all[i];
        }
    }
    *eps = all;
    *count = unique;
    return OPAL_SUCCESS;
}
