/*
 * The rpc engine between processes over na/ofi (tcp and shm): a server
 * started alone (rpc_peer) writes its URI to a file; the client looks it
 * up and sends requests to its contexts, inputs and outputs around the
 * eager size and larger (by bulk, up to 64 MiB); an abort and a peer
 * failure while an output is pulled (each completes once, and the server
 * lets the output go); and a server killed with requests in flight (each
 * completes once, with an error); requests a server never answers, then
 * it finalizes or dies, over na/btl (each completes once, soon, as peer
 * failed, with no failure detector); a timeout while an output is pulled
 * (the rpc_bulk_pull_hold fault site); one-way inputs past the eager size
 * (by bulk, acknowledged by the server).
 */
#include "opal/opal_config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "opal/mca/na/base/base.h"
#include "opal/mca/rpc/base/rpc_base_header.h"
#include "opal/mca/rpc/rpc.h"
#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_fault.h"
#include "test/rpc/rpc_test_proto.h"
#include "test/support/opal_test.h"

#define TIMEOUT 60

static pid_t server_pid;
/* When not NULL, the server's rpc_base_timeout (seconds): how long it
 * holds an output by bulk that the client did not release. */
static const char *server_timeout;
static opal_rpc_context_t *ctx;
static opal_na_addr_t *server;
static volatile bool unused_stop;

static char *start_server(const char *info)
{
    char uri_file[256];
    snprintf(uri_file, sizeof(uri_file), "/tmp/rpc_procs_%d.uri", (int) getpid());
    unlink(uri_file);
    server_pid = fork();
    ck_assert_int_ge(server_pid, 0);
    if (0 == server_pid) {
        if (NULL != server_timeout) {
            setenv("OPAL_MCA_rpc_base_timeout", server_timeout, 1);
        }
        execl(RPC_TEST_BUILDDIR "/test/rpc/rpc_peer", "rpc_peer", info, uri_file, (char *) NULL);
        _exit(127);
    }
    time_t deadline = time(NULL) + TIMEOUT;
    struct stat st;
    while (0 != stat(uri_file, &st)) {
        ck_assert_msg(time(NULL) < deadline, "the server wrote no URI to %s", uri_file);
        int status;
        ck_assert_msg(0 == waitpid(server_pid, &status, WNOHANG), "the server exited early");
        usleep(10000);
    }
    FILE *f = fopen(uri_file, "r");
    char line[4096] = "";
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
    fclose(f);
    unlink(uri_file);
    line[strcspn(line, "\n")] = '\0';
    return strdup(line);
}

static void open_client(const char *info)
{
#ifdef RPC_TEST_PLUGIN_DIRS
    setenv("OPAL_MCA_mca_base_component_path", RPC_TEST_PLUGIN_DIRS, 0);
#endif
    ck_assert_int_eq(opal_init_util(NULL, NULL), OPAL_SUCCESS);
    char *uri = start_server(info);
    ck_assert_int_eq(opal_rpc_init(info, false), OPAL_SUCCESS);
    ck_assert_int_eq(rpc_test_proto_register(&unused_stop), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_context_create(0, &ctx), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_addr_lookup(uri, &server), OPAL_SUCCESS);
    free(uri);
}

typedef struct {
    int calls;
    int status;
    uint32_t value;
    uint8_t ctx_idx;
    uint32_t data_len;
    bool fill_ok;      /* the output's bytes are rpc_test_byte(i) */
    uint32_t words[2]; /* an 8-byte output's bytes as two u32 (noted) */
    uint32_t clock[3]; /* a 12-byte output (clock): a timestamp, a count */
    char reason[256];
} outcome_t;

static void record(opal_rpc_request_t *req, int status, void *arg)
{
    outcome_t *o = arg;
    o->status = status;
    const rpc_test_out_t *out = opal_rpc_req_output(req);
    if (OPAL_SUCCESS == status && NULL != out) {
        o->value = out->value;
        o->ctx_idx = out->ctx_idx;
        o->data_len = out->data.len;
        const uint8_t *bytes = out->data.buf;
        o->fill_ok = true;
        if (sizeof(o->words) == out->data.len) {
            memcpy(o->words, out->data.buf, sizeof(o->words));
        }
        if (sizeof(o->clock) == out->data.len) {
            memcpy(o->clock, out->data.buf, sizeof(o->clock));
        }
        for (uint32_t i = 0; i < out->data.len && o->fill_ok; ++i) {
            o->fill_ok = bytes[i] == rpc_test_byte(i);
        }
    }
    const char *why = opal_rpc_req_error_reason(req);
    snprintf(o->reason, sizeof(o->reason), "%s", NULL == why ? "" : why);
    o->calls++;
}

static bool called(void *arg)
{
    return ((outcome_t *) arg)->calls > 0;
}

static int call(int op, uint8_t ctx_idx, uint32_t value, void *data, uint32_t len, outcome_t *o)
{
    const opal_rpc_endpoint_t ep = {.addr = server, .ctx_idx = ctx_idx};
    opal_rpc_request_t *req = NULL;
    memset(o, 0, sizeof(*o));
    ck_assert_int_eq(opal_rpc_req_create(ctx, &ep, OPAL_RPC_OPCODE(RPC_TEST_BASE, 1, op), &req),
                     OPAL_SUCCESS);
    rpc_test_in_t *in = opal_rpc_req_input(req);
    in->value = value;
    in->text = "text";
    in->data.buf = data;
    in->data.len = len;
    int rc = opal_rpc_req_send(req, record, o);
    if (OPAL_SUCCESS == rc) {
        ck_assert_int_eq(opal_rpc_progress_cond(ctx, TIMEOUT * 1000, called, o), OPAL_SUCCESS);
    }
    return rc;
}

