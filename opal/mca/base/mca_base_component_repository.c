/*
 * The component repository: scanning mca_base_component_path for plugins,
 * loading them with libltdl and checking what they export.
 */
#include "opal/opal_config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <ltdl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_base_component_repository.h"
#include "opal/mca/base/mca_base_framework_internal.h"
#include "opal/mca/base/mca_base_open.h"
#include "opal/util/opal_argv.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

/* The plugins of one framework, in path order. */
typedef struct {
    opal_list_item_t super;
    char *rf_name;
    opal_list_t rf_plugins;
} repository_framework_t;

static void framework_construct(repository_framework_t *rf)
{
    rf->rf_name = NULL;
    OBJ_CONSTRUCT(&rf->rf_plugins, opal_list_t);
}

static void framework_destruct(repository_framework_t *rf)
{
    free(rf->rf_name);
    OPAL_LIST_DESTRUCT(&rf->rf_plugins);
}

static OBJ_CLASS_INSTANCE(repository_framework_t, opal_list_item_t, framework_construct,
                          framework_destruct);

static void item_construct(mca_base_component_repository_item_t *item)
{
    item->ri_framework = NULL;
    item->ri_component = NULL;
    item->ri_path = NULL;
    item->ri_loaded = NULL;
    item->ri_refcount = 0;
    item->ri_handle = NULL;
}

static void item_destruct(mca_base_component_repository_item_t *item)
{
    /* Only reached when nobody holds the plugin any more, or at
     * finalize: close what a framework forgot to release. */
    if (NULL != item->ri_handle) {
        lt_dlclose((lt_dlhandle) item->ri_handle);
    }
    free(item->ri_framework);
    free(item->ri_component);
    free(item->ri_path);
}

OBJ_CLASS_INSTANCE(mca_base_component_repository_item_t, opal_list_item_t, item_construct,
                   item_destruct);

static int repository_refcount = 0;
/* repository_framework_t, one per framework that has a plugin. */
static opal_list_t repository_frameworks;
/* The value of mca_base_component_path that was scanned; NULL: not yet. */
static char *scanned_path = NULL;
/* mca_base_component_failure_t: every load and version failure. */
static opal_list_t repository_failures;
/* An empty list for frameworks without plugins. */
static opal_list_t no_plugins;

int mca_base_component_repository_init(void)
{
    if (repository_refcount++ > 0) {
        return OPAL_SUCCESS;
    }
    if (0 != lt_dlinit()) {
        opal_output(0, "mca: base: cannot start libltdl: %s", lt_dlerror());
        repository_refcount = 0;
        return OPAL_ERROR;
    }
    OBJ_CONSTRUCT(&repository_frameworks, opal_list_t);
    OBJ_CONSTRUCT(&repository_failures, opal_list_t);
    OBJ_CONSTRUCT(&no_plugins, opal_list_t);
    scanned_path = NULL;
    return OPAL_SUCCESS;
}

void mca_base_component_repository_finalize(void)
{
    if (repository_refcount <= 0 || --repository_refcount > 0) {
        return;
    }
    OPAL_LIST_DESTRUCT(&repository_frameworks);
    OPAL_LIST_DESTRUCT(&repository_failures);
    OBJ_DESTRUCT(&no_plugins);
    free(scanned_path);
    scanned_path = NULL;
    lt_dlexit();
}

/* "~" and "~/..." name the home directory. Returns a new string. */
static char *expand_home(const char *dir)
{
    const char *home = getenv("HOME");
    if ('~' != dir[0] || ('\0' != dir[1] && '/' != dir[1]) || NULL == home) {
        return strdup(dir);
    }
    char *out = NULL;
    if (asprintf(&out, "%s%s", home, dir + 1) < 0) {
        return NULL;
    }
    return out;
}

static repository_framework_t *find_framework(const char *name)
{
    repository_framework_t *rf;
    OPAL_LIST_FOREACH (rf, &repository_frameworks, repository_framework_t) {
        if (0 == strcmp(rf->rf_name, name)) {
            return rf;
        }
    }
    return NULL;
}

static mca_base_component_repository_item_t *find_in(repository_framework_t *rf,
                                                     const char *component)
{
    mca_base_component_repository_item_t *item;
    OPAL_LIST_FOREACH (item, &rf->rf_plugins, mca_base_component_repository_item_t) {
        if (0 == strcmp(item->ri_component, component)) {
            return item;
        }
    }
    return NULL;
}

