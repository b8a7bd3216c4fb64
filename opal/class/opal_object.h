/*
 * The object system: reference-counted C objects with single inheritance.
 *
 * An object's first member is its parent, named `super`; the root is
 * opal_object_t. A class is described once with OBJ_CLASS_INSTANCE (its
 * name, parent, constructor and destructor). The first time an object of a
 * class is built, the class flattens its constructor chain (parent first)
 * and destructor chain (child first) into arrays, so construction is a loop
 * with no recursion. This is thread-safe and lazy.
 *
 *   typedef struct { opal_list_item_t super; int x; } my_item_t;
 *   OBJ_CLASS_DECLARATION(my_item_t);              (in the header)
 *   OBJ_CLASS_INSTANCE(my_item_t, opal_list_item_t, ctor, dtor);  (in a .c)
 *
 *   my_item_t *it = OBJ_NEW(my_item_t);      refcount 1
 *   OBJ_RETAIN(it);                          refcount 2
 *   OBJ_RELEASE(it);                         refcount 1, it set to NULL
 *
 * OBJ_RELEASE destroys and frees the object when the count reaches zero and
 * always sets the caller's pointer to NULL: after a release the caller owns
 * nothing. OBJ_CONSTRUCT / OBJ_DESTRUCT do the same for an object embedded
 * in other storage (never freed by the object system).
 *
 * opal_class_finalize() (called by opal_finalize_util) frees the flattened
 * arrays and starts a new epoch, after which every class initialises again
 * on first use.
 *
 * In debug builds (OPAL_ENABLE_DEBUG) each live object carries a magic id:
 * a destruct of an object already destructed, a release of a destructed
 * object, or a retain/release of memory that was never constructed aborts
 * with a message naming the class and where the object was made.
 */
#ifndef OPAL_CLASS_OPAL_OBJECT_H
#define OPAL_CLASS_OPAL_OBJECT_H

#include "opal/opal_config.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>

#include "opal/threads/opal_atomic.h"

typedef struct opal_object_t opal_object_t;
typedef struct opal_class_t opal_class_t;
typedef void (*opal_construct_t)(opal_object_t *);
typedef void (*opal_destruct_t)(opal_object_t *);

/* A class. Fields are filled by OBJ_CLASS_INSTANCE; the cls_* arrays and
 * cls_epoch by opal_class_initialize(). */
struct opal_class_t {
    const char *cls_name;
    opal_class_t *cls_parent;
    opal_construct_t cls_construct;
    opal_destruct_t cls_destruct;
    size_t cls_sizeof;
    /* Epoch in which the arrays below were built; 0 = never. Read with
     * acquire, written with release after the arrays are complete. */
    opal_atomic_int32_t cls_epoch;
    int cls_depth;
    /* NULL-terminated; constructors parent first, destructors child first.
     * Both live in one heap block that the class system owns (not the
     * class), so a class inside an unloaded plugin leaves nothing behind. */
    opal_construct_t *cls_construct_array;
    opal_destruct_t *cls_destruct_array;
};

#define OPAL_OBJ_MAGIC_ID ((uint64_t) 0xdeafbeeddeafbeedULL)
#define OPAL_OBJ_DEAD_ID ((uint64_t) 0xdeaddeaddeaddeadULL)

/* The root of every object. */
struct opal_object_t {
#if OPAL_ENABLE_DEBUG
    /* OPAL_OBJ_MAGIC_ID while constructed, OPAL_OBJ_DEAD_ID after destruct. */
    uint64_t obj_magic_id;
    const char *obj_file;
    int obj_line;
#endif
    opal_class_t *obj_class;
    opal_atomic_int32_t obj_reference_count;
};

/* The class object of a type, by the name OBJ_CLASS_INSTANCE gave it. */
#define OBJ_CLASS(type) (&(type##_class))

/* Declares a class (in a header). */
#define OBJ_CLASS_DECLARATION(type) extern OPAL_DECLSPEC opal_class_t type##_class

/* Defines a class (in one .c file). parent is a type name; constructor and
 * destructor may be NULL. */
