/*
 * na/btl's rank program: set-up (orte_init, the "btl" class, contexts,
 * every rank looked up by URI), the helpers the cases share (waiting,
 * control messages, barriers, patterns) and the case table.
 */
#include "opal/opal_config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/runtime/opal_proc.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"
#include "orte/runtime/orte_init.h"
#include "test/na/na_btl_rank.h"

na_test_t na_test;

static uint64_t deadline_ns;

/* A control message waiting to be taken. */
typedef struct na_test_ctl_t {
    struct na_test_ctl_t *next;
    uint32_t from;
    uint32_t kind;
    size_t len;
    uint8_t data[];
} na_test_ctl_t;

/* Receives posted on the control context, re-posted from their callback. */
#define CTL_RECVS 8
static struct {
    opal_na_op_id_t *op;
    uint8_t buf[NA_TEST_CTL_MAX];
} ctl_recvs[CTL_RECVS];
static bool ctl_stop;

void na_test_say(const char *format, ...)
{
    char line[1024];
    int n = snprintf(line, sizeof(line), "rank %" PRIu32 ": ", na_test.rank);
    va_list ap;
    va_start(ap, format);
    vsnprintf(line + n, sizeof(line) - (size_t) n, format, ap);
    va_end(ap);
    printf("%s\n", line);
    fflush(stdout);
}

void na_test_fail(const char *format, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, format);
    vsnprintf(msg, sizeof(msg), format, ap);
    va_end(ap);
    na_test_say("FAILED: %s", msg);
    na_test.broken = true;
}

void na_test_done_cb(const opal_na_cb_info_t *info)
{
    na_test_done_t *d = info->arg;
    d->ret = info->ret;
    d->info = *info;
    ++d->calls;
    d->done = true;
}

static void progress_once(void)
{
    (void) opal_na_poll(na_test.cls, na_test.ctx, NULL);
    (void) opal_na_trigger(na_test.ctx, 0, NULL);
    (void) opal_na_trigger(na_test.ctl_ctx, 0, NULL);
}

bool na_test_wait(const volatile bool *flag, const char *what)
{
    while (!*flag) {
        if (opal_timer_ns() > deadline_ns) {
            na_test_fail("timed out waiting for %s", what);
            return false;
        }
        progress_once();
    }
    return true;
}

bool na_test_wait_count(const volatile int *count, int target, const char *what)
{
    while (*count < target) {
        if (opal_timer_ns() > deadline_ns) {
            na_test_fail("timed out waiting for %s (%d of %d)", what, *count, target);
            return false;
        }
        progress_once();
    }
    return true;
}

void na_test_fill(void *buf, uint32_t src, uint64_t seq, size_t size)
{
    uint8_t *p = buf;
    for (size_t i = 0; i < size; ++i) {
        p[i] = na_test_pattern(src, seq, size, i);
    }
}

long na_test_check(const void *buf, uint32_t src, uint64_t seq, size_t size)
{
    const uint8_t *p = buf;
    for (size_t i = 0; i < size; ++i) {
        if (p[i] != na_test_pattern(src, seq, size, i)) {
            return (long) i;
        }
    }
    return -1;
}

/* ------------------------------------------------------------- control */

static uint32_t rank_of(opal_na_addr_t *addr)
{
    for (uint32_t r = 0; r < na_test.size; ++r) {
        if (opal_na_addr_cmp(na_test.cls, addr, na_test.peers[r])) {
            return r;
        }
    }
    return UINT32_MAX;
}

static void ctl_post(int i);

static void ctl_cb(const opal_na_cb_info_t *info)
{
    int i = (int) (intptr_t) info->arg;
    if (OPAL_ERR_CANCELED == info->ret) {
        return;
    }
    if (OPAL_SUCCESS != info->ret) {
        na_test_fail("control receive: %s", opal_strerror(info->ret));
    } else {
        size_t len = info->info.recv_unexpected.actual_size;
        na_test_ctl_t *m = malloc(sizeof(*m) + len);
        m->next = NULL;
        m->from = rank_of(info->info.recv_unexpected.source);
        m->kind = info->info.recv_unexpected.tag - NA_TEST_TAG_CTL;
        m->len = len;
        memcpy(m->data, ctl_recvs[i].buf, len);
        opal_na_addr_free(na_test.cls, info->info.recv_unexpected.source);
        na_test_ctl_t **tail = &na_test.ctl_queue;
        while (NULL != *tail) {
            tail = &(*tail)->next;
        }
        *tail = m;
    }
    if (!ctl_stop) {
        ctl_post(i);
    }
}

