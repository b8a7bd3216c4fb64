/*
 * opal_perf's command line: the subcommand, the sizes (a list or a range),
 * the counts, the output format and the --mca pairs. Everything is checked
 * here, before the run-time starts, and refused with a message naming the
 * option and the value.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/opal_perf/opal_perf.h"
#include "opal/util/opal_cmd_line.h"
#include "opal/util/opal_error.h"

static const opal_cmd_line_option_t options[] = {
    {"sizes", 's', 1, "<list>",
     "Message sizes to measure, comma separated, in bytes with an optional k, m or g suffix "
     "(binary): 0,8,64,1k,64k"},
    {"min-size", '\0', 1, "<size>",
     "Smallest size of a range (default 0); the range doubles up to --max-size"},
    {"max-size", '\0', 1, "<size>", "Largest size of a range (default 4m)"},
    {"iterations", 'i', 1, "<n>",
     "Timed iterations per size (default: latency 10000, 1000 above 8k; bw and bibw 100, 20 "
     "above 8k; rate 1000, 100 above 8k; na-lat and rpc-lat 10000, 1000 above 8k; na-put, "
     "na-get, bulk-pull, bulk-push and rpc-bw 100, 20 above 8k; rpc-rate 20000)"},
    {"warmup", 'x', 1, "<n>",
     "Untimed iterations before them (default: latency 1000, 100 above 8k; bw and bibw 10, 2 "
     "above 8k; rate 100, 10 above 8k; na-lat and rpc-lat 1000, 100 above 8k; na-put and "
     "na-get 10, 2 above 8k; bulk-pull, bulk-push and rpc-bw 100, 10 above 8k; rpc-rate "
     "1000)"},
    {"window", 'W', 1, "<n>",
     "Messages in flight per iteration for bw, bibw, rate and rpc-rate; chunks per "
     "iteration for na-put, na-get, bulk-pull, bulk-push and rpc-bw (default 64)"},
    {"validate", 'c', 0, NULL,
     "Fill the messages with a pattern and check it arrived (not timed; for testing)"},
    {"json", '\0', 0, NULL, "Print one JSON document instead of the table"},
    {"percentiles", '\0', 0, NULL,
     "latency: time every round trip and add the median, minimum and 99th percentile of the "
     "half round trips beside the average (as perftest's t_typical)"},
    {"na", '\0', 1, "<info>",
     "na subcommands: the na class to open (btl, ofi+tcp, ofi+shm, ...; default btl)"},
    {"uri-file", '\0', 1, "<file>",
     "na subcommands between processes started alone: the server writes its URI there, the "
     "client reads it"},
    {"blocking", '\0', 0, NULL,
     "na subcommands: progress sleeps on the class's file descriptor instead of spinning"},
    {"help", 'h', 0, NULL, "Show this help and exit"},
    {"version", 'V', 0, NULL, "Show the version and exit"},
    {NULL, '\0', 0, NULL, NULL},
};

static const char *const command_names[] = {
    [PERF_LATENCY] = "latency",     [PERF_BW] = "bw",
    [PERF_BIBW] = "bibw",           [PERF_RATE] = "rate",
    [PERF_NA_LAT] = "na-lat",       [PERF_NA_PUT] = "na-put",
    [PERF_NA_GET] = "na-get",       [PERF_BULK_PULL] = "bulk-pull",
    [PERF_BULK_PUSH] = "bulk-push", [PERF_SERVER] = "server",
    [PERF_RPC_RATE] = "rpc-rate",   [PERF_RPC_SERVER] = "rpc-server",
    [PERF_RPC_LAT] = "rpc-lat",     [PERF_RPC_BW] = "rpc-bw",
};

const char *perf_command_name(perf_command_t command)
{
    return command_names[command];
}

static int bad(char *err, size_t errlen, const char *fmt, ...) OPAL_PRINTF_LIKE(3, 4);

static int bad(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return OPAL_ERR_BAD_PARAM;
}

int perf_parse_size(const char *text, size_t *size)
{
    if (NULL == text || text[0] < '0' || text[0] > '9') {
        return OPAL_ERR_BAD_PARAM;
    }
    errno = 0;
    char *end;
    unsigned long long n = strtoull(text, &end, 10);
    if (ERANGE == errno) {
        return OPAL_ERR_VALUE_OUT_OF_BOUNDS;
    }
    unsigned shift = 0;
    switch (*end) {
        case '\0':
            break;
        case 'k':
        case 'K':
            shift = 10;
            break;
        case 'm':
        case 'M':
            shift = 20;
            break;
        case 'g':
        case 'G':
            shift = 30;
            break;
        default:
            return OPAL_ERR_BAD_PARAM;
    }
    if ('\0' != *end && '\0' != end[1]) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (n > (PERF_MAX_SIZE >> shift)) {
        return OPAL_ERR_VALUE_OUT_OF_BOUNDS;
    }
    *size = (size_t) n << shift;
    return OPAL_SUCCESS;
}

/* A size option's value, or an error naming the option. */
static int size_option(const char *option, const char *text, size_t *size, char *err, size_t errlen)
{
    int rc = perf_parse_size(text, size);
    if (OPAL_ERR_VALUE_OUT_OF_BOUNDS == rc) {
        return bad(err, errlen, "--%s: %s is above the largest size opal_perf measures (1g)",
                   option, text);
    }
    if (OPAL_SUCCESS != rc) {
        return bad(err, errlen,
                   "--%s: '%s' is not a size (bytes, optionally followed by k, m or g)", option,
                   text);
    }
    return OPAL_SUCCESS;
}

