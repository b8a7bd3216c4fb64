/*
 * Files in /dev/shm left by processes that are gone.
 *
 * A process started alone (or by a launcher that does not sweep up after
 * it) has nobody to remove what it put in /dev/shm when it is killed.
 * Components that create such files name them "<prefix><kind>.<pid>" so
 * that opal_shm_sweep can tell whose they are: a file is removed only when its name has the
 * component's prefix (which carries the uid), the file is this user's, and no process has its pid.
 * A live process's files, and every other user's, are left alone; a pid reused by an unrelated
 * process keeps the file until that process is gone too.
 */
#include "opal/opal_config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/util/opal_output.h"
#include "opal/util/opal_shm_sweep.h"

#define SHM_DIR "/dev/shm"

/* The pid at the end of name when name is "<prefix><kind>.<pid>" with a
 * kind of letters, digits and '_'; 0 otherwise. */
static pid_t owner_pid(const char *name, const char *prefix)
{
    size_t plen = strlen(prefix);
    if (0 != strncmp(name, prefix, plen)) {
        return 0;
    }
    const char *kind = name + plen;
    const char *dot = strchr(kind, '.');
    if (NULL == dot || dot == kind) {
        return 0;
    }
    for (const char *c = kind; c < dot; ++c) {
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || '_' == *c)) {
            return 0;
        }
    }
    unsigned long pid = 0;
    const char *d = dot + 1;
    if ('\0' == *d || '0' == *d) {
        return 0;
    }
    for (; '\0' != *d; ++d) {
        if (*d < '0' || *d > '9' || (pid = pid * 10 + (unsigned long) (*d - '0')) > 4194304) {
            return 0;
        }
    }
    return (pid_t) pid;
}

int opal_shm_sweep(const char *prefix, const char *who, int output)
{
    DIR *dir = opendir(SHM_DIR);
    if (NULL == dir) {
        /* No /dev/shm: nothing of ours can be there. */
        return 0;
    }
    int removed = 0;
    struct dirent *entry;
    while (NULL != (entry = readdir(dir))) {
        pid_t pid = owner_pid(entry->d_name, prefix);
        if (0 == pid || (0 == kill(pid, 0) || ESRCH != errno)) {
            continue;
        }
        struct stat st;
        if (0 != fstatat(dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
            !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
            continue;
        }
        char name[NAME_MAX + 2];
        snprintf(name, sizeof(name), "/%s", entry->d_name);
        if (0 == shm_unlink(name)) {
            opal_output_verbose(1, output, "%s: removed /dev/shm%s (pid %ld is gone)", who, name,
                                (long) pid);
            ++removed;
        }
    }
    closedir(dir);
    return removed;
}
