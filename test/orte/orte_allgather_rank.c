/*
 * The modex at the size of a node: an orte program that any launcher
 * starts (mcarun, or a PMIx launcher such as Open MPI's mpirun).
 *
 *   orte_allgather_rank [--fences K] [--bytes B]
 *
 * Every rank puts a value of B bytes (default 64) that follows from its
 * rank, fences with collection, reads every other rank's value without
 * waiting (a collecting fence brought them all) and compares it byte for
 * byte, then finalizes. With --fences K it then meets the others in a
 * fence without collection and does K more rounds of "put a new value,
 * fence with collection", checking the last round's values; rank 0 prints
 * "collect_fence_us <mean>", the mean time of one such fence.
 *
 * Rank 0 prints "allgather ok: N ranks, M values checked" and every rank
 * exits 0; any mismatch prints "FAIL rank R: ..." and exits 1 without
 * orte_finalize, which makes the launcher stop the job.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "orte/runtime/orte_globals.h"
#include "orte/runtime/orte_init.h"

static uint32_t my_rank;

static void fail(const char *format, ...) OPAL_PRINTF_LIKE(1, 2);
static void fail(const char *format, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, format);
    vsnprintf(text, sizeof(text), format, ap);
    va_end(ap);
    printf("FAIL rank %" PRIu32 ": %s\n", my_rank, text);
    fflush(stdout);
    exit(1);
}

/* The value rank puts in round: every byte follows from both. */
static void make_value(uint32_t rank, int round, unsigned char *buf, size_t size)
{
    uint64_t x = ((uint64_t) rank << 32) ^ (uint64_t) (round + 1) * 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < size; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        buf[i] = (unsigned char) (x >> 56);
    }
}

static void put(int round, size_t bytes)
{
    char key[32];
    unsigned char *value = malloc(bytes);
    if (NULL == value) {
        fail("out of memory");
    }
    snprintf(key, sizeof(key), "allgather.%d", round);
    make_value(my_rank, round, value, bytes);
    int rc = opal_modex_send(key, value, bytes, OPAL_MODEX_SCOPE_GLOBAL);
    free(value);
    if (OPAL_SUCCESS != rc) {
        fail("opal_modex_send: %s", opal_strerror(rc));
    }
}

/* Reads every other rank's value of round at once (timeout 0: the
 * collecting fence must have brought it); returns how many it checked. */
static uint32_t check_all(int round, uint32_t size, size_t bytes)
{
    char key[32];
    unsigned char *want = malloc(bytes);
    if (NULL == want) {
        fail("out of memory");
    }
    snprintf(key, sizeof(key), "allgather.%d", round);
    uint32_t checked = 0;
    for (uint32_t peer = 0; peer < size; ++peer) {
        if (peer == my_rank) {
            continue;
        }
        void *got = NULL;
        size_t got_size = 0;
        int rc = opal_modex_recv(peer, key, &got, &got_size, 0);
        if (OPAL_SUCCESS != rc) {
            fail("rank %" PRIu32 "'s %s after a collecting fence: %s", peer, key,
                 opal_strerror(rc));
        }
        make_value(peer, round, want, bytes);
        if (got_size != bytes || 0 != memcmp(got, want, bytes)) {
            fail("rank %" PRIu32 "'s %s differs (%zu bytes, %zu expected)", peer, key, got_size,
                 bytes);
        }
        free(got);
        ++checked;
    }
    free(want);
    return checked;
}

int main(int argc, char **argv)
{
    int fences = 0;
    size_t bytes = 64;
    for (int i = 1; i < argc; ++i) {
        if (0 == strcmp(argv[i], "--fences") && i + 1 < argc) {
            fences = atoi(argv[++i]);
        } else if (0 == strcmp(argv[i], "--bytes") && i + 1 < argc) {
            bytes = (size_t) strtoul(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: orte_allgather_rank [--fences K] [--bytes B]\n");
            return 2;
        }
    }
    int rc = orte_init(&argc, &argv);
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "orte_allgather_rank: orte_init: %s\n", opal_strerror(rc));
        return 1;
    }
    my_rank = orte_process_info.my_name.vpid;
    uint32_t size = orte_process_info.size;

    put(0, bytes);
    if (OPAL_SUCCESS != (rc = opal_fence(true))) {
        fail("collecting fence: %s", opal_strerror(rc));
    }
    uint32_t checked = check_all(0, size, bytes);

    if (0 < fences) {
        if (OPAL_SUCCESS != (rc = opal_fence(false))) {
            fail("fence: %s", opal_strerror(rc));
        }
        uint64_t start = opal_timer_ns();
        for (int round = 1; round <= fences; ++round) {
            put(round, bytes);
            if (OPAL_SUCCESS != (rc = opal_fence(true))) {
                fail("collecting fence %d: %s", round, opal_strerror(rc));
            }
        }
        uint64_t elapsed = opal_timer_ns() - start;
        checked += check_all(fences, size, bytes);
        if (0 == my_rank) {
            printf("collect_fence_us %.1f\n", (double) elapsed / 1e3 / fences);
        }
    }
    if (0 == my_rank) {
        printf("allgather ok: %" PRIu32 " ranks, %" PRIu32 " values checked\n", size, checked);
        fflush(stdout);
    }
    rc = orte_finalize();
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "orte_allgather_rank: orte_finalize: %s\n", opal_strerror(rc));
        return 1;
    }
    return 0;
}
