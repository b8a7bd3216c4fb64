/*
 * btl/tcp's wire formats as units (opal/mca/btl/tcp/btl_tcp_wire.c
 * compiled in): the published address, the handshake, frame headers and
 * the checks a receiver makes of what a peer sent. Each refusal is
 * asserted with the text of its reason: that text is what a user reads in
 * the error naming the peer.
 */
#include "opal/opal_config.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/tcp/btl_tcp_wire.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

/* The receiver's limits the frame checks run with. */
#define MAX_AM   1000
#define MAX_RDMA 5000

/* ------------------------------------------------------------ address */

/* An address of count IPv4 addresses 10.0.0.1, 10.0.0.2, ... */
static mca_btl_tcp_addr_t address_of(unsigned count)
{
    mca_btl_tcp_addr_t a;
    memset(&a, 0, sizeof(a));
    a.port = 40123;
    a.pid = 4711;
    a.pid_space = 0x8877665544332211u;
    a.count = count;
    for (unsigned i = 0; i < count && i < MCA_BTL_TCP_MAX_ADDRS; ++i) {
        uint32_t ip = htonl(0x0a000001u + i);
        memcpy(a.ip[i].bytes, &ip, 4);
    }
    return a;
}

/* count4 IPv4 addresses then count6 IPv6 ones (fd00::1, fd00::2, ...). */
static mca_btl_tcp_addr_t address_of_both(unsigned count4, unsigned count6)
{
    mca_btl_tcp_addr_t a = address_of(count4);
    for (unsigned i = 0; i < count6 && count4 + i < MCA_BTL_TCP_MAX_ADDRS; ++i) {
        mca_btl_tcp_ip_t *ip = &a.ip[count4 + i];
        memset(ip, 0, sizeof(*ip));
        ip->v6 = true;
        ip->bytes[0] = 0xfd;
        ip->bytes[15] = (uint8_t) (i + 1);
    }
    a.count = count4 + count6;
    return a;
}

static uint8_t *pack(const mca_btl_tcp_addr_t *a, size_t *size)
{
    void *blob = NULL;
    ck_assert_int_eq(OPAL_SUCCESS, mca_btl_tcp_addr_pack(a, &blob, size));
    ck_assert_ptr_nonnull(blob);
    return blob;
}

static uint8_t *pack_count(unsigned count, size_t *size)
{
    mca_btl_tcp_addr_t a = address_of(count);
    return pack(&a, size);
}

static uint8_t *pack_declined(const char *reason, size_t *size)
{
    mca_btl_tcp_addr_t a = address_of(0);
    strcpy(a.declined, reason);
    return pack(&a, size);
}

/* A hand-made blob: the 24-byte header with count, then body_size bytes
 * of body (each 0x41), for the malformed kinds pack cannot make. */
static uint8_t *blob_of_both(unsigned count4, unsigned count6, size_t body_size, size_t *size)
{
    *size = MCA_BTL_TCP_ADDR_HDR + body_size;
    uint8_t *p = malloc(*size);
    ck_assert_ptr_nonnull(p);
    memset(p, 0x41, *size);
    mca_btl_tcp_put_u32(p, MCA_BTL_TCP_ADDR_MAGIC);
    mca_btl_tcp_put_u16(p + 4, MCA_BTL_TCP_ADDR_VERSION);
    mca_btl_tcp_put_u16(p + 6, 40123);
    mca_btl_tcp_put_u32(p + 8, 4711);
    p[12] = (uint8_t) count4;
    p[13] = (uint8_t) count6;
    memset(p + 14, 0, 2);
    mca_btl_tcp_put_u64(p + 16, 1);
    return p;
}

static uint8_t *blob_of(unsigned count, size_t body_size, size_t *size)
{
    return blob_of_both(count, 0, body_size, size);
}

/* Unpacks blob: refused with exactly the reason expect. */
static void expect_address_refused(const uint8_t *blob, size_t size, const char *expect)
{
    mca_btl_tcp_addr_t b;
    char why[192] = "";
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE, mca_btl_tcp_addr_unpack(blob, size, &b, why, sizeof(why)));
    ck_assert_str_eq(expect, why);
}

static void expect_address_round_trips(unsigned count4, unsigned count6)
{
    mca_btl_tcp_addr_t a = address_of_both(count4, count6);
    unsigned count = count4 + count6;
    size_t size;
    uint8_t *blob = pack(&a, &size);
    ck_assert_uint_eq(MCA_BTL_TCP_ADDR_HDR + 4 * count4 + 16 * count6, size);
    mca_btl_tcp_addr_t b;
    char why[192] = "";
    ck_assert_int_eq(OPAL_SUCCESS, mca_btl_tcp_addr_unpack(blob, size, &b, why, sizeof(why)));
    ck_assert_uint_eq(a.port, b.port);
    ck_assert_uint_eq(a.pid, b.pid);
    ck_assert(a.pid_space == b.pid_space);
    ck_assert_uint_eq(count, b.count);
    for (unsigned i = 0; i < count; ++i) {
        ck_assert(a.ip[i].v6 == b.ip[i].v6);
        ck_assert_mem_eq(a.ip[i].bytes, b.ip[i].bytes, a.ip[i].v6 ? 16 : 4);
    }
    ck_assert_str_eq("", b.declined);
    free(blob);
}

START_TEST(an_address_of_one_ipv4_round_trips)
{
    expect_address_round_trips(1, 0);
}
END_TEST

