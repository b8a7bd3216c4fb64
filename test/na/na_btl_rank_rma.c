/*
 * na/btl's RMA cases: memory handles of 1 and 16 segments registered by
 * rank 0, serialized and used by every other rank for gets and puts at
 * offsets (crossing segments on both sides), access flags enforced; and
 * the killed case: the last rank dies while the others have gets, a
 * receive and sends pending with it.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/runtime/opal_proc.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "test/na/na_btl_rank.h"

enum {
    CTL_HANDLE_A = 20, /* 1 segment, read-write */
    CTL_HANDLE_B = 21, /* 16 segments, read-write */
    CTL_HANDLE_R = 22, /* read-only */
    CTL_HANDLE_W = 23, /* write-only */
    CTL_PUT_DONE = 24,
    CTL_VICTIM = 30,
};

#define A_SIZE   (256 * 1024 + 123)
#define B_SEGS   16
#define PUT_LEN  999
#define PUT_STEP 2000

static size_t b_seg_len(int i)
{
    return (size_t) (i + 1) * 1000 + (size_t) i * 7;
}

/* A handle over count segments of the given lengths (malloc'd; *mem gets
 * the pieces for freeing), registered. */
static opal_na_mem_handle_t *make_handle(int count, size_t (*len)(int), unsigned long flags,
                                         uint8_t **mem, size_t *total)
{
    opal_na_segment_t segs[B_SEGS];
    *total = 0;
    for (int i = 0; i < count; ++i) {
        segs[i].len = len(i);
        segs[i].base = malloc(segs[i].len);
        mem[i] = segs[i].base;
        *total += segs[i].len;
    }
    opal_na_mem_handle_t *mh = NULL;
    int rc = opal_na_mem_handle_create_segments(na_test.cls, segs, (size_t) count, flags, &mh);
    if (OPAL_SUCCESS == rc) {
        rc = opal_na_mem_register(na_test.cls, mh);
    }
    if (OPAL_SUCCESS != rc) {
        na_test_fail("a handle of %d segment(s): %s", count, opal_strerror(rc));
        return NULL;
    }
    return mh;
}

/* Byte j of the concatenation of mem's count segments. */
static uint8_t *byte_at(uint8_t **mem, int count, size_t (*len)(int), size_t j)
{
    for (int i = 0; i < count; ++i) {
        if (j < len(i)) {
            return mem[i] + j;
        }
        j -= len(i);
    }
    return NULL;
}

static size_t a_len(int i)
{
    (void) i;
    return A_SIZE;
}

static size_t small_len(int i)
{
    (void) i;
    return 4096;
}

/* Segment lengths of the peers' 16-segment local handle: unlike B's, so
 * that pieces end at different places on the two sides. */
static size_t l16_len(int i)
{
    return (size_t) (16 - i) * 1100 + 3;
}

static bool send_handle(uint32_t rank, uint32_t kind, opal_na_mem_handle_t *mh)
{
    size_t n = opal_na_mem_handle_get_serialize_size(na_test.cls, mh);
    uint8_t *blob = malloc(n);
    int rc = opal_na_mem_handle_serialize(na_test.cls, blob, n, mh);
    bool ok = OPAL_SUCCESS == rc && na_test_ctl_send(rank, kind, blob, n);
    if (OPAL_SUCCESS != rc) {
        na_test_fail("serializing a handle: %s", opal_strerror(rc));
    }
    free(blob);
    return ok;
}

static opal_na_mem_handle_t *recv_handle(uint32_t rank, uint32_t kind)
{
    uint8_t blob[NA_TEST_CTL_MAX];
    size_t n = sizeof(blob);
    if (!na_test_ctl_recv(rank, kind, blob, &n)) {
        return NULL;
    }
    opal_na_mem_handle_t *mh = NULL;
    int rc = opal_na_mem_handle_deserialize(na_test.cls, &mh, blob, n);
    if (OPAL_SUCCESS != rc) {
        na_test_fail("deserializing handle %" PRIu32 ": %s", kind, opal_strerror(rc));
        return NULL;
    }
    /* Cut short or with a byte changed in its header: refused. */
    opal_na_mem_handle_t *bad = NULL;
    if (OPAL_SUCCESS == opal_na_mem_handle_deserialize(na_test.cls, &bad, blob, n - 1)) {
        na_test_fail("a memory handle blob one byte short was accepted");
        opal_na_mem_handle_free(na_test.cls, bad);
    }
    return mh;
}

