/*
 * opal_self_test as a user sees it: the --endpoint and --message-size
 * parsers (good lists and every kind of bad one, each refusal naming the
 * option and the value), the command line, and live runs: inside a job of
 * 3 ranks (oversubscribed, na btl) whose JSON must hold every endpoint and
 * size with the repetitions counted and ordered percentiles; the server's
 * size limit refused with the sender named; and a client started alone
 * that attaches from the group file a job of rpc_group_rank saved (a
 * program that registers nothing for the self-test) over ofi+tcp. Timing
 * never decides anything here.
 */
#include "opal/opal_config.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opal/util/opal_error.h"
#include "test/orte/mcarun_test_support.h"
#include "test/support/opal_test.h"
#include "test/tools/json_check.h"
#include "tools/opal_self_test/opal_self_test.h"

static char prog[PATH_MAX];

/* ------------------------------------------------------ message sizes */

static void sizes_ok(const char *text, size_t n, const st_size_t *expect)
{
    st_size_t *got = NULL;
    size_t count = 0;
    char err[512] = "";
    int rc = st_parse_message_sizes(text, &got, &count, err, sizeof(err));
    ck_assert_msg(OPAL_SUCCESS == rc, "'%s' refused: %s", text, err);
    ck_assert_uint_eq(count, n);
    for (size_t i = 0; i < n; ++i) {
        ck_assert_msg(
            got[i].in_size == expect[i].in_size && got[i].out_size == expect[i].out_size &&
                got[i].in_bulk == expect[i].in_bulk && got[i].out_bulk == expect[i].out_bulk,
            "'%s': pair %zu is %llu/%d %llu/%d", text, i, (unsigned long long) got[i].in_size,
            got[i].in_bulk, (unsigned long long) got[i].out_size, got[i].out_bulk);
    }
    free(got);
}

static void sizes_refused(const char *text, const char *needle)
{
    st_size_t *got = NULL;
    size_t count = 0;
    char err[512] = "";
    ck_assert_int_eq(OPAL_ERR_BAD_PARAM,
                     st_parse_message_sizes(text, &got, &count, err, sizeof(err)));
    ck_assert_ptr_null(got);
    ck_assert_msg(NULL != strstr(err, "--message-size"), "'%s': no option in '%s'", text, err);
    ck_assert_msg(NULL != strstr(err, needle), "'%s': '%s' lacks '%s'", text, err, needle);
}

START_TEST(message_sizes_read_pairs_with_bulk_prefixes)
{
    const st_size_t three[] = {
        {0, 0, false, false}, {1048576, 0, true, false}, {0, 65536, false, true}};
    sizes_ok("(0 0) (b1048576 0) (0 b65536)", 3, three);
    /* Commas between and inside pairs, spaces anywhere, suffixes, 'i'. */
    sizes_ok(" (0,0),(b1m 0) , ( i0  B64k ) ", 3, three);
    /* Without parentheses, pairs are separated by commas. */
    sizes_ok("0 0,b1048576 0,0 b64k", 3, three);
    /* A lone size is both directions. */
    const st_size_t both[] = {{4096, 4096, true, true}, {8, 8, false, false}};
    sizes_ok("(b4k) (8)", 2, both);
    sizes_ok("b4096,8", 2, both);
    const st_size_t gig[] = {{1073741824, 1, false, false}};
    sizes_ok("(1g 1)", 1, gig);
}
END_TEST

START_TEST(message_sizes_refuse_bad_lists_naming_what_is_wrong)
{
    sizes_refused("", "no sizes");
    sizes_refused("  ,  ", "empty pair");
    sizes_refused("()", "empty pair");
    sizes_refused("(0 0", "not closed");
    sizes_refused("(0 0 0)", "third size");
    sizes_refused("(0 x)", "found 'x'");
    sizes_refused("(b 0)", "expected a size");
    sizes_refused("(b0 0)", "at least 1 byte");
    sizes_refused("(2g 0)", "above 1 GiB");
    sizes_refused("(1073741825 0)", "above 1 GiB");
    sizes_refused("(99999999999999999999999 0)", "above 1 GiB");
    sizes_refused("(12q 0)", "unexpected 'q'");
    sizes_refused("(0 0) x", "expected '('");
    sizes_refused("0 0)", "closes no");
    /* The value is quoted in the message. */
    sizes_refused("(0 -1)", "'(0 -1)'");
    char many[ST_MAX_SIZES * 4 + 8] = "";
    for (int i = 0; i <= ST_MAX_SIZES; ++i) {
        strcat(many, "(0)");
    }
    sizes_refused(many, "more than 1024 pairs");
}
END_TEST

