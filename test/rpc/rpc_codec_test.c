/* The X-macro codecs: round trips of every kind (nested structs, arrays of
 * structs, empty and absent values, random values), and refusal of every
 * truncated, oversized or mutated encoding without a crash. */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/rpc/rpc_codec.h"
#include "opal/util/opal_error.h"
#include "test/bulk/bulk_test_support.h"
#include "test/rpc/rpc_test_types.h"
#include "test/support/opal_test.h"

static point_t corners[3] = {{1, 2, "a"}, {-3, 4, ""}, {5, -6, NULL}};
static point_t hint = {7, 8, "hint"};
static shape_t shapes[2];
static uint16_t weights[4] = {0, 1, 0xffff, 42};
static char *tags[3] = {"x", "", "zzz"};
static opal_rpc_uuid_t ids[2] = {{{1, 2, 3}}, {{0xff}}};
static uint8_t bytes[5] = {9, 8, 7, 6, 5};
static opal_rpc_iov_t chunks[2] = {{bytes, 5}, {NULL, 0}};

static void fill(every_t *e)
{
    memset(e, 0, sizeof(*e));
    e->u8 = 200;
    e->i16 = -1234;
    e->u32 = 0xdeadbeef;
    e->i64 = -0x123456789ll;
    e->d = 3.25;
    e->flag = true;
    memset(e->uuid.bytes, 0xab, sizeof(e->uuid.bytes));
    e->name = "hello";
    e->absent = NULL;
    e->blob.buf = bytes;
    e->blob.len = sizeof(bytes);
    e->shape.origin = (point_t){10, 20, "origin"};
    e->shape.corners.count = 3;
    e->shape.corners.elems = corners;
    e->shape.closed = true;
    e->hint = &hint;
    e->none = NULL;
    shapes[0].origin = (point_t){0, 0, "s0"};
    shapes[0].corners.count = 0;
    shapes[1].origin = (point_t){1, 1, NULL};
    shapes[1].corners.count = 2;
    shapes[1].corners.elems = corners;
    e->shapes.count = 2;
    e->shapes.elems = shapes;
    e->weights.count = 4;
    e->weights.elems = weights;
    e->tags.count = 3;
    e->tags.elems = tags;
    e->ids.count = 2;
    e->ids.elems = ids;
    e->chunks.count = 2;
    e->chunks.elems = chunks;
}

static uint8_t *encode(const opal_rpc_codec_t *codec, const void *s, size_t *len)
{
    *len = codec->size(s);
    uint8_t *buf = malloc(*len + 1);
    ck_assert_ptr_nonnull(buf);
    opal_cursor_t c;
    opal_cursor_init_write(&c, buf, *len);
    codec->encode(&c, s);
    ck_assert(opal_cursor_done(&c));
    return buf;
}

static void assert_point_eq(const point_t *a, const point_t *b)
{
    ck_assert_int_eq(a->x, b->x);
    ck_assert_int_eq(a->y, b->y);
    if (NULL == a->label) {
        ck_assert_ptr_null(b->label);
    } else {
        ck_assert_str_eq(a->label, b->label);
    }
}

static void assert_shape_eq(const shape_t *a, const shape_t *b)
{
    assert_point_eq(&a->origin, &b->origin);
    ck_assert_uint_eq(a->corners.count, b->corners.count);
    for (uint32_t i = 0; i < a->corners.count; ++i) {
        assert_point_eq(&a->corners.elems[i], &b->corners.elems[i]);
    }
    ck_assert(a->closed == b->closed);
}

