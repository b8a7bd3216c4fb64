/*
 * One rank of the ess tests, started by mcarun or by a PMIx launcher:
 *
 *   orte_ess_rank --expect-size N [--seed S] [--keys K] [--max-size BYTES]
 *                 [--check-timeout] [--fences COUNT]
 *                 [--abort-rank R --abort-status S]
 *
 * It checks what orte_init says about the job (rank, size, local rank and
 * size, node id; against Open MPI's OMPI_COMM_WORLD_* variables when
 * mpirun started it), looks every peer up before any fence (lookups wait
 * for the peer's record), publishes K keys whose sizes and bytes follow
 * from (S, rank, key) -- the first one BYTES long -- half before a fence
 * that collects and half before one that does not, and reads and checks
 * every peer's values after each. It then prints one line,
 *
 *   rank R size N local L/LS node D locality <one digit per peer> data <bytes checked>
 *
 * which is the same under every launcher for the same job shape and
 * binding; rank 0 also prints "session <directory>". Any failure prints
 * "FAIL rank R: ..." and exits 1 without orte_finalize, which makes the
 * launcher stop the job. With --abort-rank, that rank calls opal_abort
 * with the given status right after orte_init while the others wait to
 * be stopped by the launcher.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "orte/runtime/orte_init.h"

typedef struct options_t {
    uint32_t expect_size;
    uint64_t seed;
    uint32_t keys;
    size_t max_size;
    int check_timeout;
    uint32_t fences;
    int64_t abort_rank;
    int abort_status;
} options_t;

static uint32_t my_rank;

static void fail(const char *format, ...) OPAL_PRINTF_LIKE(1, 2);
static void fail(const char *format, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, format);
    vsnprintf(text, sizeof(text), format, ap);
    va_end(ap);
    fprintf(stderr, "FAIL rank %" PRIu32 ": %s\n", my_rank, text);
    fflush(stderr);
    exit(1);
}

static void check_rc(int rc, const char *what)
{
    if (OPAL_SUCCESS != rc) {
        fail("%s: %s", what, opal_strerror(rc));
    }
}

/* splitmix64: a deterministic stream for (seed, rank, key). */
static uint64_t mix(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The value rank publishes under key number index (malloc'd). */
static unsigned char *make_value(const options_t *opt, uint32_t rank, uint32_t index, size_t *size)
{
    uint64_t state = opt->seed ^ ((uint64_t) rank << 32) ^ index;
    size_t n = 0 == index ? opt->max_size : 1 == index ? 0 : mix(&state) % (opt->max_size + 1);
    unsigned char *bytes = malloc(n + 1);
    if (NULL == bytes) {
        fail("out of memory for a %zu-byte value", n);
    }
    for (size_t i = 0; i < n; i += 8) {
        uint64_t word = mix(&state);
        memcpy(bytes + i, &word, n - i < 8 ? n - i : 8);
    }
    *size = n;
    return bytes;
}

static void key_name(char *key, size_t size, uint32_t index)
{
    snprintf(key, size, "test.k%" PRIu32, index);
}

static void publish(const options_t *opt, uint32_t first, uint32_t last)
{
    for (uint32_t i = first; i < last; ++i) {
        size_t size;
        unsigned char *value = make_value(opt, my_rank, i, &size);
        char key[32];
        key_name(key, sizeof(key), i);
        check_rc(opal_modex_send(key, value, size, OPAL_MODEX_SCOPE_GLOBAL), "opal_modex_send");
        free(value);
    }
}

/* Reads keys [first, last) of every rank and compares; returns bytes. */
static uint64_t verify(const options_t *opt, uint32_t size, uint32_t first, uint32_t last)
{
    uint64_t bytes = 0;
    for (uint32_t peer = 0; peer < size; ++peer) {
        for (uint32_t i = first; i < last; ++i) {
            char key[32];
            key_name(key, sizeof(key), i);
            void *value = NULL;
            size_t got = 0;
            int rc = opal_modex_recv(peer, key, &value, &got, 30 * 1000000000ll);
            if (OPAL_SUCCESS != rc) {
                fail("reading %s of rank %" PRIu32 ": %s", key, peer, opal_strerror(rc));
            }
            size_t expected_size;
            unsigned char *expected = make_value(opt, peer, i, &expected_size);
            if (got != expected_size || (0 != got && 0 != memcmp(value, expected, got))) {
                fail("%s of rank %" PRIu32 " is %zu bytes that differ from the %zu published", key,
                     peer, got, expected_size);
            }
            bytes += got;
            free(expected);
            free(value);
        }
    }
    return bytes;
}

/* Every rank's view of the job, as it published it under "test.job". */
static void check_job_views(uint32_t size)
{
    uint32_t *local_seen = calloc(size, sizeof(uint32_t));
    uint32_t my_node = orte_process_info.node_id;
    uint32_t on_my_node = 0;
    if (NULL == local_seen) {
        fail("out of memory");
    }
    for (uint32_t peer = 0; peer < size; ++peer) {
        void *value = NULL;
        size_t got = 0;
        check_rc(opal_modex_recv(peer, "test.job", &value, &got, 30 * 1000000000ll),
                 "reading test.job");
        char text[512];
        snprintf(text, sizeof(text), "%.*s", (int) got, (const char *) value);
        free(value);
        uint32_t rank, psize, lrank, lsize, node;
        if (5 != sscanf(text, "%" SCNu32 " %" SCNu32 " %" SCNu32 " %" SCNu32 " %" SCNu32, &rank,
                        &psize, &lrank, &lsize, &node)) {
            fail("rank %" PRIu32 "'s test.job \"%s\" does not parse", peer, text);
        }
        if (rank != peer || psize != size) {
            fail("rank %" PRIu32 " says it is rank %" PRIu32 " of %" PRIu32, peer, rank, psize);
        }
        opal_proc_t *proc = NULL;
        check_rc(opal_proc_for_rank(peer, &proc), "opal_proc_for_rank");
        if (proc->proc_node_id != node) {
            fail("rank %" PRIu32 " is on node %" PRIu32 " but its opal_proc says %" PRIu32, peer,
                 node, proc->proc_node_id);
        }
        if (node == my_node) {
            ++on_my_node;
            if (lsize != orte_process_info.local_size || lrank >= lsize) {
                fail("rank %" PRIu32 " on my node says local rank %" PRIu32 " of %" PRIu32, peer,
                     lrank, lsize);
            }
            if (local_seen[lrank]++) {
                fail("local rank %" PRIu32 " is taken twice on node %" PRIu32, lrank, node);
            }
            if (!(proc->proc_locality & OPAL_PROC_ON_NODE)) {
                fail("rank %" PRIu32 " shares my node but is not ON_NODE", peer);
            }
        } else if (proc->proc_locality != OPAL_PROC_LOCALITY_NONE) {
            fail("rank %" PRIu32 " is on another node but has locality %u", peer,
                 proc->proc_locality);
        }
    }
    if (on_my_node != orte_process_info.local_size) {
        fail("%" PRIu32 " ranks share my node, but local size is %" PRIu32, on_my_node,
             orte_process_info.local_size);
    }
    free(local_seen);
}

/* What Open MPI's mpirun says, when it started us. */
static void check_against_ompi(void)
{
    const struct {
        const char *name;
        uint32_t mine;
    } vars[] = {
        {"OMPI_COMM_WORLD_RANK", orte_process_info.my_name.vpid},
        {"OMPI_COMM_WORLD_SIZE", orte_process_info.size},
        {"OMPI_COMM_WORLD_LOCAL_RANK", orte_process_info.local_rank},
        {"OMPI_COMM_WORLD_LOCAL_SIZE", orte_process_info.local_size},
    };
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); ++i) {
        const char *text = getenv(vars[i].name);
        if (NULL != text && strtoul(text, NULL, 10) != vars[i].mine) {
            fail("%s is %s but orte says %" PRIu32, vars[i].name, text, vars[i].mine);
        }
    }
}

