/* argv vectors: growing, counting, splitting and joining (with their round
 * trips and edge cases), copying, deleting and inserting ranges. */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/opal_argv.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

/* Asserts argv holds exactly the n strings of expected. */
static void assert_argv(char **argv, const char *const *expected, int n)
{
    ck_assert_ptr_nonnull(argv);
    ck_assert_int_eq(opal_argv_count(argv), n);
    for (int i = 0; i < n; ++i) {
        ck_assert_str_eq(argv[i], expected[i]);
    }
    ck_assert_ptr_null(argv[n]);
}

START_TEST(append_copies_and_counts)
{
    char **argv = NULL;
    int argc = -1;
    char buf[8] = "one";
    ck_assert_int_eq(opal_argv_append(&argc, &argv, buf), OPAL_SUCCESS);
    ck_assert_int_eq(argc, 1);
    strcpy(buf, "two");
    ck_assert_int_eq(opal_argv_append(&argc, &argv, buf), OPAL_SUCCESS);
    ck_assert_int_eq(opal_argv_append(&argc, &argv, ""), OPAL_SUCCESS);
    ck_assert_int_eq(argc, 3);
    assert_argv(argv, (const char *[]){"one", "two", ""}, 3);
    ck_assert_ptr_ne(argv[1], buf);
    opal_argv_free(argv);
}
END_TEST

START_TEST(append_nosize_grows_from_null)
{
    char **argv = NULL;
    int n = 1000;
    for (int i = 0; i < n; ++i) {
        char s[16];
        snprintf(s, sizeof(s), "%d", i);
        ck_assert_int_eq(opal_argv_append_nosize(&argv, s), OPAL_SUCCESS);
    }
    ck_assert_int_eq(opal_argv_count(argv), n);
    ck_assert_str_eq(argv[0], "0");
    ck_assert_str_eq(argv[n - 1], "999");
    ck_assert_ptr_null(argv[n]);
    opal_argv_free(argv);
}
END_TEST

