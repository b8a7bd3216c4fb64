/*
 * rpc incast variables (IV; DAOS CaRT's crt_iv): a namespace of keys over
 * a group, with one member as its root. The root holds the values (its
 * store); the other members keep a cache. Keys and values are opaque byte
 * buffers; each value has a version the root assigns (1 for the first,
 * one more at each update).
 *
 *   every member, with the same id and root (collective by convention,
 *   nothing travels):
 *     opal_rpc_iv_ns_create(ctx, group, 7, 0, NULL, NULL, &ns);
 *   opal_rpc_iv_update(ns, "k", 1, buf, len, OPAL_RPC_IV_SYNC, done, arg);
 *   opal_rpc_iv_fetch(ns, "k", 1, got, arg);
 *     got(ns, status, value, len, version, arg)      from ctx's progress
 *   opal_rpc_iv_invalidate(ns, "k", 1, done, arg);
 *   opal_rpc_iv_ns_destroy(ns);
 *
 * fetch: from this member's cache (or the root's store) when it has the
 * key; else the request goes to the tree parent, which answers from its
 * own cache or asks its parent in turn, each member caching the value on
 * the way back down. The root answers from its store, its on_fetch hook,
 * or OPAL_ERR_NOT_FOUND. Misses of a key while its fetch is on the way up
 * wait for that answer (CaRT's fetch aggregation).
 * update: goes up the tree to the root, which stores it with the next
 * version; the members on the way cache it with that version as the reply
 * passes. OPAL_RPC_IV_SYNC completes once the root stored it (with the
 * version); OPAL_RPC_IV_LAZY completes once this member holds it (version
 * 0: not assigned yet) and sends it to the root in the background.
 * Members off that path keep what they cached: an invalidate makes them
 * read again.
 * invalidate: goes to the root, then down the whole tree; every member
 * drops its cached copy, and the operation completes once all have (the
 * root's store stays: a fetch after it reads the root's latest value).
 *
 * Members the group knows dead (opal_rpc_group_member_set_state, SWIM)
 * are passed over: a request goes to the nearest live ancestor, and an
 * invalidate to the live members below a dead one. A member that does
 * not answer (unreachable, or silent past the namespace's timeout) is
 * gone around the same way for that request, as CaRT does: a fetch or
 * update goes on to the next ancestor (one timeout more per member lost
 * on the way), an invalidate to the lost member's children, and then
 * completes with the error (that one member may hold a stale copy) and
 * the count of those reached. Only the root lost fails an operation.
 *
 * Threads: a namespace belongs to its context: call it from the thread
 * that progresses the context. Completions run from that context's
 * progress, never from the call that starts an operation; hooks run in
 * the same thread where the operation is handled (at the root, or for a
 * lazy update's local copy, that may be inside the call).
 */
#ifndef OPAL_MCA_RPC_RPC_IV_H
#define OPAL_MCA_RPC_RPC_IV_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/mca/rpc/rpc.h"
#include "opal/mca/rpc/rpc_group.h"

typedef struct opal_rpc_iv_ns_t opal_rpc_iv_ns_t;

/* Optional hooks of a namespace (any may be NULL). Each runs from the
 * progress of the namespace's context and must not block. */
typedef struct opal_rpc_iv_ops_t {
    /* Root: key is in no store. Set *value (malloc'd, taken over; NULL
     * with *len 0 for an empty value) and return OPAL_SUCCESS to store it
     * as version 1, or return OPAL_ERR_NOT_FOUND (or any error, which the
     * fetch then completes with). */
    int (*on_fetch)(opal_rpc_iv_ns_t *ns, const void *key, size_t keylen, void **value, size_t *len,
                    void *arg);
    /* Root: an update about to be stored as version. A negative return
     * refuses it: the updater's completion gets that error. */
    int (*on_update)(opal_rpc_iv_ns_t *ns, const void *key, size_t keylen, const void *value,
                     size_t len, uint64_t version, void *arg);
    /* Any member: its copy of key changed: a value stored or cached
     * (invalidate false), or the cached copy dropped (invalidate true,
     * value NULL). */
    void (*on_refresh)(opal_rpc_iv_ns_t *ns, const void *key, size_t keylen, const void *value,
                       size_t len, uint64_t version, bool invalidate, void *arg);
    void *arg;
} opal_rpc_iv_ops_t;

