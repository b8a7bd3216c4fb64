/* Mutexes and conditions: exclusion, recursion, try-lock, the
 * opal_using_threads() switch and the read-modify-writes that follow it,
 * timed waits that time out, signals that wake, and (debug builds) misuse
 * that aborts instead of hanging. */
#include "opal/opal_config.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "opal/threads/opal_mutex.h"
#include "opal/threads/opal_thread.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "test/support/opal_test.h"

enum { NTHREADS = 4 };

static opal_mutex_t counter_lock;
static long plain_counter;
static size_t counter_rounds;

static void *locked_increments(void *arg)
{
    (void) arg;
    for (size_t i = 0; i < counter_rounds; ++i) {
        opal_mutex_lock(&counter_lock);
        ++plain_counter; /* not atomic: only the lock protects it */
        opal_mutex_unlock(&counter_lock);
    }
    return NULL;
}

START_TEST(mutex_excludes_other_threads)
{
    OBJ_CONSTRUCT(&counter_lock, opal_mutex_t);
    plain_counter = 0;
    counter_rounds = opal_test_iterations(100000);
    opal_thread_t threads[NTHREADS];
    for (int i = 0; i < NTHREADS; ++i) {
        OBJ_CONSTRUCT(&threads[i], opal_thread_t);
        ck_assert_int_eq(opal_thread_start(&threads[i], locked_increments, NULL), OPAL_SUCCESS);
    }
    for (int i = 0; i < NTHREADS; ++i) {
        ck_assert_int_eq(opal_thread_join(&threads[i], NULL), OPAL_SUCCESS);
        OBJ_DESTRUCT(&threads[i]);
    }
    ck_assert_int_eq(plain_counter, (long) (NTHREADS * counter_rounds));
    OBJ_DESTRUCT(&counter_lock);
}
END_TEST

START_TEST(recursive_mutex_relocks_by_owner)
{
    opal_recursive_mutex_t m;
    OBJ_CONSTRUCT(&m, opal_recursive_mutex_t);
    opal_mutex_lock(&m);
    opal_mutex_lock(&m);
    ck_assert(opal_mutex_trylock(&m));
    opal_mutex_unlock(&m);
    opal_mutex_unlock(&m);
    opal_mutex_unlock(&m);
    /* Fully released: the lock is free again. */
    ck_assert(opal_mutex_trylock(&m));
    opal_mutex_unlock(&m);
    OBJ_DESTRUCT(&m);
}
END_TEST

static void *try_from_other_thread(void *arg)
{
    opal_mutex_t *m = arg;
    bool taken = opal_mutex_trylock(m);
    if (taken) {
        opal_mutex_unlock(m);
    }
    return (void *) (intptr_t) taken;
}

START_TEST(trylock_fails_while_another_thread_holds)
{
    opal_mutex_t m;
    OBJ_CONSTRUCT(&m, opal_mutex_t);
    opal_thread_t t;
    OBJ_CONSTRUCT(&t, opal_thread_t);
    void *taken = NULL;

    opal_mutex_lock(&m);
    ck_assert_int_eq(opal_thread_start(&t, try_from_other_thread, &m), OPAL_SUCCESS);
    ck_assert_int_eq(opal_thread_join(&t, &taken), OPAL_SUCCESS);
    ck_assert_ptr_null(taken);
    opal_mutex_unlock(&m);

    ck_assert_int_eq(opal_thread_start(&t, try_from_other_thread, &m), OPAL_SUCCESS);
    ck_assert_int_eq(opal_thread_join(&t, &taken), OPAL_SUCCESS);
    ck_assert_ptr_nonnull(taken);

    OBJ_DESTRUCT(&t);
    OBJ_DESTRUCT(&m);
}
END_TEST

