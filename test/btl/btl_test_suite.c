#include "opal/opal_config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test/btl/btl_test_suite.h"

/* mcarun's own timeout; the ranks give up a little earlier, saying what
 * they waited for. Below mcarun_test's limit for a whole run. */
#define RUN_TIMEOUT_S "55"
#define RANK_DEADLINE "45"
#define MAX_ARGS      64

static const btl_suite_t *config;

extern char **environ;

bool btl_suite_has(const char *text, const char *needle)
{
    return NULL != text && NULL != strstr(text, needle);
}

static void add(const char **argv, int *n, const char *arg)
{
    ck_assert_int_lt(*n, MAX_ARGS - 1);
    argv[(*n)++] = arg;
    argv[*n] = NULL;
}

void btl_suite_start(mcarun_run_t *run, const char *btl, const char *const *mca_args,
                     const char *const *extra, int np, const char *const *args)
{
    static char nps[16];
    snprintf(nps, sizeof(nps), "%d", np);
    const char *argv[MAX_ARGS];
    int n = 0;
    add(argv, &n, "-np");
    add(argv, &n, nps);
    add(argv, &n, "--oversubscribe");
    add(argv, &n, "--timeout");
    add(argv, &n, RUN_TIMEOUT_S);
    if (NULL != btl) {
        add(argv, &n, "--mca");
        add(argv, &n, "btl");
        add(argv, &n, btl);
    }
    for (int i = 0; NULL != mca_args && NULL != mca_args[i]; ++i) {
        add(argv, &n, mca_args[i]);
    }
    for (int i = 0; NULL != extra && NULL != extra[i]; ++i) {
        add(argv, &n, extra[i]);
    }
    /* Under valgrind the ranks run under it too, as in the modex tests. */
    static char supp[PATH_MAX + 32];
    if (opal_test_under_valgrind()) {
        static const char *const vg[] = {"valgrind",
                                         "--quiet",
                                         "--error-exitcode=97",
                                         "--leak-check=full",
                                         "--errors-for-leak-kinds=definite,indirect",
                                         "--show-leak-kinds=definite,indirect",
                                         NULL};
        for (int i = 0; NULL != vg[i]; ++i) {
            add(argv, &n, vg[i]);
        }
        snprintf(supp, sizeof(supp), "--suppressions=%s/../contrib/valgrind.supp",
                 opal_test_srcdir());
        add(argv, &n, supp);
    }
    static char prog[PATH_MAX];
    snprintf(prog, sizeof(prog), "%s", mcarun_test_build_path("test/btl/btl_test_rank"));
    add(argv, &n, prog);
    for (int i = 0; NULL != args && NULL != args[i]; ++i) {
        add(argv, &n, args[i]);
    }
    mcarun_test_start(run, NULL, argv);
}

void btl_suite_run(mcarun_run_t *run, const char *btl, const char *const *mca_args,
                   const char *const *extra, int np, const char *const *args)
{
    btl_suite_start(run, btl, mca_args, extra, np, args);
    mcarun_test_finish(run);
}

static void expect(const mcarun_run_t *run, bool cond, const char *what)
{
    if (!cond) {
        mcarun_test_dump(run);
        ck_abort_msg("%s", what);
    }
}

bool btl_suite_built(const char *comp)
{
    return mcarun_test_component_built("btl", comp, BTL_TEST_PLUGIN_DIRS);
}

bool btl_suite_send_module(const mcarun_run_t *run, uint32_t rank, uint32_t peer, char *buf,
                           size_t size)
{
    char needle[64];
    snprintf(needle, sizeof(needle), "rank %" PRIu32 ": peer %" PRIu32 ": send over ", rank, peer);
    const char *line = NULL != run->out ? strstr(run->out, needle) : NULL;
    if (NULL == line) {
        return false;
    }
    line += strlen(needle);
    size_t len = strcspn(line, ",;\n");
    snprintf(buf, size, "%.*s", (int) len, line);
    return true;
}

/* The order case ends with each rank's "toward rank P: ..." line: the
 * module that carries the sends shows its state (btl_dump), not the
 * multiplexer's placeholder for a module without one. */
