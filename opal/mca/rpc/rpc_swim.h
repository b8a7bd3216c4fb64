/*
 * SWIM failure detection, as DAOS CaRT uses it: a state machine over a
 * small ops table, so the same code runs over rpc (between the ranks of a
 * job) and inside the simulator of test/sim (N members in one process on
 * a virtual clock).
 *
 * Each member, once per protocol period, pings one other member (round
 * robin over a random permutation of the group, drawn again each round).
 * Without an ack within the ping timeout it asks k other members to ping
 * the target for it (ping-req); without an ack through any of them within
 * a second ping timeout it suspects the target. A suspected member that is
 * not heard alive with a higher incarnation within the suspicion timeout
 * is declared dead; a live member that learns it is suspected refutes by
 * raising its incarnation. Every message carries membership updates
 * (piggybacked): the receiver's, the sender's and the probed member's
 * entries and the freshest recent changes, each sent a bounded number of
 * times.
 *
 *   opal_swim_params_default(&p);   or opal_swim_params_from_vars (rpc_swim_*)
 *   opal_swim_create(&p, my_rank, group_size, &ops, ops_arg, &swim);
 *   loop: opal_swim_tick(swim) at (or after) the time it returned;
 *         opal_swim_recv(swim, &msg) for each message that arrives.
 *
 * Ranks are uint32 numbers 0..size-1. Given its seed (params.seed) and the
 * same inputs at the same times, a member does the same things.
 *
 * Threads: an opal_swim_t is not locked; one thread at a time calls it.
 * The ops are called from inside opal_swim_tick and opal_swim_recv.
 */
#ifndef OPAL_MCA_RPC_RPC_SWIM_H
#define OPAL_MCA_RPC_RPC_SWIM_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/mca/rpc/rpc.h"

/* A member's status in a member's view. */
typedef enum {
    OPAL_SWIM_ALIVE = 0,
    OPAL_SWIM_SUSPECT = 1,
    OPAL_SWIM_DEAD = 2,
} opal_swim_status_t;

/* "alive", "suspect", "dead" (or "?"). */
OPAL_DECLSPEC const char *opal_swim_status_name(int status);

/* One membership update: rank is status at incarnation. */
typedef struct opal_swim_update_t {
    uint32_t rank;
    uint8_t status; /* opal_swim_status_t */
    uint64_t incarnation;
} opal_swim_update_t;

/* Message types. */
enum {
    OPAL_SWIM_MSG_PING = 1,     /* from -> target: are you there? */
    OPAL_SWIM_MSG_PING_REQ = 2, /* origin -> relay: ping target for me */
    OPAL_SWIM_MSG_ACK = 3,      /* target answers (to the relay, which forwards it) */
};

/* Updates one message carries at most (the decoder refuses more). */
#define OPAL_SWIM_MAX_UPDATES 64

/* A SWIM message. A probe is named by (origin, seq): origin is the member
 * that wants to know whether target lives; a ping sent by a relay carries
 * the origin's seq, and the ack goes back through the relay (from). */
typedef struct opal_swim_msg_t {
    uint8_t type;    /* OPAL_SWIM_MSG_* */
    uint32_t from;   /* the sender */
    uint32_t target; /* the member probed (for an ack: the one that answered) */
    uint32_t origin; /* the member that started the probe */
    uint64_t seq;    /* the origin's probe number */
    uint32_t nupdates;
    opal_swim_update_t updates[OPAL_SWIM_MAX_UPDATES];
} opal_swim_msg_t;

/* The protocol's parameters (the rpc_swim_* variables). */
typedef struct opal_swim_params_t {
    uint32_t period_ms;          /* protocol period (1000) */
    uint32_t ping_timeout_ms;    /* direct ping, and again indirect pings (900) */
    uint32_t suspect_timeout_ms; /* suspicion before death (8000; 0: dead at once) */
    uint32_t indirect_count;     /* k members asked to ping a silent target (2) */
    uint32_t piggyback_entries;  /* recent updates per message besides the 2-3 own (8) */
    /* Times each update is sent on (0: 3 * ceil(log2(size + 1))). */
    uint32_t piggyback_tx;
    uint64_t seed; /* the member's random draws (0: derived from its rank) */
} opal_swim_params_t;

