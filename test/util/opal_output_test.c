/* Output streams: destinations, prefixes, verbosity, id reuse, invalid ids,
 * life before init and after finalize, and whole lines under concurrency. */
#include "opal/opal_config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_show_help.h"
#include "test/support/opal_test.h"

static char tmpdir[256];

static void make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof(tmpdir), "%s/opal_output_test.XXXXXX", NULL != base ? base : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

#define PATH_SIZE 300

/* path = tmpdir/name; path holds PATH_SIZE bytes. */
static void tmp_path(char *path, const char *name)
{
    snprintf(path, PATH_SIZE, "%s/%s", tmpdir, name);
}

/* The whole file, malloc'd ("" for a missing file). */
static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (NULL == fp) {
        return strdup("");
    }
    char *buf = NULL;
    size_t cap = 0;
    ssize_t n = getdelim(&buf, &cap, '\0', fp);
    fclose(fp);
    if (n < 0) {
        free(buf);
        return strdup("");
    }
    return buf;
}

static int open_file_stream(const char *prefix, int verbosity, const char *path)
{
    opal_output_stream_t lds = {
        .lds_prefix = prefix, .lds_verbose_level = verbosity, .lds_file_name = path};
    int id = opal_output_open(&lds);
    ck_assert_int_gt(id, 0);
    return id;
}

/* Redirects fd (1 or 2) into a file until capture_end(), which returns
 * what was written there (malloc'd). */
typedef struct {
    int fd;
    int saved;
    char path[PATH_SIZE];
} capture_t;

