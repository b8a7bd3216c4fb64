/*
 * Incast variables (CaRT's crt_iv; rpc_iv.h). A namespace is a cache (at
 * the root: the store) of keys over a group, and a tree over the group's
 * ranks rotated so that the namespace's root is 0, the same at every
 * member. Every operation is an iv_op_t: started by the user here, or by
 * a request from a child (fetch, update, invalidate on its way up) or
 * from the parent (invalidate on its way down). An op either finishes at
 * this member (a hit, the root) or sends one request up to the nearest
 * live ancestor, or one down to each live child, and finishes when they
 * answered. Finishing replies to the request it serves, or runs the
 * user's callback.
 *
 * The wire is the engine's protocol "iv" on a reserved base: four
 * operations sharing one input and one output codec (the generated,
 * bounds-checked decoders; what a decoded request means is checked by
 * request_check before anything is done with it).
 *
 * A namespace lives in its context: the handlers are inline (they only
 * look up, copy and send), so every op runs in that context's progress
 * thread and the namespace needs no lock; only the registry that maps a
 * request to its namespace has one.
 */
#include "opal/opal_config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/class/opal_hash_table.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/na/base/base.h"
#include "opal/mca/rpc/base/rpc_base_group.h"
#include "opal/mca/rpc/base/rpc_base_internal.h"
#include "opal/mca/rpc/base/rpc_base_iv.h"
#include "opal/mca/rpc/rpc_iv.h"
#include "opal/mca/rpc/rpc_tree.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

static unsigned int iv_key_max = 1024;
static unsigned int iv_value_max = 1u << 20;

typedef struct iv_entry_t {
    void *value;
    size_t len;
    /* 0: a lazy update's value, not given a version by the root yet. */
    uint64_t version;
} iv_entry_t;

struct opal_rpc_iv_ns_t {
    opal_rpc_context_t *ctx;
    opal_rpc_group_t *group; /* NULL: this process alone */
    char group_name[OPAL_RPC_GROUP_NAME_MAX + 1];
    uint32_t id;
    uint32_t root, self, size;
    const opal_rpc_tree_ops_t *tree;
    uint32_t k;
    double timeout;
    opal_rpc_iv_ops_t ops;
    opal_hash_table_t entries; /* key bytes -> iv_entry_t */
    uint32_t inflight;         /* ops not finished */
    opal_rpc_iv_stats_t stats;
    opal_rpc_iv_ns_t *next; /* the registry */
};

typedef enum { IV_FETCH, IV_UPDATE, IV_INVAL_UP, IV_INVAL_DOWN } iv_kind_t;

typedef struct iv_op_t {
    opal_rpc_iv_ns_t *ns;
    iv_kind_t kind;
    void *key;
    size_t keylen;
    /* update: the value sent; fetch: the value found. */
    void *value;
    size_t len;
    uint64_t version;
    int status;
    char *reason; /* why it failed, from the member that said so */
    /* An invalidate on its way down: members that answered, children
     * still out (plus one while they are being sent). */
    uint32_t members, pending;
    /* The request served (a reference), or NULL for the user's op. */
    opal_rpc_request_t *from;
    bool lazy; /* a lazy update's trip to the root: no callback */
    opal_rpc_iv_cb_t cb;
    void *arg;
} iv_op_t;

static opal_mutex_t registry_lock;
static opal_rpc_iv_ns_t *registry;

/* --------------------------------------------------------- variables */

int opal_rpc_base_iv_register(void)
{
    iv_key_max = 1024;
    iv_value_max = 1u << 20;
    int index = mca_base_var_register("opal", "rpc", "iv", "key_max",
                                      "Longest incast variable key in bytes (1..65536)",
                                      MCA_BASE_VAR_TYPE_UNSIGNED_INT, NULL, MCA_BASE_VAR_FLAG_NONE,
                                      OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL, &iv_key_max);
    if (index < 0) {
        return index;
    }
    index = mca_base_var_register("opal", "rpc", "iv", "value_max",
                                  "Largest incast variable value in bytes (values past the eager "
                                  "size travel by bulk; at most 1 GiB)",
                                  MCA_BASE_VAR_TYPE_UNSIGNED_INT, NULL, MCA_BASE_VAR_FLAG_NONE,
                                  OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL, &iv_value_max);
    return index < 0 ? index : OPAL_SUCCESS;
}

/* The variables' values, checked where they are used. */
static int limits_check(void)
{
    if (iv_key_max < 1 || iv_key_max > 65536 || iv_value_max > (1u << 30)) {
        opal_output(0,
                    "rpc iv: rpc_iv_key_max %u must be 1..65536 and rpc_iv_value_max %u at most "
                    "1073741824",
                    iv_key_max, iv_value_max);
        return OPAL_ERR_BAD_PARAM;
    }
    return OPAL_SUCCESS;
}

/* ------------------------------------------------------------- tree */

