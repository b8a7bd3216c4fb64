/*
 * btl/tcp's module: creation (listening socket, epoll set, lists), its
 * published address, peers, registrations, flush and finalize.
 */
#include "opal/opal_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "opal/mca/btl/tcp/btl_tcp.h"
#include "opal/runtime/opal_progress.h"
#include "opal/runtime/opal_proc.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "opal/util/opal_pid.h"
#include "opal/util/opal_timer.h"

/* Every queue item starts out never splicing: a stale or zeroed index
 * would hand a descriptor's buffer to vmsplice, which references its
 * pages instead of copying them, and the next message written into the
 * reused descriptor would change bytes already "sent". */
static void frag_construct(mca_btl_tcp_frag_t *frag)
{
    frag->base.des_segments = &frag->segment;
    frag->base.des_segment_count = 1;
    frag->segment.seg_addr = NULL;
    frag->segment.seg_len = 0;
    frag->endpoint = NULL;
    frag->list = NULL;
    frag->queued = false;
    frag->out.kind = MCA_BTL_TCP_OUT_FRAG;
    frag->out.splice = -1;
}
OBJ_CLASS_INSTANCE(mca_btl_tcp_frag_t, mca_btl_base_descriptor_t, frag_construct, NULL);

static void rdma_op_construct(mca_btl_tcp_rdma_op_t *op)
{
    op->out.kind = MCA_BTL_TCP_OUT_RDMA;
    op->out.splice = -1;
}
OBJ_CLASS_INSTANCE(mca_btl_tcp_rdma_op_t, opal_free_list_item_t, rdma_op_construct, NULL);

static void reply_construct(mca_btl_tcp_reply_t *reply)
{
    reply->out.kind = MCA_BTL_TCP_OUT_REPLY;
    reply->out.splice = -1;
}
OBJ_CLASS_INSTANCE(mca_btl_tcp_reply_t, opal_free_list_item_t, reply_construct, NULL);

static int register_error(mca_btl_base_module_t *btl, mca_btl_base_module_error_cb_fn_t cbfunc)
{
    mca_btl_tcp_module(btl)->error_cb = cbfunc;
    return OPAL_SUCCESS;
}

/* ------------------------------------------------------------ creation */

/* Binds fd (IPv6 when v6) to the first free port of the variables' range
 * (or any), on every address. */
static int bind_port(int fd, bool v6, uint16_t *port, char **why)
{
    const mca_btl_tcp_component_t *c = &mca_btl_tcp_component;
    if (c->port_min < 0 || c->port_min > 65535 || c->port_range < 1) {
        if (asprintf(why, "btl_tcp_port_min %d / btl_tcp_port_range %d: not a range of ports",
                     c->port_min, c->port_range) < 0) {
            *why = NULL;
        }
        return OPAL_ERR_BAD_PARAM;
    }
    int first = c->port_min, count = 0 == c->port_min ? 1 : c->port_range;
    int err = 0;
    for (int i = 0; i < count && first + i <= 65535; ++i) {
        const mca_btl_tcp_ip_t any = {.v6 = v6};
        struct sockaddr_storage ss;
        socklen_t len = mca_btl_tcp_ip_sockaddr(&any, (uint16_t) (first + i), &ss);
        if (0 == bind(fd, (struct sockaddr *) &ss, len)) {
            len = sizeof(ss);
            if (0 != getsockname(fd, (struct sockaddr *) &ss, &len)) {
                err = errno;
                break;
            }
            *port = ntohs(v6 ? ((struct sockaddr_in6 *) (void *) &ss)->sin6_port
                             : ((struct sockaddr_in *) (void *) &ss)->sin_port);
            return OPAL_SUCCESS;
        }
        err = errno;
    }
    if (asprintf(why, "cannot listen on a TCP port (%d to %d): %s", first,
                 0 == first ? 65535 : first + count - 1, strerror(err)) < 0) {
        *why = NULL;
    }
    return OPAL_ERR_IN_ERRNO;
}