START_TEST(message_size_labels_read_back_as_written)
{
    st_size_t s = {1048576, 0, true, false};
    char label[64];
    st_size_label(&s, label, sizeof(label));
    ck_assert_str_eq(label, "(b1048576 0)");
    st_size_t *got = NULL;
    size_t n = 0;
    char err[256];
    ck_assert_int_eq(OPAL_SUCCESS, st_parse_message_sizes(label, &got, &n, err, sizeof(err)));
    ck_assert(1 == n && got[0].in_size == s.in_size && got[0].in_bulk && !got[0].out_bulk);
    free(got);
}
END_TEST

/* ---------------------------------------------------------- endpoints */

static void endpoints_ok(const char *const *texts, size_t n, const char *expect)
{
    st_endpoint_t *eps = NULL;
    size_t count = 0;
    char err[512] = "";
    for (const char *const *t = texts; NULL != *t; ++t) {
        int rc = st_parse_endpoints(*t, &eps, &count, err, sizeof(err));
        ck_assert_msg(OPAL_SUCCESS == rc, "'%s' refused: %s", *t, err);
    }
    ck_assert_uint_eq(count, n);
    char got[1024] = "";
    for (size_t i = 0; i < count; ++i) {
        char one[32];
        snprintf(one, sizeof(one), "%s%u:%u", 0 == i ? "" : " ", eps[i].rank, eps[i].ctx);
        strcat(got, one);
    }
    ck_assert_str_eq(got, expect);
    free(eps);
}

static void endpoint_refused(const char *text, const char *needle)
{
    st_endpoint_t *eps = NULL;
    size_t count = 0;
    char err[512] = "";
    ck_assert_int_eq(OPAL_ERR_BAD_PARAM, st_parse_endpoints(text, &eps, &count, err, sizeof(err)));
    ck_assert_ptr_null(eps);
    ck_assert_uint_eq(count, 0);
    ck_assert_msg(NULL != strstr(err, "--endpoint"), "'%s': no option in '%s'", text, err);
    ck_assert_msg(NULL != strstr(err, needle), "'%s': '%s' lacks '%s'", text, err, needle);
}

START_TEST(endpoints_expand_ranges_sorted_and_once_each)
{
    endpoints_ok((const char *const[]){"0-3:0", NULL}, 4, "0:0 1:0 2:0 3:0");
    endpoints_ok((const char *const[]){"1,3:0-1", NULL}, 4, "1:0 1:1 3:0 3:1");
    /* Several options add up; duplicates are kept once, in order. */
    endpoints_ok((const char *const[]){"3:0", "1-3:0", "2:254", NULL}, 4, "1:0 2:0 2:254 3:0");
    endpoints_ok((const char *const[]){"4294967294:0", NULL}, 1, "4294967294:0");
}
END_TEST

START_TEST(endpoints_refuse_bad_values_naming_what_is_wrong)
{
    endpoint_refused("", "one ':'");
    endpoint_refused("0-3", "one ':'");
    endpoint_refused("0:0:0", "one ':'");
    endpoint_refused(":0", "no ranks");
    endpoint_refused("0:", "no contexts");
    endpoint_refused("1-x:0", "no valid end");
    endpoint_refused("a:0", "found 'a'");
    endpoint_refused("3-1:0", "3-1 of ranks is backwards");
    endpoint_refused("0:255", "contexts at offset 2 is above 254");
    endpoint_refused("4294967295:0", "above 4294967294");
    endpoint_refused("1,:0", "ends with ','");
    endpoint_refused("1 2:0", "unexpected ' '");
    endpoint_refused("0-4294967294:0-254", "more than 1048576");
    /* The total over several options is bounded too. */
    st_endpoint_t *eps = NULL;
    size_t count = 0;
    char err[512];
    ck_assert_int_eq(OPAL_SUCCESS,
                     st_parse_endpoints("0-999999:0", &eps, &count, err, sizeof(err)));
    ck_assert_int_eq(OPAL_ERR_BAD_PARAM,
                     st_parse_endpoints("0-99999:1", &eps, &count, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "endpoints in all"));
    ck_assert_uint_eq(count, 1000000);
    free(eps);
}
END_TEST

