/* The standard variables of a btl component: registered under
 * btl_<comp>_*, bound to the default module, set from the environment;
 * mca_btl_base_param_verify keeps what was set within what the component
 * can do, saying which variable and where it was set. Also the helpers the
 * network btls share: the add_procs loop by rank, and a peer's reason. */
#include "opal/opal_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opal/class/opal_bitmap.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/btl/base/base.h"
#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "test/btl/btl_unit_support.h"
#include "test/support/opal_test.h"

static const mca_btl_base_component_t parm_component = {
    .btl_version =
        {
            MCA_BTL_BASE_VERSION,
            MCA_BASE_COMPONENT_NAME("parm", 1, 0, 0),
        },
};

static mca_btl_base_module_t module;

static void set_defaults(void)
{
    memset(&module, 0, sizeof(module));
    module.btl_component = &parm_component;
    module.btl_eager_limit = 4096;
    module.btl_max_send_size = 65536;
    module.btl_rdma_pipeline_send_length = 8192;
    module.btl_rdma_pipeline_frag_size = 1 << 20;
    module.btl_min_rdma_pipeline_size = 16384;
    module.btl_put_limit = 1 << 22;
    module.btl_get_limit = 1 << 22;
    module.btl_exclusivity = MCA_BTL_EXCLUSIVITY_DEFAULT;
    module.btl_latency = 10;
    module.btl_bandwidth = 1000;
    module.btl_flags = MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_SENDI | MCA_BTL_FLAGS_RDMA;
}

static void setup(void)
{
    btl_unit_clean_env();
    ck_assert_int_eq(opal_init_util(NULL, NULL), OPAL_SUCCESS);
    set_defaults();
}

static void teardown(void)
{
    ck_assert_int_eq(opal_finalize_util(), OPAL_SUCCESS);
}

/* Starts the variable system (reading the environment set before) and
 * registers the standard variables. */
static void do_register(void)
{
    ck_assert_int_eq(mca_base_var_init(), OPAL_SUCCESS);
    ck_assert_int_eq(mca_btl_base_param_register(&parm_component.btl_version, &module),
                     OPAL_SUCCESS);
}

static void done(void)
{
    (void) mca_base_var_deregister_component("opal", "btl", "parm");
    ck_assert_int_eq(mca_base_var_finalize(), OPAL_SUCCESS);
}

START_TEST(every_standard_variable_is_registered_with_the_component_name)
{
    do_register();
    static const char *const names[] = {
        "btl_parm_eager_limit",
        "btl_parm_max_send_size",
        "btl_parm_rdma_pipeline_send_length",
        "btl_parm_rdma_pipeline_frag_size",
        "btl_parm_min_rdma_pipeline_size",
        "btl_parm_put_limit",
        "btl_parm_get_limit",
        "btl_parm_exclusivity",
        "btl_parm_latency",
        "btl_parm_bandwidth",
        "btl_parm_flags",
        NULL,
    };
    for (int i = 0; NULL != names[i]; ++i) {
        ck_assert_msg(mca_base_var_find_by_name(names[i]) >= 0, "%s is not registered", names[i]);
    }
    done();
}
END_TEST

START_TEST(defaults_stay_when_nothing_is_set)
{
    do_register();
    ck_assert_uint_eq(module.btl_eager_limit, 4096);
    ck_assert_uint_eq(module.btl_max_send_size, 65536);
    ck_assert_uint_eq(module.btl_rdma_pipeline_send_length, 8192);
    ck_assert_uint_eq(module.btl_rdma_pipeline_frag_size, 1 << 20);
    ck_assert_uint_eq(module.btl_min_rdma_pipeline_size, 16384);
    ck_assert_uint_eq(module.btl_put_limit, 1 << 22);
    ck_assert_uint_eq(module.btl_get_limit, 1 << 22);
    ck_assert_uint_eq(module.btl_exclusivity, MCA_BTL_EXCLUSIVITY_DEFAULT);
    ck_assert_uint_eq(module.btl_latency, 10);
    ck_assert_uint_eq(module.btl_bandwidth, 1000);
    ck_assert_uint_eq(module.btl_flags,
                      MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_SENDI | MCA_BTL_FLAGS_RDMA);
    char *text = NULL;
    ck_assert_int_eq(mca_base_var_value_string(mca_base_var_find_by_name("btl_parm_flags"), &text),
                     OPAL_SUCCESS);
    ck_assert_str_eq(text, "send,put,get,sendi");
    free(text);
    done();
}
END_TEST

