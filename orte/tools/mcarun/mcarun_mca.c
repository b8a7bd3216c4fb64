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
 * Registering every framework loads their plugins, which costs start-up
 * time; it is done only when some name set for the job is not one that
 * the MCA base itself registered.
 */
#include "opal/opal_config.h"

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

/* Registers (with every component) each framework of list that is not
 * registered yet, appending it to done. Returns the first error. */
static int register_all(mca_base_framework_t **list, mca_base_framework_t ***done, int *ndone)
{
    int first = OPAL_SUCCESS;
    for (int i = 0; NULL != list[i]; ++i) {
        int rc = mca_base_framework_register(list[i], MCA_BASE_REGISTER_ALL);
        if (OPAL_SUCCESS == rc) {
            (*done)[(*ndone)++] = list[i];
        } else if (OPAL_SUCCESS == first) {
            first = rc;
        }
    }
    return first;
}

static int count(mca_base_framework_t **list)
{
    int n = 0;
    while (NULL != list[n]) {
        ++n;
    }
    return n;
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
    mca_base_framework_t **registered = NULL;
    int nregistered = 0;
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
    registered =
        calloc((size_t) (count(opal_frameworks) + count(orte_frameworks)), sizeof(*registered));
    if (NULL == registered) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    /* Each framework reports the unknown names under its own prefix as it
     * registers; the full check then reports the rest. */
    int reg_rc = register_all(opal_frameworks, &registered, &nregistered);
    int orte_rc = register_all(orte_frameworks, &registered, &nregistered);
    rc = mca_base_var_check_unknown();
    if (OPAL_ERR_UNKNOWN_NAME == reg_rc || OPAL_ERR_UNKNOWN_NAME == orte_rc ||
        OPAL_ERR_UNKNOWN_NAME == rc) {
        fprintf(stderr, "mcarun: unknown MCA variable names and mca_base_unknown_params=error: "
                        "the job is not started\n");
        rc = OPAL_ERR_UNKNOWN_NAME;
        goto out;
    }
    *checked = opal_argv_join(unknown, ',');
    rc = NULL == *checked ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;

out:
    for (int k = nregistered - 1; 0 <= k; --k) {
        (void) mca_base_framework_close(registered[k]);
    }
    free(registered);
    opal_argv_free(unknown);
    free(keys);
    free(values);
    (void) mca_base_close();
    return rc;
}