START_TEST(every_kind_round_trips)
{
    every_t in, out;
    size_t len;
    fill(&in);
    uint8_t *buf = encode(&every_codec, &in, &len);
    ck_assert_int_eq(opal_rpc_codec_decode(&every_codec, buf, len, &out), OPAL_SUCCESS);
    ck_assert_uint_eq(out.u8, 200);
    ck_assert_int_eq(out.i16, -1234);
    ck_assert_uint_eq(out.u32, 0xdeadbeef);
    ck_assert(out.i64 == -0x123456789ll);
    ck_assert(out.d == 3.25);
    ck_assert(out.flag);
    ck_assert_mem_eq(out.uuid.bytes, in.uuid.bytes, 16);
    ck_assert_str_eq(out.name, "hello");
    ck_assert_ptr_null(out.absent);
    ck_assert_uint_eq(out.blob.len, 5);
    ck_assert_mem_eq(out.blob.buf, bytes, 5);
    assert_shape_eq(&in.shape, &out.shape);
    ck_assert_ptr_nonnull(out.hint);
    assert_point_eq(&hint, out.hint);
    ck_assert_ptr_null(out.none);
    ck_assert_uint_eq(out.shapes.count, 2);
    assert_shape_eq(&shapes[0], &out.shapes.elems[0]);
    assert_shape_eq(&shapes[1], &out.shapes.elems[1]);
    ck_assert_uint_eq(out.weights.count, 4);
    ck_assert_mem_eq(out.weights.elems, weights, sizeof(weights));
    ck_assert_uint_eq(out.tags.count, 3);
    for (int i = 0; i < 3; ++i) {
        ck_assert_str_eq(out.tags.elems[i], tags[i]);
    }
    ck_assert_mem_eq(out.ids.elems, ids, sizeof(ids));
    ck_assert_uint_eq(out.chunks.elems[0].len, 5);
    ck_assert_uint_eq(out.chunks.elems[1].len, 0);
    ck_assert_ptr_null(out.chunks.elems[1].buf);
    ck_assert_uint_eq(out.empty.count, 0);
    ck_assert_ptr_null(out.empty.elems);
    every_free(&out);
    free(buf);
}
END_TEST

START_TEST(random_values_round_trip)
{
    unsigned int seed = 12345;
    for (int round = 0; round < 200; ++round) {
        every_t in, out;
        size_t len;
        fill(&in);
        in.u8 = (uint8_t) rand_r(&seed);
        in.i16 = (int16_t) rand_r(&seed);
        in.u32 = (uint32_t) rand_r(&seed) * 2654435761u;
        in.i64 = (int64_t) (((uint64_t) rand_r(&seed) << 33) ^ (uint64_t) rand_r(&seed));
        in.d = (double) rand_r(&seed) / 7.0;
        in.flag = rand_r(&seed) & 1;
        uint16_t w[8];
        in.weights.count = (uint32_t) rand_r(&seed) % 9;
        for (uint32_t i = 0; i < in.weights.count; ++i) {
            w[i] = (uint16_t) rand_r(&seed);
        }
        in.weights.elems = w;
        uint8_t *buf = encode(&every_codec, &in, &len);
        ck_assert_int_eq(opal_rpc_codec_decode(&every_codec, buf, len, &out), OPAL_SUCCESS);
        ck_assert_uint_eq(out.u8, in.u8);
        ck_assert_int_eq(out.i16, in.i16);
        ck_assert_uint_eq(out.u32, in.u32);
        ck_assert(out.i64 == in.i64);
        ck_assert(out.d == in.d);
        ck_assert(out.flag == in.flag);
        ck_assert_uint_eq(out.weights.count, in.weights.count);
        if (in.weights.count > 0) {
            ck_assert_mem_eq(out.weights.elems, w, in.weights.count * sizeof(uint16_t));
        }
        every_free(&out);
        free(buf);
    }
}
END_TEST

START_TEST(every_prefix_is_refused)
{
    every_t in, out;
    size_t len;
    fill(&in);
    uint8_t *buf = encode(&every_codec, &in, &len);
    for (size_t n = 0; n < len; ++n) {
        /* A copy of exactly n bytes, so valgrind and ASan see any read past it. */
        uint8_t *prefix = malloc(n + 1);
        memcpy(prefix, buf, n);
        ck_assert_int_eq(opal_rpc_codec_decode(&every_codec, prefix, n, &out), OPAL_ERR_PROTOCOL);
        ck_assert_ptr_null(out.name);
        ck_assert_ptr_null(out.shapes.elems);
        free(prefix);
    }
    free(buf);
}
END_TEST

