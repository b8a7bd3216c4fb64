/*
 * opal_perf's na subcommands, measured the way Mercury's perf tools
 * measure (Testing/perf/na: na_lat, na_bw_put, na_bw_get against
 * na_perf_server), so that contrib/perf/compare-mercury.sh compares like
 * with like:
 *
 *   na-lat  the client posts an expected receive, sends an unexpected
 *           message of the size; the server answers each with an expected
 *           message of the same size; half the round trip.
 *   na-put  the client gets the server's memory handle once, then puts
 *   na-get  (gets) a window of chunks of the size into (from) it and
 *           waits for all; bytes moved over time, MB/s (10^6 bytes).
 *
 * Roles: `opal_perf server` (or rank 1 of a job of two) serves; the
 * client (rank 0) measures and prints, then tells the server it is done.
 * Started alone, the server writes its URI to --uri-file and the client
 * reads it; in a job the URI goes through the modex.
 *
 * Everything on the hot path is allocated ahead: the messages' buffers,
 * the operation ids (one per chunk of a window), the memory handles.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/mca/na/base/base.h"
#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_rte.h"
#include "tools/opal_perf/opal_perf.h"
#include "tools/opal_perf/opal_perf_na.h"
#include "opal/util/opal_cursor.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"

void perf_na_note_status(perf_na_t *n, int ret, const char *what)
{
    if (OPAL_SUCCESS != ret && OPAL_SUCCESS == n->status) {
        n->status = ret;
        fprintf(stderr, "opal_perf: %s: %s failed: %s\n", n->server ? "server" : "client", what,
                opal_strerror(ret));
    }
}

void perf_na_count_cb(const opal_na_cb_info_t *info)
{
    perf_na_t *n = info->arg;
    perf_na_note_status(n, info->ret, "an na operation");
    ++n->completed;
}

int perf_na_wait_for(perf_na_t *n, uint64_t target)
{
    uint64_t seen = n->completed;
    /* A spinning wait reads the stall clock once every STALL_CHECK_EVERY
     * idle rounds: reading it every round (a vDSO call) took a third of a
     * spinning client's time, and the answer waited for it to be noticed.
     * A blocking round sleeps up to 100 ms: it reads it every time. */
    const unsigned every = n->p->opts.blocking ? 1 : STALL_CHECK_EVERY;
    unsigned idle = 0;
    uint64_t last = 0; /* when the current stall was first seen */
    while (n->completed < target && OPAL_SUCCESS == n->status) {
        int rc = n->p->opts.blocking ? opal_na_poll_wait(n->cls, n->ctx, 100, NULL)
                                     : opal_na_poll(n->cls, n->ctx, NULL);
        if (OPAL_SUCCESS != rc && OPAL_ERR_TIMEOUT != rc) {
            perf_na_note_status(n, rc, "progress");
            break;
        }
        (void) opal_na_trigger(n->ctx, 0, NULL);
        if (n->completed != seen) {
            seen = n->completed;
            idle = 0;
            last = 0;
            continue;
        }
        if (0 != ++idle % every) {
            continue;
        }
        uint64_t now = opal_timer_ns();
        if (0 == last) {
            last = now;
        } else if (now - last > STALL_NS) {
            fprintf(stderr, "opal_perf: %s: no completion for 60 s (is the %s alive?)\n",
                    n->server ? "server" : "client", n->server ? "client" : "server");
            return OPAL_ERR_TIMEOUT;
        }
    }
    return n->status;
}

/* --------------------------------------------------------------- set-up */

static size_t largest_size(const perf_options_t *o)
{
    size_t max = 0;
    for (size_t i = 0; i < o->num_sizes; ++i) {
        max = o->sizes[i] > max ? o->sizes[i] : max;
    }
    return max;
}

