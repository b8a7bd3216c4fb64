/* Enumerations and flag sets on their own: creation, parsing names and
 * numbers, the error text, and turning values back into names. */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

static mca_base_var_enum_t *make_enum(void)
{
    static const mca_base_var_enum_value_t values[] = {
        {0, "self"}, {1, "sm"}, {7, "ofi"}, {-2, "none"}, {0, NULL}};
    mca_base_var_enum_t *e = NULL;
    ck_assert_int_eq(mca_base_var_enum_create("transport", values, &e), OPAL_SUCCESS);
    return e;
}

static mca_base_var_enum_t *make_flags(void)
{
    static const mca_base_var_enum_value_t flags[] = {
        {1, "send"}, {2, "put"}, {4, "get"}, {6, "rdma"}, {0, NULL}};
    mca_base_var_enum_t *e = NULL;
    ck_assert_int_eq(mca_base_var_enum_create_flag("btl_flags", flags, &e), OPAL_SUCCESS);
    return e;
}

static int parse(const mca_base_var_enum_t *e, const char *text)
{
    int value = -999;
    char *error = NULL;
    ck_assert_int_eq(mca_base_var_enum_parse(e, text, &value, &error), OPAL_SUCCESS);
    ck_assert_ptr_null(error);
    return value;
}

/* Asserts text is refused and the message contains want; returns nothing. */
static void assert_refused(const mca_base_var_enum_t *e, const char *text, const char *want)
{
    int value = 12345;
    char *error = NULL;
    ck_assert_int_eq(mca_base_var_enum_parse(e, text, &value, &error), OPAL_ERR_BAD_VALUE);
    ck_assert_int_eq(value, 12345);
    ck_assert_ptr_nonnull(error);
    ck_assert_msg(NULL != strstr(error, want), "\"%s\" not in \"%s\"", want, error);
    free(error);
}

static void assert_text(const mca_base_var_enum_t *e, int value, const char *want)
{
    char *text = NULL;
    ck_assert_int_eq(mca_base_var_enum_to_string(e, value, &text), OPAL_SUCCESS);
    ck_assert_str_eq(text, want);
    free(text);
}

START_TEST(create_copies_the_values)
{
    mca_base_var_enum_value_t values[] = {{3, strdup("three")}, {0, NULL}};
    mca_base_var_enum_t *e = NULL;
    ck_assert_int_eq(mca_base_var_enum_create("copy", values, &e), OPAL_SUCCESS);
    free((char *) values[0].string);
    values[0].string = NULL;
    ck_assert_str_eq(e->enum_name, "copy");
    ck_assert(!e->enum_is_flag);
    ck_assert_int_eq(e->enum_value_count, 1);
    ck_assert_str_eq(e->enum_values[0].string, "three");
    ck_assert_int_eq(parse(e, "three"), 3);
    OBJ_RELEASE(e);
}
END_TEST

