/*
 * The engine's private structures: the scheduler and the small records
 * (dependency edges, callbacks) it hangs on tasks.
 *
 * Locking: s_lock (taken only when opal_using_threads()) guards every
 * task's engine state once it is scheduled (t_state, t_flags, dependency
 * counts and edges), the delayed list and the scheduler's callbacks. It
 * is never held while a body, a callback or a policy operation runs (but
 * sched_admit, which must not call back), so those may call back into the
 * engine. The base's list of schedulers
 * (sched_base_frame.c) is taken before s_lock, never after.
 */
#ifndef OPAL_MCA_SCHED_BASE_SCHED_BASE_INTERNAL_H
#define OPAL_MCA_SCHED_BASE_SCHED_BASE_INTERNAL_H

#include "opal/opal_config.h"

#include "opal/class/opal_free_list.h"
#include "opal/class/opal_list.h"
#include "opal/mca/sched/sched.h"
#include "opal/threads/opal_mutex.h"

/* Engine-private bits of t_flags (the low byte holds the user's flags). */
enum {
    /* Cancel requested: complete with OPAL_ERR_CANCELED instead of running. */
    SCHED_TASK_F_CANCEL = 0x100,
    /* The policy admitted it and has not released it yet. */
    SCHED_TASK_F_ADMITTED = 0x200,
    /* A completion callback re-inited it: run again after the callbacks. */
    SCHED_TASK_F_REINIT = 0x400,
    /* Its completion callbacks are running (re-init from inside them). */
    SCHED_TASK_F_IN_COMP = 0x800,
    /* The scheduler holds a reference (scheduled and not yet finished). */
    SCHED_TASK_F_SCHED_REF = 0x1000,
    /* It sits in the scheduler's delayed list. */
    SCHED_TASK_F_DELAYED = 0x2000,
};

/* One record hung on a task or a scheduler: a dependent, or a callback. */
typedef struct opal_sched_link_t {
    opal_free_list_item_t super;
    struct opal_sched_link_t *l_next;
    opal_sched_task_t *l_task;
    opal_sched_task_cb_t l_task_cb;
    opal_sched_comp_cb_t l_sched_cb;
    void *l_arg;
} opal_sched_link_t;
OBJ_CLASS_DECLARATION(opal_sched_link_t);

struct opal_sched_t {
    /* In the base's list of schedulers that opal_progress() drives. */
    opal_list_item_t super;
    opal_mutex_t s_lock;
    opal_free_list_t s_tasks;
    opal_free_list_t s_links;
    const mca_sched_base_module_t *s_policy;
    void *s_policy_state;
    /* Scheduled tasks not finished yet (atomic: the last decrement is
     * made after the scheduler's lock was dropped). */
    opal_atomic_size_t s_inflight;
    /* Tasks waiting for their time, sorted by t_not_before_ns (s_lock);
     * s_ndelayed lets progress skip the lock when there is none. */
    opal_sched_task_t *s_delayed;
    opal_atomic_size_t s_ndelayed;
    /* opal_sched_complete(cancel) is under way: nothing new runs. */
    opal_atomic_bool_t s_canceling;
    /* One thread at a time runs the policy's progress. */
    opal_atomic_bool_t s_progressing;
    /* The cycle check's walk (s_lock): a mark per walk and its stack. */
    uint64_t s_walk_mark;
    opal_sched_task_t **s_walk;
    size_t s_walk_size;
    /* The scheduler's completion callbacks, and whether they ran. */
    opal_sched_link_t *s_comp_cbs;
    bool s_completed;
};

#define SCHED_LOCK(s)   OPAL_THREAD_LOCK(&(s)->s_lock)
#define SCHED_UNLOCK(s) OPAL_THREAD_UNLOCK(&(s)->s_lock)

/* How many schedulers have tasks in flight (each counts itself when its
 * s_inflight leaves 0 and uncounts itself when it returns to 0): the
 * progress callback skips its lock and its list while it is 0. */
extern opal_atomic_size_t mca_sched_base_busy;

/* Writes a counter that only s_lock's holder changes. */
static inline void sched_counter_add(opal_atomic_size_t *counter, size_t delta)
{
    atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + delta,
                          memory_order_relaxed);
}

/* Adds delta to a counter several threads may change, and returns the old
 * value. A read-modify-write with a lock prefix costs about as much as the
 * rest of an empty task, so one thread does a plain load and store. */
static inline size_t sched_counter_fetch_add(opal_atomic_size_t *counter, size_t delta,
                                             memory_order order)
{
    if (!opal_using_threads()) {
        size_t old = atomic_load_explicit(counter, memory_order_relaxed);
        atomic_store_explicit(counter, old + delta, memory_order_relaxed);
        return old;
    }
    return atomic_fetch_add_explicit(counter, delta, order);
}

/* A record from the scheduler's free list, or NULL when memory ran out. */
opal_sched_link_t *mca_sched_base_link_get(opal_sched_t *sched);
void mca_sched_base_link_return(opal_sched_t *sched, opal_sched_link_t *link);

/* Releases the delayed tasks whose time came (all with all). Returns how
 * many became ready. */
int mca_sched_base_release_delayed(opal_sched_t *sched, bool all);

/* The base's list of schedulers for opal_progress(). */
int mca_sched_base_sched_add(opal_sched_t *sched);
void mca_sched_base_sched_remove(opal_sched_t *sched);

#endif /* OPAL_MCA_SCHED_BASE_SCHED_BASE_INTERNAL_H */
