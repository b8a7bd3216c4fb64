/*
 * The SWIM simulator (swim_sim.h): a binary heap of events ordered by
 * (time, sequence number), two kinds of them: a member's tick and a
 * message's delivery. A member has one live tick at a time (a tick event
 * whose time is not the member's scheduled one is stale and skipped).
 */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/util/opal_error.h"
#include "test/sim/swim_sim.h"

enum { EV_TICK = 0, EV_DELIVER = 1 };

typedef struct event_t {
    uint64_t time;
    uint64_t seq;
    uint32_t member;
    uint32_t kind;
    uint8_t *bytes; /* EV_DELIVER: the encoded message */
    uint32_t len;
} event_t;

typedef struct member_ctx_t {
    swim_sim_t *sim;
    uint32_t rank;
} member_ctx_t;

struct swim_sim_t {
    swim_sim_config_t cfg;
    uint64_t now;
    uint64_t seq;
    uint64_t rng;
    event_t *heap;
    size_t nheap, heap_cap;
    opal_swim_t **members;
    member_ctx_t *ctx;
    uint64_t *next_tick;
    int32_t *victim_of; /* rank -> victim index, -1 */
    uint8_t *falsely_dead;
    int nvictims;
    uint64_t killed_at[SWIM_SIM_MAX_VICTIMS];
    uint64_t *dead_seen[SWIM_SIM_MAX_VICTIMS];
    swim_sim_counts_t counts;
    opal_swim_ops_t ops;
};

