/*
 * Values: text to value for every type and back, applying values with
 * their precedence, and the messages that refuse bad ones.
 */
#include "opal/opal_config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "opal/mca/base/mca_base_var_internal.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_show_help.h"

static mca_base_var_msg_fn_t msg_fn = NULL;
static void *msg_ctx = NULL;

void mca_base_var_set_error_callback(mca_base_var_msg_fn_t fn, void *ctx)
{
    mca_base_var_lock();
    msg_fn = fn;
    msg_ctx = ctx;
    mca_base_var_unlock();
}

void mca_base_var_report(mca_base_var_msg_kind_t kind, const char *topic, ...)
{
    va_list ap;
    va_start(ap, topic);
    char *text = opal_show_help_vstring(MCA_BASE_VAR_HELP_FILE, topic, false, ap);
    va_end(ap);
    if (NULL == text) {
        return;
    }
    size_t n = strlen(text);
    while (n > 0 && '\n' == text[n - 1]) {
        text[--n] = '\0';
    }
    mca_base_var_lock();
    if (NULL != msg_fn) {
        msg_fn(kind, text, msg_ctx);
    } else {
        opal_output(0, "%s", text);
    }
    mca_base_var_unlock();
    free(text);
}

void mca_base_var_storage_read(mca_base_var_type_t type, const void *storage,
                               mca_base_var_storage_t *out)
{
    switch (type) {
        case MCA_BASE_VAR_TYPE_INT:
            out->intval = *(const int *) storage;
            break;
        case MCA_BASE_VAR_TYPE_UNSIGNED_INT:
            out->uintval = *(const unsigned int *) storage;
            break;
        case MCA_BASE_VAR_TYPE_LONG:
            out->longval = *(const long *) storage;
            break;
        case MCA_BASE_VAR_TYPE_SIZE_T:
            out->sizetval = *(const size_t *) storage;
            break;
        case MCA_BASE_VAR_TYPE_UINT64_T:
            out->uint64val = *(const uint64_t *) storage;
            break;
        case MCA_BASE_VAR_TYPE_BOOL:
            out->boolval = *(const bool *) storage;
            break;
        case MCA_BASE_VAR_TYPE_DOUBLE:
            out->doubleval = *(const double *) storage;
            break;
        case MCA_BASE_VAR_TYPE_STRING:
            out->stringval = *(char *const *) storage;
            break;
        default:
            break;
    }
}

void mca_base_var_store(mca_base_var_priv_t *var, mca_base_var_storage_t *value)
{
    void *storage = var->pub.mbv_storage;
    switch (var->pub.mbv_type) {
        case MCA_BASE_VAR_TYPE_INT:
            *(int *) storage = value->intval;
            break;
        case MCA_BASE_VAR_TYPE_UNSIGNED_INT:
            *(unsigned int *) storage = value->uintval;
            break;
        case MCA_BASE_VAR_TYPE_LONG:
            *(long *) storage = value->longval;
            break;
        case MCA_BASE_VAR_TYPE_SIZE_T:
            *(size_t *) storage = value->sizetval;
            break;
        case MCA_BASE_VAR_TYPE_UINT64_T:
            *(uint64_t *) storage = value->uint64val;
            break;
        case MCA_BASE_VAR_TYPE_BOOL:
            *(bool *) storage = value->boolval;
            break;
        case MCA_BASE_VAR_TYPE_DOUBLE:
            *(double *) storage = value->doubleval;
            break;
        case MCA_BASE_VAR_TYPE_STRING:
            /* The storage points at the new copy before the old one goes. */
            *(char **) storage = value->stringval;
            free(var->owned_string);
            var->owned_string = value->stringval;
            break;
        default:
            break;
    }
}

static bool set_why(char **why, const char *text)
{
    *why = strdup(text);
    return NULL != *why;
}

/* [+-]digits[k|m|g] with digits decimal or 0x hex, whitespace around
 * allowed: the sign and the magnitude, suffix applied. */
