/*
 * ofi_stream_check: does a libfabric provider, alone, deliver a stream of
 * small messages intact? Two processes (a fork) each send N messages of
 * mixed sizes (16-205 bytes) to the other, half injected, with the
 * sequence number as remote CQ data and in the payload's bytes, and
 * receive them into multi-receive buffers (or one-message buffers);
 * every message's length, sequence number and bytes are checked, in
 * order. No opal-mca code is involved: when btl/ofi's streams fail over a
 * provider, this says whether the provider fails without us.
 *
 * Usage: ofi_stream_check PROVIDER [N [multi-recv 0|1 [cq-data 0|1]]]
 * Exit 0 when both sides got all N intact, 1 when not (the first wrong
 * messages are printed), 2 when the provider could not be set up, 77 when
 * libfabric has no such provider here. Each side gives up 10 s after its
 * last message arrived.
 */
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NBUFS      2
#define MULTI_SIZE (64 * 1024)
#define ONE_SIZE   512
#define MAX_REPORT 5
#define IDLE_NS    (10ull * 1000000000ull)

typedef struct side_t {
    int rank;
    bool multi;
    bool cq_data;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_cq *cq;
    struct fid_av *av;
    struct fid_ep *ep;
    fi_addr_t peer;
    size_t inject_size;
    char bufs[NBUFS][MULTI_SIZE];
    struct fi_context ctx[NBUFS];
    unsigned long total;    /* messages each side sends */
    unsigned long received; /* messages that arrived */
    unsigned long next;     /* the sequence number expected next */
    unsigned long bad;      /* problems seen */
} side_t;

static size_t size_of(unsigned long seq)
{
    return 16 + (seq * 37) % 190;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static bool failed(const side_t *s, const char *what, long rc)
{
    if (rc < 0) {
        fprintf(stderr, "rank %d: %s: %s\n", s->rank, what, fi_strerror((int) -rc));
        return true;
    }
    return false;
}

static long post(side_t *s, int i)
{
    if (!s->multi) {
        return fi_recv(s->ep, s->bufs[i], ONE_SIZE, NULL, FI_ADDR_UNSPEC, &s->ctx[i]);
    }
    struct iovec iov = {.iov_base = s->bufs[i], .iov_len = MULTI_SIZE};
    struct fi_msg msg = {
        .msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC, .context = &s->ctx[i]};
    return fi_recvmsg(s->ep, &msg, FI_MULTI_RECV);
}

__attribute__((format(printf, 2, 3))) static void report(side_t *s, const char *fmt, ...)
{
    if (s->bad++ < MAX_REPORT) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "rank %d: ", s->rank);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
}

/* Checks one arrived message: that it is the next in order (a gap is
 * reported once, then counting goes on from what arrived), and its length
 * and bytes against its sequence number. */
static void check(side_t *s, const struct fi_cq_data_entry *e, const uint8_t *data)
{
    uint64_t seq = e->data;
    if (!s->cq_data) {
        seq = UINT64_MAX;
        if (e->len >= sizeof(seq)) {
            memcpy(&seq, data, sizeof(seq));
        }
    }
    ++s->received;
    if (seq >= s->total) {
        report(s, "message %lu arrived with sequence number %llu (%zu bytes): no such message",
               s->next, (unsigned long long) seq, (size_t) e->len);
        ++s->next;
        return;
    }
    if (seq != s->next) {
        report(s, "message %lu expected, %llu arrived (%zu bytes)", s->next,
               (unsigned long long) seq, (size_t) e->len);
    }
    s->next = seq + 1;
    bool ok = e->len == size_of(seq);
    for (size_t j = s->cq_data ? 0 : sizeof(seq); ok && j < e->len; ++j) {
        ok = data[j] == (uint8_t) (seq + j);
    }
    if (!ok) {
        report(s, "message %lu: %llu bytes where %zu were sent, or other bytes",
               (unsigned long) seq, (unsigned long long) e->len, size_of(seq));
    }
}

/* Whether a completion gives its multi-receive buffer back: FI_MULTI_RECV
 * on a completion that carries a message may come while the buffer still
 * has room (rxm does so), so only one without data, or one that left less
 * than the minimum, does. */
