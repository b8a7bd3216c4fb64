/*
 * The Modular Component Architecture: what every component and module has.
 *
 * A component is one implementation of a framework's interface (btl/sm,
 * btl/ofi). It is a const struct whose first member is an
 * mca_base_component_t, exported under the symbol
 * mca_<framework>_<component>_component, either linked into the library
 * (static) or found in a plugin mca_<framework>_<component>.so.
 *
 * Its lifecycle is fixed and driven by the framework base:
 *   register  variables only (mca_register_component_params); may decline
 *             (OPAL_ERR_NOT_AVAILABLE) when it can never run here;
 *   open      allocate, construct free lists (mca_open_component);
 *   query     probe devices, return a module and a priority
 *             (mca_query_component, or a framework-specific init);
 *   close     release everything open took (mca_close_component).
 * A component that cannot run here returns OPAL_ERR_NOT_AVAILABLE from
 * register, open or query and records why with mca_base_component_decline();
 * that is not an error, and the reason is printed at verbosity and kept
 * for opal_info.
 */
#ifndef OPAL_MCA_MCA_H
#define OPAL_MCA_MCA_H

#include "opal/opal_config.h"

#include <stdint.h>

/* The version of this structure layout. A plugin built against another
 * major version is refused at load time with both versions named. */
#define MCA_BASE_VERSION_MAJOR 1
#define MCA_BASE_VERSION_MINOR 0
#define MCA_BASE_VERSION_RELEASE 0

#define MCA_BASE_MAX_PROJECT_NAME_LEN 15
#define MCA_BASE_MAX_TYPE_NAME_LEN 31
#define MCA_BASE_MAX_COMPONENT_NAME_LEN 63

/* What a query returns; frameworks embed it first in their module type.
 * Pointer-sized, so that its alignment is that of a module full of
 * function pointers and casting back to the framework's type is clean
 * (clang's -Wcast-align). */
typedef struct mca_base_module_t {
    void *reserved;
} mca_base_module_t;

/* Registers the component's variables; OPAL_ERR_NOT_AVAILABLE declines. */
typedef int (*mca_base_register_component_params_fn_t)(void);
/* Opens the component; OPAL_ERR_NOT_AVAILABLE declines. */
typedef int (*mca_base_open_component_fn_t)(void);
/* Closes the component, releasing everything open took. */
typedef int (*mca_base_close_component_fn_t)(void);
/* Single-select frameworks: returns a module and its priority, or
 * OPAL_ERR_NOT_AVAILABLE. */
typedef int (*mca_base_query_component_fn_t)(mca_base_module_t **module, int *priority);

/* Component flags. */
enum {
    /* Never unload this plugin (it registers things that outlive close). */
    MCA_BASE_COMPONENT_FLAG_ALWAYS_LOADED = 0x1,
};

typedef struct mca_base_component_t {
    /* The MCA structure version the component was built with. */
    int mca_major_version;
    int mca_minor_version;
    int mca_release_version;

    /* The project (opal, orte, test) and its version. */
    char mca_project_name[MCA_BASE_MAX_PROJECT_NAME_LEN + 1];
    int mca_project_major_version;
    int mca_project_minor_version;
    int mca_project_release_version;

    /* The framework (type) and the version of its interface. */
    char mca_type_name[MCA_BASE_MAX_TYPE_NAME_LEN + 1];
    int mca_type_major_version;
    int mca_type_minor_version;
    int mca_type_release_version;

    /* The component's own name and version. */
    char mca_component_name[MCA_BASE_MAX_COMPONENT_NAME_LEN + 1];
    int mca_component_major_version;
    int mca_component_minor_version;
    int mca_component_release_version;

    mca_base_open_component_fn_t mca_open_component;
    mca_base_close_component_fn_t mca_close_component;
    mca_base_query_component_fn_t mca_query_component;
    mca_base_register_component_params_fn_t mca_register_component_params;

    uint32_t mca_component_flags;
    /* Room to grow without changing the layout. */
    char reserved[28];
} mca_base_component_t;

/* The first fields of a component of framework `type` whose interface is
 * at version major.minor.release, in project opal. Frameworks wrap this in
 * their own <FW>_BASE_VERSION_x_y_z macro. */
#define MCA_BASE_VERSION_FOR_PROJECT(project, pmaj, pmin, prel, type, tmaj, tmin, trel)      \
    .mca_major_version = MCA_BASE_VERSION_MAJOR, .mca_minor_version = MCA_BASE_VERSION_MINOR, \
    .mca_release_version = MCA_BASE_VERSION_RELEASE, .mca_project_name = project,             \
    .mca_project_major_version = (pmaj), .mca_project_minor_version = (pmin),                \
    .mca_project_release_version = (prel), .mca_type_name = type,                            \
    .mca_type_major_version = (tmaj), .mca_type_minor_version = (tmin),                      \
    .mca_type_release_version = (trel)

#define MCA_BASE_VERSION_OPAL(type, tmaj, tmin, trel)                                         \
    MCA_BASE_VERSION_FOR_PROJECT("opal", OPAL_MAJOR_VERSION, OPAL_MINOR_VERSION,              \
                                 OPAL_RELEASE_VERSION, type, tmaj, tmin, trel)

/* The component's own name and version fields. */
#define MCA_BASE_COMPONENT_NAME(name, maj, min, rel)                                          \
    .mca_component_name = name, .mca_component_major_version = (maj),                        \
    .mca_component_minor_version = (min), .mca_component_release_version = (rel)

#endif /* OPAL_MCA_MCA_H */
