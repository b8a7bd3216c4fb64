/*
 * What the framework base's files share (not installed): failure records,
 * the selection variable, and the steps of a component's lifecycle.
 */
#ifndef OPAL_MCA_BASE_MCA_BASE_FRAMEWORK_INTERNAL_H
#define OPAL_MCA_BASE_MCA_BASE_FRAMEWORK_INTERNAL_H

#include "opal/opal_config.h"

#include <stdbool.h>

#include "opal/mca/base/mca_base_framework.h"

/* A new failure record (strings copied; path and reason may be NULL). */
mca_base_component_failure_t *mca_base_failure_new(const char *framework, const char *component,
                                                   const char *path,
                                                   mca_base_component_stage_t stage,
                                                   const char *reason);

/* Records in framework_failures that component (plugin file path, or NULL)
 * is not used, and prints it on the framework's stream at verbosity level
 * (0: always). */
void mca_base_framework_record(mca_base_framework_t *framework, const char *component,
                               const char *path, mca_base_component_stage_t stage, int level,
                               const char *reason);

/* The framework's selection variable, parsed. */
typedef struct mca_base_selection_t {
    /* The value as given ("" when unset: everything). */
    const char *sel_value;
    /* An exclude list ("^a,b"); otherwise an include list or, with no
     * names, everything. */
    bool sel_exclude;
    /* The names, without the '^' (argv; NULL when none). */
    char **sel_names;
} mca_base_selection_t;

/* Parses the framework's selection variable. A value that mixes included
 * and excluded names, or holds an empty name, is printed (naming the
 * variable, the value and where it was set) and gives OPAL_ERR_BAD_VALUE. */
int mca_base_selection_parse(mca_base_framework_t *framework, mca_base_selection_t *selection);
void mca_base_selection_free(mca_base_selection_t *selection);

/* Prints help topic of help-mca-base.txt for the framework's selection
 * value: its arguments are the framework name (twice), the value, where
 * it was set, then extra1..3. */
void mca_base_selection_error(const mca_base_framework_t *framework, const char *topic,
                              const char *extra1, const char *extra2, const char *extra3);

/* True when the selection lets component name run. */
bool mca_base_selection_wants(const mca_base_selection_t *selection, const char *name);

/* Why a component the selection leaves out is not used ("excluded by
 * mcatest=^bad", "not in mcatest=good"). Caller frees. */
char *mca_base_selection_reason(const mca_base_framework_t *framework,
                                const mca_base_selection_t *selection);

/* Finds the framework's components: the static table, then the plugins
 * not shadowed by a static component of the same name, leaving out what
 * the selection variable excludes (unless MCA_BASE_REGISTER_ALL). Plugins
 * are loaded and checked; what fails or is left out is recorded. The
 * components found are appended to framework_components. A selection that
 * names components that are not there (or that failed to load) is printed
 * with what exists and gives OPAL_ERR_BAD_VALUE, leaving no component. */
int mca_base_framework_find_components(mca_base_framework_t *framework,
                                       mca_base_register_flag_t flags);

/* At open: an included name must be registered or recorded as failed;
 * otherwise the error is printed and OPAL_ERR_BAD_VALUE returned. */
int mca_base_framework_check_open_selection(mca_base_framework_t *framework,
                                            const mca_base_selection_t *selection);

/* Finds the framework's components (static table, then plugins not
 * shadowed by a static component of the same name), applies the selection
 * (unless MCA_BASE_REGISTER_ALL), checks the names it lists, and
 * registers each component's variables; the components that registered
 * are appended to framework_components. */
int mca_base_framework_components_register(mca_base_framework_t *framework,
                                           mca_base_register_flag_t flags);

/* Applies the selection again (unless MCA_BASE_OPEN_FIND_COMPONENTS) and
 * opens every registered component; those that decline or fail are
 * recorded and removed. */
int mca_base_framework_components_open(mca_base_framework_t *framework, mca_base_open_flag_t flags);

/* Calls the close hook of every opened component (in reverse order of
 * opening) and forgets selection results; they stay registered. */
void mca_base_framework_components_close(mca_base_framework_t *framework);

/* Removes every component: closes it if opened, deregisters its variables
 * and releases its plugin. */
void mca_base_framework_components_release(mca_base_framework_t *framework);

/* Removes one component from framework_components (item is released):
 * closes it if opened, deregisters its variables, releases its plugin,
 * and records why at level. */
void mca_base_framework_remove(mca_base_framework_t *framework,
                               mca_base_component_list_item_t *item,
                               mca_base_component_stage_t stage, int level, const char *reason);

/* After a component's register, open or query hook returned rc: keeps
 * the component (OPAL_SUCCESS), or removes it, recording the reason it
 * gave to mca_base_component_decline() (OPAL_ERR_NOT_AVAILABLE, printed at
 * MCA_BASE_VERBOSE_COMPONENT) or the error (always printed). A reason left
 * by a hook that did not decline is dropped. Returns whether it was kept. */
bool mca_base_framework_hook_result(mca_base_framework_t *framework,
                                    mca_base_component_list_item_t *item,
                                    mca_base_component_stage_t stage, int rc);

/* The reason component gave to mca_base_component_decline() since its
 * last hook, removed from the pending reasons (caller frees), or NULL. */
char *mca_base_component_take_decline(const mca_base_component_t *component);

/* Forgets every pending decline reason (mca_base_close). */
void mca_base_component_clear_declines(void);

/* Forgets the parsed mca_base_component_show_load_errors (mca_base_close):
 * the next open parses afresh. */
void mca_base_load_errors_finalize(void);

#endif /* OPAL_MCA_BASE_MCA_BASE_FRAMEWORK_INTERNAL_H */
