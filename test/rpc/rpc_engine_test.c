/* The rpc engine within one process (loopback, no network): requests and
 * replies, error replies, protocol versions and the query, handlers that
 * reply later from another thread, timeouts, aborts, peer failure, late
 * replies, one-way requests, credits, and exactly-once completion under
 * races. The whole suite runs under each sched policy (fifo, prio, pool:
 * handlers are tasks of the context's scheduler), with cases of its own
 * for where handlers run, priorities and prio's admission bound. */
#include "opal/opal_config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/rpc/base/rpc_base_internal.h"
#include "opal/mca/rpc/rpc.h"
#include "opal/mca/sched/sched.h"
#include "opal/runtime/opal_init.h"
#include "opal/threads/opal_mutex.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "test/rpc/rpc_test_types.h"
#include "test/support/opal_test.h"

#define ECHO_IN_FIELDS(X)                                                                          \
    X(uint32_t, value, VAR)                                                                        \
    X(char *, text, STRING)                                                                        \
    X(point, points, ARRAY_STRUCT)
OPAL_RPC_STRUCT(echo_in, ECHO_IN_FIELDS);

#define ECHO_OUT_FIELDS(X)                                                                         \
    X(uint32_t, value, VAR)                                                                        \
    X(char *, text, STRING)                                                                        \
    X(int32_t, sum, VAR)
OPAL_RPC_STRUCT(echo_out, ECHO_OUT_FIELDS);

#define NOTE_IN_FIELDS(X) X(uint32_t, seq, VAR)
OPAL_RPC_STRUCT(note_in, NOTE_IN_FIELDS);

enum {
    OP_ECHO,
    OP_SILENT,
    OP_LATER,
    OP_NOTE,
    OP_HOLD,
    OP_WHERE,        /* replies, recording its thread */
    OP_WHERE_INLINE, /* the same, OPAL_RPC_OP_INLINE */
    OP_BULK,         /* replies, recording its order; priority class 3 */
    OP_URGENT,       /* the same, priority class 0 */
    OP_COUNT
};
#define BASE 0x42

static opal_rpc_context_t *ctx;
static const opal_rpc_endpoint_t self_ep = {.addr = NULL, .ctx_idx = 0};

/* Requests a handler kept (OP_LATER / OP_HOLD) to reply to afterwards. */
static opal_rpc_request_t *held[4096];
static _Atomic int held_count;
static uint32_t notes[4096];
static _Atomic int note_count;
static _Atomic int max_held;
static _Atomic int answered;

static void echo_handler(opal_rpc_request_t *req)
{
    const echo_in_t *in = opal_rpc_req_input(req);
    echo_out_t *out = opal_rpc_req_output(req);
    out->value = in->value + 1;
    out->text = in->text;
    out->sum = 0;
    for (uint32_t i = 0; i < in->points.count; ++i) {
        out->sum += in->points.elems[i].x + in->points.elems[i].y;
    }
    ck_assert_int_eq(opal_rpc_reply_send(req), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_reply_send(req), OPAL_ERR_EXISTS);
}

static void silent_handler(opal_rpc_request_t *req)
{
    (void) req;
}

static void keep_handler(opal_rpc_request_t *req)
{
    opal_rpc_req_addref(req);
    /* One handler thread at a time (the progress thread, or pool's one
     * worker in this suite): one writer. The maximum and the slot are
     * written before the count is published (others read them after). */
    int n = atomic_load(&held_count);
    held[n] = req;
    /* Requests the server holds now: kept minus answered. */
    int holding = n + 1 - atomic_load(&answered);
    if (holding > atomic_load(&max_held)) {
        atomic_store(&max_held, holding);
    }
    atomic_store(&held_count, n + 1);
}

static void note_handler(opal_rpc_request_t *req)
{
    const note_in_t *in = opal_rpc_req_input(req);
    /* One handler thread at a time (as keep_handler): the slot is written
     * before the count that the test thread reads is published. */
    int n = atomic_load(&note_count);
    notes[n] = in->seq;
    atomic_store(&note_count, n + 1);
}

/* The policy this run of the suite selected (OPAL_MCA_sched). */
static const char *policy;
static pthread_t handler_thread;
static uint32_t order[256];
static _Atomic int order_count;

static void where_handler(opal_rpc_request_t *req)
{
    handler_thread = pthread_self();
    ck_assert_int_eq(opal_rpc_reply_send(req), OPAL_SUCCESS);
}

static void order_handler(opal_rpc_request_t *req)
{
    const note_in_t *in = opal_rpc_req_input(req);
    order[atomic_fetch_add(&order_count, 1)] = in->seq;
    ck_assert_int_eq(opal_rpc_reply_send(req), OPAL_SUCCESS);
}

static const opal_rpc_op_t ops_v1[OP_COUNT] = {
    [OP_ECHO] = {.handler = echo_handler, .in = &echo_in_codec, .out = &echo_out_codec},
    [OP_SILENT] = {.handler = silent_handler, .in = &echo_in_codec, .out = &echo_out_codec},
    [OP_LATER] = {.handler = keep_handler, .in = &echo_in_codec, .out = &echo_out_codec},
    [OP_NOTE] = {.handler = note_handler, .in = &note_in_codec, .flags = OPAL_RPC_OP_ONEWAY},
    [OP_HOLD] = {.handler = keep_handler, .in = &note_in_codec},
    [OP_WHERE] = {.handler = where_handler, .in = &note_in_codec},
    [OP_WHERE_INLINE] = {.handler = where_handler,
                         .in = &note_in_codec,
                         .flags = OPAL_RPC_OP_INLINE},
    [OP_BULK] = {.handler = order_handler, .in = &note_in_codec, .priority = 3},
    [OP_URGENT] = {.handler = order_handler, .in = &note_in_codec, .priority = 0},
};
static const opal_rpc_op_t ops_v3[1] = {
    {.handler = echo_handler, .in = &echo_in_codec, .out = &echo_out_codec},
};

