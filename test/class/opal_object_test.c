/* The object system: construction order, reference counts, classes chosen
 * at run time, re-initialisation after finalize, debug-build checks. */
#include "opal/opal_config.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "opal/class/opal_object.h"
#include "test/support/opal_test.h"

/* A three-level hierarchy that records the order of its ctors/dtors. */
static char trace[64];
static void trace_add(char c)
{
    size_t n = strlen(trace);
    trace[n] = c;
    trace[n + 1] = '\0';
}

typedef struct {
    opal_object_t super;
    int a;
} base_t;
typedef struct {
    base_t super;
    int b;
} middle_t;
typedef struct {
    middle_t super;
    int c;
    int *destroyed;
} leaf_t;

static void base_ctor(base_t *o)
{
    o->a = 1;
    trace_add('A');
}
static void base_dtor(base_t *o)
{
    (void) o;
    trace_add('a');
}
static void middle_ctor(middle_t *o)
{
    /* The parent constructor has already run. */
    o->b = o->super.a + 1;
    trace_add('B');
}
static void middle_dtor(middle_t *o)
{
    (void) o;
    trace_add('b');
}
static void leaf_ctor(leaf_t *o)
{
    o->c = o->super.b + 1;
    o->destroyed = NULL;
    trace_add('C');
}
static void leaf_dtor(leaf_t *o)
{
    if (NULL != o->destroyed) {
        ++*o->destroyed;
    }
    trace_add('c');
}

OBJ_CLASS_DECLARATION(base_t);
OBJ_CLASS_DECLARATION(middle_t);
OBJ_CLASS_DECLARATION(leaf_t);
OBJ_CLASS_INSTANCE(base_t, opal_object_t, base_ctor, base_dtor);
OBJ_CLASS_INSTANCE(middle_t, base_t, middle_ctor, middle_dtor);
OBJ_CLASS_INSTANCE(leaf_t, middle_t, leaf_ctor, leaf_dtor);

/* A class without constructor or destructor in the middle of a chain. */
typedef struct {
    leaf_t super;
} bare_t;
OBJ_CLASS_DECLARATION(bare_t);
OBJ_CLASS_INSTANCE(bare_t, leaf_t, NULL, NULL);

START_TEST(constructors_run_parent_first)
{
    trace[0] = '\0';
    leaf_t *o = OBJ_NEW(leaf_t);
    ck_assert_ptr_nonnull(o);
    ck_assert_str_eq(trace, "ABC");
    ck_assert_int_eq(o->c, 3);
    OBJ_RELEASE(o);
}
END_TEST

START_TEST(destructors_run_child_first)
{
    leaf_t *o = OBJ_NEW(leaf_t);
    trace[0] = '\0';
    OBJ_RELEASE(o);
    ck_assert_str_eq(trace, "cba");
}
END_TEST

START_TEST(class_without_hooks_inherits_chain)
{
    trace[0] = '\0';
    bare_t *o = OBJ_NEW(bare_t);
    ck_assert_str_eq(trace, "ABC");
    ck_assert_int_eq(OBJ_CLASS(bare_t)->cls_depth, 5);
    OBJ_RELEASE(o);
    ck_assert_str_eq(trace, "ABCcba");
}
END_TEST

START_TEST(new_object_has_one_reference)
{
    base_t *o = OBJ_NEW(base_t);
    ck_assert_int_eq(OBJ_REFCOUNT(o), 1);
    ck_assert_ptr_eq(OBJ_CLASS_OF(o), OBJ_CLASS(base_t));
    OBJ_RELEASE(o);
}
END_TEST

START_TEST(release_to_zero_destroys_and_nulls)
{
    int destroyed = 0;
    leaf_t *o = OBJ_NEW(leaf_t);
    o->destroyed = &destroyed;
    OBJ_RETAIN(o);
    OBJ_RETAIN(o);
    ck_assert_int_eq(OBJ_REFCOUNT(o), 3);

    leaf_t *alias1 = o, *alias2 = o;
    OBJ_RELEASE(alias1);
    ck_assert_ptr_null(alias1);
    ck_assert_int_eq(destroyed, 0);
    OBJ_RELEASE(alias2);
    ck_assert_ptr_null(alias2);
    ck_assert_int_eq(destroyed, 0);
    ck_assert_int_eq(OBJ_REFCOUNT(o), 1);
    OBJ_RELEASE(o);
    ck_assert_ptr_null(o);
    ck_assert_int_eq(destroyed, 1);
}
END_TEST

START_TEST(construct_and_destruct_embedded)
{
    int destroyed = 0;
    struct {
        int before;
        leaf_t obj;
        int after;
    } holder = {.before = 7, .after = 9};
    trace[0] = '\0';
    OBJ_CONSTRUCT(&holder.obj, leaf_t);
    holder.obj.destroyed = &destroyed;
    ck_assert_str_eq(trace, "ABC");
    OBJ_DESTRUCT(&holder.obj);
    ck_assert_str_eq(trace, "ABCcba");
    ck_assert_int_eq(destroyed, 1);
    ck_assert_int_eq(holder.before, 7);
    ck_assert_int_eq(holder.after, 9);
}
END_TEST

START_TEST(new_from_class_pointer)
{
    opal_class_t *cls = OBJ_CLASS(middle_t);
    trace[0] = '\0';
    opal_object_t *o = OBJ_NEW_FROM_CLASS(cls);
    ck_assert_str_eq(trace, "AB");
    ck_assert_int_eq(((middle_t *) o)->b, 2);
    ck_assert(opal_obj_is_a(o, OBJ_CLASS(base_t)));
    ck_assert(opal_obj_is_a(o, OBJ_CLASS(opal_object_t)));
    ck_assert(!opal_obj_is_a(o, OBJ_CLASS(leaf_t)));
    OBJ_RELEASE(o);

    middle_t embedded;
    OBJ_CONSTRUCT_FROM_CLASS(&embedded, cls);
    ck_assert_int_eq(embedded.b, 2);
    OBJ_DESTRUCT(&embedded);
}
END_TEST