/* ------------------------------------------------------ the command line */

static int parse(st_options_t *o, char *err, size_t errlen, const char *const *words)
{
    char *argv[32] = {"opal_self_test"};
    int argc = 1;
    for (; NULL != words[argc - 1]; ++argc) {
        argv[argc] = (char *) words[argc - 1];
    }
    return st_options_parse(argc, argv, o, err, errlen);
}

#define PARSE(o, err, ...) parse((o), (err), sizeof(err), (const char *const[]){__VA_ARGS__, NULL})

#define REFUSED(needle, ...)                                                                       \
    do {                                                                                           \
        st_options_t o_;                                                                           \
        char e_[512];                                                                              \
        ck_assert_int_eq(OPAL_ERR_BAD_PARAM, PARSE(&o_, e_, __VA_ARGS__));                         \
        ck_assert_msg(NULL != strstr(e_, needle), "'%s' lacks '%s'", e_, needle);                  \
        st_options_free(&o_);                                                                      \
    } while (0)

START_TEST(options_have_cart_defaults_and_take_every_option)
{
    st_options_t o;
    char err[512];
    ck_assert_int_eq(OPAL_SUCCESS, PARSE(&o, err, "--json"));
    ck_assert_int_eq(o.repetitions, ST_DEFAULT_REPETITIONS);
    ck_assert_int_eq(o.inflight, ST_DEFAULT_INFLIGHT);
    ck_assert_uint_eq(o.num_sizes, 7);
    ck_assert_ptr_null(o.eps);
    ck_assert_ptr_null(o.group_file);
    ck_assert_str_eq(o.na_info, "btl");
    ck_assert(o.json && !o.verify);
    st_options_free(&o);
    ck_assert_int_eq(OPAL_SUCCESS,
                     PARSE(&o, err, "--group-file", "/tmp/g", "--endpoint", "0-1:0", "-e", "3:1",
                           "--message-size", "(0 b8)", "--repetitions", "7", "--max-inflight-rpcs",
                           "3", "--timeout", "2.5", "--na", "ofi+tcp", "--verify", "--mca",
                           "rpc_base_timeout", "9"));
    ck_assert_str_eq(o.group_file, "/tmp/g");
    ck_assert_uint_eq(o.num_eps, 3);
    ck_assert(1 == o.num_sizes && o.sizes[0].out_bulk && 8 == o.sizes[0].out_size);
    ck_assert(7 == o.repetitions && 3 == o.inflight && 2.5 == o.timeout && o.verify);
    ck_assert_str_eq(o.na_info, "ofi+tcp");
    ck_assert(1 == o.num_mca && 0 == strcmp(o.mca[0].key, "rpc_base_timeout"));
    st_options_free(&o);
}
END_TEST

START_TEST(bad_options_name_the_option_and_the_value)
{
    REFUSED("--repetitions '0'", "--repetitions", "0");
    REFUSED("--repetitions 'ten'", "-r", "ten");
    REFUSED("--max-inflight-rpcs '65537'", "--max-inflight-rpcs", "65537");
    REFUSED("--timeout '-1'", "--timeout", "-1");
    REFUSED("--timeout 'nan'", "--timeout", "nan");
    REFUSED("--endpoint '9:x'", "--endpoint", "0:0", "--endpoint", "9:x");
    REFUSED("--message-size '(1 2 3)'", "-s", "(1 2 3)");
    REFUSED("--na ''", "--na", "");
    REFUSED("--group-file ''", "--group-file", "");
    REFUSED("unexpected argument 'stray'", "stray");
    REFUSED("--endpiont", "--endpiont", "0:0");
}
END_TEST