static void setup(void)
{
    ck_assert_int_eq(opal_init_util(NULL, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_init(NULL, false), OPAL_SUCCESS);
    /* Handlers really go through the policy of this run. */
    ck_assert_ptr_nonnull(opal_sched_policy_name());
    ck_assert_str_eq(opal_sched_policy_name(), policy);
    const opal_rpc_proto_t v1 = {
        .name = "test", .base = BASE, .version = 1, .count = OP_COUNT, .ops = ops_v1};
    const opal_rpc_proto_t v3 = {
        .name = "test", .base = BASE, .version = 3, .count = 1, .ops = ops_v3};
    ck_assert_int_eq(opal_rpc_proto_register(&v1), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_proto_register(&v3), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_context_create(0, &ctx), OPAL_SUCCESS);
    atomic_store(&held_count, 0);
    atomic_store(&note_count, 0);
    atomic_store(&max_held, 0);
    atomic_store(&answered, 0);
    atomic_store(&order_count, 0);
}

static void teardown(void)
{
    ck_assert_int_eq(opal_rpc_context_destroy(ctx), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_finalize(), OPAL_SUCCESS);
    opal_finalize_util();
}

typedef struct {
    _Atomic int calls;
    int status;
    uint32_t value;
    int32_t sum;
    char text[64];
    char reason[256];
} outcome_t;

static void record(opal_rpc_request_t *req, int status, void *arg)
{
    outcome_t *o = arg;
    o->status = status;
    if (OPAL_SUCCESS == status && NULL != opal_rpc_req_output(req) &&
        OPAL_RPC_OPCODE_INDEX(opal_rpc_req_opcode(req)) <= OP_LATER) {
        const echo_out_t *out = opal_rpc_req_output(req);
        o->value = out->value;
        o->sum = out->sum;
        snprintf(o->text, sizeof(o->text), "%s", NULL == out->text ? "(null)" : out->text);
    }
    const char *why = opal_rpc_req_error_reason(req);
    snprintf(o->reason, sizeof(o->reason), "%s", NULL == why ? "" : why);
    atomic_fetch_add(&o->calls, 1);
}

static bool called(void *arg)
{
    return atomic_load(&((outcome_t *) arg)->calls) > 0;
}

static opal_rpc_request_t *make(uint32_t opcode, uint32_t value)
{
    opal_rpc_request_t *req = NULL;
    ck_assert_int_eq(opal_rpc_req_create(ctx, &self_ep, opcode, &req), OPAL_SUCCESS);
    if (OPAL_RPC_OPCODE_INDEX(opcode) <= OP_LATER) {
        echo_in_t *in = opal_rpc_req_input(req);
        in->value = value;
        in->text = "hi";
    } else {
        note_in_t *in = opal_rpc_req_input(req);
        in->seq = value;
    }
    return req;
}

/* Progresses a little more, for anything that would wrongly come twice. */
static void settle(void)
{
    for (int i = 0; i < 5; ++i) {
        (void) opal_rpc_progress(ctx, 2);
    }
}

START_TEST(request_gets_its_reply)
{
    outcome_t o = {0};
    opal_rpc_request_t *req = make(OPAL_RPC_OPCODE(BASE, 1, OP_ECHO), 41);
    echo_in_t *in = opal_rpc_req_input(req);
    point_t pts[2] = {{1, 2, "a"}, {3, 4, NULL}};
    in->points.count = 2;
    in->points.elems = pts;
    ck_assert_int_eq(opal_rpc_req_send(req, record, &o), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 10000, called, &o), OPAL_SUCCESS);
    settle();
    ck_assert_int_eq(o.calls, 1);
    ck_assert_int_eq(o.status, OPAL_SUCCESS);
    ck_assert_uint_eq(o.value, 42);
    ck_assert_int_eq(o.sum, 10);
    ck_assert_str_eq(o.text, "hi");
}
END_TEST

/* Sends req as if it were for opcode (the server looks that up; the
 * client encoded the input with its own operation's codec). */
static outcome_t *send_as(opal_rpc_request_t *req, uint32_t opcode, outcome_t *o)
{
    req->opcode = opcode;
    ck_assert_int_eq(opal_rpc_req_send(req, record, o), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 10000, called, o), OPAL_SUCCESS);
    settle();
    ck_assert_int_eq(o->calls, 1);
    return o;
}

START_TEST(loopback_carries_arguments_of_any_size)
{
    size_t n = (size_t) 1 << 20;
    char *big = malloc(n + 1);
    memset(big, 'x', n);
    big[n] = '\0';
    for (int k = 0; k < 2; ++k) {
        outcome_t o = {0};
        opal_rpc_request_t *req = make(OPAL_RPC_OPCODE(BASE, 1, OP_ECHO), 1);
        echo_in_t *in = opal_rpc_req_input(req);
        in->text = 0 == k ? "" : big;
        opal_rpc_req_addref(req);
        ck_assert_int_eq(opal_rpc_req_send(req, record, &o), OPAL_SUCCESS);
        ck_assert_int_eq(opal_rpc_progress_cond(ctx, 10000, called, &o), OPAL_SUCCESS);
        ck_assert_int_eq(o.status, OPAL_SUCCESS);
        const echo_out_t *out = opal_rpc_req_output(req);
        ck_assert_uint_eq(strlen(out->text), 0 == k ? 0 : n);
        opal_rpc_req_decref(req);
    }
    free(big);
}
END_TEST

START_TEST(unknown_protocol_is_an_error_reply_with_a_reason)
{
    outcome_t o = {0};
    send_as(make(OPAL_RPC_OPCODE(BASE, 1, OP_ECHO), 1), OPAL_RPC_OPCODE(0x43, 1, 0), &o);
    ck_assert_int_eq(o.status, OPAL_ERR_NOT_FOUND);
    ck_assert_str_eq(o.reason, "protocol 0x43, version 1 not registered at context 0");
}
END_TEST

START_TEST(unregistered_version_is_a_version_mismatch)
{
    outcome_t o = {0};
    send_as(make(OPAL_RPC_OPCODE(BASE, 1, OP_ECHO), 1), OPAL_RPC_OPCODE(BASE, 2, 0), &o);
    ck_assert_int_eq(o.status, OPAL_ERR_VERSION_MISMATCH);
    ck_assert_ptr_nonnull(strstr(o.reason, "version 2 not registered"));
}
END_TEST

