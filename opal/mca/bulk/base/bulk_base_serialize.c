/*
 * Serialized bulk handles (docs/na-bulk.md, "Bulk handles on the wire"),
 * written and read through opal_cursor, little-endian:
 *
 *   magic u32 "BLKH", version u8 (1)
 *   access u8 (OPAL_BULK_READ_ONLY / WRITE_ONLY / READ_WRITE)
 *   parts u8: 0x1 inline bytes, 0x2 bound address, 0x4 na memory handles
 *   reserved u8 (0)
 *   instance u64, key u64   the origin's bulk class and the handle there
 *   size u64, count u32, count x u64 segment lengths (adding up to size)
 *   [bound]  context id u8, u32 length + a na address blob
 *   [memory] u32 n (1 or count), n x (u32 length + a na memory handle blob)
 *   [inline] u32 length (= size) + the bytes
 *
 * A reader refuses, naming what was wrong, a blob that is truncated, has
 * bytes left over, another magic or version, unknown parts, lengths that
 * do not add up, or na blobs the na class refuses.
 */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/bulk/base/base.h"
#include "opal/util/opal_cursor.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

#define BULK_BLOB_MAGIC   0x484b4c42u /* "BLKH" as little-endian bytes */
#define BULK_BLOB_VERSION 1u

enum {
    PART_INLINE = 0x1,
    PART_BOUND = 0x2,
    PART_MEMH = 0x4,
    PARTS_ALL = 0x7,
};

/* Whether h goes with its bytes inline under flags. */
static bool wants_inline(const opal_bulk_t *h, unsigned int flags)
{
    if (0 == (flags & OPAL_BULK_EAGER) || OPAL_BULK_READ_ONLY != h->flags) {
        return false;
    }
    return h->local ? h->size <= opal_bulk_base_vars.eager_size : NULL != h->eager;
}

size_t opal_bulk_get_serialize_size(opal_bulk_t *h, unsigned int flags)
{
    if (NULL == h) {
        return 0;
    }
    opal_na_class_t *na = h->bc->na_class;
    size_t n = 4 + 4 + 8 + 8 + 8 + 4 + (size_t) h->count * 8;
    if (NULL != h->addr) {
        n += 1 + 4 + opal_na_addr_get_serialize_size(na, h->addr);
    }
    if (h->mh_count > 0) {
        n += 4;
        for (uint32_t i = 0; i < h->mh_count; ++i) {
            n += 4 + opal_na_mem_handle_get_serialize_size(na, h->mhs[i]);
        }
    }
    if (wants_inline(h, flags)) {
        n += 4 + h->size;
    }
    return n;
}

/* Writes a na blob of n bytes with its u32 length, through write. */
static int put_na_blob(opal_cursor_t *c, size_t n, opal_na_class_t *na, void *obj,
                       int (*write)(opal_na_class_t *, void *, size_t, void *))
{
    if (n > UINT32_MAX) {
        opal_cursor_fail(c);
        return OPAL_ERR_BAD_PARAM;
    }
    opal_cursor_put_u32(c, (uint32_t) n);
    void *at = opal_cursor_take(c, n);
    if (!opal_cursor_ok(c)) {
        return OPAL_ERR_TRUNCATED;
    }
    return write(na, at, n, obj);
}

static int write_addr(opal_na_class_t *na, void *buf, size_t n, void *obj)
{
    return opal_na_addr_serialize(na, buf, n, obj);
}

static int write_mh(opal_na_class_t *na, void *buf, size_t n, void *obj)
{
    return opal_na_mem_handle_serialize(na, buf, n, obj);
}

