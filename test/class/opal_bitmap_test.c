/* opal_bitmap_t: bits, growth up to a maximum, whole-bitmap operations. */
#include "opal/opal_config.h"

#include <limits.h>

#include "opal/class/opal_bitmap.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

static opal_bitmap_t bm;

static void setup(void)
{
    OBJ_CONSTRUCT(&bm, opal_bitmap_t);
}

static void teardown(void)
{
    OBJ_DESTRUCT(&bm);
}

START_TEST(new_bitmap_is_empty)
{
    ck_assert_int_eq(opal_bitmap_size(&bm), 0);
    ck_assert_int_eq(opal_bitmap_max_size(&bm), INT_MAX);
    ck_assert(opal_bitmap_is_clear(&bm));
    ck_assert_int_eq(opal_bitmap_num_set_bits(&bm), 0);
    ck_assert(!opal_bitmap_is_set_bit(&bm, 0));
}
END_TEST

START_TEST(init_gives_size_with_all_bits_clear)
{
    ck_assert_int_eq(opal_bitmap_init(&bm, 100), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_size(&bm), 100);
    ck_assert(opal_bitmap_is_clear(&bm));
    for (int i = 0; i < 100; ++i) {
        ck_assert(!opal_bitmap_is_set_bit(&bm, i));
    }
}
END_TEST

START_TEST(init_drops_earlier_content)
{
    ck_assert_int_eq(opal_bitmap_set_bit(&bm, 500), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_init(&bm, 10), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_size(&bm), 10);
    ck_assert(opal_bitmap_is_clear(&bm));
    ck_assert(!opal_bitmap_is_set_bit(&bm, 500));
}
END_TEST

START_TEST(one_bit_set_then_cleared)
{
    ck_assert_int_eq(opal_bitmap_init(&bm, 64), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_set_bit(&bm, 5), OPAL_SUCCESS);
    ck_assert(opal_bitmap_is_set_bit(&bm, 5));
    ck_assert(!opal_bitmap_is_set_bit(&bm, 4));
    ck_assert(!opal_bitmap_is_set_bit(&bm, 6));
    ck_assert_int_eq(opal_bitmap_num_set_bits(&bm), 1);
    ck_assert(!opal_bitmap_is_clear(&bm));
    ck_assert_int_eq(opal_bitmap_clear_bit(&bm, 5), OPAL_SUCCESS);
    ck_assert(!opal_bitmap_is_set_bit(&bm, 5));
    ck_assert(opal_bitmap_is_clear(&bm));
}
END_TEST

START_TEST(bits_on_word_boundaries_are_independent)
{
    static const int bits[] = {0, 1, 62, 63, 64, 65, 127, 128, 191, 192};
    const int n = (int) (sizeof(bits) / sizeof(bits[0]));
    ck_assert_int_eq(opal_bitmap_init(&bm, 200), OPAL_SUCCESS);
    for (int i = 0; i < n; ++i) {
        ck_assert_int_eq(opal_bitmap_set_bit(&bm, bits[i]), OPAL_SUCCESS);
    }
    ck_assert_int_eq(opal_bitmap_num_set_bits(&bm), n);
    for (int b = 0, j = 0; b < 200; ++b) {
        bool expected = j < n && bits[j] == b;
        ck_assert_msg(opal_bitmap_is_set_bit(&bm, b) == expected, "bit %d", b);
        j += expected;
    }
}
END_TEST

START_TEST(set_past_size_grows_to_that_bit)
{
    ck_assert_int_eq(opal_bitmap_init(&bm, 10), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_set_bit(&bm, 3), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_set_bit(&bm, 1000), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_size(&bm), 1001);
    ck_assert(opal_bitmap_is_set_bit(&bm, 3));
    ck_assert(opal_bitmap_is_set_bit(&bm, 1000));
    ck_assert_int_eq(opal_bitmap_num_set_bits(&bm), 2);
    for (int b = 4; b < 1000; ++b) {
        ck_assert(!opal_bitmap_is_set_bit(&bm, b));
    }
}
END_TEST

START_TEST(many_bits_set_upwards_all_read_back)
{
    const int n = 1 << 20;
    for (int b = 0; b < n; b += 3) {
        OPAL_TEST_EXPECT(OPAL_SUCCESS == opal_bitmap_set_bit(&bm, b));
    }
    ck_assert_int_eq(opal_bitmap_size(&bm), n);
    ck_assert_int_eq(opal_bitmap_num_set_bits(&bm), (n + 2) / 3);
    for (int b = 0; b < n; ++b) {
        if (opal_bitmap_is_set_bit(&bm, b) != (0 == b % 3)) {
            ck_abort_msg("bit %d wrong", b);
        }
    }
}
END_TEST

