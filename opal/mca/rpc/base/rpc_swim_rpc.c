/*
 * SWIM over the rpc engine (opal/mca/rpc/rpc_swim.h, "over rpc"): the
 * state machine's ops as one-way requests of one context, its clock the
 * monotonic clock, its events fanned out to the registered callbacks.
 */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opal/mca/rpc/base/rpc_base_internal.h"
#include "opal/mca/rpc/rpc_codec.h"
#include "opal/mca/rpc/rpc_swim.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

#define SWIM_MSG_FIELDS(X) X(opal_rpc_iov_t, bytes, IOV)
OPAL_RPC_STRUCT(rpc_swim_msg, SWIM_MSG_FIELDS);

#define MAX_CALLBACKS 8

struct opal_rpc_swim_t {
    opal_rpc_context_t *ctx;
    opal_swim_t *sm;
    opal_swim_ops_t ops;
    opal_rpc_swim_endpoint_fn_t endpoint;
    void *endpoint_arg;
    struct {
        opal_rpc_swim_event_cb_t cb;
        void *arg;
    } cbs[MAX_CALLBACKS];
    int ncbs;
    uint64_t refused;
    uint64_t send_errors;
};

/* The SWIM of each context, for the handler (set and cleared by the
 * thread that creates and destroys it, read by the context's progress:
 * create before progressing, destroy after). */
static opal_rpc_swim_t *swim_of_ctx[256];

