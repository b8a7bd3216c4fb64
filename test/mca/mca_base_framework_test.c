/* Frameworks: counted register/open/close, their variables and their
 * components' coming and going, the selection variable (include,
 * exclude, mixing, unknown names), declines and failures recorded with
 * why, the lifecycle order, and open -> close -> open. */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_component_repository.h"
#include "opal/mca/base/mca_base_open.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/util/opal_error.h"
#include "test/mca/mca_base_test_support.h"
#include "test/mca/mcatest/mcatest.h"
#include "test/support/opal_test.h"

static mca_base_framework_t *const fw = &test_mcatest_base_framework;

/* Opens mcatest with the selection variable set to value (NULL: unset);
 * returns the result and, in *out, what was printed. */
static int open_selecting(const char *value, char **out)
{
    mt_reset();
    mt_use_build_plugins();
    mt_set("mca_base_component_show_load_errors", "none");
    mt_set("mcatest", value);
    mt_capture_start();
    int rc = mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT);
    *out = mt_capture_end();
    return rc;
}

/* The names of the registered components, joined with ','. */
static void assert_components(const char *expected)
{
    char names[512] = "";
    mca_base_component_list_item_t *item;
    OPAL_LIST_FOREACH (item, &fw->framework_components, mca_base_component_list_item_t) {
        if ('\0' != names[0]) {
            strcat(names, ",");
        }
        strcat(names, item->cli_component->mca_component_name);
    }
    ck_assert_str_eq(names, expected);
}

START_TEST(register_and_close_are_counted)
{
    mt_reset();
    ck_assert(!mca_base_framework_is_registered(fw));
    ck_assert_int_eq(mca_base_framework_register(fw, MCA_BASE_REGISTER_DEFAULT), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_framework_register(fw, MCA_BASE_REGISTER_DEFAULT), OPAL_SUCCESS);
    ck_assert(mca_base_framework_is_registered(fw));
    ck_assert(!mca_base_framework_is_open(fw));
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
    ck_assert(mca_base_framework_is_registered(fw));
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
    ck_assert(!mca_base_framework_is_registered(fw));
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_ERR_NOT_INITIALIZED);
}
END_TEST

START_TEST(open_and_close_are_counted)
{
    mt_reset();
    int opens = mca_mcatest_base_open_calls, closes = mca_mcatest_base_close_calls;
    ck_assert_int_eq(mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT), OPAL_SUCCESS);
    ck_assert(mca_base_framework_is_open(fw));
    ck_assert_int_eq(mca_mcatest_base_open_calls, opens + 1);
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
    ck_assert(mca_base_framework_is_open(fw));
    ck_assert_int_eq(mca_mcatest_base_close_calls, closes);
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
    ck_assert(!mca_base_framework_is_open(fw));
    ck_assert(!mca_base_framework_is_registered(fw));
    ck_assert_int_eq(mca_mcatest_base_close_calls, closes + 1);
}
END_TEST

START_TEST(failing_open_hook_closes_the_components)
{
    mt_reset();
    mt_set("mcatest", "good");
    ck_assert_int_eq(mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT), OPAL_SUCCESS);
    mca_base_module_t *module = NULL;
    ck_assert_int_eq(mca_base_select(fw, &module, NULL, NULL), OPAL_SUCCESS);
    /* Built in: the module stays callable and tells what good went through. */
    const mca_mcatest_base_module_t *m = (const mca_mcatest_base_module_t *) module;
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);

    mt_set("mcatest_base_fail_open", "1");
    int closes = mca_mcatest_base_close_calls;
    ck_assert_int_eq(mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT), OPAL_ERR_NOT_SUPPORTED);
    ck_assert(!mca_base_framework_is_open(fw));
    ck_assert(!mca_base_framework_is_registered(fw));
    ck_assert_str_eq(m->mcatest_lifecycle(), "register,open,close");
    /* The framework's close hook is not called for an open that failed. */
    ck_assert_int_eq(mca_mcatest_base_close_calls, closes);
}
END_TEST

START_TEST(close_of_an_open_keeps_what_register_holds)
{
    mt_reset();
    ck_assert_int_eq(mca_base_framework_register(fw, MCA_BASE_REGISTER_DEFAULT), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT), OPAL_SUCCESS);
    ck_assert(mt_component(fw, "good")->cli_opened);
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
    /* Closed, but still registered: the components stay, not opened. */
    ck_assert(!mca_base_framework_is_open(fw));
    ck_assert(mca_base_framework_is_registered(fw));
    ck_assert_ptr_nonnull(mt_component(fw, "good"));
    ck_assert(!mt_component(fw, "good")->cli_opened);
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
    ck_assert(!mca_base_framework_is_registered(fw));
}
END_TEST

