/*
 * btl/tcp: active messages and put / get over TCP sockets, for peers that
 * no faster transport reaches and for the RPC layer's tcp runs.
 *
 * One module. It listens on a port of every address (IPv4 and IPv6, or
 * the family btl_tcp_address_family names) and publishes the port, its pid
 * and the addresses of its interfaces (or of those btl_tcp_if_include
 * names) in the modex (btl_tcp_wire.h). A peer on this node is tried on
 * the loopback first, then, as any other, on its addresses in order until
 * one connects.
 *
 * One connection per pair of processes, opened by whichever sends first,
 * with a 16-byte handshake each way. When both open one at once, the
 * connection started by the process with the smaller name (job id, rank)
 * is kept and the other refused (MCA_BTL_TCP_REJECT); nothing but the
 * handshake travels on a connection before it is accepted, so nothing is
 * lost either way. What is sent to a peer before its connection is up
 * waits on the endpoint's queue.
 *
 * Frames (btl_tcp_wire.h) go out with writev straight from the caller's
 * descriptor or registered memory; what the socket does not take at once
 * waits on the endpoint's queue, and the socket is watched for room.
 * Received bytes land in the endpoint's buffer, where active messages are
 * dispatched in place; the data of a put or a get goes from the socket
 * straight into its destination once the bytes already buffered are
 * copied.
 *
 * Put and get need the owner's progress: a PUT carries the data, which the
 * owner receives into the registration the target names; a GET asks the
 * owner to send the data back. The owner checks the registration key,
 * bounds and access first and answers a bad request with a refusal, which
 * completes the operation with an error. A put completes on the owner's
 * acknowledgement, so its data is in place when the callback runs.
 *
 * A connection that ends without the peer's BYE is the peer's failure:
 * the error callback names it, and what was queued or waiting for it
 * completes with OPAL_ERR_UNREACH. A peer whose frame breaks the protocol
 * is dropped the same way, with the reason.
 *
 * Polling: one epoll set holds the listening socket, handshakes in
 * progress and every connection; it is also the fd opal_progress_wait
 * sleeps on.
 *
 * Locking: the module's recursive lock when opal_using_threads().
 */
#ifndef OPAL_MCA_BTL_TCP_BTL_TCP_H
#define OPAL_MCA_BTL_TCP_BTL_TCP_H

#include "opal/opal_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "opal/class/opal_free_list.h"
#include "opal/class/opal_list.h"
#include "opal/mca/btl/base/base.h"
#include "opal/mca/btl/btl.h"
#include "opal/mca/btl/tcp/btl_tcp_wire.h"
#include "opal/threads/opal_mutex.h"

/* The smallest socket buffer btl_tcp_sndbuf / rcvbuf may set. */
#define MCA_BTL_TCP_MIN_SOCKBUF 65536

/* What an epoll event's data points at: every pollable starts with this. */
typedef enum {
    MCA_BTL_TCP_POLL_LISTEN,
    MCA_BTL_TCP_POLL_INCOMING, /* an accepted socket whose handshake is due */
    MCA_BTL_TCP_POLL_ENDPOINT,
    MCA_BTL_TCP_POLL_TIMER, /* the timerfd of the nearest connection deadline */
} mca_btl_tcp_poll_kind_t;

typedef struct mca_btl_tcp_pollable_t {
    mca_btl_tcp_poll_kind_t kind;
    int fd;
} mca_btl_tcp_pollable_t;

/* Something waiting to be written on a connection: up to three pieces
 * (header, target or inline payload, data). */
typedef enum {
    MCA_BTL_TCP_OUT_FRAG,  /* an active message (a descriptor) */
    MCA_BTL_TCP_OUT_RDMA,  /* a put's data or a get's request */
    MCA_BTL_TCP_OUT_REPLY, /* a PUT_ACK or GET_DATA this process owes */
    MCA_BTL_TCP_OUT_CTRL,  /* a BYE (the endpoint's own) */
    MCA_BTL_TCP_OUT_HEAP,  /* the rest of a sendi, held in malloc'd memory */
} mca_btl_tcp_out_kind_t;

