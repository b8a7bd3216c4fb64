/*
 * btl/sm: shared memory between the processes of a job on one node.
 *
 * Each process owns one segment in /dev/shm (btl_sm_layout.h) holding its
 * receive FIFO, its outgoing fragments and its outgoing fast boxes. To
 * send, a process fills one of its own fragments and pushes a reference
 * to it (its rank, the fragment's index) into the receiver's FIFO; after
 * btl_sm_fbox_threshold messages to the same peer it sets up a fast box
 * for it and from then on sends everything through that box: small
 * messages inline, larger ones as fragment references, so that order
 * holds. The receiver reads the payload in place, calls the active
 * message callback and marks the fragment done; the sender takes back
 * done fragments in order. Large data moves with put / get: one copy
 * through CMA (process_vm_readv / writev), or, where CMA is not allowed,
 * a pipelined copy through fragments served by the peer's progress.
 *
 * Locking: the module's lock (taken only when opal_using_threads())
 * covers the send side of every endpoint, the free lists' bookkeeping and
 * the endpoint table. The receive side (FIFO consumer, fast boxes in) is
 * only touched by progress, which the engine never runs in two threads
 * at once; callbacks run with no lock held, so they may send.
 */
#ifndef OPAL_MCA_BTL_SM_BTL_SM_H
#define OPAL_MCA_BTL_SM_BTL_SM_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "opal/class/opal_free_list.h"
#include "opal/class/opal_list.h"
#include "opal/mca/btl/base/base.h"
#include "opal/mca/btl/btl.h"
#include "opal/mca/btl/sm/btl_sm_fbox.h"
#include "opal/mca/btl/sm/btl_sm_fifo.h"
#include "opal/mca/btl/sm/btl_sm_layout.h"
#include "opal/threads/opal_mutex.h"
#include "opal/util/opal_fault.h"
#include "opal/util/opal_output.h"

/* The modex key; the record (sm_modex_t) is in btl_sm_layout.h. */
#define SM_MODEX_KEY "btl.sm"

/* Single-copy mechanisms (btl_sm_single_copy_mechanism). */
enum {
    SM_SINGLE_COPY_CMA = 0,
    SM_SINGLE_COPY_NONE = 1,
};

/* Test-only faults (btl_sm_fault_inject): after btl_sm_fault_after
 * messages to a peer, this process writes garbage where that peer reads. */
enum {
    SM_FAULT_NONE = 0,
    SM_FAULT_FIFO_ENTRY = 1, /* a FIFO entry naming a fragment that does not exist */
    SM_FAULT_FRAG_LEN = 2,   /* a fragment header whose length overruns it */
    SM_FAULT_FBOX_SIZE = 3,  /* a fast-box header whose size overruns the ring */
    SM_FAULT_FBOX_TYPE = 4,  /* a fast-box header of an unknown type */
    SM_FAULT_FIFO_TAIL = 5,  /* the peer's FIFO tail set to nonsense */
    SM_FAULT_SPLIT = 6,      /* a shared put / get of one slice */
};

/* The component (const, as every component) and its variables. */
OPAL_DECLSPEC extern const mca_btl_base_component_t mca_btl_sm_component;

/* Most put / get gathered into one CMA call (btl_sm_cma_batch). */
#define SM_CMA_BATCH_MAX 64

typedef struct mca_btl_sm_params_t {
    /* Variables (btl_sm_<name>). */
    unsigned fifo_size;      /* slots in the receive FIFO */
    unsigned eager_frags;    /* fragments of btl_eager_limit bytes */
    unsigned max_frags;      /* fragments of btl_max_send_size bytes */
    unsigned frags_per_peer; /* most fragments one peer may hold */
    unsigned fbox_size;      /* ring bytes of a fast box */
    unsigned fbox_max;       /* fast boxes out (and in) */
    unsigned fbox_threshold; /* messages to a peer before its fast box */
    int single_copy_mechanism;
    bool blocking;
    unsigned liveness_ms; /* how often peers are checked */
    unsigned rdma_ops;    /* emulated put / get in flight */
    size_t split_min;     /* put / get of at least this many bytes are shared; 0: never */
    unsigned split_parts; /* slices of a shared put / get */
    unsigned cma_batch;   /* put / get below split_min gathered into one CMA call; 1: none */
    int fault_inject;     /* SM_FAULT_* (tests) */
    unsigned fault_after;

    int output; /* btl_base_verbose's stream */
} mca_btl_sm_params_t;

