/*
 * RDMA devices near this process (btl_verbs_near.h).
 */
#include "opal/mca/btl/verbs/btl_verbs_near.h"

#include <string.h>

#if OPAL_HAVE_HWLOC
#include <hwloc.h>
#endif

#include "opal/util/opal_error.h"

void mca_btl_verbs_near_order(size_t count, const int *rank, size_t *order)
{
    /* Insertion sort: a handful of ports, and it is stable. */
    for (size_t i = 0; i < count; ++i) {
        size_t pos = i;
        while (pos > 0 && rank[order[pos - 1]] > rank[i]) {
            order[pos] = order[pos - 1];
            --pos;
        }
        order[pos] = i;
    }
}

#if OPAL_HAVE_HWLOC

static hwloc_obj_t find_device(hwloc_topology_t topology, const char *name)
{
    for (hwloc_obj_t os = hwloc_get_next_osdev(topology, NULL); NULL != os;
         os = hwloc_get_next_osdev(topology, os)) {
        if (NULL != os->name && 0 == strcmp(os->name, name)) {
            return os;
        }
    }
    return NULL;
}

int mca_btl_verbs_near_rank(struct hwloc_topology *topology, const char *cpuset, size_t count,
                            const char *const *devices, int *rank)
{
    for (size_t i = 0; i < count; ++i) {
        rank[i] = 1;
    }
    if (NULL == cpuset || '\0' == cpuset[0] || 0 == count) {
        return OPAL_SUCCESS;
    }
    hwloc_bitmap_t binding = hwloc_bitmap_alloc();
    if (NULL == binding) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (0 != hwloc_bitmap_list_sscanf(binding, cpuset) || hwloc_bitmap_iszero(binding)) {
        hwloc_bitmap_free(binding);
        return OPAL_ERR_BAD_PARAM;
    }
    hwloc_topology_t own = NULL;
    if (NULL == topology) {
        /* opal_proc's topology has no I/O devices: this one has (a few
         * milliseconds, once per init). */
        if (0 != hwloc_topology_init(&own)) {
            hwloc_bitmap_free(binding);
            return OPAL_SUCCESS;
        }
        (void) hwloc_topology_set_io_types_filter(own, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
        if (0 != hwloc_topology_load(own)) {
            hwloc_topology_destroy(own);
            hwloc_bitmap_free(binding);
            return OPAL_SUCCESS;
        }
        topology = own;
    }
    for (size_t i = 0; i < count; ++i) {
        hwloc_obj_t dev = NULL != devices[i] ? find_device(topology, devices[i]) : NULL;
        hwloc_obj_t near = NULL != dev ? hwloc_get_non_io_ancestor_obj(topology, dev) : NULL;
        /* A device under the machine itself is near every CPU: nothing
         * to choose by. */
        if (NULL != near && NULL != near->cpuset && NULL != near->parent) {
            rank[i] = hwloc_bitmap_intersects(near->cpuset, binding) ? 0 : 2;
        }
    }
    if (NULL != own) {
        hwloc_topology_destroy(own);
    }
    hwloc_bitmap_free(binding);
    return OPAL_SUCCESS;
}

#else /* !OPAL_HAVE_HWLOC */

int mca_btl_verbs_near_rank(struct hwloc_topology *topology, const char *cpuset, size_t count,
                            const char *const *devices, int *rank)
{
    (void) topology;
    (void) cpuset;
    (void) devices;
    for (size_t i = 0; i < count; ++i) {
        rank[i] = 1;
    }
    return OPAL_SUCCESS;
}

#endif /* OPAL_HAVE_HWLOC */
