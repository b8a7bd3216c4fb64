/*
 * The component repository: the plugins found along mca_base_component_path
 * and the component structs loaded from them.
 *
 * Each directory of the path (colon list, a leading "~" is $HOME) is read
 * once, the first time a framework asks, and again only when the path's
 * value changes. A file mca_<fw>_<comp>.so or mca_<fw>_<comp>.la is a
 * plugin of framework <fw> (framework names hold no '_', so the name splits
 * at the second '_'); the .so and .la of one plugin count once, and when
 * two directories hold the same plugin the first directory wins (the other
 * is noted at mca_base_verbose).
 *
 * Loading opens the file with libltdl, finds mca_<fw>_<comp>_component and
 * checks its MCA, framework-interface and project versions against what
 * this library and the framework expect. Any failure is recorded (which
 * file, why) in a list kept until mca_base_close() and printed as
 * mca_base_component_show_load_errors says.
 *
 * Not thread-safe: frameworks are registered and closed from one thread.
 */
#ifndef OPAL_MCA_BASE_MCA_BASE_COMPONENT_REPOSITORY_H
#define OPAL_MCA_BASE_MCA_BASE_COMPONENT_REPOSITORY_H

#include "opal/opal_config.h"

#include <stdbool.h>

#include "opal/class/opal_list.h"
#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/mca.h"

/* A plugin file found along the path. Read-only to callers. */
typedef struct mca_base_component_repository_item_t {
    opal_list_item_t super;
    char *ri_framework;
    char *ri_component;
    /* The file: the .so when the directory has one, else the .la. */
    char *ri_path;
    /* The loaded component, or NULL while the plugin is not loaded. */
    const mca_base_component_t *ri_loaded;
    /* Loads minus releases; the file is closed when it drops to 0. */
    int ri_refcount;
    /* libltdl's handle (an lt_dlhandle), kept opaque here so that this
     * header does not need ltdl.h. */
    void *ri_handle;
} mca_base_component_repository_item_t;
OBJ_CLASS_DECLARATION(mca_base_component_repository_item_t);

/* Starts the repository (lt_dlinit); called by mca_base_open(). Counted. */
OPAL_DECLSPEC int mca_base_component_repository_init(void);

/* The last call unloads whatever is still loaded (lt_dlexit) and drops the
 * scanned directories and the recorded failures; called by
 * mca_base_close(). */
OPAL_DECLSPEC void mca_base_component_repository_finalize(void);

/* The plugins of framework found along mca_base_component_path
 * (mca_base_component_repository_item_t, in path order). Scans the path
 * first if it was not scanned or its value changed. The list belongs to
 * the repository and stays valid until the next rescan or finalize; NULL
 * when the repository is not initialised. A framework with no plugin gets
 * an empty list. */
OPAL_DECLSPEC const opal_list_t *mca_base_component_repository_plugins(const char *framework);

/* The plugin item of framework/component, or NULL when no file was found. */
OPAL_DECLSPEC mca_base_component_repository_item_t *
mca_base_component_repository_find(const char *framework, const char *component);

/* Loads item (or takes another reference when it is loaded) and checks the
 * component it exports against framework. On success *component points at
 * the component struct inside the plugin, valid until the matching
 * release. On failure returns OPAL_ERR_NOT_FOUND (open or symbol failed)
 * or OPAL_ERR_VERSION_MISMATCH, after recording the failure (and printing
 * it when show_errors is true and mca_base_component_show_load_errors
 * selects it); *failure (when not NULL) then points at the record, owned by
 * the repository. */
OPAL_DECLSPEC int mca_base_component_repository_load(mca_base_component_repository_item_t *item,
                                                     const mca_base_framework_t *framework,
                                                     bool show_errors,
                                                     const mca_base_component_t **component,
                                                     const mca_base_component_failure_t **failure);

/* Drops the reference a load took; the last one closes the file (unless
 * the component is flagged MCA_BASE_COMPONENT_FLAG_ALWAYS_LOADED). The
 * caller must have deregistered the component's variables first: they
 * point into the plugin. */
OPAL_DECLSPEC void
mca_base_component_repository_release(mca_base_component_repository_item_t *item);

/* True when the plugin of framework/component is loaded now. */
OPAL_DECLSPEC bool mca_base_component_repository_is_loaded(const char *framework,
                                                           const char *component);

/* Checks a component (static or loaded) against what framework expects:
 * the MCA structure major version, the framework name, the framework
 * interface (major equal, component minor not newer), the project name and
 * its major.minor version, and that the component's name is name (when not
 * NULL). Returns OPAL_SUCCESS, or OPAL_ERR_VERSION_MISMATCH with a
 * malloc'd one-line reason in *reason, e.g. "built with MCA version
 * 9.0.0, expected 1.0.0". */
OPAL_DECLSPEC int mca_base_component_check_version(const mca_base_component_t *component,
                                                   const mca_base_framework_t *framework,
                                                   const char *name, char **reason);

/* Every plugin load or version failure since mca_base_open(), oldest first
 * (mca_base_component_failure_t; the same file failing the same way is
 * kept once). Owned by the repository, valid until mca_base_close(); NULL
 * when the repository is not initialised. What opal_info --show-failed
 * lists besides each framework's framework_failures. */
OPAL_DECLSPEC const opal_list_t *mca_base_component_repository_failures(void);

/* True when mca_base_component_show_load_errors selects failures of
 * framework/component for printing. */
OPAL_DECLSPEC bool mca_base_component_show_load_error(const char *framework, const char *component);

#endif /* OPAL_MCA_BASE_MCA_BASE_COMPONENT_REPOSITORY_H */
