/*
 * btl/self's lifecycle: register (the standard variables, bound to the
 * module, and the free-list sizes), open (construct the free lists), init
 * (check the variables, fill the free lists, return the module), close.
 */
#include "opal/opal_config.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/btl/base/base.h"
#include "opal/mca/btl/self/btl_self.h"
#include "opal/util/opal_error.h"

static int self_register(void);
static int self_open(void);
static int self_close(void);
static mca_btl_base_module_t **self_init(int *num_btls, bool enable_progress_threads,
                                         bool enable_mpi_threads);

const mca_btl_base_component_t mca_btl_self_component = {
    .btl_version =
        {
            MCA_BTL_BASE_VERSION,
            MCA_BASE_COMPONENT_NAME("self", 1, 0, 0),
            .mca_register_component_params = self_register,
            .mca_open_component = self_open,
            .mca_close_component = self_close,
        },
    .btl_init = self_init,
    /* Everything completes inside the call: nothing to poll. */
    .btl_progress = NULL,
};

mca_btl_self_state_t mca_btl_self;

/* What this component can do, whatever the variables say. */
#define SELF_CAPABILITIES                                                                          \
    (MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_SENDI | MCA_BTL_FLAGS_PUT | MCA_BTL_FLAGS_GET)

static void set_defaults(void)
{
    mca_btl_base_module_t *m = &mca_btl_self_module;
    m->btl_component = &mca_btl_self_component;
    m->btl_eager_limit = 64 * 1024;
    m->btl_max_send_size = 128 * 1024;
    m->btl_rdma_pipeline_send_length = SIZE_MAX;
    m->btl_rdma_pipeline_frag_size = SIZE_MAX;
    m->btl_min_rdma_pipeline_size = 0;
    m->btl_put_limit = 0;
    m->btl_get_limit = 0;
    m->btl_put_alignment = 1;
    m->btl_get_alignment = 1;
    m->btl_registration_handle_size = 0;
    m->btl_exclusivity = MCA_BTL_EXCLUSIVITY_HIGH;
    m->btl_latency = 0;
    m->btl_bandwidth = 100000;
    m->btl_flags = SELF_CAPABILITIES;
}

static int register_int(const char *name, const char *description, int *storage, int value)
{
    *storage = value;
    int index = mca_base_component_var_register(
        &mca_btl_self_component.btl_version, name, description, MCA_BASE_VAR_TYPE_INT, NULL,
        MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_LOCAL, storage);
    return index < 0 ? index : OPAL_SUCCESS;
}

static int self_register(void)
{
    set_defaults();
    int rc = mca_btl_base_param_register(&mca_btl_self_component.btl_version, &mca_btl_self_module);
    if (OPAL_SUCCESS == rc) {
        rc = register_int("free_list_num", "Fragments of each size allocated at first",
                          &mca_btl_self.free_list_num, 4);
    }
    if (OPAL_SUCCESS == rc) {
        rc = register_int("free_list_inc", "Fragments of each size added when a list runs out",
                          &mca_btl_self.free_list_inc, 4);
    }
    if (OPAL_SUCCESS == rc) {
        rc = register_int("free_list_max",
                          "Most fragments of each size (0: no limit; a send that finds none "
                          "free is refused as busy)",
                          &mca_btl_self.free_list_max, 0);
    }
    return rc;
}

static int self_open(void)
{
    OBJ_CONSTRUCT(&mca_btl_self.eager_frags, opal_free_list_t);
    OBJ_CONSTRUCT(&mca_btl_self.max_frags, opal_free_list_t);
    mca_btl_self.error_cb = NULL;
    return OPAL_SUCCESS;
}

static mca_btl_base_module_t **self_init(int *num_btls, bool enable_progress_threads,
                                         bool enable_mpi_threads)
{
    static mca_btl_base_module_t *modules[1] = {&mca_btl_self_module};
    *num_btls = 0;
    if (mca_btl_self.free_list_num < 0 || mca_btl_self.free_list_inc <= 0 ||
        mca_btl_self.free_list_max < 0) {
        mca_base_component_decline(&mca_btl_self_component.btl_version,
                                   "btl_self_free_list_num (%d), _inc (%d) and _max (%d) must "
                                   "not be negative, and _inc not 0",
                                   mca_btl_self.free_list_num, mca_btl_self.free_list_inc,
                                   mca_btl_self.free_list_max);
        return NULL;
    }
    int rc = mca_btl_base_param_verify(&mca_btl_self_module, SELF_CAPABILITIES);
    if (OPAL_SUCCESS == rc) {
        rc = mca_btl_self_frag_lists_init();
    }
    if (OPAL_SUCCESS != rc) {
        mca_base_component_decline(&mca_btl_self_component.btl_version,
                                   "cannot set up its fragments: %s", opal_strerror(rc));
        return NULL;
    }
    *num_btls = 1;
    return modules;
}

static int self_close(void)
{
    OBJ_DESTRUCT(&mca_btl_self.max_frags);
    OBJ_DESTRUCT(&mca_btl_self.eager_frags);
    return OPAL_SUCCESS;
}
