/*
 * The launcher socket's message format: every type round-trips, and the
 * decoder refuses, with a reason, every way a message can be wrong.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/opal_error.h"
#include "orte/util/orte_wire.h"
#include "test/support/opal_test.h"

static bool from_rank(orte_wire_type_t type)
{
    switch (type) {
        case ORTE_WIRE_HELLO:
        case ORTE_WIRE_PUT:
        case ORTE_WIRE_COMMIT:
        case ORTE_WIRE_FENCE:
        case ORTE_WIRE_GET:
        case ORTE_WIRE_ABORT:
        case ORTE_WIRE_FINALIZE:
            return true;
        default:
            return false;
    }
}

/* Encodes msg with its value into buf; returns the total length. */
static size_t encode_all(const orte_wire_msg_t *msg, uint8_t *buf)
{
    size_t head = 0;
    ck_assert_int_eq(OPAL_SUCCESS, orte_wire_encode(msg, buf, ORTE_WIRE_MAX_HEAD, &head));
    if (0 < msg->value_len) {
        memcpy(buf + head, msg->value, msg->value_len);
    }
    return head + msg->value_len;
}

/* Decodes len bytes of buf; returns the code and fills why. */
static int decode(const uint8_t *buf, size_t len, bool rank_side, orte_wire_msg_t *msg, char *why)
{
    orte_wire_header_t hdr;
    why[0] = '\0';
    ck_assert_uint_ge(len, ORTE_WIRE_HEADER_SIZE);
    int rc = orte_wire_header_decode(buf, rank_side, &hdr, why, 256);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    ck_assert_uint_eq(hdr.length, len - ORTE_WIRE_HEADER_SIZE);
    return orte_wire_payload_decode(&hdr, buf + ORTE_WIRE_HEADER_SIZE, msg, why, 256);
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; ++i) {
        p[i] = (uint8_t) (v >> (8 * i));
    }
}

static uint8_t buf[ORTE_WIRE_MAX_HEAD + 70000];
static char why[256];

START_TEST(every_type_round_trips)
{
    static const char value[] = "a value\0with a NUL";
    const orte_wire_msg_t msgs[] = {
        {.type = ORTE_WIRE_HELLO, .jobid = 7, .rank = 3, .pid = 4711},
        {.type = ORTE_WIRE_WELCOME,
         .jobid = 7,
         .rank = 3,
         .size = 8,
         .local_rank = 3,
         .local_size = 8,
         .node_id = 0,
         .text = "/tmp/opal-mca.0/7",
         .text_len = 17},
        {.type = ORTE_WIRE_PUT,
         .scope = 3,
         .key = "key",
         .key_len = 3,
         .value = value,
         .value_len = sizeof(value)},
        {.type = ORTE_WIRE_COMMIT},
        {.type = ORTE_WIRE_FENCE, .collect = 1},
        {.type = ORTE_WIRE_FENCE_DONE,
         .status = OPAL_ERR_PEER_FAILED,
         .rank = 2,
         .text = "gone",
         .text_len = 4},
        {.type = ORTE_WIRE_DATA,
         .rank = 5,
         .scope = 1,
         .key = "k",
         .key_len = 1,
         .value = value,
         .value_len = 3},
        {.type = ORTE_WIRE_GET, .rank = 1, .timeout_ns = -1, .key = "peer-key", .key_len = 8},
        {.type = ORTE_WIRE_GET_REPLY, .status = 0, .value = value, .value_len = 0},
        {.type = ORTE_WIRE_ABORT, .status = -3, .text = "", .text_len = 0},
        {.type = ORTE_WIRE_FINALIZE},
        {.type = ORTE_WIRE_FINALIZE_ACK},
        {.type = ORTE_WIRE_ERROR, .status = OPAL_ERR_PROTOCOL, .text = "no", .text_len = 2},
    };
    for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); ++i) {
        const orte_wire_msg_t *m = &msgs[i];
        size_t len = encode_all(m, buf);
        orte_wire_msg_t d;
        ck_assert_int_eq(OPAL_SUCCESS, decode(buf, len, from_rank(m->type), &d, why));
        ck_assert_int_eq(m->type, d.type);
        ck_assert_uint_eq(m->jobid, d.jobid);
        ck_assert_uint_eq(m->rank, d.rank);
        ck_assert_uint_eq(m->pid, d.pid);
        ck_assert_uint_eq(m->size, d.size);
        ck_assert_uint_eq(m->local_rank, d.local_rank);
        ck_assert_uint_eq(m->local_size, d.local_size);
        ck_assert_int_eq(m->status, d.status);
        ck_assert_uint_eq(m->scope, d.scope);
        ck_assert_uint_eq(m->collect, d.collect);
        ck_assert_int_eq(m->timeout_ns, d.timeout_ns);
        ck_assert_uint_eq(m->key_len, d.key_len);
        ck_assert_uint_eq(m->value_len, d.value_len);
        ck_assert_uint_eq(m->text_len, d.text_len);
        ck_assert(0 == m->key_len || 0 == memcmp(m->key, d.key, m->key_len));
        ck_assert(0 == m->value_len || 0 == memcmp(m->value, d.value, m->value_len));
        ck_assert(0 == m->text_len || 0 == memcmp(m->text, d.text, m->text_len));
    }
}
END_TEST

