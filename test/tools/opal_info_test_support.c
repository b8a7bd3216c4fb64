#include "opal/opal_config.h"

#include <check.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/opal_info/opal_info.h"
#include "test/mca/mcatest/base/base.h"
#include "test/support/opal_test.h"
#include "test/tools/opal_info_test_support.h"

#if !defined(OPAL_TEST_MCA_PLUGIN_DIRS) || !defined(OPAL_TEST_BUILDDIR)
#error "OPAL_TEST_MCA_PLUGIN_DIRS and OPAL_TEST_BUILDDIR come from test/tools/Makefile.inc"
#endif

#define MAX_ARGS 32

extern char **environ;

mca_base_framework_t *const oi_mcatest_only[] = {&test_mcatest_base_framework, NULL};

static const mca_base_component_t *const no_components[] = {NULL};
static const mca_base_component_t *const *saved_static = NULL;
static uint32_t saved_flags;

void oi_set(const char *name, const char *value)
{
    char key[256];
    snprintf(key, sizeof(key), "OPAL_MCA_%s", name);
    if (NULL == value) {
        unsetenv(key);
    } else {
        setenv(key, value, 1);
    }
}

void oi_reset(void)
{
    if (NULL == saved_static) {
        saved_static = test_mcatest_base_framework.framework_static_components;
        saved_flags = test_mcatest_base_framework.framework_flags;
    }
    test_mcatest_base_framework.framework_static_components = saved_static;
    test_mcatest_base_framework.framework_flags = saved_flags;
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
    unsetenv("OPAL_PARAM_FILES");
    unsetenv("COLUMNS");
    /* Nothing from the user's or the system's files and plugin dirs. */
    oi_set("mca_base_component_path", "");
    oi_set("mca_base_param_files", "");
    oi_set("mca_base_override_param_file", "");
    ck_assert(!mca_base_framework_is_registered(&test_mcatest_base_framework));
}

void oi_plugins_only(void)
{
    test_mcatest_base_framework.framework_static_components = no_components;
    oi_set("mca_base_component_path", OPAL_TEST_MCA_PLUGIN_DIRS);
}

static char *read_all(FILE *f)
{
    ck_assert_int_eq(fflush(f), 0);
    long size = ftell(f);
    ck_assert_int_ge(size, 0);
    rewind(f);
    char *text = malloc((size_t) size + 1);
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_eq(fread(text, 1, (size_t) size, f), (size_t) size);
    text[size] = '\0';
    return text;
}

oi_run_t oi_run_with(mca_base_framework_t *const *frameworks, const char *arg, ...)
{
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = (char *) "opal_info";
    va_list ap;
    va_start(ap, arg);
    for (const char *a = arg; NULL != a; a = va_arg(ap, const char *)) {
        ck_assert_int_lt(argc, MAX_ARGS);
        argv[argc++] = (char *) a;
    }
    va_end(ap);
    argv[argc] = NULL;

    FILE *out = tmpfile(), *err = tmpfile();
    ck_assert_ptr_nonnull(out);
    ck_assert_ptr_nonnull(err);
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(STDOUT_FILENO), saved_err = dup(STDERR_FILENO);
    ck_assert_int_ge(saved_out, 0);
    ck_assert_int_ge(saved_err, 0);
    ck_assert_int_ge(dup2(fileno(out), STDOUT_FILENO), 0);
    ck_assert_int_ge(dup2(fileno(err), STDERR_FILENO), 0);

    oi_run_t run = {.status = opal_info_main(argc, argv, frameworks)};

    fflush(stdout);
    fflush(stderr);
    ck_assert_int_ge(dup2(saved_out, STDOUT_FILENO), 0);
    ck_assert_int_ge(dup2(saved_err, STDERR_FILENO), 0);
    close(saved_out);
    close(saved_err);
    /* The descriptors wrote at their own offsets; the FILEs are at 0. */
    ck_assert_int_eq(fseek(out, 0, SEEK_END), 0);
    ck_assert_int_eq(fseek(err, 0, SEEK_END), 0);
    run.out = read_all(out);
    run.err = read_all(err);
    fclose(out);
    fclose(err);
    return run;
}

void oi_run_free(oi_run_t *run)
{
    free(run->out);
    free(run->err);
    run->out = run->err = NULL;
}

char *oi_lines_starting(const char *text, const char *prefix)
{
    size_t len = strlen(prefix), used = 0;
    char *lines = calloc(strlen(text) + 1, 1);
    ck_assert_ptr_nonnull(lines);
    for (const char *line = text; '\0' != *line;) {
        const char *end = strchr(line, '\n');
        size_t n = NULL != end ? (size_t) (end - line) + 1 : strlen(line);
        if (0 == strncmp(line, prefix, len)) {
            memcpy(lines + used, line, n);
            used += n;
        }
        line += n;
    }
    return lines;
}

/* Appends text[0..n) to the growing buffer *buf. */
static void append(char **buf, size_t *used, size_t *size, const char *text, size_t n)
{
    if (*used + n + 1 > *size) {
        *size = 2 * (*used + n + 1);
        *buf = realloc(*buf, *size);
        ck_assert_ptr_nonnull(*buf);
    }
    memcpy(*buf + *used, text, n);
    *used += n;
    (*buf)[*used] = '\0';
}

static bool version_char(char c)
{
    return ('0' <= c && c <= '9') || '.' == c;
}

char *oi_normalise(const char *text)
{
    const char *builddir = OPAL_TEST_BUILDDIR, *version = OPAL_VERSION;
    size_t blen = strlen(builddir), vlen = strlen(version);
    size_t used = 0, size = strlen(text) + 1;
    char *out = malloc(size);
    ck_assert_ptr_nonnull(out);
    out[0] = '\0';
    for (size_t i = 0; '\0' != text[i];) {
        if (0 == strncmp(text + i, builddir, blen)) {
            append(&out, &used, &size, "@BUILDDIR@", 10);
            i += blen;
        } else if (0 == strncmp(text + i, version, vlen) &&
                   (0 == i || !version_char(text[i - 1])) && !version_char(text[i + vlen])) {
            append(&out, &used, &size, "@VERSION@", 9);
            i += vlen;
        } else {
            append(&out, &used, &size, text + i, 1);
            ++i;
        }
    }
    return out;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (NULL == f) {
        return NULL;
    }
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    char *text = read_all(f);
    fclose(f);
    return text;
}

void oi_check_expected(const char *text, const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/tools/data/%s", opal_test_srcdir(), name);
    char *normal = oi_normalise(text);
    const char *update = getenv("OPAL_INFO_TEST_UPDATE");
    if (NULL != update && 0 == strcmp(update, "1")) {
        FILE *f = fopen(path, "w");
        ck_assert_msg(NULL != f, "cannot write %s", path);
        fputs(normal, f);
        fclose(f);
    }
    char *expected = read_file(path);
    ck_assert_msg(NULL != expected, "cannot read %s", path);
    if (0 != strcmp(expected, normal)) {
        /* Show the first line that differs: whole documents are long. */
        size_t i = 0, line = 1, start = 0;
        while (expected[i] == normal[i] && '\0' != expected[i]) {
            if ('\n' == expected[i]) {
                ++line;
                start = i + 1;
            }
            ++i;
        }
        ck_abort_msg("%s differs at line %zu:\n  expected: %.*s\n  actual:   %.*s", path, line,
                     (int) strcspn(expected + start, "\n"), expected + start,
                     (int) strcspn(normal + start, "\n"), normal + start);
    }
    free(expected);
    free(normal);
}
