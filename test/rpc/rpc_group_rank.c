/*
 * A rank of an mcarun job for rpc_group_test: groups and collective RPC.
 *
 *   rpc_group_rank <na info> <tree> <k> [kill | serve=<group file>]
 *
 * Every rank opens the engine (its URI goes to the modex), registers the
 * test protocol and its aggregation, and serves; rank 0 is the root of a
 * sequence of corpcs over the primary group and a subgroup, checking each
 * aggregate exactly (the sum, the count and the list of the ranks that
 * ran the handler) and the ranks reported failed, and prints what it
 * found. With "kill", the last rank dies (SIGKILL) once the job has
 * started: the corpcs report it failed, then it is marked dead and
 * skipped. A last corpc stops the members; each prints "rank N ok".
 * With "serve=F", rank 0 saves the primary group to F and prints "group
 * saved"; the ranks serve until a client outside the job (rpc_group_client)
 * sends each a stop.
 */
#include "opal/opal_config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opal/mca/rpc/rpc.h"
#include "opal/mca/rpc/rpc_group.h"
#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "orte/runtime/orte_init.h"

#include "test/rpc/rpc_group_proto.h"

static uint32_t me, np;
static volatile bool stop;
static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("rank %u: FAILED: ", me);                                                       \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            fflush(stdout);                                                                        \
            ++failures;                                                                            \
        }                                                                                          \
    } while (0)

/* Each member answers its own primary rank. */
static void fill(opal_rpc_request_t *req)
{
    const group_in_t *in = opal_rpc_req_input(req);
    group_out_t *out = opal_rpc_req_output(req);
    static uint32_t mine;
    mine = me;
    out->sum = me;
    out->count = 1;
    out->phase = in->phase;
    out->ranks.count = 1;
    out->ranks.elems = &mine;
    (void) opal_rpc_reply_send(req);
}

static void collect_handler(opal_rpc_request_t *req)
{
    fill(req);
}

static void stop_handler(opal_rpc_request_t *req)
{
    fill(req);
    stop = true;
}

/* Merges a child subtree's aggregate: sums add, rank lists join. */
static int aggregate(void *out_, const void *child_, void *arg)
{
    group_out_t *out = out_;
    const group_out_t *child = child_;
    (void) arg;
    if (out->phase != child->phase) {
        return OPAL_ERR_BAD_PARAM;
    }
    uint32_t *grown =
        realloc(out->ranks.elems, (out->ranks.count + child->ranks.count) * sizeof(uint32_t));
    if (NULL == grown) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (child->ranks.count > 0) {
        memcpy(grown + out->ranks.count, child->ranks.elems, child->ranks.count * sizeof(uint32_t));
    }
    out->ranks.elems = grown;
    out->ranks.count += child->ranks.count;
    out->sum += child->sum;
    out->count += child->count;
    return OPAL_SUCCESS;
}

static const opal_rpc_op_t ops[OP_COUNT] = {
    [OP_COLLECT] = {.handler = collect_handler, .in = &group_in_codec, .out = &group_out_codec},
    [OP_STOP] = {.handler = stop_handler, .in = &group_in_codec, .out = &group_out_codec},
};
static const opal_rpc_proto_t proto = {
    .name = "group-test", .base = GROUP_TEST_BASE, .version = 1, .count = OP_COUNT, .ops = ops};

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

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
    return x < y ? -1 : x > y;
}

/* Runs one corpc from here and checks that exactly the ranks in `expect`
 * (a bitmap over primary ranks) answered, and exactly `failed` failed
 * (the corpc names group ranks: in the reversed subgroup, rank i is
 * primary rank np - 1 - i). */
