/*
 * RPC argument codecs from one field list (X-macros, plain C11).
 *
 * A struct is described once:
 *
 *   #define POINT_FIELDS(X)        \
 *       X(int32_t, x, VAR)         \
 *       X(int32_t, y, VAR)
 *   OPAL_RPC_STRUCT(point, POINT_FIELDS)
 *
 *   #define DRAW_IN_FIELDS(X)                  \
 *       X(uint64_t, id, VAR)                   \
 *       X(opal_rpc_uuid_t, owner, RAW)         \
 *       X(char *, label, STRING)               \
 *       X(point, origin, STRUCT)               \
 *       X(point, hint, PTR)                    \
 *       X(point, path, ARRAY_STRUCT)           \
 *       X(uint32_t, weights, ARRAY_VAR)        \
 *       X(opal_rpc_iov_t, blob, IOV)            \
 *       X(opal_bulk_t *, pixels, BULK)
 *   OPAL_RPC_STRUCT(draw_in, DRAW_IN_FIELDS)
 *
 * which declares `draw_in_t` (members: uint64_t id; opal_rpc_uuid_t owner;
 * char *label; point_t origin; point_t *hint; struct { uint32_t count;
 * point_t *elems; } path; ...) and the static functions draw_in_size,
 * draw_in_encode, draw_in_decode, draw_in_free and the codec table
 * draw_in_codec (opal_rpc_codec_t) that protocols name.
 *
 * Kinds (the wire format is in docs/rpc.md; integers little-endian, no
 * padding, lengths and counts u32):
 *   VAR     integers, bool, enums, double, float: their sizeof bytes
 *           (1, 2, 4 or 8); a bool must decode as 0 or 1
 *   RAW     any fixed-size plain type (a uuid, a struct of integers
 *           written as bytes): sizeof bytes as they are in memory
 *   STRING  char *: u32 length, bytes, no NUL; NULL travels as "absent"
 *           (length 0xffffffff); a NUL inside is refused when decoding
 *   IOV     opal_rpc_iov_t: u32 length, bytes
 *   BULK    opal_bulk_t *: u32 length, the handle as opal_bulk_serialize
 *           writes it with OPAL_BULK_EAGER (a small read-only handle
 *           carries its bytes); length 0: NULL. Decoding deserializes
 *           it with the bulk class the decoder was given
 *           (opal_rpc_codec_decode_with; the engine gives its own) and
 *           free releases it with opal_bulk_free
 *   STRUCT  a nested OPAL_RPC_STRUCT by its name
 *   PTR     an optional nested struct (type name_t *): u8 0 / 1, then it
 *   ARRAY_VAR, ARRAY_RAW, ARRAY_STRING, ARRAY_IOV, ARRAY_BULK, ARRAY_STRUCT
 *           struct { uint32_t count; T *elems; }: u32 count, elements
 *
 * Decoding checks every count and length against the bytes left (an
 * element takes at least one byte, so no count can make it allocate more
 * than the buffer justifies), refuses trailing bytes (opal_rpc_codec_decode),
 * and on failure frees what it allocated and leaves the struct zeroed.
 * Decoded structs own their memory and are released with the codec's
 * free; structs a caller filled to encode are never freed by a codec.
 */
#ifndef OPAL_MCA_RPC_RPC_CODEC_H
#define OPAL_MCA_RPC_RPC_CODEC_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/bulk/bulk.h"
#include "opal/util/opal_cursor.h"
#include "opal/util/opal_error.h"

/* Bytes with a length (kind IOV). */
typedef struct opal_rpc_iov_t {
    void *buf;
    uint32_t len;
} opal_rpc_iov_t;

/* A 16-byte identifier (kind RAW), as DAOS's uuids. */
typedef struct opal_rpc_uuid_t {
    uint8_t bytes[16];
} opal_rpc_uuid_t;

