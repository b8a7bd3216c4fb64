#include "opal/opal_config.h"

#include <errno.h>
#include <string.h>

#include "opal/threads/opal_thread.h"
#include "opal/util/opal_error.h"

static void thread_construct(opal_thread_t *t)
{
    t->t_run = NULL;
    t->t_arg = NULL;
    t->t_running = false;
    atomic_init(&t->t_id, pthread_self());
}

static void thread_destruct(opal_thread_t *t)
{
    /* Detaching instead would leave a thread that may still be about to
     * read t_run/t_arg from freed memory. */
    if (t->t_running) {
        (void) opal_thread_join(t, NULL);
    }
}

OBJ_CLASS_INSTANCE(opal_thread_t, opal_object_t, thread_construct, thread_destruct);

static void *thread_trampoline(void *arg)
{
    opal_thread_t *t = (opal_thread_t *) arg;
    opal_thread_fn_t fn = t->t_run;
    void *fn_arg = t->t_arg;

    atomic_store_explicit(&t->t_id, pthread_self(), memory_order_relaxed);
    return fn(fn_arg);
}

int opal_thread_start(opal_thread_t *t, opal_thread_fn_t fn, void *arg)
{
    if (NULL == fn) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (t->t_running) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    t->t_run = fn;
    t->t_arg = arg;
    t->t_running = true;

    int rc = pthread_create(&t->t_handle, NULL, thread_trampoline, t);
    if (0 != rc) {
        t->t_running = false;
        return EAGAIN == rc ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_ERROR;
    }
    /* The same value the thread stores; whichever lands last, the caller
     * of opal_thread_id() after this return sees the right identity. */
    atomic_store_explicit(&t->t_id, t->t_handle, memory_order_relaxed);
    return OPAL_SUCCESS;
}

int opal_thread_join(opal_thread_t *t, void **result)
{
    if (!t->t_running || opal_thread_is_self(t)) {
        return OPAL_ERR_BAD_PARAM;
    }
    void *value = NULL;
    int rc = pthread_join(t->t_handle, &value);
    if (0 != rc) {
        return OPAL_ERROR;
    }
    t->t_running = false;
    if (NULL != result) {
        *result = value;
    }
    return OPAL_SUCCESS;
}

int opal_thread_set_name(opal_thread_t *t, const char *name)
{
    if (NULL == name || !t->t_running) {
        return OPAL_ERR_BAD_PARAM;
    }
#if defined(HAVE_PTHREAD_SETNAME_NP) && HAVE_PTHREAD_SETNAME_NP
    /* Linux keeps 15 characters and refuses longer names (ERANGE), so
     * truncate rather than fail over a cosmetic detail. */
    char short_name[16];
    strncpy(short_name, name, sizeof(short_name) - 1);
    short_name[sizeof(short_name) - 1] = '\0';
    return 0 == pthread_setname_np(t->t_handle, short_name) ? OPAL_SUCCESS : OPAL_ERROR;
#else
    return OPAL_ERR_NOT_SUPPORTED;
#endif
}
