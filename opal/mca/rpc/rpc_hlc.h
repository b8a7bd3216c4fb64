/*
 * The hybrid logical clock (CaRT's crt_hlc_*): a 64-bit timestamp per
 * process that never goes back, stays close to the wall clock, and orders
 * events across processes. Every rpc request and reply carries its
 * sender's clock; the receiver's clock moves past it before the handler or
 * the completion callback runs, so anything stamped after a message was
 * received is later than anything stamped before it was sent (DAOS takes
 * its epochs from this).
 *
 * A timestamp is nanoseconds since the Unix epoch whose low
 * OPAL_RPC_HLC_LOGICAL_BITS bits are a logical counter: the clock takes the
 * wall clock with those bits cleared, or one more than the last timestamp
 * it gave or saw, whichever is larger. The wall clock is read coarsely
 * (CLOCK_REALTIME_COARSE, a few ns instead of a vDSO call of tens), so a
 * timestamp may trail the real time by one kernel tick (1-4 ms).
 *
 * The clock is process-wide and thread-safe; it needs no opal_rpc_init.
 * A message whose clock is ahead of this process's wall clock by more
 * than the epsilon (rpc_base_hlc_epsilon, 1 s) is refused: a request is
 * answered with OPAL_ERR_HLC_SYNC, a reply completes its request with it,
 * and the clock does not move (docs/rpc.md, "Hybrid logical clock").
 */
#ifndef OPAL_MCA_RPC_RPC_HLC_H
#define OPAL_MCA_RPC_RPC_HLC_H

#include "opal/opal_config.h"

#include <stdint.h>

#define OPAL_RPC_HLC_LOGICAL_BITS 16
#define OPAL_RPC_HLC_LOGICAL_MASK ((UINT64_C(1) << OPAL_RPC_HLC_LOGICAL_BITS) - 1)

/* A timestamp for a local event or an outgoing message (crt_hlc_get). */
OPAL_DECLSPEC uint64_t opal_rpc_hlc_get(void);

/* Moves the clock past msg, a timestamp another process sent
 * (crt_hlc_get_msg): OPAL_SUCCESS with *hlc (may be NULL) the new
 * timestamp, or OPAL_ERR_HLC_SYNC when msg is ahead of this process's wall
 * clock by more than the epsilon, the clock unchanged. *offset (may be
 * NULL) is how far msg is ahead of the wall clock, in ns (0 when it is
 * not). */
OPAL_DECLSPEC int opal_rpc_hlc_get_msg(uint64_t msg, uint64_t *hlc, uint64_t *offset);

/* The largest clock difference accepted, in ns (crt_hlc_epsilon_set /
 * _get); rpc_base_hlc_epsilon sets it at opal_rpc_init. */
OPAL_DECLSPEC void opal_rpc_hlc_epsilon_set(uint64_t epsilon_ns);
OPAL_DECLSPEC uint64_t opal_rpc_hlc_epsilon_get(void);
/* The latest timestamp any process may have given before hlc was taken
 * (hlc plus the epsilon, saturated). */
OPAL_DECLSPEC uint64_t opal_rpc_hlc_epsilon_get_bound(uint64_t hlc);

/* Wall-clock nanoseconds since the Unix epoch of a timestamp, and back. */
static inline uint64_t opal_rpc_hlc2unixnsec(uint64_t hlc)
{
    return hlc & ~OPAL_RPC_HLC_LOGICAL_MASK;
}
static inline uint64_t opal_rpc_unixnsec2hlc(uint64_t unixnsec)
{
    return unixnsec & ~OPAL_RPC_HLC_LOGICAL_MASK;
}

#endif /* OPAL_MCA_RPC_RPC_HLC_H */
