/*
 * The variable registry: registration, synonyms, deregistration, lookup,
 * init and finalize. Values are parsed and applied in
 * mca_base_var_value.c, and come from mca_base_var_source.c.
 */
#include "opal/opal_config.h"

#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_var_internal.h"
#include "opal/mca/mca.h"
#include "opal/util/opal_argv.h"
#include "opal/util/opal_error.h"

mca_base_var_state_t mca_base_var_state;

/* The lock must exist before mca_base_var_init() (it guards the init count
 * and the message callback), so it is created once, on first use. */
static pthread_once_t lock_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t var_lock;

static void lock_create(void)
{
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&var_lock, &attr);
    pthread_mutexattr_destroy(&attr);
}

void mca_base_var_lock(void)
{
    pthread_once(&lock_once, lock_create);
    pthread_mutex_lock(&var_lock);
}

void mca_base_var_unlock(void)
{
    pthread_mutex_unlock(&var_lock);
}

static const char *const type_names[] = {
#define MCA_BASE_VAR_TYPE_STRING_ENTRY(name, str) str,
    MCA_BASE_VAR_TYPE_TABLE(MCA_BASE_VAR_TYPE_STRING_ENTRY)
#undef MCA_BASE_VAR_TYPE_STRING_ENTRY
};

static const char *const source_names[] = {
#define MCA_BASE_VAR_SOURCE_STRING_ENTRY(name, str) str,
    MCA_BASE_VAR_SOURCE_TABLE(MCA_BASE_VAR_SOURCE_STRING_ENTRY)
#undef MCA_BASE_VAR_SOURCE_STRING_ENTRY
};

static const char *const scope_names[MCA_BASE_VAR_SCOPE_MAX] = {
    [MCA_BASE_VAR_SCOPE_CONSTANT] = "constant", [MCA_BASE_VAR_SCOPE_READONLY] = "read-only",
    [MCA_BASE_VAR_SCOPE_LOCAL] = "local",       [MCA_BASE_VAR_SCOPE_GROUP] = "group",
    [MCA_BASE_VAR_SCOPE_ALL] = "all",
};

const char *mca_base_var_type_name(mca_base_var_type_t type)
{
    return type >= 0 && type < MCA_BASE_VAR_TYPE_MAX ? type_names[type] : "unknown";
}

const char *mca_base_var_source_name(mca_base_var_source_t source)
{
    return source >= 0 && source < MCA_BASE_VAR_SOURCE_MAX ? source_names[source] : "unknown";
}

const char *mca_base_var_scope_name(mca_base_var_scope_t scope)
{
    return scope >= 0 && scope < MCA_BASE_VAR_SCOPE_MAX ? scope_names[scope] : "unknown";
}

static void var_construct(mca_base_var_t *var)
{
    memset((char *) var + sizeof(var->super), 0, sizeof(*var) - sizeof(var->super));
    var->mbv_index = -1;
    var->mbv_synonym_for = -1;
}

static void var_destruct(mca_base_var_t *var)
{
    free(var->mbv_project_name);
    free(var->mbv_framework_name);
    free(var->mbv_component_name);
    free(var->mbv_variable_name);
    free(var->mbv_full_name);
    free(var->mbv_long_name);
    free(var->mbv_description);
    free(var->mbv_default_text);
    free(var->mbv_source_file);
    free(var->mbv_synonyms);
    if (NULL != var->mbv_enumerator) {
        OBJ_RELEASE(var->mbv_enumerator);
    }
}

OBJ_CLASS_INSTANCE(mca_base_var_t, opal_object_t, var_construct, var_destruct);

static void priv_construct(mca_base_var_priv_t *var)
{
    memset(&var->default_value, 0, sizeof(var->default_value));
    var->owned_string = NULL;
    var->source_name = NULL;
    var->registered_flags = 0;
    var->deprecation_warned = false;
}

static void priv_destruct(mca_base_var_priv_t *var)
{
    if (MCA_BASE_VAR_TYPE_STRING == var->pub.mbv_type) {
        free(var->default_value.stringval);
    }
    free(var->owned_string);
    free(var->source_name);
}

OBJ_CLASS_INSTANCE(mca_base_var_priv_t, mca_base_var_t, priv_construct, priv_destruct);