static void run(opal_rpc_context_t *ctx, opal_rpc_group_t *g, bool reversed, uint32_t op,
                const opal_rpc_corpc_opts_t *opts, uint32_t phase, const bool *expect,
                const bool *failed, const char *what)
{
    opal_rpc_corpc_t *co = NULL;
    result_t r = {false, 0};
    int rc = opal_rpc_corpc_create(ctx, g, OPAL_RPC_OPCODE(GROUP_TEST_BASE, 1, op), opts, &co);
    CHECK(OPAL_SUCCESS == rc, "%s: create: %s", what, opal_strerror(rc));
    if (OPAL_SUCCESS != rc) {
        return;
    }
    ((group_in_t *) opal_rpc_corpc_input(co))->phase = phase;
    rc = opal_rpc_corpc_send(co, corpc_done, &r);
    CHECK(OPAL_SUCCESS == rc, "%s: send: %s", what, opal_strerror(rc));
    if (OPAL_SUCCESS == rc) {
        rc = opal_rpc_progress_cond(ctx, 120000, is_done, &r);
        CHECK(OPAL_SUCCESS == rc, "%s: no completion", what);
    }
    if (!r.done) {
        return;
    }
    uint64_t sum = 0;
    uint32_t count = 0, nfailed = 0;
    for (uint32_t i = 0; i < np; ++i) {
        sum += expect[i] ? i : 0;
        count += expect[i];
        nfailed += failed[i];
    }
    CHECK(r.status == (0 == nfailed ? OPAL_SUCCESS : OPAL_ERR_PEER_FAILED), "%s: status %s", what,
          opal_strerror(r.status));
    const group_out_t *out = opal_rpc_corpc_output(co);
    CHECK(NULL != out, "%s: no aggregate", what);
    if (NULL != out) {
        CHECK(out->sum == sum && out->count == count && out->ranks.count == count &&
                  out->phase == phase,
              "%s: sum %llu count %u (%u ranks) phase %u, expected %llu, %u, phase %u", what,
              (unsigned long long) out->sum, out->count, out->ranks.count, out->phase,
              (unsigned long long) sum, count, phase);
        if (out->ranks.count == count && count > 0) {
            uint32_t *sorted = malloc((count + 1) * sizeof(uint32_t));
            memcpy(sorted, out->ranks.elems, count * sizeof(uint32_t));
            qsort(sorted, count, sizeof(uint32_t), cmp_u32);
            uint32_t j = 0;
            for (uint32_t i = 0; i < np; ++i) {
                if (expect[i]) {
                    CHECK(j < count && sorted[j] == i, "%s: rank %u missing from the list", what,
                          i);
                    ++j;
                }
            }
            free(sorted);
        }
    }
    const uint32_t *ranks = NULL;
    uint32_t n = opal_rpc_corpc_failed(co, &ranks);
    CHECK(n == nfailed, "%s: %u ranks failed, expected %u", what, n, nfailed);
    for (uint32_t i = 0; i < n && n == nfailed; ++i) {
        uint32_t primary = reversed ? np - 1 - ranks[i] : ranks[i];
        CHECK(ranks[i] < np && failed[primary], "%s: rank %u reported failed", what, ranks[i]);
    }
    printf("root: %s: %u answered, sum %llu, %u failed\n", what, count,
           NULL == out ? 0ull : (unsigned long long) out->sum, n);
    fflush(stdout);
    opal_rpc_corpc_free(co);
}

/* What the root refuses before sending anything, and subgroups refused. */
static void refusals(opal_rpc_context_t *ctx, opal_rpc_group_t *g)
{
    opal_rpc_corpc_t *co = NULL;
    uint32_t opc = OPAL_RPC_OPCODE(GROUP_TEST_BASE, 1, OP_COLLECT);
    opal_rpc_corpc_opts_t bad_tree = {.tree = "binary"}, bad_k = {.tree = "kary", .k = 1};
    uint32_t root_rank = 0, ranks[2] = {0, np};
    opal_rpc_corpc_opts_t bad_excl = {.excluded = &root_rank, .excluded_count = 1};
    CHECK(OPAL_ERR_BAD_PARAM == opal_rpc_corpc_create(ctx, g, opc, &bad_tree, &co), "tree");
    CHECK(OPAL_ERR_BAD_PARAM == opal_rpc_corpc_create(ctx, g, opc, &bad_k, &co), "k = 1");
    CHECK(OPAL_ERR_BAD_PARAM == opal_rpc_corpc_create(ctx, g, opc, &bad_excl, &co), "root out");
    CHECK(OPAL_ERR_NOT_FOUND ==
              opal_rpc_corpc_create(ctx, g, OPAL_RPC_OPCODE(GROUP_TEST_BASE, 1, 9), NULL, &co),
          "unregistered opcode");
    opal_rpc_group_t *sub = NULL;
    CHECK(OPAL_ERR_BAD_PARAM == opal_rpc_group_create("outside", ranks, 2, &sub), "rank np");
    ranks[1] = 0;
    CHECK(OPAL_ERR_BAD_PARAM == opal_rpc_group_create("twice", ranks, 2, &sub), "rank twice");
    CHECK(OPAL_ERR_EXISTS == opal_rpc_group_create("reversed", ranks, 1, &sub), "name in use");
}

