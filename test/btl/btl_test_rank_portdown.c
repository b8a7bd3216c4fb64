/*
 * The portdown case: a job of two ranks whose peers are reached by two
 * modules of one component (btl/verbs on two ports, e.g. rxe0 and rxe1 in
 * the soft-RoCE guest). One module's port (or device) is made to fail by
 * a command rank 0 runs; every rank must then get the error callback from
 * that module for its peer, with a reason naming the port, see that
 * module refuse to send, and go on exchanging messages over the other
 * module.
 *
 *   btl_test_rank portdown TRANSPORT COMMAND
 *
 * TRANSPORT is the victim module's btl_transport ("rxe1:1"); COMMAND is
 * run with system() by rank 0 once both ranks have exchanged a message
 * over each module ("ip link set rxv0 down"). The victim must not be the
 * module the multiplexer sends over (the barrier and control messages
 * use it). The error callback is this case's own: the peer stays alive.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/runtime/opal_progress.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "test/btl/btl_test_rank.h"

/* What each module received from the peer, and the victim's reports. */
static unsigned received[MCA_BTL_BASE_MUX_MAX];
static mca_btl_base_module_t *modules[MCA_BTL_BASE_MUX_MAX];
static int nmodules;
static const char *victim_transport;
static bool victim_reported;
static bool other_reported;
static char victim_info[512];

static void portdown_cb(struct mca_btl_base_module_t *btl,
                        const mca_btl_base_receive_descriptor_t *desc)
{
    (void) desc;
    for (int i = 0; i < nmodules; ++i) {
        if (modules[i] == btl) {
            ++received[i];
        }
    }
}

int btl_test_portdown_register(void)
{
    return mca_btl_base_am_register(BTL_TEST_TAG_PORTDOWN, portdown_cb, NULL);
}

static void error_cb(struct mca_btl_base_module_t *btl, int32_t flags, const opal_proc_t *errproc,
                     const char *info)
{
    if (0 != (flags & MCA_BTL_ERROR_FLAGS_PEER_CLOSED)) {
        return;
    }
    bool victim = NULL != btl && NULL != btl->btl_transport &&
                  0 == strcmp(btl->btl_transport, victim_transport);
    btl_test_say("error callback from %s (%s, flags 0x%x) for %s: %s", btl_test_module_name(btl),
                 NULL != btl ? btl->btl_transport : "?", (unsigned) flags,
                 NULL != errproc ? "the peer" : "no peer", NULL != info ? info : "");
    if (victim && NULL != errproc && NULL != info) {
        victim_reported = true;
        snprintf(victim_info, sizeof(victim_info), "%s", info);
    } else {
        other_reported = true;
    }
}

/* One message of this rank's number over module i to the peer. */
static int send_over(int i, struct mca_btl_base_endpoint_t *endpoint)
{
    mca_btl_base_module_t *btl = modules[i];
    uint32_t body = btl_test.rank;
    if (NULL != btl->btl_sendi) {
        int rc = btl->btl_sendi(btl, endpoint, &body, sizeof(body), NULL, 0, 0,
                                MCA_BTL_DES_FLAGS_BTL_OWNERSHIP, BTL_TEST_TAG_PORTDOWN, NULL);
        if (OPAL_ERR_RESOURCE_BUSY != rc) {
            return rc;
        }
    }
    mca_btl_base_descriptor_t *des =
        btl->btl_alloc(btl, endpoint, 0, sizeof(body), MCA_BTL_DES_FLAGS_BTL_OWNERSHIP);
    if (NULL == des) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    memcpy(des->des_segments[0].seg_addr, &body, sizeof(body));
    int rc = btl->btl_send(btl, endpoint, des, BTL_TEST_TAG_PORTDOWN);
    if (OPAL_SUCCESS != rc && 1 != rc) {
        btl->btl_free(btl, des);
    }
    return 1 == rc ? OPAL_SUCCESS : rc;
}

/* Sends over module i until it is taken; false after saying why. */
static bool send_until_taken(int i, struct mca_btl_base_endpoint_t *endpoint)
{
    for (;;) {
        int rc = send_over(i, endpoint);
        if (OPAL_SUCCESS == rc) {
            return true;
        }
        if (OPAL_ERR_RESOURCE_BUSY != rc || !btl_test_before_deadline()) {
            btl_test_fail("sending over %s: %s", modules[i]->btl_transport, opal_strerror(rc));
            return false;
        }
        (void) opal_progress();
    }
}

typedef struct {
    int module;
    unsigned count;
} want_t;

