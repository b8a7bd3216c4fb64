/* Selection: the highest priority wins, ties go to the name that sorts
 * first, losers and decliners are closed and recorded with why; the
 * multi-select helper keeps every component that returned a module. */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_component_repository.h"
#include "opal/mca/base/mca_base_open.h"
#include "opal/util/opal_error.h"
#include "test/mca/mca_base_test_support.h"
#include "test/mca/mcatest/mcatest.h"
#include "test/support/opal_test.h"

static mca_base_framework_t *const fw = &test_mcatest_base_framework;

/* The built-in components, in an order where the tie's winner comes last. */
extern const mca_base_component_t mca_mcatest_good_component;
extern const mca_base_component_t mca_mcatest_other_component;
static const mca_base_component_t *const other_first[] = {&mca_mcatest_other_component,
                                                          &mca_mcatest_good_component, NULL};

static void open_mcatest(void)
{
    ck_assert_int_eq(mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT), OPAL_SUCCESS);
}

static void close_mcatest(void)
{
    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
    ck_assert(!mca_base_framework_is_registered(fw));
}

/* Selects and returns whoami of the winner; checks the outputs agree. */
static int select_whoami(int *priority)
{
    mca_base_module_t *module = NULL;
    const mca_base_component_t *component = NULL;
    ck_assert_int_eq(mca_base_select(fw, &module, &component, priority), OPAL_SUCCESS);
    ck_assert_ptr_nonnull(module);
    ck_assert_ptr_nonnull(component);
    /* Only the winner stays, holding its module. */
    ck_assert_uint_eq(opal_list_get_size(&fw->framework_components), 1);
    mca_base_component_list_item_t *item = mt_component(fw, component->mca_component_name);
    ck_assert_ptr_nonnull(item);
    ck_assert_ptr_eq(item->cli_module, module);
    ck_assert_int_eq(item->cli_priority, *priority);
    return ((mca_mcatest_base_module_t *) module)->mcatest_whoami();
}

START_TEST(highest_priority_wins)
{
    mt_reset();
    open_mcatest();
    int priority = 0;
    ck_assert_int_eq(select_whoami(&priority), MCATEST_WHOAMI_GOOD);
    ck_assert_int_eq(priority, 50);
    const mca_base_component_failure_t *f =
        mt_failure(&fw->framework_failures, "other", MT_ANY_STAGE);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->cf_stage, MCA_BASE_COMPONENT_STAGE_PRIORITY);
    ck_assert_str_eq(f->cf_reason, "priority 30 < 50 of good");
    f = mt_failure(&fw->framework_failures, "alltypes", MT_ANY_STAGE);
    ck_assert_str_eq(f->cf_reason, "priority 10 < 50 of good");
    /* The losers are gone with their variables. */
    ck_assert(!mt_var_exists("mcatest_other_priority"));
    close_mcatest();
}
END_TEST

START_TEST(priority_variable_changes_the_winner)
{
    mt_reset();
    mt_set("mcatest_other_priority", "90");
    open_mcatest();
    int priority = 0;
    ck_assert_int_eq(select_whoami(&priority), MCATEST_WHOAMI_OTHER);
    ck_assert_int_eq(priority, 90);
    ck_assert_str_eq(mt_failure(&fw->framework_failures, "good", MT_ANY_STAGE)->cf_reason,
                     "priority 50 < 90 of other");
    close_mcatest();
}
END_TEST

START_TEST(tie_goes_to_the_name_that_sorts_first)
{
    mt_reset();
    mt_set("mcatest_other_priority", "50");
    open_mcatest();
    int priority = 0;
    ck_assert_int_eq(select_whoami(&priority), MCATEST_WHOAMI_GOOD);
    ck_assert_str_eq(mt_failure(&fw->framework_failures, "other", MT_ANY_STAGE)->cf_reason,
                     "priority 50 = 50 of good");
    close_mcatest();

    /* Whatever the order they were found in. */
    mt_reset();
    mt_set("mcatest_other_priority", "50");
    fw->framework_static_components = other_first;
    open_mcatest();
    mca_base_component_list_item_t *first =
        (mca_base_component_list_item_t *) opal_list_get_first(&fw->framework_components);
    ck_assert_ptr_nonnull(first);
    ck_assert_str_eq(first->cli_component->mca_component_name, "other");
    ck_assert_int_eq(select_whoami(&priority), MCATEST_WHOAMI_GOOD);
    close_mcatest();
}
END_TEST

