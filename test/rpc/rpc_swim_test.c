/*
 * The SWIM state machine (opal/mca/rpc/rpc_swim.h) over a fake ops table:
 * a clock the test moves, an outbox the test reads and delivers by hand,
 * and a log of the events. Also its wire format and its variables.
 */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_open.h"
#include "opal/mca/rpc/rpc_swim.h"
#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

#define MAX_MEMBERS 8
#define MAX_OUT     256
#define MAX_EVENTS  64

typedef struct sent_t {
    uint32_t to;
    opal_swim_msg_t msg;
} sent_t;

typedef struct event_t {
    uint32_t observer, rank;
    opal_swim_status_t status;
    uint64_t incarnation;
} event_t;

/* One fake world: the members share the clock, the outbox and the log. */
typedef struct world_t {
    uint64_t now;
    uint32_t n;
    opal_swim_t *m[MAX_MEMBERS];
    struct member_arg_t {
        struct world_t *w;
        uint32_t rank;
    } args[MAX_MEMBERS];
    sent_t out[MAX_OUT];
    int nout;
    event_t ev[MAX_EVENTS];
    int nev;
} world_t;

static int fake_send(void *arg, uint32_t to, const opal_swim_msg_t *msg)
{
    world_t *w = ((struct member_arg_t *) arg)->w;
    ck_assert_int_lt(w->nout, MAX_OUT);
    w->out[w->nout].to = to;
    w->out[w->nout].msg = *msg;
    w->nout++;
    return OPAL_SUCCESS;
}

static uint64_t fake_now(void *arg)
{
    return ((struct member_arg_t *) arg)->w->now;
}

static void fake_event(void *arg, uint32_t rank, opal_swim_status_t status, uint64_t inc)
{
    struct member_arg_t *a = arg;
    world_t *w = a->w;
    ck_assert_int_lt(w->nev, MAX_EVENTS);
    w->ev[w->nev++] = (event_t){a->rank, rank, status, inc};
}

static const opal_swim_ops_t fake_ops = {
    .send = fake_send, .now_ms = fake_now, .event = fake_event};

static void world_init(world_t *w, uint32_t n, const opal_swim_params_t *p)
{
    memset(w, 0, sizeof(*w));
    w->now = 1000000;
    w->n = n;
    for (uint32_t i = 0; i < n; ++i) {
        w->args[i].w = w;
        w->args[i].rank = i;
        ck_assert_int_eq(opal_swim_create(p, i, n, &fake_ops, &w->args[i], &w->m[i]), OPAL_SUCCESS);
    }
}

static void world_fini(world_t *w)
{
    for (uint32_t i = 0; i < w->n; ++i) {
        opal_swim_destroy(w->m[i]);
    }
}

static opal_swim_params_t params(void)
{
    opal_swim_params_t p;
    opal_swim_params_default(&p);
    return p;
}

/* Delivers every message in the outbox (and what they cause) except
 * those to or from a member in `down`; returns how many were delivered. */
static int deliver_all(world_t *w, uint32_t down)
{
    int delivered = 0;
    while (w->nout > 0) {
        sent_t s = w->out[0];
        memmove(&w->out[0], &w->out[1], sizeof(sent_t) * (size_t) --w->nout);
        if (s.to == down || s.msg.from == down) {
            continue;
        }
        ck_assert_int_eq(opal_swim_recv(w->m[s.to], &s.msg), OPAL_SUCCESS);
        delivered++;
    }
    return delivered;
}

static opal_swim_status_t status_of(world_t *w, uint32_t observer, uint32_t rank, uint64_t *inc)
{
    opal_swim_status_t st;
    uint64_t i;
    ck_assert_int_eq(opal_swim_member(w->m[observer], rank, &st, &i), OPAL_SUCCESS);
    if (NULL != inc) {
        *inc = i;
    }
    return st;
}

static opal_swim_msg_t msg_from(uint8_t type, uint32_t from, uint32_t target, uint32_t origin)
{
    opal_swim_msg_t m;
    memset(&m, 0, sizeof(m));
    m.type = type;
    m.from = from;
    m.target = target;
    m.origin = origin;
    m.seq = 77;
    return m;
}

static void add(opal_swim_msg_t *m, uint32_t rank, uint8_t status, uint64_t inc)
{
    m->updates[m->nupdates++] = (opal_swim_update_t){rank, status, inc};
}

