/*
 * bulk/copy, the origin's side: the bulk service keeps receives posted on
 * the service context (OPAL_NA_CONTEXT_ID_BULK). Each request is checked
 * (its header, that the key names a handle of this class, the range and
 * the access) and answered with an expected message to the requester's
 * context on the request's tag. Replies come from a pool that grows
 * when all are in flight and is freed when the service stops.
 *
 * Everything here runs from opal_na_trigger on the service context, which
 * the class's poll hook calls (bulk_base_class.c): one thread at a time.
 */
#include "opal/opal_config.h"

#include <stdlib.h>

#include "opal/mca/bulk/copy/bulk_copy.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_timer.h"

#define SERVICE_MAX_RECVS 256u
/* How long stopping waits for replies still in flight. */
#define SERVICE_STOP_NS (5ull * 1000000000ull)

struct copy_service_t;

typedef struct service_recv_t {
    struct copy_service_t *svc;
    opal_na_op_id_t *id;
    void *buf;
    void *data;
    bool posted;
} service_recv_t;

typedef struct service_reply_t {
    struct service_reply_t *next;
    struct copy_service_t *svc;
    opal_na_op_id_t *id;
    void *buf;
    void *data;
    opal_na_addr_t *dest;
} service_reply_t;

typedef struct copy_service_t {
    copy_state_t *cs;
    size_t recv_size;
    size_t reply_size;
    unsigned int nrecvs;
    bool stopping;
    unsigned int replies_out;
    service_reply_t *free_replies;
    service_recv_t recvs[SERVICE_MAX_RECVS];
} copy_service_t;

static void request_arrived(const opal_na_cb_info_t *info);

static int post(service_recv_t *r)
{
    opal_bulk_class_t *bc = r->svc->cs->bc;
    int rc = opal_na_msg_recv_unexpected(bc->na_class, bc->service_ctx, request_arrived, r, r->buf,
                                         r->svc->recv_size, r->data, r->id);
    r->posted = OPAL_SUCCESS == rc;
    return rc;
}

static void reply_sent(const opal_na_cb_info_t *info)
{
    service_reply_t *rep = info->arg;
    copy_service_t *svc = rep->svc;
    if (OPAL_SUCCESS != info->ret) {
        opal_output_verbose(1, opal_bulk_base_output, "copy service: a reply was not delivered: %s",
                            opal_strerror(info->ret));
    }
    opal_na_addr_free(svc->cs->bc->na_class, rep->dest);
    rep->dest = NULL;
    rep->next = svc->free_replies;
    svc->free_replies = rep;
    --svc->replies_out;
}

static service_reply_t *reply_get(copy_service_t *svc)
{
    service_reply_t *rep = svc->free_replies;
    if (NULL != rep) {
        svc->free_replies = rep->next;
        return rep;
    }
    opal_na_class_t *na = svc->cs->bc->na_class;
    rep = calloc(1, sizeof(*rep));
    if (NULL == rep) {
        return NULL;
    }
    rep->svc = svc;
    rep->id = opal_na_op_create(na);
    rep->buf = opal_na_msg_buf_alloc(na, svc->reply_size, &rep->data);
    if (NULL == rep->id || NULL == rep->buf) {
        (void) opal_na_op_destroy(na, rep->id);
        opal_na_msg_buf_free(na, rep->buf, rep->data);
        free(rep);
        return NULL;
    }
    return rep;
}

static void reply_free(copy_service_t *svc, service_reply_t *rep)
{
    opal_na_class_t *na = svc->cs->bc->na_class;
    (void) opal_na_op_destroy(na, rep->id);
    opal_na_msg_buf_free(na, rep->buf, rep->data);
    free(rep);
}

/* Checks a request against the handle its key names; the status the
 * requester gets. *h (a reference) is set on success. */