/* Splits "mca_<fw>_<comp>.so" / ".la" into its parts; false for any other
 * name. The framework is what lies between the first two '_'. */
static bool parse_plugin_name(const char *name, char **framework, char **component)
{
    size_t len = strlen(name);
    if (len < 4 || 0 != strncmp(name, "mca_", 4) ||
        (0 != strcmp(name + len - 3, ".so") && 0 != strcmp(name + len - 3, ".la"))) {
        return false;
    }
    const char *fw = name + 4;
    const char *end = name + len - 3;
    const char *sep = memchr(fw, '_', (size_t) (end - fw));
    if (NULL == sep || sep == fw || sep + 1 >= end) {
        return false;
    }
    *framework = strndup(fw, (size_t) (sep - fw));
    *component = strndup(sep + 1, (size_t) (end - sep - 1));
    if (NULL == *framework || NULL == *component) {
        free(*framework);
        free(*component);
        return false;
    }
    return true;
}

/* The length of name without a ".so" or ".la" ending, and a rank that
 * puts the .so first. */
static size_t name_base(const char *name, int *rank)
{
    size_t len = strlen(name);
    *rank = 2;
    if (len > 3 && 0 == strcmp(name + len - 3, ".so")) {
        *rank = 0;
    } else if (len > 3 && 0 == strcmp(name + len - 3, ".la")) {
        *rank = 1;
    }
    return *rank < 2 ? len - 3 : len;
}

/* Order by name without its ending, then .so before .la: the .so is what
 * gets loaded, so it is the file a plugin is known by. */
static int compare_names(const void *a, const void *b)
{
    const char *x = *(char *const *) a, *y = *(char *const *) b;
    int xrank, yrank;
    size_t xl = name_base(x, &xrank), yl = name_base(y, &yrank);
    int c = strncmp(x, y, xl < yl ? xl : yl);
    if (0 != c) {
        return c;
    }
    if (xl != yl) {
        return xl < yl ? -1 : 1;
    }
    return xrank - yrank;
}

/* Adds the plugin file dir/name unless an earlier directory already gave
 * the same plugin. The .so and .la of one plugin in one directory are one
 * entry, named by the .so (scan_directory gives it first). */
