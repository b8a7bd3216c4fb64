/*
 * bulk/rdma's transfers. Each pooled bulk operation keeps, once created,
 * the state below with one na op id per window slot, so a transfer
 * allocates nothing. Chunk callbacks run from opal_na_trigger on the
 * transfer's na context; the lock covers the walk and the slots against
 * the thread that started or cancels the transfer.
 */
#include "opal/opal_config.h"

#include <pthread.h>
#include <stdlib.h>

#include "opal/mca/bulk/rdma/bulk_rdma.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

#define RDMA_MAX_WINDOW 64u

struct rdma_xfer_t;

typedef struct rdma_slot_t {
    struct rdma_xfer_t *x;
    opal_na_op_id_t *id;
    bool busy;
} rdma_slot_t;

typedef struct rdma_xfer_t {
    opal_bulk_op_t *op;
    pthread_mutex_t lock;
    opal_bulk_walk_t walk;
    opal_na_segment_t local_one; /* regions when a handle has one na handle */
    opal_na_segment_t origin_one;
    size_t chunk;
    unsigned int window;
    unsigned int inflight;
    int error;
    rdma_slot_t slots[RDMA_MAX_WINDOW];
} rdma_xfer_t;

static bool rdma_accepts(opal_bulk_class_t *bc, void *state, const opal_bulk_xfer_t *x,
                         const char **why)
{
    (void) state;
    if (!opal_na_has_rma(bc->na_class)) {
        *why = "the na class has no put / get";
        return false;
    }
    if (0 == x->origin->mh_count) {
        *why = "the origin handle carries no na memory handle (its process has no RMA)";
        return false;
    }
    if (0 == x->local->mh_count) {
        *why = "the local handle is not registered";
        return false;
    }
    return true;
}

static void rdma_data_free(opal_bulk_class_t *bc, void *state, void *data)
{
    (void) state;
    rdma_xfer_t *x = data;
    for (unsigned int i = 0; i < RDMA_MAX_WINDOW; ++i) {
        if (NULL != x->slots[i].id) {
            (void) opal_na_op_destroy(bc->na_class, x->slots[i].id);
        }
    }
    pthread_mutex_destroy(&x->lock);
    free(x);
}

static void chunk_done(const opal_na_cb_info_t *info);

/* Issues chunks while the window has room; under x->lock. Returns the
 * error of an operation the transport refused (nothing issued for it). */
static int issue(rdma_xfer_t *x)
{
    opal_bulk_op_t *op = x->op;
    opal_na_class_t *na = op->bc->na_class;
    opal_bulk_piece_t p;
    while (x->inflight < x->window && OPAL_SUCCESS == x->error && !opal_bulk_base_op_canceled(op) &&
           opal_bulk_walk_next(&x->walk, x->chunk, &p)) {
        rdma_slot_t *s = NULL;
        for (unsigned int i = 0; i < x->window; ++i) {
            if (!x->slots[i].busy) {
                s = &x->slots[i];
                break;
            }
        }
        if (NULL == s->id) {
            s->id = opal_na_op_create(na);
            if (NULL == s->id) {
                return OPAL_ERR_OUT_OF_RESOURCE;
            }
        }
        opal_na_mem_handle_t *lmh = op->local->mhs[p.a_idx];
        opal_na_mem_handle_t *omh = op->origin->mhs[p.b_idx];
        int rc = OPAL_BULK_PULL == op->type
                     ? opal_na_get(na, op->na_ctx, chunk_done, s, lmh, p.a_off, omh, p.b_off, p.len,
                                   op->origin_addr, op->origin_id, s->id)
                     : opal_na_put(na, op->na_ctx, chunk_done, s, lmh, p.a_off, omh, p.b_off, p.len,
                                   op->origin_addr, op->origin_id, s->id);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
        s->busy = true;
        ++x->inflight;
    }
    return OPAL_SUCCESS;
}