static void expect_dump(const mcarun_run_t *run, int r, int p, const char *module)
{
    char needle[64], what[256], line[1024] = "";
    snprintf(needle, sizeof(needle), "rank %d: toward rank %d: ", r, p);
    const char *at = NULL != run->out ? strstr(run->out, needle) : NULL;
    if (NULL != at) {
        snprintf(line, sizeof(line), "%.*s", (int) strcspn(at, "\n"), at);
    }
    char shown[80];
    snprintf(shown, sizeof(shown), "%s: ", module);
    snprintf(what, sizeof(what), "rank %d shows what %s holds toward rank %d (\"%s\")", r, module,
             p, line);
    expect(run, NULL != strstr(line, shown) && NULL == strstr(line, "(no state to show)"), what);
}

void btl_suite_expect_ok(const mcarun_run_t *run, int np, const char *case_name,
                         const char *between_ranks)
{
    char what[256];
    snprintf(what, sizeof(what), "%s: mcarun exited %d", case_name, run->status);
    expect(run, 0 == run->status, what);
    expect(run, !btl_suite_has(run->out, "FAILED"), "a rank reported a failure");
    for (int r = 0; r < np; ++r) {
        snprintf(what, sizeof(what), "rank %d: %s ok\n", r, case_name);
        expect(run, btl_suite_has(run->out, what), what);
        for (int p = 0; NULL != between_ranks && p < np; ++p) {
            char module[64];
            if (p == r) {
                continue;
            }
            snprintf(what, sizeof(what), "rank %d sends to rank %d over %s", r, p, between_ranks);
            expect(run,
                   btl_suite_send_module(run, (uint32_t) r, (uint32_t) p, module, sizeof(module)) &&
                       0 == strcmp(module, between_ranks),
                   what);
            if (0 == strcmp(case_name, "order")) {
                expect_dump(run, r, p, between_ranks);
            }
        }
    }
}

void btl_suite_expect_unreachable(const mcarun_run_t *run, uint32_t peer,
                                  const char *const *reasons)
{
    expect(run, 0 != run->status, "the job succeeded although a peer is unreachable");
    expect(run, btl_suite_has(run->out, "add_procs failed: OPAL_ERR_UNREACH"),
           "no rank said add_procs failed with OPAL_ERR_UNREACH");
    char needle[64];
    snprintf(needle, sizeof(needle), "  rank %" PRIu32 " (on ", peer);
    expect(run, btl_suite_has(run->err, needle), "the error does not name the peer");
    for (int i = 0; NULL != reasons && NULL != reasons[i]; ++i) {
        char what[256];
        snprintf(what, sizeof(what), "the error does not say \"%s\"", reasons[i]);
        expect(run, btl_suite_has(run->err, reasons[i]), what);
    }
}

/* ------------------------------------------------------ generic cases */

static int np_or(int np, int dflt)
{
    return np > 0 ? np : dflt;
}

static void run_case(const char *name, const char *arg, int np, const char *const *extra)
{
    const char *args[] = {name, arg, NULL};
    mcarun_run_t run;
    btl_suite_run(&run, config->btl, config->mca_args, extra, np, args);
    btl_suite_expect_ok(&run, np, name, config->between_ranks);
    mcarun_test_run_free(&run);
}

START_TEST(sizes)
{
    run_case("sizes", NULL, np_or(config->np, 2), NULL);
}
END_TEST

START_TEST(tags)
{
    run_case("tags", NULL, np_or(config->np, 2), NULL);
}
END_TEST

START_TEST(order)
{
    run_case("order", NULL, np_or(config->np, 2), NULL);
}
END_TEST

START_TEST(sendi)
{
    run_case("sendi", config->sendi_arg, np_or(config->np, 2), NULL);
}
END_TEST

START_TEST(rdma)
{
    run_case("rdma", NULL, np_or(config->np, 2), NULL);
}
END_TEST

START_TEST(alltoall)
{
    /* Eight ranks under valgrind on two cores take too long. */
    int np = np_or(config->alltoall_np, 8);
    run_case("alltoall", NULL, opal_test_under_valgrind() && np > 4 ? 4 : np, NULL);
}
END_TEST

START_TEST(self)
{
    run_case("self", NULL, 1, NULL);
}
END_TEST