static void ctl_post(int i)
{
    int rc =
        opal_na_msg_recv_unexpected(na_test.cls, na_test.ctl_ctx, ctl_cb, (void *) (intptr_t) i,
                                    ctl_recvs[i].buf, NA_TEST_CTL_MAX, NULL, ctl_recvs[i].op);
    if (OPAL_SUCCESS != rc) {
        na_test_fail("posting a control receive: %s", opal_strerror(rc));
    }
}

bool na_test_ctl_send(uint32_t rank, uint32_t kind, const void *data, size_t len)
{
    na_test_done_t d = {0};
    int rc = opal_na_msg_send_unexpected(na_test.cls, na_test.ctl_ctx, na_test_done_cb, &d, data,
                                         len, NULL, na_test.peers[rank], NA_TEST_CTL_ID,
                                         NA_TEST_TAG_CTL + kind, NULL);
    if (OPAL_SUCCESS != rc) {
        na_test_fail("control send to rank %" PRIu32 ": %s", rank, opal_strerror(rc));
        return false;
    }
    if (!na_test_wait(&d.done, "a control send")) {
        return false;
    }
    if (OPAL_SUCCESS != d.ret) {
        na_test_fail("control send to rank %" PRIu32 " completed with %s", rank,
                     opal_strerror(d.ret));
        return false;
    }
    return true;
}

bool na_test_ctl_recv(uint32_t rank, uint32_t kind, void *data, size_t *len)
{
    for (;;) {
        na_test_ctl_t **p = &na_test.ctl_queue;
        for (; NULL != *p; p = &(*p)->next) {
            if ((*p)->from == rank && (*p)->kind == kind) {
                na_test_ctl_t *m = *p;
                *p = m->next;
                if (NULL != data) {
                    memcpy(data, m->data, m->len < *len ? m->len : *len);
                    *len = m->len;
                }
                free(m);
                return true;
            }
        }
        if (opal_timer_ns() > deadline_ns) {
            na_test_fail("timed out waiting for control message %" PRIu32 " from rank %" PRIu32,
                         kind, rank);
            return false;
        }
        progress_once();
    }
}

enum { CTL_BARRIER = 1, CTL_RELEASE = 2 };

bool na_test_barrier(void)
{
    if (0 == na_test.rank) {
        for (uint32_t r = 1; r < na_test.size; ++r) {
            if (!na_test_ctl_recv(r, CTL_BARRIER, NULL, NULL)) {
                return false;
            }
        }
        for (uint32_t r = 1; r < na_test.size; ++r) {
            if (!na_test_ctl_send(r, CTL_RELEASE, NULL, 0)) {
                return false;
            }
        }
        return true;
    }
    return na_test_ctl_send(0, CTL_BARRIER, NULL, 0) &&
           na_test_ctl_recv(0, CTL_RELEASE, NULL, NULL);
}

/* ----------------------------------------------------------------- main */

static const struct {
    const char *name;
    bool (*run)(int argc, char **argv);
    const char *description;
} cases[] = {
    {"uri", na_test_case_uri, "URIs, lookup, self, serialized addresses, bad URIs"},
    {"unexpected", na_test_case_unexpected,
     "every rank sends (and injects) unexpected messages to rank 0"},
    {"expected", na_test_case_expected, "expected messages matched on source and tag, in order"},
    {"sizes", na_test_case_sizes, "every size to the limits, over-limit refused, truncation"},
    {"cancel", na_test_case_cancel, "cancel of posted receives, exactly once"},
    {"rma", na_test_case_rma, "memory handles of 1 and 16 segments, put / get, access"},
    {"killed", na_test_case_killed, "the last rank dies during transfers"},
    {"closed", na_test_case_closed, "rank 1 finalizes with a receive of rank 0 pending"},
    {NULL, NULL, NULL},
};

