/*
 * Sweeping /dev/shm of the files of processes that are gone
 * (opal_shm_sweep.c says which files it removes and which it leaves).
 */
#ifndef OPAL_UTIL_OPAL_SHM_SWEEP_H
#define OPAL_UTIL_OPAL_SHM_SWEEP_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <sys/types.h>

/* The pid a file of /dev/shm belongs to, read from its name; 0 when the
 * name is not one the caller sweeps. */
typedef pid_t (*opal_shm_owner_fn_t)(const char *name, void *arg);

/* An owner for names "<prefix><kind>.<pid>" (kind of [a-z0-9_]); arg is
 * the prefix, which should carry the uid ("opal-mca.<uid>.<job>."). */
OPAL_DECLSPEC pid_t opal_shm_owner_by_prefix(const char *name, void *prefix);

/* Removes the files of /dev/shm that owner gives a pid, that are regular
 * and this user's, and whose pid no process has; with older_own, also
 * those owned by this process's pid but last written before it started
 * (an earlier process with the same pid left them). Says so on output at
 * verbosity 1, naming who. Returns how many it removed. */
OPAL_DECLSPEC int opal_shm_sweep(opal_shm_owner_fn_t owner, void *arg, bool older_own,
                                 const char *who, int output);

#endif /* OPAL_UTIL_OPAL_SHM_SWEEP_H */
