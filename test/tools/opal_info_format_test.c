/* opal_info's formats: parsable and JSON output against the expected files
 * in test/tools/data/ (after replacing what differs between builds), JSON
 * that parses, escaping, the fact tree, and wrapping to the terminal. */
#include "opal/opal_config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "tools/opal_info/opal_info.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"
#include "test/tools/json_check.h"
#include "test/tools/opal_info_test_support.h"

#define assert_has(text, needle)                                                                   \
    ck_assert_msg(NULL != strstr((text), (needle)), "missing \"%s\" in:\n%s", (needle), (text))

static void assert_json(const char *text)
{
    char *error = NULL;
    bool ok = json_check(text, &error);
    ck_assert_msg(ok, "invalid JSON (%s):\n%s", NULL != error ? error : "?", text);
    free(error);
}

START_TEST(parsable_param_output_matches_the_expected_file)
{
    oi_reset();
    oi_run_t run = oi_run("--param", "mcatest", "all", "--level", "9", "--parsable", NULL);
    ck_assert_int_eq(run.status, 0);
    oi_check_expected(run.out, "param_mcatest.parsable");
    oi_run_free(&run);
}
END_TEST

START_TEST(json_param_output_matches_the_expected_file)
{
    oi_reset();
    oi_run_t run = oi_run("--param", "mcatest", "all", "--level", "9", "--json", NULL);
    ck_assert_int_eq(run.status, 0);
    assert_json(run.out);
    oi_check_expected(run.out, "param_mcatest.json");
    oi_run_free(&run);
}
END_TEST

START_TEST(parsable_selected_output_matches_the_expected_file)
{
    oi_reset();
    oi_run_t run = oi_run("--selected", "--parsable", NULL);
    ck_assert_int_eq(run.status, 0);
    oi_check_expected(run.out, "selected.parsable");
    oi_run_free(&run);
}
END_TEST

START_TEST(json_selected_output_matches_the_expected_file)
{
    oi_reset();
    oi_run_t run = oi_run("--selected", "--json", NULL);
    ck_assert_int_eq(run.status, 0);
    assert_json(run.out);
    oi_check_expected(run.out, "selected.json");
    oi_run_free(&run);
}
END_TEST

START_TEST(every_section_gives_valid_json)
{
    oi_reset();
    oi_plugins_only();
    oi_set("mca_base_component_show_load_errors", "none");
    oi_run_t run = oi_run("--all", "--selected", "--json", NULL);
    ck_assert_int_eq(run.status, 0);
    assert_json(run.out);
    assert_has(run.out, "\"package\": {");
    assert_has(run.out, "\"undefsym\": {");
    assert_has(run.out, "\"level\": 9,");
    assert_has(run.out, "\"deprecated\": true");
    oi_run_free(&run);
}
END_TEST

START_TEST(every_section_gives_one_fact_per_parsable_line)
{
    oi_reset();
    oi_run_t run = oi_run("--all", "--parsable", NULL);
    ck_assert_int_eq(run.status, 0);
    /* Every line is keys and a value: at least two unescaped colons'
     * worth of fields, and nothing else. */
    for (char *line = run.out; '\0' != *line;) {
        char *end = strchr(line, '\n');
        ck_assert_ptr_nonnull(end);
        ck_assert_ptr_nonnull(memchr(line, ':', (size_t) (end - line)));
        line = end + 1;
    }
    assert_has(run.out, "package:name:opal-mca\n");
    assert_has(run.out, "package:version:" OPAL_VERSION "\n");
    assert_has(run.out,
               "mca:mcatest:alltypes:param:mcatest_alltypes_enum:enumerator:value:1:green\n");
    assert_has(run.out, "mca:mcatest:alltypes:param:mcatest_alltypes_flags:enumerator:value:0x4:"
                        "cheap\n");
    assert_has(run.out, "mca:mcatest:alltypes:param:mcatest_alltypes_int:synonym:"
                        "mcatest_alltypes_old_int:deprecated:true\n");
    assert_has(run.out, "mca:mcatest:alltypes:param:mcatest_alltypes_int:level:9\n");
    assert_has(run.out, "mca:mcatest:alltypes:param:mcatest_alltypes_int:help:A variable of "
                        "mcatest/alltypes\n");
    oi_run_free(&run);
}
END_TEST