static int parse_number(const char *text, bool *negative, uint64_t *magnitude, char **why)
{
    const char *s = text;
    while (isspace((unsigned char) *s)) {
        ++s;
    }
    *negative = '-' == *s;
    if ('-' == *s || '+' == *s) {
        ++s;
    }
    unsigned base = 10;
    if ('0' == s[0] && ('x' == s[1] || 'X' == s[1])) {
        base = 16;
        s += 2;
    }
    if (!(16 == base ? isxdigit((unsigned char) *s) : isdigit((unsigned char) *s))) {
        set_why(why, "not a number (expected decimal or 0x hexadecimal digits, optionally "
                     "followed by k, m or g)");
        return OPAL_ERR_BAD_VALUE;
    }
    uint64_t v = 0;
    for (; 16 == base ? isxdigit((unsigned char) *s) : isdigit((unsigned char) *s); ++s) {
        unsigned d = isdigit((unsigned char) *s)
                         ? (unsigned) (*s - '0')
                         : (unsigned) (tolower((unsigned char) *s) - 'a' + 10);
        if (v > (UINT64_MAX - d) / base) {
            set_why(why, "the number is too large");
            return OPAL_ERR_BAD_VALUE;
        }
        v = v * base + d;
    }
    unsigned shift = 0;
    switch (*s) {
        case 'k':
        case 'K':
            shift = 10;
            break;
        case 'm':
        case 'M':
            shift = 20;
            break;
        case 'g':
        case 'G':
            shift = 30;
            break;
        default:
            break;
    }
    if (0 != shift) {
        ++s;
        if (v > (UINT64_MAX >> shift)) {
            set_why(why, "the number is too large");
            return OPAL_ERR_BAD_VALUE;
        }
        v <<= shift;
    }
    while (isspace((unsigned char) *s)) {
        ++s;
    }
    if ('\0' != *s) {
        set_why(why, "unexpected characters after the number (size suffixes are k, m and g)");
        return OPAL_ERR_BAD_VALUE;
    }
    *magnitude = v;
    return OPAL_SUCCESS;
}

/* A signed type with range [-(max_neg), max_pos]. */
static int parse_signed(const char *text, uint64_t max_pos, uint64_t max_neg, int64_t *out,
                        char **why)
{
    bool neg;
    uint64_t mag;
    int rc = parse_number(text, &neg, &mag, why);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if (neg ? mag > max_neg : mag > max_pos) {
        if (asprintf(why, "out of range (-%" PRIu64 " to %" PRIu64 ")", max_neg, max_pos) < 0) {
            *why = NULL;
        }
        return OPAL_ERR_BAD_VALUE;
    }
    /* -(max_neg) may be INT64_MIN: negate in unsigned arithmetic. */
    *out = neg ? (int64_t) (0 - mag) : (int64_t) mag;
    return OPAL_SUCCESS;
}

static int parse_unsigned(const char *text, uint64_t max, uint64_t *out, char **why)
{
    bool neg;
    uint64_t mag;
    int rc = parse_number(text, &neg, &mag, why);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if (neg) {
        set_why(why, "a negative number for an unsigned variable");
        return OPAL_ERR_BAD_VALUE;
    }
    if (mag > max) {
        if (asprintf(why, "out of range (0 to %" PRIu64 ")", max) < 0) {
            *why = NULL;
        }
        return OPAL_ERR_BAD_VALUE;
    }
    *out = mag;
    return OPAL_SUCCESS;
}

static int parse_bool(const char *text, bool *out, char **why)
{
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off"};
    size_t n = strlen(text);
    while (n > 0 && isspace((unsigned char) *text)) {
        ++text;
        --n;
    }
    while (n > 0 && isspace((unsigned char) text[n - 1])) {
        --n;
    }
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); ++i) {
        if (strlen(yes[i]) == n && 0 == strncasecmp(text, yes[i], n)) {
            *out = true;
            return OPAL_SUCCESS;
        }
        if (strlen(no[i]) == n && 0 == strncasecmp(text, no[i], n)) {
            *out = false;
            return OPAL_SUCCESS;
        }
    }
    set_why(why, "not a boolean (expected 1/0, true/false, yes/no or on/off)");
    return OPAL_ERR_BAD_VALUE;
}

