/*
 * na/ofi with threads: one server class with two contexts (ids 1 and 2),
 * each served by its own thread that progresses the shared endpoint, and
 * a client on the main thread. A message sent to (server, id) reaches
 * only that context, and completions polled by one thread for the other's
 * context are triggered by the other.
 */
#include "opal/opal_config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "opal/threads/opal_mutex.h"
#include "opal/util/opal_error.h"
#include "test/na/na_test_support.h"
#include "test/support/opal_test.h"

enum { ROUNDS = 200 };

static na_test_end_t server, client;
static opal_na_context_t *sctx[3];
static atomic_int stop;

/* Serves context id (1 or 2): answers each request with the id. */
static void *serve(void *arg)
{
    uint8_t id = (uint8_t) (intptr_t) arg;
    na_test_end_t me = {server.cls, sctx[id]};
    opal_na_op_id_t *rop = opal_na_op_create(server.cls), *sop = opal_na_op_create(server.cls);
    uint32_t req = 0, answer = id;
    while (!atomic_load(&stop)) {
        na_test_result_t r = {0}, w = {0};
        if (OPAL_SUCCESS != opal_na_msg_recv_unexpected(server.cls, sctx[id], na_test_record, &r,
                                                        &req, sizeof(req), NULL, rop)) {
            break;
        }
        while (0 == r.calls && !atomic_load(&stop)) {
            (void) opal_na_poll(server.cls, sctx[id], NULL);
            (void) opal_na_trigger(sctx[id], 0, NULL);
        }
        if (0 == r.calls) {
            (void) opal_na_cancel(server.cls, sctx[id], rop);
            (void) na_test_wait(&me, 1, &r.calls, 1, 60);
            break;
        }
        /* The request names the context it was sent to. */
        answer = req == id ? id : 0xbad;
        (void) opal_na_msg_send_expected(server.cls, sctx[id], na_test_record, &w, &answer,
                                         sizeof(answer), NULL, r.source, 0, req, sop);
        (void) na_test_wait(&me, 1, &w.calls, 1, 60);
        opal_na_addr_free(server.cls, r.source);
    }
    (void) opal_na_op_destroy(server.cls, rop);
    (void) opal_na_op_destroy(server.cls, sop);
    return NULL;
}

START_TEST(contexts_served_by_their_own_threads_get_only_their_messages)
{
    opal_set_using_threads(true);
    na_test_init();
    ck_assert_int_eq(na_test_open("ofi+tcp://127.0.0.1", &server), OPAL_SUCCESS);
    ck_assert_int_eq(na_test_open("ofi+tcp://127.0.0.1", &client), OPAL_SUCCESS);
    ck_assert_int_eq(opal_na_context_create(server.cls, 1, &sctx[1]), OPAL_SUCCESS);
    ck_assert_int_eq(opal_na_context_create(server.cls, 2, &sctx[2]), OPAL_SUCCESS);
    char *uri = na_test_uri(&server);
    opal_na_addr_t *to = NULL;
    ck_assert_int_eq(opal_na_addr_lookup(client.cls, uri, &to), OPAL_SUCCESS);
    free(uri);
    atomic_store(&stop, 0);
    pthread_t t[2];
    ck_assert_int_eq(pthread_create(&t[0], NULL, serve, (void *) (intptr_t) 1), 0);
    ck_assert_int_eq(pthread_create(&t[1], NULL, serve, (void *) (intptr_t) 2), 0);
    for (int i = 0; i < ROUNDS; ++i) {
        uint32_t id = 1 + (uint32_t) (i % 2), answer = 0;
        na_test_result_t r = {0}, w = {0};
        ck_assert_int_eq(opal_na_msg_recv_expected(client.cls, client.ctx, na_test_record, &r,
                                                   &answer, sizeof(answer), NULL, to, (uint8_t) id,
                                                   id, NULL),
                         OPAL_SUCCESS);
        ck_assert_int_eq(opal_na_msg_send_unexpected(client.cls, client.ctx, na_test_record, &w,
                                                     &id, sizeof(id), NULL, to, (uint8_t) id, 0,
                                                     NULL),
                         OPAL_SUCCESS);
        ck_assert(na_test_wait(&client, 1, &w.calls, 1, 60));
        ck_assert(na_test_wait(&client, 1, &r.calls, 1, 60));
        ck_assert_int_eq(r.ret, OPAL_SUCCESS);
        ck_assert_uint_eq(answer, id);
    }
    atomic_store(&stop, 1);
    ck_assert_int_eq(pthread_join(t[0], NULL), 0);
    ck_assert_int_eq(pthread_join(t[1], NULL), 0);
    opal_na_addr_free(client.cls, to);
    (void) opal_na_poll(server.cls, sctx[1], NULL);
    (void) opal_na_trigger(sctx[1], 0, NULL);
    (void) opal_na_trigger(sctx[2], 0, NULL);
    ck_assert_int_eq(opal_na_context_destroy(server.cls, sctx[1]), OPAL_SUCCESS);
    ck_assert_int_eq(opal_na_context_destroy(server.cls, sctx[2]), OPAL_SUCCESS);
    na_test_close(&client);
    na_test_close(&server);
    na_test_fini();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("na_ofi_threads");
    OPAL_TEST_ADD(s, contexts_served_by_their_own_threads_get_only_their_messages);
    return opal_test_run(s);
}
