/*
 * na/btl's wire formats (na_btl_wire.h): headers, cards, URIs, address
 * and memory-handle blobs. Pure functions over bytes, every read through
 * opal_cursor.
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/na/btl/na_btl_wire.h"
#include "opal/util/opal_cursor.h"
#include "opal/util/opal_error.h"

#define CARD_MAGIC   0x4443424eu /* "NBCD" as little-endian bytes */
#define CARD_VERSION 1u

enum { ADDR_KIND_JOB = 1, ADDR_KIND_CARD = 2 };

/* Fills why (when not NULL) and returns OPAL_ERR_BAD_PARAM. */
#define refuse(why, ...) opal_error_why(OPAL_ERR_BAD_PARAM, (why), NA_BTL_WHY_MAX, __VA_ARGS__)

/* ------------------------------------------------------ message header */

void na_btl_hdr_encode(const na_btl_hdr_t *hdr, uint8_t *out)
{
    opal_cursor_t c;
    opal_cursor_init_write(&c, out, NA_BTL_HDR_SIZE);
    opal_cursor_put_u8(&c, hdr->dest_id);
    opal_cursor_put_u8(&c, hdr->source_id);
    opal_cursor_put_u8(&c, 0);
    opal_cursor_put_u8(&c, 0);
    opal_cursor_put_u32(&c, hdr->tag);
}

int na_btl_hdr_decode(const void *buf, size_t size, na_btl_hdr_t *hdr, char *why)
{
    opal_cursor_t c;
    opal_cursor_init_read(&c, buf, size);
    hdr->dest_id = opal_cursor_get_u8(&c);
    hdr->source_id = opal_cursor_get_u8(&c);
    uint8_t flags = opal_cursor_get_u8(&c);
    uint8_t reserved = opal_cursor_get_u8(&c);
    hdr->tag = opal_cursor_get_u32(&c);
    if (!opal_cursor_ok(&c)) {
        return refuse(why, "a message of %zu bytes is shorter than na/btl's %d-byte header", size,
                      NA_BTL_HDR_SIZE);
    }
    if (0 != flags || 0 != reserved) {
        return refuse(why, "a message header with flags 0x%x / 0x%x this version does not know",
                      flags, reserved);
    }
    return OPAL_SUCCESS;
}

/* ---------------------------------------------------------------- card */

size_t na_btl_card_size(uint32_t npairs, const char *const *keys, const uint32_t *sizes)
{
    size_t n = 4 + 1 + 4 + 4 + 4;
    for (uint32_t i = 0; i < npairs; ++i) {
        n += 2 + strlen(keys[i]) + 4 + sizes[i];
    }
    return n;
}

int na_btl_card_encode(uint8_t *buf, size_t size, uint32_t jobid, uint32_t rank, uint32_t npairs,
                       const char *const *keys, const void *const *values, const uint32_t *sizes)
{
    if (npairs > NA_BTL_CARD_MAX_PAIRS) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_cursor_t c;
    opal_cursor_init_write(&c, buf, size);
    opal_cursor_put_u32(&c, CARD_MAGIC);
    opal_cursor_put_u8(&c, CARD_VERSION);
    opal_cursor_put_u32(&c, jobid);
    opal_cursor_put_u32(&c, rank);
    opal_cursor_put_u32(&c, npairs);
    for (uint32_t i = 0; i < npairs; ++i) {
        if (strlen(keys[i]) > NA_BTL_CARD_MAX_KEY || sizes[i] > NA_BTL_CARD_MAX_VALUE) {
            return OPAL_ERR_BAD_PARAM;
        }
        opal_cursor_put_string(&c, keys[i]);
        opal_cursor_put_blob(&c, values[i], sizes[i]);
    }
    return opal_cursor_done(&c) ? OPAL_SUCCESS : OPAL_ERR_TRUNCATED;
}

