/*
 * opal_self_test from start to end. Two ways to run:
 *
 * - inside a job (mcarun -np N, or a PMIx launcher): every rank opens the
 *   engine, listening, and creates the contexts the endpoints name; after
 *   a fence rank 0 measures over the primary group while the others
 *   serve; then rank 0 sends each of them the tool's own stop request,
 *   and all fence again before closing. What is measured is the engine's
 *   self-test protocol, which the others serve on their own: the stop is
 *   the only thing the tool adds to them.
 * - a client started alone (--group-file F): it attaches to the group a
 *   job saved (opal_rpc_group_save) and measures it; those processes may
 *   be any program that runs the engine.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_open.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/runtime/opal_init.h"
#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "orte/runtime/orte_init.h"
#include "tools/opal_self_test/opal_self_test.h"

/* The tool's own protocol: one request, rank 0 to a serving rank, "stop". */
#define ST_TOOL_BASE 0x31
#define ST_STOP      OPAL_RPC_OPCODE(ST_TOOL_BASE, 1, 0)

static volatile bool stop_requested;

static void stop_handler(opal_rpc_request_t *req)
{
    stop_requested = true;
    (void) opal_rpc_reply_send(req);
}

static const opal_rpc_op_t tool_ops[] = {{.handler = stop_handler}};
static const opal_rpc_proto_t tool_proto = {
    .name = "opal_self_test", .base = ST_TOOL_BASE, .version = 1, .count = 1, .ops = tool_ops};

static int apply_mca(const st_options_t *o)
{
    if (0 == o->num_mca) {
        return OPAL_SUCCESS;
    }
    char **keys = calloc((size_t) o->num_mca, sizeof(char *));
    char **values = calloc((size_t) o->num_mca, sizeof(char *));
    int rc = OPAL_ERR_OUT_OF_RESOURCE;
    if (NULL != keys && NULL != values) {
        for (int i = 0; i < o->num_mca; ++i) {
            keys[i] = o->mca[i].key;
            values[i] = o->mca[i].value;
        }
        rc = mca_base_var_process_cmdline(o->num_mca, keys, values);
    }
    free(keys);
    free(values);
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "opal_self_test: --mca: %s\n", opal_strerror(rc));
    }
    return rc;
}

/* The default endpoints: every rank of the group but self (self alone
 * when it is the only one), context 0. */
static int default_endpoints(st_options_t *o, opal_rpc_group_t *g)
{
    uint32_t n = opal_rpc_group_size(g), me = UINT32_MAX;
    (void) opal_rpc_group_rank(g, &me);
    o->eps = calloc(n, sizeof(*o->eps));
    if (NULL == o->eps) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (uint32_t r = 0; r < n; ++r) {
        if (r != me || 1 == n) {
            o->eps[o->num_eps++] = (st_endpoint_t){.rank = r, .ctx = 0};
        }
    }
    return OPAL_SUCCESS;
}

/* Measures and prints; OPAL_SUCCESS only when every RPC succeeded. */
static int measure(opal_rpc_context_t *ctx, opal_rpc_context_t *const *serve, int num_serve,
                   opal_rpc_group_t *g, st_options_t *o)
{
    int rc = NULL == o->eps ? default_endpoints(o, g) : OPAL_SUCCESS;
    st_size_result_t *results = NULL;
    if (OPAL_SUCCESS == rc) {
        rc = st_run(ctx, serve, num_serve, g, o, &results);
    }
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "opal_self_test: %s\n", opal_strerror(rc));
        return rc;
    }
    st_run_info_t info = {.group = opal_rpc_group_name(g),
                          .group_size = opal_rpc_group_size(g),
                          .na = o->na_info,
                          .repetitions = o->repetitions,
                          .inflight = o->inflight};
    if (o->json) {
        st_output_json(&info, o, results);
    } else {
        st_output_table(&info, o, results);
    }
    for (size_t i = 0; i < o->num_sizes; ++i) {
        for (size_t e = 0; e < o->num_eps; ++e) {
            const st_result_t *r = &results[i].eps[e];
            if (r->failed > 0) {
                char label[80];
                st_size_label(&results[i].size, label, sizeof(label));
                fprintf(stderr, "opal_self_test: %s to %u:%u failed: %s\n", label, r->ep.rank,
                        r->ep.ctx, r->first_error);
                rc = OPAL_ERR_PEER_FAILED;
            }
        }
    }
    st_results_free(results, o->num_sizes, o->num_eps);
    return rc;
}

