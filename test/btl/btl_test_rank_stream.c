/*
 * Streams of checked messages: a sender announces a stream (how many
 * messages, the limits of its module) with a control message, then sends
 * message k with tag STREAM0 + k % 4 and a payload the receiver can
 * recompute from (sender, k, size); streams that check order carry k in
 * an 8-byte header. Messages go out three ways in turn: the multiplexer's
 * copying send, a descriptor from alloc / prepare_src sent with a
 * completion callback and freed by the caller, and sendi (taking the
 * descriptor it offers when busy).
 *
 * Cases: sizes, order, alltoall, self, sendi.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "opal/runtime/opal_progress.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "test/btl/btl_test_rank.h"

enum { KIND_SIZES = 1, KIND_ORDER, KIND_ALLTOALL, KIND_SENDI };

#define COUNT_LATER UINT64_MAX
#define SEQ_BYTES   8

typedef struct {
    uint32_t id; /* streams from one rank to another, counted from 1 */
    uint32_t kind;
    uint32_t header; /* 1: each message starts with its sequence number */
    uint32_t unused;
    uint64_t count; /* COUNT_LATER: a COUNT control message tells */
    uint64_t max_size;
    uint64_t eager;
} stream_desc_t;

typedef struct {
    bool described;
    stream_desc_t d;
    uint64_t next;
    size_t *sizes; /* KIND_SIZES: the list */
} rx_t;

static rx_t *rx;
/* Streams announced to / awaited from each rank so far. */
static uint32_t *sent_ids, *awaited_ids;
static int stream_tag_data[BTL_TEST_STREAM_TAGS];
static int reports;

/* The first few problems are printed; a broken stream would flood. */
#define REPORT(...)                                                                                \
    do {                                                                                           \
        if (reports++ < 5) {                                                                       \
            btl_test_fail(__VA_ARGS__);                                                            \
        } else {                                                                                   \
            btl_test.broken = true;                                                                \
        }                                                                                          \
    } while (0)

/* Every size up to 4 KiB, then each power of two and its neighbours, and
 * the maximum itself. */
static size_t *make_sizes(uint64_t max, uint64_t *count)
{
    uint64_t dense = btl_test.slow ? 1024 : 4096;
    if (dense > max) {
        dense = max;
    }
    size_t cap = (size_t) dense + 1 + 3 * 64 + 2;
    size_t *list = malloc(cap * sizeof(*list));
    if (NULL == list) {
        return NULL;
    }
    size_t n = 0;
    for (uint64_t s = 0; s <= dense; ++s) {
        list[n++] = (size_t) s;
    }
    for (uint64_t p = 2 * 4096; p / 2 <= max && p != 0; p *= 2) {
        for (uint64_t s = p - 1; s <= p + 1; ++s) {
            if (s > list[n - 1] && s <= max) {
                list[n++] = (size_t) s;
            }
        }
    }
    if (max > list[n - 1]) {
        list[n++] = (size_t) max;
    }
    *count = n;
    return list;
}

static size_t clip(uint64_t size, uint64_t max)
{
    return (size_t) (size < max ? size : max);
}

/* Payload bytes of message k (the header, when there is one, comes on
 * top, within the module's max send size). */
static size_t payload_size(const stream_desc_t *d, const size_t *sizes, uint64_t k)
{
    uint64_t room = d->max_size - (d->header ? SEQ_BYTES : 0);
    uint64_t eager = d->eager > SEQ_BYTES ? d->eager - SEQ_BYTES : 0;
    switch (d->kind) {
        case KIND_SIZES:
            return sizes[k];
        case KIND_ORDER:
            if (0 == k % 97) {
                return 0;
            }
            if (0 == k % 50) {
                return clip(eager + 1 + k % 100, room);
            }
            return clip(8 + (k * 7) % 200, room);
        case KIND_ALLTOALL: {
            const uint64_t table[] = {
                0, 1, 8, 100, eager > 0 ? eager - 1 : 0, eager, eager + 1, room / 2 + 3, room};
            return clip(table[k % (sizeof(table) / sizeof(table[0]))], room);
        }
        default:
            return clip(8, eager);
    }
}

