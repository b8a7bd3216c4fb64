/*
 * btl/tcp's wire formats (btl_tcp_wire.h): packing and the checks of what
 * a peer sent.
 */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/tcp/btl_tcp_wire.h"
#include "opal/util/opal_error.h"

/* Fills why (when not NULL) and returns OPAL_ERR_BAD_VALUE. */
#define bad(why, why_size, ...) opal_error_why(OPAL_ERR_BAD_VALUE, (why), (why_size), __VA_ARGS__)

int mca_btl_tcp_addr_pack(const mca_btl_tcp_addr_t *addr, void **blob, size_t *size)
{
    if (addr->count > MCA_BTL_TCP_MAX_ADDRS || (addr->count > 0 && 0 == addr->port)) {
        return OPAL_ERR_BAD_PARAM;
    }
    size_t reason_len = 0 == addr->count ? strnlen(addr->declined, MCA_BTL_TCP_REASON_MAX) : 0;
    unsigned count6 = 0;
    for (unsigned i = 0; i < addr->count; ++i) {
        count6 += addr->ip[i].v6 ? 1 : 0;
    }
    unsigned count4 = addr->count - count6;
    size_t n = MCA_BTL_TCP_ADDR_HDR + 4 * (size_t) count4 + 16 * (size_t) count6 +
               (0 == addr->count ? 2 + reason_len : 0);
    uint8_t *p = calloc(1, n);
    if (NULL == p) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    mca_btl_tcp_put_u32(p, MCA_BTL_TCP_ADDR_MAGIC);
    mca_btl_tcp_put_u16(p + 4, MCA_BTL_TCP_ADDR_VERSION);
    mca_btl_tcp_put_u16(p + 6, addr->port);
    mca_btl_tcp_put_u32(p + 8, addr->pid);
    p[12] = (uint8_t) count4;
    p[13] = (uint8_t) count6;
    mca_btl_tcp_put_u64(p + 16, addr->pid_space);
    uint8_t *at = p + MCA_BTL_TCP_ADDR_HDR;
    for (int pass = 0; pass < 2; ++pass) {
        for (unsigned i = 0; i < addr->count; ++i) {
            if (addr->ip[i].v6 == (1 == pass)) {
                size_t len = addr->ip[i].v6 ? 16 : 4;
                memcpy(at, addr->ip[i].bytes, len);
                at += len;
            }
        }
    }
    if (0 == addr->count) {
        mca_btl_tcp_put_u16(p + MCA_BTL_TCP_ADDR_HDR, (uint16_t) reason_len);
        memcpy(p + MCA_BTL_TCP_ADDR_HDR + 2, addr->declined, reason_len);
    }
    *blob = p;
    *size = n;
    return OPAL_SUCCESS;
}

