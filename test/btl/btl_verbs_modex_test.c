/* btl/verbs's modex record: what one process writes another reads back;
 * a declined process's reason comes through; every malformed record is
 * refused with a reason naming what is wrong; each port pairs with the
 * peer's port on its subnet; ports are ordered nearest to the binding
 * first (an XML topology). Runs on any host (no rdma-core used). */
#include "opal/opal_config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if OPAL_HAVE_HWLOC
#include <hwloc.h>
#endif

#include "opal/mca/btl/verbs/btl_verbs_modex.h"
#include "opal/mca/btl/verbs/btl_verbs_near.h"
#include "opal/runtime/opal_device_near.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

static const uint8_t ipv4_gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 99, 0, 2};
static const uint8_t ipv4_gid2[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 98, 0, 1};

static mca_btl_verbs_modex_port_t port_of(const char *name, uint8_t number, const uint8_t *gid,
                                          uint8_t prefix)
{
    mca_btl_verbs_modex_port_t p = {.port = number,
                                    .link_layer = MCA_BTL_VERBS_LINK_ETHERNET,
                                    .mtu = 3,
                                    .psn = 0xabcdef,
                                    .prefix = prefix};
    snprintf(p.name, sizeof(p.name), "%s", name);
    memcpy(p.gid, gid, 16);
    return p;
}

/* A record of rank owner in a job of 3 with ports rxe0:1 (10.99.0.2/24)
 * and rxe1:1 (10.98.0.1/24): QPNs 0x100 + rank and 0x200 + rank, 0 at
 * owner. */
static void *make(uint32_t owner, size_t *size)
{
    mca_btl_verbs_modex_t m = {
        .pid = 4711, .pid_space = 0x0102030405060708u, .count = 3, .nports = 2};
    m.ports[0] = port_of("rxe0", 1, ipv4_gid, 24);
    m.ports[1] = port_of("rxe1", 1, ipv4_gid2, 24);
    uint32_t qpns0[3] = {0x100, 0x101, 0x102};
    uint32_t qpns1[3] = {0x200, 0x201, 0x202};
    qpns0[owner] = 0;
    qpns1[owner] = 0;
    const uint32_t *arrays[2] = {qpns0, qpns1};
    void *blob = NULL;
    ck_assert_int_eq(mca_btl_verbs_modex_pack(&m, arrays, &blob, size), OPAL_SUCCESS);
    return blob;
}

START_TEST(a_record_reads_back_as_written)
{
    size_t size;
    uint8_t *blob = make(1, &size);
    mca_btl_verbs_modex_t m;
    char why[200] = "";
    ck_assert_int_eq(mca_btl_verbs_modex_unpack(blob, size, 1, 3, &m, why, sizeof(why)),
                     OPAL_SUCCESS);
    ck_assert_uint_eq(m.pid, 4711);
    ck_assert(0x0102030405060708u == m.pid_space);
    ck_assert_uint_eq(m.count, 3);
    ck_assert_uint_eq(m.nports, 2);
    ck_assert_str_eq(m.ports[0].name, "rxe0");
    ck_assert_str_eq(m.ports[1].name, "rxe1");
    ck_assert_uint_eq(m.ports[0].port, 1);
    ck_assert_uint_eq(m.ports[0].link_layer, MCA_BTL_VERBS_LINK_ETHERNET);
    ck_assert_uint_eq(m.ports[0].mtu, 3);
    ck_assert_uint_eq(m.ports[0].psn, 0xabcdef);
    ck_assert_uint_eq(m.ports[1].prefix, 24);
    ck_assert_mem_eq(m.ports[0].gid, ipv4_gid, 16);
    ck_assert_mem_eq(m.ports[1].gid, ipv4_gid2, 16);
    ck_assert_uint_eq(mca_btl_verbs_modex_qpn(&m.ports[0], 0), 0x100);
    ck_assert_uint_eq(mca_btl_verbs_modex_qpn(&m.ports[0], 1), 0);
    ck_assert_uint_eq(mca_btl_verbs_modex_qpn(&m.ports[0], 2), 0x102);
    ck_assert_uint_eq(mca_btl_verbs_modex_qpn(&m.ports[1], 2), 0x202);
    char text[64];
    mca_btl_verbs_gid_string(m.ports[0].gid, text, sizeof(text));
    ck_assert_str_eq(text, "::ffff:10.99.0.2");
    free(blob);
}
END_TEST

