/*
 * The protocol of the corpc tests beyond sums (rpc_corpc_rank,
 * rpc_corpc_client): pull (each member pulls the root's bulk buffer and
 * answers its checksum), big (each member answers a block of bytes that
 * depends on its rank; aggregates concatenate, so the root's is larger
 * than the eager size), stop (the member leaves) and probe (the member
 * answers what it knows of the groups the creation tests make). Every output is a
 * list of (rank, value) pairs and a byte string: aggregates join both.
 */
#ifndef TEST_RPC_RPC_CORPC_PROTO_H
#define TEST_RPC_RPC_CORPC_PROTO_H

#include "opal/mca/rpc/rpc.h"

#define CORPC_TEST_BASE 0x32
/* OP_PLAIN is an operation the members do not make collective. */
enum { OP_PULL, OP_BIG, OP_CSTOP, OP_PROBE, OP_PLAIN, OP_CCOUNT };

/* The root's buffer: byte i is pattern_byte(seed, i). */
#define CORPC_PULL_SIZE (1u << 20)
/* What each member adds to the big aggregates: a block below the eager
 * size (64 KiB at most over every na here), and one above it. */
#define CORPC_BLOCK_SMALL (16u * 1024u)
#define CORPC_BLOCK_LARGE (96u * 1024u)

#define CORPC_IN_FIELDS(X)                                                                         \
    X(uint32_t, seed, VAR)                                                                         \
    X(uint32_t, block, VAR)                                                                        \
    X(opal_bulk_t *, data, BULK)
OPAL_RPC_STRUCT(corpc_in, CORPC_IN_FIELDS);

#define CORPC_OUT_FIELDS(X)                                                                        \
    X(uint32_t, ranks, ARRAY_VAR)                                                                  \
    X(uint64_t, values, ARRAY_VAR)                                                                 \
    X(opal_rpc_iov_t, bytes, IOV)
OPAL_RPC_STRUCT(corpc_out, CORPC_OUT_FIELDS);

static inline uint8_t corpc_pattern_byte(uint32_t seed, size_t i)
{
    return (uint8_t) ((i * 2654435761u + seed) >> 7);
}

/* FNV-1a over len bytes. */
static inline uint64_t corpc_checksum(const uint8_t *p, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

/* Byte i of rank r's block in the big aggregate. */
static inline uint8_t corpc_block_byte(uint32_t rank, uint32_t seed, size_t i)
{
    return (uint8_t) (rank * 131u + seed + i * 7u + (i >> 8));
}

#endif /* TEST_RPC_RPC_CORPC_PROTO_H */
