/* Wait objects that must be armed before a sleep (libfabric's fi_trywait,
 * verbs' completion channels): opal_progress_wait() arms them after a
 * pass that found nothing and before it sleeps; one with work already
 * waiting is not slept on, its callback runs instead; busy polling never
 * arms. The "armable" object here is a pipe that another thread writes
 * to only once it has been armed, as such a provider signals only when
 * armed: a wait that did not arm would sleep to its 30 s timeout. */
#include "opal/opal_config.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "opal/runtime/opal_progress.h"
#include "opal/threads/opal_atomic.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "test/support/opal_test.h"

#define LONG_TIMEOUT_NS (INT64_C(30) * 1000 * 1000 * 1000)
#define MS(n)           (INT64_C(n) * 1000 * 1000)

typedef struct {
    int fds[2];
    opal_atomic_int32_t arms;
    opal_atomic_int32_t calls;
    /* What arm answers. */
    int arm_result;
    /* Set by arm: the signalling thread may write now. */
    opal_atomic_bool_t armed;
} armable_t;

static armable_t ob;

static int on_readable(int fd, uint32_t epoll_events, void *context)
{
    (void) epoll_events;
    armable_t *o = context;
    char buf[64];
    ssize_t total = 0, n;
    while ((n = read(fd, buf, sizeof(buf))) > 0) {
        total += n;
    }
    atomic_fetch_add(&o->calls, 1);
    return total > 0 ? 1 : 0;
}

static int on_arm(int fd, void *context)
{
    (void) fd;
    armable_t *o = context;
    atomic_fetch_add(&o->arms, 1);
    atomic_store(&o->armed, true);
    return o->arm_result;
}

static void setup(void)
{
    memset(&ob, 0, sizeof(ob));
    ob.arm_result = OPAL_SUCCESS;
    ck_assert_int_eq(pipe2(ob.fds, O_NONBLOCK | O_CLOEXEC), 0);
    ck_assert_int_eq(opal_progress_init(), OPAL_SUCCESS);
}

static void teardown(void)
{
    opal_progress_finalize();
    close(ob.fds[0]);
    close(ob.fds[1]);
}

static void register_ob(void)
{
    ck_assert_int_eq(opal_progress_fd_register_armed(ob.fds[0], on_readable, on_arm, &ob),
                     OPAL_SUCCESS);
}

/* Writes one byte once the object has been armed (never before). */
static void *signal_when_armed(void *arg)
{
    (void) arg;
    uint64_t deadline = opal_timer_ns() + (uint64_t) LONG_TIMEOUT_NS;
    while (!atomic_load(&ob.armed) && opal_timer_ns() < deadline) {
        sched_yield();
    }
    char c = 'x';
    if (atomic_load(&ob.armed) && write(ob.fds[1], &c, 1) != 1) {
        return (void *) 1;
    }
    return NULL;
}

START_TEST(wait_arms_the_object_before_sleeping_on_it)
{
    register_ob();
    pthread_t thread;
    ck_assert_int_eq(pthread_create(&thread, NULL, signal_when_armed, NULL), 0);
    uint64_t start = opal_timer_ns();
    int events = opal_progress_wait(LONG_TIMEOUT_NS);
    uint64_t took = opal_timer_ns() - start;
    ck_assert_int_eq(pthread_join(thread, NULL), 0);
    ck_assert_int_eq(events, 1);
    ck_assert_int_eq(atomic_load(&ob.calls), 1);
    ck_assert_int_ge(atomic_load(&ob.arms), 1);
    ck_assert_uint_lt(took, (uint64_t) LONG_TIMEOUT_NS / 2);
}
END_TEST

