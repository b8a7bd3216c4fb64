/* show_help: topic lookup along the help path, argument substitution, the
 * supported conversions, once-only display and missing files and topics. */
#include "opal/opal_config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/runtime/opal_build_tree.h"
#include "opal/util/opal_argv.h"
#include "opal/util/opal_show_help.h"
#include "test/support/opal_test.h"

#define HELP "help-test.txt"

static char data_dir[512];
static char alt_dir[512];
/* OPAL_SHOW_HELP_PATH as make check set it (where help-opal-util.txt is). */
static char *build_help_path;

static void set_help_path(const char *path)
{
    ck_assert_int_eq(setenv("OPAL_SHOW_HELP_PATH", path, 1), 0);
}

static void use_data_dir(void)
{
    set_help_path(data_dir);
}

static void restore_help_path(void)
{
    if (NULL != build_help_path) {
        set_help_path(build_help_path);
    } else {
        unsetenv("OPAL_SHOW_HELP_PATH");
    }
}

/* Help output goes to a file stream while a test runs. */
static char log_path[300];
static int log_stream = -1;

static void capture_help(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(log_path, sizeof(log_path), "%s/opal_show_help_test.XXXXXX",
             NULL != base ? base : "/tmp");
    int fd = mkstemp(log_path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    opal_output_stream_t lds = {.lds_file_name = log_path};
    log_stream = opal_output_open(&lds);
    ck_assert_int_gt(log_stream, 0);
    opal_show_help_set_output(log_stream);
}

/* Ends the capture and returns what was shown (malloc'd). Also forgets the
 * shown topics, so each test starts afresh. */
static char *captured_help(void)
{
    opal_show_help_finalize();
    opal_output_close(log_stream);
    FILE *fp = fopen(log_path, "r");
    ck_assert_ptr_nonnull(fp);
    char *buf = NULL;
    size_t cap = 0;
    if (getdelim(&buf, &cap, '\0', fp) < 0) {
        free(buf);
        buf = strdup("");
    }
    fclose(fp);
    unlink(log_path);
    restore_help_path();
    return buf;
}

static size_t count_of(const char *haystack, const char *needle)
{
    size_t n = 0;
    for (const char *p = haystack; NULL != (p = strstr(p, needle)); p += strlen(needle)) {
        ++n;
    }
    return n;
}

START_TEST(topic_text_is_returned)
{
    use_data_dir();
    char *s = opal_show_help_string(HELP, "plain", false);
    ck_assert_str_eq(s, "Just text.\n");
    free(s);
    s = opal_show_help_string(HELP, "last", false);
    ck_assert_str_eq(s, "The last topic.\n");
    free(s);
    restore_help_path();
}
END_TEST

START_TEST(arguments_are_substituted)
{
    use_data_dir();
    char *s = opal_show_help_string(HELP, "args", false, "Ann", 3, 99.5);
    ck_assert_str_eq(s, "Hello Ann, you have 3 items (99.50%).\n");
    free(s);
    restore_help_path();
}
END_TEST

START_TEST(comments_and_outer_blank_lines_are_dropped)
{
    use_data_dir();
    char *s = opal_show_help_string(HELP, "multi", false);
    ck_assert_str_eq(s, "line one\n\nline two\n");
    free(s);
    restore_help_path();
}
END_TEST

START_TEST(error_header_frames_the_text)
{
    use_data_dir();
    char *s = opal_show_help_string(HELP, "plain", true);
    const char *sep =
        "--------------------------------------------------------------------------\n";
    char expected[256];
    snprintf(expected, sizeof(expected), "%sJust text.\n%s", sep, sep);
    ck_assert_str_eq(s, expected);
    free(s);
    restore_help_path();
}
END_TEST

START_TEST(every_supported_conversion_is_formatted)
{
    use_data_dir();
    char *s = opal_show_help_string(HELP, "conversions", false, -7, 8, 9, 42, 10u, 255u, 255u, 255u,
                                    8u, 'Z', -1L, 2UL, -3LL, 4ULL, (size_t) 5, (ssize_t) -6,
                                    (intmax_t) 7, (ptrdiff_t) -8, (short) -9, (unsigned char) 200,
                                    "ab", "cd", "efgh", 3.14159, 1.5, 0.25, (long double) 2.25);
    char expected[512];
    snprintf(expected, sizeof(expected),
             "int=%d/%i/%+d/%05d uns=%u hex=%x/%X/%#x oct=%o char=%c\n"
             "long=%ld/%lu llong=%lld/%llu size=%zu/%zd max=%jd diff=%td short=%hd/%hhu\n"
             "str=[%-6s][%6s][%.2s] dbl=%.3f/%e/%g/%5.1Lf\n",
             -7, 8, 9, 42, 10u, 255u, 255u, 255u, 8u, 'Z', -1L, 2UL, -3LL, 4ULL, (size_t) 5,
             (ssize_t) -6, (intmax_t) 7, (ptrdiff_t) -8, (short) -9, (unsigned char) 200, "ab",
             "cd", "efgh", 3.14159, 1.5, 0.25, (long double) 2.25);
    ck_assert_str_eq(s, expected);
    free(s);
    restore_help_path();
}
END_TEST

START_TEST(unsupported_conversions_are_copied_literally)
{
    use_data_dir();
    char *s = opal_show_help_string(HELP, "literal", false);
    ck_assert_str_eq(s, "%n %*d %q %ls %12345d 50%, off\ndone with 100%\n");
    free(s);
    restore_help_path();
}
END_TEST

START_TEST(null_string_argument_prints_null)
{
    use_data_dir();
    char *s = opal_show_help_string(HELP, "null", false, (const char *) NULL);
    ck_assert_str_eq(s, "value=(null)\n");
    free(s);
    restore_help_path();
}
END_TEST

START_TEST(topic_is_shown_once)
{
    use_data_dir();
    capture_help();
    ck_assert_int_eq(opal_show_help(HELP, "args", false, "Bob", 1, 1.0), OPAL_SUCCESS);
    ck_assert_int_eq(opal_show_help(HELP, "args", false, "Eve", 2, 2.0), OPAL_SUCCESS);
    ck_assert_int_eq(opal_show_help(HELP, "plain", true), OPAL_SUCCESS);
    char *text = captured_help();
    ck_assert_uint_eq(count_of(text, "Hello"), 1);
    ck_assert_ptr_nonnull(strstr(text, "Hello Bob"));
    ck_assert_uint_eq(count_of(text, "Just text."), 1);
    free(text);
}
END_TEST

START_TEST(finalize_forgets_shown_topics)
{
    use_data_dir();
    capture_help();
    ck_assert_int_eq(opal_show_help(HELP, "plain", false), OPAL_SUCCESS);
    opal_show_help_finalize();
    ck_assert_int_eq(opal_show_help_init(), OPAL_SUCCESS);
    /* finalize also sent help back to stream 0. */
    opal_show_help_set_output(log_stream);
    ck_assert_int_eq(opal_show_help(HELP, "plain", false), OPAL_SUCCESS);
    char *text = captured_help();
    ck_assert_str_eq(text, "Just text.\nJust text.\n");
    free(text);
}
END_TEST

START_TEST(missing_topic_names_topic_and_file)
{
    use_data_dir();
    capture_help();
    ck_assert_int_eq(opal_show_help(HELP, "no-such-topic", true), OPAL_ERR_NOT_FOUND);
    /* A failure is not remembered as shown. */
    ck_assert_int_eq(opal_show_help(HELP, "no-such-topic", true), OPAL_ERR_NOT_FOUND);
    char *text = captured_help();
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", data_dir, HELP);
    ck_assert_uint_eq(count_of(text, "[no-such-topic]"), 2);
    ck_assert_msg(NULL != strstr(text, path), "file not named: %s", text);
    free(text);
}
END_TEST

START_TEST(missing_file_names_file_and_search_path)
{
    set_help_path("/nonexistent/one::/nonexistent/two");
    capture_help();
    ck_assert_int_eq(opal_show_help("help-missing.txt", "topic", false), OPAL_ERR_NOT_FOUND);
    char *text = captured_help();
    ck_assert_ptr_nonnull(strstr(text, "\"help-missing.txt\""));
    ck_assert_ptr_nonnull(strstr(text, "[topic]"));
    /* Then this build tree's source directories (the test runs a
     * build-tree libopal; an installed one would name OPAL_PKGDATADIR). */
    ck_assert(opal_build_tree_in_use());
    char **tree = opal_argv_split(opal_build_tree_help_dirs(), ' ');
    ck_assert_ptr_nonnull(tree);
    ck_assert_ptr_nonnull(tree[0]);
    char expect[1200];
    snprintf(expect, sizeof(expect), "/nonexistent/one:/nonexistent/two:%s", tree[0]);
    ck_assert_msg(NULL != strstr(text, expect), "search path not named: %s", text);
    ck_assert_ptr_null(strstr(text, OPAL_PKGDATADIR));
    opal_argv_free(tree);
    free(text);
}
END_TEST

START_TEST(first_file_along_the_path_wins)
{
    char path[1100];
    snprintf(path, sizeof(path), "%s:%s", alt_dir, data_dir);
    set_help_path(path);
    char *s = opal_show_help_string(HELP, "plain", false);
    ck_assert_str_eq(s, "Alternative text.\n");
    free(s);
    snprintf(path, sizeof(path), "/nonexistent::%s:%s", data_dir, alt_dir);
    set_help_path(path);
    s = opal_show_help_string(HELP, "plain", false);
    ck_assert_str_eq(s, "Just text.\n");
    free(s);
    restore_help_path();
}
END_TEST

START_TEST(file_name_with_slash_is_opened_directly)
{
    set_help_path("/nonexistent");
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", alt_dir, HELP);
    char *s = opal_show_help_string(path, "plain", false);
    ck_assert_str_eq(s, "Alternative text.\n");
    free(s);
    restore_help_path();
}
END_TEST

START_TEST(missing_topic_string_explains)
{
    use_data_dir();
    char *s = opal_show_help_string(HELP, "absent", false);
    ck_assert_ptr_nonnull(strstr(s, "[absent]"));
    ck_assert_ptr_nonnull(strstr(s, "has no such topic"));
    free(s);
    restore_help_path();
}
END_TEST

START_TEST(null_arguments_are_refused)
{
    ck_assert_int_eq(opal_show_help(NULL, "x", false), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_show_help(HELP, NULL, false), OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_null(opal_show_help_string(NULL, "x", false));
}
END_TEST

START_TEST(util_help_file_is_found_through_the_build_path)
{
    /* make check puts opal/util on OPAL_SHOW_HELP_PATH. */
    restore_help_path();
    char *s = opal_show_help_string("help-opal-util.txt", "output:file-open-failed", false,
                                    "/x/y.log", "No such file or directory");
    ck_assert_msg(NULL != strstr(s, "File:  /x/y.log"), "unexpected text: %s", s);
    free(s);
}
END_TEST

int main(void)
{
    opal_output_init();
    opal_show_help_init();
    snprintf(data_dir, sizeof(data_dir), "%s/util/data", opal_test_srcdir());
    snprintf(alt_dir, sizeof(alt_dir), "%s/util/data/alt", opal_test_srcdir());
    const char *env = getenv("OPAL_SHOW_HELP_PATH");
    build_help_path = NULL != env ? strdup(env) : NULL;

    Suite *s = suite_create("opal_show_help");
    OPAL_TEST_ADD(s, topic_text_is_returned);
    OPAL_TEST_ADD(s, arguments_are_substituted);
    OPAL_TEST_ADD(s, comments_and_outer_blank_lines_are_dropped);
    OPAL_TEST_ADD(s, error_header_frames_the_text);
    OPAL_TEST_ADD(s, every_supported_conversion_is_formatted);
    OPAL_TEST_ADD(s, unsupported_conversions_are_copied_literally);
    OPAL_TEST_ADD(s, null_string_argument_prints_null);
    OPAL_TEST_ADD(s, topic_is_shown_once);
    OPAL_TEST_ADD(s, finalize_forgets_shown_topics);
    OPAL_TEST_ADD(s, missing_topic_names_topic_and_file);
    OPAL_TEST_ADD(s, missing_file_names_file_and_search_path);
    OPAL_TEST_ADD(s, first_file_along_the_path_wins);
    OPAL_TEST_ADD(s, file_name_with_slash_is_opened_directly);
    OPAL_TEST_ADD(s, missing_topic_string_explains);
    OPAL_TEST_ADD(s, null_arguments_are_refused);
    OPAL_TEST_ADD(s, util_help_file_is_found_through_the_build_path);
    int rc = opal_test_run(s);

    opal_show_help_finalize();
    opal_output_finalize();
    free(build_help_path);
    return rc;
}
