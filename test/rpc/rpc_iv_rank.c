/*
 * A rank of an mcarun job for rpc_iv_job_test: incast variables over the
 * primary group, namespace 1 rooted at rank 0.
 *
 *   rpc_iv_rank <na info> <tree> <k> [kill]
 *
 * Every rank creates the namespace and serves; rank 0 runs the script:
 * it tells each rank what to do by a command request (the rank starts
 * the IV operation and answers once its callback ran, with what it got
 * and its counters), and checks each answer. The script: a missing key
 * is not found anywhere; an update from a leaf (sync) is fetched by every
 * rank with its version; fetched again it comes from the cache (nothing
 * sent); a second update and an invalidate: every rank fetches the new
 * value, not its stale copy; a lazy update is seen where it was made at
 * once and at the root eventually; a leaf that knows its parent dead
 * fetches through its grandparent; a namespace a member lacks is refused
 * with a reason. A stop ends the ranks; each prints "rank N ok".
 * With "kill", the last rank's parent dies (SIGKILL) once the job has
 * started, no one being told: the last rank's fetch and update go around
 * it to the root, and an invalidate from the root reaches the last rank
 * around it while saying that one member failed.
 */
#include "opal/opal_config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opal/mca/rpc/base/rpc_base_iv.h"
#include "opal/mca/rpc/rpc.h"
#include "opal/mca/rpc/rpc_group.h"
#include "opal/mca/rpc/rpc_iv.h"
#include "opal/mca/rpc/rpc_tree.h"
#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "orte/runtime/orte_init.h"

static uint32_t me, np;
static volatile bool stop;
static int failures;
static opal_rpc_context_t *ctx;
static opal_rpc_group_t *group;
static opal_rpc_iv_ns_t *ns;

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

#define CMD_BASE 0x35
enum {
    CMD_FETCH,
    CMD_FETCH2, /* two fetches of the key at once */
    CMD_UPDATE,
    CMD_LAZY,
    CMD_INVAL,
    CMD_DEAD,
    CMD_ALIVE,
    CMD_STRAY,
    CMD_BENCH, /* a figure: fetches of bench0..N-1, misses then hits */
    CMD_STOP
};

#define CMD_IN_FIELDS(X)                                                                           \
    X(uint32_t, what, VAR)                                                                         \
    X(uint32_t, rank, VAR)                                                                         \
    X(char *, key, STRING)                                                                         \
    X(char *, value, STRING)
OPAL_RPC_STRUCT(cmd_in, CMD_IN_FIELDS);

/* What the rank got, and its counters once it had it: sent is the rpc
 * requests its context sent during the operation. */
#define CMD_OUT_FIELDS(X)                                                                          \
    X(int32_t, status, VAR)                                                                        \
    X(uint64_t, version, VAR)                                                                      \
    X(uint64_t, len, VAR)                                                                          \
    X(char *, value, STRING)                                                                       \
    X(uint64_t, sent, VAR)                                                                         \
    X(uint64_t, hits, VAR)                                                                         \
    X(uint64_t, served, VAR)                                                                       \
    X(uint64_t, joined, VAR)
OPAL_RPC_STRUCT(cmd_out, CMD_OUT_FIELDS);

typedef struct {
    opal_rpc_request_t *req;
    uint64_t sent_before;
    char value[256];
    /* CMD_FETCH2: the first answer, while the second is out. */
    int twice, first_status;
    char first[256];
} pending_t;

static void answer(pending_t *p, int status, const char *value, size_t len, uint64_t version)
{
    cmd_out_t *out = opal_rpc_req_output(p->req);
    opal_rpc_stats_t st;
    opal_rpc_iv_stats_t iv;
    opal_rpc_context_stats(ctx, &st);
    opal_rpc_iv_stats(ns, &iv);
    snprintf(p->value, sizeof(p->value), "%.*s", NULL == value ? 0 : (int) len,
             NULL == value ? "" : value);
    out->status = status;
    out->version = version;
    out->len = len;
    out->value = p->value;
    out->sent = st.sent - p->sent_before;
    out->hits = iv.hits;
    out->served = iv.served;
    out->joined = iv.joined;
    (void) opal_rpc_reply_send(p->req);
    memset(out, 0, sizeof(*out));
    opal_rpc_req_decref(p->req);
    free(p);
}

