/*
 * rpc tree shapes: the rpc framework's components (flat, kary, knomial),
 * as CaRT's crt_topo_ops. A shape is three pure functions of a rank
 * relative to the root (the root is 0, the others 1..n-1), the tree's size
 * n and its parameter k (kary: branching; knomial: radix; flat ignores
 * it). Collective RPC (rpc_group.h) forwards down the tree a request names
 * and aggregates back up it.
 *
 *   uint32_t k;
 *   const opal_rpc_tree_ops_t *t = opal_rpc_tree_default(&k);
 *   uint32_t kids[t->nchildren(r, n, k)];  t->children(r, n, k, kids);
 *
 * Lookups need the rpc framework open (opal_rpc_init, or
 * opal_rpc_tree_open for the shapes alone).
 */
#ifndef OPAL_MCA_RPC_RPC_TREE_H
#define OPAL_MCA_RPC_RPC_TREE_H

#include "opal/opal_config.h"

#include <stdint.h>

#include "opal/mca/rpc/rpc.h"

/* parent() of the root. */
#define OPAL_RPC_TREE_NONE UINT32_MAX
/* The range of k the shapes that use it accept (CaRT's ratio bounds). */
#define OPAL_RPC_TREE_K_MIN 2u
#define OPAL_RPC_TREE_K_MAX 64u

/* One shape. Each function is pure, callable from any thread, and needs
 * rank < n, n >= 1 and k in [OPAL_RPC_TREE_K_MIN, OPAL_RPC_TREE_K_MAX]
 * (opal_rpc_tree_check says whether a request's values are). */
typedef struct opal_rpc_tree_ops_t {
    /* The component's name ("knomial"). */
    const char *name;
    /* How many children rank has. */
    uint32_t (*nchildren)(uint32_t rank, uint32_t n, uint32_t k);
    /* Writes rank's children (nchildren of them) into children, in the
     * order a request is forwarded. */
    void (*children)(uint32_t rank, uint32_t n, uint32_t k, uint32_t *children);
    /* rank's parent; OPAL_RPC_TREE_NONE for the root. */
    uint32_t (*parent)(uint32_t rank, uint32_t n, uint32_t k);
} opal_rpc_tree_ops_t;

/* A tree shape component: the rpc framework's component with its table. */
typedef struct opal_rpc_tree_component_t {
    opal_rpc_base_component_t super;
    const opal_rpc_tree_ops_t *tree;
} opal_rpc_tree_component_t;

/* Opens the rpc framework for its shapes alone (reference counted, as
 * opal_rpc_init, which also opens it); opal_rpc_tree_close undoes it. */
OPAL_DECLSPEC int opal_rpc_tree_open(void);
OPAL_DECLSPEC int opal_rpc_tree_close(void);
/* The shape named name among the opened components, or NULL (with a
 * message listing the shapes there are) when there is none. */
OPAL_DECLSPEC const opal_rpc_tree_ops_t *opal_rpc_tree_lookup(const char *name);
/* The default shape (variable rpc_base_tree) and its k (rpc_base_tree_k),
 * or NULL when that shape is not there. */
OPAL_DECLSPEC const opal_rpc_tree_ops_t *opal_rpc_tree_default(uint32_t *k);
/* OPAL_SUCCESS when k is in range for shapes that use it, else
 * OPAL_ERR_BAD_PARAM with a message naming the shape and k. */
OPAL_DECLSPEC int opal_rpc_tree_check(const opal_rpc_tree_ops_t *tree, uint32_t k);
/* The depth of rank (the root's is 0), following parents. */
OPAL_DECLSPEC uint32_t opal_rpc_tree_depth(const opal_rpc_tree_ops_t *tree, uint32_t rank,
                                           uint32_t n, uint32_t k);

#endif /* OPAL_MCA_RPC_RPC_TREE_H */
