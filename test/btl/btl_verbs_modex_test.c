/* btl/verbs's modex record: what one process writes another reads back;
 * a declined process's reason comes through; every malformed record is
 * refused with a reason naming what is wrong. Runs on any host (the codec
 * uses no rdma-core). */
#include "opal/opal_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/verbs/btl_verbs_modex.h"
#include "opal/util/opal_error.h"
#include "test/support/opal_test.h"

static const uint8_t ipv4_gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 99, 0, 2};

/* A record of rank owner in a job of 3: QPNs 0x100 + rank, 0 at owner. */
static void *make(uint32_t owner, size_t *size)
{
    mca_btl_verbs_modex_t m = {.link_layer = MCA_BTL_VERBS_LINK_ETHERNET,
                               .mtu = 3,
                               .lid = 0,
                               .psn = 0xabcdef,
                               .pid = 4711,
                               .count = 3};
    memcpy(m.gid, ipv4_gid, 16);
    uint32_t qpns[3] = {0x100, 0x101, 0x102};
    qpns[owner] = 0;
    void *blob = NULL;
    ck_assert_int_eq(mca_btl_verbs_modex_pack(&m, qpns, &blob, size), OPAL_SUCCESS);
    return blob;
}

START_TEST(a_record_reads_back_as_written)
{
    size_t size;
    uint8_t *blob = make(1, &size);
    mca_btl_verbs_modex_t m;
    char why[200] = "";
    ck_assert_int_eq(mca_btl_verbs_modex_unpack(blob, size, 1, 3, &m, why, sizeof(why)),
                     OPAL_SUCCESS);
    ck_assert_uint_eq(m.link_layer, MCA_BTL_VERBS_LINK_ETHERNET);
    ck_assert_uint_eq(m.mtu, 3);
    ck_assert_uint_eq(m.psn, 0xabcdef);
    ck_assert_uint_eq(m.pid, 4711);
    ck_assert_mem_eq(m.gid, ipv4_gid, 16);
    ck_assert_uint_eq(mca_btl_verbs_modex_qpn(&m, 0), 0x100);
    ck_assert_uint_eq(mca_btl_verbs_modex_qpn(&m, 1), 0);
    ck_assert_uint_eq(mca_btl_verbs_modex_qpn(&m, 2), 0x102);
    char text[64];
    mca_btl_verbs_gid_string(m.gid, text, sizeof(text));
    ck_assert_str_eq(text, "::ffff:10.99.0.2");
    free(blob);
}
END_TEST

START_TEST(a_decline_carries_its_reason)
{
    void *blob = NULL;
    size_t size = 0;
    ck_assert_int_eq(mca_btl_verbs_modex_pack_declined("no RDMA device", &blob, &size),
                     OPAL_SUCCESS);
    mca_btl_verbs_modex_t m;
    char why[200] = "";
    ck_assert_int_eq(mca_btl_verbs_modex_unpack(blob, size, 0, 2, &m, why, sizeof(why)),
                     OPAL_ERR_NOT_AVAILABLE);
    ck_assert_str_eq(why, "no RDMA device");
    free(blob);
}
END_TEST

/* Unpacks blob (size bytes) as rank owner's in a job of job_size and
 * expects a refusal whose reason contains needle. */
static void expect_refused(const void *blob, size_t size, uint32_t owner, uint32_t job_size,
                           const char *needle)
{
    mca_btl_verbs_modex_t m;
    char why[200] = "";
    ck_assert_int_eq(mca_btl_verbs_modex_unpack(blob, size, owner, job_size, &m, why, sizeof(why)),
                     OPAL_ERR_BAD_VALUE);
    ck_assert_msg(NULL != strstr(why, needle), "reason \"%s\" does not say \"%s\"", why, needle);
}

START_TEST(malformed_records_are_refused_with_a_reason)
{
    size_t size;
    uint8_t *blob = make(1, &size);
    uint8_t *copy = malloc(size + 1);
    ck_assert_ptr_nonnull(copy);

    expect_refused(blob, 5, 1, 3, "too short");
    expect_refused(blob, size - 1, 1, 3, "bytes of queue pair numbers");
    memcpy(copy, blob, size);
    copy[size] = 0;
    expect_refused(copy, size + 1, 1, 3, "bytes of queue pair numbers");
    /* A job of another size than the record's. */
    expect_refused(blob, size, 1, 4, "3 queue pair numbers for a job of 4");
    /* The record claims another owner: its own QPN is not 0. */
    expect_refused(blob, size, 0, 3, "for rank 0 is invalid");

    memcpy(copy, blob, size);
    copy[0] ^= 0xff;
    expect_refused(copy, size, 1, 3, "magic");
    memcpy(copy, blob, size);
    copy[4] = 9;
    expect_refused(copy, size, 1, 3, "version 9");
    memcpy(copy, blob, size);
    copy[6] = 5;
    expect_refused(copy, size, 1, 3, "unknown kind 5");
    memcpy(copy, blob, size);
    copy[7] = 7;
    expect_refused(copy, size, 1, 3, "unknown link layer 7");
    memcpy(copy, blob, size);
    copy[8] = 6;
    expect_refused(copy, size, 1, 3, "MTU code 6");
    memcpy(copy, blob, size);
    copy[7] = MCA_BTL_VERBS_LINK_IB; /* and LID 0 */
    expect_refused(copy, size, 1, 3, "without a LID");
    memcpy(copy, blob, size);
    memset(copy + 31, 0, 4); /* the pid */
    expect_refused(copy, size, 1, 3, "pid 0 is not a process id");
    free(copy);
    free(blob);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("btl_verbs_modex");
    OPAL_TEST_ADD(s, a_record_reads_back_as_written);
    OPAL_TEST_ADD(s, a_decline_carries_its_reason);
    OPAL_TEST_ADD(s, malformed_records_are_refused_with_a_reason);
    return opal_test_run(s);
}