extern mca_btl_sm_params_t mca_btl_sm_params;

/* --------------------------------------------------------------- frags */

enum {
    SM_FRAG_USER = 0x1,     /* the caller holds it (alloc / prepare_src) */
    SM_FRAG_INFLIGHT = 0x2, /* posted, the receiver has not marked it done */
    SM_FRAG_PENDING = 0x4,  /* waiting on its endpoint's pending list */
    SM_FRAG_CALLBACK = 0x8, /* des_cbfunc still to be called */
};

/* A descriptor, bound for life to one fragment of this process's
 * segment. */
typedef struct mca_btl_sm_frag_t {
    mca_btl_base_descriptor_t base;
    mca_btl_base_segment_t segment;
    sm_frag_hdr_t *hdr;
    uint8_t *payload;
    uint32_t index;
    uint32_t capacity;
    opal_free_list_t *list;
    struct mca_btl_base_endpoint_t *endpoint;
    uint32_t flags; /* SM_FRAG_* */
    uint8_t tag;    /* while pending */
    uint8_t type;
} mca_btl_sm_frag_t;
OBJ_CLASS_DECLARATION(mca_btl_sm_frag_t);

/* ----------------------------------------------------------- endpoints */

enum {
    SM_EP_CONNECTED = 1,
    SM_EP_CLOSED = 2, /* the peer finalized */
    SM_EP_FAILED = 3, /* the peer died or misbehaved and was dropped */
};

struct sm_rdma_op_t;

typedef struct mca_btl_base_endpoint_t {
    opal_list_item_t super; /* on mca_btl_sm.endpoints */
    opal_proc_t *proc;      /* retained */
    uint32_t rank;
    pid_t pid;
    int pidfd; /* -1 when the kernel has none */
    /* SM_EP_*; read without the lock on every send. */
    _Atomic int state;
    /* Taken care of after a failure (fragments back, callbacks run). */
    bool dropped;
    char reason[MCA_BTL_BASE_REASON_MAX];
    /* add_procs returned it and no del_procs came since. */
    bool added;

    /* The peer's segment, mapped, and its checked layout. */
    char seg_name[SM_SEG_NAME_MAX];
    uint8_t *seg_base;
    size_t seg_size;
    sm_seg_header_t *seg_hdr;
    sm_layout_t layout;
    uint32_t frag_count;

    /* Send side (module lock). */
    sm_fifo_t fifo; /* producer's view of the peer's FIFO */
    sm_fbox_out_t fbox_out;
    bool fbox_out_on;
    uint32_t fbox_out_index; /* which of our boxes fbox_out is */
    uint32_t fifo_sends;
    uint32_t held;              /* fragments out for this peer (caller or in flight) */
    opal_list_t inflight;       /* mca_btl_sm_frag_t, in posting order */
    opal_list_t pending;        /* mca_btl_sm_frag_t waiting for room */
    opal_list_t streams;        /* sm_rdma_op_t with data or messages to send */
    opal_list_item_t work_link; /* on mca_btl_sm.work_eps while it has work */
    bool on_work;
    uint32_t faults_sent; /* SM_FAULT_*: messages sent so far */

    /* Receive side (progress only). */
    sm_fbox_in_t fbox_in;
    bool fbox_in_on;
    /* The last poll of the fast box found messages (poll_fbox's batch). */
    bool fbox_in_busy;
    /* Something went to this peer through our fast box since its last
     * message was taken: set by the sender (module lock), cleared by the
     * poll; when set, a look that finds nothing watches the lines of the
     * answer to come (sm_fbox_watch_ahead). A receiver that only takes a
     * stream does not watch: there the lines it would watch are the ones
     * the sender is writing next. */
    opal_atomic_bool_t fbox_in_awaited;

    /* Single copy through CMA is still allowed with this peer. */
    bool cma;
    /* Blocking mode: the peer's eventfd in this process, or -1. */
    int wake_fd;
} mca_btl_base_endpoint_t;
OBJ_CLASS_DECLARATION(mca_btl_base_endpoint_t);

typedef mca_btl_base_endpoint_t mca_btl_sm_endpoint_t;

