/*
 * Frameworks and their components: the listing (versions, built in or
 * plugin), the components that failed to load, and what selection would
 * choose here.
 *
 * Facts about a component live under mca:<fw>:<comp>, about a framework
 * under framework:<fw> (see opal_info(1) for every key).
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/btl/base/base.h"
#include "tools/opal_info/opal_info.h"
#include "opal/util/opal_argv.h"
#include "opal/util/opal_error.h"

#define PRETTY(info) (OPAL_INFO_PRETTY == (info)->format)

mca_base_framework_t *opal_info_find_framework(const opal_info_t *info, const char *name)
{
    for (size_t i = 0; NULL != info->frameworks[i]; ++i) {
        if (0 == strcmp(info->frameworks[i]->framework_name, name)) {
            return info->frameworks[i];
        }
    }
    return NULL;
}

static size_t framework_index(const opal_info_t *info, const mca_base_framework_t *framework)
{
    size_t i = 0;
    while (info->frameworks[i] != framework) {
        ++i;
    }
    return i;
}

int opal_info_register_framework(opal_info_t *info, mca_base_framework_t *framework)
{
    size_t i = framework_index(info, framework);
    if (info->registered[i]) {
        return OPAL_SUCCESS;
    }
    /* Every component, whatever the selection variable says: opal_info
     * shows what exists, not what a program would use. */
    int rc = mca_base_framework_register(framework, MCA_BASE_REGISTER_ALL);
    if (OPAL_SUCCESS != rc) {
        opal_info_error(info, "cannot register framework %s: %s", framework->framework_name,
                        opal_strerror(rc));
        return rc;
    }
    info->registered[i] = true;
    return OPAL_SUCCESS;
}

void opal_info_close_frameworks(opal_info_t *info)
{
    for (size_t i = 0; NULL != info->frameworks[i]; ++i) {
        if (info->registered[i]) {
            (void) mca_base_framework_close(info->frameworks[i]);
            info->registered[i] = false;
        }
    }
}

/* The component's name (a fixed-size field, NUL-terminated by the
 * version check). */
static const char *name_of(const mca_base_component_t *component)
{
    return component->mca_component_name;
}

static void version_text(char *buf, size_t size, int major, int minor, int release)
{
    snprintf(buf, size, "%d.%d.%d", major, minor, release);
}

static void show_framework_facts(opal_info_t *info, const mca_base_framework_t *fw)
{
    const char *name = fw->framework_name;
    opal_info_put(info, fw->framework_project, "framework", name, "project", NULL);
    opal_info_put(info, fw->framework_description, "framework", name, "description", NULL);
    opal_info_put(info,
                  0 != (fw->framework_flags & MCA_BASE_FRAMEWORK_FLAG_MULTI_SELECT) ? "multi"
                                                                                    : "single",
                  "framework", name, "select", NULL);
}

static void show_component(opal_info_t *info, const mca_base_framework_t *fw,
                           const mca_base_component_list_item_t *item)
{
    const mca_base_component_t *c = item->cli_component;
    const char *fw_name = fw->framework_name, *name = name_of(c);
    char mca[32], api[32], comp[32], project[32];
    version_text(mca, sizeof(mca), c->mca_major_version, c->mca_minor_version,
                 c->mca_release_version);
    version_text(api, sizeof(api), c->mca_type_major_version, c->mca_type_minor_version,
                 c->mca_type_release_version);
    version_text(comp, sizeof(comp), c->mca_component_major_version, c->mca_component_minor_version,
                 c->mca_component_release_version);
    version_text(project, sizeof(project), c->mca_project_major_version,
                 c->mca_project_minor_version, c->mca_project_release_version);
    opal_info_put(info, "available", "mca", fw_name, name, "status", NULL);
    opal_info_put(info, mca, "mca", fw_name, name, "version", "mca", NULL);
    opal_info_put(info, api, "mca", fw_name, name, "version", "api", NULL);
    opal_info_put(info, comp, "mca", fw_name, name, "version", "component", NULL);
    opal_info_put(info, c->mca_project_name, "mca", fw_name, name, "project", "name", NULL);
    opal_info_put(info, project, "mca", fw_name, name, "project", "version", NULL);
    opal_info_put(info, NULL != item->cli_path ? "plugin" : "static", "mca", fw_name, name, "build",
                  NULL);
    if (NULL != item->cli_path) {
        opal_info_put(info, item->cli_path, "mca", fw_name, name, "path", NULL);
    }
    if (PRETTY(info)) {
        char label[64];
        snprintf(label, sizeof(label), "MCA %s", fw_name);
        if (NULL != item->cli_path) {
            opal_info_prettyf(info, label, "%s (MCA v%s, API v%s, Component v%s, plugin %s)", name,
                              mca, api, comp, item->cli_path);
        } else {
            opal_info_prettyf(info, label, "%s (MCA v%s, API v%s, Component v%s, built in)", name,
                              mca, api, comp);
        }
    }
}

