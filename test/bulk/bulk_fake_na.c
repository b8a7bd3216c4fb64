/*
 * The bulk tests' in-process na class (bulk_fake_na.h). Every
 * operation completes through the na base's queues, exactly once, as
 * with a real component: sends at once, receives when polled with a
 * matching message there, put / get at once or (deferred) at the next poll.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/bulk/base/base.h"
#include "opal/util/opal_cursor.h"
#include "opal/util/opal_error.h"
#include "test/bulk/bulk_fake_na.h"

struct opal_na_addr_t {
    int ep;
    int refs;
};

struct opal_na_mem_handle_t {
    int ep;
    unsigned long flags;
    uint32_t count;
    size_t size;
    opal_na_segment_t *segs;
};

typedef struct fake_msg_t {
    struct fake_msg_t *next;
    int src_ep;
    uint8_t src_id;
    opal_na_tag_t tag;
    size_t len;
    unsigned char data[];
} fake_msg_t;

typedef struct fake_op_t {
    opal_na_op_id_t super;
    struct fake_op_t *next;
    void *buf;
    size_t size;
    int src_ep;
    uint8_t src_id;
    opal_na_tag_t tag;
    /* deferred RMA */
    bool put;
    opal_na_mem_handle_t *local;
    size_t local_off;
    opal_na_mem_handle_t *remote;
    size_t remote_off;
    size_t len;
} fake_op_t;

typedef struct fake_ctx_t {
    fake_msg_t *unexp;
    fake_msg_t *exp;
    fake_op_t *posted_unexp;
    fake_op_t *posted_exp;
    fake_op_t *deferred;
} fake_ctx_t;

typedef struct fake_ep_t {
    int ep;
    fake_na_opts_t opts;
    opal_na_class_t *cls;
} fake_ep_t;

static fake_ep_t *eps[FAKE_NA_MAX_EP];
static unsigned int dropped;
static unsigned int rma_ops;

static fake_ep_t *ep_of(const opal_na_class_t *cls)
{
    return cls->plugin;
}

/* Appends to a singly linked list through next (small lists). */
#define LIST_APPEND(head, item)                                                                    \
    do {                                                                                           \
        __typeof__(head) *at_ = &(head);                                                           \
        while (NULL != *at_) {                                                                     \
            at_ = &(*at_)->next;                                                                   \
        }                                                                                          \
        (item)->next = NULL;                                                                       \
        *at_ = (item);                                                                             \
    } while (0)

static void complete(opal_na_op_id_t *op, int ret)
{
    bool canceled = false;
    if (opal_na_base_op_claim(op, &canceled)) {
        opal_na_base_op_complete(op, canceled ? OPAL_ERR_CANCELED : ret);
    }
}

/* ------------------------------------------------------------ lifecycle */

static int f_initialize(opal_na_class_t *cls, const opal_na_info_t *info, bool listen)
{
    (void) cls, (void) info, (void) listen;
    return OPAL_SUCCESS;
}

static int f_finalize(opal_na_class_t *cls)
{
    (void) cls;
    return OPAL_SUCCESS;
}

static int f_context_create(opal_na_class_t *cls, opal_na_context_t *ctx)
{
    (void) cls;
    ctx->plugin = calloc(1, sizeof(fake_ctx_t));
    return NULL == ctx->plugin ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;
}

static int f_context_destroy(opal_na_class_t *cls, opal_na_context_t *ctx)
{
    (void) cls;
    fake_ctx_t *fc = ctx->plugin;
    if (NULL != fc->posted_unexp || NULL != fc->posted_exp || NULL != fc->deferred) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    for (fake_msg_t *m = fc->unexp, *n; NULL != m; m = n) {
        n = m->next;
        free(m);
    }
    for (fake_msg_t *m = fc->exp, *n; NULL != m; m = n) {
        n = m->next;
        free(m);
    }
    free(fc);
    return OPAL_SUCCESS;
}

/* ------------------------------------------------------------ addresses */

