/*
 * Bulk transfers by every engine over the in-process na class: self
 * (memcpy), eager (inline bytes), rdma (put / get, pipelined in small
 * chunks here so that pieces cross segment boundaries), and copy
 * (messages through the origin's bulk service), between handles whose
 * segment lists differ; refusals; cancel; bind and forward.
 */
#include "opal/opal_config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/bulk/base/base.h"
#include "opal/mca/bulk/bulk.h"
#include "opal/mca/bulk/copy/bulk_copy_wire.h"
#include "opal/util/opal_error.h"
#include "test/bulk/bulk_test_support.h"
#include "test/support/opal_test.h"

/* Small chunks and fragments: a transfer of a few hundred bytes is many
 * pieces in flight. */
static const char *const small_pieces[] = {"bulk_rdma_chunk_size=48", "bulk_rdma_window=3",
                                           "bulk_copy_frag_size=40", "bulk_copy_window=3", NULL};
static const char *const forced_copy[] = {"bulk=copy", "bulk_copy_frag_size=40", NULL};

typedef struct result_t {
    int calls;
    int ret;
    size_t size;
    bool done;
} result_t;

static void on_done(const opal_bulk_cb_info_t *info)
{
    result_t *r = info->arg;
    ++r->calls;
    r->ret = info->ret;
    r->size = info->size;
    r->done = true;
}

/* Origin memory: 3 segments (100, 200, 50 bytes) over one 350-byte array;
 * local: 2 segments (170, 180) over another. */
typedef struct layout_t {
    char origin_mem[350];
    char local_mem[350];
    opal_bulk_t *origin;
    opal_bulk_t *local;
} layout_t;

static void layout_create(layout_t *l, bulk_peer_t *o, bulk_peer_t *me, unsigned int oflags)
{
    bulk_fill(l->origin_mem, sizeof(l->origin_mem), 1);
    bulk_fill(l->local_mem, sizeof(l->local_mem), 2);
    void *obufs[3] = {l->origin_mem, l->origin_mem + 100, l->origin_mem + 300};
    size_t osizes[3] = {100, 200, 50};
    void *lbufs[2] = {l->local_mem, l->local_mem + 170};
    size_t lsizes[2] = {170, 180};
    ck_assert_int_eq(opal_bulk_create(o->bc, 3, obufs, osizes, oflags, &l->origin), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_create(me->bc, 2, lbufs, lsizes, OPAL_BULK_READ_WRITE, &l->local),
                     OPAL_SUCCESS);
}

/* The origin handle as me sees it: serialized by o, deserialized by me. */
static opal_bulk_t *remote_copy(opal_bulk_t *h, bulk_peer_t *me, unsigned int flags)
{
    size_t n = opal_bulk_get_serialize_size(h, flags);
    void *buf = malloc(n);
    ck_assert_int_eq(opal_bulk_serialize(buf, n, flags, h), OPAL_SUCCESS);
    opal_bulk_t *r = NULL;
    ck_assert_int_eq(opal_bulk_deserialize(me->bc, &r, buf, n), OPAL_SUCCESS);
    free(buf);
    return r;
}

static void layout_free(layout_t *l)
{
    ck_assert_int_eq(opal_bulk_free(l->local), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_free(l->origin), OPAL_SUCCESS);
}

/* Runs one transfer of 260 bytes (origin offset 30, local offset 60) from
 * peers[1] against peers[0]'s handle and checks the engine, the
 * completion and the bytes. */
static void transfer_and_check(bulk_peer_t *peers, int npeers, layout_t *l, opal_bulk_t *origin,
                               opal_bulk_op_type_t type, const char *engine)
{
    bulk_peer_t *me = &peers[1];
    char want_origin[350], want_local[350];
    memcpy(want_origin, l->origin_mem, 350);
    memcpy(want_local, l->local_mem, 350);
    if (OPAL_BULK_PULL == type) {
        memcpy(want_local + 60, want_origin + 30, 260);
    } else {
        memcpy(want_origin + 30, want_local + 60, 260);
    }
    opal_na_addr_t *addr = fake_na_addr_of(me->na, peers[0].na);
    result_t r = {0};
    opal_bulk_op_t *op = NULL;
    ck_assert_int_eq(opal_bulk_transfer(me->bc, me->ctx, on_done, &r, type, addr, 0, origin, 30,
                                        l->local, 60, 260, &op),
                     OPAL_SUCCESS);
    ck_assert_ptr_nonnull(op);
    ck_assert_str_eq(opal_bulk_op_engine(op), engine);
    ck_assert(bulk_progress(peers, npeers, &r.done));
    ck_assert_int_eq(r.calls, 1);
    ck_assert_int_eq(r.ret, OPAL_SUCCESS);
    ck_assert_uint_eq(r.size, 260);
    ck_assert_mem_eq(l->origin_mem, want_origin, 350);
    ck_assert_mem_eq(l->local_mem, want_local, 350);
    opal_na_addr_free(me->na, addr);
}

