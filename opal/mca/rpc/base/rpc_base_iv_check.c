/*
 * What a member checks of a decoded iv request before it acts on it
 * (apart from the namespaces, so that the fuzz target covers it alone).
 */
#include "opal/opal_config.h"

#include <stdio.h>

#include "opal/mca/rpc/base/rpc_base_iv.h"
#include "opal/util/opal_error.h"

int opal_rpc_base_iv_check(const rpc_iv_in_t *in, uint32_t index, uint32_t key_max,
                           uint32_t value_max, char *why, size_t why_size)
{
    if (NULL == in->group) {
        snprintf(why, why_size, "no group name");
        return OPAL_ERR_BAD_PARAM;
    }
    if (0 == in->key.len || in->key.len > key_max) {
        snprintf(why, why_size, "a key of %u bytes (1..%u)", in->key.len, key_max);
        return OPAL_ERR_BAD_PARAM;
    }
    if (IV_OP_UPDATE == index ? in->value.len > value_max : 0 != in->value.len) {
        snprintf(why, why_size, "a value of %u bytes %s", in->value.len,
                 IV_OP_UPDATE == index ? "past rpc_iv_value_max" : "in a request that has none");
        return OPAL_ERR_BAD_PARAM;
    }
    return OPAL_SUCCESS;
}
