/*
 * na/btl's message cases: URIs and addresses, unexpected messages from
 * several senders at once (every other one injected), expected messages
 * matched on source and tag in order (some arriving before their
 * receive), every size to the limits, over-limit sizes refused (sent or
 * injected), truncation, and cancel.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/runtime/opal_proc.h"
#include "opal/util/opal_error.h"
#include "test/na/na_btl_rank.h"

/* ------------------------------------------------------------------ uri */

bool na_test_case_uri(int argc, char **argv)
{
    (void) argc;
    (void) argv;
    const opal_proc_job_info_t *job = opal_proc_job_info();
    opal_na_addr_t *self = NULL;
    if (OPAL_SUCCESS != opal_na_addr_self(na_test.cls, &self)) {
        na_test_fail("addr_self failed");
        return false;
    }
    char want[64], uri[64];
    snprintf(want, sizeof(want), "btl://job/%" PRIu32 "/%" PRIu32, job->my_name.jobid,
             na_test.rank);
    size_t size = 0;
    if (OPAL_ERR_TRUNCATED != opal_na_addr_to_string(na_test.cls, NULL, &size, self) ||
        size != strlen(want) + 1) {
        na_test_fail("to_string with no buffer said %zu bytes, not %zu", size, strlen(want) + 1);
    }
    size = sizeof(uri);
    if (OPAL_SUCCESS != opal_na_addr_to_string(na_test.cls, uri, &size, self) ||
        0 != strcmp(uri, want)) {
        na_test_fail("own URI is \"%s\", not \"%s\"", uri, want);
    }
    if (!opal_na_addr_is_self(na_test.cls, self) ||
        !opal_na_addr_cmp(na_test.cls, self, na_test.peers[na_test.rank])) {
        na_test_fail("the address looked up by own URI is not self");
    }
    uint32_t other = (na_test.rank + 1) % na_test.size;
    if (na_test.size > 1 && (opal_na_addr_is_self(na_test.cls, na_test.peers[other]) ||
                             opal_na_addr_cmp(na_test.cls, self, na_test.peers[other]))) {
        na_test_fail("rank %" PRIu32 "'s address compares equal to self", other);
    }
    /* Serialized and back: the same peer. */
    size_t n = opal_na_addr_get_serialize_size(na_test.cls, na_test.peers[other]);
    uint8_t *blob = malloc(n);
    opal_na_addr_t *back = NULL;
    if (OPAL_SUCCESS != opal_na_addr_serialize(na_test.cls, blob, n, na_test.peers[other]) ||
        OPAL_SUCCESS != opal_na_addr_deserialize(na_test.cls, &back, blob, n) ||
        !opal_na_addr_cmp(na_test.cls, back, na_test.peers[other])) {
        na_test_fail("a serialized address did not come back as the same peer");
    }
    opal_na_addr_free(na_test.cls, back);
    /* Truncated blobs are refused. */
    for (size_t cut = 0; cut < n; ++cut) {
        opal_na_addr_t *bad = NULL;
        if (OPAL_SUCCESS == opal_na_addr_deserialize(na_test.cls, &bad, blob, cut)) {
            na_test_fail("an address blob cut to %zu of %zu bytes was accepted", cut, n);
            opal_na_addr_free(na_test.cls, bad);
            break;
        }
    }
    free(blob);
    /* Bad URIs: each refused with an error, nothing crashes. */
    char other_job[64], past_end[64];
    snprintf(other_job, sizeof(other_job), "btl://job/%" PRIu32 "/0", job->my_name.jobid + 1);
    snprintf(past_end, sizeof(past_end), "btl://job/%" PRIu32 "/%" PRIu32, job->my_name.jobid,
             na_test.size);
    const char *bad_uris[] = {"btl://",
                              "btl://job/",
                              "btl://job/1",
                              "btl://job/x/0",
                              "btl://job/1/-1",
                              "btl://card/",
                              "btl://card/abc",
                              "btl://card/zz",
                              "ofi+tcp://1.2.3.4:5",
                              "btl:/job/1/0",
                              other_job,
                              past_end,
                              "btl://job/99999999999/0"};
    for (size_t i = 0; i < sizeof(bad_uris) / sizeof(bad_uris[0]); ++i) {
        opal_na_addr_t *bad = NULL;
        int rc = opal_na_addr_lookup(na_test.cls, bad_uris[i], &bad);
        if (OPAL_SUCCESS == rc) {
            na_test_fail("the bad URI \"%s\" was accepted", bad_uris[i]);
            opal_na_addr_free(na_test.cls, bad);
        }
    }
    opal_na_addr_free(na_test.cls, self);
    return !na_test.broken;
}

