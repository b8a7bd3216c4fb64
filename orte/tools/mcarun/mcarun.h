/*
 * mcarun: starts the ranks of one job on this machine, forwards their I/O
 * and signals, serves modex and fence over a Unix socket, and stops the
 * job when a rank fails.
 *
 * One thread, one epoll loop (mcarun_loop.c). The parts:
 *   mcarun_main.c    options, set-up, the main loop, clean-up
 *   mcarun_launch.c  environment, fork/exec, reaping, signals to ranks
 *   mcarun_iof.c     stdout/stderr forwarding by whole lines, stdin
 *   mcarun_server.c  the launcher socket: connections, messages
 *   mcarun_modex.c   modex store, fences, gets waiting for commits
 *   mcarun_job.c     failures, stopping, deadlines, exit status
 *   mcarun_bind.c    cores and hwloc binding
 *   mcarun_mca.c     MCA variable names checked once for the job
 *   mcarun_clean.c   stale sessions of launchers killed by SIGKILL
 */
#ifndef ORTE_TOOLS_MCARUN_MCARUN_H
#define ORTE_TOOLS_MCARUN_MCARUN_H

#include "opal/opal_config.h"

#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "opal/class/opal_hash_table.h"
#include "opal/class/opal_list.h"
#include "orte/util/orte_session_dir.h"

/* How long ranks get between SIGTERM and SIGKILL when the job stops. */
#define MCARUN_KILL_GRACE_NS (3ull * 1000000000ull)
/* How long a rank whose connection closed without finalize may take to
 * exit before mcarun decides it disconnected rather than died. */
#define MCARUN_DISCONNECT_GRACE_NS (1ull * 1000000000ull)
/* The same stopping signal from the same sender within this long counts
 * once (timeout(1) signals mcarun, then its process group). */
#define MCARUN_SIGNAL_TOGETHER_NS (1ull * 1000000000ull)
/* Output is forwarded by whole lines; a line longer than this is cut into
 * pieces of this size, each printed as a line of its own. */
#define MCARUN_LINE_MAX (64u * 1024u)
/* Modex data one rank may hold in mcarun (staged and committed). */
#define MCARUN_MODEX_MAX_BYTES (256ull * 1024u * 1024u)
#define MCARUN_MODEX_MAX_KEYS  (1u << 20)
/* Connections that have not said HELLO yet; further ones wait in the
 * listen backlog until one of these has said it (never refused). */
#define MCARUN_MAX_PENDING_CONNS 64
#define MCARUN_MAX_NP            65536

/* Exit statuses of mcarun's own (not a rank's) failures. */
#define MCARUN_EXIT_FAILURE 1
#define MCARUN_EXIT_USAGE   2
#define MCARUN_EXIT_TIMEOUT 124

/* For constructors: OBJ_NEW does not zero memory, so every field past
 * super starts cleared. */
#define MCARUN_CLEAR_PAST_SUPER(obj)                                                               \
    memset(&(obj)->super + 1, 0, sizeof(*(obj)) - sizeof((obj)->super))

typedef enum { MCARUN_BIND_NONE, MCARUN_BIND_CORE, MCARUN_BIND_PACKAGE } mcarun_bind_t;

typedef struct mcarun_options_t {
    int np;      /* 0 until given: then one per core */
    char **argv; /* the program and its arguments */
    char **env;  /* NAME=value for the ranks, from -x and --mca */
    bool tag_output;
    char *output_dir; /* --output-filename */
    double timeout_s; /* 0: none */
    mcarun_bind_t bind_to;
    bool report_bindings;
    bool oversubscribe;
    /* A rank's failure is reported but does not stop the others (the
     * survivors of a peer failure test their own recovery). */
    bool enable_recovery;
    char *wdir;
} mcarun_options_t;

struct mcarun_watch_t;
struct mcarun_conn_t;

/* One output stream (stdout or stderr) of one rank. */
typedef struct mcarun_stream_t {
    int fd;   /* mcarun's read end; -1 once closed */
    int dest; /* where it goes: 1, 2 or a file */
    bool raw; /* bytes pass as they come (one rank, untagged) */
    struct mcarun_watch_t *watch;
    char tag[48]; /* "[3]<stdout>: " with --tag-output, else "" */
    size_t tag_len;
    char *buf; /* the partial line (MCARUN_LINE_MAX bytes) */
    size_t len;
} mcarun_stream_t;

