/*
 * opal_perf as a user sees it: the command line (parsed in-process, and
 * the program's own refusals), the table and the JSON document, and every
 * subcommand over the btl modules this build has: btl/self alone (the
 * program as a singleton, or one rank under mcarun), and two ranks over
 * self,sm when sm is built. Runs use --validate so that the data moved is
 * checked; the values are only required to be positive numbers (timing
 * never decides a test).
 */
#include "opal/opal_config.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/opal_perf/opal_perf.h"
#include "opal/util/opal_argv.h"
#include "opal/util/opal_error.h"
#include "test/orte/mcarun_test_support.h"
#include "test/support/opal_test.h"
#include "test/tools/json_check.h"

static char perf_prog[PATH_MAX];

/* ---------------------------------------------------- the command line */

/* Parses the words (NULL-terminated, without the program name). */
static int parse(perf_options_t *opts, char *err, size_t errlen, const char *const *words)
{
    char *argv[32] = {"opal_perf"};
    int argc = 1;
    for (; NULL != words[argc - 1]; ++argc) {
        ck_assert_int_lt(argc, 31);
        argv[argc] = (char *) words[argc - 1];
    }
    return perf_options_parse(argc, argv, opts, err, errlen);
}

#define PARSE(opts, err, ...)                                                                      \
    parse((opts), (err), sizeof(err), (const char *const[]){__VA_ARGS__, NULL})

/* Parsing fails with a message holding needle. */
#define REFUSED(needle, ...)                                                                       \
    do {                                                                                           \
        perf_options_t o_;                                                                         \
        char e_[512];                                                                              \
        ck_assert_int_eq(OPAL_ERR_BAD_PARAM, PARSE(&o_, e_, __VA_ARGS__));                         \
        ck_assert_msg(NULL != strstr(e_, needle), "'%s' lacks '%s'", e_, needle);                  \
        perf_options_free(&o_);                                                                    \
    } while (0)

START_TEST(subcommand_is_required_and_checked)
{
    REFUSED("no subcommand", "--json");
    REFUSED("unknown subcommand 'ping'", "ping");
    REFUSED("unexpected argument 'bw'", "latency", "bw");
}
END_TEST

START_TEST(unknown_option_suggests_the_closest)
{
    REFUSED("--sizes", "latency", "--sizez", "8");
}
END_TEST

START_TEST(size_list_keeps_order_and_reads_suffixes)
{
    perf_options_t o;
    char err[256];
    ck_assert_int_eq(OPAL_SUCCESS, PARSE(&o, err, "bw", "--sizes", "64k,0,8,1K,2m,1g,3"));
    const size_t want[] = {65536, 0, 8, 1024, 2097152, 1073741824, 3};
    ck_assert_uint_eq(sizeof(want) / sizeof(want[0]), o.num_sizes);
    for (size_t i = 0; i < o.num_sizes; ++i) {
        ck_assert_uint_eq(want[i], o.sizes[i]);
    }
    ck_assert_int_eq(PERF_BW, o.command);
    perf_options_free(&o);
}
END_TEST

START_TEST(size_list_refuses_bad_entries)
{
    REFUSED("empty entry", "latency", "--sizes", "8,,16");
    REFUSED("'12x' is not a size", "latency", "--sizes", "8,12x");
    REFUSED("'1kk' is not a size", "latency", "--sizes", "1kk");
    REFUSED("'-1' is not a size", "latency", "--sizes=-1");
    REFUSED("'k' is not a size", "latency", "--sizes", "k");
    REFUSED("above the largest size", "latency", "--sizes", "2g");
    REFUSED("above the largest size", "latency", "--max-size", "99999999999999999999");
}
END_TEST

START_TEST(range_doubles_from_min_to_max)
{
    perf_options_t o;
    char err[256];
    ck_assert_int_eq(OPAL_SUCCESS,
                     PARSE(&o, err, "latency", "--min-size", "0", "--max-size", "16"));
    const size_t want[] = {0, 1, 2, 4, 8, 16};
    ck_assert_uint_eq(6, o.num_sizes);
    for (size_t i = 0; i < o.num_sizes; ++i) {
        ck_assert_uint_eq(want[i], o.sizes[i]);
    }
    perf_options_free(&o);
    ck_assert_int_eq(OPAL_SUCCESS,
                     PARSE(&o, err, "latency", "--min-size", "3", "--max-size", "20"));
    ck_assert_uint_eq(3, o.num_sizes);
    ck_assert_uint_eq(12, o.sizes[2]);
    perf_options_free(&o);
    /* A minimum above the default maximum is measured alone. */
    ck_assert_int_eq(OPAL_SUCCESS, PARSE(&o, err, "bw", "--min-size", "8m"));
    ck_assert_uint_eq(1, o.num_sizes);
    ck_assert_uint_eq(8u << 20, o.sizes[0]);
    perf_options_free(&o);
    REFUSED("--min-size 1k is above --max-size 8", "latency", "--min-size", "1k", "--max-size",
            "8");
    REFUSED("exclude each other", "latency", "--sizes", "8", "--max-size", "8");
}
END_TEST