/* ----------------------------------------------------------- unexpected */

#define UNEXPECTED_COUNT 200

static struct {
    int received;
    uint64_t *next_seq; /* by sender */
} unexp;

/* One receive of rank 0's window. */
typedef struct unexp_slot_t {
    opal_na_op_id_t *op;
    uint8_t buf[3000];
    bool busy;
} unexp_slot_t;

static void unexpected_cb(const opal_na_cb_info_t *info)
{
    unexp_slot_t *slot = info->arg;
    uint8_t *buf = slot->buf;
    slot->busy = false;
    if (OPAL_SUCCESS != info->ret) {
        na_test_fail("unexpected receive: %s", opal_strerror(info->ret));
        ++unexp.received;
        return;
    }
    uint32_t src = UINT32_MAX;
    for (uint32_t r = 0; r < na_test.size; ++r) {
        if (opal_na_addr_cmp(na_test.cls, info->info.recv_unexpected.source, na_test.peers[r])) {
            src = r;
        }
    }
    opal_na_addr_free(na_test.cls, info->info.recv_unexpected.source);
    if (src == UINT32_MAX || src != info->info.recv_unexpected.tag) {
        na_test_fail("a message with tag %u came from rank %" PRIu32 " (tags are the sender)",
                     info->info.recv_unexpected.tag, src);
    } else {
        uint64_t seq = unexp.next_seq[src]++;
        size_t size = info->info.recv_unexpected.actual_size;
        long bad = na_test_check(buf, src, seq, size);
        if (size != (seq * 37) % 3000 || bad >= 0) {
            na_test_fail("message %" PRIu64 " from rank %" PRIu32 " has %zu bytes (want %" PRIu64
                         "), first bad byte %ld",
                         seq, src, size, (seq * 37) % 3000, bad);
        }
    }
    ++unexp.received;
}

bool na_test_case_unexpected(int argc, char **argv)
{
    (void) argc;
    (void) argv;
    int count = na_test.slow ? 40 : UNEXPECTED_COUNT;
    if (0 == na_test.rank) {
        int total = (int) (na_test.size - 1) * count;
        unexp.next_seq = calloc(na_test.size, sizeof(uint64_t));
        /* A window of receives, each re-posted once its message is
         * checked: senders run ahead, so most messages wait as
         * unexpected ones with no receive posted. */
        enum { WINDOW = 4 };
        unexp_slot_t *slots = calloc(WINDOW, sizeof(*slots));
        for (int w = 0; w < WINDOW; ++w) {
            slots[w].op = opal_na_op_create(na_test.cls);
        }
        int posted = 0;
        while (unexp.received < total && !na_test.broken) {
            for (int w = 0; w < WINDOW && posted < total; ++w) {
                if (slots[w].busy) {
                    continue;
                }
                int rc = opal_na_msg_recv_unexpected(na_test.cls, na_test.ctx, unexpected_cb,
                                                     &slots[w], slots[w].buf, sizeof(slots[w].buf),
                                                     NULL, slots[w].op);
                if (OPAL_SUCCESS != rc) {
                    na_test_fail("posting an unexpected receive: %s", opal_strerror(rc));
                    break;
                }
                slots[w].busy = true;
                ++posted;
            }
            if (!na_test_wait_count(&unexp.received, unexp.received + 1, "unexpected messages")) {
                break;
            }
        }
        for (int w = 0; w < WINDOW; ++w) {
            (void) opal_na_op_destroy(na_test.cls, slots[w].op);
        }
        free(slots);
        free(unexp.next_seq);
        return !na_test.broken;
    }
    uint8_t *buf = malloc(3000);
    opal_na_op_id_t *op = opal_na_op_create(na_test.cls);
    int injected = 0;
    for (int seq = 0; seq < count && !na_test.broken; ++seq) {
        size_t size = ((size_t) seq * 37) % 3000;
        na_test_fill(buf, na_test.rank, (uint64_t) seq, size);
        if (1 == seq % 2) {
            /* Every other one injected (no operation, buf free at once),
             * in order with the ones sent; busy means send it instead. */
            int rc = opal_na_msg_inject_unexpected(na_test.cls, na_test.ctx, buf, size,
                                                   na_test.peers[0], 0, na_test.rank);
            if (OPAL_SUCCESS == rc) {
                memset(buf, 0xee, size);
                ++injected;
                continue;
            }
            if (OPAL_ERR_RESOURCE_BUSY != rc) {
                na_test_fail("unexpected inject %d: %s", seq, opal_strerror(rc));
                break;
            }
        }
        na_test_done_t d = {0};
        int rc = opal_na_msg_send_unexpected(na_test.cls, na_test.ctx, na_test_done_cb, &d, buf,
                                             size, NULL, na_test.peers[0], 0, na_test.rank, op);
        if (OPAL_SUCCESS != rc || !na_test_wait(&d.done, "an unexpected send") ||
            OPAL_SUCCESS != d.ret) {
            na_test_fail("unexpected send %d: %s", seq,
                         opal_strerror(OPAL_SUCCESS != rc ? rc : d.ret));
        }
    }
    if (0 == injected && !na_test.broken) {
        na_test_fail("no message of %d was taken by inject", count / 2);
    }
    (void) opal_na_op_destroy(na_test.cls, op);
    free(buf);
    return !na_test.broken;
}