/* Moves the clock to member's next deadline and ticks it. */
static void tick_member(world_t *w, uint32_t member)
{
    uint64_t next = opal_swim_next_deadline(w->m[member]);
    if (next > w->now) {
        w->now = next;
    }
    (void) opal_swim_tick(w->m[member]);
}

START_TEST(a_ping_is_answered_with_an_ack_carrying_updates)
{
    world_t w;
    opal_swim_params_t p = params();
    world_init(&w, 3, &p);
    opal_swim_msg_t m = msg_from(OPAL_SWIM_MSG_PING, 1, 0, 1);
    ck_assert_int_eq(opal_swim_recv(w.m[0], &m), OPAL_SUCCESS);
    ck_assert_int_eq(w.nout, 1);
    ck_assert_uint_eq(w.out[0].to, 1);
    ck_assert_uint_eq(w.out[0].msg.type, OPAL_SWIM_MSG_ACK);
    ck_assert_uint_eq(w.out[0].msg.seq, 77);
    ck_assert_uint_eq(w.out[0].msg.target, 0);
    /* The receiver's entry and the sender's own lead every message. */
    ck_assert_uint_ge(w.out[0].msg.nupdates, 2);
    ck_assert_uint_eq(w.out[0].msg.updates[0].rank, 1);
    ck_assert_uint_eq(w.out[0].msg.updates[1].rank, 0);
    world_fini(&w);
}
END_TEST

START_TEST(a_suspected_member_refutes_with_a_higher_incarnation)
{
    world_t w;
    opal_swim_params_t p = params();
    world_init(&w, 3, &p);
    /* Member 1 hears that 0 is suspect: it says so, with the incarnation. */
    opal_swim_msg_t m = msg_from(OPAL_SWIM_MSG_PING, 2, 1, 2);
    add(&m, 0, OPAL_SWIM_SUSPECT, 0);
    ck_assert_int_eq(opal_swim_recv(w.m[1], &m), OPAL_SUCCESS);
    ck_assert_int_eq(status_of(&w, 1, 0, NULL), OPAL_SWIM_SUSPECT);
    ck_assert_int_eq(w.nev, 1);
    ck_assert_int_eq(w.ev[0].status, OPAL_SWIM_SUSPECT);
    w.nout = 0;
    /* 1 pings 0 with 0's entry (suspect): 0 refutes, its ack says alive
     * at incarnation 1, and 1 takes it back. */
    opal_swim_msg_t ping = msg_from(OPAL_SWIM_MSG_PING, 1, 0, 1);
    add(&ping, 0, OPAL_SWIM_SUSPECT, 0);
    ck_assert_int_eq(opal_swim_recv(w.m[0], &ping), OPAL_SUCCESS);
    uint64_t inc;
    ck_assert_int_eq(status_of(&w, 0, 0, &inc), OPAL_SWIM_ALIVE);
    ck_assert_uint_eq(inc, 1);
    ck_assert_int_eq(deliver_all(&w, UINT32_MAX), 1);
    ck_assert_int_eq(status_of(&w, 1, 0, &inc), OPAL_SWIM_ALIVE);
    ck_assert_uint_eq(inc, 1);
    ck_assert_int_eq(w.nev, 2);
    ck_assert_uint_eq(w.ev[1].observer, 1);
    ck_assert_int_eq(w.ev[1].status, OPAL_SWIM_ALIVE);
    ck_assert_uint_eq(w.ev[1].incarnation, 1);
    opal_swim_stats_t st;
    opal_swim_stats(w.m[0], &st);
    ck_assert_uint_eq(st.refutations, 1);
    world_fini(&w);
}
END_TEST

