/*
 * A rank that checks the modex through the launcher client directly.
 *
 *   orte_modex_rank MODE SEED
 *
 * MODE collect | direct: every rank puts pairs with random keys, sizes
 *   (empty to 1 MiB) and contents, all derived from (SEED, rank, index),
 *   plus one REMOTE pair; fences (collecting or not); then gets every
 *   other rank's pairs and compares them byte for byte. A REMOTE pair must
 *   stay invisible.
 * MODE early: every rank commits, then at once gets every other rank's
 *   first pair, waiting for a commit that may not have happened yet.
 * MODE timeout: rank 0 gets a key rank 1 never puts, with a 200 ms
 *   timeout, and must see OPAL_ERR_TIMEOUT; then both fence.
 *
 * Prints "rank R ok: N values" and exits 0, or says what differed and
 * exits 1.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "orte/util/orte_launcher_client.h"

#define PAIRS     12
#define BIG_VALUE (1024u * 1024u)

/* splitmix64: a small PRNG whose stream every rank can recompute. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t pair_seed(uint64_t seed, uint32_t rank, int index)
{
    return mix(seed ^ mix(((uint64_t) rank << 32) | (uint32_t) index));
}

/* Key: random printable characters of random length, unique by its
 * "r<rank>i<index>." prefix. */
static void make_key(uint64_t s, uint32_t rank, int index, char *key)
{
    int n = snprintf(key, 32, "r%" PRIu32 "i%d.", rank, index);
    int len = n + (int) (mix(s) % (uint64_t) (200 - n));
    for (int i = n; i < len; ++i) {
        key[i] = (char) ('!' + mix(s + (uint64_t) i) % 94);
    }
    key[len] = '\0';
}

/* Sizes: pair 0 empty, pair 1 exactly 1 MiB, the rest up to 64 KiB. */
static size_t make_size(uint64_t s, int index)
{
    if (0 == index) {
        return 0;
    }
    if (1 == index) {
        return BIG_VALUE;
    }
    return (size_t) (mix(s + 1000) % (64u * 1024u));
}

static void fill(uint64_t s, unsigned char *buf, size_t size)
{
    uint64_t x = s;
    for (size_t i = 0; i < size; ++i) {
        if (0 == i % 8) {
            x = mix(x);
        }
        buf[i] = (unsigned char) (x >> (8 * (i % 8)));
    }
}

static int fail(uint32_t rank, const char *what, int rc)
{
    printf("rank %" PRIu32 " FAILED: %s: %s\n", rank, what, opal_strerror_name(rc));
    return 1;
}

static int put_pairs(const orte_launcher_job_info_t *info, uint64_t seed, int pairs)
{
    unsigned char *buf = malloc(BIG_VALUE);
    char key[256];
    int rc = NULL == buf ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;
    for (int i = 0; i < pairs && OPAL_SUCCESS == rc; ++i) {
        uint64_t s = pair_seed(seed, info->rank, i);
        size_t size = make_size(s, i);
        make_key(s, info->rank, i, key);
        fill(s, buf, size);
        rc = orte_launcher_client_put(
            key, buf, size, 0 == i % 2 ? ORTE_MODEX_SCOPE_GLOBAL : ORTE_MODEX_SCOPE_LOCAL);
    }
    if (OPAL_SUCCESS == rc) {
        rc = orte_launcher_client_put("hidden", "remote only", 11, ORTE_MODEX_SCOPE_REMOTE);
    }
    free(buf);
    return rc;
}

/* Gets pair index of peer and compares it with what it must be. */
static int check_pair(const orte_launcher_job_info_t *info, uint64_t seed, uint32_t peer, int index,
                      int64_t timeout_ns)
{
    char key[256], what[320];
    uint64_t s = pair_seed(seed, peer, index);
    make_key(s, peer, index, key);
    size_t want = make_size(s, index), size = 0;
    void *value = NULL;
    int rc = orte_launcher_client_get(peer, key, &value, &size, timeout_ns);
    if (OPAL_SUCCESS != rc) {
        snprintf(what, sizeof(what), "get pair %d of rank %" PRIu32, index, peer);
        return fail(info->rank, what, rc);
    }
    unsigned char *expect = malloc(want + 1);
    fill(s, expect, want);
    int bad = size != want || 0 != memcmp(value, expect, want);
    if (bad) {
        printf("rank %" PRIu32 " FAILED: pair %d of rank %" PRIu32 ": %zu bytes, expected %zu\n",
               info->rank, index, peer, size, want);
    }
    free(expect);
    free(value);
    return bad;
}

