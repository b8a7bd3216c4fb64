/* Every type's text: good values parse, bad ones are refused with a
 * message naming the variable, the value and the source, and the variable
 * keeps its value. Part of the mca_base_var suite. */
#include "opal/opal_config.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/util/opal_error.h"
#include "test/mca/mca_var_test_support.h"

void mca_base_var_add_type_tests(Suite *s);

static int reg_flags(const char *name, mca_base_var_type_t type, mca_base_var_enum_t *e,
                     void *storage)
{
    return mca_base_var_register("opal", "testfw", "comp", name, "a test variable", type, e, 0,
                                 OPAL_INFO_LVL_1, MCA_BASE_VAR_SCOPE_LOCAL, storage);
}

static int reg(const char *name, mca_base_var_type_t type, void *storage)
{
    return reg_flags(name, type, NULL, storage);
}

static const mca_base_var_t *get(int index)
{
    const mca_base_var_t *var = NULL;
    ck_assert_int_eq(mca_base_var_get(index, &var), OPAL_SUCCESS);
    return var;
}

static int set(int index, const char *text)
{
    return mca_base_var_set_value_string(index, text, MCA_BASE_VAR_SOURCE_SET, NULL);
}

/* Sets text through the API and asserts the variable's text afterwards. */
#define ASSERT_SETS(index, text, expected)                                                         \
    do {                                                                                           \
        ck_assert_int_eq(set((index), (text)), OPAL_SUCCESS);                                      \
        ck_assert_str_eq(mvt_value(index), (expected));                                            \
    } while (0)

/* Asserts that text is refused, the value kept, and the message names the
 * variable, the value and the source. */
static void assert_refuses(int index, const char *text, const char *why)
{
    char *before = NULL;
    ck_assert_int_eq(mca_base_var_value_string(index, &before), OPAL_SUCCESS);
    mvt_clear_messages();
    ck_assert_int_eq(set(index, text), OPAL_ERR_BAD_VALUE);
    ck_assert_str_eq(mvt_value(index), before);
    ck_assert_int_eq(mvt_error_count(), 1);
    char *quoted = NULL;
    ck_assert_int_ge(asprintf(&quoted, "\"%s\"", text), 0);
    MVT_ASSERT_MESSAGE(get(index)->mbv_full_name, quoted, "from API", why);
    free(quoted);
    free(before);
}

START_TEST(int_parses_decimal_hex_and_size_suffixes)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 0;
    int index = reg("x", MCA_BASE_VAR_TYPE_INT, &x);
    ASSERT_SETS(index, "12", "12");
    ASSERT_SETS(index, "-5", "-5");
    ASSERT_SETS(index, "+3", "3");
    ASSERT_SETS(index, "0x1f", "31");
    ASSERT_SETS(index, "0X1F", "31");
    ASSERT_SETS(index, "4k", "4096");
    ASSERT_SETS(index, "2M", "2097152");
    ASSERT_SETS(index, "1g", "1073741824");
    ASSERT_SETS(index, " 7 ", "7");
    ASSERT_SETS(index, "010", "10");
    ASSERT_SETS(index, "2147483647", "2147483647");
    ASSERT_SETS(index, "-2147483648", "-2147483648");
    ck_assert_int_eq(x, INT_MIN);
    ck_assert_int_eq(mvt_message_count(), 0);
}
END_TEST

START_TEST(int_refuses_overflow)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 4096;
    int index = reg("x", MCA_BASE_VAR_TYPE_INT, &x);
    assert_refuses(index, "2147483648", "out of range");
    assert_refuses(index, "-2147483649", "out of range");
    assert_refuses(index, "2g", "out of range");
    assert_refuses(index, "99999999999999999999999", "too large");
    ck_assert_int_eq(x, 4096);
}
END_TEST

START_TEST(int_refuses_trailing_garbage)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    int x = 4096;
    int index = reg("x", MCA_BASE_VAR_TYPE_INT, &x);
    assert_refuses(index, "12q", "unexpected characters");
    assert_refuses(index, "4kb", "unexpected characters");
    assert_refuses(index, "1.5", "unexpected characters");
    assert_refuses(index, "", "not a number");
    assert_refuses(index, "0x", "not a number");
    assert_refuses(index, "ten", "not a number");
    ck_assert_str_eq(mvt_value(index), "4096");
}
END_TEST

