/*
 * Error codes: OPAL_SUCCESS (0) and negative OPAL_ERR_*. The codes, their
 * names and their messages come from one X-macro table, so the three can
 * never drift apart.
 */
#ifndef OPAL_UTIL_OPAL_ERROR_H
#define OPAL_UTIL_OPAL_ERROR_H

#include "opal/opal_config.h"

#include <stddef.h>

/* X(name, value, message). Values are stable: append, never renumber. */
#define OPAL_ERROR_TABLE(X)                                                                        \
    X(OPAL_SUCCESS, 0, "Success")                                                                  \
    X(OPAL_ERROR, -1, "Error")                                                                     \
    X(OPAL_ERR_OUT_OF_RESOURCE, -2, "Out of resource")                                             \
    X(OPAL_ERR_TEMP_OUT_OF_RESOURCE, -3, "Temporarily out of resource")                            \
    X(OPAL_ERR_RESOURCE_BUSY, -4, "Resource busy")                                                 \
    X(OPAL_ERR_BAD_PARAM, -5, "Bad parameter")                                                     \
    X(OPAL_ERR_FATAL, -6, "Fatal error")                                                           \
    X(OPAL_ERR_NOT_SUPPORTED, -7, "Not supported")                                                 \
    X(OPAL_ERR_NOT_FOUND, -8, "Not found")                                                         \
    X(OPAL_ERR_EXISTS, -9, "Already exists")                                                       \
    X(OPAL_ERR_TIMEOUT, -10, "Timed out")                                                          \
    X(OPAL_ERR_WOULD_BLOCK, -11, "Operation would block")                                          \
    X(OPAL_ERR_IN_ERRNO, -12, "Error in errno")                                                    \
    X(OPAL_ERR_UNREACH, -13, "Unreachable")                                                        \
    X(OPAL_ERR_VALUE_OUT_OF_BOUNDS, -14, "Value out of bounds")                                    \
    X(OPAL_ERR_NOT_INITIALIZED, -15, "Not initialized")                                            \
    X(OPAL_ERR_TRUNCATED, -16, "Data truncated")                                                   \
    X(OPAL_ERR_PARSE, -17, "Parse error")                                                          \
    X(OPAL_ERR_COMM_FAILURE, -18, "Communication failure")                                         \
    X(OPAL_ERR_PEER_FAILED, -19, "Peer failed")                                                    \
    X(OPAL_ERR_PROTOCOL, -20, "Protocol error: malformed message from a peer")                     \
    X(OPAL_ERR_CANCELED, -21, "Canceled")                                                          \
    X(OPAL_ERR_PERM, -22, "Permission denied")                                                     \
    X(OPAL_ERR_NOT_AVAILABLE, -23, "Not available here")                                           \
    X(OPAL_ERR_VERSION_MISMATCH, -24, "Version mismatch")                                          \
    X(OPAL_ERR_UNKNOWN_NAME, -25, "Unknown name")                                                  \
    X(OPAL_ERR_BAD_VALUE, -26, "Bad value")                                                        \
    X(OPAL_ERR_DECLINED, -27, "Declined to run")                                                   \
    X(OPAL_ERR_SILENT, -28, "Error already reported")                                              \
    X(OPAL_ERR_HLC_SYNC, -29, "A peer's clock is ahead past the HLC epsilon")

enum {
#define OPAL_ERROR_ENUM(name, value, message) name = (value),
    OPAL_ERROR_TABLE(OPAL_ERROR_ENUM)
#undef OPAL_ERROR_ENUM
};

/* The message for an error code; "Unknown error code <n>" for a code not in
 * the table. The string is static (or, for unknown codes, thread-local) and
 * must not be freed. */
OPAL_DECLSPEC const char *opal_strerror(int code);

/* The symbolic name of an error code ("OPAL_ERR_TIMEOUT"), or NULL. */
OPAL_DECLSPEC const char *opal_strerror_name(int code);

/* For decoders that say why they refused: formats the reason into why (size
 * bytes, truncated to fit; nothing when why is NULL or size 0) and returns
 * code. */
OPAL_DECLSPEC int opal_error_why(int code, char *why, size_t size, const char *format, ...)
    OPAL_PRINTF_LIKE(4, 5);

#endif /* OPAL_UTIL_OPAL_ERROR_H */
