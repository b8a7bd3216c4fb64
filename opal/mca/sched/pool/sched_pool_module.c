/*
 * sched/pool operations: N workers per scheduler, each with its own queue
 * (a task made ready by a worker stays on that worker: its data is in
 * that core's cache), an idle worker stealing from the others before it
 * sleeps.
 *
 * Sleeping without losing a wake-up: a worker going to sleep raises
 * p_sleepers and then reads p_queued; an enqueue raises p_queued and then
 * reads p_sleepers. Both sequentially consistent, so at least one of the
 * two sees the other: either the worker finds the task, or the enqueuer
 * signals (under p_sleep_lock, which the worker holds until it waits).
 *
 * Lock order: p_sleep_lock and a worker's w_lock are never held together.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>

#include "opal/mca/sched/base/base.h"
#include "opal/mca/sched/pool/sched_pool.h"
#include "opal/threads/opal_mutex.h"
#include "opal/threads/opal_thread.h"
#include "opal/util/opal_error.h"

struct pool_state_t;

typedef struct pool_worker_t {
    opal_mutex_t w_lock;
    opal_sched_task_t *w_head;
    opal_sched_task_t *w_tail;
    opal_thread_t *w_thread;
    struct pool_state_t *w_pool;
    unsigned int w_index;
} pool_worker_t;

typedef struct pool_state_t {
    unsigned int p_nworkers;
    pool_worker_t *p_workers;
    sched_pool_binding_t *p_binding;
    opal_mutex_t p_sleep_lock;
    opal_condition_t p_sleep_cond;
    opal_atomic_int32_t p_sleepers;
    /* Tasks enqueued and not yet taken (raised before the push, so it may
     * briefly count a task not yet visible: a worker then looks again). */
    opal_atomic_int64_t p_queued;
    opal_atomic_bool_t p_stop;
    /* Round robin for tasks made ready outside the workers. */
    opal_atomic_uint32_t p_next;
} pool_state_t;

/* Pools alive in the process, and whether threads were on before the
 * first: the last pool to go restores that (pools may end in any order). */
static opal_atomic_int32_t pool_live = 0;
static bool pool_threads_before = false;

/* Empty looks at the queues before a worker sleeps. */
#define SCHED_POOL_SPIN 256

/* The worker the calling thread is, if any. Initial-exec (a slot of the
 * static TLS block, no __tls_get_addr) although this is a plugin: with the
 * default dynamic model, a process that dlclose'd the plugin crashed
 * LeakSanitizer's tracer at exit ("Tracer caught signal 11", a read at
 * 0x378) in some layouts of the ASan build: rpc_engine_test's pool suite
 * failed three cases in every run of one build tree and none of another
 * with the same sources. 8 bytes of glibc's surplus for dlopen'd modules. */
static _Thread_local pool_worker_t *pool_self __attribute__((tls_model("initial-exec")));

/* Takes the oldest task of w's queue. A thief only tries the lock: a
 * victim whose lock is busy is skipped (p_queued makes it look again). */
static opal_sched_task_t *worker_pop(pool_worker_t *w, bool steal)
{
    if (steal) {
        if (!opal_mutex_trylock(&w->w_lock)) {
            return NULL;
        }
    } else {
        opal_mutex_lock(&w->w_lock);
    }
    opal_sched_task_t *task = w->w_head;
    if (NULL != task) {
        w->w_head = task->t_next;
        if (NULL == w->w_head) {
            w->w_tail = NULL;
        }
    }
    opal_mutex_unlock(&w->w_lock);
    return task;
}

/* Own queue first, then the others', starting after our own. */
static opal_sched_task_t *pool_take(pool_state_t *p, pool_worker_t *self)
{
    for (unsigned int i = 0; i < p->p_nworkers; ++i) {
        pool_worker_t *w = &p->p_workers[(self->w_index + i) % p->p_nworkers];
        opal_sched_task_t *task = worker_pop(w, w != self);
        if (NULL != task) {
            atomic_fetch_sub_explicit(&p->p_queued, 1, memory_order_relaxed);
            return task;
        }
    }
    return NULL;
}

static void *worker_main(void *arg)
{
    pool_worker_t *self = arg;
    pool_state_t *p = self->w_pool;
    pool_self = self;
    mca_sched_pool_binding_apply(p->p_binding, self->w_index);
    unsigned int idle = 0;
    while (!atomic_load_explicit(&p->p_stop, memory_order_acquire)) {
        opal_sched_task_t *task = pool_take(p, self);
        if (NULL != task) {
            mca_sched_base_task_run(task);
            idle = 0;
            continue;
        }
        /* Look again a few times before sleeping: a wake-up costs two
         * system calls and tens of microseconds, while the next task of a
         * busy producer is usually a few hundred nanoseconds away. */
        if (idle++ < SCHED_POOL_SPIN) {
            opal_atomic_pause();
            continue;
        }
        idle = 0;
        opal_mutex_lock(&p->p_sleep_lock);
        atomic_fetch_add_explicit(&p->p_sleepers, 1, memory_order_seq_cst);
        if (0 == atomic_load_explicit(&p->p_queued, memory_order_seq_cst) &&
            !atomic_load_explicit(&p->p_stop, memory_order_acquire)) {
            opal_condition_wait(&p->p_sleep_cond, &p->p_sleep_lock);
        }
        atomic_fetch_sub_explicit(&p->p_sleepers, 1, memory_order_relaxed);
        opal_mutex_unlock(&p->p_sleep_lock);
    }
    pool_self = NULL;
    return NULL;
}

