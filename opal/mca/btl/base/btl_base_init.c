/*
 * Selection of the btl modules: every opened component's btl_init returns
 * the modules it can run here (or none, after saying why); the base keeps
 * them all, registers each component's progress function once, and
 * undoes it all at finalize. opal_info --selected runs the same
 * selection through the framework's select hook.
 */
#include "opal/opal_config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/base/mca_base_framework_internal.h"
#include "opal/mca/btl/base/base.h"
#include "opal/mca/btl/base/btl_base_internal.h"
#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/opal_argv.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

static int init_count = 0;
static bool selected = false;
static bool progress_threads = false;
static bool mpi_threads = false;

/* The progress functions this base registered (one per component that
 * kept a module), so that finalize removes exactly those. */
static opal_progress_callback_t *progress_fns = NULL;
static size_t progress_count = 0;

void mca_btl_base_set_thread_flags(bool enable_progress_threads, bool enable_mpi_threads)
{
    progress_threads = enable_progress_threads;
    mpi_threads = enable_mpi_threads;
}

static int register_progress(const mca_btl_base_component_t *component, size_t max)
{
    if (NULL == component->btl_progress) {
        return OPAL_SUCCESS;
    }
    for (size_t i = 0; i < progress_count; ++i) {
        if (progress_fns[i] == component->btl_progress) {
            return OPAL_SUCCESS;
        }
    }
    if (NULL == progress_fns) {
        progress_fns = calloc(max, sizeof(*progress_fns));
        if (NULL == progress_fns) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    int rc = opal_progress_register(component->btl_progress);
    if (OPAL_SUCCESS == rc) {
        progress_fns[progress_count++] = component->btl_progress;
    } else if (OPAL_ERR_NOT_INITIALIZED == rc) {
        /* No progress engine (a tool that never polls): nothing to run. */
        rc = OPAL_SUCCESS;
    }
    return rc;
}

/* Keeps the modules a component returned; false (component dropped)
 * when they cannot be kept. */
static bool keep_modules(mca_base_component_list_item_t *item, mca_btl_base_module_t **modules,
                         int num, size_t ncomponents)
{
    const mca_btl_base_component_t *component =
        (const mca_btl_base_component_t *) item->cli_component;
    int rc = OPAL_SUCCESS;
    int kept = 0;
    for (int i = 0; i < num && OPAL_SUCCESS == rc; ++i) {
        if (NULL == modules[i]) {
            continue;
        }
        mca_btl_base_selected_module_t *sm = OBJ_NEW(mca_btl_base_selected_module_t);
        if (NULL == sm) {
            rc = OPAL_ERR_OUT_OF_RESOURCE;
            break;
        }
        /* The list holds components as const; the btl interface does not. */
        sm->btl_component = (mca_btl_base_component_t *) (uintptr_t) component;
        sm->btl_module = modules[i];
        opal_list_append(&mca_btl_base_modules_initialized, &sm->super);
        if (0 == kept++) {
            item->cli_module = &modules[i]->super;
        }
    }
    if (OPAL_SUCCESS == rc && kept > 0) {
        rc = register_progress(component, ncomponents);
    }
    if (OPAL_SUCCESS == rc && kept > 0) {
        opal_output_verbose(MCA_BASE_VERBOSE_COMPONENT, mca_btl_base_output,
                            "%s: %d module(s) initialised",
                            component->btl_version.mca_component_name, kept);
        return true;
    }
    /* Give back what was kept: the component finalizes its modules. */
    mca_btl_base_selected_module_t *sm, *next;
    OPAL_LIST_FOREACH_SAFE (sm, next, &mca_btl_base_modules_initialized,
                            mca_btl_base_selected_module_t) {
        if (sm->btl_component == component) {
            opal_list_remove_item(&mca_btl_base_modules_initialized, &sm->super);
            if (NULL != sm->btl_module->btl_finalize) {
                (void) sm->btl_module->btl_finalize(sm->btl_module);
            }
            OBJ_RELEASE(sm);
        }
    }
    item->cli_module = NULL;
    char reason[128];
    snprintf(reason, sizeof(reason), "%s",
             0 == kept ? "btl_init returned only NULL modules" : opal_strerror(rc));
    mca_base_framework_drop_component(&opal_btl_base_framework, item,
                                      MCA_BASE_COMPONENT_STAGE_QUERY, reason);
    return false;
}

int mca_btl_base_select(int *num_selected)
{
    mca_base_framework_t *fw = &opal_btl_base_framework;
    if (!selected) {
        selected = true;
        size_t ncomponents = opal_list_get_size(&fw->framework_components);
        mca_base_component_list_item_t *item, *next;
        OPAL_LIST_FOREACH_SAFE (item, next, &fw->framework_components,
                                mca_base_component_list_item_t) {
            const mca_btl_base_component_t *component =
                (const mca_btl_base_component_t *) item->cli_component;
            if (!item->cli_opened || NULL == component->btl_init) {
                mca_base_framework_drop_component(fw, item, MCA_BASE_COMPONENT_STAGE_QUERY,
                                                  item->cli_opened ? "has no btl_init"
                                                                   : "not open");
                continue;
            }
            int num = 0;
            mca_btl_base_module_t **modules =
                component->btl_init(&num, progress_threads, mpi_threads);
            int rc = NULL != modules && num > 0 ? OPAL_SUCCESS : OPAL_ERR_NOT_AVAILABLE;
            /* Records the component's reason and drops it when it has no
             * module; clears a stale reason when it has. */
            if (mca_base_framework_hook_result(fw, item, MCA_BASE_COMPONENT_STAGE_QUERY, rc)) {
                (void) keep_modules(item, modules, num, ncomponents);
            }
        }
    }
    size_t count = opal_list_get_size(&fw->framework_components);
    if (NULL != num_selected) {
        *num_selected = (int) count;
    }
    return 0 == count ? OPAL_ERR_NOT_FOUND : OPAL_SUCCESS;
}

void mca_btl_base_release_modules(void)
{
    for (size_t i = 0; i < progress_count; ++i) {
        (void) opal_progress_unregister(progress_fns[i]);
    }
    free(progress_fns);
    progress_fns = NULL;
    progress_count = 0;
    opal_list_item_t *li;
    while (NULL != (li = opal_list_remove_last(&mca_btl_base_modules_initialized))) {
        mca_btl_base_selected_module_t *sm = (mca_btl_base_selected_module_t *) li;
        if (NULL != sm->btl_module->btl_finalize) {
            int rc = sm->btl_module->btl_finalize(sm->btl_module);
            if (OPAL_SUCCESS != rc) {
                opal_output(mca_btl_base_output, "%s: module finalize failed: %s",
                            sm->btl_component->btl_version.mca_component_name, opal_strerror(rc));
            }
        }
        OBJ_RELEASE(sm);
    }
    mca_btl_base_mux_send_release();
    selected = false;
}

char *mca_btl_base_failures_string(const char *indent)
{
    char **lines = NULL;
    mca_base_component_failure_t *f;
    OPAL_LIST_FOREACH (f, &opal_btl_base_framework.framework_failures,
                       mca_base_component_failure_t) {
        const char *reason = NULL != f->cf_reason ? f->cf_reason : "no reason given";
        /* The selection and init stages speak for themselves ("not
         * included by btl=self,sm", "no job"); the others say where it
         * went wrong ("load: undefined symbol ..."). */
        bool plain = MCA_BASE_COMPONENT_STAGE_EXCLUDED == f->cf_stage ||
                     MCA_BASE_COMPONENT_STAGE_QUERY == f->cf_stage;
        char *line = NULL;
        if (asprintf(&line, "%s%s: %s%s%s", indent, f->cf_component,
                     plain ? "" : mca_base_component_stage_name(f->cf_stage), plain ? "" : ": ",
                     reason) < 0 ||
            OPAL_SUCCESS != opal_argv_append_nosize(&lines, line)) {
            free(line);
            opal_argv_free(lines);
            return NULL;
        }
        free(line);
    }
    if (NULL == lines) {
        char *none = NULL;
        return asprintf(&none, "%s(none)", indent) < 0 ? NULL : none;
    }
    char *text = opal_argv_join(lines, '\n');
    opal_argv_free(lines);
    return text;
}

void mca_btl_base_print_failures(int output, const char *indent)
{
    char *text = mca_btl_base_failures_string(indent);
    if (NULL != text) {
        opal_output(output, "%s", text);
        free(text);
    }
}

int mca_btl_base_init(bool enable_progress_threads, bool enable_mpi_threads)
{
    if (init_count++ > 0) {
        return OPAL_SUCCESS;
    }
    int rc = mca_base_framework_open(&opal_btl_base_framework, MCA_BASE_OPEN_DEFAULT);
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "btl: the framework could not be opened: %s", opal_strerror(rc));
        init_count = 0;
        return rc;
    }
    mca_btl_base_set_thread_flags(enable_progress_threads, enable_mpi_threads);
    mca_btl_base_am_reset_unclaimed();
    int count = 0;
    rc = mca_base_framework_select(&opal_btl_base_framework, &count);
    if (OPAL_SUCCESS != rc) {
        if (opal_list_is_empty(&opal_btl_base_framework.framework_failures)) {
            /* Nothing was found at all: say where it was looked for. */
            mca_base_framework_show_not_found(&opal_btl_base_framework);
        } else {
            opal_output(0, "btl: no component can run here; why each did not:");
            mca_btl_base_print_failures(0, "  ");
        }
        (void) mca_base_framework_close(&opal_btl_base_framework);
        init_count = 0;
        return OPAL_ERR_NOT_FOUND;
    }
    if (opal_output_check_verbosity(MCA_BASE_VERBOSE_COMPONENT, mca_btl_base_output) &&
        !opal_list_is_empty(&opal_btl_base_framework.framework_failures)) {
        opal_output(mca_btl_base_output, "components not used here:");
        mca_btl_base_print_failures(mca_btl_base_output, "  ");
    }
    return OPAL_SUCCESS;
}

