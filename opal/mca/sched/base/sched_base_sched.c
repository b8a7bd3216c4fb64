/*
 * Schedulers: creation with the selected policy, progress, check-complete,
 * the scheduler's completion, and task lists.
 */
#include "opal/opal_config.h"

#include <sched.h>
#include <stdlib.h>

#include "opal/mca/sched/base/base.h"
#include "opal/mca/sched/base/sched_base_internal.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/opal_error.h"

OBJ_CLASS_INSTANCE(opal_sched_link_t, opal_free_list_item_t, NULL, NULL);

/* Tasks and records per slab: enough for a burst of RPCs without growing,
 * small enough that an idle scheduler costs little. */
#define SCHED_SLAB         256
#define SCHED_WALK_INITIAL 64

opal_sched_link_t *mca_sched_base_link_get(opal_sched_t *sched)
{
    return (opal_sched_link_t *) opal_free_list_get(&sched->s_links);
}

void mca_sched_base_link_return(opal_sched_t *sched, opal_sched_link_t *link)
{
    opal_free_list_return(&sched->s_links, &link->super);
}

static void sched_free(opal_sched_t *sched)
{
    OBJ_DESTRUCT(&sched->s_links);
    OBJ_DESTRUCT(&sched->s_tasks);
    OBJ_DESTRUCT(&sched->s_lock);
    free(sched->s_walk);
    free(sched);
}

int opal_sched_create(opal_sched_t **out)
{
    if (NULL == out) {
        return OPAL_ERR_BAD_PARAM;
    }
    *out = NULL;
    if (NULL == mca_sched_base_module) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    opal_sched_t *sched = calloc(1, sizeof(*sched));
    if (NULL == sched) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    OBJ_CONSTRUCT(&sched->super, opal_list_item_t);
    OBJ_CONSTRUCT(&sched->s_lock, opal_mutex_t);
    OBJ_CONSTRUCT(&sched->s_tasks, opal_free_list_t);
    OBJ_CONSTRUCT(&sched->s_links, opal_free_list_t);
    sched->s_walk = malloc(SCHED_WALK_INITIAL * sizeof(*sched->s_walk));
    sched->s_walk_size = SCHED_WALK_INITIAL;
    int rc = NULL == sched->s_walk ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;
    if (OPAL_SUCCESS == rc) {
        rc = opal_free_list_init(&sched->s_tasks, sizeof(opal_sched_task_t),
                                 _Alignof(opal_sched_task_t), OBJ_CLASS(opal_sched_task_t), 0, 0,
                                 SCHED_SLAB, 0, SCHED_SLAB, NULL, NULL, NULL);
    }
    if (OPAL_SUCCESS == rc) {
        rc = opal_free_list_init(&sched->s_links, sizeof(opal_sched_link_t), 0,
                                 OBJ_CLASS(opal_sched_link_t), 0, 0, SCHED_SLAB, 0, SCHED_SLAB,
                                 NULL, NULL, NULL);
    }
    if (OPAL_SUCCESS != rc) {
        goto fail;
    }
    sched->s_policy = mca_sched_base_module;
    rc = sched->s_policy->sched_attach(sched, &sched->s_policy_state);
    if (OPAL_SUCCESS != rc) {
        goto fail;
    }
    rc = mca_sched_base_sched_add(sched);
    if (OPAL_SUCCESS != rc) {
        sched->s_policy->sched_detach(sched->s_policy_state);
        goto fail;
    }
    *out = sched;
    return OPAL_SUCCESS;
fail:
    sched_free(sched);
    return rc;
}

int opal_sched_progress(opal_sched_t *sched)
{
    if (NULL == sched) {
        return 0;
    }
    /* Nothing scheduled: nothing ready, nothing delayed (the idle rounds of
     * an RPC server's progress loop, most of its rounds). A task being
     * scheduled by another thread now is seen by the next pass. */
    if (0 == atomic_load_explicit(&sched->s_inflight, memory_order_relaxed)) {
        return 0;
    }
    /* One pass at a time, which also stops a body from progressing the
     * scheduler running it. acquire pairs with the release below: the
     * previous pass's writes to the policy's state are visible to this
     * one. One thread needs no exchange. */
    if (!opal_using_threads()) {
        if (atomic_load_explicit(&sched->s_progressing, memory_order_relaxed)) {
            return 0;
        }
        atomic_store_explicit(&sched->s_progressing, true, memory_order_relaxed);
    } else if (atomic_exchange_explicit(&sched->s_progressing, true, memory_order_acquire)) {
        return 0;
    }
    int n = mca_sched_base_release_delayed(sched, false);
    if (NULL != sched->s_policy->sched_progress) {
        n += sched->s_policy->sched_progress(sched->s_policy_state);
    }
    atomic_store_explicit(&sched->s_progressing, false, memory_order_release);
    return n;
}

