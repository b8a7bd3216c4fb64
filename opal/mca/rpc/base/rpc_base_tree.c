/*
 * The rpc framework's tree shapes: the default shape and k (variables
 * rpc_base_tree and rpc_base_tree_k), and the lookup of a shape by name
 * among the components the framework opened.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <string.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/rpc/base/rpc_base_group.h"
#include "opal/mca/rpc/base/rpc_base_internal.h"
#include "opal/mca/rpc/rpc_tree.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

/* CaRT's collective default is a k-nomial tree; radix 4 keeps a 1,000
 * member group 5 hops deep with at most 15 children at the root. */
static char *tree_default_name = "knomial";
static unsigned int tree_default_k = 4;

int opal_rpc_base_tree_register(void)
{
    tree_default_name = "knomial";
    tree_default_k = 4;
    int index = mca_base_var_register(
        "opal", "rpc", "base", "tree",
        "Tree shape of collective RPCs that name none (a component of rpc: flat, kary, knomial)",
        MCA_BASE_VAR_TYPE_STRING, NULL, MCA_BASE_VAR_FLAG_NONE, OPAL_INFO_LVL_4,
        MCA_BASE_VAR_SCOPE_ALL, &tree_default_name);
    if (index < 0) {
        return index;
    }
    index = mca_base_var_register("opal", "rpc", "base", "tree_k",
                                  "Branching (kary) or radix (knomial) of collective RPCs that "
                                  "name none (2..64)",
                                  MCA_BASE_VAR_TYPE_UNSIGNED_INT, NULL, MCA_BASE_VAR_FLAG_NONE,
                                  OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_ALL, &tree_default_k);
    return index < 0 ? index : OPAL_SUCCESS;
}

int opal_rpc_tree_open(void)
{
    return mca_base_framework_open(&opal_rpc_base_framework, 0);
}

int opal_rpc_tree_close(void)
{
    return mca_base_framework_close(&opal_rpc_base_framework);
}

const opal_rpc_tree_ops_t *opal_rpc_tree_lookup(const char *name)
{
    char names[256] = "";
    size_t used = 0;
    if (NULL == name) {
        return NULL;
    }
    if (!mca_base_framework_is_open(&opal_rpc_base_framework)) {
        opal_output(0, "rpc: tree shape '%s' asked for while the rpc framework is not open", name);
        return NULL;
    }
    mca_base_component_list_item_t *cli;
    OPAL_LIST_FOREACH (cli, &opal_rpc_base_framework.framework_components,
                       mca_base_component_list_item_t) {
        const opal_rpc_tree_component_t *c = (const opal_rpc_tree_component_t *) cli->cli_component;
        if (0 == strcmp(c->super.rpc_version.mca_component_name, name)) {
            return c->tree;
        }
        if (used < sizeof(names)) {
            used +=
                (size_t) snprintf(names + used, sizeof(names) - used, "%s%s", 0 == used ? "" : ", ",
                                  c->super.rpc_version.mca_component_name);
        }
    }
    opal_output(0, "rpc: no tree shape '%s' (the rpc components here: %s)", name,
                0 == used ? "none" : names);
    return NULL;
}

const opal_rpc_tree_ops_t *opal_rpc_tree_default(uint32_t *k)
{
    const opal_rpc_tree_ops_t *tree = opal_rpc_tree_lookup(tree_default_name);
    *k = tree_default_k;
    if (NULL != tree && OPAL_SUCCESS != opal_rpc_tree_check(tree, *k)) {
        opal_output(0, "rpc: variable rpc_base_tree_k (%u) is out of range", *k);
        return NULL;
    }
    return tree;
}

int opal_rpc_tree_check(const opal_rpc_tree_ops_t *tree, uint32_t k)
{
    if (NULL == tree) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (0 == strcmp(tree->name, "flat")) {
        return OPAL_SUCCESS;
    }
    if (k < OPAL_RPC_TREE_K_MIN || k > OPAL_RPC_TREE_K_MAX) {
        opal_output(0, "rpc: tree shape %s: k = %u is out of range (%u..%u)", tree->name, k,
                    OPAL_RPC_TREE_K_MIN, OPAL_RPC_TREE_K_MAX);
        return OPAL_ERR_BAD_PARAM;
    }
    return OPAL_SUCCESS;
}

uint32_t opal_rpc_tree_depth(const opal_rpc_tree_ops_t *tree, uint32_t rank, uint32_t n, uint32_t k)
{
    uint32_t depth = 0;
    /* Bounded by n: a shape whose parents loop cannot hang the caller. */
    while (0 != rank && depth < n) {
        rank = tree->parent(rank, n, k);
        ++depth;
    }
    return depth;
}
