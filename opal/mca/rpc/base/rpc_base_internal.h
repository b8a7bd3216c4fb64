/*
 * The rpc engine's private structures. Lock order: the engine's lock
 * (protocols, the contexts table) before a context's lock; never two
 * contexts' locks at once (loopback hands messages over after unlocking).
 */
#ifndef OPAL_MCA_RPC_BASE_RPC_BASE_INTERNAL_H
#define OPAL_MCA_RPC_BASE_RPC_BASE_INTERNAL_H

#include "opal/opal_config.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "opal/class/opal_hash_table.h"
#include "opal/mca/bulk/bulk.h"
#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/rpc/base/rpc_base_header.h"
#include "opal/mca/rpc/base/rpc_base_timer.h"
#include "opal/mca/rpc/rpc.h"
#include "opal/mca/sched/sched.h"
#include "opal/threads/opal_mutex.h"

OPAL_DECLSPEC extern mca_base_framework_t opal_rpc_base_framework;
#define opal_rpc_base_output (opal_rpc_base_framework.framework_output)

/* The variables (rpc_base_*). */
typedef struct opal_rpc_base_vars_t {
    double timeout;   /* seconds; 0: none */
    int credits;      /* per target; 0: unlimited */
    int credit_queue; /* requests waiting for credits per target */
    int recv_posted;  /* unexpected receives posted per context */
    double hlc_epsilon; /* seconds a peer's clock may be ahead (rpc_hlc.h) */
} opal_rpc_base_vars_t;
OPAL_DECLSPEC extern opal_rpc_base_vars_t opal_rpc_base_vars;

typedef struct rpc_proto_entry_t {
    opal_rpc_proto_t proto;
} rpc_proto_entry_t;

/* The versions of one protocol base, newest registration first: a list
 * that only grows while the engine is up, so that every message's opcode
 * is looked up without a lock (rpc_base_proto.c). */
typedef struct rpc_proto_node_t {
    opal_rpc_proto_t proto;
    struct rpc_proto_node_t *next;
} rpc_proto_node_t;

typedef struct opal_rpc_engine_t {
    int refcount;
    opal_na_class_t *na;     /* NULL: this process only */
    opal_bulk_class_t *bulk; /* inputs larger than the eager size */
    size_t eager_size;       /* largest message (header included) */
    opal_mutex_t lock;
    rpc_proto_entry_t *protos;
    size_t proto_count;
    _Atomic(rpc_proto_node_t *) by_base[256];
    opal_rpc_context_t *contexts[256];
    bool sched_open; /* opal_sched_init succeeded: handlers run as tasks */
    /* Added to deadlines taken on the coarse clock (rpc_base_timer.h). */
    uint64_t coarse_slack_ns;
} opal_rpc_engine_t;
OPAL_DECLSPEC extern opal_rpc_engine_t opal_rpc_engine;

/* Request states: only the context's lock moves them, so exactly one of
 * reply, timeout, abort and peer failure moves a request to COMPLETED. */
enum {
    RPC_REQ_CREATED = 0,
    RPC_REQ_QUEUED,   /* waiting for a credit */
    RPC_REQ_INFLIGHT, /* sent (or being sent), awaiting its reply */
    RPC_REQ_COMPLETED,
};

/* A target of credits: one peer context. */
typedef struct rpc_target_t {
    struct rpc_target_t *next;
    opal_na_addr_t *addr; /* a reference; NULL: this process */
    uint8_t ctx_idx;
    int inflight;
    int queued;
    opal_rpc_request_t *queue_head, *queue_tail;
} rpc_target_t;

/* A message handed to a context: a loopback delivery (bytes copied) or a
 * reply to send from another thread. */
typedef struct rpc_msg_t {
    struct rpc_msg_t *next;
    size_t len;
    uint8_t *data;
} rpc_msg_t;

/* A message on its way out through na: what send_done needs, and an na
 * operation id kept across sends (rpc_base_pool.c). */
typedef struct opal_rpc_base_send_t {
    opal_list_item_t super;
    opal_rpc_context_t *ctx;
    opal_rpc_request_t *req;
    uint8_t *buf;
    opal_na_op_id_t *op; /* created at the record's first send */
} opal_rpc_base_send_t;

