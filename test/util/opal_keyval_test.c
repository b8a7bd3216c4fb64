/* key = value files: every accepted form, and every kind of error reported
 * with its source:line while parsing goes on. */
#include "opal/opal_config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/util/opal_error.h"
#include "opal/util/opal_keyval.h"
#include "opal/util/opal_output.h"
#include "test/support/opal_test.h"

#define MAX_ITEMS 32

/* What a parse delivered. */
typedef struct {
    int npairs;
    char *keys[MAX_ITEMS];
    char *values[MAX_ITEMS];
    int pair_lines[MAX_ITEMS];
    int nerrors;
    opal_keyval_error_kind_t kinds[MAX_ITEMS];
    int error_lines[MAX_ITEMS];
    char *messages[MAX_ITEMS];
    int stop_after; /* pair callback fails after this many; 0: never */
} result_t;

static int on_pair(const char *key, const char *value, const char *source, int lineno, void *ctx)
{
    result_t *r = ctx;
    (void) source;
    ck_assert_int_lt(r->npairs, MAX_ITEMS);
    r->keys[r->npairs] = strdup(key);
    r->values[r->npairs] = strdup(value);
    r->pair_lines[r->npairs] = lineno;
    ++r->npairs;
    return (0 != r->stop_after && r->npairs == r->stop_after) ? OPAL_ERR_BAD_VALUE : OPAL_SUCCESS;
}

static void on_error(const opal_keyval_error_t *error, void *ctx)
{
    result_t *r = ctx;
    ck_assert_int_lt(r->nerrors, MAX_ITEMS);
    r->kinds[r->nerrors] = error->kind;
    r->error_lines[r->nerrors] = error->lineno;
    r->messages[r->nerrors] = strdup(error->message);
    ++r->nerrors;
}

static void result_free(result_t *r)
{
    for (int i = 0; i < r->npairs; ++i) {
        free(r->keys[i]);
        free(r->values[i]);
    }
    for (int i = 0; i < r->nerrors; ++i) {
        free(r->messages[i]);
    }
}

static int parse_string(const char *text, result_t *r)
{
    memset(r, 0, sizeof(*r));
    return opal_keyval_parse_string(text, "test.conf", on_pair, on_error, r);
}

/* Asserts the string text is refused as one error of kind, on line 1, with
 * a message that starts with "test.conf:1: " and contains detail. */
static void assert_one_error(const char *text, opal_keyval_error_kind_t kind, const char *detail)
{
    result_t r;
    ck_assert_int_eq(parse_string(text, &r), OPAL_ERR_PARSE);
    ck_assert_int_eq(r.npairs, 0);
    ck_assert_int_eq(r.nerrors, 1);
    ck_assert_int_eq(r.kinds[0], kind);
    ck_assert_int_eq(r.error_lines[0], 1);
    ck_assert_msg(0 == strncmp(r.messages[0], "test.conf:1: ", 13), "message: %s", r.messages[0]);
    ck_assert_msg(NULL != strstr(r.messages[0], detail), "\"%s\" lacks \"%s\"", r.messages[0],
                  detail);
    result_free(&r);
}

static const char *data_file(const char *name)
{
    static char path[512];
    snprintf(path, sizeof(path), "%s/util/data/%s", opal_test_srcdir(), name);
    return path;
}

START_TEST(good_file_gives_every_pair_in_order)
{
    static const struct {
        const char *key, *value;
        int line;
    } expected[] = {
        {"btl", "self,sm", 4},
        {"btl_sm_eager_limit", "4096", 5},
        {"spaced_key", "tabbed value", 6},
        {"with.dot-and_dash", "1", 7},
        {"hash_in_value", "a#b", 8},
        {"dq", "  a # kept  ", 9},
        {"sq", "C:\\dir # kept", 10},
        {"escapes", "say \"hi\" \\o/ \\n", 11},
        {"empty", "", 12},
        {"empty_quoted", "", 13},
        {"quote_inside", "it's \"fine\"", 14},
    };
    size_t n = sizeof(expected) / sizeof(expected[0]);
    result_t r = {0};
    ck_assert_int_eq(opal_keyval_parse(data_file("keyval-good.conf"), on_pair, on_error, &r),
                     OPAL_SUCCESS);
    ck_assert_int_eq(r.nerrors, 0);
    ck_assert_int_eq(r.npairs, (int) n);
    for (size_t i = 0; i < n; ++i) {
        ck_assert_str_eq(r.keys[i], expected[i].key);
        ck_assert_str_eq(r.values[i], expected[i].value);
        ck_assert_int_eq(r.pair_lines[i], expected[i].line);
    }
    result_free(&r);
}
END_TEST

