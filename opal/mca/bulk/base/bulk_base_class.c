/*
 * Bulk classes: opening the framework over a na class, the bulk service
 * context and its poll hook, and the pool of transfer operations.
 *
 * The service context (OPAL_NA_CONTEXT_ID_BULK) is where peers' copy
 * engine requests arrive. Nobody calls progress on it: the na class's
 * poll hook does, after every poll of any context of the class. The hook
 * runs on every poll of the user's loop, so when the service is idle it
 * only triggers (one atomic load when nothing is queued) and polls the
 * service context every SERVICE_IDLE_PERIOD rounds; a round with traffic
 * makes it poll every round again.
 */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "opal/mca/bulk/base/base.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_timer.h"

/* Rounds of the poll hook between polls of an idle service context. */
#define SERVICE_IDLE_PERIOD 16u

static void service_hook(opal_na_class_t *cls, void *arg)
{
    opal_bulk_class_t *bc = arg;
    /* Most rounds of a busy loop find nothing here: they count and leave
     * with plain loads and stores (the count may lose a round to a race;
     * it only paces the idle polls). The two locked instructions below
     * were about 40 cycles of every idle round of an RPC server. */
    uint32_t rounds = atomic_load_explicit(&bc->service_idle_rounds, memory_order_relaxed) + 1;
    if (rounds < SERVICE_IDLE_PERIOD && !opal_na_trigger_pending(bc->service_ctx)) {
        atomic_store_explicit(&bc->service_idle_rounds, rounds, memory_order_relaxed);
        return;
    }
    /* acquire: pairs with the release below, so the next thread in sees
     * what this one's trigger did. Another thread in the hook: skip. */
    if (atomic_flag_test_and_set_explicit(&bc->service_busy, memory_order_acquire)) {
        return;
    }
    unsigned int n = 0;
    if (rounds >= SERVICE_IDLE_PERIOD) {
        /* The component's poll directly: opal_na_poll would run this
         * hook again. */
        (void) cls->ops->poll(cls, bc->service_ctx, &n);
    }
    unsigned int ran = 0;
    (void) opal_na_trigger(bc->service_ctx, 0, &ran);
    if (n + ran > 0) {
        atomic_store_explicit(&bc->service_idle_rounds, SERVICE_IDLE_PERIOD, memory_order_relaxed);
    } else if (rounds >= SERVICE_IDLE_PERIOD) {
        atomic_store_explicit(&bc->service_idle_rounds, 0, memory_order_relaxed);
    }
    atomic_flag_clear_explicit(&bc->service_busy, memory_order_release);
}

