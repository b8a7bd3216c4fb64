/* opal_free_list_t: parameter checks, growth by increment up to the
 * maximum, alignment of items and payloads, construction once per item,
 * the per-slab registration hooks, and waiting for an item to come back. */
#include "opal/opal_config.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "opal/class/opal_free_list.h"
#include "opal/runtime/opal_init.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"


/* An item class that counts its constructions and destructions. */
typedef struct {
    opal_free_list_item_t super;
    int serial;
    bool out;
} frag_t;

static opal_atomic_int32_t ctor_calls, dtor_calls;

static void frag_construct(frag_t *frag)
{
    frag->serial = atomic_fetch_add(&ctor_calls, 1) + 1;
    frag->out = false;
}

static void frag_destruct(frag_t *frag)
{
    (void) frag;
    atomic_fetch_add(&dtor_calls, 1);
}

OBJ_CLASS_DECLARATION(frag_t);
OBJ_CLASS_INSTANCE(frag_t, opal_free_list_item_t, frag_construct, frag_destruct);

/* A class that does not derive from opal_free_list_item_t. */
typedef struct {
    opal_list_item_t super;
} stranger_t;
OBJ_CLASS_DECLARATION(stranger_t);
OBJ_CLASS_INSTANCE(stranger_t, opal_list_item_t, NULL, NULL);

/* Registration hooks that record what they are given. */
enum { MAX_SLABS = 16 };
typedef struct {
    int registered, deregistered;
    int fail_on_call; /* 1-based call number that fails; 0: never */
    void *base[MAX_SLABS];
    size_t size[MAX_SLABS];
    char token[MAX_SLABS]; /* &token[i] is slab i's registration */
    bool dereg_matched[MAX_SLABS];
} reg_log_t;

