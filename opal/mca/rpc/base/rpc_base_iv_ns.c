/*
 * Incast variables (rpc_iv.h): the variables, the namespaces (a registry
 * that maps a request to its namespace by group name and id), the
 * protocol "iv" on its reserved base and its handler, and the user's
 * calls. The ops themselves run in rpc_base_iv.c.
 *
 * The wire: four operations sharing one input and one output codec (the
 * generated, bounds-checked decoders); opal_rpc_base_iv_check says what a
 * decoded request may mean before it is matched to a namespace.
 */
#include "opal/opal_config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/na/base/base.h"
#include "opal/mca/rpc/base/rpc_base_group.h"
#include "opal/mca/rpc/base/rpc_base_internal.h"
#include "opal/mca/rpc/base/rpc_base_iv.h"
#include "opal/mca/rpc/base/rpc_base_iv_internal.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

unsigned int opal_rpc_base_iv_key_max = 1024;
unsigned int opal_rpc_base_iv_value_max = 1u << 20;

static opal_mutex_t registry_lock;
static opal_rpc_iv_ns_t *registry;

/* --------------------------------------------------------- variables */

int opal_rpc_base_iv_register(void)
{
    opal_rpc_base_iv_key_max = 1024;
    opal_rpc_base_iv_value_max = 1u << 20;
    int index = mca_base_var_register(
        "opal", "rpc", "iv", "key_max", "Longest incast variable key in bytes (1..65536)",
        MCA_BASE_VAR_TYPE_UNSIGNED_INT, NULL, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_5,
        MCA_BASE_VAR_SCOPE_ALL, &opal_rpc_base_iv_key_max);
    if (index < 0) {
        return index;
    }
    index =
        mca_base_var_register("opal", "rpc", "iv", "value_max",
                              "Largest incast variable value in bytes (values past the eager "
                              "size travel by bulk; at most 1 GiB)",
                              MCA_BASE_VAR_TYPE_UNSIGNED_INT, NULL, MCA_BASE_VAR_FLAG_NONE,
                              OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL, &opal_rpc_base_iv_value_max);
    return index < 0 ? index : OPAL_SUCCESS;
}

/* The variables' values, checked where they are used. */
static int limits_check(void)
{
    if (opal_rpc_base_iv_key_max < 1 || opal_rpc_base_iv_key_max > 65536 ||
        opal_rpc_base_iv_value_max > (1u << 30)) {
        opal_output(0,
                    "rpc iv: rpc_iv_key_max %u must be 1..65536 and "
                    "rpc_iv_value_max %u at most "
                    "1073741824",
                    opal_rpc_base_iv_key_max, opal_rpc_base_iv_value_max);
        return OPAL_ERR_BAD_PARAM;
    }
    return OPAL_SUCCESS;
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
    opal_na_addr_name(na, src, buf, size, "a peer whose address does not print");
}

