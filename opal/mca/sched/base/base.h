/*
 * The sched framework's base: the framework object, and what policies
 * (components) call to run the tasks they hold.
 */
#ifndef OPAL_MCA_SCHED_BASE_BASE_H
#define OPAL_MCA_SCHED_BASE_BASE_H

#include "opal/opal_config.h"

#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/sched/sched.h"

OPAL_DECLSPEC extern mca_base_framework_t opal_sched_base_framework;

/* The selected policy, set between opal_sched_init() and the last
 * opal_sched_finalize(). */
OPAL_DECLSPEC extern const mca_sched_base_module_t *mca_sched_base_module;
OPAL_DECLSPEC extern const mca_sched_base_component_t *mca_sched_base_selected_component;

/* Runs a READY task the policy took off its queue, in the calling thread:
 * the policy's release, then the prep callbacks and the body (or the
 * cancel completion of a task canceled while queued). The policy must not
 * touch the task afterwards: it may be completed and freed. */
OPAL_DECLSPEC void mca_sched_base_task_run(opal_sched_task_t *task);

/* True when the calling thread is inside a body or callback of sched
 * (opal_sched_complete and opal_sched_destroy refuse to run there). */
OPAL_DECLSPEC bool mca_sched_base_in_task(void);
/* Around work run as a body outside a task (opal_sched_run_now). */
void mca_sched_base_body_enter(void);
void mca_sched_base_body_leave(void);

#endif /* OPAL_MCA_SCHED_BASE_BASE_H */
