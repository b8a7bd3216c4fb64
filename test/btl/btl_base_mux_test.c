/* Selection and the per-peer multiplexer over fake components: every
 * module initialised is kept and progressed once per component; peers
 * rank their modules by exclusivity, latency, bandwidth; the rdma list
 * holds the put-and-get ones; an unreachable peer is an error naming it
 * and why each module and component did not serve; the copying sends pick
 * sendi, alloc or prepare_src; finalize releases every endpoint. */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_framework.h"
#include "opal/mca/btl/base/base.h"
#include "opal/runtime/opal_init.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/opal_error.h"
#include "test/btl/btl_base_mux_fake.h"
#include "test/btl/btl_unit_support.h"
#include "test/support/opal_test.h"

#define ALL       UINT64_C(0xffffffffffffffff)
#define SEND      (MCA_BTL_FLAGS_SEND)
#define SEND_RDMA (MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_RDMA)
#define EXCL      MCA_BTL_EXCLUSIVITY_DEFAULT

static opal_proc_t *procs[16];

static void setup(void)
{
    btl_unit_clean_env();
    ck_assert_int_eq(opal_init_util(NULL, NULL), OPAL_SUCCESS);
    fake_reset();
    for (uint32_t r = 0; r < 16; ++r) {
        procs[r] = btl_unit_proc(r, r < 8 ? "node0" : "node1");
    }
}

static void teardown(void)
{
    ck_assert_int_eq(mca_btl_base_finalize(), OPAL_SUCCESS);
    for (int i = 0; i < fake_module_count(); ++i) {
        fake_module_t *m = fake_module_at(i);
        ck_assert_msg(0 == m->live_endpoints, "module %d leaked %d endpoints", i,
                      m->live_endpoints);
    }
    for (int r = 0; r < 16; ++r) {
        OBJ_RELEASE(procs[r]);
    }
    ck_assert_int_eq(opal_finalize_util(), OPAL_SUCCESS);
}

static mca_btl_base_peer_t *peer(uint32_t rank)
{
    mca_btl_base_peer_t *p = mca_btl_base_peer_get(rank);
    ck_assert_msg(NULL != p, "rank %u has no peer", (unsigned) rank);
    return p;
}

START_TEST(init_keeps_every_module_in_component_order_and_drops_the_rest)
{
    fake_module_t *a1 = fake_module(&fake_alpha_component, EXCL, 10, 100, SEND, ALL);
    fake_module_t *b1 = fake_module(&fake_beta_component, EXCL, 10, 100, SEND, ALL);
    fake_module_t *a2 = fake_module(&fake_alpha_component, EXCL, 10, 100, SEND, ALL);
    ck_assert_int_eq(fake_init(), OPAL_SUCCESS);
    ck_assert_ptr_eq(fake_initialized(0), &a1->super);
    ck_assert_ptr_eq(fake_initialized(1), &a2->super);
    ck_assert_ptr_eq(fake_initialized(2), &b1->super);
    ck_assert_ptr_null(fake_initialized(3));

    const mca_base_component_failure_t *f, *nope = NULL;
    OPAL_LIST_FOREACH (f, &opal_btl_base_framework.framework_failures,
                       mca_base_component_failure_t) {
        if (0 == strcmp(f->cf_component, "nope")) {
            nope = f;
        }
    }
    ck_assert_ptr_nonnull(nope);
    ck_assert_int_eq(nope->cf_stage, MCA_BASE_COMPONENT_STAGE_QUERY);
    ck_assert_str_eq(nope->cf_reason, "no fake device here");
}
END_TEST

