/*
 * A client outside the job (for rpc_group_test): started alone, it
 * attaches to the group from the file a rank saved and sends each member,
 * by (group, rank, context 0), a collect request (the answer must be that
 * rank) and then a stop.
 *
 *   rpc_group_client <na info> <group file>
 *
 * Prints "client ok: N ranks" when every member answered as itself.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/rpc/rpc.h"
#include "opal/mca/rpc/rpc_group.h"
#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "test/rpc/rpc_group_proto.h"

static void never(opal_rpc_request_t *req)
{
    (void) opal_rpc_reply_error(req, OPAL_ERR_NOT_SUPPORTED, "the client serves nothing");
}

static const opal_rpc_op_t ops[OP_COUNT] = {
    [OP_COLLECT] = {.handler = never, .in = &group_in_codec, .out = &group_out_codec},
    [OP_STOP] = {.handler = never, .in = &group_in_codec, .out = &group_out_codec},
};
static const opal_rpc_proto_t proto = {
    .name = "group-test", .base = GROUP_TEST_BASE, .version = 1, .count = OP_COUNT, .ops = ops};

typedef struct {
    bool done;
    int status;
    uint64_t sum;
    uint32_t count, first;
} answer_t;

static void answered(opal_rpc_request_t *req, int status, void *arg)
{
    answer_t *a = arg;
    const group_out_t *out = opal_rpc_req_output(req);
    a->status = status;
    if (OPAL_SUCCESS == status) {
        a->sum = out->sum;
        a->count = out->ranks.count;
        a->first = 0 == out->ranks.count ? UINT32_MAX : out->ranks.elems[0];
    }
    a->done = true;
}

static bool is_done(void *arg)
{
    return ((answer_t *) arg)->done;
}

static int ask(opal_rpc_context_t *ctx, opal_rpc_group_t *g, uint32_t rank, uint32_t op)
{
    opal_rpc_endpoint_t ep;
    opal_rpc_request_t *req = NULL;
    answer_t a = {false, 0, 0, 0, 0};
    int rc = opal_rpc_group_endpoint(g, rank, 0, &ep);
    if (OPAL_SUCCESS == rc) {
        rc = opal_rpc_req_create(ctx, &ep, OPAL_RPC_OPCODE(GROUP_TEST_BASE, 1, op), &req);
    }
    if (OPAL_SUCCESS == rc) {
        ((group_in_t *) opal_rpc_req_input(req))->phase = 7;
        rc = opal_rpc_req_send(req, answered, &a);
    }
    if (OPAL_SUCCESS == rc) {
        rc = opal_rpc_progress_cond(ctx, 60000, is_done, &a);
    }
    if (OPAL_SUCCESS == rc) {
        rc = a.status;
    }
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "client: rank %u: %s\n", rank, opal_strerror(rc));
        return rc;
    }
    if (a.sum != rank || 1 != a.count || a.first != rank) {
        fprintf(stderr, "client: rank %u answered as %llu (%u ranks, first %u)\n", rank,
                (unsigned long long) a.sum, a.count, a.first);
        return OPAL_ERR_BAD_PARAM;
    }
    return OPAL_SUCCESS;
}

int main(int argc, char **argv)
{
    if (3 != argc) {
        fprintf(stderr, "usage: rpc_group_client <na info> <group file>\n");
        return 2;
    }
    opal_rpc_context_t *ctx = NULL;
    opal_rpc_group_t *g = NULL;
    int rc;
    if (OPAL_SUCCESS != (rc = opal_init_util(&argc, &argv)) ||
        OPAL_SUCCESS != (rc = opal_rpc_init(argv[1], false)) ||
        OPAL_SUCCESS != (rc = opal_rpc_proto_register(&proto)) ||
        OPAL_SUCCESS != (rc = opal_rpc_context_create(0, &ctx)) ||
        OPAL_SUCCESS != (rc = opal_rpc_group_attach(argv[2], &g))) {
        fprintf(stderr, "client: setting up: %s\n", opal_strerror(rc));
        return 1;
    }
    uint32_t size = opal_rpc_group_size(g), rank;
    int failures = 0;
    if (0 != strcmp(opal_rpc_group_name(g), "primary") ||
        OPAL_ERR_NOT_FOUND != opal_rpc_group_rank(g, &rank)) {
        fprintf(stderr, "client: attached to '%s' as a member?\n", opal_rpc_group_name(g));
        ++failures;
    }
    for (uint32_t r = 0; r < size; ++r) {
        failures += OPAL_SUCCESS != ask(ctx, g, r, OP_COLLECT);
    }
    for (uint32_t r = 0; r < size; ++r) {
        failures += OPAL_SUCCESS != ask(ctx, g, r, OP_STOP);
    }
    if (OPAL_SUCCESS != (rc = opal_rpc_group_destroy(g)) ||
        OPAL_SUCCESS != (rc = opal_rpc_context_destroy(ctx)) ||
        OPAL_SUCCESS != (rc = opal_rpc_finalize())) {
        fprintf(stderr, "client: closing: %s\n", opal_strerror(rc));
        return 1;
    }
    if (0 == failures) {
        printf("client ok: %u ranks\n", size);
    }
    opal_finalize_util();
    return 0 == failures ? 0 : 1;
}
