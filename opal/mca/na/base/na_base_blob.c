/*
 * Addresses and memory handles: the wrappers, and the header the base
 * puts in front of every serialized one so that a blob from another
 * component or format version is refused by name before a component
 * reads it. Layout (little-endian, through opal_cursor):
 *
 *   magic u32 ("NAAD" address, "NAMH" memory handle)
 *   version u8 (OPAL_NA_BLOB_VERSION)
 *   component name: u16 length + bytes ("btl", "ofi")
 *   component bytes: u32 length + bytes (the component's own format)
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/na/base/base.h"
#include "opal/mca/na/base/na_base_internal.h"
#include "opal/util/opal_cursor.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

#define OPAL_NA_BLOB_MAGIC_ADDR 0x4441414eu /* "NAAD" as little-endian bytes */
#define OPAL_NA_BLOB_MAGIC_MEMH 0x484d414eu /* "NAMH" */
#define OPAL_NA_BLOB_VERSION    1u
/* Component names are short; a longer one in a blob is garbage. */
#define OPAL_NA_BLOB_MAX_NAME 32u

static size_t blob_header_size(const opal_na_class_t *cls)
{
    return 4 + 1 + 2 + strlen(cls->ops->name) + 4;
}

/* Writes the header for n component bytes; returns where they go. */
static void *blob_write_header(opal_na_class_t *cls, void *buf, size_t size, uint32_t magic,
                               size_t n)
{
    opal_cursor_t c;
    opal_cursor_init_write(&c, buf, size);
    opal_cursor_put_u32(&c, magic);
    opal_cursor_put_u8(&c, OPAL_NA_BLOB_VERSION);
    opal_cursor_put_string(&c, cls->ops->name);
    opal_cursor_put_u32(&c, (uint32_t) n);
    void *body = opal_cursor_take(&c, n);
    return opal_cursor_ok(&c) ? body : NULL;
}

/* Checks the header of a blob of what ("address", "memory handle") and
 * returns its component bytes in *body / *n. */
static int blob_read_header(opal_na_class_t *cls, const void *buf, size_t size, uint32_t magic,
                            const char *what, const void **body, size_t *n)
{
    opal_cursor_t c;
    opal_cursor_init_read(&c, buf, size);
    uint32_t got = opal_cursor_get_u32(&c);
    if (!opal_cursor_ok(&c) || got != magic) {
        opal_output(0, "na: %s: a serialized %s of %zu bytes does not start like one (%s)",
                    cls->protocol, what, size,
                    opal_cursor_ok(&c) ? "wrong magic number" : "too short");
        return OPAL_ERR_BAD_PARAM;
    }
    uint8_t version = opal_cursor_get_u8(&c);
    if (opal_cursor_ok(&c) && OPAL_NA_BLOB_VERSION != version) {
        opal_output(0, "na: %s: a serialized %s of format version %u (this build reads %u)",
                    cls->protocol, what, version, OPAL_NA_BLOB_VERSION);
        return OPAL_ERR_VERSION_MISMATCH;
    }
    char name[OPAL_NA_BLOB_MAX_NAME];
    opal_cursor_get_string(&c, name, sizeof(name));
    if (opal_cursor_ok(&c) && 0 != strcmp(name, cls->ops->name)) {
        opal_output(0,
                    "na: %s: a serialized %s of component \"%s\" given to a class of "
                    "component %s",
                    cls->protocol, what, name, cls->ops->name);
        return OPAL_ERR_BAD_PARAM;
    }
    uint32_t len = 0;
    const void *bytes = opal_cursor_get_blob(&c, &len, UINT32_MAX);
    if (!opal_cursor_done(&c)) {
        opal_output(0, "na: %s: a serialized %s of %zu bytes is %s", cls->protocol, what, size,
                    opal_cursor_ok(&c) ? "longer than its header says" : "truncated");
        return OPAL_ERR_BAD_PARAM;
    }
    *body = bytes;
    *n = len;
    return OPAL_SUCCESS;
}

/* ------------------------------------------------------------- addresses */

int opal_na_addr_lookup(opal_na_class_t *cls, const char *uri, opal_na_addr_t **addr)
{
    if (NULL == cls || NULL == addr) {
        return OPAL_ERR_BAD_PARAM;
    }
    *addr = NULL;
    size_t plen = strlen(cls->protocol);
    if (NULL == uri || 0 != strncmp(uri, cls->protocol, plen) ||
        0 != strncmp(uri + plen, "://", 3)) {
        opal_output(0, "na: cannot look up \"%s\" with a %s class: its URIs start with \"%s://\"",
                    NULL == uri ? "(null)" : uri, cls->protocol, cls->protocol);
        return OPAL_ERR_BAD_PARAM;
    }
    return cls->ops->addr_lookup(cls, uri + plen + 3, addr);
}

