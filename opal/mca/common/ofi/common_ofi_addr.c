/*
 * Endpoint addresses in the modex. A blob is a fixed header then the
 * address bytes fi_getname gave:
 *
 *   0   magic "OFIA"
 *   4   version (2), a reserved byte
 *   6   address length (uint16)
 *   8   address format (uint32, enum fi_addr_format)
 *   12  pid of the publishing process (uint32)
 *   16  provider name, NUL-padded (48 bytes)
 *   64  its pid space (uint64, opal_pid_space(): a peer checks the pid
 *       only when its own is the same; 0: never)
 *   72  the address
 *
 * Version 1 had no pid space (a 64-byte header).
 *
 * Peers are processes of one job on machines of one architecture, so the
 * integers are in host order. Everything is checked before the address
 * reaches the provider: a truncated, foreign or corrupt blob is refused
 * with the reason, never handed to fi_av_insert.
 */
#include "opal/opal_config.h"

#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "opal/mca/common/ofi/common_ofi.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_pid.h"

#define BLOB_MAGIC   "OFIA"
#define BLOB_VERSION 2
#define BLOB_HEADER  72

typedef struct {
    char magic[4];
    uint8_t version;
    uint8_t reserved;
    uint16_t addrlen;
    uint32_t addr_format;
    uint32_t pid;
    char prov_name[OPAL_COMMON_OFI_PROV_NAME_MAX];
    uint64_t pid_space;
} blob_header_t;

_Static_assert(sizeof(blob_header_t) == BLOB_HEADER, "the blob header is 72 bytes");

int opal_common_ofi_addr_pack(const opal_common_ofi_ctx_t *ctx, void **blob, size_t *size)
{
    if (ctx->addrlen > UINT16_MAX || strlen(ctx->prov_name) >= OPAL_COMMON_OFI_PROV_NAME_MAX) {
        return OPAL_ERR_BAD_PARAM;
    }
    uint8_t *out = calloc(1, BLOB_HEADER + ctx->addrlen);
    if (NULL == out) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    blob_header_t header = {
        .version = BLOB_VERSION,
        .addrlen = (uint16_t) ctx->addrlen,
        .addr_format = ctx->info->addr_format,
        .pid = (uint32_t) getpid(),
        .pid_space = opal_pid_space(),
    };
    memcpy(header.magic, BLOB_MAGIC, sizeof(header.magic));
    strncpy(header.prov_name, ctx->prov_name, sizeof(header.prov_name) - 1);
    memcpy(out, &header, sizeof(header));
    memcpy(out + BLOB_HEADER, ctx->addr, ctx->addrlen);
    *blob = out;
    *size = BLOB_HEADER + ctx->addrlen;
    return OPAL_SUCCESS;
}

/* A declined blob: magic "OFIX", then the reason's bytes (no NUL). */
#define DECLINED_MAGIC "OFIX"
#define DECLINED_MAX   255

int opal_common_ofi_declined_pack(const char *reason, void **blob, size_t *size)
{
    size_t len = strlen(reason);
    if (len > DECLINED_MAX) {
        len = DECLINED_MAX;
    }
    uint8_t *out = malloc(4 + len);
    if (NULL == out) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    memcpy(out, DECLINED_MAGIC, 4);
    memcpy(out + 4, reason, len);
    *blob = out;
    *size = 4 + len;
    return OPAL_SUCCESS;
}

bool opal_common_ofi_declined_unpack(const void *blob, size_t size, char *why, size_t why_size)
{
    if (NULL == blob || size < 4 || 0 != memcmp(blob, DECLINED_MAGIC, 4) || 0 == why_size) {
        return false;
    }
    const uint8_t *text = (const uint8_t *) blob + 4;
    size_t len = size - 4;
    if (len > DECLINED_MAX) {
        len = DECLINED_MAX;
    }
    if (len > why_size - 1) {
        len = why_size - 1;
    }
    for (size_t i = 0; i < len; ++i) {
        why[i] = isprint(text[i]) ? (char) text[i] : '?';
    }
    why[len] = '\0';
    return true;
}

static const char *format_name(uint32_t format)
{
    switch (format) {
        case FI_SOCKADDR:
            return "FI_SOCKADDR";
        case FI_SOCKADDR_IN:
            return "FI_SOCKADDR_IN";
        case FI_SOCKADDR_IN6:
            return "FI_SOCKADDR_IN6";
        case FI_ADDR_STR:
            return "FI_ADDR_STR";
        default:
            return "a provider-specific format";
    }
}

/* Checks that a sockaddr of len bytes has family and the length it implies. */
static bool check_sockaddr(const uint8_t *addr, size_t len, int family, char *why, size_t size)
{
    size_t want = AF_INET == family ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
    if (len != want) {
        snprintf(why, size, "address of %zu bytes, expected %zu for %s", len, want,
                 AF_INET == family ? "an IPv4 socket address" : "an IPv6 socket address");
        return false;
    }
    struct sockaddr sa;
    memcpy(&sa, addr, sizeof(sa));
    if (sa.sa_family != family) {
        snprintf(why, size, "socket address of family %d, expected %d", (int) sa.sa_family, family);
        return false;
    }
    return true;
}