START_TEST(input_that_does_not_decode_is_an_error_reply)
{
    outcome_t o = {0};
    /* echo_in's bytes, read by the server as note_in's: trailing bytes. */
    send_as(make(OPAL_RPC_OPCODE(BASE, 1, OP_ECHO), 1), OPAL_RPC_OPCODE(BASE, 1, OP_HOLD), &o);
    ck_assert_int_eq(o.status, OPAL_ERR_PROTOCOL);
    ck_assert_ptr_nonnull(strstr(o.reason, "does not decode as note_in"));
    ck_assert_int_eq(atomic_load(&held_count), 0);
}
END_TEST

START_TEST(index_past_the_protocol_is_refused_at_create)
{
    opal_rpc_request_t *req = NULL;
    ck_assert_int_eq(opal_rpc_req_create(ctx, &self_ep, OPAL_RPC_OPCODE(BASE, 3, 1), &req),
                     OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(opal_rpc_req_create(ctx, &self_ep, OPAL_RPC_OPCODE(BASE, 2, 0), &req),
                     OPAL_ERR_NOT_FOUND);
}
END_TEST

START_TEST(versions_live_side_by_side)
{
    outcome_t o1 = {0}, o3 = {0};
    opal_rpc_request_t *r1 = make(OPAL_RPC_OPCODE(BASE, 1, OP_ECHO), 1);
    opal_rpc_request_t *r3 = make(OPAL_RPC_OPCODE(BASE, 3, 0), 10);
    ck_assert_int_eq(opal_rpc_req_send(r1, record, &o1), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_req_send(r3, record, &o3), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 10000, called, &o1), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 10000, called, &o3), OPAL_SUCCESS);
    ck_assert_int_eq(o1.status, OPAL_SUCCESS);
    ck_assert_int_eq(o3.status, OPAL_SUCCESS);
    ck_assert_uint_eq(o1.value, 2);
    ck_assert_uint_eq(o3.value, 11);
}
END_TEST

START_TEST(registering_a_version_twice_or_a_reserved_base_fails)
{
    const opal_rpc_proto_t again = {
        .name = "t", .base = BASE, .version = 1, .count = 1, .ops = ops_v3};
    const opal_rpc_proto_t reserved = {
        .name = "t", .base = OPAL_RPC_BASE_RESERVED, .version = 1, .count = 1, .ops = ops_v3};
    ck_assert_int_eq(opal_rpc_proto_register(&again), OPAL_ERR_EXISTS);
    ck_assert_int_eq(opal_rpc_proto_register(&reserved), OPAL_ERR_BAD_PARAM);
}
END_TEST

typedef struct {
    _Atomic int calls;
    int status;
    uint8_t version;
} query_t;

static void query_cb(int status, uint8_t version, void *arg)
{
    query_t *q = arg;
    q->status = status;
    q->version = version;
    atomic_fetch_add(&q->calls, 1);
}

static bool query_done(void *arg)
{
    return atomic_load(&((query_t *) arg)->calls) > 0;
}

START_TEST(proto_query_answers_the_highest_served_version)
{
    query_t q = {0}, none = {0};
    const uint8_t asked[] = {1, 2, 3, 4};
    const uint8_t unknown[] = {2, 4};
    ck_assert_int_eq(opal_rpc_proto_query(ctx, &self_ep, BASE, asked, 4, query_cb, &q),
                     OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_proto_query(ctx, &self_ep, BASE, unknown, 2, query_cb, &none),
                     OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 10000, query_done, &q), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 10000, query_done, &none), OPAL_SUCCESS);
    ck_assert_int_eq(q.status, OPAL_SUCCESS);
    ck_assert_uint_eq(q.version, 3);
    ck_assert_int_eq(none.status, OPAL_ERR_NOT_FOUND);
}
END_TEST

START_TEST(handler_that_never_replies_times_out_once)
{
    outcome_t o = {0};
    opal_rpc_request_t *req = make(OPAL_RPC_OPCODE(BASE, 1, OP_SILENT), 1);
    ck_assert_int_eq(opal_rpc_req_set_timeout(req, 0.05), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_req_send(req, record, &o), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 20000, called, &o), OPAL_SUCCESS);
    settle();
    ck_assert_int_eq(o.calls, 1);
    ck_assert_int_eq(o.status, OPAL_ERR_TIMEOUT);
    opal_rpc_stats_t st;
    opal_rpc_context_stats(ctx, &st);
    ck_assert_uint_eq(st.timeouts, 1);
}
END_TEST

START_TEST(reply_after_timeout_is_dropped_and_counted)
{
    outcome_t o = {0};
    opal_rpc_request_t *req = make(OPAL_RPC_OPCODE(BASE, 1, OP_LATER), 1);
    ck_assert_int_eq(opal_rpc_req_set_timeout(req, 0.05), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_req_send(req, record, &o), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 20000, called, &o), OPAL_SUCCESS);
    ck_assert_int_eq(o.status, OPAL_ERR_TIMEOUT);
    ck_assert_int_eq(atomic_load(&held_count), 1);
    ck_assert_int_eq(opal_rpc_reply_send(held[0]), OPAL_SUCCESS);
    opal_rpc_req_decref(held[0]);
    settle();
    ck_assert_int_eq(o.calls, 1);
    opal_rpc_stats_t st;
    opal_rpc_context_stats(ctx, &st);
    ck_assert_uint_eq(st.late_replies, 1);
}
END_TEST

/* Replies are matched by id through a table with a slot per id modulo its
 * size: a request held while thousands of others pass shares its slot
 * with later ones (which then go to the overflow table), and every reply
 * still finds its own request. */
