/* Fuzz target: what a btl/tcp peer sends or publishes (btl_tcp_wire.h).
 * The input is read four ways: as a published address blob (a blob that
 * decodes must pack back to the same bytes), as the reason of a declined
 * address made around it, as a handshake (its first 16 bytes), and as a
 * stream of frames checked as the receiver checks them (header, then a
 * put's or get's target), skipping each frame's length. The frames are
 * read twice, under the default limits and under small ones, so that
 * short inputs reach the limits too. What a check accepts is then held
 * against the contract in btl_tcp_wire.h, written out here independently
 * of the check. */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/tcp/btl_tcp_wire.h"
#include "opal/util/opal_error.h"
#include "test/fuzz/fuzz.h"

#define require(cond)                                                                              \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static void address(const uint8_t *data, size_t size)
{
    mca_btl_tcp_addr_t addr;
    char why[160] = "";
    int rc = mca_btl_tcp_addr_unpack(data, size, &addr, why, sizeof(why));
    /* The verdict does not depend on whether the caller wants a reason. */
    mca_btl_tcp_addr_t again;
    require(rc == mca_btl_tcp_addr_unpack(data, size, &again, NULL, 0));
    if (OPAL_SUCCESS != rc) {
        require(OPAL_ERR_BAD_VALUE == rc && '\0' != why[0]);
        return;
    }
    require(NULL != memchr(addr.declined, '\0', sizeof(addr.declined)));
    require(addr.count <= MCA_BTL_TCP_MAX_ADDRS);
    require(size >= MCA_BTL_TCP_ADDR_HDR);
    if (0 != addr.count) {
        require(0 != addr.port && '\0' == addr.declined[0]);
        /* IPv4 first, then IPv6, as the counts in the header say. */
        size_t expect = MCA_BTL_TCP_ADDR_HDR;
        for (unsigned i = 0; i < addr.count; ++i) {
            require(i == 0 || addr.ip[i].v6 || !addr.ip[i - 1].v6);
            expect += addr.ip[i].v6 ? 16 : 4;
        }
        require(expect == size);
    } else {
        require(strlen(addr.declined) <= MCA_BTL_TCP_REASON_MAX);
    }
    if (0 == addr.count) {
        /* Printable text only: peers print it. */
        for (const char *c = addr.declined; '\0' != *c; ++c) {
            require(*c >= 0x20 && *c < 0x7f);
        }
    }
    void *blob = NULL;
    size_t n = 0;
    require(OPAL_SUCCESS == mca_btl_tcp_addr_pack(&addr, &blob, &n));
    /* Anything accepted packs back to the very bytes read. */
    require(n == size && 0 == memcmp(blob, data, n));
    free(blob);
}

/* The whole input as the reason of a well-formed declined address: the
 * blob is accepted exactly when the reason fits and is printable text,
 * and then reads back as the input. (A fuzzer rarely makes the length
 * field and the blob's size agree on its own.) */
static void declined(const uint8_t *data, size_t size)
{
    if (size > UINT16_MAX) {
        return;
    }
    size_t n = MCA_BTL_TCP_ADDR_HDR + 2 + size;
    uint8_t *blob = malloc(n);
    require(NULL != blob);
    memset(blob, 0, MCA_BTL_TCP_ADDR_HDR);
    mca_btl_tcp_put_u32(blob, MCA_BTL_TCP_ADDR_MAGIC);
    mca_btl_tcp_put_u16(blob + 4, MCA_BTL_TCP_ADDR_VERSION);
    mca_btl_tcp_put_u16(blob + MCA_BTL_TCP_ADDR_HDR, (uint16_t) size);
    if (size > 0) {
        memcpy(blob + MCA_BTL_TCP_ADDR_HDR + 2, data, size);
    }
    mca_btl_tcp_addr_t addr;
    char why[160] = "";
    int rc = mca_btl_tcp_addr_unpack(blob, n, &addr, why, sizeof(why));
    bool printable = true;
    for (size_t i = 0; i < size; ++i) {
        printable = printable && data[i] >= 0x20 && data[i] < 0x7f;
    }
    if (size > MCA_BTL_TCP_REASON_MAX || !printable) {
        require(OPAL_ERR_BAD_VALUE == rc && '\0' != why[0]);
    } else {
        require(OPAL_SUCCESS == rc && 0 == addr.count);
        require(strlen(addr.declined) == size && 0 == memcmp(addr.declined, data, size));
    }
    free(blob);
}

