/*
 * na/btl between processes started alone (no launcher): a server writes
 * its URI to a file and serves; a client looks it up from the file.
 *
 *   na_btl_alone server URI_FILE     serves until a client says quit
 *   na_btl_alone client URI_FILE     echo, a handle, get, put, quit
 *   na_btl_alone idle URI_FILE       writes its URI and sleeps (the
 *                                    cleanup tests kill it)
 *   na_btl_alone visit URI_FILE      20 echoes (enough for fast boxes both
 *                                    ways), then finalizes without quit
 *   na_btl_alone census URI_FILE     prints the server's open descriptors
 *                                    and mappings ("census: fds F maps M")
 *
 * A third argument names another na class than btl (ofi+tcp ...). The
 * BTLs come from the variables (OPAL_MCA_btl=self,sm ...). Each prints
 * "<role> ok" when everything it checked held, "<role>: FAILED: ..." else.
 *
 * Protocol (tags of unexpected messages to the server, the server's
 * expected reply on the same tag): 1 echo, 2 the server's handle
 * (serialized), 3 check the bytes the client put, 4 the server's
 * descriptors and mappings (two u32), 9 quit.
 */
#include "opal/opal_config.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/na/base/base.h"
#include "opal/runtime/opal_init.h"
#include "opal/util/opal_error.h"
#include "opal/util/opal_timer.h"

#define REGION   (64 * 1024)
#define PUT_OFF  100
#define PUT_LEN  1000
#define ECHO_LEN 1000

static const char *role = "?";
static const char *class_info = "btl";
static bool broken;
static opal_na_class_t *cls;
static opal_na_context_t *ctx;
static uint64_t deadline;

static void fail(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *format, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, format);
    vsnprintf(msg, sizeof(msg), format, ap);
    va_end(ap);
    printf("%s: FAILED: %s\n", role, msg);
    fflush(stdout);
    broken = true;
}

static uint8_t pattern(size_t i, unsigned salt)
{
    return (uint8_t) (i * 13 + salt + (i >> 9));
}

typedef struct done_t {
    volatile bool done;
    opal_na_cb_info_t info;
} done_t;

static void done_cb(const opal_na_cb_info_t *info)
{
    done_t *d = info->arg;
    d->info = *info;
    d->done = true;
}

static bool wait_done(done_t *d, const char *what)
{
    while (!d->done) {
        if (opal_timer_ns() > deadline) {
            fail("timed out waiting for %s", what);
            return false;
        }
        (void) opal_na_poll_wait(cls, ctx, 10, NULL);
        (void) opal_na_trigger(ctx, 0, NULL);
    }
    return true;
}

/* ------------------------------------------------------------- server */

/* A URI of this class: na/btl's carry the process's card. */
static bool uri_of_class(const char *uri)
{
    if (0 == strcmp(class_info, "btl")) {
        return 0 == strncmp(uri, "btl://card/", 11);
    }
    /* The class's name: class_info up to its "://" (where to listen). */
    const char *sep = strstr(class_info, "://");
    size_t n = NULL != sep ? (size_t) (sep - class_info) : strlen(class_info);
    return 0 == strncmp(uri, class_info, n) && 0 == strncmp(uri + n, "://", 3) &&
           '\0' != uri[n + 3];
}

/* Entries of /proc/self/fd (the directory's own descriptor too). */
static uint32_t fd_count(void)
{
    uint32_t n = 0;
    DIR *d = opendir("/proc/self/fd");
    while (NULL != d && NULL != readdir(d)) {
        ++n;
    }
    if (NULL != d) {
        closedir(d);
    }
    return n;
}

/* Lines of /proc/self/maps. */
static uint32_t map_count(void)
{
    uint32_t n = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    int c;
    while (NULL != f && EOF != (c = fgetc(f))) {
        n += '\n' == c;
    }
    if (NULL != f) {
        fclose(f);
    }
    return n;
}

