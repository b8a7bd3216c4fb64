/*
 * The na framework base: the calls users and the upper layers make
 * (opal_na_*), and the helpers components use to complete operations.
 *
 *   opal_na_class_t *cls;
 *   opal_na_initialize("ofi+tcp", true, &cls);     opens the na framework
 *   opal_na_context_t *ctx;
 *   opal_na_context_create(cls, 0, &ctx);
 *   opal_na_op_id_t *op = opal_na_op_create(cls);
 *   opal_na_addr_lookup(cls, "ofi+tcp://127.0.0.1:40123", &peer);
 *   opal_na_msg_send_unexpected(cls, ctx, cb, arg, buf, n, NULL, peer, 0, tag, op);
 *   while (!done) { opal_na_poll_wait(cls, ctx, 100, NULL); opal_na_trigger(ctx, 0, NULL); }
 *   ... opal_na_op_destroy, opal_na_addr_free, opal_na_context_destroy ...
 *   opal_na_finalize(cls);
 *
 * Every call checks its arguments and returns OPAL_SUCCESS or a negative
 * OPAL_ERR_* after saying (at na_base_verbose 1 and up, or always for
 * what a user got wrong) what was wrong. Calls on a class go to its
 * component's ops table (na.h); optional entries fall back to the base.
 */
#ifndef OPAL_MCA_NA_BASE_BASE_H
#define OPAL_MCA_NA_BASE_BASE_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/na/na.h"
#include "opal/threads/opal_mutex.h"

OPAL_DECLSPEC extern mca_base_framework_t opal_na_base_framework;

/* na_base_verbose's stream. */
#define opal_na_base_output (opal_na_base_framework.framework_output)

/* na_base_wait_spin_us: how long opal_na_poll_wait polls before it sleeps
 * on the class's fd (a reply within that time costs no wake-up). */
OPAL_DECLSPEC extern unsigned int opal_na_base_wait_spin_us;

/* ----------------------------------------------------------------- class */

/* Opens the na framework (reference counted) and the class of the first
 * component that claims info ("btl", "ofi+tcp", "ofi+tcp://host:port");
 * listen: peers will look this process up. OPAL_ERR_NOT_FOUND, after
 * listing what every component accepts, when none claims info;
 * OPAL_ERR_BAD_PARAM for a malformed string. */
OPAL_DECLSPEC int opal_na_initialize(const char *info, bool listen, opal_na_class_t **cls);

/* The same with options (NULL: the defaults). */
OPAL_DECLSPEC int opal_na_initialize_opt(const char *info, bool listen,
                                         const opal_na_init_info_t *opts, opal_na_class_t **cls);

/* Closes cls (its contexts must be destroyed: OPAL_ERR_RESOURCE_BUSY
 * otherwise) and drops the framework reference. */
OPAL_DECLSPEC int opal_na_finalize(opal_na_class_t *cls);

/* Runs every component's cleanup (files left by processes that are gone);
 * returns how many things were removed, or an error. Opens and closes the
 * framework itself. */
OPAL_DECLSPEC int opal_na_cleanup(void);

/* "ofi", "btl": the class's component. */
OPAL_DECLSPEC const char *opal_na_get_class_name(const opal_na_class_t *cls);
/* "ofi+tcp", "btl": what the class's URIs start with. */
OPAL_DECLSPEC const char *opal_na_get_protocol(const opal_na_class_t *cls);
OPAL_DECLSPEC bool opal_na_is_listening(const opal_na_class_t *cls);
/* True when the class has put and get (else bulk uses its copy engine). */
OPAL_DECLSPEC bool opal_na_has_rma(const opal_na_class_t *cls);

/* Splits info into *parsed (strings in a malloc'd block *storage the
 * caller frees): "<class>[+<protocol>][://<host>]". OPAL_ERR_BAD_PARAM
 * naming what is wrong (empty, bad characters, empty protocol or host). */
OPAL_DECLSPEC int opal_na_info_parse(const char *info, opal_na_info_t *parsed, char **storage);

/* --------------------------------------------------------------- contexts */

