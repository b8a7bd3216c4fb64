/*
 * What each policy adds to the engine: the selection, prio's classes,
 * deadlines, admission bound and counters, pool's worker threads.
 */
#include "opal/opal_config.h"

#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "opal/mca/base/mca_base_pvar.h"
#include "opal/mca/sched/sched.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "test/sched/sched_test_support.h"
#include "test/support/opal_test.h"

START_TEST(fifo_is_the_default_policy)
{
    setenv("OPAL_MCA_mca_base_component_path", SCHED_TEST_PLUGIN_DIRS, 1);
    unsetenv("OPAL_MCA_sched");
    ck_assert_int_eq(opal_sched_init(), OPAL_SUCCESS);
    ck_assert_str_eq(opal_sched_policy_name(), "fifo");
    ck_assert_int_eq(opal_sched_finalize(), OPAL_SUCCESS);
    ck_assert_ptr_null(opal_sched_policy_name());
}
END_TEST

START_TEST(unknown_policy_is_refused)
{
    setenv("OPAL_MCA_mca_base_component_path", SCHED_TEST_PLUGIN_DIRS, 1);
    setenv("OPAL_MCA_sched", "lifo", 1);
    ck_assert_int_eq(opal_sched_init(), OPAL_ERR_BAD_VALUE);
    ck_assert_ptr_null(opal_sched_policy_name());
    opal_sched_t *sched = NULL;
    ck_assert_int_eq(opal_sched_create(&sched), OPAL_ERR_NOT_INITIALIZED);
    unsetenv("OPAL_MCA_sched");
}
END_TEST

START_TEST(finalize_with_a_live_scheduler_is_refused)
{
    opal_sched_t *sched = sched_test_start("fifo", NULL, NULL);
    ck_assert_int_eq(opal_sched_finalize(), OPAL_ERR_RESOURCE_BUSY);
    sched_test_finish(sched);
}
END_TEST

typedef struct mark_t {
    sched_test_log_t *log;
    int id;
} mark_t;

static int mark_body(opal_sched_task_t *task)
{
    mark_t *m = opal_sched_task_arg(task, sizeof(*m));
    sched_test_log_add(m->log, m->id);
    return OPAL_SUCCESS;
}

static int schedule_mark(opal_sched_t *sched, sched_test_log_t *log, int id, int prio_class,
                         uint64_t deadline)
{
    opal_sched_task_t *t = NULL;
    ck_assert_int_eq(opal_sched_task_create(sched, mark_body, OPAL_SCHED_TASK_AUTO, &t),
                     OPAL_SUCCESS);
    *(mark_t *) opal_sched_task_arg(t, sizeof(mark_t)) = (mark_t){log, id};
    ck_assert_int_eq(opal_sched_task_set_priority(t, prio_class, deadline), OPAL_SUCCESS);
    int rc = opal_sched_task_schedule(t, 0);
    if (OPAL_SUCCESS != rc) {
        /* Refused: the task is still ours. */
        opal_sched_task_release(t);
    }
    return rc;
}

static uint64_t pvar_value(const char *name)
{
    int index = mca_base_pvar_find("opal", "sched", "prio", name);
    ck_assert_int_ge(index, 0);
    mca_base_pvar_value_t value;
    ck_assert_int_eq(mca_base_pvar_read(index, &value), OPAL_SUCCESS);
    return value.uint64val;
}

