/*
 * Subgroups created collectively (CaRT's crt_group_create with populate):
 * the caller, one of the subgroup's primary ranks, runs a corpc of the
 * engine's group-create operation over the primary group with every
 * other rank excluded, so the tree is over the subgroup's members only.
 * Each member creates the subgroup locally under the name, or refuses it
 * (the name is in use there); the aggregate lists who did which. Unless
 * every member created it with the same version, a second corpc (drop)
 * destroys it where it was created, and the caller hears which ranks
 * failed or refused: a subgroup exists at all its members or at none
 * (of those reachable: a member that dies between the two corpcs keeps
 * nothing, it is gone).
 */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/rpc/base/rpc_base_corpc.h"
#include "opal/mca/rpc/base/rpc_base_group.h"
#include "opal/mca/rpc/base/rpc_base_internal.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

/* ------------------------------------------------------------ members */

void opal_rpc_base_group_create_handler(opal_rpc_request_t *req)
{
    const rpc_group_create_in_t *in = opal_rpc_req_input(req);
    rpc_group_create_out_t *out = opal_rpc_req_output(req);
    opal_rpc_group_t *primary = NULL;
    uint32_t me = UINT32_MAX;
    int rc = opal_rpc_group_primary(&primary);
    if (OPAL_SUCCESS == rc) {
        rc = opal_rpc_group_rank(primary, &me);
    }
    if (OPAL_SUCCESS != rc) {
        (void) opal_rpc_reply_error(req, rc, "group create: no primary group here");
        return;
    }
    bool listed = false;
    for (uint32_t i = 0; i < in->ranks.count; ++i) {
        listed |= in->ranks.elems[i] == me;
    }
    opal_rpc_group_t *g = NULL;
    if (in->drop) {
        /* Only the ranks that created it in this call drop it: another
         * rank's group of that name is its own. */
        g = listed ? opal_rpc_group_lookup(in->name) : NULL;
        if (NULL != g && RPC_GROUP_SUB == g->kind) {
            (void) opal_rpc_group_destroy(g);
            out->created.count = 1;
        }
    } else if (!listed) {
        /* The forward's tree is over the listed ranks: not one of them is
         * a caller's mistake (the check in opal_rpc_group_create_collective
         * keeps its own callers from it). */
        (void) opal_rpc_reply_error(req, OPAL_ERR_BAD_PARAM, "group create: not a listed rank");
        return;
    } else {
        rc = opal_rpc_group_create(in->name, in->ranks.elems, in->ranks.count, &g);
        if (OPAL_SUCCESS == rc) {
            out->created.count = 1;
            out->version = opal_rpc_group_version(g);
        } else if (OPAL_ERR_EXISTS == rc) {
            out->refused.count = 1;
        } else {
            (void) opal_rpc_reply_error(req, rc, "group create: refused here");
            return;
        }
    }
    out->created.elems = out->created.count > 0 ? &me : NULL;
    out->refused.elems = out->refused.count > 0 ? &me : NULL;
    rc = opal_rpc_reply_send(req);
    if (OPAL_SUCCESS != rc) {
        opal_output_verbose(1, opal_rpc_base_output, "rpc: group create: reply: %s",
                            opal_strerror(rc));
    }
    memset(out, 0, sizeof(*out));
}

/* Appends n ranks to a decoded array (its memory malloc'd). */
static int append(uint32_t **elems, uint32_t *count, const uint32_t *more, uint32_t n)
{
    if (0 == n) {
        return OPAL_SUCCESS;
    }
    uint32_t *grown = realloc(*elems, ((size_t) *count + n) * sizeof(uint32_t));
    if (NULL == grown) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    memcpy(grown + *count, more, n * sizeof(uint32_t));
    *elems = grown;
    *count += n;
    return OPAL_SUCCESS;
}

int opal_rpc_base_group_create_aggregate(void *out_, const void *child_, void *arg)
{
    rpc_group_create_out_t *out = out_;
    const rpc_group_create_out_t *child = child_;
    (void) arg;
    if (child->created.count > 0) {
        if (0 == out->created.count) {
            out->version = child->version;
        } else if (out->version != child->version) {
            out->versions_differ = true;
        }
    }
    out->versions_differ |= child->versions_differ;
    int rc = append(&out->created.elems, &out->created.count, child->created.elems,
                    child->created.count);
    if (OPAL_SUCCESS == rc) {
        rc = append(&out->refused.elems, &out->refused.count, child->refused.elems,
                    child->refused.count);
    }
    return rc;
}

