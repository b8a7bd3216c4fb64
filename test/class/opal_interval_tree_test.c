/* opal_interval_tree_t: containment and overlap queries against a brute
 * force model, balance after inserts and removals; opal_rcache_t on it:
 * hits, LRU eviction under a pinned-memory bound, invalidation, access
 * rights. (Invalidation by the memory hooks: opal_memhooks_test.) */
#include "opal/opal_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opal/class/opal_interval_tree.h"
#include "opal/class/opal_rcache.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

typedef struct {
    opal_interval_tree_node_t node;
    int id;
    int in_tree;
} range_t;

static range_t *range_of(opal_interval_tree_node_t *n)
{
    return (range_t *) (void *) ((char *) n - offsetof(range_t, node));
}

static void set_range(range_t *r, uint64_t low, uint64_t high)
{
    r->node.low = low;
    r->node.high = high;
}

START_TEST(empty_and_inverted_ranges_are_refused)
{
    opal_interval_tree_t t;
    OBJ_CONSTRUCT(&t, opal_interval_tree_t);
    range_t r;
    set_range(&r, 10, 10);
    ck_assert_int_eq(opal_interval_tree_insert(&t, &r.node), OPAL_ERR_BAD_PARAM);
    set_range(&r, 10, 5);
    ck_assert_int_eq(opal_interval_tree_insert(&t, &r.node), OPAL_ERR_BAD_PARAM);
    ck_assert_uint_eq(opal_interval_tree_size(&t), 0);
    ck_assert_int_eq(opal_interval_tree_remove(&t, &r.node), OPAL_ERR_NOT_FOUND);
    OBJ_DESTRUCT(&t);
}
END_TEST

START_TEST(containing_needs_the_whole_query_inside)
{
    opal_interval_tree_t t;
    OBJ_CONSTRUCT(&t, opal_interval_tree_t);
    range_t a, b;
    set_range(&a, 100, 200);
    set_range(&b, 200, 300);
    ck_assert_int_eq(opal_interval_tree_insert(&t, &a.node), OPAL_SUCCESS);
    ck_assert_int_eq(opal_interval_tree_insert(&t, &b.node), OPAL_SUCCESS);
    ck_assert_ptr_eq(opal_interval_tree_find_containing(&t, 100, 200), &a.node);
    ck_assert_ptr_eq(opal_interval_tree_find_containing(&t, 150, 160), &a.node);
    ck_assert_ptr_eq(opal_interval_tree_find_containing(&t, 200, 201), &b.node);
    /* Straddles both: neither contains it. */
    ck_assert_ptr_null(opal_interval_tree_find_containing(&t, 150, 250));
    ck_assert_ptr_null(opal_interval_tree_find_containing(&t, 99, 120));
    ck_assert_ptr_null(opal_interval_tree_find_containing(&t, 300, 301));
    OBJ_DESTRUCT(&t);
}
END_TEST

START_TEST(touching_ranges_do_not_overlap)
{
    opal_interval_tree_t t;
    OBJ_CONSTRUCT(&t, opal_interval_tree_t);
    range_t a, b;
    set_range(&a, 100, 200);
    set_range(&b, 300, 400);
    opal_interval_tree_insert(&t, &a.node);
    opal_interval_tree_insert(&t, &b.node);
    ck_assert_ptr_null(opal_interval_tree_first_overlap(&t, 200, 300));
    ck_assert_ptr_eq(opal_interval_tree_first_overlap(&t, 199, 300), &a.node);
    ck_assert_ptr_eq(opal_interval_tree_first_overlap(&t, 200, 301), &b.node);
    /* The smallest low first. */
    ck_assert_ptr_eq(opal_interval_tree_first_overlap(&t, 0, 1000), &a.node);
    OBJ_DESTRUCT(&t);
}
END_TEST

