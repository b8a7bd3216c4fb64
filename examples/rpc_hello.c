/*
 * rpc_hello: one RPC between a server and a client started separately,
 * its arguments declared once as X-macro field lists.
 *
 *   ./rpc_hello server /tmp/hello.uri &        writes its URI, answers one client
 *   ./rpc_hello client /tmp/hello.uri Ada      reads the URI, calls, prints the answer
 *
 * The request carries a string (the caller's name), an array of structs
 * (points) and a bulk handle over the client's memory; the server's
 * handler pulls the bytes behind the handle, then answers with a status
 * and a string. The na class is the third argument of `server` and the
 * fourth of `client` (default btl: shared memory or tcp between processes
 * that share no job; ofi+tcp, ofi+shm where libfabric is built).
 *
 *   cc rpc_hello.c $(pkg-config --cflags --libs opal-mca) -o rpc_hello
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <opal/mca/rpc/rpc.h>
#include <opal/runtime/opal_init.h>
#include <opal/util/opal_error.h>

/* ---------------------------------------------- the RPC, declared once */

#define POINT_FIELDS(X)                                                                            \
    X(int32_t, x, VAR)                                                                             \
    X(int32_t, y, VAR)
OPAL_RPC_STRUCT(point, POINT_FIELDS);

#define HELLO_IN_FIELDS(X)                                                                         \
    X(char *, name, STRING)                                                                        \
    X(point, path, ARRAY_STRUCT)                                                                   \
    X(opal_bulk_t *, letter, BULK)
OPAL_RPC_STRUCT(hello_in, HELLO_IN_FIELDS);

#define HELLO_OUT_FIELDS(X)                                                                        \
    X(int32_t, status, VAR)                                                                        \
    X(char *, text, STRING)
OPAL_RPC_STRUCT(hello_out, HELLO_OUT_FIELDS);

#define HELLO_BASE 0x48 /* 'H' */
#define HELLO_OP   OPAL_RPC_OPCODE(HELLO_BASE, 1, 0)

/* ------------------------------------------------------------ the server */

static volatile int answered;

/* What the handler keeps while the bulk pull runs. */
typedef struct {
    opal_rpc_request_t *req;
    opal_bulk_t *local;
    char *buf;
    size_t size;
} pull_t;

/* Runs from opal_rpc_progress once the client's bytes are here. */
static void letter_pulled(const opal_bulk_cb_info_t *info)
{
    pull_t *p = info->arg;
    const hello_in_t *in = opal_rpc_req_input(p->req);
    hello_out_t *out = opal_rpc_req_output(p->req);
    const char *name = NULL == in->name ? "stranger" : in->name;
    char text[512];
    int64_t sx = 0, sy = 0;
    for (uint32_t i = 0; i < in->path.count; ++i) {
        sx += in->path.elems[i].x;
        sy += in->path.elems[i].y;
    }
    if (OPAL_SUCCESS == info->ret) {
        p->buf[p->size - 1] = '\0';
        snprintf(
            text, sizeof(text),
            "hello %s: %u points adding up to (%lld, %lld); your %zu-byte letter begins \"%.40s\"",
            name, in->path.count, (long long) sx, (long long) sy, p->size, p->buf);
        out->status = 0;
    } else {
        snprintf(text, sizeof(text), "hello %s: your letter did not arrive (%s)", name,
                 opal_strerror(info->ret));
        out->status = info->ret;
    }
    out->text = text;
    int rc = opal_rpc_reply_send(p->req); /* encodes out: text may be on the stack */
    out->text = NULL;
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "rpc_hello server: reply failed: %s\n", opal_strerror(rc));
    }
    printf("server: answered %s\n", name);
    fflush(stdout);
    (void) opal_bulk_free(p->local);
    free(p->buf);
    opal_rpc_req_decref(p->req);
    free(p);
    answered = 1;
}

