/* The timeline recorder (opal/util/opal_timeline.h): what the file holds,
 * the bound on marks, the refusals; and, through the MCA base, that a
 * timeline asked for is recorded in a build with marks and refused in one
 * without. */
#include "opal/opal_config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_base_open.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timeline.h"
#include "test/support/opal_test.h"

/* A file in a fresh directory; the test removes both. */
static char dir[64];
static char path[128];

static void make_dir(void)
{
    snprintf(dir, sizeof(dir), "/tmp/opal_timeline_test.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/tl", dir);
}

static void remove_dir(void)
{
    char name[160];
    snprintf(name, sizeof(name), "%s/tl", dir);
    (void) unlink(name);
    snprintf(name, sizeof(name), "%s/tl.%ld", dir, (long) getpid());
    (void) unlink(name);
    (void) rmdir(dir);
}

/* The file's lines, NUL-terminated in one malloc'd buffer; *n lines. */
static char **read_lines(const char *file, int *n)
{
    FILE *f = fopen(file, "r");
    ck_assert_msg(NULL != f, "no timeline file %s", file);
    char **lines = calloc(64, sizeof(*lines));
    char buf[256];
    *n = 0;
    while (*n < 64 && NULL != fgets(buf, sizeof(buf), f)) {
        buf[strcspn(buf, "\n")] = '\0';
        lines[(*n)++] = strdup(buf);
    }
    fclose(f);
    return lines;
}

static void free_lines(char **lines, int n)
{
    for (int i = 0; i < n; ++i) {
        free(lines[i]);
    }
    free(lines);
}

START_TEST(marks_are_written_in_order_with_their_names)
{
    make_dir();
    ck_assert_int_eq(opal_timeline_start(path, 16), OPAL_SUCCESS);
    opal_timeline_mark(OPAL_TIMELINE_rpc_send);
    opal_timeline_mark(OPAL_TIMELINE_sm_sent);
    opal_timeline_mark(OPAL_TIMELINE_rpc_complete);
    ck_assert_int_eq(opal_timeline_stop(), OPAL_SUCCESS);

    int n = 0;
    char **lines = read_lines(path, &n);
    ck_assert_int_eq(n, 6);
    ck_assert_str_eq(lines[0], "# opal timeline 1");
    long pid = 0;
    unsigned long kept = 0, dropped = 1, clock_ns = 0;
    ck_assert_int_eq(sscanf(lines[1], "# pid %ld marks %lu dropped %lu clock_read_ns %lu", &pid,
                            &kept, &dropped, &clock_ns),
                     4);
    ck_assert_int_eq(pid, (long) getpid());
    ck_assert_uint_eq(kept, 3);
    ck_assert_uint_eq(dropped, 0);
    ck_assert_str_eq(lines[2], "# ns thread mark");
    const char *want[] = {"rpc_send", "sm_sent", "rpc_complete"};
    unsigned long long last = 0;
    for (int i = 0; i < 3; ++i) {
        unsigned long long ns = 0;
        unsigned thread = 9;
        char name[32] = "";
        ck_assert_int_eq(sscanf(lines[3 + i], "%llu %u %31s", &ns, &thread, name), 3);
        ck_assert_uint_ge(ns, last);
        ck_assert_uint_eq(thread, 0);
        ck_assert_str_eq(name, want[i]);
        last = ns;
    }
    free_lines(lines, n);
    remove_dir();
}
END_TEST

START_TEST(marks_past_the_bound_are_counted_not_kept)
{
    make_dir();
    ck_assert_int_eq(opal_timeline_start(path, 4), OPAL_SUCCESS);
    for (int i = 0; i < 10; ++i) {
        opal_timeline_mark(OPAL_TIMELINE_na_recv);
    }
    ck_assert_int_eq(opal_timeline_stop(), OPAL_SUCCESS);
    int n = 0;
    char **lines = read_lines(path, &n);
    ck_assert_int_eq(n, 3 + 4);
    ck_assert_msg(NULL != strstr(lines[1], " marks 4 dropped 6 "), "header: %s", lines[1]);
    free_lines(lines, n);
    remove_dir();
}
END_TEST

