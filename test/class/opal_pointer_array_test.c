/* opal_pointer_array_t: lowest-free allocation, growth, limits, removal,
 * test-and-set, and adds from several threads. */
#include "opal/opal_config.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

#include "opal/class/opal_pointer_array.h"
#include "opal/threads/opal_mutex.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

static opal_pointer_array_t pa;

static void setup(void)
{
    OBJ_CONSTRUCT(&pa, opal_pointer_array_t);
}

static void teardown(void)
{
    OBJ_DESTRUCT(&pa);
}

static void *ptr_of(int i)
{
    return (void *) (uintptr_t) (i * 8 + 8);
}

START_TEST(new_array_is_empty)
{
    ck_assert_int_eq(opal_pointer_array_get_size(&pa), 0);
    ck_assert_int_eq(opal_pointer_array_get_num_used(&pa), 0);
    ck_assert_ptr_null(opal_pointer_array_get_item(&pa, 0));
    ck_assert_int_eq(opal_pointer_array_remove_item(&pa, 0), OPAL_ERR_NOT_FOUND);
}
END_TEST

START_TEST(add_returns_the_lowest_free_index)
{
    for (int i = 0; i < 3; ++i) {
        ck_assert_int_eq(opal_pointer_array_add(&pa, ptr_of(i)), i);
    }
    ck_assert_int_eq(opal_pointer_array_remove_item(&pa, 1), OPAL_SUCCESS);
    ck_assert_int_eq(opal_pointer_array_add(&pa, ptr_of(10)), 1);
    ck_assert_int_eq(opal_pointer_array_add(&pa, ptr_of(11)), 3);
    ck_assert_ptr_eq(opal_pointer_array_get_item(&pa, 1), ptr_of(10));
    ck_assert_ptr_eq(opal_pointer_array_get_item(&pa, 3), ptr_of(11));
    ck_assert_int_eq(opal_pointer_array_get_num_used(&pa), 4);
}
END_TEST

START_TEST(add_of_null_is_rejected)
{
    ck_assert_int_eq(opal_pointer_array_add(&pa, NULL), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_pointer_array_get_num_used(&pa), 0);
}
END_TEST

START_TEST(set_item_grows_to_the_index)
{
    ck_assert_int_eq(opal_pointer_array_set_item(&pa, 1000, ptr_of(1)), OPAL_SUCCESS);
    ck_assert_int_ge(opal_pointer_array_get_size(&pa), 1001);
    ck_assert_ptr_eq(opal_pointer_array_get_item(&pa, 1000), ptr_of(1));
    ck_assert_ptr_null(opal_pointer_array_get_item(&pa, 999));
    ck_assert_int_eq(opal_pointer_array_get_num_used(&pa), 1);
    /* The hole below stays available to add. */
    ck_assert_int_eq(opal_pointer_array_add(&pa, ptr_of(2)), 0);
}
END_TEST

