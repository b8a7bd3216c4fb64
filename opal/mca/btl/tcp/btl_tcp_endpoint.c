/*
 * btl/tcp's endpoints: a peer's address from the modex, connecting, the
 * handshake on both sides (with the race of two processes connecting to
 * each other at once), and a peer's failure.
 */
#include "opal/opal_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "opal/mca/btl/tcp/btl_tcp.h"
#include "opal/runtime/opal_rte.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_pid.h"
#include "opal/util/opal_timer.h"

/* An accepted socket until its handshake arrives. */
typedef struct incoming_t {
    opal_list_item_t super;
    mca_btl_tcp_pollable_t poll;
    uint8_t buf[MCA_BTL_TCP_HELLO_SIZE];
    size_t got;
    uint64_t deadline_ns;
    char from[INET6_ADDRSTRLEN + 8];
} incoming_t;
static OBJ_CLASS_INSTANCE(incoming_t, opal_list_item_t, NULL, NULL);

const char *mca_btl_tcp_peer_name(const mca_btl_tcp_endpoint_t *ep)
{
    static _Thread_local char name[96];
    if (NULL != ep->proc && NULL != ep->proc->proc_hostname) {
        snprintf(name, sizeof(name), "rank %u (on %s)", ep->rank, ep->proc->proc_hostname);
    } else {
        snprintf(name, sizeof(name), "rank %u", ep->rank);
    }
    return name;
}

/* A connection or handshake deadline btl_tcp_connect_timeout from now,
 * with the module's timer armed for it. */
static uint64_t deadline_from_now(mca_btl_tcp_module_t *module)
{
    uint64_t deadline =
        opal_timer_ns() + (uint64_t) mca_btl_tcp_component.connect_timeout_ms * 1000000u;
    mca_btl_tcp_timer_arm(module, deadline);
    return deadline;
}

/* Watches the new endpoint's process when its pid means the same here
 * (the same pid space, and not this process), with the module's timer
 * armed for the first look. */
static void watch_process(mca_btl_tcp_module_t *module, mca_btl_tcp_endpoint_t *ep)
{
    unsigned interval_ms = mca_btl_tcp_component.liveness_interval_ms;
    if (0 == interval_ms || 0 == ep->addr.pid ||
        !opal_pid_space_shared(module->pid_space, ep->addr.pid_space) ||
        (pid_t) ep->addr.pid == getpid()) {
        return;
    }
    ep->watch_pid = (pid_t) ep->addr.pid;
    if (0 == module->watched++) {
        module->next_liveness_ns = opal_timer_ns() + (uint64_t) interval_ms * 1000000u;
        mca_btl_tcp_timer_arm(module, module->next_liveness_ns);
    }
}

mca_btl_tcp_endpoint_t *mca_btl_tcp_endpoint_get(mca_btl_tcp_module_t *module, uint32_t rank,
                                                 mca_btl_base_reason_t *why)
{
    if (rank >= module->job_size) {
        mca_btl_base_reason_set(why, "rank %u is outside the job (%u processes)", rank,
                                module->job_size);
        return NULL;
    }
    mca_btl_tcp_endpoint_t *ep = module->endpoints[rank];
    if (NULL != ep) {
        return ep;
    }
    opal_proc_t *proc = NULL;
    int rc = opal_proc_for_rank(rank, &proc);
    if (OPAL_SUCCESS != rc) {
        mca_btl_base_reason_set(why, "rank %u is unknown to the runtime: %s", rank,
                                opal_strerror(rc));
        return NULL;
    }
    const opal_proc_job_info_t *job = opal_proc_job_info();
    void *blob = NULL;
    size_t size = 0;
    rc = opal_modex_recv(rank, MCA_BTL_TCP_MODEX_KEY, &blob, &size,
                         NULL != job ? job->lookup_timeout_ns : OPAL_MODEX_WAIT_FOREVER);
    if (OPAL_SUCCESS != rc) {
        mca_btl_base_reason_set(why,
                                "rank %u published no tcp address (its btl/tcp did not run): %s",
                                rank, opal_strerror(rc));
        return NULL;
    }
    mca_btl_tcp_addr_t addr;
    char detail[160];
    rc = mca_btl_tcp_addr_unpack(blob, size, &addr, detail, sizeof(detail));
    free(blob);
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "btl/tcp: rank %u published a malformed address (modex key %s): %s", rank,
                    MCA_BTL_TCP_MODEX_KEY, detail);
        mca_btl_base_reason_set(why, "rank %u published a malformed address: %s", rank, detail);
        return NULL;
    }
    if (0 == addr.count) {
        mca_btl_base_reason_set(why, "rank %u's btl/tcp did not run: %s", rank, addr.declined);
        return NULL;
    }
    ep = calloc(1, sizeof(*ep));
    if (NULL == ep) {
        mca_btl_base_reason_set(why, "out of memory");
        return NULL;
    }
    ep->poll.kind = MCA_BTL_TCP_POLL_ENDPOINT;
    ep->poll.fd = -1;
    ep->pipe[0] = ep->pipe[1] = -1;
    ep->module = module;
    OBJ_RETAIN(proc);
    ep->proc = proc;
    ep->rank = rank;
    ep->addr = addr;
    ep->state = MCA_BTL_TCP_EP_CLOSED;
    /* The receive buffer comes with the connection (connected()): a job's
     * endpoints exist for every rank, its connections only for peers that
     * talk. */
    ep->rbuf = NULL;
    ep->rbuf_size = MCA_BTL_TCP_FRAME_HDR + MCA_BTL_TCP_RDMA_TARGET +
                    module->super.btl_max_send_size + 64 * 1024;
    ep->next_id = 1;
    OBJ_CONSTRUCT(&ep->waiting, opal_list_t);
    watch_process(module, ep);
    module->endpoints[rank] = ep;
    ep->next_ep = module->ep_list;
    module->ep_list = ep;
    return ep;
}

