/*
 * SWIM messages on the wire, through opal_cursor (little-endian, no
 * padding):
 *
 *   u8 magic 0x53, u8 version 1, u8 type, u8 update count (<= 64),
 *   u32 from, u32 target, u32 origin, u64 seq,
 *   count x { u32 rank, u8 status (0 alive, 1 suspect, 2 dead), u64 incarnation }
 *
 * The decoder takes one whole message and nothing else; whether its ranks
 * belong to the group is the state machine's check (it knows the size).
 */
#include "opal/opal_config.h"

#include "opal/mca/rpc/rpc_swim.h"
#include "opal/util/opal_cursor.h"
#include "opal/util/opal_error.h"

#define SWIM_WIRE_MAGIC   0x53
#define SWIM_WIRE_VERSION 1
#define SWIM_WIRE_HEADER  24
#define SWIM_WIRE_UPDATE  13

size_t opal_swim_msg_size(const opal_swim_msg_t *msg)
{
    return SWIM_WIRE_HEADER + SWIM_WIRE_UPDATE * (size_t) msg->nupdates;
}

int opal_swim_msg_encode(const opal_swim_msg_t *msg, void *buf, size_t size, size_t *len)
{
    if (msg->nupdates > OPAL_SWIM_MAX_UPDATES || msg->type < OPAL_SWIM_MSG_PING ||
        msg->type > OPAL_SWIM_MSG_ACK) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_cursor_t c;
    opal_cursor_init_write(&c, buf, size);
    opal_cursor_put_u8(&c, SWIM_WIRE_MAGIC);
    opal_cursor_put_u8(&c, SWIM_WIRE_VERSION);
    opal_cursor_put_u8(&c, msg->type);
    opal_cursor_put_u8(&c, (uint8_t) msg->nupdates);
    opal_cursor_put_u32(&c, msg->from);
    opal_cursor_put_u32(&c, msg->target);
    opal_cursor_put_u32(&c, msg->origin);
    opal_cursor_put_u64(&c, msg->seq);
    for (uint32_t i = 0; i < msg->nupdates; ++i) {
        if (msg->updates[i].status > OPAL_SWIM_DEAD) {
            return OPAL_ERR_BAD_PARAM;
        }
        opal_cursor_put_u32(&c, msg->updates[i].rank);
        opal_cursor_put_u8(&c, msg->updates[i].status);
        opal_cursor_put_u64(&c, msg->updates[i].incarnation);
    }
    if (!opal_cursor_ok(&c)) {
        return OPAL_ERR_BAD_PARAM;
    }
    *len = opal_cursor_pos(&c);
    return OPAL_SUCCESS;
}

int opal_swim_msg_decode(opal_swim_msg_t *msg, const void *buf, size_t len, const char **why)
{
    opal_cursor_t c;
    opal_cursor_init_read(&c, buf, len);
    uint8_t magic = opal_cursor_get_u8(&c);
    uint8_t version = opal_cursor_get_u8(&c);
    msg->type = opal_cursor_get_u8(&c);
    msg->nupdates = opal_cursor_get_u8(&c);
    msg->from = opal_cursor_get_u32(&c);
    msg->target = opal_cursor_get_u32(&c);
    msg->origin = opal_cursor_get_u32(&c);
    msg->seq = opal_cursor_get_u64(&c);
    if (!opal_cursor_ok(&c)) {
        *why = "swim message shorter than its 24-byte header";
        return OPAL_ERR_PROTOCOL;
    }
    if (SWIM_WIRE_MAGIC != magic) {
        *why = "not a swim message (bad magic)";
        return OPAL_ERR_PROTOCOL;
    }
    if (SWIM_WIRE_VERSION != version) {
        *why = "swim wire version not understood";
        return OPAL_ERR_PROTOCOL;
    }
    if (msg->type < OPAL_SWIM_MSG_PING || msg->type > OPAL_SWIM_MSG_ACK) {
        *why = "unknown swim message type";
        return OPAL_ERR_PROTOCOL;
    }
    if (msg->nupdates > OPAL_SWIM_MAX_UPDATES) {
        *why = "swim message with more than 64 updates";
        return OPAL_ERR_PROTOCOL;
    }
    if (opal_cursor_left(&c) != SWIM_WIRE_UPDATE * (size_t) msg->nupdates) {
        *why = "swim message length does not match its update count";
        return OPAL_ERR_PROTOCOL;
    }
    for (uint32_t i = 0; i < msg->nupdates; ++i) {
        msg->updates[i].rank = opal_cursor_get_u32(&c);
        msg->updates[i].status = opal_cursor_get_u8(&c);
        msg->updates[i].incarnation = opal_cursor_get_u64(&c);
        if (msg->updates[i].status > OPAL_SWIM_DEAD) {
            *why = "swim update with an unknown status";
            return OPAL_ERR_PROTOCOL;
        }
    }
    if (!opal_cursor_done(&c)) {
        *why = "swim message truncated";
        return OPAL_ERR_PROTOCOL;
    }
    return OPAL_SUCCESS;
}
