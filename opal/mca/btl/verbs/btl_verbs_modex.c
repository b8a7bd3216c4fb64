/*
 * btl/verbs's modex record (see btl_verbs_modex.h): written and read
 * through opal_cursor, every field checked before use.
 */
#include "opal/mca/btl/verbs/btl_verbs_modex.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/opal_cursor.h"
#include "opal/util/opal_error.h"

#define KIND_DECLINED 0
#define KIND_ADDRESS  1
#define QPN_MASK      0xffffffu
/* A reason longer than this is cut (it is shown in one line). */
#define REASON_MAX 512

int mca_btl_verbs_modex_pack(const mca_btl_verbs_modex_t *m, const uint32_t *qpn_array, void **blob,
                             size_t *size)
{
    size_t n = 4 + 2 + 1 + 1 + 1 + 2 + 16 + 4 + 4 + 4 + (size_t) m->count * 4;
    uint8_t *buf = malloc(n);
    if (NULL == buf) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    opal_cursor_t c;
    opal_cursor_init_write(&c, buf, n);
    opal_cursor_put_u32(&c, MCA_BTL_VERBS_MODEX_MAGIC);
    opal_cursor_put_u16(&c, MCA_BTL_VERBS_MODEX_VERSION);
    opal_cursor_put_u8(&c, KIND_ADDRESS);
    opal_cursor_put_u8(&c, m->link_layer);
    opal_cursor_put_u8(&c, m->mtu);
    opal_cursor_put_u16(&c, m->lid);
    opal_cursor_put_bytes(&c, m->gid, 16);
    opal_cursor_put_u32(&c, m->psn);
    opal_cursor_put_u32(&c, m->pid);
    opal_cursor_put_u32(&c, m->count);
    for (uint32_t i = 0; i < m->count; ++i) {
        opal_cursor_put_u32(&c, qpn_array[i]);
    }
    if (!opal_cursor_done(&c)) {
        free(buf);
        return OPAL_ERROR;
    }
    *blob = buf;
    *size = n;
    return OPAL_SUCCESS;
}

int mca_btl_verbs_modex_pack_declined(const char *reason, void **blob, size_t *size)
{
    size_t len = strlen(reason);
    if (len > REASON_MAX) {
        len = REASON_MAX;
    }
    size_t n = 4 + 2 + 1 + 4 + len;
    uint8_t *buf = malloc(n);
    if (NULL == buf) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    opal_cursor_t c;
    opal_cursor_init_write(&c, buf, n);
    opal_cursor_put_u32(&c, MCA_BTL_VERBS_MODEX_MAGIC);
    opal_cursor_put_u16(&c, MCA_BTL_VERBS_MODEX_VERSION);
    opal_cursor_put_u8(&c, KIND_DECLINED);
    opal_cursor_put_blob(&c, reason, (uint32_t) len);
    if (!opal_cursor_done(&c)) {
        free(buf);
        return OPAL_ERROR;
    }
    *blob = buf;
    *size = n;
    return OPAL_SUCCESS;
}

static int refuse(char *why, size_t why_size, const char *format, ...) OPAL_PRINTF_LIKE(3, 4);
static int refuse(char *why, size_t why_size, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    (void) vsnprintf(why, why_size, format, ap);
    va_end(ap);
    return OPAL_ERR_BAD_VALUE;
}

