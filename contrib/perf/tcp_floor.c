/*
 * tcp_floor: how fast one TCP connection over loopback moves bulk data on
 * this machine with no library in the way, for contrib/perf/compare-
 * mercury-rpc.sh and compare-mercury.sh. It puts a reference beside
 * Mercury's ofi+tcp and our bulk bandwidths over tcp: a stack that moves
 * its bytes through one connection does the same copies and system calls
 * and more. A reference, not a bound: how the bytes are cut into send()
 * calls alone moved it by about 15% (--send-max; 256 KiB was about the
 * best of 64 KiB to whole chunks of 1 MiB here), and a stack may cut
 * them better.
 *
 * Two processes (fork) share a connection to 127.0.0.1, TCP_NODELAY, the
 * kernel's default buffer sizes, non-blocking sockets polled in a loop (as
 * the stacks busy-poll). A round is what one rpc-bw RPC does: the receiver
 * (the parent, the client) sends an 8-byte request; the sender (the child,
 * the server) writes --window chunks of the size, each from its own place
 * in a buffer of window x size bytes, and the receiver reads each into its
 * own place in its own such buffer. Both buffers are written before the
 * clock runs. The figure is the bytes of the chunks over the time of the
 * rounds, at the receiver, in MB/s (10^6 bytes), in opal_perf's layout
 * ('#' lines, then "size value" rows).
 *
 *   cc -O2 -o tcp_floor tcp_floor.c
 *   tcp_floor [--sizes 65536,1048576] [--window N] [--iterations N]
 *             [--send-max BYTES] [--cores A,B]
 *
 * The sender runs on core A, the receiver on core B (default 0 and 1, as
 * the comparisons bind their servers and clients).
 */
#include "floor.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_SIZE   (64L << 20)
#define MAX_BYTES  (1L << 30) /* window x size, per process */
#define MAX_WINDOW 1024

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tcp_floor [--sizes LIST] [--window N] [--iterations N] [--send-max BYTES]\n"
            "                 [--cores A,B]\n"
            "  --sizes       chunk bytes, comma-separated, each from 1 to %ld (default "
            "65536,262144,1048576,4194304)\n"
            "  --window      chunks per round (default 64); window x size at most %ld bytes\n"
            "  --iterations  timed rounds per size (default 100), after a tenth as many "
            "untimed\n"
            "  --send-max    bytes per send() at most (default 262144; 0: a chunk at once)\n"
            "  --cores       the sender's and the receiver's cores (default 0,1)\n",
            MAX_SIZE, MAX_BYTES);
}

/* Bytes per send() at most (0: no limit). */
static size_t send_max = 262144;

/* Writes all n bytes, spinning while the socket is full; -1 on an error
 * (errno set), 0 when done. */
static int send_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, 0 != send_max && n > send_max ? send_max : n, MSG_NOSIGNAL);
        if (w > 0) {
            p += w;
            n -= (size_t) w;
        } else if (w < 0 && EAGAIN != errno && EWOULDBLOCK != errno && EINTR != errno) {
            return -1;
        }
    }
    return 0;
}

/* Reads exactly n bytes, spinning while none are there; -1 on an error
 * or the peer's close (errno 0 then), 0 when done. */
static int recv_all(int fd, unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t r = recv(fd, p, n, 0);
        if (r > 0) {
            p += r;
            n -= (size_t) r;
        } else if (0 == r) {
            errno = 0;
            return -1;
        } else if (EAGAIN != errno && EWOULDBLOCK != errno && EINTR != errno) {
            return -1;
        }
    }
    return 0;
}

static const char *why(void)
{
    return 0 == errno ? "the peer closed the connection" : strerror(errno);
}

/* A connected pair over 127.0.0.1: *a the connecting end, *b the accepted
 * one. */
static int connect_pair(int *a, int *b)
{
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(addr);
    int l = socket(AF_INET, SOCK_STREAM, 0);
    *a = socket(AF_INET, SOCK_STREAM, 0);
    if (l < 0 || *a < 0 || 0 != bind(l, (struct sockaddr *) &addr, sizeof(addr)) ||
        0 != listen(l, 1) || 0 != getsockname(l, (struct sockaddr *) &addr, &len) ||
        0 != connect(*a, (struct sockaddr *) &addr, sizeof(addr)) ||
        (*b = accept(l, NULL, NULL)) < 0) {
        fprintf(stderr, "tcp_floor: cannot connect over 127.0.0.1: %s\n", strerror(errno));
        return -1;
    }
    close(l);
    return 0;
}