START_TEST(parsable_escapes_colons_newlines_and_backslashes)
{
    oi_reset();
    oi_run_t run = oi_run("--mca", "mcatest_alltypes_string", "a:b\nc\\d", "--param", "mcatest",
                          "alltypes", "--level", "9", "--parsable", NULL);
    ck_assert_int_eq(run.status, 0);
    assert_has(run.out,
               "mca:mcatest:alltypes:param:mcatest_alltypes_string:value:a\\:b\\nc\\\\d\n");
    oi_run_free(&run);
}
END_TEST

START_TEST(json_escapes_quotes_controls_and_bad_utf8)
{
    oi_reset();
    oi_run_t run = oi_run("--mca", "mcatest_alltypes_string", "say \"hi\"\t\x01\xff\xc3\xa9",
                          "--param", "mcatest", "alltypes", "--level", "9", "--json", NULL);
    ck_assert_int_eq(run.status, 0);
    assert_json(run.out);
    assert_has(run.out, "\"value\": \"say \\\"hi\\\"\\t\\u0001\\ufffd\xc3\xa9\"");
    oi_run_free(&run);
}
END_TEST

static char *capture(void (*write_fn)(FILE *, const char *), const char *text)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    write_fn(f, text);
    fclose(f);
    return buf;
}

START_TEST(parsable_escape_covers_every_special_byte)
{
    char *s = capture(opal_info_escape_parsable, "a:b\\c\nd\re\tf\x01g\x7fh");
    ck_assert_str_eq(s, "a\\:b\\\\c\\nd\\re\\tf\\x01g\\x7Fh");
    free(s);
    s = capture(opal_info_escape_parsable, "");
    ck_assert_str_eq(s, "");
    free(s);
}
END_TEST

