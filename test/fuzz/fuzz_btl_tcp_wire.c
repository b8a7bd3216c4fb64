/* Fuzz target: what a btl/tcp peer sends or publishes (btl_tcp_wire.h).
 * The input is read three ways: as a published address blob (a blob that
 * decodes must pack back to the same bytes), as a handshake (its first 16
 * bytes), and as a stream of frames checked as the receiver checks them
 * (header, then a put's or get's target), skipping each frame's length. */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/tcp/btl_tcp_wire.h"
#include "opal/util/opal_error.h"
#include "test/fuzz/fuzz.h"

#define MAX_AM   (256u * 1024)
#define MAX_RDMA (1u << 20)

static void address(const uint8_t *data, size_t size)
{
    mca_btl_tcp_addr_t addr;
    char why[160] = "";
    if (OPAL_SUCCESS != mca_btl_tcp_addr_unpack(data, size, &addr, why, sizeof(why))) {
        if ('\0' == why[0]) {
            abort();
        }
        return;
    }
    if (addr.count > MCA_BTL_TCP_MAX_ADDRS || strlen(addr.declined) > MCA_BTL_TCP_REASON_MAX) {
        abort();
    }
    void *blob = NULL;
    size_t n = 0;
    /* A reason with a NUL inside packs shorter: only compare those without. */
    if (OPAL_SUCCESS != mca_btl_tcp_addr_pack(&addr, &blob, &n)) {
        abort();
    }
    if (0 != addr.count || n == size) {
        if (n != size || 0 != memcmp(blob, data, n)) {
            abort();
        }
    }
    free(blob);
}

static void frames(const uint8_t *data, size_t size)
{
    char why[192];
    while (size >= MCA_BTL_TCP_FRAME_HDR) {
        mca_btl_tcp_frame_t f;
        mca_btl_tcp_frame_unpack(data, &f);
        why[0] = '\0';
        if (OPAL_SUCCESS != mca_btl_tcp_frame_check(&f, MAX_AM, MAX_RDMA, why, sizeof(why))) {
            if ('\0' == why[0]) {
                abort();
            }
            return;
        }
        data += MCA_BTL_TCP_FRAME_HDR;
        size -= MCA_BTL_TCP_FRAME_HDR;
        if (MCA_BTL_TCP_FRAME_PUT == f.type || MCA_BTL_TCP_FRAME_GET == f.type) {
            if (size < MCA_BTL_TCP_RDMA_TARGET) {
                return;
            }
            mca_btl_tcp_target_t t;
            mca_btl_tcp_target_unpack(data, &t);
            if (OPAL_SUCCESS != mca_btl_tcp_target_check(&f, &t, MAX_RDMA, why, sizeof(why))) {
                return;
            }
            /* What the owner relies on once the check passed. */
            if (t.length > MAX_RDMA || t.address + t.length < t.address ||
                (MCA_BTL_TCP_FRAME_PUT == f.type && f.len != MCA_BTL_TCP_RDMA_TARGET + t.length)) {
                abort();
            }
        }
        if (MCA_BTL_TCP_FRAME_AM == f.type && f.len > MAX_AM) {
            abort();
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
    if (size >= MCA_BTL_TCP_HELLO_SIZE) {
        mca_btl_tcp_hello_t hello;
        char why[160] = "";
        if (OPAL_SUCCESS == mca_btl_tcp_hello_unpack(data, &hello, why, sizeof(why))) {
            uint8_t again[MCA_BTL_TCP_HELLO_SIZE];
            mca_btl_tcp_hello_pack(&hello, again);
            if (0 != memcmp(again, data, sizeof(again))) {
                abort();
            }
        } else if ('\0' == why[0]) {
            abort();
        }
    }
    frames(data, size);
    return 0;
}
