/*
 * na/ofi: the na contract (na.h) over libfabric directly, on one reliable
 * datagram endpoint per class opened through common/ofi.
 *
 *   unexpected messages  untagged sends (FI_MSG) carrying a small header
 *                        (user tag, destination context id, the sender's
 *                        address), received into a few pre-posted buffers
 *                        (multi-receive where the provider has it) and
 *                        copied into the receive the user posted, or kept
 *                        in the buffer until one is posted;
 *   expected messages    tagged (FI_TAGGED) with the 64-bit tag
 *                        EXP | source context id << 40 | destination
 *                        context id << 32 | user tag, received with
 *                        FI_DIRECTED_RECV on the source's fi_addr: the
 *                        provider matches them, in order per source, and
 *                        keeps a message that arrives before its receive;
 *   put / get            fi_write / fi_read per piece where the local and
 *                        remote segment lists meet, a small window of
 *                        pieces in flight per operation.
 *
 * Contexts share the endpoint and its CQ: a completion is queued on the
 * context of its operation, whichever context polled it. Every call on
 * the endpoint is made under the class lock (taken only when threads are
 * in use), so the provider is opened FI_THREAD_DOMAIN.
 */
#ifndef OPAL_MCA_NA_OFI_NA_OFI_H
#define OPAL_MCA_NA_OFI_NA_OFI_H

#include "opal/opal_config.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/mca/common/ofi/common_ofi.h"
#include "opal/mca/na/base/base.h"
#include "opal/mca/na/na.h"
#include "opal/mca/na/ofi/na_ofi_wire.h"
#include "opal/threads/opal_atomic.h"
#include "opal/threads/opal_mutex.h"

/* Expected messages' tag bit; unexpected ones are untagged. */
#define NA_OFI_TAG_EXPECTED   ((uint64_t) 1 << 60)
#define NA_OFI_TAG_DEST_SHIFT 32
#define NA_OFI_TAG_SRC_SHIFT  40

/* Segments one memory handle may have (each is one registration). */
#define NA_OFI_MAX_SEGMENTS 1024
/* RMA pieces one operation keeps in flight. */
#define NA_OFI_RMA_WINDOW 8

enum { NA_OFI_POST_SEND, NA_OFI_POST_TSEND, NA_OFI_POST_TRECV, NA_OFI_POST_RMA };

/* What a completion's op_context points to. */
enum { NA_OFI_FICTX_OP, NA_OFI_FICTX_PIECE, NA_OFI_FICTX_RBUF, NA_OFI_FICTX_BYE };

typedef struct na_ofi_fictx_t {
    struct fi_context2 fi; /* first: the provider's scratch (FI_CONTEXT2) */
    int kind;
    void *owner;
} na_ofi_fictx_t;

/* A peer (or this process): one per distinct address, owned by the
 * class's table; users hold references. */
typedef struct na_ofi_addr_t {
    struct na_ofi_addr_t *hash_next;
    uint64_t hash;
    fi_addr_t fi_addr;
    _Atomic int32_t refs;
    _Atomic bool failed;
    /* A message or RMA went to it, or a message came from it: it hears
     * this class's goodbye at finalize. */
    _Atomic bool talked;
    bool self;
    /* It said goodbye and the peer-gone hook has not heard it yet: in the
     * class's gone list, holding a reference (under the class lock). */
    bool gone_listed;
    struct na_ofi_addr_t *gone_next;
    /* Its last message was a goodbye: it hears none from this class. */
    bool said_bye;
    /* Operations to this peer in the class's retry queue, and the drain
     * pass that last found the provider without room for one (under the
     * class lock): a peer's operations keep their order, and a peer the
     * provider cannot reach (rxm connecting to a dead process) holds back
     * nobody else's. */
    uint32_t retry_queued;
    uint64_t retry_blocked_pass;
    /* Held by no one: in the class's idle list (oldest first), kept with
     * its AV entry for a peer that comes back until na_ofi_addr_cache
     * newer ones push it out (under the class lock). */
    bool idle;
    struct na_ofi_addr_t *idle_prev, *idle_next;
    uint16_t addrlen;
    uint8_t addr[NA_OFI_ADDR_MAX];
} na_ofi_addr_t;

/* One segment of a memory handle as peers name it. */
typedef struct na_ofi_seg_t {
    uint64_t base;
    uint64_t len;
    uint64_t key;
} na_ofi_seg_t;

typedef struct na_ofi_mh_t {
    size_t count;
    uint64_t total;
    unsigned long flags;
    bool remote;
    bool registered;
    na_ofi_seg_t *segs;        /* count entries (points at seg1 for one) */
    opal_common_ofi_mr_t *mrs; /* local only: count entries */
    na_ofi_seg_t seg1;
    opal_common_ofi_mr_t mr1;
} na_ofi_mh_t;

