/*
 * What the mcarun tests share: running mcarun from the build tree with a
 * given stdin, collecting its output and exit status, and bounding how
 * long that may take.
 */
#ifndef TEST_ORTE_MCARUN_TEST_SUPPORT_H
#define TEST_ORTE_MCARUN_TEST_SUPPORT_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <sys/types.h>

/* A run that takes longer than this is stopped and fails its test. */
#define MCARUN_TEST_RUN_LIMIT_S 60

/* Changes that limit for the runs that follow (jobs of hundreds of ranks
 * on a small, shared machine need more). */
void mcarun_test_set_run_limit(int seconds);

typedef struct mcarun_run_t {
    pid_t pid;
    int out_fd, err_fd; /* while running */
    int status;         /* exit status, or 128 + the signal that killed it */
    char *out, *err;    /* everything written, NUL-terminated */
    size_t out_len, err_len;
} mcarun_run_t;

/* The absolute path of rel inside the build tree (found from this test
 * program's own location). Static storage, overwritten by the next call. */
const char *mcarun_test_build_path(const char *rel);

/* Starts mcarun with args (NULL-terminated; not including "mcarun") in a
 * process group of its own, stdin fed from stdin_data (NULL: /dev/null).
 * Under valgrind, mcarun itself runs under valgrind too. */
void mcarun_test_start(mcarun_run_t *run, const char *stdin_data, const char *const *args);

/* The same with stdin_fd as mcarun's stdin (kept open by the caller);
 * with new_session, mcarun leads a session of its own whose controlling
 * terminal is stdin_fd (a pty slave). */
void mcarun_test_start_fd(mcarun_run_t *run, int stdin_fd, bool new_session,
                          const char *const *args);

/* Reads output until stdout holds count occurrences of needle (false when
 * mcarun ended or the time limit passed first). */
bool mcarun_test_wait_for(mcarun_run_t *run, const char *needle, int count);

/* Reads everything until mcarun exits (stopping it at the time limit) and
 * sets run->status. */
void mcarun_test_finish(mcarun_run_t *run);

/* mcarun_test_start + mcarun_test_finish. */
void mcarun_test_mcarun(mcarun_run_t *run, const char *stdin_data, const char *const *args);

void mcarun_test_run_free(mcarun_run_t *run);

/* True when component comp of framework fw is part of this build: its
 * build-tree plugin directory is among plugin_dirs (autogen found it) and
 * its library was built, as a plugin or into libopal. */
bool mcarun_test_component_built(const char *fw, const char *comp, const char *plugin_dirs);

/* How many times needle occurs in text. */
int mcarun_test_count(const char *text, const char *needle);

/* Prints the run's output (for a failing test's log). */
void mcarun_test_dump(const mcarun_run_t *run);

#endif /* TEST_ORTE_MCARUN_TEST_SUPPORT_H */
