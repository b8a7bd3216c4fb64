/*
 * Messages and RMA: the wrappers check what the caller gave against the
 * class's limits, set the operation up, and hand it to the component.
 */
#include "opal/opal_config.h"

#include <stdint.h>
#include <stdlib.h>

#include "opal/mca/na/base/base.h"
#include "opal/mca/na/base/na_base_internal.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_timeline.h"

size_t opal_na_msg_get_max_unexpected_size(const opal_na_class_t *cls)
{
    return cls->max_unexpected_size;
}

size_t opal_na_msg_get_max_expected_size(const opal_na_class_t *cls)
{
    return cls->max_expected_size;
}

opal_na_tag_t opal_na_msg_get_max_tag(const opal_na_class_t *cls)
{
    return cls->max_tag;
}

void *opal_na_msg_buf_alloc(opal_na_class_t *cls, size_t size, void **plugin_data)
{
    if (NULL == cls || NULL == plugin_data) {
        return NULL;
    }
    *plugin_data = NULL;
    if (NULL != cls->ops->msg_buf_alloc) {
        return cls->ops->msg_buf_alloc(cls, size, plugin_data);
    }
    return malloc(0 == size ? 1 : size);
}

void opal_na_msg_buf_free(opal_na_class_t *cls, void *buf, void *plugin_data)
{
    if (NULL == cls || NULL == buf) {
        return;
    }
    if (NULL != cls->ops->msg_buf_free) {
        cls->ops->msg_buf_free(cls, buf, plugin_data);
    } else {
        free(buf);
    }
}

/* Refuses a size past limit or a tag past the max tag, naming which. */
static int check_msg(opal_na_class_t *cls, const void *buf, size_t size, size_t limit,
                     const char *kind, bool has_tag, opal_na_tag_t tag)
{
    if (NULL == buf && 0 != size) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (size > limit) {
        opal_output(0, "na: %s: %s message of %zu bytes is larger than the class's limit of %zu",
                    cls->protocol, kind, size, limit);
        return OPAL_ERR_BAD_PARAM;
    }
    if (has_tag) {
        opal_na_tag_t max = cls->max_tag;
        if (OPAL_UNLIKELY(tag > max)) {
            opal_output(0, "na: %s: tag %u is above the class's max tag %u", cls->protocol, tag,
                        max);
            return OPAL_ERR_BAD_PARAM;
        }
    }
    return OPAL_SUCCESS;
}

int opal_na_msg_send_unexpected(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_cb_t callback,
                                void *arg, const void *buf, size_t size, void *plugin_data,
                                opal_na_addr_t *dest, uint8_t dest_id, opal_na_tag_t tag,
                                opal_na_op_id_t *op)
{
    OPAL_TIMELINE(na_send);
    if (NULL == cls || NULL == dest) {
        return OPAL_ERR_BAD_PARAM;
    }
    int rc = check_msg(cls, buf, size, cls->max_unexpected_size, "unexpected", true, tag);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    opal_na_op_id_t *o;
    rc = opal_na_base_op_start(cls, ctx, OPAL_NA_CB_SEND_UNEXPECTED, callback, arg, op, &o);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = cls->ops->msg_send_unexpected(cls, ctx, buf, size, plugin_data, dest, dest_id, tag, o);
    if (OPAL_SUCCESS != rc) {
        opal_na_base_op_abandon(cls, o);
    }
    return rc;
}

int opal_na_msg_inject_unexpected(opal_na_class_t *cls, opal_na_context_t *ctx, const void *buf,
                                  size_t size, opal_na_addr_t *dest, uint8_t dest_id,
                                  opal_na_tag_t tag)
{
    OPAL_TIMELINE(na_send);
    if (NULL == cls || NULL == ctx || NULL == dest) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (NULL == cls->ops->msg_inject_unexpected) {
        return OPAL_ERR_NOT_SUPPORTED;
    }
    int rc = check_msg(cls, buf, size, cls->max_unexpected_size, "unexpected", true, tag);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    return cls->ops->msg_inject_unexpected(cls, ctx, buf, size, dest, dest_id, tag);
}

int opal_na_msg_recv_unexpected(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_cb_t callback,
                                void *arg, void *buf, size_t size, void *plugin_data,
                                opal_na_op_id_t *op)
{
    if (NULL == cls || (NULL == buf && 0 != size)) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_na_op_id_t *o;
    int rc = opal_na_base_op_start(cls, ctx, OPAL_NA_CB_RECV_UNEXPECTED, callback, arg, op, &o);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = cls->ops->msg_recv_unexpected(cls, ctx, buf, size, plugin_data, o);
    if (OPAL_SUCCESS != rc) {
        opal_na_base_op_abandon(cls, o);
    }
    return rc;
}

