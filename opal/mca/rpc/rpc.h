/*
 * rpc: DAOS CaRT's RPC engine on na (and bulk). The user-facing calls and
 * the framework's header (its components are the tree shapes flat / kary /
 * knomial, rpc_tree.h; groups and collective RPC are in rpc_group.h; the
 * engine is rpc/base).
 *
 *   opal_rpc_init("ofi+tcp", true);          or NULL: this process only
 *   opal_rpc_context_t *ctx;  opal_rpc_context_create(0, &ctx);
 *   opal_rpc_proto_register(&my_proto);      base | version | ops
 *   client:
 *     opal_rpc_request_t *req;
 *     opal_rpc_req_create(ctx, &ep, OPAL_RPC_OPCODE(base, ver, 0), &req);
 *     my_in_t *in = opal_rpc_req_input(req);  in->x = 1;
 *     opal_rpc_req_send(req, done_cb, arg);   takes the caller's reference
 *     while (!done) opal_rpc_progress(ctx, 100);
 *     done_cb(req, status, arg): my_out_t *out = opal_rpc_req_output(req);
 *   server handler(req): in = opal_rpc_req_input(req); out = ...output(req);
 *     fill out; opal_rpc_reply_send(req);     or addref, reply later, decref
 *
 * Completion is exactly once: a request's callback runs one time, from
 * opal_rpc_progress of the request's context, with the outcome that won
 * the race among its reply, its timeout, opal_rpc_req_abort and the
 * failure of its peer: OPAL_SUCCESS, OPAL_ERR_TIMEOUT, OPAL_ERR_CANCELED,
 * OPAL_ERR_PEER_FAILED, or the error the server replied with (the reason
 * in opal_rpc_req_error_reason). A reply that comes after its request
 * completed is dropped and counted (opal_rpc_context_stats).
 *
 * Threads: a context is progressed by one thread at a time. Replies,
 * aborts, addref / decref may come from any thread once
 * opal_set_using_threads(true) was said; what they send is handed to the
 * context's progress.
 */
#ifndef OPAL_MCA_RPC_RPC_H
#define OPAL_MCA_RPC_RPC_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/mca/bulk/bulk.h"
#include "opal/mca/mca.h"
#include "opal/mca/na/na.h"
#include "opal/mca/rpc/rpc_codec.h"
#include "opal/mca/rpc/rpc_hlc.h"

#define OPAL_RPC_API_MAJOR 1
/* 1: the hybrid logical clock (rpc_hlc.h), carried by every message. */
#define OPAL_RPC_API_MINOR 1

/* ----------------------------------------------------------- opcodes */

/* An opcode is base (8 bits) | version (8 bits) | index (16 bits), as
 * CaRT's. Bases 0xf0..0xff are the engine's own. */
#define OPAL_RPC_OPCODE(base, version, index)                                                      \
    ((((uint32_t) (base) &0xffu) << 24) | (((uint32_t) (version) &0xffu) << 16) |                  \
     ((uint32_t) (index) &0xffffu))
#define OPAL_RPC_OPCODE_BASE(opc)    (((opc) >> 24) & 0xffu)
#define OPAL_RPC_OPCODE_VERSION(opc) (((opc) >> 16) & 0xffu)
#define OPAL_RPC_OPCODE_INDEX(opc)   ((opc) &0xffffu)
/* The first base the engine reserves (the protocol query lives there). */
#define OPAL_RPC_BASE_RESERVED 0xf0u

typedef struct opal_rpc_context_t opal_rpc_context_t;
typedef struct opal_rpc_request_t opal_rpc_request_t;

/* A handler: runs as a task of the context's scheduler (the sched
 * framework's selected policy): with fifo and prio from opal_rpc_progress
 * of the context the request came to, with pool on a worker thread (it may
 * block and reply from there); an OPAL_RPC_OP_INLINE operation runs at once
 * in the progress thread. The engine's reference is dropped when it
 * returns: opal_rpc_req_addref to reply after that. */
typedef void (*opal_rpc_handler_t)(opal_rpc_request_t *req);

/* A request's completion (see above); runs once from opal_rpc_progress
 * of the request's context. The request and its output stay valid until
 * the callback returns, longer with opal_rpc_req_addref. Must not block. */
typedef void (*opal_rpc_complete_cb_t)(opal_rpc_request_t *req, int status, void *arg);

