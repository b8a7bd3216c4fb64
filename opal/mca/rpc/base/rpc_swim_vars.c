/*
 * SWIM's parameters as MCA variables (rpc_swim_*), for the live detector
 * and any program that wants the user's settings.
 */
#include "opal/opal_config.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/rpc/rpc_swim.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

/* The variables' storage: it must outlive their registration. */
static opal_swim_params_t swim_vars;

int opal_swim_register_vars(void)
{
    struct {
        const char *name;
        const char *description;
        mca_base_var_type_t type;
        void *storage;
    } vars[] = {
        {"period_ms", "SWIM protocol period in ms: each member pings one other per period",
         MCA_BASE_VAR_TYPE_UNSIGNED_INT, &swim_vars.period_ms},
        {"ping_timeout_ms",
         "ms a direct ping waits for its ack before k others are asked to ping (ping-req), "
         "and then again for their acks; at most one period",
         MCA_BASE_VAR_TYPE_UNSIGNED_INT, &swim_vars.ping_timeout_ms},
        {"suspect_timeout_ms",
         "ms a suspected member has to refute before it is declared dead (0: dead at once)",
         MCA_BASE_VAR_TYPE_UNSIGNED_INT, &swim_vars.suspect_timeout_ms},
        {"indirect_count", "Members asked to ping a target that did not answer (k, 0 to 16)",
         MCA_BASE_VAR_TYPE_UNSIGNED_INT, &swim_vars.indirect_count},
        {"piggyback_entries",
         "Recent membership updates each message carries besides the sender's and the "
         "receiver's own and the probed member's (0 to 61)",
         MCA_BASE_VAR_TYPE_UNSIGNED_INT, &swim_vars.piggyback_entries},
        {"piggyback_tx",
         "Times each update is sent on by a member (0: 3 * ceil(log2(group size + 1)))",
         MCA_BASE_VAR_TYPE_UNSIGNED_INT, &swim_vars.piggyback_tx},
        {"seed", "Seed of the random choices (0: derived from the rank)",
         MCA_BASE_VAR_TYPE_UINT64_T, &swim_vars.seed},
    };
    opal_swim_params_default(&swim_vars);
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); ++i) {
        int index = mca_base_var_register("opal", "rpc", "swim", vars[i].name, vars[i].description,
                                          vars[i].type, NULL, MCA_BASE_VAR_FLAG_NONE,
                                          OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_ALL, vars[i].storage);
        if (index < 0) {
            return index;
        }
    }
    return OPAL_SUCCESS;
}

int opal_swim_params_from_vars(opal_swim_params_t *p)
{
    int rc = opal_swim_register_vars();
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    const char *why = NULL;
    if (OPAL_SUCCESS != opal_swim_params_check(&swim_vars, &why)) {
        opal_output(0,
                    "rpc swim: bad variables (period %u ms, ping timeout %u ms, suspicion %u ms, "
                    "indirect %u, piggyback %u): %s",
                    swim_vars.period_ms, swim_vars.ping_timeout_ms, swim_vars.suspect_timeout_ms,
                    swim_vars.indirect_count, swim_vars.piggyback_entries, why);
        return OPAL_ERR_BAD_PARAM;
    }
    *p = swim_vars;
    return OPAL_SUCCESS;
}
