/* Threads and one-time initialisation: start/join hands back the result,
 * identities compare, misuse is refused, a once runs exactly once however
 * many threads race for it. */
#include "opal/opal_config.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "opal/threads/opal_once.h"
#include "opal/threads/opal_thread.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

enum { NTHREADS = 4 };

static void *double_it(void *arg)
{
    intptr_t v = (intptr_t) arg;
    return (void *) (2 * v);
}

START_TEST(start_and_join_return_the_result)
{
    opal_thread_t *t = OBJ_NEW(opal_thread_t);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(opal_thread_start(t, double_it, (void *) (intptr_t) 21), OPAL_SUCCESS);
    void *result = NULL;
    ck_assert_int_eq(opal_thread_join(t, &result), OPAL_SUCCESS);
    ck_assert_int_eq((intptr_t) result, 42);
    OBJ_RELEASE(t);
}
END_TEST

START_TEST(joined_thread_can_start_again)
{
    opal_thread_t t;
    OBJ_CONSTRUCT(&t, opal_thread_t);
    void *result = NULL;
    for (intptr_t i = 1; i <= 3; ++i) {
        ck_assert_int_eq(opal_thread_start(&t, double_it, (void *) i), OPAL_SUCCESS);
        ck_assert_int_eq(opal_thread_join(&t, &result), OPAL_SUCCESS);
        ck_assert_int_eq((intptr_t) result, 2 * i);
    }
    OBJ_DESTRUCT(&t);
}
END_TEST

/* Blocks until released, so a test can act on a thread known to run. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static bool gate_open;

static void *wait_at_gate(void *arg)
{
    pthread_mutex_lock(&gate_lock);
    while (!gate_open) {
        pthread_cond_wait(&gate_cond, &gate_lock);
    }
    pthread_mutex_unlock(&gate_lock);
    return arg;
}

static void set_gate(bool open)
{
    pthread_mutex_lock(&gate_lock);
    gate_open = open;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
}

START_TEST(start_while_running_is_busy)
{
    set_gate(false);
    opal_thread_t *t = OBJ_NEW(opal_thread_t);
    ck_assert_int_eq(opal_thread_start(t, wait_at_gate, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(opal_thread_start(t, wait_at_gate, NULL), OPAL_ERR_RESOURCE_BUSY);
    set_gate(true);
    ck_assert_int_eq(opal_thread_join(t, NULL), OPAL_SUCCESS);
    OBJ_RELEASE(t);
}
END_TEST

START_TEST(join_without_start_is_refused)
{
    opal_thread_t *t = OBJ_NEW(opal_thread_t);
    ck_assert_int_eq(opal_thread_join(t, NULL), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_thread_start(t, double_it, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(opal_thread_join(t, NULL), OPAL_SUCCESS);
    /* Joined once: a second join has nothing to wait for. */
    ck_assert_int_eq(opal_thread_join(t, NULL), OPAL_ERR_BAD_PARAM);
    OBJ_RELEASE(t);
}
END_TEST

START_TEST(start_without_function_is_refused)
{
    opal_thread_t *t = OBJ_NEW(opal_thread_t);
    ck_assert_int_eq(opal_thread_start(t, NULL, NULL), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_thread_join(t, NULL), OPAL_ERR_BAD_PARAM);
    OBJ_RELEASE(t);
}
END_TEST

/* What the thread learns about itself from inside. */
typedef struct {
    opal_thread_t *self;
    bool is_self;
    bool join_self_refused;
    opal_thread_id_t id;
} self_probe_t;

static void *probe_self(void *arg)
{
    self_probe_t *probe = arg;
    probe->is_self = opal_thread_is_self(probe->self);
    probe->id = opal_thread_self();
    probe->join_self_refused = OPAL_ERR_BAD_PARAM == opal_thread_join(probe->self, NULL);
    return NULL;
}