START_TEST(an_address_of_sixteen_ipv4_round_trips)
{
    expect_address_round_trips(MCA_BTL_TCP_MAX_ADDRS, 0);
}
END_TEST

START_TEST(addresses_of_ipv6_alone_and_of_both_round_trip)
{
    expect_address_round_trips(0, 1);
    expect_address_round_trips(0, MCA_BTL_TCP_MAX_ADDRS);
    expect_address_round_trips(3, 2);
    expect_address_round_trips(1, MCA_BTL_TCP_MAX_ADDRS - 1);
}
END_TEST

START_TEST(ipv6_addresses_follow_the_ipv4_ones_whatever_their_order)
{
    /* One IPv6 address listed before an IPv4 one: packed after it, with
     * count6 in byte 13. */
    mca_btl_tcp_addr_t a = address_of_both(0, 1);
    a.count = 2;
    uint32_t v4 = htonl(0xc0a80102); /* 192.168.1.2 */
    a.ip[1].v6 = false;
    memcpy(a.ip[1].bytes, &v4, 4);
    size_t size;
    uint8_t *blob = pack(&a, &size);
    const uint8_t expect[] = {
        'B',  'T',  'C',  'A',  2,    0,    0xbb, 0x9c, 0x67, 0x12, 0, 0, /* magic, version, port,
                                                                             pid */
        1,    1,    0,    0,                            /* count4, count6, reserved */
        0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, /* pid space */
        192,  168,  1,    2,                            /* the IPv4 address */
        0xfd, 0,    0,    0,    0,    0,    0,    0,    0,    0,    0, 0, 0, 0, 0, 1, /* fd00::1 */
    };
    ck_assert_uint_eq(sizeof(expect), size);
    ck_assert_mem_eq(expect, blob, size);
    mca_btl_tcp_addr_t b;
    char why[192] = "";
    ck_assert_int_eq(OPAL_SUCCESS, mca_btl_tcp_addr_unpack(blob, size, &b, why, sizeof(why)));
    ck_assert_uint_eq(2, b.count);
    ck_assert(!b.ip[0].v6 && b.ip[1].v6);
    free(blob);
}
END_TEST

START_TEST(ipv6_counts_that_do_not_match_the_size_are_refused)
{
    size_t size;
    uint8_t *blob = blob_of_both(1, 1, 4 + 15, &size);
    expect_address_refused(blob, size, "1 IPv4 and 1 IPv6 addresses in a blob of 43 bytes");
    free(blob);
    blob = blob_of_both(0, 2, 16 * 2 + 4, &size);
    expect_address_refused(blob, size, "0 IPv4 and 2 IPv6 addresses in a blob of 60 bytes");
    free(blob);
    /* Together past the limit, each count within it. */
    blob = blob_of_both(9, 8, 4 * 9 + 16 * 8, &size);
    expect_address_refused(blob, size, "17 addresses (at most 16)");
    free(blob);
}
END_TEST

START_TEST(an_address_is_little_endian_with_the_ipv4_in_network_order)
{
    mca_btl_tcp_addr_t a = address_of(1);
    a.port = 0x1234;
    a.pid = 0x01020304;
    a.pid_space = 0x0102030405060708u;
    uint32_t ip = htonl(0xc0a80102); /* 192.168.1.2 */
    memcpy(a.ip[0].bytes, &ip, 4);
    size_t size;
    uint8_t *blob = pack(&a, &size);
    const uint8_t expect[] = {
        'B',  'T',  'C', 'A',             /* magic */
        2,    0,                          /* version */
        0x34, 0x12,                       /* port */
        4,    3,    2,   1,               /* pid */
        1,    0,    0,   0,               /* count4, count6, reserved */
        8,    7,    6,   5,   4, 3, 2, 1, /* pid space */
        192,  168,  1,   2,               /* the address, network order */
    };
    ck_assert_uint_eq(sizeof(expect), size);
    ck_assert_mem_eq(expect, blob, size);
    free(blob);
}
END_TEST

START_TEST(a_declined_address_round_trips_with_its_reason)
{
    size_t size;
    uint8_t *blob = pack_declined("no IPv4 address to publish", &size);
    ck_assert_uint_eq(MCA_BTL_TCP_ADDR_HDR + 2 + strlen("no IPv4 address to publish"), size);
    mca_btl_tcp_addr_t b;
    char why[192] = "";
    ck_assert_int_eq(OPAL_SUCCESS, mca_btl_tcp_addr_unpack(blob, size, &b, why, sizeof(why)));
    ck_assert_uint_eq(0, b.count);
    ck_assert_str_eq("no IPv4 address to publish", b.declined);
    free(blob);
}
END_TEST

START_TEST(a_declined_reason_of_200_bytes_round_trips)
{
    char reason[MCA_BTL_TCP_REASON_MAX + 1];
    memset(reason, 'r', MCA_BTL_TCP_REASON_MAX);
    reason[MCA_BTL_TCP_REASON_MAX] = '\0';
    size_t size;
    uint8_t *blob = pack_declined(reason, &size);
    ck_assert_uint_eq(MCA_BTL_TCP_ADDR_HDR + 2 + MCA_BTL_TCP_REASON_MAX, size);
    mca_btl_tcp_addr_t b;
    char why[192] = "";
    ck_assert_int_eq(OPAL_SUCCESS, mca_btl_tcp_addr_unpack(blob, size, &b, why, sizeof(why)));
    ck_assert_str_eq(reason, b.declined);
    free(blob);
}
END_TEST

