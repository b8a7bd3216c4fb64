/*
 * opal_perf rpc-lat and rpc-bw, measured as Mercury's perf tools measure
 * (Testing/perf/hg), so that contrib/perf/compare-mercury-rpc.sh compares
 * like with like:
 *
 *   rpc-lat  one RPC in flight carrying an IOV of the size, answered with
 *            the same bytes (past the eager size both go by bulk, as the
 *            engine does on its own); the round trip of each RPC: its
 *            average, median, minimum and 99th percentile, in us
 *   rpc-bw   the client sends its bulk handle once (a BULK field); then
 *            every RPC asks the server's handler to push (read: the
 *            client reads the server's data, as hg_bw_read, whose handler
 *            pushes) or pull (write, as hg_bw_write) --window chunks
 *            of the size from or into it with opal_rpc_bulk_transfer, and
 *            the handler replies once all completed; one RPC in flight,
 *            MB/s (10^6 bytes) of the chunks over the time, at the client
 */
#include "opal/opal_config.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "tools/opal_perf/opal_perf_rpc.h"

#define LAT_FIELDS(X) X(opal_rpc_iov_t, data, IOV)
OPAL_RPC_STRUCT(perf_lat, LAT_FIELDS);

#define BW_INIT_FIELDS(X) X(opal_bulk_t *, bulk, BULK)
OPAL_RPC_STRUCT(perf_bw_init, BW_INIT_FIELDS);

#define BW_FIELDS(X)                                                                               \
    X(uint8_t, op, VAR)                                                                            \
    X(uint32_t, count, VAR)                                                                        \
    X(uint64_t, size, VAR)                                                                         \
    X(bool, validate, VAR)
OPAL_RPC_STRUCT(perf_bw, BW_FIELDS);

/* A client's handle larger than this is refused by the server (the
 * largest size times the largest window is 4 TiB). */
#define BW_MAX_HANDLE ((size_t) 4 << 30)

/* The pattern a validated run moves: depends on the size and the offset. */
static uint8_t pattern(size_t size, size_t i)
{
    return (uint8_t) (size * 13 + i * 5 + (i >> 9));
}

static void fill(uint8_t *buf, size_t n, size_t size)
{
    for (size_t i = 0; i < n; ++i) {
        buf[i] = pattern(size, i);
    }
}

static bool holds(const uint8_t *buf, size_t n, size_t size)
{
    for (size_t i = 0; i < n; ++i) {
        if (buf[i] != pattern(size, i)) {
            return false;
        }
    }
    return true;
}

/* ----------------------------------------------------------- the server */

static void lat_handler(opal_rpc_request_t *req)
{
    const perf_lat_t *in = opal_rpc_req_input(req);
    perf_lat_t *out = opal_rpc_req_output(req);
    /* Encoded (or exposed by bulk, a copy) inside the reply: the input's
     * bytes may be pointed at. */
    out->data = in->data;
    (void) opal_rpc_reply_send(req);
    out->data.buf = NULL;
    out->data.len = 0;
}

/* What the server keeps between rpc-bw's RPCs: the client's handle and a
 * local buffer as large. */
static struct {
    opal_bulk_t *remote;
    opal_bulk_t *local;
    uint8_t *buf;
    size_t size;
} bw_server;

void perf_rpc_xfer_server_fini(void)
{
    (void) opal_bulk_free(bw_server.remote);
    (void) opal_bulk_free(bw_server.local);
    free(bw_server.buf);
    memset(&bw_server, 0, sizeof(bw_server));
}

