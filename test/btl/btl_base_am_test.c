/* The active-message table: one callback per tag, registered and removed;
 * dispatch reaches the right callback with its data; messages for a tag
 * nobody listens to are counted and the first one per tag is reported. */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/base/base.h"
#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "test/btl/btl_unit_support.h"
#include "test/support/opal_test.h"

static int calls[256];
static void *last_cbdata;
static const mca_btl_base_receive_descriptor_t *last_desc;

static void record(struct mca_btl_base_module_t *btl, const mca_btl_base_receive_descriptor_t *desc)
{
    (void) btl;
    ++calls[desc->tag];
    last_cbdata = desc->cbdata;
    last_desc = desc;
}

static void other(struct mca_btl_base_module_t *btl, const mca_btl_base_receive_descriptor_t *desc)
{
    (void) btl;
    calls[desc->tag] += 100;
}

static void setup(void)
{
    memset(calls, 0, sizeof(calls));
    last_cbdata = NULL;
    last_desc = NULL;
    ck_assert_int_eq(opal_init_util(NULL, NULL), OPAL_SUCCESS);
}

static void teardown(void)
{
    for (int tag = 0; tag < 256; ++tag) {
        (void) mca_btl_base_am_deregister((mca_btl_base_tag_t) tag);
    }
    ck_assert_int_eq(opal_finalize_util(), OPAL_SUCCESS);
}

static mca_btl_base_receive_descriptor_t message(mca_btl_base_tag_t tag, const opal_proc_t *from,
                                                 mca_btl_base_segment_t *seg)
{
    mca_btl_base_receive_descriptor_t desc = {
        .endpoint = NULL,
        .proc = from,
        .des_segments = seg,
        .des_segment_count = 1,
        .tag = tag,
        .cbdata = NULL,
    };
    return desc;
}

START_TEST(every_tag_from_0_to_255_can_be_registered_and_dispatched)
{
    char seg_data[4] = "abc";
    mca_btl_base_segment_t seg = {.seg_addr = seg_data, .seg_len = 4};
    for (int tag = 0; tag < 256; ++tag) {
        ck_assert_int_eq(mca_btl_base_am_register((mca_btl_base_tag_t) tag, record, &calls[tag]),
                         OPAL_SUCCESS);
    }
    for (int tag = 0; tag < 256; ++tag) {
        mca_btl_base_receive_descriptor_t desc = message((mca_btl_base_tag_t) tag, NULL, &seg);
        mca_btl_base_am_dispatch(NULL, &desc);
        ck_assert_int_eq(calls[tag], 1);
        ck_assert_ptr_eq(last_cbdata, &calls[tag]);
        ck_assert_ptr_eq(desc.cbdata, &calls[tag]);
        ck_assert_ptr_eq(last_desc, &desc);
    }
}
END_TEST