START_TEST(stats_are_nearest_rank_percentiles)
{
    uint64_t ns[100];
    for (int i = 0; i < 100; ++i) {
        ns[i] = (uint64_t) (100 - i) * 1000; /* 1..100 us, reversed */
    }
    st_stats_t s;
    st_stats(ns, 100, &s);
    ck_assert(100 == s.count && 1.0 == s.min && 50.0 == s.median && 90.0 == s.p90 &&
              99.0 == s.p99 && 100.0 == s.max);
    uint64_t one = 7000;
    st_stats(&one, 1, &s);
    ck_assert(7.0 == s.min && 7.0 == s.median && 7.0 == s.p99 && 7.0 == s.max);
    st_stats(NULL, 0, &s);
    ck_assert(0 == s.count && 0.0 == s.max);
}
END_TEST

/* ----------------------------------------------------------- live runs */

#define MCARUN(run, ...) mcarun_test_mcarun((run), NULL, (const char *const[]){__VA_ARGS__, NULL})

#define EXPECT(run, cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            mcarun_test_dump(run);                                                                 \
            ck_abort_msg("expected: %s", #cond);                                                   \
        }                                                                                          \
    } while (0)

/* Every latency object in the document is ordered; their number. */
static int ordered_latencies(const char *json)
{
    int n = 0;
    for (const char *p = json; NULL != (p = strstr(p, "\"latency_us\": {")); ++p) {
        double v[5];
        int got = sscanf(p,
                         "\"latency_us\": {\"min\": %lf, \"median\": %lf, \"p90\": %lf, "
                         "\"p99\": %lf, \"max\": %lf}",
                         &v[0], &v[1], &v[2], &v[3], &v[4]);
        if (5 != got ||
            !(v[0] > 0 && v[0] <= v[1] && v[1] <= v[2] && v[2] <= v[3] && v[3] <= v[4])) {
            fprintf(stderr, "not ordered: %.120s\n", p);
            return -1;
        }
        ++n;
    }
    return n;
}

/* python3 -m json.tool accepts it too, where python3 is. */
static bool python_accepts(const char *json)
{
    if (0 != system("command -v python3 >/dev/null 2>&1")) {
        return true;
    }
    char path[] = "/tmp/opal_self_test_json_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    size_t len = strlen(json);
    ck_assert_int_eq((ssize_t) len, write(fd, json, len));
    close(fd);
    char command[256];
    snprintf(command, sizeof(command), "python3 -m json.tool %s >/dev/null", path);
    int status = system(command);
    unlink(path);
    return 0 == status;
}

static void check_document(mcarun_run_t *run, const char *const *sizes, int nsizes,
                           const char *const *eps, int neps, const char *reps)
{
    char *why = NULL;
    bool valid = json_check(run->out, &why);
    if (!valid) {
        fprintf(stderr, "invalid JSON: %s\n", why);
    }
    free(why);
    EXPECT(run, valid);
    EXPECT(run, python_accepts(run->out));
    char text[256];
    for (int i = 0; i < nsizes; ++i) {
        snprintf(text, sizeof(text), "{\"size\": \"%s\",", sizes[i]);
        EXPECT(run, 1 == mcarun_test_count(run->out, text));
    }
    for (int e = 0; e < neps; ++e) {
        EXPECT(run, nsizes == mcarun_test_count(run->out, eps[e]));
    }
    /* Each endpoint row (a size's "all" row counts them all). */
    snprintf(text, sizeof(text), "\"repetitions\": %s, \"failed\": 0, \"skipped\": 0,", reps);
    EXPECT(run, nsizes * neps == mcarun_test_count(run->out, text));
    EXPECT(run, nsizes * (neps + 1) == ordered_latencies(run->out));
}