enum {
    /* No reply: the completion runs once the request is sent; for an
     * input larger than the eager size (by bulk), once the server says it
     * pulled it (the engine's ack, docs/rpc.md). */
    OPAL_RPC_OP_ONEWAY = 0x1,
    /* Short and non-blocking: the handler runs at once in the progress
     * thread, skipping the scheduler (no task, no queueing, no refusal). */
    OPAL_RPC_OP_INLINE = 0x2,
};

/* One operation of a protocol. in / out NULL: no arguments. */
typedef struct opal_rpc_op_t {
    opal_rpc_handler_t handler;
    const opal_rpc_codec_t *in;
    const opal_rpc_codec_t *out;
    uint32_t flags; /* OPAL_RPC_OP_* */
    /* The handler task's priority class (0, the default, is the most
     * urgent), read by `--mca sched prio`: urgent operations pass bulk
     * work queued before them. */
    int priority;
} opal_rpc_op_t;

/* A protocol: base opcode, version, its operations (index = position). */
typedef struct opal_rpc_proto_t {
    const char *name;
    uint8_t base;
    uint8_t version;
    uint16_t count;
    const opal_rpc_op_t *ops;
} opal_rpc_proto_t;

/* Where a request goes: a peer (na address; NULL for this process) and
 * one of its contexts by index. Groups and ranks come later. */
typedef struct opal_rpc_endpoint_t {
    opal_na_addr_t *addr;
    uint8_t ctx_idx;
} opal_rpc_endpoint_t;

/* Counters of a context (opal_rpc_context_stats). */
typedef struct opal_rpc_stats_t {
    uint64_t sent;
    uint64_t completed;
    uint64_t handled;
    uint64_t late_replies; /* replies to requests already completed */
    uint64_t timeouts;
    uint64_t bad_messages; /* refused headers */
    uint64_t queued;       /* requests that waited for a credit */
    /* Outputs larger than the eager size: a server counts those it
     * exposed by bulk, a client those it started to pull. */
    uint64_t bulk_outputs;
    /* Server: exposed outputs not released yet (the client's release,
     * its failure, rpc_base_timeout or the context's end lets them go). */
    uint64_t bulk_outputs_held;
    /* Client: inputs larger than the eager size exposed by bulk, and
     * those not released yet (a request lets its input go when it
     * completes). */
    uint64_t bulk_inputs;
    uint64_t bulk_inputs_held;
    /* Pulls of an input (server) or an output (client) by bulk that found
     * the seal after the bytes broken: their owner let them go before
     * they were read, and the pull failed (docs/rpc.md, "Seals"). */
    uint64_t bulk_seals_broken;
    /* Messages refused because their sender's clock was ahead of this
     * process's by more than the HLC epsilon (rpc_hlc.h). */
    uint64_t clock_refused;
} opal_rpc_stats_t;

/* ------------------------------------------------------------- engine */

/* Opens the engine: na class from info ("ofi+tcp", "btl", ...; NULL: no
 * network, requests to this process only), listening when listen. Reference
 * counted. */
OPAL_DECLSPEC int opal_rpc_init(const char *info, bool listen);
/* The same with the na class's options (busy_wait: progress spins instead
 * of sleeping on the fd; NULL: the defaults). */
OPAL_DECLSPEC int opal_rpc_init_opt(const char *info, bool listen, const opal_na_init_info_t *opts);
/* Closes it (every context destroyed before: OPAL_ERR_RESOURCE_BUSY). */
OPAL_DECLSPEC int opal_rpc_finalize(void);
/* The na class (NULL without network). */
OPAL_DECLSPEC opal_na_class_t *opal_rpc_na_class(void);
/* This process's URI into buf (see opal_na_addr_to_string). */
OPAL_DECLSPEC int opal_rpc_self_uri(char *buf, size_t *size);
/* A peer's address from its URI (free it with opal_rpc_addr_free). */
OPAL_DECLSPEC int opal_rpc_addr_lookup(const char *uri, opal_na_addr_t **addr);
OPAL_DECLSPEC void opal_rpc_addr_free(opal_na_addr_t *addr);

/* ----------------------------------------------------------- contexts */

/* A context with index idx (0..254), with its own na context, completion
 * queue and progress. */
