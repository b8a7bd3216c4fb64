/* opal_rte: without a runtime every entry says NOT_INITIALIZED; with one
 * installed, calls reach its hooks after opal checked their arguments.
 * This program links libopal only: opal works without orte. */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/runtime/opal_init.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "test/orte/fake_rte.h"
#include "test/support/opal_test.h"

static void setup(void)
{
    ck_assert_int_eq(opal_init_util(NULL, NULL), OPAL_SUCCESS);
    fake_rte_reset();
}

static void teardown(void)
{
    if (opal_rte_installed()) {
        ck_assert_int_eq(opal_rte_uninstall(), OPAL_SUCCESS);
    }
    fake_rte_reset();
    ck_assert_int_eq(opal_finalize_util(), OPAL_SUCCESS);
}

START_TEST(modex_send_without_runtime_is_not_initialized)
{
    ck_assert(!opal_rte_installed());
    ck_assert_ptr_null(opal_rte_name());
    ck_assert_int_eq(opal_modex_send("k", "v", 1, OPAL_MODEX_SCOPE_GLOBAL),
                     OPAL_ERR_NOT_INITIALIZED);
    ck_assert_int_eq(opal_modex_commit(), OPAL_ERR_NOT_INITIALIZED);
}
END_TEST

START_TEST(modex_recv_without_runtime_is_not_initialized_and_clears_outputs)
{
    void *value = (void *) &value;
    size_t size = 77;
    ck_assert_int_eq(opal_modex_recv(0, "k", &value, &size, 0), OPAL_ERR_NOT_INITIALIZED);
    ck_assert_ptr_null(value);
    ck_assert_uint_eq(size, 0);
}
END_TEST

START_TEST(fence_without_runtime_is_not_initialized)
{
    ck_assert_int_eq(opal_fence(true), OPAL_ERR_NOT_INITIALIZED);
    ck_assert_int_eq(opal_fence(false), OPAL_ERR_NOT_INITIALIZED);
}
END_TEST

START_TEST(abort_without_runtime_returns_not_initialized)
{
    ck_assert_int_eq(opal_abort(3, "test abort %d without a runtime", 1), OPAL_ERR_NOT_INITIALIZED);
}
END_TEST

START_TEST(uninstall_without_runtime_is_an_error)
{
    ck_assert_int_eq(opal_rte_uninstall(), OPAL_ERR_NOT_INITIALIZED);
}
END_TEST

START_TEST(install_refuses_a_table_with_a_missing_entry)
{
    ck_assert_int_eq(opal_rte_install(NULL), OPAL_ERR_BAD_PARAM);
    opal_rte_hooks_t hooks = fake_rte_hooks;
    hooks.rte_fence = NULL;
    ck_assert_int_eq(opal_rte_install(&hooks), OPAL_ERR_BAD_PARAM);
    hooks = fake_rte_hooks;
    hooks.rte_name = NULL;
    ck_assert_int_eq(opal_rte_install(&hooks), OPAL_ERR_BAD_PARAM);
    ck_assert(!opal_rte_installed());
}
END_TEST

START_TEST(second_install_is_refused_until_uninstall)
{
    ck_assert_int_eq(opal_rte_install(&fake_rte_hooks), OPAL_SUCCESS);
    ck_assert_str_eq(opal_rte_name(), "fake");
    opal_rte_hooks_t other = fake_rte_hooks;
    other.rte_name = "other";
    ck_assert_int_eq(opal_rte_install(&other), OPAL_ERR_EXISTS);
    ck_assert_str_eq(opal_rte_name(), "fake");
    ck_assert_int_eq(opal_rte_uninstall(), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rte_install(&other), OPAL_SUCCESS);
    ck_assert_str_eq(opal_rte_name(), "other");
}
END_TEST

START_TEST(installed_table_is_a_copy)
{
    opal_rte_hooks_t hooks = fake_rte_hooks;
    ck_assert_int_eq(opal_rte_install(&hooks), OPAL_SUCCESS);
    memset(&hooks, 0, sizeof(hooks));
    ck_assert_int_eq(opal_fence(false), OPAL_SUCCESS);
    ck_assert_int_eq(fake_rte_calls.fence, 1);
}
END_TEST