static void stop_server(void)
{
    outcome_t o;
    ck_assert_int_eq(call(RPC_TEST_STOP, 0, 0, NULL, 0, &o), OPAL_SUCCESS);
    ck_assert_int_eq(o.status, OPAL_SUCCESS);
    int status = 0;
    ck_assert_int_eq(waitpid(server_pid, &status, 0), server_pid);
    ck_assert(WIFEXITED(status) && 0 == WEXITSTATUS(status));
}

static void close_client(void)
{
    opal_rpc_addr_free(server);
    ck_assert_int_eq(opal_rpc_context_destroy(ctx), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_finalize(), OPAL_SUCCESS);
    (void) opal_finalize_util();
}

static void requests_to_a_server_started_alone(const char *info)
{
    outcome_t o;
    open_client(info);
    for (uint32_t i = 0; i < 100; ++i) {
        ck_assert_int_eq(call(RPC_TEST_ECHO, (uint8_t) (i & 1), i, NULL, 0, &o), OPAL_SUCCESS);
        ck_assert_int_eq(o.status, OPAL_SUCCESS);
        ck_assert_uint_eq(o.value, i + 1);
        ck_assert_uint_eq(o.ctx_idx, i & 1);
    }
    /* Inputs of the eager size - 1, + 1, and 1 MiB (by bulk). */
    size_t eager = opal_na_msg_get_max_unexpected_size(opal_rpc_na_class());
    size_t fits = eager - OPAL_RPC_HDR_SIZE - (4 + 4 + 4 + 4); /* value, text, iov length */
    size_t sizes[] = {fits - 1, fits, fits + 1, (size_t) 1 << 20};
    uint8_t *data = malloc((size_t) 1 << 20);
    for (size_t i = 0; i < ((size_t) 1 << 20); ++i) {
        data[i] = (uint8_t) (i * 7);
    }
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); ++k) {
        uint32_t want = 0;
        for (size_t i = 0; i < sizes[k]; ++i) {
            want += data[i];
        }
        ck_assert_int_eq(call(RPC_TEST_SUM, 1, 0, data, (uint32_t) sizes[k], &o), OPAL_SUCCESS);
        ck_assert_msg(OPAL_SUCCESS == o.status, "%zu bytes: %s", sizes[k], o.reason);
        ck_assert_uint_eq(o.value, want);
        ck_assert_uint_eq(o.ctx_idx, 1);
    }
    /* Both ways by bulk: the echo's output is as large as its input. */
    ck_assert_int_eq(call(RPC_TEST_ECHO, 0, 1, data, (uint32_t) eager, &o), OPAL_SUCCESS);
    ck_assert_msg(OPAL_SUCCESS == o.status, "%s", o.reason);
    ck_assert_uint_eq(o.data_len, eager);
    free(data);
    stop_server();
    close_client();
}

static uint64_t bulk_outputs(void)
{
    opal_rpc_stats_t stats;
    opal_rpc_context_stats(ctx, &stats);
    return stats.bulk_outputs;
}

/* Asks the server's context ctx_idx until it holds no output by bulk (the
 * release is one-way: it may come after the next request). */
static void assert_server_releases(uint8_t ctx_idx)
{
    outcome_t o;
    time_t deadline = time(NULL) + TIMEOUT;
    for (;;) {
        ck_assert_int_eq(call(RPC_TEST_HELD, ctx_idx, 0, NULL, 0, &o), OPAL_SUCCESS);
        ck_assert_int_eq(o.status, OPAL_SUCCESS);
        if (0 == o.value) {
            return;
        }
        ck_assert_msg(time(NULL) < deadline, "the server still holds %u outputs", o.value);
        (void) opal_rpc_progress(ctx, 10);
    }
}

static void outputs_of_every_size(const char *info)
{
    outcome_t o;
    open_client(info);
    /* The output's encoding: value, ctx_idx, the IOV's length, its bytes;
     * a message adds the rpc header. */
    size_t eager = opal_na_msg_get_max_unexpected_size(opal_rpc_na_class());
    size_t fits = eager - OPAL_RPC_HDR_SIZE - (4 + 1 + 4);
    size_t sizes[] = {0, fits - 1, fits, fits + 1, (size_t) 1 << 20, (size_t) 64 << 20};
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); ++k) {
        uint64_t before = bulk_outputs();
        ck_assert_int_eq(call(RPC_TEST_FILL, 1, (uint32_t) sizes[k], NULL, 0, &o), OPAL_SUCCESS);
        ck_assert_msg(OPAL_SUCCESS == o.status, "%zu bytes: %s", sizes[k], o.reason);
        ck_assert_uint_eq(o.value, sizes[k]);
        ck_assert_uint_eq(o.data_len, sizes[k]);
        ck_assert_msg(o.fill_ok, "%zu bytes: the output's bytes differ", sizes[k]);
        ck_assert_uint_eq(o.ctx_idx, 1);
        /* By bulk exactly when the reply would not fit one message. */
        ck_assert_uint_eq(bulk_outputs() - before, sizes[k] > fits ? 1 : 0);
    }
    assert_server_releases(1);
    stop_server();
    close_client();
}

