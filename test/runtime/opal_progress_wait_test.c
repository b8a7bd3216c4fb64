/* The progress engine's sleeping side: opal_progress_wait() returns at
 * once with work, sleeps to its timeout without, and wakes as soon as a
 * registered fd fires or opal_progress_wakeup() is called (from a thread
 * or a signal handler); fd registration and its errors; callbacks never
 * overlap. Waits use a 30 s timeout where waking must be event-driven:
 * returning well before it (and with the callback run) is the proof, and
 * the case's Check timeout catches a hang. */
#include "opal/opal_config.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "opal/runtime/opal_progress.h"
#include "opal/threads/opal_atomic.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "test/support/opal_test.h"

#define LONG_TIMEOUT_NS (INT64_C(30) * 1000 * 1000 * 1000)
#define MS(n)           (INT64_C(n) * 1000 * 1000)

/* A pipe whose read end is watched; the callback drains it and records
 * what it was told. */
typedef struct {
    int fds[2];
    opal_atomic_int32_t calls;
    opal_atomic_int32_t last_fd;
    opal_atomic_uint32_t last_events;
    /* Bytes read per call: 0 = all. */
    int read_limit;
} watched_pipe_t;

static watched_pipe_t wp;

static int on_readable(int fd, uint32_t epoll_events, void *context)
{
    watched_pipe_t *p = context;
    char buf[64];
    size_t want = p->read_limit > 0 ? (size_t) p->read_limit : sizeof(buf);
    ssize_t total = 0, n;
    while ((n = read(fd, buf, want)) > 0) {
        total += n;
        if (p->read_limit > 0) {
            break;
        }
    }
    atomic_store(&p->last_fd, fd);
    atomic_store(&p->last_events, epoll_events);
    atomic_fetch_add(&p->calls, 1);
    return total > 0 ? 1 : 0;
}

static void write_byte(int fd)
{
    char c = 'x';
    ck_assert_int_eq(write(fd, &c, 1), 1);
}

static void setup(void)
{
    memset(&wp, 0, sizeof(wp));
    ck_assert_int_eq(pipe2(wp.fds, O_NONBLOCK | O_CLOEXEC), 0);
    ck_assert_int_eq(opal_progress_init(), OPAL_SUCCESS);
}

static void teardown(void)
{
    opal_progress_finalize();
    close(wp.fds[0]);
    if (wp.fds[1] >= 0) {
        close(wp.fds[1]);
    }
}

