#include "opal/opal_config.h"

#include <limits.h>
#include <string.h>

#include "opal/class/opal_bitmap.h"
#include "opal/util/opal_error.h"

#define BITS_PER_WORD 64

static void bitmap_construct(opal_bitmap_t *bm)
{
    bm->words = NULL;
    bm->num_words = 0;
    bm->size_bits = 0;
    bm->max_bits = INT_MAX;
}

static void bitmap_destruct(opal_bitmap_t *bm)
{
    free(bm->words);
    bm->words = NULL;
    bm->num_words = 0;
    bm->size_bits = 0;
}

OBJ_CLASS_INSTANCE(opal_bitmap_t, opal_object_t, bitmap_construct, bitmap_destruct);

/* Words needed for nbits, written so that nbits near INT_MAX cannot
 * overflow. */
static inline int words_for(int nbits)
{
    return nbits / BITS_PER_WORD + (0 != nbits % BITS_PER_WORD);
}

static inline uint64_t bit_mask(int bit)
{
    return (uint64_t) 1 << (bit % BITS_PER_WORD);
}

/* Makes room for nbits (nbits <= max_bits, checked by the caller) and
 * raises the size to nbits when smaller. Storage at least doubles so that
 * setting bits one by one upwards costs amortised O(1). */
static int bitmap_grow(opal_bitmap_t *bm, int nbits)
{
    int need = words_for(nbits);
    if (need > bm->num_words) {
        int limit = words_for(bm->max_bits);
        int grown = bm->num_words > limit / 2 ? limit : 2 * bm->num_words;
        if (grown < need) {
            grown = need;
        }
        uint64_t *words = realloc(bm->words, (size_t) grown * sizeof(uint64_t));
        if (NULL == words) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        memset(words + bm->num_words, 0, (size_t) (grown - bm->num_words) * sizeof(uint64_t));
        bm->words = words;
        bm->num_words = grown;
    }
    if (nbits > bm->size_bits) {
        bm->size_bits = nbits;
    }
    return OPAL_SUCCESS;
}

int opal_bitmap_set_max_size(opal_bitmap_t *bm, int max_bits)
{
    if (max_bits < 0 || max_bits < bm->size_bits) {
        return OPAL_ERR_BAD_PARAM;
    }
    bm->max_bits = max_bits;
    return OPAL_SUCCESS;
}

int opal_bitmap_init(opal_bitmap_t *bm, int size)
{
    if (size < 0 || size > bm->max_bits) {
        return OPAL_ERR_BAD_PARAM;
    }
    free(bm->words);
    bm->words = NULL;
    bm->num_words = 0;
    bm->size_bits = 0;
    return bitmap_grow(bm, size);
}

