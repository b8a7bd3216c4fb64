/*
 * Stale sessions: what an mcarun killed by SIGKILL leaves (its session
 * directory and its job's /dev/shm files) is removed by the next mcarun
 * and by mcarun --clean, while a live job's files and anything without a
 * launcher record stay. Each test runs with a TMPDIR of its own, and the
 * /dev/shm files it makes carry its jobids, so nothing outside it is seen.
 */
#include "opal/opal_config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test/orte/mcarun_test_support.h"
#include "test/support/opal_test.h"

#define RUN(run, ...)                                                                              \
    do {                                                                                           \
        const char *const args_[] = {__VA_ARGS__, NULL};                                           \
        mcarun_test_mcarun((run), NULL, args_);                                                    \
    } while (0)

#define EXPECT(run, cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            mcarun_test_dump(run);                                                                 \
            ck_abort_msg("expected: %s", #cond);                                                   \
        }                                                                                          \
    } while (0)

/* Jobids far above what a real launcher picks first (pid mod 2^22), so the
 * /dev/shm names made here are this test's own. */
#define FAKE_JOBID_BASE (1000u << 22)

static char tmpdir[PATH_MAX];
static char base[PATH_MAX + 32];

/* A private TMPDIR holding this user's session base, as mcarun makes it. */
static void make_base(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/mcarun-clean-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    ck_assert_int_eq(0, setenv("TMPDIR", tmpdir, 1));
    snprintf(base, sizeof(base), "%s/opal-mca.%lu", tmpdir, (unsigned long) geteuid());
    ck_assert_int_eq(0, mkdir(base, 0700));
}

static void remove_base(void)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
    ck_assert_int_eq(0, system(cmd));
}

static uint32_t fake_jobid(unsigned k)
{
    return FAKE_JOBID_BASE + k * 100000u + (uint32_t) getpid() % 100000u;
}

static void job_dir(uint32_t jobid, char *path, size_t size)
{
    snprintf(path, size, "%s/%lu", base, (unsigned long) jobid);
}

static void shm_name(uint32_t jobid, char *name, size_t size)
{
    snprintf(name, size, "/opal-mca.%lu.%lu.0", (unsigned long) geteuid(), (unsigned long) jobid);
}

static bool exists(const char *path)
{
    struct stat st;
    return 0 == lstat(path, &st);
}

static bool shm_exists(uint32_t jobid)
{
    char name[64], path[96];
    shm_name(jobid, name, sizeof(name));
    snprintf(path, sizeof(path), "/dev/shm%s", name);
    return exists(path);
}

/* What btl/sm would leave: a shared-memory object named after the job. */
static void make_shm(uint32_t jobid)
{
    char name[64];
    shm_name(jobid, name, sizeof(name));
    int fd = shm_open(name, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
}

static void unlink_shm(uint32_t jobid)
{
    char name[64];
    shm_name(jobid, name, sizeof(name));
    shm_unlink(name);
}

static unsigned long long start_time_of(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long) pid);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    ck_assert_ptr_nonnull(p);
    unsigned long long t = 0;
    /* After ") " come fields 3 (state) to 21, then the start time. */
    ck_assert_int_eq(1, sscanf(p + 2,
                               "%*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
                               "%*s %*s %*s %*s %*s %llu",
                               &t));
    return t;
}

/* A job directory as a launcher with this pid and start time leaves it;
 * record false: one without the launcher record. */
static void make_job(uint32_t jobid, bool record, long pid, unsigned long long start)
{
    char path[PATH_MAX + 64], file[PATH_MAX + 96];
    job_dir(jobid, path, sizeof(path));
    ck_assert_int_eq(0, mkdir(path, 0700));
    snprintf(file, sizeof(file), "%s/socket-stand-in", path);
    FILE *f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    if (record) {
        snprintf(file, sizeof(file), "%s/launcher", path);
        f = fopen(file, "w");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "%ld %llu\n", pid, start);
        fclose(f);
    }
    make_shm(jobid);
}

/* A pid that no process has any more. */
static pid_t dead_pid(void)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (0 == pid) {
        _exit(0);
    }
    ck_assert_int_eq(pid, waitpid(pid, NULL, 0));
    return pid;
}

static bool job_exists(uint32_t jobid)
{
    char path[PATH_MAX + 64];
    job_dir(jobid, path, sizeof(path));
    return exists(path);
}

START_TEST(clean_removes_a_dead_launchers_session_and_shm)
{
    make_base();
    uint32_t jobid = fake_jobid(0);
    make_job(jobid, true, dead_pid(), 12345);
    mcarun_run_t run;
    RUN(&run, "--clean");
    char said[128];
    snprintf(said, sizeof(said), "removed the leftovers of job %lu", (unsigned long) jobid);
    EXPECT(&run, 0 == run.status && NULL != strstr(run.err, said));
    EXPECT(&run, NULL != strstr(run.err, "and 1 file in /dev/shm"));
    EXPECT(&run, !job_exists(jobid) && !shm_exists(jobid));
    mcarun_test_run_free(&run);
    remove_base();
}
END_TEST

START_TEST(clean_keeps_a_live_launchers_session)
{
    make_base();
    uint32_t jobid = fake_jobid(1);
    make_job(jobid, true, getpid(), start_time_of(getpid()));
    mcarun_run_t run;
    RUN(&run, "--clean");
    EXPECT(&run, 0 == run.status && NULL != strstr(run.out, "no stale sessions"));
    EXPECT(&run, job_exists(jobid) && shm_exists(jobid));
    mcarun_test_run_free(&run);
    unlink_shm(jobid);
    remove_base();
}
END_TEST

