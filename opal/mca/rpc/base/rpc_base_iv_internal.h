/*
 * Incast variables inside the rpc base: the namespace, its entries and its
 * operations (rpc_base_iv.c runs them; rpc_base_iv_ns.c holds the
 * namespaces, the protocol's handler and the user's calls).
 */
#ifndef OPAL_MCA_RPC_BASE_RPC_BASE_IV_INTERNAL_H
#define OPAL_MCA_RPC_BASE_RPC_BASE_IV_INTERNAL_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/class/opal_hash_table.h"
#include "opal/mca/rpc/rpc_iv.h"
#include "opal/mca/rpc/rpc_tree.h"

/* The variables rpc_iv_key_max and rpc_iv_value_max. */
extern unsigned int opal_rpc_base_iv_key_max;
extern unsigned int opal_rpc_base_iv_value_max;

typedef struct iv_entry_t {
    void *value;
    size_t len;
    /* 0: a lazy update's value, not given a version by the root yet. */
    uint64_t version;
} iv_entry_t;

struct opal_rpc_iv_ns_t {
    opal_rpc_context_t *ctx;
    opal_rpc_group_t *group; /* NULL: this process alone */
    char group_name[OPAL_RPC_GROUP_NAME_MAX + 1];
    uint32_t id;
    uint32_t root, self, size;
    const opal_rpc_tree_ops_t *tree;
    uint32_t k;
    double timeout;
    opal_rpc_iv_ops_t ops;
    opal_hash_table_t entries; /* key bytes -> iv_entry_t */
    /* Fetches on their way up (key bytes -> iv_op_t): another miss of the
     * key here waits for that one's answer instead of asking again, as
     * CaRT aggregates fetches. */
    opal_hash_table_t fetching;
    uint32_t inflight; /* ops not finished */
    opal_rpc_iv_stats_t stats;
    opal_rpc_iv_ns_t *next; /* the registry */
};

typedef enum { IV_FETCH, IV_UPDATE, IV_INVAL_UP, IV_INVAL_DOWN } iv_kind_t;

typedef struct iv_op_t {
    opal_rpc_iv_ns_t *ns;
    iv_kind_t kind;
    void *key;
    size_t keylen;
    /* update: the value sent; fetch: the value found. */
    void *value;
    size_t len;
    uint64_t version;
    int status;
    char *reason; /* why it failed, from the member that said so */
    /* An invalidate on its way down: members that answered, children
     * still out (plus one while they are being sent). */
    uint32_t members, pending;
    /* The request served (a reference), or NULL for the user's op. */
    opal_rpc_request_t *from;
    bool lazy; /* a lazy update's trip to the root: no callback */
    /* A fetch on its way up (in ns->fetching), and the fetches of the same
     * key waiting for its answer. */
    bool asking;
    struct iv_op_t *waiters, *next_waiter;
    opal_rpc_iv_cb_t cb;
    void *arg;
} iv_op_t;

/* A new op of ns for key (copied); counted in ns->inflight until freed. */
iv_op_t *opal_rpc_base_iv_op_new(opal_rpc_iv_ns_t *ns, iv_kind_t kind, const void *key,
                                 size_t keylen);
void opal_rpc_base_iv_op_free(iv_op_t *op);
/* Copies value into op's. */
int opal_rpc_base_iv_op_set_value(iv_op_t *op, const void *value, size_t len);
/* Finishes op (status already set) from the context's next progress. */
void opal_rpc_base_iv_op_finish_later(iv_op_t *op);
/* Starts op as its kind says (a fetch, an update, an invalidate); it
 * finishes once, by replying to op->from or calling op->cb. */
void opal_rpc_base_iv_op_start(iv_op_t *op);
/* Stores (value, version) for key at ns unless what is there is newer
 * (force: regardless); on_refresh is told. */
int opal_rpc_base_iv_entry_put(opal_rpc_iv_ns_t *ns, const void *key, size_t keylen,
                               const void *value, size_t len, uint64_t version, bool force);
/* Frees every entry of ns. */
void opal_rpc_base_iv_entries_free(opal_rpc_iv_ns_t *ns);

#endif /* OPAL_MCA_RPC_BASE_RPC_BASE_IV_INTERNAL_H */
