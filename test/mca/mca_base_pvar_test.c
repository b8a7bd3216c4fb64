/* Performance variables: registration, reading bound storage and read
 * callbacks, reset baselines, rebinding, deregistration, lookups. */
#include "opal/opal_config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_pvar.h"
#include "opal/mca/mca.h"
#include "opal/threads/opal_atomic.h"
#include "opal/util/opal_error.h"
#include "test/mca/mca_var_test_support.h"

static int reg(const char *name, mca_base_pvar_class_t cls, mca_base_var_type_t type, void *storage,
               mca_base_pvar_read_fn_t fn, void *ctx)
{
    return mca_base_pvar_register("opal", "testfw", "comp", name, "a test pvar", cls, type,
                                  OPAL_INFO_LVL_4, MCA_BASE_PVAR_FLAG_NONE, storage, fn, ctx);
}

static uint64_t read_u64(int index)
{
    mca_base_pvar_value_t v;
    ck_assert_int_eq(mca_base_pvar_read(index, &v), OPAL_SUCCESS);
    return v.uint64val;
}

START_TEST(counter_reads_bound_storage)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    opal_atomic_uint64_t sent = 0;
    int index = reg("sent", MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UINT64_T, (void *) &sent,
                    NULL, NULL);
    ck_assert_int_ge(index, 0);
    ck_assert_uint_eq(read_u64(index), 0);
    atomic_fetch_add_explicit(&sent, 42, memory_order_relaxed);
    ck_assert_uint_eq(read_u64(index), 42);
    const mca_base_pvar_t *pvar = NULL;
    ck_assert_int_eq(mca_base_pvar_get(index, &pvar), OPAL_SUCCESS);
    ck_assert_str_eq(pvar->pvar_full_name, "testfw_comp_sent");
    ck_assert_str_eq(pvar->pvar_description, "a test pvar");
    ck_assert_int_eq(pvar->pvar_class, MCA_BASE_PVAR_CLASS_COUNTER);
    ck_assert_int_eq(pvar->pvar_info_lvl, OPAL_INFO_LVL_4);
}
END_TEST

START_TEST(counter_reset_counts_from_zero)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    opal_atomic_uint64_t sent = 100;
    int index = reg("sent", MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UINT64_T, (void *) &sent,
                    NULL, NULL);
    ck_assert_int_eq(mca_base_pvar_reset(index), OPAL_SUCCESS);
    ck_assert_uint_eq(read_u64(index), 0);
    sent += 5;
    ck_assert_uint_eq(read_u64(index), 5);
    /* The component's own storage is never written. */
    ck_assert_uint_eq(sent, 105);
}
END_TEST

START_TEST(counter_survives_storage_wrap)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    _Atomic unsigned int n = UINT32_MAX - 1;
    int index = reg("n", MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UNSIGNED_INT, (void *) &n,
                    NULL, NULL);
    ck_assert_int_eq(mca_base_pvar_reset(index), OPAL_SUCCESS);
    n += 3;
    mca_base_pvar_value_t v;
    ck_assert_int_eq(mca_base_pvar_read(index, &v), OPAL_SUCCESS);
    ck_assert_uint_eq(v.uintval, 3);
}
END_TEST

START_TEST(timer_reset_counts_from_zero)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    _Atomic double seconds = 1.5;
    int index = reg("busy", MCA_BASE_PVAR_CLASS_TIMER, MCA_BASE_VAR_TYPE_DOUBLE, (void *) &seconds,
                    NULL, NULL);
    ck_assert_int_eq(mca_base_pvar_reset(index), OPAL_SUCCESS);
    seconds = 1.75;
    mca_base_pvar_value_t v;
    ck_assert_int_eq(mca_base_pvar_read(index, &v), OPAL_SUCCESS);
    ck_assert(0.25 == v.doubleval);
    char *text = NULL;
    ck_assert_int_eq(mca_base_pvar_value_string(index, &text), OPAL_SUCCESS);
    ck_assert_str_eq(text, "0.25");
    free(text);
}
END_TEST

