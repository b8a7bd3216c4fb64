/*
 * A rank of an mcarun job running SWIM over rpc (for rpc_swim_job_test):
 *
 *   rpc_swim_rank kill|stop <dir> [stop_ms [na info]]
 *
 * Each rank opens rpc over the na class (btl by default), publishes its URI and pid in the modex,
 * looks the others up (the rank -> endpoint map SWIM is given), and runs SWIM with the rpc_swim_*
 * variables mcarun passes (--mca).
 *
 * kill: after 2 s the last rank writes <dir>/killed (the monotonic time in
 * ms) and kills itself with SIGKILL. Every other rank runs until it sees
 * it dead, then says "rank R: rank V dead after X ms (suspected after Y
 * ms)".
 * stop: after 2 s rank 0 stops the last rank with SIGSTOP for stop_ms,
 * continues it and writes <dir>/cont; every rank runs until a suspicion
 * timeout and two periods after that, then says "rank R: rank V
 * suspected N times".
 *
 * Then each rank writes <dir>/done.R and keeps running SWIM until every
 * rank still alive did (no launcher fence: it would wait for the dead
 * rank), and prints "rank R ok" when no other member was declared dead.
 * RPC_SWIM_TRACE=1 in the environment prints every SWIM event.
 */
#include "opal/opal_config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "opal/mca/rpc/rpc.h"
#include "opal/mca/rpc/rpc_swim.h"
#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "orte/runtime/orte_init.h"

#define MAX_RANKS 16
#define LIMIT_MS  120000

static uint32_t me, np;
static opal_na_addr_t *addrs[MAX_RANKS];
static uint64_t suspected_at[MAX_RANKS], dead_at[MAX_RANKS];
static int suspicions[MAX_RANKS], deaths[MAX_RANKS];

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static int fail(const char *what, int rc)
{
    fprintf(stderr, "rank %u: %s: %s\n", me, what, opal_strerror(rc));
    return 1;
}

static int endpoint_of(void *arg, uint32_t rank, opal_rpc_endpoint_t *ep)
{
    (void) arg;
    if (rank >= np || NULL == addrs[rank]) {
        return OPAL_ERR_NOT_FOUND;
    }
    ep->addr = addrs[rank];
    ep->ctx_idx = 0;
    return OPAL_SUCCESS;
}

static void on_event(void *arg, uint32_t rank, opal_swim_status_t status, uint64_t inc)
{
    (void) arg;
    if (NULL != getenv("RPC_SWIM_TRACE")) {
        fprintf(stderr, "rank %u: at %" PRIu64 " ms: rank %u %s (incarnation %" PRIu64 ")\n", me,
                now_ms(), rank, opal_swim_status_name(status), inc);
    }
    if (OPAL_SWIM_SUSPECT == status) {
        if (0 == suspicions[rank]++) {
            suspected_at[rank] = now_ms();
        }
    } else if (OPAL_SWIM_DEAD == status) {
        if (0 == deaths[rank]++) {
            dead_at[rank] = now_ms();
        }
    }
}

static void write_file(const char *dir, const char *name, uint64_t value)
{
    char tmp[4096], path[4096];
    snprintf(tmp, sizeof(tmp), "%s/.%s.%u", dir, name, me);
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(tmp, "w");
    if (NULL != f) {
        fprintf(f, "%" PRIu64 "\n", value);
        fclose(f);
        (void) rename(tmp, path); /* readers see all of it or nothing */
    }
}

/* The value in dir/name, or 0 when it is not there (yet). */
static uint64_t read_file(const char *dir, const char *name)
{
    char path[4096];
    unsigned long long v = 0;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (NULL != f) {
        if (1 != fscanf(f, "%llu", &v)) {
            v = 0;
        }
        fclose(f);
    }
    return v;
}

