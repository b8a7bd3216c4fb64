/*
 * bulk/copy's request and reply (bulk_copy_wire.h): pure functions over
 * bytes, every read through opal_cursor.
 */
#include "opal/opal_config.h"

#include <stdbool.h>

#include "opal/mca/bulk/copy/bulk_copy_wire.h"
#include "opal/util/opal_cursor.h"
#include "opal/util/opal_error.h"

/* Fills why (when not NULL) and returns OPAL_ERR_BAD_PARAM. */
#define refuse(why, ...) opal_error_why(OPAL_ERR_BAD_PARAM, (why), BULK_COPY_WHY_MAX, __VA_ARGS__)

void bulk_copy_req_encode(const bulk_copy_req_t *req, uint8_t *out)
{
    opal_cursor_t c;
    opal_cursor_init_write(&c, out, BULK_COPY_REQ_HDR);
    opal_cursor_put_u32(&c, BULK_COPY_REQ_MAGIC);
    opal_cursor_put_u8(&c, BULK_COPY_VERSION);
    opal_cursor_put_u8(&c, req->kind);
    opal_cursor_put_u8(&c, req->reply_ctx);
    opal_cursor_put_u8(&c, 0);
    opal_cursor_put_u32(&c, req->tag);
    opal_cursor_put_u64(&c, req->instance);
    opal_cursor_put_u64(&c, req->key);
    opal_cursor_put_u64(&c, req->offset);
    opal_cursor_put_u64(&c, req->length);
}

int bulk_copy_req_decode(const void *buf, size_t size, const bulk_copy_limits_t *limits,
                         bulk_copy_req_t *req, char *why)
{
    opal_cursor_t c;
    opal_cursor_init_read(&c, buf, size);
    uint32_t magic = opal_cursor_get_u32(&c);
    uint8_t version = opal_cursor_get_u8(&c);
    req->kind = opal_cursor_get_u8(&c);
    req->reply_ctx = opal_cursor_get_u8(&c);
    uint8_t reserved = opal_cursor_get_u8(&c);
    req->tag = opal_cursor_get_u32(&c);
    req->instance = opal_cursor_get_u64(&c);
    req->key = opal_cursor_get_u64(&c);
    req->offset = opal_cursor_get_u64(&c);
    req->length = opal_cursor_get_u64(&c);
    req->data = NULL;
    if (!opal_cursor_ok(&c)) {
        return refuse(why, "a request of %zu bytes is shorter than the %d-byte header", size,
                      BULK_COPY_REQ_HDR);
    }
    if (BULK_COPY_REQ_MAGIC != magic) {
        return refuse(why, "magic 0x%08x is not a copy request's (0x%08x)", magic,
                      BULK_COPY_REQ_MAGIC);
    }
    if (BULK_COPY_VERSION != version) {
        return refuse(why, "version %u, this build speaks %u", version, BULK_COPY_VERSION);
    }
    if (BULK_COPY_KIND_PULL != req->kind && BULK_COPY_KIND_PUSH != req->kind) {
        return refuse(why, "kind %u is neither pull (%u) nor push (%u)", req->kind,
                      BULK_COPY_KIND_PULL, BULK_COPY_KIND_PUSH);
    }
    if (0 != reserved) {
        return refuse(why, "reserved byte 0x%02x is not 0", reserved);
    }
    if (req->tag > limits->max_tag) {
        return refuse(why, "reply tag %u is past the na class's largest (%u)", req->tag,
                      limits->max_tag);
    }
    bool pull = BULK_COPY_KIND_PULL == req->kind;
    size_t frag = pull ? limits->pull_frag : limits->push_frag;
    if (req->length > frag) {
        return refuse(why, "a %s of %llu bytes is larger than a fragment (%zu)",
                      pull ? "pull" : "push", (unsigned long long) req->length, frag);
    }
    size_t left = opal_cursor_left(&c);
    if (pull && 0 != left) {
        return refuse(why, "a pull request with %zu bytes after its header", left);
    }
    if (!pull && left != req->length) {
        return refuse(why, "a push of %llu bytes carries %zu", (unsigned long long) req->length,
                      left);
    }
    if (!pull) {
        req->data = opal_cursor_get_ptr(&c, left);
    }
    return OPAL_SUCCESS;
}

void bulk_copy_reply_encode(int32_t status, uint8_t *out)
{
    opal_cursor_t c;
    opal_cursor_init_write(&c, out, BULK_COPY_REPLY_HDR);
    opal_cursor_put_u32(&c, BULK_COPY_REPLY_MAGIC);
    opal_cursor_put_u32(&c, (uint32_t) status);
}

int bulk_copy_reply_decode(const void *buf, size_t size, size_t want, int32_t *status, char *why)
{
    opal_cursor_t c;
    opal_cursor_init_read(&c, buf, size);
    uint32_t magic = opal_cursor_get_u32(&c);
    *status = (int32_t) opal_cursor_get_u32(&c);
    if (!opal_cursor_ok(&c)) {
        return refuse(why, "a reply of %zu bytes is shorter than the %d-byte header", size,
                      BULK_COPY_REPLY_HDR);
    }
    if (BULK_COPY_REPLY_MAGIC != magic) {
        return refuse(why, "magic 0x%08x is not a copy reply's (0x%08x)", magic,
                      BULK_COPY_REPLY_MAGIC);
    }
    size_t left = opal_cursor_left(&c);
    if (OPAL_SUCCESS == *status) {
        if (left != want) {
            return refuse(why, "a reply with %zu bytes, %zu expected", left, want);
        }
        return OPAL_SUCCESS;
    }
    if (*status > 0 || NULL == opal_strerror_name(*status)) {
        return refuse(why, "status %d is not an error code", *status);
    }
    if (0 != left) {
        return refuse(why, "a refusal (%s) with %zu bytes after it", opal_strerror_name(*status),
                      left);
    }
    return OPAL_SUCCESS;
}