/* The listening socket for btl_tcp_address_family: IPv4 alone; IPv6 alone;
 * or, for any, one IPv6 socket that takes IPv4 too (as mapped addresses),
 * or IPv4 alone where the kernel has no IPv6. -1 with why on failure. */
static int listen_socket(bool *v6, char **why)
{
    int family = mca_btl_tcp_component.family;
    const int flags = SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC;
    *v6 = false;
    if (MCA_BTL_TCP_FAMILY_IPV4 != family) {
        int fd = socket(AF_INET6, flags, 0);
        int only = MCA_BTL_TCP_FAMILY_IPV6 == family;
        if (fd >= 0 && 0 == setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &only, sizeof(only))) {
            *v6 = true;
            return fd;
        }
        int err = errno;
        if (fd >= 0) {
            close(fd);
        }
        if (MCA_BTL_TCP_FAMILY_IPV6 == family) {
            if (asprintf(why, "cannot create an IPv6 TCP socket (btl_tcp_address_family ipv6): %s",
                         strerror(err)) < 0) {
                *why = NULL;
            }
            return -1;
        }
    }
    int fd = socket(AF_INET, flags, 0);
    if (fd < 0 && asprintf(why, "cannot create a TCP socket: %s", strerror(errno)) < 0) {
        *why = NULL;
    }
    return fd;
}

/* The module's epoll set fired (or opal_progress_wait found it ready). */
static int epoll_ready(int fd, uint32_t epoll_events, void *context)
{
    (void) fd;
    (void) epoll_events;
    return mca_btl_tcp_module_poll(context);
}

