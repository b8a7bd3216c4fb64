/*
 * An MPI program built with Open MPI that uses opal-mca too, run by
 * test/coexist/coexist_mpi_test under Open MPI's mpirun. Two builds of
 * this file differ only in link order: libopal before libmpi
 * (coexist_rank_opal_first) and after it (coexist_rank_mpi_first). Both
 * libraries define opal_progress, opal_list_t_class, mca_base_var_register
 * and the like under their plain names in the source; opal-mca exports
 * them with its prefix (docs/developer.md, "Exported symbols"), so each
 * library's calls reach its own code whatever the order.
 *
 * Every rank, in this order:
 *   1. MPI_Init and an MPI_Allreduce (sum of the ranks);
 *   2. opal_init_util, objects and a list (OBJ_NEW, append, remove,
 *      OBJ_RELEASE, destructors counted);
 *   3. orte_init (ess/pmix, the PMIx server being mpirun), btl self,sm,
 *      and a ping-pong of checked messages with its partner rank over
 *      btl/sm, which must be the module that reaches it;
 *   4. orte_finalize, opal_finalize_util, a second MPI_Allreduce, then
 *      MPI_Finalize.
 * It prints "rank R: ok (N round trips over sm)" or "rank R: FAILED: why"
 * and exits 1. Needs an even number of ranks.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "opal/class/opal_list.h"
#include "opal/mca/btl/base/base.h"
#include "opal/mca/btl/base/btl_base_mux.h"
#include "opal/runtime/opal_init.h"
#include "opal/runtime/opal_proc.h"
#include "opal/runtime/opal_progress.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "orte/runtime/orte_init.h"

#define PING_TAG    (MCA_BTL_TAG_USER_MIN + 7)
#define ROUND_TRIPS 1000
#define PAYLOAD     64
#define DEADLINE_NS (UINT64_C(120) * 1000000000)

static int my_rank = -1;

static void fail(const char *format, ...) OPAL_PRINTF_LIKE(1, 2);

static void fail(const char *format, ...)
{
    char why[1024];
    va_list ap;
    va_start(ap, format);
    vsnprintf(why, sizeof(why), format, ap);
    va_end(ap);
    printf("rank %d: FAILED: %s\n", my_rank, why);
    fflush(stdout);
}

/* ------------------------------------------------ objects and lists */

typedef struct {
    opal_list_item_t super;
    int value;
} coexist_item_t;

static int destructed;

static void coexist_item_destruct(coexist_item_t *item)
{
    (void) item;
    ++destructed;
}

static OBJ_CLASS_INSTANCE(coexist_item_t, opal_list_item_t, NULL, coexist_item_destruct);

static bool objects_and_lists_work(void)
{
    opal_list_t *list = OBJ_NEW(opal_list_t);
    if (NULL == list) {
        fail("OBJ_NEW(opal_list_t) returned NULL");
        return false;
    }
    for (int i = 0; i < 10; ++i) {
        coexist_item_t *item = OBJ_NEW(coexist_item_t);
        item->value = i;
        opal_list_append(list, &item->super);
    }
    bool ok = 10 == opal_list_get_size(list);
    int expect = 0;
    opal_list_item_t *li;
    while (NULL != (li = opal_list_remove_first(list))) {
        ok = ok && ((coexist_item_t *) li)->value == expect++;
        OBJ_RELEASE(li);
    }
    OBJ_RELEASE(list);
    if (!ok || 10 != destructed || NULL != list) {
        fail("list of 10 items: size, order or destructors wrong (%d destructed)", destructed);
        return false;
    }
    return true;
}

/* ------------------------------------------------ btl/sm ping-pong */

typedef struct {
    uint32_t from;
    uint32_t seq;
    unsigned char pattern[PAYLOAD - 8];
} ping_t;

static struct {
    uint64_t received;
    uint32_t last_seq;
    bool bad;
} inbox;

static void fill(ping_t *msg, uint32_t from, uint32_t seq)
{
    msg->from = from;
    msg->seq = seq;
    for (size_t i = 0; i < sizeof(msg->pattern); ++i) {
        msg->pattern[i] = (unsigned char) (seq * 31 + i + from);
    }
}

static void ping_cb(struct mca_btl_base_module_t *btl,
                    const mca_btl_base_receive_descriptor_t *desc)
{
    (void) btl;
    ping_t msg, expect;
    size_t len = 0;
    for (size_t s = 0; s < desc->des_segment_count; ++s) {
        size_t n = (size_t) desc->des_segments[s].seg_len;
        if (len + n > sizeof(msg)) {
            inbox.bad = true;
            return;
        }
        memcpy((char *) &msg + len, desc->des_segments[s].seg_addr, n);
        len += n;
    }
    if (sizeof(msg) != len) {
        inbox.bad = true;
        return;
    }
    fill(&expect, msg.from, msg.seq);
    if (0 != memcmp(&msg, &expect, sizeof(msg)) ||
        (NULL != desc->proc && desc->proc->proc_name.vpid != msg.from)) {
        inbox.bad = true;
        return;
    }
    inbox.last_seq = msg.seq;
    ++inbox.received;
}

