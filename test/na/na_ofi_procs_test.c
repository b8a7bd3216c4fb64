/*
 * na/ofi between processes started alone: a server (na_ofi_peer) run by
 * itself writes its URI to a file, the client reads it and looks the
 * server up (Mercury's everyday case); a server killed while the
 * client has operations pending with it; and the shm provider's files of
 * killed processes.
 */
#include "opal/opal_config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "opal/mca/na/base/base.h"
#include "opal/util/opal_error.h"
#include "test/na/na_test_support.h"
#include "test/support/opal_test.h"

#define TIMEOUT 60
enum { NSEG = 16, SEG = 1000 };

static pid_t server_pid;
static char uri_file[256];

/* Starts na_ofi_peer on info and returns the URI it wrote (malloc'd). */
static char *start_server(const char *info)
{
    snprintf(uri_file, sizeof(uri_file), "/tmp/na_ofi_procs_%d.uri", (int) getpid());
    unlink(uri_file);
    server_pid = fork();
    ck_assert_int_ge(server_pid, 0);
    if (0 == server_pid) {
        execl(NA_TEST_BUILDDIR "/test/na/na_ofi_peer", "na_ofi_peer", info, uri_file,
              (char *) NULL);
        _exit(127);
    }
    time_t deadline = time(NULL) + TIMEOUT;
    struct stat st;
    while (0 != stat(uri_file, &st)) {
        ck_assert_msg(time(NULL) < deadline, "the server wrote no URI to %s", uri_file);
        int status;
        ck_assert_msg(0 == waitpid(server_pid, &status, WNOHANG), "the server exited early");
        usleep(10000);
    }
    FILE *f = fopen(uri_file, "r");
    char line[512] = "";
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
    fclose(f);
    unlink(uri_file);
    line[strcspn(line, "\n")] = '\0';
    return strdup(line);
}

/* Sends req as an unexpected message and waits for the expected reply. */
static void request(na_test_end_t *c, opal_na_addr_t *server, const char *req, void *reply,
                    size_t size, na_test_result_t *r)
{
    na_test_result_t w = {0};
    memset(r, 0, sizeof(*r));
    ck_assert_int_eq(opal_na_msg_recv_expected(c->cls, c->ctx, na_test_record, r, reply, size, NULL,
                                               server, 0, 77, NULL),
                     OPAL_SUCCESS);
    ck_assert_int_eq(opal_na_msg_send_unexpected(c->cls, c->ctx, na_test_record, &w, req,
                                                 strlen(req), NULL, server, 0, 77, NULL),
                     OPAL_SUCCESS);
    ck_assert(na_test_wait(c, 1, &w.calls, 1, TIMEOUT));
    ck_assert_int_eq(w.ret, OPAL_SUCCESS);
    ck_assert(na_test_wait(c, 1, &r->calls, 1, TIMEOUT));
}

/* Starts a server on info and looks it up from c's class. */
static opal_na_addr_t *reach_server(na_test_end_t *c, const char *info)
{
    char *uri = start_server(info);
    opal_na_addr_t *server = NULL;
    ck_assert_int_eq(opal_na_addr_lookup(c->cls, uri, &server), OPAL_SUCCESS);
    free(uri);
    return server;
}

/* Opens c on info, starts a server and checks that it echoes. */
static opal_na_addr_t *echoing_server(na_test_end_t *c, const char *info)
{
    na_test_init();
    ck_assert_int_eq(na_test_open(info, c), OPAL_SUCCESS);
    opal_na_addr_t *server = reach_server(c, info);
    char reply[64];
    na_test_result_t r;
    request(c, server, "echo hello", reply, sizeof(reply), &r);
    ck_assert_int_eq(r.ret, OPAL_SUCCESS);
    ck_assert_int_eq(r.size, 10);
    ck_assert(0 == memcmp(reply, "echo hello", 10));
    return server;
}