static int parse_double(const char *text, double *out, char **why)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    while (end != text && isspace((unsigned char) *end)) {
        ++end;
    }
    if (end == text || '\0' != *end) {
        set_why(why, "not a floating-point number");
        return OPAL_ERR_BAD_VALUE;
    }
    if (!isfinite(v)) {
        set_why(why, "not a finite number");
        return OPAL_ERR_BAD_VALUE;
    }
    *out = v;
    return OPAL_SUCCESS;
}

int mca_base_var_parse(const mca_base_var_priv_t *var, const char *text,
                       mca_base_var_storage_t *out, char **why)
{
    int64_t s;
    uint64_t u;
    int rc;
    *why = NULL;
    switch (var->pub.mbv_type) {
        case MCA_BASE_VAR_TYPE_INT:
            if (NULL != var->pub.mbv_enumerator) {
                return mca_base_var_enum_parse(var->pub.mbv_enumerator, text, &out->intval, why);
            }
            rc = parse_signed(text, INT_MAX, (uint64_t) INT_MAX + 1, &s, why);
            out->intval = (int) s;
            return rc;
        case MCA_BASE_VAR_TYPE_LONG:
            rc = parse_signed(text, LONG_MAX, (uint64_t) LONG_MAX + 1, &s, why);
            out->longval = (long) s;
            return rc;
        case MCA_BASE_VAR_TYPE_UNSIGNED_INT:
            rc = parse_unsigned(text, UINT_MAX, &u, why);
            out->uintval = (unsigned int) u;
            return rc;
        case MCA_BASE_VAR_TYPE_SIZE_T:
            rc = parse_unsigned(text, SIZE_MAX, &u, why);
            out->sizetval = (size_t) u;
            return rc;
        case MCA_BASE_VAR_TYPE_UINT64_T:
            return parse_unsigned(text, UINT64_MAX, &out->uint64val, why);
        case MCA_BASE_VAR_TYPE_BOOL:
            return parse_bool(text, &out->boolval, why);
        case MCA_BASE_VAR_TYPE_DOUBLE:
            return parse_double(text, &out->doubleval, why);
        case MCA_BASE_VAR_TYPE_STRING:
            out->stringval = strdup(text);
            return NULL != out->stringval ? OPAL_SUCCESS : OPAL_ERR_OUT_OF_RESOURCE;
        default:
            return OPAL_ERR_BAD_PARAM;
    }
}

/* 15 significant digits print what users typed ("0.1", not
 * "0.10000000000000001"); 17 are used only when 15 would not read back
 * as the same double. */
static char *format_double(double v)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%.15g", v);
    if (strtod(buf, NULL) != v) {
        snprintf(buf, sizeof(buf), "%.17g", v);
    }
    return strdup(buf);
}

char *mca_base_var_format_typed(mca_base_var_type_t type, const mca_base_var_enum_t *enumerator,
                                const mca_base_var_storage_t *value)
{
    char *text = NULL;
    int rc = 0;
    switch (type) {
        case MCA_BASE_VAR_TYPE_INT:
            if (NULL != enumerator) {
                return OPAL_SUCCESS == mca_base_var_enum_to_string(enumerator, value->intval, &text)
                           ? text
                           : NULL;
            }
            rc = asprintf(&text, "%d", value->intval);
            break;
        case MCA_BASE_VAR_TYPE_UNSIGNED_INT:
            rc = asprintf(&text, "%u", value->uintval);
            break;
        case MCA_BASE_VAR_TYPE_LONG:
            rc = asprintf(&text, "%ld", value->longval);
            break;
        case MCA_BASE_VAR_TYPE_SIZE_T:
            rc = asprintf(&text, "%zu", value->sizetval);
            break;
        case MCA_BASE_VAR_TYPE_UINT64_T:
            rc = asprintf(&text, "%" PRIu64, value->uint64val);
            break;
        case MCA_BASE_VAR_TYPE_BOOL:
            return strdup(value->boolval ? "true" : "false");
        case MCA_BASE_VAR_TYPE_DOUBLE:
            return format_double(value->doubleval);
        case MCA_BASE_VAR_TYPE_STRING:
            return strdup(NULL != value->stringval ? value->stringval : "");
        default:
            return NULL;
    }
    return rc < 0 ? NULL : text;
}