mca_base_var_priv_t *mca_base_var_lookup(int var_index)
{
    if (0 == mca_base_var_state.init_count || var_index < 0) {
        return NULL;
    }
    return opal_pointer_array_get_item(&mca_base_var_state.vars, var_index);
}

int mca_base_var_lookup_name(const char *full_name)
{
    void *value;
    if (0 == mca_base_var_state.init_count || NULL == full_name ||
        OPAL_SUCCESS != opal_hash_table_get_value_ptr(&mca_base_var_state.names, full_name,
                                                      strlen(full_name), &value)) {
        return OPAL_ERR_NOT_FOUND;
    }
    return (int) (intptr_t) value;
}

mca_base_var_priv_t *mca_base_var_resolve_synonym(mca_base_var_priv_t *var)
{
    if (0 == (var->pub.mbv_flags & MCA_BASE_VAR_FLAG_SYNONYM)) {
        return var;
    }
    return mca_base_var_lookup(var->pub.mbv_synonym_for);
}

bool mca_base_var_valid_part(const char *s)
{
    for (; NULL != s && '\0' != *s; ++s) {
        if (!isalnum((unsigned char) *s) && '_' != *s) {
            return false;
        }
    }
    return true;
}

static bool present(const char *s)
{
    return NULL != s && '\0' != *s;
}

char *mca_base_var_join_name(const char *framework, const char *component, const char *name)
{
    const char *parts[] = {framework, component, name};
    char *argv[4] = {NULL};
    int n = 0;
    for (int i = 0; i < 3; ++i) {
        if (!mca_base_var_valid_part(parts[i])) {
            return NULL;
        }
        if (present(parts[i])) {
            argv[n++] = (char *) parts[i];
        }
    }
    return 0 == n ? NULL : opal_argv_join(argv, '_');
}

static char *dup_part(const char *s)
{
    return present(s) ? strdup(s) : NULL;
}

static bool same_part(const char *a, const char *b)
{
    return present(a) ? present(b) && 0 == strcmp(a, b) : !present(b);
}

/* A new variable or synonym named project/framework/component/name, added
 * to the registry. Returns it or NULL when out of memory. */
static mca_base_var_priv_t *create_var(const char *project, const char *framework,
                                       const char *component, const char *name, char *full_name)
{
    mca_base_var_priv_t *var = OBJ_NEW(mca_base_var_priv_t);
    if (NULL == var) {
        return NULL;
    }
    mca_base_var_t *pub = &var->pub;
    pub->mbv_project_name = strdup(project);
    pub->mbv_framework_name = dup_part(framework);
    pub->mbv_component_name = dup_part(component);
    pub->mbv_variable_name = dup_part(name);
    pub->mbv_full_name = strdup(full_name);
    if (NULL == pub->mbv_project_name || (present(framework) && NULL == pub->mbv_framework_name) ||
        (present(component) && NULL == pub->mbv_component_name) ||
        (present(name) && NULL == pub->mbv_variable_name) || NULL == pub->mbv_full_name ||
        asprintf(&pub->mbv_long_name, "%s_%s", project, full_name) < 0) {
        pub->mbv_long_name = NULL;
        goto fail;
    }
    pub->mbv_index = opal_pointer_array_add(&mca_base_var_state.vars, var);
    if (pub->mbv_index < 0) {
        goto fail;
    }
    if (OPAL_SUCCESS != opal_hash_table_set_value_ptr(&mca_base_var_state.names, full_name,
                                                      strlen(full_name),
                                                      (void *) (intptr_t) pub->mbv_index)) {
        opal_pointer_array_remove_item(&mca_base_var_state.vars, pub->mbv_index);
        goto fail;
    }
    return var;

fail:
    OBJ_RELEASE(var);
    return NULL;
}

/* Gives back the string this system put in the storage: the storage no
 * longer points at it. */
static void release_storage(mca_base_var_priv_t *var)
{
    mca_base_var_t *pub = &var->pub;
    if (MCA_BASE_VAR_TYPE_STRING == pub->mbv_type && NULL != pub->mbv_storage &&
        pub->mbv_storage->stringval == var->owned_string) {
        pub->mbv_storage->stringval = NULL;
    }
    free(var->owned_string);
    var->owned_string = NULL;
    pub->mbv_storage = NULL;
}

