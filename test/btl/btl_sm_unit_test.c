/*
 * btl/sm's building blocks without processes: the receive FIFO (order,
 * full, laps, scribbled slots and tail, many producers), the fast boxes
 * (messages, wrap, full, scribbled headers and read positions), the
 * layout and identity checks, and segment names.
 */
#include "opal/opal_config.h"

#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/btl/sm/btl_sm_fbox.h"
#include "opal/mca/btl/sm/btl_sm_fifo.h"
#include "opal/mca/btl/sm/btl_sm_layout.h"
#include "test/support/opal_test.h"

/* ---------------------------------------------------------------- FIFO */

typedef struct {
    opal_atomic_uint64_t tail;
    opal_atomic_uint64_t slots[64];
    sm_fifo_t consumer, producer;
} fifo_fixture_t;

static void fifo_setup(fifo_fixture_t *f, uint32_t nslots)
{
    mca_btl_sm_fifo_format(f->slots, &f->tail, nslots);
    sm_fifo_attach(&f->consumer, f->slots, &f->tail, nslots);
    sm_fifo_attach(&f->producer, f->slots, &f->tail, nslots);
}

START_TEST(fifo_starts_empty)
{
    fifo_fixture_t f;
    fifo_setup(&f, 8);
    uint64_t v;
    ck_assert(!sm_fifo_pop(&f.consumer, &v));
    bool reset;
    ck_assert_uint_eq(0, mca_btl_sm_fifo_check(&f.consumer, &reset));
    ck_assert(!reset);
}
END_TEST

START_TEST(fifo_returns_values_in_order_then_empty)
{
    fifo_fixture_t f;
    fifo_setup(&f, 8);
    for (uint64_t i = 1; i <= 5; ++i) {
        ck_assert_int_eq(OPAL_SUCCESS, sm_fifo_push(&f.producer, i * 1000));
    }
    uint64_t v;
    for (uint64_t i = 1; i <= 5; ++i) {
        ck_assert(sm_fifo_pop(&f.consumer, &v));
        ck_assert_uint_eq(i * 1000, v);
    }
    ck_assert(!sm_fifo_pop(&f.consumer, &v));
}
END_TEST

START_TEST(fifo_full_is_busy_until_a_pop)
{
    fifo_fixture_t f;
    fifo_setup(&f, 4);
    for (uint64_t i = 1; i <= 4; ++i) {
        ck_assert_int_eq(OPAL_SUCCESS, sm_fifo_push(&f.producer, i));
    }
    ck_assert_int_eq(OPAL_ERR_RESOURCE_BUSY, sm_fifo_push(&f.producer, 5));
    uint64_t v;
    ck_assert(sm_fifo_pop(&f.consumer, &v));
    ck_assert_uint_eq(1, v);
    ck_assert_int_eq(OPAL_SUCCESS, sm_fifo_push(&f.producer, 5));
    for (uint64_t i = 2; i <= 5; ++i) {
        ck_assert(sm_fifo_pop(&f.consumer, &v));
        ck_assert_uint_eq(i, v);
    }
}
END_TEST

START_TEST(fifo_keeps_order_over_many_laps)
{
    fifo_fixture_t f;
    fifo_setup(&f, 4);
    uint64_t next_in = 1, next_out = 1, v;
    for (int round = 0; round < 10000; ++round) {
        int pushes = 1 + round % 4;
        for (int i = 0; i < pushes && OPAL_SUCCESS == sm_fifo_push(&f.producer, next_in); ++i) {
            ++next_in;
        }
        while (sm_fifo_pop(&f.consumer, &v)) {
            ck_assert_uint_eq(next_out, v);
            ++next_out;
        }
    }
    ck_assert_uint_eq(next_in, next_out);
    ck_assert_uint_gt(next_out, 10000);
}
END_TEST

START_TEST(fifo_entries_encode_rank_and_fragment)
{
    uint32_t rank, index;
    sm_fifo_entry_decode(sm_fifo_entry(SM_FIFO_MAX_RANK, SM_MAX_FRAGS - 1), &rank, &index);
    ck_assert_uint_eq(SM_FIFO_MAX_RANK, rank);
    ck_assert_uint_eq(SM_MAX_FRAGS - 1, index);
    sm_fifo_entry_decode(sm_fifo_entry(0, 0), &rank, &index);
    ck_assert_uint_eq(0, rank);
    ck_assert_uint_eq(0, index);
    ck_assert_uint_ne(0, sm_fifo_entry(0, 0));
    ck_assert_uint_le(sm_fifo_entry(SM_FIFO_MAX_RANK, SM_MAX_FRAGS - 1), SM_FIFO_VALUE_MASK);
    /* A scribbled entry with an empty index field names no fragment. */
    sm_fifo_entry_decode((uint64_t) 5 << SM_FIFO_INDEX_BITS, &rank, &index);
    ck_assert_uint_eq(UINT32_MAX, index);
}
END_TEST

