/*
 * Whether this libopal is the one of a build tree, not yet installed: then
 * the programs of the build tree find the build tree's plugins and help
 * files by themselves, as the installed ones find the installed ones.
 */
#ifndef OPAL_RUNTIME_OPAL_BUILD_TREE_H
#define OPAL_RUNTIME_OPAL_BUILD_TREE_H

#include <stdbool.h>

#include "opal/opal_config.h"

/* True when the libopal running is the file the build left in its build
 * tree (found with dladdr, compared after resolving symbolic links); false
 * for an installed copy, and for a libopal linked statically. */
OPAL_DECLSPEC bool opal_build_tree_in_use(void);

/* The top of the build tree libopal was built in (set by the build). */
OPAL_DECLSPEC const char *opal_build_tree_top(void);

/* The build tree's plugin directories, a colon list (set by the build). */
OPAL_DECLSPEC const char *opal_build_tree_component_path(void);

/* The source directories holding help files, separated by blanks (as make
 * joins them; set by the build). */
OPAL_DECLSPEC const char *opal_build_tree_help_dirs(void);

#endif
