/*
 * sm_floor: what a shared-memory ping-pong costs on this machine with no
 * library in the way, for contrib/perf/compare-mercury.sh. It puts a
 * number under Mercury's na+sm and our na/btl over btl/sm latencies: on a
 * virtual machine whose cores the host moves, all three move together.
 *
 * Two processes (fork) share one anonymous mapping holding a slot for
 * each direction, each slot on its own cache lines: a sequence number and
 * a payload. A message is the payload copied into the slot and the
 * sequence number stored (release); the receiver spins on the sequence
 * number (acquire), copies the payload out and answers the same way. The
 * figure is half the round trip, in microseconds, in opal_perf's layout
 * ('#' lines, then "size value" rows).
 *
 *   cc -O2 -o sm_floor sm_floor.c
 *   sm_floor [--sizes 8,64,512] [--iterations N] [--cores A,B]
 *
 * The parent runs on core A, the child on core B (default 0 and 1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZE  4096
#define MAX_SIZES 32
#define WARMUP    1000

typedef struct {
    _Alignas(64) _Atomic uint64_t seq;
    _Alignas(64) unsigned char payload[MAX_SIZE];
} slot_t;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: sm_floor [--sizes LIST] [--iterations N] [--cores A,B]\n"
            "  --sizes       payload bytes, comma-separated, each at most %d "
            "(default 8,64,512)\n"
            "  --iterations  round trips per size (default 100000)\n"
            "  --cores       the two processes' cores (default 0,1)\n",
            MAX_SIZE);
}

/* A whole decimal number in [min, max], or -1. */
static long parse_long(const char *s, long min, long max)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (0 != errno || end == s || '\0' != *end || v < min || v > max) {
        return -1;
    }
    return v;
}

static int parse_sizes(const char *arg, size_t *sizes)
{
    char *copy = strdup(arg), *save = NULL;
    int n = 0;
    if (NULL == copy) {
        return -1;
    }
    for (char *tok = strtok_r(copy, ",", &save); NULL != tok; tok = strtok_r(NULL, ",", &save)) {
        long v = parse_long(tok, 0, MAX_SIZE);
        if (v < 0 || n == MAX_SIZES) {
            fprintf(stderr,
                    "sm_floor: --sizes: '%s' is not a size from 0 to %d (at most %d sizes)\n", tok,
                    MAX_SIZE, MAX_SIZES);
            n = -1;
            break;
        }
        sizes[n++] = (size_t) v;
    }
    free(copy);
    return n;
}

static void bind_to(int core)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    if (0 != sched_setaffinity(0, sizeof(set), &set)) {
        fprintf(stderr, "sm_floor: cannot bind to core %d (%s); running unbound\n", core,
                strerror(errno));
    }
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec * 1e6 + (double) t.tv_nsec * 1e-3;
}

static void send_msg(slot_t *out, const unsigned char *buf, size_t size, uint64_t seq)
{
    memcpy(out->payload, buf, size);
    atomic_store_explicit(&out->seq, seq, memory_order_release);
}

static void recv_msg(slot_t *in, unsigned char *buf, size_t size, uint64_t seq)
{
    while (atomic_load_explicit(&in->seq, memory_order_acquire) != seq) {
    }
    memcpy(buf, in->payload, size);
}

int main(int argc, char **argv)
{
    size_t sizes[MAX_SIZES] = {8, 64, 512};
    int num_sizes = 3;
    long iterations = 100000;
    int cores[2] = {0, 1};
    for (int i = 1; i < argc; ++i) {
        const char *opt = argv[i];
        if (0 == strcmp(opt, "-h") || 0 == strcmp(opt, "--help")) {
            usage(stdout);
            return 0;
        }
        if (i + 1 == argc) {
            fprintf(stderr, "sm_floor: %s needs a value\n", opt);
            usage(stderr);
            return 2;
        }
        const char *val = argv[++i];
        if (0 == strcmp(opt, "--sizes")) {
            num_sizes = parse_sizes(val, sizes);
            if (num_sizes <= 0) {
                return 2;
            }
        } else if (0 == strcmp(opt, "--iterations")) {
            iterations = parse_long(val, 1, 1000000000L);
            if (iterations < 0) {
                fprintf(stderr, "sm_floor: --iterations: '%s' is not a count from 1 to 10^9\n",
                        val);
                return 2;
            }
        } else if (0 == strcmp(opt, "--cores")) {
            char tail = 0;
            if (2 != sscanf(val, "%d,%d%c", &cores[0], &cores[1], &tail) || cores[0] < 0 ||
                cores[1] < 0 || cores[0] >= CPU_SETSIZE || cores[1] >= CPU_SETSIZE) {
                fprintf(stderr, "sm_floor: --cores: '%s' is not two core numbers A,B\n", val);
                return 2;
            }
        } else {
            fprintf(stderr, "sm_floor: unknown option '%s'\n", opt);
            usage(stderr);
            return 2;
        }
    }

    slot_t *slots =
        mmap(NULL, 2 * sizeof(slot_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (MAP_FAILED == slots) {
        fprintf(stderr, "sm_floor: mmap of %zu bytes failed: %s\n", 2 * sizeof(slot_t),
                strerror(errno));
        return 1;
    }
    fflush(stdout);
    pid_t child = fork();
    if (child < 0) {
        fprintf(stderr, "sm_floor: fork failed: %s\n", strerror(errno));
        return 1;
    }
    const int me = 0 == child; /* 0: the parent, which measures */
    bind_to(cores[me]);
    slot_t *in = &slots[me], *out = &slots[!me];
    unsigned char buf[MAX_SIZE];
    memset(buf, me ? 0xb : 0xa, sizeof(buf));

    if (0 == me) {
        printf("# sm_floor: shared-memory ping-pong without a library, cores %d and %d\n"
               "# Size            Latency (us)\n",
               cores[0], cores[1]);
    }
    uint64_t seq = 0;
    for (int s = 0; s < num_sizes; ++s) {
        size_t size = sizes[s];
        double start = 0;
        for (long i = 0; i < WARMUP + iterations; ++i) {
            ++seq;
            if (0 == me) {
                if (WARMUP == i) {
                    start = now_us();
                }
                send_msg(out, buf, size, seq);
                recv_msg(in, buf, size, seq);
            } else {
                recv_msg(in, buf, size, seq);
                send_msg(out, buf, size, seq);
            }
        }
        if (0 == me) {
            printf("%-10zu %17.3f\n", size, (now_us() - start) / (double) iterations / 2.0);
            fflush(stdout);
        }
    }
    if (me) {
        _exit(0);
    }
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || 0 != WEXITSTATUS(status)) {
        fprintf(stderr, "sm_floor: the child process did not end cleanly\n");
        return 1;
    }
    return 0;
}