START_TEST(a_silent_member_is_suspected_then_declared_dead_after_the_timeout)
{
    world_t w;
    opal_swim_params_t p = params();
    world_init(&w, 2, &p);
    /* Member 0 pings 1, nothing comes back (no one to relay in a group
     * of two): suspect after two ping timeouts, dead a suspicion timeout
     * after that. */
    tick_member(&w, 0);
    ck_assert_int_eq(w.nout, 1);
    ck_assert_uint_eq(w.out[0].msg.type, OPAL_SWIM_MSG_PING);
    uint64_t start = w.now;
    w.nout = 0;
    tick_member(&w, 0);
    ck_assert_uint_eq(w.now, start + p.ping_timeout_ms);
    ck_assert_int_eq(w.nout, 0);
    tick_member(&w, 0);
    ck_assert_uint_eq(w.now, start + 2 * p.ping_timeout_ms);
    ck_assert_int_eq(status_of(&w, 0, 1, NULL), OPAL_SWIM_SUSPECT);
    ck_assert_int_eq(w.nev, 1);
    /* The suspect is told at once (its own entry leads the ping; a new
     * period's probe may follow). */
    ck_assert_int_ge(w.nout, 1);
    ck_assert_uint_eq(w.out[0].to, 1);
    ck_assert_uint_eq(w.out[0].msg.updates[0].rank, 1);
    ck_assert_uint_eq(w.out[0].msg.updates[0].status, OPAL_SWIM_SUSPECT);
    uint64_t suspected_at = w.now;
    while (OPAL_SWIM_SUSPECT == status_of(&w, 0, 1, NULL)) {
        w.nout = 0;
        tick_member(&w, 0);
    }
    ck_assert_int_eq(status_of(&w, 0, 1, NULL), OPAL_SWIM_DEAD);
    ck_assert_uint_eq(w.now, suspected_at + p.suspect_timeout_ms);
    ck_assert_int_eq(w.nev, 2);
    ck_assert_int_eq(w.ev[1].status, OPAL_SWIM_DEAD);
    ck_assert_uint_eq(w.ev[1].rank, 1);
    world_fini(&w);
}
END_TEST

START_TEST(an_indirect_ping_saves_a_member_the_direct_ping_missed)
{
    world_t w;
    opal_swim_params_t p = params();
    p.indirect_count = 1;
    world_init(&w, 3, &p);
    tick_member(&w, 0);
    ck_assert_int_eq(w.nout, 1);
    uint32_t target = w.out[0].to;
    uint32_t relay = 3 - target; /* the other one of 1 and 2 */
    w.nout = 0;                  /* the direct ping is lost */
    tick_member(&w, 0);
    ck_assert_int_eq(w.nout, 1);
    ck_assert_uint_eq(w.out[0].to, relay);
    ck_assert_uint_eq(w.out[0].msg.type, OPAL_SWIM_MSG_PING_REQ);
    ck_assert_uint_eq(w.out[0].msg.target, target);
    /* ping-req -> relay pings target -> target acks relay -> relay
     * forwards the ack to 0. */
    ck_assert_int_eq(deliver_all(&w, UINT32_MAX), 4);
    tick_member(&w, 0); /* the probe's end: nothing to suspect */
    ck_assert_int_eq(status_of(&w, 0, target, NULL), OPAL_SWIM_ALIVE);
    ck_assert_int_eq(w.nev, 0);
    opal_swim_stats_t st;
    opal_swim_stats(w.m[0], &st);
    ck_assert_uint_eq(st.indirect, 1);
    ck_assert_uint_eq(st.suspected, 0);
    world_fini(&w);
}
END_TEST

START_TEST(piggybacked_updates_reach_every_member)
{
    world_t w;
    opal_swim_params_t p = params();
    p.suspect_timeout_ms = 3000;
    world_init(&w, MAX_MEMBERS, &p);
    const uint32_t down = 5;
    /* Everyone but 5 runs for 60 periods; messages to 5 are lost. */
    for (int step = 0; step < 60 * 20; ++step) {
        w.now += 50;
        for (uint32_t i = 0; i < w.n; ++i) {
            if (i != down) {
                (void) opal_swim_tick(w.m[i]);
            }
        }
        deliver_all(&w, down);
    }
    int deaths = 0;
    for (uint32_t i = 0; i < w.n; ++i) {
        if (i == down) {
            continue;
        }
        ck_assert_int_eq(status_of(&w, i, down, NULL), OPAL_SWIM_DEAD);
        for (uint32_t r = 0; r < w.n; ++r) {
            if (r != down) {
                ck_assert_int_eq(status_of(&w, i, r, NULL), OPAL_SWIM_ALIVE);
            }
        }
    }
    /* One dead event per survivor, about 5 and no one else. */
    for (int e = 0; e < w.nev; ++e) {
        ck_assert_uint_eq(w.ev[e].rank, down);
        deaths += OPAL_SWIM_DEAD == w.ev[e].status;
    }
    ck_assert_int_eq(deaths, MAX_MEMBERS - 1);
    world_fini(&w);
}
END_TEST