/* A generated codec, as protocols refer to it. */
typedef struct opal_rpc_codec_t {
    const char *name;
    /* sizeof the generated struct. */
    size_t struct_size;
    /* Exact bytes encode writes for *s. */
    size_t (*size)(const void *s);
    /* Writes *s; the cursor fails when it does not fit. */
    void (*encode)(opal_cursor_t *c, const void *s);
    /* Reads into *s (zeroed by the caller); false with the cursor failed
     * and *s released when the bytes are malformed. */
    bool (*decode)(opal_cursor_t *c, void *s);
    /* Releases what decode allocated in *s (not *s itself). */
    void (*free)(void *s);
} opal_rpc_codec_t;

/* STRING's marker for NULL. */
#define OPAL_RPC_CODEC_NULL_STRING UINT32_MAX

/* ------------------------------------------------- element helpers */

/* Writes the n bytes (1, 2, 4 or 8) of an integer or floating value. */
static inline void opal_rpc_codec_put_var(opal_cursor_t *c, const void *p, size_t n)
{
    switch (n) {
        case 1: {
            uint8_t v;
            memcpy(&v, p, 1);
            opal_cursor_put_u8(c, v);
            break;
        }
        case 2: {
            uint16_t v;
            memcpy(&v, p, 2);
            opal_cursor_put_u16(c, v);
            break;
        }
        case 4: {
            uint32_t v;
            memcpy(&v, p, 4);
            opal_cursor_put_u32(c, v);
            break;
        }
        case 8: {
            uint64_t v;
            memcpy(&v, p, 8);
            opal_cursor_put_u64(c, v);
            break;
        }
        default:
            opal_cursor_fail(c);
    }
}

/* Reads what opal_rpc_codec_put_var wrote; is_bool refuses values but 0
 * and 1 (a bool holding anything else is undefined behaviour in C). */
static inline void opal_rpc_codec_get_var(opal_cursor_t *c, void *p, size_t n, bool is_bool)
{
    switch (n) {
        case 1: {
            uint8_t v = opal_cursor_get_u8(c);
            if (is_bool && v > 1) {
                opal_cursor_fail(c);
                return;
            }
            if (opal_cursor_ok(c)) {
                memcpy(p, &v, 1);
            }
            break;
        }
        case 2: {
            uint16_t v = opal_cursor_get_u16(c);
            if (opal_cursor_ok(c)) {
                memcpy(p, &v, 2);
            }
            break;
        }
        case 4: {
            uint32_t v = opal_cursor_get_u32(c);
            if (opal_cursor_ok(c)) {
                memcpy(p, &v, 4);
            }
            break;
        }
        case 8: {
            uint64_t v = opal_cursor_get_u64(c);
            if (opal_cursor_ok(c)) {
                memcpy(p, &v, 8);
            }
            break;
        }
        default:
            opal_cursor_fail(c);
    }
}

static inline size_t opal_rpc_codec_string_size(const char *s)
{
    return 4 + (NULL == s ? 0 : strlen(s));
}

static inline void opal_rpc_codec_put_string(opal_cursor_t *c, const char *s)
{
    if (NULL == s) {
        opal_cursor_put_u32(c, OPAL_RPC_CODEC_NULL_STRING);
        return;
    }
    size_t n = strlen(s);
    if (n >= OPAL_RPC_CODEC_NULL_STRING) {
        opal_cursor_fail(c);
        return;
    }
    opal_cursor_put_u32(c, (uint32_t) n);
    opal_cursor_put_bytes(c, s, n);
}

/* A malloc'd NUL-terminated copy, or NULL for the absent marker; fails
 * the cursor for a length past the buffer or a NUL inside. */
