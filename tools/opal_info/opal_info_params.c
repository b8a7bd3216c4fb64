/*
 * MCA variables (--param) and performance variables (--pvars).
 *
 * A variable is shown under its framework and component: the MCA base's
 * own variables under "mca base", a framework's own (its selection
 * variable "<fw>", <fw>_base_*) under "<fw> base". Variables are listed in
 * registration order, which groups them by framework and component. Their
 * facts live under mca:<fw>:<comp>:param:<name>, a pvar's under
 * mca:<fw>:<comp>:pvar:<name> (see opal_info(1)).
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_pvar.h"
#include "opal/mca/base/mca_base_var.h"
#include "tools/opal_info/opal_info.h"
#include "opal/util/opal_error.h"

#define PRETTY(info) (OPAL_INFO_PRETTY == (info)->format)

const char *opal_info_level_name(int level)
{
    static const char *const names[] = {
        "1 user/basic", "2 user/detail", "3 user/all",   "4 tuner/basic", "5 tuner/detail",
        "6 tuner/all",  "7 dev/basic",   "8 dev/detail", "9 dev/all",
    };
    return level >= 1 && level <= 9 ? names[level - 1] : "unknown level";
}

/* The framework a variable is shown under: its own, or its project's when
 * it has none. */
static const char *group_framework(const char *project, const char *framework)
{
    return NULL != framework ? framework : NULL != project ? project : "opal";
}

/* The component a variable is shown under: "base" for a framework's own. */
static const char *group_component(const char *component)
{
    return NULL != component ? component : "base";
}

static bool wanted(const char *fw, const char *comp, const char *var_fw, const char *var_comp)
{
    return (0 == strcmp(fw, "all") || 0 == strcmp(fw, var_fw)) &&
           (0 == strcmp(comp, "all") || 0 == strcmp(comp, var_comp));
}

/* "MCA <fw> <comp>", or "MCA <fw>" for a framework's variable that has no
 * component (its selection variable). */
static void pretty_label(char *label, size_t size, const char *fw, const char *component)
{
    if (NULL == component) {
        snprintf(label, size, "MCA %s", fw);
    } else {
        snprintf(label, size, "MCA %s %s", fw, component);
    }
}

static bool is_read_only(const mca_base_var_t *var)
{
    return 0 != (var->mbv_flags & MCA_BASE_VAR_FLAG_READ_ONLY) ||
           MCA_BASE_VAR_SCOPE_READONLY == var->mbv_scope ||
           MCA_BASE_VAR_SCOPE_CONSTANT == var->mbv_scope;
}

static bool is_default_only(const mca_base_var_t *var)
{
    return 0 != (var->mbv_flags & MCA_BASE_VAR_FLAG_DEFAULT_ONLY) ||
           MCA_BASE_VAR_SCOPE_CONSTANT == var->mbv_scope;
}

/* Enumerator values: "0:\"red\", 1:\"green\"" (flag sets in hex), and one
 * fact each. */
static void show_enumerator(opal_info_t *info, const mca_base_var_t *var, const char *fw,
                            const char *comp)
{
    const mca_base_var_enum_t *e = var->mbv_enumerator;
    const char *name = var->mbv_full_name;
    opal_info_put(info, e->enum_is_flag ? "flag" : "enum", "mca", fw, comp, "param", name,
                  "enumerator", "kind", NULL);
    char *list = NULL;
    size_t list_len = 0;
    FILE *text = PRETTY(info) ? open_memstream(&list, &list_len) : NULL;
    for (int i = 0; i < e->enum_value_count; ++i) {
        const mca_base_var_enum_value_t *v = &e->enum_values[i];
        char number[32];
        snprintf(number, sizeof(number), e->enum_is_flag ? "0x%x" : "%d", v->value);
        opal_info_put(info, v->string, "mca", fw, comp, "param", name, "enumerator", "value",
                      number, NULL);
        if (NULL != text) {
            fprintf(text, "%s%s:\"%s\"", 0 == i ? "" : ", ", number, v->string);
        }
    }
    if (NULL != text) {
        fclose(text);
        opal_info_prettyf(info, "", "Valid %s: %s", e->enum_is_flag ? "flags" : "values", list);
        free(list);
    }
}

/* The variable's synonyms as facts, and as ", synonyms: a, b
 * (deprecated)" for the pretty line (caller frees; "" when none). */
