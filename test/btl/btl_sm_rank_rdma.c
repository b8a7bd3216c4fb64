/*
 * btl_sm_rank: put / get between neighbours (rank r reads and writes
 * rank r+1's registered buffers), large ones shared with the peer (its
 * progress copies slices of them), and a get bandwidth loop for people.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/runtime/opal_progress.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "test/btl/btl_sm_rank.h"

#define READ_SIZE  ((size_t) 4 << 20)
#define WRITE_SIZE ((size_t) 1 << 20)

static volatile uint64_t completions;
static volatile uint64_t failures;
static volatile int last_status;

static void rdma_cb(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, mca_btl_base_registration_handle_t *local_handle,
                    void *context, void *cbdata, int status)
{
    (void) btl;
    (void) endpoint;
    (void) local_address;
    (void) local_handle;
    (void) context;
    (void) cbdata;
    last_status = status;
    if (OPAL_SUCCESS != status) {
        failures = failures + 1;
    }
    completions = completions + 1;
}

static uint8_t read_pattern(uint32_t owner, size_t i)
{
    return (uint8_t) (owner * 13u + i * 3u + (i >> 10));
}

static uint8_t write_pattern(uint32_t writer, size_t i)
{
    return (uint8_t) (writer * 17u + i * 5u + 1u);
}

static mca_btl_base_module_t *rdma_btl(uint32_t dst, struct mca_btl_base_endpoint_t **ep)
{
    mca_btl_base_peer_t *peer = mca_btl_base_peer_get(dst);
    if (NULL == peer || 0 == peer->rdma_count) {
        return NULL;
    }
    *ep = peer->rdma[0].endpoint;
    return peer->rdma[0].btl;
}

/* One operation, waited for; returns its status. With watch set
 * (a byte of a get's local buffer the peer's data changes), first wait,
 * without progressing, up to 5 s for that byte to change: a peer that
 * shares the transfer writes it meanwhile. *watch is cleared when it
 * did and when the wait gave up, so the wait happens at most once. */
static int rdma_op_watched(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep, bool get,
                           void *local, uint64_t remote, mca_btl_base_registration_handle_t *lh,
                           mca_btl_base_registration_handle_t *rh, size_t size,
                           const volatile uint8_t **watch)
{
    uint64_t target = completions + 1;
    int rc;
    do {
        rc = get ? btl->btl_get(btl, ep, local, remote, lh, rh, size, 0, MCA_BTL_NO_ORDER, rdma_cb,
                                NULL, NULL)
                 : btl->btl_put(btl, ep, local, remote, lh, rh, size, 0, MCA_BTL_NO_ORDER, rdma_cb,
                                NULL, NULL);
        if (OPAL_ERR_RESOURCE_BUSY == rc) {
            opal_progress();
        }
    } while (OPAL_ERR_RESOURCE_BUSY == rc);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if (NULL != watch && NULL != *watch) {
        const uint8_t before = **watch;
        const double deadline = sm_rank_now() + 5.0;
        while (before == **watch && completions < target && sm_rank_now() < deadline) {
            sched_yield();
        }
        *watch = NULL;
    }
    sm_rank_wait(&completions, target, get ? "get completion" : "put completion");
    return last_status;
}

static int rdma_op(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep, bool get,
                   void *local, uint64_t remote, mca_btl_base_registration_handle_t *lh,
                   mca_btl_base_registration_handle_t *rh, size_t size)
{
    return rdma_op_watched(btl, ep, get, local, remote, lh, rh, size, NULL);
}