START_TEST(fifo_scribbled_slot_is_skipped_by_check)
{
    fifo_fixture_t f;
    fifo_setup(&f, 8);
    ck_assert_int_eq(OPAL_SUCCESS, sm_fifo_push(&f.producer, 11));
    ck_assert_int_eq(OPAL_SUCCESS, sm_fifo_push(&f.producer, 12));
    /* A peer overwrites the first entry with garbage of another lap. */
    atomic_store(&f.slots[0], sm_fifo_slot_word(3, 99) + ((uint64_t) 5 << SM_FIFO_SEQ_SHIFT));
    uint64_t v;
    ck_assert(!sm_fifo_pop(&f.consumer, &v));
    bool reset;
    ck_assert_uint_eq(1, mca_btl_sm_fifo_check(&f.consumer, &reset));
    ck_assert(!reset);
    ck_assert(sm_fifo_pop(&f.consumer, &v));
    ck_assert_uint_eq(12, v);
    /* The skipped slot works again on the next lap. */
    for (uint64_t i = 0; i < 20; ++i) {
        ck_assert_int_eq(OPAL_SUCCESS, sm_fifo_push(&f.producer, 100 + i));
        ck_assert(sm_fifo_pop(&f.consumer, &v));
        ck_assert_uint_eq(100 + i, v);
    }
}
END_TEST

START_TEST(fifo_scribbled_tail_is_reset_and_pushes_resume)
{
    fifo_fixture_t f;
    fifo_setup(&f, 8);
    ck_assert_int_eq(OPAL_SUCCESS, sm_fifo_push(&f.producer, 7));
    /* Past anything producers can have filled: the slot it names is a lap
     * behind, so producers see a full FIFO. */
    atomic_store(&f.tail, UINT64_C(101));
    ck_assert_int_eq(OPAL_ERR_RESOURCE_BUSY, sm_fifo_push(&f.producer, 8));
    bool reset;
    ck_assert_uint_eq(0, mca_btl_sm_fifo_check(&f.consumer, &reset));
    ck_assert(reset);
    ck_assert_int_eq(OPAL_SUCCESS, sm_fifo_push(&f.producer, 8));
    uint64_t v;
    ck_assert(sm_fifo_pop(&f.consumer, &v));
    ck_assert_uint_eq(7, v);
    ck_assert(sm_fifo_pop(&f.consumer, &v));
    ck_assert_uint_eq(8, v);
    ck_assert(!sm_fifo_pop(&f.consumer, &v));
}
END_TEST

START_TEST(fifo_any_garbage_stays_inside_the_slots)
{
    /* Random words in every slot and the tail: pops and pushes may fail
     * or return junk, but touch nothing outside (the guards stay). */
    struct {
        uint64_t guard_before[8];
        opal_atomic_uint64_t slots[16];
        uint64_t guard_after[8];
        opal_atomic_uint64_t tail;
    } mem;
    memset(mem.guard_before, 0xa5, sizeof(mem.guard_before));
    memset(mem.guard_after, 0xa5, sizeof(mem.guard_after));
    uint64_t x = 88172645463325252ull;
    for (int round = 0; round < 2000; ++round) {
        for (int i = 0; i < 16; ++i) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            atomic_store(&mem.slots[i], round % 2 ? x : sm_fifo_slot_word((uint64_t) i, x & 0xff));
        }
        atomic_store(&mem.tail, x >> (round % 64));
        sm_fifo_t fifo;
        sm_fifo_attach(&fifo, mem.slots, &mem.tail, 16);
        fifo.head = x >> 3;
        uint64_t v;
        for (int i = 0; i < 20; ++i) {
            (void) sm_fifo_pop(&fifo, &v);
            (void) sm_fifo_push(&fifo, 1 + (uint64_t) i);
        }
        bool reset;
        (void) mca_btl_sm_fifo_check(&fifo, &reset);
    }
    for (int i = 0; i < 8; ++i) {
        ck_assert_uint_eq(0xa5a5a5a5a5a5a5a5ull, mem.guard_before[i]);
        ck_assert_uint_eq(0xa5a5a5a5a5a5a5a5ull, mem.guard_after[i]);
    }
}
END_TEST

#define PRODUCERS 4

typedef struct {
    fifo_fixture_t *fifo;
    uint32_t id;
    uint32_t count;
} producer_arg_t;

static void *producer_main(void *arg)
{
    producer_arg_t *p = arg;
    sm_fifo_t view;
    sm_fifo_attach(&view, p->fifo->slots, &p->fifo->tail, 64);
    for (uint32_t i = 0; i < p->count;) {
        if (OPAL_SUCCESS == sm_fifo_push(&view, sm_fifo_entry(p->id, i))) {
            ++i;
        } else {
            /* More threads than cores: let the consumer run. */
            sched_yield();
        }
    }
    return NULL;
}