START_TEST(a_decline_carries_its_reason)
{
    void *blob = NULL;
    size_t size = 0;
    ck_assert_int_eq(mca_btl_verbs_modex_pack_declined("no RDMA device", &blob, &size),
                     OPAL_SUCCESS);
    mca_btl_verbs_modex_t m;
    char why[200] = "";
    ck_assert_int_eq(mca_btl_verbs_modex_unpack(blob, size, 0, 2, &m, why, sizeof(why)),
                     OPAL_ERR_NOT_AVAILABLE);
    ck_assert_str_eq(why, "no RDMA device");
    free(blob);
}
END_TEST

/* Unpacks blob (size bytes) as rank owner's in a job of job_size and
 * expects a refusal whose reason contains needle. */
static void expect_refused(const void *blob, size_t size, uint32_t owner, uint32_t job_size,
                           const char *needle)
{
    mca_btl_verbs_modex_t m;
    char why[200] = "";
    ck_assert_int_eq(mca_btl_verbs_modex_unpack(blob, size, owner, job_size, &m, why, sizeof(why)),
                     OPAL_ERR_BAD_VALUE);
    ck_assert_msg(NULL != strstr(why, needle), "reason \"%s\" does not say \"%s\"", why, needle);
}

/* Offsets in make()'s record: the header (7 bytes), pid, pid space,
 * count, ports,
 * then port 0: name length, "rxe0", port, link layer, MTU, LID, GID,
 * prefix, PSN, 3 QPNs; then port 1 likewise. */
enum {
    OFF_PID = 7,
    OFF_PID_SPACE = 11,
    OFF_COUNT = 19,
    OFF_NPORTS = 23,
    OFF_NAMELEN = 24,
    OFF_NAME = 25,
    OFF_PORT = 29,
    OFF_LINK = 30,
    OFF_MTU = 31,
    OFF_LID = 32,
    OFF_GID = 34,
    OFF_PREFIX = 50,
    OFF_PSN = 51,
    OFF_QPNS = 55,
    PORT_SIZE = 55 - 24 + 12,
};

