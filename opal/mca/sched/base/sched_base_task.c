/*
 * The task engine: creation, scheduling, running, completion, cancel and
 * re-init, with the dependency bookkeeping that decides when a task is
 * ready. What a ready task does next is the policy's business
 * (sched_enqueue), until the policy hands it back to
 * mca_sched_base_task_run().
 */
#include "opal/opal_config.h"

#include <string.h>

#include "opal/mca/sched/base/base.h"
#include "opal/mca/sched/base/sched_base_internal.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"

OBJ_CLASS_INSTANCE(opal_sched_task_t, opal_free_list_item_t, NULL, NULL);

/* Depth of bodies and callbacks the calling thread is inside. Initial-exec:
 * libopal is loaded with the program, and the default model's
 * __tls_get_addr call cost 7% of an empty task. */
static _Thread_local int sched_task_depth __attribute__((tls_model("initial-exec")));

bool mca_sched_base_in_task(void)
{
    return sched_task_depth > 0;
}

void mca_sched_base_body_enter(void)
{
    ++sched_task_depth;
}

void mca_sched_base_body_leave(void)
{
    --sched_task_depth;
}

static void links_return(opal_sched_t *sched, opal_sched_link_t *l)
{
    while (NULL != l) {
        opal_sched_link_t *next = l->l_next;
        mca_sched_base_link_return(sched, l);
        l = next;
    }
}

static void task_free(opal_sched_task_t *task)
{
    opal_sched_t *sched = task->t_sched;
    /* Records left on a task that never ran (released unscheduled). */
    if (OPAL_UNLIKELY(NULL != task->t_prep_cbs || NULL != task->t_comp_cbs ||
                      NULL != task->t_dependents)) {
        links_return(sched, task->t_prep_cbs);
        links_return(sched, task->t_comp_cbs);
        links_return(sched, task->t_dependents);
    }
    opal_free_list_return(&sched->s_tasks, &task->super);
}

void opal_sched_task_retain(opal_sched_task_t *task)
{
    /* Relaxed: the caller already holds a reference. */
    atomic_fetch_add_explicit(&task->t_refcount, 1, memory_order_relaxed);
}

void opal_sched_task_release(opal_sched_task_t *task)
{
    int32_t old;
    if (!opal_using_threads()) {
        /* One thread: no lock prefix (see sched_counter_fetch_add). */
        old = atomic_load_explicit(&task->t_refcount, memory_order_relaxed);
        atomic_store_explicit(&task->t_refcount, old - 1, memory_order_relaxed);
    } else {
        /* acq_rel: the last release sees every write made under the other
         * references before it frees the task. */
        old = atomic_fetch_sub_explicit(&task->t_refcount, 1, memory_order_acq_rel);
    }
    if (1 == old) {
        task_free(task);
    }
}

int opal_sched_task_create(opal_sched_t *sched, opal_sched_task_fn_t body, uint32_t flags,
                           opal_sched_task_t **task)
{
    if (NULL == sched || NULL == task || 0 != (flags & ~(uint32_t) OPAL_SCHED_TASK_AUTO)) {
        return OPAL_ERR_BAD_PARAM;
    }
    /* Through void *: the list hands out items at the task's alignment
     * (opal_sched_create), which the item type does not say. */
    opal_sched_task_t *t = (opal_sched_task_t *) (void *) opal_free_list_get(&sched->s_tasks);
    if (OPAL_UNLIKELY(NULL == t)) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    t->t_sched = sched;
    t->t_body = body;
    t->t_state = OPAL_SCHED_TASK_INIT;
    t->t_flags = flags;
    t->t_result = OPAL_SUCCESS;
    t->t_dep_result = OPAL_SUCCESS;
    t->t_dep_pending = 0;
    atomic_store_explicit(&t->t_refcount, 1, memory_order_relaxed);
    t->t_dependents = NULL;
    t->t_prep_cbs = NULL;
    t->t_comp_cbs = NULL;
    t->t_not_before_ns = 0;
    t->t_visit = 0;
    t->t_list_next = NULL;
    t->t_priority = 0;
    t->t_deadline_ns = 0;
    t->t_next = NULL;
    t->t_seq = 0;
    t->t_pos = 0;
    *task = t;
    return OPAL_SUCCESS;
}

