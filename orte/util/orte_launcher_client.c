/*
 * The rank side of the launcher socket: one blocking connection to mcarun,
 * request and reply. The client never has a request outstanding while it
 * sends another, and mcarun only writes in answer to a request, so the two
 * sides never both block writing to each other.
 *
 * Pairs this rank puts go into a cache keyed by (rank, key) at once, so a
 * get of its own key is local; the keys are also staged, and a commit
 * sends their current values. Pairs collected by a fence join the cache
 * under their owner's rank.
 */
#include "opal/opal_config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "opal/class/opal_hash_table.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_output.h"
#include "orte/util/orte_launcher_client.h"
#include "orte/util/orte_launcher_env.h"
#include "orte/util/orte_wire.h"

/* A cached value: its scope and bytes. */
typedef struct cached_t {
    size_t size;
    uint8_t scope;
    unsigned char bytes[];
} cached_t;

static struct {
    int fd; /* -1 when not connected */
    orte_launcher_job_info_t info;
    opal_hash_table_t cache; /* (u32 rank, key bytes) -> cached_t * */
    char **staged;           /* keys put since the last commit */
    size_t num_staged, max_staged;
} client = {.fd = -1};

static void report(const char *what, int rc, const char *detail)
{
    opal_output(0, "orte_launcher_client: %s: %s%s%s", what, opal_strerror(rc),
                NULL != detail ? ": " : "", NULL != detail ? detail : "");
}

/* Reads an unsigned decimal environment variable. */
static int env_u32(const char *name, uint32_t *value)
{
    const char *s = getenv(name);
    if (NULL == s || '\0' == s[0]) {
        return OPAL_ERR_NOT_FOUND;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (0 != errno || '\0' != *end || '-' == s[0] || v > UINT32_MAX) {
        opal_output(0, "orte_launcher_client: %s=%s is not a number the launcher would set", name,
                    s);
        return OPAL_ERR_BAD_PARAM;
    }
    *value = (uint32_t) v;
    return OPAL_SUCCESS;
}

static int send_msg(const orte_wire_msg_t *msg)
{
    uint8_t head[ORTE_WIRE_MAX_HEAD];
    size_t head_len;
    int rc = orte_wire_encode(msg, head, sizeof(head), &head_len);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    struct iovec iov[2] = {{head, head_len}, {(void *) msg->value, msg->value_len}};
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 0 < msg->value_len ? 2 : 1};
    while (0 < mh.msg_iovlen) {
        ssize_t n = sendmsg(client.fd, &mh, MSG_NOSIGNAL);
        if (n < 0) {
            if (EINTR == errno) {
                continue;
            }
            report("sending to mcarun", OPAL_ERR_COMM_FAILURE, strerror(errno));
            return OPAL_ERR_COMM_FAILURE;
        }
        while (0 < mh.msg_iovlen && (size_t) n >= mh.msg_iov[0].iov_len) {
            n -= (ssize_t) mh.msg_iov[0].iov_len;
            ++mh.msg_iov;
            --mh.msg_iovlen;
        }
        if (0 < mh.msg_iovlen) {
            mh.msg_iov[0].iov_base = (char *) mh.msg_iov[0].iov_base + n;
            mh.msg_iov[0].iov_len -= (size_t) n;
        }
    }
    return OPAL_SUCCESS;
}

static int read_full(void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = read(client.fd, (char *) buf + done, len - done);
        if (n < 0 && EINTR == errno) {
            continue;
        }
        if (n <= 0) {
            report("reading from mcarun", OPAL_ERR_COMM_FAILURE,
                   0 == n ? "mcarun closed the connection" : strerror(errno));
            return OPAL_ERR_COMM_FAILURE;
        }
        done += (size_t) n;
    }
    return OPAL_SUCCESS;
}

/* Receives one message; *payload (which msg points into) is the caller's
 * to free, also on error. An ERROR message is reported and returned as
 * its status. */
