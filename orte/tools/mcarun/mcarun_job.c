/*
 * The job's fate: the first failure decides mcarun's exit status and
 * message, and starts stopping the job; what happens to the other ranks
 * after that is its consequence and is not reported. With
 * --enable-recovery a rank's failure is reported and the others go on;
 * the first failure still decides the exit status.
 */
#include "opal/opal_config.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "opal/util/opal_timer.h"
#include "orte/tools/mcarun/mcarun.h"

mcarun_job_t mcarun_job;

const char *mcarun_rank_name(const mcarun_rank_t *r, char *buf, size_t size)
{
    snprintf(buf, size, "rank %lu (pid %ld)", (unsigned long) r->rank, (long) r->pid);
    return buf;
}

/* Prints "mcarun: <message>" as one write, so that it stays one line
 * among the ranks' output. */
static void print_failure(const char *format, va_list ap) OPAL_PRINTF_LIKE(1, 0);
static void print_failure(const char *format, va_list ap)
{
    char text[1024];
    vsnprintf(text, sizeof(text), format, ap);
    char line[1100];
    int n = snprintf(line, sizeof(line), "mcarun: %s\n", text);
    if (0 < n) {
        fwrite(line, 1, (size_t) n < sizeof(line) ? (size_t) n : sizeof(line) - 1, stderr);
        fflush(stderr);
    }
}

void mcarun_job_fail(int status, const char *format, ...)
{
    if (mcarun_job.failed && mcarun_job.stopping) {
        return;
    }
    if (!mcarun_job.failed) {
        mcarun_job.failed = true;
        mcarun_job.exit_status = status;
    }
    va_list ap;
    va_start(ap, format);
    print_failure(format, ap);
    va_end(ap);
    mcarun_job_stop();
}

void mcarun_job_rank_failed(int status, const char *format, ...)
{
    va_list ap;
    if (!mcarun_job.opts.enable_recovery) {
        char text[1024];
        va_start(ap, format);
        vsnprintf(text, sizeof(text), format, ap);
        va_end(ap);
        mcarun_job_fail(status, "%s", text);
        return;
    }
    /* Every rank failure is said: the survivors go on, and a test of their
     * recovery wants to know who failed, not only who failed first. */
    if (!mcarun_job.failed) {
        mcarun_job.failed = true;
        mcarun_job.exit_status = status;
    }
    va_start(ap, format);
    print_failure(format, ap);
    va_end(ap);
}

void mcarun_job_interrupted(int signo)
{
    if (mcarun_job.stopping) {
        return;
    }
    if (!mcarun_job.failed) {
        mcarun_job.failed = true;
        mcarun_job.exit_status = 128 + signo;
        char text[160];
        snprintf(text, sizeof(text),
                 "mcarun: job interrupted by the user (signal %d, %s); stopping its %lu running "
                 "rank(s)\n",
                 signo, strsignal(signo), (unsigned long) mcarun_job.running);
        fputs(text, stderr);
        fflush(stderr);
    }
    /* What the ranks do with the signal is theirs to decide; how they end
     * is a consequence of the interrupt and is not reported. */
    mcarun_job.stopping = true;
    if (0 < mcarun_job.running) {
        mcarun_job.kill_deadline = opal_timer_ns() + MCARUN_KILL_GRACE_NS;
    }
}

void mcarun_job_stop(void)
{
    if (mcarun_job.stopping) {
        return;
    }
    mcarun_job.stopping = true;
    if (0 < mcarun_job.running) {
        mcarun_signal_ranks(SIGTERM);
        mcarun_job.kill_deadline = opal_timer_ns() + MCARUN_KILL_GRACE_NS;
    }
}

void mcarun_job_rank_exited(mcarun_rank_t *r)
{
    char name[64];
    int st = r->wait_status;
    mcarun_rank_name(r, name, sizeof(name));
    if (0 != r->exec_errno) {
        mcarun_job_rank_failed(WIFEXITED(st) ? WEXITSTATUS(st) : MCARUN_EXIT_FAILURE,
                               "%s could not start %s: %s", name, mcarun_job.opts.argv[0],
                               strerror(r->exec_errno));
    } else if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        mcarun_job_rank_failed(128 + sig, "%s exited on signal %d (%s)", name, sig, strsignal(sig));
    } else if (WIFEXITED(st) && 0 != WEXITSTATUS(st)) {
        mcarun_job_rank_failed(WEXITSTATUS(st), "%s exited with status %d", name, WEXITSTATUS(st));
    } else if (r->connected || r->disconnected) {
        mcarun_job_rank_failed(MCARUN_EXIT_FAILURE, "%s exited without calling orte_finalize",
                               name);
    }
    r->connected = false;
    r->disconnected = false;
    mcarun_modex_rank_gone(r, "exited");
}

void mcarun_job_rank_disconnected(mcarun_rank_t *r)
{
    r->connected = false;
    r->disconnected = true;
    r->disconnect_deadline = opal_timer_ns() + MCARUN_DISCONNECT_GRACE_NS;
}

uint64_t mcarun_job_next_deadline(void)
{
    uint64_t next = mcarun_modex_next_deadline();
    if (0 != mcarun_job.kill_deadline && mcarun_job.kill_deadline < next) {
        next = mcarun_job.kill_deadline;
    }
    if (!mcarun_job.stopping && 0 != mcarun_job.timeout_deadline &&
        mcarun_job.timeout_deadline < next) {
        next = mcarun_job.timeout_deadline;
    }
    for (uint32_t i = 0; i < mcarun_job.size; ++i) {
        const mcarun_rank_t *r = &mcarun_job.ranks[i];
        if (r->disconnected && MCARUN_RANK_RUNNING == r->state && r->disconnect_deadline < next) {
            next = r->disconnect_deadline;
        }
    }
    return next;
}

void mcarun_job_tick(uint64_t now)
{
    if (0 != mcarun_job.kill_deadline && now >= mcarun_job.kill_deadline) {
        mcarun_job.kill_deadline = 0;
        mcarun_signal_ranks(SIGKILL);
    }
    if (!mcarun_job.stopping && 0 != mcarun_job.timeout_deadline &&
        now >= mcarun_job.timeout_deadline) {
        mcarun_job_fail(MCARUN_EXIT_TIMEOUT,
                        "the job did not finish within --timeout %g s; stopping its %lu "
                        "running rank(s)",
                        mcarun_job.opts.timeout_s, (unsigned long) mcarun_job.running);
    }
    for (uint32_t i = 0; i < mcarun_job.size; ++i) {
        mcarun_rank_t *r = &mcarun_job.ranks[i];
        if (r->disconnected && MCARUN_RANK_RUNNING == r->state && now >= r->disconnect_deadline) {
            char name[64];
            r->disconnected = false;
            mcarun_job_rank_failed(MCARUN_EXIT_FAILURE,
                                   "%s closed its connection to mcarun without calling "
                                   "orte_finalize",
                                   mcarun_rank_name(r, name, sizeof(name)));
            mcarun_modex_rank_gone(r, "disconnected");
        }
    }
    mcarun_modex_tick(now);
}