/* Runs from opal_na_trigger on the transfer's na context. */
static void chunk_done(const opal_na_cb_info_t *info)
{
    rdma_slot_t *s = info->arg;
    rdma_xfer_t *x = s->x;
    pthread_mutex_lock(&x->lock);
    s->busy = false;
    --x->inflight;
    if (OPAL_SUCCESS != info->ret && OPAL_SUCCESS == x->error) {
        x->error = info->ret;
    }
    if (OPAL_SUCCESS == x->error) {
        int rc = issue(x);
        if (OPAL_SUCCESS != rc) {
            x->error = rc;
        }
    }
    bool done = 0 == x->inflight;
    int ret = x->error;
    pthread_mutex_unlock(&x->lock);
    if (done) {
        /* Nothing of the transfer is in flight: no callback of this
         * transfer touches x after this. */
        opal_bulk_base_op_finish(x->op, ret);
    }
}

/* The largest piece of op: the variable, or whole pieces where the na
 * class advises it and the user did not choose. */
static size_t chunk_for(const opal_bulk_op_t *op)
{
    if (0 == mca_bulk_rdma_vars.chunk_size) {
        return SIZE_MAX;
    }
    if (!mca_bulk_rdma_vars.chunk_size_chosen) {
        size_t advice = opal_na_rma_piece_max(op->bc->na_class, op->origin_addr);
        if (0 != advice) {
            return advice;
        }
    }
    return mca_bulk_rdma_vars.chunk_size;
}

static int rdma_start(opal_bulk_class_t *bc, void *state, opal_bulk_op_t *op)
{
    (void) bc;
    (void) state;
    rdma_xfer_t *x = op->engine_data;
    if (NULL == x) {
        x = calloc(1, sizeof(*x));
        if (NULL == x) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        pthread_mutex_init(&x->lock, NULL);
        for (unsigned int i = 0; i < RDMA_MAX_WINDOW; ++i) {
            x->slots[i].x = x;
        }
        op->engine_data = x;
    }
    x->op = op;
    x->inflight = 0;
    x->error = OPAL_SUCCESS;
    x->window = mca_bulk_rdma_vars.window;
    x->window = 0 == x->window ? 1 : x->window > RDMA_MAX_WINDOW ? RDMA_MAX_WINDOW : x->window;
    x->chunk = chunk_for(op);
    const opal_na_segment_t *lr = opal_bulk_base_mh_regions(op->local, &x->local_one);
    const opal_na_segment_t *orr = opal_bulk_base_mh_regions(op->origin, &x->origin_one);
    opal_bulk_walk_init(&x->walk, lr, op->local->mh_count, op->local_offset, orr,
                        op->origin->mh_count, op->origin_offset, op->size);
    if (0 == op->size) {
        opal_bulk_base_op_finish(op, OPAL_SUCCESS);
        return OPAL_SUCCESS;
    }
    pthread_mutex_lock(&x->lock);
    int rc = issue(x);
    bool nothing = 0 == x->inflight;
    if (OPAL_SUCCESS != rc && !nothing) {
        x->error = rc; /* the chunks in flight finish it */
        rc = OPAL_SUCCESS;
    }
    pthread_mutex_unlock(&x->lock);
    return rc;
}

static void rdma_cancel(opal_bulk_class_t *bc, void *state, opal_bulk_op_t *op)
{
    (void) state;
    rdma_xfer_t *x = op->engine_data;
    pthread_mutex_lock(&x->lock);
    for (unsigned int i = 0; i < x->window; ++i) {
        if (x->slots[i].busy) {
            (void) opal_na_cancel(bc->na_class, op->na_ctx, x->slots[i].id);
        }
    }
    pthread_mutex_unlock(&x->lock);
}

const opal_bulk_engine_t mca_bulk_rdma_engine = {
    .name = "rdma",
    .priority = 50,
    .uses_rma = true,
    .uses_service = false,
    .accepts = rdma_accepts,
    .start = rdma_start,
    .cancel = rdma_cancel,
    .op_data_free = rdma_data_free,
};