static int serve(const char *uri_file, bool idle)
{
    opal_na_addr_t *self = NULL;
    char uri[8192];
    size_t n = sizeof(uri);
    int rc = opal_na_addr_self(cls, &self);
    if (OPAL_SUCCESS == rc) {
        rc = opal_na_addr_to_string(cls, uri, &n, self);
    }
    opal_na_addr_free(cls, self);
    if (OPAL_SUCCESS != rc || !uri_of_class(uri)) {
        fail("own URI: %s (\"%.40s\")", opal_strerror(rc), uri);
        return 1;
    }
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", uri_file);
    FILE *f = fopen(tmp, "w");
    if (NULL == f || fprintf(f, "%s\n", uri) < 0 || 0 != fclose(f) || 0 != rename(tmp, uri_file)) {
        fail("cannot write %s", uri_file);
        return 1;
    }
    if (idle) {
        printf("idle: pid %ld ready\n", (long) getpid());
        fflush(stdout);
        for (;;) {
            (void) opal_na_poll_wait(cls, ctx, 100, NULL);
            (void) opal_na_trigger(ctx, 0, NULL);
        }
    }
    uint8_t *region = malloc(REGION);
    for (size_t i = 0; i < REGION; ++i) {
        region[i] = pattern(i, 1);
    }
    opal_na_mem_handle_t *mh = NULL;
    rc = opal_na_mem_handle_create(cls, region, REGION, OPAL_NA_MEM_READ_WRITE, &mh);
    if (OPAL_SUCCESS == rc) {
        rc = opal_na_mem_register(cls, mh);
    }
    if (OPAL_SUCCESS != rc) {
        fail("the server's handle: %s", opal_strerror(rc));
        return 1;
    }
    uint8_t *buf = malloc(8192);
    bool quit = false;
    while (!quit && !broken) {
        done_t r = {0};
        rc = opal_na_msg_recv_unexpected(cls, ctx, done_cb, &r, buf, 8192, NULL, NULL);
        if (OPAL_SUCCESS != rc || !wait_done(&r, "a client's message")) {
            break;
        }
        if (OPAL_SUCCESS != r.info.ret) {
            fail("a receive: %s", opal_strerror(r.info.ret));
            break;
        }
        opal_na_addr_t *client = r.info.info.recv_unexpected.source;
        opal_na_tag_t tag = r.info.info.recv_unexpected.tag;
        size_t len = r.info.info.recv_unexpected.actual_size;
        uint8_t reply[4096];
        size_t reply_len = 0;
        if (1 == tag) {
            /* The client's URI is known (na/btl: from its card): give it on. */
            size_t un = sizeof(reply);
            if (OPAL_SUCCESS != opal_na_addr_to_string(cls, (char *) reply, &un, client) ||
                !uri_of_class((char *) reply)) {
                fail("the client's URI could not be given");
            }
            memcpy(reply, buf, len);
            reply_len = len;
        } else if (2 == tag) {
            reply_len = opal_na_mem_handle_get_serialize_size(cls, mh);
            if (reply_len > sizeof(reply) ||
                OPAL_SUCCESS != opal_na_mem_handle_serialize(cls, reply, reply_len, mh)) {
                fail("serializing the handle");
                reply_len = 0;
            }
        } else if (3 == tag) {
            reply[0] = 1;
            for (size_t i = 0; i < PUT_LEN; ++i) {
                if (region[PUT_OFF + i] != pattern(i, 7)) {
                    reply[0] = 0;
                }
            }
            reply_len = 1;
        } else if (4 == tag) {
            uint32_t counts[2] = {fd_count(), map_count()};
            memcpy(reply, counts, sizeof(counts));
            reply_len = sizeof(counts);
        } else if (9 == tag) {
            quit = true;
        }
        done_t s = {0};
        rc = opal_na_msg_send_expected(cls, ctx, done_cb, &s, reply, reply_len, NULL, client, 0,
                                       tag, NULL);
        if (OPAL_SUCCESS != rc || !wait_done(&s, "a reply") || OPAL_SUCCESS != s.info.ret) {
            fail("the reply to tag %u: %s", tag,
                 opal_strerror(OPAL_SUCCESS != rc ? rc : s.info.ret));
        }
        opal_na_addr_free(cls, client);
    }
    (void) opal_na_mem_deregister(cls, mh);
    opal_na_mem_handle_free(cls, mh);
    free(region);
    free(buf);
    return broken ? 1 : 0;
}