static inline void opal_rpc_codec_get_string(opal_cursor_t *c, char **s)
{
    uint32_t n = opal_cursor_get_u32(c);
    *s = NULL;
    if (!opal_cursor_ok(c) || OPAL_RPC_CODEC_NULL_STRING == n) {
        return;
    }
    const char *p = (const char *) opal_cursor_get_ptr(c, n);
    if (!opal_cursor_ok(c) || (n > 0 && NULL != memchr(p, 0, n))) {
        opal_cursor_fail(c);
        return;
    }
    char *copy = (char *) malloc((size_t) n + 1);
    if (NULL == copy) {
        opal_cursor_fail(c);
        return;
    }
    if (n > 0) {
        memcpy(copy, p, n);
    }
    copy[n] = '\0';
    *s = copy;
}

static inline void opal_rpc_codec_put_iov(opal_cursor_t *c, const opal_rpc_iov_t *v)
{
    opal_cursor_put_u32(c, v->len);
    opal_cursor_put_bytes(c, v->buf, v->len);
}

static inline void opal_rpc_codec_get_iov(opal_cursor_t *c, opal_rpc_iov_t *v)
{
    uint32_t n = opal_cursor_get_u32(c);
    const void *p = opal_cursor_get_ptr(c, opal_cursor_ok(c) ? n : 0);
    v->buf = NULL;
    v->len = 0;
    if (!opal_cursor_ok(c) || 0 == n) {
        return;
    }
    v->buf = malloc(n);
    if (NULL == v->buf) {
        opal_cursor_fail(c);
        return;
    }
    memcpy(v->buf, p, n);
    v->len = n;
}

/* BULK: the handle serialized (see the kinds above). */
static inline size_t opal_rpc_codec_bulk_size(opal_bulk_t *h)
{
    return 4 + (NULL == h ? 0 : opal_bulk_get_serialize_size(h, OPAL_BULK_EAGER));
}

static inline void opal_rpc_codec_put_bulk(opal_cursor_t *c, opal_bulk_t *h)
{
    size_t n = NULL == h ? 0 : opal_bulk_get_serialize_size(h, OPAL_BULK_EAGER);
    if (n >= UINT32_MAX) {
        opal_cursor_fail(c);
        return;
    }
    opal_cursor_put_u32(c, (uint32_t) n);
    if (0 == n) {
        return;
    }
    uint8_t *p = opal_cursor_take(c, n);
    if (NULL == p || OPAL_SUCCESS != opal_bulk_serialize(p, n, OPAL_BULK_EAGER, h)) {
        opal_cursor_fail(c);
    }
}

/* A handle deserialized with the cursor's decode_ctx (a bulk class), or
 * NULL for length 0; fails the cursor for a length past the buffer, no
 * bulk class, or bytes opal_bulk_deserialize refuses (it checks every
 * length inside). */
static inline void opal_rpc_codec_get_bulk(opal_cursor_t *c, opal_bulk_t **h)
{
    uint32_t n = opal_cursor_get_u32(c);
    const void *p = opal_cursor_get_ptr(c, opal_cursor_ok(c) ? n : 0);
    *h = NULL;
    if (!opal_cursor_ok(c) || 0 == n) {
        return;
    }
    opal_bulk_class_t *bc = (opal_bulk_class_t *) c->decode_ctx;
    if (NULL == bc || OPAL_SUCCESS != opal_bulk_deserialize(bc, h, p, n)) {
        *h = NULL;
        opal_cursor_fail(c);
    }
}

/* An array's count, refused when the elements (each at least one byte on
 * the wire) could not fit in what is left, or would overflow size_t. */
static inline uint32_t opal_rpc_codec_get_count(opal_cursor_t *c, size_t elem_size)
{
    uint32_t n = opal_cursor_get_u32(c);
    if ((size_t) n > opal_cursor_left(c) || (size_t) n > SIZE_MAX / elem_size) {
        opal_cursor_fail(c);
        return 0;
    }
    return n;
}

/* Decodes a whole buffer into *s (zeroed first), BULK fields with the
 * bulk class bc (NULL: a BULK field other than NULL is refused):
 * OPAL_SUCCESS, or OPAL_ERR_PROTOCOL (s released and zeroed) for
 * malformed bytes or bytes left over. */
