/*
 * The rank program of btl/sm's multi-process tests, started by mcarun:
 *
 *   btl_sm_rank alltoall [COUNT]   every rank sends COUNT messages of
 *                                  every size to every rank (itself too),
 *                                  each checked for order and content
 *   btl_sm_rank flood              rank 0 sends to rank 1 while rank 1
 *                                  does not progress: sm must say busy
 *                                  after a bounded number, then all arrive
 *   btl_sm_rank pingpong N SIZE    ranks 0 and 1 (prints a latency, for
 *                                  people, never for verdicts)
 *   btl_sm_rank rdma               get / put with offsets and handles
 *   btl_sm_rank bw SIZE N          rank 0 gets SIZE bytes N times (prints)
 *   btl_sm_rank split MODE SIZE N  rank 0 gets and puts rank 1's buffers of
 *                                  SIZE bytes N times, checked; rank 1
 *                                  waits in progress (MODE helped) or is
 *                                  stopped throughout (MODE stopped)
 *   btl_sm_rank closed N           rank 1 sends N (<= 40) messages and finalizes
 *                                  while rank 0 does not progress; rank 0
 *                                  then gets all N before one PEER_CLOSED
 *   btl_sm_rank closed N lossy     the same with more than fit: rank 1's
 *                                  finalize gives up on the rest (and says
 *                                  how many); rank 0 says how many came
 *   btl_sm_rank kill               the last rank dies mid-transfer
 *   btl_sm_rank fault KIND         the last rank scribbles (btl_sm_fault_inject)
 *   btl_sm_rank blocking N         rank 0 sleeps in opal_progress_wait
 *
 * Each rank prints "rank R <case> ok ..." when its part passed, or
 * "FAIL rank R: ..." and exits 1. A rank whose add_procs fails prints
 * "rank R add_procs: <error>" and exits 2.
 */
#include "opal/opal_config.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_progress.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "orte/runtime/orte_init.h"
#include "test/btl/btl_sm_rank.h"

#define DEADLINE_S 60.0

uint32_t sm_rank_me, sm_rank_size;
volatile uint64_t sm_rank_received[SM_RANK_MAX_PROCS];
volatile uint64_t sm_rank_bytes[SM_RANK_MAX_PROCS];
volatile uint32_t sm_rank_ctrl_count[SM_RANK_MAX_PROCS][8];
sm_rank_ctrl_t sm_rank_ctrl_last[SM_RANK_MAX_PROCS];
volatile bool sm_rank_failed[SM_RANK_MAX_PROCS];
volatile uint32_t sm_rank_errors;
volatile uint32_t sm_rank_closed[SM_RANK_MAX_PROCS];
/* Data messages from the peer when its PEER_CLOSED came. */
static volatile uint64_t received_at_close[SM_RANK_MAX_PROCS];

static uint8_t *send_buffer;
static size_t send_buffer_size;
static double start_time;

double sm_rank_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec - start_time;
}

void sm_rank_fail(const char *format, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, format);
    vsnprintf(text, sizeof(text), format, ap);
    va_end(ap);
    fprintf(stderr, "FAIL rank %" PRIu32 ": %s\n", sm_rank_me, text);
    fflush(stderr);
    exit(1);
}

