/* Names nobody registered: reported with the nearest registered name in
 * the three modes of mca_base_unknown_params, from every source, except
 * under frameworks this process never registered. Part of the
 * mca_base_var_source suite. */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/util/opal_error.h"
#include "test/mca/mca_var_test_support.h"

void mca_base_var_add_unknown_tests(Suite *s);

static int limit;

static int reg_limit(void)
{
    return mca_base_var_register("opal", "testfw", "comp", "eager_limit", "d",
                                 MCA_BASE_VAR_TYPE_INT, NULL, 0, OPAL_INFO_LVL_1,
                                 MCA_BASE_VAR_SCOPE_LOCAL, &limit);
}

/* One misspelling of testfw_comp_eager_limit from each source; returns the
 * file holding the file's one. */
static const char *misspell_everywhere(void)
{
    mvt_setenv("testfw_comp_eager_limt", "1");
    const char *file = mvt_write_file("p.conf", "# typo below\ntestfw_comp_eager_limitt = 2\n");
    mvt_param_files(file);
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    char *keys[] = {"testfw_comp_eagr_limit"}, *values[] = {"3"};
    ck_assert_int_eq(mca_base_var_process_cmdline(1, keys, values), OPAL_SUCCESS);
    ck_assert_int_ge(reg_limit(), 0);
    return file;
}

static void assert_all_three_reported(const char *file)
{
    char *where = NULL;
    ck_assert_int_ge(asprintf(&where, "testfw_comp_eager_limitt (file %s:2)", file), 0);
    MVT_ASSERT_MESSAGE("OPAL_MCA_testfw_comp_eager_limt (environment): no such MCA variable; did "
                       "you mean testfw_comp_eager_limit?");
    MVT_ASSERT_MESSAGE(where, "no such MCA variable; did you mean testfw_comp_eager_limit?");
    MVT_ASSERT_MESSAGE("testfw_comp_eagr_limit (command line): no such MCA variable; did you "
                       "mean testfw_comp_eager_limit?");
    free(where);
}

START_TEST(unknown_names_warn_by_default)
{
    const char *file = misspell_everywhere();
    ck_assert_int_eq(mca_base_var_check_unknown(), OPAL_SUCCESS);
    ck_assert_int_eq(mvt_warning_count(), 3);
    ck_assert_int_eq(mvt_error_count(), 0);
    assert_all_three_reported(file);
}
END_TEST

START_TEST(unknown_names_are_errors_when_asked)
{
    mvt_setenv("mca_base_unknown_params", "error");
    const char *file = misspell_everywhere();
    ck_assert_int_eq(mca_base_var_check_unknown(), OPAL_ERR_UNKNOWN_NAME);
    ck_assert_int_eq(mvt_error_count(), 3);
    ck_assert_int_eq(mvt_warning_count(), 0);
    assert_all_three_reported(file);
}
END_TEST

START_TEST(unknown_names_are_ignored_when_asked)
{
    mvt_setenv("mca_base_unknown_params", "ignore");
    misspell_everywhere();
    ck_assert_int_eq(mca_base_var_check_unknown(), OPAL_SUCCESS);
    ck_assert_int_eq(mvt_message_count(), 0);
}
END_TEST

START_TEST(unknown_params_is_an_enumeration)
{
    mvt_setenv("mca_base_unknown_params", "loud");
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    MVT_ASSERT_MESSAGE("mca_base_unknown_params", "\"loud\"", "ignore (0), warn (1), error (2)");
    int index = mca_base_var_find_by_name("mca_base_unknown_params");
    ck_assert_str_eq(mvt_value(index), "warn");
    ck_assert_int_eq(mca_base_var_set_value_string(index, "2", MCA_BASE_VAR_SOURCE_SET, NULL),
                     OPAL_SUCCESS);
    ck_assert_str_eq(mvt_value(index), "error");
}
END_TEST

START_TEST(unknown_name_far_from_everything_has_no_suggestion)
{
    mvt_setenv("zzzz_qqqq", "1");
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    reg_limit();
    ck_assert_int_eq(mca_base_var_check_unknown(), OPAL_SUCCESS);
    ck_assert_int_eq(mvt_message_count(), 1);
    ck_assert_str_eq(mvt_message(0), "OPAL_MCA_zzzz_qqqq (environment): no such MCA variable");
}
END_TEST

START_TEST(unknown_names_are_reported_once)
{
    misspell_everywhere();
    ck_assert_int_eq(mca_base_var_check_unknown(), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_var_check_unknown(), OPAL_SUCCESS);
    ck_assert_int_eq(mvt_message_count(), 3);
}
END_TEST

START_TEST(names_under_unregistered_framework_are_skipped)
{
    mvt_setenv("na_ofi_provider", "tcp");
    mvt_setenv("testfw_comp_eager_limt", "1");
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_var_declare_prefix("na"), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_var_declare_prefix("testfw"), OPAL_SUCCESS);
    reg_limit();
    ck_assert_int_eq(mca_base_var_check_unknown(), OPAL_SUCCESS);
    /* na never registered here: its names cannot be checked. testfw did. */
    ck_assert_int_eq(mvt_message_count(), 1);
    MVT_ASSERT_MESSAGE("OPAL_MCA_testfw_comp_eager_limt");
}
END_TEST

START_TEST(names_under_unloaded_component_are_skipped)
{
    mvt_setenv("testfw_ofi_provider", "tcp");
    mvt_setenv("testfw_sm_provider", "tcp");
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_var_declare_prefix("testfw_ofi"), OPAL_SUCCESS);
    reg_limit();
    ck_assert_int_eq(mca_base_var_check_unknown(), OPAL_SUCCESS);
    ck_assert_int_eq(mvt_message_count(), 1);
    MVT_ASSERT_MESSAGE("OPAL_MCA_testfw_sm_provider");
}
END_TEST

