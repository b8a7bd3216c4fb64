/*
 * btl/sm: what lives in shared memory. Every process owns one segment
 * (a file in /dev/shm) that every local peer maps read-write:
 *
 *   offset 0          sm_seg_header_t: identity, layout, shared state
 *   fifo_offset       the FIFO's slots (btl_sm_fifo.h): peers push
 *                     references to their fragments here, the owner pops
 *   frag_offset       eager fragments, then max fragments: the owner's
 *                     outgoing messages (sm_frag_hdr_t then payload)
 *   fbox_offset       fast boxes: one per peer the owner talks to often,
 *                     each a ring the owner writes and that peer reads
 *                     (btl_sm_fbox.h)
 *
 * Offsets, never pointers, cross processes: each process maps a segment
 * at its own address. Everything a process reads from a peer's segment
 * (or from its own, where peers write) may have been written by a faulty
 * or hostile peer: the layout is read once at attach, checked against the
 * size of the mapping and kept privately; lengths, indices and types read
 * later go through SM_READ_ONCE into locals and are checked before use.
 */
#ifndef OPAL_MCA_BTL_SM_BTL_SM_LAYOUT_H
#define OPAL_MCA_BTL_SM_BTL_SM_LAYOUT_H

#include "opal/opal_config.h"

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/threads/opal_atomic.h"

/* One load or store of shared memory a peer may change at any time: the
 * compiler must neither repeat nor tear it, so that a value checked is
 * the value used. */
#define SM_READ_ONCE(x)     __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define SM_WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* Bounds a peer's layout must respect, whatever it says. */
#define SM_MAX_SEGMENT (UINT64_C(1) << 34)
#define SM_MAX_STRIDE  (UINT32_C(1) << 30)

#define SM_SEG_MAGIC      UINT64_C(0x31306d736c61706f) /* "opalsm01" */
#define SM_LAYOUT_VERSION 1u

/* What a segment's owner says about itself (sm_seg_header_t.state). */
enum {
    SM_SEG_STATE_ALIVE = 1,
    /* The owner finalized: it reads nothing more, and its exit that
     * follows is not a failure. */
    SM_SEG_STATE_CLOSED = 2,
};

/* Where the parts of a segment are; written by the owner before it
 * publishes the segment and never changed afterwards. */
typedef struct sm_layout_t {
    uint64_t seg_size;
    uint64_t fifo_offset;
    uint64_t frag_offset;
    uint64_t fbox_offset;
    uint32_t fifo_slots;   /* power of two */
    uint32_t eager_count;  /* eager fragments, indices 0 .. eager_count-1 */
    uint32_t eager_stride; /* bytes per eager fragment, header included */
    uint32_t max_count;    /* max fragments, the indices after the eager ones */
    uint32_t max_stride;
    uint32_t fbox_count;
    uint32_t fbox_stride; /* one control line, then a ring of stride - 64 bytes */
    uint32_t reserved;
} sm_layout_t;

typedef struct sm_seg_header_t {
    uint64_t magic;
    uint32_t version;
    uint32_t owner_rank;
    int32_t owner_pid;
    uint32_t owner_jobid;
    /* Also published in the modex: proves the file is the one announced,
     * not a stale one from another job. */
    uint64_t nonce;
    sm_layout_t layout;

    /* Peers that mapped this segment; the one that completes the count
     * unlinks the file (atomic increments by the peers). */
    alignas(OPAL_CACHE_LINE_SIZE) opal_atomic_uint32_t attached;
    /* SM_SEG_STATE_*, stored by the owner (release). */
    opal_atomic_uint32_t state;
    /* Fast boxes the owner still accepts to poll; a peer takes one with
     * an atomic decrement before it sets up a fast box to the owner. */
    opal_atomic_int32_t fbox_in_available;
    /* Blocking mode: set by some peer that cannot wake the owner (it
     * could not obtain the owner's eventfd), so the owner must not sleep;
     * and the peers that have tried (the owner sleeps only once every
     * local peer has, and none failed). */
    opal_atomic_uint32_t wake_unreachable;
    opal_atomic_uint32_t wake_ready;

    /* Blocking mode: 1 while the owner may be asleep; a peer that posts
     * a message and finds it set clears it and writes the owner's
     * eventfd. Alone on its line: peers read it after every post. */
    alignas(OPAL_CACHE_LINE_SIZE) opal_atomic_uint32_t wake_armed;

    /* The FIFO's tail (next position to fill), alone on its line. */
    alignas(OPAL_CACHE_LINE_SIZE) opal_atomic_uint64_t fifo_tail;
} sm_seg_header_t;

