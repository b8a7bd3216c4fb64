/*
 * The table of the job's processes: this process, described at
 * opal_proc_init, and its peers, each built on first lookup from the
 * record it published under OPAL_PROC_MODEX_KEY:
 *
 *     node=<node id>;host=<host name>;cpuset=<hwloc list, empty if unbound>
 *
 * A record is text so that it reads the same on every architecture; it
 * comes from another process, so it is checked field by field.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_proc_internal.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

/* A record longer than this is refused: host names are at most 255
 * characters and a cpuset list of a few thousand CPUs fits easily. */
#define RECORD_MAX 16384

static void proc_construct(opal_proc_t *proc)
{
    proc->proc_name.jobid = 0;
    proc->proc_name.vpid = 0;
    proc->proc_node_id = 0;
    proc->proc_hostname = NULL;
    proc->proc_cpuset = NULL;
    proc->proc_locality = OPAL_PROC_LOCALITY_NONE;
}

static void proc_destruct(opal_proc_t *proc)
{
    free(proc->proc_hostname);
    free(proc->proc_cpuset);
}

OBJ_CLASS_INSTANCE(opal_proc_t, opal_list_item_t, proc_construct, proc_destruct);

/* Lock order: table_lock, then the topology lock in opal_proc_locality.c.
 * table_lock is never held across a modex read, which may wait for a
 * peer (init holds it across the local put and commit). */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static bool initialized = false;
static opal_proc_job_info_t job;
static opal_proc_t *local_proc = NULL;
/* job.size entries, NULL until looked up; local_proc is not in it. */
static opal_proc_t **peers = NULL;

const char *opal_proc_name_string(const opal_process_name_t *name)
{
    static _Thread_local char text[32];
    if (NULL == name) {
        return "[null]";
    }
    snprintf(text, sizeof(text), "[%" PRIu32 ",%" PRIu32 "]", name->jobid, name->vpid);
    return text;
}

