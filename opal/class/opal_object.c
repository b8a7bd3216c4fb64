#include "opal/opal_config.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "opal/class/opal_object.h"

opal_class_t opal_object_t_class = {.cls_name = "opal_object_t",
                                    .cls_parent = NULL,
                                    .cls_construct = NULL,
                                    .cls_destruct = NULL,
                                    .cls_sizeof = sizeof(opal_object_t)};

/* Epochs start at 1 so that a zero-initialised class reads "never". */
opal_atomic_int32_t opal_class_current_epoch = 1;

/* Serialises class initialisation and finalisation. Lock order: this lock
 * is a leaf; constructors never run while it is held. */
static pthread_mutex_t class_lock = PTHREAD_MUTEX_INITIALIZER;

/* Every block of flattened arrays handed out in this epoch. */
static void **class_blocks = NULL;
static size_t class_blocks_count = 0;
static size_t class_blocks_size = 0;

static void remember_block(void *block)
{
    if (class_blocks_count == class_blocks_size) {
        size_t size = class_blocks_size ? 2 * class_blocks_size : 64;
        void **grown = realloc(class_blocks, size * sizeof(*grown));
        if (NULL == grown) {
            fprintf(stderr, "opal_class_initialize: out of memory\n");
            abort();
        }
        class_blocks = grown;
        class_blocks_size = size;
    }
    class_blocks[class_blocks_count++] = block;
}

void opal_class_initialize(opal_class_t *cls)
{
    int32_t epoch = atomic_load_explicit(&opal_class_current_epoch, memory_order_relaxed);

    pthread_mutex_lock(&class_lock);
    if (atomic_load_explicit(&cls->cls_epoch, memory_order_relaxed) == epoch) {
        pthread_mutex_unlock(&class_lock);
        return;
    }

    int depth = 0, nctors = 0, ndtors = 0;
    for (opal_class_t *c = cls; NULL != c; c = c->cls_parent) {
        ++depth;
        nctors += (NULL != c->cls_construct);
        ndtors += (NULL != c->cls_destruct);
    }

    void **block = malloc((size_t) (nctors + ndtors + 2) * sizeof(void *));
    if (NULL == block) {
        fprintf(stderr, "opal_class_initialize: out of memory for class %s\n", cls->cls_name);
        abort();
    }
    opal_construct_t *ctors = (opal_construct_t *) block;
    opal_destruct_t *dtors = (opal_destruct_t *) (block + nctors + 1);

    /* Walking child to parent: destructors are appended (child first),
     * constructors filled from the end (parent first). */
    int ci = nctors, di = 0;
    ctors[nctors] = NULL;
    for (opal_class_t *c = cls; NULL != c; c = c->cls_parent) {
        if (NULL != c->cls_construct) {
            ctors[--ci] = c->cls_construct;
        }
        if (NULL != c->cls_destruct) {
            dtors[di++] = c->cls_destruct;
        }
    }
    dtors[di] = NULL;

    remember_block(block);
    cls->cls_depth = depth;
    cls->cls_construct_array = ctors;
    cls->cls_destruct_array = dtors;
    /* Pairs with the acquire in opal_class_ensure_initialized(). */
    atomic_store_explicit(&cls->cls_epoch, epoch, memory_order_release);
    pthread_mutex_unlock(&class_lock);
}

void opal_class_finalize(void)
{
    pthread_mutex_lock(&class_lock);
    for (size_t i = 0; i < class_blocks_count; ++i) {
        free(class_blocks[i]);
    }
    free(class_blocks);
    class_blocks = NULL;
    class_blocks_count = class_blocks_size = 0;
    atomic_fetch_add_explicit(&opal_class_current_epoch, 1, memory_order_relaxed);
    pthread_mutex_unlock(&class_lock);
}

int32_t opal_class_epoch(void)
{
    return atomic_load_explicit(&opal_class_current_epoch, memory_order_relaxed);
}

int opal_obj_is_a(const opal_object_t *obj, const opal_class_t *cls)
{
    for (const opal_class_t *c = obj->obj_class; NULL != c; c = c->cls_parent) {
        if (c == cls) {
            return 1;
        }
    }
    return 0;
}

void opal_obj_fatal(const opal_object_t *obj, const char *what, const char *file, int line)
{
#if OPAL_ENABLE_DEBUG
    if (NULL == obj) {
        fprintf(stderr, "%s:%d: %s on a NULL object\n", file, line, what);
    } else if (OPAL_OBJ_DEAD_ID == obj->obj_magic_id) {
        fprintf(stderr,
                "%s:%d: %s on object %p of class %s (made at %s:%d) that was already "
                "destructed\n",
                file, line, what, (const void *) obj, obj->obj_class->cls_name, obj->obj_file,
                obj->obj_line);
    } else if (OPAL_OBJ_MAGIC_ID == obj->obj_magic_id) {
        fprintf(stderr, "%s:%d: %s on object %p of class %s (made at %s:%d)\n", file, line, what,
                (const void *) obj, obj->obj_class->cls_name, obj->obj_file, obj->obj_line);
    } else {
        fprintf(stderr,
                "%s:%d: %s on %p, which is not a constructed object (raw or freed memory: "
                "magic id 0x%016llx)\n",
                file, line, what, (const void *) obj, (unsigned long long) obj->obj_magic_id);
    }
#else
    fprintf(stderr, "%s:%d: %s on object %p\n", file, line, what, (const void *) obj);
#endif
    fflush(stderr);
    abort();
}
