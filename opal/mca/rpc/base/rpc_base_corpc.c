/*
 * Collective RPC (CaRT's corpc). A corpc is a node at each member: the
 * node forwards the request to its children in the tree (one "forward"
 * request each, rpc_base_corpc.h), runs the user's handler on this member
 * (a loopback request of the user's opcode, so the handler runs as any
 * other, through the context's scheduler), merges each child's aggregate
 * into its own with the opcode's aggregation callback, and once all of
 * them completed replies to its parent (or, at the root, completes the
 * user's corpc). A child that fails, times out or refuses has its whole
 * subtree reported failed; dead members are left out by the root and
 * reported failed too.
 *
 * The tree is built over the participants (the group's ranks minus the
 * ones the root leaves out) in rank order, rotated so that the root is 0:
 * every member computes the same tree from the forward's input.
 *
 * A node lives in its context: its callbacks all run from that context's
 * progress, so it needs no lock.
 */
#include "opal/opal_config.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/rpc/base/rpc_base_corpc.h"
#include "opal/mca/rpc/base/rpc_base_group.h"
#include "opal/mca/rpc/base/rpc_base_internal.h"
#include "opal/mca/rpc/rpc_tree.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

typedef struct corpc_agg_t {
    uint32_t opcode;
    opal_rpc_corpc_aggregate_t aggregate;
    void *arg;
} corpc_agg_t;

static opal_mutex_t agg_lock;
/* Nodes not finished at this process (opal_rpc_corpc_inflight): a
 * member's node finishes once it replied to its parent. */
static _Atomic uint32_t live_nodes;
static corpc_agg_t *aggs;
static size_t agg_count;

typedef struct corpc_node_t corpc_node_t;

typedef struct corpc_child_t {
    corpc_node_t *node;
    uint32_t rel; /* the child's rank in the tree */
} corpc_child_t;

struct corpc_node_t {
    opal_rpc_context_t *ctx;
    opal_rpc_group_t *group;
    const opal_rpc_op_t *op;
    corpc_agg_t agg;
    const rpc_corpc_in_t *in;   /* the root's, or the parent's request's */
    opal_rpc_request_t *parent; /* NULL at the root */
    opal_rpc_corpc_t *co;       /* the root's corpc */
    const opal_rpc_tree_ops_t *tree;
    uint32_t *members; /* participants (group ranks, ascending) */
    uint32_t m, me, root_idx;
    corpc_child_t *children;
    rpc_corpc_in_t child_in; /* what each child is sent */
    uint32_t pending;
    void *acc; /* the aggregate so far (a decoded output struct) */
    uint32_t *failed;
    uint32_t nfailed, failed_cap;
    /* The root of a corpc a process outside the tree asked for (its
     * request is the parent): the input with the members known dead
     * here left out too. */
    rpc_corpc_in_t relay_in;
};

struct opal_rpc_corpc_t {
    opal_rpc_context_t *ctx;
    opal_rpc_group_t *group;
    const opal_rpc_op_t *op;
    bool remote; /* rooted at another process (opal_rpc_corpc_create_at) */
    rpc_corpc_in_t in;
    void *input;
    void *output;
    uint32_t *failed;
    uint32_t nfailed;
    opal_rpc_corpc_cb_t cb;
    void *arg;
    bool sent;
};

/* ------------------------------------------------------ registration */

static bool agg_find(uint32_t opcode, corpc_agg_t *out)
{
    bool found = false;
    opal_mutex_lock(&agg_lock);
    for (size_t i = 0; i < agg_count; ++i) {
        if (aggs[i].opcode == opcode) {
            *out = aggs[i];
            found = true;
            break;
        }
    }
    opal_mutex_unlock(&agg_lock);
    return found;
}

