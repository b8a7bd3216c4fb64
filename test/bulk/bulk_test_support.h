/*
 * What the bulk tests share: "processes" (a fake na class, its bulk class
 * and context 0) in one test process, and progress over all of them.
 */
#ifndef TEST_BULK_BULK_TEST_SUPPORT_H
#define TEST_BULK_BULK_TEST_SUPPORT_H

#include "opal/opal_config.h"

#include <stdbool.h>

#include "opal/mca/bulk/bulk.h"
#include "opal/mca/na/base/base.h"
#include "test/bulk/bulk_fake_na.h"

typedef struct bulk_peer_t {
    opal_na_class_t *na;
    opal_bulk_class_t *bc;
    opal_na_context_t *ctx;
} bulk_peer_t;

/* opal_init_util with the build tree's plugins; variables first set in
 * the environment as "name=value" pairs (NULL-terminated, may be NULL). */
void bulk_test_init(const char *const *vars);
void bulk_test_fini(const char *const *vars);

/* A process with RMA (rma) or without; the test fails if it cannot open. */
void bulk_peer_open(bulk_peer_t *p, const fake_na_opts_t *opts);
void bulk_peer_close(bulk_peer_t *p);

/* Polls and triggers every peer until *done is true (at most ~100000
 * rounds: the fake needs a few). Returns *done. */
bool bulk_progress(bulk_peer_t *peers, int n, const bool *done);

/* Polls and triggers every peer for rounds rounds. */
void bulk_drain(bulk_peer_t *peers, int n, int rounds);

/* Fills buf with a pattern that depends on seed and the position. */
void bulk_fill(void *buf, size_t len, unsigned int seed);

#endif /* TEST_BULK_BULK_TEST_SUPPORT_H */