/* ------------------------------------------------------------ the caller */

typedef struct {
    opal_rpc_context_t *ctx;
    char name[OPAL_RPC_GROUP_NAME_MAX + 1];
    uint32_t *ranks;
    uint32_t count;
    opal_rpc_group_create_cb_t cb;
    void *arg;
    int status;
    /* The primary ranks that failed or refused (what the callback gets). */
    uint32_t *failed;
    uint32_t nfailed;
} coll_t;

static void coll_finish(coll_t *c, opal_rpc_group_t *g)
{
    c->cb(g, c->status, c->failed, c->nfailed, c->arg);
    free(c->failed);
    free(c->ranks);
    free(c);
}

/* Every primary rank not in keep[0..n) (the root, in it, stays). */
static uint32_t *others(uint32_t size, const uint32_t *keep, uint32_t n, uint32_t *count)
{
    bool *in = calloc(size, sizeof(bool));
    uint32_t *out = malloc(((size_t) size + 1) * sizeof(uint32_t));
    *count = 0;
    if (NULL == in || NULL == out) {
        free(in);
        free(out);
        return NULL;
    }
    for (uint32_t i = 0; i < n; ++i) {
        in[keep[i]] = true;
    }
    for (uint32_t r = 0; r < size; ++r) {
        if (!in[r]) {
            out[(*count)++] = r;
        }
    }
    free(in);
    return out;
}

static int run(coll_t *c, const uint32_t *ranks, uint32_t count, bool drop,
               opal_rpc_corpc_cb_t done);

static void dropped(opal_rpc_corpc_t *co, int status, void *arg)
{
    coll_t *c = arg;
    if (OPAL_SUCCESS != status) {
        /* A member that cannot be reached now keeps what it created; it
         * is reported already, or it died since. */
        opal_output_verbose(1, opal_rpc_base_output, "rpc: group '%s': undoing the creation: %s",
                            c->name, opal_strerror(status));
    }
    opal_rpc_corpc_free(co);
    coll_finish(c, NULL);
}

static void created(opal_rpc_corpc_t *co, int status, void *arg)
{
    coll_t *c = arg;
    const rpc_group_create_out_t *out = opal_rpc_corpc_output(co);
    const uint32_t *failed = NULL;
    uint32_t nfailed = opal_rpc_corpc_failed(co, &failed);
    int rc = append(&c->failed, &c->nfailed, failed, nfailed);
    if (NULL != out && OPAL_SUCCESS == rc) {
        rc = append(&c->failed, &c->nfailed, out->refused.elems, out->refused.count);
    }
    bool complete = OPAL_SUCCESS == rc && OPAL_SUCCESS == status && NULL != out &&
                    out->created.count == c->count && !out->versions_differ;
    if (complete) {
        opal_rpc_corpc_free(co);
        c->status = OPAL_SUCCESS;
        coll_finish(c, opal_rpc_group_lookup(c->name));
        return;
    }
    c->status = OPAL_SUCCESS != rc                      ? rc
                : NULL != out && out->refused.count > 0 ? OPAL_ERR_EXISTS
                : OPAL_SUCCESS != status                ? status
                : NULL != out && out->versions_differ   ? OPAL_ERR_PROTOCOL
                                                        : OPAL_ERR_PEER_FAILED;
    opal_output_verbose(1, opal_rpc_base_output,
                        "rpc: group '%s': created at %u of %u members (%u failed or refused): %s",
                        c->name, NULL == out ? 0 : out->created.count, c->count, c->nfailed,
                        opal_strerror(c->status));
    if (NULL == out || 0 == out->created.count ||
        OPAL_SUCCESS != run(c, out->created.elems, out->created.count, true, dropped)) {
        opal_rpc_corpc_free(co);
        coll_finish(c, NULL);
        return;
    }
    opal_rpc_corpc_free(co);
}

/* A corpc of the group-create operation over ranks[0..count) (and the
 * caller, the root) of the primary group. */