START_TEST(packing_more_than_sixteen_addresses_is_refused)
{
    mca_btl_tcp_addr_t a = address_of(MCA_BTL_TCP_MAX_ADDRS + 1);
    void *blob = NULL;
    size_t size = 0;
    ck_assert_int_eq(OPAL_ERR_BAD_PARAM, mca_btl_tcp_addr_pack(&a, &blob, &size));
    ck_assert_ptr_null(blob);
}
END_TEST

START_TEST(a_blob_shorter_than_the_header_is_refused)
{
    size_t size;
    uint8_t *blob = pack_count(1, &size);
    expect_address_refused(blob, 23, "23 bytes, shorter than the 24-byte header");
    expect_address_refused(NULL, 0, "0 bytes, shorter than the 24-byte header");
    free(blob);
}
END_TEST

START_TEST(a_blob_with_the_wrong_magic_is_refused)
{
    size_t size;
    uint8_t *blob = pack_count(1, &size);
    memcpy(blob, "BTCH", 4); /* a handshake's magic */
    expect_address_refused(blob, size, "not a btl/tcp address (magic 0x48435442)");
    free(blob);
}
END_TEST

START_TEST(a_blob_of_another_version_is_refused)
{
    size_t size;
    uint8_t *blob = pack_count(1, &size);
    /* Version 1: the header before the pid space, 8 bytes shorter. */
    mca_btl_tcp_put_u16(blob + 4, 1);
    expect_address_refused(blob, size, "version 1 (this build speaks 2)");
    mca_btl_tcp_put_u16(blob + 4, 3);
    expect_address_refused(blob, size, "version 3 (this build speaks 2)");
    free(blob);
}
END_TEST

START_TEST(a_blob_with_a_reserved_byte_set_is_refused)
{
    for (size_t at = 14; at < 16; ++at) {
        size_t size;
        uint8_t *blob = pack_count(1, &size);
        blob[at] = 0x80;
        expect_address_refused(blob, size, "reserved bytes are not zero");
        free(blob);
    }
}
END_TEST

START_TEST(a_declined_reason_with_a_control_byte_is_refused)
{
    size_t size;
    uint8_t *blob = pack_declined("ab", &size);
    blob[MCA_BTL_TCP_ADDR_HDR + 2 + 1] = '\0';
    expect_address_refused(blob, size, "a reason with byte 0x00 at 1 (printable text only)");
    blob[MCA_BTL_TCP_ADDR_HDR + 2 + 1] = 0x1b;
    expect_address_refused(blob, size, "a reason with byte 0x1b at 1 (printable text only)");
    blob[MCA_BTL_TCP_ADDR_HDR + 2] = 0xc3;
    expect_address_refused(blob, size, "a reason with byte 0xc3 at 0 (printable text only)");
    free(blob);
}
END_TEST

START_TEST(addresses_with_port_0_are_not_packed)
{
    mca_btl_tcp_addr_t a = address_of(1);
    a.port = 0;
    void *blob = NULL;
    size_t size = 0;
    ck_assert_int_eq(OPAL_ERR_BAD_PARAM, mca_btl_tcp_addr_pack(&a, &blob, &size));
    ck_assert_ptr_null(blob);
}
END_TEST

START_TEST(an_address_with_port_0_is_refused)
{
    size_t size;
    uint8_t *blob = pack_count(2, &size);
    mca_btl_tcp_put_u16(blob + 6, 0);
    expect_address_refused(blob, size, "port 0");
    free(blob);
}
END_TEST

START_TEST(more_than_sixteen_addresses_are_refused)
{
    /* Sizes that match the count: the count alone is at fault. */
    size_t size;
    uint8_t *blob = blob_of(17, 4 * 17, &size);
    expect_address_refused(blob, size, "17 addresses (at most 16)");
    free(blob);
    blob = blob_of(255, 4 * 255, &size);
    expect_address_refused(blob, size, "255 addresses (at most 16)");
    free(blob);
}
END_TEST

START_TEST(a_count_that_does_not_match_the_size_is_refused)
{
    size_t size;
    uint8_t *blob = blob_of(3, 8, &size);
    expect_address_refused(blob, size, "3 IPv4 and 0 IPv6 addresses in a blob of 32 bytes");
    free(blob);
    blob = blob_of(2, 9, &size);
    expect_address_refused(blob, size, "2 IPv4 and 0 IPv6 addresses in a blob of 33 bytes");
    free(blob);
}
END_TEST

START_TEST(a_declined_blob_without_its_reason_length_is_refused)
{
    size_t size;
    uint8_t *blob = blob_of(0, 1, &size);
    expect_address_refused(blob, MCA_BTL_TCP_ADDR_HDR, "a declined address without its reason");
    expect_address_refused(blob, MCA_BTL_TCP_ADDR_HDR + 1, "a declined address without its reason");
    free(blob);
}
END_TEST

START_TEST(a_declined_reason_length_that_does_not_match_the_blob_is_refused)
{
    size_t size;
    uint8_t *blob = blob_of(0, 2 + 9, &size);
    mca_btl_tcp_put_u16(blob + MCA_BTL_TCP_ADDR_HDR, 10);
    expect_address_refused(blob, size, "a reason of 10 bytes in a blob of 35");
    mca_btl_tcp_put_u16(blob + MCA_BTL_TCP_ADDR_HDR, 8);
    expect_address_refused(blob, size, "a reason of 8 bytes in a blob of 35");
    free(blob);
}
END_TEST

