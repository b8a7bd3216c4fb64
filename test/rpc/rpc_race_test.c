/* The race of a request's reply, its timeout, its cancel and its peer's
 * death, stressed: every request is kept by the server's handler and
 * answered from a replier thread; every other one is aborted from an
 * aborter thread, which also declares the peer failed now and then; a
 * third have a timeout of 0.5 ms, a third of 1 ms. Each request must
 * complete exactly once, with one of the outcomes that raced; every reply
 * that lost is counted late; nothing is left when the context goes.
 *
 * Rounds: 20000 by default (2000 under valgrind), a million with
 * OPAL_TEST_SLOW=1 (contrib/check.sh's plain gcc step), or
 * OPAL_TEST_RACE_ROUNDS=N. */
#include "opal/opal_config.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/rpc/rpc.h"
#include "opal/runtime/opal_init.h"
#include "opal/threads/opal_mutex.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "test/support/opal_test.h"

#define IN_FIELDS(X) X(uint32_t, seq, VAR)
OPAL_RPC_STRUCT(race_in, IN_FIELDS);
#define OUT_FIELDS(X) X(uint32_t, seq, VAR)
OPAL_RPC_STRUCT(race_out, OUT_FIELDS);

#define BASE 0x48
/* Requests in flight at most: the server keeps each one until the
 * replier answers, so memory stays bounded whatever the rounds. */
#define WINDOW 512

/* A queue of requests handed from one thread to another. */
typedef struct {
    opal_mutex_t lock;
    opal_rpc_request_t **items;
    size_t cap, head, tail; /* a ring of cap slots */
} req_queue_t;

static void queue_init(req_queue_t *q, size_t cap)
{
    OBJ_CONSTRUCT(&q->lock, opal_mutex_t);
    q->items = calloc(cap, sizeof(*q->items));
    ck_assert_ptr_nonnull(q->items);
    q->cap = cap;
    q->head = q->tail = 0;
}

static void queue_fini(req_queue_t *q)
{
    free(q->items);
    OBJ_DESTRUCT(&q->lock);
}

static void queue_push(req_queue_t *q, opal_rpc_request_t *req)
{
    opal_mutex_lock(&q->lock);
    /* At most WINDOW kept or aborted requests exist at once: never full. */
    ck_assert_uint_lt(q->tail - q->head, q->cap);
    q->items[q->tail++ % q->cap] = req;
    opal_mutex_unlock(&q->lock);
}

static opal_rpc_request_t *queue_pop(req_queue_t *q)
{
    opal_rpc_request_t *req = NULL;
    opal_mutex_lock(&q->lock);
    if (q->head != q->tail) {
        req = q->items[q->head++ % q->cap];
    }
    opal_mutex_unlock(&q->lock);
    return req;
}

static req_queue_t to_reply, to_abort;
static _Atomic uint8_t *calls; /* per request: its completions */
static _Atomic uint64_t completed;
static _Atomic uint64_t outcome[4]; /* success, timeout, canceled, peer failed */
static _Atomic uint64_t replies;    /* sent by the replier */
static _Atomic uint64_t aborted;    /* aborts the aborter made */
static _Atomic bool stop;
static opal_rpc_context_t *ctx;
static const opal_rpc_endpoint_t self_ep = {.addr = NULL, .ctx_idx = 0};
static size_t rounds;

/* The server keeps the request; the replier answers it. */
static void keep(opal_rpc_request_t *req)
{
    opal_rpc_req_addref(req);
    queue_push(&to_reply, req);
}

static const opal_rpc_op_t ops[1] = {
    {.handler = keep, .in = &race_in_codec, .out = &race_out_codec, .flags = OPAL_RPC_OP_INLINE},
};

static void done(opal_rpc_request_t *req, int status, void *arg)
{
    size_t i = (size_t) (uintptr_t) arg;
    int k = OPAL_SUCCESS == status           ? 0
            : OPAL_ERR_TIMEOUT == status     ? 1
            : OPAL_ERR_CANCELED == status    ? 2
            : OPAL_ERR_PEER_FAILED == status ? 3
                                             : -1;
    ck_assert_msg(k >= 0, "request %zu completed with %d", i, status);
    if (0 == k) {
        /* The reply to this request, not another's. */
        ck_assert_uint_eq(((race_out_t *) opal_rpc_req_output(req))->seq, (uint32_t) i);
    }
    atomic_fetch_add_explicit(&outcome[k], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&calls[i], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&completed, 1, memory_order_release);
}

