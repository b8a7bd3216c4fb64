/*
 * The hook table opal calls the run-time environment through. The table
 * is copied into static storage and published with one atomic pointer, so
 * a thread that sees the pointer sees the whole table.
 */
#include "opal/opal_config.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_fault.h"
#include "opal/util/opal_output.h"

static opal_rte_hooks_t installed_copy;
/* NULL or &installed_copy. Stored with release after the copy is written,
 * loaded with acquire before an entry is called: the pair makes the copy
 * visible to every caller that sees the pointer. */
static _Atomic(const opal_rte_hooks_t *) installed = NULL;

static const opal_rte_hooks_t *current(const char *caller)
{
    const opal_rte_hooks_t *hooks = atomic_load_explicit(&installed, memory_order_acquire);
    if (NULL == hooks) {
        opal_output(0,
                    "%s: no run-time environment is installed: call orte_init() before "
                    "using the modex, fences or abort",
                    caller);
    }
    return hooks;
}

int opal_rte_install(const opal_rte_hooks_t *hooks)
{
    if (NULL == hooks || NULL == hooks->rte_name || NULL == hooks->rte_modex_put ||
        NULL == hooks->rte_modex_commit || NULL == hooks->rte_modex_get ||
        NULL == hooks->rte_fence || NULL == hooks->rte_abort) {
        return OPAL_ERR_BAD_PARAM;
    }
    const opal_rte_hooks_t *old = atomic_load_explicit(&installed, memory_order_relaxed);
    if (NULL != old) {
        opal_output(0, "opal_rte_install: %s cannot be installed: %s already is", hooks->rte_name,
                    old->rte_name);
        return OPAL_ERR_EXISTS;
    }
    installed_copy = *hooks;
    atomic_store_explicit(&installed, &installed_copy, memory_order_release);
    return OPAL_SUCCESS;
}

int opal_rte_uninstall(void)
{
    if (NULL == atomic_exchange_explicit(&installed, NULL, memory_order_acq_rel)) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    return OPAL_SUCCESS;
}

bool opal_rte_installed(void)
{
    return NULL != atomic_load_explicit(&installed, memory_order_acquire);
}

const char *opal_rte_name(void)
{
    const opal_rte_hooks_t *hooks = atomic_load_explicit(&installed, memory_order_acquire);
    return NULL == hooks ? NULL : hooks->rte_name;
}

static int check_key(const char *caller, const char *key)
{
    if (NULL == key || '\0' == key[0]) {
        opal_output(0, "%s: the key is empty", caller);
        return OPAL_ERR_BAD_PARAM;
    }
    if (strlen(key) > OPAL_MODEX_MAX_KEY) {
        opal_output(0, "%s: the key '%.40s...' is longer than %d characters", caller, key,
                    OPAL_MODEX_MAX_KEY);
        return OPAL_ERR_BAD_PARAM;
    }
    return OPAL_SUCCESS;
}

int opal_modex_send(const char *key, const void *value, size_t size, opal_modex_scope_t scope)
{
    int rc = check_key("opal_modex_send", key);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if ((NULL == value && 0 != size) || scope < OPAL_MODEX_SCOPE_LOCAL ||
        scope > OPAL_MODEX_SCOPE_GLOBAL) {
        return OPAL_ERR_BAD_PARAM;
    }
    const opal_rte_hooks_t *hooks = current("opal_modex_send");
    if (NULL == hooks) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    return hooks->rte_modex_put(key, value, size, scope);
}

int opal_modex_commit(void)
{
    const opal_rte_hooks_t *hooks = current("opal_modex_commit");
    return NULL == hooks ? OPAL_ERR_NOT_INITIALIZED : hooks->rte_modex_commit();
}

int opal_modex_recv(uint32_t peer, const char *key, void **value, size_t *size, int64_t timeout_ns)
{
    int rc = check_key("opal_modex_recv", key);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if (NULL == value || NULL == size) {
        return OPAL_ERR_BAD_PARAM;
    }
    *value = NULL;
    *size = 0;
    const opal_rte_hooks_t *hooks = current("opal_modex_recv");
    if (NULL == hooks) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    if (OPAL_FAULT(modex_get)) {
        return OPAL_ERR_NOT_FOUND;
    }
    return hooks->rte_modex_get(peer, key, value, size, timeout_ns);
}

bool opal_rte_peer_finalized(uint32_t peer)
{
    const opal_rte_hooks_t *hooks = atomic_load_explicit(&installed, memory_order_acquire);
    return NULL != hooks && NULL != hooks->rte_peer_finalized && hooks->rte_peer_finalized(peer);
}

int opal_fence(bool collect)
{
    const opal_rte_hooks_t *hooks = current("opal_fence");
    if (NULL != hooks && OPAL_FAULT(fence)) {
        return OPAL_ERR_TIMEOUT;
    }
    return NULL == hooks ? OPAL_ERR_NOT_INITIALIZED : hooks->rte_fence(collect);
}

int opal_abort(int status, const char *format, ...)
{
    char *message = NULL;
    va_list ap;
    va_start(ap, format);
    int n = vasprintf(&message, format, ap);
    va_end(ap);
    if (n < 0) {
        message = NULL;
    }
    const char *text = NULL == message ? format : message;

    const opal_rte_hooks_t *hooks = atomic_load_explicit(&installed, memory_order_acquire);
    int rc;
    if (NULL == hooks) {
        opal_output(0, "opal_abort (status %d): %s", status, text);
        opal_output(0, "opal_abort: no run-time environment is installed (orte_init was not "
                       "called): nothing else is stopped");
        rc = OPAL_ERR_NOT_INITIALIZED;
    } else {
        rc = hooks->rte_abort(status, text);
    }
    free(message);
    return rc;
}
