/*
 * Parser for "key = value" files (MCA parameter files).
 *
 *     # a comment line; blank lines are skipped
 *     btl = self,sm            # a comment after whitespace
 *     btl_sm_eager_limit=4096
 *     prefix = "a # kept"      # quotes keep '#' and outer spaces
 *     path = 'C:\dir'          # single quotes: no escapes at all
 *     msg = "say \"hi\" \\o/"  # double quotes: \" and \\ are escapes
 *     empty =                  # an empty value is allowed
 *
 * Keys are one or more of [A-Za-z0-9_.-]. Leading and trailing whitespace
 * (space, tab, CR) around keys and values is dropped. In an unquoted value,
 * a '#' preceded by whitespace starts a comment ("a#b" is a value), and
 * quote characters are ordinary. In double quotes, a backslash before any
 * character other than '"' or '\' is kept as it is. After a closing quote
 * only whitespace and a comment may follow.
 *
 * A bad line is reported and skipped; parsing goes on so that one run shows
 * every error in the file, and the good lines are still delivered (a caller
 * wanting all-or-nothing collects the pairs and applies them on success).
 */
#ifndef OPAL_UTIL_OPAL_KEYVAL_H
#define OPAL_UTIL_OPAL_KEYVAL_H

#include "opal/opal_config.h"

/* X(kind, what): every way a file can be refused. */
#define OPAL_KEYVAL_ERROR_TABLE(X)                                                                 \
    X(OPAL_KEYVAL_ERR_UNREADABLE, "cannot read the file")                                          \
    X(OPAL_KEYVAL_ERR_MISSING_EQUALS, "missing '=' after the key")                                 \
    X(OPAL_KEYVAL_ERR_EMPTY_KEY, "empty key before '='")                                           \
    X(OPAL_KEYVAL_ERR_BAD_KEY, "invalid character in key")                                         \
    X(OPAL_KEYVAL_ERR_UNTERMINATED_QUOTE, "unterminated quote")                                    \
    X(OPAL_KEYVAL_ERR_TRAILING_TEXT, "text after the closing quote")                               \
    X(OPAL_KEYVAL_ERR_NUL_BYTE, "NUL byte in the line")

typedef enum {
#define OPAL_KEYVAL_ERROR_ENUM(kind, what) kind,
    OPAL_KEYVAL_ERROR_TABLE(OPAL_KEYVAL_ERROR_ENUM)
#undef OPAL_KEYVAL_ERROR_ENUM
} opal_keyval_error_kind_t;

/* One refused line (or file), as handed to the error callback. The strings
 * live until the callback returns. */
typedef struct opal_keyval_error_t {
    opal_keyval_error_kind_t kind;
    const char *source; /* the file name, or the source name of a string */
    int lineno;         /* 1-based; 0 when the whole file could not be read */
    /* A complete sentence naming source:line and what was wrong, e.g.
     * "params.conf:3: missing '=' after the key in \"btl self\"". */
    const char *message;
} opal_keyval_error_t;

/* Receives one pair. key and value live until the callback returns.
 * Returning anything but OPAL_SUCCESS stops parsing and is returned. */
typedef int (*opal_keyval_pair_fn_t)(const char *key, const char *value, const char *source,
                                     int lineno, void *ctx);

/* Receives one error. */
typedef void (*opal_keyval_error_fn_t)(const opal_keyval_error_t *error, void *ctx);

/* Parses filename, calling pair_fn for each pair in file order and error_fn
 * (NULL: print the message on opal_output stream 0) for each bad line.
 * Returns OPAL_SUCCESS; OPAL_ERR_PARSE when any line was bad; for a file
 * that cannot be read OPAL_ERR_NOT_FOUND (missing), OPAL_ERR_PERM or
 * OPAL_ERR_IN_ERRNO, after reporting it; pair_fn's error; or
 * OPAL_ERR_OUT_OF_RESOURCE. */
OPAL_DECLSPEC int opal_keyval_parse(const char *filename, opal_keyval_pair_fn_t pair_fn,
                                    opal_keyval_error_fn_t error_fn, void *ctx);

/* The same for the text in buffer, reported under the name source. */
OPAL_DECLSPEC int opal_keyval_parse_string(const char *buffer, const char *source,
                                           opal_keyval_pair_fn_t pair_fn,
                                           opal_keyval_error_fn_t error_fn, void *ctx);

/* What an error kind means, e.g. "unterminated quote"; "unknown" for a
 * value outside the table. Static. */
OPAL_DECLSPEC const char *opal_keyval_error_what(opal_keyval_error_kind_t kind);

#endif /* OPAL_UTIL_OPAL_KEYVAL_H */