static char *show_synonyms(opal_info_t *info, const mca_base_var_t *var, const char *fw,
                           const char *comp)
{
    char *list = NULL;
    size_t list_len = 0;
    FILE *text = open_memstream(&list, &list_len);
    if (NULL == text) {
        return NULL;
    }
    int listed = 0;
    for (int i = 0; i < var->mbv_synonym_count; ++i) {
        const mca_base_var_t *syn = NULL;
        if (OPAL_SUCCESS != mca_base_var_get(var->mbv_synonyms[i], &syn) || !syn->mbv_valid) {
            continue;
        }
        bool deprecated = 0 != (syn->mbv_flags & MCA_BASE_VAR_FLAG_DEPRECATED);
        opal_info_put_bool(info, deprecated, "mca", fw, comp, "param", var->mbv_full_name,
                           "synonym", syn->mbv_full_name, "deprecated", NULL);
        fprintf(text, "%s%s%s", 0 == listed++ ? ", synonyms: " : ", ", syn->mbv_full_name,
                deprecated ? " (deprecated)" : "");
    }
    fclose(text);
    return list;
}

/* For pretty output: "unlimited" for a size_t or uint64_t at its type's
 * largest value (18446744073709551615 says the same, less readably; the
 * parsable and JSON formats keep the number). Otherwise text itself. */