START_TEST(a_dead_member_stays_dead)
{
    world_t w;
    opal_swim_params_t p = params();
    world_init(&w, 4, &p);
    opal_swim_msg_t m = msg_from(OPAL_SWIM_MSG_PING, 1, 0, 1);
    add(&m, 3, OPAL_SWIM_DEAD, 2);
    ck_assert_int_eq(opal_swim_recv(w.m[0], &m), OPAL_SUCCESS);
    ck_assert_int_eq(status_of(&w, 0, 3, NULL), OPAL_SWIM_DEAD);
    ck_assert_int_eq(w.nev, 1);
    /* Alive at a higher incarnation, or suspect: dead is final. */
    opal_swim_msg_t again = msg_from(OPAL_SWIM_MSG_PING, 2, 0, 2);
    add(&again, 3, OPAL_SWIM_ALIVE, 9);
    add(&again, 3, OPAL_SWIM_SUSPECT, 10);
    ck_assert_int_eq(opal_swim_recv(w.m[0], &again), OPAL_SUCCESS);
    uint64_t inc;
    ck_assert_int_eq(status_of(&w, 0, 3, &inc), OPAL_SWIM_DEAD);
    ck_assert_uint_eq(inc, 2);
    ck_assert_int_eq(w.nev, 1);
    opal_swim_stats_t st;
    opal_swim_stats(w.m[0], &st);
    ck_assert_uint_eq(st.stale, 2);
    /* And it is never pinged again. */
    for (int k = 0; k < 20; ++k) {
        w.nout = 0;
        tick_member(&w, 0);
        for (int i = 0; i < w.nout; ++i) {
            ck_assert_uint_ne(w.out[i].to, 3);
        }
        deliver_all(&w, 3);
    }
    world_fini(&w);
}
END_TEST

START_TEST(stale_updates_are_ignored)
{
    world_t w;
    opal_swim_params_t p = params();
    world_init(&w, 4, &p);
    opal_swim_msg_t m = msg_from(OPAL_SWIM_MSG_PING, 1, 0, 1);
    add(&m, 2, OPAL_SWIM_ALIVE, 5);
    ck_assert_int_eq(opal_swim_recv(w.m[0], &m), OPAL_SUCCESS);
    /* Suspect and dead at older incarnations change nothing. */
    opal_swim_msg_t old = msg_from(OPAL_SWIM_MSG_PING, 3, 0, 3);
    add(&old, 2, OPAL_SWIM_SUSPECT, 4);
    add(&old, 2, OPAL_SWIM_DEAD, 3);
    add(&old, 2, OPAL_SWIM_ALIVE, 1);
    ck_assert_int_eq(opal_swim_recv(w.m[0], &old), OPAL_SUCCESS);
    uint64_t inc;
    ck_assert_int_eq(status_of(&w, 0, 2, &inc), OPAL_SWIM_ALIVE);
    ck_assert_uint_eq(inc, 5);
    ck_assert_int_eq(w.nev, 0);
    opal_swim_stats_t st;
    opal_swim_stats(w.m[0], &st);
    ck_assert_uint_eq(st.stale, 3);
    /* A suspicion at the same incarnation does count. */
    opal_swim_msg_t same = msg_from(OPAL_SWIM_MSG_PING, 3, 0, 3);
    add(&same, 2, OPAL_SWIM_SUSPECT, 5);
    ck_assert_int_eq(opal_swim_recv(w.m[0], &same), OPAL_SUCCESS);
    ck_assert_int_eq(status_of(&w, 0, 2, NULL), OPAL_SWIM_SUSPECT);
    world_fini(&w);
}
END_TEST