#define OBJ_CLASS_INSTANCE(type, parent, constructor, destructor)                          \
    opal_class_t type##_class = {.cls_name = #type,                                         \
                                 .cls_parent = OBJ_CLASS(parent),                           \
                                 .cls_construct = (opal_construct_t) (constructor),         \
                                 .cls_destruct = (opal_destruct_t) (destructor),            \
                                 .cls_sizeof = sizeof(type)}

/* The root class (its parent is NULL). */
OBJ_CLASS_DECLARATION(opal_object_t);

/* Builds the flattened constructor/destructor arrays of a class. Called by
 * the macros on first use; thread-safe and idempotent within an epoch.
 * Aborts when out of memory (nothing sensible can continue). */
OPAL_DECLSPEC void opal_class_initialize(opal_class_t *cls);

/* Frees every class's arrays and starts a new epoch, so classes are
 * rebuilt on next use. Only call when no thread is creating objects. */
OPAL_DECLSPEC void opal_class_finalize(void);

/* The current epoch (starts at 1, +1 per opal_class_finalize). */
OPAL_DECLSPEC int32_t opal_class_epoch(void);

/* Aborts with a message naming the object, its class and what was wrong:
 * the debug-build checks end here. */
OPAL_DECLSPEC void opal_obj_fatal(const opal_object_t *obj, const char *what, const char *file,
                                  int line) __attribute__((noreturn));

OPAL_DECLSPEC extern opal_atomic_int32_t opal_class_current_epoch;

static inline void opal_class_ensure_initialized(opal_class_t *cls)
{
    /* Pairs with the release store of cls_epoch in opal_class_initialize():
     * seeing the current epoch means the arrays are complete. */
    if (OPAL_UNLIKELY(atomic_load_explicit(&cls->cls_epoch, memory_order_acquire)
                      != atomic_load_explicit(&opal_class_current_epoch, memory_order_relaxed))) {
        opal_class_initialize(cls);
    }
}

/* Runs the constructors of an object whose memory is already allocated. */
static inline void opal_obj_run_constructors(opal_object_t *object)
{
    opal_construct_t *ctor = object->obj_class->cls_construct_array;
    while (NULL != *ctor) {
        (*ctor)(object);
        ++ctor;
    }
}

static inline void opal_obj_run_destructors(opal_object_t *object)
{
    /* An object made before an opal_class_finalize() may be released after
     * it: its class's arrays were freed, so rebuild them first. */
    opal_class_ensure_initialized(object->obj_class);
    opal_destruct_t *dtor = object->obj_class->cls_destruct_array;
    while (NULL != *dtor) {
        (*dtor)(object);
        ++dtor;
    }
}

/* Constructs an object in place from a class pointer (the free lists build
 * items of a class chosen at run time this way). */
static inline void opal_obj_construct_internal(opal_object_t *object, opal_class_t *cls,
                                               const char *file, int line)
{
    opal_class_ensure_initialized(cls);
    object->obj_class = cls;
    atomic_init(&object->obj_reference_count, 1);
#if OPAL_ENABLE_DEBUG
    object->obj_magic_id = OPAL_OBJ_MAGIC_ID;
    object->obj_file = file;
    object->obj_line = line;
#else
    (void) file;
    (void) line;
#endif
    opal_obj_run_constructors(object);
}

static inline opal_object_t *opal_obj_new_internal(opal_class_t *cls, const char *file, int line)
{
    opal_class_ensure_initialized(cls);
    opal_object_t *object = (opal_object_t *) malloc(cls->cls_sizeof);
    if (OPAL_UNLIKELY(NULL == object)) {
        return NULL;
    }
    opal_obj_construct_internal(object, cls, file, line);
    return object;
}

#if OPAL_ENABLE_DEBUG
static inline void opal_obj_check_live(const opal_object_t *object, const char *what,
                                       const char *file, int line)
{
    if (NULL == object) {
        opal_obj_fatal(object, what, file, line);
    }
    if (OPAL_OBJ_MAGIC_ID != object->obj_magic_id) {
        opal_obj_fatal(object, what, file, line);
    }
}
#define OPAL_OBJ_CHECK_LIVE(obj, what) \
    opal_obj_check_live((const opal_object_t *) (obj), (what), __FILE__, __LINE__)
