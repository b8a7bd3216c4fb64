/*
 * sched/pool binding: which CPUs each worker runs on, planned once per
 * pool from the process's own binding (what mcarun or the launcher gave
 * it), so that workers never leave the CPUs the process was given.
 */
#include "opal/opal_config.h"

#include <stdlib.h>

#include "opal/mca/sched/base/base.h"
#include "opal/mca/sched/pool/sched_pool.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

#if OPAL_HAVE_HWLOC
#include <hwloc.h>

struct sched_pool_binding_t {
    hwloc_topology_t topology;
    unsigned int count;
    /* What worker i binds to: sets[i % count]. */
    hwloc_bitmap_t *sets;
};

void mca_sched_pool_binding_free(sched_pool_binding_t *b)
{
    if (NULL == b) {
        return;
    }
    for (unsigned int i = 0; i < b->count; ++i) {
        hwloc_bitmap_free(b->sets[i]);
    }
    free(b->sets);
    hwloc_topology_destroy(b->topology);
    free(b);
}

/* The CPUs of the process's binding (all allowed CPUs when unbound). */
static hwloc_bitmap_t process_cpus(hwloc_topology_t topology)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (NULL == set) {
        return NULL;
    }
    if (0 != hwloc_get_cpubind(topology, set, HWLOC_CPUBIND_PROCESS) || hwloc_bitmap_iszero(set)) {
        hwloc_bitmap_copy(set, hwloc_topology_get_allowed_cpuset(topology));
    }
    hwloc_bitmap_and(set, set, hwloc_topology_get_allowed_cpuset(topology));
    return set;
}

/* One set per core that holds CPUs of the binding, or one set for the
 * NUMA nodes that do. */
static int plan_sets(sched_pool_binding_t *b, int mode, hwloc_bitmap_t cpus)
{
    hwloc_obj_type_t type = SCHED_POOL_BIND_NUMA == mode ? HWLOC_OBJ_NUMANODE : HWLOC_OBJ_CORE;
    int n = hwloc_get_nbobjs_by_type(b->topology, type);
    b->sets = calloc(n > 0 ? (size_t) n : 1, sizeof(*b->sets));
    if (NULL == b->sets) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    hwloc_bitmap_t numa = NULL;
    for (int i = 0; i < n; ++i) {
        hwloc_obj_t obj = hwloc_get_obj_by_type(b->topology, type, (unsigned) i);
        if (NULL == obj || NULL == obj->cpuset || !hwloc_bitmap_intersects(obj->cpuset, cpus)) {
            continue;
        }
        if (SCHED_POOL_BIND_NUMA == mode) {
            if (NULL == numa && NULL == (numa = hwloc_bitmap_alloc())) {
                return OPAL_ERR_OUT_OF_RESOURCE;
            }
            hwloc_bitmap_or(numa, numa, obj->cpuset);
            continue;
        }
        hwloc_bitmap_t set = hwloc_bitmap_dup(obj->cpuset);
        if (NULL == set) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        hwloc_bitmap_and(set, set, cpus);
        b->sets[b->count++] = set;
    }
    if (NULL != numa) {
        b->sets[b->count++] = numa;
    }
    if (0 == b->count) {
        /* No core or NUMA object seen (a sparse topology): the binding. */
        if (NULL == (b->sets[0] = hwloc_bitmap_dup(cpus))) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        b->count = 1;
    }
    return OPAL_SUCCESS;
}

int mca_sched_pool_binding_plan(int mode, unsigned int *nworkers, sched_pool_binding_t **binding)
{
    *binding = NULL;
    if (SCHED_POOL_BIND_NONE == mode && 0 != *nworkers) {
        return OPAL_SUCCESS;
    }
    sched_pool_binding_t *b = calloc(1, sizeof(*b));
    if (NULL == b) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    int rc = OPAL_ERR_NOT_AVAILABLE;
    hwloc_bitmap_t cpus = NULL;
    if (0 != hwloc_topology_init(&b->topology)) {
        free(b);
        b = NULL;
        goto out;
    }
    if (0 != hwloc_topology_load(b->topology) || NULL == (cpus = process_cpus(b->topology))) {
        goto out;
    }
    if (0 == *nworkers) {
        int cores = hwloc_get_nbobjs_inside_cpuset_by_type(b->topology, cpus, HWLOC_OBJ_CORE);
        *nworkers = cores > 0 ? (unsigned int) cores : 1;
    }
    rc = SCHED_POOL_BIND_NONE == mode ? OPAL_ERR_NOT_AVAILABLE : plan_sets(b, mode, cpus);
out:
    if (NULL != cpus) {
        hwloc_bitmap_free(cpus);
    }
    if (OPAL_SUCCESS != rc) {
        if (OPAL_ERR_NOT_AVAILABLE != rc || SCHED_POOL_BIND_NONE != mode) {
            opal_output_verbose(MCA_BASE_VERBOSE_COMPONENT,
                                opal_sched_base_framework.framework_output,
                                "pool: workers stay unbound: %s",
                                OPAL_ERR_NOT_AVAILABLE == rc ? "hwloc could not read the topology"
                                                             : opal_strerror(rc));
        }
        mca_sched_pool_binding_free(b);
        b = NULL;
    }
    if (0 == *nworkers) {
        *nworkers = 1;
    }
    *binding = b;
    return OPAL_SUCCESS;
}

void mca_sched_pool_binding_apply(sched_pool_binding_t *b, unsigned int index)
{
    if (NULL == b) {
        return;
    }
    if (0 != hwloc_set_cpubind(b->topology, b->sets[index % b->count], HWLOC_CPUBIND_THREAD)) {
        char *text = NULL;
        (void) hwloc_bitmap_list_asprintf(&text, b->sets[index % b->count]);
        opal_output_verbose(MCA_BASE_VERBOSE_COMPONENT, opal_sched_base_framework.framework_output,
                            "pool: worker %u could not bind to CPUs %s", index,
                            NULL == text ? "?" : text);
        free(text);
    }
}

#else /* !OPAL_HAVE_HWLOC */

#include <unistd.h>

int mca_sched_pool_binding_plan(int mode, unsigned int *nworkers, sched_pool_binding_t **binding)
{
    *binding = NULL;
    if (0 == *nworkers) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        *nworkers = cpus > 0 ? (unsigned int) cpus : 1;
    }
    if (SCHED_POOL_BIND_NONE != mode) {
        opal_output_verbose(MCA_BASE_VERBOSE_COMPONENT, opal_sched_base_framework.framework_output,
                            "pool: workers stay unbound: built without hwloc");
    }
    return OPAL_SUCCESS;
}

void mca_sched_pool_binding_apply(sched_pool_binding_t *binding, unsigned int index)
{
    (void) binding;
    (void) index;
}

void mca_sched_pool_binding_free(sched_pool_binding_t *binding)
{
    (void) binding;
}

#endif /* OPAL_HAVE_HWLOC */
