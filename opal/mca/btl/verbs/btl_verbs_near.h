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

/* rank[i] for devices[i] (a verbs device name, found among hwloc's OS
 * devices), as opal_device_near_rank gives it: 0 near the binding
 * (cpuset), 2 away, 1 unknown. Sort with opal_device_near_order. */
int mca_btl_verbs_near_rank(struct hwloc_topology *topology, const char *cpuset, size_t count,
                            const char *const *devices, int *rank);

#endif /* OPAL_MCA_BTL_VERBS_BTL_VERBS_NEAR_H */
