/*
 * The rank program of na/btl's tests, run under mcarun (or alone, for
 * the server / client cases):
 *
 *   mcarun -np N --mca btl self,sm na_btl_rank CASE
 *   na_btl_rank server URI_FILE | na_btl_rank client URI_FILE
 *
 * Every rank opens a "btl" class with two contexts: 0 for the case's
 * traffic, 1 for control (barriers, handles), so that control messages
 * never meet the case's receives. It prints "rank R: <case> ok" when the
 * case passed, "rank R: FAILED: ..." otherwise (and exits 1).
 */
#ifndef OPAL_TEST_NA_NA_BTL_RANK_H
#define OPAL_TEST_NA_NA_BTL_RANK_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/mca/na/base/base.h"

#define NA_TEST_CTL_ID  1
#define NA_TEST_TAG_CTL 0x7000
#define NA_TEST_CTL_MAX 4096

typedef struct na_test_t {
    opal_na_class_t *cls;
    opal_na_context_t *ctx;     /* id 0: the case's */
    opal_na_context_t *ctl_ctx; /* id 1: control */
    uint32_t rank;
    uint32_t size;
    opal_na_addr_t **peers; /* by rank */
    bool slow;              /* under valgrind */
    bool broken;
    /* Control messages received and not taken yet. */
    struct na_test_ctl_t *ctl_queue;
} na_test_t;

extern na_test_t na_test;

void na_test_say(const char *format, ...) __attribute__((format(printf, 1, 2)));
void na_test_fail(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* Polls and triggers both contexts until *flag is true; false (after
 * saying what it waited for) at the deadline. */
bool na_test_wait(const volatile bool *flag, const char *what);
/* Until *count reaches target. */
bool na_test_wait_count(const volatile int *count, int target, const char *what);

/* Control messages (context 1): sends len bytes to rank with kind; waits
 * for the next control message of kind from rank. */
bool na_test_ctl_send(uint32_t rank, uint32_t kind, const void *data, size_t len);
bool na_test_ctl_recv(uint32_t rank, uint32_t kind, void *data, size_t *len);
bool na_test_barrier(void);

/* The byte at offset i of message seq of size from src. */
static inline uint8_t na_test_pattern(uint32_t src, uint64_t seq, size_t size, size_t i)
{
    return (uint8_t) (src * 7u + seq * 131u + size * 13u + i * 31u + (i >> 8));
}
void na_test_fill(void *buf, uint32_t src, uint64_t seq, size_t size);
/* -1 when buf holds the pattern, else the first offset that differs. */
long na_test_check(const void *buf, uint32_t src, uint64_t seq, size_t size);

/* A completion callback that sets *(bool *) arg and records the result. */
typedef struct na_test_done_t {
    volatile bool done;
    int ret;
    int calls;
    opal_na_cb_info_t info;
} na_test_done_t;
void na_test_done_cb(const opal_na_cb_info_t *info);

bool na_test_case_unexpected(int argc, char **argv);
bool na_test_case_expected(int argc, char **argv);
bool na_test_case_sizes(int argc, char **argv);
bool na_test_case_cancel(int argc, char **argv);
bool na_test_case_rma(int argc, char **argv);
bool na_test_case_killed(int argc, char **argv);
bool na_test_case_closed(int argc, char **argv);
bool na_test_case_uri(int argc, char **argv);

#endif /* OPAL_TEST_NA_NA_BTL_RANK_H */
