/* The command-line parser: every accepted option form, positional
 * arguments, "--", stop-at-positional mode, repeated --mca pairs, errors
 * naming the culprit, queries and the generated --help text. */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/class/opal_list.h"
#include "opal/util/opal_argv.h"
#include "opal/util/opal_cmd_line.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

static const opal_cmd_line_option_t options[] = {
    {"np", 'n', 1, "<N>", "Number of processes to start"},
    {"verbose", 'v', 0, NULL, "Say more"},
    {"quiet", 'q', 0, NULL, "Say less"},
    {"host", 'H', 1, NULL, "Hosts to run on"},
    {"pair", '\0', 2, NULL, "Two values"},
    {"offset", '\0', 1, NULL, "Any number, even negative"},
    {NULL, 'x', 0, NULL, "A short-only flag"},
    {"help", 'h', 0, NULL, "Show this help"},
    {NULL, '\0', 0, NULL, NULL},
};

static opal_cmd_line_t *cmd;

static void setup(void)
{
    cmd = OBJ_NEW(opal_cmd_line_t);
    ck_assert_ptr_nonnull(cmd);
    ck_assert_int_eq(opal_cmd_line_add(cmd, options), OPAL_SUCCESS);
    ck_assert_int_eq(opal_cmd_line_add_mca_options(cmd), OPAL_SUCCESS);
}

static void teardown(void)
{
    OBJ_RELEASE(cmd);
}

/* Parses the words of line (split at spaces) after a program name. */
static int parse(const char *line, int flags)
{
    char **argv = opal_argv_split(line, ' ');
    ck_assert_int_eq(opal_argv_prepend_nosize(&argv, "prog"), OPAL_SUCCESS);
    int rc = opal_cmd_line_parse(cmd, opal_argv_count(argv), argv, flags);
    opal_argv_free(argv);
    return rc;
}

static void assert_parses(const char *line)
{
    int rc = parse(line, 0);
    ck_assert_msg(OPAL_SUCCESS == rc, "\"%s\": %s", line, opal_cmd_line_get_error(cmd));
    ck_assert_ptr_null(opal_cmd_line_get_error(cmd));
}

static void assert_error(const char *line, int code, const char *message)
{
    ck_assert_int_eq(parse(line, 0), code);
    const char *error = opal_cmd_line_get_error(cmd);
    ck_assert_ptr_nonnull(error);
    ck_assert_msg(0 == strcmp(error, message), "\"%s\" gave \"%s\", not \"%s\"", line, error,
                  message);
}

static void assert_positional(const char *const *expected, int n)
{
    int count = -1;
    char **pos = opal_cmd_line_get_positional(cmd, &count);
    ck_assert_int_eq(count, n);
    for (int i = 0; i < n; ++i) {
        ck_assert_str_eq(pos[i], expected[i]);
    }
    ck_assert_ptr_null(pos[n]);
}

START_TEST(every_form_of_a_one_argument_option)
{
    const char *forms[] = {"--np 4", "--np=4", "-np 4", "-np=4", "-n 4", "-n4", "-n=4"};
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); ++i) {
        assert_parses(forms[i]);
        ck_assert_msg(1 == opal_cmd_line_get_ninsts(cmd, "np"), "form %s", forms[i]);
        ck_assert_str_eq(opal_cmd_line_get_param(cmd, "np", 0, 0), "4");
        assert_positional(NULL, 0);
    }
}
END_TEST

START_TEST(equals_form_keeps_everything_after_the_first_equals)
{
    assert_parses("--host=a=b,c --offset=");
    ck_assert_str_eq(opal_cmd_line_get_param(cmd, "host", 0, 0), "a=b,c");
    ck_assert_str_eq(opal_cmd_line_get_param(cmd, "offset", 0, 0), "");
}
END_TEST

START_TEST(short_flags_combine)
{
    assert_parses("-vqx");
    ck_assert(opal_cmd_line_is_taken(cmd, "verbose"));
    ck_assert(opal_cmd_line_is_taken(cmd, "q"));
    ck_assert(opal_cmd_line_is_taken(cmd, "x"));
    ck_assert(!opal_cmd_line_is_taken(cmd, "np"));
}
END_TEST

