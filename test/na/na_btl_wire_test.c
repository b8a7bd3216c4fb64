/*
 * na/btl's wire formats as units (opal/mca/na/btl/na_btl_wire.c compiled
 * in): what is encoded decodes to the same, and every truncation, trailing
 * byte or bad field is refused with a reason.
 */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/na/btl/na_btl_wire.h"
#include "opal/util/opal_cursor.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

/* A card of two pairs; *size gets its bytes. */
static uint8_t *make_card(size_t *size)
{
    const char *keys[2] = {"opal.proc", "btl.sm"};
    const char *v0 = "node=1;host=vm;cpuset=";
    static uint8_t v1[40];
    memset(v1, 7, sizeof(v1));
    const void *values[2] = {v0, v1};
    uint32_t sizes[2] = {(uint32_t) strlen(v0), sizeof(v1)};
    *size = na_btl_card_size(2, keys, sizes);
    uint8_t *card = malloc(*size);
    ck_assert_int_eq(na_btl_card_encode(card, *size, 0xfffffff0u, 4242, 2, keys, values, sizes),
                     OPAL_SUCCESS);
    return card;
}

START_TEST(a_header_round_trips_and_short_or_flagged_ones_are_refused)
{
    uint8_t buf[NA_BTL_HDR_SIZE];
    na_btl_hdr_t in = {.dest_id = 3, .source_id = 255, .tag = 0xdeadbeefu}, out;
    char why[NA_BTL_WHY_MAX];
    na_btl_hdr_encode(&in, buf);
    ck_assert_int_eq(na_btl_hdr_decode(buf, sizeof(buf), &out, why), OPAL_SUCCESS);
    ck_assert_uint_eq(out.dest_id, 3);
    ck_assert_uint_eq(out.source_id, 255);
    ck_assert_uint_eq(out.tag, 0xdeadbeefu);
    for (size_t n = 0; n < NA_BTL_HDR_SIZE; ++n) {
        ck_assert_int_eq(na_btl_hdr_decode(buf, n, &out, why), OPAL_ERR_BAD_PARAM);
        ck_assert_ptr_nonnull(strstr(why, "shorter"));
    }
    buf[2] = 1;
    ck_assert_int_eq(na_btl_hdr_decode(buf, sizeof(buf), &out, why), OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_nonnull(strstr(why, "flags"));
}
END_TEST

START_TEST(a_card_decodes_and_every_truncation_or_trailing_byte_is_refused)
{
    size_t n;
    uint8_t *card = make_card(&n);
    na_btl_card_t *c = malloc(sizeof(*c));
    char why[NA_BTL_WHY_MAX];
    ck_assert_int_eq(na_btl_card_decode(card, n, c, why), OPAL_SUCCESS);
    ck_assert_uint_eq(c->rank, 4242);
    ck_assert_uint_eq(c->npairs, 2);
    ck_assert_str_eq(c->pairs[1].key, "btl.sm");
    ck_assert_uint_eq(c->pairs[1].size, 40);
    for (size_t cut = 0; cut < n; ++cut) {
        ck_assert_int_eq(na_btl_card_decode(card, cut, c, why), OPAL_ERR_BAD_PARAM);
    }
    uint8_t *longer = malloc(n + 1);
    memcpy(longer, card, n);
    longer[n] = 0;
    ck_assert_int_eq(na_btl_card_decode(longer, n + 1, c, why), OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_nonnull(strstr(why, "longer"));
    card[4] = 2; /* version */
    ck_assert_int_eq(na_btl_card_decode(card, n, c, why), OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_nonnull(strstr(why, "version"));
    free(longer);
    free(c);
    free(card);
}
END_TEST

START_TEST(uris_of_a_job_and_of_a_card_round_trip)
{
    char buf[2048];
    size_t size = sizeof(buf);
    char why[NA_BTL_WHY_MAX];
    na_btl_uri_t uri;
    ck_assert_int_eq(na_btl_uri_format(buf, &size, 18491, 7, NULL, 0), OPAL_SUCCESS);
    ck_assert_str_eq(buf, "job/18491/7");
    ck_assert_int_eq(na_btl_uri_parse(buf, &uri, why), OPAL_SUCCESS);
    ck_assert(!uri.has_card);
    ck_assert_uint_eq(uri.jobid, 18491);
    ck_assert_uint_eq(uri.rank, 7);

    size_t n;
    uint8_t *card = make_card(&n);
    size = 0;
    ck_assert_int_eq(na_btl_uri_format(NULL, &size, 0, 0, card, n), OPAL_ERR_TRUNCATED);
    ck_assert_uint_eq(size, strlen("card/") + 2 * n + 1);
    ck_assert_int_eq(na_btl_uri_format(buf, &size, 0, 0, card, n), OPAL_SUCCESS);
    ck_assert_int_eq(na_btl_uri_parse(buf, &uri, why), OPAL_SUCCESS);
    ck_assert(uri.has_card);
    ck_assert_uint_eq(uri.rank, 4242);
    ck_assert_uint_eq(uri.card_size, n);
    ck_assert_mem_eq(uri.card, card, n);
    free(uri.card);
    free(card);
}
END_TEST

START_TEST(malformed_uris_are_refused_with_a_reason)
{
    const char *bad[] = {"",          "job/",     "job/1",          "job/1/",
                         "job/01/2",  "job/1/2x", "job/-1/2",       "job/4294967296/0",
                         "card/",     "card/abc", "card/ABCD",      "card/zz",
                         "card/0000", "jobs/1/2", "card/4e42434401"};
    char why[NA_BTL_WHY_MAX];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        na_btl_uri_t uri;
        why[0] = '\0';
        ck_assert_msg(OPAL_ERR_BAD_PARAM == na_btl_uri_parse(bad[i], &uri, why),
                      "\"%s\" was accepted", bad[i]);
        ck_assert_msg('\0' != why[0], "\"%s\" was refused without a reason", bad[i]);
    }
}
END_TEST

START_TEST(an_address_blob_round_trips_and_a_card_of_another_rank_is_refused)
{
    size_t n;
    uint8_t *card = make_card(&n);
    size_t bn = na_btl_addr_blob_size(n);
    uint8_t *blob = malloc(bn);
    ck_assert_int_eq(na_btl_addr_blob_encode(blob, bn, 0xfffffff0u, 4242, card, n), OPAL_SUCCESS);
    uint32_t jobid, rank;
    const uint8_t *got;
    size_t got_size;
    char why[NA_BTL_WHY_MAX];
    ck_assert_int_eq(na_btl_addr_blob_decode(blob, bn, &jobid, &rank, &got, &got_size, why),
                     OPAL_SUCCESS);
    ck_assert_uint_eq(rank, 4242);
    ck_assert_uint_eq(got_size, n);
    for (size_t cut = 0; cut < bn; ++cut) {
        ck_assert_int_eq(na_btl_addr_blob_decode(blob, cut, &jobid, &rank, &got, &got_size, why),
                         OPAL_ERR_BAD_PARAM);
    }
    ck_assert_int_eq(na_btl_addr_blob_encode(blob, bn, 0xfffffff0u, 4243, card, n), OPAL_SUCCESS);
    ck_assert_int_eq(na_btl_addr_blob_decode(blob, bn, &jobid, &rank, &got, &got_size, why),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_nonnull(strstr(why, "carries the card"));
    free(blob);
    free(card);
}
END_TEST

/* A memory handle of count segments, with one 40-byte module. */
static size_t make_mh(uint8_t *buf, size_t size, uint8_t flags, uint32_t count, uint64_t len)
{
    opal_cursor_t c;
    opal_cursor_init_write(&c, buf, size);
    opal_cursor_put_u8(&c, flags);
    opal_cursor_put_u32(&c, count);
    for (uint32_t i = 0; i < count; ++i) {
        opal_cursor_put_u64(&c, 0x10000 * (i + 1));
        opal_cursor_put_u64(&c, len);
    }
    opal_cursor_put_u8(&c, 1);
    opal_cursor_put_string(&c, "sm");
    opal_cursor_put_u32(&c, 40);
    for (uint32_t i = 0; i < count * 40; ++i) {
        opal_cursor_put_u8(&c, (uint8_t) i);
    }
    ck_assert(opal_cursor_ok(&c));
    return opal_cursor_pos(&c);
}

START_TEST(a_memory_handle_of_16_segments_decodes_and_bad_ones_are_refused)
{
    uint8_t buf[4096];
    size_t n = make_mh(buf, sizeof(buf), 3, 16, 1000);
    na_btl_mh_wire_t *mh = malloc(sizeof(*mh));
    char why[NA_BTL_WHY_MAX];
    ck_assert_int_eq(na_btl_mh_decode(buf, n, mh, why), OPAL_SUCCESS);
    ck_assert_uint_eq(mh->count, 16);
    ck_assert_uint_eq(mh->total, 16000);
    ck_assert_str_eq(mh->mods[0].name, "sm");
    uint64_t base, len;
    na_btl_mh_wire_segment(mh, 15, &base, &len);
    ck_assert_uint_eq(base, 0x100000);
    ck_assert_uint_eq(len, 1000);
    for (size_t cut = 0; cut < n; ++cut) {
        ck_assert_int_eq(na_btl_mh_decode(buf, cut, mh, why), OPAL_ERR_BAD_PARAM);
    }
    n = make_mh(buf, sizeof(buf), 0, 1, 10);
    ck_assert_int_eq(na_btl_mh_decode(buf, n, mh, why), OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_nonnull(strstr(why, "access flags"));
    n = make_mh(buf, sizeof(buf), 3, 1, UINT64_MAX - 10);
    ck_assert_int_eq(na_btl_mh_decode(buf, n, mh, why), OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_nonnull(strstr(why, "wraps"));
    /* A count far beyond the bytes: refused before anything is read. */
    n = make_mh(buf, sizeof(buf), 3, 1, 10);
    buf[1] = 0xff;
    buf[2] = 0xff;
    ck_assert_int_eq(na_btl_mh_decode(buf, n, mh, why), OPAL_ERR_BAD_PARAM);
    free(mh);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("na_btl_wire");
    OPAL_TEST_ADD(s, a_header_round_trips_and_short_or_flagged_ones_are_refused);
    OPAL_TEST_ADD(s, a_card_decodes_and_every_truncation_or_trailing_byte_is_refused);
    OPAL_TEST_ADD(s, uris_of_a_job_and_of_a_card_round_trip);
    OPAL_TEST_ADD(s, malformed_uris_are_refused_with_a_reason);
    OPAL_TEST_ADD(s, an_address_blob_round_trips_and_a_card_of_another_rank_is_refused);
    OPAL_TEST_ADD(s, a_memory_handle_of_16_segments_decodes_and_bad_ones_are_refused);
    return opal_test_run(s);
}
