/*
 * A client outside the job (for rpc_corpc_test): started alone, it
 * attaches to the group from the file a rank saved and, not being a
 * member, asks one rank (the root named on the command line) to run
 * corpcs over the group for it (opal_rpc_corpc_create_at):
 *   big    blocks of 16 KiB and 96 KiB from every member, checked exactly
 *   pull   1 MiB the client exposes by a handle bound to itself: every
 *          member pulls it from the client and answers its checksum
 *   excluded ranks are left out (not failed); a root out of range is
 *          refused before anything is sent; an opcode the members did
 *          not make collective is refused by the root
 *   stop   every member leaves
 *
 *   rpc_corpc_client <na info> <group file> <root>
 *
 * Prints "client ok: N ranks through root R" when all of it checked out.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/rpc/rpc.h"
#include "opal/mca/rpc/rpc_group.h"
#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "test/rpc/rpc_corpc_proto.h"

static int failures;
static opal_rpc_context_t *ctx;
static opal_rpc_group_t *g;
static uint32_t size, root;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "client: FAILED: ");                                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            ++failures;                                                                            \
        }                                                                                          \
    } while (0)

static void never(opal_rpc_request_t *req)
{
    (void) opal_rpc_reply_error(req, OPAL_ERR_NOT_SUPPORTED, "the client serves nothing");
}

static const opal_rpc_op_t ops[OP_CCOUNT] = {
    [OP_PULL] = {.handler = never, .in = &corpc_in_codec, .out = &corpc_out_codec},
    [OP_BIG] = {.handler = never, .in = &corpc_in_codec, .out = &corpc_out_codec},
    [OP_CSTOP] = {.handler = never, .in = &corpc_in_codec, .out = &corpc_out_codec},
    [OP_PROBE] = {.handler = never, .in = &corpc_in_codec, .out = &corpc_out_codec},
    [OP_PLAIN] = {.handler = never, .in = &corpc_in_codec, .out = &corpc_out_codec},
};
static const opal_rpc_proto_t proto = {
    .name = "corpc-test", .base = CORPC_TEST_BASE, .version = 1, .count = OP_CCOUNT, .ops = ops};

typedef struct {
    bool done;
    int status;
} result_t;

static void corpc_done(opal_rpc_corpc_t *co, int status, void *arg)
{
    (void) co;
    result_t *r = arg;
    r->status = status;
    r->done = true;
}

static bool is_done(void *arg)
{
    return ((result_t *) arg)->done;
}

/* A corpc of op through the root; returns it completed or NULL. */
static opal_rpc_corpc_t *run(uint32_t op, const opal_rpc_corpc_opts_t *opts, uint32_t seed,
                             uint32_t block, opal_bulk_t *data, result_t *r, const char *what)
{
    opal_rpc_corpc_t *co = NULL;
    int rc =
        opal_rpc_corpc_create_at(ctx, g, root, OPAL_RPC_OPCODE(CORPC_TEST_BASE, 1, op), opts, &co);
    CHECK(OPAL_SUCCESS == rc, "%s: create: %s", what, opal_strerror(rc));
    if (OPAL_SUCCESS != rc) {
        return NULL;
    }
    corpc_in_t *in = opal_rpc_corpc_input(co);
    in->seed = seed;
    in->block = block;
    in->data = data;
    *r = (result_t){false, 0};
    rc = opal_rpc_corpc_send(co, corpc_done, r);
    CHECK(OPAL_SUCCESS == rc, "%s: send: %s", what, opal_strerror(rc));
    if (OPAL_SUCCESS == rc) {
        rc = opal_rpc_progress_cond(ctx, 120000, is_done, r);
        CHECK(OPAL_SUCCESS == rc && r->done, "%s: no completion", what);
    }
    if (!r->done) {
        opal_rpc_corpc_free(co);
        return NULL;
    }
    return co;
}