START_TEST(last_short_of_a_group_may_take_an_argument)
{
    assert_parses("-vn 8 -qn16");
    ck_assert(opal_cmd_line_is_taken(cmd, "v"));
    ck_assert(opal_cmd_line_is_taken(cmd, "q"));
    ck_assert_int_eq(opal_cmd_line_get_ninsts(cmd, "n"), 2);
    ck_assert_str_eq(opal_cmd_line_get_param(cmd, "np", 0, 0), "8");
    ck_assert_str_eq(opal_cmd_line_get_param(cmd, "np", 1, 0), "16");
}
END_TEST

START_TEST(repeated_option_keeps_every_value_in_order)
{
    assert_parses("-v --host a -v -v --host=b -H c");
    ck_assert_int_eq(opal_cmd_line_get_ninsts(cmd, "verbose"), 3);
    ck_assert_int_eq(opal_cmd_line_get_ninsts(cmd, "host"), 3);
    ck_assert_str_eq(opal_cmd_line_get_param(cmd, "host", 0, 0), "a");
    ck_assert_str_eq(opal_cmd_line_get_param(cmd, "--host", 1, 0), "b");
    ck_assert_str_eq(opal_cmd_line_get_param(cmd, "H", 2, 0), "c");
    ck_assert_ptr_null(opal_cmd_line_get_param(cmd, "host", 3, 0));
}
END_TEST

START_TEST(multi_argument_option_takes_following_words)
{
    assert_parses("--pair a b --pair c d");
    ck_assert_int_eq(opal_cmd_line_get_ninsts(cmd, "pair"), 2);
    ck_assert_str_eq(opal_cmd_line_get_param(cmd, "pair", 0, 0), "a");
    ck_assert_str_eq(opal_cmd_line_get_param(cmd, "pair", 0, 1), "b");
    ck_assert_str_eq(opal_cmd_line_get_param(cmd, "pair", 1, 1), "d");
    ck_assert_ptr_null(opal_cmd_line_get_param(cmd, "pair", 0, 2));
}
END_TEST

START_TEST(queries_of_unknown_or_unset_options)
{
    assert_parses("-v");
    ck_assert(!opal_cmd_line_is_taken(cmd, "nonexistent"));
    ck_assert(!opal_cmd_line_is_taken(cmd, NULL));
    ck_assert_int_eq(opal_cmd_line_get_ninsts(cmd, "np"), 0);
    ck_assert_ptr_null(opal_cmd_line_get_param(cmd, "np", 0, 0));
    ck_assert_ptr_null(opal_cmd_line_get_param(cmd, "verbose", 0, 0));
    ck_assert_ptr_null(opal_cmd_line_get_param(cmd, "np", -1, 0));
}
END_TEST

START_TEST(positional_arguments_are_kept_in_order)
{
    assert_parses("in1 -v in2 --np 2 - in3");
    assert_positional((const char *[]){"in1", "in2", "-", "in3"}, 4);
    ck_assert(opal_cmd_line_is_taken(cmd, "v"));
}
END_TEST

START_TEST(double_dash_ends_options)
{
    assert_parses("-v -- -q --np x --");
    ck_assert(opal_cmd_line_is_taken(cmd, "v"));
    ck_assert(!opal_cmd_line_is_taken(cmd, "q"));
    assert_positional((const char *[]){"-q", "--np", "x", "--"}, 4);
}
END_TEST

START_TEST(stop_at_positional_leaves_the_rest_to_the_program)
{
    int rc =
        parse("-np 2 --mca btl self prog --verbose -n 3 -- x", OPAL_CMD_LINE_STOP_AT_POSITIONAL);
    ck_assert_int_eq(rc, OPAL_SUCCESS);
    ck_assert_str_eq(opal_cmd_line_get_param(cmd, "np", 0, 0), "2");
    ck_assert(!opal_cmd_line_is_taken(cmd, "verbose"));
    assert_positional((const char *[]){"prog", "--verbose", "-n", "3", "--", "x"}, 6);

    /* Without the flag the same words are options wherever they are. */
    ck_assert_int_eq(parse("-np 2 prog --verbose", 0), OPAL_SUCCESS);
    ck_assert(opal_cmd_line_is_taken(cmd, "verbose"));
    assert_positional((const char *[]){"prog"}, 1);
}
END_TEST

