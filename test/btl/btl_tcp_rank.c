/*
 * The rank program of btl/tcp's own cases (test/btl/btl_tcp_test.c), run
 * under mcarun with `--mca btl self,tcp`, np 2:
 *
 *   btl_tcp_rank intruder KIND   rank 1 opens a raw socket to rank 0's
 *                                btl/tcp port and breaks the protocol
 *                                (KIND below); rank 0 must drop rank 1
 *                                with the reason, or refuse the stranger
 *   btl_tcp_rank forged          rank 1 gets and puts with handles it
 *                                altered; rank 0 refuses each, and rank
 *                                1's operations complete with the error
 *   btl_tcp_rank sockopts IDLE INTVL PROBES USER_MS
 *                                after a message each way, every
 *                                connected TCP socket of the process (all
 *                                btl/tcp's: the launcher's channel is a
 *                                Unix socket), IPv4 or IPv6, has
 *                                keepalive on with these
 *                                settings (IDLE 0: keepalive off) and
 *                                TCP_USER_TIMEOUT USER_MS
 *   btl_tcp_rank slowreader N    rank 0 sends N eager messages, each
 *                                filled from its number, as fast as the
 *                                socket takes them while rank 1 reads
 *                                slowly (a pause every few messages):
 *                                sends are written in part and their
 *                                rest queued, descriptors are reused, and
 *                                rank 1 must find every message intact
 *                                and in order
 *   btl_tcp_rank crossflood N    every rank sends N messages to every
 *                                other, progressing only when refused
 *   btl_tcp_rank latecomer       np 3: rank 1 keeps rank 0 busy with a
 *                                ping-pong over their one connection
 *                                (which rank 0 reads directly, asking
 *                                epoll only every btl_tcp_epoll_interval
 *                                calls) while rank 2 connects and sends:
 *                                rank 0 must accept it and read its
 *                                message before the ping-pong ends
 *   btl_tcp_rank departed        rank 1 finalizes and exits without ever
 *                                sending: with no connection there is no
 *                                goodbye, and rank 0's liveness check,
 *                                which sees rank 1's process gone, must
 *                                report it closed (the runtime says it
 *                                finalized), never failed
 *   btl_tcp_rank sleepyreader N  rank 1 sleeps while rank 0's N messages
 *                                fill its socket, then reads them in
 *                                passes of btl_tcp_recv_budget: the pass
 *                                whose read empties the socket handles
 *                                what it read
 *
 * KIND: type (a frame of unknown type), am-size (a message over the
 * limit), reply (a put acknowledgement to no request), status (an active
 * message with a status), other-job (a handshake from another job),
 * silent (a connection that never says hello, while rank 0 sleeps in
 * opal_progress_wait: it must be closed at btl_tcp_connect_timeout, 300 ms
 * here, not when rank 0 next wakes).
 *
 * Rank 0 prints "rank 0: dropped rank 1: <info>" from its error callback;
 * each rank prints "rank R: <case> ok" at the end. Synchronisation is the
 * runtime's fence, never btl traffic the case may have broken.
 */
#include "opal/opal_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "opal/mca/btl/base/base.h"
#include "opal/mca/btl/base/btl_base_mux.h"
#include "opal/mca/btl/tcp/btl_tcp_wire.h"
#include "opal/runtime/opal_progress.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "orte/runtime/orte_init.h"

#define TAG_HANDLE 0xf0 /* rank 0's region: address, handle */
#define TAG_DONE   0xf1
#define TAG_SLOW   0xf2 /* slowreader's and crossflood's messages */
#define TAG_PING   0xf3 /* latecomer's ping-pong */

static uint32_t my_rank;
static bool failed_peer[2];
static char failed_info[512];
static unsigned closed_count[2];
static char closed_info[512];
static bool done_received;
static uint32_t done_count;
static uint8_t handle_msg[256];
static size_t handle_len;
static uint64_t deadline_ns;
static bool broken;

static void say(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    printf("rank %u: ", my_rank);
    vprintf(format, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
}

static void fail(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *format, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, format);
    vsnprintf(text, sizeof(text), format, ap);
    va_end(ap);
    say("FAILED: %s", text);
    broken = true;
}

static void error_cb(struct mca_btl_base_module_t *btl, int32_t flags, const opal_proc_t *errproc,
                     const char *info)
{
    (void) btl;
    if (0 != (flags & MCA_BTL_ERROR_FLAGS_PEER_CLOSED)) {
        /* It finalized: not a failure. */
        if (NULL != errproc && errproc->proc_name.vpid < 2) {
            ++closed_count[errproc->proc_name.vpid];
            snprintf(closed_info, sizeof(closed_info), "%s", NULL != info ? info : "");
        }
        return;
    }
    if (NULL != errproc && errproc->proc_name.vpid < 2 && !failed_peer[errproc->proc_name.vpid]) {
        failed_peer[errproc->proc_name.vpid] = true;
        snprintf(failed_info, sizeof(failed_info), "%s", NULL != info ? info : "");
        say("dropped rank %u: %s", errproc->proc_name.vpid, failed_info);
    }
}

