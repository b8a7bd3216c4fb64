/*
 * Corpcs that move more than sums, inside mcarun jobs of up to 8 ranks
 * (oversubscribed; the rank program is rpc_corpc_rank): a bulk handle
 * bound at the root reaches every member, which pulls 1 MiB from the root
 * itself however deep it is in the tree; aggregates larger than the eager
 * size travel by bulk at every level and arrive exact; subgroups created
 * collectively; and a client outside the job runs corpcs through a root.
 * The job's corpcs run under Open MPI's mpirun (ess/pmix) too.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test/orte/mcarun_test_support.h"
#include "test/support/opal_test.h"

static void run_job(const char *mode, const char *tree, const char *k, int np)
{
    static char prog[4096], count[16];
    snprintf(prog, sizeof(prog), "%s", mcarun_test_build_path("test/rpc/rpc_corpc_rank"));
    snprintf(count, sizeof(count), "%d", np);
    const char *args[] = {"-np", count, "--oversubscribe", "--timeout", "240", prog, "btl", tree, k,
                          mode,  NULL};
    mcarun_run_t run;
    mcarun_test_set_run_limit(300);
    mcarun_test_mcarun(&run, NULL, args);
    bool ok = mcarun_test_count(run.out, " ok\n") == np &&
              0 == mcarun_test_count(run.out, "FAILED") && 0 == run.status;
    if (!ok) {
        mcarun_test_dump(&run);
    }
    ck_assert_msg(ok, "%s %s k=%s np=%d: %d of %d ranks ok, status %d", mode, tree, k, np,
                  mcarun_test_count(run.out, " ok\n"), np, run.status);
    if (0 == strcmp(mode, "create")) {
        static char line[128];
        snprintf(line, sizeof(line), "root: odd-ones created at %d of %d members, version 1\n",
                 np / 2 + 1, np / 2 + 1);
        ck_assert_msg(NULL != strstr(run.out, line), "no '%s'", line);
        ck_assert_int_eq(mcarun_test_count(run.out, "rank 1: corpc over odd-ones: "), np > 1);
        ck_assert_int_eq(mcarun_test_count(run.out, "root: taken refused by rank "), np > 1);
        ck_assert_int_eq(mcarun_test_count(run.out, "root: with-dead reported rank 2 failed"),
                         np >= 3);
    }
    if (0 == strcmp(mode, "bulk")) {
        static char line[128];
        snprintf(line, sizeof(line), "root: bulk: %d of %d ranks pulled 1048576 bytes", np, np);
        ck_assert_msg(NULL != strstr(run.out, line), "no '%s'", line);
    }
    mcarun_test_run_free(&run);
}

START_TEST(a_bound_handle_reaches_every_member_over_a_flat_tree)
{
    run_job("bulk", "flat", "2", 8);
}
END_TEST

START_TEST(a_bound_handle_reaches_every_member_over_a_kary_tree)
{
    run_job("bulk", "kary", "2", 8);
    run_job("bulk", "kary", "2", 1);
}
END_TEST

START_TEST(a_bound_handle_reaches_every_member_over_a_knomial_tree)
{
    run_job("bulk", "knomial", "2", 8);
    run_job("bulk", "knomial", "2", 5);
}
END_TEST

START_TEST(aggregates_above_the_eager_size_arrive_exact_over_every_shape)
{
    run_job("big", "flat", "2", 8);
    run_job("big", "kary", "2", 8);
    run_job("big", "knomial", "2", 8);
    run_job("big", "knomial", "3", 4);
}
END_TEST

/* Rank 0 creates "odd-ones" collectively; every member knows it at the
 * same version and rank 1 runs a corpc over it; a name in use at one
 * member and a member known dead are reported and undone. */
START_TEST(a_subgroup_created_by_one_member_is_known_at_every_member)
{
    static const int nps[] = {1, 2, 3, 8};
    for (size_t i = 0; i < sizeof(nps) / sizeof(nps[0]); ++i) {
        run_job("create", "knomial", "2", nps[i]);
    }
    run_job("create", "flat", "2", 5);
}
END_TEST

/* A client started alone attaches from the group file a rank saved and
 * has a root it names run corpcs over the group: the aggregates (above the
 * eager size too), its own bound handle pulled by every member, exclusions
 * and refusals, then a stop through the root. */