/* Runs one put or get and waits for it; returns its completion status. */
static int rma(bool get, opal_na_mem_handle_t *local, size_t loff, opal_na_mem_handle_t *remote,
               size_t roff, size_t len, uint32_t peer)
{
    na_test_done_t d = {0};
    int rc =
        (get ? opal_na_get : opal_na_put)(na_test.cls, na_test.ctx, na_test_done_cb, &d, local,
                                          loff, remote, roff, len, na_test.peers[peer], 0, NULL);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if (!na_test_wait(&d.done, get ? "a get" : "a put")) {
        return OPAL_ERR_TIMEOUT;
    }
    return d.ret;
}

static bool rma_owner(void)
{
    uint8_t *amem[1], *bmem[B_SEGS], *rmem[1], *wmem[1];
    size_t atotal, btotal, rtotal, wtotal;
    opal_na_mem_handle_t *a = make_handle(1, a_len, OPAL_NA_MEM_READ_WRITE, amem, &atotal);
    opal_na_mem_handle_t *b = make_handle(B_SEGS, b_seg_len, OPAL_NA_MEM_READ_WRITE, bmem, &btotal);
    opal_na_mem_handle_t *r = make_handle(1, small_len, OPAL_NA_MEM_READ_ONLY, rmem, &rtotal);
    opal_na_mem_handle_t *w = make_handle(1, small_len, OPAL_NA_MEM_WRITE_ONLY, wmem, &wtotal);
    if (NULL == a || NULL == b || NULL == r || NULL == w) {
        return false;
    }
    na_test_fill(amem[0], 0, 1, atotal);
    /* Peers get from the read-only one: its bytes are defined. */
    memset(rmem[0], 0x11, rtotal);
    memset(wmem[0], 0, wtotal);
    for (size_t j = 0; j < btotal; ++j) {
        *byte_at(bmem, B_SEGS, b_seg_len, j) = na_test_pattern(0, 2, btotal, j);
    }
    if (opal_na_mem_handle_get_size(na_test.cls, b) != btotal) {
        na_test_fail("a 16-segment handle says %zu bytes, not %zu",
                     opal_na_mem_handle_get_size(na_test.cls, b), btotal);
    }
    for (uint32_t p = 1; p < na_test.size; ++p) {
        if (!send_handle(p, CTL_HANDLE_A, a) || !send_handle(p, CTL_HANDLE_B, b) ||
            !send_handle(p, CTL_HANDLE_R, r) || !send_handle(p, CTL_HANDLE_W, w)) {
            return false;
        }
    }
    /* The peers' gets, then their puts. */
    bool ok = na_test_barrier();
    for (uint32_t p = 1; ok && p < na_test.size; ++p) {
        ok = na_test_ctl_recv(p, CTL_PUT_DONE, NULL, NULL);
    }
    for (uint32_t p = 1; ok && p < na_test.size; ++p) {
        long bad = na_test_check(amem[0] + p * PUT_STEP + 17, p, 3, PUT_LEN);
        if (bad >= 0) {
            na_test_fail("rank %" PRIu32 "'s put into the 1-segment handle: byte %ld differs", p,
                         bad);
        }
        size_t boff = b_seg_len(0) + b_seg_len(1) - 500 + p * PUT_STEP;
        for (size_t j = 0; j < PUT_LEN; ++j) {
            if (*byte_at(bmem, B_SEGS, b_seg_len, boff + j) != na_test_pattern(p, 4, PUT_LEN, j)) {
                na_test_fail("rank %" PRIu32 "'s put into the 16-segment handle: byte %zu differs",
                             p, j);
                break;
            }
        }
    }
    opal_na_mem_handle_t *hs[] = {a, b, r, w};
    for (int i = 0; i < 4; ++i) {
        (void) opal_na_mem_deregister(na_test.cls, hs[i]);
        opal_na_mem_handle_free(na_test.cls, hs[i]);
    }
    free(amem[0]);
    free(rmem[0]);
    free(wmem[0]);
    for (int i = 0; i < B_SEGS; ++i) {
        free(bmem[i]);
    }
    return ok && !na_test.broken;
}

