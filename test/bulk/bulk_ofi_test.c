/*
 * Bulk over na/ofi (a real transport: BULK_OFI_PROTO, tcp or shm): two
 * classes of this process, each its own endpoint, so transfers between
 * them go through the provider. rdma and copy (forced with bulk=copy)
 * between handles of different segment lists, large enough to be
 * pipelined; eager; a transfer past the end; cancel.
 */
#include "opal/opal_config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/bulk/bulk.h"
#include "opal/mca/na/base/base.h"
#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

#define INFO "ofi+" BULK_OFI_PROTO

typedef struct end_t {
    opal_na_class_t *na;
    opal_na_context_t *ctx;
    opal_bulk_class_t *bc;
} end_t;

typedef struct result_t {
    int calls;
    int ret;
} result_t;

static void on_done(const opal_bulk_cb_info_t *info)
{
    result_t *r = info->arg;
    ++r->calls;
    r->ret = info->ret;
}

static bool ofi_here;

static void end_open(end_t *e)
{
    ck_assert_int_eq(opal_na_initialize(INFO, true, &e->na), OPAL_SUCCESS);
    ck_assert_int_eq(opal_na_context_create(e->na, 0, &e->ctx), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_init(e->na, &e->bc), OPAL_SUCCESS);
}

static void end_close(end_t *e)
{
    ck_assert_int_eq(opal_bulk_finalize(e->bc), OPAL_SUCCESS);
    ck_assert_int_eq(opal_na_context_destroy(e->na, e->ctx), OPAL_SUCCESS);
    ck_assert_int_eq(opal_na_finalize(e->na), OPAL_SUCCESS);
}

/* Progresses both ends until *calls is 1 (generous: a loaded machine). */
static void wait_for(end_t *e, const int *calls)
{
    for (int round = 0; round < 200000 && 0 == *calls; ++round) {
        for (int i = 0; i < 2; ++i) {
            (void) opal_na_poll(e[i].na, e[i].ctx, NULL);
            (void) opal_na_trigger(e[i].ctx, 0, NULL);
        }
    }
    ck_assert_int_eq(*calls, 1);
}

static void fill(unsigned char *b, size_t n, unsigned int seed)
{
    for (size_t i = 0; i < n; ++i) {
        b[i] = (unsigned char) ((i * 131u + seed * 7u + (i >> 9)) & 0xff);
    }
}

static opal_na_addr_t *addr_of(end_t *me, end_t *peer)
{
    size_t n = 0;
    opal_na_addr_t *self = NULL, *a = NULL;
    ck_assert_int_eq(opal_na_addr_self(peer->na, &self), OPAL_SUCCESS);
    ck_assert_int_eq(opal_na_addr_to_string(peer->na, NULL, &n, self), OPAL_ERR_TRUNCATED);
    char *uri = malloc(n);
    ck_assert_int_eq(opal_na_addr_to_string(peer->na, uri, &n, self), OPAL_SUCCESS);
    ck_assert_int_eq(opal_na_addr_lookup(me->na, uri, &a), OPAL_SUCCESS);
    opal_na_addr_free(peer->na, self);
    free(uri);
    return a;
}

static opal_bulk_t *sent_to(opal_bulk_t *h, end_t *me, unsigned int flags)
{
    size_t n = opal_bulk_get_serialize_size(h, flags);
    void *buf = malloc(n);
    ck_assert_int_eq(opal_bulk_serialize(buf, n, flags, h), OPAL_SUCCESS);
    opal_bulk_t *r = NULL;
    ck_assert_int_eq(opal_bulk_deserialize(me->bc, &r, buf, n), OPAL_SUCCESS);
    free(buf);
    return r;
}

/* 3 MiB + 123 bytes at the origin over 3 segments, 2 segments locally;
 * moves all but the first 1000 bytes of the origin to local offset 77. */