START_TEST(bad_file_reports_each_error_with_its_line)
{
    static const struct {
        opal_keyval_error_kind_t kind;
        int line;
    } expected[] = {
        {OPAL_KEYVAL_ERR_MISSING_EQUALS, 4},
        {OPAL_KEYVAL_ERR_EMPTY_KEY, 5},
        {OPAL_KEYVAL_ERR_BAD_KEY, 6},
        {OPAL_KEYVAL_ERR_BAD_KEY, 7},
        {OPAL_KEYVAL_ERR_UNTERMINATED_QUOTE, 8},
        {OPAL_KEYVAL_ERR_UNTERMINATED_QUOTE, 9},
        {OPAL_KEYVAL_ERR_TRAILING_TEXT, 10},
    };
    size_t n = sizeof(expected) / sizeof(expected[0]);
    const char *path = data_file("keyval-errors.conf");
    result_t r = {0};
    ck_assert_int_eq(opal_keyval_parse(path, on_pair, on_error, &r), OPAL_ERR_PARSE);
    ck_assert_int_eq(r.nerrors, (int) n);
    for (size_t i = 0; i < n; ++i) {
        char where[600];
        snprintf(where, sizeof(where), "%s:%d: ", path, expected[i].line);
        ck_assert_int_eq(r.kinds[i], expected[i].kind);
        ck_assert_int_eq(r.error_lines[i], expected[i].line);
        ck_assert_msg(0 == strncmp(r.messages[i], where, strlen(where)), "message: %s",
                      r.messages[i]);
    }
    /* The good lines around the bad ones still arrive. */
    ck_assert_int_eq(r.npairs, 2);
    ck_assert_str_eq(r.keys[0], "good_first");
    ck_assert_str_eq(r.keys[1], "good_last");
    ck_assert_int_eq(r.pair_lines[1], 11);
    result_free(&r);
}
END_TEST

START_TEST(comments_and_blank_lines_are_skipped)
{
    result_t r;
    ck_assert_int_eq(parse_string("# only a comment\n\n   \n\t# indented comment\na = 1 # c\n", &r),
                     OPAL_SUCCESS);
    ck_assert_int_eq(r.npairs, 1);
    ck_assert_str_eq(r.keys[0], "a");
    ck_assert_str_eq(r.values[0], "1");
    ck_assert_int_eq(r.pair_lines[0], 5);
    result_free(&r);
}
END_TEST

START_TEST(hash_starts_a_comment_only_after_whitespace)
{
    result_t r;
    ck_assert_int_eq(parse_string("a=#x\nb = #x\nc = v#w #z\n", &r), OPAL_SUCCESS);
    ck_assert_int_eq(r.npairs, 3);
    ck_assert_str_eq(r.values[0], "#x");
    ck_assert_str_eq(r.values[1], "");
    ck_assert_str_eq(r.values[2], "v#w");
    result_free(&r);
}
END_TEST

START_TEST(double_quotes_keep_spaces_hash_and_escapes)
{
    result_t r;
    ck_assert_int_eq(parse_string("k = \" x # y \\\"q\\\" \\\\ \\t \"#c\n", &r), OPAL_SUCCESS);
    ck_assert_int_eq(r.npairs, 1);
    ck_assert_str_eq(r.values[0], " x # y \"q\" \\ \\t ");
    result_free(&r);
}
END_TEST

START_TEST(single_quotes_have_no_escapes)
{
    result_t r;
    ck_assert_int_eq(parse_string("k = 'a \\\" # b'\n", &r), OPAL_SUCCESS);
    ck_assert_str_eq(r.values[0], "a \\\" # b");
    result_free(&r);
}
END_TEST

