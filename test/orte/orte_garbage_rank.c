/*
 * A rank that writes garbage to mcarun's launcher socket.
 *
 *   orte_garbage_rank strangers
 *     Rank 0 connects properly, then opens one raw connection per kind of
 *     bad first message and prints "KIND: refused" when mcarun answers it
 *     with ERROR or closes it, "KIND: HUNG" when nothing happens within
 *     10 s. A connection that sent half a header stays open meanwhile.
 *     Then every rank fences and finalizes: the job must be unharmed.
 *
 *   orte_garbage_rank rank KIND
 *     Rank 0 says a valid HELLO on a raw connection, then sends garbage of
 *     KIND (scope, random, oversized, truncated); mcarun must end the job.
 *     The other ranks wait in a fence.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "orte/util/orte_launcher_client.h"
#include "orte/util/orte_launcher_env.h"
#include "orte/util/orte_wire.h"

static int raw_connect(void)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", getenv(ORTE_LAUNCHER_ENV_SOCKET));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || 0 != connect(fd, (struct sockaddr *) &addr, sizeof(addr))) {
        perror("raw connect");
        exit(8);
    }
    return fd;
}

static void send_bytes(int fd, const void *buf, size_t len)
{
    if (send(fd, buf, len, MSG_NOSIGNAL) < 0 && EPIPE != errno && ECONNRESET != errno) {
        perror("send");
    }
}

static size_t encode(const orte_wire_msg_t *msg, uint8_t *buf)
{
    size_t len = 0;
    if (OPAL_SUCCESS != orte_wire_encode(msg, buf, ORTE_WIRE_MAX_HEAD, &len)) {
        fprintf(stderr, "cannot encode %s\n", orte_wire_type_name(msg->type));
        exit(7);
    }
    return len;
}

static size_t hello(uint8_t *buf, uint32_t jobid, uint32_t rank)
{
    orte_wire_msg_t msg = {.type = ORTE_WIRE_HELLO, .jobid = jobid, .rank = rank, .pid = 1};
    return encode(&msg, buf);
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; ++i) {
        p[i] = (uint8_t) (v >> (8 * i));
    }
}

/* Waits for mcarun to answer with ERROR or to close; true if it did. */
static bool refused(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (1 != poll(&p, 1, 10000)) {
        return false;
    }
    uint8_t buf[8192];
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) {
        return true;
    }
    orte_wire_header_t hdr;
    return n >= (ssize_t) ORTE_WIRE_HEADER_SIZE &&
           OPAL_SUCCESS == orte_wire_header_decode(buf, false, &hdr, NULL, 0) &&
           ORTE_WIRE_ERROR == hdr.type;
}

static void stranger(const char *kind, uint32_t jobid, uint32_t size)
{
    uint8_t buf[ORTE_WIRE_MAX_HEAD + 4096];
    size_t len = 0;
    bool half_close = false;
    int fd = raw_connect();
    if (0 == strcmp(kind, "random")) {
        srand(12345);
        len = 4096;
        for (size_t i = 0; i < len; ++i) {
            buf[i] = (uint8_t) rand();
        }
    } else if (0 == strcmp(kind, "short-header")) {
        hello(buf, jobid, 0);
        len = 5;
        half_close = true;
    } else if (0 == strcmp(kind, "truncated-payload")) {
        len = ORTE_WIRE_HEADER_SIZE + 4;
        hello(buf, jobid, 0);
        half_close = true;
    } else if (0 == strcmp(kind, "oversized")) {
        len = hello(buf, jobid, 0);
        put_u32(buf + 8, 0xfffffff0u);
    } else if (0 == strcmp(kind, "bad-magic")) {
        len = hello(buf, jobid, 0);
        buf[0] ^= 0xff;
    } else if (0 == strcmp(kind, "bad-version")) {
        len = hello(buf, jobid, 0);
        buf[4] = 99;
    } else if (0 == strcmp(kind, "unknown-type")) {
        len = hello(buf, jobid, 0);
        buf[6] = 99;
    } else if (0 == strcmp(kind, "wrong-direction")) {
        orte_wire_msg_t msg = {.type = ORTE_WIRE_FINALIZE_ACK};
        len = encode(&msg, buf);
    } else if (0 == strcmp(kind, "not-hello-first")) {
        orte_wire_msg_t msg = {.type = ORTE_WIRE_COMMIT};
        len = encode(&msg, buf);
    } else if (0 == strcmp(kind, "wrong-jobid")) {
        len = hello(buf, jobid + 1, 0);
    } else if (0 == strcmp(kind, "rank-out-of-range")) {
        len = hello(buf, jobid, size);
    } else if (0 == strcmp(kind, "rank-taken")) {
        len = hello(buf, jobid, 0);
    } else if (0 == strcmp(kind, "trailing-bytes")) {
        len = hello(buf, jobid, 0);
        put_u32(buf + 8, 13);
        buf[len++] = 0;
    }
    send_bytes(fd, buf, len);
    if (half_close) {
        shutdown(fd, SHUT_WR);
    }
    printf("%s: %s\n", kind, refused(fd) ? "refused" : "HUNG");
    close(fd);
}

/* As root: a process of another user reaches the socket (through a hard
 * link outside the private session directory, the socket made writable
 * for everyone) and must be refused by its uid. */
