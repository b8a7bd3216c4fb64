/*
 * The rpc wire header's encoder and strict decoder.
 */
#include "opal/opal_config.h"

#include <string.h>

#include "opal/mca/rpc/base/rpc_base_header.h"
#include "opal/util/opal_cursor.h"
#include "opal/util/opal_error.h"

/* The fields' offsets (docs/rpc.md, "Wire header"). */
enum {
    HDR_MAGIC = 0,
    HDR_VERSION = 1,
    HDR_TYPE = 2,
    HDR_FLAGS = 3,
    HDR_OPCODE = 4,
    HDR_ID = 8,
    HDR_SRC_CTX = 16,
    HDR_DST_CTX = 17,
    HDR_STATUS = 18,
    HDR_PAYLOAD_LEN = 22,
    HDR_HLC = 26,
};
_Static_assert(HDR_HLC + 8 == OPAL_RPC_HDR_SIZE, "the header's layout and its size");

static inline void put32(uint8_t *p, uint32_t v)
{
    v = OPAL_CURSOR_LE32(v);
    memcpy(p, &v, 4);
}

static inline uint32_t get32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return OPAL_CURSOR_LE32(v);
}

/* Fixed offsets, one size check: every message passes here twice (a
 * field-by-field cursor cost about 150 instructions a header). */
int opal_rpc_hdr_encode(const opal_rpc_hdr_t *hdr, void *buf, size_t size)
{
    if (NULL == buf || size < OPAL_RPC_HDR_SIZE) {
        return OPAL_ERR_BAD_PARAM;
    }
    uint8_t *p = buf;
    p[HDR_MAGIC] = OPAL_RPC_HDR_MAGIC;
    p[HDR_VERSION] = OPAL_RPC_HDR_WIRE_VERSION;
    p[HDR_TYPE] = hdr->type;
    p[HDR_FLAGS] = hdr->flags;
    put32(p + HDR_OPCODE, hdr->opcode);
    uint64_t id = OPAL_CURSOR_LE64(hdr->id);
    memcpy(p + HDR_ID, &id, 8);
    p[HDR_SRC_CTX] = hdr->src_ctx;
    p[HDR_DST_CTX] = hdr->dst_ctx;
    put32(p + HDR_STATUS, (uint32_t) hdr->status);
    put32(p + HDR_PAYLOAD_LEN, hdr->payload_len);
    uint64_t hlc = OPAL_CURSOR_LE64(hdr->hlc);
    memcpy(p + HDR_HLC, &hlc, 8);
    return OPAL_SUCCESS;
}

int opal_rpc_hdr_decode(opal_rpc_hdr_t *hdr, const void *buf, size_t len, const char **why)
{
    if (NULL == buf || len < OPAL_RPC_HDR_SIZE) {
        *why = "message shorter than the rpc header";
        return OPAL_ERR_PROTOCOL;
    }
    const uint8_t *p = buf;
    uint8_t magic = p[HDR_MAGIC];
    uint8_t version = p[HDR_VERSION];
    hdr->type = p[HDR_TYPE];
    hdr->flags = p[HDR_FLAGS];
    hdr->opcode = get32(p + HDR_OPCODE);
    uint64_t id;
    memcpy(&id, p + HDR_ID, 8);
    hdr->id = OPAL_CURSOR_LE64(id);
    hdr->src_ctx = p[HDR_SRC_CTX];
    hdr->dst_ctx = p[HDR_DST_CTX];
    hdr->status = (int32_t) get32(p + HDR_STATUS);
    hdr->payload_len = get32(p + HDR_PAYLOAD_LEN);
    uint64_t hlc;
    memcpy(&hlc, p + HDR_HLC, 8);
    hdr->hlc = OPAL_CURSOR_LE64(hlc);
    if (OPAL_RPC_HDR_MAGIC != magic) {
        *why = "not an rpc message (bad magic)";
        return OPAL_ERR_PROTOCOL;
    }
    if (OPAL_RPC_HDR_WIRE_VERSION != version) {
        *why = "rpc wire version not understood";
        return OPAL_ERR_PROTOCOL;
    }
    if (OPAL_RPC_HDR_REQUEST != hdr->type && OPAL_RPC_HDR_REPLY != hdr->type) {
        *why = "unknown rpc message type";
        return OPAL_ERR_PROTOCOL;
    }
    if (0 != (hdr->flags & ~(unsigned) OPAL_RPC_HDR_F_ALL)) {
        *why = "unknown rpc header flags";
        return OPAL_ERR_PROTOCOL;
    }
    if (OPAL_RPC_HDR_REQUEST == hdr->type &&
        (0 != hdr->status || 0 != (hdr->flags & OPAL_RPC_HDR_F_ERROR))) {
        *why = "a request carrying a status";
        return OPAL_ERR_PROTOCOL;
    }
    if (OPAL_RPC_HDR_REPLY == hdr->type && 0 != (hdr->flags & OPAL_RPC_HDR_F_ONEWAY)) {
        *why = "a reply marked one-way";
        return OPAL_ERR_PROTOCOL;
    }
    if (0 != (hdr->flags & OPAL_RPC_HDR_F_ERROR) && hdr->status >= 0) {
        *why = "an error reply without an error status";
        return OPAL_ERR_PROTOCOL;
    }
    if ((size_t) hdr->payload_len != len - OPAL_RPC_HDR_SIZE) {
        *why = "payload length disagrees with the message size";
        return OPAL_ERR_PROTOCOL;
    }
    return OPAL_SUCCESS;
}

int opal_rpc_bulk_desc_decode(opal_rpc_bulk_desc_t *desc, const void *payload, size_t len)
{
    opal_cursor_t c;
    opal_cursor_init_read(&c, payload, len);
    desc->size = opal_cursor_get_u64(&c);
    desc->seal = opal_cursor_get_u64(&c);
    desc->handle_len = 0;
    desc->handle = opal_cursor_get_blob(&c, &desc->handle_len, UINT32_MAX);
    return opal_cursor_done(&c) ? OPAL_SUCCESS : OPAL_ERR_PROTOCOL;
}