int opal_bulk_serialize(void *buf, size_t size, unsigned int flags, opal_bulk_t *h)
{
    if (NULL == buf || NULL == h || 0 != (flags & ~(unsigned int) OPAL_BULK_EAGER)) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_na_class_t *na = h->bc->na_class;
    bool inl = wants_inline(h, flags);
    uint8_t parts = (uint8_t) ((inl ? PART_INLINE : 0) | (NULL != h->addr ? PART_BOUND : 0) |
                               (h->mh_count > 0 ? PART_MEMH : 0));
    opal_cursor_t c;
    opal_cursor_init_write(&c, buf, size);
    opal_cursor_put_u32(&c, BULK_BLOB_MAGIC);
    opal_cursor_put_u8(&c, BULK_BLOB_VERSION);
    opal_cursor_put_u8(&c, (uint8_t) h->flags);
    opal_cursor_put_u8(&c, parts);
    opal_cursor_put_u8(&c, 0);
    opal_cursor_put_u64(&c, h->instance);
    opal_cursor_put_u64(&c, h->key);
    opal_cursor_put_u64(&c, h->size);
    opal_cursor_put_u32(&c, h->count);
    for (uint32_t i = 0; i < h->count; ++i) {
        opal_cursor_put_u64(&c, h->segs[i].len);
    }
    int rc = OPAL_SUCCESS;
    if (NULL != h->addr) {
        opal_cursor_put_u8(&c, h->ctx_id);
        rc = put_na_blob(&c, opal_na_addr_get_serialize_size(na, h->addr), na, h->addr, write_addr);
    }
    if (OPAL_SUCCESS == rc && h->mh_count > 0) {
        opal_cursor_put_u32(&c, h->mh_count);
        for (uint32_t i = 0; i < h->mh_count && OPAL_SUCCESS == rc; ++i) {
            rc = put_na_blob(&c, opal_na_mem_handle_get_serialize_size(na, h->mhs[i]), na,
                             h->mhs[i], write_mh);
        }
    }
    if (OPAL_SUCCESS == rc && inl) {
        opal_cursor_put_u32(&c, (uint32_t) h->size);
        uint8_t *at = opal_cursor_take(&c, h->size);
        if (NULL != at) {
            if (h->local) {
                opal_bulk_base_copy_flat(h, 0, at, h->size, false);
            } else {
                memcpy(at, h->eager, h->size);
            }
        }
    }
    if (OPAL_SUCCESS == rc && !opal_cursor_ok(&c)) {
        opal_output(0, "bulk: serialize: %zu bytes are too few for this handle (%zu needed)", size,
                    opal_bulk_get_serialize_size(h, flags));
        rc = OPAL_ERR_TRUNCATED;
    }
    return rc;
}

/* ------------------------------------------------------------ reading */

/* Says what was wrong with a peer's serialized handle. */
static int refuse(const char *what, size_t size)
{
    opal_output(0, "bulk: refusing a serialized handle of %zu bytes: %s", size, what);
    return OPAL_ERR_BAD_PARAM;
}

