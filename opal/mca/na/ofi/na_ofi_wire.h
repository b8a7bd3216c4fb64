/*
 * na/ofi's unexpected message header, read and written through
 * opal_cursor and free of component state, so that its fuzz target runs
 * it alone (docs/na-bulk.md has the layout).
 *
 *   u32 tag | u8 destination context id | u8 source context id |
 *   u16 address length | the sender's address | payload
 *
 * The decoder checks the lengths and the tag and says what was wrong in
 * why (a buffer of NA_OFI_WHY_MAX bytes); whether the address bytes are
 * an address of the provider is for common/ofi to say.
 *
 * A header with tag NA_OFI_TAG_BYE and nothing after it is a goodbye: its
 * sender closed its class (see na_ofi_component.c's say_goodbye).
 */
#ifndef OPAL_MCA_NA_OFI_NA_OFI_WIRE_H
#define OPAL_MCA_NA_OFI_NA_OFI_WIRE_H

#include "opal/opal_config.h"

#include <stddef.h>
#include <stdint.h>

#define NA_OFI_WHY_MAX 160

/* Tags are 31 bits (Mercury has 30 on ofi). */
#define NA_OFI_MAX_TAG 0x7fffffffu
/* Above every user tag: the goodbye. */
#define NA_OFI_TAG_BYE 0xffffffffu

#define NA_OFI_UHDR_FIXED 8
#define NA_OFI_ADDR_MAX   256
#define NA_OFI_UHDR_MAX   (NA_OFI_UHDR_FIXED + NA_OFI_ADDR_MAX)

typedef struct na_ofi_uhdr_t {
    uint32_t tag;
    uint8_t dest_id;
    uint8_t src_id;
    uint16_t addrlen;
    const uint8_t *addr; /* inside the decoded buffer */
} na_ofi_uhdr_t;

/* Writes hdr (its address included) into out, room bytes: the bytes
 * written, 0 when they do not fit. */
size_t na_ofi_uhdr_encode(const na_ofi_uhdr_t *hdr, uint8_t *out, size_t room);

/* Reads the header at the start of buf: OPAL_SUCCESS with *hdr_size the
 * header's bytes (the payload follows), or OPAL_ERR_BAD_PARAM with why.
 * When only the tag is wrong, hdr->addr is still set (to name the sender). */
int na_ofi_uhdr_decode(const void *buf, size_t size, na_ofi_uhdr_t *hdr, size_t *hdr_size,
                       char *why);

#endif /* OPAL_MCA_NA_OFI_NA_OFI_WIRE_H */
