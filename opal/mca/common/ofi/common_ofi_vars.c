/*
 * The ofi_* variables: registered by the first component that uses
 * common/ofi and shared by all of them.
 *
 * Their storage lives in this code, which is linked into each component
 * (plugin or library) that uses it. A second user's registration rebinds
 * the variables to its own copy (and the first copy's strings are taken
 * back), so the values are read through the variable system
 * (opal_common_ofi_var_value), never from a copy's storage. The component
 * base deregisters a component's own variables before unloading its
 * plugin, but these are not the component's: a destructor deregisters
 * them when the code holding the storage they are bound to goes away, so
 * the variable system never writes into an unmapped plugin.
 */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/common/ofi/common_ofi.h"
#include "opal/util/opal_error.h"

opal_common_ofi_vars_t opal_common_ofi_vars;

/* A variable of this copy: its name, type and where its value lives. */
typedef struct {
    const char *name;
    mca_base_var_type_t type; /* STRING or SIZE_T */
    void *storage;
    const char *dflt;  /* STRING */
    size_t dflt_size;  /* SIZE_T */
    int level;
    const char *description;
} ofi_var_t;

static const ofi_var_t ofi_vars[] = {
    {"provider_include", MCA_BASE_VAR_TYPE_STRING, &opal_common_ofi_vars.provider_include, NULL, 0,
     OPAL_INFO_LVL_1,
     "Comma list of the libfabric providers that may be used, most preferred first: full names "
     "as fi_info shows them (tcp;ofi_rxm, udp;ofi_rxd, shm, verbs;ofi_rxm) or one layer of a "
     "name (tcp matches tcp;ofi_rxm); unset: every provider, in libfabric's order"},
    {"provider_exclude", MCA_BASE_VAR_TYPE_STRING, &opal_common_ofi_vars.provider_exclude,
     "sockets,net", 0, OPAL_INFO_LVL_1,
     "Comma list of libfabric providers never used (names or layers as for "
     "ofi_provider_include); the default leaves out the deprecated sockets provider and the "
     "experimental net provider (which na/ofi still opens when an info string names it: "
     "ofi+net)"},
    {"domain_include", MCA_BASE_VAR_TYPE_STRING, &opal_common_ofi_vars.domain_include, NULL, 0,
     OPAL_INFO_LVL_3,
     "Comma list of libfabric domains that may be used (eth0, mlx5_0, shm: the domain names "
     "fi_info shows); unset: any"},
    {"if_include", MCA_BASE_VAR_TYPE_STRING, &opal_common_ofi_vars.if_include, NULL, 0,
     OPAL_INFO_LVL_3,
     "Comma list of network interfaces (eth0) or IP subnets (192.0.2.0/24) the provider's "
     "source address must be on; providers without an IP address (shm) are not affected; "
     "unset: any"},
    {"udp_socket_buffer", MCA_BASE_VAR_TYPE_SIZE_T, &opal_common_ofi_vars.udp_socket_buffer, NULL,
     OPAL_COMMON_OFI_UDP_SOCKET_BUFFER, OPAL_INFO_LVL_5,
     "Receive buffer of the udp provider's socket (bytes; 0: the kernel's default, "
     "net.core.rmem_default). With the kernel's default, datagrams that arrive while the "
     "process is not polling are dropped by the thousand and ofi_rxd retransmits them after a "
     "timeout; the default holds a few full windows of every peer. As root it may exceed "
     "net.core.rmem_max"},
};

#define OFI_VAR_COUNT (sizeof(ofi_vars) / sizeof(ofi_vars[0]))

int opal_common_ofi_register(const mca_base_component_t *component)
{
    (void) component;
    for (size_t i = 0; i < OFI_VAR_COUNT; ++i) {
        /* A string default is copied at registration; a re-registration
         * (a second user, or a plugin loaded again) rebinds to this copy
         * and reads the current value into it. */
        bool string = MCA_BASE_VAR_TYPE_STRING == ofi_vars[i].type;
        if (string) {
            *(char **) ofi_vars[i].storage = (char *) ofi_vars[i].dflt;
        } else {
            *(size_t *) ofi_vars[i].storage = ofi_vars[i].dflt_size;
        }
        int index =
            mca_base_var_register("opal", "ofi", NULL, ofi_vars[i].name, ofi_vars[i].description,
                                  ofi_vars[i].type, NULL, MCA_BASE_VAR_FLAG_NONE,
                                  ofi_vars[i].level, MCA_BASE_VAR_SCOPE_ALL, ofi_vars[i].storage);
        if (index < 0) {
            if (string) {
                *(char **) ofi_vars[i].storage = NULL;
            }
            return index;
        }
    }
    return OPAL_SUCCESS;
}

char *opal_common_ofi_var_value(const char *name)
{
    int index = mca_base_var_find("opal", "ofi", NULL, name);
    char *value = NULL;
    if (index < 0 || OPAL_SUCCESS != mca_base_var_value_string(index, &value)) {
        return NULL;
    }
    if ('\0' == value[0]) {
        free(value);
        return NULL;
    }
    return value;
}

size_t opal_common_ofi_var_size(const char *name, size_t fallback)
{
    int index = mca_base_var_find("opal", "ofi", NULL, name);
    const mca_base_var_t *var = NULL;
    if (index < 0 || OPAL_SUCCESS != mca_base_var_get(index, &var) || !var->mbv_valid ||
        MCA_BASE_VAR_TYPE_SIZE_T != var->mbv_type || NULL == var->mbv_storage) {
        return fallback;
    }
    return var->mbv_storage->sizetval;
}

/* Runs when this copy is unloaded (a plugin's dlclose) or at exit. A
 * variable still bound to this copy's storage is deregistered; one that
 * another copy took over, or a variable system already finalized (the
 * lookups fail), is left alone. */
__attribute__((destructor)) static void ofi_vars_release(void)
{
    for (size_t i = 0; i < OFI_VAR_COUNT; ++i) {
        int index = mca_base_var_find("opal", "ofi", NULL, ofi_vars[i].name);
        const mca_base_var_t *var = NULL;
        if (index < 0 || OPAL_SUCCESS != mca_base_var_get(index, &var) || !var->mbv_valid ||
            (void *) var->mbv_storage != (void *) ofi_vars[i].storage) {
            continue;
        }
        (void) mca_base_var_deregister(index);
    }
}
