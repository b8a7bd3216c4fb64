/*
 * Group files and membership as units, in one process without a job: a
 * valid file attaches as a group named by it; members on this host whose
 * process is gone are dead, and a file whose members are all gone is
 * stale; malformed files are refused naming the file and the line; the
 * membership version increases on each change of state, and only then.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opal/mca/rpc/base/rpc_base_group_file.h"
#include "opal/mca/rpc/rpc.h"
#include "opal/mca/rpc/rpc_group.h"
#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

static char path[256];
static char host[256];

static void setup(void)
{
    ck_assert_int_eq(opal_init_util(NULL, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_init(NULL, false), OPAL_SUCCESS);
    snprintf(path, sizeof(path), "/tmp/rpc_group_file_test_%d.grp", (int) getpid());
    gethostname(host, sizeof(host) - 1);
}

static void teardown(void)
{
    unlink(path);
    ck_assert_int_eq(opal_rpc_finalize(), OPAL_SUCCESS);
    opal_finalize_util();
}

/* A pid that no process has any more (a child, reaped). */
static long gone_pid(void)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (0 == pid) {
        _exit(0);
    }
    ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
    return (long) pid;
}

static void write_group(const char *name, uint64_t version, const long *pids, int n)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "# test\nopal_rpc_group 1\nname %s\nversion %llu\nsize %d\n", name,
            (unsigned long long) version, n);
    for (int r = 0; r < n; ++r) {
        fprintf(f, "%d %ld %s ofi+tcp://127.0.0.1:%d\n", r, pids[r], host, 40000 + r);
    }
    fclose(f);
}

START_TEST(a_valid_file_attaches_as_the_group_it_names)
{
    setup();
    long pids[3] = {getpid(), getpid(), getpid()};
    write_group("servers", 7, pids, 3);
    opal_rpc_group_t *g = NULL, *again = NULL;
    ck_assert_int_eq(opal_rpc_group_attach(path, &g), OPAL_SUCCESS);
    ck_assert_str_eq(opal_rpc_group_name(g), "servers");
    ck_assert_uint_eq(opal_rpc_group_size(g), 3);
    ck_assert_uint_eq(opal_rpc_group_version(g), 7);
    uint32_t rank;
    ck_assert_int_eq(opal_rpc_group_rank(g, &rank), OPAL_ERR_NOT_FOUND);
    ck_assert_ptr_eq(opal_rpc_group_lookup("servers"), g);
    opal_rpc_member_state_t s;
    ck_assert_int_eq(opal_rpc_group_member_state(g, 2, &s), OPAL_SUCCESS);
    ck_assert_int_eq(s, OPAL_RPC_MEMBER_ALIVE);
    /* One group per name. */
    ck_assert_int_eq(opal_rpc_group_attach(path, &again), OPAL_ERR_EXISTS);
    ck_assert_int_eq(opal_rpc_group_destroy(g), OPAL_SUCCESS);
    ck_assert_ptr_null(opal_rpc_group_lookup("servers"));
    teardown();
}
END_TEST

START_TEST(a_member_whose_process_is_gone_is_dead)
{
    setup();
    long pids[2] = {getpid(), gone_pid()};
    write_group("half", 1, pids, 2);
    opal_rpc_group_t *g = NULL;
    ck_assert_int_eq(opal_rpc_group_attach(path, &g), OPAL_SUCCESS);
    opal_rpc_member_state_t s;
    ck_assert_int_eq(opal_rpc_group_member_state(g, 0, &s), OPAL_SUCCESS);
    ck_assert_int_eq(s, OPAL_RPC_MEMBER_ALIVE);
    ck_assert_int_eq(opal_rpc_group_member_state(g, 1, &s), OPAL_SUCCESS);
    ck_assert_int_eq(s, OPAL_RPC_MEMBER_DEAD);
    ck_assert_int_eq(opal_rpc_group_destroy(g), OPAL_SUCCESS);
    teardown();
}
END_TEST

START_TEST(a_file_whose_members_are_all_gone_is_stale)
{
    setup();
    long pids[2] = {gone_pid(), gone_pid()};
    write_group("old", 1, pids, 2);
    opal_rpc_group_t *g = NULL;
    ck_assert_int_eq(opal_rpc_group_attach(path, &g), OPAL_ERR_NOT_FOUND);
    ck_assert_ptr_null(opal_rpc_group_lookup("old"));
    teardown();
}
END_TEST

START_TEST(a_missing_file_is_not_found)
{
    setup();
    opal_rpc_group_t *g = NULL;
    ck_assert_int_eq(opal_rpc_group_attach("/nonexistent/dir/g.grp", &g), OPAL_ERR_NOT_FOUND);
    teardown();
}
END_TEST