START_TEST(fifo_many_producers_each_keep_their_order)
{
    fifo_fixture_t f;
    fifo_setup(&f, 64);
    const uint32_t count = (uint32_t) opal_test_iterations(20000);
    pthread_t threads[PRODUCERS];
    producer_arg_t args[PRODUCERS];
    for (uint32_t t = 0; t < PRODUCERS; ++t) {
        args[t] = (producer_arg_t){.fifo = &f, .id = t, .count = count};
        ck_assert_int_eq(0, pthread_create(&threads[t], NULL, producer_main, &args[t]));
    }
    uint32_t next[PRODUCERS] = {0};
    for (uint64_t got = 0; got < (uint64_t) count * PRODUCERS;) {
        uint64_t v;
        if (!sm_fifo_pop(&f.consumer, &v)) {
            sched_yield();
            continue;
        }
        uint32_t id, index;
        sm_fifo_entry_decode(v, &id, &index);
        ck_assert_uint_lt(id, PRODUCERS);
        ck_assert_uint_eq(next[id], index);
        ++next[id];
        ++got;
    }
    for (uint32_t t = 0; t < PRODUCERS; ++t) {
        pthread_join(threads[t], NULL);
        ck_assert_uint_eq(count, next[t]);
    }
}
END_TEST

/* ---------------------------------------------------------- fast boxes */

#define RING 256

typedef struct {
    alignas(64) uint8_t box[SM_FBOX_CTL_SIZE + RING];
    uint8_t guard[64];
    sm_fbox_out_t out;
    sm_fbox_in_t in;
} fbox_fixture_t;

static void fbox_setup(fbox_fixture_t *f)
{
    memset(f->guard, 0x5a, sizeof(f->guard));
    mca_btl_sm_fbox_format(&f->out, f->box, RING);
    sm_fbox_in_attach(&f->in, f->box, RING);
}

static bool fbox_send(fbox_fixture_t *f, const void *data, uint32_t len, uint8_t tag)
{
    uint32_t pos = sm_fbox_reserve(&f->out, len);
    if (pos >= SM_FBOX_FULL) {
        return false;
    }
    memcpy(f->out.ring + pos + SM_FBOX_HDR_SIZE, data, len);
    sm_fbox_commit(&f->out, pos, len, tag, SM_MSG_AM);
    return true;
}

static int fbox_recv(fbox_fixture_t *f, void *data, uint32_t *len, uint8_t *tag)
{
    sm_fbox_msg_t msg;
    int rc = sm_fbox_peek(&f->in, &msg);
    if (1 == rc) {
        memcpy(data, msg.payload, msg.size);
        *len = msg.size;
        *tag = msg.tag;
        sm_fbox_consume(&f->in, &msg);
        sm_fbox_publish(&f->in);
    }
    return rc;
}

START_TEST(fbox_starts_empty)
{
    fbox_fixture_t f;
    fbox_setup(&f);
    sm_fbox_msg_t msg;
    ck_assert_int_eq(0, sm_fbox_peek(&f.in, &msg));
}
END_TEST

START_TEST(fbox_delivers_messages_in_order_across_wraps)
{
    fbox_fixture_t f;
    fbox_setup(&f);
    uint8_t data[64], got[64];
    uint32_t sent = 0, received = 0;
    for (int round = 0; round < 3000; ++round) {
        uint32_t len = (uint32_t) (round * 7 % 60);
        memset(data, (int) sent, sizeof(data));
        if (fbox_send(&f, data, len, (uint8_t) sent)) {
            ++sent;
        }
        if (round % 3) {
            uint32_t glen;
            uint8_t tag;
            while (1 == fbox_recv(&f, got, &glen, &tag)) {
                ck_assert_uint_eq((uint8_t) received, tag);
                for (uint32_t i = 0; i < glen; ++i) {
                    ck_assert_uint_eq((uint8_t) received, got[i]);
                }
                ++received;
            }
        }
    }
    ck_assert_uint_gt(sent, 1000);
    ck_assert_uint_ge(sent, received);
    ck_assert_uint_le(sent - received, RING / 32);
    for (int i = 0; i < 64; ++i) {
        ck_assert_uint_eq(0x5a, f.guard[i]);
    }
}
END_TEST

/* Every length that fits inline, starting at every 32-byte position of
 * the ring, reads back as the bytes given, with its tag, and nothing reads
 * as a message after it (the word past it was zeroed, or holds a header of
 * an earlier lap). */