/* What the state machine needs from its surroundings. */
typedef struct opal_swim_ops_t {
    /* Sends msg to member to (a ping, a ping-req or an ack; msg->type
     * says which). Fire and forget: a message that is lost is the
     * protocol's business. msg is valid during the call only. */
    int (*send)(void *arg, uint32_t to, const opal_swim_msg_t *msg);
    /* The current time in ms (monotonic; virtual in the simulator). */
    uint64_t (*now_ms)(void *arg);
    /* rank changed status in this member's view (alive again after a
     * refutation, suspect, dead), at incarnation. Called from tick / recv;
     * must not call back into the state machine. May be NULL. */
    void (*event)(void *arg, uint32_t rank, opal_swim_status_t status, uint64_t incarnation);
} opal_swim_ops_t;

/* Counters of one member. */
typedef struct opal_swim_stats_t {
    uint64_t sent[4];       /* messages sent by type (index OPAL_SWIM_MSG_*) */
    uint64_t received;      /* messages taken */
    uint64_t refused;       /* messages that made no sense (bad ranks, misdelivered) */
    uint64_t stale;         /* updates ignored: older than what this member knows */
    uint64_t probes;        /* protocol periods started */
    uint64_t indirect;      /* probes that needed ping-reqs */
    uint64_t suspected;     /* probes that ended in a suspicion */
    uint64_t checks;        /* suspicions heard from others, probed before a death */
    uint64_t refutations;   /* times this member raised its incarnation */
    uint64_t declared_dead; /* times this member was told it is dead */
} opal_swim_stats_t;

typedef struct opal_swim_t opal_swim_t;

/* CaRT's defaults (see the variables in docs/swim.md). */
OPAL_DECLSPEC void opal_swim_params_default(opal_swim_params_t *p);
/* Checks p: OPAL_SUCCESS, or OPAL_ERR_BAD_PARAM with *why naming the
 * parameter and the rule it breaks. */
OPAL_DECLSPEC int opal_swim_params_check(const opal_swim_params_t *p, const char **why);
/* Registers the rpc_swim_* MCA variables (once) and fills p from them,
 * checked (OPAL_ERR_BAD_PARAM after saying which variable is wrong). Needs
 * the MCA base open (mca_base_open; opal_rpc_init opens it). */
OPAL_DECLSPEC int opal_swim_params_from_vars(opal_swim_params_t *p);
/* Registers the rpc_swim_* variables (the rpc framework's registration
 * does, so that --mca rpc_swim_period_ms is known before SWIM starts). */
OPAL_DECLSPEC int opal_swim_register_vars(void);

/* A member self of a group of size members (every one alive at
 * incarnation 0), its first period at a random offset within one period
 * from now. ops and arg stay valid while it lives. */
OPAL_DECLSPEC int opal_swim_create(const opal_swim_params_t *p, uint32_t self, uint32_t size,
                                   const opal_swim_ops_t *ops, void *arg, opal_swim_t **swim);
OPAL_DECLSPEC void opal_swim_destroy(opal_swim_t *swim);

/* Runs what is due: suspicions that expired become deaths, a silent
 * target gets ping-reqs or is suspected, a new period starts. Returns the
 * time (ms) of the next thing due; calling earlier does no harm. */
OPAL_DECLSPEC uint64_t opal_swim_tick(opal_swim_t *swim);
/* The time of the next thing due, without running anything. */
OPAL_DECLSPEC uint64_t opal_swim_next_deadline(const opal_swim_t *swim);
/* Takes a message from a peer: applies its updates, answers a ping,
 * relays a ping-req or an ack, completes a probe. OPAL_ERR_PROTOCOL (and
 * nothing done) for one that makes no sense here: a rank out of the
 * group, a ping for someone else, an unknown type or status. */
OPAL_DECLSPEC int opal_swim_recv(opal_swim_t *swim, const opal_swim_msg_t *msg);

/* rank's status and incarnation in this member's view. */
OPAL_DECLSPEC int opal_swim_member(const opal_swim_t *swim, uint32_t rank,
                                   opal_swim_status_t *status, uint64_t *incarnation);