/* A context with id (0..254; 255 is the bulk service's). OPAL_ERR_EXISTS
 * when cls has one with that id. */
OPAL_DECLSPEC int opal_na_context_create(opal_na_class_t *cls, uint8_t id, opal_na_context_t **ctx);
/* OPAL_ERR_RESOURCE_BUSY while operations are pending or completions
 * wait to be triggered. */
OPAL_DECLSPEC int opal_na_context_destroy(opal_na_class_t *cls, opal_na_context_t *ctx);

/* ------------------------------------------------------------ operations */

/* An operation id for cls, reused across operations; NULL when out of
 * memory. */
OPAL_DECLSPEC opal_na_op_id_t *opal_na_op_create(opal_na_class_t *cls);
/* Frees an idle op id (OPAL_ERR_RESOURCE_BUSY while it is in use). */
OPAL_DECLSPEC int opal_na_op_destroy(opal_na_class_t *cls, opal_na_op_id_t *op);

/* ------------------------------------------------------------- addresses */

/* uri: "<protocol>://<component part>" as opal_na_addr_to_string gave it
 * in a process of the same protocol. */
OPAL_DECLSPEC int opal_na_addr_lookup(opal_na_class_t *cls, const char *uri, opal_na_addr_t **addr);
OPAL_DECLSPEC int opal_na_addr_self(opal_na_class_t *cls, opal_na_addr_t **addr);
OPAL_DECLSPEC int opal_na_addr_dup(opal_na_class_t *cls, opal_na_addr_t *addr,
                                   opal_na_addr_t **new_addr);
/* NULL is accepted and ignored. */
OPAL_DECLSPEC void opal_na_addr_free(opal_na_class_t *cls, opal_na_addr_t *addr);
OPAL_DECLSPEC bool opal_na_addr_cmp(opal_na_class_t *cls, opal_na_addr_t *a, opal_na_addr_t *b);
OPAL_DECLSPEC bool opal_na_addr_is_self(opal_na_class_t *cls, opal_na_addr_t *addr);
/* The full URI ("<protocol>://..."): with buf NULL or too small, *size is
 * set to the bytes needed (NUL included) and OPAL_ERR_TRUNCATED returned. */
OPAL_DECLSPEC int opal_na_addr_to_string(opal_na_class_t *cls, char *buf, size_t *size,
                                         opal_na_addr_t *addr);
/* An address for messages: its URI in buf (cut to size - 1 bytes and
 * ending in "..." when longer), or fallback when addr is NULL or has no
 * URI. Returns buf, always NUL-terminated (size > 0). */
OPAL_DECLSPEC const char *opal_na_addr_name(opal_na_class_t *cls, opal_na_addr_t *addr, char *buf,
                                            size_t size, const char *fallback);
/* Serialized addresses carry a header naming the component and format
 * version, so that a blob of another component or version is refused with
 * a clear error (docs/na-bulk.md has the layout). */
OPAL_DECLSPEC size_t opal_na_addr_get_serialize_size(opal_na_class_t *cls, opal_na_addr_t *addr);
OPAL_DECLSPEC int opal_na_addr_serialize(opal_na_class_t *cls, void *buf, size_t size,
                                         opal_na_addr_t *addr);
OPAL_DECLSPEC int opal_na_addr_deserialize(opal_na_class_t *cls, opal_na_addr_t **addr,
                                           const void *buf, size_t size);

/* ---------------------------------------------------------------- limits */

OPAL_DECLSPEC size_t opal_na_msg_get_max_unexpected_size(const opal_na_class_t *cls);
OPAL_DECLSPEC size_t opal_na_msg_get_max_expected_size(const opal_na_class_t *cls);
OPAL_DECLSPEC opal_na_tag_t opal_na_msg_get_max_tag(const opal_na_class_t *cls);

/* --------------------------------------------------------------- messages */

/* A buffer for messages (see na.h); NULL when out of memory. */
OPAL_DECLSPEC void *opal_na_msg_buf_alloc(opal_na_class_t *cls, size_t size, void **plugin_data);
OPAL_DECLSPEC void opal_na_msg_buf_free(opal_na_class_t *cls, void *buf, void *plugin_data);

