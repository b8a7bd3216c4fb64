/* ess/pmix for real, under Open MPI's mpirun (a PMIx server): the rank
 * program must see the same job -- ranks, sizes, local ranks, locality and
 * modex data -- as under mcarun, for 1 to 8 ranks on 2 cores. Skipped
 * (exit 77) only when mpirun or libpmix is absent. */
#include "opal/opal_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test/orte/orte_test_support.h"
#include "test/support/opal_test.h"

#define MAX_NP 8

/* Runs the rank program under mpirun and returns its checked lines. */
static char *run_mpirun(uint32_t n, const char *launcher_args, const char *rank_args,
                        char peer_locality)
{
    orte_test_result_t run;
    ck_assert(orte_test_run(&run, "mpirun --oversubscribe %s -np %u %s --expect-size %u %s",
                            launcher_args, (unsigned) n, orte_test_rank_program(), (unsigned) n,
                            rank_args));
    ck_assert_msg(0 == run.status, "mpirun -np %u exited %d:\n%.1000s%.1500s", (unsigned) n,
                  run.status, run.out, run.err);
    char why[256];
    char *lines = orte_test_rank_lines(run.out, n, why, sizeof(why));
    ck_assert_msg(NULL != lines, "mpirun -np %u: %s:\n%.1500s", (unsigned) n, why, run.out);
    ck_assert_msg(orte_test_check_job(lines, n, peer_locality, why, sizeof(why)),
                  "mpirun -np %u: %s:\n%.1500s", (unsigned) n, why, lines);
    orte_test_result_free(&run);
    return lines;
}

static char *run_mcarun(uint32_t n, const char *launcher_args, const char *rank_args)
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
    orte_test_result_free(&run);
    return lines;
}

START_TEST(np_1_to_8_see_the_same_job_as_under_mcarun)
{
    for (uint32_t n = 1; n <= MAX_NP; ++n) {
        char args[64];
        snprintf(args, sizeof(args), "--seed %u", (unsigned) (1000 + n));
        char *pmix = run_mpirun(n, "--bind-to none", args, '1');
        char *mcarun = run_mcarun(n, "--bind-to none", args);
        ck_assert_msg(0 == strcmp(pmix, mcarun), "np %u: mpirun saw\n%sbut mcarun saw\n%s",
                      (unsigned) n, pmix, mcarun);
        free(pmix);
        free(mcarun);
    }
}
END_TEST

START_TEST(ranks_bound_to_cores_share_package_and_numa_as_under_mcarun)
{
    char *pmix = run_mpirun(2, "--bind-to core", "--seed 7", '7');
    char *mcarun = run_mcarun(2, "--bind-to core", "--seed 7");
    ck_assert_msg(0 == strcmp(pmix, mcarun), "mpirun saw\n%sbut mcarun saw\n%s", pmix, mcarun);
    free(pmix);
    free(mcarun);
}
END_TEST

START_TEST(values_of_several_mib_go_through)
{
    /* Each rank's first value is 3 MiB (PMIx's shared-memory store keeps
     * values under 4 MiB). */
    char *pmix = run_mpirun(3, "--bind-to none", "--keys 2 --max-size 3145728", '1');
    free(pmix);
}
END_TEST

START_TEST(a_missing_key_times_out_naming_the_peer_and_the_key)
{
    orte_test_result_t run;
    ck_assert(orte_test_run(&run, "mpirun --oversubscribe -np 2 %s --expect-size 2 --check-timeout",
                            orte_test_rank_program()));
    ck_assert_msg(0 == run.status, "exited %d:\n%.1000s%.1500s", run.status, run.out, run.err);
    ck_assert_msg(NULL != strstr(run.err, "rank 1 did not publish 'test.never'"),
                  "no message naming the peer and the key:\n%.1500s", run.err);
    orte_test_result_free(&run);
}
END_TEST

START_TEST(session_directory_is_gone_when_the_job_ends)
{
    orte_test_result_t run;
    ck_assert(orte_test_run(&run, "mpirun --oversubscribe -np 3 %s --expect-size 3 --keys 2",
                            orte_test_rank_program()));
    ck_assert_msg(0 == run.status, "exited %d:\n%.1000s%.1500s", run.status, run.out, run.err);
    const char *line = strstr(run.out, "session ");
    ck_assert_ptr_nonnull(line);
    char dir[4096];
    ck_assert_int_eq(sscanf(line, "session %4095s", dir), 1);
    struct stat st;
    ck_assert_msg(-1 == stat(dir, &st) && ENOENT == errno, "%s is still there", dir);
    orte_test_result_free(&run);
}
END_TEST

