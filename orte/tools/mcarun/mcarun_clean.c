/*
 * Stale sessions: what a launcher killed by SIGKILL leaves behind (its
 * session directory, its job's /dev/shm files), found and removed by the
 * next mcarun and by mcarun --clean.
 *
 * Each launcher writes "<pid> <start time>\n" into <session dir>/launcher,
 * the start time being field 22 of /proc/<pid>/stat (clock ticks since
 * boot). A job is stale when no process has that pid, or the process with
 * that pid started at another time (the pid was reused). A job directory
 * without the file is left alone: its launcher may be between creating the
 * directory and writing the file, or be an older mcarun that writes none.
 * Only this user's base ($TMPDIR/opal-mca.<uid>) is scanned, and only
 * directories and /dev/shm files this user owns are removed.
 */
#include "opal/opal_config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "orte/tools/mcarun/mcarun.h"
#include "orte/util/orte_session_dir.h"

#define LAUNCHER_FILE "launcher"

/* Field 22 of /proc/<pid>/stat, or 0 when the process is gone or the file
 * cannot be read or parsed (0 is never a real start time after boot's
 * first tick, and callers treat it as "unknown"). */
static unsigned long long start_time_of(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long) pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) {
        return 0;
    }
    buf[n] = '\0';
    /* The command name (field 2) is in parentheses and may itself hold
     * spaces and ')': the fields after it start after the last ')'. */
    char *p = strrchr(buf, ')');
    if (NULL == p) {
        return 0;
    }
    ++p;
    /* p is before field 3; skip fields 3 to 21. */
    for (int field = 3; field < 22; ++field) {
        p = strchr(p + 1, ' ');
        if (NULL == p) {
            return 0;
        }
    }
    char *end;
    errno = 0;
    unsigned long long t = strtoull(p + 1, &end, 10);
    return 0 != errno || end == p + 1 ? 0 : t;
}

int mcarun_clean_record(const char *session_dir)
{
    char path[ORTE_SESSION_DIR_MAX + sizeof("/" LAUNCHER_FILE ".tmp")];
    char final[sizeof(path)];
    snprintf(path, sizeof(path), "%s/%s.tmp", session_dir, LAUNCHER_FILE);
    snprintf(final, sizeof(final), "%s/%s", session_dir, LAUNCHER_FILE);
    char line[64];
    int len = snprintf(line, sizeof(line), "%ld %llu\n", (long) getpid(), start_time_of(getpid()));
    int rc = OPAL_ERR_IN_ERRNO;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        goto out;
    }
    ssize_t n = write(fd, line, (size_t) len);
    if (0 != close(fd) || n != len) {
        goto out;
    }
    /* Renamed into place so that a scan never reads half a line. */
    if (0 != rename(path, final)) {
        goto out;
    }
    rc = OPAL_SUCCESS;
out:
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "mcarun: cannot write %s: %s", final, strerror(errno));
        unlink(path);
    }
    return rc;
}

/* Reads the launcher file of job directory dirfd. False when it is
 * missing or malformed. */
static bool read_launcher(int dirfd, long *pid, unsigned long long *start)
{
    int fd = openat(dirfd, LAUNCHER_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    char buf[64];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) {
        return false;
    }
    buf[n] = '\0';
    char *end;
    errno = 0;
    *pid = strtol(buf, &end, 10);
    if (0 != errno || end == buf || ' ' != *end || *pid <= 0) {
        return false;
    }
    char *p = end + 1;
    *start = strtoull(p, &end, 10);
    return 0 == errno && end != p && '\n' == *end;
}

/* True unless the launcher is known to be gone: a live process with the
 * recorded pid whose start time cannot be read counts as the launcher. */
static bool launcher_alive(long pid, unsigned long long start)
{
    if (0 != kill((pid_t) pid, 0) && ESRCH == errno) {
        return false;
    }
    unsigned long long now = start_time_of((pid_t) pid);
    return 0 == now || now == start;
}

/* A job directory's name is its jobid in decimal. */
static bool parse_jobid(const char *name, uint32_t *jobid)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(name, &end, 10);
    if (0 != errno || end == name || '\0' != *end || '0' > name[0] || '9' < name[0] ||
        v > UINT32_MAX) {
        return false;
    }
    *jobid = (uint32_t) v;
    return true;
}

int mcarun_clean_stale(void)
{
    char base[ORTE_SESSION_DIR_MAX];
    if (OPAL_SUCCESS != orte_session_dir_base(base, sizeof(base))) {
        return OPAL_ERR_BAD_PARAM;
    }
    int basefd = open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (basefd < 0) {
        /* No base, or a symbolic link: nothing of ours to clean. */
        return 0;
    }
    struct stat st;
    DIR *d = NULL;
    int cleaned = 0;
    if (0 != fstat(basefd, &st) || st.st_uid != geteuid() || NULL == (d = fdopendir(basefd))) {
        close(basefd);
        return 0;
    }
    struct dirent *entry;
    while (NULL != (entry = readdir(d))) {
        uint32_t jobid;
        if (!parse_jobid(entry->d_name, &jobid)) {
            continue;
        }
        int jobfd = openat(basefd, entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (jobfd < 0) {
            continue;
        }
        long pid;
        unsigned long long start;
        bool stale = 0 == fstat(jobfd, &st) && st.st_uid == geteuid() &&
                     read_launcher(jobfd, &pid, &start) && !launcher_alive(pid, start);
        close(jobfd);
        if (!stale) {
            continue;
        }
        char path[ORTE_SESSION_DIR_MAX + 256], prefix[64];
        snprintf(path, sizeof(path), "%s/%s", base, entry->d_name);
        /* The directory first: while it stays, so does the record that
         * leads the next scan to the /dev/shm files. */
        if (OPAL_SUCCESS != orte_session_dir_remove(path)) {
            continue;
        }
        int shm = 0;
        if (OPAL_SUCCESS == orte_session_dir_shm_prefix(jobid, prefix, sizeof(prefix))) {
            shm = orte_session_dir_remove_shm(NULL, prefix);
        }
        ++cleaned;
        fprintf(stderr,
                "mcarun: removed the leftovers of job %" PRIu32
                " (its launcher, pid %ld, is gone): %s and %d file%s in %s\n",
                jobid, pid, path, shm < 0 ? 0 : shm, 1 == shm ? "" : "s", ORTE_SESSION_DIR_SHM);
    }
    closedir(d);
    return cleaned;
}
