/*
 * The group file: opal_rpc_group_save writes a group's members (rank,
 * pid, host, URI) and opal_rpc_group_attach makes a group of them in a
 * process outside the job. Line oriented text, so that an administrator
 * can read it and an error can name the line:
 *
 *   # comments and blank lines are skipped
 *   opal_rpc_group 1
 *   name <group name>
 *   version <membership version>
 *   size <n>
 *   <rank> <pid> <host> <uri>        n lines, ranks 0 .. n-1 in order
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/mca/rpc/base/rpc_base_group.h"
#include "opal/mca/rpc/base/rpc_base_group_file.h"
#include "opal/mca/rpc/base/rpc_base_internal.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

/* A file larger than this is refused before it is read. */
#define GROUP_FILE_MAX_BYTES (64u << 20)

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

/* ------------------------------------------------------------ saving */

/* One member's (pid host, uri) from the modex, or this process's own. */
static int member_line(uint32_t primary_rank, uint32_t rank, FILE *f)
{
    char *uri = NULL, *proc = NULL;
    int rc = opal_rpc_base_group_modex_uri(primary_rank, OPAL_RPC_MODEX_URI, &uri);
    if (OPAL_SUCCESS == rc) {
        rc = opal_rpc_base_group_modex_uri(primary_rank, OPAL_RPC_MODEX_PROC, &proc);
    }
    if (OPAL_SUCCESS == rc) {
        long pid = 0;
        char host[256];
        if (2 != sscanf(proc, "%ld %255s", &pid, host) || pid <= 0) {
            opal_output(0, "rpc: rank %u published a malformed %s ('%s')", primary_rank,
                        OPAL_RPC_MODEX_PROC, proc);
            rc = OPAL_ERR_PROTOCOL;
        } else if (NULL != strpbrk(uri, " \t\n")) {
            opal_output(0, "rpc: rank %u's URI '%s' has white space", primary_rank, uri);
            rc = OPAL_ERR_PROTOCOL;
        } else if (fprintf(f, "%u %ld %s %s\n", rank, pid, host, uri) < 0) {
            rc = OPAL_ERR_IN_ERRNO;
        }
    }
    free(uri);
    free(proc);
    return rc;
}

int opal_rpc_group_save(opal_rpc_group_t *group, const char *path)
{
    if (NULL == group || NULL == path) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (RPC_GROUP_ATTACHED == group->kind) {
        opal_output(0, "rpc: group '%s' was attached from a file: save it from a member",
                    group->name);
        return OPAL_ERR_NOT_SUPPORTED;
    }
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long) getpid());
    FILE *f = fopen(tmp, "w");
    if (NULL == f) {
        opal_output(0, "rpc: saving group '%s': cannot create %s: %s", group->name, tmp,
                    strerror(errno));
        return OPAL_ERR_IN_ERRNO;
    }
    int rc = OPAL_SUCCESS;
    if (fprintf(f, "# rpc group '%s', saved by opal_rpc_group_save\n%s\nname %s\n", group->name,
                OPAL_RPC_GROUP_FILE_MAGIC, group->name) < 0 ||
        fprintf(f, "version %llu\nsize %u\n", (unsigned long long) opal_rpc_group_version(group),
                group->size) < 0) {
        rc = OPAL_ERR_IN_ERRNO;
    }
    for (uint32_t r = 0; r < group->size && OPAL_SUCCESS == rc; ++r) {
        rc = member_line(RPC_GROUP_SUB == group->kind ? group->primary_ranks[r] : r, r, f);
    }
    if (0 != fclose(f) && OPAL_SUCCESS == rc) {
        rc = OPAL_ERR_IN_ERRNO;
    }
    if (OPAL_SUCCESS == rc && 0 != rename(tmp, path)) {
        opal_output(0, "rpc: saving group '%s': renaming %s to %s: %s", group->name, tmp, path,
                    strerror(errno));
        rc = OPAL_ERR_IN_ERRNO;
    }
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "rpc: saving group '%s' to %s: %s", group->name, path, opal_strerror(rc));
        unlink(tmp);
    }
    return rc;
}

/* ---------------------------------------------------------- attaching */

static int read_file(const char *path, char **text, size_t *len)
{
    FILE *f = fopen(path, "r");
    struct stat st;
    if (NULL == f) {
        opal_output(0, "rpc: group file %s: %s", path, strerror(errno));
        return OPAL_ERR_NOT_FOUND;
    }
    if (0 != fstat(fileno(f), &st) || st.st_size < 0 ||
        (uint64_t) st.st_size > GROUP_FILE_MAX_BYTES) {
        opal_output(0, "rpc: group file %s: not a readable file of at most %u bytes", path,
                    GROUP_FILE_MAX_BYTES);
        fclose(f);
        return OPAL_ERR_PARSE;
    }
    *text = malloc((size_t) st.st_size + 1);
    if (NULL == *text) {
        fclose(f);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    *len = fread(*text, 1, (size_t) st.st_size, f);
    fclose(f);
    return OPAL_SUCCESS;
}

int opal_rpc_group_attach(const char *path, opal_rpc_group_t **group)
{
    char *text = NULL, why[512];
    size_t len = 0;
    rpc_group_file_t file;
    if (NULL == path || NULL == group) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (0 == opal_rpc_engine.refcount) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    int rc = read_file(path, &text, &len);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = opal_rpc_base_group_file_parse(text, len, path, &file, why, sizeof(why));
    free(text);
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "rpc: group file %s", why);
        return rc;
    }
    /* Members on this host whose process is gone are dead; when every
     * member is, the file was left by a job that ended. */
    char host[256] = "";
    (void) gethostname(host, sizeof(host) - 1);
    opal_rpc_group_t *g = opal_rpc_base_group_alloc(file.name, RPC_GROUP_ATTACHED, file.size);
    if (NULL == g) {
        opal_rpc_base_group_file_free(&file);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    uint32_t gone = 0;
    for (uint32_t r = 0; r < file.size; ++r) {
        if (0 == strcmp(file.hosts[r], host) && 0 != kill((pid_t) file.pids[r], 0) &&
            ESRCH == errno) {
            g->state[r] = OPAL_RPC_MEMBER_DEAD;
            ++gone;
        }
    }
    if (gone == file.size) {
        opal_output(0,
                    "rpc: group file %s:%u: stale: rank 0 (pid %ld on %s) and every other "
                    "member are gone (the job that saved it ended)",
                    path, file.lines[0], file.pids[0], file.hosts[0]);
        opal_rpc_base_group_release(g);
        opal_rpc_base_group_file_free(&file);
        return OPAL_ERR_NOT_FOUND;
    }
    g->version = file.version;
    g->uris = file.uris;
    g->hosts = file.hosts;
    g->pids = malloc(file.size * sizeof(pid_t));
    file.uris = NULL;
    file.hosts = NULL;
    if (NULL != g->pids) {
        for (uint32_t r = 0; r < file.size; ++r) {
            g->pids[r] = (pid_t) file.pids[r];
        }
    }
    opal_rpc_base_group_file_free(&file);
    if (NULL == g->pids) {
        opal_rpc_base_group_release(g);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    rc = opal_rpc_base_group_add(g);
    if (OPAL_SUCCESS != rc) {
        opal_rpc_base_group_release(g);
        return rc;
    }
    *group = g;
    return OPAL_SUCCESS;
}
