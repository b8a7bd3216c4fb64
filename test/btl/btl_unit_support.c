#include "opal/opal_config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test/btl/btl_unit_support.h"
#include "test/support/opal_test.h"

extern char **environ;

void btl_unit_clean_env(void)
{
    bool again = true;
    while (again) {
        again = false;
        for (char **env = environ; NULL != *env; ++env) {
            if (0 == strncmp(*env, "OPAL_MCA_", 9)) {
                char name[256];
                snprintf(name, sizeof(name), "%.*s", (int) strcspn(*env, "="), *env);
                unsetenv(name);
                again = true;
                break;
            }
        }
    }
    setenv("OPAL_MCA_mca_base_component_path", "/nonexistent/opal-mca-test", 1);
    setenv("OPAL_MCA_mca_base_param_files", "", 1);
}

static FILE *capture_file = NULL;
static int saved_stderr = -1;

void btl_unit_capture_start(void)
{
    ck_assert_int_lt(saved_stderr, 0);
    capture_file = tmpfile();
    ck_assert_ptr_nonnull(capture_file);
    saved_stderr = dup(STDERR_FILENO);
    ck_assert_int_ge(saved_stderr, 0);
    ck_assert_int_ge(dup2(fileno(capture_file), STDERR_FILENO), 0);
}

char *btl_unit_capture_end(void)
{
    ck_assert_int_ge(saved_stderr, 0);
    ck_assert_int_ge(dup2(saved_stderr, STDERR_FILENO), 0);
    close(saved_stderr);
    saved_stderr = -1;
    long size = lseek(fileno(capture_file), 0, SEEK_END);
    ck_assert_int_ge(size, 0);
    char *text = calloc(1, (size_t) size + 1);
    ck_assert_ptr_nonnull(text);
    ck_assert_int_eq(pread(fileno(capture_file), text, (size_t) size, 0), size);
    fclose(capture_file);
    capture_file = NULL;
    fprintf(stderr, "%s", text);
    return text;
}

opal_proc_t *btl_unit_proc(uint32_t rank, const char *host)
{
    opal_proc_t *proc = OBJ_NEW(opal_proc_t);
    ck_assert_ptr_nonnull(proc);
    proc->proc_name.jobid = 42;
    proc->proc_name.vpid = rank;
    proc->proc_hostname = strdup(host);
    ck_assert_ptr_nonnull(proc->proc_hostname);
    return proc;
}