static int check_request(copy_service_t *svc, uint8_t kind, uint64_t instance, uint64_t key,
                         uint64_t offset, uint64_t length, opal_bulk_t **h)
{
    opal_bulk_class_t *bc = svc->cs->bc;
    *h = NULL;
    if (instance != bc->instance) {
        return OPAL_ERR_NOT_FOUND; /* a handle of another process or class */
    }
    opal_bulk_t *handle = opal_bulk_base_handle_lookup(bc, key);
    if (NULL == handle) {
        return OPAL_ERR_NOT_FOUND;
    }
    unsigned int need = BULK_COPY_KIND_PULL == kind ? OPAL_BULK_READ_ONLY : OPAL_BULK_WRITE_ONLY;
    int rc = OPAL_SUCCESS;
    if (0 == (handle->flags & need)) {
        rc = OPAL_ERR_PERM;
    } else if (offset > handle->size || length > handle->size - offset) {
        rc = OPAL_ERR_BAD_PARAM;
    }
    if (OPAL_SUCCESS != rc) {
        (void) opal_bulk_free(handle);
        return rc;
    }
    *h = handle;
    return OPAL_SUCCESS;
}

/* Serves one request held in r->buf (size bytes) from source. */
static void serve(copy_service_t *svc, const void *buf, size_t size, opal_na_addr_t *source)
{
    opal_bulk_class_t *bc = svc->cs->bc;
    opal_na_class_t *na = bc->na_class;
    const bulk_copy_limits_t limits = {.max_tag = svc->cs->max_tag,
                                       .pull_frag = svc->cs->pull_frag,
                                       .push_frag = svc->cs->push_frag};
    bulk_copy_req_t req;
    char why[BULK_COPY_WHY_MAX];
    if (OPAL_SUCCESS != bulk_copy_req_decode(buf, size, &limits, &req, why)) {
        /* Not a request this build could have sent: nobody to answer. */
        char name[256];
        opal_output(0, "bulk: copy service: dropped a malformed request of %zu bytes from %s: %s",
                    size, opal_na_addr_name(na, source, name, sizeof(name), "an unnamed peer"),
                    why);
        return;
    }
    bool pull = BULK_COPY_KIND_PULL == req.kind;
    uint64_t offset = req.offset, length = req.length;
    opal_bulk_t *h = NULL;
    int status = check_request(svc, req.kind, req.instance, req.key, offset, length, &h);
    if (OPAL_SUCCESS != status && opal_output_check_verbosity(1, opal_bulk_base_output)) {
        char name[256];
        opal_output_verbose(1, opal_bulk_base_output,
                            "copy service: refused %s a %s of %llu bytes at offset %llu of "
                            "handle %llu: %s",
                            opal_na_addr_name(na, source, name, sizeof(name), "an unnamed peer"),
                            pull ? "pull" : "push", (unsigned long long) length,
                            (unsigned long long) offset, (unsigned long long) req.key,
                            opal_strerror(status));
    }
    service_reply_t *rep = reply_get(svc);
    if (NULL == rep) {
        opal_output(0, "bulk: copy service: out of memory for a reply");
        (void) opal_bulk_free(h);
        return;
    }
    size_t reply_len = BULK_COPY_REPLY_HDR;
    bulk_copy_reply_encode(status, rep->buf);
    if (NULL != h) {
        if (pull) {
            /* length is at most pull_frag, which the reply buffer holds. */
            opal_bulk_base_copy_flat(h, offset, (uint8_t *) rep->buf + BULK_COPY_REPLY_HDR, length,
                                     false);
            reply_len += length;
        } else {
            opal_bulk_base_copy_flat(h, offset, (void *) req.data, length, true);
        }
        (void) opal_bulk_free(h);
    }
    int rc = opal_na_addr_dup(na, source, &rep->dest);
    if (OPAL_SUCCESS == rc) {
        rc = opal_na_msg_send_expected(na, bc->service_ctx, reply_sent, rep, rep->buf, reply_len,
                                       rep->data, rep->dest, req.reply_ctx, req.tag, rep->id);
    }
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "bulk: copy service: cannot send a reply: %s", opal_strerror(rc));
        opal_na_addr_free(na, rep->dest);
        rep->dest = NULL;
        rep->next = svc->free_replies;
        svc->free_replies = rep;
        return;
    }
    ++svc->replies_out;
}