/* --------------------------------------------------------------- module */

struct mca_btl_base_registration_handle_t {
    uint64_t base;
    uint64_t length;
    uint32_t owner_rank;
    int32_t owner_pid;
    uint32_t flags;
    uint32_t index;  /* in the owner's registry */
    uint64_t cookie; /* random: a handle that is not the owner's own fails */
};

typedef struct sm_registration_t {
    opal_free_list_item_t super;
    mca_btl_base_registration_handle_t handle;
    bool in_use;
} sm_registration_t;
OBJ_CLASS_DECLARATION(sm_registration_t);

typedef struct mca_btl_sm_module_t {
    mca_btl_base_module_t super;
    mca_btl_base_module_error_cb_fn_t error_cb;
    bool initialized;

    /* This process. */
    uint32_t my_rank;
    uint32_t job_size;
    uint32_t local_size;
    uint32_t jobid;
    pid_t my_pid;
    sm_identity_t identity;

    /* Its segment. */
    char seg_name[SM_SEG_NAME_MAX];
    uint8_t *seg_base;
    size_t seg_size;
    sm_seg_header_t *seg_hdr;
    bool seg_unlinked;
    uint64_t nonce;
    sm_fifo_t fifo; /* the consumer's view */

    /* Descriptors, one per fragment of the segment. */
    opal_free_list_t eager_list;
    opal_free_list_t max_list;
    mca_btl_sm_frag_t **frag_by_index;
    uint32_t frag_count;
    size_t eager_payload, max_payload;
    /* Fast boxes out handed out so far, and those given back by peers
     * that finalized or exited (a stack of indices, reused first). */
    uint32_t fbox_out_used;
    uint32_t *fbox_out_free;
    uint32_t fbox_out_free_count;

    /* Endpoints: by rank (job_size entries, NULL until created), all of
     * them, those with send work, and those whose fast box we poll. */
    mca_btl_sm_endpoint_t **ep_by_rank;
    opal_list_t endpoints;
    /* Retired peers (dropped and given back), kept off endpoints so that
     * its scans cost what the live peers do. */
    opal_list_t retired_eps;
    opal_list_t work_eps;
    mca_btl_sm_endpoint_t **fbox_in_eps;
    uint32_t fbox_in_count;
    /* Fragments in flight, all peers (reclaim runs while non-zero). */
    uint32_t inflight_total;

    /* Registrations (btl_register_mem): by index, with a free list. */
    opal_free_list_t reg_list;
    sm_registration_t **reg_by_index;
    uint32_t reg_count, reg_capacity;
    uint32_t *reg_free_index;
    uint32_t reg_free_count;
    uint64_t cookie_state;
    bool rdma_ready; /* the registry and emulation are set up */

    /* Emulated put / get (btl_sm_rdma_emu.c). */
    struct sm_rdma_op_t *ops;
    uint32_t *op_free;
    uint32_t op_free_count;
    uint32_t ops_active;
    opal_free_list_t serve_list;
    bool cma_notice_given;

    /* Shared put / get (btl_sm_rdma_split.c): ours waiting for the peer to
     * finish its slices, and what was shared (verbose at finalize). */
    opal_free_list_t split_list;
    opal_list_t split_pending;
    /* Ours posted, our slices not yet claimed: the next progress claims
     * and copies them, several transfers' in one CMA call. */
    opal_list_t split_fresh;
    opal_atomic_uint32_t split_fresh_count;   /* its length, read without the lock */
    opal_atomic_uint64_t split_slices_own;    /* slices of ours copied here */
    opal_atomic_uint64_t split_calls;         /* in that many CMA calls */
    opal_atomic_uint32_t split_waiting;       /* length of split_pending, read without the lock */
    uint64_t split_offered;                   /* ours offered to a peer */
    uint64_t split_slices_helped;             /* slices of ours a peer copied */
    opal_atomic_uint64_t split_slices_served; /* slices of peers' we copied */

    /* Put / get below split_min gathered for one CMA call (btl_sm_rdma.c):
     * how many wait, read by progress without the lock. */
    opal_atomic_uint32_t cma_batched;
    uint64_t cma_gathered; /* put / get that went that way */
    uint64_t cma_calls;    /* and the CMA calls that copied them (verbose at finalize) */

    /* Progress bookkeeping. */
    uint32_t poll_count;
    uint64_t next_liveness_ns;
    opal_atomic_bool_t drops_pending; /* mca_btl_sm_endpoint_drop was called */
    /* Ranks a FIFO entry named that cannot be reached (not retried). */
    uint8_t *rank_unreachable;

    /* Blocking mode. */
    int wake_fd;
    bool wake_registered;
    /* Every local peer can wake us (then sleeping is allowed), or one
     * cannot (then never: the eventfd stays readable). */
    bool wake_sleep_ok;
    bool wake_never_sleep;
    /* Every local peer was connected to (blocking mode, at the first arm). */
    bool wake_peers_connected;

    opal_mutex_t lock;
} mca_btl_sm_module_t;

