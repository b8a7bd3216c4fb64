/*
 * bulk/copy, the requester's side: a transfer is cut into fragments; for
 * each, a receive for the reply is posted, then the request sent to the
 * origin's bulk service context. A fragment is done when both its send
 * and its reply completed; then the window moves on. Message buffers and
 * na op ids belong to the pooled bulk operation, created once.
 * Callbacks run from opal_na_trigger on the transfer's na context.
 */
#include "opal/opal_config.h"

#include <pthread.h>
#include <stdlib.h>

#include "opal/mca/bulk/copy/bulk_copy.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

#define COPY_MAX_WINDOW 64u

struct copy_xfer_t;

typedef struct copy_slot_t {
    struct copy_xfer_t *x;
    opal_na_op_id_t *send_id;
    opal_na_op_id_t *recv_id;
    void *req;
    void *req_data;
    void *rep;
    void *rep_data;
    size_t offset; /* of the fragment, from the transfer's start */
    size_t len;
    unsigned int waiting; /* of its send and its reply */
    bool busy;
} copy_slot_t;

typedef struct copy_xfer_t {
    opal_bulk_op_t *op;
    copy_state_t *cs;
    pthread_mutex_t lock;
    size_t issued; /* bytes whose fragment was issued */
    size_t frag;
    unsigned int window;
    unsigned int inflight;
    int error;
    copy_slot_t slots[COPY_MAX_WINDOW];
} copy_xfer_t;

/* ------------------------------------------------------- class set-up */

static int copy_class_init(opal_bulk_class_t *bc, void **state)
{
    opal_na_class_t *na = bc->na_class;
    size_t max_unexp = opal_na_msg_get_max_unexpected_size(na);
    size_t max_exp = opal_na_msg_get_max_expected_size(na);
    if (max_unexp <= BULK_COPY_REQ_HDR || max_exp <= BULK_COPY_REPLY_HDR) {
        opal_output_verbose(MCA_BASE_VERBOSE_COMPONENT, opal_bulk_base_output,
                            "copy: %s's messages (%zu / %zu bytes) are too small for its "
                            "headers",
                            opal_na_get_protocol(na), max_unexp, max_exp);
        return OPAL_ERR_NOT_AVAILABLE;
    }
    copy_state_t *cs = calloc(1, sizeof(*cs));
    if (NULL == cs) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    cs->bc = bc;
    size_t frag = 0 == mca_bulk_copy_vars.frag_size ? SIZE_MAX : mca_bulk_copy_vars.frag_size;
    cs->pull_frag = max_exp - BULK_COPY_REPLY_HDR < frag ? max_exp - BULK_COPY_REPLY_HDR : frag;
    cs->push_frag = max_unexp - BULK_COPY_REQ_HDR < frag ? max_unexp - BULK_COPY_REQ_HDR : frag;
    cs->max_tag = opal_na_msg_get_max_tag(na);
    atomic_init(&cs->next_tag, 1);
    int rc = mca_bulk_copy_service_start(cs);
    if (OPAL_SUCCESS != rc) {
        free(cs);
        return rc;
    }
    *state = cs;
    return OPAL_SUCCESS;
}

static void copy_class_fini(opal_bulk_class_t *bc, void *state)
{
    (void) bc;
    copy_state_t *cs = state;
    mca_bulk_copy_service_stop(cs);
    free(cs);
}

static bool copy_accepts(opal_bulk_class_t *bc, void *state, const opal_bulk_xfer_t *x,
                         const char **why)
{
    (void) bc;
    (void) state;
    (void) x;
    (void) why;
    /* Messages reach every origin; its service checks the handle. */
    return true;
}

static void copy_data_free(opal_bulk_class_t *bc, void *state, void *data)
{
    (void) state;
    copy_xfer_t *x = data;
    opal_na_class_t *na = bc->na_class;
    for (unsigned int i = 0; i < COPY_MAX_WINDOW; ++i) {
        copy_slot_t *s = &x->slots[i];
        (void) opal_na_op_destroy(na, s->send_id);
        (void) opal_na_op_destroy(na, s->recv_id);
        if (NULL != s->req) {
            opal_na_msg_buf_free(na, s->req, s->req_data);
        }
        if (NULL != s->rep) {
            opal_na_msg_buf_free(na, s->rep, s->rep_data);
        }
    }
    pthread_mutex_destroy(&x->lock);
    free(x);
}