/* Two peers, the origin's handle sent to the other, one transfer. */
static void two_peer_case(const fake_na_opts_t *opts, const char *const *vars,
                          opal_bulk_op_type_t type, const char *engine)
{
    bulk_test_init(vars);
    bulk_peer_t p[2];
    bulk_peer_open(&p[0], opts);
    bulk_peer_open(&p[1], opts);
    layout_t l;
    layout_create(&l, &p[0], &p[1], OPAL_BULK_READ_WRITE);
    opal_bulk_t *remote = remote_copy(l.origin, &p[1], 0);
    transfer_and_check(p, 2, &l, remote, type, engine);
    ck_assert_int_eq(opal_bulk_free(remote), OPAL_SUCCESS);
    layout_free(&l);
    bulk_peer_close(&p[1]);
    bulk_peer_close(&p[0]);
    bulk_test_fini(vars);
}

static const fake_na_opts_t with_rma = {.rma = true, .max_segments = 16};
static const fake_na_opts_t with_rma_one_segment = {.rma = true, .max_segments = 1};
static const fake_na_opts_t without_rma = {.rma = false, .max_msg = 256};

START_TEST(rdma_pulls_between_different_segment_lists)
{
    two_peer_case(&with_rma, small_pieces, OPAL_BULK_PULL, "rdma");
}
END_TEST

START_TEST(rdma_pushes_between_different_segment_lists)
{
    two_peer_case(&with_rma, small_pieces, OPAL_BULK_PUSH, "rdma");
}
END_TEST

START_TEST(rdma_pulls_with_one_na_handle_per_segment)
{
    two_peer_case(&with_rma_one_segment, small_pieces, OPAL_BULK_PULL, "rdma");
}
END_TEST

START_TEST(copy_pulls_over_a_class_without_rma)
{
    two_peer_case(&without_rma, small_pieces, OPAL_BULK_PULL, "copy");
}
END_TEST

START_TEST(copy_pushes_over_a_class_without_rma)
{
    two_peer_case(&without_rma, small_pieces, OPAL_BULK_PUSH, "copy");
}
END_TEST

START_TEST(copy_forced_on_a_class_with_rma_moves_the_same_bytes)
{
    two_peer_case(&with_rma, forced_copy, OPAL_BULK_PULL, "copy");
    two_peer_case(&with_rma, forced_copy, OPAL_BULK_PUSH, "copy");
}
END_TEST

START_TEST(transfers_between_handles_of_one_process_are_a_memcpy)
{
    bulk_test_init(NULL);
    bulk_peer_t p[2];
    bulk_peer_open(&p[0], &with_rma);
    p[1] = p[0];
    layout_t l;
    layout_create(&l, &p[0], &p[0], OPAL_BULK_READ_WRITE);
    transfer_and_check(p, 1, &l, l.origin, OPAL_BULK_PULL, "self");
    transfer_and_check(p, 1, &l, l.origin, OPAL_BULK_PUSH, "self");
    /* The handle sent out and back names this process's handle. */
    opal_bulk_t *back = remote_copy(l.origin, &p[0], 0);
    transfer_and_check(p, 1, &l, back, OPAL_BULK_PULL, "self");
    ck_assert_int_eq(opal_bulk_free(back), OPAL_SUCCESS);
    layout_free(&l);
    bulk_peer_close(&p[0]);
    bulk_test_fini(NULL);
}
END_TEST

START_TEST(eager_handle_is_pulled_from_its_inline_bytes)
{
    bulk_test_init(NULL);
    bulk_peer_t p[2];
    bulk_peer_open(&p[0], &without_rma);
    bulk_peer_open(&p[1], &without_rma);
    layout_t l;
    layout_create(&l, &p[0], &p[1], OPAL_BULK_READ_ONLY);
    opal_bulk_t *remote = remote_copy(l.origin, &p[1], OPAL_BULK_EAGER);
    /* What travelled inline is what the pull gives, even after the origin
     * freed its handle (no message reaches the origin). */
    char sent[350];
    memcpy(sent, l.origin_mem, 350);
    memset(l.origin_mem, 0, 350);
    ck_assert_int_eq(opal_bulk_free(l.origin), OPAL_SUCCESS);
    result_t r = {0};
    opal_bulk_op_t *op = NULL;
    ck_assert_int_eq(opal_bulk_transfer(p[1].bc, p[1].ctx, on_done, &r, OPAL_BULK_PULL, NULL, 0,
                                        remote, 30, l.local, 60, 260, &op),
                     OPAL_SUCCESS);
    ck_assert_str_eq(opal_bulk_op_engine(op), "eager");
    ck_assert(bulk_progress(&p[1], 1, &r.done));
    ck_assert_int_eq(r.ret, OPAL_SUCCESS);
    ck_assert_mem_eq(l.local_mem + 60, sent + 30, 260);
    ck_assert_int_eq(opal_bulk_free(remote), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_free(l.local), OPAL_SUCCESS);
    bulk_peer_close(&p[1]);
    bulk_peer_close(&p[0]);
    bulk_test_fini(NULL);
}
END_TEST

