/*
 * sched/fifo operations: one queue per scheduler, linked through the
 * tasks (no allocation), drained by the progress loop.
 */
#include "opal/opal_config.h"

#include <stdlib.h>

#include "opal/mca/sched/base/base.h"
#include "opal/mca/sched/fifo/sched_fifo.h"
#include "opal/threads/opal_mutex.h"
#include "opal/util/opal_error.h"

typedef struct fifo_queue_t {
    /* Taken only with opal_using_threads(): enqueue may come from any
     * thread that completes a dependency; progress from one at a time. */
    opal_mutex_t q_lock;
    opal_sched_task_t *q_head;
    opal_sched_task_t *q_tail;
} fifo_queue_t;

static int fifo_attach(opal_sched_t *sched, void **state)
{
    (void) sched;
    fifo_queue_t *q = calloc(1, sizeof(*q));
    if (NULL == q) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    OBJ_CONSTRUCT(&q->q_lock, opal_mutex_t);
    *state = q;
    return OPAL_SUCCESS;
}

static void fifo_detach(void *state)
{
    fifo_queue_t *q = state;
    OBJ_DESTRUCT(&q->q_lock);
    free(q);
}

static void fifo_enqueue(void *state, opal_sched_task_t *task)
{
    fifo_queue_t *q = state;
    task->t_next = NULL;
    OPAL_THREAD_LOCK(&q->q_lock);
    if (NULL == q->q_tail) {
        q->q_head = task;
    } else {
        q->q_tail->t_next = task;
    }
    q->q_tail = task;
    OPAL_THREAD_UNLOCK(&q->q_lock);
}

static int fifo_progress(void *state)
{
    fifo_queue_t *q = state;
    unsigned int limit = mca_sched_fifo_batch;
    int n = 0;
    while (0 == limit || (unsigned int) n < limit) {
        OPAL_THREAD_LOCK(&q->q_lock);
        opal_sched_task_t *task = q->q_head;
        if (NULL != task) {
            q->q_head = task->t_next;
            if (NULL == q->q_head) {
                q->q_tail = NULL;
            }
        }
        OPAL_THREAD_UNLOCK(&q->q_lock);
        if (NULL == task) {
            break;
        }
        mca_sched_base_task_run(task);
        ++n;
    }
    return n;
}

const mca_sched_base_module_t mca_sched_fifo_module = {
    .sched_attach = fifo_attach,
    .sched_detach = fifo_detach,
    .sched_enqueue = fifo_enqueue,
    .sched_progress = fifo_progress,
    .sched_in_order = true,
};
