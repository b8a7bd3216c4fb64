/*
 * Performance variables. They share the variable system's lock and
 * lifetime (created by mca_base_var_init(), gone after the last
 * mca_base_var_finalize()).
 */
#include "opal/opal_config.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_pvar.h"
#include "opal/mca/base/mca_base_var_internal.h"
#include "opal/mca/mca.h"
#include "opal/threads/opal_atomic.h"
#include "opal/util/opal_error.h"

typedef struct pvar_priv_t {
    mca_base_pvar_t pub;
    void *storage;
    mca_base_pvar_read_fn_t read_fn;
    void *ctx;
    /* Counters and timers: the raw value at the last reset. */
    mca_base_pvar_value_t baseline;
} pvar_priv_t;

static void pvar_construct(mca_base_pvar_t *pvar)
{
    memset((char *) pvar + sizeof(pvar->super), 0, sizeof(*pvar) - sizeof(pvar->super));
    pvar->pvar_index = -1;
}

static void pvar_destruct(mca_base_pvar_t *pvar)
{
    free(pvar->pvar_project_name);
    free(pvar->pvar_framework_name);
    free(pvar->pvar_component_name);
    free(pvar->pvar_variable_name);
    free(pvar->pvar_full_name);
    free(pvar->pvar_description);
}

OBJ_CLASS_INSTANCE(mca_base_pvar_t, opal_object_t, pvar_construct, pvar_destruct);

static void priv_construct(pvar_priv_t *pvar)
{
    pvar->storage = NULL;
    pvar->read_fn = NULL;
    pvar->ctx = NULL;
    memset(&pvar->baseline, 0, sizeof(pvar->baseline));
}

/* Private: static, so libopal does not export it. */
static OBJ_CLASS_INSTANCE(pvar_priv_t, mca_base_pvar_t, priv_construct, NULL);

static const char *const class_names[] = {
#define MCA_BASE_PVAR_CLASS_STRING_ENTRY(name, str) str,
    MCA_BASE_PVAR_CLASS_TABLE(MCA_BASE_PVAR_CLASS_STRING_ENTRY)
#undef MCA_BASE_PVAR_CLASS_STRING_ENTRY
};

const char *mca_base_pvar_class_name(mca_base_pvar_class_t pvar_class)
{
    return pvar_class >= 0 && pvar_class < MCA_BASE_PVAR_CLASS_MAX ? class_names[pvar_class]
                                                                   : "unknown";
}

/* Guarded by the variable system's lock; constructed while it is
 * initialised. */
static opal_pointer_array_t pvars;

int mca_base_pvar_init(void)
{
    OBJ_CONSTRUCT(&pvars, opal_pointer_array_t);
    return opal_pointer_array_init(&pvars, 32, INT_MAX, 32);
}

void mca_base_pvar_finalize(void)
{
    int count = opal_pointer_array_get_size(&pvars);
    for (int i = 0; i < count; ++i) {
        pvar_priv_t *pvar = opal_pointer_array_get_item(&pvars, i);
        if (NULL != pvar) {
            OBJ_RELEASE(pvar);
        }
    }
    OBJ_DESTRUCT(&pvars);
}

static pvar_priv_t *lookup(int index)
{
    if (0 == mca_base_var_state.init_count || index < 0) {
        return NULL;
    }
    return opal_pointer_array_get_item(&pvars, index);
}

static pvar_priv_t *lookup_valid(int index)
{
    pvar_priv_t *pvar = lookup(index);
    return NULL != pvar && pvar->pub.pvar_valid ? pvar : NULL;
}

/* Ever registered under full_name, valid or not. */
static pvar_priv_t *lookup_name(const char *full_name)
{
    int count = 0 == mca_base_var_state.init_count ? 0 : opal_pointer_array_get_size(&pvars);
    for (int i = 0; i < count; ++i) {
        pvar_priv_t *pvar = opal_pointer_array_get_item(&pvars, i);
        if (NULL != pvar && 0 == strcmp(pvar->pub.pvar_full_name, full_name)) {
            return pvar;
        }
    }
    return NULL;
}

static char *dup_part(const char *s)
{
    return NULL != s && '\0' != *s ? strdup(s) : NULL;
}

