/*
 * hello: start the run-time environment, say who this process is -- its
 * rank, the job's size, its host and the cores it is bound to -- and stop.
 *
 *   mcarun -np 2 ./hello                     (mcarun: ess/env)
 *   mcarun -np 2 --bind-to core ./hello
 *   mpirun -np 2 ./hello                     (any PMIx launcher: ess/pmix)
 *   ./hello                                  (alone: ess/singleton)
 *
 *   cc hello.c $(pkg-config --cflags --libs opal-mca) -o hello
 */
#include <stdio.h>
#include <stdlib.h>

#include <hwloc.h>

#include <opal/util/opal_error.h>
#include <orte/runtime/orte_init.h>

/* "not bound", "bound to core 0", "bound to cores 0-3", or for a binding
 * that splits cores, "bound to PUs 0,2". Writes into text. */
static void describe_binding(char *text, size_t size)
{
    hwloc_topology_t topology;
    hwloc_bitmap_t bound = hwloc_bitmap_alloc();
    hwloc_bitmap_t cores = hwloc_bitmap_alloc();
    snprintf(text, size, "binding unknown");
    if (NULL == bound || NULL == cores || 0 != hwloc_topology_init(&topology)) {
        goto out;
    }
    if (0 != hwloc_topology_load(topology) ||
        0 != hwloc_get_cpubind(topology, bound, HWLOC_CPUBIND_PROCESS)) {
        goto out_topology;
    }
    hwloc_const_bitmap_t allowed = hwloc_topology_get_allowed_cpuset(topology);
    if (hwloc_bitmap_isincluded(allowed, bound)) {
        snprintf(text, size, "not bound");
        goto out_topology;
    }
    /* Name the cores the binding holds whole; if it splits one, the PUs. */
    int ncores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
    int whole = 1;
    for (int i = 0; i < ncores; ++i) {
        hwloc_obj_t core = hwloc_get_obj_by_type(topology, HWLOC_OBJ_CORE, (unsigned) i);
        if (hwloc_bitmap_isincluded(core->cpuset, bound)) {
            hwloc_bitmap_set(cores, (unsigned) i);
        } else if (hwloc_bitmap_intersects(core->cpuset, bound)) {
            whole = 0;
        }
    }
    char *list = NULL;
    if (whole && !hwloc_bitmap_iszero(cores) && hwloc_bitmap_list_asprintf(&list, cores) >= 0) {
        snprintf(text, size, "bound to core%s %s", 1 == hwloc_bitmap_weight(cores) ? "" : "s",
                 list);
    } else if (hwloc_bitmap_list_asprintf(&list, bound) >= 0) {
        snprintf(text, size, "bound to PUs %s", list);
    }
    free(list);
out_topology:
    hwloc_topology_destroy(topology);
out:
    hwloc_bitmap_free(cores);
    hwloc_bitmap_free(bound);
}

int main(int argc, char **argv)
{
    int rc = orte_init(&argc, &argv);
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "hello: orte_init failed: %s\n", opal_strerror(rc));
        return 1;
    }
    char binding[256];
    describe_binding(binding, sizeof(binding));
    printf("hello from rank %u of %u on %s (%s)\n", (unsigned) orte_process_info.my_name.vpid,
           (unsigned) orte_process_info.size, orte_process_info.hostname, binding);
    fflush(stdout);
    rc = orte_finalize();
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "hello: orte_finalize failed: %s\n", opal_strerror(rc));
        return 1;
    }
    return 0;
}