START_TEST(defaults_are_0_to_4m_and_8_bytes_for_rate)
{
    perf_options_t o;
    char err[256];
    ck_assert_int_eq(OPAL_SUCCESS, PARSE(&o, err, "latency"));
    ck_assert_uint_eq(24, o.num_sizes);
    ck_assert_uint_eq(0, o.sizes[0]);
    ck_assert_uint_eq(4u << 20, o.sizes[23]);
    ck_assert_int_eq(PERF_DEFAULT_WINDOW, o.window);
    ck_assert(!o.json && !o.validate);
    perf_options_free(&o);
    ck_assert_int_eq(OPAL_SUCCESS, PARSE(&o, err, "rate"));
    ck_assert_uint_eq(1, o.num_sizes);
    ck_assert_uint_eq(8, o.sizes[0]);
    perf_options_free(&o);
}
END_TEST

START_TEST(counts_are_range_checked)
{
    REFUSED("--iterations: '0'", "latency", "--iterations", "0");
    REFUSED("--iterations: 'many'", "latency", "-i", "many");
    REFUSED("--warmup: '-1'", "latency", "--warmup=-1");
    REFUSED("--window: '0'", "bw", "--window", "0");
    REFUSED("--window: '4097'", "bw", "-W", "4097");
    perf_options_t o;
    char err[256];
    ck_assert_int_eq(OPAL_SUCCESS,
                     PARSE(&o, err, "bw", "-i", "7", "-x", "0", "-W", "3", "-c", "--json"));
    ck_assert_int_eq(7, perf_iterations(&o, 1 << 20));
    ck_assert_int_eq(0, perf_warmup(&o, 8));
    ck_assert_int_eq(3, o.window);
    ck_assert(o.validate && o.json);
    perf_options_free(&o);
}
END_TEST

START_TEST(default_counts_follow_osu)
{
    perf_options_t o;
    char err[256];
    ck_assert_int_eq(OPAL_SUCCESS, PARSE(&o, err, "latency"));
    ck_assert_int_eq(10000, perf_iterations(&o, PERF_LARGE_MESSAGE));
    ck_assert_int_eq(1000, perf_iterations(&o, PERF_LARGE_MESSAGE + 1));
    ck_assert_int_eq(1000, perf_warmup(&o, 0));
    ck_assert_int_eq(100, perf_warmup(&o, 1 << 20));
    perf_options_free(&o);
    ck_assert_int_eq(OPAL_SUCCESS, PARSE(&o, err, "bibw"));
    ck_assert_int_eq(100, perf_iterations(&o, 8));
    ck_assert_int_eq(20, perf_iterations(&o, 1 << 20));
    perf_options_free(&o);
}
END_TEST

START_TEST(mca_pairs_are_kept_in_order)
{
    perf_options_t o;
    char err[256];
    ck_assert_int_eq(OPAL_SUCCESS, PARSE(&o, err, "latency", "--mca", "btl", "self,sm", "--mca",
                                         "btl_base_verbose", "5"));
    ck_assert_int_eq(2, o.num_mca);
    ck_assert_str_eq("btl", o.mca[0].key);
    ck_assert_str_eq("self,sm", o.mca[0].value);
    ck_assert_str_eq("btl_base_verbose", o.mca[1].key);
    perf_options_free(&o);
}
END_TEST

START_TEST(na_subcommands_take_na_options_with_btl_by_default)
{
    perf_options_t o;
    char err[256];
    ck_assert_int_eq(OPAL_SUCCESS, PARSE(&o, err, "na-lat"));
    ck_assert_int_eq(PERF_NA_LAT, o.command);
    ck_assert_str_eq("btl", o.na_info);
    ck_assert_ptr_null(o.uri_file);
    ck_assert(!o.blocking);
    perf_options_free(&o);
    ck_assert_int_eq(OPAL_SUCCESS, PARSE(&o, err, "server", "--na", "ofi+tcp", "--uri-file",
                                         "/tmp/u", "--blocking"));
    ck_assert_int_eq(PERF_SERVER, o.command);
    ck_assert_str_eq("ofi+tcp", o.na_info);
    ck_assert_str_eq("/tmp/u", o.uri_file);
    ck_assert(o.blocking);
    perf_options_free(&o);
    ck_assert_int_eq(OPAL_SUCCESS, PARSE(&o, err, "na-get", "--window", "8"));
    ck_assert_int_eq(PERF_NA_GET, o.command);
    ck_assert_int_eq(8, o.window);
    ck_assert_int_eq(100, perf_iterations(&o, 8));
    ck_assert_int_eq(20, perf_iterations(&o, 65536));
    perf_options_free(&o);
}
END_TEST

START_TEST(na_options_are_refused_where_they_mean_nothing)
{
    REFUSED("--na is for the na subcommands", "latency", "--na", "btl");
    REFUSED("--uri-file is for the na subcommands", "bw", "--uri-file", "/tmp/u");
    REFUSED("--blocking is for the na subcommands", "rate", "--blocking");
    REFUSED("--na: empty info string", "na-lat", "--na", "");
    REFUSED("--uri-file: empty file name", "na-put", "--uri-file", "");
    REFUSED("--percentiles is for latency, not bw", "bw", "--percentiles");
    REFUSED("--percentiles is for latency, not rpc-lat", "rpc-lat", "--percentiles");
}
END_TEST

START_TEST(help_and_version_need_no_subcommand)
{
    perf_options_t o;
    char err[256];
    ck_assert_int_eq(OPAL_SUCCESS, PARSE(&o, err, "--help"));
    ck_assert(o.help);
    perf_options_free(&o);
    ck_assert_int_eq(OPAL_SUCCESS, PARSE(&o, err, "-V"));
    ck_assert(o.version);
    perf_options_free(&o);
    char *usage = perf_options_usage();
    ck_assert_ptr_nonnull(usage);
    ck_assert_ptr_nonnull(strstr(usage, "--sizes"));
    ck_assert_ptr_nonnull(strstr(usage, "latency"));
    free(usage);
}
END_TEST

