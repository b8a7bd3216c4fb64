/*
 * btl (byte transfer layer): moves bytes between the processes of a job.
 * A btl module is one way to reach some peers (this process, the processes
 * of this node through shared memory, the job through a libfabric
 * provider); the framework base (base/base.h) keeps every module that
 * initialised and, for each peer, ranks the modules that reach it
 * (base/btl_base_mux.h).
 *
 * What a module offers:
 *   active messages   a payload of at most btl_max_send_size bytes sent to a
 *                     peer with an 8-bit tag; the receiver's progress calls
 *                     the callback registered for that tag
 *                     (mca_btl_base_am_register). Three ways to send:
 *                       sendi        header + payload copied now, or
 *                                    OPAL_ERR_RESOURCE_BUSY (nothing sent);
 *                       alloc + send fill a descriptor the module owns;
 *                       prepare_src + send  the module packs (or, with
 *                                    MCA_BTL_FLAGS_SEND_INPLACE, points at)
 *                                    the caller's data after reserved
 *                                    header bytes.
 *   RDMA              put / get between registered local memory and a
 *                     peer's registered memory, named by the peer's
 *                     registration handle (fixed-size bytes, no pointers:
 *                     upper layers ship them to peers as they are).
 *
 * Ordering: messages from one process to one peer over one module arrive in
 * the order they were sent, whatever their tags. Nothing is promised across
 * modules, or between active messages and RDMA.
 *
 * Threads: a module's operations may be called from any thread once
 * opal_set_using_threads(true) was said; otherwise from one thread.
 * Callbacks (completion, active message, error) run from opal_progress, or
 * from inside the call that completed the operation when it completes at
 * once (send returning 1 does not call back).
 *
 * Lifecycle: register (variables, mca_btl_base_param_register) -> open ->
 * btl_init (modules) -> add_procs ... del_procs -> btl_finalize -> close.
 */
#ifndef OPAL_MCA_BTL_BTL_H
#define OPAL_MCA_BTL_BTL_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/class/opal_bitmap.h"
#include "opal/class/opal_free_list.h"
#include "opal/mca/mca.h"
#include "opal/runtime/opal_proc.h"

#define OPAL_BTL_API_MAJOR 1
#define OPAL_BTL_API_MINOR 0

/* ------------------------------------------------------------------ tags */

typedef uint8_t mca_btl_base_tag_t;

/* Who may register a callback for which tags. A tag belongs to one
 * callback; ranges keep the layers from colliding. */
#define MCA_BTL_TAG_BTL_MIN  0x00 /* btl components' own control messages */
#define MCA_BTL_TAG_BTL_MAX  0x0f
#define MCA_BTL_TAG_NA_MIN   0x10 /* na over btl */
#define MCA_BTL_TAG_NA_MAX   0x3f
#define MCA_BTL_TAG_RPC_MIN  0x40 /* rpc */
#define MCA_BTL_TAG_RPC_MAX  0x7f
#define MCA_BTL_TAG_USER_MIN 0x80 /* applications, opal_perf, tests */
#define MCA_BTL_TAG_USER_MAX 0xff

/* --------------------------------------------------------------- limits */

/* Module flags (btl_flags; the variable btl_<comp>_flags may clear them,
 * never set what the module cannot do). */
enum {
    MCA_BTL_FLAGS_SEND = 0x0001,         /* active messages */
    MCA_BTL_FLAGS_PUT = 0x0002,          /* btl_put works */
    MCA_BTL_FLAGS_GET = 0x0004,          /* btl_get works */
    MCA_BTL_FLAGS_SEND_INPLACE = 0x0008, /* prepare_src may point at the
                                          * caller's data instead of copying */
    MCA_BTL_FLAGS_ATOMIC_OPS = 0x0010,   /* remote atomics (reserved: no
                                          * module offers them yet) */
    MCA_BTL_FLAGS_SENDI = 0x0020,        /* btl_sendi is provided */
    MCA_BTL_FLAGS_RDMA_WHOLE = 0x0040,   /* a put / get of any size (up to the
                                          * limits) moves fastest as one call:
                                          * the module pipelines or shares it
                                          * itself, so an upper layer that
                                          * pipelines should not cut it */
    MCA_BTL_FLAGS_RDMA = MCA_BTL_FLAGS_PUT | MCA_BTL_FLAGS_GET,
};

/* Exclusivity: a module with a higher value is preferred for a peer it
 * reaches, whatever the latency of the others. */
enum {
    MCA_BTL_EXCLUSIVITY_HIGH = 64 * 1024, /* self */
    MCA_BTL_EXCLUSIVITY_DEFAULT = 1024,   /* network */
    MCA_BTL_EXCLUSIVITY_LOW = 0,
};

