/*
 * The messages mcarun and its ranks exchange over the launcher socket.
 *
 * Every message is a 12-byte header followed by a payload, all integers
 * little-endian:
 *
 *     magic u32 = ORTE_WIRE_MAGIC   version u16   type u16   length u32
 *
 * Payloads, by type (key: u8 length + 1..255 bytes without NUL; text: u16
 * length + 0..ORTE_WIRE_MAX_TEXT bytes without NUL; value: u32 length +
 * bytes, always last so that it can be sent from where it lies):
 *
 *   rank -> mcarun
 *     HELLO      jobid u32, rank u32, pid u32
 *     PUT        scope u8, key, value         (staged until COMMIT)
 *     COMMIT     -
 *     FENCE      collect u8 (0 or 1); commits the staged pairs first
 *     GET        peer u32, timeout_ns i64 (< 0: none), key
 *     ABORT      status i32, text
 *     FINALIZE   -
 *   mcarun -> rank
 *     WELCOME    jobid, rank, size, local_rank, local_size, node_id (u32
 *                each), text (the session directory)
 *     DATA       rank u32, scope u8, key, value   (a collected pair)
 *     DATA_SET   count u32, value: count records, each a DATA payload
 *                (rank u32, scope u8, key, value); the pairs a collecting
 *                fence brings, encoded once and sent to every rank whole
 *     FENCE_DONE status i32, failed rank u32, text (why, when status < 0)
 *     GET_REPLY  status i32, value (empty unless status is OPAL_SUCCESS)
 *     FINALIZE_ACK -
 *     ERROR      status i32, text            (then mcarun closes)
 *
 * Decoding is strict: a wrong magic or version, an unknown type or one sent
 * in the wrong direction, a length outside the type's bounds (checked from
 * the header alone, before anything is allocated), a field out of range,
 * a NUL inside a key or text, or a payload with bytes left over or missing
 * is refused with OPAL_ERR_PROTOCOL (OPAL_ERR_VERSION_MISMATCH for the
 * version) and a sentence saying what was wrong.
 */
#ifndef ORTE_UTIL_ORTE_WIRE_H
#define ORTE_UTIL_ORTE_WIRE_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ORTE_WIRE_MAGIC       0x4f4d4341u /* "OMCA" */
#define ORTE_WIRE_VERSION     2u
#define ORTE_WIRE_HEADER_SIZE 12u
#define ORTE_WIRE_MAX_KEY     255u
#define ORTE_WIRE_MAX_TEXT    4095u
/* The largest value one message carries (the client's
 * ORTE_LAUNCHER_MAX_VALUE). */
#define ORTE_WIRE_MAX_VALUE (16u * 1024u * 1024u)
/* The largest DATA_SET value: records up to this size go in one message
 * (one record always fits: its value is at most ORTE_WIRE_MAX_VALUE). */
#define ORTE_WIRE_MAX_SET (ORTE_WIRE_MAX_VALUE + 4u + 1u + 1u + ORTE_WIRE_MAX_KEY + 4u)
/* Room for the header and every field but the value: the buffer
 * orte_wire_encode() needs. */
#define ORTE_WIRE_MAX_HEAD (ORTE_WIRE_HEADER_SIZE + 32u + ORTE_WIRE_MAX_KEY + ORTE_WIRE_MAX_TEXT)
/* The rank reported in FENCE_DONE when no rank failed. */
#define ORTE_WIRE_NO_RANK UINT32_MAX

/* X(name, value, sent by a rank (true) or by mcarun (false)). Values are
 * the wire's: append, never renumber. */
#define ORTE_WIRE_TYPE_TABLE(X)                                                                    \
    X(ORTE_WIRE_HELLO, 1, true)                                                                    \
    X(ORTE_WIRE_WELCOME, 2, false)                                                                 \
    X(ORTE_WIRE_PUT, 3, true)                                                                      \
    X(ORTE_WIRE_COMMIT, 4, true)                                                                   \
    X(ORTE_WIRE_FENCE, 5, true)                                                                    \
    X(ORTE_WIRE_FENCE_DONE, 6, false)                                                              \
    X(ORTE_WIRE_DATA, 7, false)                                                                    \
    X(ORTE_WIRE_GET, 8, true)                                                                      \
    X(ORTE_WIRE_GET_REPLY, 9, false)                                                               \
    X(ORTE_WIRE_ABORT, 10, true)                                                                   \
    X(ORTE_WIRE_FINALIZE, 11, true)                                                                \
    X(ORTE_WIRE_FINALIZE_ACK, 12, false)                                                           \
    X(ORTE_WIRE_ERROR, 13, false)                                                                  \
    X(ORTE_WIRE_DATA_SET, 14, false)

