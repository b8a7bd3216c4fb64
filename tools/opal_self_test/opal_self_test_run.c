/*
 * The measurement: for each size, repetitions x endpoints self-test RPCs
 * issued round robin over the endpoints with at most max-inflight-rpcs in
 * flight, each timed from its send to its completion. One slot per RPC in
 * flight; a slot owns the buffer a bulk output is pushed into. Inputs are
 * only read (copied into the request, or pulled by the server), so one
 * buffer and one read-only handle serve every slot.
 *
 * An endpoint whose RPC fails gets no more of that size (the rest are
 * counted skipped), so that a dead rank costs one timeout per RPC in
 * flight, not one per repetition.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/rpc/rpc_selftest.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "tools/opal_self_test/opal_self_test.h"

typedef struct st_slot_t st_slot_t;

typedef struct {
    opal_rpc_context_t *ctx;
    opal_rpc_group_t *group;
    const st_options_t *opts;
    opal_rpc_context_t *const *serve;
    int num_serve;
    const st_size_t *size;
    st_result_t *res;
    opal_rpc_endpoint_t *eps; /* resolved, one per endpoint */
    uint8_t *in_buf;
    opal_bulk_t *in_bulk; /* NULL unless the input goes by bulk */
    st_slot_t *slots;
    long inflight;
    size_t next_ep; /* round robin */
    int fatal;      /* an error that stops the whole size */
} st_state_t;

struct st_slot_t {
    st_state_t *st;
    bool busy;
    size_t ep;
    uint64_t t0;
    uint8_t *out_buf;
    opal_bulk_t *out_bulk;
};

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return (x > y) - (x < y);
}

/* Nearest rank: the smallest sample with at least p of them at or below it. */
static double at_percentile(const uint64_t *ns, uint64_t n, double p)
{
    uint64_t rank = (uint64_t) ((double) n * p + 0.999999);
    rank = rank < 1 ? 1 : (rank > n ? n : rank);
    return (double) ns[rank - 1] / 1e3;
}

void st_stats(uint64_t *ns, uint64_t n, st_stats_t *s)
{
    memset(s, 0, sizeof(*s));
    s->count = n;
    if (0 == n) {
        return;
    }
    qsort(ns, n, sizeof(*ns), cmp_u64);
    s->min = (double) ns[0] / 1e3;
    s->median = at_percentile(ns, n, 0.5);
    s->p90 = at_percentile(ns, n, 0.9);
    s->p99 = at_percentile(ns, n, 0.99);
    s->max = (double) ns[n - 1] / 1e3;
}

static bool holds_pattern(const uint8_t *buf, uint64_t size)
{
    for (uint64_t i = 0; i < size; ++i) {
        if (buf[i] != opal_rpc_selftest_byte(size, i)) {
            return false;
        }
    }
    return true;
}

static void record_failure(st_result_t *r, int status, const char *why)
{
    ++r->failed;
    if ('\0' == r->first_error[0]) {
        snprintf(r->first_error, sizeof(r->first_error), "%s%s%s", opal_strerror(status),
                 NULL == why ? "" : ": ", NULL == why ? "" : why);
    }
}

static void completed(opal_rpc_request_t *req, int status, void *arg)
{
    st_slot_t *slot = arg;
    st_state_t *st = slot->st;
    uint64_t ns = opal_timer_ns() - slot->t0;
    st_result_t *r = &st->res[slot->ep];
    const st_size_t *size = st->size;
    const char *why = NULL;
    if (OPAL_SUCCESS == status) {
        const opal_rpc_selftest_out_t *out = opal_rpc_req_output(req);
        uint64_t got = size->out_bulk ? 0 : out->payload.len;
        if (got != (size->out_bulk ? 0 : size->out_size)) {
            status = OPAL_ERR_BAD_VALUE;
            why = "the reply's size is not the size asked for";
        } else if (st->opts->verify &&
                   !holds_pattern(size->out_bulk ? slot->out_buf : out->payload.buf,
                                  size->out_size)) {
            status = OPAL_ERR_BAD_VALUE;
            why = "the output does not hold the self-test pattern";
        }
    } else {
        why = opal_rpc_req_error_reason(req);
    }
    if (OPAL_SUCCESS == status) {
        r->ns[r->completed++] = ns;
    } else {
        record_failure(r, status, why);
    }
    slot->busy = false;
}

