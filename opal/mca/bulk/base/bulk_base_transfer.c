/*
 * Transfers: the checks every transfer passes, the choice of engine, and
 * the two ways the base moves bytes itself (a memcpy when the origin
 * handle is this process's, a copy out of the inline bytes of an eager
 * handle). Either way the completion is queued on the caller's na
 * context, so callbacks always run from opal_na_trigger.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <string.h>

#include "opal/mca/bulk/base/base.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

static const char *type_name(opal_bulk_op_type_t type)
{
    return OPAL_BULK_PULL == type ? "pull" : "push";
}

/* Access a transfer needs: a pull reads the origin and writes the local
 * handle, a push the other way. */
static int check_access(opal_bulk_op_type_t type, const opal_bulk_t *origin,
                        const opal_bulk_t *local)
{
    unsigned int need_origin = OPAL_BULK_PULL == type ? OPAL_BULK_READ_ONLY : OPAL_BULK_WRITE_ONLY;
    unsigned int need_local = OPAL_BULK_PULL == type ? OPAL_BULK_WRITE_ONLY : OPAL_BULK_READ_ONLY;
    if (0 == (origin->flags & need_origin)) {
        opal_output(0, "bulk: %s refused: the origin handle is %s", type_name(type),
                    OPAL_BULK_READ_ONLY == origin->flags ? "read-only" : "write-only");
        return OPAL_ERR_BAD_PARAM;
    }
    if (0 == (local->flags & need_local)) {
        opal_output(0, "bulk: %s refused: the local handle is %s", type_name(type),
                    OPAL_BULK_READ_ONLY == local->flags ? "read-only" : "write-only");
        return OPAL_ERR_BAD_PARAM;
    }
    return OPAL_SUCCESS;
}

static int check_range(opal_bulk_op_type_t type, const char *which, const opal_bulk_t *h,
                       size_t offset, size_t size)
{
    if (offset > h->size || size > h->size - offset) {
        opal_output(0,
                    "bulk: %s of %zu bytes at offset %zu refused: past the end of the %s "
                    "handle (%zu bytes)",
                    type_name(type), size, offset, which, h->size);
        return OPAL_ERR_BAD_PARAM;
    }
    return OPAL_SUCCESS;
}

/* memcpy between two handles of this process. */
static void self_copy(opal_bulk_op_t *op)
{
    opal_bulk_walk_t w;
    opal_bulk_walk_init(&w, op->origin->segs, op->origin->count, op->origin_offset, op->local->segs,
                        op->local->count, op->local_offset, op->size);
    opal_bulk_piece_t p;
    while (opal_bulk_walk_next(&w, SIZE_MAX, &p)) {
        char *o = (char *) op->origin->segs[p.a_idx].base + p.a_off;
        char *l = (char *) op->local->segs[p.b_idx].base + p.b_off;
        if (OPAL_BULK_PULL == op->type) {
            memmove(l, o, p.len);
        } else {
            memmove(o, l, p.len);
        }
    }
}

/* Picks the engine for op; why (NULL: not wanted) says why, for the
 * verbose output. NULL engine with op->engine_name set: the base copies
 * itself. */
static int choose(opal_bulk_class_t *bc, opal_bulk_op_t *op, char *why, size_t why_size)
{
    opal_bulk_t *origin = op->origin;
    if (!origin->local && origin->instance == bc->instance &&
        (NULL == op->origin_addr || opal_na_addr_is_self(bc->na_class, op->origin_addr))) {
        /* A handle of this process that went out and came back (no
         * address: the caller says the origin is this process, as rpc's
         * loopback requests do). */
        opal_bulk_t *mine = opal_bulk_base_handle_lookup(bc, origin->key);
        if (NULL == mine) {
            opal_output(0,
                        "bulk: %s refused: the origin handle is this process's, but it was "
                        "freed",
                        type_name(op->type));
            return OPAL_ERR_NOT_FOUND;
        }
        (void) opal_bulk_free(op->origin);
        op->origin = origin = mine;
    }
    if (origin->local) {
        op->engine = NULL;
        op->engine_name = "self";
        if (NULL != why) {
            snprintf(why, why_size, "the origin handle is this process's");
        }
        return OPAL_SUCCESS;
    }
    if (OPAL_BULK_PULL == op->type && NULL != origin->eager) {
        op->engine = NULL;
        op->engine_name = "eager";
        if (NULL != why) {
            snprintf(why, why_size, "the origin handle carried its bytes inline");
        }
        return OPAL_SUCCESS;
    }
    if (NULL == op->origin_addr) {
        opal_output(0, "bulk: %s refused: no origin address (and the handle is not bound)",
                    type_name(op->type));
        return OPAL_ERR_BAD_PARAM;
    }
    opal_bulk_xfer_t x = {.type = op->type, .origin = origin, .local = op->local};
    /* Reasons are kept also when not verbose: the error below says them. */
    char none[512];
    char *say = NULL == why ? none : why;
    size_t say_size = NULL == why ? sizeof(none) : why_size;
    size_t used = 0;
    say[0] = '\0';
    for (int i = 0; i < bc->engine_count; ++i) {
        const char *no = NULL;
        const opal_bulk_engine_t *e = bc->engines[i];
        if (e->accepts(bc, bc->engine_state[i], &x, &no)) {
            op->engine = e;
            op->engine_name = e->name;
            if (NULL != why) {
                snprintf(why + used, why_size - used, "%shighest priority engine that accepts it",
                         0 == used ? "" : "; ");
            }
            return OPAL_SUCCESS;
        }
        int n = snprintf(say + used, say_size - used, "%snot %s: %s", 0 == used ? "" : "; ",
                         e->name, no);
        if (n > 0 && (size_t) n < say_size - used) {
            used += (size_t) n;
        }
    }
    opal_output(0, "bulk: no engine can %s between these handles over %s (%s)", type_name(op->type),
                opal_na_get_protocol(bc->na_class), say);
    return OPAL_ERR_NOT_SUPPORTED;
}