static bool got(void *arg)
{
    const want_t *w = arg;
    return received[w->module] >= w->count;
}

static bool reported(void *arg)
{
    (void) arg;
    return victim_reported;
}

/* Rank 0 runs command (the others return true at once); false after
 * saying how it failed. */
static bool rank0_runs(const char *command)
{
    if (0 != btl_test.rank) {
        return true;
    }
    btl_test_say("running: %s", command);
    int status = system(command);
    if (0 != status) {
        btl_test_fail("'%s' failed (status %d)", command, status);
        return false;
    }
    return true;
}

bool btl_test_case_portdown(int argc, char **argv)
{
    if (argc < 4 || 2 != btl_test.size) {
        btl_test_fail("usage: portdown TRANSPORT COMMAND, in a job of two ranks");
        return false;
    }
    victim_transport = argv[2];
    uint32_t other = 1 - btl_test.rank;
    mca_btl_base_peer_t *peer = btl_test_peer(other);
    int victim = -1, survivor = -1;
    nmodules = peer->send_count;
    for (int i = 0; i < nmodules; ++i) {
        modules[i] = peer->send[i].btl;
        btl_test_say("module %d: %s %s", i, btl_test_module_name(modules[i]),
                     NULL != modules[i]->btl_transport ? modules[i]->btl_transport : "?");
        if (NULL != modules[i]->btl_transport &&
            0 == strcmp(modules[i]->btl_transport, victim_transport)) {
            victim = i;
        } else if (survivor < 0) {
            survivor = i;
        }
    }
    if (victim < 0 || survivor < 0) {
        btl_test_fail("the peer is not reached over %s and another module", victim_transport);
        return false;
    }
    if (0 == victim) {
        btl_test_fail("%s is the module the multiplexer sends over: choose another",
                      victim_transport);
        return false;
    }
    (void) mca_btl_base_register_error_cb(error_cb);

    /* Both modules carry a message each way. */
    for (int i = 0; i < nmodules; ++i) {
        if (!send_until_taken(i, peer->send[i].endpoint)) {
            return false;
        }
        want_t w = {i, 1};
        if (!btl_test_wait(got, &w, "a message over each module")) {
            return false;
        }
    }
    btl_test_say("a message each way over %s and %s", modules[survivor]->btl_transport,
                 modules[victim]->btl_transport);
    if (!btl_test_barrier()) {
        return false;
    }
    if (!rank0_runs(argv[3])) {
        return false;
    }
    if (!btl_test_wait(reported, NULL, "the error callback of the failed port")) {
        return false;
    }
    char want[96];
    snprintf(want, sizeof(want), "%s", victim_transport);
    if (NULL == strstr(victim_info, want)) {
        btl_test_fail("the reason does not name %s: %s", want, victim_info);
        return false;
    }
    if (other_reported) {
        btl_test_fail("another module reported an error too");
        return false;
    }
    int rc = send_over(victim, peer->send[victim].endpoint);
    if (OPAL_SUCCESS == rc || OPAL_ERR_RESOURCE_BUSY == rc) {
        btl_test_fail("%s still takes messages after its failure (%s)", victim_transport,
                      opal_strerror(rc));
        return false;
    }
    btl_test_say("%s refuses to send: %s", victim_transport, opal_strerror(rc));
    /* The other module goes on: three more each way (the peer's may
     * have come already, while this rank waited for its report). */
    for (int k = 0; k < 3; ++k) {
        if (!send_until_taken(survivor, peer->send[survivor].endpoint)) {
            return false;
        }
    }
    want_t w = {survivor, 1 + 3};
    if (!btl_test_wait(got, &w, "messages over the other module after the failure")) {
        return false;
    }
    btl_test_say("%s still carries messages after %s failed", modules[survivor]->btl_transport,
                 victim_transport);
    return true;
}

/* ------------------------------------------------------------ linkdown */

/*
 * The linkdown case: a job of two ranks on two hosts whose only path is
 * one link (the two network namespaces of test/btl/netns). After a message
 * each way, rank 0 cuts the link (CUT, e.g. "ip link set veth0 down"):
 * nothing is closed, no packet says the peer is gone, as when a host loses
 * power. What each rank must then see depends on MODE:
 *
 *   linkdown idle SECONDS CUT          no traffic after the cut: the error
 *                                      callback for the peer within SECONDS,
 *                                      its reason a time-out (keepalive)
 *   linkdown busy SECONDS CUT          both keep sending: the same (sent
 *                                      data unacknowledged, TCP_USER_TIMEOUT)
 *   linkdown none SECONDS CUT RESTORE  the control: no error callback for
 *                                      SECONDS of idleness (keepalive off),
 *                                      then rank 0 restores the link and a
 *                                      message goes each way again
 *
 * The link is left cut in the first two modes: the command that runs the
 * job restores it afterwards.
 */