static const char *pretty_value(const mca_base_var_t *var, const char *text)
{
    uint64_t max;
    if (MCA_BASE_VAR_TYPE_SIZE_T == var->mbv_type) {
        max = SIZE_MAX;
    } else if (MCA_BASE_VAR_TYPE_UINT64_T == var->mbv_type) {
        max = UINT64_MAX;
    } else {
        return text;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    bool whole = '\0' != text[0] && NULL != end && '\0' == *end && 0 == errno;
    return whole && v == max ? "unlimited" : text;
}

static void show_param(opal_info_t *info, int index, const mca_base_var_t *var)
{
    const char *fw = group_framework(var->mbv_project_name, var->mbv_framework_name);
    const char *comp = group_component(var->mbv_component_name);
    const char *name = var->mbv_full_name;
    char *value = NULL, *source = NULL;
    if (OPAL_SUCCESS != mca_base_var_value_string(index, &value) ||
        OPAL_SUCCESS != mca_base_var_source_string(index, &source)) {
        opal_info_error(info, "cannot read variable %s", name);
        goto out;
    }
    const char *type = mca_base_var_type_name(var->mbv_type);
    const char *description = NULL != var->mbv_description ? var->mbv_description : "";
    const char *dflt = NULL != var->mbv_default_text ? var->mbv_default_text : "";
    bool deprecated = 0 != (var->mbv_flags & MCA_BASE_VAR_FLAG_DEPRECATED);
    bool internal = 0 != (var->mbv_flags & MCA_BASE_VAR_FLAG_INTERNAL);

    opal_info_put(info, value, "mca", fw, comp, "param", name, "value", NULL);
    opal_info_put(info, mca_base_var_source_name(var->mbv_source), "mca", fw, comp, "param", name,
                  "source", NULL);
    if (NULL != var->mbv_source_file) {
        opal_info_put(info, var->mbv_source_file, "mca", fw, comp, "param", name, "source_file",
                      NULL);
        opal_info_put_int(info, var->mbv_source_line, "mca", fw, comp, "param", name, "source_line",
                          NULL);
    }
    opal_info_put(info, dflt, "mca", fw, comp, "param", name, "default", NULL);
    opal_info_put_int(info, var->mbv_info_lvl, "mca", fw, comp, "param", name, "level", NULL);
    opal_info_put(info, type, "mca", fw, comp, "param", name, "type", NULL);
    opal_info_put(info, mca_base_var_scope_name(var->mbv_scope), "mca", fw, comp, "param", name,
                  "scope", NULL);
    opal_info_put_bool(info, is_read_only(var), "mca", fw, comp, "param", name, "read_only", NULL);
    opal_info_put_bool(info, is_default_only(var), "mca", fw, comp, "param", name, "default_only",
                       NULL);
    opal_info_put_bool(info, internal, "mca", fw, comp, "param", name, "internal", NULL);
    opal_info_put_bool(info, deprecated, "mca", fw, comp, "param", name, "deprecated", NULL);
    opal_info_put(info, description, "mca", fw, comp, "param", name, "help", NULL);
    char *synonyms = show_synonyms(info, var, fw, comp);

    if (PRETTY(info)) {
        char label[160];
        pretty_label(label, sizeof(label), fw,
                     NULL != var->mbv_framework_name ? var->mbv_component_name : comp);
        char *default_note = NULL;
        /* The default is worth a word only when something changed it. */
        if (MCA_BASE_VAR_SOURCE_DEFAULT != var->mbv_source &&
            asprintf(&default_note, ", default: \"%s\"", pretty_value(var, dflt)) < 0) {
            default_note = NULL;
        }
        opal_info_prettyf(info, label,
                          "parameter \"%s\" (current value: \"%s\", data source: %s%s, level: %s, "
                          "type: %s%s%s%s%s)",
                          name, pretty_value(var, value), source,
                          NULL != default_note ? default_note : "",
                          opal_info_level_name(var->mbv_info_lvl), type,
                          is_read_only(var) ? ", read-only" : "", deprecated ? ", deprecated" : "",
                          internal ? ", internal" : "", NULL != synonyms ? synonyms : "");
        free(default_note);
        if ('\0' != description[0]) {
            opal_info_pretty(info, "", description);
        }
    }
    if (NULL != var->mbv_enumerator) {
        show_enumerator(info, var, fw, comp);
    }
    free(synonyms);
out:
    free(source);
    free(value);
}

static bool visible(const opal_info_t *info, int level, uint32_t flags, uint32_t internal_flag)
{
    return level <= info->level && (info->show_internal || 0 == (flags & internal_flag));
}

void opal_info_show_params(opal_info_t *info, const char *fw, const char *comp)
{
    int count = mca_base_var_get_count(), shown = 0;
    for (int i = 0; i < count; ++i) {
        const mca_base_var_t *var = NULL;
        if (OPAL_SUCCESS != mca_base_var_get(i, &var) || !var->mbv_valid ||
            0 != (var->mbv_flags & MCA_BASE_VAR_FLAG_SYNONYM)) {
            continue;
        }
        if (!visible(info, (int) var->mbv_info_lvl, var->mbv_flags, MCA_BASE_VAR_FLAG_INTERNAL) ||
            !wanted(fw, comp, group_framework(var->mbv_project_name, var->mbv_framework_name),
                    group_component(var->mbv_component_name))) {
            continue;
        }
        show_param(info, i, var);
        ++shown;
    }
    if (0 == shown && PRETTY(info)) {
        char label[160];
        pretty_label(label, sizeof(label), fw, 0 == strcmp(comp, "all") ? NULL : comp);
        opal_info_prettyf(info, label, "no variables up to level %d%s", info->level,
                          info->level < OPAL_INFO_LVL_9 ? " (--level 9 shows them all)" : "");
    }
}

static void show_pvar(opal_info_t *info, int index, const mca_base_pvar_t *pvar)
{
    const char *fw = group_framework(pvar->pvar_project_name, pvar->pvar_framework_name);
    const char *comp = group_component(pvar->pvar_component_name);
    const char *name = pvar->pvar_full_name;
    char *value = NULL;
    int rc = mca_base_pvar_value_string(index, &value);
    if (OPAL_SUCCESS != rc) {
        opal_info_error(info, "cannot read performance variable %s: %s", name, opal_strerror(rc));
        return;
    }
    const char *class_name = mca_base_pvar_class_name(pvar->pvar_class);
    const char *type = mca_base_var_type_name(pvar->pvar_type);
    const char *description = NULL != pvar->pvar_description ? pvar->pvar_description : "";
    bool internal = 0 != (pvar->pvar_flags & MCA_BASE_PVAR_FLAG_INTERNAL);
    opal_info_put(info, value, "mca", fw, comp, "pvar", name, "value", NULL);
    opal_info_put(info, class_name, "mca", fw, comp, "pvar", name, "class", NULL);
    opal_info_put(info, type, "mca", fw, comp, "pvar", name, "type", NULL);
    opal_info_put_int(info, pvar->pvar_info_lvl, "mca", fw, comp, "pvar", name, "level", NULL);
    opal_info_put_bool(info, internal, "mca", fw, comp, "pvar", name, "internal", NULL);
    opal_info_put(info, description, "mca", fw, comp, "pvar", name, "help", NULL);
    if (PRETTY(info)) {
        char label[160];
        pretty_label(label, sizeof(label), fw,
                     NULL != pvar->pvar_framework_name ? pvar->pvar_component_name : comp);
        opal_info_prettyf(info, label,
                          "performance variable \"%s\" (value: %s, class: %s, type: %s, level: "
                          "%s%s)",
                          name, value, class_name, type, opal_info_level_name(pvar->pvar_info_lvl),
                          internal ? ", internal" : "");
        if ('\0' != description[0]) {
            opal_info_pretty(info, "", description);
        }
    }
    free(value);
}

void opal_info_show_pvars(opal_info_t *info)
{
    int count = mca_base_pvar_get_count(), shown = 0;
    for (int i = 0; i < count; ++i) {
        const mca_base_pvar_t *pvar = NULL;
        if (OPAL_SUCCESS != mca_base_pvar_get(i, &pvar) || !pvar->pvar_valid ||
            !visible(info, (int) pvar->pvar_info_lvl, pvar->pvar_flags,
                     MCA_BASE_PVAR_FLAG_INTERNAL)) {
            continue;
        }
        show_pvar(info, i, pvar);
        ++shown;
    }
    if (0 == shown && PRETTY(info)) {
        opal_info_prettyf(info, "Performance variables", "none up to level %d", info->level);
    }
}
