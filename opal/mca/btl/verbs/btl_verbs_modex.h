/*
 * btl/verbs's modex record: what a process publishes about its port and
 * its queue pairs, one per peer rank, so that a peer can bring up the RC
 * connection between them without any other exchange.
 *
 * Layout (little-endian, written and read with opal_cursor):
 *   u32 magic "VRBS", u16 version, u8 kind
 *   kind 1 (address):
 *     u8 link layer (1 InfiniBand, 2 Ethernet), u8 active MTU (1..5, the
 *     IBV_MTU_* enum), u16 LID, 16 bytes GID, u32 PSN (24 bits), u32
 *     pid (peers on the same node check that it still runs), u32 count (the job's size), count x
 * u32 QPN (24 bits; the one at the publisher's own rank is 0, every other is not) kind 0
 * (declined): u32 length, the reason's bytes (no NUL): peers say why instead of waiting for an
 * address that will not come
 *
 * Free of rdma-core types so that the fuzz target builds everywhere.
 */
#ifndef OPAL_MCA_BTL_VERBS_BTL_VERBS_MODEX_H
#define OPAL_MCA_BTL_VERBS_BTL_VERBS_MODEX_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MCA_BTL_VERBS_MODEX_KEY     "btl.verbs.addr"
#define MCA_BTL_VERBS_MODEX_MAGIC   0x53425256u /* "VRBS" */
#define MCA_BTL_VERBS_MODEX_VERSION 1

enum {
    MCA_BTL_VERBS_LINK_IB = 1,
    MCA_BTL_VERBS_LINK_ETHERNET = 2,
};

typedef struct mca_btl_verbs_modex_t {
    uint8_t link_layer;
    uint8_t mtu;
    uint16_t lid;
    uint8_t gid[16];
    uint32_t psn;
    uint32_t pid;
    uint32_t count;
    /* Points into the decoded buffer (count entries, little-endian). */
    const uint8_t *qpns;
} mca_btl_verbs_modex_t;

/* Encodes m (qpn_array: count host-order QPNs) into a malloc'd *blob.
 * OPAL_SUCCESS or OPAL_ERR_OUT_OF_RESOURCE. */
int mca_btl_verbs_modex_pack(const mca_btl_verbs_modex_t *m, const uint32_t *qpn_array, void **blob,
                             size_t *size);

/* Encodes a decline with its reason into a malloc'd *blob. */
int mca_btl_verbs_modex_pack_declined(const char *reason, void **blob, size_t *size);

/* Decodes what rank owner published, for a job of job_size ranks.
 * OPAL_SUCCESS with *m filled (m->qpns points into blob);
 * OPAL_ERR_NOT_AVAILABLE when the owner declined (its reason in why);
 * OPAL_ERR_BAD_VALUE when the record is malformed (what is wrong in why).
 * Never reads past size. */
int mca_btl_verbs_modex_unpack(const void *blob, size_t size, uint32_t owner, uint32_t job_size,
                               mca_btl_verbs_modex_t *m, char *why, size_t why_size);

/* The QPN the owner created for rank (after a successful unpack). */
uint32_t mca_btl_verbs_modex_qpn(const mca_btl_verbs_modex_t *m, uint32_t rank);

/* Whether gid is an IPv4-mapped IPv6 address (::ffff:a.b.c.d). */
bool mca_btl_verbs_gid_is_ipv4(const uint8_t gid[16]);

/* The GID as text ("::ffff:10.99.0.2" or eight hex groups). */
void mca_btl_verbs_gid_string(const uint8_t gid[16], char *buf, size_t size);

#endif /* OPAL_MCA_BTL_VERBS_BTL_VERBS_MODEX_H */