static int bind_var(mca_base_var_priv_t *var, const char *description, mca_base_var_type_t type,
                    mca_base_var_enum_t *enumerator, uint32_t flags,
                    mca_base_var_info_lvl_t info_lvl, mca_base_var_scope_t scope, void *storage)
{
    mca_base_var_t *pub = &var->pub;
    mca_base_var_storage_t dflt;
    memset(&dflt, 0, sizeof(dflt));
    char *desc = NULL;

    /* Read the default before releasing the old binding: storage may be
     * the same memory and hold the string this system put there. */
    mca_base_var_storage_read(type, storage, &dflt);
    if (MCA_BASE_VAR_TYPE_STRING == type && NULL != dflt.stringval &&
        NULL == (dflt.stringval = strdup(dflt.stringval))) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (NULL != description && NULL == (desc = strdup(description))) {
        goto oom;
    }
    pub->mbv_type = type;
    char *dflt_text = mca_base_var_format_typed(type, enumerator, &dflt);
    if (NULL == dflt_text) {
        goto oom;
    }

    release_storage(var);
    if (MCA_BASE_VAR_TYPE_STRING == type) {
        free(var->default_value.stringval);
    }
    var->default_value = dflt;
    free(pub->mbv_default_text);
    pub->mbv_default_text = dflt_text;
    free(pub->mbv_description);
    pub->mbv_description = desc;
    if (NULL != enumerator) {
        OBJ_RETAIN(enumerator);
    }
    if (NULL != pub->mbv_enumerator) {
        OBJ_RELEASE(pub->mbv_enumerator);
    }
    pub->mbv_enumerator = enumerator;
    var->registered_flags = flags;
    pub->mbv_flags = flags;
    pub->mbv_info_lvl = info_lvl;
    pub->mbv_scope = scope;
    pub->mbv_storage = storage;
    pub->mbv_valid = true;
    mca_base_var_resolve(var);
    return OPAL_SUCCESS;

oom:
    if (MCA_BASE_VAR_TYPE_STRING == type) {
        free(dflt.stringval);
    }
    free(desc);
    return OPAL_ERR_OUT_OF_RESOURCE;
}

#define USER_FLAGS                                                                                 \
    (MCA_BASE_VAR_FLAG_INTERNAL | MCA_BASE_VAR_FLAG_DEFAULT_ONLY | MCA_BASE_VAR_FLAG_DEPRECATED |  \
     MCA_BASE_VAR_FLAG_READ_ONLY)

int mca_base_var_register(const char *project, const char *framework, const char *component,
                          const char *name, const char *description, mca_base_var_type_t type,
                          mca_base_var_enum_t *enumerator, uint32_t flags,
                          mca_base_var_info_lvl_t info_lvl, mca_base_var_scope_t scope,
                          void *storage)
{
    if (NULL == project) {
        project = "opal";
    }
    if (NULL == storage || type < 0 || type >= MCA_BASE_VAR_TYPE_MAX ||
        (NULL != enumerator && MCA_BASE_VAR_TYPE_INT != type) || info_lvl < OPAL_INFO_LVL_1 ||
        info_lvl > OPAL_INFO_LVL_MAX || scope < 0 || scope >= MCA_BASE_VAR_SCOPE_MAX ||
        0 != (flags & ~(uint32_t) USER_FLAGS) || !present(project) ||
        !mca_base_var_valid_part(project)) {
        return OPAL_ERR_BAD_PARAM;
    }
    char *full_name = mca_base_var_join_name(framework, component, name);
    if (NULL == full_name) {
        return OPAL_ERR_BAD_PARAM;
    }

    int rc;
    mca_base_var_lock();
    if (0 == mca_base_var_state.init_count) {
        rc = OPAL_ERR_NOT_INITIALIZED;
        goto out;
    }
    mca_base_var_priv_t *var;
    int index = mca_base_var_lookup_name(full_name);
    if (index >= 0) {
        /* Registered before (a plugin loaded again, a framework opened
         * again): the same index, bound to the new storage. */
        var = mca_base_var_lookup(index);
        if (NULL == var || 0 != (var->pub.mbv_flags & MCA_BASE_VAR_FLAG_SYNONYM) ||
            var->pub.mbv_type != type) {
            rc = OPAL_ERR_EXISTS;
            goto out;
        }
    } else if (NULL == (var = create_var(project, framework, component, name, full_name))) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    rc = bind_var(var, description, type, enumerator, flags, info_lvl, scope, storage);
    if (OPAL_SUCCESS == rc) {
        rc = var->pub.mbv_index;
    }

out:
    mca_base_var_unlock();
    free(full_name);
    return rc;
}