START_TEST(decline_at_query_is_recorded_and_the_next_wins)
{
    mt_reset();
    mt_set("mcatest_other_decline_in", "query");
    mt_set("mcatest_other_priority", "90");
    open_mcatest();
    int priority = 0;
    ck_assert_int_eq(select_whoami(&priority), MCATEST_WHOAMI_GOOD);
    const mca_base_component_failure_t *f =
        mt_failure(&fw->framework_failures, "other", MT_ANY_STAGE);
    ck_assert_int_eq(f->cf_stage, MCA_BASE_COMPONENT_STAGE_QUERY);
    ck_assert_str_eq(f->cf_reason, "told to decline in query");
    close_mcatest();
}
END_TEST

START_TEST(nothing_to_select_is_not_found)
{
    mt_reset();
    mt_set("mcatest", "regdecline");
    open_mcatest();
    mca_base_module_t *module = NULL;
    ck_assert_int_eq(mca_base_select(fw, &module, NULL, NULL), OPAL_ERR_NOT_FOUND);
    ck_assert_ptr_null(module);
    ck_assert(opal_list_is_empty(&fw->framework_components));
    close_mcatest();
}
END_TEST

START_TEST(select_needs_an_open_framework)
{
    mt_reset();
    mca_base_module_t *module = NULL;
    ck_assert_int_eq(mca_base_select(fw, &module, NULL, NULL), OPAL_ERR_NOT_INITIALIZED);
    ck_assert_int_eq(mca_base_select_all(fw, NULL), OPAL_ERR_NOT_INITIALIZED);
    ck_assert_int_eq(mca_base_framework_register(fw, MCA_BASE_REGISTER_DEFAULT), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_select(fw, &module, NULL, NULL), OPAL_ERR_NOT_INITIALIZED);
    close_mcatest();
}
END_TEST

START_TEST(plugin_component_is_selected_and_runs)
{
    mt_reset();
    mt_use_build_plugins();
    mt_no_static_components();
    mt_set("mca_base_component_show_load_errors", "none");
    mt_set("mcatest_other_priority", "70");
    open_mcatest();
    int priority = 0;
    ck_assert_int_eq(select_whoami(&priority), MCATEST_WHOAMI_OTHER);
    ck_assert_int_eq(priority, 70);
    mca_base_component_list_item_t *other = mt_component(fw, "other");
    ck_assert_ptr_nonnull(other->cli_path);
    /* The losers' plugins are unloaded at once. */
    ck_assert(mca_base_component_repository_is_loaded("mcatest", "other"));
    ck_assert(!mca_base_component_repository_is_loaded("mcatest", "good"));
    ck_assert(!mt_mapped("mca_mcatest_good.so"));
    close_mcatest();
    ck_assert(!mt_mapped("mca_mcatest_other.so"));
}
END_TEST

START_TEST(multi_select_keeps_every_module_by_priority)
{
    mt_reset();
    open_mcatest();
    int selected = 0;
    ck_assert_int_eq(mca_base_select_all(fw, &selected), OPAL_SUCCESS);
    ck_assert_int_eq(selected, 3);
    const char *order[] = {"good", "other", "alltypes"};
    const int whoami[] = {MCATEST_WHOAMI_GOOD, MCATEST_WHOAMI_OTHER, MCATEST_WHOAMI_ALLTYPES};
    int i = 0;
    mca_base_component_list_item_t *item;
    OPAL_LIST_FOREACH (item, &fw->framework_components, mca_base_component_list_item_t) {
        ck_assert_str_eq(item->cli_component->mca_component_name, order[i]);
        ck_assert_ptr_nonnull(item->cli_module);
        ck_assert_int_eq(((mca_mcatest_base_module_t *) item->cli_module)->mcatest_whoami(),
                         whoami[i]);
        ++i;
    }
    /* Those that never got to the query stay recorded with why. */
    ck_assert_ptr_nonnull(
        mt_failure(&fw->framework_failures, "openfail", MCA_BASE_COMPONENT_STAGE_OPEN));
    ck_assert_ptr_nonnull(
        mt_failure(&fw->framework_failures, "regdecline", MCA_BASE_COMPONENT_STAGE_REGISTER));
    ck_assert_ptr_null(mt_failure(&fw->framework_failures, "good", MT_ANY_STAGE));
    close_mcatest();
}
END_TEST

