/*
 * opal_info's command line and the order of its sections. The sections
 * themselves are in opal_info_config.c (package, paths, configuration),
 * opal_info_components.c (frameworks, failures, selection) and
 * opal_info_params.c (variables).
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_base_open.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/na/base/base.h"
#include "opal/runtime/opal_init.h"
#include "tools/opal_info/opal_info.h"
#include "opal/util/opal_cmd_line.h"
#include "opal/util/opal_error.h"

static const opal_cmd_line_option_t options[] = {
    {"param", '\0', 2, "<framework> <component>",
     "Show the MCA variables of a component up to --level, with the component; framework may be "
     "a framework, \"mca\" (the MCA base itself) or \"all\", component a component, \"base\" "
     "(the framework's own variables) or \"all\""},
    {"level", '\0', 1, "<1-9>",
     "Show variables up to this info level (default 1): 1-3 for users, 4-6 for tuners, 7-9 for "
     "developers"},
    {"all", 'a', 0, NULL,
     "Show everything: paths, configuration, components, every variable at level 9 (or "
     "--level; internal ones too), performance variables and load failures"},
    {"parsable", '\0', 0, NULL, "Print colon-separated lines for scripts (see opal_info(1))"},
    {"parseable", '\0', 0, NULL, "Same as --parsable"},
    {"json", '\0', 0, NULL, "Print the same facts as --parsable as one JSON document"},
    {"show-failed", '\0', 0, NULL,
     "Show the components that failed to load or were refused, with the file and why"},
    {"selected", '\0', 0, NULL,
     "Open the frameworks and run their selection here: which components would be chosen, and "
     "why each other one would not"},
    {"pvars", '\0', 0, NULL, "Show the performance variables up to --level"},
    {"cleanup", '\0', 0, NULL,
     "Remove what processes started alone (no launcher) that are gone left behind: na "
     "components' files in /dev/shm, never a live process's or another user's"},
    {"path", '\0', 0, NULL, "Show the install paths and the component path"},
    {"config", 'c', 0, NULL,
     "Show the configuration: configure options, compiler, flags, "
     "dependencies"},
    {"version", 'V', 0, NULL, "Show the version and exit"},
    {"help", 'h', 0, NULL, "Show this help and exit"},
    {NULL, '\0', 0, NULL, NULL},
};

/* How many names an unknown-name message offers; more than any framework
 * has components, or the build has frameworks. */
#define MAX_KNOWN_NAMES 64

static const char usage_intro[] =
    "Usage: opal_info [options]\n"
    "Shows what this build of opal-mca holds and how it is set up. With no option:\n"
    "the package, its configuration and every framework with its components.\n\n";

static const char usage_outro[] = "\nSee opal_info(1) for the parsable and JSON formats.\n";

/* The sections a run prints, in this order. */
typedef struct {
    bool header, paths, config, components, pvars, failed, selected;
    /* --param framework/component pairs. */
    int num_params;
} sections_t;

/* The candidate closest to name within one edit per three characters, or
 * NULL. */
static const char *closest(const char *name, const char *const *candidates, size_t count)
{
    /* A swap of two neighbours counts as one edit, as for variables:
     * "blt" is one from "btl", two from "all". */
    int limit = (int) (strlen(name) / 3 + 1), best = limit + 1;
    const char *found = NULL;
    for (size_t i = 0; i < count; ++i) {
        int d = mca_base_var_distance(name, candidates[i], limit);
        if (d <= limit && d < best) {
            best = d;
            found = candidates[i];
        }
    }
    return found;
}

static void report_unknown(opal_info_t *info, const char *what, const char *name,
                           const char *const *candidates, size_t count)
{
    const char *suggestion = closest(name, candidates, count);
    char *known = NULL;
    size_t known_len = 0;
    FILE *list = open_memstream(&known, &known_len);
    if (NULL != list) {
        for (size_t i = 0; i < count; ++i) {
            fprintf(list, "%s%s", 0 == i ? "" : ", ", candidates[i]);
        }
        fclose(list);
    }
    if (NULL != suggestion) {
        opal_info_error(info, "--param: %s '%s' (did you mean '%s'?); known: %s", what, name,
                        suggestion, NULL != known ? known : "");
    } else {
        opal_info_error(info, "--param: %s '%s'; known: %s", what, name,
                        NULL != known ? known : "");
    }
    free(known);
}

/* Whether name is that of shared component code (opal/mca/common/<name>),
 * whose variables (<name>_*) any framework's components may register. */
static bool is_common_name(const char *name)
{
    for (size_t i = 0; NULL != opal_mca_common_names[i]; ++i) {
        if (0 == strcmp(name, opal_mca_common_names[i])) {
            return true;
        }
    }
    return false;
}

