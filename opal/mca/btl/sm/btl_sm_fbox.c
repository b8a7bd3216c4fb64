/*
 * btl/sm's fast boxes: setting one up (the fast paths are inline in
 * btl_sm_fbox.h).
 */
#include "opal/opal_config.h"

#include <string.h>

#include "opal/mca/btl/sm/btl_sm_fbox.h"

void mca_btl_sm_fbox_format(sm_fbox_out_t *out, void *base, uint32_t ring_size)
{
    /* Zero holds no current header (sequence numbers skip 0). The
     * receiver learns of the box only from a message posted after this,
     * through the FIFO, whose release orders these stores before it. */
    memset(base, 0, SM_FBOX_CTL_SIZE + (size_t) ring_size);
    out->ctl = (sm_fbox_ctl_t *) base;
    out->ring = (uint8_t *) base + SM_FBOX_CTL_SIZE;
    out->size = ring_size;
    out->end = 0;
    out->start = 0;
    out->seq = 1;
}