static bool rma_user(void)
{
    opal_na_mem_handle_t *a = recv_handle(0, CTL_HANDLE_A), *b = recv_handle(0, CTL_HANDLE_B);
    opal_na_mem_handle_t *r = recv_handle(0, CTL_HANDLE_R), *w = recv_handle(0, CTL_HANDLE_W);
    if (NULL == a || NULL == b || NULL == r || NULL == w) {
        return false;
    }
    size_t atotal = A_SIZE, btotal = opal_na_mem_handle_get_size(na_test.cls, b);
    uint8_t *lmem[1], *l16mem[B_SEGS];
    size_t ltotal, l16total;
    opal_na_mem_handle_t *l = make_handle(1, a_len, OPAL_NA_MEM_READ_WRITE, lmem, &ltotal);
    opal_na_mem_handle_t *l16 =
        make_handle(B_SEGS, l16_len, OPAL_NA_MEM_READ_WRITE, l16mem, &l16total);
    if (NULL == l || NULL == l16) {
        return false;
    }
    /* Gets: the whole 1-segment handle; the 16-segment one at a local
     * offset; part of it into the 16-segment local handle. */
    int rc = rma(true, l, 0, a, 0, atotal, 0);
    long bad = na_test_check(lmem[0], 0, 1, atotal);
    if (OPAL_SUCCESS != rc || bad >= 0) {
        na_test_fail("get of the 1-segment handle: %s, first bad byte %ld", opal_strerror(rc), bad);
    }
    memset(lmem[0], 0, ltotal);
    rc = rma(true, l, 5, b, 0, btotal, 0);
    for (size_t j = 0; OPAL_SUCCESS == rc && j < btotal; ++j) {
        if (lmem[0][5 + j] != na_test_pattern(0, 2, btotal, j)) {
            na_test_fail("get of the 16-segment handle: byte %zu differs", j);
            break;
        }
    }
    size_t roff = 1234, len = btotal - 1234 - 100;
    rc = OPAL_SUCCESS == rc ? rma(true, l16, 77, b, roff, len, 0) : rc;
    for (size_t j = 0; OPAL_SUCCESS == rc && j < len; ++j) {
        if (*byte_at(l16mem, B_SEGS, l16_len, 77 + j) != na_test_pattern(0, 2, btotal, roff + j)) {
            na_test_fail("get between 16-segment handles: byte %zu differs", j);
            break;
        }
    }
    if (OPAL_SUCCESS != rc) {
        na_test_fail("a get: %s", opal_strerror(rc));
    }
    if (OPAL_SUCCESS != rma(true, l, 0, a, 0, 0, 0)) {
        na_test_fail("a get of 0 bytes did not succeed");
    }
    /* Access flags: no put into a read-only handle, no get from a
     * write-only one; ranges past a handle's end refused. */
    if (OPAL_ERR_PERM != rma(false, l, 0, r, 0, 16, 0) ||
        OPAL_ERR_PERM != rma(true, l, 0, w, 0, 16, 0)) {
        na_test_fail("access flags were not enforced");
    }
    if (OPAL_SUCCESS != rma(true, l, 0, r, 0, 16, 0) ||
        OPAL_SUCCESS != rma(false, l, 0, w, 0, 16, 0)) {
        na_test_fail("the access the flags allow was refused");
    }
    if (OPAL_ERR_BAD_PARAM != rma(true, l, 0, a, 1, atotal, 0)) {
        na_test_fail("a get past the remote handle's end was not refused");
    }
    /* Advice to bulk: put / get over btl/sm (which shares a large one
     * between both processes) are not to be cut; other BTLs give none. */
    const char *btls = getenv("OPAL_MCA_btl");
    size_t want = NULL != btls && NULL != strstr(btls, "sm") ? SIZE_MAX : 0;
    size_t advice = opal_na_rma_piece_max(na_test.cls, na_test.peers[0]);
    if (want != advice) {
        na_test_fail("rma_piece_max toward rank 0 over btl %s is %zu, not %zu",
                     NULL != btls ? btls : "(default)", advice, want);
    }
    if (0 != opal_na_rma_piece_max(na_test.cls, NULL) || 0 != opal_na_rma_piece_max(NULL, NULL)) {
        na_test_fail("rma_piece_max without a class or an address is not 0");
    }
    if (!na_test_barrier()) {
        return false;
    }
    /* Puts into rank 0's handles, each rank its own range. */
    uint32_t me = na_test.rank;
    na_test_fill(lmem[0] + 3, me, 3, PUT_LEN);
    rc = rma(false, l, 3, a, me * PUT_STEP + 17, PUT_LEN, 0);
    size_t boff = b_seg_len(0) + b_seg_len(1) - 500 + me * PUT_STEP;
    size_t loff = l16_len(0) - 200;
    for (size_t j = 0; j < PUT_LEN; ++j) {
        *byte_at(l16mem, B_SEGS, l16_len, loff + j) = na_test_pattern(me, 4, PUT_LEN, j);
    }
    rc = OPAL_SUCCESS == rc ? rma(false, l16, loff, b, boff, PUT_LEN, 0) : rc;
    if (OPAL_SUCCESS != rc) {
        na_test_fail("a put: %s", opal_strerror(rc));
    }
    bool ok = na_test_ctl_send(0, CTL_PUT_DONE, NULL, 0);
    opal_na_mem_handle_t *hs[] = {a, b, r, w};
    for (int i = 0; i < 4; ++i) {
        opal_na_mem_handle_free(na_test.cls, hs[i]);
    }
    (void) opal_na_mem_deregister(na_test.cls, l);
    (void) opal_na_mem_deregister(na_test.cls, l16);
    opal_na_mem_handle_free(na_test.cls, l);
    opal_na_mem_handle_free(na_test.cls, l16);
    free(lmem[0]);
    for (int i = 0; i < B_SEGS; ++i) {
        free(l16mem[i]);
    }
    return ok && !na_test.broken;
}

