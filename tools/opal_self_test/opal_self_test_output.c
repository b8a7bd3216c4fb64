/*
 * opal_self_test's results: a table (one row per size and endpoint, then
 * the size's row over all endpoints) or one JSON document. Latencies are
 * of one RPC, send to completion, in microseconds; bandwidth is the input
 * and output bytes of the RPCs that succeeded over the size's wall time,
 * in MB/s (10^6 bytes), as opal_perf counts.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/opal_self_test/opal_self_test.h"

typedef struct {
    st_stats_t lat;
    uint64_t failed, skipped;
    double mb_s, rpc_s;
} st_row_t;

static void row_of(const st_size_t *size, uint64_t *ns, uint64_t completed, uint64_t failed,
                   uint64_t skipped, uint64_t wall_ns, st_row_t *row)
{
    st_stats(ns, completed, &row->lat);
    row->failed = failed;
    row->skipped = skipped;
    double secs = (double) (wall_ns > 0 ? wall_ns : 1) / 1e9;
    row->rpc_s = (double) completed / secs;
    row->mb_s = (double) completed * (double) (size->in_size + size->out_size) / secs / 1e6;
}

/* The row over every endpoint of a size: all the samples merged. */
static int row_all(const st_size_result_t *sr, size_t n, st_row_t *row)
{
    uint64_t total = 0, failed = 0, skipped = 0;
    for (size_t e = 0; e < n; ++e) {
        total += sr->eps[e].completed;
        failed += sr->eps[e].failed;
        skipped += sr->eps[e].skipped;
    }
    uint64_t *ns = malloc((total > 0 ? total : 1) * sizeof(*ns));
    if (NULL == ns) {
        return -1;
    }
    uint64_t at = 0;
    for (size_t e = 0; e < n; ++e) {
        memcpy(ns + at, sr->eps[e].ns, sr->eps[e].completed * sizeof(*ns));
        at += sr->eps[e].completed;
    }
    row_of(&sr->size, ns, total, failed, skipped, sr->wall_ns, row);
    free(ns);
    return 0;
}

static void print_row(const char *label, const char *ep, const st_row_t *r)
{
    if (0 == r->lat.count) {
        printf("%-24s %-8s %8llu %6llu %10s %10s %10s %10s %10s %10.2f %10.0f\n", label, ep, 0ull,
               (unsigned long long) (r->failed + r->skipped), "-", "-", "-", "-", "-", 0.0, 0.0);
        return;
    }
    printf("%-24s %-8s %8llu %6llu %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f %10.0f\n", label, ep,
           (unsigned long long) r->lat.count, (unsigned long long) (r->failed + r->skipped),
           r->lat.min, r->lat.median, r->lat.p90, r->lat.p99, r->lat.max, r->mb_s, r->rpc_s);
}

void st_output_table(const st_run_info_t *info, const st_options_t *opts, st_size_result_t *results)
{
    printf("# opal_self_test: group %s (%u ranks) over na %s: %zu endpoints, %ld repetitions "
           "each, %ld in flight at most\n",
           info->group, info->group_size, info->na, opts->num_eps, info->repetitions,
           info->inflight);
    printf("# size (input output), b: by bulk; latency of one RPC in us; MB/s: 10^6 bytes of "
           "input and output per second\n");
    printf("%-24s %-8s %8s %6s %10s %10s %10s %10s %10s %10s %10s\n", "# Size", "Endpoint", "RPCs",
           "Failed", "Min", "Median", "P90", "P99", "Max", "MB/s", "RPC/s");
    for (size_t i = 0; i < opts->num_sizes; ++i) {
        st_size_result_t *sr = &results[i];
        char label[80];
        st_size_label(&sr->size, label, sizeof(label));
        for (size_t e = 0; e < opts->num_eps; ++e) {
            st_result_t *r = &sr->eps[e];
            char ep[32];
            snprintf(ep, sizeof(ep), "%u:%u", r->ep.rank, r->ep.ctx);
            st_row_t row;
            row_of(&sr->size, r->ns, r->completed, r->failed, r->skipped, sr->wall_ns, &row);
            print_row(label, ep, &row);
        }
        st_row_t all;
        if (opts->num_eps > 1 && 0 == row_all(sr, opts->num_eps, &all)) {
            print_row(label, "all", &all);
        }
    }
    for (size_t i = 0; i < opts->num_sizes; ++i) {
        for (size_t e = 0; e < opts->num_eps; ++e) {
            const st_result_t *r = &results[i].eps[e];
            if (r->failed > 0) {
                char label[80];
                st_size_label(&results[i].size, label, sizeof(label));
                printf("# %s to %u:%u: %llu failed, %llu not sent after it: %s\n", label,
                       r->ep.rank, r->ep.ctx, (unsigned long long) r->failed,
                       (unsigned long long) r->skipped, r->first_error);
            }
        }
    }
    fflush(stdout);
}