static pvar_priv_t *create_pvar(const char *project, const char *framework, const char *component,
                                const char *name, char *full_name)
{
    pvar_priv_t *pvar = OBJ_NEW(pvar_priv_t);
    if (NULL == pvar) {
        return NULL;
    }
    mca_base_pvar_t *pub = &pvar->pub;
    pub->pvar_project_name = strdup(project);
    pub->pvar_framework_name = dup_part(framework);
    pub->pvar_component_name = dup_part(component);
    pub->pvar_variable_name = dup_part(name);
    pub->pvar_full_name = strdup(full_name);
    if (NULL == pub->pvar_project_name || NULL == pub->pvar_full_name ||
        (NULL != framework && '\0' != *framework && NULL == pub->pvar_framework_name) ||
        (NULL != component && '\0' != *component && NULL == pub->pvar_component_name) ||
        (NULL != name && '\0' != *name && NULL == pub->pvar_variable_name) ||
        (pub->pvar_index = opal_pointer_array_add(&pvars, pvar)) < 0) {
        OBJ_RELEASE(pvar);
        return NULL;
    }
    return pvar;
}

int mca_base_pvar_register(const char *project, const char *framework, const char *component,
                           const char *name, const char *description,
                           mca_base_pvar_class_t pvar_class, mca_base_var_type_t type,
                           mca_base_var_info_lvl_t info_lvl, uint32_t flags, void *storage,
                           mca_base_pvar_read_fn_t read_fn, void *ctx)
{
    if (NULL == project) {
        project = "opal";
    }
    if (pvar_class < 0 || pvar_class >= MCA_BASE_PVAR_CLASS_MAX ||
        (MCA_BASE_VAR_TYPE_UNSIGNED_INT != type && MCA_BASE_VAR_TYPE_UINT64_T != type &&
         MCA_BASE_VAR_TYPE_DOUBLE != type) ||
        info_lvl < OPAL_INFO_LVL_1 || info_lvl > OPAL_INFO_LVL_MAX ||
        0 != (flags & ~(uint32_t) MCA_BASE_PVAR_FLAG_INTERNAL) ||
        (NULL == storage) == (NULL == read_fn) || '\0' == *project ||
        !mca_base_var_valid_part(project)) {
        return OPAL_ERR_BAD_PARAM;
    }
    char *full_name = mca_base_var_join_name(framework, component, name);
    char *desc = NULL;
    if (NULL == full_name || (NULL != description && NULL == (desc = strdup(description)))) {
        free(full_name);
        return NULL == full_name ? OPAL_ERR_BAD_PARAM : OPAL_ERR_OUT_OF_RESOURCE;
    }

    int rc;
    mca_base_var_lock();
    if (0 == mca_base_var_state.init_count) {
        rc = OPAL_ERR_NOT_INITIALIZED;
        goto out;
    }
    pvar_priv_t *pvar = lookup_name(full_name);
    if (NULL != pvar && (pvar->pub.pvar_class != pvar_class || pvar->pub.pvar_type != type)) {
        rc = OPAL_ERR_EXISTS;
        goto out;
    }
    if (NULL == pvar &&
        NULL == (pvar = create_pvar(project, framework, component, name, full_name))) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    mca_base_pvar_t *pub = &pvar->pub;
    free(pub->pvar_description);
    pub->pvar_description = desc;
    desc = NULL;
    pub->pvar_class = pvar_class;
    pub->pvar_type = type;
    pub->pvar_info_lvl = info_lvl;
    pub->pvar_flags = flags;
    pub->pvar_valid = true;
    pvar->storage = storage;
    pvar->read_fn = read_fn;
    pvar->ctx = ctx;
    memset(&pvar->baseline, 0, sizeof(pvar->baseline));
    rc = pub->pvar_index;

out:
    mca_base_var_unlock();
    free(desc);
    free(full_name);
    return rc;
}