/* The address's form for its format. */
static bool check_form(const opal_common_ofi_ctx_t *ctx, uint32_t format, const uint8_t *addr,
                       size_t len, char *why, size_t size)
{
    switch (format) {
        case FI_SOCKADDR_IN:
            return check_sockaddr(addr, len, AF_INET, why, size);
        case FI_SOCKADDR_IN6:
            return check_sockaddr(addr, len, AF_INET6, why, size);
        case FI_SOCKADDR: {
            struct sockaddr sa;
            if (len < sizeof(sa)) {
                snprintf(why, size, "socket address of %zu bytes is too short", len);
                return false;
            }
            memcpy(&sa, addr, sizeof(sa));
            return check_sockaddr(addr, len, AF_INET6 == sa.sa_family ? AF_INET6 : AF_INET, why,
                                  size);
        }
        case FI_ADDR_STR: {
            /* "prov://..." then NUL padding to the end. */
            const uint8_t *nul = memchr(addr, '\0', len);
            if (NULL == nul || nul == addr) {
                snprintf(why, size, "string address of %zu bytes is %s", len,
                         NULL == nul ? "not terminated" : "empty");
                return false;
            }
            for (const uint8_t *p = addr; p < nul; ++p) {
                if (!isprint(*p)) {
                    snprintf(why, size, "string address holds a non-printable byte 0x%02x at %zu",
                             *p, (size_t) (p - addr));
                    return false;
                }
            }
            for (const uint8_t *p = nul; p < addr + len; ++p) {
                if ('\0' != *p) {
                    snprintf(why, size, "string address has bytes after its end");
                    return false;
                }
            }
            if (NULL == strstr((const char *) addr, "://")) {
                snprintf(why, size, "string address \"%.40s\" has no scheme", (const char *) addr);
                return false;
            }
            return true;
        }
        default:
            /* Provider-specific binary addresses have one size. */
            if (len != ctx->addrlen) {
                snprintf(why, size, "address of %zu bytes, expected %zu for %s", len, ctx->addrlen,
                         format_name(format));
                return false;
            }
            return true;
    }
}

int opal_common_ofi_addr_unpack(const opal_common_ofi_ctx_t *ctx, const void *blob, size_t size,
                                opal_common_ofi_peer_addr_t *addr, char *why, size_t why_size)
{
    blob_header_t header;
    if (NULL == blob || size < sizeof(header)) {
        snprintf(why, why_size, "%zu bytes, shorter than the %d-byte header", size, BLOB_HEADER);
        return OPAL_ERR_BAD_VALUE;
    }
    memcpy(&header, blob, sizeof(header));
    if (0 != memcmp(header.magic, BLOB_MAGIC, sizeof(header.magic))) {
        snprintf(why, why_size, "not an ofi address (bad magic)");
        return OPAL_ERR_BAD_VALUE;
    }
    if (BLOB_VERSION != header.version) {
        snprintf(why, why_size, "address blob version %u, this process reads %d", header.version,
                 BLOB_VERSION);
        return OPAL_ERR_BAD_VALUE;
    }
    if (NULL == memchr(header.prov_name, '\0', sizeof(header.prov_name))) {
        snprintf(why, why_size, "provider name not terminated");
        return OPAL_ERR_BAD_VALUE;
    }
    if (0 == header.addrlen || size != BLOB_HEADER + (size_t) header.addrlen) {
        snprintf(why, why_size, "header claims a %u-byte address but %zu bytes follow",
                 header.addrlen, size - BLOB_HEADER);
        return OPAL_ERR_BAD_VALUE;
    }
    if (0 != strcmp(header.prov_name, ctx->prov_name)) {
        snprintf(why, why_size, "it uses provider %s, this process %s", header.prov_name,
                 ctx->prov_name);
        return OPAL_ERR_NOT_SUPPORTED;
    }
    if (header.addr_format != ctx->info->addr_format) {
        snprintf(why, why_size, "its address is in %s (%u), this process's in %s (%u)",
                 format_name(header.addr_format), header.addr_format,
                 format_name(ctx->info->addr_format), (unsigned) ctx->info->addr_format);
        return OPAL_ERR_NOT_SUPPORTED;
    }
    const uint8_t *bytes = (const uint8_t *) blob + BLOB_HEADER;
    if (!check_form(ctx, header.addr_format, bytes, header.addrlen, why, why_size)) {
        return OPAL_ERR_BAD_VALUE;
    }
    memcpy(addr->prov_name, header.prov_name, sizeof(addr->prov_name));
    addr->addr_format = header.addr_format;
    addr->pid = header.pid;
    addr->pid_space = header.pid_space;
    addr->addr = bytes;
    addr->addrlen = header.addrlen;
    return OPAL_SUCCESS;
}

int opal_common_ofi_addr_check(const opal_common_ofi_ctx_t *ctx, const void *addr, size_t len,
                               char *why, size_t why_size)
{
    if (0 == len || len > sizeof(ctx->addr)) {
        snprintf(why, why_size, "address of %zu bytes (1 to %zu expected)", len, sizeof(ctx->addr));
        return OPAL_ERR_BAD_VALUE;
    }
    return check_form(ctx, ctx->info->addr_format, addr, len, why, why_size) ? OPAL_SUCCESS
                                                                             : OPAL_ERR_BAD_VALUE;
}

int opal_common_ofi_av_insert(opal_common_ofi_ctx_t *ctx, const opal_common_ofi_peer_addr_t *addr,
                              fi_addr_t *fi_addr, char *why, size_t why_size)
{
    *fi_addr = FI_ADDR_NOTAVAIL;
    int n = fi_av_insert(ctx->av, addr->addr, 1, fi_addr, 0, NULL);
    if (1 != n || FI_ADDR_NOTAVAIL == *fi_addr) {
        snprintf(why, why_size, "%s refused its address (fi_av_insert: %s)", ctx->prov_name,
                 n < 0 ? fi_strerror(-n) : "not inserted");
        return OPAL_ERR_UNREACH;
    }
    return OPAL_SUCCESS;
}
