/*
 * bulk: Mercury's HG_Bulk as an MCA framework over na. A bulk handle
 * describes one or more segments of local memory with an access mode; it
 * is serialized into an RPC's arguments, and the peer that receives it
 * pulls from it or pushes into it with opal_bulk_transfer.
 *
 *   opal_bulk_class_t *bc;
 *   opal_bulk_init(na_class, &bc);                 opens the bulk framework
 *   opal_bulk_create(bc, 1, &buf, &len, OPAL_BULK_READ_ONLY, &h);
 *   n = opal_bulk_get_serialize_size(h, OPAL_BULK_EAGER);
 *   opal_bulk_serialize(out, n, OPAL_BULK_EAGER, h);   ... send out to a peer
 *
 *   peer: opal_bulk_deserialize(bc, &remote, in, n);
 *         opal_bulk_transfer(bc, na_ctx, cb, arg, OPAL_BULK_PULL, origin_addr, 0,
 *                            remote, 0, local, 0, len, &op);
 *         ... opal_na_poll_wait / opal_na_trigger on na_ctx until cb ran
 *
 * Transfers complete on the na context given to opal_bulk_transfer: their
 * callbacks run from opal_na_trigger on it, exactly once each (success,
 * OPAL_ERR_CANCELED after opal_bulk_cancel, or the error that ended it).
 *
 * Engines (the framework's components): `rdma` (na put / get) and `copy`
 * (a pipeline of messages through the origin's bulk service context,
 * OPAL_NA_CONTEXT_ID_BULK, for na classes without RMA). For each transfer
 * the base picks the best engine that the na class and both handles
 * allow; a transfer between handles of this process is a memcpy. Which
 * one ran and why is reported at bulk_base_verbose 10 and by opal_info
 * --selected.
 *
 * Handles are reference counted (create / deserialize give one reference,
 * opal_bulk_ref_incr adds one, opal_bulk_free drops one). A handle and its
 * memory must stay valid until every transfer using it has completed.
 *
 * Threads: as na (a handle may be used by several threads; one na context
 * is progressed and triggered by one thread at a time).
 */
#ifndef OPAL_MCA_BULK_BULK_H
#define OPAL_MCA_BULK_BULK_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/mca/mca.h"
#include "opal/mca/na/na.h"

#define OPAL_BULK_API_MAJOR 1
#define OPAL_BULK_API_MINOR 0

typedef struct opal_bulk_class_t opal_bulk_class_t;
typedef struct opal_bulk_t opal_bulk_t;
typedef struct opal_bulk_op_t opal_bulk_op_t;

/* Access modes (the same values as na's). */
enum {
    OPAL_BULK_READ_ONLY = OPAL_NA_MEM_READ_ONLY,   /* peers may pull from it */
    OPAL_BULK_WRITE_ONLY = OPAL_NA_MEM_WRITE_ONLY, /* peers may push into it */
    OPAL_BULK_READ_WRITE = OPAL_NA_MEM_READ_WRITE,
};

/* Serialize flags. */
enum {
    /* A read-only handle of at most bulk_base_eager_size bytes carries its
     * data inline: a peer's pull is then a copy out of the serialized
     * bytes, with no network transfer at all. */
    OPAL_BULK_EAGER = 0x1,
};

typedef enum {
    OPAL_BULK_PULL, /* origin -> local */
    OPAL_BULK_PUSH, /* local -> origin */
} opal_bulk_op_type_t;

/* What a transfer's callback gets; valid during the callback only. */
typedef struct opal_bulk_cb_info_t {
    void *arg;
    int ret; /* OPAL_SUCCESS, OPAL_ERR_CANCELED, or why it failed */
    opal_bulk_op_type_t op;
    size_t size; /* bytes the transfer was asked to move */
} opal_bulk_cb_info_t;

/* Runs from opal_na_trigger on the transfer's na context; must not block. */
typedef void (*opal_bulk_cb_t)(const opal_bulk_cb_info_t *info);

/* ------------------------------------------------------------- the class */

/* Opens the bulk framework (reference counted) over na_class, and the
 * bulk service context (OPAL_NA_CONTEXT_ID_BULK) on it when an engine
 * needs one. One bulk class per na class. */
OPAL_DECLSPEC int opal_bulk_init(opal_na_class_t *na_class, opal_bulk_class_t **bc);
/* OPAL_ERR_RESOURCE_BUSY while transfers are pending. */
OPAL_DECLSPEC int opal_bulk_finalize(opal_bulk_class_t *bc);
OPAL_DECLSPEC opal_na_class_t *opal_bulk_get_na_class(const opal_bulk_class_t *bc);