static void data_cb(struct mca_btl_base_module_t *btl,
                    const mca_btl_base_receive_descriptor_t *desc)
{
    (void) btl;
    const mca_btl_base_segment_t *seg = &desc->des_segments[0];
    sm_rank_msg_t hdr;
    if (1 != desc->des_segment_count || seg->seg_len < sizeof(hdr)) {
        sm_rank_fail("data message of %" PRIu64 " bytes in %zu segments", seg->seg_len,
                     desc->des_segment_count);
    }
    memcpy(&hdr, seg->seg_addr, sizeof(hdr));
    uint32_t src = desc->proc->proc_name.vpid;
    if (hdr.src != src || src >= sm_rank_size) {
        sm_rank_fail("message from rank %u says it is from %u", src, hdr.src);
    }
    if (hdr.seq != sm_rank_received[src]) {
        sm_rank_fail("message %u from rank %u arrived when %" PRIu64 " was due", hdr.seq, src,
                     sm_rank_received[src]);
    }
    if (hdr.len != seg->seg_len - sizeof(hdr)) {
        sm_rank_fail("message %u from rank %u says %u bytes, carries %" PRIu64, hdr.seq, src,
                     hdr.len, seg->seg_len - sizeof(hdr));
    }
    const uint8_t *data = (const uint8_t *) seg->seg_addr + sizeof(hdr);
    for (size_t i = 0; i < hdr.len; ++i) {
        if (data[i] != sm_rank_pattern(src, hdr.seq, i)) {
            sm_rank_fail("message %u from rank %u (%u bytes): byte %zu is %u, not %u", hdr.seq, src,
                         hdr.len, i, data[i], sm_rank_pattern(src, hdr.seq, i));
        }
    }
    sm_rank_bytes[src] += hdr.len;
    sm_rank_received[src] = sm_rank_received[src] + 1;
}

static void ctrl_cb(struct mca_btl_base_module_t *btl,
                    const mca_btl_base_receive_descriptor_t *desc)
{
    (void) btl;
    const mca_btl_base_segment_t *seg = &desc->des_segments[0];
    sm_rank_ctrl_t ctrl;
    if (seg->seg_len != sizeof(ctrl)) {
        sm_rank_fail("control message of %" PRIu64 " bytes", seg->seg_len);
    }
    memcpy(&ctrl, seg->seg_addr, sizeof(ctrl));
    uint32_t src = desc->proc->proc_name.vpid;
    if (ctrl.src != src || ctrl.kind >= 8) {
        sm_rank_fail("control message from rank %u: kind %u source %u", src, ctrl.kind, ctrl.src);
    }
    sm_rank_ctrl_last[src] = ctrl;
    sm_rank_ctrl_count[src][ctrl.kind] = sm_rank_ctrl_count[src][ctrl.kind] + 1;
}

static void error_cb(struct mca_btl_base_module_t *btl, int32_t flags, const opal_proc_t *errproc,
                     const char *info)
{
    (void) btl;
    int peer = NULL != errproc ? (int) errproc->proc_name.vpid : -1;
    if (0 != (flags & MCA_BTL_ERROR_FLAGS_PEER_CLOSED)) {
        /* Not a failure: counted apart (the closed case checks it). */
        if (peer >= 0 && peer < SM_RANK_MAX_PROCS) {
            sm_rank_closed[peer] = sm_rank_closed[peer] + 1;
            received_at_close[peer] = sm_rank_received[peer];
        }
        return;
    }
    printf("rank %u: error callback: flags 0x%x peer %d: %s\n", sm_rank_me, (unsigned) flags, peer,
           info);
    fflush(stdout);
    if (peer >= 0 && peer < SM_RANK_MAX_PROCS) {
        sm_rank_failed[peer] = true;
    }
    sm_rank_errors = sm_rank_errors + 1;
}

mca_btl_base_module_t *sm_rank_btl(uint32_t dst, struct mca_btl_base_endpoint_t **endpoint)
{
    mca_btl_base_peer_t *peer = mca_btl_base_peer_get(dst);
    if (NULL == peer || 0 == peer->send_count) {
        return NULL;
    }
    if (NULL != endpoint) {
        *endpoint = peer->send[0].endpoint;
    }
    return peer->send[0].btl;
}

bool sm_rank_btl_is(const mca_btl_base_module_t *btl, const char *name)
{
    return NULL != btl && 0 == strcmp(btl->btl_component->btl_version.mca_component_name, name);
}

