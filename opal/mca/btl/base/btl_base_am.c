/*
 * The active-message table: one callback per 8-bit tag, shared by every
 * module. Components read it on every received message without a lock
 * (mca_btl_base_am_dispatch): upper layers register their tags before
 * peers are added, so that nothing arrives for a tag while it changes.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>

#include "opal/mca/btl/base/base.h"
#include "opal/mca/btl/base/btl_base_internal.h"
#include "opal/threads/opal_atomic.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

mca_btl_base_am_entry_t mca_btl_base_am_table[256];

/* Messages that found no callback, per tag. Relaxed: a count read for
 * reports, ordering nothing. */
static opal_atomic_int64_t unclaimed[256];

int mca_btl_base_am_register(mca_btl_base_tag_t tag, mca_btl_base_am_fn_t cbfunc, void *cbdata)
{
    if (NULL == cbfunc) {
        return OPAL_ERR_BAD_PARAM;
    }
    mca_btl_base_am_entry_t *entry = &mca_btl_base_am_table[tag];
    if (NULL != entry->cbfunc) {
        return OPAL_ERR_EXISTS;
    }
    entry->cbdata = cbdata;
    entry->cbfunc = cbfunc;
    return OPAL_SUCCESS;
}

int mca_btl_base_am_deregister(mca_btl_base_tag_t tag)
{
    mca_btl_base_am_entry_t *entry = &mca_btl_base_am_table[tag];
    if (NULL == entry->cbfunc) {
        return OPAL_ERR_NOT_FOUND;
    }
    entry->cbfunc = NULL;
    entry->cbdata = NULL;
    return OPAL_SUCCESS;
}

void mca_btl_base_am_unclaimed(struct mca_btl_base_module_t *btl,
                               const mca_btl_base_receive_descriptor_t *desc)
{
    int64_t before = opal_atomic_fetch_add_64_relaxed(&unclaimed[desc->tag], 1);
    if (0 != before) {
        return;
    }
    const char *component = NULL != btl && NULL != btl->btl_component
                                ? btl->btl_component->btl_version.mca_component_name
                                : "?";
    size_t bytes = 0;
    for (size_t i = 0; i < desc->des_segment_count && NULL != desc->des_segments; ++i) {
        bytes += (size_t) desc->des_segments[i].seg_len;
    }
    if (NULL != desc->proc) {
        opal_output(mca_btl_base_err_stream(),
                    "a message with tag %u (%zu bytes) from rank %" PRIu32
                    " on %s arrived over %s, but no callback is registered for that tag: "
                    "dropped (later ones with this tag are only counted)",
                    (unsigned) desc->tag, bytes, desc->proc->proc_name.vpid,
                    NULL != desc->proc->proc_hostname ? desc->proc->proc_hostname : "?", component);
    } else {
        opal_output(mca_btl_base_err_stream(),
                    "a message with tag %u (%zu bytes) from an unknown sender arrived over %s, "
                    "but no callback is registered for that tag: dropped (later ones with this "
                    "tag are only counted)",
                    (unsigned) desc->tag, bytes, component);
    }
}

uint64_t mca_btl_base_am_unclaimed_count(mca_btl_base_tag_t tag)
{
    return (uint64_t) atomic_load_explicit(&unclaimed[tag], memory_order_relaxed);
}

void mca_btl_base_am_reset_unclaimed(void)
{
    for (size_t tag = 0; tag < 256; ++tag) {
        atomic_store_explicit(&unclaimed[tag], 0, memory_order_relaxed);
    }
}