static void pool_enqueue(void *state, opal_sched_task_t *task)
{
    pool_state_t *p = state;
    pool_worker_t *w = pool_self;
    if (NULL == w || w->w_pool != p) {
        uint32_t next = atomic_fetch_add_explicit(&p->p_next, 1, memory_order_relaxed);
        w = &p->p_workers[next % p->p_nworkers];
    }
    task->t_next = NULL;
    atomic_fetch_add_explicit(&p->p_queued, 1, memory_order_seq_cst);
    opal_mutex_lock(&w->w_lock);
    if (NULL == w->w_tail) {
        w->w_head = task;
    } else {
        w->w_tail->t_next = task;
    }
    w->w_tail = task;
    opal_mutex_unlock(&w->w_lock);
    if (atomic_load_explicit(&p->p_sleepers, memory_order_seq_cst) > 0) {
        opal_mutex_lock(&p->p_sleep_lock);
        opal_condition_signal(&p->p_sleep_cond);
        opal_mutex_unlock(&p->p_sleep_lock);
    }
}

static void pool_stop(pool_state_t *p, unsigned int started)
{
    atomic_store_explicit(&p->p_stop, true, memory_order_release);
    opal_mutex_lock(&p->p_sleep_lock);
    opal_condition_broadcast(&p->p_sleep_cond);
    opal_mutex_unlock(&p->p_sleep_lock);
    for (unsigned int i = 0; i < started; ++i) {
        (void) opal_thread_join(p->p_workers[i].w_thread, NULL);
    }
}

static void pool_free(pool_state_t *p)
{
    for (unsigned int i = 0; i < p->p_nworkers; ++i) {
        if (NULL != p->p_workers[i].w_thread) {
            OBJ_RELEASE(p->p_workers[i].w_thread);
        }
        OBJ_DESTRUCT(&p->p_workers[i].w_lock);
    }
    free(p->p_workers);
    mca_sched_pool_binding_free(p->p_binding);
    OBJ_DESTRUCT(&p->p_sleep_cond);
    OBJ_DESTRUCT(&p->p_sleep_lock);
    if (1 == atomic_fetch_sub_explicit(&pool_live, 1, memory_order_acq_rel) &&
        !pool_threads_before) {
        (void) opal_set_using_threads(false);
    }
    free(p);
}

static int pool_attach(opal_sched_t *sched, void **state)
{
    (void) sched;
    pool_state_t *p = calloc(1, sizeof(*p));
    if (NULL == p) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    OBJ_CONSTRUCT(&p->p_sleep_lock, opal_mutex_t);
    OBJ_CONSTRUCT(&p->p_sleep_cond, opal_condition_t);
    /* The engine's locks are taken only when threads are on: turn them on
     * before the first worker exists. */
    bool before = opal_set_using_threads(true);
    if (0 == atomic_fetch_add_explicit(&pool_live, 1, memory_order_acq_rel)) {
        pool_threads_before = before;
    }
    unsigned int n = mca_sched_pool_config.workers;
    int rc = mca_sched_pool_binding_plan(mca_sched_pool_config.bind, &n, &p->p_binding);
    if (OPAL_SUCCESS != rc) {
        pool_free(p);
        return rc;
    }
    p->p_workers = calloc(n, sizeof(*p->p_workers));
    if (NULL == p->p_workers) {
        pool_free(p);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    p->p_nworkers = n;
    for (unsigned int i = 0; i < n; ++i) {
        OBJ_CONSTRUCT(&p->p_workers[i].w_lock, opal_mutex_t);
        p->p_workers[i].w_pool = p;
        p->p_workers[i].w_index = i;
    }
    for (unsigned int i = 0; i < n; ++i) {
        pool_worker_t *w = &p->p_workers[i];
        w->w_thread = OBJ_NEW(opal_thread_t);
        rc = NULL == w->w_thread ? OPAL_ERR_OUT_OF_RESOURCE
                                 : opal_thread_start(w->w_thread, worker_main, w);
        if (OPAL_SUCCESS != rc) {
            pool_stop(p, i);
            pool_free(p);
            return rc;
        }
        /* Linux keeps 15 characters of a thread's name. */
        char name[32];
        snprintf(name, sizeof(name), "sched-pool-%u", i);
        (void) opal_thread_set_name(w->w_thread, name);
    }
    *state = p;
    return OPAL_SUCCESS;
}

static void pool_detach(void *state)
{
    pool_state_t *p = state;
    pool_stop(p, p->p_nworkers);
    pool_free(p);
}

const mca_sched_base_module_t mca_sched_pool_module = {
    .sched_attach = pool_attach,
    .sched_detach = pool_detach,
    .sched_enqueue = pool_enqueue,
};
