/*
 * Completion queues, trigger, progress and cancel.
 *
 * A context's completion queue is a FIFO of finished operations, linked
 * through op->cq_next: components push from whichever thread completed
 * the operation (opal_na_base_op_complete), the context's triggering
 * thread pops. A mutex keeps it simple and correct with several pushers;
 * the count is atomic so that the common "nothing to do" check of
 * trigger and try_wait takes no lock.
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

typedef struct na_cq_t {
    pthread_mutex_t lock;
    opal_na_op_id_t *head;
    opal_na_op_id_t *tail;
    _Atomic size_t count;
} na_cq_t;

int opal_na_base_cq_create(opal_na_context_t *ctx)
{
    na_cq_t *cq = calloc(1, sizeof(*cq));
    if (NULL == cq) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    pthread_mutex_init(&cq->lock, NULL);
    atomic_init(&cq->count, 0);
    ctx->cq = cq;
    return OPAL_SUCCESS;
}

int opal_na_base_cq_destroy(opal_na_context_t *ctx)
{
    na_cq_t *cq = ctx->cq;
    if (NULL == cq) {
        return OPAL_SUCCESS;
    }
    if (0 != atomic_load_explicit(&cq->count, memory_order_acquire)) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    pthread_mutex_destroy(&cq->lock);
    free(cq);
    ctx->cq = NULL;
    return OPAL_SUCCESS;
}

bool opal_na_base_cq_pending(const opal_na_context_t *ctx)
{
    const na_cq_t *cq = ctx->cq;
    return 0 != atomic_load_explicit(&cq->count, memory_order_acquire);
}

void opal_na_base_op_complete(opal_na_op_id_t *op, int ret)
{
    na_cq_t *cq = op->context->cq;
    op->cb_info.ret = ret;
    op->cq_next = NULL;
    pthread_mutex_lock(&cq->lock);
    if (NULL == cq->tail) {
        cq->head = op;
    } else {
        cq->tail->cq_next = op;
    }
    cq->tail = op;
    /* release: a trigger that sees the count sees the op linked (it then
     * takes the lock anyway). */
    atomic_fetch_add_explicit(&cq->count, 1, memory_order_release);
    pthread_mutex_unlock(&cq->lock);
}

/* Takes every queued operation at once, in order: one lock per trigger
 * instead of one per operation. */
static opal_na_op_id_t *cq_pop_all(na_cq_t *cq)
{
    if (0 == atomic_load_explicit(&cq->count, memory_order_acquire)) {
        return NULL;
    }
    pthread_mutex_lock(&cq->lock);
    opal_na_op_id_t *op = cq->head;
    size_t n = 0;
    for (opal_na_op_id_t *o = op; NULL != o; o = o->cq_next) {
        ++n;
    }
    cq->head = cq->tail = NULL;
    atomic_fetch_sub_explicit(&cq->count, n, memory_order_relaxed);
    pthread_mutex_unlock(&cq->lock);
    return op;
}

static opal_na_op_id_t *cq_pop(na_cq_t *cq)
{
    if (0 == atomic_load_explicit(&cq->count, memory_order_acquire)) {
        return NULL;
    }
    pthread_mutex_lock(&cq->lock);
    opal_na_op_id_t *op = cq->head;
    if (NULL != op) {
        cq->head = op->cq_next;
        if (NULL == cq->head) {
            cq->tail = NULL;
        }
        atomic_fetch_sub_explicit(&cq->count, 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&cq->lock);
    return op;
}

int opal_na_trigger(opal_na_context_t *ctx, unsigned int max, unsigned int *count)
{
    if (NULL != count) {
        *count = 0;
    }
    if (NULL == ctx) {
        return OPAL_ERR_BAD_PARAM;
    }
    unsigned int ran = 0;
    opal_na_op_id_t *op, *batch = NULL;
    for (;;) {
        if (NULL != batch) {
            op = batch;
            /* Read before the callback: it may start the id again. */
            batch = op->cq_next;
        } else if (0 == max) {
            if (NULL == (op = cq_pop_all(ctx->cq))) {
                break;
            }
            batch = op->cq_next;
        } else if (ran >= max || NULL == (op = cq_pop(ctx->cq))) {
            break;
        }
        /* Copied so that the callback may start the next operation with
         * the same id, as Mercury allows. */
        opal_na_cb_info_t info = op->cb_info;
        opal_na_cb_t callback = op->callback;
        bool transient = op->transient;
        opal_na_class_t *cls = ctx->na_class;
        atomic_store_explicit(&op->state, OPAL_NA_OP_IDLE, memory_order_release);
        if (NULL != callback) {
            callback(&info);
        }
        if (transient) {
            opal_na_base_op_release(cls, op);
        }
        ++ran;
    }
    if (NULL != count) {
        *count = ran;
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
