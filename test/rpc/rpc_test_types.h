/*
 * Argument lists the rpc tests share (each kind at least once, structs
 * nested in pointers and arrays).
 */
#ifndef TEST_RPC_RPC_TEST_TYPES_H
#define TEST_RPC_RPC_TEST_TYPES_H

#include "opal/mca/rpc/rpc_codec.h"

#define POINT_FIELDS(X)                                                                            \
    X(int32_t, x, VAR)                                                                             \
    X(int32_t, y, VAR)                                                                             \
    X(char *, label, STRING)
OPAL_RPC_STRUCT(point, POINT_FIELDS);

#define SHAPE_FIELDS(X)                                                                            \
    X(point, origin, STRUCT)                                                                       \
    X(point, corners, ARRAY_STRUCT)                                                                \
    X(bool, closed, VAR)
OPAL_RPC_STRUCT(shape, SHAPE_FIELDS);

#define EVERY_FIELDS(X)                                                                            \
    X(uint8_t, u8, VAR)                                                                            \
    X(int16_t, i16, VAR)                                                                           \
    X(uint32_t, u32, VAR)                                                                          \
    X(int64_t, i64, VAR)                                                                           \
    X(double, d, VAR)                                                                              \
    X(bool, flag, VAR)                                                                             \
    X(opal_rpc_uuid_t, uuid, RAW)                                                                  \
    X(char *, name, STRING)                                                                        \
    X(char *, absent, STRING)                                                                      \
    X(opal_rpc_iov_t, blob, IOV)                                                                   \
    X(shape, shape, STRUCT)                                                                        \
    X(point, hint, PTR)                                                                            \
    X(point, none, PTR)                                                                            \
    X(shape, shapes, ARRAY_STRUCT)                                                                 \
    X(uint16_t, weights, ARRAY_VAR)                                                                \
    X(char *, tags, ARRAY_STRING)                                                                  \
    X(opal_rpc_uuid_t, ids, ARRAY_RAW)                                                             \
    X(opal_rpc_iov_t, chunks, ARRAY_IOV)                                                           \
    X(uint32_t, empty, ARRAY_VAR)
OPAL_RPC_STRUCT(every, EVERY_FIELDS);

/* Bulk handles: decoding needs a bulk class (opal_rpc_codec_decode_with). */
#define CARRIER_FIELDS(X)                                                                          \
    X(uint32_t, tag, VAR)                                                                          \
    X(opal_bulk_t *, data, BULK)                                                                   \
    X(opal_bulk_t *, none, BULK)                                                                   \
    X(char *, name, STRING)                                                                        \
    X(opal_bulk_t *, parts, ARRAY_BULK)
OPAL_RPC_STRUCT(carrier, CARRIER_FIELDS);

#endif /* TEST_RPC_RPC_TEST_TYPES_H */