int mca_base_component_var_register(const mca_base_component_t *component, const char *name,
                                    const char *description, mca_base_var_type_t type,
                                    mca_base_var_enum_t *enumerator, uint32_t flags,
                                    mca_base_var_info_lvl_t info_lvl, mca_base_var_scope_t scope,
                                    void *storage)
{
    if (NULL == component) {
        return OPAL_ERR_BAD_PARAM;
    }
    return mca_base_var_register(component->mca_project_name, component->mca_type_name,
                                 component->mca_component_name, name, description, type, enumerator,
                                 flags, info_lvl, scope, storage);
}

/* True when some source holds a value under name. */
static bool has_pending(const char *name)
{
    for (int s = 0; s < MCA_BASE_VAR_SOURCE_MAX; ++s) {
        mca_base_var_pending_t *p;
        OPAL_LIST_FOREACH (p, &mca_base_var_state.pending[s], mca_base_var_pending_t) {
            if (0 == strcmp(p->name, name)) {
                return true;
            }
        }
    }
    return false;
}

static int add_synonym_index(mca_base_var_priv_t *var, int syn_index)
{
    mca_base_var_t *pub = &var->pub;
    for (int i = 0; i < pub->mbv_synonym_count; ++i) {
        if (pub->mbv_synonyms[i] == syn_index) {
            return OPAL_SUCCESS;
        }
    }
    int *grown = realloc(pub->mbv_synonyms, sizeof(int) * (size_t) (pub->mbv_synonym_count + 1));
    if (NULL == grown) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    pub->mbv_synonyms = grown;
    pub->mbv_synonyms[pub->mbv_synonym_count++] = syn_index;
    return OPAL_SUCCESS;
}

int mca_base_var_register_synonym(int var_index, const char *project, const char *framework,
                                  const char *component, const char *name, uint32_t flags)
{
    if (NULL == project) {
        project = "opal";
    }
    if (0 != (flags & ~(uint32_t) (MCA_BASE_VAR_FLAG_DEPRECATED | MCA_BASE_VAR_FLAG_INTERNAL)) ||
        !present(project) || !mca_base_var_valid_part(project)) {
        return OPAL_ERR_BAD_PARAM;
    }
    char *full_name = mca_base_var_join_name(framework, component, name);
    if (NULL == full_name) {
        return OPAL_ERR_BAD_PARAM;
    }

    int rc;
    mca_base_var_lock();
    mca_base_var_priv_t *var = mca_base_var_lookup(var_index), *syn;
    if (NULL == var || !var->pub.mbv_valid ||
        0 != (var->pub.mbv_flags & MCA_BASE_VAR_FLAG_SYNONYM)) {
        rc = 0 == mca_base_var_state.init_count ? OPAL_ERR_NOT_INITIALIZED : OPAL_ERR_NOT_FOUND;
        goto out;
    }
    int index = mca_base_var_lookup_name(full_name);
    if (index >= 0) {
        syn = mca_base_var_lookup(index);
        if (NULL == syn || 0 == (syn->pub.mbv_flags & MCA_BASE_VAR_FLAG_SYNONYM) ||
            syn->pub.mbv_synonym_for != var_index) {
            rc = OPAL_ERR_EXISTS;
            goto out;
        }
    } else if (NULL == (syn = create_var(project, framework, component, name, full_name))) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    char *desc = NULL;
    if (NULL != var->pub.mbv_description && NULL == (desc = strdup(var->pub.mbv_description))) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    rc = add_synonym_index(var, syn->pub.mbv_index);
    if (OPAL_SUCCESS != rc) {
        free(desc);
        goto out;
    }
    free(syn->pub.mbv_description);
    syn->pub.mbv_description = desc;
    syn->pub.mbv_type = var->pub.mbv_type;
    syn->pub.mbv_flags = MCA_BASE_VAR_FLAG_SYNONYM | flags;
    syn->registered_flags = syn->pub.mbv_flags;
    syn->pub.mbv_info_lvl = var->pub.mbv_info_lvl;
    syn->pub.mbv_scope = var->pub.mbv_scope;
    syn->pub.mbv_synonym_for = var_index;
    syn->pub.mbv_valid = true;
    /* A value given under the new name may now apply to the variable. */
    if (has_pending(full_name)) {
        mca_base_var_resolve(var);
    }
    rc = syn->pub.mbv_index;

out:
    mca_base_var_unlock();
    free(full_name);
    return rc;
}