START_TEST(send_and_recv_reach_the_runtime)
{
    ck_assert_int_eq(opal_rte_install(&fake_rte_hooks), OPAL_SUCCESS);
    ck_assert_int_eq(opal_modex_send("btl.sm.addr", "abc", 3, OPAL_MODEX_SCOPE_LOCAL),
                     OPAL_SUCCESS);
    ck_assert_int_eq(fake_rte_calls.put, 1);
    ck_assert_str_eq(fake_rte_calls.last_key, "btl.sm.addr");
    ck_assert_int_eq(fake_rte_calls.last_scope, OPAL_MODEX_SCOPE_LOCAL);
    ck_assert_int_eq(opal_modex_commit(), OPAL_SUCCESS);
    ck_assert_int_eq(fake_rte_calls.commit, 1);

    void *value = NULL;
    size_t size = 0;
    ck_assert_int_eq(opal_modex_recv(0, "btl.sm.addr", &value, &size, 5000), OPAL_SUCCESS);
    ck_assert_uint_eq(size, 3);
    ck_assert_mem_eq(value, "abc", 3);
    ck_assert_int_eq(fake_rte_calls.last_timeout_ns, 5000);
    free(value);

    fake_rte_store(4, "peer.key", "xyz!", 4);
    ck_assert_int_eq(opal_modex_recv(4, "peer.key", &value, &size, OPAL_MODEX_WAIT_FOREVER),
                     OPAL_SUCCESS);
    ck_assert_uint_eq(fake_rte_calls.last_peer, 4);
    ck_assert_int_eq(fake_rte_calls.last_timeout_ns, OPAL_MODEX_WAIT_FOREVER);
    ck_assert_mem_eq(value, "xyz!", 4);
    free(value);
}
END_TEST

START_TEST(runtime_errors_come_back_unchanged)
{
    ck_assert_int_eq(opal_rte_install(&fake_rte_hooks), OPAL_SUCCESS);
    void *value = NULL;
    size_t size = 0;
    ck_assert_int_eq(opal_modex_recv(1, "never.put", &value, &size, 0), OPAL_ERR_NOT_FOUND);
    fake_rte_fail_gets(OPAL_ERR_TIMEOUT);
    ck_assert_int_eq(opal_modex_recv(1, "never.put", &value, &size, 10), OPAL_ERR_TIMEOUT);
    ck_assert_ptr_null(value);
}
END_TEST

