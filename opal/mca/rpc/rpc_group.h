/*
 * rpc groups and collective RPC (DAOS CaRT's crt_group and corpc).
 *
 * Groups. The primary group is the job's ranks (started by mcarun or a
 * PMIx launcher, through orte): opal_rpc_init publishes each rank's RPC
 * URI in the modex, and a rank's address is looked up from it the first
 * time something is sent there. A subgroup is a list of primary ranks,
 * created locally under a name by each process that uses it, or by one of
 * its members for all of them (opal_rpc_group_create_collective); corpc
 * finds it at the receivers by that name. Each member has a state (alive,
 * suspect, dead) and each group a membership version that increases on
 * every change (a failure detector calls opal_rpc_group_member_set_state).
 * A group saves its members' URIs to a file (CaRT's group config file,
 * the format is in docs/rpc.md); a process outside the job attaches to the
 * group from it and sends to (group, rank, context).
 *
 *   opal_rpc_group_t *g;  opal_rpc_group_primary(&g);
 *   opal_rpc_endpoint_t ep;  opal_rpc_group_endpoint(g, 3, 0, &ep);
 *   opal_rpc_req_create(ctx, &ep, opcode, &req);  ...as any request
 *
 * Collective RPC. A corpc runs an operation's handler on every member of
 * a group (but the excluded ranks and the members known dead), forwarded
 * down a tree rooted at the sender (rpc_tree.h); the outputs are merged on
 * the way up by the aggregation callback registered for the opcode, and
 * the root's completion has the aggregate and the ranks that failed (dead,
 * timed out, or refused), whose outputs are not in it.
 *
 *   opal_rpc_corpc_register(opcode, sum_aggregate, NULL);    every member
 *   opal_rpc_corpc_t *co;
 *   opal_rpc_corpc_create(ctx, g, opcode, &opts, &co);       opts: NULL ok
 *   my_in_t *in = opal_rpc_corpc_input(co); ...
 *   opal_rpc_corpc_send(co, done, arg);
 *   done(co, status, arg): my_out_t *out = opal_rpc_corpc_output(co);
 *       opal_rpc_corpc_failed(co, &ranks); ... opal_rpc_corpc_free(co);
 *
 * A BULK field of the input reaches every member as the root serialized
 * it: the root binds the handle (opal_rpc_bulk_bind) so that each member
 * pulls from the root itself, not from its tree parent. Outputs and
 * aggregates larger than the eager size go up by bulk like any reply.
 *
 * Threads: groups may be used from any thread (each has a lock). A corpc
 * belongs to its context: its callbacks run from that context's progress.
 */
#ifndef OPAL_MCA_RPC_RPC_GROUP_H
#define OPAL_MCA_RPC_RPC_GROUP_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stdint.h>

#include "opal/mca/rpc/rpc.h"
#include "opal/mca/rpc/rpc_swim.h"

typedef struct opal_rpc_group_t opal_rpc_group_t;

/* The longest group name (CaRT's is 63 characters too). */
#define OPAL_RPC_GROUP_NAME_MAX 63
/* The primary group's name. */
#define OPAL_RPC_GROUP_PRIMARY "primary"

typedef enum {
    OPAL_RPC_MEMBER_ALIVE = 0,
    OPAL_RPC_MEMBER_SUSPECT = 1, /* still a member: corpc includes it */
    OPAL_RPC_MEMBER_DEAD = 2,    /* corpc skips it and reports it failed */
} opal_rpc_member_state_t;

/* ------------------------------------------------------------- groups */

/* The primary group (the job's ranks; created at the first call, owned by
 * the engine until opal_rpc_finalize). OPAL_ERR_NOT_AVAILABLE outside a
 * job or without a network (opal_rpc_init(NULL, ...)). */
OPAL_DECLSPEC int opal_rpc_group_primary(opal_rpc_group_t **group);
/* A subgroup named name of the primary ranks ranks[0..count) (copied; its
 * rank i is primary rank ranks[i]). OPAL_ERR_EXISTS for a name in use,
 * OPAL_ERR_BAD_PARAM (with a message) for a rank outside the job, a rank
 * twice, no ranks or a bad name. */
OPAL_DECLSPEC int opal_rpc_group_create(const char *name, const uint32_t *ranks, uint32_t count,
                                        opal_rpc_group_t **group);
/* The completion of a collective creation: once, from ctx's progress.
 * status OPAL_SUCCESS: every member created the subgroup (group is the
 * caller's own). Otherwise group is NULL, the subgroup was destroyed again
 * wherever it had been created, and failed[0..nfailed) (primary ranks,
 * valid during the call) are the members that could not take part:
 * OPAL_ERR_EXISTS when some had the name in use, OPAL_ERR_PEER_FAILED when
 * some were dead, timed out or refused. */
