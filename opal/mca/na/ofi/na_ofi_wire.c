/*
 * na/ofi's unexpected message header (na_ofi_wire.h).
 */
#include "opal/opal_config.h"

#include "opal/mca/na/ofi/na_ofi_wire.h"
#include "opal/util/opal_cursor.h"
#include "opal/util/opal_error.h"

#define refuse(why, ...) opal_error_why(OPAL_ERR_BAD_PARAM, (why), NA_OFI_WHY_MAX, __VA_ARGS__)

size_t na_ofi_uhdr_encode(const na_ofi_uhdr_t *hdr, uint8_t *out, size_t room)
{
    opal_cursor_t c;
    opal_cursor_init_write(&c, out, room);
    opal_cursor_put_u32(&c, hdr->tag);
    opal_cursor_put_u8(&c, hdr->dest_id);
    opal_cursor_put_u8(&c, hdr->src_id);
    opal_cursor_put_u16(&c, hdr->addrlen);
    opal_cursor_put_bytes(&c, hdr->addr, hdr->addrlen);
    return opal_cursor_ok(&c) ? opal_cursor_pos(&c) : 0;
}

int na_ofi_uhdr_decode(const void *buf, size_t size, na_ofi_uhdr_t *hdr, size_t *hdr_size,
                       char *why)
{
    opal_cursor_t c;
    opal_cursor_init_read(&c, buf, size);
    hdr->tag = opal_cursor_get_u32(&c);
    hdr->dest_id = opal_cursor_get_u8(&c);
    hdr->src_id = opal_cursor_get_u8(&c);
    hdr->addrlen = opal_cursor_get_u16(&c);
    hdr->addr = NULL;
    if (!opal_cursor_ok(&c)) {
        return refuse(why, "a message of %zu bytes is shorter than the %d-byte header", size,
                      NA_OFI_UHDR_FIXED);
    }
    if (0 == hdr->addrlen || hdr->addrlen > NA_OFI_ADDR_MAX) {
        return refuse(why, "a sender's address of %u bytes (1 to %d expected)",
                      (unsigned) hdr->addrlen, NA_OFI_ADDR_MAX);
    }
    const uint8_t *addr = opal_cursor_get_ptr(&c, hdr->addrlen);
    if (!opal_cursor_ok(&c)) {
        return refuse(why, "a message of %zu bytes cut inside its sender's address of %u bytes",
                      size, (unsigned) hdr->addrlen);
    }
    hdr->addr = addr;
    *hdr_size = opal_cursor_pos(&c);
    if (NA_OFI_TAG_BYE == hdr->tag) {
        if (*hdr_size != size) {
            return refuse(why, "a goodbye (tag 0x%x) with %zu bytes after its header",
                          (unsigned) hdr->tag, size - *hdr_size);
        }
        return OPAL_SUCCESS;
    }
    if (hdr->tag > NA_OFI_MAX_TAG) {
        return refuse(why, "tag 0x%x is above na/ofi's max tag 0x%x", (unsigned) hdr->tag,
                      NA_OFI_MAX_TAG);
    }
    return OPAL_SUCCESS;
}