/* A pre-posted receive buffer for unexpected messages. */
typedef struct na_ofi_rbuf_t {
    na_ofi_fictx_t fictx;
    uint8_t *mem;
    size_t size;
    opal_common_ofi_mr_t mr;
    /* Messages in it not yet copied out (kept ones). */
    int held;
    /* The provider still owns it. */
    bool posted;
} na_ofi_rbuf_t;

/* An unexpected message kept until a receive is posted. */
typedef struct na_ofi_kept_t {
    struct na_ofi_kept_t *next;
    na_ofi_rbuf_t *rbuf;
    const uint8_t *data;
    size_t len;
    na_ofi_addr_t *source; /* a reference */
    opal_na_tag_t tag;
} na_ofi_kept_t;

struct na_ofi_op_t;

typedef struct na_ofi_piece_t {
    na_ofi_fictx_t fictx;
    size_t len;
} na_ofi_piece_t;

/* The component's operation id. */
typedef struct na_ofi_op_t {
    opal_na_op_id_t super;
    na_ofi_fictx_t fictx;
    /* Links in a context's list of posted receives. */
    struct na_ofi_op_t *next, *prev;
    bool listed;
    na_ofi_addr_t *addr; /* a reference while pending (peer, or source) */
    void *buf;
    size_t size;
    /* Staging for unexpected sends that do not fit inject (lazy). */
    uint8_t *staging;
    opal_common_ofi_mr_t staging_mr;
    /* A registration made for this operation's buffer (FI_MR_LOCAL
     * without a message buffer of ours). */
    opal_common_ofi_mr_t tmp_mr;
    /* RMA state. */
    na_ofi_mh_t *local, *remote;
    size_t loff, roff, left;
    int inflight;
    int rma_error;
    bool is_put;
    /* How to post it again after -FI_EAGAIN (NA_OFI_POST_*), and the
     * link in the class's queue of operations waiting for room. */
    int post;
    bool queued;
    struct na_ofi_op_t *retry_next;
    const void *sbuf;
    void *desc;
    size_t len;
    uint64_t fi_tag;
    na_ofi_piece_t pieces[NA_OFI_RMA_WINDOW];
} na_ofi_op_t;

/* Per context: posted unexpected receives and kept messages (FIFOs). */
typedef struct na_ofi_context_t {
    na_ofi_op_t *recv_head, *recv_tail;
    na_ofi_kept_t *kept_head, *kept_tail;
    /* Operations started and not yet completed. */
    _Atomic int64_t pending;
} na_ofi_context_t;

#define NA_OFI_ADDR_BUCKETS 256

typedef struct na_ofi_class_t {
    opal_common_ofi_ctx_t ofi;
    opal_mutex_t lock;
    const char *protocol; /* "tcp", "shm", ... */
    size_t max_unexpected;
    size_t max_expected;
    size_t inject_size;
    bool multi_recv;
    bool has_rma;
    /* The scheme of string addresses ("fi_shm://"), cut from URIs. */
    char str_scheme[32];
    na_ofi_addr_t *self;
    na_ofi_addr_t *buckets[NA_OFI_ADDR_BUCKETS];
    na_ofi_addr_t *idle_head, *idle_tail;
    size_t idle_count;
    na_ofi_rbuf_t *rbufs;
    size_t nrbufs;
    na_ofi_kept_t *kept_free;
    /* Scratch for injected messages (under the lock). */
    uint8_t scratch[NA_OFI_UHDR_MAX + 512];
    /* Expected receives posted, for failing them when their source dies
     * (a receive has no other way to learn it). */
    na_ofi_op_t *exp_head;
    /* Peers that said goodbye, for the peer-gone hook (called by poll
     * once the lock is released). */
    na_ofi_addr_t *gone_head;
    /* Operations the provider had no room for yet: FIFO per peer. */
    na_ofi_op_t *retry_head, *retry_tail;
    uint64_t retry_pass;
    uint64_t dropped;
} na_ofi_class_t;

typedef struct opal_na_ofi_component_t {
    opal_na_base_component_t super;
    int max_unexpected_size;
    int max_expected_size;
    int rbuf_count;
    int rbuf_size;
    int multi_recv;
    /* Addresses no one holds that a class keeps (na_ofi_addr_cache). */
    int addr_cache;
    /* Milliseconds a closing class waits for its goodbyes (0: says none). */
    int finalize_timeout_ms;
    /* pvars, summed over the classes: address objects held (in use or
     * idle, each with its AV entry), idle ones dropped, and unexpected
     * messages dropped (na_ofi_msg_arrived). */
    opal_atomic_uint64_t addresses;
    opal_atomic_uint64_t addresses_evicted;
    opal_atomic_uint64_t messages_dropped;
} opal_na_ofi_component_t;

OPAL_DECLSPEC extern opal_na_ofi_component_t mca_na_ofi_component;