int opal_rpc_corpc_register(uint32_t opcode, opal_rpc_corpc_aggregate_t aggregate, void *arg)
{
    const opal_rpc_op_t *op = NULL;
    char why[160];
    if (0 == opal_rpc_engine.refcount) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    if (NULL == aggregate) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (OPAL_RPC_CORPC_BASE == OPAL_RPC_OPCODE_BASE(opcode)) {
        /* corpc's own operations keep their aggregation. */
        opal_output(0, "rpc: corpc register: opcode 0x%08x is the engine's own", opcode);
        return OPAL_ERR_BAD_PARAM;
    }
    if (OPAL_SUCCESS != opal_rpc_base_proto_lookup(opcode, &op, why, sizeof(why))) {
        opal_output(0, "rpc: corpc register: %s", why);
        return OPAL_ERR_NOT_FOUND;
    }
    if (NULL == op->out || 0 != (op->flags & OPAL_RPC_OP_ONEWAY)) {
        opal_output(0, "rpc: corpc register: opcode 0x%08x has no output to aggregate", opcode);
        return OPAL_ERR_BAD_PARAM;
    }
    opal_mutex_lock(&agg_lock);
    for (size_t i = 0; i < agg_count; ++i) {
        if (aggs[i].opcode == opcode) {
            aggs[i].aggregate = aggregate;
            aggs[i].arg = arg;
            opal_mutex_unlock(&agg_lock);
            return OPAL_SUCCESS;
        }
    }
    corpc_agg_t *grown = realloc(aggs, (agg_count + 1) * sizeof(*aggs));
    if (NULL == grown) {
        opal_mutex_unlock(&agg_lock);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    aggs = grown;
    aggs[agg_count++] = (corpc_agg_t){.opcode = opcode, .aggregate = aggregate, .arg = arg};
    opal_mutex_unlock(&agg_lock);
    return OPAL_SUCCESS;
}

/* ------------------------------------------------------------- nodes */

static int add_failed(corpc_node_t *n, uint32_t rank)
{
    if (n->nfailed == n->failed_cap) {
        uint32_t cap = 0 == n->failed_cap ? 8 : 2 * n->failed_cap;
        uint32_t *grown = realloc(n->failed, cap * sizeof(uint32_t));
        if (NULL == grown) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        n->failed = grown;
        n->failed_cap = cap;
    }
    n->failed[n->nfailed++] = rank;
    return OPAL_SUCCESS;
}

/* Every participant of rel's subtree is failed (depth first, bounded by
 * the participants' count). */
static void fail_subtree(corpc_node_t *n, uint32_t rel)
{
    uint32_t *stack = malloc(n->m * sizeof(uint32_t));
    uint32_t *kids = malloc(n->m * sizeof(uint32_t));
    if (NULL == stack || NULL == kids) {
        (void) add_failed(n, n->members[(rel + n->root_idx) % n->m]);
        free(stack);
        free(kids);
        return;
    }
    uint32_t top = 0;
    stack[top++] = rel;
    while (top > 0) {
        uint32_t r = stack[--top];
        (void) add_failed(n, n->members[(r + n->root_idx) % n->m]);
        uint32_t count = n->tree->nchildren(r, n->m, n->in->k);
        n->tree->children(r, n->m, n->in->k, kids);
        for (uint32_t i = 0; i < count && top < n->m; ++i) {
            stack[top++] = kids[i];
        }
    }
    free(stack);
    free(kids);
}

/* How many levels lie below rel in the tree (depth first over its
 * subtree; 0 when memory is short, which only shortens the timeouts). */
static uint32_t subtree_height(const corpc_node_t *n, uint32_t rel)
{
    uint32_t *stack = malloc(2 * n->m * sizeof(uint32_t));
    uint32_t *kids = malloc(n->m * sizeof(uint32_t));
    uint32_t height = 0, top = 0;
    if (NULL != stack && NULL != kids) {
        stack[top++] = rel;
        stack[top++] = 0;
        while (top > 0) {
            uint32_t depth = stack[--top];
            uint32_t r = stack[--top];
            height = depth > height ? depth : height;
            uint32_t count = n->tree->nchildren(r, n->m, n->in->k);
            n->tree->children(r, n->m, n->in->k, kids);
            for (uint32_t i = 0; i < count && top + 2 <= 2 * n->m; ++i) {
                stack[top++] = kids[i];
                stack[top++] = depth + 1;
            }
        }
    }
    free(stack);
    free(kids);
    return height;
}

/* Merges a decoded output (taken over) into the node's aggregate. */
static void merge(corpc_node_t *n, void *out, uint32_t rel)
{
    if (NULL == n->acc) {
        n->acc = out;
        return;
    }
    int rc = n->agg.aggregate(n->acc, out, n->agg.arg);
    n->op->out->free(out);
    free(out);
    if (rc < 0) {
        opal_output_verbose(1, opal_rpc_base_output,
                            "rpc: corpc of opcode 0x%08x: the aggregation refused the output of "
                            "tree rank %u (%s)",
                            n->in->opcode, rel, opal_strerror(rc));
        fail_subtree(n, rel);
    }
}

/* Decodes bytes of the user's output into a new struct. */
static void *decode_output(const corpc_node_t *n, const void *buf, size_t len)
{
    void *s = calloc(1, n->op->out->struct_size);
    if (NULL == s) {
        return NULL;
    }
    if (OPAL_SUCCESS != opal_rpc_codec_decode(n->op->out, buf, len, s)) {
        free(s);
        return NULL;
    }
    return s;
}

/* Encodes s with codec into a malloc'd buffer. */
static int encode(const opal_rpc_codec_t *codec, const void *s, opal_rpc_iov_t *iov)
{
    size_t len = codec->size(s);
    iov->buf = NULL;
    iov->len = 0;
    if (len > UINT32_MAX) {
        return OPAL_ERR_VALUE_OUT_OF_BOUNDS;
    }
    if (0 == len) {
        return OPAL_SUCCESS;
    }
    iov->buf = malloc(len);
    if (NULL == iov->buf) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    opal_cursor_t c;
    opal_cursor_init_write(&c, iov->buf, len);
    codec->encode(&c, s);
    if (!opal_cursor_ok(&c)) {
        free(iov->buf);
        iov->buf = NULL;
        return OPAL_ERR_VALUE_OUT_OF_BOUNDS;
    }
    iov->len = (uint32_t) len;
    return OPAL_SUCCESS;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
    return x < y ? -1 : x > y;
}

static void node_free(corpc_node_t *n)
{
    if (NULL != n->acc) {
        n->op->out->free(n->acc);
        free(n->acc);
    }
    free(n->failed);
    free(n->members);
    free(n->children);
    free(n->relay_in.excluded.elems);
    free(n);
}

/* Every part completed: reply to the parent, or complete the root. */
static void node_finish(corpc_node_t *n)
{
    /* Sorted, without repeats (a subtree may be reported twice: by the
     * child itself and when its reply could not be read). */
    if (n->nfailed > 1) {
        qsort(n->failed, n->nfailed, sizeof(uint32_t), cmp_u32);
    }
    uint32_t unique = 0;
    for (uint32_t i = 0; i < n->nfailed; ++i) {
        if (0 == unique || n->failed[unique - 1] != n->failed[i]) {
            n->failed[unique++] = n->failed[i];
        }
    }
    n->nfailed = unique;
    /* Pairs with the load in opal_rpc_corpc_inflight (another thread may
     * wait for it before tearing the context down). */
    atomic_fetch_sub_explicit(&live_nodes, 1, memory_order_release);
    if (NULL == n->parent) {
        opal_rpc_corpc_t *co = n->co;
        co->output = n->acc;
        co->failed = n->failed;
        co->nfailed = n->nfailed;
        n->acc = NULL;
        n->failed = NULL;
        node_free(n);
        co->cb(co, 0 == co->nfailed ? OPAL_SUCCESS : OPAL_ERR_PEER_FAILED, co->arg);
        return;
    }
    rpc_corpc_out_t *out = opal_rpc_req_output(n->parent);
    out->failed.count = n->nfailed;
    out->failed.elems = n->failed;
    out->has_output = NULL != n->acc;
    int rc = NULL == n->acc ? OPAL_SUCCESS : encode(n->op->out, n->acc, &out->output);
    if (OPAL_SUCCESS == rc) {
        rc = opal_rpc_reply_send(n->parent);
    } else {
        (void) opal_rpc_reply_error(n->parent, rc, "corpc: the aggregate could not be encoded");
    }
    if (OPAL_SUCCESS != rc) {
        opal_output_verbose(1, opal_rpc_base_output, "rpc: corpc reply to the parent: %s",
                            opal_strerror(rc));
    }
    free(out->output.buf);
    memset(out, 0, sizeof(*out));
    opal_rpc_req_decref(n->parent);
    node_free(n);
}

static void node_done_one(corpc_node_t *n)
{
    if (0 == --n->pending) {
        node_finish(n);
    }
}

static void child_done(opal_rpc_request_t *req, int status, void *arg)
{
    corpc_child_t *child = arg;
    corpc_node_t *n = child->node;
    uint32_t rank = n->members[(child->rel + n->root_idx) % n->m];
    const rpc_corpc_out_t *out = opal_rpc_req_output(req);
    if (OPAL_SUCCESS != status) {
        opal_output_verbose(
            1, opal_rpc_base_output,
            "rpc: corpc over group '%s': rank %u and its subtree failed: %s%s%s", n->group->name,
            rank, opal_strerror(status), NULL == opal_rpc_req_error_reason(req) ? "" : ": ",
            NULL == opal_rpc_req_error_reason(req) ? "" : opal_rpc_req_error_reason(req));
        fail_subtree(n, child->rel);
    } else {
        bool bad = false;
        for (uint32_t i = 0; i < out->failed.count; ++i) {
            if (out->failed.elems[i] >= n->group->size) {
                bad = true;
            }
        }
        /* A subtree without an aggregate must say who failed in it. */
        bad |= !out->has_output && 0 == out->failed.count;
        void *agg = NULL;
        if (!bad && out->has_output &&
            NULL == (agg = decode_output(n, out->output.buf, out->output.len))) {
            bad = true;
        }
        if (bad) {
            opal_output(0, "rpc: corpc over group '%s': rank %u replied a malformed aggregate",
                        n->group->name, rank);
            fail_subtree(n, child->rel);
        } else {
            for (uint32_t i = 0; i < out->failed.count; ++i) {
                (void) add_failed(n, out->failed.elems[i]);
            }
            if (NULL != agg) {
                merge(n, agg, child->rel);
            }
        }
    }
    node_done_one(n);
}

static void local_done(opal_rpc_request_t *req, int status, void *arg)
{
    corpc_node_t *n = arg;
    if (NULL != n->op->in) {
        n->op->in->free(opal_rpc_req_input(req));
    }
    opal_rpc_iov_t bytes = {NULL, 0};
    void *copy = NULL;
    /* The request's output goes with the request: a copy through the
     * codec is what the aggregate keeps. */
    if (OPAL_SUCCESS == status &&
        OPAL_SUCCESS == (status = encode(n->op->out, opal_rpc_req_output(req), &bytes))) {
        copy = decode_output(n, bytes.buf, bytes.len);
        status = NULL == copy ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;
    }
    free(bytes.buf);
    if (OPAL_SUCCESS == status) {
        merge(n, copy, (n->me + n->m - n->root_idx) % n->m);
    } else {
        opal_output_verbose(1, opal_rpc_base_output,
                            "rpc: corpc over group '%s': the handler at rank %u: %s",
                            n->group->name, n->members[n->me], opal_strerror(status));
        (void) add_failed(n, n->members[n->me]);
    }
    node_done_one(n);
}

/* Runs the user's handler here through a loopback request. */
static int run_local(corpc_node_t *n)
{
    opal_rpc_endpoint_t self = {.addr = NULL, .ctx_idx = opal_rpc_context_idx(n->ctx)};
    opal_rpc_request_t *req = NULL;
    int rc = opal_rpc_req_create(n->ctx, &self, n->in->opcode, &req);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if (NULL != n->op->in) {
        /* BULK fields with the engine's class: a handle the root bound
         * reaches every member with the root's address in it. */
        rc = opal_rpc_codec_decode_with(n->op->in, opal_rpc_engine.bulk, n->in->input.buf,
                                        n->in->input.len, opal_rpc_req_input(req));
        if (OPAL_SUCCESS != rc) {
            opal_output(0, "rpc: corpc over group '%s': the input of opcode 0x%08x is malformed",
                        n->group->name, n->in->opcode);
            opal_rpc_req_decref(req);
            return rc;
        }
    }
    (void) opal_rpc_req_set_timeout(req, n->in->budget);
    /* A failed send consumes the request: a reference of ours keeps its
     * input (whose decoded memory is ours to free) until then. */
    opal_rpc_req_addref(req);
    rc = opal_rpc_req_send(req, local_done, n);
    if (OPAL_SUCCESS != rc && NULL != n->op->in) {
        n->op->in->free(opal_rpc_req_input(req));
    }
    opal_rpc_req_decref(req);
    return rc;
}

/* Forwards to the children and runs the handler. */
static void node_start(corpc_node_t *n)
{
    uint32_t rel = (n->me + n->m - n->root_idx) % n->m;
    uint32_t count = n->tree->nchildren(rel, n->m, n->in->k);
    uint32_t *kids = malloc((count + 1) * sizeof(uint32_t));
    n->children = calloc(count + 1, sizeof(corpc_child_t));
    /* One extra count for the start itself: nothing completes the node
     * while children are still being sent. */
    n->pending = count + 2;
    if (NULL == kids || NULL == n->children) {
        free(kids);
        fail_subtree(n, rel);
        n->pending = 1;
        node_done_one(n);
        return;
    }
    n->tree->children(rel, n->m, n->in->k, kids);
    uint32_t height = subtree_height(n, rel);
    n->child_in = *n->in;
    /* Each level keeps a share of the time for itself: a child must
     * answer (with its own late children failed) before this node's
     * timeout for it. */
    n->child_in.budget = 0 == height ? 0 : n->in->budget * height / (height + 1);
    for (uint32_t i = 0; i < count; ++i) {
        corpc_child_t *c = &n->children[i];
        c->node = n;
        c->rel = kids[i];
        uint32_t rank = n->members[(kids[i] + n->root_idx) % n->m];
        opal_rpc_endpoint_t ep;
        opal_rpc_request_t *req = NULL;
        int rc = opal_rpc_group_endpoint(n->group, rank, opal_rpc_context_idx(n->ctx), &ep);
        if (OPAL_SUCCESS == rc) {
            rc = opal_rpc_req_create(n->ctx, &ep, OPAL_RPC_CORPC_OPCODE, &req);
        }
        if (OPAL_SUCCESS == rc) {
            *(rpc_corpc_in_t *) opal_rpc_req_input(req) = n->child_in;
            (void) opal_rpc_req_set_timeout(req, n->in->budget);
            rc = opal_rpc_req_send(req, child_done, c);
        }
        if (OPAL_SUCCESS != rc) {
            opal_output_verbose(1, opal_rpc_base_output,
                                "rpc: corpc over group '%s': forwarding to rank %u: %s",
                                n->group->name, rank, opal_strerror(rc));
            fail_subtree(n, kids[i]);
            --n->pending;
        }
    }
    free(kids);
    if (OPAL_SUCCESS != run_local(n)) {
        (void) add_failed(n, n->members[n->me]);
        --n->pending;
    }
    node_done_one(n);
}

/* The participants: the group's ranks but the excluded ones. */
static int node_members(corpc_node_t *n, uint32_t self)
{
    uint32_t size = n->group->size;
    bool *out = calloc(size, sizeof(bool));
    n->members = malloc(size * sizeof(uint32_t));
    if (NULL == out || NULL == n->members) {
        free(out);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t i = 0; i < n->in->excluded.count; ++i) {
        out[n->in->excluded.elems[i]] = true;
    }
    n->m = 0;
    n->me = n->root_idx = UINT32_MAX;
    for (uint32_t r = 0; r < size; ++r) {
        if (out[r]) {
            continue;
        }
        if (r == self) {
            n->me = n->m;
        }
        if (r == n->in->root) {
            n->root_idx = n->m;
        }
        n->members[n->m++] = r;
    }
    free(out);
    return UINT32_MAX == n->me || UINT32_MAX == n->root_idx ? OPAL_ERR_NOT_FOUND : OPAL_SUCCESS;
}

/* Appends to in's exclusions (room for the group's size) the members of
 * group known dead, but the root and those excluded already. */
static void exclude_dead(rpc_corpc_in_t *in, opal_rpc_group_t *group)
{
    uint32_t given = in->excluded.count;
    for (uint32_t r = 0; r < group->size; ++r) {
        opal_rpc_member_state_t s;
        bool excluded = false;
        for (uint32_t i = 0; i < given; ++i) {
            excluded |= in->excluded.elems[i] == r;
        }
        if (!excluded && r != in->root &&
            OPAL_SUCCESS == opal_rpc_group_member_state(group, r, &s) &&
            OPAL_RPC_MEMBER_DEAD == s) {
            in->excluded.elems[in->excluded.count++] = r;
        }
    }
}

/* A forward whose root is this rank came from outside the tree (a client
 * that named this rank the root, opal_rpc_corpc_create_at): as at a root
 * here, the members known dead are left out and reported failed. */
static int relay_root(corpc_node_t *n, opal_rpc_group_t *group)
{
    n->relay_in = *n->in;
    /* The given exclusions (a peer's: they may repeat a rank) and at most
     * every other rank dead. */
    n->relay_in.excluded.elems =
        malloc(((size_t) n->in->excluded.count + group->size + 1) * sizeof(uint32_t));
    if (NULL == n->relay_in.excluded.elems) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (n->in->excluded.count > 0) {
        memcpy(n->relay_in.excluded.elems, n->in->excluded.elems,
               n->in->excluded.count * sizeof(uint32_t));
    }
    exclude_dead(&n->relay_in, group);
    n->in = &n->relay_in;
    return OPAL_SUCCESS;
}

/* The forward's handler (inline: it only sends). */
static void forward_handler(opal_rpc_request_t *req)
{
    const rpc_corpc_in_t *in = opal_rpc_req_input(req);
    char why[256] = "";
    int rc = OPAL_ERR_NOT_FOUND;
    corpc_node_t *n = NULL;
    opal_rpc_group_t *group = opal_rpc_group_lookup(in->group);
    uint32_t self = 0;
    if (NULL == group) {
        snprintf(why, sizeof(why), "corpc: group '%s' is not known here", in->group);
        goto refuse;
    }
    if (OPAL_SUCCESS != opal_rpc_group_rank(group, &self)) {
        snprintf(why, sizeof(why), "corpc: this process is not a member of group '%s'", in->group);
        goto refuse;
    }
    rc = opal_rpc_base_corpc_check(in, group->size, why, sizeof(why));
    if (OPAL_SUCCESS != rc) {
        goto refuse;
    }
    n = calloc(1, sizeof(*n));
    if (NULL == n) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto refuse;
    }
    n->ctx = opal_rpc_req_context(req);
    n->group = group;
    n->in = in;
    rc = OPAL_ERR_NOT_FOUND;
    if (NULL == (n->tree = opal_rpc_tree_lookup(in->tree)) ||
        OPAL_SUCCESS != opal_rpc_tree_check(n->tree, in->k)) {
        snprintf(why, sizeof(why), "corpc: no tree shape '%s' with k = %u here", in->tree, in->k);
        goto refuse;
    }
    if (OPAL_SUCCESS != opal_rpc_base_proto_lookup(in->opcode, &n->op, why, sizeof(why)) ||
        !agg_find(in->opcode, &n->agg)) {
        snprintf(why, sizeof(why), "corpc: opcode 0x%08x is not registered for corpc here",
                 in->opcode);
        goto refuse;
    }
    if (self == in->root && OPAL_SUCCESS != (rc = relay_root(n, group))) {
        snprintf(why, sizeof(why), "corpc: no memory for the root's input");
        goto refuse;
    }
    if (OPAL_SUCCESS != (rc = node_members(n, self))) {
        snprintf(why, sizeof(why), "corpc: this rank (%u) or the root (%u) is excluded", self,
                 in->root);
        goto refuse;
    }
    for (uint32_t i = in->excluded.count; i < n->in->excluded.count; ++i) {
        (void) add_failed(n, n->in->excluded.elems[i]);
    }
    opal_rpc_req_addref(req);
    n->parent = req;
    atomic_fetch_add_explicit(&live_nodes, 1, memory_order_relaxed);
    node_start(n);
    return;
refuse:
    if (NULL != n) {
        node_free(n);
    }
    (void) opal_rpc_reply_error(req, rc, why);
}