typedef struct mca_btl_tcp_out_t {
    struct mca_btl_tcp_out_t *next;
    mca_btl_tcp_out_kind_t kind;
    int iovcnt;
    /* The first piece not yet fully written is iov[first]. */
    int first;
    /* The piece that goes by splice (btl_tcp_splice_min), or -1. */
    int splice;
    struct iovec iov[3];
    uint8_t hdr[MCA_BTL_TCP_FRAME_HDR + MCA_BTL_TCP_RDMA_TARGET];
} mca_btl_tcp_out_t;

typedef struct mca_btl_tcp_queue_t {
    mca_btl_tcp_out_t *head;
    mca_btl_tcp_out_t *tail;
} mca_btl_tcp_queue_t;

struct mca_btl_tcp_module_t;

/* A send descriptor (alloc, prepare_src, sendi that had to wait). */
typedef struct mca_btl_tcp_frag_t {
    mca_btl_base_descriptor_t base;
    mca_btl_tcp_out_t out;
    mca_btl_base_segment_t segment;
    struct mca_btl_base_endpoint_t *endpoint;
    opal_free_list_t *list;
    /* On a queue: send will call back (or give it back). */
    bool queued;
} mca_btl_tcp_frag_t;
OBJ_CLASS_DECLARATION(mca_btl_tcp_frag_t);

/* A put or get in flight; on its endpoint's waiting list from the moment
 * it is queued until its reply. */
typedef struct mca_btl_tcp_rdma_op_t {
    opal_free_list_item_t super;
    mca_btl_tcp_out_t out;
    struct mca_btl_base_endpoint_t *endpoint;
    uint64_t id;
    bool is_get;
    void *local_address;
    size_t size;
    mca_btl_base_registration_handle_t *local_handle;
    mca_btl_base_rdma_completion_fn_t cbfunc;
    void *cbcontext;
    void *cbdata;
} mca_btl_tcp_rdma_op_t;
OBJ_CLASS_DECLARATION(mca_btl_tcp_rdma_op_t);

/* A reply this process owes a peer (PUT_ACK, or GET_DATA with the data in
 * place in the registration). */
typedef struct mca_btl_tcp_reply_t {
    opal_free_list_item_t super;
    mca_btl_tcp_out_t out;
} mca_btl_tcp_reply_t;
OBJ_CLASS_DECLARATION(mca_btl_tcp_reply_t);

typedef enum {
    MCA_BTL_TCP_EP_CLOSED,     /* no connection yet */
    MCA_BTL_TCP_EP_CONNECTING, /* connect() in progress */
    MCA_BTL_TCP_EP_HELLO_SENT, /* waiting for ACCEPT or REJECT */
    MCA_BTL_TCP_EP_WAITING,    /* refused: the peer's own connection comes */
    MCA_BTL_TCP_EP_CONNECTED,
    MCA_BTL_TCP_EP_GONE, /* failed, or said BYE */
} mca_btl_tcp_ep_state_t;

/* Where the receiver is in the byte stream. */
typedef enum {
    MCA_BTL_TCP_RECV_HDR,  /* between frames */
    MCA_BTL_TCP_RECV_DATA, /* into a destination (put target, get buffer) */
    MCA_BTL_TCP_RECV_SINK, /* discarding a refused put's data */
} mca_btl_tcp_recv_state_t;

