/*
 * btl/ofi: active messages and RDMA over one libfabric provider.
 *
 * One module, one reliable datagram endpoint (FI_EP_RDM) on the provider
 * and domain common/ofi chose, one completion queue for everything.
 *
 * Active messages are fi_senddata: the payload is the message, the remote
 * CQ data (64 bits) carries the tag (bits 0-7), the sender's rank (8-31)
 * and a per-peer sequence number (32-63). A provider with only 4 bytes of
 * CQ data (rxm over verbs) gets the tag and rank there and the sequence
 * number in a 4-byte header at the front of each message (the "sequence
 * header" mode, see MCA_BTL_OFI_SEQ_HDR_SIZE). Receives land in multi-receive
 * buffers (FI_MULTI_RECV) or, without it (and by default with shm and
 * rxm, see btl_ofi_multi_recv), in buffers of btl_max_send_size posted
 * one message each. A provider may complete a large message (its
 * rendezvous) after a later small one: the sequence number puts them back
 * in order, holding early messages in place until their turn.
 *
 * RDMA (when the provider has FI_RMA) is fi_write / fi_read between
 * regions registered with common/ofi; a registration handle is the key,
 * the region's address and its length.
 *
 * Every operation's context starts with a struct fi_context2 (the
 * provider's while the operation is outstanding) and a kind. Operations
 * to a peer stay on its endpoint's list until they complete, so that a
 * failed peer's operations are called back with an error at once even
 * though the provider returns their buffers only later (or at close).
 *
 * Locking: the module's recursive lock is taken only when
 * opal_using_threads(); libfabric is asked for FI_THREAD_DOMAIN since
 * every call on the domain is made under it (or from the one thread).
 */
#ifndef OPAL_MCA_BTL_OFI_BTL_OFI_H
#define OPAL_MCA_BTL_OFI_BTL_OFI_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "opal/class/opal_free_list.h"
#include "opal/class/opal_list.h"
#include "opal/mca/btl/base/base.h"
#include "opal/mca/btl/btl.h"
#include "opal/mca/common/ofi/common_ofi.h"
#include "opal/threads/opal_mutex.h"

/* The modex key under which each process publishes its endpoint address
 * (common/ofi's blob). */
#define MCA_BTL_OFI_MODEX_KEY "btl.ofi.addr"

/* Remote CQ data layout. */
#define MCA_BTL_OFI_DATA_TAG_BITS  8
#define MCA_BTL_OFI_DATA_RANK_BITS 24
#define MCA_BTL_OFI_MAX_RANKS      (UINT32_C(1) << MCA_BTL_OFI_DATA_RANK_BITS)

static inline uint64_t mca_btl_ofi_data_make(mca_btl_base_tag_t tag, uint32_t rank, uint32_t seq)
{
    return (uint64_t) tag | ((uint64_t) rank << MCA_BTL_OFI_DATA_TAG_BITS) | ((uint64_t) seq << 32);
}

/* btl/ofi's own message (a btl tag, never dispatched): goodbye, the last
 * message to each peer this process exchanged messages with, sent at
 * finalize. Its sequence number puts it after everything sent before it,
 * so the peer that delivers it has delivered all the rest and reports
 * MCA_BTL_ERROR_FLAGS_PEER_CLOSED (a finalize, not a failure) instead of
 * taking the process's exit for a death. It is posted with a completion,
 * which comes once everything sent to the peer before it was delivered as
 * far as the provider promises: with rxd, acknowledged, so injects that
 * rxd still holds for retransmission are not lost when the endpoint
 * closes. */
#define MCA_BTL_OFI_TAG_BYE (MCA_BTL_TAG_BTL_MIN + 0x0f)

/* The sequence header: with less than 8 bytes of remote CQ data (or
 * btl_ofi_force_seq_header), every message starts with its 32-bit
 * sequence number, little-endian, and the CQ data's upper half is 0. The
 * limits the module advertises are the provider's less these bytes, so
 * upper layers see the same sizes either way. */
#define MCA_BTL_OFI_SEQ_HDR_SIZE 4
#define MCA_BTL_OFI_CQ_DATA_MIN  4

static inline void mca_btl_ofi_seq_hdr_write(uint8_t *hdr, uint32_t seq)
{
    hdr[0] = (uint8_t) seq;
    hdr[1] = (uint8_t) (seq >> 8);
    hdr[2] = (uint8_t) (seq >> 16);
    hdr[3] = (uint8_t) (seq >> 24);
}

