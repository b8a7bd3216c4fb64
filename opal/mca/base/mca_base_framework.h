/*
 * Frameworks: a framework (btl, na, ...) is declared once with
 * MCA_BASE_FRAMEWORK_DECLARE and driven through
 *
 *   register  its variables (the selection variable "<fw>", <fw>_base_verbose
 *             and the framework's own), find its components (static table +
 *             plugins), register each component's variables;
 *   open      apply the selection variable, open the components;
 *   select    (single-select) query them, keep the highest priority;
 *             (multi-select) keep every module that initialised;
 *   close     close the components, deregister their variables, unload
 *             their plugins.
 *
 * register and open are reference counted: each open is matched by one
 * close, and only the last close tears down. Open -> close -> open again
 * works (plugins are loaded again).
 *
 * The selection variable takes an include list ("self,sm") or an exclude
 * list ("^ofi"). Mixing the two, or naming a component that does not exist,
 * fails the open with a message listing the components that exist (and
 * those that failed to load, with why).
 *
 * Every component that is not used -- excluded, declined, failed to load or
 * open, or lost the selection -- is recorded with the reason, printed at
 * <fw>_base_verbose and kept for opal_info --selected and --show-failed.
 *
 * Frameworks are registered, opened, selected and closed from one thread
 * at a time (initialisation and finalisation); none of this locks.
 */
#ifndef OPAL_MCA_BASE_MCA_BASE_FRAMEWORK_H
#define OPAL_MCA_BASE_MCA_BASE_FRAMEWORK_H

#include "opal/opal_config.h"

#include <stdbool.h>

#include "opal/class/opal_list.h"
#include "opal/mca/mca.h"

typedef enum {
    MCA_BASE_REGISTER_DEFAULT = 0,
    /* Register only static components (no plugin loading). */
    MCA_BASE_REGISTER_STATIC_ONLY = 0x1,
    /* Register every component, ignoring the selection variable (opal_info). */
    MCA_BASE_REGISTER_ALL = 0x2,
} mca_base_register_flag_t;

typedef enum {
    MCA_BASE_OPEN_DEFAULT = 0,
    /* Open only what registration found without applying the selection
     * variable (opal_info). */
    MCA_BASE_OPEN_FIND_COMPONENTS = 0x1,
} mca_base_open_flag_t;

typedef enum {
    /* Keep every module that initialised (btl, bulk); otherwise one wins. */
    MCA_BASE_FRAMEWORK_FLAG_MULTI_SELECT = 0x1,
    /* Components are never plugins (e.g. the framework is needed to load
     * plugins). */
    MCA_BASE_FRAMEWORK_FLAG_NO_DSO = 0x2,
} mca_base_framework_flags_t;

/* Why a component is not in use; what opal_info prints. */
#define MCA_BASE_COMPONENT_STAGE_TABLE(X)                                                          \
    X(MCA_BASE_COMPONENT_STAGE_LOAD, "load")                                                       \
    X(MCA_BASE_COMPONENT_STAGE_VERSION, "version check")                                           \
    X(MCA_BASE_COMPONENT_STAGE_EXCLUDED, "selection")                                              \
    X(MCA_BASE_COMPONENT_STAGE_REGISTER, "register")                                               \
    X(MCA_BASE_COMPONENT_STAGE_OPEN, "open")                                                       \
    X(MCA_BASE_COMPONENT_STAGE_QUERY, "query")                                                     \
    X(MCA_BASE_COMPONENT_STAGE_PRIORITY, "priority")

typedef enum {
#define MCA_BASE_COMPONENT_STAGE_ENUM(name, str) name,
    MCA_BASE_COMPONENT_STAGE_TABLE(MCA_BASE_COMPONENT_STAGE_ENUM)
#undef MCA_BASE_COMPONENT_STAGE_ENUM
} mca_base_component_stage_t;

OPAL_DECLSPEC const char *mca_base_component_stage_name(mca_base_component_stage_t stage);

struct mca_base_component_repository_item_t;

/* A component the framework holds. */
typedef struct mca_base_component_list_item_t {
    opal_list_item_t super;
    const mca_base_component_t *cli_component;
    /* The plugin file, or NULL for a static component. */
    char *cli_path;
    /* The loaded plugin (one reference), or NULL for a static component. */
    struct mca_base_component_repository_item_t *cli_plugin;
    /* Set once the component's open succeeded (close must be called). */
    bool cli_opened;
    /* Set by mca_base_select / mca_base_select_all for the components
     * kept: the module their query returned and its priority. */
    mca_base_module_t *cli_module;
    int cli_priority;
} mca_base_component_list_item_t;
OBJ_CLASS_DECLARATION(mca_base_component_list_item_t);