typedef enum {
#define ORTE_WIRE_TYPE_ENUM(name, value, from_rank) name = (value),
    ORTE_WIRE_TYPE_TABLE(ORTE_WIRE_TYPE_ENUM)
#undef ORTE_WIRE_TYPE_ENUM
} orte_wire_type_t;

/* A decoded header. */
typedef struct orte_wire_header_t {
    orte_wire_type_t type;
    uint32_t length; /* payload bytes that follow */
} orte_wire_header_t;

/* A message, decoded or to encode. Only the fields of its type are used.
 * After decoding, key, value and text point into the payload buffer (they
 * are not NUL-terminated) and live as long as it. */
typedef struct orte_wire_msg_t {
    orte_wire_type_t type;
    uint32_t jobid;      /* HELLO, WELCOME */
    uint32_t rank;       /* HELLO, WELCOME: own rank; DATA: owner; GET: peer;
                          * FENCE_DONE: the failed rank or ORTE_WIRE_NO_RANK */
    uint32_t pid;        /* HELLO */
    uint32_t size;       /* WELCOME */
    uint32_t local_rank; /* WELCOME */
    uint32_t local_size; /* WELCOME */
    uint32_t node_id;    /* WELCOME */
    int32_t status;      /* FENCE_DONE, GET_REPLY, ABORT, ERROR */
    uint8_t scope;       /* PUT, DATA: 1..3 (orte_modex_scope_t) */
    uint8_t collect;     /* FENCE: 0 or 1 */
    int64_t timeout_ns;  /* GET */
    uint32_t count;      /* DATA_SET: records in value */
    const char *key;     /* PUT, DATA, GET */
    size_t key_len;
    const void *value; /* PUT, DATA, GET_REPLY, DATA_SET (the records) */
    size_t value_len;
    const char *text; /* WELCOME, FENCE_DONE, ABORT, ERROR */
    size_t text_len;
} orte_wire_msg_t;

/* The type's name ("PUT"), or "unknown" for a value not in the table. */
OPAL_DECLSPEC const char *orte_wire_type_name(uint32_t type);

/* Decodes and checks the ORTE_WIRE_HEADER_SIZE bytes at buf. from_rank says
 * which side sent it (mcarun decodes with true, ranks with false). On
 * error, why (why_size bytes, may be 0) says what was wrong. Returns
 * OPAL_SUCCESS, OPAL_ERR_VERSION_MISMATCH or OPAL_ERR_PROTOCOL. */
OPAL_DECLSPEC int orte_wire_header_decode(const uint8_t *buf, bool from_rank,
                                          orte_wire_header_t *hdr, char *why, size_t why_size);

/* Decodes the hdr->length bytes of payload (checked by the header decode)
 * into msg. Returns OPAL_SUCCESS or OPAL_ERR_PROTOCOL with why filled. */
OPAL_DECLSPEC int orte_wire_payload_decode(const orte_wire_header_t *hdr, const uint8_t *payload,
                                           orte_wire_msg_t *msg, char *why, size_t why_size);

/* Encodes msg's header and every field but the value bytes into head
 * (ORTE_WIRE_MAX_HEAD bytes suffice) and sets *head_len; the value's
 * msg->value_len bytes are sent right after. OPAL_ERR_BAD_PARAM for a
 * field the decoder would refuse (bad scope, key or text length, NUL). */
OPAL_DECLSPEC int orte_wire_encode(const orte_wire_msg_t *msg, uint8_t *head, size_t head_size,
                                   size_t *head_len);

/* Bytes one DATA_SET record of a key_len-byte key and a value_len-byte
 * value takes. */
OPAL_DECLSPEC size_t orte_wire_record_size(size_t key_len, size_t value_len);

/* Appends the record of a DATA message (its rank, scope, key and value)
 * at buf, which has size bytes; sets *len to the bytes written.
 * OPAL_ERR_BAD_PARAM for a field the decoder would refuse or too little
 * room. */
OPAL_DECLSPEC int orte_wire_record_encode(const orte_wire_msg_t *data, uint8_t *buf, size_t size,
                                          size_t *len);

/* Decodes the record at *p (*left bytes remain) into msg as a DATA
 * message pointing into the buffer, and moves *p and *left past it.
 * OPAL_ERR_PROTOCOL with why filled for a record that is cut short or
 * out of range. A decoded DATA_SET has already had each of its records
 * checked this way. */
OPAL_DECLSPEC int orte_wire_record_decode(const uint8_t **p, size_t *left, orte_wire_msg_t *msg,
                                          char *why, size_t why_size);

#endif /* ORTE_UTIL_ORTE_WIRE_H */