static inline uint32_t mca_btl_ofi_seq_hdr_read(const uint8_t *hdr)
{
    return (uint32_t) hdr[0] | ((uint32_t) hdr[1] << 8) | ((uint32_t) hdr[2] << 16) |
           ((uint32_t) hdr[3] << 24);
}

/* The largest sendi / inject message copied through the stack. */
#define MCA_BTL_OFI_INJECT_MAX 4096

/* Flow control. An injected message reports no completion, so nothing
 * tells when the provider has really sent it, and a provider may queue
 * injects without bound while the peer does not read (rxm over tcp
 * does). So at most inject_batch messages in a row to a peer are
 * injected; the next one is posted with a completion, and once
 * MAX_POSTED of those are outstanding to a peer, sends to it are busy.
 * A completion comes after every earlier message to the peer went out
 * (FI_ORDER_SAS), so what a peer that does not read can pile up is
 * bounded by MAX_POSTED * (inject_batch + 1) messages. Providers that
 * bound their own injects (shm: the peer's queue; rxd: its window) need
 * no batches (inject_batch 0), and rxd must not get them: libfabric
 * 1.17's rxd can hold a posted send back for good when it was mixed with
 * injects to a peer that stopped reading for a while. */
#define MCA_BTL_OFI_INJECT_BATCH 64
#define MCA_BTL_OFI_MAX_POSTED   64

/* The struct of type holding member at ptr (through void *: the member's
 * address is that of a properly aligned struct). */
#define MCA_BTL_OFI_CONTAINER(ptr, type, member)                                                   \
    ((type *) (void *) ((char *) (ptr) -offsetof(type, member)))

/* ------------------------------------------------------------- contexts */

typedef enum {
    MCA_BTL_OFI_CTX_SEND,
    MCA_BTL_OFI_CTX_RECV,
    MCA_BTL_OFI_CTX_RDMA,
} mca_btl_ofi_ctx_kind_t;

/* What a CQ entry's op_context points at. The magic tells ours from a
 * provider's own: some rxm versions report an error of an internal
 * operation with their own context. */
typedef struct mca_btl_ofi_context_t {
    struct fi_context2 fi;
    mca_btl_ofi_ctx_kind_t kind;
    uint32_t magic;
} mca_btl_ofi_context_t;

#define MCA_BTL_OFI_CTX_MAGIC 0x0f1c7a9eu

/* Outstanding operation states. */
enum {
    /* The provider has it. */
    MCA_BTL_OFI_OP_POSTED = 0x1,
    /* Its peer failed: it was called back with an error already; its
     * completion only gives the memory back. */
    MCA_BTL_OFI_OP_ABANDONED = 0x2,
    /* Abandoned, and the caller freed the descriptor since (it goes back
     * to its list when the provider returns it). */
    MCA_BTL_OFI_OP_FREED = 0x4,
};

struct mca_btl_ofi_module_t;

/* A send descriptor (alloc, prepare_src, sendi). Its free-list item's
 * list link holds it on its endpoint's outstanding list while posted. */
typedef struct mca_btl_ofi_frag_t {
    mca_btl_base_descriptor_t base;
    mca_btl_ofi_context_t ctx;
    mca_btl_base_segment_t segments[2];
    struct mca_btl_base_endpoint_t *endpoint;
    opal_free_list_t *list;
    /* The payload's registration descriptor (FI_MR_LOCAL), or NULL. */
    void *desc;
    uint32_t state;
} mca_btl_ofi_frag_t;
OBJ_CLASS_DECLARATION(mca_btl_ofi_frag_t);

/* A put or get in flight. */
typedef struct mca_btl_ofi_rdma_op_t {
    opal_free_list_item_t super;
    mca_btl_ofi_context_t ctx;
    struct mca_btl_base_endpoint_t *endpoint;
    void *local_address;
    mca_btl_base_registration_handle_t *local_handle;
    mca_btl_base_rdma_completion_fn_t cbfunc;
    void *cbcontext;
    void *cbdata;
    uint32_t state;
} mca_btl_ofi_rdma_op_t;
OBJ_CLASS_DECLARATION(mca_btl_ofi_rdma_op_t);