static void client_of_a_server_started_alone(const char *info)
{
    na_test_end_t c;
    opal_na_addr_t *server = echoing_server(&c, info);
    char reply[4096];
    na_test_result_t r;
    /* A 16-segment handle of the server's, read at an offset. */
    request(&c, server, "memh", reply, sizeof(reply), &r);
    ck_assert_int_eq(r.ret, OPAL_SUCCESS);
    opal_na_mem_handle_t *rmh = NULL;
    ck_assert_int_eq(opal_na_mem_handle_deserialize(c.cls, &rmh, reply, r.size), OPAL_SUCCESS);
    ck_assert_uint_eq(opal_na_mem_handle_get_size(c.cls, rmh), NSEG * SEG);
    if (opal_na_has_rma(c.cls)) {
        static unsigned char local[NSEG * SEG];
        opal_na_mem_handle_t *lmh = NULL;
        ck_assert_int_eq(
            opal_na_mem_handle_create(c.cls, local, sizeof(local), OPAL_NA_MEM_READ_WRITE, &lmh),
            OPAL_SUCCESS);
        ck_assert_int_eq(opal_na_mem_register(c.cls, lmh), OPAL_SUCCESS);
        na_test_result_t g = {0};
        size_t off = 1234, len = NSEG * SEG - off - 7;
        ck_assert_int_eq(
            opal_na_get(c.cls, c.ctx, na_test_record, &g, lmh, 5, rmh, off, len, server, 0, NULL),
            OPAL_SUCCESS);
        ck_assert(na_test_wait(&c, 1, &g.calls, 1, TIMEOUT));
        ck_assert_int_eq(g.ret, OPAL_SUCCESS);
        for (size_t i = 0; i < len; ++i) {
            ck_assert_int_eq(local[5 + i], (unsigned char) ((off + i) * 31 % 251));
        }
        opal_na_mem_handle_free(c.cls, lmh);
    }
    opal_na_mem_handle_free(c.cls, rmh);
    na_test_result_t w = {0};
    ck_assert_int_eq(opal_na_msg_send_unexpected(c.cls, c.ctx, na_test_record, &w, "quit", 4, NULL,
                                                 server, 0, 0, NULL),
                     OPAL_SUCCESS);
    ck_assert(na_test_wait(&c, 1, &w.calls, 1, TIMEOUT));
    int status = 0;
    ck_assert_int_eq(waitpid(server_pid, &status, 0), server_pid);
    ck_assert(WIFEXITED(status) && 0 == WEXITSTATUS(status));
    opal_na_addr_free(c.cls, server);
    na_test_close(&c);
    na_test_fini();
}

START_TEST(a_client_reaches_a_tcp_server_started_alone_by_its_uri_file)
{
    client_of_a_server_started_alone("ofi+tcp://127.0.0.1");
}
END_TEST

START_TEST(a_client_reaches_a_shm_server_started_alone_by_its_uri_file)
{
    client_of_a_server_started_alone("ofi+shm");
}
END_TEST

/* What the peer-gone hook heard. */
static struct {
    int calls;
    bool finalized;
    bool is_server;
    opal_na_addr_t *server;
    char why[256];
} gone;

static void gone_hook(opal_na_class_t *cls, opal_na_addr_t *addr, bool finalized, const char *why,
                      void *arg)
{
    (void) arg;
    gone.calls++;
    gone.finalized = finalized;
    gone.is_server = opal_na_addr_cmp(cls, addr, gone.server);
    snprintf(gone.why, sizeof(gone.why), "%s", why);
}

/* Listens with gone_hook, posts a receive from server that it never
 * answers (tag 99, into reply, op may be NULL) and has it quit. */
static void quit_while_waiting(na_test_end_t *c, opal_na_addr_t *server, void *reply, size_t size,
                               na_test_result_t *never, opal_na_op_id_t *op)
{
    memset(&gone, 0, sizeof(gone));
    gone.server = server;
    ck_assert_int_eq(opal_na_base_peer_gone_hook_set(c->cls, gone_hook, NULL), OPAL_SUCCESS);
    na_test_result_t w = {0};
    ck_assert_int_eq(opal_na_msg_recv_expected(c->cls, c->ctx, na_test_record, never, reply, size,
                                               NULL, server, 0, 99, op),
                     OPAL_SUCCESS);
    ck_assert_int_eq(opal_na_msg_send_unexpected(c->cls, c->ctx, na_test_record, &w, "quit", 4,
                                                 NULL, server, 0, 0, NULL),
                     OPAL_SUCCESS);
    ck_assert(na_test_wait(c, 1, &w.calls, 1, TIMEOUT));
}

/* Waits for the server to exit cleanly, then progresses polls times. */
static void reap_server_then_poll(na_test_end_t *c, int polls)
{
    int status = 0;
    ck_assert_int_eq(waitpid(server_pid, &status, 0), server_pid);
    ck_assert(WIFEXITED(status) && 0 == WEXITSTATUS(status));
    for (int i = 0; i < polls; ++i) {
        (void) opal_na_poll(c->cls, c->ctx, NULL);
        (void) opal_na_trigger(c->ctx, 0, NULL);
    }
}

