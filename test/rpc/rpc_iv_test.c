/*
 * Incast variables within one process (rpc_iv.h): a namespace over "this
 * process alone" (it is the root), its store, versions, hooks and
 * refusals; and the iv protocol's handler over loopback, as a member
 * receives it (a fetch answered from the store, malformed and misdirected
 * requests refused with a reason). Multi-rank trees are rpc_iv_job_test.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/rpc/base/rpc_base_iv.h"
#include "opal/mca/rpc/rpc.h"
#include "opal/mca/rpc/rpc_iv.h"
#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

static opal_rpc_context_t *ctx;

static void setup(void)
{
    ck_assert_int_eq(opal_init_util(NULL, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_init(NULL, false), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_context_create(0, &ctx), OPAL_SUCCESS);
}

static void teardown(void)
{
    ck_assert_int_eq(opal_rpc_context_destroy(ctx), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_finalize(), OPAL_SUCCESS);
    opal_finalize_util();
}

typedef struct {
    int calls;
    int status;
    char value[64];
    size_t len;
    uint64_t version;
} result_t;

static void record(opal_rpc_iv_ns_t *ns, int status, const void *value, size_t len,
                   uint64_t version, void *arg)
{
    (void) ns;
    result_t *r = arg;
    r->calls++;
    r->status = status;
    r->len = len;
    r->version = version;
    if (NULL != value && len < sizeof(r->value)) {
        memcpy(r->value, value, len);
        r->value[len] = '\0';
    }
}

static bool called(void *arg)
{
    return ((result_t *) arg)->calls > 0;
}

/* Progresses until r's callback ran; it must have run exactly once. */
static void wait_for(result_t *r)
{
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 30000, called, r), OPAL_SUCCESS);
    (void) opal_rpc_progress(ctx, 0);
    ck_assert_int_eq(r->calls, 1);
}

static opal_rpc_iv_ns_t *alone(uint32_t id, const opal_rpc_iv_ops_t *ops)
{
    opal_rpc_iv_ns_t *ns = NULL;
    ck_assert_int_eq(opal_rpc_iv_ns_create(ctx, NULL, id, 0, NULL, ops, &ns), OPAL_SUCCESS);
    return ns;
}