START_TEST(thread_lock_follows_using_threads)
{
    opal_mutex_t m;
    OBJ_CONSTRUCT(&m, opal_mutex_t);
    bool before = opal_set_using_threads(false);

    /* Without threads OPAL_THREAD_LOCK does not lock. */
    OPAL_THREAD_LOCK(&m);
    ck_assert(opal_mutex_trylock(&m));
    opal_mutex_unlock(&m);
    OPAL_THREAD_UNLOCK(&m);

    ck_assert(!opal_set_using_threads(true));
    ck_assert(opal_using_threads());
    OPAL_THREAD_LOCK(&m);
    opal_thread_t t;
    OBJ_CONSTRUCT(&t, opal_thread_t);
    void *taken = NULL;
    ck_assert_int_eq(opal_thread_start(&t, try_from_other_thread, &m), OPAL_SUCCESS);
    ck_assert_int_eq(opal_thread_join(&t, &taken), OPAL_SUCCESS);
    ck_assert_ptr_null(taken);
    OPAL_THREAD_UNLOCK(&m);
    OBJ_DESTRUCT(&t);

    ck_assert(opal_set_using_threads(before));
    OBJ_DESTRUCT(&m);
}
END_TEST

/* The opal_thread_* read-modify-writes give the same results whether they
 * are atomic (threads) or a load and a store (none). */
static void check_thread_atomics(void)
{
    _Atomic int32_t i32;
    atomic_init(&i32, INT32_MAX);
    ck_assert_int_eq(opal_thread_fetch_add_32(&i32, -2, memory_order_relaxed), INT32_MAX);
    ck_assert_int_eq(opal_thread_fetch_add_32(&i32, 1, memory_order_acq_rel), INT32_MAX - 2);
    ck_assert_int_eq(atomic_load(&i32), INT32_MAX - 1);

    _Atomic uint32_t u32;
    atomic_init(&u32, 0);
    ck_assert_uint_eq(opal_thread_fetch_sub_u32(&u32, 1, memory_order_relaxed), 0);
    ck_assert_uint_eq(atomic_load(&u32), UINT32_MAX);
    ck_assert_uint_eq(opal_thread_fetch_add_u32(&u32, 2, memory_order_relaxed), UINT32_MAX);
    ck_assert_uint_eq(atomic_load(&u32), 1);

    _Atomic uint64_t u64;
    atomic_init(&u64, UINT64_C(1) << 40);
    ck_assert(opal_thread_fetch_add_u64(&u64, 5, memory_order_relaxed) == UINT64_C(1) << 40);
    ck_assert(atomic_load(&u64) == (UINT64_C(1) << 40) + 5);

    uint32_t expected = 7;
    ck_assert(!opal_thread_cas_u32(&u32, &expected, 9, memory_order_acq_rel, memory_order_acquire));
    ck_assert_uint_eq(expected, 1); /* told what is there */
    ck_assert_uint_eq(atomic_load(&u32), 1);
    ck_assert(opal_thread_cas_u32(&u32, &expected, 9, memory_order_acq_rel, memory_order_acquire));
    ck_assert_uint_eq(atomic_load(&u32), 9);

    _Atomic bool flag;
    atomic_init(&flag, false);
    ck_assert(!opal_thread_exchange_bool(&flag, true, memory_order_acq_rel));
    ck_assert(opal_thread_exchange_bool(&flag, true, memory_order_acq_rel));
    ck_assert(atomic_load(&flag));
}

START_TEST(thread_atomics_give_the_same_results_with_and_without_threads)
{
    bool before = opal_set_using_threads(false);
    check_thread_atomics();
    (void) opal_set_using_threads(true);
    check_thread_atomics();
    (void) opal_set_using_threads(before);
}
END_TEST

static _Atomic int32_t shared_count;
static _Atomic uint32_t shared_word;

static void *thread_atomic_rounds(void *arg)
{
    (void) arg;
    for (size_t i = 0; i < counter_rounds; ++i) {
        (void) opal_thread_fetch_add_32(&shared_count, 1, memory_order_relaxed);
        uint32_t seen = atomic_load_explicit(&shared_word, memory_order_relaxed);
        while (!opal_thread_cas_u32(&shared_word, &seen, seen + 1, memory_order_relaxed,
                                    memory_order_relaxed)) {
        }
    }
    return NULL;
}

