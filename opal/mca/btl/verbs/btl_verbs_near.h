/*
 * Which RDMA devices are near this process: hwloc places OpenFabrics
 * devices (OS devices named like the verbs device, e.g. mlx5_0) under
 * their PCI device, under the package or NUMA node whose CPUs are
 * nearest. btl/verbs returns its modules (one per port) nearest first, so
 * that the multiplexer, which keeps equal modules in the order they come,
 * sends over a near one.
 *
 * Free of rdma-core types so that the unit test builds everywhere.
 */
#ifndef OPAL_MCA_BTL_VERBS_BTL_VERBS_NEAR_H
#define OPAL_MCA_BTL_VERBS_BTL_VERBS_NEAR_H

#include "opal/opal_config.h"

#include <stddef.h>

struct hwloc_topology;

/* rank[i] for devices[i]: 0 when the CPUs near it and the binding
 * (cpuset, an hwloc list string such as "0-3,8") share one, 2 when they
 * share none, 1 when unknown (no binding, hwloc does not know the
 * device, or a build without hwloc). topology NULL: this machine's,
 * loaded with its I/O devices. OPAL_SUCCESS, or OPAL_ERR_BAD_PARAM for a
 * cpuset hwloc cannot read (every rank[i] is then 1). */
int mca_btl_verbs_near_rank(struct hwloc_topology *topology, const char *cpuset, size_t count,
                            const char *const *devices, int *rank);

/* order[0..count): the indices 0..count-1 sorted by rank, the ones of
 * equal rank in their own order. */
void mca_btl_verbs_near_order(size_t count, const int *rank, size_t *order);

#endif /* OPAL_MCA_BTL_VERBS_BTL_VERBS_NEAR_H */
