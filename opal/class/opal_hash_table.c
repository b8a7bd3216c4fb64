#include "opal/opal_config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "opal/class/opal_hash_table.h"
#include "opal/util/opal_error.h"

/* Slot tags: anything else is a live entry's hash tag. */
#define TAG_EMPTY   0u
#define TAG_REMOVED 1u

/* Byte keys up to this size live inside the slot: no allocation, and a
 * lookup compares one word instead of chasing a pointer. */
#define INLINE_KEY_MAX 8u

#define MIN_CAPACITY 16u

static void hash_table_construct(opal_hash_table_t *ht)
{
    ht->slots = NULL;
    ht->capacity = 0;
    ht->count = 0;
    ht->removed = 0;
    ht->grow_at = 0;
    ht->kind = OPAL_HASH_KEY_NONE;
}

static void free_key_copies(opal_hash_table_t *ht)
{
    if (OPAL_HASH_KEY_PTR != ht->kind) {
        return;
    }
    for (size_t i = 0; i < ht->capacity; ++i) {
        opal_hash_slot_t *s = &ht->slots[i];
        if (s->tag > TAG_REMOVED && s->key_len > INLINE_KEY_MAX) {
            free(s->key.ptr);
        }
    }
}

static void hash_table_destruct(opal_hash_table_t *ht)
{
    free_key_copies(ht);
    free(ht->slots);
    hash_table_construct(ht);
}

OBJ_CLASS_INSTANCE(opal_hash_table_t, opal_object_t, hash_table_construct, hash_table_destruct);

/* ------------------------------------------------------------------ */
/* Hash functions */

static inline uint64_t rotl64(uint64_t x, unsigned r)
{
    return (x << r) | (x >> (64 - r));
}

/* A bijective 64-bit finaliser (xor-shift / multiply rounds, the constants
 * of the well-known splitmix64 output function): every input bit affects
 * every output bit, so sequential or strided integer keys spread over both
 * the low bits (the slot index) and the high bits (the tag). */
static inline uint64_t mix64(uint64_t key)
{
    key ^= key >> 30;
    key *= UINT64_C(0xbf58476d1ce4e5b9);
    key ^= key >> 27;
    key *= UINT64_C(0x94d049bb133111eb);
    key ^= key >> 31;
    return key;
}

static inline uint64_t load_word(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof(w));
    return w;
}

/* The last 1..7 bytes, zero-padded. Lengths are folded into the seed, so
 * "ab" and "ab\0" still hash differently. */
static inline uint64_t load_tail(const unsigned char *p, size_t n)
{
    uint64_t w = 0;
    memcpy(&w, p, n);
    return w;
}

/* Word at a time: each step is a bijection of the state for a fixed word
 * and of the word for a fixed state, so keys that differ in one word never
 * collide before the finaliser, which then spreads the bits. */
static inline uint64_t hash_bytes(const void *key, size_t key_size)
{
    const unsigned char *p = key;
    size_t n = key_size;
    uint64_t h =
        UINT64_C(0x9e3779b97f4a7c15) ^ ((uint64_t) key_size * UINT64_C(0xc2b2ae3d27d4eb4f));
    while (n >= 8) {
        h = rotl64(h ^ (load_word(p) * UINT64_C(0x87c37b91114253d5)), 31) *
            UINT64_C(0x4cf5ad432745937f);
        p += 8;
        n -= 8;
    }
    if (n > 0) {
        h = rotl64(h ^ (load_tail(p, n) * UINT64_C(0x87c37b91114253d5)), 31) *
            UINT64_C(0x4cf5ad432745937f);
    }
    return mix64(h);
}

/* The public names are exported (and so could be interposed): the table
 * itself calls the inline versions. */
uint64_t opal_hash_uint64(uint64_t key)
{
    return mix64(key);
}

uint64_t opal_hash_bytes(const void *key, size_t key_size)
{
    return hash_bytes(key, key_size);
}

/* The tag is the top half of the hash, the slot index the bottom bits, so
 * entries sharing a probe run rarely share a tag. */
static inline uint32_t tag_of(uint64_t hash)
{
    uint32_t tag = (uint32_t) (hash >> 32);
    return tag > TAG_REMOVED ? tag : tag + 2;
}