START_TEST(malformed_records_are_refused_with_a_reason)
{
    size_t size;
    uint8_t *blob = make(1, &size);
    ck_assert_uint_eq(size, OFF_NAMELEN + 2 * PORT_SIZE);
    uint8_t *copy = malloc(size + 1);
    ck_assert_ptr_nonnull(copy);

    expect_refused(blob, 5, 1, 3, "too short");
    expect_refused(blob, 20, 1, 3, "cut short");
    expect_refused(blob, size - 1, 1, 3, "bytes of queue pair numbers");
    expect_refused(blob, OFF_NAME + 2, 1, 3, "cut short in its device name");
    expect_refused(blob, OFF_PSN, 1, 3, "port 0 (rxe0): cut short");
    memcpy(copy, blob, size);
    copy[size] = 0;
    expect_refused(copy, size + 1, 1, 3, "1 bytes after the last port");
    /* A job of another size than the record's. */
    expect_refused(blob, size, 1, 4, "3 queue pair numbers per port for a job of 4");
    /* The record claims another owner: its own QPN is not 0. */
    expect_refused(blob, size, 0, 3, "rxe0:1: queue pair number 0x100 for rank 0 is invalid");

    memcpy(copy, blob, size);
    copy[0] ^= 0xff;
    expect_refused(copy, size, 1, 3, "magic");
    memcpy(copy, blob, size);
    copy[4] = 9;
    expect_refused(copy, size, 1, 3, "version 9");
    copy[4] = 2; /* the version before the pid space */
    expect_refused(copy, size, 1, 3, "record version 2, this process reads version 3");
    memcpy(copy, blob, size);
    copy[6] = 5;
    expect_refused(copy, size, 1, 3, "unknown kind 5");
    memcpy(copy, blob, size);
    memset(copy + OFF_PID, 0, 4);
    expect_refused(copy, size, 1, 3, "pid 0 is not a process id");
    memcpy(copy, blob, size);
    copy[OFF_NPORTS] = 0;
    expect_refused(copy, size, 1, 3, "0 ports");
    memcpy(copy, blob, size);
    copy[OFF_NPORTS] = MCA_BTL_VERBS_MODEX_PORTS_MAX + 1;
    expect_refused(copy, size, 1, 3, "17 ports");
    memcpy(copy, blob, size);
    copy[OFF_NAMELEN] = 0;
    expect_refused(copy, size, 1, 3, "port 0: device name of 0 bytes");
    memcpy(copy, blob, size);
    copy[OFF_NAME + 1] = '/';
    expect_refused(copy, size, 1, 3, "port 0: device name of 4 bytes is not");
    memcpy(copy, blob, size);
    copy[OFF_PORT] = 0;
    expect_refused(copy, size, 1, 3, "port 0 (rxe0): port number 0");
    memcpy(copy, blob, size);
    copy[OFF_LINK] = 7;
    expect_refused(copy, size, 1, 3, "rxe0:1: unknown link layer 7");
    memcpy(copy, blob, size);
    copy[OFF_MTU] = 6;
    expect_refused(copy, size, 1, 3, "rxe0:1: MTU code 6");
    memcpy(copy, blob, size);
    copy[OFF_LINK] = MCA_BTL_VERBS_LINK_IB; /* and LID 0 */
    expect_refused(copy, size, 1, 3, "rxe0:1: InfiniBand port without a LID");
    memcpy(copy, blob, size);
    copy[OFF_PREFIX] = 33;
    expect_refused(copy, size, 1, 3, "rxe0:1: IPv4 prefix of 33 bits");
    memcpy(copy, blob, size);
    copy[OFF_PSN + 3] = 1;
    expect_refused(copy, size, 1, 3, "rxe0:1: PSN 0x1abcdef");
    /* Port 1 renamed rxe0: rxe0:1 twice. */
    memcpy(copy, blob, size);
    copy[OFF_NAMELEN + PORT_SIZE + 4] = '0';
    expect_refused(copy, size, 1, 3, "rxe0:1 is listed twice");
    free(copy);
    free(blob);
}
END_TEST

