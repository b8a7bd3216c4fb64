/*
 * ess/env operations: thin wrappers over the launcher client. The client
 * is not thread-safe, so every call holds one lock; a read that waits for
 * a peer holds it too, which delays other threads' modex calls but never
 * reorders them.
 */
#include "opal/opal_config.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "orte/mca/ess/base/base.h"
#include "orte/mca/ess/env/ess_env.h"
#include "orte/util/orte_launcher_client.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int env_init(orte_process_info_t *info)
{
    orte_launcher_job_info_t job;
    memset(&job, 0, sizeof(job));
    int rc = orte_launcher_client_connect(&job);
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "ess/env: cannot reach mcarun, which started this process: %s",
                    opal_strerror(rc));
        return rc;
    }
    info->my_name.jobid = job.jobid;
    info->my_name.vpid = job.rank;
    info->size = job.size;
    info->local_rank = job.local_rank;
    info->local_size = job.local_size;
    info->node_id = job.node_id;
    job.session_dir[sizeof(job.session_dir) - 1] = '\0';
    snprintf(info->session_dir, sizeof(info->session_dir), "%s", job.session_dir);
    rc = orte_ess_base_hostname(info->hostname, sizeof(info->hostname));
    if (OPAL_SUCCESS != rc) {
        (void) orte_launcher_client_finalize();
    }
    return rc;
}

static int env_finalize(void)
{
    pthread_mutex_lock(&lock);
    int rc = orte_launcher_client_finalize();
    pthread_mutex_unlock(&lock);
    return rc;
}

static int env_put(const char *key, const void *value, size_t size, opal_modex_scope_t scope)
{
    orte_modex_scope_t launcher_scope = OPAL_MODEX_SCOPE_LOCAL == scope ? ORTE_MODEX_SCOPE_LOCAL
                                        : OPAL_MODEX_SCOPE_REMOTE == scope
                                            ? ORTE_MODEX_SCOPE_REMOTE
                                            : ORTE_MODEX_SCOPE_GLOBAL;
    pthread_mutex_lock(&lock);
    int rc = orte_launcher_client_put(key, value, size, launcher_scope);
    pthread_mutex_unlock(&lock);
    return rc;
}

static int env_commit(void)
{
    pthread_mutex_lock(&lock);
    int rc = orte_launcher_client_commit();
    pthread_mutex_unlock(&lock);
    return rc;
}

static int env_get(uint32_t peer, const char *key, void **value, size_t *size, int64_t timeout_ns)
{
    pthread_mutex_lock(&lock);
    int rc = orte_launcher_client_get(peer, key, value, size, timeout_ns);
    pthread_mutex_unlock(&lock);
    return rc;
}

static int env_fence(bool collect)
{
    pthread_mutex_lock(&lock);
    int rc = orte_launcher_client_fence(collect ? 1 : 0);
    pthread_mutex_unlock(&lock);
    return rc;
}

static int env_abort(int status, const char *message)
{
    pthread_mutex_lock(&lock);
    int rc = orte_launcher_client_abort(status, message);
    pthread_mutex_unlock(&lock);
    return rc;
}

orte_ess_base_module_t mca_ess_env_module = {
    .ess_init = env_init,
    .ess_finalize = env_finalize,
    .ess_rte =
        {
            .rte_name = "ess/env",
            .rte_modex_put = env_put,
            .rte_modex_commit = env_commit,
            .rte_modex_get = env_get,
            .rte_fence = env_fence,
            .rte_abort = env_abort,
        },
};
