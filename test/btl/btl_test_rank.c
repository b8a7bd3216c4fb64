/*
 * The rank program of the btl test suite, run under mcarun with a btl
 * selection:
 *
 *   mcarun -np N --mca btl self,sm btl_test_rank CASE [ARGS]
 *
 * Every rank: orte_init, registers its tags, mca_btl_base_init, fences,
 * adds every rank of the job, prints which module reaches which peer
 *
 *   rank R: peer P: send over sm,ofi; rdma over sm
 *
 * fences again (no btl traffic is in flight yet), runs CASE (see the
 * table below), meets the others in a barrier that keeps progressing,
 * finalizes and prints "rank R: CASE ok". A check that fails prints
 * "rank R: FAILED: ..." and exits 1; a failed mca_btl_base_init exits 3,
 * a failed add_procs 4 (after the base said why).
 *
 * Environment: BTL_TEST_DEADLINE (seconds, default 100) bounds every
 * wait; OPAL_TEST_UNDER_VALGRIND scales the cases down.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/class/opal_list.h"
#include "opal/mca/btl/base/base.h"
#include "opal/runtime/opal_progress.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "orte/runtime/orte_init.h"
#include "test/btl/btl_test_rank.h"

static const btl_test_case_t cases[] = {
    {"sizes", btl_test_case_sizes,
     "every size from 0 to the peer module's max send size, checked, over several tags"},
    {"tags", btl_test_case_tags, "one message per user tag, each to its own callback"},
    {"order", btl_test_case_order, "many messages of mixed sizes per peer, in order"},
    {"sendi", btl_test_case_sendi,
     "immediate sends until busy while the receiver does not progress; nothing lost"},
    {"rdma", btl_test_case_rdma, "put and get at offsets in registered regions"},
    {"rdma-again", btl_test_case_rdma_again,
     "rdma three times, the regions unmapped and mapped again at the same addresses between "
     "rounds"},
    {"alltoall", btl_test_case_alltoall, "every rank sends to every rank, checked"},
    {"self", btl_test_case_self, "a rank sends to itself (np 1)"},
    {"killed", btl_test_case_killed,
     "the last rank dies mid-transfer; the others get the error callback"},
    {"unreaped", btl_test_case_unreaped,
     "the last rank dies idle when the test says (BTL_TEST_MARK_DIR/go) and stays a zombie; "
     "the others get the error callback and say so in BTL_TEST_MARK_DIR"},
    {"departed", btl_test_case_departed,
     "the last rank finalizes and exits without a word to anyone; the others hear it closed "
     "(finalized), never failed"},
    {"portdown", btl_test_case_portdown,
     "TRANSPORT COMMAND: one of two modules to the peer fails (COMMAND); its error callback "
     "names it, the other goes on"},
    {"linkdown", btl_test_case_linkdown,
     "idle|busy|none SECONDS CUT [RESTORE]: the only link to the peer on another host is cut "
     "(CUT); the peer is reported failed by time-out within SECONDS (idle: keepalive; busy: "
     "unacknowledged data), or with none, not at all, and the connection works again after "
     "RESTORE"},
    {NULL, NULL, NULL},
};

btl_test_t btl_test;

static uint64_t deadline_ns;

static void vsay(const char *prefix, const char *format, va_list ap)
    __attribute__((format(printf, 2, 0)));

static void vsay(const char *prefix, const char *format, va_list ap)
{
    char line[2048];
    int n = snprintf(line, sizeof(line), "rank %" PRIu32 ": %s", btl_test.rank, prefix);
    if (n < 0 || (size_t) n >= sizeof(line)) {
        return;
    }
    int m = vsnprintf(line + n, sizeof(line) - (size_t) n - 1, format, ap);
    size_t len = m < 0 ? (size_t) n : (size_t) n + (size_t) m;
    if (len > sizeof(line) - 2) {
        len = sizeof(line) - 2;
    }
    line[len++] = '\n';
    /* One write: lines of different ranks do not interleave. */
    if (write(STDOUT_FILENO, line, len) < 0) {
        btl_test.broken = true;
    }
}