int na_btl_card_decode(const void *buf, size_t size, na_btl_card_t *card, char *why)
{
    opal_cursor_t c;
    opal_cursor_init_read(&c, buf, size);
    uint32_t magic = opal_cursor_get_u32(&c);
    if (!opal_cursor_ok(&c) || CARD_MAGIC != magic) {
        return refuse(why, "a business card of %zu bytes does not start like one", size);
    }
    uint8_t version = opal_cursor_get_u8(&c);
    if (opal_cursor_ok(&c) && CARD_VERSION != version) {
        return refuse(why, "a business card of format version %u (this build reads %u)", version,
                      CARD_VERSION);
    }
    card->jobid = opal_cursor_get_u32(&c);
    card->rank = opal_cursor_get_u32(&c);
    card->npairs = opal_cursor_get_u32(&c);
    if (opal_cursor_ok(&c) && card->npairs > NA_BTL_CARD_MAX_PAIRS) {
        return refuse(why, "a business card claims %u values (at most %d)", card->npairs,
                      NA_BTL_CARD_MAX_PAIRS);
    }
    for (uint32_t i = 0; opal_cursor_ok(&c) && i < card->npairs; ++i) {
        opal_cursor_get_string(&c, card->pairs[i].key, sizeof(card->pairs[i].key));
        if (opal_cursor_ok(&c) && '\0' == card->pairs[i].key[0]) {
            return refuse(why, "value %u of a business card has an empty key", i);
        }
        card->pairs[i].value =
            opal_cursor_get_blob(&c, &card->pairs[i].size, NA_BTL_CARD_MAX_VALUE);
    }
    if (!opal_cursor_done(&c)) {
        return refuse(why, "a business card of %zu bytes is %s", size,
                      opal_cursor_ok(&c) ? "longer than its values" : "truncated or malformed");
    }
    return OPAL_SUCCESS;
}

/* ----------------------------------------------------------------- URI */

static const char hex_digits[] = "0123456789abcdef";

static int hex_value(char ch)
{
    if (ch >= '0' && ch <= '9') {
        return ch - '0';
    }
    if (ch >= 'a' && ch <= 'f') {
        return ch - 'a' + 10;
    }
    return -1;
}

int na_btl_uri_format(char *buf, size_t *size, uint32_t jobid, uint32_t rank, const uint8_t *card,
                      size_t card_size)
{
    size_t need;
    char small[48];
    if (NULL == card) {
        int n = snprintf(small, sizeof(small), NA_BTL_URI_JOB "%u/%u", jobid, rank);
        need = (size_t) n + 1;
    } else {
        need = strlen(NA_BTL_URI_CARD) + 2 * card_size + 1;
    }
    if (NULL == buf || *size < need) {
        *size = need;
        return OPAL_ERR_TRUNCATED;
    }
    if (NULL == card) {
        memcpy(buf, small, need);
    } else {
        size_t pos = strlen(NA_BTL_URI_CARD);
        memcpy(buf, NA_BTL_URI_CARD, pos);
        for (size_t i = 0; i < card_size; ++i) {
            buf[pos++] = hex_digits[card[i] >> 4];
            buf[pos++] = hex_digits[card[i] & 0xf];
        }
        buf[pos] = '\0';
    }
    *size = need;
    return OPAL_SUCCESS;
}

/* A decimal u32 at *p up to the character stop; advances *p past it. */
static bool parse_u32(const char **p, char stop, uint32_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    size_t digits = 0;
    while (*s >= '0' && *s <= '9') {
        v = v * 10 + (uint64_t) (*s - '0');
        if (v > UINT32_MAX || ++digits > 10) {
            return false;
        }
        ++s;
    }
    if (0 == digits || *s != stop || (digits > 1 && '0' == **p)) {
        return false;
    }
    *out = (uint32_t) v;
    *p = s;
    return true;
}

