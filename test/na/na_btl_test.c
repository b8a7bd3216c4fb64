/*
 * na/btl inside an mcarun job: each case runs the rank program
 * (test/na/na_btl_rank) under the build tree's mcarun over btl self,sm
 * (np 2 and 4), and over self,ofi with tcp where ofi is built.
 */
#include "opal/opal_config.h"

#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test/orte/mcarun_test_support.h"
#include "test/support/opal_test.h"

#define MAX_ARGS 48

extern char **environ;

static void add(const char **argv, int *n, const char *arg)
{
    ck_assert_int_lt(*n, MAX_ARGS - 1);
    argv[(*n)++] = arg;
    argv[*n] = NULL;
}

/* Runs `mcarun -np np --mca btl btl [extra] na_btl_rank case`. */
static void run(mcarun_run_t *r, const char *btl, int np, const char *const *extra,
                const char *name)
{
    static char nps[16];
    snprintf(nps, sizeof(nps), "%d", np);
    const char *argv[MAX_ARGS];
    int n = 0;
    add(argv, &n, "-np");
    add(argv, &n, nps);
    add(argv, &n, "--oversubscribe");
    add(argv, &n, "--timeout");
    add(argv, &n, "55");
    add(argv, &n, "--mca");
    add(argv, &n, "btl");
    add(argv, &n, btl);
    for (int i = 0; NULL != extra && NULL != extra[i]; ++i) {
        add(argv, &n, extra[i]);
    }
    static char supp[PATH_MAX + 32];
    if (opal_test_under_valgrind()) {
        static const char *const vg[] = {"valgrind",
                                         "--quiet",
                                         "--error-exitcode=97",
                                         "--leak-check=full",
                                         "--errors-for-leak-kinds=definite,indirect",
                                         "--show-leak-kinds=definite,indirect",
                                         NULL};
        for (int i = 0; NULL != vg[i]; ++i) {
            add(argv, &n, vg[i]);
        }
        snprintf(supp, sizeof(supp), "--suppressions=%s/../contrib/valgrind.supp",
                 opal_test_srcdir());
        add(argv, &n, supp);
    }
    static char prog[PATH_MAX];
    snprintf(prog, sizeof(prog), "%s", mcarun_test_build_path("test/na/na_btl_rank"));
    add(argv, &n, prog);
    add(argv, &n, name);
    mcarun_test_mcarun(r, NULL, argv);
}

static void expect(const mcarun_run_t *r, bool cond, const char *what)
{
    if (!cond) {
        mcarun_test_dump(r);
        ck_abort_msg("%s", what);
    }
}

static bool has(const char *text, const char *needle)
{
    return NULL != text && NULL != strstr(text, needle);
}

static void expect_ok(const mcarun_run_t *r, int np, const char *name)
{
    char what[128];
    snprintf(what, sizeof(what), "%s: mcarun exited %d", name, r->status);
    expect(r, 0 == r->status, what);
    expect(r, !has(r->out, ": FAILED: "), "a rank reported a failure");
    for (int k = 0; k < np; ++k) {
        snprintf(what, sizeof(what), "rank %d: %s ok\n", k, name);
        expect(r, has(r->out, what), what);
    }
}

static void run_ok(const char *btl, int np, const char *const *extra, const char *name)
{
    mcarun_run_t r;
    run(&r, btl, np, extra, name);
    expect_ok(&r, np, name);
    mcarun_test_run_free(&r);
}

static bool ofi_built(void)
{
    return mcarun_test_component_built("btl", "ofi", NA_TEST_PLUGIN_DIRS);
}

static const char *const ofi_tcp[] = {"--mca", "ofi_provider_include", "tcp;ofi_rxm", NULL};

START_TEST(uris_name_the_job_and_rank_and_bad_ones_are_refused)
{
    run_ok("self,sm", 2, NULL, "uri");
}
END_TEST

START_TEST(unexpected_messages_from_three_senders_at_once_arrive_whole_and_in_order)
{
    run_ok("self,sm", 4, NULL, "unexpected");
}
END_TEST

START_TEST(expected_messages_match_source_and_tag_in_order_even_when_early)
{
    run_ok("self,sm", 4, NULL, "expected");
}
END_TEST

START_TEST(every_size_to_the_limits_arrives_and_over_limit_is_refused)
{
    run_ok("self,sm", 2, NULL, "sizes");
}
END_TEST

START_TEST(a_canceled_receive_completes_once_as_canceled)
{
    run_ok("self,sm", 2, NULL, "cancel");
}
END_TEST