static void iv_done(opal_rpc_iv_ns_t *n, int status, const void *value, size_t len,
                    uint64_t version, void *arg)
{
    (void) n;
    answer(arg, status, value, len, version);
}

/* Both fetches of CMD_FETCH2 answered: the same value, or an error. */
static void twice_done(opal_rpc_iv_ns_t *n, int status, const void *value, size_t len,
                       uint64_t version, void *arg)
{
    (void) n;
    pending_t *p = arg;
    if (0 == p->twice++) {
        p->first_status = status;
        snprintf(p->first, sizeof(p->first), "%.*s", NULL == value ? 0 : (int) len,
                 NULL == value ? "" : (const char *) value);
        return;
    }
    char second[256];
    snprintf(second, sizeof(second), "%.*s", NULL == value ? 0 : (int) len,
             NULL == value ? "" : (const char *) value);
    if (OPAL_SUCCESS == status &&
        (OPAL_SUCCESS != p->first_status || 0 != strcmp(p->first, second))) {
        status = OPAL_ERR_BAD_PARAM;
    }
    answer(p, status, value, len, version);
}

static void stray_done(opal_rpc_request_t *req, int status, void *arg)
{
    const char *why = opal_rpc_req_error_reason(req);
    answer(arg, status, why, NULL == why ? 0 : strlen(why), 0);
}

/* CMD_BENCH: fetches keys bench0..n-1 one after another, twice (the
 * first round misses here, the second hits), and answers the mean time
 * of each round in microseconds as its value. */
typedef struct {
    pending_t *p;
    uint32_t n, i;
    int status;
    struct timespec t0;
    double us[2];
} bench_t;

static double since_us(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double) (t1.tv_sec - t0->tv_sec) * 1e6 + (double) (t1.tv_nsec - t0->tv_nsec) / 1e3;
}

static void bench_next(opal_rpc_iv_ns_t *n, int status, const void *value, size_t len,
                       uint64_t version, void *arg)
{
    (void) value;
    (void) len;
    (void) version;
    bench_t *b = arg;
    char key[32];
    if (OPAL_SUCCESS != status && OPAL_SUCCESS == b->status) {
        b->status = status;
    }
    if (b->i > 0 && 0 == b->i % b->n) {
        b->us[b->i / b->n - 1] = since_us(&b->t0) / b->n;
        clock_gettime(CLOCK_MONOTONIC, &b->t0);
    }
    if (b->i == 2 * b->n || OPAL_SUCCESS != b->status) {
        char text[96];
        snprintf(text, sizeof(text), "%.1f %.1f", b->us[0], b->us[1]);
        answer(b->p, b->status, text, strlen(text), 0);
        free(b);
        return;
    }
    snprintf(key, sizeof(key), "bench%u", b->i++ % b->n);
    int rc = opal_rpc_iv_fetch(n, key, strlen(key), bench_next, b);
    if (OPAL_SUCCESS != rc) {
        answer(b->p, rc, NULL, 0, 0);
        free(b);
    }
}

/* A fetch of namespace 99 (which no rank has) sent to rank 0. */
static int stray(pending_t *p)
{
    opal_rpc_endpoint_t ep;
    opal_rpc_request_t *req = NULL;
    int rc = opal_rpc_group_endpoint(group, 0, 0, &ep);
    if (OPAL_SUCCESS == rc) {
        rc = opal_rpc_req_create(ctx, &ep, OPAL_RPC_IV_OPCODE(IV_OP_FETCH), &req);
    }
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rpc_iv_in_t *in = opal_rpc_req_input(req);
    in->group = OPAL_RPC_GROUP_PRIMARY;
    in->ns_id = 99;
    in->key.buf = "key";
    in->key.len = 3;
    return opal_rpc_req_send(req, stray_done, p);
}