static int send_retry(uint32_t dst, mca_btl_base_tag_t tag, const void *data, size_t size)
{
    double deadline = sm_rank_now() + DEADLINE_S;
    for (;;) {
        int rc = mca_btl_base_mux_send_copy(mca_btl_base_peer_get(dst), tag, data, size);
        if (OPAL_ERR_RESOURCE_BUSY != rc) {
            return rc;
        }
        opal_progress();
        if (sm_rank_now() > deadline) {
            sm_rank_fail("send of %zu bytes to rank %u busy for %.0f s", size, dst, DEADLINE_S);
        }
    }
}

int sm_rank_send_data(uint32_t dst, uint32_t seq, size_t len)
{
    if (sizeof(sm_rank_msg_t) + len > send_buffer_size) {
        sm_rank_fail("message of %zu bytes is larger than the test's buffer", len);
    }
    sm_rank_msg_t hdr = {.src = sm_rank_me, .seq = seq, .len = (uint32_t) len, .reserved = 0};
    memcpy(send_buffer, &hdr, sizeof(hdr));
    for (size_t i = 0; i < len; ++i) {
        send_buffer[sizeof(hdr) + i] = sm_rank_pattern(sm_rank_me, seq, i);
    }
    return send_retry(dst, SM_RANK_TAG_DATA, send_buffer, sizeof(hdr) + len);
}

int sm_rank_send_ctrl(uint32_t dst, const sm_rank_ctrl_t *ctrl)
{
    return send_retry(dst, SM_RANK_TAG_CTRL, ctrl, sizeof(*ctrl));
}

static void barrier_sent(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                         struct mca_btl_base_descriptor_t *des, int status)
{
    (void) btl;
    (void) ep;
    volatile uint32_t *done = des->des_cbdata;
    *done = OPAL_SUCCESS == status ? 1 : 2;
}

void sm_rank_barrier(void)
{
    static uint32_t rounds;
    ++rounds;
    const sm_rank_ctrl_t ctrl = {.kind = SM_CTRL_BARRIER, .src = sm_rank_me};
    volatile uint32_t done[SM_RANK_MAX_PROCS] = {0};
    mca_btl_base_descriptor_t *sent[SM_RANK_MAX_PROCS] = {NULL};
    /* Sent with a completion, which the module gives once the peer has
     * taken the message: then all this rank sent it before is out too. */
    for (uint32_t r = 0; r < sm_rank_size; ++r) {
        if (r == sm_rank_me) {
            continue;
        }
        struct mca_btl_base_endpoint_t *ep = NULL;
        mca_btl_base_module_t *btl = sm_rank_btl(r, &ep);
        if (NULL == btl) {
            sm_rank_fail("barrier: no module reaches rank %u", r);
        }
        double deadline = sm_rank_now() + DEADLINE_S;
        for (;;) {
            mca_btl_base_descriptor_t *des = btl->btl_alloc(btl, ep, MCA_BTL_NO_ORDER, sizeof(ctrl),
                                                            MCA_BTL_DES_SEND_ALWAYS_CALLBACK);
            int rc = OPAL_ERR_RESOURCE_BUSY;
            if (NULL != des) {
                memcpy(des->des_segments[0].seg_addr, &ctrl, sizeof(ctrl));
                des->des_segments[0].seg_len = sizeof(ctrl);
                des->des_cbfunc = barrier_sent;
                des->des_cbdata = (void *) &done[r];
                rc = btl->btl_send(btl, ep, des, SM_RANK_TAG_CTRL);
                if (rc < 0) {
                    (void) btl->btl_free(btl, des);
                } else {
                    sent[r] = des;
                    if (1 == rc && 0 == done[r]) {
                        done[r] = 1;
                    }
                }
            }
            if (OPAL_ERR_RESOURCE_BUSY != rc) {
                if (rc < 0) {
                    sm_rank_fail("barrier message to rank %u: %s", r, opal_strerror(rc));
                }
                break;
            }
            opal_progress();
            if (sm_rank_now() > deadline) {
                sm_rank_fail("barrier message to rank %u busy for %.0f s", r, DEADLINE_S);
            }
        }
    }
    for (uint32_t r = 0; r < sm_rank_size; ++r) {
        if (r == sm_rank_me) {
            continue;
        }
        sm_rank_wait32(&done[r], 1, "barrier message taken");
        if (1 != done[r]) {
            sm_rank_fail("barrier message to rank %u failed", r);
        }
        mca_btl_base_module_t *btl = sm_rank_btl(r, NULL);
        (void) btl->btl_free(btl, sent[r]);
        sm_rank_wait32(&sm_rank_ctrl_count[r][SM_CTRL_BARRIER], rounds, "barrier");
    }
}

