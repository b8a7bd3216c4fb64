/* The rpc wire header (round trip, strict refusal) and the deadline heap
 * (order, removal from the middle). */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/rpc/base/rpc_base_header.h"
#include "opal/mca/rpc/base/rpc_base_timer.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

static const opal_rpc_hdr_t sample = {.type = OPAL_RPC_HDR_REPLY,
                                      .flags = OPAL_RPC_HDR_F_ERROR,
                                      .opcode = 0x01020003,
                                      .id = 0x1122334455667788ull,
                                      .src_ctx = 3,
                                      .dst_ctx = 4,
                                      .status = -5,
                                      .payload_len = 2,
                                      .hlc = 0x0102030405060708ull};

static void encode_sample(uint8_t *buf)
{
    ck_assert_int_eq(opal_rpc_hdr_encode(&sample, buf, OPAL_RPC_HDR_SIZE), OPAL_SUCCESS);
    buf[OPAL_RPC_HDR_SIZE] = 'h';
    buf[OPAL_RPC_HDR_SIZE + 1] = 'i';
}

START_TEST(header_round_trips)
{
    uint8_t buf[OPAL_RPC_HDR_SIZE + 2];
    opal_rpc_hdr_t out;
    const char *why = NULL;
    encode_sample(buf);
    ck_assert_int_eq(opal_rpc_hdr_decode(&out, buf, sizeof(buf), &why), OPAL_SUCCESS);
    ck_assert_uint_eq(out.type, sample.type);
    ck_assert_uint_eq(out.flags, sample.flags);
    ck_assert_uint_eq(out.opcode, sample.opcode);
    ck_assert(out.id == sample.id);
    ck_assert_uint_eq(out.src_ctx, 3);
    ck_assert_uint_eq(out.dst_ctx, 4);
    ck_assert_int_eq(out.status, -5);
    ck_assert_uint_eq(out.payload_len, 2);
    ck_assert(out.hlc == sample.hlc);
}
END_TEST

START_TEST(header_is_little_endian)
{
    uint8_t buf[OPAL_RPC_HDR_SIZE + 2];
    encode_sample(buf);
    ck_assert_uint_eq(buf[0], OPAL_RPC_HDR_MAGIC);
    ck_assert_uint_eq(buf[4], 0x03);
    ck_assert_uint_eq(buf[7], 0x01);
    ck_assert_uint_eq(buf[8], 0x88);
    /* The sender's clock, last. */
    ck_assert_uint_eq(buf[OPAL_RPC_HDR_SIZE - 8], 0x08);
    ck_assert_uint_eq(buf[OPAL_RPC_HDR_SIZE - 1], 0x01);
}
END_TEST

START_TEST(encode_refuses_short_buffer)
{
    uint8_t buf[OPAL_RPC_HDR_SIZE];
    ck_assert_int_eq(opal_rpc_hdr_encode(&sample, buf, OPAL_RPC_HDR_SIZE - 1), OPAL_ERR_BAD_PARAM);
}
END_TEST

START_TEST(every_prefix_is_refused)
{
    uint8_t buf[OPAL_RPC_HDR_SIZE + 2];
    encode_sample(buf);
    for (size_t n = 0; n < sizeof(buf); ++n) {
        uint8_t *copy = malloc(n + 1);
        memcpy(copy, buf, n);
        opal_rpc_hdr_t out;
        const char *why = NULL;
        ck_assert_int_eq(opal_rpc_hdr_decode(&out, copy, n, &why), OPAL_ERR_PROTOCOL);
        ck_assert_ptr_nonnull(why);
        free(copy);
    }
}
END_TEST

/* Decodes buf after changing byte at to value: the error's reason. */
static const char *refusal(size_t at, uint8_t value)
{
    uint8_t buf[OPAL_RPC_HDR_SIZE + 2];
    opal_rpc_hdr_t out;
    const char *why = NULL;
    encode_sample(buf);
    buf[at] = value;
    ck_assert_int_eq(opal_rpc_hdr_decode(&out, buf, sizeof(buf), &why), OPAL_ERR_PROTOCOL);
    return why;
}

