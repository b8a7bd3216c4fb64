/*
 * opal_interval_tree_t: an AVL tree keyed by (low, node address), the
 * address breaking ties so that equal ranges are distinct keys and remove
 * finds exactly the node it is given. Every node carries the largest high
 * of its subtree; a subtree whose largest high is <= a query's low holds
 * nothing that overlaps it. Recursion depth is the tree's height, at most
 * about 1.44 log2(n).
 */
#include "opal/class/opal_interval_tree.h"

#include <stdbool.h>

#include "opal/util/opal_error.h"

static void tree_construct(opal_interval_tree_t *tree)
{
    tree->root = NULL;
    tree->size = 0;
}

OBJ_CLASS_INSTANCE(opal_interval_tree_t, opal_object_t, tree_construct, NULL);

static int height(const opal_interval_tree_node_t *n)
{
    return n ? n->height : 0;
}

static void update(opal_interval_tree_node_t *n)
{
    int hl = height(n->left), hr = height(n->right);
    n->height = (hl > hr ? hl : hr) + 1;
    n->subtree_high = n->high;
    if (n->left && n->left->subtree_high > n->subtree_high) {
        n->subtree_high = n->left->subtree_high;
    }
    if (n->right && n->right->subtree_high > n->subtree_high) {
        n->subtree_high = n->right->subtree_high;
    }
}

static opal_interval_tree_node_t *rotate_right(opal_interval_tree_node_t *n)
{
    opal_interval_tree_node_t *l = n->left;
    n->left = l->right;
    l->right = n;
    update(n);
    update(l);
    return l;
}

static opal_interval_tree_node_t *rotate_left(opal_interval_tree_node_t *n)
{
    opal_interval_tree_node_t *r = n->right;
    n->right = r->left;
    r->left = n;
    update(n);
    update(r);
    return r;
}

static opal_interval_tree_node_t *rebalance(opal_interval_tree_node_t *n)
{
    update(n);
    int balance = height(n->left) - height(n->right);
    if (balance > 1) {
        if (height(n->left->left) < height(n->left->right)) {
            n->left = rotate_left(n->left);
        }
        return rotate_right(n);
    }
    if (balance < -1) {
        if (height(n->right->right) < height(n->right->left)) {
            n->right = rotate_right(n->right);
        }
        return rotate_left(n);
    }
    return n;
}

/* Negative when a sorts before b. */
static int key_cmp(const opal_interval_tree_node_t *a, const opal_interval_tree_node_t *b)
{
    if (a->low != b->low) {
        return a->low < b->low ? -1 : 1;
    }
    uintptr_t pa = (uintptr_t) a, pb = (uintptr_t) b;
    return pa < pb ? -1 : (pa > pb ? 1 : 0);
}

static opal_interval_tree_node_t *insert_at(opal_interval_tree_node_t *root,
                                            opal_interval_tree_node_t *node)
{
    if (NULL == root) {
        return node;
    }
    if (key_cmp(node, root) < 0) {
        root->left = insert_at(root->left, node);
    } else {
        root->right = insert_at(root->right, node);
    }
    return rebalance(root);
}

int opal_interval_tree_insert(opal_interval_tree_t *tree, opal_interval_tree_node_t *node)
{
    if (NULL == node || node->high <= node->low) {
        return OPAL_ERR_BAD_PARAM;
    }
    node->left = node->right = NULL;
    node->height = 1;
    node->subtree_high = node->high;
    tree->root = insert_at(tree->root, node);
    tree->size++;
    return OPAL_SUCCESS;
}

/* Unlinks the smallest node of root's subtree into *min. */
static opal_interval_tree_node_t *take_min(opal_interval_tree_node_t *root,
                                           opal_interval_tree_node_t **min)
{
    if (NULL == root->left) {
        *min = root;
        return root->right;
    }
    root->left = take_min(root->left, min);
    return rebalance(root);
}

static opal_interval_tree_node_t *remove_at(opal_interval_tree_node_t *root,
                                            opal_interval_tree_node_t *node, bool *found)
{
    if (NULL == root) {
        return NULL;
    }
    int c = key_cmp(node, root);
    if (c < 0) {
        root->left = remove_at(root->left, node, found);
    } else if (c > 0) {
        root->right = remove_at(root->right, node, found);
    } else {
        *found = true;
        if (NULL == root->left || NULL == root->right) {
            return root->left ? root->left : root->right;
        }
        opal_interval_tree_node_t *succ;
        opal_interval_tree_node_t *right = take_min(root->right, &succ);
        succ->left = root->left;
        succ->right = right;
        return rebalance(succ);
    }
    return rebalance(root);
}

