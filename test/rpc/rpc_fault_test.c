/* The rpc engine's fault sites (opal/util/opal_fault.h), configured as a
 * user would: a file named by the MCA variable opal_fault_config, read when
 * opal_init_util opens the MCA base. Within one process (loopback), with
 * one credit per target so that a request that never completes would
 * hold back the one queued behind it: a dropped request and a lost reply
 * time out once; a reply held past its request's timeout arrives late
 * and is counted; a reply held less than the timeout arrives; the engine's
 * own requests are not dropped. Skips in builds without fault sites. */
#include "opal/opal_config.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/rpc/rpc.h"
#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_fault.h"
#include "test/support/opal_test.h"

#if defined(OPAL_ENABLE_FAULT_INJECTION) && OPAL_ENABLE_FAULT_INJECTION

#define IN_FIELDS(X) X(uint32_t, value, VAR)
OPAL_RPC_STRUCT(fault_in, IN_FIELDS);
#define OUT_FIELDS(X) X(uint32_t, value, VAR)
OPAL_RPC_STRUCT(fault_out, OUT_FIELDS);

#define BASE 0x47

static void plus_one(opal_rpc_request_t *req)
{
    const fault_in_t *in = opal_rpc_req_input(req);
    fault_out_t *out = opal_rpc_req_output(req);
    out->value = in->value + 1;
    ck_assert_int_eq(opal_rpc_reply_send(req), OPAL_SUCCESS);
}

static const opal_rpc_op_t ops[1] = {
    {.handler = plus_one, .in = &fault_in_codec, .out = &fault_out_codec},
};

static opal_rpc_context_t *ctx;
static const opal_rpc_endpoint_t self_ep = {.addr = NULL, .ctx_idx = 0};
static char fault_file[256];

/* Opens the engine with the fault configuration text, through the file
 * and the MCA variable, and one credit per target. */
static void start(const char *text)
{
    snprintf(fault_file, sizeof(fault_file), "/tmp/rpc_fault_test_%d.conf", (int) getpid());
    FILE *f = fopen(fault_file, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    setenv("OPAL_MCA_opal_fault_config", fault_file, 1);
    setenv("OPAL_MCA_rpc_base_credits", "1", 1);
    ck_assert_int_eq(opal_init_util(NULL, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_init(NULL, false), OPAL_SUCCESS);
    const opal_rpc_proto_t proto = {
        .name = "fault-test", .base = BASE, .version = 1, .count = 1, .ops = ops};
    ck_assert_int_eq(opal_rpc_proto_register(&proto), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_context_create(0, &ctx), OPAL_SUCCESS);
}

static void stop(void)
{
    ck_assert_int_eq(opal_rpc_context_destroy(ctx), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_finalize(), OPAL_SUCCESS);
    opal_finalize_util();
    opal_fault_clear();
    unsetenv("OPAL_MCA_opal_fault_config");
    unsetenv("OPAL_MCA_rpc_base_credits");
    unlink(fault_file);
}

typedef struct {
    _Atomic int calls;
    int status;
    uint32_t value;
} outcome_t;

static void record(opal_rpc_request_t *req, int status, void *arg)
{
    outcome_t *o = arg;
    o->status = status;
    if (OPAL_SUCCESS == status) {
        o->value = ((fault_out_t *) opal_rpc_req_output(req))->value;
    }
    atomic_fetch_add(&o->calls, 1);
}

static bool called(void *arg)
{
    return atomic_load(&((outcome_t *) arg)->calls) > 0;
}

static void send_one(uint32_t value, double timeout, outcome_t *o)
{
    opal_rpc_request_t *req = NULL;
    memset(o, 0, sizeof(*o));
    ck_assert_int_eq(opal_rpc_req_create(ctx, &self_ep, OPAL_RPC_OPCODE(BASE, 1, 0), &req),
                     OPAL_SUCCESS);
    ((fault_in_t *) opal_rpc_req_input(req))->value = value;
    ck_assert_int_eq(opal_rpc_req_set_timeout(req, timeout), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_req_send(req, record, o), OPAL_SUCCESS);
}

static void wait_for(outcome_t *o)
{
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 60000, called, o), OPAL_SUCCESS);
}