static uint64_t rnd(swim_sim_t *s)
{
    uint64_t z = (s->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rnd01(swim_sim_t *s)
{
    return (double) (rnd(s) >> 11) / 9007199254740992.0;
}

/* ---------------------------------------------------------------- heap */

static bool before(const event_t *a, const event_t *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static void push(swim_sim_t *s, event_t ev)
{
    if (s->nheap == s->heap_cap) {
        s->heap_cap = 0 == s->heap_cap ? 1024 : 2 * s->heap_cap;
        s->heap = realloc(s->heap, sizeof(event_t) * s->heap_cap);
        if (NULL == s->heap) {
            abort(); /* a simulator out of memory has nothing to report */
        }
    }
    ev.seq = s->seq++;
    size_t i = s->nheap++;
    while (i > 0 && before(&ev, &s->heap[(i - 1) / 2])) {
        s->heap[i] = s->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    s->heap[i] = ev;
}

static event_t pop(swim_sim_t *s)
{
    event_t top = s->heap[0];
    event_t last = s->heap[--s->nheap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->nheap) {
            break;
        }
        if (c + 1 < s->nheap && before(&s->heap[c + 1], &s->heap[c])) {
            c++;
        }
        if (!before(&s->heap[c], &last)) {
            break;
        }
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (s->nheap > 0) {
        s->heap[i] = last;
    }
    return top;
}

static void schedule_tick(swim_sim_t *s, uint32_t m, uint64_t t)
{
    if (t <= s->now) {
        t = s->now + 1;
    }
    if (t >= s->next_tick[m]) {
        return;
    }
    s->next_tick[m] = t;
    push(s, (event_t){.time = t, .member = m, .kind = EV_TICK});
}

/* ------------------------------------------------------------ the ops */

static uint64_t sim_now(void *arg)
{
    return ((member_ctx_t *) arg)->sim->now;
}

static int sim_send(void *arg, uint32_t to, const opal_swim_msg_t *msg)
{
    swim_sim_t *s = ((member_ctx_t *) arg)->sim;
    size_t len = opal_swim_msg_size(msg);
    s->counts.messages++;
    s->counts.bytes += len;
    if (s->cfg.loss > 0 && rnd01(s) < s->cfg.loss) {
        s->counts.lost++;
        return OPAL_SUCCESS;
    }
    uint8_t *bytes = malloc(len);
    if (NULL == bytes || OPAL_SUCCESS != opal_swim_msg_encode(msg, bytes, len, &len)) {
        abort();
    }
    uint64_t d = s->cfg.delay_ms;
    uint64_t delay = d / 2 + (0 == d ? 0 : rnd(s) % (d + 1));
    push(s, (event_t){.time = s->now + (delay < 1 ? 1 : delay),
                      .member = to,
                      .kind = EV_DELIVER,
                      .bytes = bytes,
                      .len = (uint32_t) len});
    return OPAL_SUCCESS;
}

static void sim_event(void *arg, uint32_t rank, opal_swim_status_t status, uint64_t inc)
{
    member_ctx_t *mc = arg;
    swim_sim_t *s = mc->sim;
    (void) inc;
    int v = s->victim_of[rank];
    if (v >= 0) {
        if (OPAL_SWIM_DEAD == status && SWIM_SIM_NEVER == s->dead_seen[v][mc->rank]) {
            s->dead_seen[v][mc->rank] = s->now;
        }
        return;
    }
    if (OPAL_SWIM_SUSPECT == status) {
        s->counts.false_suspect++;
    } else if (OPAL_SWIM_DEAD == status) {
        s->counts.false_dead++;
        if (!s->falsely_dead[rank]) {
            s->falsely_dead[rank] = 1;
            s->counts.falsely_dead++;
        }
    }
}

/* ----------------------------------------------------------- lifetime */

int swim_sim_create(const swim_sim_config_t *cfg, swim_sim_t **out)
{
    swim_sim_t *s = calloc(1, sizeof(*s));
    if (NULL == s || 0 == cfg->n) {
        free(s);
        return OPAL_ERR_BAD_PARAM;
    }
    uint32_t n = cfg->n;
    s->cfg = *cfg;
    s->rng = cfg->seed;
    s->ops.send = sim_send;
    s->ops.now_ms = sim_now;
    s->ops.event = sim_event;
    s->members = calloc(n, sizeof(*s->members));
    s->ctx = calloc(n, sizeof(*s->ctx));
    s->next_tick = malloc(n * sizeof(*s->next_tick));
    s->victim_of = malloc(n * sizeof(*s->victim_of));
    s->falsely_dead = calloc(n, 1);
    if (NULL == s->members || NULL == s->ctx || NULL == s->next_tick || NULL == s->victim_of ||
        NULL == s->falsely_dead) {
        swim_sim_destroy(s);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t i = 0; i < n; ++i) {
        opal_swim_params_t p = cfg->params;
        p.seed = (0 == cfg->params.seed ? 1 : cfg->params.seed) + i;
        s->ctx[i].sim = s;
        s->ctx[i].rank = i;
        s->victim_of[i] = -1;
        s->next_tick[i] = SWIM_SIM_NEVER;
        int rc = opal_swim_create(&p, i, n, &s->ops, &s->ctx[i], &s->members[i]);
        if (OPAL_SUCCESS != rc) {
            swim_sim_destroy(s);
            return rc;
        }
        schedule_tick(s, i, opal_swim_next_deadline(s->members[i]));
    }
    *out = s;
    return OPAL_SUCCESS;
}

void swim_sim_destroy(swim_sim_t *s)
{
    if (NULL == s) {
        return;
    }
    for (size_t i = 0; i < s->nheap; ++i) {
        free(s->heap[i].bytes);
    }
    free(s->heap);
    if (NULL != s->members) {
        for (uint32_t i = 0; i < s->cfg.n; ++i) {
            opal_swim_destroy(s->members[i]);
        }
    }
    for (int v = 0; v < s->nvictims; ++v) {
        free(s->dead_seen[v]);
    }
    free(s->members);
    free(s->ctx);
    free(s->next_tick);
    free(s->victim_of);
    free(s->falsely_dead);
    free(s);
}

/* ----------------------------------------------------------- running */

static void deliver(swim_sim_t *s, const event_t *ev)
{
    uint32_t m = ev->member;
    if (s->victim_of[m] >= 0) {
        s->counts.to_dead++;
        return;
    }
    opal_swim_msg_t msg;
    const char *why;
    if (OPAL_SUCCESS != opal_swim_msg_decode(&msg, ev->bytes, ev->len, &why) ||
        OPAL_SUCCESS != opal_swim_recv(s->members[m], &msg)) {
        s->counts.refused++;
    }
    schedule_tick(s, m, opal_swim_next_deadline(s->members[m]));
}

void swim_sim_run_until(swim_sim_t *s, uint64_t t)
{
    while (s->nheap > 0 && s->heap[0].time <= t) {
        event_t ev = pop(s);
        s->now = ev.time;
        if (EV_DELIVER == ev.kind) {
            deliver(s, &ev);
            free(ev.bytes);
            continue;
        }
        uint32_t m = ev.member;
        if (s->victim_of[m] >= 0 || ev.time != s->next_tick[m]) {
            continue;
        }
        s->next_tick[m] = SWIM_SIM_NEVER;
        schedule_tick(s, m, opal_swim_tick(s->members[m]));
    }
    s->now = t;
}

uint64_t swim_sim_now(const swim_sim_t *s)
{
    return s->now;
}

int swim_sim_kill(swim_sim_t *s, uint32_t rank)
{
    if (rank >= s->cfg.n || s->victim_of[rank] >= 0 || s->nvictims == SWIM_SIM_MAX_VICTIMS) {
        return -1;
    }
    int v = s->nvictims;
    s->dead_seen[v] = malloc(s->cfg.n * sizeof(uint64_t));
    if (NULL == s->dead_seen[v]) {
        return -1;
    }
    for (uint32_t i = 0; i < s->cfg.n; ++i) {
        s->dead_seen[v][i] = SWIM_SIM_NEVER;
    }
    s->nvictims++;
    s->victim_of[rank] = v;
    s->killed_at[v] = s->now;
    return v;
}

uint64_t swim_sim_killed_at(const swim_sim_t *s, int v)
{
    return s->killed_at[v];
}

uint64_t swim_sim_dead_seen(const swim_sim_t *s, int v, uint32_t observer)
{
    return s->dead_seen[v][observer];
}

bool swim_sim_all_detected(const swim_sim_t *s)
{
    for (int v = 0; v < s->nvictims; ++v) {
        for (uint32_t i = 0; i < s->cfg.n; ++i) {
            if (s->victim_of[i] < 0 && SWIM_SIM_NEVER == s->dead_seen[v][i]) {
                return false;
            }
        }
    }
    return true;
}

void swim_sim_counts(const swim_sim_t *s, swim_sim_counts_t *c)
{
    *c = s->counts;
    c->member_ms = 0;
    for (uint32_t i = 0; i < s->cfg.n; ++i) {
        int v = s->victim_of[i];
        c->member_ms += v >= 0 ? s->killed_at[v] : s->now;
    }
}

opal_swim_t *swim_sim_member(swim_sim_t *s, uint32_t rank)
{
    return s->members[rank];
}

bool swim_sim_is_killed(const swim_sim_t *s, uint32_t rank)
{
    return s->victim_of[rank] >= 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y ? -1 : x > y;
}

uint64_t *swim_sim_detection_times(const swim_sim_t *s, uint64_t *count)
{
    uint64_t *t = malloc(sizeof(uint64_t) * ((size_t) s->nvictims * s->cfg.n + 1));
    uint64_t n = 0;
    if (NULL == t) {
        *count = 0;
        return NULL;
    }
    for (int v = 0; v < s->nvictims; ++v) {
        for (uint32_t i = 0; i < s->cfg.n; ++i) {
            if (s->victim_of[i] < 0 && SWIM_SIM_NEVER != s->dead_seen[v][i]) {
                t[n++] = s->dead_seen[v][i] - s->killed_at[v];
            }
        }
    }
    qsort(t, n, sizeof(uint64_t), cmp_u64);
    *count = n;
    return t;
}