static void client_job(const char *tree, int np, const char *root)
{
    if (!mcarun_test_component_built("na", "ofi", RPC_TEST_PLUGIN_DIRS)) {
        printf("skipped: na/ofi not built\n");
        return;
    }
    static char prog[4096], client[4096], serve[512], file[256], command[8192], count[16];
    snprintf(file, sizeof(file), "/tmp/rpc_corpc_test_%d.grp", (int) getpid());
    unlink(file);
    snprintf(serve, sizeof(serve), "serve=%s", file);
    snprintf(count, sizeof(count), "%d", np);
    snprintf(prog, sizeof(prog), "%s", mcarun_test_build_path("test/rpc/rpc_corpc_rank"));
    snprintf(client, sizeof(client), "%s", mcarun_test_build_path("test/rpc/rpc_corpc_client"));
    const char *info = "ofi+tcp://127.0.0.1";
    const char *args[] = {
        "-np", count, "--oversubscribe", "--timeout", "200", prog, info, tree, "2", serve, NULL};
    mcarun_run_t run;
    mcarun_test_set_run_limit(300);
    mcarun_test_start(&run, NULL, args);
    bool saved = mcarun_test_wait_for(&run, "group saved\n", 1);
    static char out[1 << 14];
    out[0] = '\0';
    int status = -1;
    if (saved) {
        snprintf(command, sizeof(command), "timeout -k 5 200 %s '%s' %s %s 2>&1", client, info,
                 file, root);
        FILE *p = popen(command, "r");
        ck_assert_ptr_nonnull(p);
        size_t len = fread(out, 1, sizeof(out) - 1, p);
        out[len] = '\0';
        status = pclose(p);
    }
    mcarun_test_finish(&run);
    unlink(file);
    static char want[128];
    snprintf(want, sizeof(want), "client ok: %d ranks through root %s\n", np, root);
    bool ok = saved && 0 == status && NULL != strstr(out, want) && 0 == run.status &&
              np == mcarun_test_count(run.out, " ok\n");
    if (!ok) {
        mcarun_test_dump(&run);
        fprintf(stderr, "client: %s\n", out);
    }
    ck_assert_msg(saved, "no rank saved the group file");
    ck_assert_msg(0 == status && NULL != strstr(out, want), "client: %s", out);
    ck_assert_int_eq(run.status, 0);
    ck_assert_int_eq(mcarun_test_count(run.out, " ok\n"), np);
    mcarun_test_run_free(&run);
}

START_TEST(a_client_outside_the_group_runs_corpcs_through_a_root)
{
    client_job("knomial", 8, "5");
    client_job("flat", 3, "0");
}
END_TEST

/* The same under Open MPI's mpirun (the ranks' runtime is ess/pmix). */
static bool have_mpirun(void)
{
#if OPAL_HAVE_PMIX
    return 0 == system("command -v mpirun >/dev/null 2>&1");
#else
    return false;
#endif
}

static void run_mpirun(const char *mode, const char *tree, int np)
{
    static char command[16384];
    snprintf(command, sizeof(command),
             "timeout -k 5 240 mpirun --oversubscribe --bind-to none -np %d "
             "-x OPAL_MCA_mca_base_component_path=%s %s btl %s 2 %s 2>&1",
             np, RPC_TEST_PLUGIN_DIRS, mcarun_test_build_path("test/rpc/rpc_corpc_rank"), tree,
             mode);
    FILE *p = popen(command, "r");
    ck_assert_ptr_nonnull(p);
    static char out[1 << 16];
    size_t len = fread(out, 1, sizeof(out) - 1, p);
    out[len] = '\0';
    int status = pclose(p);
    ck_assert_msg(0 == status && np == mcarun_test_count(out, " ok\n") &&
                      0 == mcarun_test_count(out, "FAILED"),
                  "mpirun -np %d %s %s exited %d:\n%.3000s", np, mode, tree, status, out);
}

START_TEST(the_same_corpcs_run_under_open_mpi_mpirun_through_ess_pmix)
{
    if (!have_mpirun()) {
        printf("skipped: no mpirun, or ess/pmix not built\n");
        return;
    }
    /* As in rpc_group_test: libpmix's own plugins would show as leaks. */
    const char *asan = getenv("ASAN_OPTIONS");
    static char options[1024];
    snprintf(options, sizeof(options), "%s%sdetect_leaks=0", NULL == asan ? "" : asan,
             NULL == asan || '\0' == asan[0] ? "" : ":");
    setenv("ASAN_OPTIONS", options, 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    run_mpirun("bulk", "knomial", 4);
    run_mpirun("big", "kary", 5);
    run_mpirun("create", "knomial", 5);
}
END_TEST

int main(void)
{
    setenv("OPAL_MCA_mca_base_component_path", RPC_TEST_PLUGIN_DIRS, 0);
    Suite *s = suite_create("rpc_corpc");
    OPAL_TEST_ADD(s, a_bound_handle_reaches_every_member_over_a_flat_tree);
    OPAL_TEST_ADD(s, a_bound_handle_reaches_every_member_over_a_kary_tree);
    OPAL_TEST_ADD(s, a_bound_handle_reaches_every_member_over_a_knomial_tree);
    OPAL_TEST_ADD(s, aggregates_above_the_eager_size_arrive_exact_over_every_shape);
    OPAL_TEST_ADD(s, a_subgroup_created_by_one_member_is_known_at_every_member);
    OPAL_TEST_ADD(s, a_client_outside_the_group_runs_corpcs_through_a_root);
    OPAL_TEST_ADD(s, the_same_corpcs_run_under_open_mpi_mpirun_through_ess_pmix);
    return opal_test_run(s);
}