/* The requests awaiting a reply, by id (under the context's lock). */
int opal_rpc_base_inflight_set(opal_rpc_context_t *ctx, opal_rpc_request_t *req);
opal_rpc_request_t *opal_rpc_base_inflight_get(opal_rpc_context_t *ctx, uint64_t id);
void opal_rpc_base_inflight_remove(opal_rpc_context_t *ctx, opal_rpc_request_t *req);

/* The caches (rpc_base_pool.c): opened by opal_rpc_init, drained by
 * opal_rpc_finalize (na's operation ids destroyed while na is up). */
void opal_rpc_base_pool_init(void);
void opal_rpc_base_pool_fini(opal_na_class_t *na);
/* Memory for request blocks and encoded messages (zeroed if asked); free
 * it with opal_rpc_base_block_free only. */
void *opal_rpc_base_block_alloc(size_t size, bool zero);
void opal_rpc_base_block_free(void *p);
opal_rpc_base_send_t *opal_rpc_base_send_get(void);
void opal_rpc_base_send_put(opal_rpc_base_send_t *s, opal_na_class_t *na);

struct opal_rpc_request_t {
    _Atomic int32_t refcount;
    opal_rpc_context_t *ctx;
    bool server;
    uint32_t opcode;
    const opal_rpc_op_t *op;
    /* The peer (a reference; NULL: this process) and its context. */
    opal_na_addr_t *addr;
    uint8_t peer_ctx;
    /* Client: the id replies name; server: the client's id. */
    uint64_t id;
    void *input;
    void *output;
    bool input_decoded; /* the codec's free releases it */
    bool output_decoded;
    opal_rpc_complete_cb_t cb;
    void *cb_arg;
    int state;  /* RPC_REQ_*, under ctx->lock */
    int status; /* the outcome that won */
    char *error_reason;
    double timeout;
    opal_rpc_timer_entry_t timer;
    rpc_target_t *target;
    bool holds_credit;
    /* An input too large for one message: its encoding, exposed to the
     * server by a read-only bulk handle until the request is released. */
    opal_bulk_t *in_bulk;
    uint8_t *in_bulk_buf;
    size_t in_bulk_size; /* the encoding's bytes, the seal after them */
    /* Client: a reply (or, one-way by bulk, the server's ack that it
     * pulled the input) completes the request; set before it is sent. */
    bool expects_reply;
    /* The encoded request while it waits for a credit. */
    uint8_t *pending_buf;
    size_t pending_len;
    /* Client: the pull of an output that came by bulk, while it runs
     * (touched by the context's progress thread only). */
    struct rpc_out_pull_t *out_pull;
    _Atomic bool replied;     /* server: a reply was sent */
    /* Client: progress reached its callback (or would have, without one);
     * from then on it may be reset and sent again. */
    bool callback_ran;
    opal_rpc_request_t *next; /* completion list or credit queue */
    /* The context's list of client requests not completed. */
    opal_rpc_request_t *live_prev, *live_next;
};

struct opal_rpc_context_t {
    uint8_t idx;
    opal_na_context_t *na_ctx;
    opal_mutex_t lock;
    opal_condition_t cond; /* a blocking progress without na waits here */
    bool waiting;
    /* id -> request awaiting a reply: a slot per id modulo the table's
     * size (ids are sequential, so the requests in flight rarely share
     * one), and the hash table for those that do (rpc_base_context.c). */
    opal_rpc_request_t **inflight_slots;
    uint64_t inflight_mask;
    size_t inflight_overflow;
    opal_hash_table_t inflight;
    _Atomic uint64_t next_id;
    opal_rpc_request_t *live; /* client requests sent, not completed */
    size_t live_requests;
    _Atomic int server_requests; /* handlers' requests not released */
    bool closing;
    opal_rpc_timer_heap_t timers;
    rpc_msg_t *in_head, *in_tail; /* loopback deliveries */
    opal_rpc_request_t *done_head, *done_tail;
    /* Hints that in_head / done_head may not be empty: set under lock by
     * whoever appends, cleared under lock by progress, read without it so
     * that an idle round takes no lock (an append seen late is seen by the
     * next round). */
    atomic_bool in_ready;
    atomic_bool done_ready;
    rpc_target_t *targets;
    struct rpc_recv_slot_t *slots;
    int slot_count;
    /* Receives completed this round, posted again when the next one
     * starts (only the thread progressing the context touches it). */
    struct rpc_recv_slot_t *repost;
    _Atomic int sends_pending; /* na sends not completed */
    unsigned int rounds;       /* progress rounds (timers every 16th when spinning) */
    opal_rpc_stats_t stats;
    /* stats.handled, counted without the lock (every request handled). */
    _Atomic uint64_t handled;
    /* Runs the handlers (NULL when the sched framework could not open:
     * then they are called directly). */
    opal_sched_t *sched;
    /* Server: outputs exposed by bulk until their client releases them
     * (under lock). */
    struct rpc_held_t *held;
    /* Bulk transfers in flight on na_ctx (input and output pulls): the
     * na context outlives them. */
    _Atomic int bulk_pending;
    /* Replies the rpc_reply_delay fault site holds (under lock). */
    struct rpc_delayed_t *delayed;
    /* Peers na said are gone, for progress to fail the requests to
     * (under lock; gone_ready as in_ready). */
    struct rpc_gone_t *gone;
    atomic_bool gone_ready;
};