/* --------------------------------------------------------- connections */

static void tune_socket(int fd)
{
    int one = 1;
    (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    const mca_btl_tcp_component_t *c = &mca_btl_tcp_component;
    if (c->sndbuf > 0 && c->sndbuf <= INT32_MAX) {
        int v = (int) c->sndbuf;
        (void) setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
    }
    if (c->rcvbuf > 0 && c->rcvbuf <= INT32_MAX) {
        int v = (int) c->rcvbuf;
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
    }
    /* The values are within the kernel's bounds (check_keepalive). */
    if (c->keepalive_time > 0) {
        int idle = (int) c->keepalive_time, intvl = (int) c->keepalive_intvl,
            cnt = (int) c->keepalive_probes;
        (void) setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
        (void) setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
        (void) setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
        (void) setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    }
    if (c->user_timeout_ms > 0) {
        unsigned ms = c->user_timeout_ms;
        (void) setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms));
    }
}

static int watch(mca_btl_tcp_module_t *module, mca_btl_tcp_pollable_t *p, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = p};
    return 0 == epoll_ctl(module->epfd, EPOLL_CTL_ADD, p->fd, &ev) ? OPAL_SUCCESS
                                                                   : OPAL_ERR_IN_ERRNO;
}

static void unwatch_close(mca_btl_tcp_module_t *module, int fd)
{
    if (fd >= 0) {
        (void) epoll_ctl(module->epfd, EPOLL_CTL_DEL, fd, NULL);
        close(fd);
    }
}

void mca_btl_tcp_want_out(mca_btl_tcp_endpoint_t *ep, bool want)
{
    if (ep->want_out == want || ep->poll.fd < 0) {
        return;
    }
    struct epoll_event ev = {.events = EPOLLIN | (want ? EPOLLOUT : 0), .data.ptr = &ep->poll};
    if (0 == epoll_ctl(ep->module->epfd, EPOLL_CTL_MOD, ep->poll.fd, &ev)) {
        ep->want_out = want;
    }
}

/* The address connect() is trying: the published one at addr_index, or
 * for -1 the loopback of the family in use (::1 when it is IPv6 alone). */
static mca_btl_tcp_ip_t ep_ip(const mca_btl_tcp_endpoint_t *ep)
{
    if (ep->addr_index >= 0) {
        return ep->addr.ip[ep->addr_index];
    }
    mca_btl_tcp_ip_t ip = {.v6 = MCA_BTL_TCP_FAMILY_IPV6 == mca_btl_tcp_component.family};
    if (ip.v6) {
        memcpy(ip.bytes, &in6addr_loopback, 16);
    } else {
        uint32_t lo = htonl(INADDR_LOOPBACK);
        memcpy(ip.bytes, &lo, 4);
    }
    return ip;
}

socklen_t mca_btl_tcp_ip_sockaddr(const mca_btl_tcp_ip_t *ip, uint16_t port,
                                  struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof(*ss));
    if (ip->v6) {
        struct sockaddr_in6 *sa = (struct sockaddr_in6 *) (void *) ss;
        sa->sin6_family = AF_INET6;
        sa->sin6_port = htons(port);
        memcpy(&sa->sin6_addr, ip->bytes, 16);
        return sizeof(*sa);
    }
    struct sockaddr_in *sa = (struct sockaddr_in *) (void *) ss;
    sa->sin_family = AF_INET;
    sa->sin_port = htons(port);
    memcpy(&sa->sin_addr, ip->bytes, 4);
    return sizeof(*sa);
}

