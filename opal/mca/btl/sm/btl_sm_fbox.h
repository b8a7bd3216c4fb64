/*
 * btl/sm's fast boxes: a single-producer single-consumer ring per pair of
 * processes that talk often, in the sender's segment. A message is an
 * 8-byte header then its payload, rounded up to SM_FBOX_ALIGN bytes; a
 * message never wraps: when it does not fit before the ring's end, a
 * WRAP header sends the reader back to the start.
 *
 * Positions are byte counts that only grow (modulo 2^32): the sender's
 * end, the receiver's start, used = end - start. The receiver publishes
 * its start in the fast box's control line after reading, so the sender
 * knows what it may overwrite; the sender reads it only when its cached
 * copy says the ring is full.
 *
 * A header is published by one 64-bit release store once its payload is
 * written; it is current when its sequence number is the one the reader
 * expects (sequence numbers skip 0, so zeroed memory is never current).
 * Before publishing, the sender zeroes the header word just past the new
 * message when that is free space: old payload bytes there could
 * otherwise look like a current header when the reader gets there.
 *
 * The receiver trusts nothing in the ring: a header whose size would
 * overrun the ring is reported as corrupt; sizes, tags and types go to
 * the caller in locals, which it checks.
 */
#ifndef OPAL_MCA_BTL_SM_BTL_SM_FBOX_H
#define OPAL_MCA_BTL_SM_BTL_SM_FBOX_H

#include "opal/opal_config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "opal/mca/btl/sm/btl_sm_layout.h"
#include "opal/threads/opal_atomic.h"

/* Messages start at multiples of this; a power of two, at least 8. */
#define SM_FBOX_ALIGN    32u
#define SM_FBOX_HDR_SIZE 8u
/* The smallest ring: a few messages of the largest inline size. */
#define SM_FBOX_MIN_SIZE 256u

typedef union sm_fbox_hdr_t {
    struct {
        uint32_t seq;
        uint16_t size; /* payload bytes; SM_MSG_FRAG: the fragment index */
        uint8_t tag;
        uint8_t type;
    } data;
    uint64_t word;
} sm_fbox_hdr_t;

/* The sender's side of one fast box. */
typedef struct sm_fbox_out_t {
    sm_fbox_ctl_t *ctl;
    uint8_t *ring;
    uint32_t size;  /* ring bytes, a power of two */
    uint32_t end;   /* bytes written so far */
    uint32_t start; /* the receiver's start as last read */
    uint32_t seq;   /* of the next message */
} sm_fbox_out_t;

/* The receiver's side. */
typedef struct sm_fbox_in_t {
    sm_fbox_ctl_t *ctl;
    const uint8_t *ring;
    uint32_t size;
    uint32_t start;     /* bytes consumed */
    uint32_t seq;       /* expected next */
    uint32_t published; /* start as last stored in ctl */
    uint32_t last_need; /* ring bytes of the last message consumed */
} sm_fbox_in_t;

/* A message as the receiver sees it (values copied out of the ring). */
typedef struct sm_fbox_msg_t {
    const uint8_t *payload;
    uint32_t size;
    uint8_t tag;
    uint8_t type;
} sm_fbox_msg_t;

/* What sm_fbox_reserve returns when the receiver's start is nonsense. */
#define SM_FBOX_CORRUPT UINT32_MAX
/* ... and when the message does not fit now. */
#define SM_FBOX_FULL (UINT32_MAX - 1)

static inline uint32_t sm_fbox_next_seq(uint32_t seq)
{
    return 0 == seq + 1 ? 1 : seq + 1;
}

static inline uint32_t sm_fbox_need(uint32_t payload)
{
    return (SM_FBOX_HDR_SIZE + payload + SM_FBOX_ALIGN - 1) & ~(SM_FBOX_ALIGN - 1);
}

static inline opal_atomic_uint64_t *sm_fbox_word(const uint8_t *ring, uint32_t pos)
{
    return (opal_atomic_uint64_t *) (uintptr_t) (ring + pos);
}

