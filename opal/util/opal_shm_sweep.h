/*
 * Sweeping /dev/shm of the files of processes that are gone
 * (opal_shm_sweep.c says which files it removes and which it leaves).
 */
#ifndef OPAL_UTIL_OPAL_SHM_SWEEP_H
#define OPAL_UTIL_OPAL_SHM_SWEEP_H

#include "opal/opal_config.h"

/* Removes the files /dev/shm/<prefix><kind>.<pid> (kind of [a-z0-9_])
 * that are this user's and whose pid no process has; says so on output at
 * verbosity 1, naming who. The prefix should carry the uid
 * ("opal-mca.<uid>.<job>."). Returns how many it removed. */
OPAL_DECLSPEC int opal_shm_sweep(const char *prefix, const char *who, int output);

#endif /* OPAL_UTIL_OPAL_SHM_SWEEP_H */
