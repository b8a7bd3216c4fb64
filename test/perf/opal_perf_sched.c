/*
 * opal_perf_sched: what the sched framework costs and buys.
 *
 *   empty     create + schedule + run + complete of an empty task (fifo)
 *   chain     a chain of N tasks, each waiting for the one before
 *   fan       fan-out / fan-in: a root, W tasks waiting for it, a join
 *             waiting for them, the join the next root; N tasks in all
 *   pool      throughput of fixed work through pool with 1 and 2 workers
 *             against the same work called inline
 *   latency   high-priority tasks under a flood of low-priority ones:
 *             median and 99th percentile wait, prio against fifo
 *
 * Usage: opal_perf_sched [empty|chain|fan|pool|latency ...] (all by
 * default). Run from the build tree (plugins are found there), on a quiet
 * machine: every figure is a median or a percentile of one run.
 */
#include "opal/opal_config.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opal/mca/sched/sched.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "test/perf/opal_perf_support.h"

#define CHECK(call)                                                                                \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (OPAL_SUCCESS != rc_) {                                                                 \
            fprintf(stderr, "opal_perf_sched: %s failed: %s\n", #call, opal_strerror(rc_));        \
            exit(EXIT_FAILURE);                                                                    \
        }                                                                                          \
    } while (0)

static opal_sched_t *start(const char *policy, const char *workers)
{
    if (NULL == getenv("OPAL_MCA_mca_base_component_path")) {
        setenv("OPAL_MCA_mca_base_component_path", SCHED_PERF_PLUGIN_DIRS, 1);
    }
    setenv("OPAL_MCA_sched", policy, 1);
    if (NULL != workers) {
        setenv("OPAL_MCA_sched_pool_workers", workers, 1);
    }
    CHECK(opal_sched_init());
    opal_sched_t *sched = NULL;
    CHECK(opal_sched_create(&sched));
    return sched;
}

static void stop(opal_sched_t *sched)
{
    CHECK(opal_sched_destroy(&sched));
    CHECK(opal_sched_finalize());
    unsetenv("OPAL_MCA_sched_pool_workers");
}

static void drain(opal_sched_t *sched)
{
    while (!opal_sched_check_complete(sched)) {
        if (0 == opal_sched_progress(sched)) {
            /* The work is on pool's workers: leave them the CPU. */
            sched_yield();
        }
    }
}

static int empty_body(opal_sched_task_t *task)
{
    return opal_sched_task_complete(task, OPAL_SUCCESS);
}

static size_t empty_loop(void *arg, size_t n)
{
    opal_sched_t *sched = arg;
    for (size_t i = 0; i < n; ++i) {
        opal_sched_task_t *t;
        CHECK(opal_sched_task_create(sched, empty_body, 0, &t));
        CHECK(opal_sched_task_schedule(t, 0));
        (void) opal_sched_progress(sched);
    }
    return n;
}

/* The same, scheduling a batch of 64 before one progress call runs them. */
static size_t empty_batch_loop(void *arg, size_t n)
{
    opal_sched_t *sched = arg;
    size_t done = 0;
    while (done < n) {
        for (size_t j = 0; j < 64; ++j) {
            opal_sched_task_t *t;
            CHECK(opal_sched_task_create(sched, empty_body, 0, &t));
            CHECK(opal_sched_task_schedule(t, 0));
        }
        (void) opal_sched_progress(sched);
        done += 64;
    }
    return done;
}

/* CPU time of the calling thread: on a shared machine the wall clock
 * also counts the time other processes held the CPU. */
static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static double cpu_per_op(perf_fn_t fn, void *arg, size_t n)
{
    double ns[PERF_REPETITIONS];
    (void) fn(arg, n / 10 + 1);
    for (int r = 0; r < PERF_REPETITIONS; ++r) {
        uint64_t start = thread_cpu_ns();
        size_t done = fn(arg, n);
        ns[r] = (double) (thread_cpu_ns() - start) / (double) done;
    }
    return perf_median(ns, PERF_REPETITIONS);
}

static void bench_empty(void)
{
    opal_sched_t *sched = start("fifo", NULL);
    perf_print_header("empty task, fifo (create + schedule + run + complete)");
    perf_print_row("one task per progress call (wall)", 0, perf_measure(empty_loop, sched, 1000000),
                   -1);
    perf_print_row("one task per progress call (thread CPU)", 0,
                   cpu_per_op(empty_loop, sched, 1000000), -1);
    perf_print_row("64 tasks per progress call (wall)", 0,
                   perf_measure(empty_batch_loop, sched, 1000000), -1);
    perf_print_row("64 tasks per progress call (thread CPU)", 0,
                   cpu_per_op(empty_batch_loop, sched, 1000000), -1);
    stop(sched);
}

static uint64_t process_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* A chain or a fan of n tasks; returns wall ns per task, and the CPU time
 * of the whole process (every thread) per task in *cpu. */