static bool released(const side_t *s, int i, const struct fi_cq_data_entry *e)
{
    if (0 == (e->flags & FI_MULTI_RECV)) {
        return false;
    }
    if (0 == e->len || NULL == e->buf) {
        return true;
    }
    const char *end = (const char *) e->buf + e->len;
    return end < s->bufs[i] || (size_t) (s->bufs[i] + MULTI_SIZE - end) < ONE_SIZE;
}

/* Reads the CQ once; false on an error. */
static bool progress(side_t *s)
{
    struct fi_cq_data_entry entries[16];
    ssize_t n = fi_cq_read(s->cq, entries, 16);
    if (-FI_EAGAIN == n) {
        return true;
    }
    if (-FI_EAVAIL == n) {
        struct fi_cq_err_entry err = {0};
        (void) fi_cq_readerr(s->cq, &err, 0);
        fprintf(stderr, "rank %d: an operation failed: %s\n", s->rank, fi_strerror(err.err));
        return false;
    }
    if (failed(s, "fi_cq_read", n)) {
        return false;
    }
    for (ssize_t k = 0; k < n; ++k) {
        const struct fi_cq_data_entry *e = &entries[k];
        if (0 != (e->flags & FI_SEND)) {
            free(e->op_context);
            continue;
        }
        int i = (int) ((struct fi_context *) e->op_context - s->ctx);
        if (0 != (e->flags & FI_RECV) && (e->len > 0 || !s->multi)) {
            check(s, e, s->multi ? e->buf : (const uint8_t *) s->bufs[i]);
        }
        if ((!s->multi || released(s, i, e)) && failed(s, "fi_recv", post(s, i))) {
            return false;
        }
    }
    return true;
}

static int open_side(side_t *s, const char *prov)
{
    struct fi_info *hints = fi_allocinfo(), *info = NULL;
    if (NULL == hints) {
        return 2;
    }
    hints->caps = FI_MSG | (s->multi ? FI_MULTI_RECV : 0);
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->fabric_attr->prov_name = strdup(prov);
    int rc = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &info);
    fi_freeinfo(hints);
    if (0 != rc) {
        fprintf(stderr, "rank %d: no provider \"%s\" here: %s\n", s->rank, prov, fi_strerror(-rc));
        return 77;
    }
    s->inject_size = info->tx_attr->inject_size;
    struct fi_cq_attr cq_attr = {.size = 4096, .format = FI_CQ_FORMAT_DATA};
    struct fi_av_attr av_attr = {.type = FI_AV_MAP};
    size_t min = ONE_SIZE;
    bool bad = failed(s, "fi_fabric", fi_fabric(info->fabric_attr, &s->fabric, NULL)) ||
               failed(s, "fi_domain", fi_domain(s->fabric, info, &s->domain, NULL)) ||
               failed(s, "fi_cq_open", fi_cq_open(s->domain, &cq_attr, &s->cq, NULL)) ||
               failed(s, "fi_av_open", fi_av_open(s->domain, &av_attr, &s->av, NULL)) ||
               failed(s, "fi_endpoint", fi_endpoint(s->domain, info, &s->ep, NULL)) ||
               failed(s, "fi_ep_bind", fi_ep_bind(s->ep, &s->cq->fid, FI_SEND | FI_RECV)) ||
               failed(s, "fi_ep_bind", fi_ep_bind(s->ep, &s->av->fid, 0)) ||
               failed(s, "fi_enable", fi_enable(s->ep)) ||
               /* After fi_enable: shm (libfabric 1.17) crashes before. */
               (s->multi && failed(s, "fi_setopt",
                                   fi_setopt(&s->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
                                             &min, sizeof(min))));
    fi_freeinfo(info);
    for (int i = 0; !bad && i < NBUFS; ++i) {
        bad = failed(s, "fi_recv", post(s, i));
    }
    return bad ? 2 : 0;
}

/* Exchanges endpoint names with the other process through the pipes. */
static int meet(side_t *s, int wfd, int rfd)
{
    char name[256], peer[256];
    size_t len = sizeof(name), plen = 0;
    if (failed(s, "fi_getname", fi_getname(&s->ep->fid, name, &len)) ||
        write(wfd, &len, sizeof(len)) != (ssize_t) sizeof(len) ||
        write(wfd, name, len) != (ssize_t) len ||
        read(rfd, &plen, sizeof(plen)) != (ssize_t) sizeof(plen) || plen > sizeof(peer) ||
        read(rfd, peer, plen) != (ssize_t) plen ||
        1 != fi_av_insert(s->av, peer, 1, &s->peer, 0, NULL)) {
        fprintf(stderr, "rank %d: the endpoints could not be exchanged\n", s->rank);
        return 2;
    }
    return 0;
}