static int count_option(const char *option, const char *text, long min, long max, long *value,
                        char *err, size_t errlen)
{
    errno = 0;
    char *end;
    long n = strtol(text, &end, 10);
    if (0 != errno || end == text || '\0' != *end || n < min || n > max) {
        return bad(err, errlen, "--%s: '%s' is not a number from %ld to %ld", option, text, min,
                   max);
    }
    *value = n;
    return OPAL_SUCCESS;
}

/* The last value given for an option, or NULL. */
static const char *last(const opal_cmd_line_t *cmd, const char *name)
{
    int n = opal_cmd_line_get_ninsts(cmd, name);
    return n > 0 ? opal_cmd_line_get_param(cmd, name, n - 1, 0) : NULL;
}

static int parse_list(const char *text, perf_options_t *opts, char *err, size_t errlen)
{
    size_t n = 1;
    for (const char *c = text; '\0' != *c; ++c) {
        n += ',' == *c;
    }
    opts->sizes = calloc(n, sizeof(size_t));
    char *copy = strdup(text);
    if (NULL == opts->sizes || NULL == copy) {
        free(copy);
        return bad(err, errlen, "out of memory");
    }
    int rc = OPAL_SUCCESS;
    char *word = copy;
    for (size_t i = 0; i < n && OPAL_SUCCESS == rc; ++i) {
        char *comma = strchr(word, ',');
        if (NULL != comma) {
            *comma = '\0';
        }
        if ('\0' == *word) {
            rc = bad(err, errlen, "--sizes: '%s' has an empty entry", text);
        } else {
            rc = size_option("sizes", word, &opts->sizes[i], err, errlen);
        }
        word = NULL != comma ? comma + 1 : word;
    }
    free(copy);
    opts->num_sizes = n;
    return rc;
}

/* min, then doubling (from 1 after 0) while at most max: the OSU range. */
static int make_range(size_t min, size_t max, perf_options_t *opts, char *err, size_t errlen)
{
    size_t n = 0;
    for (size_t s = min; s <= max; s = 0 == s ? 1 : 2 * s) {
        ++n;
    }
    opts->sizes = calloc(n, sizeof(size_t));
    if (NULL == opts->sizes) {
        return bad(err, errlen, "out of memory");
    }
    for (size_t s = min; s <= max; s = 0 == s ? 1 : 2 * s) {
        opts->sizes[opts->num_sizes++] = s;
    }
    return OPAL_SUCCESS;
}