START_TEST(a_malformed_file_is_refused_naming_the_file_and_the_line)
{
    static const struct {
        const char *text;
        const char *where;
    } cases[] = {
        {"opal_rpc_group 2\n", "f:1: not a group file"},
        {"\n# c\nopal_rpc_group 1\nname a/b\n", "f:4: expected 'name"},
        {"opal_rpc_group 1\nname g\nversion x\n", "f:3: expected 'version"},
        {"opal_rpc_group 1\nname g\nversion 1\nsize 0\n", "f:4: expected 'size"},
        {"opal_rpc_group 1\nname g\nversion 1\nsize 2\n0 7 h u\n", "f:5: the file ends early"},
        {"opal_rpc_group 1\nname g\nversion 1\nsize 2\n1 7 h u\n0 7 h u\n", "f:5: rank '1'"},
        {"opal_rpc_group 1\nname g\nversion 1\nsize 1\n0 0 h u\n", "f:5: rank 0: bad pid"},
        {"opal_rpc_group 1\nname g\nversion 1\nsize 1\n0 7 h\n", "f:5: expected '<rank>"},
        {"opal_rpc_group 1\nname g\nversion 1\nsize 1\n0 7 h u\n\n1 8 h u\n", "f:7: a line after"},
        {"opal_rpc_group 1\nname g\nversion 1\nsize 1000000\n0 7 h u\n", "f:4: size 1000000"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        rpc_group_file_t file;
        char why[512] = "";
        int rc = opal_rpc_base_group_file_parse(cases[i].text, strlen(cases[i].text), "f", &file,
                                                why, sizeof(why));
        ck_assert_int_eq(rc, OPAL_ERR_PARSE);
        ck_assert_msg(0 == strncmp(why, cases[i].where, strlen(cases[i].where)),
                      "case %zu: '%s', expected '%s...'", i, why, cases[i].where);
    }
    /* Through attach: the same error. */
    setup();
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(cases[4].text, f);
    fclose(f);
    opal_rpc_group_t *g = NULL;
    ck_assert_int_eq(opal_rpc_group_attach(path, &g), OPAL_ERR_PARSE);
    teardown();
}
END_TEST

START_TEST(the_version_increases_on_each_change_of_state_only)
{
    setup();
    long pids[3] = {getpid(), getpid(), getpid()};
    write_group("members", 1, pids, 3);
    opal_rpc_group_t *g = NULL;
    ck_assert_int_eq(opal_rpc_group_attach(path, &g), OPAL_SUCCESS);
    ck_assert_uint_eq(opal_rpc_group_version(g), 1);
    ck_assert_int_eq(opal_rpc_group_member_set_state(g, 1, OPAL_RPC_MEMBER_SUSPECT), OPAL_SUCCESS);
    ck_assert_uint_eq(opal_rpc_group_version(g), 2);
    ck_assert_int_eq(opal_rpc_group_member_set_state(g, 1, OPAL_RPC_MEMBER_SUSPECT), OPAL_SUCCESS);
    ck_assert_uint_eq(opal_rpc_group_version(g), 2);
    ck_assert_int_eq(opal_rpc_group_member_set_state(g, 1, OPAL_RPC_MEMBER_DEAD), OPAL_SUCCESS);
    ck_assert_uint_eq(opal_rpc_group_version(g), 3);
    ck_assert_int_eq(opal_rpc_group_member_set_state(g, 3, OPAL_RPC_MEMBER_DEAD),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_rpc_group_member_set_state(g, 0, (opal_rpc_member_state_t) 9),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_uint_eq(opal_rpc_group_version(g), 3);
    ck_assert_int_eq(opal_rpc_group_destroy(g), OPAL_SUCCESS);
    teardown();
}
END_TEST

START_TEST(there_is_no_primary_group_outside_a_job)
{
    setup();
    opal_rpc_group_t *g = NULL;
    ck_assert_int_eq(opal_rpc_group_primary(&g), OPAL_ERR_NOT_AVAILABLE);
    uint32_t ranks[1] = {0};
    ck_assert_int_eq(opal_rpc_group_create("sub", ranks, 1, &g), OPAL_ERR_NOT_AVAILABLE);
    ck_assert_int_eq(opal_rpc_group_create("bad name", ranks, 1, &g), OPAL_ERR_BAD_PARAM);
    teardown();
}
END_TEST

int main(void)
{
    setenv("OPAL_MCA_mca_base_component_path", RPC_TEST_PLUGIN_DIRS, 1);
    Suite *s = suite_create("rpc_group_file");
    OPAL_TEST_ADD(s, a_valid_file_attaches_as_the_group_it_names);
    OPAL_TEST_ADD(s, a_member_whose_process_is_gone_is_dead);
    OPAL_TEST_ADD(s, a_file_whose_members_are_all_gone_is_stale);
    OPAL_TEST_ADD(s, a_missing_file_is_not_found);
    OPAL_TEST_ADD(s, a_malformed_file_is_refused_naming_the_file_and_the_line);
    OPAL_TEST_ADD(s, the_version_increases_on_each_change_of_state_only);
    OPAL_TEST_ADD(s, there_is_no_primary_group_outside_a_job);
    return opal_test_run(s);
}
