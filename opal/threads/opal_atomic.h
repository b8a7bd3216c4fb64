/*
 * Atomics: thin, explicitly ordered wrappers over C11 <stdatomic.h>, plus a
 * 128-bit compare-and-swap for the ABA-safe LIFO and FIFO where the CPU has
 * one (OPAL_HAVE_ATOMIC_CAS_128).
 *
 * Each wrapper names its memory order. Callers pick the weakest order that
 * is correct and say, in a comment at the call, what it pairs with.
 */
#ifndef OPAL_THREADS_OPAL_ATOMIC_H
#define OPAL_THREADS_OPAL_ATOMIC_H

#include "opal/opal_config.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef _Atomic int32_t opal_atomic_int32_t;
typedef _Atomic uint32_t opal_atomic_uint32_t;
typedef _Atomic int64_t opal_atomic_int64_t;
typedef _Atomic uint64_t opal_atomic_uint64_t;
typedef _Atomic size_t opal_atomic_size_t;
typedef _Atomic intptr_t opal_atomic_intptr_t;
typedef _Atomic bool opal_atomic_bool_t;

/* Fences. */
static inline void opal_atomic_mb(void)
{
    atomic_thread_fence(memory_order_seq_cst);
}
static inline void opal_atomic_rmb(void)
{
    atomic_thread_fence(memory_order_acquire);
}
static inline void opal_atomic_wmb(void)
{
    atomic_thread_fence(memory_order_release);
}

/* Lets a sibling hyperthread run while a caller spins. */
static inline void opal_atomic_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

/* Arithmetic returning the new value, sequentially consistent (reference
 * counts and other values whose update must order with what follows). */
static inline int32_t opal_atomic_add_fetch_32(opal_atomic_int32_t *addr, int32_t delta)
{
    return atomic_fetch_add(addr, delta) + delta;
}
static inline int64_t opal_atomic_add_fetch_64(opal_atomic_int64_t *addr, int64_t delta)
{
    return atomic_fetch_add(addr, delta) + delta;
}
static inline size_t opal_atomic_add_fetch_size_t(opal_atomic_size_t *addr, size_t delta)
{
    return atomic_fetch_add(addr, delta) + delta;
}
static inline size_t opal_atomic_sub_fetch_size_t(opal_atomic_size_t *addr, size_t delta)
{
    return atomic_fetch_sub(addr, delta) - delta;
}

/* Relaxed counters: statistics and values read only after a join. */
static inline int64_t opal_atomic_fetch_add_64_relaxed(opal_atomic_int64_t *addr, int64_t delta)
{
    return atomic_fetch_add_explicit(addr, delta, memory_order_relaxed);
}

/* Compare-and-swap; on failure *expected receives the current value. */
static inline bool opal_atomic_compare_exchange_strong_32(opal_atomic_int32_t *addr,
                                                          int32_t *expected, int32_t desired)
{
    return atomic_compare_exchange_strong(addr, expected, desired);
}
static inline bool opal_atomic_compare_exchange_strong_64(opal_atomic_int64_t *addr,
                                                          int64_t *expected, int64_t desired)
{
    return atomic_compare_exchange_strong(addr, expected, desired);
}
static inline bool opal_atomic_compare_exchange_strong_ptr(opal_atomic_intptr_t *addr,
                                                           intptr_t *expected, intptr_t desired)
{
    return atomic_compare_exchange_strong(addr, expected, desired);
}

/* Swap, returning the old value. */
static inline intptr_t opal_atomic_swap_ptr(opal_atomic_intptr_t *addr, intptr_t value)
{
    return atomic_exchange(addr, value);
}

/*
 * 128-bit compare-and-swap on a 16-byte aligned value, used for a pointer
 * paired with a counter (the ABA guard of the LIFO and FIFO). Callers read
 * such a value half by half with 64-bit atomic loads: a torn read is
 * harmless because the CAS that follows validates both halves together.
 */
#if OPAL_HAVE_ATOMIC_CAS_128

typedef unsigned __int128 opal_int128_t;

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define OPAL_ATOMIC_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define OPAL_ATOMIC_TSAN 1
#endif

static inline bool opal_atomic_compare_exchange_strong_128(opal_int128_t *addr,
                                                           opal_int128_t *expected,
                                                           opal_int128_t desired)
{
#if defined(__x86_64__) && !defined(OPAL_ATOMIC_TSAN)
    /* cmpxchg16b is a full barrier on x86. Written as asm so that neither
     * -mcx16 nor libatomic is needed by the library or its users. */
    uint64_t lo = (uint64_t) *expected, hi = (uint64_t) (*expected >> 64);
    bool ok;
    __asm__ __volatile__("lock cmpxchg16b %1\n\t"
                         "sete %0"
                         : "=q"(ok), "+m"(*addr), "+a"(lo), "+d"(hi)
                         : "b"((uint64_t) desired), "c"((uint64_t) (desired >> 64))
                         : "memory", "cc");
    *expected = ((opal_int128_t) hi << 64) | lo;
    return ok;
#else
    /* ThreadSanitizer cannot see inside asm; the builtin is instrumented. */
    return __atomic_compare_exchange_n(addr, expected, desired, false, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
#endif
}

#endif /* OPAL_HAVE_ATOMIC_CAS_128 */

#endif /* OPAL_THREADS_OPAL_ATOMIC_H */
