/* The fake run-time environment: a small table, linear search (tests
 * store a handful of values), one lock around everything so that threaded
 * tests may call the hooks concurrently. */
#include "opal/opal_config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/opal_error.h"
#include "test/orte/fake_rte.h"

#define FAKE_RTE_MAX_VALUES 64

typedef struct stored_t {
    uint32_t rank;
    char key[OPAL_MODEX_MAX_KEY + 1];
    void *value;
    size_t size;
} stored_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static stored_t stored[FAKE_RTE_MAX_VALUES];
static int nstored;
static uint32_t self_rank;
static int get_error;
fake_rte_calls_t fake_rte_calls;

void fake_rte_reset(void)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nstored; ++i) {
        free(stored[i].value);
    }
    nstored = 0;
    self_rank = 0;
    get_error = 0;
    memset(&fake_rte_calls, 0, sizeof(fake_rte_calls));
    pthread_mutex_unlock(&lock);
}

void fake_rte_set_self(uint32_t rank)
{
    pthread_mutex_lock(&lock);
    self_rank = rank;
    pthread_mutex_unlock(&lock);
}

void fake_rte_fail_gets(int error)
{
    pthread_mutex_lock(&lock);
    get_error = error;
    pthread_mutex_unlock(&lock);
}

static stored_t *find(uint32_t rank, const char *key)
{
    for (int i = 0; i < nstored; ++i) {
        if (stored[i].rank == rank && 0 == strcmp(stored[i].key, key)) {
            return &stored[i];
        }
    }
    return NULL;
}

static void store_locked(uint32_t rank, const char *key, const void *value, size_t size)
{
    stored_t *slot = find(rank, key);
    if (NULL == slot) {
        if (nstored == FAKE_RTE_MAX_VALUES) {
            abort();
        }
        slot = &stored[nstored++];
        slot->rank = rank;
        snprintf(slot->key, sizeof(slot->key), "%s", key);
    } else {
        free(slot->value);
    }
    slot->value = malloc(size + 1);
    if (NULL == slot->value) {
        abort();
    }
    if (0 != size) {
        memcpy(slot->value, value, size);
    }
    slot->size = size;
}

void fake_rte_store(uint32_t rank, const char *key, const void *value, size_t size)
{
    pthread_mutex_lock(&lock);
    store_locked(rank, key, value, size);
    pthread_mutex_unlock(&lock);
}

const void *fake_rte_lookup(uint32_t rank, const char *key, size_t *size)
{
    pthread_mutex_lock(&lock);
    stored_t *slot = find(rank, key);
    const void *value = NULL;
    if (NULL != slot) {
        *size = slot->size;
        value = slot->value;
    }
    pthread_mutex_unlock(&lock);
    return value;
}

static int fake_put(const char *key, const void *value, size_t size, opal_modex_scope_t scope)
{
    pthread_mutex_lock(&lock);
    ++fake_rte_calls.put;
    snprintf(fake_rte_calls.last_key, sizeof(fake_rte_calls.last_key), "%s", key);
    fake_rte_calls.last_scope = scope;
    store_locked(self_rank, key, value, size);
    pthread_mutex_unlock(&lock);
    return OPAL_SUCCESS;
}

static int fake_commit(void)
{
    pthread_mutex_lock(&lock);
    ++fake_rte_calls.commit;
    pthread_mutex_unlock(&lock);
    return OPAL_SUCCESS;
}

static int fake_get(uint32_t peer, const char *key, void **value, size_t *size, int64_t timeout_ns)
{
    pthread_mutex_lock(&lock);
    ++fake_rte_calls.get;
    snprintf(fake_rte_calls.last_key, sizeof(fake_rte_calls.last_key), "%s", key);
    fake_rte_calls.last_peer = peer;
    fake_rte_calls.last_timeout_ns = timeout_ns;
    int rc = get_error;
    stored_t *slot = 0 == rc ? find(peer, key) : NULL;
    if (0 == rc && NULL == slot) {
        rc = OPAL_ERR_NOT_FOUND;
    }
    if (0 == rc) {
        *value = malloc(slot->size + 1);
        if (NULL == *value) {
            rc = OPAL_ERR_OUT_OF_RESOURCE;
        } else {
            if (0 != slot->size) {
                memcpy(*value, slot->value, slot->size);
            }
            *size = slot->size;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static int fake_fence(bool collect)
{
    pthread_mutex_lock(&lock);
    ++fake_rte_calls.fence;
    fake_rte_calls.fence_collect += collect ? 1 : 0;
    pthread_mutex_unlock(&lock);
    return OPAL_SUCCESS;
}

static int fake_abort(int status, const char *message)
{
    pthread_mutex_lock(&lock);
    ++fake_rte_calls.abort;
    fake_rte_calls.last_status = status;
    snprintf(fake_rte_calls.last_message, sizeof(fake_rte_calls.last_message), "%s", message);
    pthread_mutex_unlock(&lock);
    /* A real runtime does not return; the fake says it could not stop
     * the job, which the tests can observe. */
    return OPAL_ERR_UNREACH;
}

const opal_rte_hooks_t fake_rte_hooks = {
    .rte_name = "fake",
    .rte_modex_put = fake_put,
    .rte_modex_commit = fake_commit,
    .rte_modex_get = fake_get,
    .rte_fence = fake_fence,
    .rte_abort = fake_abort,
};