START_TEST(negative_bit_is_rejected)
{
    ck_assert_int_eq(opal_bitmap_init(&bm, 8), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_set_bit(&bm, -1), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_bitmap_clear_bit(&bm, -1), OPAL_ERR_BAD_PARAM);
    ck_assert(!opal_bitmap_is_set_bit(&bm, -1));
    ck_assert_int_eq(opal_bitmap_init(&bm, -1), OPAL_ERR_BAD_PARAM);
}
END_TEST

START_TEST(bit_past_maximum_is_rejected_and_nothing_changes)
{
    ck_assert_int_eq(opal_bitmap_set_max_size(&bm, 100), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_init(&bm, 10), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_set_bit(&bm, 99), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_size(&bm), 100);
    ck_assert_int_eq(opal_bitmap_set_bit(&bm, 100), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_bitmap_set_bit(&bm, INT_MAX), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_bitmap_clear_bit(&bm, 100), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_bitmap_size(&bm), 100);
    ck_assert_int_eq(opal_bitmap_num_set_bits(&bm), 1);
}
END_TEST

START_TEST(init_above_maximum_is_rejected)
{
    ck_assert_int_eq(opal_bitmap_set_max_size(&bm, 64), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_init(&bm, 65), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_bitmap_init(&bm, 64), OPAL_SUCCESS);
}
END_TEST

START_TEST(maximum_below_size_is_rejected)
{
    ck_assert_int_eq(opal_bitmap_init(&bm, 50), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_set_max_size(&bm, 49), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_bitmap_set_max_size(&bm, -1), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_bitmap_max_size(&bm), INT_MAX);
    ck_assert_int_eq(opal_bitmap_set_max_size(&bm, 50), OPAL_SUCCESS);
}
END_TEST

START_TEST(clear_past_size_succeeds_without_growing)
{
    ck_assert_int_eq(opal_bitmap_init(&bm, 10), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_clear_bit(&bm, 5000), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_size(&bm), 10);
    ck_assert(!opal_bitmap_is_set_bit(&bm, 5000));
}
END_TEST

START_TEST(set_all_sets_exactly_the_size)
{
    ck_assert_int_eq(opal_bitmap_init(&bm, 70), OPAL_SUCCESS);
    opal_bitmap_set_all_bits(&bm);
    ck_assert_int_eq(opal_bitmap_num_set_bits(&bm), 70);
    ck_assert(opal_bitmap_is_set_bit(&bm, 69));
    ck_assert(!opal_bitmap_is_set_bit(&bm, 70));
    /* Growing after set_all exposes only clear bits. */
    ck_assert_int_eq(opal_bitmap_set_bit(&bm, 200), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_num_set_bits(&bm), 71);
    ck_assert(!opal_bitmap_is_set_bit(&bm, 70));
    ck_assert(!opal_bitmap_is_set_bit(&bm, 127));
}
END_TEST

START_TEST(clear_all_clears_every_bit)
{
    ck_assert_int_eq(opal_bitmap_init(&bm, 300), OPAL_SUCCESS);
    opal_bitmap_set_all_bits(&bm);
    opal_bitmap_clear_all_bits(&bm);
    ck_assert(opal_bitmap_is_clear(&bm));
    ck_assert_int_eq(opal_bitmap_num_set_bits(&bm), 0);
    ck_assert_int_eq(opal_bitmap_size(&bm), 300);
}
END_TEST

START_TEST(find_first_unset_takes_the_lowest_hole)
{
    int pos = -1;
    ck_assert_int_eq(opal_bitmap_init(&bm, 10), OPAL_SUCCESS);
    opal_bitmap_set_all_bits(&bm);
    ck_assert_int_eq(opal_bitmap_clear_bit(&bm, 7), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_clear_bit(&bm, 4), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_find_and_set_first_unset_bit(&bm, &pos), OPAL_SUCCESS);
    ck_assert_int_eq(pos, 4);
    ck_assert(opal_bitmap_is_set_bit(&bm, 4));
    ck_assert_int_eq(opal_bitmap_find_and_set_first_unset_bit(&bm, &pos), OPAL_SUCCESS);
    ck_assert_int_eq(pos, 7);
}
END_TEST

