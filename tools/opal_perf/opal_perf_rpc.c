/*
 * opal_perf's rpc subcommands, measured as Mercury's hg_rate measures
 * (Testing/perf/hg: hg_rate against hg_perf_server), so that
 * contrib/perf/compare-mercury-rpc.sh compares like with like:
 *
 *   rpc-rate    the client keeps --window requests in flight (16 as
 *               hg_rate -x 16), each carrying an IOV of the size and
 *               answered with nothing, each sent again once it
 *               completed (reset); completed RPCs per second
 *   rpc-lat, rpc-bw   (opal_perf_rpc_xfer.c)
 *   rpc-server  serves rpc-rate, rpc-lat and rpc-bw clients until one
 *               says it is done
 *
 * Started alone, the server writes its URI to --uri-file and the client
 * reads it; in a job of two ranks, rank 1 serves and the URI goes through
 * the modex. --blocking: progress sleeps on the na fd (the class is
 * opened with busy_wait otherwise, as hg_rate -b).
 *
 * The server's handlers run as tasks of the sched policy (--mca sched ...);
 * OPAL_PERF_RPC_INLINE=1 in the server's environment flags its operations
 * OPAL_RPC_OP_INLINE instead (called directly, the scheduler skipped), to
 * measure what the scheduler costs.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/rpc/rpc.h"
#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "tools/opal_perf/opal_perf_rpc.h"

#define RATE_BASE PERF_RPC_BASE
#define URI_KEY   "opal_perf.rpc.uri"
#define URI_MAX   4096

#define RATE_IN_FIELDS(X) X(opal_rpc_iov_t, data, IOV)
OPAL_RPC_STRUCT(rate_in, RATE_IN_FIELDS);

enum { OP_RATE = PERF_RPC_OP_RATE, OP_DONE = PERF_RPC_OP_DONE, OP_COUNT = PERF_RPC_OP_COUNT };

static volatile bool server_done;

static void rate_handler(opal_rpc_request_t *req)
{
    (void) opal_rpc_reply_send(req);
}

static void done_handler(opal_rpc_request_t *req)
{
    server_done = true;
    (void) opal_rpc_reply_send(req);
}

/* OPAL_PERF_RPC_INLINE set to anything but 0: handlers skip sched. */
static bool handlers_inline(void)
{
    const char *v = getenv("OPAL_PERF_RPC_INLINE");
    return NULL != v && 0 != strcmp(v, "0") && 0 != strcmp(v, "");
}

typedef perf_rpc_t rate_t;

static void rate_cb(opal_rpc_request_t *req, int status, void *arg)
{
    rate_t *r = arg;
    if (OPAL_SUCCESS != status && OPAL_SUCCESS == r->failed) {
        r->failed = status;
    }
    ++r->done;
    if (OPAL_RPC_OPCODE(RATE_BASE, 1, OP_RATE) == opal_rpc_req_opcode(req)) {
        /* Ours to send again (send_one took a reference for it). */
        if (r->nspare < r->spare_cap) {
            r->spare[r->nspare++] = req;
        } else {
            opal_rpc_req_decref(req);
        }
    }
}

/* A rate request is created once per slot of the window and sent again
 * each time it completes (reset, refilled), as hg_rate forwards the same
 * handles again: what is measured is the RPC, not the allocation of a
 * request (which opal_rpc_req_create from a cache keeps small anyway). */
