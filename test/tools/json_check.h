/*
 * A strict JSON checker for the tests of opal_info --json: the whole text
 * must be one JSON value (RFC 8259) with only whitespace around it,
 * strings must be valid UTF-8 without raw control characters, and no
 * object may repeat a key.
 */
#ifndef OPAL_TEST_TOOLS_JSON_CHECK_H
#define OPAL_TEST_TOOLS_JSON_CHECK_H

#include <stdbool.h>

/* True when text is valid JSON as above; otherwise false and, when error
 * is not NULL, a malloc'd message with the byte offset of the problem. */
bool json_check(const char *text, char **error);

#endif /* OPAL_TEST_TOOLS_JSON_CHECK_H */