static int recv_msg(orte_wire_msg_t *msg, uint8_t **payload)
{
    uint8_t head[ORTE_WIRE_HEADER_SIZE];
    char why[256];
    orte_wire_header_t hdr;
    *payload = NULL;
    int rc = read_full(head, sizeof(head));
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = orte_wire_header_decode(head, false, &hdr, why, sizeof(why));
    if (OPAL_SUCCESS == rc) {
        *payload = malloc(0 < hdr.length ? hdr.length : 1);
        if (NULL == *payload) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        rc = read_full(*payload, hdr.length);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
        rc = orte_wire_payload_decode(&hdr, *payload, msg, why, sizeof(why));
    }
    if (OPAL_SUCCESS != rc) {
        report("malformed message from mcarun", rc, why);
        return OPAL_ERR_PROTOCOL;
    }
    if (ORTE_WIRE_ERROR == msg->type) {
        opal_output(0, "orte_launcher_client: mcarun refused rank %" PRIu32 ": %.*s",
                    client.info.rank, (int) msg->text_len, msg->text);
        return msg->status < 0 ? msg->status : OPAL_ERROR;
    }
    return OPAL_SUCCESS;
}

/* Receives the reply of a request: a message of type want, or an error. */
static int recv_reply(orte_wire_type_t want, orte_wire_msg_t *msg, uint8_t **payload)
{
    int rc = recv_msg(msg, payload);
    if (OPAL_SUCCESS == rc && want != msg->type) {
        opal_output(0, "orte_launcher_client: expected %s from mcarun, received %s",
                    orte_wire_type_name(want), orte_wire_type_name(msg->type));
        rc = OPAL_ERR_PROTOCOL;
    }
    return rc;
}

/* The cache key of (rank, key): the rank's four bytes, then the key. */
static size_t cache_key(uint32_t rank, const char *key, size_t key_len, unsigned char *out)
{
    memcpy(out, &rank, sizeof(rank));
    memcpy(out + sizeof(rank), key, key_len);
    return sizeof(rank) + key_len;
}

static int cache_store(uint32_t rank, const char *key, size_t key_len, uint8_t scope,
                       const void *value, size_t size)
{
    unsigned char k[sizeof(uint32_t) + ORTE_WIRE_MAX_KEY];
    size_t klen = cache_key(rank, key, key_len, k);
    cached_t *c = malloc(sizeof(*c) + size);
    if (NULL == c) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    c->size = size;
    c->scope = scope;
    if (0 < size) {
        memcpy(c->bytes, value, size);
    }
    void *old = NULL;
    bool had = OPAL_SUCCESS == opal_hash_table_get_value_ptr(&client.cache, k, klen, &old);
    int rc = opal_hash_table_set_value_ptr(&client.cache, k, klen, c);
    if (OPAL_SUCCESS != rc) {
        free(c);
        return rc;
    }
    if (had) {
        free(old);
    }
    return OPAL_SUCCESS;
}

static cached_t *cache_find(uint32_t rank, const char *key)
{
    unsigned char k[sizeof(uint32_t) + ORTE_WIRE_MAX_KEY];
    size_t klen = cache_key(rank, key, strlen(key), k);
    void *c = NULL;
    return OPAL_SUCCESS == opal_hash_table_get_value_ptr(&client.cache, k, klen, &c) ? c : NULL;
}

static void release_state(void)
{
    if (0 <= client.fd) {
        close(client.fd);
        client.fd = -1;
    }
    const void *key;
    size_t key_size, cursor;
    void *value;
    int rc = opal_hash_table_get_first_key_ptr(&client.cache, &key, &key_size, &value, &cursor);
    while (OPAL_SUCCESS == rc) {
        free(value);
        rc = opal_hash_table_get_next_key_ptr(&client.cache, &key, &key_size, &value, &cursor);
    }
    OBJ_DESTRUCT(&client.cache);
    for (size_t i = 0; i < client.num_staged; ++i) {
        free(client.staged[i]);
    }
    free(client.staged);
    client.staged = NULL;
    client.num_staged = client.max_staged = 0;
}

