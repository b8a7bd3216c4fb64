/*
 * btl/tcp through the generic btl suite (test/btl/btl_test_suite.h): every
 * size, tag, order, the sendi busy path, put / get, eight ranks all to
 * all (every pair connecting at once, so the simultaneous-connect race is
 * run on every pair), a killed peer and a peer that dies idle, with no
 * connection to it, and stays unreaped (seen by watching its process),
 * over `--mca btl self,tcp`, with tcp carrying every message between two
 * ranks; that tcp stands aside on one node unless the selection names it; and, through its own rank
 * program (test/btl/btl_tcp_rank.c), that a peer breaking the protocol is
 * dropped with the reason, a connection that never says hello is closed
 * at its deadline even while the owner sleeps in opal_progress_wait,
 * forged put / get handles are refused, and a third peer is accepted by
 * a rank that one connection keeps busy (read directly, without epoll).
 */
#include "opal/opal_config.h"

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test/btl/btl_test_suite.h"

static btl_suite_t tcp_suite = {
    .name = "btl_tcp",
    .btl = "self,tcp",
    .between_ranks = "tcp",
    .cases = BTL_SUITE_ALL | BTL_SUITE_UNREAPED | BTL_SUITE_PIDNS | BTL_SUITE_DEPARTED,
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

/* Runs `mcarun -np 2 --mca btl self,tcp mca... btl_tcp_rank args...` and
 * checks that both ranks passed, and that the output holds expect (or
 * NULL). */
static void tcp_rank_mca(const char *const *mca, const char *const *args, const char *expect)
{
    char prog[4096];
    snprintf(prog, sizeof(prog), "%s", mcarun_test_build_path("test/btl/btl_tcp_rank"));
    const char *argv[48] = {"-np", "2", "--timeout", "90", "--mca", "btl", "self,tcp"};
    int n = 7;
    for (int i = 0; NULL != mca && NULL != mca[i] && n < 30; ++i) {
        argv[n++] = mca[i];
    }
    argv[n++] = prog;
    for (int i = 0; NULL != args[i] && n < 47; ++i) {
        argv[n++] = args[i];
    }
    argv[n] = NULL;
    mcarun_run_t run;
    mcarun_test_mcarun(&run, NULL, argv);
    char ok0[64], ok1[64];
    snprintf(ok0, sizeof(ok0), "rank 0: %s ok\n", args[0]);
    snprintf(ok1, sizeof(ok1), "rank 1: %s ok\n", args[0]);
    bool ok = 0 == run.status && !btl_suite_has(run.out, "FAILED") && btl_suite_has(run.out, ok0) &&
              btl_suite_has(run.out, ok1) &&
              (NULL == expect || btl_suite_has(run.out, expect) || btl_suite_has(run.err, expect));
    /* A dropped peer is reported by rank 0's error callback, naming it. */
    if (ok && 0 == strcmp(args[0], "intruder") && 0 != strcmp(args[1], "other-job") &&
        0 != strcmp(args[1], "silent")) {
        ok = btl_suite_has(run.out, "rank 0: dropped rank 1: btl/tcp: rank 1 (on ");
    }
    if (!ok) {
        mcarun_test_dump(&run);
        ck_abort_msg("btl_tcp_rank %s did not pass (mcarun exited %d; expected '%s')", args[0],
                     run.status, NULL != expect ? expect : "");
    }
    mcarun_test_run_free(&run);
}

static void tcp_rank(const char *const *args, const char *expect)
{
    tcp_rank_mca(NULL, args, expect);
}

START_TEST(a_frame_of_unknown_type_drops_the_peer_with_the_reason)
{
    const char *args[] = {"intruder", "type", NULL};
    tcp_rank(args, "failed: it sent a malformed frame: a frame of unknown type 99");
}
END_TEST

START_TEST(an_oversized_message_drops_the_peer_before_anything_is_read)
{
    const char *args[] = {"intruder", "am-size", NULL};
    tcp_rank(args, "it sent a malformed frame: a message of 2147483647 bytes (at most 262144)");
}
END_TEST

START_TEST(a_reply_to_no_request_drops_the_peer)
{
    const char *args[] = {"intruder", "reply", NULL};
    tcp_rank(args, "it sent a malformed frame: a put reply (id 42) to no request");
}
END_TEST

START_TEST(a_status_where_none_belongs_drops_the_peer)
{
    const char *args[] = {"intruder", "status", NULL};
    tcp_rank(args, "it sent a malformed frame: a frame of type 1 with status 1");
}
END_TEST

START_TEST(a_handshake_from_another_job_is_refused_and_said_once)
{
    const char *args[] = {"intruder", "other-job", NULL};
    tcp_rank(args, "btl/tcp: a process of another job");
}
END_TEST

START_TEST(a_silent_connection_is_closed_at_its_deadline_while_the_owner_sleeps)
{
    const char *args[] = {"intruder", "silent", NULL};
    tcp_rank(args, "rank 1: silent connection closed after ");
}
END_TEST

START_TEST(a_peer_that_finalizes_without_a_connection_is_closed_not_failed)
{
    /* No connection, so no goodbye: rank 0 sees rank 1's process gone,
     * and the runtime says it finalized. */
    const char *args[] = {"departed", NULL};
    tcp_rank(args, "rank 0: closed rank 1 once, no failure: btl/tcp: rank 1 (on ");
}
END_TEST

START_TEST(forged_handles_are_refused_by_the_owner)
{
    const char *args[] = {"forged", NULL};
    tcp_rank(args, "rank 1: forged handles refused: key, bounds, access");
}
END_TEST

START_TEST(keepalive_and_user_timeout_are_set_on_every_connection)
{
    /* The defaults: keepalive after 60 s idle, 5 s apart, 6 probes; the
     * kernel's user timeout. */
    const char *defaults[] = {"sockopts", "60", "5", "6", "0", NULL};
    tcp_rank(defaults, "rank 1: socket");
    const char *mca[] = {
        "--mca", "btl_tcp_keepalive_time",   "7", "--mca", "btl_tcp_keepalive_intvl", "3",
        "--mca", "btl_tcp_keepalive_probes", "4", "--mca", "btl_tcp_user_timeout",    "2500",
        NULL};
    const char *args[] = {"sockopts", "7", "3", "4", "2500", NULL};
    tcp_rank_mca(mca, args, "rank 0: socket");
    const char *off_mca[] = {"--mca", "btl_tcp_keepalive_time", "0", NULL};
    const char *off[] = {"sockopts", "0", "0", "0", "0", NULL};
    tcp_rank_mca(off_mca, off, "rank 0: socket");
}
END_TEST

START_TEST(keepalive_settings_outside_the_kernels_bounds_are_said_and_bounded)
{
    const char *mca[] = {
        "--mca", "btl_tcp_keepalive_intvl", "0", "--mca", "btl_tcp_keepalive_probes", "500", NULL};
    const char *args[] = {"sockopts", "60", "1", "127", "0", NULL};
    tcp_rank_mca(mca, args,
                 "btl_tcp_keepalive_probes 500 is outside 1..127 (the kernel's bounds): 127 used");
    tcp_rank_mca(mca, args,
                 "btl_tcp_keepalive_intvl 0 is outside 1..32767 (the kernel's bounds): 1 used");
}
END_TEST

/* This machine can listen on and connect to ::1. */
static bool have_ipv6_loopback(void)
{
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    if (fd < 0) {
        return false;
    }
    struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    bool ok = 0 == bind(fd, (struct sockaddr *) &sa, sizeof(sa));
    close(fd);
    return ok;
}

START_TEST(each_address_family_carries_the_traffic_and_says_where_it_connected)
{
    const struct {
        const char *family;
        const char *at; /* what the connections' verbose line must show */
    } runs[] = {{"ipv4", "at 127.0.0.1:"}, {"ipv6", "at [::1]:"}, {"any", "at 127.0.0.1:"}};
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); ++i) {
        if (0 == strcmp(runs[i].family, "ipv6") && !have_ipv6_loopback()) {
            printf("btl_tcp_test: no IPv6 loopback here: the ipv6 run is skipped\n");
            continue;
        }
        const char *mca[] = {"--mca", "btl_tcp_address_family", runs[i].family,
                             "--mca", "btl_base_verbose",       "20",
                             NULL};
        const char *args[] = {"rdma", NULL};
        mcarun_run_t run;
        btl_suite_run(&run, "self,tcp", mca, NULL, 2, args);
        btl_suite_expect_ok(&run, 2, "rdma", "tcp");
        if (!btl_suite_has(run.out, runs[i].at) && !btl_suite_has(run.err, runs[i].at)) {
            mcarun_test_dump(&run);
            ck_abort_msg("btl_tcp_address_family %s: no connection %s...", runs[i].family,
                         runs[i].at);
        }
        mcarun_test_run_free(&run);
    }
}
END_TEST