static int done_count(const char *dir)
{
    int n = 0;
    for (uint32_t r = 0; r < np; ++r) {
        char name[32];
        snprintf(name, sizeof(name), "done.%u", r);
        n += 0 != read_file(dir, name);
    }
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (0 != strcmp(argv[1], "kill") && 0 != strcmp(argv[1], "stop"))) {
        fprintf(stderr, "usage: rpc_swim_rank kill|stop <dir> [stop_ms [na info]]\n");
        return 2;
    }
    bool kill_case = 0 == strcmp(argv[1], "kill");
    const char *dir = argv[2];
    uint64_t stop_ms = argc > 3 ? strtoull(argv[3], NULL, 10) : 1000;
    if (OPAL_SUCCESS != orte_init(&argc, &argv)) {
        return 2;
    }
    me = opal_proc_job_info()->my_name.vpid;
    np = opal_proc_job_info()->size;
    if (np > MAX_RANKS || np < 3) {
        return fail("this test needs 3 to 16 ranks", OPAL_ERR_BAD_PARAM);
    }
    const uint32_t victim = np - 1;
    const char *info = argc > 4 ? argv[4] : "btl";
    int rc = opal_rpc_init(info, true);
    if (OPAL_SUCCESS != rc) {
        return fail("opening rpc", rc);
    }
    opal_rpc_context_t *ctx = NULL;
    if (OPAL_SUCCESS != (rc = opal_rpc_context_create(0, &ctx))) {
        return fail("creating a context", rc);
    }
    char uri[512];
    size_t size = sizeof(uri);
    int32_t pid = (int32_t) getpid();
    if (OPAL_SUCCESS != (rc = opal_rpc_self_uri(uri, &size)) ||
        OPAL_SUCCESS !=
            (rc = opal_modex_send("rpc_swim_uri", uri, strlen(uri) + 1, OPAL_MODEX_SCOPE_GLOBAL)) ||
        OPAL_SUCCESS !=
            (rc = opal_modex_send("rpc_swim_pid", &pid, sizeof(pid), OPAL_MODEX_SCOPE_GLOBAL)) ||
        OPAL_SUCCESS != (rc = opal_fence(true))) {
        return fail("publishing the URI", rc);
    }
    pid_t victim_pid = 0;
    for (uint32_t r = 0; r < np; ++r) {
        void *value = NULL;
        size_t len = 0;
        if (r == me) {
            continue;
        }
        rc = opal_modex_recv(r, "rpc_swim_uri", &value, &len, OPAL_MODEX_WAIT_FOREVER);
        if (OPAL_SUCCESS != rc || 0 == len || '\0' != ((char *) value)[len - 1] ||
            OPAL_SUCCESS != (rc = opal_rpc_addr_lookup(value, &addrs[r]))) {
            return fail("looking a peer up", OPAL_SUCCESS == rc ? OPAL_ERR_BAD_PARAM : rc);
        }
        free(value);
        if (r == victim) {
            rc = opal_modex_recv(r, "rpc_swim_pid", &value, &len, OPAL_MODEX_WAIT_FOREVER);
            if (OPAL_SUCCESS != rc || sizeof(int32_t) != len) {
                return fail("the victim's pid", OPAL_SUCCESS == rc ? OPAL_ERR_BAD_PARAM : rc);
            }
            victim_pid = (pid_t) * (int32_t *) value;
            free(value);
        }
    }
    opal_rpc_swim_t *swim = NULL;
    if (OPAL_SUCCESS != (rc = opal_rpc_swim_create(ctx, me, np, NULL, endpoint_of, NULL, &swim)) ||
        OPAL_SUCCESS != (rc = opal_rpc_swim_add_callback(swim, on_event, NULL))) {
        return fail("starting SWIM", rc);
    }
    opal_swim_params_t p;
    (void) opal_swim_params_from_vars(&p);
    /* Everyone has SWIM registered before the first ping goes out. */
    if (OPAL_SUCCESS != (rc = opal_fence(false))) {
        return fail("the fence after SWIM started", rc);
    }
    uint64_t start = now_ms(), stopped_at = 0;
    bool observed = false, said_done = false;
    for (;;) {
        uint64_t t = now_ms();
        if (t - start > LIMIT_MS) {
            return fail("the run took too long", OPAL_ERR_TIMEOUT);
        }
        if (kill_case && me == victim && t - start >= 2000) {
            write_file(dir, "killed", now_ms());
            raise(SIGKILL);
        }
        if (!kill_case && 0 == me && t - start >= 2000 && 0 == stopped_at) {
            stopped_at = now_ms();
            if (0 != kill(victim_pid, SIGSTOP)) {
                return fail("stopping the victim", OPAL_ERR_IN_ERRNO);
            }
        }
        if (!kill_case && 0 == me && 0 != stopped_at && t >= stopped_at + stop_ms &&
            0 == read_file(dir, "cont")) {
            if (0 != kill(victim_pid, SIGCONT)) {
                return fail("continuing the victim", OPAL_ERR_IN_ERRNO);
            }
            write_file(dir, "cont", now_ms());
        }
        if (!observed) {
            if (kill_case) {
                observed = 0 != deaths[victim];
            } else {
                uint64_t cont = read_file(dir, "cont");
                observed = 0 != cont && t >= cont + p.suspect_timeout_ms + 2 * p.period_ms +
                                                 2 * p.ping_timeout_ms;
            }
        }
        if (observed && !said_done) {
            char name[32];
            snprintf(name, sizeof(name), "done.%u", me);
            write_file(dir, name, 1);
            said_done = true;
        }
        if (said_done && done_count(dir) >= (int) (kill_case ? np - 1 : np)) {
            break;
        }
        unsigned int wait = opal_rpc_swim_progress(swim);
        (void) opal_rpc_progress(ctx, wait > 20 ? 20 : wait);
    }
    bool ok = true;
    if (kill_case) {
        uint64_t killed = read_file(dir, "killed");
        printf("rank %u: rank %u dead after %" PRIu64 " ms (suspected after %" PRIu64 " ms)\n", me,
               victim, dead_at[victim] - killed,
               0 == suspicions[victim] ? 0 : suspected_at[victim] - killed);
    } else {
        printf("rank %u: rank %u suspected %d times\n", me, victim, suspicions[victim]);
        ok = 0 == deaths[victim];
    }
    for (uint32_t r = 0; r < np; ++r) {
        if (r != victim && 0 != deaths[r]) {
            printf("rank %u: rank %u declared dead, but it lives\n", me, r);
            ok = false;
        }
    }
    if (ok) {
        printf("rank %u ok\n", me);
    }
    fflush(stdout);
    opal_rpc_swim_destroy(swim);
    for (uint32_t r = 0; r < np; ++r) {
        opal_rpc_addr_free(addrs[r]);
    }
    (void) opal_rpc_context_destroy(ctx);
    (void) opal_rpc_finalize();
    return OPAL_SUCCESS == orte_finalize() && ok ? 0 : 1;
}