/* More progress: a second completion would show up here. */
static void settle(void)
{
    for (int i = 0; i < 20; ++i) {
        (void) opal_rpc_progress(ctx, 1);
    }
}

static opal_rpc_stats_t stats(void)
{
    opal_rpc_stats_t st;
    opal_rpc_context_stats(ctx, &st);
    return st;
}

/* The first request is lost (its request dropped, or its reply); the
 * second waits for the only credit behind it. The first times out once,
 * its credit goes to the second, which gets its reply. */
static void first_is_lost(const char *faults, opal_fault_site_t site)
{
    outcome_t a, b;
    start(faults);
    send_one(1, 0.1, &a);
    send_one(2, 60, &b);
    ck_assert_uint_eq(stats().queued, 1);
    wait_for(&a);
    wait_for(&b);
    settle();
    ck_assert_int_eq(atomic_load(&a.calls), 1);
    ck_assert_int_eq(a.status, OPAL_ERR_TIMEOUT);
    ck_assert_int_eq(atomic_load(&b.calls), 1);
    ck_assert_int_eq(b.status, OPAL_SUCCESS);
    ck_assert_uint_eq(b.value, 3);
    ck_assert_uint_eq(opal_fault_fired(site), 1);
    opal_rpc_stats_t st = stats();
    ck_assert_uint_eq(st.timeouts, 1);
    ck_assert_uint_eq(st.late_replies, 0);
    ck_assert_uint_eq(st.completed, 2);
    stop();
}

START_TEST(dropped_request_times_out_once_and_frees_its_credit)
{
    first_is_lost("rpc_request_drop max=1\n", OPAL_FAULT_SITE_rpc_request_drop);
}
END_TEST

START_TEST(lost_reply_times_out_once_and_frees_its_credit)
{
    first_is_lost("# the first reply never leaves\nrpc_reply_drop max=1\n",
                  OPAL_FAULT_SITE_rpc_reply_drop);
}
END_TEST

static bool one_late(void *arg)
{
    (void) arg;
    return stats().late_replies >= 1;
}

START_TEST(reply_delayed_past_the_timeout_is_late_and_counted)
{
    outcome_t a, b;
    /* Held 1 s, the request gives up after 0.1 s: the timeout always
     * wins, as deadlines are expired before held replies are sent. */
    start("rpc_reply_delay max=1 arg=1000\n");
    send_one(1, 0.1, &a);
    send_one(2, 60, &b);
    wait_for(&a);
    ck_assert_int_eq(a.status, OPAL_ERR_TIMEOUT);
    wait_for(&b);
    ck_assert_int_eq(b.status, OPAL_SUCCESS);
    ck_assert_uint_eq(b.value, 3);
    /* The held reply comes after both: dropped and counted. */
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 60000, one_late, NULL), OPAL_SUCCESS);
    settle();
    ck_assert_int_eq(atomic_load(&a.calls), 1);
    ck_assert_int_eq(atomic_load(&b.calls), 1);
    opal_rpc_stats_t st = stats();
    ck_assert_uint_eq(st.timeouts, 1);
    ck_assert_uint_eq(st.late_replies, 1);
    ck_assert_uint_eq(st.completed, 2);
    ck_assert_uint_eq(opal_fault_fired(OPAL_FAULT_SITE_rpc_reply_delay), 1);
    stop();
}
END_TEST

