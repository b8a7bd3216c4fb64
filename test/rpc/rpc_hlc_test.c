/*
 * The hybrid logical clock (rpc_hlc.h) on its own: it never goes back,
 * stays near the wall clock, moves past what messages carry, refuses what
 * is too far ahead without moving, and gives distinct values to threads.
 * The clock is the process's: each case works relative to where the ones
 * before left it, and none moves it more than 300 ms ahead.
 */
#include "opal/opal_config.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "opal/mca/rpc/base/rpc_base_internal.h"
#include "opal/mca/rpc/rpc_hlc.h"
#include "opal/threads/opal_mutex.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

#define MS UINT64_C(1000000)

/* The wall clock, read finely, as a timestamp. */
static uint64_t wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return opal_rpc_unixnsec2hlc((uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec);
}

START_TEST(the_clock_never_goes_back_and_follows_the_wall_clock)
{
    uint64_t before = wall();
    uint64_t last = opal_rpc_hlc_get();
    for (int i = 0; i < 200000; ++i) {
        uint64_t next = opal_rpc_hlc_get();
        ck_assert_uint_gt(next, last);
        last = next;
    }
    /* Not behind the wall clock by more than a coarse tick (and this
     * machine's scheduling), nor ahead of where earlier cases put it. */
    ck_assert_uint_ge(opal_rpc_hlc2unixnsec(last) + 50 * MS, before);
    ck_assert_uint_le(opal_rpc_hlc2unixnsec(last), wall() + 300 * MS);
    /* A second later it has followed the wall clock. */
    struct timespec pause = {.tv_sec = 1, .tv_nsec = 0};
    nanosleep(&pause, NULL);
    ck_assert_uint_ge(opal_rpc_hlc_get(), last + 700 * MS);
}
END_TEST

START_TEST(a_message_from_ahead_moves_the_clock_past_it)
{
    uint64_t msg = wall() + 200 * MS;
    uint64_t hlc = 0, offset = 0;
    ck_assert_int_eq(opal_rpc_hlc_get_msg(msg, &hlc, &offset), OPAL_SUCCESS);
    ck_assert_uint_gt(hlc, msg);
    /* 200 ms ahead, less the time since msg was made (and a coarse tick). */
    ck_assert_uint_le(offset, 200 * MS + 50 * MS);
    ck_assert_uint_ge(offset, 100 * MS);
    ck_assert_uint_gt(opal_rpc_hlc_get(), hlc);
}
END_TEST

START_TEST(a_message_from_the_past_still_moves_the_clock_on)
{
    uint64_t before = opal_rpc_hlc_get();
    uint64_t hlc = 0, offset = 1;
    ck_assert_int_eq(opal_rpc_hlc_get_msg(1000, &hlc, &offset), OPAL_SUCCESS);
    ck_assert_uint_gt(hlc, before);
    ck_assert_uint_eq(offset, 0);
}
END_TEST

START_TEST(a_message_past_the_epsilon_is_refused_and_the_clock_stays)
{
    ck_assert_uint_eq(opal_rpc_hlc_epsilon_get(), 1000 * MS);
    uint64_t msg = wall() + 2000 * MS;
    uint64_t hlc = 7, offset = 0;
    ck_assert_int_eq(opal_rpc_hlc_get_msg(msg, &hlc, &offset), OPAL_ERR_HLC_SYNC);
    ck_assert_uint_eq(hlc, 7);
    ck_assert_uint_ge(offset, 1900 * MS);
    ck_assert_uint_lt(opal_rpc_hlc_get(), msg - 1000 * MS);
    /* A smaller epsilon refuses what the default takes. */
    opal_rpc_hlc_epsilon_set(10 * MS);
    ck_assert_uint_eq(opal_rpc_hlc_epsilon_get(), 10 * MS);
    ck_assert_int_eq(opal_rpc_hlc_get_msg(wall() + 100 * MS, NULL, NULL), OPAL_ERR_HLC_SYNC);
    opal_rpc_hlc_epsilon_set(1000 * MS);
    ck_assert_int_eq(opal_rpc_hlc_get_msg(wall() + 100 * MS, NULL, NULL), OPAL_SUCCESS);
    /* Nothing wraps: the largest timestamp, with an epsilon that takes it,
     * is refused by the default again afterwards. */
    ck_assert_uint_eq(opal_rpc_hlc_epsilon_get_bound(1000), 1000 + 1000 * MS);
    ck_assert_uint_eq(opal_rpc_hlc_epsilon_get_bound(UINT64_MAX - 5), UINT64_MAX);
}
END_TEST

