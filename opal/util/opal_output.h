/*
 * Output streams with verbosity. A stream has a prefix, a verbosity level
 * and any mix of destinations (stderr, stdout, a file). Each message is
 * written with one write() per destination, so lines from different threads
 * or processes never interleave mid-line. All functions are thread-safe.
 *
 * Stream 0 always exists: stderr, no prefix, verbosity 0. It works before
 * opal_output_init() and after opal_output_finalize(), so errors can always
 * be reported. An id that is not open (never opened, closed, or out of
 * range) is ignored: output to it is dropped, queries return defaults.
 */
#ifndef OPAL_UTIL_OPAL_OUTPUT_H
#define OPAL_UTIL_OPAL_OUTPUT_H

#include "opal/opal_config.h"

#include <stdarg.h>
#include <stdbool.h>

/* How many streams may be open at once, stream 0 included. */
#define OPAL_OUTPUT_MAX_STREAMS 64

/* What opal_output_open() needs to know about a new stream. */
typedef struct opal_output_stream_t {
    /* Put in front of every line, e.g. "[host:1234] btl: "; copied; NULL
     * for none. */
    const char *lds_prefix;
    /* opal_output_verbose(level, ...) prints when level <= this. */
    int lds_verbose_level;
    bool lds_want_stderr;
    bool lds_want_stdout;
    /* A file to append to, created (mode 0666 & ~umask) if missing; copied;
     * NULL for none. */
    const char *lds_file_name;
    /* Log records: every line starts with the UTC time to the microsecond,
     * then lds_prefix (e.g. "rank 3 pid 4711 btl"), then the message's
     * level name (opal_output_level_name), as in
     * "2026-11-25T17:45:01.123456Z rank 3 pid 4711 btl debug: text". */
    bool lds_want_header;
} opal_output_stream_t;

/* The name of a verbosity level as log records show it: error (<= 0),
 * warn (<= 5), info (<= 10), debug (<= 40), trace (above). */
OPAL_DECLSPEC const char *opal_output_level_name(int level);

/* Sets up the stream table; called by opal_init_util(). Streams opened
 * before it stay open. Returns OPAL_SUCCESS. */
OPAL_DECLSPEC int opal_output_init(void);

/* Closes every stream except 0; called by opal_finalize_util(). Their ids
 * become invalid. Stream 0 keeps writing to stderr. */
OPAL_DECLSPEC void opal_output_finalize(void);

/* Opens a stream described by lds (NULL: stderr, no prefix, verbosity 0).
 * Returns its id (>= 1, the lowest free one), or a negative OPAL_ERR_*:
 * OPAL_ERR_OUT_OF_RESOURCE when all ids are in use, or the file's error
 * (OPAL_ERR_NOT_FOUND, OPAL_ERR_PERM, OPAL_ERR_IN_ERRNO), reported with
 * opal_show_help naming the file. */
OPAL_DECLSPEC int opal_output_open(const opal_output_stream_t *lds);

/* Closes stream id (closing its file) and frees the id for reuse. Closing
 * stream 0 or an id that is not open does nothing. */
OPAL_DECLSPEC void opal_output_close(int id);

/* Writes a printf-style message to stream id whatever its verbosity. Every
 * line gets the stream's prefix; a missing final newline is added. */
OPAL_DECLSPEC void opal_output(int id, const char *format, ...) OPAL_PRINTF_LIKE(2, 3);

/* Writes the message only when level <= the stream's verbosity. */
OPAL_DECLSPEC void opal_output_verbose(int level, int id, const char *format, ...)
    OPAL_PRINTF_LIKE(3, 4);

/* opal_output_verbose() taking a va_list, for wrappers. */
OPAL_DECLSPEC void opal_output_vverbose(int level, int id, const char *format, va_list ap)
    OPAL_PRINTF_LIKE(3, 0);

/* True when opal_output_verbose(level, id, ...) would print: lets callers
 * skip computing expensive arguments. */
OPAL_DECLSPEC bool opal_output_check_verbosity(int level, int id);

/* Changes stream id's verbosity; ignored for an id that is not open. */
OPAL_DECLSPEC void opal_output_set_verbosity(int id, int level);

/* Stream id's verbosity, or -1 for an id that is not open. */
OPAL_DECLSPEC int opal_output_get_verbosity(int id);

/* Writes pattern to out (size bytes) with %r replaced by the rank
 * ($OPAL_ORTE_RANK, "none" outside a job) and %p by the pid, for the
 * per-process files of opal_log_file and opal_timeline_file.
 * OPAL_ERR_BAD_PARAM when the result does not fit. */
OPAL_DECLSPEC int opal_output_expand_path(const char *pattern, char *out, size_t size);

#endif /* OPAL_UTIL_OPAL_OUTPUT_H */