/* A receive buffer: multi-receive (many messages) or one message. */
typedef struct mca_btl_ofi_recv_buf_t {
    mca_btl_ofi_context_t ctx;
    uint8_t *base;
    size_t size;
    void *desc;
    /* Messages in it held for their turn (they pin the buffer). */
    int held;
    /* The provider gave it back (multi-receive: released; else the one
     * message arrived); it is posted again once nothing is held. */
    bool returned;
    bool posted;
    /* A spare, posted only when another is retired. */
    bool spare;
    /* A multi-receive buffer one of whose messages failed, or that the
     * provider refused to take again: whether the provider still has it
     * is unknown, so it is not posted again until a release says so. */
    bool retired;
} mca_btl_ofi_recv_buf_t;

/* Multi-receive buffers kept in reserve for ones retired after errors. */
#define MCA_BTL_OFI_SPARE_RECV_BUFS 2

/* Refused receives in a row after which the failure is reported (fewer
 * are the expected aftermath of a peer's death, see post_or_retire). */
#define MCA_BTL_OFI_POST_FAILURES_REPORTED 10000

/* An early message held until its predecessors arrive. */
typedef struct mca_btl_ofi_held_t {
    opal_free_list_item_t super;
    uint32_t seq;
    mca_btl_base_tag_t tag;
    uint8_t *data;
    size_t len;
    mca_btl_ofi_recv_buf_t *buf;
} mca_btl_ofi_held_t;
OBJ_CLASS_DECLARATION(mca_btl_ofi_held_t);

/* ----------------------------------------------------------- endpoints */

typedef struct mca_btl_base_endpoint_t {
    struct mca_btl_ofi_module_t *module;
    /* Retained while the endpoint exists. */
    opal_proc_t *proc;
    uint32_t rank;
    fi_addr_t fi_addr;
    /* Its pid when it runs on this node (liveness checks), else 0. */
    pid_t pid;
    /* add_procs handed it out (del_procs takes that back; the endpoint
     * stays, with its sequence numbers, until the module goes). */
    bool added;
    /* Gone: it failed, or it said goodbye (it finalized). Nothing is sent
     * to it or taken from it any more. */
    bool failed;
    /* This process's goodbye to it is posted (finalize). */
    bool bye_sent;
    /* The liveness check saw its process gone; the next check decides
     * (its goodbye may not have been read yet). */
    bool exit_seen;
    uint32_t send_seq;
    uint32_t recv_seq;
    /* Messages injected since the last one posted with a completion, and
     * sends posted with a completion not yet reported (flow control). */
    unsigned injected;
    unsigned posted;
    /* mca_btl_ofi_held_t by seq. */
    opal_list_t held;
    /* Frags and RDMA ops posted to it (completion still owed). */
    opal_list_t outstanding;
    size_t rdma_outstanding;
} mca_btl_ofi_endpoint_t;

/* Registered memory as peers see it (btl_registration_handle_size bytes,
 * no pointers). */
struct mca_btl_base_registration_handle_t {
    uint64_t key;
    uint64_t base;
    uint64_t size;
};

/* A registration: the handle first, so the handle's address is the
 * registration's. */
typedef struct mca_btl_ofi_reg_t {
    mca_btl_base_registration_handle_t handle;
    opal_common_ofi_mr_t mr;
} mca_btl_ofi_reg_t;

/* -------------------------------------------------------------- module */

typedef struct mca_btl_ofi_module_t {
    mca_btl_base_module_t super;
    opal_common_ofi_ctx_t ofi;
    /* "<provider>, <domain>": what super.btl_transport points to. */
    char transport[128];
    opal_recursive_mutex_t lock;

    uint32_t my_rank;
    uint32_t job_size;
    /* Indexed by rank; created by add_procs or by a first message. */
    mca_btl_ofi_endpoint_t **endpoints;

    /* Messages up to this size go by fi_injectdata (no completion), at
     * most inject_batch in a row to a peer (0: no limit). */
    size_t inject_size;
    unsigned inject_batch;
    /* 0, or MCA_BTL_OFI_SEQ_HDR_SIZE in the sequence header mode: the
     * bytes in front of every message, before what upper layers see
     * (a frag's segments[0] starts that far into its buffer). */
    size_t seq_hdr;
    bool multi_recv;
    bool has_rma;
    /* Whether puts may ask for FI_DELIVERY_COMPLETE (cleared when the
     * provider refuses it once). */
    bool put_delivery_complete;
    /* Whether gets ask for FI_DELIVERY_COMPLETE (btl_ofi_get_delivery_complete;
     * cleared when the provider refuses it once). */
    bool get_delivery_complete;

    opal_free_list_t eager_frags;
    opal_free_list_t max_frags;
    opal_free_list_t rdma_ops;
    opal_free_list_t held;

    mca_btl_ofi_recv_buf_t *recv_bufs;
    size_t recv_buf_count;
    uint8_t *recv_mem;
    opal_common_ofi_mr_t recv_mr;
    /* Some receive buffer could not be posted again yet. */
    bool repost_pending;
    /* Multi-receive buffers retired, and recovered by a release since
     * (reported at finalize with the btl's verbosity). */
    size_t recv_retired;
    size_t recv_recovered;
    /* Receives refused in a row (single receives are tried again). */
    unsigned recv_post_failures;

    mca_btl_base_module_error_cb_fn_t error_cb;
    size_t rdma_outstanding;
    /* Frags and RDMA ops of failed peers, called back already, that the
     * provider has not given back. */
    opal_list_t abandoned;

    bool lists_constructed;
    /* finalize runs: a peer found gone is not reported to the error
     * callback. */
    bool finalizing;

    /* opal_progress_wait: the CQ's fd (registered, or -1), and a timer
     * that polls the CQ when there is no fd (wait_fd_is_timer) and checks
     * the local peers' liveness. */
    int wait_fd;
    int timer_fd;
    bool wait_fd_is_timer;
    /* Liveness of peers in this pid space, checked every so often. */
    unsigned progress_calls;
    uint64_t next_liveness_ns;
    /* opal_pid_space() of this process: peers sharing it are watched. */
    uint64_t pid_space;
    /* Messages dropped for coming from outside the job (reported once). */
    bool reported_stray;
} mca_btl_ofi_module_t;