START_TEST(progress_runs_once_per_component_and_stops_at_finalize)
{
    fake_module(&fake_alpha_component, EXCL, 10, 100, SEND, ALL);
    fake_module(&fake_alpha_component, EXCL, 10, 100, SEND, ALL);
    fake_module(&fake_beta_component, EXCL, 10, 100, SEND, ALL);
    ck_assert_int_eq(fake_init(), OPAL_SUCCESS);
    opal_progress();
    opal_progress();
    ck_assert_int_eq(fake_alpha_progress_calls, 2);
    ck_assert_int_eq(fake_beta_progress_calls, 2);
    ck_assert_int_eq(mca_btl_base_finalize(), OPAL_SUCCESS);
    opal_progress();
    ck_assert_int_eq(fake_alpha_progress_calls, 2);
    for (int i = 0; i < fake_module_count(); ++i) {
        ck_assert_int_eq(fake_module_at(i)->finalized, 1);
    }
}
END_TEST

START_TEST(init_fails_when_every_component_declines_saying_why)
{
    btl_unit_capture_start();
    int rc = fake_init();
    char *text = btl_unit_capture_end();
    ck_assert_int_eq(rc, OPAL_ERR_NOT_FOUND);
    ck_assert_msg(NULL != strstr(text, "nope: no fake device here") &&
                      NULL != strstr(text, "alpha: the test configured no module"),
                  "the reasons are missing:\n%s", text);
    ck_assert_int_eq(mca_btl_base_add_procs(procs, 2), OPAL_ERR_NOT_INITIALIZED);
    free(text);
}
END_TEST

START_TEST(peers_rank_by_exclusivity_then_latency_then_bandwidth)
{
    fake_module_t *slow = fake_module(&fake_alpha_component, EXCL, 10, 100, SEND, ALL);
    fake_module_t *fast_narrow = fake_module(&fake_alpha_component, EXCL, 5, 100, SEND, ALL);
    fake_module_t *exclusive = fake_module(&fake_beta_component, 65536, 50, 1, SEND, 1u << 2);
    fake_module_t *fast_wide = fake_module(&fake_beta_component, EXCL, 5, 500, SEND, ALL);
    ck_assert_int_eq(fake_init(), OPAL_SUCCESS);
    ck_assert_int_eq(mca_btl_base_add_procs(procs, 4), OPAL_SUCCESS);

    mca_btl_base_peer_t *p0 = peer(0);
    ck_assert_int_eq(p0->send_count, 3);
    ck_assert_ptr_eq(p0->send[0].btl, &fast_wide->super);
    ck_assert_ptr_eq(p0->send[1].btl, &fast_narrow->super);
    ck_assert_ptr_eq(p0->send[2].btl, &slow->super);
    ck_assert_ptr_eq(p0->proc, procs[0]);
    ck_assert_uint_eq(p0->rank, 0);

    mca_btl_base_peer_t *p2 = peer(2);
    ck_assert_int_eq(p2->send_count, 4);
    ck_assert_ptr_eq(p2->send[0].btl, &exclusive->super);
    ck_assert_ptr_eq(p2->send[1].btl, &fast_wide->super);
    ck_assert_ptr_nonnull(p2->send[0].endpoint);
    ck_assert_ptr_null(mca_btl_base_peer_get(4));
    ck_assert_ptr_null(mca_btl_base_peer_get(1000));
}
END_TEST

START_TEST(equal_modules_keep_the_order_they_were_initialised_in)
{
    fake_module_t *first = fake_module(&fake_alpha_component, EXCL, 5, 100, SEND, ALL);
    fake_module_t *second = fake_module(&fake_beta_component, EXCL, 5, 100, SEND, ALL);
    ck_assert_int_eq(fake_init(), OPAL_SUCCESS);
    ck_assert_int_eq(mca_btl_base_add_procs(procs, 1), OPAL_SUCCESS);
    ck_assert_ptr_eq(peer(0)->send[0].btl, &first->super);
    ck_assert_ptr_eq(peer(0)->send[1].btl, &second->super);
}
END_TEST

