/* Atomics: arithmetic returns, compare-and-swap success and failure,
 * swap, the 128-bit compare-and-swap, and exact counts under contention. */
#include "opal/opal_config.h"

#include <pthread.h>
#include <stdalign.h>

#include "opal/threads/opal_atomic.h"
#include "test/support/opal_test.h"

enum { NTHREADS = 4 };

START_TEST(add_fetch_returns_new_value)
{
    opal_atomic_int32_t a32 = 5;
    ck_assert_int_eq(opal_atomic_add_fetch_32(&a32, 3), 8);
    ck_assert_int_eq(opal_atomic_add_fetch_32(&a32, -10), -2);
    ck_assert_int_eq(atomic_load(&a32), -2);

    opal_atomic_int64_t a64 = INT64_C(1) << 40;
    ck_assert_int_eq(opal_atomic_add_fetch_64(&a64, 1), (INT64_C(1) << 40) + 1);
    ck_assert_int_eq(atomic_load(&a64), (INT64_C(1) << 40) + 1);

    opal_atomic_size_t as = 10;
    ck_assert_uint_eq(opal_atomic_add_fetch_size_t(&as, 7), 17);
    ck_assert_uint_eq(opal_atomic_sub_fetch_size_t(&as, 17), 0);
    ck_assert_uint_eq(atomic_load(&as), 0);
}
END_TEST

START_TEST(fetch_add_relaxed_returns_old_value)
{
    opal_atomic_int64_t a = 40;
    ck_assert_int_eq(opal_atomic_fetch_add_64_relaxed(&a, 2), 40);
    ck_assert_int_eq(atomic_load(&a), 42);
}
END_TEST

START_TEST(cas_success_stores_desired)
{
    opal_atomic_int32_t a32 = 1;
    int32_t e32 = 1;
    ck_assert(opal_atomic_compare_exchange_strong_32(&a32, &e32, 2));
    ck_assert_int_eq(atomic_load(&a32), 2);
    ck_assert_int_eq(e32, 1);

    opal_atomic_int64_t a64 = INT64_MIN;
    int64_t e64 = INT64_MIN;
    ck_assert(opal_atomic_compare_exchange_strong_64(&a64, &e64, INT64_MAX));
    ck_assert_int_eq(atomic_load(&a64), INT64_MAX);

    int target;
    opal_atomic_intptr_t ap = 0;
    intptr_t ep = 0;
    ck_assert(opal_atomic_compare_exchange_strong_ptr(&ap, &ep, (intptr_t) &target));
    ck_assert(atomic_load(&ap) == (intptr_t) &target);
}
END_TEST

START_TEST(cas_failure_updates_expected)
{
    opal_atomic_int32_t a32 = 7;
    int32_t e32 = 6;
    ck_assert(!opal_atomic_compare_exchange_strong_32(&a32, &e32, 100));
    ck_assert_int_eq(atomic_load(&a32), 7);
    ck_assert_int_eq(e32, 7);
    /* With the refreshed expected value the retry succeeds. */
    ck_assert(opal_atomic_compare_exchange_strong_32(&a32, &e32, 100));
    ck_assert_int_eq(atomic_load(&a32), 100);

    opal_atomic_int64_t a64 = 3;
    int64_t e64 = 4;
    ck_assert(!opal_atomic_compare_exchange_strong_64(&a64, &e64, 5));
    ck_assert_int_eq(e64, 3);
    ck_assert_int_eq(atomic_load(&a64), 3);

    opal_atomic_intptr_t ap = 16;
    intptr_t ep = 32;
    ck_assert(!opal_atomic_compare_exchange_strong_ptr(&ap, &ep, 48));
    ck_assert_int_eq(ep, 16);
    ck_assert_int_eq(atomic_load(&ap), 16);
}
END_TEST

START_TEST(swap_returns_old_value)
{
    opal_atomic_intptr_t a = 11;
    ck_assert_int_eq(opal_atomic_swap_ptr(&a, 22), 11);
    ck_assert_int_eq(opal_atomic_swap_ptr(&a, 33), 22);
    ck_assert_int_eq(atomic_load(&a), 33);
}
END_TEST

static opal_atomic_int64_t shared_counter;
static size_t counter_rounds;

static void *add_body(void *arg)
{
    (void) arg;
    for (size_t i = 0; i < counter_rounds; ++i) {
        opal_atomic_add_fetch_64(&shared_counter, 1);
    }
    return NULL;
}

static void *cas_body(void *arg)
{
    (void) arg;
    for (size_t i = 0; i < counter_rounds; ++i) {
        int64_t seen = atomic_load_explicit(&shared_counter, memory_order_relaxed);
        while (!opal_atomic_compare_exchange_strong_64(&shared_counter, &seen, seen + 1)) {
        }
    }
    return NULL;
}

static void run_threads(void *(*body)(void *) )
{
    pthread_t threads[NTHREADS];
    for (int i = 0; i < NTHREADS; ++i) {
        ck_assert_int_eq(pthread_create(&threads[i], NULL, body, NULL), 0);
    }
    for (int i = 0; i < NTHREADS; ++i) {
        ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
    }
}