typedef struct mca_btl_base_endpoint_t {
    mca_btl_tcp_pollable_t poll;
    struct mca_btl_tcp_module_t *module;
    /* Retained while the endpoint exists. */
    opal_proc_t *proc;
    uint32_t rank;
    mca_btl_tcp_addr_t addr;
    /* The address connect() is trying (index into addr.ip, or -1 for the
     * loopback: 127.0.0.1, or ::1 with btl_tcp_address_family ipv6). */
    int addr_index;
    mca_btl_tcp_ep_state_t state;
    bool added;
    /* The module's endpoints, newest first (a standalone job's ranks are
     * pids: walking the rank table would cost millions of steps). */
    struct mca_btl_base_endpoint_t *next_ep;
    /* The peer's pid when it shares this process's pid space (and is not
     * this process): its exit is seen without a connection. 0 otherwise. */
    pid_t watch_pid;
    /* The peer said BYE (or finalized without a connection to say it
     * on): its end is no failure. */
    bool said_bye;
    /* The liveness check saw its process gone while connected: the next
     * check decides (its goodbye may not have been read yet). */
    bool exit_seen;
    /* Watched for EPOLLOUT (something queued the socket did not take). */
    bool want_out;
    uint64_t connect_deadline_ns;

    mca_btl_tcp_queue_t sendq;
    size_t queued_bytes;
    /* Splicing: the pipe (-1 until first used) and the bytes of the head
     * of the queue in it, which go to the socket before anything else. */
    int pipe[2];
    size_t pipe_pending;

    /* Puts and gets sent, oldest first (replies come in this order). */
    opal_list_t waiting;
    uint64_t next_id;

    /* Receive side. */
    uint8_t *rbuf;
    size_t rbuf_size;
    size_t rhead; /* first unread byte */
    size_t rtail; /* one past the last received byte */
    mca_btl_tcp_recv_state_t rstate;
    uint8_t *rdest;                    /* RECV_DATA: where the rest goes */
    size_t rleft;                      /* RECV_DATA / RECV_SINK: bytes still to come */
    bool rdest_is_get;                 /* RECV_DATA: a get's data (else a put's) */
    struct mca_btl_tcp_rdma_op_t *rop; /* RECV_DATA of a get: the get */
    uint64_t rput_id;                  /* RECV_DATA / SINK of a put: its id, and */
    uint16_t rput_status;              /* the status its ack will carry */
    /* A receive pass runs: guards against re-entry from a callback, and
     * corks sends to this peer until the pass ends (one write for all). */
    bool in_recv;
} mca_btl_tcp_endpoint_t;

/* Registered memory as peers see it. key: the registry index (upper 32
 * bits) and a random cookie (lower 32). */
struct mca_btl_base_registration_handle_t {
    uint64_t key;
    uint64_t base;
    uint64_t size;
};

typedef struct mca_btl_tcp_reg_t {
    mca_btl_base_registration_handle_t handle;
    uint32_t flags;
    bool in_use;
    /* Next free slot (in the free chain). */
    int32_t next_free;
} mca_btl_tcp_reg_t;

typedef struct mca_btl_tcp_module_t {
    mca_btl_base_module_t super;
    opal_recursive_mutex_t lock;
    char transport[96];

    uint32_t my_jobid;
    uint32_t my_rank;
    uint32_t job_size;
    /* Indexed by rank; created by add_procs, a first send or an accepted
     * connection. */
    mca_btl_tcp_endpoint_t **endpoints;
    mca_btl_tcp_endpoint_t *ep_list;

    mca_btl_tcp_pollable_t listen;
    uint16_t port;
    /* The listening socket takes IPv6 (and, with family any, IPv4 too, as
     * mapped addresses). */
    bool listen_v6;
    int epfd;
    bool epfd_registered;
    /* Progress calls since the last check of connection deadlines. */
    unsigned progress_calls;
    /* Endpoints connected, and the one when that is exactly one (NULL
     * while not known: the next epoll pass finds it). Progress reads that
     * one's socket directly, and asks epoll about everything else only
     * every btl_tcp_epoll_interval calls (direct_calls counts them). */
    uint32_t connected_count;
    struct mca_btl_base_endpoint_t *sole;
    unsigned direct_calls;
    /* A timerfd in the epoll set, armed for the nearest connection or
     * handshake deadline, so that a process asleep in opal_progress_wait
     * wakes for it (-1 when the kernel gave none: then only the periodic
     * check sees deadlines); the deadline it is armed for (0: none). */
    mca_btl_tcp_pollable_t timer;
    uint64_t timer_due_ns;
    /* Endpoints whose process is watched (their pid means the same here;
     * recounted at each look, gone ones left out: 0 stops the looks), and
     * when the next look is due. */
    uint32_t watched;
    uint64_t next_liveness_ns;
    /* opal_pid_space() of this process, published with its pid. */
    uint64_t pid_space;
    /* Accepted sockets whose handshake has not arrived. */
    opal_list_t incoming;

    opal_free_list_t eager_frags;
    opal_free_list_t max_frags;
    opal_free_list_t rdma_ops;
    opal_free_list_t replies;
    bool lists_constructed;

    mca_btl_tcp_reg_t *regs;
    int32_t regs_size;
    int32_t regs_free;

    mca_btl_base_module_error_cb_fn_t error_cb;
    size_t rdma_outstanding;
    bool finalizing;
    /* Handshakes from outside the job refused (reported once). */
    bool reported_stray;
} mca_btl_tcp_module_t;

