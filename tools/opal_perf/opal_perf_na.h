/*
 * What opal_perf's na subcommands (opal_perf_na.c) and bulk subcommands
 * (opal_perf_bulk.c) share: the client / server protocol's tags, the run's
 * state, and the helpers the bulk side calls.
 */
#ifndef TOOLS_OPAL_PERF_OPAL_PERF_NA_H
#define TOOLS_OPAL_PERF_OPAL_PERF_NA_H

#include "opal/opal_config.h"

#include "opal/mca/bulk/bulk.h"
#include "opal/mca/na/base/base.h"
#include "tools/opal_perf/opal_perf.h"

/* Tags of the client -> server protocol (Mercury's na_perf uses the same
 * roles). */
enum {
    TAG_INIT = 0,      /* u8 flags (FLAG_ECHO) */
    TAG_LAT = 1,       /* a latency message: answered with one of its size */
    TAG_HANDLE = 2,    /* send me your memory handle (answered, expected) */
    TAG_DONE = 3,      /* the client is finished */
    TAG_BULK_INIT = 4, /* the client's serialized bulk handle */
    TAG_BULK = 5,      /* u8 op, u32 window, u64 size: transfer the chunks, then answer */
};
enum {
    FLAG_ECHO = 0x1, /* answer with the bytes received (--validate) */
};

#define URI_KEY "opal_perf.na.uri"
#define URI_MAX 4096
/* How long a wait may see no completion before the run is declared stuck. */
#define STALL_NS (60ull * 1000000000ull)
/* Idle rounds of a spinning wait between two looks at the stall clock. */
#define STALL_CHECK_EVERY 1024u
/* How long the client waits for the server's URI file to appear. */
#define URI_FILE_WAIT_NS (60ull * 1000000000ull)
/* Answers the server keeps in flight at once. */
#define SERVER_SENDS 16

typedef struct perf_na_t {
    perf_t *p;
    bool server;
    opal_na_class_t *cls;
    opal_na_context_t *ctx;
    opal_na_addr_t *peer; /* client: the server */

    /* Message buffers, each of the class's limit. */
    void *unexp_buf, *unexp_data;
    void *exp_buf, *exp_data;
    void *send_buf, *send_data;
    size_t unexp_max, exp_max;
    opal_na_op_id_t *recv_op;
    opal_na_op_id_t *send_ops[SERVER_SENDS];
    opal_na_op_id_t *exp_op;

    /* RMA: window chunks of the largest size. */
    unsigned char *rma_buf;
    size_t rma_size;
    opal_na_mem_handle_t *local_mh;
    opal_na_mem_handle_t *remote_mh;
    opal_na_op_id_t **rma_ops;

    /* Completions seen by the callbacks (one thread). */
    uint64_t completed;
    int status; /* first error a callback saw */
    bool echo;  /* server: answer with the received bytes */
    bool done;  /* server: the client said DONE */
    size_t handle_size;

    /* bulk-pull / bulk-push (opal_perf_bulk.c). */
    opal_bulk_class_t *bulk;
    opal_bulk_t *bulk_local;  /* over rma_buf */
    opal_bulk_t *bulk_remote; /* server: the client's handle */
    opal_na_addr_t *bulk_client;
    uint64_t bulk_pending; /* server: transfers of the request in flight */
    uint64_t bulk_size;
    size_t bulk_window;
    opal_bulk_op_type_t bulk_op;
} perf_na_t;

/* Progresses until n->completed reaches target, a callback failed, or
 * nothing completed for 60 s. */
int perf_na_wait_for(perf_na_t *n, uint64_t target);
/* Records the first failure (printed once, naming what failed). */
void perf_na_note_status(perf_na_t *n, int ret, const char *what);
/* An operation id for an answer of the server that is not in use. */
opal_na_op_id_t *perf_na_idle_send_op(perf_na_t *n);
/* The callback that counts completions (arg: the perf_na_t). */
void perf_na_count_cb(const opal_na_cb_info_t *info);

/* Bulk: set-up and tear-down of the bulk class and the local handle over
 * rma_buf (both sides). */
int perf_bulk_setup(perf_na_t *n);
void perf_bulk_teardown(perf_na_t *n);
/* Server: a TAG_BULK_INIT (the client's serialized handle) or TAG_BULK
 * (u8 op, u32 window, u64 size) request from source, whose bytes are in buf. */
int perf_bulk_serve(perf_na_t *n, opal_na_tag_t tag, const void *buf, size_t size,
                    opal_na_addr_t *source);
/* Client: one size of bulk-pull / bulk-push; *value is MB/s. */
int perf_bulk_measure(perf_na_t *n, size_t size, long warmup, long iterations, double *value);
/* Client: sends its handle to the server (once, before the sizes). */
int perf_bulk_client_init(perf_na_t *n);

#endif /* TOOLS_OPAL_PERF_OPAL_PERF_NA_H */
