/*
 * The bulk framework's base and its engine contract.
 *
 * Users see only bulk.h. This header is for the base's files and the
 * engines (the framework's components, `rdma` and `copy`): the layout of
 * classes, handles and operations, the ops table an engine fills (one
 * comment per entry), and the helpers engines share (range walking over
 * two segment lists, completing an operation exactly once).
 *
 * Life of a transfer: opal_bulk_transfer checks both ranges and the
 * access modes, takes an operation from the class's pool, and picks the
 * engine: "self" (the origin handle is this process's: memcpy), "eager"
 * (a pull from a handle that carried its bytes inline), else the open
 * engine of highest priority whose accepts() says yes. The engine moves
 * the bytes with na operations on the caller's na context and calls
 * opal_bulk_base_op_finish once nothing of it is in flight; that queues
 * the operation's completion on the na context (opal_na_base_op_complete),
 * so the user's callback runs from opal_na_trigger, exactly once.
 */
#ifndef OPAL_MCA_BULK_BASE_BASE_H
#define OPAL_MCA_BULK_BASE_BASE_H

#include "opal/opal_config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/class/opal_hash_table.h"
#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/bulk/bulk.h"
#include "opal/mca/na/base/base.h"

OPAL_DECLSPEC extern mca_base_framework_t opal_bulk_base_framework;

/* bulk_base_verbose's stream. */
#define opal_bulk_base_output (opal_bulk_base_framework.framework_output)

/* Variables of the base (bulk_base_*). */
typedef struct opal_bulk_base_vars_t {
    /* Largest read-only handle serialized with its bytes inline. */
    size_t eager_size;
} opal_bulk_base_vars_t;
OPAL_DECLSPEC extern opal_bulk_base_vars_t opal_bulk_base_vars;

/* Most segments a handle may have (a serialized one with more is refused
 * before anything is allocated for it). */
#define OPAL_BULK_MAX_SEGMENTS (1u << 20)

/* Engines an open class can hold at most (rdma, copy, and room). */
#define OPAL_BULK_MAX_ENGINES 4

struct opal_bulk_engine_t;

struct opal_bulk_class_t {
    opal_na_class_t *na_class;
    /* The bulk service context (OPAL_NA_CONTEXT_ID_BULK), when an engine
     * asked for one; progressed by the class's poll hook. */
    opal_na_context_t *service_ctx;
    /* Open engines by priority, highest first, and each one's state for
     * this class (its class_init set it). */
    const struct opal_bulk_engine_t *engines[OPAL_BULK_MAX_ENGINES];
    void *engine_state[OPAL_BULK_MAX_ENGINES];
    int engine_count;
    /* Handles are registered with the na class (it has RMA and an engine
     * uses it). */
    bool register_memory;
    /* This process's class, as peers see it in serialized handles: a
     * random number, so that a key from another process (or an earlier
     * class) never names one of ours. */
    uint64_t instance;
    /* Local handles by key (for the copy service and transfers whose
     * origin turns out to be this process), under lock. */
    pthread_mutex_t lock;
    opal_hash_table_t handles;
    uint64_t next_key;
    /* Idle operations (linked by next), under lock; transfers in flight. */
    struct opal_bulk_op_t *free_ops;
    _Atomic int32_t pending;
    /* Poll hook state: rounds since the service last had traffic. */
    uint32_t service_idle_rounds;
};

/* A handle: this process's memory (local) or a peer's (remote, from
 * opal_bulk_deserialize). Offsets address the segments' concatenation. */
struct opal_bulk_t {
    opal_bulk_class_t *bc;
    _Atomic int32_t refcount;
    uint32_t count;
    unsigned int flags; /* OPAL_BULK_READ_ONLY / WRITE_ONLY / READ_WRITE */
    bool local;
    size_t size;
    /* count segments; a remote handle's bases are NULL (lengths only). */
    opal_na_segment_t *segs;
    opal_na_segment_t seg1; /* segs points here when count is 1 */
    /* Memory bulk allocated for the NULL bufs, freed with the handle. */
    void *owned;
    /* na memory handles: none, one over every segment, or one per
     * segment (mh_count == count); registered when local. */
    uint32_t mh_count;
    opal_na_mem_handle_t **mhs;
    bool registered;
    /* The origin's class instance and this handle's key there. */
    uint64_t instance;
    uint64_t key;
    /* A remote handle's inline bytes (size of them), or NULL. */
    void *eager;
    /* Bound (opal_bulk_bind, or deserialized from a bound handle). */
    opal_na_addr_t *addr;
    uint8_t ctx_id;
};

