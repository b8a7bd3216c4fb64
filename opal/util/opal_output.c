#include "opal/opal_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_show_help.h"

typedef struct stream_t {
    /* open and verbosity are read without the lock by
     * opal_output_check_verbosity(), so that a verbose call on a quiet
     * stream costs two loads. Everything else is only touched with
     * table_lock held. */
    atomic_bool open;
    atomic_int verbosity;
    bool to_stderr;
    bool to_stdout;
    bool header;
    char *prefix;
    char *file_name;
    int fd;
} stream_t;

/* Stream 0 is open from the start so that errors can be reported before
 * opal_output_init() and after opal_output_finalize(). */
static stream_t streams[OPAL_OUTPUT_MAX_STREAMS] = {
    [0] = {.open = true, .verbosity = 0, .to_stderr = true, .fd = -1},
};

/* Not an opal_mutex_t: output must work before the object system is
 * initialised and after it is finalized. */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* A child forked while another thread held table_lock would deadlock on its
 * first message; taking the lock across fork() hands the child a lock that
 * nobody holds. */
static void atfork_prepare(void)
{
    pthread_mutex_lock(&table_lock);
}

static void atfork_release(void)
{
    pthread_mutex_unlock(&table_lock);
}

static void register_atfork(void)
{
    pthread_atfork(atfork_prepare, atfork_release, atfork_release);
}

static bool valid_id(int id)
{
    return id >= 0 && id < OPAL_OUTPUT_MAX_STREAMS;
}

/* The caller holds table_lock. */
static void release_stream(stream_t *s)
{
    atomic_store_explicit(&s->open, false, memory_order_relaxed);
    if (s->fd >= 0) {
        close(s->fd);
    }
    free(s->prefix);
    free(s->file_name);
    s->prefix = NULL;
    s->file_name = NULL;
    s->fd = -1;
    s->to_stderr = false;
    s->to_stdout = false;
    s->header = false;
}

int opal_output_init(void)
{
    pthread_once(&atfork_once, register_atfork);
    pthread_mutex_lock(&table_lock);
    atomic_store_explicit(&streams[0].verbosity, 0, memory_order_relaxed);
    pthread_mutex_unlock(&table_lock);
    return OPAL_SUCCESS;
}

void opal_output_finalize(void)
{
    pthread_mutex_lock(&table_lock);
    for (int i = 1; i < OPAL_OUTPUT_MAX_STREAMS; ++i) {
        if (atomic_load_explicit(&streams[i].open, memory_order_relaxed)) {
            release_stream(&streams[i]);
        }
    }
    atomic_store_explicit(&streams[0].verbosity, 0, memory_order_relaxed);
    pthread_mutex_unlock(&table_lock);
}

static int errno_to_opal(int err)
{
    switch (err) {
        case ENOENT:
        case ENOTDIR:
            return OPAL_ERR_NOT_FOUND;
        case EACCES:
        case EPERM:
        case EROFS:
            return OPAL_ERR_PERM;
        case ENOMEM:
            return OPAL_ERR_OUT_OF_RESOURCE;
        default:
            return OPAL_ERR_IN_ERRNO;
    }
}