START_TEST(trailing_bytes_are_refused)
{
    point_t p = {1, 2, "p"}, out;
    size_t len;
    uint8_t *buf = encode(&point_codec, &p, &len);
    buf = realloc(buf, len + 1);
    buf[len] = 0;
    ck_assert_int_eq(opal_rpc_codec_decode(&point_codec, buf, len + 1, &out), OPAL_ERR_PROTOCOL);
    free(buf);
}
END_TEST

START_TEST(huge_count_is_refused_without_allocating)
{
    /* weights-like array: a count of 2^32-1 with nothing behind it. */
    shape_t out;
    uint8_t buf[64];
    opal_cursor_t c;
    opal_cursor_init_write(&c, buf, sizeof(buf));
    opal_cursor_put_u32(&c, 1);
    opal_cursor_put_u32(&c, 2);
    opal_cursor_put_u32(&c, OPAL_RPC_CODEC_NULL_STRING);
    opal_cursor_put_u32(&c, UINT32_MAX); /* corners.count */
    opal_cursor_put_u8(&c, 1);
    size_t len = opal_cursor_pos(&c);
    ck_assert_int_eq(opal_rpc_codec_decode(&shape_codec, buf, len, &out), OPAL_ERR_PROTOCOL);
    ck_assert_ptr_null(out.corners.elems);
}
END_TEST

START_TEST(string_with_nul_is_refused)
{
    point_t out;
    uint8_t buf[32];
    opal_cursor_t c;
    opal_cursor_init_write(&c, buf, sizeof(buf));
    opal_cursor_put_u32(&c, 1);
    opal_cursor_put_u32(&c, 2);
    opal_cursor_put_u32(&c, 3);
    opal_cursor_put_bytes(&c, "a\0b", 3);
    ck_assert_int_eq(opal_rpc_codec_decode(&point_codec, buf, opal_cursor_pos(&c), &out),
                     OPAL_ERR_PROTOCOL);
}
END_TEST

START_TEST(bool_other_than_0_or_1_is_refused)
{
    shape_t s = {{0, 0, NULL}, {0, NULL}, true}, out;
    size_t len;
    uint8_t *buf = encode(&shape_codec, &s, &len);
    buf[len - 1] = 2;
    ck_assert_int_eq(opal_rpc_codec_decode(&shape_codec, buf, len, &out), OPAL_ERR_PROTOCOL);
    free(buf);
}
END_TEST

START_TEST(pointer_marker_other_than_0_or_1_is_refused)
{
    every_t in, out;
    size_t len;
    fill(&in);
    in.hint = NULL;
    in.none = NULL;
    /* Find the hint marker: everything before it has a known size. */
    size_t before = 1 + 2 + 4 + 8 + 8 + 1 + 16 + (4 + 5) + 4 + (4 + 5) + shape_size(&in.shape);
    uint8_t *buf = encode(&every_codec, &in, &len);
    ck_assert_uint_eq(buf[before], 0);
    buf[before] = 7;
    ck_assert_int_eq(opal_rpc_codec_decode(&every_codec, buf, len, &out), OPAL_ERR_PROTOCOL);
    free(buf);
}
END_TEST

START_TEST(random_mutations_never_crash)
{
    every_t in, out;
    size_t len;
    unsigned int seed = 99;
    fill(&in);
    uint8_t *buf = encode(&every_codec, &in, &len);
    uint8_t *copy = malloc(len);
    size_t rounds = opal_test_iterations(20000);
    int accepted = 0;
    for (size_t r = 0; r < rounds; ++r) {
        memcpy(copy, buf, len);
        int flips = 1 + rand_r(&seed) % 4;
        for (int f = 0; f < flips; ++f) {
            copy[(size_t) rand_r(&seed) % len] = (uint8_t) rand_r(&seed);
        }
        size_t n = (rand_r(&seed) & 3) ? len : (size_t) rand_r(&seed) % len;
        if (OPAL_SUCCESS == opal_rpc_codec_decode(&every_codec, copy, n, &out)) {
            ++accepted;
            every_free(&out);
        }
    }
    /* Some mutations only change values: both outcomes happen. */
    ck_assert_int_gt(accepted, 0);
    ck_assert_int_lt(accepted, (int) rounds);
    free(copy);
    free(buf);
}
END_TEST

