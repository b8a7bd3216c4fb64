/*
 * opal_bitmap_t: a growable set of small non-negative integers (bits), for
 * example the peers a transport can reach.
 *
 * A bitmap has a logical size in bits: the size given to init, raised to
 * one past the highest bit ever set. Bits at or past the size read as
 * clear; set_all and the counts work on [0, size). Setting a bit past the
 * size grows the bitmap (the storage grows geometrically), up to an
 * optional maximum: a bit at or past the maximum is refused with
 * OPAL_ERR_BAD_PARAM and the bitmap is unchanged.
 *
 *   opal_bitmap_t reach;
 *   OBJ_CONSTRUCT(&reach, opal_bitmap_t);
 *   opal_bitmap_init(&reach, nprocs);
 *   opal_bitmap_set_bit(&reach, rank);
 *   ...
 *   OBJ_DESTRUCT(&reach);
 *
 * Not thread-safe: callers that share a bitmap lock around it.
 */
#ifndef OPAL_CLASS_OPAL_BITMAP_H
#define OPAL_CLASS_OPAL_BITMAP_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stdint.h>

#include "opal/class/opal_object.h"

typedef struct opal_bitmap_t {
    opal_object_t super;
    /* Storage: words[i] holds bits 64*i .. 64*i+63. Bits at or past
     * size_bits are always zero, so counts and comparisons may read whole
     * words. */
    uint64_t *words;
    int num_words;
    int size_bits;
    int max_bits;
} opal_bitmap_t;
OBJ_CLASS_DECLARATION(opal_bitmap_t);

/* Sets the maximum number of bits (default INT_MAX): bits >= max_bits are
 * refused. Fails with OPAL_ERR_BAD_PARAM when max_bits < 0 or smaller than
 * the current size. */
OPAL_DECLSPEC int opal_bitmap_set_max_size(opal_bitmap_t *bm, int max_bits);

/* Sizes the bitmap to size bits, all clear (any earlier content is
 * dropped). OPAL_ERR_BAD_PARAM when size < 0 or above the maximum,
 * OPAL_ERR_OUT_OF_RESOURCE when memory runs out. */
OPAL_DECLSPEC int opal_bitmap_init(opal_bitmap_t *bm, int size);

/* Sets a bit, growing the bitmap when bit >= size. OPAL_ERR_BAD_PARAM for
 * a negative bit or one at or past the maximum; OPAL_ERR_OUT_OF_RESOURCE
 * when growing fails (the bitmap is unchanged then). */
OPAL_DECLSPEC int opal_bitmap_set_bit(opal_bitmap_t *bm, int bit);

/* Clears a bit. A bit past the size is already clear: success, no growth.
 * OPAL_ERR_BAD_PARAM for a negative bit or one at or past the maximum. */
OPAL_DECLSPEC int opal_bitmap_clear_bit(opal_bitmap_t *bm, int bit);

/* True when the bit is set; false for any bit outside [0, size). */
OPAL_DECLSPEC bool opal_bitmap_is_set_bit(const opal_bitmap_t *bm, int bit);

/* Sets / clears every bit in [0, size). */
OPAL_DECLSPEC void opal_bitmap_set_all_bits(opal_bitmap_t *bm);
OPAL_DECLSPEC void opal_bitmap_clear_all_bits(opal_bitmap_t *bm);

/* Finds the lowest clear bit, sets it and stores its index in *position.
 * When [0, size) is full the bitmap grows by one bit; at the maximum it
 * returns OPAL_ERR_OUT_OF_RESOURCE and leaves *position untouched. */
OPAL_DECLSPEC int opal_bitmap_find_and_set_first_unset_bit(opal_bitmap_t *bm, int *position);

/* The number of set bits. */
OPAL_DECLSPEC int opal_bitmap_num_set_bits(const opal_bitmap_t *bm);

/* True when no bit is set. */
OPAL_DECLSPEC bool opal_bitmap_is_clear(const opal_bitmap_t *bm);

/* True when both hold exactly the same set bits (sizes may differ). */
OPAL_DECLSPEC bool opal_bitmap_are_equal(const opal_bitmap_t *a, const opal_bitmap_t *b);

/* dest &= src. Bits past src's size count as clear; dest keeps its size. */
OPAL_DECLSPEC int opal_bitmap_bitwise_and_inplace(opal_bitmap_t *dest, const opal_bitmap_t *src);

/* dest |= src / dest ^= src. dest grows to src's size first when smaller,
 * so these fail like set_bit (OPAL_ERR_BAD_PARAM past dest's maximum,
 * OPAL_ERR_OUT_OF_RESOURCE) and leave dest unchanged then. */
OPAL_DECLSPEC int opal_bitmap_bitwise_or_inplace(opal_bitmap_t *dest, const opal_bitmap_t *src);
OPAL_DECLSPEC int opal_bitmap_bitwise_xor_inplace(opal_bitmap_t *dest, const opal_bitmap_t *src);

/* Makes dest an equal copy of src (same size and bits; dest keeps its own
 * maximum, so this fails with OPAL_ERR_BAD_PARAM when src is larger). */
OPAL_DECLSPEC int opal_bitmap_copy(opal_bitmap_t *dest, const opal_bitmap_t *src);

/* The logical size in bits, and the maximum. */
static inline int opal_bitmap_size(const opal_bitmap_t *bm)
{
    return bm->size_bits;
}

static inline int opal_bitmap_max_size(const opal_bitmap_t *bm)
{
    return bm->max_bits;
}

#endif /* OPAL_CLASS_OPAL_BITMAP_H */
