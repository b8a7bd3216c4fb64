/*
 * sched/pool: ready tasks run on worker threads, each with its own queue,
 * an idle worker stealing from the others; a task may block without
 * stalling the others or the progress loop. Workers are bound with hwloc
 * to the cores of the process's binding (one each, round robin) or to its
 * NUMA nodes.
 */
#ifndef OPAL_MCA_SCHED_POOL_SCHED_POOL_H
#define OPAL_MCA_SCHED_POOL_SCHED_POOL_H

#include "opal/opal_config.h"

#include "opal/mca/sched/sched.h"

/* Where workers are bound (sched_pool_bind). */
typedef enum {
    SCHED_POOL_BIND_NONE = 0,
    SCHED_POOL_BIND_CORE = 1,
    SCHED_POOL_BIND_NUMA = 2,
} sched_pool_bind_t;

typedef struct sched_pool_config_t {
    /* Workers per scheduler; 0: one per core of the process's binding. */
    unsigned int workers;
    int bind;
} sched_pool_config_t;

extern sched_pool_config_t mca_sched_pool_config;

OPAL_DECLSPEC extern const mca_sched_base_component_t mca_sched_pool_component;
extern const mca_sched_base_module_t mca_sched_pool_module;

/* The binding plan of one pool: what each worker binds to. */
typedef struct sched_pool_binding_t sched_pool_binding_t;

/* Plans the binding of nworkers workers (*nworkers 0: one per core of the
 * process's binding, set on return). *binding NULL: workers stay unbound
 * (sched_pool_bind none, or no hwloc; said at sched_base_verbose). */
int mca_sched_pool_binding_plan(int mode, unsigned int *nworkers, sched_pool_binding_t **binding);

/* Binds the calling thread as worker index; failures are reported at
 * verbosity and leave the thread unbound. */
void mca_sched_pool_binding_apply(sched_pool_binding_t *binding, unsigned int index);

void mca_sched_pool_binding_free(sched_pool_binding_t *binding);

#endif /* OPAL_MCA_SCHED_POOL_SCHED_POOL_H */
