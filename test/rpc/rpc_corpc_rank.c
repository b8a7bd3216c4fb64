/*
 * A rank of an mcarun job for rpc_corpc_test: corpcs that move more than
 * sums.
 *
 *   rpc_corpc_rank <na info> <tree> <k> <bulk | big | create | serve=F>
 *
 * Every rank opens the engine, registers the test protocol
 * (rpc_corpc_proto.h) and its aggregation, and serves; rank 0 is the root:
 *   bulk    it exposes 1 MiB of a pattern by a bound bulk handle; every
 *           member pulls it from the root (however deep in the tree) and
 *           answers its checksum, which the root checks for every rank;
 *           the same handle unbound first: every rank but the root (which
 *           copies from its own handle) fails to pull
 *   big     every member answers a 16 KiB block that depends on its rank;
 *           the aggregates concatenate them, so each level's is larger
 *           than the eager size; the root checks every byte
 *   create  it creates the subgroup "odd-ones" of the odd ranks and rank 0
 *           collectively; rank 1 (a member) then runs a corpc over it;
 *           a second creation under the same name is refused by all
 *   serve=F the ranks serve until a client outside the job
 *           (rpc_corpc_client) has run its corpcs through a root and
 *           stopped them; rank 0 saves the group to F first and prints
 *           "group saved"
 * A last corpc stops the members; each prints "rank N ok".
 */
#include "opal/opal_config.h"

#include <stdatomic.h>
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

#include "test/rpc/rpc_corpc_proto.h"

static uint32_t me, np;
static _Atomic bool stop;
static int failures;
static opal_rpc_context_t *ctx;

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

/* Replies (rank, value) and bytes (not kept: the reply encodes them). */
static void answer(opal_rpc_request_t *req, uint64_t value, void *bytes, uint32_t len)
{
    corpc_out_t *out = opal_rpc_req_output(req);
    uint32_t rank = me;
    out->ranks.count = 1;
    out->ranks.elems = &rank;
    out->values.count = 1;
    out->values.elems = &value;
    out->bytes.buf = bytes;
    out->bytes.len = len;
    int rc = opal_rpc_reply_send(req);
    CHECK(OPAL_SUCCESS == rc, "reply: %s", opal_strerror(rc));
    memset(out, 0, sizeof(*out));
}

typedef struct {
    opal_rpc_request_t *req;
    opal_bulk_t *local;
    uint8_t *buf;
    size_t size;
} pull_t;

static void pulled(const opal_bulk_cb_info_t *info)
{
    pull_t *p = info->arg;
    if (OPAL_SUCCESS == info->ret) {
        answer(p->req, corpc_checksum(p->buf, p->size), NULL, 0);
    } else {
        (void) opal_rpc_reply_error(p->req, info->ret, "the pull from the root failed");
    }
    opal_rpc_req_decref(p->req);
    (void) opal_bulk_free(p->local);
    free(p->buf);
    free(p);
}

static void pull_handler(opal_rpc_request_t *req)
{
    const corpc_in_t *in = opal_rpc_req_input(req);
    pull_t *p = calloc(1, sizeof(*p));
    int rc = OPAL_ERR_OUT_OF_RESOURCE;
    if (NULL == in->data) {
        rc = OPAL_ERR_BAD_PARAM;
    } else if (NULL != p) {
        p->req = req;
        p->size = opal_bulk_get_size(in->data);
        p->buf = malloc(p->size);
        void *bufs[1] = {p->buf};
        rc = NULL == p->buf ? OPAL_ERR_OUT_OF_RESOURCE
                            : opal_bulk_create(opal_rpc_bulk_class(), 1, bufs, &p->size,
                                               OPAL_BULK_WRITE_ONLY, &p->local);
    }
    if (OPAL_SUCCESS == rc) {
        opal_rpc_req_addref(req);
        rc = opal_rpc_bulk_transfer(req, OPAL_BULK_PULL, in->data, 0, p->local, 0, p->size, pulled,
                                    p, NULL);
        if (OPAL_SUCCESS != rc) {
            opal_rpc_req_decref(req);
        }
    }
    if (OPAL_SUCCESS != rc) {
        if (NULL != p) {
            (void) opal_bulk_free(p->local);
            free(p->buf);
            free(p);
        }
        (void) opal_rpc_reply_error(req, rc, "no pull");
    }
}

