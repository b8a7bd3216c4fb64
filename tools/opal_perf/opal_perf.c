/*
 * opal_perf from start to end: the command line, the run-time (orte), the
 * btl, one measurement per size with a barrier before and after it, the
 * output (rank 0), and shut-down in reverse order.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_open.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/runtime/opal_init.h"
#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_rte.h"
#include "tools/opal_perf/opal_perf.h"
#include "opal/util/opal_error.h"
#include "orte/runtime/orte_init.h"

/* FNV-1a over what both ranks must agree on. */
static uint64_t mix(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; ++i) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 0x100000001b3ull;
    }
    return h;
}

static uint64_t plan_digest(const perf_options_t *o)
{
    uint64_t h = 0xcbf29ce484222325ull;
    h = mix(h, (uint64_t) o->command);
    h = mix(h, (uint64_t) o->iterations);
    h = mix(h, (uint64_t) o->warmup);
    h = mix(h, (uint64_t) o->window);
    h = mix(h, (uint64_t) o->validate);
    h = mix(h, (uint64_t) o->num_sizes);
    for (size_t i = 0; i < o->num_sizes; ++i) {
        h = mix(h, (uint64_t) o->sizes[i]);
    }
    return h;
}

static size_t largest(const perf_options_t *o)
{
    size_t max = 0;
    for (size_t i = 0; i < o->num_sizes; ++i) {
        max = o->sizes[i] > max ? o->sizes[i] : max;
    }
    return max;
}

/* Hands the --mca pairs to the variable system (before anything reads
 * them: orte_init opens the first framework). */
static int apply_mca(const perf_options_t *o)
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
        fprintf(stderr, "opal_perf: --mca: %s\n", opal_strerror(rc));
    }
    return rc;
}

/* One size: barrier, measure, check, barrier carrying the verdict. */
static int run_size(perf_t *p, size_t size, perf_result_t *result)
{
    perf_proto_set_size(p, size);
    if (p->opts.validate) {
        perf_validate_prepare(p);
    }
    int rc = perf_sync(p, OPAL_SUCCESS);
    if (OPAL_SUCCESS == rc) {
        rc = perf_measure(p, result);
        if (OPAL_SUCCESS == rc && p->opts.validate) {
            rc = perf_validate_check(p);
        }
        int peer = perf_sync(p, rc);
        if (OPAL_SUCCESS == rc && OPAL_SUCCESS != peer && !p->failed) {
            fprintf(stderr, "opal_perf: rank %" PRIu32 ": rank %" PRIu32 " failed at size %zu\n",
                    p->rank, p->peer_rank, size);
        }
        rc = OPAL_SUCCESS == rc ? peer : rc;
    }
    if (p->failed) {
        fprintf(stderr, "opal_perf: rank %" PRIu32 ": size %zu: %s\n", p->rank, size, p->failure);
    }
    return rc;
}

static int run_sizes(perf_t *p)
{
    perf_result_t *results = calloc(p->opts.num_sizes, sizeof(*results));
    if (NULL == results) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    bool report = 0 == p->rank;
    if (report && !p->opts.json) {
        perf_output_table_header(p);
    }
    int rc = OPAL_SUCCESS;
    size_t done = 0;
    for (; done < p->opts.num_sizes && OPAL_SUCCESS == rc; ++done) {
        rc = run_size(p, p->opts.sizes[done], &results[done]);
        if (OPAL_SUCCESS == rc && report && !p->opts.json) {
            perf_output_table_row(p, &results[done]);
        }
    }
    if (OPAL_SUCCESS == rc && report && p->opts.json) {
        perf_output_json(p, results, done);
    }
    free(results);
    return rc;
}

static int check_job(perf_t *p)
{
    const opal_proc_job_info_t *job = opal_proc_job_info();
    p->rank = job->my_name.vpid;
    p->nprocs = job->size;
    if (p->nprocs > 2) {
        if (0 == p->rank) {
            fprintf(stderr,
                    "opal_perf: %s measures between two processes: run it with mcarun -np 2 (or "
                    "-np 1 for btl/self alone); this job has %" PRIu32 "\n",
                    perf_command_name(p->opts.command), p->nprocs);
            fflush(stderr);
        }
        /* The others fail too, but only once rank 0 has said why (the
         * launcher may stop the job at the first rank that fails). */
        (void) opal_fence(false);
        return OPAL_ERR_BAD_PARAM;
    }
    p->loopback = 1 == p->nprocs;
    p->peer_rank = p->loopback ? p->rank : 1 - p->rank;
    return OPAL_SUCCESS;
}

