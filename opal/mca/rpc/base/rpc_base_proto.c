/*
 * Protocols: the registry (base | version | index -> operation) and the
 * engine's own protocol query (CaRT's crt_proto_query): the client sends
 * a base and the versions it knows, the server answers the highest it
 * serves.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/rpc/base/rpc_base_group.h"
#include "opal/mca/rpc/base/rpc_base_internal.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

#define RPC_QUERY_BASE 0xffu

#define RPC_QUERY_IN_FIELDS(X)                                                                     \
    X(uint8_t, base, VAR)                                                                          \
    X(uint8_t, versions, ARRAY_VAR)
OPAL_RPC_STRUCT(rpc_query_in, RPC_QUERY_IN_FIELDS);

#define RPC_QUERY_OUT_FIELDS(X)                                                                    \
    X(int32_t, status, VAR)                                                                        \
    X(uint8_t, version, VAR)
OPAL_RPC_STRUCT(rpc_query_out, RPC_QUERY_OUT_FIELDS);

static int proto_add(const opal_rpc_proto_t *proto)
{
    opal_rpc_engine_t *e = &opal_rpc_engine;
    for (size_t i = 0; i < e->proto_count; ++i) {
        if (e->protos[i].proto.base == proto->base &&
            e->protos[i].proto.version == proto->version) {
            return OPAL_ERR_EXISTS;
        }
    }
    rpc_proto_entry_t *protos = realloc(e->protos, (e->proto_count + 1) * sizeof(*protos));
    rpc_proto_node_t *node = malloc(sizeof(*node));
    if (NULL == protos || NULL == node) {
        if (NULL != protos) {
            e->protos = protos;
        }
        free(node);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    e->protos = protos;
    e->protos[e->proto_count++].proto = *proto;
    node->proto = *proto;
    node->next = atomic_load_explicit(&e->by_base[proto->base], memory_order_relaxed);
    /* release: a lookup that finds the node sees it filled in. */
    atomic_store_explicit(&e->by_base[proto->base], node, memory_order_release);
    return OPAL_SUCCESS;
}

int opal_rpc_proto_register(const opal_rpc_proto_t *proto)
{
    if (0 == opal_rpc_engine.refcount) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    if (NULL == proto || 0 == proto->count || NULL == proto->ops) {
        opal_output(0, "rpc: protocol %s has no operations",
                    NULL == proto || NULL == proto->name ? "(unnamed)" : proto->name);
        return OPAL_ERR_BAD_PARAM;
    }
    if (proto->base >= OPAL_RPC_BASE_RESERVED) {
        opal_output(0, "rpc: protocol %s: base 0x%x is reserved for the engine (0x%x and up)",
                    NULL == proto->name ? "(unnamed)" : proto->name, proto->base,
                    OPAL_RPC_BASE_RESERVED);
        return OPAL_ERR_BAD_PARAM;
    }
    for (uint16_t i = 0; i < proto->count; ++i) {
        if (NULL == proto->ops[i].handler) {
            opal_output(0, "rpc: protocol %s: operation %u has no handler",
                        NULL == proto->name ? "(unnamed)" : proto->name, i);
            return OPAL_ERR_BAD_PARAM;
        }
    }
    opal_mutex_lock(&opal_rpc_engine.lock);
    int rc = proto_add(proto);
    opal_mutex_unlock(&opal_rpc_engine.lock);
    return rc;
}

int opal_rpc_base_proto_lookup(uint32_t opcode, const opal_rpc_op_t **op, char *why,
                               size_t why_size)
{
    opal_rpc_engine_t *e = &opal_rpc_engine;
    uint32_t base = OPAL_RPC_OPCODE_BASE(opcode);
    uint32_t version = OPAL_RPC_OPCODE_VERSION(opcode);
    uint32_t index = OPAL_RPC_OPCODE_INDEX(opcode);
    bool base_known = false;
    int rc = OPAL_ERR_NOT_FOUND;
    why[0] = '\0';
    for (const rpc_proto_node_t *n = atomic_load_explicit(&e->by_base[base], memory_order_acquire);
         NULL != n; n = n->next) {
        const opal_rpc_proto_t *p = &n->proto;
        base_known = true;
        if (p->version != version) {
            continue;
        }
        if (index >= p->count) {
            snprintf(why, why_size, "opcode 0x%08x: protocol %s version %u has %u operations",
                     opcode, NULL == p->name ? "(unnamed)" : p->name, version, p->count);
            break;
        }
        *op = &p->ops[index];
        rc = OPAL_SUCCESS;
        break;
    }
    if (OPAL_ERR_NOT_FOUND == rc && why[0] == '\0') {
        if (base_known) {
            snprintf(why, why_size,
                     "protocol 0x%02x, version %u not registered (other versions are)", base,
                     version);
            rc = OPAL_ERR_VERSION_MISMATCH;
        } else {
            snprintf(why, why_size, "protocol 0x%02x, version %u not registered", base, version);
        }
    }
    return rc;
}

