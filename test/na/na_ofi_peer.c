/*
 * A na server started alone (not in a job), for na_ofi_procs_test:
 *
 *   na_ofi_peer <info> <uri-file> [busy]
 *
 * Opens <info> listening, writes its URI to <uri-file> (whole, by rename)
 * and serves unexpected requests until "quit":
 *   "echo..."  the same bytes back as an expected message (same tag)
 *   "memh"     a read-write handle over 16 segments of 1000 bytes (byte i
 *              of the concatenation is i * 31 % 251), serialized, back
 *              as an expected message
 */
#include "opal/opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/opal_error.h"
#include "test/na/na_test_support.h"

enum { NSEG = 16, SEG = 1000 };

int main(int argc, char **argv)
{
    if (3 != argc && !(4 == argc && 0 == strcmp(argv[3], "busy"))) {
        fprintf(stderr, "usage: na_ofi_peer <info> <uri-file> [busy]\n");
        return 2;
    }
    na_test_init();
    na_test_end_t end;
    /* busy: the class busy-polls (its CQ has no wait fd), for na_ofi_lat. */
    opal_na_init_info_t opts = {.busy_wait = 4 == argc};
    if (OPAL_SUCCESS != opal_na_initialize_opt(argv[1], true, &opts, &end.cls) ||
        OPAL_SUCCESS != opal_na_context_create(end.cls, 0, &end.ctx)) {
        return 1;
    }
    char *uri = na_test_uri(&end);
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", argv[2]);
    FILE *f = fopen(tmp, "w");
    if (NULL == uri || NULL == f || fprintf(f, "%s\n", uri) < 0 || 0 != fclose(f) ||
        0 != rename(tmp, argv[2])) {
        return 1;
    }
    free(uri);

    static unsigned char mem[NSEG * SEG];
    opal_na_segment_t segs[NSEG];
    for (size_t i = 0; i < sizeof(mem); ++i) {
        mem[i] = (unsigned char) (i * 31 % 251);
    }
    for (int i = 0; i < NSEG; ++i) {
        segs[i].base = mem + i * SEG;
        segs[i].len = SEG;
    }
    opal_na_mem_handle_t *mh = NULL;
    if (OPAL_SUCCESS !=
            opal_na_mem_handle_create_segments(end.cls, segs, NSEG, OPAL_NA_MEM_READ_WRITE, &mh) ||
        OPAL_SUCCESS != opal_na_mem_register(end.cls, mh)) {
        return 1;
    }
    size_t blob_size = opal_na_mem_handle_get_serialize_size(end.cls, mh);
    void *blob = malloc(blob_size);
    if (OPAL_SUCCESS != opal_na_mem_handle_serialize(end.cls, blob, blob_size, mh)) {
        return 1;
    }
    char req[4096];
    for (;;) {
        na_test_result_t r = {0}, w = {0};
        if (OPAL_SUCCESS != opal_na_msg_recv_unexpected(end.cls, end.ctx, na_test_record, &r, req,
                                                        sizeof(req), NULL, NULL) ||
            !na_test_wait(&end, 1, &r.calls, 1, 600) || OPAL_SUCCESS != r.ret) {
            return 1;
        }
        if (4 == r.size && 0 == memcmp(req, "quit", 4)) {
            opal_na_addr_free(end.cls, r.source);
            break;
        }
        const void *reply = req;
        size_t reply_size = r.size;
        if (4 == r.size && 0 == memcmp(req, "memh", 4)) {
            reply = blob;
            reply_size = blob_size;
        }
        if (OPAL_SUCCESS != opal_na_msg_send_expected(end.cls, end.ctx, na_test_record, &w, reply,
                                                      reply_size, NULL, r.source, 0, r.tag, NULL) ||
            !na_test_wait(&end, 1, &w.calls, 1, 600)) {
            return 1;
        }
        opal_na_addr_free(end.cls, r.source);
    }
    free(blob);
    opal_na_mem_handle_free(end.cls, mh);
    na_test_close(&end);
    na_test_fini();
    return 0;
}