START_TEST(framework_variables_come_and_go)
{
    mt_reset();
    mt_set("mcatest_base_knob", "9");
    ck_assert_int_eq(mca_base_open(), OPAL_SUCCESS);
    ck_assert(!mt_var_exists("mcatest"));
    ck_assert_int_eq(mca_base_framework_register(fw, MCA_BASE_REGISTER_DEFAULT), OPAL_SUCCESS);
    ck_assert(mt_var_exists("mcatest"));
    ck_assert(mt_var_exists("mcatest_base_verbose"));
    ck_assert(mt_var_exists("mcatest_base_knob"));
    ck_assert_int_eq(mca_mcatest_base_knob, 9);
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
    ck_assert(!mt_var_exists("mcatest"));
    ck_assert(!mt_var_exists("mcatest_base_verbose"));
    ck_assert(!mt_var_exists("mcatest_base_knob"));
    ck_assert_int_eq(mca_base_close(), OPAL_SUCCESS);
}
END_TEST

START_TEST(component_variables_come_and_go)
{
    const char *names[] = {
        "mcatest_alltypes_int",    "mcatest_alltypes_unsigned", "mcatest_alltypes_long",
        "mcatest_alltypes_size",   "mcatest_alltypes_uint64",   "mcatest_alltypes_bool",
        "mcatest_alltypes_double", "mcatest_alltypes_string",   "mcatest_alltypes_enum",
        "mcatest_alltypes_flags",  "mcatest_alltypes_old_int",  "mcatest_good_priority",
    };
    mt_reset();
    ck_assert_int_eq(mca_base_open(), OPAL_SUCCESS);
    for (int round = 0; round < 2; ++round) {
        ck_assert_int_eq(mca_base_framework_register(fw, MCA_BASE_REGISTER_DEFAULT), OPAL_SUCCESS);
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
            ck_assert_msg(mt_var_exists(names[i]), "%s missing", names[i]);
        }
        ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
            ck_assert_msg(!mt_var_exists(names[i]), "%s still there", names[i]);
        }
    }
    ck_assert_int_eq(mca_base_close(), OPAL_SUCCESS);
}
END_TEST

START_TEST(include_list_keeps_only_those)
{
    char *out = NULL;
    ck_assert_int_eq(open_selecting("other, good", &out), OPAL_SUCCESS);
    assert_components("good,other");
    const mca_base_component_failure_t *f =
        mt_failure(&fw->framework_failures, "alltypes", MCA_BASE_COMPONENT_STAGE_EXCLUDED);
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(f->cf_reason, "not included by mcatest=other, good");
    /* Plugins left out are not even loaded. */
    ck_assert_ptr_nonnull(
        mt_failure(&fw->framework_failures, "undefsym", MCA_BASE_COMPONENT_STAGE_EXCLUDED));
    ck_assert(opal_list_is_empty(mca_base_component_repository_failures()));
    free(out);
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
}
END_TEST

START_TEST(exclude_list_leaves_those_out)
{
    char *out = NULL;
    ck_assert_int_eq(open_selecting("^good,openfail,undefsym", &out), OPAL_SUCCESS);
    assert_components("alltypes,other");
    const mca_base_component_failure_t *f =
        mt_failure(&fw->framework_failures, "good", MT_ANY_STAGE);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->cf_stage, MCA_BASE_COMPONENT_STAGE_EXCLUDED);
    ck_assert_str_eq(f->cf_reason, "excluded by mcatest=^good,openfail,undefsym");
    f = mt_failure(&fw->framework_failures, "undefsym", MT_ANY_STAGE);
    ck_assert_int_eq(f->cf_stage, MCA_BASE_COMPONENT_STAGE_EXCLUDED);
    ck_assert(!mt_mapped("mca_mcatest_undefsym.so"));
    free(out);
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
}
END_TEST

START_TEST(each_excluded_name_may_carry_the_caret)
{
    char *out = NULL;
    ck_assert_int_eq(open_selecting("^good,^other", &out), OPAL_SUCCESS);
    ck_assert_ptr_null(mt_component(fw, "good"));
    ck_assert_ptr_null(mt_component(fw, "other"));
    ck_assert_ptr_nonnull(mt_component(fw, "alltypes"));
    free(out);
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
}
END_TEST