static int record_register(void *base, size_t size, void *context, void **registration)
{
    reg_log_t *log = context;
    int call = log->registered + 1;
    if (call == log->fail_on_call) {
        ++log->fail_on_call; /* only this call fails */
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    ck_assert_int_lt(log->registered, MAX_SLABS);
    log->base[log->registered] = base;
    log->size[log->registered] = size;
    *registration = &log->token[log->registered];
    ++log->registered;
    return OPAL_SUCCESS;
}

static void record_deregister(void *base, size_t size, void *context, void *registration)
{
    reg_log_t *log = context;
    ptrdiff_t slab = (char *) registration - log->token;
    if (slab >= 0 && slab < log->registered && log->base[slab] == base && log->size[slab] == size) {
        log->dereg_matched[slab] = true;
    }
    ++log->deregistered;
}

/* Counts the passes of the progress engine: registered for every test,
 * first, so other callbacks see the count of the pass they run in. */
static opal_atomic_int32_t progress_calls;
static int count_progress(void)
{
    atomic_fetch_add(&progress_calls, 1);
    return 0;
}

static opal_free_list_t fl;
/* Static: the teardown's destruct calls the deregister hook after the
 * test function has returned. */
static reg_log_t reg_log;

static void setup(void)
{
    memset(&reg_log, 0, sizeof(reg_log));
    atomic_store(&ctor_calls, 0);
    atomic_store(&dtor_calls, 0);
    atomic_store(&progress_calls, 0);
    ck_assert_int_eq(opal_progress_register(count_progress), OPAL_SUCCESS);
    OBJ_CONSTRUCT(&fl, opal_free_list_t);
}

static void teardown(void)
{
    OBJ_DESTRUCT(&fl);
    opal_progress_unregister(count_progress);
}

/* Initialises fl with frag_t items and no payloads or hooks. */
static void init_frags(size_t num_initial, size_t max, size_t increment)
{
    ck_assert_int_eq(opal_free_list_init(&fl, sizeof(frag_t), 0, OBJ_CLASS(frag_t), 0, 0,
                                         num_initial, max, increment, NULL, NULL, NULL),
                     OPAL_SUCCESS);
}

START_TEST(init_rejects_alignment_not_power_of_two)
{
    ck_assert_int_eq(
        opal_free_list_init(&fl, 0, 48, OBJ_CLASS(frag_t), 0, 0, 4, 0, 4, NULL, NULL, NULL),
        OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(
        opal_free_list_init(&fl, 0, 64, OBJ_CLASS(frag_t), 128, 100, 4, 0, 4, NULL, NULL, NULL),
        OPAL_ERR_BAD_PARAM);
    ck_assert_uint_eq(opal_free_list_num_allocated(&fl), 0);
}
END_TEST

START_TEST(init_rejects_item_smaller_than_class)
{
    ck_assert_int_eq(opal_free_list_init(&fl, sizeof(frag_t) - 1, 0, OBJ_CLASS(frag_t), 0, 0, 4, 0,
                                         4, NULL, NULL, NULL),
                     OPAL_ERR_BAD_PARAM);
}
END_TEST

START_TEST(init_rejects_class_not_derived_from_item)
{
    ck_assert_int_eq(
        opal_free_list_init(&fl, 0, 0, OBJ_CLASS(stranger_t), 0, 0, 4, 0, 4, NULL, NULL, NULL),
        OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_free_list_init(&fl, 0, 0, NULL, 0, 0, 4, 0, 4, NULL, NULL, NULL),
                     OPAL_ERR_BAD_PARAM);
}
END_TEST

START_TEST(init_rejects_inconsistent_counts)
{
    /* No increment, and more initial items than the maximum. */
    ck_assert_int_eq(
        opal_free_list_init(&fl, 0, 0, OBJ_CLASS(frag_t), 0, 0, 4, 0, 0, NULL, NULL, NULL),
        OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(
        opal_free_list_init(&fl, 0, 0, OBJ_CLASS(frag_t), 0, 0, 8, 4, 4, NULL, NULL, NULL),
        OPAL_ERR_BAD_PARAM);
}
END_TEST

START_TEST(init_rejects_deregister_without_register)
{
    ck_assert_int_eq(opal_free_list_init(&fl, 0, 0, OBJ_CLASS(frag_t), 0, 0, 4, 0, 4, NULL,
                                         record_deregister, &reg_log),
                     OPAL_ERR_BAD_PARAM);
}
END_TEST

START_TEST(init_rejects_second_init)
{
    init_frags(2, 0, 2);
    ck_assert_int_eq(
        opal_free_list_init(&fl, 0, 0, OBJ_CLASS(frag_t), 0, 0, 2, 0, 2, NULL, NULL, NULL),
        OPAL_ERR_BAD_PARAM);
    ck_assert_uint_eq(opal_free_list_num_allocated(&fl), 2);
}
END_TEST

START_TEST(uninitialised_list_gives_nothing)
{
    ck_assert_ptr_null(opal_free_list_get(&fl));
    ck_assert_int_eq(atomic_load(&ctor_calls), 0);
}
END_TEST

START_TEST(initial_items_are_allocated_at_init)
{
    init_frags(5, 0, 3);
    ck_assert_uint_eq(opal_free_list_num_allocated(&fl), 5);
    ck_assert_int_eq(atomic_load(&ctor_calls), 5);
}
END_TEST

START_TEST(empty_list_grows_on_first_get)
{
    init_frags(0, 0, 4);
    ck_assert_uint_eq(opal_free_list_num_allocated(&fl), 0);
    frag_t *frag = (frag_t *) opal_free_list_get(&fl);
    ck_assert_ptr_nonnull(frag);
    ck_assert_uint_eq(opal_free_list_num_allocated(&fl), 4);
    ck_assert(opal_obj_is_a(&frag->super.super.super, OBJ_CLASS(frag_t)));
    opal_free_list_return(&fl, &frag->super);
}
END_TEST

START_TEST(returned_item_is_got_again)
{
    init_frags(4, 0, 4);
    opal_free_list_item_t *item = opal_free_list_get(&fl);
    ck_assert_ptr_nonnull(item);
    opal_free_list_return(&fl, item);
    ck_assert_ptr_eq(opal_free_list_get(&fl), item);
    opal_free_list_return(&fl, item);
}
END_TEST

START_TEST(many_gets_return_distinct_items)
{
    enum { N = 100 };
    init_frags(8, 0, 8);
    frag_t *frags[N];
    for (int i = 0; i < N; ++i) {
        frags[i] = (frag_t *) opal_free_list_get(&fl);
        ck_assert_ptr_nonnull(frags[i]);
        ck_assert(!frags[i]->out);
        frags[i]->out = true;
    }
    for (int i = 0; i < N; ++i) {
        frags[i]->out = false;
        opal_free_list_return(&fl, &frags[i]->super);
    }
    ck_assert_uint_eq(opal_free_list_num_allocated(&fl), 104);
}
END_TEST

START_TEST(returned_items_come_back_last_in_first_out)
{
    init_frags(4, 0, 4);
    opal_free_list_item_t *a = opal_free_list_get(&fl);
    opal_free_list_item_t *b = opal_free_list_get(&fl);
    opal_free_list_return(&fl, a);
    opal_free_list_return(&fl, b);
    ck_assert_ptr_eq(opal_free_list_get(&fl), b);
    ck_assert_ptr_eq(opal_free_list_get(&fl), a);
    opal_free_list_return(&fl, a);
    opal_free_list_return(&fl, b);
}
END_TEST

START_TEST(list_grows_by_increment)
{
    init_frags(4, 0, 3);
    opal_free_list_item_t *items[10];
    for (int i = 0; i < 4; ++i) {
        items[i] = opal_free_list_get(&fl);
    }
    ck_assert_uint_eq(opal_free_list_num_allocated(&fl), 4);
    items[4] = opal_free_list_get(&fl);
    ck_assert_uint_eq(opal_free_list_num_allocated(&fl), 7);
    items[5] = opal_free_list_get(&fl);
    items[6] = opal_free_list_get(&fl);
    ck_assert_uint_eq(opal_free_list_num_allocated(&fl), 7);
    items[7] = opal_free_list_get(&fl);
    ck_assert_uint_eq(opal_free_list_num_allocated(&fl), 10);
    ck_assert_int_eq(atomic_load(&ctor_calls), 10);
    for (int i = 0; i < 8; ++i) {
        ck_assert_ptr_nonnull(items[i]);
        opal_free_list_return(&fl, items[i]);
    }
}
END_TEST

START_TEST(get_returns_null_at_maximum)
{
    /* The last slab is cut short to stay within the maximum. */
    init_frags(4, 10, 4);
    opal_free_list_item_t *items[10];
    for (int i = 0; i < 10; ++i) {
        items[i] = opal_free_list_get(&fl);
        ck_assert_ptr_nonnull(items[i]);
    }
    ck_assert_uint_eq(opal_free_list_num_allocated(&fl), 10);
    ck_assert_ptr_null(opal_free_list_get(&fl));
    ck_assert_ptr_null(opal_free_list_get_mt(&fl));
    ck_assert_uint_eq(opal_free_list_num_allocated(&fl), 10);
    for (int i = 0; i < 10; ++i) {
        opal_free_list_return(&fl, items[i]);
    }
}
END_TEST

START_TEST(returned_item_is_available_at_maximum)
{
    init_frags(2, 2, 2);
    opal_free_list_item_t *a = opal_free_list_get(&fl);
    opal_free_list_item_t *b = opal_free_list_get(&fl);
    ck_assert_ptr_null(opal_free_list_get(&fl));
    opal_free_list_return(&fl, a);
    ck_assert_ptr_eq(opal_free_list_get(&fl), a);
    opal_free_list_return(&fl, a);
    opal_free_list_return(&fl, b);
}
END_TEST

START_TEST(grow_adds_items_up_to_maximum)
{
    init_frags(4, 6, 4);
    ck_assert_int_eq(opal_free_list_grow(&fl, 5), OPAL_SUCCESS);
    ck_assert_uint_eq(opal_free_list_num_allocated(&fl), 6);
    ck_assert_int_eq(opal_free_list_grow(&fl, 1), OPAL_ERR_TEMP_OUT_OF_RESOURCE);
    ck_assert_uint_eq(opal_free_list_num_allocated(&fl), 6);
}
END_TEST

START_TEST(grow_rejects_zero_count_and_uninitialised_list)
{
    ck_assert_int_eq(opal_free_list_grow(&fl, 4), OPAL_ERR_BAD_PARAM);
    init_frags(2, 0, 2);
    ck_assert_int_eq(opal_free_list_grow(&fl, 0), OPAL_ERR_BAD_PARAM);
    ck_assert_uint_eq(opal_free_list_num_allocated(&fl), 2);
}
END_TEST

START_TEST(items_are_aligned_and_do_not_overlap)
{
    enum { N = 20, ALIGN = 256, EXTRA = 100 };
    const size_t size = sizeof(frag_t) + EXTRA;
    ck_assert_int_eq(
        opal_free_list_init(&fl, size, ALIGN, OBJ_CLASS(frag_t), 0, 0, 3, 0, 5, NULL, NULL, NULL),
        OPAL_SUCCESS);
    frag_t *frags[N];
    for (int i = 0; i < N; ++i) {
        frags[i] = (frag_t *) opal_free_list_get(&fl);
        ck_assert_ptr_nonnull(frags[i]);
        ck_assert_uint_eq((uintptr_t) frags[i] % ALIGN, 0);
        /* The bytes past the class belong to the item. */
        memset((char *) frags[i] + sizeof(frag_t), i, EXTRA);
    }
    for (int i = 0; i < N; ++i) {
        const unsigned char *tail = (const unsigned char *) frags[i] + sizeof(frag_t);
        for (int j = 0; j < EXTRA; ++j) {
            ck_assert_int_eq(tail[j], i);
        }
        ck_assert_int_eq(frags[i]->serial >= 1 && frags[i]->serial <= 23, 1);
        opal_free_list_return(&fl, &frags[i]->super);
    }
}
END_TEST

START_TEST(payloads_are_aligned_and_separate)
{
    enum { N = 12, PAYLOAD = 100, PALIGN = 4096 };
    ck_assert_int_eq(opal_free_list_init(&fl, 0, 64, OBJ_CLASS(frag_t), PAYLOAD, PALIGN, 4, 0, 4,
                                         NULL, NULL, NULL),
                     OPAL_SUCCESS);
    frag_t *frags[N];
    for (int i = 0; i < N; ++i) {
        frags[i] = (frag_t *) opal_free_list_get(&fl);
        ck_assert_ptr_nonnull(frags[i]);
        ck_assert_uint_eq((uintptr_t) frags[i] % 64, 0);
        ck_assert_ptr_nonnull(frags[i]->super.ptr);
        ck_assert_uint_eq((uintptr_t) frags[i]->super.ptr % PALIGN, 0);
        memset(frags[i]->super.ptr, i, PAYLOAD);
    }
    for (int i = 0; i < N; ++i) {
        const unsigned char *p = frags[i]->super.ptr;
        for (int j = 0; j < PAYLOAD; ++j) {
            ck_assert_int_eq(p[j], i);
        }
        opal_free_list_return(&fl, &frags[i]->super);
    }
}
END_TEST

START_TEST(items_without_payload_have_no_buffer)
{
    init_frags(2, 0, 2);
    opal_free_list_item_t *item = opal_free_list_get(&fl);
    ck_assert_ptr_null(item->ptr);
    ck_assert_ptr_null(item->registration);
    opal_free_list_return(&fl, item);
}
END_TEST

START_TEST(items_constructed_once_across_cycles)
{
    enum { HELD = 16 };
    init_frags(4, 0, 4);
    size_t cycles = opal_test_iterations(10000);
    opal_free_list_item_t *held[HELD];
    size_t failed_gets = 0;
    for (size_t c = 0; c < cycles; ++c) {
        int n = 1 + (int) (c % HELD);
        for (int i = 0; i < n; ++i) {
            held[i] = opal_free_list_get(&fl);
            failed_gets += NULL == held[i];
        }
        for (int i = n - 1; i >= 0; --i) {
            if (NULL != held[i]) {
                opal_free_list_return(&fl, held[i]);
            }
        }
    }
    ck_assert_uint_eq(failed_gets, 0);
    ck_assert_uint_eq(opal_free_list_num_allocated(&fl), HELD);
    ck_assert_int_eq(atomic_load(&ctor_calls), HELD);
    ck_assert_int_eq(atomic_load(&dtor_calls), 0);
}
END_TEST

START_TEST(items_destructed_once_with_the_list)
{
    init_frags(3, 0, 5);
    opal_free_list_item_t *a = opal_free_list_get(&fl);
    opal_free_list_item_t *b = opal_free_list_get(&fl);
    opal_free_list_item_t *c = opal_free_list_get(&fl);
    opal_free_list_item_t *d = opal_free_list_get(&fl);
    opal_free_list_return(&fl, d);
    opal_free_list_return(&fl, c);
    opal_free_list_return(&fl, b);
    opal_free_list_return(&fl, a);
    ck_assert_int_eq(atomic_load(&dtor_calls), 0);
    OBJ_DESTRUCT(&fl);
    ck_assert_int_eq(atomic_load(&ctor_calls), 8);
    ck_assert_int_eq(atomic_load(&dtor_calls), 8);
    OBJ_CONSTRUCT(&fl, opal_free_list_t); /* for the teardown */
}
END_TEST

START_TEST(register_hook_called_once_per_slab)
{
    enum { PAYLOAD = 512 };
    ck_assert_int_eq(opal_free_list_init(&fl, 0, 0, OBJ_CLASS(frag_t), PAYLOAD, 64, 4, 0, 3,
                                         record_register, record_deregister, &reg_log),
                     OPAL_SUCCESS);
    ck_assert_int_eq(reg_log.registered, 1);
    frag_t *frags[10];
    for (int i = 0; i < 10; ++i) {
        frags[i] = (frag_t *) opal_free_list_get(&fl);
        ck_assert_ptr_nonnull(frags[i]);
    }
    /* 4 initial + 3 + 3 = 10 items in three slabs. */
    ck_assert_int_eq(reg_log.registered, 3);
    ck_assert_uint_eq(reg_log.size[0], 4 * PAYLOAD);
    ck_assert_uint_eq(reg_log.size[1], 3 * PAYLOAD);
    for (int i = 0; i < 10; ++i) {
        /* Each item records its slab's registration; its payload lies in
         * the registered range. */
        ptrdiff_t slab = (char *) frags[i]->super.registration - reg_log.token;
        ck_assert_int_ge(slab, 0);
        ck_assert_int_lt(slab, 3);
        char *p = frags[i]->super.ptr;
        ck_assert(p >= (char *) reg_log.base[slab]);
        ck_assert(p + PAYLOAD <= (char *) reg_log.base[slab] + reg_log.size[slab]);
    }
    for (int i = 0; i < 10; ++i) {
        opal_free_list_return(&fl, &frags[i]->super);
    }
    ck_assert_int_eq(reg_log.deregistered, 0);
}
END_TEST

START_TEST(deregister_hook_matches_each_slab_at_destruct)
{
    ck_assert_int_eq(opal_free_list_init(&fl, 0, 0, OBJ_CLASS(frag_t), 0, 0, 2, 0, 2,
                                         record_register, record_deregister, &reg_log),
                     OPAL_SUCCESS);
    ck_assert_int_eq(opal_free_list_grow(&fl, 2), OPAL_SUCCESS);
    ck_assert_int_eq(opal_free_list_grow(&fl, 2), OPAL_SUCCESS);
    /* Without payloads the item slab itself is registered. */
    ck_assert_uint_eq(reg_log.size[0], 2 * fl.fl_item_stride);
    OBJ_DESTRUCT(&fl);
    ck_assert_int_eq(reg_log.deregistered, 3);
    for (int i = 0; i < 3; ++i) {
        ck_assert(reg_log.dereg_matched[i]);
    }
    OBJ_CONSTRUCT(&fl, opal_free_list_t);
}
END_TEST

START_TEST(register_failure_fails_growth_cleanly)
{
    reg_log.fail_on_call = 2;
    ck_assert_int_eq(opal_free_list_init(&fl, 0, 0, OBJ_CLASS(frag_t), 64, 64, 2, 0, 2,
                                         record_register, record_deregister, &reg_log),
                     OPAL_SUCCESS);
    opal_free_list_item_t *a = opal_free_list_get(&fl);
    opal_free_list_item_t *b = opal_free_list_get(&fl);
    ck_assert_ptr_nonnull(b);
    /* The second registration fails: no item, nothing allocated. */
    ck_assert_ptr_null(opal_free_list_get(&fl));
    ck_assert_uint_eq(opal_free_list_num_allocated(&fl), 2);
    ck_assert_int_eq(atomic_load(&ctor_calls), 2);
    /* The next attempt registers and succeeds. */
    opal_free_list_item_t *c = opal_free_list_get(&fl);
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq(opal_free_list_num_allocated(&fl), 4);
    opal_free_list_return(&fl, a);
    opal_free_list_return(&fl, b);
    opal_free_list_return(&fl, c);
    OBJ_DESTRUCT(&fl);
    ck_assert_int_eq(reg_log.registered, 2);
    ck_assert_int_eq(reg_log.deregistered, 2);
    OBJ_CONSTRUCT(&fl, opal_free_list_t);
}
END_TEST

START_TEST(register_failure_in_init_is_returned)
{
    reg_log.fail_on_call = 1;
    ck_assert_int_eq(opal_free_list_init(&fl, 0, 0, OBJ_CLASS(frag_t), 0, 0, 4, 0, 4,
                                         record_register, record_deregister, &reg_log),
                     OPAL_ERR_OUT_OF_RESOURCE);
    ck_assert_uint_eq(opal_free_list_num_allocated(&fl), 0);
    ck_assert_int_eq(atomic_load(&ctor_calls), 0);
}
END_TEST

START_TEST(single_thread_variants_get_and_return)
{
    init_frags(0, 3, 2);
    opal_free_list_item_t *a = opal_free_list_get_st(&fl);
    opal_free_list_item_t *b = opal_free_list_get_st(&fl);
    opal_free_list_item_t *c = opal_free_list_get_st(&fl);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_null(opal_free_list_get_st(&fl));
    opal_free_list_return_st(&fl, b);
    ck_assert_ptr_eq(opal_free_list_get_st(&fl), b);
    opal_free_list_return_st(&fl, a);
    opal_free_list_return_st(&fl, b);
    opal_free_list_return_st(&fl, c);
    ck_assert_int_eq(atomic_load(&ctor_calls), 3);
}
END_TEST

/* Progress that plays a completion: on its third call it gives back the
 * item the test parked in completed_item. */
static opal_free_list_item_t *completed_item;
static int complete_on_third_call(void)
{
    if (3 == atomic_load(&progress_calls) && NULL != completed_item) {
        opal_free_list_return(&fl, completed_item);
        completed_item = NULL;
        return 1;
    }
    return 0;
}

START_TEST(wait_drives_progress_until_an_item_returns)
{
    init_frags(2, 2, 2);
    opal_free_list_item_t *a = opal_free_list_get(&fl);
    opal_free_list_item_t *b = opal_free_list_get(&fl);
    ck_assert_ptr_null(opal_free_list_get(&fl));
    completed_item = b;
    ck_assert_int_eq(opal_progress_register(complete_on_third_call), OPAL_SUCCESS);
    ck_assert_ptr_eq(opal_free_list_wait(&fl), b);
    ck_assert_int_eq(atomic_load(&progress_calls), 3);
    ck_assert_int_eq(opal_progress_unregister(complete_on_third_call), OPAL_SUCCESS);
    opal_free_list_return(&fl, a);
    opal_free_list_return(&fl, b);
}
END_TEST

START_TEST(wait_returns_at_once_when_an_item_is_free)
{
    init_frags(1, 1, 1);
    opal_free_list_item_t *item = opal_free_list_wait(&fl);
    ck_assert_ptr_nonnull(item);
    ck_assert_int_eq(atomic_load(&progress_calls), 0);
    opal_free_list_return(&fl, item);
}
END_TEST

/* Returns the held item once the waiter has gone to sleep. */
static opal_free_list_item_t *held_item;
static void *return_when_waited_for(void *arg)
{
    (void) arg;
    while (0 == atomic_load(&fl.fl_num_waiting)) {
        sched_yield();
    }
    opal_free_list_return(&fl, held_item);
    return NULL;
}

START_TEST(wait_returns_item_returned_by_another_thread)
{
    bool had_threads = opal_set_using_threads(true);
    init_frags(1, 1, 1);
    held_item = opal_free_list_get(&fl);
    ck_assert_ptr_nonnull(held_item);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, return_when_waited_for, NULL), 0);
    opal_free_list_item_t *got = opal_free_list_wait(&fl);
    pthread_join(t, NULL);
    ck_assert_ptr_eq(got, held_item);
    ck_assert_int_ge(atomic_load(&progress_calls), 1);
    opal_free_list_return(&fl, got);
    opal_set_using_threads(had_threads);
}
END_TEST

#if OPAL_ENABLE_DEBUG
START_TEST(debug_catches_destruct_with_items_out)
{
    init_frags(2, 0, 2);
    ck_assert_ptr_nonnull(opal_free_list_get(&fl));
    OBJ_DESTRUCT(&fl);
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

static Suite *free_list_suite(void)
{
    Suite *s = suite_create("opal_free_list");
    ADD(s, init_rejects_alignment_not_power_of_two);
    ADD(s, init_rejects_item_smaller_than_class);
    ADD(s, init_rejects_class_not_derived_from_item);
    ADD(s, init_rejects_inconsistent_counts);
    ADD(s, init_rejects_deregister_without_register);
    ADD(s, init_rejects_second_init);
    ADD(s, uninitialised_list_gives_nothing);
    ADD(s, initial_items_are_allocated_at_init);
    ADD(s, empty_list_grows_on_first_get);
    ADD(s, returned_item_is_got_again);
    ADD(s, many_gets_return_distinct_items);
    ADD(s, returned_items_come_back_last_in_first_out);
    ADD(s, list_grows_by_increment);
    ADD(s, get_returns_null_at_maximum);
    ADD(s, returned_item_is_available_at_maximum);
    ADD(s, grow_adds_items_up_to_maximum);
    ADD(s, grow_rejects_zero_count_and_uninitialised_list);
    ADD(s, items_are_aligned_and_do_not_overlap);
    ADD(s, payloads_are_aligned_and_separate);
    ADD(s, items_without_payload_have_no_buffer);
    ADD(s, items_constructed_once_across_cycles);
    ADD(s, items_destructed_once_with_the_list);
    ADD(s, register_hook_called_once_per_slab);
    ADD(s, deregister_hook_matches_each_slab_at_destruct);
    ADD(s, register_failure_fails_growth_cleanly);
    ADD(s, register_failure_in_init_is_returned);
    ADD(s, single_thread_variants_get_and_return);
    ADD(s, wait_drives_progress_until_an_item_returns);
    ADD(s, wait_returns_at_once_when_an_item_is_free);
    ADD(s, wait_returns_item_returned_by_another_thread);
#if OPAL_ENABLE_DEBUG
    if (opal_test_can_fork()) {
        add(s, "debug_catches_destruct_with_items_out", debug_catches_destruct_with_items_out,
            SIGABRT);
    }
#endif
    return s;
}

int main(void)
{
    /* opal_free_list_wait() drives the real progress engine. */
    if (OPAL_SUCCESS != opal_init_util(NULL, NULL)) {
        return EXIT_FAILURE;
    }
    int rc = opal_test_run(free_list_suite());
    opal_finalize_util();
    return rc;
}
