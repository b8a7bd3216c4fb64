/*
 * bulk/copy's two messages, read and written through opal_cursor and free
 * of component state, so that the tests and the fuzz target run them
 * alone (docs/na-bulk.md, "Copy engine messages", has the layouts).
 *
 *   request  what a requester sends to the origin's bulk service for one
 *            fragment: which handle, where, how much, and where to answer
 *   reply    the service's answer: a status, and a pull's bytes
 *
 * Both arrive from other processes: the decoders check every field and
 * length, refuse trailing bytes, and say what was wrong in why (a buffer
 * of BULK_COPY_WHY_MAX bytes).
 */
#ifndef OPAL_MCA_BULK_COPY_BULK_COPY_WIRE_H
#define OPAL_MCA_BULK_COPY_BULK_COPY_WIRE_H

#include "opal/opal_config.h"

#include <stddef.h>
#include <stdint.h>

#define BULK_COPY_REQ_MAGIC   0x51434b42u /* "BKCQ" as little-endian bytes */
#define BULK_COPY_REPLY_MAGIC 0x52434b42u /* "BKCR" */
#define BULK_COPY_VERSION     1u
/* magic u32, version u8, kind u8, reply context u8, reserved u8, reply
 * tag u32, instance u64, key u64, offset u64, length u64. */
#define BULK_COPY_REQ_HDR (4 + 4 + 4 + 8 + 8 + 8 + 8)
/* magic u32, status i32. */
#define BULK_COPY_REPLY_HDR 8
#define BULK_COPY_KIND_PULL 1u
#define BULK_COPY_KIND_PUSH 2u

#define BULK_COPY_WHY_MAX 160

typedef struct bulk_copy_req_t {
    uint8_t kind;      /* BULK_COPY_KIND_PULL or _PUSH */
    uint8_t reply_ctx; /* the requester's context for the answer */
    uint32_t tag;      /* ... and its tag */
    uint64_t instance; /* the origin's bulk class */
    uint64_t key;      /* the handle there */
    uint64_t offset;
    uint64_t length;
    const uint8_t *data; /* decoded push: the length bytes that follow */
} bulk_copy_req_t;

/* What a service accepts: the largest reply tag and fragment payloads. */
typedef struct bulk_copy_limits_t {
    uint32_t max_tag;
    size_t pull_frag;
    size_t push_frag;
} bulk_copy_limits_t;

/* Writes req's header into out (BULK_COPY_REQ_HDR bytes); a push's bytes
 * go right after it, written by the caller. */
void bulk_copy_req_encode(const bulk_copy_req_t *req, uint8_t *out);
/* Reads the request in the size bytes of buf. OPAL_ERR_BAD_PARAM (why
 * says what) for a short message, another magic or version, an unknown
 * kind, a tag or length past the limits, a pull with bytes after its
 * header or a push whose bytes are not its length. */
int bulk_copy_req_decode(const void *buf, size_t size, const bulk_copy_limits_t *limits,
                         bulk_copy_req_t *req, char *why);

/* Writes a reply header with status into out (BULK_COPY_REPLY_HDR
 * bytes); a pull's bytes follow it. */
void bulk_copy_reply_encode(int32_t status, uint8_t *out);
/* Reads the reply in the size bytes of buf, to a request that expects
 * want bytes back on success (a pull's length, 0 for a push). Sets
 * *status to what the service said, OPAL_SUCCESS or an error code (the
 * bytes, on success, start at BULK_COPY_REPLY_HDR). OPAL_ERR_BAD_PARAM
 * (why says what) for a short reply, another magic, a status that is no
 * error code, a success whose bytes are not want or a refusal with bytes
 * after it. */
int bulk_copy_reply_decode(const void *buf, size_t size, size_t want, int32_t *status, char *why);

#endif /* OPAL_MCA_BULK_COPY_BULK_COPY_WIRE_H */
