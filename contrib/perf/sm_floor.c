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
#include "floor.h"

#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_SIZE 4096
#define WARMUP   1000

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
    floor_options_t o = {.sizes = {8, 64, 512},
                         .num_sizes = 3,
                         .size_min = 0,
                         .size_max = MAX_SIZE,
                         .iterations = 100000,
                         .cores = {0, 1}};
    int rc = floor_parse_options("sm_floor", &o, argc, argv, usage, NULL);
    if (rc >= 0) {
        return rc;
    }
    const long *sizes = o.sizes, iterations = o.iterations;
    const int num_sizes = o.num_sizes, *cores = o.cores;

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
    floor_bind_to("sm_floor", cores[me]);
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
        size_t size = (size_t) sizes[s];
        double start = 0;
        for (long i = 0; i < WARMUP + iterations; ++i) {
            ++seq;
            if (0 == me) {
                if (WARMUP == i) {
                    start = floor_now_us();
                }
                send_msg(out, buf, size, seq);
                recv_msg(in, buf, size, seq);
            } else {
                recv_msg(in, buf, size, seq);
                send_msg(out, buf, size, seq);
            }
        }
        if (0 == me) {
            printf("%-10zu %17.3f\n", size, (floor_now_us() - start) / (double) iterations / 2.0);
            fflush(stdout);
        }
    }
    if (me) {
        _exit(0);
    }
    return floor_wait_child("sm_floor", child, "child process");
}
