/*
 * What the micro-benchmarks in test/perf share: a median of repeated
 * measurements, a way to keep the compiler from deleting the work being
 * measured, and one table format.
 */
#ifndef OPAL_TEST_PERF_OPAL_PERF_SUPPORT_H
#define OPAL_TEST_PERF_OPAL_PERF_SUPPORT_H

#include "opal/opal_config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "opal/util/opal_timer.h"

/* Repetitions of each measurement; the median is reported. */
#define PERF_REPETITIONS 9

/* Makes p look used and its memory read and written, so that a malloc /
 * free pair (or any other work) cannot be optimised away. */
static inline void perf_escape(void *p)
{
    __asm__ __volatile__("" : : "g"(p) : "memory");
}

static inline int perf_compare_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* The median of n values (sorts them). */
static inline double perf_median(double *values, size_t n)
{
    qsort(values, n, sizeof(*values), perf_compare_double);
    return 0 == n % 2 ? (values[n / 2 - 1] + values[n / 2]) / 2 : values[n / 2];
}

/* A measured loop: does about `iterations` operations and returns how many
 * it did. */
typedef size_t (*perf_fn_t)(void *arg, size_t iterations);

/* Runs fn PERF_REPETITIONS times (after one shorter warm-up run); returns
 * the median nanoseconds per operation. */
static inline double perf_measure(perf_fn_t fn, void *arg, size_t iterations)
{
    double ns[PERF_REPETITIONS];
    (void) fn(arg, iterations / 10 + 1); /* warm caches, slabs and the allocator */
    for (int r = 0; r < PERF_REPETITIONS; ++r) {
        uint64_t start = opal_timer_ns();
        size_t done = fn(arg, iterations);
        ns[r] = (double) (opal_timer_ns() - start) / (double) done;
    }
    return perf_median(ns, PERF_REPETITIONS);
}

static inline void perf_print_header(const char *title)
{
    printf("\n%s\n", title);
    printf("%-46s %8s %10s %12s\n", "operation", "size", "ns/op", "vs baseline");
    printf("%-46s %8s %10s %12s\n", "---------", "----", "-----", "-----------");
}

/* One row. baseline_ns > 0 adds "N.Nx faster" (or slower) relative to it;
 * 0 marks the row as the baseline; < 0 leaves the column empty. */
static inline void perf_print_row(const char *what, size_t size, double ns, double baseline_ns)
{
    char size_text[32] = "";
    if (0 != size) {
        snprintf(size_text, sizeof(size_text), "%zu B", size);
    }
    if (baseline_ns > 0) {
        double ratio = baseline_ns / ns;
        printf("%-46s %8s %10.1f %7.1fx %s\n", what, size_text, ns, ratio >= 1 ? ratio : 1 / ratio,
               ratio >= 1 ? "faster" : "slower");
    } else {
        printf("%-46s %8s %10.1f %12s\n", what, size_text, ns,
               0 == baseline_ns ? "(baseline)" : "");
    }
}

#endif /* OPAL_TEST_PERF_OPAL_PERF_SUPPORT_H */