/* ------------------------------------------------------- client alone */

static int run_attached(st_options_t *o)
{
    opal_rpc_context_t *ctx = NULL;
    opal_rpc_group_t *g = NULL;
    int rc = opal_rpc_init(o->na_info, false);
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "opal_self_test: cannot open rpc over na %s: %s\n", o->na_info,
                opal_strerror(rc));
        return rc;
    }
    rc = opal_rpc_context_create(0, &ctx);
    if (OPAL_SUCCESS == rc) {
        rc = opal_rpc_group_attach(o->group_file, &g);
        if (OPAL_SUCCESS != rc) {
            fprintf(stderr, "opal_self_test: --group-file %s: cannot attach: %s\n", o->group_file,
                    opal_strerror(rc));
        }
    }
    if (OPAL_SUCCESS == rc) {
        rc = mca_base_var_check_unknown();
    }
    if (OPAL_SUCCESS == rc) {
        rc = measure(ctx, NULL, 0, g, o);
    }
    if (NULL != g) {
        (void) opal_rpc_group_destroy(g);
    }
    if (NULL != ctx) {
        int crc = opal_rpc_context_destroy(ctx);
        rc = OPAL_SUCCESS == rc ? crc : rc;
    }
    int frc = opal_rpc_finalize();
    return OPAL_SUCCESS == rc ? frc : rc;
}

/* ------------------------------------------------------------- in a job */

typedef struct {
    int pending;
    int status;
} stop_wait_t;

static void stop_done(opal_rpc_request_t *req, int status, void *arg)
{
    (void) req;
    stop_wait_t *w = arg;
    if (OPAL_SUCCESS != status && OPAL_SUCCESS == w->status) {
        w->status = status;
    }
    --w->pending;
}

static bool stops_done(void *arg)
{
    return 0 == ((stop_wait_t *) arg)->pending;
}

/* Rank 0: every other rank stops serving. */
static int stop_servers(opal_rpc_context_t *ctx, opal_rpc_group_t *g, uint32_t np)
{
    stop_wait_t w = {0, OPAL_SUCCESS};
    int rc = OPAL_SUCCESS;
    for (uint32_t r = 1; r < np && OPAL_SUCCESS == rc; ++r) {
        opal_rpc_endpoint_t ep;
        opal_rpc_request_t *req = NULL;
        rc = opal_rpc_group_endpoint(g, r, 0, &ep);
        if (OPAL_SUCCESS == rc) {
            rc = opal_rpc_req_create(ctx, &ep, ST_STOP, &req);
        }
        if (OPAL_SUCCESS == rc) {
            ++w.pending;
            rc = opal_rpc_req_send(req, stop_done, &w);
            if (OPAL_SUCCESS != rc) {
                --w.pending;
            }
        }
        if (OPAL_SUCCESS != rc) {
            fprintf(stderr, "opal_self_test: cannot tell rank %u to stop: %s\n", r,
                    opal_strerror(rc));
        }
    }
    if (w.pending > 0 && OPAL_SUCCESS != opal_rpc_progress_cond(ctx, 0, stops_done, &w)) {
        rc = OPAL_ERR_TIMEOUT;
    }
    if (OPAL_SUCCESS != w.status) {
        fprintf(stderr, "opal_self_test: a serving rank did not answer the stop: %s\n",
                opal_strerror(w.status));
    }
    return OPAL_SUCCESS == rc ? w.status : rc;
}

/* The context indexes the endpoints name, and 0 (the tool's stop). */
static int context_set(const st_options_t *o, bool used[ST_MAX_CONTEXT + 1])
{
    int count = 0;
    memset(used, 0, (ST_MAX_CONTEXT + 1) * sizeof(bool));
    used[0] = true;
    for (size_t e = 0; e < o->num_eps; ++e) {
        used[o->eps[e].ctx] = true;
    }
    for (int i = 0; i <= ST_MAX_CONTEXT; ++i) {
        count += used[i];
    }
    return count;
}