START_TEST(a_request_held_while_thousands_pass_gets_its_own_reply)
{
    outcome_t held_o = {0};
    opal_rpc_request_t *req = make(OPAL_RPC_OPCODE(BASE, 1, OP_LATER), 5);
    ck_assert_int_eq(opal_rpc_req_send(req, record, &held_o), OPAL_SUCCESS);
    while (0 == atomic_load(&held_count)) {
        (void) opal_rpc_progress(ctx, 10);
    }
    /* Some in flight together, so that slots are shared among the
     * passing ones too. */
    enum { TOTAL = 2600, BATCH = 40 };
    static outcome_t o[BATCH];
    for (int done = 0; done < TOTAL; done += BATCH) {
        memset(o, 0, sizeof(o));
        for (int i = 0; i < BATCH; ++i) {
            opal_rpc_request_t *r = make(OPAL_RPC_OPCODE(BASE, 1, OP_ECHO), (uint32_t) (done + i));
            ck_assert_int_eq(opal_rpc_req_send(r, record, &o[i]), OPAL_SUCCESS);
        }
        for (int i = 0; i < BATCH; ++i) {
            ck_assert_int_eq(opal_rpc_progress_cond(ctx, 20000, called, &o[i]), OPAL_SUCCESS);
            ck_assert_int_eq(o[i].status, OPAL_SUCCESS);
            ck_assert_uint_eq(o[i].value, (uint32_t) (done + i) + 1);
        }
    }
    ck_assert_int_eq(atomic_load(&held_o.calls), 0);
    echo_out_t *out = opal_rpc_req_output(held[0]);
    out->value = 9999;
    ck_assert_int_eq(opal_rpc_reply_send(held[0]), OPAL_SUCCESS);
    opal_rpc_req_decref(held[0]);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 20000, called, &held_o), OPAL_SUCCESS);
    settle();
    ck_assert_int_eq(held_o.calls, 1);
    ck_assert_int_eq(held_o.status, OPAL_SUCCESS);
    ck_assert_uint_eq(held_o.value, 9999);
    opal_rpc_stats_t st;
    opal_rpc_context_stats(ctx, &st);
    ck_assert_uint_eq(st.late_replies, 0);
}
END_TEST

static void *reply_from_thread(void *arg)
{
    opal_rpc_request_t *req = arg;
    echo_out_t *out = opal_rpc_req_output(req);
    out->value = 777;
    ck_assert_int_eq(opal_rpc_reply_send(req), OPAL_SUCCESS);
    opal_rpc_req_decref(req);
    return NULL;
}

START_TEST(handler_replies_later_from_another_thread)
{
    outcome_t o = {0};
    opal_set_using_threads(true);
    opal_rpc_request_t *req = make(OPAL_RPC_OPCODE(BASE, 1, OP_LATER), 1);
    ck_assert_int_eq(opal_rpc_req_send(req, record, &o), OPAL_SUCCESS);
    while (0 == atomic_load(&held_count)) {
        (void) opal_rpc_progress(ctx, 10);
    }
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, reply_from_thread, held[0]), 0);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 20000, called, &o), OPAL_SUCCESS);
    pthread_join(t, NULL);
    ck_assert_int_eq(o.status, OPAL_SUCCESS);
    ck_assert_uint_eq(o.value, 777);
}
END_TEST

START_TEST(abort_in_flight_completes_canceled_once)
{
    outcome_t o = {0};
    opal_rpc_request_t *req = make(OPAL_RPC_OPCODE(BASE, 1, OP_SILENT), 1);
    opal_rpc_req_addref(req);
    ck_assert_int_eq(opal_rpc_req_send(req, record, &o), OPAL_SUCCESS);
    settle();
    ck_assert_int_eq(opal_rpc_req_abort(req), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_req_abort(req), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 10000, called, &o), OPAL_SUCCESS);
    settle();
    ck_assert_int_eq(o.calls, 1);
    ck_assert_int_eq(o.status, OPAL_ERR_CANCELED);
    opal_rpc_req_decref(req);
}
END_TEST

START_TEST(abort_after_the_reply_changes_nothing)
{
    outcome_t o = {0};
    opal_rpc_request_t *req = make(OPAL_RPC_OPCODE(BASE, 1, OP_ECHO), 5);
    opal_rpc_req_addref(req);
    ck_assert_int_eq(opal_rpc_req_send(req, record, &o), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 10000, called, &o), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_req_abort(req), OPAL_SUCCESS);
    settle();
    ck_assert_int_eq(o.calls, 1);
    ck_assert_int_eq(o.status, OPAL_SUCCESS);
    opal_rpc_req_decref(req);
}
END_TEST

START_TEST(peer_failure_completes_requests_to_it)
{
    outcome_t o[3] = {{0}};
    for (int i = 0; i < 3; ++i) {
        opal_rpc_request_t *req = make(OPAL_RPC_OPCODE(BASE, 1, OP_SILENT), 1);
        ck_assert_int_eq(opal_rpc_req_send(req, record, &o[i]), OPAL_SUCCESS);
    }
    settle();
    ck_assert_int_eq(opal_rpc_peer_failed(ctx, NULL), OPAL_SUCCESS);
    settle();
    for (int i = 0; i < 3; ++i) {
        ck_assert_int_eq(o[i].calls, 1);
        ck_assert_int_eq(o[i].status, OPAL_ERR_PEER_FAILED);
    }
}
END_TEST

START_TEST(one_way_requests_complete_on_send_and_arrive)
{
    outcome_t o[8] = {{0}};
    for (uint32_t i = 0; i < 8; ++i) {
        opal_rpc_request_t *req = make(OPAL_RPC_OPCODE(BASE, 1, OP_NOTE), i);
        ck_assert_int_eq(opal_rpc_req_send(req, record, &o[i]), OPAL_SUCCESS);
    }
    while (atomic_load(&note_count) < 8) {
        (void) opal_rpc_progress(ctx, 10);
    }
    settle();
    for (uint32_t i = 0; i < 8; ++i) {
        ck_assert_int_eq(o[i].calls, 1);
        ck_assert_int_eq(o[i].status, OPAL_SUCCESS);
        ck_assert_uint_eq(notes[i], i);
    }
}
END_TEST

START_TEST(send_to_a_missing_context_fails_the_request)
{
    outcome_t o = {0};
    const opal_rpc_endpoint_t ep = {.addr = NULL, .ctx_idx = 9};
    opal_rpc_request_t *req = NULL;
    ck_assert_int_eq(opal_rpc_req_create(ctx, &ep, OPAL_RPC_OPCODE(BASE, 1, OP_ECHO), &req),
                     OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_req_send(req, record, &o), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 10000, called, &o), OPAL_SUCCESS);
    ck_assert_int_eq(o.status, OPAL_ERR_UNREACH);
    ck_assert_ptr_nonnull(strstr(o.reason, "context 9"));
}
END_TEST