static void handshake(const uint8_t *data, size_t size)
{
    if (size < MCA_BTL_TCP_HELLO_SIZE) {
        return;
    }
    mca_btl_tcp_hello_t hello;
    char why[160] = "";
    if (OPAL_SUCCESS != mca_btl_tcp_hello_unpack(data, &hello, why, sizeof(why))) {
        require('\0' != why[0]);
        return;
    }
    require(hello.kind >= MCA_BTL_TCP_HELLO && hello.kind <= MCA_BTL_TCP_REJECT);
    uint8_t again[MCA_BTL_TCP_HELLO_SIZE];
    mca_btl_tcp_hello_pack(&hello, again);
    require(0 == memcmp(again, data, sizeof(again)));
}

/* What frame_check promises of a frame it accepted (btl_tcp_wire.h). */
static void require_within_contract(const mca_btl_tcp_frame_t *f, size_t max_am, size_t max_rdma)
{
    bool reply = MCA_BTL_TCP_FRAME_PUT_ACK == f->type || MCA_BTL_TCP_FRAME_GET_DATA == f->type;
    require(reply ? f->status <= MCA_BTL_TCP_STATUS_ACCESS : 0 == f->status);
    switch (f->type) {
        case MCA_BTL_TCP_FRAME_AM:
            require(f->len <= max_am);
            break;
        case MCA_BTL_TCP_FRAME_PUT:
            require(f->len >= MCA_BTL_TCP_RDMA_TARGET &&
                    f->len - MCA_BTL_TCP_RDMA_TARGET <= max_rdma);
            break;
        case MCA_BTL_TCP_FRAME_GET:
            require(MCA_BTL_TCP_RDMA_TARGET == f->len);
            break;
        case MCA_BTL_TCP_FRAME_GET_DATA:
            require(f->len <= max_rdma && (0 == f->status || 0 == f->len));
            break;
        case MCA_BTL_TCP_FRAME_PUT_ACK:
        case MCA_BTL_TCP_FRAME_BYE:
            require(0 == f->len && 0 == f->tag);
            break;
        default:
            abort();
    }
}

static void frames(const uint8_t *data, size_t size, size_t max_am, size_t max_rdma)
{
    char why[192];
    while (size >= MCA_BTL_TCP_FRAME_HDR) {
        mca_btl_tcp_frame_t f;
        mca_btl_tcp_frame_unpack(data, &f);
        uint8_t again[MCA_BTL_TCP_FRAME_HDR];
        mca_btl_tcp_frame_pack(&f, again);
        require(0 == memcmp(again, data, sizeof(again)));
        why[0] = '\0';
        if (OPAL_SUCCESS != mca_btl_tcp_frame_check(&f, max_am, max_rdma, why, sizeof(why))) {
            require('\0' != why[0]);
            return;
        }
        require_within_contract(&f, max_am, max_rdma);
        data += MCA_BTL_TCP_FRAME_HDR;
        size -= MCA_BTL_TCP_FRAME_HDR;
        if (MCA_BTL_TCP_FRAME_PUT == f.type || MCA_BTL_TCP_FRAME_GET == f.type) {
            if (size < MCA_BTL_TCP_RDMA_TARGET) {
                return;
            }
            mca_btl_tcp_target_t t;
            mca_btl_tcp_target_unpack(data, &t);
            uint8_t packed[MCA_BTL_TCP_RDMA_TARGET];
            mca_btl_tcp_target_pack(&t, packed);
            require(0 == memcmp(packed, data, sizeof(packed)));
            why[0] = '\0';
            if (OPAL_SUCCESS != mca_btl_tcp_target_check(&f, &t, max_rdma, why, sizeof(why))) {
                require('\0' != why[0]);
                return;
            }
            /* What the owner relies on once the check passed. */
            require(t.length <= max_rdma && t.address + t.length >= t.address);
            require(MCA_BTL_TCP_FRAME_GET == f.type ||
                    (uint64_t) f.len == MCA_BTL_TCP_RDMA_TARGET + t.length);
        }
        if (f.len > size) {
            return;
        }
        data += f.len;
        size -= f.len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    address(data, size);
    declined(data, size);
    handshake(data, size);
    frames(data, size, 256u * 1024, 1u << 20);
    frames(data, size, 8, 64);
    return 0;
}