static inline na_ofi_class_t *na_ofi_class(const opal_na_class_t *cls)
{
    return (na_ofi_class_t *) cls->plugin;
}

/* ------------------------------------------------- na_ofi_addr.c */
/* The address object for raw provider address bytes (a new reference),
 * inserting it into the AV the first time; lock held. */
int na_ofi_addr_get(na_ofi_class_t *oc, const void *addr, size_t len, na_ofi_addr_t **out);
void na_ofi_addr_table_free(na_ofi_class_t *oc);
/* Another reference to an address the caller holds one of. */
static inline void na_ofi_addr_ref(na_ofi_addr_t *a)
{
    atomic_fetch_add_explicit(&a->refs, 1, memory_order_relaxed);
}
/* Drops a reference; lock held. The last one makes the address idle. */
void na_ofi_addr_release(na_ofi_class_t *oc, na_ofi_addr_t *a);
int na_ofi_addr_lookup(opal_na_class_t *cls, const char *uri, opal_na_addr_t **addr);
int na_ofi_addr_self(opal_na_class_t *cls, opal_na_addr_t **addr);
int na_ofi_addr_dup(opal_na_class_t *cls, opal_na_addr_t *addr, opal_na_addr_t **new_addr);
void na_ofi_addr_free(opal_na_class_t *cls, opal_na_addr_t *addr);
bool na_ofi_addr_cmp(opal_na_class_t *cls, opal_na_addr_t *a, opal_na_addr_t *b);
bool na_ofi_addr_is_self(opal_na_class_t *cls, opal_na_addr_t *addr);
int na_ofi_addr_to_string(opal_na_class_t *cls, char *buf, size_t *size, opal_na_addr_t *addr);
size_t na_ofi_addr_get_serialize_size(opal_na_class_t *cls, opal_na_addr_t *addr);
int na_ofi_addr_serialize(opal_na_class_t *cls, void *buf, size_t size, opal_na_addr_t *addr);
int na_ofi_addr_deserialize(opal_na_class_t *cls, opal_na_addr_t **addr, const void *buf,
                            size_t size);
/* The URI text of raw address bytes, into buf. */
int na_ofi_addr_format(const na_ofi_class_t *oc, const uint8_t *addr, size_t len, char *buf,
                       size_t *size);
/* Room for na_ofi_addr_name's text. */
#define NA_OFI_ADDR_TEXT_MAX (NA_OFI_ADDR_MAX * 2 + 8)
/* a's text for messages (buf of NA_OFI_ADDR_TEXT_MAX bytes), or "?";
 * returns buf. */
const char *na_ofi_addr_name(const na_ofi_class_t *oc, const na_ofi_addr_t *a, char *buf);
/* The raw address bytes of a URI's component part; OPAL_ERR_BAD_PARAM
 * with the reason in why. */
int na_ofi_addr_parse(const na_ofi_class_t *oc, const char *uri, uint8_t *addr, size_t *len,
                      char *why, size_t why_size);

/* ------------------------------------------------- na_ofi_msg.c */
int na_ofi_msg_inject_unexpected(opal_na_class_t *cls, opal_na_context_t *ctx, const void *buf,
                                 size_t size, opal_na_addr_t *dest, uint8_t dest_id,
                                 opal_na_tag_t tag);
int na_ofi_msg_send_unexpected(opal_na_class_t *cls, opal_na_context_t *ctx, const void *buf,
                               size_t size, void *plugin_data, opal_na_addr_t *dest,
                               uint8_t dest_id, opal_na_tag_t tag, opal_na_op_id_t *op);
int na_ofi_msg_recv_unexpected(opal_na_class_t *cls, opal_na_context_t *ctx, void *buf, size_t size,
                               void *plugin_data, opal_na_op_id_t *op);
int na_ofi_msg_send_expected(opal_na_class_t *cls, opal_na_context_t *ctx, const void *buf,
                             size_t size, void *plugin_data, opal_na_addr_t *dest, uint8_t dest_id,
                             opal_na_tag_t tag, opal_na_op_id_t *op);
int na_ofi_msg_recv_expected(opal_na_class_t *cls, opal_na_context_t *ctx, void *buf, size_t size,
                             void *plugin_data, opal_na_addr_t *source, uint8_t source_id,
                             opal_na_tag_t tag, opal_na_op_id_t *op);
void *na_ofi_msg_buf_alloc(opal_na_class_t *cls, size_t size, void **plugin_data);
void na_ofi_msg_buf_free(opal_na_class_t *cls, void *buf, void *plugin_data);
/* An unexpected message landed at data (len bytes) in rbuf; lock held. */
void na_ofi_msg_arrived(opal_na_class_t *cls, na_ofi_rbuf_t *rbuf, const uint8_t *data, size_t len);
/* Posts rbuf again when nothing holds it; lock held. */
int na_ofi_rbuf_repost(na_ofi_class_t *oc, na_ofi_rbuf_t *rbuf);