/* Clears a fast box (control line and ring) of ring_size bytes at base and
 * sets up the sender's view of it. */
void mca_btl_sm_fbox_format(sm_fbox_out_t *out, void *base, uint32_t ring_size);

/* Sets up the receiver's view of a fast box formatted by the peer. */
static inline void sm_fbox_in_attach(sm_fbox_in_t *in, void *base, uint32_t ring_size)
{
    in->ctl = (sm_fbox_ctl_t *) base;
    in->ring = (const uint8_t *) base + SM_FBOX_CTL_SIZE;
    in->size = ring_size;
    in->start = 0;
    in->seq = 1;
    in->published = 0;
    in->last_need = 0;
}

/* Reserves room for a message of payload bytes (sm_fbox_need(payload) <=
 * the ring size) and returns its position in the ring (the payload goes
 * at ring + position + SM_FBOX_HDR_SIZE), SM_FBOX_FULL when there is no
 * room now, or SM_FBOX_CORRUPT when the receiver's published start is
 * impossible. Must be followed by sm_fbox_commit. */
static inline uint32_t sm_fbox_reserve(sm_fbox_out_t *out, uint32_t payload)
{
    const uint32_t need = sm_fbox_need(payload);
    uint32_t pos = out->end & (out->size - 1);
    uint32_t skip = pos + need > out->size ? out->size - pos : 0;
    if (OPAL_UNLIKELY(out->end - out->start + skip + need > out->size)) {
        /* Acquire pairs with the receiver's release store after it read
         * the messages before start: their bytes may be overwritten. */
        uint32_t start = atomic_load_explicit(&out->ctl->read_count, memory_order_acquire);
        if (OPAL_UNLIKELY(out->end - start > out->size)) {
            return SM_FBOX_CORRUPT;
        }
        out->start = start;
        if (out->end - out->start + skip + need > out->size) {
            return SM_FBOX_FULL;
        }
    }
    if (skip) {
        sm_fbox_hdr_t wrap = {.data = {.seq = out->seq, .size = 0, .tag = 0, .type = SM_MSG_WRAP}};
        /* Release pairs with the reader's acquire load of the header;
         * position 0, where it goes next, holds a header of an earlier
         * lap or zero, never a current one. */
        atomic_store_explicit(sm_fbox_word(out->ring, pos), wrap.word, memory_order_release);
        out->seq = sm_fbox_next_seq(out->seq);
        out->end += skip;
        pos = 0;
    }
    return pos;
}

/* Asks for the cache line at p for writing: a hint, which changes no
 * data (PREFETCHW on x86-64, where processors without it take it as a
 * no-op). */
static inline void sm_fbox_prefetch_write(const void *p)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __asm__ volatile("prefetchw %0" : : "m"(*(const char *) p));
#elif defined(__GNUC__)
    __builtin_prefetch(p, 1, 3);
#else
    (void) p;
#endif
}

/* Asks for the cache line at p for reading (PREFETCHT0 on x86-64): a hint
 * like sm_fbox_prefetch_write. An asm statement, as there: GCC drops a
 * loop whose body is only __builtin_prefetch. */
static inline void sm_fbox_prefetch_read(const void *p)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __asm__ volatile("prefetcht0 %0" : : "m"(*(const char *) p));
#elif defined(__GNUC__)
    __builtin_prefetch(p, 0, 3);
#else
    (void) p;
#endif
}

/* At most this many lines are asked for ahead of the next message. */
#define SM_FBOX_AHEAD_LINES 16u

/* The free lines the next message will write if it is as large as the
 * one just committed (need bytes): from the line after the next header's
 * through the word that message's commit will zero, at most
 * SM_FBOX_AHEAD_LINES, and only free space (by the cached start), never a
 * line holding messages not yet read. The next header's own line is left
 * out: the reader is about to watch it. *first gets the position of the
 * first line (a multiple of the line size); returns how many lines. */
