/*
 * What every Check suite shares: a main that runs one suite and exits with
 * its verdict, and knobs for running under valgrind.
 */
#ifndef OPAL_TEST_SUPPORT_OPAL_TEST_H
#define OPAL_TEST_SUPPORT_OPAL_TEST_H

#include "opal/opal_config.h"

#include <check.h>
#include <stdbool.h>
#include <stddef.h>

/* Runs the suite (Check prints its "N%: Checks: ..." line) and returns
 * EXIT_SUCCESS when every test passed. */
int opal_test_run(Suite *suite);

/* True when the tests run under valgrind (make check-valgrind). */
bool opal_test_under_valgrind(void);

/* Scales an iteration count down under valgrind, which runs code ~50x
 * slower; never below 1. Stress tests keep their full count otherwise. */
size_t opal_test_iterations(size_t full);

/* The test/ directory of the source tree (for data files). */
const char *opal_test_srcdir(void);

struct hwloc_topology;
/* The hwloc topology of the XML file at rel (under opal_test_srcdir()),
 * I/O devices kept; the test fails when it does not load. Destroy it with
 * hwloc_topology_destroy. Builds with hwloc only. */
struct hwloc_topology *opal_test_xml_topology(const char *rel);

/* How many entries of /dev/shm have a name starting with prefix. */
int opal_test_shm_files(const char *prefix);

/* An assertion for loops of many thousand checks. Check records the place
 * of every passing ck_assert (a write to its pipe), which such a loop pays
 * a system call for, and under valgrind or ASan minutes in all; this one
 * calls into Check only when the condition fails. */
#define OPAL_TEST_EXPECT(cond)                                                                     \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            ck_abort_msg("%s:%d: expected %s", __FILE__, __LINE__, #cond);                         \
        }                                                                                          \
    } while (0)

/* Adds a test case holding one test: one behaviour, one case. */
#define OPAL_TEST_ADD(suite, fn)                                                                   \
    do {                                                                                           \
        TCase *tc_ = tcase_create(#fn);                                                            \
        tcase_add_test(tc_, fn);                                                                   \
        suite_add_tcase((suite), tc_);                                                             \
    } while (0)

/* True when Check runs each test in its own process (not CK_FORK=no). */
bool opal_test_can_fork(void);

/* The same, for a test that must die on a signal (debug-build aborts).
 * Such a test needs its own process, so it is left out under CK_FORK=no. */
#define OPAL_TEST_ADD_SIGNAL(suite, fn, sig)                                                       \
    do {                                                                                           \
        if (opal_test_can_fork()) {                                                                \
            TCase *tc_ = tcase_create(#fn);                                                        \
            tcase_add_test_raise_signal(tc_, fn, (sig));                                           \
            suite_add_tcase((suite), tc_);                                                         \
        }                                                                                          \
    } while (0)

#endif /* OPAL_TEST_SUPPORT_OPAL_TEST_H */