START_TEST(equal_ranges_are_distinct_nodes)
{
    opal_interval_tree_t t;
    OBJ_CONSTRUCT(&t, opal_interval_tree_t);
    range_t r[5];
    for (int i = 0; i < 5; ++i) {
        set_range(&r[i], 64, 128);
        ck_assert_int_eq(opal_interval_tree_insert(&t, &r[i].node), OPAL_SUCCESS);
    }
    ck_assert_int_eq(opal_interval_tree_remove(&t, &r[2].node), OPAL_SUCCESS);
    ck_assert_int_eq(opal_interval_tree_remove(&t, &r[2].node), OPAL_ERR_NOT_FOUND);
    ck_assert_uint_eq(opal_interval_tree_size(&t), 4);
    ck_assert_int_eq(opal_interval_tree_verify(&t), OPAL_SUCCESS);
    OBJ_DESTRUCT(&t);
}
END_TEST

typedef struct {
    int *seen;
    int count;
    uint64_t last_low;
    int stop_after;
} visit_ctx_t;

static int record_visit(opal_interval_tree_node_t *n, void *arg)
{
    visit_ctx_t *v = arg;
    ck_assert_uint_ge(n->low, v->last_low);
    v->last_low = n->low;
    v->seen[range_of(n)->id]++;
    v->count++;
    return v->stop_after && v->count >= v->stop_after ? 7 : 0;
}

/* Random ranges, some removed; every query answered as a scan of all
 * ranges answers it. */
START_TEST(queries_match_a_brute_force_scan)
{
    enum { N = 600 };
    size_t queries = opal_test_iterations(400);
    range_t *r = calloc(N, sizeof(*r));
    int *seen = calloc(N, sizeof(*seen));
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_nonnull(seen);
    opal_interval_tree_t t;
    OBJ_CONSTRUCT(&t, opal_interval_tree_t);
    srand(14);
    for (int i = 0; i < N; ++i) {
        uint64_t low = (uint64_t) (rand() % 10000);
        set_range(&r[i], low, low + 1 + (uint64_t) (rand() % 300));
        r[i].id = i;
        r[i].in_tree = 1;
        ck_assert_int_eq(opal_interval_tree_insert(&t, &r[i].node), OPAL_SUCCESS);
    }
    ck_assert_int_eq(opal_interval_tree_verify(&t), OPAL_SUCCESS);
    for (int i = 0; i < N; i += 3) {
        ck_assert_int_eq(opal_interval_tree_remove(&t, &r[i].node), OPAL_SUCCESS);
        r[i].in_tree = 0;
    }
    ck_assert_int_eq(opal_interval_tree_verify(&t), OPAL_SUCCESS);
    ck_assert_uint_eq(opal_interval_tree_size(&t), N - (N + 2) / 3);

    for (size_t q = 0; q < queries; ++q) {
        uint64_t low = (uint64_t) (rand() % 10400);
        uint64_t high = low + 1 + (uint64_t) (rand() % 200);
        int overlaps = 0, contains = 0;
        uint64_t first_low = UINT64_MAX;
        for (int i = 0; i < N; ++i) {
            if (!r[i].in_tree) {
                continue;
            }
            if (r[i].node.low < high && low < r[i].node.high) {
                overlaps++;
                first_low = r[i].node.low < first_low ? r[i].node.low : first_low;
            }
            if (r[i].node.low <= low && high <= r[i].node.high) {
                contains++;
            }
        }
        opal_interval_tree_node_t *c = opal_interval_tree_find_containing(&t, low, high);
        ck_assert_int_eq(NULL != c, contains > 0);
        if (c) {
            ck_assert(c->low <= low && high <= c->high);
        }
        opal_interval_tree_node_t *f = opal_interval_tree_first_overlap(&t, low, high);
        ck_assert_int_eq(NULL != f, overlaps > 0);
        if (f) {
            ck_assert_uint_eq(f->low, first_low);
        }
        memset(seen, 0, N * sizeof(*seen));
        visit_ctx_t v = {seen, 0, 0, 0};
        ck_assert_int_eq(opal_interval_tree_visit_overlaps(&t, low, high, record_visit, &v), 0);
        ck_assert_int_eq(v.count, overlaps);
        for (int i = 0; i < N; ++i) {
            int expect = r[i].in_tree && r[i].node.low < high && low < r[i].node.high;
            ck_assert_int_eq(seen[i], expect);
        }
    }
    OBJ_DESTRUCT(&t);
    free(seen);
    free(r);
}
END_TEST