/* The message calls of na.h's contract, with the callback and its arg.
 * OPAL_ERR_BAD_PARAM (saying which limit) for a size above the class's
 * limit or a tag above its max tag; OPAL_ERR_RESOURCE_BUSY for an op id
 * still in use. */
OPAL_DECLSPEC int opal_na_msg_send_unexpected(opal_na_class_t *cls, opal_na_context_t *ctx,
                                              opal_na_cb_t callback, void *arg, const void *buf,
                                              size_t size, void *plugin_data, opal_na_addr_t *dest,
                                              uint8_t dest_id, opal_na_tag_t tag,
                                              opal_na_op_id_t *op);
/* Sends a small unexpected message only if the transport takes it at
 * once (na.h, msg_inject_unexpected): OPAL_SUCCESS, nothing to complete
 * and buf free again; OPAL_ERR_RESOURCE_BUSY or OPAL_ERR_NOT_SUPPORTED
 * (the component has no such call), nothing sent: use
 * opal_na_msg_send_unexpected. Checks as that call does. */
OPAL_DECLSPEC int opal_na_msg_inject_unexpected(opal_na_class_t *cls, opal_na_context_t *ctx,
                                                const void *buf, size_t size, opal_na_addr_t *dest,
                                                uint8_t dest_id, opal_na_tag_t tag);
OPAL_DECLSPEC int opal_na_msg_recv_unexpected(opal_na_class_t *cls, opal_na_context_t *ctx,
                                              opal_na_cb_t callback, void *arg, void *buf,
                                              size_t size, void *plugin_data, opal_na_op_id_t *op);
OPAL_DECLSPEC int opal_na_msg_send_expected(opal_na_class_t *cls, opal_na_context_t *ctx,
                                            opal_na_cb_t callback, void *arg, const void *buf,
                                            size_t size, void *plugin_data, opal_na_addr_t *dest,
                                            uint8_t dest_id, opal_na_tag_t tag,
                                            opal_na_op_id_t *op);
OPAL_DECLSPEC int opal_na_msg_recv_expected(opal_na_class_t *cls, opal_na_context_t *ctx,
                                            opal_na_cb_t callback, void *arg, void *buf,
                                            size_t size, void *plugin_data, opal_na_addr_t *source,
                                            uint8_t source_id, opal_na_tag_t tag,
                                            opal_na_op_id_t *op);

/* ---------------------------------------------------------- memory handles */

OPAL_DECLSPEC int opal_na_mem_handle_create(opal_na_class_t *cls, void *buf, size_t size,
                                            unsigned long flags, opal_na_mem_handle_t **mh);
OPAL_DECLSPEC int opal_na_mem_handle_create_segments(opal_na_class_t *cls,
                                                     const opal_na_segment_t *segments,
                                                     size_t count, unsigned long flags,
                                                     opal_na_mem_handle_t **mh);
OPAL_DECLSPEC size_t opal_na_mem_handle_get_max_segments(const opal_na_class_t *cls);
/* NULL is accepted and ignored. */
OPAL_DECLSPEC void opal_na_mem_handle_free(opal_na_class_t *cls, opal_na_mem_handle_t *mh);
OPAL_DECLSPEC size_t opal_na_mem_handle_get_size(opal_na_class_t *cls, opal_na_mem_handle_t *mh);
OPAL_DECLSPEC int opal_na_mem_register(opal_na_class_t *cls, opal_na_mem_handle_t *mh);
OPAL_DECLSPEC int opal_na_mem_deregister(opal_na_class_t *cls, opal_na_mem_handle_t *mh);
/* Serialized handles carry the same kind of header as addresses. */
OPAL_DECLSPEC size_t opal_na_mem_handle_get_serialize_size(opal_na_class_t *cls,
                                                           opal_na_mem_handle_t *mh);