typedef enum { MCARUN_RANK_NEW, MCARUN_RANK_RUNNING, MCARUN_RANK_EXITED } mcarun_rank_state_t;

typedef struct mcarun_rank_t {
    uint32_t rank;
    pid_t pid;
    mcarun_rank_state_t state;
    int wait_status;
    int exec_errno; /* why exec failed, 0 when it did not */
    mcarun_stream_t out, err;
    int stdin_fd; /* mcarun's write end of rank 0's stdin pipe, or -1 */
    cpu_set_t cpus;
    bool bound;
    /* The launcher socket. */
    struct mcarun_conn_t *conn;
    bool connected;    /* said HELLO and has not finalized */
    bool disconnected; /* its connection closed without FINALIZE */
    bool gone;         /* exited, finalized or disconnected: it will not
                        * commit or fence again */
    uint64_t disconnect_deadline;
    /* Modex. */
    opal_hash_table_t committed; /* key -> mcarun_kv_t */
    opal_list_t staged;          /* mcarun_kv_t put since the last COMMIT */
    uint64_t modex_bytes;
    size_t modex_keys;
    bool in_fence;
    bool fence_collect;
    uint64_t collected_upto; /* the commits its last collecting fence covered */
} mcarun_rank_t;

typedef struct mcarun_job_t {
    mcarun_options_t opts;
    uint32_t jobid;
    uint32_t size;
    char session_dir[ORTE_SESSION_DIR_MAX];
    char socket_path[ORTE_SESSION_DIR_MAX];
    char shm_prefix[64];
    bool session_created;
    mcarun_rank_t *ranks;
    uint32_t running; /* started and not yet reaped */
    bool failed;      /* the first failure has been recorded */
    int exit_status;
    bool stopping;
    uint64_t kill_deadline; /* 0: none */
    uint64_t timeout_deadline;
    sigset_t child_sigmask; /* the mask mcarun started with, for the ranks */
} mcarun_job_t;

extern mcarun_job_t mcarun_job;

/* mcarun_loop.c: the event loop. A watch calls fn(ctx, events) when fd is
 * ready for what events (EPOLLIN / EPOLLOUT) asks. */
typedef void (*mcarun_loop_fn_t)(void *ctx, uint32_t events);
int mcarun_loop_init(void);
void mcarun_loop_fini(void);
struct mcarun_watch_t *mcarun_loop_add(int fd, uint32_t events, mcarun_loop_fn_t fn, void *ctx);
int mcarun_loop_modify(struct mcarun_watch_t *w, uint32_t events);
/* Stops watching (the fd stays open: the caller closes it after). Safe
 * from inside a callback, its own included. NULL is ignored. */
void mcarun_loop_remove(struct mcarun_watch_t *w);
/* Waits up to timeout_ns (< 0: no limit) and runs the callbacks of what
 * fired. */
int mcarun_loop_wait(int64_t timeout_ns);

/* mcarun_launch.c */
int mcarun_signals_init(void);
void mcarun_signals_fini(void);
int mcarun_launch(void);
/* Sends sig to every running rank's process group. */
void mcarun_signal_ranks(int sig);

/* mcarun_iof.c */
int mcarun_iof_prepare(mcarun_rank_t *r, int child_fds[3]);
void mcarun_iof_started(mcarun_rank_t *r);
/* Reads what is left in a rank's pipes (it has exited) and flushes it. */
void mcarun_iof_drain(mcarun_rank_t *r);
void mcarun_iof_close(mcarun_rank_t *r);
int mcarun_iof_stdin_init(void);
void mcarun_iof_stdin_fini(void);

/* mcarun_server.c */
int mcarun_server_init(void);
void mcarun_server_fini(void);
/* Queues a message (value bytes held by blob, may be NULL) to a rank's
 * connection. */
struct mcarun_blob_t;
struct orte_wire_msg_t;
void mcarun_conn_send(struct mcarun_conn_t *c, const struct orte_wire_msg_t *msg,
                      struct mcarun_blob_t *blob);
void mcarun_conn_close(struct mcarun_conn_t *c);
/* Frees the connections closed since the last call; the main loop calls
 * it between dispatches, when no callback can hold one. */
void mcarun_server_free_closed(void);

/* mcarun_modex.c */
typedef struct mcarun_blob_t {
    opal_object_t super;
    void *buffer;      /* owned; freed with the blob */
    const void *bytes; /* the value, inside buffer */
    size_t size;
} mcarun_blob_t;
OBJ_CLASS_DECLARATION(mcarun_blob_t);