/* ----------------------------------------------------------- the handles */

/* A handle over count segments (bufs[i], sizes[i]); a NULL bufs (or a
 * NULL bufs[i]) makes bulk allocate that memory, zeroed, owned by the
 * handle. flags: OPAL_BULK_READ_ONLY / WRITE_ONLY / READ_WRITE.
 * Registers the memory with the na class when it has RMA. */
OPAL_DECLSPEC int opal_bulk_create(opal_bulk_class_t *bc, uint32_t count, void *const *bufs,
                                   const size_t *sizes, unsigned int flags, opal_bulk_t **handle);
/* Drops a reference; the last one deregisters and frees. NULL is ignored. */
OPAL_DECLSPEC int opal_bulk_free(opal_bulk_t *handle);
OPAL_DECLSPEC int opal_bulk_ref_incr(opal_bulk_t *handle);

/* Total bytes, segments, and access flags. */
OPAL_DECLSPEC size_t opal_bulk_get_size(const opal_bulk_t *handle);
OPAL_DECLSPEC uint32_t opal_bulk_get_segment_count(const opal_bulk_t *handle);
OPAL_DECLSPEC unsigned int opal_bulk_get_flags(const opal_bulk_t *handle);

/* The local segments covering [offset, offset + size) of a local handle:
 * up to max_count (pointer, length) pairs, *actual_count of them.
 * OPAL_ERR_BAD_PARAM for a range past the end or a handle that is not
 * this process's. */
OPAL_DECLSPEC int opal_bulk_access(opal_bulk_t *handle, size_t offset, size_t size,
                                   uint32_t max_count, void **bufs, size_t *sizes,
                                   uint32_t *actual_count);

/* Binds a local handle to this process's address and ctx's id, so that a
 * process it is forwarded to (a third process) transfers with the origin,
 * not with whoever sent the handle. */
OPAL_DECLSPEC int opal_bulk_bind(opal_bulk_t *handle, opal_na_context_t *ctx);
/* The bound origin's address (NULL when not bound; owned by the handle)
 * and context id. */
OPAL_DECLSPEC opal_na_addr_t *opal_bulk_get_addr(const opal_bulk_t *handle);
OPAL_DECLSPEC uint8_t opal_bulk_get_context_id(const opal_bulk_t *handle);

/* Serialization (docs/na-bulk.md has the format). flags: OPAL_BULK_EAGER. */
OPAL_DECLSPEC size_t opal_bulk_get_serialize_size(opal_bulk_t *handle, unsigned int flags);
OPAL_DECLSPEC int opal_bulk_serialize(void *buf, size_t size, unsigned int flags,
                                      opal_bulk_t *handle);
/* A remote handle from a peer's bytes: every length checked against size;
 * OPAL_ERR_BAD_PARAM naming what was wrong (truncated, oversized, another
 * version, another na component). */
OPAL_DECLSPEC int opal_bulk_deserialize(opal_bulk_class_t *bc, opal_bulk_t **handle,
                                        const void *buf, size_t size);

/* ------------------------------------------------------------- transfers */

/* Moves size bytes between origin_handle (at origin_offset, in the process
 * origin_addr, context origin_id; for a bound handle pass its address
 * and id) and local_handle (at local_offset): PULL reads the origin,
 * PUSH writes it. Segment lists of the two handles may differ (the
 * transfer scatters / gathers). Completes on na_ctx (see above). *op (may
 * be NULL) lets the caller cancel. OPAL_ERR_BAD_PARAM for a range past
 * either handle or an access mode that forbids it (push into a read-only
 * handle). */
OPAL_DECLSPEC int opal_bulk_transfer(opal_bulk_class_t *bc, opal_na_context_t *na_ctx,
                                     opal_bulk_cb_t callback, void *arg, opal_bulk_op_type_t op,
                                     opal_na_addr_t *origin_addr, uint8_t origin_id,
                                     opal_bulk_t *origin_handle, size_t origin_offset,
                                     opal_bulk_t *local_handle, size_t local_offset, size_t size,
                                     opal_bulk_op_t **op_out);
/* Cancels a transfer that has not completed: it completes once, as
 * OPAL_ERR_CANCELED (after the engine let go of the memory). */
OPAL_DECLSPEC int opal_bulk_cancel(opal_bulk_op_t *op);

/* The engine that ran op's transfer ("rdma", "copy", "self", "eager"),
 * valid until its callback returns. */
OPAL_DECLSPEC const char *opal_bulk_op_engine(const opal_bulk_op_t *op);

#endif /* OPAL_MCA_BULK_BULK_H */