START_TEST(thread_atomics_lose_no_update_with_threads)
{
    bool before = opal_set_using_threads(true);
    atomic_store(&shared_count, 0);
    atomic_store(&shared_word, 0);
    counter_rounds = opal_test_iterations(100000);
    opal_thread_t threads[NTHREADS];
    for (int i = 0; i < NTHREADS; ++i) {
        OBJ_CONSTRUCT(&threads[i], opal_thread_t);
        ck_assert_int_eq(opal_thread_start(&threads[i], thread_atomic_rounds, NULL), OPAL_SUCCESS);
    }
    for (int i = 0; i < NTHREADS; ++i) {
        ck_assert_int_eq(opal_thread_join(&threads[i], NULL), OPAL_SUCCESS);
        OBJ_DESTRUCT(&threads[i]);
    }
    ck_assert_int_eq(atomic_load(&shared_count), (int32_t) (NTHREADS * counter_rounds));
    ck_assert_uint_eq(atomic_load(&shared_word), (uint32_t) (NTHREADS * counter_rounds));
    (void) opal_set_using_threads(before);
}
END_TEST

START_TEST(condition_timedwait_times_out)
{
    opal_mutex_t m;
    opal_condition_t c;
    OBJ_CONSTRUCT(&m, opal_mutex_t);
    OBJ_CONSTRUCT(&c, opal_condition_t);
    const uint64_t timeout = 50 * 1000 * 1000;

    opal_mutex_lock(&m);
    uint64_t start = opal_timer_ns();
    int rc;
    /* Spurious wake-ups return OPAL_SUCCESS early; only the deadline
     * ends the loop. */
    do {
        rc = opal_condition_timedwait(&c, &m, start + timeout);
    } while (OPAL_SUCCESS == rc);
    uint64_t elapsed = opal_timer_ns() - start;
    opal_mutex_unlock(&m);

    ck_assert_int_eq(rc, OPAL_ERR_TIMEOUT);
    ck_assert_uint_ge(elapsed, timeout * 8 / 10);
    OBJ_DESTRUCT(&c);
    OBJ_DESTRUCT(&m);
}
END_TEST

START_TEST(condition_timedwait_with_past_deadline_times_out)
{
    opal_mutex_t m;
    opal_condition_t c;
    OBJ_CONSTRUCT(&m, opal_mutex_t);
    OBJ_CONSTRUCT(&c, opal_condition_t);
    opal_mutex_lock(&m);
    ck_assert_int_eq(opal_condition_timedwait(&c, &m, 0), OPAL_ERR_TIMEOUT);
    /* The mutex is held again on return. */
    ck_assert(!opal_mutex_trylock(&m));
    opal_mutex_unlock(&m);
    OBJ_DESTRUCT(&c);
    OBJ_DESTRUCT(&m);
}
END_TEST

typedef struct {
    opal_mutex_t lock;
    opal_condition_t cond;
    bool ready;
} handoff_t;

/* Started while the waiter holds the lock, which the waiter gives up only
 * inside its wait: once this thread has the lock, the waiter is waiting
 * and the signal cannot be missed. */
static void *signal_waiter(void *arg)
{
    handoff_t *h = arg;
    opal_mutex_lock(&h->lock);
    h->ready = true;
    opal_condition_signal(&h->cond);
    opal_mutex_unlock(&h->lock);
    return NULL;
}

static void handoff_setup(handoff_t *h)
{
    OBJ_CONSTRUCT(&h->lock, opal_mutex_t);
    OBJ_CONSTRUCT(&h->cond, opal_condition_t);
    h->ready = false;
}

static void handoff_teardown(handoff_t *h)
{
    OBJ_DESTRUCT(&h->cond);
    OBJ_DESTRUCT(&h->lock);
}

