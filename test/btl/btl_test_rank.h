/*
 * What the files of the btl test rank program share: the job as this rank
 * sees it, control messages between ranks (a barrier that keeps
 * progressing, small typed messages), waiting with a deadline, the data
 * pattern every case checks, and the table of cases.
 *
 * Tags: the program registers its tags before mca_btl_base_init.
 *   BTL_TEST_TAG_CONTROL    control messages (barrier, stream headers,
 *                           registration handles, counts)
 *   BTL_TEST_TAG_STREAM0..3 streams of checked messages (sizes, order,
 *                           alltoall, sendi)
 *   BTL_TEST_TAG_EACH_MIN..MAX  one callback per tag (tags case)
 *   BTL_TEST_TAG_KILLED     traffic while a rank dies (killed case)
 *   BTL_TEST_TAG_PORTDOWN   one module's messages (portdown case)
 *   BTL_TEST_TAG_UNCLAIMED  never registered (tags case)
 */
#ifndef OPAL_TEST_BTL_BTL_TEST_RANK_H
#define OPAL_TEST_BTL_BTL_TEST_RANK_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/mca/btl/base/base.h"

#define BTL_TEST_TAG_CONTROL   0xff
#define BTL_TEST_TAG_UNCLAIMED 0xfe
#define BTL_TEST_TAG_STREAM0   0x80
#define BTL_TEST_STREAM_TAGS   4
#define BTL_TEST_TAG_EACH_MIN  0x84
#define BTL_TEST_TAG_EACH_MAX  0xfb
#define BTL_TEST_TAG_PORTDOWN  0xfc
#define BTL_TEST_TAG_KILLED    0xfd

/* The job, as this rank sees it. */
typedef struct btl_test_t {
    uint32_t rank;
    uint32_t size;
    /* Ranks whose error callback fired. */
    bool *failed;
    int nfailed;
    /* Under valgrind: fewer iterations. */
    bool slow;
    /* Set by a check that failed (the program exits 1). */
    bool broken;
    /* A peer failing is what the case expects (killed): waits go on. */
    bool expect_failures;
    /* Ranks that reported finalizing (PEER_CLOSED): left out of barriers. */
    bool *closed;
    /* This rank leaves without the last barrier (departed). */
    bool leaving;
} btl_test_t;

extern btl_test_t btl_test;