START_TEST(bad_fields_are_refused_with_a_reason)
{
    ck_assert_str_eq(refusal(0, 0), "not an rpc message (bad magic)");
    ck_assert_str_eq(refusal(1, 9), "rpc wire version not understood");
    ck_assert_str_eq(refusal(2, 7), "unknown rpc message type");
    ck_assert_str_eq(refusal(3, 0x80), "unknown rpc header flags");
    ck_assert_str_eq(refusal(3, OPAL_RPC_HDR_F_ERROR | OPAL_RPC_HDR_F_ONEWAY),
                     "a reply marked one-way");
    ck_assert_str_eq(refusal(22, 3), "payload length disagrees with the message size");
    ck_assert_str_eq(refusal(21, 0), "an error reply without an error status");
}
END_TEST

START_TEST(request_with_status_is_refused)
{
    opal_rpc_hdr_t h = sample, out;
    uint8_t buf[OPAL_RPC_HDR_SIZE + 2];
    const char *why = NULL;
    h.type = OPAL_RPC_HDR_REQUEST;
    h.flags = 0;
    ck_assert_int_eq(opal_rpc_hdr_encode(&h, buf, sizeof(buf)), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_hdr_decode(&out, buf, sizeof(buf), &why), OPAL_ERR_PROTOCOL);
    ck_assert_str_eq(why, "a request carrying a status");
}
END_TEST

START_TEST(heap_yields_deadlines_in_order)
{
    opal_rpc_timer_heap_t h;
    opal_rpc_timer_entry_t e[200];
    unsigned int seed = 7;
    opal_rpc_timer_heap_init(&h);
    for (int i = 0; i < 200; ++i) {
        e[i].deadline_ns = (uint64_t) rand_r(&seed) % 1000;
        e[i].slot = OPAL_RPC_TIMER_NONE;
        ck_assert_int_eq(opal_rpc_timer_heap_push(&h, &e[i]), OPAL_SUCCESS);
    }
    /* Remove every third from wherever it sits. */
    for (int i = 0; i < 200; i += 3) {
        ck_assert(opal_rpc_timer_heap_remove(&h, &e[i]));
        ck_assert(!opal_rpc_timer_heap_remove(&h, &e[i]));
    }
    uint64_t last = 0;
    size_t n = 0;
    for (opal_rpc_timer_entry_t *t; NULL != (t = opal_rpc_timer_heap_top(&h)); ++n) {
        ck_assert_uint_ge(t->deadline_ns, last);
        last = t->deadline_ns;
        ck_assert((t - e) % 3 != 0);
        ck_assert(opal_rpc_timer_heap_remove(&h, t));
    }
    ck_assert_uint_eq(n, 200 - 67);
    opal_rpc_timer_heap_fini(&h);
}
END_TEST

/* Deadlines pushed in order (requests sharing one timeout) take the list:
 * the heap stays empty. */
START_TEST(deadlines_in_order_skip_the_heap)
{
    opal_rpc_timer_heap_t h;
    opal_rpc_timer_entry_t e[64];
    opal_rpc_timer_heap_init(&h);
    for (int i = 0; i < 64; ++i) {
        e[i].deadline_ns = 1000 + (uint64_t) (i / 2); /* ties too */
        e[i].slot = OPAL_RPC_TIMER_NONE;
        ck_assert_int_eq(opal_rpc_timer_heap_push(&h, &e[i]), OPAL_SUCCESS);
    }
    ck_assert_uint_eq(h.count, 0);
    /* Out of the middle, the ends, then in order. */
    ck_assert(opal_rpc_timer_heap_remove(&h, &e[10]));
    ck_assert(!opal_rpc_timer_heap_remove(&h, &e[10]));
    ck_assert(opal_rpc_timer_heap_remove(&h, &e[63]));
    ck_assert(opal_rpc_timer_heap_remove(&h, &e[0]));
    ck_assert_ptr_eq(opal_rpc_timer_heap_top(&h), &e[1]);
    int n = 0;
    for (opal_rpc_timer_entry_t *t; NULL != (t = opal_rpc_timer_heap_top(&h)); ++n) {
        ck_assert(t != &e[10] && t != &e[63] && t != &e[0]);
        ck_assert(opal_rpc_timer_heap_remove(&h, t));
    }
    ck_assert_int_eq(n, 61);
    ck_assert_ptr_null(h.head);
    ck_assert_ptr_null(h.tail);
    /* Empty again: the next push starts a new list. */
    ck_assert_int_eq(opal_rpc_timer_heap_push(&h, &e[5]), OPAL_SUCCESS);
    ck_assert_ptr_eq(opal_rpc_timer_heap_top(&h), &e[5]);
    opal_rpc_timer_heap_fini(&h);
    ck_assert_uint_eq(e[5].slot, OPAL_RPC_TIMER_NONE);
}
END_TEST