START_TEST(find_first_unset_grows_a_full_bitmap)
{
    int pos = -1;
    ck_assert_int_eq(opal_bitmap_find_and_set_first_unset_bit(&bm, &pos), OPAL_SUCCESS);
    ck_assert_int_eq(pos, 0);
    ck_assert_int_eq(opal_bitmap_init(&bm, 128), OPAL_SUCCESS);
    opal_bitmap_set_all_bits(&bm);
    ck_assert_int_eq(opal_bitmap_find_and_set_first_unset_bit(&bm, &pos), OPAL_SUCCESS);
    ck_assert_int_eq(pos, 128);
    ck_assert_int_eq(opal_bitmap_size(&bm), 129);
    ck_assert_int_eq(opal_bitmap_find_and_set_first_unset_bit(&bm, &pos), OPAL_SUCCESS);
    ck_assert_int_eq(pos, 129);
}
END_TEST

START_TEST(find_first_unset_at_maximum_fails)
{
    int pos = -1;
    ck_assert_int_eq(opal_bitmap_set_max_size(&bm, 3), OPAL_SUCCESS);
    for (int i = 0; i < 3; ++i) {
        ck_assert_int_eq(opal_bitmap_find_and_set_first_unset_bit(&bm, &pos), OPAL_SUCCESS);
        ck_assert_int_eq(pos, i);
    }
    pos = -1;
    ck_assert_int_eq(opal_bitmap_find_and_set_first_unset_bit(&bm, &pos), OPAL_ERR_OUT_OF_RESOURCE);
    ck_assert_int_eq(pos, -1);
    ck_assert_int_eq(opal_bitmap_size(&bm), 3);
}
END_TEST

/* Two bitmaps a (bits 0..99 where b%2==0) and b (bits 0..199 where
 * b%3==0) for the bitwise tests. */
static void make_pair(opal_bitmap_t *a, opal_bitmap_t *b)
{
    ck_assert_int_eq(opal_bitmap_init(a, 100), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_init(b, 200), OPAL_SUCCESS);
    for (int i = 0; i < 100; i += 2) {
        ck_assert_int_eq(opal_bitmap_set_bit(a, i), OPAL_SUCCESS);
    }
    for (int i = 0; i < 200; i += 3) {
        ck_assert_int_eq(opal_bitmap_set_bit(b, i), OPAL_SUCCESS);
    }
}

START_TEST(bitwise_and_keeps_common_bits)
{
    opal_bitmap_t other;
    OBJ_CONSTRUCT(&other, opal_bitmap_t);
    make_pair(&bm, &other);
    ck_assert_int_eq(opal_bitmap_bitwise_and_inplace(&bm, &other), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_size(&bm), 100);
    for (int i = 0; i < 100; ++i) {
        ck_assert(opal_bitmap_is_set_bit(&bm, i) == (0 == i % 6));
    }
    /* And with a smaller bitmap clears what lies past its size. */
    ck_assert_int_eq(opal_bitmap_init(&other, 10), OPAL_SUCCESS);
    opal_bitmap_set_all_bits(&other);
    ck_assert_int_eq(opal_bitmap_bitwise_and_inplace(&bm, &other), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_num_set_bits(&bm), 2); /* 0 and 6 */
    OBJ_DESTRUCT(&other);
}
END_TEST

START_TEST(bitwise_or_grows_to_the_larger_size)
{
    opal_bitmap_t other;
    OBJ_CONSTRUCT(&other, opal_bitmap_t);
    make_pair(&bm, &other);
    ck_assert_int_eq(opal_bitmap_bitwise_or_inplace(&bm, &other), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_size(&bm), 200);
    for (int i = 0; i < 200; ++i) {
        bool expected = (i < 100 && 0 == i % 2) || 0 == i % 3;
        ck_assert(opal_bitmap_is_set_bit(&bm, i) == expected);
    }
    OBJ_DESTRUCT(&other);
}
END_TEST

START_TEST(bitwise_or_past_maximum_fails_unchanged)
{
    opal_bitmap_t other, before;
    OBJ_CONSTRUCT(&other, opal_bitmap_t);
    OBJ_CONSTRUCT(&before, opal_bitmap_t);
    ck_assert_int_eq(opal_bitmap_set_max_size(&bm, 150), OPAL_SUCCESS);
    make_pair(&bm, &other);
    ck_assert_int_eq(opal_bitmap_copy(&before, &bm), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_bitwise_or_inplace(&bm, &other), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_bitmap_bitwise_xor_inplace(&bm, &other), OPAL_ERR_BAD_PARAM);
    ck_assert(opal_bitmap_are_equal(&bm, &before));
    ck_assert_int_eq(opal_bitmap_size(&bm), 100);
    OBJ_DESTRUCT(&before);
    OBJ_DESTRUCT(&other);
}
END_TEST