void btl_test_say(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    vsay("", format, ap);
    va_end(ap);
}

void btl_test_fail(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    vsay("FAILED: ", format, ap);
    va_end(ap);
    btl_test.broken = true;
}

void btl_test_describe_peers(void)
{
    for (uint32_t r = 0; r < btl_test.size; ++r) {
        mca_btl_base_peer_t *peer = mca_btl_base_peer_get(r);
        if (r == btl_test.rank || NULL == peer) {
            continue;
        }
        char line[2048];
        mca_btl_base_mux_describe(peer, line, sizeof(line));
        btl_test_say("toward rank %" PRIu32 ": %s", r, line);
    }
}

bool btl_test_wait(bool (*done)(void *), void *arg, const char *what)
{
    unsigned idle = 0;
    for (uint64_t n = 0;; ++n) {
        if (done(arg)) {
            return true;
        }
        if (btl_test.broken) {
            return false;
        }
        if (btl_test.nfailed > 0 && !btl_test.expect_failures) {
            btl_test_fail("a peer failed while waiting for %s", what);
            return false;
        }
        if (opal_progress() > 0) {
            idle = 0;
        } else if (++idle > 64) {
            /* Oversubscribed: let the peer we wait for run. */
            sched_yield();
            idle = 0;
        }
        if (0 == n % 1024 && opal_timer_ns() > deadline_ns) {
            btl_test_fail("timed out waiting for %s", what);
            btl_test_describe_peers();
            return false;
        }
    }
}

bool btl_test_before_deadline(void)
{
    return opal_timer_ns() <= deadline_ns;
}

mca_btl_base_peer_t *btl_test_peer(uint32_t rank)
{
    return mca_btl_base_peer_get(rank);
}

const char *btl_test_module_name(const mca_btl_base_module_t *btl)
{
    return NULL != btl && NULL != btl->btl_component
               ? btl->btl_component->btl_version.mca_component_name
               : "?";
}

bool btl_test_send(uint32_t rank, mca_btl_base_tag_t tag, const void *header, size_t header_size,
                   const void *data, size_t size)
{
    mca_btl_base_peer_t *peer = btl_test_peer(rank);
    for (uint64_t n = 0;; ++n) {
        int rc = mca_btl_base_mux_send_hdr(peer, tag, header, header_size, data, size);
        if (OPAL_SUCCESS == rc) {
            return true;
        }
        if (OPAL_ERR_RESOURCE_BUSY != rc) {
            btl_test_fail("send of %zu bytes to rank %" PRIu32 " on tag %u: %s", header_size + size,
                          rank, (unsigned) tag, opal_strerror(rc));
            return false;
        }
        if (opal_progress() == 0 && 0 == n % 64) {
            sched_yield();
        }
        if (btl_test.failed[rank]) {
            btl_test_fail("send to rank %" PRIu32 ": the rank failed", rank);
            return false;
        }
        if (0 == n % 1024 && opal_timer_ns() > deadline_ns) {
            btl_test_fail("timed out sending to rank %" PRIu32 " (busy)", rank);
            return false;
        }
    }
}

/* ------------------------------------------------------ control messages */

typedef struct {
    opal_list_item_t super;
    btl_test_control_t msg;
} queued_t;
static OBJ_CLASS_INSTANCE(queued_t, opal_list_item_t, NULL, NULL);

static opal_list_t control_queue;
/* Barrier messages received per rank. */
static uint64_t *barriers_from;
static uint64_t barrier_epoch;