static int add_plugin(const char *dir, const char *name)
{
    char *framework = NULL, *component = NULL, *path = NULL;
    int rc = OPAL_SUCCESS;

    if (!parse_plugin_name(name, &framework, &component)) {
        return OPAL_SUCCESS;
    }
    if (asprintf(&path, "%s/%s", dir, name) < 0) {
        path = NULL;
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    repository_framework_t *rf = find_framework(framework);
    if (NULL == rf) {
        rf = OBJ_NEW(repository_framework_t);
        if (NULL == rf) {
            rc = OPAL_ERR_OUT_OF_RESOURCE;
            goto out;
        }
        rf->rf_name = framework;
        framework = NULL;
        opal_list_append(&repository_frameworks, &rf->super);
    }
    mca_base_component_repository_item_t *item = find_in(rf, component);
    if (NULL != item) {
        size_t dlen = strlen(dir);
        bool same_dir = 0 == strncmp(item->ri_path, dir, dlen) && '/' == item->ri_path[dlen] &&
                        NULL == strchr(item->ri_path + dlen + 1, '/');
        if (!same_dir) {
            opal_output_verbose(MCA_BASE_VERBOSE_COMPONENT, mca_base_output,
                                "ignoring %s: %s/%s was already found as %s", path,
                                item->ri_framework, item->ri_component, item->ri_path);
        }
        goto out;
    }
    item = OBJ_NEW(mca_base_component_repository_item_t);
    if (NULL == item) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    item->ri_framework = strdup(rf->rf_name);
    item->ri_component = component;
    item->ri_path = path;
    component = NULL;
    path = NULL;
    if (NULL == item->ri_framework) {
        OBJ_RELEASE(item);
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    opal_list_append(&rf->rf_plugins, &item->super);
    opal_output_verbose(MCA_BASE_VERBOSE_INFO, mca_base_output, "found plugin %s", item->ri_path);
out:
    free(framework);
    free(component);
    free(path);
    return rc;
}

/* Adds the plugins of one directory, in name order so that what is found
 * does not depend on the file system's order. A directory that cannot be
 * read is skipped (noted at verbosity): the default path names
 * directories that often do not exist. */
static int scan_directory(const char *dir)
{
    DIR *d = opendir(dir);
    if (NULL == d) {
        opal_output_verbose(MCA_BASE_VERBOSE_INFO, mca_base_output, "skipping %s: %s", dir,
                            strerror(errno));
        return OPAL_SUCCESS;
    }
    char **names = NULL;
    int rc = OPAL_SUCCESS;
    struct dirent *entry;
    while (NULL != (entry = readdir(d))) {
        if (0 == strncmp(entry->d_name, "mca_", 4)) {
            rc = opal_argv_append_nosize(&names, entry->d_name);
            if (OPAL_SUCCESS != rc) {
                goto out;
            }
        }
    }
    int count = opal_argv_count(names);
    if (count > 1) {
        qsort(names, (size_t) count, sizeof(char *), compare_names);
    }
    for (int i = 0; i < count; ++i) {
        rc = add_plugin(dir, names[i]);
        if (OPAL_SUCCESS != rc) {
            goto out;
        }
    }
out:
    closedir(d);
    opal_argv_free(names);
    return rc;
}

/* Reads every directory of path. Plugins still loaded by a framework stay
 * valid: the framework holds its own reference on their items. */
static int scan_path(const char *path)
{
    OPAL_LIST_DESTRUCT(&repository_frameworks);
    OBJ_CONSTRUCT(&repository_frameworks, opal_list_t);
    free(scanned_path);
    scanned_path = strdup(path);
    if (NULL == scanned_path) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    char **dirs = opal_argv_split(path, ':');
    if (NULL == dirs) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    int rc = OPAL_SUCCESS;
    for (int i = 0; NULL != dirs[i] && OPAL_SUCCESS == rc; ++i) {
        char *dir = expand_home(dirs[i]);
        if (NULL == dir) {
            rc = OPAL_ERR_OUT_OF_RESOURCE;
            break;
        }
        rc = scan_directory(dir);
        free(dir);
    }
    opal_argv_free(dirs);
    return rc;
}

static int ensure_scanned(void)
{
    const char *path = NULL != mca_base_component_path ? mca_base_component_path : "";
    if (NULL != scanned_path && 0 == strcmp(scanned_path, path)) {
        return OPAL_SUCCESS;
    }
    opal_output_verbose(MCA_BASE_VERBOSE_INFO, mca_base_output, "looking for plugins in %s", path);
    return scan_path(path);
}

const opal_list_t *mca_base_component_repository_plugins(const char *framework)
{
    if (repository_refcount <= 0 || OPAL_SUCCESS != ensure_scanned()) {
        return NULL;
    }
    repository_framework_t *rf = find_framework(framework);
    return NULL != rf ? &rf->rf_plugins : &no_plugins;
}

mca_base_component_repository_item_t *mca_base_component_repository_find(const char *framework,
                                                                         const char *component)
{
    if (repository_refcount <= 0 || OPAL_SUCCESS != ensure_scanned()) {
        return NULL;
    }
    repository_framework_t *rf = find_framework(framework);
    return NULL != rf ? find_in(rf, component) : NULL;
}

bool mca_base_component_repository_is_loaded(const char *framework, const char *component)
{
    mca_base_component_repository_item_t *item =
        mca_base_component_repository_find(framework, component);
    return NULL != item && NULL != item->ri_handle;
}

const opal_list_t *mca_base_component_repository_failures(void)
{
    return repository_refcount > 0 ? &repository_failures : NULL;
}

/* Why opening path failed. libltdl tries each of its loaders in turn and
 * the last one (for preloaded modules) replaces the dynamic linker's
 * message ("undefined symbol: foo") with its own "file not found". So when
 * the .so exists, ask the dynamic linker once more: it fails the same way
 * and its message says why. The "path: " it starts with is dropped since
 * the failure record names the file. */
static char *open_failure_reason(const char *path, const char *lt_message)
{
    size_t len = strlen(path);
    if (len > 3 && 0 == strcmp(path + len - 3, ".so") && 0 == access(path, R_OK)) {
        void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (NULL == handle) {
            const char *msg = dlerror();
            if (NULL != msg) {
                if (0 == strncmp(msg, path, len) && 0 == strncmp(msg + len, ": ", 2)) {
                    msg += len + 2;
                }
                return strdup(msg);
            }
        } else {
            dlclose(handle);
        }
    }
    return strdup(NULL != lt_message ? lt_message : "unknown libltdl error");
}

/* Records a load or version failure once (the same file failing the same
 * way again, e.g. after a framework reopens, is not repeated) and prints
 * it when asked to and mca_base_component_show_load_errors selects it. */
static const mca_base_component_failure_t *
record_failure(const mca_base_component_repository_item_t *item, mca_base_component_stage_t stage,
               const char *reason, bool show)
{
    mca_base_component_failure_t *failure;
    OPAL_LIST_FOREACH (failure, &repository_failures, mca_base_component_failure_t) {
        if (failure->cf_stage == stage && 0 == strcmp(failure->cf_path, item->ri_path) &&
            0 == strcmp(failure->cf_reason, reason)) {
            return failure;
        }
    }
    failure =
        mca_base_failure_new(item->ri_framework, item->ri_component, item->ri_path, stage, reason);
    if (NULL == failure) {
        return NULL;
    }
    opal_list_append(&repository_failures, &failure->super);
    if (show && mca_base_component_show_load_error(item->ri_framework, item->ri_component)) {
        opal_output(0, "mca: cannot %s plugin %s (%s/%s): %s",
                    MCA_BASE_COMPONENT_STAGE_LOAD == stage ? "load" : "use", item->ri_path,
                    item->ri_framework, item->ri_component, reason);
    }
    return failure;
}

int mca_base_component_repository_load(mca_base_component_repository_item_t *item,
                                       const mca_base_framework_t *framework, bool show_errors,
                                       const mca_base_component_t **component,
                                       const mca_base_component_failure_t **failure)
{
    char *reason = NULL, *symbol = NULL;
    lt_dlhandle handle = NULL;
    lt_dladvise advise = NULL;
    mca_base_component_stage_t stage = MCA_BASE_COMPONENT_STAGE_LOAD;
    int rc;

    if (NULL != failure) {
        *failure = NULL;
    }
    if (NULL != item->ri_handle) {
        ++item->ri_refcount;
        *component = item->ri_loaded;
        return OPAL_SUCCESS;
    }

    /* Local symbols: every plugin exports mca_<fw>_<comp>_component and
     * whatever else it did not hide, and nothing should bind to another
     * plugin's copy by accident; the component is found with lt_dlsym on
     * this handle, and what plugins need from libopal comes from their own
     * dependency on it. A plugin that must export symbols to others is a
     * library, linked by those that need it. */
    if (0 != lt_dladvise_init(&advise) || 0 != lt_dladvise_local(&advise)) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto fail;
    }
    handle = lt_dlopenadvise(item->ri_path, advise);
    if (NULL == handle) {
        reason = open_failure_reason(item->ri_path, lt_dlerror());
        rc = OPAL_ERR_NOT_FOUND;
        goto fail;
    }
    /* The plugins built here export the component with the prefix every
     * opal-mca symbol carries (OPAL_SYMBOL_PREFIX, docs/developer.md); one
     * built elsewhere without opal/opal_rename.h's renaming exports the
     * plain name. */
    if (asprintf(&symbol, "%smca_%s_%s_component", OPAL_SYMBOL_PREFIX, item->ri_framework,
                 item->ri_component) < 0) {
        symbol = NULL;
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto fail;
    }
    const char *plain = symbol + strlen(OPAL_SYMBOL_PREFIX);
    const mca_base_component_t *found = lt_dlsym(handle, symbol);
    if (NULL == found) {
        found = lt_dlsym(handle, plain);
    }
    if (NULL == found) {
        const char *msg = lt_dlerror();
        if (asprintf(&reason, "no symbol %s (nor %s: %s)", plain, symbol,
                     NULL != msg ? msg : "not found") < 0) {
            reason = NULL;
        }
        rc = OPAL_ERR_NOT_FOUND;
        goto fail;
    }
    rc = mca_base_component_check_version(found, framework, item->ri_component, &reason);
    if (OPAL_SUCCESS != rc) {
        stage = MCA_BASE_COMPONENT_STAGE_VERSION;
        goto fail;
    }
    item->ri_handle = handle;
    item->ri_loaded = found;
    item->ri_refcount = 1;
    *component = found;
    opal_output_verbose(MCA_BASE_VERBOSE_INFO, mca_base_output, "loaded %s", item->ri_path);
    free(symbol);
    lt_dladvise_destroy(&advise);
    return OPAL_SUCCESS;

fail:
    if (NULL != handle) {
        lt_dlclose(handle);
    }
    if (NULL != reason) {
        const mca_base_component_failure_t *f = record_failure(item, stage, reason, show_errors);
        if (NULL != failure) {
            *failure = f;
        }
    }
    free(reason);
    free(symbol);
    if (NULL != advise) {
        lt_dladvise_destroy(&advise);
    }
    return rc;
}

void mca_base_component_repository_release(mca_base_component_repository_item_t *item)
{
    if (NULL == item->ri_handle || --item->ri_refcount > 0) {
        return;
    }
    /* Kept mapped when its component says so (it registered something,
     * e.g. an atexit handler, that outlives close); closed when the
     * repository finalizes. */
    if (NULL != item->ri_loaded &&
        0 != (item->ri_loaded->mca_component_flags & MCA_BASE_COMPONENT_FLAG_ALWAYS_LOADED)) {
        item->ri_refcount = 1;
        return;
    }
    opal_output_verbose(MCA_BASE_VERBOSE_INFO, mca_base_output, "unloading %s", item->ri_path);
    lt_dlclose((lt_dlhandle) item->ri_handle);
    item->ri_handle = NULL;
    item->ri_loaded = NULL;
    item->ri_refcount = 0;
}

/* Names in a component struct are fixed-size arrays that a broken plugin
 * may not terminate: compare and print at most their size. */
#define FIELD(c, f) (int) strnlen((c)->f, sizeof((c)->f)), (c)->f

static bool field_is(const char *field, size_t size, const char *value)
{
    return strnlen(field, size) == strlen(value) && 0 == strncmp(field, value, size);
}

int mca_base_component_check_version(const mca_base_component_t *c,
                                     const mca_base_framework_t *framework, const char *name,
                                     char **reason)
{
    int n = 0;
    *reason = NULL;
    if (MCA_BASE_VERSION_MAJOR != c->mca_major_version) {
        n = asprintf(reason, "built with MCA version %d.%d.%d, expected %d.%d.%d",
                     c->mca_major_version, c->mca_minor_version, c->mca_release_version,
                     MCA_BASE_VERSION_MAJOR, MCA_BASE_VERSION_MINOR, MCA_BASE_VERSION_RELEASE);
    } else if (!field_is(c->mca_type_name, sizeof(c->mca_type_name), framework->framework_name)) {
        n = asprintf(reason, "built for framework %.*s, expected %s", FIELD(c, mca_type_name),
                     framework->framework_name);
    } else if (c->mca_type_major_version != framework->framework_api_major ||
               c->mca_type_minor_version > framework->framework_api_minor) {
        n = asprintf(reason, "framework %s API %d.%d, expected %d.%d", framework->framework_name,
                     c->mca_type_major_version, c->mca_type_minor_version,
                     framework->framework_api_major, framework->framework_api_minor);
    } else if (!field_is(c->mca_project_name, sizeof(c->mca_project_name),
                         framework->framework_project)) {
        n = asprintf(reason, "built for project %.*s, expected %s", FIELD(c, mca_project_name),
                     framework->framework_project);
    } else if (OPAL_MAJOR_VERSION != c->mca_project_major_version ||
               OPAL_MINOR_VERSION != c->mca_project_minor_version) {
        n = asprintf(reason, "built with %s version %d.%d, expected %d.%d",
                     framework->framework_project, c->mca_project_major_version,
                     c->mca_project_minor_version, OPAL_MAJOR_VERSION, OPAL_MINOR_VERSION);
    } else if (NULL != name &&
               !field_is(c->mca_component_name, sizeof(c->mca_component_name), name)) {
        n = asprintf(reason, "calls itself %.*s, expected %s", FIELD(c, mca_component_name), name);
    } else {
        return OPAL_SUCCESS;
    }
    if (n < 0) {
        *reason = NULL;
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    return OPAL_ERR_VERSION_MISMATCH;
}