START_TEST(nothing_is_recorded_outside_start_and_stop)
{
    make_dir();
    opal_timeline_mark(OPAL_TIMELINE_rpc_send); /* before: not kept */
    ck_assert_int_eq(opal_timeline_stop(), OPAL_ERR_NOT_INITIALIZED);
    ck_assert_int_eq(opal_timeline_start(path, 8), OPAL_SUCCESS);
    opal_timeline_mark(OPAL_TIMELINE_rpc_reply);
    ck_assert_int_eq(opal_timeline_stop(), OPAL_SUCCESS);
    opal_timeline_mark(OPAL_TIMELINE_rpc_send); /* after: not kept either */
    int n = 0;
    char **lines = read_lines(path, &n);
    ck_assert_int_eq(n, 4);
    ck_assert_ptr_nonnull(strstr(lines[3], " rpc_reply"));
    free_lines(lines, n);
    remove_dir();
}
END_TEST

START_TEST(percent_p_in_the_path_is_the_pid)
{
    make_dir();
    char pattern[160], expanded[160];
    snprintf(pattern, sizeof(pattern), "%s/tl.%%p", dir);
    snprintf(expanded, sizeof(expanded), "%s/tl.%ld", dir, (long) getpid());
    ck_assert_int_eq(opal_timeline_start(pattern, 8), OPAL_SUCCESS);
    ck_assert_int_eq(opal_timeline_stop(), OPAL_SUCCESS);
    ck_assert_int_eq(access(expanded, R_OK), 0);
    remove_dir();
}
END_TEST

START_TEST(bad_starts_are_refused)
{
    make_dir();
    ck_assert_int_eq(opal_timeline_start(NULL, 8), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_timeline_start("", 8), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_timeline_start(path, 0), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_timeline_start(path, (size_t) 1 << 29), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_timeline_start(path, 8), OPAL_SUCCESS);
    ck_assert_int_eq(opal_timeline_start(path, 8), OPAL_ERR_EXISTS);
    ck_assert_int_eq(opal_timeline_stop(), OPAL_SUCCESS);
    remove_dir();
}
END_TEST

START_TEST(an_unwritable_file_is_an_error)
{
    ck_assert_int_eq(opal_timeline_start("/nonexistent-dir/opal_timeline_test/tl", 8),
                     OPAL_SUCCESS);
    opal_timeline_mark(OPAL_TIMELINE_rpc_send);
    ck_assert_int_eq(opal_timeline_stop(), OPAL_ERR_IN_ERRNO);
    /* Recording stopped all the same. */
    ck_assert_int_eq(opal_timeline_stop(), OPAL_ERR_NOT_INITIALIZED);
}
END_TEST

static void *mark_many(void *arg)
{
    (void) arg;
    for (int i = 0; i < 1000; ++i) {
        opal_timeline_mark(OPAL_TIMELINE_na_trigger);
    }
    return NULL;
}

START_TEST(threads_mark_at_once_and_are_numbered)
{
    make_dir();
    ck_assert_int_eq(opal_timeline_start(path, 4000), OPAL_SUCCESS);
    pthread_t t[4];
    for (int i = 0; i < 4; ++i) {
        ck_assert_int_eq(pthread_create(&t[i], NULL, mark_many, NULL), 0);
    }
    for (int i = 0; i < 4; ++i) {
        pthread_join(t[i], NULL);
    }
    ck_assert_int_eq(opal_timeline_stop(), OPAL_SUCCESS);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[128];
    int marks = 0, per_thread[64] = {0};
    while (NULL != fgets(line, sizeof(line), f)) {
        unsigned long long ns;
        unsigned thread;
        char name[32];
        if ('#' == line[0]) {
            continue;
        }
        ck_assert_int_eq(sscanf(line, "%llu %u %31s", &ns, &thread, name), 3);
        ck_assert_str_eq(name, "na_trigger");
        ck_assert_uint_lt(thread, 64);
        ++per_thread[thread];
        ++marks;
    }
    fclose(f);
    ck_assert_int_eq(marks, 4000);
    /* Four threads, each with its own number and all of its marks. */
    int threads = 0;
    for (int i = 0; i < 64; ++i) {
        if (per_thread[i] > 0) {
            ck_assert_int_eq(per_thread[i], 1000);
            ++threads;
        }
    }
    ck_assert_int_eq(threads, 4);
    remove_dir();
}
END_TEST