int opal_bulk_transfer(opal_bulk_class_t *bc, opal_na_context_t *na_ctx, opal_bulk_cb_t callback,
                       void *arg, opal_bulk_op_type_t type, opal_na_addr_t *origin_addr,
                       uint8_t origin_id, opal_bulk_t *origin_handle, size_t origin_offset,
                       opal_bulk_t *local_handle, size_t local_offset, size_t size,
                       opal_bulk_op_t **op_out)
{
    if (NULL != op_out) {
        *op_out = NULL;
    }
    if (NULL == bc || NULL == na_ctx || na_ctx->na_class != bc->na_class || NULL == origin_handle ||
        NULL == local_handle || (OPAL_BULK_PULL != type && OPAL_BULK_PUSH != type)) {
        opal_output(0, "bulk: transfer needs a bulk class, a context of its na class, both "
                       "handles and OPAL_BULK_PULL or OPAL_BULK_PUSH");
        return OPAL_ERR_BAD_PARAM;
    }
    if (!local_handle->local) {
        opal_output(0, "bulk: %s refused: the local handle is another process's", type_name(type));
        return OPAL_ERR_BAD_PARAM;
    }
    int rc = check_range(type, "origin", origin_handle, origin_offset, size);
    if (OPAL_SUCCESS == rc) {
        rc = check_range(type, "local", local_handle, local_offset, size);
    }
    if (OPAL_SUCCESS == rc) {
        rc = check_access(type, origin_handle, local_handle);
    }
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    /* A bound handle names its origin itself: a process it was forwarded
     * to transfers with the origin, not with whoever sent it. */
    if (NULL != origin_handle->addr) {
        origin_addr = origin_handle->addr;
        origin_id = origin_handle->ctx_id;
    }
    opal_bulk_op_t *op = opal_bulk_base_op_get(bc);
    if (NULL == op) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    op->na_ctx = na_ctx;
    op->callback = callback;
    op->arg = arg;
    op->type = type;
    op->origin_id = origin_id;
    op->origin_offset = origin_offset;
    op->local_offset = local_offset;
    op->size = size;
    op->engine = NULL;
    op->engine_name = NULL;
    op->origin_addr = NULL;
    if (NULL != origin_addr) {
        rc = opal_na_addr_dup(bc->na_class, origin_addr, &op->origin_addr);
        if (OPAL_SUCCESS != rc) {
            op->origin = op->local = NULL;
            opal_bulk_base_op_put(op);
            return rc;
        }
    }
    (void) opal_bulk_ref_incr(origin_handle);
    (void) opal_bulk_ref_incr(local_handle);
    op->origin = origin_handle;
    op->local = local_handle;
    /* The reasons are written only when someone reads them. */
    bool verbose = opal_output_check_verbosity(MCA_BASE_VERBOSE_COMPONENT, opal_bulk_base_output);
    char why[256];
    rc = choose(bc, op, verbose ? why : NULL, sizeof(why));
    if (OPAL_SUCCESS != rc) {
        opal_bulk_base_op_put(op);
        return rc;
    }
    if (verbose) {
        opal_output_verbose(MCA_BASE_VERBOSE_COMPONENT, opal_bulk_base_output,
                            "%s of %zu bytes over %s by %s: %s", type_name(type), size,
                            opal_na_get_protocol(bc->na_class), op->engine_name, why);
    }
    opal_bulk_base_op_arm(op);
    atomic_fetch_add_explicit(&bc->pending, 1, memory_order_acq_rel);
    if (NULL != op_out) {
        *op_out = op;
    }
    if (NULL == op->engine) {
        if (0 == strcmp(op->engine_name, "self")) {
            self_copy(op);
        } else {
            opal_bulk_base_copy_flat(op->local, local_offset,
                                     (char *) op->origin->eager + origin_offset, size, true);
        }
        opal_bulk_base_op_finish(op, OPAL_SUCCESS);
        return OPAL_SUCCESS;
    }
    int idx = 0;
    while (bc->engines[idx] != op->engine) {
        ++idx;
    }
    if (op->engine_data_owner != op->engine && NULL != op->engine_data) {
        /* Data of the engine that ran this op last time: not this one's. */
        for (int i = 0; i < bc->engine_count; ++i) {
            if (bc->engines[i] == op->engine_data_owner &&
                NULL != op->engine_data_owner->op_data_free) {
                op->engine_data_owner->op_data_free(bc, bc->engine_state[i], op->engine_data);
            }
        }
        op->engine_data = NULL;
    }
    op->engine_data_owner = op->engine;
    rc = op->engine->start(bc, bc->engine_state[idx], op);
    if (OPAL_SUCCESS != rc) {
        if (NULL != op_out) {
            *op_out = NULL;
        }
        atomic_store_explicit(&op->super.state, OPAL_NA_OP_IDLE, memory_order_release);
        atomic_fetch_sub_explicit(&bc->pending, 1, memory_order_acq_rel);
        opal_bulk_base_op_put(op);
    }
    return rc;
}
