/* opal_pid_exited: a live process, one that exited and waits to be
 * reaped (a zombie), one reaped, a name that looks like a state.
 * opal_pid_space: the same in a child, another in a new pid namespace. */
#include "opal/opal_config.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opal/util/opal_pid.h"
#include "test/support/opal_test.h"

/* A child that names itself name (when not NULL), says so on the pipe
 * and waits until the other end closes; *to_child is that end. */
static pid_t start_child(const char *name, int *to_child)
{
    int up[2], down[2];
    ck_assert_int_eq(pipe(up), 0);
    ck_assert_int_eq(pipe(down), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (0 == pid) {
        close(up[0]);
        close(down[1]);
        if (NULL != name) {
            (void) prctl(PR_SET_NAME, name, 0, 0, 0);
        }
        char c = 'r';
        (void) !write(up[1], &c, 1);
        (void) !read(down[0], &c, 1);
        _exit(0);
    }
    close(up[1]);
    close(down[0]);
    char c;
    ck_assert_int_eq(read(up[0], &c, 1), 1);
    close(up[0]);
    *to_child = down[1];
    return pid;
}

/* Waits (at most 3 s) for opal_pid_exited to say pid exited. */
static bool exits_within_3s(pid_t pid)
{
    for (int ms = 0; ms < 3000; ++ms) {
        if (opal_pid_exited(pid)) {
            return true;
        }
        usleep(1000);
    }
    return false;
}

START_TEST(a_live_process_has_not_exited)
{
    ck_assert(!opal_pid_exited(getpid()));
    int fd;
    pid_t pid = start_child(NULL, &fd);
    ck_assert(!opal_pid_exited(pid));
    close(fd);
    ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
}
END_TEST

START_TEST(a_zombie_has_exited_and_so_has_a_reaped_pid)
{
    int fd;
    pid_t pid = start_child(NULL, &fd);
    close(fd);
    ck_assert_msg(exits_within_3s(pid), "the child's exit was not seen");
    /* Not reaped yet: the pid is still there, and kill() finds it. */
    ck_assert_int_eq(kill(pid, 0), 0);
    ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
    ck_assert(opal_pid_exited(pid));
}
END_TEST

START_TEST(a_name_holding_a_parenthesis_and_a_state_is_not_read_as_the_state)
{
    int fd;
    pid_t pid = start_child("x) Z (y", &fd);
    ck_assert(!opal_pid_exited(pid));
    close(fd);
    ck_assert(exits_within_3s(pid));
    ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
}
END_TEST

START_TEST(no_pid_is_never_a_process_that_exited)
{
    ck_assert(!opal_pid_exited(0));
    ck_assert(!opal_pid_exited(-1));
}
END_TEST

/* The pid space of a child (in a new pid namespace when new_ns: the
 * child unshares, and the space is its own child's, the first process of
 * that namespace); false when the namespace could not be made. */
static bool child_space(bool new_ns, uint64_t *space)
{
    int up[2];
    ck_assert_int_eq(pipe(up), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (0 == pid) {
        close(up[0]);
        if (new_ns) {
            if (0 != unshare(CLONE_NEWPID)) {
                fprintf(stderr, "opal_pid_test: unshare(CLONE_NEWPID): %s\n", strerror(errno));
                _exit(3);
            }
            pid_t inner = fork();
            if (inner < 0) {
                _exit(4);
            }
            if (inner > 0) {
                int status = 0;
                _exit(waitpid(inner, &status, 0) == inner && WIFEXITED(status) ? WEXITSTATUS(status)
                                                                               : 5);
            }
        }
        uint64_t mine = opal_pid_space();
        _exit(sizeof(mine) == write(up[1], &mine, sizeof(mine)) ? 0 : 6);
    }
    close(up[1]);
    ssize_t n = read(up[0], space, sizeof(*space));
    close(up[0]);
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    if (new_ns && 3 == WEXITSTATUS(status)) {
        return false;
    }
    ck_assert_int_eq(WEXITSTATUS(status), 0);
    ck_assert_int_eq(n, (ssize_t) sizeof(*space));
    return true;
}

START_TEST(a_child_shares_the_pid_space_and_a_new_pid_namespace_does_not)
{
    uint64_t mine = opal_pid_space(), theirs = 0;
    ck_assert(0 != mine);
    ck_assert(mine == opal_pid_space());
    ck_assert(child_space(false, &theirs));
    ck_assert(theirs == mine);
    if (!child_space(true, &theirs)) {
        /* Not root, or no user namespaces: only the first half holds. */
        fprintf(stderr, "opal_pid_test: no new pid namespace here; its space is not compared\n");
        return;
    }
    ck_assert(0 != theirs);
    ck_assert_msg(theirs != mine, "a process in a new pid namespace has this one's pid space");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("opal_pid");
    OPAL_TEST_ADD(s, a_live_process_has_not_exited);
    OPAL_TEST_ADD(s, a_zombie_has_exited_and_so_has_a_reaped_pid);
    OPAL_TEST_ADD(s, a_name_holding_a_parenthesis_and_a_state_is_not_read_as_the_state);
    OPAL_TEST_ADD(s, no_pid_is_never_a_process_that_exited);
    OPAL_TEST_ADD(s, a_child_shares_the_pid_space_and_a_new_pid_namespace_does_not);
    return opal_test_run(s);
}
