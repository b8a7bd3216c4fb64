/*
 * btl/tcp's wire formats as units (opal/mca/btl/tcp/btl_tcp_wire.h): the
 * published address, the handshake, frame headers and the checks a
 * receiver makes of what a peer sent.
 */
#include "opal/opal_config.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/tcp/btl_tcp_wire.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

static void pack_two(void **blob, size_t *size)
{
    mca_btl_tcp_addr_t a;
    memset(&a, 0, sizeof(a));
    a.port = 40123;
    a.pid = 4711;
    a.count = 2;
    a.ipv4[0] = htonl(0x0a000001);
    a.ipv4[1] = htonl(0xc0a80102);
    ck_assert_int_eq(OPAL_SUCCESS, mca_btl_tcp_addr_pack(&a, blob, size));
}

START_TEST(address_round_trips)
{
    void *blob;
    size_t size;
    pack_two(&blob, &size);
    ck_assert_uint_eq(MCA_BTL_TCP_ADDR_HDR + 8, size);
    mca_btl_tcp_addr_t b;
    char why[160];
    ck_assert_int_eq(OPAL_SUCCESS, mca_btl_tcp_addr_unpack(blob, size, &b, why, sizeof(why)));
    ck_assert_uint_eq(40123, b.port);
    ck_assert_uint_eq(4711, b.pid);
    ck_assert_uint_eq(2, b.count);
    ck_assert_uint_eq(htonl(0xc0a80102), b.ipv4[1]);
    free(blob);
}
END_TEST

START_TEST(declined_address_carries_its_reason)
{
    mca_btl_tcp_addr_t a;
    memset(&a, 0, sizeof(a));
    strcpy(a.declined, "no IPv4 address to publish");
    void *blob;
    size_t size;
    ck_assert_int_eq(OPAL_SUCCESS, mca_btl_tcp_addr_pack(&a, &blob, &size));
    mca_btl_tcp_addr_t b;
    char why[160];
    ck_assert_int_eq(OPAL_SUCCESS, mca_btl_tcp_addr_unpack(blob, size, &b, why, sizeof(why)));
    ck_assert_uint_eq(0, b.count);
    ck_assert_str_eq("no IPv4 address to publish", b.declined);
    free(blob);
}
END_TEST

START_TEST(every_prefix_of_an_address_is_refused)
{
    void *blob;
    size_t size;
    pack_two(&blob, &size);
    for (size_t n = 0; n < size; ++n) {
        mca_btl_tcp_addr_t b;
        char why[160] = "";
        ck_assert_int_eq(OPAL_ERR_BAD_VALUE,
                         mca_btl_tcp_addr_unpack(blob, n, &b, why, sizeof(why)));
        ck_assert_str_ne("", why);
    }
    free(blob);
}
END_TEST

/* Unpacks blob after one byte at offset was set to value: refused, with
 * why containing expect. */
static void expect_refused(size_t offset, uint8_t value, const char *expect)
{
    void *blob;
    size_t size;
    pack_two(&blob, &size);
    ((uint8_t *) blob)[offset] = value;
    mca_btl_tcp_addr_t b;
    char why[160] = "";
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE, mca_btl_tcp_addr_unpack(blob, size, &b, why, sizeof(why)));
    ck_assert_msg(NULL != strstr(why, expect), "'%s' does not say '%s'", why, expect);
    free(blob);
}

START_TEST(malformed_addresses_are_refused_with_the_reason)
{
    expect_refused(0, 'X', "not a btl/tcp address");
    expect_refused(4, 2, "version 2");
    expect_refused(13, 1, "reserved bytes");
    expect_refused(12, 3, "3 addresses in a blob of 24 bytes");
    expect_refused(12, 17, "17 addresses (at most 16)");
    void *blob;
    size_t size;
    pack_two(&blob, &size);
    memset((uint8_t *) blob + 6, 0, 2);
    mca_btl_tcp_addr_t b;
    char why[160] = "";
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE, mca_btl_tcp_addr_unpack(blob, size, &b, why, sizeof(why)));
    ck_assert_str_eq("port 0", why);
    free(blob);
}
END_TEST

START_TEST(handshake_round_trips_and_refuses_strangers)
{
    uint8_t buf[MCA_BTL_TCP_HELLO_SIZE];
    mca_btl_tcp_hello_t h = {.kind = MCA_BTL_TCP_ACCEPT, .jobid = 0xfffffff0u, .rank = 31337};
    mca_btl_tcp_hello_pack(&h, buf);
    mca_btl_tcp_hello_t g;
    char why[160] = "";
    ck_assert_int_eq(OPAL_SUCCESS, mca_btl_tcp_hello_unpack(buf, &g, why, sizeof(why)));
    ck_assert_uint_eq(MCA_BTL_TCP_ACCEPT, g.kind);
    ck_assert_uint_eq(0xfffffff0u, g.jobid);
    ck_assert_uint_eq(31337, g.rank);
    buf[6] = 7;
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE, mca_btl_tcp_hello_unpack(buf, &g, why, sizeof(why)));
    ck_assert_str_eq("handshake of unknown kind 7", why);
    memcpy(buf, "GET ", 4);
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE, mca_btl_tcp_hello_unpack(buf, &g, why, sizeof(why)));
    ck_assert(NULL != strstr(why, "not a btl/tcp handshake"));
}
END_TEST

