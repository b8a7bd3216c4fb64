/*
 * btl/verbs: active messages and RDMA straight over rdma-core, one module
 * per active port of every device that btl_verbs_if_include /
 * btl_verbs_if_exclude allow, nearest to the process's binding first
 * (btl_verbs_near.h).
 *
 * Per module: a protection domain, one completion queue with a completion
 * channel (its fd is what opal_progress_wait sleeps on), one shared
 * receive queue whose buffers come from a free list of registered memory,
 * and one RC queue pair per peer rank. Every QP is created at init (in
 * RESET) and its number published in the modex (btl_verbs_modex.h), so
 * the two ends of a connection know each other's QPN, PSN, GID and LID
 * without a handshake: each side brings its own QP through INIT, RTR and
 * RTS from the peer's record. The record lists every port of the process;
 * a module talks to the peer's port on its subnet (mca_btl_verbs_modex_pair). The first add_procs
 * does it for every rank that published one (a peer that never adds this process may still send to
 * it, so its QP here must be up), a 100 ms timer polls the modex for the records still missing
 * (connect_pending), and a first send to a peer not yet connected does it then. A packet that
 * reaches a QP not yet in RTR is dropped and retransmitted by the sender's RC transport, so both
 * sides starting at once needs no ordering between them.
 *
 * Active messages are IBV_WR_SEND_WITH_IMM: the payload is the message,
 * the immediate data carries the tag (bits 0-7) and credits given back
 * to the receiver of this message (bits 8-23). RC delivers in order per
 * QP, and a QP is one peer, so no sequence numbers are needed. Messages
 * up to the QP's inline size are sent inline (copied into the WQE).
 *
 * Flow control: a peer may have at most `credits` messages in this
 * process's receive buffers; the shared receive queue holds
 * credits + 1 buffers per peer (the one for a credit-only message, at
 * most one of which is in flight per peer). A receiver returns credits in
 * the immediate data of its own messages, or, once half a window is
 * owed and nothing goes the other way, in a credit-only message. Send
 * queue slots and completion queue entries are counted too, so the CQ
 * never overflows and a send never meets a full SQ: the caller is told
 * OPAL_ERR_RESOURCE_BUSY instead.
 *
 * RDMA is IBV_WR_RDMA_WRITE / IBV_WR_RDMA_READ with the peer's rkey and
 * address from its registration handle; registrations go through an
 * opal_rcache_t (btl_verbs_rcache_limit bounds the memory pinned), keyed
 * by the IBV access bits the register flags ask for, and watching the
 * memory release hooks (opal_rcache_watch; without hooks a registration
 * is invalidated at its last deregister).
 *
 * Locking: the module's recursive lock when opal_using_threads().
 */
#ifndef OPAL_MCA_BTL_VERBS_BTL_VERBS_H
#define OPAL_MCA_BTL_VERBS_BTL_VERBS_H

#include "opal/opal_config.h"

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#if defined(HAVE_VALGRIND_MEMCHECK_H)
#include <valgrind/memcheck.h>
#endif

#include "opal/class/opal_free_list.h"
#include "opal/class/opal_hash_table.h"
#include "opal/class/opal_list.h"
#include "opal/class/opal_rcache.h"
#include "opal/mca/btl/base/base.h"
#include "opal/mca/btl/btl.h"
#include "opal/mca/btl/verbs/btl_verbs_modex.h"
#include "opal/threads/opal_mutex.h"

/* Immediate data: tag, credits returned. */
#define MCA_BTL_VERBS_IMM_TAG_BITS   8
#define MCA_BTL_VERBS_IMM_CREDIT_MAX 0xffffu
static inline uint32_t mca_btl_verbs_imm_make(mca_btl_base_tag_t tag, uint32_t credits)
{
    return (uint32_t) tag | (credits << MCA_BTL_VERBS_IMM_TAG_BITS);
}

/* btl/verbs's own message: credits only, never dispatched. */
#define MCA_BTL_VERBS_TAG_CREDITS (MCA_BTL_TAG_BTL_MIN + 0x0e)

/* What a work request's wr_id points at. */
typedef enum {
    MCA_BTL_VERBS_WR_SEND,
    MCA_BTL_VERBS_WR_RECV,
    MCA_BTL_VERBS_WR_RDMA,
    MCA_BTL_VERBS_WR_CREDITS, /* a credit-only message (the endpoint's) */
    MCA_BTL_VERBS_WR_INLINE,  /* a sendi sent inline (the endpoint's) */
    MCA_BTL_VERBS_WR_PROBE,   /* a liveness probe (the endpoint's) */
} mca_btl_verbs_wr_kind_t;