/* Checks the framework of --param: a framework, a common name ("ofi"),
 * "mca" or "all". */
static bool check_param_framework(opal_info_t *info, const char *fw)
{
    if (0 == strcmp(fw, "all") || 0 == strcmp(fw, "mca") || is_common_name(fw) ||
        NULL != opal_info_find_framework(info, fw)) {
        return true;
    }
    const char *names[MAX_KNOWN_NAMES] = {"all", "mca"};
    size_t count = 2;
    for (size_t i = 0; NULL != info->frameworks[i] && count < MAX_KNOWN_NAMES; ++i) {
        names[count++] = info->frameworks[i]->framework_name;
    }
    for (size_t i = 0; NULL != opal_mca_common_names[i] && count < MAX_KNOWN_NAMES; ++i) {
        names[count++] = opal_mca_common_names[i];
    }
    report_unknown(info, "no framework", fw, names, count);
    return false;
}

/* Checks the component of --param against what the framework registered
 * (so the framework is registered first). A component that declined or
 * failed to load is refused with its reason. */
static bool check_param_component(opal_info_t *info, const char *fw, const char *comp)
{
    if (0 == strcmp(comp, "all") || 0 == strcmp(comp, "base")) {
        return true;
    }
    mca_base_framework_t *framework = opal_info_find_framework(info, fw);
    if (NULL == framework) {
        opal_info_error(info,
                        "--param %s %s: with framework '%s' the component must be 'all' or "
                        "'base'",
                        fw, comp, fw);
        return false;
    }
    if (OPAL_SUCCESS != opal_info_register_framework(info, framework)) {
        return false;
    }
    const char *names[MAX_KNOWN_NAMES] = {"all", "base"};
    size_t count = 2;
    mca_base_component_list_item_t *item;
    OPAL_LIST_FOREACH (item, &framework->framework_components, mca_base_component_list_item_t) {
        if (0 == strcmp(item->cli_component->mca_component_name, comp)) {
            return true;
        }
        if (count < MAX_KNOWN_NAMES) {
            names[count++] = item->cli_component->mca_component_name;
        }
    }
    mca_base_component_failure_t *f;
    OPAL_LIST_FOREACH (f, &framework->framework_failures, mca_base_component_failure_t) {
        if (0 == strcmp(f->cf_component, comp)) {
            opal_info_error(info, "--param %s %s: component %s is not available (%s: %s)", fw, comp,
                            comp, mca_base_component_stage_name(f->cf_stage), f->cf_reason);
            return false;
        }
    }
    char what[128];
    snprintf(what, sizeof(what), "framework %s has no component", fw);
    report_unknown(info, what, comp, names, count);
    return false;
}

/* Reads the options into info and sections; false after printing why
 * they do not make sense together. */
static bool read_options(opal_info_t *info, const opal_cmd_line_t *cmd, sections_t *sections)
{
    bool parsable =
        opal_cmd_line_is_taken(cmd, "parsable") || opal_cmd_line_is_taken(cmd, "parseable");
    bool json = opal_cmd_line_is_taken(cmd, "json");
    if (parsable && json) {
        opal_info_error(info, "--parsable and --json cannot be used together");
        return false;
    }
    info->format = parsable ? OPAL_INFO_PARSABLE : json ? OPAL_INFO_JSON : OPAL_INFO_PRETTY;
    bool all = opal_cmd_line_is_taken(cmd, "all");
    int levels = opal_cmd_line_get_ninsts(cmd, "level");
    if (levels > 0) {
        const char *text = opal_cmd_line_get_param(cmd, "level", levels - 1, 0);
        char *end = NULL;
        long level = strtol(text, &end, 10);
        if ('\0' == text[0] || '\0' != *end || level < 1 || level > 9) {
            opal_info_error(info, "--level %s: the level is a number from 1 to 9", text);
            return false;
        }
        info->level = (int) level;
    }
    if (all) {
        /* Everything, unless a level was asked for as well. */
        info->level = levels > 0 ? info->level : OPAL_INFO_LVL_9;
        info->show_internal = true;
    }
    sections->num_params = opal_cmd_line_get_ninsts(cmd, "param");
    sections->paths = all || opal_cmd_line_is_taken(cmd, "path");
    sections->config = all || opal_cmd_line_is_taken(cmd, "config");
    sections->pvars = all || opal_cmd_line_is_taken(cmd, "pvars");
    sections->failed = all || opal_cmd_line_is_taken(cmd, "show-failed");
    sections->selected = opal_cmd_line_is_taken(cmd, "selected");
    /* Asking for one thing shows that thing only. */
    bool asked = sections->paths || sections->config || sections->pvars || sections->failed ||
                 sections->selected || sections->num_params > 0 ||
                 opal_cmd_line_is_taken(cmd, "cleanup");
    sections->header = all || !asked;
    sections->components = all || !asked;
    return true;
}

