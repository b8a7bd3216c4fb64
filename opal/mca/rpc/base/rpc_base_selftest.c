/*
 * The server side of the self-test protocol (rpc_selftest.h), registered
 * by every engine at opal_rpc_init, as every CaRT server answers
 * self_test. A request is served in steps, each started from the last
 * one's completion: pull the input by bulk (when it comes so), check it,
 * push the output by bulk (when it goes so), reply. The handler keeps the
 * request (addref) until the reply is sent; nothing it allocates outlives
 * the request.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/na/base/base.h"
#include "opal/mca/rpc/base/rpc_base_group.h"
#include "opal/mca/rpc/base/rpc_base_internal.h"
#include "opal/mca/rpc/rpc_selftest.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

static size_t selftest_max_size = OPAL_RPC_SELFTEST_DEFAULT_MAX;

size_t opal_rpc_selftest_max_size(void)
{
    return selftest_max_size;
}

int opal_rpc_base_selftest_register(void)
{
    selftest_max_size = OPAL_RPC_SELFTEST_DEFAULT_MAX;
    int index = mca_base_var_register(
        "opal", "rpc", "base", "selftest_max_size",
        "Largest input or output, in bytes, a self-test request may ask this process to "
        "move (tools/opal_self_test); larger ones get an error reply",
        MCA_BASE_VAR_TYPE_SIZE_T, NULL, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_5,
        MCA_BASE_VAR_SCOPE_ALL, &selftest_max_size);
    return index < 0 ? index : OPAL_SUCCESS;
}

/* One request being served. */
typedef struct {
    opal_rpc_request_t *req;
    uint8_t *buf;       /* max(pulled input, output) bytes */
    opal_bulk_t *local; /* over buf, when a transfer needs it */
    size_t in_size;     /* bytes pulled (0 when the input came inline) */
    size_t out_size;
    bool verify;
    char sender[160];
} selftest_call_t;

static void sender_name(opal_rpc_request_t *req, char *buf, size_t len)
{
    opal_na_addr_t *addr = opal_rpc_req_source(req);
    opal_na_addr_name(opal_rpc_na_class(), addr, buf, len,
                      NULL == addr ? "this process" : "(an address with no URI)");
}

static bool holds_pattern(const uint8_t *buf, size_t size)
{
    for (size_t i = 0; i < size; ++i) {
        if (buf[i] != opal_rpc_selftest_byte(size, i)) {
            return false;
        }
    }
    return true;
}

static void fill_pattern(uint8_t *buf, size_t size)
{
    for (size_t i = 0; i < size; ++i) {
        buf[i] = opal_rpc_selftest_byte(size, i);
    }
}

/* The last step: the reply (or the error), then everything let go. */
static void finish(selftest_call_t *call, int status, const char *why)
{
    if (OPAL_SUCCESS != status) {
        char reason[320];
        snprintf(reason, sizeof(reason), "self-test request from %s: %s", call->sender, why);
        opal_output_verbose(5, opal_rpc_base_output, "rpc: %s", reason);
        (void) opal_rpc_reply_error(call->req, status, reason);
    } else {
        opal_rpc_selftest_in_t *in = opal_rpc_req_input(call->req);
        opal_rpc_selftest_out_t *out = opal_rpc_req_output(call->req);
        if (NULL == in->out_bulk && call->out_size > 0) {
            /* Encoded (or copied for the bulk path) inside reply_send. */
            out->payload.buf = call->buf;
            out->payload.len = (uint32_t) call->out_size;
        }
        (void) opal_rpc_reply_send(call->req);
        out->payload.buf = NULL;
        out->payload.len = 0;
    }
    (void) opal_bulk_free(call->local);
    opal_rpc_req_decref(call->req);
    free(call->buf);
    free(call);
}

static void pushed(const opal_bulk_cb_info_t *info)
{
    selftest_call_t *call = info->arg;
    finish(call, info->ret, OPAL_SUCCESS == info->ret ? NULL : "pushing the output failed");
}

/* The input is in: checks it and sends the output on its way. */
static void input_done(selftest_call_t *call)
{
    opal_rpc_selftest_in_t *in = opal_rpc_req_input(call->req);
    const uint8_t *bytes = 0 == call->in_size ? in->payload.buf : call->buf;
    size_t size = 0 == call->in_size ? in->payload.len : call->in_size;
    if (call->verify && !holds_pattern(bytes, size)) {
        finish(call, OPAL_ERR_BAD_VALUE, "the input does not hold the self-test pattern");
        return;
    }
    /* Always filled: a pushed buffer is never uninitialised memory. */
    fill_pattern(call->buf, call->out_size);
    if (NULL == in->out_bulk || 0 == call->out_size) {
        finish(call, OPAL_SUCCESS, NULL);
        return;
    }
    int rc = opal_rpc_bulk_transfer(call->req, OPAL_BULK_PUSH, in->out_bulk, 0, call->local, 0,
                                    call->out_size, pushed, call, NULL);
    if (OPAL_SUCCESS != rc) {
        finish(call, rc, "cannot start pushing the output");
    }
}

