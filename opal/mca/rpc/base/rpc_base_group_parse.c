/*
 * The group file's parser (the format is in rpc_base_group_file.c and
 * docs/rpc.md): bytes in, members out, every error naming the source and
 * the line. Apart from the rest so that the fuzz target covers it alone.
 */
#include "opal/opal_config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/rpc/base/rpc_base_group_file.h"
#include "opal/util/opal_error.h"

bool opal_rpc_base_group_name_ok(const char *name)
{
    if (NULL == name || '\0' == name[0] || strlen(name) > OPAL_RPC_GROUP_NAME_MAX) {
        return false;
    }
    for (const char *p = name; '\0' != *p; ++p) {
        char c = *p;
        if (!(('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') ||
              '_' == c || '-' == c || '.' == c)) {
            return false;
        }
    }
    return true;
}

void opal_rpc_base_group_file_free(rpc_group_file_t *file)
{
    for (uint32_t r = 0; r < file->size; ++r) {
        if (NULL != file->hosts) {
            free(file->hosts[r]);
        }
        if (NULL != file->uris) {
            free(file->uris[r]);
        }
    }
    free(file->hosts);
    free(file->uris);
    free(file->pids);
    free(file->lines);
    memset(file, 0, sizeof(*file));
}

static int parse_error(char *why, size_t why_size, const char *source, uint32_t line,
                       const char *format, ...) OPAL_PRINTF_LIKE(5, 6);
static int parse_error(char *why, size_t why_size, const char *source, uint32_t line,
                       const char *format, ...)
{
    char reason[256];
    va_list ap;
    va_start(ap, format);
    vsnprintf(reason, sizeof(reason), format, ap);
    va_end(ap);
    snprintf(why, why_size, "%s:%u: %s", source, line, reason);
    return OPAL_ERR_PARSE;
}

/* Splits line into at most max space-separated words (in place). */
static int split(char *line, char **words, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *w = strtok_r(line, " \t\r", &save); NULL != w; w = strtok_r(NULL, " \t\r", &save)) {
        if (n == max) {
            return max + 1;
        }
        words[n++] = w;
    }
    return n;
}

/* A decimal number in [0, max], the whole word. */
static bool number(const char *word, uint64_t max, uint64_t *value)
{
    if ('\0' == word[0] || strlen(word) > 20) {
        return false;
    }
    uint64_t v = 0;
    for (const char *p = word; '\0' != *p; ++p) {
        if (*p < '0' || *p > '9') {
            return false;
        }
        uint64_t d = (uint64_t) (*p - '0');
        if (v > (max - d) / 10) {
            return false;
        }
        v = v * 10 + d;
    }
    *value = v;
    return true;
}

