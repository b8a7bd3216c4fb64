/*
 * A rank program for mcarun's tests: each mode does one thing a test
 * needs a rank to do, and prints what the test checks.
 *
 *   ident                  "rank R of N pid P"
 *   env NAME...            "NAME=value" or "NAME unset", one per line
 *   args ARG...            "arg[i]=<ARG>" per argument
 *   cwd                    the working directory
 *   lines N                N lines, each written in three pieces
 *   longline LEN           one line of LEN bytes in small pieces, no newline
 *   exit CODE RANK         RANK exits with CODE, the others with 0
 *   crash RANK             RANK raises SIGSEGV, the others sleep
 *   sleep SEC              sleeps
 *   trap IGNORE            "rank R pid P ready", then waits for SIGTERM: prints "caught
 *                          SIGTERM" and exits 0 (IGNORE=1: keeps waiting)
 *   trapint IGNORE         "rank R pid P ready", then on SIGINT prints "caught SIGINT" and
 *                          exits 1, as libfabric's handler makes a rank do (IGNORE=1:
 *                          prints "ignored SIGINT" for each and keeps waiting)
 *   stdin                  copies stdin to stdout as "rank R: <line>"
 *   connect-exit           connects to mcarun, exits 0 without finalize
 *   disconnect RANK        RANK connects and drops the connection, then
 *                          sleeps; the others fence (and report failure)
 *   abort STATUS           rank 0 connects and aborts with STATUS
 *   fence-fail             rank 1 finalizes and exits; rank 0 fences and
 *                          exits 3 with "fence: <error name>"
 *   session CRASH          fills the session directory and a shm file,
 *                          prints their paths; crashes when CRASH is 1
 *   affinity               "cpus N": how many cpus the rank may run on
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "orte/util/orte_launcher_client.h"
#include "orte/util/orte_launcher_env.h"

static unsigned long env_number(const char *name)
{
    const char *v = getenv(name);
    return NULL == v ? 0 : strtoul(v, NULL, 10);
}

static void write_str(const char *s)
{
    size_t len = strlen(s);
    while (0 < len) {
        ssize_t n = write(1, s, len);
        if (n <= 0) {
            exit(9);
        }
        s += n;
        len -= (size_t) n;
    }
}

static orte_launcher_job_info_t connect_or_die(void)
{
    orte_launcher_job_info_t info;
    int rc = orte_launcher_client_connect(&info);
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "connect: %s\n", opal_strerror_name(rc));
        exit(8);
    }
    return info;
}

/* Dies of SIGSEGV, whatever handler a sanitizer installed. */
static void crash(void)
{
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
}

static volatile sig_atomic_t caught;
static void on_term(int sig)
{
    caught = sig;
}

static int mode_lines(unsigned long rank, long n)
{
    char line[160];
    for (long i = 0; i < n; ++i) {
        int len = snprintf(line, sizeof(line), "rank %lu line %ld %c%c%c%c%c%c%c%c\n", rank, i,
                           (int) ('a' + rank), (int) ('a' + rank), (int) ('a' + rank),
                           (int) ('a' + rank), (int) ('a' + rank), (int) ('a' + rank),
                           (int) ('a' + rank), (int) ('a' + rank));
        /* Three writes per line: mcarun must join them, never letting
         * another rank's bytes in between. */
        int third = len / 3;
        if (write(1, line, (size_t) third) < 0 || write(1, line + third, (size_t) third) < 0 ||
            write(1, line + 2 * third, (size_t) (len - 2 * third)) < 0) {
            return 9;
        }
    }
    return 0;
}

static int mode_longline(unsigned long rank, long len)
{
    char chunk[1000];
    memset(chunk, 'a' + (int) rank, sizeof(chunk));
    for (long done = 0; done < len;) {
        long n = len - done < (long) sizeof(chunk) ? len - done : (long) sizeof(chunk);
        if (write(1, chunk, (size_t) n) < 0) {
            return 9;
        }
        done += n;
    }
    return 0;
}

