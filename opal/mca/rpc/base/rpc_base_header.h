/*
 * The rpc wire header, in front of every request and reply (layout in
 * docs/rpc.md). Written and read through opal_cursor; decoding is strict:
 * a wrong magic or wire version, unknown type or flag bits, or a payload
 * length that disagrees with the bytes received are refused.
 */
#ifndef OPAL_MCA_RPC_BASE_RPC_BASE_HEADER_H
#define OPAL_MCA_RPC_BASE_RPC_BASE_HEADER_H

#include "opal/opal_config.h"

#include <stddef.h>
#include <stdint.h>

#define OPAL_RPC_HDR_MAGIC        0xc7u
/* 2: the sender's hybrid logical clock (rpc_hlc.h) after the length. */
#define OPAL_RPC_HDR_WIRE_VERSION 2u
/* Encoded size: magic, version, type, flags, opcode, id, src ctx, dst ctx,
 * status, payload length, hlc. */
#define OPAL_RPC_HDR_SIZE (1 + 1 + 1 + 1 + 4 + 8 + 1 + 1 + 4 + 4 + 8)

typedef enum {
    OPAL_RPC_HDR_REQUEST = 1,
    OPAL_RPC_HDR_REPLY = 2,
} opal_rpc_hdr_type_t;

enum {
    /* A request that wants no reply. */
    OPAL_RPC_HDR_F_ONEWAY = 0x1,
    /* A reply carrying an error: status < 0, payload a reason string. */
    OPAL_RPC_HDR_F_ERROR = 0x2,
    /* The payload is a bulk descriptor of the real arguments: the input
     * of a request, the output of a reply. */
    OPAL_RPC_HDR_F_BULK = 0x4,
    OPAL_RPC_HDR_F_ALL = 0x7,
};

typedef struct opal_rpc_hdr_t {
    uint8_t type;  /* opal_rpc_hdr_type_t */
    uint8_t flags; /* OPAL_RPC_HDR_F_* */
    uint32_t opcode;
    /* The request's id at its origin context; replies carry it back. */
    uint64_t id;
    uint8_t src_ctx;
    uint8_t dst_ctx;
    /* Replies: OPAL_SUCCESS or the error; requests: 0. */
    int32_t status;
    uint32_t payload_len;
    /* The sender's clock when it built the message (opal_rpc_hlc_get). */
    uint64_t hlc;
} opal_rpc_hdr_t;

/* Writes hdr into buf (at least OPAL_RPC_HDR_SIZE bytes): OPAL_SUCCESS or
 * OPAL_ERR_BAD_PARAM when it does not fit. */
OPAL_DECLSPEC int opal_rpc_hdr_encode(const opal_rpc_hdr_t *hdr, void *buf, size_t size);

/* Reads the header of a message of len bytes; the payload follows it and
 * must be exactly payload_len bytes. OPAL_ERR_PROTOCOL with *why set to
 * what was wrong (a static string). */
OPAL_DECLSPEC int opal_rpc_hdr_decode(opal_rpc_hdr_t *hdr, const void *buf, size_t len,
                                      const char **why);

/* The payload of a message whose input or output goes by bulk
 * (OPAL_RPC_HDR_F_BULK): u64 size of the encoding, u64 seal (the value
 * after the exposed bytes, rpc_base_internal.h), u32 handle length and
 * the serialized handle, nothing after. */
typedef struct opal_rpc_bulk_desc_t {
    uint64_t size;
    uint64_t seal;
    const void *handle; /* points into the payload */
    uint32_t handle_len;
} opal_rpc_bulk_desc_t;

/* The bytes a descriptor with a handle of handle_len bytes takes. */
#define OPAL_RPC_BULK_DESC_SIZE(handle_len) (8 + 8 + 4 + (size_t) (handle_len))

/* Reads a descriptor from the len bytes at payload: OPAL_SUCCESS, or
 * OPAL_ERR_PROTOCOL for one that is short or has bytes left over. The
 * size is the caller's to bound. */
OPAL_DECLSPEC int opal_rpc_bulk_desc_decode(opal_rpc_bulk_desc_t *desc, const void *payload,
                                            size_t len);

#endif /* OPAL_MCA_RPC_BASE_RPC_BASE_HEADER_H */
