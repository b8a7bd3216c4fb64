/*
 * Incast variables' wire: the engine's reserved protocol "iv", four
 * operations that share one input and one output codec. Generated codecs,
 * so decoding is bounds-checked; opal_rpc_base_iv_check validates what a
 * decoded input means (shared with the fuzz target).
 */
#ifndef OPAL_MCA_RPC_BASE_RPC_BASE_IV_H
#define OPAL_MCA_RPC_BASE_RPC_BASE_IV_H

#include "opal/opal_config.h"

#include <stddef.h>
#include <stdint.h>

#include "opal/mca/rpc/rpc_codec.h"

/* The engine's reserved protocol base for IV (0xff is the query, 0xfe
 * corpc). */
#define OPAL_RPC_IV_BASE          0xfdu
#define OPAL_RPC_IV_VERSION       1u
#define OPAL_RPC_IV_OPCODE(index) OPAL_RPC_OPCODE(OPAL_RPC_IV_BASE, OPAL_RPC_IV_VERSION, index)

enum {
    IV_OP_FETCH = 0,      /* child -> parent: the value of key */
    IV_OP_UPDATE = 1,     /* child -> parent: store value at the root */
    IV_OP_INVAL_UP = 2,   /* child -> parent: toward the root, which starts: */
    IV_OP_INVAL_DOWN = 3, /* parent -> child: drop key, then your children */
    IV_OP_COUNT
};

/* What a member sends: the namespace (group name, id, root, which every
 * member must agree on), the key, and for an update the value. */
#define RPC_IV_IN_FIELDS(X)                                                                        \
    X(char *, group, STRING)                                                                       \
    X(uint32_t, ns_id, VAR)                                                                        \
    X(uint32_t, root, VAR)                                                                         \
    X(opal_rpc_iov_t, key, IOV)                                                                    \
    X(opal_rpc_iov_t, value, IOV)
OPAL_RPC_STRUCT(rpc_iv_in, RPC_IV_IN_FIELDS);

/* The answer: the member's outcome (an error it met on the way, with its
 * reason: not being answered at all is the request's own failure, which
 * the sender goes around); fetch: the value and its version; update: the
 * version the root gave; invalidate: how many members dropped (or had
 * no) copy. */
#define RPC_IV_OUT_FIELDS(X)                                                                       \
    X(int32_t, status, VAR)                                                                        \
    X(char *, reason, STRING)                                                                      \
    X(uint64_t, version, VAR)                                                                      \
    X(uint32_t, members, VAR)                                                                      \
    X(opal_rpc_iov_t, value, IOV)
OPAL_RPC_STRUCT(rpc_iv_out, RPC_IV_OUT_FIELDS);

/* OPAL_SUCCESS when in can be a request of operation index (a group name,
 * a key of 1..key_max bytes, a value only in an update and of at most
 * value_max bytes); else OPAL_ERR_BAD_PARAM with the reason in why. */
OPAL_DECLSPEC int opal_rpc_base_iv_check(const rpc_iv_in_t *in, uint32_t index, uint32_t key_max,
                                         uint32_t value_max, char *why, size_t why_size);

/* The variables rpc_iv_key_max and rpc_iv_value_max (framework register);
 * the protocol and the namespace registry (opal_rpc_init / finalize). */
int opal_rpc_base_iv_register(void);
int opal_rpc_base_iv_init(void);
void opal_rpc_base_iv_fini(void);

#endif /* OPAL_MCA_RPC_BASE_RPC_BASE_IV_H */