void sm_rank_wait(volatile uint64_t *counter, uint64_t target, const char *what)
{
    double deadline = sm_rank_now() + DEADLINE_S;
    while (*counter < target) {
        opal_progress();
        if (sm_rank_now() > deadline) {
            sm_rank_fail("%s: %" PRIu64 " of %" PRIu64 " after %.0f s", what, *counter, target,
                         DEADLINE_S);
        }
    }
}

void sm_rank_wait32(volatile uint32_t *counter, uint32_t target, const char *what)
{
    double deadline = sm_rank_now() + DEADLINE_S;
    while (*counter < target) {
        opal_progress();
        if (sm_rank_now() > deadline) {
            sm_rank_fail("%s: %u of %u after %.0f s", what, *counter, target, DEADLINE_S);
        }
    }
}

int sm_rank_shm_leftovers(void)
{
    const char *prefix = getenv("OPAL_ORTE_SHM_PREFIX");
    if (NULL == prefix) {
        return -1;
    }
    char pattern[128];
    snprintf(pattern, sizeof(pattern), "%sbtl_sm.", prefix);
    int count = 0;
    DIR *dir = opendir("/dev/shm");
    if (NULL == dir) {
        return -1;
    }
    struct dirent *entry;
    while (NULL != (entry = readdir(dir))) {
        if (0 == strncmp(entry->d_name, pattern, strlen(pattern))) {
            ++count;
        }
    }
    closedir(dir);
    return count;
}

static void case_alltoall(uint32_t count)
{
    static const size_t sizes[] = {0,    1,     7,     8,     63,    64,     65,      255,  256,
                                   1000, 1024,  1025,  2047,  3000,  4080,   4096,    4097, 8191,
                                   8192, 16384, 30000, 32752, 65536, 131072, 1u << 20};
    const size_t nsizes = sizeof(sizes) / sizeof(sizes[0]);
    uint64_t sent = 0;
    for (uint32_t seq = 0; seq < count; ++seq) {
        for (uint32_t k = 0; k < sm_rank_size; ++k) {
            uint32_t dst = (sm_rank_me + k) % sm_rank_size;
            mca_btl_base_module_t *btl = sm_rank_btl(dst, NULL);
            if (NULL == btl) {
                sm_rank_fail("no module reaches rank %u", dst);
            }
            size_t len = sizes[(seq + dst) % nsizes];
            size_t max = btl->btl_max_send_size - sizeof(sm_rank_msg_t);
            int rc = sm_rank_send_data(dst, seq, len > max ? max : len);
            if (OPAL_SUCCESS != rc) {
                sm_rank_fail("send %u to rank %u: %s", seq, dst, opal_strerror(rc));
            }
            ++sent;
            /* Progress now and then, as a real program would. */
            if (0 == (sent & 7)) {
                opal_progress();
            }
        }
    }
    uint64_t total = 0, bytes = 0;
    for (uint32_t src = 0; src < sm_rank_size; ++src) {
        sm_rank_wait(&sm_rank_received[src], count, "messages received");
        total += sm_rank_received[src];
        bytes += sm_rank_bytes[src];
    }
    sm_rank_barrier();
    int rc = opal_fence(false);
    if (OPAL_SUCCESS != rc) {
        sm_rank_fail("fence: %s", opal_strerror(rc));
    }
    mca_btl_base_module_t *btl = sm_rank_btl((sm_rank_me + 1) % sm_rank_size, NULL);
    printf("rank %u alltoall ok: %" PRIu64 " messages, %" PRIu64 " bytes received; module %s; "
           "shm leftovers %d\n",
           sm_rank_me, total, bytes, btl->btl_component->btl_version.mca_component_name,
           sm_rank_shm_leftovers());
}

