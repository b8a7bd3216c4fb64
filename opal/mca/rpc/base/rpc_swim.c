/*
 * The SWIM state machine (opal/mca/rpc/rpc_swim.h): one member's view of
 * the group, its probe of the period, its suspicions and the updates it
 * spreads.
 *
 * The view is sparse: a member not in the table is alive at incarnation
 * 0, so a member of a group of 100,000 holds only what changed (the
 * simulator runs 100,000 of them in one process). The table is open
 * addressing with linear probing and never shrinks (a member that changed
 * once keeps its entry: its incarnation is what refuses stale news).
 */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/rpc/rpc_swim.h"
#include "opal/util/opal_error.h"

#define NO_RANK UINT32_MAX
/* Probes (each direct and through k others) a member makes of a suspect
 * it heard of before declaring it dead: with message loss p one probe
 * fails with about (2p) (4p)^k; two make a false death on hearsay rare
 * even where news spreads slowly (a large group under heavy loss). */
#define SWIM_CHECKS 2

typedef struct view_entry_t {
    uint32_t rank; /* NO_RANK: empty slot */
    uint8_t status;
    uint64_t incarnation;
} view_entry_t;

typedef struct suspect_t {
    uint32_t rank;
    uint64_t incarnation; /* the suspicion this deadline is for */
    uint64_t deadline;
    /* Probes this member still makes of the suspect before it declares
     * it dead (a suspicion heard from others: SWIM_CHECKS; its own: 0). */
    uint8_t checks;
} suspect_t;

/* An update waiting to be piggybacked: the member's current entry is sent
 * (not a copy), left more times. */
typedef struct pending_t {
    uint32_t rank;
    uint32_t left;
} pending_t;

enum { PROBE_IDLE = 0, PROBE_DIRECT, PROBE_INDIRECT };

struct opal_swim_t {
    opal_swim_params_t p;
    uint32_t self, size;
    const opal_swim_ops_t *ops;
    void *arg;
    uint64_t rng;
    uint64_t incarnation; /* this member's own */

    view_entry_t *tab;
    uint32_t tab_mask; /* capacity - 1 (a power of two) */
    uint32_t tab_used;

    suspect_t *suspects;
    uint32_t nsuspects, suspects_cap;

    /* Oldest first; the freshest are sent first. At most pending_cap:
     * past it the oldest are dropped (their members' own messages and
     * probes carry them on). */
    pending_t *pending;
    uint32_t npending, pending_cap;
    uint32_t tx_max;

    /* Round robin over the permutation r -> (a * i + b) mod size. */
    uint64_t perm_a, perm_b;
    uint32_t perm_pos;

    int phase;
    uint32_t probe_target;
    uint64_t probe_seq;
    uint64_t check_seq; /* probes of suspects: numbers past 2^63, never a period probe's */
    uint64_t probe_start;
    uint64_t next_period;

    opal_swim_stats_t stats;
};

const char *opal_swim_status_name(int status)
{
    switch (status) {
        case OPAL_SWIM_ALIVE:
            return "alive";
        case OPAL_SWIM_SUSPECT:
            return "suspect";
        case OPAL_SWIM_DEAD:
            return "dead";
        default:
            return "?";
    }
}

void opal_swim_params_default(opal_swim_params_t *p)
{
    p->period_ms = 1000;
    p->ping_timeout_ms = 900;
    p->suspect_timeout_ms = 8000;
    p->indirect_count = 2;
    p->piggyback_entries = 8;
    p->piggyback_tx = 0;
    p->seed = 0;
}