static void bw_init_handler(opal_rpc_request_t *req)
{
    const perf_bw_init_t *in = opal_rpc_req_input(req);
    char why[128];
    perf_rpc_xfer_server_fini();
    size_t size = NULL == in->bulk ? 0 : opal_bulk_get_size(in->bulk);
    if (0 == size || size > BW_MAX_HANDLE) {
        snprintf(why, sizeof(why), "rpc-bw: a client handle of %zu bytes (1 B to 4 GiB)", size);
        (void) opal_rpc_reply_error(req, OPAL_ERR_BAD_PARAM, why);
        return;
    }
    /* Page-aligned, as Mercury's perf tools allocate theirs (and as the
     * na benchmarks here do): an unaligned buffer splits every page a
     * single copy moves in two, about 15 % of a read's bandwidth. */
    if (0 != posix_memalign((void **) &bw_server.buf, 4096, size)) {
        bw_server.buf = NULL;
    } else {
        /* Written once, as Mercury's server writes its own: pages never
         * written all read as the kernel's one zero page, which stays in
         * cache, so a read (the server's push) out of them would copy
         * from cache rather than from memory. */
        memset(bw_server.buf, 0x5a, size);
    }
    void *bufs[1] = {bw_server.buf};
    int rc = NULL == bw_server.buf ? OPAL_ERR_OUT_OF_RESOURCE
                                   : opal_bulk_create(opal_rpc_bulk_class(), 1, bufs, &size,
                                                      OPAL_BULK_READ_WRITE, &bw_server.local);
    if (OPAL_SUCCESS != rc) {
        snprintf(why, sizeof(why), "rpc-bw: no buffer of %zu bytes: %s", size, opal_strerror(rc));
        perf_rpc_xfer_server_fini();
        (void) opal_rpc_reply_error(req, rc, why);
        return;
    }
    /* The request's input lets go of its handle when it is released. */
    (void) opal_bulk_ref_incr(in->bulk);
    bw_server.remote = in->bulk;
    bw_server.size = size;
    (void) opal_rpc_reply_send(req);
}

/* One rpc-bw RPC's transfers. pending counts them plus one for the
 * handler while it starts them (it may run on a pool worker while the
 * first ones complete in the progress thread). */
typedef struct {
    opal_rpc_request_t *req;
    _Atomic int pending;
    _Atomic int status;
    bool pull;
    bool validate;
    size_t bytes;
    size_t size;
} bw_call_t;

static void bw_drop(bw_call_t *call)
{
    if (1 != atomic_fetch_sub_explicit(&call->pending, 1, memory_order_acq_rel)) {
        return;
    }
    int status = atomic_load_explicit(&call->status, memory_order_relaxed);
    if (OPAL_SUCCESS == status && call->pull && call->validate &&
        !holds(bw_server.buf, call->bytes, call->size)) {
        (void) opal_rpc_reply_error(call->req, OPAL_ERR_BAD_VALUE,
                                    "rpc-bw: the chunks pulled do not hold the client's bytes");
    } else if (OPAL_SUCCESS == status) {
        (void) opal_rpc_reply_send(call->req);
    } else {
        char why[128];
        snprintf(why, sizeof(why), "rpc-bw: a bulk transfer failed: %s", opal_strerror(status));
        (void) opal_rpc_reply_error(call->req, status, why);
    }
    opal_rpc_req_decref(call->req);
    free(call);
}

static void bw_transfer_done(const opal_bulk_cb_info_t *info)
{
    bw_call_t *call = info->arg;
    if (OPAL_SUCCESS != info->ret) {
        int ok = OPAL_SUCCESS;
        (void) atomic_compare_exchange_strong(&call->status, &ok, info->ret);
    }
    bw_drop(call);
}

