/* opal_value_array_t: copies in, growth, shifting removal, alignment. */
#include "opal/opal_config.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "opal/class/opal_value_array.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

static opal_value_array_t va;

static void setup(void)
{
    OBJ_CONSTRUCT(&va, opal_value_array_t);
}

static void teardown(void)
{
    OBJ_DESTRUCT(&va);
}

typedef struct {
    uint64_t id;
    char name[24];
} record_t;

static record_t record_of(uint64_t i)
{
    record_t r;
    memset(&r, 0, sizeof(r));
    r.id = i;
    snprintf(r.name, sizeof(r.name), "r%llu", (unsigned long long) i);
    return r;
}

static void assert_record(const opal_value_array_t *array, size_t index, uint64_t id)
{
    record_t expected = record_of(id);
    const record_t *r = OPAL_VALUE_ARRAY_GET_ITEM(array, record_t, index);
    ck_assert_uint_eq(r->id, id);
    ck_assert_str_eq(r->name, expected.name);
}

START_TEST(new_array_is_empty)
{
    ck_assert_int_eq(opal_value_array_init(&va, sizeof(record_t)), OPAL_SUCCESS);
    ck_assert_uint_eq(opal_value_array_get_size(&va), 0);
    ck_assert_ptr_null(opal_value_array_get_item(&va, 0));
    ck_assert_int_eq(opal_value_array_remove_item(&va, 0), OPAL_ERR_NOT_FOUND);
}
END_TEST

START_TEST(uninitialised_or_zero_sized_elements_are_rejected)
{
    record_t r = record_of(1);
    ck_assert_int_eq(opal_value_array_append_item(&va, &r), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_value_array_reserve(&va, 10), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_value_array_init(&va, 0), OPAL_ERR_BAD_PARAM);
    ck_assert_uint_eq(opal_value_array_get_size(&va), 0);
}
END_TEST

START_TEST(append_copies_the_item)
{
    record_t r = record_of(7);
    ck_assert_int_eq(opal_value_array_init(&va, sizeof(record_t)), OPAL_SUCCESS);
    ck_assert_int_eq(opal_value_array_append_item(&va, &r), OPAL_SUCCESS);
    r.id = 99;
    ck_assert_uint_eq(opal_value_array_get_size(&va), 1);
    assert_record(&va, 0, 7);
    ck_assert_ptr_eq(opal_value_array_get_item(&va, 0), OPAL_VALUE_ARRAY_GET_BASE(&va, record_t));
}
END_TEST

START_TEST(many_appends_survive_growth)
{
    const size_t n = opal_test_iterations(100000);
    ck_assert_int_eq(opal_value_array_init(&va, sizeof(record_t)), OPAL_SUCCESS);
    for (size_t i = 0; i < n; ++i) {
        record_t r = record_of(i);
        ck_assert_int_eq(opal_value_array_append_item(&va, &r), OPAL_SUCCESS);
    }
    ck_assert_uint_eq(opal_value_array_get_size(&va), n);
    for (size_t i = 0; i < n; ++i) {
        assert_record(&va, i, i);
    }
}
END_TEST

START_TEST(get_item_past_the_end_is_null)
{
    record_t r = record_of(0);
    ck_assert_int_eq(opal_value_array_init(&va, sizeof(record_t)), OPAL_SUCCESS);
    ck_assert_int_eq(opal_value_array_reserve(&va, 100), OPAL_SUCCESS);
    ck_assert_int_eq(opal_value_array_append_item(&va, &r), OPAL_SUCCESS);
    ck_assert_ptr_nonnull(opal_value_array_get_item(&va, 0));
    ck_assert_ptr_null(opal_value_array_get_item(&va, 1));
    ck_assert_ptr_null(opal_value_array_get_item(&va, SIZE_MAX));
}
END_TEST

