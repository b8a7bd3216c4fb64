/*
 * opal_interval_tree_t: half-open address ranges [low, high) in a
 * balanced (AVL) search tree ordered by low, each node also keeping the
 * largest high of its subtree, so that "which ranges contain this one"
 * and "which ranges overlap this one" skip every subtree that cannot
 * answer. Registration caches are built on it (opal_rcache.h).
 *
 *   opal_interval_tree_t t;
 *   OBJ_CONSTRUCT(&t, opal_interval_tree_t);
 *   my_reg->node.low = base; my_reg->node.high = base + len;
 *   opal_interval_tree_insert(&t, &my_reg->node);
 *   opal_interval_tree_node_t *n = opal_interval_tree_find_containing(&t, a, a + 8);
 *   opal_interval_tree_remove(&t, &my_reg->node);
 *
 * Nodes are intrusive: the caller embeds one in its own record and owns
 * the memory; the tree only links them. Ranges may repeat and overlap.
 * A node's low and high must not change while it is in a tree.
 * Not thread-safe: callers that share a tree lock around it.
 */
#ifndef OPAL_CLASS_OPAL_INTERVAL_TREE_H
#define OPAL_CLASS_OPAL_INTERVAL_TREE_H

#include "opal/opal_config.h"

#include <stddef.h>
#include <stdint.h>

#include "opal/class/opal_object.h"

typedef struct opal_interval_tree_node_t {
    uint64_t low;  /* first address of the range */
    uint64_t high; /* one past the last (high > low) */
    /* Maintained by the tree. */
    uint64_t subtree_high;
    struct opal_interval_tree_node_t *left;
    struct opal_interval_tree_node_t *right;
    int height;
} opal_interval_tree_node_t;

typedef struct opal_interval_tree_t {
    opal_object_t super;
    opal_interval_tree_node_t *root;
    size_t size;
} opal_interval_tree_t;
OBJ_CLASS_DECLARATION(opal_interval_tree_t);

/* Links node (its low and high set, high > low) into the tree.
 * OPAL_ERR_BAD_PARAM for an empty or inverted range. */
OPAL_DECLSPEC int opal_interval_tree_insert(opal_interval_tree_t *tree,
                                            opal_interval_tree_node_t *node);

/* Unlinks node. OPAL_ERR_NOT_FOUND when it is not in the tree. */
OPAL_DECLSPEC int opal_interval_tree_remove(opal_interval_tree_t *tree,
                                            opal_interval_tree_node_t *node);

/* A node whose range contains all of [low, high), or NULL. Of several,
 * the one with the smallest low (then the one inserted first among equal
 * lows is not promised). */
OPAL_DECLSPEC opal_interval_tree_node_t *
opal_interval_tree_find_containing(const opal_interval_tree_t *tree, uint64_t low, uint64_t high);

/* The node with the smallest low whose range overlaps [low, high), or
 * NULL. Removing what it returns and asking again walks every overlap. */
OPAL_DECLSPEC opal_interval_tree_node_t *
opal_interval_tree_first_overlap(const opal_interval_tree_t *tree, uint64_t low, uint64_t high);

/* Calls fn for every node overlapping [low, high), in order of low, until
 * fn returns nonzero (which is returned). fn must not change the tree.
 * Returns 0 when every overlap was visited. */
typedef int (*opal_interval_tree_visit_fn_t)(opal_interval_tree_node_t *node, void *ctx);
OPAL_DECLSPEC int opal_interval_tree_visit_overlaps(const opal_interval_tree_t *tree, uint64_t low,
                                                    uint64_t high, opal_interval_tree_visit_fn_t fn,
                                                    void *ctx);

/* Number of nodes in the tree. */
static inline size_t opal_interval_tree_size(const opal_interval_tree_t *tree)
{
    return tree->size;
}

/* Checks the tree's invariants (order, balance, subtree highs, size);
 * OPAL_SUCCESS or OPAL_ERROR. For tests. */
OPAL_DECLSPEC int opal_interval_tree_verify(const opal_interval_tree_t *tree);

#endif /* OPAL_CLASS_OPAL_INTERVAL_TREE_H */
