/*
 * swim_sim: SWIM at scale on a virtual clock (test/sim/swim_sim.h).
 *
 *   swim_sim [--n N[,N...]] [--loss P] [--delay MS] [--kill K] [--seconds S]
 *            [--seed X] [--period MS] [--ping-timeout MS] [--suspect MS]
 *            [--piggyback N] [--piggyback-tx N] [--indirect K]
 *
 * For each N: K members (default min(8, max(1, N / 30))) crash at random
 * times in the 4th second; the run goes on until every survivor has seen
 * every victim dead (or 120 s after the crashes). It prints time to
 * detect (first member to declare a victim dead, and every survivor: median
 * and 99th percentile over survivor-victim pairs), messages per member per
 * period, then, with no crash and message loss of 1 % and 5 % (or --loss),
 * S seconds (default 60; 20 at N >= 100,000) of the protocol: probes that
 * ended in a suspicion of a live member, per member per period, and live
 * members declared dead by anyone. One markdown table each (docs/swim.md).
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test/sim/swim_sim.h"

typedef struct opts_t {
    uint32_t ns[16];
    int nn;
    double loss[4];
    int nloss;
    uint32_t delay_ms;
    int kill;
    int seconds;
    uint64_t seed;
    opal_swim_params_t params;
} opts_t;

static uint64_t pct(const uint64_t *t, uint64_t n, double p)
{
    if (0 == n) {
        return 0;
    }
    uint64_t i = (uint64_t) (p * (double) (n - 1) + 0.5);
    return t[i];
}

static double secs_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double) (t1.tv_sec - t0->tv_sec) + (double) (t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static swim_sim_t *make(const opts_t *o, uint32_t n, double loss)
{
    swim_sim_config_t cfg = {
        .n = n, .params = o->params, .loss = loss, .delay_ms = o->delay_ms, .seed = o->seed};
    swim_sim_t *sim = NULL;
    if (0 != swim_sim_create(&cfg, &sim)) {
        fprintf(stderr, "swim_sim: cannot create %u members\n", n);
        exit(1);
    }
    return sim;
}

static void detection(const opts_t *o, uint32_t n)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    swim_sim_t *sim = make(o, n, 0.0);
    int k = o->kill > 0 ? o->kill : (int) (n / 30 < 1 ? 1 : n / 30 > 8 ? 8 : n / 30);
    if (k >= (int) n) {
        k = (int) n - 1;
    }
    uint64_t rng = o->seed * 7919 + n;
    uint64_t at[SWIM_SIM_MAX_VICTIMS];
    uint32_t who[SWIM_SIM_MAX_VICTIMS];
    for (int v = 0; v < k; ++v) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        at[v] = 3000 + (rng >> 33) % 1000;
        bool dup;
        do {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            who[v] = (uint32_t) ((rng >> 33) % n);
            dup = false;
            for (int w = 0; w < v; ++w) {
                dup = dup || who[w] == who[v];
            }
        } while (dup);
    }
    /* Crash in time order. */
    for (int v = 0; v < k; ++v) {
        for (int w = v + 1; w < k; ++w) {
            if (at[w] < at[v]) {
                uint64_t ta = at[v];
                at[v] = at[w];
                at[w] = ta;
            }
        }
    }
    for (int v = 0; v < k; ++v) {
        swim_sim_run_until(sim, at[v]);
        swim_sim_kill(sim, who[v]);
    }
    uint64_t end = at[k - 1] + 120000;
    while (swim_sim_now(sim) < end && !swim_sim_all_detected(sim)) {
        swim_sim_run_until(sim, swim_sim_now(sim) + 1000);
    }
    uint64_t count = 0;
    uint64_t *t = swim_sim_detection_times(sim, &count);
    uint64_t first[SWIM_SIM_MAX_VICTIMS];
    for (int v = 0; v < k; ++v) {
        first[v] = SWIM_SIM_NEVER;
        for (uint32_t i = 0; i < n; ++i) {
            uint64_t seen = swim_sim_dead_seen(sim, v, i);
            if (SWIM_SIM_NEVER != seen && seen - swim_sim_killed_at(sim, v) < first[v]) {
                first[v] = seen - swim_sim_killed_at(sim, v);
            }
        }
    }
    for (int v = 0; v < k; ++v) {
        for (int w = v + 1; w < k; ++w) {
            if (first[w] < first[v]) {
                uint64_t f = first[v];
                first[v] = first[w];
                first[w] = f;
            }
        }
    }
    swim_sim_counts_t c;
    swim_sim_counts(sim, &c);
    double periods = (double) c.member_ms / o->params.period_ms;
    uint64_t pairs = (uint64_t) k * (n - (uint32_t) k);
    printf("| %u | %d | %.1f | %.1f | %.1f | %.1f | %" PRIu64 " | %.2f | %.0f | %.1f |\n", n, k,
           first[k / 2] / 1000.0, first[k - 1] / 1000.0, pct(t, count, 0.5) / 1000.0,
           pct(t, count, 0.99) / 1000.0, pairs - count, c.messages / periods,
           (double) c.bytes / (double) c.messages, secs_since(&t0));
    fflush(stdout);
    free(t);
    swim_sim_destroy(sim);
}

