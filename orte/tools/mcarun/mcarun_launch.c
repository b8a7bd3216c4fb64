/*
 * Starting the ranks and watching them end.
 *
 * Each rank runs in a process group of its own, so that a signal meant for
 * it reaches what it started too, and so that a terminal's ^C reaches
 * mcarun alone, which forwards it once. Signals reach mcarun through a
 * signalfd: they are blocked from the start, and each rank gets back the
 * mask mcarun started with before it execs.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opal/util/opal_argv.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_timer.h"
#include "orte/tools/mcarun/mcarun.h"
#include "orte/util/orte_launcher_env.h"

extern char **environ;

static struct {
    int sigfd;
    struct mcarun_watch_t *watch;
    int interrupts; /* SIGINT/SIGTERM/SIGHUP/SIGQUIT received */
    /* The last of those: which, from whom, when. */
    uint32_t last_signo, last_pid;
    uint64_t last_ns;
} sig = {.sigfd = -1};

/* True when si repeats the last stopping signal: the same signal from the
 * same sender within MCARUN_SIGNAL_TOGETHER_NS. `timeout -s INT` signals
 * mcarun and then its whole process group, and a script may kill a job's
 * pid and its group alike: the user sent one signal, so it counts once
 * and the ranks keep their grace period. */
static bool arrived_together(const struct signalfd_siginfo *si)
{
    uint64_t now = opal_timer_ns();
    bool together = 0 != sig.last_signo && si->ssi_signo == sig.last_signo &&
                    si->ssi_pid == sig.last_pid && now - sig.last_ns < MCARUN_SIGNAL_TOGETHER_NS;
    sig.last_signo = si->ssi_signo;
    sig.last_pid = si->ssi_pid;
    sig.last_ns = now;
    return together;
}

static void forwarded_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGCHLD);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
    sigaddset(set, SIGQUIT);
    sigaddset(set, SIGUSR1);
    sigaddset(set, SIGUSR2);
    sigaddset(set, SIGTSTP);
    sigaddset(set, SIGCONT);
}

void mcarun_signal_ranks(int signo)
{
    for (uint32_t i = 0; i < mcarun_job.size; ++i) {
        const mcarun_rank_t *r = &mcarun_job.ranks[i];
        if (MCARUN_RANK_RUNNING == r->state) {
            /* The group reaches the rank's own children; the rank alone
             * is the fallback should it have left its group. */
            if (0 != kill(-r->pid, signo)) {
                kill(r->pid, signo);
            }
        }
    }
}

static void reap(void)
{
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0) {
            return;
        }
        for (uint32_t i = 0; i < mcarun_job.size; ++i) {
            mcarun_rank_t *r = &mcarun_job.ranks[i];
            if (r->pid == pid && MCARUN_RANK_RUNNING == r->state) {
                r->state = MCARUN_RANK_EXITED;
                r->wait_status = status;
                --mcarun_job.running;
                mcarun_iof_drain(r);
                if (NULL != r->conn) {
                    mcarun_conn_close(r->conn);
                }
                mcarun_job_rank_exited(r);
                break;
            }
        }
    }
}

static void on_signal(void *ctx, uint32_t events)
{
    (void) ctx;
    (void) events;
    struct signalfd_siginfo si;
    while (sizeof(si) == read(sig.sigfd, &si, sizeof(si))) {
        int signo = (int) si.ssi_signo;
        switch (signo) {
            case SIGCHLD:
                reap();
                break;
            case SIGTSTP:
                /* ^Z: the ranks stop with mcarun (they are not in the
                 * terminal's foreground group); SIGCONT brings them back. */
                mcarun_signal_ranks(SIGSTOP);
                raise(SIGSTOP);
                break;
            case SIGINT:
            case SIGTERM:
            case SIGHUP:
            case SIGQUIT:
                if (arrived_together(&si)) {
                    break;
                }
                /* The first is forwarded; another means "stop now". */
                if (0 < sig.interrupts++) {
                    opal_output(0, "mcarun: %s again: killing the job", strsignal(signo));
                    mcarun_job.stopping = true;
                    mcarun_job.kill_deadline = 0;
                    mcarun_signal_ranks(SIGKILL);
                } else {
                    if (SIGINT == signo) {
                        mcarun_job_interrupted(signo);
                    }
                    mcarun_signal_ranks(signo);
                }
                break;
            default:
                mcarun_signal_ranks(signo);
                break;
        }
    }
}