START_TEST(unsigned_refuses_negative_and_overflow)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    unsigned u = 1;
    int index = reg("u", MCA_BASE_VAR_TYPE_UNSIGNED_INT, &u);
    ASSERT_SETS(index, "4294967295", "4294967295");
    ck_assert_uint_eq(u, UINT_MAX);
    ASSERT_SETS(index, "3m", "3145728");
    assert_refuses(index, "-1", "negative");
    assert_refuses(index, "4294967296", "out of range");
    assert_refuses(index, "4g", "out of range");
}
END_TEST

START_TEST(long_parses_negative_with_suffix)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    long l = 0;
    int index = reg("l", MCA_BASE_VAR_TYPE_LONG, &l);
    ASSERT_SETS(index, "-2k", "-2048");
    ASSERT_SETS(index, "9223372036854775807", "9223372036854775807");
    ck_assert(LONG_MAX == l);
    assert_refuses(index, "9223372036854775808", "out of range");
    assert_refuses(index, "5x", "unexpected characters");
}
END_TEST

START_TEST(size_t_parses_suffixes_and_refuses_negative)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    size_t s = 0;
    int index = reg("s", MCA_BASE_VAR_TYPE_SIZE_T, &s);
    ASSERT_SETS(index, "3g", "3221225472");
    ck_assert(s == (size_t) 3 << 30);
    ASSERT_SETS(index, "0x10K", "16384");
    assert_refuses(index, "-1", "negative");
}
END_TEST

START_TEST(uint64_parses_full_range)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    uint64_t v = 0;
    int index = reg("v", MCA_BASE_VAR_TYPE_UINT64_T, &v);
    ASSERT_SETS(index, "18446744073709551615", "18446744073709551615");
    ck_assert(UINT64_MAX == v);
    ASSERT_SETS(index, "0xffffffff00000000", "18446744069414584320");
    assert_refuses(index, "18446744073709551616", "too large");
    assert_refuses(index, "17179869184g", "too large");
}
END_TEST

START_TEST(bool_accepts_all_spellings)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    bool b = false;
    int index = reg("b", MCA_BASE_VAR_TYPE_BOOL, &b);
    static const char *const yes[] = {"1", "true", "TRUE", "Yes", "on", " On "};
    static const char *const no[] = {"0", "false", "False", "no", "NO", "off"};
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); ++i) {
        ASSERT_SETS(index, yes[i], "true");
        ck_assert(b);
        ASSERT_SETS(index, no[i], "false");
        ck_assert(!b);
    }
}
END_TEST

START_TEST(bool_refuses_other_words)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    bool b = true;
    int index = reg("b", MCA_BASE_VAR_TYPE_BOOL, &b);
    assert_refuses(index, "2", "not a boolean");
    assert_refuses(index, "maybe", "not a boolean");
    assert_refuses(index, "", "not a boolean");
    assert_refuses(index, "yess", "not a boolean");
    ck_assert(b);
}
END_TEST

START_TEST(double_parses_decimal_and_exponent)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    double d = 0;
    int index = reg("d", MCA_BASE_VAR_TYPE_DOUBLE, &d);
    ASSERT_SETS(index, "0.25", "0.25");
    ck_assert(0.25 == d);
    ASSERT_SETS(index, "-1e3", "-1000");
    ASSERT_SETS(index, " 2.5 ", "2.5");
    ASSERT_SETS(index, "0.1", "0.1");
}
END_TEST

START_TEST(double_refuses_garbage_and_infinities)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    double d = 1.5;
    int index = reg("d", MCA_BASE_VAR_TYPE_DOUBLE, &d);
    assert_refuses(index, "1.5x", "not a floating-point number");
    assert_refuses(index, "abc", "not a floating-point number");
    assert_refuses(index, "", "not a floating-point number");
    assert_refuses(index, "inf", "not a finite number");
    assert_refuses(index, "nan", "not a finite number");
    assert_refuses(index, "1e999", "not a finite number");
    ck_assert(1.5 == d);
}
END_TEST

START_TEST(string_takes_value_verbatim)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    char *s = NULL;
    int index = reg("s", MCA_BASE_VAR_TYPE_STRING, &s);
    ck_assert_str_eq(mvt_value(index), "");
    ASSERT_SETS(index, " a, b ", " a, b ");
    ASSERT_SETS(index, "", "");
    ck_assert_str_eq(s, "");
    /* The storage is on this stack: let go of it before returning. */
    ck_assert_int_eq(mca_base_var_finalize(), OPAL_SUCCESS);
}
END_TEST

static mca_base_var_enum_t *make_enum(void)
{
    static const mca_base_var_enum_value_t values[] = {{0, "a"}, {1, "b"}, {5, "c"}, {0, NULL}};
    mca_base_var_enum_t *e = NULL;
    ck_assert_int_eq(mca_base_var_enum_create("test_mode", values, &e), OPAL_SUCCESS);
    return e;
}

