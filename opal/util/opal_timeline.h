/*
 * A timeline of one process's messages: a timestamp at each mark a message
 * passes on its way through the layers (rpc, na, btl/sm), written to a file
 * that contrib/perf/timeline.sh merges with the other processes' files to
 * say where the wall-clock time of an RPC or a message goes, segment by
 * segment. Callgrind counts instructions; this measures time, cache misses
 * and the wait for the peer included.
 *
 * Marks exist only in builds configured with --enable-timeline; elsewhere
 * OPAL_TIMELINE(mark) is nothing and costs nothing. Recording starts when
 * the MCA base opens with opal_timeline_file set (in a build without marks
 * that is refused, as the file asked for would stay empty) and the file is
 * written when the MCA base closes:
 *
 *     mcarun -np 2 --mca opal_timeline_file /tmp/tl.%p \
 *         opal_perf rpc-rate --na btl --window 1 -i 100000
 *     contrib/perf/timeline.sh /tmp/tl.*
 *
 * A mark costs one clock read and one store (the file's header says how
 * long the clock read takes here; each segment includes about one).
 */
#ifndef OPAL_UTIL_OPAL_TIMELINE_H
#define OPAL_UTIL_OPAL_TIMELINE_H

#include "opal/opal_config.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* X(name, where it is). In the order one RPC passes them; append. */
#define OPAL_TIMELINE_MARK_TABLE(X)                                                                \
    X(rpc_send, "opal_rpc_req_send entered")                                                       \
    X(rpc_reply, "opal_rpc_reply_send entered")                                                    \
    X(rpc_transmit, "rpc hands an encoded request or reply to na")                                 \
    X(na_send, "na's unexpected or expected send entered")                                         \
    X(sm_sent, "btl/sm published a message (fast box or FIFO)")                                    \
    X(sm_arrived, "btl/sm found a message")                                                        \
    X(na_recv, "na/btl's receive callback entered")                                                \
    X(na_queued, "na queues an operation's completion for trigger")                                \
    X(na_trigger, "na runs an operation's completion callback")                                    \
    X(rpc_recv, "rpc's receive completion entered")                                                \
    X(rpc_handler, "an rpc handler is called")                                                     \
    X(rpc_complete, "an rpc request's completion callback is called")

typedef enum {
#define OPAL_TIMELINE_ENUM_(name, what) OPAL_TIMELINE_##name,
    OPAL_TIMELINE_MARK_TABLE(OPAL_TIMELINE_ENUM_)
#undef OPAL_TIMELINE_ENUM_
        OPAL_TIMELINE_MARKS
} opal_timeline_mark_t;

/* Records mark now, when recording. Any thread. */
OPAL_DECLSPEC void opal_timeline_mark(opal_timeline_mark_t mark);

/* True while recording; read by the marks before they call in (a load and
 * a branch instead of a call into libopal per mark). */
OPAL_DECLSPEC extern atomic_bool opal_timeline_recording;

#if defined(OPAL_ENABLE_TIMELINE) && OPAL_ENABLE_TIMELINE
#define OPAL_TIMELINE(mark)                                                                        \
    do {                                                                                           \
        if (atomic_load_explicit(&opal_timeline_recording, memory_order_relaxed)) {                \
            opal_timeline_mark(OPAL_TIMELINE_##mark);                                              \
        }                                                                                          \
    } while (0)
#else
#define OPAL_TIMELINE(mark) ((void) 0)
#endif

/* Starts recording up to max marks, to be written to path by
 * opal_timeline_stop ("%p" stands for the pid and "%r" for the rank, as
 * opal_output_expand_path says). OPAL_ERR_BAD_PARAM for an empty path,
 * one too long once expanded, or a max of 0 or past 2^28;
 * OPAL_ERR_EXISTS while recording; OPAL_ERR_OUT_OF_RESOURCE when the
 * buffer cannot be had. Not concurrent with marks from other threads. */
OPAL_DECLSPEC int opal_timeline_start(const char *path, size_t max);

/* Stops recording and writes the file: a header, then one line per mark
 * in the order taken, "<ns> <thread> <mark>" (CLOCK_MONOTONIC
 * nanoseconds; threads numbered from 0 in the order they first marked).
 * Marks past max are counted in the header, not kept. OPAL_ERR_IN_ERRNO
 * (after a message naming the file) when it cannot be written;
 * OPAL_ERR_NOT_INITIALIZED when not recording. No other thread may mark
 * meanwhile. */
OPAL_DECLSPEC int opal_timeline_stop(void);

/* The mark's name as the file writes it, or NULL. */
OPAL_DECLSPEC const char *opal_timeline_mark_name(opal_timeline_mark_t mark);

/* True in builds with marks (--enable-timeline). */
OPAL_DECLSPEC int opal_timeline_compiled_in(void);

#endif /* OPAL_UTIL_OPAL_TIMELINE_H */