START_TEST(classes_reinitialise_after_finalize)
{
    leaf_t *o = OBJ_NEW(leaf_t);
    OBJ_RELEASE(o);
    int32_t epoch = opal_class_epoch();
    ck_assert_int_eq(atomic_load(&OBJ_CLASS(leaf_t)->cls_epoch), epoch);

    opal_class_finalize();
    ck_assert_int_eq(opal_class_epoch(), epoch + 1);
    ck_assert_int_ne(atomic_load(&OBJ_CLASS(leaf_t)->cls_epoch), opal_class_epoch());

    trace[0] = '\0';
    o = OBJ_NEW(leaf_t);
    ck_assert_str_eq(trace, "ABC");
    ck_assert_int_eq(atomic_load(&OBJ_CLASS(leaf_t)->cls_epoch), epoch + 1);
    OBJ_RELEASE(o);
    ck_assert_str_eq(trace, "ABCcba");
    opal_class_finalize();
}
END_TEST

START_TEST(object_outliving_finalize_is_destructed)
{
    int destroyed = 0;
    leaf_t *o = OBJ_NEW(leaf_t);
    o->destroyed = &destroyed;
    opal_class_finalize();
    trace[0] = '\0';
    OBJ_RELEASE(o);
    ck_assert_int_eq(destroyed, 1);
    ck_assert_str_eq(trace, "cba");
    opal_class_finalize();
}
END_TEST

/* Many threads racing to initialise one class and to move one object's
 * reference count: the count ends exact and the class is built once. */
typedef struct {
    opal_object_t super;
} racer_t;
static opal_atomic_int32_t racer_ctor_calls;
static void racer_ctor(racer_t *o)
{
    (void) o;
    atomic_fetch_add(&racer_ctor_calls, 1);
}
OBJ_CLASS_DECLARATION(racer_t);
OBJ_CLASS_INSTANCE(racer_t, opal_object_t, racer_ctor, NULL);

static racer_t *shared_racer;
static void *race_body(void *arg)
{
    (void) arg;
    racer_t *mine = OBJ_NEW(racer_t);
    OBJ_RELEASE(mine);
    for (int i = 0; i < 100000; ++i) {
        OBJ_RETAIN(shared_racer);
        racer_t *r = shared_racer;
        OBJ_RELEASE(r);
    }
    return NULL;
}

START_TEST(refcount_and_class_init_are_thread_safe)
{
    enum { NTHREADS = 4 };
    opal_class_finalize();
    atomic_store(&racer_ctor_calls, 0);
    shared_racer = OBJ_NEW(racer_t);
    pthread_t threads[NTHREADS];
    for (int i = 0; i < NTHREADS; ++i) {
        ck_assert_int_eq(pthread_create(&threads[i], NULL, race_body, NULL), 0);
    }
    for (int i = 0; i < NTHREADS; ++i) {
        pthread_join(threads[i], NULL);
    }
    ck_assert_int_eq(OBJ_REFCOUNT(shared_racer), 1);
    ck_assert_int_eq(atomic_load(&racer_ctor_calls), NTHREADS + 1);
    OBJ_RELEASE(shared_racer);
    opal_class_finalize();
}
END_TEST

#if OPAL_ENABLE_DEBUG
START_TEST(debug_catches_double_destruct)
{
    base_t o;
    OBJ_CONSTRUCT(&o, base_t);
    OBJ_DESTRUCT(&o);
    OBJ_DESTRUCT(&o);
}
END_TEST

START_TEST(debug_catches_release_of_destructed)
{
    base_t o;
    OBJ_CONSTRUCT(&o, base_t);
    OBJ_DESTRUCT(&o);
    base_t *p = &o;
    OBJ_RELEASE(p);
}
END_TEST

START_TEST(debug_catches_raw_memory)
{
    base_t *raw = calloc(1, sizeof(*raw));
    OBJ_RETAIN(raw);
}
END_TEST
#endif

static Suite *object_suite(void)
{
    Suite *s = suite_create("opal_object");
    OPAL_TEST_ADD(s, constructors_run_parent_first);
    OPAL_TEST_ADD(s, destructors_run_child_first);
    OPAL_TEST_ADD(s, class_without_hooks_inherits_chain);
    OPAL_TEST_ADD(s, new_object_has_one_reference);
    OPAL_TEST_ADD(s, release_to_zero_destroys_and_nulls);
    OPAL_TEST_ADD(s, construct_and_destruct_embedded);
    OPAL_TEST_ADD(s, new_from_class_pointer);
    OPAL_TEST_ADD(s, classes_reinitialise_after_finalize);
    OPAL_TEST_ADD(s, object_outliving_finalize_is_destructed);
    OPAL_TEST_ADD(s, refcount_and_class_init_are_thread_safe);
#if OPAL_ENABLE_DEBUG
    OPAL_TEST_ADD_SIGNAL(s, debug_catches_double_destruct, SIGABRT);
    OPAL_TEST_ADD_SIGNAL(s, debug_catches_release_of_destructed, SIGABRT);
    OPAL_TEST_ADD_SIGNAL(s, debug_catches_raw_memory, SIGABRT);
#endif
    return s;
}

int main(void)
{
    int rc = opal_test_run(object_suite());
    opal_class_finalize();
    return rc;
}
