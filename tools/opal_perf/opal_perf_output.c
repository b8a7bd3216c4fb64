/*
 * What opal_perf prints: an aligned table in the manner of the OSU
 * benchmarks (lines starting with '#' describe the run, then one row per
 * size: the size and its value, and for rate the bandwidth too), or with
 * --json one document holding the same (documented in opal_perf(1)).
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/base/base.h"
#include "tools/opal_perf/opal_perf.h"

/* OSU's layout: the size left in 10 columns, values right in 20. */
#define SIZE_COLUMN  10
#define VALUE_COLUMN 20

void perf_output_modules(const perf_t *p, bool rdma, char *buf, size_t len)
{
    buf[0] = '\0';
    const mca_btl_base_peer_t *peer = mca_btl_base_peer_get(p->peer_rank);
    if (NULL == peer) {
        return;
    }
    int count = rdma ? peer->rdma_count : peer->send_count;
    size_t used = 0;
    for (int i = 0; i < count && used < len; ++i) {
        const mca_btl_base_module_t *btl = rdma ? peer->rdma[i].btl : peer->send[i].btl;
        /* "ofi (tcp;ofi_rxm, lo)": which provider, when the module says. */
        int n = snprintf(buf + used, len - used, "%s%s%s%s%s", 0 == i ? "" : ",",
                         btl->btl_component->btl_version.mca_component_name,
                         NULL != btl->btl_transport ? " (" : "",
                         NULL != btl->btl_transport ? btl->btl_transport : "",
                         NULL != btl->btl_transport ? ")" : "");
        used += n > 0 ? (size_t) n : 0;
    }
}

static const char *column_title(perf_command_t command)
{
    switch (command) {
        case PERF_LATENCY:
            return "Latency (us)";
        case PERF_BW:
        case PERF_BIBW:
            return "Bandwidth (MB/s)";
        default:
            break;
    }
    return "Messages/s";
}

/* "eager up to 4096 B, then get over sm (pieces of 131072 B)": how the
 * sizes travel from this side. */
static void describe_protocol(const perf_t *p, char *buf, size_t len)
{
    size_t largest = 0;
    for (size_t i = 0; i < p->opts.num_sizes; ++i) {
        largest = p->opts.sizes[i] > largest ? p->opts.sizes[i] : largest;
    }
    int n = snprintf(buf, len, "eager up to %zu B", p->eager_limit);
    size_t used = n > 0 ? (size_t) n : 0;
    size_t min = NULL != p->rdma_btl ? p->rdma_btl->btl_min_rdma_pipeline_size : 0;
    if (NULL == p->rdma_btl || min > p->eager_limit + 1) {
        n = snprintf(buf + used, len - used, ", then fragments of %zu B", p->frag_size);
        used += n > 0 ? (size_t) n : 0;
        if (NULL != p->rdma_btl && used < len) {
            n = snprintf(buf + used, len - used, " below %zu B", min);
            used += n > 0 ? (size_t) n : 0;
        }
    }
    if (NULL != p->rdma_btl && used < len) {
        const char *name = p->rdma_btl->btl_component->btl_version.mca_component_name;
        if (p->get_piece >= largest) {
            snprintf(buf + used, len - used, ", then one get over %s", name);
        } else {
            snprintf(buf + used, len - used, ", then get over %s in pieces of %zu B", name,
                     p->get_piece);
        }
    }
}

void perf_output_table_header(const perf_t *p)
{
    char send[128], rdma[128], proto[200];
    perf_output_modules(p, false, send, sizeof(send));
    perf_output_modules(p, true, rdma, sizeof(rdma));
    describe_protocol(p, proto, sizeof(proto));
    const perf_options_t *o = &p->opts;
    fprintf(p->out, "# opal_perf %s (%s %s)\n", perf_command_name(o->command), PACKAGE_NAME,
            OPAL_VERSION);
    if (p->loopback) {
        fprintf(p->out, "# rank 0 to itself over btl %s", send);
    } else {
        fprintf(p->out, "# rank 0 <-> rank 1 over btl %s", send);
    }
    fprintf(p->out, "%s%s\n", '\0' != rdma[0] ? "; rdma " : "; no rdma", rdma);
    fprintf(p->out, "# %s\n", proto);
    if (PERF_LATENCY != o->command) {
        fprintf(p->out, "# window %d\n", o->window);
    }
    if (PERF_RATE == o->command) {
        fprintf(p->out, "# %-*s%*s%*s\n", SIZE_COLUMN - 2, "Size", VALUE_COLUMN,
                column_title(o->command), VALUE_COLUMN, "MB/s");
    } else if (o->percentiles) {
        fprintf(p->out, "# %-*s%*s%*s%*s%*s\n", SIZE_COLUMN - 2, "Size", VALUE_COLUMN,
                column_title(o->command), VALUE_COLUMN, "Median (us)", VALUE_COLUMN, "Min (us)",
                VALUE_COLUMN, "P99 (us)");
    } else {
        fprintf(p->out, "# %-*s%*s\n", SIZE_COLUMN - 2, "Size", VALUE_COLUMN,
                column_title(o->command));
    }
    fflush(p->out);
}

