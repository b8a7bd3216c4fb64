/*
 * sched/prio operations: per scheduler, one binary min-heap per class
 * ordered by (deadline, arrival); the progress loop always takes the top
 * of the most urgent non-empty class, so an urgent task waits for at most
 * the task running when it arrived.
 */
#include "opal/opal_config.h"

#include <stdlib.h>

#include "opal/mca/sched/base/base.h"
#include "opal/mca/sched/prio/sched_prio.h"
#include "opal/threads/opal_mutex.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"

typedef struct prio_heap_t {
    opal_sched_task_t **h_tasks;
    size_t h_count;
    size_t h_size;
} prio_heap_t;

typedef struct prio_state_t {
    /* Guards the heaps and q_seq (only with opal_using_threads()). */
    opal_mutex_t q_lock;
    uint64_t q_seq;
    unsigned int q_classes;
    unsigned int q_max_queued;
    unsigned int q_batch;
    /* Admitted and not yet started, per class: the admission bound. */
    opal_atomic_uint32_t q_level[SCHED_PRIO_MAX_CLASSES];
    prio_heap_t q_heaps[SCHED_PRIO_MAX_CLASSES];
    /* Where a task goes when its heap cannot grow (out of memory): enqueue
     * cannot fail, so such tasks wait in arrival order, after the heap. */
    opal_sched_task_t *q_spill_head[SCHED_PRIO_MAX_CLASSES];
    opal_sched_task_t *q_spill_tail[SCHED_PRIO_MAX_CLASSES];
} prio_state_t;

static unsigned int task_class(const prio_state_t *q, const opal_sched_task_t *task)
{
    return (unsigned int) task->t_priority < q->q_classes ? (unsigned int) task->t_priority
                                                          : q->q_classes - 1;
}

/* No deadline sorts after every deadline. */
static uint64_t task_key(const opal_sched_task_t *task)
{
    return 0 == task->t_deadline_ns ? UINT64_MAX : task->t_deadline_ns;
}

static bool task_before(const opal_sched_task_t *a, const opal_sched_task_t *b)
{
    uint64_t ka = task_key(a), kb = task_key(b);
    return ka < kb || (ka == kb && a->t_seq < b->t_seq);
}

static int heap_push(prio_heap_t *h, opal_sched_task_t *task)
{
    if (h->h_count == h->h_size) {
        size_t size = 0 == h->h_size ? 64 : 2 * h->h_size;
        opal_sched_task_t **tasks = realloc(h->h_tasks, size * sizeof(*tasks));
        if (NULL == tasks) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        h->h_tasks = tasks;
        h->h_size = size;
    }
    size_t i = h->h_count++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!task_before(task, h->h_tasks[parent])) {
            break;
        }
        h->h_tasks[i] = h->h_tasks[parent];
        i = parent;
    }
    h->h_tasks[i] = task;
    return OPAL_SUCCESS;
}

static opal_sched_task_t *heap_pop(prio_heap_t *h)
{
    opal_sched_task_t *top = h->h_tasks[0];
    opal_sched_task_t *last = h->h_tasks[--h->h_count];
    size_t i = 0, n = h->h_count;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= n) {
            break;
        }
        if (child + 1 < n && task_before(h->h_tasks[child + 1], h->h_tasks[child])) {
            ++child;
        }
        if (!task_before(h->h_tasks[child], last)) {
            break;
        }
        h->h_tasks[i] = h->h_tasks[child];
        i = child;
    }
    if (n > 0) {
        h->h_tasks[i] = last;
    }
    return top;
}

