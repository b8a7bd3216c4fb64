/*
 * The run-time environment seen from opal: modex (publish a value under a
 * key, read a peer's value), fence and abort, reached through a table of
 * hooks that a runtime (orte) installs at its init and removes at its
 * finalize. opal never links orte: code in opal and in opal components
 * calls opal_modex_send / opal_modex_recv / opal_fence / opal_abort, and
 * those return OPAL_ERR_NOT_INITIALIZED, with a message saying so, while
 * no runtime is installed.
 *
 * Model: a process puts (key, bytes) pairs with a scope, then commits them
 * (or fences, which commits). After a fence that collects data every
 * peer's committed pairs are held locally and reads are cheap; otherwise a
 * read asks the runtime, which answers once the peer has committed the key
 * or the timeout ends.
 *
 * The hooks may be called from any thread once installed; the runtime
 * serialises what needs it. Installing and removing are done by the
 * runtime's init and finalize, from one thread, while no other thread uses
 * the hooks.
 */
#ifndef OPAL_RUNTIME_OPAL_RTE_H
#define OPAL_RUNTIME_OPAL_RTE_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Who may read a value; a process always reads its own. A REMOTE value is
 * hidden from the other processes of its node (reads of it fail as
 * missing), a LOCAL one from other nodes. The numbers match
 * orte_modex_scope_t. */
typedef enum {
    OPAL_MODEX_SCOPE_LOCAL = 1,  /* processes on this node */
    OPAL_MODEX_SCOPE_REMOTE = 2, /* processes on other nodes */
    OPAL_MODEX_SCOPE_GLOBAL = 3, /* every process of the job */
} opal_modex_scope_t;

/* Keys are at most this many characters (PMIx's limit is larger). */
#define OPAL_MODEX_MAX_KEY 255

/* Wait forever in opal_modex_recv. */
#define OPAL_MODEX_WAIT_FOREVER ((int64_t) -1)

/* What a runtime provides. Every entry is required but
 * rte_peer_finalized. */
typedef struct opal_rte_hooks_t {
    /* Names the runtime in messages ("ess/pmix"). */
    const char *rte_name;
    /* Stages (key, value) for the next commit; value is copied. */
    int (*rte_modex_put)(const char *key, const void *value, size_t size, opal_modex_scope_t scope);
    /* Makes the staged pairs visible to peers without waiting for them. */
    int (*rte_modex_commit)(void);
    /* Reads peer's value for key into a malloc'd *value the caller frees;
     * waits up to timeout_ns (negative: forever). OPAL_ERR_TIMEOUT (after a
     * message naming the peer and the key) or OPAL_ERR_NOT_FOUND (the
     * value can never arrive). A timeout of 0 is a poll: OPAL_ERR_TIMEOUT
     * without a message when the value is not there yet. */
    int (*rte_modex_get)(uint32_t peer, const char *key, void **value, size_t *size,
                         int64_t timeout_ns);
    /* Commits, then waits for every process of the job; with collect,
     * brings every committed pair here. */
    int (*rte_fence)(bool collect);
    /* Stops the whole job with status (the launcher's exit status: its low
     * 8 bits, 1 when those are 0), after printing message. Returns only
     * when that could not be done. */
    int (*rte_abort)(int status, const char *message);
    /* Optional (NULL: the runtime cannot say). Whether peer, a process of
     * this job on this node, finalized the runtime; answered from this
     * node alone, at once, never waiting for the launcher (a BTL asks
     * from its progress when it sees the peer's process gone). */
    bool (*rte_peer_finalized)(uint32_t peer);
} opal_rte_hooks_t;

/* Installs hooks (the table is copied). OPAL_ERR_EXISTS when a runtime is
 * already installed, OPAL_ERR_BAD_PARAM when an entry is missing. */
OPAL_DECLSPEC int opal_rte_install(const opal_rte_hooks_t *hooks);

/* Removes the installed hooks; OPAL_ERR_NOT_INITIALIZED when none are. */
OPAL_DECLSPEC int opal_rte_uninstall(void);

/* True while a runtime's hooks are installed. */
OPAL_DECLSPEC bool opal_rte_installed(void);

/* The installed runtime's name, or NULL. */
OPAL_DECLSPEC const char *opal_rte_name(void);

/* Publishes value (size bytes, copied) under key with scope; peers see it
 * after the next opal_modex_commit or opal_fence. OPAL_ERR_BAD_PARAM for
 * an empty or too long key or a NULL value with a non-zero size. */
OPAL_DECLSPEC int opal_modex_send(const char *key, const void *value, size_t size,
                                  opal_modex_scope_t scope);

/* Makes everything published so far visible to peers without a fence. */
OPAL_DECLSPEC int opal_modex_commit(void);

/* Reads what peer (a rank of this job, possibly this process) published
 * under key: *value is malloc'd, the caller frees it (NULL when *size is
 * 0). Waits up to timeout_ns for the peer to commit it (negative: forever);
 * OPAL_ERR_TIMEOUT names the peer and the key. */
OPAL_DECLSPEC int opal_modex_recv(uint32_t peer, const char *key, void **value, size_t *size,
                                  int64_t timeout_ns);

/* Waits until every process of the job has entered the fence, committing
 * first; with collect, every peer's data is brought here. */
OPAL_DECLSPEC int opal_fence(bool collect);

/* Whether peer (a process of this job on this node) finalized the
 * runtime: for a BTL that sees a peer's process gone without having heard
 * a goodbye from it, to tell a finalize from a crash. Asks the runtime's
 * rte_peer_finalized; false without a runtime or when it cannot say.
 * While the peer runs, false only means "not yet". */
OPAL_DECLSPEC bool opal_rte_peer_finalized(uint32_t peer);

/* Stops the job with status after printing the message (printf-style).
 * Without a runtime, prints the message and returns
 * OPAL_ERR_NOT_INITIALIZED: the caller decides whether to exit. */
OPAL_DECLSPEC int opal_abort(int status, const char *format, ...) OPAL_PRINTF_LIKE(2, 3);

#endif /* OPAL_RUNTIME_OPAL_RTE_H */