static int open_class(perf_na_t *n)
{
    opal_na_init_info_t init = {.busy_wait = !n->p->opts.blocking};
    int rc = opal_na_initialize_opt(n->p->opts.na_info, n->server, &init, &n->cls);
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "opal_perf: cannot open na class \"%s\": %s\n", n->p->opts.na_info,
                opal_strerror(rc));
        return rc;
    }
    rc = opal_na_context_create(n->cls, OPAL_NA_CONTEXT_ID_DEFAULT, &n->ctx);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    n->unexp_max = opal_na_msg_get_max_unexpected_size(n->cls);
    n->exp_max = opal_na_msg_get_max_expected_size(n->cls);
    n->unexp_buf = opal_na_msg_buf_alloc(n->cls, n->unexp_max, &n->unexp_data);
    n->exp_buf = opal_na_msg_buf_alloc(n->cls, n->exp_max, &n->exp_data);
    n->send_buf = opal_na_msg_buf_alloc(n->cls, n->unexp_max, &n->send_data);
    n->recv_op = opal_na_op_create(n->cls);
    n->exp_op = opal_na_op_create(n->cls);
    if (NULL == n->unexp_buf || NULL == n->exp_buf || NULL == n->send_buf || NULL == n->recv_op ||
        NULL == n->exp_op) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (int i = 0; i < SERVER_SENDS; ++i) {
        if (NULL == (n->send_ops[i] = opal_na_op_create(n->cls))) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    return OPAL_SUCCESS;
}

/* The RMA buffer (window chunks of max_size) and its registered handle;
 * skipped when the class has no RMA (the client then refuses put / get). */
static int setup_rma(perf_na_t *n, size_t max_size)
{
    size_t window = (size_t) n->p->opts.window;
    n->rma_size = (0 == max_size ? 1 : max_size) * window;
    if (posix_memalign((void **) &n->rma_buf, 4096, n->rma_size) != 0) {
        n->rma_buf = NULL;
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    memset(n->rma_buf, n->server ? 0x5a : 0, n->rma_size);
    if (!opal_na_has_rma(n->cls)) {
        /* na-put / na-get are refused; bulk uses its copy engine. */
        return OPAL_SUCCESS;
    }
    int rc = opal_na_mem_handle_create(n->cls, n->rma_buf, n->rma_size, OPAL_NA_MEM_READ_WRITE,
                                       &n->local_mh);
    if (OPAL_SUCCESS == rc) {
        rc = opal_na_mem_register(n->cls, n->local_mh);
    }
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    n->rma_ops = calloc(window, sizeof(*n->rma_ops));
    if (NULL == n->rma_ops) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < window; ++i) {
        if (NULL == (n->rma_ops[i] = opal_na_op_create(n->cls))) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    return OPAL_SUCCESS;
}

static void teardown(perf_na_t *n)
{
    if (NULL == n->cls) {
        return;
    }
    perf_bulk_teardown(n);
    if (NULL != n->rma_ops) {
        for (int i = 0; i < n->p->opts.window; ++i) {
            (void) opal_na_op_destroy(n->cls, n->rma_ops[i]);
        }
        free(n->rma_ops);
    }
    if (NULL != n->local_mh) {
        (void) opal_na_mem_deregister(n->cls, n->local_mh);
        opal_na_mem_handle_free(n->cls, n->local_mh);
    }
    opal_na_mem_handle_free(n->cls, n->remote_mh);
    free(n->rma_buf);
    for (int i = 0; i < SERVER_SENDS; ++i) {
        (void) opal_na_op_destroy(n->cls, n->send_ops[i]);
    }
    (void) opal_na_op_destroy(n->cls, n->recv_op);
    (void) opal_na_op_destroy(n->cls, n->exp_op);
    opal_na_msg_buf_free(n->cls, n->unexp_buf, n->unexp_data);
    opal_na_msg_buf_free(n->cls, n->exp_buf, n->exp_data);
    opal_na_msg_buf_free(n->cls, n->send_buf, n->send_data);
    opal_na_addr_free(n->cls, n->peer);
    if (NULL != n->ctx) {
        /* Completions of a failed run may still wait: run them first. */
        (void) opal_na_trigger(n->ctx, 0, NULL);
        (void) opal_na_context_destroy(n->cls, n->ctx);
    }
    (void) opal_na_finalize(n->cls);
}

/* -------------------------------------------------------- the server's URI */

static int publish_uri(perf_na_t *n, bool in_job)
{
    opal_na_addr_t *self = NULL;
    char uri[URI_MAX];
    size_t len = sizeof(uri);
    int rc = opal_na_addr_self(n->cls, &self);
    if (OPAL_SUCCESS == rc) {
        rc = opal_na_addr_to_string(n->cls, uri, &len, self);
    }
    opal_na_addr_free(n->cls, self);
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "opal_perf: server: cannot name its own address: %s\n", opal_strerror(rc));
        return rc;
    }
    if (in_job) {
        rc = opal_modex_send(URI_KEY, uri, strlen(uri) + 1, OPAL_MODEX_SCOPE_GLOBAL);
        return OPAL_SUCCESS == rc ? opal_modex_commit() : rc;
    }
    /* Written aside and renamed, so the client never reads half a URI. */
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", n->p->opts.uri_file, (long) getpid());
    FILE *f = fopen(tmp, "w");
    if (NULL == f || fprintf(f, "%s\n", uri) < 0 || 0 != fclose(f) ||
        0 != rename(tmp, n->p->opts.uri_file)) {
        fprintf(stderr, "opal_perf: server: cannot write the URI file %s: %s\n",
                n->p->opts.uri_file, strerror(errno));
        (void) unlink(tmp);
        return OPAL_ERR_IN_ERRNO;
    }
    printf("# opal_perf server: %s (URI in %s)\n", uri, n->p->opts.uri_file);
    fflush(stdout);
    return OPAL_SUCCESS;
}

