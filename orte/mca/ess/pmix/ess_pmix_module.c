/*
 * ess/pmix operations: the job from PMIx_Get, the modex through PMIx.
 *
 * PMIx servers differ in how a read of a peer's key behaves before the
 * peer committed it: some wait, some answer "not found" at once (Open MPI
 * 4.1's mpirun does, when the peer committed other keys first). A read
 * therefore asks again, with a growing pause, until the value arrives or
 * the caller's timeout ends, so that every launcher behaves like mcarun.
 *
 * The session directory is removed at finalize by local rank 0, after a
 * fence. A process that is killed never gets there, so under Slurm each
 * process also registers the directory for cleanup with the server
 * (PMIX_REGISTER_CLEANUP_DIR), which removes it once the process is gone:
 * the PMIx server lives in slurmstepd on every node. Not under other
 * servers by default (ess_pmix_register_cleanup): with Open MPI 4.1's
 * mpirun over PMIx 4.2, a job that registered one and then aborted makes
 * mpirun crash or hang in PMIx_server_finalize.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pmix.h>

#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_timer.h"
#include "orte/mca/ess/base/base.h"
#include "orte/mca/ess/pmix/ess_pmix.h"
#include "orte/util/orte_session_dir.h"

/* Set by init, read-only until finalize (PMIx itself is thread-safe). */
static pmix_proc_t myproc;
static uint32_t job_size;
static uint32_t my_local_rank;
static char session_dir[ORTE_PATH_MAX];

static int to_opal(pmix_status_t status)
{
    switch (status) {
        case PMIX_SUCCESS:
            return OPAL_SUCCESS;
        case PMIX_ERR_NOT_FOUND:
            return OPAL_ERR_NOT_FOUND;
        case PMIX_ERR_TIMEOUT:
            return OPAL_ERR_TIMEOUT;
        case PMIX_ERR_NOT_SUPPORTED:
            return OPAL_ERR_NOT_SUPPORTED;
        case PMIX_ERR_UNREACH:
            return OPAL_ERR_UNREACH;
        case PMIX_ERR_NOMEM:
        case PMIX_ERR_OUT_OF_RESOURCE:
            return OPAL_ERR_OUT_OF_RESOURCE;
        case PMIX_ERR_BAD_PARAM:
            return OPAL_ERR_BAD_PARAM;
        case PMIX_ERR_PROC_ABORTED:
        case PMIX_ERR_PROC_ABORTING:
        case PMIX_ERR_LOST_CONNECTION:
            return OPAL_ERR_PEER_FAILED;
        default:
            return OPAL_ERROR;
    }
}

/* Reads an integer attribute whatever integer type the server chose. */
static pmix_status_t get_uint32(const pmix_proc_t *proc, const char *key, uint32_t *out)
{
    pmix_value_t *value = NULL;
    pmix_status_t status = PMIx_Get(proc, key, NULL, 0, &value);
    if (PMIX_SUCCESS != status) {
        return status;
    }
    uint64_t v = 0;
    status = PMIX_SUCCESS;
    switch (value->type) {
        case PMIX_UINT8:
            v = value->data.uint8;
            break;
        case PMIX_UINT16:
            v = value->data.uint16;
            break;
        case PMIX_UINT32:
            v = value->data.uint32;
            break;
        case PMIX_UINT64:
            v = value->data.uint64;
            break;
        case PMIX_SIZE:
            v = value->data.size;
            break;
        case PMIX_INT:
            status = value->data.integer < 0 ? PMIX_ERR_BAD_PARAM : PMIX_SUCCESS;
            v = (uint64_t) value->data.integer;
            break;
        case PMIX_INT32:
            status = value->data.int32 < 0 ? PMIX_ERR_BAD_PARAM : PMIX_SUCCESS;
            v = (uint64_t) value->data.int32;
            break;
        default:
            status = PMIX_ERR_BAD_PARAM;
            break;
    }
    PMIX_VALUE_RELEASE(value);
    if (PMIX_SUCCESS == status && v > UINT32_MAX) {
        status = PMIX_ERR_BAD_PARAM;
    }
    if (PMIX_SUCCESS == status) {
        *out = (uint32_t) v;
    } else {
        opal_output(0,
                    "ess/pmix: the launcher gave %s a value that is not a 32-bit unsigned "
                    "integer",
                    key);
    }
    return status;
}