int na_btl_uri_parse(const char *text, na_btl_uri_t *uri, char *why)
{
    memset(uri, 0, sizeof(*uri));
    if (NULL == text) {
        return refuse(why, "no URI");
    }
    size_t jlen = strlen(NA_BTL_URI_JOB), clen = strlen(NA_BTL_URI_CARD);
    if (0 == strncmp(text, NA_BTL_URI_JOB, jlen)) {
        const char *p = text + jlen;
        if (!parse_u32(&p, '/', &uri->jobid)) {
            return refuse(why, "the job id of \"%.64s\" is not a decimal number below 2^32", text);
        }
        ++p;
        if (!parse_u32(&p, '\0', &uri->rank)) {
            return refuse(why, "the rank of \"%.64s\" is not a decimal number below 2^32", text);
        }
        return OPAL_SUCCESS;
    }
    if (0 != strncmp(text, NA_BTL_URI_CARD, clen)) {
        return refuse(why, "\"%.64s\" starts with neither \"%s\" nor \"%s\"", text, NA_BTL_URI_JOB,
                      NA_BTL_URI_CARD);
    }
    const char *hex = text + clen;
    size_t n = strlen(hex);
    if (0 == n || 0 != n % 2) {
        return refuse(why,
                      "the card of a URI has %zu hex digits (a positive even number is "
                      "needed)",
                      n);
    }
    uint8_t *bytes = malloc(n / 2);
    if (NULL == bytes) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < n / 2; ++i) {
        int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            free(bytes);
            return refuse(why, "the card of a URI holds '%c' at digit %zu (lower-case hex only)",
                          hi < 0 ? hex[2 * i] : hex[2 * i + 1], hi < 0 ? 2 * i : 2 * i + 1);
        }
        bytes[i] = (uint8_t) (hi << 4 | lo);
    }
    na_btl_card_t *card = malloc(sizeof(*card));
    if (NULL == card) {
        free(bytes);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    int rc = na_btl_card_decode(bytes, n / 2, card, why);
    if (OPAL_SUCCESS == rc) {
        uri->has_card = true;
        uri->jobid = card->jobid;
        uri->rank = card->rank;
        uri->card = bytes;
        uri->card_size = n / 2;
    } else {
        free(bytes);
    }
    free(card);
    return rc;
}

/* -------------------------------------------------------- address blob */

size_t na_btl_addr_blob_size(size_t card_size)
{
    return 1 + 4 + 4 + (0 == card_size ? 0 : 4 + card_size);
}

int na_btl_addr_blob_encode(void *buf, size_t size, uint32_t jobid, uint32_t rank,
                            const uint8_t *card, size_t card_size)
{
    if (card_size > UINT32_MAX) {
        return OPAL_ERR_BAD_PARAM;
    }
    opal_cursor_t c;
    opal_cursor_init_write(&c, buf, size);
    opal_cursor_put_u8(&c, NULL == card ? ADDR_KIND_JOB : ADDR_KIND_CARD);
    opal_cursor_put_u32(&c, jobid);
    opal_cursor_put_u32(&c, rank);
    if (NULL != card) {
        opal_cursor_put_blob(&c, card, (uint32_t) card_size);
    }
    return opal_cursor_done(&c) ? OPAL_SUCCESS : OPAL_ERR_TRUNCATED;
}

int na_btl_addr_blob_decode(const void *buf, size_t size, uint32_t *jobid, uint32_t *rank,
                            const uint8_t **card, size_t *card_size, char *why)
{
    opal_cursor_t c;
    opal_cursor_init_read(&c, buf, size);
    uint8_t kind = opal_cursor_get_u8(&c);
    *jobid = opal_cursor_get_u32(&c);
    *rank = opal_cursor_get_u32(&c);
    *card = NULL;
    *card_size = 0;
    if (opal_cursor_ok(&c) && ADDR_KIND_JOB != kind && ADDR_KIND_CARD != kind) {
        return refuse(why, "an address of unknown kind %u", kind);
    }
    if (ADDR_KIND_CARD == kind) {
        uint32_t n = 0;
        *card = opal_cursor_get_blob(&c, &n, UINT32_MAX);
        *card_size = n;
    }
    if (!opal_cursor_done(&c)) {
        return refuse(why, "an address of %zu bytes is %s", size,
                      opal_cursor_ok(&c) ? "longer than its fields" : "truncated");
    }
    if (ADDR_KIND_CARD == kind) {
        na_btl_card_t *decoded = malloc(sizeof(*decoded));
        if (NULL == decoded) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        int rc = na_btl_card_decode(*card, *card_size, decoded, why);
        if (OPAL_SUCCESS == rc && (decoded->jobid != *jobid || decoded->rank != *rank)) {
            rc = refuse(why, "an address of [%u,%u] carries the card of [%u,%u]", *jobid, *rank,
                        decoded->jobid, decoded->rank);
        }
        free(decoded);
        return rc;
    }
    return OPAL_SUCCESS;
}

