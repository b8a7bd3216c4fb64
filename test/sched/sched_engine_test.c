/*
 * The task engine's behaviour, the dependency cases of DAOS's TSE tests
 * among them; every case runs under each policy (fifo, prio, pool).
 */
#include "opal/opal_config.h"

#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "opal/mca/sched/sched.h"
#include "opal/threads/opal_thread.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "test/sched/sched_test_support.h"
#include "test/support/opal_test.h"

/* What a test task does, kept in its argument area. */
typedef struct step_t {
    sched_test_log_t *log;
    int id;
    int result;
    /* Where the body writes the error its dependencies passed on. */
    _Atomic int *dep_result;
} step_t;

static int step_body(opal_sched_task_t *task)
{
    step_t *s = opal_sched_task_arg(task, sizeof(*s));
    sched_test_log_add(s->log, s->id);
    if (NULL != s->dep_result) {
        atomic_store(s->dep_result, opal_sched_task_dep_result(task));
    }
    return s->result;
}

static opal_sched_task_t *step_new(opal_sched_t *sched, sched_test_log_t *log, int id)
{
    opal_sched_task_t *task = NULL;
    ck_assert_int_eq(opal_sched_task_create(sched, step_body, OPAL_SCHED_TASK_AUTO, &task),
                     OPAL_SUCCESS);
    step_t *s = opal_sched_task_arg(task, sizeof(*s));
    ck_assert_ptr_nonnull(s);
    *s = (step_t){.log = log, .id = id};
    return task;
}

static const char *policy(int i)
{
    return sched_test_policies[i];
}

