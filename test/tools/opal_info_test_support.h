/*
 * What the tests of opal_info share: running opal_info_main() in this
 * process with its output captured, a clean environment, and comparing
 * output with the expected files under test/tools/data/.
 */
#ifndef OPAL_TEST_TOOLS_OPAL_INFO_TEST_SUPPORT_H
#define OPAL_TEST_TOOLS_OPAL_INFO_TEST_SUPPORT_H

#include "opal/opal_config.h"

#include <stdbool.h>

#include "opal/mca/base/mca_base_framework.h"

/* One run of opal_info: its exit status and what it printed. */
typedef struct {
    int status;
    char *out;
    char *err;
} oi_run_t;

/* Starts a test from a clean slate: no OPAL_MCA_* variable set, no
 * parameter file, no plugin directory, mcatest with its built-in
 * components and its own flags (a test may change them). */
void oi_reset(void);

/* Sets OPAL_MCA_<name> to value (NULL unsets it). */
void oi_set(const char *name, const char *value);

/* mcatest's components come from the build tree's plugins only. */
void oi_plugins_only(void);

/* Runs opal_info_main over frameworks (NULL-terminated) with the
 * arguments that follow (ended by NULL), stdout and stderr captured. */
oi_run_t oi_run_with(mca_base_framework_t *const *frameworks, const char *arg, ...);

/* The same over the mcatest framework alone. */
#define oi_run(...) oi_run_with(oi_mcatest_only, __VA_ARGS__)
extern mca_base_framework_t *const oi_mcatest_only[];

void oi_run_free(oi_run_t *run);

/* The lines of text that start with prefix, joined (malloc'd; "" when
 * none). */
char *oi_lines_starting(const char *text, const char *prefix);

/* text with what differs between builds replaced: the build tree by
 * @BUILDDIR@, the package version by @VERSION@. Caller frees. */
char *oi_normalise(const char *text);

/* Checks that the normalised text equals test/tools/data/<name>. With
 * OPAL_INFO_TEST_UPDATE=1 in the environment it writes the file instead
 * (to refresh the expected output after a deliberate change). */
void oi_check_expected(const char *text, const char *name);

#endif /* OPAL_TEST_TOOLS_OPAL_INFO_TEST_SUPPORT_H */
