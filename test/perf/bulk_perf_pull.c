/*
 * Bulk pull bandwidth between two processes started alone, the way
 * Mercury's hg_bw_write moves data (one side pulls the other's handle):
 *
 *   bulk_perf_pull server <info> <file>          e.g. ofi+shm, ofi+tcp
 *   bulk_perf_pull client <info> <file> [inflight] [seconds-per-size]
 *
 * The server writes its URI and a serialized (bound) 4 MiB read-write
 * handle to <file> and serves until the client says "quit". The client
 * pulls 64 KiB .. 4 MiB from it, [inflight] transfers at once (default
 * 1), and prints MB/s per size (MB = 10^6 bytes, as Mercury prints).
 * Set OPAL_MCA_bulk=copy to measure the copy engine. A benchmark, not a
 * test: timing decides nothing here.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/bulk/bulk.h"
#include "opal/mca/na/base/base.h"
#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"

#define MAX_SIZE (4u << 20)

typedef struct end_t {
    opal_na_class_t *na;
    opal_na_context_t *ctx;
    opal_bulk_class_t *bc;
} end_t;

static int done_count;

static void on_done(const opal_bulk_cb_info_t *info)
{
    if (OPAL_SUCCESS != info->ret) {
        fprintf(stderr, "bulk_perf_pull: a pull failed: %s\n", opal_strerror(info->ret));
        exit(1);
    }
    ++done_count;
}

static opal_na_class_t *msg_cls;

static void on_msg(const opal_na_cb_info_t *info)
{
    *(int *) info->arg += 1;
    if (OPAL_NA_CB_RECV_UNEXPECTED == info->type) {
        opal_na_addr_free(msg_cls, info->info.recv_unexpected.source);
    }
}

static int open_end(const char *info, bool listen, end_t *e)
{
    if (OPAL_SUCCESS != opal_na_initialize(info, listen, &e->na) ||
        OPAL_SUCCESS != opal_na_context_create(e->na, 0, &e->ctx) ||
        OPAL_SUCCESS != opal_bulk_init(e->na, &e->bc)) {
        fprintf(stderr, "bulk_perf_pull: cannot open %s\n", info);
        return 1;
    }
    return 0;
}

static void progress(end_t *e)
{
    (void) opal_na_poll(e->na, e->ctx, NULL);
    (void) opal_na_trigger(e->ctx, 0, NULL);
}

static int server(const char *info, const char *file)
{
    end_t e;
    if (0 != open_end(info, true, &e)) {
        return 1;
    }
    size_t size = MAX_SIZE;
    opal_bulk_t *h = NULL;
    if (OPAL_SUCCESS != opal_bulk_create(e.bc, 1, NULL, &size, OPAL_BULK_READ_WRITE, &h) ||
        OPAL_SUCCESS != opal_bulk_bind(h, e.ctx)) {
        return 1;
    }
    opal_na_addr_t *self = NULL;
    size_t n = 0;
    (void) opal_na_addr_self(e.na, &self);
    (void) opal_na_addr_to_string(e.na, NULL, &n, self);
    char *uri = malloc(n);
    (void) opal_na_addr_to_string(e.na, uri, &n, self);
    size_t blen = opal_bulk_get_serialize_size(h, 0);
    unsigned char *blob = malloc(blen);
    (void) opal_bulk_serialize(blob, blen, 0, h);
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", file);
    FILE *f = fopen(tmp, "w");
    if (NULL == f) {
        return 1;
    }
    fprintf(f, "%s\n", uri);
    for (size_t i = 0; i < blen; ++i) {
        fprintf(f, "%02x", blob[i]);
    }
    fprintf(f, "\n");
    if (0 != fclose(f) || 0 != rename(tmp, file)) {
        return 1;
    }
    char req[64];
    int got = 0;
    msg_cls = e.na;
    (void) opal_na_msg_recv_unexpected(e.na, e.ctx, on_msg, &got, req, sizeof(req), NULL, NULL);
    /* Spins, as Mercury's perf server does by default (busy polling). */
    while (0 == got) {
        progress(&e);
    }
    opal_na_addr_free(e.na, self);
    free(uri);
    free(blob);
    (void) opal_bulk_free(h);
    (void) opal_bulk_finalize(e.bc);
    (void) opal_na_context_destroy(e.na, e.ctx);
    (void) opal_na_finalize(e.na);
    return 0;
}