START_TEST(a_declined_reason_longer_than_200_bytes_is_refused)
{
    size_t size;
    uint8_t *blob = blob_of(0, 2 + MCA_BTL_TCP_REASON_MAX + 1, &size);
    mca_btl_tcp_put_u16(blob + MCA_BTL_TCP_ADDR_HDR, MCA_BTL_TCP_REASON_MAX + 1);
    expect_address_refused(blob, size, "a reason of 201 bytes in a blob of 227");
    free(blob);
}
END_TEST

/* Every strict prefix of blob is refused, each with a reason. */
static void expect_prefixes_refused(const uint8_t *blob, size_t size)
{
    for (size_t n = 0; n < size; ++n) {
        mca_btl_tcp_addr_t b;
        char why[192] = "";
        ck_assert_int_eq(OPAL_ERR_BAD_VALUE,
                         mca_btl_tcp_addr_unpack(blob, n, &b, why, sizeof(why)));
        ck_assert_msg('\0' != why[0], "the prefix of %zu bytes is refused without a reason", n);
    }
}

START_TEST(every_strict_prefix_of_an_address_is_refused)
{
    unsigned counts[] = {1, 2, MCA_BTL_TCP_MAX_ADDRS};
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); ++i) {
        size_t size;
        uint8_t *blob = pack_count(counts[i], &size);
        expect_prefixes_refused(blob, size);
        free(blob);
    }
}
END_TEST

START_TEST(every_strict_prefix_of_a_declined_address_is_refused)
{
    size_t size;
    uint8_t *blob = pack_declined("btl/tcp: no interface matches btl_tcp_if_include", &size);
    expect_prefixes_refused(blob, size);
    free(blob);
}
END_TEST

START_TEST(a_refusal_fits_in_a_small_why_and_needs_none)
{
    size_t size;
    uint8_t *blob = pack_count(1, &size);
    blob[0] = 'X';
    mca_btl_tcp_addr_t b;
    char why[8];
    memset(why, 0x7f, sizeof(why));
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE, mca_btl_tcp_addr_unpack(blob, size, &b, why, sizeof(why)));
    ck_assert_str_eq("not a b", why);
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE, mca_btl_tcp_addr_unpack(blob, size, &b, NULL, 0));
    free(blob);
}
END_TEST

/* ---------------------------------------------------------- handshake */

static void packed_hello(uint16_t kind, uint8_t out[MCA_BTL_TCP_HELLO_SIZE])
{
    mca_btl_tcp_hello_t h = {.kind = kind, .jobid = 0xfffffff0u, .rank = 31337};
    mca_btl_tcp_hello_pack(&h, out);
}

static void expect_hello_refused(const uint8_t in[MCA_BTL_TCP_HELLO_SIZE], const char *expect)
{
    mca_btl_tcp_hello_t g;
    char why[192] = "";
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE, mca_btl_tcp_hello_unpack(in, &g, why, sizeof(why)));
    ck_assert_str_eq(expect, why);
}

START_TEST(a_handshake_of_each_kind_round_trips)
{
    uint16_t kinds[] = {MCA_BTL_TCP_HELLO, MCA_BTL_TCP_ACCEPT, MCA_BTL_TCP_REJECT};
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); ++i) {
        uint8_t buf[MCA_BTL_TCP_HELLO_SIZE];
        packed_hello(kinds[i], buf);
        mca_btl_tcp_hello_t g;
        char why[192] = "";
        ck_assert_int_eq(OPAL_SUCCESS, mca_btl_tcp_hello_unpack(buf, &g, why, sizeof(why)));
        ck_assert_uint_eq(kinds[i], g.kind);
        ck_assert_uint_eq(0xfffffff0u, g.jobid);
        ck_assert_uint_eq(31337, g.rank);
    }
}
END_TEST

START_TEST(a_handshake_is_little_endian)
{
    mca_btl_tcp_hello_t h = {.kind = MCA_BTL_TCP_ACCEPT, .jobid = 0x01020304, .rank = 0x0a0b0c0d};
    uint8_t buf[MCA_BTL_TCP_HELLO_SIZE];
    mca_btl_tcp_hello_pack(&h, buf);
    const uint8_t expect[MCA_BTL_TCP_HELLO_SIZE] = {'B', 'T', 'C', 'H', 1,   0,   2,   0,
                                                    4,   3,   2,   1,   0xd, 0xc, 0xb, 0xa};
    ck_assert_mem_eq(expect, buf, sizeof(buf));
}
END_TEST

START_TEST(a_handshake_with_the_wrong_magic_is_refused)
{
    uint8_t buf[MCA_BTL_TCP_HELLO_SIZE];
    packed_hello(MCA_BTL_TCP_HELLO, buf);
    memcpy(buf, "GET ", 4);
    expect_hello_refused(buf, "not a btl/tcp handshake (magic 0x20544547)");
}
END_TEST

START_TEST(a_handshake_of_another_version_is_refused)
{
    uint8_t buf[MCA_BTL_TCP_HELLO_SIZE];
    packed_hello(MCA_BTL_TCP_HELLO, buf);
    mca_btl_tcp_put_u16(buf + 4, 2);
    expect_hello_refused(buf, "handshake version 2 (this build speaks 1)");
}
END_TEST

