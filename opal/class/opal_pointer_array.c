#include "opal/opal_config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "opal/class/opal_pointer_array.h"
#include "opal/util/opal_error.h"

#define DEFAULT_BLOCK_SIZE 32

static void pointer_array_construct(opal_pointer_array_t *array)
{
    OBJ_CONSTRUCT(&array->lock, opal_mutex_t);
    array->addr = NULL;
    array->used_map = NULL;
    array->size = 0;
    array->num_used = 0;
    array->lowest_free = 0;
    array->max_size = INT_MAX;
    array->block_size = DEFAULT_BLOCK_SIZE;
}

static void pointer_array_destruct(opal_pointer_array_t *array)
{
    free(array->addr);
    free(array->used_map);
    array->addr = NULL;
    array->used_map = NULL;
    array->size = 0;
    array->num_used = 0;
    OBJ_DESTRUCT(&array->lock);
}

OBJ_CLASS_INSTANCE(opal_pointer_array_t, opal_object_t, pointer_array_construct,
                   pointer_array_destruct);

static inline int map_words(int nslots)
{
    return nslots / 64 + (0 != nslots % 64);
}

static inline bool slot_used(const opal_pointer_array_t *array, int index)
{
    return 0 != (array->used_map[index / 64] & ((uint64_t) 1 << (index % 64)));
}

/* The lowest free index at or above start, or size when there is none. */
static int next_free(const opal_pointer_array_t *array, int start)
{
    if (start >= array->size) {
        return array->size;
    }
    int w = start / 64;
    /* Pretend the bits below start are used so the first word's scan
     * starts at start. */
    uint64_t free_bits = ~(array->used_map[w] | (((uint64_t) 1 << (start % 64)) - 1));
    int words = map_words(array->size);
    while (0 == free_bits) {
        if (++w >= words) {
            return array->size;
        }
        free_bits = ~array->used_map[w];
    }
    int index = w * 64 + __builtin_ctzll(free_bits);
    return index < array->size ? index : array->size;
}

