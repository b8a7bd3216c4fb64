/*
 * Addresses: one object per distinct provider address, in a hash table
 * of the class (so that the sender named by an unexpected message's
 * header is found again without touching the AV), and their URIs.
 *
 * An address no one holds (users, operations in flight, kept messages)
 * stays in the table and the AV, idle, so that a peer that talks again
 * is not inserted again; the class keeps the na_ofi_addr_cache most
 * recently idle ones and drops older ones from the AV (fi_av_remove).
 * A server that outlives many clients so holds what its live and recent
 * clients need, not one entry for every client it ever had.
 *
 * URI component part (what follows "ofi+<protocol>://"):
 *   FI_SOCKADDR_IN    a.b.c.d:port
 *   FI_SOCKADDR_IN6   [v6]:port
 *   FI_ADDR_STR       the provider's string without its scheme (shm:
 *                     "fi_shm://1234:1000:0" is "1234:1000:0")
 *   other formats     "x" and the address bytes in hex
 * Serialized (inside the base's blob header): u16 length, then the
 * provider's address bytes.
 */
#include "opal/opal_config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/na/ofi/na_ofi.h"
#include "opal/util/opal_cursor.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"

static uint64_t hash_bytes(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

static void idle_unlink(na_ofi_class_t *oc, na_ofi_addr_t *a)
{
    if (NULL != a->idle_prev) {
        a->idle_prev->idle_next = a->idle_next;
    } else {
        oc->idle_head = a->idle_next;
    }
    if (NULL != a->idle_next) {
        a->idle_next->idle_prev = a->idle_prev;
    } else {
        oc->idle_tail = a->idle_prev;
    }
    a->idle_prev = a->idle_next = NULL;
    a->idle = false;
    --oc->idle_count;
}

int na_ofi_addr_get(na_ofi_class_t *oc, const void *addr, size_t len, na_ofi_addr_t **out)
{
    *out = NULL;
    if (0 == len || len > NA_OFI_ADDR_MAX) {
        return OPAL_ERR_BAD_PARAM;
    }
    /* One form per address, so that equal addresses hash equal: string
     * addresses without their NUL padding, IPv4 ones without sin_zero. */
    uint8_t norm[NA_OFI_ADDR_MAX];
    memcpy(norm, addr, len);
    if (FI_ADDR_STR == oc->ofi.info->addr_format) {
        const uint8_t *nul = memchr(norm, '\0', len);
        if (NULL != nul) {
            len = (size_t) (nul - norm) + 1;
        }
    } else if (sizeof(struct sockaddr_in) == len) {
        struct sockaddr_in sin;
        memcpy(&sin, norm, sizeof(sin));
        if (AF_INET == sin.sin_family) {
            memset(sin.sin_zero, 0, sizeof(sin.sin_zero));
            memcpy(norm, &sin, sizeof(sin));
        }
    }
    addr = norm;
    uint64_t h = hash_bytes(addr, len);
    na_ofi_addr_t **bucket = &oc->buckets[h % NA_OFI_ADDR_BUCKETS];
    for (na_ofi_addr_t *a = *bucket; NULL != a; a = a->hash_next) {
        if (a->hash == h && a->addrlen == len && 0 == memcmp(a->addr, addr, len)) {
            atomic_fetch_add_explicit(&a->refs, 1, memory_order_relaxed);
            if (a->idle) {
                idle_unlink(oc, a);
            }
            *out = a;
            return OPAL_SUCCESS;
        }
    }
    na_ofi_addr_t *a = calloc(1, sizeof(*a));
    if (NULL == a) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    a->hash = h;
    a->addrlen = (uint16_t) len;
    memcpy(a->addr, addr, len);
    atomic_init(&a->refs, 1);
    atomic_init(&a->failed, false);
    atomic_init(&a->talked, false);
    int n = fi_av_insert(oc->ofi.av, a->addr, 1, &a->fi_addr, 0, NULL);
    if (1 != n || FI_ADDR_NOTAVAIL == a->fi_addr) {
        opal_output(0, "na/ofi (%s): the provider refused a peer's address (fi_av_insert: %s)",
                    oc->ofi.prov_name, n < 0 ? fi_strerror(-n) : "not inserted");
        free(a);
        return OPAL_ERR_UNREACH;
    }
    a->hash_next = *bucket;
    *bucket = a;
    atomic_fetch_add_explicit(&mca_na_ofi_component.addresses, 1, memory_order_relaxed);
    *out = a;
    return OPAL_SUCCESS;
}

/* Takes the oldest idle address out of the table and the AV. */
static void evict_oldest(na_ofi_class_t *oc)
{
    na_ofi_addr_t *a = oc->idle_head;
    idle_unlink(oc, a);
    na_ofi_addr_t **link = &oc->buckets[a->hash % NA_OFI_ADDR_BUCKETS];
    while (*link != a) {
        link = &(*link)->hash_next;
    }
    *link = a->hash_next;
    int rc = fi_av_remove(oc->ofi.av, &a->fi_addr, 1, 0);
    if (0 != rc) {
        opal_output_verbose(1, opal_na_base_output,
                            "na/ofi (%s): fi_av_remove of an idle peer failed: %s",
                            oc->ofi.prov_name, fi_strerror(-rc));
    }
    free(a);
    atomic_fetch_sub_explicit(&mca_na_ofi_component.addresses, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&mca_na_ofi_component.addresses_evicted, 1, memory_order_relaxed);
}

void na_ofi_addr_release(na_ofi_class_t *oc, na_ofi_addr_t *a)
{
    int32_t was = atomic_fetch_sub_explicit(&a->refs, 1, memory_order_relaxed);
    if (was <= 0) {
        atomic_fetch_add_explicit(&a->refs, 1, memory_order_relaxed);
        opal_output(0, "na/ofi: an address was freed more often than it was taken");
        return;
    }
    if (1 != was || a->self) {
        return;
    }
    /* Newest idle at the tail. */
    a->idle = true;
    a->idle_next = NULL;
    a->idle_prev = oc->idle_tail;
    if (NULL != oc->idle_tail) {
        oc->idle_tail->idle_next = a;
    } else {
        oc->idle_head = a;
    }
    oc->idle_tail = a;
    ++oc->idle_count;
    const size_t keep =
        mca_na_ofi_component.addr_cache > 0 ? (size_t) mca_na_ofi_component.addr_cache : 0;
    while (oc->idle_count > keep) {
        evict_oldest(oc);
    }
}

void na_ofi_addr_table_free(na_ofi_class_t *oc)
{
    for (size_t b = 0; b < NA_OFI_ADDR_BUCKETS; ++b) {
        while (NULL != oc->buckets[b]) {
            na_ofi_addr_t *a = oc->buckets[b];
            oc->buckets[b] = a->hash_next;
            free(a);
            atomic_fetch_sub_explicit(&mca_na_ofi_component.addresses, 1, memory_order_relaxed);
        }
    }
    oc->idle_head = oc->idle_tail = NULL;
    oc->idle_count = 0;
}

/* ------------------------------------------------------------ URI text */

const char *na_ofi_addr_name(const na_ofi_class_t *oc, const na_ofi_addr_t *a, char *buf)
{
    size_t n = NA_OFI_ADDR_TEXT_MAX;
    if (OPAL_SUCCESS != na_ofi_addr_format(oc, a->addr, a->addrlen, buf, &n)) {
        strcpy(buf, "?");
    }
    return buf;
}

static void put_hex(char *out, const uint8_t *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; ++i) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * n] = '\0';
}

