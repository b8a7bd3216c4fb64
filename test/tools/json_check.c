/* A recursive-descent JSON checker (see json_check.h). */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/tools/json_check.h"

/* Deeper than this is surely a bug in what is checked. */
#define MAX_NESTING 64

typedef struct {
    const char *text;
    size_t pos;
    const char *error;
    int depth;
} parser_t;

static bool fail(parser_t *p, const char *why)
{
    if (NULL == p->error) {
        p->error = why;
    }
    return false;
}

static void skip_blanks(parser_t *p)
{
    while (NULL != strchr(" \t\r\n", p->text[p->pos]) && '\0' != p->text[p->pos]) {
        ++p->pos;
    }
}

static bool literal(parser_t *p, const char *word)
{
    size_t n = strlen(word);
    if (0 != strncmp(p->text + p->pos, word, n)) {
        return fail(p, "unknown literal");
    }
    p->pos += n;
    return true;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool number(parser_t *p)
{
    const char *s = p->text;
    if ('-' == s[p->pos]) {
        ++p->pos;
    }
    if ('0' == s[p->pos]) {
        ++p->pos;
    } else if (is_digit(s[p->pos])) {
        while (is_digit(s[p->pos])) {
            ++p->pos;
        }
    } else {
        return fail(p, "bad number");
    }
    if ('.' == s[p->pos]) {
        ++p->pos;
        if (!is_digit(s[p->pos])) {
            return fail(p, "bad fraction");
        }
        while (is_digit(s[p->pos])) {
            ++p->pos;
        }
    }
    if ('e' == s[p->pos] || 'E' == s[p->pos]) {
        ++p->pos;
        if ('+' == s[p->pos] || '-' == s[p->pos]) {
            ++p->pos;
        }
        if (!is_digit(s[p->pos])) {
            return fail(p, "bad exponent");
        }
        while (is_digit(s[p->pos])) {
            ++p->pos;
        }
    }
    return true;
}

/* Length of the valid UTF-8 sequence at s, or 0. */
static size_t utf8_length(const unsigned char *s)
{
    if (s[0] < 0x80) {
        return 1;
    }
    size_t n;
    unsigned long cp, min;
    if (0xC0 == (s[0] & 0xE0)) {
        n = 2, cp = s[0] & 0x1Fu, min = 0x80;
    } else if (0xE0 == (s[0] & 0xF0)) {
        n = 3, cp = s[0] & 0x0Fu, min = 0x800;
    } else if (0xF0 == (s[0] & 0xF8)) {
        n = 4, cp = s[0] & 0x07u, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; ++i) {
        if (0x80 != (s[i] & 0xC0)) {
            return 0;
        }
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    return cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) ? 0 : n;
}

/* A string; its raw span (without quotes) in *start / *len. */
static bool string(parser_t *p, size_t *start, size_t *len)
{
    const unsigned char *s = (const unsigned char *) p->text;
    if ('"' != s[p->pos]) {
        return fail(p, "expected a string");
    }
    *start = ++p->pos;
    for (;;) {
        unsigned char c = s[p->pos];
        if ('"' == c) {
            *len = p->pos - *start;
            ++p->pos;
            return true;
        }
        if ('\0' == c) {
            return fail(p, "unterminated string");
        }
        if (c < 0x20) {
            return fail(p, "raw control character in a string");
        }
        if ('\\' == c) {
            char e = (char) s[p->pos + 1];
            if ('u' == e) {
                for (int i = 2; i < 6; ++i) {
                    if (NULL == strchr("0123456789abcdefABCDEF", s[p->pos + (size_t) i]) ||
                        '\0' == s[p->pos + (size_t) i]) {
                        return fail(p, "bad \\u escape");
                    }
                }
                p->pos += 6;
            } else if ('\0' != e && NULL != strchr("\"\\/bfnrt", e)) {
                p->pos += 2;
            } else {
                return fail(p, "bad escape");
            }
            continue;
        }
        size_t n = utf8_length(s + p->pos);
        if (0 == n) {
            return fail(p, "invalid UTF-8 in a string");
        }
        p->pos += n;
    }
}

static bool value(parser_t *p);

static bool object(parser_t *p)
{
    size_t *keys = NULL, count = 0;
    bool ok = false;
    ++p->pos;
    skip_blanks(p);
    if ('}' == p->text[p->pos]) {
        ++p->pos;
        return true;
    }
    for (;;) {
        size_t start, len;
        skip_blanks(p);
        if (!string(p, &start, &len)) {
            goto out;
        }
        for (size_t i = 0; i < count; i += 2) {
            if (keys[i + 1] == len && 0 == memcmp(p->text + keys[i], p->text + start, len)) {
                fail(p, "duplicate key in an object");
                goto out;
            }
        }
        size_t *grown = realloc(keys, (count + 2) * sizeof(*keys));
        if (NULL == grown) {
            fail(p, "out of memory");
            goto out;
        }
        keys = grown;
        keys[count++] = start;
        keys[count++] = len;
        skip_blanks(p);
        if (':' != p->text[p->pos]) {
            fail(p, "expected ':'");
            goto out;
        }
        ++p->pos;
        if (!value(p)) {
            goto out;
        }
        skip_blanks(p);
        if (',' == p->text[p->pos]) {
            ++p->pos;
            continue;
        }
        if ('}' == p->text[p->pos]) {
            ++p->pos;
            ok = true;
            goto out;
        }
        fail(p, "expected ',' or '}'");
        goto out;
    }
out:
    free(keys);
    return ok;
}

static bool array(parser_t *p)
{
    ++p->pos;
    skip_blanks(p);
    if (']' == p->text[p->pos]) {
        ++p->pos;
        return true;
    }
    for (;;) {
        if (!value(p)) {
            return false;
        }
        skip_blanks(p);
        if (',' == p->text[p->pos]) {
            ++p->pos;
            continue;
        }
        if (']' == p->text[p->pos]) {
            ++p->pos;
            return true;
        }
        return fail(p, "expected ',' or ']'");
    }
}

static bool value(parser_t *p)
{
    skip_blanks(p);
    if (++p->depth > MAX_NESTING) {
        return fail(p, "nested too deeply");
    }
    bool ok;
    size_t start, len;
    switch (p->text[p->pos]) {
        case '{':
            ok = object(p);
            break;
        case '[':
            ok = array(p);
            break;
        case '"':
            ok = string(p, &start, &len);
            break;
        case 't':
            ok = literal(p, "true");
            break;
        case 'f':
            ok = literal(p, "false");
            break;
        case 'n':
            ok = literal(p, "null");
            break;
        default:
            ok = number(p);
    }
    --p->depth;
    return ok;
}

bool json_check(const char *text, char **error)
{
    parser_t p = {.text = text};
    bool ok = value(&p);
    if (ok) {
        skip_blanks(&p);
        if ('\0' != text[p.pos]) {
            ok = fail(&p, "text after the value");
        }
    }
    if (!ok && NULL != error && asprintf(error, "%s at byte %zu", p.error, p.pos) < 0) {
        *error = NULL;
    }
    return ok;
}
