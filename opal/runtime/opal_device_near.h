/*
 * Which devices (NICs, RDMA devices) are near this process: hwloc places
 * network interfaces and OpenFabrics devices (OS devices) under their PCI
 * device, under the package or NUMA node whose CPUs are nearest; a device
 * is near when those CPUs and the process's binding share one. btl/ofi
 * (common/ofi, by domain name or PCI address) and btl/verbs (by device
 * name) rank their candidates with this, each finding its devices in the
 * topology its own way.
 */
#ifndef OPAL_RUNTIME_OPAL_DEVICE_NEAR_H
#define OPAL_RUNTIME_OPAL_DEVICE_NEAR_H

#include "opal/opal_config.h"

#include <stddef.h>

struct hwloc_obj;
struct hwloc_topology;

/* Candidate i's object in topology (an OS or a PCI device), or NULL when
 * hwloc does not know it. */
typedef struct hwloc_obj *(*opal_device_find_fn_t)(struct hwloc_topology *topology, size_t i,
                                                   void *arg);

/* rank[i] for candidate i (0 <= i < count): 0 near the binding (cpuset,
 * an hwloc list string such as "0-3,8"), 2 away from it, 1 unknown: no
 * binding (cpuset NULL or ""), hwloc does not know the device or hangs it
 * off the machine itself (near every CPU alike), the topology could not
 * be loaded, or a build without hwloc. topology NULL: this machine's,
 * loaded here with its I/O devices (a few milliseconds). OPAL_SUCCESS, or
 * OPAL_ERR_BAD_PARAM for a cpuset hwloc cannot read or that names no CPU
 * (every rank[i] is then 1), OPAL_ERR_OUT_OF_RESOURCE. */
OPAL_DECLSPEC int opal_device_near_rank(struct hwloc_topology *topology, const char *cpuset,
                                        size_t count, opal_device_find_fn_t find, void *arg,
                                        int *rank);

/* order[0..count): the indices 0..count-1 sorted by rank, the ones of
 * equal rank in their own order. */
OPAL_DECLSPEC void opal_device_near_order(size_t count, const int *rank, size_t *order);

#endif /* OPAL_RUNTIME_OPAL_DEVICE_NEAR_H */