static void false_positives(const opts_t *o, uint32_t n, double loss)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int seconds = o->seconds > 0 ? o->seconds : n >= 100000 ? 20 : 60;
    swim_sim_t *sim = make(o, n, loss);
    swim_sim_run_until(sim, (uint64_t) seconds * 1000);
    swim_sim_counts_t c;
    swim_sim_counts(sim, &c);
    uint64_t suspected = 0, refutations = 0;
    for (uint32_t i = 0; i < n; ++i) {
        opal_swim_stats_t st;
        opal_swim_stats(swim_sim_member(sim, i), &st);
        suspected += st.suspected;
        refutations += st.refutations;
    }
    double periods = (double) c.member_ms / o->params.period_ms;
    printf("| %u | %.0f %% | %d | %.2f | %.2e | %" PRIu64 " | %u | %.1f |\n", n, loss * 100,
           seconds, c.messages / periods, (double) suspected / periods, refutations, c.falsely_dead,
           secs_since(&t0));
    fflush(stdout);
    swim_sim_destroy(sim);
}

static int parse_list(const char *s, uint32_t *out, int max)
{
    int n = 0;
    char *end;
    while (n < max) {
        unsigned long v = strtoul(s, &end, 10);
        if (end == s || v < 1 || v > 10000000) {
            return -1;
        }
        out[n++] = (uint32_t) v;
        if ('\0' == *end) {
            return n;
        }
        if (',' != *end) {
            return -1;
        }
        s = end + 1;
    }
    return -1;
}

static int usage(const char *why)
{
    fprintf(
        stderr,
        "swim_sim: %s\nusage: swim_sim [--n N[,N...]] [--loss P] [--delay MS] [--kill K] "
        "[--seconds S] [--seed X] [--period MS] [--ping-timeout MS] [--suspect MS] [--piggyback N] "
        "[--piggyback-tx N] [--indirect K]\n",
        why);
    return 2;
}

int main(int argc, char **argv)
{
    opts_t o = {.ns = {100, 1000, 10000, 100000},
                .nn = 4,
                .loss = {0.01, 0.05},
                .nloss = 2,
                .delay_ms = 2,
                .seed = 1};
    opal_swim_params_default(&o.params);
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (NULL == v) {
            return usage("an option without its value");
        }
        if (0 == strcmp(a, "--n")) {
            o.nn = parse_list(v, o.ns, 16);
            if (o.nn < 1) {
                return usage("--n takes a list of group sizes 1..10000000");
            }
        } else if (0 == strcmp(a, "--loss")) {
            o.loss[0] = strtod(v, &end);
            o.nloss = 1;
            if ('\0' != *end || o.loss[0] < 0 || o.loss[0] >= 1) {
                return usage("--loss takes a probability in [0, 1)");
            }
        } else if (0 == strcmp(a, "--delay")) {
            o.delay_ms = (uint32_t) strtoul(v, &end, 10);
        } else if (0 == strcmp(a, "--kill")) {
            o.kill = (int) strtol(v, &end, 10);
            if (o.kill < 1 || o.kill > SWIM_SIM_MAX_VICTIMS) {
                return usage("--kill takes 1 to 64");
            }
        } else if (0 == strcmp(a, "--seconds")) {
            o.seconds = (int) strtol(v, &end, 10);
        } else if (0 == strcmp(a, "--seed")) {
            o.seed = strtoull(v, &end, 10);
        } else if (0 == strcmp(a, "--period")) {
            o.params.period_ms = (uint32_t) strtoul(v, &end, 10);
        } else if (0 == strcmp(a, "--ping-timeout")) {
            o.params.ping_timeout_ms = (uint32_t) strtoul(v, &end, 10);
        } else if (0 == strcmp(a, "--piggyback")) {
            o.params.piggyback_entries = (uint32_t) strtoul(v, &end, 10);
        } else if (0 == strcmp(a, "--piggyback-tx")) {
            o.params.piggyback_tx = (uint32_t) strtoul(v, &end, 10);
        } else if (0 == strcmp(a, "--indirect")) {
            o.params.indirect_count = (uint32_t) strtoul(v, &end, 10);
        } else if (0 == strcmp(a, "--suspect")) {
            o.params.suspect_timeout_ms = (uint32_t) strtoul(v, &end, 10);
        } else {
            return usage("unknown option");
        }
        if (NULL != end && '\0' != *end) {
            return usage("a value that is not a number");
        }
    }
    const char *why;
    if (0 != opal_swim_params_check(&o.params, &why)) {
        return usage(why);
    }
    printf("SWIM: period %u ms, ping timeout %u ms, suspicion %u ms, k %u, piggyback %u, "
           "delay %u ms (uniform %u..%u)\n\n",
           o.params.period_ms, o.params.ping_timeout_ms, o.params.suspect_timeout_ms,
           o.params.indirect_count, o.params.piggyback_entries, o.delay_ms, o.delay_ms / 2,
           o.delay_ms + o.delay_ms / 2);
    printf("| N | crashed | first detection, median (s) | first detection, max (s) | every "
           "survivor, median (s) | every survivor, p99 (s) | pairs not detected | messages / "
           "member / period | bytes / message | run (s) |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < o.nn; ++i) {
        detection(&o, o.ns[i]);
    }
    printf("\n| N | loss | simulated (s) | messages / member / period | suspicions of live "
           "members / member / period | refutations | live members declared dead | run (s) "
           "|\n");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < o.nn; ++i) {
        for (int l = 0; l < o.nloss; ++l) {
            false_positives(&o, o.ns[i], o.loss[l]);
        }
    }
    /* The corpc tree table (docs/swim.md, "Trees"): once rpc_tree.h's
     * shapes are in this tree, a loop over opal_rpc_tree_lookup("flat",
     * "kary", "knomial") and o.ns, each table copied into a
     * tree_sim_shape_t (test/sim/tree_sim.h) and measured, prints it here. */
    return 0;
}