START_TEST(bitwise_xor_toggles_bits)
{
    opal_bitmap_t other;
    OBJ_CONSTRUCT(&other, opal_bitmap_t);
    make_pair(&bm, &other);
    ck_assert_int_eq(opal_bitmap_bitwise_xor_inplace(&bm, &other), OPAL_SUCCESS);
    for (int i = 0; i < 200; ++i) {
        bool in_a = i < 100 && 0 == i % 2;
        ck_assert(opal_bitmap_is_set_bit(&bm, i) == (in_a != (0 == i % 3)));
    }
    /* Xor with itself (a copy) clears everything. */
    ck_assert_int_eq(opal_bitmap_copy(&other, &bm), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_bitwise_xor_inplace(&bm, &other), OPAL_SUCCESS);
    ck_assert(opal_bitmap_is_clear(&bm));
    OBJ_DESTRUCT(&other);
}
END_TEST

START_TEST(equality_ignores_size)
{
    opal_bitmap_t other;
    OBJ_CONSTRUCT(&other, opal_bitmap_t);
    ck_assert_int_eq(opal_bitmap_init(&bm, 10), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_init(&other, 1000), OPAL_SUCCESS);
    ck_assert(opal_bitmap_are_equal(&bm, &other));
    ck_assert_int_eq(opal_bitmap_set_bit(&bm, 3), OPAL_SUCCESS);
    ck_assert(!opal_bitmap_are_equal(&bm, &other));
    ck_assert_int_eq(opal_bitmap_set_bit(&other, 3), OPAL_SUCCESS);
    ck_assert(opal_bitmap_are_equal(&bm, &other));
    ck_assert_int_eq(opal_bitmap_set_bit(&other, 999), OPAL_SUCCESS);
    ck_assert(!opal_bitmap_are_equal(&other, &bm));
    OBJ_DESTRUCT(&other);
}
END_TEST

START_TEST(copy_gives_an_equal_bitmap)
{
    opal_bitmap_t other;
    OBJ_CONSTRUCT(&other, opal_bitmap_t);
    ck_assert_int_eq(opal_bitmap_set_bit(&other, 700), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_set_bit(&bm, 5), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_set_bit(&bm, 70), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_copy(&other, &bm), OPAL_SUCCESS);
    ck_assert_int_eq(opal_bitmap_size(&other), 71);
    ck_assert(opal_bitmap_are_equal(&other, &bm));
    ck_assert(!opal_bitmap_is_set_bit(&other, 700));
    ck_assert_int_eq(opal_bitmap_num_set_bits(&other), 2);
    OBJ_DESTRUCT(&other);
}
END_TEST

static Suite *bitmap_suite(void)
{
    Suite *s = suite_create("opal_bitmap");
    struct {
        const char *name;
        const TTest *test;
    } cases[] = {
#define CASE(fn) {#fn, fn}
        CASE(new_bitmap_is_empty),
        CASE(init_gives_size_with_all_bits_clear),
        CASE(init_drops_earlier_content),
        CASE(one_bit_set_then_cleared),
        CASE(bits_on_word_boundaries_are_independent),
        CASE(set_past_size_grows_to_that_bit),
        CASE(many_bits_set_upwards_all_read_back),
        CASE(negative_bit_is_rejected),
        CASE(bit_past_maximum_is_rejected_and_nothing_changes),
        CASE(init_above_maximum_is_rejected),
        CASE(maximum_below_size_is_rejected),
        CASE(clear_past_size_succeeds_without_growing),
        CASE(set_all_sets_exactly_the_size),
        CASE(clear_all_clears_every_bit),
        CASE(find_first_unset_takes_the_lowest_hole),
        CASE(find_first_unset_grows_a_full_bitmap),
        CASE(find_first_unset_at_maximum_fails),
        CASE(bitwise_and_keeps_common_bits),
        CASE(bitwise_or_grows_to_the_larger_size),
        CASE(bitwise_or_past_maximum_fails_unchanged),
        CASE(bitwise_xor_toggles_bits),
        CASE(equality_ignores_size),
        CASE(copy_gives_an_equal_bitmap),
#undef CASE
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        TCase *tc = tcase_create(cases[i].name);
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, cases[i].test);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void)
{
    int rc = opal_test_run(bitmap_suite());
    opal_class_finalize();
    return rc;
}
