/*
 * mca_base_open / mca_base_close: the variable system, the base's own
 * variables and the component repository, counted.
 */
#include "opal/opal_config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "opal/mca/base/mca_base_component_repository.h"
#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/base/mca_base_framework_internal.h"
#include "opal/mca/base/mca_base_log.h"
#include "opal/mca/base/mca_base_open.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/runtime/opal_build_tree.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_fault.h"
#include "opal/util/opal_memhooks.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_timeline.h"

#ifndef OPAL_PKGLIBDIR
#error "OPAL_PKGLIBDIR (where plugins are installed) comes from opal/mca/base/Makefile.inc"
#endif

char *mca_base_component_path = NULL;
char *mca_base_component_show_load_errors = NULL;
int mca_base_verbose = 0;
int mca_base_output = -1;

static int open_count = 0;
static int var_path = -1;
static int var_show = -1;
static int var_verbose = -1;
static int var_fault = -1;
static char *fault_config = NULL;
static int var_log_mask = -1;
static char *log_mask = NULL;
static int var_log_file = -1;
static char *log_file = NULL;
static int var_memhooks = -1;
static int memhooks_mode = 0;
static int var_timeline_file = -1;
static char *timeline_file = NULL;
static int var_timeline_max = -1;
static size_t timeline_max = 0;

static void deregister_vars(void)
{
    int *vars[] = {&var_path,     &var_show,          &var_verbose,
                   &var_fault,    &var_log_mask,      &var_log_file,
                   &var_memhooks, &var_timeline_file, &var_timeline_max};
    if (var_memhooks >= 0) {
        opal_memhooks_set_mode(NULL);
    }
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); ++i) {
        if (*vars[i] >= 0) {
            (void) mca_base_var_deregister(*vars[i]);
            *vars[i] = -1;
        }
    }
}

/* A build tree's programs use the build tree's plugins, never those of an
 * older install, so the two defaults do not mix. */
static char *default_component_path(void)
{
    char *path = NULL;
    const char *dirs = opal_build_tree_in_use() ? opal_build_tree_component_path() : OPAL_PKGLIBDIR;
    if (asprintf(&path, "%s:~/.opal/components", dirs) < 0) {
        return NULL;
    }
    return path;
}

static int register_vars(void)
{
    /* The variable system copies a string default before it stores into
     * the storage, so the buffer is released once registered. */
    char *default_path = default_component_path();
    if (NULL == default_path) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    mca_base_component_path = default_path;
    var_path = mca_base_var_register(
        "opal", "mca", "base", "component_path",
        "Where to look for component plugins (mca_<framework>_<component>.so): a colon list "
        "of directories, \"~\" standing for $HOME; the first directory holding a plugin wins",
        MCA_BASE_VAR_TYPE_STRING, NULL, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_3,
        MCA_BASE_VAR_SCOPE_LOCAL, &mca_base_component_path);
    free(default_path);
    if (var_path < 0) {
        mca_base_component_path = NULL;
        return var_path;
    }
    mca_base_component_show_load_errors = (char *) "all";
    var_show = mca_base_var_register(
        "opal", "mca", "base", "component_show_load_errors",
        "Which plugin load failures to print: all, none, or a comma list of framework or "
        "framework/component names, the whole list negated by a leading ^ (every failure is "
        "kept for opal_info --show-failed either way)",
        MCA_BASE_VAR_TYPE_STRING, NULL, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_3,
        MCA_BASE_VAR_SCOPE_LOCAL, &mca_base_component_show_load_errors);
    if (var_show < 0) {
        return var_show;
    }
    mca_base_verbose = 0;
    var_verbose = mca_base_var_register(
        "opal", "mca", "base", "verbose",
        "Verbosity of the MCA base: 10 shows ignored plugins, 40 every directory and plugin",
        MCA_BASE_VAR_TYPE_INT, NULL, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_3,
        MCA_BASE_VAR_SCOPE_LOCAL, &mca_base_verbose);
    if (var_verbose < 0) {
        return var_verbose;
    }
    fault_config = NULL;
    var_fault = mca_base_var_register(
        "opal", "opal", "fault", "config",
        "A file naming the fault sites to fire, with probability, interval, max count and "
        "argument (opal/util/opal_fault.h); builds configured with --enable-fault-injection",
        MCA_BASE_VAR_TYPE_STRING, NULL, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_9,
        MCA_BASE_VAR_SCOPE_LOCAL, &fault_config);
    if (var_fault < 0) {
        return var_fault;
    }
    log_mask = NULL;
    var_log_mask = mca_base_var_register(
        "opal", "opal", "log", "mask",
        "Log levels (error, warn, info, debug, trace) of the facilities (opal, mca, orte and "
        "each framework): a bare level sets all, facility=level one, e.g. warn,btl=debug; a "
        "facility talks at the larger of this and its <fw>_base_verbose",
        MCA_BASE_VAR_TYPE_STRING, NULL, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_3,
        MCA_BASE_VAR_SCOPE_LOCAL, &log_mask);
    if (var_log_mask < 0) {
        return var_log_mask;
    }
    log_file = NULL;
    var_log_file = mca_base_var_register(
        "opal", "opal", "log", "file",
        "Write the facilities' log records to this file instead of stderr; %r stands for the "
        "rank, %p for the pid (e.g. /tmp/log.%r)",
        MCA_BASE_VAR_TYPE_STRING, NULL, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_3,
        MCA_BASE_VAR_SCOPE_LOCAL, &log_file);
    if (var_log_file < 0) {
        return var_log_file;
    }
    /* An enumeration: the variable system refuses another value, naming
     * it and where it was set, and keeps auto. */
    static const mca_base_var_enum_value_t memhooks_modes[] = {{0, "auto"}, {1, "none"}, {0, NULL}};
    mca_base_var_enum_t *modes = NULL;
    int rc = mca_base_var_enum_create("opal_memhooks", memhooks_modes, &modes);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    memhooks_mode = 0;
    var_memhooks = mca_base_var_register(
        "opal", "opal", NULL, "memhooks",
        "Memory release hooks (opal/util/opal_memhooks.h), which let registration caches forget "
        "memory given back to the kernel: auto (patch libc's munmap, free, ... where possible) "
        "or none",
        MCA_BASE_VAR_TYPE_INT, modes, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_4,
        MCA_BASE_VAR_SCOPE_LOCAL, &memhooks_mode);
    OBJ_RELEASE(modes);
    if (var_memhooks < 0) {
        return var_memhooks;
    }
    opal_memhooks_set_mode(1 == memhooks_mode ? "none" : "auto");
    timeline_file = NULL;
    var_timeline_file = mca_base_var_register(
        "opal", "opal", "timeline", "file",
        "Record a timeline of this process's messages and write it to this file when the MCA "
        "base closes, %r standing for the rank and %p for the pid (opal/util/opal_timeline.h, "
        "contrib/perf/timeline.sh); builds configured with --enable-timeline",
        MCA_BASE_VAR_TYPE_STRING, NULL, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_9,
        MCA_BASE_VAR_SCOPE_LOCAL, &timeline_file);
    if (var_timeline_file < 0) {
        return var_timeline_file;
    }
    timeline_max = 4000000;
    var_timeline_max = mca_base_var_register(
        "opal", "opal", "timeline", "max",
        "Marks a timeline keeps (16 bytes each); later ones are counted, not kept",
        MCA_BASE_VAR_TYPE_SIZE_T, NULL, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_9,
        MCA_BASE_VAR_SCOPE_LOCAL, &timeline_max);
    if (var_timeline_max < 0) {
        return var_timeline_max;
    }
    return OPAL_SUCCESS;
}