static uint64_t mono_ms(void *arg)
{
    struct timespec ts;
    (void) arg;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static int swim_send(void *arg, uint32_t to, const opal_swim_msg_t *msg)
{
    opal_rpc_swim_t *sw = arg;
    opal_rpc_endpoint_t ep;
    opal_rpc_request_t *req = NULL;
    uint8_t buf[24 + 13 * OPAL_SWIM_MAX_UPDATES];
    size_t len = 0;
    int rc = sw->endpoint(sw->endpoint_arg, to, &ep);
    if (OPAL_SUCCESS == rc) {
        rc = opal_swim_msg_encode(msg, buf, sizeof(buf), &len);
    }
    if (OPAL_SUCCESS == rc) {
        rc = opal_rpc_req_create(sw->ctx, &ep, OPAL_RPC_OPCODE(OPAL_RPC_SWIM_BASE, 1, 0), &req);
    }
    if (OPAL_SUCCESS == rc) {
        rpc_swim_msg_t *in = opal_rpc_req_input(req);
        in->bytes.buf = buf;
        in->bytes.len = (uint32_t) len;
        /* The request is encoded at once (buf may go); a message that is
         * not delivered is SWIM's business, not the completion's. */
        rc = opal_rpc_req_send(req, NULL, NULL);
    }
    if (OPAL_SUCCESS != rc) {
        sw->send_errors++;
        opal_output_verbose(10, opal_rpc_base_output, "rpc swim: member %u: sending to %u: %s",
                            opal_swim_self(sw->sm), to, opal_strerror(rc));
    }
    return rc;
}

static void swim_event(void *arg, uint32_t rank, opal_swim_status_t status, uint64_t inc)
{
    opal_rpc_swim_t *sw = arg;
    opal_output_verbose(1, opal_rpc_base_output,
                        "rpc swim: member %u sees %u %s (incarnation %llu)", opal_swim_self(sw->sm),
                        rank, opal_swim_status_name(status), (unsigned long long) inc);
    if (OPAL_SWIM_DEAD == status) {
        opal_rpc_endpoint_t ep;
        if (OPAL_SUCCESS == sw->endpoint(sw->endpoint_arg, rank, &ep) && NULL != ep.addr) {
            (void) opal_rpc_peer_failed(sw->ctx, ep.addr);
        }
    }
    for (int i = 0; i < sw->ncbs; ++i) {
        sw->cbs[i].cb(sw->cbs[i].arg, rank, status, inc);
    }
}

/* A SWIM message from a peer: inline, in the context's progress thread
 * (the same thread that ticks the state machine). */
static void swim_handler(opal_rpc_request_t *req)
{
    opal_rpc_context_t *ctx = opal_rpc_req_context(req);
    opal_rpc_swim_t *sw = swim_of_ctx[opal_rpc_context_idx(ctx)];
    const rpc_swim_msg_t *in = opal_rpc_req_input(req);
    opal_swim_msg_t msg;
    const char *why = "a rank out of the group, or a message for another member";
    if (NULL == sw) {
        return; /* no SWIM here (yet, or any more): as if lost */
    }
    int rc = opal_swim_msg_decode(&msg, in->bytes.buf, in->bytes.len, &why);
    if (OPAL_SUCCESS == rc) {
        rc = opal_swim_recv(sw->sm, &msg);
    }
    if (OPAL_SUCCESS != rc) {
        sw->refused++;
        opal_output_verbose(1, opal_rpc_base_output,
                            "rpc swim: member %u refused a message of %u bytes from a peer: %s",
                            opal_swim_self(sw->sm), in->bytes.len, why);
    }
}

static const opal_rpc_op_t swim_ops[] = {
    {.handler = swim_handler,
     .in = &rpc_swim_msg_codec,
     .flags = OPAL_RPC_OP_ONEWAY | OPAL_RPC_OP_INLINE},
};

static const opal_rpc_proto_t swim_proto = {
    .name = "swim", .base = OPAL_RPC_SWIM_BASE, .version = 1, .count = 1, .ops = swim_ops};

int opal_rpc_swim_create(opal_rpc_context_t *ctx, uint32_t self, uint32_t size,
                         const opal_swim_params_t *p, opal_rpc_swim_endpoint_fn_t endpoint,
                         void *endpoint_arg, opal_rpc_swim_t **out)
{
    opal_swim_params_t vars;
    int rc;
    if (NULL == ctx || NULL == endpoint || NULL == out) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (NULL != swim_of_ctx[opal_rpc_context_idx(ctx)]) {
        return OPAL_ERR_EXISTS;
    }
    if (NULL == p) {
        rc = opal_swim_params_from_vars(&vars);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
        p = &vars;
    }
    rc = opal_rpc_proto_register(&swim_proto);
    if (OPAL_SUCCESS != rc && OPAL_ERR_EXISTS != rc) {
        return rc;
    }
    opal_rpc_swim_t *sw = calloc(1, sizeof(*sw));
    if (NULL == sw) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    sw->ctx = ctx;
    sw->endpoint = endpoint;
    sw->endpoint_arg = endpoint_arg;
    sw->ops.send = swim_send;
    sw->ops.now_ms = mono_ms;
    sw->ops.event = swim_event;
    rc = opal_swim_create(p, self, size, &sw->ops, sw, &sw->sm);
    if (OPAL_SUCCESS != rc) {
        free(sw);
        return rc;
    }
    swim_of_ctx[opal_rpc_context_idx(ctx)] = sw;
    *out = sw;
    return OPAL_SUCCESS;
}

int opal_rpc_swim_add_callback(opal_rpc_swim_t *sw, opal_rpc_swim_event_cb_t cb, void *arg)
{
    if (NULL == cb) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (sw->ncbs == MAX_CALLBACKS) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    sw->cbs[sw->ncbs].cb = cb;
    sw->cbs[sw->ncbs].arg = arg;
    sw->ncbs++;
    return OPAL_SUCCESS;
}

unsigned int opal_rpc_swim_progress(opal_rpc_swim_t *sw)
{
    uint64_t now = mono_ms(NULL);
    uint64_t next = opal_swim_next_deadline(sw->sm);
    if (next <= now) {
        next = opal_swim_tick(sw->sm);
        now = mono_ms(NULL);
    }
    return next <= now ? 0 : (unsigned int) (next - now);
}

opal_swim_t *opal_rpc_swim_state(opal_rpc_swim_t *sw)
{
    return sw->sm;
}

uint64_t opal_rpc_swim_refused(const opal_rpc_swim_t *sw)
{
    return sw->refused;
}

void opal_rpc_swim_destroy(opal_rpc_swim_t *sw)
{
    if (NULL == sw) {
        return;
    }
    swim_of_ctx[opal_rpc_context_idx(sw->ctx)] = NULL;
    opal_swim_destroy(sw->sm);
    free(sw);
}