START_TEST(append_refuses_null_arguments)
{
    char **argv = NULL;
    int argc = 0;
    ck_assert_int_eq(opal_argv_append_nosize(&argv, NULL), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_argv_append_nosize(NULL, "x"), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_argv_append(NULL, &argv, "x"), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_argv_prepend(&argc, &argv, NULL), OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_null(argv);
}
END_TEST

START_TEST(prepend_inserts_in_front)
{
    char **argv = NULL;
    int argc = 0;
    ck_assert_int_eq(opal_argv_prepend(&argc, &argv, "c"), OPAL_SUCCESS);
    ck_assert_int_eq(opal_argv_prepend(&argc, &argv, "b"), OPAL_SUCCESS);
    ck_assert_int_eq(opal_argv_prepend_nosize(&argv, "a"), OPAL_SUCCESS);
    ck_assert_int_eq(argc, 2);
    assert_argv(argv, (const char *[]){"a", "b", "c"}, 3);
    opal_argv_free(argv);
}
END_TEST

START_TEST(append_unique_skips_equal_strings)
{
    char **argv = NULL;
    ck_assert_int_eq(opal_argv_append_unique_nosize(&argv, "x"), OPAL_SUCCESS);
    ck_assert_int_eq(opal_argv_append_unique_nosize(&argv, "y"), OPAL_SUCCESS);
    ck_assert_int_eq(opal_argv_append_unique_nosize(&argv, "x"), OPAL_SUCCESS);
    assert_argv(argv, (const char *[]){"x", "y"}, 2);
    opal_argv_free(argv);
}
END_TEST

START_TEST(count_and_free_accept_null)
{
    ck_assert_int_eq(opal_argv_count(NULL), 0);
    opal_argv_free(NULL);
    char *empty[] = {NULL};
    ck_assert_int_eq(opal_argv_count(empty), 0);
}
END_TEST

START_TEST(split_drops_empty_fields)
{
    char **argv = opal_argv_split("a::b:", ':');
    assert_argv(argv, (const char *[]){"a", "b"}, 2);
    opal_argv_free(argv);
    argv = opal_argv_split(":lead", ':');
    assert_argv(argv, (const char *[]){"lead"}, 1);
    opal_argv_free(argv);
    argv = opal_argv_split("no delimiter", ':');
    assert_argv(argv, (const char *[]){"no delimiter"}, 1);
    opal_argv_free(argv);
}
END_TEST

START_TEST(split_of_empty_or_only_delimiters_is_empty)
{
    char **argv = opal_argv_split("", ':');
    assert_argv(argv, NULL, 0);
    opal_argv_free(argv);
    argv = opal_argv_split(":::", ':');
    assert_argv(argv, NULL, 0);
    opal_argv_free(argv);
    ck_assert_ptr_null(opal_argv_split(NULL, ':'));
    ck_assert_ptr_null(opal_argv_split_with_empty(NULL, ':'));
}
END_TEST

START_TEST(split_with_empty_keeps_every_field)
{
    char **argv = opal_argv_split_with_empty("a::b:", ':');
    assert_argv(argv, (const char *[]){"a", "", "b", ""}, 4);
    opal_argv_free(argv);
    argv = opal_argv_split_with_empty("", ':');
    assert_argv(argv, (const char *[]){""}, 1);
    opal_argv_free(argv);
    argv = opal_argv_split_with_empty(":", ':');
    assert_argv(argv, (const char *[]){"", ""}, 2);
    opal_argv_free(argv);
}
END_TEST

START_TEST(join_puts_delimiter_between)
{
    char *s = opal_argv_join((char *[]){"a", "b", "c", NULL}, ',');
    ck_assert_str_eq(s, "a,b,c");
    free(s);
    s = opal_argv_join((char *[]){"only", NULL}, ',');
    ck_assert_str_eq(s, "only");
    free(s);
    s = opal_argv_join((char *[]){"", "", NULL}, ',');
    ck_assert_str_eq(s, ",");
    free(s);
}
END_TEST

START_TEST(join_of_empty_or_null_is_empty_string)
{
    char *s = opal_argv_join(NULL, ':');
    ck_assert_str_eq(s, "");
    free(s);
    s = opal_argv_join((char *[]){NULL}, ':');
    ck_assert_str_eq(s, "");
    free(s);
}
END_TEST

START_TEST(join_restores_split_with_empty)
{
    const char *cases[] = {"", ":", "::", "a", "a:b", ":a", "a:", "a::b", ":a::b:", "x y:z"};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        char **argv = opal_argv_split_with_empty(cases[i], ':');
        char *joined = opal_argv_join(argv, ':');
        ck_assert_msg(0 == strcmp(joined, cases[i]), "\"%s\" came back as \"%s\"", cases[i],
                      joined);
        free(joined);
        opal_argv_free(argv);
    }
}
END_TEST

START_TEST(split_restores_join_of_nonempty_fields)
{
    char *fields[] = {"btl", "self,sm", "x y", NULL};
    char *joined = opal_argv_join(fields, ':');
    char **back = opal_argv_split(joined, ':');
    assert_argv(back, (const char *const *) fields, 3);
    opal_argv_free(back);
    free(joined);
}
END_TEST

START_TEST(copy_is_deep)
{
    char **argv = opal_argv_split("a b c", ' ');
    char **copy = opal_argv_copy(argv);
    assert_argv(copy, (const char *[]){"a", "b", "c"}, 3);
    for (int i = 0; i < 3; ++i) {
        ck_assert_ptr_ne(copy[i], argv[i]);
    }
    opal_argv_free(argv);
    assert_argv(copy, (const char *[]){"a", "b", "c"}, 3);
    opal_argv_free(copy);
    ck_assert_ptr_null(opal_argv_copy(NULL));
    copy = opal_argv_copy((char *[]){NULL});
    assert_argv(copy, NULL, 0);
    opal_argv_free(copy);
}
END_TEST

START_TEST(delete_removes_a_range)
{
    char **argv = opal_argv_split("a b c d e", ' ');
    int argc = 5;
    ck_assert_int_eq(opal_argv_delete(&argc, &argv, 1, 2), OPAL_SUCCESS);
    ck_assert_int_eq(argc, 3);
    assert_argv(argv, (const char *[]){"a", "d", "e"}, 3);
    ck_assert_int_eq(opal_argv_delete(&argc, &argv, 0, 1), OPAL_SUCCESS);
    assert_argv(argv, (const char *[]){"d", "e"}, 2);
    opal_argv_free(argv);
}
END_TEST