/* A request reset and sent again gets a reply of its own each round; the
 * previous output (a decoded string) goes with the reset. */
START_TEST(a_request_reset_and_sent_again_gets_a_new_reply_each_time)
{
    opal_rpc_request_t *req = make(OPAL_RPC_OPCODE(BASE, 1, OP_ECHO), 1);
    for (uint32_t round = 0; round < 3; ++round) {
        outcome_t o = {0};
        echo_in_t *in = opal_rpc_req_input(req);
        in->value = 10 * round;
        in->text = round % 2 ? "odd" : "even";
        opal_rpc_req_addref(req); /* kept past the callback */
        ck_assert_int_eq(opal_rpc_req_send(req, record, &o), OPAL_SUCCESS);
        /* Sent: in flight until its callback ran. */
        ck_assert_int_eq(opal_rpc_req_reset(req, NULL), OPAL_ERR_RESOURCE_BUSY);
        ck_assert_int_eq(opal_rpc_progress_cond(ctx, 10000, called, &o), OPAL_SUCCESS);
        settle();
        ck_assert_int_eq(o.calls, 1);
        ck_assert_int_eq(o.status, OPAL_SUCCESS);
        ck_assert_uint_eq(o.value, 10 * round + 1);
        ck_assert_str_eq(o.text, round % 2 ? "odd" : "even");
        ck_assert_int_eq(opal_rpc_req_reset(req, NULL), OPAL_SUCCESS);
        /* Reset: the output is gone, the input stays for the caller. */
        const echo_out_t *out = opal_rpc_req_output(req);
        ck_assert_ptr_null(out->text);
        ck_assert_uint_eq(out->value, 0);
        ck_assert_uint_eq(((echo_in_t *) opal_rpc_req_input(req))->value, 10 * round);
    }
    /* A new target: a context that does not exist fails the send. */
    const opal_rpc_endpoint_t missing = {.addr = NULL, .ctx_idx = 9};
    ck_assert_int_eq(opal_rpc_req_reset(req, &missing), OPAL_SUCCESS);
    outcome_t o = {0};
    ck_assert_int_eq(opal_rpc_req_send(req, record, &o), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 10000, called, &o), OPAL_SUCCESS);
    ck_assert_int_eq(o.status, OPAL_ERR_UNREACH);
    opal_rpc_stats_t st;
    opal_rpc_context_stats(ctx, &st);
    ck_assert_uint_eq(st.completed, 4);
}
END_TEST

/* As hg_rate does: the completion callback sends its request again. */
typedef struct {
    _Atomic int calls;
    uint32_t last;
    int failed;
} chain_t;

static void chain_cb(opal_rpc_request_t *req, int status, void *arg)
{
    chain_t *c = arg;
    const echo_out_t *out = opal_rpc_req_output(req);
    if (OPAL_SUCCESS != status || out->value != c->last + 1) {
        c->failed = OPAL_SUCCESS != status ? status : OPAL_ERROR;
    }
    int n = atomic_fetch_add(&c->calls, 1) + 1;
    if (n < 100 && OPAL_SUCCESS == c->failed) {
        /* The engine's reference holds during the callback: one more is
         * the next send's. */
        if (OPAL_SUCCESS != opal_rpc_req_reset(req, NULL)) {
            c->failed = OPAL_ERROR;
            return;
        }
        echo_in_t *in = opal_rpc_req_input(req);
        c->last = in->value = (uint32_t) n * 3;
        opal_rpc_req_addref(req);
        if (OPAL_SUCCESS != opal_rpc_req_send(req, chain_cb, c)) {
            c->failed = OPAL_ERROR;
        }
    }
}

static bool chain_done(void *arg)
{
    chain_t *c = arg;
    return atomic_load(&c->calls) >= 100 || OPAL_SUCCESS != c->failed;
}

START_TEST(a_callback_may_send_its_request_again)
{
    chain_t c = {.last = 5};
    opal_rpc_request_t *req = make(OPAL_RPC_OPCODE(BASE, 1, OP_ECHO), 5);
    ck_assert_int_eq(opal_rpc_req_send(req, chain_cb, &c), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 20000, chain_done, &c), OPAL_SUCCESS);
    settle();
    ck_assert_int_eq(c.failed, OPAL_SUCCESS);
    ck_assert_int_eq(atomic_load(&c.calls), 100);
    /* The last round's reference was the engine's: nothing is left. */
    opal_rpc_stats_t st;
    opal_rpc_context_stats(ctx, &st);
    ck_assert_uint_eq(st.completed, 100);
}
END_TEST

START_TEST(a_server_request_and_an_unanswered_one_cannot_be_reset)
{
    outcome_t o = {0};
    opal_rpc_request_t *req = make(OPAL_RPC_OPCODE(BASE, 1, OP_LATER), 1);
    opal_rpc_req_addref(req);
    ck_assert_int_eq(opal_rpc_req_send(req, record, &o), OPAL_SUCCESS);
    while (0 == atomic_load(&held_count)) {
        (void) opal_rpc_progress(ctx, 10);
    }
    ck_assert_int_eq(opal_rpc_req_reset(held[0], NULL), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_rpc_req_reset(req, NULL), OPAL_ERR_RESOURCE_BUSY);
    ck_assert_int_eq(opal_rpc_reply_send(held[0]), OPAL_SUCCESS);
    opal_rpc_req_decref(held[0]);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 10000, called, &o), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_req_reset(req, NULL), OPAL_SUCCESS);
    /* Completed (aborted) but its callback not run yet: still busy. */
    outcome_t o2 = {0};
    opal_rpc_req_addref(req);
    ck_assert_int_eq(opal_rpc_req_send(req, record, &o2), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_req_abort(req), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_req_reset(req, NULL), OPAL_ERR_RESOURCE_BUSY);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 10000, called, &o2), OPAL_SUCCESS);
    ck_assert_int_eq(o2.status, OPAL_ERR_CANCELED);
    ck_assert_int_eq(opal_rpc_req_reset(req, NULL), OPAL_SUCCESS);
    opal_rpc_req_decref(req);
    /* The handler kept the second one too (OP_LATER): answer it. */
    while (atomic_load(&held_count) < 2) {
        (void) opal_rpc_progress(ctx, 10);
    }
    (void) opal_rpc_reply_send(held[1]);
    opal_rpc_req_decref(held[1]);
    settle();
}
END_TEST