static void *replier(void *arg)
{
    (void) arg;
    for (;;) {
        opal_rpc_request_t *req = queue_pop(&to_reply);
        if (NULL == req) {
            if (atomic_load(&stop)) {
                return NULL;
            }
            /* valgrind runs one thread at a time: a pure spin starves
             * the thread it waits for. */
            sched_yield();
            continue;
        }
        const race_in_t *in = opal_rpc_req_input(req);
        ((race_out_t *) opal_rpc_req_output(req))->seq = in->seq;
        ck_assert_int_eq(opal_rpc_reply_send(req), OPAL_SUCCESS);
        opal_rpc_req_decref(req);
        atomic_fetch_add(&replies, 1);
    }
}

static void *aborter(void *arg)
{
    (void) arg;
    uint64_t n = 0;
    for (;;) {
        opal_rpc_request_t *req = queue_pop(&to_abort);
        if (NULL == req) {
            if (atomic_load(&stop)) {
                return NULL;
            }
            sched_yield();
            continue;
        }
        ck_assert_int_eq(opal_rpc_req_abort(req), OPAL_SUCCESS);
        opal_rpc_req_decref(req);
        atomic_fetch_add(&aborted, 1);
        if (0 == ++n % 499) {
            /* The failure detector's word, from yet another thread. */
            ck_assert_int_eq(opal_rpc_peer_failed(ctx, NULL), OPAL_SUCCESS);
        }
    }
}

static bool all_done(void *arg)
{
    (void) arg;
    return atomic_load_explicit(&completed, memory_order_acquire) == rounds;
}

static bool all_replies_in(void *arg)
{
    (void) arg;
    opal_rpc_stats_t st;
    opal_rpc_context_stats(ctx, &st);
    return atomic_load(&replies) == rounds && st.late_replies + atomic_load(&outcome[0]) == rounds;
}

