/*
 * The rank program of btl/ofi's own cases, run under mcarun:
 *
 *   mcarun -np 2 --mca btl self,ofi btl_ofi_rank CASE [ARGS]
 *
 *   pingpong SIZE ITERS  rank 0 and 1 bounce a checked message of SIZE
 *                        bytes ITERS times; rank 0 prints the half round
 *                        trip in microseconds ("latency SIZE: X us")
 *   malformed            rank 1 runs no btl and publishes a corrupt ofi
 *                        address; rank 0's add_procs must find rank 1
 *                        unreachable after an error naming it
 *   declined             rank 1's btl/ofi declines (no such provider);
 *                        rank 0 must find it unreachable for that reason
 *   module               prints the provider btl/ofi uses here
 *                        ("provider: <name>") and its limits
 *   wait                 rank 0 sleeps in opal_progress_wait (a 30 s
 *                        timeout) until rank 1's message, sent after
 *                        300 ms, wakes it; prints "woken after X s"
 *   nordma               prints how many RDMA modules rank 0 has for
 *                        rank 1 ("rdma modules: N") and bounces one
 *                        message
 *   closed N             rank 1 sends N messages and finalizes its BTLs
 *                        while rank 0 receives: rank 0 must get all N,
 *                        then one PEER_CLOSED for rank 1 (no failure),
 *                        sends to rank 1 must fail, and rank 1's exit
 *                        must not be reported as a failure either
 *
 * Prints "rank R: CASE ok" and exits 0; "rank R: FAILED: ..." and exits 1.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/btl/base/base.h"
#include "opal/mca/btl/ofi/btl_ofi.h"
#include "opal/runtime/opal_progress.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_pid.h"
#include "opal/util/opal_timer.h"
#include "orte/runtime/orte_init.h"

#define TAG_PING 0x90

static uint32_t my_rank, job_size;
static int exit_code = 0;

static void say(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *format, ...)
{
    char line[1024];
    int n = snprintf(line, sizeof(line), "rank %" PRIu32 ": ", my_rank);
    va_list ap;
    va_start(ap, format);
    vsnprintf(line + n, sizeof(line) - (size_t) n - 1, format, ap);
    va_end(ap);
    strcat(line, "\n");
    if (write(STDOUT_FILENO, line, strlen(line)) < 0) {
        exit_code = 1;
    }
}

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        say("FAILED: " __VA_ARGS__);                                                               \
        exit_code = 1;                                                                             \
    } while (0)

/* ------------------------------------------------------------- pingpong */

static volatile uint64_t received;
static size_t expected_size;
static bool bad_data;

static unsigned char pattern(uint64_t iter, size_t i)
{
    return (unsigned char) (iter * 131u + i * 7u + 3u);
}

static void ping_cb(struct mca_btl_base_module_t *btl,
                    const mca_btl_base_receive_descriptor_t *desc)
{
    (void) btl;
    size_t len = 0;
    for (size_t s = 0; s < desc->des_segment_count; ++s) {
        len += desc->des_segments[s].seg_len;
    }
    if (len != expected_size) {
        bad_data = true;
    } else if (len > 0) {
        const unsigned char *p = desc->des_segments[0].seg_addr;
        /* Checking every byte would measure the check: the ends. */
        if (p[0] != pattern(received, 0) || p[len - 1] != pattern(received, len - 1)) {
            bad_data = true;
        }
    }
    ++received;
}

static bool send_to(uint32_t rank, const void *data, size_t size)
{
    mca_btl_base_peer_t *peer = mca_btl_base_peer_get(rank);
    for (;;) {
        int rc = mca_btl_base_mux_send_copy(peer, TAG_PING, data, size);
        if (OPAL_SUCCESS == rc) {
            return true;
        }
        if (OPAL_ERR_RESOURCE_BUSY != rc) {
            FAIL("send of %zu bytes to rank %" PRIu32 ": %s", size, rank, opal_strerror(rc));
            return false;
        }
        opal_progress();
    }
}

static bool wait_for(uint64_t count)
{
    uint64_t deadline = opal_timer_ns() + 60000000000ull;
    for (uint64_t n = 0; received < count; ++n) {
        opal_progress();
        if (0 == n % 4096 && opal_timer_ns() > deadline) {
            FAIL("timed out waiting for message %" PRIu64, count);
            return false;
        }
    }
    return true;
}

