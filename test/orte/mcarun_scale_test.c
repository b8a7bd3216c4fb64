/*
 * mcarun at the size of a node: jobs of hundreds of ranks, oversubscribed
 * on whatever this machine has, whose ranks all connect at once, put a
 * modex value, fence with collection and read every other rank's value
 * (test/orte/orte_allgather_rank). Every rank must be served: more ranks
 * than mcarun keeps half-open connections wait their turn, none is
 * refused.
 *
 * Built twice: mcarun_scale_test runs the 128- and 256-rank jobs;
 * mcarun_scale_1024_test (MCARUN_SCALE_1024) runs the 1,024-rank job and
 * skips (exit 77) under valgrind and in sanitizer builds, where starting
 * 1,024 instrumented processes on a small machine takes minutes.
 */
#include "opal/opal_config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/orte/mcarun_test_support.h"
#include "test/support/opal_test.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

static char allgather_prog[PATH_MAX];

/* One case, with a Check timeout above the run limit. */
#define SCALE_TEST_ADD(suite, fn)                                                                  \
    do {                                                                                           \
        TCase *tc_ = tcase_create(#fn);                                                            \
        tcase_set_timeout(tc_, 360);                                                               \
        tcase_add_test(tc_, fn);                                                                   \
        suite_add_tcase((suite), tc_);                                                             \
    } while (0)

/* Runs np ranks of the allgather program and checks that every one
 * finished and rank 0 checked np - 1 values. */
static void run_allgather(int np)
{
    char nps[16], ok[96];
    snprintf(nps, sizeof(nps), "%d", np);
    snprintf(ok, sizeof(ok), "allgather ok: %d ranks, %d values checked\n", np, np - 1);
    const char *const args[] = {"-np", nps, "--oversubscribe", allgather_prog, NULL};
    mcarun_run_t run;
    mcarun_test_mcarun(&run, NULL, args);
    if (0 != run.status || NULL == strstr(run.out, ok) ||
        NULL != strstr(run.err, "refused a connection")) {
        mcarun_test_dump(&run);
        ck_abort_msg("np %d: status %d, expected 0 and \"%s\"", np, run.status, ok);
    }
    mcarun_test_run_free(&run);
}

#ifdef MCARUN_SCALE_1024
START_TEST(np_1024_oversubscribed_allgather_completes)
{
    run_allgather(1024);
}
END_TEST
#else
START_TEST(np_128_oversubscribed_allgather_completes)
{
    run_allgather(128);
}
END_TEST

START_TEST(np_256_oversubscribed_allgather_completes)
{
    run_allgather(256);
}
END_TEST
#endif

int main(void)
{
#ifdef MCARUN_SCALE_1024
    if (opal_test_under_valgrind() || SANITIZED) {
        printf("mcarun_scale_1024_test: skipped: 1,024 ranks under %s would take minutes; "
               "the plain build's make check runs it\n",
               SANITIZED ? "a sanitizer" : "valgrind");
        return 77;
    }
#endif
    /* The ranks find ess/env in the build tree (they inherit this). */
    setenv("OPAL_MCA_mca_base_component_path", ORTE_TEST_PLUGIN_DIRS, 0);
    snprintf(allgather_prog, sizeof(allgather_prog), "%s",
             mcarun_test_build_path("test/orte/orte_allgather_rank"));
    /* Hundreds of processes on two shared cores take their time; how long
     * is not what these tests check. */
    mcarun_test_set_run_limit(300);
    Suite *s = suite_create("mcarun_scale");
#ifdef MCARUN_SCALE_1024
    SCALE_TEST_ADD(s, np_1024_oversubscribed_allgather_completes);
#else
    SCALE_TEST_ADD(s, np_128_oversubscribed_allgather_completes);
    SCALE_TEST_ADD(s, np_256_oversubscribed_allgather_completes);
#endif
    return opal_test_run(s);
}
