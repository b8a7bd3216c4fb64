/*
 * sched/prio: ready tasks run in the progress loop by priority class
 * (0 first), earliest deadline first within a class (then in the order
 * they became ready). Admission control: at most sched_prio_max_queued
 * tasks of a class are scheduled and not yet started; past that,
 * opal_sched_task_schedule() fails with OPAL_ERR_RESOURCE_BUSY.
 */
#ifndef OPAL_MCA_SCHED_PRIO_SCHED_PRIO_H
#define OPAL_MCA_SCHED_PRIO_SCHED_PRIO_H

#include "opal/opal_config.h"

#include "opal/mca/sched/sched.h"
#include "opal/threads/opal_atomic.h"

/* The most classes sched_prio_classes may ask for. */
#define SCHED_PRIO_MAX_CLASSES 16

/* Per-class counters, summed over the process's prio schedulers and shown
 * as performance variables sched_prio_class<N>_<name>. Relaxed atomics:
 * statistics, not synchronisation. */
typedef struct sched_prio_counters_t {
    opal_atomic_uint64_t queued;  /* admitted */
    opal_atomic_uint64_t run;     /* taken off the queue to run */
    opal_atomic_uint64_t refused; /* refused by the bound */
    opal_atomic_uint64_t late;    /* started after their deadline */
} sched_prio_counters_t;

typedef struct sched_prio_config_t {
    unsigned int classes;
    unsigned int max_queued;
    unsigned int batch;
    sched_prio_counters_t counters[SCHED_PRIO_MAX_CLASSES];
} sched_prio_config_t;

extern sched_prio_config_t mca_sched_prio_config;

OPAL_DECLSPEC extern const mca_sched_base_component_t mca_sched_prio_component;
extern const mca_sched_base_module_t mca_sched_prio_module;

#endif /* OPAL_MCA_SCHED_PRIO_SCHED_PRIO_H */
