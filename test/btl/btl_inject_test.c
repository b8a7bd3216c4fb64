/*
 * Faults injected by configuration (opal/util/opal_fault.h) into jobs of
 * btl_test_rank over btl/sm under mcarun: each one ends in an error the
 * ranks report and mcarun passes on, within a bounded time (no hang). In
 * sanitizer builds the ranks' LeakSanitizer checks that nothing leaks on
 * those error paths. Skipped (77) in builds without fault sites (configure
 * --enable-fault-injection, or --enable-debug).
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test/orte/orte_test_support.h"
#include "test/support/opal_test.h"

#define RANK_PROGRAM ORTE_TEST_BUILDDIR "/test/btl/btl_test_rank"

/* Runs np ranks of case_name over btl (a selection and its options) with
 * the fault configuration text. */
static void run_btl_with_faults(orte_test_result_t *run, int np, const char *btl,
                                const char *faults, const char *case_name)
{
    char path[] = "/tmp/opal_fault_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, faults, strlen(faults)), (ssize_t) strlen(faults));
    close(fd);
    ck_assert(orte_test_run(run,
                            "BTL_TEST_DEADLINE=15 %s -np %d --oversubscribe --timeout 90 "
                            "--mca btl %s --mca opal_fault_config %s %s %s",
                            orte_test_mcarun(), np, btl, path, RANK_PROGRAM, case_name));
    unlink(path);
}

static void run_with_faults(orte_test_result_t *run, int np, const char *faults,
                            const char *case_name)
{
    run_btl_with_faults(run, np, "self,sm", faults, case_name);
}

#define OFI_TCP "self,ofi --mca ofi_provider_include 'tcp;ofi_rxm'"

static void expect(const orte_test_result_t *run, const char *text)
{
    ck_assert_msg(NULL != strstr(run->out, text) || NULL != strstr(run->err, text),
                  "no '%s' in the job's output (status %d):\n%.2000s\n%.2000s", text, run->status,
                  run->out, run->err);
}

START_TEST(failing_sends_are_reported_by_the_sender)
{
    orte_test_result_t run;
    run_with_faults(&run, 2, "btl_send\nbtl_sendi\n", "sizes");
    ck_assert_int_ne(run.status, 0);
    expect(&run, "FAILED: send of");
    expect(&run, "Out of resource");
    orte_test_result_free(&run);
}
END_TEST

START_TEST(failing_puts_and_gets_are_reported)
{
    orte_test_result_t run;
    run_with_faults(&run, 2, "btl_put\nbtl_get\n", "rdma");
    ck_assert_int_ne(run.status, 0);
    expect(&run, "FAILED: ");
    expect(&run, "Out of resource");
    orte_test_result_free(&run);
}
END_TEST

START_TEST(a_corrupt_message_fails_the_peer_naming_it)
{
    orte_test_result_t run;
    run_with_faults(&run, 2, "sm_recv_corrupt interval=5 max=1\n", "sizes");
    ck_assert_int_ne(run.status, 0);
    expect(&run, "fast box holds a message of unknown type");
    orte_test_result_free(&run);
}
END_TEST

START_TEST(a_dropped_message_is_reported_not_waited_for_forever)
{
    /* The receiver sees a gap in the sequence, or times out waiting for
     * the last message: either way a rank says so and the job ends. */
    orte_test_result_t run;
    run_with_faults(&run, 2, "sm_recv_drop interval=3 max=1\n", "order");
    ck_assert_int_ne(run.status, 0);
    expect(&run, "FAILED: ");
    orte_test_result_free(&run);
}
END_TEST

START_TEST(a_message_ofi_drops_is_reported_not_waited_for_forever)
{
    orte_test_result_t run;
    run_btl_with_faults(&run, 2, OFI_TCP, "ofi_recv_drop interval=3 max=1\n", "order");
    ck_assert_int_ne(run.status, 0);
    expect(&run, "FAILED: ");
    orte_test_result_free(&run);
}
END_TEST

START_TEST(a_message_too_long_for_ofi_is_reported_naming_the_peer)
{
    orte_test_result_t run;
    run_btl_with_faults(&run, 2, OFI_TCP, "ofi_recv_corrupt interval=3 max=1\n", "order");
    ck_assert_int_ne(run.status, 0);
    expect(&run, "more than the");
    expect(&run, "allowed: dropped");
    orte_test_result_free(&run);
}
END_TEST

START_TEST(a_failed_fence_stops_the_job)
{
    orte_test_result_t run;
    run_with_faults(&run, 2, "fence max=1\n", "sizes");
    ck_assert_int_ne(run.status, 0);
    expect(&run, "Timed out");
    orte_test_result_free(&run);
}
END_TEST

START_TEST(a_rank_killed_by_a_fault_is_named_by_mcarun)
{
    orte_test_result_t run;
    run_with_faults(&run, 2, "process_exit interval=2000 arg=9 max=1\n", "sizes");
    ck_assert_int_ne(run.status, 0);
    expect(&run, "exited on signal 9");
    orte_test_result_free(&run);
}
END_TEST

START_TEST(a_bad_fault_configuration_stops_the_rank_naming_the_line)
{
    orte_test_result_t run;
    run_with_faults(&run, 1, "fence\nno_such_site max=1\n", "self");
    ck_assert_int_ne(run.status, 0);
    expect(&run, ":2: unknown site 'no_such_site'");
    orte_test_result_free(&run);
}
END_TEST

static Suite *inject_suite(void)
{
    Suite *s = suite_create("btl_inject");
    OPAL_TEST_ADD(s, failing_sends_are_reported_by_the_sender);
    OPAL_TEST_ADD(s, failing_puts_and_gets_are_reported);
    OPAL_TEST_ADD(s, a_corrupt_message_fails_the_peer_naming_it);
    OPAL_TEST_ADD(s, a_dropped_message_is_reported_not_waited_for_forever);
#if OPAL_HAVE_OFI
    OPAL_TEST_ADD(s, a_message_ofi_drops_is_reported_not_waited_for_forever);
    OPAL_TEST_ADD(s, a_message_too_long_for_ofi_is_reported_naming_the_peer);
#endif
    OPAL_TEST_ADD(s, a_failed_fence_stops_the_job);
    OPAL_TEST_ADD(s, a_rank_killed_by_a_fault_is_named_by_mcarun);
    OPAL_TEST_ADD(s, a_bad_fault_configuration_stops_the_rank_naming_the_line);
    return s;
}

int main(void)
{
#if !(defined(OPAL_ENABLE_FAULT_INJECTION) && OPAL_ENABLE_FAULT_INJECTION)
    if (true) {
        printf("SKIP: this build has no fault sites (configure with --enable-fault-injection "
               "or --enable-debug)\n");
        return 77;
    }
#endif
    orte_test_forget_launchers();
    orte_test_use_build_tree_plugins();
    return opal_test_run(inject_suite());
}
