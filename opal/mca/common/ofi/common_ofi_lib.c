/*
 * libfabric, loaded when a component first needs it rather than with the
 * plugin. Loading it runs the constructors of every provider library it
 * links (Debian's pulls in libpsm-infinipath, whose constructor sleeps
 * for about 100 ms), which a process that only registers or lists the
 * ofi variables, or whose btl/ofi stands aside, should not pay. The ofi
 * code calls the six functions libfabric exports through the wrappers
 * below (common_ofi.h maps the fi_* names onto them); everything else in
 * libfabric's API is inline, through the fid's operation tables.
 */
#include "opal/opal_config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/common/ofi/common_ofi.h"
#include "opal/util/opal_error.h"

#ifndef OPAL_OFI_LIBRARY
#error "OPAL_OFI_LIBRARY (the libfabric file to dlopen) comes from configure"
#endif

/* The entry points, filled once by load_library; read only after
 * pthread_once returned, which orders them. */
static struct {
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
                   struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    uint32_t (*version)(void);
    const char *(*strerror)(int);
} lib;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static bool loaded;
static char load_error[256];

static void *symbol(void *handle, const char *name)
{
    void *address = dlsym(handle, name);
    if (NULL == address && '\0' == load_error[0]) {
        snprintf(load_error, sizeof(load_error), "%s has no symbol %s", OPAL_OFI_LIBRARY, name);
    }
    return address;
}

static void load_library(void)
{
    /* RTLD_NODELETE: its providers install memory hooks and threads that
     * do not survive being unmapped, and the leaks of their constructors
     * stay attributable to them (contrib/valgrind.supp); the handle is
     * kept on purpose. RTLD_GLOBAL as when the plugin linked it. */
    void *handle = dlopen(OPAL_OFI_LIBRARY, RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
    if (NULL == handle) {
        const char *err = dlerror();
        snprintf(load_error, sizeof(load_error), "%s", NULL != err ? err : OPAL_OFI_LIBRARY);
        return;
    }
    *(void **) &lib.getinfo = symbol(handle, "fi_getinfo");
    *(void **) &lib.freeinfo = symbol(handle, "fi_freeinfo");
    *(void **) &lib.dupinfo = symbol(handle, "fi_dupinfo");
    *(void **) &lib.fabric = symbol(handle, "fi_fabric");
    *(void **) &lib.version = symbol(handle, "fi_version");
    *(void **) &lib.strerror = symbol(handle, "fi_strerror");
    loaded = '\0' == load_error[0];
}

int opal_common_ofi_load(const char **why)
{
    (void) pthread_once(&load_once, load_library);
    if (NULL != why) {
        *why = loaded ? NULL : load_error;
    }
    return loaded ? OPAL_SUCCESS : OPAL_ERR_NOT_AVAILABLE;
}

int opal_common_ofi_fi_getinfo(uint32_t version, const char *node, const char *service,
                               uint64_t flags, const struct fi_info *hints, struct fi_info **info)
{
    if (OPAL_SUCCESS != opal_common_ofi_load(NULL)) {
        return -FI_ENOSYS;
    }
    return lib.getinfo(version, node, service, flags, hints, info);
}

void opal_common_ofi_fi_freeinfo(struct fi_info *info)
{
    /* Only what libfabric allocated is freed here, so it is loaded. */
    if (NULL != info && OPAL_SUCCESS == opal_common_ofi_load(NULL)) {
        lib.freeinfo(info);
    }
}

struct fi_info *opal_common_ofi_fi_dupinfo(const struct fi_info *info)
{
    if (OPAL_SUCCESS != opal_common_ofi_load(NULL)) {
        return NULL;
    }
    return lib.dupinfo(info);
}

int opal_common_ofi_fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
                              void *context)
{
    if (OPAL_SUCCESS != opal_common_ofi_load(NULL)) {
        return -FI_ENOSYS;
    }
    return lib.fabric(attr, fabric, context);
}

uint32_t opal_common_ofi_fi_version(void)
{
    if (OPAL_SUCCESS != opal_common_ofi_load(NULL)) {
        return 0;
    }
    return lib.version();
}

const char *opal_common_ofi_fi_strerror(int errnum)
{
    if (OPAL_SUCCESS != opal_common_ofi_load(NULL)) {
        return "libfabric is not loaded";
    }
    return lib.strerror(errnum);
}