static uint64_t random_instance(void)
{
    uint64_t x = opal_timer_ns() ^ ((uint64_t) getpid() << 32) ^ (uint64_t) (uintptr_t) &x;
    /* splitmix64's finalizer: spreads the bits of time and pid. */
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void class_free(opal_bulk_class_t *bc)
{
    while (NULL != bc->free_ops) {
        opal_bulk_op_t *op = bc->free_ops;
        bc->free_ops = op->next;
        if (NULL != op->engine_data && NULL != op->engine_data_owner->op_data_free) {
            for (int i = 0; i < bc->engine_count; ++i) {
                if (bc->engines[i] == op->engine_data_owner) {
                    op->engine_data_owner->op_data_free(bc, bc->engine_state[i], op->engine_data);
                }
            }
        }
        free(op);
    }
    /* The hook goes first: the engines' shutdown progresses the service
     * context itself, and nothing may trigger it once they are gone. */
    if (NULL != bc->service_ctx && bc->hook_installed) {
        (void) opal_na_base_poll_hook_set(bc->na_class, NULL, NULL);
    }
    if (bc->engines_ready) {
        opal_bulk_base_engines_close(bc);
    }
    if (NULL != bc->service_ctx) {
        int rc = opal_na_context_destroy(bc->na_class, bc->service_ctx);
        if (OPAL_SUCCESS != rc) {
            opal_output(0, "bulk: cannot destroy the bulk service context of %s: %s",
                        opal_na_get_protocol(bc->na_class), opal_strerror(rc));
        }
    }
    OBJ_DESTRUCT(&bc->handles);
    pthread_mutex_destroy(&bc->lock);
    free(bc);
}

int opal_bulk_init(opal_na_class_t *na_class, opal_bulk_class_t **out)
{
    if (NULL == na_class || NULL == out) {
        return OPAL_ERR_BAD_PARAM;
    }
    *out = NULL;
    int rc = mca_base_framework_open(&opal_bulk_base_framework, MCA_BASE_OPEN_DEFAULT);
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "bulk: cannot open the bulk framework: %s", opal_strerror(rc));
        return rc;
    }
    opal_bulk_class_t *bc = calloc(1, sizeof(*bc));
    if (NULL == bc) {
        (void) mca_base_framework_close(&opal_bulk_base_framework);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    bc->na_class = na_class;
    bc->instance = random_instance();
    bc->next_key = 1;
    atomic_init(&bc->pending, 0);
    atomic_init(&bc->service_idle_rounds, 0);
    atomic_flag_clear(&bc->service_busy);
    pthread_mutex_init(&bc->lock, NULL);
    OBJ_CONSTRUCT(&bc->handles, opal_hash_table_t);
    rc = opal_bulk_base_engines_open(bc);
    if (OPAL_SUCCESS != rc) {
        goto fail;
    }
    bool service = false;
    for (int i = 0; i < bc->engine_count; ++i) {
        service = service || bc->engines[i]->uses_service;
        bc->register_memory = bc->register_memory || bc->engines[i]->uses_rma;
    }
    if (service) {
        rc = opal_na_context_create(na_class, OPAL_NA_CONTEXT_ID_BULK, &bc->service_ctx);
        if (OPAL_SUCCESS != rc) {
            opal_output(0, "bulk: cannot create the bulk service context (id %u) of %s: %s",
                        OPAL_NA_CONTEXT_ID_BULK, opal_na_get_protocol(na_class), opal_strerror(rc));
            goto fail;
        }
        rc = opal_na_base_poll_hook_set(na_class, service_hook, bc);
        bc->hook_installed = OPAL_SUCCESS == rc;
        if (OPAL_SUCCESS != rc) {
            opal_output(0, "bulk: na class %s already has a bulk class (one per na class)",
                        opal_na_get_protocol(na_class));
            (void) opal_na_context_destroy(na_class, bc->service_ctx);
            bc->service_ctx = NULL;
            goto fail;
        }
    }
    /* Engines that cannot serve this class drop out; one must remain. */
    int kept = 0;
    for (int i = 0; i < bc->engine_count; ++i) {
        const opal_bulk_engine_t *e = bc->engines[i];
        void *state = NULL;
        int erc = NULL == e->class_init ? OPAL_SUCCESS : e->class_init(bc, &state);
        if (OPAL_SUCCESS != erc) {
            opal_output_verbose(MCA_BASE_VERBOSE_COMPONENT, opal_bulk_base_output,
                                "engine %s does not serve %s: %s", e->name,
                                opal_na_get_protocol(na_class), opal_strerror(erc));
            continue;
        }
        bc->engines[kept] = e;
        bc->engine_state[kept] = state;
        ++kept;
    }
    bc->engine_count = kept;
    bc->engines_ready = true;
    if (0 == kept) {
        opal_output(0, "bulk: no transfer engine could set itself up over %s",
                    opal_na_get_protocol(na_class));
        rc = OPAL_ERR_NOT_AVAILABLE;
        goto fail;
    }
    for (int i = 0; i < kept; ++i) {
        opal_output_verbose(MCA_BASE_VERBOSE_COMPONENT, opal_bulk_base_output,
                            "over %s, engine %s (priority %d)%s", opal_na_get_protocol(na_class),
                            bc->engines[i]->name, bc->engines[i]->priority,
                            bc->engines[i]->uses_service ? ", serving on context 255" : "");
    }
    *out = bc;
    return OPAL_SUCCESS;
fail:
    class_free(bc);
    (void) mca_base_framework_close(&opal_bulk_base_framework);
    return rc;
}

int opal_bulk_finalize(opal_bulk_class_t *bc)
{
    if (NULL == bc) {
        return OPAL_SUCCESS;
    }
    int32_t pending = atomic_load_explicit(&bc->pending, memory_order_acquire);
    if (pending > 0) {
        opal_output(0, "bulk: finalize of the bulk class over %s with %d transfer(s) pending",
                    opal_na_get_protocol(bc->na_class), (int) pending);
        return OPAL_ERR_RESOURCE_BUSY;
    }
    pthread_mutex_lock(&bc->lock);
    size_t handles = opal_hash_table_get_size(&bc->handles);
    pthread_mutex_unlock(&bc->lock);
    if (handles > 0) {
        /* Their memory handles belong to the na class: freeing them after
         * it closes would be a use after free. */
        opal_output(0,
                    "bulk: finalize of the bulk class over %s with %zu local handle(s) not "
                    "freed",
                    opal_na_get_protocol(bc->na_class), handles);
        return OPAL_ERR_RESOURCE_BUSY;
    }
    class_free(bc);
    return mca_base_framework_close(&opal_bulk_base_framework);
}