/* ------------------------------------------------------------- client */

/* Sends len bytes on tag and waits for the reply into reply. */
static bool call(opal_na_addr_t *server, opal_na_tag_t tag, const void *msg, size_t len,
                 void *reply, size_t *reply_len)
{
    done_t r = {0}, s = {0};
    int rc = opal_na_msg_recv_expected(cls, ctx, done_cb, &r, reply, *reply_len, NULL, server, 0,
                                       tag, NULL);
    if (OPAL_SUCCESS == rc) {
        rc = opal_na_msg_send_unexpected(cls, ctx, done_cb, &s, msg, len, NULL, server, 0, tag,
                                         NULL);
    }
    if (OPAL_SUCCESS != rc || !wait_done(&s, "a send") || !wait_done(&r, "a reply") ||
        OPAL_SUCCESS != s.info.ret || OPAL_SUCCESS != r.info.ret) {
        fail("call with tag %u: %s", tag,
             opal_strerror(OPAL_SUCCESS != rc           ? rc
                           : OPAL_SUCCESS != s.info.ret ? s.info.ret
                                                        : r.info.ret));
        return false;
    }
    *reply_len = r.info.info.recv_expected.actual_size;
    return true;
}

/* The server whose URI is in uri_file, or NULL (said). */
static opal_na_addr_t *lookup_server(const char *uri_file)
{
    char uri[8192];
    FILE *f = fopen(uri_file, "r");
    if (NULL == f || NULL == fgets(uri, sizeof(uri), f)) {
        fail("cannot read %s", uri_file);
        if (NULL != f) {
            fclose(f);
        }
        return NULL;
    }
    fclose(f);
    uri[strcspn(uri, "\n")] = '\0';
    opal_na_addr_t *server = NULL;
    int rc = opal_na_addr_lookup(cls, uri, &server);
    if (OPAL_SUCCESS != rc) {
        fail("lookup of the server: %s", opal_strerror(rc));
        return NULL;
    }
    return server;
}

static int client(const char *uri_file)
{
    opal_na_addr_t *server = lookup_server(uri_file);
    if (NULL == server) {
        return 1;
    }
    int rc;
    uint8_t msg[ECHO_LEN], reply[4096];
    for (size_t i = 0; i < ECHO_LEN; ++i) {
        msg[i] = pattern(i, 3);
    }
    size_t n = sizeof(reply);
    if (call(server, 1, msg, ECHO_LEN, reply, &n) &&
        (n != ECHO_LEN || 0 != memcmp(msg, reply, n))) {
        fail("the echo came back as %zu different bytes", n);
    }
    n = sizeof(reply);
    opal_na_mem_handle_t *remote = NULL;
    if (call(server, 2, NULL, 0, reply, &n) &&
        OPAL_SUCCESS != (rc = opal_na_mem_handle_deserialize(cls, &remote, reply, n))) {
        fail("the server's handle: %s", opal_strerror(rc));
    }
    uint8_t *local = malloc(REGION);
    opal_na_mem_handle_t *lmh = NULL;
    rc = opal_na_mem_handle_create(cls, local, REGION, OPAL_NA_MEM_READ_WRITE, &lmh);
    if (OPAL_SUCCESS == rc) {
        rc = opal_na_mem_register(cls, lmh);
    }
    if (NULL != remote && OPAL_SUCCESS == rc) {
        done_t g = {0};
        rc = opal_na_get(cls, ctx, done_cb, &g, lmh, 0, remote, 0, REGION, server, 0, NULL);
        if (OPAL_SUCCESS != rc || !wait_done(&g, "a get") || OPAL_SUCCESS != g.info.ret) {
            fail("get: %s", opal_strerror(OPAL_SUCCESS != rc ? rc : g.info.ret));
        }
        for (size_t i = 0; i < REGION; ++i) {
            if (local[i] != pattern(i, 1)) {
                fail("get: byte %zu differs", i);
                break;
            }
        }
        for (size_t i = 0; i < PUT_LEN; ++i) {
            local[5 + i] = pattern(i, 7);
        }
        done_t p = {0};
        rc = opal_na_put(cls, ctx, done_cb, &p, lmh, 5, remote, PUT_OFF, PUT_LEN, server, 0, NULL);
        if (OPAL_SUCCESS != rc || !wait_done(&p, "a put") || OPAL_SUCCESS != p.info.ret) {
            fail("put: %s", opal_strerror(OPAL_SUCCESS != rc ? rc : p.info.ret));
        }
        n = sizeof(reply);
        if (call(server, 3, NULL, 0, reply, &n) && (1 != n || 1 != reply[0])) {
            fail("the server did not find the bytes the client put");
        }
    } else {
        fail("the client's handle: %s", opal_strerror(rc));
    }
    n = sizeof(reply);
    (void) call(server, 9, NULL, 0, reply, &n);
    opal_na_mem_handle_free(cls, remote);
    if (NULL != lmh) {
        (void) opal_na_mem_deregister(cls, lmh);
        opal_na_mem_handle_free(cls, lmh);
    }
    free(local);
    opal_na_addr_free(cls, server);
    return broken ? 1 : 0;
}