int opal_na_addr_self(opal_na_class_t *cls, opal_na_addr_t **addr)
{
    if (NULL == cls || NULL == addr) {
        return OPAL_ERR_BAD_PARAM;
    }
    return cls->ops->addr_self(cls, addr);
}

int opal_na_addr_dup(opal_na_class_t *cls, opal_na_addr_t *addr, opal_na_addr_t **new_addr)
{
    if (NULL == cls || NULL == addr || NULL == new_addr) {
        return OPAL_ERR_BAD_PARAM;
    }
    return cls->ops->addr_dup(cls, addr, new_addr);
}

void opal_na_addr_free(opal_na_class_t *cls, opal_na_addr_t *addr)
{
    if (NULL != cls && NULL != addr) {
        cls->ops->addr_free(cls, addr);
    }
}

bool opal_na_addr_cmp(opal_na_class_t *cls, opal_na_addr_t *a, opal_na_addr_t *b)
{
    if (a == b) {
        return true;
    }
    if (NULL == cls || NULL == a || NULL == b) {
        return false;
    }
    return cls->ops->addr_cmp(cls, a, b);
}

bool opal_na_addr_is_self(opal_na_class_t *cls, opal_na_addr_t *addr)
{
    return NULL != cls && NULL != addr && cls->ops->addr_is_self(cls, addr);
}

int opal_na_addr_to_string(opal_na_class_t *cls, char *buf, size_t *size, opal_na_addr_t *addr)
{
    if (NULL == cls || NULL == size || NULL == addr) {
        return OPAL_ERR_BAD_PARAM;
    }
    size_t plen = strlen(cls->protocol) + 3;
    size_t avail = NULL == buf || *size < plen ? 0 : *size - plen;
    size_t need = avail;
    int rc = cls->ops->addr_to_string(cls, 0 == avail ? NULL : buf + plen, &need, addr);
    if (OPAL_SUCCESS != rc && OPAL_ERR_TRUNCATED != rc) {
        return rc;
    }
    if (OPAL_ERR_TRUNCATED == rc || 0 == avail) {
        *size = plen + need;
        return OPAL_ERR_TRUNCATED;
    }
    memcpy(buf, cls->protocol, plen - 3);
    memcpy(buf + plen - 3, "://", 3);
    *size = plen + need;
    return OPAL_SUCCESS;
}

const char *opal_na_addr_name(opal_na_class_t *cls, opal_na_addr_t *addr, char *buf, size_t size,
                              const char *fallback)
{
    size_t need = size;
    int rc = NULL == cls || NULL == addr ? OPAL_ERR_BAD_PARAM
                                         : opal_na_addr_to_string(cls, buf, &need, addr);
    if (OPAL_ERR_TRUNCATED == rc && need > size) {
        char *full = malloc(need);
        if (NULL != full && OPAL_SUCCESS == opal_na_addr_to_string(cls, full, &need, addr)) {
            snprintf(buf, size, "%s", full);
            if (size > 4) {
                memcpy(buf + size - 4, "...", 4);
            }
            free(full);
            return buf;
        }
        free(full);
    }
    if (OPAL_SUCCESS != rc) {
        snprintf(buf, size, "%s", fallback);
    }
    return buf;
}

size_t opal_na_addr_get_serialize_size(opal_na_class_t *cls, opal_na_addr_t *addr)
{
    return blob_header_size(cls) + cls->ops->addr_get_serialize_size(cls, addr);
}

int opal_na_addr_serialize(opal_na_class_t *cls, void *buf, size_t size, opal_na_addr_t *addr)
{
    if (NULL == cls || NULL == buf || NULL == addr) {
        return OPAL_ERR_BAD_PARAM;
    }
    size_t n = cls->ops->addr_get_serialize_size(cls, addr);
    void *body = blob_write_header(cls, buf, size, OPAL_NA_BLOB_MAGIC_ADDR, n);
    if (NULL == body) {
        return OPAL_ERR_TRUNCATED;
    }
    return cls->ops->addr_serialize(cls, body, n, addr);
}

int opal_na_addr_deserialize(opal_na_class_t *cls, opal_na_addr_t **addr, const void *buf,
                             size_t size)
{
    if (NULL == cls || NULL == addr || (NULL == buf && 0 != size)) {
        return OPAL_ERR_BAD_PARAM;
    }
    *addr = NULL;
    const void *body;
    size_t n;
    int rc = blob_read_header(cls, buf, size, OPAL_NA_BLOB_MAGIC_ADDR, "address", &body, &n);
    return OPAL_SUCCESS != rc ? rc : cls->ops->addr_deserialize(cls, addr, body, n);
}

