/*
 * Devices near this process (opal_device_near.h).
 */
#include "opal/runtime/opal_device_near.h"

#if OPAL_HAVE_HWLOC
#include <hwloc.h>
#endif

#include "opal/util/opal_error.h"

void opal_device_near_order(size_t count, const int *rank, size_t *order)
{
    /* Insertion sort: a handful of devices, and it is stable. */
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

int opal_device_near_rank(struct hwloc_topology *topology, const char *cpuset, size_t count,
                          opal_device_find_fn_t find, void *arg, int *rank)
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
        /* opal_proc's topology leaves the I/O devices out: this one has
         * them. Without it, every device stays of unknown locality. */
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
        hwloc_obj_t dev = find(topology, i, arg);
        hwloc_obj_t near = NULL != dev ? hwloc_get_non_io_ancestor_obj(topology, dev) : NULL;
        /* A device under the machine itself is as near every CPU as any:
         * nothing to choose by. */
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

int opal_device_near_rank(struct hwloc_topology *topology, const char *cpuset, size_t count,
                          opal_device_find_fn_t find, void *arg, int *rank)
{
    (void) topology;
    (void) cpuset;
    (void) find;
    (void) arg;
    for (size_t i = 0; i < count; ++i) {
        rank[i] = 1;
    }
    return OPAL_SUCCESS;
}

#endif /* OPAL_HAVE_HWLOC */
