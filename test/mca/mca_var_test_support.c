#include "opal/opal_config.h"

#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/util/opal_error.h"
#include "test/mca/mca_var_test_support.h"

typedef struct {
    mca_base_var_msg_kind_t kind;
    char *text;
} message_t;

static message_t *messages = NULL;
static int nmessages = 0;
static char *all_messages = NULL;
static char tmpdir[256];
/* Strings handed to the test, freed at teardown. */
static char **garbage = NULL;
static int ngarbage = 0;
static char *saved_home = NULL;

static const char *keep(char *s)
{
    ck_assert_ptr_nonnull(s);
    char **grown = realloc(garbage, sizeof(*garbage) * (size_t) (ngarbage + 1));
    ck_assert_ptr_nonnull(grown);
    garbage = grown;
    garbage[ngarbage++] = s;
    return s;
}

static void capture(mca_base_var_msg_kind_t kind, const char *message, void *ctx)
{
    (void) ctx;
    message_t *grown = realloc(messages, sizeof(*messages) * (size_t) (nmessages + 1));
    if (NULL == grown) {
        return;
    }
    messages = grown;
    messages[nmessages].kind = kind;
    messages[nmessages].text = strdup(message);
    if (NULL != messages[nmessages].text) {
        ++nmessages;
    }
}

static void clear_mca_environment(void)
{
    /* Collected first: unsetenv() changes environ under the loop. */
    char **names = NULL;
    int n = 0;
    for (char **e = environ; NULL != *e; ++e) {
        const char *eq = strchr(*e, '=');
        if (0 == strncmp(*e, "OPAL_MCA_", 9) && NULL != eq) {
            names = realloc(names, sizeof(*names) * (size_t) (n + 1));
            ck_assert_ptr_nonnull(names);
            names[n++] = strndup(*e, (size_t) (eq - *e));
        }
    }
    for (int i = 0; i < n; ++i) {
        unsetenv(names[i]);
        free(names[i]);
    }
    free(names);
    unsetenv("OPAL_PARAM_FILES");
}

void mvt_setup(void)
{
    const char *base = NULL != getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(tmpdir, sizeof(tmpdir), "%s/mca_var_test.XXXXXX", base);
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));

    if (NULL == saved_home && NULL != getenv("HOME")) {
        saved_home = strdup(getenv("HOME"));
    }
    clear_mca_environment();
    setenv("HOME", tmpdir, 1);
    mvt_param_files("");
    /* No override file (an empty name: a missing one would be reported). */
    mvt_override_file("");

    mca_base_var_set_error_callback(capture, NULL);
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void) sb;
    (void) flag;
    (void) ftw;
    return remove(path);
}

void mvt_teardown(void)
{
    while (OPAL_SUCCESS == mca_base_var_finalize()) {
    }
    mca_base_var_set_error_callback(NULL, NULL);
    nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    mvt_clear_messages();
    free(messages);
    messages = NULL;
    free(all_messages);
    all_messages = NULL;
    for (int i = 0; i < ngarbage; ++i) {
        free(garbage[i]);
    }
    free(garbage);
    garbage = NULL;
    ngarbage = 0;
    clear_mca_environment();
    if (NULL != saved_home) {
        setenv("HOME", saved_home, 1);
    }
}

const char *mvt_tmpdir(void)
{
    return tmpdir;
}

const char *mvt_write_file(const char *name, const char *content)
{
    char *path = NULL;
    ck_assert_int_ge(asprintf(&path, "%s/%s", tmpdir, name), 0);
    keep(path);
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    ck_assert_int_eq(fputs(content, fp) >= 0, 1);
    ck_assert_int_eq(fclose(fp), 0);
    return path;
}

const char *mvt_data_file(const char *name)
{
    char *path = NULL;
    ck_assert_int_ge(asprintf(&path, "%s/mca/data/%s", opal_test_srcdir(), name), 0);
    return keep(path);
}

void mvt_setenv(const char *name, const char *value)
{
    char *var = NULL;
    ck_assert_int_ge(asprintf(&var, "OPAL_MCA_%s", name), 0);
    setenv(var, value, 1);
    free(var);
}

void mvt_param_files(const char *files)
{
    mvt_setenv("mca_base_param_files", files);
}

void mvt_override_file(const char *path)
{
    mvt_setenv("mca_base_override_param_file", path);
}

int mvt_message_count(void)
{
    return nmessages;
}

static int count_kind(mca_base_var_msg_kind_t kind)
{
    int n = 0;
    for (int i = 0; i < nmessages; ++i) {
        n += kind == messages[i].kind;
    }
    return n;
}

int mvt_error_count(void)
{
    return count_kind(MCA_BASE_VAR_MSG_ERROR);
}

int mvt_warning_count(void)
{
    return count_kind(MCA_BASE_VAR_MSG_WARNING);
}

const char *mvt_message(int i)
{
    return i >= 0 && i < nmessages ? messages[i].text : NULL;
}

bool mvt_has_message(const char *first, ...)
{
    for (int i = 0; i < nmessages; ++i) {
        va_list ap;
        va_start(ap, first);
        bool all = true;
        for (const char *s = first; NULL != s; s = va_arg(ap, const char *)) {
            all = all && NULL != strstr(messages[i].text, s);
        }
        va_end(ap);
        if (all) {
            return true;
        }
    }
    return false;
}

void mvt_clear_messages(void)
{
    for (int i = 0; i < nmessages; ++i) {
        free(messages[i].text);
    }
    nmessages = 0;
}

const char *mvt_all_messages(void)
{
    free(all_messages);
    all_messages = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&all_messages, &len);
    if (NULL == out) {
        return "(out of memory)";
    }
    for (int i = 0; i < nmessages; ++i) {
        fprintf(out, "[%s] %s\n", MCA_BASE_VAR_MSG_ERROR == messages[i].kind ? "error" : "warning",
                messages[i].text);
    }
    if (0 == nmessages) {
        fputs("(no messages)\n", out);
    }
    fclose(out);
    return all_messages;
}

const char *mvt_value(int index)
{
    char *text = NULL;
    ck_assert_int_eq(mca_base_var_value_string(index, &text), OPAL_SUCCESS);
    return keep(text);
}

const char *mvt_source(int index)
{
    char *text = NULL;
    ck_assert_int_eq(mca_base_var_source_string(index, &text), OPAL_SUCCESS);
    return keep(text);
}