static double run_graph(const char *policy, size_t n, size_t width, double *cpu)
{
    opal_sched_t *sched = start(policy, NULL);
    uint64_t begin = opal_timer_ns(), cpu_begin = process_cpu_ns();
    opal_sched_task_t *prev = NULL;
    size_t made = 0, since = 0;
    while (made < n) {
        opal_sched_task_t *root;
        CHECK(opal_sched_task_create(sched, NULL, 0, &root));
        if (NULL != prev) {
            CHECK(opal_sched_task_depend(root, 1, &prev));
            opal_sched_task_release(prev);
        }
        ++made;
        opal_sched_task_t *join = root;
        if (width > 0) {
            CHECK(opal_sched_task_create(sched, NULL, 0, &join));
            for (size_t i = 0; i < width; ++i) {
                opal_sched_task_t *mid;
                CHECK(opal_sched_task_create(sched, NULL, 0, &mid));
                CHECK(opal_sched_task_depend(mid, 1, &root));
                CHECK(opal_sched_task_depend(join, 1, &mid));
                CHECK(opal_sched_task_schedule(mid, 0));
            }
            made += width + 1;
            since += width + 1;
            CHECK(opal_sched_task_schedule(root, 0));
        }
        ++since;
        /* Keep the last task alive: the next one depends on it. */
        opal_sched_task_retain(join);
        CHECK(opal_sched_task_schedule(join, 0));
        prev = join;
        /* Run what is ready now and then: the graph is built as it runs,
         * as a client's would be, and memory stays bounded. */
        if (since >= 4096) {
            while (opal_sched_progress(sched) > 0) {
            }
            since = 0;
        }
    }
    opal_sched_task_release(prev);
    drain(sched);
    double ns = (double) (opal_timer_ns() - begin) / (double) made;
    *cpu = (double) (process_cpu_ns() - cpu_begin) / (double) made;
    stop(sched);
    return ns;
}

static void bench_graphs(bool chain)
{
    const size_t n = 1000000;
    perf_print_header(chain ? "chain of 1M tasks (build + run, per task)"
                            : "fan-out / fan-in, 1M tasks, width 1000 (build + run, per task)");
    const char *policies[] = {"fifo", "prio", "pool"};
    for (int i = 0; i < 3; ++i) {
        double wall[3], cpu[3];
        for (int r = 0; r < 3; ++r) {
            wall[r] = run_graph(policies[i], n, chain ? 0 : 1000, &cpu[r]);
        }
        char what[64];
        snprintf(what, sizeof(what), "%s (wall)", policies[i]);
        perf_print_row(what, 0, perf_median(wall, 3), -1);
        snprintf(what, sizeof(what), "%s (CPU, all threads)", policies[i]);
        perf_print_row(what, 0, perf_median(cpu, 3), -1);
    }
}

/* About 2 us of arithmetic the compiler cannot drop. */
static void work(uint64_t *acc)
{
    uint64_t x = *acc;
    for (int i = 0; i < 2000; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    }
    *acc = x;
}

static int work_body(opal_sched_task_t *task)
{
    uint64_t acc = (uint64_t) (uintptr_t) task;
    work(&acc);
    perf_escape(&acc);
    return OPAL_SUCCESS;
}

static double pool_rate(const char *workers, size_t n, double *cpu)
{
    opal_sched_t *sched = start("pool", workers);
    uint64_t begin = opal_timer_ns(), cpu_begin = process_cpu_ns();
    for (size_t i = 0; i < n; ++i) {
        opal_sched_task_t *t;
        CHECK(opal_sched_task_create(sched, work_body, OPAL_SCHED_TASK_AUTO, &t));
        CHECK(opal_sched_task_schedule(t, 0));
    }
    drain(sched);
    double ns = (double) (opal_timer_ns() - begin) / (double) n;
    *cpu = (double) (process_cpu_ns() - cpu_begin) / (double) n;
    stop(sched);
    return ns;
}

static void bench_pool(void)
{
    const size_t n = 200000;
    perf_print_header("pool throughput, ~2 us of work per task (ns per task)");
    uint64_t acc = 1, begin = opal_timer_ns(), cpu_begin = process_cpu_ns();
    for (size_t i = 0; i < n; ++i) {
        work(&acc);
    }
    perf_escape(&acc);
    double inline_ns = (double) (opal_timer_ns() - begin) / (double) n;
    double inline_cpu = (double) (process_cpu_ns() - cpu_begin) / (double) n;
    perf_print_row("inline (wall)", 0, inline_ns, 0);
    perf_print_row("inline (CPU)", 0, inline_cpu, -1);
    const char *counts[] = {"1", "2"};
    for (int i = 0; i < 2; ++i) {
        double cpu;
        char what[64];
        double wall = pool_rate(counts[i], n, &cpu);
        snprintf(what, sizeof(what), "pool, %s worker%s (wall)", counts[i], i ? "s" : "");
        perf_print_row(what, 0, wall, inline_ns);
        snprintf(what, sizeof(what), "pool, %s worker%s (CPU, all threads)", counts[i],
                 i ? "s" : "");
        perf_print_row(what, 0, cpu, -1);
    }
}