static void bw_handler(opal_rpc_request_t *req)
{
    const perf_bw_t *in = opal_rpc_req_input(req);
    char why[160];
    if (NULL == bw_server.remote || in->op > OPAL_BULK_PUSH || in->count > PERF_MAX_WINDOW ||
        in->size > PERF_MAX_SIZE || in->size * in->count > bw_server.size) {
        snprintf(why, sizeof(why),
                 "rpc-bw: %u chunks of %llu bytes do not fit the client's handle (%zu bytes)",
                 in->count, (unsigned long long) in->size, bw_server.size);
        (void) opal_rpc_reply_error(req, OPAL_ERR_BAD_PARAM, why);
        return;
    }
    bw_call_t *call = calloc(1, sizeof(*call));
    if (NULL == call) {
        (void) opal_rpc_reply_error(req, OPAL_ERR_OUT_OF_RESOURCE, "rpc-bw: no memory");
        return;
    }
    opal_rpc_req_addref(req);
    call->req = req;
    call->pull = OPAL_BULK_PULL == in->op;
    call->validate = in->validate;
    call->size = (size_t) in->size;
    call->bytes = (size_t) in->size * in->count;
    atomic_init(&call->status, OPAL_SUCCESS);
    uint32_t count = 0 == in->size ? 0 : in->count;
    atomic_init(&call->pending, (int) count + 1);
    if (!call->pull && call->validate) {
        fill(bw_server.buf, call->bytes, call->size);
    }
    for (uint32_t i = 0; i < count; ++i) {
        size_t at = (size_t) i * call->size;
        int rc =
            opal_rpc_bulk_transfer(req, (opal_bulk_op_type_t) in->op, bw_server.remote, at,
                                   bw_server.local, at, call->size, bw_transfer_done, call, NULL);
        if (OPAL_SUCCESS != rc) {
            /* The ones started complete on their own. */
            int ok = OPAL_SUCCESS;
            (void) atomic_compare_exchange_strong(&call->status, &ok, rc);
            atomic_fetch_sub_explicit(&call->pending, (int) (count - i), memory_order_acq_rel);
            break;
        }
    }
    bw_drop(call);
}

void perf_rpc_xfer_ops(opal_rpc_op_t *ops, uint32_t flags)
{
    ops[PERF_RPC_OP_LAT] = (opal_rpc_op_t){
        .handler = lat_handler, .in = &perf_lat_codec, .out = &perf_lat_codec, .flags = flags};
    ops[PERF_RPC_OP_BW_INIT] =
        (opal_rpc_op_t){.handler = bw_init_handler, .in = &perf_bw_init_codec, .flags = flags};
    ops[PERF_RPC_OP_BW] =
        (opal_rpc_op_t){.handler = bw_handler, .in = &perf_bw_codec, .flags = flags};
}

/* ----------------------------------------------------------- the client */

int perf_rpc_wait(const perf_t *p, perf_rpc_t *r, long target)
{
    while (r->done < target && OPAL_SUCCESS == r->failed) {
        (void) opal_rpc_progress(r->ctx, p->opts.blocking ? 1000 : 0);
    }
    return r->failed;
}

/* A completion: counts it and keeps the first failure (with its reason). */
static void note(perf_rpc_t *r, opal_rpc_request_t *req, int status, const char *what)
{
    if (OPAL_SUCCESS != status && OPAL_SUCCESS == r->failed) {
        const char *why = opal_rpc_req_error_reason(req);
        fprintf(stderr, "opal_perf: %s: %s%s%s\n", what, opal_strerror(status),
                NULL == why ? "" : ": ", NULL == why ? "" : why);
        r->failed = status;
    }
    ++r->done;
}

typedef struct {
    perf_rpc_t *r;
    size_t size;
    bool validate;
} lat_call_t;

static void lat_done(opal_rpc_request_t *req, int status, void *arg)
{
    lat_call_t *c = arg;
    const perf_lat_t *out = opal_rpc_req_output(req);
    if (OPAL_SUCCESS == status && c->validate &&
        (out->data.len != c->size ||
         (c->size > 0 && 0 != memcmp(out->data.buf, c->r->data, c->size)))) {
        fprintf(stderr, "opal_perf: rpc-lat: the answer of %zu bytes is not what was sent\n",
                c->size);
        status = OPAL_ERR_BAD_VALUE;
    }
    note(c->r, req, status, "rpc-lat");
}

static int call_lat(const perf_t *p, perf_rpc_t *r, lat_call_t *c)
{
    const opal_rpc_endpoint_t ep = {.addr = r->server, .ctx_idx = 0};
    opal_rpc_request_t *req = NULL;
    int rc =
        opal_rpc_req_create(r->ctx, &ep, OPAL_RPC_OPCODE(PERF_RPC_BASE, 1, PERF_RPC_OP_LAT), &req);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    perf_lat_t *in = opal_rpc_req_input(req);
    in->data.buf = r->data;
    in->data.len = (uint32_t) c->size;
    long target = r->done + 1;
    rc = opal_rpc_req_send(req, lat_done, c);
    return OPAL_SUCCESS == rc ? perf_rpc_wait(p, r, target) : rc;
}