#else
#define OPAL_OBJ_CHECK_LIVE(obj, what) ((void) 0)
#endif

static inline void opal_obj_destruct_internal(opal_object_t *object, const char *file, int line)
{
#if OPAL_ENABLE_DEBUG
    opal_obj_check_live(object, "OBJ_DESTRUCT", file, line);
#else
    (void) file;
    (void) line;
#endif
    opal_obj_run_destructors(object);
#if OPAL_ENABLE_DEBUG
    object->obj_magic_id = OPAL_OBJ_DEAD_ID;
#endif
}

/* Returns the new count. Sequentially consistent: the release that reaches
 * zero must see every write other owners made before their release. */
static inline int32_t opal_obj_update(opal_object_t *object, int32_t delta)
{
    return opal_atomic_add_fetch_32(&object->obj_reference_count, delta);
}

static inline void opal_obj_release_internal(opal_object_t *object, const char *file, int line)
{
#if OPAL_ENABLE_DEBUG
    opal_obj_check_live(object, "OBJ_RELEASE", file, line);
#else
    (void) file;
    (void) line;
#endif
    int32_t count = opal_obj_update(object, -1);
    if (0 == count) {
        opal_obj_run_destructors(object);
#if OPAL_ENABLE_DEBUG
        object->obj_magic_id = OPAL_OBJ_DEAD_ID;
#endif
        free(object);
    }
#if OPAL_ENABLE_DEBUG
    else if (count < 0) {
        opal_obj_fatal(object, "OBJ_RELEASE (reference count below zero)", file, line);
    }
#endif
}

static inline void opal_obj_retain_internal(opal_object_t *object, const char *file, int line)
{
#if OPAL_ENABLE_DEBUG
    opal_obj_check_live(object, "OBJ_RETAIN", file, line);
    if (opal_obj_update(object, 1) <= 1) {
        opal_obj_fatal(object, "OBJ_RETAIN (object already released)", file, line);
    }
#else
    (void) file;
    (void) line;
    opal_obj_update(object, 1);
#endif
}

/* Allocates and constructs an object of the given type; NULL when out of
 * memory. The caller owns the one reference. */
#define OBJ_NEW(type) \
    ((type *) (void *) opal_obj_new_internal(OBJ_CLASS(type), __FILE__, __LINE__))

/* The same, from a class pointer chosen at run time. */
#define OBJ_NEW_FROM_CLASS(cls) opal_obj_new_internal((cls), __FILE__, __LINE__)

/* Adds a reference. */
#define OBJ_RETAIN(obj) opal_obj_retain_internal((opal_object_t *) (obj), __FILE__, __LINE__)

/* Drops a reference, destroying and freeing the object at zero, and sets
 * the caller's pointer (an lvalue) to NULL in every case. */
#define OBJ_RELEASE(obj)                                                        \
    do {                                                                        \
        opal_obj_release_internal((opal_object_t *) (obj), __FILE__, __LINE__); \
        (obj) = NULL;                                                           \
    } while (0)

/* Constructs an object embedded in caller-owned memory. */
#define OBJ_CONSTRUCT(obj, type) OBJ_CONSTRUCT_FROM_CLASS((obj), OBJ_CLASS(type))

#define OBJ_CONSTRUCT_FROM_CLASS(obj, cls) \
    opal_obj_construct_internal((opal_object_t *) (obj), (cls), __FILE__, __LINE__)

/* Destroys an embedded object; its memory stays the caller's. */
#define OBJ_DESTRUCT(obj) opal_obj_destruct_internal((opal_object_t *) (obj), __FILE__, __LINE__)

/* The current reference count (tests and debugging). */
#define OBJ_REFCOUNT(obj) \
    atomic_load_explicit(&((opal_object_t *) (obj))->obj_reference_count, memory_order_relaxed)

/* The class of an object, and whether it is (derived from) a class. */
#define OBJ_CLASS_OF(obj) (((opal_object_t *) (obj))->obj_class)
OPAL_DECLSPEC int opal_obj_is_a(const opal_object_t *obj, const opal_class_t *cls);

#endif /* OPAL_CLASS_OPAL_OBJECT_H */