int na_ofi_addr_format(const na_ofi_class_t *oc, const uint8_t *addr, size_t len, char *buf,
                       size_t *size)
{
    char text[2 * NA_OFI_ADDR_MAX + 8];
    uint32_t format = oc->ofi.info->addr_format;
    if ((FI_SOCKADDR_IN == format || FI_SOCKADDR == format) && len == sizeof(struct sockaddr_in)) {
        struct sockaddr_in sin;
        memcpy(&sin, addr, sizeof(sin));
        char ip[INET_ADDRSTRLEN];
        if (AF_INET == sin.sin_family &&
            NULL != inet_ntop(AF_INET, &sin.sin_addr, ip, sizeof(ip))) {
            snprintf(text, sizeof(text), "%s:%u", ip, (unsigned) ntohs(sin.sin_port));
            goto done;
        }
    }
    if ((FI_SOCKADDR_IN6 == format || FI_SOCKADDR == format) &&
        len == sizeof(struct sockaddr_in6)) {
        struct sockaddr_in6 sin6;
        memcpy(&sin6, addr, sizeof(sin6));
        char ip[INET6_ADDRSTRLEN];
        if (AF_INET6 == sin6.sin6_family &&
            NULL != inet_ntop(AF_INET6, &sin6.sin6_addr, ip, sizeof(ip))) {
            snprintf(text, sizeof(text), "[%s]:%u", ip, (unsigned) ntohs(sin6.sin6_port));
            goto done;
        }
    }
    if (FI_ADDR_STR == format && NULL != memchr(addr, '\0', len)) {
        size_t skip = strlen(oc->str_scheme);
        const char *s = (const char *) addr;
        if (0 == strncmp(s, oc->str_scheme, skip)) {
            s += skip;
        }
        snprintf(text, sizeof(text), "%s", s);
        goto done;
    }
    text[0] = 'x';
    put_hex(text + 1, addr, len);
done:;
    size_t need = strlen(text) + 1;
    if (NULL == buf || *size < need) {
        *size = need;
        return OPAL_ERR_TRUNCATED;
    }
    memcpy(buf, text, need);
    *size = need;
    return OPAL_SUCCESS;
}