/* The server finalizes (after "quit") while the client waits for a reply
 * that never comes: its goodbye fails that receive with
 * OPAL_ERR_PEER_FAILED and tells the client's peer-gone hook, once, that
 * the server finalized; then a new server at another address is reached
 * as usual. */
static void server_that_finalizes_says_goodbye(const char *info)
{
    na_test_end_t c;
    opal_na_addr_t *server = echoing_server(&c, info);
    char reply[4096];
    na_test_result_t r;
    na_test_result_t never = {0}, w = {0};
    quit_while_waiting(&c, server, reply, sizeof(reply), &never, NULL);
    ck_assert_msg(na_test_wait(&c, 1, &never.calls, 1, TIMEOUT),
                  "the receive the server never answers did not complete");
    ck_assert_int_eq(never.ret, OPAL_ERR_PEER_FAILED);
    ck_assert_msg(na_test_wait(&c, 1, &gone.calls, 1, TIMEOUT),
                  "the peer-gone hook was not called");
    reap_server_then_poll(&c, 100);
    ck_assert_int_eq(never.calls, 1);
    ck_assert_msg(1 == gone.calls && gone.finalized && gone.is_server,
                  "the hook: %d call(s), finalized %d, for the server %d (%s)", gone.calls,
                  gone.finalized, gone.is_server, gone.why);
    ck_assert_msg(NULL != strstr(gone.why, "finalized"), "the hook's words: %s", gone.why);
    (void) opal_na_base_peer_gone_hook_set(c.cls, NULL, NULL);
    opal_na_addr_free(c.cls, server);
    /* The class goes on: a new server is reached. */
    server = reach_server(&c, info);
    request(&c, server, "echo again", reply, sizeof(reply), &r);
    ck_assert_int_eq(r.ret, OPAL_SUCCESS);
    ck_assert_int_eq(r.size, 10);
    ck_assert_int_eq(opal_na_msg_send_unexpected(c.cls, c.ctx, na_test_record, &w, "quit", 4, NULL,
                                                 server, 0, 0, NULL),
                     OPAL_SUCCESS);
    int status = 0;
    ck_assert_int_eq(waitpid(server_pid, &status, 0), server_pid);
    opal_na_addr_free(c.cls, server);
    na_test_close(&c);
    na_test_fini();
}

/* With na_ofi_finalize_timeout 0 the server says no goodbye: once it has
 * exited, the receive it never answers is still pending and the hook has
 * heard nothing (a goodbye, sent and completed before the server exits,
 * would have come by then); a cancel then completes the receive. */
static void server_with_no_goodbyes_says_none(const char *info)
{
    setenv("OPAL_MCA_na_ofi_finalize_timeout", "0", 1);
    na_test_end_t c;
    opal_na_addr_t *server = echoing_server(&c, info);
    unsetenv("OPAL_MCA_na_ofi_finalize_timeout");
    char reply[64];
    na_test_result_t never = {0};
    opal_na_op_id_t *op = opal_na_op_create(c.cls);
    ck_assert_ptr_nonnull(op);
    quit_while_waiting(&c, server, reply, sizeof(reply), &never, op);
    reap_server_then_poll(&c, 1000);
    ck_assert_msg(0 == never.calls && 0 == gone.calls,
                  "a server told to say no goodbye said one: the receive completed %d time(s) "
                  "(%d), the hook heard %d (%s)",
                  never.calls, never.ret, gone.calls, gone.why);
    ck_assert_int_eq(opal_na_cancel(c.cls, c.ctx, op), OPAL_SUCCESS);
    ck_assert(na_test_wait(&c, 1, &never.calls, 1, TIMEOUT));
    ck_assert_int_eq(never.ret, OPAL_ERR_CANCELED);
    ck_assert_int_eq(opal_na_op_destroy(c.cls, op), OPAL_SUCCESS);
    (void) opal_na_base_peer_gone_hook_set(c.cls, NULL, NULL);
    opal_na_addr_free(c.cls, server);
    na_test_close(&c);
    na_test_fini();
}

START_TEST(a_tcp_server_told_to_say_no_goodbye_says_none)
{
    server_with_no_goodbyes_says_none("ofi+tcp://127.0.0.1");
}
END_TEST