void perf_output_table_row(const perf_t *p, const perf_result_t *r)
{
    if (PERF_RATE == p->opts.command) {
        fprintf(p->out, "%-*zu%*.2f%*.2f\n", SIZE_COLUMN, r->size, VALUE_COLUMN, r->value,
                VALUE_COLUMN, r->bandwidth);
    } else if (p->opts.percentiles) {
        fprintf(p->out, "%-*zu%*.2f%*.2f%*.2f%*.2f\n", SIZE_COLUMN, r->size, VALUE_COLUMN, r->value,
                VALUE_COLUMN, r->median, VALUE_COLUMN, r->min, VALUE_COLUMN, r->p99);
    } else {
        fprintf(p->out, "%-*zu%*.2f\n", SIZE_COLUMN, r->size, VALUE_COLUMN, r->value);
    }
    fflush(p->out);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

void perf_percentiles(double *us, size_t n, double *median, double *min, double *p99)
{
    qsort(us, n, sizeof(*us), cmp_double);
    *median = 0 == n % 2 ? (us[n / 2 - 1] + us[n / 2]) / 2 : us[n / 2];
    *min = us[0];
    size_t at99 = (size_t) ((double) n * 0.99);
    *p99 = us[at99 < n ? at99 : n - 1];
}

/* Component names are identifiers; nothing here needs escaping beyond
 * what the MCA base already forbids, but quote defensively. */
static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; '\0' != *s; ++s) {
        if ('"' == *s || '\\' == *s) {
            fputc('\\', out);
            fputc(*s, out);
        } else if ((unsigned char) *s < 0x20) {
            fprintf(out, "\\u%04x", (unsigned) (unsigned char) *s);
        } else {
            fputc(*s, out);
        }
    }
    fputc('"', out);
}

static void json_module_list(FILE *out, const char *names)
{
    fputc('[', out);
    char copy[128];
    snprintf(copy, sizeof(copy), "%s", names);
    char *save = NULL;
    int n = 0;
    for (char *word = strtok_r(copy, ",", &save); NULL != word; word = strtok_r(NULL, ",", &save)) {
        fputs(n++ > 0 ? ", " : "", out);
        json_string(out, word);
    }
    fputc(']', out);
}

void perf_output_json(const perf_t *p, const perf_result_t *results, size_t count)
{
    FILE *out = p->out;
    char send[128], rdma[128];
    perf_output_modules(p, false, send, sizeof(send));
    perf_output_modules(p, true, rdma, sizeof(rdma));
    const perf_options_t *o = &p->opts;
    fprintf(out, "{\n  \"program\": \"opal_perf\",\n  \"version\": ");
    json_string(out, OPAL_VERSION);
    fprintf(out, ",\n  \"command\": \"%s\",\n", perf_command_name(o->command));
    fprintf(out, "  \"nprocs\": %u,\n  \"peer\": %u,\n", (unsigned) p->nprocs,
            (unsigned) p->peer_rank);
    fprintf(out, "  \"modules\": {\"send\": ");
    json_module_list(out, send);
    fprintf(out, ", \"rdma\": ");
    json_module_list(out, rdma);
    fprintf(out, "},\n  \"eager_limit\": %zu,\n", p->eager_limit);
    fprintf(out, "  \"window\": %d,\n", PERF_LATENCY == o->command ? 1 : o->window);
    fprintf(out, "  \"validated\": %s,\n", o->validate ? "true" : "false");
    fprintf(out, "  \"results\": [");
    for (size_t i = 0; i < count; ++i) {
        const perf_result_t *r = &results[i];
        fprintf(out,
                "%s\n    {\"size\": %zu, \"iterations\": %ld, \"warmup\": %ld, "
                "\"protocol\": \"%s\", ",
                0 == i ? "" : ",", r->size, r->iterations, r->warmup, perf_proto_name(r->proto));
        switch (o->command) {
            case PERF_LATENCY:
                fprintf(out, "\"latency_us\": %.3f", r->value);
                if (o->percentiles) {
                    fprintf(out, ", \"median_us\": %.3f, \"min_us\": %.3f, \"p99_us\": %.3f",
                            r->median, r->min, r->p99);
                }
                fputc('}', out);
                break;
            case PERF_BW:
            case PERF_BIBW:
                fprintf(out, "\"bandwidth_MBps\": %.3f}", r->value);
                break;
            case PERF_RATE:
                fprintf(out, "\"messages_per_s\": %.1f, \"bandwidth_MBps\": %.3f}", r->value,
                        r->bandwidth);
                break;
            default: /* the na subcommands print in opal_perf_na.c */
                break;
        }
    }
    fprintf(out, "%s]\n}\n", count > 0 ? "\n  " : "");
    fflush(out);
}