static int run_in_job(st_options_t *o)
{
    const opal_proc_job_info_t *job = opal_proc_job_info();
    uint32_t me = job->my_name.vpid, np = job->size;
    opal_rpc_context_t *ctxs[ST_MAX_CONTEXT + 1] = {NULL};
    bool used[ST_MAX_CONTEXT + 1];
    int nctx = context_set(o, used);
    opal_rpc_group_t *g = NULL;
    int rc = opal_rpc_init(o->na_info, true);
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "opal_self_test: rank %u: cannot open rpc over na %s: %s\n", me, o->na_info,
                opal_strerror(rc));
        return rc;
    }
    rc = opal_rpc_proto_register(&tool_proto);
    for (int i = 0; i <= ST_MAX_CONTEXT && OPAL_SUCCESS == rc; ++i) {
        if (used[i]) {
            rc = opal_rpc_context_create((uint8_t) i, &ctxs[i]);
        }
    }
    if (OPAL_SUCCESS == rc) {
        rc = opal_rpc_group_primary(&g);
    }
    if (OPAL_SUCCESS == rc && 0 == me) {
        rc = mca_base_var_check_unknown();
    }
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "opal_self_test: rank %u: setting up: %s\n", me, opal_strerror(rc));
    }
    /* Every rank serves (protocol and contexts) before rank 0 sends. */
    int frc = opal_fence(false);
    rc = OPAL_SUCCESS == rc ? frc : rc;
    if (0 == me) {
        opal_rpc_context_t *serve[ST_MAX_CONTEXT];
        int num_serve = 0;
        for (int i = 1; i <= ST_MAX_CONTEXT; ++i) {
            if (NULL != ctxs[i]) {
                serve[num_serve++] = ctxs[i];
            }
        }
        if (OPAL_SUCCESS == rc) {
            rc = measure(ctxs[0], serve, num_serve, g, o);
        }
        /* The others stop whatever happened here (they are told even
         * when the measurement failed). */
        if (NULL != g && NULL != ctxs[0]) {
            int src = stop_servers(ctxs[0], g, np);
            rc = OPAL_SUCCESS == rc ? src : rc;
        }
    } else if (OPAL_SUCCESS == rc) {
        while (!stop_requested) {
            for (int i = 0; i <= ST_MAX_CONTEXT; ++i) {
                if (NULL != ctxs[i]) {
                    (void) opal_rpc_progress(ctxs[i], 1 == nctx ? 100 : 1);
                }
            }
        }
    }
    frc = opal_fence(false);
    rc = OPAL_SUCCESS == rc ? frc : rc;
    for (int i = 0; i <= ST_MAX_CONTEXT; ++i) {
        if (NULL != ctxs[i]) {
            int crc = opal_rpc_context_destroy(ctxs[i]);
            rc = OPAL_SUCCESS == rc ? crc : rc;
        }
    }
    frc = opal_rpc_finalize();
    return OPAL_SUCCESS == rc ? frc : rc;
}

int opal_self_test_main(int argc, char **argv)
{
    st_options_t o;
    char err[512];
    int status = EXIT_FAILURE;
    if (OPAL_SUCCESS != st_options_parse(argc, argv, &o, err, sizeof(err))) {
        fprintf(stderr, "opal_self_test: %s\nRun 'opal_self_test --help' for the options.\n", err);
        goto out;
    }
    if (o.help) {
        char *usage = st_options_usage();
        if (NULL != usage) {
            fputs(usage, stdout);
            free(usage);
            status = EXIT_SUCCESS;
        }
        goto out;
    }
    if (o.version) {
        printf("opal_self_test (%s) %s\n", PACKAGE_NAME, OPAL_VERSION);
        status = EXIT_SUCCESS;
        goto out;
    }
    if (OPAL_SUCCESS != opal_init_util(&argc, &argv)) {
        fprintf(stderr, "opal_self_test: cannot start opal\n");
        goto out;
    }
    if (OPAL_SUCCESS != mca_base_open()) {
        fprintf(stderr, "opal_self_test: cannot open the MCA base\n");
        goto out_util;
    }
    if (OPAL_SUCCESS != apply_mca(&o)) {
        goto out_mca;
    }
    int rc;
    if (NULL != o.group_file) {
        rc = run_attached(&o);
    } else {
        rc = orte_init(&argc, &argv);
        if (OPAL_SUCCESS != rc) {
            fprintf(stderr, "opal_self_test: orte_init failed: %s\n", opal_strerror(rc));
            goto out_mca;
        }
        rc = run_in_job(&o);
        if (OPAL_SUCCESS != orte_finalize()) {
            rc = OPAL_ERROR;
        }
    }
    status = OPAL_SUCCESS == rc ? EXIT_SUCCESS : EXIT_FAILURE;
out_mca:
    (void) mca_base_close();
out_util:
    (void) opal_finalize_util();
out:
    st_options_free(&o);
    return status;
}