/* "latency 10000, 1000 above 8k" as --help should give command's default
 * per-size count, from the code (count is perf_iterations or
 * perf_warmup). */
static void expect_default(const char *usage, const char *words, perf_command_t command,
                           long (*count)(const perf_options_t *, size_t), const char *option)
{
    perf_options_t o = {.command = command, .iterations = -1, .warmup = -1};
    char text[128];
    snprintf(text, sizeof(text), "%s %ld, %ld above 8k", words, count(&o, PERF_LARGE_MESSAGE),
             count(&o, PERF_LARGE_MESSAGE + 1));
    /* In the option's own description, not in the next one's. */
    const char *line = strstr(usage, option);
    ck_assert_ptr_nonnull(line);
    const char *next = strstr(line + strlen(option), ", --");
    const char *at = strstr(line, text);
    ck_assert_msg(NULL != at && (NULL == next || at < next), "%s: --help lacks \"%s\"", option,
                  text);
}

/* text with every run of blanks and newlines made one space (--help wraps
 * its descriptions to the terminal). In place. */
static void unwrap(char *text)
{
    char *w = text;
    for (const char *r = text; '\0' != *r; ++r) {
        bool blank = ' ' == *r || '\n' == *r;
        if (!blank || w == text || ' ' != w[-1]) {
            *w++ = blank ? ' ' : *r;
        }
    }
    *w = '\0';
}

START_TEST(help_gives_the_codes_default_counts)
{
    char *usage = perf_options_usage();
    ck_assert_ptr_nonnull(usage);
    unwrap(usage);
    static const struct {
        const char *words;
        perf_command_t command;
    } commands[] = {
        {"latency", PERF_LATENCY},
        {"bw and bibw", PERF_BW},
        {"rate", PERF_RATE},
        {"na-lat and rpc-lat", PERF_RPC_LAT},
    };
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); ++i) {
        expect_default(usage, commands[i].words, commands[i].command, perf_iterations,
                       "--iterations");
        expect_default(usage, commands[i].words, commands[i].command, perf_warmup, "--warmup");
    }
    /* The transfers share their counts, but not their warmup: the bulk
     * ones warm up as Mercury's hg_bw_read, the na ones as na_bw_get. */
    expect_default(usage, "na-put, na-get, bulk-pull, bulk-push and rpc-bw", PERF_RPC_BW,
                   perf_iterations, "--iterations");
    expect_default(usage, "na-put and na-get", PERF_NA_GET, perf_warmup, "--warmup");
    expect_default(usage, "bulk-pull, bulk-push and rpc-bw", PERF_RPC_BW, perf_warmup,
                   "--warmup");
    /* The commands named together share their defaults, as the text says. */
    perf_options_t na_lat = {.command = PERF_NA_LAT, .iterations = -1, .warmup = -1};
    perf_options_t rpc_lat = {.command = PERF_RPC_LAT, .iterations = -1, .warmup = -1};
    ck_assert_int_eq(perf_iterations(&na_lat, 1 << 20), perf_iterations(&rpc_lat, 1 << 20));
    ck_assert_int_eq(perf_warmup(&na_lat, 1), perf_warmup(&rpc_lat, 1));
    perf_options_t pull = {.command = PERF_BULK_PULL, .iterations = -1, .warmup = -1};
    perf_options_t rpc_bw = {.command = PERF_RPC_BW, .iterations = -1, .warmup = -1};
    ck_assert_int_eq(perf_iterations(&pull, 1), perf_iterations(&rpc_bw, 1));
    ck_assert_int_eq(perf_warmup(&pull, 1 << 20), perf_warmup(&rpc_bw, 1 << 20));
    perf_options_t put = {.command = PERF_NA_PUT, .iterations = -1, .warmup = -1};
    perf_options_t get = {.command = PERF_NA_GET, .iterations = -1, .warmup = -1};
    ck_assert_int_eq(perf_warmup(&put, 1), perf_warmup(&get, 1));
    ck_assert_int_eq(perf_warmup(&put, 1 << 20), perf_warmup(&get, 1 << 20));
    perf_options_t bw = {.command = PERF_BW, .iterations = -1, .warmup = -1};
    perf_options_t bibw = {.command = PERF_BIBW, .iterations = -1, .warmup = -1};
    ck_assert_int_eq(perf_iterations(&bw, 1), perf_iterations(&bibw, 1));
    ck_assert_int_eq(perf_warmup(&bw, 1 << 20), perf_warmup(&bibw, 1 << 20));
    free(usage);
}
END_TEST

/* --------------------------------------------------------- the program */