START_TEST(records_that_cannot_be_written_are_refused)
{
    mca_btl_verbs_modex_t m = {.pid = 1, .count = 1, .nports = 0};
    void *blob = NULL;
    size_t size = 0;
    ck_assert_int_eq(mca_btl_verbs_modex_pack(&m, NULL, &blob, &size), OPAL_ERR_BAD_PARAM);
    m.nports = 1;
    m.ports[0] = port_of("rxe 0", 1, ipv4_gid, 24);
    uint32_t qpn = 0;
    const uint32_t *arrays[1] = {&qpn};
    ck_assert_int_eq(mca_btl_verbs_modex_pack(&m, arrays, &blob, &size), OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_null(blob);
}
END_TEST

/* ------------------------------------------------------------- pairing */

START_TEST(ports_on_one_subnet)
{
    mca_btl_verbs_modex_port_t a = port_of("rxe0", 1, ipv4_gid, 24);
    mca_btl_verbs_modex_port_t b = port_of("rxe0", 1, ipv4_gid, 24);
    b.gid[15] = 77; /* 10.99.0.77 */
    ck_assert(mca_btl_verbs_modex_same_subnet(&a, &b));
    mca_btl_verbs_modex_port_t c = port_of("rxe1", 1, ipv4_gid2, 24);
    ck_assert(!mca_btl_verbs_modex_same_subnet(&a, &c));
    /* The shorter prefix decides: 10.99/16 holds 10.99.0.2 and 10.99.7.1. */
    b.gid[14] = 7;
    ck_assert(!mca_btl_verbs_modex_same_subnet(&a, &b));
    b.prefix = 16;
    ck_assert(mca_btl_verbs_modex_same_subnet(&a, &b));
    ck_assert(mca_btl_verbs_modex_same_subnet(&b, &a));
    /* Unknown prefix: any IPv4 address. */
    c.prefix = 0;
    ck_assert(mca_btl_verbs_modex_same_subnet(&a, &c));
    /* InfiniBand: the 64-bit subnet prefix; never with Ethernet. */
    static const uint8_t ib1[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8};
    static const uint8_t ib2[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 9, 9, 9, 9, 9, 9, 9, 9};
    static const uint8_t ib3[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8};
    mca_btl_verbs_modex_port_t i1 = port_of("mlx5_0", 1, ib1, 0);
    mca_btl_verbs_modex_port_t i2 = port_of("mlx5_0", 1, ib2, 0);
    mca_btl_verbs_modex_port_t i3 = port_of("mlx5_1", 1, ib3, 0);
    i1.link_layer = i2.link_layer = i3.link_layer = MCA_BTL_VERBS_LINK_IB;
    ck_assert(mca_btl_verbs_modex_same_subnet(&i1, &i2));
    ck_assert(!mca_btl_verbs_modex_same_subnet(&i1, &i3));
    mca_btl_verbs_modex_port_t e = port_of("roce", 1, ib1, 0);
    ck_assert(!mca_btl_verbs_modex_same_subnet(&i1, &e));
    ck_assert(!mca_btl_verbs_modex_same_subnet(&a, &e));
}
END_TEST

START_TEST(each_port_pairs_with_the_peers_port_on_its_subnet)
{
    /* Both processes: rxe0 on 10.99.0.0/24, rxe1 on 10.98.0.0/24. */
    mca_btl_verbs_modex_t own = {.pid = 1, .count = 2, .nports = 2};
    own.ports[0] = port_of("rxe0", 1, ipv4_gid, 24);
    own.ports[1] = port_of("rxe1", 1, ipv4_gid2, 24);
    mca_btl_verbs_modex_t peer = own;
    char why[200] = "";
    ck_assert_int_eq(mca_btl_verbs_modex_pair(&own, 0, &peer, why, sizeof(why)), 0);
    ck_assert_int_eq(mca_btl_verbs_modex_pair(&own, 1, &peer, why, sizeof(why)), 1);
    /* The peer uses rxe1 only (btl_verbs_if_include rxe1). */
    peer.nports = 1;
    peer.ports[0] = own.ports[1];
    ck_assert_int_eq(mca_btl_verbs_modex_pair(&own, 1, &peer, why, sizeof(why)), 0);
    ck_assert_int_eq(mca_btl_verbs_modex_pair(&own, 0, &peer, why, sizeof(why)), -1);
    ck_assert_str_eq(why, "no port on the subnet of rxe0:1 (GID ::ffff:10.99.0.2)");
}
END_TEST

START_TEST(ports_on_one_subnet_pair_in_record_order)
{
    /* Two InfiniBand HCAs on one fabric each side: the first pairs with
     * the first, the second with the second, seen from either end; a
     * third of this process has no partner. */
    static const uint8_t gid[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8};
    mca_btl_verbs_modex_t own = {.pid = 1, .count = 2, .nports = 3};
    own.ports[0] = port_of("mlx5_0", 1, gid, 0);
    own.ports[1] = port_of("mlx5_1", 1, gid, 0);
    own.ports[2] = port_of("mlx5_2", 1, gid, 0);
    for (int i = 0; i < 3; ++i) {
        own.ports[i].link_layer = MCA_BTL_VERBS_LINK_IB;
        own.ports[i].lid = (uint16_t) (i + 1);
    }
    mca_btl_verbs_modex_t peer = own;
    peer.nports = 2;
    char why[200] = "";
    ck_assert_int_eq(mca_btl_verbs_modex_pair(&own, 0, &peer, why, sizeof(why)), 0);
    ck_assert_int_eq(mca_btl_verbs_modex_pair(&own, 1, &peer, why, sizeof(why)), 1);
    ck_assert_int_eq(mca_btl_verbs_modex_pair(&peer, 1, &own, why, sizeof(why)), 1);
    ck_assert_int_eq(mca_btl_verbs_modex_pair(&own, 2, &peer, why, sizeof(why)), -1);
    ck_assert_msg(NULL != strstr(why, "2 port(s) on the subnet of mlx5_2:1"), "%s", why);
}
END_TEST

/* ------------------------------------------------------------ locality */

START_TEST(ports_are_ordered_nearest_first_stably)
{
    int rank[5] = {1, 2, 0, 1, 0};
    size_t order[5];
    opal_device_near_order(5, rank, order);
    const size_t want[5] = {2, 4, 0, 3, 1};
    for (int i = 0; i < 5; ++i) {
        ck_assert_uint_eq(order[i], want[i]);
    }
    opal_device_near_order(0, rank, order);
}
END_TEST

#if OPAL_HAVE_HWLOC
/* Two packages of PUs 0-1 and 2-3; hsn0 near the first, the OpenFabrics
 * device mlx5_1 near the second. */
static hwloc_topology_t two_packages(void)
{
    return opal_test_xml_topology("btl/data/two_packages_two_nics.xml");
}

START_TEST(the_device_near_the_binding_comes_first)
{
    hwloc_topology_t topology = two_packages();
    const char *devices[] = {"mlx5_1", "hsn0", "rxe0"};
    int rank[3];
    size_t order[3];
    ck_assert_int_eq(mca_btl_verbs_near_rank(topology, "0-1", 3, devices, rank), OPAL_SUCCESS);
    ck_assert_int_eq(rank[0], 2);
    ck_assert_int_eq(rank[1], 0);
    ck_assert_int_eq(rank[2], 1); /* hwloc does not know it (soft-RoCE) */
    opal_device_near_order(3, rank, order);
    ck_assert_uint_eq(order[0], 1);
    ck_assert_uint_eq(order[1], 2);
    ck_assert_uint_eq(order[2], 0);
    ck_assert_int_eq(mca_btl_verbs_near_rank(topology, "3", 3, devices, rank), OPAL_SUCCESS);
    ck_assert_int_eq(rank[0], 0);
    ck_assert_int_eq(rank[1], 2);
    opal_device_near_order(3, rank, order);
    ck_assert_uint_eq(order[0], 0);
    /* Bound across both packages: near both, their own order kept. */
    ck_assert_int_eq(mca_btl_verbs_near_rank(topology, "1-2", 3, devices, rank), OPAL_SUCCESS);
    ck_assert_int_eq(rank[0], 0);
    ck_assert_int_eq(rank[1], 0);
    /* No binding: nothing to go by. */
    ck_assert_int_eq(mca_btl_verbs_near_rank(topology, "", 3, devices, rank), OPAL_SUCCESS);
    ck_assert_int_eq(rank[0], 1);
    ck_assert_int_eq(rank[1], 1);
    /* A cpuset hwloc cannot read is said to be bad, every rank unknown. */
    ck_assert_int_eq(mca_btl_verbs_near_rank(topology, "zz", 3, devices, rank), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(rank[1], 1);
    hwloc_topology_destroy(topology);
}
END_TEST
#endif

int main(void)
{
    Suite *s = suite_create("btl_verbs_modex");
    OPAL_TEST_ADD(s, a_record_reads_back_as_written);
    OPAL_TEST_ADD(s, a_decline_carries_its_reason);
    OPAL_TEST_ADD(s, malformed_records_are_refused_with_a_reason);
    OPAL_TEST_ADD(s, records_that_cannot_be_written_are_refused);
    OPAL_TEST_ADD(s, ports_on_one_subnet);
    OPAL_TEST_ADD(s, each_port_pairs_with_the_peers_port_on_its_subnet);
    OPAL_TEST_ADD(s, ports_on_one_subnet_pair_in_record_order);
    OPAL_TEST_ADD(s, ports_are_ordered_nearest_first_stably);
#if OPAL_HAVE_HWLOC
    OPAL_TEST_ADD(s, the_device_near_the_binding_comes_first);
#endif
    return opal_test_run(s);
}