bool na_test_case_rma(int argc, char **argv)
{
    (void) argc;
    (void) argv;
    return 0 == na_test.rank ? rma_owner() : rma_user();
}

/* --------------------------------------------------------------- killed */

#define KILL_REGION (1024 * 1024)
#define KILL_PIECE  (64 * 1024)
#define KILL_DEPTH  8

/* Survivors meet without the victim (rank size - 1). */
static bool barrier_without_victim(void)
{
    uint32_t victim = na_test.size - 1;
    enum { CTL_SB = 31, CTL_SR = 32 };
    if (0 == na_test.rank) {
        for (uint32_t r = 1; r < victim; ++r) {
            if (!na_test_ctl_recv(r, CTL_SB, NULL, NULL)) {
                return false;
            }
        }
        for (uint32_t r = 1; r < victim; ++r) {
            if (!na_test_ctl_send(r, CTL_SR, NULL, 0)) {
                return false;
            }
        }
        return true;
    }
    return na_test_ctl_send(0, CTL_SB, NULL, 0) && na_test_ctl_recv(0, CTL_SR, NULL, NULL);
}

static bool killed_victim(void)
{
    uint8_t *mem[1];
    size_t total;
    opal_na_mem_handle_t *mh = make_handle(1, small_len, OPAL_NA_MEM_READ_WRITE, mem, &total);
    uint8_t *big = calloc(1, KILL_REGION);
    opal_na_mem_handle_t *bh = NULL;
    if (NULL == mh ||
        OPAL_SUCCESS !=
            opal_na_mem_handle_create(na_test.cls, big, KILL_REGION, OPAL_NA_MEM_READ_WRITE, &bh) ||
        OPAL_SUCCESS != opal_na_mem_register(na_test.cls, bh)) {
        na_test_fail("the victim's handle");
        return false;
    }
    for (uint32_t p = 0; p + 1 < na_test.size; ++p) {
        if (!send_handle(p, CTL_VICTIM, bh)) {
            return false;
        }
    }
    /* Serve the gets for a while, then die in the middle of them. */
    uint64_t end = opal_timer_ns() + (na_test.slow ? 2000 : 300) * UINT64_C(1000000);
    while (opal_timer_ns() < end) {
        (void) opal_na_poll(na_test.cls, na_test.ctx, NULL);
        (void) opal_na_trigger(na_test.ctl_ctx, 0, NULL);
    }
    raise(SIGKILL);
    return false;
}