static inline uint32_t sm_fbox_ahead(const sm_fbox_out_t *out, uint32_t need, uint32_t *first)
{
    const uint32_t line = OPAL_CACHE_LINE_SIZE;
    const uint32_t from = (out->end | (line - 1u)) + 1u;
    const uint32_t last = out->end + need + SM_FBOX_HDR_SIZE; /* one past the zeroed word */
    uint32_t lines = last - out->end > from - out->end ? (last - from + line - 1u) / line : 1u;
    if (lines > SM_FBOX_AHEAD_LINES) {
        lines = SM_FBOX_AHEAD_LINES;
    }
    /* Whole lines of free space from there up to the cached start, a lap on. */
    const uint32_t span = from - out->start;
    const uint32_t room = span <= out->size ? (out->size - span) / line : 0u;
    *first = from;
    return lines < room ? lines : room;
}

/* Asks for sm_fbox_ahead's lines for writing, so that a ping-pong's next
 * commit finds them in this core's cache instead of waiting for the
 * reader's core to give them up (the reader read them one lap before). */
static inline void sm_fbox_own_ahead(const sm_fbox_out_t *out, uint32_t need)
{
    uint32_t at;
    const uint32_t lines = sm_fbox_ahead(out, need, &at);
    for (uint32_t i = 0; i < lines; ++i, at += OPAL_CACHE_LINE_SIZE) {
        sm_fbox_prefetch_write(out->ring + (at & (out->size - 1u)));
    }
}

/* Copies bytes [from, to) of the two parts a and b, taken as one run of
 * a_len + b_len bytes, to the same offsets of dst. */
static inline void sm_fbox_copy_range(uint8_t *dst, const uint8_t *a, size_t a_len,
                                      const uint8_t *b, size_t from, size_t to)
{
    if (from < a_len) {
        const size_t end = to < a_len ? to : a_len;
        memcpy(dst + from, a + from, end - from);
        from = end;
    }
    if (from < to) {
        memcpy(dst + from, b + (from - a_len), to - from);
    }
}

/* Writes the payload of the message reserved at pos, given as two parts
 * (a btl header and the data after it): the bytes past the header's cache
 * line first, then those in it, so that the line the reader polls is
 * written in one short run just before sm_fbox_commit publishes the
 * header there. Between a first store into that line and the header, the
 * reader's polls can take the line back, and the header's store then
 * waits for it once more (docs/btl-sm.md). */
static inline void sm_fbox_fill(const sm_fbox_out_t *out, uint32_t pos, const void *a, size_t a_len,
                                const void *b, size_t b_len)
{
    uint8_t *dst = out->ring + pos + SM_FBOX_HDR_SIZE;
    const size_t total = a_len + b_len;
    size_t head = OPAL_CACHE_LINE_SIZE - ((uintptr_t) dst & (OPAL_CACHE_LINE_SIZE - 1u));
    if (total > head) {
        sm_fbox_copy_range(dst, a, a_len, b, head, total);
    } else {
        head = total;
    }
    sm_fbox_copy_range(dst, a, a_len, b, 0, head);
}

/* Publishes the message reserved at pos, its payload written. */
static inline void sm_fbox_commit(sm_fbox_out_t *out, uint32_t pos, uint32_t payload, uint8_t tag,
                                  uint8_t type)
{
    const uint32_t need = sm_fbox_need(payload);
    uint32_t next = out->end + need;
    /* Free space past the message (by the cached start, which is never
     * ahead of the real one): zero the word the reader will look at next,
     * unless the ring wraps there (position 0 only ever holds headers). */
    if (next - out->start < out->size && 0 != (next & (out->size - 1))) {
        atomic_store_explicit(sm_fbox_word(out->ring, next & (out->size - 1)), 0,
                              memory_order_relaxed);
    }
    sm_fbox_hdr_t hdr = {
        .data = {.seq = out->seq, .size = (uint16_t) payload, .tag = tag, .type = type}};
    /* Release pairs with the reader's acquire load: the payload and the
     * zeroed word are visible before the header. */
    atomic_store_explicit(sm_fbox_word(out->ring, pos), hdr.word, memory_order_release);
    out->seq = sm_fbox_next_seq(out->seq);
    out->end = next;
    sm_fbox_own_ahead(out, need);
}

