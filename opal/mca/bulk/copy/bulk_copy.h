/*
 * bulk/copy: the transfer engine that moves bytes through messages, for
 * na classes without put / get and when forced (`--mca bulk copy`).
 *
 * The process that moves the data (the requester) sends each fragment's
 * request as an unexpected message to the origin's bulk service context
 * (OPAL_NA_CONTEXT_ID_BULK); the origin's service (bulk_copy_service.c)
 * checks it against the handle the key names and answers with an
 * expected message to the requester's context, on the tag the request
 * chose: a pull's reply carries the bytes, a push's request carries them
 * and the reply only the status. Up to bulk_copy_window fragments are in
 * flight per transfer (bulk_copy_module.c).
 *
 * Messages (little-endian, through opal_cursor; bulk_copy_wire.h):
 *   request: magic u32 "BKCQ", version u8, kind u8 (1 pull, 2 push),
 *            reply context id u8, reserved u8, reply tag u32,
 *            instance u64, key u64, offset u64, length u64, [push: bytes]
 *   reply:   magic u32 "BKCR", status i32 (as u32), [pull: bytes]
 */
#ifndef OPAL_MCA_BULK_COPY_BULK_COPY_H
#define OPAL_MCA_BULK_COPY_BULK_COPY_H

#include "opal/opal_config.h"

#include "opal/mca/bulk/base/base.h"
#include "opal/mca/bulk/copy/bulk_copy_wire.h"
/* The tag of requests (the service receives any). */
#define BULK_COPY_REQ_TAG 0u

typedef struct mca_bulk_copy_vars_t {
    size_t frag_size;
    unsigned int window;
    unsigned int service_recvs;
} mca_bulk_copy_vars_t;

extern mca_bulk_copy_vars_t mca_bulk_copy_vars;
OPAL_DECLSPEC extern const opal_bulk_base_component_t mca_bulk_copy_component;
extern const opal_bulk_engine_t mca_bulk_copy_engine;

struct copy_service_t;

/* The engine's state for one bulk class. */
typedef struct copy_state_t {
    opal_bulk_class_t *bc;
    /* Fragment payload sizes, from the na class's message limits. */
    size_t pull_frag;
    size_t push_frag;
    /* Reply tags, handed out in turn. */
    _Atomic uint32_t next_tag;
    opal_na_tag_t max_tag;
    struct copy_service_t *service;
} copy_state_t;

/* The service on bc's service context: posts the receives. */
int mca_bulk_copy_service_start(copy_state_t *cs);
/* Withdraws the receives and waits (bounded) for replies in flight. */
void mca_bulk_copy_service_stop(copy_state_t *cs);

#endif /* OPAL_MCA_BULK_COPY_BULK_COPY_H */