START_TEST(visit_stops_when_asked)
{
    range_t r[10];
    int seen[10] = {0};
    opal_interval_tree_t t;
    OBJ_CONSTRUCT(&t, opal_interval_tree_t);
    for (int i = 0; i < 10; ++i) {
        set_range(&r[i], (uint64_t) i * 10, (uint64_t) i * 10 + 15);
        r[i].id = i;
        opal_interval_tree_insert(&t, &r[i].node);
    }
    visit_ctx_t v = {seen, 0, 0, 3};
    ck_assert_int_eq(opal_interval_tree_visit_overlaps(&t, 0, 1000, record_visit, &v), 7);
    ck_assert_int_eq(v.count, 3);
    ck_assert_int_eq(seen[0] + seen[1] + seen[2], 3);
    OBJ_DESTRUCT(&t);
}
END_TEST

START_TEST(sequential_inserts_stay_balanced)
{
    enum { N = 4096 };
    range_t *r = calloc(N, sizeof(*r));
    ck_assert_ptr_nonnull(r);
    opal_interval_tree_t t;
    OBJ_CONSTRUCT(&t, opal_interval_tree_t);
    for (int i = 0; i < N; ++i) {
        set_range(&r[i], (uint64_t) i * 4096, (uint64_t) i * 4096 + 4096);
        opal_interval_tree_insert(&t, &r[i].node);
    }
    ck_assert_int_eq(opal_interval_tree_verify(&t), OPAL_SUCCESS);
    /* AVL: height at most 1.44 log2(n + 2). */
    ck_assert_int_le(t.root->height, 18);
    for (int i = 0; i < N; i += 2) {
        ck_assert_int_eq(opal_interval_tree_remove(&t, &r[i].node), OPAL_SUCCESS);
    }
    ck_assert_int_eq(opal_interval_tree_verify(&t), OPAL_SUCCESS);
    ck_assert_ptr_null(opal_interval_tree_find_containing(&t, 0, 4096));
    ck_assert_ptr_eq(opal_interval_tree_find_containing(&t, 4096 + 10, 8192), &r[1].node);
    OBJ_DESTRUCT(&t);
    free(r);
}
END_TEST

/* ------------------------------------------------------------- rcache */

#define MAX_REGS 64

typedef struct {
    int registered;
    int deregistered;
    int fail_next;
    uintptr_t base[MAX_REGS];
    size_t size[MAX_REGS];
    int live[MAX_REGS];
} fake_nic_t;