/* ------------------------------------------------------------- expected */

#define EXP_TAGS 3
#define EXP_PER  20

/* Rank 0 receives from every other rank EXP_PER messages on each of
 * EXP_TAGS tags; half the receives are posted before the senders start,
 * the other half after every message has had time to arrive (kept as
 * early). The sender's sequence number is in the payload and must come
 * in order per (source, tag). */
bool na_test_case_expected(int argc, char **argv)
{
    (void) argc;
    (void) argv;
    enum { CTL_SENT = 10 };
    size_t nsrc = na_test.size - 1;
    if (0 == na_test.rank) {
        size_t total = nsrc * EXP_TAGS * EXP_PER;
        uint64_t *bufs = calloc(total, sizeof(uint64_t) * 4);
        na_test_done_t *done = calloc(total, sizeof(*done));
        /* Receive i: source 1 + i / (TAGS * PER), tag, k-th of that pair. */
        for (int half = 0; half < 2; ++half) {
            for (size_t i = 0; i < total; ++i) {
                uint32_t src = 1 + (uint32_t) (i / (EXP_TAGS * EXP_PER));
                uint32_t tag = (uint32_t) ((i / EXP_PER) % EXP_TAGS) + 100;
                size_t k = i % EXP_PER;
                if ((k < EXP_PER / 2) != (0 == half)) {
                    continue;
                }
                int rc = opal_na_msg_recv_expected(na_test.cls, na_test.ctx, na_test_done_cb,
                                                   &done[i], &bufs[4 * i], 4 * sizeof(uint64_t),
                                                   NULL, na_test.peers[src], 0, tag, NULL);
                if (OPAL_SUCCESS != rc) {
                    na_test_fail("posting expected receive %zu: %s", i, opal_strerror(rc));
                }
            }
            if (0 == half) {
                if (!na_test_barrier()) {
                    break;
                }
                /* Every sender has sent everything before the second half
                 * is posted. */
                for (uint32_t r = 1; r < na_test.size; ++r) {
                    if (!na_test_ctl_recv(r, CTL_SENT, NULL, NULL)) {
                        break;
                    }
                }
            }
        }
        for (size_t i = 0; i < total && !na_test.broken; ++i) {
            if (!na_test_wait(&done[i].done, "an expected message")) {
                break;
            }
            uint32_t src = 1 + (uint32_t) (i / (EXP_TAGS * EXP_PER));
            uint32_t tag = (uint32_t) ((i / EXP_PER) % EXP_TAGS) + 100;
            uint64_t k = i % EXP_PER;
            if (OPAL_SUCCESS != done[i].ret || 1 != done[i].calls ||
                done[i].info.info.recv_expected.actual_size != 3 * sizeof(uint64_t) ||
                bufs[4 * i] != src || bufs[4 * i + 1] != tag || bufs[4 * i + 2] != k) {
                na_test_fail("expected receive %" PRIu64 " of rank %" PRIu32 " tag %" PRIu32
                             ": %s, %zu bytes, got (%" PRIu64 ",%" PRIu64 ",%" PRIu64 ")",
                             k, src, tag, opal_strerror(done[i].ret),
                             done[i].info.info.recv_expected.actual_size, bufs[4 * i],
                             bufs[4 * i + 1], bufs[4 * i + 2]);
            }
        }
        free(bufs);
        free(done);
        return !na_test.broken;
    }
    if (!na_test_barrier()) {
        return false;
    }
    /* Tags interleaved, so that matching must pick by tag. */
    for (uint64_t k = 0; k < EXP_PER && !na_test.broken; ++k) {
        for (uint32_t t = 0; t < EXP_TAGS; ++t) {
            uint64_t msg[3] = {na_test.rank, 100 + t, k};
            na_test_done_t d = {0};
            int rc =
                opal_na_msg_send_expected(na_test.cls, na_test.ctx, na_test_done_cb, &d, msg,
                                          sizeof(msg), NULL, na_test.peers[0], 0, 100 + t, NULL);
            if (OPAL_SUCCESS != rc || !na_test_wait(&d.done, "an expected send") ||
                OPAL_SUCCESS != d.ret) {
                na_test_fail("expected send: %s", opal_strerror(OPAL_SUCCESS != rc ? rc : d.ret));
            }
        }
    }
    return na_test_ctl_send(0, CTL_SENT, NULL, 0) && !na_test.broken;
}

