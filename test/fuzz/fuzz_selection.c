/* Fuzz target: a framework's selection variable ("self,sm", "^ofi"), as
 * users set it with --mca btl, OPAL_MCA_btl or a file
 * (mca_base_selection_parse, then mca_base_selection_wants). A value that
 * parses must name only valid component names, and answer for any name;
 * one that does not must be refused as a bad value. */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/base/mca_base_framework_internal.h"
#include "opal/util/opal_error.h"
#include "test/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *value = malloc(size + 1);
    if (NULL == value) {
        return 0;
    }
    memcpy(value, data, size);
    value[size] = '\0';
    mca_base_framework_t framework;
    memset(&framework, 0, sizeof(framework));
    framework.framework_name = "btl";
    framework.framework_selection = value;
    framework.framework_selection_var = -1;
    mca_base_selection_t selection;
    int rc = mca_base_selection_parse(&framework, &selection);
    if (OPAL_SUCCESS == rc) {
        bool self = mca_base_selection_wants(&selection, "self");
        for (int i = 0; NULL != selection.sel_names && NULL != selection.sel_names[i]; ++i) {
            const char *name = selection.sel_names[i];
            if ('\0' == name[0] ||
                strspn(name, "abcdefghijklmnopqrstuvwxyz"
                             "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != strlen(name) ||
                mca_base_selection_wants(&selection, name) == selection.sel_exclude) {
                abort();
            }
        }
        char *reason = mca_base_selection_reason(&framework, &selection);
        free(reason);
        (void) self;
        mca_base_selection_free(&selection);
    } else if (OPAL_ERR_BAD_VALUE != rc && OPAL_ERR_OUT_OF_RESOURCE != rc) {
        abort();
    }
    free(value);
    return 0;
}
