/* Fault injection (opal/util/opal_fault.h): the configuration language,
 * the decision at each hit, and the sites of libopal (free lists, modex,
 * fence) ending in errors their callers see. In a build without sites
 * (no --enable-fault-injection) only the refusal to configure is tested. */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/class/opal_free_list.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_fault.h"
#include "test/orte/fake_rte.h"
#include "test/support/opal_test.h"

#if defined(OPAL_ENABLE_FAULT_INJECTION) && OPAL_ENABLE_FAULT_INJECTION

START_TEST(unconfigured_sites_never_fire)
{
    opal_fault_clear();
    for (int i = 0; i < 100; ++i) {
        ck_assert(!OPAL_FAULT(btl_send));
    }
    ck_assert_uint_eq(opal_fault_fired(OPAL_FAULT_SITE_btl_send), 0);
}
END_TEST

START_TEST(interval_fires_on_every_nth_hit)
{
    ck_assert_int_eq(opal_fault_configure("btl_send interval=3\n", "test"), OPAL_SUCCESS);
    for (int i = 1; i <= 9; ++i) {
        ck_assert_msg(OPAL_FAULT(btl_send) == (0 == i % 3), "hit %d", i);
    }
    ck_assert_uint_eq(opal_fault_fired(OPAL_FAULT_SITE_btl_send), 3);
    opal_fault_clear();
}
END_TEST

START_TEST(max_bounds_how_often_a_site_fires)
{
    ck_assert_int_eq(opal_fault_configure("fence max=2 # twice\n", "test"), OPAL_SUCCESS);
    int fired = 0;
    for (int i = 0; i < 10; ++i) {
        fired += OPAL_FAULT(fence) ? 1 : 0;
    }
    ck_assert_int_eq(fired, 2);
    opal_fault_clear();
}
END_TEST

START_TEST(probability_fires_about_that_often_and_reproducibly)
{
    ck_assert_int_eq(opal_fault_configure("btl_put probability=0.25 seed=11", "test"),
                     OPAL_SUCCESS);
    char first[4000];
    int fired = 0;
    for (int i = 0; i < 4000; ++i) {
        first[i] = OPAL_FAULT(btl_put);
        fired += first[i];
    }
    /* 1000 expected; 6 standard deviations either side. */
    ck_assert_msg(fired > 840 && fired < 1160, "fired %d times in 4000", fired);
    ck_assert_int_eq(opal_fault_configure("btl_put probability=0.25 seed=11", "test"),
                     OPAL_SUCCESS);
    for (int i = 0; i < 4000; ++i) {
        ck_assert_int_eq(OPAL_FAULT(btl_put), first[i]);
    }
    opal_fault_clear();
}
END_TEST

START_TEST(arg_is_kept_for_the_site)
{
    ck_assert_int_eq(opal_fault_configure("process_exit interval=1000 arg=9\nfence", "test"),
                     OPAL_SUCCESS);
    ck_assert_uint_eq(opal_fault_arg(OPAL_FAULT_SITE_process_exit), 9);
    ck_assert_uint_eq(opal_fault_arg(OPAL_FAULT_SITE_fence), 0);
    opal_fault_clear();
}
END_TEST

START_TEST(bad_configurations_are_refused_and_change_nothing)
{
    ck_assert_int_eq(opal_fault_configure("fence max=1", "test"), OPAL_SUCCESS);
    const char *bad[] = {
        "no_such_site\n", "fence probability=2\n", "fence interval=0\n",
        "fence max=-1\n", "fence colour=red\n",    "fence max\n",
        "fence\nfence\n", "fence arg=12abc\n",     "fence probability=nan\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        ck_assert_msg(OPAL_ERR_BAD_PARAM == opal_fault_configure(bad[i], "bad.conf"), "%s", bad[i]);
    }
    /* The earlier configuration still holds. */
    ck_assert(OPAL_FAULT(fence));
    ck_assert(!OPAL_FAULT(fence));
    opal_fault_clear();
}
END_TEST

START_TEST(a_missing_file_is_an_error)
{
    ck_assert_int_eq(opal_fault_configure_file("/nonexistent/faults.conf"), OPAL_ERR_NOT_FOUND);
}
END_TEST

/* --------------------------------------------------- the sites of libopal */