static int send_one(st_state_t *st, st_slot_t *slot, size_t ep)
{
    const st_size_t *size = st->size;
    opal_rpc_request_t *req = NULL;
    int rc = opal_rpc_req_create(st->ctx, &st->eps[ep], OPAL_RPC_SELFTEST_OPCODE, &req);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if (st->opts->timeout > 0) {
        (void) opal_rpc_req_set_timeout(req, st->opts->timeout);
    }
    opal_rpc_selftest_in_t *in = opal_rpc_req_input(req);
    in->in_size = size->in_size;
    in->out_size = size->out_size;
    in->verify = st->opts->verify;
    if (size->in_bulk) {
        in->in_bulk = st->in_bulk;
    } else {
        in->payload.buf = st->in_buf;
        in->payload.len = (uint32_t) size->in_size;
    }
    in->out_bulk = size->out_bulk ? slot->out_bulk : NULL;
    if (st->opts->verify && size->out_bulk) {
        memset(slot->out_buf, 0, size->out_size);
    }
    slot->busy = true;
    slot->ep = ep;
    slot->t0 = opal_timer_ns();
    rc = opal_rpc_req_send(req, completed, slot);
    if (OPAL_SUCCESS != rc) {
        slot->busy = false;
    }
    return rc;
}

/* Issues and progresses until every RPC of the size is done. */
static void run_size(st_state_t *st)
{
    size_t n = st->opts->num_eps;
    /* RPCs handed to each endpoint so far (sent, done or skipped). */
    uint64_t *handed = calloc(n, sizeof(*handed));
    if (NULL == handed) {
        st->fatal = OPAL_ERR_OUT_OF_RESOURCE;
        return;
    }
    uint64_t reps = (uint64_t) st->opts->repetitions;
    for (;;) {
        bool more = false;
        for (long s = 0; s < st->inflight; ++s) {
            st_slot_t *slot = &st->slots[s];
            if (slot->busy) {
                more = true;
                continue;
            }
            size_t ep = 0;
            bool found = false;
            for (size_t tries = 0; tries < n && !found; ++tries) {
                size_t i = st->next_ep;
                st->next_ep = (st->next_ep + 1) % n;
                if (0 == st->res[i].failed && handed[i] < reps) {
                    ep = i;
                    found = true;
                }
            }
            if (!found) {
                continue;
            }
            ++handed[ep];
            int rc = send_one(st, slot, ep);
            if (OPAL_SUCCESS != rc) {
                record_failure(&st->res[ep], rc, "the request could not be sent");
            } else {
                more = true;
            }
        }
        if (!more) {
            break;
        }
        /* This process's other contexts serve the endpoints of this
         * rank that name them (the loopback): they are polled, the
         * measuring context waits briefly. */
        for (int c = 0; c < st->num_serve; ++c) {
            (void) opal_rpc_progress(st->serve[c], 0);
        }
        (void) opal_rpc_progress(st->ctx, 0 == st->num_serve ? 100 : 1);
    }
    for (size_t i = 0; i < n; ++i) {
        st->res[i].skipped = reps - st->res[i].completed - st->res[i].failed;
    }
    free(handed);
}

static int prepare(st_state_t *st, const st_size_t *size)
{
    opal_bulk_class_t *bc = opal_rpc_bulk_class();
    size_t in_len = (size_t) size->in_size;
    st->in_buf = malloc(in_len > 0 ? in_len : 1);
    if (NULL == st->in_buf) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < in_len; ++i) {
        st->in_buf[i] = opal_rpc_selftest_byte(size->in_size, i);
    }
    if ((size->in_bulk || size->out_bulk) && NULL == bc) {
        fprintf(stderr,
                "opal_self_test: --message-size %s: bulk needs a network (na %s has no "
                "bulk class)\n",
                "with 'b'", st->opts->na_info);
        return OPAL_ERR_NOT_AVAILABLE;
    }
    int rc = OPAL_SUCCESS;
    if (size->in_bulk) {
        void *bufs[1] = {st->in_buf};
        rc = opal_bulk_create(bc, 1, bufs, &in_len, OPAL_BULK_READ_ONLY, &st->in_bulk);
    }
    for (long s = 0; s < st->inflight && OPAL_SUCCESS == rc && size->out_bulk; ++s) {
        st_slot_t *slot = &st->slots[s];
        size_t out_len = (size_t) size->out_size;
        slot->out_buf = calloc(1, out_len);
        void *bufs[1] = {slot->out_buf};
        rc = NULL == slot->out_buf
                 ? OPAL_ERR_OUT_OF_RESOURCE
                 : opal_bulk_create(bc, 1, bufs, &out_len, OPAL_BULK_WRITE_ONLY, &slot->out_bulk);
    }
    return rc;
}

static void release(st_state_t *st)
{
    for (long s = 0; s < st->inflight; ++s) {
        (void) opal_bulk_free(st->slots[s].out_bulk);
        free(st->slots[s].out_buf);
        st->slots[s].out_bulk = NULL;
        st->slots[s].out_buf = NULL;
    }
    (void) opal_bulk_free(st->in_bulk);
    st->in_bulk = NULL;
    free(st->in_buf);
    st->in_buf = NULL;
}

