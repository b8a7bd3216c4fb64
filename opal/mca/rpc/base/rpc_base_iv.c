/*
 * Incast variables (CaRT's crt_iv; rpc_iv.h): how an operation runs. A
 * namespace is a cache (at the root: the store) of keys over a group, and
 * a tree over the group's ranks rotated so that the namespace's root is
 * 0, the same at every member. Every operation is an iv_op_t: started by
 * the user here, or by a request from a child (fetch, update, invalidate
 * on its way up) or from the parent (invalidate on its way down). An op
 * either finishes at this member (a hit, the root) or sends one request up
 * to the nearest live ancestor, or one down to each live child, and
 * finishes when they answered; a member that does not answer is gone
 * around. Finishing replies to the request it serves, or runs the user's
 * callback.
 *
 * An op lives in its namespace's context: every step runs in that
 * context's progress thread (the protocol's handlers are inline), so
 * nothing here takes a lock.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/rpc/base/rpc_base_internal.h"
#include "opal/mca/rpc/base/rpc_base_iv.h"
#include "opal/mca/rpc/base/rpc_base_iv_internal.h"
#include "opal/mca/rpc/rpc_group.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

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

int opal_rpc_base_iv_entry_put(opal_rpc_iv_ns_t *ns, const void *key, size_t keylen,
                               const void *value, size_t len, uint64_t version, bool force)
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

iv_op_t *opal_rpc_base_iv_op_new(opal_rpc_iv_ns_t *ns, iv_kind_t kind, const void *key,
                                 size_t keylen)
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

void opal_rpc_base_iv_op_free(iv_op_t *op)
{
    op->ns->inflight--;
    free(op->key);
    free(op->value);
    free(op->reason);
    free(op);
}

int opal_rpc_base_iv_op_set_value(iv_op_t *op, const void *value, size_t len)
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
    if (op->asking) {
        /* The fetches that waited for this one get its answer. */
        (void) opal_hash_table_remove_value_ptr(&ns->fetching, op->key, op->keylen);
        op->asking = false;
        while (NULL != op->waiters) {
            iv_op_t *w = op->waiters;
            op->waiters = w->next_waiter;
            w->version = op->version;
            w->status = op->status;
            if (OPAL_SUCCESS == w->status) {
                w->status = opal_rpc_base_iv_op_set_value(w, op->value, op->len);
            }
            if (NULL != op->reason) {
                w->reason = strdup(op->reason);
            }
            op_finish(w);
        }
    }
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
    opal_rpc_base_iv_op_free(op);
}

static void later_done(opal_rpc_request_t *req, int status, void *arg)
{
    (void) req;
    (void) status;
    op_finish(arg);
}

/* Finishes op from the context's next progress (the user's call must not
 * run its own callback): a request that completes without being sent. */
void opal_rpc_base_iv_op_finish_later(iv_op_t *op)
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
        opal_rpc_base_iv_op_finish_later(op);
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
            rc = opal_rpc_base_iv_entry_put(ns, op->key, op->keylen, out->value.buf, out->value.len,
                                            out->version, false);
            if (OPAL_SUCCESS == rc) {
                rc = opal_rpc_base_iv_op_set_value(op, out->value.buf, out->value.len);
            }
            op->version = out->version;
            break;
        case IV_UPDATE:
            rc = opal_rpc_base_iv_entry_put(ns, op->key, op->keylen, op->value, op->len,
                                            out->version, false);
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
        if (OPAL_SUCCESS == rc && len > opal_rpc_base_iv_value_max) {
            opal_output(0,
                        "rpc iv: namespace %u: on_fetch gave %zu bytes, past "
                        "rpc_iv_value_max %u",
                        ns->id, len, opal_rpc_base_iv_value_max);
            rc = OPAL_ERR_BAD_PARAM;
        }
        if (OPAL_SUCCESS == rc) {
            rc = opal_rpc_base_iv_entry_put(ns, op->key, op->keylen, value, len, 1, true);
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
        op->status = opal_rpc_base_iv_op_set_value(op, e->value, e->len);
    } else if (ns->self == ns->root) {
        op->status = OPAL_ERR_NOT_FOUND;
    } else {
        void *asking = NULL;
        if (OPAL_SUCCESS ==
            opal_hash_table_get_value_ptr(&ns->fetching, op->key, op->keylen, &asking)) {
            /* Answered with the one already asking (which always finishes
             * from progress, so this one does too). */
            iv_op_t *leader = asking;
            op->next_waiter = leader->waiters;
            leader->waiters = op;
            ns->stats.joined++;
            return;
        }
        if (OPAL_SUCCESS == opal_hash_table_set_value_ptr(&ns->fetching, op->key, op->keylen, op)) {
            op->asking = true;
        }
        ns->stats.misses++;
        send_up(op, IV_OP_FETCH, to_rel(ns, ns->self), later);
        return;
    }
    if (later) {
        opal_rpc_base_iv_op_finish_later(op);
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
        rc = opal_rpc_base_iv_entry_put(ns, op->key, op->keylen, op->value, op->len, version, true);
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
        opal_rpc_base_iv_op_finish_later(op);
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
            opal_rpc_base_iv_op_finish_later(op);
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

void opal_rpc_base_iv_op_start(iv_op_t *op)
{
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

void opal_rpc_base_iv_entries_free(opal_rpc_iv_ns_t *ns)
{
    const void *key;
    size_t keylen;
    iv_entry_t *e;
    OPAL_HASH_TABLE_FOREACH_PTR(key, keylen, e, &ns->entries)
    {
        free(e->value);
        free(e);
    }
}
