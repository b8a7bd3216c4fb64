/*
 * opal_value_array_t: a dynamic array of fixed-size elements stored by
 * value, contiguously (a C array that grows).
 *
 *   opal_value_array_t v;
 *   OBJ_CONSTRUCT(&v, opal_value_array_t);
 *   opal_value_array_init(&v, sizeof(my_rec_t));
 *   opal_value_array_append_item(&v, &rec);              (copies rec)
 *   my_rec_t *r = OPAL_VALUE_ARRAY_GET_ITEM(&v, my_rec_t, 0);
 *   OBJ_DESTRUCT(&v);
 *
 * Elements are item_size bytes apart from a base allocated by malloc, so
 * an element type whose size is item_size is correctly aligned for any
 * type up to max_align_t. A pointer into the array stays valid until the
 * next call that changes the size or reserves room (the storage may move).
 * Storage grows geometrically and never shrinks except at destruct.
 *
 * Not thread-safe: callers that share an array lock around it.
 */
#ifndef OPAL_CLASS_OPAL_VALUE_ARRAY_H
#define OPAL_CLASS_OPAL_VALUE_ARRAY_H

#include "opal/opal_config.h"

#include <stddef.h>

#include "opal/class/opal_object.h"

typedef struct opal_value_array_t {
    opal_object_t super;
    unsigned char *items;
    size_t item_size;
    size_t num_items; /* elements in use */
    size_t capacity;  /* elements allocated */
} opal_value_array_t;
OBJ_CLASS_DECLARATION(opal_value_array_t);

/* Sets the element size and empties the array. OPAL_ERR_BAD_PARAM when
 * item_size is 0. */
OPAL_DECLSPEC int opal_value_array_init(opal_value_array_t *array, size_t item_size);

/* Makes room for at least n elements without changing the size.
 * OPAL_ERR_BAD_PARAM before init, OPAL_ERR_OUT_OF_RESOURCE when memory
 * runs out (or n * item_size overflows). */
OPAL_DECLSPEC int opal_value_array_reserve(opal_value_array_t *array, size_t n);

/* Sets the number of elements; elements added by growing are zeroed, those
 * cut off by shrinking are dropped. Errors as for reserve. */
OPAL_DECLSPEC int opal_value_array_set_size(opal_value_array_t *array, size_t size);

/* Copies item_size bytes from item to a new last element. item must not
 * point into the array (growing may move it). Errors as for reserve. */
OPAL_DECLSPEC int opal_value_array_append_item(opal_value_array_t *array, const void *item);

/* Copies item into element index, growing the array (zero-filled) when
 * index >= size; item must not point into the array. Errors as for
 * reserve. */
OPAL_DECLSPEC int opal_value_array_set_item(opal_value_array_t *array, size_t index,
                                            const void *item);

/* Removes element index, shifting the later ones down by one.
 * OPAL_ERR_NOT_FOUND when index >= size. */
OPAL_DECLSPEC int opal_value_array_remove_item(opal_value_array_t *array, size_t index);

/* The number of elements. */
static inline size_t opal_value_array_get_size(const opal_value_array_t *array)
{
    return array->num_items;
}

/* A pointer to element index, or NULL when index >= size. */
static inline void *opal_value_array_get_item(opal_value_array_t *array, size_t index)
{
    return index < array->num_items ? array->items + index * array->item_size : NULL;
}

/* Typed access with no bounds check: the element as a type *. */
#define OPAL_VALUE_ARRAY_GET_ITEM(array, type, index)                                              \
    ((type *) (void *) ((array)->items + (size_t) (index) * (array)->item_size))

/* The first element as a type *, for handing the array to C code. */
#define OPAL_VALUE_ARRAY_GET_BASE(array, type) ((type *) (void *) (array)->items)

#endif /* OPAL_CLASS_OPAL_VALUE_ARRAY_H */
