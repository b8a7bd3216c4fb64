/*
 * What a member checks of a decoded corpc forward before it sends
 * anything on (apart from the node machinery, so that the fuzz target
 * covers it alone).
 */
#include "opal/opal_config.h"

#include <math.h>
#include <stdio.h>

#include "opal/mca/rpc/base/rpc_base_corpc.h"
#include "opal/util/opal_error.h"

int opal_rpc_base_corpc_check(const rpc_corpc_in_t *in, uint32_t group_size, char *why,
                              size_t why_size)
{
    if (in->root >= group_size) {
        snprintf(why, why_size, "root %u is not in the group (%u ranks)", in->root, group_size);
        return OPAL_ERR_BAD_PARAM;
    }
    if (NULL == in->tree) {
        snprintf(why, why_size, "no tree shape");
        return OPAL_ERR_BAD_PARAM;
    }
    if (!isfinite(in->budget) || in->budget < 0) {
        snprintf(why, why_size, "time budget %g is not a number of seconds >= 0", in->budget);
        return OPAL_ERR_BAD_PARAM;
    }
    if (in->excluded.count >= group_size) {
        snprintf(why, why_size, "%u ranks excluded from a group of %u", in->excluded.count,
                 group_size);
        return OPAL_ERR_BAD_PARAM;
    }
    for (uint32_t i = 0; i < in->excluded.count; ++i) {
        uint32_t r = in->excluded.elems[i];
        if (r >= group_size || r == in->root) {
            snprintf(why, why_size, "excluded rank %u is %s", r,
                     r == in->root ? "the root" : "not in the group");
            return OPAL_ERR_BAD_PARAM;
        }
    }
    return OPAL_SUCCESS;
}
