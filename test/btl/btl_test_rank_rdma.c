/*
 * The rdma case. Every rank exposes one region: a slot per rank that
 * peers put into, and a get area filled with a pattern. For each peer
 * with an RDMA module, a rank sends the region's address and its
 * registration handle (as bytes) in a control message; the peer puts a
 * series of transfers of growing size at odd offsets (aligned when the
 * module asks) into its slot and gets the same series from the get area,
 * flushes, checks what it got and tells the owner (RDMA_DONE), who then
 * checks its slot. A peer without an RDMA module is skipped with a line
 * saying so.
 *
 * rdma-again runs the same three times; between rounds each rank
 * deregisters, unmaps its regions and maps new pages at the same
 * addresses, so a registration cache that missed the unmap hands out the
 * old pages' registration and the puts land where nobody looks.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "opal/runtime/opal_progress.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_memhooks.h"
#include "test/btl/btl_test_rank.h"

#define NXFER     7
#define PUT_SEED  0xbeefu
#define MAX_ALIGN 4096u

/* What the owner of a region sends, and what a peer sends when done. */
typedef struct {
    uint64_t base;
    uint64_t length;
    uint32_t handle_size;
    uint32_t unused;
    uint8_t handle[BTL_TEST_CONTROL_MAX - 24];
} region_msg_t;

typedef struct {
    uint64_t limit;
    uint64_t alignment;
} done_msg_t;

static size_t xfer_size(int j)
{
    static const size_t sizes[NXFER] = {1, 7, 64, 4095, 4101, 65539, 1048583};
    if (NXFER - 1 == j && btl_test.slow) {
        return 131075;
    }
    return sizes[j];
}

/* The get area's byte at offset i: gets at any offset can be checked. */
static uint8_t area_byte(uint32_t owner, size_t i)
{
    return (uint8_t) (owner * 29u + i * 7u + (i >> 9));
}

static size_t slot_bytes(void)
{
    size_t total = 0;
    for (int j = 0; j < NXFER; ++j) {
        total += xfer_size(j) + 3 + MAX_ALIGN;
    }
    return total + MAX_ALIGN;
}

static size_t align_up(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}

/* Transfer j of a series: its offset in a slot and its size, for a
 * module with limit and alignment. Offsets are odd when alignment is 1. */
static void xfer(int j, uint64_t limit, uint64_t alignment, size_t *offset, size_t *size)
{
    size_t a = 0 == alignment || alignment > MAX_ALIGN ? 1 : (size_t) alignment;
    size_t end = 0;
    for (int i = 0; i <= j; ++i) {
        size_t s = xfer_size(i) < limit ? xfer_size(i) : (size_t) limit;
        s = align_up(s, a);
        size_t off = align_up(end + 3, a);
        if (i == j) {
            *offset = off;
            *size = s;
        }
        end = off + s;
    }
}

typedef struct {
    mca_btl_base_module_t *btl;
    mca_btl_base_registration_handle_t *region, *local;
} reg_t;

typedef struct {
    unsigned char *region; /* nranks slots, then the get area */
    unsigned char *local;  /* put sources, then get targets */
    size_t slot, region_size, local_size;
    reg_t *regs;
    int nregs;
    int pending, errors;
} rdma_state_t;

static rdma_state_t st;

/* rdma-again: the regions are mappings of their own, placed where the
 * previous round's were. */
static bool remap;
static unsigned char *prev_region, *prev_local;