static int send_one(rate_t *r, int op, size_t size)
{
    opal_rpc_request_t *req = NULL;
    int rc;
    if (OP_RATE == op && r->nspare > 0) {
        req = r->spare[--r->nspare];
        rc = opal_rpc_req_reset(req, NULL);
        if (OPAL_SUCCESS != rc) {
            opal_rpc_req_decref(req);
            return rc;
        }
    } else {
        const opal_rpc_endpoint_t ep = {.addr = r->server, .ctx_idx = 0};
        rc = opal_rpc_req_create(r->ctx, &ep, OPAL_RPC_OPCODE(RATE_BASE, 1, op), &req);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    if (OP_RATE == op) {
        rate_in_t *in = opal_rpc_req_input(req);
        in->data.buf = r->data;
        in->data.len = (uint32_t) size;
        opal_rpc_req_addref(req); /* kept past the callback, for the next send */
    }
    rc = opal_rpc_req_send(req, rate_cb, r);
    if (OPAL_SUCCESS != rc && OP_RATE == op) {
        opal_rpc_req_decref(req); /* the callback will not run to keep it */
    }
    return rc;
}

/* Lets go of the requests kept for sending again. */
static void spares_release(rate_t *r)
{
    while (r->nspare > 0) {
        opal_rpc_req_decref(r->spare[--r->nspare]);
    }
    free(r->spare);
    r->spare = NULL;
    r->spare_cap = 0;
}

/* Runs count requests of size with window in flight; seconds taken. */
static int run_rate(rate_t *r, size_t size, long count, int window, bool blocking, double *secs)
{
    long issued = 0;
    r->done = 0;
    uint64_t t0 = opal_timer_ns();
    while (r->done < count && OPAL_SUCCESS == r->failed) {
        while (issued < count && issued - r->done < window) {
            int rc = send_one(r, OP_RATE, size);
            if (OPAL_SUCCESS != rc) {
                return rc;
            }
            ++issued;
        }
        (void) opal_rpc_progress(r->ctx, blocking ? 1000 : 0);
    }
    *secs = (double) (opal_timer_ns() - t0) / 1e9;
    return r->failed;
}

static int publish(bool in_job, const char *file)
{
    char uri[URI_MAX];
    size_t len = sizeof(uri);
    int rc = opal_rpc_self_uri(uri, &len);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if (in_job) {
        rc = opal_modex_send(URI_KEY, uri, strlen(uri) + 1, OPAL_MODEX_SCOPE_GLOBAL);
        return OPAL_SUCCESS == rc ? opal_modex_commit() : rc;
    }
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", file, (long) getpid());
    FILE *f = fopen(tmp, "w");
    if (NULL == f || fprintf(f, "%s\n", uri) < 0 || 0 != fclose(f) || 0 != rename(tmp, file)) {
        fprintf(stderr, "opal_perf: rpc-server: cannot write the URI file %s: %s\n", file,
                strerror(errno));
        return OPAL_ERR_IN_ERRNO;
    }
    printf("# opal_perf rpc-server: %s (URI in %s)\n", uri, file);
    fflush(stdout);
    return OPAL_SUCCESS;
}

static int lookup(bool in_job, const char *file, opal_na_addr_t **server)
{
    char uri[URI_MAX] = "";
    if (in_job) {
        void *value = NULL;
        size_t size = 0;
        int rc = opal_modex_recv(1, URI_KEY, &value, &size, -1);
        if (OPAL_SUCCESS == rc &&
            (0 == size || size > sizeof(uri) || '\0' != ((char *) value)[size - 1])) {
            fprintf(stderr, "opal_perf: rank 1 published a malformed URI (%zu bytes)\n", size);
            rc = OPAL_ERR_BAD_PARAM;
        }
        if (OPAL_SUCCESS == rc) {
            memcpy(uri, value, size);
        }
        free(value);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    } else {
        uint64_t start = opal_timer_ns();
        FILE *f;
        while (NULL == (f = fopen(file, "r"))) {
            if (ENOENT != errno || opal_timer_ns() - start > 60000000000ull) {
                fprintf(stderr, "opal_perf: cannot read the URI file %s\n", file);
                return OPAL_ERR_NOT_FOUND;
            }
            usleep(10000);
        }
        char *line = fgets(uri, sizeof(uri), f);
        fclose(f);
        if (NULL == line) {
            fprintf(stderr, "opal_perf: the URI file %s is empty\n", file);
            return OPAL_ERR_BAD_PARAM;
        }
        uri[strcspn(uri, "\r\n")] = '\0';
    }
    int rc = opal_rpc_addr_lookup(uri, server);
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "opal_perf: cannot look up the server at %s: %s\n", uri, opal_strerror(rc));
    }
    return rc;
}

static int client(perf_t *p, rate_t *r)
{
    perf_options_t *o = &p->opts;
    int rc = OPAL_SUCCESS;
    int window = o->window > 0 ? o->window : 1;
    r->spare = calloc((size_t) window, sizeof(*r->spare));
    if (NULL == r->spare) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    r->spare_cap = window;
    if (o->json) {
        printf("{\n  \"command\": \"rpc-rate\",\n  \"na\": \"%s\",\n  \"window\": %d,\n"
               "  \"blocking\": %s,\n  \"results\": [",
               o->na_info, window, o->blocking ? "true" : "false");
    } else {
        printf("# opal_perf rpc-rate over na %s, %d in flight%s\n", o->na_info, window,
               o->blocking ? " (blocking progress)" : " (busy polling)");
        printf("%-10s%20s%16s\n", "# Size", "Rate (RPC/s)", "Time (us)");
    }
    for (size_t i = 0; i < o->num_sizes && OPAL_SUCCESS == rc; ++i) {
        size_t size = o->sizes[i];
        long iterations = o->iterations > 0 ? o->iterations : 20000;
        long warmup = o->warmup >= 0 ? o->warmup : 1000;
        double secs = 0;
        rc = run_rate(r, size, warmup, window, o->blocking, &secs);
        if (OPAL_SUCCESS == rc) {
            rc = run_rate(r, size, iterations, window, o->blocking, &secs);
        }
        if (OPAL_SUCCESS != rc) {
            fprintf(stderr, "opal_perf: rpc-rate: a request failed: %s\n", opal_strerror(rc));
            break;
        }
        double rate = (double) iterations / secs;
        if (o->json) {
            printf("%s\n    {\"size\": %zu, \"iterations\": %ld, \"rpc_per_s\": %.1f}",
                   0 == i ? "" : ",", size, iterations, rate);
        } else {
            printf("%-10zu%20.1f%16.3f\n", size, rate, 1e6 / rate);
        }
        fflush(stdout);
    }
    if (o->json) {
        printf("\n  ]\n}\n");
    }
    return rc;
}