START_TEST(mixing_include_and_exclude_is_an_error)
{
    char *out = NULL;
    ck_assert_int_eq(open_selecting("good,^other", &out), OPAL_ERR_BAD_VALUE);
    ck_assert_ptr_nonnull(strstr(out, "mixes components to use and"));
    ck_assert_ptr_nonnull(strstr(out, "mcatest=good,^other"));
    ck_assert_ptr_nonnull(strstr(out, "(from environment (OPAL_MCA_mcatest))"));
    ck_assert(!mca_base_framework_is_registered(fw));
    free(out);
}
END_TEST

START_TEST(what_is_not_a_component_name_is_an_error)
{
    const char *bad[] = {"good,,other", "^", "good,", "^^good", "good;other", "go od"};
    const char *name[] = {"", "", "", "^good", "good;other", "go od"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        char *out = NULL;
        ck_assert_int_eq(open_selecting(bad[i], &out), OPAL_ERR_BAD_VALUE);
        char expected[64];
        snprintf(expected, sizeof(expected), "\"%s\"", name[i]);
        ck_assert_msg(NULL != strstr(out, "is not a\ncomponent name"), "%s: %s", bad[i], out);
        ck_assert_msg(NULL != strstr(out, expected), "%s: %s", bad[i], out);
        ck_assert(!mca_base_framework_is_registered(fw));
        free(out);
    }
}
END_TEST

START_TEST(unknown_included_name_lists_what_exists)
{
    char *out = NULL;
    ck_assert_int_eq(open_selecting("good,nosuch", &out), OPAL_ERR_BAD_VALUE);
    ck_assert_ptr_nonnull(strstr(out, "mcatest=good,nosuch"));
    ck_assert_ptr_nonnull(strstr(out, "Not found or not loadable: nosuch"));
    ck_assert_ptr_nonnull(strstr(out, "good (built in)"));
    ck_assert_ptr_nonnull(strstr(out, "undefsym (plugin "));
    /* The plugins that fail to load are tried, and say why. */
    ck_assert_ptr_nonnull(strstr(out, "undefined symbol: mcatest_undefsym_missing_function"));
    ck_assert(!mca_base_framework_is_registered(fw));
    ck_assert(!mt_mapped("mca_mcatest_good.so"));
    free(out);
}
END_TEST

START_TEST(included_plugin_that_fails_to_load_is_an_error)
{
    char *out = NULL;
    ck_assert_int_eq(open_selecting("undefsym", &out), OPAL_ERR_BAD_VALUE);
    ck_assert_ptr_nonnull(strstr(out, "Not found or not loadable: undefsym"));
    ck_assert_ptr_nonnull(strstr(out, "undefined symbol: mcatest_undefsym_missing_function"));
    free(out);
}
END_TEST

START_TEST(unknown_excluded_name_is_an_error)
{
    char *out = NULL;
    ck_assert_int_eq(open_selecting("^good,nosuch", &out), OPAL_ERR_BAD_VALUE);
    ck_assert_ptr_nonnull(strstr(out, "Not found: nosuch"));
    ck_assert_ptr_nonnull(strstr(out, "other (built in)"));
    free(out);
}
END_TEST

START_TEST(variables_of_components_not_registered_are_not_unknown_names)
{
    mt_reset();
    mt_use_build_plugins();
    mt_set("mca_base_component_show_load_errors", "none");
    mt_set("mcatest", "^other");
    /* Set for a component left out, for one that failed to load, and a
     * typo of a variable that exists. */
    mt_set("mcatest_other_priority", "5");
    mt_set("mcatest_undefsym_knob", "1");
    mt_set("mcatest_good_priorty", "7");
    /* The framework checks its own names as it registers. */
    mt_capture_start();
    ck_assert_int_eq(mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT), OPAL_SUCCESS);
    int rc = mca_base_var_check_unknown();
    char *out = mt_capture_end();
    ck_assert_int_eq(rc, OPAL_SUCCESS);
    ck_assert_ptr_null(strstr(out, "mcatest_other_priority"));
    ck_assert_ptr_null(strstr(out, "mcatest_undefsym_knob"));
    ck_assert_ptr_nonnull(strstr(out, "mcatest_good_priorty"));
    ck_assert_ptr_nonnull(strstr(out, "mcatest_good_priority"));
    free(out);
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
}
END_TEST

START_TEST(register_all_ignores_the_selection)
{
    mt_reset();
    mt_set("mcatest", "good");
    ck_assert_int_eq(mca_base_framework_open(fw, MCA_BASE_OPEN_FIND_COMPONENTS), OPAL_SUCCESS);
    ck_assert_ptr_nonnull(mt_component(fw, "good"));
    ck_assert_ptr_nonnull(mt_component(fw, "other"));
    ck_assert_ptr_nonnull(mt_component(fw, "alltypes"));
    ck_assert_ptr_null(mt_failure(&fw->framework_failures, "other", MT_ANY_STAGE));
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
}
END_TEST

