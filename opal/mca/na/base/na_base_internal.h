/*
 * What the na base's files share and nothing else sees.
 */
#ifndef OPAL_MCA_NA_BASE_NA_BASE_INTERNAL_H
#define OPAL_MCA_NA_BASE_NA_BASE_INTERNAL_H

#include "opal/opal_config.h"

#include "opal/mca/na/base/base.h"

/* The completion queue of a context (na_base_cq.c). */
int opal_na_base_cq_create(opal_na_context_t *ctx);
/* OPAL_ERR_RESOURCE_BUSY while completions wait to be triggered. */
int opal_na_base_cq_destroy(opal_na_context_t *ctx);
/* True when ctx has completions to trigger. */
bool opal_na_base_cq_pending(const opal_na_context_t *ctx);

/* Checks op (NULL: a transient one is allocated) and moves it to PENDING
 * for an operation of type with callback and arg on ctx; *out is the op
 * to hand to the component. OPAL_ERR_RESOURCE_BUSY for an op in use. */
int opal_na_base_op_start(opal_na_class_t *cls, opal_na_context_t *ctx, opal_na_cb_type_t type,
                          opal_na_cb_t callback, void *arg, opal_na_op_id_t *op,
                          opal_na_op_id_t **out);
/* Undoes op_start after the component refused the operation. */
void opal_na_base_op_abandon(opal_na_class_t *cls, opal_na_op_id_t *op);
/* Frees an op id (transient ones after their callback). */
void opal_na_base_op_release(opal_na_class_t *cls, opal_na_op_id_t *op);

#endif /* OPAL_MCA_NA_BASE_NA_BASE_INTERNAL_H */
