/*
 * Tree shapes measured for the simulator's tables: depth, messages at the
 * root, the widest fan-out, for a group of n with parameter k. A shape is
 * given as the three functions of opal_rpc_tree_ops_t (rpc_tree.h; the
 * same signatures), so a component's table is passed field by field.
 */
#ifndef TEST_SIM_TREE_SIM_H
#define TEST_SIM_TREE_SIM_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct tree_sim_shape_t {
    const char *name;
    uint32_t (*nchildren)(uint32_t rank, uint32_t n, uint32_t k);
    void (*children)(uint32_t rank, uint32_t n, uint32_t k, uint32_t *children);
    uint32_t (*parent)(uint32_t rank, uint32_t n, uint32_t k);
} tree_sim_shape_t;

typedef struct tree_sim_result_t {
    uint32_t depth;         /* levels below the root */
    uint32_t root_children; /* the root's fan-out */
    uint64_t root_messages; /* a collective's messages at the root: out and back */
    uint32_t max_children;  /* the widest fan-out of any rank */
} tree_sim_result_t;

/* Walks the tree of shape for n ranks from the root (rank 0): OPAL_SUCCESS
 * with *r, or OPAL_ERR_BAD_PARAM with *why when the shape is not a tree
 * over 0..n-1 (a child out of range or reached twice, a child whose parent
 * is not the rank that names it, a rank never reached). */
int tree_sim_measure(const tree_sim_shape_t *shape, uint32_t n, uint32_t k, tree_sim_result_t *r,
                     const char **why);

#endif /* TEST_SIM_TREE_SIM_H */