/* A 64 MiB output is being pulled when the request is aborted (or its
 * peer declared failed): it completes once, with that outcome; the pull
 * is canceled, the server is told to let the bytes go, and the context
 * closes (no transfer left on it). */
static void output_pull_interrupted(const char *info, bool abort_it)
{
    outcome_t o;
    open_client(info);
    const opal_rpc_endpoint_t ep = {.addr = server, .ctx_idx = 0};
    opal_rpc_request_t *req = NULL;
    memset(&o, 0, sizeof(o));
    ck_assert_int_eq(
        opal_rpc_req_create(ctx, &ep, OPAL_RPC_OPCODE(RPC_TEST_BASE, 1, RPC_TEST_FILL), &req),
        OPAL_SUCCESS);
    ((rpc_test_in_t *) opal_rpc_req_input(req))->value = 64u << 20;
    opal_rpc_req_addref(req); /* to abort it after send */
    ck_assert_int_eq(opal_rpc_req_send(req, record, &o), OPAL_SUCCESS);
    /* The reply came and the pull started; its completion needs another
     * round of progress, so the request is still in flight here. */
    time_t deadline = time(NULL) + TIMEOUT;
    while (0 == bulk_outputs()) {
        ck_assert_msg(0 == o.calls, "completed before its output was pulled: %s", o.reason);
        ck_assert(time(NULL) < deadline);
        (void) opal_rpc_progress(ctx, 1);
    }
    ck_assert_int_eq(o.calls, 0);
    if (abort_it) {
        ck_assert_int_eq(opal_rpc_req_abort(req), OPAL_SUCCESS);
    } else {
        ck_assert_int_eq(opal_rpc_peer_failed(ctx, server), OPAL_SUCCESS);
    }
    opal_rpc_req_decref(req);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, TIMEOUT * 1000, called, &o), OPAL_SUCCESS);
    for (int k = 0; k < 20; ++k) {
        (void) opal_rpc_progress(ctx, 5);
    }
    ck_assert_int_eq(o.calls, 1);
    ck_assert_int_eq(o.status, abort_it ? OPAL_ERR_CANCELED : OPAL_ERR_PEER_FAILED);
    opal_rpc_stats_t stats;
    opal_rpc_context_stats(ctx, &stats);
    ck_assert_uint_eq(stats.late_replies, 0);
    assert_server_releases(0);
    /* The engine goes on: the next large output arrives whole. */
    ck_assert_int_eq(call(RPC_TEST_FILL, 0, 1u << 20, NULL, 0, &o), OPAL_SUCCESS);
    ck_assert_msg(OPAL_SUCCESS == o.status && o.fill_ok, "%s", o.reason);
    stop_server();
    close_client();
}

static void never_runs(opal_rpc_request_t *req)
{
    (void) req;
    ck_abort_msg("a client-only operation ran");
}

static void client_stats(opal_rpc_stats_t *stats)
{
    opal_rpc_context_stats(ctx, stats);
}

/* One-way inputs past the eager size go by bulk: the completion runs once
 * the server acknowledged the pull (status OPAL_SUCCESS), the client holds
 * no exposure after it, and the handler saw every byte. */
