/* ess/env through real mcarun jobs: orte_init gives every rank a
 * consistent view of the job, the modex carries random keys with values up
 * to 1 MiB (and more) through fences with and without collection, for 1
 * to 8 ranks on 2 cores; binding shows in locality; aborts, timeouts and
 * the session directory behave. */
#include "opal/opal_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test/orte/orte_test_support.h"
#include "test/support/opal_test.h"

#define MAX_NP 8

/* Runs the rank program under mcarun; checks and frees its lines. */
static void run_job(uint32_t n, const char *launcher_args, const char *rank_args,
                    char peer_locality)
{
    orte_test_result_t run;
    ck_assert(orte_test_run(&run, "%s --oversubscribe %s -np %u %s --expect-size %u %s",
                            orte_test_mcarun(), launcher_args, (unsigned) n,
                            orte_test_rank_program(), (unsigned) n, rank_args));
    ck_assert_msg(0 == run.status, "mcarun -np %u exited %d:\n%.1000s%.1500s", (unsigned) n,
                  run.status, run.out, run.err);
    char why[256];
    char *lines = orte_test_rank_lines(run.out, n, why, sizeof(why));
    ck_assert_msg(NULL != lines, "mcarun -np %u: %s:\n%.1500s", (unsigned) n, why, run.out);
    ck_assert_msg(orte_test_check_job(lines, n, peer_locality, why, sizeof(why)),
                  "mcarun -np %u: %s:\n%.1500s", (unsigned) n, why, lines);
    free(lines);
    orte_test_result_free(&run);
}

START_TEST(np_1_to_8_see_a_consistent_job_and_exchange_random_data)
{
    for (uint32_t n = 1; n <= MAX_NP; ++n) {
        char args[64];
        snprintf(args, sizeof(args), "--seed %u --keys 8", (unsigned) (2000 + n));
        run_job(n, "--bind-to none", args, '1');
    }
}
END_TEST

START_TEST(ranks_bound_to_cores_share_package_and_numa)
{
    run_job(2, "--bind-to core", "", '7');
    /* Four ranks on two cores: bound in pairs, still one package. */
    run_job(4, "--bind-to core", "--keys 2", '7');
}
END_TEST

START_TEST(values_of_several_mib_go_through)
{
    run_job(3, "", "--keys 3 --max-size 4194304", '1');
}
END_TEST

START_TEST(a_missing_key_times_out_naming_the_peer_and_the_key)
{
    orte_test_result_t run;
    ck_assert(orte_test_run(&run, "%s -np 2 %s --expect-size 2 --check-timeout", orte_test_mcarun(),
                            orte_test_rank_program()));
    ck_assert_msg(0 == run.status, "exited %d:\n%.1000s%.1500s", run.status, run.out, run.err);
    ck_assert_msg(NULL != strstr(run.err, "'test.never' from rank 1"),
                  "no message naming the peer and the key:\n%.1500s", run.err);
    orte_test_result_free(&run);
}
END_TEST

START_TEST(session_directory_is_mcaruns_and_gone_when_the_job_ends)
{
    orte_test_result_t run;
    ck_assert(orte_test_run(&run, "%s -np 2 %s --expect-size 2 --keys 2", orte_test_mcarun(),
                            orte_test_rank_program()));
    ck_assert_msg(0 == run.status, "exited %d:\n%.1000s%.1500s", run.status, run.out, run.err);
    const char *line = strstr(run.out, "session ");
    ck_assert_ptr_nonnull(line);
    char dir[4096];
    ck_assert_int_eq(sscanf(line, "session %4095s", dir), 1);
    ck_assert_msg(NULL != strstr(dir, "/opal-mca."), "%s is not a session directory", dir);
    struct stat st;
    ck_assert_msg(-1 == stat(dir, &st) && ENOENT == errno, "%s is still there", dir);
    orte_test_result_free(&run);
}
END_TEST

START_TEST(an_abort_stops_the_job_with_its_status)
{
    orte_test_result_t run;
    ck_assert(orte_test_run(&run,
                            "%s --oversubscribe -np 3 %s --expect-size 3 --abort-rank 1 "
                            "--abort-status 7",
                            orte_test_mcarun(), orte_test_rank_program()));
    ck_assert_int_eq(run.status, 7);
    ck_assert_msg(NULL != strstr(run.err, "rank 1 aborts on purpose"),
                  "the abort message is missing:\n%.1500s", run.err);
    orte_test_result_free(&run);
}
END_TEST

START_TEST(ess_singleton_can_be_forced_under_mcarun)
{
    orte_test_result_t run;
    ck_assert(orte_test_run(&run, "%s --mca ess singleton -np 2 %s --expect-size 1 --keys 2",
                            orte_test_mcarun(), orte_test_rank_program()));
    ck_assert_msg(0 == run.status, "exited %d:\n%.1000s%.1500s", run.status, run.out, run.err);
    /* Two jobs of one rank each. */
    const char *first = strstr(run.out, "rank 0 size 1 ");
    ck_assert_ptr_nonnull(first);
    ck_assert_ptr_nonnull(strstr(first + 1, "rank 0 size 1 "));
    orte_test_result_free(&run);
}
END_TEST

static Suite *env_suite(void)
{
    Suite *s = suite_create("orte_ess_env");
    OPAL_TEST_ADD(s, np_1_to_8_see_a_consistent_job_and_exchange_random_data);
#if OPAL_HAVE_HWLOC
    /* Binding and package / NUMA locality need hwloc. */
    OPAL_TEST_ADD(s, ranks_bound_to_cores_share_package_and_numa);
#endif
    OPAL_TEST_ADD(s, values_of_several_mib_go_through);
    OPAL_TEST_ADD(s, a_missing_key_times_out_naming_the_peer_and_the_key);
    OPAL_TEST_ADD(s, session_directory_is_mcaruns_and_gone_when_the_job_ends);
    OPAL_TEST_ADD(s, an_abort_stops_the_job_with_its_status);
    OPAL_TEST_ADD(s, ess_singleton_can_be_forced_under_mcarun);
    return s;
}

int main(void)
{
    orte_test_forget_launchers();
    orte_test_use_build_tree_plugins();
    return opal_test_run(env_suite());
}