START_TEST(rdma_lists_the_modules_that_put_and_get_in_send_order)
{
    fake_module_t *put_only =
        fake_module(&fake_alpha_component, EXCL, 1, 100, SEND | MCA_BTL_FLAGS_PUT, ALL);
    fake_module_t *rdma_slow = fake_module(&fake_alpha_component, EXCL, 20, 100, SEND_RDMA, ALL);
    fake_module_t *rdma_fast = fake_module(&fake_beta_component, EXCL, 10, 100, SEND_RDMA, 1u);
    fake_module(&fake_beta_component, EXCL, 2, 100, SEND, ALL);
    ck_assert_int_eq(fake_init(), OPAL_SUCCESS);
    ck_assert_int_eq(mca_btl_base_add_procs(procs, 2), OPAL_SUCCESS);
    ck_assert_ptr_eq(peer(0)->send[0].btl, &put_only->super);
    ck_assert_int_eq(peer(0)->rdma_count, 2);
    ck_assert_ptr_eq(peer(0)->rdma[0].btl, &rdma_fast->super);
    ck_assert_ptr_eq(peer(0)->rdma[1].btl, &rdma_slow->super);
    ck_assert_ptr_eq(peer(0)->rdma[0].endpoint, peer(0)->send[2].endpoint);
    ck_assert_int_eq(peer(1)->rdma_count, 1);
    ck_assert_ptr_eq(peer(1)->rdma[0].btl, &rdma_slow->super);
}
END_TEST

static void fake_dump(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      char *buf, size_t size)
{
    (void) endpoint;
    snprintf(buf, size, "latency %u, 3 queued", (unsigned) btl->btl_latency);
}

START_TEST(describe_gives_each_modules_state_once_send_modules_first)
{
    fake_module_t *both = fake_module(&fake_alpha_component, EXCL, 1, 100, SEND_RDMA, ALL);
    fake_module(&fake_beta_component, EXCL, 2, 100, SEND, ALL);
    both->super.btl_dump = fake_dump;
    ck_assert_int_eq(fake_init(), OPAL_SUCCESS);
    ck_assert_int_eq(mca_btl_base_add_procs(procs, 1), OPAL_SUCCESS);
    ck_assert_int_eq(peer(0)->rdma_count, 1);
    char line[256];
    mca_btl_base_mux_describe(peer(0), line, sizeof(line));
    ck_assert_str_eq(line, "alpha: latency 1, 3 queued; beta: (no state to show)");
    /* Cut to the buffer, terminated. */
    memset(line, 'x', sizeof(line));
    mca_btl_base_mux_describe(peer(0), line, 12);
    ck_assert_str_eq(line, "alpha: late");
}
END_TEST

START_TEST(a_peer_without_rdma_modules_has_an_empty_rdma_list)
{
    fake_module(&fake_alpha_component, EXCL, 1, 100, SEND, ALL);
    ck_assert_int_eq(fake_init(), OPAL_SUCCESS);
    ck_assert_int_eq(mca_btl_base_add_procs(procs, 1), OPAL_SUCCESS);
    ck_assert_int_eq(peer(0)->rdma_count, 0);
}
END_TEST

START_TEST(a_module_that_cannot_send_forgets_the_peers_it_reached)
{
    fake_module_t *mute = fake_module(&fake_alpha_component, EXCL, 1, 100, MCA_BTL_FLAGS_RDMA, ALL);
    fake_module_t *talker = fake_module(&fake_beta_component, EXCL, 5, 100, SEND, ALL);
    ck_assert_int_eq(fake_init(), OPAL_SUCCESS);
    ck_assert_int_eq(mca_btl_base_add_procs(procs, 3), OPAL_SUCCESS);
    ck_assert_int_eq(mute->live_endpoints, 0);
    ck_assert_int_eq(mute->del_procs_seen, 3);
    ck_assert_int_eq(peer(1)->send_count, 1);
    ck_assert_ptr_eq(peer(1)->send[0].btl, &talker->super);
}
END_TEST