/* Runs from opal_na_trigger on the service context. */
static void request_arrived(const opal_na_cb_info_t *info)
{
    service_recv_t *r = info->arg;
    copy_service_t *svc = r->svc;
    opal_na_class_t *na = svc->cs->bc->na_class;
    r->posted = false;
    if (OPAL_SUCCESS == info->ret) {
        serve(svc, r->buf, info->info.recv_unexpected.actual_size,
              info->info.recv_unexpected.source);
    } else if (OPAL_ERR_CANCELED != info->ret) {
        opal_output_verbose(1, opal_bulk_base_output, "copy service: a receive failed: %s",
                            opal_strerror(info->ret));
    }
    opal_na_addr_free(na, info->info.recv_unexpected.source);
    if (!svc->stopping && OPAL_ERR_CANCELED != info->ret) {
        int rc = post(r);
        if (OPAL_SUCCESS != rc) {
            opal_output(0, "bulk: copy service: cannot post a receive again: %s",
                        opal_strerror(rc));
        }
    }
}

int mca_bulk_copy_service_start(copy_state_t *cs)
{
    opal_bulk_class_t *bc = cs->bc;
    opal_na_class_t *na = bc->na_class;
    if (NULL == bc->service_ctx) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    copy_service_t *svc = calloc(1, sizeof(*svc));
    if (NULL == svc) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    svc->cs = cs;
    svc->recv_size = BULK_COPY_REQ_HDR + cs->push_frag;
    svc->reply_size = BULK_COPY_REPLY_HDR + cs->pull_frag;
    unsigned int n = mca_bulk_copy_vars.service_recvs;
    svc->nrecvs = 0 == n ? 1 : n > SERVICE_MAX_RECVS ? SERVICE_MAX_RECVS : n;
    cs->service = svc;
    int rc = OPAL_SUCCESS;
    for (unsigned int i = 0; i < svc->nrecvs && OPAL_SUCCESS == rc; ++i) {
        service_recv_t *r = &svc->recvs[i];
        r->svc = svc;
        r->id = opal_na_op_create(na);
        r->buf = opal_na_msg_buf_alloc(na, svc->recv_size, &r->data);
        rc = NULL == r->id || NULL == r->buf ? OPAL_ERR_OUT_OF_RESOURCE : post(r);
    }
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "bulk: copy service: cannot post its receives on %s: %s",
                    opal_na_get_protocol(na), opal_strerror(rc));
        mca_bulk_copy_service_stop(cs);
    }
    return rc;
}

void mca_bulk_copy_service_stop(copy_state_t *cs)
{
    copy_service_t *svc = cs->service;
    if (NULL == svc) {
        return;
    }
    opal_bulk_class_t *bc = cs->bc;
    opal_na_class_t *na = bc->na_class;
    svc->stopping = true;
    for (unsigned int i = 0; i < svc->nrecvs; ++i) {
        if (svc->recvs[i].posted) {
            (void) opal_na_cancel(na, bc->service_ctx, svc->recvs[i].id);
        }
    }
    /* The canceled receives and the replies in flight complete on the
     * service context: run them before freeing what they use. */
    uint64_t deadline = opal_timer_ns() + SERVICE_STOP_NS;
    for (;;) {
        bool busy = svc->replies_out > 0;
        for (unsigned int i = 0; i < svc->nrecvs && !busy; ++i) {
            busy = svc->recvs[i].posted;
        }
        if (!busy || opal_timer_ns() > deadline) {
            if (busy) {
                opal_output(0, "bulk: copy service: stopping with operations still in flight "
                               "after 5 s");
            }
            break;
        }
        unsigned int count = 0;
        (void) na->ops->poll(na, bc->service_ctx, &count);
        (void) opal_na_trigger(bc->service_ctx, 0, NULL);
    }
    for (unsigned int i = 0; i < svc->nrecvs; ++i) {
        service_recv_t *r = &svc->recvs[i];
        if (r->posted) {
            continue; /* still the transport's: leaked rather than freed under it */
        }
        (void) opal_na_op_destroy(na, r->id);
        if (NULL != r->buf) {
            opal_na_msg_buf_free(na, r->buf, r->data);
        }
    }
    while (NULL != svc->free_replies) {
        service_reply_t *rep = svc->free_replies;
        svc->free_replies = rep->next;
        reply_free(svc, rep);
    }
    free(svc);
    cs->service = NULL;
}
