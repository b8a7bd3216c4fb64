/*
 * opal_pid_exited: kill(pid, 0) answers for a pid no process has; a
 * process that has one is looked up in /proc/<pid>/stat, whose third
 * field is its state ('Z' zombie, 'X' being reaped). The second field is
 * the command name in parentheses, which may itself hold spaces and
 * parentheses: the state follows the last ')'.
 *
 * opal_pid_space: FNV-1a (64 bits) over the kernel's boot id and the
 * pid namespace's device and inode numbers.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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

static uint64_t fnv1a(uint64_t hash, const void *data, size_t size)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < size; ++i) {
        hash ^= p[i];
        hash *= 0x100000001b3u;
    }
    return hash;
}

uint64_t opal_pid_space(void)
{
    /* A UUID as text, 36 bytes and a newline. */
    char boot_id[64];
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    ssize_t n;
    do {
        n = read(fd, boot_id, sizeof(boot_id));
    } while (n < 0 && EINTR == errno);
    close(fd);
    struct stat ns;
    if (n < 16 || 0 != stat("/proc/self/ns/pid", &ns)) {
        return 0;
    }
    uint64_t dev = (uint64_t) ns.st_dev, ino = (uint64_t) ns.st_ino;
    uint64_t hash = fnv1a(0xcbf29ce484222325u, boot_id, (size_t) n);
    hash = fnv1a(hash, &dev, sizeof(dev));
    hash = fnv1a(hash, &ino, sizeof(ino));
    return 0 != hash ? hash : 1;
}
