/* orte_init in a process started alone: ess/singleton makes it rank 0 of
 * 1 with a private session directory; its modex answers itself and its
 * fences return at once. The environment is cleared of every launcher's
 * variables first, so the test means the same under mcarun or mpirun. */
#include "opal/opal_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "orte/runtime/orte_init.h"
#include "test/orte/orte_test_support.h"
#include "test/support/opal_test.h"

static void setup(void)
{
    orte_test_forget_launchers();
    unsetenv("OPAL_MCA_ess");
}

static void teardown(void)
{
    while (orte_initialized()) {
        ck_assert_int_eq(orte_finalize(), OPAL_SUCCESS);
    }
    unsetenv("OPAL_MCA_ess");
}

START_TEST(process_started_alone_is_rank_0_of_1)
{
    ck_assert_int_eq(orte_init(NULL, NULL), OPAL_SUCCESS);
    ck_assert_str_eq(orte_process_info.ess_name, "singleton");
    ck_assert_uint_eq(orte_process_info.my_name.vpid, 0);
    ck_assert_uint_eq(orte_process_info.size, 1);
    ck_assert_uint_eq(orte_process_info.local_rank, 0);
    ck_assert_uint_eq(orte_process_info.local_size, 1);
    ck_assert_uint_eq(orte_process_info.node_id, 0);
    char host[256];
    ck_assert_int_eq(gethostname(host, sizeof(host)), 0);
    ck_assert_str_eq(orte_process_info.hostname, host);
    ck_assert_str_eq(opal_rte_name(), "ess/singleton");
}
END_TEST

START_TEST(session_directory_is_private_and_removed_at_finalize)
{
    ck_assert_int_eq(orte_init(NULL, NULL), OPAL_SUCCESS);
    char session[ORTE_PATH_MAX];
    snprintf(session, sizeof(session), "%s", orte_process_info.session_dir);
    const char *tmp = getenv("TMPDIR");
    char prefix[ORTE_PATH_MAX];
    snprintf(prefix, sizeof(prefix), "%s/opal-mca.%u/",
             NULL == tmp || '\0' == tmp[0] ? "/tmp" : tmp, (unsigned) geteuid());
    ck_assert_msg(0 == strncmp(session, prefix, strlen(prefix)), "%s is not under %s", session,
                  prefix);
    struct stat st;
    ck_assert_int_eq(stat(session, &st), 0);
    ck_assert(S_ISDIR(st.st_mode));
    ck_assert_uint_eq(st.st_mode & 0777, 0700);
    /* Whatever the job left there goes with it. */
    char file[ORTE_PATH_MAX + 16];
    snprintf(file, sizeof(file), "%s/left-over", session);
    FILE *f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_int_eq(orte_finalize(), OPAL_SUCCESS);
    ck_assert_int_eq(stat(session, &st), -1);
    ck_assert_int_eq(errno, ENOENT);
}
END_TEST

START_TEST(modex_to_itself_returns_what_was_put)
{
    ck_assert_int_eq(orte_init(NULL, NULL), OPAL_SUCCESS);
    size_t sizes[] = {0, 1, 4096, 1024 * 1024};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
        unsigned char *data = malloc(sizes[i] + 1);
        ck_assert_ptr_nonnull(data);
        for (size_t b = 0; b < sizes[i]; ++b) {
            data[b] = (unsigned char) (b * 31 + i);
        }
        char key[32];
        snprintf(key, sizeof(key), "test.key%zu", i);
        ck_assert_int_eq(opal_modex_send(key, data, sizes[i], OPAL_MODEX_SCOPE_GLOBAL),
                         OPAL_SUCCESS);
        ck_assert_int_eq(opal_fence(0 == i % 2), OPAL_SUCCESS);
        void *value = NULL;
        size_t size = 99;
        ck_assert_int_eq(opal_modex_recv(0, key, &value, &size, OPAL_MODEX_WAIT_FOREVER),
                         OPAL_SUCCESS);
        ck_assert_uint_eq(size, sizes[i]);
        if (0 != size) {
            ck_assert_mem_eq(value, data, size);
        }
        free(value);
        free(data);
    }
}
END_TEST

