/*
 * The rpc base's groups, collective RPC and tree shapes, as the engine
 * (rpc_base_frame.c) calls them: registration of their variables, the
 * steps of opal_rpc_init / opal_rpc_finalize that concern them, and the
 * group structure corpc and the group file share.
 */
#ifndef OPAL_MCA_RPC_BASE_RPC_BASE_GROUP_H
#define OPAL_MCA_RPC_BASE_RPC_BASE_GROUP_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "opal/mca/rpc/rpc_group.h"
#include "opal/mca/rpc/rpc_swim.h"
#include "opal/mca/rpc/base/rpc_base_group_file.h"
#include "opal/threads/opal_mutex.h"

/* The modex keys each rank publishes at opal_rpc_init: its URI, and
 * "<pid> <host>" (what a group file records). */
#define OPAL_RPC_MODEX_URI  "opal.rpc.uri"
#define OPAL_RPC_MODEX_PROC "opal.rpc.proc"

typedef enum {
    RPC_GROUP_PRIMARY,  /* the job's ranks; addresses from the modex */
    RPC_GROUP_SUB,      /* primary ranks; endpoints are the primary's */
    RPC_GROUP_ATTACHED, /* from a group file; addresses from its URIs */
} rpc_group_kind_t;

struct opal_rpc_group_t {
    char name[OPAL_RPC_GROUP_NAME_MAX + 1];
    rpc_group_kind_t kind;
    uint32_t size;
    uint32_t self;                   /* this process's rank, or UINT32_MAX */
    uint32_t *primary_ranks;         /* SUB: rank i is primary rank [i] */
    struct opal_rpc_group_t *parent; /* SUB: the primary group */
    /* Under lock: states, version, the address cache. */
    opal_mutex_t lock;
    opal_rpc_member_state_t *state;
    uint64_t version;
    opal_na_addr_t **addrs;
    /* ATTACHED: what the file said of each rank. */
    char **uris;
    char **hosts;
    pid_t *pids;
    struct opal_rpc_group_t *next; /* the registry */
};

/* Registers a protocol of the engine's own (a reserved base), as
 * opal_rpc_proto_register does the users'. */
int opal_rpc_base_proto_add_reserved(const opal_rpc_proto_t *proto);

/* Hands sw a block it frees when it is destroyed (the endpoint argument
 * of a binding made for that SWIM alone: rpc_base_group_swim.c). */
void opal_rpc_swim_base_own(opal_rpc_swim_t *sw, void *owned);

/* Registers rpc_base_tree and rpc_base_tree_k (framework register). */
int opal_rpc_base_tree_register(void);

/* opal_rpc_init: the group registry, this rank's URI in the modex (in a
 * job), the corpc protocol. opal_rpc_finalize: every group destroyed. */
int opal_rpc_base_group_init(void);
void opal_rpc_base_group_fini(void);
int opal_rpc_base_corpc_init(void);
/* The self-test protocol (rpc_base_selftest.c): its variable, and its
 * registration at opal_rpc_init. */
int opal_rpc_base_selftest_register(void);
int opal_rpc_base_selftest_init(void);
void opal_rpc_base_corpc_fini(void);

opal_rpc_group_t *opal_rpc_base_group_alloc(const char *name, rpc_group_kind_t kind, uint32_t size);
void opal_rpc_base_group_release(opal_rpc_group_t *g);
/* Adds g to the registry; OPAL_ERR_EXISTS for a name in use. */
int opal_rpc_base_group_add(opal_rpc_group_t *g);
/* A primary rank's value for key (a NUL-terminated string), malloc'd. */
int opal_rpc_base_group_modex_uri(uint32_t rank, const char *key, char **text);

#endif /* OPAL_MCA_RPC_BASE_RPC_BASE_GROUP_H */