START_TEST(thread_knows_itself)
{
    self_probe_t probe = {.self = OBJ_NEW(opal_thread_t)};
    ck_assert_int_eq(opal_thread_start(probe.self, probe_self, &probe), OPAL_SUCCESS);
    /* The starter is not the started thread. */
    ck_assert(!opal_thread_is_self(probe.self));
    ck_assert(!opal_thread_id_equal(opal_thread_id(probe.self), opal_thread_self()));
    ck_assert_int_eq(opal_thread_join(probe.self, NULL), OPAL_SUCCESS);
    ck_assert(probe.is_self);
    ck_assert(probe.join_self_refused);
    ck_assert(opal_thread_id_equal(probe.id, opal_thread_id(probe.self)));
    OBJ_RELEASE(probe.self);
}
END_TEST

START_TEST(thread_ids_compare)
{
    ck_assert(opal_thread_id_equal(opal_thread_self(), opal_thread_self()));
    set_gate(false);
    opal_thread_t *a = OBJ_NEW(opal_thread_t), *b = OBJ_NEW(opal_thread_t);
    ck_assert_int_eq(opal_thread_start(a, wait_at_gate, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(opal_thread_start(b, wait_at_gate, NULL), OPAL_SUCCESS);
    /* Both alive at once, so their identities must differ. */
    ck_assert(!opal_thread_id_equal(opal_thread_id(a), opal_thread_id(b)));
    ck_assert(opal_thread_id_equal(opal_thread_id(a), opal_thread_id(a)));
    set_gate(true);
    ck_assert_int_eq(opal_thread_join(a, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(opal_thread_join(b, NULL), OPAL_SUCCESS);
    OBJ_RELEASE(a);
    OBJ_RELEASE(b);
}
END_TEST

static opal_atomic_int32_t finished_flag;

static void *finish_late(void *arg)
{
    usleep(20000);
    atomic_store(&finished_flag, 1);
    return arg;
}

START_TEST(release_without_join_waits_for_thread)
{
    atomic_store(&finished_flag, 0);
    opal_thread_t *t = OBJ_NEW(opal_thread_t);
    ck_assert_int_eq(opal_thread_start(t, finish_late, NULL), OPAL_SUCCESS);
    OBJ_RELEASE(t);
    ck_assert_int_eq(atomic_load(&finished_flag), 1);
}
END_TEST

START_TEST(set_name_truncates_long_names)
{
    opal_thread_t *t = OBJ_NEW(opal_thread_t);
    /* Nothing to name before the thread runs. */
    ck_assert_int_eq(opal_thread_set_name(t, "x"), OPAL_ERR_BAD_PARAM);
    set_gate(false);
    ck_assert_int_eq(opal_thread_start(t, wait_at_gate, NULL), OPAL_SUCCESS);
    int rc = opal_thread_set_name(t, "opal-a-very-long-thread-name");
#if defined(HAVE_PTHREAD_SETNAME_NP) && HAVE_PTHREAD_SETNAME_NP
    ck_assert_int_eq(rc, OPAL_SUCCESS);
    char name[32] = "";
    ck_assert_int_eq(pthread_getname_np(t->t_handle, name, sizeof(name)), 0);
    ck_assert_str_eq(name, "opal-a-very-lon");
#else
    ck_assert_int_eq(rc, OPAL_ERR_NOT_SUPPORTED);
#endif
    set_gate(true);
    ck_assert_int_eq(opal_thread_join(t, NULL), OPAL_SUCCESS);
    OBJ_RELEASE(t);
}
END_TEST

/* once: four threads released together all call it; the function runs
 * exactly once, and every caller returns only after it finished. */
static opal_once_t race_once = OPAL_ONCE_INIT;
static opal_atomic_int32_t once_runs;
static opal_atomic_int32_t once_finished;
static pthread_barrier_t once_barrier;

static void slow_init(void *context)
{
    int *value = context;
    atomic_fetch_add(&once_runs, 1);
    /* Long enough that the other threads arrive while it runs. */
    usleep(20000);
    *value = 1234;
    atomic_store(&once_finished, 1);
}

static int once_value;

static void *race_for_once(void *arg)
{
    (void) arg;
    pthread_barrier_wait(&once_barrier);
    opal_once(&race_once, slow_init, &once_value);
    /* Plain read: opal_once promises fn's writes are visible on return. */
    return (void *) (intptr_t) (once_value == 1234 && 1 == atomic_load(&once_finished));
}

START_TEST(once_runs_exactly_once_under_racing_threads)
{
    opal_once_reset(&race_once);
    atomic_store(&once_runs, 0);
    atomic_store(&once_finished, 0);
    once_value = 0;
    ck_assert_int_eq(pthread_barrier_init(&once_barrier, NULL, NTHREADS), 0);
    opal_thread_t threads[NTHREADS];
    for (int i = 0; i < NTHREADS; ++i) {
        OBJ_CONSTRUCT(&threads[i], opal_thread_t);
        ck_assert_int_eq(opal_thread_start(&threads[i], race_for_once, NULL), OPAL_SUCCESS);
    }
    for (int i = 0; i < NTHREADS; ++i) {
        void *saw_result = NULL;
        ck_assert_int_eq(opal_thread_join(&threads[i], &saw_result), OPAL_SUCCESS);
        ck_assert_msg(NULL != saw_result, "thread %d returned before the once finished", i);
        OBJ_DESTRUCT(&threads[i]);
    }
    pthread_barrier_destroy(&once_barrier);
    ck_assert_int_eq(atomic_load(&once_runs), 1);

    /* Later calls return without running it. */
    opal_once(&race_once, slow_init, &once_value);
    ck_assert_int_eq(atomic_load(&once_runs), 1);
}
END_TEST

static void count_call(void *context)
{
    ++*(int *) context;
}

START_TEST(once_reset_runs_again)
{
    opal_once_t once = OPAL_ONCE_INIT;
    int calls = 0;
    opal_once(&once, count_call, &calls);
    opal_once(&once, count_call, &calls);
    ck_assert_int_eq(calls, 1);
    opal_once_reset(&once);
    opal_once(&once, count_call, &calls);
    opal_once(&once, count_call, &calls);
    ck_assert_int_eq(calls, 2);
}
END_TEST

/* An initialiser that needs another once-initialised thing. */
static opal_once_t inner_once = OPAL_ONCE_INIT;

static void outer_init(void *context)
{
    opal_once(&inner_once, count_call, context);
    ++*(int *) context;
}

START_TEST(once_may_use_another_once)
{
    opal_once_t outer = OPAL_ONCE_INIT;
    int calls = 0;
    opal_once_reset(&inner_once);
    opal_once(&outer, outer_init, &calls);
    ck_assert_int_eq(calls, 2);
    opal_once(&inner_once, count_call, &calls);
    ck_assert_int_eq(calls, 2);
}
END_TEST

static Suite *thread_suite(void)
{
    Suite *s = suite_create("opal_thread");
    OPAL_TEST_ADD(s, start_and_join_return_the_result);
    OPAL_TEST_ADD(s, joined_thread_can_start_again);
    OPAL_TEST_ADD(s, start_while_running_is_busy);
    OPAL_TEST_ADD(s, join_without_start_is_refused);
    OPAL_TEST_ADD(s, start_without_function_is_refused);
    OPAL_TEST_ADD(s, thread_knows_itself);
    OPAL_TEST_ADD(s, thread_ids_compare);
    OPAL_TEST_ADD(s, release_without_join_waits_for_thread);
    OPAL_TEST_ADD(s, set_name_truncates_long_names);
    OPAL_TEST_ADD(s, once_runs_exactly_once_under_racing_threads);
    OPAL_TEST_ADD(s, once_reset_runs_again);
    OPAL_TEST_ADD(s, once_may_use_another_once);
    return s;
}

int main(void)
{
    int rc = opal_test_run(thread_suite());
    opal_class_finalize();
    return rc;
}
