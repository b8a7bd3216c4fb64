/*
 * The launcher socket: a Unix stream socket in the session directory, mode
 * 0600, that only this user's processes may use (SO_PEERCRED).
 *
 * Every connection is non-blocking and read piecewise, so a rank that
 * sends half a message, or stops reading its replies, holds up nobody
 * else. A connection's first message must be a valid HELLO; until then it
 * is a stranger, and whatever is wrong with it is refused with a message
 * while the job goes on. Once it has said HELLO it speaks for a rank, and
 * a malformed message from it fails the job.
 *
 * Replies are queued per connection as (head, value) pairs; a value is a
 * reference-counted blob, so a pair collected by every rank in a fence is
 * held once however many connections send it.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "orte/tools/mcarun/mcarun.h"
#include "orte/util/orte_wire.h"

/* Messages handled per wake-up of one connection, so that a rank that
 * streams puts does not starve the others (epoll is level-triggered and
 * comes back for the rest). */
#define MESSAGES_PER_WAKEUP 64
#define ACCEPTS_PER_WAKEUP  64
#define IOV_PER_WRITE       64

typedef struct mcarun_out_t {
    opal_list_item_t super;
    uint8_t *head; /* malloc'd: most heads are a few bytes */
    size_t head_len;
    mcarun_blob_t *blob; /* NULL when the message carries no value */
    size_t value_len;
    size_t sent;
} mcarun_out_t;

static void out_construct(mcarun_out_t *o)
{
    MCARUN_CLEAR_PAST_SUPER(o);
}
static void out_destruct(mcarun_out_t *o)
{
    free(o->head);
    if (NULL != o->blob) {
        OBJ_RELEASE(o->blob);
    }
}
static OBJ_CLASS_INSTANCE(mcarun_out_t, opal_list_item_t, out_construct, out_destruct);

typedef struct mcarun_conn_t {
    opal_list_item_t super;
    int fd;
    struct mcarun_watch_t *watch;
    long pid;            /* from SO_PEERCRED */
    mcarun_rank_t *rank; /* set by HELLO */
    uint8_t head[ORTE_WIRE_HEADER_SIZE];
    size_t head_got;
    bool have_header;
    orte_wire_header_t hdr;
    uint8_t *payload;
    size_t payload_got;
    opal_list_t out;
    bool want_write;
    bool closed;
} mcarun_conn_t;

static void conn_construct(mcarun_conn_t *c)
{
    MCARUN_CLEAR_PAST_SUPER(c);
    c->fd = -1;
    OBJ_CONSTRUCT(&c->out, opal_list_t);
}
static void conn_destruct(mcarun_conn_t *c)
{
    OPAL_LIST_DESTRUCT(&c->out);
    free(c->payload);
}
static OBJ_CLASS_INSTANCE(mcarun_conn_t, opal_list_item_t, conn_construct, conn_destruct);

static struct {
    int fd;
    struct mcarun_watch_t *watch;
    opal_list_t conns;
    opal_list_t closed;
    int strangers;  /* connections that have not said HELLO */
    bool accepting; /* the listening socket is watched */
    bool initialized;
} server = {.fd = -1};

static void conn_eof(mcarun_conn_t *c);
static void on_accept(void *ctx, uint32_t events);

/* Past MCARUN_MAX_PENDING_CONNS strangers mcarun stops accepting: the
 * kernel keeps further connections in the listen backlog (and a rank's
 * blocking connect waits) until a stranger has said HELLO or gone. A rank
 * is never turned away for arriving with many others. */
static void update_accepting(void)
{
    bool want = server.strangers < MCARUN_MAX_PENDING_CONNS;
    if (want == server.accepting || server.fd < 0) {
        return;
    }
    if (want) {
        server.watch = mcarun_loop_add(server.fd, EPOLLIN, on_accept, NULL);
        server.accepting = NULL != server.watch;
    } else {
        mcarun_loop_remove(server.watch);
        server.watch = NULL;
        server.accepting = false;
    }
}