void sm_rank_case_rdma(void)
{
    const uint32_t me = sm_rank_me, n = sm_rank_size;
    const uint32_t target = (me + 1) % n, source = (me + n - 1) % n;
    struct mca_btl_base_endpoint_t *ep = NULL;
    mca_btl_base_module_t *btl = rdma_btl(target, &ep);
    if (n < 2 || NULL == btl) {
        sm_rank_fail("no put/get module reaches rank %u", target);
    }
    if (btl->btl_registration_handle_size > SM_RANK_HANDLE_MAX) {
        sm_rank_fail("registration handles of %zu bytes", btl->btl_registration_handle_size);
    }
    uint8_t *readable = malloc(READ_SIZE), *writable = calloc(1, WRITE_SIZE);
    uint8_t *local = malloc(READ_SIZE + 64);
    if (NULL == readable || NULL == writable || NULL == local) {
        sm_rank_fail("out of memory");
    }
    for (size_t i = 0; i < READ_SIZE; ++i) {
        readable[i] = read_pattern(me, i);
    }
    mca_btl_base_registration_handle_t *rh =
        btl->btl_register_mem(btl, NULL, readable, READ_SIZE, MCA_BTL_REG_FLAG_REMOTE_READ);
    mca_btl_base_registration_handle_t *wh =
        btl->btl_register_mem(btl, NULL, writable, WRITE_SIZE, MCA_BTL_REG_FLAG_REMOTE_WRITE);
    mca_btl_base_registration_handle_t *lh =
        btl->btl_register_mem(btl, NULL, local, READ_SIZE + 64,
                              MCA_BTL_REG_FLAG_LOCAL_WRITE | MCA_BTL_REG_FLAG_LOCAL_READ);
    if (NULL == rh || NULL == wh || NULL == lh) {
        sm_rank_fail("register_mem");
    }
    sm_rank_ctrl_t ctrl = {.kind = SM_CTRL_HANDLES,
                           .src = me,
                           .read_address = (uint64_t) (uintptr_t) readable,
                           .write_address = (uint64_t) (uintptr_t) writable};
    memcpy(ctrl.read_handle, rh, btl->btl_registration_handle_size);
    memcpy(ctrl.write_handle, wh, btl->btl_registration_handle_size);
    if (OPAL_SUCCESS != sm_rank_send_ctrl(source, &ctrl)) {
        sm_rank_fail("sending handles");
    }
    sm_rank_wait32(&sm_rank_ctrl_count[target][SM_CTRL_HANDLES], 1, "handles");
    const sm_rank_ctrl_t *theirs = &sm_rank_ctrl_last[target];
    uint8_t their_read[SM_RANK_HANDLE_MAX], their_write[SM_RANK_HANDLE_MAX];
    memcpy(their_read, theirs->read_handle, sizeof(their_read));
    memcpy(their_write, theirs->write_handle, sizeof(their_write));
    mca_btl_base_registration_handle_t *trh = (void *) their_read, *twh = (void *) their_write;
    const uint64_t raddr = theirs->read_address, waddr = theirs->write_address;

    /* Gets at offsets and sizes, including empty and whole. */
    static const size_t gets[][3] = {{0, 0, 0},        {0, 1, 3},        {1, 7, 0},
                                     {100, 4096, 1},   {4095, 65537, 5}, {123457, 300001, 7},
                                     {0, READ_SIZE, 0}};
    for (size_t g = 0; g < sizeof(gets) / sizeof(gets[0]); ++g) {
        size_t off = gets[g][0], len = gets[g][1], loff = gets[g][2];
        memset(local, 0xee, READ_SIZE + 64);
        int rc = rdma_op(btl, ep, true, local + loff, raddr + off, lh, trh, len);
        if (OPAL_SUCCESS != rc) {
            sm_rank_fail("get of %zu bytes at %zu from rank %u: %s", len, off, target,
                         opal_strerror(rc));
        }
        for (size_t i = 0; i < len; ++i) {
            if (local[loff + i] != read_pattern(target, off + i)) {
                sm_rank_fail("get of %zu bytes at %zu: byte %zu wrong", len, off, i);
            }
        }
        if (0xee != local[loff + len] || (loff > 0 && 0xee != local[loff - 1])) {
            sm_rank_fail("get of %zu bytes wrote outside its buffer", len);
        }
    }
    /* Outside the region, or against the handle's permissions: refused. */
    int rc = btl->btl_get(btl, ep, local, raddr + READ_SIZE - 10, lh, trh, 100, 0, MCA_BTL_NO_ORDER,
                          rdma_cb, NULL, NULL);
    if (OPAL_ERR_BAD_PARAM != rc) {
        sm_rank_fail("get past the region's end: %s, not Bad parameter", opal_strerror(rc));
    }
    rc = btl->btl_get(btl, ep, local, waddr, lh, twh, 16, 0, MCA_BTL_NO_ORDER, rdma_cb, NULL, NULL);
    if (OPAL_ERR_BAD_PARAM != rc) {
        sm_rank_fail("get from a write-only region: %s, not Bad parameter", opal_strerror(rc));
    }
    /* Many at once below btl_sm_split_min, none waited for before the
     * last is posted: gathered into CMA calls of up to btl_sm_cma_batch
     * (a full batch goes out inside the next call, a change of direction
     * too), each completed once with its own bytes. */
    enum { MANY = 150, MANY_MAX = 20000, MANY_PUT = 1000, MANY_PUT_AT = 400000 };
    size_t many_off[MANY], many_at[MANY];
    uint64_t first = completions, failed = failures;
    memset(local, 0xee, READ_SIZE + 64);
    for (size_t k = 0, at = 0; k < MANY; ++k) {
        size_t len = (k * 7919) % MANY_MAX;
        many_off[k] = (k * 104729) % (READ_SIZE - MANY_MAX);
        many_at[k] = at;
        rc = btl->btl_get(btl, ep, local + at, raddr + many_off[k], lh, trh, len, 0,
                          MCA_BTL_NO_ORDER, rdma_cb, NULL, NULL);
        if (OPAL_SUCCESS != rc) {
            sm_rank_fail("get %zu of %d in flight: %s", k, MANY, opal_strerror(rc));
        }
        at += len;
    }
    sm_rank_wait(&completions, first + MANY, "gets in flight");
    if (failures != failed || completions != first + MANY) {
        sm_rank_fail("%" PRIu64 " of %d gets in flight failed, %" PRIu64 " completions",
                     (uint64_t) (failures - failed), MANY, (uint64_t) (completions - first));
    }
    for (size_t k = 0; k < MANY; ++k) {
        size_t len = (k * 7919) % MANY_MAX;
        for (size_t i = 0; i < len; ++i) {
            if (local[many_at[k] + i] != read_pattern(target, many_off[k] + i)) {
                sm_rank_fail("get %zu of %d in flight (%zu bytes at %zu): byte %zu wrong", k, MANY,
                             len, many_off[k], i);
            }
        }
    }
    first = completions;
    for (size_t k = 0; k < MANY; ++k) {
        size_t len = (k * 37) % MANY_PUT, off = MANY_PUT_AT + k * MANY_PUT;
        uint8_t *src = local + k * MANY_PUT;
        for (size_t i = 0; i < len; ++i) {
            src[i] = write_pattern(me, off + i);
        }
        rc = btl->btl_put(btl, ep, src, waddr + off, lh, twh, len, 0, MCA_BTL_NO_ORDER, rdma_cb,
                          NULL, NULL);
        if (OPAL_SUCCESS == rc && MANY / 2 == k) {
            /* A get between the puts. */
            rc = btl->btl_get(btl, ep, local + READ_SIZE - 4096, raddr + 77, lh, trh, 4096, 0,
                              MCA_BTL_NO_ORDER, rdma_cb, NULL, NULL);
        }
        if (OPAL_SUCCESS != rc) {
            sm_rank_fail("put %zu of %d in flight: %s", k, MANY, opal_strerror(rc));
        }
    }
    sm_rank_wait(&completions, first + MANY + 1, "puts in flight");
    if (failures != failed || completions != first + MANY + 1) {
        sm_rank_fail("puts in flight: %" PRIu64 " failed, %" PRIu64 " completions of %d",
                     (uint64_t) (failures - failed), (uint64_t) (completions - first), MANY + 1);
    }
    for (size_t i = 0; i < 4096; ++i) {
        if (local[READ_SIZE - 4096 + i] != read_pattern(target, 77 + i)) {
            sm_rank_fail("the get between puts in flight: byte %zu wrong", i);
        }
    }
    /* Puts into the target's writable buffer, then tell it. */
    static const size_t puts[][2] = {{0, 1000}, {5000, 65539}, {WRITE_SIZE - 3, 3}, {200000, 0}};
    for (size_t p = 0; p < sizeof(puts) / sizeof(puts[0]); ++p) {
        size_t off = puts[p][0], len = puts[p][1];
        for (size_t i = 0; i < len; ++i) {
            local[i] = write_pattern(me, off + i);
        }
        rc = rdma_op(btl, ep, false, local, waddr + off, lh, twh, len);
        if (OPAL_SUCCESS != rc) {
            sm_rank_fail("put of %zu bytes at %zu to rank %u: %s", len, off, target,
                         opal_strerror(rc));
        }
    }
    if (NULL != btl->btl_flush && OPAL_SUCCESS != btl->btl_flush(btl, ep)) {
        sm_rank_fail("flush");
    }
    ctrl.kind = SM_CTRL_PUT_DONE;
    if (OPAL_SUCCESS != sm_rank_send_ctrl(target, &ctrl)) {
        sm_rank_fail("sending put-done");
    }
    sm_rank_wait32(&sm_rank_ctrl_count[source][SM_CTRL_PUT_DONE], 1, "put-done");
    for (size_t k = 0; k < MANY; ++k) {
        size_t len = (k * 37) % MANY_PUT, off = MANY_PUT_AT + k * MANY_PUT;
        for (size_t i = 0; i < len; ++i) {
            if (writable[off + i] != write_pattern(source, off + i)) {
                sm_rank_fail("byte %zu of put %zu in flight from rank %u is wrong", i, k, source);
            }
        }
    }
    for (size_t p = 0; p < sizeof(puts) / sizeof(puts[0]); ++p) {
        for (size_t i = 0; i < puts[p][1]; ++i) {
            size_t at = puts[p][0] + i;
            if (writable[at] != write_pattern(source, at)) {
                sm_rank_fail("byte %zu put by rank %u is wrong", at, source);
            }
        }
    }
    if (OPAL_SUCCESS != opal_fence(false)) {
        sm_rank_fail("fence");
    }
    btl->btl_deregister_mem(btl, rh);
    btl->btl_deregister_mem(btl, wh);
    btl->btl_deregister_mem(btl, lh);
    if (OPAL_ERR_BAD_PARAM != btl->btl_deregister_mem(btl, rh)) {
        sm_rank_fail("deregistering twice was accepted");
    }
    free(readable);
    free(writable);
    free(local);
    printf("rank %u rdma ok\n", me);
}