int opal_interval_tree_remove(opal_interval_tree_t *tree, opal_interval_tree_node_t *node)
{
    bool found = false;
    if (NULL == node) {
        return OPAL_ERR_BAD_PARAM;
    }
    tree->root = remove_at(tree->root, node, &found);
    if (!found) {
        return OPAL_ERR_NOT_FOUND;
    }
    tree->size--;
    node->left = node->right = NULL;
    return OPAL_SUCCESS;
}

/* In-order search of the nodes overlapping [low, high) (or containing it,
 * when contain); the first match in order of low. */
static opal_interval_tree_node_t *search(opal_interval_tree_node_t *n, uint64_t low, uint64_t high,
                                         bool contain)
{
    /* Nothing below ends after low (contain: reaches high). */
    if (NULL == n || n->subtree_high <= low || (contain && n->subtree_high < high)) {
        return NULL;
    }
    opal_interval_tree_node_t *hit = search(n->left, low, high, contain);
    if (hit) {
        return hit;
    }
    if (contain ? (n->low <= low && high <= n->high) : (n->low < high && low < n->high)) {
        return n;
    }
    /* Everything to the right starts at n->low or later. */
    if (contain ? n->low > low : n->low >= high) {
        return NULL;
    }
    return search(n->right, low, high, contain);
}

opal_interval_tree_node_t *opal_interval_tree_find_containing(const opal_interval_tree_t *tree,
                                                              uint64_t low, uint64_t high)
{
    if (high <= low) {
        return NULL;
    }
    return search(tree->root, low, high, true);
}

opal_interval_tree_node_t *opal_interval_tree_first_overlap(const opal_interval_tree_t *tree,
                                                            uint64_t low, uint64_t high)
{
    if (high <= low) {
        return NULL;
    }
    return search(tree->root, low, high, false);
}

static int visit(opal_interval_tree_node_t *n, uint64_t low, uint64_t high,
                 opal_interval_tree_visit_fn_t fn, void *ctx)
{
    if (NULL == n || n->subtree_high <= low) {
        return 0;
    }
    int rc = visit(n->left, low, high, fn, ctx);
    if (rc) {
        return rc;
    }
    if (n->low >= high) {
        return 0;
    }
    if (low < n->high) {
        rc = fn(n, ctx);
        if (rc) {
            return rc;
        }
    }
    return visit(n->right, low, high, fn, ctx);
}

int opal_interval_tree_visit_overlaps(const opal_interval_tree_t *tree, uint64_t low, uint64_t high,
                                      opal_interval_tree_visit_fn_t fn, void *ctx)
{
    if (high <= low || NULL == fn) {
        return 0;
    }
    return visit(tree->root, low, high, fn, ctx);
}

/* Checks n's subtree against (lo, hi] bounds on the key; returns its node
 * count, or -1 when an invariant fails. */
static long verify_at(const opal_interval_tree_node_t *n, const opal_interval_tree_node_t *min,
                      const opal_interval_tree_node_t *max)
{
    if (NULL == n) {
        return 0;
    }
    if (n->high <= n->low || (min && key_cmp(n, min) <= 0) || (max && key_cmp(n, max) >= 0)) {
        return -1;
    }
    long l = verify_at(n->left, min, n), r = verify_at(n->right, n, max);
    if (l < 0 || r < 0) {
        return -1;
    }
    int hl = height(n->left), hr = height(n->right);
    uint64_t sh = n->high;
    if (n->left && n->left->subtree_high > sh) {
        sh = n->left->subtree_high;
    }
    if (n->right && n->right->subtree_high > sh) {
        sh = n->right->subtree_high;
    }
    if (hl - hr > 1 || hr - hl > 1 || n->height != (hl > hr ? hl : hr) + 1 ||
        n->subtree_high != sh) {
        return -1;
    }
    return l + r + 1;
}

int opal_interval_tree_verify(const opal_interval_tree_t *tree)
{
    long n = verify_at(tree->root, NULL, NULL);
    return (n >= 0 && (size_t) n == tree->size) ? OPAL_SUCCESS : OPAL_ERROR;
}
