/*
 * A run-time environment for the tests of opal_rte and opal_proc: a table
 * of (rank, key) -> bytes that the tests fill for peers, and counters of
 * every hook call, so that a test can check what opal sent and when.
 */
#ifndef OPAL_TEST_ORTE_FAKE_RTE_H
#define OPAL_TEST_ORTE_FAKE_RTE_H

#include "opal/opal_config.h"

#include <stddef.h>
#include <stdint.h>

#include "opal/runtime/opal_rte.h"

typedef struct fake_rte_calls_t {
    int put;
    int commit;
    int get;
    int fence;
    int fence_collect;
    int abort;
    /* What the last put / get / abort was given. */
    char last_key[OPAL_MODEX_MAX_KEY + 1];
    uint32_t last_peer;
    int64_t last_timeout_ns;
    opal_modex_scope_t last_scope;
    int last_status;
    char last_message[256];
} fake_rte_calls_t;

/* The hooks (rte_name "fake"), installed by the tests themselves. */
extern const opal_rte_hooks_t fake_rte_hooks;
extern fake_rte_calls_t fake_rte_calls;

/* Forgets every stored value and zeroes the counters. */
void fake_rte_reset(void);

/* Stores value as what rank published under key (rank's own puts land
 * here too, under the rank set by fake_rte_set_self). */
void fake_rte_store(uint32_t rank, const char *key, const void *value, size_t size);

/* Which rank this process is (where puts are stored). */
void fake_rte_set_self(uint32_t rank);

/* What rank published under key, or NULL (size in *size). */
const void *fake_rte_lookup(uint32_t rank, const char *key, size_t *size);

/* Makes every get return this error instead of looking (0: look). */
void fake_rte_fail_gets(int error);

#endif /* OPAL_TEST_ORTE_FAKE_RTE_H */