static char *describe(mca_base_var_source_t source, const char *name, const char *file, int line)
{
    char *text = NULL;
    int rc;
    switch (source) {
        case MCA_BASE_VAR_SOURCE_FILE:
        case MCA_BASE_VAR_SOURCE_OVERRIDE:
            rc = line > 0 ? asprintf(&text, "%s %s:%d", mca_base_var_source_name(source),
                                     NULL != file ? file : "?", line)
                          : asprintf(&text, "%s %s", mca_base_var_source_name(source),
                                     NULL != file ? file : "(set through the API)");
            break;
        case MCA_BASE_VAR_SOURCE_ENV:
            rc = asprintf(&text, "environment (" MCA_BASE_VAR_ENV_PREFIX "%s)", name);
            break;
        case MCA_BASE_VAR_SOURCE_COMMAND_LINE:
            rc = asprintf(&text, "command line (--mca %s)", name);
            break;
        default:
            rc = asprintf(&text, "%s", mca_base_var_source_name(source));
            break;
    }
    return rc < 0 ? NULL : text;
}

char *mca_base_var_describe_pending(const mca_base_var_pending_t *p)
{
    return describe(p->source, p->name, p->file, p->line);
}

static char *describe_current(const mca_base_var_priv_t *var)
{
    return describe(var->pub.mbv_source,
                    NULL != var->source_name ? var->source_name : var->pub.mbv_full_name,
                    var->pub.mbv_source_file, var->pub.mbv_source_line);
}

static char *current_text(const mca_base_var_priv_t *var)
{
    mca_base_var_storage_t v;
    mca_base_var_storage_read(var->pub.mbv_type, var->pub.mbv_storage, &v);
    return mca_base_var_format_typed(var->pub.mbv_type, var->pub.mbv_enumerator, &v);
}

/* Messages about a value not taken, naming the value the variable keeps.
 * Every such topic takes: variable, value, its source, the kept value, its
 * source, and (bad-value only) why. */
static void report_refusal(mca_base_var_msg_kind_t kind, const char *topic,
                           const mca_base_var_priv_t *var, const mca_base_var_pending_t *p,
                           const char *why)
{
    char *src = mca_base_var_describe_pending(p), *cur = current_text(var);
    char *cur_src = describe_current(var);
    /* An empty value would vanish from the sentence. */
    const char *shown = NULL == cur ? "?" : '\0' == *cur ? "\"\"" : cur;
    mca_base_var_report(kind, topic, var->pub.mbv_full_name, p->value, NULL != src ? src : "?",
                        shown, NULL != cur_src ? cur_src : "?", NULL != why ? why : "?");
    free(cur_src);
    free(cur);
    free(src);
}

/* Setting a deprecated name warns once per name. */
static void warn_deprecated(mca_base_var_priv_t *var, const mca_base_var_pending_t *p)
{
    mca_base_var_priv_t *named = mca_base_var_lookup(mca_base_var_lookup_name(p->name));
    if (NULL == named || 0 == (named->pub.mbv_flags & MCA_BASE_VAR_FLAG_DEPRECATED) ||
        named->deprecation_warned) {
        return;
    }
    named->deprecation_warned = true;
    char *src = mca_base_var_describe_pending(p);
    if (named != var) {
        mca_base_var_report(MCA_BASE_VAR_MSG_WARNING, "deprecated-synonym", p->name,
                            var->pub.mbv_full_name, NULL != src ? src : "?");
    } else {
        mca_base_var_report(MCA_BASE_VAR_MSG_WARNING, "deprecated", p->name,
                            NULL != src ? src : "?");
    }
    free(src);
}

static bool default_only(const mca_base_var_priv_t *var)
{
    return 0 != (var->pub.mbv_flags & MCA_BASE_VAR_FLAG_DEFAULT_ONLY) ||
           MCA_BASE_VAR_SCOPE_CONSTANT == var->pub.mbv_scope;
}

static bool read_only(const mca_base_var_priv_t *var)
{
    return 0 != (var->pub.mbv_flags & MCA_BASE_VAR_FLAG_READ_ONLY) ||
           MCA_BASE_VAR_SCOPE_READONLY == var->pub.mbv_scope;
}