static int read_uri_file(const char *path, char *uri, size_t size)
{
    uint64_t start = opal_timer_ns();
    for (;;) {
        FILE *f = fopen(path, "r");
        if (NULL != f) {
            char *line = fgets(uri, (int) size, f);
            fclose(f);
            if (NULL == line) {
                fprintf(stderr, "opal_perf: the URI file %s is empty\n", path);
                return OPAL_ERR_BAD_PARAM;
            }
            uri[strcspn(uri, "\r\n")] = '\0';
            return OPAL_SUCCESS;
        }
        if (ENOENT != errno || opal_timer_ns() - start > URI_FILE_WAIT_NS) {
            fprintf(stderr, "opal_perf: cannot read the URI file %s: %s\n", path,
                    ENOENT == errno ? "no server wrote it within 60 s" : strerror(errno));
            return OPAL_ERR_NOT_FOUND;
        }
        usleep(10000);
    }
}

static int lookup_server(perf_na_t *n, bool in_job)
{
    char uri[URI_MAX];
    int rc;
    if (in_job) {
        void *value = NULL;
        size_t size = 0;
        rc = opal_modex_recv(1, URI_KEY, &value, &size, -1);
        if (OPAL_SUCCESS == rc &&
            (0 == size || size > sizeof(uri) || '\0' != ((char *) value)[size - 1])) {
            fprintf(stderr, "opal_perf: rank 1 published a malformed URI (%zu bytes)\n", size);
            rc = OPAL_ERR_BAD_PARAM;
        }
        if (OPAL_SUCCESS == rc) {
            memcpy(uri, value, size);
        }
        free(value);
    } else {
        rc = read_uri_file(n->p->opts.uri_file, uri, sizeof(uri));
    }
    if (OPAL_SUCCESS == rc) {
        rc = opal_na_addr_lookup(n->cls, uri, &n->peer);
        if (OPAL_SUCCESS != rc) {
            fprintf(stderr, "opal_perf: cannot look up the server at %s: %s\n", uri,
                    opal_strerror(rc));
        }
    }
    return rc;
}

/* ---------------------------------------------------------------- server */

opal_na_op_id_t *perf_na_idle_send_op(perf_na_t *n)
{
    for (;;) {
        for (int i = 0; i < SERVER_SENDS; ++i) {
            if (OPAL_NA_OP_IDLE ==
                atomic_load_explicit(&n->send_ops[i]->state, memory_order_acquire)) {
                return n->send_ops[i];
            }
        }
        /* All answers in flight: let them finish. */
        (void) opal_na_poll(n->cls, n->ctx, NULL);
        (void) opal_na_trigger(n->ctx, 0, NULL);
    }
}