START_TEST(reply_timeout_abort_and_failure_race_completes_each_once)
{
    uint64_t t0 = opal_timer_ns();
    ck_assert_int_eq(opal_init_util(NULL, NULL), OPAL_SUCCESS);
    opal_set_using_threads(true);
    ck_assert_int_eq(opal_rpc_init(NULL, false), OPAL_SUCCESS);
    const opal_rpc_proto_t proto = {
        .name = "race", .base = BASE, .version = 1, .count = 1, .ops = ops};
    ck_assert_int_eq(opal_rpc_proto_register(&proto), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_context_create(0, &ctx), OPAL_SUCCESS);
    calls = calloc(rounds, sizeof(*calls));
    ck_assert_ptr_nonnull(calls);
    queue_init(&to_reply, 2 * WINDOW);
    queue_init(&to_abort, 2 * WINDOW);
    pthread_t rt, at;
    ck_assert_int_eq(pthread_create(&rt, NULL, replier, NULL), 0);
    ck_assert_int_eq(pthread_create(&at, NULL, aborter, NULL), 0);

    for (size_t i = 0; i < rounds; ++i) {
        /* Bounded in flight: the server's kept requests and the aborter's
         * queue stay below their rings' size. */
        while (i - atomic_load_explicit(&completed, memory_order_acquire) >= WINDOW ||
               atomic_load(&replies) + WINDOW <= i ||
               atomic_load(&aborted) + WINDOW <= (i + 1) / 2) {
            (void) opal_rpc_progress(ctx, 0);
            sched_yield();
        }
        opal_rpc_request_t *req = NULL;
        ck_assert_int_eq(opal_rpc_req_create(ctx, &self_ep, OPAL_RPC_OPCODE(BASE, 1, 0), &req),
                         OPAL_SUCCESS);
        ((race_in_t *) opal_rpc_req_input(req))->seq = (uint32_t) i;
        ck_assert_int_eq(opal_rpc_req_set_timeout(req, (double) (i % 3) * 0.0005), OPAL_SUCCESS);
        bool abort_it = 0 == i % 2;
        if (abort_it) {
            opal_rpc_req_addref(req); /* the aborter's */
        }
        ck_assert_int_eq(opal_rpc_req_send(req, done, (void *) (uintptr_t) i), OPAL_SUCCESS);
        if (abort_it) {
            queue_push(&to_abort, req);
        }
        (void) opal_rpc_progress(ctx, 0);
    }
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 120000, all_done, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_progress_cond(ctx, 120000, all_replies_in, NULL), OPAL_SUCCESS);
    atomic_store(&stop, true);
    pthread_join(rt, NULL);
    pthread_join(at, NULL);
    for (int k = 0; k < 20; ++k) {
        (void) opal_rpc_progress(ctx, 1);
    }

    size_t twice = 0, never = 0;
    for (size_t i = 0; i < rounds; ++i) {
        uint8_t c = atomic_load(&calls[i]);
        never += 0 == c;
        twice += c > 1;
    }
    ck_assert_msg(0 == never && 0 == twice, "%zu requests never completed, %zu more than once",
                  never, twice);
    opal_rpc_stats_t st;
    opal_rpc_context_stats(ctx, &st);
    ck_assert_uint_eq(st.sent, rounds);
    ck_assert_uint_eq(st.completed, rounds);
    ck_assert_uint_eq(st.handled, rounds);
    ck_assert_uint_eq(atomic_load(&outcome[1]), st.timeouts);
    ck_assert_uint_eq(atomic_load(&outcome[0]) + atomic_load(&outcome[1]) +
                          atomic_load(&outcome[2]) + atomic_load(&outcome[3]),
                      rounds);
    /* Each request got one reply: it completed it, or it came late. */
    ck_assert_uint_eq(st.late_replies + atomic_load(&outcome[0]), rounds);
    printf("rpc_race_test: %zu rounds in %.1f s: %lu replied, %lu timed out, %lu canceled, "
           "%lu peer failed, %lu late replies\n",
           rounds, (double) (opal_timer_ns() - t0) / 1e9, (unsigned long) atomic_load(&outcome[0]),
           (unsigned long) atomic_load(&outcome[1]), (unsigned long) atomic_load(&outcome[2]),
           (unsigned long) atomic_load(&outcome[3]), (unsigned long) st.late_replies);
    queue_fini(&to_reply);
    queue_fini(&to_abort);
    free((void *) calls);
    ck_assert_int_eq(opal_rpc_context_destroy(ctx), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_finalize(), OPAL_SUCCESS);
    opal_finalize_util();
}
END_TEST

int main(void)
{
    const char *slow = getenv("OPAL_TEST_SLOW");
    const char *asked = getenv("OPAL_TEST_RACE_ROUNDS");
    rounds = NULL != getenv("OPAL_TEST_UNDER_VALGRIND") ? 2000 : 20000;
    if (NULL != slow && 0 != strcmp(slow, "0") && '\0' != slow[0]) {
        rounds = 1000000;
    }
    if (NULL != asked) {
        char *end = NULL;
        unsigned long long n = strtoull(asked, &end, 10);
        if (NULL == end || '\0' != *end || 0 == n || n > 100000000ull) {
            fprintf(stderr, "rpc_race_test: OPAL_TEST_RACE_ROUNDS=%s is not a count of 1..1e8\n",
                    asked);
            return 2;
        }
        rounds = (size_t) n;
    }
    setenv("OPAL_MCA_mca_base_component_path", RPC_TEST_PLUGIN_DIRS, 1);
    Suite *s = suite_create("rpc_race");
    TCase *tc = tcase_create("race");
    /* A million rounds take minutes on a loaded machine. */
    tcase_set_timeout(tc, rounds > 100000 ? 3600 : 600);
    tcase_add_test(tc, reply_timeout_abort_and_failure_race_completes_each_once);
    suite_add_tcase(s, tc);
    return opal_test_run(s);
}