static bool send_to(mca_btl_base_peer_t *peer, uint32_t seq, uint64_t deadline)
{
    ping_t msg;
    fill(&msg, (uint32_t) my_rank, seq);
    for (;;) {
        int rc = mca_btl_base_mux_send_copy(peer, PING_TAG, &msg, sizeof(msg));
        if (OPAL_SUCCESS == rc) {
            return true;
        }
        if (OPAL_ERR_RESOURCE_BUSY != rc) {
            fail("send %" PRIu32 ": %s", seq, opal_strerror(rc));
            return false;
        }
        if (0 == opal_progress()) {
            sched_yield();
        }
        if (opal_timer_ns() > deadline) {
            fail("send %" PRIu32 ": busy until the deadline", seq);
            return false;
        }
    }
}

static bool wait_for(uint64_t count, uint64_t deadline)
{
    unsigned idle = 0;
    while (inbox.received < count && !inbox.bad) {
        if (opal_progress() > 0) {
            idle = 0;
        } else if (++idle > 64) {
            /* Oversubscribed: let the partner run. */
            sched_yield();
            idle = 0;
        }
        if (opal_timer_ns() > deadline) {
            fail("timed out waiting for message %" PRIu64 " (got %" PRIu64 ")", count,
                 inbox.received);
            return false;
        }
    }
    if (inbox.bad) {
        fail("a message arrived damaged or from the wrong rank");
        return false;
    }
    return true;
}

static bool ping_pong(uint32_t partner)
{
    mca_btl_base_peer_t *peer = mca_btl_base_peer_get(partner);
    if (NULL == peer || peer->send_count < 1) {
        fail("no btl module reaches rank %" PRIu32, partner);
        return false;
    }
    const char *name = peer->send[0].btl->btl_component->btl_version.mca_component_name;
    if (0 != strcmp(name, "sm")) {
        fail("rank %" PRIu32 " is reached over %s, not sm", partner, name);
        return false;
    }
    uint64_t deadline = opal_timer_ns() + DEADLINE_NS;
    bool starts = 0 == my_rank % 2;
    for (uint32_t i = 0; i < ROUND_TRIPS; ++i) {
        if (starts) {
            if (!send_to(peer, i, deadline) || !wait_for(i + 1, deadline)) {
                return false;
            }
        } else if (!wait_for(i + 1, deadline) || !send_to(peer, i, deadline)) {
            return false;
        }
        if (inbox.last_seq != i) {
            fail("round trip %" PRIu32 " got message %" PRIu32, i, inbox.last_seq);
            return false;
        }
    }
    return true;
}

/* Our runtime beside MPI's: orte_init under mpirun, btl self,sm, a
 * ping-pong with the partner, and everything closed again. */
static bool btl_ping_pong_works(void)
{
    if (OPAL_SUCCESS != orte_init(NULL, NULL)) {
        fail("orte_init failed");
        return false;
    }
    const opal_proc_job_info_t *job = opal_proc_job_info();
    bool ok = (int) job->my_name.vpid == my_rank;
    if (!ok) {
        fail("orte_init says rank %" PRIu32 ", MPI says %d", job->my_name.vpid, my_rank);
    }
    int rc = OPAL_SUCCESS;
    if (ok) {
        rc = mca_btl_base_am_register(PING_TAG, ping_cb, NULL);
    }
    if (ok && OPAL_SUCCESS == rc) {
        rc = mca_btl_base_init(false, false);
        if (OPAL_SUCCESS == rc) {
            rc = opal_fence(true);
            if (OPAL_SUCCESS == rc) {
                rc = mca_btl_base_add_all_procs();
            }
            if (OPAL_SUCCESS == rc) {
                rc = opal_fence(false);
            }
            if (OPAL_SUCCESS == rc) {
                ok = ping_pong((uint32_t) (my_rank ^ 1));
                /* Nobody tears down sm while the partner still reads. */
                int frc = opal_fence(false);
                rc = OPAL_SUCCESS == frc || !ok ? rc : frc;
            }
            (void) mca_btl_base_finalize();
        }
    }
    if (ok && OPAL_SUCCESS != rc) {
        fail("btl set-up or fence failed: %s", opal_strerror(rc));
        ok = false;
    }
    if (OPAL_SUCCESS != orte_finalize()) {
        fail("orte_finalize failed");
        ok = false;
    }
    return ok;
}

static bool allreduce_works(int size, const char *when)
{
    int sum = -1;
    int rc = MPI_Allreduce(&my_rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (MPI_SUCCESS != rc || sum != size * (size - 1) / 2) {
        fail("MPI_Allreduce %s: rc %d, sum %d instead of %d", when, rc, sum, size * (size - 1) / 2);
        return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    int size = 0;
    if (MPI_SUCCESS != MPI_Init(&argc, &argv)) {
        printf("rank ?: FAILED: MPI_Init\n");
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bool ok = allreduce_works(size, "before opal_init_util");
    if (0 != size % 2) {
        fail("needs an even number of ranks, not %d", size);
        ok = false;
    }
    if (ok && OPAL_SUCCESS != opal_init_util(&argc, &argv)) {
        fail("opal_init_util failed");
        ok = false;
    } else if (ok) {
        ok = objects_and_lists_work() && btl_ping_pong_works();
        if (OPAL_SUCCESS != opal_finalize_util()) {
            fail("opal_finalize_util failed");
            ok = false;
        }
    }
    /* MPI still works after our runtime came and went. */
    ok = allreduce_works(size, "after opal_finalize_util") && ok;
    int all = 0, mine = ok ? 1 : 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Finalize();
    if (ok) {
        printf("rank %d: ok (%d round trips over sm)\n", my_rank, ROUND_TRIPS);
    }
    return ok && 1 == all ? 0 : 1;
}