static void one_way_inputs_by_bulk(const char *info)
{
    outcome_t o;
    open_client(info);
    size_t eager = opal_na_msg_get_max_unexpected_size(opal_rpc_na_class());
    size_t fits = eager - OPAL_RPC_HDR_SIZE - (4 + 4 + 4 + 4); /* value, text, iov length */
    size_t sizes[] = {fits, fits + 1, (size_t) 1 << 20, fits + 1};
    uint8_t *data = malloc((size_t) 1 << 20);
    for (size_t i = 0; i < ((size_t) 1 << 20); ++i) {
        data[i] = (uint8_t) (i * 11 + 3);
    }
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); ++k) {
        opal_rpc_stats_t before, after;
        client_stats(&before);
        ck_assert_int_eq(call(RPC_TEST_NOTE, 1, 0, data, (uint32_t) sizes[k], &o), OPAL_SUCCESS);
        ck_assert_msg(OPAL_SUCCESS == o.status, "%zu bytes: %s", sizes[k], o.reason);
        client_stats(&after);
        ck_assert_uint_eq(after.bulk_inputs - before.bulk_inputs, sizes[k] > fits ? 1 : 0);
        ck_assert_uint_eq(after.bulk_inputs_held, 0);
        uint32_t want = 0;
        for (size_t i = 0; i < sizes[k]; ++i) {
            want += data[i];
        }
        /* The handler runs after the ack: ask until it did. */
        time_t deadline = time(NULL) + TIMEOUT;
        for (;;) {
            ck_assert_int_eq(call(RPC_TEST_NOTED, 1, 0, NULL, 0, &o), OPAL_SUCCESS);
            ck_assert_int_eq(o.status, OPAL_SUCCESS);
            if (o.value == k + 1) {
                break;
            }
            ck_assert_msg(time(NULL) < deadline, "%zu bytes: the server noted %u of %zu", sizes[k],
                          o.value, k + 1);
            (void) opal_rpc_progress(ctx, 10);
        }
        ck_assert_uint_eq(o.words[0], sizes[k]);
        ck_assert_msg(o.words[1] == want, "%zu bytes arrived damaged", sizes[k]);
    }
    opal_rpc_stats_t stats;
    client_stats(&stats);
    ck_assert_uint_eq(stats.bulk_inputs, 3);
    ck_assert_uint_eq(stats.late_replies, 0);
    /* A protocol the server does not serve: a one-way input by bulk hears
     * the error reply (no ack will come), once, and lets its input go. */
    static const opal_rpc_op_t lone_ops[1] = {
        {.handler = never_runs, .in = &rpc_test_in_codec, .flags = OPAL_RPC_OP_ONEWAY}};
    static const opal_rpc_proto_t lone = {.name = "client-only",
                                          .base = RPC_TEST_BASE + 1,
                                          .version = 1,
                                          .count = 1,
                                          .ops = lone_ops};
    ck_assert_int_eq(opal_rpc_proto_register(&lone), OPAL_SUCCESS);
    const opal_rpc_endpoint_t ep = {.addr = server, .ctx_idx = 1};
    opal_rpc_request_t *req = NULL;
    ck_assert_int_eq(opal_rpc_req_create(ctx, &ep, OPAL_RPC_OPCODE(RPC_TEST_BASE + 1, 1, 0), &req),
                     OPAL_SUCCESS);
    rpc_test_in_t *in = opal_rpc_req_input(req);
    in->text = "text";
    in->data.buf = data;
    in->data.len = (uint32_t) (fits + 1);
    memset(&o, 0, sizeof(o));
    ck_assert_int_eq(opal_rpc_req_set_timeout(req, TIMEOUT), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_req_send(req, record, &o), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, TIMEOUT * 1000, called, &o), OPAL_SUCCESS);
    for (int k = 0; k < 10; ++k) {
        (void) opal_rpc_progress(ctx, 1);
    }
    ck_assert_int_eq(o.calls, 1);
    ck_assert_msg(OPAL_ERR_NOT_FOUND == o.status || OPAL_ERR_VERSION_MISMATCH == o.status,
                  "status %d: %s", o.status, o.reason);
    ck_assert_msg(NULL != strstr(o.reason, "not registered"), "%s", o.reason);
    client_stats(&stats);
    ck_assert_uint_eq(stats.bulk_inputs, 4);
    ck_assert_uint_eq(stats.bulk_inputs_held, 0);
    free(data);
    stop_server();
    close_client();
}

#if defined(OPAL_ENABLE_FAULT_INJECTION) && OPAL_ENABLE_FAULT_INJECTION
/* Names a fault configuration with text for the processes started from
 * here on (the client's MCA base reads it at opal_init_util; the server
 * inherits it). */
static char fault_file[256];
static void faults_set(const char *text)
{
    snprintf(fault_file, sizeof(fault_file), "/tmp/rpc_procs_%d.faults", (int) getpid());
    FILE *f = fopen(fault_file, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    setenv("OPAL_MCA_opal_fault_config", fault_file, 1);
}

static void faults_clear(void)
{
    unsetenv("OPAL_MCA_opal_fault_config");
    unlink(fault_file);
    opal_fault_clear();
}

/* The request's timeout expires while its 1 MiB output is being pulled
 * (the rpc_bulk_pull_hold site keeps the finished pull from completing it,
 * as a pull slower than the timeout): the completion runs once, with
 * OPAL_ERR_TIMEOUT; the data that came is dropped and counted as late;
 * the server is told to let its output go; the next request is whole. */
static void timeout_while_output_is_pulled(const char *info)
{
    outcome_t o;
    faults_set("rpc_bulk_pull_hold max=1\n");
    open_client(info);
    const opal_rpc_endpoint_t ep = {.addr = server, .ctx_idx = 1};
    opal_rpc_request_t *req = NULL;
    memset(&o, 0, sizeof(o));
    ck_assert_int_eq(
        opal_rpc_req_create(ctx, &ep, OPAL_RPC_OPCODE(RPC_TEST_BASE, 1, RPC_TEST_FILL), &req),
        OPAL_SUCCESS);
    ((rpc_test_in_t *) opal_rpc_req_input(req))->value = 1u << 20;
    /* The hold site, not a slow pull, is what keeps the request open
     * until its timeout: the timeout leaves the handler, the reply and
     * the 1 MiB pull time to finish first even in a sanitizer build on a
     * loaded machine (0.2 s did not, once, under ASan: the pull had not
     * ended, so the site never fired). */
    ck_assert_int_eq(opal_rpc_req_set_timeout(req, 3.0), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_req_send(req, record, &o), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, TIMEOUT * 1000, called, &o), OPAL_SUCCESS);
    for (int k = 0; k < 20; ++k) {
        (void) opal_rpc_progress(ctx, 5);
    }
    ck_assert_int_eq(o.calls, 1);
    ck_assert_msg(OPAL_ERR_TIMEOUT == o.status, "status %d: %s", o.status, o.reason);
    ck_assert_uint_eq(opal_fault_fired(OPAL_FAULT_SITE_rpc_bulk_pull_hold), 1);
    opal_rpc_stats_t stats;
    client_stats(&stats);
    ck_assert_uint_eq(stats.timeouts, 1);
    ck_assert_uint_eq(stats.late_replies, 1);
    ck_assert_uint_eq(stats.bulk_outputs, 1);
    ck_assert_uint_eq(stats.completed, 1);
    assert_server_releases(1);
    /* The site fired its once: the next large output arrives whole. */
    ck_assert_int_eq(call(RPC_TEST_FILL, 1, 1u << 20, NULL, 0, &o), OPAL_SUCCESS);
    ck_assert_msg(OPAL_SUCCESS == o.status && o.fill_ok && (1u << 20) == o.data_len, "%s",
                  o.reason);
    assert_server_releases(1);
    stop_server();
    close_client();
    faults_clear();
}