/* Mostly in order with stragglers (a shorter timeout among longer ones),
 * removed at random: the earliest always comes out first, as from a
 * sorted reference, and nothing is lost or returned twice. */
START_TEST(deadlines_of_mixed_order_come_out_sorted)
{
    enum { N = 2000 };
    static opal_rpc_timer_entry_t e[N];
    static bool gone[N];
    unsigned int seed = 11;
    opal_rpc_timer_heap_t h;
    opal_rpc_timer_heap_init(&h);
    for (int i = 0; i < N; ++i) {
        e[i].deadline_ns =
            0 == rand_r(&seed) % 5 ? (uint64_t) (rand_r(&seed) % (10 * N)) : (uint64_t) (10 * i);
        e[i].slot = OPAL_RPC_TIMER_NONE;
        gone[i] = false;
        ck_assert_int_eq(opal_rpc_timer_heap_push(&h, &e[i]), OPAL_SUCCESS);
        if (0 == rand_r(&seed) % 4) {
            int victim = rand_r(&seed) % (i + 1);
            ck_assert(opal_rpc_timer_heap_remove(&h, &e[victim]) == !gone[victim]);
            gone[victim] = true;
        }
    }
    ck_assert_uint_gt(h.count, 0); /* the stragglers went to the heap */
    int left = 0;
    for (int i = 0; i < N; ++i) {
        left += !gone[i];
    }
    uint64_t last = 0;
    for (opal_rpc_timer_entry_t *t; NULL != (t = opal_rpc_timer_heap_top(&h)); --left) {
        ck_assert_uint_ge(t->deadline_ns, last);
        /* No entry still in is earlier (one check per pop: Check records
         * every assertion, and four million of them took minutes under
         * valgrind). */
        int earlier = -1;
        for (int i = 0; i < N && earlier < 0; ++i) {
            if (!gone[i] && e[i].deadline_ns < t->deadline_ns) {
                earlier = i;
            }
        }
        ck_assert_msg(earlier < 0,
                      "entry %d (deadline %" PRIu64
                      ") is still in, earlier than the top's %" PRIu64,
                      earlier, earlier < 0 ? 0 : e[earlier].deadline_ns, t->deadline_ns);
        last = t->deadline_ns;
        ck_assert(!gone[t - e]);
        gone[t - e] = true;
        ck_assert(opal_rpc_timer_heap_remove(&h, t));
    }
    ck_assert_int_eq(left, 0);
    opal_rpc_timer_heap_fini(&h);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rpc_header");
    OPAL_TEST_ADD(s, header_round_trips);
    OPAL_TEST_ADD(s, header_is_little_endian);
    OPAL_TEST_ADD(s, encode_refuses_short_buffer);
    OPAL_TEST_ADD(s, every_prefix_is_refused);
    OPAL_TEST_ADD(s, bad_fields_are_refused_with_a_reason);
    OPAL_TEST_ADD(s, request_with_status_is_refused);
    OPAL_TEST_ADD(s, heap_yields_deadlines_in_order);
    OPAL_TEST_ADD(s, deadlines_in_order_skip_the_heap);
    OPAL_TEST_ADD(s, deadlines_of_mixed_order_come_out_sorted);
    return opal_test_run(s);
}
