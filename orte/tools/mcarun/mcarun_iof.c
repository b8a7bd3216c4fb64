/*
 * The ranks' standard streams.
 *
 * stdout and stderr come back through one pipe each and are written to
 * mcarun's own by whole lines, one writev per batch, so two ranks never
 * share a line. A line longer than MCARUN_LINE_MAX, or a last line without
 * its newline, is printed in pieces that end with a newline. With one
 * rank and no tags there is nobody to interleave with, and bytes pass
 * unchanged. With --output-filename each rank writes its own files
 * directly and nothing passes through mcarun.
 *
 * stdin goes to rank 0: when mcarun's stdin is a file or a pipe, rank 0
 * simply gets it; a terminal is read by mcarun (rank 0 is in a background
 * process group and could not read it) and pumped into a pipe.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "orte/tools/mcarun/mcarun.h"

#define IOV_BATCH 510 /* even: a tag and its line travel together */
#define STDIN_BUF (64u * 1024u)
/* Reads per drain of an exited rank's pipe: what it wrote is there, but
 * something it left running could keep writing forever. */
#define DRAIN_READS 64

typedef enum { STDIN_NONE, STDIN_PASS, STDIN_PUMP } stdin_mode_t;

static struct {
    bool broken[3]; /* mcarun's stdout/stderr can no longer be written */
    stdin_mode_t stdin_mode;
    struct mcarun_watch_t *stdin_watch;
    struct mcarun_watch_t *pipe_watch; /* rank 0's stdin pipe */
    char *stdin_buf;
    size_t stdin_len;
    bool stdin_eof;
} iof;

/* Writes every byte of iov, waiting when the fd is non-blocking and full
 * (a terminal shared with a shell that set O_NONBLOCK on it). */
static int write_all(int fd, struct iovec *iov, int n)
{
    while (0 < n) {
        ssize_t w = writev(fd, iov, n);
        if (w < 0) {
            if (EINTR == errno) {
                continue;
            }
            if (EAGAIN == errno) {
                struct pollfd p = {.fd = fd, .events = POLLOUT};
                poll(&p, 1, -1);
                continue;
            }
            return OPAL_ERR_IN_ERRNO;
        }
        while (0 < n && (size_t) w >= iov[0].iov_len) {
            w -= (ssize_t) iov[0].iov_len;
            ++iov;
            --n;
        }
        if (0 < n) {
            iov[0].iov_base = (char *) iov[0].iov_base + w;
            iov[0].iov_len -= (size_t) w;
        }
    }
    return OPAL_SUCCESS;
}

/* A failed write means mcarun's stdout or stderr lost its reader: every
 * stream going there is closed at its next read, so that the ranks meet
 * the broken pipe themselves, as they would without mcarun. */
static void flush_iov(mcarun_stream_t *s, struct iovec *iov, int *n)
{
    if (0 < *n && !iof.broken[s->dest] && OPAL_SUCCESS != write_all(s->dest, iov, *n)) {
        iof.broken[s->dest] = true;
    }
    *n = 0;
}

/* Writes data: whole lines, each ending with '\n', or (piece) one piece
 * of a line, to which a newline is added. */
static void emit(mcarun_stream_t *s, char *data, size_t len, bool piece)
{
    static char newline[] = "\n";
    struct iovec iov[IOV_BATCH + 2];
    int n = 0;
    if (0 == len || iof.broken[s->dest]) {
        return;
    }
    if (s->raw) {
        iov[n++] = (struct iovec){data, len};
        flush_iov(s, iov, &n);
        return;
    }
    if (0 == s->tag_len) {
        iov[n++] = (struct iovec){data, len};
    } else {
        for (size_t at = 0; at < len;) {
            char *nl = memchr(data + at, '\n', len - at);
            size_t end = NULL == nl ? len : (size_t) (nl - data) + 1;
            iov[n++] = (struct iovec){s->tag, s->tag_len};
            iov[n++] = (struct iovec){data + at, end - at};
            at = end;
            if (n >= IOV_BATCH) {
                flush_iov(s, iov, &n);
            }
        }
    }
    if (piece) {
        iov[n++] = (struct iovec){newline, 1};
    }
    flush_iov(s, iov, &n);
}

typedef enum { READ_DATA, READ_EMPTY, READ_END } read_result_t;