static uint32_t to_rel(const opal_rpc_iv_ns_t *ns, uint32_t rank)
{
    return (rank + ns->size - ns->root) % ns->size;
}

static uint32_t to_rank(const opal_rpc_iv_ns_t *ns, uint32_t rel)
{
    return (rel + ns->root) % ns->size;
}

static bool is_dead(const opal_rpc_iv_ns_t *ns, uint32_t rank)
{
    opal_rpc_member_state_t s = OPAL_RPC_MEMBER_ALIVE;
    return NULL != ns->group && OPAL_SUCCESS == opal_rpc_group_member_state(ns->group, rank, &s) &&
           OPAL_RPC_MEMBER_DEAD == s;
}

/* The nearest ancestor of tree rank rel that the group does not know
 * dead (CaRT reroutes the same way), or an error when the root is dead. */
static int live_parent(const opal_rpc_iv_ns_t *ns, uint32_t rel, uint32_t *rank)
{
    uint32_t p = ns->tree->parent(rel, ns->size, ns->k);
    while (OPAL_RPC_TREE_NONE != p && 0 != p && is_dead(ns, to_rank(ns, p))) {
        p = ns->tree->parent(p, ns->size, ns->k);
    }
    if (OPAL_RPC_TREE_NONE == p || is_dead(ns, ns->root)) {
        return OPAL_ERR_PEER_FAILED;
    }
    *rank = to_rank(ns, p);
    return OPAL_SUCCESS;
}

/* The live members right below tree rank rel: its children, and in place
 * of a dead child that child's live children (depth first; out holds
 * size). */
static uint32_t live_children(const opal_rpc_iv_ns_t *ns, uint32_t rel, uint32_t *out)
{
    uint32_t *stack = malloc(ns->size * sizeof(uint32_t));
    uint32_t *kids = malloc(ns->size * sizeof(uint32_t));
    uint32_t top = 0, count = 0;
    if (NULL != stack && NULL != kids) {
        stack[top++] = rel;
        bool first = true;
        while (top > 0) {
            uint32_t r = stack[--top];
            if (!first && !is_dead(ns, to_rank(ns, r))) {
                out[count++] = to_rank(ns, r);
                continue;
            }
            first = false;
            uint32_t n = ns->tree->nchildren(r, ns->size, ns->k);
            ns->tree->children(r, ns->size, ns->k, kids);
            for (uint32_t i = 0; i < n && top < ns->size; ++i) {
                stack[top++] = kids[i];
            }
        }
    }
    free(stack);
    free(kids);
    return count;
}

/* ------------------------------------------------------------ entries */

static iv_entry_t *entry_find(opal_rpc_iv_ns_t *ns, const void *key, size_t keylen)
{
    void *e = NULL;
    return OPAL_SUCCESS == opal_hash_table_get_value_ptr(&ns->entries, key, keylen, &e) ? e : NULL;
}

/* Stores (value, version) for key unless what is here is newer (force:
 * regardless). */
