/*
 * The engine's self-test protocol (DAOS CaRT's self_test service): every
 * process that runs the rpc engine serves it from opal_rpc_init on, with
 * nothing registered by the user, so that tools/opal_self_test can
 * measure any rank of any job or attached group.
 *
 * One operation, OPAL_RPC_SELFTEST_OPCODE. Its input names how the
 * request's payload comes and how the reply's goes:
 *
 *   payload    the input's bytes when they travel inline (an IOV; past
 *              the eager size the engine moves it by bulk on its own)
 *   in_bulk    or: a read-only handle of the client's the server pulls
 *              in_size bytes from
 *   out_size   the reply's size
 *   out_bulk   NULL: the reply's bytes travel inline (the output's IOV,
 *              by the engine's large-output path past the eager size);
 *              else a writable handle of the client's the server pushes
 *              out_size bytes into before an empty reply
 *   verify     the server checks the input holds opal_rpc_selftest_byte
 *              and fills its output with it (the client checks it)
 *
 * Sizes above the variable rpc_base_selftest_max_size, or handles smaller
 * than the sizes they must hold, get an error reply (OPAL_ERR_BAD_PARAM)
 * whose reason names the sender.
 */
#ifndef OPAL_MCA_RPC_RPC_SELFTEST_H
#define OPAL_MCA_RPC_RPC_SELFTEST_H

#include "opal/opal_config.h"

#include <stdint.h>

#include "opal/mca/rpc/rpc.h"
#include "opal/mca/rpc/rpc_codec.h"

/* The engine's reserved base for the self-test (0xff is the protocol
 * query, 0xfe collective RPC). */
#define OPAL_RPC_SELFTEST_BASE    0xf0u
#define OPAL_RPC_SELFTEST_VERSION 1u
#define OPAL_RPC_SELFTEST_OPCODE                                                                   \
    OPAL_RPC_OPCODE(OPAL_RPC_SELFTEST_BASE, OPAL_RPC_SELFTEST_VERSION, 0)

/* rpc_base_selftest_max_size's default: 64 MiB each way. */
#define OPAL_RPC_SELFTEST_DEFAULT_MAX ((size_t) 64 << 20)

#define OPAL_RPC_SELFTEST_IN_FIELDS(X)                                                             \
    X(opal_rpc_iov_t, payload, IOV)                                                                \
    X(opal_bulk_t *, in_bulk, BULK)                                                                \
    X(uint64_t, in_size, VAR)                                                                      \
    X(opal_bulk_t *, out_bulk, BULK)                                                               \
    X(uint64_t, out_size, VAR)                                                                     \
    X(bool, verify, VAR)
OPAL_RPC_STRUCT(opal_rpc_selftest_in, OPAL_RPC_SELFTEST_IN_FIELDS);

#define OPAL_RPC_SELFTEST_OUT_FIELDS(X) X(opal_rpc_iov_t, payload, IOV)
OPAL_RPC_STRUCT(opal_rpc_selftest_out, OPAL_RPC_SELFTEST_OUT_FIELDS);

/* The byte at offset i of a verified payload of size bytes. */
static inline uint8_t opal_rpc_selftest_byte(uint64_t size, uint64_t i)
{
    return (uint8_t) (size * 7u + i * 13u + (i >> 8));
}

/* The largest size the server accepts (rpc_base_selftest_max_size). */
OPAL_DECLSPEC size_t opal_rpc_selftest_max_size(void);

#endif /* OPAL_MCA_RPC_RPC_SELFTEST_H */
