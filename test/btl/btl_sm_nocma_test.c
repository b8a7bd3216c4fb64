/*
 * btl/sm through the generic btl suite with its single-copy fallback
 * forced (btl_sm_single_copy_mechanism=none): put and get go through
 * shared memory, served by the peer's progress, as where CMA is not
 * permitted.
 */
#include "opal/opal_config.h"

#include "test/btl/btl_test_suite.h"

static const char *const nocma[] = {"--mca", "btl_sm_single_copy_mechanism", "none", NULL};

static const btl_suite_t sm_nocma_suite = {
    .name = "btl_sm_nocma",
    .btl = "self,sm",
    .mca_args = nocma,
    .between_ranks = "sm",
    .cases = BTL_SUITE_PAIRWISE | BTL_SUITE_ALLTOALL | BTL_SUITE_KILLED,
};

int main(void)
{
    return btl_suite_main(btl_suite_create(&sm_nocma_suite));
}