/* Parses p's value for var and makes it current. On a bad value returns
 * OPAL_ERR_BAD_VALUE with *why set (the caller reports). */
static int take_value(mca_base_var_priv_t *var, const mca_base_var_pending_t *p, char **why)
{
    mca_base_var_storage_t v;
    int rc = mca_base_var_parse(var, p->value, &v, why);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    char *file = NULL, *name = strdup(p->name);
    if (NULL == name || (NULL != p->file && NULL == (file = strdup(p->file)))) {
        free(name);
        if (MCA_BASE_VAR_TYPE_STRING == var->pub.mbv_type) {
            free(v.stringval);
        }
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    mca_base_var_store(var, &v);
    var->pub.mbv_source = p->source;
    free(var->pub.mbv_source_file);
    var->pub.mbv_source_file = file;
    var->pub.mbv_source_line = p->line;
    free(var->source_name);
    var->source_name = name;
    if (MCA_BASE_VAR_SOURCE_OVERRIDE == p->source) {
        var->pub.mbv_flags |= MCA_BASE_VAR_FLAG_READ_ONLY;
    }
    return OPAL_SUCCESS;
}

static void reset_to_default(mca_base_var_priv_t *var)
{
    mca_base_var_storage_t v = var->default_value;
    if (MCA_BASE_VAR_TYPE_STRING == var->pub.mbv_type && NULL != v.stringval) {
        /* Out of memory: the storage gets NULL rather than the default we
         * must keep; nothing better is possible here. */
        v.stringval = strdup(v.stringval);
    }
    mca_base_var_store(var, &v);
    var->pub.mbv_source = MCA_BASE_VAR_SOURCE_DEFAULT;
    free(var->pub.mbv_source_file);
    var->pub.mbv_source_file = NULL;
    var->pub.mbv_source_line = 0;
    free(var->source_name);
    var->source_name = NULL;
    var->pub.mbv_flags = var->registered_flags;
}

void mca_base_var_resolve(mca_base_var_priv_t *var)
{
    /* Refusals are reported once the value is settled, so the message can
     * say which value the variable keeps. */
    struct refusal {
        mca_base_var_pending_t *p;
        char *why;
        bool default_only;
    } refused[MCA_BASE_VAR_SOURCE_MAX];
    int nrefused = 0;
    mca_base_var_pending_t *winner = NULL;

    reset_to_default(var);
    for (int src = MCA_BASE_VAR_SOURCE_MAX - 1; src > MCA_BASE_VAR_SOURCE_DEFAULT; --src) {
        mca_base_var_pending_t *p = mca_base_var_pending_find(var, (mca_base_var_source_t) src);
        if (NULL == p || p->bad) {
            continue;
        }
        warn_deprecated(var, p);
        char *why = NULL;
        if (default_only(var)) {
            refused[nrefused++] = (struct refusal){p, NULL, true};
            p->bad = true;
            continue;
        }
        int rc = take_value(var, p, &why);
        if (OPAL_SUCCESS == rc) {
            winner = p;
            break;
        }
        if (OPAL_ERR_BAD_VALUE == rc) {
            p->bad = true;
            refused[nrefused++] = (struct refusal){p, why, false};
        }
    }
    for (int i = 0; i < nrefused; ++i) {
        report_refusal(MCA_BASE_VAR_MSG_ERROR,
                       refused[i].default_only ? "default-only" : "bad-value", var, refused[i].p,
                       refused[i].why);
        free(refused[i].why);
    }

    if (NULL == winner || MCA_BASE_VAR_SOURCE_OVERRIDE != winner->source) {
        return;
    }
    /* The administrator's override silently beating a user's setting would
     * be a mystery: say so, once per setting. */
    for (int src = MCA_BASE_VAR_SOURCE_OVERRIDE - 1; src > MCA_BASE_VAR_SOURCE_DEFAULT; --src) {
        mca_base_var_pending_t *p = mca_base_var_pending_find(var, (mca_base_var_source_t) src);
        if (NULL != p && !p->bad && !p->override_reported && 0 != strcmp(p->value, winner->value)) {
            p->override_reported = true;
            report_refusal(MCA_BASE_VAR_MSG_WARNING, "override-ignores", var, p, NULL);
        }
    }
}

int mca_base_var_apply_new(mca_base_var_priv_t *named, mca_base_var_pending_t *p)
{
    mca_base_var_priv_t *var = mca_base_var_resolve_synonym(named);
    if (NULL == var || !var->pub.mbv_valid) {
        return OPAL_ERR_NOT_FOUND;
    }
    warn_deprecated(var, p);
    if (default_only(var)) {
        report_refusal(MCA_BASE_VAR_MSG_ERROR, "default-only", var, p, NULL);
        return OPAL_ERR_PERM;
    }
    if (read_only(var)) {
        report_refusal(MCA_BASE_VAR_MSG_ERROR, "read-only", var, p, NULL);
        return OPAL_ERR_PERM;
    }
    if (p->source < var->pub.mbv_source) {
        return OPAL_SUCCESS;
    }
    char *why = NULL;
    int rc = take_value(var, p, &why);
    if (OPAL_ERR_BAD_VALUE == rc) {
        report_refusal(MCA_BASE_VAR_MSG_ERROR, "bad-value", var, p, why);
    }
    free(why);
    return rc;
}

int mca_base_var_set_value_string(int var_index, const char *value, mca_base_var_source_t source,
                                  const char *source_file)
{
    if (NULL == value || source <= MCA_BASE_VAR_SOURCE_DEFAULT ||
        source >= MCA_BASE_VAR_SOURCE_MAX) {
        return OPAL_ERR_BAD_PARAM;
    }
    mca_base_var_lock();
    int rc;
    mca_base_var_priv_t *named = mca_base_var_lookup(var_index);
    if (NULL == named || !named->pub.mbv_valid) {
        rc = 0 == mca_base_var_state.init_count ? OPAL_ERR_NOT_INITIALIZED : OPAL_ERR_NOT_FOUND;
        goto out;
    }
    /* Applied from a scratch record first, so a refused value is never
     * kept for a later registration. */
    mca_base_var_pending_t scratch;
    OBJ_CONSTRUCT(&scratch, mca_base_var_pending_t);
    scratch.name = named->pub.mbv_full_name;
    scratch.value = (char *) value;
    scratch.source = source;
    scratch.file = (char *) source_file;
    rc = mca_base_var_apply_new(named, &scratch);
    scratch.name = scratch.value = scratch.file = NULL;
    OBJ_DESTRUCT(&scratch);
    if (OPAL_SUCCESS == rc) {
        /* Kept under the variable's own name, which a later registration
         * prefers over its synonyms, so the last set wins there too. Rank
         * -1: a file value set through the API beats every file. */
        bool added;
        const mca_base_var_priv_t *var = mca_base_var_resolve_synonym(named);
        if (NULL == mca_base_var_pending_add(source, var->pub.mbv_full_name, value, source_file, 0,
                                             -1, &added)) {
            rc = OPAL_ERR_OUT_OF_RESOURCE;
        }
    }

out:
    mca_base_var_unlock();
    return rc;
}

/* Runs fn on the variable (synonyms resolved) at index, under the lock. */
static int with_var(int var_index, char **text, char *(*fn)(const mca_base_var_priv_t *var))
{
    if (NULL == text) {
        return OPAL_ERR_BAD_PARAM;
    }
    *text = NULL;
    mca_base_var_lock();
    int rc = OPAL_SUCCESS;
    mca_base_var_priv_t *var = mca_base_var_lookup(var_index);
    if (NULL != var && var->pub.mbv_valid) {
        var = mca_base_var_resolve_synonym(var);
    }
    if (NULL == var || !var->pub.mbv_valid) {
        rc = 0 == mca_base_var_state.init_count ? OPAL_ERR_NOT_INITIALIZED : OPAL_ERR_NOT_FOUND;
    } else if (NULL == (*text = fn(var))) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
    }
    mca_base_var_unlock();
    return rc;
}

int mca_base_var_value_string(int var_index, char **text)
{
    return with_var(var_index, text, current_text);
}

int mca_base_var_source_string(int var_index, char **text)
{
    return with_var(var_index, text, describe_current);
}