START_TEST(the_environment_overrides_each_default)
{
    setenv("OPAL_MCA_btl_parm_eager_limit", "1000", 1);
    setenv("OPAL_MCA_btl_parm_max_send_size", "2000", 1);
    setenv("OPAL_MCA_btl_parm_rdma_pipeline_send_length", "3000", 1);
    setenv("OPAL_MCA_btl_parm_rdma_pipeline_frag_size", "4000", 1);
    setenv("OPAL_MCA_btl_parm_min_rdma_pipeline_size", "5000", 1);
    setenv("OPAL_MCA_btl_parm_put_limit", "6000", 1);
    setenv("OPAL_MCA_btl_parm_get_limit", "7000", 1);
    setenv("OPAL_MCA_btl_parm_exclusivity", "7", 1);
    setenv("OPAL_MCA_btl_parm_latency", "8", 1);
    setenv("OPAL_MCA_btl_parm_bandwidth", "9", 1);
    setenv("OPAL_MCA_btl_parm_flags", "send,get", 1);
    do_register();
    ck_assert_uint_eq(module.btl_eager_limit, 1000);
    ck_assert_uint_eq(module.btl_max_send_size, 2000);
    ck_assert_uint_eq(module.btl_rdma_pipeline_send_length, 3000);
    ck_assert_uint_eq(module.btl_rdma_pipeline_frag_size, 4000);
    ck_assert_uint_eq(module.btl_min_rdma_pipeline_size, 5000);
    ck_assert_uint_eq(module.btl_put_limit, 6000);
    ck_assert_uint_eq(module.btl_get_limit, 7000);
    ck_assert_uint_eq(module.btl_exclusivity, 7);
    ck_assert_uint_eq(module.btl_latency, 8);
    ck_assert_uint_eq(module.btl_bandwidth, 9);
    ck_assert_uint_eq(module.btl_flags, MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_GET);
    done();
}
END_TEST

START_TEST(flags_accept_every_name)
{
    setenv("OPAL_MCA_btl_parm_flags", "send,put,get,inplace,atomics,sendi", 1);
    do_register();
    ck_assert_uint_eq(module.btl_flags, MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_PUT | MCA_BTL_FLAGS_GET |
                                            MCA_BTL_FLAGS_SEND_INPLACE | MCA_BTL_FLAGS_ATOMIC_OPS |
                                            MCA_BTL_FLAGS_SENDI);
    done();
}
END_TEST

START_TEST(an_unknown_flag_name_is_refused_and_the_default_kept)
{
    setenv("OPAL_MCA_btl_parm_flags", "send,teleport", 1);
    btl_unit_capture_start();
    do_register();
    char *text = btl_unit_capture_end();
    ck_assert_uint_eq(module.btl_flags,
                      MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_SENDI | MCA_BTL_FLAGS_RDMA);
    ck_assert_msg(NULL != strstr(text, "btl_parm_flags") && NULL != strstr(text, "teleport"),
                  "the refusal does not name the variable and the value:\n%s", text);
    free(text);
    done();
}
END_TEST

START_TEST(verify_clears_flags_the_component_cannot_do_naming_the_source)
{
    setenv("OPAL_MCA_btl_parm_flags", "send,put,get,inplace", 1);
    do_register();
    btl_unit_capture_start();
    int rc = mca_btl_base_param_verify(&module, MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_PUT);
    char *text = btl_unit_capture_end();
    ck_assert_int_eq(rc, OPAL_SUCCESS);
    ck_assert_uint_eq(module.btl_flags, MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_PUT);
    ck_assert_msg(NULL != strstr(text, "btl_parm_flags") && NULL != strstr(text, "get,inplace") &&
                      NULL != strstr(text, "OPAL_MCA_btl_parm_flags"),
                  "the warning does not name the variable, the flags and the source:\n%s", text);
    free(text);
    done();
}
END_TEST

START_TEST(verify_lowers_an_eager_limit_above_the_max_send_size)
{
    setenv("OPAL_MCA_btl_parm_eager_limit", "100000", 1);
    do_register();
    btl_unit_capture_start();
    int rc = mca_btl_base_param_verify(&module, MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_SENDI |
                                                    MCA_BTL_FLAGS_RDMA);
    char *text = btl_unit_capture_end();
    ck_assert_int_eq(rc, OPAL_SUCCESS);
    ck_assert_uint_eq(module.btl_eager_limit, 65536);
    ck_assert_msg(NULL != strstr(text, "btl_parm_eager_limit") && NULL != strstr(text, "100000"),
                  "the warning does not name the variable and the value:\n%s", text);
    free(text);
    done();
}
END_TEST

