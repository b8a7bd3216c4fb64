/*
 * The rpc base's groups, collective RPC and tree shapes, as the engine
 * (rpc_base_frame.c) calls them: registration of their variables, and the
 * steps of opal_rpc_init / opal_rpc_finalize that concern them.
 */
#ifndef OPAL_MCA_RPC_BASE_RPC_BASE_GROUP_H
#define OPAL_MCA_RPC_BASE_RPC_BASE_GROUP_H

#include "opal/opal_config.h"

/* Registers rpc_base_tree and rpc_base_tree_k (framework register). */
int opal_rpc_base_tree_register(void);

#endif /* OPAL_MCA_RPC_BASE_RPC_BASE_GROUP_H */