static int mode_trap(unsigned long rank, int ignore)
{
    struct sigaction sa = {.sa_handler = on_term};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    char line[64];
    snprintf(line, sizeof(line), "rank %lu pid %ld ready\n", rank, (long) getpid());
    write_str(line);
    for (int i = 0; i < 600 && (ignore || !caught); ++i) {
        if (caught && ignore) {
            snprintf(line, sizeof(line), "rank %lu ignored SIGTERM\n", rank);
            write_str(line);
            caught = 0;
        }
        usleep(100000);
    }
    if (!caught) {
        return 4;
    }
    snprintf(line, sizeof(line), "rank %lu caught SIGTERM\n", rank);
    write_str(line);
    return 0;
}

static volatile sig_atomic_t interrupts;
static void on_int(int sig)
{
    (void) sig;
    ++interrupts;
}

static int mode_trapint(unsigned long rank, int ignore)
{
    struct sigaction sa = {.sa_handler = on_int};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    char line[64];
    snprintf(line, sizeof(line), "rank %lu pid %ld ready\n", rank, (long) getpid());
    write_str(line);
    for (int i = 0; i < 600; ++i) {
        while (0 < interrupts) {
            --interrupts;
            snprintf(line, sizeof(line), "rank %lu %s SIGINT\n", rank,
                     ignore ? "ignored" : "caught");
            write_str(line);
            if (!ignore) {
                return 1;
            }
        }
        usleep(100000);
    }
    return 4;
}