void mca_btl_tcp_sockaddr_string(const struct sockaddr_storage *ss, char *buf, size_t size)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    if (AF_INET6 == ss->ss_family) {
        const struct sockaddr_in6 *sa = (const struct sockaddr_in6 *) (const void *) ss;
        if (IN6_IS_ADDR_V4MAPPED(&sa->sin6_addr)) {
            /* An IPv4 peer of a socket that takes both. */
            (void) inet_ntop(AF_INET, sa->sin6_addr.s6_addr + 12, ip, sizeof(ip));
            snprintf(buf, size, "%s:%u", ip, (unsigned) ntohs(sa->sin6_port));
        } else {
            (void) inet_ntop(AF_INET6, &sa->sin6_addr, ip, sizeof(ip));
            snprintf(buf, size, "[%s]:%u", ip, (unsigned) ntohs(sa->sin6_port));
        }
    } else {
        const struct sockaddr_in *sa = (const struct sockaddr_in *) (const void *) ss;
        (void) inet_ntop(AF_INET, &sa->sin_addr, ip, sizeof(ip));
        snprintf(buf, size, "%s:%u", ip, (unsigned) ntohs(sa->sin_port));
    }
}

static const char *ep_address(const mca_btl_tcp_endpoint_t *ep, char *buf, size_t size)
{
    mca_btl_tcp_ip_t ip = ep_ip(ep);
    struct sockaddr_storage ss;
    (void) mca_btl_tcp_ip_sockaddr(&ip, ep->addr.port, &ss);
    mca_btl_tcp_sockaddr_string(&ss, buf, size);
    return buf;
}

/* Starts connect() to the endpoint's current address. */
static int start_connect(mca_btl_tcp_endpoint_t *ep, char *err, size_t err_size)
{
    mca_btl_tcp_module_t *module = ep->module;
    mca_btl_tcp_ip_t ip = ep_ip(ep);
    int fd = socket(ip.v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, err_size, "cannot create an %s socket: %s", ip.v6 ? "IPv6" : "IPv4",
                 strerror(errno));
        return OPAL_ERR_IN_ERRNO;
    }
    tune_socket(fd);
    struct sockaddr_storage ss;
    socklen_t len = mca_btl_tcp_ip_sockaddr(&ip, ep->addr.port, &ss);
    if (0 != connect(fd, (struct sockaddr *) &ss, len) && EINPROGRESS != errno) {
        char where[INET6_ADDRSTRLEN + 8];
        snprintf(err, err_size, "cannot connect to %s: %s", ep_address(ep, where, sizeof(where)),
                 strerror(errno));
        close(fd);
        return OPAL_ERR_UNREACH;
    }
    ep->poll.fd = fd;
    ep->want_out = true;
    if (OPAL_SUCCESS != watch(module, &ep->poll, EPOLLIN | EPOLLOUT)) {
        snprintf(err, err_size, "cannot watch a socket: %s", strerror(errno));
        close(fd);
        ep->poll.fd = -1;
        return OPAL_ERR_IN_ERRNO;
    }
    ep->state = MCA_BTL_TCP_EP_CONNECTING;
    ep->connect_deadline_ns = deadline_from_now(module);
    return OPAL_SUCCESS;
}

/* Tries the endpoint's addresses from the current one on. */
static int connect_next(mca_btl_tcp_endpoint_t *ep, const char *last_error)
{
    char err[256];
    snprintf(err, sizeof(err), "%s", NULL != last_error ? last_error : "no address to try");
    int family = mca_btl_tcp_component.family;
    while (ep->addr_index < (int) ep->addr.count) {
        /* Only addresses of btl_tcp_address_family. */
        bool skip = ep->addr_index >= 0 &&
                    (ep->addr.ip[ep->addr_index].v6 ? MCA_BTL_TCP_FAMILY_IPV4 == family
                                                    : MCA_BTL_TCP_FAMILY_IPV6 == family);
        if (!skip && OPAL_SUCCESS == start_connect(ep, err, sizeof(err))) {
            return OPAL_SUCCESS;
        }
        /* From 127.0.0.1 (the guess for a peer on this node) on to the
         * addresses it published: a launcher that calls two network
         * namespaces one node (containers) is not wrong about much else. */
        ++ep->addr_index;
    }
    if (MCA_BTL_TCP_FAMILY_ANY != family) {
        /* Say so when the families never met: the loopback's refusal
         * alone would hide it. */
        bool v6 = MCA_BTL_TCP_FAMILY_IPV6 == family, any_of_family = false;
        for (unsigned i = 0; i < ep->addr.count; ++i) {
            any_of_family = any_of_family || ep->addr.ip[i].v6 == v6;
        }
        if (!any_of_family) {
            size_t len = strlen(err);
            snprintf(err + len, sizeof(err) - len,
                     "; it published no %s address (btl_tcp_address_family %s here)",
                     v6 ? "IPv6" : "IPv4", v6 ? "ipv6" : "ipv4");
        }
    }
    mca_btl_tcp_peer_failed(ep, err);
    return OPAL_ERR_UNREACH;
}