OPAL_DECLSPEC extern mca_btl_sm_module_t mca_btl_sm;

/* The struct of type holding member at ptr. */
#define SM_CONTAINER_OF(ptr, type, member)                                                         \
    ((type *) (void *) ((char *) (ptr) -offsetof(type, member)))

#define SM_LOCK()   OPAL_THREAD_LOCK(&mca_btl_sm.lock)
#define SM_UNLOCK() OPAL_THREAD_UNLOCK(&mca_btl_sm.lock)

#define SM_VERBOSE(level, ...) opal_output_verbose((level), mca_btl_sm_params.output, __VA_ARGS__)

/* ------------------------------------------------------------ functions */

/* btl_sm_segment.c: this process's segment and the peers'. */
int mca_btl_sm_segment_create(void);
void mca_btl_sm_segment_destroy(void);
/* Maps the peer's published segment into ep (seg_*, layout); on failure
 * says why in why (why_size bytes). */
int mca_btl_sm_segment_attach(mca_btl_sm_endpoint_t *ep, const sm_modex_t *modex, char *why,
                              size_t why_size);
void mca_btl_sm_segment_detach(mca_btl_sm_endpoint_t *ep);
/* The layout this process will use, from the variables. */
int mca_btl_sm_layout_compute(sm_layout_t *layout);

/* btl_sm_endpoint.c */
/* The endpoint of rank, creating it (modex lookup, attach) when needed;
 * NULL with why filled when the peer cannot be reached. Module lock held. */
mca_btl_sm_endpoint_t *mca_btl_sm_endpoint_get(uint32_t rank, opal_proc_t *proc, char *why,
                                               size_t why_size);
/* Marks a peer closed (SM_EP_CLOSED: it finalized) or failed
 * (SM_EP_FAILED: it died or misbehaved; format says how, naming it): no
 * more sends to it from now on. The rest happens in progress
 * (mca_btl_sm_endpoint_process_drops). Callable with or without the
 * module lock. */
void mca_btl_sm_endpoint_drop(mca_btl_sm_endpoint_t *ep, int state, const char *format, ...)
    OPAL_PRINTF_LIKE(3, 4);
/* For every peer dropped since the last call: stops polling it (failed)
 * or delivers what it sent (closed), takes its fragments back, completes
 * what waited for it with OPAL_ERR_UNREACH, and calls the error callback
 * (PEER_FAILED or PEER_CLOSED). Progress only, lock not held. */
int mca_btl_sm_endpoint_process_drops(void);
/* btl_sm_recv.c: delivers what a peer that finalized sent before it did
 * (its fast box, and this process's FIFO until empty), in a bounded
 * number of passes. Progress only, lock not held. */
void mca_btl_sm_recv_drain(mca_btl_sm_endpoint_t *ep);
/* Checks every peer's process and segment; returns the events. */
int mca_btl_sm_endpoint_check_peers(void);
void mca_btl_sm_endpoint_add_work(mca_btl_sm_endpoint_t *ep);

/* btl_sm_frag.c */
int mca_btl_sm_frags_init(void);
void mca_btl_sm_frags_fini(void);
/* A fragment for ep with room for size bytes (eager or max), or NULL
 * (none free, or ep holds its share). Module lock held. */
mca_btl_sm_frag_t *mca_btl_sm_frag_get(mca_btl_sm_endpoint_t *ep, size_t size);
/* Back to its free list (not in flight, not held by the caller). */
void mca_btl_sm_frag_return(mca_btl_sm_frag_t *frag);
/* Takes back the fragments of ep the receiver is done with; runs the
 * callbacks due (module lock held on entry and exit, dropped around
 * callbacks). Returns how many came back. */