START_TEST(peers_of_different_families_fail_saying_so)
{
    if (!have_ipv6_loopback()) {
        printf("btl_tcp_test: no IPv6 loopback here: skipped\n");
        return;
    }
    /* Rank 1 IPv6 alone, rank 0 IPv4 alone: neither published an
     * address the other may use. */
    char prog[4096];
    snprintf(prog, sizeof(prog), "%s", mcarun_test_build_path("test/btl/btl_test_rank"));
    const char *argv[] = {"-np",
                          "2",
                          "--timeout",
                          "60",
                          "--mca",
                          "btl",
                          "self,tcp",
                          "--mca",
                          "btl_tcp_address_family",
                          "ipv4",
                          "sh",
                          "-c",
                          "[ \"$OPAL_ORTE_RANK\" = 1 ] && "
                          "export OPAL_MCA_btl_tcp_address_family=ipv6; exec \"$0\" order",
                          prog,
                          NULL};
    mcarun_run_t run;
    mcarun_test_mcarun(&run, NULL, argv);
    /* Whichever rank tries first fails and ends the job: its message is
     * the one there. */
    const char *want4 = "it published no IPv4 address (btl_tcp_address_family ipv4 here)";
    const char *want6 = "it published no IPv6 address (btl_tcp_address_family ipv6 here)";
    if (0 == run.status || (!btl_suite_has(run.out, want4) && !btl_suite_has(run.err, want4) &&
                            !btl_suite_has(run.out, want6) && !btl_suite_has(run.err, want6))) {
        mcarun_test_dump(&run);
        ck_abort_msg("expected a failed job saying \"%s\" or \"%s\" (status %d)", want4, want6,
                     run.status);
    }
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(an_unknown_address_family_is_refused_by_name)
{
    const char *mca[] = {"--mca", "btl_tcp_address_family", "ipx", NULL};
    const char *args[] = {"sizes", NULL};
    mcarun_run_t run;
    btl_suite_run(&run, "self,tcp", mca, NULL, 2, args);
    const char *want = "btl_tcp_address_family 'ipx' is none of any, ipv4, ipv6";
    if (0 == run.status || !btl_suite_has(run.err, want)) {
        mcarun_test_dump(&run);
        ck_abort_msg("expected a failed job saying \"%s\" (status %d)", want, run.status);
    }
    mcarun_test_run_free(&run);
}
END_TEST

/* Runs btl_tcp_rank KASE COUNT on three ranks with 64 KiB socket buffers
 * (and btl_tcp_free_list_max, when given): every rank must pass, and the
 * output hold each of expect[]. */
static void tcp_flood(const char *kase, const char *count, const char *free_list_max,
                      const char *const *expect)
{
    char prog[4096];
    snprintf(prog, sizeof(prog), "%s", mcarun_test_build_path("test/btl/btl_tcp_rank"));
    const char *argv[32] = {"-np",   "3",     "--oversubscribe", "--timeout", "90",
                            "--mca", "btl",   "self,tcp",        "--mca",     "btl_tcp_sndbuf",
                            "65536", "--mca", "btl_tcp_rcvbuf",  "65536"};
    int n = 14;
    if (NULL != free_list_max) {
        argv[n++] = "--mca";
        argv[n++] = "btl_tcp_free_list_max";
        argv[n++] = free_list_max;
    }
    argv[n++] = prog;
    argv[n++] = kase;
    argv[n++] = count;
    argv[n] = NULL;
    mcarun_run_t run;
    mcarun_test_mcarun(&run, NULL, argv);
    bool ok = 0 == run.status && !btl_suite_has(run.out, "FAILED");
    for (int r = 0; r < 3 && ok; ++r) {
        char line[64];
        snprintf(line, sizeof(line), "rank %d: %s ok\n", r, kase);
        ok = btl_suite_has(run.out, line);
    }
    for (int i = 0; ok && NULL != expect[i]; ++i) {
        ok = btl_suite_has(run.out, expect[i]);
    }
    if (!ok) {
        mcarun_test_dump(&run);
        ck_abort_msg("btl_tcp_rank %s did not pass (mcarun exited %d)", kase, run.status);
    }
    mcarun_test_run_free(&run);
}

START_TEST(slow_readers_get_every_message_intact)
{
    /* Rank 0 floods two readers that pause at different paces: its sends
     * are written in part, their rest is queued in descriptors that are
     * reused (and new ones made) while the other queue is long. A
     * descriptor must never be handed to the kernel by reference: the
     * next message written into it would change bytes already sent. */
    const char *count = opal_test_under_valgrind() ? "2000" : "20000";
    char read1[96], read2[96];
    snprintf(read1, sizeof(read1), "rank 1: read %s messages intact, in order", count);
    snprintf(read2, sizeof(read2), "rank 2: read %s messages intact, in order", count);
    const char *expect[] = {read1, read2, NULL};
    tcp_flood("slowreader", count, NULL, expect);
}
END_TEST

START_TEST(a_read_that_spends_the_budget_and_empties_the_socket_is_handled)
{
    /* The messages wait in the socket while their reader sleeps, and its
     * first read takes them all (some 50 KiB), far past a 4 KiB budget:
     * they must be handled in that pass, since nothing more will come to
     * make the socket readable (CI once saw a job hang so, its last
     * messages read and never handled). */
    const char *mca[] = {"--mca", "btl_tcp_recv_budget", "4096", NULL};
    const char *args[] = {"sleepyreader", "100", NULL};
    tcp_rank_mca(mca, args, "rank 1: read 100 messages intact after sleeping");
}
END_TEST

START_TEST(a_flood_among_three_with_one_descriptor_each_arrives_intact)
{
    /* Every rank floods the other two with messages up to 30 KiB, with
     * btl_tcp_free_list_max 1: a send the socket takes in part often
     * finds no descriptor for its rest, which then waits in memory of its
     * own instead of the sender spinning on a full socket (three spinning
     * senders would never read again). */
    const char *count = opal_test_under_valgrind() ? "200" : "2000";
    char lines[3][96];
    const char *expect[4];
    for (int r = 0; r < 3; ++r) {
        snprintf(lines[r], sizeof(lines[r]), "rank %d: sent %d and read %d messages intact", r,
                 2 * atoi(count), 2 * atoi(count));
        expect[r] = lines[r];
    }
    expect[3] = NULL;
    tcp_flood("crossflood", count, "1", expect);
}
END_TEST

START_TEST(a_peer_connecting_while_one_connection_keeps_a_rank_busy_is_accepted)
{
    /* With one connection up, rank 0 reads its socket directly and asks
     * epoll only every btl_tcp_epoll_interval calls: rank 2's connection
     * must still be accepted while rank 1's ping-pong keeps rank 0 busy
     * (it stops only once rank 0 has rank 2's message). */
    char prog[4096];
    snprintf(prog, sizeof(prog), "%s", mcarun_test_build_path("test/btl/btl_tcp_rank"));
    const char *argv[] = {"-np",      "3",  "--oversubscribe", "--timeout", "90", "--mca", "btl",
                          "self,tcp", prog, "latecomer",       NULL};
    mcarun_run_t run;
    mcarun_test_mcarun(&run, NULL, argv);
    bool ok = 0 == run.status && !btl_suite_has(run.out, "FAILED") &&
              btl_suite_has(run.out, "rank 0: read rank 2's message after ") &&
              btl_suite_has(run.out, "rank 1: played ");
    for (int r = 0; r < 3 && ok; ++r) {
        char line[64];
        snprintf(line, sizeof(line), "rank %d: latecomer ok\n", r);
        ok = btl_suite_has(run.out, line);
    }
    if (!ok) {
        mcarun_test_dump(&run);
        ck_abort_msg("btl_tcp_rank latecomer did not pass (mcarun exited %d)", run.status);
    }
    mcarun_test_run_free(&run);
}
END_TEST

int main(void)
{
    /* Under valgrind the sendi case stops at 16 times fewer messages than
     * outside: the kernel's socket buffers (megabytes once tuned) would
     * take them all before tcp has to queue, so they are scaled down too
     * (the queue and its bound are what the case is about). */
    static const char *const small_buffers[] = {
        "--mca", "btl_tcp_sndbuf", "65536", "--mca", "btl_tcp_rcvbuf", "65536", NULL};
    if (opal_test_under_valgrind()) {
        tcp_suite.mca_args = small_buffers;
    }
    Suite *s = btl_suite_create(&tcp_suite);
    OPAL_TEST_ADD(s, tcp_stands_aside_on_one_node_unless_named);
    OPAL_TEST_ADD(s, tcp_with_sm_named_too_leaves_the_node_to_sm);
    OPAL_TEST_ADD(s, tcp_with_small_socket_buffers_still_moves_everything);
    OPAL_TEST_ADD(s, slow_readers_get_every_message_intact);
    OPAL_TEST_ADD(s, a_flood_among_three_with_one_descriptor_each_arrives_intact);
    OPAL_TEST_ADD(s, a_read_that_spends_the_budget_and_empties_the_socket_is_handled);
    OPAL_TEST_ADD(s, a_peer_connecting_while_one_connection_keeps_a_rank_busy_is_accepted);
    OPAL_TEST_ADD(s, a_frame_of_unknown_type_drops_the_peer_with_the_reason);
    OPAL_TEST_ADD(s, an_oversized_message_drops_the_peer_before_anything_is_read);
    OPAL_TEST_ADD(s, a_reply_to_no_request_drops_the_peer);
    OPAL_TEST_ADD(s, a_status_where_none_belongs_drops_the_peer);
    OPAL_TEST_ADD(s, a_handshake_from_another_job_is_refused_and_said_once);
    OPAL_TEST_ADD(s, a_silent_connection_is_closed_at_its_deadline_while_the_owner_sleeps);
    OPAL_TEST_ADD(s, a_peer_that_finalizes_without_a_connection_is_closed_not_failed);
    OPAL_TEST_ADD(s, forged_handles_are_refused_by_the_owner);
    OPAL_TEST_ADD(s, keepalive_and_user_timeout_are_set_on_every_connection);
    OPAL_TEST_ADD(s, keepalive_settings_outside_the_kernels_bounds_are_said_and_bounded);
    OPAL_TEST_ADD(s, each_address_family_carries_the_traffic_and_says_where_it_connected);
    OPAL_TEST_ADD(s, an_unknown_address_family_is_refused_by_name);
    OPAL_TEST_ADD(s, peers_of_different_families_fail_saying_so);
    return btl_suite_main(s);
}