int opal_output_open(const opal_output_stream_t *lds)
{
    static const opal_output_stream_t defaults = {.lds_want_stderr = true};
    if (NULL == lds) {
        lds = &defaults;
    }

    int rc = OPAL_ERR_OUT_OF_RESOURCE;
    char *prefix = NULL, *file_name = NULL;
    int fd = -1;
    if (NULL != lds->lds_prefix && NULL == (prefix = strdup(lds->lds_prefix))) {
        goto out;
    }
    if (NULL != lds->lds_file_name) {
        if (NULL == (file_name = strdup(lds->lds_file_name))) {
            goto out;
        }
        /* Opened before taking the lock: open() may block (NFS, FIFOs). */
        fd = open(file_name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
        if (fd < 0) {
            int err = errno;
            if (OPAL_SUCCESS != opal_show_help("help-opal-util.txt", "output:file-open-failed",
                                               true, file_name, strerror(err))) {
                /* Without its help file the message must still name the
                 * file. */
                opal_output(0, "opal_output: cannot open output file \"%s\": %s", file_name,
                            strerror(err));
            }
            rc = errno_to_opal(err);
            goto out;
        }
    }

    pthread_mutex_lock(&table_lock);
    for (int i = 1; i < OPAL_OUTPUT_MAX_STREAMS; ++i) {
        stream_t *s = &streams[i];
        if (atomic_load_explicit(&s->open, memory_order_relaxed)) {
            continue;
        }
        s->prefix = prefix;
        s->file_name = file_name;
        s->fd = fd;
        s->to_stderr = lds->lds_want_stderr;
        s->to_stdout = lds->lds_want_stdout;
        s->header = lds->lds_want_header;
        atomic_store_explicit(&s->verbosity, lds->lds_verbose_level, memory_order_relaxed);
        /* Relaxed: the fields above are only read under table_lock, whose
         * release on unlock publishes them. */
        atomic_store_explicit(&s->open, true, memory_order_relaxed);
        pthread_mutex_unlock(&table_lock);
        return i;
    }
    pthread_mutex_unlock(&table_lock);
    opal_output(0, "opal_output: cannot open a stream: all %d streams are in use",
                OPAL_OUTPUT_MAX_STREAMS);
    rc = OPAL_ERR_OUT_OF_RESOURCE;

out:
    if (fd >= 0) {
        close(fd);
    }
    free(file_name);
    free(prefix);
    return rc;
}

void opal_output_close(int id)
{
    if (!valid_id(id) || 0 == id) {
        return;
    }
    pthread_mutex_lock(&table_lock);
    if (atomic_load_explicit(&streams[id].open, memory_order_relaxed)) {
        release_stream(&streams[id]);
    }
    pthread_mutex_unlock(&table_lock);
}

bool opal_output_check_verbosity(int level, int id)
{
    if (!valid_id(id)) {
        return false;
    }
    /* Relaxed: a verbosity change need not be seen at once, and a stream
     * that closes meanwhile is caught again under the lock. */
    const stream_t *s = &streams[id];
    return atomic_load_explicit(&s->open, memory_order_relaxed) &&
           level <= atomic_load_explicit(&s->verbosity, memory_order_relaxed);
}

void opal_output_set_verbosity(int id, int level)
{
    if (!valid_id(id)) {
        return;
    }
    pthread_mutex_lock(&table_lock);
    if (atomic_load_explicit(&streams[id].open, memory_order_relaxed)) {
        atomic_store_explicit(&streams[id].verbosity, level, memory_order_relaxed);
    }
    pthread_mutex_unlock(&table_lock);
}

int opal_output_get_verbosity(int id)
{
    if (!valid_id(id)) {
        return -1;
    }
    pthread_mutex_lock(&table_lock);
    int level = atomic_load_explicit(&streams[id].open, memory_order_relaxed)
                    ? atomic_load_explicit(&streams[id].verbosity, memory_order_relaxed)
                    : -1;
    pthread_mutex_unlock(&table_lock);
    return level;
}

static void write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (EINTR == errno) {
                continue;
            }
            return;
        }
        buf += n;
        len -= (size_t) n;
    }
}

/* Puts prefix in front of every line of msg and ends it with a newline.
 * Returns the length of *out, which is buf when it fits, else malloc'd;
 * 0 with *out NULL when out of memory. */
static size_t decorate(const char *prefix, const char *msg, char *buf, size_t bufsize, char **out)
{
    size_t plen = NULL == prefix ? 0 : strlen(prefix);
    size_t mlen = strlen(msg);
    size_t lines = 1;
    for (const char *p = msg; *p; ++p) {
        /* A final newline ends the last line rather than starting one. */
        if ('\n' == *p && '\0' != p[1]) {
            ++lines;
        }
    }
    size_t total = lines * plen + mlen + (0 == mlen || '\n' != msg[mlen - 1] ? 1 : 0);
    char *dst = buf;
    if (total + 1 > bufsize && NULL == (dst = malloc(total + 1))) {
        *out = NULL;
        return 0;
    }
    char *w = dst;
    const char *line = msg;
    for (size_t i = 0; i < lines; ++i) {
        const char *nl = strchr(line, '\n');
        size_t llen = NULL == nl ? strlen(line) : (size_t) (nl - line);
        if (plen > 0) {
            memcpy(w, prefix, plen);
            w += plen;
        }
        memcpy(w, line, llen);
        w += llen;
        *w++ = '\n';
        line = NULL == nl ? line + llen : nl + 1;
    }
    *w = '\0';
    *out = dst;
    return total;
}

