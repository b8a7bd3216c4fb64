#include "opal/opal_config.h"

#include <pthread.h>

#include "opal/threads/opal_once.h"

/* One lock and condition for every once: they guard only the state
 * transitions (never the function, which runs unlocked so that it may use
 * other onces) and are touched only until each once is done. */
static pthread_mutex_t once_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t once_done = PTHREAD_COND_INITIALIZER;

void opal_once_run(opal_once_t *once, opal_once_fn_t fn, void *context)
{
    pthread_mutex_lock(&once_lock);
    for (;;) {
        /* Relaxed under the lock: every transition is made holding it. */
        int32_t state = atomic_load_explicit(&once->once_state, memory_order_relaxed);
        if (OPAL_ONCE_DONE == state) {
            break;
        }
        if (OPAL_ONCE_NOT_RUN == state) {
            atomic_store_explicit(&once->once_state, OPAL_ONCE_RUNNING, memory_order_relaxed);
            pthread_mutex_unlock(&once_lock);
            fn(context);
            pthread_mutex_lock(&once_lock);
            /* Release pairs with the acquire load in opal_once(): the fast
             * path sees fn's writes. Waiters see them through the lock. */
            atomic_store_explicit(&once->once_state, OPAL_ONCE_DONE, memory_order_release);
            pthread_cond_broadcast(&once_done);
            break;
        }
        pthread_cond_wait(&once_done, &once_lock);
    }
    pthread_mutex_unlock(&once_lock);
}
