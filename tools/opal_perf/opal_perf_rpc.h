/*
 * What opal_perf's rpc subcommands share: the protocol (one base, the
 * operations of every rpc subcommand, so that one rpc-server serves them
 * all) and the client's state. opal_perf_rpc.c holds rpc-rate, start-up
 * and the server loop; opal_perf_rpc_xfer.c rpc-lat and rpc-bw.
 */
#ifndef OPAL_TOOLS_OPAL_PERF_OPAL_PERF_RPC_H
#define OPAL_TOOLS_OPAL_PERF_OPAL_PERF_RPC_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stdint.h>

#include "opal/mca/rpc/rpc.h"
#include "tools/opal_perf/opal_perf.h"

#define PERF_RPC_BASE 0x30

enum {
    PERF_RPC_OP_RATE,    /* rpc-rate: an IOV in, nothing out */
    PERF_RPC_OP_DONE,    /* the client is done: the server stops */
    PERF_RPC_OP_LAT,     /* rpc-lat: an IOV in, the same bytes out */
    PERF_RPC_OP_BW_INIT, /* rpc-bw: the client's bulk handle (a BULK field) */
    PERF_RPC_OP_BW,      /* rpc-bw: pull or push a window of chunks of it */
    PERF_RPC_OP_COUNT
};

/* The client's side of a run. */
typedef struct perf_rpc_t {
    opal_rpc_context_t *ctx;
    opal_na_addr_t *server;
    uint8_t *data; /* the largest size's bytes */
    long done;     /* completions so far */
    int failed;    /* the first error a completion saw */
    /* rpc-rate: completed requests kept to be sent again (a reference
     * each), as hg_rate forwards its handles again. */
    opal_rpc_request_t **spare;
    int nspare, spare_cap;
} perf_rpc_t;

/* Fills ops[PERF_RPC_OP_LAT], [BW_INIT] and [BW] with flags (0 or
 * OPAL_RPC_OP_INLINE). */
void perf_rpc_xfer_ops(opal_rpc_op_t *ops, uint32_t flags);
/* Releases what the server's rpc-bw handlers kept. */
void perf_rpc_xfer_server_fini(void);
/* The rpc-lat and rpc-bw clients: a table (or JSON) on stdout; an error
 * after saying why. */
int perf_rpc_lat_client(perf_t *p, perf_rpc_t *r);
int perf_rpc_bw_client(perf_t *p, perf_rpc_t *r);
/* Progresses the client's context until r->done reaches target or a
 * completion failed; the failure's status. */
int perf_rpc_wait(const perf_t *p, perf_rpc_t *r, long target);

#endif /* OPAL_TOOLS_OPAL_PERF_OPAL_PERF_RPC_H */