/* A JSON string: the characters that must be escaped are. */
static void json_string(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *) s; '\0' != *p; ++p) {
        if ('"' == *p || '\\' == *p) {
            printf("\\%c", *p);
        } else if (*p < 0x20 || *p >= 0x7f) {
            printf("\\u%04x", *p);
        } else {
            putchar(*p);
        }
    }
    putchar('"');
}

static void json_row(const st_row_t *r)
{
    printf("\"repetitions\": %llu, \"failed\": %llu, \"skipped\": %llu, ",
           (unsigned long long) r->lat.count, (unsigned long long) r->failed,
           (unsigned long long) r->skipped);
    if (0 == r->lat.count) {
        printf("\"latency_us\": null, ");
    } else {
        printf("\"latency_us\": {\"min\": %.3f, \"median\": %.3f, \"p90\": %.3f, \"p99\": %.3f, "
               "\"max\": %.3f}, ",
               r->lat.min, r->lat.median, r->lat.p90, r->lat.p99, r->lat.max);
    }
    printf("\"bandwidth_mb_s\": %.3f, \"rpc_per_s\": %.1f", r->mb_s, r->rpc_s);
}

void st_output_json(const st_run_info_t *info, const st_options_t *opts, st_size_result_t *results)
{
    printf("{\n  \"tool\": \"opal_self_test\",\n  \"group\": ");
    json_string(info->group);
    printf(",\n  \"group_size\": %u,\n  \"na\": ", info->group_size);
    json_string(info->na);
    printf(",\n  \"repetitions\": %ld,\n  \"max_inflight_rpcs\": %ld,\n  \"results\": [",
           info->repetitions, info->inflight);
    for (size_t i = 0; i < opts->num_sizes; ++i) {
        st_size_result_t *sr = &results[i];
        char label[80];
        st_size_label(&sr->size, label, sizeof(label));
        printf("%s\n    {\"size\": ", 0 == i ? "" : ",");
        json_string(label);
        printf(", \"input_size\": %llu, \"input_bulk\": %s, \"output_size\": %llu, "
               "\"output_bulk\": %s, \"wall_us\": %.3f,\n     \"endpoints\": [",
               (unsigned long long) sr->size.in_size, sr->size.in_bulk ? "true" : "false",
               (unsigned long long) sr->size.out_size, sr->size.out_bulk ? "true" : "false",
               (double) sr->wall_ns / 1e3);
        for (size_t e = 0; e < opts->num_eps; ++e) {
            st_result_t *r = &sr->eps[e];
            st_row_t row;
            row_of(&sr->size, r->ns, r->completed, r->failed, r->skipped, sr->wall_ns, &row);
            printf("%s\n       {\"rank\": %u, \"context\": %u, ", 0 == e ? "" : ",", r->ep.rank,
                   r->ep.ctx);
            json_row(&row);
            if (r->failed > 0) {
                printf(", \"error\": ");
                json_string(r->first_error);
            }
            printf("}");
        }
        printf("\n     ]");
        st_row_t all;
        if (0 == row_all(sr, opts->num_eps, &all)) {
            printf(",\n     \"all\": {");
            json_row(&all);
            printf("}");
        }
        printf("}");
    }
    printf("\n  ]\n}\n");
    fflush(stdout);
}
