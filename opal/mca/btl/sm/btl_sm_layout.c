/*
 * btl/sm: the checks that need no process state, so that unit tests can
 * run them alone: who a peer is (identity), what a segment is called,
 * whether a peer's segment layout fits its mapping, and whether its
 * request to share a put / get makes sense.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/mca/btl/sm/btl_sm_fbox.h"
#include "opal/mca/btl/sm/btl_sm_fifo.h"
#include "opal/mca/btl/sm/btl_sm_layout.h"
#include "opal/util/opal_error.h"

/* What mcarun hands every rank: the prefix of the shared-memory files it
 * removes when the job ends (orte/util/orte_launcher_env.h; opal does
 * not include orte). */
#define SM_SHM_PREFIX_ENV "OPAL_ORTE_SHM_PREFIX"

static bool is_pow2(uint64_t v)
{
    return 0 != v && 0 == (v & (v - 1));
}

/* --------------------------------------------------------------- modex */

int mca_btl_sm_modex_check(const void *value, size_t size, sm_modex_t *modex, char *why,
                           size_t why_size)
{
    if (sizeof(*modex) != size) {
        snprintf(why, why_size, "peer published a malformed sm record (%zu bytes, not %zu)", size,
                 sizeof(*modex));
        return OPAL_ERR_UNREACH;
    }
    memcpy(modex, value, sizeof(*modex));
    const char *name = modex->seg_name;
    if (SM_MODEX_MAGIC != modex->magic || SM_LAYOUT_VERSION != modex->version ||
        NULL == memchr(name, '\0', sizeof(modex->seg_name)) || '/' != name[0] ||
        NULL != strchr(name + 1, '/') || '\0' == name[1] || modex->pid <= 0 ||
        NULL == memchr(modex->identity.boot_id, '\0', sizeof(modex->identity.boot_id))) {
        snprintf(why, why_size, "peer published a malformed sm record (version %u)",
                 modex->version);
        return OPAL_ERR_UNREACH;
    }
    return OPAL_SUCCESS;
}

/* ------------------------------------------------------------ identity */

static void read_boot_id(char *id, size_t size)
{
    id[0] = '\0';
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (NULL == f) {
        return;
    }
    if (NULL == fgets(id, (int) size, f)) {
        id[0] = '\0';
    }
    fclose(f);
    id[strcspn(id, "\n")] = '\0';
}

int mca_btl_sm_identity_get(sm_identity_t *identity)
{
    memset(identity, 0, sizeof(*identity));
    read_boot_id(identity->boot_id, sizeof(identity->boot_id));
    struct stat st;
    if (0 == stat("/dev/shm", &st)) {
        identity->shm_dev = (uint64_t) st.st_dev;
        identity->shm_ino = (uint64_t) st.st_ino;
    }
    if (0 == stat("/proc/self/ns/pid", &st)) {
        identity->pidns_dev = (uint64_t) st.st_dev;
        identity->pidns_ino = (uint64_t) st.st_ino;
    }
    identity->uid = (uint32_t) geteuid();
    return OPAL_SUCCESS;
}

const char *mca_btl_sm_identity_compare(const sm_identity_t *mine, const sm_identity_t *peer)
{
    if (0 != strncmp(mine->boot_id, peer->boot_id, sizeof(mine->boot_id))) {
        return "peer is on another node (another boot id)";
    }
    if (mine->shm_dev != peer->shm_dev || mine->shm_ino != peer->shm_ino) {
        return "peer does not share this /dev/shm (another mount namespace or container)";
    }
    if (mine->pidns_dev != peer->pidns_dev || mine->pidns_ino != peer->pidns_ino) {
        return "peer is in another pid namespace";
    }
    if (mine->uid != peer->uid) {
        return "peer runs as another user";
    }
    return NULL;
}

/* -------------------------------------------------------------- naming */

int mca_btl_sm_segment_name(uint32_t jobid, uint32_t rank, char *name, size_t size)
{
    char own[64];
    const char *prefix = getenv(SM_SHM_PREFIX_ENV);
    /* A prefix must be a plain file name part: anything else is not
     * mcarun's, and the name is built here the way mcarun builds it. */
    if (NULL == prefix || '\0' == prefix[0] || NULL != strchr(prefix, '/') || strlen(prefix) > 64) {
        snprintf(own, sizeof(own), "opal-mca.%lu.%lu.", (unsigned long) geteuid(),
                 (unsigned long) jobid);
        prefix = own;
    }
    int n = snprintf(name, size, "/%sbtl_sm.%" PRIu32, prefix, rank);
    return (n < 0 || (size_t) n >= size) ? OPAL_ERR_BAD_PARAM : OPAL_SUCCESS;
}