static bool send_one(side_t *s, unsigned long seq)
{
    size_t len = size_of(seq);
    /* A whole fi_context past the bytes, should the provider use one. */
    uint8_t *buf = malloc(len + sizeof(struct fi_context));
    if (NULL == buf) {
        return false;
    }
    for (size_t j = 0; j < len; ++j) {
        buf[j] = (uint8_t) (seq + j);
    }
    if (!s->cq_data) {
        uint64_t v = seq;
        memcpy(buf, &v, sizeof(v));
    }
    bool inject = len <= s->inject_size && 0 != (seq & 1);
    uint64_t give_up = now_ns() + IDLE_NS;
    for (;;) {
        ssize_t rc;
        if (inject) {
            rc = s->cq_data ? fi_injectdata(s->ep, buf, len, seq, s->peer)
                            : fi_inject(s->ep, buf, len, s->peer);
        } else {
            rc = s->cq_data ? fi_senddata(s->ep, buf, len, NULL, seq, s->peer, buf)
                            : fi_send(s->ep, buf, len, NULL, s->peer, buf);
        }
        if (0 == rc) {
            if (inject) {
                free(buf);
            }
            return true;
        }
        if (-FI_EAGAIN == rc && now_ns() > give_up) {
            fprintf(stderr, "rank %d: message %lu: the provider refused to send it for 10 s\n",
                    s->rank, seq);
            free(buf);
            return false;
        }
        if (-FI_EAGAIN != rc || !progress(s)) {
            free(buf);
            return !failed(s, "send", rc);
        }
    }
}

static int run(side_t *s, const char *prov, unsigned long n, int wfd, int rfd)
{
    s->total = n;
    int rc = open_side(s, prov);
    if (0 != rc || 0 != (rc = meet(s, wfd, rfd))) {
        return rc;
    }
    bool ok = true;
    for (unsigned long seq = 0; ok && seq < n; ++seq) {
        ok = send_one(s, seq) && progress(s);
    }
    uint64_t last = now_ns();
    unsigned long seen = s->received;
    while (ok && s->received < n && now_ns() - last < IDLE_NS) {
        ok = progress(s);
        if (s->received != seen) {
            seen = s->received;
            last = now_ns();
        }
    }
    /* The peer may still need this side's acknowledgements. */
    for (uint64_t end = now_ns() + 200000000u; ok && now_ns() < end;) {
        ok = progress(s);
    }
    printf("rank %d (%s, %s, %s): %lu of %lu messages received, %lu problems\n", s->rank, prov,
           s->multi ? "multi-receive buffers" : "one-message buffers",
           s->cq_data ? "remote CQ data" : "no CQ data", s->received, n, s->bad);
    return ok && s->received == n && 0 == s->bad ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PROVIDER [N [multi-recv 0|1 [cq-data 0|1]]]\n", argv[0]);
        return 2;
    }
    static side_t side;
    unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 0) : 20000;
    side.multi = argc > 3 ? 0 != atoi(argv[3]) : true;
    side.cq_data = argc > 4 ? 0 != atoi(argv[4]) : true;
    int to_child[2], to_parent[2];
    if (0 != pipe(to_child) || 0 != pipe(to_parent)) {
        perror("pipe");
        return 2;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 2;
    }
    /* Each keeps only its own ends: a side that quits makes the other's
     * read end, not wait. */
    if (0 == pid) {
        close(to_child[1]);
        close(to_parent[0]);
        side.rank = 1;
        return run(&side, argv[1], n, to_parent[1], to_child[0]);
    }
    close(to_child[0]);
    close(to_parent[1]);
    side.rank = 0;
    int rc = run(&side, argv[1], n, to_child[1], to_parent[0]);
    int status = 0;
    (void) waitpid(pid, &status, 0);
    int child = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    return 0 != rc ? rc : child;
}