/* ---------------------------------------------------------------- sizes */

/* The sizes checked: every one to 1100 bytes and around the BTLs' eager
 * sizes (4 KiB with sm), a geometric spread above, and the last 200
 * before the limit. Every size to 64 KiB would move 2 GiB per kind. */
static size_t next_size(size_t s, size_t max, bool slow)
{
    size_t step = slow ? 7 : 1;
    if (s < 1100 || (s >= 4000 && s < 4200) || s + 200 >= max) {
        return s + step;
    }
    size_t next = s + s / 5 + 1;
    if (s < 4000 && next > 4000) {
        return 4000;
    }
    return next + 200 > max ? max - 200 : next;
}

static bool ping_pong_size(size_t size, uint8_t *sbuf, uint8_t *rbuf, size_t max, bool expected)
{
    uint32_t peer = 1 - na_test.rank;
    na_test_done_t d = {0}, r = {0};
    int rc;
    if (0 == na_test.rank) {
        rc = expected ? opal_na_msg_recv_expected(na_test.cls, na_test.ctx, na_test_done_cb, &r,
                                                  rbuf, max, NULL, na_test.peers[peer], 0, 7, NULL)
                      : opal_na_msg_recv_unexpected(na_test.cls, na_test.ctx, na_test_done_cb, &r,
                                                    rbuf, max, NULL, NULL);
        if (OPAL_SUCCESS != rc || !na_test_wait(&r.done, "a message")) {
            na_test_fail("receive of %zu bytes: %s", size, opal_strerror(rc));
            return false;
        }
        size_t got = expected ? r.info.info.recv_expected.actual_size
                              : r.info.info.recv_unexpected.actual_size;
        long bad = na_test_check(rbuf, peer, size, size);
        if (OPAL_SUCCESS != r.ret || got != size || bad >= 0) {
            na_test_fail("%s message of %zu bytes: %s, %zu bytes, first bad byte %ld",
                         expected ? "expected" : "unexpected", size, opal_strerror(r.ret), got,
                         bad);
        }
        if (!expected) {
            opal_na_addr_free(na_test.cls, r.info.info.recv_unexpected.source);
        }
        /* The reply says it was checked. */
        rc = opal_na_msg_send_expected(na_test.cls, na_test.ctx, na_test_done_cb, &d, NULL, 0, NULL,
                                       na_test.peers[peer], 0, 8, NULL);
        return OPAL_SUCCESS == rc && na_test_wait(&d.done, "a reply");
    }
    rc = opal_na_msg_recv_expected(na_test.cls, na_test.ctx, na_test_done_cb, &r, NULL, 0, NULL,
                                   na_test.peers[peer], 0, 8, NULL);
    na_test_fill(sbuf, na_test.rank, size, size);
    if (OPAL_SUCCESS == rc) {
        rc = expected
                 ? opal_na_msg_send_expected(na_test.cls, na_test.ctx, na_test_done_cb, &d, sbuf,
                                             size, NULL, na_test.peers[peer], 0, 7, NULL)
                 : opal_na_msg_send_unexpected(na_test.cls, na_test.ctx, na_test_done_cb, &d, sbuf,
                                               size, NULL, na_test.peers[peer], 0, 7, NULL);
    }
    if (OPAL_SUCCESS != rc || !na_test_wait(&d.done, "a send") || OPAL_SUCCESS != d.ret ||
        !na_test_wait(&r.done, "a reply")) {
        na_test_fail("send of %zu bytes: %s", size, opal_strerror(OPAL_SUCCESS != rc ? rc : d.ret));
        return false;
    }
    return true;
}

