/*
 * opal_perf's bulk subcommands, measured the way Mercury's hg_bw_read /
 * hg_bw_write measure HG_Bulk: the client exposes its buffer through a
 * bulk handle (sent once), then for every iteration asks the server for a
 * window of chunks of the size; the server's handler pulls them from
 * (bulk-pull) or pushes them into (bulk-push) the client's handle with
 * opal_bulk_transfer, and answers once all completed. MB/s (10^6 bytes)
 * of the chunks over the time, at the client.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/bulk/bulk.h"
#include "opal/util/opal_cursor.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "tools/opal_perf/opal_perf_na.h"

/* The pattern a validated run moves: depends on the size and the offset. */
static void fill_pattern(unsigned char *buf, size_t size, uint64_t seed)
{
    for (size_t i = 0; i < size; ++i) {
        buf[i] = (unsigned char) (seed * 13 + i * 5 + (i >> 9));
    }
}

static bool has_pattern(const unsigned char *buf, size_t size, uint64_t seed)
{
    for (size_t i = 0; i < size; ++i) {
        if (buf[i] != (unsigned char) (seed * 13 + i * 5 + (i >> 9))) {
            return false;
        }
    }
    return true;
}

int perf_bulk_setup(perf_na_t *n)
{
    int rc = opal_bulk_init(n->cls, &n->bulk);
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "opal_perf: cannot open bulk over %s: %s\n", n->p->opts.na_info,
                opal_strerror(rc));
        return rc;
    }
    void *bufs[1] = {n->rma_buf};
    size_t sizes[1] = {n->rma_size};
    rc = opal_bulk_create(n->bulk, 1, bufs, sizes, OPAL_BULK_READ_WRITE, &n->bulk_local);
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "opal_perf: cannot create a bulk handle of %zu bytes: %s\n", n->rma_size,
                opal_strerror(rc));
    }
    return rc;
}

void perf_bulk_teardown(perf_na_t *n)
{
    (void) opal_bulk_free(n->bulk_remote);
    (void) opal_bulk_free(n->bulk_local);
    n->bulk_remote = n->bulk_local = NULL;
    opal_na_addr_free(n->cls, n->bulk_client);
    n->bulk_client = NULL;
    if (NULL != n->bulk) {
        /* Completions of a failed run may still wait to be triggered. */
        (void) opal_na_trigger(n->ctx, 0, NULL);
        (void) opal_bulk_finalize(n->bulk);
        n->bulk = NULL;
    }
}

/* ---------------------------------------------------------------- server */

static void answer(perf_na_t *n, opal_na_tag_t tag)
{
    int rc = opal_na_msg_send_expected(n->cls, n->ctx, NULL, n, n->exp_buf, 0, n->exp_data,
                                       n->bulk_client, 0, tag, perf_na_idle_send_op(n));
    perf_na_note_status(n, rc, "answering a bulk request");
}

static void transfer_cb(const opal_bulk_cb_info_t *info)
{
    perf_na_t *n = info->arg;
    perf_na_note_status(n, info->ret, "a bulk transfer");
    if (0 != --n->bulk_pending) {
        return;
    }
    size_t bytes = (size_t) n->bulk_size * n->bulk_window;
    if (n->echo && OPAL_BULK_PULL == n->bulk_op && OPAL_SUCCESS == n->status &&
        !has_pattern(n->rma_buf, bytes, n->bulk_size)) {
        fprintf(stderr,
                "opal_perf: server: the chunks pulled (size %" PRIu64 ") do not hold "
                "the client's bytes\n",
                n->bulk_size);
        n->status = OPAL_ERR_BAD_VALUE;
    }
    answer(n, TAG_BULK);
}

static int serve_init(perf_na_t *n, const void *buf, size_t size, opal_na_addr_t *source)
{
    (void) opal_bulk_free(n->bulk_remote);
    n->bulk_remote = NULL;
    opal_na_addr_free(n->cls, n->bulk_client);
    n->bulk_client = NULL;
    int rc = opal_bulk_deserialize(n->bulk, &n->bulk_remote, buf, size);
    if (OPAL_SUCCESS == rc) {
        rc = opal_na_addr_dup(n->cls, source, &n->bulk_client);
    }
    if (OPAL_SUCCESS == rc) {
        answer(n, TAG_BULK_INIT);
    }
    return rc;
}