/* The engine's receive path: the same outcome as opal_rpc_hlc_get_msg,
 * the wall clock read only when the message may be past the epsilon. */
START_TEST(the_engines_receive_moves_the_clock_past_the_message_or_refuses_it)
{
    uint64_t ahead = 1;
    uint64_t msg = opal_rpc_hlc_get() + 100 * MS;
    ck_assert_int_eq(opal_rpc_base_hlc_recv(msg, &ahead), OPAL_SUCCESS);
    ck_assert_uint_eq(ahead, 0);
    ck_assert_uint_gt(opal_rpc_hlc_get(), msg);
    /* Behind the clock: nothing to do. */
    ck_assert_int_eq(opal_rpc_base_hlc_recv(1000, &ahead), OPAL_SUCCESS);
    /* Past the epsilon: refused, with how far ahead, the clock unmoved. */
    uint64_t far = wall() + 2000 * MS;
    ck_assert_int_eq(opal_rpc_base_hlc_recv(far, &ahead), OPAL_ERR_HLC_SYNC);
    ck_assert_uint_ge(ahead, 1900 * MS);
    ck_assert_uint_lt(opal_rpc_hlc_get(), far - 1000 * MS);
    /* A smaller epsilon is seen at once. */
    opal_rpc_hlc_epsilon_set(10 * MS);
    ck_assert_int_eq(opal_rpc_base_hlc_recv(wall() + 500 * MS, &ahead), OPAL_ERR_HLC_SYNC);
    opal_rpc_hlc_epsilon_set(1000 * MS);
}
END_TEST

START_TEST(conversions_keep_the_wall_clock_part)
{
    uint64_t ns = UINT64_C(1796146889733898241);
    uint64_t hlc = opal_rpc_unixnsec2hlc(ns);
    ck_assert_uint_eq(hlc & OPAL_RPC_HLC_LOGICAL_MASK, 0);
    ck_assert_uint_le(ns - hlc, OPAL_RPC_HLC_LOGICAL_MASK);
    ck_assert_uint_eq(opal_rpc_hlc2unixnsec(hlc + 5), hlc);
}
END_TEST

#define THREADS    4
#define PER_THREAD 20000

static uint64_t stamps[THREADS][PER_THREAD];

static void *stamper(void *arg)
{
    uint64_t *mine = arg;
    for (int i = 0; i < PER_THREAD; ++i) {
        /* Every fourth a message from the past, as a receive would. */
        if (0 == i % 4) {
            /* (0, which fails the order check, if refused.) */
            if (OPAL_SUCCESS != opal_rpc_hlc_get_msg(1000, &mine[i], NULL)) {
                mine[i] = 0;
            }
        } else {
            mine[i] = opal_rpc_hlc_get();
        }
    }
    return NULL;
}

static int compare(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y ? -1 : x > y;
}

START_TEST(threads_share_one_clock_and_never_see_a_value_twice)
{
    bool was = opal_set_using_threads(true);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; ++i) {
        ck_assert_int_eq(pthread_create(&t[i], NULL, stamper, stamps[i]), 0);
    }
    for (int i = 0; i < THREADS; ++i) {
        ck_assert_int_eq(pthread_join(t[i], NULL), 0);
    }
    (void) opal_set_using_threads(was);
    for (int i = 0; i < THREADS; ++i) {
        for (int j = 1; j < PER_THREAD; ++j) {
            ck_assert_uint_gt(stamps[i][j], stamps[i][j - 1]);
        }
    }
    uint64_t *all = &stamps[0][0];
    qsort(all, THREADS * PER_THREAD, sizeof(*all), compare);
    for (int k = 1; k < THREADS * PER_THREAD; ++k) {
        ck_assert_uint_ne(all[k], all[k - 1]);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rpc_hlc");
    OPAL_TEST_ADD(s, the_clock_never_goes_back_and_follows_the_wall_clock);
    OPAL_TEST_ADD(s, a_message_from_ahead_moves_the_clock_past_it);
    OPAL_TEST_ADD(s, a_message_from_the_past_still_moves_the_clock_on);
    OPAL_TEST_ADD(s, a_message_past_the_epsilon_is_refused_and_the_clock_stays);
    OPAL_TEST_ADD(s, the_engines_receive_moves_the_clock_past_the_message_or_refuses_it);
    OPAL_TEST_ADD(s, conversions_keep_the_wall_clock_part);
    OPAL_TEST_ADD(s, threads_share_one_clock_and_never_see_a_value_twice);
    return opal_test_run(s);
}
