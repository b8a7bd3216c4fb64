/*
 * orte_init / orte_finalize: the ess component fills orte_process_info,
 * its modex hooks go into opal, and opal learns the job's processes.
 * Finalize undoes each step in reverse order.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/runtime/opal_init.h"
#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "orte/mca/ess/base/base.h"
#include "orte/runtime/orte_globals.h"
#include "orte/runtime/orte_init.h"

/* The frameworks of project orte, as configure found them (generated in
 * the build tree; declared exported in orte_init.h). */
#include "orte/mca/base/orte_frameworks.h"

orte_process_info_t orte_process_info;

static int init_count = 0;
static orte_ess_base_module_t *ess_module = NULL;

/* A process that finalizes leaves <session dir>/finalized.<rank> behind,
 * in the directory its node's processes of the job share (removed with
 * it when the job ends): a peer's BTL that sees its process gone without
 * a goodbye looks for it (opal_rte_peer_finalized), on this node alone,
 * never asking the launcher, which may be slow or stopped. */
static bool finalized_path(uint32_t rank, char *path, size_t size)
{
    if ('\0' == orte_process_info.session_dir[0] || rank >= orte_process_info.size) {
        return false;
    }
    int n = snprintf(path, size, "%s/finalized.%" PRIu32, orte_process_info.session_dir, rank);
    return n > 0 && (size_t) n < size;
}

static bool peer_finalized(uint32_t peer)
{
    char path[ORTE_PATH_MAX + 32];
    return finalized_path(peer, path, sizeof(path)) && 0 == access(path, F_OK);
}

static void mark_finalized(void)
{
    char path[ORTE_PATH_MAX + 32];
    if (!finalized_path(orte_process_info.my_name.vpid, path, sizeof(path))) {
        return;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        opal_output_verbose(MCA_BASE_VERBOSE_COMPONENT, orte_ess_base_framework.framework_output,
                            "orte_finalize: cannot leave %s (peers will take this process's "
                            "exit for a failure): %s",
                            path, strerror(errno));
        return;
    }
    close(fd);
}

static int describe_job_to_opal(void)
{
    opal_proc_job_info_t job = {
        .my_name = orte_process_info.my_name,
        .size = orte_process_info.size,
        .local_rank = orte_process_info.local_rank,
        .local_size = orte_process_info.local_size,
        .node_id = orte_process_info.node_id,
        .hostname = orte_process_info.hostname,
        .session_dir = orte_process_info.session_dir,
        .lookup_timeout_ns = orte_ess_base_lookup_timeout <= 0
                                 ? OPAL_MODEX_WAIT_FOREVER
                                 : (int64_t) orte_ess_base_lookup_timeout * 1000000000,
    };
    int rc = opal_proc_init(&job);
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "orte_init: describing the job to opal failed: %s", opal_strerror(rc));
    }
    return rc;
}

int orte_init(int *argc, char ***argv)
{
    if (init_count++ > 0) {
        return OPAL_SUCCESS;
    }
    int rc = opal_init_util(argc, argv);
    if (OPAL_SUCCESS != rc) {
        goto fail;
    }
    const mca_base_component_t *component = NULL;
    rc = orte_ess_base_select(&ess_module, &component);
    if (OPAL_SUCCESS != rc) {
        goto fail_util;
    }
    memset(&orte_process_info, 0, sizeof(orte_process_info));
    rc = ess_module->ess_init(&orte_process_info);
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "orte_init: ess/%s could not start: %s", component->mca_component_name,
                    opal_strerror(rc));
        goto fail_ess;
    }
    snprintf(orte_process_info.ess_name, sizeof(orte_process_info.ess_name), "%s",
             component->mca_component_name);
    opal_rte_hooks_t hooks = ess_module->ess_rte;
    if (NULL == hooks.rte_peer_finalized) {
        hooks.rte_peer_finalized = peer_finalized;
    }
    rc = opal_rte_install(&hooks);
    if (OPAL_SUCCESS != rc) {
        goto fail_module;
    }
    rc = describe_job_to_opal();
    if (OPAL_SUCCESS != rc) {
        goto fail_hooks;
    }
    /* Every program checks the MCA names it was given once its runtime is
     * up (frameworks check their own names as they register). Every rank
     * sees the same names, so rank 0 alone reports them, for the job; under
     * mcarun, which checked them itself, there is nothing left to say. */
    if (0 == orte_process_info.my_name.vpid) {
        rc = mca_base_var_check_unknown();
        if (OPAL_SUCCESS != rc) {
            opal_output(0, "orte_init: unknown MCA variable names (mca_base_unknown_params=error)");
            goto fail_proc;
        }
    }
    opal_output_verbose(
        MCA_BASE_VERBOSE_INFO, orte_ess_base_framework.framework_output,
        "orte_init: rank %" PRIu32 " of %" PRIu32 " (job %" PRIu32 ") on %s, local rank %" PRIu32
        " of %" PRIu32 ", node %" PRIu32 ", via ess/%s",
        orte_process_info.my_name.vpid, orte_process_info.size, orte_process_info.my_name.jobid,
        orte_process_info.hostname, orte_process_info.local_rank, orte_process_info.local_size,
        orte_process_info.node_id, orte_process_info.ess_name);
    return OPAL_SUCCESS;

fail_proc:
    opal_proc_finalize();
fail_hooks:
    (void) opal_rte_uninstall();
fail_module:
    (void) ess_module->ess_finalize();
fail_ess:
    (void) orte_ess_base_close();
    ess_module = NULL;
    memset(&orte_process_info, 0, sizeof(orte_process_info));
fail_util:
    (void) opal_finalize_util();
fail:
    init_count = 0;
    return rc;
}

int orte_finalize(void)
{
    if (0 == init_count) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    if (--init_count > 0) {
        return OPAL_SUCCESS;
    }
    /* Before the launcher hears of it: the process may be gone at once. */
    mark_finalized();
    opal_proc_finalize();
    (void) opal_rte_uninstall();
    int rc = ess_module->ess_finalize();
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "orte_finalize: ess/%s did not finalize cleanly: %s",
                    orte_process_info.ess_name, opal_strerror(rc));
    }
    int close_rc = orte_ess_base_close();
    if (OPAL_SUCCESS == rc) {
        rc = close_rc;
    }
    ess_module = NULL;
    memset(&orte_process_info, 0, sizeof(orte_process_info));
    int util_rc = opal_finalize_util();
    return OPAL_SUCCESS == rc ? util_rc : rc;
}

bool orte_initialized(void)
{
    return init_count > 0;
}

int orte_abort(int status, const char *message)
{
    if (NULL == ess_module) {
        opal_output(0, "orte_abort (status %d): %s", status, NULL == message ? "" : message);
        opal_output(0, "orte_abort: orte_init was not called: nothing else is stopped");
        return OPAL_ERR_NOT_INITIALIZED;
    }
    return ess_module->ess_rte.rte_abort(status, NULL == message ? "" : message);
}
