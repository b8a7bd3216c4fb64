/*
 * bulk/copy's request and reply as units (opal/mca/bulk/copy/
 * bulk_copy_wire.c compiled in): what is encoded decodes to the same, and
 * every truncation, trailing byte or bad field is refused with a reason
 * naming it.
 */
#include "opal/opal_config.h"

#include <stdint.h>
#include <string.h>

#include "opal/mca/bulk/copy/bulk_copy_wire.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

static const bulk_copy_limits_t limits = {.max_tag = 1000, .pull_frag = 64, .push_frag = 32};

/* A request of kind with length bytes (a push carries them, 0xa5 each)
 * into buf; its size. */
static size_t make_request(uint8_t *buf, uint8_t kind, uint64_t length)
{
    const bulk_copy_req_t req = {.kind = kind,
                                 .reply_ctx = 7,
                                 .tag = 999,
                                 .instance = 0x1122334455667788ull,
                                 .key = 42,
                                 .offset = 1ull << 40,
                                 .length = length};
    bulk_copy_req_encode(&req, buf);
    size_t size = BULK_COPY_REQ_HDR;
    if (BULK_COPY_KIND_PUSH == kind) {
        memset(buf + size, 0xa5, length);
        size += length;
    }
    return size;
}

/* Decodes n bytes of buf, expecting a refusal whose reason holds word. */
static void refused(const uint8_t *buf, size_t n, const char *word)
{
    bulk_copy_req_t req;
    char why[BULK_COPY_WHY_MAX] = "";
    ck_assert_int_eq(bulk_copy_req_decode(buf, n, &limits, &req, why), OPAL_ERR_BAD_PARAM);
    ck_assert_msg(NULL != strstr(why, word), "reason '%s' does not name '%s'", why, word);
}

START_TEST(pull_and_push_requests_round_trip)
{
    uint8_t buf[BULK_COPY_REQ_HDR + 64];
    bulk_copy_req_t req;
    char why[BULK_COPY_WHY_MAX];
    size_t n = make_request(buf, BULK_COPY_KIND_PULL, 64);
    ck_assert_uint_eq(n, BULK_COPY_REQ_HDR);
    ck_assert_int_eq(bulk_copy_req_decode(buf, n, &limits, &req, why), OPAL_SUCCESS);
    ck_assert_uint_eq(req.kind, BULK_COPY_KIND_PULL);
    ck_assert_uint_eq(req.reply_ctx, 7);
    ck_assert_uint_eq(req.tag, 999);
    ck_assert_uint_eq(req.instance, 0x1122334455667788ull);
    ck_assert_uint_eq(req.key, 42);
    ck_assert_uint_eq(req.offset, 1ull << 40);
    ck_assert_uint_eq(req.length, 64);
    ck_assert_ptr_null(req.data);

    n = make_request(buf, BULK_COPY_KIND_PUSH, 32);
    ck_assert_int_eq(bulk_copy_req_decode(buf, n, &limits, &req, why), OPAL_SUCCESS);
    ck_assert_uint_eq(req.kind, BULK_COPY_KIND_PUSH);
    ck_assert_uint_eq(req.length, 32);
    ck_assert_ptr_eq(req.data, buf + BULK_COPY_REQ_HDR);

    /* A push of nothing is a request too. */
    n = make_request(buf, BULK_COPY_KIND_PUSH, 0);
    ck_assert_int_eq(bulk_copy_req_decode(buf, n, &limits, &req, why), OPAL_SUCCESS);
    ck_assert_uint_eq(req.length, 0);
}
END_TEST

START_TEST(every_truncation_and_trailing_byte_of_a_request_is_refused)
{
    uint8_t buf[BULK_COPY_REQ_HDR + 64 + 1];
    size_t n = make_request(buf, BULK_COPY_KIND_PULL, 10);
    for (size_t i = 0; i < n; ++i) {
        refused(buf, i, "shorter");
    }
    buf[n] = 0;
    refused(buf, n + 1, "after its header");

    n = make_request(buf, BULK_COPY_KIND_PUSH, 20);
    for (size_t i = 0; i < BULK_COPY_REQ_HDR; ++i) {
        refused(buf, i, "shorter");
    }
    for (size_t i = BULK_COPY_REQ_HDR; i < n; ++i) {
        refused(buf, i, "carries");
    }
    buf[n] = 0;
    refused(buf, n + 1, "carries");
}
END_TEST

