/*
 * Measuring a tree shape (tree_sim.h): a breadth-first walk from the root
 * that checks the shape is a tree over 0..n-1 on the way.
 */
#include "opal/opal_config.h"

#include <stdlib.h>

#include "opal/util/opal_error.h"
#include "test/sim/tree_sim.h"

int tree_sim_measure(const tree_sim_shape_t *shape, uint32_t n, uint32_t k, tree_sim_result_t *r,
                     const char **why)
{
    if (0 == n) {
        *why = "an empty group";
        return OPAL_ERR_BAD_PARAM;
    }
    uint32_t *queue = malloc(sizeof(uint32_t) * n);
    uint32_t *level = malloc(sizeof(uint32_t) * n);
    uint32_t *kids = malloc(sizeof(uint32_t) * n);
    uint8_t *seen = calloc(n, 1);
    int rc = OPAL_SUCCESS;
    if (NULL == queue || NULL == level || NULL == kids || NULL == seen) {
        *why = "out of memory";
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    r->depth = 0;
    r->max_children = 0;
    r->root_children = shape->nchildren(0, n, k);
    r->root_messages = 2 * (uint64_t) r->root_children;
    uint32_t head = 0, tail = 0;
    queue[tail++] = 0;
    level[0] = 0;
    seen[0] = 1;
    while (head < tail) {
        uint32_t rank = queue[head++];
        uint32_t nk = shape->nchildren(rank, n, k);
        if (nk >= n) {
            *why = "a rank with more children than the group has ranks";
            rc = OPAL_ERR_BAD_PARAM;
            goto out;
        }
        shape->children(rank, n, k, kids);
        r->max_children = nk > r->max_children ? nk : r->max_children;
        for (uint32_t i = 0; i < nk; ++i) {
            uint32_t c = kids[i];
            if (c >= n || seen[c]) {
                *why = c >= n ? "a child out of the group" : "a rank reached twice";
                rc = OPAL_ERR_BAD_PARAM;
                goto out;
            }
            if (shape->parent(c, n, k) != rank) {
                *why = "a child whose parent is not the rank that names it";
                rc = OPAL_ERR_BAD_PARAM;
                goto out;
            }
            seen[c] = 1;
            level[c] = level[rank] + 1;
            r->depth = level[c] > r->depth ? level[c] : r->depth;
            queue[tail++] = c;
        }
    }
    if (tail != n) {
        *why = "a rank the root never reaches";
        rc = OPAL_ERR_BAD_PARAM;
    }
out:
    free(queue);
    free(level);
    free(kids);
    free(seen);
    return rc;
}
