/*
 * na/btl: the na contract (na.h) over the BTL multiplexer
 * (btl/base/btl_base_mux.h), so that every BTL transport (self, sm, ofi)
 * carries RPC.
 *
 * Peers are ranks of a job. Inside an mcarun job that is the job; a
 * process started alone (no runtime installed) joins the node's
 * "standalone job" as rank = its pid (na_btl_rte.c), and its URI carries
 * its business card (what its BTLs published in the modex), so that a
 * peer that looks it up can answer the BTLs' modex questions about it.
 *
 * Messages are active messages on two tags of the na range (unexpected,
 * expected) with an 8-byte header (na_btl_wire.h); the sender's rank comes
 * from the BTL. Receives are matched in the tag's callback (progress):
 * posted receives are filled there directly, messages no receive waits
 * for are copied and kept per context until one is posted.
 *
 * Locking: one class lock (taken only when opal_using_threads()) covers
 * every queue of every context and the address table; completions are
 * queued on the base's CQs with it held (lock order: class, then CQ).
 */
#ifndef OPAL_MCA_NA_BTL_NA_BTL_H
#define OPAL_MCA_NA_BTL_NA_BTL_H

#include "opal/opal_config.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/mca/btl/base/base.h"
#include "opal/mca/na/base/base.h"
#include "opal/mca/na/btl/na_btl_wire.h"
#include "opal/mca/na/na.h"
#include "opal/threads/opal_mutex.h"

OPAL_DECLSPEC extern const opal_na_base_component_t mca_na_btl_component;
extern const opal_na_class_ops_t mca_na_btl_ops;

/* BTL tags (MCA_BTL_TAG_NA_MIN..MAX is na's range). */
#define NA_BTL_TAG_UNEXPECTED (MCA_BTL_TAG_NA_MIN + 0)
#define NA_BTL_TAG_EXPECTED   (MCA_BTL_TAG_NA_MIN + 1)

/* Memory handles have at most this many segments. */
#define NA_BTL_MAX_SEGMENTS 1024

/* A peer: interned per rank by the class (one object per rank), so that
 * comparing addresses is comparing pointers and the receive path hands
 * out references without allocating. */
struct opal_na_addr_t {
    _Atomic int32_t refcount;
    uint32_t jobid;
    uint32_t rank;
    /* The multiplexer's peer, set once on first send (add_procs); release
     * store, acquire loads. */
    _Atomic(mca_btl_base_peer_t *) peer;
    /* The BTLs said the process is gone. */
    _Atomic bool failed;
    /* Outside a job: the peer's card (malloc'd), NULL in a job. */
    uint8_t *card;
    size_t card_size;
};

/* An intrusive FIFO of operations (linked through na_btl_op_t.next). */
typedef struct na_btl_queue_t {
    struct na_btl_op_t *head;
    struct na_btl_op_t *tail;
} na_btl_queue_t;

/* A message that arrived before a receive for it was posted. */
typedef struct na_btl_early_t {
    struct na_btl_early_t *next;
    opal_na_addr_t *source; /* a reference */
    uint8_t source_id;
    opal_na_tag_t tag;
    size_t size;
    uint8_t data[];
} na_btl_early_t;

typedef struct na_btl_early_queue_t {
    na_btl_early_t *head;
    na_btl_early_t *tail;
} na_btl_early_queue_t;

/* Per context (ctx->plugin). */
typedef struct na_btl_context_t {
    na_btl_queue_t posted_unexpected;
    na_btl_queue_t posted_expected;
    na_btl_early_queue_t early_unexpected;
    na_btl_early_queue_t early_expected;
    /* Operations of this context not completed yet (destroy refuses). */
    _Atomic uint32_t pending;
} na_btl_context_t;

/* An operation (ops->op_size). */
typedef struct na_btl_op_t {
    opal_na_op_id_t super;
    struct na_btl_op_t *next;
    /* Which queue holds it (NULL: none), for cancel. */
    na_btl_queue_t *queue;
    opal_na_class_t *cls;
    /* Messages. */
    void *buf;
    size_t size;
    opal_na_addr_t *addr; /* dest / source, a reference while pending */
    uint8_t remote_id;
    uint8_t btl_tag; /* NA_BTL_TAG_*, for a send's retry */
    opal_na_tag_t tag;
    /* RMA. */
    bool is_get;
    opal_na_mem_handle_t *local_mh;
    opal_na_mem_handle_t *remote_mh;
    size_t local_offset;
    size_t remote_offset;
    size_t remaining;
    /* Pieces given to the BTL and not completed, plus one while issuing. */
    _Atomic int32_t outstanding;
    _Atomic int status;
    mca_btl_base_module_t *btl;
    struct mca_btl_base_endpoint_t *endpoint;
    int local_mod;  /* index into local_mh->mods */
    int remote_mod; /* index into remote_mh->mods */
} na_btl_op_t;