void mcarun_conn_close(mcarun_conn_t *c)
{
    if (c->closed) {
        return;
    }
    c->closed = true;
    mcarun_modex_forget_conn(c);
    if (NULL != c->rank) {
        c->rank->conn = NULL;
    } else {
        --server.strangers;
        update_accepting();
    }
    mcarun_loop_remove(c->watch);
    c->watch = NULL;
    close(c->fd);
    c->fd = -1;
    opal_list_remove_item(&server.conns, &c->super);
    opal_list_append(&server.closed, &c->super);
}

void mcarun_server_free_closed(void)
{
    if (server.initialized) {
        OPAL_LIST_DESTRUCT(&server.closed);
        OBJ_CONSTRUCT(&server.closed, opal_list_t);
    }
}

/* Writes as much of the queue as the socket takes. */
static void conn_flush(mcarun_conn_t *c)
{
    while (!c->closed && !opal_list_is_empty(&c->out)) {
        struct iovec iov[2 * IOV_PER_WRITE];
        int n = 0;
        mcarun_out_t *o;
        OPAL_LIST_FOREACH (o, &c->out, mcarun_out_t) {
            if (n + 2 > 2 * IOV_PER_WRITE) {
                break;
            }
            if (o->sent < o->head_len) {
                iov[n++] = (struct iovec){o->head + o->sent, o->head_len - o->sent};
            }
            size_t vsent = o->sent > o->head_len ? o->sent - o->head_len : 0;
            if (vsent < o->value_len) {
                iov[n++] = (struct iovec){(char *) o->blob->bytes + vsent, o->value_len - vsent};
            }
        }
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t) n};
        ssize_t w = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (EINTR == errno) {
                continue;
            }
            if (EAGAIN == errno) {
                break;
            }
            conn_eof(c); /* the rank went away; its exit tells the rest */
            return;
        }
        size_t done = (size_t) w;
        while (0 < done) {
            o = (mcarun_out_t *) opal_list_get_first(&c->out);
            size_t left = o->head_len + o->value_len - o->sent;
            size_t take = done < left ? done : left;
            o->sent += take;
            done -= take;
            if (o->sent == o->head_len + o->value_len) {
                opal_list_remove_first(&c->out);
                OBJ_RELEASE(o);
            }
        }
    }
    if (c->closed) {
        return;
    }
    bool want = !opal_list_is_empty(&c->out);
    if (want != c->want_write) {
        c->want_write = want;
        mcarun_loop_modify(c->watch, EPOLLIN | (want ? EPOLLOUT : 0));
    }
}

void mcarun_conn_send(mcarun_conn_t *c, const orte_wire_msg_t *msg, mcarun_blob_t *blob)
{
    if (NULL == c || c->closed) {
        return;
    }
    uint8_t head[ORTE_WIRE_MAX_HEAD];
    size_t head_len = 0;
    /* Only fields mcarun checked or made itself are encoded here, so the
     * encoding cannot fail; memory can. */
    int rc = orte_wire_encode(msg, head, sizeof(head), &head_len);
    mcarun_out_t *o = OPAL_SUCCESS == rc ? OBJ_NEW(mcarun_out_t) : NULL;
    if (NULL != o && NULL == (o->head = malloc(head_len))) {
        OBJ_RELEASE(o);
    }
    if (NULL == o) {
        mcarun_job_fail(MCARUN_EXIT_FAILURE, "cannot send %s to rank %lu: %s",
                        orte_wire_type_name(msg->type),
                        NULL != c->rank ? (unsigned long) c->rank->rank : 0ul,
                        opal_strerror(OPAL_SUCCESS == rc ? OPAL_ERR_OUT_OF_RESOURCE : rc));
        mcarun_conn_close(c);
        return;
    }
    memcpy(o->head, head, head_len);
    o->head_len = head_len;
    if (NULL != blob && 0 < msg->value_len) {
        OBJ_RETAIN(blob);
        o->blob = blob;
        o->value_len = msg->value_len;
    }
    opal_list_append(&c->out, &o->super);
    conn_flush(c);
}

/* Something is wrong with what c sent: a stranger is turned away, a rank
 * fails the job. */