static int mode_session(unsigned long rank, int crash_too)
{
    orte_launcher_job_info_t info = connect_or_die();
    char path[4200];
    snprintf(path, sizeof(path), "%s/rank%lu/deeper/still", info.session_dir, rank);
    char *slash = path + strlen(info.session_dir);
    for (char *p = slash + 1; NULL != (p = strchr(p, '/')); ++p) {
        *p = '\0';
        mkdir(path, 0700);
        *p = '/';
    }
    mkdir(path, 0700);
    strcat(path, "/file");
    FILE *f = fopen(path, "w");
    if (NULL != f) {
        fputs("data\n", f);
        fclose(f);
    }
    /* A link out of the tree: removal must delete the link, not follow it. */
    char link[4200];
    snprintf(link, sizeof(link), "%s/rank%lu/outside", info.session_dir, rank);
    const char *target = getenv("ORTE_TEST_LINK_TARGET");
    if (NULL != target && 0 != symlink(target, link)) {
        return 5;
    }
    char shm[256];
    snprintf(shm, sizeof(shm), "/%srank%lu", getenv(ORTE_LAUNCHER_ENV_SHM_PREFIX), rank);
    int fd = shm_open(shm, O_CREAT | O_RDWR, 0600);
    if (fd < 0) {
        return 6;
    }
    close(fd);
    printf("session %s\nshm /dev/shm%s\n", info.session_dir, shm);
    fflush(stdout);
    if (crash_too && 0 == rank) {
        crash();
    }
    orte_launcher_client_fence(0);
    return OPAL_SUCCESS == orte_launcher_client_finalize() ? 0 : 7;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: orte_test_rank MODE [ARGS]\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    opal_init_util(&argc, &argv);
    const char *mode = argv[1];
    unsigned long rank = env_number(ORTE_LAUNCHER_ENV_RANK);
    unsigned long size = env_number(ORTE_LAUNCHER_ENV_SIZE);
    long arg = 2 < argc ? strtol(argv[2], NULL, 10) : 0;
    long arg2 = 3 < argc ? strtol(argv[3], NULL, 10) : 0;
    int rc = 0;
    if (0 == strcmp(mode, "ident")) {
        printf("rank %lu of %lu pid %ld\n", rank, size, (long) getpid());
    } else if (0 == strcmp(mode, "env")) {
        for (int i = 2; i < argc; ++i) {
            const char *v = getenv(argv[i]);
            if (NULL == v) {
                printf("%s unset\n", argv[i]);
            } else {
                printf("%s=%s\n", argv[i], v);
            }
        }
    } else if (0 == strcmp(mode, "args")) {
        for (int i = 2; i < argc; ++i) {
            printf("arg[%d]=<%s>\n", i - 2, argv[i]);
        }
    } else if (0 == strcmp(mode, "cwd")) {
        char cwd[4096];
        printf("cwd %s\n", NULL != getcwd(cwd, sizeof(cwd)) ? cwd : "?");
    } else if (0 == strcmp(mode, "lines")) {
        rc = mode_lines(rank, arg);
    } else if (0 == strcmp(mode, "longline")) {
        rc = mode_longline(rank, arg);
    } else if (0 == strcmp(mode, "exit")) {
        rc = (long) rank == arg2 ? (int) arg : 0;
    } else if (0 == strcmp(mode, "crash")) {
        printf("rank %lu pid %ld\n", rank, (long) getpid());
        fflush(stdout);
        if ((long) rank == arg) {
            /* Let the others start sleeping first. */
            usleep(100000);
            crash();
        }
        sleep(600);
    } else if (0 == strcmp(mode, "sleep")) {
        sleep((unsigned) arg);
    } else if (0 == strcmp(mode, "trap")) {
        rc = mode_trap(rank, (int) arg);
    } else if (0 == strcmp(mode, "trapint")) {
        rc = mode_trapint(rank, (int) arg);
    } else if (0 == strcmp(mode, "stdin")) {
        char line[4096];
        while (NULL != fgets(line, sizeof(line), stdin)) {
            printf("rank %lu: %s", rank, line);
        }
        printf("rank %lu: eof\n", rank);
    } else if (0 == strcmp(mode, "connect-exit")) {
        connect_or_die();
        printf("rank %lu pid %ld connected\n", rank, (long) getpid());
    } else if (0 == strcmp(mode, "disconnect")) {
        connect_or_die();
        if ((long) rank == arg) {
            printf("rank %lu pid %ld disconnects\n", rank, (long) getpid());
            fflush(stdout);
            /* The client keeps its socket to itself: close every fd
             * beyond the standard three. */
            for (int fd = 3; fd < 1024; ++fd) {
                close(fd);
            }
            sleep(600);
        } else {
            rc = orte_launcher_client_fence(1);
            printf("rank %lu fence: %s\n", rank, opal_strerror_name(rc));
            rc = 3;
        }
    } else if (0 == strcmp(mode, "abort")) {
        connect_or_die();
        if (0 == rank) {
            orte_launcher_client_abort((int) arg, "the test asked for it");
            rc = 6;
        } else {
            sleep(600);
        }
    } else if (0 == strcmp(mode, "fence-fail")) {
        connect_or_die();
        if (1 == rank) {
            rc = orte_launcher_client_finalize();
        } else {
            rc = orte_launcher_client_fence(0);
            printf("rank %lu fence: %s\n", rank, opal_strerror_name(rc));
            rc = 3;
        }
    } else if (0 == strcmp(mode, "recover")) {
        /* Rank arg dies on a signal; the others learn it from their fence
         * and finish normally (under mcarun --enable-recovery). */
        connect_or_die();
        if ((long) rank == arg) {
            crash();
        }
        rc = orte_launcher_client_fence(0);
        printf("rank %lu fence: %s\n", rank, opal_strerror_name(rc));
        rc = orte_launcher_client_finalize();
        printf("rank %lu finalized: %s\n", rank, opal_strerror_name(rc));
        rc = OPAL_SUCCESS == rc ? 0 : 3;
    } else if (0 == strcmp(mode, "session")) {
        rc = mode_session(rank, (int) arg);
    } else if (0 == strcmp(mode, "affinity")) {
        cpu_set_t set;
        sched_getaffinity(0, sizeof(set), &set);
        printf("rank %lu cpus %d\n", rank, CPU_COUNT(&set));
    } else {
        fprintf(stderr, "orte_test_rank: unknown mode %s\n", mode);
        rc = 2;
    }
    opal_finalize_util();
    return rc;
}