/* A byte key of <= 8 bytes as the slot stores it. */
static inline uint64_t pack_inline(const void *key, size_t key_size)
{
    uint64_t w = 0;
    if (key_size > 0) {
        memcpy(&w, key, key_size);
    }
    return w;
}

static inline uint64_t slot_hash(const opal_hash_table_t *ht, const opal_hash_slot_t *s)
{
    if (OPAL_HASH_KEY_PTR != ht->kind) {
        return mix64(s->key.u64);
    }
    if (s->key_len <= INLINE_KEY_MAX) {
        return hash_bytes(&s->key.u64, s->key_len);
    }
    return hash_bytes(s->key.ptr, s->key_len);
}

/* A zeroed slot array. A large table is probed at random addresses, so
 * every lookup would also miss the TLB with 4 KiB pages; asking for
 * transparent huge pages on the array's 2 MiB-aligned interior removes
 * most of those misses (measured by test/perf/opal_perf_hash). The hint
 * is best effort: without THP the array works the same. */
static opal_hash_slot_t *alloc_slots(size_t capacity)
{
    opal_hash_slot_t *slots = calloc(capacity, sizeof(*slots));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t) 2 << 20;
    size_t bytes = capacity * sizeof(*slots);
    if (NULL != slots && bytes >= 2 * huge) {
        uintptr_t start = ((uintptr_t) slots + huge - 1) & ~(huge - 1);
        uintptr_t end = ((uintptr_t) slots + bytes) & ~(huge - 1);
        (void) madvise((void *) start, end - start, MADV_HUGEPAGE);
    }
#endif
    return slots;
}

/* ------------------------------------------------------------------ */
/* Probing. There is always an empty slot (grow_at < capacity), so every
 * probe loop ends. */

static inline opal_hash_slot_t *find_int(const opal_hash_table_t *ht, uint64_t key, uint64_t hash)
{
    if (0 == ht->count) {
        return NULL;
    }
    uint32_t tag = tag_of(hash);
    size_t mask = ht->capacity - 1;
    for (size_t i = (size_t) hash & mask;; i = (i + 1) & mask) {
        opal_hash_slot_t *s = &ht->slots[i];
        if (s->tag == tag && s->key.u64 == key) {
            return s;
        }
        if (TAG_EMPTY == s->tag) {
            return NULL;
        }
    }
}

static inline opal_hash_slot_t *find_bytes(const opal_hash_table_t *ht, const void *key,
                                           size_t key_size, uint64_t hash)
{
    if (0 == ht->count) {
        return NULL;
    }
    uint32_t tag = tag_of(hash);
    size_t mask = ht->capacity - 1;
    if (key_size <= INLINE_KEY_MAX) {
        uint64_t packed = pack_inline(key, key_size);
        for (size_t i = (size_t) hash & mask;; i = (i + 1) & mask) {
            opal_hash_slot_t *s = &ht->slots[i];
            if (s->tag == tag && s->key_len == key_size && s->key.u64 == packed) {
                return s;
            }
            if (TAG_EMPTY == s->tag) {
                return NULL;
            }
        }
    }
    for (size_t i = (size_t) hash & mask;; i = (i + 1) & mask) {
        opal_hash_slot_t *s = &ht->slots[i];
        if (s->tag == tag && s->key_len == key_size && 0 == memcmp(s->key.ptr, key, key_size)) {
            return s;
        }
        if (TAG_EMPTY == s->tag) {
            return NULL;
        }
    }
}

/* The first reusable slot (empty or removed) on hash's probe run. Only for
 * a key known to be absent. */
static inline opal_hash_slot_t *find_free(opal_hash_slot_t *slots, size_t capacity, uint64_t hash)
{
    size_t mask = capacity - 1;
    size_t i = (size_t) hash & mask;
    while (slots[i].tag > TAG_REMOVED) {
        i = (i + 1) & mask;
    }
    return &slots[i];
}

/* Moves every live entry into a fresh array of new_capacity slots; the
 * removed markers disappear. On failure the table is untouched. */