static inline int opal_rpc_codec_decode_with(const opal_rpc_codec_t *codec, opal_bulk_class_t *bc,
                                             const void *buf, size_t len, void *s)
{
    opal_cursor_t c;
    opal_cursor_init_read(&c, buf, len);
    c.decode_ctx = bc;
    memset(s, 0, codec->struct_size);
    if (!codec->decode(&c, s) || !opal_cursor_done(&c)) {
        codec->free(s);
        memset(s, 0, codec->struct_size);
        return OPAL_ERR_PROTOCOL;
    }
    return OPAL_SUCCESS;
}

/* The same without a bulk class. */
static inline int opal_rpc_codec_decode(const opal_rpc_codec_t *codec, const void *buf, size_t len,
                                        void *s)
{
    return opal_rpc_codec_decode_with(codec, NULL, buf, len, s);
}

/* --------------------------------------------------- per-kind pieces */

/* The C type of one element of each kind. */
#define OPAL_RPC_CTYPE_VAR(T)    T
#define OPAL_RPC_CTYPE_RAW(T)    T
#define OPAL_RPC_CTYPE_STRING(T) char *
#define OPAL_RPC_CTYPE_IOV(T)    opal_rpc_iov_t
#define OPAL_RPC_CTYPE_BULK(T)   opal_bulk_t *
#define OPAL_RPC_CTYPE_STRUCT(T) T##_t

/* Encoded size, encode, decode and free of one element lvalue v. */
#define OPAL_RPC_ESIZE_VAR(T, v)    sizeof(v)
#define OPAL_RPC_ESIZE_RAW(T, v)    sizeof(v)
#define OPAL_RPC_ESIZE_STRING(T, v) opal_rpc_codec_string_size(v)
#define OPAL_RPC_ESIZE_IOV(T, v)    (4 + (size_t) (v).len)
#define OPAL_RPC_ESIZE_BULK(T, v)   opal_rpc_codec_bulk_size(v)
#define OPAL_RPC_ESIZE_STRUCT(T, v) T##_size(&(v))

#define OPAL_RPC_EENC_VAR(T, c, v)    opal_rpc_codec_put_var((c), &(v), sizeof(v))
#define OPAL_RPC_EENC_RAW(T, c, v)    opal_cursor_put_bytes((c), &(v), sizeof(v))
#define OPAL_RPC_EENC_STRING(T, c, v) opal_rpc_codec_put_string((c), (v))
#define OPAL_RPC_EENC_IOV(T, c, v)    opal_rpc_codec_put_iov((c), &(v))
#define OPAL_RPC_EENC_BULK(T, c, v)   opal_rpc_codec_put_bulk((c), (v))
#define OPAL_RPC_EENC_STRUCT(T, c, v) T##_encode((c), &(v))

#define OPAL_RPC_EDEC_VAR(T, c, v)                                                                 \
    opal_rpc_codec_get_var((c), &(v), sizeof(v), _Generic((v), bool : true, default : false))
#define OPAL_RPC_EDEC_RAW(T, c, v)    opal_cursor_get_bytes((c), &(v), sizeof(v))
#define OPAL_RPC_EDEC_STRING(T, c, v) opal_rpc_codec_get_string((c), &(v))
#define OPAL_RPC_EDEC_IOV(T, c, v)    opal_rpc_codec_get_iov((c), &(v))
#define OPAL_RPC_EDEC_BULK(T, c, v)   opal_rpc_codec_get_bulk((c), &(v))
#define OPAL_RPC_EDEC_STRUCT(T, c, v) (void) T##_decode((c), &(v))

