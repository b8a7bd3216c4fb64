/*
 * opal_hash_table_t: a map from keys to void * values, built for fast
 * lookup.
 *
 * Keys are uint32, uint64 or byte strings (pointer + length; any bytes,
 * NULs included). A table holds one key kind at a time: the first set
 * after init (or remove_all) fixes it, and any call with another kind
 * fails with OPAL_ERR_BAD_PARAM. Byte keys are copied: the table owns its
 * copies and frees them on remove, remove_all and destruct. Values are the
 * caller's; the table never frees them. NULL is a valid value.
 *
 * The table is open-addressed with linear probing over a power-of-two
 * array; integer keys go through a 64-bit mixer and byte keys through a
 * word-at-a-time hash, so clustered keys (0, 1, 2 ... or 0, 4096, 8192 ...)
 * spread evenly. The table grows (doubling and rehashing) when live plus
 * removed slots pass 3/4 of the array; it never shrinks on remove.
 *
 * Iteration walks the array with a cursor (a size_t the table fills in):
 *
 *   uint64_t key; my_t *value;
 *   OPAL_HASH_TABLE_FOREACH(key, uint64, value, &table) {
 *       if (done_with(value)) {
 *           opal_hash_table_remove_value_uint64(&table, key);   (safe)
 *       }
 *   }
 *
 * Removing a key never moves another entry, so during an iteration it is
 * safe to remove the current key or any other, and to replace the value of
 * an existing key: every key present from start to end is visited exactly
 * once, removed keys not yet reached are not visited. Adding a new key
 * during an iteration is not allowed (it may rehash): the rest of that
 * iteration would be meaningless. The order is unspecified.
 *
 * Not thread-safe: callers that share a table lock around it.
 */
#ifndef OPAL_CLASS_OPAL_HASH_TABLE_H
#define OPAL_CLASS_OPAL_HASH_TABLE_H

#include "opal/opal_config.h"

#include <stddef.h>
#include <stdint.h>

#include "opal/class/opal_object.h"
#include "opal/util/opal_error.h"

typedef enum opal_hash_key_kind_t {
    OPAL_HASH_KEY_NONE = 0, /* empty table, kind not chosen yet */
    OPAL_HASH_KEY_UINT32,
    OPAL_HASH_KEY_UINT64,
    OPAL_HASH_KEY_PTR,
} opal_hash_key_kind_t;

/* One slot of the array. tag is 0 for a never-used slot, 1 for a removed
 * one, and otherwise 32 bits of the key's hash (never 0 or 1), which lets a
 * probe skip most non-matching byte keys without touching their bytes. */
typedef struct opal_hash_slot_t {
    uint32_t tag;
    uint32_t key_len; /* byte keys: the length; 0 for integer keys */
    union {
        uint64_t u64;       /* integer keys, and byte keys of <= 8 bytes */
        unsigned char *ptr; /* byte keys longer than 8: the table's copy */
    } key;
    void *value;
} opal_hash_slot_t;

typedef struct opal_hash_table_t {
    opal_object_t super;
    opal_hash_slot_t *slots;
    size_t capacity; /* 0 or a power of two */
    size_t count;    /* live entries */
    size_t removed;  /* slots tagged removed */
    size_t grow_at;  /* count + removed above this triggers a rehash */
    opal_hash_key_kind_t kind;
} opal_hash_table_t;
OBJ_CLASS_DECLARATION(opal_hash_table_t);

/* Largest byte key the table accepts. */
#define OPAL_HASH_TABLE_MAX_KEY_SIZE ((size_t) UINT32_MAX)

/* Sizes an empty table for about expected entries without a rehash.
 * Optional (the first set allocates a small table), and only valid while
 * the table is empty: OPAL_ERR_BAD_PARAM otherwise. Returns
 * OPAL_ERR_OUT_OF_RESOURCE when memory runs out. */
OPAL_DECLSPEC int opal_hash_table_init(opal_hash_table_t *ht, size_t expected);

/* The number of entries. */
static inline size_t opal_hash_table_get_size(const opal_hash_table_t *ht)
{
    return ht->count;
}

/* The key kind the table holds, OPAL_HASH_KEY_NONE before the first set. */
static inline opal_hash_key_kind_t opal_hash_table_key_kind(const opal_hash_table_t *ht)
{
    return ht->kind;
}

/* Removes every entry (freeing the table's key copies) and forgets the key
 * kind; keeps the array for reuse. */
OPAL_DECLSPEC void opal_hash_table_remove_all(opal_hash_table_t *ht);

/* Lookup: stores the value in *value (when value is not NULL) and returns
 * OPAL_SUCCESS, or returns OPAL_ERR_NOT_FOUND (leaving *value alone).
 * OPAL_ERR_BAD_PARAM when the table holds another key kind. */
OPAL_DECLSPEC int opal_hash_table_get_value_uint32(const opal_hash_table_t *ht, uint32_t key,
                                                   void **value);
OPAL_DECLSPEC int opal_hash_table_get_value_uint64(const opal_hash_table_t *ht, uint64_t key,
                                                   void **value);
OPAL_DECLSPEC int opal_hash_table_get_value_ptr(const opal_hash_table_t *ht, const void *key,
                                                size_t key_size, void **value);

/* Insert or replace: sets key's value (an existing value is overwritten,
 * not freed). The table copies a byte key (key_size may be 0; key may be
 * NULL only then). OPAL_ERR_BAD_PARAM for another key kind or a byte key
 * longer than OPAL_HASH_TABLE_MAX_KEY_SIZE; OPAL_ERR_OUT_OF_RESOURCE when
 * memory runs out (the table is unchanged then). */
