/*
 * btl/ofi's own behaviours through real jobs and opal_info:
 *   - why it does not run (no such provider, the provider excluded),
 *     shown by opal_info --selected, and told to the peers, which then
 *     say why they cannot reach the process;
 *   - a peer that publishes a malformed address is an error naming it;
 *   - opal_progress_wait sleeps until ofi traffic wakes it (the CQ's wait
 *     fd with tcp;ofi_rxm, the polling timer with shm);
 *   - without RDMA (btl_ofi_flags) the multiplexer uses it for sends only;
 *   - receives into multi-receive buffers on tcp;ofi_rxm (btl_ofi_multi_recv
 *     1: not its default since several senders' rendezvous messages can
 *     overlap in one buffer, but the pairwise cases work);
 *   - local registration as under FI_MR_LOCAL (btl_ofi_force_mr_local);
 *   - the ofi_* variables: known to opal_info, never reported as unknown.
 * The provider-specific cases run only where libfabric has the provider
 * (they say so otherwise).
 */
#include "opal/opal_config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include "test/btl/btl_test_suite.h"

static bool provider_here(const char *provider)
{
    struct fi_info *hints = fi_allocinfo(), *info = NULL;
    ck_assert_ptr_nonnull(hints);
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG;
    hints->fabric_attr->prov_name = strdup(provider);
    int rc =
        fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), NULL, NULL, 0, hints, &info);
    fi_freeinfo(hints);
    if (0 != rc) {
        printf("this case needs the %s provider, which libfabric does not offer here (%s)\n",
               provider, fi_strerror(-rc));
        return false;
    }
    fi_freeinfo(info);
    return true;
}

/* Runs `mcarun ... btl_ofi_rank args` (btl_suite_run runs the generic
 * rank program; this is the same with btl/ofi's own). */
static void run_ofi_rank(mcarun_run_t *run, const char *btl, const char *const *mca, int np,
                         const char *const *args)
{
    char prog[PATH_MAX];
    snprintf(prog, sizeof(prog), "%s", mcarun_test_build_path("test/btl/btl_ofi_rank"));
    char nps[16];
    snprintf(nps, sizeof(nps), "%d", np);
    const char *argv[64];
    int n = 0;
    const char *fixed[] = {"-np", nps, "--oversubscribe", "--timeout", "55", "--mca", "btl", btl};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); ++i) {
        argv[n++] = fixed[i];
    }
    for (int i = 0; NULL != mca && NULL != mca[i]; ++i) {
        argv[n++] = mca[i];
    }
    if (opal_test_under_valgrind()) {
        static char supp[PATH_MAX + 32];
        snprintf(supp, sizeof(supp), "--suppressions=%s/../contrib/valgrind.supp",
                 opal_test_srcdir());
        const char *vg[] = {"valgrind",
                            "--quiet",
                            "--error-exitcode=97",
                            "--leak-check=full",
                            "--errors-for-leak-kinds=definite,indirect",
                            "--show-leak-kinds=definite,indirect",
                            supp};
        for (size_t i = 0; i < sizeof(vg) / sizeof(vg[0]); ++i) {
            argv[n++] = vg[i];
        }
    }
    argv[n++] = prog;
    for (int i = 0; NULL != args[i] && n < 63; ++i) {
        argv[n++] = args[i];
    }
    argv[n] = NULL;
    mcarun_test_mcarun(run, NULL, argv);
}

static void expect_ok(const mcarun_run_t *run, int np, const char *case_name)
{
    bool ok = 0 == run->status && !btl_suite_has(run->out, "FAILED");
    for (int r = 0; ok && r < np; ++r) {
        char line[64];
        snprintf(line, sizeof(line), "rank %d: %s ok\n", r, case_name);
        ok = btl_suite_has(run->out, line);
    }
    if (!ok) {
        mcarun_test_dump(run);
        ck_abort_msg("%s did not pass (mcarun exited %d)", case_name, run->status);
    }
}

/* Runs the build tree's opal_info with args (the environment as the suite
 * set it, plus env when not NULL: "NAME=value"); returns its output. */
