/*
 * Which NIC is near this process: hwloc places network interfaces and
 * OpenFabrics devices (OS devices) under their PCI device, under the
 * package or NUMA node whose CPUs are nearest; a NIC is near when those
 * CPUs and the process's binding share at least one.
 */
#include "opal/opal_config.h"

#include <string.h>

#if OPAL_HAVE_HWLOC
#include <hwloc.h>
#endif

#include "opal/mca/common/ofi/common_ofi.h"
#include "opal/util/opal_error.h"

#if OPAL_HAVE_HWLOC

/* The I/O object for one candidate: its PCI device when the provider gave
 * the bus address, else the OS device named like the domain. */
static hwloc_obj_t find_device(hwloc_topology_t topology, const char *domain, const char *busid)
{
    if (NULL != busid) {
        hwloc_obj_t pci = hwloc_get_pcidev_by_busidstring(topology, busid);
        if (NULL != pci) {
            return pci;
        }
    }
    for (hwloc_obj_t os = hwloc_get_next_osdev(topology, NULL); NULL != os;
         os = hwloc_get_next_osdev(topology, os)) {
        if (NULL != os->name && NULL != domain && 0 == strcmp(os->name, domain)) {
            return os;
        }
    }
    return NULL;
}

int opal_common_ofi_nic_rank(struct hwloc_topology *topology, const char *cpuset, size_t count,
                             const char *const *domains, const char *const *pci_busids, int *rank)
{
    for (size_t i = 0; i < count; ++i) {
        rank[i] = 1;
    }
    if (NULL == cpuset || '\0' == cpuset[0]) {
        return OPAL_SUCCESS;
    }
    hwloc_bitmap_t binding = hwloc_bitmap_alloc();
    if (NULL == binding) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (0 != hwloc_bitmap_list_sscanf(binding, cpuset)) {
        hwloc_bitmap_free(binding);
        return OPAL_ERR_BAD_PARAM;
    }
    hwloc_topology_t own = NULL;
    if (NULL == topology) {
        /* Loaded here with its I/O devices (which opal_proc's topology
         * leaves out): a few milliseconds, once per component init. */
        if (0 != hwloc_topology_init(&own)) {
            hwloc_bitmap_free(binding);
            return OPAL_ERR_NOT_AVAILABLE;
        }
        (void) hwloc_topology_set_io_types_filter(own, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
        if (0 != hwloc_topology_load(own)) {
            hwloc_topology_destroy(own);
            hwloc_bitmap_free(binding);
            return OPAL_ERR_NOT_AVAILABLE;
        }
        topology = own;
    }
    for (size_t i = 0; i < count; ++i) {
        hwloc_obj_t dev =
            find_device(topology, domains[i], NULL != pci_busids ? pci_busids[i] : NULL);
        hwloc_obj_t near = NULL != dev ? hwloc_get_non_io_ancestor_obj(topology, dev) : NULL;
        if (NULL != near && NULL != near->cpuset) {
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

int opal_common_ofi_nic_rank(struct hwloc_topology *topology, const char *cpuset, size_t count,
                             const char *const *domains, const char *const *pci_busids, int *rank)
{
    (void) topology;
    (void) cpuset;
    (void) domains;
    (void) pci_busids;
    for (size_t i = 0; i < count; ++i) {
        rank[i] = 1;
    }
    return OPAL_SUCCESS;
}

#endif /* OPAL_HAVE_HWLOC */
