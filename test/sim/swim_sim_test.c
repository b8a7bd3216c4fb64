/*
 * SWIM in the simulator at small N (100 members, CaRT's parameters, 1-3 ms
 * delays): crashed members are declared dead by every survivor within the
 * bound the parameters give, and message loss of 1 % and 5 % does not
 * make live members dead; the live job's 8 ranks detect in the live
 * window; the tree measure. Virtual time: nothing here depends on the
 * machine's speed.
 */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/util/opal_error.h"
#include "test/sim/swim_sim.h"
#include "test/sim/tree_sim.h"
#include "test/support/opal_test.h"

#define N 100

static swim_sim_t *make(double loss, uint64_t seed)
{
    swim_sim_config_t cfg = {.n = N, .loss = loss, .delay_ms = 2, .seed = seed};
    opal_swim_params_default(&cfg.params);
    cfg.params.seed = seed;
    swim_sim_t *sim = NULL;
    ck_assert_int_eq(swim_sim_create(&cfg, &sim), OPAL_SUCCESS);
    return sim;
}

/* Crashes ranks 7, 42 and 99 in the 4th second; runs 60 s more. */
static void crash_three(swim_sim_t *sim)
{
    swim_sim_run_until(sim, 3000);
    ck_assert_int_eq(swim_sim_kill(sim, 7), 0);
    swim_sim_run_until(sim, 3300);
    ck_assert_int_eq(swim_sim_kill(sim, 42), 1);
    swim_sim_run_until(sim, 3700);
    ck_assert_int_eq(swim_sim_kill(sim, 99), 2);
    swim_sim_run_until(sim, 63700);
}

START_TEST(crashed_members_are_declared_dead_by_every_survivor)
{
    swim_sim_t *sim = make(0.0, 1);
    crash_three(sim);
    ck_assert(swim_sim_all_detected(sim));
    /* No member can be dead before its suspicion ran out (8 s after a
     * probe of at least 1.8 s); with no loss every survivor knows within
     * the time a round of the permutation (100 periods) would bound, and
     * in practice far sooner. */
    uint64_t count = 0;
    uint64_t *t = swim_sim_detection_times(sim, &count);
    ck_assert_uint_eq(count, 3 * (N - 3));
    ck_assert_uint_ge(t[0], 8000 + 1800);
    ck_assert_uint_le(t[count - 1], 40000);
    free(t);
    swim_sim_counts_t c;
    swim_sim_counts(sim, &c);
    ck_assert_uint_eq(c.falsely_dead, 0);
    ck_assert_uint_eq(c.false_suspect, 0);
    ck_assert_uint_eq(c.refused, 0);
    swim_sim_destroy(sim);
}
END_TEST

START_TEST(every_survivor_learns_the_deaths_under_five_percent_loss)
{
    swim_sim_t *sim = make(0.05, 2);
    crash_three(sim);
    ck_assert(swim_sim_all_detected(sim));
    swim_sim_counts_t c;
    swim_sim_counts(sim, &c);
    ck_assert_uint_eq(c.falsely_dead, 0);
    swim_sim_destroy(sim);
}
END_TEST

/* Runs 120 s with loss and no crash: suspicions happen (the loss is real)
 * and are all refuted. */
static void no_live_member_dies(double loss, uint64_t seed)
{
    swim_sim_t *sim = make(loss, seed);
    swim_sim_run_until(sim, 120000);
    swim_sim_counts_t c;
    swim_sim_counts(sim, &c);
    ck_assert_uint_gt(c.lost, 0);
    ck_assert_uint_eq(c.falsely_dead, 0);
    ck_assert_uint_eq(c.false_dead, 0);
    uint64_t refutations = 0;
    for (uint32_t i = 0; i < N; ++i) {
        opal_swim_stats_t st;
        opal_swim_stats(swim_sim_member(sim, i), &st);
        refutations += st.refutations;
        opal_swim_status_t status;
        uint64_t inc;
        for (uint32_t r = 0; r < N; ++r) {
            ck_assert_int_eq(opal_swim_member(swim_sim_member(sim, i), r, &status, &inc),
                             OPAL_SUCCESS);
            ck_assert_int_ne(status, OPAL_SWIM_DEAD);
        }
    }
    if (loss >= 0.05) {
        ck_assert_uint_gt(c.false_suspect, 0);
        ck_assert_uint_gt(refutations, 0);
    }
    swim_sim_destroy(sim);
}

START_TEST(one_percent_loss_declares_no_live_member_dead)
{
    no_live_member_dies(0.01, 3);
}
END_TEST

START_TEST(five_percent_loss_declares_no_live_member_dead)
{
    no_live_member_dies(0.05, 4);
}
END_TEST