/* Inline: the IV calls belong to the thread that progresses ctx. */
static void cmd_handler(opal_rpc_request_t *req)
{
    const cmd_in_t *in = opal_rpc_req_input(req);
    pending_t *p = calloc(1, sizeof(*p));
    opal_rpc_stats_t st;
    opal_rpc_context_stats(ctx, &st);
    opal_rpc_req_addref(req);
    p->req = req;
    p->sent_before = st.sent;
    size_t keylen = NULL == in->key ? 0 : strlen(in->key);
    size_t len = NULL == in->value ? 0 : strlen(in->value);
    int rc = OPAL_SUCCESS;
    switch (in->what) {
        case CMD_FETCH:
            rc = opal_rpc_iv_fetch(ns, in->key, keylen, iv_done, p);
            break;
        case CMD_FETCH2:
            rc = opal_rpc_iv_fetch(ns, in->key, keylen, twice_done, p);
            if (OPAL_SUCCESS == rc) {
                rc = opal_rpc_iv_fetch(ns, in->key, keylen, twice_done, p);
            }
            break;
        case CMD_UPDATE:
        case CMD_LAZY:
            rc = opal_rpc_iv_update(ns, in->key, keylen, in->value, len,
                                    CMD_LAZY == in->what ? OPAL_RPC_IV_LAZY : OPAL_RPC_IV_SYNC,
                                    iv_done, p);
            break;
        case CMD_INVAL:
            rc = opal_rpc_iv_invalidate(ns, in->key, keylen, iv_done, p);
            break;
        case CMD_DEAD:
        case CMD_ALIVE:
            rc = opal_rpc_group_member_set_state(group, in->rank,
                                                 CMD_DEAD == in->what ? OPAL_RPC_MEMBER_DEAD
                                                                      : OPAL_RPC_MEMBER_ALIVE);
            answer(p, rc, NULL, 0, 0);
            return;
        case CMD_STRAY:
            rc = stray(p);
            break;
        case CMD_BENCH: {
            bench_t *b = calloc(1, sizeof(*b));
            if (NULL == b || 0 == in->rank) {
                free(b);
                rc = OPAL_ERR_BAD_PARAM;
                break;
            }
            b->p = p;
            b->n = in->rank;
            clock_gettime(CLOCK_MONOTONIC, &b->t0);
            bench_next(ns, OPAL_SUCCESS, NULL, 0, 0, b);
            return;
        }
        default:
            stop = true;
            answer(p, OPAL_SUCCESS, NULL, 0, 0);
            return;
    }
    if (OPAL_SUCCESS != rc) {
        answer(p, rc, NULL, 0, 0);
    }
}

static const opal_rpc_op_t cmd_ops[] = {
    {.handler = cmd_handler,
     .in = &cmd_in_codec,
     .out = &cmd_out_codec,
     .flags = OPAL_RPC_OP_INLINE},
};
static const opal_rpc_proto_t cmd_proto = {
    .name = "iv-test", .base = CMD_BASE, .version = 1, .count = 1, .ops = cmd_ops};

/* ------------------------------------------------------ the root's script */

typedef struct {
    bool done;
    int status;
    int64_t rstatus;
    uint64_t version, len, sent, hits, served, joined;
    char value[256];
} result_t;

static void cmd_done(opal_rpc_request_t *req, int status, void *arg)
{
    result_t *r = arg;
    const cmd_out_t *out = opal_rpc_req_output(req);
    r->status = status;
    if (OPAL_SUCCESS == status) {
        r->rstatus = out->status;
        r->version = out->version;
        r->len = out->len;
        r->sent = out->sent;
        r->hits = out->hits;
        r->served = out->served;
        r->joined = out->joined;
        snprintf(r->value, sizeof(r->value), "%s", NULL == out->value ? "" : out->value);
    }
    r->done = true;
}

