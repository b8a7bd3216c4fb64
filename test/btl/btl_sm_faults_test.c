/*
 * btl/sm's own jobs, beyond the generic suite: mcarun starts btl_sm_rank
 * from the build tree, and each test checks what the ranks said and how
 * the job ended: segments unlinked once mapped, flow control, tiny
 * resources, peers that die or scribble on what others read, large put /
 * get shared with a peer that progresses or never does, blocking
 * mode, and a peer whose /dev/shm is not ours. Under valgrind (make
 * check-valgrind) the ranks run under valgrind too, with smaller counts.
 */
#include "opal/opal_config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test/orte/mcarun_test_support.h"
#include "test/orte/orte_test_support.h"
#include "test/support/opal_test.h"

static char rank_prog[PATH_MAX];

/* mcarun's arguments, then (under valgrind) valgrind's, then the rank
 * program and the case. */
static void run_job(mcarun_run_t *run, const char *const *mcarun_args, const char *const *case_args)
{
    const char *args[64];
    size_t n = 0;
    for (size_t i = 0; NULL != mcarun_args[i]; ++i) {
        args[n++] = mcarun_args[i];
    }
    args[n++] = "--timeout";
    args[n++] = opal_test_under_valgrind() ? "300" : "60";
    if (opal_test_under_valgrind()) {
        static char supp[PATH_MAX];
        snprintf(supp, sizeof(supp), "--suppressions=%s/../contrib/valgrind.supp",
                 opal_test_srcdir());
        args[n++] = "valgrind";
        args[n++] = "--quiet";
        args[n++] = "--error-exitcode=97";
        args[n++] = "--leak-check=full";
        args[n++] = "--errors-for-leak-kinds=definite,indirect";
        args[n++] = "--show-leak-kinds=definite,indirect";
        args[n++] = supp;
    }
    args[n++] = rank_prog;
    for (size_t i = 0; NULL != case_args[i]; ++i) {
        args[n++] = case_args[i];
    }
    args[n] = NULL;
    mcarun_test_mcarun(run, NULL, args);
}

#define JOB(run, mcarun_list, case_list)                                                           \
    do {                                                                                           \
        const char *const m_[] = {mcarun_list, NULL};                                              \
        const char *const c_[] = {case_list, NULL};                                                \
        run_job((run), m_, c_);                                                                    \
    } while (0)
#define ARGS(...) __VA_ARGS__

/* Asserts, printing the job's output first when it fails. */
#define EXPECT(run, cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            mcarun_test_dump(run);                                                                 \
            ck_abort_msg("expected: %s", #cond);                                                   \
        }                                                                                          \
    } while (0)

static int count(const char *text, const char *needle)
{
    return mcarun_test_count(text, needle);
}

static const char *small(const char *full, const char *under_valgrind)
{
    return opal_test_under_valgrind() ? under_valgrind : full;
}

/* Files of the job's btl/sm segments left in /dev/shm, the job named by
 * the prefix rank 0 printed ("rank 0 shm prefix [P]"). Only the job's
 * own: make check -j runs other jobs of this user beside it. -1 when the
 * rank did not say. */
static int job_shm_files(const mcarun_run_t *run)
{
    static const char marker[] = "rank 0 shm prefix [";
    const char *at = NULL == run->out ? NULL : strstr(run->out, marker);
    if (NULL == at) {
        return -1;
    }
    at += sizeof(marker) - 1;
    const char *end = strchr(at, ']');
    char pattern[128];
    if (NULL == end || end == at || (size_t) (end - at) > 64) {
        return -1;
    }
    snprintf(pattern, sizeof(pattern), "%.*sbtl_sm.", (int) (end - at), at);
    return opal_test_shm_files(pattern);
}