/* Every iv request: finds its namespace, checks it, starts its op. */
static void iv_handler(opal_rpc_request_t *req)
{
    const rpc_iv_in_t *in = opal_rpc_req_input(req);
    uint32_t index = OPAL_RPC_OPCODE_INDEX(opal_rpc_req_opcode(req));
    char why[256], who[256];
    opal_rpc_iv_ns_t *ns = NULL;
    int rc = opal_rpc_base_iv_check(in, index, opal_rpc_base_iv_key_max, opal_rpc_base_iv_value_max,
                                    why, sizeof(why));
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
        op = opal_rpc_base_iv_op_new(ns, kinds[index], in->key.buf, in->key.len);
        if (NULL == op ||
            (IV_OP_UPDATE == index &&
             OPAL_SUCCESS != opal_rpc_base_iv_op_set_value(op, in->value.buf, in->value.len))) {
            snprintf(why, sizeof(why), "out of memory");
            rc = OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    if (OPAL_SUCCESS != rc) {
        if (NULL != op) {
            opal_rpc_base_iv_op_free(op);
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
    opal_rpc_base_iv_op_start(op);
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
    OBJ_CONSTRUCT(&ns->fetching, opal_hash_table_t);
    rc = opal_hash_table_init(&ns->entries, 64);
    if (OPAL_SUCCESS == rc) {
        rc = opal_hash_table_init(&ns->fetching, 16);
    }
    if (OPAL_SUCCESS != rc) {
        OBJ_DESTRUCT(&ns->fetching);
        OBJ_DESTRUCT(&ns->entries);
        free(ns);
        return rc;
    }
    opal_mutex_lock(&registry_lock);
    for (opal_rpc_iv_ns_t *o = registry; NULL != o; o = o->next) {
        if (o->id == ns_id && 0 == strcmp(o->group_name, ns->group_name)) {
            opal_mutex_unlock(&registry_lock);
            OBJ_DESTRUCT(&ns->fetching);
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
    opal_rpc_base_iv_entries_free(ns);
    OBJ_DESTRUCT(&ns->fetching);
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
    if (NULL == ns || NULL == key || 0 == keylen || keylen > opal_rpc_base_iv_key_max) {
        opal_output(0, "rpc iv: %s: a key of %zu bytes (1..rpc_iv_key_max %u)", what,
                    NULL == key ? (size_t) 0 : keylen, opal_rpc_base_iv_key_max);
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
    iv_op_t *op = opal_rpc_base_iv_op_new(ns, IV_FETCH, key, keylen);
    if (NULL == op) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    op->cb = cb;
    op->arg = arg;
    opal_rpc_base_iv_op_start(op);
    return OPAL_SUCCESS;
}

int opal_rpc_iv_update(opal_rpc_iv_ns_t *ns, const void *key, size_t keylen, const void *value,
                       size_t len, opal_rpc_iv_mode_t mode, opal_rpc_iv_cb_t cb, void *arg)
{
    int rc = key_check(ns, key, keylen, "update");
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if ((len > 0 && NULL == value) || len > opal_rpc_base_iv_value_max ||
        (OPAL_RPC_IV_SYNC != mode && OPAL_RPC_IV_LAZY != mode)) {
        opal_output(0,
                    "rpc iv: update: a value of %zu bytes (at most rpc_iv_value_max "
                    "%u) in mode %d",
                    len, opal_rpc_base_iv_value_max, (int) mode);
        return OPAL_ERR_BAD_PARAM;
    }
    iv_op_t *op = opal_rpc_base_iv_op_new(ns, IV_UPDATE, key, keylen);
    if (NULL == op || OPAL_SUCCESS != opal_rpc_base_iv_op_set_value(op, value, len)) {
        if (NULL != op) {
            opal_rpc_base_iv_op_free(op);
        }
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (OPAL_RPC_IV_LAZY == mode && ns->self != ns->root) {
        /* Here now (version 0 until the root's answer), the user told from
         * the next progress, the trip to the root in the background. */
        iv_op_t *told = opal_rpc_base_iv_op_new(ns, IV_UPDATE, key, keylen);
        rc = NULL == told ? OPAL_ERR_OUT_OF_RESOURCE
                          : opal_rpc_base_iv_entry_put(ns, key, keylen, value, len, 0, true);
        if (OPAL_SUCCESS != rc) {
            if (NULL != told) {
                opal_rpc_base_iv_op_free(told);
            }
            opal_rpc_base_iv_op_free(op);
            return rc;
        }
        told->cb = cb;
        told->arg = arg;
        opal_rpc_base_iv_op_finish_later(told);
        op->lazy = true;
    } else {
        op->cb = cb;
        op->arg = arg;
    }
    opal_rpc_base_iv_op_start(op);
    return OPAL_SUCCESS;
}

int opal_rpc_iv_invalidate(opal_rpc_iv_ns_t *ns, const void *key, size_t keylen,
                           opal_rpc_iv_cb_t cb, void *arg)
{
    int rc = key_check(ns, key, keylen, "invalidate");
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    iv_op_t *op = opal_rpc_base_iv_op_new(ns, IV_INVAL_UP, key, keylen);
    if (NULL == op) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    op->cb = cb;
    op->arg = arg;
    opal_rpc_base_iv_op_start(op);
    return OPAL_SUCCESS;
}