START_TEST(a_tag_taken_is_refused_and_keeps_its_callback)
{
    ck_assert_int_eq(mca_btl_base_am_register(MCA_BTL_TAG_USER_MIN, record, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(mca_btl_base_am_register(MCA_BTL_TAG_USER_MIN, other, NULL), OPAL_ERR_EXISTS);
    ck_assert_int_eq(mca_btl_base_am_register(MCA_BTL_TAG_USER_MIN, record, NULL), OPAL_ERR_EXISTS);
    ck_assert_ptr_eq((void *) mca_btl_base_am_table[MCA_BTL_TAG_USER_MIN].cbfunc, (void *) record);
    mca_btl_base_segment_t seg = {.seg_addr = NULL, .seg_len = 0};
    mca_btl_base_receive_descriptor_t desc = message(MCA_BTL_TAG_USER_MIN, NULL, &seg);
    mca_btl_base_am_dispatch(NULL, &desc);
    ck_assert_int_eq(calls[MCA_BTL_TAG_USER_MIN], 1);
}
END_TEST

START_TEST(a_null_callback_is_refused)
{
    ck_assert_int_eq(mca_btl_base_am_register(MCA_BTL_TAG_RPC_MIN, NULL, NULL), OPAL_ERR_BAD_PARAM);
    ck_assert_ptr_null((void *) mca_btl_base_am_table[MCA_BTL_TAG_RPC_MIN].cbfunc);
}
END_TEST

START_TEST(deregister_frees_the_tag_for_another_callback)
{
    ck_assert_int_eq(mca_btl_base_am_register(MCA_BTL_TAG_NA_MIN, record, NULL), OPAL_SUCCESS);
    ck_assert_int_eq(mca_btl_base_am_deregister(MCA_BTL_TAG_NA_MIN), OPAL_SUCCESS);
    ck_assert_int_eq(mca_btl_base_am_deregister(MCA_BTL_TAG_NA_MIN), OPAL_ERR_NOT_FOUND);
    ck_assert_int_eq(mca_btl_base_am_register(MCA_BTL_TAG_NA_MIN, other, NULL), OPAL_SUCCESS);
    mca_btl_base_segment_t seg = {.seg_addr = NULL, .seg_len = 0};
    mca_btl_base_receive_descriptor_t desc = message(MCA_BTL_TAG_NA_MIN, NULL, &seg);
    mca_btl_base_am_dispatch(NULL, &desc);
    ck_assert_int_eq(calls[MCA_BTL_TAG_NA_MIN], 100);
}
END_TEST

START_TEST(deregister_of_a_free_tag_is_not_found)
{
    ck_assert_int_eq(mca_btl_base_am_deregister(MCA_BTL_TAG_USER_MAX), OPAL_ERR_NOT_FOUND);
}
END_TEST

START_TEST(unclaimed_messages_are_counted_and_the_first_per_tag_reported)
{
    opal_proc_t *sender = btl_unit_proc(3, "nodeX");
    char bytes[17] = {0};
    mca_btl_base_segment_t seg = {.seg_addr = bytes, .seg_len = sizeof(bytes)};
    uint64_t before_a = mca_btl_base_am_unclaimed_count(0x91);
    uint64_t before_b = mca_btl_base_am_unclaimed_count(0x92);
    /* A registered neighbour tag is not involved. */
    ck_assert_int_eq(mca_btl_base_am_register(0x90, record, NULL), OPAL_SUCCESS);

    btl_unit_capture_start();
    for (int i = 0; i < 5; ++i) {
        mca_btl_base_receive_descriptor_t desc = message(0x91, sender, &seg);
        mca_btl_base_am_dispatch(NULL, &desc);
    }
    mca_btl_base_receive_descriptor_t desc = message(0x92, NULL, &seg);
    mca_btl_base_am_dispatch(NULL, &desc);
    char *text = btl_unit_capture_end();

    ck_assert_uint_eq(mca_btl_base_am_unclaimed_count(0x91) - before_a, 5);
    ck_assert_uint_eq(mca_btl_base_am_unclaimed_count(0x92) - before_b, 1);
    ck_assert_uint_eq(mca_btl_base_am_unclaimed_count(0x90), 0);
    ck_assert_int_eq(calls[0x90], 0);
    if (0 == before_a) {
        /* Tag 0x91 = 145, rank 3 on nodeX, 17 bytes, once. */
        ck_assert_msg(NULL != strstr(text, "tag 145 (17 bytes) from rank 3 on nodeX"),
                      "report does not name tag and sender:\n%s", text);
        const char *first = strstr(text, "tag 145");
        ck_assert_ptr_null(strstr(first + 1, "tag 145"));
    }
    if (0 == before_b) {
        ck_assert_msg(NULL != strstr(text, "tag 146 (17 bytes) from an unknown sender"),
                      "report of a message without sender:\n%s", text);
    }
    free(text);
    OBJ_RELEASE(sender);
}
END_TEST

START_TEST(tag_ranges_do_not_overlap_and_cover_every_tag)
{
    ck_assert_int_eq(MCA_BTL_TAG_BTL_MIN, 0);
    ck_assert_int_eq(MCA_BTL_TAG_NA_MIN, MCA_BTL_TAG_BTL_MAX + 1);
    ck_assert_int_eq(MCA_BTL_TAG_RPC_MIN, MCA_BTL_TAG_NA_MAX + 1);
    ck_assert_int_eq(MCA_BTL_TAG_USER_MIN, MCA_BTL_TAG_RPC_MAX + 1);
    ck_assert_int_eq(MCA_BTL_TAG_USER_MAX, 255);
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
    btl_unit_clean_env();
    Suite *s = suite_create("btl_base_am");
    ADD(s, every_tag_from_0_to_255_can_be_registered_and_dispatched);
    ADD(s, a_tag_taken_is_refused_and_keeps_its_callback);
    ADD(s, a_null_callback_is_refused);
    ADD(s, deregister_frees_the_tag_for_another_callback);
    ADD(s, deregister_of_a_free_tag_is_not_found);
    ADD(s, unclaimed_messages_are_counted_and_the_first_per_tag_reported);
    ADD(s, tag_ranges_do_not_overlap_and_cover_every_tag);
    return opal_test_run(s);
}
