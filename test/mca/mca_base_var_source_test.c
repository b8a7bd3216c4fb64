/* Where values come from: parameter files, the environment, the command
 * line, the API and the override file, their precedence, and the messages
 * naming the source of a bad value. The unknown-name checks are in
 * mca_base_var_unknown_test.c, part of the same suite. */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/util/opal_error.h"
#include "test/mca/mca_var_test_support.h"

void mca_base_var_add_unknown_tests(Suite *s);

static int reg_x(int *x)
{
    return mca_base_var_register("opal", "testfw", "comp", "x", "a test variable",
                                 MCA_BASE_VAR_TYPE_INT, NULL, 0, OPAL_INFO_LVL_1,
                                 MCA_BASE_VAR_SCOPE_LOCAL, x);
}

static int cmdline(const char *key, const char *value)
{
    char *keys[] = {(char *) key}, *values[] = {(char *) value};
    return mca_base_var_process_cmdline(1, keys, values);
}

/*
 * Gives testfw_comp_x the value 10 + s from each source s of the pair (the
 * default is 10) the way a program gets them: files and environment before
 * init, the command line before registration, the API after; and asserts
 * the higher source wins.
 */
static void check_precedence(mca_base_var_source_t lower, mca_base_var_source_t higher)
{
    mca_base_var_source_t pair[] = {lower, higher};
    bool api = false, cmd = false;
    for (int i = 0; i < 2; ++i) {
        switch (pair[i]) {
            case MCA_BASE_VAR_SOURCE_FILE:
                mvt_param_files(mvt_write_file("params.conf", "testfw_comp_x = 11\n"));
                break;
            case MCA_BASE_VAR_SOURCE_ENV:
                mvt_setenv("testfw_comp_x", "12");
                break;
            case MCA_BASE_VAR_SOURCE_COMMAND_LINE:
                cmd = true;
                break;
            case MCA_BASE_VAR_SOURCE_SET:
                api = true;
                break;
            case MCA_BASE_VAR_SOURCE_OVERRIDE:
                mvt_override_file(mvt_write_file("override.conf", "testfw_comp_x = 15\n"));
                break;
            default:
                break;
        }
    }
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    if (cmd) {
        ck_assert_int_eq(cmdline("testfw_comp_x", "13"), OPAL_SUCCESS);
    }
    int x = 10;
    int index = reg_x(&x);
    ck_assert_int_ge(index, 0);
    if (api) {
        int rc = mca_base_var_set_value_string(index, "14", MCA_BASE_VAR_SOURCE_SET, NULL);
        ck_assert_int_eq(rc, MCA_BASE_VAR_SOURCE_OVERRIDE == higher ? OPAL_ERR_PERM : OPAL_SUCCESS);
    }
    ck_assert_int_eq(x, 10 + (int) higher);
    const mca_base_var_t *var = NULL;
    ck_assert_int_eq(mca_base_var_get(index, &var), OPAL_SUCCESS);
    ck_assert_int_eq(var->mbv_source, higher);
}