static int tune(int fd)
{
    int one = 1;
    int flags = fcntl(fd, F_GETFL);
    if (0 != setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) || flags < 0 ||
        0 != fcntl(fd, F_SETFL, flags | O_NONBLOCK)) {
        fprintf(stderr, "tcp_floor: cannot set up the socket: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

/* The child: answers each request (a chunk size, 0 to stop) with window
 * chunks of that size, out of buf (window chunks of at most largest
 * bytes). */
static int sender(int fd, long window, uint64_t largest, unsigned char *buf)
{
    for (;;) {
        uint64_t size;
        if (0 != recv_all(fd, (unsigned char *) &size, sizeof(size))) {
            fprintf(stderr, "tcp_floor: the sender's receive failed: %s\n", why());
            return 1;
        }
        if (0 == size) {
            return 0;
        }
        if (size > largest) {
            fprintf(stderr, "tcp_floor: the sender was asked for chunks of %llu bytes\n",
                    (unsigned long long) size);
            return 1;
        }
        for (long c = 0; c < window; ++c) {
            if (0 != send_all(fd, buf + (size_t) c * size, size)) {
                fprintf(stderr, "tcp_floor: the sender's send failed: %s\n", why());
                return 1;
            }
        }
    }
}

/* The parent: rounds of each size, timed after the warm-up. */
static int receiver(int fd, const long *sizes, int num_sizes, long window, long iterations,
                    unsigned char *buf)
{
    long warmup = iterations / 10 > 0 ? iterations / 10 : 1;
    for (int s = 0; s < num_sizes; ++s) {
        uint64_t size = (uint64_t) sizes[s];
        double start = 0;
        for (long i = 0; i < warmup + iterations; ++i) {
            if (warmup == i) {
                start = floor_now_us();
            }
            if (0 != send_all(fd, (const unsigned char *) &size, sizeof(size))) {
                fprintf(stderr, "tcp_floor: the receiver's request failed: %s\n", why());
                return 1;
            }
            for (long c = 0; c < window; ++c) {
                if (0 != recv_all(fd, buf + (size_t) c * size, size)) {
                    fprintf(stderr, "tcp_floor: the receiver's receive failed: %s\n", why());
                    return 1;
                }
            }
        }
        double us = floor_now_us() - start;
        printf("%-10llu %17.2f\n", (unsigned long long) size,
               (double) size * (double) window * (double) iterations / (us > 0 ? us : 1));
        fflush(stdout);
    }
    uint64_t stop = 0;
    return 0 == send_all(fd, (const unsigned char *) &stop, sizeof(stop)) ? 0 : 1;
}

/* Chunks per round (--window). */
static long round_chunks = 64;

/* tcp_floor's own options, for floor_parse_options. */
static int extra_option(const char *opt, const char *val)
{
    if (0 == strcmp(opt, "--window")) {
        round_chunks = floor_parse_long(val, 1, MAX_WINDOW);
        if (round_chunks < 0) {
            fprintf(stderr, "tcp_floor: --window: '%s' is not a count from 1 to %d\n", val,
                    MAX_WINDOW);
            return -1;
        }
        return 1;
    }
    if (0 == strcmp(opt, "--send-max")) {
        long v = floor_parse_long(val, 0, MAX_SIZE);
        if (v < 0) {
            fprintf(stderr, "tcp_floor: --send-max: '%s' is not a size from 0 to %ld\n", val,
                    MAX_SIZE);
            return -1;
        }
        send_max = (size_t) v;
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    floor_options_t o = {.sizes = {65536, 262144, 1048576, 4194304},
                         .num_sizes = 4,
                         .size_min = 1,
                         .size_max = MAX_SIZE,
                         .iterations = 100,
                         .cores = {0, 1}};
    int parsed = floor_parse_options("tcp_floor", &o, argc, argv, usage, extra_option);
    if (parsed >= 0) {
        return parsed;
    }
    const long *sizes = o.sizes, iterations = o.iterations, window = round_chunks;
    const int num_sizes = o.num_sizes, *cores = o.cores;
    long largest = 0;
    for (int s = 0; s < num_sizes; ++s) {
        largest = sizes[s] > largest ? sizes[s] : largest;
    }
    if (largest > MAX_BYTES / window) {
        fprintf(stderr,
                "tcp_floor: a window of %ld chunks of %ld bytes is more than %ld bytes per "
                "process\n",
                window, largest, MAX_BYTES);
        return 2;
    }
    size_t bytes = (size_t) (largest * window);
    /* Page-aligned, as the stacks' benchmarks allocate theirs. */
    unsigned char *buf = NULL;
    if (0 != posix_memalign((void **) &buf, 4096, bytes)) {
        fprintf(stderr, "tcp_floor: cannot allocate %zu bytes\n", bytes);
        return 1;
    }
    int client, server;
    if (0 != connect_pair(&client, &server) || 0 != tune(client) || 0 != tune(server)) {
        return 1;
    }
    fflush(stdout);
    pid_t child = fork();
    if (child < 0) {
        fprintf(stderr, "tcp_floor: fork failed: %s\n", strerror(errno));
        return 1;
    }
    if (0 == child) {
        close(client);
        floor_bind_to("tcp_floor", cores[0]);
        memset(buf, 0xa, bytes); /* its pages in place before the clock runs */
        _exit(sender(server, window, (uint64_t) largest, buf));
    }
    close(server);
    floor_bind_to("tcp_floor", cores[1]);
    memset(buf, 0xb, bytes);
    printf("# tcp_floor: one TCP connection over 127.0.0.1 without a library, %ld chunks per "
           "round, at most %zu bytes per send, sender on core %d, receiver on core %d\n"
           "# Size            Bandwidth (MB/s)\n",
           window, send_max, cores[0], cores[1]);
    int rc = receiver(client, sizes, num_sizes, window, iterations, buf);
    if (0 != rc) {
        kill(child, SIGTERM);
    }
    close(client);
    if (0 != floor_wait_child("tcp_floor", child, "sender")) {
        rc = 1;
    }
    free(buf);
    return rc;
}
