/*
 * btl/verbs's modex record: what a process publishes about its ports (one
 * module each) and their queue pairs, one per peer rank and port, so that
 * a peer can bring up the RC connection between a pair of ports without
 * any other exchange.
 *
 * Layout (little-endian, written and read with opal_cursor):
 *   u32 magic "VRBS", u16 version, u8 kind
 *   kind 1 (address):
 *     u32 pid, u64 pid space (opal_pid_space(): peers whose own is the
 *     same check that the pid still runs; 0: none do), u32
 *     count (the job's size), u8 ports (1..MCA_BTL_VERBS_MODEX_PORTS_MAX),
 *     then per port, sorted by device name and port number:
 *       u8 name length (1..63), the device's name (letters, digits, '_',
 *       '-', '.'), u8 port number (1..255), u8 link layer (1 InfiniBand,
 *       2 Ethernet), u8 active MTU (1..5, the IBV_MTU_* enum), u16 LID,
 *       16 bytes GID, u8 prefix (bits of the IPv4 network of a RoCE GID
 *       that is an IPv4 address, 0..32, 0: unknown; 0 otherwise), u32 PSN
 *       (24 bits), count x u32 QPN (24 bits; the one at the publisher's
 *       own rank is 0, every other is not)
 *   kind 0 (declined): u32 length, the reason's bytes (no NUL): peers say
 *     why instead of waiting for an address that will not come
 *
 * Which port of a peer a port talks to (mca_btl_verbs_modex_pair): ports
 * are on one subnet when their link layers agree and their GIDs share the
 * subnet prefix (InfiniBand, IPv6 RoCE: the first 64 bits; IPv4 RoCE: the
 * network of the shorter prefix of the two, any when one is unknown). The
 * k-th port of a record on a subnet pairs with the k-th port of the
 * peer's record on that subnet, so that the pairing is the same seen from
 * both ends.
 *
 * Free of rdma-core types so that the fuzz target builds everywhere.
 */
#ifndef OPAL_MCA_BTL_VERBS_BTL_VERBS_MODEX_H
#define OPAL_MCA_BTL_VERBS_BTL_VERBS_MODEX_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MCA_BTL_VERBS_MODEX_KEY       "btl.verbs.addr"
#define MCA_BTL_VERBS_MODEX_MAGIC     0x53425256u /* "VRBS" */
#define MCA_BTL_VERBS_MODEX_VERSION   3
#define MCA_BTL_VERBS_MODEX_PORTS_MAX 16
#define MCA_BTL_VERBS_MODEX_NAME_MAX  64 /* with its NUL */

enum {
    MCA_BTL_VERBS_LINK_IB = 1,
    MCA_BTL_VERBS_LINK_ETHERNET = 2,
};

typedef struct mca_btl_verbs_modex_port_t {
    char name[MCA_BTL_VERBS_MODEX_NAME_MAX];
    uint8_t port;
    uint8_t link_layer;
    uint8_t mtu;
    uint16_t lid;
    uint8_t gid[16];
    uint8_t prefix;
    uint32_t psn;
    /* Decoded: points into the record (count entries, little-endian). */
    const uint8_t *qpns;
} mca_btl_verbs_modex_port_t;

typedef struct mca_btl_verbs_modex_t {
    uint32_t pid;
    uint64_t pid_space;
    uint32_t count;
    uint8_t nports;
    mca_btl_verbs_modex_port_t ports[MCA_BTL_VERBS_MODEX_PORTS_MAX];
} mca_btl_verbs_modex_t;

/* Encodes m (qpn_arrays[i]: count host-order QPNs of port i; its qpns
 * pointers are not read) into a malloc'd *blob. OPAL_SUCCESS,
 * OPAL_ERR_BAD_PARAM (no port, too many, a name too long) or
 * OPAL_ERR_OUT_OF_RESOURCE. */
int mca_btl_verbs_modex_pack(const mca_btl_verbs_modex_t *m, const uint32_t *const *qpn_arrays,
                             void **blob, size_t *size);

/* Encodes a decline with its reason into a malloc'd *blob. */
int mca_btl_verbs_modex_pack_declined(const char *reason, void **blob, size_t *size);

/* Decodes what rank owner published, for a job of job_size ranks.
 * OPAL_SUCCESS with *m filled (its ports' qpns point into blob);
 * OPAL_ERR_NOT_AVAILABLE when the owner declined (its reason in why);
 * OPAL_ERR_BAD_VALUE when the record is malformed (what is wrong in why).
 * Never reads past size. */
int mca_btl_verbs_modex_unpack(const void *blob, size_t size, uint32_t owner, uint32_t job_size,
                               mca_btl_verbs_modex_t *m, char *why, size_t why_size);

/* The QPN the owner's port created for rank (after a successful unpack). */
uint32_t mca_btl_verbs_modex_qpn(const mca_btl_verbs_modex_port_t *p, uint32_t rank);

/* Whether two ports are on one subnet (see above). */
bool mca_btl_verbs_modex_same_subnet(const mca_btl_verbs_modex_port_t *a,
                                     const mca_btl_verbs_modex_port_t *b);

/* The index of the peer's port that own's port mine pairs with, or -1
 * with why ("rank's ports: ..." is for the caller to add). */
int mca_btl_verbs_modex_pair(const mca_btl_verbs_modex_t *own, unsigned mine,
                             const mca_btl_verbs_modex_t *peer, char *why, size_t why_size);

/* Whether gid is an IPv4-mapped IPv6 address (::ffff:a.b.c.d). */
bool mca_btl_verbs_gid_is_ipv4(const uint8_t gid[16]);

/* The GID as text ("::ffff:10.99.0.2" or eight hex groups). */
void mca_btl_verbs_gid_string(const uint8_t gid[16], char *buf, size_t size);

#endif /* OPAL_MCA_BTL_VERBS_BTL_VERBS_MODEX_H */