START_TEST(more_modules_than_a_peer_holds_drop_the_worst)
{
    fake_module_t *m[MCA_BTL_BASE_MUX_MAX + 2];
    for (int i = 0; i < MCA_BTL_BASE_MUX_MAX + 2; ++i) {
        /* Latency falls: each new module beats the ones before. */
        m[i] = fake_module(0 == i % 2 ? &fake_alpha_component : &fake_beta_component, EXCL,
                           (uint32_t) (100 - i), 100, SEND, ALL);
    }
    ck_assert_int_eq(fake_init(), OPAL_SUCCESS);
    ck_assert_int_eq(mca_btl_base_add_procs(procs, 1), OPAL_SUCCESS);
    ck_assert_int_eq(peer(0)->send_count, MCA_BTL_BASE_MUX_MAX);
    ck_assert_ptr_eq(peer(0)->send[0].btl, &m[MCA_BTL_BASE_MUX_MAX + 1]->super);
    ck_assert_int_eq(m[0]->live_endpoints, 0);
    ck_assert_int_eq(m[1]->live_endpoints, 0);
    ck_assert_int_eq(m[2]->live_endpoints, 1);
}
END_TEST

START_TEST(an_unreachable_peer_is_an_error_naming_it_and_every_reason)
{
    fake_module_t *a = fake_module(&fake_alpha_component, 65536, 1, 100, SEND, 1u << 0);
    a->why = "not this process";
    fake_module_t *b1 = fake_module(&fake_beta_component, EXCL, 5, 100, SEND, 0xffu);
    fake_module_t *b2 = fake_module(&fake_beta_component, EXCL, 5, 100, SEND, 0);
    b2->why = "";
    /* A component excluded by the selection, as the MCA base records it,
     * and one whose plugin failed to load. */
    mca_base_component_failure_t *excluded = OBJ_NEW(mca_base_component_failure_t);
    excluded->cf_framework = strdup("btl");
    excluded->cf_component = strdup("ofi");
    excluded->cf_stage = MCA_BASE_COMPONENT_STAGE_EXCLUDED;
    excluded->cf_reason = strdup("not included by btl=alpha,beta");
    mca_base_component_failure_t *load = OBJ_NEW(mca_base_component_failure_t);
    load->cf_framework = strdup("btl");
    load->cf_component = strdup("verbs");
    load->cf_stage = MCA_BASE_COMPONENT_STAGE_LOAD;
    load->cf_reason = strdup("libibverbs.so.1: cannot open shared object file");
    ck_assert_int_eq(fake_init(), OPAL_SUCCESS);
    opal_list_append(&opal_btl_base_framework.framework_failures, &excluded->super);
    opal_list_append(&opal_btl_base_framework.framework_failures, &load->super);

    btl_unit_capture_start();
    int rc = mca_btl_base_add_procs(procs, 10);
    char *text = btl_unit_capture_end();
    ck_assert_int_eq(rc, OPAL_ERR_UNREACH);
    static const char *const expected[] = {
        "cannot reach 2 peer(s)",
        "rank 8 (on node1):\n"
        "    alpha: not this process\n"
        "    beta (module 1): peer is on another node\n"
        "    beta (module 2): no reason given\n",
        "rank 9 (on node1):",
        "  nope: no fake device here\n",
        "  ofi: not included by btl=alpha,beta\n",
        "  verbs: load: libibverbs.so.1: cannot open shared object file\n",
    };
    for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); ++i) {
        ck_assert_msg(NULL != strstr(text, expected[i]), "missing \"%s\" in:\n%s", expected[i],
                      text);
    }
    ck_assert_ptr_null(strstr(text, "rank 7 (on"));
    /* The peers reached stay; the others are not in the table. */
    ck_assert_ptr_eq(peer(0)->send[0].btl, &a->super);
    ck_assert_ptr_eq(peer(7)->send[0].btl, &b1->super);
    ck_assert_ptr_null(mca_btl_base_peer_get(8));
    ck_assert_ptr_null(mca_btl_base_peer_get(9));
    free(text);
}
END_TEST