/* Reads a decimal port 0..65535 ending the string. */
static bool parse_port(const char *s, uint16_t *port)
{
    if ('\0' == *s || strlen(s) > 5 || strspn(s, "0123456789") != strlen(s)) {
        return false;
    }
    long v = strtol(s, NULL, 10);
    if (v > 65535) {
        return false;
    }
    *port = (uint16_t) v;
    return true;
}

int na_ofi_addr_parse(const na_ofi_class_t *oc, const char *uri, uint8_t *addr, size_t *len,
                      char *why, size_t why_size)
{
    uint32_t format = oc->ofi.info->addr_format;
    size_t n = strlen(uri);
    if (0 == n || n > 2 * NA_OFI_ADDR_MAX + 2) {
        snprintf(why, why_size, "%s", 0 == n ? "it is empty" : "it is too long");
        return OPAL_ERR_BAD_PARAM;
    }
    if ('x' == uri[0] && FI_ADDR_STR != format) {
        size_t digits = n - 1;
        if (0 != digits % 2 || digits / 2 > NA_OFI_ADDR_MAX ||
            strspn(uri + 1, "0123456789abcdef") != digits) {
            snprintf(why, why_size, "a hex address needs an even number of lowercase hex digits");
            return OPAL_ERR_BAD_PARAM;
        }
        for (size_t i = 0; i < digits / 2; ++i) {
            unsigned v;
            sscanf(uri + 1 + 2 * i, "%2x", &v);
            addr[i] = (uint8_t) v;
        }
        *len = digits / 2;
        return OPAL_SUCCESS;
    }
    if (FI_ADDR_STR == format) {
        int k = snprintf((char *) addr, NA_OFI_ADDR_MAX, "%s%s", oc->str_scheme, uri);
        if (k < 0 || (size_t) k >= NA_OFI_ADDR_MAX) {
            snprintf(why, why_size, "it is too long for an address");
            return OPAL_ERR_BAD_PARAM;
        }
        for (const char *p = uri; '\0' != *p; ++p) {
            if (!isprint((unsigned char) *p)) {
                snprintf(why, why_size, "it holds a non-printable byte");
                return OPAL_ERR_BAD_PARAM;
            }
        }
        *len = (size_t) k + 1;
        return OPAL_SUCCESS;
    }
    char host[INET6_ADDRSTRLEN + 2];
    const char *port_text;
    bool v6 = '[' == uri[0];
    if (v6) {
        const char *end = strchr(uri, ']');
        if (NULL == end || ':' != end[1] || (size_t) (end - uri - 1) >= sizeof(host)) {
            snprintf(why, why_size, "an IPv6 address is written [address]:port");
            return OPAL_ERR_BAD_PARAM;
        }
        memcpy(host, uri + 1, (size_t) (end - uri - 1));
        host[end - uri - 1] = '\0';
        port_text = end + 2;
    } else {
        const char *colon = strrchr(uri, ':');
        if (NULL == colon || (size_t) (colon - uri) >= sizeof(host)) {
            snprintf(why, why_size, "it is not address:port");
            return OPAL_ERR_BAD_PARAM;
        }
        memcpy(host, uri, (size_t) (colon - uri));
        host[colon - uri] = '\0';
        port_text = colon + 1;
    }
    uint16_t port;
    if (!parse_port(port_text, &port)) {
        snprintf(why, why_size, "port \"%.8s\" is not a number from 0 to 65535", port_text);
        return OPAL_ERR_BAD_PARAM;
    }
    if (!v6 && (FI_SOCKADDR_IN == format || FI_SOCKADDR == format)) {
        struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
        if (1 != inet_pton(AF_INET, host, &sin.sin_addr)) {
            snprintf(why, why_size, "\"%s\" is not an IPv4 address", host);
            return OPAL_ERR_BAD_PARAM;
        }
        memcpy(addr, &sin, sizeof(sin));
        *len = sizeof(sin);
        return OPAL_SUCCESS;
    }
    if (v6 && (FI_SOCKADDR_IN6 == format || FI_SOCKADDR == format)) {
        struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
        if (1 != inet_pton(AF_INET6, host, &sin6.sin6_addr)) {
            snprintf(why, why_size, "\"%s\" is not an IPv6 address", host);
            return OPAL_ERR_BAD_PARAM;
        }
        memcpy(addr, &sin6, sizeof(sin6));
        *len = sizeof(sin6);
        return OPAL_SUCCESS;
    }
    snprintf(why, why_size, "the provider's addresses are not %s", v6 ? "IPv6" : "IPv4");
    return OPAL_ERR_BAD_PARAM;
}