static void check_missing_key(uint32_t size)
{
    void *value = NULL;
    size_t got = 0;
    uint32_t peer = size - 1;
    /* Not waiting: not there (some launchers say "timed out"). */
    int rc = opal_modex_recv(peer, "test.never", &value, &got, 0);
    if (OPAL_ERR_NOT_FOUND != rc && OPAL_ERR_TIMEOUT != rc) {
        fail("a key nobody published, without waiting: %s", opal_strerror(rc));
    }
    /* Waiting a little: the wait ends in a timeout that names peer and key. */
    rc = opal_modex_recv(peer, "test.never", &value, &got, 200 * 1000000ll);
    if (OPAL_ERR_TIMEOUT != rc && OPAL_ERR_NOT_FOUND != rc) {
        fail("a key nobody published, waiting 0.2 s: %s", opal_strerror(rc));
    }
    if (OPAL_SUCCESS == opal_modex_recv(size, "test.k0", &value, &got, 0)) {
        fail("rank %" PRIu32 " does not exist but could be read", size);
    }
}

static void time_fences(uint32_t count)
{
    for (int collect = 0; collect < 2; ++collect) {
        check_rc(opal_fence(collect), "warm-up fence");
        uint64_t start = opal_timer_ns();
        for (uint32_t i = 0; i < count; ++i) {
            check_rc(opal_fence(collect), "timed fence");
        }
        uint64_t spent = opal_timer_ns() - start;
        if (0 == my_rank) {
            printf("fence np %" PRIu32 " collect %d: %" PRIu32 " fences, %.1f us each\n",
                   orte_process_info.size, collect, count, (double) spent / count / 1000.0);
        }
    }
}