/* Gets gathered for one CMA call to a peer that died after they were
 * posted: each completes once, as unreachable. Two ranks; rank 1 hands
 * over a registered buffer and its pid, then is killed. */
void sm_rank_case_gone(void)
{
    enum { GETS = 20, LEN = 4096 };
    if (2 != sm_rank_size) {
        sm_rank_fail("the gone case needs 2 ranks");
    }
    const uint32_t me = sm_rank_me, peer = 1 - me;
    struct mca_btl_base_endpoint_t *ep = NULL;
    mca_btl_base_module_t *btl = rdma_btl(peer, &ep);
    uint8_t *buf = calloc(GETS, LEN);
    if (NULL == btl || NULL == buf) {
        sm_rank_fail("no put/get module reaches rank %u, or no memory", peer);
    }
    mca_btl_base_registration_handle_t *h = btl->btl_register_mem(
        btl, NULL, buf, (size_t) GETS * LEN,
        1 == me ? MCA_BTL_REG_FLAG_REMOTE_READ : MCA_BTL_REG_FLAG_LOCAL_WRITE);
    if (NULL == h) {
        sm_rank_fail("register_mem");
    }
    if (1 == me) {
        sm_rank_ctrl_t ctrl = {.kind = SM_CTRL_HANDLES,
                               .src = me,
                               .value = (uint64_t) getpid(),
                               .read_address = (uint64_t) (uintptr_t) buf};
        memcpy(ctrl.read_handle, h, btl->btl_registration_handle_size);
        if (OPAL_SUCCESS != sm_rank_send_ctrl(0, &ctrl)) {
            sm_rank_fail("sending handles");
        }
        sm_rank_wait32(&sm_rank_ctrl_count[0][SM_CTRL_PING], 1, "ping");
        raise(SIGKILL);
    }
    sm_rank_wait32(&sm_rank_ctrl_count[1][SM_CTRL_HANDLES], 1, "handles");
    sm_rank_ctrl_t theirs = sm_rank_ctrl_last[1];
    const sm_rank_ctrl_t ping = {.kind = SM_CTRL_PING, .src = me};
    if (OPAL_SUCCESS != sm_rank_send_ctrl(1, &ping)) {
        sm_rank_fail("sending ping");
    }
    /* No progress until it is gone (mcarun reaped it): nothing here has
     * noticed, so the gets are taken and gathered. */
    pid_t pid = (pid_t) theirs.value;
    double deadline = sm_rank_now() + 30.0;
    while (0 == kill(pid, 0)) {
        if (sm_rank_now() > deadline) {
            sm_rank_fail("rank 1 (pid %d) still there after 30 s", (int) pid);
        }
        usleep(1000);
    }
    uint64_t first = completions, failed = failures;
    for (int k = 0; k < GETS; ++k) {
        int rc = btl->btl_get(
            btl, ep, buf + (size_t) k * LEN, theirs.read_address + (uint64_t) k * LEN, h,
            (void *) theirs.read_handle, LEN, 0, MCA_BTL_NO_ORDER, rdma_cb, NULL, NULL);
        if (OPAL_SUCCESS != rc) {
            sm_rank_fail("get %d to the gone rank refused in the call: %s", k, opal_strerror(rc));
        }
    }
    sm_rank_wait(&completions, first + GETS, "gets to a gone rank");
    for (int i = 0; i < 100; ++i) {
        opal_progress();
    }
    if (completions != first + GETS || failures != failed + GETS ||
        OPAL_ERR_UNREACH != last_status) {
        sm_rank_fail("gets to a gone rank: %" PRIu64 " completions, %" PRIu64
                     " failed of %d, the last %s",
                     (uint64_t) (completions - first), (uint64_t) (failures - failed), GETS,
                     opal_strerror(last_status));
    }
    btl->btl_deregister_mem(btl, h);
    free(buf);
    printf("rank 0 gone ok: %d gets completed once each, %s\n", GETS, opal_strerror(last_status));
}