static void big_handler(opal_rpc_request_t *req)
{
    const corpc_in_t *in = opal_rpc_req_input(req);
    uint8_t *block = in->block > CORPC_BLOCK_LARGE ? NULL : malloc(in->block + 1);
    if (NULL == block) {
        (void) opal_rpc_reply_error(req, OPAL_ERR_OUT_OF_RESOURCE, "no block");
        return;
    }
    for (size_t i = 0; i < in->block; ++i) {
        block[i] = corpc_block_byte(me, in->seed, i);
    }
    answer(req, in->seed, block, in->block);
    free(block);
}

/* Answers how many outputs this rank's context sent or pulled by bulk. */
static void stop_handler(opal_rpc_request_t *req)
{
    opal_rpc_stats_t stats;
    opal_rpc_context_stats(ctx, &stats);
    answer(req, stats.bulk_outputs, NULL, 0);
    stop = true;
}

/* The groups the creation tests make, by probe seed. */
static const char *const probed[] = {"odd-ones", "taken", "with-dead"};
/* Rank 1 in create mode: 1 once its corpc over odd-ones checked out, 2
 * when it did not. */
static _Atomic uint32_t own_corpc;
/* Rank 1 in create mode: the root's word that odd-ones is complete (a
 * member knows it from its own handler on, the others maybe not yet). */
static _Atomic bool go;

/* Answers the version of the group probed (0: not known here), or, for
 * seed 3, how rank 1's own corpc went; seed 4 is the root's go. */
static void probe_handler(opal_rpc_request_t *req)
{
    const corpc_in_t *in = opal_rpc_req_input(req);
    uint64_t value = 0;
    if (in->seed < 3) {
        opal_rpc_group_t *g = opal_rpc_group_lookup(probed[in->seed]);
        value = NULL == g ? 0 : opal_rpc_group_version(g);
    } else if (3 == in->seed) {
        value = own_corpc;
    } else {
        go = true;
    }
    answer(req, value, NULL, 0);
}

/* Joins a child subtree's pairs and bytes after this member's. */
static int aggregate(void *out_, const void *child_, void *arg)
{
    corpc_out_t *out = out_;
    const corpc_out_t *child = child_;
    (void) arg;
    if (child->ranks.count != child->values.count) {
        return OPAL_ERR_BAD_PARAM;
    }
    uint32_t n = out->ranks.count + child->ranks.count;
    uint32_t *ranks = realloc(out->ranks.elems, (n + 1) * sizeof(uint32_t));
    if (NULL != ranks) {
        out->ranks.elems = ranks;
    }
    uint64_t *values = realloc(out->values.elems, (n + 1) * sizeof(uint64_t));
    if (NULL != values) {
        out->values.elems = values;
    }
    uint8_t *bytes = realloc(out->bytes.buf, (size_t) out->bytes.len + child->bytes.len + 1);
    if (NULL != bytes) {
        out->bytes.buf = bytes;
    }
    if (NULL == ranks || NULL == values || NULL == bytes) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (child->ranks.count > 0) {
        memcpy(ranks + out->ranks.count, child->ranks.elems, child->ranks.count * sizeof(uint32_t));
        memcpy(values + out->values.count, child->values.elems,
               child->values.count * sizeof(uint64_t));
    }
    if (child->bytes.len > 0) {
        memcpy(bytes + out->bytes.len, child->bytes.buf, child->bytes.len);
    }
    out->ranks.count = n;
    out->values.count = n;
    out->bytes.len += child->bytes.len;
    return OPAL_SUCCESS;
}