static void conn_refuse(mcarun_conn_t *c, int code, const char *why)
{
    if (NULL != c->rank) {
        char name[64];
        mcarun_job_fail(MCARUN_EXIT_FAILURE, "%s sent a bad message on the launcher socket: %s",
                        mcarun_rank_name(c->rank, name, sizeof(name)), why);
    } else {
        opal_output(0, "mcarun: refused a connection to the launcher socket from pid %ld: %s",
                    c->pid, why);
        /* A last word, if the socket takes it at once; never waited for. */
        orte_wire_msg_t msg = {
            .type = ORTE_WIRE_ERROR, .status = code, .text = why, .text_len = strlen(why)};
        uint8_t head[ORTE_WIRE_MAX_HEAD];
        size_t len;
        if (OPAL_SUCCESS == orte_wire_encode(&msg, head, sizeof(head), &len)) {
            ssize_t unused = send(c->fd, head, len, MSG_NOSIGNAL | MSG_DONTWAIT);
            (void) unused;
        }
    }
    mcarun_conn_close(c);
}

static void conn_eof(mcarun_conn_t *c)
{
    mcarun_rank_t *r = c->rank;
    if (NULL != r && r->connected && MCARUN_RANK_RUNNING == r->state) {
        mcarun_job_rank_disconnected(r);
    }
    mcarun_conn_close(c);
}

static void hello(mcarun_conn_t *c, const orte_wire_msg_t *msg)
{
    char why[160];
    mcarun_rank_t *r = msg->rank < mcarun_job.size ? &mcarun_job.ranks[msg->rank] : NULL;
    if (msg->jobid != mcarun_job.jobid) {
        snprintf(why, sizeof(why), "HELLO for job %" PRIu32 ", but this is job %" PRIu32,
                 msg->jobid, mcarun_job.jobid);
    } else if (NULL == r) {
        snprintf(why, sizeof(why), "HELLO from rank %" PRIu32 " of a job of %" PRIu32 " ranks",
                 msg->rank, mcarun_job.size);
    } else if (NULL != r->conn) {
        snprintf(why, sizeof(why), "rank %" PRIu32 " is already connected (pid %ld)", msg->rank,
                 r->conn->pid);
    } else if (MCARUN_RANK_RUNNING != r->state) {
        snprintf(why, sizeof(why), "rank %" PRIu32 " has already exited", msg->rank);
    } else {
        why[0] = '\0';
    }
    if ('\0' != why[0]) {
        conn_refuse(c, OPAL_ERR_BAD_PARAM, why);
        return;
    }
    --server.strangers;
    update_accepting();
    c->rank = r;
    r->conn = c;
    r->connected = true;
    r->disconnected = false;
    r->gone = false;
    orte_wire_msg_t welcome = {.type = ORTE_WIRE_WELCOME,
                               .jobid = mcarun_job.jobid,
                               .rank = r->rank,
                               .size = mcarun_job.size,
                               .local_rank = r->rank,
                               .local_size = mcarun_job.size,
                               .node_id = 0,
                               .text = mcarun_job.session_dir,
                               .text_len = strlen(mcarun_job.session_dir)};
    mcarun_conn_send(c, &welcome, NULL);
}