static mca_base_var_enum_t *make_flags(void)
{
    static const mca_base_var_enum_value_t flags[] = {{1, "x"}, {2, "y"}, {4, "z"}, {0, NULL}};
    mca_base_var_enum_t *e = NULL;
    ck_assert_int_eq(mca_base_var_enum_create_flag("test_flags", flags, &e), OPAL_SUCCESS);
    return e;
}

START_TEST(enum_accepts_name_or_number)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    mca_base_var_enum_t *e = make_enum();
    int mode = 0;
    int index = reg_flags("mode", MCA_BASE_VAR_TYPE_INT, e, &mode);
    /* The variable holds its own reference. */
    OBJ_RELEASE(e);
    ck_assert_str_eq(get(index)->mbv_default_text, "a");
    ASSERT_SETS(index, "b", "b");
    ck_assert_int_eq(mode, 1);
    ASSERT_SETS(index, "5", "c");
    ck_assert_int_eq(mode, 5);
    ASSERT_SETS(index, "B", "b");
    ck_assert_int_eq(get(index)->mbv_enumerator->enum_value_count, 3);
}
END_TEST

START_TEST(enum_refuses_unknown_name_listing_accepted)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    mca_base_var_enum_t *e = make_enum();
    int mode = 1;
    int index = reg_flags("mode", MCA_BASE_VAR_TYPE_INT, e, &mode);
    OBJ_RELEASE(e);
    assert_refuses(index, "d", "a (0), b (1), c (5)");
    assert_refuses(index, "3", "a (0), b (1), c (5)");
    ck_assert_int_eq(mode, 1);
}
END_TEST

START_TEST(flag_set_accepts_comma_list)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    mca_base_var_enum_t *e = make_flags();
    int f = 0;
    int index = reg_flags("f", MCA_BASE_VAR_TYPE_INT, e, &f);
    OBJ_RELEASE(e);
    ck_assert_str_eq(get(index)->mbv_default_text, "");
    ASSERT_SETS(index, "x,z", "x,z");
    ck_assert_int_eq(f, 5);
    ASSERT_SETS(index, " y , X ", "x,y");
    ck_assert_int_eq(f, 3);
    ASSERT_SETS(index, "", "");
    ck_assert_int_eq(f, 0);
}
END_TEST

START_TEST(flag_set_accepts_number)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    mca_base_var_enum_t *e = make_flags();
    int f = 0;
    int index = reg_flags("f", MCA_BASE_VAR_TYPE_INT, e, &f);
    OBJ_RELEASE(e);
    ASSERT_SETS(index, "6", "y,z");
    ck_assert_int_eq(f, 6);
    assert_refuses(index, "0x8", "unknown flag");
}
END_TEST

START_TEST(flag_set_refuses_unknown_name)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    mca_base_var_enum_t *e = make_flags();
    int f = 1;
    int index = reg_flags("f", MCA_BASE_VAR_TYPE_INT, e, &f);
    OBJ_RELEASE(e);
    assert_refuses(index, "x,w", "unknown flag \"w\"");
    MVT_ASSERT_MESSAGE("x, y, z");
    assert_refuses(index, "x,,y", "empty name");
    ck_assert_int_eq(f, 1);
}
END_TEST

void mca_base_var_add_type_tests(Suite *s)
{
    MVT_ADD(s, int_parses_decimal_hex_and_size_suffixes);
    MVT_ADD(s, int_refuses_overflow);
    MVT_ADD(s, int_refuses_trailing_garbage);
    MVT_ADD(s, unsigned_refuses_negative_and_overflow);
    MVT_ADD(s, long_parses_negative_with_suffix);
    MVT_ADD(s, size_t_parses_suffixes_and_refuses_negative);
    MVT_ADD(s, uint64_parses_full_range);
    MVT_ADD(s, bool_accepts_all_spellings);
    MVT_ADD(s, bool_refuses_other_words);
    MVT_ADD(s, double_parses_decimal_and_exponent);
    MVT_ADD(s, double_refuses_garbage_and_infinities);
    MVT_ADD(s, string_takes_value_verbatim);
    MVT_ADD(s, enum_accepts_name_or_number);
    MVT_ADD(s, enum_refuses_unknown_name_listing_accepted);
    MVT_ADD(s, flag_set_accepts_comma_list);
    MVT_ADD(s, flag_set_accepts_number);
    MVT_ADD(s, flag_set_refuses_unknown_name);
}