static void capture_begin(capture_t *c, int fd)
{
    c->fd = fd;
    tmp_path(c->path, 1 == fd ? "stdout" : "stderr");
    fflush(NULL);
    int tmp = open(c->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(tmp, 0);
    c->saved = dup(fd);
    ck_assert_int_ge(c->saved, 0);
    ck_assert_int_ge(dup2(tmp, fd), 0);
    close(tmp);
}

static char *capture_end(capture_t *c)
{
    fflush(NULL);
    dup2(c->saved, c->fd);
    close(c->saved);
    return slurp(c->path);
}

START_TEST(file_stream_writes_prefixed_message)
{
    make_tmpdir();
    char path[PATH_SIZE];
    tmp_path(path, "out.log");
    ck_assert_int_ne(access(path, F_OK), 0);
    int id = open_file_stream("[host:1] btl: ", 0, path);
    opal_output(id, "hello %d", 42);
    opal_output_close(id);
    char *text = slurp(path);
    ck_assert_str_eq(text, "[host:1] btl: hello 42\n");
    free(text);
    remove_tmpdir();
}
END_TEST

START_TEST(every_line_of_a_message_gets_the_prefix)
{
    make_tmpdir();
    char path[PATH_SIZE];
    tmp_path(path, "out.log");
    int id = open_file_stream("P: ", 0, path);
    opal_output(id, "one\ntwo\n\nfour\n");
    opal_output(id, "%s", "");
    opal_output_close(id);
    char *text = slurp(path);
    ck_assert_str_eq(text, "P: one\nP: two\nP: \nP: four\nP: \n");
    free(text);
    remove_tmpdir();
}
END_TEST

START_TEST(long_message_is_written_whole)
{
    make_tmpdir();
    char path[PATH_SIZE];
    tmp_path(path, "out.log");
    int id = open_file_stream("pre ", 0, path);
    size_t n = 10000;
    char *big = malloc(n + 1);
    memset(big, 'x', n);
    big[n] = '\0';
    opal_output(id, "%s|end", big);
    opal_output_close(id);
    char *text = slurp(path);
    ck_assert_uint_eq(strlen(text), 4 + n + 5);
    ck_assert(0 == strncmp(text, "pre xxx", 7));
    ck_assert_str_eq(text + 4 + n, "|end\n");
    free(text);
    free(big);
    remove_tmpdir();
}
END_TEST

START_TEST(verbose_prints_only_up_to_stream_level)
{
    make_tmpdir();
    char path[PATH_SIZE];
    tmp_path(path, "out.log");
    int id = open_file_stream(NULL, 5, path);
    ck_assert_int_eq(opal_output_get_verbosity(id), 5);
    opal_output_verbose(5, id, "at five");
    opal_output_verbose(6, id, "at six, hidden");
    ck_assert(opal_output_check_verbosity(5, id));
    ck_assert(!opal_output_check_verbosity(6, id));
    opal_output_set_verbosity(id, 10);
    ck_assert_int_eq(opal_output_get_verbosity(id), 10);
    opal_output_verbose(6, id, "at six, shown");
    opal_output_set_verbosity(id, 0);
    opal_output_verbose(1, id, "at one, hidden");
    opal_output(id, "plain output ignores verbosity");
    opal_output_close(id);
    char *text = slurp(path);
    ck_assert_str_eq(text, "at five\nat six, shown\nplain output ignores verbosity\n");
    free(text);
    remove_tmpdir();
}
END_TEST

START_TEST(file_is_appended_to)
{
    make_tmpdir();
    char path[PATH_SIZE];
    tmp_path(path, "out.log");
    FILE *fp = fopen(path, "w");
    fputs("existing\n", fp);
    fclose(fp);
    int id = open_file_stream(NULL, 0, path);
    opal_output(id, "added");
    opal_output_close(id);
    id = open_file_stream(NULL, 0, path);
    opal_output(id, "again");
    opal_output_close(id);
    char *text = slurp(path);
    ck_assert_str_eq(text, "existing\nadded\nagain\n");
    free(text);
    remove_tmpdir();
}
END_TEST

START_TEST(unwritable_file_fails_naming_it)
{
    make_tmpdir();
    char log[PATH_SIZE];
    tmp_path(log, "help.log");
    int help_id = open_file_stream(NULL, 0, log);
    int old = opal_show_help_set_output(help_id);

    char missing[PATH_SIZE];
    tmp_path(missing, "no-such-dir/out.log");
    opal_output_stream_t lds = {.lds_file_name = missing};
    ck_assert_int_eq(opal_output_open(&lds), OPAL_ERR_NOT_FOUND);

    opal_show_help_set_output(old);
    opal_output_close(help_id);
    char *text = slurp(log);
    ck_assert_msg(NULL != strstr(text, missing), "message does not name the file: %s", text);
    ck_assert_msg(NULL != strstr(text, strerror(ENOENT)), "message lacks the reason: %s", text);
    free(text);
    opal_show_help_finalize();
    remove_tmpdir();
}
END_TEST

START_TEST(closed_id_is_reused)
{
    opal_output_stream_t quiet = {0};
    int a = opal_output_open(&quiet);
    int b = opal_output_open(&quiet);
    int c = opal_output_open(&quiet);
    ck_assert_int_gt(a, 0);
    ck_assert_int_eq(b, a + 1);
    ck_assert_int_eq(c, b + 1);
    opal_output_close(b);
    ck_assert_int_eq(opal_output_get_verbosity(b), -1);
    int d = opal_output_open(&quiet);
    ck_assert_int_eq(d, b);
    opal_output_close(a);
    opal_output_close(c);
    opal_output_close(d);
}
END_TEST

START_TEST(invalid_ids_are_ignored)
{
    make_tmpdir();
    capture_t cap;
    capture_begin(&cap, STDERR_FILENO);
    int id = opal_output_open(NULL);
    opal_output_close(id);
    opal_output(-1, "negative");
    opal_output(OPAL_OUTPUT_MAX_STREAMS, "too large");
    opal_output(id, "closed");
    opal_output_verbose(0, 12345, "unknown");
    opal_output_set_verbosity(-7, 3);
    opal_output_close(-3);
    opal_output_close(id);
    opal_output_close(0);
    opal_output(0, "stream 0 survives close");
    char *text = capture_end(&cap);
    ck_assert_str_eq(text, "stream 0 survives close\n");
    ck_assert_int_eq(opal_output_get_verbosity(-1), -1);
    ck_assert_int_eq(opal_output_get_verbosity(OPAL_OUTPUT_MAX_STREAMS), -1);
    ck_assert(!opal_output_check_verbosity(0, -1));
    free(text);
    remove_tmpdir();
}
END_TEST

START_TEST(running_out_of_ids_is_an_error)
{
    make_tmpdir();
    opal_output_stream_t quiet = {0};
    int ids[OPAL_OUTPUT_MAX_STREAMS];
    int n = 0, rc;
    capture_t cap;
    capture_begin(&cap, STDERR_FILENO);
    while ((rc = opal_output_open(&quiet)) > 0) {
        ck_assert_int_lt(n, OPAL_OUTPUT_MAX_STREAMS);
        ids[n++] = rc;
    }
    char *text = capture_end(&cap);
    ck_assert_int_eq(rc, OPAL_ERR_OUT_OF_RESOURCE);
    ck_assert_int_eq(n, OPAL_OUTPUT_MAX_STREAMS - 1);
    ck_assert_ptr_nonnull(strstr(text, "streams are in use"));
    for (int i = 0; i < n; ++i) {
        opal_output_close(ids[i]);
    }
    free(text);
    remove_tmpdir();
}
END_TEST

START_TEST(stream_zero_writes_to_stderr)
{
    make_tmpdir();
    capture_t cap;
    capture_begin(&cap, STDERR_FILENO);
    opal_output(0, "to stderr %s", "always");
    opal_output_verbose(1, 0, "hidden at level 1");
    char *text = capture_end(&cap);
    ck_assert_str_eq(text, "to stderr always\n");
    ck_assert_int_eq(opal_output_get_verbosity(0), 0);
    free(text);
    remove_tmpdir();
}
END_TEST

START_TEST(stdout_and_stderr_destinations)
{
    make_tmpdir();
    opal_output_stream_t lds = {
        .lds_prefix = "both: ", .lds_want_stdout = true, .lds_want_stderr = true};
    int id = opal_output_open(&lds);
    ck_assert_int_gt(id, 0);
    capture_t out, err;
    capture_begin(&out, STDOUT_FILENO);
    capture_begin(&err, STDERR_FILENO);
    printf("printed first\n");
    opal_output(id, "message");
    char *etext = capture_end(&err);
    char *otext = capture_end(&out);
    ck_assert_str_eq(otext, "printed first\nboth: message\n");
    ck_assert_str_eq(etext, "both: message\n");
    opal_output_close(id);
    free(otext);
    free(etext);
    remove_tmpdir();
}
END_TEST

START_TEST(errno_is_preserved)
{
    opal_output_stream_t quiet = {0};
    int id = opal_output_open(&quiet);
    errno = EAGAIN;
    opal_output(id, "anything");
    ck_assert_int_eq(errno, EAGAIN);
    opal_output_close(id);
}
END_TEST

START_TEST(finalize_closes_streams_but_stream_zero_lives)
{
    make_tmpdir();
    char path[PATH_SIZE];
    tmp_path(path, "out.log");
    int id = open_file_stream(NULL, 3, path);
    opal_output_finalize();
    ck_assert_int_eq(opal_output_get_verbosity(id), -1);
    capture_t cap;
    capture_begin(&cap, STDERR_FILENO);
    opal_output(id, "dropped");
    opal_output(0, "after finalize");
    char *text = capture_end(&cap);
    ck_assert_str_eq(text, "after finalize\n");
    free(text);
    text = slurp(path);
    ck_assert_str_eq(text, "");
    free(text);
    ck_assert_int_eq(opal_output_init(), OPAL_SUCCESS);
    remove_tmpdir();
}
END_TEST

#define WRITER_THREADS 4
#define LINE_LEN       300

struct writer {
    pthread_t thread;
    int id;
    int stream;
    size_t lines;
};

static void *writer_main(void *arg)
{
    struct writer *w = arg;
    char body[LINE_LEN + 1];
    memset(body, 'a' + w->id, LINE_LEN);
    body[LINE_LEN] = '\0';
    for (size_t i = 0; i < w->lines; ++i) {
        opal_output(w->stream, "%d:%s", w->id, body);
    }
    return NULL;
}

/* True when every line of text is "<id>:" then LINE_LEN copies of the
 * letter of <id>, and each id wrote `lines` of them. */
static bool lines_are_whole(const char *text, int writers, size_t lines)
{
    size_t counts[WRITER_THREADS + 2] = {0};
    const char *p = text;
    while ('\0' != *p) {
        int id = p[0] - '0';
        if (id < 0 || id >= writers || ':' != p[1]) {
            return false;
        }
        for (int i = 0; i < LINE_LEN; ++i) {
            if (p[2 + i] != 'a' + id) {
                return false;
            }
        }
        if ('\n' != p[2 + LINE_LEN]) {
            return false;
        }
        ++counts[id];
        p += 3 + LINE_LEN;
    }
    for (int i = 0; i < writers; ++i) {
        if (counts[i] != lines) {
            return false;
        }
    }
    return true;
}

START_TEST(concurrent_threads_write_whole_lines)
{
    make_tmpdir();
    char path[PATH_SIZE];
    tmp_path(path, "threads.log");
    /* Two streams on one file: the lines still may not mix. */
    int s1 = open_file_stream(NULL, 0, path);
    int s2 = open_file_stream(NULL, 0, path);
    size_t lines = opal_test_iterations(2000);
    struct writer w[WRITER_THREADS];
    for (int i = 0; i < WRITER_THREADS; ++i) {
        w[i] = (struct writer){.id = i, .stream = (i % 2) ? s2 : s1, .lines = lines};
        ck_assert_int_eq(pthread_create(&w[i].thread, NULL, writer_main, &w[i]), 0);
    }
    for (int i = 0; i < WRITER_THREADS; ++i) {
        pthread_join(w[i].thread, NULL);
    }
    opal_output_close(s1);
    opal_output_close(s2);
    char *text = slurp(path);
    ck_assert(lines_are_whole(text, WRITER_THREADS, lines));
    free(text);
    remove_tmpdir();
}
END_TEST

START_TEST(concurrent_processes_write_whole_lines)
{
    make_tmpdir();
    char path[PATH_SIZE];
    tmp_path(path, "procs.log");
    size_t lines = opal_test_iterations(1000);
    pid_t pids[2];
    for (int i = 0; i < 2; ++i) {
        pids[i] = fork();
        ck_assert_int_ge(pids[i], 0);
        if (0 == pids[i]) {
            opal_output_stream_t lds = {.lds_file_name = path};
            struct writer w = {.id = i, .stream = opal_output_open(&lds), .lines = lines};
            writer_main(&w);
            opal_output_close(w.stream);
            _exit(0);
        }
    }
    for (int i = 0; i < 2; ++i) {
        int status;
        ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
        ck_assert(WIFEXITED(status) && 0 == WEXITSTATUS(status));
    }
    char *text = slurp(path);
    ck_assert(lines_are_whole(text, 2, lines));
    free(text);
    remove_tmpdir();
}
END_TEST

int main(void)
{
    opal_output_init();
    Suite *s = suite_create("opal_output");
    OPAL_TEST_ADD(s, file_stream_writes_prefixed_message);
    OPAL_TEST_ADD(s, every_line_of_a_message_gets_the_prefix);
    OPAL_TEST_ADD(s, long_message_is_written_whole);
    OPAL_TEST_ADD(s, verbose_prints_only_up_to_stream_level);
    OPAL_TEST_ADD(s, file_is_appended_to);
    OPAL_TEST_ADD(s, unwritable_file_fails_naming_it);
    OPAL_TEST_ADD(s, closed_id_is_reused);
    OPAL_TEST_ADD(s, invalid_ids_are_ignored);
    OPAL_TEST_ADD(s, running_out_of_ids_is_an_error);
    OPAL_TEST_ADD(s, stream_zero_writes_to_stderr);
    OPAL_TEST_ADD(s, stdout_and_stderr_destinations);
    OPAL_TEST_ADD(s, errno_is_preserved);
    OPAL_TEST_ADD(s, finalize_closes_streams_but_stream_zero_lives);
    OPAL_TEST_ADD(s, concurrent_threads_write_whole_lines);
    OPAL_TEST_ADD(s, concurrent_processes_write_whole_lines);
    int rc = opal_test_run(s);
    opal_output_finalize();
    return rc;
}
