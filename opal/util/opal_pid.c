/*
 * opal_pid_exited: kill(pid, 0) answers for a pid no process has; a
 * process that has one is looked up in /proc/<pid>/stat, whose third
 * field is its state ('Z' zombie, 'X' being reaped). The second field is
 * the command name in parentheses, which may itself hold spaces and
 * parentheses: the state follows the last ')'.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "opal/util/opal_pid.h"

bool opal_pid_exited(pid_t pid)
{
    if (pid <= 0) {
        return false;
    }
    if (0 != kill(pid, 0)) {
        return ESRCH == errno;
    }
    char path[32];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        /* Reaped between the two looks. */
        return ENOENT == errno || ESRCH == errno;
    }
    /* The pid, a name of at most 15 bytes in parentheses, the state. */
    char stat[96];
    ssize_t n;
    do {
        n = read(fd, stat, sizeof(stat) - 1);
    } while (n < 0 && EINTR == errno);
    int saved = errno;
    close(fd);
    if (n < 0) {
        return ESRCH == saved;
    }
    stat[n] = '\0';
    const char *end = strrchr(stat, ')');
    if (NULL == end || ' ' != end[1]) {
        return false;
    }
    return 'Z' == end[2] || 'X' == end[2] || 'x' == end[2];
}