int mca_btl_tcp_endpoint_connect(mca_btl_tcp_endpoint_t *ep)
{
    switch (ep->state) {
        case MCA_BTL_TCP_EP_GONE:
            return OPAL_ERR_UNREACH;
        case MCA_BTL_TCP_EP_CLOSED:
            break;
        default:
            return OPAL_SUCCESS;
    }
    bool same_node = NULL != ep->proc && 0 != (ep->proc->proc_locality & OPAL_PROC_ON_NODE);
    ep->addr_index = same_node ? -1 : 0;
    return connect_next(ep, NULL);
}

static int send_hello(int fd, mca_btl_tcp_module_t *module, uint16_t kind)
{
    uint8_t buf[MCA_BTL_TCP_HELLO_SIZE];
    mca_btl_tcp_hello_t hello = {.kind = kind, .jobid = module->my_jobid, .rank = module->my_rank};
    mca_btl_tcp_hello_pack(&hello, buf);
    /* 16 bytes on a fresh connection: the socket buffer takes them. */
    ssize_t n = send(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_NOSIGNAL);
    return n == (ssize_t) sizeof(buf) ? OPAL_SUCCESS : OPAL_ERR_UNREACH;
}

/* The connection is up: its receive buffer, then whatever waited for it.
 * False when the peer had to be dropped (no memory for the buffer). */
static bool connected(mca_btl_tcp_endpoint_t *ep)
{
    if (NULL == ep->rbuf) {
        ep->rbuf = malloc(ep->rbuf_size);
        if (NULL == ep->rbuf) {
            char err[96];
            snprintf(err, sizeof(err), "no memory for a %zu-byte receive buffer", ep->rbuf_size);
            mca_btl_tcp_peer_failed(ep, err);
            return false;
        }
    }
    ep->state = MCA_BTL_TCP_EP_CONNECTED;
    mca_btl_tcp_module_t *module = ep->module;
    module->sole = 1 == ++module->connected_count ? ep : NULL;
    ep->rhead = ep->rtail = 0;
    ep->rstate = MCA_BTL_TCP_RECV_HDR;
    if (opal_output_check_verbosity(20, mca_btl_base_output)) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof(ss);
        char at[INET6_ADDRSTRLEN + 8] = "?";
        if (0 == getpeername(ep->poll.fd, (struct sockaddr *) &ss, &len)) {
            mca_btl_tcp_sockaddr_string(&ss, at, sizeof(at));
        }
        opal_output_verbose(20, mca_btl_base_output, "btl/tcp: connected to %s at %s",
                            mca_btl_tcp_peer_name(ep), at);
    }
    mca_btl_tcp_want_out(ep, false);
    if (NULL != ep->sendq.head) {
        (void) mca_btl_tcp_flush_queue(ep);
    }
    return true;
}

/* The connection to the current address failed (err): the next one. */
static void try_next_address(mca_btl_tcp_endpoint_t *ep, const char *err)
{
    unwatch_close(ep->module, ep->poll.fd);
    ep->poll.fd = -1;
    ep->state = MCA_BTL_TCP_EP_CLOSED;
    ++ep->addr_index;
    (void) connect_next(ep, err);
}

/* The handshake failed (err). Through 127.0.0.1 it may have reached
 * another process that has the peer's port in this network namespace:
 * the peer's published addresses are tried next. Otherwise the peer
 * itself answered wrong. */
static void handshake_failed(mca_btl_tcp_endpoint_t *ep, const char *err)
{
    if (ep->addr_index < 0) {
        try_next_address(ep, err);
    } else {
        mca_btl_tcp_peer_failed(ep, err);
    }
}