static int case_pingpong(int argc, char **argv)
{
    if (argc < 2 || job_size < 2) {
        FAIL("pingpong SIZE ITERS needs two ranks");
        return 1;
    }
    size_t size = strtoull(argv[0], NULL, 0);
    uint64_t iters = strtoull(argv[1], NULL, 0), warmup = iters / 10 + 10;
    expected_size = size;
    unsigned char *buf = malloc(size > 0 ? size : 1);
    uint64_t start = 0;
    for (uint64_t i = 0; i < warmup + iters && 0 == exit_code; ++i) {
        if (i == warmup) {
            start = opal_timer_ns();
        }
        if (my_rank > 1) {
            break;
        }
        for (size_t k = 0; k < size; ++k) {
            buf[k] = pattern(i, k);
        }
        if (0 == my_rank) {
            if (!send_to(1, buf, size) || !wait_for(i + 1)) {
                break;
            }
        } else {
            if (!wait_for(i + 1) || !send_to(0, buf, size)) {
                break;
            }
        }
    }
    if (0 == my_rank && 0 == exit_code) {
        double us = (double) (opal_timer_ns() - start) / 1000.0 / (double) iters / 2.0;
        say("latency %zu: %.3f us", size, us);
    }
    if (bad_data) {
        FAIL("a message arrived with the wrong length or contents");
    }
    free(buf);
    return exit_code;
}

/* ----------------------------------------------------------------- wait */

static int case_wait(void)
{
    if (job_size < 2) {
        FAIL("wait needs two ranks");
        return 1;
    }
    expected_size = 8;
    unsigned char buf[8] = {0};
    if (1 == my_rank) {
        usleep(300000);
        for (size_t k = 0; k < sizeof(buf); ++k) {
            buf[k] = pattern(0, k);
        }
        if (send_to(0, buf, sizeof(buf))) {
            (void) wait_for(1);
        }
        return exit_code;
    }
    if (0 != my_rank) {
        return 0;
    }
    /* Nothing but the message can end the wait before its timeout. */
    const int64_t timeout_ns = 30000000000ll;
    uint64_t start = opal_timer_ns();
    int waits = 0;
    while (0 == received && opal_timer_ns() - start < (uint64_t) timeout_ns) {
        int rc = opal_progress_wait(timeout_ns);
        ++waits;
        if (rc < 0) {
            FAIL("opal_progress_wait: %s", opal_strerror(rc));
            return 1;
        }
    }
    double elapsed = (double) (opal_timer_ns() - start) / 1e9;
    if (0 == received) {
        FAIL("no message after %.1f s of waiting", elapsed);
        return 1;
    }
    if (elapsed >= 20.0) {
        FAIL("the message did not wake the wait (%.1f s)", elapsed);
        return 1;
    }
    say("woken after %.3f s (%d waits)", elapsed, waits);
    for (size_t k = 0; k < sizeof(buf); ++k) {
        buf[k] = pattern(1, k);
    }
    (void) send_to(1, buf, sizeof(buf));
    return exit_code;
}

/* --------------------------------------------------------------- closed */

/* What the error callback heard about rank 1, and how many messages had
 * come when its PEER_CLOSED did. */
static volatile unsigned closed_calls, failed_calls;
static volatile uint64_t received_at_close;

static void closed_error_cb(struct mca_btl_base_module_t *btl, int32_t flags,
                            const opal_proc_t *errproc, const char *info)
{
    (void) btl;
    if (NULL == errproc || 1 != errproc->proc_name.vpid) {
        say("error callback (flags 0x%x) for another process: %s", (unsigned) flags,
            NULL != info ? info : "");
        ++failed_calls;
        return;
    }
    if (0 != (flags & MCA_BTL_ERROR_FLAGS_PEER_CLOSED)) {
        if (0 == closed_calls++) {
            received_at_close = received;
        }
        say("PEER_CLOSED: %s", NULL != info ? info : "");
    } else {
        ++failed_calls;
        say("error callback (flags 0x%x): %s", (unsigned) flags, NULL != info ? info : "");
    }
}

/* Progresses until *count reaches want or 30 s pass. */
static bool progress_until(volatile unsigned *count, unsigned want, const char *what)
{
    uint64_t deadline = opal_timer_ns() + 30000000000ull;
    while (*count < want) {
        opal_progress();
        if (opal_timer_ns() > deadline) {
            FAIL("no %s within 30 s", what);
            return false;
        }
    }
    return true;
}

/* btl/ofi's module, found through the base (the component lives in a
 * plugin); NULL when it has none. */
