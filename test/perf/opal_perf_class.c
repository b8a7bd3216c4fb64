/*
 * opal_perf_class: what the object system and the containers cost, next
 * to the C library's allocator.
 *
 *   opal_perf_class [iterations]      (default 2000000 per measurement)
 *
 * Allocation benchmarks keep between 1 and 32 objects alive at a time (the
 * batch size follows a fixed pseudo-random sequence), write to each one
 * and let its pointer escape, as real code does; the same sequence drives
 * malloc + free, OBJ_NEW + OBJ_RELEASE and the free list, so the rows
 * compare like with like. Each figure is the median of PERF_REPETITIONS
 * runs, in nanoseconds per allocate + release pair (or push + pop pair).
 * Figures from a debug build (--enable-debug, -O0) are not meaningful.
 */
#include "opal/opal_config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/class/opal_fifo.h"
#include "opal/class/opal_free_list.h"
#include "opal/class/opal_lifo.h"
#include "opal/class/opal_object.h"
#include "opal/threads/opal_mutex.h"
#include "opal/util/opal_error.h"
#include "test/perf/opal_perf_support.h"

enum { MAX_BATCH = 32, NBATCHES = 1024, PREFILL = 8 };

static unsigned batch_sizes[NBATCHES];
static void *slots[MAX_BATCH];

static void make_batch_sizes(void)
{
    uint32_t x = 2463534242u;
    for (int i = 0; i < NBATCHES; ++i) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        batch_sizes[i] = 1 + x % MAX_BATCH;
    }
}

static void *checked_malloc(size_t size)
{
    void *p = malloc(size);
    if (NULL == p) {
        fprintf(stderr, "opal_perf_class: out of memory\n");
        exit(EXIT_FAILURE);
    }
    return p;
}

/* Writes the first and last byte of an object's own bytes. */
static inline void touch(char *first, char *last, unsigned value)
{
    *first = (char) value;
    *last = (char) value;
    perf_escape(first);
}

/* ---- malloc + free ---- */

static size_t bench_malloc(void *arg, size_t n)
{
    size_t size = *(const size_t *) arg;
    size_t done = 0;
    for (unsigned b = 0; done < n; ++b) {
        unsigned k = batch_sizes[b % NBATCHES];
        for (unsigned i = 0; i < k; ++i) {
            char *p = checked_malloc(size);
            touch(p, p + size - 1, i);
            slots[i] = p;
        }
        for (unsigned i = 0; i < k; ++i) {
            free(slots[i]);
        }
        done += k;
    }
    return done;
}

/* ---- OBJ_NEW + OBJ_RELEASE of a 64-byte object (non-debug layout) ---- */

typedef struct {
    opal_object_t super;
    uint32_t flags;
    char data[44];
} perf_obj_t;

static void perf_obj_construct(perf_obj_t *obj)
{
    obj->flags = 0;
}

OBJ_CLASS_DECLARATION(perf_obj_t);
OBJ_CLASS_INSTANCE(perf_obj_t, opal_object_t, perf_obj_construct, NULL);

static size_t bench_obj(void *arg, size_t n)
{
    (void) arg;
    size_t done = 0;
    for (unsigned b = 0; done < n; ++b) {
        unsigned k = batch_sizes[b % NBATCHES];
        for (unsigned i = 0; i < k; ++i) {
            perf_obj_t *obj = OBJ_NEW(perf_obj_t);
            if (NULL == obj) {
                fprintf(stderr, "opal_perf_class: out of memory\n");
                exit(EXIT_FAILURE);
            }
            touch(&obj->data[0], &obj->data[sizeof(obj->data) - 1], i);
            slots[i] = obj;
        }
        for (unsigned i = 0; i < k; ++i) {
            perf_obj_t *obj = slots[i];
            OBJ_RELEASE(obj);
        }
        done += k;
    }
    return done;
}

/* ---- free list get + return ---- */

typedef struct {
    opal_free_list_t fl;
    size_t size;
} fl_bench_t;