START_TEST(set_size_zero_fills_and_truncates)
{
    record_t r = record_of(5);
    ck_assert_int_eq(opal_value_array_init(&va, sizeof(record_t)), OPAL_SUCCESS);
    ck_assert_int_eq(opal_value_array_append_item(&va, &r), OPAL_SUCCESS);
    ck_assert_int_eq(opal_value_array_set_size(&va, 50), OPAL_SUCCESS);
    ck_assert_uint_eq(opal_value_array_get_size(&va), 50);
    assert_record(&va, 0, 5);
    for (size_t i = 1; i < 50; ++i) {
        const record_t *e = opal_value_array_get_item(&va, i);
        ck_assert_ptr_nonnull(e);
        ck_assert_uint_eq(e->id, 0);
        ck_assert_str_eq(e->name, "");
    }
    OPAL_VALUE_ARRAY_GET_ITEM(&va, record_t, 1)->id = 77;
    ck_assert_int_eq(opal_value_array_set_size(&va, 1), OPAL_SUCCESS);
    ck_assert_uint_eq(opal_value_array_get_size(&va), 1);
    assert_record(&va, 0, 5);
    /* Growing again after a shrink zero-fills: the dropped element does
     * not come back. */
    ck_assert_int_eq(opal_value_array_set_item(&va, 3, &r), OPAL_SUCCESS);
    ck_assert_uint_eq(OPAL_VALUE_ARRAY_GET_ITEM(&va, record_t, 1)->id, 0);
}
END_TEST

START_TEST(set_item_past_the_end_grows_zero_filled)
{
    record_t r = record_of(3);
    ck_assert_int_eq(opal_value_array_init(&va, sizeof(record_t)), OPAL_SUCCESS);
    ck_assert_int_eq(opal_value_array_set_item(&va, 3, &r), OPAL_SUCCESS);
    ck_assert_uint_eq(opal_value_array_get_size(&va), 4);
    assert_record(&va, 3, 3);
    ck_assert_uint_eq(OPAL_VALUE_ARRAY_GET_ITEM(&va, record_t, 2)->id, 0);
    r = record_of(9);
    ck_assert_int_eq(opal_value_array_set_item(&va, 0, &r), OPAL_SUCCESS);
    assert_record(&va, 0, 9);
    ck_assert_uint_eq(opal_value_array_get_size(&va), 4);
}
END_TEST

START_TEST(remove_item_shifts_the_rest_down)
{
    ck_assert_int_eq(opal_value_array_init(&va, sizeof(record_t)), OPAL_SUCCESS);
    for (uint64_t i = 0; i < 6; ++i) {
        record_t r = record_of(i);
        ck_assert_int_eq(opal_value_array_append_item(&va, &r), OPAL_SUCCESS);
    }
    ck_assert_int_eq(opal_value_array_remove_item(&va, 2), OPAL_SUCCESS); /* 0 1 3 4 5 */
    ck_assert_int_eq(opal_value_array_remove_item(&va, 0), OPAL_SUCCESS); /* 1 3 4 5 */
    ck_assert_int_eq(opal_value_array_remove_item(&va, 3), OPAL_SUCCESS); /* 1 3 4 */
    ck_assert_int_eq(opal_value_array_remove_item(&va, 3), OPAL_ERR_NOT_FOUND);
    ck_assert_uint_eq(opal_value_array_get_size(&va), 3);
    assert_record(&va, 0, 1);
    assert_record(&va, 1, 3);
    assert_record(&va, 2, 4);
}
END_TEST

START_TEST(reserve_keeps_size_and_storage_in_place)
{
    ck_assert_int_eq(opal_value_array_init(&va, sizeof(record_t)), OPAL_SUCCESS);
    ck_assert_int_eq(opal_value_array_reserve(&va, 1000), OPAL_SUCCESS);
    ck_assert_uint_eq(opal_value_array_get_size(&va), 0);
    record_t r = record_of(0);
    ck_assert_int_eq(opal_value_array_append_item(&va, &r), OPAL_SUCCESS);
    void *base = opal_value_array_get_item(&va, 0);
    for (uint64_t i = 1; i < 1000; ++i) {
        r = record_of(i);
        ck_assert_int_eq(opal_value_array_append_item(&va, &r), OPAL_SUCCESS);
    }
    ck_assert_ptr_eq(opal_value_array_get_item(&va, 0), base);
}
END_TEST

