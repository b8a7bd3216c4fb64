/*
 * What the sched tests share: starting the framework with a chosen policy
 * (and its variables) from the build tree's plugins, waiting for a
 * scheduler to finish, and a thread-safe log of events.
 */
#ifndef OPAL_TEST_SCHED_SCHED_TEST_SUPPORT_H
#define OPAL_TEST_SCHED_SCHED_TEST_SUPPORT_H

#include "opal/opal_config.h"

#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/sched/sched.h"
#include "opal/util/opal_error.h"

/* The policies every engine test runs under (Check loop index). */
static const char *const sched_test_policies[] = {"fifo", "prio", "pool"};
#define SCHED_TEST_NPOLICIES 3

/* Selects policy (and, optionally, one more variable: name=value) through
 * the environment, as a user would, then opens the framework and creates
 * a scheduler. */
static inline opal_sched_t *sched_test_start(const char *policy, const char *var, const char *value)
{
    setenv("OPAL_MCA_mca_base_component_path", SCHED_TEST_PLUGIN_DIRS, 1);
    setenv("OPAL_MCA_sched", policy, 1);
    if (NULL != var) {
        char name[128];
        snprintf(name, sizeof(name), "OPAL_MCA_%s", var);
        setenv(name, value, 1);
    }
    ck_assert_int_eq(opal_sched_init(), OPAL_SUCCESS);
    ck_assert_str_eq(opal_sched_policy_name(), policy);
    opal_sched_t *sched = NULL;
    ck_assert_int_eq(opal_sched_create(&sched), OPAL_SUCCESS);
    ck_assert_ptr_nonnull(sched);
    if (NULL != var) {
        char name[128];
        snprintf(name, sizeof(name), "OPAL_MCA_%s", var);
        unsetenv(name);
    }
    return sched;
}

static inline void sched_test_finish(opal_sched_t *sched)
{
    ck_assert_int_eq(opal_sched_destroy(&sched), OPAL_SUCCESS);
    ck_assert_ptr_null(sched);
    ck_assert_int_eq(opal_sched_finalize(), OPAL_SUCCESS);
    unsetenv("OPAL_MCA_sched");
}

/* Progresses until every scheduled task completed. No timeout of its own:
 * Check's per-test timeout ends a test that hangs. */
static inline void sched_test_drain(opal_sched_t *sched)
{
    while (!opal_sched_check_complete(sched)) {
        if (0 == opal_sched_progress(sched)) {
            sched_yield();
        }
    }
}

/* An ordered record of small integers written by any thread. */
typedef struct sched_test_log_t {
    pthread_mutex_t lock;
    int entries[4096];
    int count;
} sched_test_log_t;

static inline void sched_test_log_init(sched_test_log_t *log)
{
    pthread_mutex_init(&log->lock, NULL);
    log->count = 0;
}

static inline void sched_test_log_add(sched_test_log_t *log, int value)
{
    pthread_mutex_lock(&log->lock);
    ck_assert_int_lt(log->count, (int) (sizeof(log->entries) / sizeof(log->entries[0])));
    log->entries[log->count++] = value;
    pthread_mutex_unlock(&log->lock);
}

static inline int sched_test_log_count(sched_test_log_t *log)
{
    pthread_mutex_lock(&log->lock);
    int n = log->count;
    pthread_mutex_unlock(&log->lock);
    return n;
}

/* Position of value in the log, or -1. */
static inline int sched_test_log_pos(sched_test_log_t *log, int value)
{
    pthread_mutex_lock(&log->lock);
    int pos = -1;
    for (int i = 0; i < log->count && pos < 0; ++i) {
        if (log->entries[i] == value) {
            pos = i;
        }
    }
    pthread_mutex_unlock(&log->lock);
    return pos;
}

#endif /* OPAL_TEST_SCHED_SCHED_TEST_SUPPORT_H */