START_TEST(a_handshake_of_unknown_kind_is_refused)
{
    uint8_t buf[MCA_BTL_TCP_HELLO_SIZE];
    packed_hello(0, buf);
    expect_hello_refused(buf, "handshake of unknown kind 0");
    packed_hello(MCA_BTL_TCP_REJECT + 1, buf);
    expect_hello_refused(buf, "handshake of unknown kind 4");
    packed_hello(0xffff, buf);
    expect_hello_refused(buf, "handshake of unknown kind 65535");
}
END_TEST

/* ------------------------------------------------------------- frames */

START_TEST(a_frame_header_round_trips)
{
    mca_btl_tcp_frame_t f = {
        .len = 0xfedcba98u, .type = 0xee, .tag = 0x81, .status = 0xbeef, .id = 0x0102030405060708u};
    uint8_t buf[MCA_BTL_TCP_FRAME_HDR];
    mca_btl_tcp_frame_pack(&f, buf);
    const uint8_t expect[MCA_BTL_TCP_FRAME_HDR] = {0x98, 0xba, 0xdc, 0xfe, 0xee, 0x81, 0xef, 0xbe,
                                                   8,    7,    6,    5,    4,    3,    2,    1};
    ck_assert_mem_eq(expect, buf, sizeof(buf));
    mca_btl_tcp_frame_t g;
    memset(&g, 0, sizeof(g));
    mca_btl_tcp_frame_unpack(buf, &g);
    ck_assert_uint_eq(f.len, g.len);
    ck_assert_uint_eq(f.type, g.type);
    ck_assert_uint_eq(f.tag, g.tag);
    ck_assert_uint_eq(f.status, g.status);
    ck_assert_uint_eq(f.id, g.id);
}
END_TEST

START_TEST(a_target_round_trips)
{
    mca_btl_tcp_target_t t = {
        .address = 0xffffffff00001000u, .key = 0x0000000700000001u, .length = 0x8000000000000001u};
    uint8_t buf[MCA_BTL_TCP_RDMA_TARGET];
    mca_btl_tcp_target_pack(&t, buf);
    ck_assert_uint_eq(0x00, buf[0]);
    ck_assert_uint_eq(0x10, buf[1]);
    ck_assert_uint_eq(0x80, buf[23]);
    mca_btl_tcp_target_t u;
    mca_btl_tcp_target_unpack(buf, &u);
    ck_assert_uint_eq(t.address, u.address);
    ck_assert_uint_eq(t.key, u.key);
    ck_assert_uint_eq(t.length, u.length);
}
END_TEST

/* Checks a frame against MAX_AM and MAX_RDMA; why gets the reason. */
static int check(uint32_t len, uint8_t type, uint8_t tag, uint16_t status, char why[192])
{
    mca_btl_tcp_frame_t f = {.len = len, .type = type, .tag = tag, .status = status, .id = 9};
    why[0] = '\0';
    return mca_btl_tcp_frame_check(&f, MAX_AM, MAX_RDMA, why, 192);
}

static void expect_frame_accepted(uint32_t len, uint8_t type, uint8_t tag, uint16_t status)
{
    char why[192];
    ck_assert_msg(OPAL_SUCCESS == check(len, type, tag, status, why),
                  "type %u len %u tag %u status %u refused: %s", (unsigned) type, (unsigned) len,
                  (unsigned) tag, (unsigned) status, why);
}

static void expect_frame_refused(uint32_t len, uint8_t type, uint8_t tag, uint16_t status,
                                 const char *expect)
{
    char why[192];
    ck_assert_msg(OPAL_ERR_BAD_VALUE == check(len, type, tag, status, why),
                  "type %u len %u tag %u status %u accepted", (unsigned) type, (unsigned) len,
                  (unsigned) tag, (unsigned) status);
    ck_assert_str_eq(expect, why);
}

START_TEST(an_am_of_at_most_max_am_is_accepted_with_any_tag)
{
    expect_frame_accepted(0, MCA_BTL_TCP_FRAME_AM, 0, 0);
    expect_frame_accepted(MAX_AM, MCA_BTL_TCP_FRAME_AM, 0x80, 0);
    expect_frame_accepted(1, MCA_BTL_TCP_FRAME_AM, 0xff, 0);
}
END_TEST

START_TEST(an_am_over_max_am_is_refused)
{
    expect_frame_refused(MAX_AM + 1, MCA_BTL_TCP_FRAME_AM, 0x80, 0,
                         "a message of 1001 bytes (at most 1000)");
    expect_frame_refused(UINT32_MAX, MCA_BTL_TCP_FRAME_AM, 0x80, 0,
                         "a message of 4294967295 bytes (at most 1000)");
}
END_TEST

START_TEST(a_put_of_its_target_and_at_most_max_rdma_is_accepted)
{
    expect_frame_accepted(MCA_BTL_TCP_RDMA_TARGET, MCA_BTL_TCP_FRAME_PUT, 0, 0);
    expect_frame_accepted(MCA_BTL_TCP_RDMA_TARGET + MAX_RDMA, MCA_BTL_TCP_FRAME_PUT, 0, 0);
}
END_TEST

START_TEST(a_put_shorter_than_its_target_is_refused)
{
    expect_frame_refused(0, MCA_BTL_TCP_FRAME_PUT, 0, 0, "a put frame of 0 bytes (24 to 5024)");
    expect_frame_refused(23, MCA_BTL_TCP_FRAME_PUT, 0, 0, "a put frame of 23 bytes (24 to 5024)");
}
END_TEST

