/* opal_memhooks: the hooks see munmap, mremap, madvise, brk, shmdt and the
 * C library's own releases; an opal_rcache that watches them never hands
 * out the registration of memory that went away. Exits 77 (skipped) with
 * the reason where the hooks cannot be installed. */
#include "opal/opal_config.h"

#include <dlfcn.h>
#include <errno.h>
#include <gnu/lib-names.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

#include "opal/class/opal_rcache.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_memhooks.h"
#include "test/support/opal_test.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define OWN_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define OWN_MALLOC 1
#endif
#endif
#ifndef OWN_MALLOC
#define OWN_MALLOC 0
#endif

static size_t page;

static char *map_pages(size_t n)
{
    void *p = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(p, MAP_FAILED);
    return p;
}

/* ----------------------------------------------- a subscriber that records */

#define MAX_SEEN 256
static struct {
    uintptr_t lo, hi;
} seen[MAX_SEEN];
static atomic_uint nseen;

OPAL_MEMHOOKS_CALLBACK static void record(void *base, size_t size, void *ctx)
{
    (void) ctx;
    unsigned i = atomic_fetch_add_explicit(&nseen, 1, memory_order_relaxed);
    if (i < MAX_SEEN) {
        seen[i].lo = (uintptr_t) base;
        seen[i].hi = (uintptr_t) base + size;
    }
}

/* Some recorded release covers [p, p + size). */
static bool was_seen(const void *p, size_t size)
{
    unsigned n = atomic_load_explicit(&nseen, memory_order_relaxed);
    for (unsigned i = 0; i < n && i < MAX_SEEN; i++) {
        if (seen[i].lo <= (uintptr_t) p && (uintptr_t) p + size <= seen[i].hi) {
            return true;
        }
    }
    return false;
}

static void recorder_on(void)
{
    atomic_store(&nseen, 0);
    ck_assert_int_eq(opal_memhooks_subscribe(record, NULL), OPAL_SUCCESS);
    ck_assert(opal_memhooks_active());
}

START_TEST(munmap_mremap_and_madvise_are_reported)
{
    recorder_on();
    char *a = map_pages(4);
    ck_assert_int_eq(madvise(a, page, MADV_WILLNEED), 0);
    ck_assert(!was_seen(a, page));
    ck_assert_int_eq(madvise(a, page, MADV_DONTNEED), 0);
    ck_assert(was_seen(a, page));
    /* Shrinking in place gives back the tail. */
    ck_assert_ptr_eq(mremap(a, 4 * page, 2 * page, 0), a);
    ck_assert(was_seen(a + 2 * page, 2 * page));
    ck_assert(!was_seen(a + page, page));
    ck_assert_int_eq(munmap(a, 2 * page), 0);
    ck_assert(was_seen(a, 2 * page));
    opal_memhooks_unsubscribe(record, NULL);
    /* Unsubscribed: nothing more is recorded. */
    unsigned before = atomic_load(&nseen);
    char *b = map_pages(1);
    ck_assert_int_eq(munmap(b, page), 0);
    ck_assert_uint_eq(atomic_load(&nseen), before);
}
END_TEST

START_TEST(brk_shrinking_and_shmdt_are_reported)
{
    recorder_on();
    char *top = sbrk(0);
    ck_assert_ptr_ne(sbrk((intptr_t) (2 * page)), (void *) -1);
    ck_assert_ptr_ne(sbrk(-(intptr_t) (2 * page)), (void *) -1);
    ck_assert_ptr_eq(sbrk(0), top);
    ck_assert(was_seen(top, 2 * page));

    int id = shmget(IPC_PRIVATE, 3 * page, IPC_CREAT | 0600);
    if (id >= 0) {
        char *s = shmat(id, NULL, 0);
        ck_assert_ptr_ne(s, (void *) -1);
        (void) shmctl(id, IPC_RMID, NULL);
        ck_assert_int_eq(shmdt(s), 0);
        ck_assert(was_seen(s, 3 * page));
    } else {
        fprintf(stderr, "shmdt not tried: shmget: %s\n", strerror(errno));
    }
    opal_memhooks_unsubscribe(record, NULL);
}
END_TEST

