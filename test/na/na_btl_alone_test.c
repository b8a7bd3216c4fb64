/*
 * na/btl between processes started alone: a server and a client started
 * separately (the URI through a file) over sm, over ofi tcp and over
 * btl/tcp (the project's own sockets), and the
 * cleanup of what a killed process left in /dev/shm (opal_info --cleanup
 * and a class's start), never a live process's files.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test/orte/mcarun_test_support.h"
#include "test/support/opal_test.h"

/* A process of the test: its pid and where its output goes. */
typedef struct child_t {
    pid_t pid;
    char out[PATH_MAX];
} child_t;

static char workdir[256];

/* Starts `prog args...` with btl (and, when given, the ofi provider) in its
 * environment, output into a file; under valgrind, under valgrind. */
/* The na class the children open (their third argument); NULL: btl. */
static const char *na_info;

static void start(child_t *c, const char *btl, const char *provider, const char *role,
                  const char *uri_file)
{
    static int serial;
    snprintf(c->out, sizeof(c->out), "%s/%s.%d.out", workdir, role, serial++);
    c->pid = fork();
    ck_assert_int_ge(c->pid, 0);
    if (0 == c->pid) {
        int fd = open(c->out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fd, 1);
        dup2(fd, 2);
        setenv("OPAL_MCA_btl", btl, 1);
        if (NULL != provider) {
            setenv("OPAL_MCA_ofi_provider_include", provider, 1);
        }
        const char *prog = mcarun_test_build_path("test/na/na_btl_alone");
        if (opal_test_under_valgrind()) {
            char supp[PATH_MAX + 32];
            snprintf(supp, sizeof(supp), "--suppressions=%s/../contrib/valgrind.supp",
                     opal_test_srcdir());
            execlp("valgrind", "valgrind", "--quiet", "--error-exitcode=97", "--leak-check=full",
                   "--errors-for-leak-kinds=definite,indirect",
                   "--show-leak-kinds=definite,indirect", supp, prog, role, uri_file, na_info,
                   (char *) NULL);
        } else {
            execl(prog, prog, role, uri_file, na_info, (char *) NULL);
        }
        _exit(127);
    }
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (NULL == f) {
        return strdup("");
    }
    char *buf = calloc(1, 65536);
    size_t n = fread(buf, 1, 65535, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Waits (up to 90 s) for c; returns its exit status (128 + signal). */
static int finish(child_t *c)
{
    for (int i = 0; i < 9000; ++i) {
        int status;
        pid_t p = waitpid(c->pid, &status, WNOHANG);
        if (p == c->pid) {
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        usleep(10000);
    }
    kill(c->pid, SIGKILL);
    (void) waitpid(c->pid, NULL, 0);
    return -1;
}

/* Waits until path exists (the server's URI file) or c ended. */
static bool wait_file(const char *path, child_t *c)
{
    for (int i = 0; i < 9000; ++i) {
        if (0 == access(path, R_OK)) {
            return true;
        }
        if (c->pid == waitpid(c->pid, NULL, WNOHANG)) {
            return false;
        }
        usleep(10000);
    }
    return false;
}

static void expect_output(child_t *c, int status, const char *want)
{
    char *out = slurp(c->out);
    if (0 != status || NULL == strstr(out, want)) {
        fprintf(stderr, "--- %s (exit %d):\n%s\n---\n", c->out, status, out);
        free(out);
        ck_abort_msg("%s: exit %d, wanted \"%s\"", c->out, status, want);
    }
    free(out);
}

/* How many /dev/shm entries name pid as the standalone job's owner. */
static int shm_files_of(pid_t pid)
{
    char suffix[32];
    snprintf(suffix, sizeof(suffix), ".%ld", (long) pid);
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "opal-mca.%lu.", (unsigned long) geteuid());
    DIR *d = opendir("/dev/shm");
    int n = 0;
    struct dirent *e;
    while (NULL != d && NULL != (e = readdir(d))) {
        size_t len = strlen(e->d_name), slen = strlen(suffix);
        if (0 == strncmp(e->d_name, prefix, strlen(prefix)) && len > slen &&
            0 == strcmp(e->d_name + len - slen, suffix)) {
            ++n;
        }
    }
    if (NULL != d) {
        closedir(d);
    }
    return n;
}

static void server_and_client(const char *btl, const char *provider)
{
    char uri_file[PATH_MAX];
    snprintf(uri_file, sizeof(uri_file), "%s/uri.%s", workdir, btl);
    unlink(uri_file);
    child_t server, client;
    start(&server, btl, provider, "server", uri_file);
    if (!wait_file(uri_file, &server)) {
        expect_output(&server, finish(&server), "(the server wrote no URI)");
    }
    start(&client, btl, provider, "client", uri_file);
    int cs = finish(&client);
    int ss = finish(&server);
    expect_output(&client, cs, "client ok");
    expect_output(&server, ss, "server ok");
    ck_assert_int_eq(shm_files_of(server.pid), 0);
    ck_assert_int_eq(shm_files_of(client.pid), 0);
}

START_TEST(a_server_and_a_client_started_alone_talk_over_sm)
{
    server_and_client("self,sm", NULL);
}
END_TEST

START_TEST(a_server_and_a_client_started_alone_talk_over_btl_tcp)
{
    /* The client's card carries its tcp address: the server connects
     * back to nobody, it adopts the client's connection. */
    server_and_client("self,tcp", NULL);
}
END_TEST

START_TEST(a_server_and_a_client_started_alone_talk_over_ofi_tcp)
{
    if (!mcarun_test_component_built("btl", "ofi", NA_TEST_PLUGIN_DIRS)) {
        return;
    }
    server_and_client("self,ofi", "tcp;ofi_rxm");
}
END_TEST

/* Reads "census: fds F maps M" from a census client's output. */
static void census(const char *btl, const char *uri_file, unsigned *fds, unsigned *maps)
{
    child_t c;
    start(&c, btl, NULL, "census", uri_file);
    int status = finish(&c);
    expect_output(&c, status, "census ok");
    char *out = slurp(c.out);
    const char *line = strstr(out, "census: ");
    ck_assert_msg(NULL != line && 2 == sscanf(line, "census: fds %u maps %u", fds, maps),
                  "census said: %s", out);
    free(out);
}

/* A server outlives many clients (each 20 echoes, then gone; more than
 * btl_sm_fbox_max = 32 of them): what it held for each goes back, so
 * its descriptors and mappings stay as they were, and every client gets
 * a fast box both ways (those of clients gone are reused). Not under
 * valgrind (one process start each: minutes there, for a check of
 * counts that ASan's build runs too). */
static void a_server_outlives_its_clients(const char *btl, int visits)
{
    char uri_file[PATH_MAX];
    snprintf(uri_file, sizeof(uri_file), "%s/uri.visits", workdir);
    unlink(uri_file);
    child_t server;
    setenv("OPAL_MCA_btl_base_verbose", "30", 1);
    start(&server, btl, NULL, "server", uri_file);
    unsetenv("OPAL_MCA_btl_base_verbose");
    if (!wait_file(uri_file, &server)) {
        expect_output(&server, finish(&server), "(the server wrote no URI)");
    }
    unsigned fds0, maps0, fds1, maps1;
    child_t v;
    start(&v, btl, NULL, "visit", uri_file);
    expect_output(&v, finish(&v), "visit ok");
    census(btl, uri_file, &fds0, &maps0);
    for (int i = 0; i < visits; ++i) {
        start(&v, btl, NULL, "visit", uri_file);
        expect_output(&v, finish(&v), "visit ok");
    }
    census(btl, uri_file, &fds1, &maps1);
    child_t client;
    start(&client, btl, NULL, "client", uri_file);
    int cs = finish(&client);
    int ss = finish(&server);
    expect_output(&client, cs, "client ok");
    expect_output(&server, ss, "server ok");
    ck_assert_msg(fds1 <= fds0 + 1 && maps1 <= maps0 + 2,
                  "after %d clients more the server has %u descriptors (%u before) and %u "
                  "mappings (%u before)",
                  visits, fds1, fds0, maps1, maps0);
    if (0 == strcmp(btl, "self,sm")) {
        /* One box from the server to each visitor (the census and the
         * client send too few messages for one). */
        char *out = slurp(server.out);
        int boxes = 0;
        for (const char *p = out; NULL != (p = strstr(p, "btl sm: fast box ")); ++p) {
            boxes += NULL != strstr(p, " set up to rank ") &&
                     strstr(p, " set up to rank ") < strchr(p, '\n');
        }
        free(out);
        ck_assert_msg(boxes == visits + 1, "the server set up %d fast boxes for %d visitors", boxes,
                      visits + 1);
    }
}

START_TEST(a_server_started_alone_outlives_many_clients_over_sm)
{
    if (!opal_test_under_valgrind()) {
        a_server_outlives_its_clients("self,sm", 40);
    }
}
END_TEST

START_TEST(a_server_started_alone_outlives_many_clients_over_btl_tcp)
{
    if (!opal_test_under_valgrind()) {
        a_server_outlives_its_clients("self,tcp", 40);
    }
}
END_TEST

#if defined(NA_ALONE_HAVE_OFI)
/* The same over na/ofi's ofi+tcp (tcp;ofi_rxm): the provider's
 * connection to each visitor goes when the visitor does. */
START_TEST(a_server_started_alone_outlives_many_clients_over_ofi_tcp)
{
    if (!opal_test_under_valgrind()) {
        na_info = "ofi+tcp://127.0.0.1";
        a_server_outlives_its_clients("self", 20);
        na_info = NULL;
    }
}
END_TEST
#endif

/* Starts an idle standalone process and waits until it is up. */
static void start_idle(child_t *c, const char *name)
{
    char uri_file[PATH_MAX];
    snprintf(uri_file, sizeof(uri_file), "%s/uri.%s", workdir, name);
    unlink(uri_file);
    start(c, "self,sm", NULL, "idle", uri_file);
    ck_assert_msg(wait_file(uri_file, c), "the idle process did not start");
}

START_TEST(cleanup_removes_a_killed_process_files_and_never_a_live_ones)
{
    child_t dead, live;
    start_idle(&dead, "dead");
    start_idle(&live, "live");
    ck_assert_int_gt(shm_files_of(dead.pid), 0);
    ck_assert_int_gt(shm_files_of(live.pid), 0);
    kill(dead.pid, SIGKILL);
    (void) finish(&dead);
    /* Killed: nothing ran at its exit, its segment and card stay. */
    ck_assert_int_gt(shm_files_of(dead.pid), 0);

    const char *args[] = {"--cleanup", NULL};
    const char *info = mcarun_test_build_path("tools/opal_info/opal_info");
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof(cmd), "%s %s > %s/cleanup.out 2>&1", info, args[0], workdir);
    ck_assert_int_eq(system(cmd), 0);
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/cleanup.out", workdir);
    char *out = slurp(path);
    ck_assert_msg(NULL != strstr(out, "--cleanup removed"), "opal_info said: %s", out);
    free(out);
    ck_assert_int_eq(shm_files_of(dead.pid), 0);
    ck_assert_int_gt(shm_files_of(live.pid), 0);

    kill(live.pid, SIGKILL);
    (void) finish(&live);
    ck_assert_int_gt(shm_files_of(live.pid), 0);
    /* A class's start cleans up too: a server that starts and ends. */
    server_and_client("self,sm", NULL);
    ck_assert_int_eq(shm_files_of(live.pid), 0);
}
END_TEST

int main(void)
{
    setenv("OPAL_MCA_mca_base_component_path", NA_TEST_PLUGIN_DIRS, 0);
    setenv("NA_TEST_DEADLINE", "60", 0);
    unsetenv("OPAL_ORTE_SHM_PREFIX");
    snprintf(workdir, sizeof(workdir), "/tmp/na_btl_alone.%ld", (long) getpid());
    if (0 != mkdir(workdir, 0700) && EEXIST != errno) {
        perror(workdir);
        return 1;
    }
    Suite *s = suite_create("na_btl_alone");
    OPAL_TEST_ADD(s, a_server_and_a_client_started_alone_talk_over_sm);
    OPAL_TEST_ADD(s, a_server_and_a_client_started_alone_talk_over_ofi_tcp);
    OPAL_TEST_ADD(s, a_server_and_a_client_started_alone_talk_over_btl_tcp);
    OPAL_TEST_ADD(s, cleanup_removes_a_killed_process_files_and_never_a_live_ones);
    OPAL_TEST_ADD(s, a_server_started_alone_outlives_many_clients_over_sm);
    OPAL_TEST_ADD(s, a_server_started_alone_outlives_many_clients_over_btl_tcp);
#if defined(NA_ALONE_HAVE_OFI)
    OPAL_TEST_ADD(s, a_server_started_alone_outlives_many_clients_over_ofi_tcp);
#endif
    int rc = opal_test_run(s);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", workdir);
    (void) system(cmd);
    return rc;
}