START_TEST(set_item_overwrites_and_null_frees)
{
    ck_assert_int_eq(opal_pointer_array_set_item(&pa, 2, ptr_of(1)), OPAL_SUCCESS);
    ck_assert_int_eq(opal_pointer_array_set_item(&pa, 2, ptr_of(2)), OPAL_SUCCESS);
    ck_assert_int_eq(opal_pointer_array_get_num_used(&pa), 1);
    ck_assert_ptr_eq(opal_pointer_array_get_item(&pa, 2), ptr_of(2));
    ck_assert_int_eq(opal_pointer_array_set_item(&pa, 2, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(opal_pointer_array_get_num_used(&pa), 0);
    ck_assert_ptr_null(opal_pointer_array_get_item(&pa, 2));
    ck_assert_int_eq(opal_pointer_array_set_item(&pa, 5000, NULL), OPAL_SUCCESS);
}
END_TEST

START_TEST(get_item_outside_the_array_is_null)
{
    ck_assert_int_eq(opal_pointer_array_add(&pa, ptr_of(0)), 0);
    ck_assert_ptr_null(opal_pointer_array_get_item(&pa, -1));
    ck_assert_ptr_null(opal_pointer_array_get_item(&pa, opal_pointer_array_get_size(&pa)));
    ck_assert_ptr_null(opal_pointer_array_get_item(&pa, INT_MAX));
}
END_TEST

START_TEST(removing_absent_slots_reports_not_found)
{
    ck_assert_int_eq(opal_pointer_array_add(&pa, ptr_of(0)), 0);
    ck_assert_int_eq(opal_pointer_array_remove_item(&pa, 1), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(opal_pointer_array_remove_item(&pa, 100000), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(opal_pointer_array_remove_item(&pa, -1), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_pointer_array_remove_item(&pa, 0), OPAL_SUCCESS);
    ck_assert_int_eq(opal_pointer_array_remove_item(&pa, 0), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(opal_pointer_array_get_num_used(&pa), 0);
}
END_TEST

START_TEST(maximum_size_limits_every_way_in)
{
    ck_assert_int_eq(opal_pointer_array_init(&pa, 0, 4, 3), OPAL_SUCCESS);
    for (int i = 0; i < 4; ++i) {
        ck_assert_int_eq(opal_pointer_array_add(&pa, ptr_of(i)), i);
    }
    ck_assert_int_eq(opal_pointer_array_get_size(&pa), 4); /* capped, not a block multiple */
    ck_assert_int_eq(opal_pointer_array_add(&pa, ptr_of(4)), OPAL_ERR_OUT_OF_RESOURCE);
    ck_assert_int_eq(opal_pointer_array_set_item(&pa, 4, ptr_of(4)), OPAL_ERR_BAD_PARAM);
    ck_assert(!opal_pointer_array_test_and_set_item(&pa, 4, ptr_of(4)));
    ck_assert_int_eq(opal_pointer_array_set_size(&pa, 5), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_pointer_array_get_num_used(&pa), 4);
    /* A freed slot below the maximum is usable again. */
    ck_assert_int_eq(opal_pointer_array_remove_item(&pa, 2), OPAL_SUCCESS);
    ck_assert_int_eq(opal_pointer_array_add(&pa, ptr_of(5)), 2);
}
END_TEST

START_TEST(init_rejects_bad_arguments)
{
    ck_assert_int_eq(opal_pointer_array_init(&pa, -1, 10, 1), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_pointer_array_init(&pa, 0, 0, 1), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_pointer_array_init(&pa, 0, 10, 0), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_pointer_array_init(&pa, 11, 10, 1), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_pointer_array_init(&pa, 10, 100, 1), OPAL_SUCCESS);
    ck_assert_int_eq(opal_pointer_array_get_size(&pa), 10);
    /* The maximum cannot drop below what is already allocated. */
    ck_assert_int_eq(opal_pointer_array_init(&pa, 0, 5, 1), OPAL_ERR_BAD_PARAM);
}
END_TEST

START_TEST(growth_is_by_whole_blocks)
{
    ck_assert_int_eq(opal_pointer_array_init(&pa, 0, INT_MAX, 10), OPAL_SUCCESS);
    for (int i = 0; i < 1000; ++i) {
        ck_assert_int_eq(opal_pointer_array_add(&pa, ptr_of(i)), i);
        int size = opal_pointer_array_get_size(&pa);
        ck_assert_int_eq(size % 10, 0);
        ck_assert_int_gt(size, i);
    }
}
END_TEST

START_TEST(many_adds_refill_removed_holes_in_order)
{
    const int n = (int) opal_test_iterations(100000);
    for (int i = 0; i < n; ++i) {
        ck_assert_int_eq(opal_pointer_array_add(&pa, ptr_of(i)), i);
    }
    for (int i = 0; i < n; i += 3) {
        ck_assert_int_eq(opal_pointer_array_remove_item(&pa, i), OPAL_SUCCESS);
    }
    ck_assert_int_eq(opal_pointer_array_get_num_used(&pa), n - (n + 2) / 3);
    for (int i = 0; i < n; i += 3) {
        ck_assert_int_eq(opal_pointer_array_add(&pa, ptr_of(n)), i);
    }
    ck_assert_int_eq(opal_pointer_array_add(&pa, ptr_of(n)), n);
    for (int i = 1; i < n; i += 3) {
        ck_assert_ptr_eq(opal_pointer_array_get_item(&pa, i), ptr_of(i));
    }
}
END_TEST

START_TEST(large_index_is_reachable)
{
    const int big = 1 << 22;
    ck_assert_int_eq(opal_pointer_array_set_item(&pa, big, ptr_of(1)), OPAL_SUCCESS);
    ck_assert_ptr_eq(opal_pointer_array_get_item(&pa, big), ptr_of(1));
    ck_assert_int_eq(opal_pointer_array_get_num_used(&pa), 1);
    ck_assert_int_eq(opal_pointer_array_remove_item(&pa, big), OPAL_SUCCESS);
    ck_assert_int_eq(opal_pointer_array_add(&pa, ptr_of(2)), 0);
}
END_TEST

START_TEST(test_and_set_takes_only_free_slots)
{
    ck_assert(opal_pointer_array_test_and_set_item(&pa, 7, ptr_of(1)));
    ck_assert(!opal_pointer_array_test_and_set_item(&pa, 7, ptr_of(2)));
    ck_assert_ptr_eq(opal_pointer_array_get_item(&pa, 7), ptr_of(1));
    ck_assert(!opal_pointer_array_test_and_set_item(&pa, 8, NULL));
    ck_assert(!opal_pointer_array_test_and_set_item(&pa, -1, ptr_of(3)));
    ck_assert_int_eq(opal_pointer_array_get_num_used(&pa), 1);
}
END_TEST

START_TEST(remove_all_frees_every_slot)
{
    for (int i = 0; i < 100; ++i) {
        ck_assert_int_eq(opal_pointer_array_add(&pa, ptr_of(i)), i);
    }
    int size = opal_pointer_array_get_size(&pa);
    opal_pointer_array_remove_all(&pa);
    ck_assert_int_eq(opal_pointer_array_get_num_used(&pa), 0);
    ck_assert_int_eq(opal_pointer_array_get_size(&pa), size);
    ck_assert_ptr_null(opal_pointer_array_get_item(&pa, 50));
    ck_assert_int_eq(opal_pointer_array_add(&pa, ptr_of(0)), 0);
}
END_TEST

#define NTHREADS 4
static void *add_many(void *arg)
{
    int *indices = arg;
    const int n = (int) opal_test_iterations(20000);
    for (int i = 0; i < n; ++i) {
        indices[i] = opal_pointer_array_add(&pa, ptr_of(i));
    }
    return NULL;
}

START_TEST(concurrent_adds_get_distinct_indices)
{
    const int n = (int) opal_test_iterations(20000);
    int *indices = malloc(sizeof(int) * (size_t) n * NTHREADS);
    unsigned char *seen = calloc((size_t) n * NTHREADS, 1);
    pthread_t threads[NTHREADS];
    bool was = opal_set_using_threads(true);
    for (int t = 0; t < NTHREADS; ++t) {
        ck_assert_int_eq(pthread_create(&threads[t], NULL, add_many, indices + t * n), 0);
    }
    for (int t = 0; t < NTHREADS; ++t) {
        pthread_join(threads[t], NULL);
    }
    opal_set_using_threads(was);
    ck_assert_int_eq(opal_pointer_array_get_num_used(&pa), n * NTHREADS);
    for (int i = 0; i < n * NTHREADS; ++i) {
        ck_assert_int_ge(indices[i], 0);
        ck_assert_int_lt(indices[i], n * NTHREADS);
        ck_assert_int_eq(seen[indices[i]], 0);
        seen[indices[i]] = 1;
    }
    free(seen);
    free(indices);
}
END_TEST

static Suite *pointer_array_suite(void)
{
    Suite *s = suite_create("opal_pointer_array");
    struct {
        const char *name;
        const TTest *test;
    } cases[] = {
#define CASE(fn) {#fn, fn}
        CASE(new_array_is_empty),
        CASE(add_returns_the_lowest_free_index),
        CASE(add_of_null_is_rejected),
        CASE(set_item_grows_to_the_index),
        CASE(set_item_overwrites_and_null_frees),
        CASE(get_item_outside_the_array_is_null),
        CASE(removing_absent_slots_reports_not_found),
        CASE(maximum_size_limits_every_way_in),
        CASE(init_rejects_bad_arguments),
        CASE(growth_is_by_whole_blocks),
        CASE(many_adds_refill_removed_holes_in_order),
        CASE(large_index_is_reachable),
        CASE(test_and_set_takes_only_free_slots),
        CASE(remove_all_frees_every_slot),
        CASE(concurrent_adds_get_distinct_indices),
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
    int rc = opal_test_run(pointer_array_suite());
    opal_class_finalize();
    return rc;
}