int orte_launcher_client_detected(void)
{
    const char *path = getenv(ORTE_LAUNCHER_ENV_SOCKET);
    return NULL != path && '\0' != path[0];
}

static int open_socket(const char *path)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(addr.sun_path)) {
        report("connecting to mcarun", OPAL_ERR_UNREACH, "socket path too long");
        return OPAL_ERR_UNREACH;
    }
    strcpy(addr.sun_path, path);
    client.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (client.fd < 0) {
        report("connecting to mcarun", OPAL_ERR_UNREACH, strerror(errno));
        return OPAL_ERR_UNREACH;
    }
    int rc;
    do {
        rc = connect(client.fd, (struct sockaddr *) &addr, sizeof(addr));
    } while (0 != rc && EINTR == errno);
    if (0 != rc) {
        opal_output(0, "orte_launcher_client: cannot connect to mcarun at %s: %s", path,
                    strerror(errno));
        close(client.fd);
        client.fd = -1;
        return OPAL_ERR_UNREACH;
    }
    return OPAL_SUCCESS;
}

int orte_launcher_client_connect(orte_launcher_job_info_t *info)
{
    if (0 <= client.fd) {
        return OPAL_ERR_EXISTS;
    }
    if (!orte_launcher_client_detected()) {
        return OPAL_ERR_NOT_FOUND;
    }
    uint32_t jobid, rank;
    int rc = env_u32(ORTE_LAUNCHER_ENV_JOBID, &jobid);
    if (OPAL_SUCCESS == rc) {
        rc = env_u32(ORTE_LAUNCHER_ENV_RANK, &rank);
    }
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = open_socket(getenv(ORTE_LAUNCHER_ENV_SOCKET));
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    OBJ_CONSTRUCT(&client.cache, opal_hash_table_t);
    client.info.rank = rank;
    orte_wire_msg_t msg = {
        .type = ORTE_WIRE_HELLO, .jobid = jobid, .rank = rank, .pid = (uint32_t) getpid()};
    uint8_t *payload = NULL;
    rc = send_msg(&msg);
    if (OPAL_SUCCESS == rc) {
        rc = recv_reply(ORTE_WIRE_WELCOME, &msg, &payload);
    }
    if (OPAL_SUCCESS == rc && (msg.jobid != jobid || msg.rank != rank ||
                               msg.text_len >= sizeof(client.info.session_dir))) {
        opal_output(0,
                    "orte_launcher_client: mcarun welcomed job %" PRIu32 " rank %" PRIu32
                    ", not job %" PRIu32 " rank %" PRIu32,
                    msg.jobid, msg.rank, jobid, rank);
        rc = OPAL_ERR_PROTOCOL;
    }
    if (OPAL_SUCCESS != rc) {
        free(payload);
        release_state();
        return rc;
    }
    client.info = (orte_launcher_job_info_t){.jobid = msg.jobid,
                                             .rank = msg.rank,
                                             .size = msg.size,
                                             .local_rank = msg.local_rank,
                                             .local_size = msg.local_size,
                                             .node_id = msg.node_id};
    memcpy(client.info.session_dir, msg.text, msg.text_len);
    client.info.session_dir[msg.text_len] = '\0';
    free(payload);
    *info = client.info;
    return OPAL_SUCCESS;
}

static int check_key(const char *key)
{
    return NULL == key || '\0' == key[0] || strlen(key) > ORTE_WIRE_MAX_KEY ? OPAL_ERR_BAD_PARAM
                                                                            : OPAL_SUCCESS;
}

