/*
 * Where values come from: the environment, the override file, the
 * parameter files and the command line. Values wait in per-source lists
 * until their variable registers (mca_base_var_resolve() picks the best);
 * the names nobody registered are reported by mca_base_var_check_unknown().
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_base_var_internal.h"
#include "opal/util/opal_argv.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_keyval.h"

#ifndef OPAL_SYSCONFDIR
#error "OPAL_SYSCONFDIR (where the system parameter files live) must be defined by the build"
#endif

static void pending_construct(mca_base_var_pending_t *p)
{
    p->name = NULL;
    p->value = NULL;
    p->source = MCA_BASE_VAR_SOURCE_DEFAULT;
    p->file = NULL;
    p->line = 0;
    p->rank = 0;
    p->bad = false;
    p->unknown_reported = false;
    p->override_reported = false;
}

static void pending_destruct(mca_base_var_pending_t *p)
{
    free(p->name);
    free(p->value);
    free(p->file);
}

OBJ_CLASS_INSTANCE(mca_base_var_pending_t, opal_list_item_t, pending_construct, pending_destruct);

/* Storage of the variable system's own variables. */
static char *param_files = NULL;
static char *override_file = NULL;
enum { UNKNOWN_IGNORE, UNKNOWN_WARN, UNKNOWN_ERROR };
static int unknown_params = UNKNOWN_WARN;
/* Names a launcher has already checked for the whole job
 * (MCA_BASE_VAR_CHECKED_ENV): never reported again by this process. */
static char **checked_by_launcher = NULL;

mca_base_var_pending_t *mca_base_var_pending_add(mca_base_var_source_t source, const char *name,
                                                 const char *value, const char *file, int line,
                                                 int rank, bool *added)
{
    opal_list_t *list = &mca_base_var_state.pending[source];
    mca_base_var_pending_t *p, *found = NULL;
    *added = false;
    OPAL_LIST_FOREACH (p, list, mca_base_var_pending_t) {
        if (0 == strcmp(p->name, name)) {
            found = p;
            break;
        }
    }
    if (NULL != found && MCA_BASE_VAR_SOURCE_FILE == source && found->rank < rank) {
        return found;
    }
    char *v = strdup(value), *f = NULL;
    if (NULL == v || (NULL != file && NULL == (f = strdup(file)))) {
        free(v);
        return NULL;
    }
    if (NULL == found) {
        found = OBJ_NEW(mca_base_var_pending_t);
        if (NULL == found || NULL == (found->name = strdup(name))) {
            if (NULL != found) {
                OBJ_RELEASE(found);
            }
            free(v);
            free(f);
            return NULL;
        }
        opal_list_append(list, &found->super);
    }
    free(found->value);
    free(found->file);
    found->value = v;
    found->file = f;
    found->source = source;
    found->line = line;
    found->rank = rank;
    found->bad = false;
    found->unknown_reported = false;
    found->override_reported = false;
    *added = true;
    return found;
}

mca_base_var_pending_t *mca_base_var_pending_find(const mca_base_var_priv_t *var,
                                                  mca_base_var_source_t source)
{
    mca_base_var_pending_t *p, *best = NULL;
    bool best_own = false;
    OPAL_LIST_FOREACH (p, &mca_base_var_state.pending[source], mca_base_var_pending_t) {
        bool own = 0 == strcmp(p->name, var->pub.mbv_full_name);
        if (!own) {
            mca_base_var_priv_t *syn = mca_base_var_lookup(mca_base_var_lookup_name(p->name));
            if (NULL == syn || !syn->pub.mbv_valid ||
                0 == (syn->pub.mbv_flags & MCA_BASE_VAR_FLAG_SYNONYM) ||
                syn->pub.mbv_synonym_for != var->pub.mbv_index) {
                continue;
            }
        }
        /* Earlier files first (ranks differ only between files), then the
         * variable's own name over a synonym. */
        if (NULL == best || p->rank < best->rank || (p->rank == best->rank && own && !best_own)) {
            best = p;
            best_own = own;
        }
    }
    return best;
}