#define OPAL_RPC_EFREE_VAR(T, v)    ((void) 0)
#define OPAL_RPC_EFREE_RAW(T, v)    ((void) 0)
#define OPAL_RPC_EFREE_STRING(T, v) free(v)
#define OPAL_RPC_EFREE_IOV(T, v)    free((v).buf)
#define OPAL_RPC_EFREE_BULK(T, v)   (void) opal_bulk_free(v)
#define OPAL_RPC_EFREE_STRUCT(T, v) T##_free(&(v))

/* ------------------------------------------- per-field, by kind token */

/* Struct members. */
#define OPAL_RPC_MEMBER_VAR(T, n)    T n;
#define OPAL_RPC_MEMBER_RAW(T, n)    T n;
#define OPAL_RPC_MEMBER_STRING(T, n) char *n;
#define OPAL_RPC_MEMBER_IOV(T, n)    opal_rpc_iov_t n;
#define OPAL_RPC_MEMBER_BULK(T, n)   opal_bulk_t *n;
#define OPAL_RPC_MEMBER_STRUCT(T, n) T##_t n;
#define OPAL_RPC_MEMBER_PTR(T, n)    T##_t *n;
#define OPAL_RPC_MEMBER_ARRAY_(K, T, n)                                                            \
    struct {                                                                                       \
        uint32_t count;                                                                            \
        OPAL_RPC_CTYPE_##K(T) * elems;                                                             \
    } n;
#define OPAL_RPC_MEMBER_ARRAY_VAR(T, n)    OPAL_RPC_MEMBER_ARRAY_(VAR, T, n)
#define OPAL_RPC_MEMBER_ARRAY_RAW(T, n)    OPAL_RPC_MEMBER_ARRAY_(RAW, T, n)
#define OPAL_RPC_MEMBER_ARRAY_STRING(T, n) OPAL_RPC_MEMBER_ARRAY_(STRING, T, n)
#define OPAL_RPC_MEMBER_ARRAY_IOV(T, n)    OPAL_RPC_MEMBER_ARRAY_(IOV, T, n)
#define OPAL_RPC_MEMBER_ARRAY_BULK(T, n)   OPAL_RPC_MEMBER_ARRAY_(BULK, T, n)
#define OPAL_RPC_MEMBER_ARRAY_STRUCT(T, n) OPAL_RPC_MEMBER_ARRAY_(STRUCT, T, n)

/* Encoded size of field n of *s, added to size_. */
#define OPAL_RPC_FSIZE_VAR(T, n)    size_ += OPAL_RPC_ESIZE_VAR(T, s->n);
#define OPAL_RPC_FSIZE_RAW(T, n)    size_ += OPAL_RPC_ESIZE_RAW(T, s->n);
#define OPAL_RPC_FSIZE_STRING(T, n) size_ += OPAL_RPC_ESIZE_STRING(T, s->n);
#define OPAL_RPC_FSIZE_IOV(T, n)    size_ += OPAL_RPC_ESIZE_IOV(T, s->n);
#define OPAL_RPC_FSIZE_BULK(T, n)   size_ += OPAL_RPC_ESIZE_BULK(T, s->n);
#define OPAL_RPC_FSIZE_STRUCT(T, n) size_ += OPAL_RPC_ESIZE_STRUCT(T, s->n);
#define OPAL_RPC_FSIZE_PTR(T, n)    size_ += 1 + (NULL == s->n ? 0 : T##_size(s->n));
#define OPAL_RPC_FSIZE_ARRAY_(K, T, n)                                                             \
    size_ += 4;                                                                                    \
    for (uint32_t i_ = 0; i_ < s->n.count; ++i_) {                                                 \
        size_ += OPAL_RPC_ESIZE_##K(T, s->n.elems[i_]);                                            \
    }