int mca_btl_tcp_addr_unpack(const void *blob, size_t size, mca_btl_tcp_addr_t *addr, char *why,
                            size_t why_size)
{
    const uint8_t *p = blob;
    memset(addr, 0, sizeof(*addr));
    if (NULL == p || size < MCA_BTL_TCP_ADDR_HDR) {
        return bad(why, why_size, "%zu bytes, shorter than the %d-byte header", size,
                   MCA_BTL_TCP_ADDR_HDR);
    }
    if (MCA_BTL_TCP_ADDR_MAGIC != mca_btl_tcp_get_u32(p)) {
        return bad(why, why_size, "not a btl/tcp address (magic 0x%08x)",
                   (unsigned) mca_btl_tcp_get_u32(p));
    }
    unsigned version = mca_btl_tcp_get_u16(p + 4);
    if (MCA_BTL_TCP_ADDR_VERSION != version) {
        return bad(why, why_size, "version %u (this build speaks %u)", version,
                   MCA_BTL_TCP_ADDR_VERSION);
    }
    if (0 != p[14] || 0 != p[15]) {
        return bad(why, why_size, "reserved bytes are not zero");
    }
    addr->port = mca_btl_tcp_get_u16(p + 6);
    addr->pid = mca_btl_tcp_get_u32(p + 8);
    addr->pid_space = mca_btl_tcp_get_u64(p + 16);
    unsigned count4 = p[12], count6 = p[13];
    addr->count = count4 + count6;
    if (0 == addr->count) {
        if (size < MCA_BTL_TCP_ADDR_HDR + 2) {
            return bad(why, why_size, "a declined address without its reason");
        }
        size_t len = mca_btl_tcp_get_u16(p + MCA_BTL_TCP_ADDR_HDR);
        if (len > MCA_BTL_TCP_REASON_MAX || MCA_BTL_TCP_ADDR_HDR + 2 + len != size) {
            return bad(why, why_size, "a reason of %zu bytes in a blob of %zu", len, size);
        }
        const uint8_t *text = p + MCA_BTL_TCP_ADDR_HDR + 2;
        for (size_t i = 0; i < len; ++i) {
            /* Printed in other processes' messages: text only. */
            if (text[i] < 0x20 || text[i] >= 0x7f) {
                return bad(why, why_size, "a reason with byte 0x%02x at %zu (printable text only)",
                           (unsigned) text[i], i);
            }
        }
        memcpy(addr->declined, text, len);
        addr->declined[len] = '\0';
        return OPAL_SUCCESS;
    }
    if (addr->count > MCA_BTL_TCP_MAX_ADDRS) {
        unsigned count = addr->count;
        addr->count = 0;
        return bad(why, why_size, "%u addresses (at most %d)", count, MCA_BTL_TCP_MAX_ADDRS);
    }
    if (MCA_BTL_TCP_ADDR_HDR + 4 * (size_t) count4 + 16 * (size_t) count6 != size) {
        addr->count = 0;
        return bad(why, why_size, "%u IPv4 and %u IPv6 addresses in a blob of %zu bytes", count4,
                   count6, size);
    }
    if (0 == addr->port) {
        addr->count = 0;
        return bad(why, why_size, "port 0");
    }
    const uint8_t *at = p + MCA_BTL_TCP_ADDR_HDR;
    for (unsigned i = 0; i < addr->count; ++i) {
        addr->ip[i].v6 = i >= count4;
        size_t len = addr->ip[i].v6 ? 16 : 4;
        memcpy(addr->ip[i].bytes, at, len);
        at += len;
    }
    return OPAL_SUCCESS;
}

void mca_btl_tcp_hello_pack(const mca_btl_tcp_hello_t *hello, uint8_t out[MCA_BTL_TCP_HELLO_SIZE])
{
    mca_btl_tcp_put_u32(out, MCA_BTL_TCP_HELLO_MAGIC);
    mca_btl_tcp_put_u16(out + 4, MCA_BTL_TCP_WIRE_VERSION);
    mca_btl_tcp_put_u16(out + 6, hello->kind);
    mca_btl_tcp_put_u32(out + 8, hello->jobid);
    mca_btl_tcp_put_u32(out + 12, hello->rank);
}

int mca_btl_tcp_hello_unpack(const uint8_t in[MCA_BTL_TCP_HELLO_SIZE], mca_btl_tcp_hello_t *hello,
                             char *why, size_t why_size)
{
    if (MCA_BTL_TCP_HELLO_MAGIC != mca_btl_tcp_get_u32(in)) {
        return bad(why, why_size, "not a btl/tcp handshake (magic 0x%08x)",
                   (unsigned) mca_btl_tcp_get_u32(in));
    }
    unsigned version = mca_btl_tcp_get_u16(in + 4);
    if (MCA_BTL_TCP_WIRE_VERSION != version) {
        return bad(why, why_size, "handshake version %u (this build speaks %u)", version,
                   MCA_BTL_TCP_WIRE_VERSION);
    }
    hello->kind = mca_btl_tcp_get_u16(in + 6);
    if (hello->kind < MCA_BTL_TCP_HELLO || hello->kind > MCA_BTL_TCP_REJECT) {
        return bad(why, why_size, "handshake of unknown kind %u", (unsigned) hello->kind);
    }
    hello->jobid = mca_btl_tcp_get_u32(in + 8);
    hello->rank = mca_btl_tcp_get_u32(in + 12);
    return OPAL_SUCCESS;
}

const char *mca_btl_tcp_status_string(unsigned status)
{
    switch (status) {
        case MCA_BTL_TCP_STATUS_OK:
            return "done";
        case MCA_BTL_TCP_STATUS_NO_REGION:
            return "no registration has that key";
        case MCA_BTL_TCP_STATUS_BOUNDS:
            return "the range is outside the registration";
        case MCA_BTL_TCP_STATUS_ACCESS:
            return "the registration does not allow it";
        default:
            return "an unknown status";
    }
}

