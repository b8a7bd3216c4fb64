/*
 * The standard variables of every btl component, bound to the fields of
 * the component's default module, and the checks that keep what users
 * set within what the component can do.
 */
#include "opal/opal_config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/btl/base/base.h"
#include "opal/mca/btl/base/btl_base_internal.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

/* The variables bind uint32_t fields as unsigned int and int. */
_Static_assert(sizeof(uint32_t) == sizeof(unsigned int), "uint32_t is not an unsigned int");
_Static_assert(sizeof(uint32_t) == sizeof(int), "uint32_t is not int-sized");

static const mca_base_var_enum_value_t flag_names[] = {
    {MCA_BTL_FLAGS_SEND, "send"},
    {MCA_BTL_FLAGS_PUT, "put"},
    {MCA_BTL_FLAGS_GET, "get"},
    {MCA_BTL_FLAGS_SEND_INPLACE, "inplace"},
    {MCA_BTL_FLAGS_ATOMIC_OPS, "atomics"},
    {MCA_BTL_FLAGS_SENDI, "sendi"},
    {MCA_BTL_FLAGS_RDMA_WHOLE, "rdma_whole"},
    {0, NULL},
};

typedef struct {
    const char *name;
    mca_base_var_type_t type;
    mca_base_var_info_lvl_t level;
    mca_base_var_scope_t scope;
    size_t offset;
    const char *description;
} std_var_t;

#define FIELD(f) offsetof(mca_btl_base_module_t, f)

static const std_var_t std_vars[] = {
    {"eager_limit", MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_ALL,
     FIELD(btl_eager_limit),
     "Largest active message (header included) sent at once, without a handshake (bytes)"},
    {"max_send_size", MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_ALL,
     FIELD(btl_max_send_size), "Largest active message this component sends (bytes)"},
    {"rdma_pipeline_send_length", MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_5,
     MCA_BASE_VAR_SCOPE_LOCAL, FIELD(btl_rdma_pipeline_send_length),
     "Bytes of a large message an upper layer sends as active messages before RDMA starts"},
    {"rdma_pipeline_frag_size", MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_LOCAL,
     FIELD(btl_rdma_pipeline_frag_size), "Largest single put or get of an RDMA pipeline (bytes)"},
    {"min_rdma_pipeline_size", MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_LOCAL,
     FIELD(btl_min_rdma_pipeline_size),
     "Messages smaller than this do not use an RDMA pipeline (bytes)"},
    {"put_limit", MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_LOCAL,
     FIELD(btl_put_limit), "Largest single put (bytes; 0: no limit)"},
    {"get_limit", MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_LOCAL,
     FIELD(btl_get_limit), "Largest single get (bytes; 0: no limit)"},
    {"exclusivity", MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_7, MCA_BASE_VAR_SCOPE_LOCAL,
     FIELD(btl_exclusivity),
     "Preference for this component when several reach a peer: the highest wins, whatever "
     "the latency of the others"},
    {"latency", MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_LOCAL,
     FIELD(btl_latency),
     "Latency in microseconds, relative: among equally exclusive components the lowest "
     "is preferred"},
    {"bandwidth", MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_LOCAL,
     FIELD(btl_bandwidth),
     "Bandwidth in Mb/s: among equally exclusive components of equal latency the highest is "
     "preferred"},
};

int mca_btl_base_param_register(const mca_base_component_t *component,
                                mca_btl_base_module_t *module)
{
    if (NULL == component || NULL == module) {
        return OPAL_ERR_BAD_PARAM;
    }
    char *base = (char *) module;
    for (size_t i = 0; i < sizeof(std_vars) / sizeof(std_vars[0]); ++i) {
        const std_var_t *v = &std_vars[i];
        int index = mca_base_component_var_register(component, v->name, v->description, v->type,
                                                    NULL, MCA_BASE_VAR_FLAG_NONE, v->level,
                                                    v->scope, base + v->offset);
        if (index < 0) {
            return index;
        }
    }

    mca_base_var_enum_t *flags = NULL;
    int rc = mca_base_var_enum_create_flag("btl_flags", flag_names, &flags);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    /* The flag set is held in an int: uint32_t of the same size (above). */
    int index = mca_base_component_var_register(
        component, "flags",
        "What this component may be used for (comma list of send, put, get, inplace, atomics, "
        "sendi, rdma_whole: a put / get of any size is best issued as one call); it can only "
        "clear what the component supports",
        MCA_BASE_VAR_TYPE_INT, flags, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_5,
        MCA_BASE_VAR_SCOPE_LOCAL, &module->btl_flags);
    OBJ_RELEASE(flags);
    return index < 0 ? index : OPAL_SUCCESS;
}