static char *opal_info(const char *env, const char *args)
{
    char command[4096];
    snprintf(command, sizeof(command), "%s %s %s 2>&1", NULL != env ? env : "",
             mcarun_test_build_path("tools/opal_info/opal_info"), args);
    FILE *p = popen(command, "r");
    ck_assert_ptr_nonnull(p);
    size_t len = 0, cap = 1 << 16;
    char *out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    size_t n;
    while ((n = fread(out + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len < 2) {
            cap *= 2;
            out = realloc(out, cap);
            ck_assert_ptr_nonnull(out);
        }
    }
    out[len] = '\0';
    ck_assert_int_eq(pclose(p), 0);
    return out;
}

/* ------------------------------------------------------- declining */

START_TEST(declines_naming_a_provider_that_is_not_here)
{
    char *out = opal_info(NULL, "--selected --mca btl ofi --mca ofi_provider_include nosuchprov");
    ck_assert_msg(btl_suite_has(out, "not selected: ofi (query): no libfabric provider fits (not "
                                     "in ofi_provider_include=nosuchprov ("),
                  "opal_info does not say why ofi did not run:\n%s", out);
    free(out);
}
END_TEST

START_TEST(declines_naming_the_exclude_list)
{
    if (!provider_here("tcp")) {
        return;
    }
    char *out = opal_info(NULL, "--selected --mca btl ofi --mca ofi_provider_include tcp "
                                "--mca ofi_provider_exclude ofi_rxm");
    ck_assert_msg(btl_suite_has(out, "excluded by ofi_provider_exclude=ofi_rxm (tcp;ofi_rxm"),
                  "opal_info does not say the provider was excluded:\n%s", out);
    free(out);
}
END_TEST

START_TEST(runs_without_a_job_for_opal_info)
{
    char *out = opal_info(NULL, "--selected --mca btl ofi");
    /* Selected, naming the provider and domain it chose. */
    ck_assert_msg(btl_suite_has(out, "MCA btl: selected ofi ("),
                  "opal_info does not show ofi selected:\n%s", out);
    free(out);
}
END_TEST

START_TEST(peers_say_why_a_declined_process_is_unreachable)
{
    const char *args[] = {"declined", NULL};
    mcarun_run_t run;
    run_ofi_rank(&run, "self,ofi", NULL, 2, args);
    expect_ok(&run, 2, "declined");
    const char *reasons[] = {"ofi: rank 1's btl/ofi did not run: no libfabric provider fits (not "
                             "in ofi_provider_include=nosuchprovider",
                             NULL};
    for (int i = 0; NULL != reasons[i]; ++i) {
        if (!btl_suite_has(run.err, reasons[i]) || !btl_suite_has(run.err, "  rank 1 (on ")) {
            mcarun_test_dump(&run);
            ck_abort_msg("rank 0 does not say why rank 1 is unreachable");
        }
    }
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(malformed_peer_address_is_an_error_naming_the_peer)
{
    const char *args[] = {"malformed", NULL};
    mcarun_run_t run;
    run_ofi_rank(&run, "self,ofi", NULL, 2, args);
    expect_ok(&run, 2, "malformed");
    if (!btl_suite_has(run.err, "rank 1 published a malformed address (modex key btl.ofi.addr): "
                                "header claims a 200-byte address but 6 bytes follow") ||
        !btl_suite_has(run.err, "ofi: rank 1 published a malformed address")) {
        mcarun_test_dump(&run);
        ck_abort_msg("the malformed address was not reported naming rank 1");
    }
    mcarun_test_run_free(&run);
}
END_TEST

/* ------------------------------------------------------------ waiting */

static void wait_case(const char *provider)
{
    if (!provider_here(provider)) {
        return;
    }
    /* No liveness timer: with a wait fd only ofi's own fd can wake the
     * sleeper (without one, the polling timer is what is tested). */
    const char *mca[] = {
        "--mca", "ofi_provider_include", provider, "--mca", "btl_ofi_liveness_interval", "0", NULL};
    const char *args[] = {"wait", NULL};
    mcarun_run_t run;
    run_ofi_rank(&run, "self,ofi", mca, 2, args);
    expect_ok(&run, 2, "wait");
    ck_assert(btl_suite_has(run.out, "rank 0: woken after"));
    mcarun_test_run_free(&run);
}

START_TEST(sleeper_is_woken_by_the_wait_fd)
{
    wait_case("tcp;ofi_rxm");
}
END_TEST

START_TEST(sleeper_without_a_wait_fd_is_woken_by_the_polling_timer)
{
    wait_case("shm");
}
END_TEST

/* ------------------------------------------------------------ goodbye */

/* Rank 1 sends messages (count) and finalizes while rank 0 receives: its
 * goodbye comes after them, so rank 0 hears PEER_CLOSED once all came,
 * and rank 1's exit, which rank 0's liveness check sees, is no failure.
 * With no message there is no goodbye (none is said to a peer never
 * spoken with): rank 0's liveness check sees rank 1 gone and the runtime
 * says it finalized, which is PEER_CLOSED too. */
static void closed_case(const char *provider, const char *count)
{
    if (!provider_here(provider)) {
        return;
    }
    const char *mca[] = {"--mca", "ofi_provider_include", provider, NULL};
    const char *args[] = {"closed", count, NULL};
    mcarun_run_t run;
    run_ofi_rank(&run, "self,ofi", mca, 2, args);
    expect_ok(&run, 2, "closed");
    char line[160];
    snprintf(line, sizeof(line), "rank 0: PEER_CLOSED: btl/ofi (%s): rank 1 ", provider);
    ck_assert_msg(btl_suite_has(run.out, line), "no goodbye heard:\n%s", run.out);
    snprintf(line, sizeof(line),
             "rank 0: %s messages, then PEER_CLOSED once, and no failure at its exit; a send "
             "after: ",
             count);
    ck_assert_msg(btl_suite_has(run.out, line), "%s", run.out);
    mcarun_test_run_free(&run);
}

START_TEST(finalized_peer_is_closed_not_failed_over_tcp)
{
    closed_case("tcp;ofi_rxm", "30");
}
END_TEST

START_TEST(finalized_peer_is_closed_not_failed_over_shm)
{
    closed_case("shm", "30");
}
END_TEST

START_TEST(finalized_peer_never_spoken_with_is_closed_not_failed_over_tcp)
{
    closed_case("tcp;ofi_rxm", "0");
}
END_TEST

START_TEST(finalized_peer_never_spoken_with_is_closed_not_failed_over_shm)
{
    closed_case("shm", "0");
}
END_TEST

/* ------------------------------------------------------ capabilities */

START_TEST(without_rdma_flags_the_multiplexer_sends_only)
{
    const char *mca[] = {"--mca", "btl_ofi_flags", "send,sendi", NULL};
    const char *args[] = {"nordma", NULL};
    mcarun_run_t run;
    run_ofi_rank(&run, "self,ofi", mca, 2, args);
    expect_ok(&run, 2, "nordma");
    ck_assert(btl_suite_has(run.out, "rank 0: rdma modules: 0, send modules: 1"));
    ck_assert(btl_suite_has(run.out, "rank 1: rdma modules: 0, send modules: 1"));
    /* btl_dump after the 21 round trips: every message counted each way,
     * nothing waiting or owed. */
    for (int r = 0; r < 2; ++r) {
        char line[256];
        snprintf(line, sizeof(line),
                 "rank %d: toward rank %d: ofi: added; sent 21, next expected 21, held out of "
                 "order 0; ",
                 r, 1 - r);
        ck_assert_msg(btl_suite_has(run.out, line), "no \"%s\" in:\n%s", line, run.out);
    }
    mcarun_test_run_free(&run);
}
END_TEST

/* The generic cases over multi-receive buffers (every provider's suite
 * but udp;ofi_rxd's runs single-message receives by default). */
static void tcp_case_with(const char *var, const char *value, const char *name)
{
    if (!provider_here("tcp")) {
        return;
    }
    const char *mca[] = {"--mca", "ofi_provider_include", "tcp", "--mca", var, value, NULL};
    const char *args[] = {name, NULL};
    mcarun_run_t run;
    btl_suite_run(&run, "self,ofi", mca, NULL, 2, args);
    btl_suite_expect_ok(&run, 2, name, "ofi");
    mcarun_test_run_free(&run);
}

static void multi_receive_case(const char *name)
{
    tcp_case_with("btl_ofi_multi_recv", "1", name);
}

START_TEST(sizes_over_multi_receive_buffers)
{
    multi_receive_case("sizes");
}
END_TEST

START_TEST(order_over_multi_receive_buffers)
{
    multi_receive_case("order");
}
END_TEST

/* Local registration (FI_MR_LOCAL) as if the provider demanded it: send
 * and receive buffers registered, descriptors passed, RDMA only with
 * local handles, no sends from the caller's memory in place. */
static void mr_local_case(const char *name)
{
    tcp_case_with("btl_ofi_force_mr_local", "true", name);
}

START_TEST(sizes_with_local_registration)
{
    mr_local_case("sizes");
}
END_TEST

START_TEST(rdma_with_local_registration)
{
    mr_local_case("rdma");
}
END_TEST

/* ----------------------------------------------------------- variables */

START_TEST(ofi_variables_are_shown_by_opal_info)
{
    char *out = opal_info(NULL, "--param ofi all --level 9");
    ck_assert_msg(btl_suite_has(out, "MCA ofi: parameter \"ofi_provider_include\"") &&
                      btl_suite_has(out, "MCA ofi: parameter \"ofi_provider_exclude\"") &&
                      btl_suite_has(out, "MCA ofi: parameter \"ofi_domain_include\"") &&
                      btl_suite_has(out, "MCA ofi: parameter \"ofi_if_include\""),
                  "opal_info --param ofi all does not list the ofi_* variables:\n%s", out);
    free(out);
}
END_TEST

START_TEST(ofi_variable_is_not_a_typo_without_a_loaded_user)
{
    /* Only ess is registered: btl/ofi, which registers ofi_*, is not. */
    char *out = opal_info(NULL, "--param ess all --mca ofi_provider_include tcp");
    ck_assert_msg(!btl_suite_has(out, "no such MCA variable"), "reported as unknown:\n%s", out);
    free(out);
    out = opal_info("OPAL_MCA_ofi_provider_include=tcp", "--param btl ofi");
    ck_assert_msg(!btl_suite_has(out, "no such MCA variable"), "reported as unknown:\n%s", out);
    free(out);
    out = opal_info(NULL, "--param btl ofi --mca ofi_provider_inclde tcp");
    ck_assert_msg(btl_suite_has(out, "ofi_provider_inclde (command line): no such MCA variable; "
                                     "did you mean ofi_provider_include?"),
                  "a misspelt ofi variable is not reported:\n%s", out);
    free(out);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("btl_ofi");
    OPAL_TEST_ADD(s, declines_naming_a_provider_that_is_not_here);
    OPAL_TEST_ADD(s, declines_naming_the_exclude_list);
    OPAL_TEST_ADD(s, runs_without_a_job_for_opal_info);
    OPAL_TEST_ADD(s, peers_say_why_a_declined_process_is_unreachable);
    OPAL_TEST_ADD(s, malformed_peer_address_is_an_error_naming_the_peer);
    OPAL_TEST_ADD(s, sleeper_is_woken_by_the_wait_fd);
    OPAL_TEST_ADD(s, sleeper_without_a_wait_fd_is_woken_by_the_polling_timer);
    OPAL_TEST_ADD(s, finalized_peer_is_closed_not_failed_over_tcp);
    OPAL_TEST_ADD(s, finalized_peer_is_closed_not_failed_over_shm);
    OPAL_TEST_ADD(s, finalized_peer_never_spoken_with_is_closed_not_failed_over_tcp);
    OPAL_TEST_ADD(s, finalized_peer_never_spoken_with_is_closed_not_failed_over_shm);
    OPAL_TEST_ADD(s, without_rdma_flags_the_multiplexer_sends_only);
    OPAL_TEST_ADD(s, sizes_over_multi_receive_buffers);
    OPAL_TEST_ADD(s, order_over_multi_receive_buffers);
    OPAL_TEST_ADD(s, sizes_with_local_registration);
    OPAL_TEST_ADD(s, rdma_with_local_registration);
    OPAL_TEST_ADD(s, ofi_variables_are_shown_by_opal_info);
    OPAL_TEST_ADD(s, ofi_variable_is_not_a_typo_without_a_loaded_user);
    return btl_suite_main(s);
}