START_TEST(selection_changed_after_register_applies_at_open)
{
    mt_reset();
    ck_assert_int_eq(mca_base_framework_register(fw, MCA_BASE_REGISTER_DEFAULT), OPAL_SUCCESS);
    ck_assert_ptr_nonnull(mt_component(fw, "other"));
    ck_assert_int_eq(mca_base_var_set_value_string(fw->framework_selection_var, "^other",
                                                   MCA_BASE_VAR_SOURCE_SET, NULL),
                     OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT), OPAL_SUCCESS);
    ck_assert_ptr_null(mt_component(fw, "other"));
    ck_assert(!mt_var_exists("mcatest_other_priority"));
    ck_assert_ptr_nonnull(
        mt_failure(&fw->framework_failures, "other", MCA_BASE_COMPONENT_STAGE_EXCLUDED));
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
}
END_TEST

START_TEST(decline_at_register_is_recorded_quietly)
{
    char *out = NULL;
    ck_assert_int_eq(open_selecting(NULL, &out), OPAL_SUCCESS);
    const mca_base_component_failure_t *f =
        mt_failure(&fw->framework_failures, "regdecline", MT_ANY_STAGE);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->cf_stage, MCA_BASE_COMPONENT_STAGE_REGISTER);
    ck_assert_str_eq(f->cf_reason, "no mcatest device on this machine");
    ck_assert_ptr_null(mt_component(fw, "regdecline"));
    ck_assert_ptr_null(strstr(out, "regdecline"));
    free(out);
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
}
END_TEST

START_TEST(decline_reason_is_printed_at_verbosity)
{
    mt_reset();
    mt_set("mcatest_base_verbose", "10");
    mt_capture_start();
    int rc = mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT);
    char *out = mt_capture_end();
    ck_assert_int_eq(rc, OPAL_SUCCESS);
    ck_assert_ptr_nonnull(
        strstr(out, "mcatest: regdecline not used (register): no mcatest device on this machine"));
    free(out);
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
}
END_TEST

START_TEST(decline_at_open_is_recorded)
{
    mt_reset();
    mt_set("mcatest_other_decline_in", "open");
    ck_assert_int_eq(mca_base_open(), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT), OPAL_SUCCESS);
    const mca_base_component_failure_t *f =
        mt_failure(&fw->framework_failures, "other", MT_ANY_STAGE);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->cf_stage, MCA_BASE_COMPONENT_STAGE_OPEN);
    ck_assert_str_eq(f->cf_reason, "told to decline in open");
    ck_assert_ptr_null(mt_component(fw, "other"));
    /* Gone with its variables. */
    ck_assert(!mt_var_exists("mcatest_other_priority"));
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_close(), OPAL_SUCCESS);
}
END_TEST

START_TEST(failed_open_is_printed_and_recorded)
{
    mt_reset();
    ck_assert_int_eq(mca_base_open(), OPAL_SUCCESS);
    mt_capture_start();
    int rc = mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT);
    char *out = mt_capture_end();
    ck_assert_int_eq(rc, OPAL_SUCCESS);
    const mca_base_component_failure_t *f =
        mt_failure(&fw->framework_failures, "openfail", MT_ANY_STAGE);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->cf_stage, MCA_BASE_COMPONENT_STAGE_OPEN);
    ck_assert_str_eq(f->cf_reason, "open failed: Out of resource");
    /* An error, not a decline: printed at verbosity 0. */
    ck_assert_ptr_nonnull(strstr(out, "mcatest: openfail not used (open): open failed"));
    ck_assert_ptr_null(mt_component(fw, "openfail"));
    ck_assert(!mt_var_exists("mcatest_openfail_attempts"));
    free(out);
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_close(), OPAL_SUCCESS);
}
END_TEST

START_TEST(verbose_output_is_prefixed_with_the_framework)
{
    mt_reset();
    mt_set("mcatest_base_verbose", "40");
    mt_capture_start();
    int rc = mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT);
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
    char *out = mt_capture_end();
    ck_assert_int_eq(rc, OPAL_SUCCESS);
    ck_assert_ptr_nonnull(strstr(out, "mcatest: registered good"));
    ck_assert_ptr_nonnull(strstr(out, "mcatest: opened good"));
    ck_assert_ptr_nonnull(strstr(out, "mcatest: closed good"));
    free(out);

    /* Silent by default. */
    mt_reset();
    mt_capture_start();
    rc = mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT);
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
    out = mt_capture_end();
    ck_assert_ptr_null(strstr(out, "mcatest: opened"));
    free(out);
}
END_TEST