static void foreign_uid(void)
{
    if (0 != geteuid()) {
        printf("foreign-uid: skipped (not root)\n");
        return;
    }
    const char *sock = getenv(ORTE_LAUNCHER_ENV_SOCKET);
    const char *tmp = getenv("TMPDIR");
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    char *link_path = addr.sun_path;
    int n = snprintf(link_path, sizeof(addr.sun_path), "%s/mcarun-foreign-%ld.sock",
                     NULL != tmp && '\0' != tmp[0] ? tmp : "/tmp", (long) getpid());
    if (n < 0 || (size_t) n >= sizeof(addr.sun_path) || 0 != link(sock, link_path) ||
        0 != chmod(sock, 0666)) {
        perror("foreign-uid: link");
        return;
    }
    pid_t pid = fork();
    if (0 == pid) {
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (0 != setgid(65534) || 0 != setuid(65534) ||
            0 != connect(fd, (struct sockaddr *) &addr, sizeof(addr))) {
            _exit(3);
        }
        uint8_t buf[ORTE_WIRE_MAX_HEAD];
        send_bytes(fd, buf,
                   hello(buf, (uint32_t) strtoul(getenv(ORTE_LAUNCHER_ENV_JOBID), NULL, 10), 0));
        _exit(refused(fd) ? 0 : 4);
    }
    int status = -1;
    waitpid(pid, &status, 0);
    chmod(sock, 0600);
    unlink(link_path);
    printf("foreign-uid: %s\n", WIFEXITED(status) && 0 == WEXITSTATUS(status) ? "refused" : "HUNG");
}

static int strangers(void)
{
    orte_launcher_job_info_t info;
    int rc = orte_launcher_client_connect(&info);
    if (OPAL_SUCCESS != rc) {
        printf("connect: %s\n", opal_strerror_name(rc));
        return 8;
    }
    int stalled = -1;
    if (0 == info.rank) {
        /* Half a header, left hanging while everything else goes on. */
        uint8_t buf[ORTE_WIRE_MAX_HEAD];
        hello(buf, info.jobid, 0);
        stalled = raw_connect();
        send_bytes(stalled, buf, 5);
        static const char *const kinds[] = {
            "random",          "short-header", "truncated-payload", "oversized",
            "bad-magic",       "bad-version",  "unknown-type",      "wrong-direction",
            "not-hello-first", "wrong-jobid",  "rank-out-of-range", "rank-taken",
            "trailing-bytes"};
        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); ++i) {
            stranger(kinds[i], info.jobid, info.size);
        }
        foreign_uid();
    }
    rc = orte_launcher_client_fence(1);
    printf("rank %u fence: %s\n", (unsigned) info.rank, opal_strerror_name(rc));
    if (0 <= stalled) {
        close(stalled);
    }
    int frc = orte_launcher_client_finalize();
    return OPAL_SUCCESS == rc && OPAL_SUCCESS == frc ? 0 : 1;
}

static int rank_garbage(const char *kind)
{
    uint32_t jobid = (uint32_t) strtoul(getenv(ORTE_LAUNCHER_ENV_JOBID), NULL, 10);
    uint32_t rank = (uint32_t) strtoul(getenv(ORTE_LAUNCHER_ENV_RANK), NULL, 10);
    if (0 != rank) {
        orte_launcher_job_info_t info;
        int rc = orte_launcher_client_connect(&info);
        if (OPAL_SUCCESS == rc) {
            rc = orte_launcher_client_fence(0);
        }
        printf("rank %u fence: %s\n", (unsigned) rank, opal_strerror_name(rc));
        sleep(600);
        return 3;
    }
    uint8_t buf[ORTE_WIRE_MAX_HEAD + 64];
    int fd = raw_connect();
    send_bytes(fd, buf, hello(buf, jobid, 0));
    if (recv(fd, buf, sizeof(buf), 0) <= 0) {
        printf("no WELCOME\n");
        return 4;
    }
    orte_wire_msg_t put = {.type = ORTE_WIRE_PUT,
                           .scope = ORTE_MODEX_SCOPE_GLOBAL,
                           .key = "k",
                           .key_len = 1,
                           .value = "v",
                           .value_len = 1};
    size_t len = encode(&put, buf);
    if (0 == strcmp(kind, "scope")) {
        buf[ORTE_WIRE_HEADER_SIZE] = 9;
        memcpy(buf + len, "v", 1);
        len += 1;
    } else if (0 == strcmp(kind, "random")) {
        for (size_t i = 0; i < 64; ++i) {
            buf[i] = (uint8_t) (i * 37 + 11);
        }
        len = 64;
    } else if (0 == strcmp(kind, "oversized")) {
        put_u32(buf + 8, 0xfffffff0u);
    } else if (0 == strcmp(kind, "truncated")) {
        len -= 2;
    }
    send_bytes(fd, buf, len);
    if (0 == strcmp(kind, "truncated")) {
        shutdown(fd, SHUT_WR);
    }
    printf("rank 0 sent %s garbage\n", kind);
    fflush(stdout);
    sleep(600);
    return 5;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    opal_init_util(&argc, &argv);
    int rc = 2;
    if (2 <= argc && 0 == strcmp(argv[1], "strangers")) {
        rc = strangers();
    } else if (3 <= argc && 0 == strcmp(argv[1], "rank")) {
        rc = rank_garbage(argv[2]);
    } else {
        fprintf(stderr, "usage: orte_garbage_rank strangers | rank KIND\n");
    }
    opal_finalize_util();
    return rc;
}
