/*
 * na (network abstraction): Mercury's NA as an MCA framework. A na class
 * is one transport opened from an info string; through it a process looks
 * up peers by URI, sends tagged messages (unexpected: to a peer that
 * receives from anyone; expected: matched on source and tag), and reads or
 * writes a peer's registered memory (put / get). Everything the rpc and
 * bulk layers need from a network, and nothing more.
 *
 * Info strings (the part before "://" picks the component, the rest is
 * where to listen):
 *   "btl"                      na/btl: over the BTL multiplexer (sm, ofi,
 *                              self, verbs), peers by rank in a job or by
 *                              business card outside one
 *   "ofi+tcp", "ofi+shm", "ofi+udp", "ofi+verbs"
 *                              na/ofi: direct libfabric
 *   "ofi+tcp://127.0.0.1:40123"  ... listening on that address
 * A string no component claims fails with, per component, what it accepts.
 *
 * URIs: opal_na_addr_to_string gives "<protocol>://<component part>"
 * ("ofi+tcp://127.0.0.1:40123", "btl://..."); opal_na_addr_lookup takes
 * such a string from a process of the same protocol. The base checks the
 * prefix and hands the component only what follows "://".
 *
 * Completion model (Mercury's): every operation takes a callback and an
 * operation id. Progress (opal_na_poll, opal_na_poll_wait) moves data and
 * queues finished operations on their context's completion queue;
 * opal_na_trigger runs the queued callbacks, in the thread that calls it.
 * Each operation completes exactly once: with OPAL_SUCCESS, with
 * OPAL_ERR_CANCELED after opal_na_cancel, or with the error that ended it
 * (OPAL_ERR_PEER_FAILED, OPAL_ERR_TRUNCATED, ...).
 *
 * Operation ids are created ahead (opal_na_op_create) and reused, so the
 * hot path allocates nothing; an id is in use from the call that starts an
 * operation until its callback begins (the callback may start the next
 * operation with the same id). Passing NULL as the id makes the base
 * allocate one for that operation and free it after the callback.
 *
 * Contexts: a class has one or more contexts, each with its own completion
 * queue, identified by an 8-bit id. A message sent to (address, id) is
 * received only by the peer's context with that id. Id 255
 * (OPAL_NA_CONTEXT_ID_BULK) is reserved for the bulk framework's service.
 *
 * Threads: a class and its contexts may be used from several threads once
 * opal_set_using_threads(true) was said; one context is progressed and
 * triggered by one thread at a time.
 *
 * The component contract is the ops table below (opal_na_class_ops_t), one
 * comment per entry; entries marked optional may be NULL and the base
 * (base/base.h, the opal_na_* calls) supplies the default or a "not
 * supported by <component>" error.
 */
#ifndef OPAL_MCA_NA_NA_H
#define OPAL_MCA_NA_NA_H

#include "opal/opal_config.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/mca/mca.h"

#define OPAL_NA_API_MAJOR 1
#define OPAL_NA_API_MINOR 1

/* ---------------------------------------------------------------- types */

typedef uint32_t opal_na_tag_t;

typedef struct opal_na_class_t opal_na_class_t;
typedef struct opal_na_context_t opal_na_context_t;
typedef struct opal_na_op_id_t opal_na_op_id_t;
/* Defined by each component; opaque to users. Addresses are reference
 * counted by their component: dup adds a reference, free drops one. */
typedef struct opal_na_addr_t opal_na_addr_t;
/* Defined by each component; opaque to users. */
typedef struct opal_na_mem_handle_t opal_na_mem_handle_t;

/* The context every class has (created by opal_na_context_create with 0). */
#define OPAL_NA_CONTEXT_ID_DEFAULT 0
/* The bulk framework's service context (copy engine requests). */
#define OPAL_NA_CONTEXT_ID_BULK 255

/* Memory handle access, as Mercury's NA_MEM_*. */
enum {
    OPAL_NA_MEM_READ_ONLY = 0x1,  /* peers may get from it */
    OPAL_NA_MEM_WRITE_ONLY = 0x2, /* peers may put into it */
    OPAL_NA_MEM_READ_WRITE = 0x3,
};

/* One piece of local memory of a memory handle. */
typedef struct opal_na_segment_t {
    void *base;
    size_t len;
} opal_na_segment_t;

/* What a class is opened with beyond its info string (opal_na_initialize_opt;
 * zeroed means the defaults). */