START_TEST(fbox_every_length_reads_back_whole_at_every_position)
{
    fbox_fixture_t f;
    fbox_setup(&f);
    uint8_t data[RING / 4], got[RING / 4];
    unsigned checked = 0;
    for (uint32_t len = 0; len + SM_FBOX_HDR_SIZE <= RING / 4; ++len) {
        for (uint32_t n = 0; n < RING / 32 + 1; ++n) {
            for (uint32_t i = 0; i < len; ++i) {
                data[i] = (uint8_t) (i * 13 + len + n);
            }
            ck_assert(fbox_send(&f, data, len, (uint8_t) n));
            uint32_t glen = 0;
            uint8_t tag = 0;
            ck_assert_int_eq(1, fbox_recv(&f, got, &glen, &tag));
            ck_assert_uint_eq(len, glen);
            ck_assert_uint_eq((uint8_t) n, tag);
            ck_assert_mem_eq(data, got, len);
            sm_fbox_msg_t msg;
            ck_assert_int_eq(0, sm_fbox_peek(&f.in, &msg));
            ++checked;
        }
    }
    ck_assert_uint_eq((RING / 4 - SM_FBOX_HDR_SIZE + 1) * (RING / 32 + 1), checked);
    for (int i = 0; i < 64; ++i) {
        ck_assert_uint_eq(0x5a, f.guard[i]);
    }
}
END_TEST

/* sm_fbox_fill writes a message given as two parts (the btl's header and
 * the data) in two pieces, the bytes past the header's cache line first:
 * every length, split anywhere, at every position of the ring, reads back
 * as the two parts one after the other, and nothing past the ring is
 * written. */
START_TEST(fbox_fill_writes_both_parts_whole_at_every_split_and_position)
{
    fbox_fixture_t f;
    fbox_setup(&f);
    uint8_t a[RING / 4], b[RING / 4], want[RING / 4], got[RING / 4];
    unsigned checked = 0;
    for (uint32_t len = 0; len + SM_FBOX_HDR_SIZE <= RING / 4; ++len) {
        for (uint32_t a_len = 0; a_len <= len; ++a_len) {
            const uint32_t b_len = len - a_len;
            for (uint32_t i = 0; i < a_len; ++i) {
                a[i] = (uint8_t) (i * 7 + len + a_len);
            }
            for (uint32_t i = 0; i < b_len; ++i) {
                b[i] = (uint8_t) (~(i * 11) - len);
            }
            memcpy(want, a, a_len);
            memcpy(want + a_len, b, b_len);
            /* Two messages per split: a 32-byte step of the position each
             * time, so both halves of a line hold headers over the loop. */
            for (int m = 0; m < 2; ++m) {
                uint32_t pos = sm_fbox_reserve(&f.out, len);
                ck_assert_uint_lt(pos, SM_FBOX_FULL);
                sm_fbox_fill(&f.out, pos, 0 == a_len ? NULL : a, a_len, 0 == b_len ? NULL : b,
                             b_len);
                sm_fbox_commit(&f.out, pos, len, (uint8_t) a_len, SM_MSG_AM);
                uint32_t glen = 0;
                uint8_t tag = 0;
                memset(got, 0xee, sizeof(got));
                ck_assert_int_eq(1, fbox_recv(&f, got, &glen, &tag));
                ck_assert_uint_eq(len, glen);
                ck_assert_uint_eq((uint8_t) a_len, tag);
                ck_assert_mem_eq(want, got, len);
                ++checked;
            }
        }
    }
    ck_assert_uint_eq(2 * (RING / 4 - SM_FBOX_HDR_SIZE + 1) * (RING / 4 - SM_FBOX_HDR_SIZE + 2) / 2,
                      checked);
    for (int i = 0; i < 64; ++i) {
        ck_assert_uint_eq(0x5a, f.guard[i]);
    }
}
END_TEST

START_TEST(fbox_full_until_the_receiver_publishes)
{
    fbox_fixture_t f;
    fbox_setup(&f);
    uint8_t data[24] = {0};
    int sent = 0;
    while (fbox_send(&f, data, sizeof(data), 1)) {
        ++sent;
    }
    ck_assert_int_eq(RING / 32, sent);
    sm_fbox_msg_t msg;
    ck_assert_int_eq(1, sm_fbox_peek(&f.in, &msg));
    sm_fbox_consume(&f.in, &msg);
    /* Consumed but not published: still full for the sender. */
    ck_assert_uint_eq(SM_FBOX_FULL, sm_fbox_reserve(&f.out, sizeof(data)));
    sm_fbox_publish(&f.in);
    ck_assert(fbox_send(&f, data, sizeof(data), 1));
}
END_TEST

/* sm_fbox_ahead's lines for a sender whose end, start and ring size are
 * given (the ring itself is not touched). */
static uint32_t ahead_of(uint32_t size, uint32_t start, uint32_t end, uint32_t need,
                         uint32_t *first)
{
    sm_fbox_out_t out = {.size = size, .start = start, .end = end};
    return sm_fbox_ahead(&out, need, first);
}