static void drop_synonym_index(mca_base_var_priv_t *var, int syn_index)
{
    mca_base_var_t *pub = &var->pub;
    for (int i = 0; i < pub->mbv_synonym_count; ++i) {
        if (pub->mbv_synonyms[i] == syn_index) {
            pub->mbv_synonyms[i] = pub->mbv_synonyms[--pub->mbv_synonym_count];
            return;
        }
    }
}

static void deregister_var(mca_base_var_priv_t *var)
{
    mca_base_var_t *pub = &var->pub;
    if (!pub->mbv_valid) {
        return;
    }
    pub->mbv_valid = false;
    if (0 != (pub->mbv_flags & MCA_BASE_VAR_FLAG_SYNONYM)) {
        mca_base_var_priv_t *target = mca_base_var_lookup(pub->mbv_synonym_for);
        if (NULL != target) {
            drop_synonym_index(target, pub->mbv_index);
        }
        return;
    }
    for (int i = 0; i < pub->mbv_synonym_count; ++i) {
        mca_base_var_priv_t *syn = mca_base_var_lookup(pub->mbv_synonyms[i]);
        if (NULL != syn) {
            syn->pub.mbv_valid = false;
        }
    }
    pub->mbv_synonym_count = 0;
    release_storage(var);
    if (NULL != pub->mbv_enumerator) {
        OBJ_RELEASE(pub->mbv_enumerator);
    }
}

int mca_base_var_deregister(int var_index)
{
    mca_base_var_lock();
    mca_base_var_priv_t *var = mca_base_var_lookup(var_index);
    int rc = OPAL_SUCCESS;
    if (NULL == var || !var->pub.mbv_valid) {
        rc = 0 == mca_base_var_state.init_count ? OPAL_ERR_NOT_INITIALIZED : OPAL_ERR_NOT_FOUND;
    } else {
        deregister_var(var);
    }
    mca_base_var_unlock();
    return rc;
}

int mca_base_var_deregister_component(const char *project, const char *framework,
                                      const char *component)
{
    if (!present(framework)) {
        return OPAL_ERR_BAD_PARAM;
    }
    mca_base_var_lock();
    int rc = 0 == mca_base_var_state.init_count ? OPAL_ERR_NOT_INITIALIZED : OPAL_SUCCESS;
    int count = opal_pointer_array_get_size(&mca_base_var_state.vars);
    for (int i = 0; OPAL_SUCCESS == rc && i < count; ++i) {
        mca_base_var_priv_t *var = mca_base_var_lookup(i);
        if (NULL == var || !var->pub.mbv_valid ||
            (NULL != project && 0 != strcmp(project, var->pub.mbv_project_name)) ||
            !same_part(framework, var->pub.mbv_framework_name) ||
            (NULL != component && !same_part(component, var->pub.mbv_component_name))) {
            continue;
        }
        deregister_var(var);
    }
    mca_base_var_unlock();
    return rc;
}

int mca_base_var_find(const char *project, const char *framework, const char *component,
                      const char *name)
{
    char *full_name = mca_base_var_join_name(framework, component, name);
    if (NULL == full_name) {
        return OPAL_ERR_NOT_FOUND;
    }
    mca_base_var_lock();
    int index = mca_base_var_lookup_name(full_name);
    mca_base_var_priv_t *var = mca_base_var_lookup(index);
    if (NULL == var || !var->pub.mbv_valid ||
        (NULL != project && 0 != strcmp(project, var->pub.mbv_project_name))) {
        index = OPAL_ERR_NOT_FOUND;
    }
    mca_base_var_unlock();
    free(full_name);
    return index;
}

