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

#endif /* OPAL_UTIL_OPAL_TIMER_H */
