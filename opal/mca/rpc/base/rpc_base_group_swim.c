/*
 * SWIM over a group (opal_rpc_group_swim_create): the members are the
 * group's ranks, their endpoints the group's on the context SWIM runs on,
 * and every event SWIM reports becomes the member's state in the group,
 * so that corpc skips the dead and the membership version moves.
 */
#include "opal/opal_config.h"

#include <stdlib.h>

#include "opal/mca/rpc/base/rpc_base_group.h"
#include "opal/mca/rpc/rpc_group.h"
#include "opal/mca/rpc/rpc_swim.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

/* What the endpoint and event callbacks need; owned by the SWIM. */
typedef struct group_swim_t {
    opal_rpc_group_t *group;
    uint8_t ctx_idx;
} group_swim_t;

/* Called from the progress thread of SWIM's context. */
static int group_endpoint(void *arg, uint32_t rank, opal_rpc_endpoint_t *ep)
{
    group_swim_t *gs = arg;
    return opal_rpc_group_endpoint(gs->group, rank, gs->ctx_idx, ep);
}

/* Called from the progress thread of SWIM's context; the group's own lock
 * makes the state change safe against corpc on other threads. */
static void group_event(void *arg, uint32_t rank, opal_swim_status_t status, uint64_t incarnation)
{
    group_swim_t *gs = arg;
    opal_rpc_member_state_t state = OPAL_SWIM_DEAD == status      ? OPAL_RPC_MEMBER_DEAD
                                    : OPAL_SWIM_SUSPECT == status ? OPAL_RPC_MEMBER_SUSPECT
                                                                  : OPAL_RPC_MEMBER_ALIVE;
    (void) incarnation;
    int rc = opal_rpc_group_member_set_state(gs->group, rank, state);
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "rpc: SWIM's event for rank %u of group %s (%s) could not be applied: %s",
                    rank, opal_rpc_group_name(gs->group), opal_swim_status_name(status),
                    opal_strerror(rc));
    }
}

int opal_rpc_group_swim_create(opal_rpc_context_t *ctx, opal_rpc_group_t *group,
                               const opal_swim_params_t *p, opal_rpc_swim_t **swim)
{
    uint32_t self;
    if (NULL == ctx || NULL == group || NULL == swim) {
        return OPAL_ERR_BAD_PARAM;
    }
    int rc = opal_rpc_group_rank(group, &self);
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "rpc: SWIM over group %s: this process is not one of its members",
                    opal_rpc_group_name(group));
        return rc;
    }
    group_swim_t *gs = malloc(sizeof(*gs));
    if (NULL == gs) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    gs->group = group;
    gs->ctx_idx = opal_rpc_context_idx(ctx);
    opal_rpc_swim_t *sw = NULL;
    rc = opal_rpc_swim_create(ctx, self, opal_rpc_group_size(group), p, group_endpoint, gs, &sw);
    if (OPAL_SUCCESS != rc) {
        free(gs);
        return rc;
    }
    opal_rpc_swim_base_own(sw, gs);
    rc = opal_rpc_swim_add_callback(sw, group_event, gs);
    if (OPAL_SUCCESS != rc) {
        opal_rpc_swim_destroy(sw);
        return rc;
    }
    *swim = sw;
    return OPAL_SUCCESS;
}