typedef struct mca_btl_tcp_component_t {
    mca_btl_base_component_t super;
    mca_btl_tcp_module_t *module;
    mca_btl_base_module_t *modules[1];

    /* Variables (btl_tcp_*). */
    char *if_include;
    char *address_family;
    /* address_family read: MCA_BTL_TCP_FAMILY_*. */
    int family;
    int port_min;
    int port_range;
    size_t sndbuf;
    size_t rcvbuf;
    size_t max_queued;
    unsigned connect_timeout_ms;
    /* Between checks of the watched peers' processes (0: none). */
    unsigned liveness_interval_ms;
    unsigned free_list_max;
    unsigned finalize_timeout_ms;
    size_t splice_min;
    /* Most bytes one progress pass reads from one connection. */
    size_t recv_budget;
    /* With one connection, progress calls per epoll pass (1: every call). */
    unsigned epoll_interval;
    /* Dead-peer detection by the kernel: keepalive probes on an idle
     * connection (seconds; time 0: none) and the longest time sent data
     * may stay unacknowledged (TCP_USER_TIMEOUT, ms; 0: the kernel's). */
    unsigned keepalive_time;
    unsigned keepalive_intvl;
    unsigned keepalive_probes;
    unsigned user_timeout_ms;
    /* Splicing works here (cleared when vmsplice refuses once). */
    bool splice_ok;
} mca_btl_tcp_component_t;

/* btl_tcp_address_family. */
enum {
    MCA_BTL_TCP_FAMILY_ANY,
    MCA_BTL_TCP_FAMILY_IPV4,
    MCA_BTL_TCP_FAMILY_IPV6,
};

OPAL_DECLSPEC extern mca_btl_tcp_component_t mca_btl_tcp_component;
extern mca_btl_tcp_module_t mca_btl_tcp_module_template;

static inline mca_btl_tcp_module_t *mca_btl_tcp_module(mca_btl_base_module_t *btl)
{
    return (mca_btl_tcp_module_t *) (void *) btl;
}

#define MCA_BTL_TCP_CONTAINER(ptr, type, member)                                                   \
    ((type *) (void *) ((char *) (ptr) -offsetof(type, member)))

/* ------------------------------------------------------------ internals */

/* Creates the module listening as the variables say; on failure says why
 * in *why (malloc'd) and leaves nothing behind. */
int mca_btl_tcp_module_create(mca_btl_tcp_module_t **module, char **why);
int mca_btl_tcp_finalize(mca_btl_base_module_t *btl);
/* What the module publishes: its port, pid and addresses (why, malloc'd,
 * when there is no address to publish). */
int mca_btl_tcp_module_address(mca_btl_tcp_module_t *module, mca_btl_tcp_addr_t *addr, char **why);

/* One pass: queued writes, connections, handshakes, received frames. */
/* One progress pass: the sole connection's socket read directly, or an
 * epoll pass over everything (mca_btl_tcp_module_poll). */