START_TEST(names_matching_no_framework_are_reported)
{
    mvt_setenv("tesfw_comp_eager_limit", "1");
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    mca_base_var_declare_prefix("na");
    mca_base_var_declare_prefix("testfw");
    reg_limit();
    ck_assert_int_eq(mca_base_var_check_unknown(), OPAL_SUCCESS);
    MVT_ASSERT_MESSAGE("OPAL_MCA_tesfw_comp_eager_limit", "did you mean testfw_comp_eager_limit?");
}
END_TEST

START_TEST(synonyms_and_deregistered_names_are_known)
{
    mvt_setenv("testfw_comp_old_limit", "1");
    mvt_setenv("testfw_comp_gone", "2");
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int index = reg_limit();
    mca_base_var_register_synonym(index, "opal", "testfw", "comp", "old_limit", 0);
    int gone = 0;
    int g = mca_base_var_register("opal", "testfw", "comp", "gone", "d", MCA_BASE_VAR_TYPE_INT,
                                  NULL, 0, OPAL_INFO_LVL_1, MCA_BASE_VAR_SCOPE_LOCAL, &gone);
    ck_assert_int_eq(mca_base_var_deregister(g), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_var_check_unknown(), OPAL_SUCCESS);
    ck_assert_int_eq(mvt_message_count(), 0);
}
END_TEST

START_TEST(declare_prefix_refuses_bad_names)
{
    ck_assert_int_eq(mca_base_var_declare_prefix("btl"), OPAL_ERR_NOT_INITIALIZED);
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_var_declare_prefix(""), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(mca_base_var_declare_prefix("a-b"), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(mca_base_var_declare_prefix(NULL), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(mca_base_var_check_unknown(), OPAL_SUCCESS);
}
END_TEST

START_TEST(suggestion_is_case_insensitive)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    reg_limit();
    char *s = mca_base_var_suggest("TESTFW_COMP_EAGER_LIMIT");
    ck_assert_str_eq(s, "testfw_comp_eager_limit");
    free(s);
}
END_TEST

START_TEST(suggestion_counts_a_swap_as_one_edit)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    reg_limit();
    /* Short names allow one edit: a swap qualifies, two substitutions do not. */
    int a = 0;
    mca_base_var_register(NULL, "ab", NULL, NULL, "d", MCA_BASE_VAR_TYPE_INT, NULL, 0,
                          OPAL_INFO_LVL_1, MCA_BASE_VAR_SCOPE_LOCAL, &a);
    char *s = mca_base_var_suggest("ba");
    ck_assert_str_eq(s, "ab");
    free(s);
    ck_assert_ptr_null(mca_base_var_suggest("xy"));
    s = mca_base_var_suggest("testfw_comp_eager_limti");
    ck_assert_str_eq(s, "testfw_comp_eager_limit");
    free(s);
}
END_TEST

START_TEST(suggestion_ties_go_to_earliest_registered)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int a = 0, b = 0;
    mca_base_var_register(NULL, "fw", "comp", "ac", "d", MCA_BASE_VAR_TYPE_INT, NULL, 0,
                          OPAL_INFO_LVL_1, MCA_BASE_VAR_SCOPE_LOCAL, &a);
    mca_base_var_register(NULL, "fw", "comp", "ab", "d", MCA_BASE_VAR_TYPE_INT, NULL, 0,
                          OPAL_INFO_LVL_1, MCA_BASE_VAR_SCOPE_LOCAL, &b);
    char *s = mca_base_var_suggest("fw_comp_aa");
    ck_assert_str_eq(s, "fw_comp_ac");
    free(s);
    ck_assert_ptr_null(mca_base_var_suggest("completely_unrelated_name"));
    ck_assert_ptr_null(mca_base_var_suggest(""));
}
END_TEST

START_TEST(suggestion_never_offers_deprecated_names)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int index = reg_limit();
    mca_base_var_register_synonym(index, "opal", "testfw", "comp", "eager_lim",
                                  MCA_BASE_VAR_FLAG_DEPRECATED);
    char *s = mca_base_var_suggest("testfw_comp_eager_li");
    ck_assert_str_eq(s, "testfw_comp_eager_limit");
    free(s);
}
END_TEST

void mca_base_var_add_unknown_tests(Suite *s)
{
    MVT_ADD(s, unknown_names_warn_by_default);
    MVT_ADD(s, unknown_names_are_errors_when_asked);
    MVT_ADD(s, unknown_names_are_ignored_when_asked);
    MVT_ADD(s, unknown_params_is_an_enumeration);
    MVT_ADD(s, unknown_name_far_from_everything_has_no_suggestion);
    MVT_ADD(s, unknown_names_are_reported_once);
    MVT_ADD(s, names_under_unregistered_framework_are_skipped);
    MVT_ADD(s, names_under_unloaded_component_are_skipped);
    MVT_ADD(s, names_matching_no_framework_are_reported);
    MVT_ADD(s, synonyms_and_deregistered_names_are_known);
    MVT_ADD(s, declare_prefix_refuses_bad_names);
    MVT_ADD(s, suggestion_is_case_insensitive);
    MVT_ADD(s, suggestion_counts_a_swap_as_one_edit);
    MVT_ADD(s, suggestion_ties_go_to_earliest_registered);
    MVT_ADD(s, suggestion_never_offers_deprecated_names);
}