static mca_btl_ofi_module_t *ofi_module(void)
{
    mca_btl_base_selected_module_t *sm;
    OPAL_LIST_FOREACH (sm, &mca_btl_base_modules_initialized, mca_btl_base_selected_module_t) {
        if (0 == strcmp(sm->btl_component->btl_version.mca_component_name, "ofi")) {
            return mca_btl_ofi_module(sm->btl_module);
        }
    }
    return NULL;
}

/* A rank's pid as btl/ofi knows it (0 when it runs elsewhere). */
static pid_t peer_pid(uint32_t rank)
{
    mca_btl_ofi_module_t *m = ofi_module();
    if (NULL == m || rank >= m->job_size || NULL == m->endpoints[rank]) {
        return 0;
    }
    return m->endpoints[rank]->pid;
}

/* Rank 1 returns after finalizing its BTLs (its caller leaves without the
 * last fence, as rank 0 does, which waits for it to exit). */
static int case_closed(int argc, char **argv)
{
    if (argc < 1 || 2 != job_size) {
        FAIL("closed N needs two ranks");
        return 1;
    }
    uint64_t n = strtoull(argv[0], NULL, 0);
    expected_size = 8;
    unsigned char buf[8];
    if (1 == my_rank) {
        for (uint64_t i = 0; i < n && 0 == exit_code; ++i) {
            for (size_t k = 0; k < sizeof(buf); ++k) {
                buf[k] = pattern(i, k);
            }
            (void) send_to(0, buf, sizeof(buf));
        }
        int rc = mca_btl_base_finalize();
        if (OPAL_SUCCESS != rc) {
            FAIL("finalize: %s", opal_strerror(rc));
        }
        say("sent %" PRIu64 ", finalized", n);
        return exit_code;
    }
    pid_t pid = peer_pid(1);
    if (!progress_until(&closed_calls, 1, "PEER_CLOSED for rank 1")) {
        return exit_code;
    }
    if (received_at_close != n || bad_data) {
        FAIL("%" PRIu64 " of %" PRIu64 " messages (%s) before rank 1's PEER_CLOSED",
             received_at_close, n, bad_data ? "some wrong" : "all right");
    }
    int rc = mca_btl_base_mux_send_copy(mca_btl_base_peer_get(1), TAG_PING, buf, sizeof(buf));
    if (OPAL_SUCCESS == rc) {
        FAIL("a send to rank 1 after its PEER_CLOSED succeeded");
    }
    /* Its exit, seen by the liveness check (every 100 ms), is no
     * failure: it said goodbye. */
    uint64_t deadline = opal_timer_ns() + 30000000000ull;
    while (0 != pid && !opal_pid_exited(pid) && opal_timer_ns() < deadline) {
        opal_progress();
    }
    if (0 != pid && !opal_pid_exited(pid)) {
        FAIL("rank 1 (pid %d) did not exit within 30 s", (int) pid);
    }
    uint64_t settle = opal_timer_ns() + 500000000ull;
    while (opal_timer_ns() < settle) {
        opal_progress();
    }
    if (1 != closed_calls || 0 != failed_calls) {
        FAIL("%u PEER_CLOSED and %u failures for rank 1", closed_calls, failed_calls);
    }
    if (0 == exit_code) {
        say("%" PRIu64 " messages, then PEER_CLOSED once%s; a send after: %s", n,
            0 != pid ? ", and no failure at its exit" : "", opal_strerror(rc));
    }
    return exit_code;
}

/* ------------------------------------------------------ unreachable peers */

/* The base printed the add_procs error; rank 0 checks it failed. */
static int expect_unreachable(int rc)
{
    if (OPAL_ERR_UNREACH != rc) {
        FAIL("add_procs returned %s, expected the peer to be unreachable", opal_strerror(rc));
        return 1;
    }
    return 0;
}

/* ----------------------------------------------------------------- main */