START_TEST(fbox_lines_asked_for_ahead_are_free_and_past_the_next_header)
{
    const uint32_t line = OPAL_CACHE_LINE_SIZE;
    uint32_t first = 0;
    /* An 8-byte message (32 bytes) at either half of a line: the line
     * after the next header's. */
    ck_assert_uint_eq(1, ahead_of(4096, 0, 0, 32, &first));
    ck_assert_uint_eq(64, first);
    ck_assert_uint_eq(1, ahead_of(4096, 0, 32, 32, &first));
    ck_assert_uint_eq(64, first);
    /* A 512-byte message (544 bytes): through the word a same-sized next
     * message's commit zeroes (bytes 544-551 past the end). */
    ck_assert_uint_eq(8, ahead_of(4096, 0, 0, sm_fbox_need(512), &first));
    ck_assert_uint_eq(64, first);
    ck_assert_uint_ge(first + 8 * line, sm_fbox_need(512) + SM_FBOX_HDR_SIZE);
    /* Capped. */
    ck_assert_uint_eq(SM_FBOX_AHEAD_LINES, ahead_of(1u << 16, 0, 0, 4000, &first));
    /* Only free space: 128 bytes free past an end on a line leave one
     * line after the next header's, 64 bytes none. */
    ck_assert_uint_eq(1, ahead_of(4096, 128, 4096, 544, &first));
    ck_assert_uint_eq(0, ahead_of(4096, 64, 4096, 544, &first));
    /* Positions past 2^32 wrap. */
    ck_assert_uint_eq(1,
                      ahead_of(4096, UINT32_C(0xffffffe0) - 100, UINT32_C(0xffffffe0), 32, &first));
    ck_assert_uint_eq(0, first);
    /* Every case: lines past the next header's line, each wholly in free
     * space, no more than the cap. */
    for (uint32_t used = 0; used <= 4096; used += 32) {
        for (uint32_t k = 0; k < 86; ++k) { /* ends from 2^32 - 4096 to past 2^32 + 4096 */
            const uint32_t end = UINT32_C(0xfffff000) + k * 96;
            for (uint32_t need = 32; need <= 2048; need *= 2) {
                const uint32_t start = end - used;
                uint32_t n = ahead_of(4096, start, end, need, &first);
                ck_assert_uint_le(n, SM_FBOX_AHEAD_LINES);
                ck_assert_uint_eq(0, first % line);
                ck_assert_uint_eq(first, (end | (line - 1)) + 1);
                for (uint32_t i = 0; i < n; ++i) {
                    ck_assert_uint_le(first + (i + 1) * line - start, 4096);
                }
            }
        }
    }
}
END_TEST

/* The lines a waiting reader watches: those past the next header's line
 * that a next message as large as the last one would fill, when there are
 * at most SM_FBOX_WATCH_LINES of them, else none. */
START_TEST(fbox_lines_watched_are_those_of_a_next_message_like_the_last)
{
    const uint32_t line = OPAL_CACHE_LINE_SIZE;
    sm_fbox_in_t in;
    uint8_t ring[64];
    sm_fbox_in_attach(&in, ring, 4096);
    uint32_t first = 0;
    /* Nothing taken yet: nothing to go by. */
    ck_assert_uint_eq(0, sm_fbox_watch(&in, &first));
    /* Consuming sets what the next message is guessed to be. */
    sm_fbox_msg_t msg = {.payload = NULL, .size = 64, .tag = 0, .type = SM_MSG_AM};
    sm_fbox_consume(&in, &msg);
    ck_assert_uint_eq(sm_fbox_need(64), in.last_need);
    ck_assert_uint_eq(96, in.start);
    /* At 96 (the second half of a line), 96 bytes reach 64 bytes into
     * the next line: that one. */
    ck_assert_uint_eq(1, sm_fbox_watch(&in, &first));
    ck_assert_uint_eq(128, first);
    /* At a line's start, an 8-byte message (32 bytes) or a 56-byte one
     * (64) stays in the header's line: none. */
    in.start = 128;
    in.last_need = 32;
    ck_assert_uint_eq(0, sm_fbox_watch(&in, &first));
    in.last_need = 64;
    ck_assert_uint_eq(0, sm_fbox_watch(&in, &first));
    /* 256 bytes from a line's start: three more lines; 288: four, too
     * many, none. */
    in.last_need = 256;
    ck_assert_uint_eq(3, sm_fbox_watch(&in, &first));
    ck_assert_uint_eq(192, first);
    in.last_need = 288;
    ck_assert_uint_eq(0, sm_fbox_watch(&in, &first));
    /* Every case, positions wrapping past 2^32 included: the lines are
     * past the header's line, within the guessed message, and all of
     * them when there are few enough. */
    for (uint32_t k = 0; k < 300; ++k) {
        for (uint32_t need = 32; need <= 1024; need += 32) {
            in.start = UINT32_C(0xffffff00) + k * 32;
            in.last_need = need;
            const uint32_t n = sm_fbox_watch(&in, &first);
            ck_assert_uint_eq(0, first % line);
            ck_assert_uint_eq(first, (in.start | (line - 1)) + 1);
            const uint32_t head = first - in.start;
            const uint32_t past = need > head ? (need - head + line - 1) / line : 0;
            ck_assert_uint_eq(past <= SM_FBOX_WATCH_LINES ? past : 0, n);
            for (uint32_t i = 0; i < n; ++i) {
                ck_assert_uint_lt(first + i * line - in.start, need);
            }
        }
    }
}
END_TEST