START_TEST(json_escape_keeps_valid_utf8_and_replaces_invalid)
{
    /* é, €, an emoji; then an overlong '/', a lone continuation byte, a
     * surrogate, and a truncated sequence at the end. */
    char *s = capture(opal_info_escape_json, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    ck_assert_str_eq(s, "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
    free(s);
    s = capture(opal_info_escape_json, "\xc0\xaf|\x80|\xed\xa0\x80|\xe2\x82");
    ck_assert_str_eq(s, "\"\\ufffd\\ufffd|\\ufffd|\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\"");
    free(s);
    s = capture(opal_info_escape_json, "\"\\\b\f\n\r\t\x1f");
    ck_assert_str_eq(s, "\"\\\"\\\\\\b\\f\\n\\r\\t\\u001f\"");
    free(s);
}
END_TEST

START_TEST(tree_gathers_facts_by_path_in_first_put_order)
{
    opal_info_node_t *root = opal_info_tree_new();
    ck_assert_ptr_nonnull(root);
    const char *a[] = {"mca", "fw", "x", "version"};
    const char *b[] = {"mca", "fw", "y", "version"};
    const char *c[] = {"mca", "fw", "x", "param"};
    ck_assert_int_eq(opal_info_tree_put(root, OPAL_INFO_STRING, "1", a, 4), OPAL_SUCCESS);
    ck_assert_int_eq(opal_info_tree_put(root, OPAL_INFO_STRING, "2", b, 4), OPAL_SUCCESS);
    ck_assert_int_eq(opal_info_tree_put(root, OPAL_INFO_INT, "3", c, 4), OPAL_SUCCESS);
    /* The same path again replaces the value. */
    ck_assert_int_eq(opal_info_tree_put(root, OPAL_INFO_STRING, "1b", a, 4), OPAL_SUCCESS);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    opal_info_tree_print_parsable(f, root);
    fclose(f);
    ck_assert_str_eq(buf, "mca:fw:x:version:1b\nmca:fw:x:param:3\nmca:fw:y:version:2\n");
    free(buf);
    f = open_memstream(&buf, &len);
    opal_info_tree_print_json(f, root);
    fclose(f);
    ck_assert_str_eq(buf, "{\n  \"mca\": {\n    \"fw\": {\n      \"x\": {\n        \"version\": "
                          "\"1b\",\n        \"param\": 3\n      },\n      \"y\": {\n        "
                          "\"version\": \"2\"\n      }\n    }\n  }\n}\n");
    assert_json(buf);
    free(buf);
    opal_info_tree_free(root);
}
END_TEST

START_TEST(tree_refuses_a_leaf_with_children_and_a_node_with_a_value)
{
    opal_info_node_t *root = opal_info_tree_new();
    const char *leaf[] = {"a", "b"};
    const char *deeper[] = {"a", "b", "c"};
    const char *shorter[] = {"a"};
    ck_assert_int_eq(opal_info_tree_put(root, OPAL_INFO_STRING, "v", leaf, 2), OPAL_SUCCESS);
    ck_assert_int_eq(opal_info_tree_put(root, OPAL_INFO_STRING, "v", deeper, 3),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_info_tree_put(root, OPAL_INFO_STRING, "v", shorter, 1),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_info_tree_put(root, OPAL_INFO_STRING, "v", leaf, 0), OPAL_ERR_BAD_PARAM);
    opal_info_tree_free(root);
}
END_TEST

START_TEST(empty_tree_is_an_empty_json_object)
{
    opal_info_node_t *root = opal_info_tree_new();
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    opal_info_tree_print_json(f, root);
    fclose(f);
    ck_assert_str_eq(buf, "{}\n");
    free(buf);
    opal_info_tree_free(root);
}
END_TEST

START_TEST(wrap_breaks_at_spaces_within_the_width)
{
    char *w = opal_info_wrap("the quick brown fox jumps over the lazy dog", 15);
    ck_assert_str_eq(w, "the quick brown\nfox jumps over\nthe lazy dog");
    free(w);
}
END_TEST

START_TEST(wrap_keeps_a_long_word_whole)
{
    char *w = opal_info_wrap("a /a/very/long/path/that/does/not/fit b", 10);
    ck_assert_str_eq(w, "a\n/a/very/long/path/that/does/not/fit\nb");
    free(w);
}
END_TEST

START_TEST(wrap_keeps_newlines_and_leading_blanks)
{
    char *w = opal_info_wrap("one two three\n  indented four five\n\nend", 12);
    ck_assert_str_eq(w, "one two\nthree\n  indented\nfour five\n\nend");
    free(w);
}
END_TEST

START_TEST(wrap_of_zero_columns_or_short_text_changes_nothing)
{
    const char *text = "a line that is long enough to wrap somewhere";
    char *w = opal_info_wrap(text, 0);
    ck_assert_str_eq(w, text);
    free(w);
    w = opal_info_wrap("fits", 4);
    ck_assert_str_eq(w, "fits");
    free(w);
    w = opal_info_wrap("", 10);
    ck_assert_str_eq(w, "");
    free(w);
}
END_TEST

START_TEST(pretty_lines_wrap_under_the_text_column)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    opal_info_t info = {.out = f, .width = OPAL_INFO_LABEL_WIDTH + 2 + 20};
    opal_info_pretty(&info, "Label", "alpha beta gamma delta epsilon");
    opal_info_pretty(&info, "", "more");
    fclose(f);
    ck_assert_str_eq(buf, "                   Label: alpha beta gamma\n"
                          "                          delta epsilon\n"
                          "                          more\n");
    free(buf);
}
END_TEST

START_TEST(terminal_width_is_zero_unless_stdout_is_a_terminal)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    setenv("COLUMNS", "120", 1);
    ck_assert_uint_eq(opal_info_terminal_width(fds[1]), 0);
    unsetenv("COLUMNS");
    close(fds[0]);
    close(fds[1]);
}
END_TEST

