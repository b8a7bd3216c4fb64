/* opal_init_util / opal_finalize_util: counted, re-startable, and what they
 * start works between them. */
#include "opal/opal_config.h"

#include "opal/class/opal_object.h"
#include "opal/runtime/opal_init.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "test/support/opal_test.h"

static int calls;
static int count_calls(void)
{
    ++calls;
    return 1;
}

START_TEST(finalize_without_init_is_an_error)
{
    ck_assert(!opal_util_initialized());
    ck_assert_int_eq(opal_finalize_util(), OPAL_ERR_NOT_INITIALIZED);
}
END_TEST

START_TEST(init_and_finalize_are_counted)
{
    ck_assert_int_eq(opal_init_util(NULL, NULL), OPAL_SUCCESS);
    int32_t epoch = opal_class_epoch();
    ck_assert_int_eq(opal_init_util(NULL, NULL), OPAL_SUCCESS);
    ck_assert(opal_util_initialized());
    ck_assert_int_eq(opal_finalize_util(), OPAL_SUCCESS);
    /* One user left: still up, classes untouched. */
    ck_assert(opal_util_initialized());
    ck_assert_int_eq(opal_class_epoch(), epoch);
    ck_assert_int_eq(opal_finalize_util(), OPAL_SUCCESS);
    ck_assert(!opal_util_initialized());
    ck_assert_int_eq(opal_class_epoch(), epoch + 1);
    ck_assert_int_eq(opal_finalize_util(), OPAL_ERR_NOT_INITIALIZED);
}
END_TEST

START_TEST(layer_restarts_after_finalize)
{
    for (int round = 0; round < 3; ++round) {
        ck_assert_int_eq(opal_init_util(NULL, NULL), OPAL_SUCCESS);
        calls = 0;
        ck_assert_int_eq(opal_progress_register(count_calls), OPAL_SUCCESS);
        ck_assert_int_eq(opal_progress(), 1);
        ck_assert_int_eq(calls, 1);
        ck_assert_int_eq(opal_progress_unregister(count_calls), OPAL_SUCCESS);
        opal_output_verbose(100, 0, "not shown: above the verbosity of stream 0");
        ck_assert_int_eq(opal_finalize_util(), OPAL_SUCCESS);
    }
}
END_TEST

static Suite *init_suite(void)
{
    Suite *s = suite_create("opal_init");
    OPAL_TEST_ADD(s, finalize_without_init_is_an_error);
    OPAL_TEST_ADD(s, init_and_finalize_are_counted);
    OPAL_TEST_ADD(s, layer_restarts_after_finalize);
    return s;
}

int main(void)
{
    return opal_test_run(init_suite());
}
