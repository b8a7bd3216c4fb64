/*
 * Incast variables across the ranks of mcarun jobs (the rank program is
 * rpc_iv_rank): 4 ranks (oversubscribed) over na/btl, with a namespace
 * rooted at rank 0 over each tree shape; rank 0's script checks fetch,
 * update (sync and lazy), invalidate, the cache, a dead parent passed
 * over and a refused request, and every rank must say "ok". The same
 * under Open MPI's mpirun (ess/pmix) when it is there.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/orte/mcarun_test_support.h"
#include "test/support/opal_test.h"

static void run_job(const char *tree, const char *k, int np)
{
    static char prog[4096], count[16];
    snprintf(prog, sizeof(prog), "%s", mcarun_test_build_path("test/rpc/rpc_iv_rank"));
    snprintf(count, sizeof(count), "%d", np);
    const char *args[] = {"-np", count, "--oversubscribe", "--timeout", "240", prog, "btl", tree,
                          k,     NULL};
    mcarun_run_t run;
    mcarun_test_set_run_limit(300);
    mcarun_test_mcarun(&run, NULL, args);
    bool ok = mcarun_test_count(run.out, " ok\n") == np &&
              0 == mcarun_test_count(run.out, "FAILED") &&
              1 == mcarun_test_count(run.out, "root: script done\n");
    if (!ok || 0 != run.status) {
        mcarun_test_dump(&run);
    }
    ck_assert_msg(ok, "%s k=%s np=%d: %d of %d ranks ok", tree, k, np,
                  mcarun_test_count(run.out, " ok\n"), np);
    ck_assert_int_eq(run.status, 0);
    if (np > 1) {
        /* The member that refused the stray request named its sender. */
        ck_assert_msg(NULL != strstr(run.err, "from rank 1 of group 'primary': no namespace 99"),
                      "the refusal does not name its sender: %.2000s", run.err);
    }
    mcarun_test_run_free(&run);
}

/* The last rank's parent is killed: the other ranks go around it. */
static void run_kill(const char *tree, const char *k, int np)
{
    static char prog[4096], count[16];
    snprintf(prog, sizeof(prog), "%s", mcarun_test_build_path("test/rpc/rpc_iv_rank"));
    snprintf(count, sizeof(count), "%d", np);
    const char *args[] = {"-np",       count,  "--oversubscribe",
                          "--timeout", "240",  "--enable-recovery",
                          prog,        "btl",  tree,
                          k,           "kill", NULL};
    mcarun_run_t run;
    mcarun_test_set_run_limit(300);
    mcarun_test_mcarun(&run, NULL, args);
    bool ok = mcarun_test_count(run.out, " ok\n") == np - 1 &&
              0 == mcarun_test_count(run.out, "FAILED") &&
              1 == mcarun_test_count(run.out, "root: script done\n");
    if (!ok) {
        mcarun_test_dump(&run);
    }
    ck_assert_msg(ok, "%s k=%s np=%d kill: %d of %d ranks ok", tree, k, np,
                  mcarun_test_count(run.out, " ok\n"), np - 1);
    /* mcarun says a rank died. */
    ck_assert_int_ne(run.status, 0);
    mcarun_test_run_free(&run);
}

START_TEST(iv_goes_around_a_killed_parent_in_a_kary_tree)
{
    run_kill("kary", "2", 4);
}
END_TEST

START_TEST(iv_over_a_binary_kary_tree_of_4_ranks)
{
    run_job("kary", "2", 4);
}
END_TEST

START_TEST(iv_over_a_binomial_tree_of_4_ranks)
{
    run_job("knomial", "2", 4);
}
END_TEST

START_TEST(iv_over_a_flat_tree_of_4_ranks)
{
    run_job("flat", "2", 4);
}
END_TEST

START_TEST(iv_over_one_rank)
{
    run_job("knomial", "2", 1);
}
END_TEST

/* The same script under Open MPI's mpirun (the ranks' runtime is
 * ess/pmix): the primary group is whatever job the PMIx launcher started. */
static bool have_mpirun(void)
{
#if OPAL_HAVE_PMIX
    return 0 == system("command -v mpirun >/dev/null 2>&1");
#else
    return false;
#endif
}

START_TEST(iv_runs_under_open_mpi_mpirun_through_ess_pmix)
{
    if (!have_mpirun()) {
        printf("skipped: no mpirun, or ess/pmix not built\n");
        return;
    }
    /* As in rpc_group_test: libpmix keeps memory inside its own plugins
     * that a sanitizer build's leak check would report; the same script
     * runs under mcarun with leak detection. */
    const char *asan = getenv("ASAN_OPTIONS");
    static char options[1024], command[16384], out[1 << 16];
    snprintf(options, sizeof(options), "%s%sdetect_leaks=0", NULL == asan ? "" : asan,
             NULL == asan || '\0' == asan[0] ? "" : ":");
    setenv("ASAN_OPTIONS", options, 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    snprintf(command, sizeof(command),
             "timeout -k 5 240 mpirun --oversubscribe --bind-to none -np 4 "
             "-x OPAL_MCA_mca_base_component_path=%s %s btl knomial 2 2>&1",
             RPC_TEST_PLUGIN_DIRS, mcarun_test_build_path("test/rpc/rpc_iv_rank"));
    FILE *p = popen(command, "r");
    ck_assert_ptr_nonnull(p);
    size_t len = fread(out, 1, sizeof(out) - 1, p);
    out[len] = '\0';
    int status = pclose(p);
    ck_assert_msg(0 == status && 4 == mcarun_test_count(out, " ok\n") &&
                      0 == mcarun_test_count(out, "FAILED") &&
                      1 == mcarun_test_count(out, "root: script done\n"),
                  "mpirun -np 4 exited %d:\n%.3000s", status, out);
}
END_TEST

int main(void)
{
    setenv("OPAL_MCA_mca_base_component_path", RPC_TEST_PLUGIN_DIRS, 0);
    Suite *s = suite_create("rpc_iv_job");
    OPAL_TEST_ADD(s, iv_over_a_binary_kary_tree_of_4_ranks);
    OPAL_TEST_ADD(s, iv_over_a_binomial_tree_of_4_ranks);
    OPAL_TEST_ADD(s, iv_over_a_flat_tree_of_4_ranks);
    OPAL_TEST_ADD(s, iv_over_one_rank);
    OPAL_TEST_ADD(s, iv_goes_around_a_killed_parent_in_a_kary_tree);
    OPAL_TEST_ADD(s, iv_runs_under_open_mpi_mpirun_through_ess_pmix);
    return opal_test_run(s);
}