START_TEST(terminal_width_comes_from_columns_or_the_terminal)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0) {
        /* No pseudo-terminals here (some containers): nothing to test. */
        return;
    }
    ck_assert_int_eq(grantpt(master), 0);
    ck_assert_int_eq(unlockpt(master), 0);
    int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
    ck_assert_int_ge(slave, 0);
    struct winsize size = {.ws_row = 24, .ws_col = 57};
    ck_assert_int_eq(ioctl(slave, TIOCSWINSZ, &size), 0);
    unsetenv("COLUMNS");
    ck_assert_uint_eq(opal_info_terminal_width(slave), 57);
    setenv("COLUMNS", "133", 1);
    ck_assert_uint_eq(opal_info_terminal_width(slave), 133);
    /* Nonsense in COLUMNS is ignored. */
    setenv("COLUMNS", "wide", 1);
    ck_assert_uint_eq(opal_info_terminal_width(slave), 57);
    unsetenv("COLUMNS");
    close(slave);
    close(master);
}
END_TEST

START_TEST(json_checker_refuses_what_is_not_json)
{
    const char *bad[] = {
        "",         "{",  "{\"a\":1,}", "{\"a\":1 \"b\":2}", "{\"a\":1,\"a\":2}", "[1,]",
        "\"\x01\"", "01", "{} x",       "\"\\x\"",           "\"\xff\"",          "tru"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        char *error = NULL;
        ck_assert_msg(!json_check(bad[i], &error), "accepted: %s", bad[i]);
        ck_assert_ptr_nonnull(error);
        free(error);
    }
    ck_assert(json_check(" {\"a\": [1, -2.5e3, true, null, \"\\u00e9\"], \"b\": {}} ", NULL));
}
END_TEST

static Suite *format_suite(void)
{
    Suite *s = suite_create("opal_info_format");
    OPAL_TEST_ADD(s, parsable_param_output_matches_the_expected_file);
    OPAL_TEST_ADD(s, json_param_output_matches_the_expected_file);
    OPAL_TEST_ADD(s, parsable_selected_output_matches_the_expected_file);
    OPAL_TEST_ADD(s, json_selected_output_matches_the_expected_file);
    OPAL_TEST_ADD(s, every_section_gives_valid_json);
    OPAL_TEST_ADD(s, every_section_gives_one_fact_per_parsable_line);
    OPAL_TEST_ADD(s, parsable_escapes_colons_newlines_and_backslashes);
    OPAL_TEST_ADD(s, json_escapes_quotes_controls_and_bad_utf8);
    OPAL_TEST_ADD(s, parsable_escape_covers_every_special_byte);
    OPAL_TEST_ADD(s, json_escape_keeps_valid_utf8_and_replaces_invalid);
    OPAL_TEST_ADD(s, tree_gathers_facts_by_path_in_first_put_order);
    OPAL_TEST_ADD(s, tree_refuses_a_leaf_with_children_and_a_node_with_a_value);
    OPAL_TEST_ADD(s, empty_tree_is_an_empty_json_object);
    OPAL_TEST_ADD(s, wrap_breaks_at_spaces_within_the_width);
    OPAL_TEST_ADD(s, wrap_keeps_a_long_word_whole);
    OPAL_TEST_ADD(s, wrap_keeps_newlines_and_leading_blanks);
    OPAL_TEST_ADD(s, wrap_of_zero_columns_or_short_text_changes_nothing);
    OPAL_TEST_ADD(s, pretty_lines_wrap_under_the_text_column);
    OPAL_TEST_ADD(s, terminal_width_is_zero_unless_stdout_is_a_terminal);
    OPAL_TEST_ADD(s, terminal_width_comes_from_columns_or_the_terminal);
    OPAL_TEST_ADD(s, json_checker_refuses_what_is_not_json);
    return s;
}

int main(void)
{
    return opal_test_run(format_suite());
}