static void case_flood(void)
{
    const uint32_t total = 5000;
    if (sm_rank_size < 2 || sm_rank_me > 1) {
        printf("rank %u flood ok: not taking part\n", sm_rank_me);
        return;
    }
    if (1 == sm_rank_me) {
        /* Sits in the fence, not progressing, while rank 0 floods. */
        if (OPAL_SUCCESS != opal_fence(false)) {
            sm_rank_fail("fence");
        }
        sm_rank_wait(&sm_rank_received[0], total, "flood messages");
        printf("rank 1 flood ok: %u messages in order\n", total);
        return;
    }
    struct mca_btl_base_endpoint_t *ep;
    mca_btl_base_module_t *btl = sm_rank_btl(1, &ep);
    if (!sm_rank_btl_is(btl, "sm")) {
        sm_rank_fail("rank 1 is not reached through sm");
    }
    uint32_t seq = 0;
    int rc;
    do {
        sm_rank_msg_t hdr = {.src = 0, .seq = seq, .len = 0, .reserved = 0};
        rc = btl->btl_sendi(btl, ep, &hdr, sizeof(hdr), NULL, 0, MCA_BTL_NO_ORDER,
                            MCA_BTL_DES_FLAGS_BTL_OWNERSHIP, SM_RANK_TAG_DATA, NULL);
        if (OPAL_SUCCESS == rc) {
            ++seq;
        }
    } while (OPAL_SUCCESS == rc && seq < total);
    if (OPAL_ERR_RESOURCE_BUSY != rc) {
        sm_rank_fail("sendi to a receiver that does not progress: %s after %u messages",
                     opal_strerror(rc), seq);
    }
    uint32_t busy_after = seq;
    /* Descriptors are bounded too (btl_sm_frags_per_peer). */
    mca_btl_base_descriptor_t *held[4096];
    uint32_t nheld = 0;
    while (nheld < 4096 &&
           NULL != (held[nheld] = btl->btl_alloc(btl, ep, MCA_BTL_NO_ORDER, 64,
                                                 MCA_BTL_DES_FLAGS_BTL_OWNERSHIP))) {
        ++nheld;
    }
    if (4096 == nheld) {
        sm_rank_fail("4096 descriptors for one peer: no bound");
    }
    for (uint32_t i = 0; i < nheld; ++i) {
        btl->btl_free(btl, held[i]);
    }
    if (OPAL_SUCCESS != opal_fence(false)) {
        sm_rank_fail("fence");
    }
    for (; seq < total; ++seq) {
        if (OPAL_SUCCESS != (rc = sm_rank_send_data(1, seq, 0))) {
            sm_rank_fail("send %u: %s", seq, opal_strerror(rc));
        }
    }
    printf("rank 0 flood ok: busy after %u messages, %u descriptors at most\n", busy_after, nheld);
}

static volatile uint64_t pongs;
static void case_pingpong(int iters, size_t size)
{
    if (sm_rank_me > 1) {
        return;
    }
    uint32_t peer = 1 - sm_rank_me;
    int warm = iters / 10 + 10;
    double t0 = 0;
    for (int i = 0; i < iters + warm; ++i) {
        if (i == warm) {
            t0 = sm_rank_now();
        }
        if (0 == sm_rank_me) {
            sm_rank_send_data(peer, (uint32_t) i, size);
            sm_rank_wait(&sm_rank_received[peer], (uint64_t) i + 1, "pong");
        } else {
            sm_rank_wait(&sm_rank_received[peer], (uint64_t) i + 1, "ping");
            sm_rank_send_data(peer, (uint32_t) i, size);
        }
    }
    double t = sm_rank_now() - t0;
    if (0 == sm_rank_me) {
        printf("pingpong %zu bytes: %.3f us\n", size, t * 1e6 / iters / 2);
    }
    (void) pongs;
}

