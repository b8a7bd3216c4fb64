/*
 * The server of the multi-process rpc tests, started alone:
 *   rpc_peer <na info> <uri file>
 * serves the test protocol on contexts 0 and 1 (progressed in turn),
 * writes its URI to the file once ready, and exits after the stop
 * operation (or after 120 s, so a failed test leaves nothing behind).
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "opal/mca/rpc/rpc.h"
#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "test/rpc/rpc_test_proto.h"

int main(int argc, char **argv)
{
    volatile bool stop = false;
    opal_rpc_context_t *ctx[2] = {NULL, NULL};
    if (3 != argc) {
        fprintf(stderr, "usage: rpc_peer <na info> <uri file>\n");
        return 2;
    }
#ifdef RPC_TEST_PLUGIN_DIRS
    setenv("OPAL_MCA_mca_base_component_path", RPC_TEST_PLUGIN_DIRS, 0);
#endif
    if (OPAL_SUCCESS != opal_init_util(&argc, &argv) ||
        OPAL_SUCCESS != opal_rpc_init(argv[1], true) ||
        OPAL_SUCCESS != rpc_test_proto_register(&stop) ||
        OPAL_SUCCESS != opal_rpc_context_create(0, &ctx[0]) ||
        OPAL_SUCCESS != opal_rpc_context_create(1, &ctx[1])) {
        fprintf(stderr, "rpc_peer: could not open %s\n", argv[1]);
        return 1;
    }
    char uri[4096];
    size_t size = sizeof(uri);
    if (OPAL_SUCCESS != opal_rpc_self_uri(uri, &size)) {
        return 1;
    }
    char tmp[600];
    snprintf(tmp, sizeof(tmp), "%s.tmp", argv[2]);
    FILE *f = fopen(tmp, "w");
    if (NULL == f) {
        return 1;
    }
    fprintf(f, "%s\n", uri);
    fclose(f);
    rename(tmp, argv[2]);
    time_t deadline = time(NULL) + 120;
    while (!stop && time(NULL) < deadline) {
        (void) opal_rpc_progress(ctx[0], 1);
        (void) opal_rpc_progress(ctx[1], 0);
    }
    /* Let the stop's reply leave. */
    for (int i = 0; i < 50; ++i) {
        (void) opal_rpc_progress(ctx[0], 1);
    }
    (void) opal_rpc_context_destroy(ctx[1]);
    (void) opal_rpc_context_destroy(ctx[0]);
    (void) opal_rpc_finalize();
    (void) opal_finalize_util();
    return stop ? 0 : 3;
}
