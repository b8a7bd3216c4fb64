/* opal_proc: the job's table of processes over a fake runtime. This
 * process publishes its record at init; peers are built from theirs on
 * first lookup, checked field by field, and cached. */
#include "opal/opal_config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/runtime/opal_init.h"
#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_proc_internal.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "test/orte/fake_rte.h"
#include "test/support/opal_test.h"

#define ALL (OPAL_PROC_ON_NODE | OPAL_PROC_ON_PACKAGE | OPAL_PROC_ON_NUMA)

static opal_proc_job_info_t job(uint32_t rank, uint32_t size)
{
    opal_proc_job_info_t info = {
        .my_name = {.jobid = 42, .vpid = rank},
        .size = size,
        .local_rank = 0,
        .local_size = 1,
        .node_id = 3,
        .hostname = "h3",
        .session_dir = "/tmp/nowhere",
        .lookup_timeout_ns = 12345,
    };
    return info;
}

static void setup(void)
{
    ck_assert_int_eq(opal_init_util(NULL, NULL), OPAL_SUCCESS);
    fake_rte_reset();
}

static void setup_with_runtime(void)
{
    setup();
    ck_assert_int_eq(opal_rte_install(&fake_rte_hooks), OPAL_SUCCESS);
}

static void teardown(void)
{
    opal_proc_finalize();
    if (opal_rte_installed()) {
        ck_assert_int_eq(opal_rte_uninstall(), OPAL_SUCCESS);
    }
    fake_rte_reset();
    ck_assert_int_eq(opal_finalize_util(), OPAL_SUCCESS);
}

static void store_record(uint32_t rank, const char *record)
{
    fake_rte_store(rank, OPAL_PROC_MODEX_KEY, record, strlen(record));
}

START_TEST(lookups_before_init_are_not_initialized)
{
    opal_proc_t *proc = (opal_proc_t *) 1;
    ck_assert_ptr_null(opal_proc_local_get());
    ck_assert_ptr_null(opal_proc_job_info());
    ck_assert_int_eq(opal_proc_for_rank(0, &proc), OPAL_ERR_NOT_INITIALIZED);
    ck_assert_ptr_null(proc);
    ck_assert_int_eq(opal_proc_for_rank(0, NULL), OPAL_ERR_BAD_PARAM);
}
END_TEST

START_TEST(init_without_runtime_fails_and_leaves_nothing)
{
    opal_proc_job_info_t info = job(0, 2);
    ck_assert_int_eq(opal_proc_init(&info), OPAL_ERR_NOT_INITIALIZED);
    ck_assert_ptr_null(opal_proc_local_get());
    ck_assert_ptr_null(opal_proc_job_info());
}
END_TEST