int mca_btl_tcp_module_create(mca_btl_tcp_module_t **out, char **why)
{
    const mca_btl_tcp_component_t *c = &mca_btl_tcp_component;
    *why = NULL;
    mca_btl_tcp_module_t *module = calloc(1, sizeof(*module));
    if (NULL == module) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    module->super = mca_btl_tcp_module_template.super;
    module->listen.kind = MCA_BTL_TCP_POLL_LISTEN;
    module->listen.fd = -1;
    module->epfd = -1;
    module->timer.kind = MCA_BTL_TCP_POLL_TIMER;
    module->timer.fd = -1;
    OBJ_CONSTRUCT(&module->lock, opal_recursive_mutex_t);
    OBJ_CONSTRUCT(&module->eager_frags, opal_free_list_t);
    OBJ_CONSTRUCT(&module->max_frags, opal_free_list_t);
    OBJ_CONSTRUCT(&module->rdma_ops, opal_free_list_t);
    OBJ_CONSTRUCT(&module->replies, opal_free_list_t);
    OBJ_CONSTRUCT(&module->incoming, opal_list_t);
    module->lists_constructed = true;
    module->regs_free = -1;

    mca_btl_base_module_t *btl = &module->super;
    btl->btl_add_procs = mca_btl_tcp_add_procs;
    btl->btl_del_procs = mca_btl_tcp_del_procs;
    btl->btl_finalize = mca_btl_tcp_finalize;
    btl->btl_register_error = register_error;
    btl->btl_alloc = mca_btl_tcp_alloc;
    btl->btl_free = mca_btl_tcp_free;
    btl->btl_prepare_src = mca_btl_tcp_prepare_src;
    btl->btl_send = mca_btl_tcp_send;
    btl->btl_sendi = 0 != (btl->btl_flags & MCA_BTL_FLAGS_SENDI) ? mca_btl_tcp_sendi : NULL;
    btl->btl_put = 0 != (btl->btl_flags & MCA_BTL_FLAGS_PUT) ? mca_btl_tcp_put : NULL;
    btl->btl_get = 0 != (btl->btl_flags & MCA_BTL_FLAGS_GET) ? mca_btl_tcp_get : NULL;
    if (NULL != btl->btl_put || NULL != btl->btl_get) {
        btl->btl_register_mem = mca_btl_tcp_register_mem;
        btl->btl_deregister_mem = mca_btl_tcp_deregister_mem;
        btl->btl_flush = mca_btl_tcp_flush;
        btl->btl_dump = mca_btl_tcp_dump;
        btl->btl_registration_handle_size = sizeof(mca_btl_base_registration_handle_t);
    } else {
        btl->btl_put_limit = 0;
        btl->btl_get_limit = 0;
        btl->btl_registration_handle_size = 0;
    }

    const opal_proc_job_info_t *job = opal_proc_job_info();
    module->my_jobid = job->my_name.jobid;
    module->my_rank = job->my_name.vpid;
    module->job_size = job->size;
    module->pid_space = opal_pid_space();
    module->endpoints = calloc(module->job_size, sizeof(*module->endpoints));

    size_t max = c->free_list_max > 0 ? c->free_list_max : 1;
    /* A list never starts (nor grows) past its bound: a small
     * btl_tcp_free_list_max is a bound, not a reason to fail. */
    size_t eager_first = max < 16 ? max : 16, rdma_first = max < 32 ? max : 32;
    int rc = OPAL_ERR_OUT_OF_RESOURCE;
    if (NULL == module->endpoints ||
        OPAL_SUCCESS != opal_free_list_init(&module->eager_frags, sizeof(mca_btl_tcp_frag_t),
                                            OPAL_CACHE_LINE_SIZE, OBJ_CLASS(mca_btl_tcp_frag_t),
                                            btl->btl_eager_limit + MCA_BTL_TCP_FRAME_HDR,
                                            OPAL_CACHE_LINE_SIZE, eager_first, max, eager_first,
                                            NULL, NULL, NULL) ||
        OPAL_SUCCESS != opal_free_list_init(&module->max_frags, sizeof(mca_btl_tcp_frag_t),
                                            OPAL_CACHE_LINE_SIZE, OBJ_CLASS(mca_btl_tcp_frag_t),
                                            btl->btl_max_send_size + MCA_BTL_TCP_FRAME_HDR,
                                            OPAL_CACHE_LINE_SIZE, 2, max / 16 > 4 ? max / 16 : 4, 2,
                                            NULL, NULL, NULL) ||
        OPAL_SUCCESS != opal_free_list_init(&module->rdma_ops, sizeof(mca_btl_tcp_rdma_op_t),
                                            OPAL_CACHE_LINE_SIZE, OBJ_CLASS(mca_btl_tcp_rdma_op_t),
                                            0, 0, rdma_first, max, rdma_first, NULL, NULL, NULL) ||
        OPAL_SUCCESS != opal_free_list_init(&module->replies, sizeof(mca_btl_tcp_reply_t),
                                            OPAL_CACHE_LINE_SIZE, OBJ_CLASS(mca_btl_tcp_reply_t), 0,
                                            0, 32, 0, 32, NULL, NULL, NULL)) {
        if (asprintf(why, "cannot allocate its descriptors") < 0) {
            *why = NULL;
        }
        goto fail;
    }

    module->listen.fd = listen_socket(&module->listen_v6, why);
    if (module->listen.fd < 0) {
        rc = OPAL_ERR_IN_ERRNO;
        goto fail;
    }
    rc = bind_port(module->listen.fd, module->listen_v6, &module->port, why);
    if (OPAL_SUCCESS != rc) {
        goto fail;
    }
    if (0 != listen(module->listen.fd, 128)) {
        rc = OPAL_ERR_IN_ERRNO;
        if (asprintf(why, "cannot listen on port %u: %s", module->port, strerror(errno)) < 0) {
            *why = NULL;
        }
        goto fail;
    }
    module->epfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &module->listen};
    if (module->epfd < 0 || 0 != epoll_ctl(module->epfd, EPOLL_CTL_ADD, module->listen.fd, &ev)) {
        rc = OPAL_ERR_IN_ERRNO;
        if (asprintf(why, "cannot create its epoll set: %s", strerror(errno)) < 0) {
            *why = NULL;
        }
        goto fail;
    }
    /* Without a timer (the kernel refused one) deadlines are still seen,
     * by the periodic check of a process that progresses. */
    module->timer.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    ev = (struct epoll_event){.events = EPOLLIN, .data.ptr = &module->timer};
    if (module->timer.fd >= 0 &&
        0 != epoll_ctl(module->epfd, EPOLL_CTL_ADD, module->timer.fd, &ev)) {
        close(module->timer.fd);
        module->timer.fd = -1;
    }
    if (module->timer.fd < 0) {
        opal_output_verbose(1, mca_btl_base_output,
                            "btl tcp: no timerfd (%s): a process asleep in opal_progress_wait "
                            "learns of a connection past its deadline only when it wakes",
                            strerror(errno));
    }
    rc = opal_progress_fd_register(module->epfd, epoll_ready, module);
    if (OPAL_SUCCESS != rc) {
        if (asprintf(why, "cannot watch its sockets for opal_progress_wait: %s",
                     opal_strerror(rc)) < 0) {
            *why = NULL;
        }
        goto fail;
    }
    module->epfd_registered = true;
    snprintf(module->transport, sizeof(module->transport), "tcp, port %u", module->port);
    btl->btl_transport = module->transport;
    *out = module;
    return OPAL_SUCCESS;