int opal_swim_params_check(const opal_swim_params_t *p, const char **why)
{
    if (0 == p->period_ms) {
        *why = "the period (rpc_swim_period_ms) must be at least 1 ms";
    } else if (0 == p->ping_timeout_ms || p->ping_timeout_ms > p->period_ms) {
        *why = "the ping timeout (rpc_swim_ping_timeout_ms) must be 1 ms to one period";
    } else if (p->indirect_count > 16) {
        *why = "the indirect ping count (rpc_swim_indirect_count) must be 0 to 16";
    } else if (p->piggyback_entries > OPAL_SWIM_MAX_UPDATES - 3) {
        *why = "the piggybacked updates (rpc_swim_piggyback_entries) must be 0 to 61";
    } else if (p->piggyback_tx > 64) {
        *why = "the times an update is sent (rpc_swim_piggyback_tx) must be 0 to 64";
    } else if (p->suspect_timeout_ms > 24u * 3600 * 1000) {
        *why = "the suspicion timeout (rpc_swim_suspect_timeout_ms) must be at most a day";
    } else {
        return OPAL_SUCCESS;
    }
    return OPAL_ERR_BAD_PARAM;
}

/* splitmix64: small, fast, and any seed (0 too) gives a good stream. */
static uint64_t rnd(opal_swim_t *s)
{
    uint64_t z = (s->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint32_t rnd_below(opal_swim_t *s, uint32_t n)
{
    return (uint32_t) (((rnd(s) >> 32) * (uint64_t) n) >> 32);
}

static uint64_t now(opal_swim_t *s)
{
    return s->ops->now_ms(s->arg);
}

/* ------------------------------------------------------------- view */

static uint32_t slot_of(const opal_swim_t *s, uint32_t rank)
{
    /* Fibonacci hashing spreads consecutive ranks over the table. */
    return (uint32_t) ((rank * 0x9e3779b97f4a7c15ull) >> 32) & s->tab_mask;
}

static view_entry_t *view_find(const opal_swim_t *s, uint32_t rank)
{
    for (uint32_t i = slot_of(s, rank);; i = (i + 1) & s->tab_mask) {
        if (s->tab[i].rank == rank) {
            return &s->tab[i];
        }
        if (NO_RANK == s->tab[i].rank) {
            return NULL;
        }
    }
}

static int view_grow(opal_swim_t *s)
{
    uint32_t cap = (s->tab_mask + 1) * 2;
    view_entry_t *old = s->tab;
    uint32_t old_cap = s->tab_mask + 1;
    view_entry_t *tab = malloc(sizeof(*tab) * cap);
    if (NULL == tab) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t i = 0; i < cap; ++i) {
        tab[i].rank = NO_RANK;
    }
    s->tab = tab;
    s->tab_mask = cap - 1;
    for (uint32_t i = 0; i < old_cap; ++i) {
        if (NO_RANK != old[i].rank) {
            uint32_t j = slot_of(s, old[i].rank);
            while (NO_RANK != tab[j].rank) {
                j = (j + 1) & s->tab_mask;
            }
            tab[j] = old[i];
        }
    }
    free(old);
    return OPAL_SUCCESS;
}

/* The entry of rank, created alive at incarnation 0 (NULL: no memory). */
static view_entry_t *view_get(opal_swim_t *s, uint32_t rank)
{
    view_entry_t *e = view_find(s, rank);
    if (NULL != e) {
        return e;
    }
    /* At most half full, so that probes stay short. */
    if (2 * (s->tab_used + 1) > s->tab_mask + 1 && OPAL_SUCCESS != view_grow(s)) {
        return NULL;
    }
    uint32_t i = slot_of(s, rank);
    while (NO_RANK != s->tab[i].rank) {
        i = (i + 1) & s->tab_mask;
    }
    s->tab[i].rank = rank;
    s->tab[i].status = OPAL_SWIM_ALIVE;
    s->tab[i].incarnation = 0;
    s->tab_used++;
    return &s->tab[i];
}

static void view_read(const opal_swim_t *s, uint32_t rank, uint8_t *status, uint64_t *inc)
{
    if (rank == s->self) {
        *status = OPAL_SWIM_ALIVE;
        *inc = s->incarnation;
        return;
    }
    const view_entry_t *e = view_find(s, rank);
    *status = NULL == e ? OPAL_SWIM_ALIVE : e->status;
    *inc = NULL == e ? 0 : e->incarnation;
}

static bool is_dead(const opal_swim_t *s, uint32_t rank)
{
    const view_entry_t *e = view_find(s, rank);
    return NULL != e && OPAL_SWIM_DEAD == e->status;
}

/* ------------------------------------------------------- dissemination */

/* rank's entry is news: send it on tx_max more times, freshest first. */
static void spread(opal_swim_t *s, uint32_t rank)
{
    uint32_t i;
    for (i = 0; i < s->npending && s->pending[i].rank != rank; ++i) {
    }
    if (i == s->npending && s->npending == s->pending_cap) {
        i = 0; /* full: the oldest goes */
    }
    if (i < s->npending) {
        memmove(&s->pending[i], &s->pending[i + 1], sizeof(pending_t) * (s->npending - i - 1));
        s->npending--;
    }
    s->pending[s->npending].rank = rank;
    s->pending[s->npending].left = s->tx_max;
    s->npending++;
}

static void add_update(const opal_swim_t *s, opal_swim_msg_t *msg, uint32_t rank)
{
    opal_swim_update_t *u = &msg->updates[msg->nupdates++];
    u->rank = rank;
    view_read(s, rank, &u->status, &u->incarnation);
}

/* The receiver's entry as this member sees it (a suspected receiver
 * learns it must refute), this member's own, the probed member's (a relay
 * passes a suspicion on to the suspect, and a refutation back), and the
 * freshest news. */
static void fill_updates(opal_swim_t *s, opal_swim_msg_t *msg, uint32_t to)
{
    msg->nupdates = 0;
    add_update(s, msg, to);
    add_update(s, msg, s->self);
    if (msg->target != to && msg->target != s->self) {
        add_update(s, msg, msg->target);
    }
    /* The news sent the fewest times go first (newest first among
     * equals): a burst of changes does not starve the ones before it. A
     * histogram of the counts left finds the cut (3 more than wanted: the
     * receiver's, this member's and the target's entries are skipped, they
     * are in already); the first pass takes the entries above it, the
     * second the rest, newest first. Counts drop after both passes, so
     * that no entry is taken twice. */
    uint32_t want = s->p.piggyback_entries, hist[65] = {0}, cut = s->tx_max + 1, above = 0;
    uint32_t taken[OPAL_SWIM_MAX_UPDATES + 3], ntaken = 0, added = 0;
    for (uint32_t i = 0; i < s->npending; ++i) {
        hist[s->pending[i].left]++;
    }
    while (cut > 1 && above < want + 3) {
        above += hist[--cut];
    }
    for (uint32_t pass = 0; pass < 2 && added < want; ++pass) {
        for (uint32_t i = s->npending; i-- > 0 && added < want;) {
            pending_t *pd = &s->pending[i];
            if ((0 == pass) != (pd->left > cut)) {
                continue;
            }
            if (pd->rank != to && pd->rank != s->self && pd->rank != msg->target) {
                add_update(s, msg, pd->rank);
                added++;
            }
            taken[ntaken++] = i;
        }
    }
    for (uint32_t i = 0; i < ntaken; ++i) {
        s->pending[taken[i]].left--;
    }
    uint32_t j = 0;
    for (uint32_t i = 0; i < s->npending; ++i) {
        if (s->pending[i].left > 0) {
            s->pending[j++] = s->pending[i];
        }
    }
    s->npending = j;
}

static void send_msg(opal_swim_t *s, uint8_t type, uint32_t to, uint32_t target, uint32_t origin,
                     uint64_t seq)
{
    opal_swim_msg_t msg;
    msg.type = type;
    msg.from = s->self;
    msg.target = target;
    msg.origin = origin;
    msg.seq = seq;
    fill_updates(s, &msg, to);
    s->stats.sent[type]++;
    (void) s->ops->send(s->arg, to, &msg);
}

/* ------------------------------------------------------------ updates */

static void report(opal_swim_t *s, uint32_t rank, opal_swim_status_t status, uint64_t inc)
{
    if (NULL != s->ops->event) {
        s->ops->event(s->arg, rank, status, inc);
    }
}

static void suspect_drop(opal_swim_t *s, uint32_t rank)
{
    for (uint32_t i = 0; i < s->nsuspects; ++i) {
        if (s->suspects[i].rank == rank) {
            s->suspects[i] = s->suspects[--s->nsuspects];
            return;
        }
    }
}

static int suspect_add(opal_swim_t *s, uint32_t rank, uint64_t inc, bool own)
{
    for (uint32_t i = 0; i < s->nsuspects; ++i) {
        if (s->suspects[i].rank == rank) {
            /* A suspicion at a higher incarnation starts its own clock. */
            s->suspects[i].incarnation = inc;
            s->suspects[i].deadline = now(s) + s->p.suspect_timeout_ms;
            s->suspects[i].checks = own ? 0 : SWIM_CHECKS;
            return OPAL_SUCCESS;
        }
    }
    if (s->nsuspects == s->suspects_cap) {
        uint32_t cap = 0 == s->suspects_cap ? 8 : 2 * s->suspects_cap;
        suspect_t *n = realloc(s->suspects, sizeof(*n) * cap);
        if (NULL == n) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        s->suspects = n;
        s->suspects_cap = cap;
    }
    s->suspects[s->nsuspects].rank = rank;
    s->suspects[s->nsuspects].incarnation = inc;
    s->suspects[s->nsuspects].deadline = now(s) + s->p.suspect_timeout_ms;
    s->suspects[s->nsuspects].checks = own ? 0 : SWIM_CHECKS;
    s->nsuspects++;
    return OPAL_SUCCESS;
}

/* News about this member itself: a suspicion (or a death) at the current
 * incarnation or later is refuted by moving past it. */
static void apply_self(opal_swim_t *s, const opal_swim_update_t *u)
{
    if (OPAL_SWIM_ALIVE == u->status || u->incarnation < s->incarnation) {
        return;
    }
    if (OPAL_SWIM_DEAD == u->status) {
        /* Dead is final for the others; this member still says it lives
         * so that the ones that have not heard yet do not follow. */
        s->stats.declared_dead++;
    }
    /* Every message this member sends carries its own entry: no need to
     * queue it among the news. */
    s->incarnation = u->incarnation + 1;
    s->stats.refutations++;
}

/* The rules, per status in the view (dead is final):
 *   alive(i)   wins over alive(j) and suspect(j) when i > j;
 *   suspect(i) wins over suspect(j) when i > j, over alive(j) when i >= j;
 *   dead(i)    wins over alive(j) and suspect(j) when i >= j.
 * Anything else is old news (counted stale when strictly older). */
static void apply(opal_swim_t *s, const opal_swim_update_t *u, bool own)
{
    if (u->rank == s->self) {
        apply_self(s, u);
        return;
    }
    view_entry_t *e = view_find(s, u->rank);
    uint8_t cur = NULL == e ? OPAL_SWIM_ALIVE : e->status;
    uint64_t inc = NULL == e ? 0 : e->incarnation;
    bool wins;
    if (OPAL_SWIM_DEAD == cur) {
        if (OPAL_SWIM_DEAD != u->status) {
            s->stats.stale++;
        }
        return;
    }
    switch (u->status) {
        case OPAL_SWIM_ALIVE:
            wins = u->incarnation > inc;
            break;
        case OPAL_SWIM_SUSPECT:
            wins = u->incarnation > inc || (u->incarnation == inc && OPAL_SWIM_ALIVE == cur);
            break;
        default:
            wins = u->incarnation >= inc;
            break;
    }
    if (!wins) {
        if (u->incarnation < inc) {
            s->stats.stale++;
        }
        return;
    }
    uint8_t status = u->status;
    if (OPAL_SWIM_SUSPECT == status && 0 == s->p.suspect_timeout_ms) {
        status = OPAL_SWIM_DEAD;
    }
    if (OPAL_SWIM_SUSPECT == status &&
        OPAL_SUCCESS != suspect_add(s, u->rank, u->incarnation, own)) {
        return; /* no memory: the news comes again */
    }
    if (NULL == e && NULL == (e = view_get(s, u->rank))) {
        suspect_drop(s, u->rank);
        return;
    }
    if (OPAL_SWIM_SUSPECT != status) {
        suspect_drop(s, u->rank);
    }
    e->status = status;
    e->incarnation = u->incarnation;
    spread(s, u->rank);
    if (status != cur) {
        report(s, u->rank, (opal_swim_status_t) status, u->incarnation);
    }
}

/* This member's own finding about rank (its probe failed, or a
 * suspicion ran out). */
static void declare(opal_swim_t *s, uint32_t rank, uint8_t status, uint64_t inc)
{
    opal_swim_update_t u = {.rank = rank, .status = status, .incarnation = inc};
    apply(s, &u, true);
}

/* ------------------------------------------------------------ probing */

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (0 != b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The next member to ping: the next of a random permutation of the group
 * that is neither this member nor dead (NO_RANK when none is left). */
static uint32_t next_target(opal_swim_t *s)
{
    if (s->size < 2) {
        return NO_RANK;
    }
    for (uint64_t tries = 0; tries < 2 * (uint64_t) s->size + 2; ++tries) {
        if (s->perm_pos >= s->size) {
            do {
                s->perm_a = 1 + rnd_below(s, s->size - 1);
            } while (1 != gcd(s->perm_a, s->size));
            s->perm_b = rnd_below(s, s->size);
            s->perm_pos = 0;
        }
        uint32_t r = (uint32_t) ((s->perm_a * s->perm_pos + s->perm_b) % s->size);
        s->perm_pos++;
        if (r != s->self && !is_dead(s, r)) {
            return r;
        }
    }
    return NO_RANK;
}

static void start_probe(opal_swim_t *s, uint64_t t)
{
    uint32_t target = next_target(s);
    s->next_period = t + s->p.period_ms;
    if (NO_RANK == target) {
        return;
    }
    s->stats.probes++;
    s->probe_target = target;
    s->probe_seq++;
    s->probe_start = t;
    s->phase = PROBE_DIRECT;
    send_msg(s, OPAL_SWIM_MSG_PING, target, target, s->self, s->probe_seq);
}

/* The direct ping went unanswered: ask up to k random others. */
static void ask_relays(opal_swim_t *s, uint32_t target, uint64_t seq)
{
    uint32_t chosen[16];
    uint32_t n = 0;
    for (uint32_t tries = 0; n < s->p.indirect_count && tries < 8 * s->p.indirect_count + 16;
         ++tries) {
        uint32_t r = rnd_below(s, s->size);
        bool dup = r == s->self || r == target || is_dead(s, r);
        for (uint32_t i = 0; i < n && !dup; ++i) {
            dup = chosen[i] == r;
        }
        if (!dup) {
            chosen[n++] = r;
            send_msg(s, OPAL_SWIM_MSG_PING_REQ, r, target, s->self, seq);
        }
    }
}

uint64_t opal_swim_next_deadline(const opal_swim_t *s)
{
    uint64_t next;
    switch (s->phase) {
        case PROBE_DIRECT:
            next = s->probe_start + s->p.ping_timeout_ms;
            break;
        case PROBE_INDIRECT:
            next = s->probe_start + 2 * (uint64_t) s->p.ping_timeout_ms;
            break;
        default:
            next = s->next_period;
            break;
    }
    for (uint32_t i = 0; i < s->nsuspects; ++i) {
        if (s->suspects[i].deadline < next) {
            next = s->suspects[i].deadline;
        }
    }
    return next;
}

uint64_t opal_swim_tick(opal_swim_t *s)
{
    uint64_t t = now(s);
    for (uint32_t i = 0; i < s->nsuspects;) {
        suspect_t sp = s->suspects[i];
        if (t < sp.deadline) {
            ++i;
            continue;
        }
        if (sp.checks > 0) {
            /* A suspicion heard from others: before declaring a death on
             * hearsay, probe the suspect, directly and through k
             * others at the same time (the suspect's entry travels with
             * each, so it learns it must refute); a live one answers with
             * its refutation. The member that suspected first does not
             * wait: its death notice overtakes these checks for a member
             * really gone. */
            s->suspects[i].checks--;
            s->suspects[i].deadline = t + 2 * (uint64_t) s->p.ping_timeout_ms;
            s->stats.checks++;
            send_msg(s, OPAL_SWIM_MSG_PING, sp.rank, sp.rank, s->self, ++s->check_seq);
            ask_relays(s, sp.rank, s->check_seq);
            ++i;
            continue;
        }
        s->suspects[i] = s->suspects[--s->nsuspects];
        declare(s, sp.rank, OPAL_SWIM_DEAD, sp.incarnation);
    }
    if (PROBE_DIRECT == s->phase && t >= s->probe_start + s->p.ping_timeout_ms) {
        s->phase = PROBE_INDIRECT;
        s->stats.indirect++;
        ask_relays(s, s->probe_target, s->probe_seq);
    }
    if (PROBE_INDIRECT == s->phase && t >= s->probe_start + 2 * (uint64_t) s->p.ping_timeout_ms) {
        uint8_t status;
        uint64_t inc;
        s->phase = PROBE_IDLE;
        view_read(s, s->probe_target, &status, &inc);
        if (OPAL_SWIM_ALIVE == status) {
            s->stats.suspected++;
            declare(s, s->probe_target, OPAL_SWIM_SUSPECT, inc);
            /* Tell the suspect itself at once, directly and through k
             * others (its entry leads every message to it): if it lives,
             * its refutation starts from here, as early as the suspicion,
             * and outruns it. Gossip alone would reach it only after most
             * members heard. */
            send_msg(s, OPAL_SWIM_MSG_PING, s->probe_target, s->probe_target, s->self,
                     ++s->check_seq);
            ask_relays(s, s->probe_target, s->check_seq);
        }
    }
    if (PROBE_IDLE == s->phase && t >= s->next_period) {
        start_probe(s, t);
    }
    return opal_swim_next_deadline(s);
}

/* ------------------------------------------------------------ messages */

static bool msg_valid(const opal_swim_t *s, const opal_swim_msg_t *m)
{
    if (m->from >= s->size || m->target >= s->size || m->origin >= s->size || m->from == s->self ||
        m->nupdates > OPAL_SWIM_MAX_UPDATES) {
        return false;
    }
    for (uint32_t i = 0; i < m->nupdates; ++i) {
        if (m->updates[i].rank >= s->size || m->updates[i].status > OPAL_SWIM_DEAD) {
            return false;
        }
    }
    switch (m->type) {
        case OPAL_SWIM_MSG_PING:
            return m->target == s->self;
        case OPAL_SWIM_MSG_PING_REQ:
            return m->origin == m->from && m->target != s->self && m->target != m->from;
        case OPAL_SWIM_MSG_ACK:
            /* To the origin (from the target or a relay), or to a relay
             * from the target itself. */
            return m->origin == s->self || (m->target == m->from && m->origin != m->from);
        default:
            return false;
    }
}

int opal_swim_recv(opal_swim_t *s, const opal_swim_msg_t *m)
{
    if (!msg_valid(s, m)) {
        s->stats.refused++;
        return OPAL_ERR_PROTOCOL;
    }
    s->stats.received++;
    for (uint32_t i = 0; i < m->nupdates; ++i) {
        apply(s, &m->updates[i], false);
    }
    switch (m->type) {
        case OPAL_SWIM_MSG_PING:
            send_msg(s, OPAL_SWIM_MSG_ACK, m->from, s->self, m->origin, m->seq);
            break;
        case OPAL_SWIM_MSG_PING_REQ:
            send_msg(s, OPAL_SWIM_MSG_PING, m->target, m->target, m->origin, m->seq);
            break;
        default:
            if (m->origin != s->self) {
                send_msg(s, OPAL_SWIM_MSG_ACK, m->origin, m->target, m->origin, m->seq);
            } else if (PROBE_IDLE != s->phase && m->seq == s->probe_seq &&
                       m->target == s->probe_target) {
                s->phase = PROBE_IDLE;
            }
            break;
    }
    return OPAL_SUCCESS;
}

/* ----------------------------------------------------------- lifetime */

int opal_swim_create(const opal_swim_params_t *p, uint32_t self, uint32_t size,
                     const opal_swim_ops_t *ops, void *arg, opal_swim_t **out)
{
    const char *why;
    if (NULL == p || NULL == ops || NULL == ops->send || NULL == ops->now_ms || NULL == out ||
        0 == size || size == NO_RANK || self >= size ||
        OPAL_SUCCESS != opal_swim_params_check(p, &why)) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_swim_t *s = calloc(1, sizeof(*s));
    if (NULL == s) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    s->p = *p;
    s->self = self;
    s->size = size;
    s->ops = ops;
    s->arg = arg;
    s->rng = 0 != p->seed ? p->seed : 0x5157494d00000000ull ^ self;
    s->tx_max = p->piggyback_tx;
    if (0 == s->tx_max) {
        uint32_t log2n = 0;
        while (log2n < 32 && ((uint64_t) 1 << log2n) < (uint64_t) size + 1) {
            log2n++;
        }
        s->tx_max = 3 * log2n;
    }
    if (s->tx_max > 64) {
        s->tx_max = 64;
    }
    s->pending_cap = 4 * p->piggyback_entries + 16;
    s->pending = malloc(sizeof(pending_t) * s->pending_cap);
    s->tab = malloc(sizeof(view_entry_t) * 16);
    if (NULL == s->pending || NULL == s->tab) {
        opal_swim_destroy(s);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    s->tab_mask = 15;
    for (uint32_t i = 0; i < 16; ++i) {
        s->tab[i].rank = NO_RANK;
    }
    s->perm_pos = size; /* draws a permutation at the first probe */
    s->phase = PROBE_IDLE;
    s->check_seq = (uint64_t) 1 << 63;
    s->next_period = now(s) + rnd_below(s, p->period_ms);
    *out = s;
    return OPAL_SUCCESS;
}

void opal_swim_destroy(opal_swim_t *s)
{
    if (NULL == s) {
        return;
    }
    free(s->tab);
    free(s->suspects);
    free(s->pending);
    free(s);
}

int opal_swim_member(const opal_swim_t *s, uint32_t rank, opal_swim_status_t *status,
                     uint64_t *incarnation)
{
    if (rank >= s->size) {
        return OPAL_ERR_BAD_PARAM;
    }
    uint8_t st;
    uint64_t inc;
    view_read(s, rank, &st, &inc);
    *status = (opal_swim_status_t) st;
    *incarnation = inc;
    return OPAL_SUCCESS;
}

uint32_t opal_swim_self(const opal_swim_t *s)
{
    return s->self;
}

uint32_t opal_swim_size(const opal_swim_t *s)
{
    return s->size;
}

void opal_swim_stats(const opal_swim_t *s, opal_swim_stats_t *stats)
{
    *stats = s->stats;
}