START_TEST(transfers_past_either_end_or_against_the_access_are_refused)
{
    bulk_test_init(NULL);
    bulk_peer_t p[2];
    bulk_peer_open(&p[0], &with_rma);
    bulk_peer_open(&p[1], &with_rma);
    layout_t l;
    layout_create(&l, &p[0], &p[1], OPAL_BULK_READ_ONLY);
    opal_bulk_t *remote = remote_copy(l.origin, &p[1], 0);
    opal_na_addr_t *addr = fake_na_addr_of(p[1].na, p[0].na);
    result_t r = {0};
    opal_bulk_op_t *op = (opal_bulk_op_t *) 1;
    /* 1 byte past the origin's end; past the local end; a push into a
     * read-only origin; an offset that wraps. */
    ck_assert_int_eq(opal_bulk_transfer(p[1].bc, p[1].ctx, on_done, &r, OPAL_BULK_PULL, addr, 0,
                                        remote, 300, l.local, 0, 51, &op),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_null(op);
    ck_assert_int_eq(opal_bulk_transfer(p[1].bc, p[1].ctx, on_done, &r, OPAL_BULK_PULL, addr, 0,
                                        remote, 0, l.local, 100, 251, &op),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_bulk_transfer(p[1].bc, p[1].ctx, on_done, &r, OPAL_BULK_PUSH, addr, 0,
                                        remote, 0, l.local, 0, 10, &op),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_bulk_transfer(p[1].bc, p[1].ctx, on_done, &r, OPAL_BULK_PULL, addr, 0,
                                        remote, SIZE_MAX, l.local, 0, 2, &op),
                     OPAL_ERR_BAD_PARAM);
    /* The exact end is fine. */
    ck_assert_int_eq(opal_bulk_transfer(p[1].bc, p[1].ctx, on_done, &r, OPAL_BULK_PULL, addr, 0,
                                        remote, 300, l.local, 300, 50, &op),
                     OPAL_SUCCESS);
    ck_assert(bulk_progress(p, 2, &r.done));
    ck_assert_int_eq(r.calls, 1);
    ck_assert_int_eq(r.ret, OPAL_SUCCESS);
    opal_na_addr_free(p[1].na, addr);
    ck_assert_int_eq(opal_bulk_free(remote), OPAL_SUCCESS);
    layout_free(&l);
    bulk_peer_close(&p[1]);
    bulk_peer_close(&p[0]);
    bulk_test_fini(NULL);
}
END_TEST

START_TEST(cancel_completes_a_transfer_once_as_canceled)
{
    bulk_test_init(small_pieces);
    fake_na_opts_t deferred = {.rma = true, .defer_rma = true, .max_segments = 16};
    bulk_peer_t p[2];
    bulk_peer_open(&p[0], &deferred);
    bulk_peer_open(&p[1], &deferred);
    layout_t l;
    layout_create(&l, &p[0], &p[1], OPAL_BULK_READ_WRITE);
    opal_bulk_t *remote = remote_copy(l.origin, &p[1], 0);
    opal_na_addr_t *addr = fake_na_addr_of(p[1].na, p[0].na);
    result_t r = {0};
    opal_bulk_op_t *op = NULL;
    ck_assert_int_eq(opal_bulk_transfer(p[1].bc, p[1].ctx, on_done, &r, OPAL_BULK_PULL, addr, 0,
                                        remote, 0, l.local, 0, 350, &op),
                     OPAL_SUCCESS);
    /* In flight: finalize waits for it. */
    ck_assert_int_eq(opal_bulk_finalize(p[1].bc), OPAL_ERR_RESOURCE_BUSY);
    ck_assert_int_eq(opal_bulk_cancel(op), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_cancel(op), OPAL_SUCCESS); /* twice: still one completion */
    ck_assert(bulk_progress(p, 2, &r.done));
    bulk_drain(p, 2, 200); /* a second completion would come now */
    ck_assert_int_eq(r.calls, 1);
    ck_assert_int_eq(r.ret, OPAL_ERR_CANCELED);
    opal_na_addr_free(p[1].na, addr);
    ck_assert_int_eq(opal_bulk_free(remote), OPAL_SUCCESS);
    layout_free(&l);
    bulk_peer_close(&p[1]);
    bulk_peer_close(&p[0]);
    bulk_test_fini(small_pieces);
}
END_TEST

START_TEST(bound_handle_forwarded_to_a_third_process_moves_data_with_its_origin)
{
    bulk_test_init(small_pieces);
    bulk_peer_t p[3]; /* 0: origin, 1: forwards, 2: transfers */
    for (int i = 0; i < 3; ++i) {
        bulk_peer_open(&p[i], &without_rma);
    }
    layout_t l;
    layout_create(&l, &p[0], &p[2], OPAL_BULK_READ_WRITE);
    ck_assert_int_eq(opal_bulk_bind(l.origin, p[0].ctx), OPAL_SUCCESS);
    opal_bulk_t *at1 = remote_copy(l.origin, &p[1], 0);
    opal_bulk_t *at2 = remote_copy(at1, &p[2], 0);
    /* Process 2 names process 1, who sent it the handle: the bound
     * address wins, and the pull reaches process 0's service. */
    opal_na_addr_t *sender = fake_na_addr_of(p[2].na, p[1].na);
    result_t r = {0};
    ck_assert_int_eq(opal_bulk_transfer(p[2].bc, p[2].ctx, on_done, &r, OPAL_BULK_PULL, sender, 0,
                                        at2, 0, l.local, 0, 350, NULL),
                     OPAL_SUCCESS);
    ck_assert(bulk_progress(p, 3, &r.done));
    ck_assert_int_eq(r.ret, OPAL_SUCCESS);
    ck_assert_mem_eq(l.local_mem, l.origin_mem, 350);
    opal_na_addr_free(p[2].na, sender);
    ck_assert_int_eq(opal_bulk_free(at2), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_free(at1), OPAL_SUCCESS);
    layout_free(&l);
    for (int i = 2; i >= 0; --i) {
        bulk_peer_close(&p[i]);
    }
    bulk_test_fini(small_pieces);
}
END_TEST

/* An na operation's end, for the tests that speak to a bulk service
 * themselves: the result and, for a receive, what arrived. */
typedef struct na_result_t {
    bool done;
    int ret;
    size_t size;
    opal_na_addr_t *source; /* a received request's sender (a reference) */
} na_result_t;

static void na_done(const opal_na_cb_info_t *info)
{
    na_result_t *r = info->arg;
    r->done = true;
    r->ret = info->ret;
    if (OPAL_NA_CB_RECV_UNEXPECTED == info->type && OPAL_SUCCESS == info->ret) {
        r->size = info->info.recv_unexpected.actual_size;
        r->source = info->info.recv_unexpected.source;
    } else if (OPAL_NA_CB_RECV_EXPECTED == info->type && OPAL_SUCCESS == info->ret) {
        r->size = info->info.recv_expected.actual_size;
    }
}

/* Sends n bytes from p[1] to p[0]'s bulk service, as a request; when
 * reply_tag is not negative, first posts p[1]'s receive of the answer on
 * that tag and returns it decoded (*status, OPAL_ERR_BAD_PARAM for an
 * answer that does not decode). */
static int ask_service(bulk_peer_t *p, const void *bytes, size_t n, int reply_tag, int32_t *status)
{
    opal_na_class_t *na = p[1].na;
    opal_na_addr_t *addr = fake_na_addr_of(na, p[0].na);
    opal_na_op_id_t *send_op = opal_na_op_create(na);
    opal_na_op_id_t *recv_op = opal_na_op_create(na);
    void *send_data = NULL, *recv_data = NULL;
    void *buf = opal_na_msg_buf_alloc(na, 256, &send_data);
    uint8_t *answer = opal_na_msg_buf_alloc(na, 256, &recv_data);
    ck_assert(NULL != send_op && NULL != recv_op && NULL != buf && NULL != answer);
    memcpy(buf, bytes, n);
    na_result_t sent = {0}, got = {0};
    if (reply_tag >= 0) {
        ck_assert_int_eq(opal_na_msg_recv_expected(na, p[1].ctx, na_done, &got, answer, 256,
                                                   recv_data, addr, OPAL_NA_CONTEXT_ID_BULK,
                                                   (opal_na_tag_t) reply_tag, recv_op),
                         OPAL_SUCCESS);
    }
    ck_assert_int_eq(opal_na_msg_send_unexpected(na, p[1].ctx, na_done, &sent, buf, n, send_data,
                                                 addr, OPAL_NA_CONTEXT_ID_BULK, 0, send_op),
                     OPAL_SUCCESS);
    ck_assert(bulk_progress(p, 2, &sent.done));
    ck_assert_int_eq(sent.ret, OPAL_SUCCESS);
    int rc = OPAL_SUCCESS;
    if (reply_tag >= 0) {
        ck_assert(bulk_progress(p, 2, &got.done));
        ck_assert_int_eq(got.ret, OPAL_SUCCESS);
        char why[BULK_COPY_WHY_MAX];
        rc = bulk_copy_reply_decode(answer, got.size, 0, status, why);
    } else {
        bulk_drain(p, 2, 20);
    }
    opal_na_msg_buf_free(na, answer, recv_data);
    opal_na_msg_buf_free(na, buf, send_data);
    ck_assert_int_eq(opal_na_op_destroy(na, recv_op), OPAL_SUCCESS);
    ck_assert_int_eq(opal_na_op_destroy(na, send_op), OPAL_SUCCESS);
    opal_na_addr_free(na, addr);
    return rc;
}

START_TEST(the_copy_service_drops_malformed_requests_refuses_bad_ones_and_serves_on)
{
    bulk_test_init(small_pieces);
    bulk_peer_t p[2];
    bulk_peer_open(&p[0], &without_rma);
    bulk_peer_open(&p[1], &without_rma);
    layout_t l;
    layout_create(&l, &p[0], &p[1], OPAL_BULK_READ_WRITE);
    opal_bulk_t *remote = remote_copy(l.origin, &p[1], 0);

    /* Requests this build could not have sent: dropped, unanswered. */
    uint8_t req[BULK_COPY_REQ_HDR + 64];
    const uint8_t garbage[5] = {1, 2, 3, 4, 5};
    (void) ask_service(p, garbage, sizeof(garbage), -1, NULL);
    bulk_copy_req_t good = {.kind = BULK_COPY_KIND_PULL,
                            .reply_ctx = p[1].ctx->id,
                            .tag = 7,
                            .instance = remote->instance,
                            .key = remote->key,
                            .offset = 0,
                            .length = 8};
    bulk_copy_req_encode(&good, req);
    req[0] ^= 0xff; /* magic */
    (void) ask_service(p, req, BULK_COPY_REQ_HDR, -1, NULL);
    bulk_copy_req_t bad = good;
    bad.length = 41; /* past the 40-byte fragments */
    bulk_copy_req_encode(&bad, req);
    (void) ask_service(p, req, BULK_COPY_REQ_HDR, -1, NULL);
    bad = good;
    bad.kind = BULK_COPY_KIND_PUSH; /* a push of 8 bytes carrying 3 */
    bulk_copy_req_encode(&bad, req);
    (void) ask_service(p, req, BULK_COPY_REQ_HDR + 3, -1, NULL);

    /* Well-formed requests the handle does not allow: refused by name. */
    int32_t status = OPAL_SUCCESS;
    bad = good;
    bad.key = remote->key + 1000;
    bulk_copy_req_encode(&bad, req);
    ck_assert_int_eq(ask_service(p, req, BULK_COPY_REQ_HDR, 7, &status), OPAL_SUCCESS);
    ck_assert_int_eq(status, OPAL_ERR_NOT_FOUND);
    bad = good;
    bad.instance = remote->instance + 1;
    bulk_copy_req_encode(&bad, req);
    ck_assert_int_eq(ask_service(p, req, BULK_COPY_REQ_HDR, 7, &status), OPAL_SUCCESS);
    ck_assert_int_eq(status, OPAL_ERR_NOT_FOUND);
    bad = good;
    bad.offset = 350 - 7; /* 8 bytes from 343 end past 350 */
    bulk_copy_req_encode(&bad, req);
    ck_assert_int_eq(ask_service(p, req, BULK_COPY_REQ_HDR, 7, &status), OPAL_SUCCESS);
    ck_assert_int_eq(status, OPAL_ERR_BAD_PARAM);
    bad = good;
    bad.offset = UINT64_MAX;
    bulk_copy_req_encode(&bad, req);
    ck_assert_int_eq(ask_service(p, req, BULK_COPY_REQ_HDR, 7, &status), OPAL_SUCCESS);
    ck_assert_int_eq(status, OPAL_ERR_BAD_PARAM);

    /* The service still serves. */
    transfer_and_check(p, 2, &l, remote, OPAL_BULK_PULL, "copy");
    transfer_and_check(p, 2, &l, remote, OPAL_BULK_PUSH, "copy");

    ck_assert_int_eq(opal_bulk_free(remote), OPAL_SUCCESS);
    layout_free(&l);
    bulk_peer_close(&p[1]);
    bulk_peer_close(&p[0]);
    bulk_test_fini(small_pieces);
}
END_TEST

/* The replies a pretend origin gives every fragment request, and the
 * result the transfer must end with. */
typedef enum { REPLY_BAD_MAGIC, REPLY_NO_ERROR_CODE, REPLY_WRONG_SIZE, REPLY_REFUSAL } reply_kind_t;

static size_t make_reply(uint8_t *buf, reply_kind_t kind, size_t frag_len)
{
    switch (kind) {
        case REPLY_BAD_MAGIC:
            bulk_copy_reply_encode(OPAL_SUCCESS, buf);
            buf[0] ^= 0xff;
            return BULK_COPY_REPLY_HDR + frag_len;
        case REPLY_NO_ERROR_CODE:
            bulk_copy_reply_encode(5, buf);
            return BULK_COPY_REPLY_HDR;
        case REPLY_WRONG_SIZE:
            bulk_copy_reply_encode(OPAL_SUCCESS, buf);
            memset(buf + BULK_COPY_REPLY_HDR, 0, frag_len);
            return BULK_COPY_REPLY_HDR + frag_len - 1;
        case REPLY_REFUSAL:
        default:
            bulk_copy_reply_encode(OPAL_ERR_PERM, buf);
            return BULK_COPY_REPLY_HDR;
    }
}

START_TEST(a_malformed_reply_ends_a_copy_transfer_once_with_an_error)
{
    const struct {
        reply_kind_t kind;
        int want;
    } cases[] = {{REPLY_BAD_MAGIC, OPAL_ERR_PROTOCOL},
                 {REPLY_NO_ERROR_CODE, OPAL_ERR_PROTOCOL},
                 {REPLY_WRONG_SIZE, OPAL_ERR_PROTOCOL},
                 {REPLY_REFUSAL, OPAL_ERR_PERM}};
    bulk_test_init(small_pieces);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        bulk_peer_t p[2];
        bulk_peer_open(&p[0], &without_rma);
        bulk_peer_open(&p[1], &without_rma);
        /* The pretend origin: a na class whose bulk context the test
         * answers from. */
        opal_na_class_t *fake = fake_na_open(&without_rma);
        opal_na_context_t *svc = NULL;
        ck_assert_int_eq(opal_na_context_create(fake, OPAL_NA_CONTEXT_ID_BULK, &svc), OPAL_SUCCESS);
        opal_na_op_id_t *recv_op = opal_na_op_create(fake);
        opal_na_op_id_t *send_op = opal_na_op_create(fake);
        void *in_data = NULL, *out_data = NULL;
        uint8_t *in = opal_na_msg_buf_alloc(fake, 256, &in_data);
        uint8_t *out = opal_na_msg_buf_alloc(fake, 256, &out_data);
        layout_t l;
        layout_create(&l, &p[0], &p[1], OPAL_BULK_READ_WRITE);
        opal_bulk_t *remote = remote_copy(l.origin, &p[1], 0);
        opal_na_addr_t *addr = fake_na_addr_of(p[1].na, fake);
        result_t r = {0};
        ck_assert_int_eq(opal_bulk_transfer(p[1].bc, p[1].ctx, on_done, &r, OPAL_BULK_PULL, addr, 0,
                                            remote, 0, l.local, 0, 350, NULL),
                         OPAL_SUCCESS);
        /* Answer every request (the fragments in flight) until the
         * transfer has ended and nothing more comes. */
        int answered = 0, idle = 0;
        while (idle < 200) {
            na_result_t got = {0};
            ck_assert_int_eq(
                opal_na_msg_recv_unexpected(fake, svc, na_done, &got, in, 256, in_data, recv_op),
                OPAL_SUCCESS);
            for (int round = 0; round < 1000 && !got.done; ++round) {
                bulk_drain(p, 2, 1);
                ck_assert_int_eq(opal_na_poll(fake, svc, NULL), OPAL_SUCCESS);
                ck_assert_int_eq(opal_na_trigger(svc, 0, NULL), OPAL_SUCCESS);
                idle = r.done ? idle + 1 : 0;
                if (idle >= 200) {
                    break;
                }
            }
            if (!got.done) {
                ck_assert_int_eq(opal_na_cancel(fake, svc, recv_op), OPAL_SUCCESS);
                while (!got.done) {
                    ck_assert_int_eq(opal_na_poll(fake, svc, NULL), OPAL_SUCCESS);
                    ck_assert_int_eq(opal_na_trigger(svc, 0, NULL), OPAL_SUCCESS);
                }
                ck_assert_int_eq(got.ret, OPAL_ERR_CANCELED);
                break;
            }
            ck_assert_int_eq(got.ret, OPAL_SUCCESS);
            bulk_copy_req_t req;
            const bulk_copy_limits_t limits = {.max_tag = UINT32_MAX, .pull_frag = 40};
            char why[BULK_COPY_WHY_MAX];
            ck_assert_int_eq(bulk_copy_req_decode(in, got.size, &limits, &req, why), OPAL_SUCCESS);
            size_t n = make_reply(out, cases[i].kind, (size_t) req.length);
            na_result_t sent = {0};
            ck_assert_int_eq(opal_na_msg_send_expected(fake, svc, na_done, &sent, out, n, out_data,
                                                       got.source, req.reply_ctx, req.tag, send_op),
                             OPAL_SUCCESS);
            while (!sent.done) {
                ck_assert_int_eq(opal_na_poll(fake, svc, NULL), OPAL_SUCCESS);
                ck_assert_int_eq(opal_na_trigger(svc, 0, NULL), OPAL_SUCCESS);
            }
            opal_na_addr_free(fake, got.source);
            ++answered;
        }
        ck_assert_int_ge(answered, 1);
        ck_assert_int_le(answered, 3); /* bulk_copy_window: nothing issued after the error */
        ck_assert_int_eq(r.calls, 1);
        ck_assert_int_eq(r.ret, cases[i].want);
        opal_na_addr_free(p[1].na, addr);
        ck_assert_int_eq(opal_bulk_free(remote), OPAL_SUCCESS);
        layout_free(&l);
        opal_na_msg_buf_free(fake, out, out_data);
        opal_na_msg_buf_free(fake, in, in_data);
        ck_assert_int_eq(opal_na_op_destroy(fake, send_op), OPAL_SUCCESS);
        ck_assert_int_eq(opal_na_op_destroy(fake, recv_op), OPAL_SUCCESS);
        ck_assert_int_eq(opal_na_context_destroy(fake, svc), OPAL_SUCCESS);
        fake_na_close(fake);
        bulk_peer_close(&p[1]);
        bulk_peer_close(&p[0]);
    }
    bulk_test_fini(small_pieces);
}
END_TEST

