/*
 * One-time initialisation, like pthread_once but with a context argument
 * and a reset for the finalize-then-init-again cycle:
 *
 *   static opal_once_t table_once = OPAL_ONCE_INIT;
 *   opal_once(&table_once, build_table, &table);
 *
 * The first caller runs the function; callers arriving while it runs wait
 * until it has returned; every later caller returns at once (one acquire
 * load) and sees everything the function wrote.
 */
#ifndef OPAL_THREADS_OPAL_ONCE_H
#define OPAL_THREADS_OPAL_ONCE_H

#include "opal/opal_config.h"

#include "opal/threads/opal_atomic.h"

typedef void (*opal_once_fn_t)(void *context);

enum { OPAL_ONCE_NOT_RUN = 0, OPAL_ONCE_RUNNING = 1, OPAL_ONCE_DONE = 2 };

typedef struct opal_once_t {
    opal_atomic_int32_t once_state;
} opal_once_t;

#define OPAL_ONCE_INIT                                                                             \
    {                                                                                              \
        .once_state = OPAL_ONCE_NOT_RUN                                                            \
    }

/* The slow path of opal_once(): runs fn or waits for the thread that does. */
OPAL_DECLSPEC void opal_once_run(opal_once_t *once, opal_once_fn_t fn, void *context);

/* Runs fn(context) if no call on this once has run it yet (since the last
 * reset); returns after it has run, whoever ran it. fn must not call
 * opal_once on the same once (it would wait for itself). */
static inline void opal_once(opal_once_t *once, opal_once_fn_t fn, void *context)
{
    /* Pairs with the release store of OPAL_ONCE_DONE in opal_once_run():
     * seeing DONE means seeing what fn wrote. */
    if (OPAL_LIKELY(OPAL_ONCE_DONE ==
                    atomic_load_explicit(&once->once_state, memory_order_acquire))) {
        return;
    }
    opal_once_run(once, fn, context);
}

/* Arms the once again, so the next opal_once runs its function. Only while
 * no thread is inside opal_once on it (e.g. in a finalize). */
static inline void opal_once_reset(opal_once_t *once)
{
    atomic_store_explicit(&once->once_state, OPAL_ONCE_NOT_RUN, memory_order_relaxed);
}

#endif /* OPAL_THREADS_OPAL_ONCE_H */