OPAL_DECLSPEC int opal_na_mem_handle_serialize(opal_na_class_t *cls, void *buf, size_t size,
                                               opal_na_mem_handle_t *mh);
OPAL_DECLSPEC int opal_na_mem_handle_deserialize(opal_na_class_t *cls, opal_na_mem_handle_t **mh,
                                                 const void *buf, size_t size);

/* -------------------------------------------------------------------- RMA */

/* Copies length bytes from local_mh at local_offset to remote_mh at
 * remote_offset in remote_addr's memory (put), or the other way (get).
 * OPAL_ERR_NOT_SUPPORTED when the class has no RMA; OPAL_ERR_BAD_PARAM
 * for a range past either handle's end. */
OPAL_DECLSPEC int opal_na_put(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_cb_t callback,
                              void *arg, opal_na_mem_handle_t *local_mh, size_t local_offset,
                              opal_na_mem_handle_t *remote_mh, size_t remote_offset, size_t length,
                              opal_na_addr_t *remote_addr, uint8_t remote_id, opal_na_op_id_t *op);
OPAL_DECLSPEC int opal_na_get(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_cb_t callback,
                              void *arg, opal_na_mem_handle_t *local_mh, size_t local_offset,
                              opal_na_mem_handle_t *remote_mh, size_t remote_offset, size_t length,
                              opal_na_addr_t *remote_addr, uint8_t remote_id, opal_na_op_id_t *op);
/* The class's advice on the largest piece of a pipelined put / get to
 * remote_addr (na.h, rma_piece_max): SIZE_MAX for "do not cut", 0 for
 * none (also for a NULL class or address, or a class without RMA). */
OPAL_DECLSPEC size_t opal_na_rma_piece_max(opal_na_class_t *cls, opal_na_addr_t *remote_addr);

/* --------------------------------------------------------------- progress */

/* Progress without blocking; *count (may be NULL) gets the operations
 * completed. */
OPAL_DECLSPEC int opal_na_poll(opal_na_class_t *cls, opal_na_context_t *ctx, unsigned int *count);
/* Blocks up to timeout_ms for a completion (spins when the class was
 * opened busy_wait). OPAL_ERR_TIMEOUT when none came. */
OPAL_DECLSPEC int opal_na_poll_wait(opal_na_class_t *cls, opal_na_context_t *ctx,
                                    unsigned int timeout_ms, unsigned int *count);
/* -1 when the class has no fd. */
OPAL_DECLSPEC int opal_na_poll_get_fd(opal_na_class_t *cls, opal_na_context_t *ctx);
/* True when sleeping on the fd is safe now (nothing queued to trigger,
 * nothing only polling would find). */
OPAL_DECLSPEC bool opal_na_poll_try_wait(opal_na_class_t *cls, opal_na_context_t *ctx);
/* True when ctx has completions queued for opal_na_trigger (one relaxed
 * load: a check for idle loops). */
OPAL_DECLSPEC bool opal_na_trigger_pending(const opal_na_context_t *ctx);
/* Runs up to max (0: all) queued callbacks of ctx; *count (may be NULL)
 * gets how many ran. */
OPAL_DECLSPEC int opal_na_trigger(opal_na_context_t *ctx, unsigned int max, unsigned int *count);
/* Cancels a pending operation (see na.h). NULL or idle op: nothing. */
OPAL_DECLSPEC int opal_na_cancel(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_op_id_t *op);

/* ------------------------------------------------- for components only */

/* Completes op with ret: fills nothing else (the component set
 * op->cb_info.info before), queues op on its context. Call only after
 * winning opal_na_base_op_claim. Thread-safe. */
OPAL_DECLSPEC void opal_na_base_op_complete(opal_na_op_id_t *op, int ret);

/* The exactly-once guard: moves op from PENDING or CANCELING to COMPLETED
 * and returns true for the one caller that does; *canceled (may be NULL)
 * says it had been canceled (complete it with OPAL_ERR_CANCELED then). */
