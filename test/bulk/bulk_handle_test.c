/*
 * Bulk handles without transfers: creation over segments, memory bulk
 * allocates, access, bind, and the wire format (round trip, inline bytes,
 * and every way a peer's bytes can be wrong).
 */
#include "opal/opal_config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/bulk/bulk.h"
#include "opal/util/opal_error.h"
#include "test/bulk/bulk_test_support.h"
#include "test/support/opal_test.h"

static bulk_peer_t a, b;

static void setup(void)
{
    bulk_test_init(NULL);
    fake_na_opts_t rma = {.rma = true, .max_segments = 16};
    bulk_peer_open(&a, &rma);
    bulk_peer_open(&b, &rma);
}

static void teardown(void)
{
    bulk_peer_close(&b);
    bulk_peer_close(&a);
    bulk_test_fini(NULL);
}

/* A handle over three segments of a, read-only. */
static opal_bulk_t *three_segments(char *m, unsigned int flags)
{
    void *bufs[3] = {m, m + 100, m + 300};
    size_t sizes[3] = {100, 200, 50};
    opal_bulk_t *h = NULL;
    ck_assert_int_eq(opal_bulk_create(a.bc, 3, bufs, sizes, flags, &h), OPAL_SUCCESS);
    return h;
}

/* Serializes h into a malloc'd buffer (*n bytes). */
static void *serialize(opal_bulk_t *h, unsigned int flags, size_t *n)
{
    *n = opal_bulk_get_serialize_size(h, flags);
    ck_assert_uint_gt(*n, 0);
    void *buf = malloc(*n);
    ck_assert_int_eq(opal_bulk_serialize(buf, *n, flags, h), OPAL_SUCCESS);
    return buf;
}

START_TEST(handle_reports_size_segments_and_flags)
{
    char m[350];
    opal_bulk_t *h = three_segments(m, OPAL_BULK_READ_ONLY);
    ck_assert_uint_eq(opal_bulk_get_size(h), 350);
    ck_assert_uint_eq(opal_bulk_get_segment_count(h), 3);
    ck_assert_uint_eq(opal_bulk_get_flags(h), OPAL_BULK_READ_ONLY);
    ck_assert_ptr_null(opal_bulk_get_addr(h));
    ck_assert_int_eq(opal_bulk_free(h), OPAL_SUCCESS);
}
END_TEST

START_TEST(null_buffers_are_allocated_zeroed_and_owned)
{
    void *bufs[2] = {NULL, NULL};
    size_t sizes[2] = {1000, 24};
    opal_bulk_t *h = NULL;
    ck_assert_int_eq(opal_bulk_create(a.bc, 2, bufs, sizes, OPAL_BULK_READ_WRITE, &h),
                     OPAL_SUCCESS);
    void *got[2];
    size_t lens[2];
    uint32_t n = 0;
    ck_assert_int_eq(opal_bulk_access(h, 0, 1024, 2, got, lens, &n), OPAL_SUCCESS);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(lens[0], 1000);
    ck_assert_uint_eq(lens[1], 24);
    for (size_t i = 0; i < 1000; ++i) {
        ck_assert_uint_eq(((unsigned char *) got[0])[i], 0);
    }
    memset(got[1], 7, 24); /* the memory is usable (valgrind / ASan check) */
    ck_assert_int_eq(opal_bulk_free(h), OPAL_SUCCESS);
}
END_TEST

