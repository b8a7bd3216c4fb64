/*
 * Telling a build-tree libopal from an installed one. The build records
 * where its own libopal lies (OPAL_BUILDTREE_LIBDIR); an installed copy
 * lies anywhere else, so comparing the directory of the file this code was
 * loaded from with that one is enough, and needs no environment variable.
 */
#include "opal/opal_config.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opal/runtime/opal_build_tree.h"

#if !defined(OPAL_BUILDTREE_TOP) || !defined(OPAL_BUILDTREE_LIBDIR) ||                             \
    !defined(OPAL_BUILDTREE_COMPONENT_PATH) || !defined(OPAL_BUILDTREE_HELP_DIRS)
#error "OPAL_BUILDTREE_* come from opal/runtime/Makefile.inc"
#endif

enum { ANSWER_UNKNOWN, ANSWER_NO, ANSWER_YES };

/* Relaxed: every thread computes the same answer, so a race only repeats
 * the work. */
static atomic_int answer = ANSWER_UNKNOWN;

/* The directory of path, resolved; NULL when it does not exist. */
static char *resolved_dir(const char *path)
{
    char *copy = strdup(path);
    if (NULL == copy) {
        return NULL;
    }
    char *slash = strrchr(copy, '/');
    if (NULL == slash) {
        free(copy);
        return NULL;
    }
    *slash = '\0';
    char *dir = realpath('\0' == copy[0] ? "/" : copy, NULL);
    free(copy);
    return dir;
}

static bool compute(void)
{
    Dl_info where;
    if (0 == dladdr((void *) (uintptr_t) opal_build_tree_in_use, &where) ||
        NULL == where.dli_fname || NULL == strchr(where.dli_fname, '/')) {
        return false;
    }
    char *mine = resolved_dir(where.dli_fname);
    char *built = realpath(OPAL_BUILDTREE_LIBDIR, NULL);
    bool same = NULL != mine && NULL != built && 0 == strcmp(mine, built);
    free(built);
    free(mine);
    return same;
}

bool opal_build_tree_in_use(void)
{
    int known = atomic_load_explicit(&answer, memory_order_relaxed);
    if (ANSWER_UNKNOWN == known) {
        known = compute() ? ANSWER_YES : ANSWER_NO;
        atomic_store_explicit(&answer, known, memory_order_relaxed);
    }
    return ANSWER_YES == known;
}

const char *opal_build_tree_top(void)
{
    return OPAL_BUILDTREE_TOP;
}

const char *opal_build_tree_component_path(void)
{
    return OPAL_BUILDTREE_COMPONENT_PATH;
}

const char *opal_build_tree_help_dirs(void)
{
    return OPAL_BUILDTREE_HELP_DIRS;
}
