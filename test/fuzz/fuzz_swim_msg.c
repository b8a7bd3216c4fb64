/*
 * Fuzz target: the SWIM message decoder, and the state machine behind it.
 * Whatever the bytes, decoding returns OPAL_SUCCESS or OPAL_ERR_PROTOCOL
 * with a reason, reads nothing past the buffer, and an accepted message
 * re-encodes to the same bytes; a member of a group of 16 then takes it
 * (OPAL_SUCCESS or OPAL_ERR_PROTOCOL, nothing else), and what it sends in
 * answer encodes.
 */
#include "opal/opal_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/rpc/rpc_swim.h"
#include "opal/util/opal_error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t fake_clock = 1000;

static int fake_send(void *arg, uint32_t to, const opal_swim_msg_t *msg)
{
    uint8_t buf[24 + 13 * OPAL_SWIM_MAX_UPDATES];
    size_t len;
    (void) arg;
    if (to >= 16 || OPAL_SUCCESS != opal_swim_msg_encode(msg, buf, sizeof(buf), &len)) {
        abort();
    }
    return OPAL_SUCCESS;
}

static uint64_t fake_now(void *arg)
{
    (void) arg;
    return fake_clock;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const opal_swim_ops_t ops = {.send = fake_send, .now_ms = fake_now};
    opal_swim_msg_t msg;
    const char *why = NULL;
    int rc = opal_swim_msg_decode(&msg, data, size, &why);
    if (OPAL_SUCCESS != rc) {
        if (OPAL_ERR_PROTOCOL != rc || NULL == why) {
            abort();
        }
        return 0;
    }
    uint8_t again[24 + 13 * OPAL_SWIM_MAX_UPDATES];
    size_t len = 0;
    if (OPAL_SUCCESS != opal_swim_msg_encode(&msg, again, sizeof(again), &len) || len != size ||
        0 != memcmp(again, data, size)) {
        abort();
    }
    opal_swim_params_t p;
    opal_swim_params_default(&p);
    opal_swim_t *s = NULL;
    if (OPAL_SUCCESS != opal_swim_create(&p, 0, 16, &ops, NULL, &s)) {
        abort();
    }
    rc = opal_swim_recv(s, &msg);
    if (OPAL_SUCCESS != rc && OPAL_ERR_PROTOCOL != rc) {
        abort();
    }
    /* Whatever it learned, time goes on without a crash. */
    for (int i = 0; i < 30; ++i) {
        fake_clock += 500;
        (void) opal_swim_tick(s);
    }
    opal_swim_destroy(s);
    return 0;
}