/* Prints "rank R: <message>" on stdout (one write). */
void btl_test_say(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* Prints "rank R: FAILED: <message>" on stdout and marks the run broken. */
void btl_test_fail(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* Progresses until done() returns true; false (after saying what it was
 * waiting for) when the deadline passes, a check failed or, unless
 * expect_failures, a peer failed. */
bool btl_test_wait(bool (*done)(void *), void *arg, const char *what);

/* False once the run's deadline (BTL_TEST_DEADLINE) has passed. */
bool btl_test_before_deadline(void);

/* The peer of rank (never NULL after add_procs succeeded). */
mca_btl_base_peer_t *btl_test_peer(uint32_t rank);

/* The name of a module's component ("sm"). */
const char *btl_test_module_name(const mca_btl_base_module_t *btl);

/* Sends a copy of header + data to rank on tag, retrying (with progress)
 * while the module is busy. False after saying why when it fails. */
bool btl_test_send(uint32_t rank, mca_btl_base_tag_t tag, const void *header, size_t header_size,
                   const void *data, size_t size);

/* Control messages: type, then up to BTL_TEST_CONTROL_MAX bytes. */
#define BTL_TEST_CONTROL_MAX 512
enum {
    BTL_TEST_CTL_BARRIER = 1,
    BTL_TEST_CTL_STREAM = 2,    /* a stream's description */
    BTL_TEST_CTL_RDMA = 3,      /* a registered region */
    BTL_TEST_CTL_COUNT = 4,     /* how many messages were sent */
    BTL_TEST_CTL_RDMA_DONE = 5, /* puts into a region are complete */
    BTL_TEST_CTL_READY = 6,     /* a stream's receiver has its description */
};

typedef struct btl_test_control_t {
    uint32_t type;
    uint32_t from;
    uint32_t length;
    uint8_t body[BTL_TEST_CONTROL_MAX];
} btl_test_control_t;

/* Sends a control message of type with length bytes of body to rank. */
bool btl_test_control_send(uint32_t rank, uint32_t type, const void *body, size_t length);

/* Waits for the next control message of type from rank (messages of
 * other types stay queued) and copies it to *out. */
bool btl_test_control_recv(uint32_t rank, uint32_t type, btl_test_control_t *out);

/* Every rank that has not failed enters; returns once all of them did.
 * Progresses all the time (a blocking fence could starve a transport
 * that needs both sides to progress). */
bool btl_test_barrier(void);

/* Called by the control callback for BTL_TEST_CTL_STREAM and
 * BTL_TEST_CTL_COUNT (they must take effect before the stream's messages,
 * which follow them on the same module, are delivered). */
void btl_test_stream_control(const btl_test_control_t *msg);

/* The byte at offset i of a checked message of size from rank src with
 * sequence seq. */
static inline uint8_t btl_test_pattern(uint32_t src, uint64_t seq, size_t size, size_t i)
{
    return (uint8_t) (src * 7u + seq * 131u + size * 13u + i * 31u + (i >> 8));
}

void btl_test_fill(unsigned char *buf, uint32_t src, uint64_t seq, size_t size);

/* Checks a received message (possibly in several segments) against the
 * pattern; false with the first differing offset in *where. */
bool btl_test_check(const mca_btl_base_receive_descriptor_t *desc, size_t skip, uint32_t src,
                    uint64_t seq, size_t size, size_t *where);

/* Total bytes of a received message. */
size_t btl_test_length(const mca_btl_base_receive_descriptor_t *desc);

/* Copies up to size bytes from offset of a received message to dst;
 * returns how many. */
size_t btl_test_copy_out(const mca_btl_base_receive_descriptor_t *desc, size_t offset, void *dst,
                         size_t size);

/* The cases. Each returns true when it passed (or was skipped, saying
 * so). Cases live in their own files; a helper adding one adds it to the
 * table in btl_test_rank.c. */
typedef struct btl_test_case_t {
    const char *name;
    bool (*run)(int argc, char **argv);
    const char *description;
} btl_test_case_t;

/* Registers the stream callbacks (called before mca_btl_base_init);
 * release frees their state at the end. */
int btl_test_stream_register(void);
void btl_test_stream_release(void);
bool btl_test_case_sizes(int argc, char **argv);
bool btl_test_case_order(int argc, char **argv);
/* Says "toward rank N: <module>: <its btl_dump>; ..." for every peer: what
 * each module holds toward it (after a wait timed out, which side still
 * has something queued or unhandled; after the order case, for the
 * suites to check every transport has something to say). */
void btl_test_describe_peers(void);
bool btl_test_case_alltoall(int argc, char **argv);
bool btl_test_case_self(int argc, char **argv);
bool btl_test_case_sendi(int argc, char **argv);
bool btl_test_case_tags(int argc, char **argv);
int btl_test_tags_register(void);
void btl_test_tags_release(void);
bool btl_test_case_rdma(int argc, char **argv);
bool btl_test_case_rdma_again(int argc, char **argv);
bool btl_test_case_killed(int argc, char **argv);
bool btl_test_case_unreaped(int argc, char **argv);
bool btl_test_case_departed(int argc, char **argv);
int btl_test_killed_register(void);
bool btl_test_case_portdown(int argc, char **argv);
bool btl_test_case_linkdown(int argc, char **argv);
int btl_test_portdown_register(void);

/* The error callback: records the failed rank and says so. */
void btl_test_error_cb(struct mca_btl_base_module_t *btl, int32_t flags, const opal_proc_t *errproc,
                       const char *info);

#endif /* OPAL_TEST_BTL_BTL_TEST_RANK_H */
