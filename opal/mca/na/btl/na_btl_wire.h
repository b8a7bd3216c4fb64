/*
 * na/btl's wire formats, all read and written through opal_cursor and
 * free of component state, so that the fuzz targets run them alone
 * (docs/na-bulk.md has the layouts).
 *
 *   message header   8 bytes before every message's payload
 *   URI              "job/<jobid>/<rank>" inside a job,
 *                    "card/<hex of the card>" outside one
 *   card             what a process outside a job published in the modex
 *   address blob     what addr_serialize writes
 *   memory handle    segments, access flags and, per RDMA module, the
 *                    registration handles
 *
 * Decoders check every length, refuse trailing bytes, and say what was
 * wrong in why (a buffer of NA_BTL_WHY_MAX bytes).
 */
#ifndef OPAL_MCA_NA_BTL_NA_BTL_WIRE_H
#define OPAL_MCA_NA_BTL_NA_BTL_WIRE_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NA_BTL_WHY_MAX 160

/* ------------------------------------------------------ message header */

/* dest_id u8, source_id u8, flags u8 (0), reserved u8 (0), tag u32. */
#define NA_BTL_HDR_SIZE 8

typedef struct na_btl_hdr_t {
    uint8_t dest_id;
    uint8_t source_id;
    uint32_t tag;
} na_btl_hdr_t;

/* Writes hdr into out (NA_BTL_HDR_SIZE bytes). */
void na_btl_hdr_encode(const na_btl_hdr_t *hdr, uint8_t *out);
/* Reads a header from the first size bytes of buf. OPAL_ERR_BAD_PARAM
 * (why says what) for a short buffer or flags this version does not
 * know. */
int na_btl_hdr_decode(const void *buf, size_t size, na_btl_hdr_t *hdr, char *why);

/* ---------------------------------------------------------------- card */

/* Pairs a card holds at most, and the largest value. */
#define NA_BTL_CARD_MAX_PAIRS 64
#define NA_BTL_CARD_MAX_VALUE (64 * 1024)
#define NA_BTL_CARD_MAX_KEY   255

/* A decoded card: pointers into the encoded bytes. */
typedef struct na_btl_card_t {
    uint32_t jobid;
    uint32_t rank;
    uint32_t npairs;
    struct {
        char key[NA_BTL_CARD_MAX_KEY + 1];
        const uint8_t *value;
        uint32_t size;
    } pairs[NA_BTL_CARD_MAX_PAIRS];
} na_btl_card_t;

/* Card layout: magic u32 "NBCD", version u8, jobid u32, rank u32, npairs
 * u32, then per pair key (string) and value (blob). */
/* Bytes of a card of jobid / rank with npairs; keys and values given. */
size_t na_btl_card_size(uint32_t npairs, const char *const *keys, const uint32_t *sizes);
int na_btl_card_encode(uint8_t *buf, size_t size, uint32_t jobid, uint32_t rank, uint32_t npairs,
                       const char *const *keys, const void *const *values, const uint32_t *sizes);
int na_btl_card_decode(const void *buf, size_t size, na_btl_card_t *card, char *why);

/* ----------------------------------------------------------------- URI */

#define NA_BTL_URI_JOB  "job/"
#define NA_BTL_URI_CARD "card/"

typedef struct na_btl_uri_t {
    bool has_card;
    uint32_t jobid;
    uint32_t rank;
    /* has_card: the card's bytes (malloc'd, the caller frees). */
    uint8_t *card;
    size_t card_size;
} na_btl_uri_t;

/* The URI's component part (what follows "btl://"): "job/<jobid>/<rank>"
 * or "card/<hex>" into buf (*size bytes with the NUL); with buf NULL or
 * too small, *size gets what is needed and OPAL_ERR_TRUNCATED. */
int na_btl_uri_format(char *buf, size_t *size, uint32_t jobid, uint32_t rank, const uint8_t *card,
                      size_t card_size);
/* Parses a URI's component part; a card's jobid and rank fill uri.
 * OPAL_ERR_BAD_PARAM with why for anything malformed. */
int na_btl_uri_parse(const char *text, na_btl_uri_t *uri, char *why);

/* -------------------------------------------------------- address blob */

/* kind u8 (1 job, 2 card), jobid u32, rank u32, then for kind 2 the card
 * (blob). */
size_t na_btl_addr_blob_size(size_t card_size);
int na_btl_addr_blob_encode(void *buf, size_t size, uint32_t jobid, uint32_t rank,
                            const uint8_t *card, size_t card_size);
/* *card points into buf (NULL for kind 1). */
int na_btl_addr_blob_decode(const void *buf, size_t size, uint32_t *jobid, uint32_t *rank,
                            const uint8_t **card, size_t *card_size, char *why);

/* ------------------------------------------------------- memory handle */

#define NA_BTL_WIRE_MAX_NAME     31
#define NA_BTL_WIRE_MAX_MODS     8
#define NA_BTL_WIRE_MAX_SEGMENTS 1024
#define NA_BTL_WIRE_MAX_HANDLE   256

/* A decoded memory handle: pointers into the encoded bytes. Layout:
 * flags u8, count u32, count x (base u64, len u64), nmods u8, nmods x
 * (component name string, handle size u32, count x handle size bytes). */
typedef struct na_btl_mh_wire_t {
    uint8_t flags;
    uint32_t count;
    const uint8_t *segments; /* count x 16 bytes: read with na_btl_mh_wire_segment */
    uint64_t total;
    uint8_t nmods;
    struct {
        char name[NA_BTL_WIRE_MAX_NAME + 1];
        uint32_t handle_size;
        const uint8_t *handles; /* count x handle_size */
    } mods[NA_BTL_WIRE_MAX_MODS];
} na_btl_mh_wire_t;

int na_btl_mh_decode(const void *buf, size_t size, na_btl_mh_wire_t *mh, char *why);
/* Segment i of a decoded handle. */
void na_btl_mh_wire_segment(const na_btl_mh_wire_t *mh, uint32_t i, uint64_t *base, uint64_t *len);

#endif /* OPAL_MCA_NA_BTL_NA_BTL_WIRE_H */
