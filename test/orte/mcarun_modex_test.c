/*
 * The launcher socket seen from the ranks: modex integrity through fences
 * with and without collection, gets that wait for a commit or time out,
 * fences that fail when a rank leaves, a rank that drops its connection,
 * and garbage written to the socket by strangers and by ranks.
 */
#include "opal/opal_config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/util/opal_error.h"
#include "orte/util/orte_launcher_client.h"
#include "orte/util/orte_launcher_env.h"
#include "test/orte/mcarun_test_support.h"
#include "test/support/opal_test.h"

static char modex_prog[PATH_MAX];
static char garbage_prog[PATH_MAX];
static char rank_prog[PATH_MAX];

#define RUN(run, ...)                                                                              \
    do {                                                                                           \
        const char *const args_[] = {__VA_ARGS__, NULL};                                           \
        mcarun_test_mcarun((run), NULL, args_);                                                    \
    } while (0)

#define EXPECT(run, cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            mcarun_test_dump(run);                                                                 \
            ck_abort_msg("expected: %s", #cond);                                                   \
        }                                                                                          \
    } while (0)

static bool has(const char *text, const char *needle)
{
    return NULL != strstr(text, needle);
}

/* Runs the modex rank in mode for np = 2..8 and checks every rank said ok. */
static void modex_matrix(const char *mode)
{
    for (int np = 2; np <= 8; ++np) {
        if (opal_test_under_valgrind() && 2 != np && 4 != np) {
            continue;
        }
        char nps[8], seed[32], ok[64];
        snprintf(nps, sizeof(nps), "%d", np);
        /* A different seed every run: keys, sizes and bytes vary. */
        snprintf(seed, sizeof(seed), "%ld", (long) getpid() * 131 + np);
        /* Under valgrind the ranks run under it too, so that the client
         * library's memory is checked as well as mcarun's. */
        const char *args[20] = {"-np", nps, "--oversubscribe", "--timeout", "50"};
        int n = 5;
        if (opal_test_under_valgrind()) {
            static const char *const vg[] = {"valgrind",
                                             "--quiet",
                                             "--error-exitcode=97",
                                             "--leak-check=full",
                                             "--errors-for-leak-kinds=definite,indirect",
                                             "--show-leak-kinds=definite,indirect",
                                             NULL};
            for (int i = 0; NULL != vg[i]; ++i) {
                args[n++] = vg[i];
            }
        }
        args[n++] = modex_prog;
        args[n++] = mode;
        args[n++] = seed;
        args[n] = NULL;
        mcarun_run_t run;
        mcarun_test_mcarun(&run, NULL, args);
        EXPECT(&run, 0 == run.status);
        for (int r = 0; r < np; ++r) {
            snprintf(ok, sizeof(ok), "rank %d ok: ", r);
            EXPECT(&run, has(run.out, ok));
        }
        EXPECT(&run, !has(run.out, "FAILED"));
        mcarun_test_run_free(&run);
    }
}

START_TEST(fence_with_collect_delivers_every_pair_np_2_to_8)
{
    modex_matrix("collect");
}
END_TEST

START_TEST(fence_without_collect_then_get_np_2_to_8)
{
    modex_matrix("direct");
}
END_TEST

START_TEST(get_waits_for_the_peers_commit)
{
    modex_matrix("early");
}
END_TEST