/* ---------------------------------------------------------- transfers */

static void send_done(const opal_na_cb_info_t *info);
static void reply_done(const opal_na_cb_info_t *info);

/* Creates a slot's buffers and op ids the first time it is used. */
static int slot_setup(copy_slot_t *s, copy_state_t *cs)
{
    opal_na_class_t *na = cs->bc->na_class;
    if (NULL == s->send_id) {
        s->send_id = opal_na_op_create(na);
        s->recv_id = opal_na_op_create(na);
        s->req = opal_na_msg_buf_alloc(na, BULK_COPY_REQ_HDR + cs->push_frag, &s->req_data);
        s->rep = opal_na_msg_buf_alloc(na, BULK_COPY_REPLY_HDR + cs->pull_frag, &s->rep_data);
        if (NULL == s->send_id || NULL == s->recv_id || NULL == s->req || NULL == s->rep) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    return OPAL_SUCCESS;
}

/* Issues fragments while the window has room; under x->lock. */
static int issue(copy_xfer_t *x)
{
    opal_bulk_op_t *op = x->op;
    copy_state_t *cs = x->cs;
    opal_na_class_t *na = cs->bc->na_class;
    bool pull = OPAL_BULK_PULL == op->type;
    while (x->inflight < x->window && OPAL_SUCCESS == x->error && !opal_bulk_base_op_canceled(op) &&
           x->issued < op->size) {
        copy_slot_t *s = NULL;
        for (unsigned int i = 0; i < x->window; ++i) {
            if (!x->slots[i].busy) {
                s = &x->slots[i];
                break;
            }
        }
        int rc = slot_setup(s, cs);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
        size_t left = op->size - x->issued;
        s->offset = x->issued;
        s->len = left < x->frag ? left : x->frag;
        uint32_t tag = atomic_fetch_add_explicit(&cs->next_tag, 1, memory_order_relaxed);
        tag = (opal_na_tag_t) (tag % ((uint64_t) cs->max_tag + 1));
        rc = opal_na_msg_recv_expected(na, op->na_ctx, reply_done, s, s->rep,
                                       BULK_COPY_REPLY_HDR + (pull ? s->len : 0), s->rep_data,
                                       op->origin_addr, OPAL_NA_CONTEXT_ID_BULK, tag, s->recv_id);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
        size_t req_len = BULK_COPY_REQ_HDR + (pull ? 0 : s->len);
        const bulk_copy_req_t req = {.kind = pull ? BULK_COPY_KIND_PULL : BULK_COPY_KIND_PUSH,
                                     .reply_ctx = op->na_ctx->id,
                                     .tag = tag,
                                     .instance = op->origin->instance,
                                     .key = op->origin->key,
                                     .offset = op->origin_offset + s->offset,
                                     .length = s->len};
        bulk_copy_req_encode(&req, s->req);
        if (!pull) {
            /* The request buffer holds the header and push_frag bytes. */
            opal_bulk_base_copy_flat(op->local, op->local_offset + s->offset,
                                     (uint8_t *) s->req + BULK_COPY_REQ_HDR, s->len, false);
        }
        s->busy = true;
        s->waiting = 1;
        ++x->inflight;
        x->issued += s->len;
        rc = opal_na_msg_send_unexpected(na, op->na_ctx, send_done, s, s->req, req_len, s->req_data,
                                         op->origin_addr, OPAL_NA_CONTEXT_ID_BULK,
                                         BULK_COPY_REQ_TAG, s->send_id);
        if (OPAL_SUCCESS != rc) {
            /* The posted reply receive ends the slot, as canceled. */
            (void) opal_na_cancel(na, op->na_ctx, s->recv_id);
            return rc;
        }
        s->waiting = 2;
    }
    return OPAL_SUCCESS;
}

/* One of a slot's two operations ended with ret; under nothing. */
static void slot_step(copy_slot_t *s, int ret)
{
    copy_xfer_t *x = s->x;
    pthread_mutex_lock(&x->lock);
    if (OPAL_SUCCESS != ret && OPAL_SUCCESS == x->error) {
        x->error = ret;
    }
    if (0 == --s->waiting) {
        s->busy = false;
        --x->inflight;
        if (OPAL_SUCCESS == x->error) {
            int rc = issue(x);
            if (OPAL_SUCCESS != rc) {
                x->error = rc;
            }
        }
    }
    bool done = 0 == x->inflight;
    int err = x->error;
    pthread_mutex_unlock(&x->lock);
    if (done) {
        opal_bulk_base_op_finish(x->op, err);
    }
}

/* Runs from opal_na_trigger on the transfer's na context. */
static void send_done(const opal_na_cb_info_t *info)
{
    slot_step(info->arg, info->ret);
}

/* Runs from opal_na_trigger on the transfer's na context: checks the
 * origin's reply and, for a pull, places its bytes. */
static void reply_done(const opal_na_cb_info_t *info)
{
    copy_slot_t *s = info->arg;
    copy_xfer_t *x = s->x;
    opal_bulk_op_t *op = x->op;
    int ret = info->ret;
    if (OPAL_SUCCESS == ret) {
        bool pull = OPAL_BULK_PULL == op->type;
        size_t got = info->info.recv_expected.actual_size;
        int32_t status;
        char why[BULK_COPY_WHY_MAX];
        if (OPAL_SUCCESS != bulk_copy_reply_decode(s->rep, got, pull ? s->len : 0, &status, why)) {
            char name[256];
            opal_output(0, "bulk: copy: a malformed reply of %zu bytes from %s's bulk service: %s",
                        got,
                        opal_na_addr_name(op->bc->na_class, op->origin_addr, name, sizeof(name),
                                          "the origin"),
                        why);
            ret = OPAL_ERR_PROTOCOL;
        } else if (OPAL_SUCCESS != status) {
            opal_output_verbose(1, opal_bulk_base_output,
                                "copy: the origin refused a fragment of %zu bytes at "
                                "offset %zu: %s",
                                s->len, op->origin_offset + s->offset, opal_strerror(status));
            ret = status;
        } else if (pull) {
            opal_bulk_base_copy_flat(op->local, op->local_offset + s->offset,
                                     (uint8_t *) s->rep + BULK_COPY_REPLY_HDR, s->len, true);
        }
    }
    slot_step(s, ret);
}

static int copy_start(opal_bulk_class_t *bc, void *state, opal_bulk_op_t *op)
{
    (void) bc;
    copy_state_t *cs = state;
    copy_xfer_t *x = op->engine_data;
    if (NULL == x) {
        x = calloc(1, sizeof(*x));
        if (NULL == x) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        pthread_mutex_init(&x->lock, NULL);
        for (unsigned int i = 0; i < COPY_MAX_WINDOW; ++i) {
            x->slots[i].x = x;
        }
        op->engine_data = x;
    }
    x->op = op;
    x->cs = cs;
    x->issued = 0;
    x->inflight = 0;
    x->error = OPAL_SUCCESS;
    x->frag = OPAL_BULK_PULL == op->type ? cs->pull_frag : cs->push_frag;
    unsigned int w = mca_bulk_copy_vars.window;
    x->window = 0 == w ? 1 : w > COPY_MAX_WINDOW ? COPY_MAX_WINDOW : w;
    if (0 == op->size) {
        opal_bulk_base_op_finish(op, OPAL_SUCCESS);
        return OPAL_SUCCESS;
    }
    pthread_mutex_lock(&x->lock);
    int rc = issue(x);
    if (OPAL_SUCCESS != rc && x->inflight > 0) {
        x->error = rc;
        rc = OPAL_SUCCESS;
    }
    pthread_mutex_unlock(&x->lock);
    return rc;
}

static void copy_cancel(opal_bulk_class_t *bc, void *state, opal_bulk_op_t *op)
{
    (void) state;
    copy_xfer_t *x = op->engine_data;
    pthread_mutex_lock(&x->lock);
    for (unsigned int i = 0; i < x->window; ++i) {
        copy_slot_t *s = &x->slots[i];
        if (s->busy) {
            /* A posted receive can always be withdrawn; a send finishes
             * by itself. */
            (void) opal_na_cancel(bc->na_class, op->na_ctx, s->recv_id);
        }
    }
    pthread_mutex_unlock(&x->lock);
}

const opal_bulk_engine_t mca_bulk_copy_engine = {
    .name = "copy",
    .priority = 10,
    .uses_rma = false,
    .uses_service = true,
    .class_init = copy_class_init,
    .class_fini = copy_class_fini,
    .accepts = copy_accepts,
    .start = copy_start,
    .cancel = copy_cancel,
    .op_data_free = copy_data_free,
};
