/*
 * The protocol of the group tests (rpc_group_rank, rpc_group_client):
 * collect (each member answers its rank; aggregates add sums and join rank
 * lists) and stop (the same, and the member leaves).
 */
#ifndef TEST_RPC_RPC_GROUP_PROTO_H
#define TEST_RPC_RPC_GROUP_PROTO_H

#include "opal/mca/rpc/rpc.h"

#define GROUP_TEST_BASE 0x31
enum { OP_COLLECT, OP_STOP, OP_COUNT };

#define GROUP_IN_FIELDS(X) X(uint32_t, phase, VAR)
OPAL_RPC_STRUCT(group_in, GROUP_IN_FIELDS);

#define GROUP_OUT_FIELDS(X)                                                                        \
    X(uint64_t, sum, VAR)                                                                          \
    X(uint32_t, count, VAR)                                                                        \
    X(uint32_t, phase, VAR)                                                                        \
    X(uint32_t, ranks, ARRAY_VAR)
OPAL_RPC_STRUCT(group_out, GROUP_OUT_FIELDS);

#endif /* TEST_RPC_RPC_GROUP_PROTO_H */
