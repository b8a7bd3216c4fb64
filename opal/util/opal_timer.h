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

/* The clock's resolution in nanoseconds. */
static inline uint64_t opal_timer_resolution_ns(void)
{
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* The same clock as of its last tick: a few ns to read where
 * opal_timer_ns() reads the TSC (40 ns in this project's VM), never ahead
 * of opal_timer_ns() and behind it by less than a tick
 * (opal_timer_coarse_resolution_ns()). For deadlines of seconds, where a
 * few milliseconds do not matter. Without a coarse clock it is
 * opal_timer_ns(), with a resolution of 0. */
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

/* opal_timer_coarse_ns()'s tick (4 ms at HZ=250). */
static inline uint64_t opal_timer_coarse_resolution_ns(void)
{
#ifdef CLOCK_MONOTONIC_COARSE
    struct timespec ts;
    if (0 == clock_getres(CLOCK_MONOTONIC_COARSE, &ts)) {
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
    }
#endif
    return 0;
}

#endif /* OPAL_UTIL_OPAL_TIMER_H */
