/*
 * opal_perf_hash: what a lookup in opal_hash_table_t costs.
 *
 * For uint64 keys and byte-string keys, in tables of 1K and 1M entries,
 * times lookups of keys that are present (hit) and absent (miss), in a
 * random order so the large tables really leave the cache. Prints ns per
 * lookup, the median of several runs. The lookups are independent, so the
 * CPU overlaps the cache misses of consecutive ones: this is the cost per
 * lookup in a stream, lower than one isolated lookup's latency.
 *
 *   opal_perf_hash [runs] [lookups per run]      (defaults 7, 2^20)
 */
#include "opal/opal_config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/class/opal_hash_table.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"

#define STRING_KEY_LEN 24

/* A fixed-seed generator, so every run measures the same keys. */
static uint64_t rng_state = UINT64_C(0x2545f4914f6cdd1d);

static uint64_t rng_next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Keys present in the table are even, absent ones odd: misses are real
 * misses, not collisions with present keys. */
static uint64_t present_key(uint64_t r)
{
    return r & ~UINT64_C(1);
}

static uint64_t absent_key(uint64_t r)
{
    return r | 1;
}

/* A name-like string key of STRING_KEY_LEN bytes: a shared prefix (as MCA
 * names and proc names have) and a varying tail. */
static void string_key(char *buf, uint64_t r)
{
    snprintf(buf, STRING_KEY_LEN + 1, "btl.peer.%015llx",
             (unsigned long long) (r & UINT64_C(0xfffffffffffffff)));
}

static volatile uintptr_t sink;

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/* The median and the best of n samples. On a shared machine the best is
 * the run least disturbed by others; the median is the figure to quote. */
typedef struct {
    double median;
    double best;
} stat_t;

static stat_t summarise(double *v, int n)
{
    qsort(v, (size_t) n, sizeof(double), compare_double);
    stat_t st = {.median = 0 == n % 2 ? (v[n / 2 - 1] + v[n / 2]) / 2 : v[n / 2], .best = v[0]};
    return st;
}

typedef struct {
    size_t entries;
    size_t lookups;
    int runs;
} bench_t;

/* ns per lookup of queries[0..lookups) against ht (uint64 keys), median
 * over the runs. expect_hits checks the table says what it should. */
static stat_t time_uint64(const opal_hash_table_t *ht, const uint64_t *queries, const bench_t *b,
                          bool expect_hits)
{
    double samples[64];
    for (int run = 0; run < b->runs; ++run) {
        uintptr_t acc = 0;
        size_t found = 0;
        uint64_t t0 = opal_timer_ns();
        for (size_t i = 0; i < b->lookups; ++i) {
            void *v;
            if (OPAL_SUCCESS == opal_hash_table_get_value_uint64(ht, queries[i], &v)) {
                acc += (uintptr_t) v;
                ++found;
            }
        }
        uint64_t t1 = opal_timer_ns();
        sink = acc;
        if (found != (expect_hits ? b->lookups : 0)) {
            fprintf(stderr, "opal_perf_hash: %zu of %zu uint64 lookups found, expected %s\n", found,
                    b->lookups, expect_hits ? "all" : "none");
            exit(EXIT_FAILURE);
        }
        samples[run] = (double) (t1 - t0) / (double) b->lookups;
    }
    return summarise(samples, b->runs);
}

static stat_t time_string(const opal_hash_table_t *ht, const char *queries, const bench_t *b,
                          bool expect_hits)
{
    double samples[64];
    for (int run = 0; run < b->runs; ++run) {
        uintptr_t acc = 0;
        size_t found = 0;
        uint64_t t0 = opal_timer_ns();
        for (size_t i = 0; i < b->lookups; ++i) {
            void *v;
            const char *key = queries + i * STRING_KEY_LEN;
            if (OPAL_SUCCESS == opal_hash_table_get_value_ptr(ht, key, STRING_KEY_LEN, &v)) {
                acc += (uintptr_t) v;
                ++found;
            }
        }
        uint64_t t1 = opal_timer_ns();
        sink = acc;
        if (found != (expect_hits ? b->lookups : 0)) {
            fprintf(stderr, "opal_perf_hash: %zu of %zu string lookups found, expected %s\n", found,
                    b->lookups, expect_hits ? "all" : "none");
            exit(EXIT_FAILURE);
        }
        samples[run] = (double) (t1 - t0) / (double) b->lookups;
    }
    return summarise(samples, b->runs);
}