START_TEST(crlf_and_missing_final_newline_are_accepted)
{
    result_t r;
    ck_assert_int_eq(parse_string("a = 1\r\nb = \"2\"\r\nc = 3", &r), OPAL_SUCCESS);
    ck_assert_int_eq(r.npairs, 3);
    ck_assert_str_eq(r.values[0], "1");
    ck_assert_str_eq(r.values[1], "2");
    ck_assert_str_eq(r.values[2], "3");
    ck_assert_int_eq(r.pair_lines[2], 3);
    result_free(&r);
}
END_TEST

START_TEST(empty_input_gives_nothing)
{
    result_t r;
    ck_assert_int_eq(parse_string("", &r), OPAL_SUCCESS);
    ck_assert_int_eq(r.npairs + r.nerrors, 0);
}
END_TEST

START_TEST(missing_equals_is_reported)
{
    assert_one_error("just_a_key # comment = not here\n", OPAL_KEYVAL_ERR_MISSING_EQUALS,
                     "missing '=' after the key in \"just_a_key\"");
}
END_TEST

START_TEST(empty_key_is_reported)
{
    assert_one_error("   = value\n", OPAL_KEYVAL_ERR_EMPTY_KEY, "empty key");
}
END_TEST

START_TEST(bad_key_character_is_reported)
{
    assert_one_error("my key = 1\n", OPAL_KEYVAL_ERR_BAD_KEY, "invalid character ' ' in key");
    assert_one_error("k\x01y = 1\n", OPAL_KEYVAL_ERR_BAD_KEY, "'\\x01' in key \"k\\x01y\"");
}
END_TEST

START_TEST(unterminated_quotes_are_reported)
{
    assert_one_error("k = \"open\n", OPAL_KEYVAL_ERR_UNTERMINATED_QUOTE,
                     "unterminated double quote in the value of \"k\"");
    assert_one_error("k = 'open\n", OPAL_KEYVAL_ERR_UNTERMINATED_QUOTE, "unterminated single");
    assert_one_error("k = \"ends with escape\\\"\n", OPAL_KEYVAL_ERR_UNTERMINATED_QUOTE,
                     "unterminated double");
}
END_TEST

START_TEST(text_after_closing_quote_is_reported)
{
    assert_one_error("k = \"a\" b  \n", OPAL_KEYVAL_ERR_TRAILING_TEXT,
                     "unexpected text \"b\" after the closing quote");
}
END_TEST

START_TEST(nul_byte_is_reported)
{
    const char *base = getenv("TMPDIR");
    char path[300];
    snprintf(path, sizeof(path), "%s/opal_keyval_test.XXXXXX", NULL != base ? base : "/tmp");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    static const char content[] = "a = 1\nb = x\0y\nc = 3\n";
    ck_assert_int_eq(write(fd, content, sizeof(content) - 1), (ssize_t) sizeof(content) - 1);
    close(fd);
    result_t r = {0};
    ck_assert_int_eq(opal_keyval_parse(path, on_pair, on_error, &r), OPAL_ERR_PARSE);
    unlink(path);
    ck_assert_int_eq(r.nerrors, 1);
    ck_assert_int_eq(r.kinds[0], OPAL_KEYVAL_ERR_NUL_BYTE);
    ck_assert_int_eq(r.error_lines[0], 2);
    ck_assert_int_eq(r.npairs, 2);
    ck_assert_str_eq(r.keys[1], "c");
    result_free(&r);
}
END_TEST