/* A component that is not in the framework's list, and why: declined at
 * register (the listing) or failed to load (--show-failed). */
static void show_unavailable(opal_info_t *info, const mca_base_component_failure_t *f,
                             const char *status)
{
    const char *fw_name = f->cf_framework, *name = f->cf_component;
    const char *stage = mca_base_component_stage_name(f->cf_stage);
    opal_info_put(info, status, "mca", fw_name, name, "status", NULL);
    opal_info_put(info, stage, "mca", fw_name, name, "stage", NULL);
    opal_info_put(info, f->cf_reason, "mca", fw_name, name, "reason", NULL);
    opal_info_put(info, NULL != f->cf_path ? "plugin" : "static", "mca", fw_name, name, "build",
                  NULL);
    if (NULL != f->cf_path) {
        opal_info_put(info, f->cf_path, "mca", fw_name, name, "path", NULL);
    }
    if (PRETTY(info)) {
        char label[64];
        snprintf(label, sizeof(label), "MCA %s", fw_name);
        if (NULL != f->cf_path) {
            opal_info_prettyf(info, label, "%s (plugin %s) %s at %s: %s", name, f->cf_path, status,
                              stage, f->cf_reason);
        } else {
            opal_info_prettyf(info, label, "%s (built in) %s at %s: %s", name, status, stage,
                              f->cf_reason);
        }
    }
}

static bool load_failure(const mca_base_component_failure_t *f)
{
    return MCA_BASE_COMPONENT_STAGE_LOAD == f->cf_stage ||
           MCA_BASE_COMPONENT_STAGE_VERSION == f->cf_stage;
}

static void show_framework_components(opal_info_t *info, mca_base_framework_t *fw,
                                      const char *component)
{
    if (OPAL_SUCCESS != opal_info_register_framework(info, fw)) {
        return;
    }
    show_framework_facts(info, fw);
    size_t shown = 0, failed = 0;
    mca_base_component_list_item_t *item;
    OPAL_LIST_FOREACH (item, &fw->framework_components, mca_base_component_list_item_t) {
        if (NULL == component || 0 == strcmp(component, name_of(item->cli_component))) {
            show_component(info, fw, item);
            ++shown;
        }
    }
    mca_base_component_failure_t *f;
    OPAL_LIST_FOREACH (f, &fw->framework_failures, mca_base_component_failure_t) {
        if (NULL != component && 0 != strcmp(component, f->cf_component)) {
            continue;
        }
        if (MCA_BASE_COMPONENT_STAGE_REGISTER == f->cf_stage) {
            show_unavailable(info, f, "declined");
            ++shown;
        } else if (load_failure(f)) {
            ++failed;
        }
    }
    if (!PRETTY(info) || NULL != component) {
        return;
    }
    char label[64];
    snprintf(label, sizeof(label), "MCA %s", fw->framework_name);
    if (0 == shown) {
        opal_info_pretty(info, label, "no components");
    }
    if (0 != failed) {
        opal_info_prettyf(info, label, "%zu component(s) failed to load: opal_info --show-failed",
                          failed);
    }
}

void opal_info_show_components(opal_info_t *info, mca_base_framework_t *framework,
                               const char *component)
{
    if (NULL != framework) {
        show_framework_components(info, framework, component);
        return;
    }
    if (NULL == info->frameworks[0] && PRETTY(info)) {
        opal_info_pretty(info, "MCA frameworks", "none in this build");
    }
    for (size_t i = 0; NULL != info->frameworks[i]; ++i) {
        show_framework_components(info, info->frameworks[i], NULL);
    }
}

