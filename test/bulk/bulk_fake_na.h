/*
 * A na class for the bulk tests that needs no network: several "processes"
 * (endpoints) live in one test process, each its own na class, and
 * deliver messages to each other through in-memory queues; put / get copy
 * between their memory. A class opened without RMA has no put / get (the
 * copy engine's case). With deferred RMA, put / get happen at the next
 * poll of the initiator's context, so a test can cancel them in flight.
 *
 * Single-threaded; everything completes through the na base's completion
 * queues, as with a real component.
 */
#ifndef TEST_BULK_BULK_FAKE_NA_H
#define TEST_BULK_BULK_FAKE_NA_H

#include "opal/opal_config.h"

#include <stdbool.h>

#include "opal/mca/na/base/base.h"

#define FAKE_NA_MAX_EP 8

typedef struct fake_na_opts_t {
    bool rma;            /* put / get available */
    bool defer_rma;      /* put / get happen at the initiator's next poll */
    size_t max_msg;      /* unexpected and expected limit (0: 64 KiB) */
    size_t max_segments; /* memory handle segments (0: 1) */
    size_t piece_max;    /* rma_piece_max's advice for every peer (0: none) */
} fake_na_opts_t;

/* A class for a new endpoint (0, 1, 2, ... in order of opening). */
opal_na_class_t *fake_na_open(const fake_na_opts_t *opts);
/* Closes a class opened by fake_na_open (its contexts destroyed first). */
void fake_na_close(opal_na_class_t *cls);
/* The endpoint's address as another endpoint's class sees it (a
 * reference of cls, freed with opal_na_addr_free(cls, ...)). */
opal_na_addr_t *fake_na_addr_of(opal_na_class_t *cls, opal_na_class_t *peer);
/* Messages dropped because their context did not exist. */
unsigned int fake_na_dropped(void);
/* Put / get operations started, by every class, since the process began. */
unsigned int fake_na_rma_ops(void);

#endif /* TEST_BULK_BULK_FAKE_NA_H */
