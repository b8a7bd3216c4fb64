/*
 * fbox_model: btl/sm's fast box alone, between two processes, to see what
 * a message costs in the caches without the rest of the library
 * (docs/btl-sm.md, "A message of two to four lines"). It uses the real
 * btl_sm_fbox.h: reserve, sm_fbox_fill or two plain copies, commit (with
 * the sender's ahead request), peek, consume, publish, and the waiting
 * reader's watch. A ping-pong of half round trips in microseconds, in
 * opal_perf's layout ('#' lines, then "size value" rows).
 *
 * Each look that finds nothing is followed by --work loads of the
 * process's own memory, standing in for the rest of a progress round
 * (default 20, with which the model showed the steps btl/sm showed on
 * the Intel host of 3 Dec); with a tight spin (--work 0) the write order
 * shows much less.
 *
 *   cc -std=c11 -O2 -I. -I_build -o fbox_model contrib/perf/fbox_model.c \
 *       opal/mca/btl/sm/btl_sm_fbox.c          # from the source tree, configured
 *   fbox_model [--sizes 8,64,96,512] [--iterations N] [--cores A,B]
 *              [--order fill|plain] [--watch on|off] [--work N]
 *
 * --order fill writes as btl/sm's sendi does (sm_fbox_fill: the bytes past
 * the header's line first); plain copies the btl's 8-byte header, then
 * the payload, in address order (sendi before 3 Dec). --watch off leaves
 * out the waiting reader's PREFETCHT0 of the further lines.
 */
#include "contrib/perf/floor.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "opal/mca/btl/sm/btl_sm_fbox.h"

#define RING_SIZE 4096u
#define MAX_SIZE  (RING_SIZE / 4 - SM_FBOX_HDR_SIZE)
#define BTL_HDR   8u /* the part sendi gets as its header */
#define WARMUP    1000
#define JUNK      8192

static struct {
    int fill;  /* 1: sm_fbox_fill, 0: plain copies */
    int watch; /* the waiting reader's watch */
    long work; /* loads after each empty look */
} model = {.fill = 1, .watch = 1, .work = 20};

static unsigned char junk[JUNK];
static volatile unsigned sink;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: fbox_model [--sizes LIST] [--iterations N] [--cores A,B] [--order fill|plain]\n"
            "                  [--watch on|off] [--work N]\n"
            "  --sizes       payload bytes, comma-separated, %u to %u (default 8,64,96,512)\n"
            "  --iterations  round trips per size (default 200000)\n"
            "  --cores       the two processes' cores (default 0,1)\n"
            "  --order       fill: as btl/sm writes a message now; plain: header then payload\n"
            "  --watch       on: a reader waiting for an answer watches its further lines\n"
            "  --work        loads of local memory after each empty look (default 20)\n",
            BTL_HDR, MAX_SIZE);
}

/* val as one of two words into *out (1 for yes); 1, or -1 after a message. */
static int on_off(const char *opt, const char *val, const char *yes, const char *no, int *out)
{
    if (0 == strcmp(val, yes) || 0 == strcmp(val, no)) {
        *out = 0 == strcmp(val, yes);
        return 1;
    }
    fprintf(stderr, "fbox_model: %s: '%s' is not %s or %s\n", opt, val, yes, no);
    return -1;
}

static int model_option(const char *opt, const char *val)
{
    if (0 == strcmp(opt, "--order")) {
        return on_off(opt, val, "fill", "plain", &model.fill);
    }
    if (0 == strcmp(opt, "--watch")) {
        return on_off(opt, val, "on", "off", &model.watch);
    }
    if (0 == strcmp(opt, "--work")) {
        model.work = floor_parse_long(val, 0, 100000);
        if (model.work < 0) {
            fprintf(stderr, "fbox_model: --work: '%s' is not a count from 0 to 100000\n", val);
            return -1;
        }
        return 1;
    }
    return 0;
}

static void idle_work(void)
{
    unsigned s = 0;
    for (long i = 0; i < model.work; ++i) {
        s += junk[(size_t) (i * 64) % JUNK];
    }
    sink += s;
}

