/*
 * The timed loops, one per subcommand, done the way the OSU benchmarks do
 * them so that the numbers compare with theirs (and with
 * contrib/perf/ompi_perf.c, which does the same over MPI):
 *   latency  rank 0 sends, rank 1 answers with the same size; half the
 *            round trip. Alone (loopback), one send to itself and its
 *            arrival make one trip.
 *   bw       rank 0 sends a window of messages, rank 1 acknowledges the
 *            window once all arrived; bytes of the windows / time.
 *   bibw     both send a window and wait for the other's; bytes of both
 *            directions / time.
 *   rate     bw's loop, reported in messages per second.
 * The first warmup iterations run the same loop untimed.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "tools/opal_perf/opal_perf.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"

/* Rank 0 leads: it starts the ping-pong and sends the windows. */
static bool leads(const perf_t *p)
{
    return p->loopback || 0 == p->rank;
}

/* rt_ns, when not NULL, gets the leader's round trip of every timed
 * iteration (--percentiles): one clock read per iteration, each round
 * trip ending where the next begins. */
static int latency(perf_t *p, long warmup, long iterations, uint64_t *ns, uint64_t *rt_ns)
{
    uint64_t start = 0, last = 0;
    bool lead = leads(p);
    for (long i = -warmup; i < iterations; ++i) {
        if (0 == i) {
            start = last = opal_timer_ns();
        }
        int rc;
        if (lead) {
            rc = perf_send(p);
            if (OPAL_LIKELY(OPAL_SUCCESS == rc)) {
                rc = perf_wait(p, &p->rx_msgs, ++p->rx_waited);
            }
            if (NULL != rt_ns && i >= 0) {
                uint64_t now = opal_timer_ns();
                rt_ns[i] = now - last;
                last = now;
            }
        } else {
            rc = perf_wait(p, &p->rx_msgs, ++p->rx_waited);
            if (OPAL_LIKELY(OPAL_SUCCESS == rc)) {
                rc = perf_send(p);
            }
        }
        if (OPAL_UNLIKELY(OPAL_SUCCESS != rc)) {
            return rc;
        }
    }
    *ns = opal_timer_ns() - start;
    return OPAL_SUCCESS;
}

static int send_window(perf_t *p, int count)
{
    for (int w = 0; w < count; ++w) {
        int rc = perf_send(p);
        if (OPAL_UNLIKELY(OPAL_SUCCESS != rc)) {
            return rc;
        }
    }
    return OPAL_SUCCESS;
}

/* bw and rate: windows one way, an acknowledgement back. */
static int windows(perf_t *p, long warmup, long iterations, uint64_t *ns)
{
    int window = p->opts.window;
    uint64_t start = 0;
    bool lead = leads(p);
    for (long i = -warmup; i < iterations; ++i) {
        if (0 == i) {
            start = opal_timer_ns();
        }
        int rc = OPAL_SUCCESS;
        if (lead) {
            rc = send_window(p, window);
            if (OPAL_SUCCESS == rc) {
                rc = perf_wait_sends(p);
            }
            if (OPAL_SUCCESS == rc && p->loopback) {
                p->rx_waited += (uint64_t) window;
                rc = perf_wait(p, &p->rx_msgs, p->rx_waited);
            } else if (OPAL_SUCCESS == rc) {
                rc = perf_wait(p, &p->rx_ack, ++p->ack_waited);
            }
        } else {
            p->rx_waited += (uint64_t) window;
            rc = perf_wait(p, &p->rx_msgs, p->rx_waited);
            if (OPAL_SUCCESS == rc) {
                rc = perf_send_ack(p);
            }
        }
        if (OPAL_UNLIKELY(OPAL_SUCCESS != rc)) {
            return rc;
        }
    }
    *ns = opal_timer_ns() - start;
    return OPAL_SUCCESS;
}

/* bibw: both directions at once. Alone, this process is both ends, so
 * it sends both windows to itself. */
static int both_ways(perf_t *p, long warmup, long iterations, uint64_t *ns)
{
    int window = p->loopback ? 2 * p->opts.window : p->opts.window;
    uint64_t start = 0;
    for (long i = -warmup; i < iterations; ++i) {
        if (0 == i) {
            start = opal_timer_ns();
        }
        p->rx_waited += (uint64_t) window;
        int rc = send_window(p, window);
        if (OPAL_SUCCESS == rc) {
            rc = perf_wait(p, &p->rx_msgs, p->rx_waited);
        }
        if (OPAL_SUCCESS == rc) {
            rc = perf_wait_sends(p);
        }
        if (OPAL_UNLIKELY(OPAL_SUCCESS != rc)) {
            return rc;
        }
    }
    *ns = opal_timer_ns() - start;
    return OPAL_SUCCESS;
}