static size_t hello(void)
{
    orte_wire_msg_t m = {.type = ORTE_WIRE_HELLO, .jobid = 1, .rank = 0, .pid = 2};
    return encode_all(&m, buf);
}

START_TEST(wrong_magic_is_refused)
{
    size_t len = hello();
    buf[0] ^= 1;
    orte_wire_msg_t d;
    ck_assert_int_eq(OPAL_ERR_PROTOCOL, decode(buf, len, true, &d, why));
    ck_assert_ptr_nonnull(strstr(why, "bad magic"));
}
END_TEST

START_TEST(other_version_is_a_version_mismatch)
{
    size_t len = hello();
    buf[4] = ORTE_WIRE_VERSION + 1;
    orte_wire_msg_t d;
    char want[64];
    snprintf(want, sizeof(want), "version %u, this side speaks version %u", ORTE_WIRE_VERSION + 1,
             ORTE_WIRE_VERSION);
    ck_assert_int_eq(OPAL_ERR_VERSION_MISMATCH, decode(buf, len, true, &d, why));
    ck_assert_ptr_nonnull(strstr(why, want));
}
END_TEST

START_TEST(unknown_type_is_refused)
{
    static const uint16_t types[] = {0, 15, 99, 65535};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); ++i) {
        size_t len = hello();
        buf[6] = (uint8_t) types[i];
        buf[7] = (uint8_t) (types[i] >> 8);
        orte_wire_msg_t d;
        ck_assert_int_eq(OPAL_ERR_PROTOCOL, decode(buf, len, true, &d, why));
        ck_assert_ptr_nonnull(strstr(why, "unknown message type"));
    }
}
END_TEST

START_TEST(type_from_the_wrong_side_is_refused)
{
    size_t len = hello();
    orte_wire_msg_t d;
    ck_assert_int_eq(OPAL_ERR_PROTOCOL, decode(buf, len, false, &d, why));
    ck_assert_ptr_nonnull(strstr(why, "HELLO is only sent by ranks"));
    orte_wire_msg_t ack = {.type = ORTE_WIRE_FINALIZE_ACK};
    len = encode_all(&ack, buf);
    ck_assert_int_eq(OPAL_ERR_PROTOCOL, decode(buf, len, true, &d, why));
    ck_assert_ptr_nonnull(strstr(why, "only sent by mcarun"));
}
END_TEST

START_TEST(length_outside_the_types_bounds_is_refused_from_the_header)
{
    static const uint32_t lengths[] = {0, 11, 13, 0x7fffffffu, 0xffffffffu};
    for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); ++i) {
        hello();
        put_u32(buf + 8, lengths[i]);
        orte_wire_header_t hdr;
        ck_assert_int_eq(OPAL_ERR_PROTOCOL, orte_wire_header_decode(buf, true, &hdr, why, 256));
        ck_assert_ptr_nonnull(strstr(why, "a HELLO holds 12 to 12 bytes"));
    }
    orte_wire_msg_t put = {.type = ORTE_WIRE_PUT, .scope = 1, .key = "k", .key_len = 1};
    encode_all(&put, buf);
    put_u32(buf + 8, 7 + 255 + ORTE_WIRE_MAX_VALUE);
    orte_wire_header_t hdr;
    ck_assert_int_eq(OPAL_ERR_PROTOCOL, orte_wire_header_decode(buf, true, &hdr, why, 256));
    put_u32(buf + 8, 6 + 255 + ORTE_WIRE_MAX_VALUE);
    ck_assert_int_eq(OPAL_SUCCESS, orte_wire_header_decode(buf, true, &hdr, why, 256));
}
END_TEST