int mca_base_component_pvar_register(const mca_base_component_t *component, const char *name,
                                     const char *description, mca_base_pvar_class_t pvar_class,
                                     mca_base_var_type_t type, mca_base_var_info_lvl_t info_lvl,
                                     uint32_t flags, void *storage, mca_base_pvar_read_fn_t read_fn,
                                     void *ctx)
{
    if (NULL == component) {
        return OPAL_ERR_BAD_PARAM;
    }
    return mca_base_pvar_register(component->mca_project_name, component->mca_type_name,
                                  component->mca_component_name, name, description, pvar_class,
                                  type, info_lvl, flags, storage, read_fn, ctx);
}

static void deregister(pvar_priv_t *pvar)
{
    pvar->pub.pvar_valid = false;
    pvar->storage = NULL;
    pvar->read_fn = NULL;
    pvar->ctx = NULL;
}

int mca_base_pvar_deregister(int pvar_index)
{
    mca_base_var_lock();
    pvar_priv_t *pvar = lookup_valid(pvar_index);
    int rc = OPAL_SUCCESS;
    if (NULL == pvar) {
        rc = 0 == mca_base_var_state.init_count ? OPAL_ERR_NOT_INITIALIZED : OPAL_ERR_NOT_FOUND;
    } else {
        deregister(pvar);
    }
    mca_base_var_unlock();
    return rc;
}

static bool same_part(const char *want, const char *have)
{
    return NULL == have ? NULL == want || '\0' == *want : NULL != want && 0 == strcmp(want, have);
}

int mca_base_pvar_deregister_component(const char *project, const char *framework,
                                       const char *component)
{
    if (NULL == framework || '\0' == *framework) {
        return OPAL_ERR_BAD_PARAM;
    }
    mca_base_var_lock();
    int rc = 0 == mca_base_var_state.init_count ? OPAL_ERR_NOT_INITIALIZED : OPAL_SUCCESS;
    int count = OPAL_SUCCESS == rc ? opal_pointer_array_get_size(&pvars) : 0;
    for (int i = 0; i < count; ++i) {
        pvar_priv_t *pvar = lookup_valid(i);
        if (NULL != pvar &&
            (NULL == project || 0 == strcmp(project, pvar->pub.pvar_project_name)) &&
            same_part(framework, pvar->pub.pvar_framework_name) &&
            (NULL == component || same_part(component, pvar->pub.pvar_component_name))) {
            deregister(pvar);
        }
    }
    mca_base_var_unlock();
    return rc;
}

int mca_base_pvar_find_by_name(const char *full_name)
{
    if (NULL == full_name) {
        return OPAL_ERR_NOT_FOUND;
    }
    mca_base_var_lock();
    pvar_priv_t *pvar = lookup_name(full_name);
    int rc = NULL != pvar && pvar->pub.pvar_valid ? pvar->pub.pvar_index : OPAL_ERR_NOT_FOUND;
    mca_base_var_unlock();
    return rc;
}

int mca_base_pvar_find(const char *project, const char *framework, const char *component,
                       const char *name)
{
    char *full_name = mca_base_var_join_name(framework, component, name);
    if (NULL == full_name) {
        return OPAL_ERR_NOT_FOUND;
    }
    mca_base_var_lock();
    int rc = mca_base_pvar_find_by_name(full_name);
    pvar_priv_t *pvar = lookup_valid(rc);
    if (NULL != pvar && NULL != project && 0 != strcmp(project, pvar->pub.pvar_project_name)) {
        rc = OPAL_ERR_NOT_FOUND;
    }
    mca_base_var_unlock();
    free(full_name);
    return rc;
}

int mca_base_pvar_get(int pvar_index, const mca_base_pvar_t **pvar)
{
    if (NULL == pvar) {
        return OPAL_ERR_BAD_PARAM;
    }
    mca_base_var_lock();
    pvar_priv_t *p = lookup_valid(pvar_index);
    *pvar = NULL != p ? &p->pub : NULL;
    mca_base_var_unlock();
    return NULL != p ? OPAL_SUCCESS : OPAL_ERR_NOT_FOUND;
}

int mca_base_pvar_get_count(void)
{
    mca_base_var_lock();
    int count = 0 == mca_base_var_state.init_count ? 0 : opal_pointer_array_get_num_used(&pvars);
    mca_base_var_unlock();
    return count;
}