OPAL_DECLSPEC int opal_hash_table_set_value_uint32(opal_hash_table_t *ht, uint32_t key,
                                                   void *value);
OPAL_DECLSPEC int opal_hash_table_set_value_uint64(opal_hash_table_t *ht, uint64_t key,
                                                   void *value);
OPAL_DECLSPEC int opal_hash_table_set_value_ptr(opal_hash_table_t *ht, const void *key,
                                                size_t key_size, void *value);

/* Removes key (freeing the table's copy of a byte key; the value is the
 * caller's). OPAL_ERR_NOT_FOUND when absent, OPAL_ERR_BAD_PARAM for another
 * key kind. Safe during an iteration. */
OPAL_DECLSPEC int opal_hash_table_remove_value_uint32(opal_hash_table_t *ht, uint32_t key);
OPAL_DECLSPEC int opal_hash_table_remove_value_uint64(opal_hash_table_t *ht, uint64_t key);
OPAL_DECLSPEC int opal_hash_table_remove_value_ptr(opal_hash_table_t *ht, const void *key,
                                                   size_t key_size);

/* Iteration. get_first_key_* starts at the beginning; get_next_key_*
 * continues from *cursor, which the previous call filled in (a cursor of 0
 * also means the beginning). Each returns OPAL_SUCCESS with the entry's
 * key and value, or OPAL_ERR_NOT_FOUND at the end; OPAL_ERR_BAD_PARAM when
 * the table holds another key kind. A byte key is returned as the table's
 * copy, not to be freed: valid until that entry is removed or a new key is
 * added. */
OPAL_DECLSPEC int opal_hash_table_get_first_key_uint32(const opal_hash_table_t *ht, uint32_t *key,
                                                       void **value, size_t *cursor);
OPAL_DECLSPEC int opal_hash_table_get_next_key_uint32(const opal_hash_table_t *ht, uint32_t *key,
                                                      void **value, size_t *cursor);
OPAL_DECLSPEC int opal_hash_table_get_first_key_uint64(const opal_hash_table_t *ht, uint64_t *key,
                                                       void **value, size_t *cursor);
OPAL_DECLSPEC int opal_hash_table_get_next_key_uint64(const opal_hash_table_t *ht, uint64_t *key,
                                                      void **value, size_t *cursor);
OPAL_DECLSPEC int opal_hash_table_get_first_key_ptr(const opal_hash_table_t *ht, const void **key,
                                                    size_t *key_size, void **value, size_t *cursor);
OPAL_DECLSPEC int opal_hash_table_get_next_key_ptr(const opal_hash_table_t *ht, const void **key,
                                                   size_t *key_size, void **value, size_t *cursor);

/* The hash functions the table uses, for callers that shard or bucket
 * keys the same way. Stable within one build, not across versions. */
OPAL_DECLSPEC uint64_t opal_hash_uint64(uint64_t key);
OPAL_DECLSPEC uint64_t opal_hash_bytes(const void *key, size_t key_size);

#define OPAL_HASH_TABLE_CONCAT2_(a, b) a##b
#define OPAL_HASH_TABLE_CONCAT_(a, b)  OPAL_HASH_TABLE_CONCAT2_(a, b)
#define OPAL_HASH_TABLE_CURSOR_        OPAL_HASH_TABLE_CONCAT_(opal_ht_cursor_, __LINE__)
#define OPAL_HASH_TABLE_VALUE_         OPAL_HASH_TABLE_CONCAT_(opal_ht_value_, __LINE__)
#define OPAL_HASH_TABLE_ONCE_          OPAL_HASH_TABLE_CONCAT_(opal_ht_once_, __LINE__)

/* Iterates key (a uint32_t or uint64_t variable, kind uint32 or uint64)
 * and value (any pointer variable) over the table. The body may remove
 * keys (see above) and may break. */
#define OPAL_HASH_TABLE_FOREACH(key, kind, value, ht)                                              \
    for (size_t OPAL_HASH_TABLE_CURSOR_ = 0, OPAL_HASH_TABLE_ONCE_ = 1; OPAL_HASH_TABLE_ONCE_;     \
         OPAL_HASH_TABLE_ONCE_ = 0)                                                                \
        for (void *OPAL_HASH_TABLE_VALUE_ = NULL;                                                  \
             OPAL_SUCCESS == opal_hash_table_get_next_key_##kind((ht), &(key),                     \
                                                                 &OPAL_HASH_TABLE_VALUE_,          \
                                                                 &OPAL_HASH_TABLE_CURSOR_) &&      \
             ((value) = OPAL_HASH_TABLE_VALUE_, (void) (value), 1);)

/* The same for byte keys: key is a const void * variable, key_size a
 * size_t variable. */
#define OPAL_HASH_TABLE_FOREACH_PTR(key, key_size, value, ht)                                      \
    for (size_t OPAL_HASH_TABLE_CURSOR_ = 0, OPAL_HASH_TABLE_ONCE_ = 1; OPAL_HASH_TABLE_ONCE_;     \
         OPAL_HASH_TABLE_ONCE_ = 0)                                                                \
        for (void *OPAL_HASH_TABLE_VALUE_ = NULL;                                                  \
             OPAL_SUCCESS == opal_hash_table_get_next_key_ptr((ht), &(key), &(key_size),           \
                                                              &OPAL_HASH_TABLE_VALUE_,             \
                                                              &OPAL_HASH_TABLE_CURSOR_) &&         \
             ((value) = OPAL_HASH_TABLE_VALUE_, (void) (value), 1);)

#endif /* OPAL_CLASS_OPAL_HASH_TABLE_H */
