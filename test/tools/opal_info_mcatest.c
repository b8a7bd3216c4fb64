/* opal_info over the build's frameworks plus the test-only mcatest, so
 * that every section has something to show. Built by make check, never
 * installed. With OPAL_INFO_MCATEST_PLUGINS_ONLY set in the environment,
 * mcatest's built-in components are left out, so that its components come
 * from plugins (set OPAL_MCA_mca_base_component_path to the build tree's
 * plugin directories). */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_framework.h"
#include "tools/opal_info/opal_info.h"
#include "test/mca/mcatest/base/base.h"

static const mca_base_component_t *const no_components[] = {NULL};

int main(int argc, char **argv)
{
    if (NULL != getenv("OPAL_INFO_MCATEST_PLUGINS_ONLY")) {
        test_mcatest_base_framework.framework_static_components = no_components;
    }
    size_t count = 0;
    while (NULL != opal_frameworks[count]) {
        ++count;
    }
    mca_base_framework_t **frameworks = calloc(count + 2, sizeof(*frameworks));
    if (NULL == frameworks) {
        return EXIT_FAILURE;
    }
    memcpy(frameworks, opal_frameworks, count * sizeof(*frameworks));
    frameworks[count] = &test_mcatest_base_framework;
    int status = opal_info_main(argc, argv, frameworks);
    free(frameworks);
    return status;
}