/* The handler: starts pulling the client's letter; answers when it came. */
static void hello_handler(opal_rpc_request_t *req)
{
    hello_in_t *in = opal_rpc_req_input(req);
    pull_t *p = calloc(1, sizeof(*p));
    int rc = NULL == p || NULL == in->letter ? OPAL_ERR_BAD_PARAM : OPAL_SUCCESS;
    if (OPAL_SUCCESS == rc) {
        p->size = opal_bulk_get_size(in->letter);
        p->buf = malloc(p->size + 1);
        void *bufs[1] = {p->buf};
        rc = 0 == p->size || NULL == p->buf
                 ? OPAL_ERR_BAD_PARAM
                 : opal_bulk_create(opal_rpc_bulk_class(), 1, bufs, &p->size, OPAL_BULK_WRITE_ONLY,
                                    &p->local);
    }
    if (OPAL_SUCCESS == rc) {
        opal_rpc_req_addref(req); /* kept until the pull completes */
        p->req = req;
        rc = opal_rpc_bulk_transfer(req, OPAL_BULK_PULL, in->letter, 0, p->local, 0, p->size,
                                    letter_pulled, p, NULL);
        if (OPAL_SUCCESS != rc) {
            opal_rpc_req_decref(req);
        }
    }
    if (OPAL_SUCCESS != rc) {
        (void) opal_rpc_reply_error(req, rc, "rpc_hello: no letter to read");
        if (NULL != p) {
            (void) opal_bulk_free(p->local);
            free(p->buf);
            free(p);
        }
    }
}

static const opal_rpc_op_t hello_ops[] = {
    {.handler = hello_handler, .in = &hello_in_codec, .out = &hello_out_codec},
};
static const opal_rpc_proto_t hello_proto = {
    .name = "hello", .base = HELLO_BASE, .version = 1, .count = 1, .ops = hello_ops};

static int serve(const char *uri_file, opal_rpc_context_t *ctx)
{
    char uri[4096], tmp[4096];
    size_t len = sizeof(uri);
    int rc = opal_rpc_self_uri(uri, &len);
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "rpc_hello server: no URI: %s\n", opal_strerror(rc));
        return rc;
    }
    /* Written aside and renamed: a client never reads half a URI. */
    snprintf(tmp, sizeof(tmp), "%s.tmp", uri_file);
    FILE *f = fopen(tmp, "w");
    if (NULL == f || fprintf(f, "%s\n", uri) < 0 || 0 != fclose(f) || 0 != rename(tmp, uri_file)) {
        fprintf(stderr, "rpc_hello server: cannot write %s: %s\n", uri_file, strerror(errno));
        return OPAL_ERR_IN_ERRNO;
    }
    printf("server: listening at %s (URI in %s)\n", uri, uri_file);
    fflush(stdout);
    /* One client, then a moment for the reply to leave; 5 minutes at most. */
    for (int i = 0; i < 300000 && !answered; ++i) {
        (void) opal_rpc_progress(ctx, 1);
    }
    for (int i = 0; i < 100; ++i) {
        (void) opal_rpc_progress(ctx, 1);
    }
    unlink(uri_file);
    return answered ? OPAL_SUCCESS : OPAL_ERR_TIMEOUT;
}

/* ------------------------------------------------------------ the client */

typedef struct {
    int done;
    int status;
} call_t;

static void hello_done(opal_rpc_request_t *req, int status, void *arg)
{
    call_t *call = arg;
    const hello_out_t *out = opal_rpc_req_output(req);
    if (OPAL_SUCCESS == status) {
        printf("client: status %d: %s\n", out->status, out->text);
        call->status = out->status;
    } else {
        const char *why = opal_rpc_req_error_reason(req);
        printf("client: the call failed: %s%s%s\n", opal_strerror(status), NULL == why ? "" : ": ",
               NULL == why ? "" : why);
        call->status = status;
    }
    call->done = 1;
}

static bool call_done(void *arg)
{
    return ((call_t *) arg)->done;
}

