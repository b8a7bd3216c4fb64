/*
 * The environment mcarun gives every rank it starts: the contract between
 * the launcher and orte_launcher_client.c. Values are decimal integers
 * unless said otherwise.
 *
 * The names are not under OPAL_MCA_: that prefix belongs to MCA variables,
 * and the variable system reports names there that no component
 * registered.
 */
#ifndef ORTE_UTIL_ORTE_LAUNCHER_ENV_H
#define ORTE_UTIL_ORTE_LAUNCHER_ENV_H

/* Every name starts with this; mcarun drops inherited ones (a job started
 * from inside a rank gets its own). */
#define ORTE_LAUNCHER_ENV_PREFIX "OPAL_ORTE_"

#define ORTE_LAUNCHER_ENV_JOBID      "OPAL_ORTE_JOBID"
#define ORTE_LAUNCHER_ENV_RANK       "OPAL_ORTE_RANK"
#define ORTE_LAUNCHER_ENV_SIZE       "OPAL_ORTE_SIZE"
#define ORTE_LAUNCHER_ENV_LOCAL_RANK "OPAL_ORTE_LOCAL_RANK"
#define ORTE_LAUNCHER_ENV_LOCAL_SIZE "OPAL_ORTE_LOCAL_SIZE"
#define ORTE_LAUNCHER_ENV_NODE_ID    "OPAL_ORTE_NODE_ID"
/* Path of the launcher's Unix socket (inside the session directory). */
#define ORTE_LAUNCHER_ENV_SOCKET "OPAL_ORTE_SOCKET"
/* The job's session directory, $TMPDIR/opal-mca.<uid>/<jobid>; removed
 * with everything in it when the job ends. */
#define ORTE_LAUNCHER_ENV_SESSION_DIR "OPAL_ORTE_SESSION_DIR"
/* Shared-memory files: a rank names every POSIX shared-memory object it
 * creates "/<prefix><anything>" (shm_open), where prefix is this
 * variable's value ("opal-mca.<uid>.<jobid>."); mcarun unlinks
 * /dev/shm/<prefix>* when the job ends, however it ended. */
#define ORTE_LAUNCHER_ENV_SHM_PREFIX "OPAL_ORTE_SHM_PREFIX"
/* The --bind-to policy the rank was started with: none, core or package. */
#define ORTE_LAUNCHER_ENV_BIND_TO "OPAL_ORTE_BIND_TO"

#endif /* ORTE_UTIL_ORTE_LAUNCHER_ENV_H */