/* One transfer. Starts with the na op id its completion is queued with. */
struct opal_bulk_op_t {
    opal_na_op_id_t super;
    struct opal_bulk_op_t *next; /* in the class's pool */
    opal_bulk_class_t *bc;
    opal_na_context_t *na_ctx;
    const struct opal_bulk_engine_t *engine;
    const char *engine_name;
    opal_bulk_cb_t callback;
    void *arg;
    opal_bulk_op_type_t type;
    opal_na_addr_t *origin_addr; /* a reference this op holds */
    uint8_t origin_id;
    opal_bulk_t *origin; /* a reference this op holds */
    size_t origin_offset;
    opal_bulk_t *local; /* a reference this op holds */
    size_t local_offset;
    size_t size;
    /* The engine's state for this transfer (owned by the engine, kept
     * across reuses of the op so that its na op ids are created once). */
    void *engine_data;
    const struct opal_bulk_engine_t *engine_data_owner;
};

/* --------------------------------------------------------- the contract */

/* What an engine is asked about a transfer before it is started. */
typedef struct opal_bulk_xfer_t {
    opal_bulk_op_type_t type;
    opal_bulk_t *origin;
    opal_bulk_t *local;
} opal_bulk_xfer_t;

typedef struct opal_bulk_engine_t {
    /* "rdma", "copy": what opal_bulk_op_engine and the verbose output
     * say. */
    const char *name;
    /* Among engines that accept a transfer the highest priority runs. */
    int priority;
    /* The engine moves bytes with na put / get: the base registers local
     * handles' memory and serializes their na memory handles. */
    bool uses_rma;
    /* The engine needs the bulk service context on every class (origins
     * serve its requests there). */
    bool uses_service;

    /* Sets the engine up for bc (after the service context exists, when
     * asked for); *state is passed back to the other entries. Returns
     * OPAL_ERR_NOT_AVAILABLE after saying why at bulk_base_verbose when
     * it cannot serve this na class (the class then goes without it). */
    int (*class_init)(opal_bulk_class_t *bc, void **state);
    /* Releases what class_init took; no transfer of bc is in flight. */
    void (*class_fini)(opal_bulk_class_t *bc, void *state);

    /* True when the engine can move x; otherwise *why says why not (a
     * static string, for the verbose output). */
    bool (*accepts)(opal_bulk_class_t *bc, void *state, const opal_bulk_xfer_t *x,
                    const char **why);
    /* Starts op (its fields are set; op->engine_data is what this engine
     * left there last time, or NULL). Returns OPAL_SUCCESS once it will
     * call opal_bulk_base_op_finish, or an error with nothing started. */
    int (*start)(opal_bulk_class_t *bc, void *state, opal_bulk_op_t *op);
    /* op was marked canceled: stop issuing, cancel what is in flight
     * where the transport allows, and finish once nothing is. Called from
     * opal_bulk_cancel's thread. */
    void (*cancel)(opal_bulk_class_t *bc, void *state, opal_bulk_op_t *op);
    /* Frees op->engine_data when the class drops its pooled ops. */
    void (*op_data_free)(opal_bulk_class_t *bc, void *state, void *data);
} opal_bulk_engine_t;

typedef struct opal_bulk_base_component_t {
    mca_base_component_t bulk_version;
    const opal_bulk_engine_t *bulk_engine;
} opal_bulk_base_component_t;

#define OPAL_BULK_BASE_VERSION                                                                     \
    MCA_BASE_VERSION_OPAL("bulk", OPAL_BULK_API_MAJOR, OPAL_BULK_API_MINOR, 0)