void opal_info_show_failed(opal_info_t *info)
{
    size_t failed = 0;
    for (size_t i = 0; NULL != info->frameworks[i]; ++i) {
        mca_base_framework_t *fw = info->frameworks[i];
        if (OPAL_SUCCESS != opal_info_register_framework(info, fw)) {
            continue;
        }
        mca_base_component_failure_t *f;
        OPAL_LIST_FOREACH (f, &fw->framework_failures, mca_base_component_failure_t) {
            if (load_failure(f)) {
                show_unavailable(info, f, "failed");
                ++failed;
            }
        }
    }
    if (0 == failed && PRETTY(info)) {
        opal_info_pretty(info, "Failed components", "none");
    }
}

static void show_framework_selection(opal_info_t *info, mca_base_framework_t *fw)
{
    const char *fw_name = fw->framework_name;
    char label[64];
    snprintf(label, sizeof(label), "MCA %s", fw_name);
    /* Opened as a program opens it: the selection variable applies. */
    int rc = mca_base_framework_open(fw, MCA_BASE_OPEN_DEFAULT);
    if (OPAL_SUCCESS != rc) {
        /* The base printed why (a bad selection variable names itself). */
        opal_info_error(info, "cannot open framework %s: %s", fw_name, opal_strerror(rc));
        opal_info_put(info, opal_strerror(rc), "framework", fw_name, "open_error", NULL);
        return;
    }
    show_framework_facts(info, fw);
    /* As a program would: single-select keeps the best component,
     * multi-select every one whose module initialised, a framework with
     * its own selection (btl: components' init returns modules) runs it. */
    rc = mca_base_framework_select(fw, NULL);
    /* Priorities mean something only where the base chose by them. */
    bool by_priority = NULL == fw->framework_select;
    char **chosen = NULL;
    mca_base_component_list_item_t *item;
    OPAL_LIST_FOREACH (item, &fw->framework_components, mca_base_component_list_item_t) {
        const char *name = name_of(item->cli_component);
        if (OPAL_SUCCESS != opal_argv_append_nosize(&chosen, name)) {
            opal_info_error(info, "out of memory");
        }
        opal_info_put_bool(info, true, "mca", fw_name, name, "selected", NULL);
        if (by_priority) {
            opal_info_put_int(info, item->cli_priority, "mca", fw_name, name, "priority", NULL);
        }
        /* A btl module may say what carries it (btl/ofi: the provider and
         * domain it chose). */
        const char *transport = 0 == strcmp(fw_name, "btl") ? mca_btl_base_transport(name) : NULL;
        if (NULL != transport) {
            opal_info_put(info, transport, "mca", fw_name, name, "transport", NULL);
        }
        if (PRETTY(info) && by_priority) {
            opal_info_prettyf(info, label, "selected %s (priority %d)", name, item->cli_priority);
        } else if (PRETTY(info) && NULL != transport) {
            opal_info_prettyf(info, label, "selected %s (%s)", name, transport);
        } else if (PRETTY(info)) {
            opal_info_prettyf(info, label, "selected %s", name);
        }
    }
    char *joined = NULL != chosen ? opal_argv_join(chosen, ',') : NULL;
    opal_info_put(info, joined, "framework", fw_name, "selected", NULL);
    free(joined);
    opal_argv_free(chosen);
    if (OPAL_SUCCESS != rc && PRETTY(info)) {
        opal_info_pretty(info, label, "no component selected");
    }
    mca_base_component_failure_t *f;
    OPAL_LIST_FOREACH (f, &fw->framework_failures, mca_base_component_failure_t) {
        const char *name = f->cf_component;
        const char *stage = mca_base_component_stage_name(f->cf_stage);
        opal_info_put_bool(info, false, "mca", fw_name, name, "selected", NULL);
        opal_info_put(info, stage, "mca", fw_name, name, "not_selected", "stage", NULL);
        opal_info_put(info, f->cf_reason, "mca", fw_name, name, "not_selected", "reason", NULL);
        if (PRETTY(info)) {
            opal_info_prettyf(info, label, "not selected: %s (%s): %s", name, stage, f->cf_reason);
        }
    }
    (void) mca_base_framework_close(fw);
}

void opal_info_show_selected(opal_info_t *info)
{
    if (NULL == info->frameworks[0] && PRETTY(info)) {
        opal_info_pretty(info, "MCA frameworks", "none in this build");
    }
    for (size_t i = 0; NULL != info->frameworks[i]; ++i) {
        show_framework_selection(info, info->frameworks[i]);
    }
}