/* Decodes buf as a PUT of payload length len (the header is patched). */
static int decode_put(size_t len)
{
    put_u32(buf + 8, (uint32_t) len);
    orte_wire_msg_t d;
    return decode(buf, ORTE_WIRE_HEADER_SIZE + len, true, &d, why);
}

START_TEST(fields_past_the_end_are_refused)
{
    orte_wire_msg_t put = {.type = ORTE_WIRE_PUT,
                           .scope = 1,
                           .key = "abcdef",
                           .key_len = 6,
                           .value = "xyz",
                           .value_len = 3};
    size_t len = encode_all(&put, buf) - ORTE_WIRE_HEADER_SIZE;
    /* Cut one byte short of the value, then of the key. */
    ck_assert_int_eq(OPAL_ERR_PROTOCOL, decode_put(len - 1));
    ck_assert_ptr_nonnull(strstr(why, "ends inside its value"));
    buf[ORTE_WIRE_HEADER_SIZE + 1] = 200; /* the key length */
    ck_assert_int_eq(OPAL_ERR_PROTOCOL, decode_put(len));
    ck_assert_ptr_nonnull(strstr(why, "ends inside its key"));
}
END_TEST

START_TEST(left_over_bytes_are_refused)
{
    orte_wire_msg_t put = {.type = ORTE_WIRE_PUT,
                           .scope = 1,
                           .key = "k",
                           .key_len = 1,
                           .value = "xyz",
                           .value_len = 3};
    size_t len = encode_all(&put, buf) - ORTE_WIRE_HEADER_SIZE;
    /* A value length one short leaves a byte over. */
    put_u32(buf + ORTE_WIRE_HEADER_SIZE + 3, 2);
    ck_assert_int_eq(OPAL_ERR_PROTOCOL, decode_put(len));
    ck_assert_ptr_nonnull(strstr(why, "1 bytes left over"));
}
END_TEST

START_TEST(empty_keys_and_nul_bytes_are_refused)
{
    orte_wire_msg_t put = {.type = ORTE_WIRE_PUT, .scope = 1, .key = "ab", .key_len = 2};
    size_t len = encode_all(&put, buf) - ORTE_WIRE_HEADER_SIZE;
    buf[ORTE_WIRE_HEADER_SIZE + 3] = '\0';
    ck_assert_int_eq(OPAL_ERR_PROTOCOL, decode_put(len));
    ck_assert_ptr_nonnull(strstr(why, "key contains a NUL byte"));

    orte_wire_msg_t abort = {.type = ORTE_WIRE_ABORT, .text = "bye", .text_len = 3};
    len = encode_all(&abort, buf);
    buf[len - 2] = '\0';
    orte_wire_msg_t d;
    ck_assert_int_eq(OPAL_ERR_PROTOCOL, decode(buf, len, true, &d, why));
    ck_assert_ptr_nonnull(strstr(why, "text contains a NUL byte"));

    orte_wire_msg_t get = {.type = ORTE_WIRE_GET, .rank = 1, .key = "k", .key_len = 1};
    len = encode_all(&get, buf);
    buf[len - 2] = 0; /* key length 0, the key byte left over */
    ck_assert_int_eq(OPAL_ERR_PROTOCOL, decode(buf, len, true, &d, why));
    ck_assert_ptr_nonnull(strstr(why, "empty key"));
}
END_TEST