/* ------------------------------------------------------ for the engines */

/* Ends op once nothing of it is in flight: ret is its result unless it
 * was canceled (then OPAL_ERR_CANCELED). Queues the completion on the
 * op's na context; safe to call once per transfer, from any thread. */
OPAL_DECLSPEC void opal_bulk_base_op_finish(opal_bulk_op_t *op, int ret);

/* True once opal_bulk_cancel marked op. */
static inline bool opal_bulk_base_op_canceled(const opal_bulk_op_t *op)
{
    return OPAL_NA_OP_CANCELING ==
           atomic_load_explicit(&((opal_bulk_op_t *) op)->super.state, memory_order_acquire);
}

/* Walks two ranges of equal length over two lists of regions (segment
 * lengths) in step, giving pieces that lie in one region of each. */
typedef struct opal_bulk_walk_t {
    const opal_na_segment_t *a;
    uint32_t a_count;
    uint32_t a_idx;
    size_t a_off; /* offset inside region a_idx */
    const opal_na_segment_t *b;
    uint32_t b_count;
    uint32_t b_idx;
    size_t b_off;
    size_t left;
} opal_bulk_walk_t;

/* One piece: region indexes, offsets inside them, length. */
typedef struct opal_bulk_piece_t {
    uint32_t a_idx;
    size_t a_off;
    uint32_t b_idx;
    size_t b_off;
    size_t len;
} opal_bulk_piece_t;

/* Starts a walk of len bytes from a_offset in a's concatenation and
 * b_offset in b's (the caller checked both ranges). */
OPAL_DECLSPEC void opal_bulk_walk_init(opal_bulk_walk_t *w, const opal_na_segment_t *a,
                                       uint32_t a_count, size_t a_offset,
                                       const opal_na_segment_t *b, uint32_t b_count,
                                       size_t b_offset, size_t len);
/* The next piece of at most max bytes; false when the walk is done. */
OPAL_DECLSPEC bool opal_bulk_walk_next(opal_bulk_walk_t *w, size_t max, opal_bulk_piece_t *piece);

/* Copies len bytes between a flat buffer and a handle's segments at
 * offset (to_handle: buffer -> handle). */
OPAL_DECLSPEC void opal_bulk_base_copy_flat(opal_bulk_t *h, size_t offset, void *flat, size_t len,
                                            bool to_handle);

/* The local handle with key in bc, with a reference the caller drops
 * (opal_bulk_free); NULL when bc has none. */
OPAL_DECLSPEC opal_bulk_t *opal_bulk_base_handle_lookup(opal_bulk_class_t *bc, uint64_t key);

/* The regions of h's na memory handles (h->mh_count of them, lengths in
 * order): h's segments when it has one na handle per segment, else *one
 * filled with the whole size. */
OPAL_DECLSPEC const opal_na_segment_t *opal_bulk_base_mh_regions(const opal_bulk_t *h,
                                                                 opal_na_segment_t *one);

/* ------------------------------------------------- for the base only */

/* A handle struct with room for count segments, one reference, not in
 * the class's table; _discard frees one that was never handed out. */
opal_bulk_t *opal_bulk_base_handle_alloc(opal_bulk_class_t *bc, uint32_t count);
void opal_bulk_base_handle_discard(opal_bulk_t *h);

/* An idle op of bc's pool (or a new one); NULL when out of memory. */
opal_bulk_op_t *opal_bulk_base_op_get(opal_bulk_class_t *bc);
/* Drops the references a finished op holds and pools it. */
void opal_bulk_base_op_put(opal_bulk_op_t *op);
/* Makes op PENDING on op->na_ctx, its completion running the user's
 * callback. */
void opal_bulk_base_op_arm(opal_bulk_op_t *op);

/* Framework helpers (bulk_base_frame.c): open / close the framework and
 * fill / drain bc's engines. */
int opal_bulk_base_engines_open(opal_bulk_class_t *bc);
void opal_bulk_base_engines_close(opal_bulk_class_t *bc);

#endif /* OPAL_MCA_BULK_BASE_BASE_H */