static size_t bench_free_list(void *arg, size_t n)
{
    fl_bench_t *bench = arg;
    const size_t header = sizeof(opal_free_list_item_t);
    size_t done = 0;
    for (unsigned b = 0; done < n; ++b) {
        unsigned k = batch_sizes[b % NBATCHES];
        for (unsigned i = 0; i < k; ++i) {
            opal_free_list_item_t *item = opal_free_list_get(&bench->fl);
            char *p = (char *) item;
            touch(p + header, p + bench->size - 1, i);
            slots[i] = item;
        }
        for (unsigned i = 0; i < k; ++i) {
            opal_free_list_return(&bench->fl, slots[i]);
        }
        done += k;
    }
    return done;
}

static size_t bench_free_list_mt(void *arg, size_t n)
{
    fl_bench_t *bench = arg;
    const size_t header = sizeof(opal_free_list_item_t);
    size_t done = 0;
    for (unsigned b = 0; done < n; ++b) {
        unsigned k = batch_sizes[b % NBATCHES];
        for (unsigned i = 0; i < k; ++i) {
            opal_free_list_item_t *item = opal_free_list_get_mt(&bench->fl);
            char *p = (char *) item;
            touch(p + header, p + bench->size - 1, i);
            slots[i] = item;
        }
        for (unsigned i = 0; i < k; ++i) {
            opal_free_list_return_mt(&bench->fl, slots[i]);
        }
        done += k;
    }
    return done;
}

static void run_allocation(size_t iterations)
{
    perf_print_header("Allocate + release, 1-32 objects alive, each touched "
                      "(baseline: malloc + free of the same size)");
    static const size_t sizes[] = {64, 256, 4096};
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s) {
        size_t size = sizes[s];
        double base = perf_measure(bench_malloc, &size, iterations);
        perf_print_row("malloc + free", size, base, 0);

        /* The item's own bytes follow its header (larger in debug builds
         * than 64 bytes hold). */
        size_t item_size =
            size > sizeof(opal_free_list_item_t) + 1 ? size : sizeof(opal_free_list_item_t) + 2;
        fl_bench_t bench = {.size = item_size};
        OBJ_CONSTRUCT(&bench.fl, opal_free_list_t);
        int rc = opal_free_list_init(&bench.fl, item_size, OPAL_CACHE_LINE_SIZE,
                                     OBJ_CLASS(opal_free_list_item_t), 0, 0, MAX_BATCH, 0,
                                     MAX_BATCH, NULL, NULL, NULL);
        if (OPAL_SUCCESS != rc) {
            fprintf(stderr, "opal_perf_class: opal_free_list_init: %s\n", opal_strerror(rc));
            exit(EXIT_FAILURE);
        }
        perf_print_row("free_list get + return (no threads: _st)", size,
                       perf_measure(bench_free_list, &bench, iterations), base);
        perf_print_row("free_list get_mt + return_mt (atomic)", size,
                       perf_measure(bench_free_list_mt, &bench, iterations), base);
        OBJ_DESTRUCT(&bench.fl);

        if (64 == size) {
            perf_print_row("OBJ_NEW + OBJ_RELEASE", sizeof(perf_obj_t),
                           perf_measure(bench_obj, NULL, iterations), base);
        }
    }
}

/* ---- lifo and fifo push + pop ---- */

typedef struct {
    opal_list_item_t super;
    char data[48];
} perf_item_t;
OBJ_CLASS_DECLARATION(perf_item_t);
OBJ_CLASS_INSTANCE(perf_item_t, opal_list_item_t, NULL, NULL);

static opal_lifo_t lifo;
static opal_fifo_t fifo;
static perf_item_t items[PREFILL + 2];
/* The items outside the container between runs (a pop may return another
 * item than the one pushed). */
static opal_list_item_t *held[2];

static size_t bench_lifo(void *arg, size_t n)
{
    (void) arg;
    opal_list_item_t *it = held[0];
    for (size_t i = 0; i < n; ++i) {
        opal_lifo_push(&lifo, it);
        it = opal_lifo_pop(&lifo);
        perf_escape(it);
    }
    held[0] = it;
    return n;
}

static size_t bench_lifo_st(void *arg, size_t n)
{
    (void) arg;
    opal_list_item_t *it = held[0];
    for (size_t i = 0; i < n; ++i) {
        opal_lifo_push_st(&lifo, it);
        it = opal_lifo_pop_st(&lifo);
        perf_escape(it);
    }
    held[0] = it;
    return n;
}