int opal_na_msg_send_expected(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_cb_t callback,
                              void *arg, const void *buf, size_t size, void *plugin_data,
                              opal_na_addr_t *dest, uint8_t dest_id, opal_na_tag_t tag,
                              opal_na_op_id_t *op)
{
    OPAL_TIMELINE(na_send);
    if (NULL == cls || NULL == dest) {
        return OPAL_ERR_BAD_PARAM;
    }
    int rc = check_msg(cls, buf, size, cls->max_expected_size, "expected", true, tag);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    opal_na_op_id_t *o;
    rc = opal_na_base_op_start(cls, ctx, OPAL_NA_CB_SEND_EXPECTED, callback, arg, op, &o);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = cls->ops->msg_send_expected(cls, ctx, buf, size, plugin_data, dest, dest_id, tag, o);
    if (OPAL_SUCCESS != rc) {
        opal_na_base_op_abandon(cls, o);
    }
    return rc;
}

int opal_na_msg_recv_expected(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_cb_t callback,
                              void *arg, void *buf, size_t size, void *plugin_data,
                              opal_na_addr_t *source, uint8_t source_id, opal_na_tag_t tag,
                              opal_na_op_id_t *op)
{
    if (NULL == cls || NULL == source) {
        return OPAL_ERR_BAD_PARAM;
    }
    /* Any receive size: a larger message completes as truncated. */
    int rc = check_msg(cls, buf, size, SIZE_MAX, "expected", true, tag);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    opal_na_op_id_t *o;
    rc = opal_na_base_op_start(cls, ctx, OPAL_NA_CB_RECV_EXPECTED, callback, arg, op, &o);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = cls->ops->msg_recv_expected(cls, ctx, buf, size, plugin_data, source, source_id, tag, o);
    if (OPAL_SUCCESS != rc) {
        opal_na_base_op_abandon(cls, o);
    }
    return rc;
}

/* Checks an RMA range against both handles. */
static int check_rma(opal_na_class_t *cls, const char *kind, opal_na_mem_handle_t *local_mh,
                     size_t local_offset, opal_na_mem_handle_t *remote_mh, size_t remote_offset,
                     size_t length)
{
    if (NULL == local_mh || NULL == remote_mh) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (NULL == cls->ops->put || NULL == cls->ops->get) {
        opal_output(0, "na: %s is not supported by %s (no RMA: use bulk's copy engine)", kind,
                    cls->ops->name);
        return OPAL_ERR_NOT_SUPPORTED;
    }
    size_t lsize = cls->ops->mem_handle_get_size(cls, local_mh);
    size_t rsize = cls->ops->mem_handle_get_size(cls, remote_mh);
    if (local_offset > lsize || length > lsize - local_offset) {
        opal_output(0,
                    "na: %s of %zu bytes at local offset %zu is past the local handle's %zu "
                    "bytes",
                    kind, length, local_offset, lsize);
        return OPAL_ERR_BAD_PARAM;
    }
    if (remote_offset > rsize || length > rsize - remote_offset) {
        opal_output(0,
                    "na: %s of %zu bytes at remote offset %zu is past the remote handle's "
                    "%zu bytes",
                    kind, length, remote_offset, rsize);
        return OPAL_ERR_BAD_PARAM;
    }
    return OPAL_SUCCESS;
}

int opal_na_put(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_cb_t callback, void *arg,
                opal_na_mem_handle_t *local_mh, size_t local_offset,
                opal_na_mem_handle_t *remote_mh, size_t remote_offset, size_t length,
                opal_na_addr_t *remote_addr, uint8_t remote_id, opal_na_op_id_t *op)
{
    if (NULL == cls || NULL == remote_addr) {
        return OPAL_ERR_BAD_PARAM;
    }
    int rc = check_rma(cls, "put", local_mh, local_offset, remote_mh, remote_offset, length);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    opal_na_op_id_t *o;
    rc = opal_na_base_op_start(cls, ctx, OPAL_NA_CB_PUT, callback, arg, op, &o);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = cls->ops->put(cls, ctx, local_mh, local_offset, remote_mh, remote_offset, length,
                       remote_addr, remote_id, o);
    if (OPAL_SUCCESS != rc) {
        opal_na_base_op_abandon(cls, o);
    }
    return rc;
}

size_t opal_na_rma_piece_max(opal_na_class_t *cls, opal_na_addr_t *remote_addr)
{
    if (NULL == cls || NULL == remote_addr || NULL == cls->ops->rma_piece_max) {
        return 0;
    }
    return cls->ops->rma_piece_max(cls, remote_addr);
}

int opal_na_get(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_cb_t callback, void *arg,
                opal_na_mem_handle_t *local_mh, size_t local_offset,
                opal_na_mem_handle_t *remote_mh, size_t remote_offset, size_t length,
                opal_na_addr_t *remote_addr, uint8_t remote_id, opal_na_op_id_t *op)
{
    if (NULL == cls || NULL == remote_addr) {
        return OPAL_ERR_BAD_PARAM;
    }
    int rc = check_rma(cls, "get", local_mh, local_offset, remote_mh, remote_offset, length);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    opal_na_op_id_t *o;
    rc = opal_na_base_op_start(cls, ctx, OPAL_NA_CB_GET, callback, arg, op, &o);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = cls->ops->get(cls, ctx, local_mh, local_offset, remote_mh, remote_offset, length,
                       remote_addr, remote_id, o);
    if (OPAL_SUCCESS != rc) {
        opal_na_base_op_abandon(cls, o);
    }
    return rc;
}