#define PRECEDENCE_TEST(name, lower, higher)                                                       \
    START_TEST(name)                                                                               \
    {                                                                                              \
        check_precedence(MCA_BASE_VAR_SOURCE_##lower, MCA_BASE_VAR_SOURCE_##higher);               \
    }                                                                                              \
    END_TEST

PRECEDENCE_TEST(file_beats_default, DEFAULT, FILE)
PRECEDENCE_TEST(env_beats_default, DEFAULT, ENV)
PRECEDENCE_TEST(cmdline_beats_default, DEFAULT, COMMAND_LINE)
PRECEDENCE_TEST(api_beats_default, DEFAULT, SET)
PRECEDENCE_TEST(override_beats_default, DEFAULT, OVERRIDE)
PRECEDENCE_TEST(env_beats_file, FILE, ENV)
PRECEDENCE_TEST(cmdline_beats_file, FILE, COMMAND_LINE)
PRECEDENCE_TEST(api_beats_file, FILE, SET)
PRECEDENCE_TEST(override_beats_file, FILE, OVERRIDE)
PRECEDENCE_TEST(cmdline_beats_env, ENV, COMMAND_LINE)
PRECEDENCE_TEST(api_beats_env, ENV, SET)
PRECEDENCE_TEST(override_beats_env, ENV, OVERRIDE)
PRECEDENCE_TEST(api_beats_cmdline, COMMAND_LINE, SET)
PRECEDENCE_TEST(override_beats_cmdline, COMMAND_LINE, OVERRIDE)
PRECEDENCE_TEST(override_beats_api, SET, OVERRIDE)

START_TEST(cmdline_after_registration_beats_env)
{
    mvt_setenv("testfw_comp_x", "12");
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 10;
    reg_x(&x);
    ck_assert_int_eq(x, 12);
    ck_assert_int_eq(cmdline("testfw_comp_x", "13"), OPAL_SUCCESS);
    ck_assert_int_eq(x, 13);
}
END_TEST

START_TEST(lower_source_later_does_not_replace_higher)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 10;
    int index = reg_x(&x);
    ck_assert_int_eq(mca_base_var_set_value_string(index, "14", MCA_BASE_VAR_SOURCE_SET, NULL),
                     OPAL_SUCCESS);
    ck_assert_int_eq(cmdline("testfw_comp_x", "13"), OPAL_SUCCESS);
    ck_assert_int_eq(x, 14);
    ck_assert_int_eq(mvt_message_count(), 0);
}
END_TEST

START_TEST(cmdline_last_value_wins)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    char *keys[] = {"testfw_comp_x", "testfw_comp_x"}, *values[] = {"1", "2"};
    ck_assert_int_eq(mca_base_var_process_cmdline(2, keys, values), OPAL_SUCCESS);
    int x = 10;
    reg_x(&x);
    ck_assert_int_eq(x, 2);
    ck_assert_int_eq(cmdline("testfw_comp_x", "3"), OPAL_SUCCESS);
    ck_assert_int_eq(x, 3);
}
END_TEST

