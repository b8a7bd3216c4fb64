/*
 * Which NIC is near this process: a candidate domain's device found in
 * hwloc's topology by the PCI address the provider gave, else among the
 * OS devices by the domain's name, and ranked by opal_device_near_rank.
 */
#include "opal/opal_config.h"

#include <string.h>

#if OPAL_HAVE_HWLOC
#include <hwloc.h>
#endif

#include "opal/mca/common/ofi/common_ofi.h"
#include "opal/runtime/opal_device_near.h"

typedef struct {
    const char *const *domains;
    const char *const *pci_busids; /* NULL, or an entry per domain */
} nic_names_t;

static struct hwloc_obj *find_device(struct hwloc_topology *topology, size_t i, void *arg)
{
#if OPAL_HAVE_HWLOC
    const nic_names_t *names = arg;
    const char *busid = NULL != names->pci_busids ? names->pci_busids[i] : NULL;
    const char *domain = names->domains[i];
    if (NULL != busid) {
        hwloc_obj_t pci = hwloc_get_pcidev_by_busidstring(topology, busid);
        if (NULL != pci) {
            return pci;
        }
    }
    for (hwloc_obj_t os = hwloc_get_next_osdev(topology, NULL); NULL != domain && NULL != os;
         os = hwloc_get_next_osdev(topology, os)) {
        if (NULL != os->name && 0 == strcmp(os->name, domain)) {
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

int opal_common_ofi_nic_rank(struct hwloc_topology *topology, const char *cpuset, size_t count,
                             const char *const *domains, const char *const *pci_busids, int *rank)
{
    nic_names_t names = {.domains = domains, .pci_busids = pci_busids};
    return opal_device_near_rank(topology, cpuset, count, find_device, &names, rank);
}
