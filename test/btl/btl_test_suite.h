/*
 * The multi-process btl test suite: Check cases that run the rank program
 * (test/btl/btl_test_rank, see its cases there) under the build tree's
 * mcarun for one btl selection, so that a transport's test program is a
 * few lines:
 *
 *   static const btl_suite_t sm = {
 *       .name = "btl_sm", .btl = "self,sm", .between_ranks = "sm",
 *       .cases = BTL_SUITE_ALL,
 *   };
 *   int main(void)
 *   {
 *       Suite *s = btl_suite_create(&sm);
 *       ... OPAL_TEST_ADD(s, own cases) ...
 *       return btl_suite_main(s);
 *   }
 *
 * Every run has a timeout (mcarun --timeout and BTL_TEST_DEADLINE in the
 * ranks), so a hang fails the test instead of stalling make check. Under
 * valgrind (make check-valgrind) the ranks run under valgrind too, scaled
 * down, and the all-to-all uses 4 ranks instead of 8.
 */
#ifndef OPAL_TEST_BTL_BTL_TEST_SUITE_H
#define OPAL_TEST_BTL_BTL_TEST_SUITE_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stdint.h>

#include "test/orte/mcarun_test_support.h"
#include "test/support/opal_test.h"

/* The generic cases (the rank program's case names). */
enum {
    BTL_SUITE_SIZES = 0x01,    /* every size to max_send_size, np 2 */
    BTL_SUITE_TAGS = 0x02,     /* every user tag, np 2 */
    BTL_SUITE_ORDER = 0x04,    /* per-peer order, np 2 */
    BTL_SUITE_SENDI = 0x08,    /* sendi busy path, np 2 */
    BTL_SUITE_RDMA = 0x10,     /* put / get with handles, np 2 */
    BTL_SUITE_ALLTOALL = 0x20, /* np 8 oversubscribed */
    BTL_SUITE_SELF = 0x40,     /* np 1 */
    BTL_SUITE_KILLED = 0x80,   /* a rank dies mid-transfer, np 3 */
    /* a rank dies idle and stays a zombie (mcarun held stopped), np 3:
     * only for btls that watch their peers' processes */
    BTL_SUITE_UNREAPED = 0x100,
    /* each rank in a pid namespace of its own (test/btl/in_pid_ns.sh),
     * np 3, the sizes case: no live peer taken for dead for a pid that
     * means nothing here; for btls that reach across pid namespaces */
    BTL_SUITE_PIDNS = 0x200,
    /* a rank finalizes and exits without a word to anyone, np 3: the
     * others report it closed, never failed (btls that see peers leave) */
    BTL_SUITE_DEPARTED = 0x400,
    BTL_SUITE_PAIRWISE =
        BTL_SUITE_SIZES | BTL_SUITE_TAGS | BTL_SUITE_ORDER | BTL_SUITE_SENDI | BTL_SUITE_RDMA,
    BTL_SUITE_ALL = BTL_SUITE_PAIRWISE | BTL_SUITE_ALLTOALL | BTL_SUITE_SELF | BTL_SUITE_KILLED,
};

typedef struct btl_suite_t {
    /* The Check suite's name ("btl_sm"). */
    const char *name;
    /* The value of --mca btl ("self,sm"). */
    const char *btl;
    /* More mcarun arguments for every run ({"--mca", "btl_sm_x", "1",
     * NULL}), or NULL. */
    const char *const *mca_args;
    /* The generic cases to add (BTL_SUITE_*). */
    unsigned cases;
    /* When set, the component every run must use between two different
     * ranks (checked on the reachability lines). */
    const char *between_ranks;
    /* Extra argument of the sendi case ("busy-optional"), or NULL. */
    const char *sendi_arg;
    /* Ranks of the pairwise / all-to-all / killed cases (0: 2, 8, 3). */
    int np;
    int alltoall_np;
    int killed_np;
} btl_suite_t;

/* A suite named config->name holding the generic cases config->cases
 * asks for, one test case each (named after the rank program's case).
 * config must outlive the run. */
Suite *btl_suite_create(const btl_suite_t *config);

/* Prepares the environment (the build tree's plugins, no launcher
 * variables, deadlines) and runs s; returns the exit status for main. */
int btl_suite_main(Suite *s);

/* Runs `mcarun -np np [--oversubscribe] --timeout T --mca btl btl
 * [mca_args] [extra] btl_test_rank args...`: args is the rank program's
 * case and its arguments, extra more mcarun arguments (e.g.
 * "--enable-recovery"); both NULL-terminated, mca_args and extra may be
 * NULL. The caller frees with mcarun_test_run_free. */
void btl_suite_run(mcarun_run_t *run, const char *btl, const char *const *mca_args,
                   const char *const *extra, int np, const char *const *args);

/* The same, started only: mcarun_test_wait_for and mcarun_test_finish
 * go on. */
void btl_suite_start(mcarun_run_t *run, const char *btl, const char *const *mca_args,
                     const char *const *extra, int np, const char *const *args);

/* Checks that the run exited 0 and every rank printed "<case> ok" and no
 * FAILED line, and (between_ranks not NULL) that every rank sent to
 * every other rank over that component. Prints the run on failure. */
void btl_suite_expect_ok(const mcarun_run_t *run, int np, const char *case_name,
                         const char *between_ranks);

/* The component carrying sends from rank to peer, as the rank printed it
 * ("sm"), in buf; false when the run has no such line. */
bool btl_suite_send_module(const mcarun_run_t *run, uint32_t rank, uint32_t peer, char *buf,
                           size_t size);

/* Checks that the run failed in add_procs and that the error names peer
 * ("rank P (on ") and contains each of reasons (NULL-terminated, e.g.
 * "self: not this process", "sm: not included by btl=self"). */
void btl_suite_expect_unreachable(const mcarun_run_t *run, uint32_t peer,
                                  const char *const *reasons);

/* True when btl component comp is part of this build. */
bool btl_suite_built(const char *comp);

/* True when text contains needle. */
bool btl_suite_has(const char *text, const char *needle);

#endif /* OPAL_TEST_BTL_BTL_TEST_SUITE_H */
