/*
 * na/ofi's unexpected message header as units (opal/mca/na/ofi/
 * na_ofi_wire.c compiled in): what is encoded decodes to the same, and
 * every truncation, address length out of range and tag past the max is
 * refused with a reason.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/na/ofi/na_ofi_wire.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

/* A header with an address of alen bytes (1, 2, ...), then 5 payload
 * bytes: returns the message's size. */
static size_t make_msg(uint8_t *out, size_t room, uint16_t alen, uint32_t tag)
{
    uint8_t addr[NA_OFI_ADDR_MAX + 1];
    for (size_t i = 0; i < sizeof(addr); ++i) {
        addr[i] = (uint8_t) (i + 1);
    }
    na_ofi_uhdr_t h = {.tag = tag, .dest_id = 7, .src_id = 200, .addrlen = alen, .addr = addr};
    size_t n = na_ofi_uhdr_encode(&h, out, room);
    ck_assert_uint_eq(n, NA_OFI_UHDR_FIXED + (size_t) alen);
    ck_assert_uint_ge(room - n, 5);
    memcpy(out + n, "hello", 5);
    return n + 5;
}

START_TEST(a_header_round_trips_and_names_where_the_payload_starts)
{
    uint8_t buf[NA_OFI_UHDR_MAX + 8];
    const uint16_t lens[] = {1, 16, NA_OFI_ADDR_MAX};
    const uint32_t tags[] = {0, 1, NA_OFI_MAX_TAG};
    for (size_t i = 0; i < 3; ++i) {
        size_t n = make_msg(buf, sizeof(buf), lens[i], tags[i]);
        na_ofi_uhdr_t h;
        size_t hdr = 0;
        char why[NA_OFI_WHY_MAX];
        ck_assert_int_eq(na_ofi_uhdr_decode(buf, n, &h, &hdr, why), OPAL_SUCCESS);
        ck_assert_uint_eq(h.tag, tags[i]);
        ck_assert_uint_eq(h.dest_id, 7);
        ck_assert_uint_eq(h.src_id, 200);
        ck_assert_uint_eq(h.addrlen, lens[i]);
        ck_assert_ptr_eq(h.addr, buf + NA_OFI_UHDR_FIXED);
        ck_assert_uint_eq(h.addr[lens[i] - 1], (uint8_t) lens[i]);
        ck_assert_uint_eq(hdr, NA_OFI_UHDR_FIXED + (size_t) lens[i]);
        ck_assert(0 == memcmp(buf + hdr, "hello", 5));
        /* No payload at all is a message too. */
        ck_assert_int_eq(na_ofi_uhdr_decode(buf, hdr, &h, &hdr, why), OPAL_SUCCESS);
    }
    /* Too small a buffer to encode into. */
    na_ofi_uhdr_t h = {.tag = 1, .addrlen = 4, .addr = (const uint8_t *) "abcd"};
    ck_assert_uint_eq(na_ofi_uhdr_encode(&h, buf, NA_OFI_UHDR_FIXED + 3), 0);
}
END_TEST

START_TEST(every_truncation_is_refused_and_says_where)
{
    uint8_t buf[64];
    (void) make_msg(buf, sizeof(buf), 16, 42);
    size_t hdr_end = NA_OFI_UHDR_FIXED + 16;
    for (size_t k = 0; k < hdr_end; ++k) {
        uint8_t *copy = malloc(k + 1); /* exactly k bytes are read at most */
        memcpy(copy, buf, k);
        na_ofi_uhdr_t h;
        size_t hdr = 0;
        char why[NA_OFI_WHY_MAX] = "";
        ck_assert_int_eq(na_ofi_uhdr_decode(copy, k, &h, &hdr, why), OPAL_ERR_BAD_PARAM);
        ck_assert_ptr_null(h.addr);
        ck_assert_ptr_nonnull(strstr(why, k < NA_OFI_UHDR_FIXED
                                              ? "shorter than the 8-byte header"
                                              : "cut inside its sender's address"));
        free(copy);
    }
}
END_TEST