START_TEST(killed)
{
    int np = np_or(config->killed_np, 3);
    const char *args[] = {"killed", NULL};
    const char *extra[] = {"--enable-recovery", NULL};
    mcarun_run_t run;
    btl_suite_run(&run, config->btl, config->mca_args, extra, np, args);
    uint32_t victim = (uint32_t) np - 1;
    /* The victim's death decides mcarun's status; the others finish. */
    expect(&run, 0 != run.status, "mcarun exited 0 although a rank was killed");
    expect(&run, !btl_suite_has(run.out, "FAILED"), "a rank reported a failure");
    for (uint32_t r = 0; r < victim; ++r) {
        char what[128];
        snprintf(what, sizeof(what), "rank %" PRIu32 ": error callback: rank %" PRIu32 " failed", r,
                 victim);
        expect(&run, btl_suite_has(run.out, what), what);
        snprintf(what, sizeof(what), "rank %" PRIu32 ": survived the loss of rank %" PRIu32, r,
                 victim);
        expect(&run, btl_suite_has(run.out, what), what);
        snprintf(what, sizeof(what), "rank %" PRIu32 ": killed ok\n", r);
        expect(&run, btl_suite_has(run.out, what), what);
    }
    mcarun_test_run_free(&run);
}
END_TEST

/* How many of the survivors' files (rank.R) dir holds. */
static int marks_in(const char *dir, int survivors)
{
    int found = 0;
    for (int r = 0; r < survivors; ++r) {
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/rank.%d", dir, r);
        found += 0 == access(path, F_OK);
    }
    return found;
}

/* A rank that dies while mcarun is stopped stays a zombie: the others
 * must hear of it all the same, before mcarun is let go (the rank program
 * says how, case "unreaped"). */
START_TEST(unreaped)
{
    int np = np_or(config->killed_np, 3);
    char dir[] = "/tmp/btl_unreaped.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    setenv("BTL_TEST_MARK_DIR", dir, 1);
    const char *args[] = {"unreaped", NULL};
    const char *extra[] = {"--enable-recovery", NULL};
    mcarun_run_t run;
    btl_suite_start(&run, config->btl, config->mca_args, extra, np, args);
    char needle[64];
    snprintf(needle, sizeof(needle), "rank %d: waits for ", np - 1);
    expect(&run, mcarun_test_wait_for(&run, needle, 1), "the last rank never said it waits");
    ck_assert_int_eq(kill(run.pid, SIGSTOP), 0);
    char go[PATH_MAX];
    snprintf(go, sizeof(go), "%s/go", dir);
    int fd = open(go, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        /* Not left stopped behind a failed test. */
        (void) kill(run.pid, SIGCONT);
    }
    ck_assert_int_ge(fd, 0);
    close(fd);
    /* The survivors' btls look at their peers every 100 ms or so; under
     * valgrind everything is slower. */
    const int limit_ms = opal_test_under_valgrind() ? 30000 : 10000;
    int found = 0;
    for (int ms = 0; ms < limit_ms && (found = marks_in(dir, np - 1)) < np - 1; ms += 10) {
        usleep(10000);
    }
    ck_assert_int_eq(kill(run.pid, SIGCONT), 0);
    mcarun_test_finish(&run);
    unlink(go);
    for (int r = 0; r < np - 1; ++r) {
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/rank.%d", dir, r);
        unlink(path);
    }
    rmdir(dir);
    unsetenv("BTL_TEST_MARK_DIR");
    char what[160];
    snprintf(what, sizeof(what),
             "%d of %d survivors heard of the zombie rank %d while mcarun was stopped for %d s",
             found, np - 1, np - 1, limit_ms / 1000);
    expect(&run, found == np - 1, what);
    expect(&run, !btl_suite_has(run.out, "FAILED"), "a rank reported a failure");
    for (int r = 0; r < np - 1; ++r) {
        snprintf(what, sizeof(what), "rank %d: unreaped ok\n", r);
        expect(&run, btl_suite_has(run.out, what), what);
    }
    mcarun_test_run_free(&run);
}
END_TEST

/* The last of three ranks finalizes and exits without a word to anyone:
 * the others must report it closed, never failed, and finish without it. */