static void transfer_case(const char *bulk_var, opal_bulk_op_type_t type, const char *engine)
{
    if (NULL != bulk_var) {
        setenv("OPAL_MCA_bulk", bulk_var, 1);
    }
    ck_assert_int_eq(opal_init_util(NULL, NULL), OPAL_SUCCESS);
    end_t e[2];
    end_open(&e[0]);
    end_open(&e[1]);
    const size_t total = 3 * 1024 * 1024 + 123;
    unsigned char *om = malloc(total), *lm = malloc(total);
    unsigned char *want_o = malloc(total), *want_l = malloc(total);
    fill(om, total, 1);
    fill(lm, total, 2);
    void *obufs[3] = {om, om + 1000, om + 2000000};
    size_t osizes[3] = {1000, 2000000 - 1000, total - 2000000};
    void *lbufs[2] = {lm, lm + 1500000};
    size_t lsizes[2] = {1500000, total - 1500000};
    opal_bulk_t *origin = NULL, *local = NULL;
    ck_assert_int_eq(opal_bulk_create(e[0].bc, 3, obufs, osizes, OPAL_BULK_READ_WRITE, &origin),
                     OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_create(e[1].bc, 2, lbufs, lsizes, OPAL_BULK_READ_WRITE, &local),
                     OPAL_SUCCESS);
    size_t len = total - 1000 - 77;
    memcpy(want_o, om, total);
    memcpy(want_l, lm, total);
    if (OPAL_BULK_PULL == type) {
        memcpy(want_l + 77, want_o + 1000, len);
    } else {
        memcpy(want_o + 1000, want_l + 77, len);
    }
    opal_bulk_t *remote = sent_to(origin, &e[1], 0);
    opal_na_addr_t *addr = addr_of(&e[1], &e[0]);
    result_t r = {0};
    opal_bulk_op_t *op = NULL;
    ck_assert_int_eq(opal_bulk_transfer(e[1].bc, e[1].ctx, on_done, &r, type, addr, 0, remote, 1000,
                                        local, 77, len, &op),
                     OPAL_SUCCESS);
    ck_assert_str_eq(opal_bulk_op_engine(op), engine);
    wait_for(e, &r.calls);
    ck_assert_int_eq(r.ret, OPAL_SUCCESS);
    /* A push's completion at the initiator says the data left; with
     * tcp;ofi_rxm the origin's side places it when the origin progresses,
     * which may be after that completion: progress until it is there. */
    for (int round = 0; round < 200000 && 0 != memcmp(om, want_o, total); ++round) {
        (void) opal_na_poll(e[0].na, e[0].ctx, NULL);
        (void) opal_na_trigger(e[0].ctx, 0, NULL);
    }
    ck_assert(0 == memcmp(om, want_o, total));
    ck_assert(0 == memcmp(lm, want_l, total));
    opal_na_addr_free(e[1].na, addr);
    ck_assert_int_eq(opal_bulk_free(remote), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_free(local), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_free(origin), OPAL_SUCCESS);
    free(om), free(lm), free(want_o), free(want_l);
    end_close(&e[1]);
    end_close(&e[0]);
    ck_assert_int_eq(opal_finalize_util(), OPAL_SUCCESS);
    unsetenv("OPAL_MCA_bulk");
}

START_TEST(rdma_pulls_between_different_segment_lists)
{
    transfer_case(NULL, OPAL_BULK_PULL, "rdma");
}
END_TEST

START_TEST(rdma_pushes_between_different_segment_lists)
{
    transfer_case(NULL, OPAL_BULK_PUSH, "rdma");
}
END_TEST

START_TEST(copy_forced_pulls_the_same_bytes)
{
    transfer_case("copy", OPAL_BULK_PULL, "copy");
}
END_TEST

START_TEST(copy_forced_pushes_the_same_bytes)
{
    transfer_case("copy", OPAL_BULK_PUSH, "copy");
}
END_TEST

/* Two ends, a read-only origin of 3000 bytes, for the short cases. */
typedef struct small_t {
    end_t e[2];
    unsigned char om[3000], lm[3000];
    opal_bulk_t *origin, *local;
    opal_na_addr_t *addr;
} small_t;