START_TEST(verify_lowers_the_rdma_fragment_to_the_put_and_get_limits)
{
    setenv("OPAL_MCA_btl_parm_get_limit", "300000", 1);
    do_register();
    btl_unit_capture_start();
    int rc = mca_btl_base_param_verify(&module, MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_SENDI |
                                                    MCA_BTL_FLAGS_RDMA);
    char *text = btl_unit_capture_end();
    ck_assert_int_eq(rc, OPAL_SUCCESS);
    ck_assert_uint_eq(module.btl_rdma_pipeline_frag_size, 300000);
    ck_assert_ptr_nonnull(strstr(text, "btl_parm_rdma_pipeline_frag_size"));
    free(text);
    done();
}
END_TEST

START_TEST(verify_turns_zero_limits_into_no_limit_quietly)
{
    module.btl_put_limit = 0;
    module.btl_get_limit = 0;
    module.btl_rdma_pipeline_frag_size = 0;
    do_register();
    btl_unit_capture_start();
    int rc = mca_btl_base_param_verify(&module, MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_SENDI |
                                                    MCA_BTL_FLAGS_RDMA);
    char *text = btl_unit_capture_end();
    ck_assert_int_eq(rc, OPAL_SUCCESS);
    ck_assert_uint_eq(module.btl_put_limit, SIZE_MAX);
    ck_assert_uint_eq(module.btl_get_limit, SIZE_MAX);
    ck_assert_uint_eq(module.btl_rdma_pipeline_frag_size, SIZE_MAX);
    ck_assert_uint_eq(module.btl_put_alignment, 1);
    ck_assert_uint_eq(module.btl_get_alignment, 1);
    ck_assert_str_eq(text, "");
    free(text);
    done();
}
END_TEST

START_TEST(verify_refuses_a_sending_module_without_room_for_a_message)
{
    setenv("OPAL_MCA_btl_parm_max_send_size", "0", 1);
    do_register();
    btl_unit_capture_start();
    int rc = mca_btl_base_param_verify(&module, MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_SENDI |
                                                    MCA_BTL_FLAGS_RDMA);
    char *text = btl_unit_capture_end();
    ck_assert_int_eq(rc, OPAL_ERR_BAD_VALUE);
    ck_assert_ptr_nonnull(strstr(text, "btl_parm_max_send_size"));
    free(text);
    done();
}
END_TEST

START_TEST(verify_of_consistent_values_changes_nothing_and_says_nothing)
{
    do_register();
    mca_btl_base_module_t before = module;
    btl_unit_capture_start();
    int rc = mca_btl_base_param_verify(&module, MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_SENDI |
                                                    MCA_BTL_FLAGS_RDMA);
    char *text = btl_unit_capture_end();
    ck_assert_int_eq(rc, OPAL_SUCCESS);
    ck_assert_str_eq(text, "");
    ck_assert_uint_eq(module.btl_flags, before.btl_flags);
    ck_assert_uint_eq(module.btl_eager_limit, before.btl_eager_limit);
    ck_assert_uint_eq(module.btl_max_send_size, before.btl_max_send_size);
    ck_assert_uint_eq(module.btl_rdma_pipeline_frag_size, before.btl_rdma_pipeline_frag_size);
    ck_assert_uint_eq(module.btl_put_limit, before.btl_put_limit);
    free(text);
    done();
}
END_TEST

