/*
 * btl/tcp's wire formats, free of state so that the fuzz targets and unit
 * tests reach them without sockets. Every integer is little-endian.
 *
 * The address a process publishes in the modex (MCA_BTL_TCP_MODEX_KEY):
 *
 *   u32 magic "BTCA"   u16 version (2)   u16 port (its listening port)
 *   u32 pid            u8 count4         u8 count6       u8[2] zero
 *   u64 pid space (opal_pid_space(): the pid is checked for liveness by a
 *       peer whose pid space is the same, 0 for none)
 *   then count4 IPv4 addresses (4 bytes each) and count6 IPv6 addresses
 *   (16 bytes each), in network order, count4 + count6 at most 16 (the
 *   port is not 0); or, when both counts are 0, why the process's btl/tcp
 *   did not run: u16 length and that many bytes of printable ASCII (no
 *   NUL, no control byte: peers print it). count6 was a zero byte before
 *   IPv6: a blob without IPv6 reads the same in both. Version 1 had no
 *   pid space (a 16-byte header).
 *
 * The handshake (its own version, 1), 16 bytes each way, before anything
 * else on a connection:
 *
 *   u32 magic "BTCH"   u16 version (1)   u16 kind   u32 jobid   u32 rank
 *
 * kind: HELLO (the connecting process names itself), ACCEPT (the accepting
 * process names itself; frames may follow), REJECT (both processes
 * connected to each other at once and this connection loses: the other
 * one, started by the process with the smaller name, carries the
 * traffic).
 *
 * Then frames, each a 16-byte header and len bytes:
 *
 *   u32 len   u8 type   u8 tag   u16 status   u64 id
 *
 *   AM       an active message: tag, len bytes of payload
 *            (len <= the receiver's max send size)
 *   PUT      24 bytes of target (u64 address, u64 key, u64 length) then
 *            length bytes of data (len = 24 + length); id names the put
 *   PUT_ACK  the put id finished at the owner (status 0) or was refused
 *   GET      24 bytes of target (len = 24); id names the get
 *   GET_DATA the data of get id (len = its length, status 0), or its
 *            refusal (len 0, status the reason)
 *   BYE      the sender finalizes: the connection's end is no failure
 *
 * Replies come in the order of their requests (one connection, served in
 * order), so a PUT_ACK or GET_DATA answers the oldest put or get still
 * waiting, and its id must be that one's.
 */
#ifndef OPAL_MCA_BTL_TCP_BTL_TCP_WIRE_H
#define OPAL_MCA_BTL_TCP_BTL_TCP_WIRE_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MCA_BTL_TCP_MODEX_KEY "btl.tcp.addr"

#define MCA_BTL_TCP_ADDR_MAGIC   0x41435442u /* "BTCA" */
#define MCA_BTL_TCP_HELLO_MAGIC  0x48435442u /* "BTCH" */
#define MCA_BTL_TCP_WIRE_VERSION 1u          /* the handshake's */
#define MCA_BTL_TCP_ADDR_VERSION 2u          /* the published address's */
#define MCA_BTL_TCP_MAX_ADDRS    16
#define MCA_BTL_TCP_ADDR_HDR     24
#define MCA_BTL_TCP_REASON_MAX   200

/* One IP address: 4 bytes (IPv4) or 16 (IPv6), network byte order. */
typedef struct mca_btl_tcp_ip_t {
    bool v6;
    uint8_t bytes[16];
} mca_btl_tcp_ip_t;

/* A peer's published address, as read from the modex. */
typedef struct mca_btl_tcp_addr_t {
    uint16_t port;
    uint32_t pid;
    /* opal_pid_space() of the peer (0: its pid is not to be checked). */
    uint64_t pid_space;
    /* IPv4 addresses first, then IPv6 (as published). */
    unsigned count;
    mca_btl_tcp_ip_t ip[MCA_BTL_TCP_MAX_ADDRS];
    /* count 0: why the peer's btl/tcp did not run (NUL-terminated). */
    char declined[MCA_BTL_TCP_REASON_MAX + 1];
} mca_btl_tcp_addr_t;

/* Packs addr (count > 0: its IPv4 addresses, then its IPv6 ones) or, with
 * count 0, addr->declined, into a malloc'd blob. OPAL_ERR_BAD_PARAM for
 * more than MAX_ADDRS addresses. */
int mca_btl_tcp_addr_pack(const mca_btl_tcp_addr_t *addr, void **blob, size_t *size);

/* Reads a published blob into *addr. OPAL_ERR_BAD_VALUE, with why filled,
 * for anything malformed (short, long, wrong magic or version, port 0,
 * more than MAX_ADDRS addresses, a reason longer than the blob). */
int mca_btl_tcp_addr_unpack(const void *blob, size_t size, mca_btl_tcp_addr_t *addr, char *why,
                            size_t why_size);

enum {
    MCA_BTL_TCP_HELLO = 1,
    MCA_BTL_TCP_ACCEPT = 2,
    MCA_BTL_TCP_REJECT = 3,
};
#define MCA_BTL_TCP_HELLO_SIZE 16

typedef struct mca_btl_tcp_hello_t {
    uint16_t kind;
    uint32_t jobid;
    uint32_t rank;
} mca_btl_tcp_hello_t;

void mca_btl_tcp_hello_pack(const mca_btl_tcp_hello_t *hello, uint8_t out[MCA_BTL_TCP_HELLO_SIZE]);