void sm_rank_case_bw(size_t size, int iters)
{
    if (sm_rank_size < 2 || sm_rank_me > 1) {
        return;
    }
    struct mca_btl_base_endpoint_t *ep = NULL;
    uint32_t peer = 1 - sm_rank_me;
    mca_btl_base_module_t *btl = rdma_btl(peer, &ep);
    uint8_t *buf = malloc(size);
    if (NULL == btl || NULL == buf) {
        sm_rank_fail("no put/get module, or no memory");
    }
    memset(buf, (int) sm_rank_me, size);
    mca_btl_base_registration_handle_t *h =
        btl->btl_register_mem(btl, NULL, buf, size, MCA_BTL_REG_FLAG_ACCESS_ANY);
    sm_rank_ctrl_t ctrl = {
        .kind = SM_CTRL_HANDLES, .src = sm_rank_me, .read_address = (uint64_t) (uintptr_t) buf};
    memcpy(ctrl.read_handle, h, btl->btl_registration_handle_size);
    sm_rank_send_ctrl(peer, &ctrl);
    sm_rank_wait32(&sm_rank_ctrl_count[peer][SM_CTRL_HANDLES], 1, "handles");
    uint8_t their[SM_RANK_HANDLE_MAX];
    memcpy(their, sm_rank_ctrl_last[peer].read_handle, sizeof(their));
    if (0 == sm_rank_me) {
        uint8_t *local = malloc(size);
        double t0 = sm_rank_now();
        for (int i = 0; i < iters; ++i) {
            rdma_op(btl, ep, true, local, sm_rank_ctrl_last[peer].read_address, NULL,
                    (void *) their, size);
        }
        double t = sm_rank_now() - t0;
        printf("get %zu bytes: %.1f MB/s\n", size, (double) size * iters / t / 1e6);
        free(local);
        ctrl.kind = SM_CTRL_FINAL;
        sm_rank_send_ctrl(peer, &ctrl);
    } else {
        sm_rank_wait32(&sm_rank_ctrl_count[peer][SM_CTRL_FINAL], 1, "end of bw");
    }
    btl->btl_deregister_mem(btl, h);
    free(buf);
}