const char *mca_btl_base_transport(const char *component)
{
    mca_btl_base_selected_module_t *sm;
    OPAL_LIST_FOREACH (sm, &mca_btl_base_modules_initialized, mca_btl_base_selected_module_t) {
        if (0 == strcmp(sm->btl_component->btl_version.mca_component_name, component)) {
            return sm->btl_module->btl_transport;
        }
    }
    return NULL;
}

int mca_btl_base_register_error_cb(mca_btl_base_module_error_cb_fn_t cbfunc)
{
    if (0 == init_count) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    int first = OPAL_SUCCESS;
    mca_btl_base_selected_module_t *sm;
    OPAL_LIST_FOREACH (sm, &mca_btl_base_modules_initialized, mca_btl_base_selected_module_t) {
        if (NULL == sm->btl_module->btl_register_error) {
            continue;
        }
        int rc = sm->btl_module->btl_register_error(sm->btl_module, cbfunc);
        if (OPAL_SUCCESS != rc && OPAL_SUCCESS == first) {
            first = rc;
        }
    }
    return first;
}

int mca_btl_base_finalize(void)
{
    if (0 == init_count) {
        return OPAL_SUCCESS;
    }
    if (--init_count > 0) {
        return OPAL_SUCCESS;
    }
    mca_btl_base_mux_release();
    /* The close hook finalizes the modules before the components close. */
    return mca_base_framework_close(&opal_btl_base_framework);
}