START_TEST(many_unreachable_peers_are_counted_after_the_first_few)
{
    fake_module(&fake_alpha_component, EXCL, 1, 100, SEND, 0);
    ck_assert_int_eq(fake_init(), OPAL_SUCCESS);
    btl_unit_capture_start();
    int rc = mca_btl_base_add_procs(procs, 16);
    char *text = btl_unit_capture_end();
    ck_assert_int_eq(rc, OPAL_ERR_UNREACH);
    ck_assert_ptr_nonnull(strstr(text, "cannot reach 16 peer(s)"));
    ck_assert_ptr_nonnull(strstr(text, "rank 7 (on node0)"));
    ck_assert_ptr_null(strstr(text, "rank 8 (on"));
    ck_assert_ptr_nonnull(strstr(text, "... and 8 more peer(s)"));
    free(text);
}
END_TEST

START_TEST(a_failing_add_procs_is_returned_and_the_other_modules_still_serve)
{
    fake_module_t *broken = fake_module(&fake_alpha_component, 65536, 1, 100, SEND, ALL);
    broken->add_rc = OPAL_ERR_OUT_OF_RESOURCE;
    fake_module_t *good = fake_module(&fake_beta_component, EXCL, 5, 100, SEND, 0x23u);
    ck_assert_int_eq(fake_init(), OPAL_SUCCESS);
    btl_unit_capture_start();
    int rc = mca_btl_base_add_procs(procs, 3);
    char *text = btl_unit_capture_end();
    ck_assert_int_eq(rc, OPAL_ERR_UNREACH);
    ck_assert_ptr_eq(peer(1)->send[0].btl, &good->super);
    ck_assert_int_eq(peer(1)->send_count, 1);
    /* The endpoints it set up before failing were released at once. */
    ck_assert_int_eq(broken->live_endpoints, 0);
    ck_assert_msg(NULL != strstr(text, "alpha: add_procs failed: Out of resource"),
                  "the failure is not given as the reason:\n%s", text);
    free(text);

    /* With every new peer reached, the module's error is what comes back. */
    ck_assert_int_eq(mca_btl_base_add_procs(procs + 5, 1), OPAL_ERR_OUT_OF_RESOURCE);
    ck_assert_ptr_eq(peer(5)->send[0].btl, &good->super);
}
END_TEST

START_TEST(adding_a_peer_again_keeps_its_first_ranking)
{
    fake_module_t *a = fake_module(&fake_alpha_component, EXCL, 5, 100, SEND, ALL);
    ck_assert_int_eq(fake_init(), OPAL_SUCCESS);
    ck_assert_int_eq(mca_btl_base_add_procs(procs, 2), OPAL_SUCCESS);
    mca_btl_base_peer_t *p1 = peer(1);
    opal_proc_t *again[] = {procs[1], procs[1], procs[2]};
    ck_assert_int_eq(mca_btl_base_add_procs(again, 3), OPAL_SUCCESS);
    ck_assert_ptr_eq(peer(1), p1);
    ck_assert_int_eq(a->live_endpoints, 3);
    ck_assert_int_eq(a->add_calls, 2);
}
END_TEST