static void small_open(small_t *s)
{
    ck_assert_int_eq(opal_init_util(NULL, NULL), OPAL_SUCCESS);
    end_open(&s->e[0]);
    end_open(&s->e[1]);
    fill(s->om, sizeof(s->om), 3);
    memset(s->lm, 0, sizeof(s->lm));
    void *ob = s->om, *lb = s->lm;
    size_t n = sizeof(s->om);
    ck_assert_int_eq(opal_bulk_create(s->e[0].bc, 1, &ob, &n, OPAL_BULK_READ_ONLY, &s->origin),
                     OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_create(s->e[1].bc, 1, &lb, &n, OPAL_BULK_READ_WRITE, &s->local),
                     OPAL_SUCCESS);
    s->addr = addr_of(&s->e[1], &s->e[0]);
}

static void small_close(small_t *s)
{
    opal_na_addr_free(s->e[1].na, s->addr);
    ck_assert_int_eq(opal_bulk_free(s->local), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_free(s->origin), OPAL_SUCCESS);
    end_close(&s->e[1]);
    end_close(&s->e[0]);
    ck_assert_int_eq(opal_finalize_util(), OPAL_SUCCESS);
}

START_TEST(eager_handle_is_pulled_without_the_network)
{
    small_t s;
    small_open(&s);
    opal_bulk_t *remote = sent_to(s.origin, &s.e[1], OPAL_BULK_EAGER);
    result_t r = {0};
    opal_bulk_op_t *op = NULL;
    ck_assert_int_eq(opal_bulk_transfer(s.e[1].bc, s.e[1].ctx, on_done, &r, OPAL_BULK_PULL, s.addr,
                                        0, remote, 0, s.local, 0, 3000, &op),
                     OPAL_SUCCESS);
    ck_assert_str_eq(opal_bulk_op_engine(op), "eager");
    wait_for(s.e, &r.calls);
    ck_assert_int_eq(r.ret, OPAL_SUCCESS);
    ck_assert_mem_eq(s.lm, s.om, 3000);
    ck_assert_int_eq(opal_bulk_free(remote), OPAL_SUCCESS);
    small_close(&s);
}
END_TEST