START_TEST(empty_task_runs_once_and_completes)
{
    opal_sched_t *sched = sched_test_start(policy(_i), NULL, NULL);
    sched_test_log_t log;
    sched_test_log_init(&log);
    opal_sched_task_t *t = step_new(sched, &log, 7);
    ck_assert_int_eq(opal_sched_task_schedule(t, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    ck_assert_int_eq(sched_test_log_count(&log), 1);
    ck_assert_int_eq(log.entries[0], 7);
    sched_test_finish(sched);
}
END_TEST

START_TEST(n_tasks_then_one_dependent_runs_last)
{
    opal_sched_t *sched = sched_test_start(policy(_i), NULL, NULL);
    sched_test_log_t log;
    sched_test_log_init(&log);
    enum { N = 16 };
    opal_sched_task_t *deps[N];
    for (int i = 0; i < N; ++i) {
        deps[i] = step_new(sched, &log, i);
    }
    opal_sched_task_t *last = step_new(sched, &log, 100);
    ck_assert_int_eq(opal_sched_task_depend(last, N, deps), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule(last, 0), OPAL_SUCCESS);
    for (int i = 0; i < N; ++i) {
        ck_assert_int_eq(opal_sched_task_schedule(deps[i], 0), OPAL_SUCCESS);
    }
    sched_test_drain(sched);
    ck_assert_int_eq(sched_test_log_count(&log), N + 1);
    ck_assert_int_eq(sched_test_log_pos(&log, 100), N);
    sched_test_finish(sched);
}
END_TEST

START_TEST(one_task_then_n_dependents_run_after_it)
{
    opal_sched_t *sched = sched_test_start(policy(_i), NULL, NULL);
    sched_test_log_t log;
    sched_test_log_init(&log);
    enum { N = 16 };
    opal_sched_task_t *first = step_new(sched, &log, 100);
    for (int i = 0; i < N; ++i) {
        opal_sched_task_t *d = step_new(sched, &log, i);
        ck_assert_int_eq(opal_sched_task_depend(d, 1, &first), OPAL_SUCCESS);
        ck_assert_int_eq(opal_sched_task_schedule(d, 0), OPAL_SUCCESS);
    }
    /* Nothing runs before the one they wait for is scheduled. */
    ck_assert_int_eq(opal_sched_progress(sched), 0);
    ck_assert(!opal_sched_check_complete(sched));
    ck_assert_int_eq(opal_sched_task_schedule(first, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    ck_assert_int_eq(sched_test_log_count(&log), N + 1);
    ck_assert_int_eq(sched_test_log_pos(&log, 100), 0);
    sched_test_finish(sched);
}
END_TEST

static int log_cb(opal_sched_task_t *task, void *arg)
{
    step_t *s = opal_sched_task_arg(task, sizeof(*s));
    sched_test_log_add(s->log, (int) (intptr_t) arg);
    return OPAL_SUCCESS;
}

START_TEST(completion_callbacks_run_in_reverse_order_after_the_body)
{
    opal_sched_t *sched = sched_test_start(policy(_i), NULL, NULL);
    sched_test_log_t log;
    sched_test_log_init(&log);
    opal_sched_task_t *t = step_new(sched, &log, 0);
    for (intptr_t i = 1; i <= 3; ++i) {
        ck_assert_int_eq(opal_sched_task_register_cbs(t, NULL, NULL, log_cb, (void *) i),
                         OPAL_SUCCESS);
    }
    ck_assert_int_eq(opal_sched_task_schedule(t, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    ck_assert_int_eq(sched_test_log_count(&log), 4);
    ck_assert_int_eq(log.entries[0], 0);
    ck_assert_int_eq(log.entries[1], 3);
    ck_assert_int_eq(log.entries[2], 2);
    ck_assert_int_eq(log.entries[3], 1);
    sched_test_finish(sched);
}
END_TEST

START_TEST(prep_callbacks_run_before_the_body_in_order)
{
    opal_sched_t *sched = sched_test_start(policy(_i), NULL, NULL);
    sched_test_log_t log;
    sched_test_log_init(&log);
    opal_sched_task_t *t = step_new(sched, &log, 0);
    for (intptr_t i = 1; i <= 3; ++i) {
        ck_assert_int_eq(opal_sched_task_register_cbs(t, log_cb, (void *) i, NULL, NULL),
                         OPAL_SUCCESS);
    }
    ck_assert_int_eq(opal_sched_task_schedule(t, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    ck_assert_int_eq(sched_test_log_count(&log), 4);
    ck_assert_int_eq(log.entries[0], 1);
    ck_assert_int_eq(log.entries[1], 2);
    ck_assert_int_eq(log.entries[2], 3);
    ck_assert_int_eq(log.entries[3], 0);
    sched_test_finish(sched);
}
END_TEST

static int refuse_cb(opal_sched_task_t *task, void *arg)
{
    (void) task;
    (void) arg;
    return OPAL_ERR_NOT_AVAILABLE;
}

static int record_result_cb(opal_sched_task_t *task, void *arg)
{
    atomic_store((_Atomic int *) arg, opal_sched_task_result(task));
    return OPAL_SUCCESS;
}

START_TEST(failing_prep_callback_completes_the_task_without_its_body)
{
    opal_sched_t *sched = sched_test_start(policy(_i), NULL, NULL);
    sched_test_log_t log;
    sched_test_log_init(&log);
    _Atomic int result = 1;
    opal_sched_task_t *t = step_new(sched, &log, 0);
    ck_assert_int_eq(opal_sched_task_register_cbs(t, refuse_cb, NULL, record_result_cb, &result),
                     OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule(t, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    ck_assert_int_eq(sched_test_log_count(&log), 0);
    ck_assert_int_eq(atomic_load(&result), OPAL_ERR_NOT_AVAILABLE);
    sched_test_finish(sched);
}
END_TEST

/* Re-inits its task until it ran `arg` times. */
static int reinit_cb(opal_sched_task_t *task, void *arg)
{
    step_t *s = opal_sched_task_arg(task, sizeof(*s));
    int runs = sched_test_log_count(s->log);
    if (runs < (int) (intptr_t) arg) {
        ck_assert_int_eq(opal_sched_task_reinit(task, 0), OPAL_SUCCESS);
        /* The callback is consumed; register it again for the next run. */
        ck_assert_int_eq(opal_sched_task_register_cbs(task, NULL, NULL, reinit_cb, arg),
                         OPAL_SUCCESS);
    }
    return OPAL_SUCCESS;
}

START_TEST(reinit_from_a_completion_callback_runs_the_task_again)
{
    opal_sched_t *sched = sched_test_start(policy(_i), NULL, NULL);
    sched_test_log_t log, dlog;
    sched_test_log_init(&log);
    sched_test_log_init(&dlog);
    opal_sched_task_t *t = step_new(sched, &log, 1);
    opal_sched_task_t *after = step_new(sched, &dlog, 2);
    ck_assert_int_eq(opal_sched_task_depend(after, 1, &t), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_register_cbs(t, NULL, NULL, reinit_cb, (void *) 3),
                     OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule(after, 0), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule(t, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    /* Three runs, and its dependent waited for the last. */
    ck_assert_int_eq(sched_test_log_count(&log), 3);
    ck_assert_int_eq(sched_test_log_count(&dlog), 1);
    sched_test_finish(sched);
}
END_TEST

START_TEST(reinit_of_a_completed_task_held_by_the_caller_runs_it_again)
{
    opal_sched_t *sched = sched_test_start(policy(_i), NULL, NULL);
    sched_test_log_t log;
    sched_test_log_init(&log);
    opal_sched_task_t *t = step_new(sched, &log, 1);
    opal_sched_task_retain(t);
    ck_assert_int_eq(opal_sched_task_reinit(t, 0), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_sched_task_schedule(t, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    ck_assert_int_eq(opal_sched_task_reinit(t, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    ck_assert_int_eq(sched_test_log_count(&log), 2);
    opal_sched_task_release(t);
    sched_test_finish(sched);
}
END_TEST

typedef struct stamp_t {
    _Atomic uint64_t ran_at;
} stamp_t;

static int stamp_body(opal_sched_task_t *task)
{
    stamp_t *s = *(stamp_t **) opal_sched_task_arg(task, sizeof(stamp_t *));
    atomic_store(&s->ran_at, opal_timer_ns());
    return OPAL_SUCCESS;
}

START_TEST(delayed_task_does_not_run_before_its_delay)
{
    opal_sched_t *sched = sched_test_start(policy(_i), NULL, NULL);
    stamp_t stamp = {0};
    opal_sched_task_t *t = NULL;
    ck_assert_int_eq(opal_sched_task_create(sched, stamp_body, OPAL_SCHED_TASK_AUTO, &t),
                     OPAL_SUCCESS);
    *(stamp_t **) opal_sched_task_arg(t, sizeof(stamp_t *)) = &stamp;
    const uint64_t delay = 20 * 1000 * 1000;
    uint64_t start = opal_timer_ns();
    ck_assert_int_eq(opal_sched_task_schedule_delayed(t, 0, delay), OPAL_SUCCESS);
    ck_assert(!opal_sched_check_complete(sched));
    sched_test_drain(sched);
    ck_assert_uint_ge(atomic_load(&stamp.ran_at) - start, delay);
    sched_test_finish(sched);
}
END_TEST

START_TEST(list_schedules_its_tasks_and_orders_against_one_task)
{
    opal_sched_t *sched = sched_test_start(policy(_i), NULL, NULL);
    sched_test_log_t log;
    sched_test_log_init(&log);
    opal_sched_task_list_t middle = OPAL_SCHED_TASK_LIST_INIT;
    opal_sched_task_t *first = step_new(sched, &log, 0);
    opal_sched_task_t *last = step_new(sched, &log, 9);
    for (int i = 1; i <= 5; ++i) {
        ck_assert_int_eq(opal_sched_task_list_add(&middle, step_new(sched, &log, i)), OPAL_SUCCESS);
    }
    ck_assert_int_eq(opal_sched_task_list_depend(&middle, first), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_depend_list(last, &middle), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule(last, 0), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_list_schedule(&middle, 0), OPAL_SUCCESS);
    ck_assert_ptr_null(middle.l_head);
    ck_assert_uint_eq(middle.l_count, 0);
    ck_assert_int_eq(opal_sched_task_schedule(first, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    ck_assert_int_eq(sched_test_log_count(&log), 7);
    ck_assert_int_eq(sched_test_log_pos(&log, 0), 0);
    ck_assert_int_eq(sched_test_log_pos(&log, 9), 6);
    sched_test_finish(sched);
}
END_TEST

START_TEST(check_complete_is_false_until_every_task_completed)
{
    opal_sched_t *sched = sched_test_start(policy(_i), NULL, NULL);
    sched_test_log_t log;
    sched_test_log_init(&log);
    ck_assert(opal_sched_check_complete(sched));
    opal_sched_task_t *a = step_new(sched, &log, 1);
    opal_sched_task_t *b = step_new(sched, &log, 2);
    ck_assert_int_eq(opal_sched_task_depend(b, 1, &a), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule(b, 0), OPAL_SUCCESS);
    /* b waits for a, which is not even scheduled. */
    for (int i = 0; i < 10; ++i) {
        (void) opal_sched_progress(sched);
        ck_assert(!opal_sched_check_complete(sched));
    }
    ck_assert_int_eq(opal_sched_task_schedule(a, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    ck_assert(opal_sched_check_complete(sched));
    ck_assert_int_eq(sched_test_log_count(&log), 2);
    sched_test_finish(sched);
}
END_TEST

START_TEST(cycles_are_refused)
{
    opal_sched_t *sched = sched_test_start(policy(_i), NULL, NULL);
    sched_test_log_t log;
    sched_test_log_init(&log);
    opal_sched_task_t *a = step_new(sched, &log, 1);
    opal_sched_task_t *b = step_new(sched, &log, 2);
    opal_sched_task_t *c = step_new(sched, &log, 3);
    ck_assert_int_eq(opal_sched_task_depend(a, 1, &a), OPAL_ERR_WOULD_BLOCK);
    ck_assert_int_eq(opal_sched_task_depend(b, 1, &a), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_depend(c, 1, &b), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_depend(a, 1, &b), OPAL_ERR_WOULD_BLOCK);
    ck_assert_int_eq(opal_sched_task_depend(a, 1, &c), OPAL_ERR_WOULD_BLOCK);
    /* A refused call adds none of its edges: a stays free to run first. */
    opal_sched_task_t *both[] = {b, c};
    ck_assert_int_eq(opal_sched_task_depend(a, 2, both), OPAL_ERR_WOULD_BLOCK);
    ck_assert_int_eq(opal_sched_task_schedule(c, 0), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule(b, 0), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule(a, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    ck_assert_int_eq(sched_test_log_count(&log), 3);
    ck_assert_int_eq(log.entries[0], 1);
    ck_assert_int_eq(log.entries[1], 2);
    ck_assert_int_eq(log.entries[2], 3);
    sched_test_finish(sched);
}
END_TEST

START_TEST(failed_task_passes_its_error_to_dependents_that_still_run)
{
    opal_sched_t *sched = sched_test_start(policy(_i), NULL, NULL);
    sched_test_log_t log;
    sched_test_log_init(&log);
    _Atomic int seen = 0;
    opal_sched_task_t *bad = step_new(sched, &log, 1);
    ((step_t *) opal_sched_task_arg(bad, sizeof(step_t)))->result = OPAL_ERR_TIMEOUT;
    opal_sched_task_t *good = step_new(sched, &log, 2);
    opal_sched_task_t *after = step_new(sched, &log, 3);
    ((step_t *) opal_sched_task_arg(after, sizeof(step_t)))->dep_result = &seen;
    opal_sched_task_t *deps[] = {good, bad};
    ck_assert_int_eq(opal_sched_task_depend(after, 2, deps), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule(after, 0), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule(good, 0), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule(bad, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    ck_assert_int_eq(sched_test_log_pos(&log, 3), 2);
    ck_assert_int_eq(atomic_load(&seen), OPAL_ERR_TIMEOUT);
    sched_test_finish(sched);
}
END_TEST

START_TEST(canceled_task_and_its_dependents_complete_canceled_without_running)
{
    opal_sched_t *sched = sched_test_start(policy(_i), NULL, NULL);
    sched_test_log_t log;
    sched_test_log_init(&log);
    _Atomic int result_a = 1, result_b = 1, result_c = 1;
    opal_sched_task_t *gate = step_new(sched, &log, 0);
    opal_sched_task_t *a = step_new(sched, &log, 1);
    opal_sched_task_t *b = step_new(sched, &log, 2);
    opal_sched_task_t *c = step_new(sched, &log, 3);
    ck_assert_int_eq(opal_sched_task_depend(a, 1, &gate), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_depend(b, 1, &a), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_depend(c, 1, &b), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_register_cbs(a, NULL, NULL, record_result_cb, &result_a),
                     OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_register_cbs(b, NULL, NULL, record_result_cb, &result_b),
                     OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_register_cbs(c, NULL, NULL, record_result_cb, &result_c),
                     OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule(c, 0), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule(b, 0), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule(a, 0), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_cancel(a), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule(gate, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    ck_assert_int_eq(sched_test_log_count(&log), 1);
    ck_assert_int_eq(log.entries[0], 0);
    ck_assert_int_eq(atomic_load(&result_a), OPAL_ERR_CANCELED);
    ck_assert_int_eq(atomic_load(&result_b), OPAL_ERR_CANCELED);
    ck_assert_int_eq(atomic_load(&result_c), OPAL_ERR_CANCELED);
    sched_test_finish(sched);
}
END_TEST

START_TEST(cancel_of_a_task_that_ran_is_refused)
{
    opal_sched_t *sched = sched_test_start(policy(_i), NULL, NULL);
    sched_test_log_t log;
    sched_test_log_init(&log);
    opal_sched_task_t *t = step_new(sched, &log, 1);
    opal_sched_task_retain(t);
    ck_assert_int_eq(opal_sched_task_schedule(t, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    ck_assert_int_eq(opal_sched_task_cancel(t), OPAL_ERR_RESOURCE_BUSY);
    ck_assert_int_eq(opal_sched_task_result(t), OPAL_SUCCESS);
    opal_sched_task_release(t);
    sched_test_finish(sched);
}
END_TEST

START_TEST(dependency_on_a_completed_task_is_satisfied_at_once)
{
    opal_sched_t *sched = sched_test_start(policy(_i), NULL, NULL);
    sched_test_log_t log;
    sched_test_log_init(&log);
    _Atomic int seen = 1;
    opal_sched_task_t *done = step_new(sched, &log, 1);
    ((step_t *) opal_sched_task_arg(done, sizeof(step_t)))->result = OPAL_ERR_NOT_FOUND;
    opal_sched_task_retain(done);
    ck_assert_int_eq(opal_sched_task_schedule(done, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    opal_sched_task_t *t = step_new(sched, &log, 2);
    ((step_t *) opal_sched_task_arg(t, sizeof(step_t)))->dep_result = &seen;
    ck_assert_int_eq(opal_sched_task_depend(t, 1, &done), OPAL_SUCCESS);
    opal_sched_task_release(done);
    ck_assert_int_eq(opal_sched_task_schedule(t, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    ck_assert_int_eq(sched_test_log_count(&log), 2);
    ck_assert_int_eq(atomic_load(&seen), OPAL_ERR_NOT_FOUND);
    sched_test_finish(sched);
}
END_TEST

/* Body that leaves its task to a thread that completes it later. */
static void *complete_later(void *arg)
{
    opal_sched_task_t *task = arg;
    ck_assert_int_eq(opal_sched_task_complete(task, OPAL_ERR_TIMEOUT), OPAL_SUCCESS);
    return NULL;
}

/* The thread handoff_body starts, and whether the body is done with it:
 * the task (and its dependents) may complete while the body is still in
 * opal_thread_start on a pool worker, so the test joins and releases the
 * thread only once started is set (release here, acquire in the test). */
typedef struct handoff_t {
    opal_thread_t *thread;
    _Atomic int started;
} handoff_t;

static int handoff_body(opal_sched_task_t *task)
{
    handoff_t *h = *(handoff_t **) opal_sched_task_arg(task, sizeof(handoff_t *));
    ck_assert_int_eq(opal_thread_start(h->thread, complete_later, task), OPAL_SUCCESS);
    atomic_store_explicit(&h->started, 1, memory_order_release);
    return OPAL_SUCCESS;
}

START_TEST(task_completed_later_from_another_thread_releases_its_dependents)
{
    bool threads = opal_set_using_threads(true);
    opal_sched_t *sched = sched_test_start(policy(_i), NULL, NULL);
    sched_test_log_t log;
    sched_test_log_init(&log);
    _Atomic int seen = 0;
    handoff_t handoff = {.thread = OBJ_NEW(opal_thread_t), .started = 0};
    handoff_t *h = &handoff;
    opal_sched_task_t *t = NULL;
    ck_assert_int_eq(opal_sched_task_create(sched, handoff_body, 0, &t), OPAL_SUCCESS);
    *(handoff_t **) opal_sched_task_arg(t, sizeof(h)) = h;
    opal_sched_task_t *after = step_new(sched, &log, 2);
    ((step_t *) opal_sched_task_arg(after, sizeof(step_t)))->dep_result = &seen;
    ck_assert_int_eq(opal_sched_task_depend(after, 1, &t), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule(after, 0), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule(t, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    while (0 == atomic_load_explicit(&handoff.started, memory_order_acquire)) {
        sched_yield();
    }
    ck_assert_int_eq(opal_thread_join(handoff.thread, NULL), OPAL_SUCCESS);
    OBJ_RELEASE(handoff.thread);
    ck_assert_int_eq(sched_test_log_count(&log), 1);
    ck_assert_int_eq(atomic_load(&seen), OPAL_ERR_TIMEOUT);
    sched_test_finish(sched);
    (void) opal_set_using_threads(threads);
}
END_TEST

static void sched_done(opal_sched_t *sched, int result, void *arg)
{
    (void) sched;
    _Atomic int *calls = arg;
    ck_assert_int_eq(result, OPAL_ERR_CANCELED);
    atomic_fetch_add(calls, 1);
}

START_TEST(scheduler_complete_with_cancel_finishes_everything_and_calls_back_once)
{
    opal_sched_t *sched = sched_test_start(policy(_i), NULL, NULL);
    sched_test_log_t log;
    sched_test_log_init(&log);
    _Atomic int calls = 0, result = 1;
    opal_sched_task_t *later = step_new(sched, &log, 1);
    ck_assert_int_eq(opal_sched_task_register_cbs(later, NULL, NULL, record_result_cb, &result),
                     OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule_delayed(later, 0, 3600ull * 1000000000ull),
                     OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_register_comp_cb(sched, sched_done, &calls), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_complete(sched, OPAL_ERR_CANCELED, true), OPAL_SUCCESS);
    ck_assert(opal_sched_check_complete(sched));
    ck_assert_int_eq(atomic_load(&calls), 1);
    ck_assert_int_eq(atomic_load(&result), OPAL_ERR_CANCELED);
    ck_assert_int_eq(sched_test_log_count(&log), 0);
    sched_test_finish(sched);
    ck_assert_int_eq(atomic_load(&calls), 1);
}
END_TEST

static int thread_body(opal_sched_task_t *task)
{
    pthread_t *ran_on = *(pthread_t **) opal_sched_task_arg(task, sizeof(pthread_t *));
    *ran_on = pthread_self();
    return OPAL_SUCCESS;
}

START_TEST(inline_schedule_runs_the_task_in_the_calling_thread_at_once)
{
    opal_sched_t *sched = sched_test_start(policy(_i), NULL, NULL);
    pthread_t ran_on = 0;
    opal_sched_task_t *t = NULL;
    ck_assert_int_eq(opal_sched_task_create(sched, thread_body, OPAL_SCHED_TASK_AUTO, &t),
                     OPAL_SUCCESS);
    *(pthread_t **) opal_sched_task_arg(t, sizeof(pthread_t *)) = &ran_on;
    ck_assert_int_eq(opal_sched_task_schedule(t, OPAL_SCHED_INLINE), OPAL_SUCCESS);
    ck_assert(opal_sched_check_complete(sched));
    ck_assert(pthread_equal(ran_on, pthread_self()));
    sched_test_finish(sched);
}
END_TEST

START_TEST(bad_calls_are_refused)
{
    opal_sched_t *sched = sched_test_start(policy(_i), NULL, NULL);
    sched_test_log_t log;
    sched_test_log_init(&log);
    opal_sched_task_t *t = NULL;
    ck_assert_int_eq(opal_sched_task_create(NULL, step_body, 0, &t), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_sched_task_create(sched, step_body, 0x80, &t), OPAL_ERR_BAD_PARAM);
    t = step_new(sched, &log, 1);
    ck_assert_ptr_null(opal_sched_task_arg(t, OPAL_SCHED_TASK_ARG_SIZE + 1));
    ck_assert_int_eq(opal_sched_task_complete(t, OPAL_SUCCESS), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_sched_task_set_priority(t, -1, 0), OPAL_ERR_BAD_PARAM);
    /* Held, so that the second call does not meet a freed task. */
    opal_sched_task_retain(t);
    ck_assert_int_eq(opal_sched_task_schedule(t, 0), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule(t, 0), OPAL_ERR_BAD_PARAM);
    opal_sched_task_release(t);
    opal_sched_task_t *late = step_new(sched, &log, 2);
    /* Held before it is scheduled: a pool worker may run, complete and free
     * it at once, and the next task created would then reuse its memory. */
    opal_sched_task_retain(late);
    ck_assert_int_eq(opal_sched_task_schedule(late, 0), OPAL_SUCCESS);
    opal_sched_task_t *dep = step_new(sched, &log, 3);
    /* Dependencies are for tasks not yet scheduled. */
    sched_test_drain(sched);
    ck_assert_int_eq(opal_sched_task_depend(late, 1, &dep), OPAL_ERR_BAD_PARAM);
    opal_sched_task_release(late);
    opal_sched_task_release(dep);
    sched_test_finish(sched);
}
END_TEST

#define ADD_LOOP(suite, fn)                                                                        \
    do {                                                                                           \
        TCase *tc_ = tcase_create(#fn);                                                            \
        tcase_add_loop_test(tc_, fn, 0, SCHED_TEST_NPOLICIES);                                     \
        suite_add_tcase((suite), tc_);                                                             \
    } while (0)

int main(void)
{
    Suite *s = suite_create("sched_engine");
    ADD_LOOP(s, empty_task_runs_once_and_completes);
    ADD_LOOP(s, n_tasks_then_one_dependent_runs_last);
    ADD_LOOP(s, one_task_then_n_dependents_run_after_it);
    ADD_LOOP(s, completion_callbacks_run_in_reverse_order_after_the_body);
    ADD_LOOP(s, prep_callbacks_run_before_the_body_in_order);
    ADD_LOOP(s, failing_prep_callback_completes_the_task_without_its_body);
    ADD_LOOP(s, reinit_from_a_completion_callback_runs_the_task_again);
    ADD_LOOP(s, reinit_of_a_completed_task_held_by_the_caller_runs_it_again);
    ADD_LOOP(s, delayed_task_does_not_run_before_its_delay);
    ADD_LOOP(s, list_schedules_its_tasks_and_orders_against_one_task);
    ADD_LOOP(s, check_complete_is_false_until_every_task_completed);
    ADD_LOOP(s, cycles_are_refused);
    ADD_LOOP(s, failed_task_passes_its_error_to_dependents_that_still_run);
    ADD_LOOP(s, canceled_task_and_its_dependents_complete_canceled_without_running);
    ADD_LOOP(s, cancel_of_a_task_that_ran_is_refused);
    ADD_LOOP(s, dependency_on_a_completed_task_is_satisfied_at_once);
    ADD_LOOP(s, task_completed_later_from_another_thread_releases_its_dependents);
    ADD_LOOP(s, scheduler_complete_with_cancel_finishes_everything_and_calls_back_once);
    ADD_LOOP(s, inline_schedule_runs_the_task_in_the_calling_thread_at_once);
    ADD_LOOP(s, bad_calls_are_refused);
    return opal_test_run(s);
}