/* Looks at the next message: 1 with *msg filled, 0 when there is none
 * yet, -1 when the ring holds something impossible (a header overrunning
 * the ring, a WRAP where none can be). Does not consume it. */
static inline int sm_fbox_peek(sm_fbox_in_t *in, sm_fbox_msg_t *msg)
{
    for (int wraps = 0; wraps < 2; ++wraps) {
        uint32_t pos = in->start & (in->size - 1);
        sm_fbox_hdr_t hdr;
        /* Acquire pairs with the sender's release store of the header. */
        hdr.word = atomic_load_explicit(sm_fbox_word(in->ring, pos), memory_order_acquire);
        if (hdr.data.seq != in->seq) {
            return 0;
        }
        if (SM_MSG_WRAP == hdr.data.type) {
            if (0 == pos) {
                return -1;
            }
            in->start += in->size - pos;
            in->seq = sm_fbox_next_seq(in->seq);
            continue;
        }
        if (pos + sm_fbox_need(hdr.data.size) > in->size) {
            return -1;
        }
        msg->payload = in->ring + pos + SM_FBOX_HDR_SIZE;
        msg->size = hdr.data.size;
        msg->tag = hdr.data.tag;
        msg->type = hdr.data.type;
        return 1;
    }
    /* A WRAP right after a WRAP (at position 0). */
    return -1;
}

/* Moves past the message peek returned. */
static inline void sm_fbox_consume(sm_fbox_in_t *in, const sm_fbox_msg_t *msg)
{
    in->last_need = sm_fbox_need(msg->size);
    in->start += in->last_need;
    in->seq = sm_fbox_next_seq(in->seq);
}

/* A waiting reader watches at most this many lines past the next
 * header's. */
#define SM_FBOX_WATCH_LINES 3u

/* The lines past the next header's line that a next message as large as
 * the last one would fill, when there are at most SM_FBOX_WATCH_LINES of
 * them, else none (watching part of a longer message made it slower, and
 * watching all of one of 9 lines too). *first gets the position of the
 * first line (a multiple of the line size); returns how many lines. */
static inline uint32_t sm_fbox_watch(const sm_fbox_in_t *in, uint32_t *first)
{
    const uint32_t line = OPAL_CACHE_LINE_SIZE;
    const uint32_t from = (in->start | (line - 1u)) + 1u;
    *first = from;
    if (in->last_need <= from - in->start) {
        return 0; /* it would end in the header's line */
    }
    const uint32_t lines = (in->last_need - (from - in->start) + line - 1u) / line;
    return lines <= SM_FBOX_WATCH_LINES ? lines : 0u;
}

/* Called by a reader that found no message and waits for an answer: asks
 * for sm_fbox_watch's lines for reading (a hint: it changes nothing and
 * never faults). A message of two to four lines is otherwise read a line
 * at a time after its header is seen, one cross-core miss after another.
 * Watched, those lines come back to the reader at its first look after
 * the sender wrote them (sm_fbox_fill writes them before the header's
 * line), so the header's is mostly the only line still to come when the
 * message is found. */
static inline void sm_fbox_watch_ahead(const sm_fbox_in_t *in)
{
    uint32_t at;
    const uint32_t lines = sm_fbox_watch(in, &at);
    for (uint32_t i = 0; i < lines; ++i, at += OPAL_CACHE_LINE_SIZE) {
        sm_fbox_prefetch_read(in->ring + (at & (in->size - 1u)));
    }
}

/* Tells the sender how far the receiver has read, once its reads of the
 * consumed messages are done. */
static inline void sm_fbox_publish(sm_fbox_in_t *in)
{
    if (in->published != in->start) {
        /* Release pairs with the sender's acquire load in reserve. */
        atomic_store_explicit(&in->ctl->read_count, in->start, memory_order_release);
        in->published = in->start;
    }
}

#endif /* OPAL_MCA_BTL_SM_BTL_SM_FBOX_H */
