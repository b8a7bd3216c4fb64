/* opal_list_t: empty, one, many, iteration with removal, insert, join,
 * splice, reverse, stable sort, debug-build membership checks. */
#include "opal/opal_config.h"

#include <signal.h>

#include "opal/class/opal_list.h"
#include "test/support/opal_test.h"

typedef struct {
    opal_list_item_t super;
    int key;
    int seq;
} num_item_t;
OBJ_CLASS_DECLARATION(num_item_t);
OBJ_CLASS_INSTANCE(num_item_t, opal_list_item_t, NULL, NULL);

static num_item_t *make_item(int key, int seq)
{
    num_item_t *it = OBJ_NEW(num_item_t);
    ck_assert_ptr_nonnull(it);
    it->key = key;
    it->seq = seq;
    return it;
}

static void fill(opal_list_t *list, int first, int count)
{
    for (int i = 0; i < count; ++i) {
        opal_list_append(list, &make_item(first + i, i)->super);
    }
}

/* Checks the keys in both directions and the length. */
static void assert_keys(opal_list_t *list, const int *keys, size_t n)
{
    ck_assert_uint_eq(opal_list_get_size(list), n);
    size_t i = 0;
    num_item_t *it;
    OPAL_LIST_FOREACH(it, list, num_item_t) {
        ck_assert_uint_lt(i, n);
        ck_assert_int_eq(it->key, keys[i]);
        ++i;
    }
    ck_assert_uint_eq(i, n);
    OPAL_LIST_FOREACH_REV(it, list, num_item_t) {
        --i;
        ck_assert_int_eq(it->key, keys[i]);
    }
    ck_assert_uint_eq(i, 0);
}

START_TEST(empty_list)
{
    opal_list_t list;
    OBJ_CONSTRUCT(&list, opal_list_t);
    ck_assert(opal_list_is_empty(&list));
    ck_assert_uint_eq(opal_list_get_size(&list), 0);
    ck_assert_ptr_null(opal_list_get_first(&list));
    ck_assert_ptr_null(opal_list_get_last(&list));
    ck_assert_ptr_null(opal_list_remove_first(&list));
    ck_assert_ptr_null(opal_list_remove_last(&list));
    int visits = 0;
    num_item_t *it;
    OPAL_LIST_FOREACH(it, &list, num_item_t) {
        ++visits;
    }
    ck_assert_int_eq(visits, 0);
    OBJ_DESTRUCT(&list);
}
END_TEST

START_TEST(one_item)
{
    opal_list_t list;
    OBJ_CONSTRUCT(&list, opal_list_t);
    num_item_t *a = make_item(5, 0);
    opal_list_append(&list, &a->super);
    ck_assert(!opal_list_is_empty(&list));
    ck_assert_ptr_eq(opal_list_get_first(&list), &a->super);
    ck_assert_ptr_eq(opal_list_get_last(&list), &a->super);
    ck_assert_ptr_eq(opal_list_remove_last(&list), &a->super);
    ck_assert(opal_list_is_empty(&list));
    OBJ_RELEASE(a);
    OBJ_DESTRUCT(&list);
}
END_TEST

START_TEST(append_prepend_insert_keep_order)
{
    opal_list_t list;
    OBJ_CONSTRUCT(&list, opal_list_t);
    opal_list_append(&list, &make_item(2, 0)->super);
    opal_list_append(&list, &make_item(4, 0)->super);
    opal_list_prepend(&list, &make_item(1, 0)->super);
    ck_assert(opal_list_insert(&list, &make_item(3, 0)->super, 2));
    ck_assert(opal_list_insert(&list, &make_item(5, 0)->super, 4));
    num_item_t *extra = make_item(99, 0);
    ck_assert(!opal_list_insert(&list, &extra->super, 6));
    OBJ_RELEASE(extra);
    assert_keys(&list, (const int[]){1, 2, 3, 4, 5}, 5);
    OPAL_LIST_DESTRUCT(&list);
}
END_TEST

START_TEST(many_items)
{
    enum { N = 10000 };
    opal_list_t *list = OBJ_NEW(opal_list_t);
    fill(list, 0, N);
    ck_assert_uint_eq(opal_list_get_size(list), N);
    int expect = 0;
    num_item_t *it;
    OPAL_LIST_FOREACH(it, list, num_item_t) {
        ck_assert_int_eq(it->key, expect++);
    }
    for (int i = 0; i < N; ++i) {
        opal_list_item_t *first = opal_list_remove_first(list);
        ck_assert_int_eq(((num_item_t *) first)->key, i);
        OBJ_RELEASE(first);
    }
    ck_assert(opal_list_is_empty(list));
    OPAL_LIST_RELEASE(list);
    ck_assert_ptr_null(list);
}
END_TEST