START_TEST(level_and_watermarks_cannot_be_reset)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    opal_atomic_uint64_t depth = 7, high = 9;
    int level = reg("depth", MCA_BASE_PVAR_CLASS_LEVEL, MCA_BASE_VAR_TYPE_UINT64_T, (void *) &depth,
                    NULL, NULL);
    int mark = reg("depth_max", MCA_BASE_PVAR_CLASS_HIGHWATERMARK, MCA_BASE_VAR_TYPE_UINT64_T,
                   (void *) &high, NULL, NULL);
    ck_assert_int_eq(mca_base_pvar_reset(level), OPAL_ERR_NOT_SUPPORTED);
    ck_assert_int_eq(mca_base_pvar_reset(mark), OPAL_ERR_NOT_SUPPORTED);
    ck_assert_uint_eq(read_u64(level), 7);
    ck_assert_uint_eq(read_u64(mark), 9);
}
END_TEST

static int calls;

static int read_queue(const mca_base_pvar_t *pvar, mca_base_pvar_value_t *value, void *ctx)
{
    ++calls;
    ck_assert_str_eq(pvar->pvar_full_name, "testfw_comp_queued");
    value->uint64val = *(uint64_t *) ctx;
    return OPAL_SUCCESS;
}

static int read_fails(const mca_base_pvar_t *pvar, mca_base_pvar_value_t *value, void *ctx)
{
    (void) pvar;
    (void) value;
    (void) ctx;
    return OPAL_ERR_NOT_AVAILABLE;
}

START_TEST(read_callback_computes_the_value)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    uint64_t queued = 3;
    calls = 0;
    int index = reg("queued", MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UINT64_T, NULL,
                    read_queue, &queued);
    ck_assert_uint_eq(read_u64(index), 3);
    ck_assert_int_eq(mca_base_pvar_reset(index), OPAL_SUCCESS);
    queued = 10;
    ck_assert_uint_eq(read_u64(index), 7);
    ck_assert_int_eq(calls, 3);
    int bad = reg("broken", MCA_BASE_PVAR_CLASS_LEVEL, MCA_BASE_VAR_TYPE_UINT64_T, NULL, read_fails,
                  NULL);
    mca_base_pvar_value_t v;
    ck_assert_int_eq(mca_base_pvar_read(bad, &v), OPAL_ERR_NOT_AVAILABLE);
}
END_TEST