START_TEST(value_may_look_like_a_negative_number)
{
    assert_parses("--offset -5 -n -1");
    ck_assert_str_eq(opal_cmd_line_get_param(cmd, "offset", 0, 0), "-5");
    ck_assert_str_eq(opal_cmd_line_get_param(cmd, "np", 0, 0), "-1");
}
END_TEST

START_TEST(mca_pairs_are_collected_in_order)
{
    assert_parses("--mca btl self,sm -v -mca btl_sm_eager_limit 4096 --gmca na btl --mca btl ^ofi");
    opal_list_t params;
    OBJ_CONSTRUCT(&params, opal_list_t);
    ck_assert_int_eq(opal_cmd_line_get_mca_params(cmd, &params), OPAL_SUCCESS);
    static const char *expected[][3] = {{"mca", "btl", "self,sm"},
                                        {"mca", "btl_sm_eager_limit", "4096"},
                                        {"gmca", "na", "btl"},
                                        {"mca", "btl", "^ofi"}};
    ck_assert_uint_eq(opal_list_get_size(&params), 4);
    int i = 0;
    opal_cmd_line_mca_param_t *p;
    OPAL_LIST_FOREACH (p, &params, opal_cmd_line_mca_param_t) {
        ck_assert_str_eq(p->option, expected[i][0]);
        ck_assert_str_eq(p->key, expected[i][1]);
        ck_assert_str_eq(p->value, expected[i][2]);
        ++i;
    }
    OPAL_LIST_DESTRUCT(&params);
    ck_assert_int_eq(opal_cmd_line_get_ninsts(cmd, "mca"), 3);
}
END_TEST

START_TEST(unknown_long_option_suggests_the_closest)
{
    assert_error("--verbos", OPAL_ERR_UNKNOWN_NAME,
                 "unknown option --verbos (did you mean --verbose?)");
    assert_error("--verb", OPAL_ERR_UNKNOWN_NAME,
                 "unknown option --verb (did you mean --verbose?)");
    assert_error("--hots=a", OPAL_ERR_UNKNOWN_NAME, "unknown option --hots (did you mean --host?)");
    assert_error("-gmac a b", OPAL_ERR_UNKNOWN_NAME, "unknown option -gmac (did you mean --gmca?)");
}
END_TEST

START_TEST(unknown_option_without_a_close_match)
{
    assert_error("--frobnicate", OPAL_ERR_UNKNOWN_NAME, "unknown option --frobnicate");
    assert_error("-z", OPAL_ERR_UNKNOWN_NAME, "unknown option -z");
    assert_error("-=x", OPAL_ERR_UNKNOWN_NAME, "unknown option -=x");
}
END_TEST

START_TEST(unknown_short_in_a_group_is_named)
{
    assert_error("-vzq", OPAL_ERR_UNKNOWN_NAME, "unknown option -z in \"-vzq\"");
    assert_error("-verbos", OPAL_ERR_UNKNOWN_NAME,
                 "unknown option -e in \"-verbos\" (did you mean --verbose?)");
}
END_TEST

START_TEST(missing_argument_names_the_option)
{
    assert_error("--np", OPAL_ERR_BAD_PARAM, "option --np needs 1 argument (<N>), got 0");
    assert_error("-n", OPAL_ERR_BAD_PARAM, "option -n needs 1 argument (<N>), got 0");
    assert_error("--host --verbose", OPAL_ERR_BAD_PARAM, "option --host needs 1 argument, got 0");
    assert_error("--host -- x", OPAL_ERR_BAD_PARAM, "option --host needs 1 argument, got 0");
    assert_error("--mca btl", OPAL_ERR_BAD_PARAM,
                 "option --mca needs 2 arguments (<key> <value>), got 1");
    assert_error("-mca btl -v", OPAL_ERR_BAD_PARAM,
                 "option -mca needs 2 arguments (<key> <value>), got 1");
}
END_TEST