/* Rank 1 sends n messages (few and small enough to fit in the FIFO and
 * the fast box: nobody reads them yet), finalizes its BTLs, and says so
 * through a file (rank 0 must not progress meanwhile, so no message can
 * say it);
 * rank 0 then progresses: every message arrives, and then one
 * PEER_CLOSED, and sends to rank 1 fail. */
static void case_closed(uint32_t n, bool lossy)
{
    if (2 != sm_rank_size) {
        sm_rank_fail("the closed case needs 2 ranks");
    }
    char flag[128];
    if (1 == sm_rank_me) {
        sm_rank_wait32(&sm_rank_ctrl_count[0][SM_CTRL_PING], 1, "ping");
        snprintf(flag, sizeof(flag), "/tmp/btl_sm_closed.%" PRIu64, sm_rank_ctrl_last[0].value);
        for (uint32_t i = 0; i < n; ++i) {
            int rc = sm_rank_send_data(0, i, (i * 37u) % 64u);
            if (OPAL_SUCCESS != rc) {
                sm_rank_fail("message %u to rank 0: %s", i, opal_strerror(rc));
            }
        }
        if (OPAL_SUCCESS != mca_btl_base_finalize()) {
            sm_rank_fail("finalize");
        }
        FILE *f = fopen(flag, "w");
        if (NULL == f) {
            sm_rank_fail("cannot create %s", flag);
        }
        fclose(f);
        printf("rank 1 closed ok: %u sent, finalized\n", n);
        return;
    }
    snprintf(flag, sizeof(flag), "/tmp/btl_sm_closed.%d", (int) getpid());
    unlink(flag);
    const sm_rank_ctrl_t ping = {.kind = SM_CTRL_PING, .src = 0, .value = (uint64_t) getpid()};
    if (OPAL_SUCCESS != sm_rank_send_ctrl(1, &ping)) {
        sm_rank_fail("sending ping");
    }
    double deadline = sm_rank_now() + DEADLINE_S;
    while (0 != access(flag, F_OK)) {
        if (sm_rank_now() > deadline) {
            sm_rank_fail("rank 1 did not finalize within %.0f s", DEADLINE_S);
        }
        usleep(1000);
    }
    unlink(flag);
    sm_rank_wait32(&sm_rank_closed[1], 1, "rank 1's PEER_CLOSED");
    for (int i = 0; i < 200; ++i) {
        opal_progress();
    }
    if (lossy && received_at_close[1] == sm_rank_received[1] && sm_rank_received[1] < n &&
        1 == sm_rank_closed[1] && 0 == sm_rank_errors) {
        printf("rank 0 closed: %" PRIu64 " of %u messages came, then PEER_CLOSED once\n",
               sm_rank_received[1], n);
        return;
    }
    if (lossy || n != received_at_close[1] || n != sm_rank_received[1] || 1 != sm_rank_closed[1] ||
        0 != sm_rank_errors) {
        sm_rank_fail("closed: %" PRIu64 " of %u messages before PEER_CLOSED, %" PRIu64
                     " in all, %u PEER_CLOSED, %u errors",
                     received_at_close[1], n, sm_rank_received[1], sm_rank_closed[1],
                     sm_rank_errors);
    }
    int rc = sm_rank_send_data(1, 0, 8);
    if (OPAL_SUCCESS == rc) {
        sm_rank_fail("a send to rank 1 after its PEER_CLOSED succeeded");
    }
    printf("rank 0 closed ok: %u messages, then PEER_CLOSED once; a send after: %s\n", n,
           opal_strerror(rc));
}

