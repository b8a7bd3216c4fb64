/*
 * Whether a process of this node has exited, asked by its pid.
 */
#ifndef OPAL_UTIL_OPAL_PID_H
#define OPAL_UTIL_OPAL_PID_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <sys/types.h>

/* True when no process has pid, or when the one that has it has exited
 * and waits for its parent to collect its status (a zombie: kill(pid, 0)
 * still succeeds on it, and a launcher that is slow to reap, stopped or
 * busy would keep it looking alive). False for a live process, and when
 * its state cannot be read (another user's hidden /proc entry): a peer is
 * never declared dead on a guess. */
OPAL_DECLSPEC bool opal_pid_exited(pid_t pid);

#endif /* OPAL_UTIL_OPAL_PID_H */