static void control_cb(struct mca_btl_base_module_t *btl,
                       const mca_btl_base_receive_descriptor_t *desc)
{
    btl_test_control_t msg;
    memset(&msg, 0, sizeof(msg));
    size_t len = btl_test_length(desc);
    size_t head = offsetof(btl_test_control_t, body);
    if (len < head || len > sizeof(msg)) {
        btl_test_fail("control message of %zu bytes", len);
        return;
    }
    btl_test_copy_out(desc, 0, &msg, len);
    if (msg.from >= btl_test.size || msg.length != len - head ||
        (NULL != desc->proc && desc->proc->proc_name.vpid != msg.from)) {
        btl_test_fail("malformed control message (type %" PRIu32 ", from %" PRIu32
                      ", length %" PRIu32 ")",
                      msg.type, msg.from, msg.length);
        return;
    }
    if (BTL_TEST_CTL_BARRIER == msg.type) {
        ++barriers_from[msg.from];
        return;
    }
    if (BTL_TEST_CTL_STREAM == msg.type || BTL_TEST_CTL_COUNT == msg.type) {
        btl_test_stream_control(&msg);
        return;
    }
    queued_t *q = OBJ_NEW(queued_t);
    if (NULL == q) {
        btl_test_fail("out of memory");
        return;
    }
    q->msg = msg;
    opal_list_append(&control_queue, &q->super);
}

bool btl_test_control_send(uint32_t rank, uint32_t type, const void *body, size_t length)
{
    if (length > BTL_TEST_CONTROL_MAX) {
        btl_test_fail("control message too long (%zu)", length);
        return false;
    }
    btl_test_control_t head = {.type = type, .from = btl_test.rank, .length = (uint32_t) length};
    return btl_test_send(rank, BTL_TEST_TAG_CONTROL, &head, offsetof(btl_test_control_t, body),
                         body, length);
}

typedef struct {
    uint32_t rank, type;
    btl_test_control_t *out;
} control_wait_t;

static bool control_arrived(void *arg)
{
    control_wait_t *w = arg;
    queued_t *q;
    OPAL_LIST_FOREACH (q, &control_queue, queued_t) {
        if (q->msg.from == w->rank && q->msg.type == w->type) {
            *w->out = q->msg;
            opal_list_remove_item(&control_queue, &q->super);
            OBJ_RELEASE(q);
            return true;
        }
    }
    return false;
}

bool btl_test_control_recv(uint32_t rank, uint32_t type, btl_test_control_t *out)
{
    control_wait_t w = {.rank = rank, .type = type, .out = out};
    char what[64];
    snprintf(what, sizeof(what), "control message %" PRIu32 " from rank %" PRIu32, type, rank);
    return btl_test_wait(control_arrived, &w, what);
}

static bool barrier_complete(void *arg)
{
    (void) arg;
    for (uint32_t r = 0; r < btl_test.size; ++r) {
        if (r != btl_test.rank && !btl_test.failed[r] && !btl_test.closed[r] &&
            barriers_from[r] < barrier_epoch) {
            return false;
        }
    }
    return true;
}

/* In a barrier, a peer found gone after its message for this barrier
 * came has simply finished first (the last barrier: it passed and
 * exited): its failure counts once the barrier is over, not while this
 * rank still waits for the others. */
static bool in_barrier;
static unsigned failures_after_barrier;

bool btl_test_barrier(void)
{
    ++barrier_epoch;
    in_barrier = true;
    bool ok = true;
    for (uint32_t r = 0; ok && r < btl_test.size; ++r) {
        if (r != btl_test.rank && !btl_test.failed[r] && !btl_test.closed[r] &&
            !btl_test_control_send(r, BTL_TEST_CTL_BARRIER, NULL, 0)) {
            ok = false;
        }
    }
    ok = ok && btl_test_wait(barrier_complete, NULL, "the barrier");
    in_barrier = false;
    btl_test.nfailed += failures_after_barrier;
    failures_after_barrier = 0;
    return ok;
}

/* ----------------------------------------------------- message contents */

void btl_test_fill(unsigned char *buf, uint32_t src, uint64_t seq, size_t size)
{
    for (size_t i = 0; i < size; ++i) {
        buf[i] = btl_test_pattern(src, seq, size, i);
    }
}