static inline bool opal_na_base_op_claim(opal_na_op_id_t *op, bool *canceled)
{
    uint32_t expected = OPAL_NA_OP_PENDING;
    /* acq_rel: the winner sees everything the starter and the canceler
     * wrote before their stores; pairs with the release in start / mark. */
    if (opal_thread_cas_u32(&op->state, &expected, OPAL_NA_OP_COMPLETED, memory_order_acq_rel,
                            memory_order_acquire)) {
        if (NULL != canceled) {
            *canceled = false;
        }
        return true;
    }
    if (OPAL_NA_OP_CANCELING == expected &&
        opal_thread_cas_u32(&op->state, &expected, OPAL_NA_OP_COMPLETED, memory_order_acq_rel,
                            memory_order_acquire)) {
        if (NULL != canceled) {
            *canceled = true;
        }
        return true;
    }
    return false;
}

/* Marks a pending op canceled (PENDING -> CANCELING); false when it had
 * completed or was marked already. The component then withdraws it and
 * claims it, or lets the transport's completion claim it. */
static inline bool opal_na_base_op_cancel_mark(opal_na_op_id_t *op)
{
    uint32_t expected = OPAL_NA_OP_PENDING;
    return opal_thread_cas_u32(&op->state, &expected, OPAL_NA_OP_CANCELING, memory_order_acq_rel,
                               memory_order_acquire);
}

/* A message the component received for a context that does not exist
 * (counted; the first per class is reported with the sender's context
 * id). */
OPAL_DECLSPEC void opal_na_base_unknown_context(opal_na_class_t *cls, uint8_t id);

/* Reads the component's limits into cls (max_unexpected_size,
 * max_expected_size, max_tag), once cls->plugin is set; the class's
 * opening does it, and whoever builds a class by hand (a test's fake
 * component) calls it too. */
OPAL_DECLSPEC void opal_na_base_read_limits(opal_na_class_t *cls);

/* The context of cls with id, or NULL. Components use it to deliver to
 * the right queue. */
static inline opal_na_context_t *opal_na_base_context_get(opal_na_class_t *cls, uint8_t id)
{
    return cls->contexts[id];
}

/* Installs the class's poll hook (one per class: the bulk framework's
 * service), run after each opal_na_poll and each wait round of
 * opal_na_poll_wait; hook NULL removes it. OPAL_ERR_EXISTS when another
 * hook is installed. The hook must cost next to nothing when it has
 * nothing to do: it runs on every poll. */
OPAL_DECLSPEC int opal_na_base_poll_hook_set(opal_na_class_t *cls,
                                             void (*hook)(opal_na_class_t *cls, void *arg),
                                             void *arg);

/* Installs the class's peer-gone hook (one per class: the rpc engine's),
 * hook NULL removes it; OPAL_ERR_EXISTS when another is installed. It is
 * called from progress (any thread that polls), no na lock held, when
 * the component learns that addr is gone for good: it failed (finalized
 * false) or it finalized (true); everything it sent before was delivered
 * first, and what of this class waited for it (expected receives from
 * it, sends and put / get to it) completed with OPAL_ERR_PEER_FAILED.
 * why says how in words. addr is valid for the call only (dup it to keep
 * it). na/btl says it over btl/sm and btl/tcp; na/ofi, whose providers do
 * not tell, does not: there only timeouts and the failure detector do. */
typedef void (*opal_na_peer_gone_fn_t)(opal_na_class_t *cls, opal_na_addr_t *addr, bool finalized,
                                       const char *why, void *arg);
OPAL_DECLSPEC int opal_na_base_peer_gone_hook_set(opal_na_class_t *cls, opal_na_peer_gone_fn_t hook,
                                                  void *arg);
/* Components: addr is gone (see above); calls the hook if there is one. */
OPAL_DECLSPEC void opal_na_base_peer_gone(opal_na_class_t *cls, opal_na_addr_t *addr,
                                          bool finalized, const char *why);

/* The components na knows, in the order they were opened, for tools
 * (opal_info) and the "no component claims" error. */
OPAL_DECLSPEC const char *opal_na_base_protocols_list(void);

#endif /* OPAL_MCA_NA_BASE_BASE_H */