/* The first n bytes of a message of size hold its pattern. */
static bool prefix_ok(const uint8_t *buf, uint32_t src, size_t size, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        if (buf[i] != na_test_pattern(src, size, size, i)) {
            return false;
        }
    }
    return true;
}

bool na_test_case_sizes(int argc, char **argv)
{
    (void) argc;
    (void) argv;
    if (na_test.rank > 1) {
        return true;
    }
    size_t max_u = opal_na_msg_get_max_unexpected_size(na_test.cls);
    size_t max_e = opal_na_msg_get_max_expected_size(na_test.cls);
    size_t max = max_u > max_e ? max_u : max_e;
    if (max_u < 4096 || max_e < 4096) {
        na_test_fail("limits of %zu / %zu bytes are below 4 KiB", max_u, max_e);
        return false;
    }
    uint8_t *sbuf = malloc(max + 1), *rbuf = malloc(max + 1);
    for (int kind = 0; kind < 2 && !na_test.broken; ++kind) {
        size_t limit = 0 == kind ? max_u : max_e;
        for (size_t s = 0; s <= limit && !na_test.broken; s = next_size(s, limit, na_test.slow)) {
            if (!ping_pong_size(s, sbuf, rbuf, limit, 1 == kind)) {
                break;
            }
        }
    }
    /* One byte over each limit: refused, nothing sent. */
    uint32_t peer = 1 - na_test.rank;
    na_test_done_t d = {0};
    if (OPAL_ERR_BAD_PARAM != opal_na_msg_send_unexpected(na_test.cls, na_test.ctx, na_test_done_cb,
                                                          &d, sbuf, max_u + 1, NULL,
                                                          na_test.peers[peer], 0, 1, NULL) ||
        OPAL_ERR_BAD_PARAM != opal_na_msg_send_expected(na_test.cls, na_test.ctx, na_test_done_cb,
                                                        &d, sbuf, max_e + 1, NULL,
                                                        na_test.peers[peer], 0, 1, NULL) ||
        d.calls != 0) {
        na_test_fail("a message over the limit was not refused");
    }
    if (OPAL_ERR_BAD_PARAM != opal_na_msg_inject_unexpected(na_test.cls, na_test.ctx, sbuf,
                                                            max_u + 1, na_test.peers[peer], 0, 1)) {
        na_test_fail("an injected message over the limit was not refused");
    }
    /* A receive smaller than its message: truncated, its first bytes in. */
    if (!na_test_barrier()) {
        return false;
    }
    if (0 == na_test.rank) {
        na_test_done_t r = {0};
        memset(rbuf, 0, 200);
        int rc = opal_na_msg_recv_expected(na_test.cls, na_test.ctx, na_test_done_cb, &r, rbuf, 100,
                                           NULL, na_test.peers[peer], 0, 9, NULL);
        if (OPAL_SUCCESS != rc || !na_test_wait(&r.done, "a truncated message") ||
            OPAL_ERR_TRUNCATED != r.ret || 200 != r.info.info.recv_expected.actual_size ||
            !prefix_ok(rbuf, peer, 200, 100) || 0 != rbuf[100]) {
            na_test_fail("a 200-byte message into 100 bytes: %s, %zu bytes", opal_strerror(r.ret),
                         r.info.info.recv_expected.actual_size);
        }
    } else {
        na_test_fill(sbuf, na_test.rank, 200, 200);
        int rc = opal_na_msg_send_expected(na_test.cls, na_test.ctx, na_test_done_cb, &d, sbuf, 200,
                                           NULL, na_test.peers[peer], 0, 9, NULL);
        if (OPAL_SUCCESS != rc || !na_test_wait(&d.done, "a send")) {
            na_test_fail("the truncated case's send: %s", opal_strerror(rc));
        }
    }
    free(sbuf);
    free(rbuf);
    return !na_test.broken;
}