START_TEST(fbox_stale_payload_never_reads_as_a_header)
{
    fbox_fixture_t f;
    fbox_setup(&f);
    /* Payload bytes that look like the header the reader expects later. */
    uint8_t data[56];
    for (int round = 0; round < 200; ++round) {
        sm_fbox_hdr_t fake = {
            .data = {.seq = f.in.seq + 1, .size = 8, .tag = 9, .type = SM_MSG_AM}};
        for (size_t i = 0; i + 8 <= sizeof(data); i += 8) {
            memcpy(data + i, &fake.word, 8);
        }
        ck_assert(fbox_send(&f, data, (uint32_t) (round % 2 ? 56 : 24), (uint8_t) round));
        uint8_t got[64];
        uint32_t len;
        uint8_t tag;
        ck_assert_int_eq(1, fbox_recv(&f, got, &len, &tag));
        ck_assert_uint_eq((uint8_t) round, tag);
        ck_assert_int_eq(0, fbox_recv(&f, got, &len, &tag));
    }
}
END_TEST

START_TEST(fbox_header_overrunning_the_ring_is_corrupt)
{
    fbox_fixture_t f;
    fbox_setup(&f);
    sm_fbox_hdr_t bad = {.data = {.seq = 1, .size = RING, .tag = 1, .type = SM_MSG_AM}};
    atomic_store(sm_fbox_word(f.out.ring, 0), bad.word);
    sm_fbox_msg_t msg;
    ck_assert_int_eq(-1, sm_fbox_peek(&f.in, &msg));
}
END_TEST

START_TEST(fbox_wrap_at_the_start_is_corrupt)
{
    fbox_fixture_t f;
    fbox_setup(&f);
    sm_fbox_hdr_t bad = {.data = {.seq = 1, .size = 0, .tag = 0, .type = SM_MSG_WRAP}};
    atomic_store(sm_fbox_word(f.out.ring, 0), bad.word);
    sm_fbox_msg_t msg;
    ck_assert_int_eq(-1, sm_fbox_peek(&f.in, &msg));
}
END_TEST

START_TEST(fbox_impossible_read_position_is_corrupt)
{
    fbox_fixture_t f;
    fbox_setup(&f);
    uint8_t data[24] = {0};
    while (fbox_send(&f, data, sizeof(data), 1)) {
    }
    /* The receiver claims to have read past what was written. */
    atomic_store(&f.out.ctl->read_count, f.out.end + 4096);
    ck_assert_uint_eq(SM_FBOX_CORRUPT, sm_fbox_reserve(&f.out, sizeof(data)));
}
END_TEST

START_TEST(fbox_any_garbage_stays_inside_the_ring)
{
    fbox_fixture_t f;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int round = 0; round < 5000; ++round) {
        fbox_setup(&f);
        for (size_t i = 0; i < RING; i += 8) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint64_t word = x;
            if (round % 2) {
                sm_fbox_hdr_t h;
                h.word = x;
                h.data.seq = (uint32_t) (1 + (x >> 61));
                word = h.word;
            }
            atomic_store(sm_fbox_word(f.out.ring, (uint32_t) i), word);
        }
        f.in.seq = 1 + (uint32_t) (x & 3);
        for (int i = 0; i < 10; ++i) {
            sm_fbox_msg_t msg;
            if (1 != sm_fbox_peek(&f.in, &msg)) {
                break;
            }
            ck_assert(msg.payload >= f.out.ring);
            ck_assert(msg.payload + msg.size <= f.out.ring + RING);
            sm_fbox_consume(&f.in, &msg);
        }
    }
    for (int i = 0; i < 64; ++i) {
        ck_assert_uint_eq(0x5a, f.guard[i]);
    }
}
END_TEST

/* -------------------------------------------------------------- checks */

static sm_layout_t good_layout(void)
{
    sm_layout_t l = {.fifo_slots = 64,
                     .eager_count = 4,
                     .eager_stride = 64 + 4096,
                     .max_count = 2,
                     .max_stride = 64 + 32768,
                     .fbox_count = 2,
                     .fbox_stride = 64 + 4096};
    l.fifo_offset = 4096;
    l.frag_offset = 8192;
    l.fbox_offset = l.frag_offset + 4 * l.eager_stride + 2 * l.max_stride;
    l.seg_size = l.fbox_offset + 2 * l.fbox_stride;
    return l;
}

START_TEST(layout_check_accepts_a_good_layout)
{
    sm_layout_t l = good_layout();
    char why[160];
    ck_assert_int_eq(OPAL_SUCCESS, mca_btl_sm_layout_check(&l, l.seg_size, why, sizeof(why)));
}
END_TEST