START_TEST(init_refuses_an_inconsistent_job)
{
    opal_proc_job_info_t info = job(2, 2);
    ck_assert_int_eq(opal_proc_init(&info), OPAL_ERR_BAD_PARAM);
    info = job(0, 0);
    ck_assert_int_eq(opal_proc_init(&info), OPAL_ERR_BAD_PARAM);
    info = job(0, 2);
    info.local_rank = 1;
    ck_assert_int_eq(opal_proc_init(&info), OPAL_ERR_BAD_PARAM);
    info = job(0, 2);
    info.local_size = 3;
    ck_assert_int_eq(opal_proc_init(&info), OPAL_ERR_BAD_PARAM);
    info = job(0, 2);
    info.hostname = NULL;
    ck_assert_int_eq(opal_proc_init(&info), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_proc_init(NULL), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(fake_rte_calls.put, 0);
    ck_assert_ptr_null(opal_proc_local_get());
}
END_TEST

START_TEST(init_publishes_this_process_and_commits)
{
    fake_rte_set_self(1);
    opal_proc_job_info_t info = job(1, 4);
    ck_assert_int_eq(opal_proc_init(&info), OPAL_SUCCESS);
    ck_assert_int_eq(fake_rte_calls.put, 1);
    ck_assert_int_eq(fake_rte_calls.commit, 1);
    ck_assert_int_eq(fake_rte_calls.last_scope, OPAL_MODEX_SCOPE_GLOBAL);

    char *binding = NULL;
    ck_assert_int_eq(opal_proc_get_binding(&binding), OPAL_SUCCESS);
    char expected[128];
    snprintf(expected, sizeof(expected), "node=3;host=h3;cpuset=%s",
             NULL == binding ? "" : binding);
    free(binding);
    size_t size = 0;
    const char *record = fake_rte_lookup(1, OPAL_PROC_MODEX_KEY, &size);
    ck_assert_ptr_nonnull(record);
    ck_assert_uint_eq(size, strlen(expected));
    ck_assert_mem_eq(record, expected, size);
}
END_TEST

START_TEST(second_init_is_refused)
{
    opal_proc_job_info_t info = job(0, 1);
    ck_assert_int_eq(opal_proc_init(&info), OPAL_SUCCESS);
    ck_assert_int_eq(opal_proc_init(&info), OPAL_ERR_EXISTS);
    ck_assert_int_eq(fake_rte_calls.put, 1);
}
END_TEST

START_TEST(local_proc_describes_this_process)
{
    opal_proc_job_info_t info = job(1, 4);
    ck_assert_int_eq(opal_proc_init(&info), OPAL_SUCCESS);
    opal_proc_t *me = opal_proc_local_get();
    ck_assert_ptr_nonnull(me);
    ck_assert_uint_eq(me->proc_name.jobid, 42);
    ck_assert_uint_eq(me->proc_name.vpid, 1);
    ck_assert_uint_eq(me->proc_node_id, 3);
    ck_assert_str_eq(me->proc_hostname, "h3");
    ck_assert_uint_eq(me->proc_locality, ALL);
    opal_proc_t *proc = NULL;
    ck_assert_int_eq(opal_proc_for_rank(1, &proc), OPAL_SUCCESS);
    ck_assert_ptr_eq(proc, me);
    ck_assert_int_eq(fake_rte_calls.get, 0);

    const opal_proc_job_info_t *copy = opal_proc_job_info();
    ck_assert_ptr_nonnull(copy);
    ck_assert_uint_eq(copy->size, 4);
    ck_assert_str_eq(copy->session_dir, "/tmp/nowhere");
    /* The job's strings are opal's copies. */
    ck_assert_ptr_ne(copy->hostname, info.hostname);
}
END_TEST

START_TEST(peer_on_this_node_is_on_node)
{
    opal_proc_job_info_t info = job(0, 3);
    ck_assert_int_eq(opal_proc_init(&info), OPAL_SUCCESS);
    store_record(2, "node=3;host=h3;cpuset=");
    opal_proc_t *peer = NULL;
    ck_assert_int_eq(opal_proc_for_rank(2, &peer), OPAL_SUCCESS);
    ck_assert_uint_eq(peer->proc_name.jobid, 42);
    ck_assert_uint_eq(peer->proc_name.vpid, 2);
    ck_assert_uint_eq(peer->proc_node_id, 3);
    ck_assert_str_eq(peer->proc_hostname, "h3");
    ck_assert_ptr_null(peer->proc_cpuset);
    ck_assert_uint_eq(peer->proc_locality, OPAL_PROC_ON_NODE);
    ck_assert_uint_eq(fake_rte_calls.last_peer, 2);
    ck_assert_int_eq(fake_rte_calls.last_timeout_ns, 12345);
}
END_TEST

START_TEST(peer_on_another_node_is_remote)
{
    opal_proc_job_info_t info = job(0, 3);
    ck_assert_int_eq(opal_proc_init(&info), OPAL_SUCCESS);
    store_record(1, "node=4;host=h4.example.org;cpuset=0-3");
    opal_proc_t *peer = NULL;
    ck_assert_int_eq(opal_proc_for_rank(1, &peer), OPAL_SUCCESS);
    ck_assert_uint_eq(peer->proc_node_id, 4);
    ck_assert_str_eq(peer->proc_hostname, "h4.example.org");
    ck_assert_str_eq(peer->proc_cpuset, "0-3");
    ck_assert_uint_eq(peer->proc_locality, OPAL_PROC_LOCALITY_NONE);
}
END_TEST

START_TEST(peer_is_looked_up_once)
{
    opal_proc_job_info_t info = job(0, 2);
    ck_assert_int_eq(opal_proc_init(&info), OPAL_SUCCESS);
    store_record(1, "node=3;host=h3;cpuset=");
    opal_proc_t *first = NULL, *second = NULL;
    ck_assert_int_eq(opal_proc_for_rank(1, &first), OPAL_SUCCESS);
    ck_assert_int_eq(opal_proc_for_rank(1, &second), OPAL_SUCCESS);
    ck_assert_ptr_eq(first, second);
    ck_assert_int_eq(fake_rte_calls.get, 1);
}
END_TEST

START_TEST(rank_outside_the_job_is_refused)
{
    opal_proc_job_info_t info = job(0, 2);
    ck_assert_int_eq(opal_proc_init(&info), OPAL_SUCCESS);
    opal_proc_t *proc = NULL;
    ck_assert_int_eq(opal_proc_for_rank(2, &proc), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_proc_for_rank(UINT32_MAX, &proc), OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_null(proc);
    ck_assert_int_eq(fake_rte_calls.get, 0);
}
END_TEST

START_TEST(missing_record_error_comes_back_and_is_not_cached)
{
    opal_proc_job_info_t info = job(0, 2);
    ck_assert_int_eq(opal_proc_init(&info), OPAL_SUCCESS);
    opal_proc_t *proc = NULL;
    ck_assert_int_eq(opal_proc_for_rank(1, &proc), OPAL_ERR_NOT_FOUND);
    fake_rte_fail_gets(OPAL_ERR_TIMEOUT);
    ck_assert_int_eq(opal_proc_for_rank(1, &proc), OPAL_ERR_TIMEOUT);
    fake_rte_fail_gets(0);
    store_record(1, "node=0;host=x;cpuset=");
    ck_assert_int_eq(opal_proc_for_rank(1, &proc), OPAL_SUCCESS);
    ck_assert_ptr_nonnull(proc);
}
END_TEST

START_TEST(malformed_records_are_refused)
{
    opal_proc_job_info_t info = job(0, 2);
    ck_assert_int_eq(opal_proc_init(&info), OPAL_SUCCESS);
    const char *bad[] = {
        "",
        "node=;host=a;cpuset=",
        "node=x;host=a;cpuset=",
        "node=-1;host=a;cpuset=",
        "node=4294967296;host=a;cpuset=",
        "node=12345678901;host=a;cpuset=",
        "host=a;node=1;cpuset=",
        "node=1;host=;cpuset=",
        "node=1;host=a",
        "node=1;host=a;cpuset=0-1;extra=1",
        "node=1;host=a;cpuset=abc",
        "node=1;host=a;cpu=0",
        "garbage",
    };
    opal_proc_t *proc = NULL;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        store_record(1, bad[i]);
        ck_assert_msg(OPAL_ERR_PROTOCOL == opal_proc_for_rank(1, &proc), "accepted \"%s\"", bad[i]);
        ck_assert_ptr_null(proc);
    }
    /* A NUL inside the value. */
    fake_rte_store(1, OPAL_PROC_MODEX_KEY, "node=1;host=a\0b;cpuset=", 23);
    ck_assert_int_eq(opal_proc_for_rank(1, &proc), OPAL_ERR_PROTOCOL);
    /* The largest node id and a long host name are fine. */
    char good[400];
    char host[256];
    memset(host, 'h', 255);
    host[255] = '\0';
    snprintf(good, sizeof(good), "node=4294967295;host=%s;cpuset=", host);
    store_record(1, good);
    ck_assert_int_eq(opal_proc_for_rank(1, &proc), OPAL_SUCCESS);
    ck_assert_uint_eq(proc->proc_node_id, UINT32_MAX);
    ck_assert_str_eq(proc->proc_hostname, host);
}
END_TEST

START_TEST(decoding_refuses_a_host_name_too_long)
{
    char record[400];
    char host[257];
    memset(host, 'h', 256);
    host[256] = '\0';
    snprintf(record, sizeof(record), "node=1;host=%s;cpuset=", host);
    opal_proc_t *proc = OBJ_NEW(opal_proc_t);
    ck_assert_int_eq(opal_proc_decode_record(1, record, strlen(record), proc), OPAL_ERR_PROTOCOL);
    ck_assert_int_eq(opal_proc_decode_record(1, NULL, 0, proc), OPAL_ERR_PROTOCOL);
    ck_assert_ptr_null(proc->proc_hostname);
    OBJ_RELEASE(proc);
}
END_TEST

START_TEST(finalize_releases_the_table_but_not_a_retained_proc)
{
    opal_proc_job_info_t info = job(0, 2);
    ck_assert_int_eq(opal_proc_init(&info), OPAL_SUCCESS);
    store_record(1, "node=3;host=kept;cpuset=");
    opal_proc_t *peer = NULL;
    ck_assert_int_eq(opal_proc_for_rank(1, &peer), OPAL_SUCCESS);
    OBJ_RETAIN(peer);
    opal_proc_finalize();
    ck_assert_ptr_null(opal_proc_local_get());
    ck_assert_str_eq(peer->proc_hostname, "kept");
    OBJ_RELEASE(peer);
    /* And the table starts again. */
    ck_assert_int_eq(opal_proc_init(&info), OPAL_SUCCESS);
    ck_assert_ptr_nonnull(opal_proc_local_get());
}
END_TEST

#define LOOKUP_THREADS 4
#define LOOKUP_RANKS   16

typedef struct lookup_arg_t {
    int thread;
    opal_proc_t *found[LOOKUP_RANKS];
    int errors;
} lookup_arg_t;

static void *look_up_every_rank(void *varg)
{
    lookup_arg_t *arg = varg;
    /* Each thread walks the ranks from another start, so that threads
     * race for the same peers in different orders. */
    for (int i = 0; i < LOOKUP_RANKS; ++i) {
        int rank = (i + arg->thread * 5) % LOOKUP_RANKS;
        if (OPAL_SUCCESS != opal_proc_for_rank((uint32_t) rank, &arg->found[rank])) {
            ++arg->errors;
        }
    }
    return NULL;
}

START_TEST(concurrent_lookups_agree_on_one_proc_per_peer)
{
    opal_proc_job_info_t info = job(0, LOOKUP_RANKS);
    ck_assert_int_eq(opal_proc_init(&info), OPAL_SUCCESS);
    for (uint32_t r = 1; r < LOOKUP_RANKS; ++r) {
        char record[64];
        snprintf(record, sizeof(record), "node=%u;host=h%u;cpuset=", r % 2 ? 3u : 4u, r);
        store_record(r, record);
    }
    lookup_arg_t args[LOOKUP_THREADS];
    pthread_t threads[LOOKUP_THREADS];
    for (int t = 0; t < LOOKUP_THREADS; ++t) {
        memset(&args[t], 0, sizeof(args[t]));
        args[t].thread = t;
        ck_assert_int_eq(pthread_create(&threads[t], NULL, look_up_every_rank, &args[t]), 0);
    }
    for (int t = 0; t < LOOKUP_THREADS; ++t) {
        ck_assert_int_eq(pthread_join(threads[t], NULL), 0);
        ck_assert_int_eq(args[t].errors, 0);
    }
    for (int r = 0; r < LOOKUP_RANKS; ++r) {
        opal_proc_t *proc = args[0].found[r];
        ck_assert_ptr_nonnull(proc);
        ck_assert_uint_eq(proc->proc_name.vpid, (uint32_t) r);
        for (int t = 1; t < LOOKUP_THREADS; ++t) {
            ck_assert_ptr_eq(args[t].found[r], proc);
        }
        uint16_t expected = 0 == r ? ALL : r % 2 ? OPAL_PROC_ON_NODE : OPAL_PROC_LOCALITY_NONE;
        ck_assert_uint_eq(proc->proc_locality, expected);
    }
}
END_TEST

START_TEST(names_print_as_job_and_rank)
{
    opal_process_name_t name = {.jobid = 7, .vpid = 12};
    ck_assert_str_eq(opal_proc_name_string(&name), "[7,12]");
    ck_assert_str_eq(opal_proc_name_string(NULL), "[null]");
}
END_TEST

static Suite *proc_suite(void)
{
    Suite *s = suite_create("opal_proc");
    TCase *tc;
#define ADD(fn, set_up)                                                                            \
    do {                                                                                           \
        tc = tcase_create(#fn);                                                                    \
        tcase_add_checked_fixture(tc, set_up, teardown);                                           \
        tcase_add_test(tc, fn);                                                                    \
        suite_add_tcase(s, tc);                                                                    \
    } while (0)
    ADD(lookups_before_init_are_not_initialized, setup);
    ADD(init_without_runtime_fails_and_leaves_nothing, setup);
    ADD(init_refuses_an_inconsistent_job, setup_with_runtime);
    ADD(init_publishes_this_process_and_commits, setup_with_runtime);
    ADD(second_init_is_refused, setup_with_runtime);
    ADD(local_proc_describes_this_process, setup_with_runtime);
    ADD(peer_on_this_node_is_on_node, setup_with_runtime);
    ADD(peer_on_another_node_is_remote, setup_with_runtime);
    ADD(peer_is_looked_up_once, setup_with_runtime);
    ADD(rank_outside_the_job_is_refused, setup_with_runtime);
    ADD(missing_record_error_comes_back_and_is_not_cached, setup_with_runtime);
    ADD(malformed_records_are_refused, setup_with_runtime);
    ADD(decoding_refuses_a_host_name_too_long, setup);
    ADD(finalize_releases_the_table_but_not_a_retained_proc, setup_with_runtime);
    ADD(concurrent_lookups_agree_on_one_proc_per_peer, setup_with_runtime);
    ADD(names_print_as_job_and_rank, setup);
#undef ADD
    return s;
}

int main(void)
{
    return opal_test_run(proc_suite());
}
