/*
 * The rank side of mcarun's launcher socket: how a process started by
 * mcarun reports itself, exchanges modex data and joins fences.
 *
 * mcarun serves one Unix socket per job in the job's session directory
 * (mode 0600, peers checked with SO_PEERCRED). A rank finds it through the
 * environment mcarun sets (the OPAL_ORTE_* variables of orte_launcher_env.h:
 * not OPAL_MCA_*, which the MCA variable system would report as unknown
 * names; the client reads them itself), connects once in
 * orte_launcher_client_connect(), and keeps the connection until
 * orte_launcher_client_finalize(). A rank that exits while connected
 * without finalize is reported by mcarun as having exited without
 * orte_finalize.
 *
 * Modex model: a rank puts (key, value) pairs with a scope, then fences.
 * After a fence with collect=true every rank holds every other rank's
 * committed pairs locally, so gets are local; after a fence without
 * collect (or before any fence) a get asks mcarun, which answers once the
 * peer has committed the key (waiting up to the timeout).
 *
 * All calls block the calling thread; they are not thread-safe with each
 * other (the ess component serialises them). Errors are OPAL_ERR_*; a
 * protocol violation from the launcher is OPAL_ERR_PROTOCOL with a message
 * on opal_output stream 0 naming what was wrong.
 */
#ifndef ORTE_UTIL_ORTE_LAUNCHER_CLIENT_H
#define ORTE_UTIL_ORTE_LAUNCHER_CLIENT_H

#include "opal/opal_config.h"

#include <stddef.h>
#include <stdint.h>

/* Where a modex value is visible. */
typedef enum {
    ORTE_MODEX_SCOPE_LOCAL = 1,  /* ranks on this node */
    ORTE_MODEX_SCOPE_REMOTE = 2, /* ranks on other nodes */
    ORTE_MODEX_SCOPE_GLOBAL = 3, /* everyone */
} orte_modex_scope_t;

/* What mcarun told this rank at connect time. */
typedef struct orte_launcher_job_info_t {
    uint32_t jobid;
    uint32_t rank;
    uint32_t size;
    uint32_t local_rank;
    uint32_t local_size;
    uint32_t node_id;
    /* Session directory of the job ($TMPDIR/opal-mca.<uid>/<jobid>/). */
    char session_dir[4096];
} orte_launcher_job_info_t;

/* True when this process was started by mcarun (its environment names a
 * launcher socket). Cheap; does not connect. */
OPAL_DECLSPEC int orte_launcher_client_detected(void);

/* Connects to mcarun and fills info. OPAL_ERR_NOT_FOUND when not started by
 * mcarun; OPAL_ERR_UNREACH when the socket cannot be reached; OPAL_ERR_EXISTS
 * when already connected; the error mcarun gave when it refused the rank
 * (e.g. another process already connected as this rank). The functions
 * below return OPAL_ERR_NOT_INITIALIZED when not connected. */
OPAL_DECLSPEC int orte_launcher_client_connect(orte_launcher_job_info_t *info);

/* Stages one pair for the next commit/fence; the value is copied. Values up
 * to ORTE_LAUNCHER_MAX_VALUE bytes, keys of 1 to 255 bytes. This rank's own
 * gets see the pair at once; other ranks after the commit. */
#define ORTE_LAUNCHER_MAX_VALUE (16u * 1024u * 1024u)
OPAL_DECLSPEC int orte_launcher_client_put(const char *key, const void *value, size_t size,
                                           orte_modex_scope_t scope);

/* Sends the staged pairs to mcarun. */
OPAL_DECLSPEC int orte_launcher_client_commit(void);

/* Commits, then waits until every rank of the job has entered the fence.
 * With collect, every rank's committed data is brought here. A rank that
 * died or disconnected before entering fails the fence with
 * OPAL_ERR_PEER_FAILED. */
OPAL_DECLSPEC int orte_launcher_client_fence(int collect);

/* Gets peer's value for key: *value is malloc'd (caller frees; never NULL on
 * success, even for an empty value). Waits up to timeout_ns (negative:
 * forever) for the peer to commit it; then OPAL_ERR_TIMEOUT with a message
 * naming the peer and the key. OPAL_ERR_NOT_FOUND when the peer has
 * finalized or exited without it, when its scope hides it from this rank,
 * or (for this rank's own keys) when it was never put. */
OPAL_DECLSPEC int orte_launcher_client_get(uint32_t peer, const char *key, void **value,
                                           size_t *size, int64_t timeout_ns);

/* Tells mcarun to stop the job: status becomes mcarun's exit status (its low
 * 8 bits; 1 when those are 0) and message is printed with this rank's
 * name. Does not return on success: mcarun stops the job and closes the
 * connection, and the process then _exits with that status. Returns an
 * error if it could not be sent. */
OPAL_DECLSPEC int orte_launcher_client_abort(int status, const char *message);

/* Says goodbye (the rank called orte_finalize), waits for mcarun to record
 * it, and closes the socket. Staged pairs that were not committed are
 * dropped. */
OPAL_DECLSPEC int orte_launcher_client_finalize(void);

#endif /* ORTE_UTIL_ORTE_LAUNCHER_CLIENT_H */