/* Hands every --mca/--gmca pair to the variable system. */
static int apply_mca_options(opal_info_t *info, const opal_cmd_line_t *cmd)
{
    opal_list_t params;
    OBJ_CONSTRUCT(&params, opal_list_t);
    int rc = opal_cmd_line_get_mca_params(cmd, &params);
    size_t count = opal_list_get_size(&params);
    char **keys = calloc(count + 1, sizeof(char *));
    char **values = calloc(count + 1, sizeof(char *));
    if (OPAL_SUCCESS == rc && (NULL == keys || NULL == values)) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (OPAL_SUCCESS == rc && count > 0) {
        size_t i = 0;
        opal_cmd_line_mca_param_t *p;
        OPAL_LIST_FOREACH (p, &params, opal_cmd_line_mca_param_t) {
            keys[i] = p->key;
            values[i] = p->value;
            ++i;
        }
        rc = mca_base_var_process_cmdline((int) count, keys, values);
    }
    if (OPAL_SUCCESS != rc) {
        opal_info_error(info, "--mca: %s", opal_strerror(rc));
    }
    free(values);
    free(keys);
    OPAL_LIST_DESTRUCT(&params);
    return rc;
}

static void show_param_option(opal_info_t *info, const char *fw, const char *comp)
{
    if (0 != strcmp(fw, "mca") && 0 != strcmp(comp, "base")) {
        if (0 == strcmp(fw, "all")) {
            opal_info_show_components(info, NULL, NULL);
        } else {
            opal_info_show_components(info, opal_info_find_framework(info, fw),
                                      0 == strcmp(comp, "all") ? NULL : comp);
        }
    }
    opal_info_show_params(info, fw, comp);
}

/* --cleanup: every na component's cleanup (opal_na_cleanup). */
static void run_cleanup(opal_info_t *info)
{
    int removed = opal_na_cleanup();
    if (removed < 0) {
        opal_info_error(info, "--cleanup: %s", opal_strerror(removed));
        return;
    }
    fprintf(info->out, "opal_info: --cleanup removed %d file(s) of processes that are gone\n",
            removed);
}

/* Registers what the sections need, then prints them in order. */
static void run_sections(opal_info_t *info, const opal_cmd_line_t *cmd, const sections_t *s)
{
    bool every_framework = s->components || s->pvars || s->failed;
    for (int i = 0; i < s->num_params; ++i) {
        const char *fw = opal_cmd_line_get_param(cmd, "param", i, 0);
        const char *comp = opal_cmd_line_get_param(cmd, "param", i, 1);
        if (!check_param_framework(info, fw) || !check_param_component(info, fw, comp)) {
            return;
        }
        /* Shared code's variables are registered by whichever components
         * use it: every framework is needed to find them. */
        every_framework = every_framework || 0 == strcmp(fw, "all") || is_common_name(fw);
    }
    for (size_t i = 0; every_framework && NULL != info->frameworks[i]; ++i) {
        (void) opal_info_register_framework(info, info->frameworks[i]);
    }
    for (int i = 0; i < s->num_params; ++i) {
        const char *fw = opal_cmd_line_get_param(cmd, "param", i, 0);
        mca_base_framework_t *framework = opal_info_find_framework(info, fw);
        if (NULL != framework) {
            (void) opal_info_register_framework(info, framework);
        }
    }
    /* Now that every variable this run can know of is registered, names
     * given with --mca, in the environment or in files that match none
     * are typos: say so (with the nearest name) before the output. */
    (void) mca_base_var_check_unknown();

    if (s->header) {
        opal_info_show_header(info);
    }
    if (s->paths) {
        opal_info_show_paths(info);
    }
    if (s->config) {
        opal_info_show_config(info);
    }
    if (s->components) {
        opal_info_show_components(info, NULL, NULL);
    }
    if (opal_cmd_line_is_taken(cmd, "all")) {
        opal_info_show_params(info, "all", "all");
    }
    for (int i = 0; i < s->num_params; ++i) {
        show_param_option(info, opal_cmd_line_get_param(cmd, "param", i, 0),
                          opal_cmd_line_get_param(cmd, "param", i, 1));
    }
    if (s->pvars) {
        opal_info_show_pvars(info);
    }
    if (s->failed) {
        opal_info_show_failed(info);
    }
    if (s->selected) {
        opal_info_show_selected(info);
    }
    if (opal_cmd_line_is_taken(cmd, "cleanup")) {
        run_cleanup(info);
    }
}