static int serve_request(perf_na_t *n, const void *buf, size_t size)
{
    opal_cursor_t c;
    opal_cursor_init_read(&c, buf, size);
    uint8_t op = opal_cursor_get_u8(&c);
    uint32_t window = opal_cursor_get_u32(&c);
    uint64_t chunk = opal_cursor_get_u64(&c);
    if (!opal_cursor_done(&c) || op > OPAL_BULK_PUSH || 0 == window || window > PERF_MAX_WINDOW ||
        NULL == n->bulk_remote) {
        fprintf(stderr, "opal_perf: server: a malformed bulk request (%zu bytes)\n", size);
        return OPAL_ERR_BAD_PARAM;
    }
    if (chunk > n->rma_size / window || chunk * window > opal_bulk_get_size(n->bulk_remote)) {
        fprintf(stderr,
                "opal_perf: server: chunks of %" PRIu64 " bytes are more than its "
                "--max-size or the client's handle holds\n",
                chunk);
        return OPAL_ERR_BAD_PARAM;
    }
    n->bulk_op = (opal_bulk_op_type_t) op;
    n->bulk_size = chunk;
    n->bulk_window = window;
    if (0 == chunk) {
        answer(n, TAG_BULK);
        return OPAL_SUCCESS;
    }
    if (n->echo && OPAL_BULK_PUSH == n->bulk_op) {
        fill_pattern(n->rma_buf, chunk * window, chunk);
    }
    n->bulk_pending = window;
    for (size_t i = 0; i < window; ++i) {
        int rc =
            opal_bulk_transfer(n->bulk, n->ctx, transfer_cb, n, n->bulk_op, n->bulk_client, 0,
                               n->bulk_remote, i * chunk, n->bulk_local, i * chunk, chunk, NULL);
        if (OPAL_SUCCESS != rc) {
            /* The ones started complete; this run has failed. */
            n->bulk_pending -= window - i;
            return rc;
        }
    }
    return OPAL_SUCCESS;
}

int perf_bulk_serve(perf_na_t *n, opal_na_tag_t tag, const void *buf, size_t size,
                    opal_na_addr_t *source)
{
    if (NULL == n->bulk) {
        return OPAL_ERR_NOT_SUPPORTED;
    }
    return TAG_BULK_INIT == tag ? serve_init(n, buf, size, source) : serve_request(n, buf, size);
}

/* ---------------------------------------------------------------- client */

/* Posts the answer's receive, sends size bytes of send_buf with tag, and
 * waits for both. */
static int request(perf_na_t *n, opal_na_tag_t tag, size_t size)
{
    uint64_t target = n->completed + 2;
    int rc = opal_na_msg_recv_expected(n->cls, n->ctx, perf_na_count_cb, n, n->exp_buf, n->exp_max,
                                       n->exp_data, n->peer, 0, tag, n->exp_op);
    if (OPAL_SUCCESS == rc) {
        rc = opal_na_msg_send_unexpected(n->cls, n->ctx, perf_na_count_cb, n, n->send_buf, size,
                                         n->send_data, n->peer, 0, tag, n->send_ops[0]);
    }
    return OPAL_SUCCESS == rc ? perf_na_wait_for(n, target) : rc;
}

int perf_bulk_client_init(perf_na_t *n)
{
    size_t size = opal_bulk_get_serialize_size(n->bulk_local, 0);
    if (size > n->unexp_max) {
        fprintf(stderr,
                "opal_perf: the bulk handle (%zu bytes serialized) does not fit an "
                "unexpected message of %s\n",
                size, n->p->opts.na_info);
        return OPAL_ERR_BAD_PARAM;
    }
    int rc = opal_bulk_serialize(n->send_buf, size, 0, n->bulk_local);
    return OPAL_SUCCESS == rc ? request(n, TAG_BULK_INIT, size) : rc;
}

int perf_bulk_measure(perf_na_t *n, size_t size, long warmup, long iterations, double *value)
{
    bool pull = PERF_BULK_PULL == n->p->opts.command;
    size_t window = (size_t) n->p->opts.window;
    if (n->p->opts.validate) {
        if (pull) {
            fill_pattern(n->rma_buf, size * window, size);
        } else {
            memset(n->rma_buf, 0, size * window);
        }
    }
    opal_cursor_t c;
    opal_cursor_init_write(&c, n->send_buf, n->unexp_max);
    opal_cursor_put_u8(&c, pull ? OPAL_BULK_PULL : OPAL_BULK_PUSH);
    opal_cursor_put_u32(&c, (uint32_t) window);
    opal_cursor_put_u64(&c, size);
    if (!opal_cursor_ok(&c)) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    uint64_t start = 0;
    for (long i = 0; i < warmup + iterations; ++i) {
        if (i == warmup) {
            start = opal_timer_ns();
        }
        int rc = request(n, TAG_BULK, opal_cursor_pos(&c));
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    uint64_t ns = opal_timer_ns() - start;
    double seconds = (double) (0 == ns ? 1 : ns) / 1e9;
    *value = (double) size * (double) window * (double) iterations / seconds / 1e6;
    if (n->p->opts.validate && !pull && !has_pattern(n->rma_buf, size * window, size)) {
        fprintf(stderr,
                "opal_perf: bulk-push: the client's memory does not hold what the "
                "server pushed (size %zu)\n",
                size);
        return OPAL_ERR_BAD_VALUE;
    }
    return OPAL_SUCCESS;
}