/* --------------------------------------------------------------- calls */

int na_ofi_addr_lookup(opal_na_class_t *cls, const char *uri, opal_na_addr_t **addr)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    uint8_t raw[NA_OFI_ADDR_MAX];
    size_t len = 0;
    char why[160];
    int rc = na_ofi_addr_parse(oc, uri, raw, &len, why, sizeof(why));
    if (OPAL_SUCCESS == rc) {
        rc = opal_common_ofi_addr_check(&oc->ofi, raw, len, why, sizeof(why));
        rc = OPAL_SUCCESS == rc ? rc : OPAL_ERR_BAD_PARAM;
    }
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "na/ofi: cannot look up \"%s://%s\": %s", cls->protocol, uri, why);
        return rc;
    }
    na_ofi_addr_t *a;
    OPAL_THREAD_LOCK(&oc->lock);
    rc = na_ofi_addr_get(oc, raw, len, &a);
    OPAL_THREAD_UNLOCK(&oc->lock);
    *addr = OPAL_SUCCESS == rc ? (opal_na_addr_t *) a : NULL;
    return rc;
}

int na_ofi_addr_self(opal_na_class_t *cls, opal_na_addr_t **addr)
{
    na_ofi_addr_t *self = na_ofi_class(cls)->self;
    atomic_fetch_add_explicit(&self->refs, 1, memory_order_relaxed);
    *addr = (opal_na_addr_t *) self;
    return OPAL_SUCCESS;
}

