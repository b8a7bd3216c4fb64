/* opal_fifo_t: empty, one, many, order, reuse after emptying, the single-
 * threaded variants, and order kept between a producer and a consumer
 * thread (the heavy concurrent runs are in opal_stress_test.c). */
#include "opal/opal_config.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>

#include "opal/class/opal_fifo.h"
#include "test/support/opal_test.h"

enum { NITEMS = 64 };

typedef struct {
    opal_list_item_t super;
    int id;
} item_t;
OBJ_CLASS_DECLARATION(item_t);
OBJ_CLASS_INSTANCE(item_t, opal_list_item_t, NULL, NULL);

static item_t items[NITEMS];
static opal_fifo_t fifo;

static void setup(void)
{
    OBJ_CONSTRUCT(&fifo, opal_fifo_t);
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
    OBJ_DESTRUCT(&fifo);
}

START_TEST(new_fifo_is_empty)
{
    ck_assert(opal_fifo_is_empty(&fifo));
    ck_assert_ptr_null(opal_fifo_pop(&fifo));
    ck_assert_ptr_null(opal_fifo_pop_st(&fifo));
    ck_assert(opal_fifo_is_empty(&fifo));
}
END_TEST

START_TEST(one_item_comes_back)
{
    ck_assert_ptr_null(opal_fifo_push(&fifo, &items[0].super));
    ck_assert(!opal_fifo_is_empty(&fifo));
    ck_assert_ptr_eq(opal_fifo_pop(&fifo), &items[0].super);
    ck_assert(opal_fifo_is_empty(&fifo));
    ck_assert_ptr_null(opal_fifo_pop(&fifo));
}
END_TEST

START_TEST(push_returns_previous_tail)
{
    ck_assert_ptr_null(opal_fifo_push(&fifo, &items[0].super));
    ck_assert_ptr_eq(opal_fifo_push(&fifo, &items[1].super), &items[0].super);
    ck_assert_ptr_eq(opal_fifo_push_st(&fifo, &items[2].super), &items[1].super);
}
END_TEST

START_TEST(many_items_pop_in_push_order)
{
    for (int i = 0; i < NITEMS; ++i) {
        opal_fifo_push(&fifo, &items[i].super);
    }
    for (int i = 0; i < NITEMS; ++i) {
        item_t *it = (item_t *) opal_fifo_pop(&fifo);
        ck_assert_ptr_nonnull(it);
        ck_assert_int_eq(it->id, i);
    }
    ck_assert_ptr_null(opal_fifo_pop(&fifo));
}
END_TEST

START_TEST(single_thread_variants_keep_fifo_order)
{
    for (int i = 0; i < NITEMS; ++i) {
        opal_fifo_push_st(&fifo, &items[i].super);
    }
    for (int i = 0; i < NITEMS; ++i) {
        item_t *it = (item_t *) opal_fifo_pop_st(&fifo);
        ck_assert_ptr_nonnull(it);
        ck_assert_int_eq(it->id, i);
    }
    ck_assert_ptr_null(opal_fifo_pop_st(&fifo));
    ck_assert(opal_fifo_is_empty(&fifo));
}
END_TEST

START_TEST(emptied_fifo_accepts_new_items)
{
    /* Popping the last item resets the tail; the next push must become the
     * head again, repeatedly. */
    for (int round = 0; round < 3; ++round) {
        ck_assert_ptr_null(opal_fifo_push(&fifo, &items[round].super));
        ck_assert_ptr_eq(opal_fifo_pop(&fifo), &items[round].super);
        ck_assert(opal_fifo_is_empty(&fifo));
    }
    opal_fifo_push(&fifo, &items[10].super);
    opal_fifo_push(&fifo, &items[11].super);
    ck_assert_ptr_eq(opal_fifo_pop(&fifo), &items[10].super);
    ck_assert_ptr_eq(opal_fifo_pop(&fifo), &items[11].super);
    ck_assert_ptr_null(opal_fifo_pop(&fifo));
}
END_TEST

