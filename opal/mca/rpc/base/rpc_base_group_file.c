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
#include "opal/util/opal_pid.h"

/* A file larger than this is refused before it is read. */
#define GROUP_FILE_MAX_BYTES (64u << 20)

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
        if (0 == strcmp(file.hosts[r], host) && opal_pid_exited((pid_t) file.pids[r])) {
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