START_TEST(out_of_range_fields_are_refused)
{
    orte_wire_msg_t d;
    orte_wire_msg_t put = {.type = ORTE_WIRE_PUT, .scope = 1, .key = "k", .key_len = 1};
    size_t len = encode_all(&put, buf);
    buf[ORTE_WIRE_HEADER_SIZE] = 4;
    ck_assert_int_eq(OPAL_ERR_PROTOCOL, decode(buf, len, true, &d, why));
    ck_assert_ptr_nonnull(strstr(why, "scope 4"));

    orte_wire_msg_t fence = {.type = ORTE_WIRE_FENCE, .collect = 1};
    len = encode_all(&fence, buf);
    buf[ORTE_WIRE_HEADER_SIZE] = 2;
    ck_assert_int_eq(OPAL_ERR_PROTOCOL, decode(buf, len, true, &d, why));
    ck_assert_ptr_nonnull(strstr(why, "collect flag 2"));

    orte_wire_msg_t welcome = {.type = ORTE_WIRE_WELCOME, .rank = 4, .size = 4, .local_size = 4};
    len = encode_all(&welcome, buf);
    ck_assert_int_eq(OPAL_ERR_PROTOCOL, decode(buf, len, false, &d, why));
    ck_assert_ptr_nonnull(strstr(why, "rank 4 of 4"));

    orte_wire_msg_t reply = {
        .type = ORTE_WIRE_GET_REPLY, .status = OPAL_SUCCESS, .value = "x", .value_len = 1};
    len = encode_all(&reply, buf);
    put_u32(buf + ORTE_WIRE_HEADER_SIZE, (uint32_t) OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(OPAL_ERR_PROTOCOL, decode(buf, len, false, &d, why));
    ck_assert_ptr_nonnull(strstr(why, "and a 1-byte value"));
}
END_TEST

START_TEST(encode_refuses_what_decode_would)
{
    char key[300];
    memset(key, 'k', sizeof(key));
    size_t head;
    const orte_wire_msg_t bad[] = {
        {.type = ORTE_WIRE_PUT, .scope = 1, .key = key, .key_len = 0},
        {.type = ORTE_WIRE_PUT, .scope = 1, .key = key, .key_len = 256},
        {.type = ORTE_WIRE_PUT, .scope = 1, .key = "a\0b", .key_len = 3},
        {.type = ORTE_WIRE_PUT, .scope = 0, .key = key, .key_len = 1},
        {.type = ORTE_WIRE_DATA, .scope = 4, .key = key, .key_len = 1},
        {.type = ORTE_WIRE_FENCE, .collect = 2},
        {.type = ORTE_WIRE_ERROR, .text = key, .text_len = ORTE_WIRE_MAX_TEXT + 1},
        {.type = ORTE_WIRE_PUT,
         .scope = 1,
         .key = key,
         .key_len = 1,
         .value_len = ORTE_WIRE_MAX_VALUE + 1,
         .value = key},
        {.type = (orte_wire_type_t) 99},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        ck_assert_int_eq(OPAL_ERR_BAD_PARAM,
                         orte_wire_encode(&bad[i], buf, ORTE_WIRE_MAX_HEAD, &head));
    }
    /* A buffer too small is refused, not overrun. */
    orte_wire_msg_t ok = {.type = ORTE_WIRE_HELLO};
    ck_assert_int_eq(OPAL_ERR_BAD_PARAM, orte_wire_encode(&ok, buf, 20, &head));
}
END_TEST

/* A DATA_SET of three records: encodes its records into set_records and
 * the whole message into buf; returns the message's length. */
static uint8_t set_records[1024];
static size_t data_set(uint32_t count_on_wire)
{
    const orte_wire_msg_t recs[] = {
        {.rank = 0, .scope = 3, .key = "a", .key_len = 1, .value = "xyz", .value_len = 3},
        {.rank = 7, .scope = 1, .key = "key.two", .key_len = 7},
        {.rank = 2, .scope = 3, .key = "k3", .key_len = 2, .value = "v", .value_len = 1},
    };
    size_t used = 0;
    for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); ++i) {
        size_t len;
        ck_assert_int_eq(OPAL_SUCCESS, orte_wire_record_encode(&recs[i], set_records + used,
                                                               sizeof(set_records) - used, &len));
        ck_assert_uint_eq(len, orte_wire_record_size(recs[i].key_len, recs[i].value_len));
        used += len;
    }
    orte_wire_msg_t set = {.type = ORTE_WIRE_DATA_SET,
                           .count = count_on_wire,
                           .value = set_records,
                           .value_len = used};
    return encode_all(&set, buf);
}

