/*
 * btl/self: the process sending to itself. A send is a direct upcall into
 * the receiver's active-message callback from inside the send; put and
 * get are memcpy (every address of the process is reachable, so no
 * registration is needed: the handle size is 0). Descriptors come from
 * two free lists, eager-sized and max-send-sized fragments, so that the
 * steady state allocates nothing.
 *
 * A callback that sends to itself again recurses: nothing is queued.
 */
#ifndef OPAL_MCA_BTL_SELF_BTL_SELF_H
#define OPAL_MCA_BTL_SELF_BTL_SELF_H

#include "opal/opal_config.h"

#include "opal/class/opal_free_list.h"
#include "opal/mca/btl/btl.h"

/* The one endpoint: this process. */
struct mca_btl_base_endpoint_t {
    opal_proc_t *proc;
};

/* A send descriptor with its one segment; the payload is the free-list
 * item's buffer. */
typedef struct mca_btl_self_frag_t {
    mca_btl_base_descriptor_t base;
    mca_btl_base_segment_t segment;
    /* The list it goes back to. */
    opal_free_list_t *list;
} mca_btl_self_frag_t;
OBJ_CLASS_DECLARATION(mca_btl_self_frag_t);

/* What the component holds while open (the component struct itself is
 * const, as the framework's static table declares it). */
typedef struct mca_btl_self_state_t {
    /* Fragments of btl_eager_limit and of btl_max_send_size bytes. */
    opal_free_list_t eager_frags;
    opal_free_list_t max_frags;
    /* Fragments each list allocates at first and per growth, and its
     * maximum (0: no limit): btl_self_free_list_{num,inc,max}. */
    int free_list_num;
    int free_list_inc;
    int free_list_max;
    mca_btl_base_module_error_cb_fn_t error_cb;
} mca_btl_self_state_t;

OPAL_DECLSPEC extern const mca_btl_base_component_t mca_btl_self_component;
extern mca_btl_self_state_t mca_btl_self;

/* The module (its limits are the standard variables' storage). */
extern mca_btl_base_module_t mca_btl_self_module;
extern struct mca_btl_base_endpoint_t mca_btl_self_endpoint;

/* Sets up the free lists for the module's limits (btl_init). */
int mca_btl_self_frag_lists_init(void);

/* A fragment with room for size bytes (<= btl_max_send_size), its
 * segment set to size; NULL when none can be had. */
mca_btl_self_frag_t *mca_btl_self_frag_get(size_t size);

/* Gives a fragment back to its list. */
static inline void mca_btl_self_frag_return(mca_btl_self_frag_t *frag)
{
    opal_free_list_return(frag->list, &frag->base.super);
}

#endif /* OPAL_MCA_BTL_SELF_BTL_SELF_H */