START_TEST(free_of_a_large_block_is_reported)
{
    if (OWN_MALLOC || opal_test_under_valgrind()) {
        /* The sanitizer's or valgrind's malloc replaces glibc's and keeps
         * freed blocks in quarantine: no release to see. */
        fprintf(stderr, "free() case not run: malloc is the tool's, not glibc's\n");
        return;
    }
    recorder_on();
    ck_assert_int_eq(mallopt(M_MMAP_THRESHOLD, 256 * 1024), 1);
    size_t size = 4 << 20;
    char *p = malloc(size);
    ck_assert_ptr_nonnull(p);
    memset(p, 1, size);
    /* Addresses kept as numbers: the blocks are gone when they are looked
     * for. */
    uintptr_t old = (uintptr_t) p;
    /* realloc of an mmap'd chunk is glibc's own mremap. */
    char *q = realloc(p, 2 * size);
    ck_assert_ptr_nonnull(q);
    uintptr_t now = (uintptr_t) q;
    if (now != old) {
        ck_assert(was_seen((void *) (old + page), size / 2));
    }
    free(q);
    ck_assert(was_seen((void *) (now + page), size));
    opal_memhooks_unsubscribe(record, NULL);
}
END_TEST

/* A subscriber that releases memory itself is called again for that. */
static char *side;
OPAL_MEMHOOKS_CALLBACK static void unmap_side(void *base, size_t size, void *ctx)
{
    (void) base;
    (void) size;
    (void) ctx;
    char *s = side;
    if (NULL != s) {
        side = NULL;
        ck_assert_int_eq(munmap(s, page), 0);
    }
}

START_TEST(a_subscriber_that_munmaps_is_called_again)
{
    recorder_on();
    ck_assert_int_eq(opal_memhooks_subscribe(unmap_side, NULL), OPAL_SUCCESS);
    side = map_pages(1);
    char *s = side;
    char *a = map_pages(1);
    ck_assert_int_eq(munmap(a, page), 0);
    ck_assert_ptr_null(side);
    ck_assert(was_seen(a, page));
    ck_assert(was_seen(s, page));
    opal_memhooks_unsubscribe(unmap_side, NULL);
    opal_memhooks_unsubscribe(record, NULL);
}
END_TEST

START_TEST(the_switch_turns_the_hooks_off)
{
    ck_assert_int_eq(setenv("OPAL_MCA_opal_memhooks", "none", 1), 0);
    ck_assert_int_eq(opal_memhooks_subscribe(record, NULL), OPAL_ERR_NOT_SUPPORTED);
    ck_assert_ptr_nonnull(opal_memhooks_why());
    ck_assert_ptr_nonnull(strstr(opal_memhooks_why(), "is none"));
    ck_assert_int_eq(setenv("OPAL_MCA_opal_memhooks", "sometimes", 1), 0);
    ck_assert_int_eq(opal_memhooks_subscribe(record, NULL), OPAL_ERR_NOT_SUPPORTED);
    ck_assert_ptr_nonnull(strstr(opal_memhooks_why(), "sometimes"));
    ck_assert_int_eq(unsetenv("OPAL_MCA_opal_memhooks"), 0);
    /* The MCA variable (mca_base_open passes it) wins over the
     * environment until it is taken back. */
    opal_memhooks_set_mode("none");
    ck_assert_int_eq(opal_memhooks_subscribe(record, NULL), OPAL_ERR_NOT_SUPPORTED);
    ck_assert_ptr_nonnull(strstr(opal_memhooks_why(), "MCA variable opal_memhooks"));
    opal_memhooks_set_mode(NULL);
    ck_assert_int_eq(opal_memhooks_subscribe(NULL, NULL), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_memhooks_subscribe(record, NULL), OPAL_SUCCESS);
    ck_assert_ptr_null(opal_memhooks_why());
    opal_memhooks_unsubscribe(record, NULL);
}
END_TEST

/* ---------------------------------------------- an rcache that watches */

#define MAX_REGS 4096

typedef struct {
    int registered;
    int deregistered;
    uintptr_t base[MAX_REGS];
    int live[MAX_REGS];
    /* deregister of this registration index unmaps `unmap` (a release
     * inside the cache's own deregister). */
    int unmap_on;
    char *unmap;
} fake_nic_t;