/* One message of size bytes (the first BTL_HDR of buf as sendi's header). */
static void send_msg(sm_fbox_out_t *out, const unsigned char *buf, uint32_t size)
{
    uint32_t pos;
    while ((pos = sm_fbox_reserve(out, size)) >= SM_FBOX_FULL) {
        if (SM_FBOX_CORRUPT == pos) {
            fprintf(stderr, "fbox_model: the ring's read position is impossible\n");
            _exit(1);
        }
    }
    if (model.fill) {
        sm_fbox_fill(out, pos, buf, BTL_HDR, buf + BTL_HDR, size - BTL_HDR);
    } else {
        uint8_t *dst = out->ring + pos + SM_FBOX_HDR_SIZE;
        memcpy(dst, buf, BTL_HDR);
        memcpy(dst + BTL_HDR, buf + BTL_HDR, size - BTL_HDR);
    }
    sm_fbox_commit(out, pos, size, 1, SM_MSG_AM);
}

static void recv_msg(sm_fbox_in_t *in, unsigned char *buf, uint32_t size)
{
    sm_fbox_msg_t msg;
    int rc;
    while (0 == (rc = sm_fbox_peek(in, &msg))) {
        if (model.watch) {
            sm_fbox_watch_ahead(in);
        }
        idle_work();
    }
    if (rc < 0) {
        fprintf(stderr, "fbox_model: the ring holds an impossible header\n");
        _exit(1);
    }
    if (msg.size != size) {
        fprintf(stderr, "fbox_model: a message of %u bytes where %u were sent\n", msg.size, size);
        _exit(1);
    }
    memcpy(buf, msg.payload, msg.size);
    sm_fbox_consume(in, &msg);
    sm_fbox_publish(in);
}

int main(int argc, char **argv)
{
    floor_options_t o = {.sizes = {8, 64, 96, 512},
                         .num_sizes = 4,
                         .size_min = BTL_HDR,
                         .size_max = MAX_SIZE,
                         .iterations = 200000,
                         .cores = {0, 1}};
    int rc = floor_parse_options("fbox_model", &o, argc, argv, usage, model_option);
    if (rc >= 0) {
        return rc;
    }
    /* A box each way, each its control line and ring, a page apart. */
    const size_t box = 2 * RING_SIZE;
    uint8_t *mem = mmap(NULL, 2 * box, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (MAP_FAILED == mem) {
        fprintf(stderr, "fbox_model: mmap of %zu bytes failed: %s\n", 2 * box, strerror(errno));
        return 1;
    }
    sm_fbox_out_t outs[2];
    mca_btl_sm_fbox_format(&outs[0], mem, RING_SIZE);
    mca_btl_sm_fbox_format(&outs[1], mem + box, RING_SIZE);
    fflush(stdout);
    pid_t child = fork();
    if (child < 0) {
        fprintf(stderr, "fbox_model: fork failed: %s\n", strerror(errno));
        return 1;
    }
    const int me = 0 == child; /* 0: the parent, which measures */
    floor_bind_to("fbox_model", o.cores[me]);
    sm_fbox_out_t *out = &outs[me];
    sm_fbox_in_t in;
    sm_fbox_in_attach(&in, mem + (me ? 0 : box), RING_SIZE);
    unsigned char buf[MAX_SIZE];
    memset(buf, me ? 0xb : 0xa, sizeof(buf));
    if (0 == me) {
        printf("# fbox_model: btl/sm's fast box alone, cores %d and %d, order %s, watch %s, "
               "work %ld\n"
               "# Size            Latency (us)\n",
               o.cores[0], o.cores[1], model.fill ? "fill" : "plain", model.watch ? "on" : "off",
               model.work);
    }
    for (int s = 0; s < o.num_sizes; ++s) {
        const uint32_t size = (uint32_t) o.sizes[s];
        double start = 0;
        for (long i = 0; i < WARMUP + o.iterations; ++i) {
            if (0 == me) {
                if (WARMUP == i) {
                    start = floor_now_us();
                }
                send_msg(out, buf, size);
                recv_msg(&in, buf, size);
            } else {
                recv_msg(&in, buf, size);
                send_msg(out, buf, size);
            }
        }
        if (0 == me) {
            printf("%-10u %17.3f\n", size, (floor_now_us() - start) / (double) o.iterations / 2.0);
            fflush(stdout);
        }
    }
    if (me) {
        _exit(0);
    }
    return floor_wait_child("fbox_model", child, "child process");
}