START_TEST(encode_into_too_small_buffer_fails)
{
    every_t in;
    size_t len;
    fill(&in);
    uint8_t *buf = encode(&every_codec, &in, &len);
    opal_cursor_t c;
    opal_cursor_init_write(&c, buf, len - 1);
    every_encode(&c, &in);
    ck_assert(!opal_cursor_ok(&c));
    free(buf);
}
END_TEST

/* ---------------------------------------------------------------- BULK */

/* Two "processes" of the bulk tests' fake na: the sender's handles are
 * encoded, decoded with the receiver's bulk class, and pulled from. */
typedef struct {
    bulk_peer_t peers[2];
    uint8_t small[100]; /* read-only, within bulk's eager size: inline */
    uint8_t *large;     /* read-write, 64 KiB: by memory handle */
    opal_bulk_t *handles[3];
    carrier_t in;
} carrier_setup_t;

#define LARGE (64 * 1024)

static void carrier_open(carrier_setup_t *t)
{
    memset(t, 0, sizeof(*t));
    bulk_test_init(NULL);
    fake_na_opts_t opts = {.rma = true, .max_segments = 4};
    bulk_peer_open(&t->peers[0], &opts);
    bulk_peer_open(&t->peers[1], &opts);
    bulk_fill(t->small, sizeof(t->small), 1);
    t->large = malloc(LARGE);
    bulk_fill(t->large, LARGE, 2);
    void *bufs[1] = {t->small};
    size_t sizes[1] = {sizeof(t->small)};
    opal_bulk_class_t *bc = t->peers[0].bc;
    ck_assert_int_eq(opal_bulk_create(bc, 1, bufs, sizes, OPAL_BULK_READ_ONLY, &t->handles[0]),
                     OPAL_SUCCESS);
    /* Two segments, so the array's second element differs in shape. */
    void *two[2] = {t->large, t->large + LARGE / 2};
    size_t halves[2] = {LARGE / 2, LARGE / 2};
    ck_assert_int_eq(opal_bulk_create(bc, 2, two, halves, OPAL_BULK_READ_WRITE, &t->handles[1]),
                     OPAL_SUCCESS);
    bufs[0] = t->large;
    sizes[0] = 10;
    ck_assert_int_eq(opal_bulk_create(bc, 1, bufs, sizes, OPAL_BULK_WRITE_ONLY, &t->handles[2]),
                     OPAL_SUCCESS);
    t->in.tag = 77;
    t->in.data = t->handles[1];
    t->in.none = NULL;
    t->in.name = "carrier";
    t->in.parts.count = 2;
    t->in.parts.elems = &t->handles[0];
}

static void carrier_close(carrier_setup_t *t)
{
    for (int i = 0; i < 3; ++i) {
        ck_assert_int_eq(opal_bulk_free(t->handles[i]), OPAL_SUCCESS);
    }
    free(t->large);
    bulk_peer_close(&t->peers[1]);
    bulk_peer_close(&t->peers[0]);
    bulk_test_fini(NULL);
}

typedef struct {
    bool done;
    int ret;
} pulled_t;

static void on_pulled(const opal_bulk_cb_info_t *info)
{
    pulled_t *p = info->arg;
    p->ret = info->ret;
    p->done = true;
}

/* Pulls len bytes at offset of remote (a handle peers[1] decoded) into a
 * buffer of peers[1], and returns it (malloc'd). */