START_TEST(register_refuses_null_arguments)
{
    ck_assert_int_eq(mca_btl_base_param_register(NULL, &module), OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(mca_btl_base_param_register(&parm_component.btl_version, NULL),
                     OPAL_ERR_BAD_PARAM);
    ck_assert_int_eq(mca_btl_base_param_verify(NULL, 0), OPAL_ERR_BAD_PARAM);
}
END_TEST

/* add_procs_by_rank's step of a fake module: ranks 0 and 3 are reached
 * (their endpoint is a made-up address), others are not, with a reason. */
static int fake_module, fake_eps[4];
static uint32_t asked[8];
static size_t nasked;

static struct mca_btl_base_endpoint_t *fake_add(void *m, uint32_t rank, mca_btl_base_reason_t *why)
{
    ck_assert_ptr_eq(m, &fake_module);
    asked[nasked++] = rank;
    if (0 == rank || 3 == rank) {
        return (struct mca_btl_base_endpoint_t *) (void *) &fake_eps[rank];
    }
    mca_btl_base_reason_set(why, "no route to rank %u", rank);
    return NULL;
}

START_TEST(add_procs_by_rank_leaves_self_to_btl_self_and_keeps_each_reason)
{
    opal_proc_t p[4];
    memset(p, 0, sizeof(p));
    const uint32_t ranks[4] = {2, 0, 1, 3}; /* this process is rank 2 */
    opal_proc_t *procs[4];
    for (int i = 0; i < 4; ++i) {
        p[i].proc_name.vpid = ranks[i];
        procs[i] = &p[i];
    }
    struct mca_btl_base_endpoint_t *eps[4] = {NULL, NULL, NULL, NULL};
    mca_btl_base_reason_t reasons[4];
    memset(reasons, 0, sizeof(reasons));
    opal_bitmap_t reachable;
    OBJ_CONSTRUCT(&reachable, opal_bitmap_t);
    ck_assert_int_eq(opal_bitmap_init(&reachable, 4), OPAL_SUCCESS);
    nasked = 0;
    ck_assert_int_eq(mca_btl_base_add_procs_by_rank(&fake_module, 2, 4, procs, eps, &reachable,
                                                    reasons, fake_add),
                     OPAL_SUCCESS);
    /* Not asked about itself; asked about the others in order. */
    ck_assert_uint_eq(nasked, 3);
    ck_assert_uint_eq(asked[0], 0);
    ck_assert_uint_eq(asked[1], 1);
    ck_assert_uint_eq(asked[2], 3);
    ck_assert_str_eq(reasons[0].text, "this process (btl/self reaches it)");
    ck_assert_ptr_null(eps[0]);
    ck_assert(!opal_bitmap_is_set_bit(&reachable, 0));
    ck_assert_ptr_eq(eps[1], (void *) &fake_eps[0]);
    ck_assert(opal_bitmap_is_set_bit(&reachable, 1));
    ck_assert_str_eq(reasons[2].text, "no route to rank 1");
    ck_assert_ptr_null(eps[2]);
    ck_assert(!opal_bitmap_is_set_bit(&reachable, 2));
    ck_assert_ptr_eq(eps[3], (void *) &fake_eps[3]);
    ck_assert(opal_bitmap_is_set_bit(&reachable, 3));

    /* Without a reasons array (the caller does not want them). */
    memset(eps, 0, sizeof(eps));
    opal_bitmap_clear_all_bits(&reachable);
    nasked = 0;
    ck_assert_int_eq(
        mca_btl_base_add_procs_by_rank(&fake_module, 2, 4, procs, eps, &reachable, NULL, fake_add),
        OPAL_SUCCESS);
    ck_assert_ptr_eq(eps[3], (void *) &fake_eps[3]);
    ck_assert(opal_bitmap_is_set_bit(&reachable, 3) && !opal_bitmap_is_set_bit(&reachable, 2));
    OBJ_DESTRUCT(&reachable);
}
END_TEST

START_TEST(a_reason_is_cut_at_its_size_and_none_is_asked_for_with_null)
{
    mca_btl_base_reason_t why;
    char longer[2 * sizeof(why.text)];
    memset(longer, 'x', sizeof(longer) - 1);
    longer[sizeof(longer) - 1] = '\0';
    mca_btl_base_reason_set(&why, "%s", longer);
    ck_assert_uint_eq(strlen(why.text), sizeof(why.text) - 1);
    mca_btl_base_reason_set(NULL, "nobody reads %s", "this");
    mca_btl_base_reason_set(&why, "peer %u: %s", 7u, "gone");
    ck_assert_str_eq(why.text, "peer 7: gone");
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
    Suite *s = suite_create("btl_base_params");
    ADD(s, every_standard_variable_is_registered_with_the_component_name);
    ADD(s, defaults_stay_when_nothing_is_set);
    ADD(s, the_environment_overrides_each_default);
    ADD(s, flags_accept_every_name);
    ADD(s, an_unknown_flag_name_is_refused_and_the_default_kept);
    ADD(s, verify_clears_flags_the_component_cannot_do_naming_the_source);
    ADD(s, verify_lowers_an_eager_limit_above_the_max_send_size);
    ADD(s, verify_lowers_the_rdma_fragment_to_the_put_and_get_limits);
    ADD(s, verify_turns_zero_limits_into_no_limit_quietly);
    ADD(s, verify_refuses_a_sending_module_without_room_for_a_message);
    ADD(s, verify_of_consistent_values_changes_nothing_and_says_nothing);
    ADD(s, register_refuses_null_arguments);
    ADD(s, add_procs_by_rank_leaves_self_to_btl_self_and_keeps_each_reason);
    ADD(s, a_reason_is_cut_at_its_size_and_none_is_asked_for_with_null);
    return opal_test_run(s);
}