static int fake_register(void *ctx, void *base, size_t size, void **reg)
{
    fake_nic_t *nic = ctx;
    if (nic->fail_next) {
        nic->fail_next = 0;
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    int i = nic->registered++;
    ck_assert_int_lt(i, MAX_REGS);
    nic->base[i] = (uintptr_t) base;
    nic->size[i] = size;
    nic->live[i] = 1;
    *reg = (void *) (uintptr_t) (i + 1);
    return OPAL_SUCCESS;
}

static void fake_deregister(void *ctx, void *reg)
{
    fake_nic_t *nic = ctx;
    int i = (int) (uintptr_t) reg - 1;
    ck_assert_int_eq(nic->live[i], 1);
    nic->live[i] = 0;
    nic->deregistered++;
}

static int reg_index(const opal_rcache_entry_t *e)
{
    return (int) (uintptr_t) e->reg - 1;
}

static fake_nic_t nic;
static opal_rcache_t rc;
static size_t page;
/* A fake address space: only addresses, never touched. */
static char *space(size_t pages)
{
    return (char *) (uintptr_t) (page * (1000 + pages));
}

static void rc_setup_limit(size_t limit_pages)
{
    memset(&nic, 0, sizeof(nic));
    OBJ_CONSTRUCT(&rc, opal_rcache_t);
    page = rc.page_size;
    ck_assert_int_eq(
        opal_rcache_init(&rc, limit_pages * page, fake_register, fake_deregister, &nic),
        OPAL_SUCCESS);
}

START_TEST(acquire_rounds_to_pages_and_hits_inside)
{
    rc_setup_limit(0);
    opal_rcache_entry_t *a, *b;
    ck_assert_int_eq(opal_rcache_acquire(&rc, space(0) + 100, 2 * page, &a), OPAL_SUCCESS);
    ck_assert_int_eq(nic.registered, 1);
    ck_assert_uint_eq(nic.base[0], (uintptr_t) space(0));
    ck_assert_uint_eq(nic.size[0], 3 * page);
    /* Inside the registered pages: a lookup. */
    ck_assert_int_eq(opal_rcache_acquire(&rc, space(1), page, &b), OPAL_SUCCESS);
    ck_assert_ptr_eq(a, b);
    ck_assert_uint_eq(a->refcount, 2);
    ck_assert_int_eq(nic.registered, 1);
    ck_assert_uint_eq(rc.hits, 1);
    opal_rcache_release(&rc, a);
    opal_rcache_release(&rc, b);
    ck_assert_int_eq(nic.deregistered, 0);
    ck_assert_uint_eq(rc.pinned, 3 * page);
    OBJ_DESTRUCT(&rc);
    ck_assert_int_eq(nic.deregistered, 1);
}
END_TEST

START_TEST(a_range_across_two_entries_is_registered_anew)
{
    rc_setup_limit(0);
    opal_rcache_entry_t *a, *b, *c;
    opal_rcache_acquire(&rc, space(0), page, &a);
    opal_rcache_acquire(&rc, space(1), page, &b);
    ck_assert_int_eq(opal_rcache_acquire(&rc, space(0) + page / 2, page, &c), OPAL_SUCCESS);
    ck_assert_ptr_ne(c, a);
    ck_assert_ptr_ne(c, b);
    ck_assert_int_eq(nic.registered, 3);
    ck_assert_uint_eq(c->size, 2 * page);
    opal_rcache_release(&rc, a);
    opal_rcache_release(&rc, b);
    opal_rcache_release(&rc, c);
    OBJ_DESTRUCT(&rc);
    ck_assert_int_eq(nic.deregistered, 3);
}
END_TEST

START_TEST(the_limit_evicts_least_recently_released_first)
{
    rc_setup_limit(3);
    opal_rcache_entry_t *e[4];
    for (int i = 0; i < 3; ++i) {
        ck_assert_int_eq(opal_rcache_acquire(&rc, space((size_t) i * 4), page, &e[i]),
                         OPAL_SUCCESS);
    }
    /* Released in the order 1, 0, 2: 1 is the oldest. */
    opal_rcache_release(&rc, e[1]);
    opal_rcache_release(&rc, e[0]);
    opal_rcache_release(&rc, e[2]);
    ck_assert_int_eq(opal_rcache_acquire(&rc, space(20), page, &e[3]), OPAL_SUCCESS);
    ck_assert_uint_eq(rc.evictions, 1);
    ck_assert_int_eq(nic.live[1], 0);
    ck_assert_int_eq(nic.live[0], 1);
    ck_assert_int_eq(nic.live[2], 1);
    ck_assert_uint_eq(rc.pinned, 3 * page);
    /* 0 and 2 are still cached; 1 must be registered again. */
    opal_rcache_entry_t *again;
    ck_assert_int_eq(opal_rcache_acquire(&rc, space(0), page, &again), OPAL_SUCCESS);
    ck_assert_int_eq(reg_index(again), 0);
    opal_rcache_release(&rc, again);
    ck_assert_int_eq(opal_rcache_acquire(&rc, space(4), page, &again), OPAL_SUCCESS);
    ck_assert_int_eq(reg_index(again), 4);
    opal_rcache_release(&rc, again);
    opal_rcache_release(&rc, e[3]);
    OBJ_DESTRUCT(&rc);
    ck_assert_int_eq(nic.deregistered, nic.registered);
}
END_TEST

START_TEST(held_entries_are_never_evicted)
{
    rc_setup_limit(2);
    opal_rcache_entry_t *a, *b, *c;
    opal_rcache_acquire(&rc, space(0), page, &a);
    opal_rcache_acquire(&rc, space(4), page, &b);
    ck_assert_int_eq(opal_rcache_acquire(&rc, space(8), page, &c), OPAL_ERR_OUT_OF_RESOURCE);
    ck_assert_int_eq(nic.deregistered, 0);
    /* More than the whole bound at once. */
    opal_rcache_release(&rc, a);
    ck_assert_int_eq(opal_rcache_acquire(&rc, space(8), 3 * page, &c), OPAL_ERR_OUT_OF_RESOURCE);
    ck_assert_int_eq(opal_rcache_acquire(&rc, space(8), page, &c), OPAL_SUCCESS);
    ck_assert_int_eq(nic.live[0], 0);
    opal_rcache_release(&rc, b);
    opal_rcache_release(&rc, c);
    OBJ_DESTRUCT(&rc);
}
END_TEST

START_TEST(invalidate_drops_unheld_now_and_held_at_release)
{
    rc_setup_limit(0);
    opal_rcache_entry_t *a, *b, *c, *d;
    opal_rcache_acquire(&rc, space(0), page, &a);
    opal_rcache_acquire(&rc, space(2), 2 * page, &b);
    opal_rcache_acquire(&rc, space(10), page, &c);
    opal_rcache_release(&rc, a);
    /* [0, 3 pages): a (unheld) and b (held); c is outside. */
    ck_assert_uint_eq(opal_rcache_invalidate(&rc, space(0), 3 * page), 2);
    ck_assert_int_eq(nic.live[0], 0);
    ck_assert_int_eq(nic.live[1], 1);
    ck_assert_int_eq(nic.live[2], 1);
    /* No new acquire finds b. */
    ck_assert_int_eq(opal_rcache_acquire(&rc, space(2), page, &d), OPAL_SUCCESS);
    ck_assert_ptr_ne(d, b);
    opal_rcache_release(&rc, b);
    ck_assert_int_eq(nic.live[1], 0);
    ck_assert_uint_eq(rc.pinned, 2 * page);
    opal_rcache_release(&rc, c);
    opal_rcache_release(&rc, d);
    OBJ_DESTRUCT(&rc);
    ck_assert_int_eq(nic.deregistered, 4);
}
END_TEST

START_TEST(a_failed_registration_is_not_cached)
{
    rc_setup_limit(0);
    opal_rcache_entry_t *a = NULL;
    nic.fail_next = 1;
    ck_assert_int_eq(opal_rcache_acquire(&rc, space(0), page, &a), OPAL_ERR_OUT_OF_RESOURCE);
    ck_assert_uint_eq(rc.pinned, 0);
    ck_assert_int_eq(opal_rcache_acquire(&rc, space(0), 0, &a), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_rcache_acquire(&rc, (void *) (UINTPTR_MAX - 10), 100, &a),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_rcache_acquire(&rc, space(0), page, &a), OPAL_SUCCESS);
    ck_assert_uint_eq(rc.misses, 1);
    opal_rcache_release(&rc, a);
    OBJ_DESTRUCT(&rc);
    ck_assert_int_eq(nic.deregistered, 1);
}
END_TEST

START_TEST(destruct_deregisters_held_and_invalidated_entries)
{
    rc_setup_limit(0);
    opal_rcache_entry_t *a, *b;
    opal_rcache_acquire(&rc, space(0), page, &a);
    opal_rcache_acquire(&rc, space(4), page, &b);
    opal_rcache_invalidate(&rc, space(4), 1);
    OBJ_DESTRUCT(&rc);
    ck_assert_int_eq(nic.deregistered, 2);
}
END_TEST

/* Rights: a register function told what each acquire asks for. */
static unsigned last_access;
static int fake_register_access(void *ctx, void *base, size_t size, unsigned access, void **reg)
{
    last_access = access;
    return fake_register(ctx, base, size, reg);
}

static void rc_setup_access(void)
{
    memset(&nic, 0, sizeof(nic));
    OBJ_CONSTRUCT(&rc, opal_rcache_t);
    page = rc.page_size;
    ck_assert_int_eq(opal_rcache_init_access(&rc, 0, fake_register_access, fake_deregister, &nic),
                     OPAL_SUCCESS);
}

START_TEST(an_entry_with_fewer_rights_is_widened_not_handed_out)
{
    rc_setup_access();
    opal_rcache_entry_t *a, *b, *c;
    ck_assert_int_eq(opal_rcache_acquire_access(&rc, space(0), 4 * page, 0x1, &a), OPAL_SUCCESS);
    ck_assert_uint_eq(last_access, 0x1);
    opal_rcache_release(&rc, a);
    /* Inside a's range but asking for a right a lacks: a new entry with
     * both rights over a's whole range; a (unheld) goes now. */
    ck_assert_int_eq(opal_rcache_acquire_access(&rc, space(1), page, 0x4, &b), OPAL_SUCCESS);
    ck_assert_ptr_ne(b, a);
    ck_assert_uint_eq(last_access, 0x5);
    ck_assert_uint_eq(b->access, 0x5);
    ck_assert_ptr_eq(b->base, space(0));
    ck_assert_uint_eq(b->size, 4 * page);
    ck_assert_int_eq(nic.live[0], 0);
    /* Either right alone, or none, is now a hit on b. */
    ck_assert_int_eq(opal_rcache_acquire_access(&rc, space(0), page, 0x1, &c), OPAL_SUCCESS);
    ck_assert_ptr_eq(c, b);
    opal_rcache_release(&rc, c);
    ck_assert_int_eq(opal_rcache_acquire(&rc, space(3), page, &c), OPAL_SUCCESS);
    ck_assert_ptr_eq(c, b);
    opal_rcache_release(&rc, c);
    ck_assert_uint_eq(rc.hits, 2);
    ck_assert_uint_eq(rc.pinned, 4 * page);
    opal_rcache_release(&rc, b);
    OBJ_DESTRUCT(&rc);
    ck_assert_int_eq(nic.deregistered, 2);
}
END_TEST

START_TEST(a_held_narrower_entry_stays_valid_until_released)
{
    rc_setup_access();
    opal_rcache_entry_t *a, *b;
    ck_assert_int_eq(opal_rcache_acquire_access(&rc, space(0), page, 0x2, &a), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rcache_acquire_access(&rc, space(0), page, 0x8, &b), OPAL_SUCCESS);
    ck_assert_uint_eq(b->access, 0xa);
    ck_assert(a->invalid);
    ck_assert_int_eq(nic.live[0], 1);
    opal_rcache_release(&rc, a);
    ck_assert_int_eq(nic.live[0], 0);
    ck_assert_uint_eq(rc.pinned, page);
    opal_rcache_release(&rc, b);
    /* Rights need a register function that takes them. */
    OBJ_DESTRUCT(&rc);
    rc_setup_limit(0);
    ck_assert_int_eq(opal_rcache_acquire_access(&rc, space(0), page, 0x1, &a), OPAL_ERR_BAD_PARAM);
    OBJ_DESTRUCT(&rc);
}
END_TEST

static Suite *interval_tree_suite(void)
{
    Suite *s = suite_create("opal_interval_tree");
    OPAL_TEST_ADD(s, empty_and_inverted_ranges_are_refused);
    OPAL_TEST_ADD(s, containing_needs_the_whole_query_inside);
    OPAL_TEST_ADD(s, touching_ranges_do_not_overlap);
    OPAL_TEST_ADD(s, equal_ranges_are_distinct_nodes);
    OPAL_TEST_ADD(s, queries_match_a_brute_force_scan);
    OPAL_TEST_ADD(s, visit_stops_when_asked);
    OPAL_TEST_ADD(s, sequential_inserts_stay_balanced);
    OPAL_TEST_ADD(s, acquire_rounds_to_pages_and_hits_inside);
    OPAL_TEST_ADD(s, a_range_across_two_entries_is_registered_anew);
    OPAL_TEST_ADD(s, the_limit_evicts_least_recently_released_first);
    OPAL_TEST_ADD(s, held_entries_are_never_evicted);
    OPAL_TEST_ADD(s, invalidate_drops_unheld_now_and_held_at_release);
    OPAL_TEST_ADD(s, a_failed_registration_is_not_cached);
    OPAL_TEST_ADD(s, destruct_deregisters_held_and_invalidated_entries);
    OPAL_TEST_ADD(s, an_entry_with_fewer_rights_is_widened_not_handed_out);
    OPAL_TEST_ADD(s, a_held_narrower_entry_stays_valid_until_released);
    return s;
}

int main(void)
{
    int rc_ = opal_test_run(interval_tree_suite());
    opal_class_finalize();
    return rc_;
}