struct mca_btl_verbs_module_t;
struct mca_btl_base_endpoint_t;

/* A send descriptor (alloc, prepare_src, sendi that could not go inline)
 * or a receive buffer: a free-list item whose payload is registered. */
typedef struct mca_btl_verbs_frag_t {
    mca_btl_base_descriptor_t base;
    mca_btl_verbs_wr_kind_t kind;
    mca_btl_base_segment_t segment;
    struct mca_btl_base_endpoint_t *endpoint;
    uint32_t lkey;
    /* Posted to the SQ, completion not yet seen. */
    bool posted;
} mca_btl_verbs_frag_t;
OBJ_CLASS_DECLARATION(mca_btl_verbs_frag_t);

/* A put or get in flight. */
/* The device writes received messages and the data of RDMA reads into
 * this process's memory without a system call memcheck could see: under
 * valgrind those bytes would read as uninitialised. Marked defined at
 * their completion; nothing outside valgrind (a few instructions). */
#if defined(HAVE_VALGRIND_MEMCHECK_H)
#define MCA_BTL_VERBS_MEM_DEFINED(addr, len) ((void) VALGRIND_MAKE_MEM_DEFINED((addr), (len)))
#else
#define MCA_BTL_VERBS_MEM_DEFINED(addr, len) ((void) 0)
#endif

typedef struct mca_btl_verbs_rdma_op_t {
    opal_free_list_item_t super;
    mca_btl_verbs_wr_kind_t kind;
    struct mca_btl_base_endpoint_t *endpoint;
    void *local_address;
    size_t size;
    bool get; /* an RDMA read: the device fills local_address */
    mca_btl_base_registration_handle_t *local_handle;
    mca_btl_base_rdma_completion_fn_t cbfunc;
    void *cbcontext;
    void *cbdata;
} mca_btl_verbs_rdma_op_t;
OBJ_CLASS_DECLARATION(mca_btl_verbs_rdma_op_t);

/* Connection states of an endpoint's QP. */
typedef enum {
    MCA_BTL_VERBS_EP_CLOSED, /* in RESET; the peer's record not read */
    MCA_BTL_VERBS_EP_READY,  /* RTS */
    MCA_BTL_VERBS_EP_FAILED, /* error state or peer gone */
} mca_btl_verbs_ep_state_t;

typedef struct mca_btl_base_endpoint_t {
    struct mca_btl_verbs_module_t *module;
    opal_proc_t *proc; /* retained */
    uint32_t rank;
    struct ibv_qp *qp;
    mca_btl_verbs_ep_state_t state;
    bool added;
    /* Messages this process may still send (peer's buffers free). */
    uint32_t send_credits;
    /* Messages received and consumed whose credit the peer has not got. */
    uint32_t credits_owed;
    /* A credit-only message is in flight. */
    bool credit_msg_posted;
    /* Work requests posted to the QP whose completion is not yet seen,
     * and of those the puts and gets. */
    uint32_t sq_posted;
    uint32_t rdma_posted;
    /* What the wr_id of a credit-only message and of an inline sendi
     * points at (they have no descriptor of their own). */
    mca_btl_verbs_wr_kind_t credit_kind;
    mca_btl_verbs_wr_kind_t inline_kind;
    mca_btl_verbs_wr_kind_t probe_kind;
    /* Out of credits, a sender cannot tell a slow peer from a dead one:
     * a zero-length RDMA write needs the peer's QP to acknowledge it, so
     * it completes in error (retries exceeded) once the peer is gone.
     * One in flight at most, one per second at most. */
    bool probe_posted;
    uint64_t probe_next_ns;
    /* The peer's pid when it runs on this node (liveness checks), else 0. */
    pid_t pid;
    /* The liveness check saw its process gone; the next check decides
     * (completions of what it sent before may still wait in the CQ). */
    bool exit_seen;
    /* Its record was read and refused (declined, malformed, another
     * subnet): why, for add_procs; it is not looked for again. */
    bool refused;
    char refused_why[MCA_BTL_BASE_REASON_MAX];
} mca_btl_verbs_endpoint_t;

/* Registered memory as peers see it (no pointers). */
struct mca_btl_base_registration_handle_t {
    uint64_t base;
    uint64_t size;
    uint32_t rkey;
    uint32_t lkey;
};

/* One btl_register_mem: the handle first (its address is the
 * registration's), the cache entry it holds. */
typedef struct mca_btl_verbs_reg_t {
    mca_btl_base_registration_handle_t handle;
    opal_rcache_entry_t *entry;
} mca_btl_verbs_reg_t;

