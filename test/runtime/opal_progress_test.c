/* The progress engine's polling side: callbacks called and their events
 * summed, registration errors, low-priority intervals, changes made from
 * inside a pass, exclusive passes, registration racing with progress, and
 * the init / finalize life cycle. (Sleeping on fds: opal_progress_wait_test.) */
#include "opal/opal_config.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "opal/runtime/opal_progress.h"
#include "opal/threads/opal_atomic.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

static opal_atomic_int32_t calls_one, calls_two, calls_lp, calls_negative;

static int returns_one(void)
{
    atomic_fetch_add(&calls_one, 1);
    return 1;
}

static int returns_two(void)
{
    atomic_fetch_add(&calls_two, 1);
    return 2;
}

static int low_priority(void)
{
    atomic_fetch_add(&calls_lp, 1);
    return 1;
}

static int returns_negative(void)
{
    atomic_fetch_add(&calls_negative, 1);
    return -5;
}

static void setup(void)
{
    atomic_store(&calls_one, 0);
    atomic_store(&calls_two, 0);
    atomic_store(&calls_lp, 0);
    atomic_store(&calls_negative, 0);
    ck_assert_int_eq(opal_progress_init(), OPAL_SUCCESS);
}

static void teardown(void)
{
    opal_progress_finalize();
}

/* One behaviour per case, each between a fresh init and a finalize; the
 * timeout is generous for sanitizer builds on a loaded machine. */