OPAL_DECLSPEC int opal_rpc_context_create(uint8_t idx, opal_rpc_context_t **ctx);
/* OPAL_ERR_RESOURCE_BUSY while requests of it are not completed. */
OPAL_DECLSPEC int opal_rpc_context_destroy(opal_rpc_context_t *ctx);
OPAL_DECLSPEC uint8_t opal_rpc_context_idx(const opal_rpc_context_t *ctx);
/* Progresses ctx: delivers, dispatches handlers, expires timeouts, runs
 * completions. Waits up to timeout_ms for something to happen (0: does
 * not wait). OPAL_ERR_TIMEOUT when nothing happened. */
OPAL_DECLSPEC int opal_rpc_progress(opal_rpc_context_t *ctx, unsigned int timeout_ms);
/* Progresses until cond(arg) is true (checked after each round) or
 * timeout_ms passed (0: forever): OPAL_SUCCESS or OPAL_ERR_TIMEOUT. */
OPAL_DECLSPEC int opal_rpc_progress_cond(opal_rpc_context_t *ctx, unsigned int timeout_ms,
                                         bool (*cond)(void *arg), void *arg);
OPAL_DECLSPEC void opal_rpc_context_stats(opal_rpc_context_t *ctx, opal_rpc_stats_t *stats);
/* The failure detector's call: every request of ctx to addr completes
 * with OPAL_ERR_PEER_FAILED (unless something else won). */
OPAL_DECLSPEC int opal_rpc_peer_failed(opal_rpc_context_t *ctx, opal_na_addr_t *addr);

/* ---------------------------------------------------------- protocols */

/* Registers proto (copied; its codecs and handlers must stay valid).
 * OPAL_ERR_EXISTS for a base and version registered already;
 * OPAL_ERR_BAD_PARAM for a reserved base or no operations. */
OPAL_DECLSPEC int opal_rpc_proto_register(const opal_rpc_proto_t *proto);
/* The protocol query's answer callback: version is the highest of the
 * versions asked for that the peer serves (status OPAL_ERR_NOT_FOUND
 * when none). */
typedef void (*opal_rpc_proto_query_cb_t)(int status, uint8_t version, void *arg);
/* Asks ep which of versions (count of them) of protocol base it serves. */
OPAL_DECLSPEC int opal_rpc_proto_query(opal_rpc_context_t *ctx, const opal_rpc_endpoint_t *ep,
                                       uint8_t base, const uint8_t *versions, uint32_t count,
                                       opal_rpc_proto_query_cb_t cb, void *arg);

/* ----------------------------------------------------------- requests */

/* A request for opcode to ep, its input zeroed; one reference for the
 * caller. OPAL_ERR_NOT_FOUND for an opcode not registered here (the
 * codecs come from the local registration). */
OPAL_DECLSPEC int opal_rpc_req_create(opal_rpc_context_t *ctx, const opal_rpc_endpoint_t *ep,
                                      uint32_t opcode, opal_rpc_request_t **req);
/* The input / output struct (the opcode's generated types). */
OPAL_DECLSPEC void *opal_rpc_req_input(opal_rpc_request_t *req);
OPAL_DECLSPEC void *opal_rpc_req_output(opal_rpc_request_t *req);
OPAL_DECLSPEC uint32_t opal_rpc_req_opcode(const opal_rpc_request_t *req);
/* The context the request was created on (client) or came to (server). */
OPAL_DECLSPEC opal_rpc_context_t *opal_rpc_req_context(const opal_rpc_request_t *req);
/* This request's timeout in seconds (0: none); before send. The default
 * is the variable rpc_base_timeout. */
OPAL_DECLSPEC int opal_rpc_req_set_timeout(opal_rpc_request_t *req, double seconds);
/* Sends req; cb runs exactly once. Consumes the caller's reference (also
 * on error: then cb does not run). OPAL_ERR_RESOURCE_BUSY when the
 * target's credit queue is full. */
OPAL_DECLSPEC int opal_rpc_req_send(opal_rpc_request_t *req, opal_rpc_complete_cb_t cb, void *arg);
/* Makes a request whose callback has run ready to be sent again, as
 * Mercury's HG_Reset before another HG_Forward: ep (NULL: the same
 * target) and the opcode stay as given, the previous output and error
 * reason go, the input struct is kept for the caller to refill, the
 * timeout is kept. The caller must hold a reference past the callback
 * (opal_rpc_req_addref before sending it, or from within the callback,
 * where the engine's still holds), and send consumes one as always:
 *     opal_rpc_req_addref(req); opal_rpc_req_send(req, cb, arg);
 *     ... cb ran ... opal_rpc_req_reset(req, NULL); refill the input;
 *     opal_rpc_req_addref(req); opal_rpc_req_send(req, cb, arg); ...
 *     opal_rpc_req_decref(req);   the caller's reference, at the end
 * A request never sent is reset too (ep changes its target).
 * OPAL_ERR_RESOURCE_BUSY while it is in flight or its callback has not
 * run; OPAL_ERR_BAD_PARAM for a server's request. */