static uint8_t *pull(carrier_setup_t *t, opal_bulk_t *remote, size_t offset, size_t len)
{
    bulk_peer_t *me = &t->peers[1];
    uint8_t *dst = calloc(1, len);
    void *bufs[1] = {dst};
    opal_bulk_t *local = NULL;
    ck_assert_int_eq(opal_bulk_create(me->bc, 1, bufs, &len, OPAL_BULK_WRITE_ONLY, &local),
                     OPAL_SUCCESS);
    opal_na_addr_t *origin = fake_na_addr_of(me->na, t->peers[0].na);
    pulled_t r = {false, 0};
    ck_assert_int_eq(opal_bulk_transfer(me->bc, me->ctx, on_pulled, &r, OPAL_BULK_PULL, origin, 0,
                                        remote, offset, local, 0, len, NULL),
                     OPAL_SUCCESS);
    ck_assert(bulk_progress(t->peers, 2, &r.done));
    ck_assert_int_eq(r.ret, OPAL_SUCCESS);
    opal_na_addr_free(me->na, origin);
    ck_assert_int_eq(opal_bulk_free(local), OPAL_SUCCESS);
    return dst;
}

START_TEST(bulk_field_round_trips_and_is_pulled_from)
{
    carrier_setup_t t;
    carrier_t out;
    size_t len;
    carrier_open(&t);
    uint8_t *buf = encode(&carrier_codec, &t.in, &len);
    ck_assert_int_eq(opal_rpc_codec_decode_with(&carrier_codec, t.peers[1].bc, buf, len, &out),
                     OPAL_SUCCESS);
    ck_assert_uint_eq(out.tag, 77);
    ck_assert_str_eq(out.name, "carrier");
    ck_assert_ptr_null(out.none);
    ck_assert_ptr_nonnull(out.data);
    ck_assert_uint_eq(opal_bulk_get_size(out.data), LARGE);
    ck_assert_uint_eq(opal_bulk_get_segment_count(out.data), 2);
    ck_assert_uint_eq(opal_bulk_get_flags(out.data), OPAL_BULK_READ_WRITE);
    ck_assert_uint_eq(out.parts.count, 2);
    ck_assert_uint_eq(opal_bulk_get_size(out.parts.elems[0]), sizeof(t.small));
    ck_assert_uint_eq(opal_bulk_get_flags(out.parts.elems[0]), OPAL_BULK_READ_ONLY);
    ck_assert_uint_eq(opal_bulk_get_flags(out.parts.elems[1]), OPAL_BULK_READ_WRITE);
    /* The decoded handles re-encode to the same bytes. */
    size_t again_len;
    uint8_t *again = encode(&carrier_codec, &out, &again_len);
    ck_assert_uint_eq(again_len, len);
    ck_assert_mem_eq(again, buf, len);
    free(again);
    /* And they name the sender's memory: a pull across the segment
     * boundary and one of the inline handle give the sender's bytes. */
    uint8_t *got = pull(&t, out.data, LARGE / 2 - 100, 300);
    ck_assert_mem_eq(got, t.large + LARGE / 2 - 100, 300);
    free(got);
    got = pull(&t, out.parts.elems[0], 0, sizeof(t.small));
    ck_assert_mem_eq(got, t.small, sizeof(t.small));
    free(got);
    carrier_free(&out);
    free(buf);
    carrier_close(&t);
}
END_TEST

START_TEST(bulk_field_needs_a_bulk_class)
{
    carrier_setup_t t;
    carrier_t out;
    size_t len;
    carrier_open(&t);
    uint8_t *buf = encode(&carrier_codec, &t.in, &len);
    ck_assert_int_eq(opal_rpc_codec_decode(&carrier_codec, buf, len, &out), OPAL_ERR_PROTOCOL);
    ck_assert_ptr_null(out.data);
    ck_assert_ptr_null(out.parts.elems);
    free(buf);
    /* NULL handles only: no bulk class needed. */
    carrier_t empty = {.tag = 1, .name = "x"};
    buf = encode(&carrier_codec, &empty, &len);
    ck_assert_uint_eq(len, 4 + 4 + 4 + (4 + 1) + 4);
    ck_assert_int_eq(opal_rpc_codec_decode(&carrier_codec, buf, len, &out), OPAL_SUCCESS);
    ck_assert_ptr_null(out.data);
    ck_assert_uint_eq(out.parts.count, 0);
    carrier_free(&out);
    free(buf);
    carrier_close(&t);
}
END_TEST

