/*
 * Mutexes and condition variables, and the process-wide "are threads in
 * use" switch that lets single-threaded programs skip locking.
 *
 * opal_mutex_lock() always locks. OPAL_THREAD_LOCK() locks only when
 * opal_using_threads() is true: the pattern for code on hot paths that
 * must be correct with threads and free without them.
 *
 * In debug builds (OPAL_ENABLE_DEBUG) an opal_mutex_t checks its use: the
 * owner locking it again (which would deadlock) or a thread unlocking a
 * mutex it does not hold aborts with a message instead.
 */
#ifndef OPAL_THREADS_OPAL_MUTEX_H
#define OPAL_THREADS_OPAL_MUTEX_H

#include "opal/opal_config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "opal/class/opal_object.h"

/* True once the program has said it runs more than one thread that calls
 * into opal. Read relaxed: it is set before the threads start (the thread
 * creation is the synchronisation). */
OPAL_DECLSPEC extern opal_atomic_bool_t opal_uses_threads;

static inline bool opal_using_threads(void)
{
    return atomic_load_explicit(&opal_uses_threads, memory_order_relaxed);
}

/* Turns locking on or off; returns the previous setting. Call before
 * starting (or after joining) the threads. */
OPAL_DECLSPEC bool opal_set_using_threads(bool have);

typedef struct opal_mutex_t {
    opal_object_t super;
    pthread_mutex_t m_lock;
} opal_mutex_t;
OBJ_CLASS_DECLARATION(opal_mutex_t);

/* A recursive mutex: the owner may lock it again. */
typedef opal_mutex_t opal_recursive_mutex_t;
OBJ_CLASS_DECLARATION(opal_recursive_mutex_t);

/* Aborts naming the operation and the pthread error: the debug checks
 * end here. */
OPAL_DECLSPEC void opal_mutex_fatal(const char *operation, int error) __attribute__((noreturn));

#if OPAL_ENABLE_DEBUG
#define OPAL_MUTEX_CHECK(operation, call)       \
    do {                                        \
        int rc_ = (call);                       \
        if (OPAL_UNLIKELY(0 != rc_)) {          \
            opal_mutex_fatal((operation), rc_); \
        }                                       \
    } while (0)
#else
#define OPAL_MUTEX_CHECK(operation, call) ((void) (call))
#endif

static inline void opal_mutex_lock(opal_mutex_t *m)
{
    OPAL_MUTEX_CHECK("opal_mutex_lock", pthread_mutex_lock(&m->m_lock));
}

static inline void opal_mutex_unlock(opal_mutex_t *m)
{
    OPAL_MUTEX_CHECK("opal_mutex_unlock", pthread_mutex_unlock(&m->m_lock));
}

/* True when the lock was taken. */
static inline bool opal_mutex_trylock(opal_mutex_t *m)
{
    return 0 == pthread_mutex_trylock(&m->m_lock);
}

#define OPAL_THREAD_LOCK(m)              \
    do {                                 \
        if (opal_using_threads()) {      \
            opal_mutex_lock(m);          \
        }                                \
    } while (0)

#define OPAL_THREAD_UNLOCK(m)            \
    do {                                 \
        if (opal_using_threads()) {      \
            opal_mutex_unlock(m);        \
        }                                \
    } while (0)

/*
 * Read-modify-writes that are atomic only when opal_using_threads(), as
 * OPAL_THREAD_LOCK locks only then. Without threads they are a plain load
 * and store. On x86 a locked instruction first waits for every earlier
 * store to reach the cache, so one just after a store into shared memory
 * (btl/sm handing a message over) waits for that line to come back from
 * the peer's core: the largest single cost of a null RPC's send path
 * (docs/rpc.md). The memory orders apply only with threads; without them
 * program order is all a single thread needs.
 */