/* --------------------------------------------------------------- cancel */

bool na_test_case_cancel(int argc, char **argv)
{
    (void) argc;
    (void) argv;
    uint8_t buf[64];
    opal_na_op_id_t *op = opal_na_op_create(na_test.cls);
    uint32_t peer = (na_test.rank + 1) % na_test.size;
    for (int kind = 0; kind < 2; ++kind) {
        na_test_done_t d = {0};
        int rc = 0 == kind ? opal_na_msg_recv_unexpected(na_test.cls, na_test.ctx, na_test_done_cb,
                                                         &d, buf, sizeof(buf), NULL, op)
                           : opal_na_msg_recv_expected(na_test.cls, na_test.ctx, na_test_done_cb,
                                                       &d, buf, sizeof(buf), NULL,
                                                       na_test.peers[peer], 0, 4242, op);
        if (OPAL_SUCCESS != rc) {
            na_test_fail("posting a receive to cancel: %s", opal_strerror(rc));
            break;
        }
        if (OPAL_ERR_RESOURCE_BUSY != opal_na_op_destroy(na_test.cls, op)) {
            na_test_fail("an op id in use could be destroyed");
        }
        if (OPAL_SUCCESS != opal_na_cancel(na_test.cls, na_test.ctx, op) ||
            OPAL_SUCCESS != opal_na_cancel(na_test.cls, na_test.ctx, op)) {
            na_test_fail("cancel failed");
        }
        if (!na_test_wait(&d.done, "a canceled receive")) {
            break;
        }
        /* A while more: no second callback. */
        for (int i = 0; i < 1000; ++i) {
            (void) opal_na_poll(na_test.cls, na_test.ctx, NULL);
            (void) opal_na_trigger(na_test.ctx, 0, NULL);
        }
        (void) opal_na_cancel(na_test.cls, na_test.ctx, op);
        (void) opal_na_trigger(na_test.ctx, 0, NULL);
        if (OPAL_ERR_CANCELED != d.ret || 1 != d.calls) {
            na_test_fail("a canceled %s receive completed %d time(s), last with %s",
                         0 == kind ? "unexpected" : "expected", d.calls, opal_strerror(d.ret));
        }
    }
    /* The op id is reusable and the context is not left busy: a message
     * still arrives to the next receive. */
    if (!na_test_barrier()) {
        return false;
    }
    uint64_t token = 0x5a5a + na_test.rank;
    na_test_done_t r = {0}, s = {0};
    uint32_t from = (na_test.rank + na_test.size - 1) % na_test.size;
    int rc = opal_na_msg_recv_expected(na_test.cls, na_test.ctx, na_test_done_cb, &r, buf,
                                       sizeof(buf), NULL, na_test.peers[from], 0, 4242, op);
    if (OPAL_SUCCESS == rc) {
        rc = opal_na_msg_send_expected(na_test.cls, na_test.ctx, na_test_done_cb, &s, &token,
                                       sizeof(token), NULL, na_test.peers[peer], 0, 4242, NULL);
    }
    uint64_t got = 0;
    memcpy(&got, buf, sizeof(got));
    if (OPAL_SUCCESS != rc || !na_test_wait(&r.done, "a message after cancel") ||
        !na_test_wait(&s.done, "a send after cancel") || OPAL_SUCCESS != r.ret ||
        (memcpy(&got, buf, sizeof(got)), got != 0x5a5a + from)) {
        na_test_fail("a message after the cancels: %s", opal_strerror(rc));
    }
    (void) opal_na_op_destroy(na_test.cls, op);
    return !na_test.broken;
}

/* --------------------------------------------------------------- closed */

/* The order things happened in on rank 0 (callbacks and the hook). */
static int closed_clock;
static struct {
    int calls;
    int at;
    bool finalized;
    bool is_rank_1;
} closed_hook;

typedef struct closed_done_t {
    na_test_done_t done;
    int at;
} closed_done_t;

