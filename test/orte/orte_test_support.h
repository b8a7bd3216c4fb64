/*
 * What the tests of orte share: making the build tree's ess plugins
 * findable, and clearing the variables of every launcher.
 */
#ifndef OPAL_TEST_ORTE_ORTE_TEST_SUPPORT_H
#define OPAL_TEST_ORTE_ORTE_TEST_SUPPORT_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Points mca_base_component_path at the build tree's plugins (unless the
 * caller's environment already chose a path), so that this process and
 * every process it starts find the ess components. */
void orte_test_use_build_tree_plugins(void);

/* Removes every environment variable whose name starts with prefix. */
void orte_test_unset_prefixed(const char *prefix);

/* Removes the variables of mcarun and of PMIx launchers. */
void orte_test_forget_launchers(void);

/* What a command printed and how it ended. */
typedef struct orte_test_result_t {
    /* The exit status, or 128 + the signal that killed it. */
    int status;
    char *out;
    char *err;
} orte_test_result_t;

/* Runs a shell command (printf-style), stopped after 120 s, and keeps its
 * output. Returns false when it could not be run at all. */
bool orte_test_run(orte_test_result_t *result, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

void orte_test_result_free(orte_test_result_t *result);

/* True when program is found in $PATH (or is a path to an executable). */
bool orte_test_have_program(const char *program);

/* The build tree's mcarun and the rank program of the ess tests. */
const char *orte_test_mcarun(void);
const char *orte_test_rank_program(void);

/* Checks that out holds exactly one summary line per rank 0..n-1 of
 * orte_ess_rank, each for a job of n; returns them in rank order, joined
 * (malloc'd), or NULL with the reason in why (why_size bytes). */
char *orte_test_rank_lines(const char *out, uint32_t n, char *why, size_t why_size);

/* Checks the lines orte_test_rank_lines returned for a job of n ranks on
 * one node: local ranks are the ranks, each rank sees itself with
 * locality 7 and every peer with peer_locality ('1': same node, '7': same
 * package and NUMA node too), and all checked the same number of bytes.
 * False with the reason in why. */
bool orte_test_check_job(const char *lines, uint32_t n, char peer_locality, char *why,
                         size_t why_size);

#endif /* OPAL_TEST_ORTE_ORTE_TEST_SUPPORT_H */
