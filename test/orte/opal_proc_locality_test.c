/* Locality of two processes from node ids and cpusets, on a synthetic
 * machine of 2 packages x 2 NUMA nodes x 2 cores:
 *
 *   package 0: NUMA 0 = PUs 0-1, NUMA 1 = PUs 2-3
 *   package 1: NUMA 2 = PUs 4-5, NUMA 3 = PUs 6-7
 *
 * and this process's own binding as the operating system reports it. */
#include "opal/opal_config.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <hwloc.h>

#include "opal/runtime/opal_proc.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

#define ALL (OPAL_PROC_ON_NODE | OPAL_PROC_ON_PACKAGE | OPAL_PROC_ON_NUMA)

static hwloc_topology_t topology;

static void setup(void)
{
    ck_assert_int_eq(hwloc_topology_init(&topology), 0);
    ck_assert_int_eq(hwloc_topology_set_synthetic(topology, "pack:2 numa:2 core:2 pu:1"), 0);
    ck_assert_int_eq(hwloc_topology_load(topology), 0);
    ck_assert_int_eq(hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PACKAGE), 2);
    ck_assert_int_eq(hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE), 4);
}

static void teardown(void)
{
    hwloc_topology_destroy(topology);
}

static uint16_t locality(uint32_t my_node, const char *mine, uint32_t peer_node, const char *theirs)
{
    uint16_t flags = 0xffff;
    ck_assert_int_eq(opal_proc_compute_locality(topology, my_node, mine, peer_node, theirs, &flags),
                     OPAL_SUCCESS);
    return flags;
}

START_TEST(different_nodes_share_nothing)
{
    ck_assert_uint_eq(locality(0, "0", 1, "0"), OPAL_PROC_LOCALITY_NONE);
    ck_assert_uint_eq(locality(7, NULL, 3, NULL), OPAL_PROC_LOCALITY_NONE);
}
END_TEST

START_TEST(unbound_processes_share_only_the_node)
{
    ck_assert_uint_eq(locality(2, NULL, 2, NULL), OPAL_PROC_ON_NODE);
    ck_assert_uint_eq(locality(2, "", 2, ""), OPAL_PROC_ON_NODE);
    /* One side bound is not enough: the other may run anywhere. */
    ck_assert_uint_eq(locality(2, "0", 2, NULL), OPAL_PROC_ON_NODE);
    ck_assert_uint_eq(locality(2, "", 2, "0"), OPAL_PROC_ON_NODE);
}
END_TEST

START_TEST(neighbouring_cores_share_package_and_numa)
{
    ck_assert_uint_eq(locality(0, "0", 0, "1"), ALL);
    ck_assert_uint_eq(locality(0, "6", 0, "7"), ALL);
}
END_TEST

START_TEST(same_package_other_numa_shares_the_package)
{
    ck_assert_uint_eq(locality(0, "0", 0, "2"), OPAL_PROC_ON_NODE | OPAL_PROC_ON_PACKAGE);
    ck_assert_uint_eq(locality(0, "5", 0, "4,6"), ALL);
    ck_assert_uint_eq(locality(0, "4-5", 0, "6-7"), OPAL_PROC_ON_NODE | OPAL_PROC_ON_PACKAGE);
}
END_TEST

START_TEST(other_package_shares_only_the_node)
{
    ck_assert_uint_eq(locality(0, "0", 0, "4"), OPAL_PROC_ON_NODE);
    ck_assert_uint_eq(locality(0, "0-3", 0, "4-7"), OPAL_PROC_ON_NODE);
}
END_TEST

START_TEST(a_binding_across_packages_shares_with_each)
{
    /* PUs 3 and 4: NUMA 1 in package 0, NUMA 2 in package 1. */
    ck_assert_uint_eq(locality(0, "3-4", 0, "0"), OPAL_PROC_ON_NODE | OPAL_PROC_ON_PACKAGE);
    ck_assert_uint_eq(locality(0, "3-4", 0, "5"), ALL);
    ck_assert_uint_eq(locality(0, "0-7", 0, "6"), ALL);
}
END_TEST

START_TEST(locality_is_symmetric)
{
    const char *sets[] = {NULL, "0", "1", "2", "3-4", "4-7", "0,6", "7"};
    size_t n = sizeof(sets) / sizeof(sets[0]);
    for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < n; ++j) {
            ck_assert_uint_eq(locality(1, sets[i], 1, sets[j]), locality(1, sets[j], 1, sets[i]));
        }
    }
}
END_TEST

