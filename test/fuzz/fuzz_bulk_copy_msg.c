/*
 * Fuzz target: bulk/copy's request and reply decoders (bulk_copy_wire.c),
 * run by an origin's bulk service on every request a peer sends and by a
 * requester on every answer. The input is read as both. A request that
 * decodes is within the limits and encodes back to the same header; a
 * reply that decodes is a success of exactly the bytes expected or a
 * refusal with a known error code and nothing after it.
 */
#include "opal/opal_config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/bulk/copy/bulk_copy_wire.h"
#include "opal/util/opal_error.h"
#include "test/fuzz/fuzz.h"

static void check_request(const uint8_t *data, size_t size)
{
    /* The limits of a class whose messages hold 256 bytes. */
    const bulk_copy_limits_t limits = {.max_tag = (1u << 31) - 1,
                                       .pull_frag = 256 - BULK_COPY_REPLY_HDR,
                                       .push_frag = 256 - BULK_COPY_REQ_HDR};
    bulk_copy_req_t req;
    char why[BULK_COPY_WHY_MAX];
    why[0] = '\0';
    if (OPAL_SUCCESS != bulk_copy_req_decode(data, size, &limits, &req, why)) {
        if ('\0' == why[0]) {
            abort(); /* a refusal says why */
        }
        return;
    }
    bool pull = BULK_COPY_KIND_PULL == req.kind;
    if (req.tag > limits.max_tag || req.length > (pull ? limits.pull_frag : limits.push_frag) ||
        size != BULK_COPY_REQ_HDR + (pull ? 0 : req.length) ||
        (pull ? NULL != req.data : req.data != data + BULK_COPY_REQ_HDR)) {
        abort();
    }
    uint8_t out[BULK_COPY_REQ_HDR];
    bulk_copy_req_encode(&req, out);
    if (0 != memcmp(out, data, BULK_COPY_REQ_HDR)) {
        abort();
    }
}

static void check_reply(const uint8_t *data, size_t size, size_t want)
{
    int32_t status;
    char why[BULK_COPY_WHY_MAX];
    why[0] = '\0';
    if (OPAL_SUCCESS != bulk_copy_reply_decode(data, size, want, &status, why)) {
        if ('\0' == why[0]) {
            abort();
        }
        return;
    }
    if (OPAL_SUCCESS == status
            ? size != BULK_COPY_REPLY_HDR + want
            : (size != BULK_COPY_REPLY_HDR || status > 0 || NULL == opal_strerror_name(status))) {
        abort();
    }
    uint8_t out[BULK_COPY_REPLY_HDR];
    bulk_copy_reply_encode(status, out);
    if (0 != memcmp(out, data, BULK_COPY_REPLY_HDR)) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_request(data, size);
    /* As the answer to a push (no bytes back) and to a pull of what
     * follows the header. */
    check_reply(data, size, 0);
    if (size > BULK_COPY_REPLY_HDR) {
        check_reply(data, size, size - BULK_COPY_REPLY_HDR);
    }
    return 0;
}
