/*
 * opal_pointer_array_t: a sparse array of pointers indexed by small
 * integers, handing out the lowest free index (handles, communicator ids,
 * request ids).
 *
 * A slot is in use exactly when it holds a non-NULL pointer: add and
 * set_item fill a slot, remove_item (or set_item with NULL) frees it, and
 * get_item returns NULL for a free slot or an index past the end. The
 * array grows on demand by at least block_size slots (and at least half
 * its size, so long runs of adds stay amortised O(1)), never past
 * max_size. The array does not own the pointers it holds.
 *
 *   opal_pointer_array_t reqs;
 *   OBJ_CONSTRUCT(&reqs, opal_pointer_array_t);
 *   opal_pointer_array_init(&reqs, 64, 1 << 20, 64);
 *   int id = opal_pointer_array_add(&reqs, req);     (id < 0: error code)
 *   ...
 *   opal_pointer_array_remove_item(&reqs, id);
 *
 * Every operation takes the array's lock when opal_using_threads(), so an
 * array may be shared between threads. A pointer read with get_item is the
 * caller's to keep valid.
 */
#ifndef OPAL_CLASS_OPAL_POINTER_ARRAY_H
#define OPAL_CLASS_OPAL_POINTER_ARRAY_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stdint.h>

#include "opal/class/opal_object.h"
#include "opal/threads/opal_mutex.h"

typedef struct opal_pointer_array_t {
    opal_object_t super;
    opal_mutex_t lock;
    void **addr;        /* size slots */
    uint64_t *used_map; /* bit i set when addr[i] != NULL */
    int size;           /* slots allocated */
    int num_used;
    int lowest_free; /* every index below it is in use */
    int max_size;
    int block_size;
} opal_pointer_array_t;
OBJ_CLASS_DECLARATION(opal_pointer_array_t);

/* Sets the initial allocation, the maximum number of slots and the growth
 * step (defaults without init: 0, INT_MAX, 32). OPAL_ERR_BAD_PARAM for a
 * negative size, max_size < 1, block_size < 1, an initial size above
 * max_size, or a max_size below the slots already allocated;
 * OPAL_ERR_OUT_OF_RESOURCE when memory runs out. */
OPAL_DECLSPEC int opal_pointer_array_init(opal_pointer_array_t *array, int initial_size,
                                          int max_size, int block_size);

/* Stores ptr (not NULL) in the lowest free slot and returns its index, or
 * a negative error: OPAL_ERR_BAD_PARAM for NULL, OPAL_ERR_OUT_OF_RESOURCE
 * when every slot below max_size is in use or memory runs out. */
OPAL_DECLSPEC int opal_pointer_array_add(opal_pointer_array_t *array, void *ptr);

/* Stores value at index, growing the array as needed; a previous pointer
 * there is overwritten. NULL frees the slot. OPAL_ERR_BAD_PARAM for an
 * index < 0 or >= max_size; OPAL_ERR_OUT_OF_RESOURCE when growing fails. */
OPAL_DECLSPEC int opal_pointer_array_set_item(opal_pointer_array_t *array, int index, void *value);

/* The pointer at index; NULL for a free slot or an index outside the
 * array. */
OPAL_DECLSPEC void *opal_pointer_array_get_item(opal_pointer_array_t *array, int index);

/* Frees the slot at index (the pointer is the caller's). OPAL_ERR_NOT_FOUND
 * when the slot is already free or past the end, OPAL_ERR_BAD_PARAM for a
 * negative index. */
OPAL_DECLSPEC int opal_pointer_array_remove_item(opal_pointer_array_t *array, int index);

/* Atomically: when the slot at index is free, stores value (not NULL) and
 * returns true; returns false when the slot is in use, value is NULL, the
 * index is out of [0, max_size) or growing fails. */
OPAL_DECLSPEC bool opal_pointer_array_test_and_set_item(opal_pointer_array_t *array, int index,
                                                        void *value);

/* Grows the allocation to at least size slots (never shrinks).
 * OPAL_ERR_BAD_PARAM above max_size, OPAL_ERR_OUT_OF_RESOURCE. */
OPAL_DECLSPEC int opal_pointer_array_set_size(opal_pointer_array_t *array, int size);

/* Frees every slot; keeps the allocation. */
OPAL_DECLSPEC void opal_pointer_array_remove_all(opal_pointer_array_t *array);

/* Slots allocated: every index that holds a pointer is below it. */
OPAL_DECLSPEC int opal_pointer_array_get_size(opal_pointer_array_t *array);

/* Slots in use. */
OPAL_DECLSPEC int opal_pointer_array_get_num_used(opal_pointer_array_t *array);

#endif /* OPAL_CLASS_OPAL_POINTER_ARRAY_H */
