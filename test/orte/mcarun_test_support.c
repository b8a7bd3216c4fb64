#include "opal/opal_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "opal/util/opal_argv.h"
#include "test/orte/mcarun_test_support.h"
#include "test/support/opal_test.h"

const char *mcarun_test_build_path(const char *rel)
{
    static char path[2 * PATH_MAX];
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) {
        snprintf(path, sizeof(path), "%s", rel);
        return path;
    }
    exe[n] = '\0';
    /* This program is <builddir>/test/orte/<name>. */
    for (int i = 0; i < 3; ++i) {
        char *slash = strrchr(exe, '/');
        if (NULL != slash) {
            *slash = '\0';
        }
    }
    snprintf(path, sizeof(path), "%s/%s", exe, rel);
    return path;
}

static int run_limit_s = MCARUN_TEST_RUN_LIMIT_S;

void mcarun_test_set_run_limit(int seconds)
{
    run_limit_s = seconds;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void start(mcarun_run_t *run, const char *stdin_data, int stdin_fd, bool new_session,
                  const char *const *args)
{
    memset(run, 0, sizeof(*run));
    char **argv = NULL;
    if (opal_test_under_valgrind()) {
        static const char *const vg[] = {"--mode=execute",
                                         "valgrind",
                                         "--quiet",
                                         "--error-exitcode=97",
                                         "--leak-check=full",
                                         "--errors-for-leak-kinds=definite,indirect",
                                         "--show-leak-kinds=definite,indirect",
                                         NULL};
        opal_argv_append_nosize(&argv, mcarun_test_build_path("libtool"));
        for (int i = 0; NULL != vg[i]; ++i) {
            opal_argv_append_nosize(&argv, vg[i]);
        }
        char supp[PATH_MAX];
        snprintf(supp, sizeof(supp), "--suppressions=%s/../contrib/valgrind.supp",
                 opal_test_srcdir());
        opal_argv_append_nosize(&argv, supp);
    }
    opal_argv_append_nosize(&argv, mcarun_test_build_path("orte/tools/mcarun/mcarun"));
    for (int i = 0; NULL != args[i]; ++i) {
        opal_argv_append_nosize(&argv, args[i]);
    }
    int in[2], out[2], err[2];
    ck_assert_int_eq(0, pipe2(in, O_CLOEXEC));
    ck_assert_int_eq(0, pipe2(out, O_CLOEXEC));
    ck_assert_int_eq(0, pipe2(err, O_CLOEXEC));
    fflush(stdout);
    fflush(stderr);
    run->pid = fork();
    ck_assert_int_ge(run->pid, 0);
    if (0 == run->pid) {
        if (new_session) {
            setsid();
            ioctl(stdin_fd, TIOCSCTTY, 0);
        } else {
            setpgid(0, 0);
        }
        if (0 <= stdin_fd) {
            dup2(stdin_fd, 0);
        } else if (NULL == stdin_data) {
            int null = open("/dev/null", O_RDONLY);
            dup2(null, 0);
        } else {
            dup2(in[0], 0);
        }
        dup2(out[1], 1);
        dup2(err[1], 2);
        execv(argv[0], argv);
        _exit(126);
    }
    opal_argv_free(argv);
    close(in[0]);
    close(out[1]);
    close(err[1]);
    if (NULL != stdin_data) {
        /* Test inputs are small: they fit in the pipe. */
        ssize_t n = write(in[1], stdin_data, strlen(stdin_data));
        ck_assert_int_eq((int) n, (int) strlen(stdin_data));
    }
    close(in[1]);
    run->out_fd = out[0];
    run->err_fd = err[0];
}

void mcarun_test_start(mcarun_run_t *run, const char *stdin_data, const char *const *args)
{
    start(run, stdin_data, -1, false, args);
}

void mcarun_test_start_fd(mcarun_run_t *run, int stdin_fd, bool new_session,
                          const char *const *args)
{
    start(run, NULL, stdin_fd, new_session, args);
}

static void append(char **buf, size_t *len, const char *data, size_t n)
{
    *buf = realloc(*buf, *len + n + 1);
    ck_assert_ptr_nonnull(*buf);
    memcpy(*buf + *len, data, n);
    *len += n;
    (*buf)[*len] = '\0';
}

/* Reads what is ready within timeout_ms; false once both pipes ended. */
static bool pump(mcarun_run_t *run, int timeout_ms)
{
    struct pollfd p[2] = {{.fd = run->out_fd, .events = POLLIN},
                          {.fd = run->err_fd, .events = POLLIN}};
    if (p[0].fd < 0 && p[1].fd < 0) {
        return false;
    }
    if (poll(p, 2, timeout_ms) <= 0) {
        return true;
    }
    char buf[65536];
    for (int i = 0; i < 2; ++i) {
        if (p[i].fd < 0 || 0 == p[i].revents) {
            continue;
        }
        ssize_t n = read(p[i].fd, buf, sizeof(buf));
        if (0 < n) {
            if (0 == i) {
                append(&run->out, &run->out_len, buf, (size_t) n);
            } else {
                append(&run->err, &run->err_len, buf, (size_t) n);
            }
        } else if (0 == n || EINTR != errno) {
            close(p[i].fd);
            *(0 == i ? &run->out_fd : &run->err_fd) = -1;
        }
    }
    return true;
}

bool mcarun_test_wait_for(mcarun_run_t *run, const char *needle, int count)
{
    double end = now_s() + run_limit_s;
    while (NULL == run->out || mcarun_test_count(run->out, needle) < count) {
        if (now_s() > end || !pump(run, 100)) {
            return false;
        }
    }
    return true;
}

void mcarun_test_finish(mcarun_run_t *run)
{
    double end = now_s() + run_limit_s;
    bool stopped = false;
    while (pump(run, 100)) {
        if (!stopped && now_s() > end) {
            /* mcarun forwards SIGTERM; the group catches whatever it left. */
            fprintf(stderr, "mcarun_test: mcarun ran over %d s: stopping it\n", run_limit_s);
            kill(run->pid, SIGTERM);
            sleep(5);
            kill(-run->pid, SIGKILL);
            stopped = true;
        }
    }
    int status;
    while (waitpid(run->pid, &status, 0) < 0 && EINTR == errno) {
    }
    run->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (NULL == run->out) {
        append(&run->out, &run->out_len, "", 0);
    }
    if (NULL == run->err) {
        append(&run->err, &run->err_len, "", 0);
    }
    ck_assert_msg(!stopped, "mcarun did not finish within %d s", run_limit_s);
}

void mcarun_test_mcarun(mcarun_run_t *run, const char *stdin_data, const char *const *args)
{
    mcarun_test_start(run, stdin_data, args);
    mcarun_test_finish(run);
}

void mcarun_test_run_free(mcarun_run_t *run)
{
    free(run->out);
    free(run->err);
    run->out = run->err = NULL;
}

int mcarun_test_count(const char *text, const char *needle)
{
    int n = 0;
    size_t len = strlen(needle);
    for (const char *p = text; NULL != (p = strstr(p, needle)); p += len) {
        ++n;
    }
    return n;
}

void mcarun_test_dump(const mcarun_run_t *run)
{
    fprintf(stderr, "--- mcarun exited %d\n--- stdout:\n%s\n--- stderr:\n%s\n---\n", run->status,
            NULL != run->out ? run->out : "", NULL != run->err ? run->err : "");
}

bool mcarun_test_component_built(const char *fw, const char *comp, const char *plugin_dirs)
{
    char rel[256];
    struct stat st;
    snprintf(rel, sizeof(rel), "/opal/mca/%s/%s/.libs", fw, comp);
    if (NULL == strstr(plugin_dirs, rel)) {
        return false;
    }
    snprintf(rel, sizeof(rel), "opal/mca/%s/%s/mca_%s_%s.la", fw, comp, fw, comp);
    if (0 == stat(mcarun_test_build_path(rel), &st)) {
        return true;
    }
    snprintf(rel, sizeof(rel), "opal/mca/%s/%s/libmca_%s_%s.la", fw, comp, fw, comp);
    return 0 == stat(mcarun_test_build_path(rel), &st);
}
