/*
 * btl/tcp through the generic btl suite (test/btl/btl_test_suite.h): every
 * size, tag, order, the sendi busy path, put / get, eight ranks all to
 * all (every pair connecting at once, so the simultaneous-connect race is
 * run on every pair) and a killed peer, over `--mca btl self,tcp`, with
 * tcp carrying every message between two ranks; and that tcp stands
 * aside on one node unless the selection names it.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/btl/btl_test_suite.h"

static const btl_suite_t tcp_suite = {
    .name = "btl_tcp",
    .btl = "self,tcp",
    .between_ranks = "tcp",
    .cases = BTL_SUITE_ALL,
};

START_TEST(tcp_stands_aside_on_one_node_unless_named)
{
    /* Not named (only excluded others): it declines, and says why. */
    const char *args[] = {"sizes", NULL};
    mcarun_run_t run;
    btl_suite_run(&run, "^sm,ofi,verbs", NULL, NULL, 2, args);
    uint32_t peer = btl_suite_has(run.err, "  rank 1 (on ") ? 1 : 0;
    const char *reasons[] = {"self: not this process",
                             "tcp: all 2 rank(s) of the job are on this node", NULL};
    btl_suite_expect_unreachable(&run, peer, reasons);
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(tcp_with_sm_named_too_leaves_the_node_to_sm)
{
    const char *args[] = {"order", NULL};
    mcarun_run_t run;
    btl_suite_run(&run, "self,sm,tcp", NULL, NULL, 2, args);
    btl_suite_expect_ok(&run, 2, "order", "sm");
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(tcp_with_small_socket_buffers_still_moves_everything)
{
    /* 64 KiB socket buffers (the kernel's default grows to megabytes):
     * large frames are written in pieces and wait for room, and a get's
     * data comes in many reads. Smaller ones than the loopback's 64 KiB
     * segment stall TCP itself (the receiver's window stays shut). */
    const char *mca[] = {"--mca",          "btl_tcp_sndbuf", "65536", "--mca",
                         "btl_tcp_rcvbuf", "65536",          NULL};
    const char *cases[] = {"order", "rdma", "sendi"};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        const char *args[] = {cases[i], NULL};
        mcarun_run_t run;
        btl_suite_run(&run, "self,tcp", mca, NULL, 2, args);
        btl_suite_expect_ok(&run, 2, cases[i], "tcp");
        mcarun_test_run_free(&run);
    }
}
END_TEST

int main(void)
{
    Suite *s = btl_suite_create(&tcp_suite);
    OPAL_TEST_ADD(s, tcp_stands_aside_on_one_node_unless_named);
    OPAL_TEST_ADD(s, tcp_with_sm_named_too_leaves_the_node_to_sm);
    OPAL_TEST_ADD(s, tcp_with_small_socket_buffers_still_moves_everything);
    return btl_suite_main(s);
}
