/*
 * The sched framework: where and when work runs.
 *
 * The engine (opal/mca/sched/base) is a task graph in the manner of DAOS's
 * TSE: a scheduler owns tasks; a task has a body, a private argument area,
 * a result and a reference count; it runs once every task it depends on
 * has completed, with prep callbacks before its body and completion
 * callbacks (last registered, first called) after it completes. A
 * completion callback may re-init the task, which then runs again.
 *
 * The components are policies: they decide where and when a task that is
 * ready runs. Exactly one is selected per process (`--mca sched pool`):
 *   fifo  in the progress loop, in the order tasks became ready (default);
 *   prio  in the progress loop, by priority class, earliest deadline first
 *         within a class, with a bound on queued work per class;
 *   pool  on worker threads bound with hwloc, one queue each, stealing.
 *
 * Life of a task:
 *
 *   opal_sched_task_t *t;
 *   opal_sched_task_create(sched, body, 0, &t);       caller holds 1 ref
 *   memcpy(opal_sched_task_arg(t, sizeof(a)), &a, sizeof(a));
 *   opal_sched_task_depend(t, 1, &other);             before scheduling
 *   opal_sched_task_schedule(t, 0);                   ref goes to sched
 *   ... body runs, calls opal_sched_task_complete(t, rc) (any thread) ...
 *   completion callbacks run, dependents become ready, the task is freed
 *
 * Threads: with opal_using_threads() every call below may be made from any
 * thread (pool turns it on when it starts its workers); otherwise from
 * one thread. A body and a callback run in the thread the policy picked
 * (the progress loop for fifo and prio, a worker for pool); they may
 * schedule and complete tasks, and the pool's may block.
 *
 * For an RPC engine: an incoming request becomes a task whose body is the
 * handler and whose argument area holds the request (or a pointer to it);
 * the handler completes the task when it replied. A short, non-blocking
 * handler is scheduled with OPAL_SCHED_INLINE and runs at once in the
 * receiving thread, skipping the policy. See docs/sched.md.
 */
#ifndef OPAL_MCA_SCHED_SCHED_H
#define OPAL_MCA_SCHED_SCHED_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/class/opal_free_list.h"
#include "opal/mca/mca.h"
#include "opal/threads/opal_atomic.h"

#define OPAL_SCHED_API_MAJOR 1
#define OPAL_SCHED_API_MINOR 0

/* Bytes of private argument area inside each task (TSE's private data):
 * room for a request descriptor without a second allocation. */
#define OPAL_SCHED_TASK_ARG_SIZE 128

typedef struct opal_sched_t opal_sched_t;
typedef struct opal_sched_task_t opal_sched_task_t;

/* The work of a task. Runs in the thread the policy chose. Returns
 * OPAL_SUCCESS when the task is (or will be) completed with
 * opal_sched_task_complete(); a negative error completes the task with
 * that error if the body did not complete it. With OPAL_SCHED_TASK_AUTO
 * the return value always completes the task. */
typedef int (*opal_sched_task_fn_t)(opal_sched_task_t *task);

/* A prep or completion callback: called once, in the thread that runs the
 * body (prep) or completes the task (completion), with the argument given
 * at registration. A completion callback may call opal_sched_task_reinit()
 * (the callbacks not yet called stay registered for the next run). A
 * non-zero return from a prep callback completes the task with it,
 * without running the body; a completion callback's return is ignored. */
typedef int (*opal_sched_task_cb_t)(opal_sched_task_t *task, void *cb_arg);

/* Called once by opal_sched_complete() when the scheduler finished, with
 * its result. */
typedef void (*opal_sched_comp_cb_t)(opal_sched_t *sched, int result, void *cb_arg);

/* Task creation flags. */
enum {
    /* The body's return value completes the task (RPC handlers, small
     * functions): no opal_sched_task_complete() needed. */
    OPAL_SCHED_TASK_AUTO = 0x1,
};

/* Scheduling flags. */
enum {
    /* Run the body now in the calling thread when the task is ready,
     * skipping the policy (a short, non-blocking RPC handler). A task
     * that still waits for dependencies or a delay is queued as usual. */
    OPAL_SCHED_INLINE = 0x1,
};

/* Where a task is in its life. */
typedef enum {
    OPAL_SCHED_TASK_INIT = 0,  /* created or re-inited, not scheduled */
    OPAL_SCHED_TASK_WAITING,   /* scheduled, waiting for deps or a delay */
    OPAL_SCHED_TASK_READY,     /* handed to the policy */
    OPAL_SCHED_TASK_RUNNING,   /* body started, not completed */
    OPAL_SCHED_TASK_COMPLETED, /* completed; callbacks run or done */
} opal_sched_task_state_t;