fail:
    (void) mca_btl_tcp_finalize(&module->super);
    return OPAL_SUCCESS != rc ? rc : OPAL_ERR_OUT_OF_RESOURCE;
}

/* Whether name is in the comma-separated list. */
static bool listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; NULL != p && '\0' != *p;) {
        const char *end = strchr(p, ',');
        size_t len = NULL != end ? (size_t) (end - p) : strlen(p);
        if (len == n && 0 == strncmp(p, name, n)) {
            return true;
        }
        p = NULL != end ? end + 1 : NULL;
    }
    return false;
}

int mca_btl_tcp_module_address(mca_btl_tcp_module_t *module, mca_btl_tcp_addr_t *addr, char **why)
{
    const char *include = mca_btl_tcp_component.if_include;
    bool filter = NULL != include && '\0' != include[0];
    memset(addr, 0, sizeof(*addr));
    addr->port = module->port;
    addr->pid = (uint32_t) getpid();
    addr->pid_space = module->pid_space;
    struct ifaddrs *ifs = NULL;
    if (0 != getifaddrs(&ifs)) {
        if (asprintf(why, "cannot list the network interfaces: %s", strerror(errno)) < 0) {
            *why = NULL;
        }
        return OPAL_ERR_IN_ERRNO;
    }
    bool want4 = MCA_BTL_TCP_FAMILY_IPV6 != mca_btl_tcp_component.family;
    bool want6 = MCA_BTL_TCP_FAMILY_IPV4 != mca_btl_tcp_component.family && module->listen_v6;
    mca_btl_tcp_ip_t loopback = {.v6 = false};
    bool have_loopback = false;
    /* IPv4 first: the peers try them in order. */
    for (int pass = 0; pass < 2; ++pass) {
        bool v6 = 1 == pass;
        if (!(v6 ? want6 : want4)) {
            continue;
        }
        for (struct ifaddrs *i = ifs; NULL != i; i = i->ifa_next) {
            if (NULL == i->ifa_addr || (v6 ? AF_INET6 : AF_INET) != i->ifa_addr->sa_family ||
                0 == (i->ifa_flags & IFF_UP) || (filter && !listed(include, i->ifa_name))) {
                continue;
            }
            mca_btl_tcp_ip_t ip = {.v6 = v6};
            if (v6) {
                const struct in6_addr *a =
                    &((const struct sockaddr_in6 *) (const void *) i->ifa_addr)->sin6_addr;
                /* A link-local address names no host without its
                 * interface; the others are no peer's way here. */
                if (IN6_IS_ADDR_LINKLOCAL(a) || IN6_IS_ADDR_MULTICAST(a) ||
                    IN6_IS_ADDR_V4MAPPED(a) || IN6_IS_ADDR_UNSPECIFIED(a)) {
                    continue;
                }
                memcpy(ip.bytes, a, 16);
            } else {
                memcpy(ip.bytes,
                       &((const struct sockaddr_in *) (const void *) i->ifa_addr)->sin_addr, 4);
            }
            if (0 != (i->ifa_flags & IFF_LOOPBACK)) {
                if (!have_loopback) {
                    loopback = ip;
                    have_loopback = true;
                }
                continue;
            }
            if (addr->count < MCA_BTL_TCP_MAX_ADDRS) {
                addr->ip[addr->count++] = ip;
            }
        }
    }
    freeifaddrs(ifs);
    if (0 == addr->count && have_loopback) {
        /* A machine without a network still reaches itself. */
        addr->ip[addr->count++] = loopback;
    }
    if (0 == addr->count) {
        if (asprintf(why, "no %s address to publish%s%s",
                     !want6   ? "IPv4"
                     : !want4 ? "IPv6"
                              : "IPv4 or IPv6",
                     filter ? " on btl_tcp_if_include=" : "", filter ? include : "") < 0) {
            *why = NULL;
        }
        return OPAL_ERR_NOT_FOUND;
    }
    return OPAL_SUCCESS;
}