static int setup(void)
{
    int rc = opal_na_initialize("btl", true, &na_test.cls);
    if (OPAL_SUCCESS != rc) {
        na_test_say("opal_na_initialize(\"btl\"): %s", opal_strerror(rc));
        return rc;
    }
    rc = opal_na_context_create(na_test.cls, 0, &na_test.ctx);
    if (OPAL_SUCCESS == rc) {
        rc = opal_na_context_create(na_test.cls, NA_TEST_CTL_ID, &na_test.ctl_ctx);
    }
    if (OPAL_SUCCESS != rc) {
        na_test_say("context create: %s", opal_strerror(rc));
        return rc;
    }
    const opal_proc_job_info_t *job = opal_proc_job_info();
    na_test.peers = calloc(na_test.size, sizeof(*na_test.peers));
    for (uint32_t r = 0; r < na_test.size; ++r) {
        char uri[128];
        snprintf(uri, sizeof(uri), "btl://job/%" PRIu32 "/%" PRIu32, job->my_name.jobid, r);
        rc = opal_na_addr_lookup(na_test.cls, uri, &na_test.peers[r]);
        if (OPAL_SUCCESS != rc) {
            na_test_say("lookup of %s: %s", uri, opal_strerror(rc));
            return rc;
        }
    }
    for (int i = 0; i < CTL_RECVS; ++i) {
        ctl_recvs[i].op = opal_na_op_create(na_test.cls);
        ctl_post(i);
    }
    return OPAL_SUCCESS;
}

static void teardown(void)
{
    ctl_stop = true;
    for (int i = 0; i < CTL_RECVS; ++i) {
        if (NULL != ctl_recvs[i].op) {
            (void) opal_na_cancel(na_test.cls, na_test.ctl_ctx, ctl_recvs[i].op);
        }
    }
    (void) opal_na_trigger(na_test.ctl_ctx, 0, NULL);
    for (int i = 0; i < CTL_RECVS; ++i) {
        (void) opal_na_op_destroy(na_test.cls, ctl_recvs[i].op);
    }
    while (NULL != na_test.ctl_queue) {
        na_test_ctl_t *m = na_test.ctl_queue;
        na_test.ctl_queue = m->next;
        free(m);
    }
    for (uint32_t r = 0; NULL != na_test.peers && r < na_test.size; ++r) {
        opal_na_addr_free(na_test.cls, na_test.peers[r]);
    }
    free(na_test.peers);
    if (NULL != na_test.ctl_ctx) {
        int rc = opal_na_context_destroy(na_test.cls, na_test.ctl_ctx);
        if (OPAL_SUCCESS != rc) {
            na_test_fail("destroying the control context: %s", opal_strerror(rc));
        }
    }
    if (NULL != na_test.ctx) {
        int rc = opal_na_context_destroy(na_test.cls, na_test.ctx);
        if (OPAL_SUCCESS != rc) {
            na_test_fail("destroying the context: %s", opal_strerror(rc));
        }
    }
    if (NULL != na_test.cls) {
        int rc = opal_na_finalize(na_test.cls);
        if (OPAL_SUCCESS != rc) {
            na_test_fail("opal_na_finalize: %s", opal_strerror(rc));
        }
    }
}

int main(int argc, char **argv)
{
    int which = -1;
    for (int i = 0; argc >= 2 && NULL != cases[i].name; ++i) {
        if (0 == strcmp(cases[i].name, argv[1])) {
            which = i;
        }
    }
    if (which < 0) {
        fprintf(stderr, "usage: na_btl_rank CASE; cases:\n");
        for (int i = 0; NULL != cases[i].name; ++i) {
            fprintf(stderr, "  %-10s %s\n", cases[i].name, cases[i].description);
        }
        return 2;
    }
    const char *v = getenv("OPAL_TEST_UNDER_VALGRIND");
    na_test.slow = NULL != v && 0 != strcmp(v, "0");
    const char *d = getenv("NA_TEST_DEADLINE");
    deadline_ns =
        opal_timer_ns() + (NULL != d ? strtoull(d, NULL, 10) : 100) * UINT64_C(1000000000);
    if (OPAL_SUCCESS != orte_init(&argc, &argv)) {
        return 2;
    }
    const opal_proc_job_info_t *job = opal_proc_job_info();
    na_test.rank = job->my_name.vpid;
    na_test.size = job->size;
    int status = 0;
    if (OPAL_SUCCESS != setup()) {
        status = 3;
    } else {
        bool ok = na_test_barrier() && cases[which].run(argc, argv);
        /* Nobody finalizes while a peer may still need it; the killed
         * case's survivors meet without the dead rank, and the closed
         * case's rank 1 finalizing is the point. */
        if (0 != strcmp(cases[which].name, "killed") && 0 != strcmp(cases[which].name, "closed")) {
            ok = na_test_barrier() && ok;
        }
        status = ok && !na_test.broken ? 0 : 1;
    }
    teardown();
    (void) orte_finalize();
    if (0 == status && !na_test.broken) {
        na_test_say("%s ok", cases[which].name);
    }
    return 0 == status && na_test.broken ? 1 : status;
}