typedef struct opal_na_init_info_t {
    /* true: progress never blocks in the kernel (opal_na_poll_wait spins);
     * false (default): it may sleep on the class's fd. */
    bool busy_wait;
    /* Contexts the class will create at most (0: the component's default;
     * the bulk service context is not counted). */
    uint8_t max_contexts;
    /* Largest unexpected / expected message wanted (0: the component's
     * default); a component may give less, never more than it can. */
    size_t max_unexpected_size;
    size_t max_expected_size;
} opal_na_init_info_t;

/* An info string split by the base: "ofi+tcp://1.2.3.4:5" is class "ofi",
 * protocol "tcp", host "1.2.3.4:5"; "btl" is class "btl" with no protocol
 * or host (NULL). */
typedef struct opal_na_info_t {
    const char *class_name;
    const char *protocol_name;
    const char *host_name;
    const opal_na_init_info_t *init;
} opal_na_info_t;

typedef enum {
    OPAL_NA_CB_SEND_UNEXPECTED,
    OPAL_NA_CB_RECV_UNEXPECTED,
    OPAL_NA_CB_SEND_EXPECTED,
    OPAL_NA_CB_RECV_EXPECTED,
    OPAL_NA_CB_PUT,
    OPAL_NA_CB_GET,
} opal_na_cb_type_t;

/* What a completion callback gets; valid during the callback only. */
typedef struct opal_na_cb_info_t {
    void *arg; /* what was given with the operation */
    int ret;   /* OPAL_SUCCESS, OPAL_ERR_CANCELED, or why it failed */
    opal_na_cb_type_t type;
    union {
        struct {
            size_t actual_size;
            /* The sender: a reference the callback owns (keep it, or
             * give it back with opal_na_addr_free). NULL unless ret is
             * OPAL_SUCCESS. */
            opal_na_addr_t *source;
            opal_na_tag_t tag;
        } recv_unexpected;
        struct {
            size_t actual_size;
        } recv_expected;
    } info;
} opal_na_cb_info_t;

/* Runs from opal_na_trigger in the thread that calls it; may start new
 * operations (with the same op id too) but must not block. */
typedef void (*opal_na_cb_t)(const opal_na_cb_info_t *info);

/* Where an operation is (opal_na_op_id_t.state). An op goes IDLE ->
 * PENDING when started; exactly one of its completion and opal_na_cancel
 * moves it on (COMPLETED, or CANCELING then COMPLETED once the transport
 * no longer touches its memory); opal_na_trigger makes it IDLE again just
 * before its callback. */
enum {
    OPAL_NA_OP_IDLE = 0,
    OPAL_NA_OP_PENDING = 1,
    OPAL_NA_OP_CANCELING = 2,
    OPAL_NA_OP_COMPLETED = 3,
};

/* The base's part of an operation id. A component's operation struct
 * starts with it (member `super`) and ops->op_size is the whole size. */
struct opal_na_op_id_t {
    /* Link in the context's completion queue (base). */
    opal_na_op_id_t *cq_next;
    opal_na_context_t *context;
    opal_na_cb_t callback;
    opal_na_cb_info_t cb_info;
    /* OPAL_NA_OP_*: the exactly-once guard (base/base.h's helpers). */
    _Atomic uint32_t state;
    /* Allocated by the base for one operation (the caller passed NULL):
     * freed after its callback. */
    bool transient;
};

/* A context: the base's fields, then the component's (plugin). */
struct opal_na_context_t {
    opal_na_class_t *na_class;
    uint8_t id;
    /* The component's per-context state (context_create sets it). */
    void *plugin;
    /* The completion queue (base/na_base_cq.c), opaque to components. */
    void *cq;
};

struct opal_na_class_ops_t;
struct opal_na_base_component_t;