int orte_launcher_client_put(const char *key, const void *value, size_t size,
                             orte_modex_scope_t scope)
{
    if (client.fd < 0) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    if (OPAL_SUCCESS != check_key(key) || size > ORTE_LAUNCHER_MAX_VALUE ||
        (NULL == value && 0 < size) || scope < ORTE_MODEX_SCOPE_LOCAL ||
        scope > ORTE_MODEX_SCOPE_GLOBAL) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (client.num_staged == client.max_staged) {
        size_t max = 0 == client.max_staged ? 16 : 2 * client.max_staged;
        char **staged = realloc(client.staged, max * sizeof(*staged));
        if (NULL == staged) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        client.staged = staged;
        client.max_staged = max;
    }
    char *copy = strdup(key);
    if (NULL == copy) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    int rc = cache_store(client.info.rank, key, strlen(key), (uint8_t) scope, value, size);
    if (OPAL_SUCCESS != rc) {
        free(copy);
        return rc;
    }
    client.staged[client.num_staged++] = copy;
    return OPAL_SUCCESS;
}

/* Sends the staged pairs, then end (COMMIT, or FENCE which commits too). */
static int send_staged(const orte_wire_msg_t *end)
{
    int rc = OPAL_SUCCESS;
    for (size_t i = 0; i < client.num_staged && OPAL_SUCCESS == rc; ++i) {
        const cached_t *c = cache_find(client.info.rank, client.staged[i]);
        orte_wire_msg_t msg = {.type = ORTE_WIRE_PUT,
                               .scope = c->scope,
                               .key = client.staged[i],
                               .key_len = strlen(client.staged[i]),
                               .value = c->bytes,
                               .value_len = c->size};
        rc = send_msg(&msg);
    }
    if (OPAL_SUCCESS == rc) {
        rc = send_msg(end);
    }
    for (size_t i = 0; i < client.num_staged; ++i) {
        free(client.staged[i]);
    }
    client.num_staged = 0;
    return rc;
}

int orte_launcher_client_commit(void)
{
    if (client.fd < 0) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    return send_staged(&(orte_wire_msg_t){.type = ORTE_WIRE_COMMIT});
}

/* Caches the records of a DATA_SET (checked by its decode) but this
 * rank's own, which its cache already holds at their latest values. */