void btl_test_stream_control(const btl_test_control_t *msg)
{
    rx_t *x = &rx[msg->from];
    if (BTL_TEST_CTL_COUNT == msg->type) {
        uint64_t count;
        if (sizeof(count) != msg->length || !x->described || COUNT_LATER != x->d.count) {
            REPORT("unexpected COUNT from rank %" PRIu32, msg->from);
            return;
        }
        memcpy(&count, msg->body, sizeof(count));
        x->d.count = count;
        return;
    }
    if (sizeof(stream_desc_t) != msg->length) {
        REPORT("stream description of %" PRIu32 " bytes", msg->length);
        return;
    }
    if (x->described && x->next != x->d.count) {
        REPORT("rank %" PRIu32 " starts a stream before its last one ended", msg->from);
        return;
    }
    free(x->sizes);
    memset(x, 0, sizeof(*x));
    memcpy(&x->d, msg->body, sizeof(x->d));
    if (KIND_SIZES == x->d.kind) {
        uint64_t count = 0;
        x->sizes = make_sizes(x->d.max_size, &count);
        if (NULL == x->sizes || count != x->d.count) {
            REPORT("rank %" PRIu32 " announces %" PRIu64 " sizes, %" PRIu64 " expected", msg->from,
                   x->d.count, count);
            return;
        }
    }
    x->described = true;
}

static void stream_cb(struct mca_btl_base_module_t *btl,
                      const mca_btl_base_receive_descriptor_t *desc)
{
    if (NULL == desc->proc || desc->proc->proc_name.vpid >= btl_test.size) {
        REPORT("stream message without a known sender");
        return;
    }
    uint32_t src = desc->proc->proc_name.vpid;
    rx_t *x = &rx[src];
    uint64_t k = x->next;
    if (!x->described || k >= x->d.count) {
        REPORT("message on tag %u from rank %" PRIu32 " outside a stream (%" PRIu64 " received)",
               (unsigned) desc->tag, src, k);
        return;
    }
    unsigned expect_tag = BTL_TEST_TAG_STREAM0 + (unsigned) (k % BTL_TEST_STREAM_TAGS);
    if (desc->tag != expect_tag ||
        desc->cbdata != &stream_tag_data[desc->tag - BTL_TEST_TAG_STREAM0]) {
        REPORT("message %" PRIu64 " from rank %" PRIu32 ": tag %u (or its callback data), %u "
               "expected",
               k, src, (unsigned) desc->tag, expect_tag);
    }
    size_t head = x->d.header ? SEQ_BYTES : 0;
    size_t size = payload_size(&x->d, x->sizes, k);
    size_t len = btl_test_length(desc);
    if (len != head + size) {
        REPORT("message %" PRIu64 " from rank %" PRIu32 " over %s: %zu bytes, %zu expected", k, src,
               btl_test_module_name(btl), len, head + size);
        x->next++;
        return;
    }
    if (x->d.header) {
        uint64_t seq;
        btl_test_copy_out(desc, 0, &seq, sizeof(seq));
        if (seq != k) {
            REPORT("out of order from rank %" PRIu32 ": message %" PRIu64 " expected, %" PRIu64
                   " arrived",
                   src, k, seq);
        }
    }
    size_t where = 0;
    if (!btl_test_check(desc, head, src, k, size, &where)) {
        REPORT("message %" PRIu64 " from rank %" PRIu32 " (%zu bytes over %s): byte %zu differs", k,
               src, size, btl_test_module_name(btl), where);
    }
    x->next++;
}

