/*
 * mcarun meets its users' habits: ^C and timeout(1) as they send
 * signals, Open MPI's binding words, and MCA variable names checked once
 * for the whole job, naming where the user wrote them.
 */
#include "opal/opal_config.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test/orte/mcarun_test_support.h"
#include "test/support/opal_test.h"

static char rank_prog[PATH_MAX];
static char ess_rank_prog[PATH_MAX];

#define RUN(run, input, ...)                                                                       \
    do {                                                                                           \
        const char *const args_[] = {__VA_ARGS__, NULL};                                           \
        mcarun_test_mcarun((run), (input), args_);                                                 \
    } while (0)

#define EXPECT(run, cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            mcarun_test_dump(run);                                                                 \
            ck_abort_msg("expected: %s", #cond);                                                   \
        }                                                                                          \
    } while (0)

static bool has(const char *text, const char *needle)
{
    return NULL != strstr(text, needle);
}

/* libfabric's providers catch SIGINT in the ranks, which then exit 1:
 * mcarun still reports the interrupt and exits 130. */
START_TEST(sigint_ends_the_job_as_interrupted_whatever_the_ranks_do)
{
    mcarun_run_t run;
    const char *const args[] = {"-np", "2", rank_prog, "trapint", "0", NULL};
    mcarun_test_start(&run, NULL, args);
    EXPECT(&run, mcarun_test_wait_for(&run, " ready\n", 2));
    kill(run.pid, SIGINT);
    mcarun_test_finish(&run);
    EXPECT(&run, 128 + SIGINT == run.status);
    EXPECT(&run, 2 == mcarun_test_count(run.out, " caught SIGINT\n"));
    EXPECT(&run, 1 == mcarun_test_count(run.err, "job interrupted by the user (signal 2"));
    EXPECT(&run, !has(run.err, "exited with status"));
    mcarun_test_run_free(&run);
}
END_TEST

/* What timeout -s INT does: the signal to mcarun, then to its process
 * group. One interrupt: forwarded once, the ranks keep their grace period
 * (here they ignore it and are killed when it ends), no "again". */
START_TEST(signals_sent_together_count_once)
{
    mcarun_run_t run;
    const char *const args[] = {"-np", "2", rank_prog, "trapint", "1", NULL};
    mcarun_test_start(&run, NULL, args);
    EXPECT(&run, mcarun_test_wait_for(&run, " ready\n", 2));
    kill(run.pid, SIGINT);
    kill(-run.pid, SIGINT);
    EXPECT(&run, mcarun_test_wait_for(&run, " ignored SIGINT\n", 2));
    mcarun_test_finish(&run);
    EXPECT(&run, 128 + SIGINT == run.status);
    EXPECT(&run, !has(run.err, "again: killing the job"));
    EXPECT(&run, 1 == mcarun_test_count(run.err, "job interrupted by the user"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(bind_to_socket_means_package)
{
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "1", "--bind-to", "socket", "--report-bindings", rank_prog, "affinity");
#if OPAL_HAVE_HWLOC
    EXPECT(&run, 0 == run.status && has(run.err, ") bound to package 0 (cpus "));
#else
    EXPECT(&run, 2 == run.status && has(run.err, "needs hwloc"));
#endif
    mcarun_test_run_free(&run);

    RUN(&run, NULL, "-np", "1", "--bind-to", "board", "true");
    EXPECT(&run,
           2 == run.status && has(run.err, "--bind-to board: expected none, core or package"));
    mcarun_test_run_free(&run);
}
END_TEST

#if OPAL_HAVE_HWLOC
/* More ranks than cores, bound to cores: allowed with --oversubscribe,
 * said once for the job. */
START_TEST(bind_to_core_overloaded_says_so_once)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    char nps[32];
    snprintf(nps, sizeof(nps), "%ld", 2 * cores + 1);
    mcarun_run_t run;
    RUN(&run, NULL, "-np", nps, "--oversubscribe", "--bind-to", "core", rank_prog, "affinity");
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, 1 == mcarun_test_count(run.err, "warning: --bind-to core with "));
    EXPECT(&run, has(run.err, "up to 3 ranks share each core"));
    mcarun_test_run_free(&run);

    RUN(&run, NULL, "-np", "1", "--bind-to", "core", rank_prog, "affinity");
    EXPECT(&run, 0 == run.status && !has(run.err, "warning"));
    mcarun_test_run_free(&run);
}
END_TEST
#endif

/* A misspelt name in mcarun's environment: one report for the job, not
 * one per rank. */