static opal_na_addr_t *addr_new(int ep)
{
    opal_na_addr_t *a = calloc(1, sizeof(*a));
    if (NULL != a) {
        a->ep = ep;
        a->refs = 1;
    }
    return a;
}

static int f_addr_lookup(opal_na_class_t *cls, const char *uri, opal_na_addr_t **addr)
{
    (void) cls;
    int ep = atoi(uri);
    if (ep < 0 || ep >= FAKE_NA_MAX_EP || NULL == eps[ep]) {
        return OPAL_ERR_UNREACH;
    }
    *addr = addr_new(ep);
    return NULL == *addr ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;
}

static int f_addr_self(opal_na_class_t *cls, opal_na_addr_t **addr)
{
    *addr = addr_new(ep_of(cls)->ep);
    return NULL == *addr ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;
}

static int f_addr_dup(opal_na_class_t *cls, opal_na_addr_t *addr, opal_na_addr_t **new_addr)
{
    (void) cls;
    ++addr->refs;
    *new_addr = addr;
    return OPAL_SUCCESS;
}

static void f_addr_free(opal_na_class_t *cls, opal_na_addr_t *addr)
{
    (void) cls;
    if (0 == --addr->refs) {
        free(addr);
    }
}

static bool f_addr_cmp(opal_na_class_t *cls, opal_na_addr_t *a, opal_na_addr_t *b)
{
    (void) cls;
    return a->ep == b->ep;
}

static bool f_addr_is_self(opal_na_class_t *cls, opal_na_addr_t *addr)
{
    return addr->ep == ep_of(cls)->ep;
}

static int f_addr_to_string(opal_na_class_t *cls, char *buf, size_t *size, opal_na_addr_t *addr)
{
    (void) cls;
    char s[16];
    int n = snprintf(s, sizeof(s), "%d", addr->ep);
    if (NULL == buf || *size < (size_t) n + 1) {
        *size = (size_t) n + 1;
        return OPAL_ERR_TRUNCATED;
    }
    memcpy(buf, s, (size_t) n + 1);
    *size = (size_t) n + 1;
    return OPAL_SUCCESS;
}

static size_t f_addr_ser_size(opal_na_class_t *cls, opal_na_addr_t *addr)
{
    (void) cls, (void) addr;
    return 4;
}

static int f_addr_serialize(opal_na_class_t *cls, void *buf, size_t size, opal_na_addr_t *addr)
{
    (void) cls;
    opal_cursor_t c;
    opal_cursor_init_write(&c, buf, size);
    opal_cursor_put_u32(&c, (uint32_t) addr->ep);
    return opal_cursor_ok(&c) ? OPAL_SUCCESS : OPAL_ERR_TRUNCATED;
}

static int f_addr_deserialize(opal_na_class_t *cls, opal_na_addr_t **addr, const void *buf,
                              size_t size)
{
    (void) cls;
    opal_cursor_t c;
    opal_cursor_init_read(&c, buf, size);
    uint32_t ep = opal_cursor_get_u32(&c);
    if (!opal_cursor_done(&c) || ep >= FAKE_NA_MAX_EP || NULL == eps[ep]) {
        return OPAL_ERR_BAD_PARAM;
    }
    *addr = addr_new((int) ep);
    return NULL == *addr ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;
}

/* --------------------------------------------------------------- limits */

static size_t f_max_msg(const opal_na_class_t *cls)
{
    return ep_of(cls)->opts.max_msg;
}

static opal_na_tag_t f_max_tag(const opal_na_class_t *cls)
{
    (void) cls;
    return 1u << 30;
}

/* ------------------------------------------------------------- messages */

