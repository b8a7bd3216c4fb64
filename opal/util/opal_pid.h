/*
 * Whether a process of this node has exited, asked by its pid, and
 * whether another process's pids mean what this one's do.
 */
#ifndef OPAL_UTIL_OPAL_PID_H
#define OPAL_UTIL_OPAL_PID_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* True when no process has pid, or when the one that has it has exited
 * and waits for its parent to collect its status (a zombie: kill(pid, 0)
 * still succeeds on it, and a launcher that is slow to reap, stopped or
 * busy would keep it looking alive). False for a live process, and when
 * its state cannot be read (another user's hidden /proc entry): a peer is
 * never declared dead on a guess. */
OPAL_DECLSPEC bool opal_pid_exited(pid_t pid);

/* This process's pid space: a number two processes share exactly when a
 * pid means the same process to both, that is when they run on the same
 * boot of the same kernel (its boot id) and in the same pid namespace
 * (the device and inode of /proc/self/ns/pid). A host name does not
 * tell: containers on one host may share a name and not their pids, and
 * every machine's first pid namespace has the same inode. A process
 * publishes it beside its pid; a peer checks the pid only when the two
 * spaces are equal. 0 when either part cannot be read (then no pid is
 * compared); never 0 otherwise. */
OPAL_DECLSPEC uint64_t opal_pid_space(void);

/* Whether a peer that published its pid with pid space theirs may be
 * watched by a process whose own space is mine: both known and equal. */
static inline bool opal_pid_space_shared(uint64_t mine, uint64_t theirs)
{
    return 0 != mine && mine == theirs;
}

#endif /* OPAL_UTIL_OPAL_PID_H */