#define WAIT_TEST_ADD(suite, fn)                                                                   \
    do {                                                                                           \
        TCase *tc_ = tcase_create(#fn);                                                            \
        tcase_add_checked_fixture(tc_, setup, teardown);                                           \
        tcase_set_timeout(tc_, 20);                                                                \
        tcase_add_test(tc_, fn);                                                                   \
        suite_add_tcase((suite), tc_);                                                             \
    } while (0)

static uint64_t ns_since(uint64_t start)
{
    return opal_timer_ns() - start;
}

/* Runs an action in another thread after a short delay, so that the test
 * thread is (very likely) asleep in the wait by then. Correctness never
 * depends on the delay. */
typedef struct {
    pthread_t thread;
    void (*action)(void);
} later_t;

static void *run_later(void *arg)
{
    later_t *later = arg;
    usleep(20000);
    later->action();
    return NULL;
}

static void later_start(later_t *later, void (*action)(void))
{
    later->action = action;
    ck_assert_int_eq(pthread_create(&later->thread, NULL, run_later, later), 0);
}

static void later_join(later_t *later)
{
    ck_assert_int_eq(pthread_join(later->thread, NULL), 0);
}

static int returns_one(void)
{
    return 1;
}

START_TEST(wait_returns_at_once_when_callback_has_events)
{
    ck_assert_int_eq(opal_progress_register(returns_one), OPAL_SUCCESS);
    uint64_t start = opal_timer_ns();
    ck_assert_int_eq(opal_progress_wait(LONG_TIMEOUT_NS), 1);
    ck_assert_uint_lt(ns_since(start), LONG_TIMEOUT_NS);
}
END_TEST

START_TEST(wait_times_out_with_nothing_to_do)
{
    uint64_t start = opal_timer_ns();
    ck_assert_int_eq(opal_progress_wait(MS(100)), 0);
    ck_assert_uint_ge(ns_since(start), MS(80));
}
END_TEST

START_TEST(wait_zero_timeout_with_nothing_ready_returns_zero)
{
    ck_assert_int_eq(opal_progress_fd_register(wp.fds[0], on_readable, &wp), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_wait(0), 0);
    ck_assert_int_eq(atomic_load(&wp.calls), 0);
}
END_TEST

START_TEST(wait_zero_timeout_runs_ready_fd_callbacks)
{
    ck_assert_int_eq(opal_progress_fd_register(wp.fds[0], on_readable, &wp), OPAL_SUCCESS);
    write_byte(wp.fds[1]);
    ck_assert_int_eq(opal_progress_wait(0), 1);
    ck_assert_int_eq(atomic_load(&wp.calls), 1);
}
END_TEST

static void write_to_watched_pipe(void)
{
    write_byte(wp.fds[1]);
}

START_TEST(wait_wakes_when_fd_becomes_readable)
{
    ck_assert_int_eq(opal_progress_fd_register(wp.fds[0], on_readable, &wp), OPAL_SUCCESS);
    later_t later;
    uint64_t start = opal_timer_ns();
    later_start(&later, write_to_watched_pipe);
    ck_assert_int_eq(opal_progress_wait(LONG_TIMEOUT_NS), 1);
    ck_assert_uint_lt(ns_since(start), LONG_TIMEOUT_NS);
    later_join(&later);
    ck_assert_int_eq(atomic_load(&wp.calls), 1);
    ck_assert_int_eq(atomic_load(&wp.last_fd), wp.fds[0]);
    ck_assert(atomic_load(&wp.last_events) & EPOLLIN);
}
END_TEST

/* Has nothing on its first call, two events afterwards. */
static opal_atomic_int32_t slow_starter_calls;
static int slow_starter(void)
{
    return 0 == atomic_fetch_add(&slow_starter_calls, 1) ? 0 : 2;
}

START_TEST(wait_sums_fd_and_progress_events)
{
    atomic_store(&slow_starter_calls, 0);
    ck_assert_int_eq(opal_progress_register(slow_starter), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_fd_register(wp.fds[0], on_readable, &wp), OPAL_SUCCESS);
    write_byte(wp.fds[1]);
    /* First pass 0, the fd 1, the pass after it 2. */
    ck_assert_int_eq(opal_progress_wait(LONG_TIMEOUT_NS), 3);
    ck_assert_int_eq(atomic_load(&slow_starter_calls), 2);
}
END_TEST

START_TEST(wakeup_from_other_thread_ends_wait)
{
    later_t later;
    uint64_t start = opal_timer_ns();
    later_start(&later, opal_progress_wakeup);
    ck_assert_int_eq(opal_progress_wait(LONG_TIMEOUT_NS), 0);
    ck_assert_uint_lt(ns_since(start), LONG_TIMEOUT_NS);
    later_join(&later);
}
END_TEST

START_TEST(wakeup_before_wait_is_kept)
{
    opal_progress_wakeup();
    uint64_t start = opal_timer_ns();
    ck_assert_int_eq(opal_progress_wait(LONG_TIMEOUT_NS), 0);
    ck_assert_uint_lt(ns_since(start), LONG_TIMEOUT_NS);
    /* Consumed: the next wait sleeps to its timeout. */
    start = opal_timer_ns();
    ck_assert_int_eq(opal_progress_wait(MS(50)), 0);
    ck_assert_uint_ge(ns_since(start), MS(40));
}
END_TEST

/* Signals aimed at the test thread while it sleeps in the wait. */
static opal_atomic_int32_t signals_seen;
static pthread_t test_thread;
static pid_t test_tid;

static void wake_handler(int sig)
{
    (void) sig;
    atomic_fetch_add(&signals_seen, 1);
    opal_progress_wakeup();
}

static void count_handler(int sig)
{
    (void) sig;
    atomic_fetch_add(&signals_seen, 1);
}

static bool test_thread_sleeps(void)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int) test_tid);
    FILE *f = fopen(path, "r");
    if (NULL == f) {
        return false;
    }
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *state = strrchr(buf, ')');
    return NULL != state && 'S' == state[2];
}

/* Sends the signal once the test thread is asleep (or after ~5 s of
 * asking: then the signal arrives outside the wait, which every
 * assertion below tolerates). */
static void signal_test_thread(int sig)
{
    for (int i = 0; i < 5000 && !test_thread_sleeps(); ++i) {
        usleep(1000);
    }
    pthread_kill(test_thread, sig);
}

static void send_sigusr1(void)
{
    signal_test_thread(SIGUSR1);
}

static void send_sigusr2_then_write(void)
{
    signal_test_thread(SIGUSR2);
    while (0 == atomic_load(&signals_seen)) {
        sched_yield();
    }
    write_byte(wp.fds[1]);
}