START_TEST(create_refuses_bad_flags_and_no_segments)
{
    char m[8];
    void *bufs[1] = {m};
    size_t sizes[1] = {8};
    opal_bulk_t *h = (opal_bulk_t *) 1;
    ck_assert_int_eq(opal_bulk_create(a.bc, 1, bufs, sizes, 0, &h), OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_null(h);
    ck_assert_int_eq(opal_bulk_create(a.bc, 1, bufs, sizes, 0x10, &h), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_bulk_create(a.bc, 0, bufs, sizes, OPAL_BULK_READ_ONLY, &h),
                     OPAL_ERR_BAD_PARAM);
}
END_TEST

START_TEST(access_gives_the_segments_of_a_range)
{
    char m[350];
    opal_bulk_t *h = three_segments(m, OPAL_BULK_READ_WRITE);
    void *bufs[3];
    size_t sizes[3];
    uint32_t n = 0;
    ck_assert_int_eq(opal_bulk_access(h, 50, 260, 3, bufs, sizes, &n), OPAL_SUCCESS);
    ck_assert_uint_eq(n, 3);
    ck_assert_ptr_eq(bufs[0], m + 50);
    ck_assert_uint_eq(sizes[0], 50);
    ck_assert_ptr_eq(bufs[1], m + 100);
    ck_assert_uint_eq(sizes[1], 200);
    ck_assert_ptr_eq(bufs[2], m + 300);
    ck_assert_uint_eq(sizes[2], 10);
    ck_assert_int_eq(opal_bulk_free(h), OPAL_SUCCESS);
}
END_TEST

START_TEST(access_past_the_end_is_refused)
{
    char m[350];
    opal_bulk_t *h = three_segments(m, OPAL_BULK_READ_WRITE);
    void *bufs[3];
    size_t sizes[3];
    uint32_t n = 9;
    ck_assert_int_eq(opal_bulk_access(h, 300, 51, 3, bufs, sizes, &n), OPAL_ERR_BAD_PARAM);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(opal_bulk_access(h, SIZE_MAX, 1, 3, bufs, sizes, &n), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_bulk_free(h), OPAL_SUCCESS);
}
END_TEST

START_TEST(references_keep_a_handle_until_the_last_free)
{
    char m[350];
    opal_bulk_t *h = three_segments(m, OPAL_BULK_READ_ONLY);
    ck_assert_int_eq(opal_bulk_ref_incr(h), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_free(h), OPAL_SUCCESS);
    ck_assert_uint_eq(opal_bulk_get_size(h), 350); /* still alive */
    ck_assert_int_eq(opal_bulk_free(h), OPAL_SUCCESS);
}
END_TEST

START_TEST(serialized_handle_keeps_segments_and_flags)
{
    char m[350];
    opal_bulk_t *h = three_segments(m, OPAL_BULK_WRITE_ONLY);
    size_t n;
    void *buf = serialize(h, 0, &n);
    opal_bulk_t *r = NULL;
    ck_assert_int_eq(opal_bulk_deserialize(b.bc, &r, buf, n), OPAL_SUCCESS);
    ck_assert_uint_eq(opal_bulk_get_size(r), 350);
    ck_assert_uint_eq(opal_bulk_get_segment_count(r), 3);
    ck_assert_uint_eq(opal_bulk_get_flags(r), OPAL_BULK_WRITE_ONLY);
    ck_assert_ptr_null(opal_bulk_get_addr(r));
    /* A peer's handle has no memory here. */
    void *bufs[1];
    size_t sizes[1];
    uint32_t count;
    ck_assert_int_eq(opal_bulk_access(r, 0, 1, 1, bufs, sizes, &count), OPAL_ERR_BAD_PARAM);
    free(buf);
    ck_assert_int_eq(opal_bulk_free(r), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_free(h), OPAL_SUCCESS);
}
END_TEST

START_TEST(eager_adds_the_bytes_only_to_small_read_only_handles)
{
    char m[350];
    opal_bulk_t *ro = three_segments(m, OPAL_BULK_READ_ONLY);
    opal_bulk_t *rw = three_segments(m, OPAL_BULK_READ_WRITE);
    ck_assert_uint_eq(opal_bulk_get_serialize_size(ro, OPAL_BULK_EAGER),
                      opal_bulk_get_serialize_size(ro, 0) + 4 + 350);
    ck_assert_uint_eq(opal_bulk_get_serialize_size(rw, OPAL_BULK_EAGER),
                      opal_bulk_get_serialize_size(rw, 0));
    void *big = NULL;
    size_t big_size = 64 * 1024; /* above bulk_base_eager_size's 4096 */
    opal_bulk_t *large = NULL;
    ck_assert_int_eq(opal_bulk_create(a.bc, 1, &big, &big_size, OPAL_BULK_READ_ONLY, &large),
                     OPAL_SUCCESS);
    ck_assert_uint_eq(opal_bulk_get_serialize_size(large, OPAL_BULK_EAGER),
                      opal_bulk_get_serialize_size(large, 0));
    ck_assert_int_eq(opal_bulk_free(large), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_free(rw), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_free(ro), OPAL_SUCCESS);
}
END_TEST

START_TEST(serialize_into_too_small_a_buffer_is_refused)
{
    char m[350];
    opal_bulk_t *h = three_segments(m, OPAL_BULK_READ_ONLY);
    size_t n = opal_bulk_get_serialize_size(h, OPAL_BULK_EAGER);
    char *buf = malloc(n);
    ck_assert_int_eq(opal_bulk_serialize(buf, n - 1, OPAL_BULK_EAGER, h), OPAL_ERR_TRUNCATED);
    free(buf);
    ck_assert_int_eq(opal_bulk_free(h), OPAL_SUCCESS);
}
END_TEST

START_TEST(every_truncation_of_a_serialized_handle_is_refused)
{
    char m[350];
    bulk_fill(m, sizeof(m), 1);
    opal_bulk_t *h = three_segments(m, OPAL_BULK_READ_ONLY);
    ck_assert_int_eq(opal_bulk_bind(h, a.ctx), OPAL_SUCCESS);
    size_t n;
    char *buf = serialize(h, OPAL_BULK_EAGER, &n);
    for (size_t len = 0; len < n; ++len) {
        /* A copy of exactly len bytes, so that reading past it is seen. */
        char *cut = malloc(len + 1);
        memcpy(cut, buf, len);
        opal_bulk_t *r = (opal_bulk_t *) 1;
        ck_assert_int_ne(opal_bulk_deserialize(b.bc, &r, cut, len), OPAL_SUCCESS);
        ck_assert_ptr_null(r);
        free(cut);
    }
    free(buf);
    ck_assert_int_eq(opal_bulk_free(h), OPAL_SUCCESS);
}
END_TEST

START_TEST(trailing_bytes_after_a_serialized_handle_are_refused)
{
    char m[350];
    opal_bulk_t *h = three_segments(m, OPAL_BULK_READ_ONLY);
    size_t n;
    char *buf = serialize(h, 0, &n);
    char *longer = calloc(1, n + 1);
    memcpy(longer, buf, n);
    opal_bulk_t *r = NULL;
    ck_assert_int_eq(opal_bulk_deserialize(b.bc, &r, longer, n + 1), OPAL_ERR_BAD_PARAM);
    free(longer);
    free(buf);
    ck_assert_int_eq(opal_bulk_free(h), OPAL_SUCCESS);
}
END_TEST

START_TEST(wrong_magic_version_flags_and_lengths_are_refused)
{
    char m[350];
    opal_bulk_t *h = three_segments(m, OPAL_BULK_READ_ONLY);
    size_t n;
    unsigned char *buf = serialize(h, 0, &n);
    unsigned char *bad = malloc(n);
    opal_bulk_t *r = NULL;
    struct {
        size_t at;
        unsigned char value;
        int expect;
    } cases[] = {
        {0, 'X', OPAL_ERR_BAD_PARAM},       /* magic */
        {4, 2, OPAL_ERR_VERSION_MISMATCH},  /* version */
        {5, 0, OPAL_ERR_BAD_PARAM},         /* access */
        {5, 9, OPAL_ERR_BAD_PARAM},         /* access */
        {6, 0x80, OPAL_ERR_BAD_PARAM},      /* unknown part */
        {7, 1, OPAL_ERR_BAD_PARAM},         /* reserved */
        {24, 0, OPAL_ERR_BAD_PARAM},        /* size 350 -> 256: lengths differ */
        {32, 0, OPAL_ERR_BAD_PARAM},        /* segment count 0 */
        {32, 0xff, OPAL_ERR_BAD_PARAM},     /* segment count 255: past the bytes */
        {36, 0xff, OPAL_ERR_BAD_PARAM},     /* first segment length */
        {44 + 7, 0x80, OPAL_ERR_BAD_PARAM}, /* second segment length huge */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        memcpy(bad, buf, n);
        bad[cases[i].at] = cases[i].value;
        ck_assert_msg(opal_bulk_deserialize(b.bc, &r, bad, n) == cases[i].expect,
                      "case %zu (byte %zu = %u) not refused as expected", i, cases[i].at,
                      cases[i].value);
        ck_assert_ptr_null(r);
    }
    free(bad);
    free(buf);
    ck_assert_int_eq(opal_bulk_free(h), OPAL_SUCCESS);
}
END_TEST

START_TEST(bound_handle_carries_its_origin_through_a_forward)
{
    char m[350];
    opal_bulk_t *h = three_segments(m, OPAL_BULK_READ_ONLY);
    ck_assert_int_eq(opal_bulk_bind(h, a.ctx), OPAL_SUCCESS);
    size_t n;
    void *buf = serialize(h, 0, &n);
    opal_bulk_t *at_b = NULL;
    ck_assert_int_eq(opal_bulk_deserialize(b.bc, &at_b, buf, n), OPAL_SUCCESS);
    free(buf);
    opal_na_addr_t *a_seen_by_b = fake_na_addr_of(b.na, a.na);
    ck_assert(opal_na_addr_cmp(b.na, opal_bulk_get_addr(at_b), a_seen_by_b));
    ck_assert_uint_eq(opal_bulk_get_context_id(at_b), 0);
    /* b forwards it again: the origin stays a. */
    buf = serialize(at_b, 0, &n);
    opal_bulk_t *again = NULL;
    ck_assert_int_eq(opal_bulk_deserialize(b.bc, &again, buf, n), OPAL_SUCCESS);
    free(buf);
    ck_assert(opal_na_addr_cmp(b.na, opal_bulk_get_addr(again), a_seen_by_b));
    ck_assert_uint_eq(opal_bulk_get_size(again), 350);
    /* Only the origin binds a handle. */
    ck_assert_int_eq(opal_bulk_bind(at_b, b.ctx), OPAL_ERR_BAD_PARAM);
    opal_na_addr_free(b.na, a_seen_by_b);
    ck_assert_int_eq(opal_bulk_free(again), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_free(at_b), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_free(h), OPAL_SUCCESS);
}
END_TEST

START_TEST(finalize_refuses_while_local_handles_are_alive)
{
    char m[350];
    opal_bulk_t *h = three_segments(m, OPAL_BULK_READ_ONLY);
    ck_assert_int_eq(opal_bulk_finalize(a.bc), OPAL_ERR_RESOURCE_BUSY);
    ck_assert_int_eq(opal_bulk_free(h), OPAL_SUCCESS);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bulk_handle");
    struct {
        const TTest *t;
    } tests[] = {
        {handle_reports_size_segments_and_flags},
        {null_buffers_are_allocated_zeroed_and_owned},
        {create_refuses_bad_flags_and_no_segments},
        {access_gives_the_segments_of_a_range},
        {access_past_the_end_is_refused},
        {references_keep_a_handle_until_the_last_free},
        {serialized_handle_keeps_segments_and_flags},
        {eager_adds_the_bytes_only_to_small_read_only_handles},
        {serialize_into_too_small_a_buffer_is_refused},
        {every_truncation_of_a_serialized_handle_is_refused},
        {trailing_bytes_after_a_serialized_handle_are_refused},
        {wrong_magic_version_flags_and_lengths_are_refused},
        {bound_handle_carries_its_origin_through_a_forward},
        {finalize_refuses_while_local_handles_are_alive},
    };
    for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); ++i) {
        TCase *tc = tcase_create(tests[i].t->name);
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, tests[i].t);
        suite_add_tcase(s, tc);
    }
    return opal_test_run(s);
}
