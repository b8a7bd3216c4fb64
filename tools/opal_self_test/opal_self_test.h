/*
 * opal_self_test: DAOS CaRT's self_test over opal-mca's rpc engine. It
 * sends the engine's self-test request (rpc_selftest.h, served by every
 * process running the engine) to a list of endpoints (rank:context) of a
 * group, for a list of (input output) sizes, with a bounded number in
 * flight, and reports per endpoint and size the latency distribution and
 * the bandwidth.
 *
 *   opal_self_test_parse.c    the --endpoint and --message-size lists
 *   opal_self_test_options.c  the command line
 *   opal_self_test_run.c      the measurement (the client's side)
 *   opal_self_test_output.c   the table and the JSON document
 *   opal_self_test.c          start-up in a job or from a group file,
 *                             serving, stopping, shut-down
 */
#ifndef OPAL_TOOLS_OPAL_SELF_TEST_H
#define OPAL_TOOLS_OPAL_SELF_TEST_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/mca/rpc/rpc.h"
#include "opal/mca/rpc/rpc_group.h"
#include "tools/opal_self_test/opal_self_test_parse.h"

#define ST_DEFAULT_SIZES                                                                           \
    "(0 0) (b1048576 0) (0 b1048576) (b1048576 b1048576) (2048 0) (0 2048) (2048 2048)"
#define ST_DEFAULT_REPETITIONS 1000
#define ST_DEFAULT_INFLIGHT    16
#define ST_MAX_REPETITIONS     100000000L
#define ST_MAX_INFLIGHT        65536L
/* The client's output buffers (max in flight x the largest bulk output)
 * and latency samples (endpoints x repetitions) are bounded. */
#define ST_MAX_OUT_BUFFERS ((uint64_t) 4 << 30)
#define ST_MAX_SAMPLES     ((uint64_t) 1 << 28)

/* One --mca pair. */
typedef struct st_mca_t {
    char *key;
    char *value;
} st_mca_t;

typedef struct st_options_t {
    char *group_file;   /* NULL: inside a job */
    char *na_info;      /* default "btl" */
    st_endpoint_t *eps; /* NULL: the default (every other rank, context 0) */
    size_t num_eps;
    st_size_t *sizes;
    size_t num_sizes;
    long repetitions; /* per endpoint and size */
    long inflight;
    double timeout; /* seconds per RPC; 0: rpc_base_timeout */
    bool json;
    bool verify;
    bool help;
    bool version;
    st_mca_t *mca;
    int num_mca;
} st_options_t;

/* Fills opts from argv; OPAL_ERR_BAD_PARAM with the reason in err (naming
 * the option and the value). Release opts with st_options_free either way. */
int st_options_parse(int argc, char **argv, st_options_t *opts, char *err, size_t errlen);
void st_options_free(st_options_t *opts);
/* The --help text, malloc'd (NULL when out of memory). */
char *st_options_usage(void);

/* What one endpoint did at one size. */
typedef struct st_result_t {
    st_endpoint_t ep;
    uint64_t *ns;       /* latencies of the RPCs that succeeded */
    uint64_t completed; /* entries of ns */
    uint64_t failed;
    uint64_t skipped; /* not sent after an earlier failure of this endpoint */
    char first_error[256];
} st_result_t;

typedef struct st_size_result_t {
    st_size_t size;
    st_result_t *eps; /* one per endpoint */
    uint64_t wall_ns; /* from the first send to the last completion */
} st_size_result_t;

/* A latency summary in microseconds (nearest-rank percentiles). */
typedef struct st_stats_t {
    uint64_t count;
    double min, median, p90, p99, max;
} st_stats_t;

/* Sorts ns[0..n) and summarises it (count 0: everything 0). */
void st_stats(uint64_t *ns, uint64_t n, st_stats_t *s);

/* The run's setting for the output. */
typedef struct st_run_info_t {
    const char *group;
    uint32_t group_size;
    const char *na;
    long repetitions;
    long inflight;
} st_run_info_t;

/* Measures every size against every endpoint of group from ctx, while
 * progressing this process's other contexts serve[0..num_serve) (they
 * answer the endpoints of this rank); results (opts->num_sizes of them)
 * are the caller's to free with st_results_free. An error only for what
 * stops the whole run. */
int st_run(opal_rpc_context_t *ctx, opal_rpc_context_t *const *serve, int num_serve,
           opal_rpc_group_t *group, const st_options_t *opts, st_size_result_t **results);
void st_results_free(st_size_result_t *results, size_t count, size_t num_eps);

/* Writes the table or the JSON document on stdout. */
void st_output_table(const st_run_info_t *info, const st_options_t *opts,
                     st_size_result_t *results);
void st_output_json(const st_run_info_t *info, const st_options_t *opts, st_size_result_t *results);

/* What main() does; the exit status. */
int opal_self_test_main(int argc, char **argv);

#endif /* OPAL_TOOLS_OPAL_SELF_TEST_H */