size_t btl_test_length(const mca_btl_base_receive_descriptor_t *desc)
{
    size_t len = 0;
    for (size_t s = 0; s < desc->des_segment_count; ++s) {
        len += (size_t) desc->des_segments[s].seg_len;
    }
    return len;
}

size_t btl_test_copy_out(const mca_btl_base_receive_descriptor_t *desc, size_t offset, void *dst,
                         size_t size)
{
    size_t done = 0, pos = 0;
    for (size_t s = 0; s < desc->des_segment_count && done < size; ++s) {
        const unsigned char *p = desc->des_segments[s].seg_addr;
        size_t len = (size_t) desc->des_segments[s].seg_len;
        if (offset < pos + len) {
            size_t from = offset > pos ? offset - pos : 0;
            size_t n = len - from < size - done ? len - from : size - done;
            memcpy((unsigned char *) dst + done, p + from, n);
            done += n;
            offset += n;
        }
        pos += len;
    }
    return done;
}

bool btl_test_check(const mca_btl_base_receive_descriptor_t *desc, size_t skip, uint32_t src,
                    uint64_t seq, size_t size, size_t *where)
{
    size_t pos = 0, i = 0;
    for (size_t s = 0; s < desc->des_segment_count; ++s) {
        const unsigned char *p = desc->des_segments[s].seg_addr;
        size_t len = (size_t) desc->des_segments[s].seg_len;
        for (size_t k = 0; k < len; ++k, ++pos) {
            if (pos < skip) {
                continue;
            }
            if (i >= size || p[k] != btl_test_pattern(src, seq, size, i)) {
                *where = i;
                return false;
            }
            ++i;
        }
    }
    *where = i;
    return i == size;
}

/* ---------------------------------------------------------------- main */

void btl_test_error_cb(struct mca_btl_base_module_t *btl, int32_t flags, const opal_proc_t *errproc,
                       const char *info)
{
    if (0 != (flags & MCA_BTL_ERROR_FLAGS_PEER_CLOSED)) {
        /* A peer that finalized: not a failure. */
        if (NULL != errproc && errproc->proc_name.vpid < btl_test.size) {
            btl_test.closed[errproc->proc_name.vpid] = true;
        }
        return;
    }
    if (NULL == errproc || errproc->proc_name.vpid >= btl_test.size) {
        btl_test_say("error callback from %s (flags 0x%x) without a peer: %s",
                     btl_test_module_name(btl), (unsigned) flags, NULL != info ? info : "");
        return;
    }
    uint32_t r = errproc->proc_name.vpid;
    if (!btl_test.failed[r]) {
        btl_test.failed[r] = true;
        if (in_barrier && barriers_from[r] >= barrier_epoch) {
            ++failures_after_barrier;
        } else {
            ++btl_test.nfailed;
        }
        btl_test_say("error callback: rank %" PRIu32 " failed (%s, flags 0x%x): %s", r,
                     btl_test_module_name(btl), (unsigned) flags, NULL != info ? info : "");
    }
}

static void print_reachability(void)
{
    for (uint32_t r = 0; r < btl_test.size; ++r) {
        mca_btl_base_peer_t *peer = btl_test_peer(r);
        char send[256] = "", rdma[64] = "none";
        size_t len = 0;
        for (int i = 0; i < peer->send_count && len < sizeof(send); ++i) {
            int n = snprintf(send + len, sizeof(send) - len, "%s%s", 0 == i ? "" : ",",
                             btl_test_module_name(peer->send[i].btl));
            len += n > 0 ? (size_t) n : 0;
        }
        if (peer->rdma_count > 0) {
            snprintf(rdma, sizeof(rdma), "%s", btl_test_module_name(peer->rdma[0].btl));
        }
        btl_test_say("peer %" PRIu32 ": send over %s; rdma over %s", r, send, rdma);
    }
}