/* A component that is not in use, and why. */
typedef struct mca_base_component_failure_t {
    opal_list_item_t super;
    char *cf_framework;
    char *cf_component;
    /* The plugin file, or NULL for a static component. */
    char *cf_path;
    mca_base_component_stage_t cf_stage;
    /* One line, e.g. "undefined symbol: foo_bar" or "no device found". */
    char *cf_reason;
} mca_base_component_failure_t;
OBJ_CLASS_DECLARATION(mca_base_component_failure_t);

struct mca_base_framework_t;

/* Verbosity levels of <fw>_base_verbose (any number between works).
 * Errors (a component's open failing) are printed whatever the level. */
enum {
    /* Why each component is not used: excluded, declined, lost. */
    MCA_BASE_VERBOSE_COMPONENT = 10,
    /* What was found and selected, step by step. */
    MCA_BASE_VERBOSE_INFO = 40,
};

/* The framework's own hooks, all optional:
 *   register  after the base registered "<fw>" and <fw>_base_verbose, before
 *             the components are found (the framework's own variables);
 *   open      after the components opened (framework-wide set-up); an
 *             error closes them and fails mca_base_framework_open;
 *   close     before the components close (release modules). */
typedef int (*mca_base_framework_register_params_fn_t)(mca_base_register_flag_t flags);
typedef int (*mca_base_framework_open_fn_t)(mca_base_open_flag_t flags);
typedef int (*mca_base_framework_close_fn_t)(void);

/* The framework's own selection, for frameworks whose components are not
 * chosen by mca_query_component (btl: each component's btl_init returns
 * modules). Run on an open framework by mca_base_framework_select (what
 * opal_info --selected calls): it leaves in framework_components the
 * components a program would use here (cli_module set), removes the
 * others recording why (mca_base_framework_drop_component), and sets
 * *selected to the number kept. What it creates is released by the
 * framework's close hook. Returns OPAL_ERR_NOT_FOUND when none is kept. */
typedef int (*mca_base_framework_select_fn_t)(int *selected);

typedef enum {
    MCA_BASE_FRAMEWORK_STATE_REGISTERED = 0x1,
    MCA_BASE_FRAMEWORK_STATE_OPEN = 0x2,
} mca_base_framework_state_t;

typedef struct mca_base_framework_t {
    /* Set by MCA_BASE_FRAMEWORK_DECLARE. */
    const char *framework_project;
    const char *framework_name;
    const char *framework_description;
    /* The interface version components must be built against (major must
     * match; a newer minor in the component is refused). */
    int framework_api_major;
    int framework_api_minor;
    mca_base_framework_register_params_fn_t framework_register;
    mca_base_framework_open_fn_t framework_open;
    mca_base_framework_close_fn_t framework_close;
    /* NULL: mca_base_select / mca_base_select_all choose. */
    mca_base_framework_select_fn_t framework_select;
    uint32_t framework_flags;
    /* NULL-terminated table of the components linked in. */
    const mca_base_component_t *const *framework_static_components;

    /* State, owned by the framework base. */
    int framework_register_refcnt;
    int framework_open_refcnt;
    uint32_t framework_state;
    /* Storage of the selection variable "<fw>" (NULL: all components). */
    char *framework_selection;
    int framework_selection_var;
    int framework_verbose;
    int framework_output;
    /* mca_base_component_list_item_t: registered, then opened. */
    opal_list_t framework_components;
    /* mca_base_component_failure_t: excluded, declined, failed. */
    opal_list_t framework_failures;
} mca_base_framework_t;

#define MCA_BASE_FRAMEWORK_DECLARE(project, name, description, api_major, api_minor, reg, open,    \
                                   close, static_components, flags)                                \
    MCA_BASE_FRAMEWORK_DECLARE_SELECT(project, name, description, api_major, api_minor, reg, open, \
                                      close, NULL, static_components, flags)

/* The same for a framework with its own selection hook. */
#define MCA_BASE_FRAMEWORK_DECLARE_SELECT(project, name, description, api_major, api_minor, reg,   \
                                          open, close, select, static_components, flags)           \
    mca_base_framework_t project##_##name##_base_framework = {                                     \
        .framework_project = #project,                                                             \
        .framework_name = #name,                                                                   \
        .framework_description = (description),                                                    \
        .framework_api_major = (api_major),                                                        \
        .framework_api_minor = (api_minor),                                                        \
        .framework_register = (reg),                                                               \
        .framework_open = (open),                                                                  \
        .framework_close = (close),                                                                \
        .framework_select = (select),                                                              \
        .framework_flags = (flags),                                                                \
        .framework_static_components = (static_components),                                        \
    }

/* Registers the framework's and its components' variables (counted). */
OPAL_DECLSPEC int mca_base_framework_register(mca_base_framework_t *framework,
                                              mca_base_register_flag_t flags);