START_TEST(cmdline_refuses_bad_arguments)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    char *keys[] = {NULL}, *values[] = {"1"};
    ck_assert_int_eq(mca_base_var_process_cmdline(-1, keys, values), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(mca_base_var_process_cmdline(1, keys, values), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(cmdline("", "1"), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(mca_base_var_process_cmdline(0, NULL, NULL), OPAL_SUCCESS);
}
END_TEST

START_TEST(earlier_param_file_wins)
{
    char files[1024];
    snprintf(files, sizeof(files), "%s:%s", mvt_data_file("earlier.conf"),
             mvt_data_file("later.conf"));
    mvt_param_files(files);
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 0, y = 0;
    int index = reg_x(&x);
    mca_base_var_register("opal", "testfw", "comp", "y", "d", MCA_BASE_VAR_TYPE_INT, NULL, 0,
                          OPAL_INFO_LVL_1, MCA_BASE_VAR_SCOPE_LOCAL, &y);
    ck_assert_int_eq(x, 1);
    /* A later file still gives what the earlier one does not set. */
    ck_assert_int_eq(y, 22);
    char *want = NULL;
    ck_assert_int_ge(asprintf(&want, "file %s:2", mvt_data_file("earlier.conf")), 0);
    ck_assert_str_eq(mvt_source(index), want);
    free(want);
}
END_TEST

START_TEST(later_line_of_one_file_wins)
{
    mvt_param_files(mvt_write_file("p.conf", "testfw_comp_x = 1\ntestfw_comp_x = 2\n"));
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 0;
    reg_x(&x);
    ck_assert_int_eq(x, 2);
}
END_TEST

START_TEST(default_file_list_is_opal_param_files_home_then_sysconfdir)
{
    unsetenv("OPAL_MCA_mca_base_param_files");
    char *list = NULL, *home = NULL;
    ck_assert_int_ge(asprintf(&list, "%s/missing.conf:%s/p2.conf", mvt_tmpdir(), mvt_tmpdir()), 0);
    setenv("OPAL_PARAM_FILES", list, 1);
    mvt_write_file("p2.conf", "testfw_comp_x = 2\n");
    ck_assert_int_ge(asprintf(&home, "%s/.opal", mvt_tmpdir()), 0);
    ck_assert_int_eq(mkdir(home, 0700), 0);
    mvt_write_file(".opal/mca-params.conf", "testfw_comp_x = 3\ntestfw_comp_y = 4\n");
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);

    int files = mca_base_var_find_by_name("mca_base_param_files");
    ck_assert_int_ge(files, 0);
    const char *value = mvt_value(files);
    char *prefix = NULL;
    ck_assert_int_ge(asprintf(&prefix, "%s:%s/mca-params.conf:", list, home), 0);
    ck_assert_msg(0 == strncmp(value, prefix, strlen(prefix)), "%s", value);
    const char *sys = "/opal-mca-params.conf";
    ck_assert_str_eq(value + strlen(value) - strlen(sys), sys);

    int x = 0, y = 0;
    reg_x(&x);
    mca_base_var_register("opal", "testfw", "comp", "y", "d", MCA_BASE_VAR_TYPE_INT, NULL, 0,
                          OPAL_INFO_LVL_1, MCA_BASE_VAR_SCOPE_LOCAL, &y);
    ck_assert_int_eq(x, 2);
    ck_assert_int_eq(y, 4);
    /* The missing file was named by the user; the default ones exist. */
    ck_assert_int_eq(mvt_message_count(), 1);
    MVT_ASSERT_MESSAGE("missing.conf (named in $OPAL_PARAM_FILES) does not exist");
    free(prefix);
    free(home);
    free(list);
}
END_TEST

START_TEST(param_file_syntax_errors_name_file_and_line)
{
    const char *path = mvt_data_file("syntax_errors.conf");
    mvt_param_files(path);
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    ck_assert_int_eq(mvt_error_count(), 3);
    for (int line = 3; line <= 6; line += line == 3 ? 2 : 1) {
        char *where = NULL;
        ck_assert_int_ge(asprintf(&where, "%s:%d", path, line), 0);
        MVT_ASSERT_MESSAGE("MCA parameter file", where);
        free(where);
    }
    int x = 0, y = 0;
    reg_x(&x);
    mca_base_var_register("opal", "testfw", "comp", "y", "d", MCA_BASE_VAR_TYPE_INT, NULL, 0,
                          OPAL_INFO_LVL_1, MCA_BASE_VAR_SCOPE_LOCAL, &y);
    ck_assert_int_eq(x, 5);
    ck_assert_int_eq(y, 6);
}
END_TEST

START_TEST(missing_named_param_file_is_reported)
{
    char *path = NULL, *want = NULL;
    ck_assert_int_ge(asprintf(&path, "%s/none.conf", mvt_tmpdir()), 0);
    mvt_param_files(path);
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    ck_assert_int_eq(mvt_warning_count(), 1);
    ck_assert_int_ge(asprintf(&want,
                              "MCA parameter file %s (named in OPAL_MCA_mca_base_param_files) "
                              "does not exist",
                              path),
                     0);
    MVT_ASSERT_MESSAGE(want);
    free(want);
    free(path);
}
END_TEST

START_TEST(missing_default_param_files_are_silent)
{
    /* $HOME (the test's directory) has no .opal/mca-params.conf, and the
     * list is the default one. */
    unsetenv("OPAL_MCA_mca_base_param_files");
    unsetenv("OPAL_PARAM_FILES");
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    ck_assert_int_eq(mvt_message_count(), 0);
}
END_TEST

START_TEST(missing_named_override_file_is_reported)
{
    char *path = NULL;
    ck_assert_int_ge(asprintf(&path, "%s/no-override.conf", mvt_tmpdir()), 0);
    mvt_override_file(path);
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    ck_assert_int_eq(mvt_warning_count(), 1);
    MVT_ASSERT_MESSAGE(path, "(named in OPAL_MCA_mca_base_override_param_file) does not exist");
    free(path);
}
END_TEST

START_TEST(unreadable_param_file_is_reported)
{
    /* A directory opens but cannot be read as a file. */
    mvt_param_files(mvt_tmpdir());
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    ck_assert_int_eq(mvt_error_count(), 1);
    MVT_ASSERT_MESSAGE("MCA parameter file skipped", mvt_tmpdir());
}
END_TEST

START_TEST(override_makes_variable_read_only)
{
    const char *path = mvt_data_file("override.conf");
    mvt_override_file(path);
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 10;
    int index = reg_x(&x);
    ck_assert_int_eq(x, 15);
    const mca_base_var_t *var = NULL;
    ck_assert_int_eq(mca_base_var_get(index, &var), OPAL_SUCCESS);
    ck_assert(0 != (var->mbv_flags & MCA_BASE_VAR_FLAG_READ_ONLY));
    ck_assert_int_eq(mca_base_var_set_value_string(index, "3", MCA_BASE_VAR_SOURCE_SET, NULL),
                     OPAL_ERR_PERM);
    ck_assert_int_eq(cmdline("testfw_comp_x", "4"), OPAL_ERR_PERM);
    ck_assert_int_eq(x, 15);
    MVT_ASSERT_MESSAGE("testfw_comp_x", "read-only", "\"3\"", "override file");
    MVT_ASSERT_MESSAGE("testfw_comp_x", "read-only", "\"4\"", "command line");
}
END_TEST

START_TEST(override_warns_about_settings_it_beats)
{
    mvt_override_file(mvt_data_file("override.conf"));
    mvt_setenv("testfw_comp_x", "12");
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 10;
    reg_x(&x);
    ck_assert_int_eq(x, 15);
    ck_assert_int_eq(mvt_warning_count(), 1);
    MVT_ASSERT_MESSAGE("testfw_comp_x", "override file", "\"12\"", "OPAL_MCA_testfw_comp_x");
}
END_TEST

START_TEST(source_string_names_each_source)
{
    const char *file = mvt_write_file("p.conf", "# comment\ntestfw_comp_x = 11\n");
    mvt_param_files(file);
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 0;
    int index = reg_x(&x);
    char *want = NULL;
    ck_assert_int_ge(asprintf(&want, "file %s:2", file), 0);
    ck_assert_str_eq(mvt_source(index), want);
    free(want);
    ck_assert_int_eq(cmdline("testfw_comp_x", "13"), OPAL_SUCCESS);
    ck_assert_str_eq(mvt_source(index), "command line (--mca testfw_comp_x)");
    ck_assert_int_eq(mca_base_var_set_value_string(index, "14", MCA_BASE_VAR_SOURCE_SET, NULL),
                     OPAL_SUCCESS);
    ck_assert_str_eq(mvt_source(index), "API");
    ck_assert_int_eq(
        mca_base_var_set_value_string(index, "15", MCA_BASE_VAR_SOURCE_OVERRIDE, "/etc/o.conf"),
        OPAL_SUCCESS);
    ck_assert_str_eq(mvt_source(index), "override file /etc/o.conf");
    ck_assert_int_eq(mca_base_var_set_value_string(index, "1", MCA_BASE_VAR_SOURCE_DEFAULT, NULL),
                     OPAL_ERR_BAD_PARAM);
}
END_TEST

START_TEST(bad_value_from_environment_names_variable_value_and_source)
{
    mvt_setenv("testfw_comp_x", "12q");
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 4096;
    reg_x(&x);
    ck_assert_int_eq(x, 4096);
    ck_assert_int_eq(mvt_error_count(), 1);
    MVT_ASSERT_MESSAGE("MCA variable testfw_comp_x", "\"12q\"",
                       "environment (OPAL_MCA_testfw_comp_x)", "keeping 4096 (default)");
}
END_TEST

START_TEST(bad_value_from_file_names_file_and_line)
{
    const char *file = mvt_write_file("p.conf", "\ntestfw_comp_x = oops\n");
    mvt_param_files(file);
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 7;
    reg_x(&x);
    ck_assert_int_eq(x, 7);
    char *where = NULL;
    ck_assert_int_ge(asprintf(&where, "file %s:2", file), 0);
    MVT_ASSERT_MESSAGE("testfw_comp_x", "\"oops\"", where);
    free(where);
}
END_TEST

START_TEST(bad_value_from_cmdline_names_command_line)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    ck_assert_int_eq(cmdline("testfw_comp_x", "1x"), OPAL_SUCCESS);
    int x = 7;
    reg_x(&x);
    ck_assert_int_eq(x, 7);
    MVT_ASSERT_MESSAGE("testfw_comp_x", "\"1x\"", "command line (--mca testfw_comp_x)");
    /* After registration the refusal is also the return value. */
    ck_assert_int_eq(cmdline("testfw_comp_x", "2y"), OPAL_ERR_BAD_VALUE);
    MVT_ASSERT_MESSAGE("testfw_comp_x", "\"2y\"", "command line");
    ck_assert_int_eq(x, 7);
}
END_TEST