/* na's peer-gone hook (installed by opal_rpc_init): every context fails
 * its requests to addr at its next progress round, as opal_rpc_peer_failed
 * does, with why in their reason. */
void opal_rpc_base_peer_gone(opal_na_class_t *cls, opal_na_addr_t *addr, bool finalized,
                             const char *why, void *arg);
/* Frees what gone notices a context did not act on (destroy). */
void opal_rpc_base_gone_clear(opal_rpc_context_t *ctx);

/* A context's lock, taken only once opal_set_using_threads(true) was said:
 * rpc.h asks that of a program whose other threads reply, abort, addref or
 * decref. A single-threaded client took and released it five times per
 * null RPC. The blocking progress's condition wait locks it always. */
#define RPC_CTX_LOCK(ctx)   OPAL_THREAD_LOCK(&(ctx)->lock)
#define RPC_CTX_UNLOCK(ctx) OPAL_THREAD_UNLOCK(&(ctx)->lock)

/* The engine's own protocol (rpc_base_proto.c): index 0 is the protocol
 * query, index 1 the release of an output exposed by bulk (one-way,
 * from the client once it pulled it, naming its request's id). */
#define OPAL_RPC_RELEASE_OPCODE  OPAL_RPC_OPCODE(0xffu, 1, 1)
#define RPC_RELEASE_IN_FIELDS(X) X(uint64_t, id, VAR)
OPAL_RPC_STRUCT(rpc_release_in, RPC_RELEASE_IN_FIELDS);

/* A zeroed request for op with its input and output structs in the same
 * block (req->input / req->output point into it; NULL without a codec);
 * opal_rpc_base_req_destroy frees it. NULL when out of memory. */
opal_rpc_request_t *opal_rpc_base_req_alloc(const opal_rpc_op_t *op);

/* A received message's clock (rpc_hlc.h): OPAL_SUCCESS with the clock
 * moved to at least msg, or OPAL_ERR_HLC_SYNC with *ahead set, the clock
 * unchanged. Unlike opal_rpc_hlc_get_msg it reads the wall clock only when
 * msg is past the epsilon of the wall clock as last read (a message in a
 * chain of requests and replies is always ahead of the receiver's clock,
 * so this takes a read off every receive); the next opal_rpc_hlc_get
 * reads it and goes past msg. */
OPAL_DECLSPEC int opal_rpc_base_hlc_recv(uint64_t msg, uint64_t *ahead);

/* Writes hdr at buf (OPAL_RPC_HDR_SIZE bytes), stamped with this
 * process's clock: every message leaves through here. */
static inline void opal_rpc_base_hdr_write(opal_rpc_hdr_t *hdr, uint8_t *buf)
{
    hdr->hlc = opal_rpc_hlc_get();
    (void) opal_rpc_hdr_encode(hdr, buf, OPAL_RPC_HDR_SIZE);
}

/* Encodes header + args into a malloc'd buffer: OPAL_SUCCESS, or
 * OPAL_ERR_VALUE_OUT_OF_BOUNDS past limit bytes. */