int mca_btl_sm_frag_reclaim(mca_btl_sm_endpoint_t *ep);

mca_btl_base_descriptor_t *mca_btl_sm_alloc(mca_btl_base_module_t *btl,
                                            mca_btl_base_endpoint_t *endpoint, uint8_t order,
                                            size_t size, uint32_t flags);
int mca_btl_sm_free(mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des);
mca_btl_base_descriptor_t *mca_btl_sm_prepare_src(mca_btl_base_module_t *btl,
                                                  mca_btl_base_endpoint_t *endpoint,
                                                  const void *data, uint8_t order, size_t reserve,
                                                  size_t *size, uint32_t flags);

/* btl_sm_send.c */
int mca_btl_sm_send(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *endpoint,
                    mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag);
int mca_btl_sm_sendi(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *endpoint,
                     const void *header, size_t header_size, const void *payload,
                     size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                     mca_btl_base_descriptor_t **descriptor);
/* Posts a filled fragment (hdr len/tag/type set) to ep: OPAL_SUCCESS (now
 * in flight), OPAL_ERR_RESOURCE_BUSY (no room; nothing changed). Module
 * lock held. */
int mca_btl_sm_post_frag(mca_btl_sm_endpoint_t *ep, mca_btl_sm_frag_t *frag);
/* Retries what waits on the endpoints with work; returns the events. */
int mca_btl_sm_send_progress(void);

/* btl_sm_recv.c */
int mca_btl_sm_component_progress(void);
/* True when a message is waiting in the FIFO or a fast box (looks only). */
bool mca_btl_sm_recv_pending(void);

/* btl_sm_rdma.c */
mca_btl_base_registration_handle_t *mca_btl_sm_register_mem(mca_btl_base_module_t *btl,
                                                            mca_btl_base_endpoint_t *endpoint,
                                                            void *base, size_t size,
                                                            uint32_t flags);
int mca_btl_sm_deregister_mem(mca_btl_base_module_t *btl,
                              mca_btl_base_registration_handle_t *handle);
/* The registration a peer's request names, when it covers
 * [address, address + length) for access; NULL otherwise. */
const mca_btl_base_registration_handle_t *
mca_btl_sm_registration_find(uint32_t index, uint64_t cookie, uint64_t address, uint64_t length,
                             uint32_t access);
/* Checks a peer's handle for an access of [address, address + size). */
int mca_btl_sm_handle_check(const mca_btl_sm_endpoint_t *ep,
                            const mca_btl_base_registration_handle_t *handle, uint64_t address,
                            size_t size, uint32_t access);
int mca_btl_sm_put(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *endpoint,
                   void *local_address, uint64_t remote_address,
                   mca_btl_base_registration_handle_t *local_handle,
                   mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                   int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                   void *cbdata);
int mca_btl_sm_get(mca_btl_base_module_t *btl, mca_btl_base_endpoint_t *endpoint,
                   void *local_address, uint64_t remote_address,
                   mca_btl_base_registration_handle_t *local_handle,
                   mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                   int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                   void *cbdata);
int mca_btl_sm_rdma_init(void);
void mca_btl_sm_rdma_fini(void);
/* One copy between our memory and ep's through CMA: OPAL_SUCCESS,
 * OPAL_ERR_NOT_SUPPORTED when the kernel refuses CMA with this peer,
 * OPAL_ERR_UNREACH when it is gone, OPAL_ERR_BAD_PARAM for a bad address. */
int mca_btl_sm_cma_copy(const mca_btl_sm_endpoint_t *ep, void *local, uint64_t remote, size_t size,
                        bool is_get);
/* One CMA call of n iovecs each way with ep (none when ep is no longer
 * connected); returns how many leading iovecs it copied whole. The rest
 * are for the caller to copy alone (mca_btl_sm_cma_copy), which names
 * each one's error. */
struct iovec;
uint32_t mca_btl_sm_cma_copyv(const mca_btl_sm_endpoint_t *ep, bool is_get,
                              const struct iovec *local, const struct iovec *remote, uint32_t n);
