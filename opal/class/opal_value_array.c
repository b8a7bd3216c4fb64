#include "opal/opal_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opal/class/opal_value_array.h"
#include "opal/util/opal_error.h"

#define MIN_CAPACITY 8

static void value_array_construct(opal_value_array_t *array)
{
    array->items = NULL;
    array->item_size = 0;
    array->num_items = 0;
    array->capacity = 0;
}

static void value_array_destruct(opal_value_array_t *array)
{
    free(array->items);
    value_array_construct(array);
}

OBJ_CLASS_INSTANCE(opal_value_array_t, opal_object_t, value_array_construct, value_array_destruct);

int opal_value_array_init(opal_value_array_t *array, size_t item_size)
{
    if (0 == item_size) {
        return OPAL_ERR_BAD_PARAM;
    }
    free(array->items);
    value_array_construct(array);
    array->item_size = item_size;
    return OPAL_SUCCESS;
}

int opal_value_array_reserve(opal_value_array_t *array, size_t n)
{
    if (0 == array->item_size) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (n <= array->capacity) {
        return OPAL_SUCCESS;
    }
    size_t max_items = SIZE_MAX / array->item_size;
    if (n > max_items) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    /* Doubling keeps a run of appends amortised O(1). */
    size_t capacity = array->capacity < MIN_CAPACITY ? MIN_CAPACITY : array->capacity;
    while (capacity < n) {
        capacity = capacity > max_items / 2 ? max_items : capacity * 2;
    }
    unsigned char *items = realloc(array->items, capacity * array->item_size);
    if (NULL == items) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    array->items = items;
    array->capacity = capacity;
    return OPAL_SUCCESS;
}

int opal_value_array_set_size(opal_value_array_t *array, size_t size)
{
    int rc = opal_value_array_reserve(array, size);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if (size > array->num_items) {
        memset(array->items + array->num_items * array->item_size, 0,
               (size - array->num_items) * array->item_size);
    }
    array->num_items = size;
    return OPAL_SUCCESS;
}

int opal_value_array_append_item(opal_value_array_t *array, const void *item)
{
    if (OPAL_UNLIKELY(array->num_items == SIZE_MAX)) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    int rc = opal_value_array_reserve(array, array->num_items + 1);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    memcpy(array->items + array->num_items * array->item_size, item, array->item_size);
    ++array->num_items;
    return OPAL_SUCCESS;
}

int opal_value_array_set_item(opal_value_array_t *array, size_t index, const void *item)
{
    if (index >= array->num_items) {
        if (OPAL_UNLIKELY(index == SIZE_MAX)) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        int rc = opal_value_array_set_size(array, index + 1);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    memcpy(array->items + index * array->item_size, item, array->item_size);
    return OPAL_SUCCESS;
}

int opal_value_array_remove_item(opal_value_array_t *array, size_t index)
{
    if (index >= array->num_items) {
        return OPAL_ERR_NOT_FOUND;
    }
    unsigned char *at = array->items + index * array->item_size;
    memmove(at, at + array->item_size, (array->num_items - index - 1) * array->item_size);
    --array->num_items;
    return OPAL_SUCCESS;
}