START_TEST(an_abort_stops_the_whole_job)
{
    /* Open MPI 4.1.4's mpirun over PMIx 4.2 sometimes crashes (status 139)
     * or hangs in its own PMIx_server_finalize after a job aborted, even
     * for a minimal PMIx client: the ranks are gone by then. So any
     * non-zero status passes, and a hang is cut short after 20 s. */
    orte_test_result_t run;
    ck_assert(orte_test_run(&run,
                            "timeout -k 2 20 mpirun --oversubscribe -np 3 %s --expect-size 3 "
                            "--abort-rank 1 --abort-status 7",
                            orte_test_rank_program()));
    ck_assert_msg(0 != run.status, "mpirun exited 0 after an abort:\n%.1000s%.1500s", run.out,
                  run.err);
    ck_assert_msg(NULL != strstr(run.err, "aborts the job with status 7: rank 1 aborts on purpose"),
                  "the abort message is missing:\n%.1500s", run.err);
    ck_assert_msg(NULL == strstr(run.err, "FAIL rank"), "a rank saw the abort fail:\n%.1500s",
                  run.err);
    orte_test_result_free(&run);
}
END_TEST

START_TEST(an_unreachable_server_fails_orte_init_quickly)
{
    orte_test_result_t run;
    ck_assert(orte_test_run(&run,
                            "PMIX_RANK=0 PMIX_NAMESPACE=nowhere "
                            "PMIX_SERVER_URI41='1.0;tcp4://127.0.0.1:1' %s --expect-size 1",
                            orte_test_rank_program()));
    ck_assert_int_eq(run.status, 1);
    ck_assert_msg(NULL != strstr(run.err, "ess/pmix: PMIx_Init failed"),
                  "no message saying why:\n%.1500s", run.err);
    orte_test_result_free(&run);
}
END_TEST

static Suite *pmix_suite(void)
{
    Suite *s = suite_create("orte_ess_pmix");
    OPAL_TEST_ADD(s, np_1_to_8_see_the_same_job_as_under_mcarun);
#if OPAL_HAVE_HWLOC
    /* Binding and package / NUMA locality need hwloc. */
    OPAL_TEST_ADD(s, ranks_bound_to_cores_share_package_and_numa_as_under_mcarun);
#endif
    OPAL_TEST_ADD(s, values_of_several_mib_go_through);
    OPAL_TEST_ADD(s, a_missing_key_times_out_naming_the_peer_and_the_key);
    OPAL_TEST_ADD(s, session_directory_is_gone_when_the_job_ends);
    OPAL_TEST_ADD(s, an_abort_stops_the_whole_job);
    OPAL_TEST_ADD(s, an_unreachable_server_fails_orte_init_quickly);
    return s;
}

int main(void)
{
#if !OPAL_HAVE_PMIX
    printf("SKIP: libpmix is absent (install libpmix-dev): ess/pmix is not built\n");
    return 77;
#else
    if (!orte_test_have_program("mpirun")) {
        printf("SKIP: no mpirun in PATH (install openmpi-bin): ess/pmix cannot be tested\n");
        return 77;
    }
    orte_test_forget_launchers();
    orte_test_use_build_tree_plugins();
    /* In sanitizer builds, the ranks' LeakSanitizer would report what
     * libpmix keeps until exit inside its own plugins, which it unloads
     * at PMIx_Finalize, so the leaks cannot be told from ours (their
     * stacks end in an unknown module). The ranks run without leak
     * detection; every other ASan check still fails them, and this
     * process keeps its own leak check (read at its start). */
    const char *asan = getenv("ASAN_OPTIONS");
    char options[1024];
    snprintf(options, sizeof(options), "%s%sdetect_leaks=0", NULL == asan ? "" : asan,
             NULL == asan || '\0' == asan[0] ? "" : ":");
    setenv("ASAN_OPTIONS", options, 1);
    /* Open MPI refuses root unless told twice; harmless otherwise. */
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    return opal_test_run(pmix_suite());
#endif
}