static void pulled(const opal_bulk_cb_info_t *info)
{
    selftest_call_t *call = info->arg;
    if (OPAL_SUCCESS != info->ret) {
        finish(call, info->ret, "pulling the input failed");
        return;
    }
    input_done(call);
}

/* Refuses what the request asks for when it is out of bounds: the reason
 * goes into why. */
static bool sizes_ok(const opal_rpc_selftest_in_t *in, char *why, size_t len)
{
    size_t max = selftest_max_size;
    uint64_t in_size = NULL == in->in_bulk ? in->payload.len : in->in_size;
    if (in_size > max || in->out_size > max) {
        snprintf(why, len,
                 "input of %llu bytes, output of %llu bytes: above rpc_base_selftest_max_size "
                 "(%zu)",
                 (unsigned long long) in_size, (unsigned long long) in->out_size, max);
        return false;
    }
    if (NULL == in->in_bulk && in->in_size != in->payload.len) {
        snprintf(why, len, "input size %llu but %u inline bytes", (unsigned long long) in->in_size,
                 in->payload.len);
        return false;
    }
    if (NULL != in->in_bulk && opal_bulk_get_size(in->in_bulk) < in->in_size) {
        snprintf(why, len, "input of %llu bytes from a handle of %zu",
                 (unsigned long long) in->in_size, opal_bulk_get_size(in->in_bulk));
        return false;
    }
    if (NULL != in->out_bulk && opal_bulk_get_size(in->out_bulk) < in->out_size) {
        snprintf(why, len, "output of %llu bytes into a handle of %zu",
                 (unsigned long long) in->out_size, opal_bulk_get_size(in->out_bulk));
        return false;
    }
    return true;
}

static void selftest_handler(opal_rpc_request_t *req)
{
    const opal_rpc_selftest_in_t *in = opal_rpc_req_input(req);
    selftest_call_t *call = calloc(1, sizeof(*call));
    if (NULL == call) {
        (void) opal_rpc_reply_error(req, OPAL_ERR_OUT_OF_RESOURCE, "self-test: no memory");
        return;
    }
    opal_rpc_req_addref(req);
    call->req = req;
    call->verify = in->verify;
    sender_name(req, call->sender, sizeof(call->sender));
    char why[200];
    if (!sizes_ok(in, why, sizeof(why))) {
        finish(call, OPAL_ERR_BAD_PARAM, why);
        return;
    }
    call->in_size = NULL == in->in_bulk ? 0 : (size_t) in->in_size;
    call->out_size = (size_t) in->out_size;
    size_t len = call->in_size > call->out_size ? call->in_size : call->out_size;
    call->buf = malloc(len > 0 ? len : 1);
    if (NULL == call->buf) {
        finish(call, OPAL_ERR_OUT_OF_RESOURCE, "no buffer for the payload");
        return;
    }
    bool transfers = call->in_size > 0 || (NULL != in->out_bulk && call->out_size > 0);
    if (transfers) {
        void *bufs[1] = {call->buf};
        int rc = opal_rpc_bulk_class() == NULL
                     ? OPAL_ERR_NOT_AVAILABLE
                     : opal_bulk_create(opal_rpc_bulk_class(), 1, bufs, &len, OPAL_BULK_READ_WRITE,
                                        &call->local);
        if (OPAL_SUCCESS != rc) {
            finish(call, rc, "cannot expose a buffer for the bulk transfer");
            return;
        }
    }
    if (0 == call->in_size) {
        input_done(call);
        return;
    }
    /* From here the transfer's completion owns call (it may run on the
     * progress thread before this handler returns). */
    int rc = opal_rpc_bulk_transfer(req, OPAL_BULK_PULL, in->in_bulk, 0, call->local, 0,
                                    call->in_size, pulled, call, NULL);
    if (OPAL_SUCCESS != rc) {
        finish(call, rc, "cannot start pulling the input");
    }
}

static const opal_rpc_op_t selftest_ops[] = {
    {.handler = selftest_handler,
     .in = &opal_rpc_selftest_in_codec,
     .out = &opal_rpc_selftest_out_codec},
};

int opal_rpc_base_selftest_init(void)
{
    static const opal_rpc_proto_t proto = {.name = "self-test",
                                           .base = OPAL_RPC_SELFTEST_BASE,
                                           .version = OPAL_RPC_SELFTEST_VERSION,
                                           .count = 1,
                                           .ops = selftest_ops};
    return opal_rpc_base_proto_add_reserved(&proto);
}
