/*
 * The na base as units: info strings, the "no component claims" error,
 * blob headers, addresses named for messages, exactly-once operation
 * states and trigger order, op reuse from a callback, context ids, the
 * poll hook. Completions are made by
 * hand through the components' helpers on a class of na/ofi (shm when it
 * runs here, else tcp), so no traffic is needed.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/opal_error.h"
#include "test/na/na_test_support.h"
#include "test/support/opal_test.h"

static na_test_end_t end;

static void open_any(void)
{
    na_test_init();
    if (OPAL_SUCCESS != na_test_open("ofi+shm", &end)) {
        ck_assert_int_eq(na_test_open("ofi+tcp://127.0.0.1", &end), OPAL_SUCCESS);
    }
}

static void close_any(void)
{
    na_test_close(&end);
    na_test_fini();
}

START_TEST(info_strings_split_into_class_protocol_and_host)
{
    opal_na_info_t p;
    char *st = NULL;
    ck_assert_int_eq(opal_na_info_parse("ofi+tcp://1.2.3.4:5", &p, &st), OPAL_SUCCESS);
    ck_assert_str_eq(p.class_name, "ofi");
    ck_assert_str_eq(p.protocol_name, "tcp");
    ck_assert_str_eq(p.host_name, "1.2.3.4:5");
    free(st);
    ck_assert_int_eq(opal_na_info_parse("btl", &p, &st), OPAL_SUCCESS);
    ck_assert_str_eq(p.class_name, "btl");
    ck_assert_ptr_null(p.protocol_name);
    ck_assert_ptr_null(p.host_name);
    free(st);
    ck_assert_int_eq(opal_na_info_parse("ofi+verbs;ofi_rxm://[fe80::1%eth0]:7", &p, &st),
                     OPAL_SUCCESS);
    ck_assert_str_eq(p.protocol_name, "verbs;ofi_rxm");
    ck_assert_str_eq(p.host_name, "[fe80::1%eth0]:7");
    free(st);
}
END_TEST

START_TEST(malformed_info_strings_are_refused)
{
    static const char *bad[] = {"", "+tcp", "ofi+", "ofi+tcp://", "of i", "ofi+t/cp", "ofi://a b"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        opal_na_info_t p;
        char *st = (char *) 1;
        ck_assert_msg(OPAL_ERR_BAD_PARAM == opal_na_info_parse(bad[i], &p, &st), "\"%s\"", bad[i]);
        ck_assert_ptr_null(st);
    }
    opal_na_info_t p;
    char *st;
    ck_assert_int_eq(opal_na_info_parse(NULL, &p, &st), OPAL_ERR_BAD_PARAM);
}
END_TEST

START_TEST(a_string_no_component_claims_fails_listing_what_each_accepts)
{
    na_test_init();
    opal_na_class_t *cls = (opal_na_class_t *) 1;
    ck_assert_int_eq(opal_na_initialize("nosuch+thing", false, &cls), OPAL_ERR_NOT_FOUND);
    ck_assert_ptr_null(cls);
    ck_assert_int_eq(opal_na_initialize("ofi+carrierpigeon", false, &cls), OPAL_ERR_NOT_FOUND);
    /* The list names na/ofi's protocols (the framework is open again for
     * the check). */
    ck_assert_int_eq(na_test_open("ofi+shm", &end) == OPAL_SUCCESS ||
                         na_test_open("ofi+tcp://127.0.0.1", &end) == OPAL_SUCCESS,
                     1);
    const char *list = opal_na_base_protocols_list();
    ck_assert_msg(NULL != strstr(list, "ofi: ofi+<tcp|net|shm|udp|verbs>"), "%s", list);
    close_any();
}
END_TEST