int perf_rpc_lat_client(perf_t *p, perf_rpc_t *r)
{
    const perf_options_t *o = &p->opts;
    int rc = OPAL_SUCCESS;
    if (o->json) {
        printf("{\n  \"command\": \"rpc-lat\",\n  \"na\": \"%s\",\n  \"blocking\": %s,\n"
               "  \"results\": [",
               o->na_info, o->blocking ? "true" : "false");
    } else {
        printf("# opal_perf rpc-lat over na %s, one RPC in flight%s; round trip of one RPC\n",
               o->na_info, o->blocking ? " (blocking progress)" : " (busy polling)");
        printf("%-10s%16s%14s%14s%14s\n", "# Size", "Avg (us)", "Median (us)", "Min (us)",
               "P99 (us)");
    }
    for (size_t i = 0; i < o->num_sizes && OPAL_SUCCESS == rc; ++i) {
        size_t size = o->sizes[i];
        long iterations = perf_iterations(o, size);
        long warmup = perf_warmup(o, size);
        double *us = malloc((size_t) iterations * sizeof(double));
        if (NULL == us) {
            rc = OPAL_ERR_OUT_OF_RESOURCE;
            break;
        }
        lat_call_t c = {.r = r, .size = size, .validate = o->validate};
        double sum = 0;
        for (long k = 0; k < warmup + iterations && OPAL_SUCCESS == rc; ++k) {
            uint64_t t0 = opal_timer_ns();
            rc = call_lat(p, r, &c);
            if (k >= warmup) {
                us[k - warmup] = (double) (opal_timer_ns() - t0) / 1e3;
                sum += us[k - warmup];
            }
        }
        if (OPAL_SUCCESS != rc) {
            free(us);
            break;
        }
        size_t n = (size_t) iterations;
        double median, min, p99;
        perf_percentiles(us, n, &median, &min, &p99);
        double avg = sum / (double) n;
        if (o->json) {
            printf("%s\n    {\"size\": %zu, \"iterations\": %ld, \"avg_us\": %.3f, "
                   "\"median_us\": %.3f, \"min_us\": %.3f, \"p99_us\": %.3f}",
                   0 == i ? "" : ",", size, iterations, avg, median, min, p99);
        } else {
            printf("%-10zu%16.2f%14.2f%14.2f%14.2f\n", size, avg, median, min, p99);
        }
        fflush(stdout);
        free(us);
    }
    if (o->json) {
        printf("\n  ]\n}\n");
    }
    return rc;
}

static void bw_done(opal_rpc_request_t *req, int status, void *arg)
{
    note(arg, req, status, "rpc-bw");
}

static int call_bw(const perf_t *p, perf_rpc_t *r, int op, opal_bulk_t *handle, uint8_t dir,
                   size_t size)
{
    const opal_rpc_endpoint_t ep = {.addr = r->server, .ctx_idx = 0};
    opal_rpc_request_t *req = NULL;
    int rc = opal_rpc_req_create(r->ctx, &ep, OPAL_RPC_OPCODE(PERF_RPC_BASE, 1, op), &req);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if (PERF_RPC_OP_BW_INIT == op) {
        ((perf_bw_init_t *) opal_rpc_req_input(req))->bulk = handle;
    } else {
        perf_bw_t *in = opal_rpc_req_input(req);
        in->op = dir;
        in->count = (uint32_t) p->opts.window;
        in->size = size;
        in->validate = p->opts.validate;
    }
    long target = r->done + 1;
    rc = opal_rpc_req_send(req, bw_done, r);
    return OPAL_SUCCESS == rc ? perf_rpc_wait(p, r, target) : rc;
}