static int run(coll_t *c, const uint32_t *ranks, uint32_t count, bool drop,
               opal_rpc_corpc_cb_t done)
{
    opal_rpc_group_t *primary = NULL;
    opal_rpc_corpc_t *co = NULL;
    int rc = opal_rpc_group_primary(&primary);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    uint32_t self = 0;
    (void) opal_rpc_group_rank(primary, &self);
    /* The root is the caller: a drop after the caller's own refusal still
     * runs from it (its handler leaves the caller's group alone). */
    uint32_t *keep = malloc(((size_t) count + 1) * sizeof(uint32_t));
    if (NULL == keep) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    memcpy(keep, ranks, count * sizeof(uint32_t));
    keep[count] = self;
    opal_rpc_corpc_opts_t opts = {0};
    uint32_t *excluded = others(primary->size, keep, count + 1, &opts.excluded_count);
    free(keep);
    if (NULL == excluded) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    opts.excluded = excluded;
    rc = opal_rpc_corpc_create(c->ctx, primary, OPAL_RPC_GROUP_CREATE_OPCODE, &opts, &co);
    free(excluded);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rpc_group_create_in_t *in = opal_rpc_corpc_input(co);
    in->name = c->name;
    in->ranks.elems = (uint32_t *) ranks;
    in->ranks.count = count;
    in->drop = drop;
    /* The input is encoded by the send: ranks may go with the caller. */
    rc = opal_rpc_corpc_send(co, done, c);
    in->ranks.elems = NULL;
    in->name = NULL;
    if (OPAL_SUCCESS != rc) {
        opal_rpc_corpc_free(co);
    }
    return rc;
}

int opal_rpc_group_create_collective(opal_rpc_context_t *ctx, const char *name,
                                     const uint32_t *ranks, uint32_t count,
                                     opal_rpc_group_create_cb_t cb, void *arg)
{
    opal_rpc_group_t *primary = NULL;
    uint32_t self = 0;
    if (NULL == ctx || NULL == cb) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (!opal_rpc_base_group_name_ok(name)) {
        opal_output(0,
                    "rpc: bad group name '%s' (1..%d characters of letters, digits, '_', '-', "
                    "'.')",
                    NULL == name ? "(null)" : name, OPAL_RPC_GROUP_NAME_MAX);
        return OPAL_ERR_BAD_PARAM;
    }
    int rc = opal_rpc_group_primary(&primary);
    if (OPAL_SUCCESS != rc || OPAL_SUCCESS != (rc = opal_rpc_group_rank(primary, &self))) {
        return rc;
    }
    if (NULL == ranks || 0 == count) {
        opal_output(0, "rpc: group '%s' has no ranks", name);
        return OPAL_ERR_BAD_PARAM;
    }
    bool listed = false;
    for (uint32_t i = 0; i < count; ++i) {
        if (ranks[i] >= primary->size) {
            opal_output(0, "rpc: group '%s': rank %u is not in the job (%u ranks)", name, ranks[i],
                        primary->size);
            return OPAL_ERR_BAD_PARAM;
        }
        for (uint32_t j = 0; j < i; ++j) {
            if (ranks[j] == ranks[i]) {
                opal_output(0, "rpc: group '%s': rank %u is listed twice", name, ranks[i]);
                return OPAL_ERR_BAD_PARAM;
            }
        }
        listed |= ranks[i] == self;
    }
    if (!listed) {
        opal_output(0, "rpc: group '%s': the caller (rank %u) is not one of its ranks", name, self);
        return OPAL_ERR_BAD_PARAM;
    }
    if (NULL != opal_rpc_group_lookup(name)) {
        return OPAL_ERR_EXISTS;
    }
    coll_t *c = calloc(1, sizeof(*c));
    if (NULL == c || NULL == (c->ranks = malloc(count * sizeof(uint32_t)))) {
        free(c);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    c->ctx = ctx;
    strcpy(c->name, name);
    memcpy(c->ranks, ranks, count * sizeof(uint32_t));
    c->count = count;
    c->cb = cb;
    c->arg = arg;
    rc = run(c, c->ranks, count, false, created);
    if (OPAL_SUCCESS != rc) {
        free(c->ranks);
        free(c);
    }
    return rc;
}
