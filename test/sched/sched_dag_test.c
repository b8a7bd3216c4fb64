/*
 * A million tasks in random DAGs, under each policy: every task runs
 * exactly once, and only after every task it depends on ran.
 */
#include "opal/opal_config.h"

#include <check.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "opal/mca/sched/sched.h"
#include "opal/util/opal_error.h"
#include "test/sched/sched_test_support.h"
#include "test/support/opal_test.h"

/* Dependencies are drawn among the last WINDOW tasks created (kept alive
 * by an extra reference), at most MAX_DEPS per task. */
#define WINDOW   64
#define MAX_DEPS 4

typedef struct dag_t {
    size_t ntasks;
    /* Per task: times run, and its place in the global run order. */
    _Atomic uint32_t *runs;
    _Atomic uint64_t *order;
    _Atomic uint64_t next_order;
    /* Per task: its dependencies' indices (-1: none). */
    int64_t (*deps)[MAX_DEPS];
} dag_t;

typedef struct dag_arg_t {
    dag_t *dag;
    size_t index;
} dag_arg_t;

static int dag_body(opal_sched_task_t *task)
{
    dag_arg_t *a = opal_sched_task_arg(task, sizeof(*a));
    dag_t *dag = a->dag;
    atomic_fetch_add_explicit(&dag->runs[a->index], 1, memory_order_relaxed);
    atomic_store_explicit(&dag->order[a->index],
                          atomic_fetch_add_explicit(&dag->next_order, 1, memory_order_relaxed),
                          memory_order_relaxed);
    return OPAL_SUCCESS;
}

START_TEST(random_dag_runs_every_task_once_after_its_dependencies)
{
    opal_sched_t *sched = sched_test_start(sched_test_policies[_i], NULL, NULL);
    dag_t dag = {.ntasks = opal_test_iterations(1000000)};
    dag.runs = calloc(dag.ntasks, sizeof(*dag.runs));
    dag.order = calloc(dag.ntasks, sizeof(*dag.order));
    dag.deps = malloc(dag.ntasks * sizeof(*dag.deps));
    ck_assert(NULL != dag.runs && NULL != dag.order && NULL != dag.deps);
    opal_sched_task_t *window[WINDOW] = {NULL};
    unsigned int seed = 12345u + (unsigned int) _i;
    /* Check records every assertion it passes (a write each): the loops
     * below check with plain ifs and assert once on the first failure. */
    int rc = OPAL_SUCCESS;
    for (size_t i = 0; i < dag.ntasks && OPAL_SUCCESS == rc; ++i) {
        opal_sched_task_t *t = NULL;
        rc = opal_sched_task_create(sched, dag_body, OPAL_SCHED_TASK_AUTO, &t);
        if (OPAL_SUCCESS != rc) {
            break;
        }
        *(dag_arg_t *) opal_sched_task_arg(t, sizeof(dag_arg_t)) = (dag_arg_t){&dag, i};
        int ndeps = i > 0 ? rand_r(&seed) % (MAX_DEPS + 1) : 0;
        opal_sched_task_t *deps[MAX_DEPS];
        for (int d = 0; d < MAX_DEPS; ++d) {
            dag.deps[i][d] = -1;
        }
        for (int d = 0; d < ndeps; ++d) {
            size_t back = 1 + (size_t) rand_r(&seed) % (i < WINDOW ? i : WINDOW);
            dag.deps[i][d] = (int64_t) (i - back);
            deps[d] = window[(i - back) % WINDOW];
        }
        /* Some dependencies may have completed already: allowed. The same
         * one drawn twice is one more edge, also allowed. */
        rc = opal_sched_task_depend(t, ndeps, deps);
        if (NULL != window[i % WINDOW]) {
            opal_sched_task_release(window[i % WINDOW]);
        }
        opal_sched_task_retain(t);
        window[i % WINDOW] = t;
        if (OPAL_SUCCESS == rc) {
            rc = opal_sched_task_schedule(t, 0);
        }
        if (0 == i % 1024) {
            (void) opal_sched_progress(sched);
        }
    }
    ck_assert_int_eq(rc, OPAL_SUCCESS);
    sched_test_drain(sched);
    for (size_t w = 0; w < WINDOW; ++w) {
        if (NULL != window[w]) {
            opal_sched_task_release(window[w]);
        }
    }
    for (size_t i = 0; i < dag.ntasks; ++i) {
        uint32_t runs = atomic_load(&dag.runs[i]);
        if (1 != runs) {
            ck_abort_msg("task %zu ran %u times", i, runs);
        }
        for (int d = 0; d < MAX_DEPS && dag.deps[i][d] >= 0; ++d) {
            size_t j = (size_t) dag.deps[i][d];
            if (atomic_load(&dag.order[j]) >= atomic_load(&dag.order[i])) {
                ck_abort_msg("task %zu ran before its dependency %zu", i, j);
            }
        }
    }
    free(dag.runs);
    free(dag.order);
    free(dag.deps);
    sched_test_finish(sched);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sched_dag");
    TCase *tc = tcase_create("random_dag_runs_every_task_once_after_its_dependencies");
    tcase_add_loop_test(tc, random_dag_runs_every_task_once_after_its_dependencies, 0,
                        SCHED_TEST_NPOLICIES);
    /* A million tasks under TSan take their time on a shared machine. */
    tcase_set_timeout(tc, 900);
    suite_add_tcase(s, tc);
    return opal_test_run(s);
}