START_TEST(layout_check_refuses_every_kind_of_bad_field)
{
    char why[160];
    sm_layout_t base = good_layout(), l;
#define BAD(stmt, text)                                                                            \
    do {                                                                                           \
        l = base;                                                                                  \
        stmt;                                                                                      \
        ck_assert_int_eq(OPAL_ERR_BAD_VALUE,                                                       \
                         mca_btl_sm_layout_check(&l, base.seg_size, why, sizeof(why)));            \
        ck_assert_msg(NULL != strstr(why, text), "%s: got '%s'", #stmt, why);                      \
    } while (0)
    BAD(l.seg_size += 4096, "segment size");
    BAD(l.fifo_slots = 63, "FIFO size");
    BAD(l.fifo_slots = 0, "FIFO size");
    BAD(l.fifo_offset = 8, "FIFO outside");
    BAD(l.fifo_offset = base.seg_size - 8, "FIFO outside");
    BAD(l.fifo_offset = UINT64_MAX - 100, "FIFO outside");
    BAD(l.eager_count = 70000, "fragment counts");
    BAD(l.eager_stride = 10, "fragment counts");
    BAD(l.max_stride = 64 + 32768 + 1, "fragment counts");
    BAD(l.max_stride = UINT32_MAX, "fragment counts");
    BAD(l.max_count = 3, "fragments outside");
    BAD(l.frag_offset = UINT64_MAX / 2, "fragments outside");
    BAD(l.fbox_stride = 64 + 100, "fast-box size");
    BAD(l.fbox_stride = 64, "fast-box size");
    BAD(l.fbox_count = 3, "fast boxes outside");
    BAD(l.fbox_offset = base.seg_size, "fast boxes outside");
#undef BAD
    /* A mapping of another size than the layout says. */
    ck_assert_int_eq(OPAL_ERR_BAD_VALUE,
                     mca_btl_sm_layout_check(&base, base.seg_size - 4096, why, sizeof(why)));
}
END_TEST

static sm_split_msg_t good_split(void)
{
    sm_split_msg_t m;
    memset(&m, 0, sizeof(m));
    m.slices = 3;
    m.is_get = 1;
    m.slice = 8192;
    m.length = 2 * 8192 + 1;
    m.address = 0x10000;
    m.reg_address = 0x20000;
    m.reg_cookie = 42;
    m.reg_index = 7;
    return m;
}

START_TEST(split_check_reads_a_good_request)
{
    sm_split_msg_t m = good_split();
    sm_split_req_t req;
    char why[160];
    ck_assert_int_eq(OPAL_SUCCESS, mca_btl_sm_split_check(&m, sizeof(m), &req, why, sizeof(why)));
    ck_assert(req.is_get);
    ck_assert_uint_eq(3, req.slices);
    ck_assert_uint_eq(8192, req.slice);
    ck_assert_uint_eq(16385, req.length);
    ck_assert_uint_eq(0x10000, req.address);
    ck_assert_uint_eq(0x20000, req.reg_address);
    ck_assert_uint_eq(42, req.reg_cookie);
    ck_assert_uint_eq(7, req.reg_index);
    /* Exactly 64 equal slices, and a put. */
    m.slices = 64;
    m.length = 64 * 8192;
    m.is_get = 0;
    ck_assert_int_eq(OPAL_SUCCESS, mca_btl_sm_split_check(&m, sizeof(m), &req, why, sizeof(why)));
    ck_assert(!req.is_get);
}
END_TEST

START_TEST(split_check_refuses_every_kind_of_bad_field)
{
    char why[160];
    sm_split_req_t req;
    sm_split_msg_t base = good_split(), m;
#define BAD(stmt, text)                                                                            \
    do {                                                                                           \
        m = base;                                                                                  \
        stmt;                                                                                      \
        ck_assert_int_eq(OPAL_ERR_PROTOCOL,                                                        \
                         mca_btl_sm_split_check(&m, sizeof(m), &req, why, sizeof(why)));           \
        ck_assert_msg(NULL != strstr(why, text), "%s: got '%s'", #stmt, why);                      \
    } while (0)
    BAD(m.is_get = 2, "neither put (0) nor get (1)");
    BAD(m.slices = 1, "1 slices (2 to 64)");
    BAD(m.slices = 0, "0 slices");
    BAD(m.slices = 65, "65 slices");
    BAD(m.slice = 0, "do not cut");
    /* Too short to cover the length, or the last slice empty. */
    BAD(m.length = 3 * 8192 + 1, "do not cut 24577");
    BAD(m.length = 2 * 8192, "do not cut 16384");
    BAD(m.slice = m.length + 1, "do not cut");
    BAD((m.slices = 2, m.slice = UINT64_MAX / 2 + 1, m.length = UINT64_MAX), "do not cut");
    BAD(m.address = UINT64_MAX - 100, "wrap around");
    BAD(m.reg_address = UINT64_MAX - 100, "wrap around");
#undef BAD
    m = base;
    ck_assert_int_eq(OPAL_ERR_PROTOCOL,
                     mca_btl_sm_split_check(&m, sizeof(m) - 1, &req, why, sizeof(why)));
    ck_assert_ptr_nonnull(strstr(why, "bytes, not"));
}
END_TEST

START_TEST(identity_mismatches_are_named)
{
    sm_identity_t me, peer;
    ck_assert_int_eq(OPAL_SUCCESS, mca_btl_sm_identity_get(&me));
    ck_assert_uint_ne(0, strlen(me.boot_id));
    peer = me;
    ck_assert_ptr_null(mca_btl_sm_identity_compare(&me, &peer));
    peer.boot_id[0] ^= 1;
    ck_assert_ptr_nonnull(strstr(mca_btl_sm_identity_compare(&me, &peer), "another node"));
    peer = me;
    peer.shm_dev += 1;
    ck_assert_ptr_nonnull(strstr(mca_btl_sm_identity_compare(&me, &peer), "/dev/shm"));
    peer = me;
    peer.pidns_ino += 1;
    ck_assert_ptr_nonnull(strstr(mca_btl_sm_identity_compare(&me, &peer), "pid namespace"));
    peer = me;
    peer.uid += 1;
    ck_assert_ptr_nonnull(strstr(mca_btl_sm_identity_compare(&me, &peer), "another user"));
}
END_TEST

START_TEST(segment_name_uses_the_launchers_prefix_or_builds_it)
{
    char name[128], want[128];
    setenv("OPAL_ORTE_SHM_PREFIX", "opal-mca.1.2.", 1);
    ck_assert_int_eq(OPAL_SUCCESS, mca_btl_sm_segment_name(77, 3, name, sizeof(name)));
    ck_assert_str_eq("/opal-mca.1.2.btl_sm.3", name);
    setenv("OPAL_ORTE_SHM_PREFIX", "../etc/", 1);
    ck_assert_int_eq(OPAL_SUCCESS, mca_btl_sm_segment_name(77, 3, name, sizeof(name)));
    snprintf(want, sizeof(want), "/opal-mca.%lu.77.btl_sm.3", (unsigned long) geteuid());
    ck_assert_str_eq(want, name);
    unsetenv("OPAL_ORTE_SHM_PREFIX");
    ck_assert_int_eq(OPAL_SUCCESS, mca_btl_sm_segment_name(77, 3, name, sizeof(name)));
    ck_assert_str_eq(want, name);
    ck_assert_int_eq(OPAL_ERR_BAD_PARAM, mca_btl_sm_segment_name(77, 3, name, 8));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("btl_sm_units");
    OPAL_TEST_ADD(s, fifo_starts_empty);
    OPAL_TEST_ADD(s, fifo_returns_values_in_order_then_empty);
    OPAL_TEST_ADD(s, fifo_full_is_busy_until_a_pop);
    OPAL_TEST_ADD(s, fifo_keeps_order_over_many_laps);
    OPAL_TEST_ADD(s, fifo_entries_encode_rank_and_fragment);
    OPAL_TEST_ADD(s, fifo_scribbled_slot_is_skipped_by_check);
    OPAL_TEST_ADD(s, fifo_scribbled_tail_is_reset_and_pushes_resume);
    OPAL_TEST_ADD(s, fifo_any_garbage_stays_inside_the_slots);
    OPAL_TEST_ADD(s, fifo_many_producers_each_keep_their_order);
    OPAL_TEST_ADD(s, fbox_starts_empty);
    OPAL_TEST_ADD(s, fbox_delivers_messages_in_order_across_wraps);
    OPAL_TEST_ADD(s, fbox_every_length_reads_back_whole_at_every_position);
    OPAL_TEST_ADD(s, fbox_fill_writes_both_parts_whole_at_every_split_and_position);
    OPAL_TEST_ADD(s, fbox_full_until_the_receiver_publishes);
    OPAL_TEST_ADD(s, fbox_lines_asked_for_ahead_are_free_and_past_the_next_header);
    OPAL_TEST_ADD(s, fbox_lines_watched_are_those_of_a_next_message_like_the_last);
    OPAL_TEST_ADD(s, fbox_stale_payload_never_reads_as_a_header);
    OPAL_TEST_ADD(s, fbox_header_overrunning_the_ring_is_corrupt);
    OPAL_TEST_ADD(s, fbox_wrap_at_the_start_is_corrupt);
    OPAL_TEST_ADD(s, fbox_impossible_read_position_is_corrupt);
    OPAL_TEST_ADD(s, fbox_any_garbage_stays_inside_the_ring);
    OPAL_TEST_ADD(s, layout_check_accepts_a_good_layout);
    OPAL_TEST_ADD(s, layout_check_refuses_every_kind_of_bad_field);
    OPAL_TEST_ADD(s, split_check_reads_a_good_request);
    OPAL_TEST_ADD(s, split_check_refuses_every_kind_of_bad_field);
    OPAL_TEST_ADD(s, identity_mismatches_are_named);
    OPAL_TEST_ADD(s, segment_name_uses_the_launchers_prefix_or_builds_it);
    return opal_test_run(s);
}
