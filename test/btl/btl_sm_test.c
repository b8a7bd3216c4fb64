/*
 * btl/sm through the generic btl suite (test/btl/btl_test_suite.h): every
 * size, tag, order, the sendi busy path, put / get, eight ranks all to
 * all and a killed peer, over `--mca btl self,sm`, with sm carrying every
 * message between two ranks; and what happens without sm.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/btl/btl_test_suite.h"

static const btl_suite_t sm_suite = {
    .name = "btl_sm",
    .btl = "self,sm",
    .between_ranks = "sm",
    .cases = BTL_SUITE_ALL | BTL_SUITE_UNREAPED | BTL_SUITE_DEPARTED,
};

/* The job failed in add_procs; the first rank to fail (mcarun then stops
 * the other) named its peer and every reason. */
static void expect_unreachable(const char *btl, const char *const *reasons)
{
    const char *args[] = {"sizes", NULL};
    mcarun_run_t run;
    btl_suite_run(&run, btl, NULL, NULL, 2, args);
    uint32_t peer = btl_suite_has(run.err, "  rank 1 (on ") ? 1 : 0;
    btl_suite_expect_unreachable(&run, peer, reasons);
    mcarun_test_run_free(&run);
}

START_TEST(excluding_sm_falls_back_to_what_is_left)
{
    if (btl_suite_built("ofi")) {
        /* ofi is left: it carries the messages between the ranks. */
        static const char *const mca_args[] = {"--mca", "ofi_provider_include", "tcp;ofi_rxm",
                                               NULL};
        const char *args[] = {"order", NULL};
        mcarun_run_t run;
        btl_suite_run(&run, "^sm", mca_args, NULL, 2, args);
        btl_suite_expect_ok(&run, 2, "order", "ofi");
        mcarun_test_run_free(&run);
        return;
    }
    /* Only self is left: a rank says why nothing reaches the other, and
     * that sm was excluded. */
    const char *reasons[] = {"self: not this process", "sm: excluded by btl=^sm", NULL};
    expect_unreachable("^sm", reasons);
}
END_TEST

START_TEST(self_alone_says_sm_was_not_included)
{
    const char *reasons[] = {"self: not this process", "sm: not included by btl=self", NULL};
    expect_unreachable("self", reasons);
}
END_TEST

START_TEST(sm_with_the_fallback_forced_still_passes_rdma)
{
    /* The whole suite runs with CMA off in btl_sm_nocma_test; this one
     * makes sure the variable reaches sm here too. */
    const char *args[] = {"rdma", NULL};
    const char *mca[] = {"--mca", "btl_sm_single_copy_mechanism", "none", NULL};
    mcarun_run_t run;
    btl_suite_run(&run, "self,sm", mca, NULL, 2, args);
    btl_suite_expect_ok(&run, 2, "rdma", "sm");
    mcarun_test_run_free(&run);
}
END_TEST

int main(void)
{
    Suite *s = btl_suite_create(&sm_suite);
    OPAL_TEST_ADD(s, excluding_sm_falls_back_to_what_is_left);
    OPAL_TEST_ADD(s, self_alone_says_sm_was_not_included);
    OPAL_TEST_ADD(s, sm_with_the_fallback_forced_still_passes_rdma);
    return btl_suite_main(s);
}