/* Runs opal_perf alone (a singleton), under valgrind when the tests are. */
static void run_alone(mcarun_run_t *run, const char *const *args)
{
    char **argv = NULL;
    if (opal_test_under_valgrind()) {
        static const char *const vg[] = {"--mode=execute",
                                         "valgrind",
                                         "--quiet",
                                         "--error-exitcode=97",
                                         "--leak-check=full",
                                         "--errors-for-leak-kinds=definite,indirect",
                                         "--show-leak-kinds=definite,indirect",
                                         NULL};
        opal_argv_append_nosize(&argv, mcarun_test_build_path("libtool"));
        for (int i = 0; NULL != vg[i]; ++i) {
            opal_argv_append_nosize(&argv, vg[i]);
        }
        char supp[PATH_MAX];
        snprintf(supp, sizeof(supp), "--suppressions=%s/../contrib/valgrind.supp",
                 opal_test_srcdir());
        opal_argv_append_nosize(&argv, supp);
    }
    opal_argv_append_nosize(&argv, perf_prog);
    for (int i = 0; NULL != args[i]; ++i) {
        opal_argv_append_nosize(&argv, args[i]);
    }
    memset(run, 0, sizeof(*run));
    int out[2], err[2];
    ck_assert_int_eq(0, pipe2(out, O_CLOEXEC));
    ck_assert_int_eq(0, pipe2(err, O_CLOEXEC));
    fflush(stdout);
    fflush(stderr);
    run->pid = fork();
    ck_assert_int_ge(run->pid, 0);
    if (0 == run->pid) {
        setpgid(0, 0);
        int null = open("/dev/null", O_RDONLY);
        dup2(null, 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        execv(argv[0], argv);
        _exit(126);
    }
    opal_argv_free(argv);
    close(out[1]);
    close(err[1]);
    run->out_fd = out[0];
    run->err_fd = err[0];
    mcarun_test_finish(run);
}

#define ALONE(run, ...)  run_alone((run), (const char *const[]){__VA_ARGS__, NULL})
#define MCARUN(run, ...) mcarun_test_mcarun((run), NULL, (const char *const[]){__VA_ARGS__, NULL})

#define EXPECT(run, cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            mcarun_test_dump(run);                                                                 \
            ck_abort_msg("expected: %s", #cond);                                                   \
        }                                                                                          \
    } while (0)

static bool has(const char *text, const char *needle)
{
    return NULL != strstr(text, needle);
}

/* The table holds a '#' header naming title, then one row per size in
 * sizes (in order) whose values are positive numbers. */
static bool table_ok(const char *out, const char *title, const size_t *sizes, size_t count,
                     int values)
{
    if (!has(out, title) || !has(out, "# Size")) {
        return false;
    }
    const char *line = out;
    size_t row = 0;
    while ('\0' != *line) {
        const char *end = strchr(line, '\n');
        if (NULL == end) {
            return false;
        }
        if ('#' != *line) {
            char text[256];
            size_t len =
                (size_t) (end - line) < sizeof(text) - 1 ? (size_t) (end - line) : sizeof(text) - 1;
            memcpy(text, line, len);
            text[len] = '\0';
            unsigned long long size;
            double v1 = 0, v2 = 0;
            int n = sscanf(text, "%llu %lf %lf", &size, &v1, &v2);
            /* Bandwidth is printed with two decimals: small messages on a
             * busy machine (or zero bytes) may show 0.00. Latency and
             * message rate are always positive. */
            bool mbps = has(title, "MB/s");
            if (row >= count || size != sizes[row] || n != 1 + values ||
                !(v1 > 0 || (mbps && 0 == v1)) || (2 == values && !(v2 >= 0))) {
                fprintf(stderr, "bad row %zu: '%s'\n", row, text);
                return false;
            }
            ++row;
        }
        line = end + 1;
    }
    return row == count;
}

