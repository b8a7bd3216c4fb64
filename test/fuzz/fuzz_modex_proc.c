/* Fuzz target: the record every process publishes in the modex under
 * OPAL_PROC_MODEX_KEY ("node=<id>;host=<name>;cpuset=<list>"), decoded by
 * each peer (opal_proc_decode_record) and its cpuset compared with ours
 * (opal_proc_compute_locality). A record that decodes must yield a host
 * name and a locality, or an error naming the bad cpuset. */
#include "opal/opal_config.h"

#include <stdlib.h>

#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_proc_internal.h"
#include "opal/util/opal_error.h"
#include "test/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    opal_proc_t *proc = OBJ_NEW(opal_proc_t);
    if (NULL == proc) {
        return 0;
    }
    int rc = opal_proc_decode_record(3, data, size, proc);
    if (OPAL_SUCCESS == rc) {
        if (NULL == proc->proc_hostname) {
            abort();
        }
        uint16_t locality = 0;
        rc = opal_proc_compute_locality(NULL, 0, "0-1", proc->proc_node_id, proc->proc_cpuset,
                                        &locality);
        if (OPAL_SUCCESS != rc && OPAL_ERR_BAD_VALUE != rc) {
            abort();
        }
    } else if (OPAL_ERR_PROTOCOL != rc && OPAL_ERR_OUT_OF_RESOURCE != rc) {
        abort();
    }
    OBJ_RELEASE(proc);
    return 0;
}