START_TEST(register_refuses_bad_arguments)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    opal_atomic_uint64_t s = 0;
    uint64_t ctx = 0;
    void *st = (void *) &s;
    int base = mca_base_pvar_get_count();
    ck_assert_int_eq(
        reg("a", MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UINT64_T, NULL, NULL, NULL),
        OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(
        reg("a", MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UINT64_T, st, read_queue, &ctx),
        OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(reg("a", MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_INT, st, NULL, NULL),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(reg("a", MCA_BASE_PVAR_CLASS_MAX, MCA_BASE_VAR_TYPE_UINT64_T, st, NULL, NULL),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(
        reg("a-b", MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UINT64_T, st, NULL, NULL),
        OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(mca_base_pvar_register(NULL, "fw", NULL, "a", "d", MCA_BASE_PVAR_CLASS_LEVEL,
                                            MCA_BASE_VAR_TYPE_UINT64_T, OPAL_INFO_LVL_1, 0x100, st,
                                            NULL, NULL),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(mca_base_pvar_get_count(), base);
}
END_TEST

START_TEST(register_outside_init_fails)
{
    opal_atomic_uint64_t s = 0;
    ck_assert_int_eq(
        reg("a", MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UINT64_T, (void *) &s, NULL, NULL),
        OPAL_ERR_NOT_INITIALIZED);
    ck_assert_int_eq(mca_base_pvar_get_count(), 0);
}
END_TEST

START_TEST(register_again_rebinds_and_clears_baseline)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    opal_atomic_uint64_t a = 50, b = 4;
    int index = reg("sent", MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UINT64_T, (void *) &a,
                    NULL, NULL);
    ck_assert_int_eq(mca_base_pvar_reset(index), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_pvar_deregister(index), OPAL_SUCCESS);
    ck_assert_int_eq(reg("sent", MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UINT64_T,
                         (void *) &b, NULL, NULL),
                     index);
    ck_assert_uint_eq(read_u64(index), 4);
}
END_TEST

START_TEST(register_again_with_other_class_fails)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    opal_atomic_uint64_t a = 0;
    reg("sent", MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UINT64_T, (void *) &a, NULL, NULL);
    ck_assert_int_eq(
        reg("sent", MCA_BASE_PVAR_CLASS_LEVEL, MCA_BASE_VAR_TYPE_UINT64_T, (void *) &a, NULL, NULL),
        OPAL_ERR_EXISTS);
    ck_assert_int_eq(
        reg("sent", MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_DOUBLE, (void *) &a, NULL, NULL),
        OPAL_ERR_EXISTS);
}
END_TEST

START_TEST(deregister_stops_reading_storage)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    opal_atomic_uint64_t *heap = malloc(sizeof(*heap));
    ck_assert_ptr_nonnull(heap);
    atomic_init(heap, 1);
    int index = reg("sent", MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UINT64_T, (void *) heap,
                    NULL, NULL);
    ck_assert_int_eq(mca_base_pvar_deregister(index), OPAL_SUCCESS);
    /* Like a plugin unloaded: valgrind and ASan catch any later read. */
    free(heap);
    mca_base_pvar_value_t v;
    ck_assert_int_eq(mca_base_pvar_read(index, &v), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(mca_base_pvar_reset(index), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(mca_base_pvar_find_by_name("testfw_comp_sent"), OPAL_ERR_NOT_FOUND);
    const mca_base_pvar_t *pvar;
    ck_assert_int_eq(mca_base_pvar_get(index, &pvar), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(mca_base_pvar_deregister(index), OPAL_ERR_NOT_FOUND);
}
END_TEST

START_TEST(deregister_component_touches_only_that_component)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    opal_atomic_uint64_t s = 0;
    int a = mca_base_pvar_register(NULL, "fw", "one", "a", "d", MCA_BASE_PVAR_CLASS_COUNTER,
                                   MCA_BASE_VAR_TYPE_UINT64_T, OPAL_INFO_LVL_1, 0, (void *) &s,
                                   NULL, NULL);
    int b = mca_base_pvar_register(NULL, "fw", "two", "b", "d", MCA_BASE_PVAR_CLASS_COUNTER,
                                   MCA_BASE_VAR_TYPE_UINT64_T, OPAL_INFO_LVL_1, 0, (void *) &s,
                                   NULL, NULL);
    const mca_base_pvar_t *pvar;
    ck_assert_int_eq(mca_base_pvar_deregister_component(NULL, "fw", "one"), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_pvar_get(a, &pvar), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(mca_base_pvar_get(b, &pvar), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_pvar_deregister_component("opal", "fw", NULL), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_pvar_get(b, &pvar), OPAL_ERR_NOT_FOUND);
}
END_TEST

START_TEST(find_and_list_in_registration_order)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    opal_atomic_uint64_t s = 0;
    int first = reg("zeta", MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UINT64_T, (void *) &s,
                    NULL, NULL);
    int second = reg("alpha", MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UINT64_T, (void *) &s,
                     NULL, NULL);
    ck_assert_int_eq(second, first + 1);
    ck_assert_int_eq(mca_base_pvar_get_count(), second + 1);
    ck_assert_int_eq(mca_base_pvar_find("opal", "testfw", "comp", "alpha"), second);
    ck_assert_int_eq(mca_base_pvar_find(NULL, "testfw", "comp", "zeta"), first);
    ck_assert_int_eq(mca_base_pvar_find("orte", "testfw", "comp", "zeta"), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(mca_base_pvar_find_by_name("testfw_comp_alpha"), second);
    ck_assert_int_eq(mca_base_pvar_find_by_name("nope"), OPAL_ERR_NOT_FOUND);
    /* Variables and pvars are separate name spaces. */
    ck_assert_int_eq(mca_base_var_find_by_name("testfw_comp_alpha"), OPAL_ERR_NOT_FOUND);
}
END_TEST

START_TEST(component_pvar_register_takes_names_from_component)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    static const mca_base_component_t component = {
        .mca_project_name = "test",
        .mca_type_name = "mcatest",
        .mca_component_name = "good",
    };
    opal_atomic_uint64_t s = 0;
    int index = mca_base_component_pvar_register(
        &component, "calls", "d", MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UINT64_T,
        OPAL_INFO_LVL_5, 0, (void *) &s, NULL, NULL);
    const mca_base_pvar_t *pvar;
    ck_assert_int_eq(mca_base_pvar_get(index, &pvar), OPAL_SUCCESS);
    ck_assert_str_eq(pvar->pvar_full_name, "mcatest_good_calls");
    ck_assert_str_eq(pvar->pvar_project_name, "test");
}
END_TEST

START_TEST(class_names)
{
    ck_assert_str_eq(mca_base_pvar_class_name(MCA_BASE_PVAR_CLASS_TIMER), "timer");
    ck_assert_str_eq(mca_base_pvar_class_name(MCA_BASE_PVAR_CLASS_HIGHWATERMARK), "high watermark");
    ck_assert_str_eq(mca_base_pvar_class_name(MCA_BASE_PVAR_CLASS_MAX), "unknown");
}
END_TEST

typedef struct {
    opal_atomic_uint64_t *counter;
    size_t n;
} updater_t;

static void *update(void *arg)
{
    updater_t *u = arg;
    for (size_t i = 0; i < u->n; ++i) {
        atomic_fetch_add_explicit(u->counter, 1, memory_order_relaxed);
    }
    return NULL;
}

START_TEST(reads_while_a_thread_updates)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    opal_atomic_uint64_t counter = 0;
    int index = reg("events", MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UINT64_T,
                    (void *) &counter, NULL, NULL);
    updater_t u = {&counter, opal_test_iterations(200000)};
    pthread_t thread;
    ck_assert_int_eq(pthread_create(&thread, NULL, update, &u), 0);
    uint64_t last = 0;
    for (int i = 0; i < 1000; ++i) {
        uint64_t now = read_u64(index);
        /* A counter read never goes backwards. */
        ck_assert_uint_ge(now, last);
        last = now;
    }
    pthread_join(thread, NULL);
    ck_assert_uint_eq(read_u64(index), u.n);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mca_base_pvar");
    MVT_ADD(s, counter_reads_bound_storage);
    MVT_ADD(s, counter_reset_counts_from_zero);
    MVT_ADD(s, counter_survives_storage_wrap);
    MVT_ADD(s, timer_reset_counts_from_zero);
    MVT_ADD(s, level_and_watermarks_cannot_be_reset);
    MVT_ADD(s, read_callback_computes_the_value);
    MVT_ADD(s, register_refuses_bad_arguments);
    MVT_ADD(s, register_outside_init_fails);
    MVT_ADD(s, register_again_rebinds_and_clears_baseline);
    MVT_ADD(s, register_again_with_other_class_fails);
    MVT_ADD(s, deregister_stops_reading_storage);
    MVT_ADD(s, deregister_component_touches_only_that_component);
    MVT_ADD(s, find_and_list_in_registration_order);
    MVT_ADD(s, component_pvar_register_takes_names_from_component);
    MVT_ADD(s, class_names);
    MVT_ADD(s, reads_while_a_thread_updates);
    return opal_test_run(s);
}