static void install_handler(int sig, void (*handler)(int), struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: the wait sees EINTR */
    ck_assert_int_eq(sigaction(sig, &sa, old), 0);
    atomic_store(&signals_seen, 0);
    test_thread = pthread_self();
    test_tid = gettid();
}

START_TEST(wakeup_from_signal_handler_ends_wait)
{
    struct sigaction old;
    install_handler(SIGUSR1, wake_handler, &old);
    later_t later;
    uint64_t start = opal_timer_ns();
    later_start(&later, send_sigusr1);
    ck_assert_int_eq(opal_progress_wait(LONG_TIMEOUT_NS), 0);
    ck_assert_uint_lt(ns_since(start), LONG_TIMEOUT_NS);
    later_join(&later);
    ck_assert_int_eq(atomic_load(&signals_seen), 1);
    sigaction(SIGUSR1, &old, NULL);
}
END_TEST

START_TEST(interrupting_signal_does_not_end_wait)
{
    struct sigaction old;
    install_handler(SIGUSR2, count_handler, &old);
    ck_assert_int_eq(opal_progress_fd_register(wp.fds[0], on_readable, &wp), OPAL_SUCCESS);
    later_t later;
    later_start(&later, send_sigusr2_then_write);
    /* Only the pipe, written after the signal was handled, ends it. */
    ck_assert_int_eq(opal_progress_wait(LONG_TIMEOUT_NS), 1);
    later_join(&later);
    ck_assert_int_eq(atomic_load(&signals_seen), 1);
    ck_assert_int_eq(atomic_load(&wp.calls), 1);
    sigaction(SIGUSR2, &old, NULL);
}
END_TEST

START_TEST(fd_register_twice_is_exists)
{
    ck_assert_int_eq(opal_progress_fd_register(wp.fds[0], on_readable, &wp), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_fd_register(wp.fds[0], on_readable, NULL), OPAL_ERR_EXISTS);
}
END_TEST

START_TEST(fd_register_refuses_bad_fds)
{
    ck_assert_int_eq(opal_progress_fd_register(-1, on_readable, &wp), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_progress_fd_register(wp.fds[0], NULL, &wp), OPAL_ERR_BAD_PARAM);

    FILE *regular = tmpfile();
    ck_assert_ptr_nonnull(regular);
    ck_assert_int_eq(opal_progress_fd_register(fileno(regular), on_readable, &wp),
                     OPAL_ERR_BAD_PARAM);
    fclose(regular);

    int closed = dup(wp.fds[0]);
    ck_assert_int_ge(closed, 0);
    close(closed);
    ck_assert_int_eq(opal_progress_fd_register(closed, on_readable, &wp), OPAL_ERR_BAD_PARAM);
    /* None of them was recorded. */
    ck_assert_int_eq(opal_progress_fd_unregister(closed), OPAL_ERR_NOT_FOUND);
}
END_TEST

