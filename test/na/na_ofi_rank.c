/*
 * A rank of an mcarun job using na/ofi (for na_ofi_job_test):
 *
 *   na_ofi_rank <tcp|shm|verbs|info string>
 *
 * Each rank opens ofi+<protocol>, publishes its URI in the modex, looks
 * every other rank up by its URI, and sends each an unexpected message
 * (its rank, tag = its rank); a rank answers every message it receives
 * with an expected one (the receiver's rank) to the message's source.
 * Prints "rank N ok" when it got one message and one answer from each
 * other rank, each from the address its URI names.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "orte/runtime/orte_init.h"
#include "test/na/na_test_support.h"

#define MAX_RANKS 16

static int fail(uint32_t rank, const char *what, int rc)
{
    fprintf(stderr, "rank %u: %s: %s\n", rank, what, opal_strerror(rc));
    return 1;
}

int main(int argc, char **argv)
{
    if (2 != argc) {
        fprintf(stderr, "usage: na_ofi_rank <tcp|shm|verbs|info string>\n");
        return 2;
    }
    if (OPAL_SUCCESS != orte_init(&argc, &argv)) {
        return 2;
    }
    uint32_t me = opal_proc_job_info()->my_name.vpid;
    uint32_t np = opal_proc_job_info()->size;
    if (np > MAX_RANKS) {
        return fail(me, "too many ranks", OPAL_ERR_BAD_PARAM);
    }
    /* "tcp" listens on the loopback; an info string ("ofi+tcp") is
     * taken as it is (between hosts: the provider's own address). */
    char info[64];
    if (NULL != strchr(argv[1], '+')) {
        snprintf(info, sizeof(info), "%s", argv[1]);
    } else {
        snprintf(info, sizeof(info), "ofi+%s%s", argv[1],
                 0 == strcmp(argv[1], "tcp") ? "://127.0.0.1" : "");
    }
    na_test_end_t end;
    int rc = na_test_open(info, &end);
    if (OPAL_SUCCESS != rc) {
        return fail(me, "opening the class", rc);
    }
    char *uri = na_test_uri(&end);
    rc = opal_modex_send("na_ofi_uri", uri, strlen(uri) + 1, OPAL_MODEX_SCOPE_GLOBAL);
    free(uri);
    if (OPAL_SUCCESS != rc || OPAL_SUCCESS != (rc = opal_fence(true))) {
        return fail(me, "publishing the URI", rc);
    }
    opal_na_addr_t *peers[MAX_RANKS] = {NULL};
    for (uint32_t r = 0; r < np; ++r) {
        void *value = NULL;
        size_t size = 0;
        if (r == me) {
            continue;
        }
        rc = opal_modex_recv(r, "na_ofi_uri", &value, &size, OPAL_MODEX_WAIT_FOREVER);
        if (OPAL_SUCCESS != rc || 0 == size || '\0' != ((char *) value)[size - 1] ||
            OPAL_SUCCESS != (rc = opal_na_addr_lookup(end.cls, value, &peers[r]))) {
            return fail(me, "looking a peer up", rc);
        }
        free(value);
    }
    static uint32_t msgs[MAX_RANKS], answers[MAX_RANKS], mine;
    mine = me;
    na_test_result_t urecv[MAX_RANKS] = {{0}}, erecv[MAX_RANKS] = {{0}}, sends = {0};
    for (uint32_t r = 0; r < np; ++r) {
        if (r == me) {
            continue;
        }
        if (OPAL_SUCCESS !=
                (rc = opal_na_msg_recv_unexpected(end.cls, end.ctx, na_test_record, &urecv[r],
                                                  &msgs[r], sizeof(uint32_t), NULL, NULL)) ||
            OPAL_SUCCESS != (rc = opal_na_msg_recv_expected(
                                 end.cls, end.ctx, na_test_record, &erecv[r], &answers[r],
                                 sizeof(uint32_t), NULL, peers[r], 0, 1000 + r, NULL)) ||
            OPAL_SUCCESS !=
                (rc = opal_na_msg_send_unexpected(end.cls, end.ctx, na_test_record, &sends, &mine,
                                                  sizeof(mine), NULL, peers[r], 0, me, NULL))) {
            return fail(me, "starting the exchange", rc);
        }
    }
    /* Answer each message as it comes: the answer names its receiver. */
    int answered = 0;
    for (uint32_t r = 0; r < np; ++r) {
        if (r == me) {
            continue;
        }
        if (!na_test_wait(&end, 1, &urecv[r].calls, 1, 60) || OPAL_SUCCESS != urecv[r].ret) {
            return fail(me, "receiving a message", OPAL_ERR_TIMEOUT);
        }
        uint32_t from = msgs[r];
        if (from >= np || urecv[r].tag != from ||
            !opal_na_addr_cmp(end.cls, urecv[r].source, peers[from])) {
            return fail(me, "a message named the wrong sender", OPAL_ERR_BAD_PARAM);
        }
        if (OPAL_SUCCESS != (rc = opal_na_msg_send_expected(end.cls, end.ctx, na_test_record,
                                                            &sends, &mine, sizeof(mine), NULL,
                                                            urecv[r].source, 0, 1000 + me, NULL))) {
            return fail(me, "answering", rc);
        }
        opal_na_addr_free(end.cls, urecv[r].source);
        answered++;
    }
    for (uint32_t r = 0; r < np; ++r) {
        if (r == me) {
            continue;
        }
        if (!na_test_wait(&end, 1, &erecv[r].calls, 1, 60) || OPAL_SUCCESS != erecv[r].ret ||
            answers[r] != r) {
            return fail(me, "an answer", OPAL_ERR_TIMEOUT);
        }
    }
    if (!na_test_wait(&end, 1, &sends.calls, 2 * answered, 60)) {
        return fail(me, "sends", OPAL_ERR_TIMEOUT);
    }
    /* Nobody closes while a peer may still need its answer. */
    (void) opal_fence(false);
    for (uint32_t r = 0; r < np; ++r) {
        opal_na_addr_free(end.cls, peers[r]);
    }
    na_test_close(&end);
    printf("rank %u ok\n", me);
    fflush(stdout);
    return OPAL_SUCCESS == orte_finalize() ? 0 : 1;
}