/* Reads once from the stream and writes out what is complete. */
static read_result_t stream_read(mcarun_stream_t *s)
{
    char raw[MCARUN_LINE_MAX];
    char *into = s->raw ? raw : s->buf + s->len;
    if (iof.broken[s->dest]) {
        return READ_END;
    }
    ssize_t n = read(s->fd, into, s->raw ? sizeof(raw) : MCARUN_LINE_MAX - s->len);
    if (n <= 0) {
        return n < 0 && (EAGAIN == errno || EINTR == errno) ? READ_EMPTY : READ_END;
    }
    if (s->raw) {
        emit(s, raw, (size_t) n, false);
        return iof.broken[s->dest] ? READ_END : READ_DATA;
    }
    s->len += (size_t) n;
    char *last = memrchr(s->buf, '\n', s->len);
    if (NULL != last) {
        size_t whole = (size_t) (last - s->buf) + 1;
        emit(s, s->buf, whole, false);
        memmove(s->buf, s->buf + whole, s->len - whole);
        s->len -= whole;
    } else if (MCARUN_LINE_MAX == s->len) {
        emit(s, s->buf, s->len, true);
        s->len = 0;
    }
    return iof.broken[s->dest] ? READ_END : READ_DATA;
}

static void stream_close(mcarun_stream_t *s)
{
    if (s->fd < 0) {
        return;
    }
    if (0 < s->len) {
        emit(s, s->buf, s->len, true);
        s->len = 0;
    }
    mcarun_loop_remove(s->watch);
    s->watch = NULL;
    close(s->fd);
    s->fd = -1;
    free(s->buf);
    s->buf = NULL;
}

static void on_stream(void *ctx, uint32_t events)
{
    mcarun_stream_t *s = ctx;
    (void) events;
    if (READ_END == stream_read(s)) {
        stream_close(s);
    }
}

