/* The fake run-time environment: a small table, linear search (tests
 * store a handful of values). */
#include "opal/opal_config.h"

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

static stored_t stored[FAKE_RTE_MAX_VALUES];
static int nstored;
static uint32_t self_rank;
static int get_error;
fake_rte_calls_t fake_rte_calls;

void fake_rte_reset(void)
{
    for (int i = 0; i < nstored; ++i) {
        free(stored[i].value);
    }
    nstored = 0;
    self_rank = 0;
    get_error = 0;
    memset(&fake_rte_calls, 0, sizeof(fake_rte_calls));
}

void fake_rte_set_self(uint32_t rank)
{
    self_rank = rank;
}

void fake_rte_fail_gets(int error)
{
    get_error = error;
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

void fake_rte_store(uint32_t rank, const char *key, const void *value, size_t size)
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

const void *fake_rte_lookup(uint32_t rank, const char *key, size_t *size)
{
    stored_t *slot = find(rank, key);
    if (NULL == slot) {
        return NULL;
    }
    *size = slot->size;
    return slot->value;
}

static int fake_put(const char *key, const void *value, size_t size, opal_modex_scope_t scope)
{
    ++fake_rte_calls.put;
    snprintf(fake_rte_calls.last_key, sizeof(fake_rte_calls.last_key), "%s", key);
    fake_rte_calls.last_scope = scope;
    fake_rte_store(self_rank, key, value, size);
    return OPAL_SUCCESS;
}

static int fake_commit(void)
{
    ++fake_rte_calls.commit;
    return OPAL_SUCCESS;
}

static int fake_get(uint32_t peer, const char *key, void **value, size_t *size, int64_t timeout_ns)
{
    ++fake_rte_calls.get;
    snprintf(fake_rte_calls.last_key, sizeof(fake_rte_calls.last_key), "%s", key);
    fake_rte_calls.last_peer = peer;
    fake_rte_calls.last_timeout_ns = timeout_ns;
    if (0 != get_error) {
        return get_error;
    }
    stored_t *slot = find(peer, key);
    if (NULL == slot) {
        return OPAL_ERR_NOT_FOUND;
    }
    *value = malloc(slot->size + 1);
    if (NULL == *value) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (0 != slot->size) {
        memcpy(*value, slot->value, slot->size);
    }
    *size = slot->size;
    return OPAL_SUCCESS;
}

static int fake_fence(bool collect)
{
    ++fake_rte_calls.fence;
    fake_rte_calls.fence_collect += collect ? 1 : 0;
    return OPAL_SUCCESS;
}

static int fake_abort(int status, const char *message)
{
    ++fake_rte_calls.abort;
    fake_rte_calls.last_status = status;
    snprintf(fake_rte_calls.last_message, sizeof(fake_rte_calls.last_message), "%s", message);
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