static int call(const char *uri_file, const char *name, opal_rpc_context_t *ctx)
{
    char uri[4096] = "";
    FILE *f = NULL;
    /* The server may still be starting: wait for its URI (a minute). */
    for (int i = 0; i < 600 && NULL == (f = fopen(uri_file, "r")); ++i) {
        usleep(100000);
    }
    if (NULL == f || NULL == fgets(uri, sizeof(uri), f)) {
        fprintf(stderr, "rpc_hello client: no URI in %s\n", uri_file);
        if (NULL != f) {
            fclose(f);
        }
        return OPAL_ERR_NOT_FOUND;
    }
    fclose(f);
    uri[strcspn(uri, "\r\n")] = '\0';

    opal_na_addr_t *server = NULL;
    int rc = opal_rpc_addr_lookup(uri, &server);
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "rpc_hello client: cannot look up %s: %s\n", uri, opal_strerror(rc));
        return rc;
    }
    /* The letter: more than bulk's eager size, so the server really pulls it. */
    static char letter[16384];
    snprintf(letter, sizeof(letter), "Dear server, this letter travelled by bulk. ");
    for (size_t n = strlen(letter); n + 1 < sizeof(letter); ++n) {
        letter[n] = (char) ('a' + n % 26);
    }
    void *bufs[1] = {letter};
    size_t sizes[1] = {sizeof(letter)};
    opal_bulk_t *handle = NULL;
    point_t path[3] = {{1, 2}, {3, 4}, {-5, 10}};
    call_t result = {0, 0};
    opal_rpc_request_t *req = NULL;
    const opal_rpc_endpoint_t ep = {.addr = server, .ctx_idx = 0};
    rc = opal_bulk_create(opal_rpc_bulk_class(), 1, bufs, sizes, OPAL_BULK_READ_ONLY, &handle);
    if (OPAL_SUCCESS == rc) {
        rc = opal_rpc_req_create(ctx, &ep, HELLO_OP, &req);
    }
    if (OPAL_SUCCESS == rc) {
        hello_in_t *in = opal_rpc_req_input(req);
        in->name = (char *) name;
        in->path.count = 3;
        in->path.elems = path;
        in->letter = handle;
        rc = opal_rpc_req_send(req, hello_done, &result);
    }
    if (OPAL_SUCCESS == rc) {
        rc = opal_rpc_progress_cond(ctx, 120000, call_done, &result);
    }
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "rpc_hello client: %s\n", opal_strerror(rc));
    }
    (void) opal_bulk_free(handle); /* the server is done with it: it replied */
    opal_rpc_addr_free(server);
    return OPAL_SUCCESS == rc ? result.status : rc;
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    bool server = argc >= 3 && 0 == strcmp(argv[1], "server");
    bool client = argc >= 4 && 0 == strcmp(argv[1], "client");
    if (!server && !client) {
        fprintf(stderr,
                "usage: %s server <uri file> [na info]\n"
                "       %s client <uri file> <name> [na info]\n",
                argv[0], argv[0]);
        return 2;
    }
    const char *info = server ? (argc > 3 ? argv[3] : "btl") : (argc > 4 ? argv[4] : "btl");
    opal_rpc_context_t *ctx = NULL;
    int rc = opal_init_util(&argc, &argv);
    if (OPAL_SUCCESS == rc) {
        rc = opal_rpc_init(info, server);
    }
    if (OPAL_SUCCESS != rc) {
        fprintf(stderr, "rpc_hello: cannot open rpc over %s: %s\n", info, opal_strerror(rc));
        return 1;
    }
    rc = opal_rpc_proto_register(&hello_proto);
    if (OPAL_SUCCESS == rc) {
        rc = opal_rpc_context_create(0, &ctx);
    }
    if (OPAL_SUCCESS == rc) {
        rc = server ? serve(argv[2], ctx) : call(argv[2], argv[3], ctx);
    }
    if (NULL != ctx) {
        (void) opal_rpc_context_destroy(ctx);
    }
    (void) opal_rpc_finalize();
    (void) opal_finalize_util();
    return OPAL_SUCCESS == rc ? 0 : 1;
}
