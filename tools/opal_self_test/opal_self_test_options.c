/*
 * opal_self_test's command line, in the manner of DAOS CaRT's self_test
 * (the same option names where they mean the same thing).
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/class/opal_list.h"
#include "opal/util/opal_cmd_line.h"
#include "opal/util/opal_error.h"
#include "tools/opal_self_test/opal_self_test.h"

static const opal_cmd_line_option_t options[] = {
    {"group-file", 'g', 1, "<file>",
     "Attach, as a client started alone, to the group a job saved to this file "
     "(opal_rpc_group_save); without it opal_self_test runs inside a job (mcarun -np N): "
     "rank 0 measures, the others serve"},
    {"endpoint", 'e', 1, "<ranks:contexts>",
     "Endpoints to measure: comma lists of ranks and of context indexes, each N or N-M "
     "(0-3:0, 1,3:0-1); may be given several times. Default: every rank of the group but "
     "this process's own, context 0"},
    {"message-size", 's', 1, "<list>",
     "Pairs (input output) of sizes in bytes, e.g. '(0 0) (b1048576 0)'; a 'b' before a "
     "size moves that direction by bulk (the server pulls the input from, or pushes the "
     "output into, a handle of the client's); without it the bytes travel inline (the "
     "engine moves them by bulk itself past its eager size); k, m, g suffixes; a lone size "
     "is both. Default: '" ST_DEFAULT_SIZES "'"},
    {"repetitions", 'r', 1, "<n>", "RPCs per endpoint and size (default 1000)"},
    {"max-inflight-rpcs", 'i', 1, "<n>", "RPCs in flight at most, over all endpoints (default 16)"},
    {"timeout", 't', 1, "<seconds>",
     "Seconds an RPC may take (default: the variable rpc_base_timeout)"},
    {"na", '\0', 1, "<info>",
     "The na class to open (btl, ofi+tcp, ofi+shm, ...; default btl); with --group-file, "
     "the kind of the group's URIs"},
    {"verify", 'c', 0, NULL, "Fill payloads with a pattern and check it at both ends"},
    {"json", '\0', 0, NULL, "Print one JSON document instead of the table"},
    {"help", 'h', 0, NULL, "Show this help and exit"},
    {"version", 'V', 0, NULL, "Show the version and exit"},
    {NULL, '\0', 0, NULL, NULL},
};

static int bad(char *err, size_t errlen, const char *fmt, ...) OPAL_PRINTF_LIKE(3, 4);
static int bad(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return OPAL_ERR_BAD_PARAM;
}

static opal_cmd_line_t *make_cmd_line(void)
{
    opal_cmd_line_t *cmd = OBJ_NEW(opal_cmd_line_t);
    if (NULL != cmd && (OPAL_SUCCESS != opal_cmd_line_add(cmd, options) ||
                        OPAL_SUCCESS != opal_cmd_line_add_mca_options(cmd))) {
        OBJ_RELEASE(cmd);
    }
    return cmd;
}

static const char *last(const opal_cmd_line_t *cmd, const char *name)
{
    int n = opal_cmd_line_get_ninsts(cmd, name);
    return n > 0 ? opal_cmd_line_get_param(cmd, name, n - 1, 0) : NULL;
}

static int count_option(const char *option, const char *text, long min, long max, long *value,
                        char *err, size_t errlen)
{
    char *end = NULL;
    errno = 0;
    long n = strtol(text, &end, 10);
    if (0 != errno || end == text || '\0' != *end || n < min || n > max) {
        return bad(err, errlen, "--%s '%s': not a number from %ld to %ld", option, text, min, max);
    }
    *value = n;
    return OPAL_SUCCESS;
}

static int read_mca(const opal_cmd_line_t *cmd, st_options_t *opts, char *err, size_t errlen)
{
    opal_list_t params;
    OBJ_CONSTRUCT(&params, opal_list_t);
    int rc = opal_cmd_line_get_mca_params(cmd, &params);
    size_t n = opal_list_get_size(&params);
    if (OPAL_SUCCESS == rc && n > 0) {
        opts->mca = calloc(n, sizeof(*opts->mca));
        rc = NULL == opts->mca ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;
    }
    opal_cmd_line_mca_param_t *param;
    OPAL_LIST_FOREACH (param, &params, opal_cmd_line_mca_param_t) {
        if (OPAL_SUCCESS != rc) {
            break;
        }
        st_mca_t *pair = &opts->mca[opts->num_mca];
        pair->key = strdup(param->key);
        pair->value = strdup(param->value);
        ++opts->num_mca;
        if (NULL == pair->key || NULL == pair->value) {
            rc = OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    OPAL_LIST_DESTRUCT(&params);
    return OPAL_SUCCESS == rc ? rc : bad(err, errlen, "out of memory");
}

static int read_values(const opal_cmd_line_t *cmd, st_options_t *opts, char *err, size_t errlen)
{
    const char *text;
    int rc = OPAL_SUCCESS;
    int n = opal_cmd_line_get_ninsts(cmd, "endpoint");
    for (int i = 0; i < n && OPAL_SUCCESS == rc; ++i) {
        rc = st_parse_endpoints(opal_cmd_line_get_param(cmd, "endpoint", i, 0), &opts->eps,
                                &opts->num_eps, err, errlen);
    }
    text = last(cmd, "message-size");
    if (OPAL_SUCCESS == rc) {
        rc = st_parse_message_sizes(NULL == text ? ST_DEFAULT_SIZES : text, &opts->sizes,
                                    &opts->num_sizes, err, errlen);
    }
    if (OPAL_SUCCESS == rc && NULL != (text = last(cmd, "repetitions"))) {
        rc = count_option("repetitions", text, 1, ST_MAX_REPETITIONS, &opts->repetitions, err,
                          errlen);
    }
    if (OPAL_SUCCESS == rc && NULL != (text = last(cmd, "max-inflight-rpcs"))) {
        rc = count_option("max-inflight-rpcs", text, 1, ST_MAX_INFLIGHT, &opts->inflight, err,
                          errlen);
    }
    if (OPAL_SUCCESS == rc && NULL != (text = last(cmd, "timeout"))) {
        char *end = NULL;
        errno = 0;
        double t = strtod(text, &end);
        if (0 != errno || end == text || '\0' != *end || !isfinite(t) || t <= 0 || t > 1e6) {
            rc = bad(err, errlen, "--timeout '%s': not a number of seconds above 0 (up to 1e6)",
                     text);
        } else {
            opts->timeout = t;
        }
    }
    if (OPAL_SUCCESS == rc) {
        text = last(cmd, "na");
        if (NULL != text && '\0' == *text) {
            rc = bad(err, errlen, "--na '': an na info string is needed (btl, ofi+tcp, ...)");
        }
        opts->na_info = strdup(NULL == text ? "btl" : text);
        text = last(cmd, "group-file");
        if (NULL != text && '\0' == *text) {
            rc = bad(err, errlen, "--group-file '': a file name is needed");
        }
        opts->group_file = NULL == text ? NULL : strdup(text);
        if (OPAL_SUCCESS == rc &&
            (NULL == opts->na_info || (NULL != text && NULL == opts->group_file))) {
            rc = bad(err, errlen, "out of memory");
        }
    }
    return rc;
}

int st_options_parse(int argc, char **argv, st_options_t *opts, char *err, size_t errlen)
{
    memset(opts, 0, sizeof(*opts));
    opts->repetitions = ST_DEFAULT_REPETITIONS;
    opts->inflight = ST_DEFAULT_INFLIGHT;
    err[0] = '\0';
    opal_cmd_line_t *cmd = make_cmd_line();
    if (NULL == cmd) {
        return bad(err, errlen, "out of memory");
    }
    int rc = opal_cmd_line_parse(cmd, argc, argv, 0);
    if (OPAL_SUCCESS != rc) {
        rc = bad(err, errlen, "%s", opal_cmd_line_get_error(cmd));
        goto out;
    }
    opts->help = opal_cmd_line_is_taken(cmd, "help");
    opts->version = opal_cmd_line_is_taken(cmd, "version");
    if (opts->help || opts->version) {
        goto out;
    }
    int npos = 0;
    char **pos = opal_cmd_line_get_positional(cmd, &npos);
    if (npos > 0) {
        rc = bad(err, errlen, "unexpected argument '%s' (opal_self_test takes options only)",
                 pos[0]);
        goto out;
    }
    opts->json = opal_cmd_line_is_taken(cmd, "json");
    opts->verify = opal_cmd_line_is_taken(cmd, "verify");
    rc = read_values(cmd, opts, err, errlen);
    if (OPAL_SUCCESS == rc) {
        rc = read_mca(cmd, opts, err, errlen);
    }
out:
    OBJ_RELEASE(cmd);
    return rc;
}

void st_options_free(st_options_t *opts)
{
    for (int i = 0; i < opts->num_mca; ++i) {
        free(opts->mca[i].key);
        free(opts->mca[i].value);
    }
    free(opts->mca);
    free(opts->eps);
    free(opts->sizes);
    free(opts->na_info);
    free(opts->group_file);
    memset(opts, 0, sizeof(*opts));
}

char *st_options_usage(void)
{
    static const char intro[] =
        "Usage: mcarun -np N opal_self_test [options]        rank 0 measures, the others serve\n"
        "       opal_self_test --group-file F [options]      a client attached to a group\n"
        "\n"
        "Sends the rpc engine's self-test RPC (served by every process that runs the\n"
        "engine, as every DAOS CaRT server answers self_test) to each endpoint\n"
        "(rank:context) for each (input output) size pair, and prints per endpoint and\n"
        "size the latency of one RPC (min, median, 90th and 99th percentile, max, in us)\n"
        "and the bandwidth (MB/s: 10^6 bytes of input and output per second).\n"
        "\n"
        "Options:\n";
    static const char outro[] =
        "\nExamples:\n"
        "  mcarun -np 4 opal_self_test --endpoint 1-3:0 --message-size '(0 0) (b1048576 0)'\n"
        "  opal_self_test --group-file /tmp/group --na ofi+tcp --endpoint 0-3:0 --json\n"
        "See docs/rpc.md (\"Self-test\").\n";
    opal_cmd_line_t *cmd = make_cmd_line();
    if (NULL == cmd) {
        return NULL;
    }
    char *list = opal_cmd_line_get_usage_msg(cmd, 80);
    OBJ_RELEASE(cmd);
    if (NULL == list) {
        return NULL;
    }
    size_t len = sizeof(intro) + strlen(list) + sizeof(outro);
    char *text = malloc(len);
    if (NULL != text) {
        snprintf(text, len, "%s%s%s", intro, list, outro);
    }
    free(list);
    return text;
}