static int rehash(opal_hash_table_t *ht, size_t new_capacity)
{
    opal_hash_slot_t *slots = alloc_slots(new_capacity);
    if (NULL == slots) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < ht->capacity; ++i) {
        const opal_hash_slot_t *s = &ht->slots[i];
        if (s->tag > TAG_REMOVED) {
            *find_free(slots, new_capacity, slot_hash(ht, s)) = *s;
        }
    }
    free(ht->slots);
    ht->slots = slots;
    ht->capacity = new_capacity;
    ht->removed = 0;
    ht->grow_at = new_capacity - new_capacity / 4;
    return OPAL_SUCCESS;
}

/* Makes room for one more entry. Doubles when live entries fill more than
 * half the array; otherwise the removed markers are what fills it, and a
 * rehash at the same size clears them. */
static int make_room(opal_hash_table_t *ht)
{
    if (ht->count + ht->removed + 1 <= ht->grow_at) {
        return OPAL_SUCCESS;
    }
    if (0 == ht->capacity) {
        return rehash(ht, MIN_CAPACITY);
    }
    size_t capacity = ht->capacity;
    if (ht->count + 1 > capacity / 2) {
        if (capacity > SIZE_MAX / 2 / sizeof(opal_hash_slot_t)) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        capacity *= 2;
    }
    return rehash(ht, capacity);
}

/* Marks s removed. When the next slot is empty no probe run passes s, so s
 * and the removed markers just before it can become empty again, which
 * keeps long delete-heavy runs from filling the table with markers. No
 * live entry moves, which is what makes removal safe during iteration. */
static void remove_slot(opal_hash_table_t *ht, opal_hash_slot_t *s)
{
    if (OPAL_HASH_KEY_PTR == ht->kind && s->key_len > INLINE_KEY_MAX) {
        free(s->key.ptr);
    }
    s->key.u64 = 0;
    s->key_len = 0;
    s->value = NULL;
    --ht->count;

    size_t mask = ht->capacity - 1;
    size_t i = (size_t) (s - ht->slots);
    if (TAG_EMPTY != ht->slots[(i + 1) & mask].tag) {
        s->tag = TAG_REMOVED;
        ++ht->removed;
        return;
    }
    s->tag = TAG_EMPTY;
    for (i = (i - 1) & mask; TAG_REMOVED == ht->slots[i].tag; i = (i - 1) & mask) {
        ht->slots[i].tag = TAG_EMPTY;
        --ht->removed;
    }
}

/* OPAL_SUCCESS when the table may take (or already holds) keys of kind. */
static inline int check_kind(const opal_hash_table_t *ht, opal_hash_key_kind_t kind)
{
    return ht->kind == kind || OPAL_HASH_KEY_NONE == ht->kind ? OPAL_SUCCESS : OPAL_ERR_BAD_PARAM;
}

static inline bool valid_byte_key(const void *key, size_t key_size)
{
    return (NULL != key || 0 == key_size) && key_size <= OPAL_HASH_TABLE_MAX_KEY_SIZE;
}

/* ------------------------------------------------------------------ */
/* Public API */

int opal_hash_table_init(opal_hash_table_t *ht, size_t expected)
{
    if (0 != ht->count) {
        return OPAL_ERR_BAD_PARAM;
    }
    size_t capacity = MIN_CAPACITY;
    while (capacity - capacity / 4 <= expected) {
        if (capacity > SIZE_MAX / 2 / sizeof(opal_hash_slot_t)) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        capacity *= 2;
    }
    opal_hash_slot_t *slots = alloc_slots(capacity);
    if (NULL == slots) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    free(ht->slots);
    ht->slots = slots;
    ht->capacity = capacity;
    ht->removed = 0;
    ht->grow_at = capacity - capacity / 4;
    ht->kind = OPAL_HASH_KEY_NONE;
    return OPAL_SUCCESS;
}

void opal_hash_table_remove_all(opal_hash_table_t *ht)
{
    free_key_copies(ht);
    if (ht->capacity > 0) {
        memset(ht->slots, 0, ht->capacity * sizeof(*ht->slots));
    }
    ht->count = 0;
    ht->removed = 0;
    ht->kind = OPAL_HASH_KEY_NONE;
}