START_TEST(blob_headers_refuse_truncated_wrong_magic_version_and_component)
{
    open_any();
    opal_na_addr_t *self = NULL;
    ck_assert_int_eq(opal_na_addr_self(end.cls, &self), OPAL_SUCCESS);
    size_t n = opal_na_addr_get_serialize_size(end.cls, self);
    unsigned char *blob = malloc(n), *copy = malloc(n);
    ck_assert_int_eq(opal_na_addr_serialize(end.cls, blob, n, self), OPAL_SUCCESS);
    /* Too small a buffer to serialize into. */
    ck_assert_int_eq(opal_na_addr_serialize(end.cls, blob, n - 1, self), OPAL_ERR_TRUNCATED);
    ck_assert_int_eq(opal_na_addr_serialize(end.cls, blob, n, self), OPAL_SUCCESS);
    opal_na_addr_t *a = NULL;
    /* Wrong magic (a memory handle's blob is not an address). */
    memcpy(copy, blob, n);
    copy[0] ^= 0xff;
    ck_assert_int_eq(opal_na_addr_deserialize(end.cls, &a, copy, n), OPAL_ERR_BAD_PARAM);
    /* Another format version. */
    memcpy(copy, blob, n);
    copy[4] = 2;
    ck_assert_int_eq(opal_na_addr_deserialize(end.cls, &a, copy, n), OPAL_ERR_VERSION_MISMATCH);
    /* Another component: "btl" in place of "ofi" (same length). */
    memcpy(copy, blob, n);
    ck_assert(0 == memcmp(copy + 7, "ofi", 3));
    memcpy(copy + 7, "btl", 3);
    ck_assert_int_eq(opal_na_addr_deserialize(end.cls, &a, copy, n), OPAL_ERR_BAD_PARAM);
    /* Truncated at every length. */
    for (size_t k = 0; k < n; ++k) {
        ck_assert_int_ne(opal_na_addr_deserialize(end.cls, &a, blob, k), OPAL_SUCCESS);
        ck_assert_ptr_null(a);
    }
    ck_assert_int_eq(opal_na_addr_deserialize(end.cls, &a, blob, n), OPAL_SUCCESS);
    opal_na_addr_free(end.cls, a);
    opal_na_addr_free(end.cls, self);
    free(blob);
    free(copy);
    close_any();
}
END_TEST

START_TEST(an_address_names_itself_by_uri_cut_with_dots_or_by_the_fallback)
{
    open_any();
    opal_na_addr_t *self = NULL;
    ck_assert_int_eq(opal_na_addr_self(end.cls, &self), OPAL_SUCCESS);
    size_t n = 0;
    ck_assert_int_eq(opal_na_addr_to_string(end.cls, NULL, &n, self), OPAL_ERR_TRUNCATED);
    char *uri = malloc(n), *buf = malloc(n + 8);
    ck_assert_int_eq(opal_na_addr_to_string(end.cls, uri, &n, self), OPAL_SUCCESS);
    ck_assert_uint_gt(strlen(uri), 12);
    /* Room for it all: the URI itself. */
    ck_assert_ptr_eq(opal_na_addr_name(end.cls, self, buf, n, "none"), buf);
    ck_assert_str_eq(buf, uri);
    /* One byte short, and a buffer of 12: cut, ending in "...". */
    const size_t sizes[] = {n - 1, 12};
    for (size_t k = 0; k < 2; ++k) {
        const size_t size = sizes[k];
        memset(buf, 'x', n + 8);
        opal_na_addr_name(end.cls, self, buf, size, "none");
        ck_assert_uint_eq(strlen(buf), size - 1);
        ck_assert(0 == memcmp(buf, uri, size - 4));
        ck_assert_str_eq(buf + size - 4, "...");
        ck_assert_int_eq(buf[size], 'x');
    }
    /* No address, no class: the fallback, cut to the buffer too. */
    ck_assert_str_eq(opal_na_addr_name(end.cls, NULL, buf, n, "this process"), "this process");
    ck_assert_str_eq(opal_na_addr_name(NULL, self, buf, n, "nobody"), "nobody");
    ck_assert_str_eq(opal_na_addr_name(end.cls, NULL, buf, 5, "this process"), "this");
    opal_na_addr_free(end.cls, self);
    free(uri);
    free(buf);
    close_any();
}
END_TEST

static int order_seen[8];
static int order_count;

static void record_order(const opal_na_cb_info_t *info)
{
    order_seen[order_count++] = (int) (intptr_t) info->arg;
}

/* Starts op as a pending operation of end's context, as a component's
 * send would be (the base's op_start through a receive we withdraw). */
static void start_pending(opal_na_op_id_t *op, opal_na_cb_t cb, void *arg, char *buf)
{
    ck_assert_int_eq(opal_na_msg_recv_unexpected(end.cls, end.ctx, cb, arg, buf, 1, NULL, op),
                     OPAL_SUCCESS);
    ck_assert_uint_eq(atomic_load(&op->state), OPAL_NA_OP_PENDING);
}

