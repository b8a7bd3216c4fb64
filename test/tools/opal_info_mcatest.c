/* opal_info over the build's frameworks plus the test-only mcatest, so
 * that every section has something to show. Built by make check, never
 * installed. */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_framework.h"
#include "opal/tools/opal_info/opal_info.h"
#include "test/mca/mcatest/base/base.h"

int main(int argc, char **argv)
{
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