/* Registration flags (btl_register_mem). */
enum {
    MCA_BTL_REG_FLAG_LOCAL_READ = 0x1,   /* source of a put */
    MCA_BTL_REG_FLAG_LOCAL_WRITE = 0x2,  /* target of a get */
    MCA_BTL_REG_FLAG_REMOTE_READ = 0x4,  /* peers get from it */
    MCA_BTL_REG_FLAG_REMOTE_WRITE = 0x8, /* peers put into it */
    MCA_BTL_REG_FLAG_ACCESS_ANY = 0xf,
};

/* Descriptor flags (alloc, prepare_src, sendi). */
enum {
    /* The module returns the descriptor to its free list once the send
     * completed and the callback (if any) ran; without it the caller
     * gives it back with btl_free. */
    MCA_BTL_DES_FLAGS_BTL_OWNERSHIP = 0x1,
    /* Call des_cbfunc even when send returns 1 (completed at once). */
    MCA_BTL_DES_SEND_ALWAYS_CALLBACK = 0x2,
    /* A hint that the message is latency-critical. */
    MCA_BTL_DES_FLAGS_PRIORITY = 0x4,
};

/* Error callback flags. */
enum {
    MCA_BTL_ERROR_FLAGS_FATAL = 0x1,       /* the module is unusable */
    MCA_BTL_ERROR_FLAGS_NONFATAL = 0x2,    /* one operation failed */
    MCA_BTL_ERROR_FLAGS_PEER_FAILED = 0x4, /* the peer named is gone */
    /* Not an error: the peer named finalized. What it sent before was
     * delivered first; it sends and answers nothing more. Callbacks that
     * watch for failures only ignore it. btl/sm, btl/tcp and btl/ofi (not
     * over verbs) say it. */
    MCA_BTL_ERROR_FLAGS_PEER_CLOSED = 0x8,
};

/* "Any order": the only order the modules here support. */
#define MCA_BTL_NO_ORDER 255

/* -------------------------------------------------------- data structures */

struct mca_btl_base_module_t;
/* Each component's view of one peer; opaque to upper layers. */
struct mca_btl_base_endpoint_t;
/* Registered memory: btl_registration_handle_size bytes a peer can use
 * to reach it (no pointers: copied as bytes between processes). */
typedef struct mca_btl_base_registration_handle_t mca_btl_base_registration_handle_t;

typedef struct mca_btl_base_segment_t {
    void *seg_addr;
    uint64_t seg_len;
} mca_btl_base_segment_t;

struct mca_btl_base_descriptor_t;

/* A send finished (status OPAL_SUCCESS) or failed (the peer is gone, ...).
 * The descriptor's data may be reused from here on. */
typedef void (*mca_btl_base_completion_fn_t)(struct mca_btl_base_module_t *btl,
                                             struct mca_btl_base_endpoint_t *endpoint,
                                             struct mca_btl_base_descriptor_t *des, int status);

/* A send descriptor: comes from a module's free list (alloc, prepare_src,
 * sendi); segment 0 is where the payload goes (seg_len set to what will
 * be sent; the caller may shorten it before send). */
typedef struct mca_btl_base_descriptor_t {
    opal_free_list_item_t super;
    mca_btl_base_segment_t *des_segments;
    size_t des_segment_count;
    uint32_t des_flags;
    mca_btl_base_completion_fn_t des_cbfunc;
    void *des_cbdata;
    void *des_context;
} mca_btl_base_descriptor_t;
OBJ_CLASS_DECLARATION(mca_btl_base_descriptor_t);

/* What an active-message callback gets. Everything it points at is valid
 * only during the callback: copy what must outlive it. */
typedef struct mca_btl_base_receive_descriptor_t {
    struct mca_btl_base_endpoint_t *endpoint;
    /* The sender. */
    const opal_proc_t *proc;
    const mca_btl_base_segment_t *des_segments;
    size_t des_segment_count;
    mca_btl_base_tag_t tag;
    /* What was given to mca_btl_base_am_register. */
    void *cbdata;
} mca_btl_base_receive_descriptor_t;

typedef void (*mca_btl_base_am_fn_t)(struct mca_btl_base_module_t *btl,
                                     const mca_btl_base_receive_descriptor_t *desc);

/* An RDMA operation finished; status is OPAL_SUCCESS or why it failed. */
typedef void (*mca_btl_base_rdma_completion_fn_t)(struct mca_btl_base_module_t *btl,
                                                  struct mca_btl_base_endpoint_t *endpoint,
                                                  void *local_address,
                                                  mca_btl_base_registration_handle_t *local_handle,
                                                  void *context, void *cbdata, int status);

