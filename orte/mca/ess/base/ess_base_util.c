/*
 * What the ess components share: the host name, job ids for launchers
 * that name their jobs with strings, and joining a job's session
 * directory (orte/util/orte_session_dir.h creates fresh ones).
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "orte/mca/ess/base/base.h"
#include "orte/util/orte_session_dir.h"

int orte_ess_base_hostname(char *name, size_t size)
{
    if (NULL == name || size < 2) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (0 != gethostname(name, size - 1)) {
        opal_output(0, "ess: gethostname failed: %s", strerror(errno));
        return OPAL_ERR_IN_ERRNO;
    }
    /* gethostname need not terminate a truncated name. */
    name[size - 1] = '\0';
    return OPAL_SUCCESS;
}

uint32_t orte_ess_base_jobid_from_name(const char *name)
{
    if (NULL != name && '\0' != name[0] && strlen(name) <= 10 &&
        strspn(name, "0123456789") == strlen(name)) {
        unsigned long long value = strtoull(name, NULL, 10);
        if (value <= UINT32_MAX) {
            return (uint32_t) value;
        }
    }
    /* FNV-1a: a stable, well-spread 32-bit hash of the name. */
    uint32_t hash = 2166136261u;
    for (const unsigned char *c = (const unsigned char *) (NULL == name ? "" : name); '\0' != *c;
         ++c) {
        hash ^= *c;
        hash *= 16777619u;
    }
    return hash;
}

/* Makes dir (mode 0700) unless it exists; then checks it is a directory of
 * ours that nobody else can enter, so that no other user can plant files
 * in a shared $TMPDIR under our name. Several processes of a job may race
 * here: whoever loses the mkdir checks what the winner made. */
static int make_private_dir(const char *dir)
{
    if (0 == mkdir(dir, 0700)) {
        /* The umask may have taken bits the owner needs. */
        if (0 != chmod(dir, 0700)) {
            opal_output(0, "ess: cannot set the mode of %s: %s", dir, strerror(errno));
            return OPAL_ERR_IN_ERRNO;
        }
    } else if (EEXIST != errno) {
        opal_output(0, "ess: cannot create the session directory %s: %s", dir, strerror(errno));
        return OPAL_ERR_IN_ERRNO;
    }
    struct stat st;
    if (0 != lstat(dir, &st)) {
        opal_output(0, "ess: cannot stat the session directory %s: %s", dir, strerror(errno));
        return OPAL_ERR_IN_ERRNO;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || 0 != (st.st_mode & 077)) {
        opal_output(0,
                    "ess: %s is not a private directory of this user (it must be a directory "
                    "owned by uid %u with mode 0700): refusing to use it",
                    dir, (unsigned) geteuid());
        return OPAL_ERR_PERM;
    }
    return OPAL_SUCCESS;
}

int orte_ess_base_session_dir_join(uint32_t jobid, char *path, size_t size)
{
    char base[ORTE_SESSION_DIR_MAX];
    int rc = orte_session_dir_base(base, sizeof(base));
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    int n = snprintf(path, size, "%s/%" PRIu32, base, jobid);
    if (n < 0 || (size_t) n >= size) {
        opal_output(0, "ess: the session directory path under %s is too long", base);
        return OPAL_ERR_BAD_PARAM;
    }
    rc = make_private_dir(base);
    return OPAL_SUCCESS == rc ? make_private_dir(path) : rc;
}