/* Fragment types (sm_frag_hdr_t.type, sm_fbox_hdr_t.type). */
enum {
    SM_MSG_AM = 1,         /* an active message: tag, len bytes of payload */
    SM_MSG_FBOX_SETUP = 2, /* fragment only: sm_fbox_setup_t */
    SM_MSG_GET_REQ = 3,    /* emulated RDMA, fragment only: sm_rdma_msg_t */
    SM_MSG_GET_RESP = 4,   /* sm_rdma_msg_t then data */
    SM_MSG_PUT_DATA = 5,   /* sm_rdma_msg_t then data */
    SM_MSG_PUT_ACK = 6,    /* sm_rdma_msg_t */
    SM_MSG_FRAG = 7,       /* fast box only: a fragment's index in the size field */
    SM_MSG_WRAP = 8,       /* fast box only: skip to the ring's start */
    SM_MSG_SPLIT = 9,      /* fragment only: sm_split_msg_t, a put / get to share */
    SM_MSG_TYPE_MAX = 9,
};

/* The first line of every fragment; the payload follows at
 * SM_FRAG_HDR_SIZE. Written by the owner before it posts the fragment;
 * done is written by the receiver when it has finished with it. */
typedef struct sm_frag_hdr_t {
    opal_atomic_uint32_t done;
    uint32_t len;
    uint8_t tag;
    uint8_t type;
    uint16_t reserved;
} sm_frag_hdr_t;

#define SM_FRAG_HDR_SIZE OPAL_CACHE_LINE_SIZE
#define SM_FRAG_DONE     1u

/* Payload of SM_MSG_FBOX_SETUP: from now on everything from the sender
 * comes through its fast box number fbox_index (in the sender's
 * segment); the ring starts empty with sequence 0. */
typedef struct sm_fbox_setup_t {
    uint32_t fbox_index;
    uint32_t reserved;
} sm_fbox_setup_t;

/* The control line at the start of every fast box: how far the receiver
 * has read (a byte count, see btl_sm_fbox.h), stored by the receiver. */
typedef struct sm_fbox_ctl_t {
    opal_atomic_uint32_t read_count;
    uint32_t reserved;
} sm_fbox_ctl_t;

#define SM_FBOX_CTL_SIZE OPAL_CACHE_LINE_SIZE

/* Header of the emulated RDMA messages (payload of the GET/PUT types). */
typedef struct sm_rdma_msg_t {
    /* The requester's request slot and its generation, echoed back. */
    uint32_t req_index;
    uint32_t req_gen;
    /* GET_REQ, PUT_DATA: the target region (the owner's registration). */
    uint32_t reg_index;
    uint32_t status; /* GET_RESP, PUT_ACK: 0 or the negated OPAL_ERR_* */
    uint64_t reg_cookie;
    uint64_t address; /* GET_REQ, PUT_DATA: in the owner's memory */
    uint64_t offset;  /* GET_RESP, PUT_DATA: of this chunk in the transfer */
    uint64_t length;  /* GET_REQ: bytes wanted; PUT_DATA: of the whole put */
} sm_rdma_msg_t;

/* Payload of SM_MSG_SPLIT: a put or get through CMA that the requester
 * offers to share with its peer, the owner of the remote region. The
 * transfer is cut into slices; each process claims the next slice with a
 * fetch-and-add on next and copies it with its own CMA call (the owner in
 * the opposite direction), so the two copy at once. The requester claims
 * slices whether or not the owner ever looks, and it is done when every
 * slice is claimed and the owner has finished the ones it took (helped);
 * a slice the owner could not copy has its bit in failed, and the
 * requester copies it again. The message stays in the requester's
 * segment for as long as the operation lasts: the owner reads and updates
 * it in place. */
#define SM_SPLIT_MAX_SLICES 64

typedef struct sm_split_msg_t {
    /* Updated by both processes (atomics). */
    opal_atomic_uint32_t next;   /* slices claimed, by either process */
    opal_atomic_uint32_t helped; /* slices the owner finished (release) */
    opal_atomic_uint64_t failed; /* bit i: the owner could not copy slice i */
    /* Written by the requester before it posts the message. */
    uint32_t slices;      /* 2 .. SM_SPLIT_MAX_SLICES */
    uint32_t is_get;      /* 1: from the owner's memory into the requester's */
    uint64_t slice;       /* bytes per slice; the last one may be shorter */
    uint64_t length;      /* of the whole transfer */
    uint64_t address;     /* the requester's memory */
    uint64_t reg_address; /* the owner's memory, inside its registration */
    uint64_t reg_cookie;
    uint32_t reg_index;
    uint32_t reserved;
} sm_split_msg_t;