START_TEST(object_with_work_waiting_is_not_slept_on)
{
    ob.arm_result = OPAL_ERR_RESOURCE_BUSY;
    char c = 'x';
    ck_assert_int_eq(write(ob.fds[1], &c, 1), 1);
    register_ob();
    uint64_t start = opal_timer_ns();
    int events = opal_progress_wait(LONG_TIMEOUT_NS);
    ck_assert_uint_lt(opal_timer_ns() - start, (uint64_t) LONG_TIMEOUT_NS / 2);
    ck_assert_int_eq(events, 1);
    ck_assert_int_eq(atomic_load(&ob.arms), 1);
    ck_assert_int_eq(atomic_load(&ob.calls), 1);
}
END_TEST

START_TEST(busy_object_whose_callback_finds_nothing_still_ends_the_wait)
{
    /* The provider said "not now" but the callback read nothing: the wait
     * returns (0 events) rather than sleep past work it was told of. */
    ob.arm_result = OPAL_ERR_RESOURCE_BUSY;
    register_ob();
    uint64_t start = opal_timer_ns();
    ck_assert_int_eq(opal_progress_wait(LONG_TIMEOUT_NS), 0);
    ck_assert_uint_lt(opal_timer_ns() - start, (uint64_t) LONG_TIMEOUT_NS / 2);
    ck_assert_int_eq(atomic_load(&ob.calls), 1);
}
END_TEST

static int returns_zero(void)
{
    return 0;
}

START_TEST(busy_polling_never_arms)
{
    register_ob();
    ck_assert_int_eq(opal_progress_register(returns_zero), OPAL_SUCCESS);
    for (int i = 0; i < 1000; ++i) {
        (void) opal_progress();
    }
    ck_assert_int_eq(atomic_load(&ob.arms), 0);
    /* Nor does a wait that may not sleep. */
    ck_assert_int_eq(opal_progress_wait(0), 0);
    ck_assert_int_eq(atomic_load(&ob.arms), 0);
}
END_TEST

START_TEST(wait_times_out_on_an_armed_object_that_stays_quiet)
{
    register_ob();
    ck_assert_int_eq(opal_progress_wait(MS(30)), 0);
    ck_assert_int_eq(atomic_load(&ob.arms), 1);
    ck_assert_int_eq(atomic_load(&ob.calls), 0);
}
END_TEST

START_TEST(unregistered_object_is_not_armed)
{
    register_ob();
    ck_assert_int_eq(opal_progress_fd_unregister(ob.fds[0]), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_wait(MS(10)), 0);
    ck_assert_int_eq(atomic_load(&ob.arms), 0);
}
END_TEST

START_TEST(plain_registration_has_no_arm)
{
    ck_assert_int_eq(opal_progress_fd_register_armed(ob.fds[0], on_readable, NULL, &ob),
                     OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_fd_register(ob.fds[0], on_readable, &ob), OPAL_ERR_EXISTS);
    ck_assert_int_eq(opal_progress_wait(MS(10)), 0);
    ck_assert_int_eq(atomic_load(&ob.arms), 0);
}
END_TEST

#define ARM_TEST_ADD(suite, fn)                                                                    \
    do {                                                                                           \
        TCase *tc_ = tcase_create(#fn);                                                            \
        tcase_add_checked_fixture(tc_, setup, teardown);                                           \
        tcase_set_timeout(tc_, 20);                                                                \
        tcase_add_test(tc_, fn);                                                                   \
        suite_add_tcase((suite), tc_);                                                             \
    } while (0)

int main(void)
{
    Suite *s = suite_create("opal_progress_arm");
    ARM_TEST_ADD(s, wait_arms_the_object_before_sleeping_on_it);
    ARM_TEST_ADD(s, object_with_work_waiting_is_not_slept_on);
    ARM_TEST_ADD(s, busy_object_whose_callback_finds_nothing_still_ends_the_wait);
    ARM_TEST_ADD(s, busy_polling_never_arms);
    ARM_TEST_ADD(s, wait_times_out_on_an_armed_object_that_stays_quiet);
    ARM_TEST_ADD(s, unregistered_object_is_not_armed);
    ARM_TEST_ADD(s, plain_registration_has_no_arm);
    return opal_test_run(s);
}