/* The server side of the query. */
static void query_handler(opal_rpc_request_t *req)
{
    const rpc_query_in_t *in = opal_rpc_req_input(req);
    rpc_query_out_t *out = opal_rpc_req_output(req);
    opal_rpc_engine_t *e = &opal_rpc_engine;
    out->status = OPAL_ERR_NOT_FOUND;
    out->version = 0;
    opal_mutex_lock(&e->lock);
    for (uint32_t v = 0; v < in->versions.count; ++v) {
        for (size_t i = 0; i < e->proto_count; ++i) {
            const opal_rpc_proto_t *p = &e->protos[i].proto;
            if (p->base == in->base && p->version == in->versions.elems[v] &&
                (OPAL_SUCCESS != out->status || p->version > out->version)) {
                out->status = OPAL_SUCCESS;
                out->version = p->version;
            }
        }
    }
    opal_mutex_unlock(&e->lock);
    (void) opal_rpc_reply_send(req);
}

static const opal_rpc_op_t query_ops[] = {
    {.handler = query_handler, .in = &rpc_query_in_codec, .out = &rpc_query_out_codec},
    /* OPAL_RPC_RELEASE_OPCODE (rpc_base_bulk_out.c). */
    {.handler = opal_rpc_base_bulk_release_handler,
     .in = &rpc_release_in_codec,
     .flags = OPAL_RPC_OP_ONEWAY | OPAL_RPC_OP_INLINE},
};

int opal_rpc_base_proto_builtin(void)
{
    static const opal_rpc_proto_t query = {
        .name = "proto-query", .base = RPC_QUERY_BASE, .version = 1, .count = 2, .ops = query_ops};
    return proto_add(&query);
}

int opal_rpc_base_proto_add_reserved(const opal_rpc_proto_t *proto)
{
    opal_mutex_lock(&opal_rpc_engine.lock);
    int rc = proto_add(proto);
    opal_mutex_unlock(&opal_rpc_engine.lock);
    return rc;
}

void opal_rpc_base_proto_clear(void)
{
    for (int b = 0; b < 256; ++b) {
        rpc_proto_node_t *n = atomic_exchange(&opal_rpc_engine.by_base[b], NULL);
        while (NULL != n) {
            rpc_proto_node_t *next = n->next;
            free(n);
            n = next;
        }
    }
    free(opal_rpc_engine.protos);
    opal_rpc_engine.protos = NULL;
    opal_rpc_engine.proto_count = 0;
}

typedef struct {
    opal_rpc_proto_query_cb_t cb;
    void *arg;
} rpc_query_state_t;

static void query_done(opal_rpc_request_t *req, int status, void *arg)
{
    rpc_query_state_t *state = arg;
    const rpc_query_out_t *out = opal_rpc_req_output(req);
    if (OPAL_SUCCESS == status) {
        status = out->status;
    }
    state->cb(status, OPAL_SUCCESS == status ? out->version : 0, state->arg);
    free(state);
}

int opal_rpc_proto_query(opal_rpc_context_t *ctx, const opal_rpc_endpoint_t *ep, uint8_t base,
                         const uint8_t *versions, uint32_t count, opal_rpc_proto_query_cb_t cb,
                         void *arg)
{
    opal_rpc_request_t *req = NULL;
    if (NULL == cb || (count > 0 && NULL == versions)) {
        return OPAL_ERR_BAD_PARAM;
    }
    int rc = opal_rpc_req_create(ctx, ep, OPAL_RPC_OPCODE(RPC_QUERY_BASE, 1, 0), &req);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rpc_query_state_t *state = malloc(sizeof(*state));
    if (NULL == state) {
        opal_rpc_req_decref(req);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    state->cb = cb;
    state->arg = arg;
    rpc_query_in_t *in = opal_rpc_req_input(req);
    in->base = base;
    in->versions.count = count;
    /* Only read while req_send encodes; client inputs are never freed by
     * the codec. */
    in->versions.elems = (uint8_t *) versions;
    rc = opal_rpc_req_send(req, query_done, state);
    if (OPAL_SUCCESS != rc) {
        free(state);
    }
    return rc;
}