/* result's median, minimum and p99 from the round trips rt_ns[0..n),
 * each divided by trips (2: half a round trip). */
static int percentiles(perf_result_t *result, const uint64_t *rt_ns, size_t n, double trips)
{
    double *us = malloc(n * sizeof(*us));
    if (NULL == us) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < n; ++i) {
        us[i] = (double) rt_ns[i] / 1e3 / trips;
    }
    perf_percentiles(us, n, &result->median, &result->min, &result->p99);
    free(us);
    return OPAL_SUCCESS;
}

int perf_measure(perf_t *p, perf_result_t *result)
{
    size_t size = p->cur_size;
    long iterations = perf_iterations(&p->opts, size);
    long warmup = perf_warmup(&p->opts, size);
    uint64_t ns = 0;
    uint64_t *rt_ns = NULL;
    int rc;
    switch (p->opts.command) {
        case PERF_LATENCY:
            if (p->opts.percentiles &&
                NULL == (rt_ns = malloc((size_t) iterations * sizeof(*rt_ns)))) {
                return OPAL_ERR_OUT_OF_RESOURCE;
            }
            rc = latency(p, warmup, iterations, &ns, rt_ns);
            break;
        case PERF_BIBW:
            rc = both_ways(p, warmup, iterations, &ns);
            break;
        default:
            rc = windows(p, warmup, iterations, &ns);
            break;
    }
    if (OPAL_SUCCESS == rc) {
        rc = perf_wait_sends(p);
    }
    if (OPAL_SUCCESS != rc) {
        free(rt_ns);
        return rc;
    }
    /* A clock that did not move (a coarse one) must not divide by 0. */
    double seconds = (double) (0 == ns ? 1 : ns) / 1e9;
    double messages = (double) iterations * (double) p->opts.window;
    *result = (perf_result_t){
        .size = size,
        .iterations = iterations,
        .warmup = warmup,
        .proto = p->cur_proto,
    };
    switch (p->opts.command) {
        case PERF_LATENCY:
            /* A round trip is two messages; alone, an iteration is one. */
            result->value = seconds * 1e6 / (double) iterations / (p->loopback ? 1.0 : 2.0);
            if (NULL != rt_ns) {
                rc = percentiles(result, rt_ns, (size_t) iterations, p->loopback ? 1.0 : 2.0);
            }
            break;
        case PERF_BW:
            result->value = messages * (double) size / seconds / 1e6;
            break;
        case PERF_BIBW:
            result->value = 2.0 * messages * (double) size / seconds / 1e6;
            break;
        case PERF_RATE:
            result->value = messages / seconds;
            result->bandwidth = messages * (double) size / seconds / 1e6;
            break;
        default: /* the na subcommands measure in opal_perf_na.c */
            break;
    }
    free(rt_ns);
    return rc;
}

/* The byte the sender of rank `from` puts at offset i of a message of
 * size bytes: varies with all three so a misplaced or stale byte shows. */
static unsigned char pattern(uint32_t from, size_t size, size_t i)
{
    return (unsigned char) (i * 131u + size * 7u + from * 59u + 1u);
}

void perf_validate_prepare(perf_t *p)
{
    for (size_t i = 0; i < p->cur_size; ++i) {
        p->sbuf[i] = pattern(p->rank, p->cur_size, i);
    }
    for (size_t i = 0; i < p->cur_size; ++i) {
        p->rbuf[i] = 0;
    }
}

int perf_validate_check(perf_t *p)
{
    /* bw and rate send one way: rank 1's buffer only is filled. */
    bool one_way = PERF_BW == p->opts.command || PERF_RATE == p->opts.command;
    if (one_way && !p->loopback && 0 == p->rank) {
        return OPAL_SUCCESS;
    }
    for (size_t i = 0; i < p->cur_size; ++i) {
        unsigned char want = pattern(p->peer_rank, p->cur_size, i);
        if (p->rbuf[i] != want) {
            fprintf(stderr,
                    "opal_perf: rank %" PRIu32 ": size %zu (%s): byte %zu is %#x, expected %#x "
                    "from rank %" PRIu32 "\n",
                    p->rank, p->cur_size, perf_proto_name(p->cur_proto), i, p->rbuf[i], want,
                    p->peer_rank);
            return OPAL_ERR_BAD_VALUE;
        }
    }
    return OPAL_SUCCESS;
}