/* The state letter of /proc/<pid>/stat ('T': stopped), or 0. */
static char proc_state(pid_t pid)
{
    char path[64], line[512];
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long) pid);
    FILE *f = fopen(path, "r");
    if (NULL == f) {
        return 0;
    }
    char *ok = fgets(line, sizeof(line), f);
    fclose(f);
    const char *end = NULL == ok ? NULL : strrchr(line, ')');
    return NULL == end || ' ' != end[1] ? 0 : end[2];
}

static void check_get(const uint8_t *local, size_t len, size_t off, uint32_t owner)
{
    for (size_t i = 0; i < len; ++i) {
        if (local[i] != read_pattern(owner, off + i)) {
            sm_rank_fail("shared get of %zu bytes at %zu: byte %zu wrong", len, off, i);
        }
    }
}

/* Rank 1 owns a readable and a writable buffer of size bytes; rank 0
 * gets and puts all of them and odd pieces, rounds times, every byte
 * checked. "helped": rank 1 waits in progress meanwhile, so it copies
 * slices of rank 0's transfers. "stopped": rank 1 is stopped (SIGSTOP)
 * until rank 0 is done, so every transfer must complete without it. */
void sm_rank_case_split(const char *mode, size_t size, int rounds)
{
    const bool stopped = 0 == strcmp(mode, "stopped");
    if (2 != sm_rank_size || size < 16384) {
        sm_rank_fail("split: 2 ranks and at least 16384 bytes");
    }
    const uint32_t peer = 1 - sm_rank_me;
    struct mca_btl_base_endpoint_t *ep = NULL;
    mca_btl_base_module_t *btl = rdma_btl(peer, &ep);
    if (NULL == btl || !sm_rank_btl_is(btl, "sm")) {
        sm_rank_fail("split: sm does not carry put/get to rank %u", peer);
    }
    if (1 == sm_rank_me) {
        uint8_t *readable = malloc(size), *writable = calloc(1, size);
        if (NULL == readable || NULL == writable) {
            sm_rank_fail("out of memory");
        }
        for (size_t i = 0; i < size; ++i) {
            readable[i] = read_pattern(1, i);
        }
        mca_btl_base_registration_handle_t *rh =
            btl->btl_register_mem(btl, NULL, readable, size, MCA_BTL_REG_FLAG_REMOTE_READ);
        mca_btl_base_registration_handle_t *wh =
            btl->btl_register_mem(btl, NULL, writable, size, MCA_BTL_REG_FLAG_REMOTE_WRITE);
        if (NULL == rh || NULL == wh) {
            sm_rank_fail("register_mem");
        }
        sm_rank_ctrl_t ctrl = {.kind = SM_CTRL_HANDLES,
                               .src = 1,
                               .value = (uint64_t) getpid(),
                               .read_address = (uint64_t) (uintptr_t) readable,
                               .write_address = (uint64_t) (uintptr_t) writable};
        memcpy(ctrl.read_handle, rh, btl->btl_registration_handle_size);
        memcpy(ctrl.write_handle, wh, btl->btl_registration_handle_size);
        if (OPAL_SUCCESS != sm_rank_send_ctrl(0, &ctrl)) {
            sm_rank_fail("sending handles");
        }
        if (stopped) {
            /* Rank 0 continues us when it is done. */
            raise(SIGSTOP);
        }
        sm_rank_wait32(&sm_rank_ctrl_count[0][SM_CTRL_PUT_DONE], 1, "put-done");
        for (size_t i = 0; i < size; ++i) {
            if (writable[i] != write_pattern(0, i)) {
                sm_rank_fail("byte %zu of the shared puts is wrong", i);
            }
        }
        btl->btl_deregister_mem(btl, rh);
        btl->btl_deregister_mem(btl, wh);
        free(readable);
        free(writable);
        printf("rank 1 split ok\n");
        return;
    }
    sm_rank_wait32(&sm_rank_ctrl_count[1][SM_CTRL_HANDLES], 1, "handles");
    const sm_rank_ctrl_t *theirs = &sm_rank_ctrl_last[1];
    const pid_t owner = (pid_t) theirs->value;
    uint8_t their_read[SM_RANK_HANDLE_MAX], their_write[SM_RANK_HANDLE_MAX];
    memcpy(their_read, theirs->read_handle, sizeof(their_read));
    memcpy(their_write, theirs->write_handle, sizeof(their_write));
    mca_btl_base_registration_handle_t *trh = (void *) their_read, *twh = (void *) their_write;
    const uint64_t raddr = theirs->read_address, waddr = theirs->write_address;
    if (stopped) {
        double deadline = sm_rank_now() + 30.0;
        while ('T' != proc_state(owner)) {
            if (sm_rank_now() > deadline) {
                sm_rank_fail("rank 1 (pid %ld) did not stop", (long) owner);
            }
            usleep(1000);
        }
    }
    uint8_t *local = malloc(size);
    if (NULL == local) {
        sm_rank_fail("out of memory");
    }
    /* "helped": the first get waits (at most 5 s) for rank 1 to write
     * into it before this process claims its own slices, which it does at
     * its next progress: a rank 1 that the scheduler keeps off a core for
     * every one of the transfers would otherwise never get to help. The
     * first slice is the first claimed; its first byte changes. */
    const volatile uint8_t *watch = stopped ? NULL : local;
    if (NULL != watch && 0xee == read_pattern(1, 0)) {
        sm_rank_fail("split: the pattern's first byte is the fill");
    }
    for (int r = 0; r < rounds; ++r) {
        /* The whole buffer, then a piece at odd offsets and of odd
         * length, so that slices are neither pages nor equal. */
        const size_t pieces[][2] = {{0, size}, {4095, size - 8191}};
        for (size_t p = 0; p < 2; ++p) {
            size_t off = pieces[p][0], len = pieces[p][1];
            memset(local, 0xee, size);
            int rc = rdma_op_watched(btl, ep, true, local, raddr + off, NULL, trh, len, &watch);
            if (OPAL_SUCCESS != rc) {
                sm_rank_fail("shared get of %zu bytes: %s", len, opal_strerror(rc));
            }
            check_get(local, len, off, 1);
            if (len < size && 0xee != local[len]) {
                sm_rank_fail("shared get of %zu bytes wrote past its end", len);
            }
        }
        for (size_t i = 0; i < size; ++i) {
            local[i] = write_pattern(0, i);
        }
        int rc = rdma_op(btl, ep, false, local, waddr, NULL, twh, size);
        if (OPAL_SUCCESS != rc) {
            sm_rank_fail("shared put of %zu bytes: %s", size, opal_strerror(rc));
        }
    }
    if (stopped) {
        /* Everything completed while rank 1 could not have helped. */
        if ('T' != proc_state(owner)) {
            sm_rank_fail("rank 1 was not stopped throughout");
        }
        kill(owner, SIGCONT);
    }
    sm_rank_ctrl_t ctrl = {.kind = SM_CTRL_PUT_DONE, .src = 0};
    if (OPAL_SUCCESS != sm_rank_send_ctrl(1, &ctrl)) {
        sm_rank_fail("sending put-done");
    }
    free(local);
    printf("rank 0 split ok: %d rounds of %zu bytes\n", rounds, size);
}