/* OPAL_ERR_BAD_VALUE, with why filled, for a wrong magic, version or
 * kind. */
int mca_btl_tcp_hello_unpack(const uint8_t in[MCA_BTL_TCP_HELLO_SIZE], mca_btl_tcp_hello_t *hello,
                             char *why, size_t why_size);

typedef enum {
    MCA_BTL_TCP_FRAME_AM = 1,
    MCA_BTL_TCP_FRAME_PUT = 2,
    MCA_BTL_TCP_FRAME_PUT_ACK = 3,
    MCA_BTL_TCP_FRAME_GET = 4,
    MCA_BTL_TCP_FRAME_GET_DATA = 5,
    MCA_BTL_TCP_FRAME_BYE = 6,
} mca_btl_tcp_frame_type_t;

#define MCA_BTL_TCP_FRAME_HDR   16
#define MCA_BTL_TCP_RDMA_TARGET 24

/* Why an owner refused a put or get (the status of its reply). */
enum {
    MCA_BTL_TCP_STATUS_OK = 0,
    MCA_BTL_TCP_STATUS_NO_REGION = 1, /* the key names no registration */
    MCA_BTL_TCP_STATUS_BOUNDS = 2,    /* the range leaves the region */
    MCA_BTL_TCP_STATUS_ACCESS = 3,    /* the region forbids it */
};

/* What a status means, for messages. */
const char *mca_btl_tcp_status_string(unsigned status);

typedef struct mca_btl_tcp_frame_t {
    uint32_t len;
    uint8_t type;
    uint8_t tag;
    uint16_t status;
    uint64_t id;
} mca_btl_tcp_frame_t;

typedef struct mca_btl_tcp_target_t {
    uint64_t address;
    uint64_t key;
    uint64_t length;
} mca_btl_tcp_target_t;

static inline void mca_btl_tcp_put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t) v;
    p[1] = (uint8_t) (v >> 8);
}

static inline void mca_btl_tcp_put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; ++i) {
        p[i] = (uint8_t) (v >> (8 * i));
    }
}

static inline void mca_btl_tcp_put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; ++i) {
        p[i] = (uint8_t) (v >> (8 * i));
    }
}

static inline uint16_t mca_btl_tcp_get_u16(const uint8_t *p)
{
    return (uint16_t) (p[0] | (p[1] << 8));
}

static inline uint32_t mca_btl_tcp_get_u32(const uint8_t *p)
{
    return (uint32_t) p[0] | ((uint32_t) p[1] << 8) | ((uint32_t) p[2] << 16) |
           ((uint32_t) p[3] << 24);
}

static inline uint64_t mca_btl_tcp_get_u64(const uint8_t *p)
{
    return (uint64_t) mca_btl_tcp_get_u32(p) | ((uint64_t) mca_btl_tcp_get_u32(p + 4) << 32);
}

static inline void mca_btl_tcp_frame_pack(const mca_btl_tcp_frame_t *f,
                                          uint8_t out[MCA_BTL_TCP_FRAME_HDR])
{
    mca_btl_tcp_put_u32(out, f->len);
    out[4] = f->type;
    out[5] = f->tag;
    mca_btl_tcp_put_u16(out + 6, f->status);
    mca_btl_tcp_put_u64(out + 8, f->id);
}

static inline void mca_btl_tcp_frame_unpack(const uint8_t in[MCA_BTL_TCP_FRAME_HDR],
                                            mca_btl_tcp_frame_t *f)
{
    f->len = mca_btl_tcp_get_u32(in);
    f->type = in[4];
    f->tag = in[5];
    f->status = mca_btl_tcp_get_u16(in + 6);
    f->id = mca_btl_tcp_get_u64(in + 8);
}

static inline void mca_btl_tcp_target_pack(const mca_btl_tcp_target_t *t,
                                           uint8_t out[MCA_BTL_TCP_RDMA_TARGET])
{
    mca_btl_tcp_put_u64(out, t->address);
    mca_btl_tcp_put_u64(out + 8, t->key);
    mca_btl_tcp_put_u64(out + 16, t->length);
}

static inline void mca_btl_tcp_target_unpack(const uint8_t in[MCA_BTL_TCP_RDMA_TARGET],
                                             mca_btl_tcp_target_t *t)
{
    t->address = mca_btl_tcp_get_u64(in);
    t->key = mca_btl_tcp_get_u64(in + 8);
    t->length = mca_btl_tcp_get_u64(in + 16);
}

/* Checks a received frame header against the receiver's limits: a known
 * type, a tag only on an AM, an AM of at most max_am bytes, a PUT of 24 + at most max_rdma
 * bytes, a GET of exactly 24, GET_DATA of at most max_rdma, PUT_ACK and
 * BYE empty, status 0 where there is none. OPAL_ERR_BAD_VALUE, with why
 * filled, otherwise. */
int mca_btl_tcp_frame_check(const mca_btl_tcp_frame_t *f, size_t max_am, size_t max_rdma, char *why,
                            size_t why_size);

/* Checks a PUT's or GET's target: length fits max_rdma, the range does not
 * wrap, and for a PUT the frame's len is 24 + length. */
int mca_btl_tcp_target_check(const mca_btl_tcp_frame_t *f, const mca_btl_tcp_target_t *t,
                             size_t max_rdma, char *why, size_t why_size);

#endif /* OPAL_MCA_BTL_TCP_BTL_TCP_WIRE_H */