/* Everything after the command line; returns the exit status. */
static int run(perf_t *p, int *argc, char ***argv)
{
    int status = EXIT_FAILURE;
    if (OPAL_SUCCESS != opal_init_util(argc, argv)) {
        fprintf(stderr, "opal_perf: cannot start opal\n");
        return status;
    }
    if (OPAL_SUCCESS != mca_base_open()) {
        fprintf(stderr, "opal_perf: cannot open the MCA base\n");
        goto out_util;
    }
    if (OPAL_SUCCESS != apply_mca(&p->opts)) {
        goto out_mca;
    }
    int rc;
    if (perf_command_is_na(p->opts.command) && NULL != p->opts.uri_file) {
        /* Server and client started alone: no run-time at all, as with
         * Mercury's perf tools. */
        rc = PERF_RPC_RATE <= p->opts.command ? perf_rpc_run(p, false) : perf_na_run(p, false);
        status = OPAL_SUCCESS == rc ? EXIT_SUCCESS : EXIT_FAILURE;
        goto out_mca;
    }
    rc = orte_init(argc, argv);
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "opal_perf: orte_init failed: %s\n", opal_strerror(rc));
        goto out_mca;
    }
    if (perf_command_is_na(p->opts.command)) {
        rc = PERF_RPC_RATE <= p->opts.command ? perf_rpc_run(p, true) : perf_na_run(p, true);
        status = OPAL_SUCCESS == rc ? EXIT_SUCCESS : EXIT_FAILURE;
        if (OPAL_SUCCESS != orte_finalize()) {
            status = EXIT_FAILURE;
        }
        goto out_mca;
    }
    rc = check_job(p);
    if (OPAL_SUCCESS == rc) {
        rc = perf_proto_init(p, largest(&p->opts), plan_digest(&p->opts));
    }
    /* Every framework opal_perf uses has registered: a --mca name that
     * matches nothing is a typo worth reporting (or refusing, with
     * mca_base_unknown_params=error). */
    if (OPAL_SUCCESS == rc) {
        rc = mca_base_var_check_unknown();
    }
    if (OPAL_SUCCESS == rc) {
        rc = run_sizes(p);
    }
    /* No rank tears its modules down before the other has everything it
     * was sent (the last barrier's message may still be in flight). */
    if (OPAL_SUCCESS == rc && !p->loopback) {
        rc = opal_fence(false);
    }
    status = OPAL_SUCCESS == rc ? EXIT_SUCCESS : EXIT_FAILURE;
    perf_proto_fini(p);
    if (OPAL_SUCCESS != orte_finalize()) {
        status = EXIT_FAILURE;
    }
out_mca:
    (void) mca_base_close();
out_util:
    (void) opal_finalize_util();
    return status;
}

int opal_perf_main(int argc, char **argv)
{
    perf_t p;
    memset(&p, 0, sizeof(p));
    p.out = stdout;
    char err[512];
    int status = EXIT_FAILURE;
    if (OPAL_SUCCESS != perf_options_parse(argc, argv, &p.opts, err, sizeof(err))) {
        fprintf(stderr, "opal_perf: %s\nRun 'opal_perf --help' for the options.\n", err);
        goto out;
    }
    if (p.opts.help) {
        char *usage = perf_options_usage();
        if (NULL != usage) {
            fputs(usage, stdout);
            free(usage);
            status = EXIT_SUCCESS;
        }
        goto out;
    }
    if (p.opts.version) {
        printf("opal_perf (%s) %s\n", PACKAGE_NAME, OPAL_VERSION);
        status = EXIT_SUCCESS;
        goto out;
    }
    status = run(&p, &argc, &argv);
out:
    perf_options_free(&p.opts);
    return status;
}