/* Something went wrong that no operation's status can carry: a peer died
 * (errproc names it, MCA_BTL_ERROR_FLAGS_PEER_FAILED), or the module broke
 * (FATAL); or a peer finalized (MCA_BTL_ERROR_FLAGS_PEER_CLOSED, so that
 * what waits for its answer can stop waiting). info says what happened in
 * words ("sm: rank 3 (pid 4711) exited"). */
typedef void (*mca_btl_base_module_error_cb_fn_t)(struct mca_btl_base_module_t *btl, int32_t flags,
                                                  const opal_proc_t *errproc, const char *info);

/* Why a module does not reach a peer, filled by add_procs. */
#define MCA_BTL_BASE_REASON_MAX 160
typedef struct mca_btl_base_reason_t {
    char text[MCA_BTL_BASE_REASON_MAX];
} mca_btl_base_reason_t;

/* --------------------------------------------------------------- module */

typedef struct mca_btl_base_module_t {
    /* First, as every module: what btl_init returns is one of these. */
    mca_base_module_t super;
    const struct mca_btl_base_component_t *btl_component;

    /* Limits, in bytes. */
    size_t btl_eager_limit;               /* largest active message sent without a
                                           * handshake (sendi and alloc take it) */
    size_t btl_max_send_size;             /* largest active message at all */
    size_t btl_rdma_pipeline_send_length; /* bytes an upper layer sends as
                                           * messages before RDMA starts */
    size_t btl_rdma_pipeline_frag_size;   /* largest single put / get */
    size_t btl_min_rdma_pipeline_size;    /* below this, no RDMA pipeline */
    size_t btl_put_limit;                 /* largest put (0: no limit; SIZE_MAX
                                           * after mca_btl_base_param_verify) */
    size_t btl_get_limit;                 /* largest get (likewise) */
    size_t btl_put_alignment;             /* put / get addresses and sizes
                                           * aligned to these (1: any) */
    size_t btl_get_alignment;
    /* Bytes of a registration handle (0: no registration needed, the
     * handle arguments may be NULL). */
    size_t btl_registration_handle_size;

    uint32_t btl_exclusivity;
    uint32_t btl_latency;   /* microseconds (relative: ranks modules) */
    uint32_t btl_bandwidth; /* Mb/s */
    uint32_t btl_flags;     /* MCA_BTL_FLAGS_* */
    /* What carries the bytes, for tools ("tcp;ofi_rxm, lo": the provider
     * and domain); NULL when the component's name says it all. Owned by
     * the module. */
    const char *btl_transport;

    /* Reachability. add_procs sets bit i of reachable and endpoints[i] for
     * each procs[i] this module reaches (an endpoint it keeps until
     * del_procs); for the others it leaves the bit clear and, when reasons
     * is not NULL, says why in reasons[i] ("peer is on another node").
     * Calling it again for a proc it already reaches returns the same
     * endpoint. Returns OPAL_SUCCESS even when it reaches nobody; an error
     * means the module failed. */
    int (*btl_add_procs)(struct mca_btl_base_module_t *btl, size_t nprocs, opal_proc_t **procs,
                         struct mca_btl_base_endpoint_t **endpoints, opal_bitmap_t *reachable,
                         mca_btl_base_reason_t *reasons);
    /* Forgets the peers (their endpoints are invalid afterwards). */
    int (*btl_del_procs)(struct mca_btl_base_module_t *btl, size_t nprocs, opal_proc_t **procs,
                         struct mca_btl_base_endpoint_t **endpoints);
    /* Releases the module after its last del_procs; it is not used again. */
    int (*btl_finalize)(struct mca_btl_base_module_t *btl);
    /* Installs the error callback (one per module; NULL removes it). */
    int (*btl_register_error)(struct mca_btl_base_module_t *btl,
                              mca_btl_base_module_error_cb_fn_t cbfunc);

    /* A descriptor with room for size bytes (<= btl_eager_limit, or up to
     * btl_max_send_size when the module allows), or NULL when none is
     * free now (progress and retry). */
    mca_btl_base_descriptor_t *(*btl_alloc)(struct mca_btl_base_module_t *btl,
                                            struct mca_btl_base_endpoint_t *endpoint, uint8_t order,
                                            size_t size, uint32_t flags);
    /* Gives back a descriptor the caller owns (alloc or prepare_src
     * without BTL_OWNERSHIP, after its completion). */
    int (*btl_free)(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des);
    /* A descriptor holding reserve bytes for the caller's header, then
     * *size bytes of data (copied, or referenced in place with
     * SEND_INPLACE: data must then stay untouched until completion). *size
     * may come back smaller when the module's limit is reached. NULL when
     * no descriptor is free now. */
    mca_btl_base_descriptor_t *(*btl_prepare_src)(struct mca_btl_base_module_t *btl,
                                                  struct mca_btl_base_endpoint_t *endpoint,
                                                  const void *data, uint8_t order, size_t reserve,
                                                  size_t *size, uint32_t flags);
    /* Sends des with tag. Returns 1 when the send completed at once (the
     * callback is not called unless SEND_ALWAYS_CALLBACK; with
     * BTL_OWNERSHIP the descriptor is already back in the module),
     * OPAL_SUCCESS when des_cbfunc will be called, OPAL_ERR_RESOURCE_BUSY
     * when the module cannot take it now (the caller still owns des), or
     * an error (OPAL_ERR_UNREACH: the peer is gone; the caller still owns
     * des and gives it back with btl_free). */
    int (*btl_send)(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag);
    /* Immediate send: header_size bytes of header then payload_size bytes
     * of payload, as one message (header + payload <= btl_eager_limit),
     * copied before it returns OPAL_SUCCESS. OPAL_ERR_RESOURCE_BUSY when it
     * cannot be done now: then, when descriptor is not NULL, *descriptor
     * may hold a descriptor of header + payload bytes the caller may fill
     * and send later (NULL when none). Optional (NULL). */
    int (*btl_sendi)(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     const void *header, size_t header_size, const void *payload,
                     size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                     mca_btl_base_descriptor_t **descriptor);

    /* RDMA: writes size bytes from local_address (in local_handle's
     * region) to remote_address in the peer's region remote_handle (put),
     * or reads them from there (get). cbfunc runs once the data is in
     * place (get) or has left local memory and will arrive (put).
     * OPAL_ERR_RESOURCE_BUSY when it cannot start now; OPAL_ERR_BAD_PARAM
     * for an address outside a region. Optional (NULL) without the flag. */
    int (*btl_put)(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                   void *local_address, uint64_t remote_address,
                   mca_btl_base_registration_handle_t *local_handle,
                   mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                   int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                   void *cbdata);
    int (*btl_get)(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                   void *local_address, uint64_t remote_address,
                   mca_btl_base_registration_handle_t *local_handle,
                   mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                   int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                   void *cbdata);

    /* Registers [base, base + size) for flags (MCA_BTL_REG_FLAG_*) and
     * returns its handle (btl_registration_handle_size bytes, owned by the
     * module until deregistered), or NULL after saying why. endpoint may be
     * NULL (any peer). Optional (NULL) when the handle size is 0. */
    mca_btl_base_registration_handle_t *(*btl_register_mem)(
        struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint, void *base,
        size_t size, uint32_t flags);
    int (*btl_deregister_mem)(struct mca_btl_base_module_t *btl,
                              mca_btl_base_registration_handle_t *handle);

    /* Waits (progressing) until every put / get started to endpoint (NULL:
     * to every peer) has completed. Optional (NULL: nothing to wait for). */
    int (*btl_flush)(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint);

    /* Describes in buf (one line, cut to size) what the module holds
     * toward endpoint: the connection's state, what is queued to it, what
     * came from it and is not handled yet. For a diagnosis when a wait
     * for the peer times out (mca_btl_base_mux_describe); called by the
     * thread that progresses. Optional (NULL: nothing to say). */
    void (*btl_dump)(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     char *buf, size_t size);
} mca_btl_base_module_t;

/* ------------------------------------------------------------ component */

/* Returns the modules this component can run here (an array the
 * component owns until its close; *num_btls of them), or NULL with
 * *num_btls = 0 after mca_base_component_decline() saying why. */
typedef mca_btl_base_module_t **(*mca_btl_base_component_init_fn_t)(int *num_btls,
                                                                    bool enable_progress_threads,
                                                                    bool enable_mpi_threads);

typedef struct mca_btl_base_component_t {
    mca_base_component_t btl_version;
    mca_btl_base_component_init_fn_t btl_init;
    /* Polls the component's modules: completions, received messages,
     * failed peers; returns the number of events. Registered with
     * opal_progress by the base while the component has modules; NULL
     * when the component needs no polling. */
    int (*btl_progress)(void);
} mca_btl_base_component_t;

#define MCA_BTL_BASE_VERSION MCA_BASE_VERSION_OPAL("btl", OPAL_BTL_API_MAJOR, OPAL_BTL_API_MINOR, 0)

#endif /* OPAL_MCA_BTL_BTL_H */