START_TEST(departed)
{
    const char *args[] = {"departed", NULL};
    mcarun_run_t run;
    btl_suite_run(&run, config->btl, config->mca_args, NULL, 3, args);
    btl_suite_expect_ok(&run, 3, "departed", config->between_ranks);
    expect(&run, btl_suite_has(run.out, "rank 2: leaves without a word"),
           "rank 2 did not leave as the case says");
    for (int r = 0; r < 2; ++r) {
        char what[64];
        snprintf(what, sizeof(what), "rank %d: heard rank 2 finalized, no failure", r);
        expect(&run, btl_suite_has(run.out, what), what);
    }
    mcarun_test_run_free(&run);
}
END_TEST

/* Every rank in a pid namespace of its own, under a pid its peers cannot
 * see (test/btl/in_pid_ns.sh): a btl that watched the peers' pids without
 * asking whether they mean the same process here would report live peers
 * dead within its liveness interval. The sizes case lasts long past it. */
START_TEST(pid_namespaces)
{
    char wrapper[PATH_MAX], probe[PATH_MAX + 32];
    snprintf(wrapper, sizeof(wrapper), "%s/btl/in_pid_ns.sh", opal_test_srcdir());
    snprintf(probe, sizeof(probe), "%s true", wrapper);
    int status = system(probe);
    if (!WIFEXITED(status) || 0 != WEXITSTATUS(status)) {
        printf("%s: pid_namespaces not run: %s cannot make a pid namespace here (exit %d)\n",
               config->name, wrapper, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return;
    }
    /* The wrapper is mcarun's program, the rank program its argument
     * (under valgrind, valgrind and its options come between). */
    const char *extra[] = {wrapper, NULL};
    const char *args[] = {"sizes", NULL};
    mcarun_run_t run;
    btl_suite_run(&run, config->btl, config->mca_args, extra, 3, args);
    expect(&run, !btl_suite_has(run.out, "error callback"),
           "a rank took a peer in another pid namespace for dead");
    btl_suite_expect_ok(&run, 3, "sizes", config->between_ranks);
    mcarun_test_run_free(&run);
}
END_TEST

Suite *btl_suite_create(const btl_suite_t *cfg)
{
    config = cfg;
    Suite *s = suite_create(cfg->name);
    const struct {
        unsigned bit;
        const char *name;
        const TTest *test;
    } table[] = {
        {BTL_SUITE_SIZES, "sizes", sizes},
        {BTL_SUITE_TAGS, "tags", tags},
        {BTL_SUITE_ORDER, "order", order},
        {BTL_SUITE_SENDI, "sendi", sendi},
        {BTL_SUITE_RDMA, "rdma", rdma},
        {BTL_SUITE_ALLTOALL, "alltoall", alltoall},
        {BTL_SUITE_SELF, "self", self},
        {BTL_SUITE_KILLED, "killed", killed},
        {BTL_SUITE_UNREAPED, "unreaped", unreaped},
        {BTL_SUITE_PIDNS, "pid_namespaces", pid_namespaces},
        {BTL_SUITE_DEPARTED, "departed", departed},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); ++i) {
        if (0 != (cfg->cases & table[i].bit)) {
            TCase *tc = tcase_create(table[i].name);
            tcase_add_test(tc, table[i].test);
            suite_add_tcase(s, tc);
        }
    }
    return s;
}

static void unset_prefixed(const char *prefix)
{
    bool again = true;
    while (again) {
        again = false;
        for (char **env = environ; NULL != *env; ++env) {
            if (0 == strncmp(*env, prefix, strlen(prefix))) {
                char name[256];
                snprintf(name, sizeof(name), "%.*s", (int) strcspn(*env, "="), *env);
                unsetenv(name);
                again = true;
                break;
            }
        }
    }
}

int btl_suite_main(Suite *s)
{
    /* Not started by a launcher; no stray btl settings from the user. */
    unset_prefixed("PMIX_");
    unset_prefixed("OMPI_");
    unset_prefixed("OPAL_ORTE_");
    setenv("OPAL_MCA_mca_base_component_path", BTL_TEST_PLUGIN_DIRS, 0);
    setenv("BTL_TEST_DEADLINE", RANK_DEADLINE, 0);
    return opal_test_run(s);
}
