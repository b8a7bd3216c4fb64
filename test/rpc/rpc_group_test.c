/*
 * Groups and collective RPC inside mcarun jobs (the rank program is
 * rpc_group_rank): for each tree shape and several k, groups of 1 to 8
 * ranks (oversubscribed) run corpcs over the primary group and a
 * subgroup whose aggregates must be exact (sum and list of the ranks),
 * with excluded ranks skipped; and a member killed with SIGKILL is
 * reported failed while the root completes, then skipped once marked
 * dead. The ranks talk over na/btl (and once over na/ofi's tcp).
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test/orte/mcarun_test_support.h"
#include "test/support/opal_test.h"

static void run_job(const char *info, const char *tree, const char *k, int np, bool kill)
{
    static char prog[4096], count[16];
    snprintf(prog, sizeof(prog), "%s", mcarun_test_build_path("test/rpc/rpc_group_rank"));
    snprintf(count, sizeof(count), "%d", np);
    const char *args[] = {
        "-np", count, "--oversubscribe",    "--timeout", "240", "--enable-recovery", prog, info,
        tree,  k,     kill ? "kill" : NULL, NULL};
    if (!kill) {
        /* Without a death, a failing rank must stop the job. */
        args[5] = prog;
        args[6] = info;
        args[7] = tree;
        args[8] = k;
        args[9] = NULL;
    }
    mcarun_run_t run;
    mcarun_test_set_run_limit(300);
    mcarun_test_mcarun(&run, NULL, args);
    int survivors = kill && np > 1 ? np - 1 : np;
    bool ok = mcarun_test_count(run.out, " ok\n") == survivors &&
              0 == mcarun_test_count(run.out, "FAILED");
    if (!ok || (!kill && 0 != run.status)) {
        mcarun_test_dump(&run);
    }
    ck_assert_msg(ok, "%s k=%s np=%d%s: %d of %d ranks ok", tree, k, np, kill ? " kill" : "",
                  mcarun_test_count(run.out, " ok\n"), survivors);
    if (!kill) {
        ck_assert_int_eq(run.status, 0);
    } else if (np > 1) {
        /* The root saw the dead rank in the aggregate's failed list. */
        ck_assert_int_eq(mcarun_test_count(run.out, "root: every rank: "), 1);
        ck_assert_ptr_nonnull(strstr(run.out, ", 1 failed\n"));
        ck_assert_int_ne(run.status, 0);
    }
    mcarun_test_run_free(&run);
}

static void sizes(const char *tree, const char *k)
{
    static const int nps[] = {1, 2, 3, 5, 8};
    for (size_t i = 0; i < sizeof(nps) / sizeof(nps[0]); ++i) {
        run_job("btl", tree, k, nps[i], false);
    }
}

START_TEST(corpc_over_a_flat_tree_aggregates_every_rank_exactly)
{
    sizes("flat", "2");
}
END_TEST

START_TEST(corpc_over_a_binary_kary_tree_aggregates_every_rank_exactly)
{
    sizes("kary", "2");
}
END_TEST

START_TEST(corpc_over_a_ternary_kary_tree_aggregates_every_rank_exactly)
{
    sizes("kary", "3");
}
END_TEST

START_TEST(corpc_over_a_binomial_tree_aggregates_every_rank_exactly)
{
    sizes("knomial", "2");
}
END_TEST

START_TEST(corpc_over_a_radix_4_knomial_tree_aggregates_every_rank_exactly)
{
    sizes("knomial", "4");
}
END_TEST

START_TEST(a_killed_member_is_reported_failed_over_a_flat_tree)
{
    run_job("btl", "flat", "2", 4, true);
}
END_TEST

START_TEST(a_killed_member_is_reported_failed_over_a_kary_tree)
{
    run_job("btl", "kary", "2", 5, true);
}
END_TEST

START_TEST(a_killed_member_is_reported_failed_over_a_knomial_tree)
{
    run_job("btl", "knomial", "2", 5, true);
}
END_TEST

/* btl/sm's blocking mode (the ranks sleep in na/btl's poll_wait until a
 * peer posts to them): the corpc still reaches every rank of a tree in
 * which most ranks never talk to each other, and a killed rank's death
 * still wakes its parent. */
START_TEST(corpc_over_na_btl_with_sleeping_ranks)
{
    setenv("OPAL_MCA_btl_sm_blocking", "1", 1);
    run_job("btl", "knomial", "2", 8, false);
    run_job("btl", "kary", "2", 5, true);
    unsetenv("OPAL_MCA_btl_sm_blocking");
}
END_TEST

START_TEST(corpc_runs_over_na_ofi_tcp_too)
{
    if (!mcarun_test_component_built("na", "ofi", RPC_TEST_PLUGIN_DIRS)) {
        return;
    }
    run_job("ofi+tcp://127.0.0.1", "knomial", "3", 8, false);
}
END_TEST

/* A rank saves the group to a file; a client started alone attaches from
 * it and sends each rank a request by (group, rank, context); once the
 * job is gone, the same file is refused as stale. */
