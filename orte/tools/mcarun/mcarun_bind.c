/*
 * Cores and binding. Rank i is mapped to core i mod (number of cores) and
 * bound to that core, or to the package holding it; the cpuset is turned
 * into a cpu_set_t here, so that the child only has to call
 * sched_setaffinity() before it execs.
 *
 * The topology is loaded only when needed (counting cores for the
 * oversubscription check or binding), keeping just cores and packages:
 * mcarun's start-up time is part of every job's.
 */
#include "opal/opal_config.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "orte/tools/mcarun/mcarun.h"

#if OPAL_HAVE_HWLOC
#include <hwloc.h>
#include <hwloc/glibc-sched.h>
#endif

static struct {
#if OPAL_HAVE_HWLOC
    hwloc_topology_t topo;
    bool loaded;
#endif
    unsigned *obj_index; /* per rank: the core or package it is bound to */
} bind;

#if OPAL_HAVE_HWLOC
static int load_topology(void)
{
    if (bind.loaded) {
        return OPAL_SUCCESS;
    }
    /* hwloc dlopens its plugins (XML, PCI, OpenCL, GL: half of mcarun's
     * start-up time) when the first topology is made; cores and packages
     * need none of them. The variable is put back at once, before any
     * rank could inherit it. */
    char *plugins = getenv("HWLOC_PLUGINS_PATH");
    plugins = NULL != plugins ? strdup(plugins) : NULL;
    setenv("HWLOC_PLUGINS_PATH", "", 1);
    int rc = hwloc_topology_init(&bind.topo);
    if (NULL != plugins) {
        setenv("HWLOC_PLUGINS_PATH", plugins, 1);
        free(plugins);
    } else {
        unsetenv("HWLOC_PLUGINS_PATH");
    }
    if (0 != rc) {
        opal_output(0, "mcarun: hwloc cannot initialise a topology");
        return OPAL_ERROR;
    }
    hwloc_topology_set_all_types_filter(bind.topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_type_filter(bind.topo, HWLOC_OBJ_CORE, HWLOC_TYPE_FILTER_KEEP_ALL);
    hwloc_topology_set_type_filter(bind.topo, HWLOC_OBJ_PACKAGE, HWLOC_TYPE_FILTER_KEEP_ALL);
#if HWLOC_API_VERSION >= 0x00020100
    /* The OS says which cores and packages there are; CPUID probing adds
     * only what mcarun filters out, costs time, and cannot work under
     * valgrind (where it complains on stderr). */
    hwloc_topology_set_components(bind.topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
#endif
    if (0 != hwloc_topology_load(bind.topo)) {
        opal_output(0, "mcarun: hwloc cannot read this machine's topology");
        hwloc_topology_destroy(bind.topo);
        return OPAL_ERROR;
    }
    bind.loaded = true;
    return OPAL_SUCCESS;
}
#endif

int mcarun_bind_num_cores(int *cores)
{
#if OPAL_HAVE_HWLOC
    int rc = load_topology();
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    /* Cores that this process may not use (cgroups, taskset) are not in
     * the topology: hwloc leaves disallowed resources out by default. */
    int n = hwloc_get_nbobjs_by_type(bind.topo, HWLOC_OBJ_CORE);
    if (n <= 0) {
        n = hwloc_get_nbobjs_by_type(bind.topo, HWLOC_OBJ_PU);
    }
    *cores = n > 0 ? n : 1;
#else
    cpu_set_t set;
    *cores =
        0 == sched_getaffinity(0, sizeof(set), &set) && 0 < CPU_COUNT(&set) ? CPU_COUNT(&set) : 1;
#endif
    return OPAL_SUCCESS;
}

int mcarun_bind_plan(void)
{
    if (MCARUN_BIND_NONE == mcarun_job.opts.bind_to) {
        return OPAL_SUCCESS;
    }
#if OPAL_HAVE_HWLOC
    int rc = load_topology();
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    bind.obj_index = calloc(mcarun_job.size, sizeof(unsigned));
    if (NULL == bind.obj_index) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    int ncores = hwloc_get_nbobjs_by_type(bind.topo, HWLOC_OBJ_CORE);
    hwloc_obj_type_t unit = 0 < ncores ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
    if (ncores <= 0) {
        ncores = hwloc_get_nbobjs_by_type(bind.topo, HWLOC_OBJ_PU);
    }
    for (uint32_t i = 0; i < mcarun_job.size; ++i) {
        mcarun_rank_t *r = &mcarun_job.ranks[i];
        hwloc_obj_t obj = hwloc_get_obj_by_type(bind.topo, unit, i % (unsigned) ncores);
        if (NULL != obj && MCARUN_BIND_PACKAGE == mcarun_job.opts.bind_to) {
            hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(bind.topo, HWLOC_OBJ_PACKAGE, obj);
            /* A machine without package objects is one package. */
            obj = NULL != pkg ? pkg : hwloc_get_root_obj(bind.topo);
        }
        if (NULL == obj || 0 != hwloc_cpuset_to_glibc_sched_affinity(bind.topo, obj->cpuset,
                                                                     &r->cpus, sizeof(r->cpus))) {
            opal_output(0, "mcarun: --bind-to: hwloc found no cpus for rank %lu",
                        (unsigned long) i);
            return OPAL_ERROR;
        }
        bind.obj_index[i] = obj->logical_index;
        r->bound = true;
    }
    return OPAL_SUCCESS;
#else
    opal_output(0,
                "mcarun: --bind-to %s needs hwloc, and this build of opal-mca has none "
                "(configure did not find libhwloc-dev); use --bind-to none",
                MCARUN_BIND_CORE == mcarun_job.opts.bind_to ? "core" : "package");
    return OPAL_ERR_NOT_SUPPORTED;
#endif
}

/* "0-3,8" for the cpus of set. */
static void cpu_list(const cpu_set_t *set, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE && len < size; ++c) {
        if (!CPU_ISSET(c, set)) {
            continue;
        }
        int end = c;
        while (end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, set)) {
            ++end;
        }
        int n = end == c ? snprintf(buf + len, size - len, "%s%d", 0 < len ? "," : "", c)
                         : snprintf(buf + len, size - len, "%s%d-%d", 0 < len ? "," : "", c, end);
        len += n < 0 ? size : (size_t) n;
        c = end;
    }
}

void mcarun_bind_report(const mcarun_rank_t *r)
{
    char name[64], cpus[256];
    mcarun_rank_name(r, name, sizeof(name));
    if (!r->bound) {
        opal_output(0, "mcarun: %s is not bound", name);
        return;
    }
    cpu_list(&r->cpus, cpus, sizeof(cpus));
    opal_output(0, "mcarun: %s bound to %s %u (cpus %s)", name,
                MCARUN_BIND_CORE == mcarun_job.opts.bind_to ? "core" : "package",
                bind.obj_index[r->rank], cpus);
}

void mcarun_bind_fini(void)
{
    free(bind.obj_index);
    bind.obj_index = NULL;
#if OPAL_HAVE_HWLOC
    if (bind.loaded) {
        hwloc_topology_destroy(bind.topo);
        bind.loaded = false;
    }
#endif
}