/* ------------------------------------------------------- memory handle */

int na_btl_mh_decode(const void *buf, size_t size, na_btl_mh_wire_t *mh, char *why)
{
    opal_cursor_t c;
    opal_cursor_init_read(&c, buf, size);
    mh->flags = opal_cursor_get_u8(&c);
    mh->count = opal_cursor_get_u32(&c);
    if (opal_cursor_ok(&c) && (0 == mh->flags || 0 != (mh->flags & ~3u))) {
        return refuse(why, "a memory handle with access flags 0x%x", mh->flags);
    }
    if (opal_cursor_ok(&c) && (0 == mh->count || mh->count > NA_BTL_WIRE_MAX_SEGMENTS)) {
        return refuse(why, "a memory handle of %u segments (1 to %d)", mh->count,
                      NA_BTL_WIRE_MAX_SEGMENTS);
    }
    mh->segments = opal_cursor_get_ptr(&c, opal_cursor_ok(&c) ? (size_t) mh->count * 16 : 0);
    mh->total = 0;
    for (uint32_t i = 0; opal_cursor_ok(&c) && i < mh->count; ++i) {
        uint64_t base, len;
        na_btl_mh_wire_segment(mh, i, &base, &len);
        if (base + len < base || mh->total + len < mh->total) {
            return refuse(why,
                          "segment %u of a memory handle wraps around (base 0x%llx, %llu "
                          "bytes)",
                          i, (unsigned long long) base, (unsigned long long) len);
        }
        mh->total += len;
    }
    mh->nmods = opal_cursor_get_u8(&c);
    if (opal_cursor_ok(&c) && mh->nmods > NA_BTL_WIRE_MAX_MODS) {
        return refuse(why, "a memory handle registered with %u modules (at most %d)", mh->nmods,
                      NA_BTL_WIRE_MAX_MODS);
    }
    for (uint8_t m = 0; opal_cursor_ok(&c) && m < mh->nmods; ++m) {
        opal_cursor_get_string(&c, mh->mods[m].name, sizeof(mh->mods[m].name));
        mh->mods[m].handle_size = opal_cursor_get_u32(&c);
        if (opal_cursor_ok(&c) && mh->mods[m].handle_size > NA_BTL_WIRE_MAX_HANDLE) {
            return refuse(why, "a memory handle's %s registration of %u bytes (at most %d)",
                          mh->mods[m].name, mh->mods[m].handle_size, NA_BTL_WIRE_MAX_HANDLE);
        }
        mh->mods[m].handles = opal_cursor_get_ptr(
            &c, opal_cursor_ok(&c) ? (size_t) mh->count * mh->mods[m].handle_size : 0);
    }
    if (!opal_cursor_done(&c)) {
        return refuse(why, "a memory handle of %zu bytes is %s", size,
                      opal_cursor_ok(&c) ? "longer than its fields" : "truncated or malformed");
    }
    return OPAL_SUCCESS;
}

void na_btl_mh_wire_segment(const na_btl_mh_wire_t *mh, uint32_t i, uint64_t *base, uint64_t *len)
{
    opal_cursor_t c;
    opal_cursor_init_read(&c, mh->segments + (size_t) i * 16, 16);
    *base = opal_cursor_get_u64(&c);
    *len = opal_cursor_get_u64(&c);
}
