/*
 * The multi-process tests' protocol (rpc_test_proto.h).
 */
#include "opal/opal_config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test/rpc/rpc_test_proto.h"

static volatile bool *stop_flag;
static int notes;
/* The last note's IOV: its length and byte sum. */
static uint32_t note_last[2];

static void echo(opal_rpc_request_t *req)
{
    const rpc_test_in_t *in = opal_rpc_req_input(req);
    rpc_test_out_t *out = opal_rpc_req_output(req);
    out->value = in->value + 1;
    out->data = in->data;
    out->ctx_idx = opal_rpc_context_idx(opal_rpc_req_context(req));
    (void) opal_rpc_reply_send(req);
}

static void sleeper(opal_rpc_request_t *req)
{
    const rpc_test_in_t *in = opal_rpc_req_input(req);
    usleep(in->value);
    echo(req);
}

static void sum(opal_rpc_request_t *req)
{
    const rpc_test_in_t *in = opal_rpc_req_input(req);
    rpc_test_out_t *out = opal_rpc_req_output(req);
    const uint8_t *bytes = in->data.buf;
    out->value = 0;
    for (uint32_t i = 0; i < in->data.len; ++i) {
        out->value += bytes[i];
    }
    out->ctx_idx = opal_rpc_context_idx(opal_rpc_req_context(req));
    (void) opal_rpc_reply_send(req);
}

static void fill(opal_rpc_request_t *req)
{
    const rpc_test_in_t *in = opal_rpc_req_input(req);
    rpc_test_out_t *out = opal_rpc_req_output(req);
    uint8_t *bytes = malloc(in->value + 1);
    if (NULL == bytes) {
        (void) opal_rpc_reply_error(req, OPAL_ERR_OUT_OF_RESOURCE, "fill: no memory");
        return;
    }
    for (uint32_t i = 0; i < in->value; ++i) {
        bytes[i] = rpc_test_byte(i);
    }
    out->value = in->value;
    out->ctx_idx = opal_rpc_context_idx(opal_rpc_req_context(req));
    out->data.buf = bytes;
    out->data.len = in->value;
    /* The reply is encoded (or exposed by bulk, a copy) before this returns. */
    (void) opal_rpc_reply_send(req);
    out->data.buf = NULL;
    out->data.len = 0;
    free(bytes);
}

/* Answers with the counter at offset of the request's context stats. */
static void answer_stat(opal_rpc_request_t *req, size_t offset)
{
    rpc_test_out_t *out = opal_rpc_req_output(req);
    opal_rpc_stats_t stats;
    opal_rpc_context_stats(opal_rpc_req_context(req), &stats);
    uint64_t value;
    memcpy(&value, (const char *) &stats + offset, sizeof(value));
    out->value = (uint32_t) value;
    out->ctx_idx = opal_rpc_context_idx(opal_rpc_req_context(req));
    (void) opal_rpc_reply_send(req);
}

static void held(opal_rpc_request_t *req)
{
    answer_stat(req, offsetof(opal_rpc_stats_t, bulk_outputs_held));
}

/* The context's count of pulls refused for a broken seal. */
static void seals(opal_rpc_request_t *req)
{
    answer_stat(req, offsetof(opal_rpc_stats_t, bulk_seals_broken));
}

static void note(opal_rpc_request_t *req)
{
    const rpc_test_in_t *in = opal_rpc_req_input(req);
    const uint8_t *bytes = in->data.buf;
    uint32_t sum = 0;
    for (uint32_t i = 0; i < in->data.len; ++i) {
        sum += bytes[i];
    }
    note_last[0] = in->data.len;
    note_last[1] = sum;
    ++notes;
}

/* Replies with value and len bytes at buf as the data (encoded before
 * this returns, so buf may be the caller's local). */
static void reply_data(opal_rpc_request_t *req, uint32_t value, void *buf, uint32_t len)
{
    rpc_test_out_t *out = opal_rpc_req_output(req);
    out->value = value;
    out->ctx_idx = opal_rpc_context_idx(opal_rpc_req_context(req));
    out->data.buf = buf;
    out->data.len = len;
    (void) opal_rpc_reply_send(req);
    out->data.buf = NULL;
    out->data.len = 0;
}

static void noted(opal_rpc_request_t *req)
{
    reply_data(req, (uint32_t) notes, note_last, sizeof(note_last));
}

/* value > 0: the server's HLC epsilon becomes value ms; an 8-byte IOV: a
 * timestamp the server's clock moves past (out value 0) or refuses (1).
 * Answers with the server's clock (8 bytes) and its clock_refused count. */
static void clock_op(opal_rpc_request_t *req)
{
    const rpc_test_in_t *in = opal_rpc_req_input(req);
    if (in->value > 0) {
        opal_rpc_hlc_epsilon_set((uint64_t) in->value * 1000000u);
    }
    uint32_t refused = 0;
    if (sizeof(uint64_t) == in->data.len) {
        uint64_t to;
        memcpy(&to, in->data.buf, sizeof(to));
        refused = OPAL_SUCCESS == opal_rpc_hlc_get_msg(to, NULL, NULL) ? 0 : 1;
    }
    opal_rpc_stats_t stats;
    opal_rpc_context_stats(opal_rpc_req_context(req), &stats);
    uint32_t words[3];
    uint64_t now = opal_rpc_hlc_get();
    memcpy(words, &now, sizeof(now));
    words[2] = (uint32_t) stats.clock_refused;
    reply_data(req, refused, words, sizeof(words));
}

static void stop(opal_rpc_request_t *req)
{
    *stop_flag = true;
    echo(req);
}

static const opal_rpc_op_t ops[RPC_TEST_COUNT] = {
    [RPC_TEST_ECHO] = {.handler = echo, .in = &rpc_test_in_codec, .out = &rpc_test_out_codec},
    [RPC_TEST_SLEEP] = {.handler = sleeper, .in = &rpc_test_in_codec, .out = &rpc_test_out_codec},
    [RPC_TEST_NOTE] = {.handler = note, .in = &rpc_test_in_codec, .flags = OPAL_RPC_OP_ONEWAY},
    [RPC_TEST_STOP] = {.handler = stop, .in = &rpc_test_in_codec, .out = &rpc_test_out_codec},
    [RPC_TEST_SUM] = {.handler = sum, .in = &rpc_test_in_codec, .out = &rpc_test_out_codec},
    [RPC_TEST_FILL] = {.handler = fill, .in = &rpc_test_in_codec, .out = &rpc_test_out_codec},
    [RPC_TEST_HELD] = {.handler = held, .in = &rpc_test_in_codec, .out = &rpc_test_out_codec},
    [RPC_TEST_NOTED] = {.handler = noted, .in = &rpc_test_in_codec, .out = &rpc_test_out_codec},
    [RPC_TEST_SEALS] = {.handler = seals, .in = &rpc_test_in_codec, .out = &rpc_test_out_codec},
    [RPC_TEST_CLOCK] = {.handler = clock_op, .in = &rpc_test_in_codec, .out = &rpc_test_out_codec},
};

int rpc_test_proto_register(volatile bool *stop)
{
    static const opal_rpc_proto_t proto = {.name = "rpc-test",
                                           .base = RPC_TEST_BASE,
                                           .version = 1,
                                           .count = RPC_TEST_COUNT,
                                           .ops = ops};
    stop_flag = stop;
    return opal_rpc_proto_register(&proto);
}

int rpc_test_proto_notes(void)
{
    return notes;
}