/* The registration of a handle with one RDMA module. */
typedef struct na_btl_mh_mod_t {
    char name[NA_BTL_WIRE_MAX_NAME + 1]; /* the module's component */
    mca_btl_base_module_t *btl;          /* local handles */
    size_t handle_size;
    /* Local: one registration per segment (NULL when handle_size is 0).
     * Remote: count * handle_size bytes from the peer. */
    mca_btl_base_registration_handle_t **regs;
    uint8_t *bytes;
} na_btl_mh_mod_t;

struct opal_na_mem_handle_t {
    unsigned long flags;
    bool remote;
    bool registered;
    size_t count;
    size_t total;
    /* Remote handles: base is the peer's address. */
    opal_na_segment_t *segments;
    int nmods;
    na_btl_mh_mod_t mods[MCA_BTL_BASE_MUX_MAX];
};

/* The class's state (cls->plugin). */
typedef struct na_btl_class_t {
    opal_na_class_t *cls;
    opal_mutex_t lock;
    uint32_t jobid;
    uint32_t my_rank;
    /* This process's card (outside a job), what its URI carries. */
    uint8_t *card;
    size_t card_size;
    /* Interned addresses by rank (a sparse table: ranks outside a job are
     * pids). */
    opal_na_addr_t **addrs;
    size_t addrs_size;
    size_t addrs_count;
    opal_na_addr_t *self;
    size_t max_unexpected;
    size_t max_expected;
    /* Sends the BTL could not take yet, and RMA waiting for room. */
    na_btl_queue_t pending_sends;
    na_btl_queue_t pending_rma;
    /* Messages above the limits or with a bad header: dropped, counted. */
    uint64_t dropped;
    /* Completions so far (poll's count). */
    _Atomic uint64_t completions;
    /* na/btl installed the standalone runtime (outside a job). */
    bool own_runtime;
} na_btl_class_t;

/* The open class (one per process: the BTL tags are the process's). */
extern na_btl_class_t *mca_na_btl_active;

/* ---------------------------------------------------------- queues */

static inline void na_btl_queue_push(na_btl_queue_t *q, na_btl_op_t *op)
{
    op->next = NULL;
    op->queue = q;
    if (NULL == q->tail) {
        q->head = op;
    } else {
        q->tail->next = op;
    }
    q->tail = op;
}

/* Unlinks op (after prev, NULL when it is the head). */
static inline void na_btl_queue_unlink(na_btl_queue_t *q, na_btl_op_t *prev, na_btl_op_t *op)
{
    if (NULL == prev) {
        q->head = op->next;
    } else {
        prev->next = op->next;
    }
    if (q->tail == op) {
        q->tail = prev;
    }
    op->next = NULL;
    op->queue = NULL;
}

/* Removes op wherever it is in q; false when it is not there. */
bool na_btl_queue_remove(na_btl_queue_t *q, na_btl_op_t *op);

/* ---------------------------------------------------------- functions */

/* na_btl_addr.c */
/* The interned address of rank (a new reference), creating it; NULL when
 * memory runs out. Class lock held. */
opal_na_addr_t *na_btl_addr_for_rank(na_btl_class_t *nb, uint32_t rank);
/* Drops every address (finalize). */
void na_btl_addr_table_free(na_btl_class_t *nb);
/* The multiplexer's peer of addr, adding it to the BTLs on first use (not
 * from progress). OPAL_ERR_PEER_FAILED once it is gone. */
int na_btl_addr_peer(na_btl_class_t *nb, opal_na_addr_t *addr, mca_btl_base_peer_t **peer);
int na_btl_addr_lookup(opal_na_class_t *cls, const char *uri, opal_na_addr_t **addr);
int na_btl_addr_self(opal_na_class_t *cls, opal_na_addr_t **addr);
int na_btl_addr_dup(opal_na_class_t *cls, opal_na_addr_t *addr, opal_na_addr_t **new_addr);
void na_btl_addr_free(opal_na_class_t *cls, opal_na_addr_t *addr);
bool na_btl_addr_cmp(opal_na_class_t *cls, opal_na_addr_t *a, opal_na_addr_t *b);
bool na_btl_addr_is_self(opal_na_class_t *cls, opal_na_addr_t *addr);
int na_btl_addr_to_string(opal_na_class_t *cls, char *buf, size_t *size, opal_na_addr_t *addr);
size_t na_btl_addr_get_serialize_size(opal_na_class_t *cls, opal_na_addr_t *addr);
int na_btl_addr_serialize(opal_na_class_t *cls, void *buf, size_t size, opal_na_addr_t *addr);
int na_btl_addr_deserialize(opal_na_class_t *cls, opal_na_addr_t **addr, const void *buf,
                            size_t size);

/* na_btl_msg.c */
int na_btl_msg_init(na_btl_class_t *nb);
void na_btl_msg_fini(na_btl_class_t *nb);
int na_btl_context_create(opal_na_class_t *cls, opal_na_context_t *ctx);
int na_btl_context_destroy(opal_na_class_t *cls, opal_na_context_t *ctx);
int na_btl_send_unexpected(opal_na_class_t *cls, opal_na_context_t *ctx, const void *buf,
                           size_t size, void *plugin_data, opal_na_addr_t *dest, uint8_t dest_id,
                           opal_na_tag_t tag, opal_na_op_id_t *op);