/* The connecting side: connect() finished, or the handshake answer. */
static int connecting_ready(mca_btl_tcp_endpoint_t *ep, uint32_t events)
{
    mca_btl_tcp_module_t *module = ep->module;
    char where[INET6_ADDRSTRLEN + 8], err[256];
    if (MCA_BTL_TCP_EP_CONNECTING == ep->state) {
        int soerr = 0;
        socklen_t len = sizeof(soerr);
        if (0 != getsockopt(ep->poll.fd, SOL_SOCKET, SO_ERROR, &soerr, &len)) {
            soerr = errno;
        }
        if (0 == soerr && 0 == (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
            return 0;
        }
        if (0 != soerr || OPAL_SUCCESS != send_hello(ep->poll.fd, module, MCA_BTL_TCP_HELLO)) {
            snprintf(err, sizeof(err), "cannot connect to %s: %s",
                     ep_address(ep, where, sizeof(where)),
                     strerror(0 != soerr ? soerr : ECONNRESET));
            try_next_address(ep, err);
            return 1;
        }
        ep->state = MCA_BTL_TCP_EP_HELLO_SENT;
        mca_btl_tcp_want_out(ep, false);
        return 1;
    }
    /* HELLO_SENT: the answer. */
    uint8_t buf[MCA_BTL_TCP_HELLO_SIZE];
    ssize_t n = recv(ep->poll.fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (EAGAIN == errno || EWOULDBLOCK == errno || EINTR == errno)) {
        return 0;
    }
    if (n > 0 && n < (ssize_t) sizeof(buf)) {
        return 0; /* the rest is on its way */
    }
    if (n <= 0) {
        snprintf(err, sizeof(err), "%s closed the connection during the handshake (%s)",
                 ep_address(ep, where, sizeof(where)), 0 == n ? "end of stream" : strerror(errno));
        handshake_failed(ep, err);
        return 1;
    }
    (void) recv(ep->poll.fd, buf, sizeof(buf), MSG_DONTWAIT);
    mca_btl_tcp_hello_t hello;
    char detail[128];
    if (OPAL_SUCCESS != mca_btl_tcp_hello_unpack(buf, &hello, detail, sizeof(detail)) ||
        MCA_BTL_TCP_HELLO == hello.kind || hello.jobid != module->my_jobid ||
        hello.rank != ep->rank) {
        if (OPAL_SUCCESS == mca_btl_tcp_hello_unpack(buf, &hello, detail, sizeof(detail))) {
            snprintf(detail, sizeof(detail), "a handshake of kind %u from [%u,%u]",
                     (unsigned) hello.kind, hello.jobid, hello.rank);
        }
        snprintf(err, sizeof(err), "%s answered with a malformed handshake: %s",
                 ep_address(ep, where, sizeof(where)), detail);
        handshake_failed(ep, err);
        return 1;
    }
    if (MCA_BTL_TCP_REJECT == hello.kind) {
        /* The peer's own connection carries the traffic; it comes (or
         * came) through the listening socket. */
        unwatch_close(module, ep->poll.fd);
        ep->poll.fd = -1;
        ep->want_out = false;
        ep->state = MCA_BTL_TCP_EP_WAITING;
        ep->connect_deadline_ns = deadline_from_now(module);
        return 1;
    }
    (void) connected(ep);
    return 1;
}

int mca_btl_tcp_endpoint_ready(mca_btl_tcp_endpoint_t *ep, uint32_t events)
{
    switch (ep->state) {
        case MCA_BTL_TCP_EP_CONNECTING:
        case MCA_BTL_TCP_EP_HELLO_SENT:
            return connecting_ready(ep, events);
        case MCA_BTL_TCP_EP_CONNECTED: {
            int n = 0;
            if (0 != (events & EPOLLOUT) && NULL != ep->sendq.head) {
                (void) mca_btl_tcp_flush_queue(ep);
                ++n;
            }
            if (MCA_BTL_TCP_EP_CONNECTED == ep->state &&
                0 != (events & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP))) {
                n += mca_btl_tcp_recv(ep);
            }
            return n;
        }
        default:
            return 0;
    }
}

/* --------------------------------------------------- the accepting side */

int mca_btl_tcp_accept(mca_btl_tcp_module_t *module)
{
    int n = 0;
    for (;;) {
        struct sockaddr_storage sa;
        socklen_t len = sizeof(sa);
        int fd =
            accept4(module->listen.fd, (struct sockaddr *) &sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (EAGAIN != errno && EWOULDBLOCK != errno && EINTR != errno &&
                ECONNABORTED != errno) {
                opal_output_verbose(1, mca_btl_base_output, "btl/tcp: accept failed: %s",
                                    strerror(errno));
            }
            return n;
        }
        incoming_t *in = OBJ_NEW(incoming_t);
        if (NULL == in) {
            close(fd);
            return n;
        }
        tune_socket(fd);
        in->poll.kind = MCA_BTL_TCP_POLL_INCOMING;
        in->poll.fd = fd;
        in->got = 0;
        in->deadline_ns = deadline_from_now(module);
        mca_btl_tcp_sockaddr_string(&sa, in->from, sizeof(in->from));
        if (OPAL_SUCCESS != watch(module, &in->poll, EPOLLIN)) {
            close(fd);
            OBJ_RELEASE(in);
            continue;
        }
        opal_list_append(&module->incoming, &in->super);
        ++n;
    }
}

static void incoming_drop(mca_btl_tcp_module_t *module, incoming_t *in, const char *why)
{
    if (NULL != why) {
        opal_output_verbose(1, mca_btl_base_output, "btl/tcp: connection from %s refused: %s",
                            in->from, why);
    }
    unwatch_close(module, in->poll.fd);
    opal_list_remove_item(&module->incoming, &in->super);
    OBJ_RELEASE(in);
}

/* Whether the connection the peer (jobid, rank) started wins over the one
 * this process started to it: the smaller name's connection is kept. */
static bool peer_connection_wins(const mca_btl_tcp_module_t *module, const mca_btl_tcp_hello_t *h)
{
    if (h->jobid != module->my_jobid) {
        return h->jobid < module->my_jobid;
    }
    return h->rank < module->my_rank;
}