static unsigned char *map_at(unsigned char *hint, size_t size)
{
    void *p = MAP_FAILED;
    if (NULL != hint) {
        p = mmap(hint, size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (MAP_FAILED != p && p != hint) {
            (void) munmap(p, size); /* an old kernel took it as a hint */
            p = MAP_FAILED;
        }
        if (MAP_FAILED == p) {
            btl_test_say("rdma-again: %p was taken again, mapping elsewhere", (void *) hint);
        }
    }
    if (MAP_FAILED == p) {
        p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    }
    return MAP_FAILED == p ? NULL : p;
}

static reg_t *registration(mca_btl_base_module_t *btl)
{
    for (int i = 0; i < st.nregs; ++i) {
        if (st.regs[i].btl == btl) {
            return &st.regs[i];
        }
    }
    reg_t *r = &st.regs[st.nregs++];
    r->btl = btl;
    r->region = r->local = NULL;
    if (0 == btl->btl_registration_handle_size) {
        return r;
    }
    if (NULL == btl->btl_register_mem) {
        btl_test_fail("%s has registration handles of %zu bytes but no register_mem",
                      btl_test_module_name(btl), btl->btl_registration_handle_size);
        return NULL;
    }
    r->region =
        btl->btl_register_mem(btl, NULL, st.region, st.region_size, MCA_BTL_REG_FLAG_ACCESS_ANY);
    r->local = btl->btl_register_mem(btl, NULL, st.local, st.local_size,
                                     MCA_BTL_REG_FLAG_LOCAL_READ | MCA_BTL_REG_FLAG_LOCAL_WRITE);
    if (NULL == r->region || NULL == r->local) {
        btl_test_fail("%s could not register %zu + %zu bytes", btl_test_module_name(btl),
                      st.region_size, st.local_size);
        return NULL;
    }
    return r;
}

static void rdma_cb(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, mca_btl_base_registration_handle_t *local_handle,
                    void *context, void *cbdata, int status)
{
    --st.pending;
    if (OPAL_SUCCESS != status) {
        ++st.errors;
        btl_test_fail("%s %s of %p completed with %s", btl_test_module_name(btl),
                      (const char *) cbdata, local_address, opal_strerror(status));
    }
}

static bool none_pending(void *arg)
{
    (void) arg;
    return 0 == st.pending;
}

/* Starts one put or get, retrying while the module is busy. */
static bool start(bool put, mca_btl_base_peer_t *peer, reg_t *reg, void *local, uint64_t remote,
                  mca_btl_base_registration_handle_t *remote_handle, size_t size)
{
    mca_btl_base_module_t *btl = peer->rdma[0].btl;
    struct mca_btl_base_endpoint_t *ep = peer->rdma[0].endpoint;
    for (uint64_t n = 0;; ++n) {
        ++st.pending;
        int rc = put ? btl->btl_put(btl, ep, local, remote, reg->local, remote_handle, size, 0,
                                    MCA_BTL_NO_ORDER, rdma_cb, NULL, (void *) "put")
                     : btl->btl_get(btl, ep, local, remote, reg->local, remote_handle, size, 0,
                                    MCA_BTL_NO_ORDER, rdma_cb, NULL, (void *) "get");
        if (OPAL_SUCCESS == rc) {
            return true;
        }
        --st.pending;
        if (OPAL_ERR_RESOURCE_BUSY != rc) {
            btl_test_fail("%s of %zu bytes to rank %" PRIu32 " over %s: %s", put ? "put" : "get",
                          size, peer->rank, btl_test_module_name(btl), opal_strerror(rc));
            return false;
        }
        if (0 == opal_progress() && 0 == n % 64) {
            sched_yield();
        }
    }
}

/* Puts and gets the series with peer (whose region message is msg). */
static bool transfer(mca_btl_base_peer_t *peer, const region_msg_t *msg)
{
    mca_btl_base_module_t *btl = peer->rdma[0].btl;
    reg_t *reg = registration(btl);
    if (NULL == reg) {
        return false;
    }
    mca_btl_base_registration_handle_t *remote_handle =
        0 == msg->handle_size ? NULL : (mca_btl_base_registration_handle_t *) msg->handle;
    uint64_t limit =
        btl->btl_put_limit < btl->btl_get_limit ? btl->btl_put_limit : btl->btl_get_limit;
    uint64_t alignment = btl->btl_put_alignment > btl->btl_get_alignment ? btl->btl_put_alignment
                                                                         : btl->btl_get_alignment;
    unsigned char *puts = st.local, *gets = st.local + st.slot;
    uint64_t my_slot = msg->base + (uint64_t) btl_test.rank * st.slot;
    uint64_t get_area = msg->base + (uint64_t) btl_test.size * st.slot;
    for (int j = 0; j < NXFER; ++j) {
        size_t off, size;
        xfer(j, limit, alignment, &off, &size);
        btl_test_fill(puts + off, btl_test.rank, PUT_SEED + (uint64_t) j, size);
        memset(gets + off, 0, size);
        if (!start(true, peer, reg, puts + off, my_slot + off, remote_handle, size) ||
            !start(false, peer, reg, gets + off, get_area + off, remote_handle, size)) {
            return false;
        }
    }
    if (!btl_test_wait(none_pending, NULL, "puts and gets to complete")) {
        return false;
    }
    if (NULL != btl->btl_flush) {
        int rc = btl->btl_flush(btl, peer->rdma[0].endpoint);
        if (OPAL_SUCCESS != rc) {
            btl_test_fail("flush of %s: %s", btl_test_module_name(btl), opal_strerror(rc));
            return false;
        }
    }
    for (int j = 0; j < NXFER; ++j) {
        size_t off, size, where;
        xfer(j, limit, alignment, &off, &size);
        for (where = 0; where < size; ++where) {
            if (gets[off + where] != area_byte(peer->rank, off + where)) {
                btl_test_fail("get %d (%zu bytes at offset %zu) from rank %" PRIu32
                              " over %s: byte %zu differs",
                              j, size, off, peer->rank, btl_test_module_name(btl), where);
                return false;
            }
        }
    }
    done_msg_t done = {.limit = limit, .alignment = alignment};
    btl_test_say("rdma with rank %" PRIu32 " over %s: %d puts and gets of up to %zu bytes",
                 peer->rank, btl_test_module_name(btl), NXFER,
                 xfer_size(NXFER - 1) < limit ? xfer_size(NXFER - 1) : (size_t) limit);
    return btl_test_control_send(peer->rank, BTL_TEST_CTL_RDMA_DONE, &done, sizeof(done));
}

/* Checks what peer src put into its slot of this rank's region. */
static bool check_slot(uint32_t src, const done_msg_t *done)
{
    const unsigned char *slot = st.region + (size_t) src * st.slot;
    for (int j = 0; j < NXFER; ++j) {
        size_t off, size;
        xfer(j, done->limit, done->alignment, &off, &size);
        for (size_t i = 0; i < size; ++i) {
            if (slot[off + i] != btl_test_pattern(src, PUT_SEED + (uint64_t) j, size, i)) {
                btl_test_fail("put %d (%zu bytes at offset %zu) from rank %" PRIu32
                              ": byte %zu differs",
                              j, size, off, src, i);
                return false;
            }
        }
    }
    return true;
}

static bool setup(void)
{
    memset(&st, 0, sizeof(st));
    st.slot = slot_bytes();
    st.region_size = st.slot * (btl_test.size + 1);
    st.local_size = 2 * st.slot;
    st.regs = calloc(btl_test.size, sizeof(*st.regs));
    if (remap) {
        st.region = map_at(prev_region, st.region_size);
        st.local = map_at(prev_local, st.local_size);
    }
    if (NULL == st.regs ||
        (remap ? NULL == st.region || NULL == st.local
               : 0 != posix_memalign((void **) &st.region, 4096, st.region_size) ||
                     0 != posix_memalign((void **) &st.local, 4096, st.local_size))) {
        btl_test_fail("out of memory for the rdma regions");
        return false;
    }
    memset(st.region, 0, st.region_size);
    unsigned char *get_area = st.region + (size_t) btl_test.size * st.slot;
    for (size_t i = 0; i < st.slot; ++i) {
        get_area[i] = area_byte(btl_test.rank, i);
    }
    return true;
}

static void teardown(void)
{
    for (int i = 0; i < st.nregs; ++i) {
        reg_t *r = &st.regs[i];
        if (NULL != r->region) {
            (void) r->btl->btl_deregister_mem(r->btl, r->region);
        }
        if (NULL != r->local) {
            (void) r->btl->btl_deregister_mem(r->btl, r->local);
        }
    }
    free(st.regs);
    if (remap) {
        prev_region = st.region;
        prev_local = st.local;
        if (NULL != st.region) {
            (void) munmap(st.region, st.region_size);
        }
        if (NULL != st.local) {
            (void) munmap(st.local, st.local_size);
        }
    } else {
        free(st.region);
        free(st.local);
    }
    memset(&st, 0, sizeof(st));
}

bool btl_test_case_rdma(int argc, char **argv)
{
    bool ok = setup();
    for (uint32_t r = 0; ok && r < btl_test.size; ++r) {
        mca_btl_base_peer_t *peer = btl_test_peer(r);
        if (0 == peer->rdma_count) {
            btl_test_say("rdma with rank %" PRIu32 " skipped: no RDMA module (send over %s)", r,
                         btl_test_module_name(peer->send[0].btl));
            continue;
        }
        mca_btl_base_module_t *btl = peer->rdma[0].btl;
        reg_t *reg = registration(btl);
        region_msg_t msg = {.base = (uint64_t) (uintptr_t) st.region,
                            .length = st.region_size,
                            .handle_size = (uint32_t) btl->btl_registration_handle_size};
        if (NULL == reg || msg.handle_size > sizeof(msg.handle)) {
            btl_test_fail("%s: registration handle of %" PRIu32 " bytes", btl_test_module_name(btl),
                          msg.handle_size);
            ok = false;
            break;
        }
        if (0 < msg.handle_size) {
            memcpy(msg.handle, reg->region, msg.handle_size);
        }
        ok = btl_test_control_send(r, BTL_TEST_CTL_RDMA, &msg,
                                   offsetof(region_msg_t, handle) + msg.handle_size);
    }
    /* Each peer's region, then the transfers. */
    for (uint32_t r = 0; ok && r < btl_test.size; ++r) {
        mca_btl_base_peer_t *peer = btl_test_peer(r);
        if (0 == peer->rdma_count) {
            continue;
        }
        btl_test_control_t c;
        region_msg_t msg;
        memset(&msg, 0, sizeof(msg));
        ok = btl_test_control_recv(r, BTL_TEST_CTL_RDMA, &c);
        if (ok) {
            memcpy(&msg, c.body, c.length < sizeof(msg) ? c.length : sizeof(msg));
            ok = msg.handle_size == peer->rdma[0].btl->btl_registration_handle_size &&
                 msg.length == st.region_size;
            if (!ok) {
                btl_test_fail("rank %" PRIu32 " sent a region of %" PRIu64 " bytes with a "
                              "handle of %" PRIu32 " bytes",
                              r, msg.length, msg.handle_size);
            }
        }
        ok = ok && transfer(peer, &msg);
    }
    /* What every peer put here. */
    for (uint32_t r = 0; ok && r < btl_test.size; ++r) {
        if (0 == btl_test_peer(r)->rdma_count) {
            continue;
        }
        btl_test_control_t c;
        done_msg_t done;
        ok = btl_test_control_recv(r, BTL_TEST_CTL_RDMA_DONE, &c) && sizeof(done) == c.length;
        if (ok) {
            memcpy(&done, c.body, sizeof(done));
            ok = check_slot(r, &done);
        }
    }
    teardown();
    return ok && !btl_test.broken;
}

bool btl_test_case_rdma_again(int argc, char **argv)
{
    remap = true;
    bool ok = true;
    for (int round = 0; ok && round < 3; ++round) {
        ok = btl_test_case_rdma(argc, argv) && btl_test_barrier();
    }
    remap = false;
    /* Whether a registration cache could have heard of the unmaps (the
     * guest list checks it for btl/verbs). */
    const char *why = opal_memhooks_why();
    btl_test_say("rdma-again: memory hooks %s%s", opal_memhooks_active() ? "active" : "off: ",
                 opal_memhooks_active() ? ""
                 : NULL != why          ? why
                                        : "nobody subscribed");
    return ok;
}