static inline int get_int(const opal_hash_table_t *ht, opal_hash_key_kind_t kind, uint64_t key,
                          void **value)
{
    if (OPAL_UNLIKELY(OPAL_SUCCESS != check_kind(ht, kind))) {
        return OPAL_ERR_BAD_PARAM;
    }
    const opal_hash_slot_t *s = find_int(ht, key, mix64(key));
    if (NULL == s) {
        return OPAL_ERR_NOT_FOUND;
    }
    if (NULL != value) {
        *value = s->value;
    }
    return OPAL_SUCCESS;
}

static inline int set_int(opal_hash_table_t *ht, opal_hash_key_kind_t kind, uint64_t key,
                          void *value)
{
    if (OPAL_UNLIKELY(OPAL_SUCCESS != check_kind(ht, kind))) {
        return OPAL_ERR_BAD_PARAM;
    }
    uint64_t hash = mix64(key);
    opal_hash_slot_t *s = find_int(ht, key, hash);
    if (NULL != s) {
        s->value = value;
        return OPAL_SUCCESS;
    }
    int rc = make_room(ht);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    s = find_free(ht->slots, ht->capacity, hash);
    if (TAG_REMOVED == s->tag) {
        --ht->removed;
    }
    s->tag = tag_of(hash);
    s->key_len = 0;
    s->key.u64 = key;
    s->value = value;
    ++ht->count;
    ht->kind = kind;
    return OPAL_SUCCESS;
}

static inline int remove_int(opal_hash_table_t *ht, opal_hash_key_kind_t kind, uint64_t key)
{
    if (OPAL_UNLIKELY(OPAL_SUCCESS != check_kind(ht, kind))) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_hash_slot_t *s = find_int(ht, key, mix64(key));
    if (NULL == s) {
        return OPAL_ERR_NOT_FOUND;
    }
    remove_slot(ht, s);
    return OPAL_SUCCESS;
}

int opal_hash_table_get_value_uint32(const opal_hash_table_t *ht, uint32_t key, void **value)
{
    return get_int(ht, OPAL_HASH_KEY_UINT32, key, value);
}

int opal_hash_table_get_value_uint64(const opal_hash_table_t *ht, uint64_t key, void **value)
{
    return get_int(ht, OPAL_HASH_KEY_UINT64, key, value);
}

int opal_hash_table_set_value_uint32(opal_hash_table_t *ht, uint32_t key, void *value)
{
    return set_int(ht, OPAL_HASH_KEY_UINT32, key, value);
}

int opal_hash_table_set_value_uint64(opal_hash_table_t *ht, uint64_t key, void *value)
{
    return set_int(ht, OPAL_HASH_KEY_UINT64, key, value);
}

int opal_hash_table_remove_value_uint32(opal_hash_table_t *ht, uint32_t key)
{
    return remove_int(ht, OPAL_HASH_KEY_UINT32, key);
}

int opal_hash_table_remove_value_uint64(opal_hash_table_t *ht, uint64_t key)
{
    return remove_int(ht, OPAL_HASH_KEY_UINT64, key);
}

int opal_hash_table_get_value_ptr(const opal_hash_table_t *ht, const void *key, size_t key_size,
                                  void **value)
{
    if (OPAL_UNLIKELY(OPAL_SUCCESS != check_kind(ht, OPAL_HASH_KEY_PTR) ||
                      !valid_byte_key(key, key_size))) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (0 == ht->count) {
        return OPAL_ERR_NOT_FOUND;
    }
    const opal_hash_slot_t *s = find_bytes(ht, key, key_size, hash_bytes(key, key_size));
    if (NULL == s) {
        return OPAL_ERR_NOT_FOUND;
    }
    if (NULL != value) {
        *value = s->value;
    }
    return OPAL_SUCCESS;
}

