/*
 * A discrete-event simulator of SWIM: N members of the real state machine
 * (opal/mca/rpc/rpc_swim.h) in one process, on a virtual clock in ms,
 * over a network that delays every message and loses some. Every message
 * goes through the wire encoder and decoder on its way.
 *
 * Deterministic: the same configuration gives the same run.
 */
#ifndef TEST_SIM_SWIM_SIM_H
#define TEST_SIM_SWIM_SIM_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stdint.h>

#include "opal/mca/rpc/rpc_swim.h"

#define SWIM_SIM_MAX_VICTIMS 64
#define SWIM_SIM_NEVER       UINT64_MAX

typedef struct swim_sim_config_t {
    uint32_t n;
    opal_swim_params_t params; /* member i seeds with params.seed + i (seed 0: 1) */
    double loss;               /* probability that a message is lost */
    uint32_t delay_ms;         /* mean one-way delay: uniform in [d/2, 3d/2], at least 1 */
    uint64_t seed;             /* the network's draws */
} swim_sim_config_t;

typedef struct swim_sim_t swim_sim_t;

typedef struct swim_sim_counts_t {
    uint64_t messages;      /* sent by all members */
    uint64_t bytes;         /* their wire size */
    uint64_t lost;          /* dropped by the network (loss) */
    uint64_t to_dead;       /* sent to a killed member */
    uint64_t false_suspect; /* suspect events about members alive */
    uint64_t false_dead;    /* dead events about members alive */
    uint32_t falsely_dead;  /* members alive that some member declared dead */
    uint64_t member_ms;     /* sum over members of the time they ran */
    uint64_t refused;       /* messages the members refused */
} swim_sim_counts_t;

int swim_sim_create(const swim_sim_config_t *cfg, swim_sim_t **sim);
void swim_sim_destroy(swim_sim_t *sim);
/* Runs events up to and including time t (ms). */
void swim_sim_run_until(swim_sim_t *sim, uint64_t t);
uint64_t swim_sim_now(const swim_sim_t *sim);
/* Crashes rank now: it stops, and messages to it are lost. At most
 * SWIM_SIM_MAX_VICTIMS; returns its victim index or -1. */
int swim_sim_kill(swim_sim_t *sim, uint32_t rank);
/* The time victim v was killed. */
uint64_t swim_sim_killed_at(const swim_sim_t *sim, int v);
/* When observer first saw victim v dead (SWIM_SIM_NEVER: not yet). */
uint64_t swim_sim_dead_seen(const swim_sim_t *sim, int v, uint32_t observer);
/* True when every member alive has seen every victim dead. */
bool swim_sim_all_detected(const swim_sim_t *sim);
void swim_sim_counts(const swim_sim_t *sim, swim_sim_counts_t *counts);
/* The member (for its view and stats). */
opal_swim_t *swim_sim_member(swim_sim_t *sim, uint32_t rank);
bool swim_sim_is_killed(const swim_sim_t *sim, uint32_t rank);
/* Sorted copy of the times (ms) each survivor took to see each victim
 * dead (pairs not detected are left out); *count of them. Free it. */
uint64_t *swim_sim_detection_times(const swim_sim_t *sim, uint64_t *count);

#endif /* TEST_SIM_SWIM_SIM_H */