/* A namespace's options; zeroed (or NULL) takes the defaults. */
typedef struct opal_rpc_iv_opts_t {
    /* Tree shape by name (NULL: rpc_base_tree) and its k (0: rpc_base_tree_k). */
    const char *tree;
    uint32_t k;
    /* Seconds a request to a parent or child may take (0: rpc_base_timeout). */
    double timeout;
} opal_rpc_iv_opts_t;

typedef enum {
    OPAL_RPC_IV_SYNC = 0, /* completes once the root stored the update */
    OPAL_RPC_IV_LAZY = 1, /* completes once it is here; the root gets it later */
} opal_rpc_iv_mode_t;

/* An operation's completion, once, from the progress of the namespace's
 * context. fetch: the value (valid during the call only) and its version;
 * update: the version the root gave (0 for a lazy update); invalidate:
 * value NULL, len the number of members that dropped or had no copy (all
 * the live members on success). */
typedef void (*opal_rpc_iv_cb_t)(opal_rpc_iv_ns_t *ns, int status, const void *value, size_t len,
                                 uint64_t version, void *arg);

/* Counters of a namespace at this member (opal_rpc_iv_stats). */
typedef struct opal_rpc_iv_stats_t {
    uint64_t hits;        /* fetches answered from the cache / store here */
    uint64_t misses;      /* fetches this member asked its parent for */
    uint64_t joined;      /* fetches that waited for one already asking */
    uint64_t sent;        /* requests this member sent (parent or children) */
    uint64_t served;      /* requests from other members answered */
    uint64_t stored;      /* root: updates stored */
    uint64_t dropped;     /* cached copies dropped by invalidates */
    uint64_t refused;     /* malformed or misdirected requests refused */
    uint64_t lazy_failed; /* lazy updates the root did not take */
} opal_rpc_iv_stats_t;

/* Creates namespace ns_id over group (NULL: this process alone, which is
 * the root) with its root at group rank root, on ctx. Every member
 * creates it with the same id, root and tree; requests that name a
 * namespace a member lacks are refused. ops (may be NULL) is copied.
 * OPAL_ERR_EXISTS for an id already used over that group here,
 * OPAL_ERR_BAD_PARAM (with a message) for a root out of the group, a bad
 * shape or k, or this process not a member. */
OPAL_DECLSPEC int opal_rpc_iv_ns_create(opal_rpc_context_t *ctx, opal_rpc_group_t *group,
                                        uint32_t ns_id, uint32_t root,
                                        const opal_rpc_iv_opts_t *opts,
                                        const opal_rpc_iv_ops_t *ops, opal_rpc_iv_ns_t **ns);
/* Destroys ns with its cache (and store at the root); this member refuses
 * requests for it from then on. OPAL_ERR_RESOURCE_BUSY while operations
 * it started or serves are not completed. */
OPAL_DECLSPEC int opal_rpc_iv_ns_destroy(opal_rpc_iv_ns_t *ns);

/* Fetches key (keylen bytes, 1..rpc_iv_key_max; copied). cb runs once
 * (not when this returns an error): OPAL_SUCCESS with the value,
 * OPAL_ERR_NOT_FOUND when the root has none, or the error on the way. */
OPAL_DECLSPEC int opal_rpc_iv_fetch(opal_rpc_iv_ns_t *ns, const void *key, size_t keylen,
                                    opal_rpc_iv_cb_t cb, void *arg);
/* Updates key to value (len bytes, at most rpc_iv_value_max; copied). cb
 * (may be NULL) runs once as mode says. */
OPAL_DECLSPEC int opal_rpc_iv_update(opal_rpc_iv_ns_t *ns, const void *key, size_t keylen,
                                     const void *value, size_t len, opal_rpc_iv_mode_t mode,
                                     opal_rpc_iv_cb_t cb, void *arg);
/* Drops every member's cached copy of key. cb (may be NULL) runs once
 * all have, or with the first error (a member that failed). */
OPAL_DECLSPEC int opal_rpc_iv_invalidate(opal_rpc_iv_ns_t *ns, const void *key, size_t keylen,
                                         opal_rpc_iv_cb_t cb, void *arg);

OPAL_DECLSPEC uint32_t opal_rpc_iv_ns_id(const opal_rpc_iv_ns_t *ns);
OPAL_DECLSPEC void opal_rpc_iv_stats(const opal_rpc_iv_ns_t *ns, opal_rpc_iv_stats_t *stats);

#endif /* OPAL_MCA_RPC_RPC_IV_H */