static int get_required(const pmix_proc_t *proc, const char *key, const char *what, uint32_t *out)
{
    pmix_status_t status = get_uint32(proc, key, out);
    if (PMIX_SUCCESS != status) {
        opal_output(0, "ess/pmix: the launcher did not give this process its %s (%s): %s", what,
                    key, PMIx_Error_string(status));
        return PMIX_ERR_BAD_PARAM == status ? OPAL_ERR_PROTOCOL : to_opal(status);
    }
    return OPAL_SUCCESS;
}

static void get_hostname(orte_process_info_t *info)
{
    pmix_value_t *value = NULL;
    if (PMIX_SUCCESS == PMIx_Get(&myproc, PMIX_HOSTNAME, NULL, 0, &value)) {
        if (PMIX_STRING == value->type && NULL != value->data.string &&
            '\0' != value->data.string[0]) {
            snprintf(info->hostname, sizeof(info->hostname), "%s", value->data.string);
        }
        PMIX_VALUE_RELEASE(value);
    }
    if ('\0' == info->hostname[0]) {
        (void) orte_ess_base_hostname(info->hostname, sizeof(info->hostname));
    }
}

/* Slurm's PMIx plugin names a step's namespace slurm.pmix.<job>.<step>. */
static bool server_is_slurm(void)
{
    return 0 == strncmp(myproc.nspace, "slurm.pmix.", strlen("slurm.pmix."));
}

/* Asks the server to remove the session directory when this process ends.
 * A refusal is said but not fatal: the directory is still removed at a
 * normal finalize. */
static void register_cleanup(const char *dir)
{
    if (0 == mca_ess_pmix_register_cleanup ||
        (mca_ess_pmix_register_cleanup < 0 && !server_is_slurm())) {
        return;
    }
    pmix_info_t directives[2];
    bool yes = true;
    PMIX_INFO_LOAD(&directives[0], PMIX_REGISTER_CLEANUP_DIR, dir, PMIX_STRING);
    PMIX_INFO_LOAD(&directives[1], PMIX_CLEANUP_RECURSIVE, &yes, PMIX_BOOL);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t status = PMIx_Job_control(NULL, 0, directives, 2, &results, &nresults);
    PMIX_INFO_DESTRUCT(&directives[0]);
    PMIX_INFO_DESTRUCT(&directives[1]);
    if (NULL != results) {
        PMIX_INFO_FREE(results, nresults);
    }
    if (PMIX_SUCCESS != status && PMIX_OPERATION_SUCCEEDED != status) {
        opal_output(0,
                    "ess/pmix: the PMIx server did not take %s for cleanup (%s): it stays if "
                    "this process is killed",
                    dir, PMIx_Error_string(status));
    }
}

static int pmix_init(orte_process_info_t *info)
{
    pmix_status_t status = PMIx_Init(&myproc, NULL, 0);
    if (PMIX_SUCCESS != status) {
        opal_output(0,
                    "ess/pmix: PMIx_Init failed: %s (the environment names a PMIx server, "
                    "but it cannot be reached; use --mca ess singleton to run alone)",
                    PMIx_Error_string(status));
        return to_opal(status);
    }
    pmix_proc_t wildcard;
    PMIX_LOAD_PROCID(&wildcard, myproc.nspace, PMIX_RANK_WILDCARD);

    int rc = get_required(&wildcard, PMIX_JOB_SIZE, "job size", &info->size);
    if (OPAL_SUCCESS == rc) {
        rc = get_required(&myproc, PMIX_LOCAL_RANK, "local rank", &info->local_rank);
    }
    if (OPAL_SUCCESS == rc) {
        rc = get_required(&wildcard, PMIX_LOCAL_SIZE, "number of local processes",
                          &info->local_size);
    }
    if (OPAL_SUCCESS != rc) {
        goto fail;
    }
    get_hostname(info);
    /* Launchers that give no node id still give a host name: processes on
     * one node then share the id derived from it. */
    if (PMIX_SUCCESS != get_uint32(&myproc, PMIX_NODEID, &info->node_id)) {
        info->node_id = orte_ess_base_jobid_from_name(info->hostname);
    }
    info->my_name.jobid = orte_ess_base_jobid_from_name(myproc.nspace);
    info->my_name.vpid = myproc.rank;
    if (info->my_name.vpid >= info->size || info->local_rank >= info->local_size ||
        info->local_size > info->size) {
        opal_output(0,
                    "ess/pmix: the launcher's job data do not add up: rank %" PRIu32 " of %" PRIu32
                    ", local rank %" PRIu32 " of %" PRIu32,
                    info->my_name.vpid, info->size, info->local_rank, info->local_size);
        rc = OPAL_ERR_PROTOCOL;
        goto fail;
    }
    rc = orte_ess_base_session_dir_join(info->my_name.jobid, info->session_dir,
                                        sizeof(info->session_dir));
    if (OPAL_SUCCESS != rc) {
        goto fail;
    }
    register_cleanup(info->session_dir);
    job_size = info->size;
    my_local_rank = info->local_rank;
    snprintf(session_dir, sizeof(session_dir), "%s", info->session_dir);
    return OPAL_SUCCESS;

fail:
    (void) PMIx_Finalize(NULL, 0);
    return rc;
}