int mca_btl_tcp_module_progress(mca_btl_tcp_module_t *module);
/* One epoll pass over every socket and the timer. */
int mca_btl_tcp_module_poll(mca_btl_tcp_module_t *module);

/* The endpoint of rank, created from its modex record when missing; NULL
 * with why filled when it cannot be reached. */
mca_btl_tcp_endpoint_t *mca_btl_tcp_endpoint_get(mca_btl_tcp_module_t *module, uint32_t rank,
                                                 mca_btl_base_reason_t *why);
void mca_btl_tcp_endpoints_release(mca_btl_tcp_module_t *module);
const char *mca_btl_tcp_peer_name(const mca_btl_tcp_endpoint_t *ep);

/* Starts connecting when the endpoint has no connection (the first send
 * to it). OPAL_ERR_UNREACH when it is gone. */
int mca_btl_tcp_endpoint_connect(mca_btl_tcp_endpoint_t *ep);

/* The peer is gone (what says how it was found out): reports it, closes
 * the connection and completes everything queued or waiting for it with
 * OPAL_ERR_UNREACH. */
void mca_btl_tcp_peer_failed(mca_btl_tcp_endpoint_t *ep, const char *what);
/* The socket address of ip and port in ss (its length); an all-zero ip is
 * the family's any-address. */
socklen_t mca_btl_tcp_ip_sockaddr(const mca_btl_tcp_ip_t *ip, uint16_t port,
                                  struct sockaddr_storage *ss);
/* "a.b.c.d:port" or "[v6]:port" (an IPv4-mapped IPv6 address as IPv4). */
void mca_btl_tcp_sockaddr_string(const struct sockaddr_storage *ss, char *buf, size_t size);
/* Frees a connection's receive buffer (its peer is gone). */
void mca_btl_tcp_release_rbuf(mca_btl_tcp_endpoint_t *ep);
/* The peer failed because reading or writing (doing) its connection gave
 * err: the reason names the error, and for ETIMEDOUT which setting timed
 * it out. */
void mca_btl_tcp_io_failed(mca_btl_tcp_endpoint_t *ep, const char *doing, int err);

/* Accepts what is pending on the listening socket. */
int mca_btl_tcp_accept(mca_btl_tcp_module_t *module);
/* An accepted socket's handshake can be read. */
int mca_btl_tcp_incoming_ready(mca_btl_tcp_module_t *module, mca_btl_tcp_pollable_t *in);
/* An endpoint's socket has events (connect finished, handshake answer,
 * room to write, frames). */
int mca_btl_tcp_endpoint_ready(mca_btl_tcp_endpoint_t *ep, uint32_t events);
/* Makes the module's timer fire by deadline_ns (opal_timer_ns() units). */
void mca_btl_tcp_timer_arm(mca_btl_tcp_module_t *module, uint64_t deadline_ns);
/* Makes it fire at deadline_ns exactly (0: never). */
void mca_btl_tcp_timer_reset(mca_btl_tcp_module_t *module, uint64_t deadline_ns);

/* What is due: the watched peers' processes, when their check is (an
 * exited one is the peer's failure); handshakes and connects past their
 * deadline. Then arms the timer for the next of these. */
void mca_btl_tcp_timers(mca_btl_tcp_module_t *module);

/* Queues out on ep (and writes at once when nothing is ahead of it and the
 * connection is up). */
void mca_btl_tcp_enqueue(mca_btl_tcp_endpoint_t *ep, mca_btl_tcp_out_t *out);
/* Writes what ep has queued as far as the socket takes it. OPAL_SUCCESS,
 * or OPAL_ERR_UNREACH when the peer was found gone. */
int mca_btl_tcp_flush_queue(mca_btl_tcp_endpoint_t *ep);
/* Reads and handles what ep's socket has. */
int mca_btl_tcp_recv(mca_btl_tcp_endpoint_t *ep);
/* Sets or clears ep's interest in EPOLLOUT. */
void mca_btl_tcp_want_out(mca_btl_tcp_endpoint_t *ep, bool want);