static int store_set(const orte_wire_msg_t *set)
{
    const uint8_t *p = set->value;
    size_t left = set->value_len;
    char why[256];
    for (uint32_t i = 0; i < set->count; ++i) {
        orte_wire_msg_t rec;
        int rc = orte_wire_record_decode(&p, &left, &rec, why, sizeof(why));
        if (OPAL_SUCCESS != rc) {
            report("malformed message from mcarun", rc, why);
            return OPAL_ERR_PROTOCOL;
        }
        if (rec.rank == client.info.rank) {
            continue;
        }
        if (rec.rank >= client.info.size) {
            opal_output(0,
                        "orte_launcher_client: mcarun sent a pair of rank %" PRIu32
                        " in a job of %" PRIu32 " ranks",
                        rec.rank, client.info.size);
            return OPAL_ERR_PROTOCOL;
        }
        rc = cache_store(rec.rank, rec.key, rec.key_len, rec.scope, rec.value, rec.value_len);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    return OPAL_SUCCESS;
}

int orte_launcher_client_fence(int collect)
{
    if (client.fd < 0) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    int rc = send_staged(&(orte_wire_msg_t){.type = ORTE_WIRE_FENCE, .collect = collect ? 1 : 0});
    while (OPAL_SUCCESS == rc) {
        orte_wire_msg_t msg;
        uint8_t *payload;
        rc = recv_msg(&msg, &payload);
        if (OPAL_SUCCESS != rc) {
            free(payload);
            break;
        }
        if (ORTE_WIRE_DATA == msg.type) {
            if (msg.rank != client.info.rank) {
                rc = cache_store(msg.rank, msg.key, msg.key_len, msg.scope, msg.value,
                                 msg.value_len);
            }
            free(payload);
            continue;
        }
        if (ORTE_WIRE_DATA_SET == msg.type) {
            rc = store_set(&msg);
            free(payload);
            continue;
        }
        if (ORTE_WIRE_FENCE_DONE != msg.type) {
            opal_output(0, "orte_launcher_client: expected FENCE_DONE from mcarun, received %s",
                        orte_wire_type_name(msg.type));
            rc = OPAL_ERR_PROTOCOL;
        } else if (OPAL_SUCCESS != msg.status) {
            opal_output(0, "orte_launcher_client: rank %" PRIu32 ": fence failed: %.*s",
                        client.info.rank, (int) msg.text_len, msg.text);
            rc = msg.status < 0 ? msg.status : OPAL_ERR_PEER_FAILED;
        }
        free(payload);
        break;
    }
    return rc;
}

static int copy_out(const void *bytes, size_t size, void **value, size_t *out_size)
{
    /* Never NULL, even for an empty value, so that NULL means "no value". */
    *value = malloc(0 < size ? size : 1);
    if (NULL == *value) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    if (0 < size) {
        memcpy(*value, bytes, size);
    }
    *out_size = size;
    return OPAL_SUCCESS;
}

int orte_launcher_client_get(uint32_t peer, const char *key, void **value, size_t *size,
                             int64_t timeout_ns)
{
    if (client.fd < 0) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    if (OPAL_SUCCESS != check_key(key) || peer >= client.info.size || NULL == value ||
        NULL == size) {
        return OPAL_ERR_BAD_PARAM;
    }
    const cached_t *c = cache_find(peer, key);
    if (NULL != c) {
        return copy_out(c->bytes, c->size, value, size);
    }
    if (peer == client.info.rank) {
        return OPAL_ERR_NOT_FOUND;
    }
    orte_wire_msg_t msg = {.type = ORTE_WIRE_GET,
                           .rank = peer,
                           .timeout_ns = timeout_ns < 0 ? -1 : timeout_ns,
                           .key = key,
                           .key_len = strlen(key)};
    uint8_t *payload = NULL;
    int rc = send_msg(&msg);
    if (OPAL_SUCCESS == rc) {
        rc = recv_reply(ORTE_WIRE_GET_REPLY, &msg, &payload);
    }
    if (OPAL_SUCCESS == rc) {
        rc = msg.status;
        if (OPAL_SUCCESS == rc) {
            rc = copy_out(msg.value, msg.value_len, value, size);
        } else if (OPAL_ERR_TIMEOUT == rc && 0 != timeout_ns) {
            /* A zero timeout is a poll (btl/verbs looks for records of
             * peers that may not have published yet): no message. */
            opal_output(0,
                        "orte_launcher_client: rank %" PRIu32 ": get of key '%s' from rank %" PRIu32
                        " timed out after %.3f s: rank %" PRIu32 " has not committed it",
                        client.info.rank, key, peer, (double) timeout_ns / 1e9, peer);
        }
    }
    free(payload);
    return rc;
}

int orte_launcher_client_abort(int status, const char *message)
{
    if (client.fd < 0) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    size_t len = NULL == message ? 0 : strlen(message);
    orte_wire_msg_t msg = {.type = ORTE_WIRE_ABORT,
                           .status = status,
                           .text = message,
                           .text_len = len > ORTE_WIRE_MAX_TEXT ? ORTE_WIRE_MAX_TEXT : len};
    int rc = send_msg(&msg);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    /* mcarun closes this connection and stops the job; wait for that so
     * the abort is recorded before this process is seen to exit. */
    char sink[256];
    ssize_t n;
    do {
        n = read(client.fd, sink, sizeof(sink));
    } while (0 < n || (n < 0 && EINTR == errno));
    _exit(0 != (status & 0xff) ? status & 0xff : 1);
}

int orte_launcher_client_finalize(void)
{
    if (client.fd < 0) {
        return OPAL_ERR_NOT_INITIALIZED;
    }
    int rc = send_msg(&(orte_wire_msg_t){.type = ORTE_WIRE_FINALIZE});
    if (OPAL_SUCCESS == rc) {
        orte_wire_msg_t msg;
        uint8_t *payload;
        rc = recv_reply(ORTE_WIRE_FINALIZE_ACK, &msg, &payload);
        free(payload);
    }
    release_state();
    return rc;
}
