/* Programs of the build tree run without being installed: a build-tree
 * libopal knows itself, takes its plugins from the build tree's component
 * directories and its help files from the source tree; and when a
 * framework finds no component, the message says where it looked,
 * directory by directory, and what to do. */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/base/mca_base_open.h"
#include "opal/runtime/opal_build_tree.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_show_help.h"
#include "test/mca/mca_base_test_support.h"
#include "test/mca/mcatest/mcatest.h"
#include "test/support/opal_test.h"

#ifndef OPAL_TEST_MCA_COMPONENT_DIRS
#error "OPAL_TEST_MCA_COMPONENT_DIRS comes from test/mca/Makefile-repo.inc"
#endif

static mca_base_framework_t *const fw = &test_mcatest_base_framework;

START_TEST(a_build_tree_libopal_knows_it_is_one)
{
    /* This test links the build tree's libopal (libtool -no-install). */
    ck_assert(opal_build_tree_in_use());
    ck_assert_str_eq(opal_build_tree_component_path(), OPAL_TEST_MCA_COMPONENT_DIRS);
}
END_TEST

START_TEST(default_component_path_is_the_build_trees_plugin_directories)
{
    mt_reset();
    mt_set("mca_base_component_path", NULL);
    ck_assert_int_eq(mca_base_open(), OPAL_SUCCESS);
    ck_assert_str_eq(mca_base_component_path, OPAL_TEST_MCA_COMPONENT_DIRS ":~/.opal/components");
    /* Never the install directory: an older install's plugins would not
     * match this libopal. */
    ck_assert_ptr_null(strstr(mca_base_component_path, "/lib/opal-mca"));
    ck_assert_int_eq(mca_base_close(), OPAL_SUCCESS);
}
END_TEST

START_TEST(help_files_are_found_in_the_source_tree_without_a_help_path)
{
    char *saved =
        NULL != getenv("OPAL_SHOW_HELP_PATH") ? strdup(getenv("OPAL_SHOW_HELP_PATH")) : NULL;
    unsetenv("OPAL_SHOW_HELP_PATH");
    char *text = opal_show_help_string("help-mca-base.txt", "selection-mixed", false, "btl", "btl",
                                       "a,^b", "test", "", "", "");
    if (NULL != saved) {
        setenv("OPAL_SHOW_HELP_PATH", saved, 1);
        free(saved);
    }
    ck_assert_ptr_nonnull(text);
    ck_assert_ptr_nonnull(strstr(text, "mixes components to use and"));
    ck_assert_ptr_null(strstr(text, "cannot be shown"));
    free(text);
}
END_TEST

START_TEST(path_report_says_which_directories_are_missing_empty_or_hold_plugins)
{
    mt_reset();
    char *empty = mt_make_dir();
    char *full = mt_make_dir();
    char *good = mt_plugin_file("good");
    mt_link(full, "mca_mcatest_good.so", good);
    char *path = NULL;
    ck_assert_int_ge(asprintf(&path, "/nonexistent/opal-mca-test:%s:%s", empty, full), 0);
    mt_set("mca_base_component_path", path);
    ck_assert_int_eq(mca_base_open(), OPAL_SUCCESS);

    char *report = mca_base_component_path_report("mcatest", "  ");
    ck_assert_ptr_nonnull(report);
    char *expect = NULL;
    ck_assert_int_ge(asprintf(&expect,
                              "  /nonexistent/opal-mca-test: does not exist\n"
                              "  %s: exists, holds no mca_mcatest_*.so\n"
                              "  %s: exists, holds good",
                              empty, full),
                     0);
    ck_assert_str_eq(report, expect);

    ck_assert_int_eq(mca_base_close(), OPAL_SUCCESS);
    free(expect);
    free(report);
    free(path);
    free(good);
    mt_remove_dir(full);
    mt_remove_dir(empty);
}
END_TEST

START_TEST(not_found_message_names_each_directory_and_what_to_do)
{
    mt_reset();
    mt_no_static_components();
    char *empty = mt_make_dir();
    char *path = NULL;
    ck_assert_int_ge(asprintf(&path, "%s:/nonexistent/opal-mca-test", empty), 0);
    mt_set("mca_base_component_path", path);
    ck_assert_int_eq(mca_base_open(), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT), OPAL_SUCCESS);
    ck_assert(opal_list_is_empty(&fw->framework_components));

    mt_capture_start();
    mca_base_framework_show_not_found(fw);
    char *out = mt_capture_end();
    ck_assert_ptr_nonnull(strstr(out, "No mcatest component was found. Built in: none."));
    char *line = NULL;
    ck_assert_int_ge(asprintf(&line, "  %s: exists, holds no mca_mcatest_*.so\n", empty), 0);
    ck_assert_ptr_nonnull(strstr(out, line));
    ck_assert_ptr_nonnull(strstr(out, "  /nonexistent/opal-mca-test: does not exist\n"));
    ck_assert_ptr_nonnull(strstr(out, "OPAL_MCA_mca_base_component_path"));
    /* The build tree's own plugin directories, as the place to look. */
    ck_assert_ptr_nonnull(strstr(out, "/.libs"));

    ck_assert_int_eq(mca_base_framework_close(fw), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_close(), OPAL_SUCCESS);
    free(line);
    free(out);
    free(path);
    mt_remove_dir(empty);
}
END_TEST

static Suite *build_tree_suite(void)
{
    Suite *s = suite_create("mca_base_build_tree");
    OPAL_TEST_ADD(s, a_build_tree_libopal_knows_it_is_one);
    OPAL_TEST_ADD(s, default_component_path_is_the_build_trees_plugin_directories);
    OPAL_TEST_ADD(s, help_files_are_found_in_the_source_tree_without_a_help_path);
    OPAL_TEST_ADD(s, path_report_says_which_directories_are_missing_empty_or_hold_plugins);
    OPAL_TEST_ADD(s, not_found_message_names_each_directory_and_what_to_do);
    return s;
}

int main(void)
{
    return opal_test_run(build_tree_suite());
}