START_TEST(copy_from_a_handle_its_origin_freed_fails_as_not_found)
{
    bulk_test_init(small_pieces);
    bulk_peer_t p[2];
    bulk_peer_open(&p[0], &without_rma);
    bulk_peer_open(&p[1], &without_rma);
    layout_t l;
    layout_create(&l, &p[0], &p[1], OPAL_BULK_READ_WRITE);
    opal_bulk_t *remote = remote_copy(l.origin, &p[1], 0);
    ck_assert_int_eq(opal_bulk_free(l.origin), OPAL_SUCCESS);
    opal_na_addr_t *addr = fake_na_addr_of(p[1].na, p[0].na);
    result_t r = {0};
    ck_assert_int_eq(opal_bulk_transfer(p[1].bc, p[1].ctx, on_done, &r, OPAL_BULK_PULL, addr, 0,
                                        remote, 0, l.local, 0, 350, NULL),
                     OPAL_SUCCESS);
    ck_assert(bulk_progress(p, 2, &r.done));
    ck_assert_int_eq(r.calls, 1);
    ck_assert_int_eq(r.ret, OPAL_ERR_NOT_FOUND);
    opal_na_addr_free(p[1].na, addr);
    ck_assert_int_eq(opal_bulk_free(remote), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_free(l.local), OPAL_SUCCESS);
    bulk_peer_close(&p[1]);
    bulk_peer_close(&p[0]);
    bulk_test_fini(small_pieces);
}
END_TEST