/* The server lets a 64 KiB output go (its hold, 0.3 s here, runs out)
 * while the client, stalled 1.5 s before the pull (rpc_bulk_pull_delay),
 * has not read it yet. The pull reads the bytes, then the seal, which the
 * server broke before it freed them: the request completes once, with an
 * error, never with what the freed memory holds by then. Over btl/sm
 * (CMA) the freed bytes would read without complaint, so there the error
 * must be the seal's; over tcp the provider may refuse the read first.
 * The next output arrives whole. */
static void output_let_go_before_its_pull(const char *info, bool seal_says)
{
    outcome_t o;
    faults_set("rpc_bulk_pull_delay arg=1500 max=1\n");
    server_timeout = "0.3";
    open_client(info);
    server_timeout = NULL;
    const opal_rpc_endpoint_t ep = {.addr = server, .ctx_idx = 0};
    for (int round = 0; round < 2; ++round) {
        opal_rpc_request_t *req = NULL;
        memset(&o, 0, sizeof(o));
        ck_assert_int_eq(
            opal_rpc_req_create(ctx, &ep, OPAL_RPC_OPCODE(RPC_TEST_BASE, 1, RPC_TEST_FILL), &req),
            OPAL_SUCCESS);
        ((rpc_test_in_t *) opal_rpc_req_input(req))->value = 64u << 10;
        ck_assert_int_eq(opal_rpc_req_set_timeout(req, TIMEOUT), OPAL_SUCCESS);
        ck_assert_int_eq(opal_rpc_req_send(req, record, &o), OPAL_SUCCESS);
        ck_assert_int_eq(opal_rpc_progress_cond(ctx, TIMEOUT * 1000, called, &o), OPAL_SUCCESS);
        for (int k = 0; k < 20; ++k) {
            (void) opal_rpc_progress(ctx, 5);
        }
        ck_assert_int_eq(o.calls, 1);
        if (0 == round) {
            ck_assert_msg(OPAL_SUCCESS != o.status,
                          "an output let go before its pull completed its request (%s)",
                          o.fill_ok ? "its bytes happened to be intact" : "with wrong bytes");
            if (seal_says) {
                ck_assert_msg(OPAL_ERR_COMM_FAILURE == o.status &&
                                  NULL != strstr(o.reason, "seal is broken"),
                              "status %d: %s", o.status, o.reason);
            }
            ck_assert_uint_eq(opal_fault_fired(OPAL_FAULT_SITE_rpc_bulk_pull_delay), 1);
            if (seal_says) {
                opal_rpc_stats_t stats;
                client_stats(&stats);
                ck_assert_uint_eq(stats.bulk_seals_broken, 1);
            }
        } else {
            /* The site fired its once: this one is pulled at once. */
            ck_assert_msg(OPAL_SUCCESS == o.status && o.fill_ok && (64u << 10) == o.data_len,
                          "status %d: %s", o.status, o.reason);
        }
    }
    stop_server();
    close_client();
    faults_clear();
}

/* The other way: the client gives a one-way 64 KiB input up (its timeout,
 * 0.3 s) while the server, stalled 1.5 s before its pull, has not read it
 * yet. The client let the bytes go and broke their seal: the server's pull
 * fails and the handler never runs on what the freed memory holds. */
static void input_let_go_before_its_pull(const char *info)
{
    outcome_t o;
    faults_set("rpc_bulk_pull_delay arg=1500 max=1\n");
    open_client(info);
    const opal_rpc_endpoint_t ep = {.addr = server, .ctx_idx = 0};
    uint8_t *data = malloc(64u << 10);
    ck_assert_ptr_nonnull(data);
    for (uint32_t i = 0; i < (64u << 10); ++i) {
        data[i] = rpc_test_byte(i);
    }
    opal_rpc_request_t *req = NULL;
    memset(&o, 0, sizeof(o));
    ck_assert_int_eq(
        opal_rpc_req_create(ctx, &ep, OPAL_RPC_OPCODE(RPC_TEST_BASE, 1, RPC_TEST_NOTE), &req),
        OPAL_SUCCESS);
    rpc_test_in_t *in = opal_rpc_req_input(req);
    in->text = "text";
    in->data.buf = data;
    in->data.len = 64u << 10;
    ck_assert_int_eq(opal_rpc_req_set_timeout(req, 0.3), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_req_send(req, record, &o), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, TIMEOUT * 1000, called, &o), OPAL_SUCCESS);
    ck_assert_msg(OPAL_ERR_TIMEOUT == o.status, "status %d: %s", o.status, o.reason);
    opal_rpc_stats_t stats;
    client_stats(&stats);
    ck_assert_uint_eq(stats.bulk_inputs_held, 0);
    /* The server wakes, pulls, finds the seal broken and answers with an
     * error nobody waits for. Its note count says the handler never ran. */
    for (int k = 0; k < 300; ++k) {
        (void) opal_rpc_progress(ctx, 10);
    }
    ck_assert_int_eq(call(RPC_TEST_NOTED, 0, 0, NULL, 0, &o), OPAL_SUCCESS);
    ck_assert_msg(OPAL_SUCCESS == o.status, "status %d: %s", o.status, o.reason);
    ck_assert_uint_eq(o.value, 0);
    /* And it was the seal that stopped it: the bytes came, the seal did
     * not match (without the check they fail to decode instead). */
    ck_assert_int_eq(call(RPC_TEST_SEALS, 0, 0, NULL, 0, &o), OPAL_SUCCESS);
    ck_assert_msg(OPAL_SUCCESS == o.status, "status %d: %s", o.status, o.reason);
    ck_assert_uint_eq(o.value, 1);
    free(data);
    stop_server();
    close_client();
    faults_clear();
}