int mcarun_signals_init(void)
{
    sigset_t set;
    forwarded_signals(&set);
    /* A write to a closed pipe or socket is an EPIPE to handle, not a
     * death; blocked rather than ignored, so no rank inherits it. */
    sigaddset(&set, SIGPIPE);
    if (0 != sigprocmask(SIG_BLOCK, &set, &mcarun_job.child_sigmask)) {
        return OPAL_ERR_IN_ERRNO;
    }
    /* Children that exit must stay waitable, whatever mcarun inherited. */
    signal(SIGCHLD, SIG_DFL);
    sigdelset(&set, SIGPIPE);
    sig.sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (sig.sigfd < 0) {
        return OPAL_ERR_IN_ERRNO;
    }
    sig.watch = mcarun_loop_add(sig.sigfd, EPOLLIN, on_signal, NULL);
    return NULL == sig.watch ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;
}

void mcarun_signals_fini(void)
{
    mcarun_loop_remove(sig.watch);
    sig.watch = NULL;
    if (0 <= sig.sigfd) {
        close(sig.sigfd);
        sig.sigfd = -1;
    }
}

/* The environment every rank shares: mcarun's own without inherited
 * launcher variables and without what the options set, then the options'
 * variables, then the job's. */
static char **job_environment(void)
{
    char **env = NULL;
    const size_t plen = strlen(ORTE_LAUNCHER_ENV_PREFIX);
    for (char **e = environ; NULL != e && NULL != *e; ++e) {
        const char *eq = strchr(*e, '=');
        if (NULL == eq || 0 == strncmp(*e, ORTE_LAUNCHER_ENV_PREFIX, plen)) {
            continue;
        }
        bool overridden = false;
        for (char **o = mcarun_job.opts.env; NULL != o && NULL != *o && !overridden; ++o) {
            overridden = 0 == strncmp(*o, *e, (size_t) (eq - *e + 1));
        }
        if (!overridden && OPAL_SUCCESS != opal_argv_append_nosize(&env, *e)) {
            goto fail;
        }
    }
    for (char **o = mcarun_job.opts.env; NULL != o && NULL != *o; ++o) {
        if (OPAL_SUCCESS != opal_argv_append_nosize(&env, *o)) {
            goto fail;
        }
    }
    static const char *const bind_names[] = {"none", "core", "package"};
    char line[ORTE_SESSION_DIR_MAX + 64];
    const struct {
        const char *name;
        const char *value;
        unsigned long number;
    } vars[] = {
        {ORTE_LAUNCHER_ENV_JOBID, NULL, mcarun_job.jobid},
        {ORTE_LAUNCHER_ENV_SIZE, NULL, mcarun_job.size},
        {ORTE_LAUNCHER_ENV_LOCAL_SIZE, NULL, mcarun_job.size},
        {ORTE_LAUNCHER_ENV_NODE_ID, NULL, 0},
        {ORTE_LAUNCHER_ENV_SOCKET, mcarun_job.socket_path, 0},
        {ORTE_LAUNCHER_ENV_SESSION_DIR, mcarun_job.session_dir, 0},
        {ORTE_LAUNCHER_ENV_SHM_PREFIX, mcarun_job.shm_prefix, 0},
        {ORTE_LAUNCHER_ENV_BIND_TO, bind_names[mcarun_job.opts.bind_to], 0},
    };
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); ++i) {
        if (NULL != vars[i].value) {
            snprintf(line, sizeof(line), "%s=%s", vars[i].name, vars[i].value);
        } else {
            snprintf(line, sizeof(line), "%s=%lu", vars[i].name, vars[i].number);
        }
        if (OPAL_SUCCESS != opal_argv_append_nosize(&env, line)) {
            goto fail;
        }
    }
    return env;
fail:
    opal_argv_free(env);
    return NULL;
}

/* In the child: only async-signal-safe calls until exec. On failure the
 * errno goes up the error pipe and the child exits 127, as a shell's
 * "command not found" does. */
