/*
 * Where a process runs: its binding, read from the operating system, and
 * the locality of two processes, from hwloc's view of this machine.
 *
 * The machine's topology costs several milliseconds to load, so it is
 * loaded only when needed (a bound process, a bound peer on this node)
 * and then kept until opal_proc_finalize.
 */
#include "opal/opal_config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if OPAL_HAVE_HWLOC
#include <hwloc.h>
#endif
#if defined(__linux__)
#include <sched.h>
#endif

#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_proc_internal.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

#if OPAL_HAVE_HWLOC

/* Taken after opal_proc.c's table_lock when both are held. */
static pthread_mutex_t topology_lock = PTHREAD_MUTEX_INITIALIZER;
static hwloc_topology_t machine = NULL;

/* This machine's topology (loaded on first call), or NULL when hwloc
 * cannot load it. */
static hwloc_topology_t machine_topology(void)
{
    pthread_mutex_lock(&topology_lock);
    if (NULL == machine) {
        hwloc_topology_t topology;
        if (0 != hwloc_topology_init(&topology)) {
            goto out;
        }
        /* Only packages, NUMA nodes and PUs are looked at. */
        (void) hwloc_topology_set_cache_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_NONE);
        (void) hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_NONE);
        if (0 != hwloc_topology_load(topology)) {
            opal_output(0, "opal_proc: hwloc could not load this machine's topology: only "
                           "node-level locality is known");
            hwloc_topology_destroy(topology);
            goto out;
        }
        machine = topology;
    }
out:;
    hwloc_topology_t topology = machine;
    pthread_mutex_unlock(&topology_lock);
    return topology;
}

void opal_proc_topology_release(void)
{
    pthread_mutex_lock(&topology_lock);
    if (NULL != machine) {
        hwloc_topology_destroy(machine);
        machine = NULL;
    }
    pthread_mutex_unlock(&topology_lock);
}

/* Parses a cpuset list; NULL when it is not one (or is empty). */
static hwloc_bitmap_t parse_cpuset(const char *text)
{
    if (strspn(text, "0123456789,-") != strlen(text)) {
        return NULL;
    }
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (NULL == set) {
        return NULL;
    }
    if (0 != hwloc_bitmap_list_sscanf(set, text) || hwloc_bitmap_iszero(set) ||
        hwloc_bitmap_isfull(set)) {
        hwloc_bitmap_free(set);
        return NULL;
    }
    return set;
}

/* True when one object of type holds CPUs of both sets. */
static bool share_object(hwloc_topology_t topology, hwloc_obj_type_t type, hwloc_const_bitmap_t a,
                         hwloc_const_bitmap_t b)
{
    for (hwloc_obj_t obj = hwloc_get_next_obj_by_type(topology, type, NULL); NULL != obj;
         obj = hwloc_get_next_obj_by_type(topology, type, obj)) {
        if (hwloc_bitmap_intersects(obj->cpuset, a) && hwloc_bitmap_intersects(obj->cpuset, b)) {
            return true;
        }
    }
    return false;
}

static int bound_locality(hwloc_topology_t topology, const char *my_cpuset, const char *peer_cpuset,
                          uint16_t *locality)
{
    hwloc_bitmap_t mine = parse_cpuset(my_cpuset);
    hwloc_bitmap_t theirs = parse_cpuset(peer_cpuset);
    int rc = OPAL_ERR_BAD_VALUE;
    if (NULL == mine || NULL == theirs) {
        goto out;
    }
    rc = OPAL_SUCCESS;
    if (NULL == topology) {
        topology = machine_topology();
        if (NULL == topology) {
            goto out;
        }
    }
    if (share_object(topology, HWLOC_OBJ_PACKAGE, mine, theirs)) {
        *locality |= OPAL_PROC_ON_PACKAGE;
    }
    if (share_object(topology, HWLOC_OBJ_NUMANODE, mine, theirs)) {
        *locality |= OPAL_PROC_ON_NUMA;
    }
out:
    if (NULL != mine) {
        hwloc_bitmap_free(mine);
    }
    if (NULL != theirs) {
        hwloc_bitmap_free(theirs);
    }
    return rc;
}

/* True when the affinity mask certainly covers every online CPU, which
 * settles "not bound" without loading the topology. */
static bool runs_everywhere(void)
{
#if defined(__linux__)
    cpu_set_t mask;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online > 0 && 0 == sched_getaffinity(0, sizeof(mask), &mask) &&
        CPU_COUNT(&mask) >= online) {
        return true;
    }
#endif
    return false;
}

int opal_proc_get_binding(char **cpuset)
{
    if (NULL == cpuset) {
        return OPAL_ERR_BAD_PARAM;
    }
    *cpuset = NULL;
    if (runs_everywhere()) {
        return OPAL_SUCCESS;
    }
    hwloc_topology_t topology = machine_topology();
    if (NULL == topology) {
        return OPAL_SUCCESS;
    }
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (NULL == set) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    int rc = OPAL_SUCCESS;
    /* A binding that leaves out no allowed CPU is no binding: the process
     * may run anywhere it is allowed to (e.g. in a cgroup's cpuset). */
    if (0 == hwloc_get_cpubind(topology, set, HWLOC_CPUBIND_PROCESS) &&
        !hwloc_bitmap_isincluded(hwloc_topology_get_allowed_cpuset(topology), set)) {
        hwloc_bitmap_and(set, set, hwloc_topology_get_allowed_cpuset(topology));
        if (hwloc_bitmap_list_asprintf(cpuset, set) < 0) {
            *cpuset = NULL;
            rc = OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    hwloc_bitmap_free(set);
    return rc;
}

#else /* !OPAL_HAVE_HWLOC */

void opal_proc_topology_release(void)
{
}

static int bound_locality(struct hwloc_topology *topology, const char *my_cpuset,
                          const char *peer_cpuset, uint16_t *locality)
{
    (void) topology;
    (void) locality;
    /* Without hwloc only the node is known; the lists are still checked,
     * so a malformed record is refused in every build. */
    if (strspn(my_cpuset, "0123456789,-") != strlen(my_cpuset) ||
        strspn(peer_cpuset, "0123456789,-") != strlen(peer_cpuset)) {
        return OPAL_ERR_BAD_VALUE;
    }
    return OPAL_SUCCESS;
}

int opal_proc_get_binding(char **cpuset)
{
    if (NULL == cpuset) {
        return OPAL_ERR_BAD_PARAM;
    }
    *cpuset = NULL;
    return OPAL_SUCCESS;
}

#endif /* OPAL_HAVE_HWLOC */

int opal_proc_compute_locality(struct hwloc_topology *topology, uint32_t my_node,
                               const char *my_cpuset, uint32_t peer_node, const char *peer_cpuset,
                               uint16_t *locality)
{
    if (NULL == locality) {
        return OPAL_ERR_BAD_PARAM;
    }
    *locality = OPAL_PROC_LOCALITY_NONE;
    if (my_node != peer_node) {
        return OPAL_SUCCESS;
    }
    *locality = OPAL_PROC_ON_NODE;
    bool mine_bound = NULL != my_cpuset && '\0' != my_cpuset[0];
    bool theirs_bound = NULL != peer_cpuset && '\0' != peer_cpuset[0];
    if (!mine_bound || !theirs_bound) {
        return OPAL_SUCCESS;
    }
    uint16_t shared = OPAL_PROC_ON_NODE;
    int rc = bound_locality(topology, my_cpuset, peer_cpuset, &shared);
    if (OPAL_SUCCESS == rc) {
        *locality = shared;
    }
    return rc;
}