bool opal_sched_run_now(opal_sched_t *sched, void (*fn)(void *arg), void *arg)
{
    if (NULL == sched || NULL == fn || !sched->s_policy->sched_in_order ||
        0 != atomic_load_explicit(&sched->s_inflight, memory_order_relaxed) ||
        atomic_load_explicit(&sched->s_canceling, memory_order_relaxed)) {
        return false;
    }
    /* A pass of its own, taken as opal_sched_progress takes one. */
    if (!opal_using_threads()) {
        if (atomic_load_explicit(&sched->s_progressing, memory_order_relaxed)) {
            return false;
        }
        atomic_store_explicit(&sched->s_progressing, true, memory_order_relaxed);
    } else if (atomic_exchange_explicit(&sched->s_progressing, true, memory_order_acquire)) {
        return false;
    }
    /* Scheduled by another thread since the look above: it goes first. */
    bool idle = 0 == atomic_load_explicit(&sched->s_inflight, memory_order_acquire);
    if (idle) {
        mca_sched_base_body_enter();
        fn(arg);
        mca_sched_base_body_leave();
    }
    atomic_store_explicit(&sched->s_progressing, false, memory_order_release);
    return idle;
}

bool opal_sched_check_complete(opal_sched_t *sched)
{
    return NULL != sched && 0 == atomic_load_explicit(&sched->s_inflight, memory_order_acquire);
}

int opal_sched_register_comp_cb(opal_sched_t *sched, opal_sched_comp_cb_t cb, void *cb_arg)
{
    if (NULL == sched || NULL == cb) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_sched_link_t *l = mca_sched_base_link_get(sched);
    if (NULL == l) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    l->l_sched_cb = cb;
    l->l_arg = cb_arg;
    SCHED_LOCK(sched);
    l->l_next = sched->s_comp_cbs;
    sched->s_comp_cbs = l;
    SCHED_UNLOCK(sched);
    return OPAL_SUCCESS;
}

int opal_sched_complete(opal_sched_t *sched, int result, bool cancel)
{
    if (NULL == sched || mca_sched_base_in_task()) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (cancel) {
        /* Every task that becomes ready, or that a policy hands back to
         * run, from now on completes as canceled; delayed ones go now. */
        atomic_store_explicit(&sched->s_canceling, true, memory_order_relaxed);
        (void) mca_sched_base_release_delayed(sched, true);
    }
    while (!opal_sched_check_complete(sched)) {
        int n = opal_sched_progress(sched) + opal_progress();
        if (0 == n) {
            /* Work runs elsewhere (pool workers, a peer): let it. */
            sched_yield();
        }
    }
    atomic_store_explicit(&sched->s_canceling, false, memory_order_relaxed);
    SCHED_LOCK(sched);
    opal_sched_link_t *cbs = sched->s_comp_cbs;
    sched->s_comp_cbs = NULL;
    sched->s_completed = true;
    SCHED_UNLOCK(sched);
    while (NULL != cbs) {
        opal_sched_link_t *l = cbs;
        cbs = l->l_next;
        l->l_sched_cb(sched, result, l->l_arg);
        mca_sched_base_link_return(sched, l);
    }
    return OPAL_SUCCESS;
}

int opal_sched_destroy(opal_sched_t **sched_p)
{
    if (NULL == sched_p || NULL == *sched_p || mca_sched_base_in_task()) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_sched_t *sched = *sched_p;
    if (!sched->s_completed || !opal_sched_check_complete(sched)) {
        (void) opal_sched_complete(sched, OPAL_ERR_CANCELED, true);
    }
    mca_sched_base_sched_remove(sched);
    sched->s_policy->sched_detach(sched->s_policy_state);
    sched_free(sched);
    *sched_p = NULL;
    return OPAL_SUCCESS;
}

int opal_sched_task_list_add(opal_sched_task_list_t *list, opal_sched_task_t *task)
{
    if (NULL == list || NULL == task || OPAL_SCHED_TASK_INIT != task->t_state) {
        return OPAL_ERR_BAD_PARAM;
    }
    task->t_list_next = NULL;
    if (NULL == list->l_tail) {
        list->l_head = task;
    } else {
        list->l_tail->t_list_next = task;
    }
    list->l_tail = task;
    list->l_count++;
    return OPAL_SUCCESS;
}

int opal_sched_task_list_schedule(opal_sched_task_list_t *list, uint32_t flags)
{
    if (NULL == list) {
        return OPAL_ERR_BAD_PARAM;
    }
    while (NULL != list->l_head) {
        opal_sched_task_t *t = list->l_head;
        /* Read before scheduling: the task may run and be freed at once. */
        opal_sched_task_t *next = t->t_list_next;
        int rc = opal_sched_task_schedule(t, flags);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
        list->l_head = next;
        list->l_count--;
    }
    list->l_tail = NULL;
    return OPAL_SUCCESS;
}

int opal_sched_task_list_depend(opal_sched_task_list_t *list, opal_sched_task_t *dep)
{
    if (NULL == list || NULL == dep) {
        return OPAL_ERR_BAD_PARAM;
    }
    for (opal_sched_task_t *t = list->l_head; NULL != t; t = t->t_list_next) {
        int rc = opal_sched_task_depend(t, 1, &dep);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    return OPAL_SUCCESS;
}

int opal_sched_task_depend_list(opal_sched_task_t *task, opal_sched_task_list_t *list)
{
    if (NULL == list || NULL == task) {
        return OPAL_ERR_BAD_PARAM;
    }
    for (opal_sched_task_t *t = list->l_head; NULL != t; t = t->t_list_next) {
        int rc = opal_sched_task_depend(task, 1, &t);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    return OPAL_SUCCESS;
}