START_TEST(each_bad_field_of_a_request_is_refused_by_name)
{
    uint8_t buf[BULK_COPY_REQ_HDR + 64];
    size_t n;

    n = make_request(buf, BULK_COPY_KIND_PULL, 8);
    buf[0] ^= 0xff;
    refused(buf, n, "magic");

    n = make_request(buf, BULK_COPY_KIND_PULL, 8);
    buf[4] = BULK_COPY_VERSION + 1;
    refused(buf, n, "version");

    for (unsigned int kind = 0; kind < 256; ++kind) {
        if (BULK_COPY_KIND_PULL == kind || BULK_COPY_KIND_PUSH == kind) {
            continue;
        }
        n = make_request(buf, BULK_COPY_KIND_PULL, 8);
        buf[5] = (uint8_t) kind;
        refused(buf, n, "kind");
    }

    n = make_request(buf, BULK_COPY_KIND_PULL, 8);
    buf[7] = 1;
    refused(buf, n, "reserved");

    bulk_copy_req_t req = {.kind = BULK_COPY_KIND_PULL, .tag = limits.max_tag + 1, .length = 8};
    bulk_copy_req_encode(&req, buf);
    refused(buf, BULK_COPY_REQ_HDR, "tag");

    /* Lengths past a fragment: a pull's limit and a push's differ. */
    n = make_request(buf, BULK_COPY_KIND_PULL, limits.pull_frag + 1);
    refused(buf, n, "larger than a fragment");
    n = make_request(buf, BULK_COPY_KIND_PULL, UINT64_MAX);
    refused(buf, n, "larger than a fragment");
    req = (bulk_copy_req_t){.kind = BULK_COPY_KIND_PUSH, .length = limits.push_frag + 1};
    bulk_copy_req_encode(&req, buf);
    memset(buf + BULK_COPY_REQ_HDR, 0, limits.push_frag + 1);
    refused(buf, BULK_COPY_REQ_HDR + limits.push_frag + 1, "larger than a fragment");
}
END_TEST

START_TEST(replies_round_trip_and_bad_ones_are_refused_by_name)
{
    uint8_t buf[BULK_COPY_REPLY_HDR + 16 + 1];
    int32_t status = 1;
    char why[BULK_COPY_WHY_MAX] = "";

    /* A pull's answer: the header and the bytes asked for. */
    bulk_copy_reply_encode(OPAL_SUCCESS, buf);
    memset(buf + BULK_COPY_REPLY_HDR, 3, 16);
    ck_assert_int_eq(bulk_copy_reply_decode(buf, BULK_COPY_REPLY_HDR + 16, 16, &status, why),
                     OPAL_SUCCESS);
    ck_assert_int_eq(status, OPAL_SUCCESS);
    for (size_t i = 0; i < BULK_COPY_REPLY_HDR; ++i) {
        ck_assert_int_eq(bulk_copy_reply_decode(buf, i, 16, &status, why), OPAL_ERR_BAD_PARAM);
        ck_assert_ptr_nonnull(strstr(why, "shorter"));
    }
    for (size_t i = BULK_COPY_REPLY_HDR; i <= sizeof(buf); ++i) {
        if (BULK_COPY_REPLY_HDR + 16 == i) {
            continue;
        }
        ck_assert_int_eq(bulk_copy_reply_decode(buf, i, 16, &status, why), OPAL_ERR_BAD_PARAM);
        ck_assert_ptr_nonnull(strstr(why, "expected"));
    }

    /* A push's answer: the header alone. */
    ck_assert_int_eq(bulk_copy_reply_decode(buf, BULK_COPY_REPLY_HDR, 0, &status, why),
                     OPAL_SUCCESS);

    /* A refusal: an error code and nothing after it. */
    bulk_copy_reply_encode(OPAL_ERR_NOT_FOUND, buf);
    ck_assert_int_eq(bulk_copy_reply_decode(buf, BULK_COPY_REPLY_HDR, 16, &status, why),
                     OPAL_SUCCESS);
    ck_assert_int_eq(status, OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(bulk_copy_reply_decode(buf, BULK_COPY_REPLY_HDR + 16, 16, &status, why),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_nonnull(strstr(why, "refusal"));

    /* Statuses that are no error code. */
    const int32_t bogus[] = {1, 12345, INT32_MAX, -99999, INT32_MIN};
    for (size_t i = 0; i < sizeof(bogus) / sizeof(bogus[0]); ++i) {
        bulk_copy_reply_encode(bogus[i], buf);
        ck_assert_int_eq(bulk_copy_reply_decode(buf, BULK_COPY_REPLY_HDR, 0, &status, why),
                         OPAL_ERR_BAD_PARAM);
        ck_assert_msg(NULL != strstr(why, "not an error code"), "status %d: '%s'", bogus[i], why);
    }

    bulk_copy_reply_encode(OPAL_SUCCESS, buf);
    buf[3] ^= 0x80;
    ck_assert_int_eq(bulk_copy_reply_decode(buf, BULK_COPY_REPLY_HDR, 0, &status, why),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_nonnull(strstr(why, "magic"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bulk_copy_wire");
    OPAL_TEST_ADD(s, pull_and_push_requests_round_trip);
    OPAL_TEST_ADD(s, every_truncation_and_trailing_byte_of_a_request_is_refused);
    OPAL_TEST_ADD(s, each_bad_field_of_a_request_is_refused_by_name);
    OPAL_TEST_ADD(s, replies_round_trip_and_bad_ones_are_refused_by_name);
    return opal_test_run(s);
}