typedef void (*opal_rpc_group_create_cb_t)(opal_rpc_group_t *group, int status,
                                           const uint32_t *failed, uint32_t nfailed, void *arg);
/* A subgroup created at all its members by one call at one of them
 * (CaRT's crt_group_create with populate): a corpc over ranks[0..count)
 * (tree and time: the rpc_base_tree* and rpc_base_timeout variables)
 * creates it under name at each, with the same version, or at none. A
 * member knows it from its own part on, the others maybe not yet: it is
 * complete everywhere when cb runs (a corpc over it from another member
 * waits for the caller's word). The caller must be one of the ranks. OPAL_ERR_EXISTS when the name
 * is in use here, OPAL_ERR_BAD_PARAM (with a message) as opal_rpc_group_create; cb runs once unless
 * this returns an error. */
OPAL_DECLSPEC int opal_rpc_group_create_collective(opal_rpc_context_t *ctx, const char *name,
                                                   const uint32_t *ranks, uint32_t count,
                                                   opal_rpc_group_create_cb_t cb, void *arg);
/* Destroys a subgroup or an attached group (the primary group goes with
 * opal_rpc_finalize). Endpoints it gave become invalid. */
OPAL_DECLSPEC int opal_rpc_group_destroy(opal_rpc_group_t *group);
/* The group of that name known here, or NULL. */
OPAL_DECLSPEC opal_rpc_group_t *opal_rpc_group_lookup(const char *name);

OPAL_DECLSPEC const char *opal_rpc_group_name(const opal_rpc_group_t *group);
OPAL_DECLSPEC uint32_t opal_rpc_group_size(const opal_rpc_group_t *group);
/* This process's rank in group; OPAL_ERR_NOT_FOUND when not a member. */
OPAL_DECLSPEC int opal_rpc_group_rank(const opal_rpc_group_t *group, uint32_t *rank);
/* The membership version: increases on every change of a member's state. */
OPAL_DECLSPEC uint64_t opal_rpc_group_version(opal_rpc_group_t *group);

/* Sets rank's state (the failure detector's call); the version increases
 * when the state changes. In the primary group it also applies to every
 * subgroup holding that rank. OPAL_ERR_BAD_PARAM for a rank out of range
 * or an unknown state. */
OPAL_DECLSPEC int opal_rpc_group_member_set_state(opal_rpc_group_t *group, uint32_t rank,
                                                  opal_rpc_member_state_t state);
OPAL_DECLSPEC int opal_rpc_group_member_state(opal_rpc_group_t *group, uint32_t rank,
                                              opal_rpc_member_state_t *state);

/* Where (group, rank, ctx_idx) is: fills ep for opal_rpc_req_create. The
 * address is the group's (looked up on first use, from the modex or the
 * group file) and stays valid until the group is destroyed; this process's
 * own rank gives the loopback (NULL address). OPAL_ERR_BAD_PARAM for a rank
 * out of range, or the lookup's error (with a message naming the rank). */
OPAL_DECLSPEC int opal_rpc_group_endpoint(opal_rpc_group_t *group, uint32_t rank, uint8_t ctx_idx,
                                          opal_rpc_endpoint_t *ep);

/* Writes the group's members (rank, pid, host, URI) to path, replacing it
 * atomically (a temporary file renamed). A member of the group calls it;
 * the URIs of the other members come from the modex. */
OPAL_DECLSPEC int opal_rpc_group_save(opal_rpc_group_t *group, const char *path);
/* A group from the file path saved (named as the file says; destroy it
 * with opal_rpc_group_destroy). A malformed file, or a stale one (saved
 * by a job whose processes are all gone), is OPAL_ERR_PARSE or
 * OPAL_ERR_NOT_FOUND with a message naming the file and the line. */
OPAL_DECLSPEC int opal_rpc_group_attach(const char *path, opal_rpc_group_t **group);

/* Runs SWIM (rpc_swim.h) over group's members on ctx: this process must be
 * a member; each member's endpoint is the group's on ctx's index, and each
 * event SWIM reports sets the member's state in group (so the version
 * increases and corpc skips the dead). p: NULL for the rpc_swim_*
 * variables. Progress it with opal_rpc_swim_progress; destroy it with
 * opal_rpc_swim_destroy before the group. OPAL_ERR_NOT_FOUND when this
 * process is not a member. */
OPAL_DECLSPEC int opal_rpc_group_swim_create(opal_rpc_context_t *ctx, opal_rpc_group_t *group,
                                             const opal_swim_params_t *p, opal_rpc_swim_t **swim);

/* ------------------------------------------------------ collective RPC */

/* Merges child_out (a child subtree's aggregate) into out (this member's
 * aggregate so far), both the opcode's output struct. out owns its memory
 * as a decoded struct (the codec's free releases it), so what it grows
 * must be malloc'd. Runs from the progress of the context the corpc came
 * to; must not block. A negative return marks the child's subtree failed. */
