/* The installed opal_info: the tool over every framework of this build,
 * opal's and orte's. The program links liborte for its framework table;
 * libopal itself never does. */
#include "opal/opal_config.h"

#include <stdlib.h>

#include "opal/mca/base/mca_base_framework.h"
#include "tools/opal_info/opal_info.h"
#include "orte/runtime/orte_init.h"

static size_t count_frameworks(mca_base_framework_t *const *list)
{
    size_t n = 0;
    while (NULL != list[n]) {
        ++n;
    }
    return n;
}

int main(int argc, char **argv)
{
    size_t nopal = count_frameworks(opal_frameworks);
    size_t norte = count_frameworks(orte_frameworks);
    mca_base_framework_t **all = calloc(nopal + norte + 1, sizeof(*all));
    if (NULL == all) {
        return 1;
    }
    for (size_t i = 0; i < nopal; ++i) {
        all[i] = opal_frameworks[i];
    }
    for (size_t i = 0; i < norte; ++i) {
        all[nopal + i] = orte_frameworks[i];
    }
    int rc = opal_info_main(argc, argv, all);
    free(all);
    return rc;
}
