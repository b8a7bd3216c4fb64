/*
 * RDMA devices near this process (btl_verbs_near.h): hwloc's OS devices
 * found by the verbs device's name, ranked by opal_device_near_rank.
 */
#include "opal/mca/btl/verbs/btl_verbs_near.h"

#include <string.h>

#if OPAL_HAVE_HWLOC
#include <hwloc.h>
#endif

#include "opal/runtime/opal_device_near.h"

static struct hwloc_obj *find_device(struct hwloc_topology *topology, size_t i, void *arg)
{
#if OPAL_HAVE_HWLOC
    const char *name = ((const char *const *) arg)[i];
    for (hwloc_obj_t os = hwloc_get_next_osdev(topology, NULL); NULL != name && NULL != os;
         os = hwloc_get_next_osdev(topology, os)) {
        if (NULL != os->name && 0 == strcmp(os->name, name)) {
            return os;
        }
    }
#else
    (void) topology;
    (void) i;
    (void) arg;
#endif
    return NULL;
}

int mca_btl_verbs_near_rank(struct hwloc_topology *topology, const char *cpuset, size_t count,
                            const char *const *devices, int *rank)
{
    return opal_device_near_rank(topology, cpuset, count, find_device, (void *) devices, rank);
}