static int encode_record(const opal_proc_t *proc, char **record)
{
    int n = asprintf(record, "node=%" PRIu32 ";host=%s;cpuset=%s", proc->proc_node_id,
                     proc->proc_hostname, NULL == proc->proc_cpuset ? "" : proc->proc_cpuset);
    if (n < 0) {
        *record = NULL;
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    return OPAL_SUCCESS;
}

/* Returns the value of field name at *cursor (which must start with
 * "name="), up to the next ';' or the end, and moves *cursor past it. */
static char *take_field(char **cursor, const char *name)
{
    size_t len = strlen(name);
    if (0 != strncmp(*cursor, name, len) || '=' != (*cursor)[len]) {
        return NULL;
    }
    char *value = *cursor + len + 1;
    char *end = strchr(value, ';');
    if (NULL != end) {
        *end = '\0';
        *cursor = end + 1;
    } else {
        *cursor = value + strlen(value);
    }
    return value;
}

static bool is_cpuset_list(const char *text)
{
    for (const char *c = text; '\0' != *c; ++c) {
        if (!((*c >= '0' && *c <= '9') || ',' == *c || '-' == *c)) {
            return false;
        }
    }
    return true;
}

int opal_proc_decode_record(uint32_t rank, const void *value, size_t size, opal_proc_t *proc)
{
    if (NULL == value || 0 == size || size > RECORD_MAX) {
        opal_output(0,
                    "opal_proc: rank %" PRIu32 " published a %zu-byte '%s' record (expected "
                    "1 to %d bytes)",
                    rank, size, OPAL_PROC_MODEX_KEY, RECORD_MAX);
        return OPAL_ERR_PROTOCOL;
    }
    /* A NUL inside the value would cut the text short. */
    if (NULL != memchr(value, '\0', size)) {
        opal_output(0, "opal_proc: rank %" PRIu32 " published a '%s' record holding a NUL byte",
                    rank, OPAL_PROC_MODEX_KEY);
        return OPAL_ERR_PROTOCOL;
    }
    char *text = malloc(size + 1);
    if (NULL == text) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    memcpy(text, value, size);
    text[size] = '\0';

    int rc = OPAL_ERR_PROTOCOL;
    char *cursor = text;
    char *node = take_field(&cursor, "node");
    char *host = NULL == node ? NULL : take_field(&cursor, "host");
    char *cpuset = NULL == host ? NULL : take_field(&cursor, "cpuset");
    if (NULL == cpuset || '\0' != *cursor) {
        goto bad;
    }
    if (strlen(node) == 0 || strlen(node) > 10 || strspn(node, "0123456789") != strlen(node)) {
        goto bad;
    }
    unsigned long long node_id = strtoull(node, NULL, 10);
    if (node_id > UINT32_MAX || '\0' == host[0] || strlen(host) > 255 || !is_cpuset_list(cpuset)) {
        goto bad;
    }
    proc->proc_node_id = (uint32_t) node_id;
    proc->proc_hostname = strdup(host);
    proc->proc_cpuset = '\0' == cpuset[0] ? NULL : strdup(cpuset);
    if (NULL == proc->proc_hostname || ('\0' != cpuset[0] && NULL == proc->proc_cpuset)) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    rc = OPAL_SUCCESS;
    goto out;

bad:
    opal_output(0,
                "opal_proc: rank %" PRIu32 " published a malformed '%s' record: \"%.*s\" "
                "(expected node=<id>;host=<name>;cpuset=<list>)",
                rank, OPAL_PROC_MODEX_KEY, (int) (size < 200 ? size : 200), (const char *) value);
out:
    free(text);
    return rc;
}

static void forget_job(void)
{
    free((char *) job.hostname);
    free((char *) job.session_dir);
    memset(&job, 0, sizeof(job));
}

static int publish_local(void)
{
    char *record = NULL;
    int rc = encode_record(local_proc, &record);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = opal_modex_send(OPAL_PROC_MODEX_KEY, record, strlen(record), OPAL_MODEX_SCOPE_GLOBAL);
    free(record);
    if (OPAL_SUCCESS == rc) {
        rc = opal_modex_commit();
    }
    return rc;
}

int opal_proc_init(const opal_proc_job_info_t *info)
{
    if (NULL == info || NULL == info->hostname || NULL == info->session_dir || 0 == info->size ||
        info->my_name.vpid >= info->size || 0 == info->local_size ||
        info->local_rank >= info->local_size || info->local_size > info->size) {
        return OPAL_ERR_BAD_PARAM;
    }
    pthread_mutex_lock(&table_lock);
    if (initialized) {
        pthread_mutex_unlock(&table_lock);
        return OPAL_ERR_EXISTS;
    }
    int rc = OPAL_ERR_OUT_OF_RESOURCE;
    job = *info;
    job.hostname = strdup(info->hostname);
    job.session_dir = strdup(info->session_dir);
    peers = calloc(info->size, sizeof(*peers));
    local_proc = OBJ_NEW(opal_proc_t);
    if (NULL == job.hostname || NULL == job.session_dir || NULL == peers || NULL == local_proc) {
        goto fail;
    }
    local_proc->proc_name = info->my_name;
    local_proc->proc_node_id = info->node_id;
    local_proc->proc_locality = OPAL_PROC_ON_NODE | OPAL_PROC_ON_PACKAGE | OPAL_PROC_ON_NUMA;
    local_proc->proc_hostname = strdup(info->hostname);
    if (NULL == local_proc->proc_hostname) {
        goto fail;
    }
    rc = opal_proc_get_binding(&local_proc->proc_cpuset);
    if (OPAL_SUCCESS != rc) {
        goto fail;
    }
    rc = publish_local();
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "opal_proc_init: publishing this process's '%s' record failed: %s",
                    OPAL_PROC_MODEX_KEY, opal_strerror(rc));
        goto fail;
    }
    initialized = true;
    pthread_mutex_unlock(&table_lock);
    return OPAL_SUCCESS;

fail:
    if (NULL != local_proc) {
        OBJ_RELEASE(local_proc);
    }
    free(peers);
    peers = NULL;
    forget_job();
    pthread_mutex_unlock(&table_lock);
    return rc;
}

