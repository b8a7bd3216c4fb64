/*
 * What orte knows about this process and its job once orte_init returned:
 * filled by the selected ess component, read-only for everyone else, and
 * valid until orte_finalize.
 */
#ifndef ORTE_RUNTIME_ORTE_GLOBALS_H
#define ORTE_RUNTIME_ORTE_GLOBALS_H

#include "opal/opal_config.h"

#include <stdint.h>

#include "opal/runtime/opal_proc.h"

/* Host names of other launchers may be fully qualified: up to 255 bytes. */
#define ORTE_HOSTNAME_MAX 256
#define ORTE_PATH_MAX     4096

typedef struct orte_process_info_t {
    /* Job id and rank in the job (vpid). */
    opal_process_name_t my_name;
    /* Number of processes in the job. */
    uint32_t size;
    /* Rank among the job's processes on this node, and their number. */
    uint32_t local_rank;
    uint32_t local_size;
    /* This node's id in the job (0 .. number of nodes - 1). */
    uint32_t node_id;
    char hostname[ORTE_HOSTNAME_MAX];
    /* $TMPDIR/opal-mca.<uid>/<jobid>/ (mode 0700), without the final '/'. */
    char session_dir[ORTE_PATH_MAX];
    /* Which ess component runs this process ("env", "pmix", "singleton"). */
    char ess_name[64];
} orte_process_info_t;

/* This process; zeroed outside orte_init .. orte_finalize. */
OPAL_DECLSPEC extern orte_process_info_t orte_process_info;

#endif /* ORTE_RUNTIME_ORTE_GLOBALS_H */