static int deliver(opal_na_class_t *cls, const void *buf, size_t size, opal_na_addr_t *dest,
                   uint8_t dest_id, opal_na_tag_t tag, bool expected, opal_na_context_t *ctx,
                   opal_na_op_id_t *op)
{
    fake_ep_t *to = eps[dest->ep];
    opal_na_context_t *dctx = NULL == to ? NULL : opal_na_base_context_get(to->cls, dest_id);
    if (NULL == dctx) {
        ++dropped;
    } else {
        fake_msg_t *m = malloc(sizeof(*m) + size);
        if (NULL == m) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        m->src_ep = ep_of(cls)->ep;
        m->src_id = ctx->id;
        m->tag = tag;
        m->len = size;
        if (size > 0) {
            memcpy(m->data, buf, size);
        }
        fake_ctx_t *fc = dctx->plugin;
        if (expected) {
            LIST_APPEND(fc->exp, m);
        } else {
            LIST_APPEND(fc->unexp, m);
        }
    }
    complete(op, OPAL_SUCCESS);
    return OPAL_SUCCESS;
}

static int f_send_unexpected(opal_na_class_t *cls, opal_na_context_t *ctx, const void *buf,
                             size_t size, void *plugin_data, opal_na_addr_t *dest, uint8_t dest_id,
                             opal_na_tag_t tag, opal_na_op_id_t *op)
{
    (void) plugin_data;
    return deliver(cls, buf, size, dest, dest_id, tag, false, ctx, op);
}

static int f_send_expected(opal_na_class_t *cls, opal_na_context_t *ctx, const void *buf,
                           size_t size, void *plugin_data, opal_na_addr_t *dest, uint8_t dest_id,
                           opal_na_tag_t tag, opal_na_op_id_t *op)
{
    (void) plugin_data;
    return deliver(cls, buf, size, dest, dest_id, tag, true, ctx, op);
}

static int f_recv_unexpected(opal_na_class_t *cls, opal_na_context_t *ctx, void *buf, size_t size,
                             void *plugin_data, opal_na_op_id_t *op)
{
    (void) cls, (void) plugin_data;
    fake_op_t *f = (fake_op_t *) op;
    f->buf = buf;
    f->size = size;
    LIST_APPEND(((fake_ctx_t *) ctx->plugin)->posted_unexp, f);
    return OPAL_SUCCESS;
}

static int f_recv_expected(opal_na_class_t *cls, opal_na_context_t *ctx, void *buf, size_t size,
                           void *plugin_data, opal_na_addr_t *source, uint8_t source_id,
                           opal_na_tag_t tag, opal_na_op_id_t *op)
{
    (void) cls, (void) plugin_data;
    fake_op_t *f = (fake_op_t *) op;
    f->buf = buf;
    f->size = size;
    f->src_ep = source->ep;
    f->src_id = source_id;
    f->tag = tag;
    LIST_APPEND(((fake_ctx_t *) ctx->plugin)->posted_exp, f);
    return OPAL_SUCCESS;
}

/* -------------------------------------------------------- memory handles */

