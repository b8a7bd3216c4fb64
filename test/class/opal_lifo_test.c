/* opal_lifo_t: empty, one, many, order, the single-threaded variants, and
 * items conserved when two threads push and pop (the heavy concurrent runs
 * are in opal_stress_test.c). */
#include "opal/opal_config.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "opal/class/opal_lifo.h"
#include "test/support/opal_test.h"

enum { NITEMS = 64 };

typedef struct {
    opal_list_item_t super;
    _Atomic int id;
} item_t;
OBJ_CLASS_DECLARATION(item_t);
OBJ_CLASS_INSTANCE(item_t, opal_list_item_t, NULL, NULL);

static item_t items[NITEMS];
static opal_lifo_t lifo;

static void setup(void)
{
    OBJ_CONSTRUCT(&lifo, opal_lifo_t);
    for (int i = 0; i < NITEMS; ++i) {
        OBJ_CONSTRUCT(&items[i], item_t);
        items[i].id = i;
    }
}

static void teardown(void)
{
    for (int i = 0; i < NITEMS; ++i) {
        OBJ_DESTRUCT(&items[i]);
    }
    OBJ_DESTRUCT(&lifo);
}

START_TEST(new_lifo_is_empty)
{
    ck_assert(opal_lifo_is_empty(&lifo));
    ck_assert_ptr_null(opal_lifo_pop(&lifo));
    ck_assert_ptr_null(opal_lifo_pop_st(&lifo));
    ck_assert(opal_lifo_is_empty(&lifo));
}
END_TEST

START_TEST(one_item_comes_back)
{
    ck_assert_ptr_null(opal_lifo_push(&lifo, &items[0].super));
    ck_assert(!opal_lifo_is_empty(&lifo));
    ck_assert_ptr_eq(opal_lifo_pop(&lifo), &items[0].super);
    ck_assert(opal_lifo_is_empty(&lifo));
    ck_assert_ptr_null(opal_lifo_pop(&lifo));
}
END_TEST

START_TEST(push_returns_previous_top)
{
    ck_assert_ptr_null(opal_lifo_push(&lifo, &items[0].super));
    ck_assert_ptr_eq(opal_lifo_push(&lifo, &items[1].super), &items[0].super);
    ck_assert_ptr_eq(opal_lifo_push_st(&lifo, &items[2].super), &items[1].super);
}
END_TEST

START_TEST(many_items_pop_in_reverse_order)
{
    for (int i = 0; i < NITEMS; ++i) {
        opal_lifo_push(&lifo, &items[i].super);
    }
    for (int i = NITEMS - 1; i >= 0; --i) {
        item_t *it = (item_t *) opal_lifo_pop(&lifo);
        ck_assert_ptr_nonnull(it);
        ck_assert_int_eq(it->id, i);
    }
    ck_assert_ptr_null(opal_lifo_pop(&lifo));
}
END_TEST

START_TEST(single_thread_variants_keep_lifo_order)
{
    for (int i = 0; i < NITEMS; ++i) {
        opal_lifo_push_st(&lifo, &items[i].super);
    }
    for (int i = NITEMS - 1; i >= 0; --i) {
        item_t *it = (item_t *) opal_lifo_pop_st(&lifo);
        ck_assert_ptr_nonnull(it);
        ck_assert_int_eq(it->id, i);
    }
    ck_assert_ptr_null(opal_lifo_pop_st(&lifo));
    ck_assert(opal_lifo_is_empty(&lifo));
}
END_TEST

START_TEST(interleaved_push_and_pop_return_latest)
{
    opal_lifo_push(&lifo, &items[0].super);
    opal_lifo_push(&lifo, &items[1].super);
    ck_assert_ptr_eq(opal_lifo_pop(&lifo), &items[1].super);
    opal_lifo_push(&lifo, &items[2].super);
    ck_assert_ptr_eq(opal_lifo_pop(&lifo), &items[2].super);
    /* A popped item can go straight back. */
    opal_lifo_push(&lifo, &items[2].super);
    ck_assert_ptr_eq(opal_lifo_pop(&lifo), &items[2].super);
    ck_assert_ptr_eq(opal_lifo_pop(&lifo), &items[0].super);
    ck_assert_ptr_null(opal_lifo_pop(&lifo));
}
END_TEST