bool mca_btl_base_require_job(const mca_base_component_t *component)
{
    if (NULL != opal_proc_job_info() && NULL != opal_proc_local_get()) {
        return true;
    }
    mca_base_component_decline(component, "no job here (opal_info, or a program that did not call "
                                          "orte_init): it needs its peers");
    return false;
}

bool mca_btl_base_component_opened(const char *name)
{
    mca_base_component_list_item_t *item;
    OPAL_LIST_FOREACH (item, &opal_btl_base_framework.framework_components,
                       mca_base_component_list_item_t) {
        if (0 == strcmp(item->cli_component->mca_component_name, name)) {
            return true;
        }
    }
    return false;
}

void mca_btl_base_reason_set(mca_btl_base_reason_t *why, const char *format, ...)
{
    if (NULL == why) {
        return;
    }
    va_list ap;
    va_start(ap, format);
    (void) vsnprintf(why->text, sizeof(why->text), format, ap);
    va_end(ap);
}

int mca_btl_base_add_procs_by_rank(void *module, uint32_t my_rank, size_t nprocs,
                                   opal_proc_t **procs, struct mca_btl_base_endpoint_t **endpoints,
                                   opal_bitmap_t *reachable, mca_btl_base_reason_t *reasons,
                                   mca_btl_base_add_rank_fn_t add)
{
    for (size_t i = 0; i < nprocs; ++i) {
        mca_btl_base_reason_t why = {.text = ""};
        uint32_t rank = procs[i]->proc_name.vpid;
        if (rank == my_rank) {
            /* As with every network btl, this process is btl/self's. */
            mca_btl_base_reason_set(NULL != reasons ? &reasons[i] : NULL,
                                    "this process (btl/self reaches it)");
            continue;
        }
        struct mca_btl_base_endpoint_t *ep = add(module, rank, &why);
        if (NULL == ep) {
            if (NULL != reasons) {
                reasons[i] = why;
            }
            continue;
        }
        endpoints[i] = ep;
        (void) opal_bitmap_set_bit(reachable, (int) i);
    }
    return OPAL_SUCCESS;
}

bool mca_btl_base_initialized(void)
{
    return init_count > 0;
}