int btl_test_stream_register(void)
{
    size_t n = btl_test.size > 0 ? btl_test.size : 1;
    rx = calloc(n, sizeof(*rx));
    sent_ids = calloc(n, sizeof(*sent_ids));
    awaited_ids = calloc(n, sizeof(*awaited_ids));
    if (NULL == rx || NULL == sent_ids || NULL == awaited_ids) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (int i = 0; i < BTL_TEST_STREAM_TAGS; ++i) {
        int rc = mca_btl_base_am_register((mca_btl_base_tag_t) (BTL_TEST_TAG_STREAM0 + i),
                                          stream_cb, &stream_tag_data[i]);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    return OPAL_SUCCESS;
}

/* ----------------------------------------------------------- sending */

static bool retry(uint32_t rank, uint64_t *n)
{
    if (0 == opal_progress() && 0 == ++*n % 64) {
        sched_yield();
    }
    if (btl_test.failed[rank]) {
        REPORT("rank %" PRIu32 " failed while sending to it", rank);
        return false;
    }
    return !btl_test.broken;
}

static void completion_cb(struct mca_btl_base_module_t *btl,
                          struct mca_btl_base_endpoint_t *endpoint,
                          struct mca_btl_base_descriptor_t *des, int status)
{
    *(int *) des->des_cbdata = OPAL_SUCCESS == status ? 1 : -1;
}

static bool completed(void *arg)
{
    return 0 != *(volatile int *) arg;
}

/* A descriptor the caller owns: alloc (eager) or prepare_src (above),
 * sent with a completion callback, freed once complete. */
static bool send_descriptor(uint32_t rank, mca_btl_base_tag_t tag, const void *head, size_t hlen,
                            const void *payload, size_t size)
{
    mca_btl_base_peer_t *peer = btl_test_peer(rank);
    mca_btl_base_module_t *btl = peer->send[0].btl;
    struct mca_btl_base_endpoint_t *ep = peer->send[0].endpoint;
    size_t total = hlen + size;
    uint64_t n = 0;
    for (;;) {
        mca_btl_base_descriptor_t *des = NULL;
        if (total <= btl->btl_eager_limit && NULL != btl->btl_alloc) {
            des =
                btl->btl_alloc(btl, ep, MCA_BTL_NO_ORDER, total, MCA_BTL_DES_SEND_ALWAYS_CALLBACK);
            if (NULL != des) {
                unsigned char *p = des->des_segments[0].seg_addr;
                memcpy(p, head, hlen);
                memcpy(p + hlen, payload, size);
                des->des_segments[0].seg_len = total;
            }
        } else {
            size_t packed = size;
            des = btl->btl_prepare_src(btl, ep, payload, MCA_BTL_NO_ORDER, hlen, &packed,
                                       MCA_BTL_DES_SEND_ALWAYS_CALLBACK);
            if (NULL != des && packed != size) {
                (void) btl->btl_free(btl, des);
                REPORT("prepare_src of %zu bytes to rank %" PRIu32 " over %s took only %zu", size,
                       rank, btl_test_module_name(btl), packed);
                return false;
            }
            if (NULL != des) {
                memcpy(des->des_segments[0].seg_addr, head, hlen);
            }
        }
        if (NULL == des) {
            if (!retry(rank, &n)) {
                return false;
            }
            continue;
        }
        int done = 0;
        des->des_cbfunc = completion_cb;
        des->des_cbdata = &done;
        int rc = btl->btl_send(btl, ep, des, tag);
        if (OPAL_ERR_RESOURCE_BUSY == rc) {
            (void) btl->btl_free(btl, des);
            if (!retry(rank, &n)) {
                return false;
            }
            continue;
        }
        if (rc < 0) {
            (void) btl->btl_free(btl, des);
            REPORT("send of %zu bytes to rank %" PRIu32 " over %s: %s", total, rank,
                   btl_test_module_name(btl), opal_strerror(rc));
            return false;
        }
        if (1 == rc && 0 == done) {
            REPORT("%s completed a send at once without the callback it was asked for",
                   btl_test_module_name(btl));
        }
        bool ok = 1 == rc || btl_test_wait(completed, &done, "a send's completion");
        if (ok && done < 0) {
            REPORT("send to rank %" PRIu32 " completed with an error", rank);
            ok = false;
        }
        (void) btl->btl_free(btl, des);
        return ok;
    }
}

/* sendi; when busy, the descriptor it offers (if any) is filled and sent. */
static bool send_immediate(uint32_t rank, mca_btl_base_tag_t tag, const void *head, size_t hlen,
                           const void *payload, size_t size)
{
    mca_btl_base_peer_t *peer = btl_test_peer(rank);
    mca_btl_base_module_t *btl = peer->send[0].btl;
    struct mca_btl_base_endpoint_t *ep = peer->send[0].endpoint;
    size_t total = hlen + size;
    if (NULL == btl->btl_sendi || 0 == (btl->btl_flags & MCA_BTL_FLAGS_SENDI) ||
        total > btl->btl_eager_limit) {
        return btl_test_send(rank, tag, head, hlen, payload, size);
    }
    uint64_t n = 0;
    for (;;) {
        mca_btl_base_descriptor_t *des = NULL;
        int rc = btl->btl_sendi(btl, ep, head, hlen, payload, size, MCA_BTL_NO_ORDER,
                                MCA_BTL_DES_FLAGS_BTL_OWNERSHIP, tag, &des);
        if (OPAL_SUCCESS == rc) {
            return true;
        }
        if (OPAL_ERR_RESOURCE_BUSY != rc) {
            REPORT("sendi of %zu bytes to rank %" PRIu32 " over %s: %s", total, rank,
                   btl_test_module_name(btl), opal_strerror(rc));
            return false;
        }
        if (NULL != des) {
            unsigned char *p = des->des_segments[0].seg_addr;
            memcpy(p, head, hlen);
            memcpy(p + hlen, payload, size);
            des->des_segments[0].seg_len = total;
            rc = btl->btl_send(btl, ep, des, tag);
            if (rc >= 0) {
                return true;
            }
            (void) btl->btl_free(btl, des);
            if (OPAL_ERR_RESOURCE_BUSY != rc) {
                REPORT("send of sendi's descriptor to rank %" PRIu32 ": %s", rank,
                       opal_strerror(rc));
                return false;
            }
        }
        if (!retry(rank, &n)) {
            return false;
        }
    }
}

typedef struct {
    uint32_t rank;
    stream_desc_t d;
    size_t *sizes;
} tx_t;

/* Sends message k of a stream, the way k picks. */
static bool send_message(tx_t *t, uint64_t k, unsigned char *scratch)
{
    size_t size = payload_size(&t->d, t->sizes, k);
    uint64_t seq = k;
    size_t hlen = t->d.header ? SEQ_BYTES : 0;
    btl_test_fill(scratch, btl_test.rank, k, size);
    mca_btl_base_tag_t tag =
        (mca_btl_base_tag_t) (BTL_TEST_TAG_STREAM0 + (unsigned) (k % BTL_TEST_STREAM_TAGS));
    switch (k % 3) {
        case 0:
            return btl_test_send(t->rank, tag, &seq, hlen, scratch, size);
        case 1:
            return send_descriptor(t->rank, tag, &seq, hlen, scratch, size);
        default:
            return send_immediate(t->rank, tag, &seq, hlen, scratch, size);
    }
}

/* Announces a stream of kind to each of targets and sends it, the
 * targets' messages interleaved. */
static bool send_streams(const uint32_t *targets, size_t ntargets, uint32_t kind, bool header,
                         uint64_t count)
{
    tx_t *tx = calloc(ntargets, sizeof(*tx));
    size_t scratch_size = 1;
    uint64_t most = 0;
    bool ok = NULL != tx;
    for (size_t i = 0; ok && i < ntargets; ++i) {
        mca_btl_base_module_t *btl = btl_test_peer(targets[i])->send[0].btl;
        tx[i].rank = targets[i];
        tx[i].d = (stream_desc_t){.id = ++sent_ids[targets[i]],
                                  .kind = kind,
                                  .header = header,
                                  .count = count,
                                  .max_size = btl->btl_max_send_size,
                                  .eager = btl->btl_eager_limit};
        if (KIND_SIZES == kind) {
            tx[i].sizes = make_sizes(tx[i].d.max_size, &tx[i].d.count);
            ok = NULL != tx[i].sizes;
        }
        if (btl->btl_max_send_size > scratch_size) {
            scratch_size = btl->btl_max_send_size;
        }
        most = tx[i].d.count > most ? tx[i].d.count : most;
        ok =
            ok && btl_test_control_send(targets[i], BTL_TEST_CTL_STREAM, &tx[i].d, sizeof(tx[i].d));
    }
    unsigned char *scratch = ok ? malloc(scratch_size) : NULL;
    ok = ok && NULL != scratch;
    for (uint64_t k = 0; ok && k < most; ++k) {
        for (size_t i = 0; ok && i < ntargets; ++i) {
            if (k < tx[i].d.count) {
                ok = send_message(&tx[i], k, scratch);
            }
        }
    }
    free(scratch);
    for (size_t i = 0; NULL != tx && i < ntargets; ++i) {
        free(tx[i].sizes);
    }
    free(tx);
    return ok;
}

typedef struct {
    const uint32_t *sources;
    size_t n;
} sources_t;

static bool streams_received(void *arg)
{
    const sources_t *s = arg;
    for (size_t i = 0; i < s->n; ++i) {
        const rx_t *x = &rx[s->sources[i]];
        if (!x->described || x->d.id != awaited_ids[s->sources[i]] || COUNT_LATER == x->d.count ||
            x->next < x->d.count) {
            return false;
        }
    }
    return true;
}

static bool receive_streams(const uint32_t *sources, size_t n)
{
    sources_t s = {.sources = sources, .n = n};
    for (size_t i = 0; i < n; ++i) {
        ++awaited_ids[sources[i]];
    }
    bool ok = btl_test_wait(streams_received, &s, "the streams of checked messages");
    for (size_t i = 0; i < n; ++i) {
        const rx_t *x = &rx[sources[i]];
        if (ok) {
            btl_test_say("received %" PRIu64 " messages from rank %" PRIu32, x->next, sources[i]);
        } else if (!x->described || x->d.id != awaited_ids[sources[i]]) {
            btl_test_say("from rank %" PRIu32 ": stream %" PRIu32 " not announced (last: %" PRIu32
                         ", %" PRIu64 " messages received)",
                         sources[i], awaited_ids[sources[i]], x->d.id, x->next);
        } else if (COUNT_LATER == x->d.count) {
            btl_test_say("from rank %" PRIu32 ": %" PRIu64 " messages received, count not told",
                         sources[i], x->next);
        } else {
            btl_test_say("from rank %" PRIu32 ": %" PRIu64 " of %" PRIu64 " messages received",
                         sources[i], x->next, x->d.count);
        }
    }
    return ok;
}

/* Every rank streams kind to every rank (itself included). */
static bool exchange(uint32_t kind, bool header, uint64_t count)
{
    uint32_t *all = malloc(btl_test.size * sizeof(*all));
    if (NULL == all) {
        return false;
    }
    for (uint32_t r = 0; r < btl_test.size; ++r) {
        all[r] = r;
    }
    bool ok = send_streams(all, btl_test.size, kind, header, count);
    ok = receive_streams(all, btl_test.size) && ok;
    free(all);
    return ok && !btl_test.broken;
}

bool btl_test_case_sizes(int argc, char **argv)
{
    return exchange(KIND_SIZES, false, 0);
}

bool btl_test_case_order(int argc, char **argv)
{
    bool ok = exchange(KIND_ORDER, true, btl_test.slow ? 600 : 20000);
    if (ok) {
        btl_test_describe_peers();
    }
    return ok;
}

bool btl_test_case_alltoall(int argc, char **argv)
{
    return exchange(KIND_ALLTOALL, true, btl_test.slow ? 18 : 180);
}

bool btl_test_case_self(int argc, char **argv)
{
    if (1 != btl_test.size) {
        btl_test_fail("the self case runs alone (np 1), not with %" PRIu32 " ranks", btl_test.size);
        return false;
    }
    return btl_test_case_sizes(argc, argv) && btl_test_case_order(argc, argv) &&
           btl_test_case_tags(argc, argv) && btl_test_case_rdma(argc, argv);
}

/* The next stream from *rank has been announced. */
static bool described(void *arg)
{
    uint32_t rank = *(const uint32_t *) arg;
    return rx[rank].described && rx[rank].d.id == awaited_ids[rank] + 1;
}

/* Pairs (0, 1), (2, 3), ...: once the partner has the stream's
 * description (and said so), the even rank fills it with sendi while the
 * partner sits in a fence, not progressing, until sendi says busy; both leave the fence and the
 * rest goes out with retries. The partner must receive every message once, in order. With
 * "busy-optional" a transport that never says busy passes (saying so). */
bool btl_test_case_sendi(int argc, char **argv)
{
    bool busy_optional = argc > 2 && 0 == strcmp(argv[2], "busy-optional");
    uint32_t me = btl_test.rank;
    bool sender = 0 == me % 2 && me + 1 < btl_test.size;
    bool receiver = 1 == me % 2;
    if (!sender && !receiver) {
        return OPAL_SUCCESS == opal_fence(false);
    }
    uint32_t partner = sender ? me + 1 : me - 1;
    if (receiver) {
        /* The description arrives while both progress (a transport may
         * need both sides to set up a connection); then this rank stops
         * progressing until the sender saw busy. */
        if (!btl_test_wait(described, &partner, "the sendi stream's description") ||
            !btl_test_control_send(partner, BTL_TEST_CTL_READY, NULL, 0) ||
            OPAL_SUCCESS != opal_fence(false)) {
            return false;
        }
        return receive_streams(&partner, 1);
    }

    mca_btl_base_peer_t *peer = btl_test_peer(partner);
    mca_btl_base_module_t *btl = peer->send[0].btl;
    struct mca_btl_base_endpoint_t *ep = peer->send[0].endpoint;
    bool has_sendi = NULL != btl->btl_sendi && 0 != (btl->btl_flags & MCA_BTL_FLAGS_SENDI);
    stream_desc_t d = {.id = ++sent_ids[partner],
                       .kind = KIND_SENDI,
                       .header = 1,
                       .count = has_sendi ? COUNT_LATER : 0,
                       .max_size = btl->btl_max_send_size,
                       .eager = btl->btl_eager_limit};
    if (!btl_test_control_send(partner, BTL_TEST_CTL_STREAM, &d, sizeof(d))) {
        return false;
    }
    /* A transport whose sender must progress until a message is out (udp
     * under rxd: a handshake, then acknowledgements) would keep the
     * description from the receiver once the sender stops progressing:
     * the burst waits until the receiver has it. */
    btl_test_control_t ready;
    if (!btl_test_control_recv(partner, BTL_TEST_CTL_READY, &ready)) {
        return false;
    }
    if (!has_sendi) {
        btl_test_say("sendi skipped: %s (to rank %" PRIu32 ") has no sendi",
                     btl_test_module_name(btl), partner);
        return OPAL_SUCCESS == opal_fence(false);
    }
    size_t size = payload_size(&d, NULL, 0);
    unsigned char payload[64];
    uint64_t cap = btl_test.slow ? UINT64_C(1) << 14 : UINT64_C(1) << 18;
    uint64_t k = 0;
    bool busy = false;
    while (!busy && k < cap) {
        btl_test_fill(payload, me, k, size);
        uint64_t seq = k;
        mca_btl_base_tag_t tag =
            (mca_btl_base_tag_t) (BTL_TEST_TAG_STREAM0 + (unsigned) (k % BTL_TEST_STREAM_TAGS));
        int rc = btl->btl_sendi(btl, ep, &seq, SEQ_BYTES, payload, size, MCA_BTL_NO_ORDER,
                                MCA_BTL_DES_FLAGS_BTL_OWNERSHIP, tag, NULL);
        if (OPAL_SUCCESS == rc) {
            ++k;
        } else if (OPAL_ERR_RESOURCE_BUSY == rc) {
            busy = true;
        } else {
            btl_test_fail("sendi to rank %" PRIu32 " over %s: %s", partner,
                          btl_test_module_name(btl), opal_strerror(rc));
            (void) opal_fence(false);
            return false;
        }
    }
    if (busy) {
        btl_test_say("sendi: %" PRIu64 " messages went out before %s was busy", k,
                     btl_test_module_name(btl));
    } else if (busy_optional) {
        btl_test_say("sendi: %s never busy after %" PRIu64 " messages (busy-optional)",
                     btl_test_module_name(btl), k);
    } else {
        btl_test_fail("sendi: %s never busy after %" PRIu64 " messages to a receiver that "
                      "does not progress: what bounds what it buffers?",
                      btl_test_module_name(btl), k);
    }
    if (OPAL_SUCCESS != opal_fence(false)) {
        return false;
    }
    /* The receiver drains now; the rest waits for room. */
    uint64_t extra = btl_test.slow ? 200 : 5000;
    unsigned char *scratch = malloc(d.max_size > 64 ? d.max_size : 64);
    bool ok = NULL != scratch;
    for (uint64_t i = 0; ok && i < extra; ++i, ++k) {
        btl_test_fill(scratch, me, k, size);
        uint64_t seq = k;
        mca_btl_base_tag_t tag =
            (mca_btl_base_tag_t) (BTL_TEST_TAG_STREAM0 + (unsigned) (k % BTL_TEST_STREAM_TAGS));
        ok = send_immediate(partner, tag, &seq, SEQ_BYTES, scratch, size);
    }
    free(scratch);
    return ok && btl_test_control_send(partner, BTL_TEST_CTL_COUNT, &k, sizeof(k)) &&
           (busy || busy_optional);
}

void btl_test_stream_release(void)
{
    for (uint32_t r = 0; NULL != rx && r < btl_test.size; ++r) {
        free(rx[r].sizes);
    }
    free(rx);
    free(sent_ids);
    free(awaited_ids);
    rx = NULL;
    sent_ids = awaited_ids = NULL;
}