int opal_sched_task_set_priority(opal_sched_task_t *task, int prio_class, uint64_t deadline_ns)
{
    if (NULL == task || prio_class < 0 || OPAL_SCHED_TASK_INIT != task->t_state) {
        return OPAL_ERR_BAD_PARAM;
    }
    task->t_priority = prio_class;
    task->t_deadline_ns = deadline_ns;
    return OPAL_SUCCESS;
}

int opal_sched_task_register_cbs(opal_sched_task_t *task, opal_sched_task_cb_t prep_cb,
                                 void *prep_arg, opal_sched_task_cb_t comp_cb, void *comp_arg)
{
    if (NULL == task || (NULL == prep_cb && NULL == comp_cb)) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_sched_t *sched = task->t_sched;
    opal_sched_link_t *prep = NULL, *comp = NULL;
    if ((NULL != prep_cb && NULL == (prep = mca_sched_base_link_get(sched))) ||
        (NULL != comp_cb && NULL == (comp = mca_sched_base_link_get(sched)))) {
        if (NULL != prep) {
            mca_sched_base_link_return(sched, prep);
        }
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    SCHED_LOCK(sched);
    if (NULL != prep) {
        /* Prep callbacks run in the order they were registered. */
        prep->l_task_cb = prep_cb;
        prep->l_arg = prep_arg;
        prep->l_next = NULL;
        opal_sched_link_t **tail = &task->t_prep_cbs;
        while (NULL != *tail) {
            tail = &(*tail)->l_next;
        }
        *tail = prep;
    }
    if (NULL != comp) {
        /* Completion callbacks form a stack: the last one registered runs
         * first. */
        comp->l_task_cb = comp_cb;
        comp->l_arg = comp_arg;
        comp->l_next = task->t_comp_cbs;
        task->t_comp_cbs = comp;
    }
    SCHED_UNLOCK(sched);
    return OPAL_SUCCESS;
}

/* A task may still gain dependencies: not scheduled, or re-inited by one
 * of its completion callbacks that is running now. */
static bool task_accepts_deps(const opal_sched_task_t *task)
{
    return OPAL_SCHED_TASK_INIT == task->t_state || (OPAL_SCHED_TASK_COMPLETED == task->t_state &&
                                                     0 != (task->t_flags & SCHED_TASK_F_REINIT));
}

/* A dependency counts as done once completed, unless a callback of its
 * own is about to run it again. */
static bool task_is_done(const opal_sched_task_t *task)
{
    return OPAL_SCHED_TASK_COMPLETED == task->t_state && 0 == (task->t_flags & SCHED_TASK_F_REINIT);
}

/* True when target is reachable from start along dependent edges, i.e.
 * target already waits (transitively) for start. Under s_lock. */
static int reaches(opal_sched_t *sched, opal_sched_task_t *start, opal_sched_task_t *target,
                   bool *found)
{
    uint64_t mark = ++sched->s_walk_mark;
    size_t depth = 0;
    *found = false;
    start->t_visit = mark;
    sched->s_walk[depth++] = start;
    while (depth > 0) {
        opal_sched_task_t *t = sched->s_walk[--depth];
        for (opal_sched_link_t *l = t->t_dependents; NULL != l; l = l->l_next) {
            opal_sched_task_t *d = l->l_task;
            if (d == target) {
                *found = true;
                return OPAL_SUCCESS;
            }
            if (d->t_visit == mark) {
                continue;
            }
            d->t_visit = mark;
            if (depth == sched->s_walk_size) {
                size_t size = 2 * sched->s_walk_size;
                opal_sched_task_t **walk = realloc(sched->s_walk, size * sizeof(*walk));
                if (NULL == walk) {
                    return OPAL_ERR_OUT_OF_RESOURCE;
                }
                sched->s_walk = walk;
                sched->s_walk_size = size;
            }
            sched->s_walk[depth++] = d;
        }
    }
    return OPAL_SUCCESS;
}

int opal_sched_task_depend(opal_sched_task_t *task, int ndeps, opal_sched_task_t *const *deps)
{
    if (NULL == task || ndeps < 0 || (ndeps > 0 && NULL == deps)) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_sched_t *sched = task->t_sched;
    for (int i = 0; i < ndeps; ++i) {
        if (NULL == deps[i] || deps[i]->t_sched != sched) {
            return OPAL_ERR_BAD_PARAM;
        }
    }
    int rc = OPAL_SUCCESS;
    SCHED_LOCK(sched);
    if (!task_accepts_deps(task)) {
        rc = OPAL_ERR_BAD_PARAM;
        goto out;
    }
    /* Check every new edge before adding any: an edge into task adds no
     * path out of task, so the checks do not depend on each other. */
    for (int i = 0; i < ndeps; ++i) {
        bool cycle = deps[i] == task;
        if (!cycle && !task_is_done(deps[i]) && NULL != task->t_dependents) {
            rc = reaches(sched, task, deps[i], &cycle);
            if (OPAL_SUCCESS != rc) {
                goto out;
            }
        }
        if (cycle) {
            rc = OPAL_ERR_WOULD_BLOCK;
            goto out;
        }
    }
    for (int i = 0; i < ndeps; ++i) {
        opal_sched_task_t *dep = deps[i];
        if (task_is_done(dep)) {
            if (OPAL_SUCCESS == task->t_dep_result) {
                task->t_dep_result = dep->t_result;
            }
            continue;
        }
        opal_sched_link_t *l = mca_sched_base_link_get(sched);
        if (NULL == l) {
            /* Edges added so far stay: the task is still consistent. */
            rc = OPAL_ERR_OUT_OF_RESOURCE;
            goto out;
        }
        l->l_task = task;
        l->l_next = dep->t_dependents;
        dep->t_dependents = l;
        task->t_dep_pending++;
    }
out:
    SCHED_UNLOCK(sched);
    return rc;
}

/* Where a task goes once nothing holds it back. Under s_lock: returns true
 * when the caller must hand it on (make_ready) after unlocking; false when
 * it went to the delayed list. */
static bool task_ready_locked(opal_sched_t *sched, opal_sched_task_t *task, uint64_t now)
{
    if (0 != task->t_not_before_ns && task->t_not_before_ns > now &&
        0 == (task->t_flags & SCHED_TASK_F_CANCEL) &&
        !atomic_load_explicit(&sched->s_canceling, memory_order_relaxed)) {
        opal_sched_task_t **pos = &sched->s_delayed;
        while (NULL != *pos && (*pos)->t_not_before_ns <= task->t_not_before_ns) {
            pos = &(*pos)->t_list_next;
        }
        task->t_list_next = *pos;
        *pos = task;
        task->t_flags |= SCHED_TASK_F_DELAYED;
        sched_counter_add(&sched->s_ndelayed, 1);
        return false;
    }
    task->t_state = OPAL_SCHED_TASK_READY;
    return true;
}

static void task_finish(opal_sched_task_t *task, int result);

/* Hands a READY task on: completes it as canceled, runs it here (inline)
 * or gives it to the policy. */
static void make_ready(opal_sched_t *sched, opal_sched_task_t *task, bool run_inline)
{
    if (0 != (task->t_flags & SCHED_TASK_F_CANCEL) ||
        atomic_load_explicit(&sched->s_canceling, memory_order_relaxed)) {
        SCHED_LOCK(sched);
        task->t_state = OPAL_SCHED_TASK_RUNNING;
        SCHED_UNLOCK(sched);
        task_finish(task, OPAL_ERR_CANCELED);
    } else if (run_inline) {
        mca_sched_base_task_run(task);
    } else {
        sched->s_policy->sched_enqueue(sched->s_policy_state, task);
    }
}

/* Schedules task, taking the scheduler's reference (unless it has one
 * already: a re-init from a completion callback). */
static int task_schedule(opal_sched_task_t *task, uint32_t flags, uint64_t delay_ns, bool reinit)
{
    opal_sched_t *sched = task->t_sched;
    const mca_sched_base_module_t *policy = sched->s_policy;
    uint64_t now = 0 != delay_ns ? opal_timer_ns() : 0;
    bool ready = false;
    SCHED_LOCK(sched);
    /* Checked under the lock: a second schedule of a task that already
     * runs on another thread must see its state, not a stale one. */
    if (OPAL_SCHED_TASK_INIT != task->t_state) {
        SCHED_UNLOCK(sched);
        return OPAL_ERR_BAD_PARAM;
    }
    if (NULL != policy->sched_admit) {
        int rc = policy->sched_admit(sched->s_policy_state, task, reinit);
        if (OPAL_SUCCESS != rc) {
            SCHED_UNLOCK(sched);
            return rc;
        }
        task->t_flags |= SCHED_TASK_F_ADMITTED;
    }
    if (0 == (task->t_flags & SCHED_TASK_F_SCHED_REF)) {
        task->t_flags |= SCHED_TASK_F_SCHED_REF;
        if (0 == sched_counter_fetch_add(&sched->s_inflight, 1, memory_order_relaxed)) {
            atomic_fetch_add_explicit(&mca_sched_base_busy, 1, memory_order_relaxed);
        }
    }
    task->t_not_before_ns = 0 != delay_ns ? now + delay_ns : 0;
    task->t_state = OPAL_SCHED_TASK_WAITING;
    if (0 == task->t_dep_pending) {
        ready = task_ready_locked(sched, task, now);
    }
    SCHED_UNLOCK(sched);
    if (ready) {
        make_ready(sched, task, 0 != (flags & OPAL_SCHED_INLINE));
    }
    return OPAL_SUCCESS;
}

int opal_sched_task_schedule_delayed(opal_sched_task_t *task, uint32_t flags, uint64_t delay_ns)
{
    if (NULL == task || 0 != (flags & ~(uint32_t) OPAL_SCHED_INLINE)) {
        return OPAL_ERR_BAD_PARAM;
    }
    return task_schedule(task, flags, delay_ns, false);
}

int opal_sched_task_schedule(opal_sched_task_t *task, uint32_t flags)
{
    return opal_sched_task_schedule_delayed(task, flags, 0);
}

/* Runs the completion callbacks, last registered first, until one re-inits
 * the task. Returns true when one did. */
static bool run_comp_cbs(opal_sched_t *sched, opal_sched_task_t *task)
{
    for (;;) {
        SCHED_LOCK(sched);
        opal_sched_link_t *cb = task->t_comp_cbs;
        if (NULL == cb || 0 != (task->t_flags & SCHED_TASK_F_REINIT)) {
            task->t_flags &= ~(uint32_t) SCHED_TASK_F_IN_COMP;
            bool reinit = 0 != (task->t_flags & SCHED_TASK_F_REINIT);
            SCHED_UNLOCK(sched);
            return reinit;
        }
        task->t_comp_cbs = cb->l_next;
        task->t_flags |= SCHED_TASK_F_IN_COMP;
        SCHED_UNLOCK(sched);
        ++sched_task_depth;
        (void) cb->l_task_cb(task, cb->l_arg);
        --sched_task_depth;
        mca_sched_base_link_return(sched, cb);
    }
}

/*
 * Completes a RUNNING task with result: callbacks, then its dependents.
 * A canceled task cancels its dependents; those that become ready then are
 * finished here too, from a work list rather than by recursion (a canceled
 * chain may be a million tasks long).
 */
static void task_finish(opal_sched_task_t *task, int result)
{
    opal_sched_t *sched = task->t_sched;
    const mca_sched_base_module_t *policy = sched->s_policy;
    opal_sched_task_t *work = task, *ready = NULL;
    task->t_next = NULL;
    uint64_t now = 0;
    while (NULL != work) {
        opal_sched_task_t *t = work;
        work = t->t_next;
        int rc = t == task ? result : OPAL_ERR_CANCELED;
        SCHED_LOCK(sched);
        bool release = 0 != (t->t_flags & SCHED_TASK_F_ADMITTED);
        t->t_flags &= ~(uint32_t) SCHED_TASK_F_ADMITTED;
        t->t_state = OPAL_SCHED_TASK_COMPLETED;
        t->t_result = rc;
        SCHED_UNLOCK(sched);
        if (release) {
            policy->sched_release(sched->s_policy_state, t);
        }
        if (run_comp_cbs(sched, t)) {
            SCHED_LOCK(sched);
            t->t_flags &= ~(uint32_t) (SCHED_TASK_F_REINIT | SCHED_TASK_F_CANCEL);
            t->t_state = OPAL_SCHED_TASK_INIT;
            uint64_t delay = t->t_not_before_ns;
            SCHED_UNLOCK(sched);
            /* A forced admission cannot fail. */
            (void) task_schedule(t, 0, delay, true);
            continue;
        }
        SCHED_LOCK(sched);
        bool canceled = OPAL_ERR_CANCELED == rc && 0 != (t->t_flags & SCHED_TASK_F_CANCEL);
        opal_sched_link_t *deps = t->t_dependents;
        t->t_dependents = NULL;
        for (opal_sched_link_t *l = deps; NULL != l; l = l->l_next) {
            opal_sched_task_t *d = l->l_task;
            if (OPAL_SUCCESS == d->t_dep_result) {
                d->t_dep_result = rc;
            }
            if (canceled) {
                d->t_flags |= SCHED_TASK_F_CANCEL;
            }
            if (0 == --d->t_dep_pending && OPAL_SCHED_TASK_WAITING == d->t_state) {
                if (0 != (d->t_flags & SCHED_TASK_F_CANCEL)) {
                    d->t_state = OPAL_SCHED_TASK_RUNNING;
                    d->t_next = work;
                    work = d;
                } else {
                    if (0 != d->t_not_before_ns && 0 == now) {
                        now = opal_timer_ns();
                    }
                    if (task_ready_locked(sched, d, now)) {
                        d->t_next = ready;
                        ready = d;
                    }
                }
            }
        }
        bool sched_ref = 0 != (t->t_flags & SCHED_TASK_F_SCHED_REF);
        t->t_flags &= ~(uint32_t) SCHED_TASK_F_SCHED_REF;
        SCHED_UNLOCK(sched);
        links_return(sched, deps);
        if (sched_ref) {
            opal_sched_task_release(t);
            /* Last touch of the scheduler for this task: once the count is
             * zero the scheduler may be destroyed (release pairs with the
             * acquire in opal_sched_check_complete). Tasks still in work
             * or ready are counted, so the count is not zero before the
             * loops below are done with the scheduler. */
            if (1 ==
                sched_counter_fetch_add(&sched->s_inflight, (size_t) -1, memory_order_release)) {
                atomic_fetch_sub_explicit(&mca_sched_base_busy, 1, memory_order_relaxed);
            }
        }
    }
    while (NULL != ready) {
        opal_sched_task_t *t = ready;
        ready = t->t_next;
        make_ready(sched, t, false);
    }
}

int opal_sched_task_complete(opal_sched_task_t *task, int result)
{
    if (NULL == task || result > 0) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_sched_t *sched = task->t_sched;
    SCHED_LOCK(sched);
    /* Claimed here, under the lock, so that a second completion racing
     * with this one is refused. */
    bool running = OPAL_SCHED_TASK_RUNNING == task->t_state;
    if (running) {
        task->t_state = OPAL_SCHED_TASK_COMPLETED;
        task->t_result = result;
    }
    SCHED_UNLOCK(sched);
    if (!running) {
        return OPAL_ERR_BAD_PARAM;
    }
    task_finish(task, result);
    return OPAL_SUCCESS;
}

void mca_sched_base_task_run(opal_sched_task_t *task)
{
    opal_sched_t *sched = task->t_sched;
    SCHED_LOCK(sched);
    bool cancel = 0 != (task->t_flags & SCHED_TASK_F_CANCEL) ||
                  atomic_load_explicit(&sched->s_canceling, memory_order_relaxed);
    bool release = !cancel && 0 != (task->t_flags & SCHED_TASK_F_ADMITTED);
    if (release) {
        task->t_flags &= ~(uint32_t) SCHED_TASK_F_ADMITTED;
    }
    task->t_state = OPAL_SCHED_TASK_RUNNING;
    opal_sched_link_t *prep = task->t_prep_cbs;
    task->t_prep_cbs = NULL;
    SCHED_UNLOCK(sched);
    if (cancel) {
        task_finish(task, OPAL_ERR_CANCELED);
        return;
    }
    if (release) {
        sched->s_policy->sched_release(sched->s_policy_state, task);
    }
    int rc = OPAL_SUCCESS;
    ++sched_task_depth;
    while (NULL != prep) {
        opal_sched_link_t *cb = prep;
        prep = cb->l_next;
        if (OPAL_SUCCESS == rc) {
            rc = cb->l_task_cb(task, cb->l_arg);
        }
        mca_sched_base_link_return(sched, cb);
    }
    if (OPAL_SUCCESS != rc) {
        /* A prep callback refused: the body does not run. */
        task_finish(task, rc);
    } else if (NULL == task->t_body) {
        task_finish(task, OPAL_SUCCESS);
    } else {
        bool auto_complete = 0 != (task->t_flags & OPAL_SCHED_TASK_AUTO);
        rc = task->t_body(task);
        if (auto_complete || OPAL_SUCCESS != rc) {
            task_finish(task, rc > 0 ? OPAL_SUCCESS : rc);
        }
    }
    --sched_task_depth;
}

int opal_sched_task_cancel(opal_sched_task_t *task)
{
    if (NULL == task) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_sched_t *sched = task->t_sched;
    bool now = false;
    int rc = OPAL_SUCCESS;
    SCHED_LOCK(sched);
    switch (task->t_state) {
        case OPAL_SCHED_TASK_INIT:
        case OPAL_SCHED_TASK_WAITING:
            task->t_flags |= SCHED_TASK_F_CANCEL;
            if (0 != (task->t_flags & SCHED_TASK_F_DELAYED)) {
                opal_sched_task_t **pos = &sched->s_delayed;
                while (*pos != task) {
                    pos = &(*pos)->t_list_next;
                }
                *pos = task->t_list_next;
                task->t_flags &= ~(uint32_t) SCHED_TASK_F_DELAYED;
                sched_counter_add(&sched->s_ndelayed, (size_t) -1);
            }
            /* Nothing else will finish it when nothing holds it back. */
            if (0 == task->t_dep_pending) {
                task->t_state = OPAL_SCHED_TASK_RUNNING;
                now = true;
            }
            break;
        case OPAL_SCHED_TASK_READY:
            /* The policy holds it: mca_sched_base_task_run finishes it. */
            task->t_flags |= SCHED_TASK_F_CANCEL;
            break;
        default:
            rc = OPAL_ERR_RESOURCE_BUSY;
            break;
    }
    SCHED_UNLOCK(sched);
    if (now) {
        task_finish(task, OPAL_ERR_CANCELED);
    }
    return rc;
}

int opal_sched_task_reinit(opal_sched_task_t *task, uint64_t delay_ns)
{
    if (NULL == task) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_sched_t *sched = task->t_sched;
    SCHED_LOCK(sched);
    if (OPAL_SCHED_TASK_COMPLETED != task->t_state || 0 != (task->t_flags & SCHED_TASK_F_REINIT)) {
        SCHED_UNLOCK(sched);
        return OPAL_ERR_BAD_PARAM;
    }
    task->t_result = OPAL_SUCCESS;
    task->t_dep_result = OPAL_SUCCESS;
    if (0 != (task->t_flags & SCHED_TASK_F_IN_COMP)) {
        /* task_finish schedules it again once this callback returns; the
         * delay travels in t_not_before_ns until then. */
        task->t_flags |= SCHED_TASK_F_REINIT;
        task->t_not_before_ns = delay_ns;
        SCHED_UNLOCK(sched);
        return OPAL_SUCCESS;
    }
    task->t_flags &= ~(uint32_t) SCHED_TASK_F_CANCEL;
    task->t_state = OPAL_SCHED_TASK_INIT;
    SCHED_UNLOCK(sched);
    /* The scheduler's own reference for this run. */
    opal_sched_task_retain(task);
    return task_schedule(task, 0, delay_ns, true);
}

int mca_sched_base_release_delayed(opal_sched_t *sched, bool all)
{
    if (0 == atomic_load_explicit(&sched->s_ndelayed, memory_order_relaxed)) {
        return 0;
    }
    uint64_t now = opal_timer_ns();
    opal_sched_task_t *ready = NULL, **tail = &ready;
    int n = 0;
    SCHED_LOCK(sched);
    while (NULL != sched->s_delayed && (all || sched->s_delayed->t_not_before_ns <= now)) {
        opal_sched_task_t *t = sched->s_delayed;
        sched->s_delayed = t->t_list_next;
        t->t_flags &= ~(uint32_t) SCHED_TASK_F_DELAYED;
        t->t_state = OPAL_SCHED_TASK_READY;
        sched_counter_add(&sched->s_ndelayed, (size_t) -1);
        t->t_next = NULL;
        *tail = t;
        tail = &t->t_next;
        ++n;
    }
    SCHED_UNLOCK(sched);
    while (NULL != ready) {
        opal_sched_task_t *t = ready;
        ready = t->t_next;
        make_ready(sched, t, false);
    }
    return n;
}