START_TEST(del_procs_releases_each_modules_endpoints_at_once)
{
    fake_module_t *a = fake_module(&fake_alpha_component, EXCL, 5, 100, SEND, ALL);
    fake_module_t *b = fake_module(&fake_beta_component, EXCL, 6, 100, SEND, ALL);
    ck_assert_int_eq(fake_init(), OPAL_SUCCESS);
    ck_assert_int_eq(mca_btl_base_add_procs(procs, 6), OPAL_SUCCESS);
    opal_proc_t *gone[] = {procs[1], procs[3], procs[3], procs[12]};
    ck_assert_int_eq(mca_btl_base_del_procs(gone, 4), OPAL_SUCCESS);
    ck_assert_int_eq(a->del_calls, 1);
    ck_assert_int_eq(a->del_procs_seen, 2);
    ck_assert_int_eq(b->live_endpoints, 4);
    ck_assert_ptr_null(mca_btl_base_peer_get(1));
    ck_assert_ptr_null(mca_btl_base_peer_get(3));
    ck_assert_ptr_nonnull(mca_btl_base_peer_get(2));
    /* Added again, it is ranked afresh. */
    ck_assert_int_eq(mca_btl_base_add_procs(procs + 1, 1), OPAL_SUCCESS);
    ck_assert_ptr_eq(peer(1)->send[0].btl, &a->super);
}
END_TEST

START_TEST(finalize_releases_every_peer_and_module)
{
    fake_module_t *a = fake_module(&fake_alpha_component, EXCL, 5, 100, SEND, ALL);
    ck_assert_int_eq(fake_init(), OPAL_SUCCESS);
    ck_assert_int_eq(mca_btl_base_add_procs(procs, 16), OPAL_SUCCESS);
    ck_assert_int_eq(mca_btl_base_finalize(), OPAL_SUCCESS);
    ck_assert_int_eq(a->live_endpoints, 0);
    ck_assert_int_eq(a->finalized, 1);
    ck_assert_ptr_null(mca_btl_base_peer_get(0));
    ck_assert(!mca_base_framework_is_open(&opal_btl_base_framework));
    /* A second finalize is harmless. */
    ck_assert_int_eq(mca_btl_base_finalize(), OPAL_SUCCESS);
}
END_TEST

START_TEST(error_callbacks_reach_every_module)
{
    fake_module_t *a = fake_module(&fake_alpha_component, EXCL, 5, 100, SEND, ALL);
    fake_module_t *b = fake_module(&fake_beta_component, EXCL, 5, 100, SEND, ALL);
    ck_assert_int_eq(mca_btl_base_register_error_cb(NULL), OPAL_ERR_NOT_INITIALIZED);
    ck_assert_int_eq(fake_init(), OPAL_SUCCESS);
    mca_btl_base_module_error_cb_fn_t cb = (mca_btl_base_module_error_cb_fn_t) (uintptr_t) 0x1;
    ck_assert_int_eq(mca_btl_base_register_error_cb(cb), OPAL_SUCCESS);
    ck_assert_ptr_eq((void *) (uintptr_t) a->error_cb, (void *) (uintptr_t) cb);
    ck_assert_ptr_eq((void *) (uintptr_t) b->error_cb, (void *) (uintptr_t) cb);
    ck_assert_int_eq(mca_btl_base_register_error_cb(NULL), OPAL_SUCCESS);
    ck_assert_ptr_null((void *) (uintptr_t) a->error_cb);
}
END_TEST

static fake_module_t *one_sender(uint32_t flags)
{
    fake_module_t *m = fake_module(&fake_alpha_component, EXCL, 5, 100, flags, ALL);
    ck_assert_int_eq(fake_init(), OPAL_SUCCESS);
    ck_assert_int_eq(mca_btl_base_add_procs(procs, 2), OPAL_SUCCESS);
    return m;
}

START_TEST(send_copy_uses_sendi_for_eager_messages)
{
    fake_module_t *m = one_sender(SEND | MCA_BTL_FLAGS_SENDI);
    ck_assert_int_eq(mca_btl_base_mux_send_copy(peer(1), 0x81, "hello", 5), OPAL_SUCCESS);
    ck_assert_int_eq(m->via, 1);
    ck_assert_uint_eq(m->last_tag, 0x81);
    ck_assert_uint_eq(m->last_len, 5);
    ck_assert_mem_eq(m->last, "hello", 5);
}
END_TEST