#define OPAL_RPC_FSIZE_ARRAY_VAR(T, n)    OPAL_RPC_FSIZE_ARRAY_(VAR, T, n)
#define OPAL_RPC_FSIZE_ARRAY_RAW(T, n)    OPAL_RPC_FSIZE_ARRAY_(RAW, T, n)
#define OPAL_RPC_FSIZE_ARRAY_STRING(T, n) OPAL_RPC_FSIZE_ARRAY_(STRING, T, n)
#define OPAL_RPC_FSIZE_ARRAY_IOV(T, n)    OPAL_RPC_FSIZE_ARRAY_(IOV, T, n)
#define OPAL_RPC_FSIZE_ARRAY_BULK(T, n)   OPAL_RPC_FSIZE_ARRAY_(BULK, T, n)
#define OPAL_RPC_FSIZE_ARRAY_STRUCT(T, n) OPAL_RPC_FSIZE_ARRAY_(STRUCT, T, n)

/* Encode field n of *s. */
#define OPAL_RPC_FENC_VAR(T, n)    OPAL_RPC_EENC_VAR(T, c, s->n);
#define OPAL_RPC_FENC_RAW(T, n)    OPAL_RPC_EENC_RAW(T, c, s->n);
#define OPAL_RPC_FENC_STRING(T, n) OPAL_RPC_EENC_STRING(T, c, s->n);
#define OPAL_RPC_FENC_IOV(T, n)    OPAL_RPC_EENC_IOV(T, c, s->n);
#define OPAL_RPC_FENC_BULK(T, n)   OPAL_RPC_EENC_BULK(T, c, s->n);
#define OPAL_RPC_FENC_STRUCT(T, n) OPAL_RPC_EENC_STRUCT(T, c, s->n);
#define OPAL_RPC_FENC_PTR(T, n)                                                                    \
    opal_cursor_put_u8(c, NULL == s->n ? 0 : 1);                                                   \
    if (NULL != s->n) {                                                                            \
        T##_encode(c, s->n);                                                                       \
    }
#define OPAL_RPC_FENC_ARRAY_(K, T, n)                                                              \
    opal_cursor_put_u32(c, s->n.count);                                                            \
    for (uint32_t i_ = 0; i_ < s->n.count; ++i_) {                                                 \
        OPAL_RPC_EENC_##K(T, c, s->n.elems[i_]);                                                   \
    }
#define OPAL_RPC_FENC_ARRAY_VAR(T, n)    OPAL_RPC_FENC_ARRAY_(VAR, T, n)
#define OPAL_RPC_FENC_ARRAY_RAW(T, n)    OPAL_RPC_FENC_ARRAY_(RAW, T, n)
#define OPAL_RPC_FENC_ARRAY_STRING(T, n) OPAL_RPC_FENC_ARRAY_(STRING, T, n)
#define OPAL_RPC_FENC_ARRAY_IOV(T, n)    OPAL_RPC_FENC_ARRAY_(IOV, T, n)
#define OPAL_RPC_FENC_ARRAY_BULK(T, n)   OPAL_RPC_FENC_ARRAY_(BULK, T, n)
#define OPAL_RPC_FENC_ARRAY_STRUCT(T, n) OPAL_RPC_FENC_ARRAY_(STRUCT, T, n)