/* -------------------------------------------------------------- procs */

/* add_procs' step for one peer: its endpoint, now in the caller's use. */
static struct mca_btl_base_endpoint_t *add_rank(void *module, uint32_t rank,
                                                mca_btl_base_reason_t *why)
{
    mca_btl_tcp_endpoint_t *ep = mca_btl_tcp_endpoint_get(module, rank, why);
    if (NULL != ep) {
        ep->added = true;
    }
    return ep;
}

int mca_btl_tcp_add_procs(mca_btl_base_module_t *btl, size_t nprocs, opal_proc_t **procs,
                          struct mca_btl_base_endpoint_t **endpoints, opal_bitmap_t *reachable,
                          mca_btl_base_reason_t *reasons)
{
    mca_btl_tcp_module_t *module = mca_btl_tcp_module(btl);
    OPAL_THREAD_LOCK(&module->lock);
    int rc = mca_btl_base_add_procs_by_rank(module, module->my_rank, nprocs, procs, endpoints,
                                            reachable, reasons, add_rank);
    OPAL_THREAD_UNLOCK(&module->lock);
    return rc;
}

int mca_btl_tcp_del_procs(mca_btl_base_module_t *btl, size_t nprocs, opal_proc_t **procs,
                          struct mca_btl_base_endpoint_t **endpoints)
{
    (void) procs;
    mca_btl_tcp_module_t *module = mca_btl_tcp_module(btl);
    OPAL_THREAD_LOCK(&module->lock);
    /* The endpoint and its connection stay until the module goes: the
     * peer may still send, and a later add_procs gets it back. */
    for (size_t i = 0; i < nprocs; ++i) {
        if (NULL != endpoints && NULL != endpoints[i]) {
            endpoints[i]->added = false;
        }
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    return OPAL_SUCCESS;
}

/* ------------------------------------------------------- registrations */

mca_btl_base_registration_handle_t *mca_btl_tcp_register_mem(mca_btl_base_module_t *btl,
                                                             struct mca_btl_base_endpoint_t *ep,
                                                             void *base, size_t size,
                                                             uint32_t flags)
{
    (void) ep;
    mca_btl_tcp_module_t *module = mca_btl_tcp_module(btl);
    OPAL_THREAD_LOCK(&module->lock);
    if (module->regs_free < 0) {
        int32_t grow = module->regs_size > 0 ? module->regs_size : 64;
        if (module->regs_size > INT32_MAX / 2) {
            OPAL_THREAD_UNLOCK(&module->lock);
            return NULL;
        }
        mca_btl_tcp_reg_t *regs =
            realloc(module->regs, (size_t) (module->regs_size + grow) * sizeof(*regs));
        if (NULL == regs) {
            OPAL_THREAD_UNLOCK(&module->lock);
            opal_output(0, "btl/tcp: out of memory registering %zu bytes", size);
            return NULL;
        }
        /* Growing moves the entries: the handles given out are copies,
         * never pointers into the array. */
        module->regs = regs;
        for (int32_t i = module->regs_size + grow - 1; i >= module->regs_size; --i) {
            regs[i].in_use = false;
            regs[i].next_free = module->regs_free;
            module->regs_free = i;
        }
        module->regs_size += grow;
    }
    int32_t index = module->regs_free;
    mca_btl_tcp_reg_t *reg = &module->regs[index];
    module->regs_free = reg->next_free;
    uint32_t cookie = 0;
    while (0 == cookie) {
        if (sizeof(cookie) != getrandom(&cookie, sizeof(cookie), GRND_NONBLOCK)) {
            cookie = (uint32_t) opal_timer_ns() ^ ((uint32_t) index * 2654435761u);
        }
    }
    reg->in_use = true;
    reg->flags = flags;
    reg->handle.key = ((uint64_t) (uint32_t) index << 32) | cookie;
    reg->handle.base = (uint64_t) (uintptr_t) base;
    reg->handle.size = size;
    mca_btl_base_registration_handle_t *handle = malloc(sizeof(*handle));
    if (NULL != handle) {
        *handle = reg->handle;
    } else {
        reg->in_use = false;
        reg->next_free = module->regs_free;
        module->regs_free = index;
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    return handle;
}

int mca_btl_tcp_deregister_mem(mca_btl_base_module_t *btl,
                               mca_btl_base_registration_handle_t *handle)
{
    mca_btl_tcp_module_t *module = mca_btl_tcp_module(btl);
    if (NULL == handle) {
        return OPAL_ERR_BAD_PARAM;
    }
    OPAL_THREAD_LOCK(&module->lock);
    int32_t index = (int32_t) (handle->key >> 32);
    int rc = OPAL_ERR_NOT_FOUND;
    if (index >= 0 && index < module->regs_size && module->regs[index].in_use &&
        module->regs[index].handle.key == handle->key) {
        mca_btl_tcp_reg_t *reg = &module->regs[index];
        reg->in_use = false;
        reg->handle.key = 0;
        reg->next_free = module->regs_free;
        module->regs_free = index;
        free(handle);
        rc = OPAL_SUCCESS;
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    return rc;
}

unsigned mca_btl_tcp_reg_check(mca_btl_tcp_module_t *module, const mca_btl_tcp_target_t *t,
                               bool write)
{
    uint64_t index = t->key >> 32;
    if (index >= (uint64_t) module->regs_size || !module->regs[index].in_use ||
        module->regs[index].handle.key != t->key) {
        return MCA_BTL_TCP_STATUS_NO_REGION;
    }
    const mca_btl_tcp_reg_t *reg = &module->regs[index];
    /* target_check made sure address + length does not wrap. */
    if (t->address < reg->handle.base ||
        t->address + t->length > reg->handle.base + reg->handle.size) {
        return MCA_BTL_TCP_STATUS_BOUNDS;
    }
    uint32_t need = write ? MCA_BTL_REG_FLAG_REMOTE_WRITE : MCA_BTL_REG_FLAG_REMOTE_READ;
    return 0 != (reg->flags & need) ? MCA_BTL_TCP_STATUS_OK : MCA_BTL_TCP_STATUS_ACCESS;
}

/* ----------------------------------------------------- flush, finalize */

int mca_btl_tcp_flush(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint)
{
    mca_btl_tcp_module_t *module = mca_btl_tcp_module(btl);
    for (;;) {
        OPAL_THREAD_LOCK(&module->lock);
        bool busy = NULL != endpoint ? !opal_list_is_empty(&endpoint->waiting)
                                     : module->rdma_outstanding > 0;
        OPAL_THREAD_UNLOCK(&module->lock);
        if (!busy) {
            return OPAL_SUCCESS;
        }
        (void) mca_btl_tcp_module_progress(module);
    }
}

void mca_btl_tcp_dump(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      char *buf, size_t size)
{
    static const char *const states[] = {[MCA_BTL_TCP_EP_CLOSED] = "not connected",
                                         [MCA_BTL_TCP_EP_CONNECTING] = "connecting",
                                         [MCA_BTL_TCP_EP_HELLO_SENT] = "hello sent",
                                         [MCA_BTL_TCP_EP_WAITING] = "waiting for its connection",
                                         [MCA_BTL_TCP_EP_CONNECTED] = "connected",
                                         [MCA_BTL_TCP_EP_GONE] = "gone"};
    static const char *const rstates[] = {[MCA_BTL_TCP_RECV_HDR] = "between frames",
                                          [MCA_BTL_TCP_RECV_DATA] = "in a transfer's data",
                                          [MCA_BTL_TCP_RECV_SINK] = "discarding a refused put"};
    mca_btl_tcp_module_t *module = mca_btl_tcp_module(btl);
    mca_btl_tcp_endpoint_t *ep = endpoint;
    OPAL_THREAD_LOCK(&module->lock);
    size_t items = 0;
    for (const mca_btl_tcp_out_t *out = ep->sendq.head; NULL != out; out = out->next) {
        ++items;
    }
    /* The kernel's side: bytes received and not read, sent and not
     * acknowledged or not yet sent. */
    int unread = -1, unsent = -1;
    if (ep->poll.fd >= 0) {
        if (0 != ioctl(ep->poll.fd, FIONREAD, &unread)) {
            unread = -1;
        }
        if (0 != ioctl(ep->poll.fd, TIOCOUTQ, &unsent)) {
            unsent = -1;
        }
    }
    snprintf(buf, size,
             "%s%s; %zu queued (%zu bytes)%s; %zu put / get waiting; received %zu bytes not "
             "handled, %s%s; socket: %d unread, %d unsent",
             (unsigned) ep->state < sizeof(states) / sizeof(states[0]) ? states[ep->state] : "?",
             ep->said_bye ? " (it said goodbye)" : "", items, ep->queued_bytes,
             ep->want_out ? ", watched for room" : "", opal_list_get_size(&ep->waiting),
             ep->rtail - ep->rhead,
             (unsigned) ep->rstate < sizeof(rstates) / sizeof(rstates[0]) ? rstates[ep->rstate]
                                                                          : "?",
             ep->in_recv ? " (in a receive pass)" : "", unread, unsent);
    OPAL_THREAD_UNLOCK(&module->lock);
}

/* Whether something is still queued to a live peer. */
static bool quiescing(mca_btl_tcp_module_t *module)
{
    for (mca_btl_tcp_endpoint_t *ep = module->ep_list; NULL != ep; ep = ep->next_ep) {
        if (MCA_BTL_TCP_EP_GONE != ep->state && NULL != ep->sendq.head) {
            return true;
        }
    }
    return false;
}

/* Every connected peer is told BYE (after what is queued), and what is
 * queued to live peers goes out, for at most btl_tcp_finalize_timeout:
 * a peer that finishes after this process must not take the end of the
 * connection for a failure, nor lose the last messages. */
static void quiesce(mca_btl_tcp_module_t *module)
{
    if (NULL == module->endpoints) {
        return;
    }
    OPAL_THREAD_LOCK(&module->lock);
    for (mca_btl_tcp_endpoint_t *ep = module->ep_list; NULL != ep; ep = ep->next_ep) {
        if (MCA_BTL_TCP_EP_CONNECTED != ep->state) {
            continue;
        }
        mca_btl_tcp_reply_t *bye = (mca_btl_tcp_reply_t *) opal_free_list_get(&module->replies);
        if (NULL == bye) {
            continue;
        }
        mca_btl_tcp_frame_t f = {.type = MCA_BTL_TCP_FRAME_BYE};
        mca_btl_tcp_frame_pack(&f, bye->out.hdr);
        bye->out.splice = -1;
        bye->out.kind = MCA_BTL_TCP_OUT_REPLY;
        bye->out.iov[0].iov_base = bye->out.hdr;
        bye->out.iov[0].iov_len = MCA_BTL_TCP_FRAME_HDR;
        bye->out.iovcnt = 1;
        mca_btl_tcp_enqueue(ep, &bye->out);
    }
    uint64_t deadline =
        opal_timer_ns() + (uint64_t) mca_btl_tcp_component.finalize_timeout_ms * 1000000u;
    while (quiescing(module)) {
        if (opal_timer_ns() >= deadline) {
            opal_output_verbose(1, mca_btl_base_output,
                                "btl/tcp: finalize: sends still queued after %u ms",
                                mca_btl_tcp_component.finalize_timeout_ms);
            break;
        }
        (void) mca_btl_tcp_module_progress(module);
    }
    OPAL_THREAD_UNLOCK(&module->lock);
}

void mca_btl_tcp_timer_reset(mca_btl_tcp_module_t *module, uint64_t deadline_ns)
{
    if (module->timer.fd < 0 || deadline_ns == module->timer_due_ns) {
        return;
    }
    /* An absolute CLOCK_MONOTONIC time, opal_timer_ns()'s clock; all
     * zero disarms. */
    struct itimerspec when = {.it_value = {.tv_sec = (time_t) (deadline_ns / 1000000000u),
                                           .tv_nsec = (long) (deadline_ns % 1000000000u)}};
    if (0 == timerfd_settime(module->timer.fd, TFD_TIMER_ABSTIME, &when, NULL)) {
        module->timer_due_ns = deadline_ns;
    }
}

void mca_btl_tcp_timer_arm(mca_btl_tcp_module_t *module, uint64_t deadline_ns)
{
    if (0 == module->timer_due_ns || deadline_ns < module->timer_due_ns) {
        mca_btl_tcp_timer_reset(module, deadline_ns);
    }
}

int mca_btl_tcp_finalize(mca_btl_base_module_t *btl)
{
    mca_btl_tcp_module_t *module = mca_btl_tcp_module(btl);
    if (mca_btl_tcp_component.module == module) {
        mca_btl_tcp_component.module = NULL;
        mca_btl_tcp_component.modules[0] = NULL;
    }
    module->finalizing = true;
    quiesce(module);
    if (module->epfd_registered) {
        (void) opal_progress_fd_unregister(module->epfd);
        module->epfd_registered = false;
    }
    if (NULL != module->endpoints) {
        mca_btl_tcp_endpoints_release(module);
        free(module->endpoints);
        module->endpoints = NULL;
    }
    if (module->listen.fd >= 0) {
        close(module->listen.fd);
    }
    if (module->epfd >= 0) {
        close(module->epfd);
    }
    if (module->timer.fd >= 0) {
        close(module->timer.fd);
        module->timer.fd = -1;
    }
    if (module->lists_constructed) {
        OBJ_DESTRUCT(&module->incoming);
        OBJ_DESTRUCT(&module->replies);
        OBJ_DESTRUCT(&module->rdma_ops);
        OBJ_DESTRUCT(&module->max_frags);
        OBJ_DESTRUCT(&module->eager_frags);
    }
    free(module->regs);
    OBJ_DESTRUCT(&module->lock);
    free(module);
    return OPAL_SUCCESS;
}