START_TEST(callback_may_start_the_next_transfer)
{
    bulk_test_init(small_pieces);
    bulk_peer_t p[2];
    bulk_peer_open(&p[0], &with_rma);
    bulk_peer_open(&p[1], &with_rma);
    layout_t l;
    layout_create(&l, &p[0], &p[1], OPAL_BULK_READ_WRITE);
    opal_bulk_t *remote = remote_copy(l.origin, &p[1], 0);
    opal_na_addr_t *addr = fake_na_addr_of(p[1].na, p[0].na);
    /* 50 transfers in a row reuse pooled operations. */
    for (int i = 0; i < 50; ++i) {
        result_t r = {0};
        size_t off = (size_t) i % 7;
        ck_assert_int_eq(opal_bulk_transfer(p[1].bc, p[1].ctx, on_done, &r, OPAL_BULK_PULL, addr, 0,
                                            remote, off, l.local, 0, 300, NULL),
                         OPAL_SUCCESS);
        ck_assert(bulk_progress(p, 2, &r.done));
        ck_assert_int_eq(r.ret, OPAL_SUCCESS);
        ck_assert_mem_eq(l.local_mem, l.origin_mem + off, 300);
    }
    opal_na_addr_free(p[1].na, addr);
    ck_assert_int_eq(opal_bulk_free(remote), OPAL_SUCCESS);
    layout_free(&l);
    bulk_peer_close(&p[1]);
    bulk_peer_close(&p[0]);
    bulk_test_fini(small_pieces);
}
END_TEST