static void expect_alltoall(mcarun_run_t *run, int np)
{
    char line[96];
    EXPECT(run, 0 == run->status);
    for (int r = 0; r < np; ++r) {
        snprintf(line, sizeof(line), "rank %d alltoall ok:", r);
        EXPECT(run, 1 == count(run->out, line));
    }
    /* Every rank reached its neighbour through sm, and once every peer
     * had mapped every segment, none was left in /dev/shm. */
    EXPECT(run, np == count(run->out, "module sm; shm leftovers 0\n"));
}

START_TEST(all_to_all_np2_every_size_in_order)
{
    mcarun_run_t run;
    JOB(&run, ARGS("-np", "2", "--mca", "btl", "self,sm"), ARGS("alltoall", small("60", "8")));
    expect_alltoall(&run, 2);
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(all_to_all_with_tiny_resources_still_completes)
{
    /* Small FIFO, few fragments and credits, no fast boxes at first: every
     * path that waits for room is taken. */
    mcarun_run_t run;
    JOB(&run,
        ARGS("-np", "3", "--oversubscribe", "--mca", "btl", "self,sm", "--mca", "btl_sm_fifo_size",
             "4", "--mca", "btl_sm_eager_frags", "4", "--mca", "btl_sm_max_frags", "2", "--mca",
             "btl_sm_frags_per_peer", "3", "--mca", "btl_sm_fbox_size", "256", "--mca",
             "btl_sm_fbox_threshold", "50"),
        ARGS("alltoall", small("80", "6")));
    expect_alltoall(&run, 3);
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(busy_receiver_bounds_the_sender)
{
    mcarun_run_t run;
    JOB(&run, ARGS("-np", "2", "--mca", "btl", "self,sm"), ARGS("flood"));
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, 1 == count(run.out, "rank 0 flood ok: busy after "));
    EXPECT(&run, 1 == count(run.out, "rank 1 flood ok: 5000 messages in order"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(killed_peer_is_reported_and_survivors_finish)
{
    mcarun_run_t run;
    JOB(&run, ARGS("-np", "3", "--oversubscribe", "--enable-recovery", "--mca", "btl", "self,sm"),
        ARGS("kill"));
    /* mcarun reports the killed rank; the others ended well. */
    EXPECT(&run, 0 != run.status && 124 != run.status);
    EXPECT(&run, 1 == count(run.out, "rank 0 kill ok: error callback for rank 2"));
    EXPECT(&run, 1 == count(run.out, "rank 1 kill ok: error callback for rank 2"));
    /* While the job still ran, the dead rank had left nothing in /dev/shm;
     * after it, neither had anyone. */
    EXPECT(&run, 2 == count(run.out, "unreachable, shm leftovers 0\n"));
    EXPECT(&run, 1 == count(run.out, "rank 0: error callback: flags 0x4 peer 2: sm: rank 2 (pid"));
    EXPECT(&run, 1 == count(run.out, "rank 1: error callback: flags 0x4 peer 2: sm: rank 2 (pid"));
    EXPECT(&run, 0 == job_shm_files(&run));
    mcarun_test_run_free(&run);
}
END_TEST

static void fault_job(const char *kind, const char *what)
{
    mcarun_run_t run;
    /* Peers and FIFOs checked every millisecond: the survivors' last
     * progress loop (btl_sm_rank) is sure to include checks. */
    JOB(&run,
        ARGS("-np", "3", "--oversubscribe", "--mca", "btl", "self,sm", "--mca",
             "btl_sm_liveness_interval", "1"),
        ARGS("fault", kind));
    EXPECT(&run, 0 == run.status);
    for (int r = 0; r < 3; ++r) {
        char line[64];
        snprintf(line, sizeof(line), "rank %d fault ok", r);
        EXPECT(&run, 1 == count(run.out, line));
    }
    if (NULL != what) {
        /* Both receivers name the rank that scribbled, and what it did. */
        EXPECT(&run, 2 == count(run.out, what));
        EXPECT(&run, 1 == count(run.out, "rank 0: error callback: flags 0x4 peer 2: sm: rank 2"));
        EXPECT(&run, 1 == count(run.out, "rank 1: error callback: flags 0x4 peer 2: sm: rank 2"));
    } else {
        EXPECT(&run, 0 == count(run.out, "error callback"));
        EXPECT(&run, 2 <= count(run.err, "FIFO was scribbled on by a peer") +
                              count(run.out, "FIFO was scribbled on by a peer"));
    }
    mcarun_test_run_free(&run);
}

START_TEST(scribbled_fifo_entry_names_the_peer)
{
    fault_job("fifo_entry", "wrote into this process's FIFO after setting up its fast box");
}
END_TEST

START_TEST(scribbled_fragment_length_names_the_peer)
{
    fault_job("frag_len", "; it holds ");
}
END_TEST

START_TEST(scribbled_fast_box_size_names_the_peer)
{
    fault_job("fbox_size", "fast box holds an impossible header");
}
END_TEST

START_TEST(scribbled_fast_box_type_names_the_peer)
{
    fault_job("fbox_type", "fast box holds a message of unknown type");
}
END_TEST

START_TEST(scribbled_fifo_tail_is_repaired)
{
    fault_job("fifo_tail", NULL);
}
END_TEST

START_TEST(scribbled_shared_put_get_names_the_peer)
{
    fault_job("split", "sent a malformed shared put/get: 1 slices (2 to 64)");
}
END_TEST

/* What each rank said at finalize about shared put / get (btl_base_verbose
 * 10): rank_offered[i] transfers offered, helped[i] slices of them the
 * peer copied, served[i] slices of the peer's copied here; the number of
 * such lines. */
/* Slices of its own transfers each rank copied, and its CMA calls for
 * them. */
static unsigned long split_own[2], split_calls[2];

static int split_stats(const mcarun_run_t *run, unsigned long offered[2], unsigned long helped[2],
                       unsigned long served[2])
{
    int n = 0;
    for (int stream = 0; stream < 2; ++stream) {
        const char *p = 0 == stream ? run->out : run->err;
        while (n < 2 && NULL != (p = strstr(p, "shared put/get: "))) {
            p += strlen("shared put/get: ");
            if (5 == sscanf(p,
                            "%lu offered to peers, %lu slices of them copied by peers, %lu "
                            "slices of peers' copied here, %lu slices of ours in %lu CMA calls",
                            &offered[n], &helped[n], &served[n], &split_own[n], &split_calls[n])) {
                ++n;
            }
        }
    }
    return n;
}

static void split_job(const char *mode, mcarun_run_t *run, unsigned long offered[2],
                      unsigned long helped[2], unsigned long served[2])
{
    /* Under valgrind every step is slower, the copies are not: more
     * rounds of smaller buffers, so that the owner still gets to copy. */
    JOB(run,
        ARGS("-np", "2", "--mca", "btl", "self,sm", "--mca", "btl_base_verbose", "10", "--mca",
             "btl_sm_split_parts", "16"),
        ARGS("split", mode, small("4194304", "1048576"), small("20", "10")));
    EXPECT(run, 0 == run->status);
    EXPECT(run, 1 == count(run->out, "rank 0 split ok"));
    EXPECT(run, 1 == count(run->out, "rank 1 split ok"));
    EXPECT(run, 2 == split_stats(run, offered, helped, served));
    /* Rank 0 (which offered) and rank 1 agree on what rank 1 copied. */
    int requester = 0 != offered[0] ? 0 : 1;
    EXPECT(run, 0 == offered[1 - requester] && 0 == served[requester]);
    EXPECT(run, helped[requester] == served[1 - requester]);
    /* Three transfers a round, each offered. */
    EXPECT(run, offered[requester] == 3 * (unsigned long) atoi(small("20", "10")));
    /* Every slice was copied by one side; the requester's own slices of a
     * transfer went in one CMA call (a transfer at a time here). */
    EXPECT(run, 0 == split_own[1 - requester] && 0 == split_calls[1 - requester]);
    EXPECT(run, split_calls[requester] <= offered[requester]);
    EXPECT(run, split_own[requester] + helped[requester] >= 2 * offered[requester]);
}

START_TEST(a_large_put_and_get_are_shared_with_a_peer_that_progresses)
{
    mcarun_run_t run;
    unsigned long offered[2] = {0}, helped[2] = {0}, served[2] = {0};
    split_job("helped", &run, offered, helped, served);
    /* Rank 1 waited in progress: it copied slices of rank 0's transfers
     * (whose every byte rank 0 and rank 1 checked). */
    EXPECT(&run, 0 < helped[0] + helped[1]);
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(a_shared_transfer_never_waits_for_a_stopped_peer)
{
    mcarun_run_t run;
    unsigned long offered[2] = {0}, helped[2] = {0}, served[2] = {0};
    split_job("stopped", &run, offered, helped, served);
    /* Rank 1 was stopped throughout: rank 0 copied every slice itself. */
    EXPECT(&run, 0 == helped[0] + helped[1]);
    /* In one CMA call per transfer, all 16 slices of it (fewer for a
     * transfer whose length leaves the last slice empty). */
    EXPECT(&run, split_calls[0] == offered[0] && split_own[0] > 10 * offered[0]);
    mcarun_test_run_free(&run);
}
END_TEST

/* Rank r's "gathered put/get: N in C CMA calls" (btl_base_verbose 10);
 * false when a rank did not say. */
static bool gathered_stats(const mcarun_run_t *run, int np, unsigned long ops[],
                           unsigned long calls[])
{
    int n = 0;
    for (int stream = 0; stream < 2; ++stream) {
        const char *p = 0 == stream ? run->out : run->err;
        while (n < np && NULL != p && NULL != (p = strstr(p, "gathered put/get: "))) {
            p += strlen("gathered put/get: ");
            if (2 == sscanf(p, "%lu in %lu CMA calls", &ops[n], &calls[n])) {
                ++n;
            }
        }
    }
    return n == np;
}

/* btl_sm_rank's rdma case: put / get at offsets and sizes, refusals, and
 * 150 gets then 150 puts with a get among them, none waited for before
 * the last was posted; every rank checks every byte it read and was
 * written. */
static void rdma_job(mcarun_run_t *run, const char *batch, unsigned long ops[3],
                     unsigned long calls[3])
{
    JOB(run,
        ARGS("-np", "3", "--oversubscribe", "--mca", "btl", "self,sm", "--mca", "btl_base_verbose",
             "10", "--mca", "btl_sm_cma_batch", batch),
        ARGS("rdma"));
    EXPECT(run, 0 == run->status);
    for (int r = 0; r < 3; ++r) {
        char line[32];
        snprintf(line, sizeof(line), "rank %d rdma ok", r);
        EXPECT(run, 1 == count(run->out, line));
    }
    EXPECT(run, gathered_stats(run, 3, ops, calls));
}

START_TEST(put_and_get_in_flight_go_together_in_few_cma_calls)
{
    mcarun_run_t run;
    unsigned long ops[3] = {0}, calls[3] = {0};
    rdma_job(&run, "64", ops, calls);
    for (int r = 0; r < 3; ++r) {
        /* The 301 in flight and the 7 small single ones went that way,
         * in at most 64 a call: 3 calls for the gets, 5 for the puts and
         * the get among them, one per single operation. */
        EXPECT(&run, ops[r] >= 301 && ops[r] < 320);
        EXPECT(&run, calls[r] >= 7 && calls[r] * 10 < ops[r]);
    }
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(put_and_get_in_flight_with_small_batches_or_none_give_the_same_bytes)
{
    mcarun_run_t run;
    unsigned long ops[3] = {0}, calls[3] = {0};
    /* Batches of 5: a full one goes out inside the next put / get call. */
    rdma_job(&run, "5", ops, calls);
    for (int r = 0; r < 3; ++r) {
        EXPECT(&run, ops[r] >= 301 && calls[r] >= 61 && calls[r] < ops[r]);
    }
    mcarun_test_run_free(&run);
    /* 1: each copied in its own call, as before gathering. */
    rdma_job(&run, "1", ops, calls);
    for (int r = 0; r < 3; ++r) {
        EXPECT(&run, 0 == ops[r] && 0 == calls[r]);
    }
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(a_cma_batch_out_of_range_is_refused_naming_it)
{
    mcarun_run_t run;
    JOB(&run, ARGS("-np", "2", "--mca", "btl", "self,sm", "--mca", "btl_sm_cma_batch", "0"),
        ARGS("rdma"));
    EXPECT(&run, 0 != run.status && 124 != run.status);
    EXPECT(&run, 0 < count(run.out, "btl sm: btl_sm_cma_batch 0 is not in 1..64") +
                         count(run.err, "btl sm: btl_sm_cma_batch 0 is not in 1..64"));
    EXPECT(&run, 0 == count(run.out, "rdma ok"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(gathered_gets_to_a_peer_that_died_each_fail_once)
{
    mcarun_run_t run;
    JOB(&run, ARGS("-np", "2", "--enable-recovery", "--mca", "btl", "self,sm"), ARGS("gone"));
    /* mcarun reports the killed rank; rank 0 ended well. */
    EXPECT(&run, 0 != run.status && 124 != run.status);
    EXPECT(&run, 1 == count(run.out, "rank 0 gone ok: 20 gets completed once each, Unreachable\n"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(a_peer_that_finalized_is_reported_closed_after_its_messages)
{
    mcarun_run_t run;
    JOB(&run, ARGS("-np", "2", "--mca", "btl", "self,sm"), ARGS("closed", "30"));
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, 1 == count(run.out, "rank 1 closed ok: 30 sent, finalized\n"));
    EXPECT(&run, 1 == count(run.out, "rank 0 closed ok: 30 messages, then PEER_CLOSED once; "
                                     "a send after: Unreachable\n"));
    mcarun_test_run_free(&run);
}
END_TEST

/* Nothing is lost silently: what the finalize gave up on is said, and
 * with what arrived makes up what was sent. */
START_TEST(sends_a_finalize_gives_up_on_are_counted_and_said)
{
    mcarun_run_t run;
    JOB(&run, ARGS("-np", "2", "--mca", "btl", "self,sm"), ARGS("closed", "100", "lossy"));
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, 1 == count(run.out, "rank 1 closed ok: 100 sent, finalized\n"));
    const char *said = strstr(run.err, "btl sm: finalize gave up on ");
    const char *came = strstr(run.out, "rank 0 closed: ");
    EXPECT(&run, NULL != said && NULL != came);
    if (NULL != said && NULL != came) {
        unsigned lost = 0, arrived = 0;
        EXPECT(&run, 1 == sscanf(said,
                                 "btl sm: finalize gave up on %u sends to rank 0, which made "
                                 "no room for them in 10 s",
                                 &lost));
        EXPECT(&run, 1 == sscanf(came, "rank 0 closed: %u of 100 messages came", &arrived));
        EXPECT(&run, lost > 0 && 100 == lost + arrived);
    }
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(blocking_receiver_sleeps_and_wakes)
{
    mcarun_run_t run;
    JOB(&run, ARGS("-np", "2", "--mca", "btl", "self,sm", "--mca", "btl_sm_blocking", "1"),
        ARGS("blocking", "40"));
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, 1 == count(run.out, "rank 0 blocking ok: 40 messages"));
    EXPECT(&run, 1 == count(run.out, "rank 1 blocking ok"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(progress_wait_without_blocking_mode_never_sleeps_through_messages)
{
    mcarun_run_t run;
    JOB(&run, ARGS("-np", "2", "--mca", "btl", "self,sm"), ARGS("blocking", "20"));
    EXPECT(&run, 0 == run.status);
    EXPECT(&run, 1 == count(run.out, "rank 0 blocking ok: 20 messages"));
    mcarun_test_run_free(&run);
}
END_TEST

START_TEST(peer_with_a_private_dev_shm_is_not_claimed)
{
    /* Rank 1 gets a /dev/shm of its own (a mount namespace): sm must see
     * it is not shared, and say so. Needs unshare and mount rights. */
    if (0 != system("unshare --mount --propagation private sh -c "
                    "'mount -t tmpfs none /dev/shm' >/dev/null 2>&1")) {
        return;
    }
    char script[2 * PATH_MAX + 512];
    snprintf(script, sizeof(script),
             "if [ \"$OPAL_ORTE_RANK\" = 1 ]; then exec unshare --mount --propagation private sh "
             "-c 'mount -t tmpfs none /dev/shm && exec \"$0\" \"$@\"' %s alltoall 1; else exec "
             "%s alltoall 1; fi",
             rank_prog, rank_prog);
    const char *const args[] = {"-np",     "2",  "--timeout", "60",   "--mca", "btl",
                                "self,sm", "sh", "-c",        script, NULL};
    mcarun_run_t run;
    mcarun_test_mcarun(&run, NULL, args);
    EXPECT(&run, 0 != run.status);
    EXPECT(&run, NULL != strstr(run.err, "does not share this /dev/shm") ||
                     NULL != strstr(run.out, "does not share this /dev/shm"));
    mcarun_test_run_free(&run);
}
END_TEST

int main(void)
{
    orte_test_forget_launchers();
    orte_test_use_build_tree_plugins();
    snprintf(rank_prog, sizeof(rank_prog), "%s", mcarun_test_build_path("test/btl/btl_sm_rank"));
    Suite *s = suite_create("btl_sm_faults");
    OPAL_TEST_ADD(s, all_to_all_np2_every_size_in_order);
    OPAL_TEST_ADD(s, all_to_all_with_tiny_resources_still_completes);
    OPAL_TEST_ADD(s, busy_receiver_bounds_the_sender);
    OPAL_TEST_ADD(s, killed_peer_is_reported_and_survivors_finish);
    OPAL_TEST_ADD(s, scribbled_fifo_entry_names_the_peer);
    OPAL_TEST_ADD(s, scribbled_fragment_length_names_the_peer);
    OPAL_TEST_ADD(s, scribbled_fast_box_size_names_the_peer);
    OPAL_TEST_ADD(s, scribbled_fast_box_type_names_the_peer);
    OPAL_TEST_ADD(s, scribbled_fifo_tail_is_repaired);
    OPAL_TEST_ADD(s, scribbled_shared_put_get_names_the_peer);
    OPAL_TEST_ADD(s, a_large_put_and_get_are_shared_with_a_peer_that_progresses);
    OPAL_TEST_ADD(s, a_shared_transfer_never_waits_for_a_stopped_peer);
    OPAL_TEST_ADD(s, put_and_get_in_flight_go_together_in_few_cma_calls);
    OPAL_TEST_ADD(s, put_and_get_in_flight_with_small_batches_or_none_give_the_same_bytes);
    OPAL_TEST_ADD(s, a_cma_batch_out_of_range_is_refused_naming_it);
    OPAL_TEST_ADD(s, gathered_gets_to_a_peer_that_died_each_fail_once);
    OPAL_TEST_ADD(s, a_peer_that_finalized_is_reported_closed_after_its_messages);
    OPAL_TEST_ADD(s, sends_a_finalize_gives_up_on_are_counted_and_said);
    OPAL_TEST_ADD(s, blocking_receiver_sleeps_and_wakes);
    OPAL_TEST_ADD(s, progress_wait_without_blocking_mode_never_sleeps_through_messages);
    OPAL_TEST_ADD(s, peer_with_a_private_dev_shm_is_not_claimed);
    return opal_test_run(s);
}