static void server_recv_cb(const opal_na_cb_info_t *info);

static int server_post(perf_na_t *n)
{
    return opal_na_msg_recv_unexpected(n->cls, n->ctx, server_recv_cb, n, n->unexp_buf,
                                       n->unexp_max, n->unexp_data, n->recv_op);
}

/* Sends the serialized memory handle to source (expected, TAG_HANDLE). */
static int send_handle(perf_na_t *n, opal_na_addr_t *source)
{
    if (NULL == n->local_mh) {
        /* No RMA here: an empty answer says so. */
        return opal_na_msg_send_expected(n->cls, n->ctx, NULL, n, n->exp_buf, 0, n->exp_data,
                                         source, 0, TAG_HANDLE, perf_na_idle_send_op(n));
    }
    size_t size = opal_na_mem_handle_get_serialize_size(n->cls, n->local_mh);
    if (size > n->exp_max) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    int rc = opal_na_mem_handle_serialize(n->cls, n->exp_buf, size, n->local_mh);
    if (OPAL_SUCCESS == rc) {
        rc = opal_na_msg_send_expected(n->cls, n->ctx, NULL, n, n->exp_buf, size, n->exp_data,
                                       source, 0, TAG_HANDLE, perf_na_idle_send_op(n));
    }
    return rc;
}

static void server_recv_cb(const opal_na_cb_info_t *info)
{
    perf_na_t *n = info->arg;
    if (OPAL_SUCCESS != info->ret) {
        perf_na_note_status(n, info->ret, "receiving a request");
        return;
    }
    opal_na_tag_t tag = info->info.recv_unexpected.tag;
    size_t size = info->info.recv_unexpected.actual_size;
    opal_na_addr_t *source = info->info.recv_unexpected.source;
    int rc = OPAL_SUCCESS;
    switch (tag) {
        case TAG_INIT:
            n->echo = size >= 1 && 0 != (((unsigned char *) n->unexp_buf)[0] & FLAG_ECHO);
            break;
        case TAG_LAT:
            if (n->echo && size > 0) {
                memcpy(n->exp_buf, n->unexp_buf, size);
            }
            break;
        case TAG_DONE:
            n->done = true;
            break;
        case TAG_BULK_INIT:
        case TAG_BULK:
            /* Reads the request now: the buffer is reposted below. */
            rc = perf_bulk_serve(n, tag, n->unexp_buf, size, source);
            break;
        default:
            break;
    }
    /* The next request may come as soon as the answer leaves: receive
     * first (the echo above already copied the bytes out). */
    if (!n->done && OPAL_SUCCESS == rc) {
        rc = server_post(n);
    }
    if (OPAL_SUCCESS == rc && TAG_LAT == tag) {
        rc = opal_na_msg_send_expected(n->cls, n->ctx, NULL, n, n->exp_buf, size, n->exp_data,
                                       source, 0, TAG_LAT, perf_na_idle_send_op(n));
    } else if (OPAL_SUCCESS == rc && TAG_HANDLE == tag) {
        rc = send_handle(n, source);
    } else if (tag > TAG_BULK) {
        fprintf(stderr, "opal_perf: server: a request with unknown tag %u (ignored)\n", tag);
    }
    perf_na_note_status(n, rc, "answering a request");
    opal_na_addr_free(n->cls, source);
}

static int serve(perf_na_t *n)
{
    int rc = server_post(n);
    while (OPAL_SUCCESS == rc && !n->done && OPAL_SUCCESS == n->status) {
        rc = n->p->opts.blocking ? opal_na_poll_wait(n->cls, n->ctx, 100, NULL)
                                 : opal_na_poll(n->cls, n->ctx, NULL);
        rc = OPAL_ERR_TIMEOUT == rc ? OPAL_SUCCESS : rc;
        (void) opal_na_trigger(n->ctx, 0, NULL);
    }
    /* Let the last answers leave before the class closes. */
    for (int i = 0; i < SERVER_SENDS && OPAL_SUCCESS == rc; ++i) {
        while (OPAL_NA_OP_IDLE != atomic_load(&n->send_ops[i]->state)) {
            (void) opal_na_poll(n->cls, n->ctx, NULL);
            (void) opal_na_trigger(n->ctx, 0, NULL);
        }
    }
    return OPAL_SUCCESS == rc ? n->status : rc;
}

