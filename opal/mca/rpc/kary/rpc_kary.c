/*
 * rpc/kary: a complete k-ary tree in breadth-first order: rank r's
 * children are r*k + 1 .. r*k + k (those below n), its parent (r - 1) / k.
 * Depth is about log_k(n); every inner rank sends k messages.
 */
#include "opal/opal_config.h"

#include "opal/mca/rpc/rpc_tree.h"

static uint32_t kary_nchildren(uint32_t rank, uint32_t n, uint32_t k)
{
    uint64_t first = (uint64_t) rank * k + 1;
    if (first >= n) {
        return 0;
    }
    uint64_t left = n - first;
    return left < k ? (uint32_t) left : k;
}

static void kary_children(uint32_t rank, uint32_t n, uint32_t k, uint32_t *children)
{
    uint32_t count = kary_nchildren(rank, n, k);
    for (uint32_t i = 0; i < count; ++i) {
        children[i] = rank * k + 1 + i;
    }
}

static uint32_t kary_parent(uint32_t rank, uint32_t n, uint32_t k)
{
    (void) n;
    return 0 == rank ? OPAL_RPC_TREE_NONE : (rank - 1) / k;
}

static const opal_rpc_tree_ops_t kary_ops = {
    .name = "kary",
    .nchildren = kary_nchildren,
    .children = kary_children,
    .parent = kary_parent,
};

OPAL_DECLSPEC const opal_rpc_tree_component_t mca_rpc_kary_component = {
    .super = {.rpc_version = {OPAL_RPC_BASE_VERSION, MCA_BASE_COMPONENT_NAME("kary", 1, 0, 0)}},
    .tree = &kary_ops,
};