START_TEST(a_job_of_three_ranks_measures_every_endpoint_and_size)
{
    mcarun_run_t run;
    mcarun_test_set_run_limit(300);
    MCARUN(&run, "-np", "3", "--oversubscribe", "--timeout", "240", prog, "--message-size",
           "(0 0) (b1048576 0) (0 b65536)", "--repetitions", "10", "--max-inflight-rpcs", "4",
           "--verify", "--json");
    EXPECT(&run, 0 == run.status);
    static const char *const sizes[] = {"(0 0)", "(b1048576 0)", "(0 b65536)"};
    static const char *const eps[] = {"{\"rank\": 1, \"context\": 0,",
                                      "{\"rank\": 2, \"context\": 0,"};
    check_document(&run, sizes, 3, eps, 2, "10");
    EXPECT(&run, 1 == mcarun_test_count(run.out, "\"group_size\": 3,"));
    /* The "all" row of each size counts both endpoints' RPCs. */
    EXPECT(&run, 3 == mcarun_test_count(run.out, "\"repetitions\": 20, \"failed\": 0"));
    mcarun_test_run_free(&run);
}
END_TEST

/* Several contexts, this rank's own (the loopback), inline sizes past
 * the eager size (the engine's own bulk path) and bulk both ways; the
 * table. */