START_TEST(bad_value_falls_back_to_lower_source)
{
    mvt_param_files(mvt_write_file("p.conf", "testfw_comp_x = 11\n"));
    mvt_setenv("testfw_comp_x", "twelve");
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 10;
    reg_x(&x);
    ck_assert_int_eq(x, 11);
    MVT_ASSERT_MESSAGE("\"twelve\"", "keeping 11 (file ");
}
END_TEST

START_TEST(bad_value_reported_once_across_registrations)
{
    mvt_setenv("testfw_comp_x", "bad");
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int a = 1, b = 1;
    int index = reg_x(&a);
    ck_assert_int_eq(mca_base_var_deregister(index), OPAL_SUCCESS);
    ck_assert_int_eq(reg_x(&b), index);
    ck_assert_int_eq(mvt_error_count(), 1);
}
END_TEST

START_TEST(file_source_through_api_names_the_file)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 0;
    int index = reg_x(&x);
    ck_assert_int_eq(
        mca_base_var_set_value_string(index, "5", MCA_BASE_VAR_SOURCE_FILE, "/x/y.conf"),
        OPAL_SUCCESS);
    ck_assert_int_eq(x, 5);
    ck_assert_str_eq(mvt_source(index), "file /x/y.conf");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mca_base_var_source");
    MVT_ADD(s, file_beats_default);
    MVT_ADD(s, env_beats_default);
    MVT_ADD(s, cmdline_beats_default);
    MVT_ADD(s, api_beats_default);
    MVT_ADD(s, override_beats_default);
    MVT_ADD(s, env_beats_file);
    MVT_ADD(s, cmdline_beats_file);
    MVT_ADD(s, api_beats_file);
    MVT_ADD(s, override_beats_file);
    MVT_ADD(s, cmdline_beats_env);
    MVT_ADD(s, api_beats_env);
    MVT_ADD(s, override_beats_env);
    MVT_ADD(s, api_beats_cmdline);
    MVT_ADD(s, override_beats_cmdline);
    MVT_ADD(s, override_beats_api);
    MVT_ADD(s, cmdline_after_registration_beats_env);
    MVT_ADD(s, lower_source_later_does_not_replace_higher);
    MVT_ADD(s, cmdline_last_value_wins);
    MVT_ADD(s, cmdline_refuses_bad_arguments);
    MVT_ADD(s, earlier_param_file_wins);
    MVT_ADD(s, later_line_of_one_file_wins);
    MVT_ADD(s, default_file_list_is_opal_param_files_home_then_sysconfdir);
    MVT_ADD(s, param_file_syntax_errors_name_file_and_line);
    MVT_ADD(s, missing_named_param_file_is_reported);
    MVT_ADD(s, missing_default_param_files_are_silent);
    MVT_ADD(s, missing_named_override_file_is_reported);
    MVT_ADD(s, unreadable_param_file_is_reported);
    MVT_ADD(s, override_makes_variable_read_only);
    MVT_ADD(s, override_warns_about_settings_it_beats);
    MVT_ADD(s, source_string_names_each_source);
    MVT_ADD(s, bad_value_from_environment_names_variable_value_and_source);
    MVT_ADD(s, bad_value_from_file_names_file_and_line);
    MVT_ADD(s, bad_value_from_cmdline_names_command_line);
    MVT_ADD(s, bad_value_falls_back_to_lower_source);
    MVT_ADD(s, bad_value_reported_once_across_registrations);
    MVT_ADD(s, file_source_through_api_names_the_file);
    mca_base_var_add_unknown_tests(s);
    return opal_test_run(s);
}
