/*
 * Completion queues, trigger, progress and cancel.
 *
 * A context's completion queue takes finished operations from whichever
 * thread completed them (opal_na_base_op_complete) and hands them to the
 * context's triggering thread in order. Completers push on a lock-free
 * stack (one compare-and-swap); a trigger takes the whole stack with one
 * exchange and reverses it, so the common trigger-everything path takes
 * no lock at all (the mutex version cost four lock / unlock pairs per
 * RPC and side). Taking everything at once is safe with any number of
 * pushers and triggers: no item is ever popped alone from the stack, so
 * there is no ABA. A trigger asked for at most max callbacks keeps the
 * rest on a ready list, in order, under the mutex; later triggers run
 * that list first.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>

#include "opal/mca/na/base/base.h"
#include "opal/mca/na/base/na_base_internal.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_timer.h"
#include "opal/util/opal_timeline.h"

typedef struct na_cq_t {
    /* Completed, newest first, linked through cq_next. */
    _Atomic(opal_na_op_id_t *) pushed;
    /* Taken from pushed but not yet run (only after a trigger with a
     * max): oldest first, under lock; has_ready mirrors ready_head. */
    pthread_mutex_t lock;
    opal_na_op_id_t *ready_head;
    opal_na_op_id_t *ready_tail;
    _Atomic bool has_ready;
} na_cq_t;

int opal_na_base_cq_create(opal_na_context_t *ctx)
{
    na_cq_t *cq = calloc(1, sizeof(*cq));
    if (NULL == cq) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    pthread_mutex_init(&cq->lock, NULL);
    atomic_init(&cq->pushed, NULL);
    atomic_init(&cq->has_ready, false);
    ctx->cq = cq;
    return OPAL_SUCCESS;
}

bool opal_na_base_cq_pending(const opal_na_context_t *ctx)
{
    na_cq_t *cq = ctx->cq;
    return NULL != atomic_load_explicit(&cq->pushed, memory_order_acquire) ||
           atomic_load_explicit(&cq->has_ready, memory_order_acquire);
}

int opal_na_base_cq_destroy(opal_na_context_t *ctx)
{
    na_cq_t *cq = ctx->cq;
    if (NULL == cq) {
        return OPAL_SUCCESS;
    }
    if (opal_na_base_cq_pending(ctx)) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    pthread_mutex_destroy(&cq->lock);
    free(cq);
    ctx->cq = NULL;
    return OPAL_SUCCESS;
}

void opal_na_base_op_complete(opal_na_op_id_t *op, int ret)
{
    OPAL_TIMELINE(na_queued);
    na_cq_t *cq = op->context->cq;
    op->cb_info.ret = ret;
    opal_na_op_id_t *top = atomic_load_explicit(&cq->pushed, memory_order_relaxed);
    if (!opal_using_threads()) {
        op->cq_next = top;
        atomic_store_explicit(&cq->pushed, op, memory_order_relaxed);
        return;
    }
    do {
        op->cq_next = top;
        /* release: the trigger that takes the stack (acquire) sees the op
         * and its outcome written. */
    } while (!atomic_compare_exchange_weak_explicit(&cq->pushed, &top, op, memory_order_release,
                                                    memory_order_relaxed));
}

/* Everything pushed so far, oldest first. */
static opal_na_op_id_t *cq_take_pushed(na_cq_t *cq, opal_na_op_id_t **tail)
{
    if (NULL == atomic_load_explicit(&cq->pushed, memory_order_relaxed)) {
        return NULL;
    }
    opal_na_op_id_t *op;
    if (opal_using_threads()) {
        op = atomic_exchange_explicit(&cq->pushed, NULL, memory_order_acquire);
    } else {
        op = atomic_load_explicit(&cq->pushed, memory_order_relaxed);
        atomic_store_explicit(&cq->pushed, NULL, memory_order_relaxed);
    }
    opal_na_op_id_t *fifo = NULL;
    if (NULL != tail) {
        *tail = op;
    }
    while (NULL != op) {
        opal_na_op_id_t *next = op->cq_next;
        op->cq_next = fifo;
        fifo = op;
        op = next;
    }
    return fifo;
}

