/*
 * bulk/rdma: the transfer engine that moves bytes with na put / get. A
 * transfer is cut where either handle's na memory handles end and into
 * chunks of at most bulk_rdma_chunk_size bytes, of which up to
 * bulk_rdma_window are in flight at once (a pipeline: the transport
 * works on the next chunk while the last one completes). Unless the
 * user chose the chunk size, a na class that advises against cutting
 * RMA to the peer (opal_na_rma_piece_max: na/btl over btl/sm, which
 * shares a large get between the two processes itself) gets whole
 * pieces.
 */
#ifndef OPAL_MCA_BULK_RDMA_BULK_RDMA_H
#define OPAL_MCA_BULK_RDMA_BULK_RDMA_H

#include "opal/opal_config.h"

#include "opal/mca/bulk/base/base.h"

typedef struct mca_bulk_rdma_vars_t {
    size_t chunk_size;
    bool chunk_size_chosen; /* the user set chunk_size: no na advice */
    unsigned int window;
} mca_bulk_rdma_vars_t;

extern mca_bulk_rdma_vars_t mca_bulk_rdma_vars;
OPAL_DECLSPEC extern const opal_bulk_base_component_t mca_bulk_rdma_component;
extern const opal_bulk_engine_t mca_bulk_rdma_engine;

#endif /* OPAL_MCA_BULK_RDMA_BULK_RDMA_H */