void opal_proc_finalize(void)
{
    pthread_mutex_lock(&table_lock);
    if (initialized) {
        for (uint32_t i = 0; i < job.size; ++i) {
            if (NULL != peers[i]) {
                OBJ_RELEASE(peers[i]);
            }
        }
        free(peers);
        peers = NULL;
        OBJ_RELEASE(local_proc);
        forget_job();
        initialized = false;
    }
    opal_proc_topology_release();
    pthread_mutex_unlock(&table_lock);
}

const opal_proc_job_info_t *opal_proc_job_info(void)
{
    pthread_mutex_lock(&table_lock);
    const opal_proc_job_info_t *info = initialized ? &job : NULL;
    pthread_mutex_unlock(&table_lock);
    return info;
}

opal_proc_t *opal_proc_local_get(void)
{
    pthread_mutex_lock(&table_lock);
    opal_proc_t *proc = initialized ? local_proc : NULL;
    pthread_mutex_unlock(&table_lock);
    return proc;
}

/* Builds the proc of rank from its record; called without table_lock. */
static int build_peer(uint32_t rank, const opal_process_name_t *my_name, uint32_t my_node,
                      const char *my_cpuset, int64_t timeout_ns, opal_proc_t **out)
{
    void *value = NULL;
    size_t size = 0;
    int rc = opal_modex_recv(rank, OPAL_PROC_MODEX_KEY, &value, &size, timeout_ns);
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "opal_proc: no '%s' record from rank %" PRIu32 ": %s", OPAL_PROC_MODEX_KEY,
                    rank, opal_strerror(rc));
        return rc;
    }
    opal_proc_t *proc = OBJ_NEW(opal_proc_t);
    if (NULL == proc) {
        free(value);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    proc->proc_name.jobid = my_name->jobid;
    proc->proc_name.vpid = rank;
    rc = opal_proc_decode_record(rank, value, size, proc);
    free(value);
    if (OPAL_SUCCESS == rc) {
        rc = opal_proc_compute_locality(NULL, my_node, my_cpuset, proc->proc_node_id,
                                        proc->proc_cpuset, &proc->proc_locality);
        if (OPAL_SUCCESS != rc) {
            opal_output(0,
                        "opal_proc: rank %" PRIu32 " published a cpuset '%s' that does not "
                        "parse",
                        rank, proc->proc_cpuset);
            rc = OPAL_ERR_PROTOCOL;
        }
    }
    if (OPAL_SUCCESS != rc) {
        OBJ_RELEASE(proc);
        return rc;
    }
    *out = proc;
    return OPAL_SUCCESS;
}

int opal_proc_for_rank(uint32_t rank, opal_proc_t **proc)
{
    if (NULL == proc) {
        return OPAL_ERR_BAD_PARAM;
    }
    *proc = NULL;
    pthread_mutex_lock(&table_lock);
    if (!initialized) {
        pthread_mutex_unlock(&table_lock);
        return OPAL_ERR_NOT_INITIALIZED;
    }
    if (rank >= job.size) {
        pthread_mutex_unlock(&table_lock);
        return OPAL_ERR_BAD_PARAM;
    }
    if (rank == job.my_name.vpid || NULL != peers[rank]) {
        *proc = rank == job.my_name.vpid ? local_proc : peers[rank];
        pthread_mutex_unlock(&table_lock);
        return OPAL_SUCCESS;
    }
    /* Copies, so that the lookup runs without the lock; the local proc
     * lives until opal_proc_finalize, which no lookup may race with. */
    opal_process_name_t my_name = job.my_name;
    uint32_t my_node = local_proc->proc_node_id;
    const char *my_cpuset = local_proc->proc_cpuset;
    int64_t timeout_ns = job.lookup_timeout_ns;
    pthread_mutex_unlock(&table_lock);

    opal_proc_t *built = NULL;
    int rc = build_peer(rank, &my_name, my_node, my_cpuset, timeout_ns, &built);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    pthread_mutex_lock(&table_lock);
    if (NULL == peers[rank]) {
        peers[rank] = built;
        built = NULL;
    }
    *proc = peers[rank];
    pthread_mutex_unlock(&table_lock);
    /* Another thread built the same peer first: keep its copy. */
    if (NULL != built) {
        OBJ_RELEASE(built);
    }
    return OPAL_SUCCESS;
}