OPAL_DECLSPEC uint32_t opal_swim_self(const opal_swim_t *swim);
OPAL_DECLSPEC uint32_t opal_swim_size(const opal_swim_t *swim);
OPAL_DECLSPEC void opal_swim_stats(const opal_swim_t *swim, opal_swim_stats_t *stats);

/* ------------------------------------------------------------- wire */

/* Wire size of msg. */
OPAL_DECLSPEC size_t opal_swim_msg_size(const opal_swim_msg_t *msg);
/* Encodes msg into buf (size bytes): the bytes written in *len, or
 * OPAL_ERR_BAD_PARAM when it does not fit or is not a valid message. */
OPAL_DECLSPEC int opal_swim_msg_encode(const opal_swim_msg_t *msg, void *buf, size_t size,
                                       size_t *len);
/* Decodes len bytes from a peer into msg: OPAL_ERR_PROTOCOL, with *why
 * saying what was wrong, for anything but one whole valid message. */
OPAL_DECLSPEC int opal_swim_msg_decode(opal_swim_msg_t *msg, const void *buf, size_t len,
                                       const char **why);

/* ------------------------------------------------------------ over rpc */

/* SWIM as an rpc protocol: every message is a one-way request (opcode
 * OPAL_RPC_OPCODE(OPAL_RPC_SWIM_BASE, 1, 0), its input the encoded
 * message as one IOV), handled inline in the progress thread of the
 * context it comes to.
 *
 *   opal_rpc_swim_create(ctx, my_rank, size, NULL, endpoint_of, arg, &swim);
 *   opal_rpc_swim_add_callback(swim, on_event, arg);   alive / suspect / dead
 *   loop: opal_rpc_progress(ctx, opal_rpc_swim_progress(swim));
 *
 * A member declared dead also fails the requests of ctx to its address
 * (opal_rpc_peer_failed). One SWIM per context. */
#define OPAL_RPC_SWIM_BASE 0xe5

typedef struct opal_rpc_swim_t opal_rpc_swim_t;

/* Where member rank is: fills *ep (the address stays valid while the SWIM
 * lives; the groups code supplies its own). OPAL_SUCCESS or an error
 * (the message is then not sent). Called from the progress thread. */
typedef int (*opal_rpc_swim_endpoint_fn_t)(void *arg, uint32_t rank, opal_rpc_endpoint_t *ep);
/* A member changed status in this member's view. Called from the thread
 * that calls opal_rpc_swim_progress / opal_rpc_progress of the context;
 * must not block or destroy the SWIM. */
typedef void (*opal_rpc_swim_event_cb_t)(void *arg, uint32_t rank, opal_swim_status_t status,
                                         uint64_t incarnation);

/* Starts SWIM for member self of size on ctx, with params p (NULL: the
 * rpc_swim_* variables), registering the protocol if needed.
 * OPAL_ERR_EXISTS when ctx runs one already. */
OPAL_DECLSPEC int opal_rpc_swim_create(opal_rpc_context_t *ctx, uint32_t self, uint32_t size,
                                       const opal_swim_params_t *p,
                                       opal_rpc_swim_endpoint_fn_t endpoint, void *endpoint_arg,
                                       opal_rpc_swim_t **swim);
/* Adds an event callback (at most 8): OPAL_ERR_OUT_OF_RESOURCE past it. */
OPAL_DECLSPEC int opal_rpc_swim_add_callback(opal_rpc_swim_t *swim, opal_rpc_swim_event_cb_t cb,
                                             void *arg);
/* Runs what is due; returns the ms until the next thing due (at most one
 * period), a timeout for opal_rpc_progress. */
OPAL_DECLSPEC unsigned int opal_rpc_swim_progress(opal_rpc_swim_t *swim);
/* The state machine (its view and counters). */
OPAL_DECLSPEC opal_swim_t *opal_rpc_swim_state(opal_rpc_swim_t *swim);
/* Messages that arrived and could not be taken (bad bytes, bad ranks). */
OPAL_DECLSPEC uint64_t opal_rpc_swim_refused(const opal_rpc_swim_t *swim);
OPAL_DECLSPEC void opal_rpc_swim_destroy(opal_rpc_swim_t *swim);

#endif /* OPAL_MCA_RPC_RPC_SWIM_H */