START_TEST(btl_input_let_go_before_its_pull)
{
    input_let_go_before_its_pull("btl");
}
END_TEST

START_TEST(btl_output_let_go_before_its_pull)
{
    output_let_go_before_its_pull("btl", true);
}
END_TEST

START_TEST(tcp_output_let_go_before_its_pull)
{
    output_let_go_before_its_pull("ofi+tcp", false);
}
END_TEST

START_TEST(tcp_timeout_while_output_is_pulled)
{
    timeout_while_output_is_pulled("ofi+tcp");
}
END_TEST

START_TEST(shm_timeout_while_output_is_pulled)
{
    timeout_while_output_is_pulled("ofi+shm");
}
END_TEST
#endif

static void killed_server_completes_requests_in_flight(const char *info)
{
    enum { N = 16 };
    outcome_t o[N];
    open_client(info);
    memset(o, 0, sizeof(o));
    for (int i = 0; i < N; ++i) {
        const opal_rpc_endpoint_t ep = {.addr = server, .ctx_idx = 0};
        opal_rpc_request_t *req = NULL;
        ck_assert_int_eq(
            opal_rpc_req_create(ctx, &ep, OPAL_RPC_OPCODE(RPC_TEST_BASE, 1, RPC_TEST_SLEEP), &req),
            OPAL_SUCCESS);
        ((rpc_test_in_t *) opal_rpc_req_input(req))->value = 2000000; /* 2 s each */
        ck_assert_int_eq(opal_rpc_req_set_timeout(req, 3.0), OPAL_SUCCESS);
        ck_assert_int_eq(opal_rpc_req_send(req, record, &o[i]), OPAL_SUCCESS);
    }
    (void) opal_rpc_progress(ctx, 200);
    kill(server_pid, SIGKILL);
    int status;
    ck_assert_int_eq(waitpid(server_pid, &status, 0), server_pid);
    /* The failure detector's word (SWIM later), for half of them. */
    ck_assert_int_eq(opal_rpc_peer_failed(ctx, server), OPAL_SUCCESS);
    time_t deadline = time(NULL) + TIMEOUT;
    for (int i = 0; i < N; ++i) {
        while (0 == o[i].calls) {
            ck_assert(time(NULL) < deadline);
            (void) opal_rpc_progress(ctx, 10);
        }
    }
    for (int k = 0; k < 20; ++k) {
        (void) opal_rpc_progress(ctx, 5);
    }
    for (int i = 0; i < N; ++i) {
        ck_assert_int_eq(o[i].calls, 1);
        ck_assert_int_ne(o[i].status, OPAL_SUCCESS);
    }
    close_client();
}

/* Requests the server never answers (to a context it does not have),
 * then the server finalizes (stop) or is killed: with no failure
 * detector and a timeout of 50 s, each completes once, soon, with
 * OPAL_ERR_PEER_FAILED and a reason that says which (na/btl hears it from
 * btl/sm and btl/tcp). */
static void requests_fail_when_the_server_is_gone(const char *info, bool killed)
{
    enum { N = 8 };
    outcome_t o[N];
    open_client(info);
    memset(o, 0, sizeof(o));
    for (int i = 0; i < N; ++i) {
        const opal_rpc_endpoint_t ep = {.addr = server, .ctx_idx = 7};
        opal_rpc_request_t *req = NULL;
        ck_assert_int_eq(
            opal_rpc_req_create(ctx, &ep, OPAL_RPC_OPCODE(RPC_TEST_BASE, 1, RPC_TEST_ECHO), &req),
            OPAL_SUCCESS);
        ck_assert_int_eq(opal_rpc_req_set_timeout(req, 50.0), OPAL_SUCCESS);
        ck_assert_int_eq(opal_rpc_req_send(req, record, &o[i]), OPAL_SUCCESS);
    }
    (void) opal_rpc_progress(ctx, 100);
    if (killed) {
        kill(server_pid, SIGKILL);
        int status;
        ck_assert_int_eq(waitpid(server_pid, &status, 0), server_pid);
    } else {
        stop_server();
    }
    time_t deadline = time(NULL) + 20;
    for (int i = 0; i < N; ++i) {
        while (0 == o[i].calls) {
            ck_assert_msg(time(NULL) < deadline, "request %d still waits 20 s after the server %s",
                          i, killed ? "was killed" : "finalized");
            (void) opal_rpc_progress(ctx, 10);
        }
    }
    for (int k = 0; k < 20; ++k) {
        (void) opal_rpc_progress(ctx, 5);
    }
    const char *want = killed ? "the peer failed (" : "the peer finalized (";
    for (int i = 0; i < N; ++i) {
        ck_assert_int_eq(o[i].calls, 1);
        ck_assert_int_eq(o[i].status, OPAL_ERR_PEER_FAILED);
        ck_assert_msg(NULL != strstr(o[i].reason, want), "request %d: \"%s\", not \"%s...\"", i,
                      o[i].reason, want);
    }
    close_client();
}

