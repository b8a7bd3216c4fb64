/*
 * Opening and closing na classes, their contexts and operation ids.
 */
#include "opal/opal_config.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/class/opal_list.h"
#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/na/base/base.h"
#include "opal/mca/na/base/na_base_internal.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

/* Serialises context creation and destruction across classes (rare). */
static pthread_mutex_t contexts_lock = PTHREAD_MUTEX_INITIALIZER;

/* A class, protocol or host may hold these characters only (host also
 * ':', '[', ']', '%' and '/' for IPv6 and paths). */
static bool name_ok(const char *s, const char *extra)
{
    if ('\0' == *s) {
        return false;
    }
    for (; '\0' != *s; ++s) {
        if (!isalnum((unsigned char) *s) && NULL == strchr("_-.;", *s) &&
            (NULL == extra || NULL == strchr(extra, *s))) {
            return false;
        }
    }
    return true;
}

int opal_na_info_parse(const char *info, opal_na_info_t *parsed, char **storage)
{
    memset(parsed, 0, sizeof(*parsed));
    *storage = NULL;
    if (NULL == info || '\0' == *info) {
        opal_output(0, "na: an empty info string names no transport (try \"btl\" or "
                       "\"ofi+tcp\")");
        return OPAL_ERR_BAD_PARAM;
    }
    char *copy = strdup(info);
    if (NULL == copy) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    char *host = strstr(copy, "://");
    if (NULL != host) {
        *host = '\0';
        host += 3;
    }
    char *protocol = strchr(copy, '+');
    if (NULL != protocol) {
        *protocol++ = '\0';
    }
    const char *what = NULL;
    if (!name_ok(copy, NULL)) {
        what = "class name";
    } else if (NULL != protocol && !name_ok(protocol, NULL)) {
        what = "protocol";
    } else if (NULL != host && !name_ok(host, ":[]%/")) {
        what = "host";
    }
    if (NULL != what) {
        opal_output(0,
                    "na: info string \"%s\": the %s is empty or holds a character that is "
                    "not allowed (the form is <class>[+<protocol>][://<host>[:<port>]])",
                    info, what);
        free(copy);
        return OPAL_ERR_BAD_PARAM;
    }
    parsed->class_name = copy;
    parsed->protocol_name = protocol;
    parsed->host_name = host;
    *storage = copy;
    return OPAL_SUCCESS;
}

static const opal_na_base_component_t *find_component(const opal_na_info_t *parsed)
{
    mca_base_component_list_item_t *item;
    OPAL_LIST_FOREACH (item, &opal_na_base_framework.framework_components,
                       mca_base_component_list_item_t) {
        const opal_na_base_component_t *component =
            (const opal_na_base_component_t *) item->cli_component;
        if (item->cli_opened && NULL != component->na_check_protocol &&
            component->na_check_protocol(parsed)) {
            return component;
        }
    }
    return NULL;
}

int opal_na_initialize(const char *info, bool listen, opal_na_class_t **cls)
{
    return opal_na_initialize_opt(info, listen, NULL, cls);
}

int opal_na_initialize_opt(const char *info, bool listen, const opal_na_init_info_t *opts,
                           opal_na_class_t **cls)
{
    if (NULL == cls) {
        return OPAL_ERR_BAD_PARAM;
    }
    *cls = NULL;
    opal_na_info_t parsed;
    char *storage = NULL;
    int rc = opal_na_info_parse(info, &parsed, &storage);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = mca_base_framework_open(&opal_na_base_framework, 0);
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "na: cannot open the na framework: %s", opal_strerror(rc));
        free(storage);
        return rc;
    }
    opal_na_class_t *c = NULL;
    const opal_na_base_component_t *component = find_component(&parsed);
    if (NULL == component) {
        opal_output(0, "na: no component serves \"%s\"; what each accepts: %s", info,
                    opal_na_base_protocols_list());
        rc = OPAL_ERR_NOT_FOUND;
        goto out;
    }
    c = calloc(1, sizeof(*c));
    if (NULL == c) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    c->ops = component->na_ops;
    c->component = component;
    c->listen = listen;
    if (NULL != opts) {
        c->init_info = *opts;
    }
    size_t plen = strlen(parsed.class_name) +
                  (NULL == parsed.protocol_name ? 0 : 1 + strlen(parsed.protocol_name)) + 1;
    c->protocol = malloc(plen);
    if (NULL == c->protocol) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    snprintf(c->protocol, plen, "%s%s%s", parsed.class_name,
             NULL == parsed.protocol_name ? "" : "+",
             NULL == parsed.protocol_name ? "" : parsed.protocol_name);
    parsed.init = &c->init_info;
    rc = c->ops->initialize(c, &parsed, listen);
    if (OPAL_SUCCESS != rc) {
        opal_output_verbose(1, opal_na_base_output, "na: %s could not open \"%s\": %s",
                            c->ops->name, info, opal_strerror(rc));
        goto out;
    }
    opal_na_base_read_limits(c);
    opal_output_verbose(MCA_BASE_VERBOSE_COMPONENT, opal_na_base_output,
                        "na: \"%s\" opened by component %s%s", info, c->ops->name,
                        listen ? " (listening)" : "");
    *cls = c;
    c = NULL;
