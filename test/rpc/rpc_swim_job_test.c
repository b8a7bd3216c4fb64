/*
 * SWIM over rpc in a job of 8 ranks (rpc_swim_rank under the build tree's
 * mcarun, oversubscribed, rpc over na/btl), with short periods (200 ms, ping
 * timeout 180 ms, suspicion 2 s):
 *  - a rank killed with SIGKILL is declared dead by every survivor, no
 *    sooner than the suspicion timeout allows; the detection times are
 *    printed (the test's log);
 *  - a rank stopped with SIGSTOP for 1 s (less than the suspicion
 *    timeout) is never declared dead, by anyone.
 */
#include "opal/opal_config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test/orte/mcarun_test_support.h"
#include "test/support/opal_test.h"

#define NP "8"

/* info: the na class the ranks run rpc over (NULL: na/btl). */
static void run_case_over(const char *mode, bool over_group, const char *info, mcarun_run_t *run,
                          char *dir)
{
    static char prog[4096];
    snprintf(prog, sizeof(prog), "%s", mcarun_test_build_path("test/rpc/rpc_swim_rank"));
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *args[] = {"-x",
                          over_group ? "RPC_SWIM_OVER_GROUP=1" : "RPC_SWIM_UNUSED=1",
                          "-np",
                          NP,
                          "--oversubscribe",
                          "--enable-recovery",
                          "--timeout",
                          "150",
                          "--mca",
                          "rpc_swim_period_ms",
                          "200",
                          "--mca",
                          "rpc_swim_ping_timeout_ms",
                          "180",
                          "--mca",
                          "rpc_swim_suspect_timeout_ms",
                          "2000",
                          prog,
                          mode,
                          dir,
                          "1000",
                          info,
                          NULL};
    mcarun_test_set_run_limit(180);
    mcarun_test_mcarun(run, NULL, args);
}

static void run_case(const char *mode, bool over_group, mcarun_run_t *run, char *dir)
{
    run_case_over(mode, over_group, NULL, run, dir);
}

static void remove_dir(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(a_killed_rank_is_declared_dead_by_every_survivor)
{
    char dir[] = "/tmp/rpc_swim_kill_XXXXXX";
    mcarun_run_t run;
    run_case("kill", false, &run, dir);
    int oks = mcarun_test_count(run.out, " ok\n");
    if (7 != oks) {
        mcarun_test_dump(&run);
    }
    ck_assert_int_eq(oks, 7);
    /* mcarun reports the killed rank (--enable-recovery keeps the rest). */
    ck_assert_int_ne(run.status, 0);
    /* Every survivor's detection time: at least the suspicion timeout. */
    int seen = 0;
    long worst = 0;
    for (const char *l = strstr(run.out, " dead after "); NULL != l;
         l = strstr(l + 1, " dead after ")) {
        long ms = strtol(l + strlen(" dead after "), NULL, 10);
        ck_assert_int_ge(ms, 2000);
        ck_assert_int_le(ms, 60000);
        worst = ms > worst ? ms : worst;
        seen++;
    }
    ck_assert_int_eq(seen, 7);
    printf("rpc_swim_job_test: SIGKILL detected by all 7 survivors, the last after %ld ms:\n%s",
           worst, run.out);
    mcarun_test_run_free(&run);
    remove_dir(dir);
}
END_TEST

START_TEST(a_rank_stopped_shorter_than_the_suspicion_is_never_declared_dead)
{
    char dir[] = "/tmp/rpc_swim_stop_XXXXXX";
    mcarun_run_t run;
    run_case("stop", false, &run, dir);
    int oks = mcarun_test_count(run.out, " ok\n");
    if (8 != oks || 0 != run.status) {
        mcarun_test_dump(&run);
    }
    ck_assert_int_eq(run.status, 0);
    ck_assert_int_eq(oks, 8);
    ck_assert_int_eq(mcarun_test_count(run.out, "declared dead"), 0);
    printf("rpc_swim_job_test: SIGSTOP for 1 s, nobody declared dead:\n%s", run.out);
    mcarun_test_run_free(&run);
    remove_dir(dir);
}
END_TEST

/* SWIM over the primary group (opal_rpc_group_swim_create): the killed
 * rank becomes dead in every survivor's group, whose version increased. */
START_TEST(a_killed_rank_is_dead_in_every_survivors_primary_group)
{
    char dir[] = "/tmp/rpc_swim_group_XXXXXX";
    mcarun_run_t run;
    run_case("kill", true, &run, dir);
    int oks = mcarun_test_count(run.out, " ok\n");
    int dead = mcarun_test_count(run.out, " dead in group primary (version ");
    if (7 != oks || 7 != dead) {
        mcarun_test_dump(&run);
    }
    ck_assert_int_eq(oks, 7);
    ck_assert_int_eq(dead, 7);
    ck_assert_int_ne(run.status, 0);
    mcarun_test_run_free(&run);
    remove_dir(dir);
}
END_TEST

/* Over na/ofi's tcp: the survivors' pings to the dead rank find no room
 * at the provider (rxm cannot connect) and wait in na/ofi's retry queue;
 * the pings to live ranks must not wait behind them (they did: every
 * survivor declared every other rank dead). */
START_TEST(a_killed_rank_is_declared_dead_and_no_other_over_na_ofi_tcp)
{
    if (!mcarun_test_component_built("na", "ofi", RPC_TEST_PLUGIN_DIRS)) {
        return;
    }
    char dir[] = "/tmp/rpc_swim_tcp_XXXXXX";
    mcarun_run_t run;
    run_case_over("kill", false, "ofi+tcp://127.0.0.1", &run, dir);
    int oks = mcarun_test_count(run.out, " ok\n");
    if (7 != oks) {
        mcarun_test_dump(&run);
    }
    ck_assert_int_eq(oks, 7);
    ck_assert_int_eq(mcarun_test_count(run.out, "but it lives"), 0);
    ck_assert_int_ne(run.status, 0);
    mcarun_test_run_free(&run);
    remove_dir(dir);
}
END_TEST

int main(void)
{
    setenv("OPAL_MCA_mca_base_component_path", RPC_TEST_PLUGIN_DIRS, 0);
    Suite *s = suite_create("rpc_swim_job");
    OPAL_TEST_ADD(s, a_killed_rank_is_declared_dead_by_every_survivor);
    OPAL_TEST_ADD(s, a_rank_stopped_shorter_than_the_suspicion_is_never_declared_dead);
    OPAL_TEST_ADD(s, a_killed_rank_is_dead_in_every_survivors_primary_group);
    OPAL_TEST_ADD(s, a_killed_rank_is_declared_dead_and_no_other_over_na_ofi_tcp);
    return opal_test_run(s);
}