int na_btl_recv_unexpected(opal_na_class_t *cls, opal_na_context_t *ctx, void *buf, size_t size,
                           void *plugin_data, opal_na_op_id_t *op);
int na_btl_inject_unexpected(opal_na_class_t *cls, opal_na_context_t *ctx, const void *buf,
                             size_t size, opal_na_addr_t *dest, uint8_t dest_id, opal_na_tag_t tag);
int na_btl_send_expected(opal_na_class_t *cls, opal_na_context_t *ctx, const void *buf, size_t size,
                         void *plugin_data, opal_na_addr_t *dest, uint8_t dest_id,
                         opal_na_tag_t tag, opal_na_op_id_t *op);
int na_btl_recv_expected(opal_na_class_t *cls, opal_na_context_t *ctx, void *buf, size_t size,
                         void *plugin_data, opal_na_addr_t *source, uint8_t source_id,
                         opal_na_tag_t tag, opal_na_op_id_t *op);
/* Retries the sends the BTL was too busy for; returns how many went. */
int na_btl_msg_progress(na_btl_class_t *nb);
/* Completes with OPAL_ERR_PEER_FAILED what waits on addr (the BTLs said
 * it is gone). */
void na_btl_msg_peer_failed(na_btl_class_t *nb, opal_na_addr_t *addr);
int na_btl_cancel(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_op_id_t *op);
/* Completes op with ret (claim already won), dropping its address. */
void na_btl_op_finish(na_btl_class_t *nb, na_btl_op_t *op, int ret);

/* na_btl_rma.c */
int na_btl_mem_handle_create(opal_na_class_t *cls, void *buf, size_t size, unsigned long flags,
                             opal_na_mem_handle_t **mh);
int na_btl_mem_handle_create_segments(opal_na_class_t *cls, const opal_na_segment_t *segments,
                                      size_t count, unsigned long flags, opal_na_mem_handle_t **mh);
size_t na_btl_mem_handle_get_max_segments(const opal_na_class_t *cls);
void na_btl_mem_handle_free(opal_na_class_t *cls, opal_na_mem_handle_t *mh);
size_t na_btl_mem_handle_get_size(opal_na_class_t *cls, opal_na_mem_handle_t *mh);
int na_btl_mem_register(opal_na_class_t *cls, opal_na_mem_handle_t *mh);
int na_btl_mem_deregister(opal_na_class_t *cls, opal_na_mem_handle_t *mh);
size_t na_btl_mem_handle_get_serialize_size(opal_na_class_t *cls, opal_na_mem_handle_t *mh);
int na_btl_mem_handle_serialize(opal_na_class_t *cls, void *buf, size_t size,
                                opal_na_mem_handle_t *mh);
int na_btl_mem_handle_deserialize(opal_na_class_t *cls, opal_na_mem_handle_t **mh, const void *buf,
                                  size_t size);
int na_btl_put(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_mem_handle_t *local_mh,
               size_t local_offset, opal_na_mem_handle_t *remote_mh, size_t remote_offset,
               size_t length, opal_na_addr_t *remote_addr, uint8_t remote_id, opal_na_op_id_t *op);
size_t na_btl_rma_piece_max(opal_na_class_t *cls, opal_na_addr_t *remote_addr);
int na_btl_get(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_mem_handle_t *local_mh,
               size_t local_offset, opal_na_mem_handle_t *remote_mh, size_t remote_offset,
               size_t length, opal_na_addr_t *remote_addr, uint8_t remote_id, opal_na_op_id_t *op);
/* Issues what the BTLs had no room for; returns how many ops moved. */
int na_btl_rma_progress(na_btl_class_t *nb);
/* Cancels a marked RMA op: withdrawn now when no piece of it is with a
 * BTL, else completed as canceled by its last piece. */
bool na_btl_rma_cancel(na_btl_class_t *nb, na_btl_op_t *op);
/* Fails the RMA ops waiting to start on addr. */
void na_btl_rma_peer_failed(na_btl_class_t *nb, opal_na_addr_t *addr);

/* na_btl_rte.c: the standalone runtime (outside a job). */
/* Installs it when no runtime is: this process becomes rank <pid> of the
 * node's standalone job. *installed says whether it did. */
int na_btl_rte_install(bool *installed);
/* Collects this process's card (what the BTLs published) after btl init. */
int na_btl_rte_card(uint8_t **card, size_t *size);
/* Makes peer rank's card known (the modex answers from it). */
int na_btl_rte_add_card(uint32_t rank, const uint8_t *card, size_t size);
/* A copy (malloc'd) of peer rank's card: the one its URI brought, or
 * its card file. OPAL_ERR_NOT_FOUND when neither exists. */
int na_btl_rte_peer_card(uint32_t rank, uint8_t **card, size_t *size);
void na_btl_rte_uninstall(void);
/* Lets go of rank's card (it is gone): a server that outlives many
 * clients keeps none of theirs. A later get reads its file again. */
void na_btl_rte_forget(uint32_t rank);

/* na_btl_cleanup.c */
int na_btl_cleanup(void);

#endif /* OPAL_MCA_NA_BTL_NA_BTL_H */