START_TEST(bulk_field_every_prefix_and_bad_length_are_refused)
{
    carrier_setup_t t;
    carrier_t out;
    size_t len;
    carrier_open(&t);
    uint8_t *buf = encode(&carrier_codec, &t.in, &len);
    for (size_t n = 0; n < len; ++n) {
        uint8_t *prefix = malloc(n + 1);
        memcpy(prefix, buf, n);
        ck_assert_int_eq(opal_rpc_codec_decode_with(&carrier_codec, t.peers[1].bc, prefix, n, &out),
                         OPAL_ERR_PROTOCOL);
        ck_assert_ptr_null(out.data);
        ck_assert_ptr_null(out.parts.elems);
        free(prefix);
    }
    /* The data handle's length one more and one less than its bytes: the
     * handle is refused (truncated, or bytes left over), never read past. */
    uint32_t hlen = (uint32_t) opal_bulk_get_serialize_size(t.handles[1], OPAL_BULK_EAGER);
    for (int delta = -1; delta <= 1; delta += 2) {
        opal_cursor_t c;
        opal_cursor_init_write(&c, buf + 4, 4);
        opal_cursor_put_u32(&c, hlen + (uint32_t) delta);
        ck_assert_int_eq(opal_rpc_codec_decode_with(&carrier_codec, t.peers[1].bc, buf, len, &out),
                         OPAL_ERR_PROTOCOL);
        ck_assert_ptr_null(out.data);
    }
    free(buf);
    carrier_close(&t);
}
END_TEST

START_TEST(bulk_field_random_mutations_never_crash)
{
    carrier_setup_t t;
    carrier_t out;
    size_t len;
    unsigned int seed = 7;
    carrier_open(&t);
    uint8_t *buf = encode(&carrier_codec, &t.in, &len);
    uint8_t *copy = malloc(len);
    size_t rounds = opal_test_iterations(3000);
    int accepted = 0;
    for (size_t r = 0; r < rounds; ++r) {
        memcpy(copy, buf, len);
        int flips = 1 + rand_r(&seed) % 3;
        for (int f = 0; f < flips; ++f) {
            copy[(size_t) rand_r(&seed) % len] = (uint8_t) rand_r(&seed);
        }
        if (OPAL_SUCCESS ==
            opal_rpc_codec_decode_with(&carrier_codec, t.peers[1].bc, copy, len, &out)) {
            ++accepted;
            carrier_free(&out); /* releases every handle it deserialized */
        }
    }
    /* Inline bytes and the tag are free to change; most other bytes are not. */
    ck_assert_int_gt(accepted, 0);
    ck_assert_int_lt(accepted, (int) rounds);
    free(copy);
    free(buf);
    carrier_close(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rpc_codec");
    OPAL_TEST_ADD(s, every_kind_round_trips);
    OPAL_TEST_ADD(s, random_values_round_trip);
    OPAL_TEST_ADD(s, every_prefix_is_refused);
    OPAL_TEST_ADD(s, trailing_bytes_are_refused);
    OPAL_TEST_ADD(s, huge_count_is_refused_without_allocating);
    OPAL_TEST_ADD(s, string_with_nul_is_refused);
    OPAL_TEST_ADD(s, bool_other_than_0_or_1_is_refused);
    OPAL_TEST_ADD(s, pointer_marker_other_than_0_or_1_is_refused);
    OPAL_TEST_ADD(s, random_mutations_never_crash);
    OPAL_TEST_ADD(s, encode_into_too_small_buffer_fails);
    OPAL_TEST_ADD(s, bulk_field_round_trips_and_is_pulled_from);
    OPAL_TEST_ADD(s, bulk_field_needs_a_bulk_class);
    OPAL_TEST_ADD(s, bulk_field_every_prefix_and_bad_length_are_refused);
    OPAL_TEST_ADD(s, bulk_field_random_mutations_never_crash);
    return opal_test_run(s);
}