START_TEST(data_set_records_round_trip)
{
    size_t len = data_set(3);
    orte_wire_msg_t d;
    ck_assert_int_eq(OPAL_SUCCESS, decode(buf, len, false, &d, why));
    ck_assert_int_eq(ORTE_WIRE_DATA_SET, d.type);
    ck_assert_uint_eq(3, d.count);
    const uint8_t *p = d.value;
    size_t left = d.value_len;
    orte_wire_msg_t r;
    ck_assert_int_eq(OPAL_SUCCESS, orte_wire_record_decode(&p, &left, &r, why, 256));
    ck_assert(0 == r.rank && 3 == r.scope && 1 == r.key_len && 3 == r.value_len);
    ck_assert(0 == memcmp(r.value, "xyz", 3));
    ck_assert_int_eq(OPAL_SUCCESS, orte_wire_record_decode(&p, &left, &r, why, 256));
    ck_assert(7 == r.rank && 1 == r.scope && 0 == memcmp(r.key, "key.two", 7) && 0 == r.value_len);
    ck_assert_int_eq(OPAL_SUCCESS, orte_wire_record_decode(&p, &left, &r, why, 256));
    ck_assert(2 == r.rank && 0 == memcmp(r.value, "v", 1));
    ck_assert_uint_eq(0, left);
    /* Past the last record there is nothing to read. */
    ck_assert_int_eq(OPAL_ERR_PROTOCOL, orte_wire_record_decode(&p, &left, &r, why, 256));
    ck_assert_ptr_nonnull(strstr(why, "ends inside its rank"));
}
END_TEST

START_TEST(data_set_with_a_wrong_count_is_refused)
{
    orte_wire_msg_t d;
    size_t len = data_set(4);
    ck_assert_int_eq(OPAL_ERR_PROTOCOL, decode(buf, len, false, &d, why));
    ck_assert_ptr_nonnull(strstr(why, "DATA_SET record message ends inside"));
    len = data_set(2);
    ck_assert_int_eq(OPAL_ERR_PROTOCOL, decode(buf, len, false, &d, why));
    ck_assert_ptr_nonnull(strstr(why, "bytes after its 2 records"));
}
END_TEST

START_TEST(data_set_with_a_bad_record_is_refused)
{
    orte_wire_msg_t d;
    /* The first record's scope (after the 4-byte count, the 4-byte value
     * length and the record's 4-byte rank). */
    size_t len = data_set(3);
    buf[ORTE_WIRE_HEADER_SIZE + 12] = 9;
    ck_assert_int_eq(OPAL_ERR_PROTOCOL, decode(buf, len, false, &d, why));
    ck_assert_ptr_nonnull(strstr(why, "scope 9"));
    /* The first record's value length, past the records' end. */
    len = data_set(3);
    put_u32(buf + ORTE_WIRE_HEADER_SIZE + 15, 1000);
    ck_assert_int_eq(OPAL_ERR_PROTOCOL, decode(buf, len, false, &d, why));
    ck_assert_ptr_nonnull(strstr(why, "ends inside its value"));
    /* Only mcarun sends sets. */
    len = data_set(3);
    ck_assert_int_eq(OPAL_ERR_PROTOCOL, decode(buf, len, true, &d, why));
    ck_assert_ptr_nonnull(strstr(why, "only sent by mcarun"));
}
END_TEST

static uint64_t rng = 88172645463325252ull;
static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Valid messages with random bits flipped, and plain noise: the decoder
 * never reads out of bounds (ASan and valgrind watch), and whatever it
 * accepts encodes back to the very same bytes. */