START_TEST(flag_given_a_value_is_an_error)
{
    assert_error("--verbose=3", OPAL_ERR_BAD_PARAM,
                 "option --verbose takes no argument (given \"--verbose=3\")");
    assert_error("-v=3", OPAL_ERR_BAD_PARAM, "option -v takes no argument (given \"-v=3\")");
    assert_error("--pair=a b", OPAL_ERR_BAD_PARAM,
                 "option --pair takes 2 arguments, given as separate words (not \"--pair=a\")");
}
END_TEST

START_TEST(reparse_replaces_earlier_results)
{
    assert_parses("-v a");
    assert_error("--bogus", OPAL_ERR_UNKNOWN_NAME, "unknown option --bogus");
    assert_parses("-q");
    ck_assert(!opal_cmd_line_is_taken(cmd, "v"));
    ck_assert(opal_cmd_line_is_taken(cmd, "q"));
    assert_positional(NULL, 0);
}
END_TEST

START_TEST(empty_command_line)
{
    char *argv[] = {"prog", NULL};
    ck_assert_int_eq(opal_cmd_line_parse(cmd, 1, argv, 0), OPAL_SUCCESS);
    assert_positional(NULL, 0);
    ck_assert_int_eq(opal_cmd_line_parse(cmd, 0, NULL, 0), OPAL_SUCCESS);
    assert_positional(NULL, 0);
}
END_TEST

START_TEST(add_refuses_bad_or_duplicate_options)
{
    opal_cmd_line_t *c = OBJ_NEW(opal_cmd_line_t);
    const opal_cmd_line_option_t dup_long[] = {
        {"a", '\0', 0, NULL, NULL}, {"a", '\0', 0, NULL, NULL}, {NULL, '\0', 0, NULL, NULL}};
    const opal_cmd_line_option_t dup_short[] = {
        {"a", 'x', 0, NULL, NULL}, {"b", 'x', 0, NULL, NULL}, {NULL, '\0', 0, NULL, NULL}};
    const opal_cmd_line_option_t bad_name[] = {{"-a", '\0', 0, NULL, NULL},
                                               {NULL, '\0', 0, NULL, NULL}};
    const opal_cmd_line_option_t bad_chars[] = {{"a b", '\0', 0, NULL, NULL},
                                                {NULL, '\0', 0, NULL, NULL}};
    const opal_cmd_line_option_t bad_short[] = {{NULL, '-', 0, NULL, NULL},
                                                {NULL, '\0', 0, NULL, NULL}};
    const opal_cmd_line_option_t bad_args[] = {{"a", '\0', -1, NULL, NULL},
                                               {NULL, '\0', 0, NULL, NULL}};
    const opal_cmd_line_option_t good[] = {{"a", 'a', 0, NULL, NULL}, {NULL, '\0', 0, NULL, NULL}};
    ck_assert_int_eq(opal_cmd_line_add(c, dup_long), OPAL_ERR_EXISTS);
    ck_assert_int_eq(opal_cmd_line_add(c, dup_short), OPAL_ERR_EXISTS);
    ck_assert_int_eq(opal_cmd_line_add(c, bad_name), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_cmd_line_add(c, bad_chars), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_cmd_line_add(c, bad_short), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_cmd_line_add(c, bad_args), OPAL_ERR_BAD_PARAM);
    /* Nothing of the refused tables was added, so "a" is still free. */
    ck_assert_int_eq(opal_cmd_line_add(c, good), OPAL_SUCCESS);
    ck_assert_int_eq(opal_cmd_line_add(c, good), OPAL_ERR_EXISTS);
    OBJ_RELEASE(c);
}
END_TEST