/* Pulls 1.5 MiB (three of rdma's default 512 KiB chunks) from peers[0]
 * into peers[1], checks the bytes, and returns how many na gets it took. */
static unsigned int gets_of_a_large_pull(const fake_na_opts_t *opts, const char *const *vars)
{
    bulk_test_init(vars);
    bulk_peer_t p[2];
    bulk_peer_open(&p[0], opts);
    bulk_peer_open(&p[1], opts);
    size_t len = 3 * 512 * 1024;
    char *omem = malloc(len), *lmem = calloc(1, len);
    ck_assert(NULL != omem && NULL != lmem);
    bulk_fill(omem, len, 7);
    void *obuf[1] = {omem}, *lbuf[1] = {lmem};
    size_t size[1] = {len};
    opal_bulk_t *origin = NULL, *local = NULL;
    ck_assert_int_eq(opal_bulk_create(p[0].bc, 1, obuf, size, OPAL_BULK_READ_ONLY, &origin),
                     OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_create(p[1].bc, 1, lbuf, size, OPAL_BULK_READ_WRITE, &local),
                     OPAL_SUCCESS);
    opal_bulk_t *remote = remote_copy(origin, &p[1], 0);
    opal_na_addr_t *addr = fake_na_addr_of(p[1].na, p[0].na);
    unsigned int before = fake_na_rma_ops();
    result_t r = {0};
    opal_bulk_op_t *op = NULL;
    ck_assert_int_eq(opal_bulk_transfer(p[1].bc, p[1].ctx, on_done, &r, OPAL_BULK_PULL, addr, 0,
                                        remote, 0, local, 0, len, &op),
                     OPAL_SUCCESS);
    ck_assert_str_eq(opal_bulk_op_engine(op), "rdma");
    ck_assert(bulk_progress(p, 2, &r.done));
    unsigned int gets = fake_na_rma_ops() - before;
    ck_assert_int_eq(r.calls, 1);
    ck_assert_int_eq(r.ret, OPAL_SUCCESS);
    ck_assert_mem_eq(lmem, omem, len);
    opal_na_addr_free(p[1].na, addr);
    ck_assert_int_eq(opal_bulk_free(remote), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_free(local), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_free(origin), OPAL_SUCCESS);
    free(lmem);
    free(omem);
    bulk_peer_close(&p[1]);
    bulk_peer_close(&p[0]);
    bulk_test_fini(vars);
    return gets;
}