START_TEST(impossible_reserve_fails_cleanly)
{
    record_t r = record_of(1);
    ck_assert_int_eq(opal_value_array_init(&va, sizeof(record_t)), OPAL_SUCCESS);
    ck_assert_int_eq(opal_value_array_append_item(&va, &r), OPAL_SUCCESS);
    ck_assert_int_eq(opal_value_array_reserve(&va, SIZE_MAX), OPAL_ERR_OUT_OF_RESOURCE);
    ck_assert_int_eq(opal_value_array_set_size(&va, SIZE_MAX / 2), OPAL_ERR_OUT_OF_RESOURCE);
    ck_assert_uint_eq(opal_value_array_get_size(&va), 1);
    assert_record(&va, 0, 1);
}
END_TEST

/* A type with stricter alignment than its first member suggests. */
typedef struct {
    char tag;
    long double wide;
} wide_t;

START_TEST(elements_are_aligned_for_their_type)
{
    ck_assert_int_eq(opal_value_array_init(&va, sizeof(wide_t)), OPAL_SUCCESS);
    for (int i = 0; i < 33; ++i) {
        wide_t w = {.tag = (char) i, .wide = (long double) i / 3};
        ck_assert_int_eq(opal_value_array_append_item(&va, &w), OPAL_SUCCESS);
    }
    ck_assert_uint_eq((uintptr_t) OPAL_VALUE_ARRAY_GET_BASE(&va, wide_t) % alignof(max_align_t), 0);
    for (int i = 0; i < 33; ++i) {
        wide_t *w = OPAL_VALUE_ARRAY_GET_ITEM(&va, wide_t, i);
        ck_assert_uint_eq((uintptr_t) w % alignof(wide_t), 0);
        ck_assert_int_eq(w->tag, i);
        ck_assert(w->wide == (long double) i / 3);
    }
}
END_TEST

START_TEST(odd_sized_elements_do_not_overlap)
{
    ck_assert_int_eq(opal_value_array_init(&va, 3), OPAL_SUCCESS);
    for (int i = 0; i < 100; ++i) {
        unsigned char item[3] = {(unsigned char) i, (unsigned char) (i + 1),
                                 (unsigned char) (i + 2)};
        ck_assert_int_eq(opal_value_array_append_item(&va, item), OPAL_SUCCESS);
    }
    for (int i = 0; i < 100; ++i) {
        const unsigned char *item = opal_value_array_get_item(&va, (size_t) i);
        ck_assert_ptr_nonnull(item);
        ck_assert_int_eq(item[0], i);
        ck_assert_int_eq(item[2], i + 2);
    }
}
END_TEST

static Suite *value_array_suite(void)
{
    Suite *s = suite_create("opal_value_array");
    struct {
        const char *name;
        const TTest *test;
    } cases[] = {
#define CASE(fn) {#fn, fn}
        CASE(new_array_is_empty),
        CASE(uninitialised_or_zero_sized_elements_are_rejected),
        CASE(append_copies_the_item),
        CASE(many_appends_survive_growth),
        CASE(get_item_past_the_end_is_null),
        CASE(set_size_zero_fills_and_truncates),
        CASE(set_item_past_the_end_grows_zero_filled),
        CASE(remove_item_shifts_the_rest_down),
        CASE(reserve_keeps_size_and_storage_in_place),
        CASE(impossible_reserve_fails_cleanly),
        CASE(elements_are_aligned_for_their_type),
        CASE(odd_sized_elements_do_not_overlap),
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
    int rc = opal_test_run(value_array_suite());
    opal_class_finalize();
    return rc;
}