/* A timeline asked for is recorded, or the program does not start: in a
 * build without marks the file would stay empty. */
static int timeline_open(void)
{
    if (NULL == timeline_file || '\0' == timeline_file[0]) {
        return OPAL_SUCCESS;
    }
    if (!opal_timeline_compiled_in()) {
        opal_output(0,
                    "mca: base: opal_timeline_file is set (%s) but this build has no timeline "
                    "marks (configure --enable-timeline)",
                    timeline_file);
        return OPAL_ERR_NOT_SUPPORTED;
    }
    int rc = opal_timeline_start(timeline_file, timeline_max);
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "mca: base: cannot record a timeline to %s with opal_timeline_max %zu: %s",
                    timeline_file, timeline_max, opal_strerror(rc));
    }
    return rc;
}

int mca_base_open(void)
{
    if (open_count++ > 0) {
        return OPAL_SUCCESS;
    }
    int rc = mca_base_var_init();
    if (OPAL_SUCCESS != rc) {
        goto out_count;
    }
    rc = register_vars();
    if (OPAL_SUCCESS != rc) {
        goto out_vars;
    }
    /* A fault configuration that does not load is an error: the faults a
     * test asked for would silently not happen. */
    if (NULL != fault_config && '\0' != fault_config[0]) {
        rc = opal_fault_configure_file(fault_config);
        if (OPAL_SUCCESS != rc) {
            goto out_vars;
        }
    }
    /* A mask that names no real facility or level is refused: the
     * messages it asked for would silently not come. */
    rc = mca_base_log_configure(log_mask, log_file);
    if (OPAL_SUCCESS != rc) {
        goto out_vars;
    }
    rc = timeline_open();
    if (OPAL_SUCCESS != rc) {
        goto out_vars;
    }
    /* Variables of a framework this program never opens are not typos. */
    for (int i = 0; NULL != opal_frameworks[i]; ++i) {
        (void) mca_base_var_declare_prefix(opal_frameworks[i]->framework_name);
    }
    for (int i = 0; NULL != opal_mca_common_names[i]; ++i) {
        (void) mca_base_var_declare_prefix(opal_mca_common_names[i]);
    }
    mca_base_output = mca_base_log_open("mca", "mca: base: ", mca_base_verbose);
    if (mca_base_output < 0) {
        rc = mca_base_output;
        mca_base_output = -1;
        goto out_vars;
    }
    rc = mca_base_component_repository_init();
    if (OPAL_SUCCESS != rc) {
        goto out_output;
    }
    return OPAL_SUCCESS;

out_output:
    opal_output_close(mca_base_output);
    mca_base_output = -1;
out_vars:
    (void) opal_timeline_stop();
    mca_base_log_reset();
    deregister_vars();
    (void) mca_base_var_finalize();
out_count:
    open_count = 0;
    return rc;
}

int mca_base_close(void)
{
    if (open_count <= 0) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    if (--open_count > 0) {
        return OPAL_SUCCESS;
    }
    mca_base_component_repository_finalize();
    mca_base_component_clear_declines();
    mca_base_load_errors_finalize();
    /* Not recording (OPAL_ERR_NOT_INITIALIZED) is the usual case; a file
     * that cannot be written was reported by name. */
    (void) opal_timeline_stop();
    opal_output_close(mca_base_output);
    mca_base_output = -1;
    deregister_vars();
    mca_base_log_reset();
    opal_fault_clear();
    return mca_base_var_finalize();
}