START_TEST(misspelt_environment_name_is_reported_once_for_the_job)
{
    setenv("OPAL_MCA_btl_sm_eager_limt", "1k", 1);
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "4", "--oversubscribe", ess_rank_prog);
    unsetenv("OPAL_MCA_btl_sm_eager_limt");
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, 1 == mcarun_test_count(run.err, "no such MCA variable"));
    EXPECT(&run, has(run.err, "OPAL_MCA_btl_sm_eager_limt (environment): no such MCA variable; "
                              "did you mean btl_sm_eager_limit?"));
    mcarun_test_run_free(&run);
}
END_TEST

/* A misspelt name typed after --mca is named as the user typed it. */
START_TEST(misspelt_mca_option_is_named_as_typed_once)
{
    mcarun_run_t run;
    /* Beside names that exist: a selection, a component's variable. */
    RUN(&run, NULL, "-np", "4", "--oversubscribe", "--mca", "btl", "self,sm", "--mca",
        "btl_sm_eager_limit", "4k", "--mca", "ess_bse_verbose", "5", ess_rank_prog);
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, 1 == mcarun_test_count(run.err, "no such MCA variable"));
    EXPECT(&run, has(run.err, "ess_bse_verbose (command line): no such MCA variable; did you "
                              "mean ess_base_verbose?"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(unknown_names_as_errors_stop_the_job_before_it_starts)
{
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "2", "--mca", "mca_base_unknown_params", "error", "--mca",
        "ess_bse_verbose", "5", ess_rank_prog);
    EXPECT(&run, 2 == run.status);
    EXPECT(&run, has(run.err, "ess_bse_verbose (command line): no such MCA variable"));
    EXPECT(&run, has(run.err, "the job is not started"));
    EXPECT(&run, !has(run.out, "allgather ok"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(missing_param_file_is_reported_once_for_the_job)
{
    setenv("OPAL_PARAM_FILES", "/nonexistent/opal-mca-test.conf", 1);
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "3", "--oversubscribe", ess_rank_prog);
    unsetenv("OPAL_PARAM_FILES");
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, 1 == mcarun_test_count(run.err, "MCA parameter file "
                                                 "/nonexistent/opal-mca-test.conf (named in "
                                                 "$OPAL_PARAM_FILES) does not exist"));
    mcarun_test_run_free(&run);
}
END_TEST

/* Runs ess_rank_prog alone (a singleton) with name=value in its
 * environment; returns its stderr and stdout. */
static char *run_alone(const char *name, const char *value)
{
    setenv(name, value, 1);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "%s 2>&1", ess_rank_prog);
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    static char out[8192];
    size_t n = fread(out, 1, sizeof(out) - 1, f);
    out[n] = '\0';
    ck_assert_int_eq(0, pclose(f));
    unsetenv(name);
    return out;
}

/* Without mcarun the program checks its names itself, in orte_init. */
START_TEST(a_program_alone_checks_its_names_in_orte_init)
{
    const char *out = run_alone("OPAL_MCA_ess_bse_verbose", "1");
    ck_assert_msg(1 == mcarun_test_count(out, "OPAL_MCA_ess_bse_verbose (environment): no such "
                                              "MCA variable; did you mean ess_base_verbose?"),
                  "%s", out);
    ck_assert_msg(has(out, "allgather ok: 1 ranks"), "%s", out);
}
END_TEST

int main(void)
{
    /* The ranks find ess/env in the build tree (they inherit this). */
    setenv("OPAL_MCA_mca_base_component_path", ORTE_TEST_PLUGIN_DIRS, 0);
    snprintf(rank_prog, sizeof(rank_prog), "%s",
             mcarun_test_build_path("test/orte/orte_test_rank"));
    snprintf(ess_rank_prog, sizeof(ess_rank_prog), "%s",
             mcarun_test_build_path("test/orte/orte_allgather_rank"));
    Suite *s = suite_create("mcarun_habits");
    OPAL_TEST_ADD(s, sigint_ends_the_job_as_interrupted_whatever_the_ranks_do);
    OPAL_TEST_ADD(s, signals_sent_together_count_once);
    OPAL_TEST_ADD(s, bind_to_socket_means_package);
    OPAL_TEST_ADD(s, misspelt_environment_name_is_reported_once_for_the_job);
    OPAL_TEST_ADD(s, misspelt_mca_option_is_named_as_typed_once);
    OPAL_TEST_ADD(s, unknown_names_as_errors_stop_the_job_before_it_starts);
    OPAL_TEST_ADD(s, missing_param_file_is_reported_once_for_the_job);
    OPAL_TEST_ADD(s, a_program_alone_checks_its_names_in_orte_init);
#if OPAL_HAVE_HWLOC
    OPAL_TEST_ADD(s, bind_to_core_overloaded_says_so_once);
#endif
    return opal_test_run(s);
}