/* Long timeouts are taken on the coarse clock: the deadline is still
 * never before the fine clock at send plus the timeout, nor later than
 * the slack after it; short ones are exact. */
START_TEST(deadlines_on_the_coarse_clock_are_never_early)
{
    static const double timeouts[] = {OPAL_RPC_COARSE_MIN_S, 60.0, 0.5};
    for (size_t i = 0; i < sizeof(timeouts) / sizeof(timeouts[0]); ++i) {
        outcome_t o = {0};
        opal_rpc_request_t *req = make(OPAL_RPC_OPCODE(BASE, 1, OP_SILENT), 1);
        ck_assert_int_eq(opal_rpc_req_set_timeout(req, timeouts[i]), OPAL_SUCCESS);
        opal_rpc_req_addref(req);
        uint64_t before = opal_timer_ns();
        ck_assert_int_eq(opal_rpc_req_send(req, record, &o), OPAL_SUCCESS);
        uint64_t after = opal_timer_ns();
        uint64_t span = (uint64_t) (timeouts[i] * 1e9);
        uint64_t slack = timeouts[i] >= OPAL_RPC_COARSE_MIN_S ? opal_rpc_engine.coarse_slack_ns : 0;
        ck_assert_uint_ge(slack, timeouts[i] >= OPAL_RPC_COARSE_MIN_S ? 100000000u : 0u);
        ck_assert_uint_ge(req->timer.deadline_ns, before + span);
        ck_assert_uint_le(req->timer.deadline_ns, after + span + slack);
        ck_assert_int_eq(opal_rpc_req_abort(req), OPAL_SUCCESS);
        ck_assert_int_eq(opal_rpc_progress_cond(ctx, 10000, called, &o), OPAL_SUCCESS);
        ck_assert_int_eq(o.status, OPAL_ERR_CANCELED);
        opal_rpc_req_decref(req);
    }
}
END_TEST

START_TEST(requests_between_two_contexts)
{
    opal_rpc_context_t *other = NULL;
    outcome_t o = {0};
    ck_assert_int_eq(opal_rpc_context_create(1, &other), OPAL_SUCCESS);
    const opal_rpc_endpoint_t ep = {.addr = NULL, .ctx_idx = 1};
    opal_rpc_request_t *req = NULL;
    ck_assert_int_eq(opal_rpc_req_create(ctx, &ep, OPAL_RPC_OPCODE(BASE, 1, OP_ECHO), &req),
                     OPAL_SUCCESS);
    ((echo_in_t *) opal_rpc_req_input(req))->value = 8;
    ck_assert_int_eq(opal_rpc_req_send(req, record, &o), OPAL_SUCCESS);
    while (0 == atomic_load(&o.calls)) {
        (void) opal_rpc_progress(other, 1);
        (void) opal_rpc_progress(ctx, 1);
    }
    ck_assert_int_eq(o.status, OPAL_SUCCESS);
    ck_assert_uint_eq(o.value, 9);
    opal_rpc_stats_t st;
    opal_rpc_context_stats(other, &st);
    ck_assert_uint_eq(st.handled, 1);
    ck_assert_int_eq(opal_rpc_context_destroy(other), OPAL_SUCCESS);
}
END_TEST

START_TEST(credits_bound_requests_in_flight_and_keep_order)
{
    enum { N = 4, TOTAL = 20 };
    outcome_t o[TOTAL];
    memset(o, 0, sizeof(o));
    opal_rpc_base_vars.credits = N;
    opal_rpc_base_vars.credit_queue = 16;
    int sent = 0, busy = 0;
    for (uint32_t i = 0; i < TOTAL; ++i) {
        opal_rpc_request_t *req = make(OPAL_RPC_OPCODE(BASE, 1, OP_HOLD), i);
        int rc = opal_rpc_req_send(req, record, &o[i]);
        if (OPAL_SUCCESS == rc) {
            ++sent;
        } else {
            ck_assert_int_eq(rc, OPAL_ERR_RESOURCE_BUSY);
            ++busy;
        }
    }
    /* N in flight and 16 queued fit; the rest were refused. */
    ck_assert_int_eq(sent, N + 16);
    ck_assert_int_eq(busy, TOTAL - N - 16);
    int replied = 0;
    while (replied < sent) {
        (void) opal_rpc_progress(ctx, 1);
        int n = atomic_load(&held_count);
        ck_assert_int_le(n - replied, N);
        if (n > replied) {
            const note_in_t *in = opal_rpc_req_input(held[replied]);
            ck_assert_uint_eq(in->seq, (uint32_t) replied);
            ck_assert_int_eq(opal_rpc_reply_send(held[replied]), OPAL_SUCCESS);
            opal_rpc_req_decref(held[replied]);
            ++replied;
            atomic_store(&answered, replied);
        }
    }
    settle();
    ck_assert_int_le(atomic_load(&max_held), N);
    for (int i = 0; i < sent; ++i) {
        ck_assert_int_eq(o[i].calls, 1);
        ck_assert_int_eq(o[i].status, OPAL_SUCCESS);
    }
    opal_rpc_stats_t st;
    opal_rpc_context_stats(ctx, &st);
    ck_assert_uint_eq(st.queued, 16);
    opal_rpc_base_vars.credits = 0;
    opal_rpc_base_vars.credit_queue = 4096;
}
END_TEST

/* The race: each request has a reply coming from a replier thread, an
 * abort from an aborter thread, a short timeout, and a peer failure now
 * and then; each completes exactly once. */
enum { RACE = 2000 };
static _Atomic(opal_rpc_request_t *) race_reqs[RACE];
static _Atomic int race_calls[RACE];
static _Atomic bool race_stop;

static void race_record(opal_rpc_request_t *req, int status, void *arg)
{
    (void) req;
    (void) status;
    atomic_fetch_add(&race_calls[(intptr_t) arg], 1);
}

