/*
 * sched/prio lifecycle: variables and the per-class counters (performance
 * variables) at register; open checks the number of classes.
 */
#include "opal/opal_config.h"

#include <stdio.h>

#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/base/mca_base_pvar.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/sched/prio/sched_prio.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

sched_prio_config_t mca_sched_prio_config;

/* The per-class counters as performance variables, registered with the
 * variables so that opal_info --pvars lists them. Their storage is in this
 * plugin, which is therefore never unloaded (ALWAYS_LOADED below). */
static int register_pvars(void)
{
    const mca_base_component_t *c = &mca_sched_prio_component.sched_version;
    static const struct {
        const char *name;
        const char *what;
        size_t offset;
    } pvars[] = {
        {"queued", "tasks admitted", offsetof(sched_prio_counters_t, queued)},
        {"run", "tasks taken off the queue to run", offsetof(sched_prio_counters_t, run)},
        {"refused", "tasks refused by sched_prio_max_queued",
         offsetof(sched_prio_counters_t, refused)},
        {"late", "tasks started after their deadline", offsetof(sched_prio_counters_t, late)},
    };
    unsigned int classes = mca_sched_prio_config.classes < SCHED_PRIO_MAX_CLASSES
                               ? mca_sched_prio_config.classes
                               : SCHED_PRIO_MAX_CLASSES;
    for (unsigned int k = 0; k < classes; ++k) {
        sched_prio_counters_t *counters = &mca_sched_prio_config.counters[k];
        for (size_t i = 0; i < sizeof(pvars) / sizeof(pvars[0]); ++i) {
            char name[32], description[96];
            snprintf(name, sizeof(name), "class%u_%s", k, pvars[i].name);
            snprintf(description, sizeof(description), "Priority class %u: %s", k, pvars[i].what);
            int rc = mca_base_component_pvar_register(
                c, name, description, MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UINT64_T,
                OPAL_INFO_LVL_4, 0, (char *) counters + pvars[i].offset, NULL, NULL);
            if (rc < 0) {
                return rc;
            }
        }
    }
    return OPAL_SUCCESS;
}

static int prio_register(void)
{
    const mca_base_component_t *c = &mca_sched_prio_component.sched_version;
    mca_sched_prio_config.classes = 4;
    mca_sched_prio_config.max_queued = 65536;
    mca_sched_prio_config.batch = 4096;
    int rc = mca_base_component_var_register(
        c, "classes",
        "Priority classes (0 is the most urgent; a task's class past the last "
        "counts as the last), 1 to 16",
        MCA_BASE_VAR_TYPE_UNSIGNED_INT, NULL, 0, OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_LOCAL,
        &mca_sched_prio_config.classes);
    if (rc >= 0) {
        rc = mca_base_component_var_register(
            c, "max_queued",
            "Tasks of one class scheduled and not yet started, past which scheduling fails "
            "with \"busy\" (0: no bound)",
            MCA_BASE_VAR_TYPE_UNSIGNED_INT, NULL, 0, OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_LOCAL,
            &mca_sched_prio_config.max_queued);
    }
    if (rc >= 0) {
        rc = mca_base_component_var_register(
            c, "batch", "Ready tasks one progress call runs at most (0: until none is ready)",
            MCA_BASE_VAR_TYPE_UNSIGNED_INT, NULL, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_LOCAL,
            &mca_sched_prio_config.batch);
    }
    return rc < 0 ? rc : register_pvars();
}

static int prio_open(void)
{
    if (mca_sched_prio_config.classes < 1 ||
        mca_sched_prio_config.classes > SCHED_PRIO_MAX_CLASSES) {
        opal_output(0, "sched/prio: sched_prio_classes is %u; it must be between 1 and %d",
                    mca_sched_prio_config.classes, SCHED_PRIO_MAX_CLASSES);
        return OPAL_ERR_BAD_VALUE;
    }
    return OPAL_SUCCESS;
}

static int prio_query(mca_base_module_t **module, int *priority)
{
    *module = (mca_base_module_t *) &mca_sched_prio_module;
    *priority = 20;
    return OPAL_SUCCESS;
}

OPAL_DECLSPEC const mca_sched_base_component_t mca_sched_prio_component = {
    .sched_version =
        {
            MCA_SCHED_BASE_VERSION_1_0_0,
            MCA_BASE_COMPONENT_NAME("prio", 1, 0, 0),
            .mca_register_component_params = prio_register,
            .mca_open_component = prio_open,
            .mca_component_flags = MCA_BASE_COMPONENT_FLAG_ALWAYS_LOADED,
            .mca_query_component = prio_query,
        },
};