static int register_tags(void)
{
    int rc = mca_btl_base_am_register(BTL_TEST_TAG_CONTROL, control_cb, NULL);
    if (OPAL_SUCCESS == rc) {
        rc = btl_test_stream_register();
    }
    if (OPAL_SUCCESS == rc) {
        rc = btl_test_tags_register();
    }
    if (OPAL_SUCCESS == rc) {
        rc = btl_test_killed_register();
    }
    if (OPAL_SUCCESS == rc) {
        rc = btl_test_portdown_register();
    }
    return rc;
}

static const btl_test_case_t *find_case(const char *name)
{
    for (const btl_test_case_t *c = cases; NULL != c->name; ++c) {
        if (0 == strcmp(c->name, name)) {
            return c;
        }
    }
    return NULL;
}

static void usage(void)
{
    fprintf(stderr, "usage: btl_test_rank CASE [ARGS]; cases:\n");
    for (const btl_test_case_t *c = cases; NULL != c->name; ++c) {
        fprintf(stderr, "  %-10s %s\n", c->name, c->description);
    }
}

int main(int argc, char **argv)
{
    const btl_test_case_t *test = argc >= 2 ? find_case(argv[1]) : NULL;
    if (NULL == test) {
        usage();
        return 2;
    }
    const char *v = getenv("OPAL_TEST_UNDER_VALGRIND");
    btl_test.slow = NULL != v && 0 != strcmp(v, "0");
    const char *d = getenv("BTL_TEST_DEADLINE");
    uint64_t seconds = NULL != d ? strtoull(d, NULL, 10) : 100;
    deadline_ns = opal_timer_ns() + seconds * UINT64_C(1000000000);

    if (OPAL_SUCCESS != orte_init(&argc, &argv)) {
        return 2;
    }
    const opal_proc_job_info_t *job = opal_proc_job_info();
    btl_test.rank = job->my_name.vpid;
    btl_test.size = job->size;
    btl_test.failed = calloc(job->size, sizeof(bool));
    btl_test.closed = calloc(job->size, sizeof(bool));
    barriers_from = calloc(job->size, sizeof(uint64_t));
    OBJ_CONSTRUCT(&control_queue, opal_list_t);
    int status = 0;
    int rc = NULL == btl_test.failed || NULL == btl_test.closed || NULL == barriers_from
                 ? OPAL_ERR_OUT_OF_RESOURCE
                 : register_tags();
    if (OPAL_SUCCESS == rc) {
        rc = mca_btl_base_init(false, false);
        if (OPAL_SUCCESS != rc) {
            btl_test_say("btl init failed: %s", opal_strerror(rc));
            status = 3;
        }
    }
    if (0 == status && OPAL_SUCCESS == rc) {
        (void) mca_btl_base_register_error_cb(btl_test_error_cb);
        /* Every component has published its address before anyone looks. */
        rc = opal_fence(true);
        if (OPAL_SUCCESS == rc) {
            rc = mca_btl_base_add_all_procs();
            if (OPAL_SUCCESS != rc) {
                btl_test_say("add_procs failed: %s", opal_strerror_name(rc));
                status = 4;
            }
        }
        if (0 == status && OPAL_SUCCESS == rc) {
            print_reachability();
            rc = opal_fence(false);
        }
        if (0 == status && OPAL_SUCCESS == rc) {
            bool ok = test->run(argc, argv);
            /* Nobody finalizes while a peer may still need it (but the
             * rank that leaves on purpose). */
            ok = (btl_test.leaving || btl_test_barrier()) && ok && !btl_test.broken;
            status = ok ? 0 : 1;
        }
        (void) mca_btl_base_finalize();
    }
    if (OPAL_SUCCESS != rc && 0 == status) {
        btl_test_fail("set-up failed: %s", opal_strerror(rc));
        status = 1;
    }
    OPAL_LIST_DESTRUCT(&control_queue);
    btl_test_stream_release();
    btl_test_tags_release();
    free(barriers_from);
    free(btl_test.failed);
    free(btl_test.closed);
    (void) orte_finalize();
    if (0 == status) {
        btl_test_say("%s ok", test->name);
    }
    return status;
}