START_TEST(a_transfer_past_the_origin_end_is_refused)
{
    small_t s;
    small_open(&s);
    opal_bulk_t *remote = sent_to(s.origin, &s.e[1], 0);
    result_t r = {0};
    ck_assert_int_eq(opal_bulk_transfer(s.e[1].bc, s.e[1].ctx, on_done, &r, OPAL_BULK_PULL, s.addr,
                                        0, remote, 1, s.local, 0, 3000, NULL),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(r.calls, 0);
    ck_assert_int_eq(opal_bulk_free(remote), OPAL_SUCCESS);
    small_close(&s);
}
END_TEST

START_TEST(cancel_completes_once_as_canceled)
{
    small_t s;
    small_open(&s);
    opal_bulk_t *remote = sent_to(s.origin, &s.e[1], 0);
    result_t r = {0};
    opal_bulk_op_t *op = NULL;
    ck_assert_int_eq(opal_bulk_transfer(s.e[1].bc, s.e[1].ctx, on_done, &r, OPAL_BULK_PULL, s.addr,
                                        0, remote, 0, s.local, 0, 3000, &op),
                     OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_cancel(op), OPAL_SUCCESS);
    wait_for(s.e, &r.calls);
    ck_assert_int_eq(r.ret, OPAL_ERR_CANCELED);
    for (int i = 0; i < 1000; ++i) {
        (void) opal_na_poll(s.e[1].na, s.e[1].ctx, NULL);
        (void) opal_na_trigger(s.e[1].ctx, 0, NULL);
    }
    ck_assert_int_eq(r.calls, 1);
    ck_assert_int_eq(opal_bulk_free(remote), OPAL_SUCCESS);
    small_close(&s);
}
END_TEST

/* Three classes: 0 owns and binds a handle, 1 receives it and forwards
 * it to 2, which pulls naming 1: the bound address takes it to 0. */
static void forward_case(const char *bulk_var, const char *engine)
{
    if (NULL != bulk_var) {
        setenv("OPAL_MCA_bulk", bulk_var, 1);
    }
    ck_assert_int_eq(opal_init_util(NULL, NULL), OPAL_SUCCESS);
    end_t e[3];
    for (int i = 0; i < 3; ++i) {
        end_open(&e[i]);
    }
    static unsigned char om[300000], lm[300000];
    fill(om, sizeof(om), 5);
    memset(lm, 0, sizeof(lm));
    void *ob = om, *lb = lm;
    size_t n = sizeof(om);
    opal_bulk_t *origin = NULL, *local = NULL;
    ck_assert_int_eq(opal_bulk_create(e[0].bc, 1, &ob, &n, OPAL_BULK_READ_ONLY, &origin),
                     OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_bind(origin, e[0].ctx), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_create(e[2].bc, 1, &lb, &n, OPAL_BULK_READ_WRITE, &local),
                     OPAL_SUCCESS);
    opal_bulk_t *at1 = sent_to(origin, &e[1], 0);
    opal_bulk_t *at2 = sent_to(at1, &e[2], 0);
    opal_na_addr_t *sender = addr_of(&e[2], &e[1]);
    result_t r = {0};
    opal_bulk_op_t *op = NULL;
    ck_assert_int_eq(opal_bulk_transfer(e[2].bc, e[2].ctx, on_done, &r, OPAL_BULK_PULL, sender, 0,
                                        at2, 0, local, 0, n, &op),
                     OPAL_SUCCESS);
    ck_assert_str_eq(opal_bulk_op_engine(op), engine);
    for (int round = 0; round < 200000 && 0 == r.calls; ++round) {
        for (int i = 0; i < 3; ++i) {
            (void) opal_na_poll(e[i].na, e[i].ctx, NULL);
            (void) opal_na_trigger(e[i].ctx, 0, NULL);
        }
    }
    ck_assert_int_eq(r.calls, 1);
    ck_assert_int_eq(r.ret, OPAL_SUCCESS);
    ck_assert(0 == memcmp(lm, om, n));
    opal_na_addr_free(e[2].na, sender);
    ck_assert_int_eq(opal_bulk_free(at2), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_free(at1), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_free(local), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bulk_free(origin), OPAL_SUCCESS);
    for (int i = 2; i >= 0; --i) {
        end_close(&e[i]);
    }
    ck_assert_int_eq(opal_finalize_util(), OPAL_SUCCESS);
    unsetenv("OPAL_MCA_bulk");
}

START_TEST(rdma_from_a_forwarded_bound_handle_reaches_its_origin)
{
    forward_case(NULL, "rdma");
}
END_TEST

START_TEST(copy_from_a_forwarded_bound_handle_reaches_its_origin)
{
    forward_case("copy", "copy");
}
END_TEST

/* The provider may not run here (no shm, no loopback): say so and skip. */
static bool provider_runs(void)
{
    setenv("OPAL_MCA_mca_base_component_path", BULK_TEST_PLUGIN_DIRS, 1);
    if (OPAL_SUCCESS != opal_init_util(NULL, NULL)) {
        return false;
    }
    opal_na_class_t *na = NULL;
    bool ok = OPAL_SUCCESS == opal_na_initialize(INFO, true, &na);
    if (ok) {
        (void) opal_na_finalize(na);
    }
    (void) opal_finalize_util();
    return ok;
}

int main(void)
{
    ofi_here = provider_runs();
    if (!ofi_here) {
        fprintf(stderr, "bulk_ofi_test: %s does not open here: skipped\n", INFO);
        return 77;
    }
    Suite *s = suite_create("bulk_ofi_" BULK_OFI_PROTO);
    OPAL_TEST_ADD(s, rdma_pulls_between_different_segment_lists);
    OPAL_TEST_ADD(s, rdma_pushes_between_different_segment_lists);
    OPAL_TEST_ADD(s, copy_forced_pulls_the_same_bytes);
    OPAL_TEST_ADD(s, copy_forced_pushes_the_same_bytes);
    OPAL_TEST_ADD(s, eager_handle_is_pulled_without_the_network);
    OPAL_TEST_ADD(s, a_transfer_past_the_origin_end_is_refused);
    OPAL_TEST_ADD(s, cancel_completes_once_as_canceled);
    OPAL_TEST_ADD(s, rdma_from_a_forwarded_bound_handle_reaches_its_origin);
    OPAL_TEST_ADD(s, copy_from_a_forwarded_bound_handle_reaches_its_origin);
    return opal_test_run(s);
}