START_TEST(bad_arguments_are_refused_before_the_runtime_sees_them)
{
    ck_assert_int_eq(opal_rte_install(&fake_rte_hooks), OPAL_SUCCESS);
    char long_key[OPAL_MODEX_MAX_KEY + 2];
    memset(long_key, 'k', sizeof(long_key) - 1);
    long_key[sizeof(long_key) - 1] = '\0';
    void *value = NULL;
    size_t size = 0;

    ck_assert_int_eq(opal_modex_send("", "v", 1, OPAL_MODEX_SCOPE_GLOBAL), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_modex_send(NULL, "v", 1, OPAL_MODEX_SCOPE_GLOBAL), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_modex_send(long_key, "v", 1, OPAL_MODEX_SCOPE_GLOBAL),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_modex_send("k", NULL, 1, OPAL_MODEX_SCOPE_GLOBAL), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_modex_send("k", "v", 1, (opal_modex_scope_t) 0), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_modex_send("k", "v", 1, (opal_modex_scope_t) 4), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_modex_recv(0, "", &value, &size, 0), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_modex_recv(0, long_key, &value, &size, 0), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_modex_recv(0, "k", NULL, &size, 0), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_modex_recv(0, "k", &value, NULL, 0), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(fake_rte_calls.put + fake_rte_calls.get, 0);

    /* The longest key allowed goes through; an empty value too. */
    long_key[OPAL_MODEX_MAX_KEY] = '\0';
    ck_assert_int_eq(opal_modex_send(long_key, NULL, 0, OPAL_MODEX_SCOPE_REMOTE), OPAL_SUCCESS);
    ck_assert_int_eq(fake_rte_calls.put, 1);
}
END_TEST

START_TEST(fence_passes_collect_through)
{
    ck_assert_int_eq(opal_rte_install(&fake_rte_hooks), OPAL_SUCCESS);
    ck_assert_int_eq(opal_fence(true), OPAL_SUCCESS);
    ck_assert_int_eq(opal_fence(false), OPAL_SUCCESS);
    ck_assert_int_eq(fake_rte_calls.fence, 2);
    ck_assert_int_eq(fake_rte_calls.fence_collect, 1);
}
END_TEST

START_TEST(abort_formats_the_message_for_the_runtime)
{
    ck_assert_int_eq(opal_rte_install(&fake_rte_hooks), OPAL_SUCCESS);
    ck_assert_int_eq(opal_abort(7, "peer %d lost: %s", 3, "gone"), OPAL_ERR_UNREACH);
    ck_assert_int_eq(fake_rte_calls.abort, 1);
    ck_assert_int_eq(fake_rte_calls.last_status, 7);
    ck_assert_str_eq(fake_rte_calls.last_message, "peer 3 lost: gone");
}
END_TEST

START_TEST(uninstall_makes_entries_not_initialized_again)
{
    ck_assert_int_eq(opal_rte_install(&fake_rte_hooks), OPAL_SUCCESS);
    ck_assert_int_eq(opal_fence(false), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rte_uninstall(), OPAL_SUCCESS);
    ck_assert_int_eq(opal_fence(false), OPAL_ERR_NOT_INITIALIZED);
    ck_assert_int_eq(fake_rte_calls.fence, 1);
}
END_TEST

static uint32_t asked_peer;
static bool answer_finalized(uint32_t peer)
{
    asked_peer = peer;
    return 1 == peer;
}

START_TEST(peer_finalized_is_the_runtimes_answer_or_no)
{
    /* Without a runtime, or with one that cannot say: no. */
    ck_assert(!opal_rte_peer_finalized(1));
    ck_assert_int_eq(opal_rte_install(&fake_rte_hooks), OPAL_SUCCESS);
    ck_assert(!opal_rte_peer_finalized(1));
    ck_assert_int_eq(opal_rte_uninstall(), OPAL_SUCCESS);
    /* The hook is optional; with one, its answer. */
    opal_rte_hooks_t hooks = fake_rte_hooks;
    hooks.rte_peer_finalized = answer_finalized;
    ck_assert_int_eq(opal_rte_install(&hooks), OPAL_SUCCESS);
    ck_assert(opal_rte_peer_finalized(1));
    ck_assert(!opal_rte_peer_finalized(2));
    ck_assert_uint_eq(asked_peer, 2);
    /* Never through the modex, which may wait for the launcher. */
    ck_assert_int_eq(fake_rte_calls.get, 0);
}
END_TEST

static Suite *rte_suite(void)
{
    Suite *s = suite_create("opal_rte");
    TCase *tc;
#define ADD(fn)                                                                                    \
    do {                                                                                           \
        tc = tcase_create(#fn);                                                                    \
        tcase_add_checked_fixture(tc, setup, teardown);                                            \
        tcase_add_test(tc, fn);                                                                    \
        suite_add_tcase(s, tc);                                                                    \
    } while (0)
    ADD(modex_send_without_runtime_is_not_initialized);
    ADD(modex_recv_without_runtime_is_not_initialized_and_clears_outputs);
    ADD(fence_without_runtime_is_not_initialized);
    ADD(abort_without_runtime_returns_not_initialized);
    ADD(uninstall_without_runtime_is_an_error);
    ADD(install_refuses_a_table_with_a_missing_entry);
    ADD(second_install_is_refused_until_uninstall);
    ADD(installed_table_is_a_copy);
    ADD(send_and_recv_reach_the_runtime);
    ADD(runtime_errors_come_back_unchanged);
    ADD(bad_arguments_are_refused_before_the_runtime_sees_them);
    ADD(fence_passes_collect_through);
    ADD(abort_formats_the_message_for_the_runtime);
    ADD(uninstall_makes_entries_not_initialized_again);
    ADD(peer_finalized_is_the_runtimes_answer_or_no);
#undef ADD
    return s;
}

int main(void)
{
    return opal_test_run(rte_suite());
}