START_TEST(create_refuses_duplicate_and_bad_names)
{
    static const mca_base_var_enum_value_t dup[] = {{0, "a"}, {1, "A"}, {0, NULL}};
    static const mca_base_var_enum_value_t empty[] = {{0, ""}, {0, NULL}};
    static const mca_base_var_enum_value_t comma[] = {{0, "a,b"}, {0, NULL}};
    static const mca_base_var_enum_value_t space[] = {{0, "a b"}, {0, NULL}};
    mca_base_var_enum_t *e = (mca_base_var_enum_t *) 1;
    ck_assert_int_eq(mca_base_var_enum_create("d", dup, &e), OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_null(e);
    ck_assert_int_eq(mca_base_var_enum_create("d", empty, &e), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(mca_base_var_enum_create("d", comma, &e), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(mca_base_var_enum_create("d", space, &e), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(mca_base_var_enum_create(NULL, dup, &e), OPAL_ERR_BAD_PARAM);
}
END_TEST

START_TEST(create_flag_refuses_zero)
{
    static const mca_base_var_enum_value_t flags[] = {{1, "a"}, {0, "none"}, {0, NULL}};
    mca_base_var_enum_t *e = NULL;
    ck_assert_int_eq(mca_base_var_enum_create_flag("f", flags, &e), OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_null(e);
}
END_TEST

START_TEST(create_accepts_empty_table)
{
    static const mca_base_var_enum_value_t none[] = {{0, NULL}};
    mca_base_var_enum_t *e = NULL;
    ck_assert_int_eq(mca_base_var_enum_create("empty", none, &e), OPAL_SUCCESS);
    ck_assert_int_eq(e->enum_value_count, 0);
    assert_refused(e, "0", "not a name or value of empty");
    OBJ_RELEASE(e);
}
END_TEST

START_TEST(parse_takes_names_case_insensitively)
{
    mca_base_var_enum_t *e = make_enum();
    ck_assert_int_eq(parse(e, "sm"), 1);
    ck_assert_int_eq(parse(e, "OFI"), 7);
    ck_assert_int_eq(parse(e, " none "), -2);
    OBJ_RELEASE(e);
}
END_TEST

START_TEST(parse_takes_numbers_of_the_table)
{
    mca_base_var_enum_t *e = make_enum();
    ck_assert_int_eq(parse(e, "7"), 7);
    ck_assert_int_eq(parse(e, "0x7"), 7);
    ck_assert_int_eq(parse(e, "-2"), -2);
    assert_refused(e, "3", "\"3\" is not a name or value of transport");
    assert_refused(e, "99999999999", "is not a name or value");
    OBJ_RELEASE(e);
}
END_TEST

START_TEST(parse_error_lists_accepted_names)
{
    mca_base_var_enum_t *e = make_enum();
    assert_refused(e, "tcp", "expected one of self (0), sm (1), ofi (7), none (-2)");
    assert_refused(e, "", "is not a name or value");
    assert_refused(e, "sm,self", "is not a name or value");
    OBJ_RELEASE(e);
}
END_TEST

START_TEST(flag_parse_ors_a_comma_list)
{
    mca_base_var_enum_t *e = make_flags();
    ck_assert_int_eq(parse(e, "send,get"), 5);
    ck_assert_int_eq(parse(e, " put , SEND "), 3);
    ck_assert_int_eq(parse(e, "rdma"), 6);
    ck_assert_int_eq(parse(e, "send,rdma,put"), 7);
    ck_assert_int_eq(parse(e, ""), 0);
    OBJ_RELEASE(e);
}
END_TEST

START_TEST(flag_parse_takes_numbers_made_of_flags)
{
    mca_base_var_enum_t *e = make_flags();
    ck_assert_int_eq(parse(e, "7"), 7);
    ck_assert_int_eq(parse(e, "send,0x4"), 5);
    assert_refused(e, "8", "unknown flag \"8\"");
    OBJ_RELEASE(e);
}
END_TEST

START_TEST(flag_parse_refuses_unknown_and_empty_names)
{
    mca_base_var_enum_t *e = make_flags();
    assert_refused(e, "send,atomics", "unknown flag \"atomics\"");
    assert_refused(e, "send,atomics", "send, put, get, rdma");
    assert_refused(e, "send,", "empty name");
    assert_refused(e, ",send", "empty name");
    OBJ_RELEASE(e);
}
END_TEST

START_TEST(to_string_gives_the_name)
{
    mca_base_var_enum_t *e = make_enum();
    assert_text(e, 7, "ofi");
    assert_text(e, -2, "none");
    /* A default outside the table still prints. */
    assert_text(e, 42, "42");
    OBJ_RELEASE(e);
}
END_TEST

START_TEST(flag_to_string_names_the_bits)
{
    mca_base_var_enum_t *e = make_flags();
    assert_text(e, 0, "");
    assert_text(e, 1, "send");
    assert_text(e, 5, "send,get");
    /* Table order: rdma comes after put and get, which named its bits. */
    assert_text(e, 6, "put,get");
    assert_text(e, 0x11, "send,0x10");
    OBJ_RELEASE(e);
}
END_TEST

START_TEST(flag_text_parses_back_to_the_value)
{
    mca_base_var_enum_t *e = make_flags();
    for (int v = 0; v < 8; ++v) {
        char *text = NULL;
        ck_assert_int_eq(mca_base_var_enum_to_string(e, v, &text), OPAL_SUCCESS);
        ck_assert_int_eq(parse(e, text), v);
        free(text);
    }
    OBJ_RELEASE(e);
}
END_TEST

START_TEST(bad_arguments_are_refused)
{
    mca_base_var_enum_t *e = make_enum();
    int v;
    char *text;
    ck_assert_int_eq(mca_base_var_enum_parse(NULL, "a", &v, NULL), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(mca_base_var_enum_parse(e, NULL, &v, NULL), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(mca_base_var_enum_parse(e, "sm", NULL, NULL), OPAL_ERR_BAD_PARAM);
    /* The error text is optional. */
    ck_assert_int_eq(mca_base_var_enum_parse(e, "tcp", &v, NULL), OPAL_ERR_BAD_VALUE);
    ck_assert_int_eq(mca_base_var_enum_to_string(NULL, 0, &text), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(mca_base_var_enum_to_string(e, 0, NULL), OPAL_ERR_BAD_PARAM);
    OBJ_RELEASE(e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mca_base_var_enum");
    OPAL_TEST_ADD(s, create_copies_the_values);
    OPAL_TEST_ADD(s, create_refuses_duplicate_and_bad_names);
    OPAL_TEST_ADD(s, create_flag_refuses_zero);
    OPAL_TEST_ADD(s, create_accepts_empty_table);
    OPAL_TEST_ADD(s, parse_takes_names_case_insensitively);
    OPAL_TEST_ADD(s, parse_takes_numbers_of_the_table);
    OPAL_TEST_ADD(s, parse_error_lists_accepted_names);
    OPAL_TEST_ADD(s, flag_parse_ors_a_comma_list);
    OPAL_TEST_ADD(s, flag_parse_takes_numbers_made_of_flags);
    OPAL_TEST_ADD(s, flag_parse_refuses_unknown_and_empty_names);
    OPAL_TEST_ADD(s, to_string_gives_the_name);
    OPAL_TEST_ADD(s, flag_to_string_names_the_bits);
    OPAL_TEST_ADD(s, flag_text_parses_back_to_the_value);
    OPAL_TEST_ADD(s, bad_arguments_are_refused);
    return opal_test_run(s);
}
