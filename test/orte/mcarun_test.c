/*
 * mcarun as a user sees it: launching, environment and arguments, output
 * forwarding, stdin, exit statuses, failures, timeouts, signals,
 * oversubscription, binding and the session directory. Each test runs
 * mcarun from the build tree with orte_test_rank as the program.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test/orte/mcarun_test_support.h"
#include "test/support/opal_test.h"

static char rank_prog[PATH_MAX];

#define RUN(run, input, ...)                                                                       \
    do {                                                                                           \
        const char *const args_[] = {__VA_ARGS__, NULL};                                           \
        mcarun_test_mcarun((run), (input), args_);                                                 \
    } while (0)

/* Asserts, printing mcarun's output first when it fails. */
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

START_TEST(launch_matrix_np_1_to_8)
{
    for (int np = 1; np <= 8; ++np) {
        if (opal_test_under_valgrind() && 1 != np && 8 != np) {
            continue;
        }
        char nps[8], line[64];
        snprintf(nps, sizeof(nps), "%d", np);
        mcarun_run_t run;
        RUN(&run, NULL, "-np", nps, "--oversubscribe", rank_prog, "ident");
        EXPECT(&run, 0 == run.status);
        for (int r = 0; r < np; ++r) {
            snprintf(line, sizeof(line), "rank %d of %d pid ", r, np);
            EXPECT(&run, 1 == mcarun_test_count(run.out, line));
        }
        EXPECT(&run, np == mcarun_test_count(run.out, "\n"));
        mcarun_test_run_free(&run);
    }
}
END_TEST