/* MB/s of window chunks of size moved by iterations RPCs after warmup. */
static int measure_bw(const perf_t *p, perf_rpc_t *r, uint8_t dir, size_t size, double *mbps)
{
    long iterations = perf_iterations(&p->opts, size);
    long warmup = perf_warmup(&p->opts, size);
    uint64_t start = 0;
    for (long k = 0; k < warmup + iterations; ++k) {
        if (k == warmup) {
            start = opal_timer_ns();
        }
        int rc = call_bw(p, r, PERF_RPC_OP_BW, NULL, dir, size);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    uint64_t ns = opal_timer_ns() - start;
    *mbps =
        (double) size * p->opts.window * (double) iterations / ((double) (ns ? ns : 1) / 1e9) / 1e6;
    return OPAL_SUCCESS;
}

int perf_rpc_bw_client(perf_t *p, perf_rpc_t *r)
{
    const perf_options_t *o = &p->opts;
    size_t max = 0;
    for (size_t i = 0; i < o->num_sizes; ++i) {
        max = o->sizes[i] > max ? o->sizes[i] : max;
    }
    size_t total = (max > 0 ? max : 1) * (size_t) o->window;
    opal_bulk_t *handle = NULL;
    uint8_t *buf = NULL;
    if (0 != posix_memalign((void **) &buf, 4096, total)) {
        buf = NULL;
    }
    void *bufs[1] = {buf};
    int rc = NULL == buf ? OPAL_ERR_OUT_OF_RESOURCE
                         : opal_bulk_create(opal_rpc_bulk_class(), 1, bufs, &total,
                                            OPAL_BULK_READ_WRITE, &handle);
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "opal_perf: rpc-bw: no bulk handle of %zu bytes: %s\n", total,
                opal_strerror(rc));
        free(buf);
        return rc;
    }
    memset(buf, 0, total);
    rc = call_bw(p, r, PERF_RPC_OP_BW_INIT, handle, 0, 0);
    if (o->json) {
        printf("{\n  \"command\": \"rpc-bw\",\n  \"na\": \"%s\",\n  \"window\": %d,\n"
               "  \"blocking\": %s,\n  \"results\": [",
               o->na_info, o->window, o->blocking ? "true" : "false");
    } else {
        printf("# opal_perf rpc-bw over na %s: the handler pushes (read) or pulls (write) %d "
               "chunks per RPC%s\n",
               o->na_info, o->window, o->blocking ? " (blocking progress)" : " (busy polling)");
        printf("%-10s%20s%20s\n", "# Size", "Read (MB/s)", "Write (MB/s)");
    }
    for (size_t i = 0; i < o->num_sizes && OPAL_SUCCESS == rc; ++i) {
        size_t size = o->sizes[i];
        size_t bytes = size * (size_t) o->window;
        double read = 0, write = 0;
        if (o->validate) {
            fill(buf, bytes, size);
        }
        /* The pull (write) first: with --validate the server then holds
         * the client's pattern, and its push (read) must bring it back. */
        rc = measure_bw(p, r, OPAL_BULK_PULL, size, &write);
        if (OPAL_SUCCESS == rc) {
            if (o->validate) {
                memset(buf, 0, bytes);
            }
            rc = measure_bw(p, r, OPAL_BULK_PUSH, size, &read);
        }
        if (OPAL_SUCCESS == rc && o->validate && !holds(buf, bytes, size)) {
            fprintf(stderr,
                    "opal_perf: rpc-bw: the handle does not hold what the server pushed "
                    "(size %zu)\n",
                    size);
            rc = OPAL_ERR_BAD_VALUE;
        }
        if (OPAL_SUCCESS != rc) {
            break;
        }
        if (o->json) {
            printf("%s\n    {\"size\": %zu, \"iterations\": %ld, \"read_mb_s\": %.2f, "
                   "\"write_mb_s\": %.2f}",
                   0 == i ? "" : ",", size, perf_iterations(o, size), read, write);
        } else {
            printf("%-10zu%20.2f%20.2f\n", size, read, write);
        }
        fflush(stdout);
    }
    if (o->json) {
        printf("\n  ]\n}\n");
    }
    (void) opal_bulk_free(handle);
    free(buf);
    return rc;
}