START_TEST(concurrent_add_counts_exactly)
{
    atomic_store(&shared_counter, 0);
    counter_rounds = opal_test_iterations(200000);
    run_threads(add_body);
    ck_assert_int_eq(atomic_load(&shared_counter), (int64_t) (NTHREADS * counter_rounds));
}
END_TEST

START_TEST(concurrent_cas_loop_counts_exactly)
{
    atomic_store(&shared_counter, 0);
    counter_rounds = opal_test_iterations(200000);
    run_threads(cas_body);
    ck_assert_int_eq(atomic_load(&shared_counter), (int64_t) (NTHREADS * counter_rounds));
}
END_TEST

#if OPAL_HAVE_ATOMIC_CAS_128

static opal_int128_t make128(uint64_t hi, uint64_t lo)
{
    return ((opal_int128_t) hi << 64) | lo;
}

static uint64_t hi64(opal_int128_t v)
{
    return (uint64_t) (v >> 64);
}

static uint64_t lo64(opal_int128_t v)
{
    return (uint64_t) v;
}

START_TEST(cas128_type_is_16_byte_aligned)
{
    ck_assert_uint_ge(alignof(opal_int128_t), 16);
}
END_TEST

START_TEST(cas128_success_stores_both_halves)
{
    alignas(16) opal_int128_t v = make128(1, 2);
    opal_int128_t expected = make128(1, 2);
    ck_assert(opal_atomic_compare_exchange_strong_128(&v, &expected, make128(3, 4)));
    ck_assert_uint_eq(hi64(v), 3);
    ck_assert_uint_eq(lo64(v), 4);
    ck_assert(expected == make128(1, 2));
}
END_TEST

START_TEST(cas128_failure_returns_current_value)
{
    alignas(16) opal_int128_t v = make128(0xaaaa, 0xbbbb);
    opal_int128_t expected = make128(1, 1);
    ck_assert(!opal_atomic_compare_exchange_strong_128(&v, &expected, make128(5, 5)));
    ck_assert_uint_eq(hi64(expected), 0xaaaa);
    ck_assert_uint_eq(lo64(expected), 0xbbbb);
    ck_assert(v == make128(0xaaaa, 0xbbbb));
}
END_TEST

START_TEST(cas128_compares_high_half)
{
    alignas(16) opal_int128_t v = make128(7, 9);
    opal_int128_t expected = make128(8, 9); /* only the high half differs */
    ck_assert(!opal_atomic_compare_exchange_strong_128(&v, &expected, make128(0, 0)));
    ck_assert(v == make128(7, 9));
    ck_assert(expected == make128(7, 9));
}
END_TEST

START_TEST(cas128_compares_low_half)
{
    alignas(16) opal_int128_t v = make128(7, 9);
    opal_int128_t expected = make128(7, 10); /* only the low half differs */
    ck_assert(!opal_atomic_compare_exchange_strong_128(&v, &expected, make128(0, 0)));
    ck_assert(v == make128(7, 9));
    ck_assert(expected == make128(7, 9));
}
END_TEST

/* Each increment adds 1 to the low half and 3 to the high half in one
 * CAS: a lost update or a torn pair shows in the final halves. */
static alignas(16) opal_int128_t pair_counter;

static void *cas128_body(void *arg)
{
    (void) arg;
    opal_int128_t seen = make128(0, 0);
    for (size_t i = 0; i < counter_rounds; ++i) {
        opal_int128_t next;
        do {
            next = make128(hi64(seen) + 3, lo64(seen) + 1);
        } while (!opal_atomic_compare_exchange_strong_128(&pair_counter, &seen, next));
        seen = next;
    }
    return NULL;
}

START_TEST(cas128_concurrent_counter_is_exact)
{
    pair_counter = make128(0, 0);
    counter_rounds = opal_test_iterations(100000);
    run_threads(cas128_body);
    ck_assert_uint_eq(lo64(pair_counter), NTHREADS * counter_rounds);
    ck_assert_uint_eq(hi64(pair_counter), 3 * NTHREADS * counter_rounds);
}
END_TEST

#endif /* OPAL_HAVE_ATOMIC_CAS_128 */

static Suite *atomic_suite(void)
{
    Suite *s = suite_create("opal_atomic");
    OPAL_TEST_ADD(s, add_fetch_returns_new_value);
    OPAL_TEST_ADD(s, fetch_add_relaxed_returns_old_value);
    OPAL_TEST_ADD(s, cas_success_stores_desired);
    OPAL_TEST_ADD(s, cas_failure_updates_expected);
    OPAL_TEST_ADD(s, swap_returns_old_value);
    OPAL_TEST_ADD(s, concurrent_add_counts_exactly);
    OPAL_TEST_ADD(s, concurrent_cas_loop_counts_exactly);
#if OPAL_HAVE_ATOMIC_CAS_128
    OPAL_TEST_ADD(s, cas128_type_is_16_byte_aligned);
    OPAL_TEST_ADD(s, cas128_success_stores_both_halves);
    OPAL_TEST_ADD(s, cas128_failure_returns_current_value);
    OPAL_TEST_ADD(s, cas128_compares_high_half);
    OPAL_TEST_ADD(s, cas128_compares_low_half);
    OPAL_TEST_ADD(s, cas128_concurrent_counter_is_exact);
#endif
    return s;
}

int main(void)
{
    return opal_test_run(atomic_suite());
}