START_TEST(every_scope_is_readable_by_itself)
{
    ck_assert_int_eq(orte_init(NULL, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(opal_modex_send("l", "L", 1, OPAL_MODEX_SCOPE_LOCAL), OPAL_SUCCESS);
    ck_assert_int_eq(opal_modex_send("r", "R", 1, OPAL_MODEX_SCOPE_REMOTE), OPAL_SUCCESS);
    ck_assert_int_eq(opal_modex_commit(), OPAL_SUCCESS);
    void *value = NULL;
    size_t size = 0;
    ck_assert_int_eq(opal_modex_recv(0, "l", &value, &size, 0), OPAL_SUCCESS);
    ck_assert_mem_eq(value, "L", 1);
    free(value);
    ck_assert_int_eq(opal_modex_recv(0, "r", &value, &size, 0), OPAL_SUCCESS);
    ck_assert_mem_eq(value, "R", 1);
    free(value);
}
END_TEST

START_TEST(a_second_put_replaces_the_value)
{
    ck_assert_int_eq(orte_init(NULL, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(opal_modex_send("k", "first", 5, OPAL_MODEX_SCOPE_GLOBAL), OPAL_SUCCESS);
    ck_assert_int_eq(opal_modex_send("k", "2nd", 3, OPAL_MODEX_SCOPE_GLOBAL), OPAL_SUCCESS);
    void *value = NULL;
    size_t size = 0;
    ck_assert_int_eq(opal_modex_recv(0, "k", &value, &size, 0), OPAL_SUCCESS);
    ck_assert_uint_eq(size, 3);
    ck_assert_mem_eq(value, "2nd", 3);
    free(value);
}
END_TEST

START_TEST(missing_key_is_not_found_without_waiting)
{
    ck_assert_int_eq(orte_init(NULL, NULL), OPAL_SUCCESS);
    void *value = (void *) 1;
    size_t size = 5;
    /* Even "forever": nobody else could ever publish it. */
    ck_assert_int_eq(opal_modex_recv(0, "never.put", &value, &size, OPAL_MODEX_WAIT_FOREVER),
                     OPAL_ERR_NOT_FOUND);
    ck_assert_ptr_null(value);
    ck_assert_uint_eq(size, 0);
}
END_TEST

START_TEST(another_rank_does_not_exist)
{
    ck_assert_int_eq(orte_init(NULL, NULL), OPAL_SUCCESS);
    void *value = NULL;
    size_t size = 0;
    ck_assert_int_eq(opal_modex_recv(1, "k", &value, &size, 0), OPAL_ERR_BAD_PARAM);
    opal_proc_t *proc = NULL;
    ck_assert_int_eq(opal_proc_for_rank(1, &proc), OPAL_ERR_BAD_PARAM);
}
END_TEST

START_TEST(fences_return_at_once)
{
    ck_assert_int_eq(orte_init(NULL, NULL), OPAL_SUCCESS);
    for (int i = 0; i < 100; ++i) {
        ck_assert_int_eq(opal_fence(i % 2), OPAL_SUCCESS);
    }
}
END_TEST

START_TEST(opal_sees_the_job)
{
    ck_assert_int_eq(orte_init(NULL, NULL), OPAL_SUCCESS);
    opal_proc_t *me = opal_proc_local_get();
    ck_assert_ptr_nonnull(me);
    ck_assert_uint_eq(me->proc_name.jobid, orte_process_info.my_name.jobid);
    ck_assert_uint_eq(me->proc_name.vpid, 0);
    ck_assert_str_eq(me->proc_hostname, orte_process_info.hostname);
    opal_proc_t *proc = NULL;
    ck_assert_int_eq(opal_proc_for_rank(0, &proc), OPAL_SUCCESS);
    ck_assert_ptr_eq(proc, me);
    const opal_proc_job_info_t *job = opal_proc_job_info();
    ck_assert_ptr_nonnull(job);
    ck_assert_str_eq(job->session_dir, orte_process_info.session_dir);
    /* Its own record is there for whoever asks. */
    void *value = NULL;
    size_t size = 0;
    ck_assert_int_eq(opal_modex_recv(0, OPAL_PROC_MODEX_KEY, &value, &size, 0), OPAL_SUCCESS);
    ck_assert(size > strlen("node=0;host=;cpuset="));
    ck_assert_mem_eq(value, "node=0;host=", strlen("node=0;host="));
    free(value);
}
END_TEST

START_TEST(init_and_finalize_are_counted)
{
    ck_assert_int_eq(orte_finalize(), OPAL_ERR_NOT_INITIALIZED);
    ck_assert_int_eq(orte_init(NULL, NULL), OPAL_SUCCESS);
    uint32_t jobid = orte_process_info.my_name.jobid;
    ck_assert_int_eq(orte_init(NULL, NULL), OPAL_SUCCESS);
    ck_assert_uint_eq(orte_process_info.my_name.jobid, jobid);
    ck_assert_int_eq(orte_finalize(), OPAL_SUCCESS);
    ck_assert(orte_initialized());
    ck_assert(opal_rte_installed());
    ck_assert_int_eq(orte_finalize(), OPAL_SUCCESS);
    ck_assert(!orte_initialized());
    ck_assert(!opal_rte_installed());
    ck_assert_ptr_null(opal_proc_local_get());
    ck_assert_uint_eq(orte_process_info.size, 0);
    ck_assert_int_eq(orte_finalize(), OPAL_ERR_NOT_INITIALIZED);
}
END_TEST

START_TEST(runtime_starts_again_after_finalize)
{
    for (int round = 0; round < 3; ++round) {
        ck_assert_int_eq(orte_init(NULL, NULL), OPAL_SUCCESS);
        ck_assert_int_eq(opal_modex_send("k", "v", 1, OPAL_MODEX_SCOPE_GLOBAL), OPAL_SUCCESS);
        ck_assert_int_eq(opal_fence(true), OPAL_SUCCESS);
        ck_assert_int_eq(orte_finalize(), OPAL_SUCCESS);
    }
}
END_TEST

START_TEST(ess_variable_forces_singleton_under_a_launcher)
{
    /* A PMIx launcher's variables, but the user asked for singleton. */
    setenv("PMIX_RANK", "3", 1);
    setenv("PMIX_NAMESPACE", "not-a-real-job", 1);
    setenv("OPAL_MCA_ess", "singleton", 1);
    ck_assert_int_eq(orte_init(NULL, NULL), OPAL_SUCCESS);
    ck_assert_str_eq(orte_process_info.ess_name, "singleton");
    ck_assert_uint_eq(orte_process_info.my_name.vpid, 0);
    unsetenv("PMIX_RANK");
    unsetenv("PMIX_NAMESPACE");
}
END_TEST

START_TEST(forcing_a_component_that_cannot_run_fails_cleanly)
{
    setenv("OPAL_MCA_ess", "env", 1);
    ck_assert_int_ne(orte_init(NULL, NULL), OPAL_SUCCESS);
    ck_assert(!orte_initialized());
    ck_assert(!opal_rte_installed());
    unsetenv("OPAL_MCA_ess");
    /* And nothing is left behind that stops a later init. */
    ck_assert_int_eq(orte_init(NULL, NULL), OPAL_SUCCESS);
    ck_assert_str_eq(orte_process_info.ess_name, "singleton");
}
END_TEST

START_TEST(abort_ends_the_process_with_the_status)
{
    ck_assert_int_eq(orte_init(NULL, NULL), OPAL_SUCCESS);
    (void) opal_abort(5, "singleton test: abort on purpose");
    ck_abort_msg("opal_abort returned");
}
END_TEST

START_TEST(abort_without_init_returns)
{
    ck_assert_int_eq(orte_abort(5, "not started"), OPAL_ERR_NOT_INITIALIZED);
}
END_TEST

static Suite *singleton_suite(void)
{
    Suite *s = suite_create("orte_singleton");
    TCase *tc;
#define ADD(fn)                                                                                    \
    do {                                                                                           \
        tc = tcase_create(#fn);                                                                    \
        tcase_add_checked_fixture(tc, setup, teardown);                                            \
        tcase_add_test(tc, fn);                                                                    \
        suite_add_tcase(s, tc);                                                                    \
    } while (0)
    ADD(process_started_alone_is_rank_0_of_1);
    ADD(session_directory_is_private_and_removed_at_finalize);
    ADD(modex_to_itself_returns_what_was_put);
    ADD(every_scope_is_readable_by_itself);
    ADD(a_second_put_replaces_the_value);
    ADD(missing_key_is_not_found_without_waiting);
    ADD(another_rank_does_not_exist);
    ADD(fences_return_at_once);
    ADD(opal_sees_the_job);
    ADD(init_and_finalize_are_counted);
    ADD(runtime_starts_again_after_finalize);
    ADD(ess_variable_forces_singleton_under_a_launcher);
    ADD(forcing_a_component_that_cannot_run_fails_cleanly);
    ADD(abort_without_init_returns);
    if (opal_test_can_fork()) {
        tc = tcase_create("abort_ends_the_process_with_the_status");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_exit_test(tc, abort_ends_the_process_with_the_status, 5);
        suite_add_tcase(s, tc);
    }
#undef ADD
    return s;
}

int main(void)
{
    orte_test_use_build_tree_plugins();
    return opal_test_run(singleton_suite());
}
