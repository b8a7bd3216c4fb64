/*
 * The rpc framework's tree shapes (flat, kary, knomial) as units: for
 * every group size 1..200 and several k, each non-root rank has one parent
 * that lists it as a child, every rank is reached from the root exactly
 * once, and the depth is the one the shape promises; plus the lookup by
 * name, the defaults from variables and the refusal of a bad k.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/rpc/rpc_tree.h"
#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "test/orte/mcarun_test_support.h"
#include "test/support/opal_test.h"

#define MAX_N 200

static const uint32_t ks[] = {2, 3, 4, 5, 8, 16, 64};

static void open_shapes(void)
{
    ck_assert_int_eq(opal_init_util(NULL, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_tree_open(), OPAL_SUCCESS);
}

static void close_shapes(void)
{
    ck_assert_int_eq(opal_rpc_tree_close(), OPAL_SUCCESS);
    opal_finalize_util();
}

/* Walks the tree from the root by children: each rank must be met once,
 * its parent must be the rank that listed it, the counts must agree. */
static void check_tree(const opal_rpc_tree_ops_t *t, uint32_t n, uint32_t k)
{
    static uint32_t queue[MAX_N], kids[MAX_N], seen[MAX_N], depth[MAX_N];
    memset(seen, 0, sizeof(seen));
    ck_assert_uint_eq(t->parent(0, n, k), OPAL_RPC_TREE_NONE);
    uint32_t head = 0, tail = 0;
    queue[tail++] = 0;
    seen[0] = 1;
    depth[0] = 0;
    while (head < tail) {
        uint32_t r = queue[head++];
        uint32_t count = t->nchildren(r, n, k);
        ck_assert_msg(count < n, "%s n=%u k=%u: rank %u has %u children", t->name, n, k, r, count);
        t->children(r, n, k, kids);
        for (uint32_t i = 0; i < count; ++i) {
            uint32_t c = kids[i];
            ck_assert_msg(c < n && c != 0, "%s n=%u k=%u: rank %u lists child %u", t->name, n, k, r,
                          c);
            ck_assert_msg(0 == seen[c], "%s n=%u k=%u: rank %u is listed twice", t->name, n, k, c);
            ck_assert_msg(t->parent(c, n, k) == r, "%s n=%u k=%u: child %u of %u names parent %u",
                          t->name, n, k, c, r, t->parent(c, n, k));
            seen[c] = 1;
            depth[c] = depth[r] + 1;
            queue[tail++] = c;
        }
    }
    ck_assert_msg(tail == n, "%s n=%u k=%u: %u of %u ranks reached from the root", t->name, n, k,
                  tail, n);
    for (uint32_t r = 0; r < n; ++r) {
        ck_assert_uint_eq(opal_rpc_tree_depth(t, r, n, k), depth[r]);
    }
}

static void check_all(const char *name)
{
    open_shapes();
    const opal_rpc_tree_ops_t *t = opal_rpc_tree_lookup(name);
    ck_assert_ptr_nonnull(t);
    ck_assert_str_eq(t->name, name);
    /* Under valgrind (50x slower) every size up to 40, then every 16th. */
    uint32_t dense = opal_test_under_valgrind() ? 40 : MAX_N;
    for (uint32_t n = 1; n <= MAX_N; n += n < dense ? 1 : 16) {
        for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); ++i) {
            check_tree(t, n, ks[i]);
        }
    }
    close_shapes();
}

START_TEST(flat_tree_is_a_tree_for_every_size)
{
    check_all("flat");
}
END_TEST

START_TEST(kary_tree_is_a_tree_for_every_size_and_k)
{
    check_all("kary");
}
END_TEST

START_TEST(knomial_tree_is_a_tree_for_every_size_and_k)
{
    check_all("knomial");
}
END_TEST

START_TEST(flat_tree_is_one_hop_deep_with_every_rank_under_the_root)
{
    open_shapes();
    const opal_rpc_tree_ops_t *t = opal_rpc_tree_lookup("flat");
    ck_assert_ptr_nonnull(t);
    for (uint32_t n = 1; n <= MAX_N; ++n) {
        ck_assert_uint_eq(t->nchildren(0, n, 4), n - 1);
        for (uint32_t r = 1; r < n; ++r) {
            ck_assert_uint_eq(opal_rpc_tree_depth(t, r, n, 4), 1);
            ck_assert_uint_eq(t->nchildren(r, n, 4), 0);
        }
    }
    close_shapes();
}
END_TEST

/* Breadth-first k-ary: level d holds k^d ranks, starting at
 * (k^d - 1) / (k - 1); every inner rank but the last has k children. */
START_TEST(kary_depth_is_the_level_of_a_complete_k_ary_tree)
{
    open_shapes();
    const opal_rpc_tree_ops_t *t = opal_rpc_tree_lookup("kary");
    ck_assert_ptr_nonnull(t);
    for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); ++i) {
        uint32_t k = ks[i];
        for (uint32_t r = 0; r < MAX_N; ++r) {
            uint32_t level = 0;
            uint64_t start = 0, width = 1;
            while (start + width <= r) {
                start += width;
                width *= k;
                ++level;
            }
            ck_assert_msg(opal_rpc_tree_depth(t, r, MAX_N, k) == level,
                          "kary k=%u: rank %u at depth %u, expected %u", k, r,
                          opal_rpc_tree_depth(t, r, MAX_N, k), level);
        }
        ck_assert_uint_eq(t->nchildren(0, MAX_N, k), k);
    }
    close_shapes();
}
END_TEST

/* k-nomial: a rank's depth is its number of non-zero base-k digits, and
 * the root has (k - 1) children per digit position below n. */