int mca_btl_sm_layout_check(const sm_layout_t *l, size_t mapped, char *why, size_t why_size)
{
    const char *bad = NULL;
    /* Every product below is of a count < 2^16 and a stride < 2^30, and
     * every offset is < 2^34: nothing overflows 64 bits. */
    if (l->seg_size != mapped || l->seg_size > SM_MAX_SEGMENT) {
        bad = "segment size differs from the file's";
    } else if (!is_pow2(l->fifo_slots) || l->fifo_slots < 2 || l->fifo_slots > SM_FIFO_MAX_SLOTS) {
        bad = "FIFO size is not a power of two in range";
    } else if (l->fifo_offset < sizeof(sm_seg_header_t) || 0 != l->fifo_offset % 8 ||
               l->fifo_offset > SM_MAX_SEGMENT ||
               l->fifo_offset + (uint64_t) l->fifo_slots * 8 > l->seg_size) {
        bad = "FIFO outside the segment";
    } else if ((uint64_t) l->eager_count + l->max_count > SM_MAX_FRAGS ||
               l->eager_stride < SM_FRAG_HDR_SIZE || l->max_stride < SM_FRAG_HDR_SIZE ||
               l->eager_stride > SM_MAX_STRIDE || l->max_stride > SM_MAX_STRIDE ||
               0 != l->eager_stride % OPAL_CACHE_LINE_SIZE ||
               0 != l->max_stride % OPAL_CACHE_LINE_SIZE) {
        bad = "fragment counts or sizes out of range";
    } else if (l->frag_offset > SM_MAX_SEGMENT || 0 != l->frag_offset % OPAL_CACHE_LINE_SIZE ||
               l->frag_offset + (uint64_t) l->eager_count * l->eager_stride +
                       (uint64_t) l->max_count * l->max_stride >
                   l->seg_size) {
        bad = "fragments outside the segment";
    } else if (l->fbox_count > SM_MAX_FRAGS || l->fbox_stride > SM_MAX_STRIDE ||
               l->fbox_stride < SM_FBOX_CTL_SIZE + SM_FBOX_MIN_SIZE ||
               !is_pow2(l->fbox_stride - SM_FBOX_CTL_SIZE)) {
        bad = "fast-box size out of range";
    } else if (l->fbox_offset > SM_MAX_SEGMENT || 0 != l->fbox_offset % OPAL_CACHE_LINE_SIZE ||
               l->fbox_offset + (uint64_t) l->fbox_count * l->fbox_stride > l->seg_size) {
        bad = "fast boxes outside the segment";
    }
    if (NULL != bad) {
        snprintf(why, why_size, "%s", bad);
        return OPAL_ERR_BAD_VALUE;
    }
    return OPAL_SUCCESS;
}

/* ---------------------------------------------------------- shared rdma */

int mca_btl_sm_split_check(const sm_split_msg_t *msg, size_t len, sm_split_req_t *req, char *why,
                           size_t why_size)
{
    if (sizeof(*msg) != len) {
        snprintf(why, why_size, "%zu bytes, not %zu", len, sizeof(*msg));
        return OPAL_ERR_PROTOCOL;
    }
    uint32_t is_get = SM_READ_ONCE(msg->is_get);
    *req = (sm_split_req_t){.slices = SM_READ_ONCE(msg->slices),
                            .is_get = 1 == is_get,
                            .slice = SM_READ_ONCE(msg->slice),
                            .length = SM_READ_ONCE(msg->length),
                            .address = SM_READ_ONCE(msg->address),
                            .reg_address = SM_READ_ONCE(msg->reg_address),
                            .reg_cookie = SM_READ_ONCE(msg->reg_cookie),
                            .reg_index = SM_READ_ONCE(msg->reg_index)};
    if (is_get > 1) {
        snprintf(why, why_size, "direction %" PRIu32 " is neither put (0) nor get (1)", is_get);
    } else if (req->slices < 2 || req->slices > SM_SPLIT_MAX_SLICES) {
        snprintf(why, why_size, "%" PRIu32 " slices (2 to %u)", req->slices,
                 (unsigned) SM_SPLIT_MAX_SLICES);
    } else if (0 == req->slice || req->slice > req->length ||
               req->slice > UINT64_MAX / req->slices ||
               (uint64_t) req->slices * req->slice < req->length ||
               (uint64_t) (req->slices - 1) * req->slice >= req->length) {
        snprintf(why, why_size, "%" PRIu32 " slices of %" PRIu64 " bytes do not cut %" PRIu64,
                 req->slices, req->slice, req->length);
    } else if (req->address > UINT64_MAX - req->length ||
               req->reg_address > UINT64_MAX - req->length) {
        snprintf(why, why_size, "%" PRIu64 " bytes at 0x%" PRIx64 " or 0x%" PRIx64 " wrap around",
                 req->length, req->address, req->reg_address);
    } else {
        return OPAL_SUCCESS;
    }
    return OPAL_ERR_PROTOCOL;
}