static bool runs_btl(const char *name)
{
    /* Rank 1 of malformed runs no btl at all. */
    return !(0 == strcmp(name, "malformed") && 1 == my_rank);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: btl_ofi_rank CASE [ARGS]\n");
        return 2;
    }
    const char *name = argv[1];
    const char *rank_env = getenv("OPAL_ORTE_RANK");
    my_rank = NULL != rank_env ? (uint32_t) atoi(rank_env) : 0;
    if (0 == strcmp(name, "declined") && 1 == my_rank) {
        setenv("OPAL_MCA_ofi_provider_include", "nosuchprovider", 1);
    }
    if (OPAL_SUCCESS != orte_init(&argc, &argv)) {
        fprintf(stderr, "orte_init failed\n");
        return 2;
    }
    job_size = opal_proc_job_info()->size;
    int rc = OPAL_SUCCESS;
    bool btl_up = false;
    if (runs_btl(name)) {
        rc = mca_btl_base_am_register(TAG_PING, ping_cb, NULL);
        if (OPAL_SUCCESS == rc) {
            rc = mca_btl_base_init(false, false);
            btl_up = OPAL_SUCCESS == rc;
        }
        if (0 == strcmp(name, "declined") && 1 == my_rank) {
            say("btl init: %s", opal_strerror(rc));
            rc = OPAL_SUCCESS;
        }
    } else {
        /* Starts like an address blob (magic, version) and then lies
         * about its length. */
        static const unsigned char garbage[78] = {'O', 'F', 'I', 'A', 2, 0, 200, 0};
        rc = opal_modex_send(MCA_BTL_OFI_MODEX_KEY, garbage, sizeof(garbage),
                             OPAL_MODEX_SCOPE_GLOBAL);
    }
    if (OPAL_SUCCESS == rc) {
        rc = opal_fence(true);
    }
    if (OPAL_SUCCESS != rc) {
        say("FAILED: set-up: %s", opal_strerror(rc));
        (void) orte_finalize();
        return 3;
    }
    if (btl_up &&
        (0 == my_rank || (0 != strcmp(name, "malformed") && 0 != strcmp(name, "declined")))) {
        rc = mca_btl_base_add_all_procs();
        if (0 == strcmp(name, "malformed") || 0 == strcmp(name, "declined")) {
            exit_code = expect_unreachable(rc);
        } else if (OPAL_SUCCESS != rc) {
            FAIL("add_procs: %s", opal_strerror(rc));
        } else if (0 == strcmp(name, "pingpong")) {
            (void) opal_fence(false);
            exit_code = case_pingpong(argc - 2, argv + 2);
        } else if (0 == strcmp(name, "wait")) {
            (void) opal_fence(false);
            exit_code = case_wait();
        } else if (0 == strcmp(name, "closed")) {
            rc = mca_btl_base_register_error_cb(closed_error_cb);
            if (OPAL_SUCCESS != rc) {
                FAIL("registering the error callback: %s", opal_strerror(rc));
            }
            (void) opal_fence(false);
            if (0 == exit_code) {
                exit_code = case_closed(argc - 2, argv + 2);
            }
            btl_up = 1 != my_rank;
        } else if (0 == strcmp(name, "nordma")) {
            mca_btl_base_peer_t *peer = mca_btl_base_peer_get(1 - my_rank);
            if (my_rank < 2 && job_size >= 2) {
                say("rdma modules: %d, send modules: %d", peer->rdma_count, peer->send_count);
            }
            (void) opal_fence(false);
            char *args[2] = {"100", "10"};
            exit_code = case_pingpong(2, args);
            if (my_rank < 2 && job_size >= 2) {
                /* btl_dump after 21 round trips (10 and the warm-up). */
                char line[512];
                mca_btl_base_mux_describe(peer, line, sizeof(line));
                say("toward rank %" PRIu32 ": %s", 1 - my_rank, line);
            }
        } else if (0 == strcmp(name, "hold")) {
            /* Holds its endpoint until it is killed. */
            say("holding");
            for (;;) {
                pause();
            }
        } else if (0 == strcmp(name, "module")) {
            mca_btl_ofi_module_t *m = ofi_module();
            if (NULL == m) {
                FAIL("btl/ofi has no module");
            } else {
                say("provider: %s, domain %s, eager %zu, max send %zu, inject %zu, %s, %s, %s",
                    m->ofi.prov_name, m->ofi.info->domain_attr->name, m->super.btl_eager_limit,
                    m->super.btl_max_send_size, m->inject_size,
                    m->multi_recv ? "multi-receive" : "single receives",
                    m->has_rma ? "rma" : "no rma", m->wait_fd_is_timer ? "timer" : "wait fd");
            }
        }
    }
    /* Everyone waits for everyone before tearing down (a peer may still be
     * receiving); not in closed, where rank 0 waits for rank 1 to exit. */
    if (0 != strcmp(name, "closed")) {
        (void) opal_fence(false);
    }
    if (btl_up) {
        (void) mca_btl_base_finalize();
    }
    if (0 == exit_code) {
        say("%s ok", name);
    }
    (void) orte_finalize();
    return exit_code;
}
