/*
 * rpc_swim_job_test's two cases under Open MPI's mpirun (ess/pmix): 8
 * ranks of rpc_swim_rank, period 200 ms, ping timeout 180 ms, suspicion
 * 2 s. A rank killed with SIGKILL is declared dead by every survivor; a
 * rank stopped for 1 s is never declared dead. Skips (77) without mpirun
 * or libpmix.
 *
 * Open MPI 4's mpirun --enable-recovery does not exit once a rank was
 * killed and the others finished: the test reads the output until every
 * survivor has spoken (at most 90 s) and then stops mpirun's process
 * group itself.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test/orte/orte_test_support.h"
#include "test/support/opal_test.h"

#define LIMIT_S 90

static int count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); NULL != p; p = strstr(p + 1, needle)) {
        n++;
    }
    return n;
}

/* Runs mpirun with the rank program in mode; returns its output once
 * `oks` ranks said ok (or mpirun ended, or the limit passed). *status is
 * mpirun's exit status, or -1 when the test stopped it. */
static char *run_mpirun(const char *mode, int oks, int *status)
{
    char dir[] = "/tmp/rpc_swim_pmix_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char cmd[8192];
    snprintf(cmd, sizeof(cmd),
             "exec mpirun --oversubscribe %s -np 8 -x OPAL_MCA_mca_base_component_path "
             "-x OPAL_MCA_rpc_swim_period_ms=200 -x OPAL_MCA_rpc_swim_ping_timeout_ms=180 "
             "-x OPAL_MCA_rpc_swim_suspect_timeout_ms=2000 %s/test/rpc/rpc_swim_rank %s %s 1000 "
             "2>&1",
             0 == strcmp(mode, "kill") ? "--enable-recovery" : "", ORTE_TEST_BUILDDIR, mode, dir);
    int out[2];
    ck_assert_int_eq(pipe(out), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (0 == pid) {
        setpgid(0, 0);
        dup2(out[1], 1);
        close(out[0]);
        execl("/bin/sh", "sh", "-c", cmd, (char *) NULL);
        _exit(127);
    }
    close(out[1]);
    size_t len = 0, cap = 1 << 16;
    char *text = malloc(cap);
    text[0] = '\0';
    time_t deadline = time(NULL) + LIMIT_S;
    bool open_pipe = true;
    while (open_pipe && count(text, " ok\n") < oks && time(NULL) < deadline) {
        struct pollfd pfd = {.fd = out[0], .events = POLLIN};
        if (poll(&pfd, 1, 1000) <= 0) {
            continue;
        }
        if (len + 4096 >= cap) {
            cap *= 2;
            text = realloc(text, cap);
        }
        ssize_t n = read(out[0], text + len, 4095);
        if (n <= 0) {
            open_pipe = n < 0 && EINTR == errno;
            continue;
        }
        len += (size_t) n;
        text[len] = '\0';
    }
    *status = -1;
    int st;
    if (pid == waitpid(pid, &st, WNOHANG)) {
        *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    } else {
        /* Give the ranks a moment to finish what they print, then stop
         * mpirun and whatever it left. */
        for (int i = 0; i < 50 && 0 == waitpid(pid, &st, WNOHANG); ++i) {
            struct timespec ts = {0, 100 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        kill(-pid, SIGKILL);
        (void) waitpid(pid, &st, 0);
    }
    close(out[0]);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    return text;
}

START_TEST(a_killed_rank_is_declared_dead_by_every_survivor_under_mpirun)
{
    int status;
    char *out = run_mpirun("kill", 7, &status);
    ck_assert_msg(7 == count(out, " ok\n"), "mpirun:\n%.3000s", out);
    ck_assert_int_eq(count(out, " dead after "), 7);
    for (const char *l = strstr(out, " dead after "); NULL != l;
         l = strstr(l + 1, " dead after ")) {
        long ms = strtol(l + strlen(" dead after "), NULL, 10);
        ck_assert_int_ge(ms, 2000);
        ck_assert_int_le(ms, 60000);
    }
    ck_assert_int_eq(count(out, "declared dead"), 0);
    printf("rpc_swim_pmix_test: SIGKILL under mpirun:\n%s", out);
    free(out);
}
END_TEST

START_TEST(a_stopped_rank_is_never_declared_dead_under_mpirun)
{
    int status;
    char *out = run_mpirun("stop", 8, &status);
    ck_assert_msg(8 == count(out, " ok\n"), "mpirun:\n%.3000s", out);
    ck_assert_int_eq(count(out, "declared dead"), 0);
    printf("rpc_swim_pmix_test: SIGSTOP under mpirun:\n%s", out);
    free(out);
}
END_TEST

int main(void)
{
#if !OPAL_HAVE_PMIX
    printf("SKIP: libpmix is absent (install libpmix-dev): ess/pmix is not built\n");
    return 77;
#else
    if (!orte_test_have_program("mpirun")) {
        printf("SKIP: no mpirun in PATH (install openmpi-bin): ess/pmix cannot be tested\n");
        return 77;
    }
    orte_test_forget_launchers();
    orte_test_use_build_tree_plugins();
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    Suite *s = suite_create("rpc_swim_pmix");
    OPAL_TEST_ADD(s, a_killed_rank_is_declared_dead_by_every_survivor_under_mpirun);
    OPAL_TEST_ADD(s, a_stopped_rank_is_never_declared_dead_under_mpirun);
    return opal_test_run(s);
#endif
}