/* Handles one message from a rank; takes the payload when it keeps it. */
static void dispatch(mcarun_conn_t *c, const orte_wire_msg_t *msg, uint8_t **payload)
{
    mcarun_rank_t *r = c->rank;
    char name[64];
    int rc = OPAL_SUCCESS;
    if (NULL == r) {
        if (ORTE_WIRE_HELLO != msg->type) {
            char why[96];
            snprintf(why, sizeof(why), "first message is %s, not HELLO",
                     orte_wire_type_name(msg->type));
            conn_refuse(c, OPAL_ERR_PROTOCOL, why);
        } else {
            hello(c, msg);
        }
        return;
    }
    switch (msg->type) {
        case ORTE_WIRE_PUT:
            rc = mcarun_modex_put(r, msg, *payload);
            if (OPAL_SUCCESS == rc) {
                *payload = NULL;
            }
            break;
        case ORTE_WIRE_COMMIT:
            rc = mcarun_modex_commit(r);
            break;
        case ORTE_WIRE_FENCE:
            rc = mcarun_modex_commit(r);
            if (OPAL_SUCCESS == rc) {
                rc = mcarun_modex_fence(r, 0 != msg->collect);
            }
            break;
        case ORTE_WIRE_GET:
            rc = mcarun_modex_get(r, msg);
            break;
        case ORTE_WIRE_ABORT:
            mcarun_job_fail(0 != (msg->status & 0xff) ? msg->status & 0xff : MCARUN_EXIT_FAILURE,
                            "%s called abort with status %" PRId32 ": %.*s",
                            mcarun_rank_name(r, name, sizeof(name)), msg->status,
                            (int) msg->text_len, msg->text);
            r->connected = false;
            mcarun_conn_close(c);
            break;
        case ORTE_WIRE_FINALIZE:
            r->connected = false;
            mcarun_conn_send(c, &(orte_wire_msg_t){.type = ORTE_WIRE_FINALIZE_ACK}, NULL);
            mcarun_modex_rank_gone(r, "called orte_finalize");
            break;
        default:
            conn_refuse(c, OPAL_ERR_PROTOCOL, "a second HELLO");
            break;
    }
    if (OPAL_SUCCESS != rc && !c->closed) {
        /* The modex said what was wrong; the rank cannot go on. */
        mcarun_job_fail(MCARUN_EXIT_FAILURE, "%s: %s; stopping the job",
                        mcarun_rank_name(r, name, sizeof(name)), opal_strerror(rc));
        mcarun_conn_close(c);
    }
}

/* Reads what has arrived, one message at a time. Returns false when the
 * connection ended. */
static bool conn_read(mcarun_conn_t *c)
{
    char why[256];
    for (int handled = 0; handled < MESSAGES_PER_WAKEUP && !c->closed;) {
        uint8_t *into;
        size_t want;
        if (!c->have_header) {
            into = c->head + c->head_got;
            want = sizeof(c->head) - c->head_got;
        } else {
            into = c->payload + c->payload_got;
            want = c->hdr.length - c->payload_got;
        }
        ssize_t n = 0 < want ? read(c->fd, into, want) : 0;
        if (n < 0 && EINTR == errno) {
            continue;
        }
        if (n < 0 && EAGAIN == errno) {
            return true;
        }
        if (0 < want && n <= 0) {
            if (0 < c->head_got || c->have_header) {
                snprintf(why, sizeof(why),
                         "the connection ended inside a message (%zu of %zu header bytes, "
                         "%zu of %" PRIu32 " payload bytes)",
                         c->head_got, sizeof(c->head), c->payload_got,
                         c->have_header ? c->hdr.length : 0);
                conn_refuse(c, OPAL_ERR_PROTOCOL, why);
            } else {
                conn_eof(c);
            }
            return false;
        }
        if (!c->have_header) {
            c->head_got += (size_t) n;
            if (c->head_got < sizeof(c->head)) {
                continue;
            }
            int rc = orte_wire_header_decode(c->head, true, &c->hdr, why, sizeof(why));
            if (OPAL_SUCCESS == rc && NULL == c->rank && ORTE_WIRE_HELLO != c->hdr.type) {
                snprintf(why, sizeof(why), "first message is %s, not HELLO",
                         orte_wire_type_name(c->hdr.type));
                rc = OPAL_ERR_PROTOCOL;
            }
            if (OPAL_SUCCESS != rc) {
                conn_refuse(c, rc, why);
                return false;
            }
            c->have_header = true;
            c->payload_got = 0;
            c->payload = malloc(0 < c->hdr.length ? c->hdr.length : 1);
            if (NULL == c->payload) {
                conn_refuse(c, OPAL_ERR_OUT_OF_RESOURCE, "out of memory for its message");
                return false;
            }
        } else {
            c->payload_got += (size_t) n;
        }
        if (c->payload_got < c->hdr.length) {
            continue;
        }
        orte_wire_msg_t msg;
        int rc = orte_wire_payload_decode(&c->hdr, c->payload, &msg, why, sizeof(why));
        if (OPAL_SUCCESS != rc) {
            conn_refuse(c, rc, why);
            return false;
        }
        uint8_t *payload = c->payload;
        c->payload = NULL;
        c->have_header = false;
        c->head_got = 0;
        dispatch(c, &msg, &payload);
        free(payload);
        ++handled;
    }
    return !c->closed;
}