/* A figure, not a check (RPC_GROUP_RATE=N rounds; the tests leave it
 * out): corpcs back to back over the whole group. */
static void rate(opal_rpc_context_t *ctx, opal_rpc_group_t *g, const char *tree, uint32_t k)
{
    opal_rpc_corpc_opts_t opts = {.tree = tree, .k = k};
    const char *env = getenv("RPC_GROUP_RATE");
    const int rounds = NULL == env ? 0 : atoi(env);
    if (rounds <= 0) {
        return;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < rounds; ++i) {
        opal_rpc_corpc_t *co = NULL;
        result_t r = {false, 0};
        if (OPAL_SUCCESS != opal_rpc_corpc_create(ctx, g,
                                                  OPAL_RPC_OPCODE(GROUP_TEST_BASE, 1, OP_COLLECT),
                                                  &opts, &co)) {
            return;
        }
        ((group_in_t *) opal_rpc_corpc_input(co))->phase = 6;
        if (OPAL_SUCCESS == opal_rpc_corpc_send(co, corpc_done, &r)) {
            (void) opal_rpc_progress_cond(ctx, 120000, is_done, &r);
        }
        const group_out_t *out = opal_rpc_corpc_output(co);
        CHECK(r.done && OPAL_SUCCESS == r.status && NULL != out && out->count == np,
              "round %d of the rate", i);
        opal_rpc_corpc_free(co);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double us =
        ((double) (t1.tv_sec - t0.tv_sec) * 1e6 + (double) (t1.tv_nsec - t0.tv_nsec) / 1e3) /
        rounds;
    printf("root: %d corpcs over %u ranks (%s, k=%u): %.1f us each\n", rounds, np, tree, k, us);
    fflush(stdout);
}

static void root(opal_rpc_context_t *ctx, opal_rpc_group_t *g, const char *tree, uint32_t k,
                 bool kill)
{
    refusals(ctx, g);
    bool expect[64], failed[64] = {false};
    uint32_t victim = kill ? np - 1 : UINT32_MAX;
    opal_rpc_corpc_opts_t opts = {.tree = tree, .k = k, .timeout = kill ? 15 : 0};
    for (uint32_t i = 0; i < np; ++i) {
        expect[i] = i != victim;
        failed[i] = i == victim;
    }
    run(ctx, g, false, OP_COLLECT, &opts, 1, expect, failed, "every rank");
    if (kill) {
        uint64_t v = opal_rpc_group_version(g);
        CHECK(OPAL_SUCCESS == opal_rpc_group_member_set_state(g, victim, OPAL_RPC_MEMBER_DEAD),
              "set_state");
        CHECK(opal_rpc_group_version(g) == v + 1, "the version did not increase");
        /* The subgroup holding it (as its rank 0) sees it dead too. */
        opal_rpc_member_state_t s = OPAL_RPC_MEMBER_ALIVE;
        (void) opal_rpc_group_member_state(opal_rpc_group_lookup("reversed"), 0, &s);
        CHECK(OPAL_RPC_MEMBER_DEAD == s, "the subgroup's member is not dead");
        /* Known dead: skipped without waiting, still reported. */
        opts.timeout = 0;
        run(ctx, g, false, OP_COLLECT, &opts, 2, expect, failed, "dead rank skipped");
    }
    /* Ranks 1 and np - 2 excluded: they do not run the handler and are
     * not failures. */
    uint32_t excluded[2];
    opts.excluded = excluded;
    opts.excluded_count = 0;
    if (np >= 2) {
        excluded[opts.excluded_count++] = 1;
        expect[1] = false;
    }
    if (np >= 4 && np - 2 != victim) {
        excluded[opts.excluded_count++] = np - 2;
        expect[np - 2] = false;
    }
    run(ctx, g, false, OP_COLLECT, &opts, 3, expect, failed, "excluded ranks skipped");
    opts.excluded_count = 0;
    /* A subgroup in reverse order: this rank (0) is its last rank, so the
     * tree is rooted away from 0. */
    opal_rpc_group_t *sub = opal_rpc_group_lookup("reversed");
    for (uint32_t i = 0; i < np; ++i) {
        expect[i] = i != victim;
    }
    if (NULL != sub) {
        run(ctx, sub, true, OP_COLLECT, &opts, 4, expect, failed, "subgroup");
    }
    if (!kill) {
        rate(ctx, g, tree, k);
    }
    run(ctx, g, false, OP_STOP, &opts, 5, expect, failed, "stop");
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: rpc_group_rank <na info> <tree> <k> [kill]\n");
        return 2;
    }
    bool kill = argc > 4 && 0 == strcmp(argv[4], "kill");
    const char *serve = argc > 4 && 0 == strncmp(argv[4], "serve=", 6) ? argv[4] + 6 : NULL;
    if (OPAL_SUCCESS != orte_init(&argc, &argv)) {
        return 2;
    }
    me = opal_proc_job_info()->my_name.vpid;
    np = opal_proc_job_info()->size;
    if (np > 64) {
        return 2;
    }
    opal_rpc_context_t *ctx = NULL;
    opal_rpc_group_t *g = NULL, *sub = NULL;
    uint32_t reversed[64];
    for (uint32_t i = 0; i < np; ++i) {
        reversed[i] = np - 1 - i;
    }
    int rc;
    if (OPAL_SUCCESS != (rc = opal_rpc_init(argv[1], true)) ||
        OPAL_SUCCESS != (rc = opal_rpc_proto_register(&proto)) ||
        OPAL_SUCCESS != (rc = opal_rpc_corpc_register(
                             OPAL_RPC_OPCODE(GROUP_TEST_BASE, 1, OP_COLLECT), aggregate, NULL)) ||
        OPAL_SUCCESS != (rc = opal_rpc_corpc_register(OPAL_RPC_OPCODE(GROUP_TEST_BASE, 1, OP_STOP),
                                                      aggregate, NULL)) ||
        OPAL_SUCCESS != (rc = opal_rpc_context_create(0, &ctx)) ||
        OPAL_SUCCESS != (rc = opal_rpc_group_primary(&g)) ||
        OPAL_SUCCESS != (rc = opal_rpc_group_create("reversed", reversed, np, &sub))) {
        fprintf(stderr, "rank %u: setting up: %s\n", me, opal_strerror(rc));
        return 1;
    }
    CHECK(opal_rpc_group_size(g) == np, "primary size %u", opal_rpc_group_size(g));
    /* Everyone registered before the root forwards anything. */
    if (OPAL_SUCCESS != (rc = opal_fence(false))) {
        fprintf(stderr, "rank %u: fence: %s\n", me, opal_strerror(rc));
        return 1;
    }
    if (kill && me == np - 1 && np > 1) {
        raise(SIGKILL);
    }
    if (NULL != serve && 0 == me) {
        rc = opal_rpc_group_save(g, serve);
        CHECK(OPAL_SUCCESS == rc, "saving the group to %s: %s", serve, opal_strerror(rc));
        printf("group saved\n");
        fflush(stdout);
    }
    if (0 == me && NULL == serve) {
        root(ctx, g, argv[2], (uint32_t) atoi(argv[3]), kill && np > 1);
    } else {
        time_t deadline = time(NULL) + 300;
        while (!stop && time(NULL) < deadline) {
            (void) opal_rpc_progress(ctx, 100);
        }
        CHECK(stop, "no stop in 300 s");
    }
    /* What this rank forwards must reach its parent before it leaves. */
    time_t deadline = time(NULL) + 120;
    while (opal_rpc_corpc_inflight() > 0 && time(NULL) < deadline) {
        (void) opal_rpc_progress(ctx, 100);
    }
    CHECK(0 == opal_rpc_corpc_inflight(), "corpcs still in flight");
    (void) opal_fence(false);
    (void) opal_rpc_group_destroy(sub);
    if (OPAL_SUCCESS != (rc = opal_rpc_context_destroy(ctx)) ||
        OPAL_SUCCESS != (rc = opal_rpc_finalize())) {
        fprintf(stderr, "rank %u: closing: %s\n", me, opal_strerror(rc));
        return 1;
    }
    if (0 == failures) {
        printf("rank %u ok\n", me);
    }
    fflush(stdout);
    return OPAL_SUCCESS == orte_finalize() && 0 == failures ? 0 : 1;
}