START_TEST(heap_lifo_from_obj_new)
{
    /* Through void *: OBJ_NEW's cast from opal_object_t * trips clang's
     * -Wcast-align on this 16-byte aligned class (malloc's memory is
     * aligned enough). */
    opal_lifo_t *l = (void *) OBJ_NEW_FROM_CLASS(OBJ_CLASS(opal_lifo_t));
    ck_assert_uint_eq((uintptr_t) l % _Alignof(opal_lifo_t), 0);
    ck_assert_ptr_nonnull(l);
    ck_assert(opal_lifo_is_empty(l));
    opal_lifo_push(l, &items[5].super);
    ck_assert_ptr_eq(opal_lifo_pop(l), &items[5].super);
    OBJ_RELEASE(l);
    ck_assert_ptr_null(l);
}
END_TEST

/* Two threads each pop an item and push it back many times; every item
 * is found again exactly once at the end. */
static opal_atomic_int32_t conflicts;
static void *pop_push_loop(void *arg)
{
    size_t n = *(size_t *) arg;
    for (size_t i = 0; i < n; ++i) {
        item_t *it = (item_t *) opal_lifo_pop(&lifo);
        if (NULL == it) {
            continue;
        }
        /* id is negated while this thread owns the item: a second owner
         * would find it negative. */
        int id = atomic_exchange(&it->id, -1);
        if (id < 0) {
            atomic_fetch_add(&conflicts, 1);
        }
        atomic_store(&it->id, id);
        opal_lifo_push(&lifo, &it->super);
    }
    return NULL;
}

START_TEST(two_threads_conserve_items)
{
    /* Few items, so the lifo is often empty and tops are reused. */
    enum { FEW = 3 };
    for (int i = 0; i < FEW; ++i) {
        opal_lifo_push(&lifo, &items[i].super);
    }
    atomic_store(&conflicts, 0);
    size_t n = opal_test_iterations(200000);
    pthread_t t[2];
    for (int i = 0; i < 2; ++i) {
        ck_assert_int_eq(pthread_create(&t[i], NULL, pop_push_loop, &n), 0);
    }
    for (int i = 0; i < 2; ++i) {
        pthread_join(t[i], NULL);
    }
    ck_assert_int_eq(atomic_load(&conflicts), 0);
    int seen[FEW] = {0};
    item_t *it;
    while (NULL != (it = (item_t *) opal_lifo_pop(&lifo))) {
        ck_assert_int_ge(it->id, 0);
        ck_assert_int_lt(it->id, FEW);
        ++seen[it->id];
    }
    for (int i = 0; i < FEW; ++i) {
        ck_assert_int_eq(seen[i], 1);
    }
}
END_TEST

#if OPAL_ENABLE_DEBUG
START_TEST(debug_catches_push_of_destructed_item)
{
    item_t dead;
    OBJ_CONSTRUCT(&dead, item_t);
    OBJ_DESTRUCT(&dead);
    opal_lifo_push(&lifo, &dead.super);
}
END_TEST
#endif

static void add(Suite *s, const char *name, const TTest *test, int signal)
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, setup, teardown);
    if (0 != signal) {
        tcase_add_test_raise_signal(tc, test, signal);
    } else {
        tcase_add_test(tc, test);
    }
    suite_add_tcase(s, tc);
}
#define ADD(s, fn) add((s), #fn, fn, 0)

static Suite *lifo_suite(void)
{
    Suite *s = suite_create("opal_lifo");
    ADD(s, new_lifo_is_empty);
    ADD(s, one_item_comes_back);
    ADD(s, push_returns_previous_top);
    ADD(s, many_items_pop_in_reverse_order);
    ADD(s, single_thread_variants_keep_lifo_order);
    ADD(s, interleaved_push_and_pop_return_latest);
    ADD(s, heap_lifo_from_obj_new);
    ADD(s, two_threads_conserve_items);
#if OPAL_ENABLE_DEBUG
    if (opal_test_can_fork()) {
        add(s, "debug_catches_push_of_destructed_item", debug_catches_push_of_destructed_item,
            SIGABRT);
    }
#endif
    return s;
}

int main(void)
{
    int rc = opal_test_run(lifo_suite());
    opal_class_finalize();
    return rc;
}