START_TEST(prio_runs_the_most_urgent_class_first)
{
    opal_sched_t *sched = sched_test_start("prio", NULL, NULL);
    sched_test_log_t log;
    sched_test_log_init(&log);
    for (int i = 0; i < 5; ++i) {
        ck_assert_int_eq(schedule_mark(sched, &log, 30 + i, 3, 0), OPAL_SUCCESS);
    }
    ck_assert_int_eq(schedule_mark(sched, &log, 20, 2, 0), OPAL_SUCCESS);
    ck_assert_int_eq(schedule_mark(sched, &log, 0, 0, 0), OPAL_SUCCESS);
    /* A class past the last counts as the last. */
    ck_assert_int_eq(schedule_mark(sched, &log, 99, 42, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    ck_assert_int_eq(sched_test_log_count(&log), 8);
    int expect[] = {0, 20, 30, 31, 32, 33, 34, 99};
    for (int i = 0; i < 8; ++i) {
        ck_assert_int_eq(log.entries[i], expect[i]);
    }
    sched_test_finish(sched);
}
END_TEST

START_TEST(prio_runs_the_earliest_deadline_first_within_a_class)
{
    opal_sched_t *sched = sched_test_start("prio", NULL, NULL);
    sched_test_log_t log;
    sched_test_log_init(&log);
    uint64_t now = opal_timer_ns(), s = 1000000000ull;
    ck_assert_int_eq(schedule_mark(sched, &log, 4, 1, 0), OPAL_SUCCESS);
    ck_assert_int_eq(schedule_mark(sched, &log, 3, 1, now + 30 * s), OPAL_SUCCESS);
    ck_assert_int_eq(schedule_mark(sched, &log, 1, 1, now + 10 * s), OPAL_SUCCESS);
    ck_assert_int_eq(schedule_mark(sched, &log, 2, 1, now + 20 * s), OPAL_SUCCESS);
    ck_assert_int_eq(schedule_mark(sched, &log, 5, 1, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    ck_assert_int_eq(sched_test_log_count(&log), 5);
    for (int i = 0; i < 5; ++i) {
        ck_assert_int_eq(log.entries[i], i + 1);
    }
    sched_test_finish(sched);
}
END_TEST

START_TEST(prio_refuses_work_past_the_bound_of_a_class_and_counts_it)
{
    enum { BOUND = 8, ATTEMPTS = 1000 };
    opal_sched_t *sched = sched_test_start("prio", "sched_prio_max_queued", "8");
    sched_test_log_t log;
    sched_test_log_init(&log);
    uint64_t refused_before = pvar_value("class1_refused");
    int accepted = 0, refused = 0;
    for (int i = 0; i < ATTEMPTS; ++i) {
        int rc = schedule_mark(sched, &log, i, 1, 0);
        if (OPAL_SUCCESS == rc) {
            ++accepted;
        } else {
            ck_assert_int_eq(rc, OPAL_ERR_RESOURCE_BUSY);
            ++refused;
        }
    }
    /* Nothing queued past the bound, every refusal reported and counted. */
    ck_assert_int_eq(accepted, BOUND);
    ck_assert_int_eq(refused, ATTEMPTS - BOUND);
    ck_assert_uint_eq(pvar_value("class1_refused") - refused_before, ATTEMPTS - BOUND);
    /* Another class has its own bound. */
    ck_assert_int_eq(schedule_mark(sched, &log, -1, 0, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    ck_assert_int_eq(sched_test_log_count(&log), BOUND + 1);
    /* Once the queued work ran, the class takes work again. */
    ck_assert_int_eq(schedule_mark(sched, &log, -2, 1, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    sched_test_finish(sched);
}
END_TEST

START_TEST(prio_bound_counts_tasks_waiting_for_dependencies)
{
    opal_sched_t *sched = sched_test_start("prio", "sched_prio_max_queued", "2");
    sched_test_log_t log;
    sched_test_log_init(&log);
    opal_sched_task_t *gate = NULL, *t[3];
    ck_assert_int_eq(opal_sched_task_create(sched, NULL, 0, &gate), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_set_priority(gate, 0, 0), OPAL_SUCCESS);
    for (int i = 0; i < 3; ++i) {
        ck_assert_int_eq(opal_sched_task_create(sched, mark_body, OPAL_SCHED_TASK_AUTO, &t[i]),
                         OPAL_SUCCESS);
        *(mark_t *) opal_sched_task_arg(t[i], sizeof(mark_t)) = (mark_t){&log, i};
        ck_assert_int_eq(opal_sched_task_set_priority(t[i], 2, 0), OPAL_SUCCESS);
        ck_assert_int_eq(opal_sched_task_depend(t[i], 1, &gate), OPAL_SUCCESS);
    }
    ck_assert_int_eq(opal_sched_task_schedule(t[0], 0), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule(t[1], 0), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule(t[2], 0), OPAL_ERR_RESOURCE_BUSY);
    /* Canceling a waiting task gives its slot back. */
    ck_assert_int_eq(opal_sched_task_cancel(t[1]), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule(gate, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    ck_assert_int_eq(opal_sched_task_schedule(t[2], 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    ck_assert_int_eq(sched_test_log_count(&log), 2);
    ck_assert_int_ge(sched_test_log_pos(&log, 0), 0);
    ck_assert_int_ge(sched_test_log_pos(&log, 2), 0);
    sched_test_finish(sched);
}
END_TEST

START_TEST(prio_counts_tasks_queued_run_and_late)
{
    opal_sched_t *sched = sched_test_start("prio", NULL, NULL);
    sched_test_log_t log;
    sched_test_log_init(&log);
    uint64_t queued = pvar_value("class2_queued"), run = pvar_value("class2_run"),
             late = pvar_value("class2_late");
    /* A deadline already past when it runs; one far ahead. */
    ck_assert_int_eq(schedule_mark(sched, &log, 1, 2, 1), OPAL_SUCCESS);
    ck_assert_int_eq(schedule_mark(sched, &log, 2, 2, opal_timer_ns() + 3600000000000ull),
                     OPAL_SUCCESS);
    sched_test_drain(sched);
    ck_assert_uint_eq(pvar_value("class2_queued") - queued, 2);
    ck_assert_uint_eq(pvar_value("class2_run") - run, 2);
    ck_assert_uint_eq(pvar_value("class2_late") - late, 1);
    sched_test_finish(sched);
}
END_TEST

static int where_body(opal_sched_task_t *task)
{
    pthread_t *ran_on = *(pthread_t **) opal_sched_task_arg(task, sizeof(pthread_t *));
    *ran_on = pthread_self();
    return OPAL_SUCCESS;
}

START_TEST(pool_runs_tasks_on_its_worker_threads)
{
    opal_sched_t *sched = sched_test_start("pool", "sched_pool_workers", "2");
    pthread_t ran_on = pthread_self();
    opal_sched_task_t *t = NULL;
    ck_assert_int_eq(opal_sched_task_create(sched, where_body, OPAL_SCHED_TASK_AUTO, &t),
                     OPAL_SUCCESS);
    *(pthread_t **) opal_sched_task_arg(t, sizeof(pthread_t *)) = &ran_on;
    ck_assert_int_eq(opal_sched_task_schedule(t, 0), OPAL_SUCCESS);
    /* Never progressed by this thread: the workers alone run it. */
    while (!opal_sched_check_complete(sched)) {
        sched_yield();
    }
    ck_assert(!pthread_equal(ran_on, pthread_self()));
    sched_test_finish(sched);
}
END_TEST

typedef struct gate_t {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool open;
} gate_t;

static int wait_body(opal_sched_task_t *task)
{
    gate_t *g = *(gate_t **) opal_sched_task_arg(task, sizeof(gate_t *));
    pthread_mutex_lock(&g->lock);
    while (!g->open) {
        pthread_cond_wait(&g->cond, &g->lock);
    }
    pthread_mutex_unlock(&g->lock);
    return OPAL_SUCCESS;
}

static int open_body(opal_sched_task_t *task)
{
    gate_t *g = *(gate_t **) opal_sched_task_arg(task, sizeof(gate_t *));
    pthread_mutex_lock(&g->lock);
    g->open = true;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
    return OPAL_SUCCESS;
}

START_TEST(pool_task_that_blocks_does_not_stall_the_others)
{
    opal_sched_t *sched = sched_test_start("pool", "sched_pool_workers", "2");
    gate_t gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
    gate_t *g = &gate;
    opal_sched_task_t *waiter = NULL, *opener = NULL;
    ck_assert_int_eq(opal_sched_task_create(sched, wait_body, OPAL_SCHED_TASK_AUTO, &waiter),
                     OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_create(sched, open_body, OPAL_SCHED_TASK_AUTO, &opener),
                     OPAL_SUCCESS);
    *(gate_t **) opal_sched_task_arg(waiter, sizeof(g)) = g;
    *(gate_t **) opal_sched_task_arg(opener, sizeof(g)) = g;
    /* Both land on the same worker's queue when scheduled from a worker;
     * from here they go round robin: the waiter blocks one worker, the
     * opener runs on (or is stolen by) the other. */
    ck_assert_int_eq(opal_sched_task_schedule(waiter, 0), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule(opener, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    ck_assert(gate.open);
    sched_test_finish(sched);
}
END_TEST

/* Fan-out from the workers: a root schedules children and a join that
 * waits for them, from inside its body. */
typedef struct fan_t {
    _Atomic uint64_t runs;
    int children;
} fan_t;

static int leaf_body(opal_sched_task_t *task)
{
    fan_t *f = *(fan_t **) opal_sched_task_arg(task, sizeof(fan_t *));
    atomic_fetch_add_explicit(&f->runs, 1, memory_order_relaxed);
    return OPAL_SUCCESS;
}

static int root_body(opal_sched_task_t *task)
{
    fan_t *f = *(fan_t **) opal_sched_task_arg(task, sizeof(fan_t *));
    opal_sched_t *sched = opal_sched_task_sched(task);
    opal_sched_task_t *join = NULL;
    ck_assert_int_eq(opal_sched_task_create(sched, leaf_body, OPAL_SCHED_TASK_AUTO, &join),
                     OPAL_SUCCESS);
    *(fan_t **) opal_sched_task_arg(join, sizeof(f)) = f;
    opal_sched_task_list_t children = OPAL_SCHED_TASK_LIST_INIT;
    for (int i = 0; i < f->children; ++i) {
        opal_sched_task_t *c = NULL;
        ck_assert_int_eq(opal_sched_task_create(sched, leaf_body, OPAL_SCHED_TASK_AUTO, &c),
                         OPAL_SUCCESS);
        *(fan_t **) opal_sched_task_arg(c, sizeof(f)) = f;
        ck_assert_int_eq(opal_sched_task_list_add(&children, c), OPAL_SUCCESS);
    }
    ck_assert_int_eq(opal_sched_task_depend_list(join, &children), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_schedule(join, 0), OPAL_SUCCESS);
    ck_assert_int_eq(opal_sched_task_list_schedule(&children, 0), OPAL_SUCCESS);
    atomic_fetch_add_explicit(&f->runs, 1, memory_order_relaxed);
    return OPAL_SUCCESS;
}

START_TEST(pool_with_2_to_8_workers_runs_every_task_once)
{
    char workers[8];
    snprintf(workers, sizeof(workers), "%d", _i);
    opal_sched_t *sched = sched_test_start("pool", "sched_pool_workers", workers);
    fan_t fan = {.children = 8};
    fan_t *f = &fan;
    const size_t roots = opal_test_iterations(4000);
    for (size_t i = 0; i < roots; ++i) {
        opal_sched_task_t *t = NULL;
        ck_assert_int_eq(opal_sched_task_create(sched, root_body, OPAL_SCHED_TASK_AUTO, &t),
                         OPAL_SUCCESS);
        *(fan_t **) opal_sched_task_arg(t, sizeof(f)) = f;
        ck_assert_int_eq(opal_sched_task_schedule(t, 0), OPAL_SUCCESS);
    }
    sched_test_drain(sched);
    /* Each root: itself, its children and their join. */
    ck_assert_uint_eq(atomic_load(&fan.runs), roots * (2 + (size_t) fan.children));
    sched_test_finish(sched);
}
END_TEST

/* ---------------------------------------------------- opal_sched_run_now */

typedef struct now_t {
    opal_sched_t *sched;
    sched_test_log_t *log;
    int id;
    /* Seen from inside fn: */
    int progress_ran;
    bool nested_ran;
    int complete_rc;
} now_t;

static void now_nested(void *arg)
{
    sched_test_log_add(((now_t *) arg)->log, -1);
}

static void now_fn(void *arg)
{
    now_t *n = arg;
    sched_test_log_add(n->log, n->id);
    /* As inside a body: no other pass, no run_now, no completion. */
    n->progress_ran = opal_sched_progress(n->sched);
    n->nested_ran = opal_sched_run_now(n->sched, now_nested, n);
    n->complete_rc = opal_sched_complete(n->sched, OPAL_SUCCESS, false);
}

START_TEST(fifo_runs_work_now_when_nothing_is_scheduled)
{
    opal_sched_t *sched = sched_test_start("fifo", NULL, NULL);
    sched_test_log_t log;
    sched_test_log_init(&log);
    now_t n = {.sched = sched, .log = &log, .id = 7};
    ck_assert(opal_sched_run_now(sched, now_fn, &n));
    ck_assert_int_eq(sched_test_log_count(&log), 1);
    ck_assert_int_eq(log.entries[0], 7);
    ck_assert_int_eq(n.progress_ran, 0);
    ck_assert(!n.nested_ran);
    ck_assert_int_eq(n.complete_rc, OPAL_ERR_BAD_PARAM);
    /* A task scheduled and not run yet goes first: run_now declines, and
     * the task then runs as it would have. */
    ck_assert_int_eq(schedule_mark(sched, &log, 1, 0, 0), OPAL_SUCCESS);
    n.id = 8;
    ck_assert(!opal_sched_run_now(sched, now_fn, &n));
    ck_assert_int_eq(sched_test_log_count(&log), 1);
    sched_test_drain(sched);
    ck_assert_int_eq(sched_test_log_count(&log), 2);
    ck_assert_int_eq(log.entries[1], 1);
    /* Idle again: it runs. */
    ck_assert(opal_sched_run_now(sched, now_fn, &n));
    ck_assert_int_eq(sched_test_log_count(&log), 3);
    ck_assert_int_eq(log.entries[2], 8);
    ck_assert(!opal_sched_run_now(NULL, now_fn, &n));
    ck_assert(!opal_sched_run_now(sched, NULL, &n));
    sched_test_finish(sched);
}
END_TEST

typedef struct body_now_t {
    now_t n;
    bool ran;
} body_now_t;

static int body_calls_run_now(opal_sched_task_t *task)
{
    body_now_t *b = *(body_now_t **) opal_sched_task_arg(task, sizeof(b));
    b->ran = opal_sched_run_now(b->n.sched, now_nested, &b->n);
    return OPAL_SUCCESS;
}

START_TEST(run_now_declines_inside_a_pass)
{
    opal_sched_t *sched = sched_test_start("fifo", NULL, NULL);
    sched_test_log_t log;
    sched_test_log_init(&log);
    body_now_t b = {.n = {.sched = sched, .log = &log}};
    opal_sched_task_t *t = NULL;
    ck_assert_int_eq(opal_sched_task_create(sched, body_calls_run_now, OPAL_SCHED_TASK_AUTO, &t),
                     OPAL_SUCCESS);
    *(body_now_t **) opal_sched_task_arg(t, sizeof(body_now_t *)) = &b;
    ck_assert_int_eq(opal_sched_task_schedule(t, 0), OPAL_SUCCESS);
    sched_test_drain(sched);
    ck_assert(!b.ran);
    ck_assert_int_eq(sched_test_log_count(&log), 0);
    sched_test_finish(sched);
}
END_TEST

START_TEST(policies_out_of_order_or_on_threads_never_run_now)
{
    const char *policies[] = {"prio", "pool"};
    for (int i = 0; i < 2; ++i) {
        opal_sched_t *sched = sched_test_start(policies[i], NULL, NULL);
        sched_test_log_t log;
        sched_test_log_init(&log);
        now_t n = {.sched = sched, .log = &log, .id = 1};
        ck_assert_msg(!opal_sched_run_now(sched, now_fn, &n), "%s", policies[i]);
        ck_assert_int_eq(sched_test_log_count(&log), 0);
        sched_test_finish(sched);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sched_policy");
    OPAL_TEST_ADD(s, fifo_runs_work_now_when_nothing_is_scheduled);
    OPAL_TEST_ADD(s, run_now_declines_inside_a_pass);
    OPAL_TEST_ADD(s, policies_out_of_order_or_on_threads_never_run_now);
    OPAL_TEST_ADD(s, fifo_is_the_default_policy);
    OPAL_TEST_ADD(s, unknown_policy_is_refused);
    OPAL_TEST_ADD(s, finalize_with_a_live_scheduler_is_refused);
    OPAL_TEST_ADD(s, prio_runs_the_most_urgent_class_first);
    OPAL_TEST_ADD(s, prio_runs_the_earliest_deadline_first_within_a_class);
    OPAL_TEST_ADD(s, prio_refuses_work_past_the_bound_of_a_class_and_counts_it);
    OPAL_TEST_ADD(s, prio_bound_counts_tasks_waiting_for_dependencies);
    OPAL_TEST_ADD(s, prio_counts_tasks_queued_run_and_late);
    OPAL_TEST_ADD(s, pool_runs_tasks_on_its_worker_threads);
    OPAL_TEST_ADD(s, pool_task_that_blocks_does_not_stall_the_others);
    TCase *tc = tcase_create("pool_with_2_to_8_workers_runs_every_task_once");
    tcase_add_loop_test(tc, pool_with_2_to_8_workers_runs_every_task_once, 2, 9);
    suite_add_tcase(s, tc);
    return opal_test_run(s);
}
