/*
 * The protocol the multi-process rpc tests share (client and server
 * register it alike): echo (a value, a string and an IOV back), sleep
 * (replies after a delay, so requests stay in flight), note (one-way),
 * stop (ends the server), sum (the bytes of the IOV added up, for inputs
 * of any size), fill (an output of `value` bytes, rpc_test_byte(i) each),
 * held (the server context's outputs held by bulk, in value), noted (the
 * notes received in value; the last one's IOV length and byte sum as two
 * u32 in data), clock (sets the server's HLC epsilon, moves its clock, and
 * answers with it, rpc_test_proto.c).
 */
#ifndef TEST_RPC_RPC_TEST_PROTO_H
#define TEST_RPC_RPC_TEST_PROTO_H

#include "opal/mca/rpc/rpc.h"

#define RPC_TEST_BASE 0x21
enum {
    RPC_TEST_ECHO,
    RPC_TEST_SLEEP,
    RPC_TEST_NOTE,
    RPC_TEST_STOP,
    RPC_TEST_SUM,
    RPC_TEST_FILL,
    RPC_TEST_HELD,
    RPC_TEST_NOTED,
    RPC_TEST_SEALS,
    RPC_TEST_CLOCK,
    RPC_TEST_COUNT
};

/* Byte i of a fill output. */
static inline uint8_t rpc_test_byte(size_t i)
{
    return (uint8_t) (i * 13 + (i >> 16));
}

#define RPC_TEST_IN_FIELDS(X)                                                                      \
    X(uint32_t, value, VAR)                                                                        \
    X(char *, text, STRING)                                                                        \
    X(opal_rpc_iov_t, data, IOV)
OPAL_RPC_STRUCT(rpc_test_in, RPC_TEST_IN_FIELDS);

#define RPC_TEST_OUT_FIELDS(X)                                                                     \
    X(uint32_t, value, VAR)                                                                        \
    X(uint8_t, ctx_idx, VAR)                                                                       \
    X(opal_rpc_iov_t, data, IOV)
OPAL_RPC_STRUCT(rpc_test_out, RPC_TEST_OUT_FIELDS);

/* Registers the protocol; *stop is set by the stop operation. */
int rpc_test_proto_register(volatile bool *stop);
/* Notes the server received (one-way). */
int rpc_test_proto_notes(void);

#endif /* TEST_RPC_RPC_TEST_PROTO_H */
