/*
 * A tuning aid, not a test: na latency against na_ofi_peer (an unexpected
 * message out, the same bytes back as an expected one, as Mercury's
 * na_lat does), half the round trip, busy polling.
 *
 *   na_ofi_peer ofi+tcp://127.0.0.1 /tmp/uri &
 *   na_ofi_lat ofi+tcp /tmp/uri [iterations]
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "test/na/na_test_support.h"

static int done;

static void count(const opal_na_cb_info_t *info)
{
    (void) info;
    done++;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: na_ofi_lat <info> <uri-file> [iterations]\n");
        return 2;
    }
    int iters = argc > 3 ? atoi(argv[3]) : 10000;
    na_test_init();
    na_test_end_t c;
    opal_na_init_info_t opts = {.busy_wait = true};
    if (OPAL_SUCCESS != opal_na_initialize_opt(argv[1], false, &opts, &c.cls) ||
        OPAL_SUCCESS != opal_na_context_create(c.cls, 0, &c.ctx)) {
        return 1;
    }
    FILE *f = fopen(argv[2], "r");
    char uri[512] = "";
    if (NULL == f || NULL == fgets(uri, sizeof(uri), f)) {
        return 1;
    }
    fclose(f);
    uri[strcspn(uri, "\n")] = '\0';
    opal_na_addr_t *server = NULL;
    if (OPAL_SUCCESS != opal_na_addr_lookup(c.cls, uri, &server)) {
        return 1;
    }
    opal_na_op_id_t *sop = opal_na_op_create(c.cls), *rop = opal_na_op_create(c.cls);
    void *sdata, *rdata;
    char *sbuf = opal_na_msg_buf_alloc(c.cls, 4096, &sdata);
    char *rbuf = opal_na_msg_buf_alloc(c.cls, 4096, &rdata);
    memset(sbuf, 'a', 4096);
    printf("# %s: size  one-way latency (us)\n", argv[1]);
    for (size_t size = 8; size <= 4096; size *= 2) {
        uint64_t start = 0;
        for (int i = -100; i < iters; ++i) {
            if (0 == i) {
                start = opal_timer_ns();
            }
            done = 0;
            (void) opal_na_msg_recv_expected(c.cls, c.ctx, count, NULL, rbuf, size, rdata, server,
                                             0, 1, rop);
            (void) opal_na_msg_send_unexpected(c.cls, c.ctx, count, NULL, sbuf, size, sdata, server,
                                               0, 1, sop);
            while (done < 2) {
                (void) opal_na_poll(c.cls, c.ctx, NULL);
                (void) opal_na_trigger(c.ctx, 0, NULL);
            }
        }
        double us = (double) (opal_timer_ns() - start) / 1000.0 / iters / 2.0;
        printf("%6zu  %.2f\n", size, us);
    }
    done = 0;
    (void) opal_na_msg_send_unexpected(c.cls, c.ctx, count, NULL, "quit", 4, NULL, server, 0, 0,
                                       sop);
    while (done < 1) {
        (void) opal_na_poll(c.cls, c.ctx, NULL);
        (void) opal_na_trigger(c.ctx, 0, NULL);
    }
    opal_na_msg_buf_free(c.cls, sbuf, sdata);
    opal_na_msg_buf_free(c.cls, rbuf, rdata);
    (void) opal_na_op_destroy(c.cls, sop);
    (void) opal_na_op_destroy(c.cls, rop);
    opal_na_addr_free(c.cls, server);
    (void) opal_na_context_destroy(c.cls, c.ctx);
    (void) opal_na_finalize(c.cls);
    na_test_fini();
    return 0;
}
