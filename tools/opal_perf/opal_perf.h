/*
 * opal_perf: point-to-point benchmarks over the btl framework, in the
 * manner of the OSU micro-benchmarks. Two ranks (or one talking to itself
 * over btl/self) measure latency, bandwidth, bidirectional bandwidth and
 * message rate for a list of message sizes.
 *
 * The program is split by what its parts do:
 *   opal_perf_options.c   the command line: subcommand, sizes, counts
 *   opal_perf_proto.c     the wire protocol over the btl: eager sends,
 *                         rendezvous with btl_get, fragments
 *   opal_perf_setup.c     start-up and shut-down: modules, buffers, hello
 *   opal_perf_measure.c   the timed loops of each subcommand
 *   opal_perf_output.c    the table and the JSON document
 *   opal_perf.c           start-up, the run over every size, shut-down
 * Everything lives in one perf_t, passed to every function; the btl
 * callbacks find it through their cbdata.
 */
#ifndef OPAL_TOOLS_OPAL_PERF_OPAL_PERF_H
#define OPAL_TOOLS_OPAL_PERF_OPAL_PERF_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "opal/mca/btl/btl.h"
#include "opal/runtime/opal_progress.h"

/* ---------------------------------------------------------------- options */

typedef enum {
    PERF_LATENCY,
    PERF_BW,
    PERF_BIBW,
    PERF_RATE,
    /* Over na (opal_perf_na.c), in the manner of Mercury's perf tools: */
    PERF_NA_LAT, /* unexpected to the server, expected back; half round trip */
    PERF_NA_PUT, /* a window of puts into the server's memory; MB/s */
    PERF_NA_GET, /* a window of gets from it; MB/s */
    /* Over bulk (opal_perf_bulk.c), as Mercury's hg_bw_read / hg_bw_write: */
    PERF_BULK_PULL, /* the server pulls a window of chunks from the client's handle */
    PERF_BULK_PUSH, /* the server pushes them into it */
    PERF_SERVER,    /* serves the na and bulk subcommands of a client */
    /* Over rpc (opal_perf_rpc.c), as Mercury's hg_rate: */
    PERF_RPC_RATE,   /* null RPCs with a window in flight; RPC/s */
    PERF_RPC_SERVER, /* serves rpc-rate, rpc-lat and rpc-bw */
    PERF_RPC_LAT,    /* one RPC in flight echoing the size; round trip (us) */
    PERF_RPC_BW,     /* the handler pulls / pushes a window of chunks (hg_bw_read pushes) */
} perf_command_t;

/* True for the subcommands that run over na rather than the btl. */
static inline bool perf_command_is_na(perf_command_t command)
{
    return command >= PERF_NA_LAT;
}

/* Sizes above this default to the "large" iteration counts, as in the OSU
 * benchmarks (whose LARGE_MESSAGE_SIZE is the same). */
#define PERF_LARGE_MESSAGE 8192
/* The largest message size accepted (two buffers of it are allocated). */
#define PERF_MAX_SIZE          ((size_t) 1 << 30)
#define PERF_MAX_WINDOW        4096
#define PERF_DEFAULT_WINDOW    64
#define PERF_DEFAULT_MAX_SIZE  ((size_t) 4 << 20)
#define PERF_DEFAULT_RATE_SIZE 8

/* One --mca pair, pointing into the parsed command line. */
typedef struct perf_mca_pair_t {
    char *key;
    char *value;
} perf_mca_pair_t;

typedef struct perf_options_t {
    perf_command_t command;
    size_t *sizes; /* in the order they run, owned */
    size_t num_sizes;
    long iterations; /* -1: the command's default per size */
    long warmup;     /* -1: likewise */
    int window;
    bool json;
    bool validate;
    bool percentiles; /* latency: median, minimum and p99 besides the average */
    bool help;
    bool version;
    perf_mca_pair_t *mca; /* owned, strings too */
    int num_mca;
    /* na subcommands: the na info string ("btl", "ofi+tcp", ...; owned,
     * default "btl"), the file through which server and client started
     * alone exchange the server's URI (owned; NULL: both in one job),
     * and whether progress sleeps instead of spinning. */
    char *na_info;
    char *uri_file;
    bool blocking;
} perf_options_t;

/* Fills opts from argv (argv[0] is the program). On a bad command line
 * returns OPAL_ERR_BAD_PARAM with the reason in err (one line, no
 * program name). opts must be released with perf_options_free either way. */
int perf_options_parse(int argc, char **argv, perf_options_t *opts, char *err, size_t errlen);
void perf_options_free(perf_options_t *opts);

/* The usage text (--help), malloc'd; NULL when out of memory. */
char *perf_options_usage(void);