typedef int (*opal_rpc_corpc_aggregate_t)(void *out, const void *child_out, void *arg);

/* Makes opcode (registered with opal_rpc_proto_register, with an output
 * codec) usable by corpc here, with its aggregation. Every member must do
 * it; a member without it refuses the corpc (its subtree is failed).
 * OPAL_ERR_NOT_FOUND for an opcode not registered. */
OPAL_DECLSPEC int opal_rpc_corpc_register(uint32_t opcode, opal_rpc_corpc_aggregate_t aggregate,
                                          void *arg);

/* A corpc's options; zeroed (or NULL) takes the defaults. */
typedef struct opal_rpc_corpc_opts_t {
    /* Tree shape by name (NULL: rpc_base_tree) and its k (0: rpc_base_tree_k). */
    const char *tree;
    uint32_t k;
    /* Group ranks that do not take part (the root may not be one). */
    const uint32_t *excluded;
    uint32_t excluded_count;
    /* Seconds the whole collective may take (0: rpc_base_timeout); each
     * level of the tree gets its share, so a dead or hung member is
     * reported failed before its parent's own time runs out. */
    double timeout;
} opal_rpc_corpc_opts_t;

typedef struct opal_rpc_corpc_t opal_rpc_corpc_t;

/* The root's completion: once, from ctx's progress (or from
 * opal_rpc_corpc_send itself when nothing at all could be started). status is
 * OPAL_SUCCESS when every member's output is in the aggregate, or
 * OPAL_ERR_PEER_FAILED when some failed (opal_rpc_corpc_failed names them;
 * the aggregate holds the others'), or an error that stopped the corpc. */
typedef void (*opal_rpc_corpc_cb_t)(opal_rpc_corpc_t *co, int status, void *arg);

/* A corpc of opcode over group, rooted at this process (a member), input
 * zeroed. OPAL_ERR_NOT_FOUND for an opcode not registered for corpc,
 * OPAL_ERR_BAD_PARAM (with a message) for a bad shape, k or exclusion. */
OPAL_DECLSPEC int opal_rpc_corpc_create(opal_rpc_context_t *ctx, opal_rpc_group_t *group,
                                        uint32_t opcode, const opal_rpc_corpc_opts_t *opts,
                                        opal_rpc_corpc_t **co);
/* A corpc of opcode over group rooted at its member root, asked for by
 * this process, which need not be a member (a client attached from the
 * group file; CaRT's corpc from a client goes through a server the same
 * way): send gives the request to root, which runs the corpc over the
 * group as if it had created it (leaving out the members it knows dead)
 * and answers the aggregate and the failed ranks, which this process's
 * completion then has. The opcode needs its codecs here (registered with
 * opal_rpc_proto_register), and its aggregation at the members. Of opts,
 * timeout bounds the whole exchange (the root gets three quarters of it).
 * OPAL_ERR_BAD_PARAM for a root out of range (or excluded), and as
 * opal_rpc_corpc_create; a root that does not know the group or the
 * opcode refuses it, which the completion's status says. */
OPAL_DECLSPEC int opal_rpc_corpc_create_at(opal_rpc_context_t *ctx, opal_rpc_group_t *group,
                                           uint32_t root, uint32_t opcode,
                                           const opal_rpc_corpc_opts_t *opts,
                                           opal_rpc_corpc_t **co);
/* The input struct (the opcode's input type); the caller's to fill. */
OPAL_DECLSPEC void *opal_rpc_corpc_input(opal_rpc_corpc_t *co);
/* Starts it; cb runs once (not when this returns an error). */
OPAL_DECLSPEC int opal_rpc_corpc_send(opal_rpc_corpc_t *co, opal_rpc_corpc_cb_t cb, void *arg);
/* The aggregate (the opcode's output type), valid in and after the
 * completion; NULL when no member's output reached the root. */
OPAL_DECLSPEC void *opal_rpc_corpc_output(opal_rpc_corpc_t *co);
/* The group ranks whose output is not in the aggregate, ascending. */
OPAL_DECLSPEC uint32_t opal_rpc_corpc_failed(opal_rpc_corpc_t *co, const uint32_t **ranks);
/* Releases co (after its completion, or instead of sending it); the
 * caller's input memory stays the caller's. */
OPAL_DECLSPEC void opal_rpc_corpc_free(opal_rpc_corpc_t *co);

/* How many corpcs this process still takes part in (as the root, as the
 * process that asked a root, or as a member that has not replied to its
 * parent): a member that leaves waits
 * for 0 after the last corpc it expects, so that its subtree's answer is
 * not lost. */
OPAL_DECLSPEC uint32_t opal_rpc_corpc_inflight(void);

#endif /* OPAL_MCA_RPC_RPC_GROUP_H */