int na_ofi_addr_dup(opal_na_class_t *cls, opal_na_addr_t *addr, opal_na_addr_t **new_addr)
{
    (void) cls;
    atomic_fetch_add_explicit(&((na_ofi_addr_t *) addr)->refs, 1, memory_order_relaxed);
    *new_addr = addr;
    return OPAL_SUCCESS;
}

void na_ofi_addr_free(opal_na_class_t *cls, opal_na_addr_t *addr)
{
    if (NULL == addr) {
        return;
    }
    na_ofi_class_t *oc = na_ofi_class(cls);
    OPAL_THREAD_LOCK(&oc->lock);
    na_ofi_addr_release(oc, (na_ofi_addr_t *) addr);
    OPAL_THREAD_UNLOCK(&oc->lock);
}

bool na_ofi_addr_cmp(opal_na_class_t *cls, opal_na_addr_t *a, opal_na_addr_t *b)
{
    (void) cls;
    /* One object per distinct address. */
    return a == b;
}

bool na_ofi_addr_is_self(opal_na_class_t *cls, opal_na_addr_t *addr)
{
    return (na_ofi_addr_t *) addr == na_ofi_class(cls)->self;
}

int na_ofi_addr_to_string(opal_na_class_t *cls, char *buf, size_t *size, opal_na_addr_t *addr)
{
    na_ofi_addr_t *a = (na_ofi_addr_t *) addr;
    return na_ofi_addr_format(na_ofi_class(cls), a->addr, a->addrlen, buf, size);
}

size_t na_ofi_addr_get_serialize_size(opal_na_class_t *cls, opal_na_addr_t *addr)
{
    (void) cls;
    return 2 + ((na_ofi_addr_t *) addr)->addrlen;
}

int na_ofi_addr_serialize(opal_na_class_t *cls, void *buf, size_t size, opal_na_addr_t *addr)
{
    (void) cls;
    na_ofi_addr_t *a = (na_ofi_addr_t *) addr;
    opal_cursor_t c;
    opal_cursor_init_write(&c, buf, size);
    opal_cursor_put_u16(&c, a->addrlen);
    opal_cursor_put_bytes(&c, a->addr, a->addrlen);
    return opal_cursor_ok(&c) ? OPAL_SUCCESS : OPAL_ERR_TRUNCATED;
}

int na_ofi_addr_deserialize(opal_na_class_t *cls, opal_na_addr_t **addr, const void *buf,
                            size_t size)
{
    na_ofi_class_t *oc = na_ofi_class(cls);
    opal_cursor_t c;
    opal_cursor_init_read(&c, buf, size);
    uint16_t len = opal_cursor_get_u16(&c);
    const void *bytes = opal_cursor_get_ptr(&c, len);
    char why[160];
    if (!opal_cursor_done(&c)) {
        opal_output(0, "na/ofi: a serialized address of %zu bytes is %s (length field %u)", size,
                    opal_cursor_ok(&c) ? "longer than its length says" : "truncated",
                    (unsigned) len);
        return OPAL_ERR_BAD_PARAM;
    }
    if (OPAL_SUCCESS != opal_common_ofi_addr_check(&oc->ofi, bytes, len, why, sizeof(why))) {
        opal_output(0, "na/ofi: a serialized address is not one of %s: %s", oc->ofi.prov_name, why);
        return OPAL_ERR_BAD_PARAM;
    }
    na_ofi_addr_t *a;
    OPAL_THREAD_LOCK(&oc->lock);
    int rc = na_ofi_addr_get(oc, bytes, len, &a);
    OPAL_THREAD_UNLOCK(&oc->lock);
    *addr = OPAL_SUCCESS == rc ? (opal_na_addr_t *) a : NULL;
    return rc;
}
