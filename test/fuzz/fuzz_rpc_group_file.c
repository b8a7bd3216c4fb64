/*
 * Fuzz target: the rpc group file parser (what opal_rpc_group_attach
 * reads). Whatever the bytes, parsing succeeds with every member's line
 * filled, or fails with OPAL_ERR_PARSE and a reason naming the source
 * and a line; nothing leaks.
 */
#include "opal/opal_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/rpc/base/rpc_base_group_file.h"
#include "opal/util/opal_error.h"
#include "test/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rpc_group_file_t file;
    char why[512] = "";
    int rc =
        opal_rpc_base_group_file_parse((const char *) data, size, "fuzz", &file, why, sizeof(why));
    if (OPAL_SUCCESS == rc) {
        if (0 == file.size || '\0' == file.name[0]) {
            abort();
        }
        for (uint32_t r = 0; r < file.size; ++r) {
            if (NULL == file.uris[r] || NULL == file.hosts[r] || file.pids[r] <= 0 ||
                0 == file.lines[r]) {
                abort();
            }
        }
        opal_rpc_base_group_file_free(&file);
    } else if (OPAL_ERR_PARSE == rc) {
        if (0 != strncmp(why, "fuzz:", 5) || NULL != file.uris) {
            abort();
        }
    } else if (OPAL_ERR_OUT_OF_RESOURCE != rc) {
        abort();
    }
    return 0;
}