START_TEST(a_client_outside_the_job_attaches_from_the_group_file)
{
    if (!mcarun_test_component_built("na", "ofi", RPC_TEST_PLUGIN_DIRS)) {
        return;
    }
    static char prog[4096], client[4096], serve[512], file[256], command[8192];
    snprintf(file, sizeof(file), "/tmp/rpc_group_test_%d.grp", (int) getpid());
    unlink(file);
    snprintf(serve, sizeof(serve), "serve=%s", file);
    snprintf(prog, sizeof(prog), "%s", mcarun_test_build_path("test/rpc/rpc_group_rank"));
    snprintf(client, sizeof(client), "%s", mcarun_test_build_path("test/rpc/rpc_group_client"));
    const char *info = "ofi+tcp://127.0.0.1";
    const char *args[] = {
        "-np", "3", "--oversubscribe", "--timeout", "120", prog, info, "knomial", "2", serve, NULL};
    mcarun_run_t run;
    mcarun_test_start(&run, NULL, args);
    bool saved = mcarun_test_wait_for(&run, "group saved\n", 1);
    char out[4096] = "";
    int status = -1;
    if (saved) {
        snprintf(command, sizeof(command), "%s '%s' %s 2>&1", client, info, file);
        FILE *p = popen(command, "r");
        ck_assert_ptr_nonnull(p);
        size_t len = fread(out, 1, sizeof(out) - 1, p);
        out[len] = '\0';
        status = pclose(p);
    }
    mcarun_test_finish(&run);
    if (!saved || 0 != status || 0 != run.status) {
        mcarun_test_dump(&run);
        fprintf(stderr, "client: %s\n", out);
    }
    ck_assert_msg(saved, "no rank saved the group file");
    ck_assert_msg(0 == status && NULL != strstr(out, "client ok: 3 ranks\n"), "client: %s", out);
    ck_assert_int_eq(run.status, 0);
    ck_assert_int_eq(mcarun_test_count(run.out, " ok\n"), 3);
    mcarun_test_run_free(&run);
    /* The job ended: its file names processes that are gone. */
    FILE *p = popen(command, "r");
    ck_assert_ptr_nonnull(p);
    size_t len = fread(out, 1, sizeof(out) - 1, p);
    out[len] = '\0';
    ck_assert_int_ne(pclose(p), 0);
    snprintf(command, sizeof(command), "group file %s:6: stale", file);
    ck_assert_msg(NULL != strstr(out, command), "the stale file was not refused: %s", out);
    unlink(file);
}
END_TEST

/* The same under Open MPI's mpirun (the ranks' runtime is ess/pmix): the
 * primary group is whatever job the PMIx launcher started. */
static bool have_mpirun(void)
{
#if OPAL_HAVE_PMIX
    return 0 == system("command -v mpirun >/dev/null 2>&1");
#else
    return false;
#endif
}

static void run_mpirun(const char *tree, const char *k, int np)
{
    static char command[16384];
    snprintf(command, sizeof(command),
             "timeout -k 5 240 mpirun --oversubscribe --bind-to none -np %d "
             "-x OPAL_MCA_mca_base_component_path=%s %s btl %s %s 2>&1",
             np, RPC_TEST_PLUGIN_DIRS, mcarun_test_build_path("test/rpc/rpc_group_rank"), tree, k);
    FILE *p = popen(command, "r");
    ck_assert_ptr_nonnull(p);
    static char out[1 << 16];
    size_t len = fread(out, 1, sizeof(out) - 1, p);
    out[len] = '\0';
    int status = pclose(p);
    ck_assert_msg(0 == status && np == mcarun_test_count(out, " ok\n") &&
                      0 == mcarun_test_count(out, "FAILED"),
                  "mpirun -np %d %s k=%s exited %d:\n%.3000s", np, tree, k, status, out);
}

START_TEST(corpc_runs_under_open_mpi_mpirun_through_ess_pmix)
{
    if (!have_mpirun()) {
        printf("skipped: no mpirun, or ess/pmix not built\n");
        return;
    }
    /* As in orte_ess_pmix_test: in sanitizer builds the ranks' leak check
     * would report what libpmix keeps inside its own plugins (unloaded at
     * PMIx_Finalize, so those stacks cannot be told from ours); the same
     * corpcs run under mcarun with leak detection. */
    const char *asan = getenv("ASAN_OPTIONS");
    static char options[1024];
    snprintf(options, sizeof(options), "%s%sdetect_leaks=0", NULL == asan ? "" : asan,
             NULL == asan || '\0' == asan[0] ? "" : ":");
    setenv("ASAN_OPTIONS", options, 1);
    /* Open MPI refuses root unless told twice; harmless otherwise. */
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    run_mpirun("knomial", "2", 1);
    run_mpirun("knomial", "2", 3);
    run_mpirun("knomial", "3", 8);
    run_mpirun("kary", "2", 5);
    run_mpirun("flat", "2", 4);
}
END_TEST

int main(void)
{
    setenv("OPAL_MCA_mca_base_component_path", RPC_TEST_PLUGIN_DIRS, 0);
    Suite *s = suite_create("rpc_group");
    OPAL_TEST_ADD(s, corpc_over_a_flat_tree_aggregates_every_rank_exactly);
    OPAL_TEST_ADD(s, corpc_over_a_binary_kary_tree_aggregates_every_rank_exactly);
    OPAL_TEST_ADD(s, corpc_over_a_ternary_kary_tree_aggregates_every_rank_exactly);
    OPAL_TEST_ADD(s, corpc_over_a_binomial_tree_aggregates_every_rank_exactly);
    OPAL_TEST_ADD(s, corpc_over_a_radix_4_knomial_tree_aggregates_every_rank_exactly);
    OPAL_TEST_ADD(s, a_killed_member_is_reported_failed_over_a_flat_tree);
    OPAL_TEST_ADD(s, a_killed_member_is_reported_failed_over_a_kary_tree);
    OPAL_TEST_ADD(s, a_killed_member_is_reported_failed_over_a_knomial_tree);
    OPAL_TEST_ADD(s, corpc_over_na_btl_with_sleeping_ranks);
    OPAL_TEST_ADD(s, corpc_runs_over_na_ofi_tcp_too);
    OPAL_TEST_ADD(s, a_client_outside_the_job_attaches_from_the_group_file);
    OPAL_TEST_ADD(s, corpc_runs_under_open_mpi_mpirun_through_ess_pmix);
    return opal_test_run(s);
}
