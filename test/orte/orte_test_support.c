/* Shared by the orte tests and the rank programs they start. */
#include "opal/opal_config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/orte/orte_test_support.h"

extern char **environ;

void orte_test_use_build_tree_plugins(void)
{
    setenv("OPAL_MCA_mca_base_component_path", ORTE_TEST_PLUGIN_DIRS, 0);
}

void orte_test_unset_prefixed(const char *prefix)
{
    /* unsetenv changes environ: start over after each removal. */
    bool again = true;
    while (again) {
        again = false;
        for (char **env = environ; NULL != *env; ++env) {
            if (0 == strncmp(*env, prefix, strlen(prefix))) {
                char name[256];
                snprintf(name, sizeof(name), "%.*s", (int) strcspn(*env, "="), *env);
                unsetenv(name);
                again = true;
                break;
            }
        }
    }
}

void orte_test_forget_launchers(void)
{
    orte_test_unset_prefixed("PMIX_");
    orte_test_unset_prefixed("OPAL_ORTE_");
    orte_test_unset_prefixed("OMPI_");
}
