/*
 * The tags case: every rank sends every rank (itself too) one message on
 * a tag nobody registered, then one message per tag of
 * BTL_TEST_TAG_EACH_MIN..MAX, each tag with its own callback data. Each
 * message must reach its tag's callback exactly once; the unregistered
 * one must be counted as unclaimed (the base reports it on stderr).
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/opal_error.h"
#include "test/btl/btl_test_rank.h"

#define NTAGS (BTL_TEST_TAG_EACH_MAX - BTL_TEST_TAG_EACH_MIN + 1)

typedef struct {
    unsigned tag;
    /* Messages per sender. */
    int *count;
} tag_state_t;

static tag_state_t tags[NTAGS];

typedef struct {
    uint8_t tag;
    uint8_t pad[3];
    uint32_t src;
} tag_head_t;

static size_t tag_size(unsigned tag)
{
    return tag % 37;
}

static void tag_cb(struct mca_btl_base_module_t *btl, const mca_btl_base_receive_descriptor_t *desc)
{
    tag_state_t *state = desc->cbdata;
    tag_head_t head;
    size_t len = btl_test_length(desc);
    if (state < tags || state >= tags + NTAGS || state->tag != desc->tag) {
        btl_test_fail("tag %u: callback data of another tag", (unsigned) desc->tag);
        return;
    }
    if (len < sizeof(head) || NULL == desc->proc) {
        btl_test_fail("tag %u: a message of %zu bytes", (unsigned) desc->tag, len);
        return;
    }
    btl_test_copy_out(desc, 0, &head, sizeof(head));
    uint32_t src = desc->proc->proc_name.vpid;
    size_t size = tag_size(desc->tag);
    size_t where = 0;
    if (head.tag != desc->tag || head.src != src || len != sizeof(head) + size ||
        !btl_test_check(desc, sizeof(head), src, desc->tag, size, &where)) {
        btl_test_fail("tag %u from rank %" PRIu32 ": message for tag %u from rank %" PRIu32
                      " (%zu bytes) arrived",
                      (unsigned) desc->tag, src, (unsigned) head.tag, head.src, len);
        return;
    }
    ++state->count[src];
}

int btl_test_tags_register(void)
{
    for (unsigned i = 0; i < NTAGS; ++i) {
        tags[i].tag = BTL_TEST_TAG_EACH_MIN + i;
        tags[i].count = calloc(btl_test.size > 0 ? btl_test.size : 1, sizeof(int));
        if (NULL == tags[i].count) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        int rc = mca_btl_base_am_register((mca_btl_base_tag_t) tags[i].tag, tag_cb, &tags[i]);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    return OPAL_SUCCESS;
}

void btl_test_tags_release(void)
{
    for (unsigned i = 0; i < NTAGS; ++i) {
        free(tags[i].count);
        tags[i].count = NULL;
    }
}

static bool all_arrived(void *arg)
{
    (void) arg;
    for (unsigned i = 0; i < NTAGS; ++i) {
        for (uint32_t r = 0; r < btl_test.size; ++r) {
            if (tags[i].count[r] < 1) {
                return false;
            }
        }
    }
    return true;
}

bool btl_test_case_tags(int argc, char **argv)
{
    uint64_t unclaimed_before = mca_btl_base_am_unclaimed_count(BTL_TEST_TAG_UNCLAIMED);
    for (unsigned i = 0; i < NTAGS; ++i) {
        memset(tags[i].count, 0, btl_test.size * sizeof(int));
    }
    unsigned char payload[64];
    for (uint32_t r = 0; r < btl_test.size; ++r) {
        if (!btl_test_send(r, BTL_TEST_TAG_UNCLAIMED, "nobody", 6, NULL, 0)) {
            return false;
        }
        for (unsigned i = 0; i < NTAGS; ++i) {
            tag_head_t head = {.tag = (uint8_t) tags[i].tag, .src = btl_test.rank};
            size_t size = tag_size(tags[i].tag);
            btl_test_fill(payload, btl_test.rank, tags[i].tag, size);
            if (!btl_test_send(r, (mca_btl_base_tag_t) tags[i].tag, &head, sizeof(head), payload,
                               size)) {
                return false;
            }
        }
    }
    if (!btl_test_wait(all_arrived, NULL, "one message per tag from every rank")) {
        return false;
    }
    for (unsigned i = 0; i < NTAGS; ++i) {
        for (uint32_t r = 0; r < btl_test.size; ++r) {
            if (1 != tags[i].count[r]) {
                btl_test_fail("tag %u: %d messages from rank %" PRIu32 ", 1 expected", tags[i].tag,
                              tags[i].count[r], r);
            }
        }
    }
    /* The unclaimed ones went first on the same modules: all arrived. */
    uint64_t unclaimed = mca_btl_base_am_unclaimed_count(BTL_TEST_TAG_UNCLAIMED) - unclaimed_before;
    if (unclaimed != btl_test.size) {
        btl_test_fail("%" PRIu64 " messages counted as unclaimed on tag %u, %" PRIu32 " expected",
                      unclaimed, BTL_TEST_TAG_UNCLAIMED, btl_test.size);
    } else {
        btl_test_say("%u tags checked; %" PRIu64 " unclaimed messages counted", NTAGS, unclaimed);
    }
    return !btl_test.broken;
}
