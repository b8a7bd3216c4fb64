/* Fuzz target: a peer's request to share a put / get with this process
 * (btl/sm's SM_MSG_SPLIT, mca_btl_sm_split_check). Input: the message
 * as the peer left it in its segment, of any length. A request the check
 * accepts must describe slices that stay inside both ranges. */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/sm/btl_sm_layout.h"
#include "opal/util/opal_error.h"
#include "test/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* In aligned memory of its own, as in a segment; no more than the
     * message is ever read. */
    sm_split_msg_t msg;
    memset(&msg, 0, sizeof(msg));
    memcpy(&msg, data, size < sizeof(msg) ? size : sizeof(msg));
    sm_split_req_t req;
    char why[128] = "";
    int rc = mca_btl_sm_split_check(&msg, size, &req, why, sizeof(why));
    if (OPAL_SUCCESS != rc) {
        if (OPAL_ERR_PROTOCOL != rc || '\0' == why[0]) {
            abort();
        }
        return 0;
    }
    /* Every slice starts inside the transfer, the last one ends at its
     * end, and neither range wraps. */
    uint64_t last = (uint64_t) (req.slices - 1) * req.slice;
    if (req.slices < 2 || req.slices > SM_SPLIT_MAX_SLICES || 0 == req.slice ||
        last >= req.length || req.length - last > req.slice ||
        req.address + req.length < req.address || req.reg_address + req.length < req.reg_address) {
        abort();
    }
    return 0;
}