int opal_bitmap_set_bit(opal_bitmap_t *bm, int bit)
{
    if (bit < 0 || bit >= bm->max_bits) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (bit >= bm->size_bits) {
        /* bit < max_bits <= INT_MAX, so bit + 1 cannot overflow. */
        int rc = bitmap_grow(bm, bit + 1);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    bm->words[bit / BITS_PER_WORD] |= bit_mask(bit);
    return OPAL_SUCCESS;
}

int opal_bitmap_clear_bit(opal_bitmap_t *bm, int bit)
{
    if (bit < 0 || bit >= bm->max_bits) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (bit < bm->size_bits) {
        bm->words[bit / BITS_PER_WORD] &= ~bit_mask(bit);
    }
    return OPAL_SUCCESS;
}

bool opal_bitmap_is_set_bit(const opal_bitmap_t *bm, int bit)
{
    if (bit < 0 || bit >= bm->size_bits) {
        return false;
    }
    return 0 != (bm->words[bit / BITS_PER_WORD] & bit_mask(bit));
}

void opal_bitmap_set_all_bits(opal_bitmap_t *bm)
{
    int full = bm->size_bits / BITS_PER_WORD;
    int rest = bm->size_bits % BITS_PER_WORD;
    if (full > 0) {
        memset(bm->words, 0xff, (size_t) full * sizeof(uint64_t));
    }
    if (rest > 0) {
        /* Only [0, size) may be set: the invariant the counts rely on. */
        bm->words[full] = ((uint64_t) 1 << rest) - 1;
    }
}

void opal_bitmap_clear_all_bits(opal_bitmap_t *bm)
{
    if (bm->num_words > 0) {
        memset(bm->words, 0, (size_t) bm->num_words * sizeof(uint64_t));
    }
}

int opal_bitmap_find_and_set_first_unset_bit(opal_bitmap_t *bm, int *position)
{
    int used = words_for(bm->size_bits);
    int candidate = bm->size_bits;
    for (int i = 0; i < used; ++i) {
        uint64_t unset = ~bm->words[i];
        if (0 != unset) {
            int bit = i * BITS_PER_WORD + __builtin_ctzll(unset);
            /* A clear bit past the size means [0, size) is full. */
            if (bit < candidate) {
                candidate = bit;
            }
            break;
        }
    }
    if (candidate >= bm->max_bits) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    int rc = opal_bitmap_set_bit(bm, candidate);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    *position = candidate;
    return OPAL_SUCCESS;
}

int opal_bitmap_num_set_bits(const opal_bitmap_t *bm)
{
    int count = 0;
    int used = words_for(bm->size_bits);
    for (int i = 0; i < used; ++i) {
        count += __builtin_popcountll(bm->words[i]);
    }
    return count;
}

bool opal_bitmap_is_clear(const opal_bitmap_t *bm)
{
    int used = words_for(bm->size_bits);
    for (int i = 0; i < used; ++i) {
        if (0 != bm->words[i]) {
            return false;
        }
    }
    return true;
}

bool opal_bitmap_are_equal(const opal_bitmap_t *a, const opal_bitmap_t *b)
{
    int wa = words_for(a->size_bits);
    int wb = words_for(b->size_bits);
    int common = wa < wb ? wa : wb;
    for (int i = 0; i < common; ++i) {
        if (a->words[i] != b->words[i]) {
            return false;
        }
    }
    /* The longer one must have nothing set beyond the shorter one. */
    const opal_bitmap_t *longer = wa > wb ? a : b;
    int wl = wa > wb ? wa : wb;
    for (int i = common; i < wl; ++i) {
        if (0 != longer->words[i]) {
            return false;
        }
    }
    return true;
}

int opal_bitmap_bitwise_and_inplace(opal_bitmap_t *dest, const opal_bitmap_t *src)
{
    int wd = words_for(dest->size_bits);
    int ws = words_for(src->size_bits);
    for (int i = 0; i < wd; ++i) {
        dest->words[i] &= i < ws ? src->words[i] : 0;
    }
    return OPAL_SUCCESS;
}

/* Grows dest to cover src before an or / xor. */
static int grow_to_cover(opal_bitmap_t *dest, const opal_bitmap_t *src)
{
    if (src->size_bits <= dest->size_bits) {
        return OPAL_SUCCESS;
    }
    if (src->size_bits > dest->max_bits) {
        return OPAL_ERR_BAD_PARAM;
    }
    return bitmap_grow(dest, src->size_bits);
}

int opal_bitmap_bitwise_or_inplace(opal_bitmap_t *dest, const opal_bitmap_t *src)
{
    int rc = grow_to_cover(dest, src);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    int ws = words_for(src->size_bits);
    for (int i = 0; i < ws; ++i) {
        dest->words[i] |= src->words[i];
    }
    return OPAL_SUCCESS;
}

int opal_bitmap_bitwise_xor_inplace(opal_bitmap_t *dest, const opal_bitmap_t *src)
{
    int rc = grow_to_cover(dest, src);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    /* src has nothing set past its size, so dest's invariant holds. */
    int ws = words_for(src->size_bits);
    for (int i = 0; i < ws; ++i) {
        dest->words[i] ^= src->words[i];
    }
    return OPAL_SUCCESS;
}

int opal_bitmap_copy(opal_bitmap_t *dest, const opal_bitmap_t *src)
{
    if (dest == src) {
        return OPAL_SUCCESS;
    }
    if (src->size_bits > dest->max_bits) {
        return OPAL_ERR_BAD_PARAM;
    }
    int rc = bitmap_grow(dest, src->size_bits);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    int ws = words_for(src->size_bits);
    if (ws > 0) {
        memcpy(dest->words, src->words, (size_t) ws * sizeof(uint64_t));
    }
    if (dest->num_words > ws) {
        memset(dest->words + ws, 0, (size_t) (dest->num_words - ws) * sizeof(uint64_t));
    }
    dest->size_bits = src->size_bits;
    return OPAL_SUCCESS;
}