START_TEST(missing_file_is_reported_by_name)
{
    const char *path = "/nonexistent/dir/params.conf";
    result_t r = {0};
    ck_assert_int_eq(opal_keyval_parse(path, on_pair, on_error, &r), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(r.nerrors, 1);
    ck_assert_int_eq(r.kinds[0], OPAL_KEYVAL_ERR_UNREADABLE);
    ck_assert_int_eq(r.error_lines[0], 0);
    ck_assert_str_eq(r.messages[0], "/nonexistent/dir/params.conf: cannot read the file: No such "
                                    "file or directory");
    result_free(&r);
}
END_TEST

START_TEST(directory_is_unreadable)
{
    result_t r = {0};
    int rc = opal_keyval_parse(opal_test_srcdir(), on_pair, on_error, &r);
    ck_assert_int_eq(rc, OPAL_ERR_IN_ERRNO);
    ck_assert_int_eq(r.nerrors, 1);
    ck_assert_int_eq(r.kinds[0], OPAL_KEYVAL_ERR_UNREADABLE);
    result_free(&r);
}
END_TEST

START_TEST(pair_callback_error_stops_parsing)
{
    result_t r = {.stop_after = 2};
    int rc = opal_keyval_parse_string("a=1\nb=2\nc=3\nbad line\n", "s", on_pair, on_error, &r);
    ck_assert_int_eq(rc, OPAL_ERR_BAD_VALUE);
    ck_assert_int_eq(r.npairs, 2);
    ck_assert_int_eq(r.nerrors, 0);
    result_free(&r);
}
END_TEST

START_TEST(errors_go_to_stream_zero_without_a_callback)
{
    char path[300];
    const char *base = getenv("TMPDIR");
    snprintf(path, sizeof(path), "%s/opal_keyval_test.XXXXXX", NULL != base ? base : "/tmp");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    result_t r = {0};
    int rc = opal_keyval_parse_string("oops\n", "src", on_pair, NULL, &r);
    dup2(saved, STDERR_FILENO);
    close(saved);
    char buf[256] = {0};
    ck_assert_int_gt(pread(fd, buf, sizeof(buf) - 1, 0), 0);
    close(fd);
    unlink(path);
    ck_assert_int_eq(rc, OPAL_ERR_PARSE);
    ck_assert_str_eq(buf, "src:1: missing '=' after the key in \"oops\"\n");
}
END_TEST

START_TEST(bad_arguments_are_refused)
{
    result_t r = {0};
    ck_assert_int_eq(opal_keyval_parse(NULL, on_pair, on_error, &r), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_keyval_parse("x", NULL, on_error, &r), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_keyval_parse_string("a=1", NULL, on_pair, on_error, &r),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(r.npairs + r.nerrors, 0);
}
END_TEST

START_TEST(every_error_kind_has_a_description)
{
    ck_assert_str_eq(opal_keyval_error_what(OPAL_KEYVAL_ERR_UNTERMINATED_QUOTE),
                     "unterminated quote");
    ck_assert_str_eq(opal_keyval_error_what(OPAL_KEYVAL_ERR_NUL_BYTE), "NUL byte in the line");
    ck_assert_str_eq(opal_keyval_error_what((opal_keyval_error_kind_t) 999), "unknown");
}
END_TEST

int main(void)
{
    opal_output_init();
    Suite *s = suite_create("opal_keyval");
    OPAL_TEST_ADD(s, good_file_gives_every_pair_in_order);
    OPAL_TEST_ADD(s, bad_file_reports_each_error_with_its_line);
    OPAL_TEST_ADD(s, comments_and_blank_lines_are_skipped);
    OPAL_TEST_ADD(s, hash_starts_a_comment_only_after_whitespace);
    OPAL_TEST_ADD(s, double_quotes_keep_spaces_hash_and_escapes);
    OPAL_TEST_ADD(s, single_quotes_have_no_escapes);
    OPAL_TEST_ADD(s, crlf_and_missing_final_newline_are_accepted);
    OPAL_TEST_ADD(s, empty_input_gives_nothing);
    OPAL_TEST_ADD(s, missing_equals_is_reported);
    OPAL_TEST_ADD(s, empty_key_is_reported);
    OPAL_TEST_ADD(s, bad_key_character_is_reported);
    OPAL_TEST_ADD(s, unterminated_quotes_are_reported);
    OPAL_TEST_ADD(s, text_after_closing_quote_is_reported);
    OPAL_TEST_ADD(s, nul_byte_is_reported);
    OPAL_TEST_ADD(s, missing_file_is_reported_by_name);
    OPAL_TEST_ADD(s, directory_is_unreadable);
    OPAL_TEST_ADD(s, pair_callback_error_stops_parsing);
    OPAL_TEST_ADD(s, errors_go_to_stream_zero_without_a_callback);
    OPAL_TEST_ADD(s, bad_arguments_are_refused);
    OPAL_TEST_ADD(s, every_error_kind_has_a_description);
    int rc = opal_test_run(s);
    opal_output_finalize();
    return rc;
}