typedef struct mca_btl_verbs_module_t {
    mca_btl_base_module_t super;
    opal_recursive_mutex_t lock;
    char transport[96];

    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_comp_channel *channel;
    struct ibv_cq *cq;
    struct ibv_srq *srq;
    uint8_t port;
    int gid_index;
    mca_btl_verbs_modex_port_t addr; /* what this process published (qpns unset) */
    /* Its port's index in the component's record (own). */
    unsigned record_index;
    struct ibv_port_attr port_attr;
    char dev_name[64];

    uint32_t my_rank;
    uint32_t job_size;
    mca_btl_verbs_endpoint_t **endpoints; /* by rank */
    /* Local QPN -> endpoint, for receive completions (wc.qp_num). */
    opal_hash_table_t qpn_to_ep;

    uint8_t rd_atom;     /* RDMA reads in flight per QP, each way */
    uint32_t credits;    /* per peer */
    uint32_t sq_depth;   /* per QP */
    uint32_t inline_max; /* bytes a send may carry inline */
    size_t srq_size;
    size_t cq_size;
    /* Send-side work requests posted, whose completions may still come;
     * kept within cq_size less the receive buffers. */
    size_t sq_pending;
    size_t sq_pending_max;
    size_t rdma_posted;
    /* Every peer's QP was tried once (the first add_procs). */
    bool connected_all;
    /* Endpoints still CLOSED and not refused: a peer may send to this
     * process before this process adds it, so until none is left a timer
     * (and progress) polls the modex for their records every 100 ms. */
    unsigned closed_count;
    int connect_timer_fd;
    uint64_t next_connect_ns;
    /* Liveness of the peers on this node: checked every so often from
     * progress and when a peer has no credits left (see liveness_check). */
    unsigned progress_calls;
    uint64_t next_liveness_ns;

    opal_free_list_t send_frags;
    opal_free_list_t recv_frags;
    /* Every receive buffer (srq_size of them; those with posted set are
     * in the SRQ and go back to recv_frags at finalize). */
    mca_btl_verbs_frag_t **recv_all;
    opal_free_list_t rdma_ops;
    bool lists_constructed;
    opal_rcache_t rcache;
    bool rcache_constructed;

    mca_btl_base_module_error_cb_fn_t error_cb;
    int channel_fd;
    int async_fd;
    bool finalizing;
    bool fatal;
} mca_btl_verbs_module_t;

typedef struct mca_btl_verbs_component_t {
    mca_btl_base_component_t super;
    /* The modules, nearest first; NULL once finalized. */
    unsigned num_modules;
    mca_btl_verbs_module_t *module[MCA_BTL_VERBS_MODEX_PORTS_MAX];
    mca_btl_base_module_t *modules[MCA_BTL_VERBS_MODEX_PORTS_MAX];
    /* What this process published: its ports by device name and port
     * number (qpns unset), pid and job size. */
    mca_btl_verbs_modex_t own;

    /* Variables (btl_verbs_*). */
    char *if_include;
    char *if_exclude;
    int gid_index;     /* -1: chosen by gid_type */
    char *gid_type;    /* "roce-v2-ipv4", "roce-v2", "roce-v1", "ib", "any" */
    unsigned credits;  /* per peer */
    unsigned srq_max;  /* receive buffers at most */
    unsigned sq_depth; /* per QP */
    unsigned inline_size;
    unsigned max_qps; /* peers at most (QPs created at init) */
    size_t rcache_limit;
    unsigned free_list_max;
    unsigned timeout; /* RC local ACK timeout exponent */
    unsigned retry_cnt;
    unsigned finalize_timeout_ms;
} mca_btl_verbs_component_t;

OPAL_DECLSPEC extern mca_btl_verbs_component_t mca_btl_verbs_component;
extern mca_btl_verbs_module_t mca_btl_verbs_module_template;

static inline mca_btl_verbs_module_t *mca_btl_verbs_module(mca_btl_base_module_t *btl)
{
    return (mca_btl_verbs_module_t *) (void *) btl;
}

/* ------------------------------------------------------------ internals */

/* Creates the module on the opened device ctx (taken over, closed on
 * failure) and port; on failure says why in *why (malloc'd). */
int mca_btl_verbs_module_create(struct ibv_context *ctx, uint8_t port, int gid_index,
                                const struct ibv_port_attr *port_attr,
                                mca_btl_verbs_module_t **module, char **why);

/* The QPNs of the module's queue pairs by peer rank (0 at its own), for
 * the record: a malloc'd array of job_size, or NULL. */
uint32_t *mca_btl_verbs_module_qpns(mca_btl_verbs_module_t *module);

int mca_btl_verbs_module_progress(mca_btl_verbs_module_t *module);