START_TEST(remove_while_iterating)
{
    opal_list_t list;
    OBJ_CONSTRUCT(&list, opal_list_t);
    fill(&list, 0, 10);
    num_item_t *it, *next;
    OPAL_LIST_FOREACH_SAFE(it, next, &list, num_item_t) {
        if (it->key % 2 == 1) {
            opal_list_remove_item(&list, &it->super);
            OBJ_RELEASE(it);
        }
    }
    assert_keys(&list, (const int[]){0, 2, 4, 6, 8}, 5);
    OPAL_LIST_FOREACH_SAFE_REV(it, next, &list, num_item_t) {
        if (it->key >= 4) {
            opal_list_remove_item(&list, &it->super);
            OBJ_RELEASE(it);
        }
    }
    assert_keys(&list, (const int[]){0, 2}, 2);
    OPAL_LIST_DESTRUCT(&list);
}
END_TEST

START_TEST(remove_item_returns_successor)
{
    opal_list_t list;
    OBJ_CONSTRUCT(&list, opal_list_t);
    fill(&list, 0, 3);
    opal_list_item_t *mid = opal_list_get_next(opal_list_get_first(&list));
    opal_list_item_t *after = opal_list_remove_item(&list, mid);
    ck_assert_int_eq(((num_item_t *) after)->key, 2);
    OBJ_RELEASE(mid);
    opal_list_item_t *last = opal_list_get_last(&list);
    ck_assert_ptr_eq(opal_list_remove_item(&list, last), opal_list_get_end(&list));
    OBJ_RELEASE(last);
    assert_keys(&list, (const int[]){0}, 1);
    OPAL_LIST_DESTRUCT(&list);
}
END_TEST

START_TEST(join_moves_everything)
{
    opal_list_t a, b, empty;
    OBJ_CONSTRUCT(&a, opal_list_t);
    OBJ_CONSTRUCT(&b, opal_list_t);
    OBJ_CONSTRUCT(&empty, opal_list_t);
    fill(&a, 0, 2);  /* 0 1 */
    fill(&b, 10, 3); /* 10 11 12 */
    opal_list_join(&a, opal_list_get_next(opal_list_get_first(&a)), &b);
    assert_keys(&a, (const int[]){0, 10, 11, 12, 1}, 5);
    ck_assert(opal_list_is_empty(&b));
    ck_assert_uint_eq(opal_list_get_size(&b), 0);
    opal_list_join(&a, opal_list_get_end(&a), &empty);
    assert_keys(&a, (const int[]){0, 10, 11, 12, 1}, 5);
    /* Items moved by join belong to the new list: b can take them back. */
    opal_list_join(&b, opal_list_get_end(&b), &a);
    assert_keys(&b, (const int[]){0, 10, 11, 12, 1}, 5);
    OPAL_LIST_DESTRUCT(&a);
    OPAL_LIST_DESTRUCT(&b);
    OBJ_DESTRUCT(&empty);
}
END_TEST

START_TEST(splice_moves_a_range)
{
    opal_list_t a, b;
    OBJ_CONSTRUCT(&a, opal_list_t);
    OBJ_CONSTRUCT(&b, opal_list_t);
    fill(&a, 0, 2);  /* 0 1 */
    fill(&b, 10, 5); /* 10 11 12 13 14 */
    opal_list_item_t *first = opal_list_get_next(opal_list_get_first(&b)); /* 11 */
    opal_list_item_t *last = opal_list_get_last(&b);                      /* 14 */
    opal_list_splice(&a, opal_list_get_last(&a), &b, first, last);
    assert_keys(&a, (const int[]){0, 11, 12, 13, 1}, 5);
    assert_keys(&b, (const int[]){10, 14}, 2);
    /* To the end of source, and to the front of the destination. */
    opal_list_splice(&a, opal_list_get_first(&a), &b, opal_list_get_first(&b),
                     opal_list_get_end(&b));
    assert_keys(&a, (const int[]){10, 14, 0, 11, 12, 13, 1}, 7);
    ck_assert(opal_list_is_empty(&b));
    OPAL_LIST_DESTRUCT(&a);
    OBJ_DESTRUCT(&b);
}
END_TEST