static int entry_put(opal_rpc_iv_ns_t *ns, const void *key, size_t keylen, const void *value,
                     size_t len, uint64_t version, bool force)
{
    iv_entry_t *e = entry_find(ns, key, keylen);
    if (NULL != e && !force && 0 != e->version && version <= e->version) {
        return OPAL_SUCCESS;
    }
    void *copy = malloc(len > 0 ? len : 1);
    if (NULL == copy) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (len > 0) {
        memcpy(copy, value, len);
    }
    if (NULL == e) {
        e = calloc(1, sizeof(*e));
        if (NULL == e ||
            OPAL_SUCCESS != opal_hash_table_set_value_ptr(&ns->entries, key, keylen, e)) {
            free(e);
            free(copy);
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    free(e->value);
    e->value = copy;
    e->len = len;
    e->version = version;
    if (NULL != ns->ops.on_refresh) {
        ns->ops.on_refresh(ns, key, keylen, value, len, version, false, ns->ops.arg);
    }
    return OPAL_SUCCESS;
}

static void entry_drop(opal_rpc_iv_ns_t *ns, const void *key, size_t keylen)
{
    iv_entry_t *e = entry_find(ns, key, keylen);
    if (NULL == e) {
        return;
    }
    (void) opal_hash_table_remove_value_ptr(&ns->entries, key, keylen);
    free(e->value);
    free(e);
    ns->stats.dropped++;
    if (NULL != ns->ops.on_refresh) {
        ns->ops.on_refresh(ns, key, keylen, NULL, 0, 0, true, ns->ops.arg);
    }
}

/* ---------------------------------------------------------------- ops */

static iv_op_t *op_new(opal_rpc_iv_ns_t *ns, iv_kind_t kind, const void *key, size_t keylen)
{
    iv_op_t *op = calloc(1, sizeof(*op));
    if (NULL == op || NULL == (op->key = malloc(keylen))) {
        free(op);
        return NULL;
    }
    memcpy(op->key, key, keylen);
    op->keylen = keylen;
    op->ns = ns;
    op->kind = kind;
    ns->inflight++;
    return op;
}

static void op_free(iv_op_t *op)
{
    op->ns->inflight--;
    free(op->key);
    free(op->value);
    free(op->reason);
    free(op);
}

static int set_value(iv_op_t *op, const void *value, size_t len)
{
    free(op->value);
    op->value = NULL;
    op->len = len;
    if (len > 0) {
        if (NULL == (op->value = malloc(len))) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        memcpy(op->value, value, len);
    }
    return OPAL_SUCCESS;
}

/* Replies to the request op serves, or runs the user's callback. From
 * the context's progress. */
static void op_finish(iv_op_t *op)
{
    opal_rpc_iv_ns_t *ns = op->ns;
    if (op->lazy && OPAL_SUCCESS != op->status) {
        /* This member's copy is no one else's: it goes. */
        iv_entry_t *e = entry_find(ns, op->key, op->keylen);
        if (NULL != e && 0 == e->version) {
            entry_drop(ns, op->key, op->keylen);
        }
        ns->stats.lazy_failed++;
        opal_output_verbose(1, opal_rpc_base_output,
                            "rpc iv: namespace %u: a lazy update did not reach the root: %s",
                            ns->id, NULL == op->reason ? opal_strerror(op->status) : op->reason);
    }
    if (NULL != op->from) {
        rpc_iv_out_t *out = opal_rpc_req_output(op->from);
        out->status = op->status;
        out->reason = NULL == op->reason ? (char *) opal_strerror(op->status) : op->reason;
        out->version = op->version;
        out->members = op->members;
        if (OPAL_SUCCESS == op->status) {
            out->value.buf = op->value;
            out->value.len = (uint32_t) op->len;
        }
        int rc = opal_rpc_reply_send(op->from);
        memset(out, 0, sizeof(*out));
        if (OPAL_SUCCESS != rc) {
            opal_output_verbose(1, opal_rpc_base_output, "rpc iv: namespace %u: reply: %s",
                                op->ns->id, opal_strerror(rc));
        }
        op->ns->stats.served++;
        opal_rpc_req_decref(op->from);
    } else if (NULL != op->cb) {
        bool inval = IV_INVAL_UP == op->kind || IV_INVAL_DOWN == op->kind;
        op->cb(op->ns, op->status, op->value, inval ? op->members : op->len, op->version, op->arg);
    }
    op_free(op);
}

static void later_done(opal_rpc_request_t *req, int status, void *arg)
{
    (void) req;
    (void) status;
    op_finish(arg);
}

/* Finishes op from the context's next progress (the user's call must not
 * run its own callback): a request that completes without being sent. */
static void op_finish_later(iv_op_t *op)
{
    opal_rpc_endpoint_t self = {.addr = NULL, .ctx_idx = opal_rpc_context_idx(op->ns->ctx)};
    opal_rpc_request_t *req = NULL;
    if (OPAL_SUCCESS !=
            opal_rpc_req_create(op->ns->ctx, &self, OPAL_RPC_IV_OPCODE(IV_OP_FETCH), &req) ||
        OPAL_SUCCESS != opal_rpc_base_req_complete_local(req, OPAL_SUCCESS, later_done, op)) {
        /* Out of memory: finishing now is the only way left to tell. */
        if (NULL != req) {
            opal_rpc_req_decref(req);
        }
        op_finish(op);
    }
}

static void op_fail(iv_op_t *op, int status, const char *reason, bool later)
{
    op->status = status;
    if (NULL != reason && NULL == op->reason) {
        op->reason = strdup(reason);
    }
    if (later) {
        op_finish_later(op);
    } else {
        op_finish(op);
    }
}

static void sent_done(opal_rpc_request_t *req, int status, void *arg);

/* One request of an op: to whom, and which operation. */
typedef struct iv_send_t {
    iv_op_t *op;
    uint32_t rank;
    uint32_t index;
} iv_send_t;

/* Sends op's request of index to rank; sent_done completes it. */
static int op_send(iv_op_t *op, uint32_t index, uint32_t rank)
{
    opal_rpc_iv_ns_t *ns = op->ns;
    opal_rpc_endpoint_t ep;
    opal_rpc_request_t *req = NULL;
    iv_send_t *snd = malloc(sizeof(*snd));
    if (NULL == snd) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    *snd = (iv_send_t){.op = op, .rank = rank, .index = index};
    int rc = opal_rpc_group_endpoint(ns->group, rank, opal_rpc_context_idx(ns->ctx), &ep);
    if (OPAL_SUCCESS == rc) {
        rc = opal_rpc_req_create(ns->ctx, &ep, OPAL_RPC_IV_OPCODE(index), &req);
    }
    if (OPAL_SUCCESS != rc) {
        free(snd);
        return rc;
    }
    rpc_iv_in_t *in = opal_rpc_req_input(req);
    /* Only read while req_send encodes; client inputs are never freed by
     * the codec. */
    in->group = ns->group_name;
    in->ns_id = ns->id;
    in->root = ns->root;
    in->key.buf = op->key;
    in->key.len = (uint32_t) op->keylen;
    if (IV_OP_UPDATE == index) {
        in->value.buf = op->value;
        in->value.len = (uint32_t) op->len;
    }
    (void) opal_rpc_req_set_timeout(req, ns->timeout);
    rc = opal_rpc_req_send(req, sent_done, snd);
    if (OPAL_SUCCESS == rc) {
        ns->stats.sent++;
    } else {
        free(snd);
    }
    return rc;
}

static void send_up(iv_op_t *op, uint32_t index, uint32_t from_rel, bool later);

/* A member that cannot be reached or did not answer: worth going around. */
static bool lost(int status)
{
    return OPAL_ERR_TIMEOUT == status || OPAL_ERR_PEER_FAILED == status ||
           OPAL_ERR_UNREACH == status;
}

/* Sends op (an invalidate going down) to the live members below tree
 * rank rel; how many it reached. */
static uint32_t send_down(iv_op_t *op, uint32_t rel)
{
    opal_rpc_iv_ns_t *ns = op->ns;
    uint32_t *kids = malloc(ns->size * sizeof(uint32_t));
    uint32_t sent = 0;
    if (NULL == kids) {
        op->status = OPAL_SUCCESS == op->status ? OPAL_ERR_OUT_OF_RESOURCE : op->status;
        return 0;
    }
    uint32_t count = live_children(ns, rel, kids);
    for (uint32_t i = 0; i < count; ++i) {
        int rc = op_send(op, IV_OP_INVAL_DOWN, kids[i]);
        if (OPAL_SUCCESS == rc) {
            sent++;
            continue;
        }
        if (OPAL_SUCCESS == op->status) {
            char why[160];
            snprintf(why, sizeof(why), "iv namespace %u: sending to rank %u: %s", ns->id, kids[i],
                     opal_strerror(rc));
            op->status = rc;
            op->reason = strdup(why);
        }
        if (lost(rc)) {
            /* Below it, as if it were known dead (bounded by the depth). */
            sent += send_down(op, to_rel(ns, kids[i]));
        }
    }
    free(kids);
    return sent;
}

static void fetch_start(iv_op_t *op);
static void update_start(iv_op_t *op);
static void inval_start(iv_op_t *op);

/* The answer of a parent (fetch, update, invalidate going up) or of a
 * child (invalidate going down). */
static void sent_done(opal_rpc_request_t *req, int status, void *arg)
{
    iv_send_t snd = *(iv_send_t *) arg;
    iv_op_t *op = snd.op;
    opal_rpc_iv_ns_t *ns = op->ns;
    const rpc_iv_out_t *out = opal_rpc_req_output(req);
    free(arg);
    /* A member's answer that says it failed is not a lost member: only a
     * request that was not answered goes around its member. */
    bool around = OPAL_SUCCESS != status && lost(status);
    bool answered = OPAL_SUCCESS == status;
    const char *why = opal_rpc_req_error_reason(req);
    if (answered && OPAL_SUCCESS != out->status) {
        status = out->status < 0 ? out->status : OPAL_ERROR;
        why = out->reason;
    }
    if (OPAL_SUCCESS != status) {
        char reason[256];
        snprintf(reason, sizeof(reason), "iv namespace %u: rank %u: %s%s%s", ns->id, snd.rank,
                 opal_strerror(status), NULL == why ? "" : ": ", NULL == why ? "" : why);
        if (around) {
            opal_output_verbose(1, opal_rpc_base_output, "rpc iv: %s: going around it", reason);
        }
        if (IV_INVAL_DOWN == op->kind) {
            /* The members below it still drop their copies; the op tells
             * that one member could not. */
            if (OPAL_SUCCESS == op->status) {
                op->status = status;
                op->reason = strdup(reason);
            }
            if (around) {
                op->pending += send_down(op, to_rel(ns, snd.rank));
            } else if (answered) {
                /* Its subtree answered, short of a member. */
                op->members += out->members;
            }
            if (0 == --op->pending) {
                op_finish(op);
            }
            return;
        }
        if (around && snd.rank != ns->root) {
            send_up(op, snd.index, to_rel(ns, snd.rank), false);
            return;
        }
        op_fail(op, status, reason, false);
        return;
    }
    int rc = OPAL_SUCCESS;
    switch (op->kind) {
        case IV_FETCH:
            /* Cached on the way down, then handed on. */
            rc = entry_put(ns, op->key, op->keylen, out->value.buf, out->value.len, out->version,
                           false);
            if (OPAL_SUCCESS == rc) {
                rc = set_value(op, out->value.buf, out->value.len);
            }
            op->version = out->version;
            break;
        case IV_UPDATE:
            rc = entry_put(ns, op->key, op->keylen, op->value, op->len, out->version, false);
            op->version = out->version;
            if (NULL == op->from) {
                /* The user hears the version, not the value back. */
                free(op->value);
                op->value = NULL;
                op->len = 0;
            }
            break;
        case IV_INVAL_UP:
            op->members = out->members;
            break;
        case IV_INVAL_DOWN:
            op->members += out->members;
            if (0 == --op->pending) {
                op_finish(op);
            }
            return;
    }
    op->status = rc;
    op_finish(op);
}

/* Sends op to the nearest live ancestor of tree rank from_rel, or fails
 * it (from the next progress when later). */
static void send_up(iv_op_t *op, uint32_t index, uint32_t from_rel, bool later)
{
    uint32_t parent;
    char why[160];
    int rc;
    do {
        rc = live_parent(op->ns, from_rel, &parent);
        if (OPAL_SUCCESS != rc) {
            snprintf(why, sizeof(why), "iv namespace %u: the root (rank %u) is dead", op->ns->id,
                     op->ns->root);
            op_fail(op, rc, why, later);
            return;
        }
        rc = op_send(op, index, parent);
        if (OPAL_SUCCESS != rc && lost(rc) && parent != op->ns->root) {
            opal_output_verbose(1, opal_rpc_base_output,
                                "rpc iv: namespace %u: rank %u: %s: going around it", op->ns->id,
                                parent, opal_strerror(rc));
        }
        from_rel = to_rel(op->ns, parent);
    } while (OPAL_SUCCESS != rc && lost(rc) && parent != op->ns->root);
    if (OPAL_SUCCESS != rc) {
        snprintf(why, sizeof(why), "iv namespace %u: sending to rank %u: %s", op->ns->id, parent,
                 opal_strerror(rc));
        op_fail(op, rc, why, later);
    }
}

static void fetch_start(iv_op_t *op)
{
    opal_rpc_iv_ns_t *ns = op->ns;
    bool later = NULL == op->from;
    iv_entry_t *e = entry_find(ns, op->key, op->keylen);
    if (NULL == e && ns->self == ns->root && NULL != ns->ops.on_fetch) {
        void *value = NULL;
        size_t len = 0;
        int rc = ns->ops.on_fetch(ns, op->key, op->keylen, &value, &len, ns->ops.arg);
        if (OPAL_SUCCESS == rc && len > iv_value_max) {
            opal_output(0,
                        "rpc iv: namespace %u: on_fetch gave %zu bytes, past rpc_iv_value_max %u",
                        ns->id, len, iv_value_max);
            rc = OPAL_ERR_BAD_PARAM;
        }
        if (OPAL_SUCCESS == rc) {
            rc = entry_put(ns, op->key, op->keylen, value, len, 1, true);
            e = entry_find(ns, op->key, op->keylen);
        }
        free(value);
        if (OPAL_SUCCESS != rc && OPAL_ERR_NOT_FOUND != rc) {
            op_fail(op, rc, "iv: the root's on_fetch failed", later);
            return;
        }
    }
    if (NULL != e) {
        ns->stats.hits++;
        op->version = e->version;
        op->status = set_value(op, e->value, e->len);
    } else if (ns->self == ns->root) {
        op->status = OPAL_ERR_NOT_FOUND;
    } else {
        ns->stats.misses++;
        send_up(op, IV_OP_FETCH, to_rel(ns, ns->self), later);
        return;
    }
    if (later) {
        op_finish_later(op);
    } else {
        op_finish(op);
    }
}

static void update_start(iv_op_t *op)
{
    opal_rpc_iv_ns_t *ns = op->ns;
    bool later = NULL == op->from;
    if (ns->self != ns->root) {
        send_up(op, IV_OP_UPDATE, to_rel(ns, ns->self), later && !op->lazy);
        return;
    }
    iv_entry_t *e = entry_find(ns, op->key, op->keylen);
    uint64_t version = NULL == e ? 1 : e->version + 1;
    int rc = OPAL_SUCCESS;
    if (NULL != ns->ops.on_update) {
        rc = ns->ops.on_update(ns, op->key, op->keylen, op->value, op->len, version, ns->ops.arg);
    }
    if (OPAL_SUCCESS == rc) {
        rc = entry_put(ns, op->key, op->keylen, op->value, op->len, version, true);
    }
    if (OPAL_SUCCESS != rc) {
        op_fail(op, rc, "iv: the root refused the update", later);
        return;
    }
    ns->stats.stored++;
    op->version = version;
    free(op->value);
    op->value = NULL;
    op->len = 0;
    if (later) {
        op_finish_later(op);
    } else {
        op_finish(op);
    }
}

/* At the root, or on the way down: this member drops its copy, then the
 * live members below it do. */
static void inval_down(iv_op_t *op, bool later)
{
    opal_rpc_iv_ns_t *ns = op->ns;
    if (ns->self != ns->root) {
        entry_drop(ns, op->key, op->keylen);
    }
    op->kind = IV_INVAL_DOWN;
    op->members = 1;
    /* One more while the children are being sent: nothing finishes the op
     * before they all are. */
    op->pending = 1;
    op->pending += send_down(op, to_rel(ns, ns->self));
    if (0 == --op->pending) {
        if (later) {
            op_finish_later(op);
        } else {
            op_finish(op);
        }
    }
}

static void inval_start(iv_op_t *op)
{
    bool later = NULL == op->from;
    if (IV_INVAL_UP == op->kind && op->ns->self != op->ns->root) {
        send_up(op, IV_OP_INVAL_UP, to_rel(op->ns, op->ns->self), later);
        return;
    }
    inval_down(op, later);
}

/* ----------------------------------------------------------- the wire */

/* Who sent req: its rank in the namespace's group when it is one, else
 * its URI. */
static void sender_name(opal_rpc_request_t *req, opal_rpc_group_t *group, char *buf, size_t size)
{
    opal_na_addr_t *src = opal_rpc_req_source(req);
    opal_na_class_t *na = opal_rpc_engine.na;
    if (NULL == src || NULL == na) {
        snprintf(buf, size, "this process");
        return;
    }
    for (uint32_t r = 0; NULL != group && r < opal_rpc_group_size(group); ++r) {
        opal_rpc_endpoint_t ep;
        if (OPAL_SUCCESS == opal_rpc_group_endpoint(group, r, 0, &ep) && NULL != ep.addr &&
            opal_na_addr_cmp(na, ep.addr, src)) {
            snprintf(buf, size, "rank %u of group '%s'", r, opal_rpc_group_name(group));
            return;
        }
    }
    size_t len = size;
    if (OPAL_SUCCESS != opal_na_addr_to_string(na, buf, &len, src)) {
        snprintf(buf, size, "a peer whose address does not print");
    }
}

/* Every iv request: finds its namespace, checks it, starts its op. */
static void iv_handler(opal_rpc_request_t *req)
{
    const rpc_iv_in_t *in = opal_rpc_req_input(req);
    uint32_t index = OPAL_RPC_OPCODE_INDEX(opal_rpc_req_opcode(req));
    char why[256], who[256];
    opal_rpc_iv_ns_t *ns = NULL;
    int rc = opal_rpc_base_iv_check(in, index, iv_key_max, iv_value_max, why, sizeof(why));
    if (OPAL_SUCCESS == rc) {
        opal_mutex_lock(&registry_lock);
        for (ns = registry; NULL != ns; ns = ns->next) {
            if (ns->id == in->ns_id && 0 == strcmp(ns->group_name, in->group)) {
                break;
            }
        }
        opal_mutex_unlock(&registry_lock);
        if (NULL == ns || ns->ctx != opal_rpc_req_context(req)) {
            snprintf(why, sizeof(why), "no namespace %u over group '%s' on context %u here",
                     in->ns_id, in->group, opal_rpc_context_idx(opal_rpc_req_context(req)));
            rc = OPAL_ERR_NOT_FOUND;
            ns = NULL;
        } else if (in->root != ns->root) {
            snprintf(why, sizeof(why), "namespace %u has its root at rank %u here, not %u",
                     in->ns_id, ns->root, in->root);
            rc = OPAL_ERR_BAD_PARAM;
        }
    }
    iv_op_t *op = NULL;
    if (OPAL_SUCCESS == rc) {
        static const iv_kind_t kinds[] = {IV_FETCH, IV_UPDATE, IV_INVAL_UP, IV_INVAL_DOWN};
        op = op_new(ns, kinds[index], in->key.buf, in->key.len);
        if (NULL == op || (IV_OP_UPDATE == index &&
                           OPAL_SUCCESS != set_value(op, in->value.buf, in->value.len))) {
            snprintf(why, sizeof(why), "out of memory");
            rc = OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    if (OPAL_SUCCESS != rc) {
        if (NULL != op) {
            op_free(op);
        }
        if (NULL != ns) {
            ns->stats.refused++;
        }
        sender_name(
            req, NULL == ns ? opal_rpc_group_lookup(NULL == in->group ? "" : in->group) : ns->group,
            who, sizeof(who));
        opal_output(0, "rpc iv: refused a request (operation %u) from %s: %s", index, who, why);
        (void) opal_rpc_reply_error(req, rc, why);
        return;
    }
    opal_rpc_req_addref(req);
    op->from = req;
    switch (op->kind) {
        case IV_FETCH:
            fetch_start(op);
            break;
        case IV_UPDATE:
            update_start(op);
            break;
        default:
            inval_start(op);
            break;
    }
}

static const opal_rpc_op_t iv_ops[IV_OP_COUNT] = {
    [IV_OP_FETCH] = {.handler = iv_handler,
                     .in = &rpc_iv_in_codec,
                     .out = &rpc_iv_out_codec,
                     .flags = OPAL_RPC_OP_INLINE},
    [IV_OP_UPDATE] = {.handler = iv_handler,
                      .in = &rpc_iv_in_codec,
                      .out = &rpc_iv_out_codec,
                      .flags = OPAL_RPC_OP_INLINE},
    [IV_OP_INVAL_UP] = {.handler = iv_handler,
                        .in = &rpc_iv_in_codec,
                        .out = &rpc_iv_out_codec,
                        .flags = OPAL_RPC_OP_INLINE},
    [IV_OP_INVAL_DOWN] = {.handler = iv_handler,
                          .in = &rpc_iv_in_codec,
                          .out = &rpc_iv_out_codec,
                          .flags = OPAL_RPC_OP_INLINE},
};

int opal_rpc_base_iv_init(void)
{
    static const opal_rpc_proto_t proto = {.name = "iv",
                                           .base = OPAL_RPC_IV_BASE,
                                           .version = OPAL_RPC_IV_VERSION,
                                           .count = IV_OP_COUNT,
                                           .ops = iv_ops};
    OBJ_CONSTRUCT(&registry_lock, opal_mutex_t);
    registry = NULL;
    return opal_rpc_base_proto_add_reserved(&proto);
}

void opal_rpc_base_iv_fini(void)
{
    if (NULL != registry) {
        opal_output(0, "rpc iv: finalize with namespace %u still there", registry->id);
    }
    registry = NULL;
    OBJ_DESTRUCT(&registry_lock);
}

/* --------------------------------------------------------- namespaces */

int opal_rpc_iv_ns_create(opal_rpc_context_t *ctx, opal_rpc_group_t *group, uint32_t ns_id,
                          uint32_t root, const opal_rpc_iv_opts_t *opts,
                          const opal_rpc_iv_ops_t *ops, opal_rpc_iv_ns_t **nsp)
{
    static const opal_rpc_iv_opts_t defaults = {0};
    if (0 == opal_rpc_engine.refcount) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    if (NULL == ctx || NULL == nsp) {
        return OPAL_ERR_BAD_PARAM;
    }
    int rc = limits_check();
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    opts = NULL == opts ? &defaults : opts;
    uint32_t size = 1, self = 0, k = 0;
    if (NULL != group) {
        size = opal_rpc_group_size(group);
        if (OPAL_SUCCESS != opal_rpc_group_rank(group, &self)) {
            opal_output(0, "rpc iv: namespace %u over group '%s': this process is not a member",
                        ns_id, opal_rpc_group_name(group));
            return OPAL_ERR_BAD_PARAM;
        }
    }
    if (root >= size) {
        opal_output(0, "rpc iv: namespace %u: root %u is not in the group (%u ranks)", ns_id, root,
                    size);
        return OPAL_ERR_BAD_PARAM;
    }
    const opal_rpc_tree_ops_t *tree = opal_rpc_tree_default(&k);
    if (NULL != opts->tree) {
        tree = opal_rpc_tree_lookup(opts->tree);
    }
    k = 0 == opts->k ? k : opts->k;
    if (NULL == tree || OPAL_SUCCESS != opal_rpc_tree_check(tree, k)) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (opts->timeout < 0 || !isfinite(opts->timeout)) {
        opal_output(0, "rpc iv: namespace %u: timeout %g is not a number of seconds >= 0", ns_id,
                    opts->timeout);
        return OPAL_ERR_BAD_PARAM;
    }
    opal_rpc_iv_ns_t *ns = calloc(1, sizeof(*ns));
    if (NULL == ns) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    ns->ctx = ctx;
    ns->group = group;
    snprintf(ns->group_name, sizeof(ns->group_name), "%s",
             NULL == group ? "" : opal_rpc_group_name(group));
    ns->id = ns_id;
    ns->root = root;
    ns->self = self;
    ns->size = size;
    ns->tree = tree;
    ns->k = k;
    ns->timeout = 0 == opts->timeout ? opal_rpc_base_vars.timeout : opts->timeout;
    if (NULL != ops) {
        ns->ops = *ops;
    }
    OBJ_CONSTRUCT(&ns->entries, opal_hash_table_t);
    rc = opal_hash_table_init(&ns->entries, 64);
    if (OPAL_SUCCESS != rc) {
        OBJ_DESTRUCT(&ns->entries);
        free(ns);
        return rc;
    }
    opal_mutex_lock(&registry_lock);
    for (opal_rpc_iv_ns_t *o = registry; NULL != o; o = o->next) {
        if (o->id == ns_id && 0 == strcmp(o->group_name, ns->group_name)) {
            opal_mutex_unlock(&registry_lock);
            OBJ_DESTRUCT(&ns->entries);
            free(ns);
            return OPAL_ERR_EXISTS;
        }
    }
    ns->next = registry;
    registry = ns;
    opal_mutex_unlock(&registry_lock);
    *nsp = ns;
    return OPAL_SUCCESS;
}

int opal_rpc_iv_ns_destroy(opal_rpc_iv_ns_t *ns)
{
    if (NULL == ns) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (ns->inflight > 0) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    opal_mutex_lock(&registry_lock);
    for (opal_rpc_iv_ns_t **pp = &registry; NULL != *pp; pp = &(*pp)->next) {
        if (*pp == ns) {
            *pp = ns->next;
            break;
        }
    }
    opal_mutex_unlock(&registry_lock);
    const void *key;
    size_t keylen;
    iv_entry_t *e;
    OPAL_HASH_TABLE_FOREACH_PTR(key, keylen, e, &ns->entries)
    {
        free(e->value);
        free(e);
    }
    OBJ_DESTRUCT(&ns->entries);
    free(ns);
    return OPAL_SUCCESS;
}

uint32_t opal_rpc_iv_ns_id(const opal_rpc_iv_ns_t *ns)
{
    return ns->id;
}

void opal_rpc_iv_stats(const opal_rpc_iv_ns_t *ns, opal_rpc_iv_stats_t *stats)
{
    *stats = ns->stats;
}

/* ---------------------------------------------------- the user's calls */

static int key_check(const opal_rpc_iv_ns_t *ns, const void *key, size_t keylen, const char *what)
{
    if (NULL == ns || NULL == key || 0 == keylen || keylen > iv_key_max) {
        opal_output(0, "rpc iv: %s: a key of %zu bytes (1..rpc_iv_key_max %u)", what,
                    NULL == key ? (size_t) 0 : keylen, iv_key_max);
        return OPAL_ERR_BAD_PARAM;
    }
    return OPAL_SUCCESS;
}

int opal_rpc_iv_fetch(opal_rpc_iv_ns_t *ns, const void *key, size_t keylen, opal_rpc_iv_cb_t cb,
                      void *arg)
{
    int rc = key_check(ns, key, keylen, "fetch");
    if (OPAL_SUCCESS != rc || NULL == cb) {
        return OPAL_SUCCESS == rc ? OPAL_ERR_BAD_PARAM : rc;
    }
    iv_op_t *op = op_new(ns, IV_FETCH, key, keylen);
    if (NULL == op) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    op->cb = cb;
    op->arg = arg;
    fetch_start(op);
    return OPAL_SUCCESS;
}

int opal_rpc_iv_update(opal_rpc_iv_ns_t *ns, const void *key, size_t keylen, const void *value,
                       size_t len, opal_rpc_iv_mode_t mode, opal_rpc_iv_cb_t cb, void *arg)
{
    int rc = key_check(ns, key, keylen, "update");
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if ((len > 0 && NULL == value) || len > iv_value_max ||
        (OPAL_RPC_IV_SYNC != mode && OPAL_RPC_IV_LAZY != mode)) {
        opal_output(0,
                    "rpc iv: update: a value of %zu bytes (at most rpc_iv_value_max %u) in mode %d",
                    len, iv_value_max, (int) mode);
        return OPAL_ERR_BAD_PARAM;
    }
    iv_op_t *op = op_new(ns, IV_UPDATE, key, keylen);
    if (NULL == op || OPAL_SUCCESS != set_value(op, value, len)) {
        if (NULL != op) {
            op_free(op);
        }
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (OPAL_RPC_IV_LAZY == mode && ns->self != ns->root) {
        /* Here now (version 0 until the root's answer), the user told from
         * the next progress, the trip to the root in the background. */
        iv_op_t *told = op_new(ns, IV_UPDATE, key, keylen);
        rc = NULL == told ? OPAL_ERR_OUT_OF_RESOURCE
                          : entry_put(ns, key, keylen, value, len, 0, true);
        if (OPAL_SUCCESS != rc) {
            if (NULL != told) {
                op_free(told);
            }
            op_free(op);
            return rc;
        }
        told->cb = cb;
        told->arg = arg;
        op_finish_later(told);
        op->lazy = true;
    } else {
        op->cb = cb;
        op->arg = arg;
    }
    update_start(op);
    return OPAL_SUCCESS;
}

int opal_rpc_iv_invalidate(opal_rpc_iv_ns_t *ns, const void *key, size_t keylen,
                           opal_rpc_iv_cb_t cb, void *arg)
{
    int rc = key_check(ns, key, keylen, "invalidate");
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    iv_op_t *op = op_new(ns, IV_INVAL_UP, key, keylen);
    if (NULL == op) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    op->cb = cb;
    op->arg = arg;
    inval_start(op);
    return OPAL_SUCCESS;
}