int main(int argc, char **argv)
{
    start_time = 0;
    start_time = sm_rank_now();
    if (argc < 2) {
        fprintf(stderr, "usage: btl_sm_rank <case> [arguments]\n");
        return 2;
    }
    const char *name = argv[1];
    if (0 == strcmp(name, "fault") && argc > 2) {
        /* The last rank scribbles: set before the variables are read. */
        const char *rank = getenv("OPAL_ORTE_RANK"), *size = getenv("OPAL_ORTE_SIZE");
        if (NULL != rank && NULL != size && atoi(rank) == atoi(size) - 1) {
            setenv("OPAL_MCA_btl_sm_fault_inject", argv[2], 1);
        }
    }
    int rc = orte_init(&argc, &argv);
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "orte_init: %s\n", opal_strerror(rc));
        return 1;
    }
    const opal_proc_job_info_t *job = opal_proc_job_info();
    sm_rank_me = job->my_name.vpid;
    sm_rank_size = job->size;
    if (sm_rank_size > SM_RANK_MAX_PROCS) {
        sm_rank_fail("at most %d ranks", SM_RANK_MAX_PROCS);
    }
    if (OPAL_SUCCESS != mca_btl_base_am_register(SM_RANK_TAG_DATA, data_cb, NULL) ||
        OPAL_SUCCESS != mca_btl_base_am_register(SM_RANK_TAG_CTRL, ctrl_cb, NULL)) {
        sm_rank_fail("am_register");
    }
    if (OPAL_SUCCESS != (rc = mca_btl_base_init(false, false))) {
        sm_rank_fail("mca_btl_base_init: %s", opal_strerror(rc));
    }
    mca_btl_base_register_error_cb(error_cb);
    if (OPAL_SUCCESS != (rc = mca_btl_base_add_all_procs())) {
        printf("rank %u add_procs: %s\n", sm_rank_me, opal_strerror(rc));
        fflush(stdout);
        mca_btl_base_finalize();
        orte_finalize();
        return 2;
    }
    send_buffer_size = 2u << 20;
    send_buffer = malloc(send_buffer_size);
    if (NULL == send_buffer) {
        sm_rank_fail("out of memory");
    }

    if (0 == strcmp(name, "alltoall")) {
        case_alltoall(argc > 2 ? (uint32_t) atoi(argv[2]) : 50);
    } else if (0 == strcmp(name, "flood")) {
        case_flood();
    } else if (0 == strcmp(name, "pingpong") && argc > 3) {
        case_pingpong(atoi(argv[2]), (size_t) atol(argv[3]));
    } else if (0 == strcmp(name, "rdma")) {
        sm_rank_case_rdma();
    } else if (0 == strcmp(name, "gone")) {
        sm_rank_case_gone();
    } else if (0 == strcmp(name, "bw") && argc > 3) {
        sm_rank_case_bw((size_t) atol(argv[2]), atoi(argv[3]));
    } else if (0 == strcmp(name, "split") && argc > 4) {
        sm_rank_case_split(argv[2], (size_t) atol(argv[3]), atoi(argv[4]));
    } else if (0 == strcmp(name, "closed") && argc > 2) {
        case_closed((uint32_t) atoi(argv[2]), argc > 3 && 0 == strcmp(argv[3], "lossy"));
    } else if (0 == strcmp(name, "kill")) {
        sm_rank_case_kill();
    } else if (0 == strcmp(name, "fault") && argc > 2) {
        sm_rank_case_fault(argv[2]);
    } else if (0 == strcmp(name, "blocking") && argc > 2) {
        sm_rank_case_blocking(atoi(argv[2]));
    } else {
        sm_rank_fail("unknown case %s", name);
    }
    fflush(stdout);
    free(send_buffer);
    mca_btl_base_finalize();
    orte_finalize();
    return 0;
}