START_TEST(reverse_in_place)
{
    opal_list_t list;
    OBJ_CONSTRUCT(&list, opal_list_t);
    opal_list_reverse(&list);
    ck_assert(opal_list_is_empty(&list));
    fill(&list, 1, 4);
    opal_list_reverse(&list);
    assert_keys(&list, (const int[]){4, 3, 2, 1}, 4);
    opal_list_append(&list, &make_item(0, 0)->super);
    assert_keys(&list, (const int[]){4, 3, 2, 1, 0}, 5);
    OPAL_LIST_DESTRUCT(&list);
}
END_TEST

static int compare_keys(opal_list_item_t **a, opal_list_item_t **b)
{
    return ((num_item_t *) *a)->key - ((num_item_t *) *b)->key;
}

START_TEST(sort_is_ordered_and_stable)
{
    opal_list_t list;
    OBJ_CONSTRUCT(&list, opal_list_t);
    enum { N = 1000 };
    unsigned seed = 12345;
    for (int i = 0; i < N; ++i) {
        seed = seed * 1103515245u + 12345u;
        opal_list_append(&list, &make_item((int) ((seed >> 16) % 50), i)->super);
    }
    opal_list_sort(&list, compare_keys);
    ck_assert_uint_eq(opal_list_get_size(&list), N);
    num_item_t *it, *prev = NULL;
    int count = 0;
    OPAL_LIST_FOREACH(it, &list, num_item_t) {
        if (NULL != prev) {
            ck_assert_int_le(prev->key, it->key);
            if (prev->key == it->key) {
                ck_assert_int_lt(prev->seq, it->seq);
            }
        }
        prev = it;
        ++count;
    }
    ck_assert_int_eq(count, N);
    /* Back links are right too. */
    int back = 0;
    OPAL_LIST_FOREACH_REV(it, &list, num_item_t) {
        ++back;
    }
    ck_assert_int_eq(back, N);
    OPAL_LIST_DESTRUCT(&list);
}
END_TEST

START_TEST(sort_small_lists)
{
    opal_list_t list;
    OBJ_CONSTRUCT(&list, opal_list_t);
    opal_list_sort(&list, compare_keys);
    ck_assert(opal_list_is_empty(&list));
    opal_list_append(&list, &make_item(2, 0)->super);
    opal_list_sort(&list, compare_keys);
    assert_keys(&list, (const int[]){2}, 1);
    opal_list_append(&list, &make_item(1, 0)->super);
    opal_list_sort(&list, compare_keys);
    assert_keys(&list, (const int[]){1, 2}, 2);
    OPAL_LIST_DESTRUCT(&list);
}
END_TEST

#if OPAL_ENABLE_DEBUG
START_TEST(debug_catches_item_in_two_lists)
{
    opal_list_t a, b;
    OBJ_CONSTRUCT(&a, opal_list_t);
    OBJ_CONSTRUCT(&b, opal_list_t);
    num_item_t *it = make_item(1, 0);
    opal_list_append(&a, &it->super);
    opal_list_append(&b, &it->super);
}
END_TEST

START_TEST(debug_catches_removal_from_wrong_list)
{
    opal_list_t a, b;
    OBJ_CONSTRUCT(&a, opal_list_t);
    OBJ_CONSTRUCT(&b, opal_list_t);
    num_item_t *it = make_item(1, 0);
    opal_list_append(&a, &it->super);
    opal_list_remove_item(&b, &it->super);
}
END_TEST
#endif

static Suite *list_suite(void)
{
    Suite *s = suite_create("opal_list");
    OPAL_TEST_ADD(s, empty_list);
    OPAL_TEST_ADD(s, one_item);
    OPAL_TEST_ADD(s, append_prepend_insert_keep_order);
    OPAL_TEST_ADD(s, many_items);
    OPAL_TEST_ADD(s, remove_while_iterating);
    OPAL_TEST_ADD(s, remove_item_returns_successor);
    OPAL_TEST_ADD(s, join_moves_everything);
    OPAL_TEST_ADD(s, splice_moves_a_range);
    OPAL_TEST_ADD(s, reverse_in_place);
    OPAL_TEST_ADD(s, sort_is_ordered_and_stable);
    OPAL_TEST_ADD(s, sort_small_lists);
#if OPAL_ENABLE_DEBUG
    OPAL_TEST_ADD_SIGNAL(s, debug_catches_item_in_two_lists, SIGABRT);
    OPAL_TEST_ADD_SIGNAL(s, debug_catches_removal_from_wrong_list, SIGABRT);
#endif
    return s;
}

int main(void)
{
    int rc = opal_test_run(list_suite());
    opal_class_finalize();
    return rc;
}
