/*
 * The rpc wire header's encoder and strict decoder.
 */
#include "opal/opal_config.h"

#include "opal/mca/rpc/base/rpc_base_header.h"
#include "opal/util/opal_cursor.h"
#include "opal/util/opal_error.h"

int opal_rpc_hdr_encode(const opal_rpc_hdr_t *hdr, void *buf, size_t size)
{
    opal_cursor_t c;
    opal_cursor_init_write(&c, buf, size);
    opal_cursor_put_u8(&c, OPAL_RPC_HDR_MAGIC);
    opal_cursor_put_u8(&c, OPAL_RPC_HDR_WIRE_VERSION);
    opal_cursor_put_u8(&c, hdr->type);
    opal_cursor_put_u8(&c, hdr->flags);
    opal_cursor_put_u32(&c, hdr->opcode);
    opal_cursor_put_u64(&c, hdr->id);
    opal_cursor_put_u8(&c, hdr->src_ctx);
    opal_cursor_put_u8(&c, hdr->dst_ctx);
    opal_cursor_put_u32(&c, (uint32_t) hdr->status);
    opal_cursor_put_u32(&c, hdr->payload_len);
    return opal_cursor_ok(&c) ? OPAL_SUCCESS : OPAL_ERR_BAD_PARAM;
}

int opal_rpc_hdr_decode(opal_rpc_hdr_t *hdr, const void *buf, size_t len, const char **why)
{
    opal_cursor_t c;
    opal_cursor_init_read(&c, buf, len);
    uint8_t magic = opal_cursor_get_u8(&c);
    uint8_t version = opal_cursor_get_u8(&c);
    hdr->type = opal_cursor_get_u8(&c);
    hdr->flags = opal_cursor_get_u8(&c);
    hdr->opcode = opal_cursor_get_u32(&c);
    hdr->id = opal_cursor_get_u64(&c);
    hdr->src_ctx = opal_cursor_get_u8(&c);
    hdr->dst_ctx = opal_cursor_get_u8(&c);
    hdr->status = (int32_t) opal_cursor_get_u32(&c);
    hdr->payload_len = opal_cursor_get_u32(&c);
    if (!opal_cursor_ok(&c)) {
        *why = "message shorter than the rpc header";
        return OPAL_ERR_PROTOCOL;
    }
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
    if ((size_t) hdr->payload_len != opal_cursor_left(&c)) {
        *why = "payload length disagrees with the message size";
        return OPAL_ERR_PROTOCOL;
    }
    return OPAL_SUCCESS;
}