struct opal_sched_link_t;

/*
 * A task. Users reach it through the functions below; the fields marked
 * "policy" belong to the component holding the ready task, the others to
 * the engine.
 */
struct opal_sched_task_t {
    opal_free_list_item_t super;
    opal_sched_t *t_sched;
    opal_sched_task_fn_t t_body;
    /* Engine state, under the scheduler's lock once scheduled. */
    opal_sched_task_state_t t_state;
    uint32_t t_flags;
    int t_result;
    /* The first error of a dependency (0 when all succeeded). */
    int t_dep_result;
    /* Dependencies not yet completed. */
    int32_t t_dep_pending;
    opal_atomic_int32_t t_refcount;
    /* Tasks that wait for this one, callbacks (LIFO). */
    struct opal_sched_link_t *t_dependents;
    struct opal_sched_link_t *t_prep_cbs;
    struct opal_sched_link_t *t_comp_cbs;
    /* Absolute opal_timer_ns() before which it does not become ready. */
    uint64_t t_not_before_ns;
    /* Mark of the cycle check's walk. */
    uint64_t t_visit;
    /* Next in a user's opal_sched_task_list_t or the delayed list. */
    opal_sched_task_t *t_list_next;
    /* policy: priority class (0 is the most urgent) and absolute deadline
     * (opal_timer_ns(); 0: none), set by opal_sched_task_set_priority. */
    int t_priority;
    uint64_t t_deadline_ns;
    /* policy: queue link, order and position, free for its use while the
     * task is READY. */
    opal_sched_task_t *t_next;
    uint64_t t_seq;
    size_t t_pos;
    /* The private argument area (aligned for any type). */
    _Alignas(max_align_t) unsigned char t_arg[OPAL_SCHED_TASK_ARG_SIZE];
};
OBJ_CLASS_DECLARATION(opal_sched_task_t);

/* Tasks gathered to be scheduled or depended on together (TSE's task
 * list); a task is in at most one list. Initialise with
 * OPAL_SCHED_TASK_LIST_INIT or zero it. */
typedef struct opal_sched_task_list_t {
    opal_sched_task_t *l_head;
    opal_sched_task_t *l_tail;
    size_t l_count;
} opal_sched_task_list_t;
#define OPAL_SCHED_TASK_LIST_INIT                                                                  \
    {                                                                                              \
        NULL, NULL, 0                                                                              \
    }

/* ------------------------------------------------------------------ */
/* User-facing calls (the engine in opal/mca/sched/base)               */
/* ------------------------------------------------------------------ */

/* Opens the sched framework and selects the policy (counted; it also
 * initialises the utility layer and the MCA base). OPAL_ERR_NOT_FOUND when
 * no policy could run, OPAL_ERR_BAD_VALUE for a bad `sched` selection. */
OPAL_DECLSPEC int opal_sched_init(void);

/* Drops one opal_sched_init(); every scheduler must be destroyed first
 * (OPAL_ERR_RESOURCE_BUSY otherwise). */
OPAL_DECLSPEC int opal_sched_finalize(void);

/* The selected policy's name ("fifo"), or NULL before opal_sched_init(). */
OPAL_DECLSPEC const char *opal_sched_policy_name(void);

/* Creates a scheduler run by the selected policy. Its ready work also runs
 * from opal_progress(). */
OPAL_DECLSPEC int opal_sched_create(opal_sched_t **sched);

/* Cancels what has not run, waits for what runs, then frees the scheduler
 * (its completion callbacks run if opal_sched_complete did not). *sched
 * becomes NULL. */
OPAL_DECLSPEC int opal_sched_destroy(opal_sched_t **sched);

/* Runs the ready work the policy runs in the calling thread, and releases
 * delayed tasks whose time came. Returns the number of tasks started
 * (>= 0). Returns 0 while another pass over this scheduler runs (another
 * thread, or the body of a task this pass runs). */
OPAL_DECLSPEC int opal_sched_progress(opal_sched_t *sched);

/* True when every scheduled task completed (nothing waiting, ready,
 * delayed or running). */
OPAL_DECLSPEC bool opal_sched_check_complete(opal_sched_t *sched);