opal_na_class_t *opal_bulk_get_na_class(const opal_bulk_class_t *bc)
{
    return NULL == bc ? NULL : bc->na_class;
}

/* ------------------------------------------------------------ operations */

opal_bulk_op_t *opal_bulk_base_op_get(opal_bulk_class_t *bc)
{
    pthread_mutex_lock(&bc->lock);
    opal_bulk_op_t *op = bc->free_ops;
    if (NULL != op) {
        bc->free_ops = op->next;
    }
    pthread_mutex_unlock(&bc->lock);
    if (NULL == op) {
        op = calloc(1, sizeof(*op));
        if (NULL == op) {
            return NULL;
        }
        atomic_init(&op->super.state, OPAL_NA_OP_IDLE);
        op->bc = bc;
    }
    return op;
}

/* Drops what a finished op holds and gives it back to the pool. */
void opal_bulk_base_op_put(opal_bulk_op_t *op)
{
    opal_bulk_class_t *bc = op->bc;
    opal_na_addr_free(bc->na_class, op->origin_addr);
    op->origin_addr = NULL;
    (void) opal_bulk_free(op->origin);
    (void) opal_bulk_free(op->local);
    op->origin = op->local = NULL;
    pthread_mutex_lock(&bc->lock);
    op->next = bc->free_ops;
    bc->free_ops = op;
    pthread_mutex_unlock(&bc->lock);
}

/* Runs from opal_na_trigger on the transfer's na context. */
static void op_trampoline(const opal_na_cb_info_t *info)
{
    opal_bulk_op_t *op = info->arg;
    opal_bulk_class_t *bc = op->bc;
    opal_bulk_cb_info_t binfo = {
        .arg = op->arg, .ret = info->ret, .op = op->type, .size = op->size};
    opal_bulk_cb_t cb = op->callback;
    /* The op is given back before the callback so that the callback may
     * start another transfer with it; the engine name stays valid (a
     * static string). */
    opal_bulk_base_op_put(op);
    atomic_fetch_sub_explicit(&bc->pending, 1, memory_order_acq_rel);
    if (NULL != cb) {
        cb(&binfo);
    }
}

void opal_bulk_base_op_arm(opal_bulk_op_t *op)
{
    op->super.cq_next = NULL;
    op->super.context = op->na_ctx;
    op->super.callback = op_trampoline;
    op->super.transient = false;
    memset(&op->super.cb_info, 0, sizeof(op->super.cb_info));
    op->super.cb_info.arg = op;
    op->super.cb_info.type = OPAL_NA_CB_GET;
    /* release: whoever claims the op (acq_rel) sees the fields above. */
    atomic_store_explicit(&op->super.state, OPAL_NA_OP_PENDING, memory_order_release);
}

void opal_bulk_base_op_finish(opal_bulk_op_t *op, int ret)
{
    bool canceled = false;
    if (opal_na_base_op_claim(&op->super, &canceled)) {
        opal_na_base_op_complete(&op->super, canceled ? OPAL_ERR_CANCELED : ret);
    }
}

int opal_bulk_cancel(opal_bulk_op_t *op)
{
    if (NULL == op) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (!opal_na_base_op_cancel_mark(&op->super)) {
        return OPAL_SUCCESS; /* completed already, or canceled before */
    }
    opal_bulk_class_t *bc = op->bc;
    const opal_bulk_engine_t *e = op->engine;
    if (NULL == e) {
        return OPAL_SUCCESS; /* self / eager: completed inside the call */
    }
    for (int i = 0; i < bc->engine_count; ++i) {
        if (bc->engines[i] == e && NULL != e->cancel) {
            e->cancel(bc, bc->engine_state[i], op);
        }
    }
    return OPAL_SUCCESS;
}

const char *opal_bulk_op_engine(const opal_bulk_op_t *op)
{
    return NULL == op ? NULL : op->engine_name;
}