START_TEST(an_operation_completes_exactly_once_and_triggers_in_order)
{
    open_any();
    opal_na_op_id_t *ops[3];
    char buf[3];
    for (int i = 0; i < 3; ++i) {
        ops[i] = opal_na_op_create(end.cls);
        start_pending(ops[i], record_order, (void *) (intptr_t) i, &buf[i]);
    }
    order_count = 0;
    /* Canceled in the order 2, 0, 1: triggered in that order. */
    ck_assert_int_eq(opal_na_cancel(end.cls, end.ctx, ops[2]), OPAL_SUCCESS);
    ck_assert_int_eq(opal_na_cancel(end.cls, end.ctx, ops[0]), OPAL_SUCCESS);
    ck_assert_int_eq(opal_na_cancel(end.cls, end.ctx, ops[1]), OPAL_SUCCESS);
    /* Completed: a claim or a second cancel changes nothing. */
    ck_assert(!opal_na_base_op_claim(ops[0], NULL));
    ck_assert(!opal_na_base_op_cancel_mark(ops[0]));
    ck_assert_int_eq(opal_na_cancel(end.cls, end.ctx, ops[0]), OPAL_SUCCESS);
    /* In use until triggered. */
    ck_assert_int_eq(opal_na_op_destroy(end.cls, ops[0]), OPAL_ERR_RESOURCE_BUSY);
    ck_assert_int_eq(opal_na_context_destroy(end.cls, end.ctx), OPAL_ERR_RESOURCE_BUSY);
    unsigned int ran = 0;
    ck_assert_int_eq(opal_na_trigger(end.ctx, 2, &ran), OPAL_SUCCESS);
    ck_assert_uint_eq(ran, 2);
    ck_assert_int_eq(opal_na_trigger(end.ctx, 0, &ran), OPAL_SUCCESS);
    ck_assert_uint_eq(ran, 1);
    ck_assert_int_eq(order_count, 3);
    ck_assert_int_eq(order_seen[0], 2);
    ck_assert_int_eq(order_seen[1], 0);
    ck_assert_int_eq(order_seen[2], 1);
    for (int i = 0; i < 3; ++i) {
        ck_assert_uint_eq(atomic_load(&ops[i]->state), OPAL_NA_OP_IDLE);
        ck_assert_int_eq(opal_na_op_destroy(end.cls, ops[i]), OPAL_SUCCESS);
    }
    close_any();
}
END_TEST

START_TEST(the_exactly_once_guard_lets_one_of_claim_and_cancel_win)
{
    opal_na_op_id_t op;
    memset(&op, 0, sizeof(op));
    atomic_store(&op.state, OPAL_NA_OP_PENDING);
    ck_assert(opal_na_base_op_cancel_mark(&op));
    ck_assert(!opal_na_base_op_cancel_mark(&op));
    bool canceled = false;
    ck_assert(opal_na_base_op_claim(&op, &canceled));
    ck_assert(canceled);
    ck_assert(!opal_na_base_op_claim(&op, &canceled));
    atomic_store(&op.state, OPAL_NA_OP_PENDING);
    ck_assert(opal_na_base_op_claim(&op, &canceled));
    ck_assert(!canceled);
    ck_assert(!opal_na_base_op_cancel_mark(&op));
}
END_TEST

static opal_na_op_id_t *reuse_op;
static int reuse_calls;
static char reuse_buf[4];

static void reuse_cb(const opal_na_cb_info_t *info)
{
    reuse_calls++;
    if (1 == reuse_calls) {
        /* The same id, from inside its own callback. */
        ck_assert_int_eq(opal_na_msg_recv_unexpected(end.cls, end.ctx, reuse_cb, info->arg,
                                                     reuse_buf, 1, NULL, reuse_op),
                         OPAL_SUCCESS);
    }
}