static void am_cb(struct mca_btl_base_module_t *btl, const mca_btl_base_receive_descriptor_t *desc)
{
    (void) btl;
    if (TAG_DONE == desc->tag) {
        done_received = true;
        ++done_count;
    } else if (TAG_HANDLE == desc->tag && desc->des_segments[0].seg_len <= sizeof(handle_msg)) {
        handle_len = desc->des_segments[0].seg_len;
        memcpy(handle_msg, desc->des_segments[0].seg_addr, handle_len);
    }
}

/* Progresses until *flag or the deadline. */
static bool wait_for(const bool *flag, const char *what)
{
    while (!*flag) {
        if (opal_timer_ns() > deadline_ns) {
            fail("timed out waiting for %s", what);
            return false;
        }
        (void) opal_progress();
    }
    return true;
}

static bool wait_size(const size_t *value, const char *what)
{
    while (0 == *value) {
        if (opal_timer_ns() > deadline_ns) {
            fail("timed out waiting for %s", what);
            return false;
        }
        (void) opal_progress();
    }
    return true;
}

static mca_btl_base_mux_entry_t *route(uint32_t rank)
{
    mca_btl_base_peer_t *peer = mca_btl_base_peer_get(rank);
    return NULL != peer && peer->rdma_count > 0 ? &peer->rdma[0] : NULL;
}

/* Sends by sendi, progressing while the module says busy (counted in
 * *busy when given). */
static bool send_counting(uint32_t rank, mca_btl_base_tag_t tag, const void *data, size_t size,
                          uint64_t *busy)
{
    mca_btl_base_mux_entry_t *e = route(rank);
    if (NULL == e) {
        fail("no module reaches rank %u", rank);
        return false;
    }
    for (;;) {
        int rc = e->btl->btl_sendi(e->btl, e->endpoint, data, size, NULL, 0, MCA_BTL_NO_ORDER, 0,
                                   tag, NULL);
        if (OPAL_SUCCESS == rc) {
            return true;
        }
        if (OPAL_ERR_RESOURCE_BUSY != rc || opal_timer_ns() > deadline_ns) {
            fail("sending %zu bytes on tag %u to rank %u: %s", size, (unsigned) tag, rank,
                 opal_strerror(rc));
            return false;
        }
        if (NULL != busy) {
            ++*busy;
        }
        (void) opal_progress();
    }
}

static bool send_am(uint32_t rank, mca_btl_base_tag_t tag, const void *data, size_t size)
{
    return send_counting(rank, tag, data, size, NULL);
}

/* ------------------------------------------------------------ sockopts */

/* The connected TCP sockets among the process's descriptors. */
static bool is_connected_tcp(int fd)
{
    int type = 0, listening = 0;
    socklen_t len = sizeof(type);
    struct sockaddr_storage peer;
    socklen_t plen = sizeof(peer);
    if (0 != getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) || SOCK_STREAM != type) {
        return false;
    }
    len = sizeof(listening);
    if (0 != getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) || listening) {
        return false;
    }
    /* An accepted connection is IPv6 (with an IPv4-mapped peer) when the
     * listening socket takes both families. */
    return 0 == getpeername(fd, (struct sockaddr *) &peer, &plen) &&
           (AF_INET == peer.ss_family || AF_INET6 == peer.ss_family);
}

static int sockopt_int(int fd, int level, int name)
{
    int v = -1;
    socklen_t len = sizeof(v);
    return 0 == getsockopt(fd, level, name, &v, &len) ? v : -1;
}

static bool run_sockopts(char **argv)
{
    int want_idle = atoi(argv[2]), want_intvl = atoi(argv[3]), want_cnt = atoi(argv[4]);
    int want_user = atoi(argv[5]);
    uint32_t other = 1 - my_rank;
    if (0 == my_rank) {
        if (!send_am(other, TAG_DONE, "done", 4) || !wait_for(&done_received, "rank 1's message")) {
            return false;
        }
    } else if (!wait_for(&done_received, "rank 0's message") ||
               !send_am(other, TAG_DONE, "done", 4)) {
        return false;
    }
    int checked = 0;
    bool ok = true;
    for (int fd = 0; fd < 1024; ++fd) {
        if (!is_connected_tcp(fd)) {
            continue;
        }
        ++checked;
        int keepalive = sockopt_int(fd, SOL_SOCKET, SO_KEEPALIVE);
        int idle = sockopt_int(fd, IPPROTO_TCP, TCP_KEEPIDLE);
        int intvl = sockopt_int(fd, IPPROTO_TCP, TCP_KEEPINTVL);
        int cnt = sockopt_int(fd, IPPROTO_TCP, TCP_KEEPCNT);
        int user = sockopt_int(fd, IPPROTO_TCP, TCP_USER_TIMEOUT);
        say("socket %d: keepalive %d, idle %d s, interval %d s, %d probes, user timeout %d ms", fd,
            keepalive, idle, intvl, cnt, user);
        if (0 == want_idle
                ? 0 != keepalive
                : 1 != keepalive || idle != want_idle || intvl != want_intvl || cnt != want_cnt) {
            fail("socket %d: keepalive is not as asked (%d s idle, %d s apart, %d probes)", fd,
                 want_idle, want_intvl, want_cnt);
            ok = false;
        }
        if (user != want_user) {
            fail("socket %d: user timeout %d ms, not %d", fd, user, want_user);
            ok = false;
        }
    }
    if (0 == checked) {
        fail("no connected TCP socket found");
        return false;
    }
    return ok && !broken;
}

