/* Fuzz target: the launcher's wire messages (orte_wire), as mcarun reads
 * them from a rank and a rank from mcarun. The first byte picks the
 * direction; then a header and a payload. A message that decodes must
 * encode again to the same bytes. */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/util/opal_error.h"
#include "orte/util/orte_wire.h"
#include "test/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 + ORTE_WIRE_HEADER_SIZE) {
        return 0;
    }
    bool from_rank = data[0] & 1;
    const uint8_t *buf = data + 1;
    size_t len = size - 1;
    orte_wire_header_t hdr;
    char why[256];
    int rc = orte_wire_header_decode(buf, from_rank, &hdr, why, sizeof(why));
    if (OPAL_SUCCESS != rc) {
        if ('\0' == why[0]) {
            abort();
        }
        return 0;
    }
    if (hdr.length > len - ORTE_WIRE_HEADER_SIZE) {
        return 0; /* the rest has not arrived */
    }
    /* The payload in a buffer of its own size, as the reader keeps it. */
    uint8_t *payload = malloc(hdr.length > 0 ? hdr.length : 1);
    if (NULL == payload) {
        return 0;
    }
    memcpy(payload, buf + ORTE_WIRE_HEADER_SIZE, hdr.length);
    orte_wire_msg_t msg;
    rc = orte_wire_payload_decode(&hdr, payload, &msg, why, sizeof(why));
    if (OPAL_SUCCESS == rc) {
        uint8_t *head = malloc(ORTE_WIRE_MAX_HEAD);
        size_t head_len = 0;
        if (NULL != head) {
            if (OPAL_SUCCESS != orte_wire_encode(&msg, head, ORTE_WIRE_MAX_HEAD, &head_len) ||
                head_len + msg.value_len != ORTE_WIRE_HEADER_SIZE + hdr.length ||
                0 != memcmp(head, buf, head_len) ||
                (msg.value_len > 0 && 0 != memcmp(msg.value, buf + head_len, msg.value_len))) {
                abort();
            }
            free(head);
        }
    } else if ('\0' == why[0]) {
        abort();
    }
    free(payload);
    return 0;
}