static void on_conn(void *ctx, uint32_t events)
{
    mcarun_conn_t *c = ctx;
    if (events & EPOLLOUT) {
        conn_flush(c);
    }
    if (!c->closed && (events & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
        conn_read(c);
    }
}

static void on_accept(void *ctx, uint32_t events)
{
    (void) ctx;
    (void) events;
    for (int i = 0; i < ACCEPTS_PER_WAKEUP && server.accepting; ++i) {
        int fd = accept4(server.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            return;
        }
        struct ucred cred;
        socklen_t len = sizeof(cred);
        if (0 != getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || cred.uid != geteuid()) {
            opal_output(0,
                        "mcarun: refused a connection to the launcher socket from uid %ld "
                        "(pid %ld): only uid %ld may connect",
                        (long) cred.uid, (long) cred.pid, (long) geteuid());
            close(fd);
            continue;
        }
        mcarun_conn_t *c = OBJ_NEW(mcarun_conn_t);
        if (NULL == c) {
            close(fd);
            continue;
        }
        c->fd = fd;
        c->pid = (long) cred.pid;
        c->watch = mcarun_loop_add(fd, EPOLLIN, on_conn, c);
        if (NULL == c->watch) {
            close(fd);
            OBJ_RELEASE(c);
            continue;
        }
        ++server.strangers;
        opal_list_append(&server.conns, &c->super);
        update_accepting();
    }
}

int mcarun_server_init(void)
{
    OBJ_CONSTRUCT(&server.conns, opal_list_t);
    OBJ_CONSTRUCT(&server.closed, opal_list_t);
    server.initialized = true;
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int n = snprintf(mcarun_job.socket_path, sizeof(mcarun_job.socket_path), "%s/launcher.sock",
                     mcarun_job.session_dir);
    if (n < 0 || (size_t) n >= sizeof(addr.sun_path)) {
        opal_output(0,
                    "mcarun: the launcher socket's path %s/launcher.sock is longer than a Unix "
                    "socket allows (%zu bytes); set TMPDIR to a shorter directory",
                    mcarun_job.session_dir, sizeof(addr.sun_path) - 1);
        return OPAL_ERR_BAD_PARAM;
    }
    strcpy(addr.sun_path, mcarun_job.socket_path);
    server.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (server.fd < 0) {
        opal_output(0, "mcarun: cannot create the launcher socket: %s", strerror(errno));
        return OPAL_ERR_IN_ERRNO;
    }
    /* The directory is already 0700; the socket is 0600 from birth, not
     * after a window that chmod would leave. */
    mode_t old = umask(0177);
    int rc = bind(server.fd, (struct sockaddr *) &addr, sizeof(addr));
    umask(old);
    if (0 != rc || 0 != listen(server.fd, SOMAXCONN)) {
        opal_output(0, "mcarun: cannot listen on %s: %s", mcarun_job.socket_path, strerror(errno));
        return OPAL_ERR_IN_ERRNO;
    }
    update_accepting();
    return server.accepting ? OPAL_SUCCESS : OPAL_ERR_OUT_OF_RESOURCE;
}

void mcarun_server_fini(void)
{
    if (!server.initialized) {
        return;
    }
    mcarun_conn_t *c, *next;
    OPAL_LIST_FOREACH_SAFE (c, next, &server.conns, mcarun_conn_t) {
        mcarun_conn_close(c);
    }
    mcarun_server_free_closed();
    OPAL_LIST_DESTRUCT(&server.conns);
    OPAL_LIST_DESTRUCT(&server.closed);
    mcarun_loop_remove(server.watch);
    server.watch = NULL;
    server.accepting = false;
    if (0 <= server.fd) {
        close(server.fd);
        server.fd = -1;
    }
    server.initialized = false;
}