void st_results_free(st_size_result_t *results, size_t count, size_t num_eps)
{
    if (NULL == results) {
        return;
    }
    for (size_t i = 0; i < count; ++i) {
        for (size_t e = 0; NULL != results[i].eps && e < num_eps; ++e) {
            free(results[i].eps[e].ns);
        }
        free(results[i].eps);
    }
    free(results);
}

int st_run(opal_rpc_context_t *ctx, opal_rpc_context_t *const *serve, int num_serve,
           opal_rpc_group_t *group, const st_options_t *opts, st_size_result_t **results_out)
{
    st_state_t st = {.ctx = ctx,
                     .serve = serve,
                     .num_serve = num_serve,
                     .group = group,
                     .opts = opts,
                     .inflight = opts->inflight};
    size_t n = opts->num_eps;
    int rc = OPAL_SUCCESS;
    *results_out = NULL;
    if ((uint64_t) n * (uint64_t) opts->repetitions > ST_MAX_SAMPLES) {
        fprintf(stderr,
                "opal_self_test: %zu endpoints x --repetitions %ld is more than %llu samples\n", n,
                opts->repetitions, (unsigned long long) ST_MAX_SAMPLES);
        return OPAL_ERR_BAD_PARAM;
    }
    for (size_t i = 0; i < opts->num_sizes; ++i) {
        if (opts->sizes[i].out_bulk &&
            (uint64_t) opts->inflight * opts->sizes[i].out_size > ST_MAX_OUT_BUFFERS) {
            char label[80];
            st_size_label(&opts->sizes[i], label, sizeof(label));
            fprintf(stderr,
                    "opal_self_test: --max-inflight-rpcs %ld x the bulk output of %s is more "
                    "than 4 GiB of buffers\n",
                    opts->inflight, label);
            return OPAL_ERR_BAD_PARAM;
        }
    }
    st_size_result_t *results = calloc(opts->num_sizes, sizeof(*results));
    st.eps = calloc(n, sizeof(*st.eps));
    st.slots = calloc((size_t) opts->inflight, sizeof(*st.slots));
    if (NULL == results || NULL == st.eps || NULL == st.slots) {
        rc = OPAL_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    for (size_t e = 0; e < n && OPAL_SUCCESS == rc; ++e) {
        if (opts->eps[e].rank >= opal_rpc_group_size(group)) {
            fprintf(stderr, "opal_self_test: --endpoint: rank %u is not in group %s of %u ranks\n",
                    opts->eps[e].rank, opal_rpc_group_name(group), opal_rpc_group_size(group));
            rc = OPAL_ERR_BAD_PARAM;
            break;
        }
        rc = opal_rpc_group_endpoint(group, opts->eps[e].rank, opts->eps[e].ctx, &st.eps[e]);
        if (OPAL_SUCCESS != rc) {
            fprintf(stderr, "opal_self_test: rank %u of group %s: no address: %s\n",
                    opts->eps[e].rank, opal_rpc_group_name(group), opal_strerror(rc));
        }
    }
    for (long s = 0; s < opts->inflight; ++s) {
        st.slots[s].st = &st;
    }
    for (size_t i = 0; i < opts->num_sizes && OPAL_SUCCESS == rc; ++i) {
        st_size_result_t *sr = &results[i];
        sr->size = opts->sizes[i];
        sr->eps = calloc(n, sizeof(*sr->eps));
        if (NULL == sr->eps) {
            rc = OPAL_ERR_OUT_OF_RESOURCE;
            break;
        }
        for (size_t e = 0; e < n && OPAL_SUCCESS == rc; ++e) {
            sr->eps[e].ep = opts->eps[e];
            sr->eps[e].ns = malloc((size_t) opts->repetitions * sizeof(uint64_t));
            rc = NULL == sr->eps[e].ns ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;
        }
        st.size = &sr->size;
        st.res = sr->eps;
        st.next_ep = 0;
        if (OPAL_SUCCESS == rc) {
            rc = prepare(&st, &sr->size);
        }
        if (OPAL_SUCCESS == rc) {
            uint64_t t0 = opal_timer_ns();
            run_size(&st);
            sr->wall_ns = opal_timer_ns() - t0;
            rc = st.fatal;
        }
        release(&st);
    }
out:
    free(st.eps);
    free(st.slots);
    if (OPAL_SUCCESS != rc) {
        st_results_free(results, opts->num_sizes, n);
        return rc;
    }
    *results_out = results;
    return OPAL_SUCCESS;
}