/* Without a limit (SIZE_MAX) the length must not wrap past the target. */
START_TEST(a_put_shorter_than_its_target_is_refused_without_a_limit)
{
    mca_btl_tcp_frame_t f = {.len = 23, .type = MCA_BTL_TCP_FRAME_PUT};
    char why[192] = "";
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE,
                     mca_btl_tcp_frame_check(&f, SIZE_MAX, SIZE_MAX, why, sizeof(why)));
    const char *expect = "a put frame of 23 bytes";
    ck_assert_msg(0 == strncmp(expect, why, strlen(expect)), "'%s' does not say '%s'", why, expect);
}
END_TEST

START_TEST(a_put_over_max_rdma_is_refused)
{
    expect_frame_refused(MCA_BTL_TCP_RDMA_TARGET + MAX_RDMA + 1, MCA_BTL_TCP_FRAME_PUT, 0, 0,
                         "a put frame of 5025 bytes (24 to 5024)");
    expect_frame_refused(UINT32_MAX, MCA_BTL_TCP_FRAME_PUT, 0, 0,
                         "a put frame of 4294967295 bytes (24 to 5024)");
}
END_TEST

START_TEST(a_get_of_exactly_its_target_is_accepted)
{
    expect_frame_accepted(MCA_BTL_TCP_RDMA_TARGET, MCA_BTL_TCP_FRAME_GET, 0, 0);
}
END_TEST

START_TEST(a_get_of_any_other_length_is_refused)
{
    expect_frame_refused(0, MCA_BTL_TCP_FRAME_GET, 0, 0, "a get frame of 0 bytes (24)");
    expect_frame_refused(23, MCA_BTL_TCP_FRAME_GET, 0, 0, "a get frame of 23 bytes (24)");
    expect_frame_refused(25, MCA_BTL_TCP_FRAME_GET, 0, 0, "a get frame of 25 bytes (24)");
}
END_TEST

START_TEST(get_data_of_at_most_max_rdma_is_accepted)
{
    expect_frame_accepted(0, MCA_BTL_TCP_FRAME_GET_DATA, 0, MCA_BTL_TCP_STATUS_OK);
    expect_frame_accepted(MAX_RDMA, MCA_BTL_TCP_FRAME_GET_DATA, 0, MCA_BTL_TCP_STATUS_OK);
}
END_TEST

START_TEST(an_empty_get_data_carries_each_refusal)
{
    expect_frame_accepted(0, MCA_BTL_TCP_FRAME_GET_DATA, 0, MCA_BTL_TCP_STATUS_NO_REGION);
    expect_frame_accepted(0, MCA_BTL_TCP_FRAME_GET_DATA, 0, MCA_BTL_TCP_STATUS_BOUNDS);
    expect_frame_accepted(0, MCA_BTL_TCP_FRAME_GET_DATA, 0, MCA_BTL_TCP_STATUS_ACCESS);
}
END_TEST

START_TEST(get_data_over_max_rdma_is_refused)
{
    expect_frame_refused(MAX_RDMA + 1, MCA_BTL_TCP_FRAME_GET_DATA, 0, 0,
                         "get data of 5001 bytes with status 0 (at most 5000)");
}
END_TEST

START_TEST(get_data_with_both_a_refusal_and_data_is_refused)
{
    expect_frame_refused(8, MCA_BTL_TCP_FRAME_GET_DATA, 0, MCA_BTL_TCP_STATUS_BOUNDS,
                         "get data of 8 bytes with status 2 (at most 5000)");
}
END_TEST

START_TEST(an_empty_put_ack_is_accepted_with_each_status)
{
    for (uint16_t s = MCA_BTL_TCP_STATUS_OK; s <= MCA_BTL_TCP_STATUS_ACCESS; ++s) {
        expect_frame_accepted(0, MCA_BTL_TCP_FRAME_PUT_ACK, 0, s);
    }
}
END_TEST

START_TEST(a_put_ack_with_a_length_or_a_tag_is_refused)
{
    expect_frame_refused(4, MCA_BTL_TCP_FRAME_PUT_ACK, 0, 0,
                         "a frame of type 3 with 4 bytes and tag 0");
    expect_frame_refused(0, MCA_BTL_TCP_FRAME_PUT_ACK, 1, 0,
                         "a frame of type 3 with tag 1 (only messages have one)");
}
END_TEST

START_TEST(an_empty_bye_is_accepted)
{
    expect_frame_accepted(0, MCA_BTL_TCP_FRAME_BYE, 0, 0);
}
END_TEST

START_TEST(a_bye_with_a_length_or_a_tag_is_refused)
{
    expect_frame_refused(1, MCA_BTL_TCP_FRAME_BYE, 0, 0,
                         "a frame of type 6 with 1 bytes and tag 0");
    expect_frame_refused(0, MCA_BTL_TCP_FRAME_BYE, 3, 0,
                         "a frame of type 6 with tag 3 (only messages have one)");
}
END_TEST

START_TEST(a_tag_on_a_put_get_or_reply_is_refused)
{
    expect_frame_refused(24, MCA_BTL_TCP_FRAME_PUT, 0x80, 0,
                         "a frame of type 2 with tag 128 (only messages have one)");
    expect_frame_refused(24, MCA_BTL_TCP_FRAME_GET, 1, 0,
                         "a frame of type 4 with tag 1 (only messages have one)");
    expect_frame_refused(8, MCA_BTL_TCP_FRAME_GET_DATA, 2, 0,
                         "a frame of type 5 with tag 2 (only messages have one)");
}
END_TEST