START_TEST(reply_delayed_within_the_timeout_arrives)
{
    enum { N = 8 };
    outcome_t o[N];
    start("rpc_reply_delay arg=20\n");
    for (int i = 0; i < N; ++i) {
        send_one((uint32_t) i, 60, &o[i]);
    }
    for (int i = 0; i < N; ++i) {
        wait_for(&o[i]);
    }
    settle();
    for (int i = 0; i < N; ++i) {
        ck_assert_int_eq(atomic_load(&o[i].calls), 1);
        ck_assert_int_eq(o[i].status, OPAL_SUCCESS);
        ck_assert_uint_eq(o[i].value, (uint32_t) i + 1);
    }
    ck_assert_uint_eq(opal_fault_fired(OPAL_FAULT_SITE_rpc_reply_delay), N);
    ck_assert_uint_eq(stats().late_replies, 0);
    stop();
}
END_TEST

/* A reply still held when the context goes is sent (and dropped, as no
 * request waits for it) rather than leaked: valgrind checks. */
START_TEST(reply_held_when_the_context_goes_is_not_leaked)
{
    outcome_t a;
    start("rpc_reply_delay arg=600000\n");
    send_one(1, 0.05, &a);
    wait_for(&a);
    ck_assert_int_eq(a.status, OPAL_ERR_TIMEOUT);
    ck_assert_uint_eq(opal_fault_fired(OPAL_FAULT_SITE_rpc_reply_delay), 1);
    stop();
}
END_TEST

static void query_cb(int status, uint8_t version, void *arg)
{
    outcome_t *o = arg;
    o->status = status;
    o->value = version;
    atomic_fetch_add(&o->calls, 1);
}

/* The site drops the user's requests only: the engine's own protocol
 * (the query, the release of outputs by bulk) goes through. */
START_TEST(engine_requests_are_not_dropped)
{
    outcome_t q, a;
    start("rpc_request_drop\n");
    memset(&q, 0, sizeof(q));
    const uint8_t versions[] = {1, 2};
    ck_assert_int_eq(opal_rpc_proto_query(ctx, &self_ep, BASE, versions, 2, query_cb, &q),
                     OPAL_SUCCESS);
    wait_for(&q);
    ck_assert_int_eq(q.status, OPAL_SUCCESS);
    ck_assert_uint_eq(q.value, 1);
    send_one(1, 0.05, &a);
    wait_for(&a);
    ck_assert_int_eq(a.status, OPAL_ERR_TIMEOUT);
    ck_assert_uint_eq(opal_fault_fired(OPAL_FAULT_SITE_rpc_request_drop), 1);
    stop();
}
END_TEST

START_TEST(the_sites_are_known_by_name)
{
    const char *names[] = {"rpc_request_drop", "rpc_reply_drop", "rpc_reply_delay",
                           "rpc_bulk_pull_hold", "rpc_bulk_pull_delay"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
        ck_assert_msg(opal_fault_site_find(names[i]) >= 0, "%s", names[i]);
    }
    ck_assert_int_eq(opal_fault_configure("rpc_reply_delay arg=5 max=2\n", "test"), OPAL_SUCCESS);
    ck_assert_uint_eq(opal_fault_arg(OPAL_FAULT_SITE_rpc_reply_delay), 5);
    opal_fault_clear();
}
END_TEST

int main(void)
{
    setenv("OPAL_MCA_mca_base_component_path", RPC_TEST_PLUGIN_DIRS, 1);
    Suite *s = suite_create("rpc_fault");
    OPAL_TEST_ADD(s, the_sites_are_known_by_name);
    OPAL_TEST_ADD(s, dropped_request_times_out_once_and_frees_its_credit);
    OPAL_TEST_ADD(s, lost_reply_times_out_once_and_frees_its_credit);
    OPAL_TEST_ADD(s, reply_delayed_past_the_timeout_is_late_and_counted);
    OPAL_TEST_ADD(s, reply_delayed_within_the_timeout_arrives);
    OPAL_TEST_ADD(s, reply_held_when_the_context_goes_is_not_leaked);
    OPAL_TEST_ADD(s, engine_requests_are_not_dropped);
    return opal_test_run(s);
}

#else

int main(void)
{
    printf("rpc_fault_test: this build has no fault sites (--enable-fault-injection)\n");
    return 77;
}

#endif