START_TEST(a_client_without_a_server_says_so)
{
    /* A URI file that exists but names no server, with a class nobody
     * serves: the client fails at once naming the class, exit status 1. */
    char path[] = "/tmp/opal_perf_uri_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(4, write(fd, "bad\n", 4));
    close(fd);
    mcarun_run_t run;
    ALONE(&run, "na-lat", "--na", "no-such-class", "--uri-file", path);
    unlink(path);
    EXPECT(&run, 1 == run.status);
    EXPECT(&run, has(run.err, "no-such-class"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(bad_command_line_exits_1_before_starting)
{
    mcarun_run_t run;
    ALONE(&run, "latency", "--sizes", "8,nope");
    EXPECT(&run, 1 == run.status);
    EXPECT(&run, has(run.err, "opal_perf: --sizes: 'nope' is not a size"));
    EXPECT(&run, has(run.err, "opal_perf --help"));
    EXPECT(&run, 0 == run.out_len);
    mcarun_test_run_free(&run);

    ALONE(&run, "--verbose");
    EXPECT(&run, 1 == run.status);
    EXPECT(&run, has(run.err, "--verbose"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(help_and_version_exit_0)
{
    mcarun_run_t run;
    ALONE(&run, "--help");
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, has(run.out, "Usage: mcarun -np 2 opal_perf"));
    mcarun_test_run_free(&run);
    ALONE(&run, "--version");
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, has(run.out, "opal_perf (" PACKAGE_NAME ") " OPAL_VERSION));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(more_than_two_ranks_are_refused)
{
    mcarun_run_t run;
    MCARUN(&run, "-np", "3", "--oversubscribe", "--timeout", "60", perf_prog, "latency");
    EXPECT(&run, 0 != run.status);
    EXPECT(&run, has(run.err, "between two processes"));
    EXPECT(&run, has(run.err, "this job has 3"));
    EXPECT(&run, !has(run.out, "# Size"));
    mcarun_test_run_free(&run);
}
END_TEST

static const size_t small_sizes[] = {0, 1, 8, 1000, 4096, 65536, 300000};
#define SMALL_SIZES "0,1,8,1000,4k,64k,300000"
#define NSMALL      (sizeof(small_sizes) / sizeof(small_sizes[0]))

START_TEST(every_subcommand_runs_alone_over_self)
{
    static const struct {
        const char *command, *title;
        int values;
    } cases[] = {
        {"latency", "Latency (us)", 1},
        {"bw", "Bandwidth (MB/s)", 1},
        {"bibw", "Bandwidth (MB/s)", 1},
        {"rate", "Messages/s", 2},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        mcarun_run_t run;
        ALONE(&run, cases[i].command, "--sizes", SMALL_SIZES, "-i", "20", "-x", "2", "-W", "4",
              "--validate", "--mca", "btl", "self");
        EXPECT(&run, 0 == run.status);
        EXPECT(&run, table_ok(run.out, cases[i].title, small_sizes, NSMALL, cases[i].values));
        EXPECT(&run, has(run.out, "rank 0 to itself over btl self"));
        mcarun_test_run_free(&run);
    }
}
END_TEST

START_TEST(one_rank_under_mcarun_measures_itself)
{
    mcarun_run_t run;
    MCARUN(&run, "-np", "1", "--timeout", "60", perf_prog, "latency", "--sizes", SMALL_SIZES, "-i",
           "50", "--validate", "--mca", "btl", "self");
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, table_ok(run.out, "Latency (us)", small_sizes, NSMALL, 1));
    mcarun_test_run_free(&run);
}
END_TEST

/* The JSON document: valid, the documented keys, one result per size in
 * order with its value. */
static void check_json(mcarun_run_t *run, const char *command, const char *value_key)
{
    char *why = NULL;
    bool valid = json_check(run->out, &why);
    if (!valid) {
        fprintf(stderr, "json: %s\n", why);
    }
    free(why);
    EXPECT(run, valid);
    char text[64];
    snprintf(text, sizeof(text), "\"command\": \"%s\"", command);
    EXPECT(run, has(run->out, text));
    EXPECT(run, has(run->out, "\"program\": \"opal_perf\""));
    EXPECT(run, has(run->out, "\"modules\": {\"send\": [\"self\"], \"rdma\": [\"self\"]}"));
    EXPECT(run, has(run->out, "\"validated\": true"));
    EXPECT(run, has(run->out, "\"results\": ["));
    const char *at = run->out;
    for (size_t i = 0; i < NSMALL; ++i) {
        snprintf(text, sizeof(text), "{\"size\": %zu, \"iterations\": 20,", small_sizes[i]);
        at = strstr(at, text);
        EXPECT(run, NULL != at);
        const char *value = strstr(at, value_key);
        EXPECT(run, NULL != value && value < strchr(at, '}'));
        EXPECT(run, strtod(value + strlen(value_key), NULL) > 0);
    }
    EXPECT(run, NSMALL == (size_t) mcarun_test_count(run->out, "\"protocol\": \""));
    EXPECT(run, !has(run->out, "# Size"));
}

START_TEST(json_is_one_document_with_every_size)
{
    mcarun_run_t run;
    ALONE(&run, "latency", "--sizes", SMALL_SIZES, "-i", "20", "--validate", "--json", "--mca",
          "btl", "self");
    EXPECT(&run, 0 == run.status);
    check_json(&run, "latency", "\"latency_us\": ");
    mcarun_test_run_free(&run);
    ALONE(&run, "rate", "--sizes", SMALL_SIZES, "-i", "20", "-W", "8", "--validate", "--json",
          "--mca", "btl", "self");
    EXPECT(&run, 0 == run.status);
    check_json(&run, "rate", "\"messages_per_s\": ");
    EXPECT(&run, NSMALL == (size_t) mcarun_test_count(run.out, "\"bandwidth_MBps\": "));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(fragments_carry_large_messages_without_rdma)
{
    /* self without put / get: above the eager limit (64k), fragments of
     * max_send_size (128k), the last one short. */
    mcarun_run_t run;
    ALONE(&run, "bibw", "--sizes", "65537,131072,300001", "-i", "4", "-x", "1", "-W", "3",
          "--validate", "--json", "--mca", "btl", "self", "--mca", "btl_self_flags", "send,sendi");
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, 3 == mcarun_test_count(run.out, "\"protocol\": \"frag\""));
    EXPECT(&run, has(run.out, "\"rdma\": []"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(gets_are_split_at_the_modules_limit)
{
    mcarun_run_t run;
    ALONE(&run, "latency", "--sizes", "100001,1m", "-i", "5", "-x", "1", "--validate", "--mca",
          "btl", "self", "--mca", "btl_self_get_limit", "10000");
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, has(run.out, "then get over self in pieces of 10000 B"));
    mcarun_test_run_free(&run);
    ALONE(&run, "latency", "--sizes", "100001", "-i", "5", "--json", "--mca", "btl", "self",
          "--mca", "btl_self_min_rdma_pipeline_size", "200000");
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, has(run.out, "\"protocol\": \"frag\""));
    mcarun_test_run_free(&run);
}
END_TEST

static bool btl_built(const char *comp)
{
    return mcarun_test_component_built("btl", comp, OPAL_PERF_TEST_PLUGIN_DIRS);
}

/* latency --percentiles' table: a row per size in order, each with the
 * average, median, minimum and p99, where min <= median <= p99 and the
 * average is no less than the minimum (every round trip is timed). */
static bool percentile_rows_ok(const char *out, const size_t *sizes, size_t count)
{
    if (!has(out, "Latency (us)") || !has(out, "Median (us)") || !has(out, "P99 (us)")) {
        return false;
    }
    size_t row = 0;
    for (const char *line = out, *end; NULL != (end = strchr(line, '\n')); line = end + 1) {
        if ('#' == *line || end == line) {
            continue;
        }
        unsigned long long size;
        double avg, median, min, p99;
        char tail;
        int n = sscanf(line, "%llu %lf %lf %lf %lf%c", &size, &avg, &median, &min, &p99, &tail);
        if (row >= count || 6 != n || '\n' != tail || size != sizes[row] || !(min >= 0) ||
            !(min <= median && median <= p99) || !(avg + 0.005 >= min)) {
            fprintf(stderr, "bad row %zu: '%.*s'\n", row, (int) (end - line), line);
            return false;
        }
        ++row;
    }
    return row == count;
}

START_TEST(latency_percentiles_time_every_round_trip)
{
    static const size_t sizes[] = {0, 8, 4096};
    mcarun_run_t run;
    ALONE(&run, "latency", "--percentiles", "--sizes", "0,8,4k", "-i", "200", "-x", "5",
          "--validate", "--mca", "btl", "self");
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, percentile_rows_ok(run.out, sizes, 3));
    mcarun_test_run_free(&run);
    ALONE(&run, "latency", "--percentiles", "--json", "--sizes", "0,8,4k", "-i", "20", "--mca",
          "btl", "self");
    EXPECT(&run, 0 == run.status);
    char *why = NULL;
    EXPECT(&run, json_check(run.out, &why));
    free(why);
    EXPECT(&run, 3 == mcarun_test_count(run.out, "\"median_us\": "));
    EXPECT(&run, 3 == mcarun_test_count(run.out, "\"min_us\": "));
    EXPECT(&run, 3 == mcarun_test_count(run.out, "\"p99_us\": "));
    mcarun_test_run_free(&run);
    /* Without the option, the table and the JSON are as before. */
    ALONE(&run, "latency", "--json", "--sizes", "8", "-i", "20", "--mca", "btl", "self");
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, !has(run.out, "median_us"));
    mcarun_test_run_free(&run);
    if (btl_built("sm")) {
        MCARUN(&run, "-np", "2", "--timeout", "60", perf_prog, "latency", "--percentiles",
               "--sizes", "0,8,4k", "-i", "200", "--validate", "--mca", "btl", "self,sm");
        EXPECT(&run, 0 == run.status);
        EXPECT(&run, percentile_rows_ok(run.out, sizes, 3));
        EXPECT(&run, has(run.out, "rank 0 <-> rank 1 over btl sm"));
        mcarun_test_run_free(&run);
    }
}
END_TEST

START_TEST(a_peer_no_module_reaches_is_an_error)
{
    /* Alone without self (and ofi, which reaches its own process too):
     * nothing reaches this process. */
    mcarun_run_t run;
    ALONE(&run, "latency", "--sizes", "8", "--mca", "btl",
          btl_built("ofi") ? "^self,ofi" : "^self");
    EXPECT(&run, 1 == run.status);
    EXPECT(&run, has(run.err, "opal_perf: rank 0:"));
    EXPECT(&run, !has(run.out, "# Size"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(default_selection_leaves_ofi_and_libfabric_aside_on_one_node)
{
    if (!btl_built("ofi") || !btl_built("sm")) {
        fprintf(stderr, "default_selection_leaves_ofi...: btl/ofi or btl/sm is not built\n");
        return;
    }
    /* The dynamic linker names every file it loads (LD_DEBUG=files): with
     * every rank on this node and ofi not named, neither rank loads
     * libfabric, and sm carries the messages. */
    setenv("LD_DEBUG", "files", 1);
    mcarun_run_t run;
    MCARUN(&run, "-np", "2", "--timeout", "60", perf_prog, "latency", "--sizes", "8", "-i", "5",
           "-x", "1");
    unsetenv("LD_DEBUG");
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, has(run.out, "over btl sm"));
    EXPECT(&run, has(run.err, "mca_btl_ofi.so"));
    EXPECT(&run, !has(run.err, "libfabric.so"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(mca_typos_are_reported)
{
    mcarun_run_t run;
    ALONE(&run, "latency", "--sizes", "8", "-i", "5", "--mca", "btl", "self", "--mca",
          "btl_self_eager_limt", "1024");
    EXPECT(&run, has(run.err, "btl_self_eager_limt"));
    EXPECT(&run, has(run.err, "btl_self_eager_limit"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(two_ranks_over_self_sm)
{
    if (!btl_built("sm")) {
        fprintf(stderr, "two_ranks_over_self_sm: btl/sm is not built: nothing to run\n");
        return;
    }
    static const char *const commands[] = {"latency", "bw", "bibw", "rate"};
    static const char *const titles[] = {"Latency (us)", "Bandwidth (MB/s)", "Bandwidth (MB/s)",
                                         "Messages/s"};
    static const size_t sizes[] = {0, 8, 4096, 65536, 1048576};
    for (size_t i = 0; i < 4; ++i) {
        mcarun_run_t run;
        MCARUN(&run, "-np", "2", "--timeout", "60", perf_prog, commands[i], "--sizes",
               "0,8,4k,64k,1m", "-i", "20", "-x", "2", "-W", "8", "--validate", "--mca", "btl",
               "self,sm");
        EXPECT(&run, 0 == run.status);
        EXPECT(&run, table_ok(run.out, titles[i], sizes, 5, 3 == i ? 2 : 1));
        EXPECT(&run, has(run.out, "rank 0 <-> rank 1 over btl sm"));
        mcarun_test_run_free(&run);
    }
    /* Without sm's put / get: fragments both ways. */
    mcarun_run_t run;
    MCARUN(&run, "-np", "2", "--timeout", "60", perf_prog, "bibw", "--sizes", "0,8,64k,100001",
           "-i", "10", "-x", "1", "-W", "4", "--validate", "--json", "--mca", "btl", "self,sm",
           "--mca", "btl_sm_flags", "send,sendi");
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, 2 == mcarun_test_count(run.out, "\"protocol\": \"frag\""));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(two_ranks_over_self_ofi_tcp)
{
    if (!btl_built("ofi")) {
        fprintf(stderr, "two_ranks_over_self_ofi_tcp: btl/ofi is not built: nothing to run\n");
        return;
    }
    static const char *const commands[] = {"latency", "bibw"};
    static const size_t sizes[] = {0, 8, 65536, 1048576};
    for (size_t i = 0; i < 2; ++i) {
        mcarun_run_t run;
        MCARUN(&run, "-np", "2", "--timeout", "60", perf_prog, commands[i], "--sizes", "0,8,64k,1m",
               "-i", "10", "-x", "1", "-W", "4", "--validate", "--mca", "btl", "self,ofi", "--mca",
               "ofi_provider_include", "tcp;ofi_rxm");
        EXPECT(&run, 0 == run.status);
        EXPECT(&run, table_ok(run.out, 0 == i ? "Latency (us)" : "Bandwidth (MB/s)", sizes, 4, 1));
        /* The header names the provider and domain btl/ofi chose. */
        EXPECT(&run, has(run.out, "rank 0 <-> rank 1 over btl ofi (tcp;ofi_rxm, "));
        mcarun_test_run_free(&run);
    }
}
END_TEST

/* shm carries messages of at most its inject size (4096 in libfabric
 * 1.17): 5000 B and 12 KiB go in fragments sent in place; from 16 KiB up
 * the receiver gets the data, with delivery completion (shm's copy by
 * both processes). Without it (btl_ofi_get_delivery_complete 0) gets start
 * at 256 KiB again. */
START_TEST(two_ranks_over_self_ofi_shm)
{
    if (!btl_built("ofi")) {
        fprintf(stderr, "two_ranks_over_self_ofi_shm: btl/ofi is not built: nothing to run\n");
        return;
    }
    static const char *const commands[] = {"latency", "bibw", "latency"};
    for (size_t i = 0; i < 3; ++i) {
        mcarun_run_t run;
        MCARUN(&run, "-np", "2", "--timeout", "60", perf_prog, commands[i], "--sizes",
               "0,8,4k,5000,12k,64k,1m", "-i", "10", "-x", "1", "-W", "4", "--validate", "--json",
               "--mca", "btl", "self,ofi", "--mca", "ofi_provider_include", "shm", "--mca",
               "btl_ofi_get_delivery_complete", 2 == i ? "0" : "-1");
        if (0 != run.status && has(run.err, "no btl module reaches rank")) {
            fprintf(stderr, "two_ranks_over_self_ofi_shm: libfabric runs no shm here\n");
            mcarun_test_run_free(&run);
            return;
        }
        EXPECT(&run, 0 == run.status);
        EXPECT(&run, has(run.out, "\"validated\": true"));
        EXPECT(&run, 3 == mcarun_test_count(run.out, "\"protocol\": \"eager\""));
        EXPECT(&run, (2 == i ? 3 : 2) == mcarun_test_count(run.out, "\"protocol\": \"frag\""));
        EXPECT(&run, (2 == i ? 1 : 2) == mcarun_test_count(run.out, "\"protocol\": \"get\""));
        mcarun_test_run_free(&run);
    }
}
END_TEST

/* rpc-lat and rpc-bw in a job: rank 1 serves over na/btl (btl/sm), sizes
 * around the eager size and 1 MiB (by bulk both ways), every RPC's
 * answer checked (--validate). */
START_TEST(rpc_lat_and_bw_in_a_job_over_btl)
{
    static const char *const commands[] = {"rpc-lat", "rpc-bw"};
    static const size_t sizes[] = {0, 8, 65536, 1048576};
    for (size_t i = 0; i < 2; ++i) {
        mcarun_run_t run;
        MCARUN(&run, "-np", "2", "--timeout", "120", perf_prog, commands[i], "--na", "btl",
               "--sizes", "0,8,64k,1m", "-i", "10", "-x", "1", "-W", "4", "--validate", "--mca",
               "btl", "self,sm");
        EXPECT(&run, 0 == run.status);
        EXPECT(&run, table_ok(run.out, 0 == i ? "Median (us)" : "Read (MB/s)", sizes, 4, 2));
        mcarun_test_run_free(&run);
    }
}
END_TEST

/* rpc-server and an rpc-lat / rpc-bw client started alone over ofi+tcp,
 * the URI through a file; the client's end stops the server (exit 0). */
START_TEST(rpc_lat_and_bw_between_processes_started_alone)
{
    if (!mcarun_test_component_built("na", "ofi", OPAL_PERF_TEST_PLUGIN_DIRS)) {
        fprintf(stderr, "rpc_lat_and_bw_between_processes_started_alone: na/ofi is not built\n");
        return;
    }
    static const char *const commands[] = {"rpc-lat", "rpc-bw"};
    static const size_t sizes[] = {8, 4096, 300000};
    for (size_t i = 0; i < 2; ++i) {
        char path[] = "/tmp/opal_perf_rpc_uri_XXXXXX";
        int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        close(fd);
        unlink(path);
        fflush(stdout);
        fflush(stderr);
        pid_t server = fork();
        ck_assert_int_ge(server, 0);
        if (0 == server) {
            int null = open("/dev/null", O_RDWR);
            dup2(null, 1);
            execl(perf_prog, perf_prog, "rpc-server", "--na", "ofi+tcp", "--uri-file", path,
                  (char *) NULL);
            _exit(126);
        }
        mcarun_run_t run;
        ALONE(&run, commands[i], "--na", "ofi+tcp", "--uri-file", path, "--sizes", "8,4k,300000",
              "-i", "10", "-x", "1", "-W", "4", "--validate", "--json");
        int status = -1;
        ck_assert_int_eq(waitpid(server, &status, 0), server);
        unlink(path);
        EXPECT(&run, 0 == run.status);
        EXPECT(&run, WIFEXITED(status) && 0 == WEXITSTATUS(status));
        char *why = NULL;
        bool valid = json_check(run.out, &why);
        free(why);
        EXPECT(&run, valid);
        for (size_t k = 0; k < 3; ++k) {
            char text[64];
            snprintf(text, sizeof(text), "{\"size\": %zu, \"iterations\": 10,", sizes[k]);
            EXPECT(&run, has(run.out, text));
        }
        EXPECT(&run,
               3 == mcarun_test_count(run.out, 0 == i ? "\"median_us\": " : "\"write_mb_s\": "));
        mcarun_test_run_free(&run);
    }
}
END_TEST

START_TEST(two_ranks_over_self_alone_fail_with_reasons)
{
    mcarun_run_t run;
    MCARUN(&run, "-np", "2", "--timeout", "60", perf_prog, "latency", "--sizes", "8", "--mca",
           "btl", "self");
    EXPECT(&run, 0 != run.status);
    EXPECT(&run, has(run.err, "self"));
    EXPECT(&run, has(run.err, "no btl module reaches rank"));
    EXPECT(&run, !has(run.out, "# Size"));
    mcarun_test_run_free(&run);
}
END_TEST

int main(void)
{
    setenv("OPAL_MCA_mca_base_component_path", OPAL_PERF_TEST_PLUGIN_DIRS, 1);
    snprintf(perf_prog, sizeof(perf_prog), "%s",
             mcarun_test_build_path("tools/opal_perf/opal_perf"));
    Suite *s = suite_create("opal_perf");
    OPAL_TEST_ADD(s, subcommand_is_required_and_checked);
    OPAL_TEST_ADD(s, unknown_option_suggests_the_closest);
    OPAL_TEST_ADD(s, size_list_keeps_order_and_reads_suffixes);
    OPAL_TEST_ADD(s, size_list_refuses_bad_entries);
    OPAL_TEST_ADD(s, range_doubles_from_min_to_max);
    OPAL_TEST_ADD(s, defaults_are_0_to_4m_and_8_bytes_for_rate);
    OPAL_TEST_ADD(s, counts_are_range_checked);
    OPAL_TEST_ADD(s, default_counts_follow_osu);
    OPAL_TEST_ADD(s, mca_pairs_are_kept_in_order);
    OPAL_TEST_ADD(s, na_subcommands_take_na_options_with_btl_by_default);
    OPAL_TEST_ADD(s, na_options_are_refused_where_they_mean_nothing);
    OPAL_TEST_ADD(s, a_client_without_a_server_says_so);
    OPAL_TEST_ADD(s, help_and_version_need_no_subcommand);
    OPAL_TEST_ADD(s, help_gives_the_codes_default_counts);
    OPAL_TEST_ADD(s, bad_command_line_exits_1_before_starting);
    OPAL_TEST_ADD(s, help_and_version_exit_0);
    OPAL_TEST_ADD(s, more_than_two_ranks_are_refused);
    OPAL_TEST_ADD(s, every_subcommand_runs_alone_over_self);
    OPAL_TEST_ADD(s, one_rank_under_mcarun_measures_itself);
    OPAL_TEST_ADD(s, json_is_one_document_with_every_size);
    OPAL_TEST_ADD(s, fragments_carry_large_messages_without_rdma);
    OPAL_TEST_ADD(s, gets_are_split_at_the_modules_limit);
    OPAL_TEST_ADD(s, a_peer_no_module_reaches_is_an_error);
    OPAL_TEST_ADD(s, latency_percentiles_time_every_round_trip);
    OPAL_TEST_ADD(s, default_selection_leaves_ofi_and_libfabric_aside_on_one_node);
    OPAL_TEST_ADD(s, mca_typos_are_reported);
    OPAL_TEST_ADD(s, two_ranks_over_self_sm);
    OPAL_TEST_ADD(s, two_ranks_over_self_ofi_shm);
    OPAL_TEST_ADD(s, two_ranks_over_self_ofi_tcp);
    OPAL_TEST_ADD(s, two_ranks_over_self_alone_fail_with_reasons);
    OPAL_TEST_ADD(s, rpc_lat_and_bw_in_a_job_over_btl);
    OPAL_TEST_ADD(s, rpc_lat_and_bw_between_processes_started_alone);
    return opal_test_run(s);
}