/* "1k" -> 1024, "4M" -> 4194304, "100" -> 100 (suffixes k, m, g: binary).
 * OPAL_ERR_BAD_PARAM for anything else or a size above PERF_MAX_SIZE. */
int perf_parse_size(const char *text, size_t *size);

/* The iterations / warm-up rounds used for size (the option, or the
 * command's default). */
long perf_iterations(const perf_options_t *opts, size_t size);
long perf_warmup(const perf_options_t *opts, size_t size);

const char *perf_command_name(perf_command_t command);

/* --------------------------------------------------------------- protocol */

/* How one message of a size travels. */
typedef enum {
    PERF_PROTO_EAGER, /* one active message (sendi, else alloc + send) */
    PERF_PROTO_RNDV,  /* request, receiver's btl_get, FIN */
    PERF_PROTO_FRAG,  /* max_send_size fragments (prepare_src + send) */
} perf_proto_t;

/* A rendezvous request the receiver has still to serve. */
typedef struct perf_rndv_t {
    uint64_t remote_addr;
    size_t size;
    size_t issued;       /* bytes whose get was started */
    size_t done;         /* bytes whose get completed */
    uint64_t handle[32]; /* the sender's registration handle bytes */
} perf_rndv_t;

#define PERF_MAX_HANDLE_SIZE sizeof(((perf_rndv_t *) 0)->handle)

typedef struct perf_t {
    perf_options_t opts;
    uint32_t rank;
    uint32_t nprocs;
    uint32_t peer_rank;
    bool loopback; /* one process: the peer is this process (btl/self) */

    /* The peer's best send module, and the module used for gets (NULL:
     * no rendezvous). */
    mca_btl_base_module_t *send_btl;
    struct mca_btl_base_endpoint_t *send_ep;
    mca_btl_base_module_t *rdma_btl;
    struct mca_btl_base_endpoint_t *rdma_ep;
    size_t eager_limit; /* largest eager payload */
    size_t frag_size;   /* largest fragment payload */
    size_t get_piece;   /* largest single get */
    size_t handle_size; /* the rdma module's registration handle bytes */
    /* The progress functions of the components of send_btl and rdma_btl
     * (distinct, non-NULL), and how often perf_poll ran. */
    int (*progress[2])(void);
    int num_progress;
    unsigned polls;

    /* Page-aligned buffers of buf_size bytes (the largest size plus room
     * for get alignment), registered with rdma_btl once for the run. */
    unsigned char *sbuf;
    unsigned char *rbuf;
    size_t buf_size;
    mca_btl_base_registration_handle_t *sreg;
    mca_btl_base_registration_handle_t *rreg;

    /* The size being measured: what a data message from the peer must
     * hold. */
    size_t cur_size;
    perf_proto_t cur_proto;

    /* Counters bumped by the callbacks, read by the wait loops. One
     * thread runs both (callbacks run from opal_progress or from inside
     * the send that completed at once), so plain integers suffice. */
    uint64_t rx_msgs; /* whole messages received into rbuf */
    /* How many of rx_msgs / rx_ack the loops have waited for so far: the
     * next wait's target counts from here, never from the counter, since
     * the peer's first messages may arrive before the loop starts (during
     * the barrier before it). */
    uint64_t rx_waited;
    uint64_t ack_waited;
    size_t rx_frag_off; /* bytes of the current fragmented message */
    uint64_t rx_ack;
    uint64_t rx_hello;
    uint64_t rx_sync; /* barriers from the peer */
    uint64_t tx_sync; /* barriers entered here */
    uint64_t rx_fin;
    uint64_t tx_rndv;     /* rendezvous requests sent (complete at their FIN) */
    int32_t peer_status;  /* worst status a sync from the peer carried */
    uint64_t peer_digest; /* from the peer's hello: */
    uint32_t peer_handle_size;
    char peer_rdma_component[64]; /* "" when it has no get module */

    /* Rendezvous requests received, served in order (a ring of
     * rndv_mask + 1 entries; head and tail count requests). */
    perf_rndv_t *rndv;
    uint64_t rndv_mask;
    uint64_t rndv_head; /* first not yet finished */
    uint64_t rndv_tail; /* next free */

    bool tags_registered;
    bool btl_started;
    bool failed;
    char failure[256];
    FILE *out;
} perf_t;

/* Registers the tags, starts the btl, reaches the peer, picks the modules
 * and allocates / registers the buffers for sizes up to max_size; then
 * checks with the peer that both run the same plan (digest). Returns
 * OPAL_SUCCESS or an error after saying why. */
int perf_proto_init(perf_t *p, size_t max_size, uint64_t digest);
/* Undoes perf_proto_init (safe after a partial one). */
void perf_proto_fini(perf_t *p);