START_TEST(an_unknown_type_is_named_before_anything_else)
{
    expect_frame_refused(0, 99, 7, 1, "a frame of unknown type 99");
    expect_frame_refused(0, 0, 0, 0, "a frame of unknown type 0");
}
END_TEST

START_TEST(a_status_on_a_frame_that_has_none_is_refused)
{
    expect_frame_refused(0, MCA_BTL_TCP_FRAME_AM, 0, 1, "a frame of type 1 with status 1");
    expect_frame_refused(24, MCA_BTL_TCP_FRAME_PUT, 0, 2, "a frame of type 2 with status 2");
    expect_frame_refused(24, MCA_BTL_TCP_FRAME_GET, 0, 3, "a frame of type 4 with status 3");
    expect_frame_refused(0, MCA_BTL_TCP_FRAME_BYE, 0, 0x8000,
                         "a frame of type 6 with status 32768");
}
END_TEST

START_TEST(a_reply_with_an_unknown_status_is_refused)
{
    expect_frame_refused(0, MCA_BTL_TCP_FRAME_PUT_ACK, 0, 4, "a reply with unknown status 4");
    expect_frame_refused(0, MCA_BTL_TCP_FRAME_GET_DATA, 0, 0xffff,
                         "a reply with unknown status 65535");
}
END_TEST

START_TEST(a_frame_of_unknown_type_is_refused)
{
    expect_frame_refused(0, 0, 0, 0, "a frame of unknown type 0");
    expect_frame_refused(0, MCA_BTL_TCP_FRAME_BYE + 1, 0, 0, "a frame of unknown type 7");
    expect_frame_refused(24, 0xff, 0, 0, "a frame of unknown type 255");
}
END_TEST

/* ------------------------------------------------------------ targets */

static int target(uint8_t type, uint32_t len, uint64_t address, uint64_t length, char why[192])
{
    mca_btl_tcp_frame_t f = {.len = len, .type = type};
    mca_btl_tcp_target_t t = {.address = address, .key = 1, .length = length};
    why[0] = '\0';
    return mca_btl_tcp_target_check(&f, &t, MAX_RDMA, why, 192);
}

START_TEST(a_target_within_the_limits_is_accepted)
{
    char why[192];
    ck_assert_int_eq(OPAL_SUCCESS, target(MCA_BTL_TCP_FRAME_PUT, 24 + 16, 0x1000, 16, why));
    ck_assert_int_eq(OPAL_SUCCESS, target(MCA_BTL_TCP_FRAME_PUT, 24, 0x1000, 0, why));
    ck_assert_int_eq(OPAL_SUCCESS,
                     target(MCA_BTL_TCP_FRAME_PUT, 24 + MAX_RDMA, 0x1000, MAX_RDMA, why));
    ck_assert_int_eq(OPAL_SUCCESS, target(MCA_BTL_TCP_FRAME_GET, 24, 0x1000, MAX_RDMA, why));
    /* The last byte of the address space, but not past it. */
    ck_assert_int_eq(OPAL_SUCCESS, target(MCA_BTL_TCP_FRAME_GET, 24, UINT64_MAX - 16, 16, why));
}
END_TEST

START_TEST(a_target_longer_than_max_rdma_is_refused)
{
    char why[192];
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE, target(MCA_BTL_TCP_FRAME_GET, 24, 0, MAX_RDMA + 1, why));
    ck_assert_str_eq("a transfer of 5001 bytes (at most 5000)", why);
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE, target(MCA_BTL_TCP_FRAME_PUT, 24, 0, UINT64_MAX, why));
    ck_assert_str_eq("a transfer of 18446744073709551615 bytes (at most 5000)", why);
}
END_TEST

START_TEST(a_target_range_that_wraps_is_refused)
{
    char why[192];
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE,
                     target(MCA_BTL_TCP_FRAME_GET, 24, UINT64_MAX - 4, 16, why));
    ck_assert_str_eq("a range at 0xfffffffffffffffb of 16 bytes that wraps", why);
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE,
                     target(MCA_BTL_TCP_FRAME_PUT, 24 + 16, UINT64_MAX - 4, 16, why));
    ck_assert_str_eq("a range at 0xfffffffffffffffb of 16 bytes that wraps", why);
}
END_TEST

START_TEST(a_put_whose_length_disagrees_with_its_frame_is_refused)
{
    char why[192];
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE, target(MCA_BTL_TCP_FRAME_PUT, 24 + 16, 0x1000, 15, why));
    ck_assert_str_eq("a put of 15 bytes in a frame of 40", why);
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE, target(MCA_BTL_TCP_FRAME_PUT, 24 + 16, 0x1000, 17, why));
    ck_assert_str_eq("a put of 17 bytes in a frame of 40", why);
}
END_TEST