START_TEST(rdma_cuts_large_transfers_into_chunks)
{
    ck_assert_uint_eq(gets_of_a_large_pull(&with_rma_one_segment, NULL), 3);
}
END_TEST

/* A na class that says one operation of any size moves fastest to the
 * peer (na/btl over btl/sm) gets it whole; a smaller advice is followed. */
START_TEST(rdma_follows_the_na_class_advice_on_pieces)
{
    const fake_na_opts_t whole = {.rma = true, .max_segments = 1, .piece_max = SIZE_MAX};
    ck_assert_uint_eq(gets_of_a_large_pull(&whole, NULL), 1);
    const fake_na_opts_t small = {.rma = true, .max_segments = 1, .piece_max = 400 * 1024};
    ck_assert_uint_eq(gets_of_a_large_pull(&small, NULL), 4);
}
END_TEST

/* A chunk size the user chose wins over the advice. */
START_TEST(chosen_chunk_size_wins_over_the_na_class_advice)
{
    static const char *const chosen[] = {"bulk_rdma_chunk_size=524288", NULL};
    const fake_na_opts_t whole = {.rma = true, .max_segments = 1, .piece_max = SIZE_MAX};
    ck_assert_uint_eq(gets_of_a_large_pull(&whole, chosen), 3);
    static const char *const unlimited[] = {"bulk_rdma_chunk_size=0", NULL};
    ck_assert_uint_eq(gets_of_a_large_pull(&with_rma_one_segment, unlimited), 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bulk_transfer");
    OPAL_TEST_ADD(s, rdma_pulls_between_different_segment_lists);
    OPAL_TEST_ADD(s, rdma_pushes_between_different_segment_lists);
    OPAL_TEST_ADD(s, rdma_pulls_with_one_na_handle_per_segment);
    OPAL_TEST_ADD(s, copy_pulls_over_a_class_without_rma);
    OPAL_TEST_ADD(s, copy_pushes_over_a_class_without_rma);
    OPAL_TEST_ADD(s, copy_forced_on_a_class_with_rma_moves_the_same_bytes);
    OPAL_TEST_ADD(s, transfers_between_handles_of_one_process_are_a_memcpy);
    OPAL_TEST_ADD(s, eager_handle_is_pulled_from_its_inline_bytes);
    OPAL_TEST_ADD(s, transfers_past_either_end_or_against_the_access_are_refused);
    OPAL_TEST_ADD(s, cancel_completes_a_transfer_once_as_canceled);
    OPAL_TEST_ADD(s, bound_handle_forwarded_to_a_third_process_moves_data_with_its_origin);
    OPAL_TEST_ADD(s, copy_from_a_handle_its_origin_freed_fails_as_not_found);
    OPAL_TEST_ADD(s, the_copy_service_drops_malformed_requests_refuses_bad_ones_and_serves_on);
    OPAL_TEST_ADD(s, a_malformed_reply_ends_a_copy_transfer_once_with_an_error);
    OPAL_TEST_ADD(s, callback_may_start_the_next_transfer);
    OPAL_TEST_ADD(s, rdma_cuts_large_transfers_into_chunks);
    OPAL_TEST_ADD(s, rdma_follows_the_na_class_advice_on_pieces);
    OPAL_TEST_ADD(s, chosen_chunk_size_wins_over_the_na_class_advice);
    return opal_test_run(s);
}