static const char *component_name(const mca_btl_base_module_t *module)
{
    return NULL != module->btl_component ? module->btl_component->btl_version.mca_component_name
                                         : NULL;
}

/* "btl_sm_eager_limit (set on the command line (--mca ...))": the
 * variable and where its value came from. */
static void describe_var(const mca_btl_base_module_t *module, const char *name, char *buf,
                         size_t size)
{
    const char *comp = component_name(module);
    if (NULL == comp) {
        snprintf(buf, size, "btl_<component>_%s", name);
        return;
    }
    char *source = NULL;
    int index = mca_base_var_find("opal", "btl", comp, name);
    if (index >= 0) {
        (void) mca_base_var_source_string(index, &source);
    }
    snprintf(buf, size, "btl_%s_%s (from %s)", comp, name, NULL != source ? source : "default");
    free(source);
}

static char *flag_string(uint32_t bits)
{
    char *text = NULL;
    mca_base_var_enum_t *flags = NULL;
    if (OPAL_SUCCESS == mca_base_var_enum_create_flag("btl_flags", flag_names, &flags)) {
        (void) mca_base_var_enum_to_string(flags, (int) bits, &text);
        OBJ_RELEASE(flags);
    }
    return text;
}

int mca_btl_base_param_verify(mca_btl_base_module_t *module, uint32_t capabilities)
{
    if (NULL == module) {
        return OPAL_ERR_BAD_PARAM;
    }
    char var[256];
    uint32_t extra = module->btl_flags & ~capabilities;
    if (0 != extra) {
        char *names = flag_string(extra);
        describe_var(module, "flags", var, sizeof(var));
        opal_output(mca_btl_base_err_stream(), "%s asks for %s, which %s cannot do: ignored", var,
                    NULL != names ? names : "unknown flags",
                    NULL != component_name(module) ? component_name(module) : "this component");
        free(names);
        module->btl_flags &= capabilities;
    }
    if (0 != (module->btl_flags & MCA_BTL_FLAGS_SEND) && 0 == module->btl_max_send_size) {
        describe_var(module, "max_send_size", var, sizeof(var));
        opal_output(mca_btl_base_err_stream(),
                    "%s is 0: a module that sends needs room for a message", var);
        return OPAL_ERR_BAD_VALUE;
    }
    if (module->btl_eager_limit > module->btl_max_send_size) {
        describe_var(module, "eager_limit", var, sizeof(var));
        opal_output(mca_btl_base_err_stream(),
                    "%s = %zu is above the max send size %zu: lowered to %zu", var,
                    module->btl_eager_limit, module->btl_max_send_size, module->btl_max_send_size);
        module->btl_eager_limit = module->btl_max_send_size;
    }
    /* 0 means no limit; from here on a limit is always a number. */
    if (0 == module->btl_put_limit) {
        module->btl_put_limit = SIZE_MAX;
    }
    if (0 == module->btl_get_limit) {
        module->btl_get_limit = SIZE_MAX;
    }
    if (0 == module->btl_rdma_pipeline_frag_size) {
        module->btl_rdma_pipeline_frag_size = SIZE_MAX;
    }
    size_t rdma_limit = SIZE_MAX;
    if (0 != (module->btl_flags & MCA_BTL_FLAGS_PUT) && module->btl_put_limit < rdma_limit) {
        rdma_limit = module->btl_put_limit;
    }
    if (0 != (module->btl_flags & MCA_BTL_FLAGS_GET) && module->btl_get_limit < rdma_limit) {
        rdma_limit = module->btl_get_limit;
    }
    if (module->btl_rdma_pipeline_frag_size > rdma_limit) {
        describe_var(module, "rdma_pipeline_frag_size", var, sizeof(var));
        opal_output(mca_btl_base_err_stream(),
                    "%s = %zu is above the put / get limit %zu: lowered to %zu", var,
                    module->btl_rdma_pipeline_frag_size, rdma_limit, rdma_limit);
        module->btl_rdma_pipeline_frag_size = rdma_limit;
    }
    if (0 != module->btl_min_rdma_pipeline_size &&
        module->btl_min_rdma_pipeline_size < module->btl_eager_limit) {
        /* Below the eager limit messages never need a pipeline. */
        module->btl_min_rdma_pipeline_size = module->btl_eager_limit;
    }
    if (0 == module->btl_put_alignment) {
        module->btl_put_alignment = 1;
    }
    if (0 == module->btl_get_alignment) {
        module->btl_get_alignment = 1;
    }
    return OPAL_SUCCESS;
}