START_TEST(interleaved_push_and_pop_keep_order)
{
    opal_fifo_push(&fifo, &items[0].super);
    opal_fifo_push(&fifo, &items[1].super);
    ck_assert_ptr_eq(opal_fifo_pop(&fifo), &items[0].super);
    opal_fifo_push(&fifo, &items[2].super);
    /* A popped item can go straight back, at the end. */
    opal_fifo_push(&fifo, &items[0].super);
    ck_assert_ptr_eq(opal_fifo_pop(&fifo), &items[1].super);
    ck_assert_ptr_eq(opal_fifo_pop(&fifo), &items[2].super);
    ck_assert_ptr_eq(opal_fifo_pop(&fifo), &items[0].super);
    ck_assert_ptr_null(opal_fifo_pop(&fifo));
}
END_TEST

START_TEST(heap_fifo_from_obj_new)
{
    /* Through void *: OBJ_NEW's cast from opal_object_t * trips clang's
     * -Wcast-align on this 16-byte aligned class (malloc's memory is
     * aligned enough). */
    opal_fifo_t *f = (void *) OBJ_NEW_FROM_CLASS(OBJ_CLASS(opal_fifo_t));
    ck_assert_uint_eq((uintptr_t) f % _Alignof(opal_fifo_t), 0);
    ck_assert_ptr_nonnull(f);
    ck_assert(opal_fifo_is_empty(f));
    opal_fifo_push(f, &items[5].super);
    ck_assert_ptr_eq(opal_fifo_pop(f), &items[5].super);
    OBJ_RELEASE(f);
    ck_assert_ptr_null(f);
}
END_TEST

/* A producer thread pushes numbered items; the consumer (this thread) pops
 * them concurrently and must see every number once, in order. The queue is
 * often empty, so the last-item handover races with pushes. */
typedef struct {
    item_t *seq;
    size_t n;
} stream_t;

static void *produce(void *arg)
{
    stream_t *st = arg;
    for (size_t i = 0; i < st->n; ++i) {
        opal_fifo_push(&fifo, &st->seq[i].super);
    }
    return NULL;
}

START_TEST(producer_and_consumer_threads_keep_order)
{
    stream_t st = {.n = opal_test_iterations(200000)};
    st.seq = calloc(st.n, sizeof(*st.seq));
    ck_assert_ptr_nonnull(st.seq);
    for (size_t i = 0; i < st.n; ++i) {
        OBJ_CONSTRUCT(&st.seq[i], item_t);
        st.seq[i].id = (int) i;
    }
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, produce, &st), 0);
    size_t expected = 0, out_of_order = 0;
    while (expected < st.n) {
        item_t *it = (item_t *) opal_fifo_pop(&fifo);
        if (NULL == it) {
            continue;
        }
        if ((size_t) it->id != expected) {
            ++out_of_order;
        }
        ++expected;
    }
    pthread_join(t, NULL);
    ck_assert_uint_eq(out_of_order, 0);
    ck_assert_ptr_null(opal_fifo_pop(&fifo));
    for (size_t i = 0; i < st.n; ++i) {
        OBJ_DESTRUCT(&st.seq[i]);
    }
    free(st.seq);
}
END_TEST

#if OPAL_ENABLE_DEBUG
START_TEST(debug_catches_push_of_destructed_item)
{
    item_t dead;
    OBJ_CONSTRUCT(&dead, item_t);
    OBJ_DESTRUCT(&dead);
    opal_fifo_push(&fifo, &dead.super);
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

static Suite *fifo_suite(void)
{
    Suite *s = suite_create("opal_fifo");
    ADD(s, new_fifo_is_empty);
    ADD(s, one_item_comes_back);
    ADD(s, push_returns_previous_tail);
    ADD(s, many_items_pop_in_push_order);
    ADD(s, single_thread_variants_keep_fifo_order);
    ADD(s, emptied_fifo_accepts_new_items);
    ADD(s, interleaved_push_and_pop_keep_order);
    ADD(s, heap_fifo_from_obj_new);
    ADD(s, producer_and_consumer_threads_keep_order);
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
    int rc = opal_test_run(fifo_suite());
    opal_class_finalize();
    return rc;
}