static const opal_rpc_op_t corpc_ops[] = {
    {.handler = forward_handler,
     .in = &rpc_corpc_in_codec,
     .out = &rpc_corpc_out_codec,
     .flags = OPAL_RPC_OP_INLINE},
    {.handler = opal_rpc_base_group_create_handler,
     .in = &rpc_group_create_in_codec,
     .out = &rpc_group_create_out_codec,
     .flags = OPAL_RPC_OP_INLINE},
};

int opal_rpc_base_corpc_init(void)
{
    static const opal_rpc_proto_t proto = {.name = "corpc",
                                           .base = OPAL_RPC_CORPC_BASE,
                                           .version = OPAL_RPC_CORPC_VERSION,
                                           .count = 2,
                                           .ops = corpc_ops};
    OBJ_CONSTRUCT(&agg_lock, opal_mutex_t);
    /* The engine's own collective operations aggregate as the users'. */
    aggs = malloc(sizeof(*aggs));
    if (NULL == aggs) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    aggs[0] = (corpc_agg_t){.opcode = OPAL_RPC_GROUP_CREATE_OPCODE,
                            .aggregate = opal_rpc_base_group_create_aggregate};
    agg_count = 1;
    return opal_rpc_base_proto_add_reserved(&proto);
}

void opal_rpc_base_corpc_fini(void)
{
    free(aggs);
    aggs = NULL;
    agg_count = 0;
    OBJ_DESTRUCT(&agg_lock);
}