OPAL_DECLSPEC int opal_rpc_base_build(const opal_rpc_hdr_t *hdr, const opal_rpc_codec_t *codec,
                                      const void *args, const char *reason, size_t limit,
                                      uint8_t **buf, size_t *len);
/* The largest message to addr (NULL, this process: no limit but u32). */
OPAL_DECLSPEC size_t opal_rpc_base_limit(opal_na_addr_t *addr);
/* Sealed exposures. Bytes exposed by bulk for the peer to pull (a large
 * input, a large output) are followed by an 8-byte seal, a value unique
 * to the exposure that the message announcing them carries. The owner
 * breaks the seal before it lets the bytes go; the puller reads the
 * bytes, then the seal (a second, 8-byte transfer, once the first is
 * over). A seal still intact says the bytes were read while exposed; a
 * broken one says the owner let them go first (its hold ran out, the
 * request was given up) and that what came may be anything: the pull
 * fails with OPAL_ERR_COMM_FAILURE instead of handing over freed memory
 * (over CMA or a registration cache nothing else would notice). */
#define OPAL_RPC_SEAL_SIZE 8
/* Writes a new seal after buf's size bytes and returns it (never 0). */
OPAL_DECLSPEC uint64_t opal_rpc_base_seal_make(uint8_t *buf, size_t size);
/* Breaks the seal after buf's size bytes (before they are freed). */
OPAL_DECLSPEC void opal_rpc_base_seal_break(uint8_t *buf, size_t size);
/* Whether the seal after buf's size bytes is seal. */
OPAL_DECLSPEC bool opal_rpc_base_seal_intact(const uint8_t *buf, size_t size, uint64_t seal);

/* Encodes req's input aside, exposes it by bulk, and builds the message
 * that carries the handle instead (hdr gets OPAL_RPC_HDR_F_BULK). */
OPAL_DECLSPEC int opal_rpc_base_bulk_request(opal_rpc_request_t *req, opal_rpc_hdr_t *hdr,
                                             uint8_t **buf, size_t *len);
/* Server: pulls the input a request's bulk payload describes, then
 * dispatches it (source is taken over). */
OPAL_DECLSPEC void opal_rpc_base_bulk_pull(opal_rpc_context_t *ctx, const opal_rpc_hdr_t *hdr,
                                           const opal_rpc_op_t *op, const uint8_t *payload,
                                           opal_na_addr_t *source);
/* Server: an output too large for one message: encodes it aside, holds
 * it exposed by a read-only bulk handle until the client releases it, and
 * builds the reply that carries the handle (hdr gets OPAL_RPC_HDR_F_BULK). */
OPAL_DECLSPEC int opal_rpc_base_bulk_reply(opal_rpc_request_t *req, opal_rpc_hdr_t *hdr,
                                           uint8_t **buf, size_t *len);
/* Server: lets go of the output held for (addr, peer_ctx, id). */
OPAL_DECLSPEC void opal_rpc_base_bulk_held_release(opal_rpc_context_t *ctx, opal_na_addr_t *addr,
                                                   uint8_t peer_ctx, uint64_t id);
/* Server: lets go of the outputs held for addr (all when all). */
OPAL_DECLSPEC void opal_rpc_base_bulk_held_drop(opal_rpc_context_t *ctx, opal_na_addr_t *addr,
                                                bool all);
/* Server: lets go of the outputs held past rpc_base_timeout. */
OPAL_DECLSPEC void opal_rpc_base_bulk_held_expire(opal_rpc_context_t *ctx);
/* Client: lets go of the input req exposed by bulk (its completion came).
 * Progress thread. */
OPAL_DECLSPEC void opal_rpc_base_bulk_input_release(opal_rpc_request_t *req);
/* The release operation's handler. */
OPAL_DECLSPEC void opal_rpc_base_bulk_release_handler(opal_rpc_request_t *req);
/* Client: starts pulling the output a reply's bulk payload describes
 * (req completes when it is done). Otherwise an error, with *reason
 * (malloc'd) to complete req with. */
OPAL_DECLSPEC int opal_rpc_base_bulk_output_pull(opal_rpc_context_t *ctx, opal_rpc_request_t *req,
                                                 const opal_rpc_hdr_t *hdr, const uint8_t *payload,
                                                 char **reason);
