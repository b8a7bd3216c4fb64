/*
 * A bounds-checked cursor over a byte buffer: the one way wire formats
 * (URIs' binary parts, address and memory-handle blobs, bulk descriptors,
 * rpc headers, generated codecs) are written and read. Integers are
 * little-endian on the wire whatever the host.
 *
 * Errors are sticky: the first put or get that does not fit (or a get
 * that finds a malformed value) marks the cursor failed, leaves the
 * buffer as it was for that field, and every later call does nothing. A
 * codec therefore writes its fields one after the other and checks once
 * at the end (opal_cursor_ok), and no path reads a byte past the buffer:
 *
 *   opal_cursor_t c;
 *   opal_cursor_init_read(&c, buf, len);
 *   uint32_t n = opal_cursor_get_u32(&c);
 *   const void *bytes = opal_cursor_get_ptr(&c, n);
 *   if (!opal_cursor_ok(&c) || !opal_cursor_done(&c)) ... refuse
 *
 * A read cursor never writes through its buffer: the const is cast away
 * only to keep one struct for both directions.
 */
#ifndef OPAL_UTIL_OPAL_CURSOR_H
#define OPAL_UTIL_OPAL_CURSOR_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct opal_cursor_t {
    uint8_t *buf;
    size_t size;
    size_t pos;
    bool failed;
    /* What a decoder needs besides the bytes, set by whoever starts the
     * decoding (the rpc codecs: the bulk class BULK fields deserialize
     * with); NULL from the init functions. */
    void *decode_ctx;
} opal_cursor_t;

/* Little-endian loads and stores of the wire integers: one memcpy (a
 * plain load or store on the usual little-endian host, a byte swap on a
 * big-endian one) instead of a loop over the bytes. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#    define OPAL_CURSOR_LE16(v) __builtin_bswap16(v)
#    define OPAL_CURSOR_LE32(v) __builtin_bswap32(v)
#    define OPAL_CURSOR_LE64(v) __builtin_bswap64(v)
#else
#    define OPAL_CURSOR_LE16(v) (v)
#    define OPAL_CURSOR_LE32(v) (v)
#    define OPAL_CURSOR_LE64(v) (v)
#endif

/* A cursor writing into buf (size bytes), from its start. */
static inline void opal_cursor_init_write(opal_cursor_t *c, void *buf, size_t size)
{
    c->buf = (uint8_t *) buf;
    c->size = NULL == buf ? 0 : size;
    c->pos = 0;
    c->failed = false;
    c->decode_ctx = NULL;
}

/* A cursor reading buf (size bytes), from its start. */
static inline void opal_cursor_init_read(opal_cursor_t *c, const void *buf, size_t size)
{
    opal_cursor_init_write(c, (void *) buf, size);
}

/* True while every call so far fitted. */
static inline bool opal_cursor_ok(const opal_cursor_t *c)
{
    return !c->failed;
}

/* True when the cursor did not fail and consumed the whole buffer (a
 * decoder uses it to refuse trailing bytes). */
static inline bool opal_cursor_done(const opal_cursor_t *c)
{
    return !c->failed && c->pos == c->size;
}

/* Bytes left after the position (0 once failed). */
static inline size_t opal_cursor_left(const opal_cursor_t *c)
{
    return c->failed ? 0 : c->size - c->pos;
}

/* Bytes written or read so far. */
static inline size_t opal_cursor_pos(const opal_cursor_t *c)
{
    return c->pos;
}

/* Marks the cursor failed (a decoder that found a bad value). */
static inline void opal_cursor_fail(opal_cursor_t *c)
{
    c->failed = true;
}

/* Reserves n bytes at the position and returns them, or NULL (failing the
 * cursor) when fewer are left. n may be 0 (a valid pointer, or NULL for
 * an empty buffer, with the cursor still ok). */
static inline uint8_t *opal_cursor_take(opal_cursor_t *c, size_t n)
{
    if (c->failed || n > c->size - c->pos) {
        c->failed = true;
        return NULL;
    }
    if (NULL == c->buf) {
        return NULL; /* n is 0 here: nothing to point at */
    }
    uint8_t *p = c->buf + c->pos;
    c->pos += n;
    return p;
}

/* ------------------------------------------------------------ writing */

static inline void opal_cursor_put_bytes(opal_cursor_t *c, const void *src, size_t n)
{
    uint8_t *p = opal_cursor_take(c, n);
    if (NULL != p && n > 0) {
        memcpy(p, src, n);
    }
}

static inline void opal_cursor_put_u8(opal_cursor_t *c, uint8_t v)
{
    uint8_t *p = opal_cursor_take(c, 1);
    if (NULL != p) {
        p[0] = v;
    }
}