int mca_btl_tcp_incoming_ready(mca_btl_tcp_module_t *module, mca_btl_tcp_pollable_t *poll)
{
    incoming_t *in = MCA_BTL_TCP_CONTAINER(poll, incoming_t, poll);
    ssize_t n = recv(in->poll.fd, in->buf + in->got, sizeof(in->buf) - in->got, MSG_DONTWAIT);
    if (n < 0 && (EAGAIN == errno || EWOULDBLOCK == errno || EINTR == errno)) {
        return 0;
    }
    if (n <= 0) {
        /* Most often the loser of a simultaneous connect, closed by its
         * owner before saying anything: not worth a word. */
        incoming_drop(module, in, NULL);
        return 1;
    }
    in->got += (size_t) n;
    if (in->got < sizeof(in->buf)) {
        return 1;
    }
    mca_btl_tcp_hello_t hello;
    char detail[160];
    if (OPAL_SUCCESS != mca_btl_tcp_hello_unpack(in->buf, &hello, detail, sizeof(detail))) {
        incoming_drop(module, in, detail);
        return 1;
    }
    if (MCA_BTL_TCP_HELLO != hello.kind) {
        snprintf(detail, sizeof(detail), "it opened with a handshake of kind %u",
                 (unsigned) hello.kind);
        incoming_drop(module, in, detail);
        return 1;
    }
    if (hello.jobid != module->my_jobid) {
        if (!module->reported_stray) {
            module->reported_stray = true;
            opal_output(0,
                        "btl/tcp: a process of another job ([%u,%u], from %s) connected to this "
                        "one; refused (said once)",
                        hello.jobid, hello.rank, in->from);
        }
        incoming_drop(module, in, NULL);
        return 1;
    }
    if (hello.rank == module->my_rank) {
        incoming_drop(module, in, "it claims to be this process");
        return 1;
    }
    mca_btl_base_reason_t why = {.text = ""};
    mca_btl_tcp_endpoint_t *ep = mca_btl_tcp_endpoint_get(module, hello.rank, &why);
    if (NULL == ep) {
        incoming_drop(module, in, why.text);
        return 1;
    }
    int fd = in->poll.fd;
    bool adopt = false;
    switch (ep->state) {
        case MCA_BTL_TCP_EP_CLOSED:
        case MCA_BTL_TCP_EP_WAITING:
            adopt = true;
            break;
        case MCA_BTL_TCP_EP_CONNECTING:
        case MCA_BTL_TCP_EP_HELLO_SENT:
            adopt = peer_connection_wins(module, &hello);
            if (adopt) {
                /* This process's own attempt loses: nothing but its hello
                 * went on it. */
                unwatch_close(module, ep->poll.fd);
                ep->poll.fd = -1;
                ep->want_out = false;
            }
            break;
        default:
            /* Connected already, or gone. */
            break;
    }
    if (!adopt) {
        if (MCA_BTL_TCP_EP_CONNECTING == ep->state || MCA_BTL_TCP_EP_HELLO_SENT == ep->state) {
            (void) send_hello(fd, module, MCA_BTL_TCP_REJECT);
            incoming_drop(module, in, NULL);
        } else if (MCA_BTL_TCP_EP_GONE == ep->state) {
            snprintf(detail, sizeof(detail), "%s failed earlier", mca_btl_tcp_peer_name(ep));
            incoming_drop(module, in, detail);
        } else {
            /* The loser of a simultaneous connect, arriving after the
             * winner was accepted: its owner has closed it already. */
            incoming_drop(module, in, NULL);
        }
        return 1;
    }
    if (OPAL_SUCCESS != send_hello(fd, module, MCA_BTL_TCP_ACCEPT)) {
        incoming_drop(module, in, "it closed the connection before the handshake's answer");
        return 1;
    }
    /* The socket moves from the incoming entry to the endpoint. */
    (void) epoll_ctl(module->epfd, EPOLL_CTL_DEL, fd, NULL);
    opal_list_remove_item(&module->incoming, &in->super);
    OBJ_RELEASE(in);
    ep->poll.fd = fd;
    ep->want_out = false;
    if (OPAL_SUCCESS != watch(module, &ep->poll, EPOLLIN)) {
        close(fd);
        ep->poll.fd = -1;
        mca_btl_tcp_peer_failed(ep, "cannot watch its connection");
        return 1;
    }
    if (connected(ep)) {
        /* Frames may have come right behind the handshake. */
        (void) mca_btl_tcp_recv(ep);
    }
    return 1;
}

/* Looks at the watched peers' processes: one that exited is gone,
 * whether a connection to it exists or not (without one nothing else
 * would tell). Over a connection its goodbye or its end of the socket
 * says how it left, and the exit may be seen before those are read: it is
 * given one more interval. Then, or at once without a connection, a peer
 * of this job that finalized (opal_rte_peer_finalized) is reported
 * closed, any other failed. A peer that said goodbye or is gone is
 * watched no more; one that the upper layer deleted is not looked at
 * while it is. module->watched becomes the count still watched (0 stops
 * the timer). */
