/*
 * MCA variable names, checked once for the whole job.
 *
 * Every rank would check the names it was given (orte_init, and each
 * framework as it registers) and print its own copy of every warning,
 * naming the environment as the source even of a name the user typed
 * after --mca. mcarun sees the same names first: its own environment,
 * the same parameter files, and the --mca pairs it turns into the ranks'
 * OPAL_MCA_* variables. So it checks them here, against every framework
 * and component of the build, reports each unknown one once with the
 * source the user used, and tells the ranks (MCA_BASE_VAR_CHECKED_ENV)
 * which names it checked, so that they stay silent about them.
 *
 * Frameworks are registered only when some name set for the job is not
 * one that the MCA base itself registered, and their plugins are loaded
 * (which costs start-up time) only for names their static part does not
 * register (see register_for).
 */
#include "opal/opal_config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/base/mca_base_open.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/util/opal_argv.h"
#include "opal/util/opal_cmd_line.h"
#include "opal/util/opal_error.h"
#include "orte/runtime/orte_init.h"
#include "orte/tools/mcarun/mcarun.h"

/* name is prefix itself or starts with prefix and '_'. */
static bool under(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    return 0 == strncmp(name, prefix, n) && ('\0' == name[n] || '_' == name[n]);
}

static bool any_under(char **names, const char *prefix)
{
    for (int i = 0; NULL != names && NULL != names[i]; ++i) {
        if (under(names[i], prefix)) {
            return true;
        }
    }
    return false;
}

/* The frameworks of the build, opal's then orte's, NULL-terminated;
 * caller frees. */
static mca_base_framework_t **all_frameworks(int *count)
{
    int n = 0, k = 0;
    for (int i = 0; NULL != opal_frameworks[i]; ++i) {
        ++n;
    }
    for (int i = 0; NULL != orte_frameworks[i]; ++i) {
        ++n;
    }
    mca_base_framework_t **list = calloc((size_t) n + 1, sizeof(*list));
    for (int i = 0; NULL != list && NULL != opal_frameworks[i]; ++i) {
        list[k++] = opal_frameworks[i];
    }
    for (int i = 0; NULL != list && NULL != orte_frameworks[i]; ++i) {
        list[k++] = orte_frameworks[i];
    }
    *count = n;
    return list;
}

/* Registers with flags each framework of all that some name of want falls
 * under (every one when want is NULL), marking it in registered. Returns
 * OPAL_ERR_UNKNOWN_NAME when a framework found an unknown name under
 * mca_base_unknown_params=error; a framework that fails otherwise is left
 * out (its names stay unchecked, as they would in the ranks). */
static int register_some(mca_base_framework_t **all, char **want, mca_base_register_flag_t flags,
                         bool *registered)
{
    int rc = OPAL_SUCCESS;
    for (int i = 0; NULL != all[i]; ++i) {
        if (registered[i] || (NULL != want && !any_under(want, all[i]->framework_name))) {
            continue;
        }
        int frc = mca_base_framework_register(all[i], flags);
        registered[i] = OPAL_SUCCESS == frc;
        if (OPAL_ERR_UNKNOWN_NAME == frc) {
            rc = frc;
        }
    }
    return rc;
}

static void close_all(mca_base_framework_t **all, bool *registered)
{
    for (int i = 0; NULL != all[i]; ++i) {
        if (registered[i]) {
            (void) mca_base_framework_close(all[i]);
            registered[i] = false;
        }
    }
}

/* True when a name falls under a common prefix (ofi_*) and under no
 * framework: some component of some framework registers it. */
static bool any_common(char **names, mca_base_framework_t **all)
{
    for (int i = 0; NULL != names && NULL != names[i]; ++i) {
        bool framework = false;
        for (int f = 0; NULL != all[f] && !framework; ++f) {
            framework = under(names[i], all[f]->framework_name);
        }
        for (int c = 0; !framework && NULL != opal_mca_common_names[c]; ++c) {
            if (under(names[i], opal_mca_common_names[c])) {
                return true;
            }
        }
    }
    return false;
}

/* Registers what it takes to judge names: the frameworks they fall
 * under, with every component, or every framework for a name under a
 * common prefix. A framework's selection variable is named after it and
 * needs nothing (--mca btl self,sm is the common case): loading the
 * plugins costs a quarter of a second here (libfabric). */
static int register_for(char **names, mca_base_framework_t **all, bool *registered)
{
    char **left = NULL;
    for (int i = 0; NULL != names[i]; ++i) {
        bool selection = false;
        for (int f = 0; NULL != all[f] && !selection; ++f) {
            selection = 0 == strcmp(names[i], all[f]->framework_name);
        }
        if (!selection && OPAL_SUCCESS != opal_argv_append_nosize(&left, names[i])) {
            opal_argv_free(left);
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    int rc = OPAL_SUCCESS;
    if (NULL != left) {
        rc = register_some(all, any_common(left, all) ? NULL : left, MCA_BASE_REGISTER_ALL,
                           registered);
    }
    opal_argv_free(left);
    return rc;
}

int mcarun_mca_check(const opal_list_t *params, char **checked)
{
    *checked = NULL;
    int rc = mca_base_open();
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "mcarun: cannot open the MCA base: %s\n", opal_strerror(rc));
        return rc;
    }
    /* The --mca pairs as the command line's, so that a report names the
     * option the user typed. */
    int n = (int) opal_list_get_size(params), i = 0;
    char **keys = calloc((size_t) n + 1, sizeof(char *));
    char **values = calloc((size_t) n + 1, sizeof(char *));
    char **unknown = NULL;
    mca_base_framework_t **all = NULL;
    bool *registered = NULL;
    if (NULL == keys || NULL == values) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    opal_cmd_line_mca_param_t *p;
    OPAL_LIST_FOREACH (p, params, opal_cmd_line_mca_param_t) {
        keys[i] = p->key;
        values[i++] = p->value;
    }
    /* A refused value is reported by the variable system; the ranks refuse
     * it again and say so with their own consequences. */
    (void) mca_base_var_process_cmdline(n, keys, values);
    rc = mca_base_var_unknown_names(&unknown);
    if (OPAL_SUCCESS == rc && NULL == unknown) {
        /* Nothing to check; the ranks still learn that the files were
         * read (and a missing one reported) here. */
        *checked = strdup("");
        rc = NULL == *checked ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;
    }
    if (OPAL_SUCCESS != rc || NULL == unknown) {
        goto out;
    }
    int nall = 0;
    all = all_frameworks(&nall);
    registered = NULL != all ? calloc((size_t) nall + 1, sizeof(bool)) : NULL;
    if (NULL == registered) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    /* Each framework reports the unknown names under its own prefix as it
     * registers with its plugins; the full check then reports the rest. */
    int reg_rc = register_for(unknown, all, registered);
    rc = mca_base_var_check_unknown();
    if (OPAL_ERR_UNKNOWN_NAME == reg_rc || OPAL_ERR_UNKNOWN_NAME == rc) {
        fprintf(stderr, "mcarun: unknown MCA variable names and mca_base_unknown_params=error: "
                        "the job is not started\n");
        rc = OPAL_ERR_UNKNOWN_NAME;
        goto out;
    }
    *checked = opal_argv_join(unknown, ',');
    rc = NULL == *checked ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;

out:
    if (NULL != registered) {
        close_all(all, registered);
    }
    free(registered);
    free(all);
    opal_argv_free(unknown);
    free(keys);
    free(values);
    (void) mca_base_close();
    return rc;
}