/* Brings ep's QP up from the peer's modex record (waiting up to
 * wait_ns for it; 0: only if already there). OPAL_SUCCESS, or
 * OPAL_ERR_UNREACH with why filled. */
int mca_btl_verbs_endpoint_connect(mca_btl_verbs_module_t *module, mca_btl_verbs_endpoint_t *ep,
                                   int64_t wait_ns, mca_btl_base_reason_t *why);

/* Looks (without waiting) for the records of peers not connected yet and
 * brings their QPs up; closes the connection timer once none is left. */
void mca_btl_verbs_connect_pending(mca_btl_verbs_module_t *module);

/* Starts the 100 ms timer that calls connect_pending from
 * opal_progress_wait (module->connect_timer_fd). */
int mca_btl_verbs_connect_timer_open(mca_btl_verbs_module_t *module);

/* The peer is gone, its QP broke, or the module's port or device did:
 * marks ep failed, reports it once to the error callback with what. */
void mca_btl_verbs_peer_failed(mca_btl_verbs_module_t *module, mca_btl_verbs_endpoint_t *ep,
                               const char *what);

const char *mca_btl_verbs_peer_name(const mca_btl_verbs_endpoint_t *ep);

/* Reports the peers on this node whose process is gone (at most every
 * 100 ms unless force). A dead peer's QP does not always fail the
 * sends to it: rxe (soft-RoCE) retransmits to a destroyed QP of the same
 * device without end, so a sender out of credits would wait forever. */
void mca_btl_verbs_liveness_check(mca_btl_verbs_module_t *module, bool force);

/* Sends and receives (btl_verbs_send.c). */
int mca_btl_verbs_recv_post(mca_btl_verbs_module_t *module, size_t count);
void mca_btl_verbs_handle_recv(mca_btl_verbs_module_t *module, const struct ibv_wc *wc);
void mca_btl_verbs_send_complete(mca_btl_verbs_module_t *module, mca_btl_verbs_frag_t *frag,
                                 int status);
/* Sends a credit-only message to ep when half a window is owed. */
void mca_btl_verbs_credits_check(mca_btl_verbs_module_t *module, mca_btl_verbs_endpoint_t *ep);
void mca_btl_verbs_rdma_complete(mca_btl_verbs_module_t *module, mca_btl_verbs_rdma_op_t *op,
                                 int status);

/* Registration cache hooks (btl_verbs_rdma.c). */
int mca_btl_verbs_rcache_register(void *ctx, void *base, size_t size, unsigned access, void **reg);
void mca_btl_verbs_rcache_deregister(void *ctx, void *reg);

/* The module's operations. */
int mca_btl_verbs_add_procs(mca_btl_base_module_t *btl, size_t nprocs, opal_proc_t **procs,
                            struct mca_btl_base_endpoint_t **endpoints, opal_bitmap_t *reachable,
                            mca_btl_base_reason_t *reasons);
int mca_btl_verbs_del_procs(mca_btl_base_module_t *btl, size_t nprocs, opal_proc_t **procs,
                            struct mca_btl_base_endpoint_t **endpoints);
int mca_btl_verbs_finalize(mca_btl_base_module_t *btl);
mca_btl_base_descriptor_t *mca_btl_verbs_alloc(mca_btl_base_module_t *btl,
                                               struct mca_btl_base_endpoint_t *endpoint,
                                               uint8_t order, size_t size, uint32_t flags);
int mca_btl_verbs_free(mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des);
mca_btl_base_descriptor_t *mca_btl_verbs_prepare_src(mca_btl_base_module_t *btl,
                                                     struct mca_btl_base_endpoint_t *endpoint,
                                                     const void *data, uint8_t order,
                                                     size_t reserve, size_t *size, uint32_t flags);
int mca_btl_verbs_send(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                       mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag);
int mca_btl_verbs_sendi(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                        const void *header, size_t header_size, const void *payload,
                        size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                        mca_btl_base_descriptor_t **descriptor);
int mca_btl_verbs_put(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      void *local_address, uint64_t remote_address,
                      mca_btl_base_registration_handle_t *local_handle,
                      mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                      int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                      void *cbdata);
int mca_btl_verbs_get(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      void *local_address, uint64_t remote_address,
                      mca_btl_base_registration_handle_t *local_handle,
                      mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                      int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                      void *cbdata);
mca_btl_base_registration_handle_t *
mca_btl_verbs_register_mem(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                           void *base, size_t size, uint32_t flags);
int mca_btl_verbs_deregister_mem(mca_btl_base_module_t *btl,
                                 mca_btl_base_registration_handle_t *handle);
int mca_btl_verbs_flush(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint);

#endif /* OPAL_MCA_BTL_VERBS_BTL_VERBS_H */