static bool is_done(void *arg)
{
    return ((result_t *) arg)->done;
}

/* Has rank do what; its answer in *r (rank 0 runs it through itself too). */
static void cmd(uint32_t rank, uint32_t what, uint32_t arg_rank, const char *key, const char *value,
                result_t *r)
{
    opal_rpc_endpoint_t ep;
    opal_rpc_request_t *req = NULL;
    memset(r, 0, sizeof(*r));
    r->rstatus = OPAL_ERROR;
    int rc = opal_rpc_group_endpoint(group, rank, 0, &ep);
    if (OPAL_SUCCESS == rc) {
        rc = opal_rpc_req_create(ctx, &ep, OPAL_RPC_OPCODE(CMD_BASE, 1, 0), &req);
    }
    if (OPAL_SUCCESS == rc) {
        cmd_in_t *in = opal_rpc_req_input(req);
        in->what = what;
        in->rank = arg_rank;
        in->key = (char *) key;
        in->value = (char *) value;
        rc = opal_rpc_req_send(req, cmd_done, r);
    }
    CHECK(OPAL_SUCCESS == rc, "command %u to rank %u: %s", what, rank, opal_strerror(rc));
    if (OPAL_SUCCESS == rc) {
        rc = opal_rpc_progress_cond(ctx, 120000, is_done, r);
        CHECK(OPAL_SUCCESS == rc && OPAL_SUCCESS == r->status, "command %u to rank %u: %s", what,
              rank, opal_strerror(OPAL_SUCCESS == rc ? r->status : rc));
    }
}

static void fetch_everywhere(const char *key, const char *value, uint64_t version, const char *what)
{
    for (uint32_t r = 0; r < np; ++r) {
        result_t res;
        cmd(r, CMD_FETCH, 0, key, NULL, &res);
        CHECK(OPAL_SUCCESS == res.rstatus && 0 == strcmp(res.value, value) &&
                  res.version == version,
              "%s: rank %u fetched '%s' version %llu (%s), expected '%s' version %llu", what, r,
              res.value, (unsigned long long) res.version, opal_strerror((int) res.rstatus), value,
              (unsigned long long) version);
    }
    printf("root: %s: every rank fetched '%s' version %llu\n", what, value,
           (unsigned long long) version);
    fflush(stdout);
}

/* The kill case: victim (the last rank's parent) is gone. */
static void script_kill(uint32_t victim)
{
    result_t r;
    uint32_t leaf = np - 1;
    cmd(0, CMD_UPDATE, 0, "k", "before", &r);
    CHECK(OPAL_SUCCESS == r.rstatus && 1 == r.version, "update at the root: %s",
          opal_strerror((int) r.rstatus));
    cmd(leaf, CMD_FETCH, 0, "k", NULL, &r);
    CHECK(OPAL_SUCCESS == r.rstatus && 0 == strcmp(r.value, "before") && 1 == r.version,
          "the leaf fetched '%s' version %llu around its dead parent: %s", r.value,
          (unsigned long long) r.version, opal_strerror((int) r.rstatus));
    cmd(leaf, CMD_UPDATE, 0, "k", "leaf", &r);
    CHECK(OPAL_SUCCESS == r.rstatus && 2 == r.version,
          "the leaf's update around its dead parent: %s, version %llu",
          opal_strerror((int) r.rstatus), (unsigned long long) r.version);
    cmd(0, CMD_UPDATE, 0, "k", "root", &r);
    cmd(0, CMD_INVAL, 0, "k", NULL, &r);
    CHECK(OPAL_SUCCESS != r.rstatus && np - 1 == r.len,
          "invalidate with rank %u dead: %s, %llu members", victim, opal_strerror((int) r.rstatus),
          (unsigned long long) r.len);
    /* The leaf dropped its copy ("leaf", version 2): it reads the root's. */
    cmd(leaf, CMD_FETCH, 0, "k", NULL, &r);
    CHECK(OPAL_SUCCESS == r.rstatus && 0 == strcmp(r.value, "root") && 3 == r.version,
          "the leaf fetched '%s' version %llu after the invalidate", r.value,
          (unsigned long long) r.version);
    printf("root: rank %u went around dead rank %u\n", leaf, victim);
    printf("root: script done\n");
    fflush(stdout);
    for (uint32_t i = 1; i < np; ++i) {
        if (i != victim) {
            cmd(i, CMD_STOP, 0, NULL, NULL, &r);
        }
    }
}