static void print_usage(opal_info_t *info, const opal_cmd_line_t *cmd)
{
    size_t width = opal_info_terminal_width(STDOUT_FILENO);
    char *usage = opal_cmd_line_get_usage_msg(cmd, 0 != width ? (int) width : 80);
    if (NULL == usage) {
        opal_info_error(info, "out of memory");
        return;
    }
    fprintf(info->out, "%s%s%s", usage_intro, usage, usage_outro);
    free(usage);
}

static opal_cmd_line_t *make_cmd_line(void)
{
    opal_cmd_line_t *cmd = OBJ_NEW(opal_cmd_line_t);
    if (NULL != cmd && (OPAL_SUCCESS != opal_cmd_line_add(cmd, options) ||
                        OPAL_SUCCESS != opal_cmd_line_add_mca_options(cmd))) {
        OBJ_RELEASE(cmd);
    }
    return cmd;
}

/* Runs once the command line is parsed: everything that needs the MCA
 * base. Returns with the base closed again. */
static void run(opal_info_t *info, const opal_cmd_line_t *cmd, const sections_t *sections)
{
    int rc = mca_base_open();
    if (OPAL_SUCCESS != rc) {
        opal_info_error(info, "cannot open the MCA base: %s", opal_strerror(rc));
        return;
    }
    /* Variables of a framework shown here are not typos even before it
     * registers (opal's own are declared by mca_base_open). */
    for (size_t i = 0; NULL != info->frameworks[i]; ++i) {
        (void) mca_base_var_declare_prefix(info->frameworks[i]->framework_name);
    }
    if (OPAL_SUCCESS == apply_mca_options(info, cmd)) {
        run_sections(info, cmd, sections);
    }
    opal_info_close_frameworks(info);
    (void) mca_base_close();
}

int opal_info_main(int argc, char **argv, mca_base_framework_t *const *frameworks)
{
    static mca_base_framework_t *const no_frameworks[] = {NULL};
    opal_info_t info = {
        .out = stdout,
        .format = OPAL_INFO_PRETTY,
        .level = OPAL_INFO_LVL_1,
        .frameworks = NULL != frameworks ? frameworks : no_frameworks,
    };
    sections_t sections = {.header = false};
    opal_cmd_line_t *cmd = NULL;

    int rc = opal_init_util(&argc, &argv);
    if (OPAL_SUCCESS != rc) {
        opal_info_error(&info, "cannot start: %s", opal_strerror(rc));
        return EXIT_FAILURE;
    }
    size_t count = 0;
    while (NULL != info.frameworks[count]) {
        ++count;
    }
    info.registered = calloc(count + 1, sizeof(bool));
    cmd = make_cmd_line();
    if (NULL == info.registered || NULL == cmd) {
        opal_info_error(&info, "out of memory");
        goto out;
    }
    if (OPAL_SUCCESS != opal_cmd_line_parse(cmd, argc, argv, 0)) {
        opal_info_error(&info, "%s\nRun 'opal_info --help' for the options.",
                        opal_cmd_line_get_error(cmd));
        goto out;
    }
    int positional = 0;
    char **words = opal_cmd_line_get_positional(cmd, &positional);
    if (positional > 0) {
        opal_info_error(&info,
                        "unexpected argument '%s' (options start with --)\nRun 'opal_info "
                        "--help' for the options.",
                        words[0]);
        goto out;
    }
    if (opal_cmd_line_is_taken(cmd, "help")) {
        print_usage(&info, cmd);
        goto out;
    }
    if (!read_options(&info, cmd, &sections)) {
        goto out;
    }
    if (OPAL_INFO_PRETTY != info.format) {
        info.tree = opal_info_tree_new();
        if (NULL == info.tree) {
            opal_info_error(&info, "out of memory");
            goto out;
        }
    } else {
        info.width = opal_info_terminal_width(STDOUT_FILENO);
    }
    /* --version needs nothing else: no variable system, no plugin. */
    if (opal_cmd_line_is_taken(cmd, "version")) {
        opal_info_show_version(&info);
    } else {
        run(&info, cmd, &sections);
    }
    /* A run that failed before finding anything prints only the error. */
    bool nothing = NULL == info.tree || (info.failed && NULL == info.tree->first_child);
    if (!nothing && OPAL_INFO_PARSABLE == info.format) {
        opal_info_tree_print_parsable(info.out, info.tree);
    } else if (!nothing && OPAL_INFO_JSON == info.format) {
        opal_info_tree_print_json(info.out, info.tree);
    }

out:
    fflush(info.out);
    opal_info_tree_free(info.tree);
    if (NULL != cmd) {
        OBJ_RELEASE(cmd);
    }
    free(info.registered);
    (void) opal_finalize_util();
    return info.failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