START_TEST(get_timeout_names_the_peer_and_the_key)
{
    mcarun_run_t run;
    RUN(&run, "-np", "2", "--timeout", "50", modex_prog, "timeout", "1");
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, has(run.out, "rank 0 ok") && has(run.out, "rank 1 ok"));
    EXPECT(&run, has(run.err, "get of key 'never-put' from rank 1 timed out"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(fence_fails_when_a_rank_finalizes_without_it)
{
    mcarun_run_t run;
    RUN(&run, "-np", "2", "--timeout", "50", rank_prog, "fence-fail");
    EXPECT(&run, 3 == run.status);
    EXPECT(&run, has(run.out, "rank 0 fence: OPAL_ERR_PEER_FAILED"));
    EXPECT(&run, has(run.err, "rank 1 (pid ") && has(run.err, "before entering the fence"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(rank_disconnecting_before_a_fence_stops_the_job)
{
    mcarun_run_t run;
    RUN(&run, "-np", "3", "--oversubscribe", "--timeout", "50", rank_prog, "disconnect", "1");
    EXPECT(&run, 1 == run.status);
    const char *line = strstr(run.out, "rank 1 pid ");
    EXPECT(&run, NULL != line);
    char want[128];
    snprintf(want, sizeof(want),
             "mcarun: rank 1 (pid %ld) closed its connection to mcarun without calling "
             "orte_finalize\n",
             strtol(line + strlen("rank 1 pid "), NULL, 10));
    EXPECT(&run, has(run.err, want));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(garbage_from_strangers_is_refused_and_the_job_goes_on)
{
    static const char *const kinds[] = {"random",        "short-header",      "truncated-payload",
                                        "oversized",     "bad-magic",         "bad-version",
                                        "unknown-type",  "wrong-direction",   "not-hello-first",
                                        "wrong-jobid",   "rank-out-of-range", "rank-taken",
                                        "trailing-bytes"};
    mcarun_run_t run;
    RUN(&run, "-np", "2", "--timeout", "50", garbage_prog, "strangers");
    EXPECT(&run, 0 == run.status);
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); ++i) {
        char line[64];
        snprintf(line, sizeof(line), "%s: refused\n", kinds[i]);
        EXPECT(&run, has(run.out, line));
    }
    EXPECT(&run, has(run.out, "rank 0 fence: OPAL_SUCCESS"));
    EXPECT(&run, has(run.out, "rank 1 fence: OPAL_SUCCESS"));
    /* One line per refused connection, the stalled one at its end, and
     * (as root) one from another user. */
    int refusals = 14;
    if (has(run.out, "foreign-uid: refused\n")) {
        ++refusals;
        char line[96];
        snprintf(line, sizeof(line), "from uid 65534 (pid ");
        EXPECT(&run, has(run.err, line));
        snprintf(line, sizeof(line), "only uid %lu may connect", (unsigned long) geteuid());
        EXPECT(&run, has(run.err, line));
    } else {
        EXPECT(&run, 0 != geteuid() && has(run.out, "foreign-uid: skipped"));
    }
    EXPECT(&run,
           refusals == mcarun_test_count(run.err, "mcarun: refused a connection to the launcher"));
    EXPECT(&run, has(run.err, "bad magic") && has(run.err, "launcher protocol version 99"));
    EXPECT(&run, has(run.err, "unknown message type 99"));
    EXPECT(&run, has(run.err, "HELLO message of 4294967280 bytes"));
    EXPECT(&run, has(run.err, "rank 0 is already connected"));
    mcarun_test_run_free(&run);
}
END_TEST

/* A rank that sends kind of garbage after its HELLO ends the job. */
static void rank_garbage(const char *kind, const char *why)
{
    mcarun_run_t run;
    RUN(&run, "-np", "2", "--timeout", "50", garbage_prog, "rank", kind);
    EXPECT(&run, 1 == run.status);
    EXPECT(&run, has(run.err, "mcarun: rank 0 (pid ") &&
                     has(run.err, ") sent a bad message on the launcher socket: "));
    EXPECT(&run, has(run.err, why));
    mcarun_test_run_free(&run);
}

START_TEST(garbage_from_a_rank_ends_the_job_with_a_message)
{
    rank_garbage("scope", "PUT message with scope 9");
    rank_garbage("random", "bad magic");
    rank_garbage("oversized", "PUT message of 4294967280 bytes");
    rank_garbage("truncated", "the connection ended inside a message");
}
END_TEST

START_TEST(client_outside_mcarun_is_not_found)
{
    orte_launcher_job_info_t info;
    unsetenv(ORTE_LAUNCHER_ENV_SOCKET);
    ck_assert_int_eq(0, orte_launcher_client_detected());
    ck_assert_int_eq(OPAL_ERR_NOT_FOUND, orte_launcher_client_connect(&info));
    ck_assert_int_eq(OPAL_ERR_NOT_INITIALIZED, orte_launcher_client_fence(1));
    ck_assert_int_eq(OPAL_ERR_NOT_INITIALIZED, orte_launcher_client_put("k", "v", 1, 3));
    ck_assert_int_eq(OPAL_ERR_NOT_INITIALIZED, orte_launcher_client_finalize());

    setenv(ORTE_LAUNCHER_ENV_SOCKET, "/nonexistent/launcher.sock", 1);
    setenv(ORTE_LAUNCHER_ENV_JOBID, "12", 1);
    setenv(ORTE_LAUNCHER_ENV_RANK, "0", 1);
    ck_assert_int_eq(1, orte_launcher_client_detected());
    ck_assert_int_eq(OPAL_ERR_UNREACH, orte_launcher_client_connect(&info));
    setenv(ORTE_LAUNCHER_ENV_RANK, "zero", 1);
    ck_assert_int_eq(OPAL_ERR_BAD_PARAM, orte_launcher_client_connect(&info));
    unsetenv(ORTE_LAUNCHER_ENV_SOCKET);
    unsetenv(ORTE_LAUNCHER_ENV_JOBID);
    unsetenv(ORTE_LAUNCHER_ENV_RANK);
}
END_TEST

int main(void)
{
    snprintf(modex_prog, sizeof(modex_prog), "%s",
             mcarun_test_build_path("test/orte/orte_modex_rank"));
    snprintf(garbage_prog, sizeof(garbage_prog), "%s",
             mcarun_test_build_path("test/orte/orte_garbage_rank"));
    snprintf(rank_prog, sizeof(rank_prog), "%s",
             mcarun_test_build_path("test/orte/orte_test_rank"));
    Suite *s = suite_create("mcarun_modex");
    OPAL_TEST_ADD(s, fence_with_collect_delivers_every_pair_np_2_to_8);
    OPAL_TEST_ADD(s, fence_without_collect_then_get_np_2_to_8);
    OPAL_TEST_ADD(s, get_waits_for_the_peers_commit);
    OPAL_TEST_ADD(s, get_timeout_names_the_peer_and_the_key);
    OPAL_TEST_ADD(s, fence_fails_when_a_rank_finalizes_without_it);
    OPAL_TEST_ADD(s, rank_disconnecting_before_a_fence_stops_the_job);
    OPAL_TEST_ADD(s, garbage_from_strangers_is_refused_and_the_job_goes_on);
    OPAL_TEST_ADD(s, garbage_from_a_rank_ends_the_job_with_a_message);
    OPAL_TEST_ADD(s, client_outside_mcarun_is_not_found);
    return opal_test_run(s);
}