START_TEST(handles_of_1_and_16_segments_serve_gets_and_puts_of_other_ranks)
{
    run_ok("self,sm", 4, NULL, "rma");
}
END_TEST

START_TEST(handles_and_messages_over_ofi_tcp)
{
    if (!ofi_built()) {
        return;
    }
    /* Under valgrind the sizes' thousands of round trips through rxm do
     * not fit mcarun_test's minute: the pairwise traffic of the rma case
     * stands for them there. */
    if (!opal_test_under_valgrind()) {
        run_ok("self,ofi", 2, ofi_tcp, "sizes");
    }
    run_ok("self,ofi", 2, ofi_tcp, "rma");
}
END_TEST

START_TEST(a_killed_peer_fails_what_waits_for_it_and_nothing_hangs)
{
    const char *extra[] = {"--enable-recovery", NULL};
    mcarun_run_t r;
    run(&r, "self,sm", 3, extra, "killed");
    expect(&r, 0 != r.status, "mcarun exited 0 although a rank was killed");
    expect(&r, !has(r.out, ": FAILED: "), "a rank reported a failure");
    /* mcarun removed what the dead rank left in /dev/shm. */
    const char *job = strstr(r.out, "rank 0: job ");
    expect(&r, NULL != job, "rank 0 did not say its job");
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "opal-mca.%lu.%lu.", (unsigned long) geteuid(),
             strtoul(job + strlen("rank 0: job "), NULL, 10));
    DIR *dir = opendir("/dev/shm");
    struct dirent *e;
    while (NULL != dir && NULL != (e = readdir(dir))) {
        expect(&r, 0 != strncmp(e->d_name, prefix, strlen(prefix)),
               "a file of the job was left in /dev/shm");
    }
    if (NULL != dir) {
        closedir(dir);
    }
    for (int k = 0; k < 2; ++k) {
        char what[128];
        snprintf(what, sizeof(what), "rank %d: survived the loss of rank 2", k);
        expect(&r, has(r.out, what), what);
        snprintf(what, sizeof(what), "rank %d: killed ok\n", k);
        expect(&r, has(r.out, what), what);
    }
    mcarun_test_run_free(&r);
}
END_TEST

START_TEST(a_peer_that_finalizes_fails_what_waits_for_it_after_its_last_message)
{
    run_ok("self,sm", 2, NULL, "closed");
    run_ok("self,tcp", 2, NULL, "closed");
    if (ofi_built()) {
        /* btl/ofi's goodbye at finalize. */
        run_ok("self,ofi", 2, ofi_tcp, "closed");
    }
}
END_TEST

static void unset_prefixed(const char *prefix)
{
    bool again = true;
    while (again) {
        again = false;
        for (char **env = environ; NULL != *env; ++env) {
            if (0 == strncmp(*env, prefix, strlen(prefix))) {
                char name[256];
                snprintf(name, sizeof(name), "%.*s", (int) strcspn(*env, "="), *env);
                unsetenv(name);
                again = true;
                break;
            }
        }
    }
}

int main(void)
{
    unset_prefixed("PMIX_");
    unset_prefixed("OMPI_");
    unset_prefixed("OPAL_ORTE_");
    setenv("OPAL_MCA_mca_base_component_path", NA_TEST_PLUGIN_DIRS, 0);
    setenv("NA_TEST_DEADLINE", "45", 0);
    Suite *s = suite_create("na_btl");
    OPAL_TEST_ADD(s, uris_name_the_job_and_rank_and_bad_ones_are_refused);
    OPAL_TEST_ADD(s, unexpected_messages_from_three_senders_at_once_arrive_whole_and_in_order);
    OPAL_TEST_ADD(s, expected_messages_match_source_and_tag_in_order_even_when_early);
    OPAL_TEST_ADD(s, every_size_to_the_limits_arrives_and_over_limit_is_refused);
    OPAL_TEST_ADD(s, a_canceled_receive_completes_once_as_canceled);
    OPAL_TEST_ADD(s, handles_of_1_and_16_segments_serve_gets_and_puts_of_other_ranks);
    OPAL_TEST_ADD(s, handles_and_messages_over_ofi_tcp);
    OPAL_TEST_ADD(s, a_killed_peer_fails_what_waits_for_it_and_nothing_hangs);
    OPAL_TEST_ADD(s, a_peer_that_finalizes_fails_what_waits_for_it_after_its_last_message);
    return opal_test_run(s);
}
