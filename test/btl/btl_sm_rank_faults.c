/*
 * btl_sm_rank: peers that die, peers that scribble on what others read,
 * and a receiver that sleeps (blocking mode).
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/runtime/opal_progress.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "test/btl/btl_sm_rank.h"

/* Survivors (every rank but the last) tell each other they are done and
 * wait for each other's word, without a fence (the last rank is gone or
 * misbehaving). */
static void survivors_meet(uint32_t survivors)
{
    sm_rank_ctrl_t ctrl = {.kind = SM_CTRL_FINAL, .src = sm_rank_me};
    for (uint32_t r = 0; r < survivors; ++r) {
        if (r != sm_rank_me && OPAL_SUCCESS != sm_rank_send_ctrl(r, &ctrl)) {
            sm_rank_fail("final word to rank %u", r);
        }
    }
    for (uint32_t r = 0; r < survivors; ++r) {
        if (r != sm_rank_me) {
            sm_rank_wait32(&sm_rank_ctrl_count[r][SM_CTRL_FINAL], 1, "survivors' final word");
        }
    }
}

void sm_rank_case_kill(void)
{
    const uint32_t victim = sm_rank_size - 1;
    if (sm_rank_size < 3) {
        sm_rank_fail("the kill case needs 3 ranks");
    }
    if (OPAL_SUCCESS != opal_fence(false)) {
        sm_rank_fail("fence");
    }
    /* Everybody streams messages to everybody; the victim dies part of
     * the way, with messages to and from it in flight. */
    uint32_t seq[64] = {0};
    for (uint32_t round = 0;; ++round) {
        for (uint32_t dst = 0; dst < sm_rank_size; ++dst) {
            if (dst == sm_rank_me || sm_rank_failed[dst]) {
                continue;
            }
            int rc = sm_rank_send_data(dst, seq[dst], 1500 + (round % 7) * 1000);
            if (OPAL_SUCCESS == rc) {
                ++seq[dst];
            } else if (OPAL_ERR_UNREACH != rc || dst != victim) {
                sm_rank_fail("send to rank %u: %s", dst, opal_strerror(rc));
            }
        }
        opal_progress();
        if (sm_rank_me == victim && 200 == round) {
            raise(SIGKILL);
        }
        if (sm_rank_me != victim && sm_rank_failed[victim]) {
            break;
        }
        if (round > 100000000u) {
            sm_rank_fail("no error callback for rank %u", victim);
        }
        if (sm_rank_now() > 50.0) {
            sm_rank_fail("no error callback for rank %u after 50 s", victim);
        }
    }
    int rc = sm_rank_send_data(victim, seq[victim], 10);
    if (OPAL_ERR_UNREACH != rc) {
        sm_rank_fail("send to the dead rank %u: %s, not Unreachable", victim, opal_strerror(rc));
    }
    survivors_meet(victim);
    /* Every segment was unlinked once mapped: the dead rank's too. */
    printf("rank %u kill ok: error callback for rank %u, sends to it unreachable, shm "
           "leftovers %d\n",
           sm_rank_me, victim, sm_rank_shm_leftovers());
    /* The test looks for this job's files in /dev/shm after it ended:
     * other jobs of this user may run at the same time. */
    if (0 == sm_rank_me) {
        const char *prefix = getenv("OPAL_ORTE_SHM_PREFIX");
        printf("rank 0 shm prefix [%s]\n", NULL == prefix ? "" : prefix);
    }
}

void sm_rank_case_fault(const char *kind)
{
    const uint32_t faulty = sm_rank_size - 1;
    /* Large enough to go through fragments, not inline in fast boxes;
     * few enough that the faulty rank never waits for credit from peers
     * that dropped it. */
    const uint32_t count = 40;
    const size_t len = 2000;
    const bool blames = 0 != strcmp(kind, "fifo_tail");
    /* Everybody has added everybody before anything goes wrong. */
    if (OPAL_SUCCESS != opal_fence(false)) {
        sm_rank_fail("fence");
    }
    if (sm_rank_me == faulty) {
        for (uint32_t i = 0; i < count; ++i) {
            for (uint32_t dst = 0; dst < faulty; ++dst) {
                (void) sm_rank_send_data(dst, i, len);
            }
        }
        printf("rank %u fault ok: sent %u messages to each\n", sm_rank_me, count);
        return;
    }
    for (uint32_t i = 0; i < count; ++i) {
        for (uint32_t dst = 0; dst < faulty; ++dst) {
            if (dst != sm_rank_me) {
                int rc = sm_rank_send_data(dst, i, len);
                if (OPAL_SUCCESS != rc) {
                    sm_rank_fail("send to rank %u: %s", dst, opal_strerror(rc));
                }
            }
        }
    }
    for (uint32_t src = 0; src < faulty; ++src) {
        if (src != sm_rank_me) {
            sm_rank_wait(&sm_rank_received[src], count, "messages from a good peer");
        }
    }
    double deadline = sm_rank_now() + 30.0;
    if (blames) {
        while (!sm_rank_failed[faulty] && sm_rank_now() < deadline) {
            opal_progress();
        }
        if (!sm_rank_failed[faulty]) {
            sm_rank_fail("no error callback for the scribbling rank %u", faulty);
        }
    } else {
        /* A scribbled FIFO tail is repaired by its owner; nothing is lost. */
        sm_rank_wait(&sm_rank_received[faulty], count, "messages from the rank that scribbled");
    }
    /* A while of progress, so that the receivers' periodic checks (every
     * btl_sm_liveness_interval) have run since the fault. */
    double until = sm_rank_now() + 0.2;
    while (sm_rank_now() < until) {
        opal_progress();
    }
    survivors_meet(faulty);
    printf("rank %u fault ok: %" PRIu64 " messages from rank %u before %s\n", sm_rank_me,
           sm_rank_received[faulty], faulty, blames ? "dropping it" : "the end");
}

void sm_rank_case_blocking(int messages)
{
    if (sm_rank_size < 2 || sm_rank_me > 1) {
        return;
    }
    if (0 == sm_rank_me) {
        /* Only opal_progress_wait: a lost wake-up would hang here (mcarun's
         * timeout ends the test). */
        uint64_t waits = 0;
        while (sm_rank_received[1] < (uint64_t) messages) {
            int rc = opal_progress_wait(-1);
            if (rc < 0) {
                sm_rank_fail("opal_progress_wait: %s", opal_strerror(rc));
            }
            ++waits;
        }
        sm_rank_ctrl_t ctrl = {.kind = SM_CTRL_FINAL, .src = 0};
        sm_rank_send_ctrl(1, &ctrl);
        printf("rank 0 blocking ok: %d messages in %" PRIu64 " waits\n", messages, waits);
    } else {
        for (int i = 0; i < messages; ++i) {
            /* Pauses let rank 0 go idle and sleep between messages. */
            if (0 == i % 5) {
                usleep(2000);
            }
            if (OPAL_SUCCESS != sm_rank_send_data(0, (uint32_t) i, (size_t) (i % 3) * 3000)) {
                sm_rank_fail("send %d", i);
            }
        }
        while (0 == sm_rank_ctrl_count[0][SM_CTRL_FINAL]) {
            if (opal_progress_wait(-1) < 0) {
                sm_rank_fail("opal_progress_wait");
            }
        }
        printf("rank 1 blocking ok\n");
    }
}