START_TEST(free_list_growth_fails_visibly_and_leaks_nothing)
{
    opal_free_list_t fl;
    OBJ_CONSTRUCT(&fl, opal_free_list_t);
    ck_assert_int_eq(opal_free_list_init(&fl, sizeof(opal_free_list_item_t), 8,
                                         OBJ_CLASS(opal_free_list_item_t), 0, 8, 0, 64, 8, NULL,
                                         NULL, NULL),
                     OPAL_SUCCESS);
    ck_assert_int_eq(opal_fault_configure("free_list_grow max=1", "test"), OPAL_SUCCESS);
    ck_assert_int_eq(opal_free_list_grow(&fl, 8), OPAL_ERR_OUT_OF_RESOURCE);
    /* Once only: the next growth works. */
    ck_assert_int_eq(opal_free_list_grow(&fl, 8), OPAL_SUCCESS);
    opal_fault_clear();
    OBJ_DESTRUCT(&fl);
}
END_TEST

START_TEST(modex_get_fails_visibly)
{
    fake_rte_reset();
    ck_assert_int_eq(opal_rte_install(&fake_rte_hooks), OPAL_SUCCESS);
    fake_rte_store(0, "k", "v", 1);
    ck_assert_int_eq(opal_fault_configure("modex_get", "test"), OPAL_SUCCESS);
    void *value = NULL;
    size_t size = 0;
    ck_assert_int_eq(opal_modex_recv(0, "k", &value, &size, 0), OPAL_ERR_NOT_FOUND);
    ck_assert_ptr_null(value);
    ck_assert_int_eq(fake_rte_calls.get, 0);
    opal_fault_clear();
    ck_assert_int_eq(opal_modex_recv(0, "k", &value, &size, 0), OPAL_SUCCESS);
    free(value);
    ck_assert_int_eq(opal_rte_uninstall(), OPAL_SUCCESS);
}
END_TEST

START_TEST(fence_fails_visibly)
{
    fake_rte_reset();
    ck_assert_int_eq(opal_rte_install(&fake_rte_hooks), OPAL_SUCCESS);
    ck_assert_int_eq(opal_fault_configure("fence interval=2 max=1", "test"), OPAL_SUCCESS);
    ck_assert_int_eq(opal_fence(false), OPAL_SUCCESS);
    ck_assert_int_eq(opal_fence(false), OPAL_ERR_TIMEOUT);
    ck_assert_int_eq(opal_fence(false), OPAL_SUCCESS);
    ck_assert_int_eq(fake_rte_calls.fence, 2);
    opal_fault_clear();
    ck_assert_int_eq(opal_rte_uninstall(), OPAL_SUCCESS);
}
END_TEST

#else /* no sites in this build */

START_TEST(configuring_a_site_is_refused_without_sites)
{
    ck_assert_int_eq(opal_fault_configure("fence", "test"), OPAL_ERR_NOT_SUPPORTED);
    ck_assert_int_eq(opal_fault_configure("# nothing\n\n", "test"), OPAL_SUCCESS);
    ck_assert(!OPAL_FAULT(fence));
}
END_TEST

#endif

static Suite *fault_suite(void)
{
    Suite *s = suite_create("opal_fault");
#if defined(OPAL_ENABLE_FAULT_INJECTION) && OPAL_ENABLE_FAULT_INJECTION
    OPAL_TEST_ADD(s, unconfigured_sites_never_fire);
    OPAL_TEST_ADD(s, interval_fires_on_every_nth_hit);
    OPAL_TEST_ADD(s, max_bounds_how_often_a_site_fires);
    OPAL_TEST_ADD(s, probability_fires_about_that_often_and_reproducibly);
    OPAL_TEST_ADD(s, arg_is_kept_for_the_site);
    OPAL_TEST_ADD(s, bad_configurations_are_refused_and_change_nothing);
    OPAL_TEST_ADD(s, a_missing_file_is_an_error);
    OPAL_TEST_ADD(s, free_list_growth_fails_visibly_and_leaks_nothing);
    OPAL_TEST_ADD(s, modex_get_fails_visibly);
    OPAL_TEST_ADD(s, fence_fails_visibly);
#else
    OPAL_TEST_ADD(s, configuring_a_site_is_refused_without_sites);
#endif
    return s;
}

int main(void)
{
    return opal_test_run(fault_suite());
}