static int client(const char *info, const char *file, int inflight, double seconds)
{
    end_t e;
    if (0 != open_end(info, false, &e)) {
        return 1;
    }
    FILE *f = fopen(file, "r");
    static char uri[4096], hex[1 << 16];
    if (NULL == f || NULL == fgets(uri, sizeof(uri), f) || NULL == fgets(hex, sizeof(hex), f)) {
        fprintf(stderr, "bulk_perf_pull: cannot read %s\n", file);
        return 1;
    }
    fclose(f);
    uri[strcspn(uri, "\n")] = '\0';
    hex[strcspn(hex, "\n")] = '\0';
    size_t blen = strlen(hex) / 2;
    unsigned char *blob = malloc(blen);
    for (size_t i = 0; i < blen; ++i) {
        unsigned int v;
        sscanf(hex + 2 * i, "%2x", &v);
        blob[i] = (unsigned char) v;
    }
    opal_na_addr_t *server_addr = NULL;
    opal_bulk_t *remote = NULL, *local = NULL;
    size_t size = MAX_SIZE * (size_t) inflight;
    if (OPAL_SUCCESS != opal_na_addr_lookup(e.na, uri, &server_addr) ||
        OPAL_SUCCESS != opal_bulk_deserialize(e.bc, &remote, blob, blen) ||
        OPAL_SUCCESS != opal_bulk_create(e.bc, 1, NULL, &size, OPAL_BULK_READ_WRITE, &local)) {
        fprintf(stderr, "bulk_perf_pull: cannot set up the transfer\n");
        return 1;
    }
    printf("# bulk pull over %s, %d in flight, engine by choice%s\n", info, inflight,
           NULL != getenv("OPAL_MCA_bulk") ? " (OPAL_MCA_bulk set)" : "");
    printf("%10s %12s %10s\n", "size", "MB/s", "pulls");
    for (size_t sz = 64 * 1024; sz <= MAX_SIZE; sz *= 2) {
        int started = 0;
        done_count = 0;
        uint64_t t0 = 0, deadline_ns = (uint64_t) (seconds * 1e9);
        int warm = 20, counted_from = warm;
        const char *engine = NULL;
        for (;;) {
            while (started - done_count < inflight) {
                opal_bulk_op_t *op = NULL;
                int slot = started % inflight;
                if (OPAL_SUCCESS != opal_bulk_transfer(e.bc, e.ctx, on_done, NULL, OPAL_BULK_PULL,
                                                       server_addr, 0, remote, 0, local,
                                                       (size_t) slot * MAX_SIZE, sz, &op)) {
                    return 1;
                }
                engine = opal_bulk_op_engine(op);
                ++started;
            }
            progress(&e);
            if (done_count == warm && 0 == t0) {
                t0 = opal_timer_ns();
            }
            if (0 != t0 && opal_timer_ns() - t0 > deadline_ns) {
                break;
            }
        }
        uint64_t ns = opal_timer_ns() - t0;
        int pulls = done_count - counted_from;
        while (done_count < started) {
            progress(&e);
        }
        printf("%10zu %12.1f %10d %s\n", sz, (double) pulls * (double) sz / ((double) ns / 1e3),
               pulls, engine);
        fflush(stdout);
    }
    int sent = 0;
    (void) opal_na_msg_send_unexpected(e.na, e.ctx, on_msg, &sent, "quit", 4, NULL, server_addr, 0,
                                       0, NULL);
    while (0 == sent) {
        progress(&e);
    }
    opal_na_addr_free(e.na, server_addr);
    (void) opal_bulk_free(remote);
    (void) opal_bulk_free(local);
    free(blob);
    (void) opal_bulk_finalize(e.bc);
    (void) opal_na_context_destroy(e.na, e.ctx);
    (void) opal_na_finalize(e.na);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bulk_perf_pull server|client <info> <file> [inflight] "
                        "[seconds-per-size]\n");
        return 2;
    }
    if (OPAL_SUCCESS != opal_init_util(&argc, &argv)) {
        return 1;
    }
    int rc = 0 == strcmp(argv[1], "server") ? server(argv[2], argv[3])
                                            : client(argv[2], argv[3], argc > 4 ? atoi(argv[4]) : 1,
                                                     argc > 5 ? atof(argv[5]) : 1.0);
    (void) opal_finalize_util();
    return rc;
}