/* Copies the put / get gathered for one CMA call and runs their callbacks
 * (called without the lock); returns how many completed. */
int mca_btl_sm_cma_flush(void);
/* CMA was refused with ep (errno err): it is not tried again with this
 * peer, and the operation goes through the emulation. Lock not held. */
int mca_btl_sm_rdma_fallback(mca_btl_sm_endpoint_t *ep, int err, bool is_get, void *local_address,
                             uint64_t remote_address,
                             mca_btl_base_registration_handle_t *local_handle,
                             const mca_btl_base_registration_handle_t *remote_handle, size_t size,
                             mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                             void *cbdata);

/* btl_sm_rdma_split.c: put / get shared with the peer. */
int mca_btl_sm_split_init(void);
void mca_btl_sm_split_fini(void);
/* Offers a CMA put / get of size bytes to ep and copies the slices this
 * process claims; completes now or from progress. OPAL_ERR_NOT_AVAILABLE
 * when it was not offered (too small, no fragment): the caller copies
 * alone. Lock not held. */
int mca_btl_sm_split_start(mca_btl_sm_endpoint_t *ep, bool is_get, void *local_address,
                           uint64_t remote_address,
                           mca_btl_base_registration_handle_t *local_handle,
                           const mca_btl_base_registration_handle_t *remote_handle, size_t size,
                           mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata);
/* SM_MSG_SPLIT from ep (in its segment, len bytes): copies the slices
 * this process can claim. OPAL_ERR_PROTOCOL with the reason in why when
 * the message is malformed. Progress only, lock not held. */
int mca_btl_sm_split_serve(mca_btl_sm_endpoint_t *ep, sm_split_msg_t *msg, size_t len, char *why,
                           size_t why_size);
/* Completes the shared operations whose slices are all done, or whose
 * peer is gone; returns how many. Progress calls it only while
 * split_waiting is not zero. Lock not held. */
int mca_btl_sm_split_progress(void);
/* True while ep (any endpoint when NULL) has shared operations waiting. */
bool mca_btl_sm_split_busy(const mca_btl_sm_endpoint_t *ep);

/* btl_sm_rdma_emu.c: put / get through fragments. */
int mca_btl_sm_emu_init(void);
void mca_btl_sm_emu_fini(void);
int mca_btl_sm_emu_start(mca_btl_sm_endpoint_t *ep, bool is_get, void *local_address,
                         uint64_t remote_address, mca_btl_base_registration_handle_t *local_handle,
                         const mca_btl_base_registration_handle_t *remote_handle, size_t size,
                         mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata);
/* Handles an emulated RDMA message from ep (payload len bytes, read from
 * its segment); OPAL_ERR_PROTOCOL when it is malformed. */
int mca_btl_sm_emu_handle(mca_btl_sm_endpoint_t *ep, uint8_t type, const uint8_t *payload,
                          size_t len);
/* Sends what ep's streams can send now (module lock held). Returns the
 * events. */
int mca_btl_sm_emu_push(mca_btl_sm_endpoint_t *ep);
/* Completes ep's operations with status (the peer is gone). Module lock
 * NOT held. */
void mca_btl_sm_emu_fail(mca_btl_sm_endpoint_t *ep, int status);
int mca_btl_sm_emu_flush(mca_btl_sm_endpoint_t *ep);

/* btl_sm_wake.c: blocking mode. */
int mca_btl_sm_wake_init(void);
void mca_btl_sm_wake_fini(void);
/* Gets the peer's eventfd (blocking mode); tells it when that fails. */
void mca_btl_sm_wake_connect(mca_btl_sm_endpoint_t *ep, int32_t peer_fd);
/* After a post to ep: wakes it when it may be asleep. */
static inline void sm_wake_peer(mca_btl_sm_endpoint_t *ep);
/* After a progress pass that found work: a sleeper is awake again. */
void mca_btl_sm_wake_disarm(void);
void mca_btl_sm_wake_peer_slow(mca_btl_sm_endpoint_t *ep);

static inline void sm_wake_peer(mca_btl_sm_endpoint_t *ep)
{
    if (OPAL_UNLIKELY(mca_btl_sm_params.blocking)) {
        mca_btl_sm_wake_peer_slow(ep);
    }
}

#endif /* OPAL_MCA_BTL_SM_BTL_SM_H */