/* Answers every request the server holds. Each of the RACE requests
 * reaches the handler, even one its client gave up on first (loopback
 * delivers what was sent), and with pool the handler may run after every
 * client callback did: the replier stops only once it answered all RACE
 * (race_stop, the main thread's, only if the test failed before that). */
static _Atomic int race_answered;

static void *replier(void *arg)
{
    (void) arg;
    int next = 0;
    while (next < RACE && !atomic_load(&race_stop)) {
        if (next < atomic_load(&held_count)) {
            (void) opal_rpc_reply_send(held[next]);
            opal_rpc_req_decref(held[next]);
            ++next;
            atomic_store(&race_answered, next);
        } else {
            /* valgrind runs one thread at a time: a pure spin starves
             * the thread it waits for. */
            sched_yield();
        }
    }
    return NULL;
}

static void *aborter(void *arg)
{
    (void) arg;
    for (int i = 0; i < RACE; i += 2) {
        opal_rpc_request_t *r;
        while (NULL == (r = atomic_load(&race_reqs[i]))) {
            sched_yield();
        }
        (void) opal_rpc_req_abort(r);
        opal_rpc_req_decref(r);
    }
    return NULL;
}

static bool race_all_done(void *arg)
{
    (void) arg;
    for (int i = 0; i < RACE; ++i) {
        if (0 == atomic_load(&race_calls[i])) {
            return false;
        }
    }
    return true;
}

static bool race_all_answered(void *arg)
{
    (void) arg;
    return RACE == atomic_load(&race_answered);
}

START_TEST(reply_timeout_abort_and_failure_race_completes_each_once)
{
    opal_set_using_threads(true);
    atomic_store(&race_stop, false);
    atomic_store(&race_answered, 0);
    for (int i = 0; i < RACE; ++i) {
        atomic_store(&race_reqs[i], NULL);
        atomic_store(&race_calls[i], 0);
    }
    pthread_t rt, at;
    ck_assert_int_eq(pthread_create(&rt, NULL, replier, NULL), 0);
    ck_assert_int_eq(pthread_create(&at, NULL, aborter, NULL), 0);
    for (int i = 0; i < RACE; ++i) {
        opal_rpc_request_t *req = make(OPAL_RPC_OPCODE(BASE, 1, OP_LATER), (uint32_t) i);
        ck_assert_int_eq(opal_rpc_req_set_timeout(req, (i % 3) * 0.0005), OPAL_SUCCESS);
        if (0 == i % 2) {
            opal_rpc_req_addref(req); /* the aborter's */
        }
        ck_assert_int_eq(opal_rpc_req_send(req, race_record, (void *) (intptr_t) i), OPAL_SUCCESS);
        if (0 == i % 2) {
            atomic_store(&race_reqs[i], req);
        }
        (void) opal_rpc_progress(ctx, 0);
        if (0 == i % 97) {
            (void) opal_rpc_peer_failed(ctx, NULL);
        }
    }
    int done = opal_rpc_progress_cond(ctx, 60000, race_all_done, NULL);
    /* The server's side: the handlers that run after their client was
     * answered (or gave up) are replied to too, so the context ends
     * empty. */
    int answered_all = opal_rpc_progress_cond(ctx, 60000, race_all_answered, NULL);
    atomic_store(&race_stop, true);
    pthread_join(rt, NULL);
    pthread_join(at, NULL);
    ck_assert_int_eq(done, OPAL_SUCCESS);
    ck_assert_int_eq(answered_all, OPAL_SUCCESS);
    settle();
    for (int i = 0; i < RACE; ++i) {
        ck_assert_int_eq(atomic_load(&race_calls[i]), 1);
    }
    opal_rpc_stats_t st;
    opal_rpc_context_stats(ctx, &st);
    ck_assert_uint_eq(st.completed, RACE);
}
END_TEST

START_TEST(destroying_a_context_with_requests_is_refused)
{
    outcome_t o = {0};
    opal_rpc_request_t *req = make(OPAL_RPC_OPCODE(BASE, 1, OP_SILENT), 1);
    ck_assert_int_eq(opal_rpc_req_send(req, record, &o), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_context_destroy(ctx), OPAL_ERR_RESOURCE_BUSY);
    opal_rpc_req_abort(req);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 10000, called, &o), OPAL_SUCCESS);
}
END_TEST

START_TEST(pool_handler_runs_on_a_worker_and_replies_from_it)
{
    outcome_t o = {0};
    handler_thread = pthread_self();
    opal_rpc_request_t *req = make(OPAL_RPC_OPCODE(BASE, 1, OP_WHERE), 1);
    ck_assert_int_eq(opal_rpc_req_send(req, record, &o), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 30000, called, &o), OPAL_SUCCESS);
    ck_assert_int_eq(o.status, OPAL_SUCCESS);
    ck_assert(!pthread_equal(handler_thread, pthread_self()));
}
END_TEST

START_TEST(inline_op_runs_on_the_progress_thread)
{
    outcome_t o = {0};
    opal_rpc_request_t *req = make(OPAL_RPC_OPCODE(BASE, 1, OP_WHERE_INLINE), 1);
    ck_assert_int_eq(opal_rpc_req_send(req, record, &o), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 30000, called, &o), OPAL_SUCCESS);
    ck_assert_int_eq(o.status, OPAL_SUCCESS);
    ck_assert(pthread_equal(handler_thread, pthread_self()));
}
END_TEST

/* Outcomes of n requests sent together (progress_cond's condition). */
typedef struct {
    outcome_t *o;
    int n;
} batch_t;

static bool all_called(void *arg)
{
    const batch_t *b = arg;
    for (int i = 0; i < b->n; ++i) {
        if (0 == atomic_load(&b->o[i].calls)) {
            return false;
        }
    }
    return true;
}