static int check(uint32_t len, uint8_t type, uint8_t tag, uint16_t status, char *why)
{
    mca_btl_tcp_frame_t f = {.len = len, .type = type, .tag = tag, .status = status, .id = 9};
    uint8_t buf[MCA_BTL_TCP_FRAME_HDR];
    mca_btl_tcp_frame_pack(&f, buf);
    mca_btl_tcp_frame_t g;
    mca_btl_tcp_frame_unpack(buf, &g);
    ck_assert_int_eq(0, memcmp(&f, &g, sizeof(f)));
    why[0] = '\0';
    return mca_btl_tcp_frame_check(&g, 1000, 5000, why, 192);
}

START_TEST(frames_within_the_limits_are_accepted)
{
    char why[192];
    ck_assert_int_eq(OPAL_SUCCESS, check(1000, MCA_BTL_TCP_FRAME_AM, 0x80, 0, why));
    ck_assert_int_eq(OPAL_SUCCESS, check(0, MCA_BTL_TCP_FRAME_AM, 0xff, 0, why));
    ck_assert_int_eq(OPAL_SUCCESS, check(24 + 5000, MCA_BTL_TCP_FRAME_PUT, 0, 0, why));
    ck_assert_int_eq(OPAL_SUCCESS, check(24, MCA_BTL_TCP_FRAME_GET, 0, 0, why));
    ck_assert_int_eq(OPAL_SUCCESS, check(5000, MCA_BTL_TCP_FRAME_GET_DATA, 0, 0, why));
    ck_assert_int_eq(OPAL_SUCCESS, check(0, MCA_BTL_TCP_FRAME_GET_DATA, 0, 2, why));
    ck_assert_int_eq(OPAL_SUCCESS, check(0, MCA_BTL_TCP_FRAME_PUT_ACK, 0, 3, why));
    ck_assert_int_eq(OPAL_SUCCESS, check(0, MCA_BTL_TCP_FRAME_BYE, 0, 0, why));
}
END_TEST

START_TEST(frames_past_the_limits_are_refused_with_the_reason)
{
    char why[192];
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE, check(1001, MCA_BTL_TCP_FRAME_AM, 0x80, 0, why));
    ck_assert_str_eq("a message of 1001 bytes (at most 1000)", why);
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE, check(23, MCA_BTL_TCP_FRAME_PUT, 0, 0, why));
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE, check(24 + 5001, MCA_BTL_TCP_FRAME_PUT, 0, 0, why));
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE, check(25, MCA_BTL_TCP_FRAME_GET, 0, 0, why));
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE, check(5001, MCA_BTL_TCP_FRAME_GET_DATA, 0, 0, why));
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE, check(8, MCA_BTL_TCP_FRAME_GET_DATA, 0, 1, why));
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE, check(4, MCA_BTL_TCP_FRAME_PUT_ACK, 0, 0, why));
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE, check(0, MCA_BTL_TCP_FRAME_BYE, 3, 0, why));
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE, check(0, MCA_BTL_TCP_FRAME_AM, 0, 1, why));
    ck_assert_str_eq("a frame of type 1 with status 1", why);
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE, check(0, MCA_BTL_TCP_FRAME_PUT_ACK, 0, 4, why));
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE, check(0, 99, 0, 0, why));
    ck_assert_str_eq("a frame of unknown type 99", why);
}
END_TEST

START_TEST(targets_that_wrap_or_disagree_are_refused)
{
    char why[192];
    mca_btl_tcp_frame_t put = {.len = 24 + 16, .type = MCA_BTL_TCP_FRAME_PUT};
    mca_btl_tcp_target_t t = {.address = 0x1000, .key = 1, .length = 16};
    ck_assert_int_eq(OPAL_SUCCESS, mca_btl_tcp_target_check(&put, &t, 5000, why, sizeof(why)));
    t.length = 15;
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE,
                     mca_btl_tcp_target_check(&put, &t, 5000, why, sizeof(why)));
    mca_btl_tcp_frame_t get = {.len = 24, .type = MCA_BTL_TCP_FRAME_GET};
    t.address = UINT64_MAX - 4;
    t.length = 16;
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE,
                     mca_btl_tcp_target_check(&get, &t, 5000, why, sizeof(why)));
    ck_assert(NULL != strstr(why, "wraps"));
    t.address = 0;
    t.length = 5001;
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE,
                     mca_btl_tcp_target_check(&get, &t, 5000, why, sizeof(why)));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("btl_tcp_wire");
    OPAL_TEST_ADD(s, address_round_trips);
    OPAL_TEST_ADD(s, declined_address_carries_its_reason);
    OPAL_TEST_ADD(s, every_prefix_of_an_address_is_refused);
    OPAL_TEST_ADD(s, malformed_addresses_are_refused_with_the_reason);
    OPAL_TEST_ADD(s, handshake_round_trips_and_refuses_strangers);
    OPAL_TEST_ADD(s, frames_within_the_limits_are_accepted);
    OPAL_TEST_ADD(s, frames_past_the_limits_are_refused_with_the_reason);
    OPAL_TEST_ADD(s, targets_that_wrap_or_disagree_are_refused);
    return opal_test_run(s);
}