START_TEST(send_copy_falls_back_to_a_descriptor_when_sendi_is_busy)
{
    fake_module_t *m = one_sender(SEND | MCA_BTL_FLAGS_SENDI);
    m->sendi_busy = 1;
    ck_assert_int_eq(mca_btl_base_mux_send_copy(peer(1), 0x82, "hi", 2), OPAL_SUCCESS);
    ck_assert_int_eq(m->via, 2);
    ck_assert_mem_eq(m->last, "hi", 2);
    m->sendi_busy = 1;
    m->alloc_empty = true;
    ck_assert_int_eq(mca_btl_base_mux_send_copy(peer(1), 0x82, "hi", 2), OPAL_ERR_RESOURCE_BUSY);
}
END_TEST

START_TEST(send_hdr_puts_the_header_before_the_data_on_every_path)
{
    fake_module_t *m = one_sender(SEND | MCA_BTL_FLAGS_SENDI);
    ck_assert_int_eq(mca_btl_base_mux_send_hdr(peer(0), 0x83, "HDR", 3, "data", 4), OPAL_SUCCESS);
    ck_assert_int_eq(m->via, 1);
    ck_assert_mem_eq(m->last, "HDRdata", 7);
    m->sendi_busy = 1;
    ck_assert_int_eq(mca_btl_base_mux_send_hdr(peer(0), 0x83, "HDR", 3, "data", 4), OPAL_SUCCESS);
    ck_assert_int_eq(m->via, 2);
    ck_assert_mem_eq(m->last, "HDRdata", 7);
    /* Above the eager limit (64). */
    char big[300];
    for (size_t i = 0; i < sizeof(big); ++i) {
        big[i] = (char) i;
    }
    ck_assert_int_eq(mca_btl_base_mux_send_hdr(peer(0), 0x84, "HDR", 3, big, sizeof(big)),
                     OPAL_SUCCESS);
    ck_assert_int_eq(m->via, 3);
    ck_assert_uint_eq(m->last_len, 303);
    ck_assert_mem_eq(m->last, "HDR", 3);
    ck_assert_mem_eq(m->last + 3, big, sizeof(big));
}
END_TEST

START_TEST(send_copy_without_sendi_uses_alloc_then_prepare_src)
{
    fake_module_t *m = one_sender(SEND);
    ck_assert_int_eq(mca_btl_base_mux_send_copy(peer(1), 0x85, "x", 1), OPAL_SUCCESS);
    ck_assert_int_eq(m->via, 2);
    char big[100] = {7};
    ck_assert_int_eq(mca_btl_base_mux_send_copy(peer(1), 0x85, big, sizeof(big)), OPAL_SUCCESS);
    ck_assert_int_eq(m->via, 3);
    ck_assert_int_eq(mca_btl_base_mux_send_copy(peer(1), 0x85, NULL, 0), OPAL_SUCCESS);
    ck_assert_uint_eq(m->last_len, 0);
}
END_TEST

START_TEST(send_copy_on_an_inplace_module_returns_before_it_completes_with_a_copy)
{
    fake_module_t *m = one_sender(SEND | MCA_BTL_FLAGS_SEND_INPLACE);
    char big[200];
    memset(big, 'z', sizeof(big));
    ck_assert_int_eq(mca_btl_base_mux_send_hdr(peer(1), 0x86, "H", 1, big, sizeof(big)),
                     OPAL_SUCCESS);
    /* Not complete yet, and the caller already has its buffer back. */
    ck_assert_ptr_nonnull(m->pending);
    memset(big, 'y', sizeof(big));
    opal_progress();
    ck_assert_ptr_null(m->pending);
    ck_assert_int_eq(m->via, 3);
    ck_assert_uint_eq(m->last_len, 201);
    ck_assert_uint_eq(m->last[0], 'H');
    for (size_t i = 1; i < 201; ++i) {
        ck_assert_uint_eq(m->last[i], 'z');
    }
}
END_TEST