int opal_hash_table_set_value_ptr(opal_hash_table_t *ht, const void *key, size_t key_size,
                                  void *value)
{
    if (OPAL_UNLIKELY(OPAL_SUCCESS != check_kind(ht, OPAL_HASH_KEY_PTR) ||
                      !valid_byte_key(key, key_size))) {
        return OPAL_ERR_BAD_PARAM;
    }
    uint64_t hash = hash_bytes(key, key_size);
    opal_hash_slot_t *s = find_bytes(ht, key, key_size, hash);
    if (NULL != s) {
        s->value = value;
        return OPAL_SUCCESS;
    }
    unsigned char *copy = NULL;
    if (key_size > INLINE_KEY_MAX) {
        copy = malloc(key_size);
        if (NULL == copy) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        memcpy(copy, key, key_size);
    }
    int rc = make_room(ht);
    if (OPAL_SUCCESS != rc) {
        free(copy);
        return rc;
    }
    s = find_free(ht->slots, ht->capacity, hash);
    if (TAG_REMOVED == s->tag) {
        --ht->removed;
    }
    s->tag = tag_of(hash);
    s->key_len = (uint32_t) key_size;
    if (NULL != copy) {
        s->key.ptr = copy;
    } else {
        s->key.u64 = pack_inline(key, key_size);
    }
    s->value = value;
    ++ht->count;
    ht->kind = OPAL_HASH_KEY_PTR;
    return OPAL_SUCCESS;
}

int opal_hash_table_remove_value_ptr(opal_hash_table_t *ht, const void *key, size_t key_size)
{
    if (OPAL_UNLIKELY(OPAL_SUCCESS != check_kind(ht, OPAL_HASH_KEY_PTR) ||
                      !valid_byte_key(key, key_size))) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_hash_slot_t *s = find_bytes(ht, key, key_size, hash_bytes(key, key_size));
    if (NULL == s) {
        return OPAL_ERR_NOT_FOUND;
    }
    remove_slot(ht, s);
    return OPAL_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Iteration: the cursor is the index of the next slot to look at. */

static inline const opal_hash_slot_t *next_slot(const opal_hash_table_t *ht,
                                                opal_hash_key_kind_t kind, size_t *cursor, int *rc)
{
    if (OPAL_SUCCESS != check_kind(ht, kind)) {
        *rc = OPAL_ERR_BAD_PARAM;
        return NULL;
    }
    for (size_t i = *cursor; i < ht->capacity; ++i) {
        if (ht->slots[i].tag > TAG_REMOVED) {
            *cursor = i + 1;
            *rc = OPAL_SUCCESS;
            return &ht->slots[i];
        }
    }
    *cursor = ht->capacity;
    *rc = OPAL_ERR_NOT_FOUND;
    return NULL;
}

int opal_hash_table_get_next_key_uint32(const opal_hash_table_t *ht, uint32_t *key, void **value,
                                        size_t *cursor)
{
    int rc;
    const opal_hash_slot_t *s = next_slot(ht, OPAL_HASH_KEY_UINT32, cursor, &rc);
    if (NULL != s) {
        *key = (uint32_t) s->key.u64;
        *value = s->value;
    }
    return rc;
}

int opal_hash_table_get_first_key_uint32(const opal_hash_table_t *ht, uint32_t *key, void **value,
                                         size_t *cursor)
{
    *cursor = 0;
    return opal_hash_table_get_next_key_uint32(ht, key, value, cursor);
}

int opal_hash_table_get_next_key_uint64(const opal_hash_table_t *ht, uint64_t *key, void **value,
                                        size_t *cursor)
{
    int rc;
    const opal_hash_slot_t *s = next_slot(ht, OPAL_HASH_KEY_UINT64, cursor, &rc);
    if (NULL != s) {
        *key = s->key.u64;
        *value = s->value;
    }
    return rc;
}

int opal_hash_table_get_first_key_uint64(const opal_hash_table_t *ht, uint64_t *key, void **value,
                                         size_t *cursor)
{
    *cursor = 0;
    return opal_hash_table_get_next_key_uint64(ht, key, value, cursor);
}

int opal_hash_table_get_next_key_ptr(const opal_hash_table_t *ht, const void **key,
                                     size_t *key_size, void **value, size_t *cursor)
{
    int rc;
    const opal_hash_slot_t *s = next_slot(ht, OPAL_HASH_KEY_PTR, cursor, &rc);
    if (NULL != s) {
        *key = s->key_len > INLINE_KEY_MAX ? (const void *) s->key.ptr : (const void *) &s->key.u64;
        *key_size = s->key_len;
        *value = s->value;
    }
    return rc;
}

int opal_hash_table_get_first_key_ptr(const opal_hash_table_t *ht, const void **key,
                                      size_t *key_size, void **value, size_t *cursor)
{
    *cursor = 0;
    return opal_hash_table_get_next_key_ptr(ht, key, key_size, value, cursor);
}