static int read_raw(const pvar_priv_t *pvar, mca_base_pvar_value_t *value)
{
    if (NULL != pvar->read_fn) {
        return pvar->read_fn(&pvar->pub, value, pvar->ctx);
    }
    /* Relaxed: a statistic orders nothing; see the header. */
    switch (pvar->pub.pvar_type) {
        case MCA_BASE_VAR_TYPE_UNSIGNED_INT:
            value->uintval =
                atomic_load_explicit((_Atomic unsigned int *) pvar->storage, memory_order_relaxed);
            break;
        case MCA_BASE_VAR_TYPE_UINT64_T:
            value->uint64val =
                atomic_load_explicit((opal_atomic_uint64_t *) pvar->storage, memory_order_relaxed);
            break;
        default:
            value->doubleval =
                atomic_load_explicit((_Atomic double *) pvar->storage, memory_order_relaxed);
            break;
    }
    return OPAL_SUCCESS;
}

static bool resettable(const pvar_priv_t *pvar)
{
    return MCA_BASE_PVAR_CLASS_COUNTER == pvar->pub.pvar_class ||
           MCA_BASE_PVAR_CLASS_TIMER == pvar->pub.pvar_class;
}

/* Under the lock. */
static int read_value(const pvar_priv_t *pvar, mca_base_pvar_value_t *value)
{
    int rc = read_raw(pvar, value);
    if (OPAL_SUCCESS != rc || !resettable(pvar)) {
        return rc;
    }
    /* Unsigned subtraction stays right across a wrap of the counter. */
    switch (pvar->pub.pvar_type) {
        case MCA_BASE_VAR_TYPE_UNSIGNED_INT:
            value->uintval -= pvar->baseline.uintval;
            break;
        case MCA_BASE_VAR_TYPE_UINT64_T:
            value->uint64val -= pvar->baseline.uint64val;
            break;
        default:
            value->doubleval -= pvar->baseline.doubleval;
            break;
    }
    return OPAL_SUCCESS;
}

int mca_base_pvar_read(int pvar_index, mca_base_pvar_value_t *value)
{
    if (NULL == value) {
        return OPAL_ERR_BAD_PARAM;
    }
    mca_base_var_lock();
    pvar_priv_t *pvar = lookup_valid(pvar_index);
    int rc = NULL != pvar ? read_value(pvar, value) : OPAL_ERR_NOT_FOUND;
    mca_base_var_unlock();
    return rc;
}

int mca_base_pvar_reset(int pvar_index)
{
    mca_base_var_lock();
    pvar_priv_t *pvar = lookup_valid(pvar_index);
    int rc = OPAL_ERR_NOT_FOUND;
    if (NULL != pvar) {
        mca_base_pvar_value_t raw;
        rc = !resettable(pvar) ? OPAL_ERR_NOT_SUPPORTED : read_raw(pvar, &raw);
        if (OPAL_SUCCESS == rc) {
            pvar->baseline = raw;
        }
    }
    mca_base_var_unlock();
    return rc;
}

int mca_base_pvar_value_string(int pvar_index, char **text)
{
    if (NULL == text) {
        return OPAL_ERR_BAD_PARAM;
    }
    *text = NULL;
    mca_base_var_lock();
    pvar_priv_t *pvar = lookup_valid(pvar_index);
    mca_base_pvar_value_t value;
    int rc = NULL != pvar ? read_value(pvar, &value) : OPAL_ERR_NOT_FOUND;
    if (OPAL_SUCCESS == rc) {
        mca_base_var_storage_t v;
        switch (pvar->pub.pvar_type) {
            case MCA_BASE_VAR_TYPE_UNSIGNED_INT:
                v.uintval = value.uintval;
                break;
            case MCA_BASE_VAR_TYPE_UINT64_T:
                v.uint64val = value.uint64val;
                break;
            default:
                v.doubleval = value.doubleval;
                break;
        }
        *text = mca_base_var_format_typed(pvar->pub.pvar_type, NULL, &v);
        rc = NULL != *text ? OPAL_SUCCESS : OPAL_ERR_OUT_OF_RESOURCE;
    }
    mca_base_var_unlock();
    return rc;
}
