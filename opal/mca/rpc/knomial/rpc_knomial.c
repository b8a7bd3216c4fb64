/*
 * rpc/knomial: the k-nomial tree (binomial for k = 2). Write a rank in
 * base k: its parent clears its lowest non-zero digit, and its children
 * set one digit below that one to 1 .. k-1 (the root may set any digit).
 * A rank's depth is its count of non-zero digits, so the tree is at most
 * ceil(log_k n) deep, and the root sends (k - 1) * log_k(n) messages;
 * the children are listed biggest subtree first, so the deepest branch
 * starts earliest.
 */
#include "opal/opal_config.h"

#include "opal/mca/rpc/rpc_tree.h"

/* The weight of rank's lowest non-zero base-k digit (k^position); for the
 * root, the first power of k not below n (every digit is free). */
static uint64_t lowest_digit(uint32_t rank, uint32_t n, uint32_t k)
{
    uint64_t p = 1;
    if (0 == rank) {
        while (p < n) {
            p *= k;
        }
        return p;
    }
    while (0 == (rank / p) % k) {
        p *= k;
    }
    return p;
}

static uint32_t knomial_nchildren(uint32_t rank, uint32_t n, uint32_t k)
{
    uint32_t count = 0;
    for (uint64_t p = lowest_digit(rank, n, k) / k; p >= 1; p /= k) {
        for (uint64_t j = 1; j < k && rank + j * p < n; ++j) {
            ++count;
        }
    }
    return count;
}

static void knomial_children(uint32_t rank, uint32_t n, uint32_t k, uint32_t *children)
{
    uint32_t count = 0;
    for (uint64_t p = lowest_digit(rank, n, k) / k; p >= 1; p /= k) {
        for (uint64_t j = 1; j < k && rank + j * p < n; ++j) {
            children[count++] = (uint32_t) (rank + j * p);
        }
    }
}

static uint32_t knomial_parent(uint32_t rank, uint32_t n, uint32_t k)
{
    if (0 == rank) {
        return OPAL_RPC_TREE_NONE;
    }
    uint64_t p = lowest_digit(rank, n, k);
    return (uint32_t) (rank - ((rank / p) % k) * p);
}

static const opal_rpc_tree_ops_t knomial_ops = {
    .name = "knomial",
    .nchildren = knomial_nchildren,
    .children = knomial_children,
    .parent = knomial_parent,
};

OPAL_DECLSPEC const opal_rpc_tree_component_t mca_rpc_knomial_component = {
    .super = {.rpc_version = {OPAL_RPC_BASE_VERSION, MCA_BASE_COMPONENT_NAME("knomial", 1, 0, 0)}},
    .tree = &knomial_ops,
};