/* ------------------------------------------------- na_ofi_rma.c */
int na_ofi_mem_handle_create(opal_na_class_t *cls, void *buf, size_t size, unsigned long flags,
                             opal_na_mem_handle_t **mh);
int na_ofi_mem_handle_create_segments(opal_na_class_t *cls, const opal_na_segment_t *segments,
                                      size_t count, unsigned long flags, opal_na_mem_handle_t **mh);
size_t na_ofi_mem_handle_get_max_segments(const opal_na_class_t *cls);
void na_ofi_mem_handle_free(opal_na_class_t *cls, opal_na_mem_handle_t *mh);
size_t na_ofi_mem_handle_get_size(opal_na_class_t *cls, opal_na_mem_handle_t *mh);
int na_ofi_mem_register(opal_na_class_t *cls, opal_na_mem_handle_t *mh);
int na_ofi_mem_deregister(opal_na_class_t *cls, opal_na_mem_handle_t *mh);
size_t na_ofi_mem_handle_get_serialize_size(opal_na_class_t *cls, opal_na_mem_handle_t *mh);
int na_ofi_mem_handle_serialize(opal_na_class_t *cls, void *buf, size_t size,
                                opal_na_mem_handle_t *mh);
int na_ofi_mem_handle_deserialize(opal_na_class_t *cls, opal_na_mem_handle_t **mh, const void *buf,
                                  size_t size);
int na_ofi_put(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_mem_handle_t *local_mh,
               size_t local_offset, opal_na_mem_handle_t *remote_mh, size_t remote_offset,
               size_t length, opal_na_addr_t *remote_addr, uint8_t remote_id, opal_na_op_id_t *op);
int na_ofi_get(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_mem_handle_t *local_mh,
               size_t local_offset, opal_na_mem_handle_t *remote_mh, size_t remote_offset,
               size_t length, opal_na_addr_t *remote_addr, uint8_t remote_id, opal_na_op_id_t *op);
/* A piece of op finished with fi error err (0: success); lock held.
 * Issues the next pieces or completes op. */
void na_ofi_rma_piece_done(opal_na_class_t *cls, na_ofi_op_t *op, int err);

/* ------------------------------------------------- na_ofi_poll.c */
/* Reads the CQ until empty or max entries; lock held. */
int na_ofi_progress(opal_na_class_t *cls, unsigned int *count);
int na_ofi_poll(opal_na_class_t *cls, opal_na_context_t *ctx, unsigned int *count);
int na_ofi_poll_get_fd(opal_na_class_t *cls, opal_na_context_t *ctx);
bool na_ofi_poll_try_wait(opal_na_class_t *cls, opal_na_context_t *ctx);
int na_ofi_cancel(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_op_id_t *op);
/* Completes op (already claimed) with ret, dropping what it held; lock
 * held. */
void na_ofi_op_finish(opal_na_class_t *cls, na_ofi_op_t *op, int ret);
/* Claims and finishes op; canceled ops finish as OPAL_ERR_CANCELED. */
void na_ofi_op_done(opal_na_class_t *cls, na_ofi_op_t *op, int ret);
/* An operation with peer failed: fails the expected receives posted
 * from it; lock held. */
void na_ofi_peer_failed(opal_na_class_t *cls, na_ofi_addr_t *peer, const char *why);
/* peer said goodbye (class lock held): its posted expected receives fail
 * with OPAL_ERR_PEER_FAILED, and the next poll tells the peer-gone hook
 * it finalized. It is not marked failed: a process may open na again at
 * the same address. */
void na_ofi_peer_closed(opal_na_class_t *cls, na_ofi_addr_t *peer);
/* Gives what the gone list holds back (finalize). */
void na_ofi_gone_drop(na_ofi_class_t *oc);
/* fi error -> OPAL error. */
int na_ofi_fi_error(int fi_err);
/* Posts o's operation (o->retry says which) to the provider; lock held.
 * Returns the provider's code (-FI_EAGAIN: try again later). */
ssize_t na_ofi_post(opal_na_class_t *cls, na_ofi_op_t *o);
/* Posts o now, or queues it behind the operations waiting for room in
 * the provider (in order, which keeps messages in order per peer);
 * returns the provider's error when it refused o for good. Lock held. */
ssize_t na_ofi_start(opal_na_class_t *cls, na_ofi_op_t *o);
/* Posts what waits for room; lock held. */
void na_ofi_retry_drain(opal_na_class_t *cls);
/* Issues RMA pieces of o (na_ofi_rma.c); lock held. */
ssize_t na_ofi_rma_issue(opal_na_class_t *cls, na_ofi_op_t *o);

#endif /* OPAL_MCA_NA_OFI_NA_OFI_H */