/* Client: req completed otherwise (timeout, abort, peer failure) while
 * its output was being pulled: cancels the pull. Progress thread. */
OPAL_DECLSPEC void opal_rpc_base_bulk_output_cancel(opal_rpc_request_t *req);
/* Server: decodes payload (len bytes) as op's input and runs the handler
 * (source is taken over). */
OPAL_DECLSPEC void opal_rpc_base_dispatch(opal_rpc_context_t *ctx, const opal_rpc_hdr_t *hdr,
                                          const opal_rpc_op_t *op, const uint8_t *payload,
                                          size_t len, opal_na_addr_t *source);
/* Server: an error reply to the request hdr describes. */
OPAL_DECLSPEC void opal_rpc_base_error_reply(opal_rpc_context_t *ctx, const opal_rpc_hdr_t *in,
                                             opal_na_addr_t *source, int status, const char *why);
/* Sends buf (taken: freed when sent) to (addr, ctx_idx) from ctx; req (may
 * be NULL) is told when the send fails or, for one-way, completes. */
OPAL_DECLSPEC int opal_rpc_base_transmit(opal_rpc_context_t *ctx, opal_na_addr_t *addr,
                                         uint8_t ctx_idx, uint8_t *buf, size_t len,
                                         opal_rpc_request_t *req);
/* The rpc_reply_delay fault site: holds a reply (buf taken) to (addr,
 * ctx_idx) for ms milliseconds; the context's progress sends it then. */
OPAL_DECLSPEC int opal_rpc_base_delay_reply(opal_rpc_context_t *ctx, opal_na_addr_t *addr,
                                            uint8_t ctx_idx, uint8_t *buf, size_t len, uint64_t ms);
/* Sends the held replies that are due; the ms until the next one
 * (UINT32_MAX: none). With all, sends every one at once (the context's end). */
OPAL_DECLSPEC unsigned int opal_rpc_base_delayed_flush(opal_rpc_context_t *ctx, bool all);
/* Releases a request whose last reference went. */
OPAL_DECLSPEC void opal_rpc_base_req_destroy(opal_rpc_request_t *req);
/* Handles one message received by ctx (source: a reference the callee
 * takes over, or NULL for this process). */
OPAL_DECLSPEC void opal_rpc_base_deliver(opal_rpc_context_t *ctx, const uint8_t *buf, size_t len,
                                         opal_na_addr_t *source);
/* Completes req with status unless it completed already (true when this
 * call did). Takes ctx->lock. */
OPAL_DECLSPEC bool opal_rpc_base_complete(opal_rpc_request_t *req, int status, char *reason);
/* Completes req (created, never sent) with status from ctx's next
 * progress, where cb runs as any completion (the caller's reference is
 * the engine's): work that finished at once, told to its owner from
 * progress. Nothing is sent or counted as sent. */
OPAL_DECLSPEC int opal_rpc_base_req_complete_local(opal_rpc_request_t *req, int status,
                                                   opal_rpc_complete_cb_t cb, void *arg);
/* Finds the operation of opcode: OPAL_SUCCESS, or an error with a reason
 * written into why (why_size bytes). */
OPAL_DECLSPEC int opal_rpc_base_proto_lookup(uint32_t opcode, const opal_rpc_op_t **op, char *why,
                                             size_t why_size);
/* Registers the engine's own protocols (the query). */
OPAL_DECLSPEC int opal_rpc_base_proto_builtin(void);
OPAL_DECLSPEC void opal_rpc_base_proto_clear(void);
/* Expires due requests of ctx; returns the ms until the next deadline
 * (UINT32_MAX: none). */
OPAL_DECLSPEC unsigned int opal_rpc_base_expire(opal_rpc_context_t *ctx);
/* Wakes a progress blocked on ctx (loopback and cross-thread work). */
OPAL_DECLSPEC void opal_rpc_base_wake(opal_rpc_context_t *ctx);
/* True when the calling thread is inside opal_rpc_progress(ctx). */
OPAL_DECLSPEC bool opal_rpc_base_in_progress(opal_rpc_context_t *ctx);

#endif /* OPAL_MCA_RPC_BASE_RPC_BASE_INTERNAL_H */