/* Decode field n into *s (zeroed), stopping at the first failure. */
#define OPAL_RPC_FDEC_VAR(T, n)    OPAL_RPC_EDEC_VAR(T, c, s->n);
#define OPAL_RPC_FDEC_RAW(T, n)    OPAL_RPC_EDEC_RAW(T, c, s->n);
#define OPAL_RPC_FDEC_STRING(T, n) OPAL_RPC_EDEC_STRING(T, c, s->n);
#define OPAL_RPC_FDEC_IOV(T, n)    OPAL_RPC_EDEC_IOV(T, c, s->n);
#define OPAL_RPC_FDEC_BULK(T, n)   OPAL_RPC_EDEC_BULK(T, c, s->n);
#define OPAL_RPC_FDEC_STRUCT(T, n) OPAL_RPC_EDEC_STRUCT(T, c, s->n);
#define OPAL_RPC_FDEC_PTR(T, n)                                                                    \
    if (opal_cursor_ok(c)) {                                                                       \
        uint8_t present_ = opal_cursor_get_u8(c);                                                  \
        if (present_ > 1) {                                                                        \
            opal_cursor_fail(c);                                                                   \
        } else if (1 == present_) {                                                                \
            s->n = (T##_t *) calloc(1, sizeof(T##_t));                                             \
            if (NULL == s->n) {                                                                    \
                opal_cursor_fail(c);                                                               \
            } else {                                                                               \
                (void) T##_decode(c, s->n);                                                        \
            }                                                                                      \
        }                                                                                          \
    }
#define OPAL_RPC_FDEC_ARRAY_(K, T, n)                                                              \
    if (opal_cursor_ok(c)) {                                                                       \
        uint32_t count_ = opal_rpc_codec_get_count(c, sizeof(*s->n.elems));                        \
        if (count_ > 0) {                                                                          \
            s->n.elems = calloc(count_, sizeof(*s->n.elems));                                      \
            if (NULL == s->n.elems) {                                                              \
                opal_cursor_fail(c);                                                               \
            } else {                                                                               \
                s->n.count = count_;                                                               \
                for (uint32_t i_ = 0; i_ < count_ && opal_cursor_ok(c); ++i_) {                    \
                    OPAL_RPC_EDEC_##K(T, c, s->n.elems[i_]);                                       \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }
#define OPAL_RPC_FDEC_ARRAY_VAR(T, n)    OPAL_RPC_FDEC_ARRAY_(VAR, T, n)
#define OPAL_RPC_FDEC_ARRAY_RAW(T, n)    OPAL_RPC_FDEC_ARRAY_(RAW, T, n)
#define OPAL_RPC_FDEC_ARRAY_STRING(T, n) OPAL_RPC_FDEC_ARRAY_(STRING, T, n)
#define OPAL_RPC_FDEC_ARRAY_IOV(T, n)    OPAL_RPC_FDEC_ARRAY_(IOV, T, n)
#define OPAL_RPC_FDEC_ARRAY_BULK(T, n)   OPAL_RPC_FDEC_ARRAY_(BULK, T, n)
#define OPAL_RPC_FDEC_ARRAY_STRUCT(T, n) OPAL_RPC_FDEC_ARRAY_(STRUCT, T, n)

/* Free what decoding field n allocated (elements past a failed one are
 * zeroed, which every free accepts). */
#define OPAL_RPC_FFREE_VAR(T, n)
#define OPAL_RPC_FFREE_RAW(T, n)
#define OPAL_RPC_FFREE_STRING(T, n) OPAL_RPC_EFREE_STRING(T, s->n);
#define OPAL_RPC_FFREE_IOV(T, n)    OPAL_RPC_EFREE_IOV(T, s->n);
#define OPAL_RPC_FFREE_BULK(T, n)   OPAL_RPC_EFREE_BULK(T, s->n);
#define OPAL_RPC_FFREE_STRUCT(T, n) OPAL_RPC_EFREE_STRUCT(T, s->n);
#define OPAL_RPC_FFREE_PTR(T, n)                                                                   \
    if (NULL != s->n) {                                                                            \
        T##_free(s->n);                                                                            \
        free(s->n);                                                                                \
    }
#define OPAL_RPC_FFREE_ARRAY_(K, T, n)                                                             \
    if (NULL != s->n.elems) {                                                                      \
        for (uint32_t i_ = 0; i_ < s->n.count; ++i_) {                                             \
            OPAL_RPC_EFREE_##K(T, s->n.elems[i_]);                                                 \
        }                                                                                          \
        free(s->n.elems);                                                                          \
    }
#define OPAL_RPC_FFREE_ARRAY_VAR(T, n)    OPAL_RPC_FFREE_ARRAY_(VAR, T, n)
#define OPAL_RPC_FFREE_ARRAY_RAW(T, n)    OPAL_RPC_FFREE_ARRAY_(RAW, T, n)
#define OPAL_RPC_FFREE_ARRAY_STRING(T, n) OPAL_RPC_FFREE_ARRAY_(STRING, T, n)
#define OPAL_RPC_FFREE_ARRAY_IOV(T, n)    OPAL_RPC_FFREE_ARRAY_(IOV, T, n)
#define OPAL_RPC_FFREE_ARRAY_BULK(T, n)   OPAL_RPC_FFREE_ARRAY_(BULK, T, n)
#define OPAL_RPC_FFREE_ARRAY_STRUCT(T, n) OPAL_RPC_FFREE_ARRAY_(STRUCT, T, n)

/* The X callbacks the field list is expanded with. */
#define OPAL_RPC_X_MEMBER(T, n, K) OPAL_RPC_MEMBER_##K(T, n)
#define OPAL_RPC_X_SIZE(T, n, K)   OPAL_RPC_FSIZE_##K(T, n)
#define OPAL_RPC_X_ENC(T, n, K)    OPAL_RPC_FENC_##K(T, n)
#define OPAL_RPC_X_DEC(T, n, K)    OPAL_RPC_FDEC_##K(T, n)
#define OPAL_RPC_X_FREE(T, n, K)   OPAL_RPC_FFREE_##K(T, n)

/* Declares name_t from FIELDS and its codec (static: a codec lives where
 * its protocol is registered; a header shared by client and server
 * expands it once per file that uses it). */
#define OPAL_RPC_STRUCT(NAME, FIELDS)                                                              \
    typedef struct NAME {                                                                          \
        FIELDS(OPAL_RPC_X_MEMBER)                                                                  \
    } NAME##_t;                                                                                    \
    static inline size_t NAME##_size(const NAME##_t *s)                                            \
    {                                                                                              \
        size_t size_ = 0;                                                                          \
        FIELDS(OPAL_RPC_X_SIZE)                                                                    \
        return size_;                                                                              \
    }                                                                                              \
    static inline void NAME##_encode(opal_cursor_t *c, const NAME##_t *s)                          \
    {                                                                                              \
        FIELDS(OPAL_RPC_X_ENC)                                                                     \
    }                                                                                              \
    static inline void NAME##_free(NAME##_t *s)                                                    \
    {                                                                                              \
        FIELDS(OPAL_RPC_X_FREE)                                                                    \
    }                                                                                              \
    static inline bool NAME##_decode(opal_cursor_t *c, NAME##_t *s)                                \
    {                                                                                              \
        FIELDS(OPAL_RPC_X_DEC)                                                                     \
        return opal_cursor_ok(c);                                                                  \
    }                                                                                              \
    static inline size_t NAME##_size_any(const void *s)                                            \
    {                                                                                              \
        return NAME##_size((const NAME##_t *) s);                                                  \
    }                                                                                              \
    static inline void NAME##_encode_any(opal_cursor_t *c, const void *s)                          \
    {                                                                                              \
        NAME##_encode(c, (const NAME##_t *) s);                                                    \
    }                                                                                              \
    static inline bool NAME##_decode_any(opal_cursor_t *c, void *s)                                \
    {                                                                                              \
        return NAME##_decode(c, (NAME##_t *) s);                                                   \
    }                                                                                              \
    static inline void NAME##_free_any(void *s)                                                    \
    {                                                                                              \
        NAME##_free((NAME##_t *) s);                                                               \
    }                                                                                              \
    static const opal_rpc_codec_t NAME##_codec __attribute__((unused)) = {                         \
        .name = #NAME,                                                                             \
        .struct_size = sizeof(NAME##_t),                                                           \
        .size = NAME##_size_any,                                                                   \
        .encode = NAME##_encode_any,                                                               \
        .decode = NAME##_decode_any,                                                               \
        .free = NAME##_free_any,                                                                   \
    }

#endif /* OPAL_MCA_RPC_RPC_CODEC_H */
