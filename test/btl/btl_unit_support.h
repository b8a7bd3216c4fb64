/*
 * What the btl unit tests share: a clean MCA environment, capturing what
 * is printed on stderr, and fake processes.
 */
#ifndef OPAL_TEST_BTL_BTL_UNIT_SUPPORT_H
#define OPAL_TEST_BTL_BTL_UNIT_SUPPORT_H

#include "opal/opal_config.h"

#include <stdint.h>

#include "opal/runtime/opal_proc.h"

/* Removes every OPAL_MCA_* variable and points the component path at a
 * directory without plugins, so that only what a test adds (and the
 * built-in components of a --disable-mca-dso build) is found. */
void btl_unit_clean_env(void);

/* Everything written to stderr between start and end (malloc'd; also
 * echoed to the real stderr for the test's log). */
void btl_unit_capture_start(void);
char *btl_unit_capture_end(void);

/* A process that is not this one: rank, host (copied). The caller owns
 * the reference. */
opal_proc_t *btl_unit_proc(uint32_t rank, const char *host);

#endif /* OPAL_TEST_BTL_BTL_UNIT_SUPPORT_H */