START_TEST(usage_lists_options_aligned_and_wrapped)
{
    opal_cmd_line_t *c = OBJ_NEW(opal_cmd_line_t);
    const opal_cmd_line_option_t table[] = {
        {"np", 'n', 1, "<N>", "Number of processes"},
        {"verbose", 'v', 0, NULL,
         "Print more about what happens; give it several times to print even more than that"},
        {"host", '\0', 1, NULL, NULL},
        {NULL, 'x', 2, NULL, "Short only"},
        {NULL, '\0', 0, NULL, NULL},
    };
    ck_assert_int_eq(opal_cmd_line_add(c, table), OPAL_SUCCESS);
    char *usage = opal_cmd_line_get_usage_msg(c, 50);
    ck_assert_str_eq(usage, "  -n, --np <N>      Number of processes\n"
                            "  -v, --verbose     Print more about what happens;\n"
                            "                    give it several times to print\n"
                            "                    even more than that\n"
                            "      --host <arg>\n"
                            "  -x <arg> <arg>    Short only\n");
    free(usage);
    OBJ_RELEASE(c);
}
END_TEST

START_TEST(usage_lines_fit_the_width)
{
    for (int width = 40; width <= 120; width += 20) {
        char *usage = opal_cmd_line_get_usage_msg(cmd, width);
        ck_assert_ptr_nonnull(strstr(usage, "--mca <key> <value>"));
        ck_assert_ptr_nonnull(strstr(usage, "-n, --np <N>"));
        char **lines = opal_argv_split(usage, '\n');
        ck_assert_int_eq(opal_argv_count(lines) >= 10, 1);
        for (char **l = lines; NULL != *l; ++l) {
            ck_assert_msg((int) strlen(*l) <= width, "width %d: line too long: \"%s\"", width, *l);
        }
        opal_argv_free(lines);
        free(usage);
    }
}
END_TEST

START_TEST(overlong_option_puts_description_below)
{
    opal_cmd_line_t *c = OBJ_NEW(opal_cmd_line_t);
    const opal_cmd_line_option_t table[] = {
        {"a-very-long-option-name-indeed", '\0', 1, "<value>", "Described below"},
        {"b", '\0', 0, NULL, "Short"},
        {NULL, '\0', 0, NULL, NULL},
    };
    ck_assert_int_eq(opal_cmd_line_add(c, table), OPAL_SUCCESS);
    char *usage = opal_cmd_line_get_usage_msg(c, 60);
    ck_assert_str_eq(usage, "      --a-very-long-option-name-indeed <value>\n"
                            "           Described below\n"
                            "      --b  Short\n");
    free(usage);
    OBJ_RELEASE(c);
}
END_TEST

static void add_case(Suite *s, const char *name, const TTest *test)
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test);
    suite_add_tcase(s, tc);
}

/* OPAL_TEST_ADD with the shared parser built before each test. */
#define ADD(s, fn) add_case((s), #fn, fn)

int main(void)
{
    Suite *s = suite_create("opal_cmd_line");
    ADD(s, every_form_of_a_one_argument_option);
    ADD(s, equals_form_keeps_everything_after_the_first_equals);
    ADD(s, short_flags_combine);
    ADD(s, last_short_of_a_group_may_take_an_argument);
    ADD(s, repeated_option_keeps_every_value_in_order);
    ADD(s, multi_argument_option_takes_following_words);
    ADD(s, queries_of_unknown_or_unset_options);
    ADD(s, positional_arguments_are_kept_in_order);
    ADD(s, double_dash_ends_options);
    ADD(s, stop_at_positional_leaves_the_rest_to_the_program);
    ADD(s, value_may_look_like_a_negative_number);
    ADD(s, mca_pairs_are_collected_in_order);
    ADD(s, unknown_long_option_suggests_the_closest);
    ADD(s, unknown_option_without_a_close_match);
    ADD(s, unknown_short_in_a_group_is_named);
    ADD(s, missing_argument_names_the_option);
    ADD(s, flag_given_a_value_is_an_error);
    ADD(s, reparse_replaces_earlier_results);
    ADD(s, empty_command_line);
    ADD(s, add_refuses_bad_or_duplicate_options);
    ADD(s, usage_lists_options_aligned_and_wrapped);
    ADD(s, usage_lines_fit_the_width);
    ADD(s, overlong_option_puts_description_below);
    return opal_test_run(s);
}