/* The ranks in out are exactly those not in skip (a bitmap), once each. */
static bool ranks_are(const corpc_out_t *out, const bool *skip)
{
    bool seen[64] = {false};
    uint32_t want = 0;
    for (uint32_t r = 0; r < size; ++r) {
        want += !skip[r];
    }
    if (NULL == out || out->ranks.count != want || out->values.count != want) {
        return false;
    }
    for (uint32_t i = 0; i < want; ++i) {
        uint32_t r = out->ranks.elems[i];
        if (r >= size || seen[r] || skip[r]) {
            return false;
        }
        seen[r] = true;
    }
    return true;
}

static void big(uint32_t seed, uint32_t block)
{
    result_t r;
    bool none[64] = {false};
    opal_rpc_corpc_t *co = run(OP_BIG, NULL, seed, block, NULL, &r, "big");
    if (NULL == co) {
        return;
    }
    const corpc_out_t *out = opal_rpc_corpc_output(co);
    CHECK(OPAL_SUCCESS == r.status && 0 == opal_rpc_corpc_failed(co, NULL) && ranks_are(out, none),
          "big %u: %s", block, opal_strerror(r.status));
    if (NULL != out && ranks_are(out, none) && out->bytes.len == size * block) {
        for (uint32_t b = 0; b < size; ++b) {
            const uint8_t *p = (const uint8_t *) out->bytes.buf + (size_t) b * block;
            size_t i = 0;
            while (i < block && p[i] == corpc_block_byte(out->ranks.elems[b], seed, i)) {
                ++i;
            }
            CHECK(i == block, "big %u: rank %u's block differs at byte %zu", block,
                  out->ranks.elems[b], i);
        }
    } else {
        CHECK(false, "big %u: %u bytes, expected %u", block, NULL == out ? 0 : out->bytes.len,
              size * block);
    }
    opal_rpc_corpc_free(co);
}

static void pull(void)
{
    size_t len = CORPC_PULL_SIZE;
    uint8_t *buf = malloc(len);
    opal_bulk_t *h = NULL;
    if (NULL == buf) {
        CHECK(false, "no buffer");
        return;
    }
    for (size_t i = 0; i < len; ++i) {
        buf[i] = corpc_pattern_byte(3, i);
    }
    const uint64_t expect = corpc_checksum(buf, len);
    void *bufs[1] = {buf};
    int rc = opal_bulk_create(opal_rpc_bulk_class(), 1, bufs, &len, OPAL_BULK_READ_ONLY, &h);
    if (OPAL_SUCCESS == rc) {
        rc = opal_rpc_bulk_bind(ctx, h);
    }
    CHECK(OPAL_SUCCESS == rc, "bulk: %s", opal_strerror(rc));
    result_t r;
    bool none[64] = {false};
    opal_rpc_corpc_t *co = OPAL_SUCCESS == rc ? run(OP_PULL, NULL, 3, 0, h, &r, "pull") : NULL;
    if (NULL != co) {
        const corpc_out_t *out = opal_rpc_corpc_output(co);
        CHECK(OPAL_SUCCESS == r.status && ranks_are(out, none), "pull: %s",
              opal_strerror(r.status));
        for (uint32_t i = 0; NULL != out && i < out->values.count; ++i) {
            CHECK(expect == out->values.elems[i], "rank %u pulled a wrong checksum",
                  out->ranks.elems[i]);
        }
        opal_rpc_corpc_free(co);
    }
    (void) opal_bulk_free(h);
    free(buf);
}

