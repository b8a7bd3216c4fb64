/*
 * btl/verbs's modex record (see btl_verbs_modex.h): written and read
 * through opal_cursor, every field checked before use; which port of a
 * peer each of this process's ports talks to.
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

static bool name_ok(const char *name, size_t len)
{
    if (0 == len || len >= MCA_BTL_VERBS_MODEX_NAME_MAX) {
        return false;
    }
    for (size_t i = 0; i < len; ++i) {
        char ch = name[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              '_' == ch || '-' == ch || '.' == ch)) {
            return false;
        }
    }
    return true;
}

int mca_btl_verbs_modex_pack(const mca_btl_verbs_modex_t *m, const uint32_t *const *qpn_arrays,
                             void **blob, size_t *size)
{
    if (0 == m->nports || m->nports > MCA_BTL_VERBS_MODEX_PORTS_MAX) {
        return OPAL_ERR_BAD_PARAM;
    }
    size_t n = 4 + 2 + 1 + 4 + 8 + 4 + 1;
    for (unsigned i = 0; i < m->nports; ++i) {
        size_t len = strnlen(m->ports[i].name, MCA_BTL_VERBS_MODEX_NAME_MAX);
        if (!name_ok(m->ports[i].name, len)) {
            return OPAL_ERR_BAD_PARAM;
        }
        n += 1 + len + 1 + 1 + 1 + 2 + 16 + 1 + 4 + (size_t) m->count * 4;
    }
    uint8_t *buf = malloc(n);
    if (NULL == buf) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    opal_cursor_t c;
    opal_cursor_init_write(&c, buf, n);
    opal_cursor_put_u32(&c, MCA_BTL_VERBS_MODEX_MAGIC);
    opal_cursor_put_u16(&c, MCA_BTL_VERBS_MODEX_VERSION);
    opal_cursor_put_u8(&c, KIND_ADDRESS);
    opal_cursor_put_u32(&c, m->pid);
    opal_cursor_put_u64(&c, m->pid_space);
    opal_cursor_put_u32(&c, m->count);
    opal_cursor_put_u8(&c, m->nports);
    for (unsigned i = 0; i < m->nports; ++i) {
        const mca_btl_verbs_modex_port_t *p = &m->ports[i];
        size_t len = strlen(p->name);
        opal_cursor_put_u8(&c, (uint8_t) len);
        opal_cursor_put_bytes(&c, p->name, len);
        opal_cursor_put_u8(&c, p->port);
        opal_cursor_put_u8(&c, p->link_layer);
        opal_cursor_put_u8(&c, p->mtu);
        opal_cursor_put_u16(&c, p->lid);
        opal_cursor_put_bytes(&c, p->gid, 16);
        opal_cursor_put_u8(&c, p->prefix);
        opal_cursor_put_u32(&c, p->psn);
        for (uint32_t r = 0; r < m->count; ++r) {
            opal_cursor_put_u32(&c, qpn_arrays[i][r]);
        }
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
    m->pid = opal_cursor_get_u32(&c);
    m->pid_space = opal_cursor_get_u64(&c);
    m->count = opal_cursor_get_u32(&c);
    m->nports = opal_cursor_get_u8(&c);
    if (!opal_cursor_ok(&c)) {
        return refuse(why, why_size, "address record of %zu bytes is cut short", size);
    }
    if (0 == m->pid || m->pid > INT32_MAX) {
        return refuse(why, why_size, "pid %u is not a process id", (unsigned) m->pid);
    }
    if (m->count != job_size) {
        return refuse(why, why_size, "%u queue pair numbers per port for a job of %u ranks",
                      (unsigned) m->count, (unsigned) job_size);
    }
    if (0 == m->nports || m->nports > MCA_BTL_VERBS_MODEX_PORTS_MAX) {
        return refuse(why, why_size, "%u ports (1..%d)", (unsigned) m->nports,
                      MCA_BTL_VERBS_MODEX_PORTS_MAX);
    }
    for (unsigned i = 0; i < m->nports; ++i) {
        mca_btl_verbs_modex_port_t *p = &m->ports[i];
        uint8_t len = opal_cursor_get_u8(&c);
        const char *name = opal_cursor_get_ptr(&c, len);
        if (!opal_cursor_ok(&c)) {
            return refuse(why, why_size, "port %u: cut short in its device name", i);
        }
        if (NULL == name || !name_ok(name, len)) {
            return refuse(why, why_size, "port %u: device name of %u bytes is not a device's name",
                          i, (unsigned) len);
        }
        memcpy(p->name, name, len);
        p->name[len] = '\0';
        p->port = opal_cursor_get_u8(&c);
        p->link_layer = opal_cursor_get_u8(&c);
        p->mtu = opal_cursor_get_u8(&c);
        p->lid = opal_cursor_get_u16(&c);
        opal_cursor_get_bytes(&c, p->gid, 16);
        p->prefix = opal_cursor_get_u8(&c);
        p->psn = opal_cursor_get_u32(&c);
        if (!opal_cursor_ok(&c)) {
            return refuse(why, why_size, "port %u (%s): cut short", i, p->name);
        }
        if (0 == p->port) {
            return refuse(why, why_size, "port %u (%s): port number 0", i, p->name);
        }
        for (unsigned j = 0; j < i; ++j) {
            if (0 == strcmp(m->ports[j].name, p->name) && m->ports[j].port == p->port) {
                return refuse(why, why_size, "%s:%u is listed twice", p->name, (unsigned) p->port);
            }
        }
        if (MCA_BTL_VERBS_LINK_IB != p->link_layer &&
            MCA_BTL_VERBS_LINK_ETHERNET != p->link_layer) {
            return refuse(why, why_size, "%s:%u: unknown link layer %u", p->name,
                          (unsigned) p->port, (unsigned) p->link_layer);
        }
        if (p->mtu < 1 || p->mtu > 5) {
            return refuse(why, why_size, "%s:%u: MTU code %u is not one of 1..5 (256..4096 bytes)",
                          p->name, (unsigned) p->port, (unsigned) p->mtu);
        }
        if (p->prefix > 32) {
            return refuse(why, why_size, "%s:%u: IPv4 prefix of %u bits", p->name,
                          (unsigned) p->port, (unsigned) p->prefix);
        }
        if (p->psn > QPN_MASK) {
            return refuse(why, why_size, "%s:%u: PSN 0x%x has more than 24 bits", p->name,
                          (unsigned) p->port, (unsigned) p->psn);
        }
        if (MCA_BTL_VERBS_LINK_IB == p->link_layer && 0 == p->lid) {
            return refuse(why, why_size, "%s:%u: InfiniBand port without a LID", p->name,
                          (unsigned) p->port);
        }
        if (opal_cursor_left(&c) < (size_t) m->count * 4) {
            return refuse(why, why_size, "%s:%u: %zu bytes of queue pair numbers, %zu expected",
                          p->name, (unsigned) p->port, opal_cursor_left(&c), (size_t) m->count * 4);
        }
        p->qpns = opal_cursor_get_ptr(&c, (size_t) m->count * 4);
        for (uint32_t r = 0; r < m->count; ++r) {
            uint32_t qpn = mca_btl_verbs_modex_qpn(p, r);
            if (qpn > QPN_MASK || (r == owner) != (0 == qpn)) {
                return refuse(why, why_size, "%s:%u: queue pair number 0x%x for rank %u is invalid",
                              p->name, (unsigned) p->port, (unsigned) qpn, (unsigned) r);
            }
        }
    }
    if (0 != opal_cursor_left(&c)) {
        return refuse(why, why_size, "%zu bytes after the last port", opal_cursor_left(&c));
    }
    return OPAL_SUCCESS;
}

uint32_t mca_btl_verbs_modex_qpn(const mca_btl_verbs_modex_port_t *port, uint32_t rank)
{
    const uint8_t *p = port->qpns + (size_t) rank * 4;
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

bool mca_btl_verbs_modex_same_subnet(const mca_btl_verbs_modex_port_t *a,
                                     const mca_btl_verbs_modex_port_t *b)
{
    if (a->link_layer != b->link_layer) {
        return false;
    }
    bool a4 = mca_btl_verbs_gid_is_ipv4(a->gid), b4 = mca_btl_verbs_gid_is_ipv4(b->gid);
    if (MCA_BTL_VERBS_LINK_ETHERNET == a->link_layer && (a4 || b4)) {
        if (a4 != b4) {
            return false;
        }
        unsigned bits = a->prefix < b->prefix ? a->prefix : b->prefix;
        uint32_t x = (uint32_t) a->gid[12] << 24 | (uint32_t) a->gid[13] << 16 |
                     (uint32_t) a->gid[14] << 8 | a->gid[15];
        uint32_t y = (uint32_t) b->gid[12] << 24 | (uint32_t) b->gid[13] << 16 |
                     (uint32_t) b->gid[14] << 8 | b->gid[15];
        uint32_t mask = 0 == bits ? 0 : ~(uint32_t) 0 << (32 - bits);
        return (x & mask) == (y & mask);
    }
    return 0 == memcmp(a->gid, b->gid, 8);
}

int mca_btl_verbs_modex_pair(const mca_btl_verbs_modex_t *own, unsigned mine,
                             const mca_btl_verbs_modex_t *peer, char *why, size_t why_size)
{
    const mca_btl_verbs_modex_port_t *me = &own->ports[mine];
    unsigned k = 0;
    for (unsigned i = 0; i < mine; ++i) {
        k += mca_btl_verbs_modex_same_subnet(&own->ports[i], me) ? 1 : 0;
    }
    unsigned seen = 0;
    for (unsigned i = 0; i < peer->nports; ++i) {
        if (mca_btl_verbs_modex_same_subnet(&peer->ports[i], me) && seen++ == k) {
            return (int) i;
        }
    }
    char gid[64];
    mca_btl_verbs_gid_string(me->gid, gid, sizeof(gid));
    if (0 == seen) {
        snprintf(why, why_size, "no port on the subnet of %s:%u (GID %s%s)", me->name,
                 (unsigned) me->port, gid,
                 MCA_BTL_VERBS_LINK_IB == me->link_layer ? ", InfiniBand" : "");
    } else {
        snprintf(why, why_size,
                 "%u port(s) on the subnet of %s:%u (GID %s), which is this process's port %u "
                 "there",
                 seen, me->name, (unsigned) me->port, gid, k + 1);
    }
    return -1;
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