START_TEST(each_status_has_its_own_text)
{
    ck_assert_str_eq("done", mca_btl_tcp_status_string(MCA_BTL_TCP_STATUS_OK));
    ck_assert_str_eq("no registration has that key",
                     mca_btl_tcp_status_string(MCA_BTL_TCP_STATUS_NO_REGION));
    ck_assert_str_eq("the range is outside the registration",
                     mca_btl_tcp_status_string(MCA_BTL_TCP_STATUS_BOUNDS));
    ck_assert_str_eq("the registration does not allow it",
                     mca_btl_tcp_status_string(MCA_BTL_TCP_STATUS_ACCESS));
    ck_assert_str_eq("an unknown status", mca_btl_tcp_status_string(4));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("btl_tcp_wire");
    OPAL_TEST_ADD(s, an_address_of_one_ipv4_round_trips);
    OPAL_TEST_ADD(s, an_address_of_sixteen_ipv4_round_trips);
    OPAL_TEST_ADD(s, addresses_of_ipv6_alone_and_of_both_round_trip);
    OPAL_TEST_ADD(s, ipv6_addresses_follow_the_ipv4_ones_whatever_their_order);
    OPAL_TEST_ADD(s, ipv6_counts_that_do_not_match_the_size_are_refused);
    OPAL_TEST_ADD(s, an_address_is_little_endian_with_the_ipv4_in_network_order);
    OPAL_TEST_ADD(s, a_declined_address_round_trips_with_its_reason);
    OPAL_TEST_ADD(s, a_declined_reason_of_200_bytes_round_trips);
    OPAL_TEST_ADD(s, packing_more_than_sixteen_addresses_is_refused);
    OPAL_TEST_ADD(s, a_blob_shorter_than_the_header_is_refused);
    OPAL_TEST_ADD(s, a_blob_with_the_wrong_magic_is_refused);
    OPAL_TEST_ADD(s, a_blob_of_another_version_is_refused);
    OPAL_TEST_ADD(s, a_blob_with_a_reserved_byte_set_is_refused);
    OPAL_TEST_ADD(s, an_address_with_port_0_is_refused);
    OPAL_TEST_ADD(s, addresses_with_port_0_are_not_packed);
    OPAL_TEST_ADD(s, a_declined_reason_with_a_control_byte_is_refused);
    OPAL_TEST_ADD(s, a_tag_on_a_put_get_or_reply_is_refused);
    OPAL_TEST_ADD(s, an_unknown_type_is_named_before_anything_else);
    OPAL_TEST_ADD(s, more_than_sixteen_addresses_are_refused);
    OPAL_TEST_ADD(s, a_count_that_does_not_match_the_size_is_refused);
    OPAL_TEST_ADD(s, a_declined_blob_without_its_reason_length_is_refused);
    OPAL_TEST_ADD(s, a_declined_reason_length_that_does_not_match_the_blob_is_refused);
    OPAL_TEST_ADD(s, a_declined_reason_longer_than_200_bytes_is_refused);
    OPAL_TEST_ADD(s, every_strict_prefix_of_an_address_is_refused);
    OPAL_TEST_ADD(s, every_strict_prefix_of_a_declined_address_is_refused);
    OPAL_TEST_ADD(s, a_refusal_fits_in_a_small_why_and_needs_none);
    OPAL_TEST_ADD(s, a_handshake_of_each_kind_round_trips);
    OPAL_TEST_ADD(s, a_handshake_is_little_endian);
    OPAL_TEST_ADD(s, a_handshake_with_the_wrong_magic_is_refused);
    OPAL_TEST_ADD(s, a_handshake_of_another_version_is_refused);
    OPAL_TEST_ADD(s, a_handshake_of_unknown_kind_is_refused);
    OPAL_TEST_ADD(s, a_frame_header_round_trips);
    OPAL_TEST_ADD(s, a_target_round_trips);
    OPAL_TEST_ADD(s, an_am_of_at_most_max_am_is_accepted_with_any_tag);
    OPAL_TEST_ADD(s, an_am_over_max_am_is_refused);
    OPAL_TEST_ADD(s, a_put_of_its_target_and_at_most_max_rdma_is_accepted);
    OPAL_TEST_ADD(s, a_put_shorter_than_its_target_is_refused);
    OPAL_TEST_ADD(s, a_put_shorter_than_its_target_is_refused_without_a_limit);
    OPAL_TEST_ADD(s, a_put_over_max_rdma_is_refused);
    OPAL_TEST_ADD(s, a_get_of_exactly_its_target_is_accepted);
    OPAL_TEST_ADD(s, a_get_of_any_other_length_is_refused);
    OPAL_TEST_ADD(s, get_data_of_at_most_max_rdma_is_accepted);
    OPAL_TEST_ADD(s, an_empty_get_data_carries_each_refusal);
    OPAL_TEST_ADD(s, get_data_over_max_rdma_is_refused);
    OPAL_TEST_ADD(s, get_data_with_both_a_refusal_and_data_is_refused);
    OPAL_TEST_ADD(s, an_empty_put_ack_is_accepted_with_each_status);
    OPAL_TEST_ADD(s, a_put_ack_with_a_length_or_a_tag_is_refused);
    OPAL_TEST_ADD(s, an_empty_bye_is_accepted);
    OPAL_TEST_ADD(s, a_bye_with_a_length_or_a_tag_is_refused);
    OPAL_TEST_ADD(s, a_status_on_a_frame_that_has_none_is_refused);
    OPAL_TEST_ADD(s, a_reply_with_an_unknown_status_is_refused);
    OPAL_TEST_ADD(s, a_frame_of_unknown_type_is_refused);
    OPAL_TEST_ADD(s, a_target_within_the_limits_is_accepted);
    OPAL_TEST_ADD(s, a_target_longer_than_max_rdma_is_refused);
    OPAL_TEST_ADD(s, a_target_range_that_wraps_is_refused);
    OPAL_TEST_ADD(s, a_put_whose_length_disagrees_with_its_frame_is_refused);
    OPAL_TEST_ADD(s, each_status_has_its_own_text);
    return opal_test_run(s);
}
