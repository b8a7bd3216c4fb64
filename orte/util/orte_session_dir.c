/*
 * Session directories. Everything below the base is reached through
 * directory file descriptors opened with O_NOFOLLOW, so a symbolic link
 * planted in the tree can neither redirect creation nor make removal
 * delete files outside it.
 */
#include "opal/opal_config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "orte/util/orte_session_dir.h"

/* pid_max is at most 2^22 on Linux, so a pid fits below this and the
 * remaining 10 bits of a jobid count attempts. */
#define JOBID_SEED_BITS    22
#define JOBID_MAX_ATTEMPTS 1024
#define REMOVE_MAX_DEPTH   128

int orte_session_dir_base(char *path, size_t size)
{
    const char *tmp = getenv("TMPDIR");
    if (NULL == tmp || '\0' == tmp[0]) {
        tmp = "/tmp";
    }
    if ('/' != tmp[0]) {
        opal_output(0, "session directory: TMPDIR=%s is not an absolute path", tmp);
        return OPAL_ERR_BAD_PARAM;
    }
    size_t len = strlen(tmp);
    while (len > 1 && '/' == tmp[len - 1]) {
        --len;
    }
    int n = snprintf(path, size, "%.*s/opal-mca.%lu", (int) len, tmp, (unsigned long) geteuid());
    if (n < 0 || (size_t) n >= size) {
        opal_output(0, "session directory: TMPDIR=%s is too long", tmp);
        return OPAL_ERR_BAD_PARAM;
    }
    return OPAL_SUCCESS;
}

/* Opens the base, creating it when missing, and checks that it can be
 * trusted. Returns the directory fd or a negative OPAL_ERR_*. */
static int open_base(const char *base)
{
    bool created = false;
    int fd = open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && ENOENT == errno) {
        if (0 == mkdir(base, 0700)) {
            created = true;
        } else if (EEXIST != errno) {
            int err = errno;
            opal_output(0, "session directory: cannot create %s: %s", base, strerror(err));
            errno = err;
            return OPAL_ERR_IN_ERRNO;
        }
        fd = open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
        int err = errno;
        if (ELOOP == err || ENOTDIR == err) {
            opal_output(0,
                        "session directory: %s is not a directory (or is a symbolic link); "
                        "remove it, or set TMPDIR to another directory",
                        base);
            return OPAL_ERR_PERM;
        }
        opal_output(0, "session directory: cannot open %s: %s", base, strerror(err));
        errno = err;
        return OPAL_ERR_IN_ERRNO;
    }
    /* The umask may have taken bits from mkdir's mode; the owner needs
     * all three and nobody else any. */
    if (created && 0 != fchmod(fd, 0700)) {
        int err = errno;
        opal_output(0, "session directory: cannot set the mode of %s: %s", base, strerror(err));
        close(fd);
        errno = err;
        return OPAL_ERR_IN_ERRNO;
    }
    struct stat st;
    if (0 != fstat(fd, &st)) {
        int err = errno;
        opal_output(0, "session directory: cannot stat %s: %s", base, strerror(err));
        close(fd);
        errno = err;
        return OPAL_ERR_IN_ERRNO;
    }
    if (st.st_uid != geteuid()) {
        opal_output(0,
                    "session directory: %s belongs to uid %lu, not to you (uid %lu); "
                    "remove it, or set TMPDIR to another directory",
                    base, (unsigned long) st.st_uid, (unsigned long) geteuid());
        close(fd);
        return OPAL_ERR_PERM;
    }
    if (0 != (st.st_mode & 077)) {
        opal_output(0,
                    "session directory: %s has mode %04o, open to other users; "
                    "make it private (chmod 700 %s) or remove it",
                    base, (unsigned) (st.st_mode & 07777), base);
        close(fd);
        return OPAL_ERR_PERM;
    }
    return fd;
}