/* Pieces of start-up (opal_perf_setup.c) that need the protocol's own
 * definitions: taking / giving back the tags, installing (p) or removing
 * (NULL) the btl error callback, the hello message, and the bytes of a
 * rendezvous request carrying a handle of handle_size bytes. */
int perf_proto_register_tags(perf_t *p);
void perf_proto_deregister_tags(void);
void perf_proto_watch_errors(perf_t *p);
int perf_send_hello(perf_t *p, uint64_t digest);
size_t perf_rndv_request_size(size_t handle_size);

/* Sets the size the next messages have (both ranks, before a sync). */
void perf_proto_set_size(perf_t *p, size_t size);
/* What a message of size would use from this side. */
perf_proto_t perf_proto_for_size(const perf_t *p, size_t size);
const char *perf_proto_name(perf_proto_t proto);

/* Sends one message of cur_size bytes from sbuf to the peer. */
int perf_send(perf_t *p);
/* Sends a zero-byte acknowledgement. */
int perf_send_ack(perf_t *p);
/* Progresses until *counter reaches target (or a failure). */
int perf_wait(perf_t *p, const uint64_t *counter, uint64_t target);
/* Progresses until every rendezvous request sent has its FIN. */
int perf_wait_sends(perf_t *p);
/* Barrier with the peer carrying status; returns the worse of status and
 * the peer's (no-op in loopback). */
int perf_sync(perf_t *p, int status);

/* Records a failure (the first one wins) that every wait loop stops on. */
void perf_fail(perf_t *p, const char *fmt, ...) OPAL_PRINTF_LIKE(2, 3);

/* Polls the btl: the callbacks of whatever completed. The components
 * that reach the peer are polled directly (a function call each), and
 * every PERF_FULL_PROGRESS_EVERY polls opal_progress runs everything
 * registered (low-priority work such as a component's liveness checks):
 * opal_progress's exclusive pass costs a lock round trip that would
 * otherwise be paid on every poll of a ping-pong. */
#define PERF_FULL_PROGRESS_EVERY 64
static inline void perf_poll(perf_t *p)
{
    if (OPAL_UNLIKELY(0 == (++p->polls % PERF_FULL_PROGRESS_EVERY) || 0 == p->num_progress)) {
        (void) opal_progress();
        return;
    }
    for (int i = 0; i < p->num_progress; ++i) {
        (void) p->progress[i]();
    }
}

/* ------------------------------------------------------------ measurement */

/* One row of results. */
typedef struct perf_result_t {
    size_t size;
    long iterations;
    long warmup;
    perf_proto_t proto;
    double value;     /* latency (us), bandwidth (MB/s) or rate (msg/s) */
    double bandwidth; /* rate: MB/s besides the rate */
    /* latency with --percentiles (us, half round trips) */
    double median;
    double min;
    double p99;
} perf_result_t;

/* The median, minimum and 99th percentile of us[0..n) (n > 0), which is
 * sorted in place. */
void perf_percentiles(double *us, size_t n, double *median, double *min, double *p99);

/* Runs the command for the current size (set with perf_proto_set_size);
 * fills result on every rank (rank 0's is the one reported). */
int perf_measure(perf_t *p, perf_result_t *result);

/* Fills sbuf with the pattern the peer checks, and clears rbuf. */
void perf_validate_prepare(perf_t *p);
/* Checks that rbuf holds the peer's pattern; OPAL_ERR_BAD_VALUE after
 * saying where it does not. */
int perf_validate_check(perf_t *p);

/* ----------------------------------------------------------------- output */

/* The names of the modules that reach the peer, "sm" or "sm,ofi",
 * written into buf. */
void perf_output_modules(const perf_t *p, bool rdma, char *buf, size_t len);
/* Table: the '#' lines, then one row per call, flushed as they come. */
void perf_output_table_header(const perf_t *p);
void perf_output_table_row(const perf_t *p, const perf_result_t *r);
/* JSON: the whole document at the end. */
void perf_output_json(const perf_t *p, const perf_result_t *results, size_t count);

/* ---------------------------------------------------------------- na */

/* Runs an na subcommand (opal_perf_na.c): as server or client started
 * alone (opts.uri_file), or as rank 1 (server) / rank 0 (client) of a job
 * of two after orte_init (in_job). Returns OPAL_SUCCESS or an error after
 * saying why. */
int perf_na_run(perf_t *p, bool in_job);
/* The rpc subcommands (opal_perf_rpc.c), likewise. */
int perf_rpc_run(perf_t *p, bool in_job);

/* Runs opal_perf (what main() does); returns the exit status. */
int opal_perf_main(int argc, char **argv);

#endif /* OPAL_TOOLS_OPAL_PERF_OPAL_PERF_H */