/* ------------------------------------------------------- the root's */

/* A corpc rooted here (remote false: root is this process's rank) or at
 * the member root that this process asks to run it (remote true). */
static int corpc_new(opal_rpc_context_t *ctx, opal_rpc_group_t *group, uint32_t opcode,
                     const opal_rpc_corpc_opts_t *opts, bool remote, uint32_t root,
                     opal_rpc_corpc_t **cop)
{
    static const opal_rpc_corpc_opts_t defaults = {0};
    const opal_rpc_op_t *op = NULL;
    corpc_agg_t agg;
    char why[256] = "";
    uint32_t self = root;
    if (NULL == ctx || NULL == group || NULL == cop) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (NULL == opts) {
        opts = &defaults;
    }
    if (!remote && OPAL_SUCCESS != opal_rpc_group_rank(group, &self)) {
        opal_output(0, "rpc: corpc over group '%s': this process is not a member", group->name);
        return OPAL_ERR_BAD_PARAM;
    }
    if (remote && root >= group->size) {
        opal_output(0, "rpc: corpc over group '%s': root %u is not one of its %u ranks",
                    group->name, root, group->size);
        return OPAL_ERR_BAD_PARAM;
    }
    /* The aggregation runs at the members: a process that only asks a
     * root needs the opcode's codecs, not its aggregation. */
    if (OPAL_SUCCESS != opal_rpc_base_proto_lookup(opcode, &op, why, sizeof(why)) ||
        (!remote && !agg_find(opcode, &agg)) || NULL == op->out) {
        opal_output(0, "rpc: corpc: opcode 0x%08x is not registered for corpc (%s)", opcode,
                    '\0' == why[0] ? "opal_rpc_corpc_register" : why);
        return OPAL_ERR_NOT_FOUND;
    }
    uint32_t k = opts->k;
    const opal_rpc_tree_ops_t *tree;
    if (NULL == opts->tree) {
        uint32_t default_k;
        tree = opal_rpc_tree_default(&default_k);
        k = 0 == k ? default_k : k;
    } else {
        uint32_t default_k;
        tree = opal_rpc_tree_lookup(opts->tree);
        (void) opal_rpc_tree_default(&default_k);
        k = 0 == k ? default_k : k;
    }
    if (NULL == tree || OPAL_SUCCESS != opal_rpc_tree_check(tree, k)) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (opts->timeout < 0 || !isfinite(opts->timeout)) {
        opal_output(0, "rpc: corpc: timeout %g is not a number of seconds >= 0", opts->timeout);
        return OPAL_ERR_BAD_PARAM;
    }
    opal_rpc_corpc_t *co = calloc(1, sizeof(*co));
    if (NULL == co) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    co->ctx = ctx;
    co->group = group;
    co->op = op;
    co->remote = remote;
    co->in.group = group->name;
    co->in.root = self;
    co->in.opcode = opcode;
    co->in.tree = (char *) tree->name;
    co->in.k = k;
    co->in.budget = 0 == opts->timeout ? opal_rpc_base_vars.timeout : opts->timeout;
    co->in.excluded.elems = malloc((opts->excluded_count + group->size) * sizeof(uint32_t));
    if (NULL == co->in.excluded.elems ||
        (NULL != op->in && NULL == (co->input = calloc(1, op->in->struct_size)))) {
        opal_rpc_corpc_free(co);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (opts->excluded_count > group->size) {
        opal_output(0, "rpc: corpc over group '%s': %u ranks excluded from %u", group->name,
                    opts->excluded_count, group->size);
        opal_rpc_corpc_free(co);
        return OPAL_ERR_BAD_PARAM;
    }
    /* Without repeats: the members' check bounds the count by the size. */
    for (uint32_t i = 0; i < opts->excluded_count; ++i) {
        bool seen = false;
        for (uint32_t j = 0; j < co->in.excluded.count; ++j) {
            seen |= co->in.excluded.elems[j] == opts->excluded[i];
        }
        if (!seen) {
            co->in.excluded.elems[co->in.excluded.count++] = opts->excluded[i];
        }
    }
    if (OPAL_SUCCESS != opal_rpc_base_corpc_check(&co->in, group->size, why, sizeof(why))) {
        opal_output(0, "rpc: corpc over group '%s': %s", group->name, why);
        opal_rpc_corpc_free(co);
        return OPAL_ERR_BAD_PARAM;
    }
    *cop = co;
    return OPAL_SUCCESS;
}

int opal_rpc_corpc_create(opal_rpc_context_t *ctx, opal_rpc_group_t *group, uint32_t opcode,
                          const opal_rpc_corpc_opts_t *opts, opal_rpc_corpc_t **cop)
{
    return corpc_new(ctx, group, opcode, opts, false, 0, cop);
}

int opal_rpc_corpc_create_at(opal_rpc_context_t *ctx, opal_rpc_group_t *group, uint32_t root,
                             uint32_t opcode, const opal_rpc_corpc_opts_t *opts,
                             opal_rpc_corpc_t **cop)
{
    return corpc_new(ctx, group, opcode, opts, true, root, cop);
}

/* The root's answer to a corpc this process asked it for. */
static void remote_done(opal_rpc_request_t *req, int status, void *arg)
{
    opal_rpc_corpc_t *co = arg;
    const rpc_corpc_out_t *out = opal_rpc_req_output(req);
    if (OPAL_SUCCESS != status) {
        opal_output_verbose(
            1, opal_rpc_base_output, "rpc: corpc over group '%s' through rank %u: %s%s%s",
            co->group->name, co->in.root, opal_strerror(status),
            NULL == opal_rpc_req_error_reason(req) ? "" : ": ",
            NULL == opal_rpc_req_error_reason(req) ? "" : opal_rpc_req_error_reason(req));
    } else {
        bool bad = !out->has_output && 0 == out->failed.count;
        for (uint32_t i = 0; i < out->failed.count; ++i) {
            bad |= out->failed.elems[i] >= co->group->size;
        }
        if (!bad && out->failed.count > 0) {
            co->failed = malloc(out->failed.count * sizeof(uint32_t));
            bad = NULL == co->failed;
            if (!bad) {
                memcpy(co->failed, out->failed.elems, out->failed.count * sizeof(uint32_t));
                co->nfailed = out->failed.count;
            }
        }
        if (!bad && out->has_output) {
            co->output = calloc(1, co->op->out->struct_size);
            if (NULL == co->output ||
                OPAL_SUCCESS != opal_rpc_codec_decode_with(co->op->out, opal_rpc_engine.bulk,
                                                           out->output.buf, out->output.len,
                                                           co->output)) {
                free(co->output);
                co->output = NULL;
                bad = true;
            }
        }
        if (bad) {
            opal_output(0, "rpc: corpc over group '%s': root %u replied a malformed aggregate",
                        co->group->name, co->in.root);
            status = OPAL_ERR_PROTOCOL;
        } else {
            status = 0 == co->nfailed ? OPAL_SUCCESS : OPAL_ERR_PEER_FAILED;
        }
    }
    atomic_fetch_sub_explicit(&live_nodes, 1, memory_order_release);
    co->cb(co, status, co->arg);
}

/* Sends the forward to the root named, as if this process were its
 * parent: the root's node replies with the aggregate. */
static int send_remote(opal_rpc_corpc_t *co, opal_rpc_corpc_cb_t cb, void *arg)
{
    opal_rpc_endpoint_t ep;
    opal_rpc_request_t *req = NULL;
    co->in.version = opal_rpc_group_version(co->group);
    int rc = NULL == co->op->in ? OPAL_SUCCESS : encode(co->op->in, co->input, &co->in.input);
    if (OPAL_SUCCESS == rc) {
        rc = opal_rpc_group_endpoint(co->group, co->in.root, opal_rpc_context_idx(co->ctx), &ep);
    }
    if (OPAL_SUCCESS == rc) {
        rc = opal_rpc_req_create(co->ctx, &ep, OPAL_RPC_CORPC_OPCODE, &req);
    }
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    /* The root keeps a share of the time for itself, as every parent
     * does for its children: its answer comes before this one's timeout. */
    rpc_corpc_in_t *in = opal_rpc_req_input(req);
    *in = co->in;
    in->budget = co->in.budget * 3 / 4;
    (void) opal_rpc_req_set_timeout(req, co->in.budget);
    co->cb = cb;
    co->arg = arg;
    co->sent = true;
    atomic_fetch_add_explicit(&live_nodes, 1, memory_order_relaxed);
    rc = opal_rpc_req_send(req, remote_done, co);
    if (OPAL_SUCCESS != rc) {
        atomic_fetch_sub_explicit(&live_nodes, 1, memory_order_relaxed);
        co->sent = false;
    }
    return rc;
}

void *opal_rpc_corpc_input(opal_rpc_corpc_t *co)
{
    return co->input;
}

void *opal_rpc_corpc_output(opal_rpc_corpc_t *co)
{
    return co->output;
}

uint32_t opal_rpc_corpc_failed(opal_rpc_corpc_t *co, const uint32_t **ranks)
{
    if (NULL != ranks) {
        *ranks = co->failed;
    }
    return co->nfailed;
}

int opal_rpc_corpc_send(opal_rpc_corpc_t *co, opal_rpc_corpc_cb_t cb, void *arg)
{
    if (NULL == co || NULL == cb || co->sent) {
        return OPAL_ERR_BAD_PARAM;
    }
    corpc_node_t *n = calloc(1, sizeof(*n));
    if (NULL == n) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (co->remote) {
        free(n);
        return send_remote(co, cb, arg);
    }
    /* The members known dead now are left out and reported failed. */
    uint32_t dead_from = co->in.excluded.count;
    exclude_dead(&co->in, co->group);
    co->in.version = opal_rpc_group_version(co->group);
    int rc = NULL == co->op->in ? OPAL_SUCCESS : encode(co->op->in, co->input, &co->in.input);
    if (OPAL_SUCCESS != rc) {
        free(n);
        return rc;
    }
    n->ctx = co->ctx;
    n->group = co->group;
    n->op = co->op;
    (void) agg_find(co->in.opcode, &n->agg);
    n->in = &co->in;
    n->co = co;
    n->tree = opal_rpc_tree_lookup(co->in.tree);
    if (NULL == n->tree || OPAL_SUCCESS != (rc = node_members(n, co->in.root))) {
        node_free(n);
        return NULL == n->tree ? OPAL_ERR_NOT_FOUND : rc;
    }
    for (uint32_t i = dead_from; i < co->in.excluded.count; ++i) {
        (void) add_failed(n, co->in.excluded.elems[i]);
    }
    co->cb = cb;
    co->arg = arg;
    co->sent = true;
    atomic_fetch_add_explicit(&live_nodes, 1, memory_order_relaxed);
    node_start(n);
    return OPAL_SUCCESS;
}

uint32_t opal_rpc_corpc_inflight(void)
{
    return atomic_load_explicit(&live_nodes, memory_order_acquire);
}

void opal_rpc_corpc_free(opal_rpc_corpc_t *co)
{
    if (NULL == co) {
        return;
    }
    if (NULL != co->output) {
        co->op->out->free(co->output);
        free(co->output);
    }
    free(co->input);
    free(co->in.input.buf);
    free(co->in.excluded.elems);
    free(co->failed);
    free(co);
}