START_TEST(tcp_requests_to_a_server_started_alone)
{
    requests_to_a_server_started_alone("ofi+tcp");
}
END_TEST

START_TEST(shm_requests_to_a_server_started_alone)
{
    requests_to_a_server_started_alone("ofi+shm");
}
END_TEST

START_TEST(tcp_outputs_of_every_size)
{
    outputs_of_every_size("ofi+tcp");
}
END_TEST

START_TEST(shm_outputs_of_every_size)
{
    outputs_of_every_size("ofi+shm");
}
END_TEST

START_TEST(tcp_abort_while_output_is_pulled)
{
    output_pull_interrupted("ofi+tcp", true);
}
END_TEST

START_TEST(shm_abort_while_output_is_pulled)
{
    output_pull_interrupted("ofi+shm", true);
}
END_TEST

START_TEST(tcp_peer_failure_while_output_is_pulled)
{
    output_pull_interrupted("ofi+tcp", false);
}
END_TEST

START_TEST(tcp_one_way_inputs_by_bulk)
{
    one_way_inputs_by_bulk("ofi+tcp");
}
END_TEST

START_TEST(shm_one_way_inputs_by_bulk)
{
    one_way_inputs_by_bulk("ofi+shm");
}
END_TEST

START_TEST(tcp_killed_server_completes_requests_in_flight)
{
    killed_server_completes_requests_in_flight("ofi+tcp");
}
END_TEST

/* na/btl over btl/tcp (the project's own sockets): the server inherits
 * the selection. Check runs each case in its own process. */
/* ------------------------------------------------ hybrid logical clock */

#define MS UINT64_C(1000000)

