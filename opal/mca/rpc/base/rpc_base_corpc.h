/*
 * Collective RPC's wire: one engine-reserved operation ("forward") whose
 * input says which corpc a member takes part in, and whose output carries
 * a subtree's aggregate back to its parent. Generated codecs, so decoding
 * is bounds-checked; opal_rpc_base_corpc_check validates what a decoded
 * input means (shared with the fuzz target).
 */
#ifndef OPAL_MCA_RPC_BASE_RPC_BASE_CORPC_H
#define OPAL_MCA_RPC_BASE_RPC_BASE_CORPC_H

#include "opal/opal_config.h"

#include <stddef.h>
#include <stdint.h>

#include "opal/mca/rpc/rpc.h"
#include "opal/mca/rpc/rpc_codec.h"

/* The engine's reserved protocol base for corpc (the query is 0xff). */
#define OPAL_RPC_CORPC_BASE    0xfeu
#define OPAL_RPC_CORPC_VERSION 1u
#define OPAL_RPC_CORPC_OPCODE  OPAL_RPC_OPCODE(OPAL_RPC_CORPC_BASE, OPAL_RPC_CORPC_VERSION, 0)

/* What a parent sends a child: the group (by name) and its root, the
 * user's opcode and encoded input, the tree, the ranks left out (the
 * root's exclusions and the members it knows dead), and the seconds the
 * child's subtree may take. */
#define RPC_CORPC_IN_FIELDS(X)                                                                     \
    X(char *, group, STRING)                                                                       \
    X(uint64_t, version, VAR)                                                                      \
    X(uint32_t, root, VAR)                                                                         \
    X(uint32_t, opcode, VAR)                                                                       \
    X(char *, tree, STRING)                                                                        \
    X(uint32_t, k, VAR)                                                                            \
    X(double, budget, VAR)                                                                         \
    X(uint32_t, excluded, ARRAY_VAR)                                                               \
    X(opal_rpc_iov_t, input, IOV)
OPAL_RPC_STRUCT(rpc_corpc_in, RPC_CORPC_IN_FIELDS);

/* What a child answers: the ranks of its subtree that failed, and its
 * subtree's aggregate (the user's output encoded) when it has one. */
#define RPC_CORPC_OUT_FIELDS(X)                                                                    \
    X(uint32_t, failed, ARRAY_VAR)                                                                 \
    X(bool, has_output, VAR)                                                                       \
    X(opal_rpc_iov_t, output, IOV)
OPAL_RPC_STRUCT(rpc_corpc_out, RPC_CORPC_OUT_FIELDS);

/* The engine's own corpc operations (the same protocol, after the
 * forward): a subgroup created collectively (rpc_base_group_coll.c). */
#define OPAL_RPC_GROUP_CREATE_OPCODE OPAL_RPC_OPCODE(OPAL_RPC_CORPC_BASE, OPAL_RPC_CORPC_VERSION, 1)

/* A subgroup's name and primary ranks: each member creates it under that
 * name (drop: each listed rank destroys it again, the creation's undo). */
#define RPC_GROUP_CREATE_IN_FIELDS(X)                                                              \
    X(char *, name, STRING)                                                                        \
    X(uint32_t, ranks, ARRAY_VAR)                                                                  \
    X(bool, drop, VAR)
OPAL_RPC_STRUCT(rpc_group_create_in, RPC_GROUP_CREATE_IN_FIELDS);

/* The primary ranks that created (or dropped) it, those that refused (the
 * name in use there), and the version they created it with (versions_differ
 * when two members' differ). */
#define RPC_GROUP_CREATE_OUT_FIELDS(X)                                                             \
    X(uint32_t, created, ARRAY_VAR)                                                                \
    X(uint32_t, refused, ARRAY_VAR)                                                                \
    X(uint64_t, version, VAR)                                                                      \
    X(bool, versions_differ, VAR)
OPAL_RPC_STRUCT(rpc_group_create_out, RPC_GROUP_CREATE_OUT_FIELDS);

/* The handler and aggregation of OPAL_RPC_GROUP_CREATE_OPCODE. */
void opal_rpc_base_group_create_handler(opal_rpc_request_t *req);
int opal_rpc_base_group_create_aggregate(void *out, const void *child_out, void *arg);

/* OPAL_SUCCESS when in can be a corpc of a group of group_size ranks
 * (root and exclusions in range, the root not excluded, a tree name, a
 * budget that is a finite number >= 0); else OPAL_ERR_BAD_PARAM with the
 * reason in why. */
OPAL_DECLSPEC int opal_rpc_base_corpc_check(const rpc_corpc_in_t *in, uint32_t group_size,
                                            char *why, size_t why_size);

#endif /* OPAL_MCA_RPC_BASE_RPC_BASE_CORPC_H */