START_TEST(multi_select_leaves_out_decliners)
{
    mt_reset();
    mt_set("mcatest_other_decline_in", "query");
    open_mcatest();
    int selected = 0;
    ck_assert_int_eq(mca_base_select_all(fw, &selected), OPAL_SUCCESS);
    ck_assert_int_eq(selected, 2);
    ck_assert_ptr_null(mt_component(fw, "other"));
    ck_assert_ptr_nonnull(
        mt_failure(&fw->framework_failures, "other", MCA_BASE_COMPONENT_STAGE_QUERY));
    close_mcatest();

    mt_reset();
    mt_set("mcatest", "regdecline");
    open_mcatest();
    ck_assert_int_eq(mca_base_select_all(fw, &selected), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(selected, 0);
    close_mcatest();
}
END_TEST

START_TEST(dropped_component_is_closed_and_recorded)
{
    mt_reset();
    mt_set("mcatest", "good,other");
    open_mcatest();
    ck_assert_int_eq(mca_base_select_all(fw, NULL), OPAL_SUCCESS);
    mca_base_component_list_item_t *good = mt_component(fw, "good");
    const mca_mcatest_base_module_t *m = (const mca_mcatest_base_module_t *) good->cli_module;
    mca_base_framework_drop_component(fw, good, MCA_BASE_COMPONENT_STAGE_QUERY,
                                      "its module failed to initialise");
    ck_assert_ptr_null(mt_component(fw, "good"));
    ck_assert_str_eq(m->mcatest_lifecycle(), "register,open,query,close");
    const mca_base_component_failure_t *f =
        mt_failure(&fw->framework_failures, "good", MCA_BASE_COMPONENT_STAGE_QUERY);
    ck_assert_str_eq(f->cf_reason, "its module failed to initialise");
    ck_assert(!mt_var_exists("mcatest_good_priority"));
    close_mcatest();
}
END_TEST

START_TEST(framework_select_without_a_hook_selects_as_the_flags_say)
{
    int selected = -1;
    ck_assert_int_eq(mca_base_framework_select(fw, &selected), OPAL_ERR_NOT_INITIALIZED);
    ck_assert_int_eq(selected, 0);
    mt_reset();
    open_mcatest();
    ck_assert_int_eq(mca_base_framework_select(fw, &selected), OPAL_SUCCESS);
    /* mcatest is single-select: the best one stays. */
    ck_assert_int_eq(selected, 1);
    ck_assert_ptr_nonnull(mt_component(fw, "good"));
    ck_assert_ptr_nonnull(
        mt_failure(&fw->framework_failures, "other", MCA_BASE_COMPONENT_STAGE_PRIORITY));
    close_mcatest();
}
END_TEST

static int hook_calls;

/* A framework's own selection: keeps "other" alone, whatever the
 * priorities say. */
static int keep_other(int *selected)
{
    ++hook_calls;
    mca_base_component_list_item_t *item, *next;
    OPAL_LIST_FOREACH_SAFE (item, next, &fw->framework_components, mca_base_component_list_item_t) {
        if (0 != strcmp(item->cli_component->mca_component_name, "other")) {
            mca_base_framework_drop_component(fw, item, MCA_BASE_COMPONENT_STAGE_QUERY,
                                              "the hook keeps other");
        }
    }
    *selected = (int) opal_list_get_size(&fw->framework_components);
    return 0 == *selected ? OPAL_ERR_NOT_FOUND : OPAL_SUCCESS;
}

START_TEST(framework_select_runs_the_frameworks_own_hook)
{
    mt_reset();
    open_mcatest();
    hook_calls = 0;
    fw->framework_select = keep_other;
    int selected = 0;
    int rc = mca_base_framework_select(fw, &selected);
    fw->framework_select = NULL;
    ck_assert_int_eq(rc, OPAL_SUCCESS);
    ck_assert_int_eq(hook_calls, 1);
    ck_assert_int_eq(selected, 1);
    ck_assert_ptr_nonnull(mt_component(fw, "other"));
    const mca_base_component_failure_t *f =
        mt_failure(&fw->framework_failures, "good", MCA_BASE_COMPONENT_STAGE_QUERY);
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(f->cf_reason, "the hook keeps other");
    close_mcatest();
}
END_TEST

static Suite *select_suite(void)
{
    Suite *s = suite_create("mca_base_select");
    OPAL_TEST_ADD(s, highest_priority_wins);
    OPAL_TEST_ADD(s, priority_variable_changes_the_winner);
    OPAL_TEST_ADD(s, tie_goes_to_the_name_that_sorts_first);
    OPAL_TEST_ADD(s, decline_at_query_is_recorded_and_the_next_wins);
    OPAL_TEST_ADD(s, nothing_to_select_is_not_found);
    OPAL_TEST_ADD(s, select_needs_an_open_framework);
    OPAL_TEST_ADD(s, plugin_component_is_selected_and_runs);
    OPAL_TEST_ADD(s, multi_select_keeps_every_module_by_priority);
    OPAL_TEST_ADD(s, multi_select_leaves_out_decliners);
    OPAL_TEST_ADD(s, dropped_component_is_closed_and_recorded);
    OPAL_TEST_ADD(s, framework_select_without_a_hook_selects_as_the_flags_say);
    OPAL_TEST_ADD(s, framework_select_runs_the_frameworks_own_hook);
    return s;
}

int main(void)
{
    return opal_test_run(select_suite());
}