static int pmix_fence(bool collect)
{
    pmix_status_t status = PMIx_Commit();
    if (PMIX_SUCCESS != status) {
        opal_output(0, "ess/pmix: PMIx_Commit failed: %s", PMIx_Error_string(status));
        return to_opal(status);
    }
    pmix_proc_t wildcard;
    PMIX_LOAD_PROCID(&wildcard, myproc.nspace, PMIX_RANK_WILDCARD);
    pmix_info_t info;
    bool yes = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    status = PMIx_Fence(&wildcard, 1, collect ? &info : NULL, collect ? 1 : 0);
    PMIX_INFO_DESTRUCT(&info);
    if (PMIX_SUCCESS != status) {
        opal_output(0, "ess/pmix: the fence failed: %s", PMIx_Error_string(status));
        return to_opal(status);
    }
    return OPAL_SUCCESS;
}

static int pmix_finalize(void)
{
    /* Every local process must be done with the session directory before
     * it goes: a fence, then local rank 0 removes it. */
    int rc = pmix_fence(false);
    if (OPAL_SUCCESS == rc && 0 == my_local_rank && '\0' != session_dir[0]) {
        rc = orte_session_dir_remove(session_dir);
    }
    session_dir[0] = '\0';
    pmix_status_t status = PMIx_Finalize(NULL, 0);
    if (PMIX_SUCCESS != status) {
        opal_output(0, "ess/pmix: PMIx_Finalize failed: %s", PMIx_Error_string(status));
        return OPAL_SUCCESS == rc ? to_opal(status) : rc;
    }
    return rc;
}

static int pmix_put(const char *key, const void *value, size_t size, opal_modex_scope_t scope)
{
    pmix_scope_t pscope = OPAL_MODEX_SCOPE_LOCAL == scope    ? PMIX_LOCAL
                          : OPAL_MODEX_SCOPE_REMOTE == scope ? PMIX_REMOTE
                                                             : PMIX_GLOBAL;
    pmix_byte_object_t bytes;
    /* PMIX_VALUE_LOAD copies the bytes; the cast only satisfies the
     * struct's non-const member. */
    bytes.bytes = (char *) (uintptr_t) value;
    bytes.size = size;
    pmix_value_t pvalue;
    PMIX_VALUE_LOAD(&pvalue, &bytes, PMIX_BYTE_OBJECT);
    pmix_status_t status = PMIx_Put(pscope, key, &pvalue);
    PMIX_VALUE_DESTRUCT(&pvalue);
    if (PMIX_SUCCESS != status) {
        opal_output(0, "ess/pmix: PMIx_Put of '%s' (%zu bytes) failed: %s", key, size,
                    PMIx_Error_string(status));
    }
    return to_opal(status);
}

static int pmix_commit(void)
{
    pmix_status_t status = PMIx_Commit();
    if (PMIX_SUCCESS != status) {
        opal_output(0, "ess/pmix: PMIx_Commit failed: %s", PMIx_Error_string(status));
    }
    return to_opal(status);
}