/* Runs fn(arg) now, in the calling thread, as a pass of sched that runs
 * only it, when a task scheduled now would come to that: the policy runs
 * tasks in the order they become ready, in the caller's progress (fifo);
 * nothing is scheduled on sched (waiting, ready, delayed or running); no
 * pass over it is under way (another thread's, or one whose body called
 * this); it is not being completed (opal_sched_complete). Inside fn, as inside a body,
 * opal_sched_progress of sched returns 0 and opal_sched_complete /
 * destroy are refused. Returns true when fn ran; false: make it a task.
 * What it saves is the task (create, queue, run, finish: about 400
 * instructions), for callers that would schedule a one-off body (the rpc
 * engine's handlers). */
OPAL_DECLSPEC bool opal_sched_run_now(opal_sched_t *sched, void (*fn)(void *arg), void *arg);

/* Registers a callback run once when opal_sched_complete() finishes. */
OPAL_DECLSPEC int opal_sched_register_comp_cb(opal_sched_t *sched, opal_sched_comp_cb_t cb,
                                              void *cb_arg);

/* Finishes the scheduler: with cancel, cancels every task that has not
 * run; then progresses until every task completed and calls the
 * scheduler's completion callbacks with result. Returns OPAL_SUCCESS.
 * A scheduled task that waits for a task nobody schedules keeps this
 * waiting: schedule (or cancel) every task others depend on. */
OPAL_DECLSPEC int opal_sched_complete(opal_sched_t *sched, int result, bool cancel);

/* Creates a task (flags: OPAL_SCHED_TASK_AUTO). The caller holds one
 * reference, which scheduling hands to the scheduler. body NULL makes an
 * empty task that completes as soon as it runs (a join point). */
OPAL_DECLSPEC int opal_sched_task_create(opal_sched_t *sched, opal_sched_task_fn_t body,
                                         uint32_t flags, opal_sched_task_t **task);

/* The task's argument area if size fits in it (OPAL_SCHED_TASK_ARG_SIZE),
 * else NULL. Valid while the task lives. */
static inline void *opal_sched_task_arg(opal_sched_task_t *task, size_t size)
{
    return size <= OPAL_SCHED_TASK_ARG_SIZE ? (void *) task->t_arg : NULL;
}

/* The scheduler owning the task. */
static inline opal_sched_t *opal_sched_task_sched(const opal_sched_task_t *task)
{
    return task->t_sched;
}

/* The first error a dependency completed with (0 if none): a dependent of
 * a failed task still runs and decides. */
static inline int opal_sched_task_dep_result(const opal_sched_task_t *task)
{
    return task->t_dep_result;
}

/* The result the task completed with (valid in completion callbacks and
 * after completion). */
static inline int opal_sched_task_result(const opal_sched_task_t *task)
{
    return task->t_result;
}

/* Priority class (0 is the most urgent) and absolute deadline in
 * opal_timer_ns() time (0: none), read by the prio policy; set before
 * scheduling. OPAL_ERR_BAD_PARAM for a negative class. */
OPAL_DECLSPEC int opal_sched_task_set_priority(opal_sched_task_t *task, int prio_class,
                                               uint64_t deadline_ns);

/* Makes task wait for each of deps (before task is scheduled). A
 * dependency that already completed only passes on its error.
 * OPAL_ERR_BAD_PARAM for a task already scheduled or a task of another
 * scheduler, OPAL_ERR_WOULD_BLOCK when it would close a cycle (then no
 * dependency of this call was added). */
OPAL_DECLSPEC int opal_sched_task_depend(opal_sched_task_t *task, int ndeps,
                                         opal_sched_task_t *const *deps);

/* Registers a prep callback (before the body) and/or a completion
 * callback (after completion; last registered, first called). */
OPAL_DECLSPEC int opal_sched_task_register_cbs(opal_sched_task_t *task,
                                               opal_sched_task_cb_t prep_cb, void *prep_arg,
                                               opal_sched_task_cb_t comp_cb, void *comp_arg);

/* Schedules the task (flags: OPAL_SCHED_INLINE); it runs once its
 * dependencies completed. The caller's reference goes to the scheduler.
 * OPAL_ERR_RESOURCE_BUSY when the policy refused it (prio's admission
 * bound): the caller keeps the task and its reference. */
OPAL_DECLSPEC int opal_sched_task_schedule(opal_sched_task_t *task, uint32_t flags);

/* The same, becoming ready no earlier than delay_ns from now (released by
 * opal_sched_progress). */
OPAL_DECLSPEC int opal_sched_task_schedule_delayed(opal_sched_task_t *task, uint32_t flags,
                                                   uint64_t delay_ns);

/* Completes a running task with result (0 or a negative error), from the
 * body or later from any thread: completion callbacks run in this thread,
 * then dependents become ready. Once only (OPAL_ERR_BAD_PARAM after). */
