/* Fuzz target: btl/sm's fast-box headers as the receiver reads them from
 * the sender's segment, which a faulty or malicious peer may fill with
 * anything. The first byte picks the ring size (256 B to 8 KiB), the next
 * four the sequence number the reader expects; the rest is the ring. The
 * reader must never point outside the ring and must stop. */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/sm/btl_sm_fbox.h"
#include "test/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 5) {
        return 0;
    }
    uint32_t ring_size = SM_FBOX_MIN_SIZE << (data[0] % 6);
    uint32_t seq;
    memcpy(&seq, data + 1, sizeof(seq));
    data += 5;
    size -= 5;
    /* Control line then ring, aligned as in the segment; the ring holds
     * the input (repeated, so that short inputs still fill it). */
    uint8_t *base = aligned_alloc(OPAL_CACHE_LINE_SIZE, SM_FBOX_CTL_SIZE + ring_size);
    if (NULL == base) {
        return 0;
    }
    memset(base, 0, SM_FBOX_CTL_SIZE);
    for (uint32_t i = 0; i < ring_size; ++i) {
        base[SM_FBOX_CTL_SIZE + i] = size > 0 ? data[i % size] : 0;
    }
    sm_fbox_in_t in;
    sm_fbox_in_attach(&in, base, ring_size);
    in.seq = 0 == seq ? 1 : seq;
    const uint8_t *ring_end = in.ring + ring_size;
    /* Every message takes at least SM_FBOX_ALIGN bytes: a few laps at most. */
    for (uint32_t n = 0; n < 4 * ring_size / SM_FBOX_ALIGN; ++n) {
        sm_fbox_msg_t msg;
        int rc = sm_fbox_peek(&in, &msg);
        if (rc <= 0) {
            break;
        }
        if (msg.payload < in.ring || msg.payload + msg.size > ring_end) {
            abort();
        }
        /* Read it all, as the receiver copies it out. */
        volatile uint8_t sum = 0;
        for (uint32_t i = 0; i < msg.size; ++i) {
            sum = (uint8_t) (sum + msg.payload[i]);
        }
        (void) sum;
        sm_fbox_consume(&in, &msg);
        sm_fbox_publish(&in);
    }
    free(base);
    return 0;
}