START_TEST(lifecycle_runs_register_open_query_close_in_order)
{
    mt_reset();
    mt_set("mcatest", "good");
    ck_assert_int_eq(mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT), OPAL_SUCCESS);
    mca_base_module_t *module = NULL;
    ck_assert_int_eq(mca_base_select(fw, &module, NULL, NULL), OPAL_SUCCESS);
    const mca_mcatest_base_module_t *m = (const mca_mcatest_base_module_t *) module;
    ck_assert_str_eq(m->mcatest_lifecycle(), "register,open,query");
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
    /* Built in: its code and log outlive the close. */
    ck_assert_str_eq(m->mcatest_lifecycle(), "register,open,query,close");
}
END_TEST

START_TEST(close_runs_for_every_opened_component)
{
    mt_reset();
    mt_set("mcatest", "good");
    ck_assert_int_eq(mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT), OPAL_SUCCESS);
    const mca_mcatest_base_module_t *m = NULL;
    mca_base_module_t *module = NULL;
    ck_assert_int_eq(mca_base_select(fw, &module, NULL, NULL), OPAL_SUCCESS);
    m = (const mca_mcatest_base_module_t *) module;
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);

    /* Opened but never selected (another wins): closed when it loses. */
    mt_reset();
    mt_set("mcatest", "good,other");
    mt_set("mcatest_other_priority", "90");
    ck_assert_int_eq(mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_select(fw, &module, NULL, NULL), OPAL_SUCCESS);
    ck_assert_str_eq(m->mcatest_lifecycle(), "register,open,query,close");
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);

    /* Opened and never queried: closed at framework close. */
    mt_reset();
    mt_set("mcatest", "good");
    ck_assert_int_eq(mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
    ck_assert_str_eq(m->mcatest_lifecycle(), "register,open,close");
}
END_TEST

START_TEST(open_close_open_again_works)
{
    mt_reset();
    for (int round = 0; round < 3; ++round) {
        ck_assert_int_eq(mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT), OPAL_SUCCESS);
        assert_components("alltypes,good,other");
        ck_assert_ptr_nonnull(
            mt_failure(&fw->framework_failures, "regdecline", MCA_BASE_COMPONENT_STAGE_REGISTER));
        ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
        ck_assert(!mca_base_framework_is_registered(fw));
    }
}
END_TEST

static Suite *framework_suite(void)
{
    Suite *s = suite_create("mca_base_framework");
    OPAL_TEST_ADD(s, register_and_close_are_counted);
    OPAL_TEST_ADD(s, open_and_close_are_counted);
    OPAL_TEST_ADD(s, failing_open_hook_closes_the_components);
    OPAL_TEST_ADD(s, close_of_an_open_keeps_what_register_holds);
    OPAL_TEST_ADD(s, framework_variables_come_and_go);
    OPAL_TEST_ADD(s, component_variables_come_and_go);
    OPAL_TEST_ADD(s, include_list_keeps_only_those);
    OPAL_TEST_ADD(s, exclude_list_leaves_those_out);
    OPAL_TEST_ADD(s, each_excluded_name_may_carry_the_caret);
    OPAL_TEST_ADD(s, mixing_include_and_exclude_is_an_error);
    OPAL_TEST_ADD(s, what_is_not_a_component_name_is_an_error);
    OPAL_TEST_ADD(s, unknown_included_name_lists_what_exists);
    OPAL_TEST_ADD(s, included_plugin_that_fails_to_load_is_an_error);
    OPAL_TEST_ADD(s, unknown_excluded_name_is_an_error);
    OPAL_TEST_ADD(s, variables_of_components_not_registered_are_not_unknown_names);
    OPAL_TEST_ADD(s, register_all_ignores_the_selection);
    OPAL_TEST_ADD(s, selection_changed_after_register_applies_at_open);
    OPAL_TEST_ADD(s, decline_at_register_is_recorded_quietly);
    OPAL_TEST_ADD(s, decline_reason_is_printed_at_verbosity);
    OPAL_TEST_ADD(s, decline_at_open_is_recorded);
    OPAL_TEST_ADD(s, failed_open_is_printed_and_recorded);
    OPAL_TEST_ADD(s, verbose_output_is_prefixed_with_the_framework);
    OPAL_TEST_ADD(s, lifecycle_runs_register_open_query_close_in_order);
    OPAL_TEST_ADD(s, close_runs_for_every_opened_component);
    OPAL_TEST_ADD(s, open_close_open_again_works);
    return s;
}

int main(void)
{
    return opal_test_run(framework_suite());
}