START_TEST(condition_signal_wakes_timed_waiter)
{
    handoff_t h;
    handoff_setup(&h);
    opal_thread_t t;
    OBJ_CONSTRUCT(&t, opal_thread_t);

    opal_mutex_lock(&h.lock);
    ck_assert_int_eq(opal_thread_start(&t, signal_waiter, &h), OPAL_SUCCESS);
    /* A deadline far beyond any test run: ending with the predicate set
     * and OPAL_SUCCESS means the signal, not the clock, woke us. */
    uint64_t deadline = opal_timer_ns() + UINT64_C(30) * 1000 * 1000 * 1000;
    int rc = OPAL_SUCCESS;
    while (!h.ready && OPAL_SUCCESS == rc) {
        rc = opal_condition_timedwait(&h.cond, &h.lock, deadline);
    }
    opal_mutex_unlock(&h.lock);

    ck_assert_int_eq(rc, OPAL_SUCCESS);
    ck_assert(h.ready);
    ck_assert_int_eq(opal_thread_join(&t, NULL), OPAL_SUCCESS);
    OBJ_DESTRUCT(&t);
    handoff_teardown(&h);
}
END_TEST

START_TEST(condition_signal_wakes_untimed_waiter)
{
    handoff_t h;
    handoff_setup(&h);
    opal_thread_t t;
    OBJ_CONSTRUCT(&t, opal_thread_t);

    opal_mutex_lock(&h.lock);
    ck_assert_int_eq(opal_thread_start(&t, signal_waiter, &h), OPAL_SUCCESS);
    while (!h.ready) {
        opal_condition_wait(&h.cond, &h.lock);
    }
    opal_mutex_unlock(&h.lock);

    ck_assert_int_eq(opal_thread_join(&t, NULL), OPAL_SUCCESS);
    OBJ_DESTRUCT(&t);
    handoff_teardown(&h);
}
END_TEST

#if OPAL_ENABLE_DEBUG
START_TEST(debug_relock_by_owner_aborts)
{
    opal_mutex_t m;
    OBJ_CONSTRUCT(&m, opal_mutex_t);
    opal_mutex_lock(&m);
    opal_mutex_lock(&m);
}
END_TEST

/* ThreadSanitizer reports this misuse itself, before our check aborts:
 * the case would only add a warning to a clean TSan log. */
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif

#if !defined(UNDER_TSAN)
START_TEST(debug_unlock_of_unheld_mutex_aborts)
{
    opal_mutex_t m;
    OBJ_CONSTRUCT(&m, opal_mutex_t);
    opal_mutex_unlock(&m);
}
END_TEST
#endif
#endif

static Suite *mutex_suite(void)
{
    Suite *s = suite_create("opal_mutex");
    OPAL_TEST_ADD(s, mutex_excludes_other_threads);
    OPAL_TEST_ADD(s, recursive_mutex_relocks_by_owner);
    OPAL_TEST_ADD(s, trylock_fails_while_another_thread_holds);
    OPAL_TEST_ADD(s, thread_lock_follows_using_threads);
    OPAL_TEST_ADD(s, thread_atomics_give_the_same_results_with_and_without_threads);
    OPAL_TEST_ADD(s, thread_atomics_lose_no_update_with_threads);
    OPAL_TEST_ADD(s, condition_timedwait_times_out);
    OPAL_TEST_ADD(s, condition_timedwait_with_past_deadline_times_out);
    OPAL_TEST_ADD(s, condition_signal_wakes_timed_waiter);
    OPAL_TEST_ADD(s, condition_signal_wakes_untimed_waiter);
#if OPAL_ENABLE_DEBUG
    OPAL_TEST_ADD_SIGNAL(s, debug_relock_by_owner_aborts, SIGABRT);
#if !defined(UNDER_TSAN)
    OPAL_TEST_ADD_SIGNAL(s, debug_unlock_of_unheld_mutex_aborts, SIGABRT);
#endif
#endif
    return s;
}

int main(void)
{
    int rc = opal_test_run(mutex_suite());
    opal_class_finalize();
    return rc;
}
