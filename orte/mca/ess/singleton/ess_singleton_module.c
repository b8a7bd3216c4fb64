/*
 * ess/singleton operations: a job of one process. What it publishes is
 * kept in a table of its own, so a read of its own key works as under a
 * launcher, and a key it never published can never arrive.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/class/opal_hash_table.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "orte/mca/ess/base/base.h"
#include "orte/mca/ess/singleton/ess_singleton.h"
#include "orte/util/orte_session_dir.h"

/* One published value. */
typedef struct stored_value_t {
    size_t size;
    unsigned char bytes[];
} stored_value_t;

/* Guards values: the modex may be used from any thread. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static opal_hash_table_t values;
static bool values_constructed = false;
static char session_dir[ORTE_PATH_MAX];

static void drop_values(void)
{
    const void *key;
    size_t key_size;
    void *value;
    size_t cursor = 0;
    int rc = opal_hash_table_get_first_key_ptr(&values, &key, &key_size, &value, &cursor);
    while (OPAL_SUCCESS == rc) {
        free(value);
        rc = opal_hash_table_get_next_key_ptr(&values, &key, &key_size, &value, &cursor);
    }
    OBJ_DESTRUCT(&values);
    values_constructed = false;
}

static int singleton_init(orte_process_info_t *info)
{
    info->my_name.vpid = 0;
    info->size = 1;
    info->local_rank = 0;
    info->local_size = 1;
    info->node_id = 0;
    int rc = orte_ess_base_hostname(info->hostname, sizeof(info->hostname));
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    /* A fresh job: a jobid nobody on this machine uses, as mcarun picks. */
    rc = orte_session_dir_create((uint32_t) getpid(), &info->my_name.jobid, info->session_dir,
                                 sizeof(info->session_dir));
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    snprintf(session_dir, sizeof(session_dir), "%s", info->session_dir);
    OBJ_CONSTRUCT(&values, opal_hash_table_t);
    values_constructed = true;
    return OPAL_SUCCESS;
}

static int singleton_finalize(void)
{
    pthread_mutex_lock(&lock);
    if (values_constructed) {
        drop_values();
    }
    pthread_mutex_unlock(&lock);
    int rc = OPAL_SUCCESS;
    if ('\0' != session_dir[0]) {
        rc = orte_session_dir_remove(session_dir);
        session_dir[0] = '\0';
    }
    return rc;
}

static int singleton_put(const char *key, const void *value, size_t size, opal_modex_scope_t scope)
{
    (void) scope;
    stored_value_t *stored = malloc(sizeof(*stored) + size);
    if (NULL == stored) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    stored->size = size;
    if (0 != size) {
        memcpy(stored->bytes, value, size);
    }
    pthread_mutex_lock(&lock);
    void *old = NULL;
    if (OPAL_SUCCESS != opal_hash_table_get_value_ptr(&values, key, strlen(key), &old)) {
        old = NULL;
    }
    int rc = opal_hash_table_set_value_ptr(&values, key, strlen(key), stored);
    pthread_mutex_unlock(&lock);
    if (OPAL_SUCCESS != rc) {
        free(stored);
        return rc;
    }
    free(old);
    return OPAL_SUCCESS;
}

static int singleton_commit(void)
{
    return OPAL_SUCCESS;
}

static int singleton_get(uint32_t peer, const char *key, void **value, size_t *size,
                         int64_t timeout_ns)
{
    (void) timeout_ns;
    *value = NULL;
    *size = 0;
    if (0 != peer) {
        opal_output(0,
                    "ess/singleton: rank %" PRIu32 " does not exist: this process runs alone "
                    "(rank 0 of 1)",
                    peer);
        return OPAL_ERR_BAD_PARAM;
    }
    pthread_mutex_lock(&lock);
    void *found = NULL;
    int rc = opal_hash_table_get_value_ptr(&values, key, strlen(key), &found);
    if (OPAL_SUCCESS == rc) {
        const stored_value_t *stored = found;
        *size = stored->size;
        *value = NULL;
        if (0 != stored->size) {
            *value = malloc(stored->size);
            if (NULL == *value) {
                rc = OPAL_ERR_OUT_OF_RESOURCE;
            } else {
                memcpy(*value, stored->bytes, stored->size);
            }
        }
    }
    pthread_mutex_unlock(&lock);
    /* A missing key is OPAL_ERR_NOT_FOUND at once: nobody else can ever
     * publish it, so waiting for the timeout would change nothing. */
    return rc;
}

static int singleton_fence(bool collect)
{
    (void) collect;
    return OPAL_SUCCESS;
}

static int singleton_abort(int status, const char *message)
{
    opal_output(0, "rank 0 (pid %ld) aborted the job with status %d: %s", (long) getpid(), status,
                message);
    fflush(NULL);
    /* The job is this process: ending it is the abort. */
    /* As under mcarun: the low 8 bits, and an abort never exits 0. */
    _exit(0 == (status & 0xff) ? 1 : status & 0xff);
}

orte_ess_base_module_t mca_ess_singleton_module = {
    .ess_init = singleton_init,
    .ess_finalize = singleton_finalize,
    .ess_rte =
        {
            .rte_name = "ess/singleton",
            .rte_modex_put = singleton_put,
            .rte_modex_commit = singleton_commit,
            .rte_modex_get = singleton_get,
            .rte_fence = singleton_fence,
            .rte_abort = singleton_abort,
        },
};
