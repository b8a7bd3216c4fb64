/*
 * Fragments of btl/self: two free lists, eager-sized and max-sized, each
 * item carrying its payload buffer.
 */
#include "opal/opal_config.h"

#include "opal/mca/btl/self/btl_self.h"
#include "opal/util/opal_error.h"

static void frag_construct(mca_btl_self_frag_t *frag)
{
    frag->base.des_segments = &frag->segment;
    frag->base.des_segment_count = 1;
    frag->segment.seg_addr = NULL;
    frag->segment.seg_len = 0;
    frag->list = NULL;
}

OBJ_CLASS_INSTANCE(mca_btl_self_frag_t, mca_btl_base_descriptor_t, frag_construct, NULL);

static int init_list(opal_free_list_t *list, size_t payload)
{
    mca_btl_self_state_t *c = &mca_btl_self;
    return opal_free_list_init(list, sizeof(mca_btl_self_frag_t), OPAL_CACHE_LINE_SIZE,
                               OBJ_CLASS(mca_btl_self_frag_t), payload, OPAL_CACHE_LINE_SIZE,
                               (size_t) c->free_list_num, (size_t) c->free_list_max,
                               (size_t) c->free_list_inc, NULL, NULL, NULL);
}

int mca_btl_self_frag_lists_init(void)
{
    mca_btl_self_state_t *c = &mca_btl_self;
    /* Lists of empty payloads are refused: keep at least one byte. */
    size_t eager =
        mca_btl_self_module.btl_eager_limit > 0 ? mca_btl_self_module.btl_eager_limit : 1;
    int rc = init_list(&c->eager_frags, eager);
    if (OPAL_SUCCESS == rc) {
        rc = init_list(&c->max_frags, mca_btl_self_module.btl_max_send_size);
    }
    return rc;
}

mca_btl_self_frag_t *mca_btl_self_frag_get(size_t size)
{
    mca_btl_self_state_t *c = &mca_btl_self;
    opal_free_list_t *list;
    if (size <= mca_btl_self_module.btl_eager_limit) {
        list = &c->eager_frags;
    } else if (size <= mca_btl_self_module.btl_max_send_size) {
        list = &c->max_frags;
    } else {
        return NULL;
    }
    mca_btl_self_frag_t *frag = (mca_btl_self_frag_t *) opal_free_list_get(list);
    if (OPAL_UNLIKELY(NULL == frag)) {
        return NULL;
    }
    frag->list = list;
    frag->segment.seg_addr = frag->base.super.ptr;
    frag->segment.seg_len = size;
    frag->base.des_flags = 0;
    frag->base.des_cbfunc = NULL;
    frag->base.des_cbdata = NULL;
    frag->base.des_context = NULL;
    return frag;
}