void mcarun_modex_rank_init(mcarun_rank_t *r);
void mcarun_modex_rank_fini(mcarun_rank_t *r);
/* Each returns OPAL_SUCCESS or, for a request mcarun refuses, an error
 * after reporting it (the caller fails the job). */
int mcarun_modex_put(mcarun_rank_t *r, const struct orte_wire_msg_t *msg, void *payload);
int mcarun_modex_commit(mcarun_rank_t *r);
int mcarun_modex_fence(mcarun_rank_t *r, bool collect);
int mcarun_modex_get(mcarun_rank_t *r, const struct orte_wire_msg_t *msg);
/* A rank finalized, exited or disconnected: fences it cannot join fail,
 * gets for its missing keys end. */
void mcarun_modex_rank_gone(mcarun_rank_t *r, const char *why);
/* A connection closed: drop the gets it was waiting for. */
void mcarun_modex_forget_conn(struct mcarun_conn_t *c);
uint64_t mcarun_modex_next_deadline(void);
void mcarun_modex_tick(uint64_t now);
void mcarun_modex_fini(void);

/* mcarun_job.c */
/* Records the job's first failure: prints "mcarun: <message>", sets the
 * exit status and starts stopping the job. Later failures are ignored.
 * With --enable-recovery a rank's failure (mcarun_job_rank_failed) does
 * not stop the job; this still does. */
void mcarun_job_fail(int status, const char *format, ...) OPAL_PRINTF_LIKE(2, 3);
/* A rank failed: mcarun_job_fail, or with --enable-recovery, print
 * "mcarun: <message>" and keep the first failure's status while the other
 * ranks go on. */
void mcarun_job_rank_failed(int status, const char *format, ...) OPAL_PRINTF_LIKE(2, 3);
/* The user interrupted the job (SIGINT, which the caller forwards to the
 * ranks): unless the job already failed, mcarun says so and exits 128 +
 * signo whatever the ranks then do (a rank whose libfabric caught SIGINT
 * exits 1); ranks still running after MCARUN_KILL_GRACE_NS get SIGKILL. */
void mcarun_job_interrupted(int signo);
/* SIGTERM to every running rank, SIGKILL after MCARUN_KILL_GRACE_NS. */
void mcarun_job_stop(void);
/* A rank was reaped: decide whether it failed the job. */
void mcarun_job_rank_exited(mcarun_rank_t *r);
/* A rank's connection closed without FINALIZE. */
void mcarun_job_rank_disconnected(mcarun_rank_t *r);
uint64_t mcarun_job_next_deadline(void);
void mcarun_job_tick(uint64_t now);
/* "rank 3 (pid 4711)" into buf. */
const char *mcarun_rank_name(const mcarun_rank_t *r, char *buf, size_t size);

/* mcarun_bind.c */
/* The number of cores this process may run on (1 at least). */
int mcarun_bind_num_cores(int *cores);
/* Fills each rank's cpus for the policy; reports with --report-bindings
 * after launch (mcarun_bind_report). */
int mcarun_bind_plan(void);
void mcarun_bind_report(const mcarun_rank_t *r);
void mcarun_bind_fini(void);

/* mcarun_mca.c */
/* Checks the MCA names the ranks will see (mcarun's environment, the
 * parameter files, params: the --mca pairs, opal_cmd_line_mca_param_t),
 * reporting each unknown one once (and each missing parameter file the
 * user named). *checked is the comma list of the names it checked, maybe
 * empty, for the ranks' MCA_BASE_VAR_CHECKED_ENV (caller frees). OPAL_ERR_UNKNOWN_NAME when
 * mca_base_unknown_params=error and a name is unknown. */
int mcarun_mca_check(const opal_list_t *params, char **checked);

/* mcarun_clean.c: stale sessions. Records this launcher's pid and start
 * time in session_dir, so that a later mcarun can tell it from a process
 * that reused the pid. OPAL_SUCCESS or OPAL_ERR_IN_ERRNO (with a message). */
int mcarun_clean_record(const char *session_dir);
/* Removes the session directories and /dev/shm files of this user's jobs
 * whose launcher is gone, saying on stderr what it removed. Returns how
 * many jobs it cleaned (>= 0) or OPAL_ERR_BAD_PARAM when $TMPDIR is
 * unusable. Live jobs and directories without a launcher record stay. */
int mcarun_clean_stale(void);

#endif /* ORTE_TOOLS_MCARUN_MCARUN_H */