out:
    if (NULL != c) {
        free(c->protocol);
        free(c);
    }
    free(storage);
    if (OPAL_SUCCESS != rc) {
        (void) mca_base_framework_close(&opal_na_base_framework);
    }
    return rc;
}

void opal_na_base_read_limits(opal_na_class_t *cls)
{
    cls->max_unexpected_size = cls->ops->msg_get_max_unexpected_size(cls);
    cls->max_expected_size = cls->ops->msg_get_max_expected_size(cls);
    cls->max_tag = cls->ops->msg_get_max_tag(cls);
}

int opal_na_finalize(opal_na_class_t *cls)
{
    if (NULL == cls) {
        return OPAL_SUCCESS;
    }
    for (int id = 0; id < 256; ++id) {
        if (NULL != cls->contexts[id]) {
            opal_output(0,
                        "na: finalize of %s with context %d still open: destroy the "
                        "contexts first",
                        cls->protocol, id);
            return OPAL_ERR_RESOURCE_BUSY;
        }
    }
    int rc = cls->ops->finalize(cls);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    free(cls->protocol);
    free(cls);
    return mca_base_framework_close(&opal_na_base_framework);
}

int opal_na_cleanup(void)
{
    int rc = mca_base_framework_open(&opal_na_base_framework, 0);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    int removed = 0;
    mca_base_component_list_item_t *item;
    OPAL_LIST_FOREACH (item, &opal_na_base_framework.framework_components,
                       mca_base_component_list_item_t) {
        const opal_na_base_component_t *component =
            (const opal_na_base_component_t *) item->cli_component;
        if (!item->cli_opened || NULL == component->na_ops->cleanup) {
            continue;
        }
        int n = component->na_ops->cleanup();
        if (n < 0) {
            rc = n;
        } else {
            removed += n;
        }
    }
    (void) mca_base_framework_close(&opal_na_base_framework);
    return OPAL_SUCCESS == rc ? removed : rc;
}

const char *opal_na_get_class_name(const opal_na_class_t *cls)
{
    return cls->ops->name;
}

const char *opal_na_get_protocol(const opal_na_class_t *cls)
{
    return cls->protocol;
}

bool opal_na_is_listening(const opal_na_class_t *cls)
{
    return cls->listen;
}

bool opal_na_has_rma(const opal_na_class_t *cls)
{
    return NULL != cls->ops->put && NULL != cls->ops->get;
}

/* -------------------------------------------------------------- contexts */

int opal_na_context_create(opal_na_class_t *cls, uint8_t id, opal_na_context_t **ctx)
{
    if (NULL == cls || NULL == ctx) {
        return OPAL_ERR_BAD_PARAM;
    }
    *ctx = NULL;
    opal_na_context_t *c = calloc(1, sizeof(*c));
    if (NULL == c) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    c->na_class = cls;
    c->id = id;
    int rc = opal_na_base_cq_create(c);
    if (OPAL_SUCCESS != rc) {
        free(c);
        return rc;
    }
    pthread_mutex_lock(&contexts_lock);
    if (NULL != cls->contexts[id]) {
        pthread_mutex_unlock(&contexts_lock);
        opal_output(0, "na: %s already has a context with id %u", cls->protocol, id);
        (void) opal_na_base_cq_destroy(c);
        free(c);
        return OPAL_ERR_EXISTS;
    }
    rc = NULL == cls->ops->context_create ? OPAL_SUCCESS : cls->ops->context_create(cls, c);
    if (OPAL_SUCCESS == rc) {
        /* release: a component delivering on another thread sees the
         * context whole (pairs with its plain read after an acquire of
         * its own state; contexts are created before traffic for them). */
        atomic_thread_fence(memory_order_release);
        cls->contexts[id] = c;
    }
    pthread_mutex_unlock(&contexts_lock);
    if (OPAL_SUCCESS != rc) {
        (void) opal_na_base_cq_destroy(c);
        free(c);
        return rc;
    }
    *ctx = c;
    return OPAL_SUCCESS;
}