static int bench_uint64(const bench_t *b, stat_t *hit, stat_t *miss)
{
    int rc = OPAL_ERR_OUT_OF_RESOURCE;
    opal_hash_table_t ht;
    OBJ_CONSTRUCT(&ht, opal_hash_table_t);
    uint64_t *keys = malloc(b->entries * sizeof(uint64_t));
    uint64_t *queries = malloc(b->lookups * sizeof(uint64_t));
    if (NULL == keys || NULL == queries) {
        goto out;
    }
    for (size_t i = 0; i < b->entries; ++i) {
        keys[i] = present_key(rng_next());
        rc = opal_hash_table_set_value_uint64(&ht, keys[i], (void *) (uintptr_t) (i + 1));
        if (OPAL_SUCCESS != rc) {
            goto out;
        }
    }
    for (size_t i = 0; i < b->lookups; ++i) {
        queries[i] = keys[rng_next() % b->entries];
    }
    *hit = time_uint64(&ht, queries, b, true);
    for (size_t i = 0; i < b->lookups; ++i) {
        queries[i] = absent_key(rng_next());
    }
    *miss = time_uint64(&ht, queries, b, false);
    rc = OPAL_SUCCESS;
out:
    free(queries);
    free(keys);
    OBJ_DESTRUCT(&ht);
    return rc;
}

static int bench_string(const bench_t *b, stat_t *hit, stat_t *miss)
{
    int rc = OPAL_ERR_OUT_OF_RESOURCE;
    char buf[STRING_KEY_LEN + 1];
    opal_hash_table_t ht;
    OBJ_CONSTRUCT(&ht, opal_hash_table_t);
    uint64_t *seeds = malloc(b->entries * sizeof(uint64_t));
    char *queries = malloc(b->lookups * STRING_KEY_LEN);
    if (NULL == seeds || NULL == queries) {
        goto out;
    }
    for (size_t i = 0; i < b->entries; ++i) {
        seeds[i] = present_key(rng_next());
        string_key(buf, seeds[i]);
        rc = opal_hash_table_set_value_ptr(&ht, buf, STRING_KEY_LEN, (void *) (uintptr_t) (i + 1));
        if (OPAL_SUCCESS != rc) {
            goto out;
        }
    }
    for (size_t i = 0; i < b->lookups; ++i) {
        string_key(buf, seeds[rng_next() % b->entries]);
        memcpy(queries + i * STRING_KEY_LEN, buf, STRING_KEY_LEN);
    }
    *hit = time_string(&ht, queries, b, true);
    for (size_t i = 0; i < b->lookups; ++i) {
        string_key(buf, absent_key(rng_next()));
        memcpy(queries + i * STRING_KEY_LEN, buf, STRING_KEY_LEN);
    }
    *miss = time_string(&ht, queries, b, false);
    rc = OPAL_SUCCESS;
out:
    free(queries);
    free(seeds);
    OBJ_DESTRUCT(&ht);
    return rc;
}

static long parse_arg(const char *arg, const char *what, long lo, long hi)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if ('\0' == *arg || '\0' != *end || v < lo || v > hi) {
        fprintf(stderr, "opal_perf_hash: %s must be an integer in [%ld, %ld], not '%s'\n", what, lo,
                hi, arg);
        exit(EXIT_FAILURE);
    }
    return v;
}

static void print_row(const char *keys, size_t entries, stat_t hit, stat_t miss)
{
    printf("%-20s %9zu %8.2f %8.2f %8.2f %8.2f\n", keys, entries, hit.median, hit.best, miss.median,
           miss.best);
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = {1024, 1024 * 1024};
    bench_t b = {.runs = 7, .lookups = (size_t) 1 << 20};
    if (argc > 1) {
        b.runs = (int) parse_arg(argv[1], "runs", 1, 63);
    }
    if (argc > 2) {
        b.lookups = (size_t) parse_arg(argv[2], "lookups per run", 1, 1L << 26);
    }

    printf(
        "opal_perf_hash: ns per lookup, median (and best) of %d runs of %zu random-order lookups\n",
        b.runs, b.lookups);
    printf("%-20s %9s %8s %8s %8s %8s\n", "keys", "entries", "hit", "(best)", "miss", "(best)");
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
        stat_t hit = {0, 0}, miss = {0, 0};
        b.entries = sizes[i];
        if (OPAL_SUCCESS != bench_uint64(&b, &hit, &miss)) {
            fprintf(stderr, "opal_perf_hash: out of memory at %zu uint64 entries\n", b.entries);
            return EXIT_FAILURE;
        }
        print_row("uint64", b.entries, hit, miss);
    }
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
        stat_t hit = {0, 0}, miss = {0, 0};
        b.entries = sizes[i];
        if (OPAL_SUCCESS != bench_string(&b, &hit, &miss)) {
            fprintf(stderr, "opal_perf_hash: out of memory at %zu string entries\n", b.entries);
            return EXIT_FAILURE;
        }
        print_row("bytes (24)", b.entries, hit, miss);
    }
    opal_class_finalize();
    return EXIT_SUCCESS;
}