const char *opal_output_level_name(int level)
{
    return level <= 0    ? "error"
           : level <= 5  ? "warn"
           : level <= 10 ? "info"
           : level <= 40 ? "debug"
                         : "trace";
}

/* Writes "<UTC time> <prefix> <level>: " into buf. */
static void log_header(const char *prefix, int level, char *buf, size_t size)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    char when[32];
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, size, "%s.%06ldZ %s %s: ", when, ts.tv_nsec / 1000, NULL == prefix ? "" : prefix,
             opal_output_level_name(level));
}

static void emit(int level, int id, const char *format, va_list ap) OPAL_PRINTF_LIKE(3, 0);
static void emit(int level, int id, const char *format, va_list ap)
{
    int saved_errno = errno;
    char msgbuf[512], linebuf[1024];
    char *msg = msgbuf;
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(msgbuf, sizeof(msgbuf), format, ap);
    if (n < 0) {
        va_end(ap2);
        goto out;
    }
    if ((size_t) n >= sizeof(msgbuf)) {
        if (NULL == (msg = malloc((size_t) n + 1))) {
            va_end(ap2);
            goto out;
        }
        vsnprintf(msg, (size_t) n + 1, format, ap2);
    }
    va_end(ap2);

    pthread_mutex_lock(&table_lock);
    stream_t *s = &streams[id];
    if (atomic_load_explicit(&s->open, memory_order_relaxed)) {
        char *text, header[320];
        const char *prefix = s->prefix;
        if (s->header) {
            log_header(s->prefix, level, header, sizeof(header));
            prefix = header;
        }
        size_t len = decorate(prefix, msg, linebuf, sizeof(linebuf), &text);
        if (NULL != text) {
            if (s->to_stdout) {
                /* Keep order with what the program printed through stdio. */
                fflush(stdout);
                write_all(STDOUT_FILENO, text, len);
            }
            if (s->to_stderr) {
                write_all(STDERR_FILENO, text, len);
            }
            if (s->fd >= 0) {
                write_all(s->fd, text, len);
            }
            if (text != linebuf) {
                free(text);
            }
        }
    }
    pthread_mutex_unlock(&table_lock);

    if (msg != msgbuf) {
        free(msg);
    }
out:
    /* Callers often print strerror(errno) next. */
    errno = saved_errno;
}

void opal_output(int id, const char *format, ...)
{
    if (!valid_id(id) || !atomic_load_explicit(&streams[id].open, memory_order_relaxed)) {
        return;
    }
    va_list ap;
    va_start(ap, format);
    emit(0, id, format, ap);
    va_end(ap);
}

void opal_output_vverbose(int level, int id, const char *format, va_list ap)
{
    if (opal_output_check_verbosity(level, id)) {
        emit(level, id, format, ap);
    }
}

void opal_output_verbose(int level, int id, const char *format, ...)
{
    if (!opal_output_check_verbosity(level, id)) {
        return;
    }
    va_list ap;
    va_start(ap, format);
    emit(level, id, format, ap);
    va_end(ap);
}

int opal_output_expand_path(const char *pattern, char *out, size_t size)
{
    const char *rank = getenv("OPAL_ORTE_RANK");
    size_t used = 0;
    for (const char *p = pattern; '\0' != *p; ++p) {
        char piece[32];
        const char *add = piece;
        if ('%' == p[0] && 'r' == p[1]) {
            add = NULL != rank ? rank : "none";
            ++p;
        } else if ('%' == p[0] && 'p' == p[1]) {
            snprintf(piece, sizeof(piece), "%ld", (long) getpid());
            ++p;
        } else {
            piece[0] = *p;
            piece[1] = '\0';
        }
        size_t n = strlen(add);
        if (used + n >= size) {
            return OPAL_ERR_BAD_PARAM;
        }
        memcpy(out + used, add, n);
        used += n;
    }
    out[used] = '\0';
    return OPAL_SUCCESS;
}