static int mh_new(opal_na_class_t *cls, const opal_na_segment_t *segs, size_t count,
                  unsigned long flags, opal_na_mem_handle_t **mh)
{
    opal_na_mem_handle_t *m = calloc(1, sizeof(*m));
    if (NULL == m || NULL == (m->segs = calloc(count, sizeof(*segs)))) {
        free(m);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    m->ep = NULL == cls ? -1 : ep_of(cls)->ep;
    m->flags = flags;
    m->count = (uint32_t) count;
    for (size_t i = 0; i < count; ++i) {
        m->segs[i] = segs[i];
        m->size += segs[i].len;
    }
    *mh = m;
    return OPAL_SUCCESS;
}

static int f_mh_create(opal_na_class_t *cls, void *buf, size_t size, unsigned long flags,
                       opal_na_mem_handle_t **mh)
{
    opal_na_segment_t s = {.base = buf, .len = size};
    return mh_new(cls, &s, 1, flags, mh);
}

static int f_mh_create_segments(opal_na_class_t *cls, const opal_na_segment_t *segments,
                                size_t count, unsigned long flags, opal_na_mem_handle_t **mh)
{
    return mh_new(cls, segments, count, flags, mh);
}

static size_t f_mh_max_segments(const opal_na_class_t *cls)
{
    return ep_of(cls)->opts.max_segments;
}

static void f_mh_free(opal_na_class_t *cls, opal_na_mem_handle_t *mh)
{
    (void) cls;
    free(mh->segs);
    free(mh);
}

static size_t f_mh_size(opal_na_class_t *cls, opal_na_mem_handle_t *mh)
{
    (void) cls;
    return mh->size;
}

static size_t f_mh_ser_size(opal_na_class_t *cls, opal_na_mem_handle_t *mh)
{
    (void) cls;
    return 4 + 1 + 4 + (size_t) mh->count * 16;
}

static int f_mh_serialize(opal_na_class_t *cls, void *buf, size_t size, opal_na_mem_handle_t *mh)
{
    (void) cls;
    opal_cursor_t c;
    opal_cursor_init_write(&c, buf, size);
    opal_cursor_put_u32(&c, (uint32_t) mh->ep);
    opal_cursor_put_u8(&c, (uint8_t) mh->flags);
    opal_cursor_put_u32(&c, mh->count);
    for (uint32_t i = 0; i < mh->count; ++i) {
        opal_cursor_put_u64(&c, (uint64_t) (uintptr_t) mh->segs[i].base);
        opal_cursor_put_u64(&c, mh->segs[i].len);
    }
    return opal_cursor_ok(&c) ? OPAL_SUCCESS : OPAL_ERR_TRUNCATED;
}

static int f_mh_deserialize(opal_na_class_t *cls, opal_na_mem_handle_t **mh, const void *buf,
                            size_t size)
{
    (void) cls;
    opal_cursor_t c;
    opal_cursor_init_read(&c, buf, size);
    uint32_t ep = opal_cursor_get_u32(&c);
    uint8_t flags = opal_cursor_get_u8(&c);
    uint32_t count = opal_cursor_get_u32(&c);
    if (!opal_cursor_ok(&c) || ep >= FAKE_NA_MAX_EP || 0 == count || count > 1024 ||
        opal_cursor_left(&c) != (size_t) count * 16 || 0 == flags || flags > 3) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_na_segment_t segs[1024];
    uint64_t total = 0;
    for (uint32_t i = 0; i < count; ++i) {
        segs[i].base = (void *) (uintptr_t) opal_cursor_get_u64(&c);
        uint64_t len = opal_cursor_get_u64(&c);
        if (len > SIZE_MAX - total) {
            return OPAL_ERR_BAD_PARAM;
        }
        segs[i].len = (size_t) len;
        total += len;
    }
    int rc = mh_new(NULL, segs, count, flags, mh);
    if (OPAL_SUCCESS == rc) {
        (*mh)->ep = (int) ep;
    }
    return rc;
}

/* ------------------------------------------------------------------ RMA */

static void rma_run(fake_op_t *f)
{
    opal_bulk_walk_t w;
    opal_bulk_walk_init(&w, f->local->segs, f->local->count, f->local_off, f->remote->segs,
                        f->remote->count, f->remote_off, f->len);
    opal_bulk_piece_t p;
    while (opal_bulk_walk_next(&w, SIZE_MAX, &p)) {
        char *l = (char *) f->local->segs[p.a_idx].base + p.a_off;
        char *r = (char *) f->remote->segs[p.b_idx].base + p.b_off;
        memmove(f->put ? r : l, f->put ? l : r, p.len);
    }
}

static int rma(opal_na_class_t *cls, opal_na_context_t *ctx, bool put, opal_na_mem_handle_t *lmh,
               size_t loff, opal_na_mem_handle_t *rmh, size_t roff, size_t len, opal_na_op_id_t *op)
{
    if (0 == (rmh->flags & (put ? OPAL_NA_MEM_WRITE_ONLY : OPAL_NA_MEM_READ_ONLY))) {
        return OPAL_ERR_PERM;
    }
    ++rma_ops;
    fake_op_t *f = (fake_op_t *) op;
    f->put = put;
    f->local = lmh;
    f->local_off = loff;
    f->remote = rmh;
    f->remote_off = roff;
    f->len = len;
    if (ep_of(cls)->opts.defer_rma) {
        LIST_APPEND(((fake_ctx_t *) ctx->plugin)->deferred, f);
        return OPAL_SUCCESS;
    }
    rma_run(f);
    complete(op, OPAL_SUCCESS);
    return OPAL_SUCCESS;
}

static size_t f_rma_piece_max(opal_na_class_t *cls, opal_na_addr_t *remote_addr)
{
    (void) remote_addr;
    return ep_of(cls)->opts.piece_max;
}

static int f_put(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_mem_handle_t *local_mh,
                 size_t local_offset, opal_na_mem_handle_t *remote_mh, size_t remote_offset,
                 size_t length, opal_na_addr_t *remote_addr, uint8_t remote_id, opal_na_op_id_t *op)
{
    (void) remote_addr, (void) remote_id;
    return rma(cls, ctx, true, local_mh, local_offset, remote_mh, remote_offset, length, op);
}

static int f_get(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_mem_handle_t *local_mh,
                 size_t local_offset, opal_na_mem_handle_t *remote_mh, size_t remote_offset,
                 size_t length, opal_na_addr_t *remote_addr, uint8_t remote_id, opal_na_op_id_t *op)
{
    (void) remote_addr, (void) remote_id;
    return rma(cls, ctx, false, local_mh, local_offset, remote_mh, remote_offset, length, op);
}

/* ------------------------------------------------------------- progress */

/* Fills a posted receive with m; completes it. */
static void recv_fill(fake_op_t *f, fake_msg_t *m, bool expected)
{
    size_t n = m->len < f->size ? m->len : f->size;
    if (n > 0) {
        memcpy(f->buf, m->data, n);
    }
    if (expected) {
        f->super.cb_info.info.recv_expected.actual_size = n;
    } else {
        f->super.cb_info.info.recv_unexpected.actual_size = n;
        f->super.cb_info.info.recv_unexpected.tag = m->tag;
        f->super.cb_info.info.recv_unexpected.source = addr_new(m->src_ep);
    }
    complete(&f->super, m->len > f->size ? OPAL_ERR_TRUNCATED : OPAL_SUCCESS);
    free(m);
}

static int f_poll(opal_na_class_t *cls, opal_na_context_t *ctx, unsigned int *count)
{
    (void) cls;
    fake_ctx_t *fc = ctx->plugin;
    unsigned int n = 0;
    while (NULL != fc->posted_unexp && NULL != fc->unexp) {
        fake_op_t *f = fc->posted_unexp;
        fake_msg_t *m = fc->unexp;
        fc->posted_unexp = f->next;
        fc->unexp = m->next;
        recv_fill(f, m, false);
        ++n;
    }
    for (fake_op_t **fp = &fc->posted_exp; NULL != *fp;) {
        fake_op_t *f = *fp;
        fake_msg_t **mp = &fc->exp;
        while (NULL != *mp &&
               ((*mp)->src_ep != f->src_ep || (*mp)->src_id != f->src_id || (*mp)->tag != f->tag)) {
            mp = &(*mp)->next;
        }
        if (NULL == *mp) {
            fp = &f->next;
            continue;
        }
        fake_msg_t *m = *mp;
        *mp = m->next;
        *fp = f->next;
        recv_fill(f, m, true);
        ++n;
    }
    while (NULL != fc->deferred) {
        fake_op_t *f = fc->deferred;
        fc->deferred = f->next;
        rma_run(f);
        complete(&f->super, OPAL_SUCCESS);
        ++n;
    }
    *count = n;
    return OPAL_SUCCESS;
}

/* Removes op from a list; true when it was there. */
static bool unlink_op(fake_op_t **head, fake_op_t *op)
{
    for (fake_op_t **p = head; NULL != *p; p = &(*p)->next) {
        if (*p == op) {
            *p = op->next;
            return true;
        }
    }
    return false;
}

static int f_cancel(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_op_id_t *op)
{
    (void) cls;
    fake_ctx_t *fc = ctx->plugin;
    fake_op_t *f = (fake_op_t *) op;
    if (!opal_na_base_op_cancel_mark(op)) {
        return OPAL_SUCCESS;
    }
    if (unlink_op(&fc->posted_unexp, f) || unlink_op(&fc->posted_exp, f) ||
        unlink_op(&fc->deferred, f)) {
        complete(op, OPAL_ERR_CANCELED);
    }
    return OPAL_SUCCESS;
}

static const opal_na_class_ops_t fake_ops_rma = {
    .name = "fake",
    .op_size = sizeof(fake_op_t),
    .initialize = f_initialize,
    .finalize = f_finalize,
    .context_create = f_context_create,
    .context_destroy = f_context_destroy,
    .addr_lookup = f_addr_lookup,
    .addr_self = f_addr_self,
    .addr_dup = f_addr_dup,
    .addr_free = f_addr_free,
    .addr_cmp = f_addr_cmp,
    .addr_is_self = f_addr_is_self,
    .addr_to_string = f_addr_to_string,
    .addr_get_serialize_size = f_addr_ser_size,
    .addr_serialize = f_addr_serialize,
    .addr_deserialize = f_addr_deserialize,
    .msg_get_max_unexpected_size = f_max_msg,
    .msg_get_max_expected_size = f_max_msg,
    .msg_get_max_tag = f_max_tag,
    .msg_send_unexpected = f_send_unexpected,
    .msg_recv_unexpected = f_recv_unexpected,
    .msg_send_expected = f_send_expected,
    .msg_recv_expected = f_recv_expected,
    .mem_handle_create = f_mh_create,
    .mem_handle_create_segments = f_mh_create_segments,
    .mem_handle_get_max_segments = f_mh_max_segments,
    .mem_handle_free = f_mh_free,
    .mem_handle_get_size = f_mh_size,
    .mem_handle_get_serialize_size = f_mh_ser_size,
    .mem_handle_serialize = f_mh_serialize,
    .mem_handle_deserialize = f_mh_deserialize,
    .put = f_put,
    .get = f_get,
    .rma_piece_max = f_rma_piece_max,
    .poll = f_poll,
    .cancel = f_cancel,
};

static opal_na_class_ops_t fake_ops_no_rma;

opal_na_class_t *fake_na_open(const fake_na_opts_t *opts)
{
    /* The first free slot: tests that share one process (CK_FORK=no)
     * open and close many. */
    int ep = 0;
    while (ep < FAKE_NA_MAX_EP && NULL != eps[ep]) {
        ++ep;
    }
    if (ep == FAKE_NA_MAX_EP) {
        return NULL;
    }
    fake_ep_t *e = calloc(1, sizeof(*e));
    opal_na_class_t *cls = calloc(1, sizeof(*cls));
    if (NULL == e || NULL == cls) {
        free(e);
        free(cls);
        return NULL;
    }
    fake_ops_no_rma = fake_ops_rma;
    fake_ops_no_rma.put = NULL;
    fake_ops_no_rma.get = NULL;
    e->ep = ep;
    e->opts = *opts;
    e->opts.max_msg = 0 == e->opts.max_msg ? 64 * 1024 : e->opts.max_msg;
    e->opts.max_segments = 0 == e->opts.max_segments ? 1 : e->opts.max_segments;
    e->cls = cls;
    cls->ops = opts->rma ? &fake_ops_rma : &fake_ops_no_rma;
    cls->protocol = strdup("fake");
    cls->plugin = e;
    opal_na_base_read_limits(cls);
    eps[e->ep] = e;
    return cls;
}

void fake_na_close(opal_na_class_t *cls)
{
    fake_ep_t *e = ep_of(cls);
    eps[e->ep] = NULL;
    free(e);
    free(cls->protocol);
    free(cls);
}

opal_na_addr_t *fake_na_addr_of(opal_na_class_t *cls, opal_na_class_t *peer)
{
    (void) cls;
    return addr_new(ep_of(peer)->ep);
}

unsigned int fake_na_dropped(void)
{
    return dropped;
}

unsigned int fake_na_rma_ops(void)
{
    return rma_ops;
}