START_TEST(bad_messages_are_refused_whole)
{
    world_t w;
    opal_swim_params_t p = params();
    world_init(&w, 4, &p);
    opal_swim_msg_t bad[6];
    bad[0] = msg_from(OPAL_SWIM_MSG_PING, 9, 0, 9);     /* sender out of the group */
    bad[1] = msg_from(OPAL_SWIM_MSG_PING, 1, 2, 1);     /* a ping for someone else */
    bad[2] = msg_from(OPAL_SWIM_MSG_PING, 0, 0, 0);     /* from itself */
    bad[3] = msg_from(OPAL_SWIM_MSG_PING_REQ, 1, 1, 1); /* relay a ping to the asker */
    bad[4] = msg_from(7, 1, 0, 1);                      /* unknown type */
    bad[5] = msg_from(OPAL_SWIM_MSG_PING, 1, 0, 1);     /* an update out of the group */
    add(&bad[5], 2, OPAL_SWIM_DEAD, 0);
    add(&bad[5], 4, OPAL_SWIM_DEAD, 0);
    for (int i = 0; i < 6; ++i) {
        ck_assert_int_eq(opal_swim_recv(w.m[0], &bad[i]), OPAL_ERR_PROTOCOL);
    }
    ck_assert_int_eq(w.nout, 0);
    ck_assert_int_eq(w.nev, 0);
    /* Nothing of the last one applied, not even its valid update. */
    ck_assert_int_eq(status_of(&w, 0, 2, NULL), OPAL_SWIM_ALIVE);
    opal_swim_stats_t st;
    opal_swim_stats(w.m[0], &st);
    ck_assert_uint_eq(st.refused, 6);
    ck_assert_uint_eq(st.received, 0);
    world_fini(&w);
}
END_TEST

START_TEST(the_same_seed_makes_the_same_choices)
{
    opal_swim_params_t p = params();
    p.seed = 1234;
    uint32_t targets[2][40];
    for (int run = 0; run < 2; ++run) {
        world_t w;
        world_init(&w, MAX_MEMBERS, &p);
        for (int k = 0; k < 40; ++k) {
            w.nout = 0;
            tick_member(&w, 0);
            while (0 == w.nout || OPAL_SWIM_MSG_PING != w.out[0].msg.type) {
                w.nout = 0;
                tick_member(&w, 0);
            }
            targets[run][k] = w.out[0].to;
            deliver_all(&w, UINT32_MAX);
        }
        world_fini(&w);
    }
    ck_assert_int_eq(memcmp(targets[0], targets[1], sizeof(targets[0])), 0);
    /* Round robin: each of the 7 others once in every 7 probes. */
    for (int round = 0; round < 5; ++round) {
        uint32_t seen = 0;
        for (int k = 0; k < 7; ++k) {
            seen |= 1u << targets[0][round * 7 + k];
        }
        ck_assert_uint_eq(seen, 0xfeu);
    }
}
END_TEST

START_TEST(messages_survive_the_wire)
{
    opal_swim_msg_t m = msg_from(OPAL_SWIM_MSG_ACK, 3, 4, 5);
    m.seq = 0x1122334455667788ull;
    add(&m, 1, OPAL_SWIM_SUSPECT, 42);
    add(&m, 0xfffffffe, OPAL_SWIM_DEAD, UINT64_MAX);
    uint8_t buf[2048];
    size_t len = 0;
    ck_assert_int_eq(opal_swim_msg_encode(&m, buf, sizeof(buf), &len), OPAL_SUCCESS);
    ck_assert_uint_eq(len, opal_swim_msg_size(&m));
    ck_assert_uint_eq(len, 24 + 2 * 13);
    opal_swim_msg_t d;
    const char *why = NULL;
    ck_assert_int_eq(opal_swim_msg_decode(&d, buf, len, &why), OPAL_SUCCESS);
    ck_assert_uint_eq(d.type, m.type);
    ck_assert_uint_eq(d.from, 3);
    ck_assert_uint_eq(d.target, 4);
    ck_assert_uint_eq(d.origin, 5);
    ck_assert_uint_eq(d.seq, m.seq);
    ck_assert_uint_eq(d.nupdates, 2);
    ck_assert_uint_eq(d.updates[1].rank, 0xfffffffe);
    ck_assert_uint_eq(d.updates[1].status, OPAL_SWIM_DEAD);
    ck_assert_uint_eq(d.updates[1].incarnation, UINT64_MAX);
    /* Too small a buffer is refused, not overrun. */
    ck_assert_int_eq(opal_swim_msg_encode(&m, buf, len - 1, &len), OPAL_ERR_BAD_PARAM);
}
END_TEST