/* Registers if needed, applies the selection variable and opens the
 * components (counted). On a selection-variable error returns
 * OPAL_ERR_BAD_VALUE after printing what exists. With
 * MCA_BASE_OPEN_FIND_COMPONENTS the implicit register is
 * MCA_BASE_REGISTER_ALL and the selection is not applied. */
OPAL_DECLSPEC int mca_base_framework_open(mca_base_framework_t *framework,
                                          mca_base_open_flag_t flags);

/* Drops one open (and the matching register); the last one closes every
 * component, deregisters their variables and unloads their plugins. */
OPAL_DECLSPEC int mca_base_framework_close(mca_base_framework_t *framework);

OPAL_DECLSPEC bool mca_base_framework_is_registered(const mca_base_framework_t *framework);
OPAL_DECLSPEC bool mca_base_framework_is_open(const mca_base_framework_t *framework);

/* Single-select: queries every opened component; the highest priority
 * wins, ties broken by component name (alphabetically first). The others
 * are closed and recorded ("priority 10 < 40 of sm"). The winner stays in
 * framework_components with cli_module set. Returns OPAL_ERR_NOT_FOUND
 * when no component returned a module, OPAL_ERR_NOT_INITIALIZED when the
 * framework is not open. */
OPAL_DECLSPEC int mca_base_select(mca_base_framework_t *framework, mca_base_module_t **best_module,
                                  const mca_base_component_t **best_component, int *best_priority);

/* Multi-select: queries every opened component and keeps each one whose
 * query returned a module (cli_module, cli_priority), sorted by priority,
 * highest first, ties by name; the others are closed and recorded.
 * *selected (when not NULL) is the number kept. Returns
 * OPAL_ERR_NOT_FOUND when none was kept. */
OPAL_DECLSPEC int mca_base_select_all(mca_base_framework_t *framework, int *selected);

/* Selects as a program using the framework would, for callers that do not
 * know the framework (opal_info --selected): the framework's select hook
 * when it has one, otherwise mca_base_select_all (multi-select) or
 * mca_base_select. *selected (when not NULL) is the number of components
 * kept. OPAL_ERR_NOT_FOUND when none is kept, OPAL_ERR_NOT_INITIALIZED
 * when the framework is not open. */
OPAL_DECLSPEC int mca_base_framework_select(mca_base_framework_t *framework, int *selected);

/* Records that component declines to run here, with a printf-style reason;
 * printed at the framework's verbosity and kept for opal_info. The
 * component then returns OPAL_ERR_NOT_AVAILABLE from the hook it is in. */
OPAL_DECLSPEC void mca_base_component_decline(const mca_base_component_t *component,
                                              const char *format, ...) OPAL_PRINTF_LIKE(2, 3);

/* Closes one opened component and removes it from the framework, recording
 * reason (multi-select frameworks: a module that failed its init). */
OPAL_DECLSPEC void mca_base_framework_drop_component(mca_base_framework_t *framework,
                                                     mca_base_component_list_item_t *item,
                                                     mca_base_component_stage_t stage,
                                                     const char *reason);

/* True when the framework's selection variable is an include list that
 * names component name (btl=self,ofi names ofi; unset or ^sm does not):
 * a component that would stand aside by default runs when asked for. */
OPAL_DECLSPEC bool mca_base_framework_names_component(mca_base_framework_t *framework,
                                                      const char *name);

/* Prints that no component of framework was found, with where plugins
 * were looked for (each directory of mca_base_component_path: missing, or
 * which of the framework's plugins it holds), the built-in components,
 * the selection variable and what to do. */
OPAL_DECLSPEC void mca_base_framework_show_not_found(const mca_base_framework_t *framework);

/* One line per directory of mca_base_component_path, each starting with
 * indent: whether it exists and which plugins of framework it holds.
 * Returns a new string (the caller frees it), NULL when out of memory. */
OPAL_DECLSPEC char *mca_base_component_path_report(const char *framework, const char *indent);

/* Every framework of project opal in this build, NULL-terminated: what
 * opal_info lists (configure generates opal/mca/base/opal_frameworks.h;
 * liborte has orte_frameworks[] the same way). */
OPAL_DECLSPEC extern mca_base_framework_t *opal_frameworks[];

/* The names of the code components of several frameworks share
 * (opal/mca/common/<name>, e.g. "ofi"), NULL-terminated. Their variables
 * are named <name>_* (ofi_provider_include) and are registered by the
 * components that use them; each name is declared as a prefix
 * (mca_base_var_declare_prefix) so that setting such a variable while no
 * such component is loaded is not reported as a typo. */
OPAL_DECLSPEC extern const char *const opal_mca_common_names[];

#endif /* OPAL_MCA_BASE_MCA_BASE_FRAMEWORK_H */