static void excluded(void)
{
    bool skip[64] = {false};
    uint32_t out_ranks[2], n = 0;
    for (uint32_t r = 0; r < size && n < 2; ++r) {
        if (r != root && r % 2 == 1) {
            out_ranks[n++] = r;
            skip[r] = true;
        }
    }
    opal_rpc_corpc_opts_t opts = {.excluded = out_ranks, .excluded_count = n};
    result_t r;
    opal_rpc_corpc_t *co = run(OP_PROBE, &opts, 0, 0, NULL, &r, "excluded");
    if (NULL != co) {
        CHECK(OPAL_SUCCESS == r.status && 0 == opal_rpc_corpc_failed(co, NULL) &&
                  ranks_are(opal_rpc_corpc_output(co), skip),
              "excluded: %s", opal_strerror(r.status));
        opal_rpc_corpc_free(co);
    }
    opal_rpc_corpc_t *bad = NULL;
    CHECK(OPAL_ERR_BAD_PARAM ==
              opal_rpc_corpc_create_at(ctx, g, size, OPAL_RPC_OPCODE(CORPC_TEST_BASE, 1, OP_PROBE),
                                       NULL, &bad),
          "a root out of range was not refused");
    uint32_t self_out = root;
    opal_rpc_corpc_opts_t root_out = {.excluded = &self_out, .excluded_count = 1};
    CHECK(OPAL_ERR_BAD_PARAM ==
              opal_rpc_corpc_create_at(ctx, g, root, OPAL_RPC_OPCODE(CORPC_TEST_BASE, 1, OP_PROBE),
                                       &root_out, &bad),
          "an excluded root was not refused");
    /* An opcode the root does not run as a corpc: refused there, and
     * the completion says so. */
    result_t r2;
    co = run(OP_PLAIN, NULL, 0, 0, NULL, &r2, "plain");
    if (NULL != co) {
        CHECK(OPAL_ERR_NOT_FOUND == r2.status && NULL == opal_rpc_corpc_output(co) &&
                  0 == opal_rpc_corpc_failed(co, NULL),
              "plain: %s", opal_strerror(r2.status));
        opal_rpc_corpc_free(co);
    }
}

int main(int argc, char **argv)
{
    if (4 != argc) {
        fprintf(stderr, "usage: rpc_corpc_client <na info> <group file> <root>\n");
        return 2;
    }
    int rc;
    if (OPAL_SUCCESS != (rc = opal_init_util(&argc, &argv)) ||
        OPAL_SUCCESS != (rc = opal_rpc_init(argv[1], false)) ||
        OPAL_SUCCESS != (rc = opal_rpc_proto_register(&proto)) ||
        OPAL_SUCCESS != (rc = opal_rpc_context_create(0, &ctx)) ||
        OPAL_SUCCESS != (rc = opal_rpc_group_attach(argv[2], &g))) {
        fprintf(stderr, "client: setting up: %s\n", opal_strerror(rc));
        return 1;
    }
    size = opal_rpc_group_size(g);
    root = (uint32_t) atoi(argv[3]);
    uint32_t rank;
    CHECK(size <= 64 && root < size && OPAL_ERR_NOT_FOUND == opal_rpc_group_rank(g, &rank),
          "group of %u, root %u, or a member", size, root);
    if (0 == failures) {
        big(9, CORPC_BLOCK_SMALL);
        big(10, CORPC_BLOCK_LARGE);
        pull();
        excluded();
    }
    /* Whatever happened, the members are told to leave. */
    result_t r;
    bool none[64] = {false};
    opal_rpc_corpc_t *co = run(OP_CSTOP, NULL, 0, 0, NULL, &r, "stop");
    if (NULL != co) {
        CHECK(OPAL_SUCCESS == r.status && ranks_are(opal_rpc_corpc_output(co), none), "stop: %s",
              opal_strerror(r.status));
        opal_rpc_corpc_free(co);
    }
    CHECK(0 == opal_rpc_corpc_inflight(), "corpcs in flight");
    if (OPAL_SUCCESS != (rc = opal_rpc_group_destroy(g)) ||
        OPAL_SUCCESS != (rc = opal_rpc_context_destroy(ctx)) ||
        OPAL_SUCCESS != (rc = opal_rpc_finalize())) {
        fprintf(stderr, "client: closing: %s\n", opal_strerror(rc));
        return 1;
    }
    if (0 == failures) {
        printf("client ok: %u ranks through root %u\n", size, root);
    }
    opal_finalize_util();
    return 0 == failures ? 0 : 1;
}