START_TEST(fd_unregister_unknown_is_not_found)
{
    ck_assert_int_eq(opal_progress_fd_unregister(wp.fds[0]), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(opal_progress_fd_unregister(-1), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(opal_progress_fd_register(wp.fds[0], on_readable, &wp), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_fd_unregister(wp.fds[0]), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_fd_unregister(wp.fds[0]), OPAL_ERR_NOT_FOUND);
}
END_TEST

START_TEST(fd_unregister_stops_callbacks)
{
    ck_assert_int_eq(opal_progress_fd_register(wp.fds[0], on_readable, &wp), OPAL_SUCCESS);
    write_byte(wp.fds[1]);
    ck_assert_int_eq(opal_progress_fd_unregister(wp.fds[0]), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_wait(MS(20)), 0);
    ck_assert_int_eq(atomic_load(&wp.calls), 0);
}
END_TEST

static watched_pipe_t second;

START_TEST(fd_registers_again_with_new_callback)
{
    memset(&second, 0, sizeof(second));
    ck_assert_int_eq(opal_progress_fd_register(wp.fds[0], on_readable, &wp), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_fd_unregister(wp.fds[0]), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_fd_register(wp.fds[0], on_readable, &second), OPAL_SUCCESS);
    write_byte(wp.fds[1]);
    ck_assert_int_eq(opal_progress_wait(0), 1);
    ck_assert_int_eq(atomic_load(&wp.calls), 0);
    ck_assert_int_eq(atomic_load(&second.calls), 1);
}
END_TEST

START_TEST(fd_callback_sees_hangup)
{
    ck_assert_int_eq(opal_progress_fd_register(wp.fds[0], on_readable, &wp), OPAL_SUCCESS);
    close(wp.fds[1]);
    wp.fds[1] = -1;
    ck_assert_int_eq(opal_progress_wait(LONG_TIMEOUT_NS), 0);
    ck_assert_int_eq(atomic_load(&wp.calls), 1);
    ck_assert(atomic_load(&wp.last_events) & EPOLLHUP);
    ck_assert_int_eq(opal_progress_fd_unregister(wp.fds[0]), OPAL_SUCCESS);
}
END_TEST

START_TEST(unread_data_calls_callback_again)
{
    wp.read_limit = 1;
    ck_assert_int_eq(opal_progress_fd_register(wp.fds[0], on_readable, &wp), OPAL_SUCCESS);
    for (int i = 0; i < 3; ++i) {
        write_byte(wp.fds[1]);
    }
    for (int i = 1; i <= 3; ++i) {
        ck_assert_int_eq(opal_progress_wait(0), 1);
        ck_assert_int_eq(atomic_load(&wp.calls), i);
    }
    ck_assert_int_eq(opal_progress_wait(0), 0);
    ck_assert_int_eq(atomic_load(&wp.calls), 3);
}
END_TEST

static int unregisters_own_fd(int fd, uint32_t epoll_events, void *context)
{
    (void) epoll_events;
    watched_pipe_t *p = context;
    atomic_fetch_add(&p->calls, 1);
    return OPAL_SUCCESS == opal_progress_fd_unregister(fd) ? 1 : 0;
}

START_TEST(fd_callback_may_unregister_itself)
{
    ck_assert_int_eq(opal_progress_fd_register(wp.fds[0], unregisters_own_fd, &wp), OPAL_SUCCESS);
    write_byte(wp.fds[1]);
    ck_assert_int_eq(opal_progress_wait(LONG_TIMEOUT_NS), 1);
    /* The byte is still unread, yet the callback is gone. */
    ck_assert_int_eq(opal_progress_wait(MS(20)), 0);
    ck_assert_int_eq(atomic_load(&wp.calls), 1);
}
END_TEST

static opal_atomic_int32_t nested_wait_result;

static int waits_inside(void)
{
    atomic_store(&nested_wait_result, opal_progress_wait(LONG_TIMEOUT_NS));
    return 1;
}

START_TEST(wait_inside_callback_returns_zero)
{
    atomic_store(&nested_wait_result, -1);
    ck_assert_int_eq(opal_progress_register(waits_inside), OPAL_SUCCESS);
    uint64_t start = opal_timer_ns();
    ck_assert_int_eq(opal_progress(), 1);
    ck_assert_uint_lt(ns_since(start), LONG_TIMEOUT_NS);
    ck_assert_int_eq(atomic_load(&nested_wait_result), 0);
}
END_TEST

/* Threads that wait in a loop until told to stop. */
enum { NWAITERS = 2 };
static opal_atomic_int32_t stop_waiting, waiters_done;

static void *wait_until_stopped(void *arg)
{
    (void) arg;
    while (0 == atomic_load(&stop_waiting)) {
        (void) opal_progress_wait(LONG_TIMEOUT_NS);
    }
    atomic_fetch_add(&waiters_done, 1);
    return NULL;
}

static void start_waiters(pthread_t *threads, int n)
{
    atomic_store(&stop_waiting, 0);
    atomic_store(&waiters_done, 0);
    for (int i = 0; i < n; ++i) {
        ck_assert_int_eq(pthread_create(&threads[i], NULL, wait_until_stopped, NULL), 0);
    }
}

static void stop_waiters(pthread_t *threads, int n)
{
    atomic_store(&stop_waiting, 1);
    /* One wake-up may be drained by a single waiter: repeat until all saw
     * the stop. */
    while (atomic_load(&waiters_done) < n) {
        opal_progress_wakeup();
        usleep(1000);
    }
    for (int i = 0; i < n; ++i) {
        ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
    }
}

/* Wakes the other waiters while the data is still unread, so that they
 * go back to epoll with the fd readable: they must not get it again. */
static int drains_after_waking_others(int fd, uint32_t epoll_events, void *context)
{
    opal_progress_wakeup();
    usleep(20000);
    return on_readable(fd, epoll_events, context);
}

START_TEST(one_readiness_runs_one_callback_among_waiters)
{
    ck_assert_int_eq(opal_progress_fd_register(wp.fds[0], drains_after_waking_others, &wp),
                     OPAL_SUCCESS);
    pthread_t threads[NWAITERS];
    start_waiters(threads, NWAITERS);
    write_byte(wp.fds[1]);
    while (0 == atomic_load(&wp.calls)) {
        sched_yield();
    }
    /* Room for another waiter to (wrongly) run it again. */
    usleep(50000);
    stop_waiters(threads, NWAITERS);
    ck_assert_int_eq(atomic_load(&wp.calls), 1);
}
END_TEST

/* Polling and fd callbacks running from two threads never overlap. */
static opal_atomic_int32_t inside, overlaps, fd_calls;
static int efd = -1;

static void enter_exclusive(void)
{
    if (0 != atomic_fetch_add(&inside, 1)) {
        atomic_fetch_add(&overlaps, 1);
    }
    sched_yield();
    atomic_fetch_sub(&inside, 1);
}

static int exclusive_poll(void)
{
    enter_exclusive();
    return 0;
}

static int exclusive_fd(int fd, uint32_t epoll_events, void *context)
{
    (void) epoll_events;
    (void) context;
    uint64_t value;
    enter_exclusive();
    ssize_t n = read(fd, &value, sizeof(value));
    atomic_fetch_add(&fd_calls, 1);
    return n > 0 ? 1 : 0;
}

static void *progress_until_stopped(void *arg)
{
    (void) arg;
    while (0 == atomic_load(&stop_waiting)) {
        opal_progress();
    }
    atomic_fetch_add(&waiters_done, 1);
    return NULL;
}

START_TEST(callbacks_never_run_concurrently)
{
    atomic_store(&inside, 0);
    atomic_store(&overlaps, 0);
    atomic_store(&fd_calls, 0);
    efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    ck_assert_int_ge(efd, 0);
    ck_assert_int_eq(opal_progress_register(exclusive_poll), OPAL_SUCCESS);
    ck_assert_int_eq(opal_progress_fd_register(efd, exclusive_fd, NULL), OPAL_SUCCESS);

    pthread_t threads[2];
    start_waiters(threads, 1);
    ck_assert_int_eq(pthread_create(&threads[1], NULL, progress_until_stopped, NULL), 0);
    size_t rounds = opal_test_iterations(500);
    for (size_t r = 0; r < rounds; ++r) {
        int32_t before = atomic_load(&fd_calls);
        uint64_t one = 1;
        ck_assert_int_eq(write(efd, &one, sizeof(one)), (ssize_t) sizeof(one));
        while (atomic_load(&fd_calls) == before) {
            sched_yield();
        }
    }
    stop_waiters(threads, 2);
    ck_assert_int_eq(atomic_load(&overlaps), 0);
    ck_assert_int_eq(opal_progress_fd_unregister(efd), OPAL_SUCCESS);
    close(efd);
}
END_TEST

static Suite *wait_suite(void)
{
    Suite *s = suite_create("opal_progress_wait");
    WAIT_TEST_ADD(s, wait_returns_at_once_when_callback_has_events);
    WAIT_TEST_ADD(s, wait_times_out_with_nothing_to_do);
    WAIT_TEST_ADD(s, wait_zero_timeout_with_nothing_ready_returns_zero);
    WAIT_TEST_ADD(s, wait_zero_timeout_runs_ready_fd_callbacks);
    WAIT_TEST_ADD(s, wait_wakes_when_fd_becomes_readable);
    WAIT_TEST_ADD(s, wait_sums_fd_and_progress_events);
    WAIT_TEST_ADD(s, wakeup_from_other_thread_ends_wait);
    WAIT_TEST_ADD(s, wakeup_before_wait_is_kept);
    WAIT_TEST_ADD(s, wakeup_from_signal_handler_ends_wait);
    WAIT_TEST_ADD(s, interrupting_signal_does_not_end_wait);
    WAIT_TEST_ADD(s, fd_register_twice_is_exists);
    WAIT_TEST_ADD(s, fd_register_refuses_bad_fds);
    WAIT_TEST_ADD(s, fd_unregister_unknown_is_not_found);
    WAIT_TEST_ADD(s, fd_unregister_stops_callbacks);
    WAIT_TEST_ADD(s, fd_registers_again_with_new_callback);
    WAIT_TEST_ADD(s, fd_callback_sees_hangup);
    WAIT_TEST_ADD(s, unread_data_calls_callback_again);
    WAIT_TEST_ADD(s, fd_callback_may_unregister_itself);
    WAIT_TEST_ADD(s, wait_inside_callback_returns_zero);
    WAIT_TEST_ADD(s, one_readiness_runs_one_callback_among_waiters);
    WAIT_TEST_ADD(s, callbacks_never_run_concurrently);
    return s;
}

int main(void)
{
    return opal_test_run(wait_suite());
}