/* -------------------------------------------------------- memory handles */

int opal_na_mem_handle_create(opal_na_class_t *cls, void *buf, size_t size, unsigned long flags,
                              opal_na_mem_handle_t **mh)
{
    if (NULL == cls || NULL == mh || (NULL == buf && 0 != size)) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (0 == flags || 0 != (flags & ~(unsigned long) OPAL_NA_MEM_READ_WRITE)) {
        opal_output(0,
                    "na: memory handle access flags 0x%lx are not OPAL_NA_MEM_READ_ONLY, "
                    "WRITE_ONLY or READ_WRITE",
                    flags);
        return OPAL_ERR_BAD_PARAM;
    }
    return cls->ops->mem_handle_create(cls, buf, size, flags, mh);
}

size_t opal_na_mem_handle_get_max_segments(const opal_na_class_t *cls)
{
    return NULL == cls->ops->mem_handle_get_max_segments
               ? 1
               : cls->ops->mem_handle_get_max_segments(cls);
}

int opal_na_mem_handle_create_segments(opal_na_class_t *cls, const opal_na_segment_t *segments,
                                       size_t count, unsigned long flags, opal_na_mem_handle_t **mh)
{
    if (NULL == cls || NULL == mh || NULL == segments || 0 == count) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (1 == count) {
        return opal_na_mem_handle_create(cls, segments[0].base, segments[0].len, flags, mh);
    }
    size_t max = opal_na_mem_handle_get_max_segments(cls);
    if (NULL == cls->ops->mem_handle_create_segments || count > max) {
        opal_output(0, "na: a memory handle of %zu segments is not supported by %s (at most %zu)",
                    count, cls->ops->name, max);
        return OPAL_ERR_NOT_SUPPORTED;
    }
    if (0 == flags || 0 != (flags & ~(unsigned long) OPAL_NA_MEM_READ_WRITE)) {
        return OPAL_ERR_BAD_PARAM;
    }
    return cls->ops->mem_handle_create_segments(cls, segments, count, flags, mh);
}

void opal_na_mem_handle_free(opal_na_class_t *cls, opal_na_mem_handle_t *mh)
{
    if (NULL != cls && NULL != mh) {
        cls->ops->mem_handle_free(cls, mh);
    }
}

size_t opal_na_mem_handle_get_size(opal_na_class_t *cls, opal_na_mem_handle_t *mh)
{
    return NULL == mh ? 0 : cls->ops->mem_handle_get_size(cls, mh);
}

int opal_na_mem_register(opal_na_class_t *cls, opal_na_mem_handle_t *mh)
{
    if (NULL == cls || NULL == mh) {
        return OPAL_ERR_BAD_PARAM;
    }
    return NULL == cls->ops->mem_register ? OPAL_SUCCESS : cls->ops->mem_register(cls, mh);
}

int opal_na_mem_deregister(opal_na_class_t *cls, opal_na_mem_handle_t *mh)
{
    if (NULL == cls || NULL == mh) {
        return OPAL_ERR_BAD_PARAM;
    }
    return NULL == cls->ops->mem_deregister ? OPAL_SUCCESS : cls->ops->mem_deregister(cls, mh);
}

size_t opal_na_mem_handle_get_serialize_size(opal_na_class_t *cls, opal_na_mem_handle_t *mh)
{
    return blob_header_size(cls) + cls->ops->mem_handle_get_serialize_size(cls, mh);
}

int opal_na_mem_handle_serialize(opal_na_class_t *cls, void *buf, size_t size,
                                 opal_na_mem_handle_t *mh)
{
    if (NULL == cls || NULL == buf || NULL == mh) {
        return OPAL_ERR_BAD_PARAM;
    }
    size_t n = cls->ops->mem_handle_get_serialize_size(cls, mh);
    void *body = blob_write_header(cls, buf, size, OPAL_NA_BLOB_MAGIC_MEMH, n);
    if (NULL == body) {
        return OPAL_ERR_TRUNCATED;
    }
    return cls->ops->mem_handle_serialize(cls, body, n, mh);
}

int opal_na_mem_handle_deserialize(opal_na_class_t *cls, opal_na_mem_handle_t **mh, const void *buf,
                                   size_t size)
{
    if (NULL == cls || NULL == mh || (NULL == buf && 0 != size)) {
        return OPAL_ERR_BAD_PARAM;
    }
    *mh = NULL;
    const void *body;
    size_t n;
    int rc = blob_read_header(cls, buf, size, OPAL_NA_BLOB_MAGIC_MEMH, "memory handle", &body, &n);
    return OPAL_SUCCESS != rc ? rc : cls->ops->mem_handle_deserialize(cls, mh, body, n);
}