static char lost_info[512];

static void linkdown_cb(struct mca_btl_base_module_t *btl, int32_t flags,
                        const opal_proc_t *errproc, const char *info)
{
    if (0 != (flags & MCA_BTL_ERROR_FLAGS_PEER_CLOSED)) {
        return;
    }
    if (NULL != errproc && !btl_test.failed[errproc->proc_name.vpid] && NULL != info) {
        snprintf(lost_info, sizeof(lost_info), "%s", info);
    }
    btl_test_error_cb(btl, flags, errproc, info);
}

/* A message each way over the module the multiplexer sends over; want is
 * the count of messages from the peer to wait for. */
static bool exchange(mca_btl_base_peer_t *peer, unsigned want)
{
    if (!send_until_taken(0, peer->send[0].endpoint)) {
        return false;
    }
    want_t w = {0, want};
    return btl_test_wait(got, &w, "a message from the peer");
}

bool btl_test_case_linkdown(int argc, char **argv)
{
    bool idle = argc >= 5 && 0 == strcmp(argv[2], "idle");
    bool busy = argc >= 5 && 0 == strcmp(argv[2], "busy");
    bool none = argc >= 6 && 0 == strcmp(argv[2], "none");
    char *end = NULL;
    unsigned long seconds = argc >= 5 ? strtoul(argv[3], &end, 10) : 0;
    if ((!idle && !busy && !none) || NULL == end || '\0' != *end || 0 == seconds ||
        2 != btl_test.size) {
        btl_test_fail("usage: linkdown idle|busy SECONDS CUT, or linkdown none SECONDS CUT "
                      "RESTORE, in a job of two ranks");
        return false;
    }
    const char *cut = argv[4];
    uint32_t other = 1 - btl_test.rank;
    mca_btl_base_peer_t *peer = btl_test_peer(other);
    nmodules = 1;
    modules[0] = peer->send[0].btl;
    btl_test.expect_failures = !none;
    (void) mca_btl_base_register_error_cb(linkdown_cb);
    if (!exchange(peer, 1) || !btl_test_barrier()) {
        return false;
    }
    btl_test_say("a message each way over %s", btl_test_module_name(modules[0]));
    if (0 == btl_test.rank) {
        /* Half a second for the last acknowledgements (TCP delays one by up
         * to 200 ms): data still unacknowledged at the cut would be the
         * busy mode's case, which keepalive does not cover. */
        uint64_t settled = opal_timer_ns() + UINT64_C(500000000);
        while (opal_timer_ns() < settled) {
            (void) opal_progress();
        }
    }
    if (!rank0_runs(cut)) {
        return false;
    }
    uint64_t start = opal_timer_ns();
    uint64_t until = start + seconds * UINT64_C(1000000000);
    uint64_t n = 0;
    while (!btl_test.failed[other] && opal_timer_ns() < until) {
        if (busy) {
            (void) send_over(0, peer->send[0].endpoint);
        }
        (void) opal_progress();
        if (0 == ++n % 1024 && btl_test.broken) {
            return false;
        }
    }
    double after = (double) (opal_timer_ns() - start) / 1e9;
    if (none) {
        if (btl_test.failed[other]) {
            btl_test_fail("rank %" PRIu32 " was reported failed %.1f s after the cut, with "
                          "keepalive off and nothing sent: %s",
                          other, after, lost_info);
            return false;
        }
        btl_test_say("no error callback in %lu s of idleness with the link cut", seconds);
        if (!rank0_runs(argv[5]) || !exchange(peer, 2)) {
            return false;
        }
        btl_test_say("the connection carries messages again once the link is back");
        return true;
    }
    if (!btl_test.failed[other]) {
        btl_test_fail("no error callback for rank %" PRIu32 " within %lu s of the cut (%s)", other,
                      seconds, busy ? "sending" : "idle");
        return false;
    }
    if (NULL == strstr(lost_info, "timed out")) {
        btl_test_fail("the reason is not a time-out: %s", lost_info);
        return false;
    }
    btl_test_say("lost rank %" PRIu32 " %.1f s after the cut (%s)", other, after,
                 busy ? "sending" : "idle");
    return true;
}