/* An open class: the base's fields and the component's state. */
struct opal_na_class_t {
    const struct opal_na_class_ops_t *ops;
    const struct opal_na_base_component_t *component;
    /* "ofi+tcp", "btl": what URIs of this class start with (before
     * "://"). */
    char *protocol;
    bool listen;
    opal_na_init_info_t init_info;
    /* The component's per-class state (initialize sets it). */
    void *plugin;
    /* Base: the contexts by id (NULL: none with that id), written under
     * the base's lock, read by components to deliver (a context is
     * destroyed only when nothing is pending on it). */
    opal_na_context_t *contexts[256];
    /* Base: run after every poll of any context of the class (the bulk
     * service progresses its context from here); NULL: none. */
    void (*poll_hook)(opal_na_class_t *cls, void *arg);
    void *poll_hook_arg;
    /* Base: told when the component learns that a peer is gone for good
     * (opal_na_base_peer_gone); NULL: nobody listens. */
    void (*peer_gone_hook)(opal_na_class_t *cls, opal_na_addr_t *addr, bool finalized,
                           const char *why, void *arg);
    void *peer_gone_arg;
    /* Base: unexpected messages for contexts that did not exist. */
    _Atomic uint64_t unknown_context_count;
    /* Base: the component's limits, read once it has opened the class
     * (they do not change after), so that every send checks against them
     * without three calls through the ops table. */
    size_t max_unexpected_size;
    size_t max_expected_size;
    opal_na_tag_t max_tag;
};

/* ------------------------------------------------------------ the contract */