int mca_btl_tcp_frame_check(const mca_btl_tcp_frame_t *f, size_t max_am, size_t max_rdma, char *why,
                            size_t why_size)
{
    if (f->type < MCA_BTL_TCP_FRAME_AM || f->type > MCA_BTL_TCP_FRAME_BYE) {
        return bad(why, why_size, "a frame of unknown type %u", (unsigned) f->type);
    }
    if (MCA_BTL_TCP_FRAME_AM != f->type && 0 != f->tag) {
        return bad(why, why_size, "a frame of type %u with tag %u (only messages have one)",
                   (unsigned) f->type, (unsigned) f->tag);
    }
    bool status_allowed =
        MCA_BTL_TCP_FRAME_PUT_ACK == f->type || MCA_BTL_TCP_FRAME_GET_DATA == f->type;
    if (!status_allowed && 0 != f->status) {
        return bad(why, why_size, "a frame of type %u with status %u", (unsigned) f->type,
                   (unsigned) f->status);
    }
    if (status_allowed && f->status > MCA_BTL_TCP_STATUS_ACCESS) {
        return bad(why, why_size, "a reply with unknown status %u", (unsigned) f->status);
    }
    switch (f->type) {
        case MCA_BTL_TCP_FRAME_AM:
            if (f->len > max_am) {
                return bad(why, why_size, "a message of %u bytes (at most %zu)", (unsigned) f->len,
                           max_am);
            }
            return OPAL_SUCCESS;
        case MCA_BTL_TCP_FRAME_PUT:
            if (f->len < MCA_BTL_TCP_RDMA_TARGET ||
                (size_t) (f->len - MCA_BTL_TCP_RDMA_TARGET) > max_rdma) {
                return bad(why, why_size, "a put frame of %u bytes (24 to %zu)", (unsigned) f->len,
                           max_rdma > SIZE_MAX - MCA_BTL_TCP_RDMA_TARGET
                               ? SIZE_MAX
                               : max_rdma + MCA_BTL_TCP_RDMA_TARGET);
            }
            return OPAL_SUCCESS;
        case MCA_BTL_TCP_FRAME_GET:
            if (MCA_BTL_TCP_RDMA_TARGET != f->len) {
                return bad(why, why_size, "a get frame of %u bytes (24)", (unsigned) f->len);
            }
            return OPAL_SUCCESS;
        case MCA_BTL_TCP_FRAME_GET_DATA:
            if (f->len > max_rdma || (0 != f->status && 0 != f->len)) {
                return bad(why, why_size, "get data of %u bytes with status %u (at most %zu)",
                           (unsigned) f->len, (unsigned) f->status, max_rdma);
            }
            return OPAL_SUCCESS;
        case MCA_BTL_TCP_FRAME_PUT_ACK:
        case MCA_BTL_TCP_FRAME_BYE:
            if (0 != f->len) {
                return bad(why, why_size, "a frame of type %u with %u bytes and tag %u",
                           (unsigned) f->type, (unsigned) f->len, (unsigned) f->tag);
            }
            return OPAL_SUCCESS;
        default:
            return bad(why, why_size, "a frame of unknown type %u", (unsigned) f->type);
    }
}

int mca_btl_tcp_target_check(const mca_btl_tcp_frame_t *f, const mca_btl_tcp_target_t *t,
                             size_t max_rdma, char *why, size_t why_size)
{
    if (MCA_BTL_TCP_FRAME_PUT == f->type && f->len < MCA_BTL_TCP_RDMA_TARGET) {
        return bad(why, why_size, "a put frame of %u bytes (at least 24)", (unsigned) f->len);
    }
    if (t->length > max_rdma) {
        return bad(why, why_size, "a transfer of %llu bytes (at most %zu)",
                   (unsigned long long) t->length, max_rdma);
    }
    if (t->address + t->length < t->address) {
        return bad(why, why_size, "a range at 0x%llx of %llu bytes that wraps",
                   (unsigned long long) t->address, (unsigned long long) t->length);
    }
    if (MCA_BTL_TCP_FRAME_PUT == f->type &&
        (uint64_t) f->len != MCA_BTL_TCP_RDMA_TARGET + t->length) {
        return bad(why, why_size, "a put of %llu bytes in a frame of %u",
                   (unsigned long long) t->length, (unsigned) f->len);
    }
    return OPAL_SUCCESS;
}