/* ---------------------------------------------------------------- client */

static int client_send(perf_na_t *n, opal_na_tag_t tag, size_t size)
{
    uint64_t target = n->completed + 1;
    int rc = opal_na_msg_send_unexpected(n->cls, n->ctx, perf_na_count_cb, n, n->send_buf, size,
                                         n->send_data, n->peer, 0, tag, n->send_ops[0]);
    return OPAL_SUCCESS == rc ? perf_na_wait_for(n, target) : rc;
}

static void handle_cb(const opal_na_cb_info_t *info)
{
    perf_na_t *n = info->arg;
    n->handle_size = info->info.recv_expected.actual_size;
    perf_na_count_cb(info);
}

static int fetch_remote_handle(perf_na_t *n)
{
    uint64_t target = n->completed + 2;
    int rc = opal_na_msg_recv_expected(n->cls, n->ctx, handle_cb, n, n->exp_buf, n->exp_max,
                                       n->exp_data, n->peer, 0, TAG_HANDLE, n->exp_op);
    if (OPAL_SUCCESS == rc) {
        rc = opal_na_msg_send_unexpected(n->cls, n->ctx, perf_na_count_cb, n, n->send_buf, 0,
                                         n->send_data, n->peer, 0, TAG_HANDLE, n->send_ops[0]);
    }
    if (OPAL_SUCCESS == rc) {
        rc = perf_na_wait_for(n, target);
    }
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if (0 == n->handle_size) {
        fprintf(stderr, "opal_perf: the server has no put / get over %s\n", n->p->opts.na_info);
        return OPAL_ERR_NOT_SUPPORTED;
    }
    rc = opal_na_mem_handle_deserialize(n->cls, &n->remote_mh, n->exp_buf, n->handle_size);
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "opal_perf: the server's memory handle did not deserialize: %s\n",
                opal_strerror(rc));
    }
    return rc;
}

static void fill_pattern(unsigned char *buf, size_t size, uint64_t seed)
{
    for (size_t i = 0; i < size; ++i) {
        buf[i] = (unsigned char) (seed * 31 + i * 7 + (i >> 8));
    }
}

static int measure_lat(perf_na_t *n, size_t size, long warmup, long iterations, double *value)
{
    if (n->p->opts.validate) {
        fill_pattern(n->send_buf, size, size);
    }
    uint64_t start = 0;
    for (long i = 0; i < warmup + iterations; ++i) {
        if (i == warmup) {
            start = opal_timer_ns();
        }
        uint64_t target = n->completed + 2;
        int rc = opal_na_msg_recv_expected(n->cls, n->ctx, perf_na_count_cb, n, n->exp_buf, size,
                                           n->exp_data, n->peer, 0, TAG_LAT, n->exp_op);
        if (OPAL_SUCCESS == rc) {
            rc = opal_na_msg_send_unexpected(n->cls, n->ctx, perf_na_count_cb, n, n->send_buf, size,
                                             n->send_data, n->peer, 0, TAG_LAT, n->send_ops[0]);
        }
        if (OPAL_SUCCESS == rc) {
            rc = perf_na_wait_for(n, target);
        }
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
        if (n->p->opts.validate && 0 != memcmp(n->exp_buf, n->send_buf, size)) {
            fprintf(stderr,
                    "opal_perf: na-lat: the answer of %zu bytes differs from what was "
                    "sent\n",
                    size);
            return OPAL_ERR_BAD_VALUE;
        }
    }
    uint64_t ns = opal_timer_ns() - start;
    *value = (double) (0 == ns ? 1 : ns) / 1e3 / (double) iterations / 2.0;
    return OPAL_SUCCESS;
}