START_TEST(programs_that_never_connect_just_run)
{
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "2", "hostname");
    char host[256];
    gethostname(host, sizeof(host));
    strcat(host, "\n");
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, 2 == mcarun_test_count(run.out, host));
    EXPECT(&run, 0 == run.err_len);
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(ranks_get_the_launcher_environment)
{
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "2", rank_prog, "env", "OPAL_ORTE_RANK", "OPAL_ORTE_SIZE",
        "OPAL_ORTE_LOCAL_RANK", "OPAL_ORTE_LOCAL_SIZE", "OPAL_ORTE_NODE_ID", "OPAL_ORTE_JOBID",
        "OPAL_ORTE_SESSION_DIR", "OPAL_ORTE_SOCKET", "OPAL_ORTE_SHM_PREFIX", "OPAL_ORTE_BIND_TO");
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, has(run.out, "OPAL_ORTE_RANK=0\n") && has(run.out, "OPAL_ORTE_RANK=1\n"));
    EXPECT(&run, has(run.out, "OPAL_ORTE_LOCAL_RANK=0\n"));
    EXPECT(&run, has(run.out, "OPAL_ORTE_LOCAL_RANK=1\n"));
    EXPECT(&run, 2 == mcarun_test_count(run.out, "OPAL_ORTE_SIZE=2\n"));
    EXPECT(&run, 2 == mcarun_test_count(run.out, "OPAL_ORTE_LOCAL_SIZE=2\n"));
    EXPECT(&run, 2 == mcarun_test_count(run.out, "OPAL_ORTE_NODE_ID=0\n"));
    EXPECT(&run, 2 == mcarun_test_count(run.out, "OPAL_ORTE_BIND_TO=none\n"));
    /* One job: the same jobid, session directory and socket for both. */
    const char *jobid = strstr(run.out, "OPAL_ORTE_JOBID=");
    EXPECT(&run, NULL != jobid);
    char line[64];
    snprintf(line, sizeof(line), "%.*s", (int) strcspn(jobid, "\n") + 1, jobid);
    EXPECT(&run, 2 == mcarun_test_count(run.out, line));
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "OPAL_ORTE_SESSION_DIR=%s/opal-mca.%lu/%s\n",
             NULL != getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (unsigned long) geteuid(),
             line + strlen("OPAL_ORTE_JOBID="));
    dir[strlen(dir) - 1] = '\0';
    EXPECT(&run, 2 == mcarun_test_count(run.out, dir));
    EXPECT(&run, 2 == mcarun_test_count(run.out, "/launcher.sock\n"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(session_directory_and_socket_are_private)
{
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "1", "sh", "-c",
        "stat -c '%a %u %F' \"$OPAL_ORTE_SESSION_DIR\" \"$OPAL_ORTE_SOCKET\"");
    EXPECT(&run, 0 == run.status);
    char want[128];
    snprintf(want, sizeof(want), "700 %lu directory\n600 %lu socket\n", (unsigned long) geteuid(),
             (unsigned long) geteuid());
    EXPECT(&run, 0 == strcmp(run.out, want));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(x_sets_or_copies_variables)
{
    setenv("ORTE_TEST_COPIED", "from mcarun", 1);
    unsetenv("ORTE_TEST_UNSET");
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "2", "-x", "ORTE_TEST_SET=a b=c", "-x", "ORTE_TEST_COPIED", "-x",
        "ORTE_TEST_UNSET", "-x", "ORTE_TEST_TWICE=1", "-x", "ORTE_TEST_TWICE=2", rank_prog, "env",
        "ORTE_TEST_SET", "ORTE_TEST_COPIED", "ORTE_TEST_UNSET", "ORTE_TEST_TWICE");
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, 2 == mcarun_test_count(run.out, "ORTE_TEST_SET=a b=c\n"));
    EXPECT(&run, 2 == mcarun_test_count(run.out, "ORTE_TEST_COPIED=from mcarun\n"));
    EXPECT(&run, 2 == mcarun_test_count(run.out, "ORTE_TEST_UNSET unset\n"));
    EXPECT(&run, 2 == mcarun_test_count(run.out, "ORTE_TEST_TWICE=2\n"));
    EXPECT(&run, has(run.err, "-x ORTE_TEST_UNSET: ORTE_TEST_UNSET is not set"));
    mcarun_test_run_free(&run);

    RUN(&run, NULL, "-np", "1", "-x", "=oops", "true");
    EXPECT(&run, 2 == run.status && has(run.err, "not an environment variable name"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(mca_parameters_reach_the_ranks_environment)
{
    setenv("OPAL_MCA_orte_test_inherited", "old", 1);
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "2", "--mca", "btl", "self,sm", "--mca", "orte_test_inherited", "new",
        "-mca", "btl_sm_eager_limit", "4096", rank_prog, "env", "OPAL_MCA_btl",
        "OPAL_MCA_orte_test_inherited", "OPAL_MCA_btl_sm_eager_limit");
    unsetenv("OPAL_MCA_orte_test_inherited");
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, 2 == mcarun_test_count(run.out, "OPAL_MCA_btl=self,sm\n"));
    EXPECT(&run, 2 == mcarun_test_count(run.out, "OPAL_MCA_orte_test_inherited=new\n"));
    EXPECT(&run, 2 == mcarun_test_count(run.out, "OPAL_MCA_btl_sm_eager_limit=4096\n"));
    mcarun_test_run_free(&run);

    RUN(&run, NULL, "-np", "1", "--mca", "bad-name", "1", "true");
    EXPECT(&run, 2 == run.status && has(run.err, "--mca bad-name: not an MCA variable name"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(program_arguments_pass_unchanged)
{
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "1", rank_prog, "args", "two words", "-np", "--mca", "", "-x");
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, 0 == strcmp(run.out, "arg[0]=<two words>\narg[1]=<-np>\narg[2]=<--mca>\n"
                                      "arg[3]=<>\narg[4]=<-x>\n"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(wdir_sets_the_working_directory)
{
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "2", "--wdir", "/", rank_prog, "cwd");
    EXPECT(&run, 0 == run.status && 2 == mcarun_test_count(run.out, "cwd /\n"));
    mcarun_test_run_free(&run);

    RUN(&run, NULL, "-np", "1", "--wdir", "/nonexistent/dir", "true");
    EXPECT(&run, 2 == run.status && has(run.err, "--wdir /nonexistent/dir: No such file"));
    mcarun_test_run_free(&run);
}
END_TEST

/* Every line of text is "rank R line I" + 8 copies of 'a' + R, after an
 * optional "[R]<stdout>: " tag; each rank's lines come in order. */
static void check_lines(mcarun_run_t *run, int np, long lines, bool tagged)
{
    long next[16] = {0};
    char *save = NULL;
    char *copy = strdup(run->out);
    for (char *line = strtok_r(copy, "\n", &save); NULL != line;
         line = strtok_r(NULL, "\n", &save)) {
        int tag = -1, rank = -1, used = 0;
        long index = -1;
        char fill[16] = "";
        if (tagged) {
            EXPECT(run, 1 == sscanf(line, "[%d]<stdout>: %n", &tag, &used) && 0 < used);
        }
        EXPECT(run, 3 == sscanf(line + used, "rank %d line %ld %15s", &rank, &index, fill));
        EXPECT(run, 0 <= rank && rank < np && (!tagged || tag == rank));
        EXPECT(run, index == next[rank]);
        EXPECT(run, 8 == strspn(fill, (char[]){(char) ('a' + rank), '\0'}) && 8 == strlen(fill));
        ++next[rank];
    }
    for (int r = 0; r < np; ++r) {
        EXPECT(run, lines == next[r]);
    }
    free(copy);
}

START_TEST(output_lines_never_interleave)
{
    long lines = (long) opal_test_iterations(3000);
    char count[32];
    snprintf(count, sizeof(count), "%ld", lines);
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "4", "--oversubscribe", rank_prog, "lines", count);
    EXPECT(&run, 0 == run.status);
    check_lines(&run, 4, lines, false);
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(tag_output_prefixes_every_line)
{
    long lines = (long) opal_test_iterations(1000);
    char count[32];
    snprintf(count, sizeof(count), "%ld", lines);
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "3", "--oversubscribe", "--tag-output", rank_prog, "lines", count);
    EXPECT(&run, 0 == run.status);
    check_lines(&run, 3, lines, true);
    mcarun_test_run_free(&run);

    RUN(&run, NULL, "-np", "2", "--tag-output", "sh", "-c", "echo out; echo err >&2");
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, has(run.out, "[0]<stdout>: out\n") && has(run.out, "[1]<stdout>: out\n"));
    EXPECT(&run, has(run.err, "[0]<stderr>: err\n") && has(run.err, "[1]<stderr>: err\n"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(long_lines_are_cut_into_whole_pieces)
{
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "3", "--oversubscribe", rank_prog, "longline", "200000");
    EXPECT(&run, 0 == run.status);
    long total[3] = {0};
    char *save = NULL;
    for (char *line = strtok_r(run.out, "\n", &save); NULL != line;
         line = strtok_r(NULL, "\n", &save)) {
        int rank = line[0] - 'a';
        size_t len = strlen(line);
        EXPECT(&run, 0 <= rank && rank < 3 && len <= 64 * 1024);
        EXPECT(&run, len == strspn(line, (char[]){line[0], '\0'}));
        total[rank] += (long) len;
    }
    for (int r = 0; r < 3; ++r) {
        EXPECT(&run, 200000 == total[r]);
    }
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(last_line_without_newline_gets_one)
{
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "2", "printf", "abc");
    EXPECT(&run, 0 == run.status && 0 == strcmp(run.out, "abc\nabc\n"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(one_rank_output_passes_unchanged)
{
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "1", "printf", "abc\\000def");
    EXPECT(&run, 0 == run.status && 7 == run.out_len && 0 == memcmp(run.out, "abc\0def", 7));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(closed_stdout_ends_the_ranks_with_sigpipe)
{
    /* Like "yes | head -1": the ranks meet the broken pipe themselves. */
    char cmd[2 * PATH_MAX];
    snprintf(cmd, sizeof(cmd), "'%s' -np 2 --tag-output '%s' lines 100000000 2>/dev/null",
             mcarun_test_build_path("orte/tools/mcarun/mcarun"), rank_prog);
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    char line[256];
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
    ck_assert_int_eq(0, strncmp(line, "[", 1));
    int status = pclose(f);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(128 + SIGPIPE, WEXITSTATUS(status));
}
END_TEST

START_TEST(output_filename_writes_a_file_per_rank_and_stream)
{
    char dir[] = "/tmp/mcarun-test-output-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char target[PATH_MAX];
    snprintf(target, sizeof(target), "%s/out/sub", dir);
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "2", "--output-filename", target, "sh", "-c",
        "echo out $OPAL_ORTE_RANK; echo err $OPAL_ORTE_RANK >&2");
    EXPECT(&run, 0 == run.status && 0 == run.out_len);
    for (int r = 0; r < 2; ++r) {
        for (int s = 0; s < 2; ++s) {
            char path[PATH_MAX + 32], want[32], got[32] = "";
            snprintf(path, sizeof(path), "%s/rank.%d/%s", target, r, 0 == s ? "stdout" : "stderr");
            snprintf(want, sizeof(want), "%s %d\n", 0 == s ? "out" : "err", r);
            FILE *f = fopen(path, "r");
            EXPECT(&run, NULL != f);
            EXPECT(&run, NULL != fgets(got, sizeof(got), f));
            fclose(f);
            EXPECT(&run, 0 == strcmp(got, want));
        }
    }
    mcarun_test_run_free(&run);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ck_assert_int_eq(0, system(cmd));
}
END_TEST

START_TEST(stdin_goes_to_rank_0_only)
{
    mcarun_run_t run;
    RUN(&run, "one\ntwo\n", "-np", "3", "--oversubscribe", rank_prog, "stdin");
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, has(run.out, "rank 0: one\n") && has(run.out, "rank 0: two\n"));
    EXPECT(&run, 1 == mcarun_test_count(run.out, ": one\n"));
    for (int r = 0; r < 3; ++r) {
        char line[32];
        snprintf(line, sizeof(line), "rank %d: eof\n", r);
        EXPECT(&run, has(run.out, line));
    }
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(stdin_from_a_terminal_is_forwarded)
{
    int master, slave;
    ck_assert_int_eq(0, openpty(&master, &slave, NULL, NULL, NULL));
    mcarun_run_t run;
    const char *const args[] = {"-np", "2", rank_prog, "stdin", NULL};
    mcarun_test_start_fd(&run, slave, true, args);
    close(slave);
    /* A line, then end-of-file (^D at the start of a line). */
    ck_assert_int_eq(6, (int) write(master, "hello\n", 6));
    ck_assert_int_eq(1, (int) write(master, "\004", 1));
    mcarun_test_finish(&run);
    close(master);
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, has(run.out, "rank 0: hello\n") && has(run.out, "rank 0: eof\n"));
    EXPECT(&run, has(run.out, "rank 1: eof\n") && 1 == mcarun_test_count(run.out, "hello"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(exit_status_is_the_failing_ranks)
{
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "2", rank_prog, "exit", "7", "1");
    EXPECT(&run, 7 == run.status);
    EXPECT(&run, has(run.err, "mcarun: rank 1 (pid ") && has(run.err, ") exited with status 7\n"));
    mcarun_test_run_free(&run);

    RUN(&run, NULL, "-np", "2", rank_prog, "exit", "0", "1");
    EXPECT(&run, 0 == run.status && 0 == run.err_len);
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(crashing_rank_is_named_and_stops_the_job)
{
    mcarun_run_t run;
    /* The others sleep for 600 s: only stopping them ends the job in time. */
    RUN(&run, NULL, "-np", "4", "--oversubscribe", rank_prog, "crash", "2");
    EXPECT(&run, 128 + SIGSEGV == run.status);
    const char *line = strstr(run.out, "rank 2 pid ");
    EXPECT(&run, NULL != line);
    long pid = strtol(line + strlen("rank 2 pid "), NULL, 10);
    char want[128];
    snprintf(want, sizeof(want), "mcarun: rank 2 (pid %ld) exited on signal %d (%s)\n", pid,
             SIGSEGV, strsignal(SIGSEGV));
    EXPECT(&run, 0 == strcmp(run.err, want));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(enable_recovery_lets_the_survivors_finish)
{
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "3", "--oversubscribe", "--enable-recovery", rank_prog, "recover",
        "1");
    /* The failure still decides the status and is named; the survivors'
     * fences fail instead of hanging, and they finish on their own. */
    EXPECT(&run, 128 + SIGSEGV == run.status);
    EXPECT(&run, has(run.err, "mcarun: rank 1 (pid ") && has(run.err, "exited on signal"));
    EXPECT(&run, 1 == mcarun_test_count(run.err, "mcarun: "));
    EXPECT(&run, has(run.out, "rank 0 fence: OPAL_ERR_") && has(run.out, "rank 2 fence: OPAL_ERR_"));
    EXPECT(&run, has(run.out, "rank 0 finalized: OPAL_SUCCESS") &&
                     has(run.out, "rank 2 finalized: OPAL_SUCCESS"));
    mcarun_test_run_free(&run);

    /* Without it, the job stops: the survivors never finalize. */
    RUN(&run, NULL, "-np", "3", "--oversubscribe", rank_prog, "recover", "1");
    EXPECT(&run, 128 + SIGSEGV == run.status);
    EXPECT(&run, !has(run.out, "finalized: OPAL_SUCCESS"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(exit_without_finalize_fails_the_job)
{
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "2", rank_prog, "connect-exit");
    EXPECT(&run, 1 == run.status);
    EXPECT(&run, has(run.err, ") exited without calling orte_finalize\n"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(abort_stops_the_job_with_its_status)
{
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "3", "--oversubscribe", rank_prog, "abort", "5");
    EXPECT(&run, 5 == run.status);
    EXPECT(&run, has(run.err, "mcarun: rank 0 (pid ") &&
                     has(run.err, ") called abort with status 5: the test asked for it\n"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(missing_program_is_reported)
{
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "2", "/nonexistent/program");
    EXPECT(&run, 127 == run.status);
    EXPECT(&run, has(run.err, "could not start /nonexistent/program: No such file or directory"));
    EXPECT(&run, 1 == mcarun_test_count(run.err, "mcarun:"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(timeout_stops_the_job)
{
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "2", "--timeout", "0.5", rank_prog, "sleep", "600");
    EXPECT(&run, 124 == run.status);
    EXPECT(&run, has(run.err, "did not finish within --timeout 0.5 s; stopping its 2 running"));
    mcarun_test_run_free(&run);

    RUN(&run, NULL, "-np", "1", "--timeout", "0", "true");
    EXPECT(&run, 2 == run.status && has(run.err, "--timeout 0: expected a number of seconds"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(sigterm_is_forwarded_to_the_ranks)
{
    mcarun_run_t run;
    const char *const args[] = {"-np", "2", rank_prog, "trap", "0", NULL};
    mcarun_test_start(&run, NULL, args);
    EXPECT(&run, mcarun_test_wait_for(&run, " ready\n", 2));
    kill(run.pid, SIGTERM);
    mcarun_test_finish(&run);
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, has(run.out, "rank 0 caught SIGTERM\n") && has(run.out, "rank 1 caught SIGTERM"));
    mcarun_test_run_free(&run);
}
END_TEST

/* The state letter of process pid in /proc (R, S, T, ...). */
static char process_state(long pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (NULL == f) {
        return '?';
    }
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')');
    return NULL != paren && ' ' == paren[1] ? paren[2] : '?';
}

/* Waits (up to the run limit) for pid to be stopped, or to run again. */
static bool wait_state(long pid, bool stopped)
{
    for (int i = 0; i < 10 * MCARUN_TEST_RUN_LIMIT_S; ++i) {
        if (('T' == process_state(pid)) == stopped) {
            return true;
        }
        usleep(100000);
    }
    return false;
}

START_TEST(ctrl_z_stops_and_continues_the_ranks)
{
    mcarun_run_t run;
    const char *const args[] = {"-np", "2", rank_prog, "trap", "0", NULL};
    mcarun_test_start(&run, NULL, args);
    EXPECT(&run, mcarun_test_wait_for(&run, " ready\n", 2));
    const char *line = strstr(run.out, "rank 1 pid ");
    EXPECT(&run, NULL != line);
    long pid = strtol(line + strlen("rank 1 pid "), NULL, 10);
    kill(run.pid, SIGTSTP);
    EXPECT(&run, wait_state(run.pid, true) && wait_state(pid, true));
    kill(run.pid, SIGCONT);
    EXPECT(&run, wait_state(run.pid, false) && wait_state(pid, false));
    kill(run.pid, SIGTERM);
    mcarun_test_finish(&run);
    EXPECT(&run, 0 == run.status && 2 == mcarun_test_count(run.out, " caught SIGTERM\n"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(second_sigint_kills_the_job)
{
    mcarun_run_t run;
    const char *const args[] = {"-np", "2", rank_prog, "trap", "1", NULL};
    mcarun_test_start(&run, NULL, args);
    EXPECT(&run, mcarun_test_wait_for(&run, " ready\n", 2));
    kill(run.pid, SIGTERM);
    EXPECT(&run, mcarun_test_wait_for(&run, " ignored SIGTERM\n", 2));
    kill(run.pid, SIGINT);
    mcarun_test_finish(&run);
    EXPECT(&run, 128 + SIGKILL == run.status);
    EXPECT(&run, has(run.err, "again: killing the job"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(more_ranks_than_cores_needs_oversubscribe)
{
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "4096", "true");
    EXPECT(&run, 2 == run.status);
    EXPECT(&run, has(run.err, "4096 ranks were asked for, but this machine has "));
    EXPECT(&run, has(run.err, "add --oversubscribe"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(binding_is_applied_and_reported)
{
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "2", "--oversubscribe", "--bind-to", "core", "--report-bindings",
        rank_prog, "affinity");
#if OPAL_HAVE_HWLOC
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, has(run.err, "rank 0 (pid ") && has(run.err, ") bound to core 0 (cpus "));
    EXPECT(&run, has(run.err, "rank 1 (pid "));
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    const char *cpus = strstr(run.out, "rank 0 cpus ");
    EXPECT(&run, NULL != cpus);
    long n = strtol(cpus + strlen("rank 0 cpus "), NULL, 10);
    EXPECT(&run, 1 <= n && (n < online || 1 == online));
    mcarun_test_run_free(&run);

    RUN(&run, NULL, "-np", "1", "--bind-to", "package", "--report-bindings", rank_prog, "affinity");
    EXPECT(&run, 0 == run.status && has(run.err, ") bound to package 0 (cpus "));
#else
    EXPECT(&run, 2 == run.status && has(run.err, "needs hwloc"));
#endif
    mcarun_test_run_free(&run);

    RUN(&run, NULL, "-np", "1", "--report-bindings", "true");
    EXPECT(&run, 0 == run.status && has(run.err, ") is not bound\n"));
    mcarun_test_run_free(&run);

    RUN(&run, NULL, "-np", "1", "--bind-to", "numa", "true");
    EXPECT(&run, 2 == run.status && has(run.err, "expected none, core or package"));
    mcarun_test_run_free(&run);
}
END_TEST

/* Runs the session mode and checks that the directory, the shm file and
 * nothing else disappeared. */
static void check_session_cleanup(bool crash)
{
    char target[] = "/tmp/mcarun-test-target-XXXXXX";
    int fd = mkstemp(target);
    ck_assert_int_ge(fd, 0);
    close(fd);
    char x[PATH_MAX + 32];
    snprintf(x, sizeof(x), "ORTE_TEST_LINK_TARGET=%s", target);
    mcarun_run_t run;
    RUN(&run, NULL, "-np", "2", "-x", x, rank_prog, "session", crash ? "1" : "0");
    EXPECT(&run, (crash ? 128 + SIGSEGV : 0) == run.status);
    const char *session = strstr(run.out, "session ");
    const char *shm = strstr(run.out, "shm ");
    EXPECT(&run, NULL != session && NULL != shm);
    char path[PATH_MAX];
    struct stat st;
    snprintf(path, sizeof(path), "%.*s", (int) strcspn(session + 8, "\n"), session + 8);
    EXPECT(&run, 0 != stat(path, &st) && ENOENT == errno);
    snprintf(path, sizeof(path), "%.*s", (int) strcspn(shm + 4, "\n"), shm + 4);
    EXPECT(&run, 0 != stat(path, &st) && ENOENT == errno);
    EXPECT(&run, 0 == stat(target, &st));
    unlink(target);
    mcarun_test_run_free(&run);
}

START_TEST(session_directory_is_removed_after_a_normal_end)
{
    check_session_cleanup(false);
}
END_TEST

START_TEST(session_directory_is_removed_after_a_crash)
{
    check_session_cleanup(true);
}
END_TEST

START_TEST(bad_command_lines_are_refused)
{
    mcarun_run_t run;
    RUN(&run, NULL, "--np", "2", "--bogus", "true");
    EXPECT(&run, 2 == run.status && has(run.err, "--bogus"));
    mcarun_test_run_free(&run);
    RUN(&run, NULL, "-np", "0", "true");
    EXPECT(&run, 2 == run.status && has(run.err, "-np 0: expected a number of ranks"));
    mcarun_test_run_free(&run);
    RUN(&run, NULL, "-np", "2");
    EXPECT(&run, 2 == run.status && has(run.err, "no program to run"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(version_and_help_print_and_exit_0)
{
    mcarun_run_t run;
    RUN(&run, NULL, "--version");
    EXPECT(&run, 0 == run.status && 0 == strcmp(run.out, "mcarun (opal-mca) " OPAL_VERSION "\n"));
    mcarun_test_run_free(&run);
    RUN(&run, NULL, "--help");
    EXPECT(&run, 0 == run.status && has(run.out, "--oversubscribe") && has(run.out, "--mca"));
    mcarun_test_run_free(&run);
}
END_TEST

int main(void)
{
    snprintf(rank_prog, sizeof(rank_prog), "%s",
             mcarun_test_build_path("test/orte/orte_test_rank"));
    Suite *s = suite_create("mcarun");
    OPAL_TEST_ADD(s, launch_matrix_np_1_to_8);
    OPAL_TEST_ADD(s, programs_that_never_connect_just_run);
    OPAL_TEST_ADD(s, ranks_get_the_launcher_environment);
    OPAL_TEST_ADD(s, session_directory_and_socket_are_private);
    OPAL_TEST_ADD(s, x_sets_or_copies_variables);
    OPAL_TEST_ADD(s, mca_parameters_reach_the_ranks_environment);
    OPAL_TEST_ADD(s, program_arguments_pass_unchanged);
    OPAL_TEST_ADD(s, wdir_sets_the_working_directory);
    OPAL_TEST_ADD(s, output_lines_never_interleave);
    OPAL_TEST_ADD(s, tag_output_prefixes_every_line);
    OPAL_TEST_ADD(s, long_lines_are_cut_into_whole_pieces);
    OPAL_TEST_ADD(s, last_line_without_newline_gets_one);
    OPAL_TEST_ADD(s, one_rank_output_passes_unchanged);
    OPAL_TEST_ADD(s, closed_stdout_ends_the_ranks_with_sigpipe);
    OPAL_TEST_ADD(s, output_filename_writes_a_file_per_rank_and_stream);
    OPAL_TEST_ADD(s, stdin_goes_to_rank_0_only);
    OPAL_TEST_ADD(s, stdin_from_a_terminal_is_forwarded);
    OPAL_TEST_ADD(s, exit_status_is_the_failing_ranks);
    OPAL_TEST_ADD(s, crashing_rank_is_named_and_stops_the_job);
    OPAL_TEST_ADD(s, enable_recovery_lets_the_survivors_finish);
    OPAL_TEST_ADD(s, exit_without_finalize_fails_the_job);
    OPAL_TEST_ADD(s, abort_stops_the_job_with_its_status);
    OPAL_TEST_ADD(s, missing_program_is_reported);
    OPAL_TEST_ADD(s, timeout_stops_the_job);
    OPAL_TEST_ADD(s, sigterm_is_forwarded_to_the_ranks);
    OPAL_TEST_ADD(s, ctrl_z_stops_and_continues_the_ranks);
    OPAL_TEST_ADD(s, second_sigint_kills_the_job);
    OPAL_TEST_ADD(s, more_ranks_than_cores_needs_oversubscribe);
    OPAL_TEST_ADD(s, binding_is_applied_and_reported);
    OPAL_TEST_ADD(s, session_directory_is_removed_after_a_normal_end);
    OPAL_TEST_ADD(s, session_directory_is_removed_after_a_crash);
    OPAL_TEST_ADD(s, bad_command_lines_are_refused);
    OPAL_TEST_ADD(s, version_and_help_print_and_exit_0);
    return opal_test_run(s);
}
