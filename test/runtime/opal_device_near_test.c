/*
 * opal_device_near_rank / _order against an XML topology of two packages
 * (CPUs 0-1 and 2-3), the find callback handing back objects of it: a
 * device below package 0 or 1, one hwloc does not know, one hung off the
 * machine itself; bindings on either side, across both, none, and ones
 * hwloc cannot read.
 */
#include "opal/opal_config.h"

#include <stdio.h>

#if OPAL_HAVE_HWLOC
#include <hwloc.h>
#endif

#include "opal/runtime/opal_device_near.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

START_TEST(equal_ranks_keep_their_order)
{
    const int rank[] = {2, 0, 1, 0, 2};
    size_t order[5];
    opal_device_near_order(5, rank, order);
    const size_t want[] = {1, 3, 2, 0, 4};
    for (size_t i = 0; i < 5; ++i) {
        ck_assert_uint_eq(order[i], want[i]);
    }
    opal_device_near_order(0, rank, order);
}
END_TEST

#if OPAL_HAVE_HWLOC
enum { UNKNOWN, MACHINE, PACKAGE0, PACKAGE1 };

/* The object for candidate i: arg lists what each one is. The PCI
 * devices of the XML stand for the packages' devices. */
static struct hwloc_obj *pick(struct hwloc_topology *topology, size_t i, void *arg)
{
    const int *what = arg;
    switch (what[i]) {
        case MACHINE:
            return hwloc_get_root_obj(topology);
        case PACKAGE0:
            return hwloc_get_pcidev_by_busidstring(topology, "0000:01:00.0");
        case PACKAGE1:
            return hwloc_get_pcidev_by_busidstring(topology, "0000:81:00.0");
        default:
            return NULL;
    }
}

static hwloc_topology_t two_packages(void)
{
    return opal_test_xml_topology("btl/data/two_packages_two_nics.xml");
}

static void expect(const int *rank, int r0, int r1, int r2, int r3)
{
    ck_assert_int_eq(rank[0], r0);
    ck_assert_int_eq(rank[1], r1);
    ck_assert_int_eq(rank[2], r2);
    ck_assert_int_eq(rank[3], r3);
}

START_TEST(near_far_and_unknown_devices)
{
    hwloc_topology_t topology = two_packages();
    int what[] = {UNKNOWN, MACHINE, PACKAGE0, PACKAGE1};
    int rank[4];
    ck_assert_int_eq(opal_device_near_rank(topology, "0", 4, pick, what, rank), OPAL_SUCCESS);
    expect(rank, 1, 1, 0, 2);
    ck_assert_int_eq(opal_device_near_rank(topology, "2-3", 4, pick, what, rank), OPAL_SUCCESS);
    expect(rank, 1, 1, 2, 0);
    /* Across both packages: near both. */
    ck_assert_int_eq(opal_device_near_rank(topology, "1-2", 4, pick, what, rank), OPAL_SUCCESS);
    expect(rank, 1, 1, 0, 0);
    size_t order[4];
    ck_assert_int_eq(opal_device_near_rank(topology, "3", 4, pick, what, rank), OPAL_SUCCESS);
    opal_device_near_order(4, rank, order);
    ck_assert_uint_eq(order[0], 3);
    ck_assert_uint_eq(order[3], 2);
    hwloc_topology_destroy(topology);
}
END_TEST

START_TEST(no_binding_or_a_bad_one_leaves_every_device_unknown)
{
    hwloc_topology_t topology = two_packages();
    int what[] = {UNKNOWN, MACHINE, PACKAGE0, PACKAGE1};
    int rank[4] = {7, 7, 7, 7};
    ck_assert_int_eq(opal_device_near_rank(topology, NULL, 4, pick, what, rank), OPAL_SUCCESS);
    expect(rank, 1, 1, 1, 1);
    ck_assert_int_eq(opal_device_near_rank(topology, "", 4, pick, what, rank), OPAL_SUCCESS);
    expect(rank, 1, 1, 1, 1);
    ck_assert_int_eq(opal_device_near_rank(topology, "zz", 4, pick, what, rank),
                     OPAL_ERR_BAD_PARAM);
    expect(rank, 1, 1, 1, 1);
    ck_assert_int_eq(opal_device_near_rank(topology, "0", 0, pick, what, rank), OPAL_SUCCESS);
    hwloc_topology_destroy(topology);
}
END_TEST
#endif

int main(void)
{
    Suite *s = suite_create("opal_device_near");
    OPAL_TEST_ADD(s, equal_ranks_keep_their_order);
#if OPAL_HAVE_HWLOC
    OPAL_TEST_ADD(s, near_far_and_unknown_devices);
    OPAL_TEST_ADD(s, no_binding_or_a_bad_one_leaves_every_device_unknown);
#endif
    return opal_test_run(s);
}