/* Up to max operations (0: all), oldest first, as a list through cq_next;
 * the rest wait on the ready list. */
static opal_na_op_id_t *cq_take(na_cq_t *cq, unsigned int max)
{
    if (0 == max && !atomic_load_explicit(&cq->has_ready, memory_order_acquire)) {
        return cq_take_pushed(cq, NULL);
    }
    pthread_mutex_lock(&cq->lock);
    opal_na_op_id_t *tail = NULL;
    opal_na_op_id_t *more = cq_take_pushed(cq, &tail);
    if (NULL != more) {
        if (NULL == cq->ready_tail) {
            cq->ready_head = more;
        } else {
            cq->ready_tail->cq_next = more;
        }
        cq->ready_tail = tail;
    }
    opal_na_op_id_t *head = cq->ready_head, *last = NULL;
    unsigned int n = 0;
    for (opal_na_op_id_t *o = head; NULL != o && (0 == max || n < max); o = o->cq_next) {
        last = o;
        ++n;
    }
    if (NULL != last) {
        cq->ready_head = last->cq_next;
        if (NULL == cq->ready_head) {
            cq->ready_tail = NULL;
        }
        last->cq_next = NULL;
    }
    atomic_store_explicit(&cq->has_ready, NULL != cq->ready_head, memory_order_release);
    pthread_mutex_unlock(&cq->lock);
    return NULL == last ? NULL : head;
}

/* Runs the callbacks of up to max (0: all) completed operations; ctx has
 * some. Apart from opal_na_trigger so that the many calls that find none
 * do not pay this loop's register saves (about 20 instructions). */
static __attribute__((noinline)) unsigned int trigger_some(opal_na_context_t *ctx, unsigned int max)
{
    unsigned int ran = 0;
    opal_na_op_id_t *batch = NULL;
    for (;;) {
        if (NULL == batch) {
            if (0 != max && ran >= max) {
                break;
            }
            batch = cq_take(ctx->cq, 0 == max ? 0 : max - ran);
            if (NULL == batch) {
                break;
            }
        }
        opal_na_op_id_t *op = batch;
        /* Read before the callback: it may start the id again. */
        batch = op->cq_next;
        /* Copied so that the callback may start the next operation with
         * the same id, as Mercury allows. */
        opal_na_cb_info_t info = op->cb_info;
        opal_na_cb_t callback = op->callback;
        bool transient = op->transient;
        opal_na_class_t *cls = ctx->na_class;
        atomic_store_explicit(&op->state, OPAL_NA_OP_IDLE, memory_order_release);
        if (NULL != callback) {
            OPAL_TIMELINE(na_trigger);
            callback(&info);
        }
        if (transient) {
            opal_na_base_op_release(cls, op);
        }
        ++ran;
    }
    return ran;
}

int opal_na_trigger(opal_na_context_t *ctx, unsigned int max, unsigned int *count)
{
    if (NULL != count) {
        *count = 0;
    }
    if (NULL == ctx) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (opal_na_base_cq_pending(ctx)) {
        unsigned int ran = trigger_some(ctx, max);
        if (NULL != count) {
            *count = ran;
        }
    }
    return OPAL_SUCCESS;
}

int opal_na_poll(opal_na_class_t *cls, opal_na_context_t *ctx, unsigned int *count)
{
    unsigned int n = 0;
    if (NULL == cls || NULL == ctx) {
        return OPAL_ERR_BAD_PARAM;
    }
    int rc = cls->ops->poll(cls, ctx, &n);
    if (NULL != cls->poll_hook) {
        cls->poll_hook(cls, cls->poll_hook_arg);
    }
    if (NULL != count) {
        *count = n;
    }
    return rc;
}

int opal_na_base_poll_hook_set(opal_na_class_t *cls, void (*hook)(opal_na_class_t *cls, void *arg),
                               void *arg)
{
    if (NULL == cls) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (NULL != hook && NULL != cls->poll_hook) {
        return OPAL_ERR_EXISTS;
    }
    cls->poll_hook = hook;
    cls->poll_hook_arg = arg;
    return OPAL_SUCCESS;
}

