/*
 * sched/fifo: ready tasks run in the progress loop, in the order they
 * became ready. The default policy.
 */
#ifndef OPAL_MCA_SCHED_FIFO_SCHED_FIFO_H
#define OPAL_MCA_SCHED_FIFO_SCHED_FIFO_H

#include "opal/opal_config.h"

#include "opal/mca/sched/sched.h"

/* Tasks one progress call runs at most, so that a task that keeps
 * re-queueing itself cannot hold the progress loop (sched_fifo_batch). */
extern unsigned int mca_sched_fifo_batch;

OPAL_DECLSPEC extern const mca_sched_base_component_t mca_sched_fifo_component;
extern const mca_sched_base_module_t mca_sched_fifo_module;

#endif /* OPAL_MCA_SCHED_FIFO_SCHED_FIFO_H */