/* One PMIx_Get; a byte object's bytes are handed over to the caller. */
static pmix_status_t get_once(const pmix_proc_t *proc, const char *key, int64_t remaining_ns,
                              void **value, size_t *size)
{
    pmix_info_t info;
    bool yes = true;
    size_t ninfo = 0;
    if (0 == remaining_ns) {
        /* No waiting: only what is already here. */
        PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &yes, PMIX_BOOL);
        ninfo = 1;
    } else if (remaining_ns > 0) {
        int seconds = orte_ess_base_timeout_seconds(remaining_ns);
        PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &seconds, PMIX_INT);
        ninfo = 1;
    }
    pmix_value_t *pvalue = NULL;
    pmix_status_t status = PMIx_Get(proc, key, 0 == ninfo ? NULL : &info, ninfo, &pvalue);
    if (0 != ninfo) {
        PMIX_INFO_DESTRUCT(&info);
    }
    if (PMIX_SUCCESS != status) {
        return status;
    }
    if (PMIX_BYTE_OBJECT != pvalue->type) {
        opal_output(0,
                    "ess/pmix: rank %" PRIu32 "'s value for '%s' is not a byte object (PMIx "
                    "type %d): it was not published by opal_modex_send",
                    (uint32_t) proc->rank, key, (int) pvalue->type);
        PMIX_VALUE_RELEASE(pvalue);
        return PMIX_ERR_TYPE_MISMATCH;
    }
    *value = pvalue->data.bo.bytes;
    *size = pvalue->data.bo.size;
    pvalue->data.bo.bytes = NULL;
    pvalue->data.bo.size = 0;
    PMIX_VALUE_RELEASE(pvalue);
    return PMIX_SUCCESS;
}

static int pmix_get(uint32_t peer, const char *key, void **value, size_t *size, int64_t timeout_ns)
{
    *value = NULL;
    *size = 0;
    if (peer >= job_size) {
        opal_output(0,
                    "ess/pmix: rank %" PRIu32 " does not exist: the job has %" PRIu32 " processes",
                    peer, job_size);
        return OPAL_ERR_BAD_PARAM;
    }
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, myproc.nspace, peer);
    uint64_t start = opal_timer_ns();
    useconds_t pause_us = 1000;
    for (;;) {
        int64_t remaining = -1;
        if (timeout_ns >= 0) {
            uint64_t spent = opal_timer_ns() - start;
            remaining = spent >= (uint64_t) timeout_ns ? 0 : timeout_ns - (int64_t) spent;
        }
        pmix_status_t status = get_once(&proc, key, remaining, value, size);
        if (PMIX_SUCCESS == status) {
            return OPAL_SUCCESS;
        }
        if (PMIX_ERR_NOT_FOUND != status && PMIX_ERR_TIMEOUT != status) {
            opal_output(0, "ess/pmix: reading '%s' of rank %" PRIu32 " failed: %s", key, peer,
                        PMIx_Error_string(status));
            return PMIX_ERR_TYPE_MISMATCH == status ? OPAL_ERR_PROTOCOL : to_opal(status);
        }
        if (0 == timeout_ns) {
            return OPAL_ERR_NOT_FOUND;
        }
        if (0 == remaining) {
            opal_output(0, "ess/pmix: rank %" PRIu32 " did not publish '%s' within %.1f s", peer,
                        key, (double) timeout_ns / 1e9);
            return OPAL_ERR_TIMEOUT;
        }
        /* Not there yet: ask again after a pause that grows to 50 ms. */
        usleep(pause_us);
        pause_us = pause_us < 50000 ? pause_us * 2 : 50000;
    }
}

static int pmix_abort(int status, const char *message)
{
    /* Said here: not every launcher prints the message PMIx_Abort carries
     * (Open MPI 4.1's mpirun does not). */
    opal_output(0, "rank %" PRIu32 " (pid %ld) aborts the job with status %d: %s",
                (uint32_t) myproc.rank, (long) getpid(), status, message);
    pmix_status_t pstatus = PMIx_Abort(status, message, NULL, 0);
    if (PMIX_SUCCESS != pstatus) {
        opal_output(0, "ess/pmix: PMIx_Abort failed (%s): the job is not stopped",
                    PMIx_Error_string(pstatus));
        return to_opal(pstatus);
    }
    /* The launcher is stopping the job; this process need not wait. */
    fflush(NULL);
    /* As under mcarun: the low 8 bits, and an abort never exits 0. */
    _exit(0 == (status & 0xff) ? 1 : status & 0xff);
}

orte_ess_base_module_t mca_ess_pmix_module = {
    .ess_init = pmix_init,
    .ess_finalize = pmix_finalize,
    .ess_rte =
        {
            .rte_name = "ess/pmix",
            .rte_modex_put = pmix_put,
            .rte_modex_commit = pmix_commit,
            .rte_modex_get = pmix_get,
            .rte_fence = pmix_fence,
            .rte_abort = pmix_abort,
        },
};
