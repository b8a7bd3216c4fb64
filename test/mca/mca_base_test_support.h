/*
 * What the tests of the MCA base share: the environment they set, the
 * mcatest framework with or without its built-in components, capturing
 * what is printed, and finding components and failures.
 */
#ifndef OPAL_TEST_MCA_MCA_BASE_TEST_SUPPORT_H
#define OPAL_TEST_MCA_MCA_BASE_TEST_SUPPORT_H

#include "opal/opal_config.h"

#include <stdbool.h>

#include "opal/class/opal_list.h"
#include "opal/mca/base/mca_base_framework.h"
#include "test/mca/mcatest/base/base.h"

/* Any stage, for mt_failure(). */
#define MT_ANY_STAGE ((mca_base_component_stage_t) -1)

/* Starts a test from a clean slate: no OPAL_MCA_* variable set, mcatest
 * with its built-in components, no plugin directory. Checks that the MCA
 * base is closed (the previous test released everything). */
void mt_reset(void);

/* Sets OPAL_MCA_<name> to value; NULL unsets it. Read when the variable
 * registers. */
void mt_set(const char *name, const char *value);

/* Makes the build tree's plugin directories the component path. */
void mt_use_build_plugins(void);

/* Empties mcatest's static table, so that its components come from
 * plugins only (mt_reset restores it). */
void mt_no_static_components(void);

/* The build tree's plugin file of mcatest component comp (malloc'd). */
char *mt_plugin_file(const char *comp);

/* A new empty directory under $TMPDIR (malloc'd); mt_remove_dir removes it
 * and what it holds (files and symlinks only). */
char *mt_make_dir(void);
void mt_remove_dir(char *dir);

/* Creates dir/name as a symbolic link to target. */
void mt_link(const char *dir, const char *name, const char *target);

/* Everything written to stderr between start and end (malloc'd). */
void mt_capture_start(void);
char *mt_capture_end(void);

/* The framework's component named name, or NULL. */
mca_base_component_list_item_t *mt_component(mca_base_framework_t *framework, const char *name);

/* The first failure of component at stage (MT_ANY_STAGE: any) in
 * failures, or NULL. */
const mca_base_component_failure_t *mt_failure(const opal_list_t *failures, const char *component,
                                               mca_base_component_stage_t stage);

/* How many failures of component failures holds. */
int mt_failure_count(const opal_list_t *failures, const char *component);

/* True when a file whose name ends with file_name is mapped into this
 * process (/proc/self/maps). */
bool mt_mapped(const char *file_name);

/* True when the variable of that full name is registered now. */
bool mt_var_exists(const char *full_name);

#endif /* OPAL_TEST_MCA_MCA_BASE_TEST_SUPPORT_H */