START_TEST(contexts_loopback_and_large_inline_sizes_in_a_table)
{
    mcarun_run_t run;
    mcarun_test_set_run_limit(300);
    MCARUN(&run, "-np", "2", "--oversubscribe", "--timeout", "240", prog, "-e", "0,1:0-1", "-s",
           "(0 0),(200000 300000),(b4096 b4096)", "-r", "5", "-i", "2", "--verify");
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, NULL != strstr(run.out, "# Size"));
    static const char *const eps[] = {" 0:0 ", " 0:1 ", " 1:0 ", " 1:1 ", " all "};
    for (int e = 0; e < 5; ++e) {
        EXPECT(&run, 3 == mcarun_test_count(run.out, eps[e]));
    }
    EXPECT(&run, 5 == mcarun_test_count(run.out, "(b4096 b4096) "));
    EXPECT(&run, 0 == mcarun_test_count(run.out, "failed"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(sizes_above_the_servers_limit_are_refused_naming_the_sender)
{
    mcarun_run_t run;
    MCARUN(&run, "-np", "2", "--timeout", "120", prog, "-s", "(0 0) (2000 0) (0 b2000)", "-r", "3",
           "--mca", "rpc_base_selftest_max_size", "1000");
    EXPECT(&run, 0 != run.status);
    EXPECT(&run, 2 == mcarun_test_count(run.err, "self-test request from btl://"));
    EXPECT(&run, 2 == mcarun_test_count(run.err, "above rpc_base_selftest_max_size (1000)"));
    /* (0 0) still measured; the others report failures. */
    EXPECT(&run, NULL != strstr(run.out, "# (2000 0) to 1:0: 3 failed"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(an_endpoint_outside_the_group_is_refused_and_the_job_ends)
{
    mcarun_run_t run;
    MCARUN(&run, "-np", "2", "--timeout", "120", prog, "-e", "5:0", "-s", "(0 0)");
    EXPECT(&run, 0 != run.status);
    EXPECT(&run, NULL != strstr(run.err, "--endpoint: rank 5 is not in group primary of 2 ranks"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(bad_command_line_and_help)
{
    mcarun_run_t run;
    MCARUN(&run, "-np", "1", prog, "--message-size", "(0 0 0)");
    EXPECT(&run, 0 != run.status);
    EXPECT(&run, NULL != strstr(run.err, "--message-size '(0 0 0)': a third size"));
    mcarun_test_run_free(&run);
    MCARUN(&run, "-np", "1", prog, "--help");
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, NULL != strstr(run.out, "--max-inflight-rpcs"));
    mcarun_test_run_free(&run);
}
END_TEST

/* Servers started as a job of rpc_group_rank (which knows nothing of the
 * self-test) save the group; opal_self_test attaches from the file alone;
 * rpc_group_client then stops the job. */
START_TEST(a_client_started_alone_measures_a_group_from_its_file)
{
    if (!mcarun_test_component_built("na", "ofi", OPAL_SELF_TEST_PLUGIN_DIRS)) {
        fprintf(stderr, "a_client_started_alone_measures_a_group_from_its_file: no na/ofi\n");
        return;
    }
    static char rank_prog[PATH_MAX], client[PATH_MAX], serve[512], file[256], command[8192];
    snprintf(file, sizeof(file), "/tmp/opal_self_test_%d.grp", (int) getpid());
    unlink(file);
    snprintf(serve, sizeof(serve), "serve=%s", file);
    snprintf(rank_prog, sizeof(rank_prog), "%s", mcarun_test_build_path("test/rpc/rpc_group_rank"));
    snprintf(client, sizeof(client), "%s", mcarun_test_build_path("test/rpc/rpc_group_client"));
    const char *info = "ofi+tcp://127.0.0.1";
    const char *args[] = {"-np",     "3",  "--oversubscribe", "--timeout", "200",
                          rank_prog, info, "knomial",         "2",         serve,
                          NULL};
    mcarun_run_t run;
    mcarun_test_set_run_limit(260);
    mcarun_test_start(&run, NULL, args);
    bool saved = mcarun_test_wait_for(&run, "group saved\n", 1);
    static char out[1 << 16];
    int status = -1;
    if (saved) {
        snprintf(command, sizeof(command),
                 "timeout -k 5 150 %s --group-file %s --na ofi+tcp --endpoint 0-2:0 "
                 "--message-size '(0 0) (b65536 0) (0 b65536)' -r 5 --verify --json 2>&1",
                 prog, file);
        FILE *p = popen(command, "r");
        ck_assert_ptr_nonnull(p);
        size_t len = fread(out, 1, sizeof(out) - 1, p);
        out[len] = '\0';
        status = pclose(p);
        /* The servers stop at the group test's own client. */
        snprintf(command, sizeof(command), "timeout -k 5 100 %s '%s' %s >/dev/null 2>&1", client,
                 info, file);
        (void) system(command);
    }
    mcarun_test_finish(&run);
    unlink(file);
    if (!saved || 0 != status) {
        mcarun_test_dump(&run);
        fprintf(stderr, "opal_self_test: %s\n", out);
    }
    ck_assert_msg(saved, "no rank saved the group file");
    ck_assert_msg(0 == status, "opal_self_test exited %d", status);
    mcarun_run_t doc = {.out = out};
    static const char *const sizes[] = {"(0 0)", "(b65536 0)", "(0 b65536)"};
    static const char *const eps[] = {"{\"rank\": 0, \"context\": 0,",
                                      "{\"rank\": 1, \"context\": 0,",
                                      "{\"rank\": 2, \"context\": 0,"};
    check_document(&doc, sizes, 3, eps, 3, "5");
    ck_assert_int_eq(run.status, 0);
    mcarun_test_run_free(&run);
}
END_TEST

int main(void)
{
    setenv("OPAL_MCA_mca_base_component_path", OPAL_SELF_TEST_PLUGIN_DIRS, 1);
    snprintf(prog, sizeof(prog), "%s",
             mcarun_test_build_path("tools/opal_self_test/opal_self_test"));
    Suite *s = suite_create("opal_self_test");
    OPAL_TEST_ADD(s, message_sizes_read_pairs_with_bulk_prefixes);
    OPAL_TEST_ADD(s, message_sizes_refuse_bad_lists_naming_what_is_wrong);
    OPAL_TEST_ADD(s, message_size_labels_read_back_as_written);
    OPAL_TEST_ADD(s, endpoints_expand_ranges_sorted_and_once_each);
    OPAL_TEST_ADD(s, endpoints_refuse_bad_values_naming_what_is_wrong);
    OPAL_TEST_ADD(s, options_have_cart_defaults_and_take_every_option);
    OPAL_TEST_ADD(s, bad_options_name_the_option_and_the_value);
    OPAL_TEST_ADD(s, stats_are_nearest_rank_percentiles);
    OPAL_TEST_ADD(s, bad_command_line_and_help);
    OPAL_TEST_ADD(s, a_job_of_three_ranks_measures_every_endpoint_and_size);
    OPAL_TEST_ADD(s, contexts_loopback_and_large_inline_sizes_in_a_table);
    OPAL_TEST_ADD(s, sizes_above_the_servers_limit_are_refused_naming_the_sender);
    OPAL_TEST_ADD(s, an_endpoint_outside_the_group_is_refused_and_the_job_ends);
    OPAL_TEST_ADD(s, a_client_started_alone_measures_a_group_from_its_file);
    return opal_test_run(s);
}