/* ------------------------------------------------------------ intruder */

static int connect_to_rank0(void)
{
    void *blob = NULL;
    size_t size = 0;
    mca_btl_tcp_addr_t addr;
    char why[160];
    if (OPAL_SUCCESS != opal_modex_recv(0, MCA_BTL_TCP_MODEX_KEY, &blob, &size, -1) ||
        OPAL_SUCCESS != mca_btl_tcp_addr_unpack(blob, size, &addr, why, sizeof(why)) ||
        0 == addr.count) {
        free(blob);
        fail("rank 0 published no usable tcp address");
        return -1;
    }
    free(blob);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(addr.port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || 0 != connect(fd, (struct sockaddr *) &sa, sizeof(sa))) {
        fail("cannot connect to rank 0's port %u: %s", addr.port, strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    struct timeval tv = {.tv_sec = 20};
    (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
}

static bool write_all(int fd, const void *buf, size_t size)
{
    return send(fd, buf, size, MSG_NOSIGNAL) == (ssize_t) size;
}

/* How long rank 0 sleeps in the silent case, and how soon after the
 * connect rank 1 must see its connection closed (the deadline is 300 ms). */
#define SILENT_SLEEP_NS  (UINT64_C(3) * 1000000000u)
#define SILENT_CLOSED_NS (UINT64_C(2) * 1000000000u)

/* Rank 1's side: breaks the protocol as kind says, then waits for rank 0
 * to close the connection. */
static void intrude(const char *kind)
{
    const opal_proc_job_info_t *job = opal_proc_job_info();
    int fd = connect_to_rank0();
    if (fd < 0) {
        return;
    }
    if (0 == strcmp(kind, "silent")) {
        uint64_t t0 = opal_timer_ns();
        char byte;
        ssize_t n = recv(fd, &byte, 1, 0);
        uint64_t took = opal_timer_ns() - t0;
        if (0 != n) {
            fail("a connection without a handshake was not closed (recv: %zd, %s)", n,
                 n < 0 ? strerror(errno) : "data");
        } else if (took > SILENT_CLOSED_NS) {
            fail("a connection without a handshake was closed only after %.2f s "
                 "(btl_tcp_connect_timeout is 0.3 s; rank 0 was asleep)",
                 (double) took / 1e9);
        } else {
            say("silent connection closed after %.2f s", (double) took / 1e9);
        }
        close(fd);
        return;
    }
    bool other_job = 0 == strcmp(kind, "other-job");
    uint8_t hello[MCA_BTL_TCP_HELLO_SIZE];
    mca_btl_tcp_hello_t h = {.kind = MCA_BTL_TCP_HELLO,
                             .jobid = job->my_name.jobid + (other_job ? 1 : 0),
                             .rank = my_rank};
    mca_btl_tcp_hello_pack(&h, hello);
    if (!write_all(fd, hello, sizeof(hello))) {
        fail("cannot send the handshake");
        close(fd);
        return;
    }
    uint8_t answer[MCA_BTL_TCP_HELLO_SIZE];
    ssize_t n = recv(fd, answer, sizeof(answer), MSG_WAITALL);
    if (other_job) {
        if (0 != n) {
            fail("a handshake from another job was answered (%zd bytes) instead of closed", n);
        }
        close(fd);
        return;
    }
    mca_btl_tcp_hello_t a;
    if (n != (ssize_t) sizeof(answer) ||
        OPAL_SUCCESS != mca_btl_tcp_hello_unpack(answer, &a, NULL, 0) ||
        MCA_BTL_TCP_ACCEPT != a.kind) {
        fail("rank 0 did not accept the connection (%zd bytes)", n);
        close(fd);
        return;
    }
    mca_btl_tcp_frame_t f = {.type = MCA_BTL_TCP_FRAME_AM, .tag = 0x80};
    if (0 == strcmp(kind, "type")) {
        f.type = 99;
    } else if (0 == strcmp(kind, "am-size")) {
        f.len = 0x7fffffff;
    } else if (0 == strcmp(kind, "reply")) {
        f.type = MCA_BTL_TCP_FRAME_PUT_ACK;
        f.tag = 0;
        f.id = 42;
    } else if (0 == strcmp(kind, "status")) {
        f.status = 1;
    }
    uint8_t hdr[MCA_BTL_TCP_FRAME_HDR];
    mca_btl_tcp_frame_pack(&f, hdr);
    if (!write_all(fd, hdr, sizeof(hdr))) {
        fail("cannot send the frame");
    }
    /* Rank 0 closes the connection once it has read the frame. */
    char byte;
    n = recv(fd, &byte, 1, 0);
    if (0 != n) {
        fail("rank 0 kept the connection after the malformed frame (recv: %zd)", n);
    }
    close(fd);
}

static bool run_intruder(const char *kind)
{
    if (1 == my_rank) {
        intrude(kind);
        /* Over btl/tcp proper (a new connection): rank 0 may stop. With a
         * dropped peer that connection is refused, so the fence says it. */
        if (0 == strcmp(kind, "other-job")) {
            /* Answered once it arrived: this rank progresses until then
             * (its connection is made by its own progress). */
            return send_am(0, TAG_DONE, "done", 4) && wait_for(&done_received, "rank 0's answer") &&
                   !broken;
        }
        return !broken;
    }
    if (0 == strcmp(kind, "silent")) {
        /* Asleep but for what wakes it: the accept, then the deadline. */
        uint64_t end = opal_timer_ns() + SILENT_SLEEP_NS;
        for (uint64_t now = opal_timer_ns(); now < end; now = opal_timer_ns()) {
            (void) opal_progress_wait((int64_t) (end - now));
        }
        return !broken;
    }
    if (0 == strcmp(kind, "other-job")) {
        return wait_for(&done_received, "rank 1's message after the stranger") &&
               send_am(1, TAG_DONE, "done", 4) && !failed_peer[1] && !broken;
    }
    if (!wait_for(&failed_peer[1], "rank 1 to be dropped")) {
        return false;
    }
    if (NULL == strstr(failed_info, "it sent a malformed frame")) {
        fail("the reason does not say the frame was malformed: %s", failed_info);
    }
    return !broken;
}

/* ---------------------------------------------------------- slowreader */

/* Messages received in all, and from each rank (numbered per sender). */
static uint64_t slow_received, slow_bad, slow_from[8];

/* Message k: 16 + k % 997 bytes (eager), byte i is (k * 131 + i * 7) mod
 * 256, so that a byte of another message or offset shows. */
static size_t slow_size(uint64_t k)
{
    return 16 + (size_t) (k % 997);
}

/* Crossflood's messages reach further into the eager range (up to 30 KiB)
 * so that a socket often takes only part of one. */
static bool slow_large;

static size_t message_size(uint64_t k)
{
    return slow_large ? 16 + (size_t) (k * 61 % 30000) : slow_size(k);
}

static uint8_t slow_byte(uint64_t k, size_t i)
{
    return (uint8_t) (k * 131 + i * 7);
}

static void slow_cb(struct mca_btl_base_module_t *btl,
                    const mca_btl_base_receive_descriptor_t *desc)
{
    (void) btl;
    uint32_t src = NULL != desc->proc ? desc->proc->proc_name.vpid : 0;
    if (src >= 8) {
        if (0 == slow_bad++) {
            fail("a message from rank %u", src);
        }
        return;
    }
    uint64_t k = slow_from[src]++;
    ++slow_received;
    size_t len = 0;
    for (size_t s = 0; s < desc->des_segment_count; ++s) {
        len += desc->des_segments[s].seg_len;
    }
    if (len != message_size(k)) {
        if (0 == slow_bad++) {
            fail("message %llu from rank %u has %zu bytes, not %zu", (unsigned long long) k, src,
                 len, message_size(k));
        }
        return;
    }
    size_t at = 0;
    for (size_t s = 0; s < desc->des_segment_count; ++s) {
        const uint8_t *p = desc->des_segments[s].seg_addr;
        for (size_t i = 0; i < desc->des_segments[s].seg_len; ++i, ++at) {
            if (p[i] != slow_byte(k, at)) {
                if (0 == slow_bad++) {
                    fail("message %llu (%zu bytes): byte %zu is %u, not %u", (unsigned long long) k,
                         len, at, p[i], slow_byte(k, at));
                }
                return;
            }
        }
    }
}

/* Progresses until peers ranks have said done: what this rank queued
 * goes out only while it progresses. */
static bool flood_wait_done(uint32_t peers)
{
    while (done_count < peers) {
        if (opal_timer_ns() > deadline_ns) {
            fail("timed out waiting for the others (%u of %u done)", done_count, peers);
            return false;
        }
        (void) opal_progress();
    }
    return true;
}

static bool run_slowreader(const char *count)
{
    uint64_t n = strtoull(count, NULL, 10);
    uint32_t size = opal_proc_job_info()->size;
    if (0 == my_rank) {
        /* Message k goes to rank 1 + k % (size - 1), numbered per
         * destination: a queue that holds many descriptors for one slow
         * reader makes the list grow, and the other reader's sends then
         * get fresh ones. */
        uint64_t seq[8] = {0}, busy = 0;
        if (size < 2 || size > 8) {
            fail("slowreader runs on 2 to 8 ranks, not %u", size);
            return false;
        }
        uint8_t buf[16 + 997];
        for (uint64_t k = 0; k < n * (size - 1) && !broken; ++k) {
            uint32_t to = 1 + (uint32_t) (k % (size - 1));
            uint64_t m = seq[to]++;
            size_t len = slow_size(m);
            for (size_t i = 0; i < len; ++i) {
                buf[i] = slow_byte(m, i);
            }
            /* buf is overwritten by the next message at once. */
            if (!send_counting(to, TAG_SLOW, buf, len, &busy)) {
                return false;
            }
        }
        if (!flood_wait_done(size - 1)) {
            return false;
        }
        say("sent %llu messages to each reader (%llu busy answers)", (unsigned long long) n,
            (unsigned long long) busy);
        return !broken;
    }
    uint64_t pauses = 0;
    while (slow_received < n && 0 == slow_bad) {
        if (opal_timer_ns() > deadline_ns) {
            fail("timed out with %llu of %llu messages", (unsigned long long) slow_received,
                 (unsigned long long) n);
            return false;
        }
        uint64_t before = slow_received;
        (void) opal_progress();
        if (slow_received / 32 != before / 32) {
            /* The writer meets a full socket meanwhile; each reader at
             * its own pace. */
            usleep(1000 * my_rank);
            ++pauses;
        }
    }
    if (0 != slow_bad) {
        return false;
    }
    say("read %llu messages intact, in order (%llu pauses)", (unsigned long long) n,
        (unsigned long long) pauses);
    return send_am(0, TAG_DONE, "done", 4) && !broken;
}

/* Every rank sends n messages to every other, round robin, as fast as
 * the sockets take them, progressing only when a send is refused: a
 * sender must never wait for its own socket while the others do the
 * same (btl_tcp_free_list_max 1 leaves a send written in part without a
 * descriptor for its rest). */
static bool run_crossflood(const char *count)
{
    uint64_t n = strtoull(count, NULL, 10);
    uint32_t size = opal_proc_job_info()->size;
    if (size < 2 || size > 8) {
        fail("crossflood runs on 2 to 8 ranks, not %u", size);
        return false;
    }
    static uint8_t buf[16 + 30000];
    uint64_t busy = 0;
    slow_large = true;
    for (uint64_t k = 0; k < n && !broken; ++k) {
        size_t len = message_size(k);
        for (size_t i = 0; i < len; ++i) {
            buf[i] = slow_byte(k, i);
        }
        for (uint32_t peer = 0; peer < size; ++peer) {
            if (peer != my_rank && !send_counting(peer, TAG_SLOW, buf, len, &busy)) {
                return false;
            }
        }
    }
    uint64_t want = n * (size - 1);
    while (slow_received < want && 0 == slow_bad) {
        if (opal_timer_ns() > deadline_ns) {
            fail("timed out with %llu of %llu messages", (unsigned long long) slow_received,
                 (unsigned long long) want);
            return false;
        }
        (void) opal_progress();
    }
    if (0 != slow_bad) {
        return false;
    }
    for (uint32_t peer = 0; peer < size; ++peer) {
        if (peer != my_rank && !send_am(peer, TAG_DONE, "done", 4)) {
            return false;
        }
    }
    if (!flood_wait_done(size - 1)) {
        return false;
    }
    say("sent %llu and read %llu messages intact (%llu busy answers)", (unsigned long long) want,
        (unsigned long long) want, (unsigned long long) busy);
    return !broken;
}

/* -------------------------------------------------------- sleepyreader */

/* Once the connection is up (a hello each way), rank 1 sleeps while rank
 * 0 sends n eager messages, which wait in rank 1's socket; then rank 1
 * reads them in passes of btl_tcp_recv_budget bytes (set small by the
 * test). The read that empties the socket also spends the budget, and
 * the messages it brought must be handled in that pass: rank 0 sends
 * nothing more until rank 1 answers, so the socket will not wake the
 * connection again. */
/* What the modules hold toward rank 0 (mca_btl_base_mux_describe), in
 * buf; returns the bytes its tcp socket holds unread, or -1. */
static int describe_rank0(char *buf, size_t size)
{
    mca_btl_base_mux_describe(mca_btl_base_peer_get(0), buf, size);
    const char *at = strstr(buf, "socket: ");
    int unread = -1;
    if (NULL == at || 1 != sscanf(at, "socket: %d unread", &unread)) {
        return -1;
    }
    return unread;
}

static bool run_sleepyreader(const char *count)
{
    uint64_t n = strtoull(count, NULL, 10);
    if (0 == my_rank) {
        if (!send_am(1, TAG_DONE, "hello", 5) || !wait_for(&done_received, "rank 1's hello")) {
            return false;
        }
        uint8_t buf[16 + 997];
        for (uint64_t k = 0; k < n && !broken; ++k) {
            size_t len = slow_size(k);
            for (size_t i = 0; i < len; ++i) {
                buf[i] = slow_byte(k, i);
            }
            if (!send_am(1, TAG_SLOW, buf, len)) {
                return false;
            }
        }
        /* Rank 1's hello, then its answer. */
        if (!flood_wait_done(2)) {
            return false;
        }
        say("sent %llu messages to a sleeping reader", (unsigned long long) n);
        return !broken;
    }
    if (!wait_for(&done_received, "rank 0's hello") || !send_am(0, TAG_DONE, "hello", 5)) {
        return false;
    }
    usleep(300 * 1000);
    /* btl_dump's picture: the messages wait in the kernel, none in the
     * module. */
    char before[1024];
    int unread = describe_rank0(before, sizeof(before));
    say("before reading: %s", before);
    if (unread <= 0 || NULL == strstr(before, "tcp: connected; 0 queued (0 bytes); 0 put / get "
                                              "waiting; received 0 bytes not handled, between "
                                              "frames; socket: ")) {
        fail("the state before reading should show the messages in the socket alone: %s", before);
    }
    uint64_t woke = opal_timer_ns();
    while (slow_received < n && 0 == slow_bad) {
        if (opal_timer_ns() - woke > UINT64_C(20) * 1000000000u) {
            char now[1024];
            (void) describe_rank0(now, sizeof(now));
            fail("%llu of %llu messages handled 20 s after waking (they were in the socket); "
                 "toward rank 0: %s",
                 (unsigned long long) slow_received, (unsigned long long) n, now);
            return false;
        }
        (void) opal_progress();
    }
    if (0 != slow_bad) {
        return false;
    }
    char after[1024];
    if (0 != describe_rank0(after, sizeof(after)) ||
        NULL == strstr(after, "received 0 bytes not handled, between frames; socket: 0 unread")) {
        fail("the state after reading should show nothing left: %s", after);
    }
    say("read %llu messages intact after sleeping", (unsigned long long) n);
    return send_am(0, TAG_DONE, "done", 4) && !broken;
}

/* ----------------------------------------------------------- latecomer */

/* Pings rank 0 answered, rank 1's pongs, the answer that ends the game
 * (rank 0 sends it once rank 2's message is in). */
static size_t pings, pongs;
static bool stopped, stop_sent;

static void ping_cb(struct mca_btl_base_module_t *btl,
                    const mca_btl_base_receive_descriptor_t *desc)
{
    (void) btl;
    if (0 == my_rank) {
        ++pings;
        const char *answer = done_received ? "stop" : "pong";
        stop_sent = send_am(1, TAG_PING, answer, 4) && done_received;
    } else if (4 == desc->des_segments[0].seg_len &&
               0 == memcmp(desc->des_segments[0].seg_addr, "stop", 4)) {
        stopped = true;
    } else {
        ++pongs;
    }
}

static bool run_latecomer(void)
{
    if (3 != opal_proc_job_info()->size) {
        fail("latecomer runs on 3 ranks");
        return false;
    }
    /* The connection between ranks 0 and 1 is up before rank 2 starts. */
    if (1 == my_rank) {
        size_t before = pongs;
        if (!send_am(0, TAG_PING, "ping", 4)) {
            return false;
        }
        while (pongs == before && !broken) {
            if (opal_timer_ns() > deadline_ns) {
                fail("timed out waiting for the first pong");
                return false;
            }
            (void) opal_progress();
        }
    } else if (0 == my_rank && !wait_size(&pings, "the first ping")) {
        return false;
    }
    if (OPAL_SUCCESS != opal_fence(false)) {
        fail("fence");
        return false;
    }
    if (0 == my_rank) {
        /* Only rank 1's pings keep progress busy here: rank 2's
         * connection is seen by an epoll pass, or never. */
        if (!wait_for(&done_received, "rank 2's message")) {
            return false;
        }
        size_t at = pings;
        /* Rank 1 stops at the next answer; rank 2 waits for its own. */
        if (!send_am(2, TAG_DONE, "seen", 4) || !wait_for(&stop_sent, "rank 1's last ping")) {
            return false;
        }
        say("read rank 2's message after %zu pings", at);
        return !broken;
    }
    if (2 == my_rank) {
        usleep(100 * 1000);
        return send_am(0, TAG_DONE, "late", 4) && wait_for(&done_received, "rank 0's answer") &&
               !broken;
    }
    while (!stopped && !broken) {
        size_t before = pongs;
        if (!send_am(0, TAG_PING, "ping", 4)) {
            return false;
        }
        while (pongs == before && !stopped && !broken) {
            if (opal_timer_ns() > deadline_ns) {
                fail("timed out after %zu pongs (rank 0 never read rank 2's message)", pongs);
                return false;
            }
            (void) opal_progress();
        }
    }
    say("played %zu rounds until rank 0 had rank 2's message", pongs);
    return !broken;
}

/* -------------------------------------------------------------- forged */

typedef struct {
    bool done;
    int status;
} op_result_t;

static void rdma_cb(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, mca_btl_base_registration_handle_t *local_handle,
                    void *context, void *cbdata, int status)
{
    (void) btl;
    (void) endpoint;
    (void) local_address;
    (void) local_handle;
    (void) context;
    op_result_t *r = cbdata;
    r->status = status;
    r->done = true;
}

/* One get (or put) of size bytes at remote with handle; its status. */
static int transfer(bool get, void *local, mca_btl_base_registration_handle_t *lh, uint64_t remote,
                    mca_btl_base_registration_handle_t *rh, size_t size)
{
    mca_btl_base_mux_entry_t *e = route(0);
    op_result_t r = {false, 0};
    int rc = (get ? e->btl->btl_get : e->btl->btl_put)(
        e->btl, e->endpoint, local, remote, lh, rh, size, 0, MCA_BTL_NO_ORDER, rdma_cb, NULL, &r);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    return wait_for(&r.done, "a put / get to complete") ? r.status : OPAL_ERR_TIMEOUT;
}

#define REGION 4096

static bool run_forged(void)
{
    mca_btl_base_mux_entry_t *e = route(0 == my_rank ? 1 : 0);
    if (NULL == e || 0 != strcmp(e->btl->btl_component->btl_version.mca_component_name, "tcp")) {
        fail("the peer is not reached over tcp");
        return false;
    }
    size_t hsize = e->btl->btl_registration_handle_size;
    static uint8_t region[REGION];
    if (0 == my_rank) {
        for (size_t i = 0; i < REGION; ++i) {
            region[i] = (uint8_t) (i * 7 + 1);
        }
        mca_btl_base_registration_handle_t *h =
            e->btl->btl_register_mem(e->btl, NULL, region, REGION, MCA_BTL_REG_FLAG_REMOTE_READ);
        uint8_t msg[256];
        uint64_t address = (uint64_t) (uintptr_t) region;
        memcpy(msg, &address, sizeof(address));
        memcpy(msg + sizeof(address), h, hsize);
        if (!send_am(1, TAG_HANDLE, msg, sizeof(address) + hsize) ||
            !wait_for(&done_received, "rank 1 to finish")) {
            return false;
        }
        (void) e->btl->btl_deregister_mem(e->btl, h);
        return !broken;
    }
    if (!wait_size(&handle_len, "rank 0's handle")) {
        return false;
    }
    uint64_t remote;
    memcpy(&remote, handle_msg, sizeof(remote));
    uint8_t real[64], forged[64];
    memcpy(real, handle_msg + sizeof(remote), hsize);
    static uint8_t local[REGION];
    mca_btl_base_registration_handle_t *lh =
        e->btl->btl_register_mem(e->btl, NULL, local, REGION, MCA_BTL_REG_FLAG_ACCESS_ANY);
    /* The real handle works. */
    int rc = transfer(true, local, lh, remote + 100, (void *) real, 1000);
    if (OPAL_SUCCESS != rc) {
        fail("a get with the real handle: %s", opal_strerror(rc));
    }
    for (size_t i = 0; i < 1000; ++i) {
        if (local[i] != (uint8_t) ((i + 100) * 7 + 1)) {
            fail("byte %zu of the get is %u", i, local[i]);
            break;
        }
    }
    /* Another cookie: no such registration. */
    memcpy(forged, real, hsize);
    forged[0] ^= 0x5a;
    rc = transfer(true, local, lh, remote, (void *) forged, 16);
    if (OPAL_ERR_BAD_PARAM != rc) {
        fail("a get with a forged key completed with %s", opal_strerror_name(rc));
    }
    /* A handle that claims more than was registered: out of bounds (the
     * handle is btl/tcp's: key, base, size, each 8 bytes). */
    memcpy(forged, real, hsize);
    uint64_t big = 1 << 20;
    memcpy(forged + 16, &big, sizeof(big));
    rc = transfer(true, local, lh, remote + REGION, (void *) forged, 16);
    if (OPAL_ERR_BAD_PARAM != rc) {
        fail("a get past the region completed with %s", opal_strerror_name(rc));
    }
    /* A put into memory registered for reading only. */
    rc = transfer(false, local, lh, remote, (void *) real, 16);
    if (OPAL_ERR_PERM != rc) {
        fail("a put into read-only memory completed with %s", opal_strerror_name(rc));
    }
    /* The connection survived every refusal. */
    rc = transfer(true, local, lh, remote, (void *) real, 8);
    if (OPAL_SUCCESS != rc) {
        fail("a get after the refusals: %s", opal_strerror(rc));
    }
    (void) e->btl->btl_deregister_mem(e->btl, lh);
    say("forged handles refused: key, bounds, access");
    return send_am(0, TAG_DONE, "done", 4) && !broken;
}

/* Rank 1 leaves at once (its caller skips the last fence, as rank 0
 * does, which waits for it to be gone). */
static bool run_departed(void)
{
    if (1 == my_rank) {
        return true;
    }
    while (0 == closed_count[1] && !failed_peer[1]) {
        opal_progress();
        if (opal_timer_ns() > deadline_ns) {
            fail("rank 1 was neither closed nor dropped within the deadline");
            return false;
        }
    }
    /* Its exit is seen once: nothing more may come. */
    uint64_t settle = opal_timer_ns() + 500000000ull;
    while (opal_timer_ns() < settle) {
        opal_progress();
    }
    if (failed_peer[1] || 1 != closed_count[1]) {
        fail("rank 1: %u PEER_CLOSED, %s", closed_count[1],
             failed_peer[1] ? "and a failure" : "no failure");
        return false;
    }
    say("closed rank 1 once, no failure: %s", closed_info);
    return true;
}

int main(int argc, char **argv)
{
    static const char *const known[] = {"intruder",   "forged",    "sockopts",     "slowreader",
                                        "crossflood", "latecomer", "sleepyreader", "departed"};
    bool is_known = false;
    for (size_t i = 0; argc >= 2 && i < sizeof(known) / sizeof(known[0]); ++i) {
        is_known = is_known || 0 == strcmp(argv[1], known[i]);
    }
    if (!is_known || (0 == strcmp(argv[1], "intruder") && argc < 3) ||
        (0 == strcmp(argv[1], "sockopts") && argc < 6) ||
        ((0 == strcmp(argv[1], "slowreader") || 0 == strcmp(argv[1], "crossflood") ||
          0 == strcmp(argv[1], "sleepyreader")) &&
         argc < 3)) {
        fprintf(stderr, "usage: btl_tcp_rank intruder KIND | forged | sockopts IDLE INTVL "
                        "PROBES USER_MS | slowreader N | crossflood N | sleepyreader N | "
                        "latecomer | departed\n");
        return 2;
    }
    deadline_ns = opal_timer_ns() + UINT64_C(60) * 1000000000u;
    if (argc > 2 && 0 == strcmp(argv[2], "silent")) {
        (void) setenv("OPAL_MCA_btl_tcp_connect_timeout", "300", 1);
    }
    if (OPAL_SUCCESS != orte_init(&argc, &argv)) {
        return 2;
    }
    my_rank = opal_proc_job_info()->my_name.vpid;
    int status = 1;
    if (OPAL_SUCCESS == mca_btl_base_am_register(TAG_HANDLE, am_cb, NULL) &&
        OPAL_SUCCESS == mca_btl_base_am_register(TAG_DONE, am_cb, NULL) &&
        OPAL_SUCCESS == mca_btl_base_am_register(TAG_SLOW, slow_cb, NULL) &&
        OPAL_SUCCESS == mca_btl_base_am_register(TAG_PING, ping_cb, NULL) &&
        OPAL_SUCCESS == mca_btl_base_init(false, false)) {
        (void) mca_btl_base_register_error_cb(error_cb);
        if (OPAL_SUCCESS == opal_fence(true) && OPAL_SUCCESS == mca_btl_base_add_all_procs() &&
            OPAL_SUCCESS == opal_fence(false)) {
            bool ok = 0 == strcmp(argv[1], "forged")         ? run_forged()
                      : 0 == strcmp(argv[1], "latecomer")    ? run_latecomer()
                      : 0 == strcmp(argv[1], "sockopts")     ? run_sockopts(argv)
                      : 0 == strcmp(argv[1], "slowreader")   ? run_slowreader(argv[2])
                      : 0 == strcmp(argv[1], "crossflood")   ? run_crossflood(argv[2])
                      : 0 == strcmp(argv[1], "sleepyreader") ? run_sleepyreader(argv[2])
                      : 0 == strcmp(argv[1], "departed")     ? run_departed()
                                                             : run_intruder(argv[2]);
            if (0 != strcmp(argv[1], "departed")) {
                ok = OPAL_SUCCESS == opal_fence(false) && ok;
            }
            status = ok ? 0 : 1;
        }
        (void) mca_btl_base_finalize();
    }
    (void) orte_finalize();
    if (0 == status) {
        say("%s ok", argv[1]);
    }
    return status;
}