START_TEST(mutated_messages_decode_safely_and_canonically)
{
    orte_wire_msg_t seeds[] = {
        {.type = ORTE_WIRE_HELLO, .jobid = 9, .rank = 1, .pid = 3},
        {.type = ORTE_WIRE_PUT,
         .scope = 2,
         .key = "key",
         .key_len = 3,
         .value = "val",
         .value_len = 3},
        {.type = ORTE_WIRE_GET, .rank = 2, .timeout_ns = 1000, .key = "kk", .key_len = 2},
        {.type = ORTE_WIRE_FENCE_DONE,
         .status = 0,
         .rank = ORTE_WIRE_NO_RANK,
         .text = "t",
         .text_len = 1},
        {.type = ORTE_WIRE_WELCOME,
         .rank = 0,
         .size = 1,
         .local_size = 1,
         .text = "/x",
         .text_len = 2},
    };
    size_t iterations = opal_test_iterations(200000);
    uint8_t *copy = malloc(ORTE_WIRE_MAX_HEAD);
    ck_assert_ptr_nonnull(copy);
    size_t accepted = 0;
    for (size_t i = 0; i < iterations; ++i) {
        const orte_wire_msg_t *s = &seeds[next_random() % (sizeof(seeds) / sizeof(seeds[0]))];
        size_t len = encode_all(s, buf);
        if (0 == i % 4) {
            len = ORTE_WIRE_HEADER_SIZE + next_random() % 64;
            for (size_t b = ORTE_WIRE_HEADER_SIZE; b < len; ++b) {
                buf[b] = (uint8_t) next_random();
            }
            put_u32(buf + 8, (uint32_t) (len - ORTE_WIRE_HEADER_SIZE));
        } else {
            for (int flips = 1 + (int) (next_random() % 3); 0 < flips; --flips) {
                size_t at = ORTE_WIRE_HEADER_SIZE + next_random() % (len - ORTE_WIRE_HEADER_SIZE);
                buf[at] ^= (uint8_t) (1u << (next_random() % 8));
            }
        }
        /* The payload is copied to a buffer of its exact length, so that
         * a read past its end is a read past an allocation. */
        orte_wire_header_t hdr;
        if (OPAL_SUCCESS != orte_wire_header_decode(buf, from_rank(s->type), &hdr, why, 256)) {
            continue;
        }
        uint8_t *payload = malloc(hdr.length + 1);
        memcpy(payload, buf + ORTE_WIRE_HEADER_SIZE, hdr.length);
        orte_wire_msg_t d;
        if (OPAL_SUCCESS == orte_wire_payload_decode(&hdr, payload, &d, why, 256)) {
            size_t head;
            ck_assert_int_eq(OPAL_SUCCESS, orte_wire_encode(&d, copy, ORTE_WIRE_MAX_HEAD, &head));
            ck_assert_uint_eq(head + d.value_len, len);
            ck_assert(0 == memcmp(copy, buf, head));
            ++accepted;
        } else {
            ck_assert_uint_gt(strlen(why), 0);
        }
        free(payload);
    }
    free(copy);
    /* The mutations must have produced both outcomes to test anything. */
    ck_assert_uint_gt(accepted, 0);
    ck_assert_uint_lt(accepted, iterations);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("orte_wire");
    OPAL_TEST_ADD(s, every_type_round_trips);
    OPAL_TEST_ADD(s, wrong_magic_is_refused);
    OPAL_TEST_ADD(s, other_version_is_a_version_mismatch);
    OPAL_TEST_ADD(s, unknown_type_is_refused);
    OPAL_TEST_ADD(s, type_from_the_wrong_side_is_refused);
    OPAL_TEST_ADD(s, length_outside_the_types_bounds_is_refused_from_the_header);
    OPAL_TEST_ADD(s, fields_past_the_end_are_refused);
    OPAL_TEST_ADD(s, left_over_bytes_are_refused);
    OPAL_TEST_ADD(s, empty_keys_and_nul_bytes_are_refused);
    OPAL_TEST_ADD(s, out_of_range_fields_are_refused);
    OPAL_TEST_ADD(s, encode_refuses_what_decode_would);
    OPAL_TEST_ADD(s, data_set_records_round_trip);
    OPAL_TEST_ADD(s, data_set_with_a_wrong_count_is_refused);
    OPAL_TEST_ADD(s, data_set_with_a_bad_record_is_refused);
    OPAL_TEST_ADD(s, mutated_messages_decode_safely_and_canonically);
    return opal_test_run(s);
}
