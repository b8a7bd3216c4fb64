/*
 * A monotonic clock in nanoseconds, for timeouts and benchmarks. Never goes
 * backwards and is not affected by changes to the wall-clock time.
 */
#ifndef OPAL_UTIL_OPAL_TIMER_H
#define OPAL_UTIL_OPAL_TIMER_H

#include "opal/opal_config.h"

#include <stdint.h>
#include <time.h>

/* Nanoseconds since an arbitrary fixed point (CLOCK_MONOTONIC). */
static inline uint64_t opal_timer_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* CLOCK_MONOTONIC as of the kernel's last tick: the timeline of
 * opal_timer_ns(), behind it by less than opal_timer_coarse_resolution_ns().
 * A few nanoseconds to read where a hypervisor makes opal_timer_ns() cost
 * about fifty; for deadlines that a tick of lateness does not hurt. */
static inline uint64_t opal_timer_coarse_ns(void)
{
#ifdef CLOCK_MONOTONIC_COARSE
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
#else
    return opal_timer_ns();
#endif
}

/* How far opal_timer_coarse_ns() may lag opal_timer_ns(), in nanoseconds. */
static inline uint64_t opal_timer_coarse_resolution_ns(void)
{
#ifdef CLOCK_MONOTONIC_COARSE
    struct timespec ts;
    if (0 == clock_getres(CLOCK_MONOTONIC_COARSE, &ts)) {
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
    }
    /* No coarse clock after all: the longest tick Linux has. */
    return 10000000u;
#else
    return 0;
#endif
}

/* The clock's resolution in nanoseconds. */
static inline uint64_t opal_timer_resolution_ns(void)
{
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

#endif /* OPAL_UTIL_OPAL_TIMER_H */