static fake_nic_t nic;
static opal_rcache_t rc;

static int fake_register(void *ctx, void *base, size_t size, void **reg)
{
    fake_nic_t *n = ctx;
    (void) size;
    int i = n->registered++;
    ck_assert_int_lt(i, MAX_REGS);
    n->base[i] = (uintptr_t) base;
    n->live[i] = 1;
    *reg = (void *) (uintptr_t) (i + 1);
    return OPAL_SUCCESS;
}

static void fake_deregister(void *ctx, void *reg)
{
    fake_nic_t *n = ctx;
    int i = (int) (uintptr_t) reg - 1;
    ck_assert_int_eq(n->live[i], 1);
    n->live[i] = 0;
    n->deregistered++;
    if (i == n->unmap_on && NULL != n->unmap) {
        char *u = n->unmap;
        n->unmap = NULL;
        ck_assert_int_eq(munmap(u, page), 0);
    }
}

static int index_of(const opal_rcache_entry_t *e)
{
    return (int) (uintptr_t) e->reg - 1;
}

static void rc_setup(void)
{
    memset(&nic, 0, sizeof(nic));
    nic.unmap_on = -1;
    OBJ_CONSTRUCT(&rc, opal_rcache_t);
    ck_assert_int_eq(opal_rcache_init(&rc, 0, fake_register, fake_deregister, &nic), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rcache_watch(&rc), OPAL_SUCCESS);
}

/* Registers [p, p + size) and lets go of it: cached, unheld. */
static int cache(void *p, size_t size)
{
    opal_rcache_entry_t *e;
    ck_assert_int_eq(opal_rcache_acquire(&rc, p, size, &e), OPAL_SUCCESS);
    int i = index_of(e);
    opal_rcache_release(&rc, e);
    return i;
}

START_TEST(munmap_of_a_registered_range_invalidates_it)
{
    rc_setup();
    char *a = map_pages(2);
    int i = cache(a, 2 * page);
    ck_assert_int_eq(cache(a, page), i); /* a hit */
    ck_assert_int_eq(munmap(a, 2 * page), 0);
    /* The next call applies the release. */
    ck_assert_uint_eq(opal_rcache_invalidate(&rc, NULL, 0), 0);
    ck_assert_int_eq(nic.live[i], 0);
    ck_assert_uint_eq(rc.pinned, 0);
    ck_assert_uint_ge(rc.released, 1);
    OBJ_DESTRUCT(&rc);
}
END_TEST