int opal_bulk_deserialize(opal_bulk_class_t *bc, opal_bulk_t **handle, const void *buf, size_t size)
{
    if (NULL == handle) {
        return OPAL_ERR_BAD_PARAM;
    }
    *handle = NULL;
    if (NULL == bc || (NULL == buf && 0 != size)) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_na_class_t *na = bc->na_class;
    opal_cursor_t c;
    opal_cursor_init_read(&c, buf, size);
    uint32_t magic = opal_cursor_get_u32(&c);
    uint8_t version = opal_cursor_get_u8(&c);
    uint8_t access = opal_cursor_get_u8(&c);
    uint8_t parts = opal_cursor_get_u8(&c);
    uint8_t reserved = opal_cursor_get_u8(&c);
    uint64_t instance = opal_cursor_get_u64(&c);
    uint64_t key = opal_cursor_get_u64(&c);
    uint64_t total = opal_cursor_get_u64(&c);
    uint32_t count = opal_cursor_get_u32(&c);
    if (!opal_cursor_ok(&c)) {
        return refuse("truncated in its header", size);
    }
    if (BULK_BLOB_MAGIC != magic) {
        return refuse("it does not start like one (wrong magic number)", size);
    }
    if (BULK_BLOB_VERSION != version) {
        opal_output(0,
                    "bulk: refusing a serialized handle of format version %u (this build "
                    "reads %u)",
                    version, BULK_BLOB_VERSION);
        return OPAL_ERR_VERSION_MISMATCH;
    }
    if (0 == access || 0 != (access & ~OPAL_BULK_READ_WRITE)) {
        return refuse("its access flags are not read-only, write-only or read-write", size);
    }
    if (0 != (parts & ~PARTS_ALL) || 0 != reserved) {
        return refuse("it has parts this build does not know", size);
    }
    if (total > SIZE_MAX) {
        return refuse("its size does not fit this process's address space", size);
    }
    if (0 == count || count > OPAL_BULK_MAX_SEGMENTS || (size_t) count > opal_cursor_left(&c) / 8) {
        return refuse("its segment count is 0, above the limit, or larger than its bytes", size);
    }
    opal_bulk_t *h = opal_bulk_base_handle_alloc(bc, count);
    if (NULL == h) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    h->local = false;
    h->flags = access;
    h->instance = instance;
    h->key = key;
    int rc = OPAL_SUCCESS;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < count; ++i) {
        uint64_t len = opal_cursor_get_u64(&c);
        if (len > total - sum) {
            rc = refuse("its segment lengths add up past its size", size);
            goto out;
        }
        sum += len;
        h->segs[i].base = NULL;
        h->segs[i].len = (size_t) len;
    }
    if (sum != total) {
        rc = refuse("its segment lengths do not add up to its size", size);
        goto out;
    }
    h->size = (size_t) total;
    if (0 != (parts & PART_BOUND)) {
        h->ctx_id = opal_cursor_get_u8(&c);
        uint32_t n = 0;
        const void *blob = opal_cursor_get_blob(&c, &n, UINT32_MAX);
        if (!opal_cursor_ok(&c)) {
            rc = refuse("truncated in its bound address", size);
            goto out;
        }
        rc = opal_na_addr_deserialize(na, &h->addr, blob, n);
        if (OPAL_SUCCESS != rc) {
            opal_output(0, "bulk: refusing a serialized handle: its bound address is not one "
                           "of this na class");
            goto out;
        }
    }
    if (0 != (parts & PART_MEMH)) {
        uint32_t n = opal_cursor_get_u32(&c);
        if (!opal_cursor_ok(&c) || (1 != n && count != n)) {
            rc = refuse("its number of na memory handles is neither 1 nor its segment count", size);
            goto out;
        }
        h->mhs = calloc(n, sizeof(*h->mhs));
        if (NULL == h->mhs) {
            rc = OPAL_ERR_OUT_OF_RESOURCE;
            goto out;
        }
        h->mh_count = n;
        for (uint32_t i = 0; i < n; ++i) {
            uint32_t len = 0;
            const void *blob = opal_cursor_get_blob(&c, &len, UINT32_MAX);
            if (!opal_cursor_ok(&c)) {
                rc = refuse("truncated in its na memory handles", size);
                goto out;
            }
            rc = opal_na_mem_handle_deserialize(na, &h->mhs[i], blob, len);
            if (OPAL_SUCCESS != rc) {
                opal_output(0,
                            "bulk: refusing a serialized handle: its na memory handle %u is "
                            "not one of this na class",
                            i);
                goto out;
            }
            size_t covers = opal_na_mem_handle_get_size(na, h->mhs[i]);
            size_t expect = 1 == n ? h->size : h->segs[i].len;
            if (covers != expect) {
                rc = refuse("a na memory handle does not cover what its segments say", size);
                goto out;
            }
        }
    }
    if (0 != (parts & PART_INLINE)) {
        uint32_t n = 0;
        const void *bytes = opal_cursor_get_blob(&c, &n, UINT32_MAX);
        if (!opal_cursor_ok(&c) || n != h->size) {
            rc = refuse("its inline bytes are truncated or not as many as its size", size);
            goto out;
        }
        if (OPAL_BULK_READ_ONLY != access) {
            rc = refuse("it carries inline bytes but is not read-only", size);
            goto out;
        }
        h->eager = malloc(0 == n ? 1 : n);
        if (NULL == h->eager) {
            rc = OPAL_ERR_OUT_OF_RESOURCE;
            goto out;
        }
        if (n > 0) {
            memcpy(h->eager, bytes, n);
        }
    }
    if (!opal_cursor_done(&c)) {
        rc = refuse("it has bytes after its last part", size);
        goto out;
    }
out:
    if (OPAL_SUCCESS != rc) {
        opal_bulk_base_handle_discard(h);
        return rc;
    }
    *handle = h;
    return OPAL_SUCCESS;
}