static void exec_rank(const mcarun_rank_t *r, char **env, int fds[3], int errfd)
{
    setpgid(0, 0);
    for (int i = 0; i < 3; ++i) {
        if (fds[i] != i && dup2(fds[i], i) < 0) {
            goto fail;
        }
    }
    if (NULL != mcarun_job.opts.wdir && 0 != chdir(mcarun_job.opts.wdir)) {
        goto fail;
    }
    if (r->bound && 0 != sched_setaffinity(0, sizeof(r->cpus), &r->cpus)) {
        goto fail;
    }
    sigprocmask(SIG_SETMASK, &mcarun_job.child_sigmask, NULL);
    execvpe(mcarun_job.opts.argv[0], mcarun_job.opts.argv, env);
fail:;
    int err = errno;
    ssize_t unused = write(errfd, &err, sizeof(err));
    (void) unused;
    _exit(127);
}

/* Starts rank r; its exec result is read later, from *errfd. */
static int start_rank(mcarun_rank_t *r, char **env, int *errfd)
{
    int fds[3] = {-1, -1, -1};
    int errpipe[2];
    int rc = mcarun_iof_prepare(r, fds);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if (0 != pipe2(errpipe, O_CLOEXEC)) {
        rc = OPAL_ERR_IN_ERRNO;
        goto out;
    }
    pid_t pid = fork();
    if (0 == pid) {
        close(errpipe[0]);
        exec_rank(r, env, fds, errpipe[1]);
    }
    close(errpipe[1]);
    if (pid < 0) {
        opal_output(0, "mcarun: cannot start rank %lu: fork: %s", (unsigned long) r->rank,
                    strerror(errno));
        close(errpipe[0]);
        rc = OPAL_ERR_IN_ERRNO;
        goto out;
    }
    /* Also here, so that a signal sent before the child ran finds the
     * group; EACCES once it has exec'd means it already did it. */
    setpgid(pid, pid);
    r->pid = pid;
    r->state = MCARUN_RANK_RUNNING;
    ++mcarun_job.running;
    *errfd = errpipe[0];
    mcarun_iof_started(r);
out:
    for (int i = 0; i < 3; ++i) {
        /* fd 0 may be mcarun's own stdin, passed to rank 0 as it is. */
        if (2 < fds[i]) {
            close(fds[i]);
        }
    }
    return rc;
}

int mcarun_launch(void)
{
    char **env = job_environment();
    int *errfds = malloc(mcarun_job.size * sizeof(int));
    if (NULL == env || NULL == errfds) {
        opal_argv_free(env);
        free(errfds);
        opal_output(0, "mcarun: out of memory");
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    int count = opal_argv_count(env);
    char rank_var[64], local_var[64];
    int rc = opal_argv_append_nosize(&env, "");
    if (OPAL_SUCCESS == rc) {
        rc = opal_argv_append_nosize(&env, "");
    }
    uint32_t started = 0;
    for (; OPAL_SUCCESS == rc && started < mcarun_job.size; ++started) {
        mcarun_rank_t *r = &mcarun_job.ranks[started];
        snprintf(rank_var, sizeof(rank_var), "%s=%lu", ORTE_LAUNCHER_ENV_RANK,
                 (unsigned long) r->rank);
        snprintf(local_var, sizeof(local_var), "%s=%lu", ORTE_LAUNCHER_ENV_LOCAL_RANK,
                 (unsigned long) r->rank);
        /* The two placeholders at the end take this rank's variables. */
        char *save[2] = {env[count], env[count + 1]};
        env[count] = rank_var;
        env[count + 1] = local_var;
        rc = start_rank(r, env, &errfds[started]);
        env[count] = save[0];
        env[count + 1] = save[1];
        if (OPAL_SUCCESS != rc) {
            break;
        }
    }
    /* Every rank was forked before any exec result is awaited, so the
     * ranks exec in parallel. */
    for (uint32_t i = 0; i < started; ++i) {
        mcarun_rank_t *r = &mcarun_job.ranks[i];
        int err = 0;
        ssize_t n;
        do {
            n = read(errfds[i], &err, sizeof(err));
        } while (n < 0 && EINTR == errno);
        if (n == (ssize_t) sizeof(err)) {
            r->exec_errno = err;
        }
        close(errfds[i]);
        if (mcarun_job.opts.report_bindings && 0 == r->exec_errno) {
            mcarun_bind_report(r);
        }
    }
    free(errfds);
    opal_argv_free(env);
    if (OPAL_SUCCESS != rc) {
        mcarun_job_fail(MCARUN_EXIT_FAILURE, "could not start rank %lu of %lu: %s",
                        (unsigned long) started, (unsigned long) mcarun_job.size,
                        opal_strerror(rc));
    }
    return rc;
}
