/*
 * The hybrid logical clock (rpc_hlc.h). One process-wide word: the last
 * timestamp given or seen. Threads move it with a compare-and-swap; a
 * process without threads with a load and a store.
 */
#include "opal/opal_config.h"

#include <stdatomic.h>
#include <time.h>

#include "opal/mca/rpc/base/rpc_base_internal.h"
#include "opal/mca/rpc/rpc_hlc.h"
#include "opal/threads/opal_mutex.h"
#include "opal/util/opal_error.h"

static _Atomic uint64_t hlc_last;
static _Atomic uint64_t hlc_epsilon = UINT64_C(1000000000);
/* The wall clock as last read (a hint for the engine's receive path). */
static _Atomic uint64_t hlc_wall_seen;

/* The wall clock with the logical bits cleared. */
static inline uint64_t wall(void)
{
    struct timespec ts;
    if (0 != clock_gettime(CLOCK_REALTIME_COARSE, &ts)) {
        return 0; /* the clock then moves by its logical counter alone */
    }
    uint64_t now =
        opal_rpc_unixnsec2hlc((uint64_t) ts.tv_sec * UINT64_C(1000000000) + (uint64_t) ts.tv_nsec);
    atomic_store_explicit(&hlc_wall_seen, now, memory_order_relaxed);
    return now;
}

/* The larger of floor and last + 1 (saturated: the clock never wraps). */
static inline uint64_t after(uint64_t floor, uint64_t last)
{
    return floor > last ? floor : UINT64_MAX == last ? last : last + 1;
}

/* Moves the clock to after(floor, last) and returns it. */
static uint64_t advance(uint64_t floor)
{
    uint64_t last = atomic_load_explicit(&hlc_last, memory_order_relaxed);
    uint64_t next;
    if (!opal_using_threads()) {
        next = after(floor, last);
        atomic_store_explicit(&hlc_last, next, memory_order_relaxed);
        return next;
    }
    do {
        next = after(floor, last);
    } while (!atomic_compare_exchange_weak_explicit(&hlc_last, &last, next, memory_order_relaxed,
                                                    memory_order_relaxed));
    return next;
}

uint64_t opal_rpc_hlc_get(void)
{
    return advance(wall());
}

int opal_rpc_hlc_get_msg(uint64_t msg, uint64_t *hlc, uint64_t *offset)
{
    uint64_t now = wall();
    uint64_t ahead = msg > now ? msg - now : 0;
    if (NULL != offset) {
        *offset = ahead;
    }
    if (ahead > atomic_load_explicit(&hlc_epsilon, memory_order_relaxed)) {
        return OPAL_ERR_HLC_SYNC;
    }
    /* Past msg itself: this event comes after the message was sent. */
    uint64_t next = advance(after(now, msg));
    if (NULL != hlc) {
        *hlc = next;
    }
    return OPAL_SUCCESS;
}

int opal_rpc_base_hlc_recv(uint64_t msg, uint64_t *ahead)
{
    *ahead = 0;
    uint64_t last = atomic_load_explicit(&hlc_last, memory_order_relaxed);
    if (msg <= last) {
        /* Every later timestamp is past it already. */
        return OPAL_SUCCESS;
    }
    uint64_t seen = atomic_load_explicit(&hlc_wall_seen, memory_order_relaxed);
    if (msg > opal_rpc_hlc_epsilon_get_bound(seen)) {
        /* Perhaps too far ahead: ask the wall clock. */
        return opal_rpc_hlc_get_msg(msg, NULL, ahead);
    }
    /* Within the epsilon of a wall clock read earlier, so of the current
     * one: the clock need only reach msg (advance takes it there, msg
     * being past it), and the next opal_rpc_hlc_get goes past. */
    (void) advance(msg);
    return OPAL_SUCCESS;
}

void opal_rpc_hlc_epsilon_set(uint64_t epsilon_ns)
{
    atomic_store_explicit(&hlc_epsilon, epsilon_ns, memory_order_relaxed);
}

uint64_t opal_rpc_hlc_epsilon_get(void)
{
    return atomic_load_explicit(&hlc_epsilon, memory_order_relaxed);
}

uint64_t opal_rpc_hlc_epsilon_get_bound(uint64_t hlc)
{
    uint64_t eps = opal_rpc_hlc_epsilon_get();
    return hlc > UINT64_MAX - eps ? UINT64_MAX : hlc + eps;
}