/* Completes a queued item whose last byte went out. */
void mca_btl_tcp_out_done(mca_btl_tcp_endpoint_t *ep, mca_btl_tcp_out_t *out);
/* Completes (with status) a queued item that will never go out. */
void mca_btl_tcp_out_abandon(mca_btl_tcp_endpoint_t *ep, mca_btl_tcp_out_t *out, int status);

/* The module's operations. */
int mca_btl_tcp_add_procs(mca_btl_base_module_t *btl, size_t nprocs, opal_proc_t **procs,
                          struct mca_btl_base_endpoint_t **endpoints, opal_bitmap_t *reachable,
                          mca_btl_base_reason_t *reasons);
int mca_btl_tcp_del_procs(mca_btl_base_module_t *btl, size_t nprocs, opal_proc_t **procs,
                          struct mca_btl_base_endpoint_t **endpoints);
mca_btl_base_descriptor_t *mca_btl_tcp_alloc(mca_btl_base_module_t *btl,
                                             struct mca_btl_base_endpoint_t *endpoint,
                                             uint8_t order, size_t size, uint32_t flags);
int mca_btl_tcp_free(mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des);
mca_btl_base_descriptor_t *mca_btl_tcp_prepare_src(mca_btl_base_module_t *btl,
                                                   struct mca_btl_base_endpoint_t *endpoint,
                                                   const void *data, uint8_t order, size_t reserve,
                                                   size_t *size, uint32_t flags);
int mca_btl_tcp_send(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag);
int mca_btl_tcp_sendi(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      const void *header, size_t header_size, const void *payload,
                      size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                      mca_btl_base_descriptor_t **descriptor);
int mca_btl_tcp_put(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, uint64_t remote_address,
                    mca_btl_base_registration_handle_t *local_handle,
                    mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                    int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata);
int mca_btl_tcp_get(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                    void *local_address, uint64_t remote_address,
                    mca_btl_base_registration_handle_t *local_handle,
                    mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                    int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                    void *cbdata);
mca_btl_base_registration_handle_t *mca_btl_tcp_register_mem(mca_btl_base_module_t *btl,
                                                             struct mca_btl_base_endpoint_t *ep,
                                                             void *base, size_t size,
                                                             uint32_t flags);
int mca_btl_tcp_deregister_mem(mca_btl_base_module_t *btl,
                               mca_btl_base_registration_handle_t *handle);
int mca_btl_tcp_flush(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint);
void mca_btl_tcp_dump(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      char *buf, size_t size);

/* The owner's side of a GET: queues its data, or its refusal. */
int mca_btl_tcp_serve_get(mca_btl_tcp_endpoint_t *ep, uint64_t id, const mca_btl_tcp_target_t *t);
/* The owner's side of a PUT: the status its data will be acknowledged
 * with (OK: received into place; otherwise discarded). */
unsigned mca_btl_tcp_accept_put(mca_btl_tcp_endpoint_t *ep, const mca_btl_tcp_target_t *t);
int mca_btl_tcp_ack_put(mca_btl_tcp_endpoint_t *ep, uint64_t id, unsigned status);
/* The operation a PUT_ACK or GET_DATA answers (the oldest waiting), or
 * NULL with why filled when it answers none. */
mca_btl_tcp_rdma_op_t *mca_btl_tcp_reply_match(mca_btl_tcp_endpoint_t *ep,
                                               const mca_btl_tcp_frame_t *f, char *why,
                                               size_t why_size);
/* Completes a waiting operation with a reply's status. */
void mca_btl_tcp_rdma_complete(mca_btl_tcp_endpoint_t *ep, mca_btl_tcp_rdma_op_t *op,
                               unsigned status);

/* The registration key names, checked for a peer's put (write) or get. */
unsigned mca_btl_tcp_reg_check(mca_btl_tcp_module_t *module, const mca_btl_tcp_target_t *t,
                               bool write);

#endif /* OPAL_MCA_BTL_TCP_BTL_TCP_H */