int mca_btl_verbs_modex_unpack(const void *blob, size_t size, uint32_t owner, uint32_t job_size,
                               mca_btl_verbs_modex_t *m, char *why, size_t why_size)
{
    opal_cursor_t c;
    opal_cursor_init_read(&c, blob, size);
    uint32_t magic = opal_cursor_get_u32(&c);
    uint16_t version = opal_cursor_get_u16(&c);
    uint8_t kind = opal_cursor_get_u8(&c);
    if (!opal_cursor_ok(&c)) {
        return refuse(why, why_size, "record of %zu bytes is too short for its header", size);
    }
    if (MCA_BTL_VERBS_MODEX_MAGIC != magic) {
        return refuse(why, why_size, "record does not start with btl/verbs's magic (0x%08x)",
                      (unsigned) magic);
    }
    if (MCA_BTL_VERBS_MODEX_VERSION != version) {
        return refuse(why, why_size, "record version %u, this process reads version %u",
                      (unsigned) version, (unsigned) MCA_BTL_VERBS_MODEX_VERSION);
    }
    if (KIND_DECLINED == kind) {
        uint32_t len = 0;
        const char *text = opal_cursor_get_blob(&c, &len, REASON_MAX);
        if (!opal_cursor_done(&c)) {
            return refuse(why, why_size, "decline record with a bad reason length");
        }
        int n = (int) (len < why_size ? len : why_size - 1);
        snprintf(why, why_size, "%.*s", n, NULL != text ? text : "");
        return OPAL_ERR_NOT_AVAILABLE;
    }
    if (KIND_ADDRESS != kind) {
        return refuse(why, why_size, "record of unknown kind %u", (unsigned) kind);
    }
    m->link_layer = opal_cursor_get_u8(&c);
    m->mtu = opal_cursor_get_u8(&c);
    m->lid = opal_cursor_get_u16(&c);
    opal_cursor_get_bytes(&c, m->gid, 16);
    m->psn = opal_cursor_get_u32(&c);
    m->pid = opal_cursor_get_u32(&c);
    m->count = opal_cursor_get_u32(&c);
    if (!opal_cursor_ok(&c)) {
        return refuse(why, why_size, "address record of %zu bytes is cut short", size);
    }
    if (MCA_BTL_VERBS_LINK_IB != m->link_layer && MCA_BTL_VERBS_LINK_ETHERNET != m->link_layer) {
        return refuse(why, why_size, "unknown link layer %u", (unsigned) m->link_layer);
    }
    if (m->mtu < 1 || m->mtu > 5) {
        return refuse(why, why_size, "MTU code %u is not one of 1..5 (256..4096 bytes)",
                      (unsigned) m->mtu);
    }
    if (m->psn > QPN_MASK) {
        return refuse(why, why_size, "PSN 0x%x has more than 24 bits", (unsigned) m->psn);
    }
    if (0 == m->pid || m->pid > INT32_MAX) {
        return refuse(why, why_size, "pid %u is not a process id", (unsigned) m->pid);
    }
    if (m->count != job_size) {
        return refuse(why, why_size, "%u queue pair numbers for a job of %u ranks",
                      (unsigned) m->count, (unsigned) job_size);
    }
    if (opal_cursor_left(&c) != (size_t) m->count * 4) {
        return refuse(why, why_size, "%zu bytes of queue pair numbers, %zu expected",
                      opal_cursor_left(&c), (size_t) m->count * 4);
    }
    m->qpns = opal_cursor_get_ptr(&c, (size_t) m->count * 4);
    for (uint32_t i = 0; i < m->count; ++i) {
        uint32_t qpn = mca_btl_verbs_modex_qpn(m, i);
        if (qpn > QPN_MASK || (i == owner) != (0 == qpn)) {
            return refuse(why, why_size, "queue pair number 0x%x for rank %u is invalid",
                          (unsigned) qpn, (unsigned) i);
        }
    }
    if (MCA_BTL_VERBS_LINK_IB == m->link_layer && 0 == m->lid) {
        return refuse(why, why_size, "InfiniBand port without a LID");
    }
    return OPAL_SUCCESS;
}

uint32_t mca_btl_verbs_modex_qpn(const mca_btl_verbs_modex_t *m, uint32_t rank)
{
    const uint8_t *p = m->qpns + (size_t) rank * 4;
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

bool mca_btl_verbs_gid_is_ipv4(const uint8_t gid[16])
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return 0 == memcmp(gid, prefix, sizeof(prefix));
}

void mca_btl_verbs_gid_string(const uint8_t gid[16], char *buf, size_t size)
{
    if (mca_btl_verbs_gid_is_ipv4(gid)) {
        snprintf(buf, size, "::ffff:%u.%u.%u.%u", gid[12], gid[13], gid[14], gid[15]);
        return;
    }
    snprintf(buf, size, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x",
             gid[0], gid[1], gid[2], gid[3], gid[4], gid[5], gid[6], gid[7], gid[8], gid[9],
             gid[10], gid[11], gid[12], gid[13], gid[14], gid[15]);
}