/* visit: 20 echoes; census: the server's counts. Neither says quit. */
static int brief(const char *uri_file, bool census)
{
    opal_na_addr_t *server = lookup_server(uri_file);
    if (NULL == server) {
        return 1;
    }
    uint8_t msg[64], reply[4096];
    for (int k = 0; k < (census ? 1 : 20) && !broken; ++k) {
        for (size_t i = 0; i < sizeof(msg); ++i) {
            msg[i] = pattern(i, (unsigned) k);
        }
        size_t n = sizeof(reply);
        if (census) {
            uint32_t counts[2];
            if (call(server, 4, NULL, 0, reply, &n) && sizeof(counts) == n) {
                memcpy(counts, reply, sizeof(counts));
                printf("census: fds %u maps %u\n", counts[0], counts[1]);
            }
        } else if (call(server, 1, msg, sizeof(msg), reply, &n) &&
                   (n != sizeof(msg) || 0 != memcmp(msg, reply, n))) {
            fail("echo %d came back as %zu different bytes", k, n);
        }
    }
    opal_na_addr_free(cls, server);
    return broken ? 1 : 0;
}

int main(int argc, char **argv)
{
    if ((argc != 3 && argc != 4) ||
        (0 != strcmp(argv[1], "server") && 0 != strcmp(argv[1], "client") &&
         0 != strcmp(argv[1], "idle") && 0 != strcmp(argv[1], "visit") &&
         0 != strcmp(argv[1], "census"))) {
        fprintf(stderr, "usage: na_btl_alone server|client|idle|visit|census URI_FILE [INFO]\n");
        return 2;
    }
    role = argv[1];
    if (4 == argc) {
        class_info = argv[3];
    }
    const char *d = getenv("NA_TEST_DEADLINE");
    deadline = opal_timer_ns() + (NULL != d ? strtoull(d, NULL, 10) : 60) * UINT64_C(1000000000);
    if (OPAL_SUCCESS != opal_init_util(&argc, &argv)) {
        return 2;
    }
    const bool serving = 0 == strcmp(role, "server") || 0 == strcmp(role, "idle");
    int rc = opal_na_initialize(class_info, serving, &cls);
    if (OPAL_SUCCESS != rc) {
        fail("opal_na_initialize(\"%s\"): %s", class_info, opal_strerror(rc));
        (void) opal_finalize_util();
        return 3;
    }
    rc = opal_na_context_create(cls, 0, &ctx);
    int status = OPAL_SUCCESS != rc            ? 1
                 : 0 == strcmp(role, "client") ? client(argv[2])
                 : !serving                    ? brief(argv[2], 0 == strcmp(role, "census"))
                                               : serve(argv[2], 0 == strcmp(role, "idle"));
    if (NULL != ctx && OPAL_SUCCESS != (rc = opal_na_context_destroy(cls, ctx))) {
        fail("context destroy: %s", opal_strerror(rc));
    }
    if (OPAL_SUCCESS != (rc = opal_na_finalize(cls))) {
        fail("finalize: %s", opal_strerror(rc));
    }
    (void) opal_finalize_util();
    if (0 == status && !broken) {
        printf("%s ok\n", role);
    }
    return 0 == status && !broken ? 0 : 1;
}