START_TEST(fetch_of_a_missing_key_is_not_found_from_progress)
{
    opal_rpc_iv_ns_t *ns = alone(1, NULL);
    result_t r = {0};
    ck_assert_int_eq(opal_rpc_iv_fetch(ns, "nokey", 5, record, &r), OPAL_SUCCESS);
    /* Never from inside the call. */
    ck_assert_int_eq(r.calls, 0);
    wait_for(&r);
    ck_assert_int_eq(r.status, OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(opal_rpc_iv_ns_destroy(ns), OPAL_SUCCESS);
}
END_TEST

START_TEST(updates_are_stored_with_increasing_versions)
{
    opal_rpc_iv_ns_t *ns = alone(2, NULL);
    result_t u1 = {0}, f1 = {0}, u2 = {0}, f2 = {0};
    ck_assert_int_eq(opal_rpc_iv_update(ns, "k", 1, "one", 3, OPAL_RPC_IV_SYNC, record, &u1),
                     OPAL_SUCCESS);
    ck_assert_int_eq(u1.calls, 0);
    wait_for(&u1);
    ck_assert_int_eq(u1.status, OPAL_SUCCESS);
    ck_assert_uint_eq(u1.version, 1);
    ck_assert_int_eq(opal_rpc_iv_fetch(ns, "k", 1, record, &f1), OPAL_SUCCESS);
    wait_for(&f1);
    ck_assert_int_eq(f1.status, OPAL_SUCCESS);
    ck_assert_str_eq(f1.value, "one");
    ck_assert_uint_eq(f1.len, 3);
    ck_assert_uint_eq(f1.version, 1);
    ck_assert_int_eq(opal_rpc_iv_update(ns, "k", 1, "second", 6, OPAL_RPC_IV_LAZY, record, &u2),
                     OPAL_SUCCESS);
    wait_for(&u2);
    ck_assert_uint_eq(u2.version, 2);
    ck_assert_int_eq(opal_rpc_iv_fetch(ns, "k", 1, record, &f2), OPAL_SUCCESS);
    wait_for(&f2);
    ck_assert_str_eq(f2.value, "second");
    ck_assert_uint_eq(f2.version, 2);
    /* Another key is another variable. */
    result_t f3 = {0};
    ck_assert_int_eq(opal_rpc_iv_fetch(ns, "K", 1, record, &f3), OPAL_SUCCESS);
    wait_for(&f3);
    ck_assert_int_eq(f3.status, OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(opal_rpc_iv_ns_destroy(ns), OPAL_SUCCESS);
}
END_TEST

START_TEST(a_fetch_from_the_store_sends_nothing)
{
    opal_rpc_iv_ns_t *ns = alone(3, NULL);
    result_t u = {0}, f = {0};
    ck_assert_int_eq(opal_rpc_iv_update(ns, "k", 1, "v", 1, OPAL_RPC_IV_SYNC, record, &u),
                     OPAL_SUCCESS);
    wait_for(&u);
    opal_rpc_stats_t before, after;
    opal_rpc_iv_stats_t iv;
    opal_rpc_context_stats(ctx, &before);
    ck_assert_int_eq(opal_rpc_iv_fetch(ns, "k", 1, record, &f), OPAL_SUCCESS);
    wait_for(&f);
    opal_rpc_context_stats(ctx, &after);
    ck_assert_uint_eq(after.sent, before.sent);
    opal_rpc_iv_stats(ns, &iv);
    ck_assert_uint_eq(iv.hits, 1);
    ck_assert_uint_eq(iv.misses, 0);
    ck_assert_uint_eq(iv.sent, 0);
    ck_assert_uint_eq(iv.stored, 1);
    ck_assert_int_eq(opal_rpc_iv_ns_destroy(ns), OPAL_SUCCESS);
}
END_TEST

typedef struct {
    int fetches, updates, refreshes, drops;
    uint64_t last_version;
} hooks_t;

static int hook_fetch(opal_rpc_iv_ns_t *ns, const void *key, size_t keylen, void **value,
                      size_t *len, void *arg)
{
    (void) ns;
    hooks_t *h = arg;
    h->fetches++;
    if (keylen != 4 || 0 != memcmp(key, "made", 4)) {
        return OPAL_ERR_NOT_FOUND;
    }
    *value = strdup("produced");
    *len = 8;
    return OPAL_SUCCESS;
}

static int hook_update(opal_rpc_iv_ns_t *ns, const void *key, size_t keylen, const void *value,
                       size_t len, uint64_t version, void *arg)
{
    (void) ns;
    (void) key;
    (void) keylen;
    (void) version;
    hooks_t *h = arg;
    h->updates++;
    return 4 == len && 0 == memcmp(value, "deny", 4) ? OPAL_ERR_PERM : OPAL_SUCCESS;
}

static void hook_refresh(opal_rpc_iv_ns_t *ns, const void *key, size_t keylen, const void *value,
                         size_t len, uint64_t version, bool invalidate, void *arg)
{
    (void) ns;
    (void) key;
    (void) keylen;
    (void) value;
    (void) len;
    hooks_t *h = arg;
    h->refreshes += !invalidate;
    h->drops += invalidate;
    h->last_version = version;
}

START_TEST(the_roots_hooks_produce_refuse_and_see_values)
{
    hooks_t h = {0};
    opal_rpc_iv_ops_t ops = {
        .on_fetch = hook_fetch, .on_update = hook_update, .on_refresh = hook_refresh, .arg = &h};
    opal_rpc_iv_ns_t *ns = alone(4, &ops);
    result_t f = {0}, g = {0}, miss = {0}, deny = {0}, ok = {0};
    /* A miss at the root asks on_fetch, which stores version 1. */
    ck_assert_int_eq(opal_rpc_iv_fetch(ns, "made", 4, record, &f), OPAL_SUCCESS);
    wait_for(&f);
    ck_assert_int_eq(f.status, OPAL_SUCCESS);
    ck_assert_str_eq(f.value, "produced");
    ck_assert_uint_eq(f.version, 1);
    ck_assert_int_eq(h.fetches, 1);
    /* Stored: not asked again. */
    ck_assert_int_eq(opal_rpc_iv_fetch(ns, "made", 4, record, &g), OPAL_SUCCESS);
    wait_for(&g);
    ck_assert_str_eq(g.value, "produced");
    ck_assert_int_eq(h.fetches, 1);
    ck_assert_int_eq(opal_rpc_iv_fetch(ns, "none", 4, record, &miss), OPAL_SUCCESS);
    wait_for(&miss);
    ck_assert_int_eq(miss.status, OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(h.fetches, 2);
    /* on_update refuses: the updater hears it, the store keeps its value. */
    ck_assert_int_eq(opal_rpc_iv_update(ns, "made", 4, "deny", 4, OPAL_RPC_IV_SYNC, record, &deny),
                     OPAL_SUCCESS);
    wait_for(&deny);
    ck_assert_int_eq(deny.status, OPAL_ERR_PERM);
    ck_assert_int_eq(opal_rpc_iv_update(ns, "made", 4, "fine", 4, OPAL_RPC_IV_SYNC, record, &ok),
                     OPAL_SUCCESS);
    wait_for(&ok);
    ck_assert_int_eq(ok.status, OPAL_SUCCESS);
    ck_assert_uint_eq(ok.version, 2);
    ck_assert_int_eq(h.updates, 2);
    /* Stored twice (on_fetch's value and "fine"). */
    ck_assert_int_eq(h.refreshes, 2);
    ck_assert_uint_eq(h.last_version, 2);
    ck_assert_int_eq(opal_rpc_iv_ns_destroy(ns), OPAL_SUCCESS);
}
END_TEST

START_TEST(invalidate_at_the_root_keeps_its_store)
{
    hooks_t h = {0};
    opal_rpc_iv_ops_t ops = {.on_refresh = hook_refresh, .arg = &h};
    opal_rpc_iv_ns_t *ns = alone(5, &ops);
    result_t u = {0}, inv = {0}, f = {0};
    ck_assert_int_eq(opal_rpc_iv_update(ns, "k", 1, "kept", 4, OPAL_RPC_IV_SYNC, NULL, NULL),
                     OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_iv_update(ns, "k", 1, "kept", 4, OPAL_RPC_IV_SYNC, record, &u),
                     OPAL_SUCCESS);
    wait_for(&u);
    ck_assert_uint_eq(u.version, 2);
    ck_assert_int_eq(opal_rpc_iv_invalidate(ns, "k", 1, record, &inv), OPAL_SUCCESS);
    ck_assert_int_eq(inv.calls, 0);
    wait_for(&inv);
    ck_assert_int_eq(inv.status, OPAL_SUCCESS);
    /* Every member (one) reached. */
    ck_assert_uint_eq(inv.len, 1);
    ck_assert_int_eq(h.drops, 0);
    ck_assert_int_eq(opal_rpc_iv_fetch(ns, "k", 1, record, &f), OPAL_SUCCESS);
    wait_for(&f);
    ck_assert_str_eq(f.value, "kept");
    ck_assert_uint_eq(f.version, 2);
    ck_assert_int_eq(opal_rpc_iv_ns_destroy(ns), OPAL_SUCCESS);
}
END_TEST

START_TEST(bad_arguments_are_refused)
{
    opal_rpc_iv_ns_t *ns = NULL, *twice = NULL;
    result_t r = {0};
    opal_rpc_iv_opts_t bad_tree = {.tree = "binary"}, bad_k = {.tree = "kary", .k = 1};
    opal_rpc_iv_opts_t bad_timeout = {.timeout = -1};
    ck_assert_int_eq(opal_rpc_iv_ns_create(ctx, NULL, 6, 1, NULL, NULL, &ns), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_rpc_iv_ns_create(ctx, NULL, 6, 0, &bad_tree, NULL, &ns),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_rpc_iv_ns_create(ctx, NULL, 6, 0, &bad_k, NULL, &ns), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_rpc_iv_ns_create(ctx, NULL, 6, 0, &bad_timeout, NULL, &ns),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_rpc_iv_ns_create(NULL, NULL, 6, 0, NULL, NULL, &ns), OPAL_ERR_BAD_PARAM);
    ns = alone(6, NULL);
    ck_assert_int_eq(opal_rpc_iv_ns_create(ctx, NULL, 6, 0, NULL, NULL, &twice), OPAL_ERR_EXISTS);
    ck_assert_int_eq(opal_rpc_iv_fetch(ns, NULL, 1, record, &r), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_rpc_iv_fetch(ns, "k", 0, record, &r), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_rpc_iv_fetch(ns, "k", 1, NULL, &r), OPAL_ERR_BAD_PARAM);
    char *big = calloc(1, (1u << 20) + 1);
    ck_assert_ptr_nonnull(big);
    /* Past rpc_iv_key_max (1024) and rpc_iv_value_max (1 MiB). */
    ck_assert_int_eq(opal_rpc_iv_fetch(ns, big, 1025, record, &r), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(
        opal_rpc_iv_update(ns, "k", 1, big, (1u << 20) + 1, OPAL_RPC_IV_SYNC, record, &r),
        OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_rpc_iv_update(ns, "k", 1, NULL, 3, OPAL_RPC_IV_SYNC, record, &r),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_rpc_iv_update(ns, "k", 1, "v", 1, (opal_rpc_iv_mode_t) 7, record, &r),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_rpc_iv_invalidate(ns, "k", 0, record, &r), OPAL_ERR_BAD_PARAM);
    free(big);
    /* The largest value is taken, and comes back whole. */
    char *largest = malloc(1u << 20);
    ck_assert_ptr_nonnull(largest);
    memset(largest, 0x5a, 1u << 20);
    ck_assert_int_eq(
        opal_rpc_iv_update(ns, "k", 1, largest, 1u << 20, OPAL_RPC_IV_SYNC, record, &r),
        OPAL_SUCCESS);
    free(largest);
    /* Busy while an operation is not completed. */
    ck_assert_int_eq(opal_rpc_iv_ns_destroy(ns), OPAL_ERR_RESOURCE_BUSY);
    wait_for(&r);
    ck_assert_int_eq(r.status, OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_iv_ns_destroy(ns), OPAL_SUCCESS);
}
END_TEST

/* The limits are variables, read when a namespace is created and at each
 * call: a smaller key limit refuses a key the default takes, and a limit
 * out of range refuses the namespace. */
START_TEST(the_size_limits_are_variables)
{
    ck_assert_int_eq(opal_rpc_context_destroy(ctx), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_finalize(), OPAL_SUCCESS);
    setenv("OPAL_MCA_rpc_iv_key_max", "4", 1);
    setenv("OPAL_MCA_rpc_iv_value_max", "8", 1);
    ck_assert_int_eq(opal_rpc_init(NULL, false), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_context_create(0, &ctx), OPAL_SUCCESS);
    opal_rpc_iv_ns_t *ns = alone(10, NULL);
    result_t r = {0};
    ck_assert_int_eq(opal_rpc_iv_fetch(ns, "fivek", 5, record, &r), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(
        opal_rpc_iv_update(ns, "four", 4, "ninebytes", 9, OPAL_RPC_IV_SYNC, record, &r),
        OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_rpc_iv_update(ns, "four", 4, "eightbyt", 8, OPAL_RPC_IV_SYNC, record, &r),
                     OPAL_SUCCESS);
    wait_for(&r);
    ck_assert_int_eq(r.status, OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_iv_ns_destroy(ns), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_context_destroy(ctx), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_finalize(), OPAL_SUCCESS);
    setenv("OPAL_MCA_rpc_iv_key_max", "0", 1);
    ck_assert_int_eq(opal_rpc_init(NULL, false), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_context_create(0, &ctx), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_iv_ns_create(ctx, NULL, 11, 0, NULL, NULL, &ns), OPAL_ERR_BAD_PARAM);
    unsetenv("OPAL_MCA_rpc_iv_key_max");
    unsetenv("OPAL_MCA_rpc_iv_value_max");
}
END_TEST

/* ------------------------------------------- the protocol, as received */

typedef struct {
    int calls;
    int status;
    char reason[256];
    uint64_t version;
    uint32_t members;
    char value[64];
} wire_t;

static void wire_done(opal_rpc_request_t *req, int status, void *arg)
{
    wire_t *w = arg;
    const rpc_iv_out_t *out = opal_rpc_req_output(req);
    w->calls++;
    w->status = status;
    const char *why = opal_rpc_req_error_reason(req);
    snprintf(w->reason, sizeof(w->reason), "%s", NULL == why ? "" : why);
    if (OPAL_SUCCESS == status) {
        w->version = out->version;
        w->members = out->members;
        if (out->value.len > 0 && out->value.len < sizeof(w->value)) {
            memcpy(w->value, out->value.buf, out->value.len);
            w->value[out->value.len] = '\0';
        }
    }
}

static bool wire_called(void *arg)
{
    return ((wire_t *) arg)->calls > 0;
}

/* Sends this process an iv request of index as another member would. */
static void send_iv(uint32_t index, const char *group, uint32_t ns_id, uint32_t root,
                    const char *key, uint32_t keylen, const char *value, wire_t *w)
{
    opal_rpc_endpoint_t self = {.addr = NULL, .ctx_idx = 0};
    opal_rpc_request_t *req = NULL;
    ck_assert_int_eq(opal_rpc_req_create(ctx, &self, OPAL_RPC_IV_OPCODE(index), &req),
                     OPAL_SUCCESS);
    rpc_iv_in_t *in = opal_rpc_req_input(req);
    in->group = (char *) group;
    in->ns_id = ns_id;
    in->root = root;
    in->key.buf = (void *) key;
    in->key.len = keylen;
    in->value.buf = (void *) value;
    in->value.len = NULL == value ? 0 : (uint32_t) strlen(value);
    ck_assert_int_eq(opal_rpc_req_send(req, wire_done, w), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 30000, wire_called, w), OPAL_SUCCESS);
    ck_assert_int_eq(w->calls, 1);
}

START_TEST(a_members_request_is_served_from_the_store)
{
    opal_rpc_iv_ns_t *ns = alone(7, NULL);
    wire_t up = {0}, fetch = {0}, inval = {0};
    send_iv(IV_OP_UPDATE, "", 7, 0, "key", 3, "wired", &up);
    ck_assert_int_eq(up.status, OPAL_SUCCESS);
    ck_assert_uint_eq(up.version, 1);
    send_iv(IV_OP_FETCH, "", 7, 0, "key", 3, NULL, &fetch);
    ck_assert_int_eq(fetch.status, OPAL_SUCCESS);
    ck_assert_str_eq(fetch.value, "wired");
    ck_assert_uint_eq(fetch.version, 1);
    send_iv(IV_OP_INVAL_UP, "", 7, 0, "key", 3, NULL, &inval);
    ck_assert_int_eq(inval.status, OPAL_SUCCESS);
    ck_assert_uint_eq(inval.members, 1);
    opal_rpc_iv_stats_t st;
    opal_rpc_iv_stats(ns, &st);
    ck_assert_uint_eq(st.served, 3);
    ck_assert_uint_eq(st.refused, 0);
    ck_assert_int_eq(opal_rpc_iv_ns_destroy(ns), OPAL_SUCCESS);
}
END_TEST

START_TEST(malformed_or_misdirected_requests_are_refused_with_a_reason)
{
    opal_rpc_iv_ns_t *ns = alone(8, NULL);
    wire_t w[6];
    memset(w, 0, sizeof(w));
    send_iv(IV_OP_FETCH, "", 9, 0, "key", 3, NULL, &w[0]);
    ck_assert_int_eq(w[0].status, OPAL_ERR_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(w[0].reason, "no namespace 9 over group ''"));
    send_iv(IV_OP_FETCH, "", 8, 2, "key", 3, NULL, &w[1]);
    ck_assert_int_eq(w[1].status, OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_nonnull(strstr(w[1].reason, "root at rank 0 here, not 2"));
    send_iv(IV_OP_FETCH, "", 8, 0, "", 0, NULL, &w[2]);
    ck_assert_int_eq(w[2].status, OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_nonnull(strstr(w[2].reason, "a key of 0 bytes"));
    send_iv(IV_OP_FETCH, "", 8, 0, "key", 3, "stowaway", &w[3]);
    ck_assert_int_eq(w[3].status, OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_nonnull(strstr(w[3].reason, "in a request that has none"));
    send_iv(IV_OP_UPDATE, NULL, 8, 0, "key", 3, "v", &w[4]);
    ck_assert_int_eq(w[4].status, OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_nonnull(strstr(w[4].reason, "no group name"));
    send_iv(IV_OP_FETCH, "other", 8, 0, "key", 3, NULL, &w[5]);
    ck_assert_int_eq(w[5].status, OPAL_ERR_NOT_FOUND);
    opal_rpc_iv_stats_t st;
    opal_rpc_iv_stats(ns, &st);
    /* The ones that named this namespace. */
    ck_assert_uint_eq(st.refused, 1);
    ck_assert_uint_eq(st.served, 0);
    ck_assert_int_eq(opal_rpc_iv_ns_destroy(ns), OPAL_SUCCESS);
}
END_TEST

int main(void)
{
    setenv("OPAL_MCA_mca_base_component_path", RPC_TEST_PLUGIN_DIRS, 0);
    Suite *s = suite_create("rpc_iv");
    TCase *tc = tcase_create("iv");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, fetch_of_a_missing_key_is_not_found_from_progress);
    tcase_add_test(tc, updates_are_stored_with_increasing_versions);
    tcase_add_test(tc, a_fetch_from_the_store_sends_nothing);
    tcase_add_test(tc, the_roots_hooks_produce_refuse_and_see_values);
    tcase_add_test(tc, invalidate_at_the_root_keeps_its_store);
    tcase_add_test(tc, bad_arguments_are_refused);
    tcase_add_test(tc, the_size_limits_are_variables);
    tcase_add_test(tc, a_members_request_is_served_from_the_store);
    tcase_add_test(tc, malformed_or_misdirected_requests_are_refused_with_a_reason);
    suite_add_tcase(s, tc);
    return opal_test_run(s);
}