static void parse(int argc, char **argv, options_t *opt)
{
    opt->expect_size = 0;
    opt->seed = 1;
    opt->keys = 6;
    opt->max_size = 1024 * 1024;
    opt->check_timeout = 0;
    opt->fences = 0;
    opt->abort_rank = -1;
    opt->abort_status = 1;
    for (int i = 1; i < argc; ++i) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (0 == strcmp(argv[i], "--check-timeout")) {
            opt->check_timeout = 1;
            continue;
        }
        if (NULL == next) {
            fail("option %s needs a value", argv[i]);
        }
        if (0 == strcmp(argv[i], "--expect-size")) {
            opt->expect_size = (uint32_t) strtoul(next, NULL, 10);
        } else if (0 == strcmp(argv[i], "--seed")) {
            opt->seed = strtoull(next, NULL, 10);
        } else if (0 == strcmp(argv[i], "--keys")) {
            opt->keys = (uint32_t) strtoul(next, NULL, 10);
        } else if (0 == strcmp(argv[i], "--max-size")) {
            opt->max_size = strtoull(next, NULL, 10);
        } else if (0 == strcmp(argv[i], "--abort-rank")) {
            opt->abort_rank = strtoll(next, NULL, 10);
        } else if (0 == strcmp(argv[i], "--abort-status")) {
            opt->abort_status = (int) strtol(next, NULL, 10);
        } else if (0 == strcmp(argv[i], "--fences")) {
            opt->fences = (uint32_t) strtoul(next, NULL, 10);
        } else {
            fail("unknown option %s", argv[i]);
        }
        ++i;
    }
    if (opt->keys < 2) {
        fail("--keys must be at least 2");
    }
}

int main(int argc, char **argv)
{
    options_t opt;
    parse(argc, argv, &opt);
    check_rc(orte_init(&argc, &argv), "orte_init");
    my_rank = orte_process_info.my_name.vpid;
    uint32_t size = orte_process_info.size;
    if (0 != opt.expect_size && size != opt.expect_size) {
        fail("job size is %" PRIu32 ", expected %" PRIu32, size, opt.expect_size);
    }
    if (my_rank >= size || orte_process_info.local_rank >= orte_process_info.local_size ||
        orte_process_info.local_size > size) {
        fail("inconsistent job: rank %" PRIu32 " of %" PRIu32 ", local %" PRIu32 " of %" PRIu32,
             my_rank, size, orte_process_info.local_rank, orte_process_info.local_size);
    }
    check_against_ompi();
    if (opt.abort_rank >= 0) {
        if ((int64_t) my_rank == opt.abort_rank) {
            int rc = opal_abort(opt.abort_status, "rank %" PRIu32 " aborts on purpose", my_rank);
            fail("opal_abort returned: %s", opal_strerror(rc));
        }
        /* The launcher must stop this rank too. */
        for (;;) {
            pause();
        }
    }
    if (0 == my_rank) {
        printf("session %s\n", orte_process_info.session_dir);
    }

    /* Before any fence: a lookup waits for the peer's record. */
    char locality[1024] = "";
    for (uint32_t peer = 0; peer < size && peer < sizeof(locality) - 1; ++peer) {
        opal_proc_t *proc = NULL;
        check_rc(opal_proc_for_rank(peer, &proc), "looking a peer up before any fence");
        locality[peer] = (char) ('0' + proc->proc_locality);
        locality[peer + 1] = '\0';
    }

    char job[256];
    snprintf(job, sizeof(job), "%" PRIu32 " %" PRIu32 " %" PRIu32 " %" PRIu32 " %" PRIu32, my_rank,
             size, orte_process_info.local_rank, orte_process_info.local_size,
             orte_process_info.node_id);
    check_rc(opal_modex_send("test.job", job, strlen(job), OPAL_MODEX_SCOPE_GLOBAL), "test.job");
    check_rc(opal_modex_send("test.local", job, strlen(job), OPAL_MODEX_SCOPE_LOCAL), "test.local");
    uint32_t half = opt.keys / 2;
    publish(&opt, 0, half);
    check_rc(opal_fence(true), "fence collecting data");
    check_job_views(size);
    uint64_t bytes = verify(&opt, size, 0, half);

    publish(&opt, half, opt.keys);
    check_rc(opal_fence(false), "fence without data");
    bytes += verify(&opt, size, half, opt.keys);

    /* Local scope: every rank on this node can read it. */
    for (uint32_t peer = 0; peer < size; ++peer) {
        opal_proc_t *proc = NULL;
        check_rc(opal_proc_for_rank(peer, &proc), "opal_proc_for_rank");
        if (proc->proc_locality & OPAL_PROC_ON_NODE) {
            void *value = NULL;
            size_t got = 0;
            check_rc(opal_modex_recv(peer, "test.local", &value, &got, 30 * 1000000000ll),
                     "reading a local peer's test.local");
            free(value);
        }
    }
    if (opt.check_timeout && 0 == my_rank) {
        check_missing_key(size);
    }
    if (0 != opt.fences) {
        time_fences(opt.fences);
    }
    check_rc(opal_fence(false), "last fence");
    printf("rank %" PRIu32 " size %" PRIu32 " local %" PRIu32 "/%" PRIu32 " node %" PRIu32
           " locality %s data %" PRIu64 "\n",
           my_rank, size, orte_process_info.local_rank, orte_process_info.local_size,
           orte_process_info.node_id, locality, bytes);
    fflush(stdout);
    check_rc(orte_finalize(), "orte_finalize");
    return 0;
}
