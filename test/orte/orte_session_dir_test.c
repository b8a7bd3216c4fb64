/*
 * Session directories: created private under a base that is checked
 * before it is trusted, removed with everything in them (links removed,
 * never followed), and the shared-memory files of a job found by prefix.
 * Every test works under a TMPDIR of its own.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/util/opal_error.h"
#include "orte/util/orte_session_dir.h"
#include "test/support/opal_test.h"

static char tmp[64];
static char base[ORTE_SESSION_DIR_MAX];

static void setup(void)
{
    snprintf(tmp, sizeof(tmp), "/tmp/orte-session-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    setenv("TMPDIR", tmp, 1);
    snprintf(base, sizeof(base), "%s/opal-mca.%lu", tmp, (unsigned long) geteuid());
}

static void teardown(void)
{
    char cmd[3 * sizeof(tmp)];
    snprintf(cmd, sizeof(cmd), "chmod -R u+rwx %s; rm -rf %s", tmp, tmp);
    ck_assert_int_eq(0, system(cmd));
    unsetenv("TMPDIR");
}

static mode_t mode_of(const char *path)
{
    struct stat st;
    ck_assert_int_eq(0, lstat(path, &st));
    return st.st_mode & 07777;
}

static void touch(const char *path)
{
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
}

START_TEST(base_is_tmpdir_opal_mca_uid)
{
    char path[ORTE_SESSION_DIR_MAX];
    setenv("TMPDIR", "/some/where//", 1);
    ck_assert_int_eq(OPAL_SUCCESS, orte_session_dir_base(path, sizeof(path)));
    char want[64];
    snprintf(want, sizeof(want), "/some/where/opal-mca.%lu", (unsigned long) geteuid());
    ck_assert_str_eq(want, path);
    unsetenv("TMPDIR");
    ck_assert_int_eq(OPAL_SUCCESS, orte_session_dir_base(path, sizeof(path)));
    ck_assert_int_eq(0, strncmp(path, "/tmp/opal-mca.", 14));
    setenv("TMPDIR", "relative/dir", 1);
    ck_assert_int_eq(OPAL_ERR_BAD_PARAM, orte_session_dir_base(path, sizeof(path)));
    setenv("TMPDIR", "/tmp", 1);
    ck_assert_int_eq(OPAL_ERR_BAD_PARAM, orte_session_dir_base(path, 8));
}
END_TEST

START_TEST(create_makes_a_private_job_directory)
{
    umask(0022);
    char path[ORTE_SESSION_DIR_MAX];
    uint32_t jobid = 0;
    ck_assert_int_eq(OPAL_SUCCESS, orte_session_dir_create(1234, &jobid, path, sizeof(path)));
    ck_assert_uint_eq(1234, jobid);
    char want[ORTE_SESSION_DIR_MAX + 16];
    snprintf(want, sizeof(want), "%s/1234", base);
    ck_assert_str_eq(want, path);
    ck_assert_uint_eq(0700, mode_of(base));
    ck_assert_uint_eq(0700, mode_of(path));
}
END_TEST

START_TEST(create_never_reuses_an_existing_directory)
{
    char path[ORTE_SESSION_DIR_MAX];
    uint32_t first, second, third;
    ck_assert_int_eq(OPAL_SUCCESS, orte_session_dir_create(77, &first, path, sizeof(path)));
    ck_assert_int_eq(OPAL_SUCCESS, orte_session_dir_create(77, &second, path, sizeof(path)));
    ck_assert_int_eq(OPAL_SUCCESS,
                     orte_session_dir_create(77 + (1u << 22), &third, path, sizeof(path)));
    ck_assert_uint_eq(77, first);
    ck_assert_uint_eq(77 + (1u << 22), second);
    ck_assert_uint_eq(77 + (2u << 22), third);
}
END_TEST

START_TEST(base_open_to_others_is_refused)
{
    ck_assert_int_eq(0, mkdir(base, 0700));
    ck_assert_int_eq(0, chmod(base, 0755));
    char path[ORTE_SESSION_DIR_MAX];
    uint32_t jobid;
    ck_assert_int_eq(OPAL_ERR_PERM, orte_session_dir_create(1, &jobid, path, sizeof(path)));
    ck_assert_uint_eq(0755, mode_of(base));
}
END_TEST

START_TEST(base_that_is_a_symlink_is_refused)
{
    char elsewhere[PATH_MAX + 16];
    snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", tmp);
    ck_assert_int_eq(0, mkdir(elsewhere, 0700));
    ck_assert_int_eq(0, symlink(elsewhere, base));
    char path[ORTE_SESSION_DIR_MAX];
    uint32_t jobid;
    ck_assert_int_eq(OPAL_ERR_PERM, orte_session_dir_create(1, &jobid, path, sizeof(path)));
    /* Nothing was created through the link. */
    snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere/1", tmp);
    struct stat st;
    ck_assert_int_ne(0, stat(elsewhere, &st));
}
END_TEST

START_TEST(base_owned_by_another_user_is_refused)
{
    if (0 != geteuid()) {
        return; /* only root can give a directory away */
    }
    ck_assert_int_eq(0, mkdir(base, 0700));
    ck_assert_int_eq(0, chown(base, 12345, 12345));
    char path[ORTE_SESSION_DIR_MAX];
    uint32_t jobid;
    ck_assert_int_eq(OPAL_ERR_PERM, orte_session_dir_create(1, &jobid, path, sizeof(path)));
}
END_TEST

