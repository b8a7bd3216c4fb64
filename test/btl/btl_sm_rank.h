/*
 * The rank program of btl/sm's multi-process tests (btl_sm_test.c runs it
 * under mcarun): what its case files share.
 */
#ifndef TEST_BTL_BTL_SM_RANK_H
#define TEST_BTL_BTL_SM_RANK_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/mca/btl/base/base.h"

/* Tags of the test's active messages. */
#define SM_RANK_TAG_DATA 0x80 /* sm_rank_msg_t + pattern, checked */
#define SM_RANK_TAG_CTRL 0x81 /* sm_rank_ctrl_t */

/* What every data message starts with. */
typedef struct sm_rank_msg_t {
    uint32_t src;
    uint32_t seq; /* per (source, destination), from 0 */
    uint32_t len; /* pattern bytes after this header */
    uint32_t reserved;
} sm_rank_msg_t;

enum {
    SM_CTRL_HANDLES = 1, /* rdma: where a rank's buffers are */
    SM_CTRL_PUT_DONE = 2,
    SM_CTRL_FINAL = 3,
    SM_CTRL_PING = 4,
    SM_CTRL_BARRIER = 5, /* sm_rank_barrier */
};

#define SM_RANK_HANDLE_MAX 64

typedef struct sm_rank_ctrl_t {
    uint32_t kind;
    uint32_t src;
    uint64_t value;
    uint64_t read_address; /* SM_CTRL_HANDLES */
    uint64_t write_address;
    uint8_t read_handle[SM_RANK_HANDLE_MAX];
    uint8_t write_handle[SM_RANK_HANDLE_MAX];
} sm_rank_ctrl_t;

/* This process and its job. */
extern uint32_t sm_rank_me, sm_rank_size;

/* Per source: data messages received (in order, checked) and their
 * bytes; control messages by kind. */
extern volatile uint64_t sm_rank_received[];
extern volatile uint64_t sm_rank_bytes[];
extern volatile uint32_t sm_rank_ctrl_count[][8];
extern sm_rank_ctrl_t sm_rank_ctrl_last[];
/* Set by the error callback for the rank it names. */
extern volatile bool sm_rank_failed[];
extern volatile uint32_t sm_rank_errors;
/* PEER_CLOSED callbacks per peer (not errors). */
extern volatile uint32_t sm_rank_closed[];

#define SM_RANK_MAX_PROCS 64

/* Prints "FAIL rank R: ..." and exits 1. */
void sm_rank_fail(const char *format, ...) OPAL_PRINTF_LIKE(1, 2);

/* The pattern byte i of message seq from src. */
static inline uint8_t sm_rank_pattern(uint32_t src, uint32_t seq, size_t i)
{
    return (uint8_t) (src * 31u + seq * 7u + i);
}

/* Sends a data message of len pattern bytes to dst (copying, retrying
 * while busy); returns the send's final status. */
int sm_rank_send_data(uint32_t dst, uint32_t seq, size_t len);
int sm_rank_send_ctrl(uint32_t dst, const sm_rank_ctrl_t *ctrl);
/* Every rank tells every other one, over the btl, that it has sent all
 * it had to, and waits until each has said so too. A peer's messages
 * arrive in order, so its data are in by then; and this rank's sends that
 * the btl accepted but had to queue went out meanwhile (progress posts
 * them). opal_fence does not progress the btl: a rank that entered it
 * with a send still queued held its peer up for good. */
void sm_rank_barrier(void);
/* Progresses until *counter >= target; fails after the deadline. */
void sm_rank_wait(volatile uint64_t *counter, uint64_t target, const char *what);
void sm_rank_wait32(volatile uint32_t *counter, uint32_t target, const char *what);
/* The send module of dst, or NULL. */
mca_btl_base_module_t *sm_rank_btl(uint32_t dst, struct mca_btl_base_endpoint_t **endpoint);
bool sm_rank_btl_is(const mca_btl_base_module_t *btl, const char *name);
/* Seconds since start (for deadlines and reports, never for verdicts). */
double sm_rank_now(void);

/* /dev/shm files of this job's btl/sm segments still linked (-1 without
 * mcarun's prefix). */
int sm_rank_shm_leftovers(void);

/* Cases in btl_sm_rank_rdma.c and btl_sm_rank_faults.c. */
void sm_rank_case_rdma(void);
void sm_rank_case_gone(void);
void sm_rank_case_bw(size_t size, int iters);
void sm_rank_case_split(const char *mode, size_t size, int rounds);
void sm_rank_case_kill(void);
void sm_rank_case_fault(const char *kind);
void sm_rank_case_blocking(int messages);

#endif /* TEST_BTL_BTL_SM_RANK_H */
