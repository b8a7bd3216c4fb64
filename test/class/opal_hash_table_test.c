/* opal_hash_table_t: the three key kinds, growth, removal (also during
 * iteration), byte keys with NULs and shared prefixes, colliding keys. */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/class/opal_hash_table.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

static opal_hash_table_t ht;

static void setup(void)
{
    OBJ_CONSTRUCT(&ht, opal_hash_table_t);
}

static void teardown(void)
{
    OBJ_DESTRUCT(&ht);
}

/* A distinct, recognisable value per key. */
static void *value_of(uint64_t key)
{
    return (void *) (uintptr_t) (key * 2 + 1);
}

START_TEST(new_table_is_empty)
{
    void *v = NULL;
    uint64_t k;
    size_t cursor;
    ck_assert_uint_eq(opal_hash_table_get_size(&ht), 0);
    ck_assert_int_eq(opal_hash_table_key_kind(&ht), OPAL_HASH_KEY_NONE);
    ck_assert_int_eq(opal_hash_table_get_value_uint64(&ht, 0, &v), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(opal_hash_table_get_value_ptr(&ht, "x", 1, &v), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(opal_hash_table_remove_value_uint32(&ht, 7), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(opal_hash_table_get_first_key_uint64(&ht, &k, &v, &cursor),
                     OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(opal_hash_table_init(&ht, 0), OPAL_SUCCESS);
    ck_assert_int_eq(opal_hash_table_get_value_uint64(&ht, 0, &v), OPAL_ERR_NOT_FOUND);
    ck_assert_ptr_null(v);
}
END_TEST

START_TEST(one_key_set_get_remove)
{
    void *v = NULL;
    ck_assert_int_eq(opal_hash_table_set_value_uint64(&ht, 42, value_of(42)), OPAL_SUCCESS);
    ck_assert_uint_eq(opal_hash_table_get_size(&ht), 1);
    ck_assert_int_eq(opal_hash_table_key_kind(&ht), OPAL_HASH_KEY_UINT64);
    ck_assert_int_eq(opal_hash_table_get_value_uint64(&ht, 42, &v), OPAL_SUCCESS);
    ck_assert_ptr_eq(v, value_of(42));
    ck_assert_int_eq(opal_hash_table_get_value_uint64(&ht, 43, &v), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(opal_hash_table_remove_value_uint64(&ht, 42), OPAL_SUCCESS);
    ck_assert_uint_eq(opal_hash_table_get_size(&ht), 0);
    ck_assert_int_eq(opal_hash_table_get_value_uint64(&ht, 42, &v), OPAL_ERR_NOT_FOUND);
}
END_TEST

START_TEST(set_replaces_existing_value)
{
    void *v = NULL;
    ck_assert_int_eq(opal_hash_table_set_value_uint32(&ht, 9, value_of(1)), OPAL_SUCCESS);
    ck_assert_int_eq(opal_hash_table_set_value_uint32(&ht, 9, value_of(2)), OPAL_SUCCESS);
    ck_assert_uint_eq(opal_hash_table_get_size(&ht), 1);
    ck_assert_int_eq(opal_hash_table_get_value_uint32(&ht, 9, &v), OPAL_SUCCESS);
    ck_assert_ptr_eq(v, value_of(2));
}
END_TEST

START_TEST(null_value_is_a_value)
{
    void *v = value_of(0);
    ck_assert_int_eq(opal_hash_table_set_value_uint64(&ht, 5, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(opal_hash_table_get_value_uint64(&ht, 5, &v), OPAL_SUCCESS);
    ck_assert_ptr_null(v);
    /* A NULL out pointer asks only whether the key is there. */
    ck_assert_int_eq(opal_hash_table_get_value_uint64(&ht, 5, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(opal_hash_table_get_value_uint64(&ht, 6, NULL), OPAL_ERR_NOT_FOUND);
}
END_TEST

START_TEST(many_uint32_keys_all_found)
{
    const uint32_t n = (uint32_t) opal_test_iterations(100000);
    void *v;
    for (uint32_t k = 0; k < n; ++k) {
        OPAL_TEST_EXPECT(opal_hash_table_set_value_uint32(&ht, k * 7u, value_of(k)) ==
                         OPAL_SUCCESS);
    }
    ck_assert_uint_eq(opal_hash_table_get_size(&ht), n);
    for (uint32_t k = 0; k < n; ++k) {
        OPAL_TEST_EXPECT(opal_hash_table_get_value_uint32(&ht, k * 7u, &v) == OPAL_SUCCESS);
        OPAL_TEST_EXPECT(v == value_of(k));
        OPAL_TEST_EXPECT(opal_hash_table_get_value_uint32(&ht, k * 7u + 1, &v) ==
                         OPAL_ERR_NOT_FOUND);
    }
}
END_TEST

START_TEST(growth_rehashes_and_keeps_every_key)
{
    const uint64_t n = opal_test_iterations(200000);
    size_t first_capacity = 0;
    void *v;
    for (uint64_t k = 0; k < n; ++k) {
        uint64_t key = k * UINT64_C(0x100000001);
        OPAL_TEST_EXPECT(opal_hash_table_set_value_uint64(&ht, key, value_of(k)) == OPAL_SUCCESS);
        if (0 == first_capacity) {
            first_capacity = ht.capacity;
        }
        /* The load factor bound holds after every insert. */
        OPAL_TEST_EXPECT(opal_hash_table_get_size(&ht) * 4 <= ht.capacity * 3);
    }
    ck_assert_uint_gt(ht.capacity, first_capacity);
    for (uint64_t k = 0; k < n; ++k) {
        OPAL_TEST_EXPECT(opal_hash_table_get_value_uint64(&ht, k * UINT64_C(0x100000001), &v) ==
                         OPAL_SUCCESS);
        OPAL_TEST_EXPECT(v == value_of(k));
    }
}
END_TEST

START_TEST(init_presizes_for_expected_entries)
{
    ck_assert_int_eq(opal_hash_table_init(&ht, 1000), OPAL_SUCCESS);
    size_t capacity = ht.capacity;
    ck_assert_uint_ge(capacity * 3 / 4, 1000);
    for (uint64_t k = 0; k < 1000; ++k) {
        ck_assert_int_eq(opal_hash_table_set_value_uint64(&ht, k, value_of(k)), OPAL_SUCCESS);
    }
    ck_assert_uint_eq(ht.capacity, capacity);
}
END_TEST

START_TEST(init_of_a_non_empty_table_fails)
{
    void *v;
    ck_assert_int_eq(opal_hash_table_set_value_uint64(&ht, 1, value_of(1)), OPAL_SUCCESS);
    ck_assert_int_eq(opal_hash_table_init(&ht, 100), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_hash_table_get_value_uint64(&ht, 1, &v), OPAL_SUCCESS);
}
END_TEST

/* Keys whose hash lands on the same home slot of a 16-slot table: one
 * long probe run. */
static void colliding_keys(uint64_t *keys, int n)
{
    int found = 0;
    for (uint64_t k = 0; found < n; ++k) {
        if (3 == (opal_hash_uint64(k) & 15)) {
            keys[found++] = k;
        }
    }
}

START_TEST(colliding_keys_all_found)
{
    uint64_t keys[10];
    void *v;
    colliding_keys(keys, 10);
    for (int i = 0; i < 10; ++i) {
        ck_assert_int_eq(opal_hash_table_set_value_uint64(&ht, keys[i], value_of(keys[i])),
                         OPAL_SUCCESS);
    }
    ck_assert_uint_eq(ht.capacity, 16); /* still one shared run */
    for (int i = 0; i < 10; ++i) {
        ck_assert_int_eq(opal_hash_table_get_value_uint64(&ht, keys[i], &v), OPAL_SUCCESS);
        ck_assert_ptr_eq(v, value_of(keys[i]));
    }
}
END_TEST

START_TEST(removal_inside_a_probe_run_keeps_later_keys)
{
    uint64_t keys[10];
    void *v;
    colliding_keys(keys, 10);
    for (int i = 0; i < 10; ++i) {
        ck_assert_int_eq(opal_hash_table_set_value_uint64(&ht, keys[i], value_of(keys[i])),
                         OPAL_SUCCESS);
    }
    ck_assert_int_eq(opal_hash_table_remove_value_uint64(&ht, keys[1]), OPAL_SUCCESS);
    ck_assert_int_eq(opal_hash_table_remove_value_uint64(&ht, keys[4]), OPAL_SUCCESS);
    for (int i = 0; i < 10; ++i) {
        int expect = (1 == i || 4 == i) ? OPAL_ERR_NOT_FOUND : OPAL_SUCCESS;
        ck_assert_int_eq(opal_hash_table_get_value_uint64(&ht, keys[i], &v), expect);
    }
    /* Re-adding reuses a freed slot and is found again. */
    ck_assert_int_eq(opal_hash_table_set_value_uint64(&ht, keys[4], NULL), OPAL_SUCCESS);
    ck_assert_int_eq(opal_hash_table_get_value_uint64(&ht, keys[4], &v), OPAL_SUCCESS);
    ck_assert_uint_eq(opal_hash_table_get_size(&ht), 9);
}
END_TEST

START_TEST(insert_remove_churn_does_not_grow)
{
    /* A few permanent keys keep probe runs alive, so removals leave
     * removed markers behind; those must be cleared by rehashing in place,
     * not by growing. */
    const uint64_t n = opal_test_iterations(100000);
    const uint64_t permanent = 5;
    bool saw_markers = false;
    void *v;
    for (uint64_t k = 0; k < permanent; ++k) {
        ck_assert_int_eq(opal_hash_table_set_value_uint64(&ht, k, value_of(k)), OPAL_SUCCESS);
    }
    for (uint64_t k = permanent; k < n; ++k) {
        OPAL_TEST_EXPECT(opal_hash_table_set_value_uint64(&ht, k, value_of(k)) == OPAL_SUCCESS);
        OPAL_TEST_EXPECT(opal_hash_table_set_value_uint64(&ht, k + n, value_of(k)) == OPAL_SUCCESS);
        OPAL_TEST_EXPECT(opal_hash_table_remove_value_uint64(&ht, k) == OPAL_SUCCESS);
        OPAL_TEST_EXPECT(opal_hash_table_remove_value_uint64(&ht, k + n) == OPAL_SUCCESS);
        saw_markers = saw_markers || ht.removed > 0;
    }
    ck_assert(saw_markers);
    ck_assert_uint_eq(opal_hash_table_get_size(&ht), permanent);
    ck_assert_uint_eq(ht.capacity, 16);
    for (uint64_t k = 0; k < permanent; ++k) {
        ck_assert_int_eq(opal_hash_table_get_value_uint64(&ht, k, &v), OPAL_SUCCESS);
        ck_assert_ptr_eq(v, value_of(k));
    }
}
END_TEST

START_TEST(removing_absent_keys_reports_not_found)
{
    ck_assert_int_eq(opal_hash_table_remove_value_uint64(&ht, 1), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(opal_hash_table_set_value_uint64(&ht, 1, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(opal_hash_table_remove_value_uint64(&ht, 2), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(opal_hash_table_remove_value_uint64(&ht, 1), OPAL_SUCCESS);
    ck_assert_int_eq(opal_hash_table_remove_value_uint64(&ht, 1), OPAL_ERR_NOT_FOUND);
    ck_assert_uint_eq(opal_hash_table_get_size(&ht), 0);
}
END_TEST

START_TEST(mixing_key_kinds_is_rejected)
{
    void *v;
    size_t cursor;
    uint32_t k32;
    const void *kp;
    size_t klen;
    ck_assert_int_eq(opal_hash_table_set_value_uint64(&ht, 1, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(opal_hash_table_set_value_uint32(&ht, 1, NULL), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_hash_table_set_value_ptr(&ht, "a", 1, NULL), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_hash_table_get_value_uint32(&ht, 1, &v), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_hash_table_get_value_ptr(&ht, "a", 1, &v), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_hash_table_remove_value_uint32(&ht, 1), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_hash_table_get_first_key_uint32(&ht, &k32, &v, &cursor),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_hash_table_get_first_key_ptr(&ht, &kp, &klen, &v, &cursor),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_uint_eq(opal_hash_table_get_size(&ht), 1);
}
END_TEST

START_TEST(remove_all_empties_and_frees_the_kind)
{
    void *v;
    for (uint64_t k = 0; k < 100; ++k) {
        ck_assert_int_eq(opal_hash_table_set_value_ptr(&ht, &k, sizeof(k), NULL), OPAL_SUCCESS);
    }
    ck_assert_int_eq(opal_hash_table_set_value_ptr(&ht, "a long key, heap copied", 23, NULL),
                     OPAL_SUCCESS);
    opal_hash_table_remove_all(&ht);
    ck_assert_uint_eq(opal_hash_table_get_size(&ht), 0);
    ck_assert_int_eq(opal_hash_table_key_kind(&ht), OPAL_HASH_KEY_NONE);
    ck_assert_int_eq(opal_hash_table_set_value_uint32(&ht, 3, value_of(3)), OPAL_SUCCESS);
    ck_assert_int_eq(opal_hash_table_get_value_uint32(&ht, 3, &v), OPAL_SUCCESS);
    ck_assert_ptr_eq(v, value_of(3));
}
END_TEST

/* Byte keys that differ only after a NUL, in length, or past a shared
 * prefix, on both sides of the 8-byte inline limit. */
static const struct {
    const char *bytes;
    size_t len;
} byte_keys[] = {
    {"", 0},
    {"a", 1},
    {"a\0", 2},
    {"a\0b", 3},
    {"a\0c", 3},
    {"\0\0\0\0", 4},
    {"\0\0\0\0\0", 5},
    {"abcdefgh", 8},
    {"abcdefgh\0", 9},
    {"abcdefghi", 9},
    {"abcdefghj", 9},
    {"abcdefghijklmnop", 16},
    {"abcdefghijklmnoq", 16},
    {"abcdefghijklmnop\0", 17},
    {"btl_sm_eager_limit", 18},
    {"btl_sm_eager_limiT", 18},
};
#define NUM_BYTE_KEYS (sizeof(byte_keys) / sizeof(byte_keys[0]))

START_TEST(byte_keys_with_nuls_and_shared_prefixes_are_distinct)
{
    void *v;
    for (size_t i = 0; i < NUM_BYTE_KEYS; ++i) {
        ck_assert_int_eq(
            opal_hash_table_set_value_ptr(&ht, byte_keys[i].bytes, byte_keys[i].len, value_of(i)),
            OPAL_SUCCESS);
    }
    ck_assert_uint_eq(opal_hash_table_get_size(&ht), NUM_BYTE_KEYS);
    for (size_t i = 0; i < NUM_BYTE_KEYS; ++i) {
        ck_assert_int_eq(
            opal_hash_table_get_value_ptr(&ht, byte_keys[i].bytes, byte_keys[i].len, &v),
            OPAL_SUCCESS);
        ck_assert_msg(v == value_of(i), "key %zu", i);
    }
    ck_assert_int_eq(opal_hash_table_get_value_ptr(&ht, "abcdefghijklmno", 15, &v),
                     OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(opal_hash_table_get_value_ptr(&ht, "b", 1, &v), OPAL_ERR_NOT_FOUND);
    for (size_t i = 0; i < NUM_BYTE_KEYS; i += 2) {
        ck_assert_int_eq(
            opal_hash_table_remove_value_ptr(&ht, byte_keys[i].bytes, byte_keys[i].len),
            OPAL_SUCCESS);
    }
    for (size_t i = 0; i < NUM_BYTE_KEYS; ++i) {
        int expect = 0 == i % 2 ? OPAL_ERR_NOT_FOUND : OPAL_SUCCESS;
        ck_assert_int_eq(
            opal_hash_table_get_value_ptr(&ht, byte_keys[i].bytes, byte_keys[i].len, &v), expect);
    }
}
END_TEST

START_TEST(byte_keys_are_copied)
{
    char key[32] = "a key the caller reuses";
    void *v;
    ck_assert_int_eq(opal_hash_table_set_value_ptr(&ht, key, strlen(key), value_of(1)),
                     OPAL_SUCCESS);
    ck_assert_int_eq(opal_hash_table_set_value_ptr(&ht, key, 4, value_of(2)), OPAL_SUCCESS);
    key[0] = 'X';
    ck_assert_int_eq(opal_hash_table_get_value_ptr(&ht, key, strlen(key), &v), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(opal_hash_table_get_value_ptr(&ht, "a key the caller reuses", strlen(key), &v),
                     OPAL_SUCCESS);
    ck_assert_ptr_eq(v, value_of(1));
    ck_assert_int_eq(opal_hash_table_get_value_ptr(&ht, "a ke", 4, &v), OPAL_SUCCESS);
    ck_assert_ptr_eq(v, value_of(2));
}
END_TEST

START_TEST(null_byte_key_with_a_length_is_rejected)
{
    void *v;
    ck_assert_int_eq(opal_hash_table_set_value_ptr(&ht, NULL, 3, NULL), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_hash_table_get_value_ptr(&ht, NULL, 3, &v), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_hash_table_set_value_ptr(&ht, NULL, 0, value_of(0)), OPAL_SUCCESS);
    ck_assert_int_eq(opal_hash_table_get_value_ptr(&ht, "", 0, &v), OPAL_SUCCESS);
    ck_assert_ptr_eq(v, value_of(0));
}
END_TEST

START_TEST(many_byte_keys_survive_growth)
{
    const size_t n = opal_test_iterations(50000);
    char key[48];
    void *v;
    for (size_t i = 0; i < n; ++i) {
        int len = snprintf(key, sizeof(key), "%s_%zu", 0 == i % 2 ? "k" : "a.longer.prefix", i);
        ck_assert_int_eq(opal_hash_table_set_value_ptr(&ht, key, (size_t) len, value_of(i)),
                         OPAL_SUCCESS);
    }
    ck_assert_uint_eq(opal_hash_table_get_size(&ht), n);
    for (size_t i = 0; i < n; ++i) {
        int len = snprintf(key, sizeof(key), "%s_%zu", 0 == i % 2 ? "k" : "a.longer.prefix", i);
        ck_assert_int_eq(opal_hash_table_get_value_ptr(&ht, key, (size_t) len, &v), OPAL_SUCCESS);
        ck_assert_ptr_eq(v, value_of(i));
    }
}
END_TEST

START_TEST(iteration_visits_every_key_once)
{
    const uint32_t n = 5000;
    unsigned char *seen = calloc(n, 1);
    uint32_t key;
    void *value;
    size_t visits = 0;
    for (uint32_t k = 0; k < n; ++k) {
        OPAL_TEST_EXPECT(opal_hash_table_set_value_uint32(&ht, k, value_of(k)) == OPAL_SUCCESS);
    }
    OPAL_HASH_TABLE_FOREACH (key, uint32, value, &ht) {
        ck_assert_uint_lt(key, n);
        ck_assert_ptr_eq(value, value_of(key));
        ck_assert_int_eq(seen[key], 0);
        seen[key] = 1;
        ++visits;
    }
    ck_assert_uint_eq(visits, n);
    free(seen);
}
END_TEST

START_TEST(first_next_iteration_walks_the_table)
{
    uint64_t key, sum = 0;
    void *value;
    size_t cursor;
    int count = 0;
    for (uint64_t k = 1; k <= 100; ++k) {
        ck_assert_int_eq(opal_hash_table_set_value_uint64(&ht, k << 40, NULL), OPAL_SUCCESS);
    }
    int rc = opal_hash_table_get_first_key_uint64(&ht, &key, &value, &cursor);
    while (OPAL_SUCCESS == rc) {
        sum += key >> 40;
        ++count;
        rc = opal_hash_table_get_next_key_uint64(&ht, &key, &value, &cursor);
    }
    ck_assert_int_eq(rc, OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(count, 100);
    ck_assert_uint_eq(sum, 5050);
}
END_TEST

START_TEST(removing_the_current_key_while_iterating_is_safe)
{
    const uint64_t n = 3000;
    unsigned char *seen = calloc(n, 1);
    uint64_t key;
    void *value;
    for (uint64_t k = 0; k < n; ++k) {
        OPAL_TEST_EXPECT(opal_hash_table_set_value_uint64(&ht, k, value_of(k)) == OPAL_SUCCESS);
    }
    OPAL_HASH_TABLE_FOREACH (key, uint64, value, &ht) {
        ck_assert_int_eq(seen[key], 0);
        seen[key] = 1;
        if (1 == key % 2) {
            ck_assert_int_eq(opal_hash_table_remove_value_uint64(&ht, key), OPAL_SUCCESS);
        }
    }
    for (uint64_t k = 0; k < n; ++k) {
        ck_assert_int_eq(seen[k], 1);
        int expect = 1 == k % 2 ? OPAL_ERR_NOT_FOUND : OPAL_SUCCESS;
        ck_assert_int_eq(opal_hash_table_get_value_uint64(&ht, k, &value), expect);
    }
    ck_assert_uint_eq(opal_hash_table_get_size(&ht), n / 2);
    /* And emptying the whole table from inside the loop. */
    OPAL_HASH_TABLE_FOREACH (key, uint64, value, &ht) {
        ck_assert_int_eq(opal_hash_table_remove_value_uint64(&ht, key), OPAL_SUCCESS);
    }
    ck_assert_uint_eq(opal_hash_table_get_size(&ht), 0);
    free(seen);
}
END_TEST

START_TEST(removing_other_keys_while_iterating_skips_them)
{
    const uint64_t n = 2000;
    unsigned char *seen = calloc(n, 1);
    unsigned char *gone = calloc(n, 1);
    uint64_t key;
    void *value;
    for (uint64_t k = 0; k < n; ++k) {
        OPAL_TEST_EXPECT(opal_hash_table_set_value_uint64(&ht, k, NULL) == OPAL_SUCCESS);
    }
    /* Each visit removes a key that may or may not have been visited. */
    OPAL_HASH_TABLE_FOREACH (key, uint64, value, &ht) {
        ck_assert_int_eq(gone[key], 0);
        ck_assert_int_eq(seen[key], 0);
        seen[key] = 1;
        uint64_t victim = (key * 7919 + 13) % n;
        if (!gone[victim] && victim != key &&
            OPAL_SUCCESS == opal_hash_table_remove_value_uint64(&ht, victim)) {
            gone[victim] = 1;
        }
    }
    for (uint64_t k = 0; k < n; ++k) {
        /* Every key never removed was visited. */
        ck_assert(gone[k] || seen[k]);
    }
    free(seen);
    free(gone);
}
END_TEST

START_TEST(byte_keys_iterate_and_remove_while_iterating)
{
    const void *key;
    size_t key_size;
    void *value;
    size_t visits = 0;
    for (size_t i = 0; i < NUM_BYTE_KEYS; ++i) {
        ck_assert_int_eq(
            opal_hash_table_set_value_ptr(&ht, byte_keys[i].bytes, byte_keys[i].len, value_of(i)),
            OPAL_SUCCESS);
    }
    OPAL_HASH_TABLE_FOREACH_PTR(key, key_size, value, &ht)
    {
        size_t i = ((uintptr_t) value - 1) / 2;
        ck_assert_uint_lt(i, NUM_BYTE_KEYS);
        ck_assert_uint_eq(key_size, byte_keys[i].len);
        ck_assert(0 == key_size || 0 == memcmp(key, byte_keys[i].bytes, key_size));
        /* The key handed out is the table's own copy: removing by it works. */
        ck_assert_int_eq(opal_hash_table_remove_value_ptr(&ht, key, key_size), OPAL_SUCCESS);
        ++visits;
    }
    ck_assert_uint_eq(visits, NUM_BYTE_KEYS);
    ck_assert_uint_eq(opal_hash_table_get_size(&ht), 0);
}
END_TEST

START_TEST(foreach_stops_at_break)
{
    uint32_t key;
    void *value;
    int visits = 0;
    for (uint32_t k = 0; k < 50; ++k) {
        ck_assert_int_eq(opal_hash_table_set_value_uint32(&ht, k, NULL), OPAL_SUCCESS);
    }
    OPAL_HASH_TABLE_FOREACH (key, uint32, value, &ht) {
        if (++visits == 10) {
            break;
        }
    }
    ck_assert_int_eq(visits, 10);
}
END_TEST

/* Largest bucket when hashes of keys are dropped into 1024 buckets by the
 * given bits; 64 keys per bucket on average. */
static unsigned worst_bucket(uint64_t (*hash)(uint64_t), int shift)
{
    unsigned counts[1024] = {0};
    unsigned worst = 0;
    for (uint64_t i = 0; i < 65536; ++i) {
        unsigned b = (unsigned) (hash(i) >> shift) & 1023u;
        if (++counts[b] > worst) {
            worst = counts[b];
        }
    }
    return worst;
}

static uint64_t strided_key(uint64_t i)
{
    return opal_hash_uint64(i << 32);
}

static uint64_t sequential_key(uint64_t i)
{
    return opal_hash_uint64(i);
}

static uint64_t string_key(uint64_t i)
{
    char buf[32];
    int len = snprintf(buf, sizeof(buf), "proc.%llu", (unsigned long long) i);
    return opal_hash_bytes(buf, (size_t) len);
}

START_TEST(hashes_spread_sequential_strided_and_string_keys)
{
    /* A uniform spread puts about 64 +- 8 keys in each bucket; an identity
     * hash would put all strided keys in one. 110 is > 5 sigma. */
    ck_assert_uint_lt(worst_bucket(sequential_key, 0), 110);
    ck_assert_uint_lt(worst_bucket(sequential_key, 40), 110);
    ck_assert_uint_lt(worst_bucket(strided_key, 0), 110);
    ck_assert_uint_lt(worst_bucket(strided_key, 40), 110);
    ck_assert_uint_lt(worst_bucket(string_key, 0), 110);
    ck_assert_uint_lt(worst_bucket(string_key, 40), 110);
    ck_assert_uint_ne(opal_hash_bytes("a", 1), opal_hash_bytes("a\0", 2));
    ck_assert_uint_ne(opal_hash_bytes("", 0), opal_hash_bytes("\0", 1));
}
END_TEST

static Suite *hash_table_suite(void)
{
    Suite *s = suite_create("opal_hash_table");
    struct {
        const char *name;
        const TTest *test;
    } cases[] = {
#define CASE(fn) {#fn, fn}
        CASE(new_table_is_empty),
        CASE(one_key_set_get_remove),
        CASE(set_replaces_existing_value),
        CASE(null_value_is_a_value),
        CASE(many_uint32_keys_all_found),
        CASE(growth_rehashes_and_keeps_every_key),
        CASE(init_presizes_for_expected_entries),
        CASE(init_of_a_non_empty_table_fails),
        CASE(colliding_keys_all_found),
        CASE(removal_inside_a_probe_run_keeps_later_keys),
        CASE(insert_remove_churn_does_not_grow),
        CASE(removing_absent_keys_reports_not_found),
        CASE(mixing_key_kinds_is_rejected),
        CASE(remove_all_empties_and_frees_the_kind),
        CASE(byte_keys_with_nuls_and_shared_prefixes_are_distinct),
        CASE(byte_keys_are_copied),
        CASE(null_byte_key_with_a_length_is_rejected),
        CASE(many_byte_keys_survive_growth),
        CASE(iteration_visits_every_key_once),
        CASE(first_next_iteration_walks_the_table),
        CASE(removing_the_current_key_while_iterating_is_safe),
        CASE(removing_other_keys_while_iterating_skips_them),
        CASE(byte_keys_iterate_and_remove_while_iterating),
        CASE(foreach_stops_at_break),
        CASE(hashes_spread_sequential_strided_and_string_keys),
#undef CASE
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        TCase *tc = tcase_create(cases[i].name);
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, cases[i].test);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void)
{
    int rc = opal_test_run(hash_table_suite());
    opal_class_finalize();
    return rc;
}