START_TEST(an_address_length_of_0_or_past_the_max_is_refused)
{
    uint8_t buf[NA_OFI_UHDR_MAX + 64];
    memset(buf, 0, sizeof(buf));
    na_ofi_uhdr_t h;
    size_t hdr = 0;
    char why[NA_OFI_WHY_MAX];
    const uint16_t bad[] = {0, NA_OFI_ADDR_MAX + 1, UINT16_MAX};
    for (size_t i = 0; i < 3; ++i) {
        buf[6] = (uint8_t) (bad[i] & 0xff); /* little-endian u16 at offset 6 */
        buf[7] = (uint8_t) (bad[i] >> 8);
        ck_assert_int_eq(na_ofi_uhdr_decode(buf, sizeof(buf), &h, &hdr, why), OPAL_ERR_BAD_PARAM);
        ck_assert_ptr_null(h.addr);
        char want[64];
        snprintf(want, sizeof(want), "address of %u bytes (1 to %d expected)", (unsigned) bad[i],
                 NA_OFI_ADDR_MAX);
        ck_assert_ptr_nonnull(strstr(why, want));
    }
}
END_TEST

START_TEST(a_tag_past_the_max_is_refused_yet_the_sender_is_still_found)
{
    uint8_t buf[64];
    /* UINT32_MAX is the goodbye's tag: refused only with a payload (the
     * goodbye case below). */
    const uint32_t bad[] = {NA_OFI_MAX_TAG + 1u, 0xdeadbeefu, UINT32_MAX - 1u};
    for (size_t i = 0; i < 3; ++i) {
        size_t n = make_msg(buf, sizeof(buf), 12, bad[i]);
        na_ofi_uhdr_t h;
        size_t hdr = 0;
        char why[NA_OFI_WHY_MAX];
        ck_assert_int_eq(na_ofi_uhdr_decode(buf, n, &h, &hdr, why), OPAL_ERR_BAD_PARAM);
        char want[64];
        snprintf(want, sizeof(want), "tag 0x%x is above na/ofi's max tag 0x7fffffff", bad[i]);
        ck_assert_str_eq(why, want);
        /* The address is there to name who sent it. */
        ck_assert_ptr_eq(h.addr, buf + NA_OFI_UHDR_FIXED);
        ck_assert_uint_eq(h.addrlen, 12);
    }
}
END_TEST

START_TEST(a_goodbye_is_its_header_alone)
{
    uint8_t buf[64];
    size_t n = make_msg(buf, sizeof(buf), 12, NA_OFI_TAG_BYE);
    na_ofi_uhdr_t h;
    size_t hdr = 0;
    char why[NA_OFI_WHY_MAX];
    /* Without the payload make_msg appends: a goodbye. */
    ck_assert_int_eq(na_ofi_uhdr_decode(buf, n - 5, &h, &hdr, why), OPAL_SUCCESS);
    ck_assert_uint_eq(h.tag, NA_OFI_TAG_BYE);
    ck_assert_uint_eq(hdr, n - 5);
    ck_assert_ptr_eq(h.addr, buf + NA_OFI_UHDR_FIXED);
    /* With it: refused, the sender still named. */
    ck_assert_int_eq(na_ofi_uhdr_decode(buf, n, &h, &hdr, why), OPAL_ERR_BAD_PARAM);
    ck_assert_str_eq(why, "a goodbye (tag 0xffffffff) with 5 bytes after its header");
    ck_assert_ptr_eq(h.addr, buf + NA_OFI_UHDR_FIXED);
    ck_assert_uint_eq(h.addrlen, 12);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("na_ofi_wire");
    OPAL_TEST_ADD(s, a_header_round_trips_and_names_where_the_payload_starts);
    OPAL_TEST_ADD(s, every_truncation_is_refused_and_says_where);
    OPAL_TEST_ADD(s, an_address_length_of_0_or_past_the_max_is_refused);
    OPAL_TEST_ADD(s, a_tag_past_the_max_is_refused_yet_the_sender_is_still_found);
    OPAL_TEST_ADD(s, a_goodbye_is_its_header_alone);
    return opal_test_run(s);
}