/* Opens DIR/rank.N/NAME for a rank to write itself. */
static int open_output_file(const mcarun_rank_t *r, const char *name)
{
    char path[ORTE_SESSION_DIR_MAX];
    snprintf(path, sizeof(path), "%s/rank.%lu", mcarun_job.opts.output_dir,
             (unsigned long) r->rank);
    if (0 != mkdir(path, 0755) && EEXIST != errno) {
        opal_output(0, "mcarun: --output-filename: cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    size_t len = strlen(path);
    snprintf(path + len, sizeof(path) - len, "/%s", name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        opal_output(0, "mcarun: --output-filename: cannot open %s: %s", path, strerror(errno));
    }
    return fd;
}

static int stream_prepare(mcarun_rank_t *r, mcarun_stream_t *s, int dest, int *child_fd)
{
    const char *name = 1 == dest ? "stdout" : "stderr";
    s->fd = -1;
    s->dest = dest;
    if (NULL != mcarun_job.opts.output_dir) {
        *child_fd = open_output_file(r, name);
        return *child_fd < 0 ? OPAL_ERR_IN_ERRNO : OPAL_SUCCESS;
    }
    int fds[2];
    if (0 != pipe2(fds, O_CLOEXEC)) {
        return OPAL_ERR_IN_ERRNO;
    }
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    s->fd = fds[0];
    *child_fd = fds[1];
    s->raw = 1 == mcarun_job.size && !mcarun_job.opts.tag_output;
    if (mcarun_job.opts.tag_output) {
        s->tag_len =
            (size_t) snprintf(s->tag, sizeof(s->tag), "[%lu]<%s>: ", (unsigned long) r->rank, name);
    }
    if (!s->raw && NULL == (s->buf = malloc(MCARUN_LINE_MAX))) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    return OPAL_SUCCESS;
}

int mcarun_iof_prepare(mcarun_rank_t *r, int child_fds[3])
{
    int rc;
    r->stdin_fd = -1;
    if (0 == r->rank && STDIN_PASS == iof.stdin_mode) {
        child_fds[0] = 0;
    } else if (0 == r->rank && STDIN_PUMP == iof.stdin_mode) {
        int fds[2];
        if (0 != pipe2(fds, O_CLOEXEC)) {
            return OPAL_ERR_IN_ERRNO;
        }
        fcntl(fds[1], F_SETFL, O_NONBLOCK);
        child_fds[0] = fds[0];
        r->stdin_fd = fds[1];
    } else {
        child_fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (child_fds[0] < 0) {
            return OPAL_ERR_IN_ERRNO;
        }
    }
    rc = stream_prepare(r, &r->out, 1, &child_fds[1]);
    if (OPAL_SUCCESS == rc) {
        rc = stream_prepare(r, &r->err, 2, &child_fds[2]);
    }
    return rc;
}

static void stream_start(mcarun_stream_t *s)
{
    if (0 <= s->fd) {
        s->watch = mcarun_loop_add(s->fd, EPOLLIN, on_stream, s);
        if (NULL == s->watch) {
            stream_close(s);
        }
    }
}

static void pump_stop(void)
{
    mcarun_loop_remove(iof.stdin_watch);
    iof.stdin_watch = NULL;
    mcarun_loop_remove(iof.pipe_watch);
    iof.pipe_watch = NULL;
    mcarun_rank_t *r0 = &mcarun_job.ranks[0];
    if (0 <= r0->stdin_fd) {
        close(r0->stdin_fd);
        r0->stdin_fd = -1;
    }
}

/* Moves what the buffer holds into rank 0's pipe; watches the terminal
 * only while there is room, and the pipe only while it is full. */
static void pump(void)
{
    mcarun_rank_t *r0 = &mcarun_job.ranks[0];
    if (0 < iof.stdin_len) {
        ssize_t n = write(r0->stdin_fd, iof.stdin_buf, iof.stdin_len);
        if (n < 0 && EAGAIN != errno && EINTR != errno) {
            pump_stop(); /* rank 0 closed its stdin or exited */
            return;
        }
        if (0 < n) {
            memmove(iof.stdin_buf, iof.stdin_buf + n, iof.stdin_len - (size_t) n);
            iof.stdin_len -= (size_t) n;
        }
    }
    if (0 == iof.stdin_len && iof.stdin_eof) {
        pump_stop();
        return;
    }
    mcarun_loop_modify(iof.pipe_watch, 0 < iof.stdin_len ? EPOLLOUT : 0);
    if (NULL != iof.stdin_watch) {
        mcarun_loop_modify(iof.stdin_watch, iof.stdin_len < STDIN_BUF ? EPOLLIN : 0);
    }
}

static void on_stdin(void *ctx, uint32_t events)
{
    (void) ctx;
    (void) events;
    ssize_t n = read(0, iof.stdin_buf + iof.stdin_len, STDIN_BUF - iof.stdin_len);
    if (0 < n) {
        iof.stdin_len += (size_t) n;
    } else if (0 == n || (EAGAIN != errno && EINTR != errno)) {
        iof.stdin_eof = true;
        mcarun_loop_remove(iof.stdin_watch);
        iof.stdin_watch = NULL;
    }
    pump();
}

static void on_stdin_pipe(void *ctx, uint32_t events)
{
    (void) ctx;
    (void) events;
    pump();
}

void mcarun_iof_started(mcarun_rank_t *r)
{
    stream_start(&r->out);
    stream_start(&r->err);
    if (0 <= r->stdin_fd) {
        iof.stdin_buf = malloc(STDIN_BUF);
        iof.pipe_watch = mcarun_loop_add(r->stdin_fd, 0, on_stdin_pipe, NULL);
        /* A background mcarun reading its terminal would be stopped. */
        if (NULL != iof.stdin_buf && NULL != iof.pipe_watch && tcgetpgrp(0) == getpgrp()) {
            iof.stdin_watch = mcarun_loop_add(0, EPOLLIN, on_stdin, NULL);
        }
        if (NULL == iof.stdin_watch) {
            pump_stop();
        }
    }
}

void mcarun_iof_drain(mcarun_rank_t *r)
{
    mcarun_stream_t *streams[2] = {&r->out, &r->err};
    for (int i = 0; i < 2; ++i) {
        for (int k = 0; k < DRAIN_READS && 0 <= streams[i]->fd; ++k) {
            if (READ_DATA != stream_read(streams[i])) {
                break;
            }
        }
        stream_close(streams[i]);
    }
    if (0 == r->rank && 0 <= r->stdin_fd) {
        pump_stop();
    }
}

void mcarun_iof_close(mcarun_rank_t *r)
{
    stream_close(&r->out);
    stream_close(&r->err);
    if (0 == r->rank && 0 <= r->stdin_fd) {
        pump_stop();
    }
}

int mcarun_iof_stdin_init(void)
{
    struct stat st;
    if (0 != fstat(0, &st)) {
        iof.stdin_mode = STDIN_NONE;
    } else if (isatty(0)) {
        iof.stdin_mode = STDIN_PUMP;
    } else {
        iof.stdin_mode = STDIN_PASS;
    }
    return OPAL_SUCCESS;
}

void mcarun_iof_stdin_fini(void)
{
    free(iof.stdin_buf);
    iof.stdin_buf = NULL;
}
