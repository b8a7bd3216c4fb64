/*
 * The ess framework's base: the framework itself, selection, and what
 * every component shares (host name, session directory, job ids).
 */
#ifndef ORTE_MCA_ESS_BASE_BASE_H
#define ORTE_MCA_ESS_BASE_BASE_H

#include "opal/opal_config.h"

#include <stddef.h>
#include <stdint.h>

#include "opal/mca/base/mca_base_framework.h"
#include "orte/mca/ess/ess.h"

OPAL_DECLSPEC extern mca_base_framework_t orte_ess_base_framework;

/* ess_base_lookup_timeout: seconds a peer lookup (opal_proc_for_rank)
 * waits for the peer's information; 0 waits forever. */
OPAL_DECLSPEC extern int orte_ess_base_lookup_timeout;

/* Opens the framework (if needed) and selects the module that matches how
 * this process was started. On success the framework stays open (closed
 * by orte_ess_base_close). OPAL_ERR_NOT_FOUND, after a message listing
 * why each component declined, when none can run here. */
OPAL_DECLSPEC int orte_ess_base_select(orte_ess_base_module_t **module,
                                       const mca_base_component_t **component);

/* Closes the framework opened by orte_ess_base_select. */
OPAL_DECLSPEC int orte_ess_base_close(void);

/* This machine's host name into name (size bytes, NUL-terminated). */
OPAL_DECLSPEC int orte_ess_base_hostname(char *name, size_t size);

/* A job id for a launcher's job name: the number itself when name is a
 * decimal number that fits, otherwise a 32-bit hash of it. */
OPAL_DECLSPEC uint32_t orte_ess_base_jobid_from_name(const char *name);

/* Creates $TMPDIR/opal-mca.<uid>/<jobid> (mode 0700) and its parent if
 * missing, or joins it when another process of the job got there first,
 * refusing either when it is not a directory owned by this user with no
 * access for others; writes the path into path (size bytes). For
 * launchers that name the job themselves (a PMIx namespace); a fresh job
 * takes a free jobid with orte_session_dir_create() instead. */
OPAL_DECLSPEC int orte_ess_base_session_dir_join(uint32_t jobid, char *path, size_t size);

/* Seconds for a nanosecond timeout, rounded up (negative stays -1). */
static inline int orte_ess_base_timeout_seconds(int64_t timeout_ns)
{
    if (timeout_ns < 0) {
        return -1;
    }
    int64_t seconds = (timeout_ns + 999999999) / 1000000000;
    return seconds > 86400 * 365 ? 86400 * 365 : (int) seconds;
}

#endif /* ORTE_MCA_ESS_BASE_BASE_H */