static int prio_attach(opal_sched_t *sched, void **state)
{
    (void) sched;
    prio_state_t *q = calloc(1, sizeof(*q));
    if (NULL == q) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    OBJ_CONSTRUCT(&q->q_lock, opal_mutex_t);
    q->q_classes = mca_sched_prio_config.classes;
    q->q_max_queued = mca_sched_prio_config.max_queued;
    q->q_batch = mca_sched_prio_config.batch;
    /* The heaps hold at most the bound: reserve it now when it is small,
     * so that enqueue (which cannot fail) never allocates. */
    for (unsigned int k = 0; k < q->q_classes; ++k) {
        prio_heap_t *h = &q->q_heaps[k];
        h->h_size = 0 != q->q_max_queued && q->q_max_queued < 4096 ? q->q_max_queued : 64;
        h->h_tasks = malloc(h->h_size * sizeof(*h->h_tasks));
        if (NULL == h->h_tasks) {
            for (unsigned int j = 0; j < k; ++j) {
                free(q->q_heaps[j].h_tasks);
            }
            OBJ_DESTRUCT(&q->q_lock);
            free(q);
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    *state = q;
    return OPAL_SUCCESS;
}

static void prio_detach(void *state)
{
    prio_state_t *q = state;
    for (unsigned int k = 0; k < q->q_classes; ++k) {
        free(q->q_heaps[k].h_tasks);
    }
    OBJ_DESTRUCT(&q->q_lock);
    free(q);
}

static int prio_admit(void *state, opal_sched_task_t *task, bool force)
{
    prio_state_t *q = state;
    unsigned int k = task_class(q, task);
    sched_prio_counters_t *counters = &mca_sched_prio_config.counters[k];
    if (force || 0 == q->q_max_queued) {
        atomic_fetch_add_explicit(&q->q_level[k], 1, memory_order_relaxed);
    } else {
        /* Take a slot only while one is free, so that concurrent
         * schedulers never push the level past the bound. */
        uint32_t level = atomic_load_explicit(&q->q_level[k], memory_order_relaxed);
        do {
            if (level >= q->q_max_queued) {
                atomic_fetch_add_explicit(&counters->refused, 1, memory_order_relaxed);
                return OPAL_ERR_RESOURCE_BUSY;
            }
        } while (!atomic_compare_exchange_weak_explicit(
            &q->q_level[k], &level, level + 1, memory_order_relaxed, memory_order_relaxed));
    }
    atomic_fetch_add_explicit(&counters->queued, 1, memory_order_relaxed);
    return OPAL_SUCCESS;
}

static void prio_release(void *state, opal_sched_task_t *task)
{
    prio_state_t *q = state;
    atomic_fetch_sub_explicit(&q->q_level[task_class(q, task)], 1, memory_order_relaxed);
}

static void prio_enqueue(void *state, opal_sched_task_t *task)
{
    prio_state_t *q = state;
    prio_heap_t *h = &q->q_heaps[task_class(q, task)];
    unsigned int k = task_class(q, task);
    OPAL_THREAD_LOCK(&q->q_lock);
    task->t_seq = q->q_seq++;
    if (OPAL_SUCCESS != heap_push(h, task)) {
        task->t_next = NULL;
        if (NULL == q->q_spill_tail[k]) {
            q->q_spill_head[k] = task;
        } else {
            q->q_spill_tail[k]->t_next = task;
        }
        q->q_spill_tail[k] = task;
    }
    OPAL_THREAD_UNLOCK(&q->q_lock);
}

static int prio_progress(void *state)
{
    prio_state_t *q = state;
    int n = 0;
    while (0 == q->q_batch || (unsigned int) n < q->q_batch) {
        opal_sched_task_t *task = NULL;
        OPAL_THREAD_LOCK(&q->q_lock);
        for (unsigned int k = 0; k < q->q_classes; ++k) {
            if (q->q_heaps[k].h_count > 0) {
                task = heap_pop(&q->q_heaps[k]);
                break;
            }
            if (NULL != q->q_spill_head[k]) {
                task = q->q_spill_head[k];
                q->q_spill_head[k] = task->t_next;
                if (NULL == q->q_spill_head[k]) {
                    q->q_spill_tail[k] = NULL;
                }
                break;
            }
        }
        OPAL_THREAD_UNLOCK(&q->q_lock);
        if (NULL == task) {
            break;
        }
        sched_prio_counters_t *counters = &mca_sched_prio_config.counters[task_class(q, task)];
        atomic_fetch_add_explicit(&counters->run, 1, memory_order_relaxed);
        if (0 != task->t_deadline_ns && opal_timer_ns() > task->t_deadline_ns) {
            atomic_fetch_add_explicit(&counters->late, 1, memory_order_relaxed);
        }
        mca_sched_base_task_run(task);
        ++n;
    }
    return n;
}

const mca_sched_base_module_t mca_sched_prio_module = {
    .sched_attach = prio_attach,
    .sched_detach = prio_detach,
    .sched_admit = prio_admit,
    .sched_release = prio_release,
    .sched_enqueue = prio_enqueue,
    .sched_progress = prio_progress,
};
