/*
 * Session directories: where a job keeps its files while it runs.
 *
 * A job's directory is $TMPDIR/opal-mca.<uid>/<jobid>/ ($TMPDIR, or /tmp
 * when it is unset or empty), mode 0700. The per-user base
 * opal-mca.<uid> is created on first use and trusted only when it is a
 * real directory (not a symbolic link) owned by this user and closed to
 * everyone else; otherwise nothing is created and the problem is printed
 * with what to do about it.
 *
 * POSIX shared-memory objects of a job are named "/<shm prefix><anything>"
 * with the prefix "opal-mca.<uid>.<jobid>.", so that whoever ends the job
 * can find and unlink them in /dev/shm.
 *
 * Messages go to opal_output stream 0. Paths fit ORTE_SESSION_DIR_MAX
 * bytes (NUL included).
 */
#ifndef ORTE_UTIL_ORTE_SESSION_DIR_H
#define ORTE_UTIL_ORTE_SESSION_DIR_H

#include "opal/opal_config.h"

#include <stddef.h>
#include <stdint.h>

#define ORTE_SESSION_DIR_MAX 4096
/* Where POSIX shared-memory objects appear as files on Linux. */
#define ORTE_SESSION_DIR_SHM "/dev/shm"

/* Writes the per-user base, $TMPDIR/opal-mca.<uid>, into path (size
 * bytes). OPAL_ERR_BAD_PARAM (with a message) when it does not fit or
 * $TMPDIR is not an absolute path. */
OPAL_DECLSPEC int orte_session_dir_base(char *path, size_t size);

/* Creates the base if it is missing, checks it, and creates a fresh job
 * directory in it: the first free one of jobid = (seed mod 2^22) + k * 2^22
 * for k = 0, 1, ..., 1023 (a directory left by a dead job is never reused:
 * its ranks may still be running). Sets *jobid and writes the directory
 * into path. Returns OPAL_SUCCESS; OPAL_ERR_PERM when the base cannot be
 * trusted; OPAL_ERR_EXISTS when every jobid is taken; OPAL_ERR_BAD_PARAM
 * or OPAL_ERR_IN_ERRNO (errno kept) otherwise; each with a message. */
OPAL_DECLSPEC int orte_session_dir_create(uint32_t seed, uint32_t *jobid, char *path, size_t size);

/* Removes path and everything under it. Symbolic links are removed, never
 * followed; nesting deeper than 128 directories is left in place. Returns
 * OPAL_SUCCESS (also when path does not exist) or OPAL_ERR_IN_ERRNO for
 * the first entry that could not be removed (named in a message). */
OPAL_DECLSPEC int orte_session_dir_remove(const char *path);

/* Writes the job's shared-memory prefix, "opal-mca.<uid>.<jobid>.", into
 * prefix (size bytes). OPAL_ERR_BAD_PARAM, prefix untouched, when it does
 * not fit. */
OPAL_DECLSPEC int orte_session_dir_shm_prefix(uint32_t jobid, char *prefix, size_t size);

/* Unlinks every entry of dir (NULL: ORTE_SESSION_DIR_SHM) whose name
 * starts with prefix and that this user owns. Returns how many were
 * removed (>= 0), or OPAL_ERR_BAD_PARAM for an empty prefix or one with a
 * '/', or OPAL_ERR_IN_ERRNO when dir cannot be read. */
OPAL_DECLSPEC int orte_session_dir_remove_shm(const char *dir, const char *prefix);

#endif /* ORTE_UTIL_ORTE_SESSION_DIR_H */