START_TEST(delete_is_clipped_to_the_end)
{
    char **argv = opal_argv_split("a b c", ' ');
    int argc = 3;
    ck_assert_int_eq(opal_argv_delete(&argc, &argv, 1, 100), OPAL_SUCCESS);
    ck_assert_int_eq(argc, 1);
    assert_argv(argv, (const char *[]){"a"}, 1);
    ck_assert_int_eq(opal_argv_delete(&argc, &argv, 5, 1), OPAL_SUCCESS);
    ck_assert_int_eq(opal_argv_delete(&argc, &argv, 0, 0), OPAL_SUCCESS);
    assert_argv(argv, (const char *[]){"a"}, 1);
    ck_assert_int_eq(opal_argv_delete(NULL, &argv, 0, 1), OPAL_SUCCESS);
    assert_argv(argv, NULL, 0);
    opal_argv_free(argv);
}
END_TEST

START_TEST(delete_refuses_negative_range)
{
    char **argv = opal_argv_split("a b", ' ');
    int argc = 2;
    ck_assert_int_eq(opal_argv_delete(&argc, &argv, -1, 1), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_argv_delete(&argc, &argv, 0, -1), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(argc, 2);
    assert_argv(argv, (const char *[]){"a", "b"}, 2);
    opal_argv_free(argv);
}
END_TEST

START_TEST(insert_copies_at_any_position)
{
    char **argv = opal_argv_split("a d", ' ');
    char *middle[] = {"b", "c", NULL};
    ck_assert_int_eq(opal_argv_insert(&argv, 1, middle), OPAL_SUCCESS);
    ck_assert_int_eq(opal_argv_insert(&argv, 4, (char *[]){"e", NULL}), OPAL_SUCCESS);
    ck_assert_int_eq(opal_argv_insert(&argv, 0, (char *[]){"_", NULL}), OPAL_SUCCESS);
    ck_assert_int_eq(opal_argv_insert(&argv, 2, NULL), OPAL_SUCCESS);
    assert_argv(argv, (const char *[]){"_", "a", "b", "c", "d", "e"}, 6);
    ck_assert_ptr_ne(argv[2], middle[0]);
    ck_assert_int_eq(opal_argv_insert(&argv, 7, middle), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_argv_insert(&argv, -1, middle), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_argv_count(argv), 6);
    opal_argv_free(argv);

    char **empty = NULL;
    ck_assert_int_eq(opal_argv_insert(&empty, 0, middle), OPAL_SUCCESS);
    assert_argv(empty, (const char *[]){"b", "c"}, 2);
    opal_argv_free(empty);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("opal_argv");
    OPAL_TEST_ADD(s, append_copies_and_counts);
    OPAL_TEST_ADD(s, append_nosize_grows_from_null);
    OPAL_TEST_ADD(s, append_refuses_null_arguments);
    OPAL_TEST_ADD(s, prepend_inserts_in_front);
    OPAL_TEST_ADD(s, append_unique_skips_equal_strings);
    OPAL_TEST_ADD(s, count_and_free_accept_null);
    OPAL_TEST_ADD(s, split_drops_empty_fields);
    OPAL_TEST_ADD(s, split_of_empty_or_only_delimiters_is_empty);
    OPAL_TEST_ADD(s, split_with_empty_keeps_every_field);
    OPAL_TEST_ADD(s, join_puts_delimiter_between);
    OPAL_TEST_ADD(s, join_of_empty_or_null_is_empty_string);
    OPAL_TEST_ADD(s, join_restores_split_with_empty);
    OPAL_TEST_ADD(s, split_restores_join_of_nonempty_fields);
    OPAL_TEST_ADD(s, copy_is_deep);
    OPAL_TEST_ADD(s, delete_removes_a_range);
    OPAL_TEST_ADD(s, delete_is_clipped_to_the_end);
    OPAL_TEST_ADD(s, delete_refuses_negative_range);
    OPAL_TEST_ADD(s, insert_copies_at_any_position);
    return opal_test_run(s);
}