static int read_sizes(const opal_cmd_line_t *cmd, perf_options_t *opts, char *err, size_t errlen)
{
    const char *list = last(cmd, "sizes");
    const char *min_text = last(cmd, "min-size");
    const char *max_text = last(cmd, "max-size");
    if (NULL != list && (NULL != min_text || NULL != max_text)) {
        return bad(err, errlen, "--sizes and --min-size / --max-size exclude each other");
    }
    if (NULL != list) {
        return parse_list(list, opts, err, errlen);
    }
    size_t min = 0, max = PERF_DEFAULT_MAX_SIZE;
    if ((PERF_RATE == opts->command || PERF_RPC_RATE == opts->command ||
         PERF_RPC_SERVER == opts->command) &&
        NULL == min_text && NULL == max_text) {
        min = max = PERF_DEFAULT_RATE_SIZE;
    }
    int rc = OPAL_SUCCESS;
    if (NULL != min_text) {
        rc = size_option("min-size", min_text, &min, err, errlen);
    }
    if (OPAL_SUCCESS == rc && NULL != max_text) {
        rc = size_option("max-size", max_text, &max, err, errlen);
    } else if (OPAL_SUCCESS == rc && min > max) {
        /* Only --min-size above the default maximum: measure it alone. */
        max = min;
    }
    if (OPAL_SUCCESS == rc && min > max) {
        rc = bad(err, errlen, "--min-size %s is above --max-size %s", min_text, max_text);
    }
    return OPAL_SUCCESS == rc ? make_range(min, max, opts, err, errlen) : rc;
}

static int read_command(const opal_cmd_line_t *cmd, perf_options_t *opts, char *err, size_t errlen)
{
    int count = 0;
    char **words = opal_cmd_line_get_positional(cmd, &count);
    if (0 == count) {
        return bad(err, errlen,
                   "no subcommand: say latency, bw, bibw, rate, na-lat, na-put, na-get, bulk-pull, "
                   "bulk-push, server, rpc-rate, rpc-lat, rpc-bw or rpc-server");
    }
    if (count > 1) {
        return bad(err, errlen, "unexpected argument '%s' after the subcommand %s", words[1],
                   words[0]);
    }
    for (size_t i = 0; i < sizeof(command_names) / sizeof(command_names[0]); ++i) {
        if (0 == strcmp(words[0], command_names[i])) {
            opts->command = (perf_command_t) i;
            return OPAL_SUCCESS;
        }
    }
    return bad(err, errlen,
               "unknown subcommand '%s' (latency, bw, bibw, rate, na-lat, na-put, na-get, "
               "bulk-pull, bulk-push, server, rpc-rate, rpc-lat, rpc-bw or rpc-server)",
               words[0]);
}

static int read_mca(const opal_cmd_line_t *cmd, perf_options_t *opts, char *err, size_t errlen)
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
        perf_mca_pair_t *pair = &opts->mca[opts->num_mca];
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