/* This process's wall clock as a timestamp, read finely. */
static uint64_t wall_hlc(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return opal_rpc_unixnsec2hlc((uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec);
}

/* The clock operation: the server's epsilon becomes epsilon_ms (0: kept),
 * its clock moves past to (0: not moved); *at is its clock as it answered,
 * *refused its clock_refused count. */
static void clock_call(uint32_t epsilon_ms, uint64_t to, outcome_t *o, uint64_t *at,
                       uint32_t *refused)
{
    ck_assert_int_eq(
        call(RPC_TEST_CLOCK, 0, epsilon_ms, 0 != to ? &to : NULL, 0 != to ? sizeof(to) : 0, o),
        OPAL_SUCCESS);
    if (OPAL_SUCCESS == o->status) {
        memcpy(at, o->clock, sizeof(*at));
        *refused = o->clock[2];
    }
}

/* Each message carries its sender's clock: a server's clock moves past a
 * client's that is ahead, and a client's past its server's reply; a
 * message from further ahead than the receiver's epsilon is refused, both
 * ways, with OPAL_ERR_HLC_SYNC and a reason, and leaves the clock where it
 * was. (Offsets stay below the default epsilon of 1 s: this process's
 * clock outlives the test.) */
static void clocks_travel_with_messages(const char *info)
{
    outcome_t o;
    uint64_t at = 0;
    uint32_t refused = 0;
    open_client(info);
    /* The client 200 ms ahead: the server's clock, as it answers, is past
     * the request's stamp (its wall clock alone would be 200 ms behind). */
    ck_assert_int_eq(opal_rpc_hlc_get_msg(wall_hlc() + 200 * MS, NULL, NULL), OPAL_SUCCESS);
    uint64_t sent = opal_rpc_hlc_get();
    clock_call(0, 0, &o, &at, &refused);
    ck_assert_int_eq(o.status, OPAL_SUCCESS);
    ck_assert_uint_gt(at, sent);
    ck_assert_uint_eq(refused, 0);
    /* The server 400 ms ahead: the client's clock moves past the reply's. */
    clock_call(0, wall_hlc() + 400 * MS, &o, &at, &refused);
    ck_assert_int_eq(o.status, OPAL_SUCCESS);
    ck_assert_uint_eq(o.value, 0);
    ck_assert_uint_gt(opal_rpc_hlc_get(), at);
    /* The server 700 ms ahead, the client's epsilon 100 ms: the reply is
     * refused and the client's clock stays behind it. */
    opal_rpc_hlc_epsilon_set(100 * MS);
    uint64_t far = wall_hlc() + 700 * MS;
    clock_call(0, far, &o, &at, &refused);
    ck_assert_int_eq(o.status, OPAL_ERR_HLC_SYNC);
    ck_assert_msg(NULL != strstr(o.reason, "past the HLC epsilon of 0.100 s"), "reason: %s",
                  o.reason);
    ck_assert_uint_lt(opal_rpc_hlc_get(), far);
    opal_rpc_stats_t st;
    opal_rpc_context_stats(ctx, &st);
    ck_assert_uint_eq(st.clock_refused, 1);
    /* Back to 1 s: the client takes the server's clock (700 ms ahead), then
     * sets the server's epsilon to 50 ms; its next request is refused
     * there. */
    opal_rpc_hlc_epsilon_set(1000 * MS);
    clock_call(50, 0, &o, &at, &refused);
    ck_assert_int_eq(o.status, OPAL_SUCCESS);
    ck_assert_uint_gt(opal_rpc_hlc_get(), far);
    ck_assert_int_eq(call(RPC_TEST_ECHO, 0, 1, NULL, 0, &o), OPAL_SUCCESS);
    ck_assert_int_eq(o.status, OPAL_ERR_HLC_SYNC);
    ck_assert_msg(NULL != strstr(o.reason, "past the HLC epsilon of 0.050 s"), "reason: %s",
                  o.reason);
    /* Once the wall clock has caught up with the client's, the server
     * takes its requests again (and counted the ones it refused). */
    time_t deadline = time(NULL) + TIMEOUT;
    do {
        ck_assert_msg(time(NULL) < deadline, "the server still refuses: %s", o.reason);
        usleep(100000);
        clock_call(1000, 0, &o, &at, &refused);
    } while (OPAL_ERR_HLC_SYNC == o.status);
    ck_assert_int_eq(o.status, OPAL_SUCCESS);
    ck_assert_uint_ge(refused, 2);
    stop_server();
    close_client();
}

START_TEST(btl_sm_clocks_travel_with_messages)
{
    setenv("OPAL_MCA_btl", "self,sm", 1);
    clocks_travel_with_messages("btl");
}
END_TEST

START_TEST(tcp_clocks_travel_with_messages)
{
    clocks_travel_with_messages("ofi+tcp");
}
END_TEST

static const char *over_btl_tcp(void)
{
    setenv("OPAL_MCA_btl", "self,tcp", 1);
    return "btl";
}

START_TEST(btl_tcp_requests_to_a_server_started_alone)
{
    requests_to_a_server_started_alone(over_btl_tcp());
}
END_TEST

START_TEST(btl_tcp_outputs_of_every_size)
{
    outputs_of_every_size(over_btl_tcp());
}
END_TEST

START_TEST(btl_tcp_killed_server_completes_requests_in_flight)
{
    killed_server_completes_requests_in_flight(over_btl_tcp());
}
END_TEST

/* na/btl over btl/sm. */
static const char *over_btl_sm(void)
{
    setenv("OPAL_MCA_btl", "self,sm", 1);
    return "btl";
}

START_TEST(btl_sm_requests_fail_when_the_server_finalizes)
{
    requests_fail_when_the_server_is_gone(over_btl_sm(), false);
}
END_TEST

START_TEST(btl_sm_requests_fail_when_the_server_is_killed)
{
    requests_fail_when_the_server_is_gone(over_btl_sm(), true);
}
END_TEST

START_TEST(btl_tcp_requests_fail_when_the_server_finalizes)
{
    requests_fail_when_the_server_is_gone(over_btl_tcp(), false);
}
END_TEST

START_TEST(btl_tcp_requests_fail_when_the_server_is_killed)
{
    requests_fail_when_the_server_is_gone(over_btl_tcp(), true);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rpc_procs");
    OPAL_TEST_ADD(s, btl_tcp_requests_to_a_server_started_alone);
    OPAL_TEST_ADD(s, btl_tcp_outputs_of_every_size);
    OPAL_TEST_ADD(s, btl_tcp_killed_server_completes_requests_in_flight);
    OPAL_TEST_ADD(s, btl_sm_requests_fail_when_the_server_finalizes);
    OPAL_TEST_ADD(s, btl_sm_requests_fail_when_the_server_is_killed);
    OPAL_TEST_ADD(s, btl_tcp_requests_fail_when_the_server_finalizes);
    OPAL_TEST_ADD(s, btl_tcp_requests_fail_when_the_server_is_killed);
    OPAL_TEST_ADD(s, tcp_requests_to_a_server_started_alone);
    OPAL_TEST_ADD(s, shm_requests_to_a_server_started_alone);
    OPAL_TEST_ADD(s, tcp_outputs_of_every_size);
    OPAL_TEST_ADD(s, shm_outputs_of_every_size);
    OPAL_TEST_ADD(s, tcp_abort_while_output_is_pulled);
    OPAL_TEST_ADD(s, shm_abort_while_output_is_pulled);
    OPAL_TEST_ADD(s, tcp_peer_failure_while_output_is_pulled);
#if defined(OPAL_ENABLE_FAULT_INJECTION) && OPAL_ENABLE_FAULT_INJECTION
    OPAL_TEST_ADD(s, tcp_timeout_while_output_is_pulled);
    OPAL_TEST_ADD(s, shm_timeout_while_output_is_pulled);
    OPAL_TEST_ADD(s, btl_output_let_go_before_its_pull);
    OPAL_TEST_ADD(s, tcp_output_let_go_before_its_pull);
    OPAL_TEST_ADD(s, btl_input_let_go_before_its_pull);
#endif
    OPAL_TEST_ADD(s, tcp_one_way_inputs_by_bulk);
    OPAL_TEST_ADD(s, shm_one_way_inputs_by_bulk);
    OPAL_TEST_ADD(s, tcp_killed_server_completes_requests_in_flight);
    OPAL_TEST_ADD(s, btl_sm_clocks_travel_with_messages);
    OPAL_TEST_ADD(s, tcp_clocks_travel_with_messages);
    return opal_test_run(s);
}
