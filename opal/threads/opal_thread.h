/*
 * Threads: an OBJ_CLASS wrapper over POSIX threads that starts a function
 * with an argument and hands its result back at join, plus thread
 * identities that compare for equality.
 *
 *   opal_thread_t *t = OBJ_NEW(opal_thread_t);
 *   opal_thread_start(t, worker, &job);
 *   opal_thread_join(t, &result);
 *   OBJ_RELEASE(t);
 *
 * Starting a thread does not turn on opal_using_threads(): a program whose
 * extra threads call into opal says so with opal_set_using_threads(true)
 * before starting them.
 */
#ifndef OPAL_THREADS_OPAL_THREAD_H
#define OPAL_THREADS_OPAL_THREAD_H

#include "opal/opal_config.h"

#include <pthread.h>
#include <stdbool.h>

#include "opal/class/opal_object.h"

/* The body of a thread: receives the argument given to opal_thread_start()
 * and returns the value opal_thread_join() hands back. */
typedef void *(*opal_thread_fn_t)(void *arg);

/* Identifies a running thread; compare with opal_thread_id_equal(). */
typedef pthread_t opal_thread_id_t;

typedef struct opal_thread_t {
    opal_object_t super;
    /* Read once by the new thread before it calls t_run; after that the
     * thread touches this object only if its function does. */
    opal_thread_fn_t t_run;
    void *t_arg;
    pthread_t t_handle;
    /* Written by both the starter (after pthread_create) and the thread
     * itself (before t_run), so opal_thread_is_self() is right inside the
     * thread even before pthread_create has returned in the starter. */
    _Atomic(pthread_t) t_id;
    /* Started and not yet joined: set before the thread is created (so the
     * thread sees it) and cleared by the join. */
    bool t_running;
} opal_thread_t;
OBJ_CLASS_DECLARATION(opal_thread_t);

/* Starts fn(arg) in a new thread. Returns OPAL_SUCCESS,
 * OPAL_ERR_RESOURCE_BUSY when t was started and not joined,
 * OPAL_ERR_BAD_PARAM for a NULL fn, or OPAL_ERR_OUT_OF_RESOURCE when the
 * system cannot create another thread. Releasing a started thread that was
 * never joined waits for it to finish (its result is dropped). */
OPAL_DECLSPEC int opal_thread_start(opal_thread_t *t, opal_thread_fn_t fn, void *arg);

/* Waits for the thread and stores what its function returned in *result
 * (result may be NULL). The object may be started again afterwards.
 * Returns OPAL_ERR_BAD_PARAM when t is not running or is the caller. */
OPAL_DECLSPEC int opal_thread_join(opal_thread_t *t, void **result);

/* Names the running thread t for debuggers and top (at most 15 characters
 * are kept). OPAL_ERR_NOT_SUPPORTED where the system cannot name threads. */
OPAL_DECLSPEC int opal_thread_set_name(opal_thread_t *t, const char *name);

/* The calling thread's identity. */
static inline opal_thread_id_t opal_thread_self(void)
{
    return pthread_self();
}

static inline bool opal_thread_id_equal(opal_thread_id_t a, opal_thread_id_t b)
{
    return 0 != pthread_equal(a, b);
}

/* The identity of the thread t runs; meaningful once t has started. */
static inline opal_thread_id_t opal_thread_id(opal_thread_t *t)
{
    /* Relaxed: whoever may ask has synchronised with the start (through
     * pthread_create or the return of opal_thread_start), which ordered
     * the store before the question. */
    return atomic_load_explicit(&t->t_id, memory_order_relaxed);
}

/* True when the caller is the thread t runs. */
static inline bool opal_thread_is_self(opal_thread_t *t)
{
    return t->t_running && opal_thread_id_equal(opal_thread_id(t), pthread_self());
}

#endif /* OPAL_THREADS_OPAL_THREAD_H */