bool na_test_case_killed(int argc, char **argv)
{
    (void) argc;
    (void) argv;
    uint32_t victim = na_test.size - 1;
    if (na_test.rank == victim) {
        return killed_victim();
    }
    opal_na_mem_handle_t *remote = recv_handle(victim, CTL_VICTIM);
    uint8_t *mem = malloc(KILL_PIECE * KILL_DEPTH);
    opal_na_mem_handle_t *local = NULL;
    if (NULL == remote ||
        OPAL_SUCCESS != opal_na_mem_handle_create(na_test.cls, mem, KILL_PIECE * KILL_DEPTH,
                                                  OPAL_NA_MEM_READ_WRITE, &local) ||
        OPAL_SUCCESS != opal_na_mem_register(na_test.cls, local)) {
        na_test_fail("the survivor's handles");
        return false;
    }
    /* A receive the victim will never answer. */
    na_test_done_t never = {0};
    uint8_t rbuf[16];
    int rc = opal_na_msg_recv_expected(na_test.cls, na_test.ctx, na_test_done_cb, &never, rbuf,
                                       sizeof(rbuf), NULL, na_test.peers[victim], 0, 99, NULL);
    if (OPAL_SUCCESS != rc) {
        na_test_fail("posting the receive from the victim: %s", opal_strerror(rc));
    }
    /* Gets kept KILL_DEPTH deep, and sends, until an error says the
     * victim is gone. */
    na_test_done_t gets[KILL_DEPTH];
    memset(gets, 0, sizeof(gets));
    for (int i = 0; i < KILL_DEPTH; ++i) {
        gets[i].done = true;
        gets[i].ret = OPAL_SUCCESS;
    }
    bool gone = false;
    uint64_t issued = 0;
    uint8_t sbuf[256] = {0};
    while (!gone && !na_test.broken) {
        for (int i = 0; i < KILL_DEPTH && !gone; ++i) {
            if (!gets[i].done) {
                continue;
            }
            if (OPAL_SUCCESS != gets[i].ret) {
                gone = true;
                break;
            }
            memset(&gets[i], 0, sizeof(gets[i]));
            size_t off = (issued++ % (KILL_REGION / KILL_PIECE)) * KILL_PIECE;
            rc = opal_na_get(na_test.cls, na_test.ctx, na_test_done_cb, &gets[i], local,
                             (size_t) i * KILL_PIECE, remote, off, KILL_PIECE,
                             na_test.peers[victim], 0, NULL);
            if (OPAL_SUCCESS != rc) {
                gets[i].done = true;
                gets[i].ret = rc;
                gone = true;
            }
        }
        na_test_done_t s = {0};
        rc = opal_na_msg_send_unexpected(na_test.cls, na_test.ctx, na_test_done_cb, &s, sbuf,
                                         sizeof(sbuf), NULL, na_test.peers[victim], 0, 5, NULL);
        if (OPAL_SUCCESS == rc) {
            if (!na_test_wait(&s.done, "a send to the victim")) {
                break;
            }
            gone = gone || OPAL_SUCCESS != s.ret;
        } else {
            gone = true;
        }
        (void) opal_na_poll(na_test.cls, na_test.ctx, NULL);
        (void) opal_na_trigger(na_test.ctx, 0, NULL);
        (void) opal_na_trigger(na_test.ctl_ctx, 0, NULL);
    }
    /* Every pending operation ends, the receive with an error. */
    for (int i = 0; i < KILL_DEPTH; ++i) {
        if (!na_test_wait(&gets[i].done, "a get pending when the victim died")) {
            break;
        }
    }
    if (na_test_wait(&never.done, "the receive from the victim") &&
        (OPAL_SUCCESS == never.ret || 1 != never.calls)) {
        na_test_fail("the receive from the dead rank completed %d time(s) with %s", never.calls,
                     opal_strerror(never.ret));
    } else {
        na_test_say("receive from rank %" PRIu32 " ended with %s", victim,
                    opal_strerror_name(never.ret));
    }
    /* Later operations on the victim fail at once or complete with an
     * error. */
    na_test_done_t late = {0};
    rc = opal_na_msg_recv_expected(na_test.cls, na_test.ctx, na_test_done_cb, &late, rbuf,
                                   sizeof(rbuf), NULL, na_test.peers[victim], 0, 98, NULL);
    if (OPAL_SUCCESS == rc) {
        na_test_fail("a receive from the dead rank was accepted");
        (void) na_test_wait(&late.done, "a late receive");
    }
    opal_na_mem_handle_free(na_test.cls, remote);
    (void) opal_na_mem_deregister(na_test.cls, local);
    opal_na_mem_handle_free(na_test.cls, local);
    free(mem);
    bool ok = barrier_without_victim();
    if (0 == na_test.rank) {
        /* The test checks that nothing of this job stays in /dev/shm. */
        na_test_say("job %" PRIu32, opal_proc_job_info()->my_name.jobid);
    }
    if (ok && !na_test.broken) {
        na_test_say("survived the loss of rank %" PRIu32 " after %" PRIu64 " gets", victim, issued);
    }
    return ok && !na_test.broken;
}