START_TEST(a_tcp_server_that_finalizes_says_goodbye_to_its_client)
{
    server_that_finalizes_says_goodbye("ofi+tcp://127.0.0.1");
}
END_TEST

START_TEST(a_shm_server_that_finalizes_says_goodbye_to_its_client)
{
    server_that_finalizes_says_goodbye("ofi+shm");
}
END_TEST

START_TEST(operations_pending_with_a_killed_server_complete_with_an_error)
{
    na_test_init();
    const char *info = "ofi+tcp://127.0.0.1";
    na_test_end_t c;
    ck_assert_int_eq(na_test_open(info, &c), OPAL_SUCCESS);
    opal_na_addr_t *server = reach_server(&c, info);
    char reply[4096];
    na_test_result_t r;
    request(&c, server, "memh", reply, sizeof(reply), &r);
    ck_assert_int_eq(r.ret, OPAL_SUCCESS);
    opal_na_mem_handle_t *rmh = NULL, *lmh = NULL;
    ck_assert_int_eq(opal_na_mem_handle_deserialize(c.cls, &rmh, reply, r.size), OPAL_SUCCESS);
    enum { GETS = 200 };
    static unsigned char local[NSEG * SEG];
    ck_assert_int_eq(
        opal_na_mem_handle_create(c.cls, local, sizeof(local), OPAL_NA_MEM_READ_WRITE, &lmh),
        OPAL_SUCCESS);
    ck_assert_int_eq(opal_na_mem_register(c.cls, lmh), OPAL_SUCCESS);
    /* A reply that never comes, and gets until some fail. */
    na_test_result_t never = {0};
    ck_assert_int_eq(opal_na_msg_recv_expected(c.cls, c.ctx, na_test_record, &never, reply,
                                               sizeof(reply), NULL, server, 0, 99, NULL),
                     OPAL_SUCCESS);
    ck_assert_int_eq(kill(server_pid, SIGKILL), 0);
    int status;
    ck_assert_int_eq(waitpid(server_pid, &status, 0), server_pid);
    int done = 0, failed = 0;
    na_test_result_t g[GETS];
    memset(g, 0, sizeof(g));
    int started = 0;
    for (int i = 0; i < GETS; ++i) {
        if (OPAL_SUCCESS == opal_na_get(c.cls, c.ctx, na_test_record, &g[i], lmh, 0, rmh, 0,
                                        sizeof(local), server, 0, NULL)) {
            started++;
        }
    }
    time_t deadline = time(NULL) + TIMEOUT;
    while (time(NULL) < deadline) {
        (void) opal_na_poll(c.cls, c.ctx, NULL);
        (void) opal_na_trigger(c.ctx, 0, NULL);
        done = failed = 0;
        for (int i = 0; i < GETS; ++i) {
            done += g[i].calls;
            failed += g[i].calls > 0 && OPAL_SUCCESS != g[i].ret;
        }
        if (done == started && 1 == never.calls) {
            break;
        }
    }
    ck_assert_int_eq(done, started);
    ck_assert_int_gt(failed, 0);
    ck_assert_int_eq(never.calls, 1);
    ck_assert_int_eq(never.ret, OPAL_ERR_PEER_FAILED);
    for (int i = 0; i < GETS; ++i) {
        ck_assert_int_le(g[i].calls, 1);
    }
    opal_na_mem_handle_free(c.cls, rmh);
    opal_na_mem_handle_free(c.cls, lmh);
    opal_na_addr_free(c.cls, server);
    na_test_close(&c);
    na_test_fini();
}
END_TEST

/* How many files the shm provider named after pid ("<pid>:<domain>:<ep>")
 * are in /dev/shm. */
static int shm_files_of(pid_t pid)
{
    char prefix[32];
    snprintf(prefix, sizeof(prefix), "%ld:", (long) pid);
    return opal_test_shm_files(prefix);
}

/* A killed process cannot remove its shm file: opal_na_cleanup (what
 * `opal_info --cleanup` runs) does, once the process is gone, and not
 * before; so does every ofi+shm class that opens. */