static inline int32_t opal_thread_fetch_add_32(_Atomic int32_t *addr, int32_t delta,
                                               memory_order order)
{
    if (opal_using_threads()) {
        return atomic_fetch_add_explicit(addr, delta, order);
    }
    int32_t old = atomic_load_explicit(addr, memory_order_relaxed);
    atomic_store_explicit(addr, (int32_t) ((uint32_t) old + (uint32_t) delta),
                          memory_order_relaxed);
    return old;
}

static inline uint32_t opal_thread_fetch_add_u32(_Atomic uint32_t *addr, uint32_t delta,
                                                 memory_order order)
{
    if (opal_using_threads()) {
        return atomic_fetch_add_explicit(addr, delta, order);
    }
    uint32_t old = atomic_load_explicit(addr, memory_order_relaxed);
    atomic_store_explicit(addr, old + delta, memory_order_relaxed);
    return old;
}

static inline uint32_t opal_thread_fetch_sub_u32(_Atomic uint32_t *addr, uint32_t delta,
                                                 memory_order order)
{
    if (opal_using_threads()) {
        return atomic_fetch_sub_explicit(addr, delta, order);
    }
    uint32_t old = atomic_load_explicit(addr, memory_order_relaxed);
    atomic_store_explicit(addr, old - delta, memory_order_relaxed);
    return old;
}

static inline uint64_t opal_thread_fetch_add_u64(_Atomic uint64_t *addr, uint64_t delta,
                                                 memory_order order)
{
    if (opal_using_threads()) {
        return atomic_fetch_add_explicit(addr, delta, order);
    }
    uint64_t old = atomic_load_explicit(addr, memory_order_relaxed);
    atomic_store_explicit(addr, old + delta, memory_order_relaxed);
    return old;
}

/* Compare-and-swap; on failure *expected receives the current value. */
static inline bool opal_thread_cas_u32(_Atomic uint32_t *addr, uint32_t *expected, uint32_t desired,
                                       memory_order success, memory_order failure)
{
    if (opal_using_threads()) {
        return atomic_compare_exchange_strong_explicit(addr, expected, desired, success, failure);
    }
    uint32_t current = atomic_load_explicit(addr, memory_order_relaxed);
    if (current != *expected) {
        *expected = current;
        return false;
    }
    atomic_store_explicit(addr, desired, memory_order_relaxed);
    return true;
}

/* Swap, returning the old value. */
static inline bool opal_thread_exchange_bool(_Atomic bool *addr, bool value, memory_order order)
{
    if (opal_using_threads()) {
        return atomic_exchange_explicit(addr, value, order);
    }
    bool old = atomic_load_explicit(addr, memory_order_relaxed);
    atomic_store_explicit(addr, value, memory_order_relaxed);
    return old;
}

/* A condition variable on CLOCK_MONOTONIC. */
typedef struct opal_condition_t {
    opal_object_t super;
    pthread_cond_t c_cond;
} opal_condition_t;
OBJ_CLASS_DECLARATION(opal_condition_t);

/* Waits with m held; returns with m held. Spurious wake-ups happen: callers
 * loop on their predicate. */
static inline void opal_condition_wait(opal_condition_t *c, opal_mutex_t *m)
{
    OPAL_MUTEX_CHECK("opal_condition_wait", pthread_cond_wait(&c->c_cond, &m->m_lock));
}

/* Waits at most until the monotonic time deadline_ns (opal_timer_ns()
 * units). Returns OPAL_SUCCESS when woken, OPAL_ERR_TIMEOUT at the
 * deadline. */
OPAL_DECLSPEC int opal_condition_timedwait(opal_condition_t *c, opal_mutex_t *m,
                                           uint64_t deadline_ns);

static inline void opal_condition_signal(opal_condition_t *c)
{
    pthread_cond_signal(&c->c_cond);
}

static inline void opal_condition_broadcast(opal_condition_t *c)
{
    pthread_cond_broadcast(&c->c_cond);
}

#endif /* OPAL_THREADS_OPAL_MUTEX_H */