static const opal_rpc_op_t ops[OP_CCOUNT] = {
    [OP_PULL] = {.handler = pull_handler, .in = &corpc_in_codec, .out = &corpc_out_codec},
    [OP_BIG] = {.handler = big_handler, .in = &corpc_in_codec, .out = &corpc_out_codec},
    [OP_CSTOP] = {.handler = stop_handler, .in = &corpc_in_codec, .out = &corpc_out_codec},
    [OP_PROBE] = {.handler = probe_handler, .in = &corpc_in_codec, .out = &corpc_out_codec},
    [OP_PLAIN] = {.handler = probe_handler, .in = &corpc_in_codec, .out = &corpc_out_codec},
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

/* Runs a corpc of op over g with in's seed and data; returns it completed
 * (the caller frees it) or NULL. */
static opal_rpc_corpc_t *run(opal_rpc_group_t *g, uint32_t op, const opal_rpc_corpc_opts_t *opts,
                             uint32_t seed, uint32_t block, opal_bulk_t *data, result_t *r,
                             const char *what)
{
    opal_rpc_corpc_t *co = NULL;
    int rc = opal_rpc_corpc_create(ctx, g, OPAL_RPC_OPCODE(CORPC_TEST_BASE, 1, op), opts, &co);
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

/* Every rank of 0..n once in out's pairs; count of them. */
static bool every_rank_once(const corpc_out_t *out, uint32_t n)
{
    if (NULL == out || out->ranks.count != n || out->values.count != n) {
        return false;
    }
    bool seen[64] = {false};
    for (uint32_t i = 0; i < n; ++i) {
        if (out->ranks.elems[i] >= n || seen[out->ranks.elems[i]]) {
            return false;
        }
        seen[out->ranks.elems[i]] = true;
    }
    return true;
}

static void bulk_phase(opal_rpc_group_t *g, const opal_rpc_corpc_opts_t *opts)
{
    size_t size = CORPC_PULL_SIZE;
    uint8_t *buf = malloc(size);
    opal_bulk_t *h = NULL;
    const uint32_t seed = 17;
    CHECK(NULL != buf, "no buffer");
    if (NULL == buf) {
        return;
    }
    for (size_t i = 0; i < size; ++i) {
        buf[i] = corpc_pattern_byte(seed, i);
    }
    const uint64_t expect = corpc_checksum(buf, size);
    void *bufs[1] = {buf};
    int rc = opal_bulk_create(opal_rpc_bulk_class(), 1, bufs, &size, OPAL_BULK_READ_ONLY, &h);
    CHECK(OPAL_SUCCESS == rc, "bulk create: %s", opal_strerror(rc));
    if (OPAL_SUCCESS != rc) {
        free(buf);
        return;
    }
    /* Unbound, the handle names no owner: every other member's handler
     * (each runs through a loopback request) has no one to pull from, and
     * says so; the root's own handler pulls from its own handle, which the
     * bulk base copies within the process. The corpc completes with every
     * rank but the root failed. */
    result_t r;
    opal_rpc_corpc_t *co = run(g, OP_PULL, opts, seed, 0, h, &r, "unbound");
    if (NULL != co) {
        const int want = np > 1 ? OPAL_ERR_PEER_FAILED : OPAL_SUCCESS;
        CHECK(want == r.status && np - 1 == opal_rpc_corpc_failed(co, NULL) &&
                  NULL != opal_rpc_corpc_output(co),
              "unbound: status %s, %u failed", opal_strerror(r.status),
              opal_rpc_corpc_failed(co, NULL));
        opal_rpc_corpc_free(co);
    }
    rc = opal_rpc_bulk_bind(ctx, h);
    CHECK(OPAL_SUCCESS == rc, "bind: %s", opal_strerror(rc));
    co = run(g, OP_PULL, opts, seed, 0, h, &r, "bound");
    if (NULL != co) {
        const corpc_out_t *out = opal_rpc_corpc_output(co);
        CHECK(OPAL_SUCCESS == r.status && 0 == opal_rpc_corpc_failed(co, NULL),
              "bound: status %s, %u failed", opal_strerror(r.status),
              opal_rpc_corpc_failed(co, NULL));
        CHECK(every_rank_once(out, np), "bound: not every rank answered once");
        uint32_t good = 0;
        for (uint32_t i = 0; NULL != out && i < out->values.count; ++i) {
            CHECK(expect == out->values.elems[i], "rank %u pulled checksum %016llx, not %016llx",
                  out->ranks.elems[i], (unsigned long long) out->values.elems[i],
                  (unsigned long long) expect);
            good += expect == out->values.elems[i];
        }
        printf("root: bulk: %u of %u ranks pulled %zu bytes from the root exactly\n", good, np,
               size);
        fflush(stdout);
        opal_rpc_corpc_free(co);
    }
    (void) opal_bulk_free(h);
    free(buf);
}

/* A corpc whose members each answer a block of block_size bytes. */
static void big_phase(opal_rpc_group_t *g, const opal_rpc_corpc_opts_t *opts, uint32_t seed,
                      uint32_t block_size)
{
    result_t r;
    char what[64];
    snprintf(what, sizeof(what), "big (blocks of %u bytes)", block_size);
    opal_rpc_corpc_t *co = run(g, OP_BIG, opts, seed, block_size, NULL, &r, what);
    if (NULL == co) {
        return;
    }
    const corpc_out_t *out = opal_rpc_corpc_output(co);
    CHECK(OPAL_SUCCESS == r.status && 0 == opal_rpc_corpc_failed(co, NULL),
          "%s: status %s, %u failed", what, opal_strerror(r.status),
          opal_rpc_corpc_failed(co, NULL));
    CHECK(every_rank_once(out, np), "%s: not every rank answered once", what);
    if (NULL != out && every_rank_once(out, np)) {
        CHECK(out->bytes.len == np * block_size, "%s: %u bytes, expected %u", what, out->bytes.len,
              np * block_size);
        uint32_t exact = 0;
        for (uint32_t b = 0; b < np && out->bytes.len == np * block_size; ++b) {
            const uint8_t *p = (const uint8_t *) out->bytes.buf + (size_t) b * block_size;
            size_t i = 0;
            while (i < block_size && p[i] == corpc_block_byte(out->ranks.elems[b], seed, i)) {
                ++i;
            }
            CHECK(i == block_size, "%s: block %u (rank %u) differs at byte %zu", what, b,
                  out->ranks.elems[b], i);
            exact += i == block_size;
            CHECK(seed == out->values.elems[b], "%s: rank %u saw seed %llu", what,
                  out->ranks.elems[b], (unsigned long long) out->values.elems[b]);
        }
        printf("root: %s: %u blocks exact, aggregate %u bytes\n", what, exact, out->bytes.len);
        fflush(stdout);
    }
    opal_rpc_corpc_free(co);
}

typedef struct {
    bool done;
    int status;
    opal_rpc_group_t *group;
    uint32_t failed[64];
    uint32_t nfailed;
} created_t;

static void creation_done(opal_rpc_group_t *group, int status, const uint32_t *failed,
                          uint32_t nfailed, void *arg)
{
    created_t *c = arg;
    c->group = group;
    c->status = status;
    c->nfailed = nfailed < 64 ? nfailed : 64;
    if (c->nfailed > 0) {
        memcpy(c->failed, failed, c->nfailed * sizeof(uint32_t));
    }
    c->done = true;
}

static bool creation_is_done(void *arg)
{
    return ((created_t *) arg)->done;
}

static void create(const char *name, const uint32_t *ranks, uint32_t count, created_t *c)
{
    memset(c, 0, sizeof(*c));
    int rc = opal_rpc_group_create_collective(ctx, name, ranks, count, creation_done, c);
    CHECK(OPAL_SUCCESS == rc, "creating %s: %s", name, opal_strerror(rc));
    if (OPAL_SUCCESS == rc) {
        rc = opal_rpc_progress_cond(ctx, 120000, creation_is_done, c);
        CHECK(OPAL_SUCCESS == rc && c->done, "creating %s: no completion", name);
    }
}

/* A probe over the primary group: what each rank answers, by rank. */
static bool probe(opal_rpc_group_t *g, uint32_t seed, uint64_t *values)
{
    result_t r;
    opal_rpc_corpc_t *co = run(g, OP_PROBE, NULL, seed, 0, NULL, &r, "probe");
    if (NULL == co) {
        return false;
    }
    const corpc_out_t *out = opal_rpc_corpc_output(co);
    bool ok = OPAL_SUCCESS == r.status && every_rank_once(out, np);
    CHECK(ok, "probe %u: %s", seed, opal_strerror(r.status));
    for (uint32_t i = 0; ok && i < np; ++i) {
        values[out->ranks.elems[i]] = out->values.elems[i];
    }
    opal_rpc_corpc_free(co);
    return ok;
}

static void create_phase(opal_rpc_group_t *g)
{
    uint32_t odd[64], all[64], n = 0;
    uint64_t values[64];
    created_t c;
    /* Rank 0 and the odd ranks, in descending order (so the subgroup's
     * rank 0 is not the caller). */
    for (uint32_t r = np; r-- > 1;) {
        if (r % 2 == 1) {
            odd[n++] = r;
        }
    }
    odd[n++] = 0;
    create("odd-ones", odd, n, &c);
    CHECK(OPAL_SUCCESS == c.status && NULL != c.group && n == opal_rpc_group_size(c.group) &&
              0 == c.nfailed,
          "odd-ones: %s, %u failed", opal_strerror(c.status), c.nfailed);
    uint64_t version = NULL == c.group ? 0 : opal_rpc_group_version(c.group);
    CHECK(OPAL_ERR_EXISTS ==
              opal_rpc_group_create_collective(ctx, "odd-ones", odd, n, creation_done, &c),
          "a second odd-ones was not refused here");
    if (probe(g, 0, values)) {
        uint32_t have = 0;
        for (uint32_t r = 0; r < np; ++r) {
            bool member = 0 == r || 1 == r % 2;
            CHECK(values[r] == (member ? version : 0), "rank %u knows odd-ones at version %llu", r,
                  (unsigned long long) values[r]);
            have += member && values[r] == version;
        }
        printf("root: odd-ones created at %u of %u members, version %llu\n", have, n,
               (unsigned long long) version);
    }
    /* Complete: rank 1 may run its corpc over it. */
    (void) probe(g, 4, values);
    /* Rank np - 1 has a group "taken" of its own: the creation is refused
     * there, undone everywhere else, and rank np - 1 keeps its own. */
    for (uint32_t r = 0; r < np; ++r) {
        all[r] = r;
    }
    create("taken", all, np, &c);
    if (np > 1) {
        CHECK(OPAL_ERR_EXISTS == c.status && NULL == c.group && 1 == c.nfailed &&
                  np - 1 == c.failed[0],
              "taken: %s, %u failed (first %u)", opal_strerror(c.status), c.nfailed, c.failed[0]);
        if (probe(g, 1, values)) {
            uint32_t left = 0;
            for (uint32_t r = 0; r < np; ++r) {
                left += 0 != values[r];
            }
            CHECK(1 == left && 0 != values[np - 1], "taken is known at %u ranks after the undo",
                  left);
            printf("root: taken refused by rank %u, undone at the %u others\n", c.failed[0],
                   np - 1);
        }
    }
    /* A member known dead: reported failed at once, nothing kept. */
    if (np >= 3) {
        uint32_t three[3] = {0, 1, 2};
        CHECK(OPAL_SUCCESS == opal_rpc_group_member_set_state(g, 2, OPAL_RPC_MEMBER_DEAD), "dead");
        create("with-dead", three, 3, &c);
        CHECK(OPAL_ERR_PEER_FAILED == c.status && NULL == c.group && 1 == c.nfailed &&
                  2 == c.failed[0],
              "with-dead: %s, %u failed", opal_strerror(c.status), c.nfailed);
        CHECK(OPAL_SUCCESS == opal_rpc_group_member_set_state(g, 2, OPAL_RPC_MEMBER_ALIVE),
              "alive");
        if (probe(g, 2, values)) {
            for (uint32_t r = 0; r < np; ++r) {
                CHECK(0 == values[r], "rank %u kept with-dead", r);
            }
            printf("root: with-dead reported rank %u failed, undone\n", c.failed[0]);
        }
    }
    /* Rank 1, a member, runs its own corpc over odd-ones. */
    time_t deadline = time(NULL) + 120;
    while (np > 1 && time(NULL) < deadline && probe(g, 3, values) && 0 == values[1]) {
        (void) opal_rpc_progress(ctx, 10);
    }
    if (np > 1) {
        CHECK(1 == values[1], "rank 1's corpc over odd-ones: %llu", (unsigned long long) values[1]);
    }
    fflush(stdout);
}

/* Rank 1 in create mode, once odd-ones exists here: a corpc over it. */
static void member_corpc(opal_rpc_group_t *sub)
{
    result_t r;
    opal_rpc_corpc_t *co = run(sub, OP_PROBE, NULL, 0, 0, NULL, &r, "over odd-ones");
    own_corpc = 2;
    if (NULL == co) {
        return;
    }
    const corpc_out_t *out = opal_rpc_corpc_output(co);
    uint32_t size = opal_rpc_group_size(sub), good = 0;
    bool seen[64] = {false};
    for (uint32_t i = 0; NULL != out && i < out->ranks.count; ++i) {
        uint32_t p = out->ranks.elems[i];
        if (p < np && !seen[p] && (0 == p || 1 == p % 2) &&
            out->values.elems[i] == opal_rpc_group_version(sub)) {
            seen[p] = true;
            ++good;
        }
    }
    const uint32_t *failed = NULL;
    uint32_t nfailed = opal_rpc_corpc_failed(co, &failed);
    CHECK(OPAL_SUCCESS == r.status && good == size,
          "over odd-ones: %s, %u of %u members, %u failed (first: its rank %u)",
          opal_strerror(r.status), good, size, nfailed, 0 == nfailed ? 0 : failed[0]);
    if (OPAL_SUCCESS == r.status && good == size) {
        own_corpc = 1;
        printf("rank 1: corpc over odd-ones: %u of %u members answered\n", good, size);
        fflush(stdout);
    }
    opal_rpc_corpc_free(co);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: rpc_corpc_rank <na info> <tree> <k> <bulk|big|create|serve=F>\n");
        return 2;
    }
    const char *mode = argv[4];
    if (OPAL_SUCCESS != orte_init(&argc, &argv)) {
        return 2;
    }
    me = opal_proc_job_info()->my_name.vpid;
    np = opal_proc_job_info()->size;
    if (np > 64) {
        return 2;
    }
    opal_rpc_group_t *g = NULL, *own = NULL;
    int rc;
    if (OPAL_SUCCESS != (rc = opal_rpc_init(argv[1], true)) ||
        OPAL_SUCCESS != (rc = opal_rpc_proto_register(&proto)) ||
        OPAL_SUCCESS != (rc = opal_rpc_context_create(0, &ctx)) ||
        OPAL_SUCCESS != (rc = opal_rpc_group_primary(&g))) {
        fprintf(stderr, "rank %u: setting up: %s\n", me, opal_strerror(rc));
        return 1;
    }
    for (uint32_t op = 0; op < OP_PLAIN; ++op) {
        rc = opal_rpc_corpc_register(OPAL_RPC_OPCODE(CORPC_TEST_BASE, 1, op), aggregate, NULL);
        CHECK(OPAL_SUCCESS == rc, "corpc register: %s", opal_strerror(rc));
    }
    if (0 == strcmp(mode, "create") && np > 1 && np - 1 == me) {
        uint32_t mine = me;
        rc = opal_rpc_group_create("taken", &mine, 1, &own);
        CHECK(OPAL_SUCCESS == rc, "taken: %s", opal_strerror(rc));
    }
    /* Everyone registered before the root forwards anything. */
    if (OPAL_SUCCESS != (rc = opal_fence(false))) {
        fprintf(stderr, "rank %u: fence: %s\n", me, opal_strerror(rc));
        return 1;
    }
    opal_rpc_corpc_opts_t opts = {.tree = argv[2], .k = (uint32_t) atoi(argv[3])};
    bool serving = 0 == strncmp(mode, "serve=", 6);
    if (serving && 0 == me) {
        const char *file = mode + 6;
        rc = opal_rpc_group_save(g, file);
        CHECK(OPAL_SUCCESS == rc, "saving the group: %s", opal_strerror(rc));
        printf("group saved\n");
        fflush(stdout);
    }
    if (0 == me && !serving) {
        if (0 == strcmp(mode, "bulk")) {
            bulk_phase(g, &opts);
        } else if (0 == strcmp(mode, "create")) {
            create_phase(g);
        } else if (0 == strcmp(mode, "big")) {
            big_phase(g, &opts, 5, CORPC_BLOCK_SMALL);
            big_phase(g, &opts, 6, CORPC_BLOCK_LARGE);
        } else {
            CHECK(false, "unknown mode %s", mode);
        }
        result_t r;
        opal_rpc_corpc_t *co = run(g, OP_CSTOP, &opts, 0, 0, NULL, &r, "stop");
        if (NULL != co) {
            const corpc_out_t *out = opal_rpc_corpc_output(co);
            CHECK(OPAL_SUCCESS == r.status && every_rank_once(out, np), "stop: %s",
                  opal_strerror(r.status));
            /* After the big corpcs, every rank (the root pulling, the
             * others replying) moved its aggregate of blocks above the
             * eager size by bulk at least once. */
            uint32_t by_bulk = 0;
            for (uint32_t i = 0; NULL != out && i < out->ranks.count; ++i) {
                by_bulk += out->values.elems[i] > 0;
            }
            if (0 == strcmp(mode, "big") && np > 1) {
                CHECK(by_bulk == np, "only %u of %u ranks moved an output by bulk", by_bulk, np);
            }
            printf("root: %u ranks moved outputs by bulk\n", by_bulk);
            fflush(stdout);
            opal_rpc_corpc_free(co);
        }
    } else {
        time_t deadline = time(NULL) + 300;
        bool create_mode = 0 == strcmp(mode, "create");
        while (!stop && time(NULL) < deadline) {
            (void) opal_rpc_progress(ctx, 100);
            opal_rpc_group_t *sub = NULL;
            if (create_mode && 1 == me && go && 0 == own_corpc &&
                NULL != (sub = opal_rpc_group_lookup("odd-ones"))) {
                member_corpc(sub);
            }
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
    (void) opal_rpc_group_destroy(own);
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
