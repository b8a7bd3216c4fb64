/*
 * What the variable-system suites share: each test runs in a clean world
 * (no OPAL_MCA_* from the user's environment, HOME in a fresh temporary
 * directory, no parameter or override file unless the test writes one)
 * and sees every message the variable system prints.
 */
#ifndef OPAL_TEST_MCA_MCA_VAR_TEST_SUPPORT_H
#define OPAL_TEST_MCA_MCA_VAR_TEST_SUPPORT_H

#include "opal/opal_config.h"

#include <stdbool.h>

#include "opal/mca/base/mca_base_var.h"
#include "test/support/opal_test.h"

/* Adds a test case running fn between mvt_setup() and mvt_teardown(). */
#define MVT_ADD(suite, fn)                                                                         \
    do {                                                                                           \
        TCase *tc_ = tcase_create(#fn);                                                            \
        tcase_add_checked_fixture(tc_, mvt_setup, mvt_teardown);                                   \
        tcase_add_test(tc_, fn);                                                                   \
        suite_add_tcase((suite), tc_);                                                             \
    } while (0)

/* Clears OPAL_MCA_* and OPAL_PARAM_FILES, points HOME at a new empty
 * directory, makes mca_base_param_files empty and the override file a
 * missing one, and captures messages. (help-mca-var.txt is found through
 * OPAL_SHOW_HELP_PATH, which make check sets from help_dirs.) */
void mvt_setup(void);
/* Finalizes the variable system as often as it was initialised, removes the
 * temporary directory and forgets the messages. */
void mvt_teardown(void);

/* The temporary directory of the current test. */
const char *mvt_tmpdir(void);
/* Writes content to name in the temporary directory; returns its path
 * (valid until teardown). */
const char *mvt_write_file(const char *name, const char *content);
/* The path of a data file in test/mca/data (valid until teardown). */
const char *mvt_data_file(const char *name);

/* Sets an environment variable OPAL_MCA_<name>. */
void mvt_setenv(const char *name, const char *value);
/* Makes the files read at the next init: mca_base_param_files = files
 * (a colon list). */
void mvt_param_files(const char *files);
/* Makes path the override file of the next init. */
void mvt_override_file(const char *path);

/* Messages captured since setup (or the last mvt_clear_messages()). */
int mvt_message_count(void);
int mvt_error_count(void);
int mvt_warning_count(void);
/* Message i, or NULL. */
const char *mvt_message(int i);
/* True when some message contains every one of the NULL-terminated
 * substrings. */
bool mvt_has_message(const char *first, ...);
void mvt_clear_messages(void);

/* Asserts that a message contains each substring (NULL-terminated), and
 * prints every message on failure. */
#define MVT_ASSERT_MESSAGE(...)                                                                    \
    ck_assert_msg(mvt_has_message(__VA_ARGS__, NULL), "expected message not found in:\n%s",        \
                  mvt_all_messages())
const char *mvt_all_messages(void);

/* The current value of a variable as text (freed at teardown). */
const char *mvt_value(int index);
/* Where a variable's value came from as text (freed at teardown). */
const char *mvt_source(int index);

#endif /* OPAL_TEST_MCA_MCA_VAR_TEST_SUPPORT_H */