static void closed_cb(const opal_na_cb_info_t *info)
{
    closed_done_t *d = info->arg;
    d->at = ++closed_clock;
    na_test_done_cb(info);
}

static void closed_gone(opal_na_class_t *cls, opal_na_addr_t *addr, bool finalized, const char *why,
                        void *arg)
{
    (void) arg;
    na_test_say("the peer-gone hook: %s", why);
    closed_hook.calls++;
    closed_hook.at = ++closed_clock;
    closed_hook.finalized = finalized;
    closed_hook.is_rank_1 = opal_na_addr_cmp(cls, addr, na_test.peers[1]);
}

/* Rank 1 sends one expected message and finalizes (main skips the last
 * barrier for this case). Rank 0 had posted a receive for that message
 * and one for a message that never comes: the first completes with the
 * bytes, then the second with OPAL_ERR_PEER_FAILED, and the class's
 * peer-gone hook hears once that rank 1 finalized. */
bool na_test_case_closed(int argc, char **argv)
{
    (void) argc;
    (void) argv;
    static const char last[8] = "bye-bye";
    if (2 != na_test.size) {
        na_test_fail("the closed case needs 2 ranks");
        return false;
    }
    if (1 == na_test.rank) {
        na_test_done_t d = {0};
        int rc =
            opal_na_msg_send_expected(na_test.cls, na_test.ctx, na_test_done_cb, &d, (void *) last,
                                      sizeof(last), NULL, na_test.peers[0], 0, 77, NULL);
        if (OPAL_SUCCESS != rc || !na_test_wait(&d.done, "the last message") ||
            OPAL_SUCCESS != d.ret) {
            na_test_fail("the last message: %s", opal_strerror(OPAL_SUCCESS != rc ? rc : d.ret));
            return false;
        }
        return true;
    }
    if (OPAL_SUCCESS != opal_na_base_peer_gone_hook_set(na_test.cls, closed_gone, NULL)) {
        na_test_fail("installing the peer-gone hook");
        return false;
    }
    closed_done_t answered = {0}, never = {0};
    char buf[8] = {0}, nbuf[8];
    int rc = opal_na_msg_recv_expected(na_test.cls, na_test.ctx, closed_cb, &never, nbuf,
                                       sizeof(nbuf), NULL, na_test.peers[1], 0, 99, NULL);
    if (OPAL_SUCCESS == rc) {
        rc = opal_na_msg_recv_expected(na_test.cls, na_test.ctx, closed_cb, &answered, buf,
                                       sizeof(buf), NULL, na_test.peers[1], 0, 77, NULL);
    }
    if (OPAL_SUCCESS != rc) {
        na_test_fail("posting the receives: %s", opal_strerror(rc));
        return false;
    }
    bool ok = na_test_wait(&never.done.done, "the receive rank 1 never answers") &&
              na_test_wait(&answered.done.done, "rank 1's last message");
    for (int i = 0; ok && i < 100; ++i) {
        (void) opal_na_poll(na_test.cls, na_test.ctx, NULL);
        (void) opal_na_trigger(na_test.ctx, 0, NULL);
    }
    (void) opal_na_base_peer_gone_hook_set(na_test.cls, NULL, NULL);
    if (!ok) {
        return false;
    }
    if (OPAL_SUCCESS != answered.done.ret || 1 != answered.done.calls ||
        0 != memcmp(buf, last, sizeof(last))) {
        na_test_fail("the last message: %s, %d call(s), \"%.8s\"", opal_strerror(answered.done.ret),
                     answered.done.calls, buf);
        return false;
    }
    if (OPAL_ERR_PEER_FAILED != never.done.ret || 1 != never.done.calls || never.at < answered.at) {
        na_test_fail("the receive never answered: %s, %d call(s), at %d (the last message at %d)",
                     opal_strerror(never.done.ret), never.done.calls, never.at, answered.at);
        return false;
    }
    if (1 != closed_hook.calls || !closed_hook.finalized || !closed_hook.is_rank_1) {
        na_test_fail("the peer-gone hook: %d call(s), finalized %d, for rank 1 %d",
                     closed_hook.calls, closed_hook.finalized, closed_hook.is_rank_1);
        return false;
    }
    na_test_say("closed: the last message, then the other receive with %s, the hook once",
                opal_strerror_name(never.done.ret));
    return true;
}
