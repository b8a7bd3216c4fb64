#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opal/threads/opal_mutex.h"
#include "opal/util/opal_error.h"

opal_atomic_bool_t opal_uses_threads = false;

bool opal_set_using_threads(bool have)
{
    return atomic_exchange_explicit(&opal_uses_threads, have, memory_order_relaxed);
}

void opal_mutex_fatal(const char *operation, int error)
{
    fprintf(stderr, "%s: %s (%s)\n", operation, strerror(error),
            EDEADLK == error ? "the owner locked it again"
            : EPERM == error ? "the caller does not hold it"
                             : "bad mutex or condition");
    abort();
}

static void mutex_construct(opal_mutex_t *m)
{
#if OPAL_ENABLE_DEBUG
    /* Error checking turns a self-deadlock or a foreign unlock into an
     * error code that opal_mutex_lock/unlock report. */
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
    pthread_mutex_init(&m->m_lock, &attr);
    pthread_mutexattr_destroy(&attr);
#else
    pthread_mutex_init(&m->m_lock, NULL);
#endif
}

static void recursive_mutex_construct(opal_mutex_t *m)
{
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&m->m_lock, &attr);
    pthread_mutexattr_destroy(&attr);
}

static void mutex_destruct(opal_mutex_t *m)
{
    pthread_mutex_destroy(&m->m_lock);
}

OBJ_CLASS_INSTANCE(opal_mutex_t, opal_object_t, mutex_construct, mutex_destruct);
OBJ_CLASS_INSTANCE(opal_recursive_mutex_t, opal_object_t, recursive_mutex_construct,
                   mutex_destruct);

static void condition_construct(opal_condition_t *c)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&c->c_cond, &attr);
    pthread_condattr_destroy(&attr);
}

static void condition_destruct(opal_condition_t *c)
{
    pthread_cond_destroy(&c->c_cond);
}

OBJ_CLASS_INSTANCE(opal_condition_t, opal_object_t, condition_construct, condition_destruct);

int opal_condition_timedwait(opal_condition_t *c, opal_mutex_t *m, uint64_t deadline_ns)
{
    struct timespec ts = {.tv_sec = (time_t) (deadline_ns / 1000000000u),
                          .tv_nsec = (long) (deadline_ns % 1000000000u)};
    int rc = pthread_cond_timedwait(&c->c_cond, &m->m_lock, &ts);
    if (ETIMEDOUT == rc) {
        return OPAL_ERR_TIMEOUT;
    }
    OPAL_MUTEX_CHECK("opal_condition_timedwait", rc);
    return OPAL_SUCCESS;
}