#define PROGRESS_TEST_ADD(suite, fn)                                                               \
    do {                                                                                           \
        TCase *tc_ = tcase_create(#fn);                                                            \
        tcase_add_checked_fixture(tc_, setup, teardown);                                           \
        tcase_set_timeout(tc_, 20);                                                                \
        tcase_add_test(tc_, fn);                                                                   \
        suite_add_tcase((suite), tc_);                                                             \
    } while (0)

START_TEST(nothing_registered_returns_zero)
{
    ck_assert_int_eq(opal_progress(), 0);
}
END_TEST

START_TEST(callbacks_are_called_and_events_summed)
{
    ck_assert_int_eq(opal_progress_register(returns_one), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_register(returns_two), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress(), 3);
    ck_assert_int_eq(opal_progress(), 3);
    ck_assert_int_eq(atomic_load(&calls_one), 2);
    ck_assert_int_eq(atomic_load(&calls_two), 2);
}
END_TEST

START_TEST(negative_results_are_not_counted)
{
    ck_assert_int_eq(opal_progress_register(returns_negative), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_register(returns_one), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress(), 1);
    ck_assert_int_eq(atomic_load(&calls_negative), 1);
}
END_TEST

START_TEST(unregister_stops_calls)
{
    ck_assert_int_eq(opal_progress_register(returns_one), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_register(returns_two), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress(), 3);
    ck_assert_int_eq(opal_progress_unregister(returns_one), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress(), 2);
    ck_assert_int_eq(opal_progress_unregister(returns_two), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress(), 0);
    ck_assert_int_eq(atomic_load(&calls_one), 1);
    ck_assert_int_eq(atomic_load(&calls_two), 2);
}
END_TEST

START_TEST(duplicate_registration_is_exists)
{
    ck_assert_int_eq(opal_progress_register(returns_one), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_register(returns_one), OPAL_ERR_EXISTS);
    ck_assert_int_eq(opal_progress_register_lp(returns_one), OPAL_ERR_EXISTS);
    ck_assert_int_eq(opal_progress_register_lp(low_priority), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_register(low_priority), OPAL_ERR_EXISTS);
    /* Still one call per pass. */
    ck_assert_int_eq(opal_progress_set_lp_interval(1), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress(), 2);
    ck_assert_int_eq(atomic_load(&calls_one), 1);
    ck_assert_int_eq(atomic_load(&calls_lp), 1);
}
END_TEST

START_TEST(unregister_unknown_is_not_found)
{
    ck_assert_int_eq(opal_progress_unregister(returns_one), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(opal_progress_register(returns_one), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_unregister(returns_one), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_unregister(returns_one), OPAL_ERR_NOT_FOUND);
}
END_TEST

START_TEST(null_callback_is_bad_param)
{
    ck_assert_int_eq(opal_progress_register(NULL), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_progress_register_lp(NULL), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_progress_unregister(NULL), OPAL_ERR_BAD_PARAM);
}
END_TEST

START_TEST(low_priority_runs_every_nth_call)
{
    ck_assert_int_eq(opal_progress_register(returns_one), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_register_lp(low_priority), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_set_lp_interval(3), OPAL_SUCCESS);
    int events = 0;
    for (int i = 1; i <= 10; ++i) {
        int n = opal_progress();
        /* Calls 3, 6 and 9 include the low-priority event. */
        ck_assert_int_eq(n, 0 == i % 3 ? 2 : 1);
        events += n;
    }
    ck_assert_int_eq(atomic_load(&calls_one), 10);
    ck_assert_int_eq(atomic_load(&calls_lp), 3);
    ck_assert_int_eq(events, 13);
}
END_TEST

START_TEST(low_priority_default_interval_is_eight)
{
    ck_assert_int_eq(opal_progress_register_lp(low_priority), OPAL_SUCCESS);
    for (int i = 0; i < 7; ++i) {
        ck_assert_int_eq(opal_progress(), 0);
    }
    ck_assert_int_eq(opal_progress(), 1);
    for (int i = 0; i < 9; ++i) {
        opal_progress();
    }
    ck_assert_int_eq(atomic_load(&calls_lp), 2);
}
END_TEST

START_TEST(lp_interval_one_runs_every_call)
{
    ck_assert_int_eq(opal_progress_register_lp(low_priority), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_set_lp_interval(1), OPAL_SUCCESS);
    for (int i = 0; i < 5; ++i) {
        ck_assert_int_eq(opal_progress(), 1);
    }
    ck_assert_int_eq(atomic_load(&calls_lp), 5);
}
END_TEST

START_TEST(lp_interval_zero_is_bad_param)
{
    ck_assert_int_eq(opal_progress_set_lp_interval(0), OPAL_ERR_BAD_PARAM);
}
END_TEST

/* Changes made by callbacks while a pass walks the array. */
static int unregisters_returns_two(void)
{
    atomic_fetch_add(&calls_one, 1);
    ck_assert_int_eq(opal_progress_unregister(returns_two), OPAL_SUCCESS);
    return 0;
}

START_TEST(callback_unregistered_during_pass_is_skipped)
{
    /* Registration order is call order: returns_two comes after. */
    ck_assert_int_eq(opal_progress_register(unregisters_returns_two), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_register(returns_two), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress(), 0);
    ck_assert_int_eq(atomic_load(&calls_two), 0);
    ck_assert_int_eq(opal_progress_unregister(unregisters_returns_two), OPAL_SUCCESS);
}
END_TEST

static int unregisters_itself(void)
{
    atomic_fetch_add(&calls_one, 1);
    ck_assert_int_eq(opal_progress_unregister(unregisters_itself), OPAL_SUCCESS);
    return 1;
}

START_TEST(callback_may_unregister_itself)
{
    ck_assert_int_eq(opal_progress_register(unregisters_itself), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_register(returns_two), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress(), 3);
    ck_assert_int_eq(opal_progress(), 2);
    ck_assert_int_eq(atomic_load(&calls_one), 1);
    ck_assert_int_eq(atomic_load(&calls_two), 2);
}
END_TEST

static int registers_returns_two(void)
{
    int rc = opal_progress_register(returns_two);
    ck_assert(OPAL_SUCCESS == rc || OPAL_ERR_EXISTS == rc);
    return 0;
}

START_TEST(callback_registered_during_pass_runs_from_next_pass)
{
    ck_assert_int_eq(opal_progress_register(registers_returns_two), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress(), 0);
    ck_assert_int_eq(atomic_load(&calls_two), 0);
    ck_assert_int_eq(opal_progress(), 2);
    ck_assert_int_eq(atomic_load(&calls_two), 1);
}
END_TEST

static opal_atomic_int32_t nested_result;

static int progresses_recursively(void)
{
    atomic_fetch_add(&calls_one, 1);
    atomic_store(&nested_result, opal_progress());
    return 1;
}

START_TEST(progress_inside_callback_returns_zero)
{
    atomic_store(&nested_result, -1);
    ck_assert_int_eq(opal_progress_register(progresses_recursively), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress(), 1);
    ck_assert_int_eq(atomic_load(&nested_result), 0);
    ck_assert_int_eq(atomic_load(&calls_one), 1);
}
END_TEST

/* A callback that parks its pass until the test releases it. */
static opal_atomic_int32_t parked, release_park;

static int parks(void)
{
    atomic_fetch_add(&calls_one, 1);
    atomic_store(&parked, 1);
    while (0 == atomic_load(&release_park)) {
        sched_yield();
    }
    return 1;
}

static void *progress_once(void *arg)
{
    (void) arg;
    return (void *) (intptr_t) opal_progress();
}

static void start_parked_pass(pthread_t *thread)
{
    atomic_store(&parked, 0);
    atomic_store(&release_park, 0);
    ck_assert_int_eq(opal_progress_register(parks), OPAL_SUCCESS);
    ck_assert_int_eq(pthread_create(thread, NULL, progress_once, NULL), 0);
    while (0 == atomic_load(&parked)) {
        sched_yield();
    }
}

START_TEST(progress_while_another_thread_progresses_returns_zero)
{
    pthread_t thread;
    start_parked_pass(&thread);
    ck_assert_int_eq(opal_progress(), 0);
    ck_assert_int_eq(atomic_load(&calls_one), 1);
    atomic_store(&release_park, 1);
    void *events = NULL;
    ck_assert_int_eq(pthread_join(thread, &events), 0);
    ck_assert_int_eq((intptr_t) events, 1);
}
END_TEST

static opal_atomic_int32_t unregister_returned;

static void *unregister_parks(void *arg)
{
    (void) arg;
    int rc = opal_progress_unregister(parks);
    atomic_store(&unregister_returned, 1);
    return (void *) (intptr_t) rc;
}

START_TEST(unregister_from_other_thread_waits_for_running_pass)
{
    pthread_t progressing, unregistering;
    atomic_store(&unregister_returned, 0);
    start_parked_pass(&progressing);
    ck_assert_int_eq(pthread_create(&unregistering, NULL, unregister_parks, NULL), 0);
    /* Give the unregistration every chance to return too early; it must
     * still be waiting, as the parked callback is running. */
    usleep(50000);
    ck_assert_int_eq(atomic_load(&unregister_returned), 0);
    atomic_store(&release_park, 1);
    void *rc = NULL;
    ck_assert_int_eq(pthread_join(unregistering, &rc), 0);
    ck_assert_int_eq((intptr_t) rc, OPAL_SUCCESS);
    ck_assert_int_eq(pthread_join(progressing, NULL), 0);
    ck_assert_int_eq(opal_progress(), 0);
    ck_assert_int_eq(atomic_load(&calls_one), 1);
}
END_TEST

/* Registration racing with a thread that progresses non-stop: every
 * callback is called while registered and never after its unregistration
 * returned. */
enum { NRACERS = 4 };
static opal_atomic_int32_t racer_registered[NRACERS];
static opal_atomic_int32_t racer_calls[NRACERS];
static opal_atomic_int32_t late_calls;
static opal_atomic_int32_t stop_progress;

#define RACER(i)                                                                                   \
    static int racer_##i(void)                                                                     \
    {                                                                                              \
        if (0 == atomic_load(&racer_registered[i])) {                                              \
            atomic_fetch_add(&late_calls, 1);                                                      \
        }                                                                                          \
        atomic_fetch_add(&racer_calls[i], 1);                                                      \
        return 0;                                                                                  \
    }
RACER(0)
RACER(1)
RACER(2)
RACER(3)
static const opal_progress_callback_t racers[NRACERS] = {racer_0, racer_1, racer_2, racer_3};

static void *progress_until_stopped(void *arg)
{
    (void) arg;
    /* valgrind runs one thread at a time and switches at system calls or
     * after a long slice: without a yield each handover took a slice. */
    bool yield = opal_test_under_valgrind();
    while (0 == atomic_load(&stop_progress)) {
        opal_progress();
        if (yield) {
            sched_yield();
        }
    }
    return NULL;
}

START_TEST(registration_is_safe_while_another_thread_progresses)
{
    atomic_store(&late_calls, 0);
    atomic_store(&stop_progress, 0);
    ck_assert_int_eq(opal_progress_set_lp_interval(1), OPAL_SUCCESS);
    pthread_t thread;
    ck_assert_int_eq(pthread_create(&thread, NULL, progress_until_stopped, NULL), 0);

    size_t rounds = opal_test_iterations(1000);
    for (size_t r = 0; r < rounds; ++r) {
        size_t i = r % NRACERS;
        int32_t before = atomic_load(&racer_calls[i]);
        atomic_store(&racer_registered[i], 1);
        int rc = (r & 4) ? opal_progress_register_lp(racers[i]) : opal_progress_register(racers[i]);
        ck_assert_int_eq(rc, OPAL_SUCCESS);
        /* Wait until the other thread has seen the new array. */
        while (atomic_load(&racer_calls[i]) == before) {
            sched_yield();
        }
        ck_assert_int_eq(opal_progress_unregister(racers[i]), OPAL_SUCCESS);
        atomic_store(&racer_registered[i], 0);
    }
    atomic_store(&stop_progress, 1);
    ck_assert_int_eq(pthread_join(thread, NULL), 0);
    ck_assert_int_eq(atomic_load(&late_calls), 0);
}
END_TEST

/* Life cycle. */
START_TEST(finalize_drops_callbacks_and_init_starts_clean)
{
    ck_assert_int_eq(opal_progress_register(returns_one), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_set_lp_interval(1), OPAL_SUCCESS);
    opal_progress_finalize();
    ck_assert_int_eq(opal_progress_init(), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress(), 0);
    ck_assert_int_eq(atomic_load(&calls_one), 0);
    /* Registering again is not a duplicate; the interval is the default. */
    ck_assert_int_eq(opal_progress_register(returns_one), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_register_lp(low_priority), OPAL_SUCCESS);
    for (int i = 0; i < 8; ++i) {
        opal_progress();
    }
    ck_assert_int_eq(atomic_load(&calls_one), 8);
    ck_assert_int_eq(atomic_load(&calls_lp), 1);
}
END_TEST

START_TEST(init_calls_nest)
{
    ck_assert_int_eq(opal_progress_init(), OPAL_SUCCESS);
    opal_progress_finalize();
    /* One init left: still usable. */
    ck_assert_int_eq(opal_progress_register(returns_one), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress(), 1);
    opal_progress_finalize();
    ck_assert_int_eq(opal_progress_register(returns_one), OPAL_ERR_NOT_INITIALIZED);
    /* An extra finalize is harmless (the fixture's teardown is one). */
    opal_progress_finalize();
}
END_TEST

static int fd_ignored(int fd, uint32_t epoll_events, void *context)
{
    (void) fd;
    (void) epoll_events;
    (void) context;
    return 0;
}

START_TEST(calls_before_init_are_refused)
{
    ck_assert_int_eq(opal_progress_register(returns_one), OPAL_ERR_NOT_INITIALIZED);
    ck_assert_int_eq(opal_progress_register_lp(returns_one), OPAL_ERR_NOT_INITIALIZED);
    ck_assert_int_eq(opal_progress_unregister(returns_one), OPAL_ERR_NOT_INITIALIZED);
    ck_assert_int_eq(opal_progress_fd_register(0, fd_ignored, NULL), OPAL_ERR_NOT_INITIALIZED);
    ck_assert_int_eq(opal_progress_fd_unregister(0), OPAL_ERR_NOT_INITIALIZED);
    ck_assert_int_eq(opal_progress_wait(0), OPAL_ERR_NOT_INITIALIZED);
    ck_assert_int_eq(opal_progress(), 0);
    opal_progress_wakeup();
    opal_progress_finalize();
}
END_TEST

static Suite *progress_suite(void)
{
    Suite *s = suite_create("opal_progress");
    PROGRESS_TEST_ADD(s, nothing_registered_returns_zero);
    PROGRESS_TEST_ADD(s, callbacks_are_called_and_events_summed);
    PROGRESS_TEST_ADD(s, negative_results_are_not_counted);
    PROGRESS_TEST_ADD(s, unregister_stops_calls);
    PROGRESS_TEST_ADD(s, duplicate_registration_is_exists);
    PROGRESS_TEST_ADD(s, unregister_unknown_is_not_found);
    PROGRESS_TEST_ADD(s, null_callback_is_bad_param);
    PROGRESS_TEST_ADD(s, low_priority_runs_every_nth_call);
    PROGRESS_TEST_ADD(s, low_priority_default_interval_is_eight);
    PROGRESS_TEST_ADD(s, lp_interval_one_runs_every_call);
    PROGRESS_TEST_ADD(s, lp_interval_zero_is_bad_param);
    PROGRESS_TEST_ADD(s, callback_unregistered_during_pass_is_skipped);
    PROGRESS_TEST_ADD(s, callback_may_unregister_itself);
    PROGRESS_TEST_ADD(s, callback_registered_during_pass_runs_from_next_pass);
    PROGRESS_TEST_ADD(s, progress_inside_callback_returns_zero);
    PROGRESS_TEST_ADD(s, progress_while_another_thread_progresses_returns_zero);
    PROGRESS_TEST_ADD(s, unregister_from_other_thread_waits_for_running_pass);
    PROGRESS_TEST_ADD(s, registration_is_safe_while_another_thread_progresses);
    PROGRESS_TEST_ADD(s, finalize_drops_callbacks_and_init_starts_clean);
    PROGRESS_TEST_ADD(s, init_calls_nest);
    /* No fixture: the engine is not initialised in this one. */
    OPAL_TEST_ADD(s, calls_before_init_are_refused);
    return s;
}

int main(void)
{
    return opal_test_run(progress_suite());
}