static void liveness_check(mca_btl_tcp_module_t *module)
{
    for (mca_btl_tcp_endpoint_t *ep = module->ep_list; NULL != ep; ep = ep->next_ep) {
        if (0 == ep->watch_pid || !ep->added || ep->said_bye || MCA_BTL_TCP_EP_GONE == ep->state ||
            !opal_pid_exited(ep->watch_pid)) {
            continue;
        }
        if (MCA_BTL_TCP_EP_CONNECTED == ep->state && !ep->exit_seen) {
            ep->exit_seen = true;
            continue;
        }
        char what[96];
        if (ep->rank < module->job_size && opal_rte_peer_finalized(ep->rank)) {
            snprintf(what, sizeof(what), "its process (pid %d) exited after it finalized",
                     (int) ep->watch_pid);
            ep->said_bye = true;
        } else {
            snprintf(what, sizeof(what), "its process (pid %d) has exited", (int) ep->watch_pid);
        }
        mca_btl_tcp_peer_failed(ep, what);
    }
    /* Counted after: an error callback may have added endpoints. */
    uint32_t watched = 0;
    for (mca_btl_tcp_endpoint_t *ep = module->ep_list; NULL != ep; ep = ep->next_ep) {
        if (ep->said_bye || MCA_BTL_TCP_EP_GONE == ep->state) {
            ep->watch_pid = 0;
        }
        watched += 0 != ep->watch_pid ? 1 : 0;
    }
    module->watched = watched;
}

void mca_btl_tcp_timers(mca_btl_tcp_module_t *module)
{
    uint64_t now = opal_timer_ns(), next_due = 0;
    /* First, so that the deadlines below include connections an error
     * callback started. */
    if (module->watched > 0 && now >= module->next_liveness_ns) {
        liveness_check(module);
        module->next_liveness_ns =
            now + (uint64_t) mca_btl_tcp_component.liveness_interval_ms * 1000000u;
    }
    if (module->watched > 0) {
        next_due = module->next_liveness_ns;
    }
    incoming_t *in, *next;
    OPAL_LIST_FOREACH_SAFE (in, next, &module->incoming, incoming_t) {
        if (now >= in->deadline_ns) {
            incoming_drop(module, in, "no handshake in time");
        } else if (0 == next_due || in->deadline_ns < next_due) {
            next_due = in->deadline_ns;
        }
    }
    for (mca_btl_tcp_endpoint_t *ep = module->ep_list; NULL != ep; ep = ep->next_ep) {
        if (MCA_BTL_TCP_EP_CONNECTING != ep->state && MCA_BTL_TCP_EP_HELLO_SENT != ep->state &&
            MCA_BTL_TCP_EP_WAITING != ep->state) {
            continue;
        }
        if (now < ep->connect_deadline_ns) {
            if (0 == next_due || ep->connect_deadline_ns < next_due) {
                next_due = ep->connect_deadline_ns;
            }
            continue;
        }
        char err[128];
        snprintf(err, sizeof(err), "no connection within %u ms (btl_tcp_connect_timeout)",
                 mca_btl_tcp_component.connect_timeout_ms);
        mca_btl_tcp_peer_failed(ep, err);
    }
    /* The timer now waits for the nearest deadline left, or for none. */
    mca_btl_tcp_timer_reset(module, next_due);
}

/* -------------------------------------------------------------- failure */

void mca_btl_tcp_release_rbuf(mca_btl_tcp_endpoint_t *ep)
{
    free(ep->rbuf);
    ep->rbuf = NULL;
    ep->rhead = ep->rtail = 0;
}

/* Drops what the pipe holds (it was for a connection that is gone). */
static void close_pipe(mca_btl_tcp_endpoint_t *ep)
{
    if (ep->pipe[0] >= 0) {
        close(ep->pipe[0]);
        close(ep->pipe[1]);
        ep->pipe[0] = ep->pipe[1] = -1;
    }
    ep->pipe_pending = 0;
}