OPAL_DECLSPEC int opal_rpc_req_reset(opal_rpc_request_t *req, const opal_rpc_endpoint_t *ep);
/* Cancels req: it completes with OPAL_ERR_CANCELED unless it completed
 * already (OPAL_SUCCESS either way). Any thread. */
OPAL_DECLSPEC int opal_rpc_req_abort(opal_rpc_request_t *req);
OPAL_DECLSPEC void opal_rpc_req_addref(opal_rpc_request_t *req);
OPAL_DECLSPEC void opal_rpc_req_decref(opal_rpc_request_t *req);
/* The reason of an error reply ("protocol 0x12, version 2 not registered
 * at ..."), or NULL. Valid while the request is. */
OPAL_DECLSPEC const char *opal_rpc_req_error_reason(const opal_rpc_request_t *req);

/* Server side: sends the output struct as the reply, once (a second call:
 * OPAL_ERR_EXISTS). Any thread. */
OPAL_DECLSPEC int opal_rpc_reply_send(opal_rpc_request_t *req);
/* Server side: replies with an error code and reason instead. */
OPAL_DECLSPEC int opal_rpc_reply_error(opal_rpc_request_t *req, int status, const char *reason);
/* Server side: the sender's address (a reference of the request's) and
 * context index. */
OPAL_DECLSPEC opal_na_addr_t *opal_rpc_req_source(const opal_rpc_request_t *req);
/* Server side: the sender's context index. */
OPAL_DECLSPEC uint8_t opal_rpc_req_source_ctx(const opal_rpc_request_t *req);

/* --------------------------------------------------------------- bulk */

/* The engine's bulk class (NULL without network): BULK fields are
 * deserialized with it; create the handles they carry with it. */
OPAL_DECLSPEC opal_bulk_class_t *opal_rpc_bulk_class(void);
/* Binds handle (this process's, made with opal_rpc_bulk_class) to this
 * process and ctx (CaRT's crt_bulk_bind): its serialized form then carries
 * this process's address, so that a process it reaches through others (a
 * corpc's members below the root's children, a server a client's request
 * was forwarded to) transfers with this process rather than with whoever
 * sent it the handle. OPAL_ERR_NOT_AVAILABLE without network,
 * OPAL_ERR_BAD_PARAM for a handle of another process. */
OPAL_DECLSPEC int opal_rpc_bulk_bind(opal_rpc_context_t *ctx, opal_bulk_t *handle);
/* Moves size bytes between remote (a handle req's peer sent, at
 * remote_offset) and local (at local_offset) with that peer and context,
 * or, when remote is bound (opal_rpc_bulk_bind), with the process and
 * context it is bound to: OPAL_BULK_PULL reads remote, OPAL_BULK_PUSH
 * writes it (CaRT's crt_bulk_transfer). cb runs once, from
 * opal_rpc_progress of req's context; *op_out (may be NULL) cancels with
 * opal_bulk_cancel. A handler that replies from cb keeps req with
 * opal_rpc_req_addref until then. OPAL_ERR_NOT_AVAILABLE without network. */
OPAL_DECLSPEC int opal_rpc_bulk_transfer(opal_rpc_request_t *req, opal_bulk_op_type_t op,
                                         opal_bulk_t *remote, size_t remote_offset,
                                         opal_bulk_t *local, size_t local_offset, size_t size,
                                         opal_bulk_cb_t cb, void *arg, opal_bulk_op_t **op_out);

/* ------------------------------------------------------- the framework */

typedef struct opal_rpc_base_component_t {
    mca_base_component_t rpc_version;
} opal_rpc_base_component_t;

#define OPAL_RPC_BASE_VERSION                                                                      \
    MCA_BASE_VERSION_OPAL("rpc", OPAL_RPC_API_MAJOR, OPAL_RPC_API_MINOR, 0)

#endif /* OPAL_MCA_RPC_RPC_H */