/* ----------------------------------------------------------- component */

typedef struct mca_btl_ofi_component_t {
    mca_btl_base_component_t super;
    mca_btl_ofi_module_t *module;
    mca_btl_base_module_t *modules[1];

    /* Variables (btl_ofi_*). */
    /* 1: multi-receive buffers when the provider has them, 0: never,
     * -1: when it has them, except shm (slower there than single
     * receives). use_multi_recv is what init decided. */
    int multi_recv;
    bool use_multi_recv;
    /* Gets with FI_DELIVERY_COMPLETE: 1 yes, 0 no, -1 with shm only.
     * use_get_delivery_complete is what init decided. */
    int get_delivery_complete;
    bool use_get_delivery_complete;
    /* Tests: behave as if the provider demanded FI_MR_LOCAL. */
    bool force_mr_local;
    /* Tests: the sequence header mode whatever the provider's CQ data
     * size. use_seq_hdr is what init decided. */
    bool force_seq_header;
    bool use_seq_hdr;
    int inject_batch;
    size_t recv_buffer_size;
    unsigned recv_buffers;
    size_t cq_size;
    bool wait_fd;
    unsigned poll_interval_us;
    unsigned liveness_interval_ms;
    unsigned free_list_max;
    unsigned finalize_timeout_ms;
} mca_btl_ofi_component_t;

OPAL_DECLSPEC extern mca_btl_ofi_component_t mca_btl_ofi_component;

/* The defaults real modules copy (the standard variables are bound here). */
extern mca_btl_ofi_module_t mca_btl_ofi_module_template;

/* The module behind a btl pointer (the btl is its first member; the
 * module's allocation is aligned for all of it). */
static inline struct mca_btl_ofi_module_t *mca_btl_ofi_module(mca_btl_base_module_t *btl)
{
    return (struct mca_btl_ofi_module_t *) (void *) btl;
}

/* ------------------------------------------------------------ internals */

/* Creates the module on ofi (opened), posts its receives; on failure says
 * why in *why (malloc'd) and leaves nothing behind. */
int mca_btl_ofi_module_create(opal_common_ofi_ctx_t *ofi, mca_btl_ofi_module_t **module,
                              char **why);

/* Polls the module's CQ: completions, received messages; returns how
 * many events it handled. */
int mca_btl_ofi_module_progress(mca_btl_ofi_module_t *module);

/* The endpoint of rank, created (modex lookup, AV insert) when missing.
 * NULL when the peer cannot be reached, with why filled. */
mca_btl_ofi_endpoint_t *mca_btl_ofi_endpoint_get(mca_btl_ofi_module_t *module, uint32_t rank,
                                                 mca_btl_base_reason_t *why);

/* Releases every endpoint (module finalize). */
void mca_btl_ofi_endpoints_release(mca_btl_ofi_module_t *module);

/* The peer is gone: marks it failed, calls the error callback, calls back
 * its outstanding operations with OPAL_ERR_UNREACH and drops its held
 * messages. what says how it was found out. */