/* Tells the server the client is done. */
static int finish(rate_t *r)
{
    r->done = 0;
    r->failed = OPAL_SUCCESS;
    int rc = send_one(r, OP_DONE, 0);
    while (OPAL_SUCCESS == rc && 0 == r->done) {
        (void) opal_rpc_progress(r->ctx, 100);
    }
    return OPAL_SUCCESS == rc ? r->failed : rc;
}

int perf_rpc_run(perf_t *p, bool in_job)
{
    perf_options_t *o = &p->opts;
    bool server = PERF_RPC_SERVER == o->command;
    rate_t r = {0};
    if (in_job) {
        const opal_proc_job_info_t *job = opal_proc_job_info();
        if (NULL == job || 2 != job->size) {
            fprintf(stderr,
                    "opal_perf: %s in a job needs exactly two ranks (mcarun -np 2), "
                    "or --uri-file between a server and a client started alone\n",
                    perf_command_name(o->command));
            return OPAL_ERR_BAD_PARAM;
        }
        server = 1 == job->my_name.vpid;
    }
    const opal_na_init_info_t na_opts = {.busy_wait = !o->blocking};
    int rc = opal_rpc_init_opt(o->na_info, server, &na_opts);
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "opal_perf: cannot open rpc over %s: %s\n", o->na_info, opal_strerror(rc));
        return rc;
    }
    uint32_t flags = handlers_inline() ? OPAL_RPC_OP_INLINE : 0;
    /* The engine keeps pointing at the operations until it finalizes. */
    static opal_rpc_op_t ops[OP_COUNT];
    ops[OP_RATE] = (opal_rpc_op_t){.handler = rate_handler, .in = &rate_in_codec, .flags = flags};
    ops[OP_DONE] = (opal_rpc_op_t){.handler = done_handler, .flags = flags};
    perf_rpc_xfer_ops(ops, flags);
    const opal_rpc_proto_t proto = {
        .name = "opal_perf", .base = RATE_BASE, .version = 1, .count = OP_COUNT, .ops = ops};
    rc = opal_rpc_proto_register(&proto);
    if (OPAL_SUCCESS == rc) {
        rc = opal_rpc_context_create(0, &r.ctx);
    }
    size_t max = 0;
    for (size_t i = 0; i < o->num_sizes; ++i) {
        max = o->sizes[i] > max ? o->sizes[i] : max;
    }
    r.data = calloc(1, max + 1);
    if (OPAL_SUCCESS == rc && NULL == r.data) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (OPAL_SUCCESS == rc) {
        rc = server ? publish(in_job, o->uri_file) : lookup(in_job, o->uri_file, &r.server);
    }
    if (OPAL_SUCCESS == rc) {
        if (server) {
            while (!server_done) {
                (void) opal_rpc_progress(r.ctx, o->blocking ? 1000 : 0);
            }
            /* The done reply leaves before the context closes. */
            for (int i = 0; i < 100; ++i) {
                (void) opal_rpc_progress(r.ctx, 1);
            }
        } else {
            if (PERF_RPC_LAT == o->command) {
                rc = perf_rpc_lat_client(p, &r);
            } else if (PERF_RPC_BW == o->command) {
                rc = perf_rpc_bw_client(p, &r);
            } else {
                rc = client(p, &r);
            }
            int frc = finish(&r);
            rc = OPAL_SUCCESS == rc ? frc : rc;
        }
    }
    if (in_job) {
        int frc = opal_fence(false);
        rc = OPAL_SUCCESS == rc ? frc : rc;
    }
    spares_release(&r);
    opal_rpc_addr_free(r.server);
    free(r.data);
    perf_rpc_xfer_server_fini();
    if (NULL != r.ctx) {
        (void) opal_rpc_context_destroy(r.ctx);
    }
    (void) opal_rpc_finalize();
    return rc;
}