static int run_integrity(const orte_launcher_job_info_t *info, uint64_t seed, int collect)
{
    int rc = put_pairs(info, seed, PAIRS);
    if (OPAL_SUCCESS != rc) {
        return fail(info->rank, "put", rc);
    }
    rc = orte_launcher_client_fence(collect);
    if (OPAL_SUCCESS != rc) {
        return fail(info->rank, "fence", rc);
    }
    int checked = 0;
    for (uint32_t peer = 0; peer < info->size; ++peer) {
        for (int i = 0; i < PAIRS; ++i) {
            if (0 != check_pair(info, seed, peer, i, 5000000000ll)) {
                return 1;
            }
            ++checked;
        }
        void *value = NULL;
        size_t size;
        rc = orte_launcher_client_get(peer, "hidden", &value, &size, 0);
        if ((peer != info->rank && OPAL_ERR_NOT_FOUND != rc) ||
            (peer == info->rank && OPAL_SUCCESS != rc)) {
            free(value);
            return fail(info->rank, "get of a REMOTE pair", rc);
        }
        free(value);
    }
    /* A second fence, so nobody finalizes while others still get. */
    rc = orte_launcher_client_fence(0);
    if (OPAL_SUCCESS != rc) {
        return fail(info->rank, "second fence", rc);
    }
    printf("rank %" PRIu32 " ok: %d values\n", info->rank, checked);
    return 0;
}

static int run_early(const orte_launcher_job_info_t *info, uint64_t seed)
{
    int rc = put_pairs(info, seed, 3);
    if (OPAL_SUCCESS == rc) {
        rc = orte_launcher_client_commit();
    }
    if (OPAL_SUCCESS != rc) {
        return fail(info->rank, "put and commit", rc);
    }
    int checked = 0;
    for (uint32_t peer = 0; peer < info->size; ++peer) {
        for (int i = 0; i < 3; ++i) {
            if (0 != check_pair(info, seed, peer, i, -1)) {
                return 1;
            }
            ++checked;
        }
    }
    rc = orte_launcher_client_fence(0);
    if (OPAL_SUCCESS != rc) {
        return fail(info->rank, "fence", rc);
    }
    printf("rank %" PRIu32 " ok: %d values\n", info->rank, checked);
    return 0;
}

static int run_timeout(const orte_launcher_job_info_t *info)
{
    if (0 == info->rank) {
        void *value = NULL;
        size_t size;
        int rc = orte_launcher_client_get(1, "never-put", &value, &size, 200000000ll);
        free(value);
        if (OPAL_ERR_TIMEOUT != rc) {
            return fail(info->rank, "get of a key never put", rc);
        }
    }
    int rc = orte_launcher_client_fence(0);
    if (OPAL_SUCCESS != rc) {
        return fail(info->rank, "fence", rc);
    }
    printf("rank %" PRIu32 " ok: 0 values\n", info->rank);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: orte_modex_rank collect|direct|early|timeout SEED\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    opal_init_util(&argc, &argv);
    uint64_t seed = strtoull(argv[2], NULL, 10);
    orte_launcher_job_info_t info;
    int rc = orte_launcher_client_connect(&info);
    if (OPAL_SUCCESS != rc) {
        opal_finalize_util();
        return fail(0, "connect", rc);
    }
    int status;
    if (0 == strcmp(argv[1], "collect") || 0 == strcmp(argv[1], "direct")) {
        status = run_integrity(&info, seed, 0 == strcmp(argv[1], "collect"));
    } else if (0 == strcmp(argv[1], "early")) {
        status = run_early(&info, seed);
    } else if (0 == strcmp(argv[1], "timeout")) {
        status = run_timeout(&info);
    } else {
        status = 2;
    }
    rc = orte_launcher_client_finalize();
    if (0 == status && OPAL_SUCCESS != rc) {
        status = fail(info.rank, "finalize", rc);
    }
    opal_finalize_util();
    return status;
}