START_TEST(prio_urgent_op_passes_queued_bulk_work)
{
    /* 32 bulk requests, then an urgent one, all arriving in one progress
     * round: the urgent handler runs first. */
    outcome_t o[33] = {{0}};
    for (uint32_t i = 0; i < 32; ++i) {
        opal_rpc_request_t *req = make(OPAL_RPC_OPCODE(BASE, 1, OP_BULK), i);
        ck_assert_int_eq(opal_rpc_req_send(req, record, &o[i]), OPAL_SUCCESS);
    }
    opal_rpc_request_t *req = make(OPAL_RPC_OPCODE(BASE, 1, OP_URGENT), 1000);
    ck_assert_int_eq(opal_rpc_req_send(req, record, &o[32]), OPAL_SUCCESS);
    batch_t b = {o, 33};
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 30000, all_called, &b), OPAL_SUCCESS);
    ck_assert_int_eq(atomic_load(&order_count), 33);
    ck_assert_uint_eq(order[0], 1000);
    for (uint32_t i = 0; i < 32; ++i) {
        ck_assert_int_eq(o[i].status, OPAL_SUCCESS);
        ck_assert_uint_eq(order[i + 1], i); /* bulk keeps its own order */
    }
}
END_TEST

static void setup_bounded(void)
{
    setenv("OPAL_MCA_sched_prio_max_queued", "4", 1);
    setup();
}

static void teardown_bounded(void)
{
    teardown();
    unsetenv("OPAL_MCA_sched_prio_max_queued");
}

START_TEST(prio_refusal_past_the_bound_is_a_busy_reply)
{
    /* 16 requests of one class arrive together; the bound admits 4, the
     * client sees the 12 others fail busy, with a reason. */
    outcome_t o[16] = {{0}};
    for (uint32_t i = 0; i < 16; ++i) {
        opal_rpc_request_t *req = make(OPAL_RPC_OPCODE(BASE, 1, OP_BULK), i);
        ck_assert_int_eq(opal_rpc_req_send(req, record, &o[i]), OPAL_SUCCESS);
    }
    batch_t b = {o, 16};
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 30000, all_called, &b), OPAL_SUCCESS);
    int ok = 0, busy = 0;
    for (int i = 0; i < 16; ++i) {
        ck_assert_int_eq(atomic_load(&o[i].calls), 1);
        if (OPAL_SUCCESS == o[i].status) {
            ++ok;
        } else {
            ck_assert_int_eq(o[i].status, OPAL_ERR_RESOURCE_BUSY);
            ck_assert_ptr_nonnull(strstr(o[i].reason, "cannot run opcode"));
            ++busy;
        }
    }
    ck_assert_int_eq(ok, 4);
    ck_assert_int_eq(busy, 12);
    ck_assert_int_eq(atomic_load(&order_count), 4);
}
END_TEST

static void add(Suite *s, const TTest *t)
{
    TCase *tc = tcase_create(t->name);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, t);
    suite_add_tcase(s, tc);
}

static Suite *engine_suite(const char *name)
{
    Suite *s = suite_create(name);
    add(s, request_gets_its_reply);
    add(s, loopback_carries_arguments_of_any_size);
    add(s, unknown_protocol_is_an_error_reply_with_a_reason);
    add(s, unregistered_version_is_a_version_mismatch);
    add(s, input_that_does_not_decode_is_an_error_reply);
    add(s, index_past_the_protocol_is_refused_at_create);
    add(s, versions_live_side_by_side);
    add(s, registering_a_version_twice_or_a_reserved_base_fails);
    add(s, proto_query_answers_the_highest_served_version);
    add(s, handler_that_never_replies_times_out_once);
    add(s, reply_after_timeout_is_dropped_and_counted);
    add(s, handler_replies_later_from_another_thread);
    add(s, abort_in_flight_completes_canceled_once);
    add(s, abort_after_the_reply_changes_nothing);
    add(s, peer_failure_completes_requests_to_it);
    add(s, one_way_requests_complete_on_send_and_arrive);
    add(s, send_to_a_missing_context_fails_the_request);
    add(s, a_request_reset_and_sent_again_gets_a_new_reply_each_time);
    add(s, a_callback_may_send_its_request_again);
    add(s, a_server_request_and_an_unanswered_one_cannot_be_reset);
    add(s, deadlines_on_the_coarse_clock_are_never_early);
    add(s, requests_between_two_contexts);
    add(s, credits_bound_requests_in_flight_and_keep_order);
    add(s, a_request_held_while_thousands_pass_gets_its_own_reply);
    add(s, reply_timeout_abort_and_failure_race_completes_each_once);
    add(s, destroying_a_context_with_requests_is_refused);
    add(s, inline_op_runs_on_the_progress_thread);
    if (0 == strcmp(policy, "pool")) {
        add(s, pool_handler_runs_on_a_worker_and_replies_from_it);
    }
    if (0 == strcmp(policy, "prio")) {
        add(s, prio_urgent_op_passes_queued_bulk_work);
        TCase *tc = tcase_create("prio_refusal_past_the_bound_is_a_busy_reply");
        tcase_add_checked_fixture(tc, setup_bounded, teardown_bounded);
        tcase_add_test(tc, prio_refusal_past_the_bound_is_a_busy_reply);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void)
{
    /* The suite once per policy. pool runs it with one worker: the cases
     * that check the order handlers ran in (one-way notes, credits) and
     * keep_handler's single writer presume one handler thread at a time;
     * more workers are test/sched's business. */
    static const char *const policies[] = {"fifo", "prio", "pool"};
    static const char *const names[] = {"rpc_engine/fifo", "rpc_engine/prio", "rpc_engine/pool"};
    int rc = EXIT_SUCCESS;
    setenv("OPAL_MCA_mca_base_component_path", RPC_TEST_PLUGIN_DIRS, 1);
    setenv("OPAL_MCA_sched_pool_workers", "1", 1);
    /* Under valgrind (one thread at a time, 50x slower) fifo alone: the
     * other policies run in the gcc, sanitizer and TSan steps. */
    size_t npolicies = NULL != getenv("OPAL_TEST_UNDER_VALGRIND") ? 1 : 3;
    for (size_t i = 0; i < npolicies; ++i) {
        policy = policies[i];
        setenv("OPAL_MCA_sched", policy, 1);
        if (EXIT_SUCCESS != opal_test_run(engine_suite(names[i]))) {
            rc = EXIT_FAILURE;
        }
    }
    return rc;
}