/* A figure, not a check (RPC_IV_BENCH=N keys; the tests leave it out):
 * the last rank fetches N keys the root stored, missing all the way up,
 * then again from its cache. */
static void bench(void)
{
    const char *env = getenv("RPC_IV_BENCH");
    int n = NULL == env ? 0 : atoi(env);
    result_t r;
    if (n <= 0) {
        return;
    }
    for (int i = 0; i < n; ++i) {
        char key[32];
        snprintf(key, sizeof(key), "bench%d", i);
        cmd(0, CMD_UPDATE, 0, key, "a value of 24 bytes here", &r);
    }
    cmd(np - 1, CMD_BENCH, (uint32_t) n, NULL, NULL, &r);
    CHECK(OPAL_SUCCESS == r.rstatus, "bench: %s", opal_strerror((int) r.rstatus));
    printf("root: rank %u fetched %d keys: %s us each (misses up the tree, hits)\n", np - 1, n,
           r.value);
}

static void script(const char *tree, uint32_t k)
{
    result_t r;
    uint32_t leaf = np - 1;
    for (uint32_t i = 0; i < np; ++i) {
        cmd(i, CMD_FETCH, 0, "absent", NULL, &r);
        CHECK(OPAL_ERR_NOT_FOUND == r.rstatus, "rank %u: a missing key: %s", i,
              opal_strerror((int) r.rstatus));
    }
    printf("root: a missing key is not found at any rank\n");

    cmd(leaf, CMD_UPDATE, 0, "k", "first", &r);
    CHECK(OPAL_SUCCESS == r.rstatus && 1 == r.version, "update from the leaf: %s, version %llu",
          opal_strerror((int) r.rstatus), (unsigned long long) r.version);
    fetch_everywhere("k", "first", 1, "after a sync update from the leaf");

    /* Cached now: answered where it is asked, nothing sent. */
    for (uint32_t i = 0; i < np; ++i) {
        result_t before;
        cmd(i, CMD_FETCH, 0, "k", NULL, &before);
        cmd(i, CMD_FETCH, 0, "k", NULL, &r);
        CHECK(OPAL_SUCCESS == r.rstatus && 0 == strcmp(r.value, "first") && 0 == r.sent &&
                  r.hits == before.hits + 1,
              "rank %u: a cached fetch sent %llu requests, hits %llu -> %llu", i,
              (unsigned long long) r.sent, (unsigned long long) before.hits,
              (unsigned long long) r.hits);
    }
    printf("root: cached fetches sent nothing\n");

    cmd(1 % np, CMD_UPDATE, 0, "k", "second", &r);
    CHECK(OPAL_SUCCESS == r.rstatus && 2 == r.version, "second update: %s, version %llu",
          opal_strerror((int) r.rstatus), (unsigned long long) r.version);
    /* A rank off the update's path (1 -> 0) still has its copy. */
    if (np > 2) {
        cmd(2, CMD_FETCH, 0, "k", NULL, &r);
        CHECK(OPAL_SUCCESS == r.rstatus && 0 == strcmp(r.value, "first") && 1 == r.version,
              "rank 2 before the invalidate: '%s' version %llu", r.value,
              (unsigned long long) r.version);
    }
    cmd(leaf, CMD_INVAL, 0, "k", NULL, &r);
    CHECK(OPAL_SUCCESS == r.rstatus && np == r.len, "invalidate from the leaf: %s, %llu members",
          opal_strerror((int) r.rstatus), (unsigned long long) r.len);
    fetch_everywhere("k", "second", 2, "after a second update and an invalidate");

    /* Two fetches of a key the leaf lacks, at once: one request goes up,
     * the other waits for its answer. */
    cmd(0, CMD_UPDATE, 0, "twice", "both", &r);
    cmd(leaf, CMD_FETCH2, 0, "twice", NULL, &r);
    if (0 != leaf) {
        CHECK(OPAL_SUCCESS == r.rstatus && 0 == strcmp(r.value, "both") && 1 == r.sent &&
                  1 == r.joined,
              "two fetches at once at the leaf: %s, '%s', %llu requests sent, %llu joined",
              opal_strerror((int) r.rstatus), r.value, (unsigned long long) r.sent,
              (unsigned long long) r.joined);
        printf("root: two fetches at once sent one request\n");
    }

    /* Lazy: here at once (no version yet), at the root eventually (the
     * root itself stores it at once: its version is known). */
    uint32_t lazy_rank = np > 2 ? 2 : leaf;
    cmd(lazy_rank, CMD_LAZY, 0, "k", "third", &r);
    CHECK(OPAL_SUCCESS == r.rstatus && (0 == lazy_rank ? 3 : 0) == r.version,
          "lazy update: %s, version %llu", opal_strerror((int) r.rstatus),
          (unsigned long long) r.version);
    cmd(lazy_rank, CMD_FETCH, 0, "k", NULL, &r);
    CHECK(OPAL_SUCCESS == r.rstatus && 0 == strcmp(r.value, "third"),
          "the lazy updater fetched '%s'", r.value);
    time_t deadline = time(NULL) + 60;
    do {
        cmd(0, CMD_FETCH, 0, "k", NULL, &r);
    } while ((OPAL_SUCCESS != r.rstatus || 0 != strcmp(r.value, "third")) && time(NULL) < deadline);
    CHECK(0 == strcmp(r.value, "third") && 3 == r.version,
          "the root has '%s' version %llu after a lazy update", r.value,
          (unsigned long long) r.version);
    cmd(0, CMD_INVAL, 0, "k", NULL, &r);
    CHECK(OPAL_SUCCESS == r.rstatus && np == r.len, "invalidate from the root: %s, %llu members",
          opal_strerror((int) r.rstatus), (unsigned long long) r.len);
    fetch_everywhere("k", "third", 3, "after a lazy update");

    /* A leaf that knows its parent dead asks its grandparent. */
    const opal_rpc_tree_ops_t *t = opal_rpc_tree_lookup(tree);
    uint32_t parent = NULL == t ? 0 : t->parent(leaf, np, k);
    if (OPAL_RPC_TREE_NONE != parent && 0 != parent) {
        result_t before, after;
        cmd(0, CMD_UPDATE, 0, "detour", "around", &r);
        CHECK(OPAL_SUCCESS == r.rstatus, "update at the root: %s", opal_strerror((int) r.rstatus));
        cmd(parent, CMD_FETCH, 0, "absent", NULL, &before);
        cmd(leaf, CMD_DEAD, parent, NULL, NULL, &r);
        cmd(leaf, CMD_FETCH, 0, "detour", NULL, &r);
        CHECK(OPAL_SUCCESS == r.rstatus && 0 == strcmp(r.value, "around"),
              "the leaf fetched '%s' with its parent %u dead: %s", r.value, parent,
              opal_strerror((int) r.rstatus));
        cmd(parent, CMD_FETCH, 0, "absent", NULL, &after);
        /* Its own fetch is not a served request: the leaf's went past it. */
        CHECK(after.served == before.served, "rank %u served %llu requests meanwhile", parent,
              (unsigned long long) (after.served - before.served));
        cmd(leaf, CMD_ALIVE, parent, NULL, NULL, &r);
        printf("root: rank %u fetched through rank %u's parent while %u was dead\n", leaf, parent,
               parent);
    }

    cmd(1 % np, CMD_STRAY, 0, NULL, NULL, &r);
    CHECK(np == 1 || (OPAL_ERR_NOT_FOUND == r.rstatus &&
                      NULL != strstr(r.value, "no namespace 99 over group 'primary'")),
          "a request for a namespace no one has: %s: %s", opal_strerror((int) r.rstatus), r.value);
    bench();
    printf("root: script done\n");
    fflush(stdout);
    for (uint32_t i = 1; i < np; ++i) {
        cmd(i, CMD_STOP, 0, NULL, NULL, &r);
    }
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: rpc_iv_rank <na info> <tree> <k> [kill]\n");
        return 2;
    }
    if (OPAL_SUCCESS != orte_init(&argc, &argv)) {
        return 2;
    }
    me = opal_proc_job_info()->my_name.vpid;
    np = opal_proc_job_info()->size;
    uint32_t k = (uint32_t) atoi(argv[3]);
    bool kill = argc > 4 && 0 == strcmp(argv[4], "kill");
    /* A dead member is only found by its silence: a short wait. */
    opal_rpc_iv_opts_t opts = {.tree = argv[2], .k = k, .timeout = kill ? 5 : 0};
    int rc;
    if (OPAL_SUCCESS != (rc = opal_rpc_init(argv[1], true)) ||
        OPAL_SUCCESS != (rc = opal_rpc_proto_register(&cmd_proto)) ||
        OPAL_SUCCESS != (rc = opal_rpc_context_create(0, &ctx)) ||
        OPAL_SUCCESS != (rc = opal_rpc_group_primary(&group)) ||
        OPAL_SUCCESS != (rc = opal_rpc_iv_ns_create(ctx, group, 1, 0, &opts, NULL, &ns))) {
        fprintf(stderr, "rank %u: setting up: %s\n", me, opal_strerror(rc));
        return 1;
    }
    /* Everyone has the namespace before anything is asked of it. */
    if (OPAL_SUCCESS != (rc = opal_fence(false))) {
        fprintf(stderr, "rank %u: fence: %s\n", me, opal_strerror(rc));
        return 1;
    }
    uint32_t victim = UINT32_MAX;
    if (kill) {
        const opal_rpc_tree_ops_t *t = opal_rpc_tree_lookup(argv[2]);
        victim = NULL == t || np < 3 ? 0 : t->parent(np - 1, np, k);
        if (0 == victim) {
            fprintf(stderr, "rank %u: the kill case needs a last rank whose parent is not 0\n", me);
            return 1;
        }
        if (me == victim) {
            raise(SIGKILL);
        }
    }
    if (0 == me) {
        if (kill) {
            script_kill(victim);
        } else {
            script(argv[2], k);
        }
    } else {
        time_t deadline = time(NULL) + 300;
        while (!stop && time(NULL) < deadline) {
            (void) opal_rpc_progress(ctx, 100);
        }
        CHECK(stop, "no stop in 300 s");
    }
    /* Replies this rank sent must leave before it does. */
    time_t deadline = time(NULL) + 30;
    while (OPAL_ERR_RESOURCE_BUSY == (rc = opal_rpc_iv_ns_destroy(ns)) && time(NULL) < deadline) {
        (void) opal_rpc_progress(ctx, 100);
    }
    CHECK(OPAL_SUCCESS == rc, "namespace destroy: %s", opal_strerror(rc));
    (void) opal_fence(false);
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