START_TEST(knomial_depth_is_the_count_of_nonzero_digits)
{
    open_shapes();
    const opal_rpc_tree_ops_t *t = opal_rpc_tree_lookup("knomial");
    ck_assert_ptr_nonnull(t);
    for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); ++i) {
        uint32_t k = ks[i];
        for (uint32_t r = 0; r < MAX_N; ++r) {
            uint32_t digits = 0;
            for (uint32_t v = r; v > 0; v /= k) {
                digits += 0 != v % k;
            }
            ck_assert_msg(opal_rpc_tree_depth(t, r, MAX_N, k) == digits,
                          "knomial k=%u: rank %u at depth %u, expected %u", k, r,
                          opal_rpc_tree_depth(t, r, MAX_N, k), digits);
        }
    }
    /* 64 = 2^6: the binomial root has 6 children, 1 2 4 ... 32 (biggest
     * subtree first). */
    uint32_t kids[8];
    ck_assert_uint_eq(t->nchildren(0, 64, 2), 6);
    t->children(0, 64, 2, kids);
    ck_assert_uint_eq(kids[0], 32);
    ck_assert_uint_eq(kids[5], 1);
    /* 16 in radix 4: children 4 8 12 then 1 2 3. */
    ck_assert_uint_eq(t->nchildren(0, 16, 4), 6);
    close_shapes();
}
END_TEST

START_TEST(lookup_of_an_unknown_shape_is_null)
{
    open_shapes();
    ck_assert_ptr_null(opal_rpc_tree_lookup("binary"));
    ck_assert_ptr_null(opal_rpc_tree_lookup(NULL));
    close_shapes();
}
END_TEST

START_TEST(default_shape_and_k_come_from_variables)
{
    setenv("OPAL_MCA_rpc_base_tree", "kary", 1);
    setenv("OPAL_MCA_rpc_base_tree_k", "3", 1);
    open_shapes();
    uint32_t k = 0;
    const opal_rpc_tree_ops_t *t = opal_rpc_tree_default(&k);
    ck_assert_ptr_nonnull(t);
    ck_assert_str_eq(t->name, "kary");
    ck_assert_uint_eq(k, 3);
    close_shapes();
    unsetenv("OPAL_MCA_rpc_base_tree");
    unsetenv("OPAL_MCA_rpc_base_tree_k");
}
END_TEST

START_TEST(default_is_knomial_of_radix_4)
{
    open_shapes();
    uint32_t k = 0;
    const opal_rpc_tree_ops_t *t = opal_rpc_tree_default(&k);
    ck_assert_ptr_nonnull(t);
    ck_assert_str_eq(t->name, "knomial");
    ck_assert_uint_eq(k, 4);
    close_shapes();
}
END_TEST

START_TEST(k_out_of_range_is_refused_except_by_flat)
{
    open_shapes();
    ck_assert_int_eq(opal_rpc_tree_check(opal_rpc_tree_lookup("kary"), 1), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_rpc_tree_check(opal_rpc_tree_lookup("knomial"), 65), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(opal_rpc_tree_check(opal_rpc_tree_lookup("knomial"), 2), OPAL_SUCCESS);
    ck_assert_int_eq(opal_rpc_tree_check(opal_rpc_tree_lookup("flat"), 0), OPAL_SUCCESS);
    close_shapes();
}
END_TEST

START_TEST(opal_info_lists_the_three_shapes_and_the_default_variables)
{
    char command[4096];
    snprintf(command, sizeof(command), "%s --parsable --param rpc all --level 9 2>&1",
             mcarun_test_build_path("tools/opal_info/opal_info"));
    FILE *p = popen(command, "r");
    ck_assert_ptr_nonnull(p);
    static char out[1 << 20];
    size_t len = fread(out, 1, sizeof(out) - 1, p);
    out[len] = '\0';
    ck_assert_int_eq(pclose(p), 0);
    ck_assert_msg(NULL != strstr(out, "mca:rpc:flat:status:available") &&
                      NULL != strstr(out, "mca:rpc:kary:status:available") &&
                      NULL != strstr(out, "mca:rpc:knomial:status:available"),
                  "opal_info does not list flat, kary and knomial:\n%s", out);
    ck_assert_ptr_nonnull(strstr(out, "mca:rpc:base:param:rpc_base_tree:value:knomial\n"));
    ck_assert_ptr_nonnull(strstr(out, "mca:rpc:base:param:rpc_base_tree_k:value:4\n"));
}
END_TEST

int main(void)
{
    setenv("OPAL_MCA_mca_base_component_path", RPC_TEST_PLUGIN_DIRS, 1);
    Suite *s = suite_create("rpc_tree");
    OPAL_TEST_ADD(s, flat_tree_is_a_tree_for_every_size);
    OPAL_TEST_ADD(s, kary_tree_is_a_tree_for_every_size_and_k);
    OPAL_TEST_ADD(s, knomial_tree_is_a_tree_for_every_size_and_k);
    OPAL_TEST_ADD(s, flat_tree_is_one_hop_deep_with_every_rank_under_the_root);
    OPAL_TEST_ADD(s, kary_depth_is_the_level_of_a_complete_k_ary_tree);
    OPAL_TEST_ADD(s, knomial_depth_is_the_count_of_nonzero_digits);
    OPAL_TEST_ADD(s, lookup_of_an_unknown_shape_is_null);
    OPAL_TEST_ADD(s, default_shape_and_k_come_from_variables);
    OPAL_TEST_ADD(s, default_is_knomial_of_radix_4);
    OPAL_TEST_ADD(s, k_out_of_range_is_refused_except_by_flat);
    OPAL_TEST_ADD(s, opal_info_lists_the_three_shapes_and_the_default_variables);
    return opal_test_run(s);
}