START_TEST(the_same_seeds_give_the_same_run)
{
    swim_sim_counts_t c[2];
    uint64_t first[2];
    for (int k = 0; k < 2; ++k) {
        swim_sim_t *sim = make(0.05, 5);
        crash_three(sim);
        swim_sim_counts(sim, &c[k]);
        first[k] = swim_sim_dead_seen(sim, 1, 0);
        swim_sim_destroy(sim);
    }
    ck_assert_int_eq(memcmp(&c[0], &c[1], sizeof(c[0])), 0);
    ck_assert_uint_eq(first[0], first[1]);
}
END_TEST

/* rpc_swim_job_test's job in the simulator: 8 members, period 200 ms,
 * ping timeout 180 ms, suspicion 2 s, the last one killed. The live job
 * measured 2.6 to 3.1 s for every survivor; the simulation must land in
 * the same window: no sooner than a probe (2 x 180 ms) and the suspicion,
 * no later than 4 s. */
START_TEST(the_live_jobs_group_detects_in_the_live_window)
{
    for (uint64_t seed = 1; seed <= 9; ++seed) {
        swim_sim_config_t cfg = {.n = 8, .delay_ms = 1, .seed = seed};
        opal_swim_params_default(&cfg.params);
        cfg.params.period_ms = 200;
        cfg.params.ping_timeout_ms = 180;
        cfg.params.suspect_timeout_ms = 2000;
        cfg.params.seed = seed;
        swim_sim_t *sim = NULL;
        ck_assert_int_eq(swim_sim_create(&cfg, &sim), OPAL_SUCCESS);
        swim_sim_run_until(sim, 2000);
        ck_assert_int_eq(swim_sim_kill(sim, 7), 0);
        swim_sim_run_until(sim, 20000);
        uint64_t count = 0;
        uint64_t *t = swim_sim_detection_times(sim, &count);
        ck_assert_uint_eq(count, 7);
        ck_assert_uint_ge(t[0], 2000 + 2 * 180);
        ck_assert_uint_le(t[count - 1], 4000);
        free(t);
        swim_sim_destroy(sim);
    }
}
END_TEST

/* A k-ary heap (children r*k+1..r*k+k), the reference for the measure. */
static uint32_t heap_nchildren(uint32_t rank, uint32_t n, uint32_t k)
{
    uint64_t first = (uint64_t) rank * k + 1;
    return first >= n ? 0 : (uint32_t) (n - first < k ? n - first : k);
}

static void heap_children(uint32_t rank, uint32_t n, uint32_t k, uint32_t *children)
{
    for (uint32_t i = 0; i < heap_nchildren(rank, n, k); ++i) {
        children[i] = rank * k + 1 + i;
    }
}

static uint32_t heap_parent(uint32_t rank, uint32_t n, uint32_t k)
{
    (void) n;
    return 0 == rank ? UINT32_MAX : (rank - 1) / k;
}

static uint32_t wrong_parent(uint32_t rank, uint32_t n, uint32_t k)
{
    (void) n;
    (void) k;
    return 0 == rank ? UINT32_MAX : 0;
}

START_TEST(tree_shapes_are_measured_and_checked)
{
    tree_sim_shape_t heap = {"heap", heap_nchildren, heap_children, heap_parent};
    tree_sim_result_t r;
    const char *why = NULL;
    ck_assert_int_eq(tree_sim_measure(&heap, 100, 2, &r, &why), OPAL_SUCCESS);
    ck_assert_uint_eq(r.depth, 6);
    ck_assert_uint_eq(r.root_children, 2);
    ck_assert_uint_eq(r.root_messages, 4);
    ck_assert_uint_eq(r.max_children, 2);
    ck_assert_int_eq(tree_sim_measure(&heap, 100000, 4, &r, &why), OPAL_SUCCESS);
    ck_assert_uint_eq(r.depth, 9); /* (4^9 - 1) / 3 = 87381 < 100000 */
    ck_assert_int_eq(tree_sim_measure(&heap, 1, 4, &r, &why), OPAL_SUCCESS);
    ck_assert_uint_eq(r.depth, 0);
    ck_assert_uint_eq(r.root_messages, 0);
    tree_sim_shape_t broken = {"broken", heap_nchildren, heap_children, wrong_parent};
    ck_assert_int_eq(tree_sim_measure(&broken, 100, 2, &r, &why), OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_nonnull(strstr(why, "parent"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("swim_sim");
    OPAL_TEST_ADD(s, crashed_members_are_declared_dead_by_every_survivor);
    OPAL_TEST_ADD(s, every_survivor_learns_the_deaths_under_five_percent_loss);
    OPAL_TEST_ADD(s, one_percent_loss_declares_no_live_member_dead);
    OPAL_TEST_ADD(s, five_percent_loss_declares_no_live_member_dead);
    OPAL_TEST_ADD(s, the_same_seeds_give_the_same_run);
    OPAL_TEST_ADD(s, the_live_jobs_group_detects_in_the_live_window);
    OPAL_TEST_ADD(s, tree_shapes_are_measured_and_checked);
    return opal_test_run(s);
}
