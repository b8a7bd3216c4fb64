/*
 * How opal_info writes: the pretty "label: text" lines and their wrapping
 * to the terminal, and the escaping of parsable fields and JSON strings.
 */
#include "opal/opal_config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "tools/opal_info/opal_info.h"

/* Narrower than this and wrapping does more harm than good. */
#define MIN_COLUMNS 20

size_t opal_info_terminal_width(int fd)
{
    if (!isatty(fd)) {
        return 0;
    }
    const char *columns = getenv("COLUMNS");
    if (NULL != columns && '\0' != columns[0]) {
        char *end = NULL;
        long n = strtol(columns, &end, 10);
        if ('\0' == *end && n >= MIN_COLUMNS && n <= 100000) {
            return (size_t) n;
        }
    }
    struct winsize size;
    if (0 == ioctl(fd, TIOCGWINSZ, &size) && size.ws_col >= MIN_COLUMNS) {
        return size.ws_col;
    }
    return 80;
}

/* Wraps one line (no '\n') of len bytes into out; returns the bytes
 * written. A break replaces the run of spaces before a word, so the
 * result is never longer than the line. */
static size_t wrap_line(const char *line, size_t len, size_t columns, char *out)
{
    size_t written = 0, used = 0, i = 0;
    /* The first word keeps the line's leading blanks. */
    while (i < len && ' ' == line[i]) {
        out[written++] = line[i++];
        ++used;
    }
    bool first = true;
    while (i < len) {
        size_t gap_start = i;
        while (i < len && ' ' == line[i]) {
            ++i;
        }
        if (i == len) {
            break; /* trailing blanks are dropped */
        }
        size_t word_start = i;
        while (i < len && ' ' != line[i]) {
            ++i;
        }
        size_t gap = word_start - gap_start, word = i - word_start;
        if (first || used + gap + word <= columns) {
            memcpy(out + written, line + gap_start, gap + word);
            written += gap + word;
            used += gap + word;
        } else {
            out[written++] = '\n';
            memcpy(out + written, line + word_start, word);
            written += word;
            used = word;
        }
        first = false;
    }
    return written;
}

char *opal_info_wrap(const char *text, size_t columns)
{
    if (0 == columns) {
        return strdup(text);
    }
    char *out = malloc(strlen(text) + 1);
    if (NULL == out) {
        return NULL;
    }
    size_t written = 0;
    const char *line = text;
    for (;;) {
        const char *end = strchr(line, '\n');
        size_t len = NULL != end ? (size_t) (end - line) : strlen(line);
        written += wrap_line(line, len, columns, out + written);
        if (NULL == end) {
            break;
        }
        out[written++] = '\n';
        line = end + 1;
    }
    out[written] = '\0';
    return out;
}

void opal_info_escape_parsable(FILE *out, const char *field)
{
    for (const unsigned char *p = (const unsigned char *) field; '\0' != *p; ++p) {
        switch (*p) {
            case '\\':
                fputs("\\\\", out);
                break;
            case ':':
                fputs("\\:", out);
                break;
            case '\n':
                fputs("\\n", out);
                break;
            case '\r':
                fputs("\\r", out);
                break;
            case '\t':
                fputs("\\t", out);
                break;
            default:
                if (*p < 0x20 || 0x7f == *p) {
                    fprintf(out, "\\x%02X", *p);
                } else {
                    fputc(*p, out);
                }
        }
    }
}

/* The length of the valid UTF-8 sequence at p (1 to 4), or 0 when p does
 * not start one (overlong forms, surrogates and code points past U+10FFFF
 * are invalid too). */
static size_t utf8_length(const unsigned char *p)
{
    if (p[0] < 0x80) {
        return 1;
    }
    size_t n;
    uint32_t cp, min;
    if (0xC0 == (p[0] & 0xE0)) {
        n = 2, cp = p[0] & 0x1Fu, min = 0x80;
    } else if (0xE0 == (p[0] & 0xF0)) {
        n = 3, cp = p[0] & 0x0Fu, min = 0x800;
    } else if (0xF0 == (p[0] & 0xF8)) {
        n = 4, cp = p[0] & 0x07u, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; ++i) {
        /* A NUL ends the string, and is not a continuation byte either. */
        if (0x80 != (p[i] & 0xC0)) {
            return 0;
        }
        cp = (cp << 6) | (p[i] & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return 0;
    }
    return n;
}

void opal_info_escape_json(FILE *out, const char *text)
{
    fputc('"', out);
    const unsigned char *p = (const unsigned char *) text;
    while ('\0' != *p) {
        switch (*p) {
            case '"':
                fputs("\\\"", out);
                break;
            case '\\':
                fputs("\\\\", out);
                break;
            case '\n':
                fputs("\\n", out);
                break;
            case '\r':
                fputs("\\r", out);
                break;
            case '\t':
                fputs("\\t", out);
                break;
            case '\b':
                fputs("\\b", out);
                break;
            case '\f':
                fputs("\\f", out);
                break;
            default:
                if (*p < 0x20) {
                    fprintf(out, "\\u%04x", *p);
                    break;
                }
                size_t n = utf8_length(p);
                if (0 == n) {
                    fputs("\\ufffd", out);
                    break;
                }
                fwrite(p, 1, n, out);
                p += n;
                continue;
        }
        ++p;
    }
    fputc('"', out);
}

void opal_info_pretty(opal_info_t *info, const char *label, const char *text)
{
    const size_t indent = OPAL_INFO_LABEL_WIDTH + 2;
    size_t columns = 0;
    if (0 != info->width) {
        columns = info->width > indent + MIN_COLUMNS ? info->width - indent : MIN_COLUMNS;
    }
    /* A label wider than the column pushes the first line right; the
     * wrapping of that line is not worth adjusting for it. */
    char *wrapped = opal_info_wrap(text, columns);
    const char *body = NULL != wrapped ? wrapped : text;
    if ('\0' != label[0]) {
        fprintf(info->out, "%*s: ", OPAL_INFO_LABEL_WIDTH, label);
    } else {
        fprintf(info->out, "%*s", (int) indent, "");
    }
    for (const char *p = body; '\0' != *p; ++p) {
        fputc(*p, info->out);
        if ('\n' == *p) {
            fprintf(info->out, "%*s", (int) indent, "");
        }
    }
    fputc('\n', info->out);
    free(wrapped);
}

void opal_info_prettyf(opal_info_t *info, const char *label, const char *format, ...)
{
    char *text = NULL;
    va_list ap;
    va_start(ap, format);
    int n = vasprintf(&text, format, ap);
    va_end(ap);
    if (n < 0) {
        info->failed = true;
        return;
    }
    opal_info_pretty(info, label, text);
    free(text);
}

void opal_info_error(opal_info_t *info, const char *format, ...)
{
    /* Whatever was printed so far comes first, as the user reads it. */
    fflush(info->out);
    fputs("opal_info: ", stderr);
    va_list ap;
    va_start(ap, format);
    vfprintf(stderr, format, ap);
    va_end(ap);
    fputc('\n', stderr);
    info->failed = true;
}