START_TEST(malformed_messages_are_refused_with_a_reason)
{
    opal_swim_msg_t m = msg_from(OPAL_SWIM_MSG_PING, 1, 0, 1);
    add(&m, 1, OPAL_SWIM_ALIVE, 0);
    uint8_t buf[256], bad[256];
    size_t len;
    ck_assert_int_eq(opal_swim_msg_encode(&m, buf, sizeof(buf), &len), OPAL_SUCCESS);
    opal_swim_msg_t d;
    const char *why;
    struct {
        size_t at;
        uint8_t value;
        size_t len;
        const char *reason;
    } cases[] = {
        {0, 0x00, 0, "bad magic"},  {1, 0x02, 0, "version"},         {2, 0x09, 0, "type"},
        {3, 65, 0, "more than 64"}, {3, 2, 0, "does not match"},     {24 + 4, 3, 0, "status"},
        {0, 0x53, 10, "shorter"},   {0, 0x53, 36, "does not match"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        memcpy(bad, buf, len);
        bad[cases[i].at] = cases[i].value;
        size_t n = 0 == cases[i].len ? len : cases[i].len;
        why = NULL;
        ck_assert_int_eq(opal_swim_msg_decode(&d, bad, n, &why), OPAL_ERR_PROTOCOL);
        ck_assert_ptr_nonnull(why);
        ck_assert_msg(NULL != strstr(why, cases[i].reason), "case %zu: %s", i, why);
    }
}
END_TEST

START_TEST(parameters_are_checked)
{
    opal_swim_params_t p = params();
    const char *why = NULL;
    ck_assert_int_eq(opal_swim_params_check(&p, &why), OPAL_SUCCESS);
    p.ping_timeout_ms = p.period_ms + 1;
    ck_assert_int_eq(opal_swim_params_check(&p, &why), OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_nonnull(strstr(why, "rpc_swim_ping_timeout_ms"));
    p = params();
    p.piggyback_entries = 62;
    ck_assert_int_eq(opal_swim_params_check(&p, &why), OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_nonnull(strstr(why, "rpc_swim_piggyback_entries"));
    opal_swim_t *s = NULL;
    opal_swim_ops_t ops = fake_ops;
    ck_assert_int_eq(opal_swim_create(&p, 0, 4, &ops, NULL, &s), OPAL_ERR_BAD_PARAM);
    p = params();
    ck_assert_int_eq(opal_swim_create(&p, 4, 4, &ops, NULL, &s), OPAL_ERR_BAD_PARAM);
}
END_TEST

START_TEST(variables_set_the_parameters)
{
    setenv("OPAL_MCA_rpc_swim_period_ms", "200", 1);
    setenv("OPAL_MCA_rpc_swim_ping_timeout_ms", "150", 1);
    setenv("OPAL_MCA_rpc_swim_suspect_timeout_ms", "2000", 1);
    ck_assert_int_eq(opal_init_util(NULL, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(mca_base_open(), OPAL_SUCCESS);
    opal_swim_params_t p;
    ck_assert_int_eq(opal_swim_params_from_vars(&p), OPAL_SUCCESS);
    ck_assert_uint_eq(p.period_ms, 200);
    ck_assert_uint_eq(p.ping_timeout_ms, 150);
    ck_assert_uint_eq(p.suspect_timeout_ms, 2000);
    ck_assert_uint_eq(p.indirect_count, 2);
    ck_assert_uint_eq(p.piggyback_entries, 8);
    (void) mca_base_close();
    (void) opal_finalize_util();
    unsetenv("OPAL_MCA_rpc_swim_period_ms");
    unsetenv("OPAL_MCA_rpc_swim_ping_timeout_ms");
    unsetenv("OPAL_MCA_rpc_swim_suspect_timeout_ms");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rpc_swim");
    OPAL_TEST_ADD(s, a_ping_is_answered_with_an_ack_carrying_updates);
    OPAL_TEST_ADD(s, a_suspected_member_refutes_with_a_higher_incarnation);
    OPAL_TEST_ADD(s, a_silent_member_is_suspected_then_declared_dead_after_the_timeout);
    OPAL_TEST_ADD(s, an_indirect_ping_saves_a_member_the_direct_ping_missed);
    OPAL_TEST_ADD(s, piggybacked_updates_reach_every_member);
    OPAL_TEST_ADD(s, a_dead_member_stays_dead);
    OPAL_TEST_ADD(s, stale_updates_are_ignored);
    OPAL_TEST_ADD(s, bad_messages_are_refused_whole);
    OPAL_TEST_ADD(s, the_same_seed_makes_the_same_choices);
    OPAL_TEST_ADD(s, messages_survive_the_wire);
    OPAL_TEST_ADD(s, malformed_messages_are_refused_with_a_reason);
    OPAL_TEST_ADD(s, parameters_are_checked);
    OPAL_TEST_ADD(s, variables_set_the_parameters);
    return opal_test_run(s);
}