static size_t bench_fifo(void *arg, size_t n)
{
    (void) arg;
    opal_list_item_t *it = held[0];
    for (size_t i = 0; i < n; ++i) {
        opal_fifo_push(&fifo, it);
        it = opal_fifo_pop(&fifo);
        perf_escape(it);
    }
    held[0] = it;
    return n;
}

/* Two threads push and pop on one lifo; each always holds one item between
 * a pop and the next push, so a pop never finds the lifo empty. */
typedef struct {
    opal_list_item_t *item;
    size_t n;
    pthread_barrier_t *start;
} pair_arg_t;

static void *lifo_pair_body(void *arg)
{
    pair_arg_t *pa = arg;
    opal_list_item_t *it = pa->item;
    pthread_barrier_wait(pa->start);
    for (size_t i = 0; i < pa->n; ++i) {
        opal_lifo_push(&lifo, it);
        it = opal_lifo_pop(&lifo);
    }
    pa->item = it;
    return NULL;
}

static size_t bench_lifo_two_threads(void *arg, size_t n)
{
    (void) arg;
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, 2);
    pair_arg_t pa[2] = {{held[0], n, &start}, {held[1], n, &start}};
    pthread_t t;
    if (0 != pthread_create(&t, NULL, lifo_pair_body, &pa[1])) {
        fprintf(stderr, "opal_perf_class: pthread_create failed\n");
        exit(EXIT_FAILURE);
    }
    lifo_pair_body(&pa[0]);
    pthread_join(t, NULL);
    pthread_barrier_destroy(&start);
    held[0] = pa[0].item;
    held[1] = pa[1].item;
    return n; /* wall time per pair, as each thread sees it */
}

static void run_lifo_fifo(size_t iterations)
{
    perf_print_header("Push + pop of one item (the container holds 8 more)");
    OBJ_CONSTRUCT(&lifo, opal_lifo_t);
    OBJ_CONSTRUCT(&fifo, opal_fifo_t);
    for (int i = 0; i < PREFILL + 2; ++i) {
        OBJ_CONSTRUCT(&items[i], perf_item_t);
    }
    for (int i = 0; i < PREFILL; ++i) {
        opal_lifo_push(&lifo, &items[i].super);
    }
    held[0] = &items[PREFILL].super;
    held[1] = &items[PREFILL + 1].super;
    perf_print_row("lifo push + pop (atomic, 1 thread)", 0,
                   perf_measure(bench_lifo, NULL, iterations), -1);
    perf_print_row("lifo push_st + pop_st (no atomics)", 0,
                   perf_measure(bench_lifo_st, NULL, iterations), -1);
    perf_print_row("lifo push + pop (atomic, 2 threads, per thread)", 0,
                   perf_measure(bench_lifo_two_threads, NULL, iterations), -1);
    while (NULL != opal_lifo_pop(&lifo)) {
    }
    for (int i = 0; i < PREFILL; ++i) {
        opal_fifo_push(&fifo, &items[i].super);
    }
    perf_print_row("fifo push + pop (atomic, 1 thread)", 0,
                   perf_measure(bench_fifo, NULL, iterations), -1);
    while (NULL != opal_fifo_pop(&fifo)) {
    }
    for (int i = 0; i < PREFILL + 2; ++i) {
        OBJ_DESTRUCT(&items[i]);
    }
    OBJ_DESTRUCT(&fifo);
    OBJ_DESTRUCT(&lifo);
}

int main(int argc, char **argv)
{
    size_t iterations = 2000000;
    if (argc > 1) {
        char *end;
        unsigned long long v = strtoull(argv[1], &end, 10);
        if ('\0' != *end || 0 == v) {
            fprintf(stderr, "usage: %s [iterations > 0]\n", argv[0]);
            return EXIT_FAILURE;
        }
        iterations = (size_t) v;
    }
    make_batch_sizes();
    printf("opal_perf_class: median of %d runs of %zu operations, ns per pair%s%s\n",
           PERF_REPETITIONS, iterations, OPAL_ENABLE_DEBUG ? " [DEBUG BUILD: not meaningful]" : "",
           OPAL_HAVE_ATOMIC_CAS_128 ? "" : " [no 128-bit CAS: locked pops]");
    run_allocation(iterations);
    run_lifo_fifo(iterations);
    opal_class_finalize();
    return EXIT_SUCCESS;
}