START_TEST(every_mark_has_a_name)
{
    for (int m = 0; m < OPAL_TIMELINE_MARKS; ++m) {
        const char *name = opal_timeline_mark_name((opal_timeline_mark_t) m);
        ck_assert_ptr_nonnull(name);
        ck_assert_uint_gt(strlen(name), 0);
    }
    ck_assert_ptr_null(opal_timeline_mark_name(OPAL_TIMELINE_MARKS));
    ck_assert_str_eq(opal_timeline_mark_name(OPAL_TIMELINE_rpc_handler), "rpc_handler");
}
END_TEST

/* Through the MCA base, as programs ask for it (--mca opal_timeline_file). */
START_TEST(the_mca_base_records_what_opal_timeline_file_asks_for)
{
    make_dir();
    ck_assert_int_eq(setenv("OPAL_MCA_opal_timeline_file", path, 1), 0);
    int rc = mca_base_open();
    ck_assert_int_eq(unsetenv("OPAL_MCA_opal_timeline_file"), 0);
    if (opal_timeline_compiled_in()) {
        ck_assert_int_eq(rc, OPAL_SUCCESS);
        OPAL_TIMELINE(rpc_transmit);
        ck_assert_int_eq(mca_base_close(), OPAL_SUCCESS);
        int n = 0;
        char **lines = read_lines(path, &n);
        ck_assert_int_eq(n, 4);
        ck_assert_ptr_nonnull(strstr(lines[3], " rpc_transmit"));
        free_lines(lines, n);
    } else {
        /* The file would stay empty: the program does not start. */
        ck_assert_int_eq(rc, OPAL_ERR_NOT_SUPPORTED);
        ck_assert_int_eq(access(path, F_OK), -1);
    }
    remove_dir();
}
END_TEST

START_TEST(the_mca_base_refuses_a_bound_of_no_marks)
{
    make_dir();
    ck_assert_int_eq(setenv("OPAL_MCA_opal_timeline_file", path, 1), 0);
    ck_assert_int_eq(setenv("OPAL_MCA_opal_timeline_max", "0", 1), 0);
    int rc = mca_base_open();
    ck_assert_int_eq(unsetenv("OPAL_MCA_opal_timeline_file"), 0);
    ck_assert_int_eq(unsetenv("OPAL_MCA_opal_timeline_max"), 0);
    /* Refused either way: for the bound, or for a build without marks. */
    ck_assert_int_eq(rc, opal_timeline_compiled_in() ? OPAL_ERR_BAD_PARAM : OPAL_ERR_NOT_SUPPORTED);
    ck_assert_int_eq(opal_timeline_stop(), OPAL_ERR_NOT_INITIALIZED);
    ck_assert_int_eq(access(path, F_OK), -1);
    remove_dir();
}
END_TEST

static Suite *timeline_suite(void)
{
    Suite *s = suite_create("opal_timeline");
    OPAL_TEST_ADD(s, marks_are_written_in_order_with_their_names);
    OPAL_TEST_ADD(s, marks_past_the_bound_are_counted_not_kept);
    OPAL_TEST_ADD(s, nothing_is_recorded_outside_start_and_stop);
    OPAL_TEST_ADD(s, percent_p_in_the_path_is_the_pid);
    OPAL_TEST_ADD(s, bad_starts_are_refused);
    OPAL_TEST_ADD(s, an_unwritable_file_is_an_error);
    OPAL_TEST_ADD(s, threads_mark_at_once_and_are_numbered);
    OPAL_TEST_ADD(s, every_mark_has_a_name);
    OPAL_TEST_ADD(s, the_mca_base_records_what_opal_timeline_file_asks_for);
    OPAL_TEST_ADD(s, the_mca_base_refuses_a_bound_of_no_marks);
    return s;
}

int main(void)
{
    return opal_test_run(timeline_suite());
}