/* Grows to hold at least need slots (need <= max_size). */
static int grow(opal_pointer_array_t *array, int need)
{
    if (need <= array->size) {
        return OPAL_SUCCESS;
    }
    /* 64-bit arithmetic: size + block_size may pass INT_MAX. */
    int64_t target = array->size + (int64_t) array->block_size;
    if (target < array->size + (int64_t) array->size / 2) {
        target = array->size + (int64_t) array->size / 2;
    }
    if (target < need) {
        target = need;
    }
    target = (target + array->block_size - 1) / array->block_size * array->block_size;
    if (target > array->max_size) {
        target = array->max_size;
    }
    int new_size = (int) target;

    void **addr = realloc(array->addr, (size_t) new_size * sizeof(void *));
    if (NULL == addr) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    array->addr = addr;
    memset(addr + array->size, 0, (size_t) (new_size - array->size) * sizeof(void *));

    int old_words = map_words(array->size);
    int new_words = map_words(new_size);
    if (new_words > old_words) {
        uint64_t *map = realloc(array->used_map, (size_t) new_words * sizeof(uint64_t));
        if (NULL == map) {
            /* addr is merely larger than size says: harmless, reused by
             * the next successful grow. */
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        memset(map + old_words, 0, (size_t) (new_words - old_words) * sizeof(uint64_t));
        array->used_map = map;
    }
    array->size = new_size;
    return OPAL_SUCCESS;
}

/* Stores a non-NULL value at index < size. */
static void store(opal_pointer_array_t *array, int index, void *value)
{
    if (!slot_used(array, index)) {
        array->used_map[index / 64] |= (uint64_t) 1 << (index % 64);
        ++array->num_used;
        if (index == array->lowest_free) {
            array->lowest_free = next_free(array, index + 1);
        }
    }
    array->addr[index] = value;
}

/* Frees the slot at index < size when in use; false when it was free. */
static bool release(opal_pointer_array_t *array, int index)
{
    if (!slot_used(array, index)) {
        return false;
    }
    array->used_map[index / 64] &= ~((uint64_t) 1 << (index % 64));
    array->addr[index] = NULL;
    --array->num_used;
    if (index < array->lowest_free) {
        array->lowest_free = index;
    }
    return true;
}

int opal_pointer_array_init(opal_pointer_array_t *array, int initial_size, int max_size,
                            int block_size)
{
    if (initial_size < 0 || max_size < 1 || block_size < 1 || initial_size > max_size) {
        return OPAL_ERR_BAD_PARAM;
    }
    OPAL_THREAD_LOCK(&array->lock);
    int rc = OPAL_ERR_BAD_PARAM;
    if (max_size < array->size) {
        goto out;
    }
    array->max_size = max_size;
    array->block_size = block_size;
    rc = grow(array, initial_size);
out:
    OPAL_THREAD_UNLOCK(&array->lock);
    return rc;
}

int opal_pointer_array_add(opal_pointer_array_t *array, void *ptr)
{
    if (NULL == ptr) {
        return OPAL_ERR_BAD_PARAM;
    }
    OPAL_THREAD_LOCK(&array->lock);
    int index = array->lowest_free;
    if (index >= array->size) {
        int rc = index < array->max_size ? grow(array, index + 1) : OPAL_ERR_OUT_OF_RESOURCE;
        if (OPAL_SUCCESS != rc) {
            index = rc;
            goto out;
        }
    }
    store(array, index, ptr);
out:
    OPAL_THREAD_UNLOCK(&array->lock);
    return index;
}

int opal_pointer_array_set_item(opal_pointer_array_t *array, int index, void *value)
{
    if (index < 0) {
        return OPAL_ERR_BAD_PARAM;
    }
    OPAL_THREAD_LOCK(&array->lock);
    int rc = OPAL_SUCCESS;
    if (NULL == value) {
        if (index < array->size) {
            release(array, index);
        }
        goto out;
    }
    if (index >= array->max_size) {
        rc = OPAL_ERR_BAD_PARAM;
        goto out;
    }
    rc = grow(array, index + 1);
    if (OPAL_SUCCESS == rc) {
        store(array, index, value);
    }
out:
    OPAL_THREAD_UNLOCK(&array->lock);
    return rc;
}

void *opal_pointer_array_get_item(opal_pointer_array_t *array, int index)
{
    void *value = NULL;
    OPAL_THREAD_LOCK(&array->lock);
    if (index >= 0 && index < array->size) {
        value = array->addr[index];
    }
    OPAL_THREAD_UNLOCK(&array->lock);
    return value;
}

int opal_pointer_array_remove_item(opal_pointer_array_t *array, int index)
{
    if (index < 0) {
        return OPAL_ERR_BAD_PARAM;
    }
    OPAL_THREAD_LOCK(&array->lock);
    bool was_used = index < array->size && release(array, index);
    OPAL_THREAD_UNLOCK(&array->lock);
    return was_used ? OPAL_SUCCESS : OPAL_ERR_NOT_FOUND;
}

bool opal_pointer_array_test_and_set_item(opal_pointer_array_t *array, int index, void *value)
{
    if (index < 0 || NULL == value) {
        return false;
    }
    OPAL_THREAD_LOCK(&array->lock);
    bool set = false;
    if (index < array->max_size && OPAL_SUCCESS == grow(array, index + 1) &&
        !slot_used(array, index)) {
        store(array, index, value);
        set = true;
    }
    OPAL_THREAD_UNLOCK(&array->lock);
    return set;
}

int opal_pointer_array_set_size(opal_pointer_array_t *array, int size)
{
    if (size < 0) {
        return OPAL_ERR_BAD_PARAM;
    }
    OPAL_THREAD_LOCK(&array->lock);
    int rc = size > array->max_size ? OPAL_ERR_BAD_PARAM : grow(array, size);
    OPAL_THREAD_UNLOCK(&array->lock);
    return rc;
}

void opal_pointer_array_remove_all(opal_pointer_array_t *array)
{
    OPAL_THREAD_LOCK(&array->lock);
    if (array->size > 0) {
        memset(array->addr, 0, (size_t) array->size * sizeof(void *));
        memset(array->used_map, 0, (size_t) map_words(array->size) * sizeof(uint64_t));
    }
    array->num_used = 0;
    array->lowest_free = 0;
    OPAL_THREAD_UNLOCK(&array->lock);
}

int opal_pointer_array_get_size(opal_pointer_array_t *array)
{
    OPAL_THREAD_LOCK(&array->lock);
    int size = array->size;
    OPAL_THREAD_UNLOCK(&array->lock);
    return size;
}

int opal_pointer_array_get_num_used(opal_pointer_array_t *array)
{
    OPAL_THREAD_LOCK(&array->lock);
    int used = array->num_used;
    OPAL_THREAD_UNLOCK(&array->lock);
    return used;
}