/* A FIFO entry names the sending rank and one of its fragments. */
#define SM_FIFO_RANK_BITS  24
#define SM_FIFO_INDEX_BITS 16
#define SM_FIFO_MAX_RANK   ((UINT32_C(1) << SM_FIFO_RANK_BITS) - 1)
/* Fragment indices are stored + 1 so that no entry is 0 (empty). */
#define SM_MAX_FRAGS ((UINT32_C(1) << SM_FIFO_INDEX_BITS) - 1)

static inline uint64_t sm_fifo_entry(uint32_t rank, uint32_t frag_index)
{
    return ((uint64_t) rank << SM_FIFO_INDEX_BITS) | (uint64_t) (frag_index + 1);
}

static inline void sm_fifo_entry_decode(uint64_t entry, uint32_t *rank, uint32_t *frag_index)
{
    *rank = (uint32_t) (entry >> SM_FIFO_INDEX_BITS) & SM_FIFO_MAX_RANK;
    /* An index field of 0 decodes to UINT32_MAX: invalid. */
    *frag_index = (uint32_t) (entry & ((UINT32_C(1) << SM_FIFO_INDEX_BITS) - 1)) - 1;
}

/* What says two processes share a node's memory: the same boot, the same
 * /dev/shm, the same pid namespace (pids mean the same), the same user. */
typedef struct sm_identity_t {
    char boot_id[40];
    uint64_t shm_dev, shm_ino;
    uint64_t pidns_dev, pidns_ino;
    uint32_t uid;
    uint32_t reserved;
} sm_identity_t;

/* "/<prefix>btl_sm.<rank>" fits. */
#define SM_SEG_NAME_MAX 128

/* What a process publishes in the modex under SM_MODEX_KEY. */
#define SM_MODEX_MAGIC 0x736d6d78u /* "smmx" */

typedef struct sm_modex_t {
    uint32_t magic;
    uint32_t version;
    char seg_name[SM_SEG_NAME_MAX];
    uint64_t seg_size;
    uint64_t nonce;
    int32_t pid;
    /* Blocking mode: the owner's eventfd (a number in its fd table, for
     * pidfd_getfd), or -1. */
    int32_t wake_fd;
    sm_identity_t identity;
} sm_modex_t;

/* btl_sm_layout.c: checks that need no process state. */

/* Checks the size bytes a peer published under SM_MODEX_KEY and copies
 * them into *modex: size, magic, layout version, a segment name of one
 * '/' then a file name, a pid, a NUL-terminated boot id. OPAL_ERR_UNREACH
 * with the reason in why otherwise. */
int mca_btl_sm_modex_check(const void *value, size_t size, sm_modex_t *modex, char *why,
                           size_t why_size);

/* This process's identity (fields it cannot read stay zero). */
int mca_btl_sm_identity_get(sm_identity_t *identity);
/* Why a peer with this identity cannot be reached (a phrase for add_procs'
 * reasons), or NULL when it can. */
const char *mca_btl_sm_identity_compare(const sm_identity_t *mine, const sm_identity_t *peer);
/* "/<prefix>btl_sm.<rank>": prefix from OPAL_ORTE_SHM_PREFIX (mcarun), or
 * built the same way ("opal-mca.<euid>.<jobid>.") without it. */
int mca_btl_sm_segment_name(uint32_t jobid, uint32_t rank, char *name, size_t size);
/* Checks a layout (a peer's, read from its segment) against the size of
 * its mapping: every part inside it, sizes in range. OPAL_ERR_BAD_VALUE
 * with the first problem in why. */
int mca_btl_sm_layout_check(const sm_layout_t *layout, size_t mapped, char *why, size_t why_size);

/* A shared put / get request as its owner reads it from the requester's
 * SM_MSG_SPLIT message. */
typedef struct sm_split_req_t {
    uint32_t slices;
    bool is_get;
    uint64_t slice, length;
    uint64_t address;     /* the requester's memory */
    uint64_t reg_address; /* ours */
    uint64_t reg_cookie;
    uint32_t reg_index;
} sm_split_req_t;

/* Reads the len bytes of an SM_MSG_SPLIT payload a peer wrote (each field
 * once, as it may change them meanwhile) into *req and checks them: 2 to
 * SM_SPLIT_MAX_SLICES slices of one size covering the length with the
 * last one not empty, and no range that wraps. OPAL_ERR_PROTOCOL with the
 * first problem in why otherwise. */
int mca_btl_sm_split_check(const sm_split_msg_t *msg, size_t len, sm_split_req_t *req, char *why,
                           size_t why_size);

#endif /* OPAL_MCA_BTL_SM_BTL_SM_LAYOUT_H */