void mca_btl_ofi_peer_failed(mca_btl_ofi_module_t *module, mca_btl_ofi_endpoint_t *ep,
                             const char *what);

/* The peer said goodbye (it finalized; everything it sent before was
 * delivered): the same as a failure, except that the error callback hears
 * MCA_BTL_ERROR_FLAGS_PEER_CLOSED. */
void mca_btl_ofi_peer_closed(mca_btl_ofi_module_t *module, mca_btl_ofi_endpoint_t *ep);

/* Checks that the local peers still run (every liveness interval). */
void mca_btl_ofi_liveness_check(mca_btl_ofi_module_t *module);

/* "rank 3" for messages (a static buffer per thread). */
const char *mca_btl_ofi_peer_name(const mca_btl_ofi_endpoint_t *ep);

/* Receives: post every buffer; handle a receive completion; post again
 * what can be. */
int mca_btl_ofi_recv_post_all(mca_btl_ofi_module_t *module);
void mca_btl_ofi_recv_complete(mca_btl_ofi_module_t *module, const struct fi_cq_data_entry *entry);
void mca_btl_ofi_recv_error(mca_btl_ofi_module_t *module, const struct fi_cq_err_entry *entry,
                            const char *text);
void mca_btl_ofi_recv_repost(mca_btl_ofi_module_t *module);
/* Frees the receive buffers (after the endpoint is closed). */
void mca_btl_ofi_recv_release(mca_btl_ofi_module_t *module);
/* Gives back what ep holds (its peer failed, or the module goes). */
void mca_btl_ofi_recv_drop_held(mca_btl_ofi_module_t *module, mca_btl_ofi_endpoint_t *ep);

/* Posts the goodbye (MCA_BTL_OFI_TAG_BYE) to ep, with a completion, and
 * marks it sent; caller holds the lock. OPAL_ERR_RESOURCE_BUSY when it
 * must be tried again after progress. */
int mca_btl_ofi_send_bye(mca_btl_ofi_module_t *module, mca_btl_ofi_endpoint_t *ep);

/* Sends and their completions. */
int mca_btl_ofi_send_complete(mca_btl_ofi_module_t *module, mca_btl_ofi_frag_t *frag, int status);
void mca_btl_ofi_frag_release(mca_btl_ofi_frag_t *frag);

/* RDMA and its completions. */
void mca_btl_ofi_rdma_complete(mca_btl_ofi_module_t *module, mca_btl_ofi_rdma_op_t *op, int status);

/* The module's operations. */
int mca_btl_ofi_add_procs(mca_btl_base_module_t *btl, size_t nprocs, opal_proc_t **procs,
                          struct mca_btl_base_endpoint_t **endpoints, opal_bitmap_t *reachable,
                          mca_btl_base_reason_t *reasons);
int mca_btl_ofi_del_procs(mca_btl_base_module_t *btl, size_t nprocs, opal_proc_t **procs,
                          struct mca_btl_base_endpoint_t **endpoints);
int mca_btl_ofi_finalize(mca_btl_base_module_t *btl);
mca_btl_base_descriptor_t *mca_btl_ofi_alloc(mca_btl_base_module_t *btl,
                                             struct mca_btl_base_endpoint_t *endpoint,
                                             uint8_t order, size_t size, uint32_t flags);
int mca_btl_ofi_free(mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des);
mca_btl_base_descriptor_t *mca_btl_ofi_prepare_src(mca_btl_base_module_t *btl,
                                                   struct mca_btl_base_endpoint_t *endpoint,
                                                   const void *data, uint8_t order, size_t reserve,
                                                   size_t *size, uint32_t flags);
int mca_btl_ofi_send(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag);
int mca_btl_ofi_sendi(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      const void *header, size_t header_size, const void *payload,
                      size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                      mca_btl_base_descriptor_t **descriptor);
int mca_btl_ofi_put(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, uint64_t remote_address,
                    mca_btl_base_registration_handle_t *local_handle,
                    mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                    int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata);
int mca_btl_ofi_get(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, uint64_t remote_address,
                    mca_btl_base_registration_handle_t *local_handle,
                    mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                    int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata);
mca_btl_base_registration_handle_t *
mca_btl_ofi_register_mem(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                         void *base, size_t size, uint32_t flags);
int mca_btl_ofi_deregister_mem(mca_btl_base_module_t *btl,
                               mca_btl_base_registration_handle_t *handle);
int mca_btl_ofi_flush(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint);

#endif /* OPAL_MCA_BTL_OFI_BTL_OFI_H */