int mca_base_var_find_by_name(const char *full_name)
{
    mca_base_var_lock();
    int index = mca_base_var_lookup_name(full_name);
    mca_base_var_priv_t *var = mca_base_var_lookup(index);
    if (NULL == var || !var->pub.mbv_valid) {
        index = OPAL_ERR_NOT_FOUND;
    }
    mca_base_var_unlock();
    return index;
}

int mca_base_var_get(int var_index, const mca_base_var_t **var)
{
    if (NULL == var) {
        return OPAL_ERR_BAD_PARAM;
    }
    mca_base_var_lock();
    mca_base_var_priv_t *v = mca_base_var_lookup(var_index);
    int rc = NULL != v && v->pub.mbv_valid ? OPAL_SUCCESS : OPAL_ERR_NOT_FOUND;
    *var = OPAL_SUCCESS == rc ? &v->pub : NULL;
    mca_base_var_unlock();
    return rc;
}

int mca_base_var_get_count(void)
{
    mca_base_var_lock();
    int count = 0 == mca_base_var_state.init_count
                    ? 0
                    : opal_pointer_array_get_num_used(&mca_base_var_state.vars);
    mca_base_var_unlock();
    return count;
}

int mca_base_var_declare_prefix(const char *prefix)
{
    if (!present(prefix) || !mca_base_var_valid_part(prefix)) {
        return OPAL_ERR_BAD_PARAM;
    }
    mca_base_var_lock();
    int rc = 0 == mca_base_var_state.init_count
                 ? OPAL_ERR_NOT_INITIALIZED
                 : opal_argv_append_unique_nosize(&mca_base_var_state.declared_prefixes, prefix);
    mca_base_var_unlock();
    return rc;
}

static void teardown(void)
{
    mca_base_var_state_t *st = &mca_base_var_state;
    int count = opal_pointer_array_get_size(&st->vars);
    for (int i = 0; i < count; ++i) {
        mca_base_var_priv_t *var = opal_pointer_array_get_item(&st->vars, i);
        if (NULL != var && 0 == (var->pub.mbv_flags & MCA_BASE_VAR_FLAG_SYNONYM)) {
            deregister_var(var);
        }
    }
    for (int i = 0; i < count; ++i) {
        mca_base_var_priv_t *var = opal_pointer_array_get_item(&st->vars, i);
        if (NULL != var) {
            OBJ_RELEASE(var);
        }
    }
    OBJ_DESTRUCT(&st->vars);
    OBJ_DESTRUCT(&st->names);
    mca_base_var_source_finalize();
    opal_argv_free(st->declared_prefixes);
    st->declared_prefixes = NULL;
}

int mca_base_var_init(void)
{
    mca_base_var_state_t *st = &mca_base_var_state;
    int rc = OPAL_SUCCESS;
    mca_base_var_lock();
    if (st->init_count++ > 0) {
        goto out;
    }
    OBJ_CONSTRUCT(&st->vars, opal_pointer_array_t);
    OBJ_CONSTRUCT(&st->names, opal_hash_table_t);
    for (int s = 0; s < MCA_BASE_VAR_SOURCE_MAX; ++s) {
        OBJ_CONSTRUCT(&st->pending[s], opal_list_t);
    }
    st->declared_prefixes = NULL;
    rc = opal_pointer_array_init(&st->vars, 128, INT_MAX, 128);
    if (OPAL_SUCCESS == rc) {
        rc = mca_base_var_source_init();
    }
    if (OPAL_SUCCESS == rc) {
        rc = mca_base_pvar_init();
    }
    if (OPAL_SUCCESS != rc) {
        teardown();
        st->init_count = 0;
    }

out:
    mca_base_var_unlock();
    return rc;
}

int mca_base_var_finalize(void)
{
    mca_base_var_state_t *st = &mca_base_var_state;
    int rc = OPAL_SUCCESS;
    mca_base_var_lock();
    if (0 == st->init_count) {
        rc = OPAL_ERR_NOT_INITIALIZED;
    } else if (0 == --st->init_count) {
        /* Counted back up while tearing down so that lookups made by
         * destructors and callbacks still see the tables. */
        st->init_count = 1;
        mca_base_pvar_finalize();
        teardown();
        st->init_count = 0;
    }
    mca_base_var_unlock();
    return rc;
}