static inline void opal_cursor_put_u16(opal_cursor_t *c, uint16_t v)
{
    uint8_t *p = opal_cursor_take(c, 2);
    if (NULL != p) {
        uint16_t le = OPAL_CURSOR_LE16(v);
        memcpy(p, &le, 2);
    }
}

static inline void opal_cursor_put_u32(opal_cursor_t *c, uint32_t v)
{
    uint8_t *p = opal_cursor_take(c, 4);
    if (NULL != p) {
        uint32_t le = OPAL_CURSOR_LE32(v);
        memcpy(p, &le, 4);
    }
}

static inline void opal_cursor_put_u64(opal_cursor_t *c, uint64_t v)
{
    uint8_t *p = opal_cursor_take(c, 8);
    if (NULL != p) {
        uint64_t le = OPAL_CURSOR_LE64(v);
        memcpy(p, &le, 8);
    }
}

/* A length-prefixed byte string: u32 length, then the bytes. */
static inline void opal_cursor_put_blob(opal_cursor_t *c, const void *src, uint32_t n)
{
    opal_cursor_put_u32(c, n);
    opal_cursor_put_bytes(c, src, n);
}

/* A string: u16 length (without NUL, so at most 65535), then the bytes
 * without the NUL. NULL is written as the empty string. */
static inline void opal_cursor_put_string(opal_cursor_t *c, const char *s)
{
    size_t n = NULL == s ? 0 : strlen(s);
    if (n > UINT16_MAX) {
        c->failed = true;
        return;
    }
    opal_cursor_put_u16(c, (uint16_t) n);
    opal_cursor_put_bytes(c, s, n);
}

/* ------------------------------------------------------------ reading */

/* Reads n bytes into dst; on failure dst is left untouched. */
static inline void opal_cursor_get_bytes(opal_cursor_t *c, void *dst, size_t n)
{
    const uint8_t *p = opal_cursor_take(c, n);
    if (NULL != p && n > 0) {
        memcpy(dst, p, n);
    }
}

/* Returns a pointer to the next n bytes inside the buffer (no copy), or
 * NULL after failing when fewer are left. */
static inline const void *opal_cursor_get_ptr(opal_cursor_t *c, size_t n)
{
    return opal_cursor_take(c, n);
}

/* The getters return 0 once the cursor failed. */
static inline uint8_t opal_cursor_get_u8(opal_cursor_t *c)
{
    const uint8_t *p = opal_cursor_take(c, 1);
    return NULL == p ? 0 : p[0];
}

static inline uint16_t opal_cursor_get_u16(opal_cursor_t *c)
{
    const uint8_t *p = opal_cursor_take(c, 2);
    uint16_t v = 0;
    if (NULL != p) {
        memcpy(&v, p, 2);
    }
    return OPAL_CURSOR_LE16(v);
}

static inline uint32_t opal_cursor_get_u32(opal_cursor_t *c)
{
    const uint8_t *p = opal_cursor_take(c, 4);
    uint32_t v = 0;
    if (NULL != p) {
        memcpy(&v, p, 4);
    }
    return OPAL_CURSOR_LE32(v);
}

static inline uint64_t opal_cursor_get_u64(opal_cursor_t *c)
{
    const uint8_t *p = opal_cursor_take(c, 8);
    uint64_t v = 0;
    if (NULL != p) {
        memcpy(&v, p, 8);
    }
    return OPAL_CURSOR_LE64(v);
}

/* A blob written by opal_cursor_put_blob: returns a pointer to its bytes
 * inside the buffer and their count in *n, refusing (failing) one longer
 * than max or than what is left. */
static inline const void *opal_cursor_get_blob(opal_cursor_t *c, uint32_t *n, uint32_t max)
{
    uint32_t len = opal_cursor_get_u32(c);
    if (len > max) {
        c->failed = true;
    }
    const void *p = opal_cursor_get_ptr(c, c->failed ? 0 : len);
    *n = c->failed ? 0 : len;
    return c->failed ? NULL : p;
}

/* A string written by opal_cursor_put_string, copied into dst (dst_size
 * bytes, NUL-terminated). Fails for a string that does not fit dst or
 * that holds a NUL byte. */
static inline void opal_cursor_get_string(opal_cursor_t *c, char *dst, size_t dst_size)
{
    uint16_t n = opal_cursor_get_u16(c);
    const uint8_t *p = opal_cursor_take(c, c->failed ? 0 : n);
    if (c->failed || (size_t) n >= dst_size || (n > 0 && NULL != memchr(p, 0, n))) {
        c->failed = true;
        return;
    }
    if (n > 0) {
        memcpy(dst, p, n);
    }
    dst[n] = '\0';
}

#endif /* OPAL_UTIL_OPAL_CURSOR_H */
