/*
 * What the tests of orte share: making the build tree's ess plugins
 * findable, and clearing the variables of every launcher.
 */
#ifndef OPAL_TEST_ORTE_ORTE_TEST_SUPPORT_H
#define OPAL_TEST_ORTE_ORTE_TEST_SUPPORT_H

#include "opal/opal_config.h"

/* Points mca_base_component_path at the build tree's plugins (unless the
 * caller's environment already chose a path), so that this process and
 * every process it starts find the ess components. */
void orte_test_use_build_tree_plugins(void);

/* Removes every environment variable whose name starts with prefix. */
void orte_test_unset_prefixed(const char *prefix);

/* Removes the variables of mcarun and of PMIx launchers. */
void orte_test_forget_launchers(void);

#endif /* OPAL_TEST_ORTE_ORTE_TEST_SUPPORT_H */