OPAL_DECLSPEC int opal_sched_task_complete(opal_sched_task_t *task, int result);

/* Cancels a task that has not started: it completes with
 * OPAL_ERR_CANCELED without running its body, and so do its dependents.
 * At once when nothing waits to be completed first, otherwise as soon as
 * its dependencies completed or the policy reaches it.
 * OPAL_ERR_RESOURCE_BUSY when it already runs or completed. */
OPAL_DECLSPEC int opal_sched_task_cancel(opal_sched_task_t *task);

/* Makes a completed task run again, no earlier than delay_ns from now:
 * from one of its completion callbacks (the scheduler keeps its
 * reference; dependencies added in the callback are waited for), or later
 * by a caller holding a reference (the scheduler takes one of its own).
 * OPAL_ERR_BAD_PARAM when the task has not completed. */
OPAL_DECLSPEC int opal_sched_task_reinit(opal_sched_task_t *task, uint64_t delay_ns);

/* Reference counting: a task lives while someone holds a reference. */
OPAL_DECLSPEC void opal_sched_task_retain(opal_sched_task_t *task);
OPAL_DECLSPEC void opal_sched_task_release(opal_sched_task_t *task);

/* Task lists. add: appends an unscheduled task. schedule: schedules every
 * task and empties the list (stops at the first refusal, which stays in
 * the list with those after it). list_depend: every task of the list
 * waits for dep. depend_list: task waits for every task of the list. */
OPAL_DECLSPEC int opal_sched_task_list_add(opal_sched_task_list_t *list, opal_sched_task_t *task);
OPAL_DECLSPEC int opal_sched_task_list_schedule(opal_sched_task_list_t *list, uint32_t flags);
OPAL_DECLSPEC int opal_sched_task_list_depend(opal_sched_task_list_t *list, opal_sched_task_t *dep);
OPAL_DECLSPEC int opal_sched_task_depend_list(opal_sched_task_t *task,
                                              opal_sched_task_list_t *list);

/* ------------------------------------------------------------------ */
/* The component / module contract (what a policy implements)         */
/* ------------------------------------------------------------------ */

/*
 * A policy's operations. The engine owns dependencies, callbacks and
 * reference counts; a policy only holds tasks that are READY until it
 * runs them with mca_sched_base_task_run() (opal/mca/sched/base/base.h).
 * `state` is what sched_attach returned for the scheduler.
 */
typedef struct mca_sched_base_module_t {
    mca_base_module_t super;

    /* A scheduler is created: allocate the policy's state for it (and
     * start its threads). Called from the creating thread. Required. */
    int (*sched_attach)(opal_sched_t *sched, void **state);

    /* The scheduler is destroyed; no task is in the policy any more: stop
     * threads, free state. Required. */
    void (*sched_detach)(void *state);

    /* A task is being scheduled (before it waits for anything): account
     * it or refuse it with OPAL_ERR_RESOURCE_BUSY. force (a re-init) must
     * not refuse. Called from the scheduling thread with the scheduler's
     * lock held: it must not call into the engine. Optional: NULL admits
     * everything. */
    int (*sched_admit)(void *state, opal_sched_task_t *task, bool force);

    /* An admitted task leaves the policy's account: it starts running or
     * completes without running (canceled). Once per admit. Any thread.
     * Optional (needed with sched_admit). */
    void (*sched_release)(void *state, opal_sched_task_t *task);

    /* A task is READY (dependencies complete, delay over): queue it. Any
     * thread, possibly from inside a body or callback; must not block nor
     * run the task here. Required. */
    void (*sched_enqueue)(void *state, opal_sched_task_t *task);

    /* Runs queued work in the calling thread (opal_sched_progress, the
     * progress loop), one thread at a time. Returns the number of tasks
     * started. Optional: NULL when the policy runs tasks on its own
     * threads (pool). */
    int (*sched_progress)(void *state);

    /* True when sched_progress runs ready tasks in the order they became
     * ready, with no bound but its batch: then a task that finds nothing
     * scheduled would run next anyway, and opal_sched_run_now may run
     * work in place of one. */
    bool sched_in_order;
} mca_sched_base_module_t;

/* The component: an MCA component whose query returns the module. */
typedef struct mca_sched_base_component_t {
    mca_base_component_t sched_version;
} mca_sched_base_component_t;

#define MCA_SCHED_BASE_VERSION_1_0_0                                                               \
    MCA_BASE_VERSION_OPAL("sched", OPAL_SCHED_API_MAJOR, OPAL_SCHED_API_MINOR, 0)

#endif /* OPAL_MCA_SCHED_SCHED_H */