START_TEST(clean_removes_a_session_whose_pid_was_reused)
{
    make_base();
    uint32_t jobid = fake_jobid(2);
    /* Our pid, but not our start time: another process had the pid. */
    make_job(jobid, true, getpid(), start_time_of(getpid()) + 1);
    mcarun_run_t run;
    RUN(&run, "--clean");
    EXPECT(&run, 0 == run.status && NULL != strstr(run.err, "removed the leftovers of job"));
    EXPECT(&run, !job_exists(jobid) && !shm_exists(jobid));
    mcarun_test_run_free(&run);
    remove_base();
}
END_TEST

START_TEST(clean_keeps_a_session_without_launcher_record)
{
    make_base();
    uint32_t jobid = fake_jobid(3);
    make_job(jobid, false, 0, 0);
    mcarun_run_t run;
    RUN(&run, "--clean");
    EXPECT(&run, 0 == run.status && NULL != strstr(run.out, "no stale sessions"));
    EXPECT(&run, job_exists(jobid) && shm_exists(jobid));
    mcarun_test_run_free(&run);
    unlink_shm(jobid);
    remove_base();
}
END_TEST

/* The jobid of the one job directory with a launcher record in base other
 * than skip, or 0 when there is none yet. */
static uint32_t find_job(uint32_t skip)
{
    DIR *d = opendir(base);
    ck_assert_ptr_nonnull(d);
    uint32_t found = 0;
    struct dirent *e;
    while (0 == found && NULL != (e = readdir(d))) {
        char file[PATH_MAX + 300];
        snprintf(file, sizeof(file), "%s/%s/launcher", base, e->d_name);
        uint32_t jobid = (uint32_t) strtoul(e->d_name, NULL, 10);
        if (jobid != skip && exists(file)) {
            found = jobid;
        }
    }
    closedir(d);
    return found;
}

/* Starts mcarun on one rank that sleeps, waits until it runs, and returns
 * its jobid; *rank gets the rank's pid. */
static uint32_t start_sleeping_job(mcarun_run_t *run, uint32_t skip, long *rank)
{
    const char *const args[] = {"-np", "1", "sh", "-c", "echo ready $$; exec sleep 600", NULL};
    mcarun_test_start(run, NULL, args);
    EXPECT(run, mcarun_test_wait_for(run, "\n", 1));
    EXPECT(run, 1 == sscanf(run->out, "ready %ld", rank));
    uint32_t jobid = find_job(skip);
    EXPECT(run, 0 != jobid);
    return jobid;
}

/* SIGKILLs the launcher of a sleeping job (then its rank, which a real
 * crash might leave running but would only keep this test waiting), and
 * gives the job a /dev/shm file as btl/sm would have. */
static uint32_t killed_job(uint32_t skip)
{
    mcarun_run_t run;
    long rank;
    uint32_t jobid = start_sleeping_job(&run, skip, &rank);
    make_shm(jobid);
    kill(run.pid, SIGKILL);
    kill((pid_t) rank, SIGKILL);
    mcarun_test_finish(&run);
    EXPECT(&run, 128 + SIGKILL == run.status);
    mcarun_test_run_free(&run);
    ck_assert(job_exists(jobid) && shm_exists(jobid));
    return jobid;
}

START_TEST(next_mcarun_removes_a_sigkilled_mcaruns_leftovers)
{
    make_base();
    uint32_t jobid = killed_job(0);
    mcarun_run_t run;
    RUN(&run, "-np", "1", "true");
    char said[128];
    snprintf(said, sizeof(said), "removed the leftovers of job %lu", (unsigned long) jobid);
    EXPECT(&run, 0 == run.status && NULL != strstr(run.err, said));
    EXPECT(&run, !job_exists(jobid) && !shm_exists(jobid));
    mcarun_test_run_free(&run);
    remove_base();
}
END_TEST

START_TEST(clean_removes_a_sigkilled_mcaruns_leftovers_and_keeps_a_live_job)
{
    make_base();
    /* The live job starts first: a launcher cleans when it starts. */
    mcarun_run_t live;
    long rank;
    uint32_t jobid = start_sleeping_job(&live, 0, &rank);
    make_shm(jobid);
    uint32_t dead = killed_job(jobid);

    mcarun_run_t run;
    RUN(&run, "--clean");
    char said[128];
    snprintf(said, sizeof(said), "removed the leftovers of job %lu", (unsigned long) dead);
    EXPECT(&run, 0 == run.status && NULL != strstr(run.err, said));
    EXPECT(&run, 1 == mcarun_test_count(run.err, "removed the leftovers"));
    EXPECT(&run, !job_exists(dead) && !shm_exists(dead));
    EXPECT(&run, job_exists(jobid) && shm_exists(jobid));
    mcarun_test_run_free(&run);

    kill(live.pid, SIGTERM);
    mcarun_test_finish(&live);
    EXPECT(&live, !job_exists(jobid) && !shm_exists(jobid));
    mcarun_test_run_free(&live);
    remove_base();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mcarun_clean");
    OPAL_TEST_ADD(s, clean_removes_a_dead_launchers_session_and_shm);
    OPAL_TEST_ADD(s, clean_keeps_a_live_launchers_session);
    OPAL_TEST_ADD(s, clean_removes_a_session_whose_pid_was_reused);
    OPAL_TEST_ADD(s, clean_keeps_a_session_without_launcher_record);
    OPAL_TEST_ADD(s, next_mcarun_removes_a_sigkilled_mcaruns_leftovers);
    OPAL_TEST_ADD(s, clean_removes_a_sigkilled_mcaruns_leftovers_and_keeps_a_live_job);
    return opal_test_run(s);
}