void mca_btl_tcp_peer_failed(mca_btl_tcp_endpoint_t *ep, const char *what)
{
    if (MCA_BTL_TCP_EP_GONE == ep->state) {
        return;
    }
    mca_btl_tcp_module_t *module = ep->module;
    if (MCA_BTL_TCP_EP_CONNECTED == ep->state) {
        --module->connected_count;
        module->sole = NULL;
    }
    ep->state = MCA_BTL_TCP_EP_GONE;
    unwatch_close(module, ep->poll.fd);
    ep->poll.fd = -1;
    close_pipe(ep);
    /* A gone peer never connects again: its receive buffer goes now, or
     * when the receive pass that found it gone is out of it (a callback
     * may still be reading a message in it). */
    if (!ep->in_recv) {
        mca_btl_tcp_release_rbuf(ep);
    }
    char info[512];
    snprintf(info, sizeof(info), "btl/tcp: %s failed: %s", mca_btl_tcp_peer_name(ep), what);
    if (module->finalizing) {
        opal_output_verbose(10, mca_btl_base_output, "%s (while finalizing)", info);
    } else if (ep->said_bye) {
        /* It finalized: everything it sent came before its goodbye and
         * was delivered. What waits for its answer may stop waiting. */
        snprintf(info, sizeof(info), "btl/tcp: %s finalized (then: %s)", mca_btl_tcp_peer_name(ep),
                 what);
        opal_output_verbose(10, mca_btl_base_output, "%s", info);
        if (NULL != module->error_cb) {
            module->error_cb(&module->super, MCA_BTL_ERROR_FLAGS_PEER_CLOSED, ep->proc, info);
        }
    } else if (NULL != module->error_cb) {
        module->error_cb(&module->super, MCA_BTL_ERROR_FLAGS_PEER_FAILED, ep->proc, info);
    } else {
        opal_output(0, "%s", info);
    }
    /* What waited for it completes with the error. */
    mca_btl_tcp_out_t *out;
    while (NULL != (out = ep->sendq.head)) {
        ep->sendq.head = out->next;
        if (NULL == ep->sendq.head) {
            ep->sendq.tail = NULL;
        }
        mca_btl_tcp_out_abandon(ep, out, OPAL_ERR_UNREACH);
    }
    ep->queued_bytes = 0;
    opal_list_item_t *item;
    while (NULL != (item = opal_list_remove_first(&ep->waiting))) {
        mca_btl_tcp_rdma_op_t *op = (mca_btl_tcp_rdma_op_t *) item;
        --module->rdma_outstanding;
        op->cbfunc(&module->super, ep, op->local_address, op->local_handle, op->cbcontext,
                   op->cbdata, OPAL_ERR_UNREACH);
        opal_free_list_return(&module->rdma_ops, &op->super);
    }
}

void mca_btl_tcp_io_failed(mca_btl_tcp_endpoint_t *ep, const char *doing, int err)
{
    const mca_btl_tcp_component_t *c = &mca_btl_tcp_component;
    char hint[192] = "";
    if (ETIMEDOUT == err) {
        if (c->keepalive_time > 0 && c->user_timeout_ms > 0) {
            snprintf(hint, sizeof(hint),
                     " (no answer to keepalive probes, or data unacknowledged for %u ms: "
                     "btl_tcp_keepalive_*, btl_tcp_user_timeout)",
                     c->user_timeout_ms);
        } else if (c->keepalive_time > 0) {
            snprintf(hint, sizeof(hint),
                     " (no answer to %u keepalive probes %u s apart after %u s idle, or sent "
                     "data never acknowledged: btl_tcp_keepalive_*)",
                     c->keepalive_probes, c->keepalive_intvl, c->keepalive_time);
        } else if (c->user_timeout_ms > 0) {
            snprintf(hint, sizeof(hint), " (data unacknowledged for %u ms: btl_tcp_user_timeout)",
                     c->user_timeout_ms);
        } else {
            snprintf(hint, sizeof(hint), " (sent data never acknowledged)");
        }
    }
    char what[320];
    snprintf(what, sizeof(what), "%s its connection failed: %s%s", doing, strerror(err), hint);
    mca_btl_tcp_peer_failed(ep, what);
}

void mca_btl_tcp_endpoints_release(mca_btl_tcp_module_t *module)
{
    incoming_t *in, *next;
    OPAL_LIST_FOREACH_SAFE (in, next, &module->incoming, incoming_t) {
        incoming_drop(module, in, NULL);
    }
    mca_btl_tcp_endpoint_t *ep, *next_ep;
    for (ep = module->ep_list; NULL != ep; ep = next_ep) {
        next_ep = ep->next_ep;
        /* Whatever did not go out is called back with a timeout, so that
         * its owner gets its memory back. */
        ep->said_bye = true;
        if (MCA_BTL_TCP_EP_GONE != ep->state) {
            mca_btl_tcp_out_t *out;
            while (NULL != (out = ep->sendq.head)) {
                ep->sendq.head = out->next;
                mca_btl_tcp_out_abandon(ep, out, OPAL_ERR_TIMEOUT);
            }
            ep->sendq.tail = NULL;
            opal_list_item_t *item;
            while (NULL != (item = opal_list_remove_first(&ep->waiting))) {
                mca_btl_tcp_rdma_op_t *op = (mca_btl_tcp_rdma_op_t *) item;
                --module->rdma_outstanding;
                op->cbfunc(&module->super, ep, op->local_address, op->local_handle, op->cbcontext,
                           op->cbdata, OPAL_ERR_TIMEOUT);
                opal_free_list_return(&module->rdma_ops, &op->super);
            }
            unwatch_close(module, ep->poll.fd);
            ep->poll.fd = -1;
            ep->state = MCA_BTL_TCP_EP_GONE;
        }
        close_pipe(ep);
        OBJ_DESTRUCT(&ep->waiting);
        OBJ_RELEASE(ep->proc);
        module->endpoints[ep->rank] = NULL;
        free(ep->rbuf);
        free(ep);
    }
    module->ep_list = NULL;
    module->connected_count = 0;
    module->sole = NULL;
}