START_TEST(package_and_numa_imply_the_node)
{
    const char *sets[] = {NULL, "0", "1", "2", "3-4", "4-7", "0,6", "7"};
    size_t n = sizeof(sets) / sizeof(sets[0]);
    for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < n; ++j) {
            uint16_t flags = locality(1, sets[i], 1, sets[j]);
            ck_assert(flags & OPAL_PROC_ON_NODE);
            /* On this machine a NUMA node lies inside one package. */
            if (flags & OPAL_PROC_ON_NUMA) {
                ck_assert(flags & OPAL_PROC_ON_PACKAGE);
            }
            ck_assert_uint_eq(locality(1, sets[i], 2, sets[j]), OPAL_PROC_LOCALITY_NONE);
        }
    }
}
END_TEST

START_TEST(malformed_cpusets_are_refused)
{
    const char *bad[] = {"a", "0-", "1,x", "-", ",", "0;1", " 0"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        uint16_t flags = 0xffff;
        ck_assert_int_eq(opal_proc_compute_locality(topology, 0, "0", 0, bad[i], &flags),
                         OPAL_ERR_BAD_VALUE);
        ck_assert_int_eq(opal_proc_compute_locality(topology, 0, bad[i], 0, "0", &flags),
                         OPAL_ERR_BAD_VALUE);
        /* What is known for sure is still reported. */
        ck_assert_uint_eq(flags, OPAL_PROC_ON_NODE);
    }
    ck_assert_int_eq(opal_proc_compute_locality(topology, 0, "0", 0, "1", NULL),
                     OPAL_ERR_BAD_PARAM);
}
END_TEST

START_TEST(this_machine_is_used_without_a_topology)
{
    uint16_t flags = 0;
    ck_assert_int_eq(opal_proc_compute_locality(NULL, 0, "0", 0, "0", &flags), OPAL_SUCCESS);
    /* The same CPU is in one package and one NUMA node of any machine. */
    ck_assert_uint_eq(flags, ALL);
    opal_proc_finalize();
}
END_TEST

START_TEST(binding_follows_the_affinity_mask)
{
    cpu_set_t saved;
    ck_assert_int_eq(sched_getaffinity(0, sizeof(saved), &saved), 0);
    char *cpuset = (char *) 1;
    ck_assert_int_eq(opal_proc_get_binding(&cpuset), OPAL_SUCCESS);
    /* Started unbound (make check does not bind). */
    ck_assert_ptr_null(cpuset);

    if (sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
        int first = -1;
        for (int cpu = 0; cpu < CPU_SETSIZE && first < 0; ++cpu) {
            if (CPU_ISSET(cpu, &saved)) {
                first = cpu;
            }
        }
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(first, &one);
        ck_assert_int_eq(sched_setaffinity(0, sizeof(one), &one), 0);
        int rc = opal_proc_get_binding(&cpuset);
        ck_assert_int_eq(sched_setaffinity(0, sizeof(saved), &saved), 0);
        ck_assert_int_eq(rc, OPAL_SUCCESS);
        ck_assert_ptr_nonnull(cpuset);
        char expected[16];
        snprintf(expected, sizeof(expected), "%d", first);
        ck_assert_str_eq(cpuset, expected);
        free(cpuset);
    }
    ck_assert_int_eq(opal_proc_get_binding(NULL), OPAL_ERR_BAD_PARAM);
    opal_proc_finalize();
}
END_TEST

static Suite *locality_suite(void)
{
    Suite *s = suite_create("opal_proc_locality");
    TCase *tc;
#define ADD(fn)                                                                                    \
    do {                                                                                           \
        tc = tcase_create(#fn);                                                                    \
        tcase_add_checked_fixture(tc, setup, teardown);                                            \
        tcase_add_test(tc, fn);                                                                    \
        suite_add_tcase(s, tc);                                                                    \
    } while (0)
    ADD(different_nodes_share_nothing);
    ADD(unbound_processes_share_only_the_node);
    ADD(neighbouring_cores_share_package_and_numa);
    ADD(same_package_other_numa_shares_the_package);
    ADD(other_package_shares_only_the_node);
    ADD(a_binding_across_packages_shares_with_each);
    ADD(locality_is_symmetric);
    ADD(package_and_numa_imply_the_node);
    ADD(malformed_cpusets_are_refused);
    ADD(this_machine_is_used_without_a_topology);
    ADD(binding_follows_the_affinity_mask);
#undef ADD
    return s;
}

int main(void)
{
    return opal_test_run(locality_suite());
}