START_TEST(an_op_id_can_be_reused_from_inside_its_callback)
{
    open_any();
    reuse_calls = 0;
    reuse_op = opal_na_op_create(end.cls);
    start_pending(reuse_op, reuse_cb, NULL, reuse_buf);
    /* Reusing it while pending is refused. */
    ck_assert_int_eq(
        opal_na_msg_recv_unexpected(end.cls, end.ctx, reuse_cb, NULL, reuse_buf, 1, NULL, reuse_op),
        OPAL_ERR_RESOURCE_BUSY);
    ck_assert_int_eq(opal_na_cancel(end.cls, end.ctx, reuse_op), OPAL_SUCCESS);
    ck_assert_int_eq(opal_na_trigger(end.ctx, 0, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(reuse_calls, 1);
    ck_assert_uint_eq(atomic_load(&reuse_op->state), OPAL_NA_OP_PENDING);
    ck_assert_int_eq(opal_na_cancel(end.cls, end.ctx, reuse_op), OPAL_SUCCESS);
    ck_assert_int_eq(opal_na_trigger(end.ctx, 0, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(reuse_calls, 2);
    ck_assert_int_eq(opal_na_op_destroy(end.cls, reuse_op), OPAL_SUCCESS);
    close_any();
}
END_TEST

START_TEST(a_context_id_in_use_is_refused_and_free_again_after_destroy)
{
    open_any();
    opal_na_context_t *c = (opal_na_context_t *) 1;
    ck_assert_int_eq(opal_na_context_create(end.cls, 0, &c), OPAL_ERR_EXISTS);
    ck_assert_ptr_null(c);
    ck_assert_int_eq(opal_na_context_create(end.cls, 7, &c), OPAL_SUCCESS);
    ck_assert_ptr_eq(opal_na_base_context_get(end.cls, 7), c);
    ck_assert_int_eq(opal_na_finalize(end.cls), OPAL_ERR_RESOURCE_BUSY);
    ck_assert_int_eq(opal_na_context_destroy(end.cls, c), OPAL_SUCCESS);
    ck_assert_ptr_null(opal_na_base_context_get(end.cls, 7));
    ck_assert_int_eq(opal_na_context_create(end.cls, 7, &c), OPAL_SUCCESS);
    ck_assert_int_eq(opal_na_context_destroy(end.cls, c), OPAL_SUCCESS);
    close_any();
}
END_TEST

static int hook_calls;
static void hook(opal_na_class_t *cls, void *arg)
{
    (void) cls;
    hook_calls += *(int *) arg;
}

START_TEST(the_poll_hook_runs_after_each_poll_and_only_one_is_installed)
{
    open_any();
    int one = 1;
    hook_calls = 0;
    ck_assert_int_eq(opal_na_base_poll_hook_set(end.cls, hook, &one), OPAL_SUCCESS);
    ck_assert_int_eq(opal_na_base_poll_hook_set(end.cls, hook, &one), OPAL_ERR_EXISTS);
    ck_assert_int_eq(opal_na_poll(end.cls, end.ctx, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(opal_na_poll(end.cls, end.ctx, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(hook_calls, 2);
    ck_assert_int_eq(opal_na_poll_wait(end.cls, end.ctx, 10, NULL), OPAL_ERR_TIMEOUT);
    ck_assert_int_gt(hook_calls, 2);
    ck_assert_int_eq(opal_na_base_poll_hook_set(end.cls, NULL, NULL), OPAL_SUCCESS);
    int before = hook_calls;
    ck_assert_int_eq(opal_na_poll(end.cls, end.ctx, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(hook_calls, before);
    close_any();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("na_base");
    OPAL_TEST_ADD(s, info_strings_split_into_class_protocol_and_host);
    OPAL_TEST_ADD(s, malformed_info_strings_are_refused);
    OPAL_TEST_ADD(s, the_exactly_once_guard_lets_one_of_claim_and_cancel_win);
    na_test_init();
    na_test_end_t probe;
    bool have = OPAL_SUCCESS == na_test_open("ofi+shm", &probe) ||
                OPAL_SUCCESS == na_test_open("ofi+tcp://127.0.0.1", &probe);
    if (have) {
        na_test_close(&probe);
    }
    na_test_fini();
    if (have) {
        OPAL_TEST_ADD(s, a_string_no_component_claims_fails_listing_what_each_accepts);
        OPAL_TEST_ADD(s, blob_headers_refuse_truncated_wrong_magic_version_and_component);
        OPAL_TEST_ADD(s, an_address_names_itself_by_uri_cut_with_dots_or_by_the_fallback);
        OPAL_TEST_ADD(s, an_operation_completes_exactly_once_and_triggers_in_order);
        OPAL_TEST_ADD(s, an_op_id_can_be_reused_from_inside_its_callback);
        OPAL_TEST_ADD(s, a_context_id_in_use_is_refused_and_free_again_after_destroy);
        OPAL_TEST_ADD(s, the_poll_hook_runs_after_each_poll_and_only_one_is_installed);
    }
    return opal_test_run(s);
}