int opal_rpc_base_group_file_parse(const char *text, size_t len, const char *source,
                                   rpc_group_file_t *file, char *why, size_t why_size)
{
    enum {
        EXPECT_MAGIC,
        EXPECT_NAME,
        EXPECT_VERSION,
        EXPECT_SIZE,
        EXPECT_MEMBERS,
        EXPECT_END
    } expect = EXPECT_MAGIC;
    uint32_t line = 0, members = 0;
    int rc = OPAL_SUCCESS;
    memset(file, 0, sizeof(*file));
    size_t pos = 0;
    char buf[4096];
    while (pos < len && OPAL_SUCCESS == rc) {
        size_t end = pos;
        while (end < len && '\n' != text[end]) {
            ++end;
        }
        ++line;
        size_t n = end - pos;
        if (n >= sizeof(buf)) {
            rc = parse_error(why, why_size, source, line, "line longer than %zu bytes",
                             sizeof(buf) - 1);
            break;
        }
        memcpy(buf, text + pos, n);
        buf[n] = '\0';
        pos = end + 1;
        if (strlen(buf) != n) {
            rc = parse_error(why, why_size, source, line, "a NUL byte inside the line");
            break;
        }
        char *words[5];
        char *start = buf + strspn(buf, " \t\r");
        if ('\0' == *start || '#' == *start) {
            continue;
        }
        int count = split(start, words, 4);
        uint64_t v = 0;
        switch (expect) {
            case EXPECT_MAGIC:
                if (2 != count || 0 != strcmp(words[0], "opal_rpc_group") ||
                    0 != strcmp(words[1], "1")) {
                    rc = parse_error(why, why_size, source, line,
                                     "not a group file of this version (expected '%s')",
                                     OPAL_RPC_GROUP_FILE_MAGIC);
                }
                expect = EXPECT_NAME;
                break;
            case EXPECT_NAME:
                if (2 != count || 0 != strcmp(words[0], "name") ||
                    !opal_rpc_base_group_name_ok(words[1])) {
                    rc = parse_error(why, why_size, source, line,
                                     "expected 'name <group name>' (1..%d letters, digits, "
                                     "'_', '-', '.')",
                                     OPAL_RPC_GROUP_NAME_MAX);
                    break;
                }
                snprintf(file->name, sizeof(file->name), "%s", words[1]);
                expect = EXPECT_VERSION;
                break;
            case EXPECT_VERSION:
                if (2 != count || 0 != strcmp(words[0], "version") ||
                    !number(words[1], UINT64_MAX, &file->version)) {
                    rc = parse_error(why, why_size, source, line, "expected 'version <number>'");
                }
                expect = EXPECT_SIZE;
                break;
            case EXPECT_SIZE:
                if (2 != count || 0 != strcmp(words[0], "size") ||
                    !number(words[1], OPAL_RPC_GROUP_FILE_MAX_SIZE, &v) || 0 == v) {
                    rc = parse_error(why, why_size, source, line, "expected 'size <ranks>' (1..%u)",
                                     OPAL_RPC_GROUP_FILE_MAX_SIZE);
                    break;
                }
                /* Each member takes a line of at least 8 bytes: a size the
                 * rest of the file cannot hold is refused before it is
                 * allocated. */
                if (v > (pos < len ? len - pos : 0) / 8 + 1) {
                    rc = parse_error(why, why_size, source, line,
                                     "size %llu, but the file is too short for that many members",
                                     (unsigned long long) v);
                    break;
                }
                file->size = (uint32_t) v;
                file->pids = calloc(v, sizeof(long));
                file->hosts = calloc(v, sizeof(char *));
                file->uris = calloc(v, sizeof(char *));
                file->lines = calloc(v, sizeof(uint32_t));
                if (NULL == file->pids || NULL == file->hosts || NULL == file->uris ||
                    NULL == file->lines) {
                    rc = OPAL_ERR_OUT_OF_RESOURCE;
                    snprintf(why, why_size, "%s: no memory for %llu members", source,
                             (unsigned long long) v);
                }
                expect = EXPECT_MEMBERS;
                break;
            case EXPECT_MEMBERS: {
                uint64_t rank = 0, pid = 0;
                if (4 != count) {
                    rc = parse_error(why, why_size, source, line,
                                     "expected '<rank> <pid> <host> <uri>'");
                    break;
                }
                if (!number(words[0], UINT32_MAX, &rank) || rank != members) {
                    rc = parse_error(why, why_size, source, line,
                                     "rank '%s' where rank %u was expected (ranks in order)",
                                     words[0], members);
                    break;
                }
                if (!number(words[1], INT32_MAX, &pid) || 0 == pid) {
                    rc = parse_error(why, why_size, source, line, "rank %u: bad pid '%s'", members,
                                     words[1]);
                    break;
                }
                file->pids[members] = (long) pid;
                file->lines[members] = line;
                file->hosts[members] = strdup(words[2]);
                file->uris[members] = strdup(words[3]);
                if (NULL == file->hosts[members] || NULL == file->uris[members]) {
                    rc = OPAL_ERR_OUT_OF_RESOURCE;
                    snprintf(why, why_size, "%s: no memory", source);
                    break;
                }
                if (++members == file->size) {
                    expect = EXPECT_END;
                }
                break;
            }
            case EXPECT_END:
                rc = parse_error(why, why_size, source, line,
                                 "a line after the %u members the size announced", file->size);
                break;
        }
    }
    if (OPAL_SUCCESS == rc && EXPECT_END != expect) {
        static const char *const wanted[] = {"the 'opal_rpc_group 1' line", "the name line",
                                             "the version line", "the size line",
                                             "member lines (fewer than its size)"};
        rc = parse_error(why, why_size, source, line, "the file ends early: missing %s",
                         wanted[expect]);
    }
    if (OPAL_SUCCESS != rc) {
        opal_rpc_base_group_file_free(file);
    }
    return rc;
}
