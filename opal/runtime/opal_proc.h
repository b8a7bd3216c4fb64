/*
 * Processes of the job as opal sees them: this process and its peers, each
 * an opal_proc_t with its name (job id, rank), host, node id, binding and
 * locality relative to this process.
 *
 * The run-time environment (orte_init) describes the job with
 * opal_proc_init(), after installing the modex hooks (opal_rte.h). Each
 * process then publishes where it runs under the modex key
 * OPAL_PROC_MODEX_KEY; a peer's opal_proc_t is built the first time it is
 * looked up, from what that peer published. opal never links orte.
 *
 * Locality: two processes on the same node (same node id) share the node.
 * When both are bound to CPUs, they also share a package (a NUMA node)
 * when one package (NUMA node) of the topology holds CPUs of both
 * bindings. A process that is not bound could run anywhere on its node,
 * so with it only the node is known to be shared.
 *
 * All functions are thread-safe.
 */
#ifndef OPAL_RUNTIME_OPAL_PROC_H
#define OPAL_RUNTIME_OPAL_PROC_H

#include "opal/opal_config.h"

#include <stdint.h>

#include "opal/class/opal_list.h"

/* A process's name: its job and its rank in the job. */
typedef struct opal_process_name_t {
    uint32_t jobid;
    uint32_t vpid;
} opal_process_name_t;

/* Locality flags (opal_proc_t.proc_locality). A flag implies the ones
 * above it: ON_PACKAGE and ON_NUMA are only set with ON_NODE. */
enum {
    OPAL_PROC_LOCALITY_NONE = 0x0,
    OPAL_PROC_ON_NODE = 0x1,
    OPAL_PROC_ON_PACKAGE = 0x2,
    OPAL_PROC_ON_NUMA = 0x4,
};

/* The modex key under which each process publishes where it runs. */
#define OPAL_PROC_MODEX_KEY "opal.proc"

typedef struct opal_proc_t {
    opal_list_item_t super;
    opal_process_name_t proc_name;
    uint32_t proc_node_id;
    /* Owned by the proc. */
    char *proc_hostname;
    /* The CPUs the process is bound to as a list ("0-3,8"), owned; NULL
     * when it is not bound. */
    char *proc_cpuset;
    /* OPAL_PROC_ON_* relative to this process (all three for itself). */
    uint16_t proc_locality;
} opal_proc_t;
OBJ_CLASS_DECLARATION(opal_proc_t);

/* What the run-time environment knows about the job and this process. */
typedef struct opal_proc_job_info_t {
    opal_process_name_t my_name;
    uint32_t size;
    uint32_t local_rank;
    uint32_t local_size;
    uint32_t node_id;
    const char *hostname;
    /* $TMPDIR/opal-mca.<uid>/<jobid>/ */
    const char *session_dir;
    /* How long a peer lookup waits for the peer's information (negative:
     * forever). */
    int64_t lookup_timeout_ns;
} opal_proc_job_info_t;

/* Records the job (strings copied), builds this process's opal_proc_t
 * (its binding read from the operating system) and publishes it under
 * OPAL_PROC_MODEX_KEY, committed. Needs the modex hooks installed.
 * OPAL_ERR_EXISTS when already initialised, OPAL_ERR_BAD_PARAM for an
 * inconsistent description (rank >= size, ...). */
OPAL_DECLSPEC int opal_proc_init(const opal_proc_job_info_t *job);

/* Releases every opal_proc_t the table holds (a caller that retained one
 * keeps it) and forgets the job. Safe to call when not initialised. */
OPAL_DECLSPEC void opal_proc_finalize(void);

/* The job as given to opal_proc_init (strings owned by opal), or NULL
 * before it. */
OPAL_DECLSPEC const opal_proc_job_info_t *opal_proc_job_info(void);

/* This process, or NULL before opal_proc_init. Owned by the table:
 * OBJ_RETAIN it to keep it past opal_proc_finalize. */
OPAL_DECLSPEC opal_proc_t *opal_proc_local_get(void);

/* The process of rank in this job: built on first use from what it
 * published (waiting up to the lookup timeout for it), then cached. *proc
 * is owned by the table as above. OPAL_ERR_BAD_PARAM for a rank outside
 * the job, OPAL_ERR_NOT_INITIALIZED before opal_proc_init,
 * OPAL_ERR_PROTOCOL when the peer published something malformed, or the
 * modex error (OPAL_ERR_TIMEOUT, ...). */
OPAL_DECLSPEC int opal_proc_for_rank(uint32_t rank, opal_proc_t **proc);

/* "[jobid,rank]" for messages; valid until the next call from the same
 * thread. */
OPAL_DECLSPEC const char *opal_proc_name_string(const opal_process_name_t *name);

struct hwloc_topology;

/* The locality of a peer relative to this process: ON_NODE when the node
 * ids are equal; when both cpusets (hwloc list strings, NULL or "" for a
 * process that is not bound) are given, ON_PACKAGE / ON_NUMA when one
 * package / NUMA node of topology holds CPUs of both. topology NULL uses
 * this machine's (loaded once); a build without hwloc only ever reports
 * the node. OPAL_ERR_BAD_VALUE for a cpuset that does not parse. */
OPAL_DECLSPEC int opal_proc_compute_locality(struct hwloc_topology *topology, uint32_t my_node,
                                             const char *my_cpuset, uint32_t peer_node,
                                             const char *peer_cpuset, uint16_t *locality);

/* The CPUs this process is bound to as a list string (malloc'd, the
 * caller frees) in *cpuset, or NULL when it may run on every CPU it is
 * allowed to use (or hwloc is not available). */
OPAL_DECLSPEC int opal_proc_get_binding(char **cpuset);

#endif /* OPAL_RUNTIME_OPAL_PROC_H */