int opal_na_context_destroy(opal_na_class_t *cls, opal_na_context_t *ctx)
{
    if (NULL == cls || NULL == ctx || ctx->na_class != cls) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (opal_na_base_cq_pending(ctx)) {
        opal_output_verbose(1, opal_na_base_output,
                            "na: context %u of %s has completions not triggered yet", ctx->id,
                            cls->protocol);
        return OPAL_ERR_RESOURCE_BUSY;
    }
    pthread_mutex_lock(&contexts_lock);
    int rc = NULL == cls->ops->context_destroy ? OPAL_SUCCESS : cls->ops->context_destroy(cls, ctx);
    if (OPAL_SUCCESS == rc) {
        cls->contexts[ctx->id] = NULL;
    }
    pthread_mutex_unlock(&contexts_lock);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    (void) opal_na_base_cq_destroy(ctx);
    free(ctx);
    return OPAL_SUCCESS;
}

void opal_na_base_unknown_context(opal_na_class_t *cls, uint8_t id)
{
    if (0 == atomic_fetch_add_explicit(&cls->unknown_context_count, 1, memory_order_relaxed)) {
        opal_output(0,
                    "na: %s received a message for context %u, which this process does not "
                    "have: dropped (further ones are only counted)",
                    cls->protocol, id);
    }
}

/* ------------------------------------------------------------ operations */

opal_na_op_id_t *opal_na_op_create(opal_na_class_t *cls)
{
    if (NULL == cls) {
        return NULL;
    }
    size_t size =
        cls->ops->op_size < sizeof(opal_na_op_id_t) ? sizeof(opal_na_op_id_t) : cls->ops->op_size;
    opal_na_op_id_t *op = calloc(1, size);
    if (NULL == op) {
        return NULL;
    }
    atomic_init(&op->state, OPAL_NA_OP_IDLE);
    if (NULL != cls->ops->op_init && OPAL_SUCCESS != cls->ops->op_init(cls, op)) {
        free(op);
        return NULL;
    }
    return op;
}

void opal_na_base_op_release(opal_na_class_t *cls, opal_na_op_id_t *op)
{
    if (NULL != cls->ops->op_fini) {
        cls->ops->op_fini(cls, op);
    }
    free(op);
}

int opal_na_op_destroy(opal_na_class_t *cls, opal_na_op_id_t *op)
{
    if (NULL == op) {
        return OPAL_SUCCESS;
    }
    if (NULL == cls) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (OPAL_NA_OP_IDLE != atomic_load_explicit(&op->state, memory_order_acquire)) {
        opal_output(0, "na: destroying an operation id that is still in use (its callback has "
                       "not run)");
        return OPAL_ERR_RESOURCE_BUSY;
    }
    opal_na_base_op_release(cls, op);
    return OPAL_SUCCESS;
}

int opal_na_base_op_start(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_cb_type_t type,
                          opal_na_cb_t callback, void *arg, opal_na_op_id_t *op,
                          opal_na_op_id_t **out)
{
    if (NULL == ctx || ctx->na_class != cls) {
        opal_output(0, "na: operation on %s with a context of another class (or none)",
                    cls->protocol);
        return OPAL_ERR_BAD_PARAM;
    }
    bool transient = NULL == op;
    if (transient) {
        op = opal_na_op_create(cls);
        if (NULL == op) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    /* Acquire pairs with the trigger's release of IDLE. Only the id's
     * owner starts it, so a load and a store do (a compare-and-swap cost
     * a locked instruction on every operation): two threads starting one
     * id at once is a misuse this does not catch. COMPLETED while the
     * fields are written keeps a cancel (PENDING -> CANCELING) off; the
     * completer's claim (acq_rel) on the PENDING store below sees them. */
    if (OPAL_NA_OP_IDLE != atomic_load_explicit(&op->state, memory_order_acquire)) {
        opal_output(0, "na: an operation id was reused before its callback ran");
        return OPAL_ERR_RESOURCE_BUSY;
    }
    atomic_store_explicit(&op->state, OPAL_NA_OP_COMPLETED, memory_order_relaxed);
    op->cq_next = NULL;
    op->context = ctx;
    op->callback = callback;
    op->transient = transient;
    memset(&op->cb_info, 0, sizeof(op->cb_info));
    op->cb_info.arg = arg;
    op->cb_info.type = type;
    atomic_store_explicit(&op->state, OPAL_NA_OP_PENDING, memory_order_release);
    *out = op;
    return OPAL_SUCCESS;
}

void opal_na_base_op_abandon(opal_na_class_t *cls, opal_na_op_id_t *op)
{
    if (op->transient) {
        opal_na_base_op_release(cls, op);
        return;
    }
    atomic_store_explicit(&op->state, OPAL_NA_OP_IDLE, memory_order_release);
}