/* --na, --uri-file and --blocking: only for the na subcommands. */
static int read_na(const opal_cmd_line_t *cmd, perf_options_t *opts, char *err, size_t errlen)
{
    const char *info = last(cmd, "na");
    const char *file = last(cmd, "uri-file");
    opts->blocking = opal_cmd_line_is_taken(cmd, "blocking");
    if (!perf_command_is_na(opts->command)) {
        if (NULL != info || NULL != file || opts->blocking) {
            return bad(err, errlen,
                       "--%s is for the na subcommands (na-lat, na-put, na-get, bulk-pull, "
                       "bulk-push, server, rpc-rate, rpc-lat, rpc-bw, rpc-server), not %s",
                       NULL != info   ? "na"
                       : NULL != file ? "uri-file"
                                      : "blocking",
                       perf_command_name(opts->command));
        }
        return OPAL_SUCCESS;
    }
    if (NULL != info && '\0' == info[0]) {
        return bad(err, errlen, "--na: empty info string (try btl or ofi+tcp)");
    }
    if (NULL != file && '\0' == file[0]) {
        return bad(err, errlen, "--uri-file: empty file name");
    }
    opts->na_info = strdup(NULL != info ? info : "btl");
    opts->uri_file = NULL != file ? strdup(file) : NULL;
    if (NULL == opts->na_info || (NULL != file && NULL == opts->uri_file)) {
        return bad(err, errlen, "out of memory");
    }
    return OPAL_SUCCESS;
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

static int read_counts(const opal_cmd_line_t *cmd, perf_options_t *opts, char *err, size_t errlen)
{
    const char *text;
    long window = PERF_DEFAULT_WINDOW;
    int rc = OPAL_SUCCESS;
    if (NULL != (text = last(cmd, "iterations"))) {
        rc = count_option("iterations", text, 1, 1000000000L, &opts->iterations, err, errlen);
    }
    if (OPAL_SUCCESS == rc && NULL != (text = last(cmd, "warmup"))) {
        rc = count_option("warmup", text, 0, 1000000000L, &opts->warmup, err, errlen);
    }
    if (OPAL_SUCCESS == rc && NULL != (text = last(cmd, "window"))) {
        rc = count_option("window", text, 1, PERF_MAX_WINDOW, &window, err, errlen);
    }
    opts->window = (int) window;
    return rc;
}

int perf_options_parse(int argc, char **argv, perf_options_t *opts, char *err, size_t errlen)
{
    memset(opts, 0, sizeof(*opts));
    opts->iterations = -1;
    opts->warmup = -1;
    opts->window = PERF_DEFAULT_WINDOW;
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
    opts->json = opal_cmd_line_is_taken(cmd, "json");
    opts->validate = opal_cmd_line_is_taken(cmd, "validate");
    opts->percentiles = opal_cmd_line_is_taken(cmd, "percentiles");
    rc = read_command(cmd, opts, err, errlen);
    if (OPAL_SUCCESS == rc && opts->percentiles && PERF_LATENCY != opts->command) {
        rc = bad(err, errlen, "--percentiles is for latency, not %s (rpc-lat always prints them)",
                 perf_command_name(opts->command));
    }
    if (OPAL_SUCCESS == rc) {
        rc = read_sizes(cmd, opts, err, errlen);
    }
    if (OPAL_SUCCESS == rc) {
        rc = read_counts(cmd, opts, err, errlen);
    }
    if (OPAL_SUCCESS == rc) {
        rc = read_na(cmd, opts, err, errlen);
    }
    if (OPAL_SUCCESS == rc) {
        rc = read_mca(cmd, opts, err, errlen);
    }
out:
    OBJ_RELEASE(cmd);
    return rc;
}

void perf_options_free(perf_options_t *opts)
{
    for (int i = 0; i < opts->num_mca; ++i) {
        free(opts->mca[i].key);
        free(opts->mca[i].value);
    }
    free(opts->mca);
    free(opts->sizes);
    free(opts->na_info);
    free(opts->uri_file);
    memset(opts, 0, sizeof(*opts));
}

char *perf_options_usage(void)
{
    static const char intro[] =
        "Usage: mcarun -np 2 opal_perf <subcommand> [options]\n"
        "       mcarun -np 1 opal_perf <subcommand> [options]   (btl/self loopback)\n"
        "\n"
        "Point-to-point benchmarks over the btl framework:\n"
        "  latency   ping-pong; half the round trip, in microseconds\n"
        "  bw        a window of messages, then an acknowledgement; MB/s (10^6 bytes)\n"
        "  bibw      both ranks send a window at once; MB/s in both directions\n"
        "  rate      like bw, in messages per second (8 bytes unless sizes are given)\n"
        "\n"
        "Over na (--na btl | ofi+tcp | ofi+shm ...), as Mercury's na_lat / na_bw_*:\n"
        "  na-lat    unexpected message to the server, expected reply; half round trip (us)\n"
        "  na-put    a window of puts into the server's memory; MB/s\n"
        "  na-get    a window of gets from it; MB/s\n"
        "  bulk-pull the server pulls a window of chunks from the client's bulk handle;\n"
        "            MB/s (as the handler of Mercury's hg_bw_write)\n"
        "  bulk-push the server pushes them into it (as hg_bw_read's)\n"
        "  server    serves them: opal_perf server --na ofi+tcp --uri-file F, then\n"
        "            opal_perf na-lat --na ofi+tcp --uri-file F; or both in one job:\n"
        "            mcarun -np 2 opal_perf na-lat --na btl\n"
        "\n"
        "Over rpc, as Mercury's hg_rate, hg_bw_read and hg_bw_write:\n"
        "  rpc-rate    --window requests in flight, each an IOV of the size; RPC/s\n"
        "  rpc-lat     one RPC in flight, the size there and back; round trip of one\n"
        "              RPC (us): average, median, minimum, 99th percentile\n"
        "  rpc-bw      the handler pulls (read) and pushes (write) --window chunks of\n"
        "              the size from / into the client's bulk handle per RPC; MB/s\n"
        "  rpc-server  serves them (--uri-file F), or rank 1 of mcarun -np 2 serves:\n"
        "              mcarun -np 2 opal_perf rpc-lat --na btl\n"
        "\n"
        "Options:\n";
    static const char outro[] = "\nSelect transports as usual: --mca btl self,sm (here or on "
                                "mcarun's command line).\nSee opal_perf(1).\n";
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

long perf_iterations(const perf_options_t *opts, size_t size)
{
    if (opts->iterations > 0) {
        return opts->iterations;
    }
    bool large = size > PERF_LARGE_MESSAGE;
    switch (opts->command) {
        case PERF_LATENCY:
            return large ? 1000 : 10000;
        case PERF_BW:
        case PERF_BIBW:
            return large ? 20 : 100;
        case PERF_NA_LAT:
        case PERF_RPC_LAT:
            return large ? 1000 : 10000;
        case PERF_NA_PUT:
        case PERF_NA_GET:
        case PERF_BULK_PULL:
        case PERF_BULK_PUSH:
        case PERF_RPC_BW:
            return large ? 20 : 100;
        case PERF_RATE:
        case PERF_SERVER:
        case PERF_RPC_RATE:
        case PERF_RPC_SERVER:
            break;
    }
    return large ? 100 : 1000;
}

long perf_warmup(const perf_options_t *opts, size_t size)
{
    if (opts->warmup >= 0) {
        return opts->warmup;
    }
    bool large = size > PERF_LARGE_MESSAGE;
    switch (opts->command) {
        case PERF_LATENCY:
            /* 100 ping-pongs of a few hundred ns do not warm the path
             * (caches, the cores' clocks): the first size measured came
             * out 10-20% slower than the next ones. */
            return large ? 100 : 1000;
        case PERF_BW:
        case PERF_BIBW:
            return large ? 2 : 10;
        case PERF_NA_LAT:
        case PERF_RPC_LAT:
            return large ? 100 : 1000;
        case PERF_NA_PUT:
        case PERF_NA_GET:
            return large ? 2 : 10;
        case PERF_BULK_PULL:
        case PERF_BULK_PUSH:
        case PERF_RPC_BW:
            /* As Mercury's hg_bw_read / hg_bw_write skip (na_bw_get /
             * na_bw_put skip as above): compare-mercury.sh runs both. */
            return large ? 10 : 100;
        case PERF_RATE:
        case PERF_SERVER:
        case PERF_RPC_RATE:
        case PERF_RPC_SERVER:
            break;
    }
    return large ? 10 : 100;
}
