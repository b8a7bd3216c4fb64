/*
 * The per-peer multiplexer (the role of Open MPI's bml): for every peer,
 * the modules that reach it, ranked.
 *
 *   send[]  modules with MCA_BTL_FLAGS_SEND that reach the peer, best first:
 *           higher exclusivity first, then lower latency, then higher
 *           bandwidth. send[0] carries active messages; the others are
 *           what is left when it fails.
 *   rdma[]  the modules of send[] (same order) that also do put and get.
 *
 * mca_btl_base_add_procs fails with OPAL_ERR_UNREACH for a peer that no
 * module reaches, after printing, for that peer, every module tried and
 * why it did not reach it, and every component that did not run and why
 * ("sm: peer is on another node", "self: not this process",
 * "ofi: excluded by btl=self,sm").
 */
#ifndef OPAL_MCA_BTL_BASE_BTL_BASE_MUX_H
#define OPAL_MCA_BTL_BASE_BTL_BASE_MUX_H

#include "opal/opal_config.h"

#include <stddef.h>
#include <stdint.h>

#include "opal/class/opal_object.h"
#include "opal/mca/btl/btl.h"
#include "opal/runtime/opal_proc.h"

/* Modules a peer can have in each list. */
#define MCA_BTL_BASE_MUX_MAX 8

typedef struct mca_btl_base_mux_entry_t {
    mca_btl_base_module_t *btl;
    struct mca_btl_base_endpoint_t *endpoint;
} mca_btl_base_mux_entry_t;

typedef struct mca_btl_base_peer_t {
    opal_object_t super;
    /* Retained while the peer exists. */
    opal_proc_t *proc;
    uint32_t rank;
    int send_count;
    mca_btl_base_mux_entry_t send[MCA_BTL_BASE_MUX_MAX];
    int rdma_count;
    mca_btl_base_mux_entry_t rdma[MCA_BTL_BASE_MUX_MAX];
} mca_btl_base_peer_t;
OBJ_CLASS_DECLARATION(mca_btl_base_peer_t);

/* Ranks every module for each of procs (retaining them) and remembers the
 * result per rank; a proc added twice keeps its first ranking. Returns
 * OPAL_ERR_UNREACH, after saying why for each peer no module reaches, or
 * the first module error. The peers that were reached stay added even
 * then. */
OPAL_DECLSPEC int mca_btl_base_add_procs(opal_proc_t **procs, size_t nprocs);

/* Adds every rank of the job (opal_proc_for_rank for each). */
OPAL_DECLSPEC int mca_btl_base_add_all_procs(void);

/* Forgets the peers: each module's del_procs, then the peers are
 * released. */
OPAL_DECLSPEC int mca_btl_base_del_procs(opal_proc_t **procs, size_t nprocs);

/* Indexed by rank: the peer, or NULL when it was not added. Grows with
 * the largest rank added. */
OPAL_DECLSPEC extern mca_btl_base_peer_t **mca_btl_base_peers;
OPAL_DECLSPEC extern size_t mca_btl_base_peers_size;

/* The peer of rank, or NULL when it was never added. */
static inline mca_btl_base_peer_t *mca_btl_base_peer_get(uint32_t rank)
{
    return rank < mca_btl_base_peers_size ? mca_btl_base_peers[rank] : NULL;
}

/* The peer a module's endpoint belongs to is found by the module; upper
 * layers use desc->proc->proc_name.vpid in callbacks. */

/* Sends size bytes at data to peer with tag over its best send module,
 * copying them: sendi when the module has it and size fits the eager
 * limit (a descriptor from alloc when sendi is busy), else prepare_src +
 * send with the module owning the descriptor (for a module that sends in
 * place, from a copy the base keeps until the send completes). Never
 * waits for progress, so it may be called from a callback. Returns
 * OPAL_SUCCESS once the bytes are copied (data may be reused),
 * OPAL_ERR_RESOURCE_BUSY when the module cannot take them now (progress
 * and retry), OPAL_ERR_BAD_PARAM when size exceeds the module's
 * btl_max_send_size, OPAL_ERR_UNREACH when the peer has no send module,
 * or the module's error. */
OPAL_DECLSPEC int mca_btl_base_mux_send_copy(mca_btl_base_peer_t *peer, mca_btl_base_tag_t tag,
                                             const void *data, size_t size);

/* The same with a header of header_size bytes before the data (one
 * message: header then data), as sendi takes them. */
OPAL_DECLSPEC int mca_btl_base_mux_send_hdr(mca_btl_base_peer_t *peer, mca_btl_base_tag_t tag,
                                            const void *header, size_t header_size,
                                            const void *data, size_t size);

/* Describes in buf (cut to size) what each module of peer holds toward
 * it (btl_dump), as "tcp: <its line>; sm: <its line>" in send[] order
 * (which holds every module of rdma[] too): for a test or a tool that
 * waited too long for the peer. A module without btl_dump says "(no
 * state to show)". */
OPAL_DECLSPEC void mca_btl_base_mux_describe(const mca_btl_base_peer_t *peer, char *buf,
                                             size_t size);

#endif /* OPAL_MCA_BTL_BASE_BTL_BASE_MUX_H */