static int nested_rc = 1;

/* What an active-message callback does when it answers at once: a copying
 * send from inside opal_progress, which does not nest. */
static int send_from_progress(void)
{
    if (1 == nested_rc) {
        char big[100];
        memset(big, 'n', sizeof(big));
        nested_rc = mca_btl_base_mux_send_copy(peer(1), 0x87, big, sizeof(big));
    }
    return 0;
}

START_TEST(send_copy_on_an_inplace_module_works_from_inside_progress)
{
    fake_module_t *m = one_sender(SEND | MCA_BTL_FLAGS_SEND_INPLACE);
    nested_rc = 1;
    ck_assert_int_eq(opal_progress_register(send_from_progress), OPAL_SUCCESS);
    opal_progress();
    ck_assert_int_eq(nested_rc, OPAL_SUCCESS);
    opal_progress();
    ck_assert_int_eq(opal_progress_unregister(send_from_progress), OPAL_SUCCESS);
    ck_assert_ptr_null(m->pending);
    ck_assert_uint_eq(m->last_len, 100);
    ck_assert_uint_eq(m->last[99], 'n');
}
END_TEST

START_TEST(send_copy_refuses_what_the_module_cannot_carry)
{
    one_sender(SEND | MCA_BTL_FLAGS_SENDI);
    char big[513] = {0};
    ck_assert_int_eq(mca_btl_base_mux_send_copy(peer(1), 0x87, big, sizeof(big)),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(mca_btl_base_mux_send_hdr(peer(1), 0x87, big, 256, big, 257),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(mca_btl_base_mux_send_copy(NULL, 0x87, big, 1), OPAL_ERR_UNREACH);
}
END_TEST

static void add(Suite *s, const char *name, const TTest *test)
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test);
    suite_add_tcase(s, tc);
}

#define ADD(s, fn) add((s), #fn, fn)

int main(void)
{
    Suite *s = suite_create("btl_base_mux");
    ADD(s, init_keeps_every_module_in_component_order_and_drops_the_rest);
    ADD(s, progress_runs_once_per_component_and_stops_at_finalize);
    ADD(s, init_fails_when_every_component_declines_saying_why);
    ADD(s, peers_rank_by_exclusivity_then_latency_then_bandwidth);
    ADD(s, equal_modules_keep_the_order_they_were_initialised_in);
    ADD(s, rdma_lists_the_modules_that_put_and_get_in_send_order);
    ADD(s, describe_gives_each_modules_state_once_send_modules_first);
    ADD(s, a_peer_without_rdma_modules_has_an_empty_rdma_list);
    ADD(s, a_module_that_cannot_send_forgets_the_peers_it_reached);
    ADD(s, more_modules_than_a_peer_holds_drop_the_worst);
    ADD(s, an_unreachable_peer_is_an_error_naming_it_and_every_reason);
    ADD(s, many_unreachable_peers_are_counted_after_the_first_few);
    ADD(s, a_failing_add_procs_is_returned_and_the_other_modules_still_serve);
    ADD(s, adding_a_peer_again_keeps_its_first_ranking);
    ADD(s, del_procs_releases_each_modules_endpoints_at_once);
    ADD(s, finalize_releases_every_peer_and_module);
    ADD(s, error_callbacks_reach_every_module);
    ADD(s, send_copy_uses_sendi_for_eager_messages);
    ADD(s, send_copy_falls_back_to_a_descriptor_when_sendi_is_busy);
    ADD(s, send_hdr_puts_the_header_before_the_data_on_every_path);
    ADD(s, send_copy_without_sendi_uses_alloc_then_prepare_src);
    ADD(s, send_copy_on_an_inplace_module_returns_before_it_completes_with_a_copy);
    ADD(s, send_copy_on_an_inplace_module_works_from_inside_progress);
    ADD(s, send_copy_refuses_what_the_module_cannot_carry);
    return opal_test_run(s);
}