int opal_na_base_peer_gone_hook_set(opal_na_class_t *cls, opal_na_peer_gone_fn_t hook, void *arg)
{
    if (NULL == cls) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (NULL != hook && NULL != cls->peer_gone_hook) {
        return OPAL_ERR_EXISTS;
    }
    cls->peer_gone_hook = hook;
    cls->peer_gone_arg = arg;
    return OPAL_SUCCESS;
}

void opal_na_base_peer_gone(opal_na_class_t *cls, opal_na_addr_t *addr, bool finalized,
                            const char *why)
{
    if (NULL != cls && NULL != addr && NULL != cls->peer_gone_hook) {
        cls->peer_gone_hook(cls, addr, finalized, why, cls->peer_gone_arg);
    }
}

int opal_na_poll_get_fd(opal_na_class_t *cls, opal_na_context_t *ctx)
{
    if (NULL == cls || NULL == ctx || NULL == cls->ops->poll_get_fd) {
        return -1;
    }
    return cls->ops->poll_get_fd(cls, ctx);
}

bool opal_na_trigger_pending(const opal_na_context_t *ctx)
{
    return NULL != ctx && opal_na_base_cq_pending(ctx);
}

bool opal_na_poll_try_wait(opal_na_class_t *cls, opal_na_context_t *ctx)
{
    if (NULL == cls || NULL == ctx || opal_na_base_cq_pending(ctx)) {
        return false;
    }
    if (NULL == cls->ops->poll_try_wait || opal_na_poll_get_fd(cls, ctx) < 0) {
        return false;
    }
    return cls->ops->poll_try_wait(cls, ctx);
}

int opal_na_poll_wait(opal_na_class_t *cls, opal_na_context_t *ctx, unsigned int timeout_ms,
                      unsigned int *count)
{
    if (NULL != count) {
        *count = 0;
    }
    if (NULL == cls || NULL == ctx) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (NULL != cls->ops->poll_wait) {
        unsigned int n = 0;
        int rc = cls->ops->poll_wait(cls, ctx, timeout_ms, &n);
        if (NULL != cls->poll_hook) {
            cls->poll_hook(cls, cls->poll_hook_arg);
        }
        if (NULL != count) {
            *count = n;
        }
        return rc;
    }
    const uint64_t start = opal_timer_ns();
    const uint64_t deadline = start + (uint64_t) timeout_ms * 1000000u;
    const uint64_t spin_until = start + (uint64_t) opal_na_base_wait_spin_us * 1000u;
    for (;;) {
        unsigned int n = 0;
        int rc = opal_na_poll(cls, ctx, &n);
        if (OPAL_SUCCESS != rc || n > 0 || opal_na_base_cq_pending(ctx)) {
            if (NULL != count) {
                *count = n;
            }
            return rc;
        }
        uint64_t now = opal_timer_ns();
        if (now >= deadline) {
            return OPAL_ERR_TIMEOUT;
        }
        if (!cls->init_info.busy_wait && now >= spin_until && opal_na_poll_try_wait(cls, ctx)) {
            struct pollfd pfd = {.fd = opal_na_poll_get_fd(cls, ctx), .events = POLLIN};
            int ms = (int) ((deadline - now + 999999u) / 1000000u);
            if (poll(&pfd, 1, ms) < 0 && EINTR != errno) {
                return OPAL_ERR_IN_ERRNO;
            }
        }
    }
}

int opal_na_cancel(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_op_id_t *op)
{
    if (NULL == op) {
        return OPAL_SUCCESS;
    }
    if (NULL == cls || NULL == ctx) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (OPAL_NA_OP_PENDING != atomic_load_explicit(&op->state, memory_order_acquire)) {
        return OPAL_SUCCESS;
    }
    if (NULL == cls->ops->cancel) {
        opal_output(0, "na: cancel is not supported by %s", cls->ops->name);
        return OPAL_ERR_NOT_SUPPORTED;
    }
    return cls->ops->cancel(cls, ctx, op);
}
