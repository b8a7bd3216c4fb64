/*
 * Files in /dev/shm left by processes that are gone: na/btl's, and the
 * libfabric shm provider's (through common/ofi).
 *
 * A process started alone (or by a launcher that does not sweep up after
 * it) has nobody to remove what it put in /dev/shm when it is killed.
 * Whoever sweeps says, through an owner function, which names are its
 * own and the pid each carries (na/btl's are "<prefix><kind>.<pid>",
 * opal_shm_owner_by_prefix). A file is removed only when it is this
 * user's and no process has its pid; with older_own, also when it has
 * this process's pid but is older than this process. A live process's
 * files, and every other user's, are left alone; a pid reused by an
 * unrelated process keeps the file until that process is gone too.
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
#include <time.h>
#include <unistd.h>

#include "opal/util/opal_output.h"
#include "opal/util/opal_shm_sweep.h"

#define SHM_DIR "/dev/shm"

pid_t opal_shm_owner_by_prefix(const char *name, void *arg)
{
    const char *prefix = arg;
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

/* When this process started, in seconds since the epoch; 0 when /proc
 * does not say. */
static time_t process_start(void)
{
    unsigned long long start_ticks = 0, boot = 0;
    FILE *f = fopen("/proc/self/stat", "r");
    if (NULL == f) {
        return 0;
    }
    char line[1024];
    char *ok = fgets(line, sizeof(line), f);
    fclose(f);
    /* Field 22, counted after the command's closing parenthesis (field 2,
     * which may hold spaces). */
    char *p = NULL == ok ? NULL : strrchr(line, ')');
    for (int field = 2; NULL != p && field < 22; ++field) {
        p = strchr(p + 1, ' ');
    }
    if (NULL == p || 1 != sscanf(p + 1, "%llu", &start_ticks)) {
        return 0;
    }
    f = fopen("/proc/stat", "r");
    if (NULL == f) {
        return 0;
    }
    while (NULL != fgets(line, sizeof(line), f)) {
        if (1 == sscanf(line, "btime %llu", &boot)) {
            break;
        }
    }
    fclose(f);
    long hz = sysconf(_SC_CLK_TCK);
    return 0 == boot || hz <= 0 ? 0 : (time_t) (boot + start_ticks / (unsigned long long) hz);
}

int opal_shm_sweep(opal_shm_owner_fn_t owner, void *arg, bool older_own, const char *who,
                   int output)
{
    DIR *dir = opendir(SHM_DIR);
    if (NULL == dir) {
        /* No /dev/shm: nothing of ours can be there. */
        return 0;
    }
    const pid_t self = getpid();
    time_t start = -1;
    int removed = 0;
    struct dirent *entry;
    while (NULL != (entry = readdir(dir))) {
        pid_t pid = owner(entry->d_name, arg);
        struct stat st;
        if (0 == pid || (self == pid && !older_own) ||
            0 != fstatat(dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
            !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
            continue;
        }
        const char *why;
        if (self == pid) {
            if (start < 0) {
                start = process_start();
            }
            /* Two seconds for the rounding of the boot time. */
            if (0 == start || st.st_mtime >= start - 2) {
                continue;
            }
            why = "left by an earlier process with this pid";
        } else if (0 == kill(pid, 0) || ESRCH != errno) {
            continue;
        } else {
            why = "its process is gone";
        }
        char name[NAME_MAX + 2];
        snprintf(name, sizeof(name), "/%s", entry->d_name);
        if (0 == shm_unlink(name)) {
            opal_output_verbose(1, output, "%s: removed /dev/shm%s (%s)", who, name, why);
            ++removed;
        }
    }
    closedir(dir);
    return removed;
}