typedef struct opal_na_class_ops_t {
    /* The component's name ("btl", "ofi"), for messages. */
    const char *name;
    /* Bytes of the component's operation struct (>= sizeof
     * opal_na_op_id_t, which it starts with). */
    size_t op_size;

    /* --- lifecycle */
    /* Opens the transport for info (class and protocol already matched
     * by check_protocol) and sets cls->plugin. listen: peers will look
     * this process up (bind to info->host_name when given). Errors name
     * the transport and why. */
    int (*initialize)(opal_na_class_t *cls, const opal_na_info_t *info, bool listen);
    /* Closes the transport; every context was destroyed and every
     * address and memory handle freed before (the base checks contexts). */
    int (*finalize)(opal_na_class_t *cls);
    /* Optional: removes what processes of this component that are gone
     * left behind (shared-memory files); never a live process's or
     * another user's. Returns the number removed or an error. */
    int (*cleanup)(void);

    /* --- contexts (optional: without them a context has no plugin state
     * and every id is accepted) */
    int (*context_create)(opal_na_class_t *cls, opal_na_context_t *ctx);
    /* OPAL_ERR_RESOURCE_BUSY while operations of ctx are pending. */
    int (*context_destroy)(opal_na_class_t *cls, opal_na_context_t *ctx);

    /* --- operation ids (optional: the base allocates op_size bytes,
     * zeroed, and frees them) */
    int (*op_init)(opal_na_class_t *cls, opal_na_op_id_t *op);
    void (*op_fini)(opal_na_class_t *cls, opal_na_op_id_t *op);

    /* --- addresses */
    /* Builds the address of the peer named by uri (what follows "://" in
     * what the peer's addr_to_string gave). OPAL_ERR_BAD_PARAM naming the
     * URI and what is wrong with it; OPAL_ERR_UNREACH when it names a
     * peer this class cannot reach. */
    int (*addr_lookup)(opal_na_class_t *cls, const char *uri, opal_na_addr_t **addr);
    /* This process's address. */
    int (*addr_self)(opal_na_class_t *cls, opal_na_addr_t **addr);
    /* Another reference to addr. */
    int (*addr_dup)(opal_na_class_t *cls, opal_na_addr_t *addr, opal_na_addr_t **new_addr);
    /* Drops a reference. */
    void (*addr_free)(opal_na_class_t *cls, opal_na_addr_t *addr);
    /* True when both name the same process. */
    bool (*addr_cmp)(opal_na_class_t *cls, opal_na_addr_t *a, opal_na_addr_t *b);
    /* True when addr is this process. */
    bool (*addr_is_self)(opal_na_class_t *cls, opal_na_addr_t *addr);
    /* Writes the URI's component part (without "<protocol>://") into buf
     * (*size bytes, NUL included); with buf NULL or too small, sets *size
     * to what is needed and returns OPAL_ERR_TRUNCATED. */
    int (*addr_to_string)(opal_na_class_t *cls, char *buf, size_t *size, opal_na_addr_t *addr);
    /* Bytes addr_serialize writes (the base adds its own header). */
    size_t (*addr_get_serialize_size)(opal_na_class_t *cls, opal_na_addr_t *addr);
    int (*addr_serialize)(opal_na_class_t *cls, void *buf, size_t size, opal_na_addr_t *addr);
    /* Reads what addr_serialize wrote (the base checked its header and
     * passes exactly the component's bytes); every length is checked,
     * OPAL_ERR_BAD_PARAM says what was wrong. */
    int (*addr_deserialize)(opal_na_class_t *cls, opal_na_addr_t **addr, const void *buf,
                            size_t size);

    /* --- limits */
    size_t (*msg_get_max_unexpected_size)(const opal_na_class_t *cls);
    size_t (*msg_get_max_expected_size)(const opal_na_class_t *cls);
    /* The largest tag a message may carry (tags are 0..max). */
    opal_na_tag_t (*msg_get_max_tag)(const opal_na_class_t *cls);

    /* --- message buffers (optional: malloc / free) */
    /* A buffer of size bytes for messages, registered where the transport
     * wants it; *plugin_data is passed back with the buffer to sends,
     * receives and msg_buf_free. */
    void *(*msg_buf_alloc)(opal_na_class_t *cls, size_t size, void **plugin_data);
    void (*msg_buf_free)(opal_na_class_t *cls, void *buf, void *plugin_data);

    /* --- messages. Each returns OPAL_SUCCESS once the operation is
     * started (its callback will run), or an error with nothing started.
     * The base has checked sizes against the limits and the tag against
     * the max tag, and set up op (state PENDING, callback, arg, type). */
    /* Sends size bytes to dest's context dest_id, received there by a
     * posted recv_unexpected; buf stays untouched until completion. */
    int (*msg_send_unexpected)(opal_na_class_t *cls, opal_na_context_t *ctx, const void *buf,
                               size_t size, void *plugin_data, opal_na_addr_t *dest,
                               uint8_t dest_id, opal_na_tag_t tag, opal_na_op_id_t *op);
    /* Receives the next unexpected message of any sender into buf (size
     * bytes); a larger message completes with OPAL_ERR_TRUNCATED (its
     * first size bytes in buf). Messages that arrive with no receive
     * posted are kept (bounded by the component) until one is. */
    int (*msg_recv_unexpected)(opal_na_class_t *cls, opal_na_context_t *ctx, void *buf, size_t size,
                               void *plugin_data, opal_na_op_id_t *op);
    /* Sends size bytes to dest's context dest_id, for a receive posted
     * there with this process as source and tag. */
    int (*msg_send_expected)(opal_na_class_t *cls, opal_na_context_t *ctx, const void *buf,
                             size_t size, void *plugin_data, opal_na_addr_t *dest, uint8_t dest_id,
                             opal_na_tag_t tag, opal_na_op_id_t *op);
    /* Receives the message source sends to this context with tag.
     * Messages from one source with one tag match receives in the order
     * both were issued. A message that arrives before its receive is
     * kept until the receive is posted (Mercury drops it; we do not). */
    int (*msg_recv_expected)(opal_na_class_t *cls, opal_na_context_t *ctx, void *buf, size_t size,
                             void *plugin_data, opal_na_addr_t *source, uint8_t source_id,
                             opal_na_tag_t tag, opal_na_op_id_t *op);
    /* Optional (the base answers OPAL_ERR_NOT_SUPPORTED): sends as
     * msg_send_unexpected, but only if the transport takes the message at
     * once, as libfabric's fi_inject. OPAL_SUCCESS: it is on its way, buf
     * may be reused, and there is no operation and no callback.
     * OPAL_ERR_RESOURCE_BUSY: nothing was sent (no room now, or sends
     * queued before it that it must not pass); send it the usual way.
     * Another error: as msg_send_unexpected's. No op id, so the hot path of
     * a small message skips starting, completing and triggering one. */
    int (*msg_inject_unexpected)(opal_na_class_t *cls, opal_na_context_t *ctx, const void *buf,
                                 size_t size, opal_na_addr_t *dest, uint8_t dest_id,
                                 opal_na_tag_t tag);

    /* --- memory handles */
    /* A handle over one piece of memory with access flags
     * (OPAL_NA_MEM_*); not registered yet. */
    int (*mem_handle_create)(opal_na_class_t *cls, void *buf, size_t size, unsigned long flags,
                             opal_na_mem_handle_t **mh);
    /* Optional (the base refuses count > 1 as not supported): a handle
     * over count segments, addressed as their concatenation. */
    int (*mem_handle_create_segments)(opal_na_class_t *cls, const opal_na_segment_t *segments,
                                      size_t count, unsigned long flags, opal_na_mem_handle_t **mh);
    /* Optional (1): the most segments one handle may have. */
    size_t (*mem_handle_get_max_segments)(const opal_na_class_t *cls);
    void (*mem_handle_free)(opal_na_class_t *cls, opal_na_mem_handle_t *mh);
    /* Total bytes the handle covers. */
    size_t (*mem_handle_get_size)(opal_na_class_t *cls, opal_na_mem_handle_t *mh);
    /* Registers / deregisters the memory with the transport (optional:
     * nothing to do). */
    int (*mem_register)(opal_na_class_t *cls, opal_na_mem_handle_t *mh);
    int (*mem_deregister)(opal_na_class_t *cls, opal_na_mem_handle_t *mh);
    /* What a peer needs to put / get: a registered handle serialized (the
     * base adds its header). */
    size_t (*mem_handle_get_serialize_size)(opal_na_class_t *cls, opal_na_mem_handle_t *mh);
    int (*mem_handle_serialize)(opal_na_class_t *cls, void *buf, size_t size,
                                opal_na_mem_handle_t *mh);
    /* A remote handle from a peer's bytes (checked like
     * addr_deserialize); freed with mem_handle_free. */
    int (*mem_handle_deserialize)(opal_na_class_t *cls, opal_na_mem_handle_t **mh, const void *buf,
                                  size_t size);

    /* --- RMA (optional: NULL when the transport has none; bulk then
     * uses its copy engine). Offsets are into the handles' concatenated
     * segments; the base has checked offset + length against both handles,
     * the component checks the remote handle's access flags (a put into
     * a read-only handle, a get from a write-only one: OPAL_ERR_PERM). */
    int (*put)(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_mem_handle_t *local_mh,
               size_t local_offset, opal_na_mem_handle_t *remote_mh, size_t remote_offset,
               size_t length, opal_na_addr_t *remote_addr, uint8_t remote_id, opal_na_op_id_t *op);
    int (*get)(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_mem_handle_t *local_mh,
               size_t local_offset, opal_na_mem_handle_t *remote_mh, size_t remote_offset,
               size_t length, opal_na_addr_t *remote_addr, uint8_t remote_id, opal_na_op_id_t *op);
    /* Optional (0): advice to an upper layer that pipelines large put /
     * get to remote_addr (bulk's rdma engine) on the largest piece to
     * issue as one operation: SIZE_MAX when one operation of any size
     * moves fastest (the transport pipelines or shares it itself), 0 when
     * the class has none (the upper layer's own piece size). */
    size_t (*rma_piece_max)(opal_na_class_t *cls, opal_na_addr_t *remote_addr);

    /* --- progress */
    /* Optional (-1): a file descriptor that becomes readable when ctx has
     * work; an outside event loop polls it. */
    int (*poll_get_fd)(opal_na_class_t *cls, opal_na_context_t *ctx);
    /* Optional (false): true when nothing is pending that only polling
     * would find, so sleeping on the fd is safe. */
    bool (*poll_try_wait)(opal_na_class_t *cls, opal_na_context_t *ctx);
    /* Makes progress without blocking: moves data, queues completions on
     * their contexts; *count is the number of operations completed. */
    int (*poll)(opal_na_class_t *cls, opal_na_context_t *ctx, unsigned int *count);
    /* Optional (the base waits on the fd, or spins, then polls): blocks up
     * to timeout_ms for at least one completion. */
    int (*poll_wait)(opal_na_class_t *cls, opal_na_context_t *ctx, unsigned int timeout_ms,
                     unsigned int *count);

    /* --- cancel */
    /* Cancels op if it is still pending: the component marks it with
     * opal_na_base_op_cancel_mark, withdraws it if it can (posted receives
     * always can) and completes it as OPAL_ERR_CANCELED now, or when the
     * transport has let go of its memory. A finished op is left alone
     * (OPAL_SUCCESS either way). */
    int (*cancel)(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_op_id_t *op);
} opal_na_class_ops_t;

/* ------------------------------------------------------------ component */

typedef struct opal_na_base_component_t {
    mca_base_component_t na_version;
    /* What info strings it serves, for the error when none claims one
     * ("ofi+<tcp|shm|udp|verbs>[://host:port]"). */
    const char *na_protocols;
    /* True when the component serves info's class and protocol. */
    bool (*na_check_protocol)(const opal_na_info_t *info);
    const opal_na_class_ops_t *na_ops;
} opal_na_base_component_t;

#define OPAL_NA_BASE_VERSION MCA_BASE_VERSION_OPAL("na", OPAL_NA_API_MAJOR, OPAL_NA_API_MINOR, 0)

#endif /* OPAL_MCA_NA_NA_H */