START_TEST(cleanup_removes_a_killed_shm_server_file_and_never_a_live_one)
{
    na_test_init();
    char *uri = start_server("ofi+shm");
    free(uri);
    ck_assert_msg(shm_files_of(server_pid) > 0, "the server has no file in /dev/shm");
    (void) opal_na_cleanup();
    ck_assert_msg(shm_files_of(server_pid) > 0, "cleanup removed a live server's file");
    ck_assert_int_eq(kill(server_pid, SIGKILL), 0);
    int status;
    ck_assert_int_eq(waitpid(server_pid, &status, 0), server_pid);
    ck_assert_msg(shm_files_of(server_pid) > 0,
                  "the provider removed the file of a killed process");
    ck_assert_int_ge(opal_na_cleanup(), 1);
    ck_assert_int_eq(shm_files_of(server_pid), 0);
    na_test_fini();
}
END_TEST

/* A process that had this process's pid was killed and left its shm
 * file, named as this process's first endpoint will be: this process's
 * ofi+shm classes open all the same (the provider alone fails with
 * "Device or resource busy"), and work. */
START_TEST(a_file_a_dead_process_with_this_pid_left_does_not_stop_shm)
{
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (0 == child) {
        char path[64];
        snprintf(path, sizeof(path), "/%ld:0:0", (long) getpid());
        int fd = shm_open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        char junk[64];
        memset(junk, 0xa5, sizeof(junk));
        /* Last written an hour ago, as a dead process's file would be. */
        struct timespec then[2] = {{.tv_sec = time(NULL) - 3600}, {.tv_sec = time(NULL) - 3600}};
        if (fd < 0 || sizeof(junk) != write(fd, junk, sizeof(junk)) || 0 != futimens(fd, then)) {
            _exit(2);
        }
        close(fd);
        na_test_init();
        na_test_end_t e[2];
        if (OPAL_SUCCESS != na_test_open("ofi+shm", &e[0])) {
            _exit(3);
        }
        if (OPAL_SUCCESS != na_test_open("ofi+shm", &e[1])) {
            _exit(4);
        }
        /* One message from the first to the second: both endpoints work. */
        char *uri = na_test_uri(&e[1]);
        opal_na_addr_t *peer = NULL;
        if (NULL == uri || OPAL_SUCCESS != opal_na_addr_lookup(e[0].cls, uri, &peer)) {
            _exit(5);
        }
        free(uri);
        na_test_result_t sent = {0}, got = {0};
        char buf[64];
        if (OPAL_SUCCESS != opal_na_msg_recv_unexpected(e[1].cls, e[1].ctx, na_test_record, &got,
                                                        buf, sizeof(buf), NULL, NULL) ||
            OPAL_SUCCESS != opal_na_msg_send_unexpected(e[0].cls, e[0].ctx, na_test_record, &sent,
                                                        "hi", 2, NULL, peer, 0, 5, NULL)) {
            _exit(6);
        }
        if (!na_test_wait(e, 2, &sent.calls, 1, TIMEOUT) ||
            !na_test_wait(e, 2, &got.calls, 1, TIMEOUT) || OPAL_SUCCESS != got.ret ||
            2 != got.size) {
            _exit(7);
        }
        if (NULL != got.source) {
            opal_na_addr_free(e[1].cls, got.source);
        }
        opal_na_addr_free(e[0].cls, peer);
        na_test_close(&e[1]);
        na_test_close(&e[0]);
        na_test_fini();
        _exit(0 == shm_files_of(getpid()) ? 0 : 8);
    }
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFEXITED(status) && 0 == WEXITSTATUS(status),
                  "the child failed at step %d (2: planting, 3-4: opening shm, 5-7: a message, 8: "
                  "a file outlived its class)",
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    ck_assert_int_eq(shm_files_of(child), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("na_ofi_procs");
    OPAL_TEST_ADD(s, a_client_reaches_a_tcp_server_started_alone_by_its_uri_file);
    OPAL_TEST_ADD(s, a_client_reaches_a_shm_server_started_alone_by_its_uri_file);
    OPAL_TEST_ADD(s, a_tcp_server_that_finalizes_says_goodbye_to_its_client);
    OPAL_TEST_ADD(s, a_shm_server_that_finalizes_says_goodbye_to_its_client);
    OPAL_TEST_ADD(s, a_tcp_server_told_to_say_no_goodbye_says_none);
    OPAL_TEST_ADD(s, operations_pending_with_a_killed_server_complete_with_an_error);
    OPAL_TEST_ADD(s, cleanup_removes_a_killed_shm_server_file_and_never_a_live_one);
    OPAL_TEST_ADD(s, a_file_a_dead_process_with_this_pid_left_does_not_stop_shm);
    return opal_test_run(s);
}
