/*
 * rpc/flat: the root's children are every other rank; nobody else has
 * any. One hop, and the root sends and aggregates n - 1 messages: the
 * shape for small groups (k is ignored).
 */
#include "opal/opal_config.h"

#include "opal/mca/rpc/rpc_tree.h"

static uint32_t flat_nchildren(uint32_t rank, uint32_t n, uint32_t k)
{
    (void) k;
    return 0 == rank ? n - 1 : 0;
}

static void flat_children(uint32_t rank, uint32_t n, uint32_t k, uint32_t *children)
{
    (void) k;
    if (0 != rank) {
        return;
    }
    for (uint32_t r = 1; r < n; ++r) {
        children[r - 1] = r;
    }
}

static uint32_t flat_parent(uint32_t rank, uint32_t n, uint32_t k)
{
    (void) n;
    (void) k;
    return 0 == rank ? OPAL_RPC_TREE_NONE : 0;
}

static const opal_rpc_tree_ops_t flat_ops = {
    .name = "flat",
    .nchildren = flat_nchildren,
    .children = flat_children,
    .parent = flat_parent,
};

OPAL_DECLSPEC const opal_rpc_tree_component_t mca_rpc_flat_component = {
    .super = {.rpc_version = {OPAL_RPC_BASE_VERSION, MCA_BASE_COMPONENT_NAME("flat", 1, 0, 0)}},
    .tree = &flat_ops,
};
