/* Fuzz target: what btl/sm reads about a peer before it maps the peer's
 * segment -- the modex record (mca_btl_sm_modex_check), the identity in
 * it (mca_btl_sm_identity_compare) -- and then the layout the peer wrote
 * at the start of its segment (mca_btl_sm_layout_check against the size
 * of the mapping). Input: u16 record size, the record, u64 mapping size,
 * the layout. */
#include "opal/opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/btl/sm/btl_sm_layout.h"
#include "opal/util/opal_error.h"
#include "test/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) {
        return 0;
    }
    size_t record = (size_t) data[0] | (size_t) data[1] << 8;
    data += 2;
    size -= 2;
    if (record > size) {
        record = size;
    }
    char why[256] = "";
    sm_modex_t modex;
    /* The record in a buffer of its own size, as the modex returns it. */
    uint8_t *value = malloc(record > 0 ? record : 1);
    if (NULL == value) {
        return 0;
    }
    memcpy(value, data, record);
    int rc = mca_btl_sm_modex_check(value, record, &modex, why, sizeof(why));
    free(value);
    if (OPAL_SUCCESS == rc) {
        sm_identity_t mine;
        memset(&mine, 0, sizeof(mine));
        (void) mca_btl_sm_identity_get(&mine);
        (void) mca_btl_sm_identity_compare(&mine, &modex.identity);
    } else if (OPAL_ERR_UNREACH != rc || '\0' == why[0]) {
        abort();
    }
    data += record;
    size -= record;
    uint64_t mapped = 0;
    if (size < sizeof(mapped) + sizeof(sm_layout_t)) {
        return 0;
    }
    memcpy(&mapped, data, sizeof(mapped));
    sm_layout_t *layout = malloc(sizeof(*layout));
    if (NULL == layout) {
        return 0;
    }
    memcpy(layout, data + sizeof(mapped), sizeof(*layout));
    why[0] = '\0';
    rc = mca_btl_sm_layout_check(layout, (size_t) mapped, why, sizeof(why));
    if (OPAL_SUCCESS != rc && (OPAL_ERR_BAD_VALUE != rc || '\0' == why[0])) {
        abort();
    }
    free(layout);
    return 0;
}