/* The flood: each low-priority task does ~1 us of work and schedules its
 * successor, so the queue stays FLOOD deep; every EVERY-th one also
 * schedules a high-priority task stamped with its scheduling time. */
#define FLOOD   1000
#define EVERY   50
#define SAMPLES 2000

typedef struct flood_t {
    opal_sched_t *sched;
    size_t lows;
    size_t highs;
    double waits[SAMPLES];
} flood_t;

static int high_body(opal_sched_task_t *task)
{
    uint64_t *arg = opal_sched_task_arg(task, 2 * sizeof(uint64_t));
    flood_t *f = (flood_t *) (uintptr_t) arg[0];
    if (f->highs < SAMPLES) {
        f->waits[f->highs++] = (double) (opal_timer_ns() - arg[1]);
    }
    return OPAL_SUCCESS;
}

static int low_body(opal_sched_task_t *task)
{
    flood_t *f = *(flood_t **) opal_sched_task_arg(task, sizeof(flood_t *));
    uint64_t acc = 1;
    for (int i = 0; i < 1000 / 2; ++i) {
        acc = acc * 6364136223846793005ull + 1;
    }
    perf_escape(&acc);
    if (f->highs >= SAMPLES) {
        return OPAL_SUCCESS;
    }
    opal_sched_task_t *t;
    CHECK(opal_sched_task_create(f->sched, low_body, OPAL_SCHED_TASK_AUTO, &t));
    *(flood_t **) opal_sched_task_arg(t, sizeof(f)) = f;
    CHECK(opal_sched_task_set_priority(t, 3, 0));
    CHECK(opal_sched_task_schedule(t, 0));
    if (0 == ++f->lows % EVERY) {
        CHECK(opal_sched_task_create(f->sched, high_body, OPAL_SCHED_TASK_AUTO, &t));
        uint64_t *arg = opal_sched_task_arg(t, 2 * sizeof(uint64_t));
        arg[0] = (uint64_t) (uintptr_t) f;
        arg[1] = opal_timer_ns();
        CHECK(opal_sched_task_set_priority(t, 0, 0));
        CHECK(opal_sched_task_schedule(t, 0));
    }
    return OPAL_SUCCESS;
}

static void flood_latency(const char *policy, double *p50, double *p99)
{
    static flood_t f;
    memset(&f, 0, sizeof(f));
    f.sched = start(policy, NULL);
    for (int i = 0; i < FLOOD; ++i) {
        opal_sched_task_t *t;
        CHECK(opal_sched_task_create(f.sched, low_body, OPAL_SCHED_TASK_AUTO, &t));
        *(flood_t **) opal_sched_task_arg(t, sizeof(flood_t *)) = &f;
        CHECK(opal_sched_task_set_priority(t, 3, 0));
        CHECK(opal_sched_task_schedule(t, 0));
    }
    drain(f.sched);
    qsort(f.waits, f.highs, sizeof(double), perf_compare_double);
    *p50 = f.waits[f.highs / 2];
    *p99 = f.waits[f.highs * 99 / 100];
    stop(f.sched);
}

static void bench_latency(void)
{
    double fifo50, fifo99, prio50, prio99;
    flood_latency("fifo", &fifo50, &fifo99);
    flood_latency("prio", &prio50, &prio99);
    printf("\nhigh-priority wait under a flood of %d low-priority tasks of ~1 us\n", FLOOD);
    printf("%-10s %12s %12s\n", "policy", "p50 ns", "p99 ns");
    printf("%-10s %12.0f %12.0f\n", "fifo", fifo50, fifo99);
    printf("%-10s %12.0f %12.0f\n", "prio", prio50, prio99);
    printf("p99: prio is %.1fx lower than fifo\n", fifo99 / prio99);
}

int main(int argc, char **argv)
{
    const char *all[] = {"empty", "chain", "fan", "pool", "latency"};
    int n = argc > 1 ? argc - 1 : 5;
    for (int i = 0; i < n; ++i) {
        const char *what = argc > 1 ? argv[i + 1] : all[i];
        if (0 == strcmp(what, "empty")) {
            bench_empty();
        } else if (0 == strcmp(what, "chain")) {
            bench_graphs(true);
        } else if (0 == strcmp(what, "fan")) {
            bench_graphs(false);
        } else if (0 == strcmp(what, "pool")) {
            bench_pool();
        } else if (0 == strcmp(what, "latency")) {
            bench_latency();
        } else {
            fprintf(stderr,
                    "opal_perf_sched: unknown benchmark \"%s\" (empty, chain, fan, pool, "
                    "latency)\n",
                    what);
            return EXIT_FAILURE;
        }
    }
    return EXIT_SUCCESS;
}
