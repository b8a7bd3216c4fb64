/* Fuzz target: btl/verbs's modex record as a peer publishes it
 * (mca_btl_verbs_modex_unpack). Input: u8 owner rank, u8 job size, the
 * record. A record is accepted, declined with a reason, or refused as
 * malformed with a reason, never read past its end; an accepted one
 * encodes back to the same bytes. */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/verbs/btl_verbs_modex.h"
#include "opal/util/opal_error.h"
#include "test/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) {
        return 0;
    }
    uint32_t owner = data[0], job_size = data[1];
    data += 2;
    size -= 2;
    /* The record in a buffer of its own size, as the modex returns it. */
    uint8_t *blob = malloc(size > 0 ? size : 1);
    if (NULL == blob) {
        return 0;
    }
    memcpy(blob, data, size);
    char why[200] = "";
    mca_btl_verbs_modex_t m;
    int rc = mca_btl_verbs_modex_unpack(blob, size, owner, job_size, &m, why, sizeof(why));
    if (OPAL_SUCCESS == rc) {
        uint32_t *qpns = calloc((size_t) m.nports * (m.count > 0 ? m.count : 1), sizeof(*qpns));
        const uint32_t *arrays[MCA_BTL_VERBS_MODEX_PORTS_MAX];
        if (NULL == qpns) {
            abort();
        }
        for (unsigned p = 0; p < m.nports; ++p) {
            arrays[p] = qpns + (size_t) p * m.count;
            for (uint32_t i = 0; i < m.count; ++i) {
                qpns[(size_t) p * m.count + i] = mca_btl_verbs_modex_qpn(&m.ports[p], i);
            }
        }
        void *again = NULL;
        size_t again_size = 0;
        if (OPAL_SUCCESS != mca_btl_verbs_modex_pack(&m, arrays, &again, &again_size) ||
            again_size != size || 0 != memcmp(again, blob, size)) {
            abort();
        }
        free(again);
        free(qpns);
        for (unsigned p = 0; p < m.nports; ++p) {
            char gid[64];
            mca_btl_verbs_gid_string(m.ports[p].gid, gid, sizeof(gid));
            /* Pairing with itself: every port finds its own place. */
            if ((int) p != mca_btl_verbs_modex_pair(&m, p, &m, why, sizeof(why))) {
                abort();
            }
        }
    } else if ((OPAL_ERR_BAD_VALUE != rc && OPAL_ERR_NOT_AVAILABLE != rc) ||
               (OPAL_ERR_BAD_VALUE == rc && '\0' == why[0])) {
        abort();
    }
    free(blob);
    return 0;
}