int orte_session_dir_create(uint32_t seed, uint32_t *jobid, char *path, size_t size)
{
    char base[ORTE_SESSION_DIR_MAX];
    int rc = orte_session_dir_base(base, sizeof(base));
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    int fd = open_base(base);
    if (fd < 0) {
        return fd;
    }
    rc = OPAL_ERR_EXISTS;
    uint32_t low = seed & ((1u << JOBID_SEED_BITS) - 1);
    for (uint32_t k = 0; k < JOBID_MAX_ATTEMPTS; ++k) {
        uint32_t id = low | (k << JOBID_SEED_BITS);
        char name[16];
        snprintf(name, sizeof(name), "%lu", (unsigned long) id);
        int n = snprintf(path, size, "%s/%s", base, name);
        if (n < 0 || (size_t) n >= size) {
            opal_output(0, "session directory: %s/%s is too long", base, name);
            rc = OPAL_ERR_BAD_PARAM;
            break;
        }
        if (0 != mkdirat(fd, name, 0700)) {
            if (EEXIST == errno) {
                continue;
            }
            int err = errno;
            opal_output(0, "session directory: cannot create %s: %s", path, strerror(err));
            errno = err;
            rc = OPAL_ERR_IN_ERRNO;
            break;
        }
        if (0 != fchmodat(fd, name, 0700, 0)) {
            int err = errno;
            opal_output(0, "session directory: cannot set the mode of %s: %s", path, strerror(err));
            unlinkat(fd, name, AT_REMOVEDIR);
            errno = err;
            rc = OPAL_ERR_IN_ERRNO;
            break;
        }
        *jobid = id;
        rc = OPAL_SUCCESS;
        break;
    }
    if (OPAL_ERR_EXISTS == rc) {
        opal_output(0,
                    "session directory: %s holds a directory for every jobid this process "
                    "could use; remove the stale ones",
                    base);
    }
    close(fd);
    return rc;
}

static int report_remove(const char *top, const char *name, int err)
{
    opal_output(0, "session directory: cannot remove %s (in %s): %s", name, top, strerror(err));
    errno = err;
    return OPAL_ERR_IN_ERRNO;
}

/* Removes name in parent (a directory fd, or AT_FDCWD) and, when it is a
 * directory, everything under it first. */
static int remove_at(int parent, const char *name, const char *top, int depth)
{
    if (0 == unlinkat(parent, name, 0) || ENOENT == errno) {
        return OPAL_SUCCESS;
    }
    if (EISDIR != errno && EPERM != errno) {
        return report_remove(top, name, errno);
    }
    if (depth >= REMOVE_MAX_DEPTH) {
        opal_output(0,
                    "session directory: %s is nested more than %d directories deep in %s; "
                    "left in place",
                    name, REMOVE_MAX_DEPTH, top);
        errno = ELOOP;
        return OPAL_ERR_IN_ERRNO;
    }
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        return ENOENT == errno ? OPAL_SUCCESS : report_remove(top, name, errno);
    }
    DIR *dir = fdopendir(fd);
    if (NULL == dir) {
        int err = errno;
        close(fd);
        return report_remove(top, name, err);
    }
    int rc = OPAL_SUCCESS;
    struct dirent *entry;
    while (NULL != (entry = readdir(dir))) {
        if (0 == strcmp(entry->d_name, ".") || 0 == strcmp(entry->d_name, "..")) {
            continue;
        }
        int sub = remove_at(dirfd(dir), entry->d_name, top, depth + 1);
        if (OPAL_SUCCESS == rc) {
            rc = sub;
        }
    }
    closedir(dir);
    if (0 != unlinkat(parent, name, AT_REMOVEDIR) && ENOENT != errno && OPAL_SUCCESS == rc) {
        rc = report_remove(top, name, errno);
    }
    return rc;
}

int orte_session_dir_remove(const char *path)
{
    if (NULL == path || '\0' == path[0]) {
        return OPAL_ERR_BAD_PARAM;
    }
    return remove_at(AT_FDCWD, path, path, 0);
}

int orte_session_dir_shm_prefix(uint32_t jobid, char *prefix, size_t size)
{
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "opal-mca.%lu.%lu.", (unsigned long) geteuid(),
                     (unsigned long) jobid);
    if (n < 0 || (size_t) n >= size) {
        return OPAL_ERR_BAD_PARAM;
    }
    memcpy(prefix, buf, (size_t) n + 1);
    return OPAL_SUCCESS;
}

int orte_session_dir_remove_shm(const char *dir, const char *prefix)
{
    if (NULL == dir) {
        dir = ORTE_SESSION_DIR_SHM;
    }
    if (NULL == prefix || '\0' == prefix[0] || NULL != strchr(prefix, '/')) {
        return OPAL_ERR_BAD_PARAM;
    }
    DIR *d = opendir(dir);
    if (NULL == d) {
        return OPAL_ERR_IN_ERRNO;
    }
    size_t plen = strlen(prefix);
    int removed = 0;
    struct dirent *entry;
    while (NULL != (entry = readdir(d))) {
        struct stat st;
        if (0 != strncmp(entry->d_name, prefix, plen) ||
            0 != fstatat(dirfd(d), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
            st.st_uid != geteuid()) {
            continue;
        }
        if (0 == unlinkat(dirfd(d), entry->d_name, 0)) {
            ++removed;
        } else if (ENOENT != errno) {
            opal_output(0, "session directory: cannot remove %s/%s: %s", dir, entry->d_name,
                        strerror(errno));
        }
    }
    closedir(d);
    return removed;
}
