/*
 * "No component was found": where the MCA base looked, directory by
 * directory, so that a user can tell an empty install from a mistyped
 * path or a selection that names nothing, and what to do about it.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "opal/mca/base/mca_base_component_repository.h"
#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/base/mca_base_open.h"
#include "opal/runtime/opal_build_tree.h"
#include "opal/util/opal_argv.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_show_help.h"

/* "~" and "~/..." name the home directory, as in the repository. */
static char *expand_home(const char *dir)
{
    const char *home = getenv("HOME");
    if ('~' != dir[0] || ('\0' != dir[1] && '/' != dir[1]) || NULL == home) {
        return strdup(dir);
    }
    char *out = NULL;
    return asprintf(&out, "%s%s", home, dir + 1) < 0 ? NULL : out;
}

/* The names of framework's plugins the repository found in dir, comma
 * separated ("" when none). */
static char *plugins_in(const char *framework, const char *dir)
{
    char **names = NULL;
    const opal_list_t *plugins = mca_base_component_repository_plugins(framework);
    size_t len = strlen(dir);
    if (NULL != plugins) {
        mca_base_component_repository_item_t *item;
        OPAL_LIST_FOREACH (item, plugins, mca_base_component_repository_item_t) {
            if (0 == strncmp(item->ri_path, dir, len) && '/' == item->ri_path[len] &&
                NULL == strchr(item->ri_path + len + 1, '/')) {
                (void) opal_argv_append_unique_nosize(&names, item->ri_component);
            }
        }
    }
    char *joined = NULL != names ? opal_argv_join(names, ',') : strdup("");
    opal_argv_free(names);
    return joined;
}

/* One line for one directory of the path: missing, not a directory, or
 * which of framework's plugins it holds. */
static char *directory_line(const char *framework, const char *entry, const char *indent)
{
    char *dir = expand_home(entry);
    if (NULL == dir) {
        return NULL;
    }
    char *line = NULL;
    struct stat st;
    int rc;
    if (0 != stat(dir, &st)) {
        rc = asprintf(&line, "%s%s: %s", indent, dir,
                      ENOENT == errno ? "does not exist" : strerror(errno));
    } else if (!S_ISDIR(st.st_mode)) {
        rc = asprintf(&line, "%s%s: not a directory", indent, dir);
    } else {
        char *found = plugins_in(framework, dir);
        if (NULL == found) {
            rc = -1;
        } else if ('\0' == found[0]) {
            rc = asprintf(&line, "%s%s: exists, holds no mca_%s_*.so", indent, dir, framework);
        } else {
            rc = asprintf(&line, "%s%s: exists, holds %s", indent, dir, found);
        }
        free(found);
    }
    free(dir);
    return rc < 0 ? NULL : line;
}

char *mca_base_component_path_report(const char *framework, const char *indent)
{
    const char *path = NULL != mca_base_component_path ? mca_base_component_path : "";
    char **dirs = opal_argv_split(path, ':');
    if (NULL == dirs) {
        return NULL;
    }
    char **lines = NULL;
    for (int i = 0; NULL != dirs[i]; ++i) {
        char *line = directory_line(framework, dirs[i], indent);
        if (NULL == line || OPAL_SUCCESS != opal_argv_append_nosize(&lines, line)) {
            free(line);
            opal_argv_free(lines);
            opal_argv_free(dirs);
            return NULL;
        }
        free(line);
    }
    opal_argv_free(dirs);
    char *text = NULL;
    if (NULL == lines) {
        (void) asprintf(&text, "%s(the path is empty)", indent);
    } else {
        text = opal_argv_join(lines, '\n');
    }
    opal_argv_free(lines);
    return text;
}

/* The built-in components' names, comma separated, or "none". */
static char *static_names(const mca_base_framework_t *framework)
{
    char **names = NULL;
    for (int i = 0; NULL != framework->framework_static_components &&
                    NULL != framework->framework_static_components[i];
         ++i) {
        (void) opal_argv_append_nosize(
            &names, framework->framework_static_components[i]->mca_component_name);
    }
    char *joined = NULL != names ? opal_argv_join(names, ',') : strdup("none");
    opal_argv_free(names);
    return joined;
}

void mca_base_framework_show_not_found(const mca_base_framework_t *framework)
{
    const char *name = framework->framework_name;
    char *report = mca_base_component_path_report(name, "  ");
    char *builtin = static_names(framework);
    const char *selection =
        NULL != framework->framework_selection && '\0' != framework->framework_selection[0]
            ? framework->framework_selection
            : "(not set: every component)";
    /* Where this libopal's own plugins would be: the build tree's
     * directories for a build-tree libopal, else the install directory. */
    char *where = NULL;
    if (opal_build_tree_in_use()) {
        (void) asprintf(&where, "%s/{opal,orte}/mca/%s/*/.libs (built by make)",
                        opal_build_tree_top(), name);
    } else {
        (void) asprintf(&where, "%s (installed by make install)", OPAL_PKGLIBDIR);
    }
    char *text = opal_show_help_string("help-mca-base.txt", "no-component", true, name, builtin,
                                       name, NULL != report ? report : "  (out of memory)", name,
                                       selection, NULL != where ? where : OPAL_PKGLIBDIR);
    if (NULL != text) {
        opal_output(0, "%s", text);
    } else {
        opal_output(0, "no %s component was found along mca_base_component_path=%s", name,
                    NULL != mca_base_component_path ? mca_base_component_path : "");
    }
    free(text);
    free(where);
    free(builtin);
    free(report);
}