static int measure_rma(perf_na_t *n, size_t size, long warmup, long iterations, double *value)
{
    bool put = PERF_NA_PUT == n->p->opts.command;
    size_t window = (size_t) n->p->opts.window;
    if (n->p->opts.validate) {
        fill_pattern(n->rma_buf, size * window, size);
    }
    uint64_t start = 0;
    for (long i = 0; i < warmup + iterations; ++i) {
        if (i == warmup) {
            start = opal_timer_ns();
        }
        uint64_t target = n->completed + window;
        for (size_t c = 0; c < window; ++c) {
            int rc = (put ? opal_na_put : opal_na_get)(n->cls, n->ctx, perf_na_count_cb, n,
                                                       n->local_mh, c * size, n->remote_mh,
                                                       c * size, size, n->peer, 0, n->rma_ops[c]);
            if (OPAL_SUCCESS != rc) {
                return rc;
            }
        }
        int rc = perf_na_wait_for(n, target);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    uint64_t ns = opal_timer_ns() - start;
    double seconds = (double) (0 == ns ? 1 : ns) / 1e9;
    *value = (double) size * (double) window * (double) iterations / seconds / 1e6;
    if (n->p->opts.validate) {
        /* A get brings back the server's bytes (0x5a); a put is checked
         * by getting the chunks back. */
        if (put) {
            memset(n->rma_buf, 0, size * window);
            uint64_t t = n->completed + window;
            for (size_t c = 0; c < window; ++c) {
                int rc = opal_na_get(n->cls, n->ctx, perf_na_count_cb, n, n->local_mh, c * size,
                                     n->remote_mh, c * size, size, n->peer, 0, n->rma_ops[c]);
                if (OPAL_SUCCESS != rc) {
                    return rc;
                }
            }
            int rc = perf_na_wait_for(n, t);
            if (OPAL_SUCCESS != rc) {
                return rc;
            }
            unsigned char *expect = malloc(size * window + 1);
            if (NULL == expect) {
                return OPAL_ERR_OUT_OF_RESOURCE;
            }
            fill_pattern(expect, size * window, size);
            bool same = 0 == memcmp(expect, n->rma_buf, size * window);
            free(expect);
            if (!same) {
                fprintf(stderr,
                        "opal_perf: na-put: the server's memory does not hold what was "
                        "put (size %zu)\n",
                        size);
                return OPAL_ERR_BAD_VALUE;
            }
        } else {
            for (size_t b = 0; b < size * window; ++b) {
                if (0x5a != n->rma_buf[b]) {
                    fprintf(stderr,
                            "opal_perf: na-get: byte %zu of size %zu is 0x%02x, not the "
                            "server's 0x5a\n",
                            b, size, n->rma_buf[b]);
                    return OPAL_ERR_BAD_VALUE;
                }
            }
        }
    }
    return OPAL_SUCCESS;
}

static int run_client(perf_na_t *n)
{
    perf_options_t *o = &n->p->opts;
    bool bulk = PERF_BULK_PULL == o->command || PERF_BULK_PUSH == o->command;
    bool rma = bulk || PERF_NA_PUT == o->command || PERF_NA_GET == o->command;
    size_t max = largest_size(o);
    if (!rma && max > n->unexp_max) {
        fprintf(stderr,
                "opal_perf: na-lat: size %zu is above %s's largest unexpected message "
                "(%zu bytes)\n",
                max, n->p->opts.na_info, n->unexp_max);
        return OPAL_ERR_BAD_PARAM;
    }
    if (rma && !bulk && NULL == n->local_mh) {
        fprintf(stderr, "opal_perf: %s: the na class %s has no put / get\n",
                perf_command_name(o->command), o->na_info);
        return OPAL_ERR_NOT_SUPPORTED;
    }
    ((unsigned char *) n->send_buf)[0] = o->validate ? FLAG_ECHO : 0;
    int rc = client_send(n, TAG_INIT, 1);
    if (OPAL_SUCCESS == rc && bulk) {
        rc = perf_bulk_client_init(n);
    } else if (OPAL_SUCCESS == rc && rma) {
        rc = fetch_remote_handle(n);
    }
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if (o->json) {
        printf("{\n  \"command\": \"%s\",\n  \"na\": \"%s\",\n  \"window\": %d,\n"
               "  \"results\": [",
               perf_command_name(o->command), o->na_info, rma ? o->window : 1);
    } else {
        printf("# opal_perf %s over na %s%s\n", perf_command_name(o->command), o->na_info,
               o->blocking ? " (blocking progress)" : "");
        if (rma) {
            printf("# window of %d chunks per iteration\n", o->window);
        }
        printf("%-10s%20s\n", "# Size", rma ? "Bandwidth (MB/s)" : "Latency (us)");
    }
    fflush(stdout);
    for (size_t i = 0; i < o->num_sizes && OPAL_SUCCESS == rc; ++i) {
        size_t size = o->sizes[i];
        long iterations = perf_iterations(o, size);
        long warmup = perf_warmup(o, size);
        double value = 0;
        if (bulk) {
            rc = perf_bulk_measure(n, size, warmup, iterations, &value);
        } else {
            rc = rma ? measure_rma(n, size, warmup, iterations, &value)
                     : measure_lat(n, size, warmup, iterations, &value);
        }
        if (OPAL_SUCCESS != rc) {
            break;
        }
        if (o->json) {
            printf("%s\n    {\"size\": %zu, \"iterations\": %ld, \"%s\": %.3f}", 0 == i ? "" : ",",
                   size, iterations, rma ? "bandwidth_MBps" : "latency_us", value);
        } else {
            printf("%-10zu%20.2f\n", size, value);
        }
        fflush(stdout);
    }
    if (o->json) {
        printf("\n  ]\n}\n");
    }
    /* The server stops whatever happened here. */
    int done = client_send(n, TAG_DONE, 0);
    return OPAL_SUCCESS == rc ? done : rc;
}

/* ------------------------------------------------------------------ entry */

int perf_na_run(perf_t *p, bool in_job)
{
    perf_na_t n = {.p = p};
    if (in_job) {
        const opal_proc_job_info_t *job = opal_proc_job_info();
        if (NULL == job || 2 != job->size) {
            fprintf(stderr,
                    "opal_perf: %s in a job needs exactly two ranks (mcarun -np 2), or "
                    "--uri-file between a server and a client started alone\n",
                    perf_command_name(p->opts.command));
            return OPAL_ERR_BAD_PARAM;
        }
        if (PERF_SERVER == p->opts.command) {
            fprintf(stderr, "opal_perf: in a job rank 1 serves by itself: run the client's "
                            "subcommand (na-lat, na-put, na-get) in both ranks\n");
            return OPAL_ERR_BAD_PARAM;
        }
        n.server = 1 == job->my_name.vpid;
    } else {
        n.server = PERF_SERVER == p->opts.command;
    }
    int rc = open_class(&n);
    if (OPAL_SUCCESS == rc) {
        /* A server started alone offers chunks of its own --max-size
         * (4 MiB by default): a client asking for more is refused by the
         * range check of put / get. */
        rc = setup_rma(&n, largest_size(&p->opts));
    }
    bool bulk = PERF_BULK_PULL == p->opts.command || PERF_BULK_PUSH == p->opts.command;
    if (OPAL_SUCCESS == rc && (bulk || (n.server && !in_job))) {
        /* A server started alone serves bulk requests too. */
        rc = perf_bulk_setup(&n);
    }
    if (OPAL_SUCCESS == rc) {
        rc = n.server ? publish_uri(&n, in_job) : lookup_server(&n, in_job);
    }
    if (OPAL_SUCCESS == rc) {
        rc = n.server ? serve(&n) : run_client(&n);
    }
    if (in_job) {
        /* Neither side closes while the other may still send to it. */
        int frc = opal_fence(false);
        rc = OPAL_SUCCESS == rc ? frc : rc;
    }
    teardown(&n);
    return rc;
}
