#include "opal/opal_config.h"

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/mca/base/mca_base_component_repository.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/util/opal_error.h"
#include "test/mca/mca_base_test_support.h"

#ifndef OPAL_TEST_MCA_PLUGIN_DIRS
#error "OPAL_TEST_MCA_PLUGIN_DIRS (mca_plugin_dirs) comes from test/mca/Makefile-repo.inc"
#endif

extern char **environ;

static const mca_base_component_t *const no_components[] = {NULL};
static const mca_base_component_t *const *saved_static = NULL;

void mt_reset(void)
{
    if (NULL == saved_static) {
        saved_static = test_mcatest_base_framework.framework_static_components;
    }
    test_mcatest_base_framework.framework_static_components = saved_static;
    /* Unsetting changes environ: collect the names first. */
    char *names[256];
    int count = 0;
    for (char **e = environ; NULL != *e && count < 256; ++e) {
        if (0 == strncmp(*e, "OPAL_MCA_", 9)) {
            names[count++] = strndup(*e, strcspn(*e, "="));
        }
    }
    for (int i = 0; i < count; ++i) {
        unsetenv(names[i]);
        free(names[i]);
    }
    /* No plugin directory unless a test asks for one, and no parameter
     * file of the user or the system. */
    mt_set("mca_base_component_path", "");
    unsetenv("OPAL_PARAM_FILES");
    mt_set("mca_base_param_files", "");
    mt_set("mca_base_override_param_file", "");
    ck_assert_msg(NULL == mca_base_component_repository_failures(),
                  "the MCA base is still open: a previous test did not close everything");
    ck_assert(!mca_base_framework_is_registered(&test_mcatest_base_framework));
}

void mt_set(const char *name, const char *value)
{
    char key[256];
    snprintf(key, sizeof(key), "OPAL_MCA_%s", name);
    if (NULL == value) {
        unsetenv(key);
    } else {
        setenv(key, value, 1);
    }
}

void mt_use_build_plugins(void)
{
    mt_set("mca_base_component_path", OPAL_TEST_MCA_PLUGIN_DIRS);
}

void mt_no_static_components(void)
{
    test_mcatest_base_framework.framework_static_components = no_components;
}

char *mt_plugin_file(const char *comp)
{
    char needle[128];
    snprintf(needle, sizeof(needle), "/mcatest/%s/.libs", comp);
    const char *dirs = OPAL_TEST_MCA_PLUGIN_DIRS;
    const char *hit = strstr(dirs, needle);
    ck_assert_ptr_nonnull(hit);
    const char *start = hit;
    while (start > dirs && ':' != start[-1]) {
        --start;
    }
    char *path = NULL;
    ck_assert_int_ge(asprintf(&path, "%.*s/mca_mcatest_%s.so", (int) (hit + strlen(needle) - start),
                              start, comp),
                     0);
    return path;
}

char *mt_make_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    char *dir = NULL;
    ck_assert_int_ge(asprintf(&dir, "%s/mca_test.XXXXXX", NULL != tmp ? tmp : "/tmp"), 0);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    return dir;
}

void mt_remove_dir(char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *entry;
    while (NULL != (entry = readdir(d))) {
        if ('.' == entry->d_name[0]) {
            continue;
        }
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, entry->d_name);
        ck_assert_int_eq(unlink(path), 0);
    }
    closedir(d);
    ck_assert_int_eq(rmdir(dir), 0);
    free(dir);
}

void mt_link(const char *dir, const char *name, const char *target)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    ck_assert_int_eq(symlink(target, path), 0);
}

static int saved_stderr = -1;
static FILE *capture_file = NULL;

void mt_capture_start(void)
{
    ck_assert_int_lt(saved_stderr, 0);
    capture_file = tmpfile();
    ck_assert_ptr_nonnull(capture_file);
    saved_stderr = dup(STDERR_FILENO);
    ck_assert_int_ge(saved_stderr, 0);
    ck_assert_int_ge(dup2(fileno(capture_file), STDERR_FILENO), 0);
}

char *mt_capture_end(void)
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
    /* Shown in the test's log, to explain a failure. */
    fprintf(stderr, "%s", text);
    return text;
}

mca_base_component_list_item_t *mt_component(mca_base_framework_t *framework, const char *name)
{
    mca_base_component_list_item_t *item;
    OPAL_LIST_FOREACH (item, &framework->framework_components, mca_base_component_list_item_t) {
        if (0 == strcmp(item->cli_component->mca_component_name, name)) {
            return item;
        }
    }
    return NULL;
}

const mca_base_component_failure_t *mt_failure(const opal_list_t *failures, const char *component,
                                               mca_base_component_stage_t stage)
{
    const mca_base_component_failure_t *failure;
    OPAL_LIST_FOREACH (failure, failures, const mca_base_component_failure_t) {
        if (0 == strcmp(failure->cf_component, component) &&
            (MT_ANY_STAGE == stage || failure->cf_stage == stage)) {
            return failure;
        }
    }
    return NULL;
}

int mt_failure_count(const opal_list_t *failures, const char *component)
{
    int count = 0;
    const mca_base_component_failure_t *failure;
    OPAL_LIST_FOREACH (failure, failures, const mca_base_component_failure_t) {
        count += 0 == strcmp(failure->cf_component, component);
    }
    return count;
}

bool mt_mapped(const char *file_name)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    ck_assert_ptr_nonnull(maps);
    char line[4096];
    bool found = false;
    size_t len = strlen(file_name);
    while (!found && NULL != fgets(line, sizeof(line), maps)) {
        line[strcspn(line, "\n")] = '\0';
        size_t n = strlen(line);
        found = n >= len && 0 == strcmp(line + n - len, file_name);
    }
    fclose(maps);
    return found;
}

bool mt_var_exists(const char *full_name)
{
    int index = mca_base_var_find_by_name(full_name);
    const mca_base_var_t *var = NULL;
    return index >= 0 && OPAL_SUCCESS == mca_base_var_get(index, &var) && var->mbv_valid;
}