START_TEST(remove_deletes_the_tree_but_not_what_links_point_to)
{
    char path[ORTE_SESSION_DIR_MAX], p[ORTE_SESSION_DIR_MAX + 64];
    uint32_t jobid;
    ck_assert_int_eq(OPAL_SUCCESS, orte_session_dir_create(5, &jobid, path, sizeof(path)));
    char outside[PATH_MAX + 16], outside_file[PATH_MAX + 32];
    snprintf(outside, sizeof(outside), "%s/outside", tmp);
    ck_assert_int_eq(0, mkdir(outside, 0700));
    snprintf(outside_file, sizeof(outside_file), "%s/keep", outside);
    touch(outside_file);
    snprintf(p, sizeof(p), "%s/a", path);
    ck_assert_int_eq(0, mkdir(p, 0700));
    snprintf(p, sizeof(p), "%s/a/b", path);
    ck_assert_int_eq(0, mkdir(p, 0500)); /* read-only: removal must still work */
    snprintf(p, sizeof(p), "%s/a/file", path);
    touch(p);
    snprintf(p, sizeof(p), "%s/a/link-to-dir", path);
    ck_assert_int_eq(0, symlink(outside, p));
    snprintf(p, sizeof(p), "%s/link-to-file", path);
    ck_assert_int_eq(0, symlink(outside_file, p));
    snprintf(p, sizeof(p), "%s/fifo", path);
    ck_assert_int_eq(0, mkfifo(p, 0600));

    ck_assert_int_eq(OPAL_SUCCESS, orte_session_dir_remove(path));
    struct stat st;
    ck_assert_int_ne(0, lstat(path, &st));
    ck_assert_int_eq(ENOENT, errno);
    ck_assert_int_eq(0, stat(outside_file, &st));
    /* Removing what is already gone is not an error. */
    ck_assert_int_eq(OPAL_SUCCESS, orte_session_dir_remove(path));
    ck_assert_int_eq(OPAL_ERR_BAD_PARAM, orte_session_dir_remove(""));
}
END_TEST

START_TEST(remove_of_a_link_removes_only_the_link)
{
    char outside[PATH_MAX + 16], link[PATH_MAX + 16], file[PATH_MAX + 32];
    snprintf(outside, sizeof(outside), "%s/outside", tmp);
    ck_assert_int_eq(0, mkdir(outside, 0700));
    snprintf(file, sizeof(file), "%s/keep", outside);
    touch(file);
    snprintf(link, sizeof(link), "%s/link", tmp);
    ck_assert_int_eq(0, symlink(outside, link));
    ck_assert_int_eq(OPAL_SUCCESS, orte_session_dir_remove(link));
    struct stat st;
    ck_assert_int_ne(0, lstat(link, &st));
    ck_assert_int_eq(0, stat(file, &st));
}
END_TEST

START_TEST(shm_files_are_found_by_the_jobs_prefix)
{
    char prefix[64];
    ck_assert_int_eq(OPAL_SUCCESS, orte_session_dir_shm_prefix(42, prefix, sizeof(prefix)));
    char want[64];
    snprintf(want, sizeof(want), "opal-mca.%lu.42.", (unsigned long) geteuid());
    ck_assert_str_eq(want, prefix);
    ck_assert_int_eq(OPAL_ERR_BAD_PARAM, orte_session_dir_shm_prefix(42, prefix, 8));

    char p[PATH_MAX + 128];
    const char *names[] = {"seg0", "seg1", "x"};
    for (int i = 0; i < 3; ++i) {
        snprintf(p, sizeof(p), "%s/%s%s", tmp, prefix, names[i]);
        touch(p);
    }
    snprintf(p, sizeof(p), "%s/opal-mca.%lu.421.seg", tmp, (unsigned long) geteuid());
    touch(p); /* another job: its prefix only starts alike */
    snprintf(p, sizeof(p), "%s/unrelated", tmp);
    touch(p);
    ck_assert_int_eq(3, orte_session_dir_remove_shm(tmp, prefix));
    struct stat st;
    snprintf(p, sizeof(p), "%s/opal-mca.%lu.421.seg", tmp, (unsigned long) geteuid());
    ck_assert_int_eq(0, stat(p, &st));
    snprintf(p, sizeof(p), "%s/unrelated", tmp);
    ck_assert_int_eq(0, stat(p, &st));
    ck_assert_int_eq(0, orte_session_dir_remove_shm(tmp, prefix));
    ck_assert_int_eq(OPAL_ERR_BAD_PARAM, orte_session_dir_remove_shm(tmp, ""));
    ck_assert_int_eq(OPAL_ERR_BAD_PARAM, orte_session_dir_remove_shm(tmp, "../x"));
    ck_assert_int_eq(OPAL_ERR_IN_ERRNO, orte_session_dir_remove_shm("/nonexistent", prefix));
}
END_TEST

static void add(Suite *s, const char *name, const TTest *test)
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test);
    suite_add_tcase(s, tc);
}

#define ADD(s, fn) add((s), #fn, fn)

int main(void)
{
    Suite *s = suite_create("orte_session_dir");
    ADD(s, base_is_tmpdir_opal_mca_uid);
    ADD(s, create_makes_a_private_job_directory);
    ADD(s, create_never_reuses_an_existing_directory);
    ADD(s, base_open_to_others_is_refused);
    ADD(s, base_that_is_a_symlink_is_refused);
    ADD(s, base_owned_by_another_user_is_refused);
    ADD(s, remove_deletes_the_tree_but_not_what_links_point_to);
    ADD(s, remove_of_a_link_removes_only_the_link);
    ADD(s, shm_files_are_found_by_the_jobs_prefix);
    return opal_test_run(s);
}