START_TEST(a_range_unmapped_and_mapped_again_is_a_miss)
{
    rc_setup();
    char *a = map_pages(1);
    int i = cache(a, page);
    ck_assert_int_eq(munmap(a, page), 0);
    /* MAP_FIXED_NOREPLACE replaces nothing, so this mmap reports
     * nothing: only the munmap can have told the cache. */
    char *b = mmap(a, page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    ck_assert_ptr_eq(b, a);
    opal_rcache_entry_t *e;
    ck_assert_int_eq(opal_rcache_acquire(&rc, b, page, &e), OPAL_SUCCESS);
    ck_assert_int_ne(index_of(e), i);
    ck_assert_int_eq(nic.live[i], 0);
    ck_assert_uint_eq(rc.misses, 2);
    ck_assert_uint_eq(rc.hits, 0);
    opal_rcache_release(&rc, e);
    ck_assert_int_eq(munmap(b, page), 0);
    OBJ_DESTRUCT(&rc);
}
END_TEST

START_TEST(a_held_registration_goes_at_its_last_release)
{
    rc_setup();
    char *a = map_pages(1);
    opal_rcache_entry_t *e;
    ck_assert_int_eq(opal_rcache_acquire(&rc, a, page, &e), OPAL_SUCCESS);
    ck_assert_int_eq(munmap(a, page), 0);
    opal_rcache_entry_t *f;
    char *b = map_pages(1);
    ck_assert_int_eq(opal_rcache_acquire(&rc, b, page, &f), OPAL_SUCCESS);
    ck_assert(e->invalid);
    ck_assert_int_eq(nic.live[index_of(e)], 1);
    int i = index_of(e);
    opal_rcache_release(&rc, e);
    ck_assert_int_eq(nic.live[i], 0);
    opal_rcache_release(&rc, f);
    ck_assert_int_eq(munmap(b, page), 0);
    OBJ_DESTRUCT(&rc);
}
END_TEST

/* A tool's malloc (valgrind's, a sanitizer's) unmaps freed blocks with
 * its own system calls: the hooks say so, and a registration cache must
 * not trust them for free() then (btl/verbs reads this). */
START_TEST(a_tools_malloc_is_named_as_unseen)
{
    const char *why = opal_memhooks_free_unseen();
    if (OWN_MALLOC || opal_test_under_valgrind()) {
        ck_assert_ptr_nonnull(why);
        ck_assert_ptr_nonnull(strstr(why, "unmaps freed blocks behind libc"));
    } else {
        ck_assert_ptr_null(why);
    }
}
END_TEST

START_TEST(free_of_a_large_block_invalidates)
{
    if (OWN_MALLOC || opal_test_under_valgrind()) {
        fprintf(stderr, "free() case not run: malloc is the tool's, not glibc's\n");
        return;
    }
    rc_setup();
    ck_assert_int_eq(mallopt(M_MMAP_THRESHOLD, 256 * 1024), 1);
    size_t size = 1 << 20;
    char *p = malloc(size);
    ck_assert_ptr_nonnull(p);
    int i = cache(p, size);
    free(p);
    ck_assert_uint_eq(opal_rcache_invalidate(&rc, NULL, 0), 0);
    ck_assert_int_eq(nic.live[i], 0);
    OBJ_DESTRUCT(&rc);
}
END_TEST

START_TEST(mremap_moving_invalidates)
{
    rc_setup();
    char *a = map_pages(2);
    char *to = map_pages(2);
    int i = cache(a, 2 * page);
    int j = cache(to, 2 * page);
    /* MREMAP_FIXED over `to` moves a there: both old ranges are gone. */
    char *moved = mremap(a, 2 * page, 2 * page, MREMAP_MAYMOVE | MREMAP_FIXED, to);
    ck_assert_ptr_eq(moved, to);
    ck_assert_uint_eq(opal_rcache_invalidate(&rc, NULL, 0), 0);
    ck_assert_int_eq(nic.live[i], 0);
    ck_assert_int_eq(nic.live[j], 0);
    ck_assert_int_eq(munmap(moved, 2 * page), 0);
    OBJ_DESTRUCT(&rc);
}
END_TEST

START_TEST(madvise_dontneed_invalidates)
{
    rc_setup();
    char *a = map_pages(2);
    int i = cache(a, 2 * page);
    ck_assert_int_eq(madvise(a + page, page, MADV_DONTNEED), 0);
    ck_assert_uint_eq(opal_rcache_invalidate(&rc, NULL, 0), 0);
    ck_assert_int_eq(nic.live[i], 0);
    ck_assert_int_eq(munmap(a, 2 * page), 0);
    OBJ_DESTRUCT(&rc);
}
END_TEST

START_TEST(munmap_of_a_middle_page_drops_only_what_overlaps)
{
    rc_setup();
    char *a = map_pages(3);
    int r0 = cache(a, page);
    int r1 = cache(a + page, page);
    int r2 = cache(a + 2 * page, page);
    int all = cache(a, 3 * page);
    ck_assert_int_eq(munmap(a + page, page), 0);
    ck_assert_uint_eq(opal_rcache_invalidate(&rc, NULL, 0), 0);
    ck_assert_int_eq(nic.live[r0], 1);
    ck_assert_int_eq(nic.live[r1], 0);
    ck_assert_int_eq(nic.live[r2], 1);
    ck_assert_int_eq(nic.live[all], 0);
    ck_assert_int_eq(cache(a, page), r0); /* still a hit */
    ck_assert_int_eq(munmap(a, page), 0);
    ck_assert_int_eq(munmap(a + 2 * page, page), 0);
    OBJ_DESTRUCT(&rc);
}
END_TEST

START_TEST(a_release_inside_deregister_is_applied_too)
{
    rc_setup();
    char *a = map_pages(1);
    char *b = map_pages(1);
    char *c = map_pages(1);
    int ia = cache(a, page);
    int ib = cache(b, page);
    /* Deregistering a's entry unmaps b: the hook fires inside the cache's
     * own call, while it walks its tree. */
    nic.unmap_on = ia;
    nic.unmap = b;
    ck_assert_int_eq(munmap(a, page), 0);
    int ic = cache(c, page);
    ck_assert_int_eq(nic.live[ia], 0);
    ck_assert_ptr_null(nic.unmap);
    ck_assert_int_eq(nic.live[ib], 0);
    ck_assert_int_eq(nic.live[ic], 1);
    ck_assert_uint_eq(rc.pinned, page);
    ck_assert_int_eq(munmap(c, page), 0);
    OBJ_DESTRUCT(&rc);
}
END_TEST

START_TEST(many_releases_between_calls_still_invalidate)
{
    rc_setup();
    enum { N = OPAL_RCACHE_PENDING_MAX + 8 };
    char *p[N];
    int idx[N];
    for (int k = 0; k < N; k++) {
        p[k] = map_pages(1);
        idx[k] = cache(p[k], page);
    }
    for (int k = 0; k < N; k++) {
        ck_assert_int_eq(munmap(p[k], page), 0);
    }
    ck_assert_uint_eq(opal_rcache_invalidate(&rc, NULL, 0), 0);
    for (int k = 0; k < N; k++) {
        ck_assert_int_eq(nic.live[idx[k]], 0);
    }
    ck_assert_uint_eq(rc.pinned, 0);
    OBJ_DESTRUCT(&rc);
}
END_TEST

START_TEST(a_release_that_cannot_be_recorded_invalidates_everything)
{
    rc_setup();
    char *a = map_pages(1);
    char *b = map_pages(1);
    int ia = cache(a, page);
    int ib = cache(b, page);
    /* As if this thread held the table when a signal handler unmapped a:
     * the hook gives up waiting, and the next call drops every entry. */
    ck_assert(!atomic_flag_test_and_set(&rc.pending_lock));
    ck_assert_int_eq(munmap(a, page), 0);
    atomic_flag_clear(&rc.pending_lock);
    ck_assert_uint_eq(opal_rcache_invalidate(&rc, NULL, 0), 0);
    ck_assert_int_eq(nic.live[ia], 0);
    ck_assert_int_eq(nic.live[ib], 0);
    ck_assert_uint_eq(rc.pinned, 0);
    ck_assert_int_eq(munmap(b, page), 0);
    OBJ_DESTRUCT(&rc);
}
END_TEST

/* libc's munmap as it was before the hooks went in (main saves it). */
static unsigned char *libc_munmap;
static unsigned char munmap_before[16];

START_TEST(a_patcher_writing_over_the_hooks_stops_the_watch)
{
    rc_setup();
    char *a = map_pages(1);
    int ia = cache(a, page);
    /* What another patcher loaded later would do (this test's process is
     * its own: Check forks it). */
    uintptr_t lo = (uintptr_t) libc_munmap & ~(uintptr_t) (page - 1);
    ck_assert_int_eq(mprotect((void *) lo, 2 * page, PROT_READ | PROT_WRITE | PROT_EXEC), 0);
    memcpy(libc_munmap, munmap_before, sizeof(munmap_before));
    ck_assert_int_eq(mprotect((void *) lo, 2 * page, PROT_READ | PROT_EXEC), 0);
    ck_assert(!opal_memhooks_active());
    ck_assert(rc.watching);
    ck_assert_uint_eq(opal_rcache_invalidate(&rc, NULL, 0), 0);
    ck_assert(!rc.watching);
    ck_assert_int_eq(nic.live[ia], 0);
    ck_assert_int_eq(munmap(a, page), 0);
    OBJ_DESTRUCT(&rc);
}
END_TEST

/* Threads register, release and unmap their own pages at once, the cache
 * under one lock as its users keep it. */
static pthread_mutex_t rc_lock = PTHREAD_MUTEX_INITIALIZER;

static void *unmapper(void *arg)
{
    size_t rounds = *(size_t *) arg;
    for (size_t r = 0; r < rounds; r++) {
        char *a = map_pages(2);
        opal_rcache_entry_t *e;
        pthread_mutex_lock(&rc_lock);
        int ret = opal_rcache_acquire(&rc, a, 2 * page, &e);
        if (OPAL_SUCCESS == ret) {
            opal_rcache_release(&rc, e);
        }
        pthread_mutex_unlock(&rc_lock);
        ck_assert_int_eq(ret, OPAL_SUCCESS);
        ck_assert_int_eq(munmap(a, 2 * page), 0);
    }
    return NULL;
}

START_TEST(threads_unmapping_at_once)
{
    rc_setup();
    size_t rounds = opal_test_iterations(400);
    pthread_t t[4];
    for (int k = 0; k < 4; k++) {
        ck_assert_int_eq(pthread_create(&t[k], NULL, unmapper, &rounds), 0);
    }
    for (int k = 0; k < 4; k++) {
        ck_assert_int_eq(pthread_join(t[k], NULL), 0);
    }
    ck_assert_uint_eq(opal_rcache_invalidate(&rc, NULL, 0), 0);
    /* Every registration went with its memory, none by eviction. */
    ck_assert_int_eq(nic.registered, (int) (4 * rounds));
    ck_assert_int_eq(nic.deregistered, nic.registered);
    ck_assert_uint_eq(rc.pinned, 0);
    ck_assert_uint_eq(rc.evictions, 0);
    OBJ_DESTRUCT(&rc);
}
END_TEST

static Suite *memhooks_suite(void)
{
    Suite *s = suite_create("opal_memhooks");
    OPAL_TEST_ADD(s, munmap_mremap_and_madvise_are_reported);
    OPAL_TEST_ADD(s, brk_shrinking_and_shmdt_are_reported);
    OPAL_TEST_ADD(s, free_of_a_large_block_is_reported);
    OPAL_TEST_ADD(s, a_subscriber_that_munmaps_is_called_again);
    OPAL_TEST_ADD(s, the_switch_turns_the_hooks_off);
    OPAL_TEST_ADD(s, munmap_of_a_registered_range_invalidates_it);
    OPAL_TEST_ADD(s, a_range_unmapped_and_mapped_again_is_a_miss);
    OPAL_TEST_ADD(s, a_held_registration_goes_at_its_last_release);
    OPAL_TEST_ADD(s, a_tools_malloc_is_named_as_unseen);
    OPAL_TEST_ADD(s, free_of_a_large_block_invalidates);
    OPAL_TEST_ADD(s, mremap_moving_invalidates);
    OPAL_TEST_ADD(s, madvise_dontneed_invalidates);
    OPAL_TEST_ADD(s, munmap_of_a_middle_page_drops_only_what_overlaps);
    OPAL_TEST_ADD(s, a_release_inside_deregister_is_applied_too);
    OPAL_TEST_ADD(s, many_releases_between_calls_still_invalidate);
    OPAL_TEST_ADD(s, a_release_that_cannot_be_recorded_invalidates_everything);
    OPAL_TEST_ADD(s, threads_unmapping_at_once);
    if (opal_test_can_fork() && NULL != libc_munmap) {
        OPAL_TEST_ADD(s, a_patcher_writing_over_the_hooks_stops_the_watch);
    }
    return s;
}

int main(void)
{
    page = (size_t) sysconf(_SC_PAGESIZE);
    /* Where the hooks cannot go in, there is nothing to test: say why. */
    unsetenv("OPAL_MCA_opal_memhooks");
    void *libc = dlopen(LIBC_SO, RTLD_NOW | RTLD_NOLOAD);
    if (NULL != libc) {
        libc_munmap = dlsym(libc, "munmap");
        if (NULL != libc_munmap) {
            memcpy(munmap_before, libc_munmap, sizeof(munmap_before));
        }
        dlclose(libc);
    }
    if (OPAL_SUCCESS != opal_memhooks_subscribe(record, NULL)) {
        printf("SKIP: no memory hooks here: %s\n", opal_memhooks_why());
        return 77;
    }
    opal_memhooks_unsubscribe(record, NULL);
    int ret = opal_test_run(memhooks_suite());
    opal_class_finalize();
    return ret;
}