static int read_environment(void)
{
    const size_t plen = strlen(MCA_BASE_VAR_ENV_PREFIX);
    for (char **e = environ; NULL != e && NULL != *e; ++e) {
        const char *eq = strchr(*e, '=');
        if (0 != strncmp(*e, MCA_BASE_VAR_ENV_PREFIX, plen) || NULL == eq || eq == *e + plen) {
            continue;
        }
        char *name = strndup(*e + plen, (size_t) (eq - *e) - plen);
        bool added;
        mca_base_var_pending_t *p = NULL == name
                                        ? NULL
                                        : mca_base_var_pending_add(MCA_BASE_VAR_SOURCE_ENV, name,
                                                                   eq + 1, NULL, 0, 0, &added);
        free(name);
        if (NULL == p) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    return OPAL_SUCCESS;
}

typedef struct file_ctx_t {
    mca_base_var_source_t source;
    int rank;
    /* Why the file could not be read, kept until we know whether it is
     * merely missing (silent) or really unreadable (reported). */
    char *unreadable;
} file_ctx_t;

static int file_pair(const char *key, const char *value, const char *source, int lineno, void *ctx)
{
    file_ctx_t *fc = ctx;
    bool added;
    return NULL == mca_base_var_pending_add(fc->source, key, value, source, lineno, fc->rank,
                                            &added)
               ? OPAL_ERR_OUT_OF_RESOURCE
               : OPAL_SUCCESS;
}

static void file_error(const opal_keyval_error_t *error, void *ctx)
{
    file_ctx_t *fc = ctx;
    if (OPAL_KEYVAL_ERR_UNREADABLE == error->kind) {
        free(fc->unreadable);
        fc->unreadable = strdup(error->message);
        return;
    }
    mca_base_var_report(MCA_BASE_VAR_MSG_ERROR, "param-file-syntax", error->message);
}

/* Reads one file. named_by says who named it ("$OPAL_PARAM_FILES", a
 * variable), or is NULL for a default file, which may well not exist. */
static int read_file(const char *path, mca_base_var_source_t source, int rank, const char *named_by)
{
    file_ctx_t fc = {.source = source, .rank = rank, .unreadable = NULL};
    int rc = opal_keyval_parse(path, file_pair, file_error, &fc);
    if (NULL != fc.unreadable && OPAL_ERR_NOT_FOUND != rc) {
        mca_base_var_report(MCA_BASE_VAR_MSG_ERROR, "param-file-unreadable", fc.unreadable);
    }
    if (OPAL_ERR_NOT_FOUND == rc && NULL != named_by) {
        mca_base_var_report(MCA_BASE_VAR_MSG_WARNING, "param-file-missing", path, named_by);
    }
    free(fc.unreadable);
    /* Syntax errors and unreadable files are reported, not fatal. */
    return OPAL_ERR_OUT_OF_RESOURCE == rc ? rc : OPAL_SUCCESS;
}

/* Who named file, one of param_files: $OPAL_PARAM_FILES, the variable
 * (set by the user to something else), or nobody (a default file). */
static const char *param_file_named_by(const char *file)
{
    char **env =
        opal_argv_split(NULL != getenv("OPAL_PARAM_FILES") ? getenv("OPAL_PARAM_FILES") : "", ':');
    bool in_env = false;
    for (int i = 0; NULL != env && NULL != env[i] && !in_env; ++i) {
        in_env = 0 == strcmp(env[i], file);
    }
    opal_argv_free(env);
    if (in_env) {
        return "$OPAL_PARAM_FILES";
    }
    const char *home = getenv("HOME");
    char *user = NULL;
    bool is_user = NULL != home && '\0' != *home &&
                   0 <= asprintf(&user, "%s/.opal/mca-params.conf", home) &&
                   0 == strcmp(user, file);
    free(user);
    if (is_user || 0 == strcmp(file, OPAL_SYSCONFDIR "/opal-mca-params.conf")) {
        return NULL;
    }
    return MCA_BASE_VAR_ENV_PREFIX "mca_base_param_files";
}

/* $OPAL_PARAM_FILES, ~/.opal/mca-params.conf, $sysconfdir/opal-mca-params.conf */
static char *default_param_files(void)
{
    char **files =
        opal_argv_split(NULL != getenv("OPAL_PARAM_FILES") ? getenv("OPAL_PARAM_FILES") : "", ':');
    char *user = NULL, *joined = NULL;
    const char *home = getenv("HOME");
    if (NULL == files) {
        return NULL;
    }
    if (NULL != home && '\0' != *home &&
        (asprintf(&user, "%s/.opal/mca-params.conf", home) < 0 ||
         OPAL_SUCCESS != opal_argv_append_nosize(&files, user))) {
        goto out;
    }
    if (OPAL_SUCCESS == opal_argv_append_nosize(&files, OPAL_SYSCONFDIR "/opal-mca-params.conf")) {
        joined = opal_argv_join(files, ':');
    }

out:
    free(user);
    opal_argv_free(files);
    return joined;
}

static int register_own_variables(void)
{
    param_files = default_param_files();
    if (NULL == param_files) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    /* Registration copies the default and points param_files at the copy. */
    char *dflt = param_files;
    int rc = mca_base_var_register(
        "opal", "mca", "base", "param_files",
        "Colon-separated list of MCA parameter files, read in order; a value in an earlier "
        "file wins. Read once at startup: set it in the environment "
        "(" MCA_BASE_VAR_ENV_PREFIX "mca_base_param_files)",
        MCA_BASE_VAR_TYPE_STRING, NULL, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_3,
        MCA_BASE_VAR_SCOPE_READONLY, &param_files);
    free(dflt);
    if (rc < 0) {
        return rc;
    }

    override_file = OPAL_SYSCONFDIR "/opal-mca-params-override.conf";
    rc = mca_base_var_register(
        "opal", "mca", "base", "override_param_file",
        "MCA parameter file whose values beat every other source and cannot be changed. Read "
        "once at startup: set it in the environment "
        "(" MCA_BASE_VAR_ENV_PREFIX "mca_base_override_param_file)",
        MCA_BASE_VAR_TYPE_STRING, NULL, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_3,
        MCA_BASE_VAR_SCOPE_READONLY, &override_file);
    return rc < 0 ? rc : OPAL_SUCCESS;
}

static int register_unknown_params(void)
{
    static const mca_base_var_enum_value_t modes[] = {
        {UNKNOWN_IGNORE, "ignore"},
        {UNKNOWN_WARN, "warn"},
        {UNKNOWN_ERROR, "error"},
        {0, NULL},
    };
    mca_base_var_enum_t *e = NULL;
    int rc = mca_base_var_enum_create("mca_base_unknown_params", modes, &e);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    unknown_params = UNKNOWN_WARN;
    rc = mca_base_var_register(
        "opal", "mca", "base", "unknown_params",
        "What to do with MCA variable names set in the environment, a parameter file or on the "
        "command line that no framework or component registered: warn, error (startup fails) "
        "or ignore",
        MCA_BASE_VAR_TYPE_INT, e, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_2, MCA_BASE_VAR_SCOPE_LOCAL,
        &unknown_params);
    OBJ_RELEASE(e);
    return rc < 0 ? rc : OPAL_SUCCESS;
}

int mca_base_var_source_init(void)
{
    int rc = read_environment();
    if (OPAL_SUCCESS == rc) {
        rc = register_own_variables();
    }
    if (OPAL_SUCCESS == rc && NULL != override_file && '\0' != *override_file) {
        bool dflt = 0 == strcmp(override_file, OPAL_SYSCONFDIR "/opal-mca-params-override.conf") ||
                    NULL != getenv(MCA_BASE_VAR_CHECKED_ENV);
        rc = read_file(override_file, MCA_BASE_VAR_SOURCE_OVERRIDE, 0,
                       dflt ? NULL : MCA_BASE_VAR_ENV_PREFIX "mca_base_override_param_file");
    }
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    char **files = opal_argv_split(NULL != param_files ? param_files : "", ':');
    if (NULL == files) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (int i = 0; OPAL_SUCCESS == rc && NULL != files[i]; ++i) {
        /* A launcher that checked the job's names has also said which of
         * its files are missing. */
        rc = read_file(files[i], MCA_BASE_VAR_SOURCE_FILE, i,
                       NULL != getenv(MCA_BASE_VAR_CHECKED_ENV) ? NULL
                                                                : param_file_named_by(files[i]));
    }
    opal_argv_free(files);
    if (OPAL_SUCCESS == rc) {
        rc = register_unknown_params();
    }
    const char *checked = getenv(MCA_BASE_VAR_CHECKED_ENV);
    if (OPAL_SUCCESS == rc && NULL != checked && '\0' != *checked) {
        checked_by_launcher = opal_argv_split(checked, ',');
        rc = NULL == checked_by_launcher ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;
    }
    return rc;
}

void mca_base_var_source_finalize(void)
{
    for (int s = 0; s < MCA_BASE_VAR_SOURCE_MAX; ++s) {
        OPAL_LIST_DESTRUCT(&mca_base_var_state.pending[s]);
    }
    opal_argv_free(checked_by_launcher);
    checked_by_launcher = NULL;
    /* Deregistration already freed and NULLed the strings. */
    param_files = NULL;
    override_file = NULL;
    unknown_params = UNKNOWN_WARN;
}

int mca_base_var_process_cmdline(int count, char *const keys[], char *const values[])
{
    if (count < 0 || (count > 0 && (NULL == keys || NULL == values))) {
        return OPAL_ERR_BAD_PARAM;
    }
    for (int i = 0; i < count; ++i) {
        if (NULL == keys[i] || '\0' == *keys[i] || NULL == values[i]) {
            return OPAL_ERR_BAD_PARAM;
        }
    }
    mca_base_var_lock();
    int rc = 0 == mca_base_var_state.init_count ? OPAL_ERR_NOT_INITIALIZED : OPAL_SUCCESS;
    for (int i = 0; OPAL_ERR_NOT_INITIALIZED != rc && i < count; ++i) {
        bool added;
        mca_base_var_pending_t *p = mca_base_var_pending_add(
            MCA_BASE_VAR_SOURCE_COMMAND_LINE, keys[i], values[i], NULL, 0, 0, &added);
        if (NULL == p) {
            rc = OPAL_ERR_OUT_OF_RESOURCE;
            break;
        }
        mca_base_var_priv_t *var = mca_base_var_lookup(mca_base_var_lookup_name(keys[i]));
        if (NULL == var || !var->pub.mbv_valid) {
            continue;
        }
        /* Every value is tried and reported; the first failure is returned. */
        int vrc = mca_base_var_apply_new(var, p);
        if (OPAL_ERR_BAD_VALUE == vrc) {
            p->bad = true;
        }
        if (OPAL_SUCCESS == rc) {
            rc = vrc;
        }
    }
    mca_base_var_unlock();
    return rc;
}

static bool under_prefix(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    return 0 == strncmp(name, prefix, n) && ('\0' == name[n] || '_' == name[n]);
}

static bool prefix_registered(const char *prefix)
{
    int count = opal_pointer_array_get_size(&mca_base_var_state.vars);
    for (int i = 0; i < count; ++i) {
        mca_base_var_priv_t *var = mca_base_var_lookup(i);
        if (NULL != var && under_prefix(var->pub.mbv_full_name, prefix)) {
            return true;
        }
    }
    return false;
}

/* See mca_base_var_declare_prefix() for the rule. */
static bool belongs_to_unregistered(const char *name)
{
    for (char **pfx = mca_base_var_state.declared_prefixes; NULL != pfx && NULL != *pfx; ++pfx) {
        if (under_prefix(name, *pfx) && !prefix_registered(*pfx)) {
            return true;
        }
    }
    return false;
}

static void report_unknown(const mca_base_var_pending_t *p, mca_base_var_msg_kind_t kind)
{
    char *where = NULL, *given = NULL, *hint = NULL;
    char *suggestion = mca_base_var_suggest(p->name);
    int rc;
    if (MCA_BASE_VAR_SOURCE_ENV == p->source) {
        rc = asprintf(&given, MCA_BASE_VAR_ENV_PREFIX "%s", p->name);
    } else {
        rc = asprintf(&given, "%s", p->name);
    }
    if (rc < 0) {
        given = NULL;
    }
    if (MCA_BASE_VAR_SOURCE_FILE == p->source || MCA_BASE_VAR_SOURCE_OVERRIDE == p->source) {
        rc = asprintf(&where, "%s %s:%d", mca_base_var_source_name(p->source), p->file, p->line);
    } else {
        rc = asprintf(&where, "%s", mca_base_var_source_name(p->source));
    }
    if (rc < 0) {
        where = NULL;
    }
    if (NULL != suggestion && asprintf(&hint, "; did you mean %s?", suggestion) < 0) {
        hint = NULL;
    }
    mca_base_var_report(kind, "unknown-name", NULL != given ? given : p->name,
                        NULL != where ? where : "?", NULL != hint ? hint : "");
    free(hint);
    free(suggestion);
    free(where);
    free(given);
}

static bool launcher_checked(const char *name)
{
    for (char **n = checked_by_launcher; NULL != n && NULL != *n; ++n) {
        if (0 == strcmp(*n, name)) {
            return true;
        }
    }
    return false;
}

/* Reports the unknown names under prefix (all of them when NULL). */
static int check_unknown(const char *prefix)
{
    static const mca_base_var_source_t checked[] = {
        MCA_BASE_VAR_SOURCE_OVERRIDE, MCA_BASE_VAR_SOURCE_COMMAND_LINE, MCA_BASE_VAR_SOURCE_ENV,
        MCA_BASE_VAR_SOURCE_FILE};
    mca_base_var_lock();
    if (0 == mca_base_var_state.init_count) {
        mca_base_var_unlock();
        return OPAL_ERR_NOT_INITIALIZED;
    }
    int mode = unknown_params;
    bool found = false;
    for (size_t s = 0; UNKNOWN_IGNORE != mode && s < sizeof(checked) / sizeof(checked[0]); ++s) {
        mca_base_var_pending_t *p;
        OPAL_LIST_FOREACH (p, &mca_base_var_state.pending[checked[s]], mca_base_var_pending_t) {
            if ((NULL != prefix && !under_prefix(p->name, prefix)) ||
                mca_base_var_lookup_name(p->name) >= 0 || belongs_to_unregistered(p->name) ||
                launcher_checked(p->name)) {
                continue;
            }
            found = true;
            /* Each name is reported once, however often this is called. */
            if (!p->unknown_reported) {
                p->unknown_reported = true;
                report_unknown(p, UNKNOWN_ERROR == mode ? MCA_BASE_VAR_MSG_ERROR
                                                        : MCA_BASE_VAR_MSG_WARNING);
            }
        }
    }
    mca_base_var_unlock();
    return found && UNKNOWN_ERROR == mode ? OPAL_ERR_UNKNOWN_NAME : OPAL_SUCCESS;
}

int mca_base_var_check_unknown(void)
{
    return check_unknown(NULL);
}

int mca_base_var_check_unknown_under(const char *prefix)
{
    return NULL == prefix || '\0' == *prefix ? OPAL_ERR_BAD_PARAM : check_unknown(prefix);
}

int mca_base_var_unknown_names(char ***names)
{
    static const mca_base_var_source_t sources[] = {
        MCA_BASE_VAR_SOURCE_OVERRIDE, MCA_BASE_VAR_SOURCE_COMMAND_LINE, MCA_BASE_VAR_SOURCE_ENV,
        MCA_BASE_VAR_SOURCE_FILE};
    *names = NULL;
    mca_base_var_lock();
    int rc = 0 == mca_base_var_state.init_count ? OPAL_ERR_NOT_INITIALIZED : OPAL_SUCCESS;
    for (size_t s = 0; OPAL_SUCCESS == rc && s < sizeof(sources) / sizeof(sources[0]); ++s) {
        mca_base_var_pending_t *p;
        OPAL_LIST_FOREACH (p, &mca_base_var_state.pending[sources[s]], mca_base_var_pending_t) {
            if (mca_base_var_lookup_name(p->name) < 0 && !launcher_checked(p->name) &&
                OPAL_SUCCESS != (rc = opal_argv_append_unique_nosize(names, p->name))) {
                break;
            }
        }
    }
    mca_base_var_unlock();
    if (OPAL_SUCCESS != rc) {
        opal_argv_free(*names);
        *names = NULL;
    }
    return rc;
}
