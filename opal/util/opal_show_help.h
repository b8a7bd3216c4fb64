/*
 * Help messages kept in text files rather than in the code, so a message
 * can be long, explain what to do, and be changed without recompiling.
 *
 * A help file holds topics:
 *
 *     # a comment: a line starting with '#' is skipped everywhere
 *     [topic-name]
 *     The text of the topic, printf-style: the process %s found %d
 *     devices.
 *
 * A topic's text runs to the next "[name]" line or the end of the file;
 * blank lines at its start and end are dropped. A file name containing '/'
 * is opened as given; any other is looked up in each directory of the
 * colon-separated environment variable OPAL_SHOW_HELP_PATH, then in the
 * installed data directory; the first file found is used.
 *
 * The text is formatted with the caller's arguments. Supported conversions:
 * %% %c %s %p, %d %i %o %u %x %X with length hh h l ll z j t, and
 * %e %E %f %F %g %G %a %A with optional L; each may have the flags "-+ #0",
 * a width and a precision of at most 4 digits. Anything else (including
 * %n and '*' widths) is copied literally; write %% for a percent sign, as
 * "% d" is a conversion. A NULL %s prints "(null)". The arguments must
 * match the conversions in number and type, as for printf.
 */
#ifndef OPAL_UTIL_OPAL_SHOW_HELP_H
#define OPAL_UTIL_OPAL_SHOW_HELP_H

#include "opal/opal_config.h"

#include <stdarg.h>
#include <stdbool.h>

/* Starts show_help; called by opal_init_util(). Returns OPAL_SUCCESS. */
OPAL_DECLSPEC int opal_show_help_init(void);

/* Forgets which topics were shown and restores output to stream 0; called
 * by opal_finalize_util(). show_help keeps working afterwards. */
OPAL_DECLSPEC void opal_show_help_finalize(void);

/* want_error_header is an int, not a bool, in all four functions: the
 * parameter before "..." must not be a type that is promoted (C11
 * 7.16.1.4), and the va_list variants keep the same signature. */

/* Prints topic from filename, formatted with the varargs, as one message
 * on the help output stream (stream 0, stderr, unless changed); framed by
 * separator lines when want_error_header is non-zero. A (filename, topic) pair
 * is printed once per process whatever the arguments: later calls return
 * OPAL_SUCCESS quietly. A missing file or topic prints a message naming
 * them and where they were looked for, and returns OPAL_ERR_NOT_FOUND. */
OPAL_DECLSPEC int opal_show_help(const char *filename, const char *topic, int want_error_header,
                                 ...);

/* opal_show_help() taking a va_list. */
OPAL_DECLSPEC int opal_show_vhelp(const char *filename, const char *topic, int want_error_header,
                                  va_list ap);

/* The text opal_show_help() would print (with the not-found message for a
 * missing file or topic), without printing it or marking it shown. The
 * caller frees it; NULL only when out of memory. */
OPAL_DECLSPEC char *opal_show_help_string(const char *filename, const char *topic,
                                          int want_error_header, ...);

/* opal_show_help_string() taking a va_list. */
OPAL_DECLSPEC char *opal_show_help_vstring(const char *filename, const char *topic,
                                           int want_error_header, va_list ap);

/* Sends help messages to opal_output stream output_id from now on (its
 * prefix applies to every line). Returns the previous stream id. */
OPAL_DECLSPEC int opal_show_help_set_output(int output_id);

#endif /* OPAL_UTIL_OPAL_SHOW_HELP_H */
